//! Connection commands: PING, ECHO, QUIT, HELLO, AUTH, SELECT, CLIENT, RESET.

use std::sync::atomic::Ordering;

use bytes::Bytes;
use ferrum_proto::{Frame, Protocol};

use super::args::Args;
use super::error::{
    hello_option, kill_no_such_user, setinfo_chars, unknown_client_type, unrecognized_option,
    AUTH_NOT_SET, CACHING_NOT_TRACKING, CACHING_NO_NOT_OPTOUT, CACHING_YES_NOT_OPTIN,
    CLIENT_ID_POSITIVE, CLIENT_NAME_CHARS, HELLO_NOAUTH, INVALID_CLIENT_ID, MONITOR_DENY_BLOCKING,
    NOPROTO, NO_SUCH_CLIENT, PAUSE_MODE, PROTOCOL_NOT_INTEGER, TRACKING_NO_REDIRECT_TARGET,
    TRACKING_ONE_REDIRECT, UNBLOCK_REASON, WRONGPASS,
};
use super::parse::{db_arg, int_arg, is, parse_i64};
use super::{CmdError, CmdResult, Ctx};

/// `PING [message]`. A RESP2 client in subscribed mode gets
/// `["pong", message]` (message empty by default), as in Redis.
pub(crate) fn ping(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() > 2 {
        return Err(CmdError::Arity("ping".into()));
    }
    if ctx.conn.subs.restricts(ctx.conn.protocol) {
        let msg = args.get(1).cloned().unwrap_or_default();
        return Ok(Frame::Array(vec![Frame::bulk("pong"), Frame::Bulk(msg)]));
    }
    match args.get(1) {
        None => Ok(Frame::simple("PONG")),
        Some(m) => Ok(Frame::Bulk(m.clone())),
    }
}

pub(crate) fn echo(_ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    Ok(Frame::Bulk(args[1].clone()))
}

pub(crate) fn quit(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    ctx.conn.closing = true;
    // Gone for client-side caching from now on: a client redirecting here
    // learns it at once (`tracking-redir-broken`), not after the socket
    // closes.
    *ctx.conn
        .handle
        .inbox
        .lock()
        .unwrap_or_else(|p| p.into_inner()) = None;
    Ok(Frame::ok())
}

/// Logs the connection in as `user` if `pass` is one of its passwords and
/// the user is on; a failure is logged in `ACL LOG`.
fn check_auth(ctx: &mut Ctx<'_>, user: &[u8], pass: &[u8]) -> Result<(), CmdError> {
    let Some(found) = ctx.shared.acl.login(user, pass) else {
        super::acl::log_failed_auth(ctx, user);
        return Err(CmdError::msg(WRONGPASS));
    };
    ctx.conn.set_user(found);
    ctx.conn.authenticated = true;
    Ok(())
}

/// `AUTH [username] password`
pub(crate) fn auth(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (user, pass) = match args {
        [_, pass] => (&b"default"[..], pass),
        [_, user, pass] => (&user[..], pass),
        _ => return Err(CmdError::syntax()),
    };
    if args.len() == 2 && ctx.shared.acl.default_user().rules().nopass {
        return Err(CmdError::msg(AUTH_NOT_SET));
    }
    check_auth(ctx, user, pass)?;
    Ok(Frame::ok())
}

/// The positions of `HELLO`'s credentials, read as [`hello`] reads its
/// options (up to the first it cannot read).
pub(crate) fn hello_secrets(args: &[Bytes]) -> Vec<usize> {
    let mut secrets = Vec::new();
    let mut j = 2;
    while let Some(opt) = args.get(j) {
        let more = args.len() - 1 - j;
        if is(opt, "auth") && more >= 2 {
            secrets.extend([j + 1, j + 2]);
            j += 3;
        } else if is(opt, "setname") && more >= 1 {
            j += 2;
        } else {
            break;
        }
    }
    secrets
}

