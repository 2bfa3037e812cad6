//! Sorted-set commands on single members and counts: ZADD, ZINCRBY, ZREM,
//! ZCARD, ZSCORE, ZMSCORE, ZRANK, ZREVRANK, ZCOUNT, ZLEXCOUNT, ZPOPMIN,
//! ZPOPMAX, ZRANDMEMBER, ZSCAN, with the score and lex bounds and the
//! scored reply the other sorted-set files share. Ranges are in
//! `zrange.rs`, the `...STORE` aggregations in `zstore.rs`; both build on
//! this file and it on neither.

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::types::{LexBound, ScoreBound, ZSet};
use ferrum_store::{Millis, Shard, StoreError};

use super::args::Args;
use super::coll::{
    positive_count, random_reply, read, read_in, resp3, scan_coll, write, write_count, write_in,
    Picker, RandomCount,
};
use super::error::{
    MIN_MAX_FLOAT, MIN_MAX_LEX, SCORE_NAN, ZADD_GT_LT_NX, ZADD_INCR_PAIR, ZADD_XX_NX,
};
use super::parse::{f64_bytes, float_arg, is, parse_f64};
use super::{CmdError, CmdResult, Ctx};

/// Parses a score bound: `1.5`, `(1.5`, `-inf`, `+inf`.
pub(crate) fn score_bound(b: &[u8]) -> Result<ScoreBound, CmdError> {
    let (exclusive, text) = match b.strip_prefix(b"(") {
        Some(rest) => (true, rest),
        None => (false, b),
    };
    let value = parse_f64(text).ok_or_else(|| CmdError::msg(MIN_MAX_FLOAT))?;
    Ok(ScoreBound { value, exclusive })
}

/// Parses a lex bound: `-`, `+`, `[member`, `(member`.
pub(crate) fn lex_bound(b: &[u8]) -> Result<LexBound, CmdError> {
    match b {
        b"-" => Ok(LexBound::Min),
        b"+" => Ok(LexBound::Max),
        [b'[', rest @ ..] => Ok(LexBound::Incl(Bytes::copy_from_slice(rest))),
        [b'(', rest @ ..] => Ok(LexBound::Excl(Bytes::copy_from_slice(rest))),
        _ => Err(CmdError::msg(MIN_MAX_LEX)),
    }
}

/// `ZADD` flags.
#[derive(Default)]
struct AddFlags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
    ch: bool,
    incr: bool,
}

/// `ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]`
pub(crate) fn zadd(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut f = AddFlags::default();
    let mut opts = Args::new(&args[2..]);
    loop {
        let flag = match () {
            _ if opts.flag("nx") => &mut f.nx,
            _ if opts.flag("xx") => &mut f.xx,
            _ if opts.flag("gt") => &mut f.gt,
            _ if opts.flag("lt") => &mut f.lt,
            _ if opts.flag("ch") => &mut f.ch,
            _ if opts.flag("incr") => &mut f.incr,
            _ => break,
        };
        *flag = true;
    }
    let pairs = opts.rest();
    if pairs.is_empty() || pairs.len() % 2 != 0 {
        return Err(CmdError::syntax());
    }
    if f.nx && f.xx {
        return Err(CmdError::msg(ZADD_XX_NX));
    }
    if (f.gt && f.lt) || (f.nx && (f.gt || f.lt)) {
        return Err(CmdError::msg(ZADD_GT_LT_NX));
    }
    if f.incr && pairs.len() > 2 {
        return Err(CmdError::msg(ZADD_INCR_PAIR));
    }
    let scored: Vec<(f64, &Bytes)> = pairs
        .chunks_exact(2)
        .map(|p| Ok((float_arg(&p[0])?, &p[1])))
        .collect::<Result<_, CmdError>>()?;
    // Without a condition or INCR every pair is set as given, so one
    // lookup a member does (the insert reports the old score).
    let conditional = f.nx || f.xx || f.gt || f.lt || f.incr;
    let r = write(ctx, &args[1], !f.xx, |z: &mut ZSet| {
        let (mut added, mut changed, mut last) = (0, 0, None);
        for &(score, m) in &scored {
            if !conditional {
                match z.insert(m, score) {
                    Some(c) if c != score => changed += 1,
                    Some(_) => {}
                    None => added += 1,
                }
                continue;
            }
            let cur = z.score(m);
            let new = match (cur, f.incr) {
                (Some(c), true) => c + score,
                _ => score,
            };
            if new.is_nan() {
                return Err(CmdError::msg(SCORE_NAN));
            }
            let allowed = match cur {
                Some(c) => !f.nx && (!f.gt || new > c) && (!f.lt || new < c),
                None => !f.xx,
            };
            if !allowed {
                last = None;
                continue;
            }
            match cur {
                Some(c) if c != new => changed += 1,
                Some(_) => {}
                None => added += 1,
            }
            z.insert(m, new);
            last = Some(new);
        }
        Ok((added, changed, last))
    })?;
    let (added, changed, last) = match r {
        Some(r) => r?,
        None => (0, 0, None),
    };
    Ok(if f.incr {
        last.map_or(Frame::Null, Frame::Double)
    } else {
        Frame::Integer(if f.ch { added + changed } else { added })
    })
}

