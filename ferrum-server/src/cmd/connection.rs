//! Connection commands: PING, ECHO, QUIT, HELLO, AUTH, SELECT, CLIENT, RESET.

use std::sync::atomic::Ordering;

use bytes::Bytes;
use ferrum_proto::{Frame, Protocol};

use super::error::{AUTH_NOT_SET, DB_RANGE, WRONGPASS};
use super::parse::{int_arg, is, parse_i64};
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
    Ok(Frame::ok())
}

/// Checks a password against `requirepass`. Only the `default` user exists.
fn check_auth(ctx: &mut Ctx<'_>, user: &[u8], pass: &[u8]) -> Result<(), CmdError> {
    let config = ctx.shared.config();
    let ok = user == b"default"
        && match config.requirepass.as_deref() {
            Some(p) => p.as_bytes() == pass,
            None => true,
        };
    drop(config);
    if ok {
        ctx.conn.authenticated = true;
        Ok(())
    } else {
        Err(CmdError::msg(WRONGPASS))
    }
}

/// `AUTH [username] password`
pub(crate) fn auth(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (user, pass) = match args {
        [_, pass] => (&b"default"[..], pass),
        [_, user, pass] => (&user[..], pass),
        _ => return Err(CmdError::syntax()),
    };
    if args.len() == 2 && !ctx.shared.requires_auth() {
        return Err(CmdError::msg(AUTH_NOT_SET));
    }
    check_auth(ctx, user, pass)?;
    Ok(Frame::ok())
}

/// `HELLO [protover [AUTH username password] [SETNAME clientname]]`
pub(crate) fn hello(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut protocol = ctx.conn.protocol;
    if let Some(v) = args.get(1) {
        protocol = match parse_i64(v) {
            Some(2) => Protocol::Resp2,
            Some(3) => Protocol::Resp3,
            Some(_) => return Err(CmdError::msg("NOPROTO unsupported protocol version")),
            None => {
                return Err(CmdError::msg(
                    "ERR Protocol version is not an integer or out of range",
                ))
            }
        };
    }
    let mut name = None;
    let mut rest = args.iter().skip(2);
    while let Some(opt) = rest.next() {
        if is(opt, "auth") {
            let (Some(user), Some(pass)) = (rest.next(), rest.next()) else {
                return Err(CmdError::syntax());
            };
            check_auth(ctx, user, pass)?;
        } else if is(opt, "setname") {
            let n = rest.next().ok_or_else(CmdError::syntax)?;
            validate_name(n)?;
            name = Some(n.clone());
        } else {
            return Err(CmdError::msg(format!(
                "ERR Syntax error in HELLO option '{}'",
                String::from_utf8_lossy(opt)
            )));
        }
    }
    if !ctx.conn.authenticated && ctx.shared.requires_auth() {
        return Err(CmdError::msg(
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time",
        ));
    }
    if let Some(n) = name {
        *ctx.conn
            .handle
            .name
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(n);
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
    let n = int_arg(&args[1])?;
    let db = usize::try_from(n)
        .ok()
        .filter(|&d| d < ctx.store().databases())
        .ok_or_else(|| CmdError::msg(DB_RANGE))?;
    ctx.conn.db = db;
    ctx.conn.handle.db.store(db, Ordering::Relaxed);
    Ok(Frame::ok())
}

fn validate_name(name: &[u8]) -> Result<(), CmdError> {
    if name.iter().any(|&c| !(b'!'..=b'~').contains(&c)) {
        return Err(CmdError::msg(
            "ERR Client names cannot contain spaces, newlines or special characters.",
        ));
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
            Err(CmdError::msg(format!(
                "ERR wrong number of arguments for 'client|{}' command",
                String::from_utf8_lossy(sub).to_ascii_lowercase()
            )))
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
            return Err(CmdError::msg(format!(
                "ERR Unrecognized option '{}'",
                String::from_utf8_lossy(&args[2])
            )));
        };
        if args[3].iter().any(|&c| !(b'!'..=b'~').contains(&c)) {
            return Err(CmdError::msg(format!(
                "ERR {} cannot contain spaces, newlines or special characters.",
                String::from_utf8_lossy(&args[2]).to_ascii_lowercase()
            )));
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
        // FerrumKV never evicts clients (no maxmemory-clients), so every
        // client is already what NO-EVICT asks for.
        arity(3)?;
        if !(is(&args[2], "on") || is(&args[2], "off")) {
            return Err(CmdError::syntax());
        }
        Ok(Frame::ok())
    } else if is(sub, "kill") {
        client_kill(ctx, &args[2..])
    } else if is(sub, "unblock") {
        client_unblock(ctx, &args[2..])
    } else if is(sub, "help") {
        Ok(Frame::Array(
            [
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
            ]
            .map(Frame::simple)
            .to_vec(),
        ))
    } else {
        Err(CmdError::UnknownSubcommand {
            cmd: "CLIENT",
            sub: String::from_utf8_lossy(sub).into_owned(),
        })
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
                    .ok_or_else(|| CmdError::msg("ERR Invalid client ID"))
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
    let me = ctx.conn.handle.id;
    let clients = ctx.shared.clients.all();
    if let [addr] = args {
        let target = clients
            .iter()
            .find(|c| c.addr.to_string().as_bytes() == &addr[..]);
        return match target {
            Some(c) => {
                c.kill.notify_one();
                if c.id == me {
                    ctx.conn.closing = true;
                }
                Ok(Frame::ok())
            }
            None => Err(CmdError::msg("ERR No such client")),
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
                .ok_or_else(|| CmdError::msg("ERR client-id should be greater than 0"))?;
            filters.push(Box::new(move |c| c.id == id as u64));
        } else if is(k, "addr") {
            filters.push(Box::new(move |c| c.addr.to_string().as_bytes() == &v[..]));
        } else if is(k, "laddr") {
            filters.push(Box::new(move |c| c.laddr.to_string().as_bytes() == &v[..]));
        } else if is(k, "user") {
            filters.push(Box::new(move |_| &v[..] == b"default"));
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
                return Err(CmdError::msg(format!(
                    "ERR Unknown client type '{}'",
                    String::from_utf8_lossy(&v)
                )));
            }
            let (normal, pubsub) = (is(&v, "normal"), is(&v, "pubsub"));
            filters.push(Box::new(move |c| {
                let subscribed =
                    c.subs.load(Ordering::Relaxed) + c.psubs.load(Ordering::Relaxed) > 0;
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
        c.kill.notify_one();
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
        [_, _] => {
            return Err(CmdError::msg(
                "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR",
            ))
        }
        _ => return Err(CmdError::syntax()),
    };
    let id = int_arg(id)?;
    let unblocked = u64::try_from(id).is_ok_and(|id| ctx.shared.blocking.unblock(id, error));
    Ok(Frame::Integer(i64::from(unblocked)))
}

/// `RESET`: back to a fresh connection's state, subscriptions included.
pub(crate) fn reset(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    super::pubsub::leave_all(ctx);
    ctx.conn.db = 0;
    ctx.conn.handle.db.store(0, Ordering::Relaxed);
    ctx.conn.multi = None;
    ctx.conn.multi_failed = false;
    ctx.conn.watched.clear();
    ctx.conn.protocol = Protocol::Resp2;
    ctx.conn.handle.resp.store(2, Ordering::Relaxed);
    ctx.conn.authenticated = !ctx.shared.requires_auth();
    *ctx.conn
        .handle
        .name
        .lock()
        .unwrap_or_else(|p| p.into_inner()) = None;
    Ok(Frame::simple("RESET"))
}