/// `HELLO [protover [AUTH username password] [SETNAME clientname]]`
pub(crate) fn hello(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut protocol = ctx.conn.protocol;
    if let Some(v) = args.get(1) {
        protocol = match parse_i64(v) {
            Some(2) => Protocol::Resp2,
            Some(3) => Protocol::Resp3,
            Some(_) => return Err(CmdError::msg(NOPROTO)),
            None => return Err(CmdError::msg(PROTOCOL_NOT_INTEGER)),
        };
    }
    // As Redis's helloCommand: every option is read first (one short of
    // its values is a syntax error naming it), then AUTH, then the
    // authentication check, then the name.
    let (mut auth, mut name) = (None, None);
    let mut rest = Args::at(args, 2);
    while let Some(opt) = rest.next() {
        if is(opt, "auth") && rest.remaining() >= 2 {
            let [user, pass] = rest.take_array()?;
            auth = Some((user, pass));
        } else if is(opt, "setname") && !rest.is_empty() {
            name = Some(rest.expect()?);
        } else {
            return Err(CmdError::msg(hello_option(opt)));
        }
    }
    if let Some((user, pass)) = auth {
        check_auth(ctx, user, pass)?;
    }
    if !ctx.conn.authenticated && ctx.shared.requires_auth() {
        return Err(CmdError::msg(HELLO_NOAUTH));
    }
    if let Some(n) = name {
        validate_name(n)?;
        *ctx.conn
            .handle
            .name
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(n.clone());
    }
    ctx.conn.protocol = protocol;
    let resp = if protocol == Protocol::Resp3 { 3 } else { 2 };
    ctx.conn.handle.resp.store(resp, Ordering::Relaxed);
    let field = |k: &'static str, v: Frame| (Frame::simple(k), v);
    Ok(Frame::Map(vec![
        field("server", Frame::bulk("redis")),
        field("version", Frame::bulk(crate::REDIS_VERSION)),
        field("proto", Frame::Integer(resp as i64)),
        field("id", Frame::Integer(ctx.conn.handle.id as i64)),
        field("mode", Frame::bulk("standalone")),
        field("role", Frame::bulk("master")),
        field("modules", Frame::Array(Vec::new())),
    ]))
}

pub(crate) fn select(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    // Cluster mode has database 0 only; Redis says so before it checks
    // the range.
    let other_than_0 = super::parse::parse_i64(&args[1]).is_some_and(|db| db != 0);
    if ctx.shared.cluster.is_some() && other_than_0 {
        return Err(CmdError::msg(super::error::cluster::SELECT));
    }
    let db = db_arg(&args[1], ctx.store().databases())?;
    ctx.conn.db = db;
    ctx.conn.handle.db.store(db, Ordering::Relaxed);
    Ok(Frame::ok())
}

fn validate_name(name: &[u8]) -> Result<(), CmdError> {
    if name.iter().any(|&c| !(b'!'..=b'~').contains(&c)) {
        return Err(CmdError::msg(CLIENT_NAME_CHARS));
    }
    Ok(())
}

