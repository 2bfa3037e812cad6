//! Sorted-set ranges: ZRANGE (BYSCORE, BYLEX, REV, LIMIT, WITHSCORES), the
//! older ZRANGEBYSCORE / ZREVRANGE / ZREVRANGEBYSCORE / ZRANGEBYLEX /
//! ZREVRANGEBYLEX forms, ZRANGESTORE, and ZREMRANGEBYRANK / BYSCORE / BYLEX.
//!
//! Every range first becomes a rank interval in O(log n) (see
//! `ZSet::score_ranks`), then only the members in it are visited.

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::types::{LexBound, ScoreBound, ZSet};

use super::args::Args;
use super::coll::{read, read_in, resp3, store_in, write_count};
use super::error::{ZRANGE_BYLEX_WITHSCORES, ZRANGE_LIMIT_BY_RANK};
use super::parse::{int_arg, is};
use super::zset::{lex_bound, score_bound, scored_reply};
use super::{CmdError, CmdResult, Ctx};

/// What a range selects.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum By {
    /// Ranks `start..=stop`, Redis-style (negative from the end).
    Rank(i64, i64),
    /// Scores between two bounds (always given low, high).
    Score(ScoreBound, ScoreBound),
    /// Members between two lex bounds (always given low, high).
    Lex(LexBound, LexBound),
}

/// A parsed range request.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Range {
    pub(crate) by: By,
    pub(crate) rev: bool,
    /// `LIMIT offset count`; a negative count means "all".
    pub(crate) limit: Option<(i64, i64)>,
    pub(crate) with_scores: bool,
}

impl Range {
    /// The selected members with their scores, in reply order.
    pub(crate) fn collect(&self, z: &ZSet) -> Vec<(Bytes, f64)> {
        let len = z.len();
        let (first, end) = match &self.by {
            By::Rank(start, stop) => {
                let (s, e) = (resolve(*start, len), resolve(*stop, len));
                if s > e || s >= len as i64 || e < 0 {
                    return Vec::new();
                }
                let (s, e) = (s.max(0) as usize, (e as usize).min(len - 1));
                let (a, b) = if self.rev {
                    (len - 1 - e, len - 1 - s)
                } else {
                    (s, e)
                };
                let mut v = z.range_by_rank(a, b + 1);
                if self.rev {
                    v.reverse();
                }
                return v;
            }
            By::Score(min, max) => z.score_ranks(*min, *max),
            By::Lex(min, max) => z.lex_ranks(min, max),
        };
        let (offset, count) = self.limit.unwrap_or((0, -1));
        if offset < 0 {
            return Vec::new();
        }
        let avail = end - first;
        let offset = (offset as u64).min(avail as u64) as usize;
        let take = if count < 0 {
            avail - offset
        } else {
            (count as u64).min((avail - offset) as u64) as usize
        };
        if self.rev {
            let hi = end - offset;
            let mut v = z.range_by_rank(hi - take, hi);
            v.reverse();
            v
        } else {
            z.range_by_rank(first + offset, first + offset + take)
        }
    }
}

fn resolve(i: i64, len: usize) -> i64 {
    if i < 0 {
        i + len as i64
    } else {
        i
    }
}

/// Parses `[REV] [LIMIT offset count] [WITHSCORES]` (and `BYSCORE`/`BYLEX`
/// when `modern`), given the two bound arguments as written.
fn parse_range(
    lo: &[u8],
    hi: &[u8],
    opts: &[Bytes],
    modern: bool,
    mut by: u8,
    mut rev: bool,
) -> Result<Range, CmdError> {
    let (mut limit, mut with_scores) = (None, false);
    let mut opts = Args::new(opts);
    while let Some(a) = opts.next() {
        if is(a, "withscores") {
            with_scores = true;
        } else if modern && is(a, "byscore") {
            by = b's';
        } else if modern && is(a, "bylex") {
            by = b'l';
        } else if modern && is(a, "rev") {
            rev = true;
        } else if is(a, "limit") && opts.remaining() >= 2 {
            limit = Some((opts.int()?, opts.int()?));
        } else {
            return Err(CmdError::syntax());
        }
    }
    if with_scores && by == b'l' {
        return Err(CmdError::msg(ZRANGE_BYLEX_WITHSCORES));
    }
    if limit.is_some() && by == b'r' {
        return Err(CmdError::msg(ZRANGE_LIMIT_BY_RANK));
    }
    // With REV, BYSCORE and BYLEX take the high bound first.
    let (lo, hi) = if rev && by != b'r' {
        (hi, lo)
    } else {
        (lo, hi)
    };
    let by = match by {
        b's' => By::Score(score_bound(lo)?, score_bound(hi)?),
        b'l' => By::Lex(lex_bound(lo)?, lex_bound(hi)?),
        _ => By::Rank(int_arg(lo)?, int_arg(hi)?),
    };
    Ok(Range {
        by,
        rev,
        limit,
        with_scores,
    })
}

