//! Stream consumer groups: XGROUP (CREATE, SETID, DESTROY, CREATECONSUMER,
//! DELCONSUMER, HELP), XREADGROUP (COUNT, BLOCK, NOACK, `>` and history
//! IDs), XACK, XPENDING (summary and extended, IDLE), XCLAIM and
//! XAUTOCLAIM, with Redis 7.0's
//! replies and error texts. The group state lives in
//! `ferrum_store::types::Stream`; these handlers parse and format.

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::types::{Claim, Group, GroupEntry, Stream, StreamId};

use super::args::Args;
use super::coll::{read, write};
use super::error::{
    invalid_min_idle, invalid_xclaim_option, nogroup_for_key, nogroup_no_key, subcommand_syntax,
    unknown_xclaim_option, BUSYGROUP, COUNT_ABOVE_ZERO, STREAM_ID, XGROUP_ENTRIESREAD,
    XGROUP_NEEDS_KEY, XREADGROUP_DOLLAR, XREADGROUP_GROUP_GONE, XREADGROUP_KEY_GONE,
    XREADGROUP_NO_GROUP,
};
use super::parse::{int_arg, is, parse_i64, timeout_ms};
use super::{CmdError, CmdResult, Ctx};
use crate::notify::class;

fn id_arg(b: &[u8]) -> Result<StreamId, CmdError> {
    StreamId::parse(b, 0).ok_or_else(|| CmdError::msg(STREAM_ID))
}

fn id_frame(id: StreamId) -> Frame {
    Frame::Bulk(Bytes::from(id.to_string()))
}

fn no_group(key: &[u8], group: &[u8]) -> CmdError {
    CmdError::msg(nogroup_for_key(key, group))
}

const XGROUP_HELP: &[&str] = &[
    "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
    "HELP",
    "    Print this help.",
];

/// `[ENTRIESREAD n]` (and MKSTREAM for CREATE) after the ID.
fn group_opts(sub: &[u8], opts: &[Bytes], create: bool) -> Result<(bool, Option<u64>), CmdError> {
    let (mut mkstream, mut read) = (false, None);
    let mut opts = Args::new(opts);
    while let Some(a) = opts.next() {
        if create && is(a, "mkstream") {
            mkstream = true;
        } else if is(a, "entriesread") && !opts.is_empty() {
            let n = opts.int()?;
            if n < -1 {
                return Err(CmdError::msg(XGROUP_ENTRIESREAD));
            }
            read = (n >= 0).then_some(n as u64);
        } else {
            // Redis's addReplySubcommandSyntaxError, as for an extra argument.
            return Err(CmdError::msg(subcommand_syntax("XGROUP", sub)));
        }
    }
    Ok((mkstream, read))
}

/// Runs `op` on `s`, and tells whether it created consumer `consumer` of
/// `group`: XREADGROUP, XCLAIM and XAUTOCLAIM create the consumer they
/// name, and Redis raises `xgroup-createconsumer` when they do.
fn creating_consumer<T>(
    s: &mut Stream,
    group: &[u8],
    consumer: &[u8],
    op: impl FnOnce(&mut Stream) -> T,
) -> (T, bool) {
    let has = |s: &Stream| {
        s.groups()
            .get(group)
            .is_some_and(|g| g.consumers.contains_key(consumer))
    };
    let before = has(s);
    let out = op(s);
    (out, !before && has(s))
}

/// What a read or claim through [`creating_consumer`] returned (inside
/// `write`'s `Option` for a missing key), having raised
/// `xgroup-createconsumer` if it created its consumer.
fn with_consumer_event<T>(
    ctx: &mut Ctx<'_>,
    key: &Bytes,
    got: Option<(Option<T>, bool)>,
) -> Option<T> {
    let (got, created) = got?;
    if created {
        ctx.raise(class::STREAM, "xgroup-createconsumer", key);
    }
    got
}

