//! The command layer's side of a script's `redis.call`: the checks Redis
//! makes for a command from a script, running it through [`super::run`] as
//! the calling client, and setting that client's connection up around a
//! script run. The engine (`crate::script`) calls in through
//! [`Caller`], which the command's context implements.

use bytes::Bytes;
use ferrum_proto::{Frame, Protocol};

use super::Ctx;
use crate::command::{flag, CommandSpec};
use crate::error::{
    block_from_script, NOT_ALLOWED, STALE_FROM_SCRIPT, UNKNOWN_COMMAND, WRITE_FROM_READ_ONLY,
    WRONG_ARITY,
};
use crate::script::{CallState, Caller, Engine, Invocation};

/// Runs a script as the client of `ctx`, whose calls may not block and
/// count as a script's, and returns its reply. The caller holds the
/// transaction gate's write side.
pub(super) fn run_script(ctx: &mut Ctx<'_>, engine: &Engine, inv: Invocation<'_>) -> Frame {
    let keys = inv.keys;
    let db = ctx.conn.db;
    // Blocking commands are refused from scripts; XREAD without BLOCK
    // must not block either.
    let may_block = std::mem::replace(&mut ctx.may_block, false);
    let in_script = std::mem::replace(&mut ctx.in_script, true);
    let outcome = engine.run(ctx, inv);
    ctx.conn.db = db;
    ctx.may_block = may_block;
    ctx.in_script = in_script;
    if let Some(counted) = outcome.counted {
        ctx.error_counted = counted;
    }
    // Redis tracks a script's declared keys for a tracking caller once
    // the script called a read command (its inner commands remember
    // what they read as well).
    if outcome.read && ctx.conn.tracking {
        let id = ctx.conn.handle.id;
        ctx.shared.tracking.remember(ctx.shared, id, keys.iter());
    }
    if outcome.shutting_down {
        ctx.conn.closing = true;
    }
    outcome.reply
}

impl Caller for Ctx<'_> {
    fn admit(
        &mut self,
        st: &mut CallState<'_>,
        argv: &[Bytes],
    ) -> Result<&'static CommandSpec, String> {
        admit(self, st, argv).inspect_err(|text| {
            if let Some(spec) = self.shared.command(&argv[0]) {
                let sub = crate::command::category::subcommand_of_call(spec, argv);
                self.shared.stats.record_rejected(spec, sub);
            }
            self.shared.stats.record_error(text.as_bytes());
        })
    }

    fn run(&mut self, spec: &'static CommandSpec, argv: &[Bytes], resp3: bool) -> Frame {
        let protocol = std::mem::replace(
            &mut self.conn.protocol,
            if resp3 {
                Protocol::Resp3
            } else {
                Protocol::Resp2
            },
        );
        let reply = super::run(self, spec, argv);
        self.conn.protocol = protocol;
        reply
    }

    fn may_run(&self, argv: &[Bytes]) -> Option<bool> {
        let spec = argv.first().and_then(|name| self.shared.command(name))?;
        let user = &self.conn.user;
        Some(user.unrestricted() || crate::acl::Acl::check(user, spec, argv).is_ok())
    }
}

/// The checks a command from a script passes before it runs, with
/// Redis's texts for each refusal.
fn admit(
    ctx: &Ctx<'_>,
    st: &mut CallState<'_>,
    argv: &[Bytes],
) -> Result<&'static CommandSpec, String> {
    let spec = ctx
        .shared
        .command(&argv[0])
        .ok_or_else(|| UNKNOWN_COMMAND.to_owned())?;
    if !spec.arity_ok(argv.len()) {
        return Err(WRONG_ARITY.to_owned());
    }
    let stream_read = matches!(spec.name, "xread" | "xreadgroup");
    // `CLUSTER RESET` is flagged `noscript` as a subcommand in Redis.
    let cluster_reset =
        spec.name == "cluster" && argv.get(1).is_some_and(|a| crate::parse::is(a, "reset"));
    if spec.has(flag::NO_SCRIPT) || (spec.has(flag::BLOCKING) && !stream_read) || cluster_reset {
        return Err(NOT_ALLOWED.to_owned());
    }
    if stream_read && blocks(argv) {
        return Err(block_from_script(spec.name));
    }
    super::acl::permit(ctx, spec, argv, crate::acl::Context::Lua)
        .map_err(|r| super::acl::script_refusal_text(&r).to_owned())?;
    if let Some(cl) = &ctx.shared.cluster {
        let slot = super::route::script_route(ctx, cl, spec, argv).map_err(str::to_owned)?;
        st.check_slot(slot).map_err(str::to_owned)?;
    }
    if (spec.has(flag::WRITE) || super::may_replicate(spec)) && st.read_only {
        return Err(WRITE_FROM_READ_ONLY.to_owned());
    }
    // On a replica, as Redis's `scriptCall` checks.
    if ctx.shared.repl.is_replica() && !ctx.conn.primary_link {
        if spec.has(flag::WRITE) && super::read_only_replica(ctx) {
            return Err(crate::error::READONLY.to_owned());
        }
        if !spec.has(flag::STALE) && super::serving_stale_refused(ctx.shared) {
            return Err(STALE_FROM_SCRIPT.to_owned());
        }
    }
    if spec.has(flag::WRITE) {
        if let Some(refusal) = ctx.shared.refuses_writes() {
            return Err(refusal.to_owned());
        }
    }
    if spec.has(flag::DENYOOM) && !st.allow_oom && !st.wrote {
        reserve_for_write(ctx).map_err(|e| crate::error::CmdError::from(e).to_string())?;
    }
    Ok(spec)
}

/// Whether an `XREAD`/`XREADGROUP` asks to block: `BLOCK` among the
/// options before `STREAMS` (after it come keys and IDs).
fn blocks(argv: &[Bytes]) -> bool {
    argv.iter()
        .skip(1)
        .take_while(|a| !a.eq_ignore_ascii_case(b"streams"))
        .any(|a| a.eq_ignore_ascii_case(b"block"))
}

/// `Store::reserve_for_write` for scripts, which also counts what the
/// script cache and libraries hold, as Redis's `used_memory` does: a
/// `maxmemory` below that refuses scripts' writes even on an empty store.
///
/// # Errors
/// `OutOfMemory` when over the limit after evicting what can be evicted.
pub(super) fn reserve_for_write(ctx: &Ctx<'_>) -> Result<(), ferrum_store::StoreError> {
    let store = ctx.store();
    super::notify::reserve_for_write(ctx.shared, ctx.now)?;
    let max = store.maxmemory_bytes();
    let held = ctx.shared.scripting.stats().held_bytes as u64;
    if max != 0 && store.used_memory_bytes() as u64 + held > max {
        return Err(ferrum_store::StoreError::OutOfMemory);
    }
    Ok(())
}