pub(crate) fn zincrby(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let by = float_arg(&args[2])?;
    let r = write(ctx, &args[1], true, |z: &mut ZSet| {
        let new = z.score(&args[3]).unwrap_or(0.0) + by;
        if new.is_nan() {
            return Err(CmdError::msg(SCORE_NAN));
        }
        z.insert(&args[3], new);
        Ok(new)
    })?;
    r.map_or(Ok(Frame::Null), |r| r.map(Frame::Double))
}

pub(crate) fn zrem(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let n = write_count(ctx, &args[1], false, |z: &mut ZSet| {
        args[2..].iter().filter(|m| z.remove(m)).count()
    })?;
    Ok(Frame::Integer(n as i64))
}

pub(crate) fn zcard(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let n = read(ctx, &args[1], |z: &ZSet| z.len())?;
    Ok(Frame::Integer(n.unwrap_or(0) as i64))
}

pub(crate) fn zscore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let s = read(ctx, &args[1], |z: &ZSet| z.score(&args[2]))?;
    Ok(s.flatten().map_or(Frame::Null, Frame::Double))
}

pub(crate) fn zmscore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let members = &args[2..];
    let out = read(ctx, &args[1], |z: &ZSet| {
        members
            .iter()
            .map(|m| z.score(m).map_or(Frame::Null, Frame::Double))
            .collect()
    })?;
    Ok(Frame::Array(
        out.unwrap_or_else(|| vec![Frame::Null; members.len()]),
    ))
}

/// `ZRANK key member [WITHSCORE]` and `ZREVRANK`.
fn rank(ctx: &mut Ctx<'_>, args: &[Bytes], rev: bool) -> CmdResult {
    let with_score = match args.get(3) {
        None => false,
        Some(a) if is(a, "withscore") && args.len() == 4 => true,
        Some(_) => return Err(CmdError::syntax()),
    };
    let r = read(ctx, &args[1], |z: &ZSet| {
        let r = z.rank(&args[2])?;
        let r = if rev { z.len() - 1 - r } else { r };
        Some((r, z.score(&args[2]).unwrap_or(0.0)))
    })?;
    Ok(match (r.flatten(), with_score) {
        (None, true) => Frame::NullArray,
        (None, false) => Frame::Null,
        (Some((r, _)), false) => Frame::Integer(r as i64),
        (Some((r, s)), true) => Frame::Array(vec![Frame::Integer(r as i64), Frame::Double(s)]),
    })
}

pub(crate) fn zrank(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    rank(ctx, args, false)
}

pub(crate) fn zrevrank(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    rank(ctx, args, true)
}

pub(crate) fn zcount(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (min, max) = (score_bound(&args[2])?, score_bound(&args[3])?);
    let n = read(ctx, &args[1], |z: &ZSet| {
        let (a, b) = z.score_ranks(min, max);
        b - a
    })?;
    Ok(Frame::Integer(n.unwrap_or(0) as i64))
}

