//! What a command sends down the replication stream: the commands that
//! replay its effect exactly, whenever and wherever they run, as Redis
//! 7.0 rewrites them (`rewriteClientCommandVector` and `alsoPropagate`).
//!
//! Most writes go as they came. The exceptions are the commands whose
//! replay would differ: relative TTLs (made absolute), blocking and
//! multi-key pops (sent as the pop that happened), floating-point
//! increments (sent as the value), `SPOP` (the members it took), `XADD *`
//! and `XREADGROUP` (the IDs chosen), `MIGRATE` (the keys it deleted
//! here), and commands with a random or time-dependent result. A write
//! that changed nothing sends nothing. Scripts and `EXEC` are not writes
//! themselves: the calls they make come through here one by one.

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::types::End;
use ferrum_store::{Access, Millis};

use super::{BlockOp, Ctx};
use crate::command::CommandSpec;
use crate::parse::is;

/// The commands that replay `args`, which ran as `spec` and replied
/// `reply`, in the caller's database; none when it changed nothing (or
/// must not be replayed).
pub(crate) fn effects(
    ctx: &Ctx<'_>,
    spec: &CommandSpec,
    args: &[Bytes],
    reply: &Frame,
) -> Vec<Vec<Bytes>> {
    if matches!(reply, Frame::Error(_)) || !changed(ctx, spec, args, reply) {
        return Vec::new();
    }
    let one = |v: Vec<Bytes>| vec![v];
    let word = |w: &'static str| Bytes::from_static(w.as_bytes());
    match spec.name {
        "set" => one(set(ctx, args)),
        "setex" | "psetex" => match deadline(ctx, &args[1]) {
            Some(Some(at)) => one(vec![
                word("SET"),
                args[1].clone(),
                args[3].clone(),
                word("PXAT"),
                number(at.0),
            ]),
            _ => one(vec![word("DEL"), args[1].clone()]),
        },
        "expire" | "pexpire" | "expireat" | "pexpireat" => match deadline(ctx, &args[1]) {
            Some(Some(at)) => {
                let mut v = vec![word("PEXPIREAT"), args[1].clone(), number(at.0)];
                v.extend_from_slice(&args[3..]);
                one(v)
            }
            // Set in the past: the key is gone.
            _ => one(vec![word("DEL"), args[1].clone()]),
        },
        "getex" => getex(ctx, args),
        "getdel" => one(vec![word("DEL"), args[1].clone()]),
        "restore" | "restore-asking" => one(restore(ctx, args)),
        "incrbyfloat" => one(vec![
            word("SET"),
            args[1].clone(),
            bulk_of(reply),
            word("KEEPTTL"),
        ]),
        "hincrbyfloat" => one(vec![
            word("HSET"),
            args[1].clone(),
            args[2].clone(),
            bulk_of(reply),
        ]),
        "spop" => {
            let members = members_of(reply);
            let mut v = vec![word("SREM"), args[1].clone()];
            v.extend(members);
            one(v)
        }
        "xadd" => xadd(args, reply).map_or_else(Vec::new, one),
        "xreadgroup" => xreadgroup(ctx, args, reply),
        "migrate" => migrated(args),
        "blpop" => pop(&args[1..args.len() - 1], &BlockOp::Pop(End::Left), reply),
        "brpop" => pop(&args[1..args.len() - 1], &BlockOp::Pop(End::Right), reply),
        "bzpopmin" | "bzpopmax" => {
            let op = BlockOp::ZPop {
                max: spec.name == "bzpopmax",
            };
            pop(&args[1..args.len() - 1], &op, reply)
        }
        "lmpop" | "blmpop" | "zmpop" | "bzmpop" => {
            let at = if spec.name.starts_with('b') { 2 } else { 1 };
            let second = args
                .iter()
                .skip(at + 1)
                .any(|a| is(a, "right") || is(a, "max"));
            let op = if spec.name.ends_with("lmpop") {
                let end = if second { End::Right } else { End::Left };
                BlockOp::LMPop { end, count: 0 }
            } else {
                BlockOp::ZMPop {
                    max: second,
                    count: 0,
                }
            };
            pop(&[], &op, reply)
        }
        "blmove" => one(vec![
            word("LMOVE"),
            args[1].clone(),
            args[2].clone(),
            args[3].clone(),
            args[4].clone(),
        ]),
        "brpoplpush" => one(vec![word("RPOPLPUSH"), args[1].clone(), args[2].clone()]),
        _ => one(args.to_vec()),
    }
}