fn reply(ctx: &mut Ctx<'_>, key: &Bytes, range: Range) -> CmdResult {
    let nested = resp3(ctx);
    let items = read(ctx, key, |z: &ZSet| range.collect(z))?.unwrap_or_default();
    Ok(scored_reply(items, range.with_scores, nested))
}

/// `ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]`
pub(crate) fn zrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let range = parse_range(&args[2], &args[3], &args[4..], true, b'r', false)?;
    reply(ctx, &args[1], range)
}

pub(crate) fn zrevrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let range = parse_range(&args[2], &args[3], &args[4..], false, b'r', true)?;
    reply(ctx, &args[1], range)
}

pub(crate) fn zrangebyscore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let range = parse_range(&args[2], &args[3], &args[4..], false, b's', false)?;
    reply(ctx, &args[1], range)
}

pub(crate) fn zrevrangebyscore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let range = parse_range(&args[2], &args[3], &args[4..], false, b's', true)?;
    reply(ctx, &args[1], range)
}

pub(crate) fn zrangebylex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let range = parse_range(&args[2], &args[3], &args[4..], false, b'l', false)?;
    reply(ctx, &args[1], range)
}

pub(crate) fn zrevrangebylex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let range = parse_range(&args[2], &args[3], &args[4..], false, b'l', true)?;
    reply(ctx, &args[1], range)
}

/// `ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]`:
/// stores the range as a new sorted set (deleting `dst` when it is empty)
/// and replies with its size. `WITHSCORES` is a syntax error here.
pub(crate) fn zrangestore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args[5..].iter().any(|a| is(a, "withscores")) {
        return Err(CmdError::syntax());
    }
    let range = parse_range(&args[3], &args[4], &args[5..], true, b'r', false)?;
    let (dst, src, db, now) = (&args[1], &args[2], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_keys([&dst[..], &src[..]]);
    let items =
        read_in(ks.shard(src), db, src, now, |z: &ZSet| range.collect(z))?.unwrap_or_default();
    let mut out = ZSet::new();
    for (m, s) in &items {
        out.insert(m, *s);
    }
    store_in(ks.shard(dst), db, dst, now, out);
    Ok(Frame::Integer(items.len() as i64))
}

fn remove_range(ctx: &mut Ctx<'_>, key: &Bytes, by: By) -> CmdResult {
    let range = Range {
        by,
        rev: false,
        limit: None,
        with_scores: false,
    };
    let n = write_count(ctx, key, false, |z: &mut ZSet| {
        let gone = range.collect(z);
        for (m, _) in &gone {
            z.remove(m);
        }
        gone.len()
    })?;
    Ok(Frame::Integer(n as i64))
}

pub(crate) fn zremrangebyrank(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let by = By::Rank(int_arg(&args[2])?, int_arg(&args[3])?);
    remove_range(ctx, &args[1], by)
}

pub(crate) fn zremrangebyscore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let by = By::Score(score_bound(&args[2])?, score_bound(&args[3])?);
    remove_range(ctx, &args[1], by)
}

pub(crate) fn zremrangebylex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let by = By::Lex(lex_bound(&args[2])?, lex_bound(&args[3])?);
    remove_range(ctx, &args[1], by)
}
