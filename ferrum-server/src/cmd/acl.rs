//! `ACL` and its subcommands, and the permission check of the command path
//! ([`permit`]): what a refusal replies and logs, and which connections a
//! change of users closes.

use std::sync::Arc;

use bytes::Bytes;
use ferrum_proto::Frame;

use super::category::{self, SubcommandSpec};
use super::error::acl as e;
use super::parse::{int_arg, is};
use super::SUBCOMMANDS;
use super::{CmdError, CmdResult, CommandSpec, Ctx};
use crate::acl::{self, Acl, AclCommand, Context, Denied, Event, Reason, Refusal, User};

/// Whether the connection's user may run `args` (a call of `spec`); a
/// refusal is logged in `ACL LOG` under `context`. A user allowed
/// everything passes on one relaxed load.
///
/// # Errors
///
/// The refusal, for the caller to word ([`noperm`], or a script's text).
pub(crate) fn permit(
    ctx: &Ctx<'_>,
    spec: &'static CommandSpec,
    args: &[Bytes],
    context: Context,
) -> Result<(), Refusal> {
    if ctx.conn.user.unrestricted() {
        return Ok(());
    }
    Acl::check(&ctx.conn.user, spec, args).inspect_err(|refusal| {
        let name = ctx.conn.user.name.clone();
        log(ctx, refusal.reason(), context, refusal.object_text(), name);
    })
}

/// The `-NOPERM` reply to a refused client command.
pub(crate) fn noperm(refusal: &Refusal) -> CmdError {
    CmdError::msg(match refusal.denied {
        Denied::Command => e::noperm_command(refusal.command),
        Denied::Key(_) => e::NOPERM_KEY.to_owned(),
        Denied::Channel(_) => e::NOPERM_CHANNEL.to_owned(),
    })
}

/// The reply inside `EXEC` to a queued command the user may no longer run.
pub(crate) fn noperm_in_exec(refusal: &Refusal) -> CmdError {
    CmdError::msg(e::noperm_in_exec(match refusal.denied {
        Denied::Command => e::EXEC_COMMAND,
        Denied::Key(_) => e::EXEC_KEY,
        Denied::Channel(_) => e::EXEC_CHANNEL,
    }))
}

/// The error a script's refused `redis.call` gets.
pub(crate) fn script_refusal_text(refusal: &Refusal) -> &'static str {
    match refusal.denied {
        Denied::Command => e::SCRIPT_COMMAND,
        Denied::Key(_) => e::SCRIPT_KEY,
        Denied::Channel(_) => e::SCRIPT_CHANNEL,
    }
}

/// Logs a failed `AUTH` as user `name`.
pub(crate) fn log_failed_auth(ctx: &Ctx<'_>, name: &[u8]) {
    let name = String::from_utf8_lossy(name).into_owned();
    log(ctx, Reason::Auth, context_of(ctx), "AUTH".to_owned(), name);
}

/// `toplevel`, or `multi` inside a transaction.
pub(crate) fn context_of(ctx: &Ctx<'_>) -> Context {
    if ctx.conn.multi.is_some() {
        Context::Multi
    } else {
        Context::Toplevel
    }
}

fn log(ctx: &Ctx<'_>, reason: Reason, context: Context, object: String, username: String) {
    let max_len = ctx
        .shared
        .config()
        .stored_value("acllog-max-len")
        .parse()
        .unwrap_or(128);
    let event = Event {
        reason,
        context,
        object,
        username,
        client_info: ctx.conn.handle.info_line(),
    };
    ctx.shared.acl.log.record(event, ctx.now.0, max_len);
}

/// Whether the connection's user reads every key with this call, as
/// `SORT ... BY pattern` and `GET pattern` require.
pub(crate) fn reads_every_key(ctx: &Ctx<'_>, spec: &'static CommandSpec, args: &[Bytes]) -> bool {
    let user = &ctx.conn.user;
    if user.unrestricted() {
        return true;
    }
    let cmd = AclCommand::of_call(spec, args);
    let rules = user.rules();
    let mut call = acl::CallTargets::new(spec, args);
    let every = rules.selectors().any(|s| s.reads_every_key(cmd, &mut call));
    every
}

