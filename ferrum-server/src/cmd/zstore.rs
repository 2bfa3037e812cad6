//! `ZUNIONSTORE` and `ZINTERSTORE`: combining sorted sets (and plain sets,
//! whose members count with score 1) with `WEIGHTS` and `AGGREGATE`.

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::types::{Set, ZSet};
use ferrum_store::{Access, StoreError, Typed};

use super::coll::store_in;
use super::error::{NUMKEYS_ZERO, WEIGHT_FLOAT};
use super::parse::{is, parse_f64};
use super::set::numkeys;
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

fn combine(ctx: &mut Ctx<'_>, args: &[Bytes], inter: bool, name: &str) -> CmdResult {
    let dst = &args[1];
    if super::parse::parse_i64(&args[2]) == Some(0) {
        return Err(CmdError::msg(format!("{NUMKEYS_ZERO} '{name}' command")));
    }
    let (keys, opts) = numkeys(args, 2)?;
    let mut weights = vec![1.0; keys.len()];
    let mut agg = Aggregate::Sum;
    let mut i = 0;
    while i < opts.len() {
        if is(&opts[i], "weights") && opts.len() - i > keys.len() {
            for (w, arg) in weights.iter_mut().zip(&opts[i + 1..]) {
                *w = parse_f64(arg).ok_or_else(|| CmdError::msg(WEIGHT_FLOAT))?;
            }
            i += keys.len() + 1;
        } else if is(&opts[i], "aggregate") && i + 1 < opts.len() {
            let a = &opts[i + 1];
            agg = match () {
                _ if is(a, "sum") => Aggregate::Sum,
                _ if is(a, "min") => Aggregate::Min,
                _ if is(a, "max") => Aggregate::Max,
                _ => return Err(CmdError::syntax()),
            };
            i += 2;
        } else {
            return Err(CmdError::syntax());
        }
    }
    let (db, now) = (ctx.db(), ctx.now);
    let mut ks = ctx
        .store()
        .lock_keys(args[1..2].iter().chain(keys).map(|k| &k[..]));
    let mut inputs = Vec::with_capacity(keys.len());
    for k in keys {
        let items = match ks.shard(k).lookup(db, k, now, Access::Read) {
            Some(e) => Some(load(e.value())?),
            None => None,
        };
        inputs.push(items);
    }
    let mut out = ZSet::new();
    if inter {
        if inputs.iter().all(Option::is_some) {
            // Start from the smallest input; keep members found in all.
            let smallest = (0..inputs.len())
                .min_by_key(|&i| inputs[i].as_ref().map_or(0, Vec::len))
                .unwrap_or(0);
            let lookups: Vec<std::collections::HashMap<&[u8], f64>> = inputs
                .iter()
                .map(|v| v.iter().flatten().map(|(m, s)| (&m[..], *s)).collect())
                .collect();
            for (m, s) in inputs[smallest].iter().flatten() {
                let mut acc = None;
                for (j, lk) in lookups.iter().enumerate() {
                    let Some(&sj) = (if j == smallest {
                        Some(s)
                    } else {
                        lk.get(&m[..])
                    }) else {
                        acc = None;
                        break;
                    };
                    let w = weighted(sj, weights[j]);
                    acc = Some(acc.map_or(w, |a| agg.apply(a, w)));
                }
                if let Some(score) = acc {
                    out.insert(m, score);
                }
            }
        }
    } else {
        for (j, items) in inputs.iter().enumerate() {
            for (m, s) in items.iter().flatten() {
                let w = weighted(*s, weights[j]);
                let score = out.score(m).map_or(w, |cur| agg.apply(cur, w));
                out.insert(m, score);
            }
        }
    }
    let n = out.len();
    store_in(ks.shard(dst), db, dst, now, out);
    Ok(Frame::Integer(n as i64))
}

/// `ZUNIONSTORE destination numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX]`
pub(crate) fn zunionstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    combine(ctx, args, false, "zunionstore")
}

/// `ZINTERSTORE destination numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX]`
pub(crate) fn zinterstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    combine(ctx, args, true, "zinterstore")
}
