//! String commands: GET, SET and its variants, counters, ranges.

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::{Access, Millis, Shard, StoreError, Value};

use super::args::Args;
use super::error::{invalid_expire_time, DECREMENT_OVERFLOW, OFFSET_RANGE};
use super::parse::{f64_bytes, float_arg, i64_bytes, int_arg, is, parse_f64, parse_i64};
use super::{CmdError, CmdResult, Ctx};

/// Redis's `proto-max-bulk-len` default: the largest string a command may build.
const MAX_STRING_BYTES: usize = 512 * 1024 * 1024;

/// An expiry given on the command line, before it is resolved against `now`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ExpireArg {
    /// `EX seconds` / `PX milliseconds`: relative.
    In(Millis),
    /// `EXAT` / `PXAT`: absolute Unix milliseconds.
    At(Millis),
}

impl ExpireArg {
    /// Parses the number after `EX`/`PX`/`EXAT`/`PXAT`. Redis rejects zero,
    /// negative and overflowing values with the command's name in the text.
    pub(crate) fn parse(unit: &[u8], n: &[u8], cmd: &str) -> Result<ExpireArg, CmdError> {
        let n = int_arg(n)?;
        let invalid = || CmdError::msg(invalid_expire_time(cmd));
        if n <= 0 {
            return Err(invalid());
        }
        let seconds = is(unit, "ex") || is(unit, "exat");
        let ms = if seconds {
            n.checked_mul(1000).ok_or_else(invalid)?
        } else {
            n
        };
        let ms = Millis(ms as u64);
        Ok(if is(unit, "ex") || is(unit, "px") {
            ExpireArg::In(ms)
        } else {
            ExpireArg::At(ms)
        })
    }

    /// The absolute deadline, or Redis's invalid-expire error when adding
    /// a relative time to now overflows a signed 64-bit millisecond count.
    pub(crate) fn deadline(self, now: Millis, cmd: &str) -> Result<Millis, CmdError> {
        match self {
            ExpireArg::In(d) => (now.0 as i64)
                .checked_add(d.0 as i64)
                .map(|t| Millis(t as u64))
                .ok_or_else(|| CmdError::msg(invalid_expire_time(cmd))),
            ExpireArg::At(t) => Ok(t),
        }
    }
}

/// `SET key value [NX | XX] [GET] [EX s | PX ms | EXAT t | PXAT t | KEEPTTL]`
#[derive(Debug, Default, PartialEq)]
struct SetOptions {
    nx: bool,
    xx: bool,
    get: bool,
    keepttl: bool,
    expire: Option<ExpireArg>,
}

impl SetOptions {
    /// Whether the key's current entry decides anything (NX, XX, GET,
    /// KEEPTTL). A plain `SET` replaces whatever is there, and
    /// `Shard::insert` does its own lookup, so it needs no first one.
    fn reads_old(&self) -> bool {
        self.nx || self.xx || self.get || self.keepttl
    }

    fn parse(args: &[Bytes]) -> Result<SetOptions, CmdError> {
        let mut o = SetOptions::default();
        let mut args = Args::new(args);
        while let Some(a) = args.next() {
            let has_expire = o.expire.is_some() || o.keepttl;
            if is(a, "nx") && !o.xx {
                o.nx = true;
            } else if is(a, "xx") && !o.nx {
                o.xx = true;
            } else if is(a, "get") {
                o.get = true;
            } else if is(a, "keepttl") && !has_expire {
                o.keepttl = true;
            } else if ["ex", "px", "exat", "pxat"].iter().any(|u| is(a, u)) && !has_expire {
                o.expire = Some(ExpireArg::parse(a, args.expect()?, "set")?);
            } else {
                return Err(CmdError::syntax());
            }
        }
        Ok(o)
    }
}

pub(crate) fn get(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let key = &args[1];
    let mut ks = ctx.store().lock_key(key);
    match ks.shard(key).lookup(ctx.db(), key, ctx.now, Access::Read) {
        Some(e) => Ok(Frame::Bulk(Bytes::copy_from_slice(e.value().as_str()?))),
        None => Ok(Frame::Null),
    }
}

