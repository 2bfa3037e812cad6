//! `FUNCTION LOAD|DELETE|LIST|DUMP|RESTORE|FLUSH|STATS|KILL|HELP`,
//! `FCALL` and `FCALL_RO`.

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::glob::glob_match;

use super::args::Args;
use super::error::{
    function_unknown_argument, function_unknown_option, subcommand_syntax, BAD_FUNCTION_PAYLOAD,
    BAD_NUMKEYS, FUNCTION_FLUSH_MODE, FUNCTION_LIST_NO_NAME, FUNCTION_RESTORE_POLICY, NO_FUNCTION,
    NO_LIBRARY,
};
use super::parse::{is, parse_i64};
use super::script::{invoke, split_keys};
use super::{help_reply, CmdError, CmdResult, Ctx};
use crate::rdb::{function_codes, function_payload};
use crate::script::{library_name, Engine, Invocation, Kind, Libraries, Library};

/// `FCALL function numkeys [key ...] [arg ...]`
pub(crate) fn fcall(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    fcall_generic(ctx, args, false)
}

/// `FCALL_RO function numkeys [key ...] [arg ...]`
pub(crate) fn fcall_ro(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    fcall_generic(ctx, args, true)
}

fn fcall_generic(ctx: &mut Ctx<'_>, args: &[Bytes], read_only: bool) -> CmdResult {
    let numkeys = parse_i64(&args[2]).ok_or_else(|| CmdError::msg(BAD_NUMKEYS))?;
    let (keys, argv) = split_keys(numkeys, &args[3..])?;
    let shared = ctx.shared;
    let engine = shared.scripting.engine();
    let (reg, library) = engine
        .libraries
        .function(&args[1])
        .ok_or_else(|| CmdError::msg(NO_FUNCTION))?;
    let func = library
        .callback(reg)
        .map_err(|_| CmdError::msg(NO_FUNCTION))?;
    let (flags, name) = (reg.flags, reg.name.clone());
    let inv = Invocation {
        func,
        flags,
        keys,
        argv,
        kind: Kind::Function,
        name,
        read_only,
        command: args,
    };
    invoke(ctx, &engine, inv)
}

/// `FUNCTION <subcommand> ...`
pub(crate) fn function(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let sub = &args[1];
    let rest = &args[2..];
    match () {
        _ if is(sub, "load") => load(ctx, rest),
        _ if is(sub, "delete") && rest.len() == 1 => delete(ctx, &rest[0]),
        _ if is(sub, "list") => list(ctx, rest),
        _ if is(sub, "dump") && rest.is_empty() => dump(ctx),
        _ if is(sub, "restore") && (1..=2).contains(&rest.len()) => restore(ctx, rest),
        _ if is(sub, "flush") && rest.len() <= 1 => flush(ctx, rest),
        _ if is(sub, "kill") && rest.is_empty() => {
            ctx.shared
                .scripting
                .running
                .kill(Kind::Function)
                .map_err(CmdError::msg)?;
            Ok(Frame::ok())
        }
        _ if is(sub, "stats") && rest.is_empty() => Ok(stats(ctx)),
        _ if is(sub, "help") && rest.is_empty() => help(),
        _ if [
            "load", "delete", "list", "dump", "restore", "flush", "kill", "stats", "help",
        ]
        .iter()
        .any(|n| is(sub, n)) =>
        {
            Err(CmdError::msg(subcommand_syntax(
                "FUNCTION",
                &sub.to_ascii_lowercase(),
            )))
        }
        _ => Err(CmdError::unknown_subcommand("FUNCTION", sub)),
    }
}

