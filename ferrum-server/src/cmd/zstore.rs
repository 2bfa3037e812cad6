//! Sorted-set algebra: `ZUNION`, `ZINTER`, `ZDIFF` (replying), their
//! `...STORE` forms and `ZINTERCARD`: combining sorted sets (and plain sets,
//! whose members count with score 1) with `WEIGHTS` and `AGGREGATE`.

use std::collections::{HashMap, HashSet};

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::types::{Set, ZSet};
use ferrum_store::{Access, StoreError, Typed};

use super::args::Args;
use super::coll::resp3;
use super::coll::store_in;
use super::error::LIMIT_NEGATIVE;
use super::error::{numkeys_zero, WEIGHT_FLOAT};
use super::parse::{int_arg, is, parse_f64, parse_i64};
use super::zset::scored_reply;
use super::{CmdError, CmdResult, Ctx};

#[derive(Clone, Copy)]
enum Aggregate {
    Sum,
    Min,
    Max,
}

impl Aggregate {
    fn apply(self, a: f64, b: f64) -> f64 {
        match self {
            // inf + -inf is NaN; Redis makes it 0.
            Aggregate::Sum => {
                let s = a + b;
                if s.is_nan() {
                    0.0
                } else {
                    s
                }
            }
            Aggregate::Min => a.min(b),
            Aggregate::Max => a.max(b),
        }
    }
}

fn weighted(score: f64, weight: f64) -> f64 {
    let v = score * weight;
    // 0 * inf is NaN; Redis makes it 0.
    if v.is_nan() {
        0.0
    } else {
        v
    }
}

/// One input's members and scores, or `None` for a missing key.
fn load(v: ferrum_store::ValueRef<'_>) -> Result<Vec<(Bytes, f64)>, StoreError> {
    if let Ok(z) = ZSet::of(&v) {
        return Ok(z.range_by_rank(0, z.len()));
    }
    let s = Set::of(&v)?;
    Ok(s.iter().map(|m| (m.clone(), 1.0)).collect())
}

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Union,
    Inter,
    Diff,
}

/// The options after the keys: `WEIGHTS`, `AGGREGATE` (union and
/// intersection only) and `WITHSCORES` (replying forms only).
struct Opts {
    weights: Vec<f64>,
    agg: Aggregate,
    with_scores: bool,
}

/// Parses `numkeys key [key ...]` at `args[at]`, with the sorted-set
/// commands' errors: a count below 1 needs "at least 1 input key", a count
/// beyond the arguments is a syntax error.
fn zkeys<'a>(
    args: &'a [Bytes],
    at: usize,
    name: &str,
) -> Result<(&'a [Bytes], &'a [Bytes]), CmdError> {
    let n = int_arg(&args[at])?;
    if n <= 0 {
        return Err(CmdError::msg(numkeys_zero(name)));
    }
    let rest = &args[at + 1..];
    if n as u64 > rest.len() as u64 {
        return Err(CmdError::syntax());
    }
    Ok(rest.split_at(n as usize))
}

fn parse_opts(opts: &[Bytes], nkeys: usize, op: Op, reply: bool) -> Result<Opts, CmdError> {
    let mut o = Opts {
        weights: vec![1.0; nkeys],
        agg: Aggregate::Sum,
        with_scores: false,
    };
    let mut opts = Args::new(opts);
    while let Some(opt) = opts.next() {
        let rest = opts.remaining();
        if op != Op::Diff && is(opt, "weights") && rest >= nkeys {
            for (w, arg) in o.weights.iter_mut().zip(opts.next_n(nkeys)?) {
                *w = parse_f64(arg).ok_or_else(|| CmdError::msg(WEIGHT_FLOAT))?;
            }
        } else if op != Op::Diff && is(opt, "aggregate") && rest >= 1 {
            let a = opts.expect()?;
            o.agg = match () {
                _ if is(a, "sum") => Aggregate::Sum,
                _ if is(a, "min") => Aggregate::Min,
                _ if is(a, "max") => Aggregate::Max,
                _ => return Err(CmdError::syntax()),
            };
        } else if reply && is(opt, "withscores") {
            o.with_scores = true;
        } else {
            return Err(CmdError::syntax());
        }
    }
    Ok(o)
}