/// `XGROUP subcommand ...`
pub(crate) fn xgroup(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let sub = &args[1];
    let (name, min, max) = match () {
        _ if is(sub, "help") => ("help", 2, 2),
        // Options past the fixed arguments are read by `group_opts`, which
        // rejects what it does not know, as Redis does.
        _ if is(sub, "create") => ("create", 5, usize::MAX),
        _ if is(sub, "setid") => ("setid", 5, usize::MAX),
        _ if is(sub, "destroy") => ("destroy", 4, 4),
        _ if is(sub, "createconsumer") => ("createconsumer", 5, 5),
        _ if is(sub, "delconsumer") => ("delconsumer", 5, 5),
        _ => return Err(CmdError::unknown_subcommand("XGROUP", sub)),
    };
    if args.len() < min || args.len() > max {
        return Err(CmdError::subcommand_arity("xgroup", name));
    }
    if name == "help" {
        return super::help_reply(XGROUP_HELP);
    }
    let (key, group) = (&args[2], &args[3]);
    let now = ctx.now.0;
    let (mkstream, entries_read) = match name {
        "create" => group_opts(sub, &args[5..], true)?,
        "setid" => group_opts(sub, &args[5..], false)?,
        _ => (false, None),
    };
    // `-` and `+` stand for the smallest and largest IDs, as in Redis.
    let explicit = match (name, &args.get(4).map(|a| &a[..])) {
        ("create" | "setid", Some(b"$")) => None,
        ("create" | "setid", Some(b"-")) => Some(StreamId::MIN),
        ("create" | "setid", Some(b"+")) => Some(StreamId::MAX),
        ("create" | "setid", Some(a)) => Some(id_arg(a)?),
        _ => None,
    };
    let reply = write(
        ctx,
        key,
        mkstream,
        |s: &mut Stream| -> Result<(Frame, bool), CmdError> {
            // `$` is the last ID; like an explicit ID it leaves the read
            // counter unknown unless ENTRIESREAD gives it (Redis 7.0.15
            // shows `entries-read` nil, and XINFO estimates the lag).
            let (id, read) = (explicit.unwrap_or_else(|| s.last_id()), entries_read);
            let groups = s.groups_mut();
            match name {
                "create" => {
                    if groups.contains_key(&group[..]) {
                        return Err(CmdError::msg(BUSYGROUP));
                    }
                    let g = Group {
                        last_id: id,
                        entries_read: read,
                        ..Group::default()
                    };
                    groups.insert(group.clone(), g);
                    Ok((Frame::ok(), true))
                }
                "setid" => {
                    let g = groups
                        .get_mut(&group[..])
                        .ok_or_else(|| no_group(key, group))?;
                    g.last_id = id;
                    g.entries_read = read;
                    Ok((Frame::ok(), true))
                }
                "destroy" => {
                    let gone = groups.remove(&group[..]).is_some();
                    Ok((Frame::Integer(i64::from(gone)), gone))
                }
                "createconsumer" => {
                    let g = groups
                        .get_mut(&group[..])
                        .ok_or_else(|| no_group(key, group))?;
                    if g.consumers.contains_key(&args[4][..]) {
                        return Ok((Frame::Integer(0), false));
                    }
                    g.consumer(&args[4], now);
                    Ok((Frame::Integer(1), true))
                }
                _ => {
                    let g = groups
                        .get_mut(&group[..])
                        .ok_or_else(|| no_group(key, group))?;
                    let Some(c) = g.consumers.remove(&args[4][..]) else {
                        return Ok((Frame::Integer(0), false));
                    };
                    for id in &c.pel {
                        g.pel.remove(id);
                    }
                    Ok((Frame::Integer(c.pel.len() as i64), true))
                }
            }
        },
    )?;
    let (reply, changed) = reply.ok_or_else(|| CmdError::msg(XGROUP_NEEDS_KEY))??;
    ctx.dirty = Some(1);
    if changed {
        // Redis's event names: the subcommand's, after `xgroup-`.
        let event = match name {
            "create" => "xgroup-create",
            "setid" => "xgroup-setid",
            "destroy" => "xgroup-destroy",
            "createconsumer" => "xgroup-createconsumer",
            _ => "xgroup-delconsumer",
        };
        ctx.raise(class::STREAM, event, key);
    }
    if name == "destroy" {
        // Readers blocked on the group answer NOGROUP.
        ctx.shared
            .blocking
            .wake(ctx.db(), key, ferrum_store::ValueKind::Stream);
    }
    Ok(reply)
}

