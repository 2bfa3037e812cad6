//! `redis.call` and `redis.pcall`: a script's command goes through the
//! same `cmd::run` as a client's, after the checks Redis makes for
//! scripts (commands flagged `noscript`, writes from a read-only script,
//! `-OOM` before the first write, `BLOCK` on stream reads).

use bytes::Bytes;
use ferrum_proto::{Frame, Protocol};
use mlua::{Lua, Table, Value};

use super::convert::{format_number, frame_to_lua};
use super::{Running, COUNTED};
use crate::cmd::{self, Ctx};
use crate::command::{flag, CommandSpec};
use crate::error::{
    block_from_script, ACL_CHECK_UNKNOWN, BAD_ARGUMENT, NOREPLICAS, NOT_ALLOWED, NO_ARGUMENTS,
    UNKNOWN_COMMAND, WRITE_FROM_READ_ONLY, WRONG_ARITY,
};

/// What one script run has done and may do, read by every call it makes.
pub(crate) struct CallState<'r> {
    /// Writes are refused (`EVAL_RO`, `FCALL_RO`, the `no-writes` flag).
    pub(crate) read_only: bool,
    /// The `allow-oom` flag: commands that grow memory are not refused.
    pub(crate) allow_oom: bool,
    /// A write command has been called: from now on `-OOM` no longer
    /// stops the script halfway (as Redis), and it cannot be killed.
    pub(crate) wrote: bool,
    /// A read-only command has been called: a tracking caller then tracks
    /// the script's declared keys, as Redis does.
    pub(crate) read: bool,
    /// `redis.setresp(3)` is in effect.
    pub(crate) resp3: bool,
    /// The running script's shared state (kill flag).
    pub(crate) running: &'r Running,
    /// In cluster mode, the slot of the keys met so far (the declared
    /// keys', then the first command's).
    pub(crate) slot: Option<u16>,
    /// The script may use keys of several slots: an `EVAL` without a
    /// shebang, or `allow-cross-slot-keys`.
    pub(crate) cross_slot_ok: bool,
}

/// Runs one `redis.call`/`redis.pcall` of the `count` arguments in `args`
/// (a table: there may be more than a callback's stack holds). Returns
/// `(true, reply)` or
/// `(false, {err=...})`; errors that even `pcall` raises (no arguments, an
/// argument of the wrong type, `SCRIPT KILL`) are `Err`.
pub(crate) fn dispatch(
    lua: &Lua,
    ctx: &mut Ctx<'_>,
    st: &mut CallState<'_>,
    (count, args): (usize, Table),
) -> mlua::Result<(bool, Value)> {
    if let Some(why) = st.running.stop_reason() {
        return Err(mlua::Error::runtime(why));
    }
    if count == 0 {
        return Err(mlua::Error::runtime(NO_ARGUMENTS));
    }
    let argv = (1..=count)
        .map(|i| args.raw_get::<Value>(i).ok().and_then(argument))
        .collect::<Option<Vec<Bytes>>>()
        .ok_or_else(|| mlua::Error::runtime(BAD_ARGUMENT))?;
    let spec = match admit(ctx, st, &argv) {
        Ok(spec) => spec,
        Err(text) => {
            if let Some(spec) = ctx.shared.command(&argv[0]) {
                let sub = crate::command::category::subcommand_of_call(spec, &argv);
                ctx.shared.stats.record_rejected(spec, sub);
            }
            ctx.shared.stats.record_error(text.as_bytes());
            return Ok((false, error_table(lua, text.as_bytes())?));
        }
    };
    if spec.has(flag::WRITE) {
        st.wrote = true;
        st.running.mark_wrote();
    }
    st.read |= spec.has(flag::READONLY);
    let protocol = std::mem::replace(
        &mut ctx.conn.protocol,
        if st.resp3 {
            Protocol::Resp3
        } else {
            Protocol::Resp2
        },
    );
    let reply = cmd::run(ctx, spec, &argv);
    ctx.conn.protocol = protocol;
    match reply {
        // `run` counted the error already.
        Frame::Error(text) => Ok((false, error_table(lua, &text)?)),
        frame => Ok((true, frame_to_lua(lua, frame, st.resp3)?)),
    }
}

