//! Stream commands: XADD (with trimming and NOMKSTREAM), XLEN, XRANGE,
//! XREVRANGE, XDEL, XTRIM, XSETID, XINFO, and XREAD (COUNT, BLOCK; a
//! blocked reader is served through `cmd::blocking` like the blocking
//! pops). The consumer-group commands are in `cmd::xgroup`.

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::types::{AddError, EncodingLimits, Group, IdSpec, Stream, StreamId, Trim};

use super::args::Args;
use super::coll::{read, write};
use super::error::{
    nogroup_for_key, subcommand_syntax, NO_SUCH_KEY, STREAM_ID, STREAM_INTERVAL_START,
    XADD_EXHAUSTED, XADD_LIMIT_NEGATIVE, XADD_LIMIT_NOT_APPROX, XADD_MAXLEN_NEGATIVE, XADD_SMALL,
    XADD_ZERO, XREAD_GT_ID, XREAD_UNBALANCED, XSETID_ADDED_BELOW_LENGTH, XSETID_ADDED_NEGATIVE,
    XSETID_BELOW_MAX_DELETED, XSETID_BELOW_TOP,
};
use super::parse::{int_arg, is, parse_i64, timeout_ms};
use super::{CmdError, CmdResult, Ctx};
use crate::notify::class;

/// A parsed `MAXLEN|MINID [=|~] threshold [LIMIT count]` clause.
struct TrimArgs {
    how: Trim,
    approx: bool,
    limit: usize,
}

fn id_arg(b: &[u8], default_seq: u64) -> Result<StreamId, CmdError> {
    StreamId::parse(b, default_seq).ok_or_else(|| CmdError::msg(STREAM_ID))
}

/// Takes a trim clause from `args` if one is next.
fn parse_trim(args: &mut Args<'_>) -> Result<Option<TrimArgs>, CmdError> {
    let maxlen = args.flag("maxlen");
    if !maxlen && !args.flag("minid") {
        return Ok(None);
    }
    let approx = args.flag("~");
    if !approx {
        args.flag("=");
    }
    let t = args.expect()?;
    let how = if maxlen {
        match parse_i64(t) {
            Some(n) if n >= 0 => Trim::MaxLen(n as usize),
            Some(_) => return Err(CmdError::msg(XADD_MAXLEN_NEGATIVE)),
            None => return Err(CmdError::msg(super::error::NOT_INTEGER)),
        }
    } else {
        Trim::MinId(id_arg(t, 0)?)
    };
    let mut limit = if approx { default_trim_limit() } else { 0 };
    if args.flag("limit") {
        let n = args.int()?;
        if n < 0 {
            return Err(CmdError::msg(XADD_LIMIT_NEGATIVE));
        }
        if !approx {
            return Err(CmdError::msg(XADD_LIMIT_NOT_APPROX));
        }
        limit = n as usize;
    }
    Ok(Some(TrimArgs { how, approx, limit }))
}

/// How many entries `~` trimming removes at most without `LIMIT`: Redis's
/// 100 nodes' worth, or 10,000 when that is 0 or above a million.
fn default_trim_limit() -> usize {
    match 100 * EncodingLimits::current().stream_node_max_entries {
        0 => 10_000,
        n if n > 1_000_000 => 10_000,
        n => n as usize,
    }
}

fn id_frame(id: StreamId) -> Frame {
    Frame::Bulk(Bytes::from(id.to_string()))
}

