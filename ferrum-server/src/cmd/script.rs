//! `EVAL`, `EVALSHA`, `EVAL_RO`, `EVALSHA_RO` and `SCRIPT`.
//!
//! The dispatcher holds the transaction gate's write side while these run
//! (they are flagged `EXCLUSIVE`), so a script is atomic as `EXEC` is.

use bytes::Bytes;
use ferrum_proto::Frame;

use super::error::{
    NOSCRIPT, NOT_INTEGER, NUMKEYS_NEGATIVE, NUMKEYS_TOO_MANY, RO_WITH_WRITE_FLAG,
    SCRIPT_FLUSH_MODE,
};
use super::parse::{is, parse_i64};
use super::{help_reply, CmdError, CmdResult, Ctx};
use crate::script::{Engine, Invocation, Kind, ScriptFlags};

/// `EVAL script numkeys [key ...] [arg ...]`
pub(crate) fn eval(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    eval_generic(ctx, args, false, false)
}

/// `EVAL_RO script numkeys [key ...] [arg ...]`
pub(crate) fn eval_ro(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    eval_generic(ctx, args, false, true)
}

/// `EVALSHA sha1 numkeys [key ...] [arg ...]`
pub(crate) fn evalsha(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    eval_generic(ctx, args, true, false)
}

/// `EVALSHA_RO sha1 numkeys [key ...] [arg ...]`
pub(crate) fn evalsha_ro(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    eval_generic(ctx, args, true, true)
}

fn eval_generic(ctx: &mut Ctx<'_>, args: &[Bytes], by_sha: bool, read_only: bool) -> CmdResult {
    let numkeys = parse_i64(&args[2]).ok_or_else(|| CmdError::msg(NOT_INTEGER))?;
    let (keys, argv) = split_keys(numkeys, &args[3..])?;
    let shared = ctx.shared;
    let mut engine = shared.scripting.engine();
    let (sha, (func, flags)) = if by_sha {
        let found = engine
            .cached(&args[1])
            .ok_or_else(|| CmdError::msg(NOSCRIPT))?;
        (
            String::from_utf8_lossy(&args[1]).to_ascii_lowercase(),
            found,
        )
    } else {
        let sha = engine.load_script(&args[1])?;
        shared.scripting.publish(&engine);
        let found = engine
            .cached(sha.as_bytes())
            .ok_or_else(|| CmdError::msg(NOSCRIPT))?;
        (sha, found)
    };
    let inv = Invocation {
        func,
        flags,
        keys,
        argv,
        kind: Kind::Eval,
        name: sha,
        read_only,
        command: args,
    };
    invoke(ctx, &engine, inv)
}

/// Checks a script's or function's flags against the caller, runs it, and
/// publishes the engine's new state (for INFO) once it is done.
pub(super) fn invoke(ctx: &mut Ctx<'_>, engine: &Engine, inv: Invocation<'_>) -> CmdResult {
    check_flags(ctx, inv.flags, inv.read_only)?;
    let shared = ctx.shared;
    let reply = super::script_call::run_script(ctx, engine, inv);
    shared.scripting.publish(engine);
    Ok(reply)
}

/// `numkeys` keys, then the arguments.
///
/// # Errors
/// A negative count, or more keys than arguments.
pub(crate) fn split_keys(numkeys: i64, rest: &[Bytes]) -> Result<(&[Bytes], &[Bytes]), CmdError> {
    if numkeys < 0 {
        return Err(CmdError::msg(NUMKEYS_NEGATIVE));
    }
    if numkeys as u64 > rest.len() as u64 {
        return Err(CmdError::msg(NUMKEYS_TOO_MANY));
    }
    Ok(rest.split_at(numkeys as usize))
}

/// What a script's declared flags allow before it starts: a script that
/// may write is refused by the `_RO` commands, and over `maxmemory`
/// unless it is `allow-oom` (scripts without flags are checked per call
/// instead).
pub(crate) fn check_flags(
    ctx: &Ctx<'_>,
    flags: ScriptFlags,
    read_only: bool,
) -> Result<(), CmdError> {
    if !flags.declared || flags.no_writes {
        return Ok(());
    }
    if read_only {
        return Err(CmdError::msg(RO_WITH_WRITE_FLAG));
    }
    if let Some(refusal) = ctx.shared.refuses_writes() {
        return Err(CmdError::msg(refusal));
    }
    if !flags.allow_oom {
        super::script_call::reserve_for_write(ctx)?;
    }
    Ok(())
}

/// `SCRIPT LOAD|EXISTS|FLUSH|KILL|HELP`
pub(crate) fn script(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let sub = &args[1];
    let shared = ctx.shared;
    if is(sub, "load") && args.len() == 3 {
        let mut engine = shared.scripting.engine();
        let sha = engine.load_script(&args[2])?;
        shared.scripting.publish(&engine);
        return Ok(Frame::bulk(sha));
    }
    if is(sub, "exists") && args.len() >= 3 {
        let engine = shared.scripting.engine();
        let found = args[2..]
            .iter()
            .map(|sha| Frame::Integer(i64::from(engine.is_cached(sha))))
            .collect();
        return Ok(Frame::Array(found));
    }
    if is(sub, "flush") && args.len() <= 3 {
        if args.len() == 3 && !is(&args[2], "sync") && !is(&args[2], "async") {
            return Err(CmdError::msg(SCRIPT_FLUSH_MODE));
        }
        let mut engine = shared.scripting.engine();
        engine.flush_scripts();
        shared.scripting.publish(&engine);
        return Ok(Frame::ok());
    }
    if is(sub, "kill") && args.len() == 2 {
        shared
            .scripting
            .running
            .kill(Kind::Eval)
            .map_err(CmdError::msg)?;
        return Ok(Frame::ok());
    }
    if is(sub, "help") && args.len() == 2 {
        return help_reply(&[
            "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "EXISTS <sha1> [<sha1> ...]",
            "    Return information about the existence of the scripts in the script cache.",
            "FLUSH [ASYNC|SYNC]",
            "    Flush the Lua scripts cache. Very dangerous on replicas.",
            "KILL",
            "    Kill the currently executing Lua script.",
            "LOAD <script>",
            "    Load a script into the scripts cache without executing it.",
            "HELP",
            "    Prints this help.",
        ]);
    }
    Err(CmdError::unknown_subcommand("SCRIPT", sub))
}