/// `CLIENT ID | SETNAME | GETNAME | LIST | INFO | KILL | HELP`
pub(crate) fn client(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let sub = &args[1];
    let handle = ctx.conn.handle.clone();
    let arity = |n: usize| {
        if args.len() == n {
            Ok(())
        } else {
            Err(CmdError::subcommand_arity("client", sub))
        }
    };
    if is(sub, "id") {
        arity(2)?;
        Ok(Frame::Integer(handle.id as i64))
    } else if is(sub, "setname") {
        arity(3)?;
        validate_name(&args[2])?;
        let name = (!args[2].is_empty()).then(|| args[2].clone());
        *handle.name.lock().unwrap_or_else(|p| p.into_inner()) = name;
        Ok(Frame::ok())
    } else if is(sub, "getname") {
        arity(2)?;
        let name = handle
            .name
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        Ok(Frame::bulk_or_null(name))
    } else if is(sub, "info") {
        arity(2)?;
        Ok(verbatim(format!("{}\n", handle.info_line())))
    } else if is(sub, "list") {
        let ids = client_list_filter(&args[2..])?;
        let mut out = String::new();
        for c in ctx.shared.clients.all() {
            if ids.as_ref().is_none_or(|ids| ids.contains(&c.id)) {
                out.push_str(&c.info_line());
                out.push('\n');
            }
        }
        Ok(verbatim(out))
    } else if is(sub, "setinfo") {
        arity(4)?;
        let slot = if is(&args[2], "lib-name") {
            &handle.lib_name
        } else if is(&args[2], "lib-ver") {
            &handle.lib_ver
        } else {
            return Err(CmdError::msg(unrecognized_option(&args[2])));
        };
        if args[3].iter().any(|&c| !(b'!'..=b'~').contains(&c)) {
            return Err(CmdError::msg(setinfo_chars(&args[2])));
        }
        *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(args[3].clone());
        Ok(Frame::ok())
    } else if is(sub, "reply") {
        arity(3)?;
        if is(&args[2], "on") {
            ctx.conn.reply_off = false;
            ctx.conn.reply_skip = 0;
        } else if is(&args[2], "off") {
            ctx.conn.reply_off = true;
        } else if is(&args[2], "skip") {
            // This reply and the next command's.
            ctx.conn.reply_skip = 2;
        } else {
            return Err(CmdError::syntax());
        }
        Ok(Frame::ok())
    } else if is(sub, "no-evict") {
        arity(3)?;
        let on = if is(&args[2], "on") {
            true
        } else if is(&args[2], "off") {
            false
        } else {
            return Err(CmdError::syntax());
        };
        ctx.conn.handle.no_evict.store(on, Ordering::Relaxed);
        if !on {
            // A client over the limit is evicted once it may be, as Redis
            // evicts it when the flag goes.
            ctx.shared
                .evict_clients
                .enforce(&ctx.shared.store, &ctx.shared.clients);
        }
        Ok(Frame::ok())
    } else if is(sub, "tracking") {
        if args.len() < 3 {
            return Err(CmdError::subcommand_arity("client", "tracking"));
        }
        client_tracking(ctx, &args[2..])
    } else if is(sub, "caching") {
        arity(3)?;
        client_caching(ctx, &args[2])
    } else if is(sub, "getredir") {
        arity(2)?;
        let redirect = ctx
            .shared
            .tracking
            .mode(handle.id)
            .map_or(-1, |m| m.redirect as i64);
        Ok(Frame::Integer(redirect))
    } else if is(sub, "trackinginfo") {
        arity(2)?;
        Ok(tracking_info(ctx))
    } else if is(sub, "pause") {
        if !(3..=4).contains(&args.len()) {
            return Err(CmdError::subcommand_arity("client", "pause"));
        }
        let ms = super::parse::timeout_ms(&args[2])?;
        let all = match args.get(3) {
            None => true,
            Some(m) if is(m, "all") => true,
            Some(m) if is(m, "write") => false,
            Some(_) => return Err(CmdError::msg(PAUSE_MODE)),
        };
        let until = tokio::time::Instant::now() + std::time::Duration::from_millis(ms);
        ctx.shared.pause.pause(until, all);
        ctx.shared.hold_expiry();
        Ok(Frame::ok())
    } else if is(sub, "unpause") {
        arity(2)?;
        ctx.shared.pause.unpause();
        ctx.shared.hold_expiry();
        Ok(Frame::ok())
    } else if is(sub, "kill") {
        client_kill(ctx, &args[2..])
    } else if is(sub, "unblock") {
        client_unblock(ctx, &args[2..])
    } else if is(sub, "help") {
        super::help_reply(&[
                "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "GETNAME", "    Return the name of the current connection.",
                "ID", "    Return the ID of the current connection.",
                "INFO", "    Return information about the current client connection.",
                "KILL <ip:port>", "    Kill connection made from <ip:port>.",
                "KILL <option> <value> [<option> <value> [...]]",
                "    Kill connections. Options are: ID <client-id>, ADDR <ip:port>, LADDR <ip:port>, SKIPME (YES|NO), USER <username>, MAXAGE <seconds>.",
                "LIST [ID <client-id> [<client-id> ...]]", "    Return information about client connections.",
                "NO-EVICT (ON|OFF)", "    Protect current client connection from eviction.",
                "REPLY (ON|OFF|SKIP)", "    Control the replies sent to the current connection.",
                "SETNAME <name>", "    Assign the name <name> to the current connection.",
                "SETINFO <option> <value>", "    Set client meta attr. Options are: LIB-NAME, LIB-VER.",
                "UNBLOCK <clientid> [TIMEOUT|ERROR]", "    Unblock the specified blocked client.",
                "HELP", "    Print this help.",
])
    } else {
        Err(CmdError::unknown_subcommand("CLIENT", sub))
    }
}

