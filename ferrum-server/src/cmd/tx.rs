//! Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.
//!
//! Queued commands run under the write side of `Shared::tx_gate`, so no
//! other client's command interleaves with them; `WATCH` remembers each
//! key's version and `EXEC` aborts if any changed. Clients blocked on a key
//! a transaction writes are woken as each command runs, but cannot retry
//! before the gate opens, so they see the transaction's end state.

use bytes::Bytes;
use ferrum_proto::Frame;

use super::error::{
    execabort_because, DISCARD_WITHOUT_MULTI, EXECABORT, EXEC_UNKNOWN_COMMAND, EXEC_WITHOUT_MULTI,
    MULTI_NESTED, WATCH_IN_MULTI,
};
use super::{run, CmdError, CmdResult, Ctx};

pub(crate) fn multi(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    if ctx.conn.multi.is_some() {
        return Err(CmdError::msg(MULTI_NESTED));
    }
    ctx.conn.multi = Some(Vec::new());
    ctx.conn.multi_failed = false;
    Ok(Frame::ok())
}

pub(crate) fn discard(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    if ctx.conn.multi.take().is_none() {
        return Err(CmdError::msg(DISCARD_WITHOUT_MULTI));
    }
    ctx.conn.multi_failed = false;
    ctx.conn.watched.clear();
    Ok(Frame::ok())
}

/// The version a watched key has now (`None` if absent or expired).
fn version_now(ctx: &Ctx<'_>, db: usize, key: &Bytes) -> Option<u64> {
    let mut ks = ctx.store().lock_key(key);
    ks.shard(key).watch_version(db, key, ctx.now)
}

pub(crate) fn watch(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if ctx.conn.multi.is_some() {
        return Err(CmdError::msg(WATCH_IN_MULTI));
    }
    let db = ctx.db();
    for key in &args[1..] {
        let v = version_now(ctx, db, key);
        ctx.conn.watched.push((db, key.clone(), v));
    }
    Ok(Frame::ok())
}

pub(crate) fn unwatch(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    ctx.conn.watched.clear();
    Ok(Frame::ok())
}

pub(crate) fn exec(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let Some(queue) = ctx.conn.multi.take() else {
        return Err(CmdError::msg(EXEC_WITHOUT_MULTI));
    };
    let watched = std::mem::take(&mut ctx.conn.watched);
    if std::mem::take(&mut ctx.conn.multi_failed) {
        return Err(CmdError::msg(EXECABORT));
    }
    // As in Redis, a transaction that may grow memory is refused whole
    // when over `maxmemory`; a read-only one still runs.
    let grows = queue.iter().any(|a| {
        ctx.shared
            .command(&a[0])
            .is_some_and(|s| s.has(super::flag::DENYOOM))
    });
    if grows {
        if let Err(e) = super::notify::reserve_for_write(ctx.shared, ctx.now) {
            return Err(CmdError::msg(execabort_because(CmdError::from(e))));
        }
    }
    // `min-replicas-to-write` set after the writes were queued.
    let writes = || {
        queue.iter().any(|a| {
            ctx.shared
                .command(&a[0])
                .is_some_and(|s| s.has(super::flag::WRITE))
        })
    };
    if let Some(refusal) = ctx.shared.refuses_writes().filter(|_| writes()) {
        return Err(CmdError::msg(execabort_because(refusal)));
    }
    let shared = ctx.shared;
    let _gate = shared.tx_gate.write().unwrap_or_else(|p| p.into_inner());
    super::route::recheck_exec(ctx, &queue)?;
    if watched
        .iter()
        .any(|(db, key, seen)| version_now(ctx, *db, key) != *seen)
    {
        return Ok(Frame::NullArray);
    }
    let mut replies = Vec::with_capacity(queue.len());
    // Blocking commands reply at once inside a transaction, as in Redis.
    ctx.may_block = false;
    ctx.in_exec = true;
    for args in queue {
        // Every queued command passed lookup and arity when it was queued.
        // A user's permissions may have changed since the command was queued.
        let permitted = ctx.shared.command(&args[0]).map(|spec| {
            let context = crate::acl::Context::Multi;
            (spec, super::acl::permit(ctx, spec, &args, context))
        });
        let reply = match permitted {
            Some((spec, Ok(()))) => run(ctx, spec, &args),
            Some((_, Err(refusal))) => super::acl::noperm_in_exec(&refusal).into_frame(),
            None => CmdError::msg(EXEC_UNKNOWN_COMMAND).into_frame(),
        };
        replies.push(reply);
        // `SUBSCRIBE a b` inside MULTI: each confirmation is an element.
        replies.append(&mut ctx.more);
    }
    if shared.repl.active() {
        super::flush_stream(shared, true);
    }
    // What the transaction's writes took beyond `maxmemory` is evicted
    // after it, as the next command would in Redis.
    super::notify::enforce_maxmemory(shared, ctx.now);
    Ok(Frame::Array(replies))
}
