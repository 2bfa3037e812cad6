//! Set commands: membership, random picks, SMOVE, set algebra, SSCAN.

use bytes::Bytes;
use ferrum_proto::{BulksKind, Frame};
use ferrum_store::types::Set;
use ferrum_store::{Locked, Millis};

use super::coll::{
    bulk_set, bulks, check_type, positive_count, random_reply, read, read_in, reply_writer,
    scan_coll, store_in, write_count, write_in, Picker, RandomCount,
};
use super::error::{LIMIT_NEGATIVE, NUMKEYS_POSITIVE, NUMKEYS_TOO_MANY};
use super::parse::{is, parse_i64};
use super::{CmdError, CmdResult, Ctx};

pub(crate) fn sadd(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let n = write_count(ctx, &args[1], true, |s: &mut Set| {
        args[2..].iter().filter(|m| s.insert(m)).count()
    })?;
    Ok(Frame::Integer(n as i64))
}

pub(crate) fn srem(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let n = write_count(ctx, &args[1], false, |s: &mut Set| {
        args[2..].iter().filter(|m| s.remove(m)).count()
    })?;
    Ok(Frame::Integer(n as i64))
}

pub(crate) fn smembers(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let out = read(ctx, &args[1], |s: &Set| {
        let mut w = reply_writer(s.len());
        s.for_each(|m| w.push(m));
        w.finish(BulksKind::Set)
    })?;
    Ok(out.unwrap_or(Frame::Set(Vec::new())))
}

pub(crate) fn sismember(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let found = read(ctx, &args[1], |s: &Set| s.contains(&args[2]))?;
    Ok(Frame::Integer(i64::from(found == Some(true))))
}

pub(crate) fn smismember(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let members = &args[2..];
    let found = read(ctx, &args[1], |s: &Set| {
        members
            .iter()
            .map(|m| Frame::Integer(i64::from(s.contains(m))))
            .collect()
    })?;
    Ok(Frame::Array(
        found.unwrap_or_else(|| vec![Frame::Integer(0); members.len()]),
    ))
}

pub(crate) fn scard(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let n = read(ctx, &args[1], |s: &Set| s.len())?;
    Ok(Frame::Integer(n.unwrap_or(0) as i64))
}

/// `SPOP key [count]`
pub(crate) fn spop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() > 3 {
        return Err(CmdError::syntax());
    }
    let count = args.get(2).map(|c| positive_count(c)).transpose()?;
    let (key, db, now) = (&args[1], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    let mut picker = Picker::from_shard(shard);
    let Some(count) = count else {
        // One member, straight into the reply: no list of picks.
        let popped = write_in(shard, db, key, now, false, |s: &mut Set| {
            (!s.is_empty())
                .then(|| s.remove_at(picker.below(s.len())))
                .flatten()
        })?;
        return Ok(Frame::bulk_or_null(popped.flatten()));
    };
    let popped = write_in(shard, db, key, now, false, |s: &mut Set| {
        let n = count.min(s.len());
        (0..n)
            .filter_map(|_| s.remove_at(picker.below(s.len())))
            .map(Frame::Bulk)
            .collect()
    })?;
    Ok(Frame::Set(popped.unwrap_or_default()))
}