/// What a blocking pop served to a client that waited on `keys` sends:
/// the plain pop of what it took. `pop(keys, op, reply)` for a call that
/// ran at once, with `keys` its key arguments (for `BLMOVE`, the source).
pub(crate) fn pop(keys: &[Bytes], op: &BlockOp, reply: &Frame) -> Vec<Vec<Bytes>> {
    let word = |w: &'static str| Bytes::from_static(w.as_bytes());
    let side = |end: &End, left: &'static str, right: &'static str| match end {
        End::Left => word(left),
        End::Right => word(right),
    };
    let items = items(reply);
    match op {
        BlockOp::Pop(end) => match items.first() {
            Some(key) => vec![vec![side(end, "LPOP", "RPOP"), key.clone()]],
            None => Vec::new(),
        },
        BlockOp::ZPop { max } => match items.first() {
            Some(key) => vec![vec![zpop(*max), key.clone()]],
            None => Vec::new(),
        },
        BlockOp::LMPop { end, .. } => match (items.first(), nested_len(reply)) {
            (Some(key), Some(n)) if n > 0 => {
                vec![vec![
                    side(end, "LPOP", "RPOP"),
                    key.clone(),
                    number(n as u64),
                ]]
            }
            _ => Vec::new(),
        },
        BlockOp::ZMPop { max, .. } => match (items.first(), nested_len(reply)) {
            (Some(key), Some(n)) if n > 0 => vec![vec![zpop(*max), key.clone(), number(n as u64)]],
            _ => Vec::new(),
        },
        BlockOp::Move { dst, from, to } => match (keys.first(), reply) {
            (Some(src), Frame::Bulk(_)) => vec![vec![
                word("LMOVE"),
                src.clone(),
                dst.clone(),
                side(from, "LEFT", "RIGHT"),
                side(to, "LEFT", "RIGHT"),
            ]],
            _ => Vec::new(),
        },
        // XREAD changes nothing; a served XREADGROUP is not sent yet.
        _ => Vec::new(),
    }
}

fn zpop(max: bool) -> Bytes {
    Bytes::from_static(if max { b"ZPOPMAX" } else { b"ZPOPMIN" })
}

/// Whether a write that replied `reply` changed anything. Commands whose
/// zero, nil or empty reply means "nothing done" say so; any other reply
/// counts as a change (replaying a write that changed nothing is harmless,
/// missing one is not).
fn changed(ctx: &Ctx<'_>, spec: &CommandSpec, args: &[Bytes], reply: &Frame) -> bool {
    match spec.name {
        // Redis always propagates these.
        "flushall" | "flushdb" | "publish" | "spublish" => return true,
        "set" => return set_happened(args, reply),
        _ => {}
    }
    if let Some(n) = ctx.dirty {
        return n > 0;
    }
    const NOTHING_WHEN_EMPTY: &[&str] = &[
        "del",
        "unlink",
        "expire",
        "pexpire",
        "expireat",
        "pexpireat",
        "persist",
        "setnx",
        "msetnx",
        "renamenx",
        "move",
        "copy",
        "hdel",
        "hsetnx",
        "sadd",
        "srem",
        "smove",
        "zrem",
        "zremrangebyscore",
        "zremrangebyrank",
        "zremrangebylex",
        "lrem",
        "linsert",
        "lpushx",
        "rpushx",
        "pfadd",
        "xdel",
        "xack",
        "xtrim",
        "getdel",
        "getex",
        "lpop",
        "rpop",
        "spop",
        "zpopmin",
        "zpopmax",
        "lmpop",
        "zmpop",
        "blpop",
        "brpop",
        "blmpop",
        "bzpopmin",
        "bzpopmax",
        "bzmpop",
        "lmove",
        "rpoplpush",
        "blmove",
        "brpoplpush",
        "xreadgroup",
        "xclaim",
        "xadd",
    ];
    if !NOTHING_WHEN_EMPTY.contains(&spec.name) {
        return true;
    }
    match reply {
        Frame::Null | Frame::NullArray => false,
        Frame::Integer(n) => *n > 0,
        Frame::Array(a) | Frame::Set(a) | Frame::Push(a) => !a.is_empty(),
        Frame::Map(m) => !m.is_empty(),
        Frame::Bulks(b) => !b.is_empty(),
        _ => true,
    }
}