/// `ACL <subcommand> ...`
pub(crate) fn acl(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let sub = &args[1];
    let Some(spec) = subcommand(sub) else {
        return Err(CmdError::unknown_subcommand("ACL", sub));
    };
    if !arity_ok(spec.arity, args.len()) {
        return Err(CmdError::Arity(spec.full_name.to_owned()));
    }
    let rest = &args[2..];
    match spec.name() {
        "cat" => cat(rest),
        "deluser" => deluser(ctx, rest),
        "dryrun" => dryrun(ctx, rest),
        "genpass" => genpass(rest),
        "getuser" => Ok(getuser(ctx, &rest[0])),
        "list" => Ok(Frame::Array(
            ctx.shared.acl.list().into_iter().map(Frame::bulk).collect(),
        )),
        "load" => load(ctx),
        "log" => log_command(ctx, rest),
        "save" => save(ctx),
        "setuser" => setuser(ctx, &rest[0], &rest[1..]),
        "users" => Ok(Frame::Array(
            ctx.shared
                .acl
                .names()
                .into_iter()
                .map(Frame::bulk)
                .collect(),
        )),
        "whoami" => Ok(Frame::bulk(ctx.conn.user.name.clone())),
        _ => Ok(help()),
    }
}

/// The `acl|...` row named `sub`, case-insensitively.
fn subcommand(sub: &[u8]) -> Option<&'static SubcommandSpec> {
    SUBCOMMANDS
        .iter()
        .find(|s| s.container() == "acl" && s.name().as_bytes().eq_ignore_ascii_case(sub))
}

fn arity_ok(arity: i32, argc: usize) -> bool {
    let argc = argc as i64;
    if arity >= 0 {
        argc == i64::from(arity)
    } else {
        argc >= -i64::from(arity)
    }
}

/// `ACL CAT [category]`: the categories, or the commands of one.
fn cat(args: &[Bytes]) -> CmdResult {
    match args {
        [] => Ok(Frame::Array(
            category::NAMES
                .iter()
                .map(|(_, n)| Frame::bulk(*n))
                .collect(),
        )),
        [name] => {
            let bit =
                category::by_name(name).ok_or_else(|| CmdError::msg(e::unknown_category(name)))?;
            Ok(Frame::Array(
                category::commands_in(bit).map(Frame::bulk).collect(),
            ))
        }
        _ => Err(CmdError::msg(super::error::subcommand_syntax(
            "ACL", b"CAT",
        ))),
    }
}

/// `ACL SETUSER name rules...`
fn setuser(ctx: &mut Ctx<'_>, name: &Bytes, rules: &[Bytes]) -> CmdResult {
    let all_channels = acl::all_channels_by_default(&ctx.shared.config());
    let (user, before) = ctx
        .shared
        .acl
        .set_user(name, rules, all_channels)
        .map_err(CmdError::msg)?;
    if before.is_some() {
        close_revoked_subscribers(ctx, &user);
    }
    Ok(Frame::ok())
}

/// Closes the connections of `user` subscribed to a channel or pattern its
/// rules no longer allow, as Redis does after `ACL SETUSER`.
fn close_revoked_subscribers(ctx: &mut Ctx<'_>, user: &Arc<User>) {
    let revoked = |id: u64| {
        let rules = user.rules();
        if rules.selectors().any(acl::Selector::all_channels) {
            return false;
        }
        ctx.shared
            .pubsub
            .subscriptions_of(id)
            .iter()
            .any(|(chan, kind)| {
                let pattern = *kind == crate::pubsub::Kind::Pattern;
                !rules.selectors().any(|s| s.channel_allowed(chan, pattern))
            })
    };
    let doomed: Vec<_> = ctx
        .shared
        .clients
        .all()
        .into_iter()
        .filter(|c| Arc::ptr_eq(&c.user(), user) && revoked(c.id))
        .collect();
    for c in doomed {
        close(ctx, &c);
    }
}