/// `XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value [field value ...]`
pub(crate) fn xadd(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (mut opts, mut nomkstream, mut trim) = (Args::at(args, 2), false, None);
    loop {
        if opts.flag("nomkstream") {
            nomkstream = true;
        } else if let Some(t) = parse_trim(&mut opts)? {
            trim = Some(t);
        } else {
            break;
        }
    }
    let id_text = opts.expect()?;
    let fields = opts.rest();
    if fields.is_empty() || fields.len() % 2 != 0 {
        return Err(CmdError::Arity("xadd".to_owned()));
    }
    let spec = if &id_text[..] == b"*" {
        IdSpec::Auto
    } else if let Some(ms) = id_text.strip_suffix(b"-*") {
        IdSpec::AutoSeq(id_arg(ms, 0)?.ms)
    } else {
        IdSpec::Explicit(id_arg(id_text, 0)?)
    };
    // The only ID a new, empty stream refuses; checking it first means a
    // failed XADD never creates the key.
    if spec == IdSpec::Explicit(StreamId::MIN) {
        return Err(CmdError::msg(XADD_ZERO));
    }
    let pairs: Vec<(Bytes, Bytes)> = fields
        .chunks_exact(2)
        .map(|fv| (fv[0].clone(), fv[1].clone()))
        .collect();
    let now_ms = ctx.now.0;
    let r = write(ctx, &args[1], !nomkstream, |s: &mut Stream| {
        let id = s.next_id(spec, now_ms)?;
        s.add(id, &pairs);
        let trimmed = trim
            .as_ref()
            .map_or(0, |t| s.trim(t.how, t.approx, t.limit));
        Ok::<_, AddError>((id, trimmed))
    })?;
    match r {
        None => Ok(Frame::Null),
        Some(Ok((id, trimmed))) => {
            if trimmed > 0 {
                ctx.raise(class::STREAM, "xtrim", &args[1]);
            }
            Ok(id_frame(id))
        }
        Some(Err(AddError::TooSmall)) => Err(CmdError::msg(XADD_SMALL)),
        Some(Err(AddError::Zero)) => Err(CmdError::msg(XADD_ZERO)),
        Some(Err(AddError::Exhausted)) => Err(CmdError::msg(XADD_EXHAUSTED)),
    }
}

pub(crate) fn xlen(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let n = read(ctx, &args[1], |s: &Stream| s.len())?;
    Ok(Frame::Integer(n.unwrap_or(0) as i64))
}

/// A range end: `-`, `+`, `ms[-seq]` or exclusive `(ms[-seq]`. `low` says
/// whether it is the low end (a bare `ms` then means `ms-0`, else `ms-max`).
pub(super) fn range_end(b: &[u8], low: bool) -> Result<StreamId, CmdError> {
    match b {
        b"-" => Ok(StreamId::MIN),
        b"+" => Ok(StreamId::MAX),
        [b'(', rest @ ..] => {
            let id = id_arg(rest, if low { 0 } else { u64::MAX })?;
            let moved = if low { id.next() } else { id.prev() };
            moved.ok_or_else(|| CmdError::msg(STREAM_INTERVAL_START))
        }
        _ => id_arg(b, if low { 0 } else { u64::MAX }),
    }
}

fn range(ctx: &mut Ctx<'_>, args: &[Bytes], rev: bool) -> CmdResult {
    let (lo, hi) = if rev {
        (&args[3], &args[2])
    } else {
        (&args[2], &args[3])
    };
    let (start, end) = (range_end(lo, true)?, range_end(hi, false)?);
    let count = match &args[4..] {
        [] => usize::MAX,
        [c, n] if is(c, "count") => int_arg(n)?.max(0) as usize,
        _ => return Err(CmdError::syntax()),
    };
    let out = read(ctx, &args[1], |s: &Stream| {
        s.range(start, end, count, rev)
            .into_iter()
            .map(|(id, fields)| {
                let flat = fields
                    .iter()
                    .flat_map(|(f, v)| [Frame::Bulk(f.clone()), Frame::Bulk(v.clone())])
                    .collect();
                Frame::Array(vec![id_frame(id), Frame::Array(flat)])
            })
            .collect()
    })?;
    Ok(Frame::Array(out.unwrap_or_default()))
}

/// `XRANGE key start end [COUNT count]`
pub(crate) fn xrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    range(ctx, args, false)
}

/// `XREVRANGE key end start [COUNT count]`
pub(crate) fn xrevrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    range(ctx, args, true)
}

pub(crate) fn xdel(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let ids = args[2..]
        .iter()
        .map(|b| id_arg(b, 0))
        .collect::<Result<Vec<_>, _>>()?;
    let n = write(ctx, &args[1], false, |s: &mut Stream| {
        ids.iter().filter(|id| s.delete(**id)).count()
    })?;
    Ok(Frame::Integer(n.unwrap_or(0) as i64))
}

/// `XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]`
pub(crate) fn xtrim(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut opts = Args::at(args, 2);
    let Some(t) = parse_trim(&mut opts)? else {
        return Err(CmdError::syntax());
    };
    opts.finish()?;
    let n = write(ctx, &args[1], false, |s: &mut Stream| {
        s.trim(t.how, t.approx, t.limit)
    })?;
    Ok(Frame::Integer(n.unwrap_or(0) as i64))
}

