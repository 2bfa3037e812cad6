//! Generic key commands: DEL, EXISTS, TYPE, RENAME, COPY, KEYS, SCAN,
//! RANDOMKEY, TOUCH, OBJECT.

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::glob::glob_match;
use ferrum_store::{Access, ValueKind};

use super::args::Args;
use super::error::{NO_SUCH_KEY, OBJECT_FREQ_NOT_LFU, OBJECT_IDLETIME_LFU};
use super::parse::{db_arg, is, parse_i64};
use super::{CmdError, CmdResult, Ctx};

/// `DEL key [key ...]`: frees in place, unless `lazyfree-lazy-user-del`
/// makes it an `UNLINK`.
pub(crate) fn del(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if ctx.shared.config().stored_value("lazyfree-lazy-user-del") == "yes" {
        return unlink(ctx, args);
    }
    let (db, now) = (ctx.db(), ctx.now);
    let keys = &args[1..];
    let mut ks = ctx.store().lock_keys(keys.iter().map(|k| &k[..]));
    let removed = keys
        .iter()
        .filter(|k| ks.shard(k).delete(db, k, now))
        .count();
    Ok(Frame::Integer(removed as i64))
}

/// `UNLINK key [key ...]`: removes the keys at once and leaves freeing
/// their big values to the background thread (`lazyfree.rs`).
pub(crate) fn unlink(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (db, now) = (ctx.db(), ctx.now);
    let keys = &args[1..];
    let mut ks = ctx.store().lock_keys(keys.iter().map(|k| &k[..]));
    let removed: Vec<_> = keys
        .iter()
        .filter_map(|k| ks.shard(k).remove(db, k, now))
        .collect();
    drop(ks);
    let n = removed.len();
    for value in removed {
        ctx.shared.lazyfree.free(value);
    }
    Ok(Frame::Integer(n as i64))
}

