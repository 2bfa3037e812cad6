//! Hash commands: HSET and friends, counters, HRANDFIELD, HSCAN.

use bytes::Bytes;
use ferrum_proto::{BulksKind, Frame};
use ferrum_store::types::Hash;
use ferrum_store::StoreError;

use super::coll::{
    bulks, random_reply, read, read_in, reply_writer, resp3, scan_coll, write, write_count, Picker,
    RandomCount,
};
use super::error::{HASH_NOT_FLOAT, HASH_NOT_INTEGER, NAN_OR_INFINITY};
use super::parse::{f64_bytes, float_arg, i64_bytes, int_arg, parse_f64, parse_i64};
use super::{CmdError, CmdResult, Ctx};

fn set_pairs(ctx: &mut Ctx<'_>, args: &[Bytes], name: &str) -> Result<usize, CmdError> {
    if args.len() % 2 != 0 {
        return Err(CmdError::Arity(name.to_owned()));
    }
    let added = write(ctx, &args[1], true, |h: &mut Hash| {
        args[2..]
            .chunks_exact(2)
            .filter(|fv| h.set(&fv[0], &fv[1]))
            .count()
    })?;
    Ok(added.unwrap_or(0))
}

pub(crate) fn hset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    Ok(Frame::Integer(set_pairs(ctx, args, "hset")? as i64))
}

pub(crate) fn hmset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    set_pairs(ctx, args, "hmset")?;
    Ok(Frame::ok())
}

pub(crate) fn hsetnx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let added = write_count(ctx, &args[1], true, |h: &mut Hash| {
        usize::from(h.get(&args[2]).is_none() && h.set(&args[2], &args[3]))
    })?;
    Ok(Frame::Integer(added as i64))
}

pub(crate) fn hget(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let v = read(ctx, &args[1], |h: &Hash| {
        h.get(&args[2]).map(Bytes::copy_from_slice)
    })?;
    Ok(Frame::bulk_or_null(v.flatten()))
}

pub(crate) fn hmget(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let fields = &args[2..];
    let got = read(ctx, &args[1], |h: &Hash| {
        fields
            .iter()
            .map(|f| Frame::bulk_or_null(h.get(f).map(Bytes::copy_from_slice)))
            .collect()
    })?;
    Ok(Frame::Array(
        got.unwrap_or_else(|| vec![Frame::Null; fields.len()]),
    ))
}

pub(crate) fn hdel(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let n = write_count(ctx, &args[1], false, |h: &mut Hash| {
        args[2..].iter().filter(|f| h.remove(f)).count()
    })?;
    Ok(Frame::Integer(n as i64))
}

pub(crate) fn hlen(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let n = read(ctx, &args[1], |h: &Hash| h.len())?;
    Ok(Frame::Integer(n.unwrap_or(0) as i64))
}

pub(crate) fn hexists(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let found = read(ctx, &args[1], |h: &Hash| h.get(&args[2]).is_some())?;
    Ok(Frame::Integer(i64::from(found == Some(true))))
}

pub(crate) fn hstrlen(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let n = read(ctx, &args[1], |h: &Hash| {
        h.get(&args[2]).map_or(0, |v| v.len())
    })?;
    Ok(Frame::Integer(n.unwrap_or(0) as i64))
}

pub(crate) fn hgetall(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let out = read(ctx, &args[1], |h: &Hash| {
        let mut w = reply_writer(2 * h.len());
        for (f, v) in h.iter() {
            w.push(f);
            w.push(v);
        }
        w.finish(BulksKind::Map)
    })?;
    Ok(out.unwrap_or(Frame::Map(Vec::new())))
}

pub(crate) fn hkeys(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let out = read(ctx, &args[1], |h: &Hash| bulks(h.iter().map(|(f, _)| f)))?;
    Ok(out.unwrap_or(Frame::Array(Vec::new())))
}

pub(crate) fn hvals(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let out = read(ctx, &args[1], |h: &Hash| bulks(h.iter().map(|(_, v)| v)))?;
    Ok(out.unwrap_or(Frame::Array(Vec::new())))
}

pub(crate) fn hincrby(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let by = int_arg(&args[3])?;
    let r = write(ctx, &args[1], true, |h: &mut Hash| {
        let cur = match h.get(&args[2]) {
            Some(v) => parse_i64(v).ok_or_else(|| CmdError::msg(HASH_NOT_INTEGER))?,
            None => 0,
        };
        let n = cur.checked_add(by).ok_or(StoreError::Overflow)?;
        h.set(&args[2], &i64_bytes(n));
        Ok::<_, CmdError>(n)
    })?;
    r.map_or(Ok(Frame::Integer(0)), |r| r.map(Frame::Integer))
}

pub(crate) fn hincrbyfloat(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let by = float_arg(&args[3])?;
    if !by.is_finite() {
        return Err(CmdError::msg(NAN_OR_INFINITY));
    }
    let r = write(ctx, &args[1], true, |h: &mut Hash| {
        let cur = match h.get(&args[2]) {
            Some(v) => parse_f64(v).ok_or_else(|| CmdError::msg(HASH_NOT_FLOAT))?,
            None => 0.0,
        };
        let n = cur + by;
        if !n.is_finite() {
            return Err(StoreError::NanOrInfinity.into());
        }
        let text = f64_bytes(n);
        h.set(&args[2], &text);
        Ok::<_, CmdError>(text)
    })?;
    r.map_or(Ok(Frame::Null), |r| r.map(Frame::Bulk))
}

/// `HRANDFIELD key [count [WITHVALUES]]`
pub(crate) fn hrandfield(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let count = RandomCount::parse(ctx, args, Some("withvalues"))?;
    let (key, db, now, resp3) = (&args[1], ctx.db(), ctx.now, resp3(ctx));
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    let mut picker = Picker::from_shard(shard);
    let reply = read_in(shard, db, key, now, |h: &Hash| {
        let Some(count) = count else {
            return Some(Frame::Bulk(
                h.at(picker.below(h.len()))
                    .map(|(f, _)| Bytes::copy_from_slice(f))
                    .unwrap_or_default(),
            ));
        };
        let picks = count.indices(&mut picker, h.len())?;
        let mut out = Vec::with_capacity(picks.len() * 2);
        for (f, v) in picks.into_iter().filter_map(|i| h.at(i)) {
            match (count.paired, resp3) {
                (true, true) => out.push(Frame::Array(vec![
                    Frame::Bulk(Bytes::copy_from_slice(f)),
                    Frame::Bulk(Bytes::copy_from_slice(v)),
                ])),
                (true, false) => out.extend([
                    Frame::Bulk(Bytes::copy_from_slice(f)),
                    Frame::Bulk(Bytes::copy_from_slice(v)),
                ]),
                (false, _) => out.push(Frame::Bulk(Bytes::copy_from_slice(f))),
            }
        }
        Some(Frame::Array(out))
    })?;
    drop(ks);
    random_reply(ctx, reply, count.is_some())
}

/// `HSCAN key cursor [MATCH pattern] [COUNT count]`
pub(crate) fn hscan(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    scan_coll(ctx, args, |h: &Hash, cursor, count, pass, items| {
        h.scan(cursor, count, |f, v| {
            if pass(f) {
                items.extend([
                    Frame::Bulk(Bytes::copy_from_slice(f)),
                    Frame::Bulk(Bytes::copy_from_slice(v)),
                ]);
            }
        })
    })
}