/// One stream's part of an XREADGROUP reply: `[key, entries]`.
pub(crate) fn group_frame(key: &Bytes, entries: Vec<GroupEntry>) -> Frame {
    let items = entries
        .into_iter()
        .map(|(id, fields)| {
            let body = match fields {
                Some(f) => Frame::Array(
                    f.into_iter()
                        .flat_map(|(k, v)| [Frame::Bulk(k), Frame::Bulk(v)])
                        .collect(),
                ),
                None => Frame::NullArray,
            };
            Frame::Array(vec![id_frame(id), body])
        })
        .collect();
    Frame::Array(vec![Frame::Bulk(key.clone()), Frame::Array(items)])
}

/// Reads `>` for a blocked XREADGROUP: `None` while nothing is new. A
/// key that is gone or no longer a stream, or a destroyed group, is an
/// error, as Redis unblocks such readers with one.
pub(crate) fn read_new(
    ctx: &Ctx<'_>,
    key: &Bytes,
    group: &[u8],
    consumer: &[u8],
    count: usize,
    noack: bool,
) -> Result<Option<Frame>, CmdError> {
    let now = ctx.now.0;
    let gone = || CmdError::msg(XREADGROUP_KEY_GONE);
    let got = write(ctx, key, false, |s: &mut Stream| {
        s.read_group(group, consumer, None, count, noack, now)
    })
    .map_err(|_| gone())?
    .ok_or_else(gone)?
    .ok_or_else(|| CmdError::msg(XREADGROUP_GROUP_GONE))?;
    Ok((!got.is_empty()).then(|| group_frame(key, got)))
}

/// `XREADGROUP GROUP group consumer [COUNT n] [BLOCK ms] [NOACK] STREAMS key [key ...] id [id ...]`
pub(crate) fn xreadgroup(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (mut count, mut block, mut noack, mut streams, mut group) =
        (usize::MAX, None, false, None, None);
    let mut opts = Args::at(args, 1);
    while let Some(a) = opts.next() {
        let more = opts.remaining();
        if is(a, "block") && more >= 1 {
            block = Some(timeout_ms(opts.expect()?)?);
        } else if is(a, "count") && more >= 1 {
            let n = opts.int()?;
            count = if n <= 0 { usize::MAX } else { n as usize };
        } else if is(a, "streams") && more >= 1 {
            streams = Some(opts.take_rest());
            break;
        } else if is(a, "group") && more >= 2 {
            let (g, c) = (opts.expect()?, opts.expect()?);
            group = Some((g.clone(), c.clone()));
        } else if is(a, "noack") {
            noack = true;
        } else {
            return Err(CmdError::syntax());
        }
    }
    let (keys, ids) = super::stream::stream_list(streams)?;
    let Some((gname, cname)) = group else {
        return Err(CmdError::msg(XREADGROUP_NO_GROUP));
    };
    let mut after = Vec::with_capacity(ids.len());
    for (key, id) in keys.iter().zip(ids) {
        let has = read(ctx, key, |s: &Stream| s.groups().contains_key(&gname[..]))?;
        if has != Some(true) {
            return Err(CmdError::msg(nogroup_no_key(
                key,
                &gname,
                " in XREADGROUP with GROUP option",
            )));
        }
        if &id[..] == b"$" {
            return Err(CmdError::msg(XREADGROUP_DOLLAR));
        }
        after.push(if &id[..] == b">" {
            None
        } else {
            Some(id_arg(id)?)
        });
    }
    let now = ctx.now.0;
    let mut served = Vec::new();
    let mut any_history = false;
    for (key, after) in keys.iter().zip(&after) {
        any_history |= after.is_some();
        let got = write(ctx, key, false, |s: &mut Stream| {
            creating_consumer(s, &gname, &cname, |s| {
                s.read_group(&gname, &cname, *after, count, noack, now)
            })
        })?;
        let got = with_consumer_event(ctx, key, got);
        match (got, after) {
            // History is always answered, even when empty.
            (Some(e), Some(_)) => served.push(group_frame(key, e)),
            (Some(e), None) if !e.is_empty() => served.push(group_frame(key, e)),
            _ => {}
        }
    }
    ctx.dirty = Some(1);
    let resp3 = super::coll::resp3(ctx);
    if !served.is_empty() {
        return Ok(super::stream::xread_reply(served, resp3));
    }
    match block {
        Some(ms) if !any_history => {
            super::blocking::block_xreadgroup(ctx, keys, (gname, cname), count, noack, ms)
        }
        _ => Ok(Frame::NullArray),
    }
}