pub(crate) fn set(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let opts = SetOptions::parse(&args[3..])?;
    let (key, val) = (&args[1], &args[2]);
    let (db, now) = (ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    if !opts.reads_old() {
        let expires_at = opts.expire.map(|e| e.deadline(now, "set")).transpose()?;
        put_str(shard, db, key, val, expires_at, now);
        return Ok(Frame::ok());
    }
    // SET ... GET reads the old value, so it counts as a read, as in Redis.
    let access = if opts.get {
        Access::Read
    } else {
        Access::Write
    };
    let (old, old_ttl) = match shard.lookup(db, key, now, access) {
        Some(e) if opts.get => (
            Some(Bytes::copy_from_slice(e.value().as_str()?)),
            e.expires_at(),
        ),
        Some(e) => (Some(Bytes::new()), e.expires_at()),
        None => (None, None),
    };
    let exists = old.is_some();
    let reply = |done: bool| match (opts.get, done) {
        (true, _) => Frame::bulk_or_null(old.clone()),
        (false, true) => Frame::ok(),
        (false, false) => Frame::Null,
    };
    if (opts.nx && exists) || (opts.xx && !exists) {
        return Ok(reply(false));
    }
    let expires_at = match (opts.expire, opts.keepttl) {
        (Some(e), _) => Some(e.deadline(now, "set")?),
        (None, true) => old_ttl,
        (None, false) => None,
    };
    put_str(shard, db, key, val, expires_at, now);
    Ok(reply(true))
}

/// Stores `val` at `key` with its deadline, replacing what was there; a
/// deadline already past stores nothing and deletes the key, as in Redis.
fn put_str(
    shard: &mut Shard,
    db: usize,
    key: &Bytes,
    val: &[u8],
    expires_at: Option<Millis>,
    now: Millis,
) {
    if expires_at.is_some_and(|at| at <= now) {
        shard.delete(db, key, now);
    } else {
        shard.insert_str(db, key, val, expires_at, now);
    }
}

pub(crate) fn setnx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (key, db, now) = (&args[1], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    if shard.lookup(db, key, now, Access::Write).is_some() {
        return Ok(Frame::Integer(0));
    }
    shard.insert_str(db, key, &args[2], None, now);
    Ok(Frame::Integer(1))
}

/// `SETEX key seconds value` and `PSETEX key milliseconds value`.
fn set_with_expiry(ctx: &mut Ctx<'_>, args: &[Bytes], unit: &str, cmd: &str) -> CmdResult {
    let expire = ExpireArg::parse(unit.as_bytes(), &args[2], cmd)?;
    let (key, db, now) = (&args[1], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let at = expire.deadline(now, cmd)?;
    ks.shard(key).insert_str(db, key, &args[3], Some(at), now);
    Ok(Frame::ok())
}

pub(crate) fn setex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    set_with_expiry(ctx, args, "ex", "setex")
}

pub(crate) fn psetex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    set_with_expiry(ctx, args, "px", "psetex")
}

pub(crate) fn mget(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (db, now) = (ctx.db(), ctx.now);
    let keys = &args[1..];
    let mut ks = ctx.store().lock_keys(keys.iter().map(|k| &k[..]));
    let values = keys
        .iter()
        .map(|k| match ks.shard(k).lookup(db, k, now, Access::Read) {
            Some(e) => match e.value().as_str() {
                Ok(s) => Frame::Bulk(Bytes::copy_from_slice(s)),
                Err(StoreError::WrongType) | Err(_) => Frame::Null,
            },
            None => Frame::Null,
        })
        .collect();
    Ok(Frame::Array(values))
}

fn pairs(args: &[Bytes], cmd: &str) -> Result<(), CmdError> {
    if args.len() % 2 == 0 {
        Err(CmdError::Arity(cmd.to_owned()))
    } else {
        Ok(())
    }
}

pub(crate) fn mset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    pairs(args, "mset")?;
    let (db, now) = (ctx.db(), ctx.now);
    let mut ks = ctx
        .store()
        .lock_keys(args[1..].iter().step_by(2).map(|k| &k[..]));
    for kv in args[1..].chunks_exact(2) {
        ks.shard(&kv[0]).insert_str(db, &kv[0], &kv[1], None, now);
    }
    Ok(Frame::ok())
}

pub(crate) fn msetnx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    pairs(args, "msetnx")?;
    let (db, now) = (ctx.db(), ctx.now);
    let mut ks = ctx
        .store()
        .lock_keys(args[1..].iter().step_by(2).map(|k| &k[..]));
    for kv in args[1..].chunks_exact(2) {
        if ks
            .shard(&kv[0])
            .lookup(db, &kv[0], now, Access::Write)
            .is_some()
        {
            return Ok(Frame::Integer(0));
        }
    }
    for kv in args[1..].chunks_exact(2) {
        ks.shard(&kv[0]).insert_str(db, &kv[0], &kv[1], None, now);
    }
    Ok(Frame::Integer(1))
}