/// `FUNCTION LOAD [REPLACE] code`
fn load(ctx: &mut Ctx<'_>, rest: &[Bytes]) -> CmdResult {
    let (replace, code) = match rest {
        [code] => (false, code),
        [opt, code] if is(opt, "replace") => (true, code),
        [opt, ..] => return Err(CmdError::msg(function_unknown_option(opt))),
        [] => return Err(CmdError::Arity("function|load".to_owned())),
    };
    super::script_call::reserve_for_write(ctx)?;
    let name = library_name(code)?;
    let shared = ctx.shared;
    let mut engine = shared.scripting.engine();
    let library = compile(&engine, code)?;
    engine.libraries.add(name.clone(), library, replace, true)?;
    shared.scripting.publish(&engine);
    Ok(Frame::bulk(name))
}

/// Runs a library's code and collects its functions.
fn compile(engine: &Engine, code: &Bytes) -> Result<Library, CmdError> {
    let (functions, registered) = engine.register(code)?;
    Ok(Library {
        code: code.clone(),
        functions,
        registered,
    })
}

fn delete(ctx: &mut Ctx<'_>, name: &Bytes) -> CmdResult {
    let shared = ctx.shared;
    let mut engine = shared.scripting.engine();
    if !engine.libraries.delete(&String::from_utf8_lossy(name)) {
        return Err(CmdError::msg(NO_LIBRARY));
    }
    shared.scripting.publish(&engine);
    Ok(Frame::ok())
}

/// `FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE]`
fn list(ctx: &mut Ctx<'_>, rest: &[Bytes]) -> CmdResult {
    let (mut pattern, mut with_code) = (None, false);
    let mut rest = Args::new(rest);
    while let Some(arg) = rest.next() {
        if is(arg, "withcode") && !with_code {
            with_code = true;
        } else if is(arg, "libraryname") && pattern.is_none() {
            let p = rest
                .next()
                .ok_or_else(|| CmdError::msg(FUNCTION_LIST_NO_NAME))?;
            pattern = Some(p.clone());
        } else {
            return Err(CmdError::msg(function_unknown_argument(arg)));
        }
    }
    let engine = ctx.shared.scripting.engine();
    let libraries = engine
        .libraries
        .iter()
        .filter(|l| {
            pattern
                .as_ref()
                .is_none_or(|p| glob_match(p, l.name.as_bytes(), false))
        })
        .map(|l| {
            let functions = l
                .library
                .functions
                .iter()
                .map(|f| {
                    Frame::Map(vec![
                        (Frame::bulk("name"), Frame::bulk(f.name.clone())),
                        (
                            Frame::bulk("description"),
                            Frame::bulk_or_null(f.description.clone()),
                        ),
                        (
                            Frame::bulk("flags"),
                            Frame::Set(f.flags.names().into_iter().map(Frame::bulk).collect()),
                        ),
                    ])
                })
                .collect();
            let mut fields = vec![
                (Frame::bulk("library_name"), Frame::bulk(l.name.to_owned())),
                (Frame::bulk("engine"), Frame::bulk("LUA")),
                (Frame::bulk("functions"), Frame::Array(functions)),
            ];
            if with_code {
                fields.push((
                    Frame::bulk("library_code"),
                    Frame::Bulk(l.library.code.clone()),
                ));
            }
            Frame::Map(fields)
        })
        .collect();
    Ok(Frame::Array(libraries))
}

fn dump(ctx: &mut Ctx<'_>) -> CmdResult {
    let engine = ctx.shared.scripting.engine();
    let payload = function_payload(engine.libraries.iter().map(|l| &l.library.code[..]));
    Ok(Frame::bulk(payload))
}

/// `FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE]`: all the payload's
/// libraries or none.
fn restore(ctx: &mut Ctx<'_>, rest: &[Bytes]) -> CmdResult {
    let policy = rest.get(1);
    let (flush, replace) = match policy {
        None => (false, false),
        Some(p) if is(p, "append") => (false, false),
        Some(p) if is(p, "replace") => (false, true),
        Some(p) if is(p, "flush") => (true, false),
        Some(_) => return Err(CmdError::msg(FUNCTION_RESTORE_POLICY)),
    };
    let codes = function_codes(&rest[0]).ok_or_else(|| CmdError::msg(BAD_FUNCTION_PAYLOAD))?;
    super::script_call::reserve_for_write(ctx)?;
    restore_libraries(ctx.shared, codes, flush, replace)?;
    Ok(Frame::ok())
}