/// Whether `SET` stored its value: `NX`/`XX` may abort it, and with `GET`
/// the reply is the old value, not `OK`.
fn set_happened(args: &[Bytes], reply: &Frame) -> bool {
    let has = |w: &str| args[3..].iter().any(|a| is(a, w));
    let get = has("get");
    let ok = matches!(reply, Frame::Simple(_));
    if has("nx") {
        if get {
            matches!(reply, Frame::Null)
        } else {
            ok
        }
    } else if has("xx") {
        if get {
            !matches!(reply, Frame::Null)
        } else {
            ok
        }
    } else {
        true
    }
}

/// `SET`: with a TTL option, `SET key value PXAT deadline`; with `GET`,
/// the command without it.
fn set(ctx: &Ctx<'_>, args: &[Bytes]) -> Vec<Bytes> {
    const TTL: [&str; 4] = ["ex", "px", "exat", "pxat"];
    if args[3..].iter().any(|a| TTL.iter().any(|w| is(a, w))) {
        return match deadline(ctx, &args[1]) {
            Some(Some(at)) => vec![
                Bytes::from_static(b"SET"),
                args[1].clone(),
                args[2].clone(),
                Bytes::from_static(b"PXAT"),
                number(at.0),
            ],
            // Stored already expired: gone.
            _ => vec![Bytes::from_static(b"DEL"), args[1].clone()],
        };
    }
    let mut v: Vec<Bytes> = args[..3].to_vec();
    v.extend(args[3..].iter().filter(|a| !is(a, "get")).cloned());
    v
}

/// `GETEX`: `PERSIST`, `PEXPIREAT` with the deadline, `DEL` when the
/// deadline had passed, nothing without an option.
fn getex(ctx: &Ctx<'_>, args: &[Bytes]) -> Vec<Vec<Bytes>> {
    let key = &args[1];
    let Some(option) = args.get(2) else {
        return Vec::new();
    };
    let word = |w: &'static str| Bytes::from_static(w.as_bytes());
    if is(option, "persist") {
        return vec![vec![word("PERSIST"), key.clone()]];
    }
    match deadline(ctx, key) {
        Some(Some(at)) => vec![vec![word("PEXPIREAT"), key.clone(), number(at.0)]],
        Some(None) => Vec::new(),
        None => vec![vec![word("DEL"), key.clone()]],
    }
}

/// `RESTORE key ttl payload ...`: a relative TTL becomes absolute.
fn restore(ctx: &Ctx<'_>, args: &[Bytes]) -> Vec<Bytes> {
    let absolute = args[4..].iter().any(|a| is(a, "absttl"));
    if absolute || args[2].as_ref() == b"0" {
        return args.to_vec();
    }
    match deadline(ctx, &args[1]) {
        Some(Some(at)) => {
            let mut v = args.to_vec();
            v[2] = number(at.0);
            v.push(Bytes::from_static(b"ABSTTL"));
            v
        }
        _ => vec![Bytes::from_static(b"DEL"), args[1].clone()],
    }
}

/// `XADD` with the ID it chose in place of `*` (or of a partial ID).
fn xadd(args: &[Bytes], reply: &Frame) -> Option<Vec<Bytes>> {
    let Frame::Bulk(id) = reply else {
        return None;
    };
    let mut i = 2;
    while let Some(a) = args.get(i) {
        if is(a, "nomkstream") {
            i += 1;
        } else if is(a, "maxlen") || is(a, "minid") {
            i += 1;
            if args
                .get(i)
                .is_some_and(|a| a.as_ref() == b"=" || a.as_ref() == b"~")
            {
                i += 1;
            }
            i += 1;
            if args.get(i).is_some_and(|a| is(a, "limit")) {
                i += 2;
            }
        } else {
            break;
        }
    }
    let mut v = args.to_vec();
    *v.get_mut(i)? = id.clone();
    Some(v)
}