pub(crate) fn getset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (key, db, now) = (&args[1], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    let old = match shard.lookup(db, key, now, Access::Read) {
        Some(e) => Some(Bytes::copy_from_slice(e.value().as_str()?)),
        None => None,
    };
    shard.insert_str(db, key, &args[2], None, now);
    Ok(Frame::bulk_or_null(old))
}

pub(crate) fn getdel(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (key, db, now) = (&args[1], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    let Some(e) = shard.lookup(db, key, now, Access::Read) else {
        return Ok(Frame::Null);
    };
    let val = Bytes::copy_from_slice(e.value().as_str()?);
    shard.delete(db, key, now);
    Ok(Frame::Bulk(val))
}

/// `GETEX key [EX s | PX ms | EXAT t | PXAT t | PERSIST]`
pub(crate) fn getex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    enum Change<'a> {
        Keep,
        Persist,
        Expire(&'a Bytes, &'a Bytes),
    }
    let change = match &args[2..] {
        [] => Change::Keep,
        [p] if is(p, "persist") => Change::Persist,
        [unit, n] if ["ex", "px", "exat", "pxat"].iter().any(|u| is(unit, u)) => {
            Change::Expire(unit, n)
        }
        _ => return Err(CmdError::syntax()),
    };
    let (key, db, now) = (&args[1], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    let Some(e) = shard.lookup(db, key, now, Access::Read) else {
        return Ok(Frame::Null);
    };
    let val = Bytes::copy_from_slice(e.value().as_str()?);
    match change {
        Change::Keep => {}
        Change::Persist => {
            shard.set_expiry(db, key, None, now);
        }
        Change::Expire(unit, n) => {
            // As in Redis, a missing key or another type answers before
            // the time is read.
            let at = ExpireArg::parse(unit, n, "getex")?.deadline(now, "getex")?;
            if at <= now {
                shard.delete(db, key, now);
            } else {
                shard.set_expiry(db, key, Some(at), now);
            }
        }
    }
    Ok(Frame::Bulk(val))
}

