//! Plumbing shared by the collection command families: reaching a key's
//! list, hash, set, sorted set or stream for reading or writing, deleting a
//! key its command drained, and building common replies.
//!
//! Writes go through [`write_in`], that is the store's `Shard::update`,
//! which upholds the rule that a key never holds an empty list, hash, set or
//! sorted set: a command that drains one deletes the key, and a command that
//! would create an empty one creates nothing.

use bytes::Bytes;
use ferrum_proto::{BulksKind, BulksWriter, Frame, Protocol};
use ferrum_store::{Access, Millis, Shard, StoreError, Typed};

use super::args::Args;
use super::parse::parse_i64;
use super::{CmdError, CmdResult, Ctx};

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
pub(crate) fn bulks<B: AsRef<[u8]>>(items: impl IntoIterator<Item = B>) -> Frame {
    written(items, BulksKind::Array)
}

/// A RESP3 set of bulk strings (an array in RESP2).
pub(crate) fn bulk_set<B: AsRef<[u8]>>(items: impl IntoIterator<Item = B>) -> Frame {
    written(items, BulksKind::Set)
}

/// `items` written as RESP as they are walked (under the shard lock, from
/// the collection's own bytes), with no frame or `Bytes` per element; the
/// connection copies the result whole. See [`ferrum_proto::Bulks`].
fn written<B: AsRef<[u8]>>(items: impl IntoIterator<Item = B>, kind: BulksKind) -> Frame {
    let items = items.into_iter();
    let mut w = reply_writer(items.size_hint().0);
    items.for_each(|b| w.push(b.as_ref()));
    w.finish(kind)
}

/// A [`BulksWriter`] for about `n` elements: room for short ones (16 bytes
/// each, as written), so a typical reply is one allocation; longer ones grow it.
pub(crate) fn reply_writer(n: usize) -> BulksWriter {
    BulksWriter::with_capacity(n, n * 8)
}

/// Whether the connection speaks RESP3.
pub(crate) fn resp3(ctx: &Ctx<'_>) -> bool {
    ctx.conn.protocol == Protocol::Resp3
}

/// A `SCAN`-family cursor: an unsigned decimal, or `ERR invalid cursor`.
pub(crate) fn cursor_arg(b: &[u8]) -> Result<u64, CmdError> {
    // As C's `strtoul`, which Redis uses: a `-` wraps (`-1` is the largest
    // cursor), and no spaces.
    let s = std::str::from_utf8(b).ok();
    let (negative, digits) = match s.and_then(|s| s.strip_prefix('-')) {
        Some(rest) => (true, Some(rest)),
        None => (false, s),
    };
    digits
        .filter(|d| !negative || !d.starts_with(['+', '-']))
        .and_then(|d| d.parse::<u64>().ok())
        .map(|n| if negative { n.wrapping_neg() } else { n })
        .ok_or_else(|| CmdError::msg(super::error::INVALID_CURSOR))
}