fn verbatim(text: String) -> Frame {
    Frame::Verbatim {
        format: *b"txt",
        text: Bytes::from(text),
    }
}

fn client_list_filter(args: &[Bytes]) -> Result<Option<Vec<u64>>, CmdError> {
    match args {
        [] => Ok(None),
        [kw, ids @ ..] if is(kw, "id") && !ids.is_empty() => ids
            .iter()
            .map(|i| {
                parse_i64(i)
                    .filter(|&n| n > 0)
                    .map(|n| n as u64)
                    .ok_or_else(|| CmdError::msg(INVALID_CLIENT_ID))
            })
            .collect::<Result<_, _>>()
            .map(Some),
        [kw, ..] if is(kw, "type") => Ok(None),
        _ => Err(CmdError::syntax()),
    }
}

/// One `CLIENT KILL` filter: whether a client matches it.
type ClientFilter = Box<dyn Fn(&crate::client::ClientHandle) -> bool>;

/// `CLIENT KILL ip:port` (old form, replies OK) or
/// `CLIENT KILL <filter> <value> ...` (replies with the number killed).
fn client_kill(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.is_empty() {
        return Err(CmdError::subcommand_arity("client", "kill"));
    }
    let me = ctx.conn.handle.id;
    let clients = ctx.shared.clients.all();
    if let [addr] = args {
        let target = clients
            .iter()
            .find(|c| c.addr.to_string().as_bytes() == &addr[..]);
        return match target {
            Some(c) => {
                c.kill.raise(crate::client::End::Killed);
                if c.id == me {
                    ctx.conn.closing = true;
                }
                Ok(Frame::ok())
            }
            None => Err(CmdError::msg(NO_SUCH_CLIENT)),
        };
    }
    if args.is_empty() || args.len() % 2 != 0 {
        return Err(CmdError::syntax());
    }
    let mut skipme = true;
    let mut filters: Vec<ClientFilter> = Vec::new();
    for pair in args.chunks_exact(2) {
        let (k, v) = (&pair[0], pair[1].clone());
        if is(k, "id") {
            let id = parse_i64(&v)
                .filter(|&n| n > 0)
                .ok_or_else(|| CmdError::msg(CLIENT_ID_POSITIVE))?;
            filters.push(Box::new(move |c| c.id == id as u64));
        } else if is(k, "addr") {
            filters.push(Box::new(move |c| c.addr.to_string().as_bytes() == &v[..]));
        } else if is(k, "laddr") {
            filters.push(Box::new(move |c| c.laddr.to_string().as_bytes() == &v[..]));
        } else if is(k, "user") {
            let Some(user) = ctx.shared.acl.get(&v) else {
                return Err(CmdError::msg(kill_no_such_user(&v)));
            };
            filters.push(Box::new(move |c| std::sync::Arc::ptr_eq(&c.user(), &user)));
        } else if is(k, "maxage") {
            let age = int_arg(&v)?;
            filters.push(Box::new(move |c| {
                c.created.elapsed().as_secs() as i64 >= age
            }));
        } else if is(k, "skipme") {
            skipme = if is(&v, "yes") {
                true
            } else if is(&v, "no") {
                false
            } else {
                return Err(CmdError::syntax());
            };
        } else if is(k, "type") {
            if !(is(&v, "normal")
                || is(&v, "pubsub")
                || is(&v, "master")
                || is(&v, "replica")
                || is(&v, "slave"))
            {
                return Err(CmdError::msg(unknown_client_type(&v)));
            }
            let (normal, pubsub) = (is(&v, "normal"), is(&v, "pubsub"));
            filters.push(Box::new(move |c| {
                let subscribed = [&c.subs, &c.psubs, &c.ssubs]
                    .iter()
                    .any(|n| n.load(Ordering::Relaxed) > 0);
                (normal && !subscribed) || (pubsub && subscribed)
            }));
        } else {
            return Err(CmdError::syntax());
        }
    }
    let mut killed = 0;
    for c in clients {
        if (skipme && c.id == me) || !filters.iter().all(|f| f(&c)) {
            continue;
        }
        c.kill.raise(crate::client::End::Killed);
        if c.id == me {
            ctx.conn.closing = true;
        }
        killed += 1;
    }
    Ok(Frame::Integer(killed))
}

