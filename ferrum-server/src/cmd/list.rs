//! List commands: pushes, pops, indexing, ranges, LPOS, LMOVE.
//!
//! The pop and move steps ([`pop_in`], [`move_in`]) take already locked
//! shards, so blocking variants can call them when a key is served.

use bytes::Bytes;
use ferrum_proto::{BulksKind, Frame};
use ferrum_store::types::{End, List};
use ferrum_store::{Access, Locked, Millis, Shard, StoreError};

use super::args::Args;
use super::coll::{
    bulks, check_type, positive_count, read, reply_writer, write, write_count, write_in,
};
use super::error::{INDEX_RANGE, NO_SUCH_KEY};
use super::error::{LPOS_COUNT_NEGATIVE, LPOS_MAXLEN_NEGATIVE, LPOS_RANK_ZERO};
use super::parse::{int_arg, is, parse_i64};
use super::{CmdError, CmdResult, Ctx};

fn end_arg(b: &[u8]) -> Result<End, CmdError> {
    if is(b, "left") {
        Ok(End::Left)
    } else if is(b, "right") {
        Ok(End::Right)
    } else {
        Err(CmdError::syntax())
    }
}

fn push(ctx: &mut Ctx<'_>, args: &[Bytes], end: End, create: bool) -> CmdResult {
    let len = write(ctx, &args[1], create, |l: &mut List| {
        for v in &args[2..] {
            l.push(end, v);
        }
        l.len()
    })?;
    Ok(Frame::Integer(len.unwrap_or(0) as i64))
}

pub(crate) fn lpush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    push(ctx, args, End::Left, true)
}

pub(crate) fn rpush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    push(ctx, args, End::Right, true)
}

pub(crate) fn lpushx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    push(ctx, args, End::Left, false)
}

pub(crate) fn rpushx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    push(ctx, args, End::Right, false)
}

/// Pops up to `count` elements from `key` in a locked shard; `None` when
/// the key is absent.
///
/// # Errors
///
/// `WRONGTYPE` when the key is not a list.
pub(crate) fn pop_in(
    shard: &mut Shard,
    db: usize,
    key: &Bytes,
    end: End,
    count: usize,
    now: Millis,
) -> Result<Option<Vec<Bytes>>, StoreError> {
    write_in(shard, db, key, now, false, |l: &mut List| {
        l.pop_many(end, count)
    })
}

/// `LPOP key [count]` / `RPOP key [count]`. Without a count the reply is
/// one bulk (or nil); with one it is an array, a nil array for a missing key.
fn pop(ctx: &mut Ctx<'_>, args: &[Bytes], end: End) -> CmdResult {
    if args.len() > 3 {
        let name = if end == End::Left { "lpop" } else { "rpop" };
        return Err(CmdError::Arity(name.to_owned()));
    }
    let count = args.get(2).map(|c| positive_count(c)).transpose()?;
    let (key, db, now) = (&args[1], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let Some(count) = count else {
        let popped = write_in(ks.shard(key), db, key, now, false, |l: &mut List| {
            l.pop(end)
        })?;
        return Ok(Frame::bulk_or_null(popped.flatten()));
    };
    // The elements go straight from the list's nodes into the reply.
    let popped = write_in(ks.shard(key), db, key, now, false, |l: &mut List| {
        let mut w = reply_writer(count.min(l.len()));
        l.pop_many_with(end, count, |v| w.push(v));
        w.finish(BulksKind::Array)
    })?;
    Ok(popped.unwrap_or(Frame::NullArray))
}

pub(crate) fn lpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    pop(ctx, args, End::Left)
}

pub(crate) fn rpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    pop(ctx, args, End::Right)
}

pub(crate) fn llen(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let n = read(ctx, &args[1], |l: &List| l.len())?;
    Ok(Frame::Integer(n.unwrap_or(0) as i64))
}

pub(crate) fn lrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (start, stop) = (int_arg(&args[2])?, int_arg(&args[3])?);
    let out = read(ctx, &args[1], |l: &List| bulks(l.range(start, stop)))?;
    Ok(out.unwrap_or(Frame::Array(Vec::new())))
}

pub(crate) fn lindex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let i = int_arg(&args[2])?;
    let v = read(ctx, &args[1], |l: &List| {
        l.get(i).map(Bytes::copy_from_slice)
    })?;
    Ok(Frame::bulk_or_null(v.flatten()))
}

pub(crate) fn lset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let i = int_arg(&args[2])?;
    match write(ctx, &args[1], false, |l: &mut List| l.set(i, &args[3]))? {
        None => Err(CmdError::msg(NO_SUCH_KEY)),
        Some(false) => Err(CmdError::msg(INDEX_RANGE)),
        Some(true) => Ok(Frame::ok()),
    }
}