/// Entries after `after` in the stream at `key`, at most `count`, as
/// `[key, [[id, [field, value, ...]], ...]]`; `None` when there are none
/// (or no stream).
pub(crate) fn read_after(
    ctx: &Ctx<'_>,
    key: &Bytes,
    after: StreamId,
    count: usize,
) -> Result<Option<Frame>, CmdError> {
    let Some(start) = after.next() else {
        return Ok(None);
    };
    let entries = read(ctx, key, |s: &Stream| {
        s.range(start, StreamId::MAX, count, false)
            .into_iter()
            .map(|(id, fields)| entry_frame(id, fields))
            .collect::<Vec<_>>()
    })?;
    Ok(entries
        .filter(|e| !e.is_empty())
        .map(|e| Frame::Array(vec![Frame::Bulk(key.clone()), Frame::Array(e)])))
}

fn entry_frame(id: StreamId, fields: &[(Bytes, Bytes)]) -> Frame {
    let flat = fields
        .iter()
        .flat_map(|(f, v)| [Frame::Bulk(f.clone()), Frame::Bulk(v.clone())])
        .collect();
    Frame::Array(vec![id_frame(id), Frame::Array(flat)])
}

/// Builds XREAD's reply from the per-stream results: an array of
/// `[key, entries]`, or a map in RESP3.
pub(crate) fn xread_reply(served: Vec<Frame>, resp3: bool) -> Frame {
    if !resp3 {
        return Frame::Array(served);
    }
    let pairs = served
        .into_iter()
        .filter_map(|f| match f {
            Frame::Array(mut kv) if kv.len() == 2 => {
                let entries = kv.pop()?;
                let key = kv.pop()?;
                Some((key, entries))
            }
            _ => None,
        })
        .collect();
    Frame::Map(pairs)
}

/// `XREAD [COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]`
pub(crate) fn xread(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (mut count, mut block, mut streams) = (usize::MAX, None, None);
    let mut opts = Args::at(args, 1);
    while let Some(a) = opts.next() {
        let more = !opts.is_empty();
        if is(a, "block") && more {
            block = Some(timeout_ms(opts.expect()?)?);
        } else if is(a, "count") && more {
            let n = opts.int()?;
            count = if n <= 0 { usize::MAX } else { n as usize };
        } else if is(a, "streams") && more {
            streams = Some(opts.take_rest());
            break;
        } else {
            return Err(CmdError::syntax());
        }
    }
    let (keys, ids) = stream_list(streams)?;
    let mut after = Vec::with_capacity(ids.len());
    for (key, id) in keys.iter().zip(ids) {
        let last = read(ctx, key, |s: &Stream| s.last_id())?;
        if &id[..] == b"$" {
            after.push(last.unwrap_or(StreamId::MIN));
        } else if &id[..] == b">" {
            return Err(CmdError::msg(XREAD_GT_ID));
        } else {
            after.push(id_arg(id, 0)?);
        }
    }
    let mut served = Vec::new();
    for (key, id) in keys.iter().zip(&after) {
        if let Some(f) = read_after(ctx, key, *id, count)? {
            served.push(f);
        }
    }
    let resp3 = super::coll::resp3(ctx);
    if !served.is_empty() {
        return Ok(xread_reply(served, resp3));
    }
    let Some(ms) = block else {
        return Ok(Frame::NullArray);
    };
    super::blocking::block_xread(ctx, keys, after, count, ms)
}

/// `XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]`
pub(crate) fn xsetid(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let id = id_arg(&args[2], 0)?;
    let (mut added, mut max_del) = (None, None);
    let mut opts = Args::at(args, 3);
    while let Some(a) = opts.next() {
        let more = !opts.is_empty();
        if is(a, "entriesadded") && more {
            let n = opts.int()?;
            if n < 0 {
                return Err(CmdError::msg(XSETID_ADDED_NEGATIVE));
            }
            added = Some(n as u64);
        } else if is(a, "maxdeletedid") && more {
            let m = id_arg(opts.expect()?, 0)?;
            if id < m {
                return Err(CmdError::msg(XSETID_BELOW_MAX_DELETED));
            }
            max_del = Some(m);
        } else {
            return Err(CmdError::syntax());
        }
    }
    let done = write(ctx, &args[1], false, |s: &mut Stream| {
        if let Some(top) = s.last_entry_id() {
            if id < top {
                return Err(CmdError::msg(XSETID_BELOW_TOP));
            }
            if added.is_some_and(|n| (s.len() as u64) > n) {
                return Err(CmdError::msg(XSETID_ADDED_BELOW_LENGTH));
            }
        }
        s.set_ids(id, added, max_del.filter(|m| *m != StreamId::MIN));
        Ok(())
    })?;
    match done {
        Some(r) => {
            r?;
            ctx.dirty = Some(1);
            Ok(Frame::ok())
        }
        None => Err(CmdError::msg(NO_SUCH_KEY)),
    }
}