pub(crate) fn zlexcount(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (min, max) = (lex_bound(&args[2])?, lex_bound(&args[3])?);
    let n = read(ctx, &args[1], |z: &ZSet| {
        let (a, b) = z.lex_ranks(&min, &max);
        b - a
    })?;
    Ok(Frame::Integer(n.unwrap_or(0) as i64))
}

/// Pops up to `count` members from the low (or, with `max`, high) end of
/// the sorted set at `key` in a locked shard; `None` when absent. Blocking
/// pops reuse it.
///
/// # Errors
///
/// `WRONGTYPE` when the key is not a sorted set.
pub(crate) fn pop_in(
    shard: &mut Shard,
    db: usize,
    key: &Bytes,
    count: usize,
    max: bool,
    now: Millis,
) -> Result<Option<Vec<(Bytes, f64)>>, StoreError> {
    write_in(shard, db, key, now, false, |z: &mut ZSet| z.pop(count, max))
}

/// `ZPOPMIN key [count]` / `ZPOPMAX key [count]`.
fn pop(ctx: &mut Ctx<'_>, args: &[Bytes], max: bool) -> CmdResult {
    if args.len() > 3 {
        return Err(CmdError::syntax());
    }
    let count = args.get(2).map(|c| positive_count(c)).transpose()?;
    let (key, db, now, resp3) = (&args[1], ctx.db(), ctx.now, resp3(ctx));
    let mut ks = ctx.store().lock_key(key);
    let popped = pop_in(ks.shard(key), db, key, count.unwrap_or(1), max, now)?.unwrap_or_default();
    // RESP3 nests member-score pairs only when a count was given, as Redis.
    Ok(scored_reply(popped, true, resp3 && count.is_some()))
}

pub(crate) fn zpopmin(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    pop(ctx, args, false)
}

pub(crate) fn zpopmax(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    pop(ctx, args, true)
}

/// Members (and scores) as a reply: flat `member, score, ...` or, nested,
/// an array of `[member, score]` pairs (RESP3).
pub(crate) fn scored_reply(items: Vec<(Bytes, f64)>, with_scores: bool, nested: bool) -> Frame {
    let mut out = Vec::with_capacity(items.len() * (1 + usize::from(with_scores && !nested)));
    for (m, s) in items {
        match (with_scores, nested) {
            (false, _) => out.push(Frame::Bulk(m)),
            (true, false) => out.extend([Frame::Bulk(m), Frame::Double(s)]),
            (true, true) => out.push(Frame::Array(vec![Frame::Bulk(m), Frame::Double(s)])),
        }
    }
    Frame::Array(out)
}

/// `ZRANDMEMBER key [count [WITHSCORES]]`
pub(crate) fn zrandmember(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let count = RandomCount::parse(ctx, args, Some("withscores"))?;
    let (key, db, now, resp3) = (&args[1], ctx.db(), ctx.now, resp3(ctx));
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    let mut picker = Picker::from_shard(shard);
    let reply = read_in(shard, db, key, now, |z: &ZSet| {
        let Some(count) = count else {
            let m = z
                .at_rank(picker.below(z.len()))
                .map(|(m, _)| Bytes::copy_from_slice(m));
            return Some(Frame::bulk_or_null(m));
        };
        let picks = count
            .indices(&mut picker, z.len())?
            .into_iter()
            .filter_map(|i| z.at_rank(i).map(|(m, s)| (Bytes::copy_from_slice(m), s)))
            .collect();
        Some(scored_reply(picks, count.paired, resp3))
    })?;
    drop(ks);
    random_reply(ctx, reply, count.is_some())
}

/// `ZSCAN key cursor [MATCH pattern] [COUNT count]`. Scores are bulk
/// strings in both protocols, as in Redis.
pub(crate) fn zscan(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    scan_coll(ctx, args, |z: &ZSet, cursor, count, pass, items| {
        z.scan(cursor, count, |m, s| {
            if pass(m) {
                items.extend([
                    Frame::Bulk(Bytes::copy_from_slice(m)),
                    Frame::Bulk(f64_bytes(s)),
                ]);
            }
        })
    })
}