pub(crate) fn append(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (key, db, now) = (&args[1], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    if let Some(mut e) = shard.lookup_mut(db, key, now) {
        check_len(e.value().as_str()?.len() + args[2].len())?;
        let len = e.append(&args[2])?;
        return Ok(Frame::Integer(len as i64));
    }
    shard.insert_str(db, key, &args[2], None, now);
    Ok(Frame::Integer(args[2].len() as i64))
}

fn check_len(len: usize) -> Result<(), CmdError> {
    if len > MAX_STRING_BYTES {
        Err(StoreError::StringTooLong.into())
    } else {
        Ok(())
    }
}

pub(crate) fn strlen(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let key = &args[1];
    let mut ks = ctx.store().lock_key(key);
    match ks.shard(key).lookup(ctx.db(), key, ctx.now, Access::Read) {
        Some(e) => Ok(Frame::Integer(e.value().as_str()?.len() as i64)),
        None => Ok(Frame::Integer(0)),
    }
}

/// Adds `delta` to the integer at `key` (0 when absent), keeping its TTL.
fn incr_by(ctx: &mut Ctx<'_>, key: &Bytes, delta: i64) -> CmdResult {
    let (db, now) = (ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    if let Some(mut e) = shard.lookup_mut(db, key, now) {
        let cur = parse_i64(e.value().as_str()?).ok_or(StoreError::NotAnInteger)?;
        let next = cur.checked_add(delta).ok_or(StoreError::Overflow)?;
        e.set_str(&i64_bytes(next));
        return Ok(Frame::Integer(next));
    }
    shard.insert_str(db, key, &i64_bytes(delta), None, now);
    Ok(Frame::Integer(delta))
}

pub(crate) fn incr(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    incr_by(ctx, &args[1], 1)
}

pub(crate) fn decr(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    incr_by(ctx, &args[1], -1)
}

pub(crate) fn incrby(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let delta = int_arg(&args[2])?;
    incr_by(ctx, &args[1], delta)
}

pub(crate) fn decrby(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let delta = int_arg(&args[2])?;
    let delta = delta
        .checked_neg()
        .ok_or_else(|| CmdError::msg(DECREMENT_OVERFLOW))?;
    incr_by(ctx, &args[1], delta)
}

pub(crate) fn incrbyfloat(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let delta = float_arg(&args[2])?;
    let (key, db, now) = (&args[1], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    let apply = |cur: f64| -> Result<Bytes, CmdError> {
        let next = cur + delta;
        if next.is_nan() || next.is_infinite() {
            return Err(StoreError::NanOrInfinity.into());
        }
        Ok(f64_bytes(next))
    };
    if let Some(mut e) = shard.lookup_mut(db, key, now) {
        let cur = parse_f64(e.value().as_str()?).ok_or(StoreError::NotAFloat)?;
        let next = apply(cur)?;
        e.set_str(&next);
        return Ok(Frame::Bulk(next));
    }
    let next = apply(0.0)?;
    shard.insert_str(db, key, &next, None, now);
    Ok(Frame::Bulk(next))
}

/// Resolves Redis's inclusive, possibly negative `start..=end` against a
/// length; `None` when the range is empty.
pub(crate) fn clamp_range(start: i64, end: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    let start = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    // Redis clamps a negative end that is still negative to 0.
    let end = if end < 0 {
        (len + end).max(0)
    } else {
        end.min(len - 1)
    };
    (start <= end && start < len && len > 0).then_some((start as usize, end as usize))
}

pub(crate) fn getrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (start, end) = (int_arg(&args[2])?, int_arg(&args[3])?);
    let key = &args[1];
    let mut ks = ctx.store().lock_key(key);
    let Some(e) = ks.shard(key).lookup(ctx.db(), key, ctx.now, Access::Read) else {
        return Ok(Frame::bulk(Bytes::new()));
    };
    let s = e.value().as_str()?;
    // Redis: a negative start past a negative end is empty, as is any range
    // on an empty string.
    if start < 0 && end < 0 && start > end {
        return Ok(Frame::bulk(Bytes::new()));
    }
    Ok(match clamp_range(start, end, s.len()) {
        Some((a, b)) => Frame::Bulk(Bytes::copy_from_slice(&s[a..=b])),
        None => Frame::bulk(Bytes::new()),
    })
}

pub(crate) fn setrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let offset = int_arg(&args[2])?;
    if offset < 0 {
        return Err(CmdError::msg(OFFSET_RANGE));
    }
    let offset = offset as usize;
    let patch = &args[3];
    let (key, db, now) = (&args[1], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    if let Some(mut e) = shard.lookup_mut(db, key, now) {
        let cur = e.value().as_str()?.len();
        if patch.is_empty() {
            return Ok(Frame::Integer(cur as i64));
        }
        check_len(cur.max(offset + patch.len()))?;
        let len = e.set_range(offset, patch)?;
        return Ok(Frame::Integer(len as i64));
    }
    if patch.is_empty() {
        return Ok(Frame::Integer(0));
    }
    check_len(offset + patch.len())?;
    let mut s = vec![0; offset + patch.len()];
    s[offset..].copy_from_slice(patch);
    shard.insert(db, key.clone(), Value::Str(s.into()), None, now);
    Ok(Frame::Integer((offset + patch.len()) as i64))
}

/// `LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]`: the
/// longest common subsequence of two strings (absent keys are empty), by
/// Redis's dynamic programme and backtrack, so ties resolve as in Redis.
pub(crate) fn lcs(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (mut len_only, mut idx, mut with_len, mut min_len) = (false, false, false, 0i64);
    let mut opts = Args::new(&args[3..]);
    while let Some(a) = opts.next() {
        if is(a, "len") {
            len_only = true;
        } else if is(a, "idx") {
            idx = true;
        } else if is(a, "withmatchlen") {
            with_len = true;
        } else if is(a, "minmatchlen") {
            min_len = opts.int()?.max(0);
        } else {
            return Err(CmdError::syntax());
        }
    }
    if len_only && idx {
        return Err(CmdError::msg(super::error::LCS_LEN_AND_IDX));
    }
    let (db, now) = (ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_keys([&args[1][..], &args[2][..]]);
    let mut read = |k: &Bytes| -> Result<Vec<u8>, CmdError> {
        match ks.shard(k).lookup(db, k, now, Access::Read) {
            Some(e) => match e.value().as_str() {
                Ok(s) => Ok(s.to_vec()),
                Err(_) => Err(CmdError::msg(super::error::LCS_NOT_STRINGS)),
            },
            None => Ok(Vec::new()),
        }
    };
    let a = read(&args[1])?;
    let b = read(&args[2])?;
    drop(ks);
    let (alen, blen) = (a.len(), b.len());
    let cells = (alen as u64 + 1).saturating_mul(blen as u64 + 1);
    if cells.saturating_mul(4) > MAX_STRING_BYTES as u64 {
        return Err(CmdError::msg(super::error::LCS_TOO_BIG));
    }
    let w = blen + 1;
    let mut dp = vec![0u32; cells as usize];
    for i in 1..=alen {
        for j in 1..=blen {
            dp[i * w + j] = if a[i - 1] == b[j - 1] {
                dp[(i - 1) * w + j - 1] + 1
            } else {
                dp[(i - 1) * w + j].max(dp[i * w + j - 1])
            };
        }
    }
    let total = dp[alen * w + blen];
    if len_only {
        return Ok(Frame::Integer(i64::from(total)));
    }
    let mut result = vec![0u8; total as usize];
    let mut matches = Vec::new();
    let (mut i, mut j, mut k) = (alen, blen, total as usize);
    // `None`: no range open. Otherwise (a_start, a_end, b_start, b_end).
    let mut range: Option<(usize, usize, usize, usize)> = None;
    while i > 0 && j > 0 {
        let mut emit = false;
        if a[i - 1] == b[j - 1] {
            result[k - 1] = a[i - 1];
            match &mut range {
                None => range = Some((i - 1, i - 1, j - 1, j - 1)),
                Some((a_start, _, b_start, _)) if *a_start == i && *b_start == j => {
                    *a_start -= 1;
                    *b_start -= 1;
                }
                Some(_) => emit = true,
            }
            if range.is_some_and(|r| r.0 == 0 || r.2 == 0) {
                emit = true;
            }
            k -= 1;
            i -= 1;
            j -= 1;
        } else {
            if dp[(i - 1) * w + j] > dp[i * w + j - 1] {
                i -= 1;
            } else {
                j -= 1;
            }
            emit = range.is_some();
        }
        if emit {
            if let Some((a0, a1, b0, b1)) = range.take() {
                let len = (a1 - a0 + 1) as i64;
                if min_len == 0 || len >= min_len {
                    let span = |x: usize, y: usize| {
                        Frame::Array(vec![Frame::Integer(x as i64), Frame::Integer(y as i64)])
                    };
                    let mut m = vec![span(a0, a1), span(b0, b1)];
                    if with_len {
                        m.push(Frame::Integer(len));
                    }
                    matches.push(Frame::Array(m));
                }
            }
        }
    }
    if idx {
        return Ok(Frame::Map(vec![
            (Frame::bulk("matches"), Frame::Array(matches)),
            (Frame::bulk("len"), Frame::Integer(i64::from(total))),
        ]));
    }
    Ok(Frame::Bulk(Bytes::from(result)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::SYNTAX;

    fn args(v: &[&'static str]) -> Vec<Bytes> {
        v.iter().map(|s| Bytes::from_static(s.as_bytes())).collect()
    }

    #[test]
    fn set_options_parse_and_reject_conflicts() {
        let o = SetOptions::parse(&args(&["NX", "GET", "px", "100"])).expect("valid");
        assert!(o.nx && o.get && !o.xx);
        assert_eq!(o.expire, Some(ExpireArg::In(Millis(100))));
        for bad in [
            &["nx", "xx"][..],
            &["ex", "1", "px", "1"],
            &["keepttl", "ex", "1"],
            &["ex"],
            &["foo"],
        ] {
            assert_eq!(
                SetOptions::parse(&args(bad)),
                Err(CmdError::msg(SYNTAX)),
                "{bad:?}"
            );
        }
        assert_eq!(
            SetOptions::parse(&args(&["ex", "0"])),
            Err(CmdError::msg("ERR invalid expire time in 'set' command"))
        );
    }

    #[test]
    fn ranges_clamp_like_redis() {
        assert_eq!(clamp_range(0, -1, 5), Some((0, 4)));
        assert_eq!(clamp_range(-3, -2, 5), Some((2, 3)));
        assert_eq!(clamp_range(2, 100, 5), Some((2, 4)));
        assert_eq!(clamp_range(4, 2, 5), None);
        assert_eq!(clamp_range(0, -1, 0), None);
        assert_eq!(clamp_range(10, 20, 5), None);
    }
}