/// `SRANDMEMBER key [count]`
pub(crate) fn srandmember(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let count = RandomCount::parse(ctx, args, None)?;
    let (key, db, now) = (&args[1], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    let mut picker = Picker::from_shard(shard);
    let reply = read_in(shard, db, key, now, |s: &Set| match count {
        None => Some(Frame::bulk_or_null(s.at(picker.below(s.len())))),
        Some(c) => c
            .indices(&mut picker, s.len())
            .map(|picks| bulks(picks.into_iter().filter_map(|i| s.at(i)))),
    })?;
    drop(ks);
    random_reply(ctx, reply, count.is_some())
}

/// `SMOVE source destination member`
pub(crate) fn smove(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (src, dst, m, db, now) = (&args[1], &args[2], &args[3], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_keys([&src[..], &dst[..]]);
    check_type::<Set>(ks.shard(src), db, src, now)?;
    check_type::<Set>(ks.shard(dst), db, dst, now)?;
    if src == dst {
        let found = read_in(ks.shard(src), db, src, now, |s: &Set| s.contains(m))?;
        return Ok(Frame::Integer(i64::from(found == Some(true))));
    }
    let moved = write_in(ks.shard(src), db, src, now, false, |s: &mut Set| {
        s.remove(m)
    })?;
    if moved != Some(true) {
        return Ok(Frame::Integer(0));
    }
    // A member the destination already holds leaves it unchanged, so a
    // WATCH on it holds, as in Redis.
    ks.shard(dst).update(
        db,
        dst,
        now,
        true,
        |s: &mut Set| s.insert(m),
        |added| *added,
    )?;
    Ok(Frame::Integer(1))
}

/// Which set-algebra operation.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Inter,
    Union,
    Diff,
}

/// Computes `op` over `keys` (missing keys are empty sets), stopping an
/// intersection early at `limit` members (0 = no limit).
fn combine(
    ks: &mut Locked<'_>,
    db: usize,
    keys: &[Bytes],
    now: Millis,
    op: Op,
    limit: usize,
) -> Result<Set, CmdError> {
    // Look every key up first: a WRONGTYPE anywhere fails the whole command.
    let mut sizes = Vec::with_capacity(keys.len());
    for k in keys {
        sizes.push(read_in(ks.shard(k), db, k, now, |s: &Set| s.len())?);
    }
    let mut out = Set::new();
    match op {
        Op::Union => {
            for k in keys {
                read_in(ks.shard(k), db, k, now, |s: &Set| {
                    for m in s.iter() {
                        out.insert(&m);
                    }
                })?;
            }
        }
        Op::Inter => {
            if sizes.iter().any(Option::is_none) {
                return Ok(out);
            }
            // Start from the smallest set and filter by the others.
            let smallest = (0..keys.len()).min_by_key(|&i| sizes[i]).unwrap_or(0);
            let mut candidates: Vec<Bytes> = read_in(
                ks.shard(&keys[smallest]),
                db,
                &keys[smallest],
                now,
                |s: &Set| s.iter().collect(),
            )?
            .unwrap_or_default();
            for (i, k) in keys.iter().enumerate() {
                if i != smallest {
                    read_in(ks.shard(k), db, k, now, |s: &Set| {
                        candidates.retain(|m| s.contains(m))
                    })?;
                }
            }
            for m in candidates {
                if limit > 0 && out.len() >= limit {
                    break;
                }
                out.insert(&m);
            }
        }
        Op::Diff => {
            let mut candidates: Vec<Bytes> =
                read_in(ks.shard(&keys[0]), db, &keys[0], now, |s: &Set| {
                    s.iter().collect()
                })?
                .unwrap_or_default();
            for k in &keys[1..] {
                read_in(ks.shard(k), db, k, now, |s: &Set| {
                    candidates.retain(|m| !s.contains(m))
                })?;
            }
            for m in candidates {
                out.insert(&m);
            }
        }
    }
    Ok(out)
}

fn algebra(ctx: &mut Ctx<'_>, args: &[Bytes], op: Op) -> CmdResult {
    let (keys, db, now) = (&args[1..], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_keys(keys.iter().map(|k| &k[..]));
    let out = combine(&mut ks, db, keys, now, op, 0)?;
    Ok(bulk_set(out.iter()))
}

fn algebra_store(ctx: &mut Ctx<'_>, args: &[Bytes], op: Op) -> CmdResult {
    let (dst, keys, db, now) = (&args[1], &args[2..], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_keys(args[1..].iter().map(|k| &k[..]));
    let out = combine(&mut ks, db, keys, now, op, 0)?;
    let n = out.len();
    store_in(ks.shard(dst), db, dst, now, out);
    Ok(Frame::Integer(n as i64))
}

pub(crate) fn sinter(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    algebra(ctx, args, Op::Inter)
}

pub(crate) fn sunion(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    algebra(ctx, args, Op::Union)
}

pub(crate) fn sdiff(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    algebra(ctx, args, Op::Diff)
}

pub(crate) fn sinterstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    algebra_store(ctx, args, Op::Inter)
}

pub(crate) fn sunionstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    algebra_store(ctx, args, Op::Union)
}

pub(crate) fn sdiffstore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    algebra_store(ctx, args, Op::Diff)
}

/// Parses a `numkeys key [key ...]` prefix starting at `args[at]`; returns
/// the keys and the arguments after them.
pub(crate) fn numkeys(args: &[Bytes], at: usize) -> Result<(&[Bytes], &[Bytes]), CmdError> {
    // Not a number and not positive get the same text, as in Redis.
    let n = match parse_i64(&args[at]) {
        Some(n) if n > 0 => n,
        _ => return Err(CmdError::msg(NUMKEYS_POSITIVE)),
    };
    let rest = &args[at + 1..];
    if n as u64 > rest.len() as u64 {
        return Err(CmdError::msg(NUMKEYS_TOO_MANY));
    }
    Ok(rest.split_at(n as usize))
}

/// `SINTERCARD numkeys key [key ...] [LIMIT limit]`
pub(crate) fn sintercard(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (keys, opts) = numkeys(args, 1)?;
    let limit = match opts {
        [] => 0,
        // Not a number and negative get the same text, as in Redis.
        [l, n] if is(l, "limit") => match parse_i64(n) {
            Some(v) if v >= 0 => v as usize,
            _ => return Err(CmdError::msg(LIMIT_NEGATIVE)),
        },
        _ => return Err(CmdError::syntax()),
    };
    let (db, now) = (ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_keys(keys.iter().map(|k| &k[..]));
    let out = combine(&mut ks, db, keys, now, Op::Inter, limit)?;
    Ok(Frame::Integer(out.len() as i64))
}

/// `SSCAN key cursor [MATCH pattern] [COUNT count]`
pub(crate) fn sscan(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    scan_coll(ctx, args, |s: &Set, cursor, count, pass, items| {
        s.scan(cursor, count, |m| {
            if pass(m) {
                items.push(Frame::Bulk(Bytes::copy_from_slice(m)));
            }
        })
    })
}