/// `CLIENT UNBLOCK id [TIMEOUT|ERROR]`: 1 if the client was blocked.
fn client_unblock(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (id, error) = match args {
        [id] => (id, false),
        [id, how] if is(how, "timeout") => (id, false),
        [id, how] if is(how, "error") => (id, true),
        [_, _] => return Err(CmdError::msg(UNBLOCK_REASON)),
        _ => return Err(CmdError::syntax()),
    };
    let id = int_arg(id)?;
    let unblocked = u64::try_from(id).is_ok_and(|id| ctx.shared.blocking.unblock(id, error));
    Ok(Frame::Integer(i64::from(unblocked)))
}

/// `CLIENT TRACKING on|off [REDIRECT id] [PREFIX p]... [BCAST] [OPTIN]
/// [OPTOUT] [NOLOOP]`.
fn client_tracking(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut mode = crate::tracking::Mode::default();
    let mut opts = Args::at(args, 1);
    while let Some(a) = opts.next() {
        let more = !opts.is_empty();
        if is(a, "redirect") && more {
            if mode.redirect != 0 {
                return Err(CmdError::msg(TRACKING_ONE_REDIRECT));
            }
            let id = opts.int()?;
            let found = u64::try_from(id)
                .ok()
                .and_then(|id| ctx.shared.clients.get(id));
            match found {
                Some(c) => mode.redirect = c.id,
                None => return Err(CmdError::msg(TRACKING_NO_REDIRECT_TARGET)),
            }
        } else if is(a, "bcast") {
            mode.bcast = true;
        } else if is(a, "optin") {
            mode.optin = true;
        } else if is(a, "optout") {
            mode.optout = true;
        } else if is(a, "noloop") {
            mode.noloop = true;
        } else if is(a, "prefix") && more {
            mode.prefixes.push(opts.expect()?.clone());
        } else {
            return Err(CmdError::syntax());
        }
    }
    let id = ctx.conn.handle.id;
    if is(&args[0], "on") {
        ctx.shared
            .tracking
            .enable(id, mode)
            .map_err(CmdError::msg)?;
        ctx.conn.tracking = true;
        let prefixes = ctx.shared.tracking.mode(id).map(|m| m.prefixes);
        ctx.conn
            .track_prefixes(prefixes.as_deref().unwrap_or_default());
    } else if is(&args[0], "off") {
        ctx.shared.tracking.disable(id);
        ctx.conn.tracking = false;
    } else {
        return Err(CmdError::syntax());
    }
    Ok(Frame::ok())
}