/// `XREADGROUP ... STREAMS key... >`: each entry it delivered as the
/// `XCLAIM` that puts it in the consumer's pending list, as Redis sends
/// it (with `NOACK`, the group's new last ID instead). A read of the
/// consumer's own history goes as it came.
fn xreadgroup(ctx: &Ctx<'_>, args: &[Bytes], reply: &Frame) -> Vec<Vec<Bytes>> {
    let (group, consumer) = (&args[2], &args[3]);
    let Some(streams) = args.iter().position(|a| is(a, "streams")) else {
        return Vec::new();
    };
    let noack = args[4..streams].iter().any(|a| is(a, "noack"));
    let n = (args.len() - streams - 1) / 2;
    if args[streams + 1 + n..].iter().any(|id| id.as_ref() != b">") {
        return vec![args.to_vec()];
    }
    let word = |w: &'static str| Bytes::from_static(w.as_bytes());
    let now = number(ctx.now.0);
    let mut out = Vec::new();
    for (key, entries) in read_streams(reply) {
        let ids = entry_ids(&entries);
        let Some(last) = ids.last().cloned() else {
            continue;
        };
        if noack {
            out.push(vec![
                word("XGROUP"),
                word("SETID"),
                key,
                group.clone(),
                last,
            ]);
            continue;
        }
        for id in ids {
            out.push(vec![
                word("XCLAIM"),
                key.clone(),
                group.clone(),
                consumer.clone(),
                word("0"),
                id,
                word("TIME"),
                now.clone(),
                word("RETRYCOUNT"),
                word("1"),
                word("FORCE"),
                word("JUSTID"),
                word("LASTID"),
                last.clone(),
            ]);
        }
    }
    out
}

/// `(key, entries)` of an `XREAD`-style reply, RESP2 or RESP3.
fn read_streams(reply: &Frame) -> Vec<(Bytes, Frame)> {
    match reply {
        Frame::Array(streams) => streams
            .iter()
            .filter_map(|s| match s {
                Frame::Array(pair) if pair.len() == 2 => Some((bulk_of(&pair[0]), pair[1].clone())),
                _ => None,
            })
            .collect(),
        Frame::Map(m) => m.iter().map(|(k, v)| (bulk_of(k), v.clone())).collect(),
        _ => Vec::new(),
    }
}

