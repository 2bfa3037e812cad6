//! Blocking pops: BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BZPOPMIN, BZPOPMAX,
//! BLMPOP, BZMPOP (and the non-blocking LMPOP and ZMPOP, which share their
//! argument parsing and pop).
//!
//! A handler parses its arguments and tries the pop at once, exactly like
//! the non-blocking command (the first non-empty key in argument order
//! wins). When every key is empty it does not wait itself: it returns a
//! [`BlockSpec`] through [`Ctx::block`], and the connection registers the
//! client in `Shared::blocking` and calls [`retry`] each time it is woken.
//! Inside `MULTI` (and whenever `Ctx::may_block` is off) an empty result is
//! the timeout reply at once, as in Redis.

use std::time::Duration;

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::types::{End, StreamId};
use ferrum_store::ValueKind;

use super::error::{
    COUNT_POSITIVE, NUMKEYS_POSITIVE, TIMEOUT_NEGATIVE, TIMEOUT_NOT_FLOAT, TIMEOUT_RANGE, UNBLOCKED,
};
use super::parse::{is, parse_f64, parse_i64};
use super::{list, stream, xgroup, zset, CmdError, CmdResult, Ctx};
use crate::client::ConnState;
use crate::shared::Shared;

/// What a blocked client pops when one of its keys gets data.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum BlockOp {
    /// BLPOP / BRPOP: one element from that end; replies `[key, element]`.
    Pop(End),
    /// BLMOVE / BRPOPLPUSH: move one element; replies with the element.
    Move {
        /// The destination list.
        dst: Bytes,
        /// The end of the source to pop from.
        from: End,
        /// The end of the destination to push to.
        to: End,
    },
    /// BZPOPMIN / BZPOPMAX: replies `[key, member, score]`.
    ZPop {
        /// Pop the highest score instead of the lowest.
        max: bool,
    },
    /// BLMPOP (and LMPOP): up to `count` elements from one end of the
    /// first non-empty list; replies `[key, [element, ...]]`.
    LMPop {
        /// The end to pop from.
        end: End,
        /// At most this many elements.
        count: usize,
    },
    /// BZMPOP (and ZMPOP): up to `count` members of the first non-empty
    /// sorted set; replies `[key, [[member, score], ...]]`.
    ZMPop {
        /// Pop the highest scores instead of the lowest.
        max: bool,
        /// At most this many members.
        count: usize,
    },
    /// XREAD BLOCK: the entries after `after[i]` of the first stream
    /// `keys[i]` that has any; replies `[[key, entries]]` (a map in RESP3).
    /// Nothing is removed, so every reader waiting on a stream is woken.
    XRead {
        /// Per key, the ID to read after (`$` already resolved).
        after: Vec<StreamId>,
        /// At most this many entries.
        count: usize,
        /// Reply as a RESP3 map.
        resp3: bool,
    },
    /// XREADGROUP BLOCK with `>`: new entries of the first stream with any,
    /// delivered to the group's consumer.
    XReadGroup {
        /// The group name.
        group: Bytes,
        /// The consumer name.
        consumer: Bytes,
        /// At most this many entries.
        count: usize,
        /// Do not add the entries to the pending list.
        noack: bool,
        /// Reply as a RESP3 map.
        resp3: bool,
    },
}

/// A client to block: on which keys, for what, and for how long.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BlockSpec {
    /// The database of the keys.
    pub(crate) db: usize,
    /// The keys to pop from, in argument order.
    pub(crate) keys: Vec<Bytes>,
    /// The pop to run when served.
    pub(crate) op: BlockOp,
    /// How long to wait; `None` waits forever.
    pub(crate) timeout: Option<Duration>,
    /// The blocked command line, which the slow log shows when it is
    /// served (set by `cmd::execute`).
    pub(crate) command: Vec<Bytes>,
}