/// Computes the combination of `keys` in locked shards.
///
/// # Errors
///
/// `WRONGTYPE` when an input is neither a sorted set nor a set.
fn compute(
    ks: &mut ferrum_store::Locked<'_>,
    db: usize,
    now: ferrum_store::Millis,
    keys: &[Bytes],
    op: Op,
    o: &Opts,
) -> Result<ZSet, CmdError> {
    let mut inputs = Vec::with_capacity(keys.len());
    for k in keys {
        let items = match ks.shard(k).lookup(db, k, now, Access::Read) {
            Some(e) => Some(load(e.value())?),
            None => None,
        };
        inputs.push(items);
    }
    let mut out = ZSet::new();
    match op {
        Op::Inter => {
            if inputs.iter().all(Option::is_some) {
                // Start from the smallest input; keep members found in all.
                let smallest = (0..inputs.len())
                    .min_by_key(|&i| inputs[i].as_ref().map_or(0, Vec::len))
                    .unwrap_or(0);
                let lookups: Vec<HashMap<&[u8], f64>> = inputs
                    .iter()
                    .map(|v| v.iter().flatten().map(|(m, s)| (&m[..], *s)).collect())
                    .collect();
                for (m, _) in inputs[smallest].iter().flatten() {
                    let mut acc = None;
                    for (j, lk) in lookups.iter().enumerate() {
                        let Some(&sj) = lk.get(&m[..]) else {
                            acc = None;
                            break;
                        };
                        let w = weighted(sj, o.weights[j]);
                        acc = Some(acc.map_or(w, |a| o.agg.apply(a, w)));
                    }
                    if let Some(score) = acc {
                        out.insert(m, score);
                    }
                }
            }
        }
        Op::Union => {
            for (j, items) in inputs.iter().enumerate() {
                for (m, s) in items.iter().flatten() {
                    let w = weighted(*s, o.weights[j]);
                    let score = out.score(m).map_or(w, |cur| o.agg.apply(cur, w));
                    out.insert(m, score);
                }
            }
        }
        Op::Diff => {
            let others: HashSet<&[u8]> = inputs[1..]
                .iter()
                .flatten()
                .flat_map(|v| v.iter().map(|(m, _)| &m[..]))
                .collect();
            for (m, s) in inputs[0].iter().flatten() {
                if !others.contains(&m[..]) {
                    out.insert(m, *s);
                }
            }
        }
    }
    Ok(out)
}

/// The `...STORE` forms: `dst numkeys key [key ...] [options]`.
fn store(ctx: &mut Ctx<'_>, args: &[Bytes], op: Op, name: &str) -> CmdResult {
    let dst = &args[1];
    let (keys, rest) = zkeys(args, 2, name)?;
    let o = parse_opts(rest, keys.len(), op, false)?;
    let (db, now) = (ctx.db(), ctx.now);
    let mut ks = ctx
        .store()
        .lock_keys(args[1..2].iter().chain(keys).map(|k| &k[..]));
    let out = compute(&mut ks, db, now, keys, op, &o)?;
    let n = out.len();
    store_in(ks.shard(dst), db, dst, now, out);
    Ok(Frame::Integer(n as i64))
}

/// The replying forms: `numkeys key [key ...] [options] [WITHSCORES]`.
fn reply(ctx: &mut Ctx<'_>, args: &[Bytes], op: Op, name: &str) -> CmdResult {
    let (keys, rest) = zkeys(args, 1, name)?;
    let o = parse_opts(rest, keys.len(), op, true)?;
    let (db, now, nested) = (ctx.db(), ctx.now, resp3(ctx));
    let mut ks = ctx.store().lock_keys(keys.iter().map(|k| &k[..]));
    let out = compute(&mut ks, db, now, keys, op, &o)?;
    let items = out.range_by_rank(0, out.len());
    Ok(scored_reply(items, o.with_scores, nested))
}

/// `ZUNIONSTORE destination numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX]`
pub(crate) fn zunionstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    store(ctx, args, Op::Union, "zunionstore")
}

/// `ZINTERSTORE destination numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX]`
pub(crate) fn zinterstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    store(ctx, args, Op::Inter, "zinterstore")
}

/// `ZDIFFSTORE destination numkeys key [key ...]`
pub(crate) fn zdiffstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    store(ctx, args, Op::Diff, "zdiffstore")
}

/// `ZUNION numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]`
pub(crate) fn zunion(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    reply(ctx, args, Op::Union, "zunion")
}

/// `ZINTER numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]`
pub(crate) fn zinter(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    reply(ctx, args, Op::Inter, "zinter")
}

/// `ZDIFF numkeys key [key ...] [WITHSCORES]`
pub(crate) fn zdiff(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    reply(ctx, args, Op::Diff, "zdiff")
}

/// `ZINTERCARD numkeys key [key ...] [LIMIT limit]`
pub(crate) fn zintercard(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (keys, rest) = zkeys(args, 1, "zintercard")?;
    let limit = match rest {
        [] => 0,
        [l, n] if is(l, "limit") => match parse_i64(n) {
            Some(v) if v >= 0 => v as usize,
            _ => return Err(CmdError::msg(LIMIT_NEGATIVE)),
        },
        _ => return Err(CmdError::syntax()),
    };
    let o = parse_opts(&[], keys.len(), Op::Inter, false)?;
    let (db, now) = (ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_keys(keys.iter().map(|k| &k[..]));
    let n = compute(&mut ks, db, now, keys, Op::Inter, &o)?.len();
    let n = if limit > 0 { n.min(limit) } else { n };
    Ok(Frame::Integer(n as i64))
}