/// `redis.acl_check_cmd(command, args...)`: `(true, true)` if the calling
/// user may run the command with these arguments, `(true, false)` if not
/// (nothing is logged), `(false, {err=...})` for an unknown command.
pub(crate) fn acl_check(
    lua: &Lua,
    ctx: &Ctx<'_>,
    (count, args): (usize, Table),
) -> mlua::Result<(bool, Value)> {
    let argv = (1..=count)
        .map(|i| args.raw_get::<Value>(i).ok().and_then(argument))
        .collect::<Option<Vec<Bytes>>>()
        .ok_or_else(|| mlua::Error::runtime(BAD_ARGUMENT))?;
    let Some(spec) = argv.first().and_then(|name| ctx.shared.command(name)) else {
        return Ok((false, error_table(lua, ACL_CHECK_UNKNOWN.as_bytes())?));
    };
    let user = &ctx.conn.user;
    let allowed = user.unrestricted() || crate::acl::Acl::check(user, spec, &argv).is_ok();
    Ok((true, Value::Boolean(allowed)))
}

/// One argument as Redis passes it: strings as they are, numbers in
/// `%.17g`; anything else is refused.
fn argument(v: Value) -> Option<Bytes> {
    match v {
        Value::String(s) => Some(Bytes::copy_from_slice(&s.as_bytes())),
        Value::Integer(n) => Some(Bytes::from(itoa::Buffer::new().format(n).to_owned())),
        Value::Number(x) => Some(Bytes::from(format_number(x))),
        _ => None,
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
    cmd::acl::permit(ctx, spec, argv, crate::acl::Context::Lua)
        .map_err(|r| cmd::acl::script_refusal_text(&r).to_owned())?;
    if let Some(cl) = &ctx.shared.cluster {
        let slot = cmd::route::script_route(ctx, cl, spec, argv).map_err(str::to_owned)?;
        st.check_slot(slot).map_err(str::to_owned)?;
    }
    if (spec.has(flag::WRITE) || cmd::may_replicate(spec)) && st.read_only {
        return Err(WRITE_FROM_READ_ONLY.to_owned());
    }
    if spec.has(flag::WRITE) && ctx.shared.refuses_writes() {
        return Err(NOREPLICAS.to_owned());
    }
    if spec.has(flag::DENYOOM) && !st.allow_oom && !st.wrote {
        super::reserve_for_write(ctx).map_err(|e| crate::error::CmdError::from(e).to_string())?;
    }
    Ok(spec)
}

impl CallState<'_> {
    /// In cluster mode, checks that a command's keys (in `slot`, `None`
    /// without keys) are in the slot the script's keys are in, unless the
    /// script may cross slots, as Redis checks it.
    ///
    /// # Errors
    /// Redis's text for a script reaching keys of a second slot.
    fn check_slot(&mut self, slot: Option<u16>) -> Result<(), &'static str> {
        match (slot, self.slot) {
            (Some(_), _) if self.cross_slot_ok => Ok(()),
            (Some(s), None) => {
                self.slot = Some(s);
                Ok(())
            }
            (Some(s), Some(seen)) if s != seen => Err(crate::error::cluster::SCRIPT_CROSS_SLOT),
            _ => Ok(()),
        }
    }
}

/// Whether an `XREAD`/`XREADGROUP` asks to block: `BLOCK` among the
/// options before `STREAMS` (after it come keys and IDs).
fn blocks(argv: &[Bytes]) -> bool {
    argv.iter()
        .skip(1)
        .take_while(|a| !a.eq_ignore_ascii_case(b"streams"))
        .any(|a| a.eq_ignore_ascii_case(b"block"))
}

/// `{err=text, ignore_error_stats_update=true}`: the command counted its
/// error already, so the script's own error reply must not count again.
fn error_table(lua: &Lua, text: &[u8]) -> mlua::Result<Value> {
    let t = lua.create_table_with_capacity(0, 2)?;
    t.raw_set("err", lua.create_string(text)?)?;
    t.raw_set(COUNTED, true)?;
    Ok(Value::Table(t))
}