impl BlockSpec {
    /// The type of value the client pops.
    pub(crate) fn kind(&self) -> ValueKind {
        match self.op {
            BlockOp::ZPop { .. } | BlockOp::ZMPop { .. } => ValueKind::ZSet,
            BlockOp::XRead { .. } | BlockOp::XReadGroup { .. } => ValueKind::Stream,
            _ => ValueKind::List,
        }
    }

    /// The reply when the timeout passes: a null array, or for the moves a
    /// null bulk string, as Redis.
    pub(crate) fn timeout_reply(&self) -> Frame {
        match self.op {
            BlockOp::Move { .. } => Frame::Null,
            _ => Frame::NullArray,
        }
    }
}

/// A blocking timeout in seconds (a double; 0 waits forever), with Redis's
/// error texts.
fn timeout_arg(b: &[u8]) -> Result<Option<Duration>, CmdError> {
    let secs = parse_f64(b).ok_or_else(|| CmdError::msg(TIMEOUT_NOT_FLOAT))?;
    if secs < 0.0 {
        return Err(CmdError::msg(TIMEOUT_NEGATIVE));
    }
    // Redis converts to milliseconds in a `long long`.
    if secs * 1000.0 > i64::MAX as f64 {
        return Err(CmdError::msg(TIMEOUT_RANGE));
    }
    if secs == 0.0 {
        return Ok(None);
    }
    Ok(Duration::try_from_secs_f64(secs).ok())
}

fn end_arg(b: &[u8]) -> Result<End, CmdError> {
    if is(b, "left") {
        Ok(End::Left)
    } else if is(b, "right") {
        Ok(End::Right)
    } else {
        Err(CmdError::syntax())
    }
}

/// Tries the pop once; `Ok(None)` when every key is empty.
///
/// # Errors
///
/// `WRONGTYPE` when the first key with a value (or BLMOVE's destination)
/// holds another type.
fn try_pop(ctx: &Ctx<'_>, keys: &[Bytes], op: &BlockOp) -> Result<Option<Frame>, CmdError> {
    try_keys(ctx, keys, op, None)
}

/// [`try_pop`]; with `serving` set to the kind the client pops, a key that
/// now holds another type is passed over instead of failing: a blocked
/// client is served only by a value of its type, and otherwise stays
/// blocked, as in Redis (`MULTI; LPUSH k a; DEL k; SET k x; EXEC` leaves
/// a BLPOP on `k` waiting).
fn try_keys(
    ctx: &Ctx<'_>,
    keys: &[Bytes],
    op: &BlockOp,
    serving: Option<ValueKind>,
) -> Result<Option<Frame>, CmdError> {
    let (db, now) = (ctx.db(), ctx.now);
    for (i, key) in keys.iter().enumerate() {
        if let BlockOp::XReadGroup { .. } = op {
            // Group readers check the key and group themselves: a key that
            // changed type is an error for them, not a reason to wait on.
        } else if let Some(kind) = serving {
            let mut ks = ctx.store().lock_key(key);
            let held = ks
                .shard(key)
                .lookup(db, key, now, ferrum_store::Access::Peek)
                .map(|e| e.value().kind());
            if held.is_some_and(|k| k != kind) {
                continue;
            }
        }
        let reply = match op {
            BlockOp::Pop(end) => {
                let mut ks = ctx.store().lock_key(key);
                list::pop_in(ks.shard(key), db, key, *end, 1, now)?
                    .and_then(|mut v| v.pop())
                    .map(|v| Frame::Array(vec![Frame::Bulk(key.clone()), Frame::Bulk(v)]))
            }
            BlockOp::Move { dst, from, to } => {
                let mut ks = ctx.store().lock_keys([&key[..], &dst[..]]);
                list::move_in(&mut ks, db, (key, *from), (dst, *to), now)?.map(Frame::Bulk)
            }
            BlockOp::ZPop { max } => {
                let mut ks = ctx.store().lock_key(key);
                zset::pop_in(ks.shard(key), db, key, 1, *max, now)?
                    .and_then(|mut v| v.pop())
                    .map(|(m, s)| {
                        Frame::Array(vec![
                            Frame::Bulk(key.clone()),
                            Frame::Bulk(m),
                            Frame::Double(s),
                        ])
                    })
            }
            BlockOp::LMPop { end, count } => {
                let mut ks = ctx.store().lock_key(key);
                list::pop_in(ks.shard(key), db, key, *end, *count, now)?
                    .filter(|v| !v.is_empty())
                    .map(|v| {
                        let items = v.into_iter().map(Frame::Bulk).collect();
                        Frame::Array(vec![Frame::Bulk(key.clone()), Frame::Array(items)])
                    })
            }
            BlockOp::ZMPop { max, count } => {
                let mut ks = ctx.store().lock_key(key);
                zset::pop_in(ks.shard(key), db, key, *count, *max, now)?
                    .filter(|v| !v.is_empty())
                    .map(|v| {
                        let items = zset::scored_reply(v, true, true);
                        Frame::Array(vec![Frame::Bulk(key.clone()), items])
                    })
            }
            BlockOp::XRead {
                after,
                count,
                resp3,
            } => stream::read_after(ctx, key, after[i], *count)?
                .map(|f| stream::xread_reply(vec![f], *resp3)),
            BlockOp::XReadGroup {
                group,
                consumer,
                count,
                noack,
                resp3,
            } => xgroup::read_new(ctx, key, group, consumer, *count, *noack)?
                .map(|f| stream::xread_reply(vec![f], *resp3)),
        };
        if reply.is_some() {
            return Ok(reply);
        }
    }
    Ok(None)
}