fn entry_ids(entries: &Frame) -> Vec<Bytes> {
    match entries {
        Frame::Array(list) => list
            .iter()
            .filter_map(|e| match e {
                Frame::Array(pair) => pair.first().map(bulk_of),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// `MIGRATE` deleted the keys it moved (unless `COPY`): the replicas
/// delete them too, and never migrate anything themselves.
fn migrated(args: &[Bytes]) -> Vec<Vec<Bytes>> {
    if args[6..].iter().any(|a| is(a, "copy")) {
        return Vec::new();
    }
    let keys: Vec<Bytes> = match args[6..].iter().position(|a| is(a, "keys")) {
        Some(at) => args[6 + at + 1..].to_vec(),
        None => vec![args[3].clone()],
    };
    let mut v = vec![Bytes::from_static(b"DEL")];
    v.extend(keys.into_iter().filter(|k| !k.is_empty()));
    if v.len() == 1 {
        return Vec::new();
    }
    vec![v]
}

/// The key's deadline now: `None` when the key is gone, `Some(None)`
/// when it has no TTL.
fn deadline(ctx: &Ctx<'_>, key: &[u8]) -> Option<Option<Millis>> {
    let mut ks = ctx.store().lock_key(key);
    ks.shard(key)
        .lookup(ctx.db(), key, Millis(0), Access::Peek)
        .map(|e| e.expires_at())
}

fn number(n: u64) -> Bytes {
    Bytes::copy_from_slice(itoa::Buffer::new().format(n).as_bytes())
}

/// A bulk-like reply's bytes (an `INCRBYFLOAT` result, a key).
fn bulk_of(reply: &Frame) -> Bytes {
    match reply {
        Frame::Bulk(b) | Frame::Simple(b) | Frame::BigNumber(b) => b.clone(),
        Frame::Integer(n) => Bytes::from(n.to_string()),
        Frame::Double(d) => Bytes::from(d.to_string()),
        _ => Bytes::new(),
    }
}

/// The elements of an array-like reply, as bytes.
fn items(reply: &Frame) -> Vec<Bytes> {
    match reply {
        Frame::Array(a) | Frame::Set(a) | Frame::Push(a) => a.iter().map(bulk_of).collect(),
        Frame::Bulks(b) => b.iter().map(Bytes::copy_from_slice).collect(),
        _ => Vec::new(),
    }
}

/// The members `SPOP` returned (one, or an array of them).
fn members_of(reply: &Frame) -> Vec<Bytes> {
    match reply {
        Frame::Bulk(b) => vec![b.clone()],
        other => items(other),
    }
}

/// How many elements the second item of `[key, [...]]` holds.
fn nested_len(reply: &Frame) -> Option<usize> {
    let Frame::Array(a) = reply else {
        return None;
    };
    match a.get(1)? {
        Frame::Array(v) | Frame::Set(v) => Some(v.len()),
        Frame::Bulks(b) => Some(b.len()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::argv as args;

    #[test]
    fn set_with_nx_or_xx_happened_only_when_its_reply_says_so() {
        let ok = Frame::simple("OK");
        let old = Frame::bulk("old");
        assert!(set_happened(&args(&["set", "k", "v"]), &Frame::Null));
        assert!(set_happened(&args(&["set", "k", "v", "NX"]), &ok));
        assert!(!set_happened(&args(&["set", "k", "v", "nx"]), &Frame::Null));
        assert!(set_happened(
            &args(&["set", "k", "v", "nx", "get"]),
            &Frame::Null
        ));
        assert!(!set_happened(&args(&["set", "k", "v", "nx", "get"]), &old));
        assert!(!set_happened(
            &args(&["set", "k", "v", "xx", "get"]),
            &Frame::Null
        ));
        assert!(set_happened(&args(&["set", "k", "v", "xx", "get"]), &old));
    }

    #[test]
    fn xadd_sends_the_id_it_chose() {
        let id = Frame::bulk("5-0");
        let sent = xadd(
            &args(&[
                "XADD", "s", "MAXLEN", "~", "10", "LIMIT", "5", "*", "f", "v",
            ]),
            &id,
        );
        assert_eq!(
            sent,
            Some(args(&[
                "XADD", "s", "MAXLEN", "~", "10", "LIMIT", "5", "5-0", "f", "v"
            ]))
        );
        let sent = xadd(&args(&["XADD", "s", "NOMKSTREAM", "*", "f", "v"]), &id);
        assert_eq!(
            sent,
            Some(args(&["XADD", "s", "NOMKSTREAM", "5-0", "f", "v"]))
        );
    }

    #[test]
    fn migrate_sends_the_deletions_unless_it_copied() {
        let one = args(&["MIGRATE", "h", "1", "k", "0", "100"]);
        assert_eq!(migrated(&one), vec![args(&["DEL", "k"])]);
        let many = args(&[
            "MIGRATE", "h", "1", "", "0", "100", "REPLACE", "KEYS", "a", "b",
        ]);
        assert_eq!(migrated(&many), vec![args(&["DEL", "a", "b"])]);
        let copy = args(&["MIGRATE", "h", "1", "k", "0", "100", "COPY"]);
        assert!(migrated(&copy).is_empty());
    }

    #[test]
    fn a_served_pop_is_sent_as_the_plain_pop_of_what_it_took() {
        let reply = Frame::Array(vec![
            Frame::bulk("l"),
            Frame::Array(vec![Frame::bulk("a"), Frame::bulk("b")]),
        ]);
        let op = BlockOp::LMPop {
            end: End::Right,
            count: 10,
        };
        assert_eq!(pop(&[], &op, &reply), vec![args(&["RPOP", "l", "2"])]);
        let op = BlockOp::Pop(End::Left);
        let reply = Frame::Array(vec![Frame::bulk("l"), Frame::bulk("a")]);
        assert_eq!(pop(&[], &op, &reply), vec![args(&["LPOP", "l"])]);
        assert!(pop(&[], &op, &Frame::NullArray).is_empty());
    }
}