/// Compiles and adds the libraries of these codes, all or none: after
/// removing every library with `flush`, replacing those of the same name
/// with `replace` (else such a name is an error). `FUNCTION RESTORE` and
/// loading an RDB file.
pub(crate) fn restore_libraries(
    shared: &crate::shared::Shared,
    codes: Vec<Vec<u8>>,
    flush: bool,
    replace: bool,
) -> Result<(), CmdError> {
    let mut engine = shared.scripting.engine();
    let mut next: Libraries = if flush {
        Libraries::default()
    } else {
        engine.libraries.clone()
    };
    for code in codes {
        let code = Bytes::from(code);
        let name = library_name(&code)?;
        let library = compile(&engine, &code)?;
        next.add(name, library, replace, false)?;
    }
    engine.libraries = next;
    shared.scripting.publish(&engine);
    Ok(())
}

/// The code of every library, in `FUNCTION DUMP`'s order (snapshots).
pub(crate) fn library_codes(shared: &crate::shared::Shared) -> Vec<Bytes> {
    let engine = shared.scripting.engine();
    engine
        .libraries
        .iter()
        .map(|l| l.library.code.clone())
        .collect()
}

/// `FUNCTION FLUSH [ASYNC|SYNC]`
fn flush(ctx: &mut Ctx<'_>, rest: &[Bytes]) -> CmdResult {
    if let Some(mode) = rest.first() {
        if !is(mode, "sync") && !is(mode, "async") {
            return Err(CmdError::msg(FUNCTION_FLUSH_MODE));
        }
    }
    let shared = ctx.shared;
    let mut engine = shared.scripting.engine();
    engine.libraries.clear();
    shared.scripting.publish(&engine);
    Ok(Frame::ok())
}

/// `FUNCTION STATS`: the running function, and what is loaded. Runs
/// while a function is busy, so it reads no state the VM's lock guards.
fn stats(ctx: &Ctx<'_>) -> Frame {
    let scripting = &ctx.shared.scripting;
    let running = match scripting.running.details() {
        Some((name, command, ms)) => Frame::Map(vec![
            (Frame::bulk("name"), Frame::bulk(name)),
            (
                Frame::bulk("command"),
                Frame::Array(command.into_iter().map(Frame::Bulk).collect()),
            ),
            (Frame::bulk("duration_ms"), Frame::Integer(ms as i64)),
        ]),
        None => Frame::Null,
    };
    let loaded = scripting.stats();
    let lua = Frame::Map(vec![
        (
            Frame::bulk("libraries_count"),
            Frame::Integer(loaded.libraries as i64),
        ),
        (
            Frame::bulk("functions_count"),
            Frame::Integer(loaded.functions as i64),
        ),
    ]);
    Frame::Map(vec![
        (Frame::bulk("running_script"), running),
        (
            Frame::bulk("engines"),
            Frame::Map(vec![(Frame::bulk("LUA"), lua)]),
        ),
    ])
}

fn help() -> CmdResult {
    help_reply(&[
        "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "LOAD [REPLACE] <FUNCTION CODE>",
        "    Create a new library with the given library name and code.",
        "DELETE <LIBRARY NAME>",
        "    Delete the given library.",
        "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
        "    Return general information on all the libraries.",
        "FLUSH [ASYNC|SYNC]",
        "    Delete all the libraries.",
        "KILL",
        "    Kill the current running function.",
        "STATS",
        "    Return information about the current function running.",
        "DUMP",
        "    Return a serialized payload representing the current libraries.",
        "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
        "    Restore the libraries represented by the given payload.",
        "HELP",
        "    Prints this help.",
    ])
}