/// Runs a blocking command's first attempt: the reply if a key has data,
/// else the timeout reply inside `MULTI`, else a request to block.
fn start(ctx: &mut Ctx<'_>, keys: &[Bytes], op: BlockOp, timeout: &[u8]) -> CmdResult {
    let timeout = timeout_arg(timeout)?;
    if let Some(reply) = try_pop(ctx, keys, &op)? {
        return Ok(reply);
    }
    let spec = BlockSpec {
        db: ctx.db(),
        keys: keys.to_vec(),
        op,
        timeout,
        command: Vec::new(),
    };
    if !ctx.may_block {
        return Ok(spec.timeout_reply());
    }
    ctx.block = Some(spec);
    // Never sent: the connection replies once the client is served.
    Ok(Frame::Null)
}

/// Blocks an XREAD that found nothing (or answers null inside `MULTI`);
/// `ms == 0` waits forever.
pub(crate) fn block_xread(
    ctx: &mut Ctx<'_>,
    keys: &[Bytes],
    after: Vec<StreamId>,
    count: usize,
    ms: u64,
) -> CmdResult {
    let spec = BlockSpec {
        db: ctx.db(),
        keys: keys.to_vec(),
        op: BlockOp::XRead {
            after,
            count,
            resp3: super::coll::resp3(ctx),
        },
        timeout: (ms > 0).then(|| Duration::from_millis(ms)),
        command: Vec::new(),
    };
    if !ctx.may_block {
        return Ok(spec.timeout_reply());
    }
    ctx.block = Some(spec);
    Ok(Frame::Null)
}

/// Blocks an XREADGROUP `>` that found nothing (null inside `MULTI`).
pub(crate) fn block_xreadgroup(
    ctx: &mut Ctx<'_>,
    keys: &[Bytes],
    (group, consumer): (Bytes, Bytes),
    count: usize,
    noack: bool,
    ms: u64,
) -> CmdResult {
    let spec = BlockSpec {
        db: ctx.db(),
        keys: keys.to_vec(),
        op: BlockOp::XReadGroup {
            group,
            consumer,
            count,
            noack,
            resp3: super::coll::resp3(ctx),
        },
        timeout: (ms > 0).then(|| Duration::from_millis(ms)),
        command: Vec::new(),
    };
    if !ctx.may_block {
        return Ok(spec.timeout_reply());
    }
    ctx.block = Some(spec);
    Ok(Frame::Null)
}