const XINFO_HELP: &[&str] = &[
    "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
    "HELP",
    "    Print this help.",
];

/// `XINFO STREAM key [FULL [COUNT n]] | GROUPS key | CONSUMERS key group | HELP`.
/// No consumer groups exist yet, so GROUPS is always empty.
pub(crate) fn xinfo(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let sub = &args[1];
    let arity = |name: &str| CmdError::subcommand_arity("xinfo", name);
    if is(sub, "help") {
        if args.len() != 2 {
            return Err(arity("help"));
        }
        return super::help_reply(XINFO_HELP);
    }
    let (name, min, max) = if is(sub, "stream") {
        ("stream", 3, usize::MAX)
    } else if is(sub, "groups") {
        ("groups", 3, 3)
    } else if is(sub, "consumers") {
        ("consumers", 4, 4)
    } else {
        return Err(CmdError::unknown_subcommand("XINFO", sub));
    };
    if args.len() < min || args.len() > max {
        return Err(arity(name));
    }
    let key = &args[2];
    let now = ctx.now.0;
    let info = read(ctx, key, |s: &Stream| match name {
        "groups" => Ok(Frame::Array(
            s.groups()
                .iter()
                .map(|(name, g)| group_info(s, name, g))
                .collect(),
        )),
        "consumers" => match s.groups().get(&args[3][..]) {
            Some(g) => Ok(Frame::Array(
                g.consumers
                    .iter()
                    .map(|(name, c)| {
                        Frame::Map(vec![
                            (Frame::bulk("name"), Frame::Bulk(name.clone())),
                            (Frame::bulk("pending"), Frame::Integer(c.pel.len() as i64)),
                            (
                                Frame::bulk("idle"),
                                Frame::Integer(now.saturating_sub(c.seen_time) as i64),
                            ),
                        ])
                    })
                    .collect(),
            )),
            None => Err(CmdError::msg(nogroup_for_key(key, &args[3]))),
        },
        _ => stream_info(s, &args[3..]),
    })?;
    info.unwrap_or_else(|| Err(CmdError::msg(NO_SUCH_KEY)))
}

/// One group in `XINFO GROUPS`: its stored read counter (nil when
/// unknown), and the lag from it or, when unknown, from Redis's estimate
/// over the stream's history.
fn group_info(s: &Stream, name: &Bytes, g: &Group) -> Frame {
    let read = g.entries_read;
    let known = match read {
        Some(n) if !s.tombstones_from(g.last_id) => Some(n),
        _ => s.entries_before(g.last_id),
    };
    let lag = match known {
        _ if s.entries_added() == 0 => Frame::Integer(0),
        Some(n) => Frame::Integer(s.entries_added().saturating_sub(n) as i64),
        None => Frame::Null,
    };
    Frame::Map(vec![
        (Frame::bulk("name"), Frame::Bulk(name.clone())),
        (
            Frame::bulk("consumers"),
            Frame::Integer(g.consumers.len() as i64),
        ),
        (Frame::bulk("pending"), Frame::Integer(g.pel.len() as i64)),
        (Frame::bulk("last-delivered-id"), id_frame(g.last_id)),
        (
            Frame::bulk("entries-read"),
            read.map_or(Frame::Null, |n| Frame::Integer(n as i64)),
        ),
        (Frame::bulk("lag"), lag),
    ])
}