/// Closes a connection: the caller's own after this reply, any other at
/// once. The other is gone from `CLIENT LIST` before this command replies,
/// as in Redis, though its task may still be closing the socket.
fn close(ctx: &mut Ctx<'_>, client: &crate::client::ClientHandle) {
    if client.id == ctx.conn.handle.id {
        ctx.conn.closing = true;
    } else {
        ctx.shared.clients.unregister(client.id);
        client.kill.raise(crate::client::End::Killed);
    }
}

/// Closes every connection running as one of `users` (deleted or
/// replaced).
fn close_clients_of(ctx: &mut Ctx<'_>, users: &[Arc<User>]) {
    for c in ctx.shared.clients.all() {
        let user = c.user();
        if users.iter().any(|u| Arc::ptr_eq(u, &user)) {
            close(ctx, &c);
        }
    }
}

/// `ACL DELUSER name...`: how many users were deleted.
fn deluser(ctx: &mut Ctx<'_>, names: &[Bytes]) -> CmdResult {
    let mut deleted = Vec::new();
    for name in names {
        if name[..] == *acl::DEFAULT_USER.as_bytes() {
            close_clients_of(ctx, &deleted);
            return Err(CmdError::msg(e::DEFAULT_UNDELETABLE));
        }
        deleted.extend(ctx.shared.acl.delete(name));
    }
    close_clients_of(ctx, &deleted);
    Ok(Frame::Integer(deleted.len() as i64))
}

/// `ACL GETUSER name`: flags, passwords, the root selector's rules, and
/// each other selector's; nil for no such user.
fn getuser(ctx: &Ctx<'_>, name: &[u8]) -> Frame {
    let Some(user) = ctx.shared.acl.get(name) else {
        return Frame::Null;
    };
    let rules = user.rules();
    let text = |s: &str| Frame::bulk(s.to_owned());
    let selector = |s: &acl::Selector| {
        vec![
            (text("commands"), text(&s.describe_commands())),
            (text("keys"), text(&s.describe_keys())),
            (text("channels"), text(&s.describe_channels())),
        ]
    };
    let mut fields = vec![
        (
            text("flags"),
            Frame::Array(rules.flags().into_iter().map(text).collect()),
        ),
        (
            text("passwords"),
            Frame::Array(rules.password_hexes().map(Frame::bulk).collect()),
        ),
    ];
    fields.extend(selector(&rules.root));
    let others = rules
        .extra_selectors()
        .iter()
        .map(|s| Frame::Map(selector(s)));
    fields.push((text("selectors"), Frame::Array(others.collect())));
    Frame::Map(fields)
}

/// `ACL DRYRUN user command args...`: `OK`, or why the user may not.
fn dryrun(ctx: &Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let user = ctx
        .shared
        .acl
        .get(&args[0])
        .ok_or_else(|| CmdError::msg(e::no_such_user(&args[0])))?;
    let call = &args[1..];
    let spec = ctx
        .shared
        .command(&call[0])
        .ok_or_else(|| CmdError::msg(e::no_such_command(&call[0])))?;
    if !spec.arity_ok(call.len()) {
        return Err(CmdError::Arity(spec.name.to_owned()));
    }
    if user.unrestricted() {
        return Ok(Frame::ok());
    }
    Ok(match Acl::check(&user, spec, call) {
        Ok(()) => Frame::ok(),
        Err(refusal) => Frame::bulk(match refusal.denied {
            Denied::Command => e::dryrun_command(refusal.command),
            Denied::Key(_) => e::dryrun_key(&refusal.object_text()),
            Denied::Channel(_) => e::dryrun_channel(&refusal.object_text()),
        }),
    })
}

/// `ACL GENPASS [bits]`: a random password of `bits` (256) bits, in hex.
fn genpass(args: &[Bytes]) -> CmdResult {
    let bits = match args.first() {
        Some(b) => int_arg(b)?,
        None => 256,
    };
    if !(1..=4096).contains(&bits) {
        return Err(CmdError::msg(e::GENPASS_BITS));
    }
    let mut bytes = vec![0u8; (bits as usize).div_ceil(8)];
    getrandom::fill(&mut bytes).map_err(|_| CmdError::msg(e::GENPASS_BITS))?;
    let mut hex = acl::to_hex(&bytes);
    hex.truncate((bits as usize).div_ceil(4));
    Ok(Frame::bulk(hex))
}