/// Retries a blocked client's pop, as its command would (under the
/// transaction gate, with a fresh clock reading). `None` while every key is
/// still empty. Called by the connection each time the client is woken. In
/// cluster mode a client whose keys are no longer served here gets the
/// redirection instead, as in Redis.
pub(crate) fn retry(shared: &Shared, conn: &mut ConnState, spec: &BlockSpec) -> Option<Frame> {
    let now = shared.clock.now();
    // A script may hold the gate for long: then wait off the worker. While
    // a replica is attached the pop is a write that runs alone (see
    // `crate::replication`).
    let (_read, _write);
    if shared.repl.active() {
        _write =
            crate::script::off_worker(|| shared.tx_gate.write().unwrap_or_else(|p| p.into_inner()));
    } else {
        _read = shared.try_gate().unwrap_or_else(|| {
            crate::script::off_worker(|| shared.tx_gate.read().unwrap_or_else(|p| p.into_inner()))
        });
    }
    let ctx = Ctx::new(shared, conn, now);
    let tried = match super::route::blocked_elsewhere(&ctx, &spec.keys) {
        Some(redirect) => Err(redirect),
        None => try_keys(&ctx, &spec.keys, &spec.op, Some(spec.kind())),
    };
    let reply = match tried {
        Ok(None) => {
            // Keys it found expired still go down the stream.
            if shared.repl.active() {
                super::flush_stream(shared, false);
            }
            return None;
        }
        Ok(Some(reply)) => reply,
        Err(e) => e.into_frame(),
    };
    if shared.repl.active() {
        for effect in super::propagate::pop(&spec.keys, &spec.op, &reply) {
            shared.repl.push(ctx.db(), effect);
        }
        super::flush_stream(shared, true);
    }
    if matches!(spec.op, BlockOp::Move { .. }) {
        super::notify::enforce_maxmemory(ctx.shared, now);
    }
    // As in Redis, a served command is logged as the client sent it, with
    // the time serving it took, and an error it gets counts in errorstats.
    let usec = ctx.started.elapsed().as_micros() as u64;
    if shared.slowlog.wants(usec) {
        shared
            .slowlog
            .record(&ctx.conn.handle, ctx.now, &spec.command, usec);
    }
    if let Frame::Error(text) = &reply {
        count_failure(shared, spec, text);
    }
    Some(reply)
}

/// The reply of a client that `CLIENT UNBLOCK ... ERROR` released, counted
/// as Redis counts every error reply: in errorstats, and as a failed call
/// of the blocked command.
pub(crate) fn unblocked_reply(shared: &Shared, spec: &BlockSpec) -> Frame {
    count_failure(shared, spec, UNBLOCKED.as_bytes());
    Frame::error(UNBLOCKED)
}

/// Counts the error `text` a blocked command replied with.
fn count_failure(shared: &Shared, spec: &BlockSpec, text: &[u8]) {
    shared.stats.record_error(text);
    if let Some(command) = spec.command.first().and_then(|name| super::lookup(name)) {
        shared.stats.record_failed(command, None);
    }
}

/// Parses the `numkeys key [key ...] WHERE [COUNT count]` of LMPOP, BLMPOP,
/// ZMPOP and BZMPOP, starting at `args[at]`, with Redis's errors; `ends`
/// names the two ends (`LEFT`/`RIGHT`, `MIN`/`MAX`). Returns the keys,
/// whether the second end was named, and the count (1 by default).
fn mpop_args<'a>(
    args: &'a [Bytes],
    at: usize,
    ends: [&str; 2],
) -> Result<(&'a [Bytes], bool, usize), CmdError> {
    let n = match parse_i64(&args[at]) {
        Some(n) if n >= 1 => n as u64,
        _ => return Err(CmdError::msg(NUMKEYS_POSITIVE)),
    };
    let rest = &args[at + 1..];
    if n >= rest.len() as u64 {
        return Err(CmdError::syntax());
    }
    let (keys, rest) = rest.split_at(n as usize);
    let second = match &rest[0] {
        w if is(w, ends[0]) => false,
        w if is(w, ends[1]) => true,
        _ => return Err(CmdError::syntax()),
    };
    let count = match &rest[1..] {
        [] => 1,
        [c, v] if is(c, "count") => match parse_i64(v) {
            Some(n) if n >= 1 => n as usize,
            _ => return Err(CmdError::msg(COUNT_POSITIVE)),
        },
        _ => return Err(CmdError::syntax()),
    };
    Ok((keys, second, count))
}

