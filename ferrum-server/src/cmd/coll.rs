//! Plumbing shared by the collection command families: reaching a key's
//! list, hash, set, sorted set or stream for reading or writing, deleting a
//! key its command drained, and building common replies.
//!
//! Writes go through [`write_in`], that is the store's `Shard::update`,
//! which upholds the rule that a key never holds an empty list, hash, set or
//! sorted set: a command that drains one deletes the key, and a command that
//! would create an empty one creates nothing.

use bytes::Bytes;
use ferrum_proto::{Frame, Protocol};
use ferrum_store::{Access, Millis, Shard, StoreError, Typed};

use super::parse::parse_i64;
use super::{CmdError, Ctx};

/// Runs `f` on the `T` at `key` for a read command (counting a hit or a
/// miss). `Ok(None)` when the key is absent.
///
/// # Errors
///
/// `WRONGTYPE` when the key holds another type.
pub(crate) fn read<T: Typed, R>(
    ctx: &Ctx<'_>,
    key: &[u8],
    f: impl FnOnce(&T) -> R,
) -> Result<Option<R>, CmdError> {
    let (db, now) = (ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    read_in(ks.shard(key), db, key, now, f).map_err(CmdError::from)
}

/// [`read`] within an already locked shard.
pub(crate) fn read_in<T: Typed, R>(
    shard: &mut Shard,
    db: usize,
    key: &[u8],
    now: Millis,
    f: impl FnOnce(&T) -> R,
) -> Result<Option<R>, StoreError> {
    match shard.lookup(db, key, now, Access::Read) {
        Some(e) => Ok(Some(f(T::of(&e.value())?))),
        None => Ok(None),
    }
}

/// Checks, without counting a hit or miss, that `key` is absent or a `T`.
pub(crate) fn check_type<T: Typed>(
    shard: &mut Shard,
    db: usize,
    key: &[u8],
    now: Millis,
) -> Result<(), StoreError> {
    match shard.lookup(db, key, now, Access::Peek) {
        Some(e) => T::of(&e.value()).map(|_| ()),
        None => Ok(()),
    }
}

/// Runs `f` on the `T` at `key` for a write command, creating an empty one
/// first when the key is absent and `create` is set. Deletes the key if `f`
/// drained it, and stores a created value only if `f` left it non-empty.
/// `Ok(None)` when the key is absent and `create` is not set.
///
/// # Errors
///
/// `WRONGTYPE` when the key holds another type; nothing is changed then.
pub(crate) fn write<T: Typed, R>(
    ctx: &Ctx<'_>,
    key: &Bytes,
    create: bool,
    f: impl FnOnce(&mut T) -> R,
) -> Result<Option<R>, CmdError> {
    let (db, now) = (ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    write_in(ks.shard(key), db, key, now, create, f).map_err(CmdError::from)
}

/// [`write`] for commands that answer how many elements they added or
/// removed: a count of 0 changed nothing, so the key keeps its version and
/// a `WATCH` on it holds (Redis signals a key only when the count is not 0).
/// An absent key counts 0.
pub(crate) fn write_count<T: Typed>(
    ctx: &Ctx<'_>,
    key: &Bytes,
    create: bool,
    f: impl FnOnce(&mut T) -> usize,
) -> Result<usize, CmdError> {
    let (db, now) = (ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let n = ks.shard(key).update(db, key, now, create, f, |n| *n > 0)?;
    Ok(n.unwrap_or(0))
}

/// [`write`] within an already locked shard.
pub(crate) fn write_in<T: Typed, R>(
    shard: &mut Shard,
    db: usize,
    key: &Bytes,
    now: Millis,
    create: bool,
    f: impl FnOnce(&mut T) -> R,
) -> Result<Option<R>, StoreError> {
    shard.update(db, key, now, create, f, |_| true)
}

/// Replaces whatever `key` holds with `value` (a `...STORE` destination),
/// or deletes it when `value` is empty, as Redis does.
pub(crate) fn store_in<T: Typed>(shard: &mut Shard, db: usize, key: &Bytes, now: Millis, value: T) {
    if value.is_drained() {
        shard.delete(db, key, now);
    } else {
        shard.insert(db, key.clone(), value.into(), None, now);
    }
}

/// An array of bulk strings.
///
/// Packed collections hold no `Bytes` to share, so the items are copied
/// into one buffer that every bulk string slices: one allocation per reply
/// instead of one per element.
pub(crate) fn bulks<B: AsRef<[u8]>>(items: impl IntoIterator<Item = B>) -> Frame {
    let mut buf = bytes::BytesMut::new();
    let mut ends = Vec::new();
    for b in items {
        buf.extend_from_slice(b.as_ref());
        ends.push(buf.len());
    }
    let buf = buf.freeze();
    let mut start = 0;
    Frame::Array(
        ends.into_iter()
            .map(|end| {
                let item = Frame::Bulk(buf.slice(start..end));
                start = end;
                item
            })
            .collect(),
    )
}

/// A RESP3 set of bulk strings (an array in RESP2).
pub(crate) fn bulk_set(items: impl IntoIterator<Item = Bytes>) -> Frame {
    Frame::Set(items.into_iter().map(Frame::Bulk).collect())
}

/// Whether the connection speaks RESP3.
pub(crate) fn resp3(ctx: &Ctx<'_>) -> bool {
    ctx.conn.protocol == Protocol::Resp3
}

/// A `SCAN`-family cursor: an unsigned decimal, or `ERR invalid cursor`.
pub(crate) fn cursor_arg(b: &[u8]) -> Result<u64, CmdError> {
    std::str::from_utf8(b)
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .ok_or_else(|| CmdError::msg(super::error::INVALID_CURSOR))
}

/// Options of `HSCAN`/`SSCAN`/`ZSCAN`: `[MATCH pattern] [COUNT count]`.
pub(crate) fn scan_opts(args: &[Bytes]) -> Result<(Option<Bytes>, usize), CmdError> {
    let (mut pattern, mut count) = (None, 10usize);
    let mut rest = args.iter();
    while let Some(a) = rest.next() {
        let v = rest.next().ok_or_else(CmdError::syntax)?;
        if super::parse::is(a, "match") {
            pattern = Some(v.clone());
        } else if super::parse::is(a, "count") {
            count = match parse_i64(v) {
                Some(n) if n >= 1 => n as usize,
                Some(_) => return Err(CmdError::syntax()),
                None => return Err(CmdError::msg(super::error::NOT_INTEGER)),
            };
        } else {
            return Err(CmdError::syntax());
        }
    }
    Ok((pattern, count))
}

/// The reply to a `SCAN`-family step: the next cursor and the items.
pub(crate) fn scan_reply(next: u64, items: Vec<Frame>) -> Frame {
    let cursor = Bytes::copy_from_slice(itoa::Buffer::new().format(next).as_bytes());
    Frame::Array(vec![Frame::Bulk(cursor), Frame::Array(items)])
}

/// Whether `item` passes an optional `MATCH` pattern.
pub(crate) fn matches(pattern: &Option<Bytes>, item: &[u8]) -> bool {
    pattern
        .as_ref()
        .is_none_or(|p| ferrum_store::glob::glob_match(p, item, false))
}

/// A count argument that must be `>= 0`.
pub(crate) fn positive_count(b: &[u8]) -> Result<usize, CmdError> {
    match parse_i64(b) {
        Some(n) if n >= 0 => Ok(n as usize),
        _ => Err(CmdError::msg(super::error::MUST_BE_POSITIVE)),
    }
}

/// A small deterministic generator for random picks, seeded from the
/// shard's own generator (SplitMix64, Steele et al., OOPSLA 2014).
#[derive(Debug)]
pub(crate) struct Picker(u64);

impl Picker {
    /// Seeds a picker from the shard that holds the key.
    pub(crate) fn from_shard(shard: &mut Shard) -> Picker {
        Picker(shard.random_u64())
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform index below `n` (which must be positive).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// `count` distinct indices below `len` (all of them if `count >= len`),
    /// in O(count) expected time.
    pub(crate) fn distinct(&mut self, len: usize, count: usize) -> Vec<usize> {
        if count >= len {
            return (0..len).collect();
        }
        if count * 3 > len {
            // Dense request: a partial Fisher-Yates shuffle.
            let mut all: Vec<usize> = (0..len).collect();
            for i in 0..count {
                let j = i + self.below(len - i);
                all.swap(i, j);
            }
            all.truncate(count);
            return all;
        }
        let mut seen = std::collections::HashSet::with_capacity(count);
        let mut out = Vec::with_capacity(count);
        while out.len() < count {
            let i = self.below(len);
            if seen.insert(i) {
                out.push(i);
            }
        }
        out
    }

    /// `count` indices below `len`, repeats allowed (negative counts).
    pub(crate) fn with_repeats(&mut self, len: usize, count: usize) -> Vec<usize> {
        (0..count).map(|_| self.below(len)).collect()
    }
}

/// A random-count argument (`SRANDMEMBER`, `HRANDFIELD`, `ZRANDMEMBER`):
/// positive for distinct picks, negative for picks with repeats. Redis caps
/// the magnitude so the reply cannot overflow.
pub(crate) fn random_count(b: &[u8]) -> Result<i64, CmdError> {
    let n = super::parse::int_arg(b)?;
    if !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&n) {
        return Err(CmdError::msg(format!(
            "ERR value is out of range, must be between {} and {}",
            -(i64::MAX / 2),
            i64::MAX / 2
        )));
    }
    Ok(n)
}

/// Indices for a random-count request over `len` items.
pub(crate) fn random_indices(p: &mut Picker, len: usize, count: i64) -> Vec<usize> {
    if len == 0 {
        return Vec::new();
    }
    if count >= 0 {
        p.distinct(len, count as usize)
    } else {
        p.with_repeats(len, count.unsigned_abs() as usize)
    }
}