/// `XACK key group id [id ...]`
pub(crate) fn xack(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let ids = args[3..]
        .iter()
        .map(|a| id_arg(a))
        .collect::<Result<Vec<_>, _>>()?;
    let n = write(ctx, &args[1], false, |s: &mut Stream| {
        s.groups_mut()
            .get_mut(&args[2][..])
            .map_or(0, |g| ids.iter().filter(|id| g.ack(**id)).count())
    })?
    .unwrap_or(0);
    ctx.dirty = Some(n as u64);
    Ok(Frame::Integer(n as i64))
}

/// `XPENDING key group [[IDLE min-idle-time] start end count [consumer]]`
pub(crate) fn xpending(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (key, gname) = (&args[1], &args[2]);
    let mut rest = &args[3..];
    let mut min_idle = 0u64;
    if rest.first().is_some_and(|a| is(a, "idle")) {
        if rest.len() < 2 {
            return Err(CmdError::syntax());
        }
        min_idle = int_arg(&rest[1])?.max(0) as u64;
        rest = &rest[2..];
        if rest.is_empty() {
            return Err(CmdError::syntax());
        }
    }
    let extended = match rest.len() {
        0 => None,
        3 | 4 => {
            let (start, end) = (
                super::stream::range_end(&rest[0], true)?,
                super::stream::range_end(&rest[1], false)?,
            );
            let count = int_arg(&rest[2])?.max(0) as usize;
            Some((start, end, count, rest.get(3).cloned()))
        }
        _ => return Err(CmdError::syntax()),
    };
    let now = ctx.now.0;
    let out = read(ctx, key, |s: &Stream| {
        let g = s.groups().get(&gname[..])?;
        Some(match &extended {
            None => {
                if g.pel.is_empty() {
                    return Some(Frame::Array(vec![
                        Frame::Integer(0),
                        Frame::Null,
                        Frame::Null,
                        Frame::NullArray,
                    ]));
                }
                let first = g.pel.keys().next().copied().unwrap_or_default();
                let last = g.pel.keys().next_back().copied().unwrap_or_default();
                let per: Vec<Frame> = g
                    .consumers
                    .iter()
                    .filter(|(_, c)| !c.pel.is_empty())
                    .map(|(name, c)| {
                        Frame::Array(vec![
                            Frame::Bulk(name.clone()),
                            Frame::Bulk(Bytes::from(c.pel.len().to_string())),
                        ])
                    })
                    .collect();
                Frame::Array(vec![
                    Frame::Integer(g.pel.len() as i64),
                    id_frame(first),
                    id_frame(last),
                    Frame::Array(per),
                ])
            }
            Some((start, end, count, consumer)) => {
                if start > end {
                    return Some(Frame::Array(Vec::new()));
                }
                let rows = g
                    .pel
                    .range(*start..=*end)
                    .filter(|(_, p)| consumer.as_ref().is_none_or(|c| p.consumer == *c))
                    .map(|(id, p)| (id, p, now.saturating_sub(p.delivery_time)))
                    .filter(|(_, _, idle)| *idle >= min_idle)
                    .take(*count)
                    .map(|(id, p, idle)| {
                        Frame::Array(vec![
                            id_frame(*id),
                            Frame::Bulk(p.consumer.clone()),
                            Frame::Integer(idle as i64),
                            Frame::Integer(p.delivery_count as i64),
                        ])
                    })
                    .collect();
                Frame::Array(rows)
            }
        })
    })?
    .flatten();
    out.ok_or_else(|| no_key_or_group(key, gname))
}

fn no_key_or_group(key: &[u8], group: &[u8]) -> CmdError {
    CmdError::msg(nogroup_no_key(key, group, ""))
}

/// Whether `key` holds a stream with group `group` (`WRONGTYPE` for
/// another type).
fn has_group(ctx: &Ctx<'_>, key: &[u8], group: &[u8]) -> Result<bool, CmdError> {
    Ok(read(ctx, key, |s: &Stream| s.groups().contains_key(group))? == Some(true))
}

fn min_idle(arg: &[u8], cmd: &str) -> Result<u64, CmdError> {
    let n = parse_i64(arg).ok_or_else(|| CmdError::msg(invalid_min_idle(cmd)))?;
    Ok(n.max(0) as u64)
}