/// `LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]`: the
/// non-blocking form, a null array when every list is empty.
pub(crate) fn lmpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (keys, right, count) = mpop_args(args, 1, ["left", "right"])?;
    let end = if right { End::Right } else { End::Left };
    Ok(try_pop(ctx, keys, &BlockOp::LMPop { end, count })?.unwrap_or(Frame::NullArray))
}

/// `BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]`
pub(crate) fn blmpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (keys, right, count) = mpop_args(args, 2, ["left", "right"])?;
    let end = if right { End::Right } else { End::Left };
    start(ctx, keys, BlockOp::LMPop { end, count }, &args[1])
}

/// `ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]`
pub(crate) fn zmpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (keys, max, count) = mpop_args(args, 1, ["min", "max"])?;
    Ok(try_pop(ctx, keys, &BlockOp::ZMPop { max, count })?.unwrap_or(Frame::NullArray))
}

/// `BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]`
pub(crate) fn bzmpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (keys, max, count) = mpop_args(args, 2, ["min", "max"])?;
    start(ctx, keys, BlockOp::ZMPop { max, count }, &args[1])
}

/// `BLPOP key [key ...] timeout`
pub(crate) fn blpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (keys, timeout) = args[1..].split_at(args.len() - 2);
    start(ctx, keys, BlockOp::Pop(End::Left), &timeout[0])
}

/// `BRPOP key [key ...] timeout`
pub(crate) fn brpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (keys, timeout) = args[1..].split_at(args.len() - 2);
    start(ctx, keys, BlockOp::Pop(End::Right), &timeout[0])
}

/// `BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout`
pub(crate) fn blmove(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (from, to) = (end_arg(&args[3])?, end_arg(&args[4])?);
    let op = BlockOp::Move {
        dst: args[2].clone(),
        from,
        to,
    };
    start(ctx, &args[1..2], op, &args[5])
}

/// `BRPOPLPUSH source destination timeout`
pub(crate) fn brpoplpush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let op = BlockOp::Move {
        dst: args[2].clone(),
        from: End::Right,
        to: End::Left,
    };
    start(ctx, &args[1..2], op, &args[3])
}

/// `BZPOPMIN key [key ...] timeout`
pub(crate) fn bzpopmin(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (keys, timeout) = args[1..].split_at(args.len() - 2);
    start(ctx, keys, BlockOp::ZPop { max: false }, &timeout[0])
}

/// `BZPOPMAX key [key ...] timeout`
pub(crate) fn bzpopmax(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (keys, timeout) = args[1..].split_at(args.len() - 2);
    start(ctx, keys, BlockOp::ZPop { max: true }, &timeout[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_follow_redis() {
        assert_eq!(timeout_arg(b"0").unwrap(), None);
        assert_eq!(
            timeout_arg(b"0.1").unwrap(),
            Some(Duration::from_millis(100))
        );
        assert_eq!(timeout_arg(b"2").unwrap(), Some(Duration::from_secs(2)));
        let err = |b: &[u8]| timeout_arg(b).unwrap_err().to_string();
        assert_eq!(err(b"-1"), TIMEOUT_NEGATIVE);
        assert_eq!(err(b"abc"), TIMEOUT_NOT_FLOAT);
        assert_eq!(err(b"1e300"), TIMEOUT_RANGE);
    }
}