/// One group in `XINFO STREAM ... FULL`: its counters, its first `count`
/// pending entries, and each consumer with its first `count` pending.
fn full_group(s: &Stream, name: &Bytes, g: &Group, count: usize) -> Frame {
    let Frame::Map(mut fields) = group_info(s, name, g) else {
        return Frame::Null;
    };
    // group_info's order is name, consumers, pending, last-delivered-id,
    // entries-read, lag; FULL has name, last-delivered-id, entries-read,
    // lag, pel-count, pending, consumers.
    let lag = fields.remove(5);
    let read = fields.remove(4);
    let last = fields.remove(3);
    fields.truncate(1);
    fields.extend([last, read, lag]);
    let kv = |k: &str, v: Frame| (Frame::bulk(k.to_owned()), v);
    fields.push(kv("pel-count", Frame::Integer(g.pel.len() as i64)));
    let pending = g
        .pel
        .iter()
        .take(count)
        .map(|(id, p)| {
            Frame::Array(vec![
                id_frame(*id),
                Frame::Bulk(p.consumer.clone()),
                Frame::Integer(p.delivery_time as i64),
                Frame::Integer(p.delivery_count as i64),
            ])
        })
        .collect();
    fields.push(kv("pending", Frame::Array(pending)));
    let consumers = g
        .consumers
        .iter()
        .map(|(cname, c)| {
            let pel = c
                .pel
                .iter()
                .take(count)
                .filter_map(|id| g.pel.get(id).map(|p| (id, p)))
                .map(|(id, p)| {
                    Frame::Array(vec![
                        id_frame(*id),
                        Frame::Integer(p.delivery_time as i64),
                        Frame::Integer(p.delivery_count as i64),
                    ])
                })
                .collect();
            Frame::Map(vec![
                kv("name", Frame::Bulk(cname.clone())),
                kv("seen-time", Frame::Integer(c.seen_time as i64)),
                kv("pel-count", Frame::Integer(c.pel.len() as i64)),
                kv("pending", Frame::Array(pel)),
            ])
        })
        .collect();
    fields.push(kv("consumers", Frame::Array(consumers)));
    Frame::Map(fields)
}

/// `XINFO STREAM`'s reply, plain or FULL.
fn stream_info(s: &Stream, opts: &[Bytes]) -> CmdResult {
    let full = match opts {
        [] => None,
        [f] if is(f, "full") => Some(10),
        [f, c, n] if is(f, "full") && is(c, "count") => {
            let n = int_arg(n)?;
            Some(if n <= 0 { usize::MAX } else { n as usize })
        }
        _ => return Err(CmdError::msg(subcommand_syntax("XINFO", b"stream"))),
    };
    let kv = |k: &str, v: Frame| (Frame::bulk(k.to_owned()), v);
    // Redis keeps entries in listpack nodes in a radix tree; FerrumKV's
    // tree differs, so these two are the counts of the nodes Redis's layout
    // would have.
    let nodes = s.nodes() as i64;
    let mut out = vec![
        kv("length", Frame::Integer(s.len() as i64)),
        kv("radix-tree-keys", Frame::Integer(nodes)),
        kv("radix-tree-nodes", Frame::Integer(nodes + 1)),
        kv("last-generated-id", id_frame(s.last_id())),
        kv("max-deleted-entry-id", id_frame(s.max_deleted())),
        kv("entries-added", Frame::Integer(s.entries_added() as i64)),
        kv("recorded-first-entry-id", id_frame(s.first_id())),
    ];
    match full {
        None => {
            out.push(kv("groups", Frame::Integer(s.groups().len() as i64)));
            let edge = |rev: bool| {
                s.range(StreamId::MIN, StreamId::MAX, 1, rev)
                    .first()
                    .map_or(Frame::Null, |(id, f)| entry_frame(*id, f))
            };
            out.push(kv("first-entry", edge(false)));
            out.push(kv("last-entry", edge(true)));
        }
        Some(count) => {
            let entries = s
                .range(StreamId::MIN, StreamId::MAX, count, false)
                .into_iter()
                .map(|(id, f)| entry_frame(id, f))
                .collect();
            out.push(kv("entries", Frame::Array(entries)));
            let groups = s
                .groups()
                .iter()
                .map(|(name, g)| full_group(s, name, g, count))
                .collect();
            out.push(kv("groups", Frame::Array(groups)));
        }
    }
    Ok(Frame::Map(out))
}

/// The `STREAMS key ... id ...` tail of `XREAD`/`XREADGROUP`, the arguments
/// after `STREAMS` (`None`: no `STREAMS` option), split into keys and IDs.
pub(super) fn stream_list(streams: Option<&[Bytes]>) -> Result<(&[Bytes], &[Bytes]), CmdError> {
    let Some(rest) = streams else {
        return Err(CmdError::syntax());
    };
    if rest.len() % 2 != 0 {
        return Err(CmdError::msg(XREAD_UNBALANCED));
    }
    Ok(rest.split_at(rest.len() / 2))
}