fn claimed_frame(entries: Vec<GroupEntry>, justid: bool) -> Frame {
    Frame::Array(
        entries
            .into_iter()
            .map(|(id, fields)| {
                if justid {
                    return id_frame(id);
                }
                match fields {
                    Some(f) => Frame::Array(vec![
                        id_frame(id),
                        Frame::Array(
                            f.into_iter()
                                .flat_map(|(k, v)| [Frame::Bulk(k), Frame::Bulk(v)])
                                .collect(),
                        ),
                    ]),
                    None => Frame::Null,
                }
            })
            .collect(),
    )
}

/// `XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME ms]
/// [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id]`
pub(crate) fn xclaim(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (key, group, consumer) = (&args[1], &args[2], &args[3]);
    if !has_group(ctx, key, group)? {
        return Err(no_key_or_group(key, group));
    }
    let now = ctx.now.0;
    let mut o = Claim {
        min_idle: min_idle(&args[4], "XCLAIM")?,
        time: now,
        ..Claim::default()
    };
    let mut opts = Args::at(args, 5);
    let mut ids = Vec::new();
    while let Some(id) = opts.peek().and_then(|a| StreamId::parse(a, 0)) {
        ids.push(id);
        opts.next();
    }
    let opt_int = |a: &Bytes, what: &str| {
        parse_i64(a).ok_or_else(|| CmdError::msg(invalid_xclaim_option(what)))
    };
    let mut time = None;
    while let Some(a) = opts.next() {
        let more = !opts.is_empty();
        if is(a, "force") {
            o.force = true;
        } else if is(a, "justid") {
            o.justid = true;
        } else if is(a, "idle") && more {
            time = Some(now as i64 - opt_int(opts.expect()?, "IDLE")?);
        } else if is(a, "time") && more {
            time = Some(opt_int(opts.expect()?, "TIME")?);
        } else if is(a, "retrycount") && more {
            // A negative count, as in Redis, is as good as none.
            let n = opt_int(opts.expect()?, "RETRYCOUNT")?;
            o.retry = u64::try_from(n).ok();
        } else if is(a, "lastid") && more {
            o.last_id = Some(id_arg(opts.expect()?)?);
        } else {
            return Err(CmdError::msg(unknown_xclaim_option(a)));
        }
    }
    if let Some(t) = time {
        // A time in the future or before the epoch means now, as in Redis.
        o.time = if t < 0 || t as u64 > now {
            now
        } else {
            t as u64
        };
    }
    let got = write(ctx, key, false, |s: &mut Stream| {
        creating_consumer(s, group, consumer, |s| {
            s.claim(group, consumer, &ids, &o, now)
        })
    })?;
    let got = with_consumer_event(ctx, key, got).ok_or_else(|| no_key_or_group(key, group))?;
    ctx.dirty = Some(1);
    Ok(claimed_frame(got, o.justid))
}

/// `XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]`
pub(crate) fn xautoclaim(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (key, group, consumer) = (&args[1], &args[2], &args[3]);
    let min = min_idle(&args[4], "XAUTOCLAIM")?;
    let start = super::stream::range_end(&args[5], true)?;
    let (mut count, mut justid) = (100usize, false);
    let mut opts = Args::at(args, 6);
    while let Some(a) = opts.next() {
        if is(a, "count") && !opts.is_empty() {
            let n = parse_i64(opts.expect()?).ok_or_else(|| CmdError::msg(COUNT_ABOVE_ZERO))?;
            if !(1..=i64::MAX / 10).contains(&n) {
                return Err(CmdError::msg(COUNT_ABOVE_ZERO));
            }
            count = n as usize;
        } else if is(a, "justid") {
            justid = true;
        } else {
            return Err(CmdError::syntax());
        }
    }
    // Redis checks the arguments before the key, unlike XCLAIM.
    if !has_group(ctx, key, group)? {
        return Err(no_key_or_group(key, group));
    }
    let now = ctx.now.0;
    let got = write(ctx, key, false, |s: &mut Stream| {
        creating_consumer(s, group, consumer, |s| {
            s.autoclaim(group, consumer, min, start, count, justid, now)
        })
    })?;
    let (next, claimed, deleted) =
        with_consumer_event(ctx, key, got).ok_or_else(|| no_key_or_group(key, group))?;
    ctx.dirty = Some(1);
    Ok(Frame::Array(vec![
        id_frame(next),
        claimed_frame(claimed, justid),
        Frame::Array(deleted.into_iter().map(id_frame).collect()),
    ]))
}