/// `CLIENT CACHING yes|no`: OPTIN / OPTOUT for the next command.
fn client_caching(ctx: &mut Ctx<'_>, arg: &Bytes) -> CmdResult {
    let Some(mode) = ctx.shared.tracking.mode(ctx.conn.handle.id) else {
        return Err(CmdError::msg(CACHING_NOT_TRACKING));
    };
    if is(arg, "yes") {
        if !mode.optin {
            return Err(CmdError::msg(CACHING_YES_NOT_OPTIN));
        }
    } else if is(arg, "no") {
        if !mode.optout {
            return Err(CmdError::msg(CACHING_NO_NOT_OPTOUT));
        }
    } else {
        return Err(CmdError::syntax());
    }
    ctx.shared.tracking.set_caching(ctx.conn.handle.id);
    Ok(Frame::ok())
}

/// `CLIENT TRACKINGINFO`: flags, redirect and prefixes, as Redis shows them.
fn tracking_info(ctx: &Ctx<'_>) -> Frame {
    let mode = ctx.shared.tracking.mode(ctx.conn.handle.id);
    let mut flags = vec![Frame::bulk(if mode.is_some() { "on" } else { "off" })];
    if let Some(m) = &mode {
        let mut add = |on: bool, name: &'static str| {
            if on {
                flags.push(Frame::bulk(name));
            }
        };
        add(m.bcast, "bcast");
        add(m.optin, "optin");
        add(m.optin && m.caching, "caching-yes");
        add(m.optout, "optout");
        add(m.optout && m.caching, "caching-no");
        add(m.noloop, "noloop");
        add(m.broken, "broken_redirect");
    }
    let redirect = mode.as_ref().map_or(-1, |m| m.redirect as i64);
    let prefixes = mode
        .map(|m| m.prefixes.into_iter().map(Frame::Bulk).collect())
        .unwrap_or_default();
    Frame::Map(vec![
        (Frame::bulk("flags"), Frame::Set(flags)),
        (Frame::bulk("redirect"), Frame::Integer(redirect)),
        (Frame::bulk("prefixes"), Frame::Array(prefixes)),
    ])
}

/// `MONITOR`: this connection receives every command from now on.
pub(crate) fn monitor(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    // Queued in MULTI and run by EXEC, it is refused as in Redis.
    if !ctx.may_block {
        return Err(CmdError::msg(MONITOR_DENY_BLOCKING));
    }
    let handle = ctx.conn.handle.clone();
    let inbox = ctx.conn.subs.subscriber(&handle);
    ctx.shared.monitors.add(handle.id, &inbox);
    Ok(Frame::ok())
}

/// `RESET`: back to a fresh connection's state, subscriptions included.
pub(crate) fn reset(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    super::pubsub::leave_all(ctx);
    ctx.shared.tracking.disable(ctx.conn.handle.id);
    ctx.shared.monitors.remove(ctx.conn.handle.id);
    ctx.conn.tracking = false;
    ctx.conn.db = 0;
    ctx.conn.handle.db.store(0, Ordering::Relaxed);
    ctx.conn.multi = None;
    ctx.conn.multi_failed = false;
    ctx.conn.watched.clear();
    ctx.conn.protocol = Protocol::Resp2;
    ctx.conn.handle.resp.store(2, Ordering::Relaxed);
    ctx.conn.handle.no_evict.store(false, Ordering::Relaxed);
    ctx.conn.set_user(ctx.shared.acl.default_user());
    ctx.conn.authenticated = !ctx.shared.requires_auth();
    *ctx.conn
        .handle
        .name
        .lock()
        .unwrap_or_else(|p| p.into_inner()) = None;
    Ok(Frame::simple("RESET"))
}