/// `LINSERT key BEFORE|AFTER pivot element`
pub(crate) fn linsert(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let after = if is(&args[2], "after") {
        true
    } else if is(&args[2], "before") {
        false
    } else {
        return Err(CmdError::syntax());
    };
    let r = write(ctx, &args[1], false, |l: &mut List| {
        l.insert_at_pivot(&args[3], &args[4], after)
    })?;
    Ok(Frame::Integer(match r {
        None => 0,
        Some(None) => -1,
        Some(Some(len)) => len as i64,
    }))
}

pub(crate) fn lrem(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let count = int_arg(&args[2])?;
    let n = write_count(ctx, &args[1], false, |l: &mut List| {
        l.remove_value(&args[3], count)
    })?;
    Ok(Frame::Integer(n as i64))
}

pub(crate) fn ltrim(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (start, stop) = (int_arg(&args[2])?, int_arg(&args[3])?);
    write(ctx, &args[1], false, |l: &mut List| l.trim(start, stop))?;
    Ok(Frame::ok())
}

/// `LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]`
pub(crate) fn lpos(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (mut rank, mut count, mut maxlen) = (1i64, None, 0usize);
    let mut rest = Args::at(args, 3);
    while let Some(opt) = rest.next() {
        let v = rest.expect()?;
        if is(opt, "rank") {
            rank = int_arg(v)?;
            if rank == 0 {
                return Err(CmdError::msg(LPOS_RANK_ZERO));
            }
        } else if is(opt, "count") {
            count = Some(non_negative(v, LPOS_COUNT_NEGATIVE)?);
        } else if is(opt, "maxlen") {
            maxlen = non_negative(v, LPOS_MAXLEN_NEGATIVE)?;
        } else {
            return Err(CmdError::syntax());
        }
    }
    if rank == i64::MIN {
        // Redis 7.0 negates this rank into itself: it searches from the
        // tail and, its match count overflowing, never stops at COUNT.
        rank = -1;
        count = count.map(|_| 0);
    }
    let found = read(ctx, &args[1], |l: &List| {
        l.positions(&args[2], rank, count.unwrap_or(1), maxlen)
    })?
    .unwrap_or_default();
    Ok(match count {
        Some(_) => Frame::Array(
            found
                .into_iter()
                .map(|i| Frame::Integer(i as i64))
                .collect(),
        ),
        None => found
            .first()
            .map_or(Frame::Null, |&i| Frame::Integer(i as i64)),
    })
}

/// A count that must be a non-negative integer; anything else gets `err`,
/// as Redis's `getPositiveLongFromObjectOrReply` words it.
fn non_negative(arg: &[u8], err: &'static str) -> Result<usize, CmdError> {
    match parse_i64(arg) {
        Some(n) if n >= 0 => Ok(n as usize),
        _ => Err(CmdError::msg(err)),
    }
}

/// Moves one element from `src`'s `from` end to `dst`'s `to` end, in
/// locked shards. `None` when `src` is absent.
///
/// # Errors
///
/// `WRONGTYPE` when either key holds another type; nothing moves then.
pub(crate) fn move_in(
    ks: &mut Locked<'_>,
    db: usize,
    (src, from): (&Bytes, End),
    (dst, to): (&Bytes, End),
    now: Millis,
) -> Result<Option<Bytes>, StoreError> {
    // As Redis: the source's type first; a missing source is a null reply
    // (or, blocking, a wait) whatever the destination holds.
    check_type::<List>(ks.shard(src), db, src, now)?;
    if ks.shard(src).lookup(db, src, now, Access::Peek).is_none() {
        return Ok(None);
    }
    check_type::<List>(ks.shard(dst), db, dst, now)?;
    let Some(v) = pop_in(ks.shard(src), db, src, from, 1, now)?.and_then(|mut v| v.pop()) else {
        return Ok(None);
    };
    write_in(ks.shard(dst), db, dst, now, true, |l: &mut List| {
        l.push(to, &v)
    })?;
    Ok(Some(v))
}

fn lmove_impl(ctx: &mut Ctx<'_>, src: &Bytes, dst: &Bytes, from: End, to: End) -> CmdResult {
    let (db, now) = (ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_keys([&src[..], &dst[..]]);
    Ok(Frame::bulk_or_null(move_in(
        &mut ks,
        db,
        (src, from),
        (dst, to),
        now,
    )?))
}

/// `LMOVE source destination LEFT|RIGHT LEFT|RIGHT`
pub(crate) fn lmove(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (from, to) = (end_arg(&args[3])?, end_arg(&args[4])?);
    lmove_impl(ctx, &args[1], &args[2], from, to)
}

pub(crate) fn rpoplpush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    lmove_impl(ctx, &args[1], &args[2], End::Right, End::Left)
}
