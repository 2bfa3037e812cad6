//! `redis.call` and `redis.pcall` as the engine sees them: the arguments
//! read from Lua, the state one run keeps between its calls, and the reply
//! turned back into Lua. The command itself goes through a [`Caller`],
//! which the command layer implements (`cmd/script_call.rs`): there it
//! passes the checks Redis makes for scripts (commands flagged `noscript`,
//! writes from a read-only script, `-OOM` before the first write, `BLOCK`
//! on stream reads) and runs through the same `cmd::run` as a client's,
//! so the engine does not depend on the command layer.

use bytes::Bytes;
use ferrum_proto::Frame;
use mlua::{Lua, Table, Value};

use super::convert::{format_number, frame_to_lua};
use super::{Running, COUNTED};
use crate::command::{flag, CommandSpec};
use crate::error::{ACL_CHECK_UNKNOWN, BAD_ARGUMENT, NO_ARGUMENTS};

/// The client a script runs as, as its `redis.call`s need it. The command
/// layer implements it for the calling command's context.
pub(crate) trait Caller {
    /// The checks a command from the script passes before it runs: its
    /// row, or the refusal's text (counted in the statistics already).
    fn admit(
        &mut self,
        st: &mut CallState<'_>,
        argv: &[Bytes],
    ) -> Result<&'static CommandSpec, String>;
    /// Runs an admitted command and returns its reply, in RESP3 when
    /// `resp3` (`redis.setresp(3)`).
    fn run(&mut self, spec: &'static CommandSpec, argv: &[Bytes], resp3: bool) -> Frame;
    /// Whether the caller's user may run `argv` (`redis.acl_check_cmd`);
    /// `None` for an unknown command.
    fn may_run(&self, argv: &[Bytes]) -> Option<bool>;
}

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
    caller: &mut dyn Caller,
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
    let spec = match caller.admit(st, &argv) {
        Ok(spec) => spec,
        Err(text) => return Ok((false, error_table(lua, text.as_bytes())?)),
    };
    if spec.has(flag::WRITE) {
        st.wrote = true;
        st.running.mark_wrote();
    }
    st.read |= spec.has(flag::READONLY);
    let reply = caller.run(spec, &argv, st.resp3);
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
    caller: &dyn Caller,
    (count, args): (usize, Table),
) -> mlua::Result<(bool, Value)> {
    let argv = (1..=count)
        .map(|i| args.raw_get::<Value>(i).ok().and_then(argument))
        .collect::<Option<Vec<Bytes>>>()
        .ok_or_else(|| mlua::Error::runtime(BAD_ARGUMENT))?;
    let Some(allowed) = caller.may_run(&argv) else {
        return Ok((false, error_table(lua, ACL_CHECK_UNKNOWN.as_bytes())?));
    };
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

impl CallState<'_> {
    /// In cluster mode, checks that a command's keys (in `slot`, `None`
    /// without keys) are in the slot the script's keys are in, unless the
    /// script may cross slots, as Redis checks it.
    ///
    /// # Errors
    /// Redis's text for a script reaching keys of a second slot.
    pub(crate) fn check_slot(&mut self, slot: Option<u16>) -> Result<(), &'static str> {
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

/// `{err=text, ignore_error_stats_update=true}`: the command counted its
/// error already, so the script's own error reply must not count again.
fn error_table(lua: &Lua, text: &[u8]) -> mlua::Result<Value> {
    let t = lua.create_table_with_capacity(0, 2)?;
    t.raw_set("err", lua.create_string(text)?)?;
    t.raw_set(COUNTED, true)?;
    Ok(Value::Table(t))
}