/// Counts the keys that exist, with the given access (EXISTS does not touch
/// recency; TOUCH does).
fn count_existing(ctx: &mut Ctx<'_>, keys: &[Bytes], access: Access) -> CmdResult {
    let (db, now) = (ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_keys(keys.iter().map(|k| &k[..]));
    let n = keys
        .iter()
        .filter(|k| ks.shard(k).lookup(db, k, now, access).is_some())
        .count();
    Ok(Frame::Integer(n as i64))
}

pub(crate) fn exists(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    count_existing(ctx, &args[1..], Access::ReadNoTouch)
}

pub(crate) fn touch(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    count_existing(ctx, &args[1..], Access::Read)
}

pub(crate) fn type_(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let key = &args[1];
    let mut ks = ctx.store().lock_key(key);
    let name = match ks
        .shard(key)
        .lookup(ctx.db(), key, ctx.now, Access::ReadNoTouch)
    {
        Some(e) => e.kind().as_str(),
        None => "none",
    };
    Ok(Frame::simple(name))
}

/// Moves `src` to `dst` in the same database; with `nx`, only if `dst` is
/// absent. The TTL moves with the value.
fn rename_impl(ctx: &mut Ctx<'_>, args: &[Bytes], nx: bool) -> CmdResult {
    let (src, dst, db, now) = (&args[1], &args[2], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_keys([&src[..], &dst[..]]);
    let Some(e) = ks.shard(src).lookup(db, src, now, Access::Write) else {
        return Err(CmdError::msg(NO_SUCH_KEY));
    };
    let expires_at = e.expires_at();
    if src == dst {
        return Ok(if nx { Frame::Integer(0) } else { Frame::ok() });
    }
    if nx && ks.shard(dst).lookup(db, dst, now, Access::Write).is_some() {
        return Ok(Frame::Integer(0));
    }
    let Some(value) = ks.shard(src).remove(db, src, now) else {
        return Err(CmdError::msg(NO_SUCH_KEY));
    };
    ks.shard(dst)
        .insert(db, dst.clone(), value, expires_at, now);
    Ok(if nx { Frame::Integer(1) } else { Frame::ok() })
}

pub(crate) fn rename(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    rename_impl(ctx, args, false)
}

pub(crate) fn renamenx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    rename_impl(ctx, args, true)
}

/// `COPY source destination [DB destination-db] [REPLACE]`
pub(crate) fn copy(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (mut dst_db, mut replace) = (ctx.db(), false);
    let mut rest = Args::at(args, 3);
    while let Some(a) = rest.next() {
        if is(a, "replace") {
            replace = true;
        } else if is(a, "db") {
            dst_db = db_arg(rest.expect()?, ctx.store().databases())?;
        } else {
            return Err(CmdError::syntax());
        }
    }
    if ctx.shared.cluster.is_some() && dst_db != 0 {
        return Err(CmdError::msg(super::error::cluster::COPY_DB));
    }
    let (src, dst, db, now) = (&args[1], &args[2], ctx.db(), ctx.now);
    if src == dst && db == dst_db {
        return Err(CmdError::msg(super::error::SAME_OBJECT));
    }
    let mut ks = ctx.store().lock_keys([&src[..], &dst[..]]);
    let Some(e) = ks.shard(src).lookup(db, src, now, Access::Read) else {
        return Ok(Frame::Integer(0));
    };
    let (value, expires_at) = (e.value().to_value(), e.expires_at());
    let dst_shard = ks.shard(dst);
    if dst_shard.lookup(dst_db, dst, now, Access::Write).is_some() && !replace {
        return Ok(Frame::Integer(0));
    }
    dst_shard.insert(dst_db, dst.clone(), value, expires_at, now);
    drop(ks);
    if dst_db != db {
        // The dispatcher wakes waiters on `dst` in the current database only.
        super::wake_key(ctx, dst_db, dst);
    }
    Ok(Frame::Integer(1))
}

/// `MOVE key db`: moves a key, with its TTL, to another database unless
/// the key is there already.
pub(crate) fn move_(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if ctx.shared.cluster.is_some() {
        return Err(CmdError::msg(super::error::cluster::MOVE));
    }
    let dst_db = db_arg(&args[2], ctx.store().databases())?;
    let (key, db, now) = (&args[1], ctx.db(), ctx.now);
    if dst_db == db {
        return Err(CmdError::msg(super::error::SAME_OBJECT));
    }
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    let Some(e) = shard.lookup(db, key, now, Access::Write) else {
        return Ok(Frame::Integer(0));
    };
    let expires_at = e.expires_at();
    if shard.lookup(dst_db, key, now, Access::Write).is_some() {
        return Ok(Frame::Integer(0));
    }
    let Some(value) = shard.remove(db, key, now) else {
        return Ok(Frame::Integer(0));
    };
    shard.insert(dst_db, key.clone(), value, expires_at, now);
    drop(ks);
    super::wake_key(ctx, dst_db, key);
    Ok(Frame::Integer(1))
}

pub(crate) fn keys(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (pattern, db, now) = (&args[1], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_all();
    let mut out = Vec::new();
    for shard in ks.shards() {
        shard.for_each_key(db, now, |k, _| {
            if glob_match(pattern, k, false) {
                out.push(Frame::Bulk(Bytes::copy_from_slice(k)));
            }
        });
    }
    Ok(Frame::Array(out))
}

/// `SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]`
pub(crate) fn scan(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let cursor = super::coll::cursor_arg(&args[1])?;
    let (mut pattern, mut count, mut kind) = (None, 10usize, None);
    let mut rest = Args::at(args, 2);
    while let Some(a) = rest.next() {
        let v = rest.expect()?;
        if is(a, "match") {
            pattern = Some(v.clone());
        } else if is(a, "count") {
            count = match parse_i64(v) {
                Some(n) if n >= 1 => n as usize,
                Some(_) => return Err(CmdError::syntax()),
                None => return Err(CmdError::msg(super::error::NOT_INTEGER)),
            };
        } else if is(a, "type") {
            // Redis accepts unknown type names and simply matches nothing.
            kind = Some(ValueKind::parse(v));
        } else {
            return Err(CmdError::syntax());
        }
    }
    let (db, now) = (ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_all();
    let mut found = Vec::new();
    let next = ks.scan(db, cursor, count, now, |k, e| {
        let type_ok = kind.is_none_or(|want| want == Some(e.kind()));
        let name_ok = pattern.as_ref().is_none_or(|p| glob_match(p, k, false));
        if type_ok && name_ok {
            found.push(Frame::Bulk(Bytes::copy_from_slice(k)));
        }
    });
    let cursor = Bytes::copy_from_slice(itoa::Buffer::new().format(next).as_bytes());
    Ok(Frame::Array(vec![Frame::Bulk(cursor), Frame::Array(found)]))
}

pub(crate) fn randomkey(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let (db, now) = (ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_all();
    Ok(Frame::bulk_or_null(ks.random_key(db, now)))
}

/// `OBJECT ENCODING|FREQ|IDLETIME|REFCOUNT key`, and `OBJECT HELP`.
pub(crate) fn object(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let sub = &args[1];
    if is(sub, "help") {
        return super::help_reply(&[
            "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "ENCODING <key>",
            "    Return the kind of internal representation used in order to store the value",
            "    associated with a <key>.",
            "FREQ <key>",
            "    Return the access frequency index of the <key>. The returned integer is",
            "    proportional to the logarithm of the recent access frequency of the key.",
            "IDLETIME <key>",
            "    Return the idle time of the <key>, that is the approximated number of",
            "    seconds elapsed since the last access to the key.",
            "REFCOUNT <key>",
            "    Return the number of references of the value associated with the specified",
            "    <key>.",
            "HELP",
            "    Print this help.",
        ]);
    }
    let known = ["encoding", "freq", "idletime", "refcount"];
    let Some(name) = known.iter().find(|k| is(sub, k)) else {
        return Err(CmdError::unknown_subcommand("OBJECT", sub));
    };
    if args.len() != 3 {
        return Err(CmdError::subcommand_arity("object", name));
    }
    let (key, db, now) = (&args[2], ctx.db(), ctx.now);
    let (policy, max) = (ctx.store().policy().0, ctx.store().maxmemory_bytes());
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    let Some(e) = shard.lookup(db, key, now, Access::ReadNoTouch) else {
        return Ok(Frame::Null);
    };
    if is(sub, "encoding") {
        return Ok(Frame::bulk(e.encoding()));
    }
    if is(sub, "refcount") {
        // Redis shares the objects for the integers 0..10000 and reports
        // them as referenced "forever"; clients that print it see the same.
        // It does not share them under an LRU or LFU policy with a
        // maxmemory, where each key needs its own access clock.
        let per_key_clock =
            max > 0 && (policy.as_str().contains("lru") || policy.as_str().contains("lfu"));
        let shared = !per_key_clock
            && matches!(e.value(), ferrum_store::ValueRef::Str(s)
            if e.encoding() == "int" && parse_i64(s).is_some_and(|n| (0..10_000).contains(&n)));
        return Ok(Frame::Integer(if shared { i64::from(i32::MAX) } else { 1 }));
    }
    let lfu = policy.as_str().contains("lfu");
    if is(sub, "idletime") {
        if lfu {
            return Err(CmdError::msg(OBJECT_IDLETIME_LFU));
        }
        // Both readings in whole seconds, as Redis's LRU clock ticks.
        let idle = (now.0 / 1000).saturating_sub(e.last_access().0 / 1000);
        return Ok(Frame::Integer(idle as i64));
    }
    match shard.lfu_counter(db, key, now) {
        Some(c) if lfu => Ok(Frame::Integer(i64::from(c))),
        _ => Err(CmdError::msg(OBJECT_FREQ_NOT_LFU)),
    }
}