/// Options of `HSCAN`/`SSCAN`/`ZSCAN`: `[MATCH pattern] [COUNT count]`.
pub(crate) fn scan_opts(args: &[Bytes]) -> Result<(Option<Bytes>, usize), CmdError> {
    let (mut pattern, mut count) = (None, 10usize);
    let mut rest = Args::new(args);
    while let Some(a) = rest.next() {
        let v = rest.expect()?;
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

/// `HSCAN`/`SSCAN`/`ZSCAN key cursor [MATCH pattern] [COUNT count]` over a
/// `T`, checked in Redis's order: the cursor, then the key (a missing key
/// answers an empty scan whatever its options say, another type
/// `WRONGTYPE`), then the options. `step` scans from the cursor, pushing the
/// reply items of each element that `pass`es the pattern, and returns the
/// next cursor.
pub(crate) fn scan_coll<T: Typed>(
    ctx: &mut Ctx<'_>,
    args: &[Bytes],
    step: impl FnOnce(&T, u64, usize, &dyn Fn(&[u8]) -> bool, &mut Vec<Frame>) -> u64,
) -> CmdResult {
    let cursor = cursor_arg(&args[2])?;
    let opts = scan_opts(&args[3..]);
    let reply = read(ctx, &args[1], |coll: &T| {
        let (pattern, count) = opts?;
        let mut items = Vec::new();
        let next = step(
            coll,
            cursor,
            count,
            &|item| matches(&pattern, item),
            &mut items,
        );
        Ok(scan_reply(next, items))
    })?;
    reply.unwrap_or_else(|| Ok(scan_reply(0, Vec::new())))
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
    /// A picker seeded with `seed`.
    pub(crate) fn from_seed(seed: u64) -> Picker {
        Picker(seed)
    }

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

/// The `[count [WITHVALUES|WITHSCORES]]` of `SRANDMEMBER`, `HRANDFIELD` and
/// `ZRANDMEMBER`: a positive count asks for distinct picks, a negative one
/// for picks with repeats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RandomCount {
    /// The count as given.
    pub(crate) count: i64,
    /// Each pick is replied with its value or score.
    pub(crate) paired: bool,
    /// For picks with repeats, the most bytes their reply may take (see
    /// [`reply_budget`]).
    budget: u64,
}

impl RandomCount {
    /// Parses `args[2..]` as Redis 7.0 does: the count within
    /// ±`i64::MAX`, then `option` (absent for `SRANDMEMBER`, which takes
    /// none), and with it a count within ±`i64::MAX / 2`, since every pick
    /// then takes two replies. `None` when no count is given.
    pub(crate) fn parse(
        ctx: &Ctx<'_>,
        args: &[Bytes],
        option: Option<&str>,
    ) -> Result<Option<RandomCount>, CmdError> {
        let Some(arg) = args.get(2) else {
            return Ok(None);
        };
        if option.is_none() && args.len() > 3 {
            return Err(CmdError::syntax());
        }
        let count = super::parse::int_in_range(arg, -i64::MAX, i64::MAX, None)?;
        let paired = match (args.get(3), option) {
            (None, _) => false,
            (Some(a), Some(option)) if args.len() == 4 && super::parse::is(a, option) => true,
            (Some(_), _) => return Err(CmdError::syntax()),
        };
        if paired && !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&count) {
            return Err(CmdError::msg(super::error::OUT_OF_RANGE));
        }
        let budget = if count < 0 {
            reply_budget(ctx)
        } else {
            u64::MAX
        };
        Ok(Some(RandomCount {
            count,
            paired,
            budget,
        }))
    }

    /// Indices of the picks over `len` items, or `None` when picks with
    /// repeats are too many for the reply's budget. Distinct picks are at
    /// most `len`, so their reply is bounded by what the collection holds.
    pub(crate) fn indices(&self, p: &mut Picker, len: usize) -> Option<Vec<usize>> {
        if len == 0 {
            return Some(Vec::new());
        }
        if self.count >= 0 {
            return Some(p.distinct(len, self.count as usize));
        }
        let picks = self.count.unsigned_abs();
        // The least a pick costs in any reply: a 4-byte element (`$0\r\n`
        // alone is 4), twice when paired.
        let least = picks.saturating_mul(if self.paired { 8 } else { 4 });
        (least <= self.budget).then(|| p.with_repeats(len, picks as usize))
    }
}

/// The most bytes a reply made of random picks may take: the `normal`
/// class's hard output limit, or without one `proto-max-bulk-len`, the
/// largest string a client may send. Redis stops such a reply midway once
/// the client breaks its limit; FerrumKV builds a reply whole, so it
/// checks first.
fn reply_budget(ctx: &Ctx<'_>) -> u64 {
    match ctx.shared.normal_obuf.get().hard_bytes {
        0 => ctx.shared.config().proto_max_bulk_len_bytes,
        hard => hard,
    }
}

/// The reply of a random-pick command from what its read gave: the reply
/// (`Some(Some)`), or no such key (an empty array with a count, a null
/// without). Picks too many for the budget (`Some(None)`) close the client
/// when its class has a hard limit, as Redis closes a client whose reply
/// breaks it, with nothing pending written; with no limit, which never
/// closes anyone, they get an error instead of a reply that would
/// exhaust the server's memory (Redis would build it until it did).
pub(crate) fn random_reply(
    ctx: &mut Ctx<'_>,
    read: Option<Option<Frame>>,
    counted: bool,
) -> CmdResult {
    match read {
        Some(Some(frame)) => Ok(frame),
        Some(None) if ctx.shared.normal_obuf.get().hard_bytes == 0 => {
            Err(CmdError::msg(crate::error::REPLY_TOO_LARGE))
        }
        Some(None) => {
            ctx.conn.closing = true;
            ctx.conn.reply_too_large = true;
            Ok(Frame::Null)
        }
        None if counted => Ok(Frame::Array(Vec::new())),
        None => Ok(Frame::Null),
    }
}