/// `ACL LOG [count | RESET]`
fn log_command(ctx: &Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let count = match args {
        [] => 10,
        [arg] if is(arg, "reset") => {
            ctx.shared.acl.log.reset();
            return Ok(Frame::ok());
        }
        [arg] => usize::try_from(int_arg(arg)?).unwrap_or(0),
        _ => {
            return Err(CmdError::msg(super::error::subcommand_syntax(
                "ACL", b"log",
            )))
        }
    };
    Ok(ctx.shared.acl.log.frames(count, ctx.now.0))
}

/// The `aclfile` parameter, or the error for a server without one.
fn acl_file(ctx: &Ctx<'_>) -> Result<String, CmdError> {
    acl::acl_file_path(&ctx.shared.config()).ok_or_else(|| CmdError::msg(e::NO_ACL_FILE))
}

/// `ACL LOAD`: replaces every user with the ACL file's, closing the
/// connections of the users replaced (the default user's stay).
fn load(ctx: &mut Ctx<'_>) -> CmdResult {
    let path = acl_file(ctx)?;
    let all_channels = acl::all_channels_by_default(&ctx.shared.config());
    let replaced = acl::load_file(&ctx.shared.acl, &path, all_channels)
        .map_err(|errors| CmdError::msg(e::load_failed(&errors)))?;
    close_clients_of(ctx, &replaced);
    Ok(Frame::ok())
}

/// `ACL SAVE`: writes every user to the ACL file.
fn save(ctx: &Ctx<'_>) -> CmdResult {
    let path = acl_file(ctx)?;
    acl::save_file(&ctx.shared.acl, &path).map_err(|_| CmdError::msg(e::SAVE_FAILED))?;
    Ok(Frame::ok())
}

fn help() -> Frame {
    // `help_reply` cannot fail.
    super::help_reply(&[
        "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CAT [<category>]",
        "    List all commands that belong to <category>, or all command categories",
        "    when no category is specified.",
        "DELUSER <username> [<username> ...]",
        "    Delete a list of users.",
        "DRYRUN <username> <command> [<arg> ...]",
        "    Returns whether the user can execute the given command without executing the command.",
        "GETUSER <username>",
        "    Get the user's details.",
        "GENPASS [<bits>]",
        "    Generate a secure 256-bit user password. The optional `bits` argument can",
        "    be used to specify a different size.",
        "LIST",
        "    Show users details in config file format.",
        "LOAD",
        "    Reload users from the ACL file.",
        "LOG [<count> | RESET]",
        "    Show the ACL log entries.",
        "SAVE",
        "    Save the current config to the ACL file.",
        "SETUSER <username> <attribute> [<attribute> ...]",
        "    Create or modify a user with the specified attributes.",
        "USERS",
        "    List all the registered usernames.",
        "WHOAMI",
        "    Return the current connection username.",
        "HELP",
        "    Prints this help.",
    ])
    .unwrap_or(Frame::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::NOT_INTEGER;

    #[test]
    fn every_acl_subcommand_is_a_row() {
        for name in [
            "cat", "deluser", "dryrun", "genpass", "getuser", "help", "list", "load", "log",
            "save", "setuser", "users", "whoami",
        ] {
            assert!(subcommand(name.as_bytes()).is_some(), "{name}");
        }
        assert!(subcommand(b"nosuch").is_none());
    }

    #[test]
    fn genpass_sizes() {
        let len = |arg: Option<&str>| {
            let args: Vec<Bytes> = arg
                .into_iter()
                .map(|s| Bytes::copy_from_slice(s.as_bytes()))
                .collect();
            match genpass(&args) {
                Ok(Frame::Bulk(b)) => Ok(b.len()),
                Ok(other) => panic!("{other:?}"),
                Err(e) => Err(e.to_string()),
            }
        };
        assert_eq!(len(None), Ok(64));
        assert_eq!(len(Some("5")), Ok(2));
        assert_eq!(len(Some("4096")), Ok(1024));
        assert!(len(Some("0")).is_err());
        assert!(len(Some("-236")).is_err());
        assert!(len(Some("5000")).is_err());
        assert_eq!(len(Some("x")), Err(NOT_INTEGER.to_owned()));
    }
}
