//! Bitmap commands: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and
//! BITFIELD_RO, over string values, with Redis's bit order (bit 0 is the
//! most significant bit of the first byte) and error texts.
//!
//! Every change builds the new string and stores it through [`put_str`],
//! the one place these commands write a string value.

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::{Access, Millis, Shard};

use super::args::Args;
use super::error::{
    BITFIELD_OVERFLOW, BITFIELD_RO_GET_ONLY, BITFIELD_TYPE, BITOP_NOT_SINGLE, BITPOS_BIT,
    BIT_OFFSET, BIT_VALUE,
};
use super::parse::{int_arg, is, parse_i64};
use super::{CmdError, CmdResult, Ctx};

/// Redis's `proto-max-bulk-len` default: bit offsets address at most this
/// many bytes.
const MAX_BYTES: u64 = 512 * 1024 * 1024;

/// The string at `key`, copied out: `Ok(None)` when absent, `WRONGTYPE`
/// for another type. (HyperLogLogs are strings too: `hll.rs` uses it.)
pub(super) fn read_str(
    shard: &mut Shard,
    db: usize,
    key: &[u8],
    now: Millis,
) -> Result<Option<Vec<u8>>, CmdError> {
    match shard.lookup(db, key, now, Access::Read) {
        Some(e) => Ok(Some(e.value().as_str()?.to_vec())),
        None => Ok(None),
    }
}

/// Stores `bytes` as the string at `key`: an existing key keeps its TTL, a
/// new one has none.
pub(super) fn put_str(shard: &mut Shard, db: usize, key: &Bytes, bytes: &[u8], now: Millis) {
    if let Some(mut e) = shard.lookup_mut(db, key, now) {
        e.set_str(bytes);
        return;
    }
    shard.insert_str(db, key, bytes, None, now);
}

/// A bit offset argument: a non-negative integer addressing less than
/// 512 MB; with `hash`, `#N` means N times `bits` (BITFIELD).
fn bit_offset(arg: &[u8], hash_bits: Option<u32>) -> Result<u64, CmdError> {
    let err = || CmdError::msg(BIT_OFFSET);
    let (digits, mul) = match (arg.strip_prefix(b"#"), hash_bits) {
        (Some(rest), Some(bits)) => (rest, i64::from(bits)),
        _ => (arg, 1),
    };
    let n = parse_i64(digits).ok_or_else(err)?;
    let n = n.checked_mul(mul).ok_or_else(err)?;
    if n < 0 || (n as u64 >> 3) >= MAX_BYTES {
        return Err(err());
    }
    Ok(n as u64)
}

fn get_bit(s: &[u8], bit: u64) -> u8 {
    let byte = (bit >> 3) as usize;
    match s.get(byte) {
        Some(b) => (b >> (7 - (bit & 7))) & 1,
        None => 0,
    }
}

fn set_bit(s: &mut Vec<u8>, bit: u64, on: bool) {
    let byte = (bit >> 3) as usize;
    if s.len() <= byte {
        s.resize(byte + 1, 0);
    }
    let mask = 1u8 << (7 - (bit & 7));
    if on {
        s[byte] |= mask;
    } else {
        s[byte] &= !mask;
    }
}

/// `SETBIT key offset value`
pub(crate) fn setbit(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let offset = bit_offset(&args[2], None)?;
    let on = match &args[3][..] {
        b"0" => false,
        b"1" => true,
        _ => return Err(CmdError::msg(BIT_VALUE)),
    };
    let (key, db, now) = (&args[1], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    let cur = read_str(shard, db, key, now)?;
    let existed = cur.is_some();
    let mut s = cur.unwrap_or_default();
    let old = get_bit(&s, offset);
    let old_len = s.len();
    set_bit(&mut s, offset, on);
    let changed = !existed || s.len() != old_len || old != u8::from(on);
    if changed {
        put_str(shard, db, key, &s, now);
    }
    drop(ks);
    ctx.dirty = Some(u64::from(changed));
    Ok(Frame::Integer(i64::from(old)))
}

/// `GETBIT key offset`
pub(crate) fn getbit(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let offset = bit_offset(&args[2], None)?;
    let key = &args[1];
    let mut ks = ctx.store().lock_key(key);
    let s = read_str(ks.shard(key), ctx.db(), key, ctx.now)?.unwrap_or_default();
    Ok(Frame::Integer(i64::from(get_bit(&s, offset))))
}

/// Resolves Redis's `start end [BYTE|BIT]` range over a string of `len`
/// bytes into an inclusive bit range; `None` when empty.
fn bit_range(len: usize, start: i64, end: i64, in_bits: bool) -> Option<(u64, u64)> {
    let total = if in_bits { len as i64 * 8 } else { len as i64 };
    let norm = |v: i64| if v < 0 { (total + v).max(0) } else { v };
    let (start, mut end) = (norm(start), norm(end));
    if end >= total {
        end = total - 1;
    }
    if start > end || total == 0 {
        return None;
    }
    let (start, end) = (start as u64, end as u64);
    Some(if in_bits {
        (start, end)
    } else {
        (start * 8, end * 8 + 7)
    })
}

fn unit_arg(arg: &[u8]) -> Result<bool, CmdError> {
    if is(arg, "bit") {
        Ok(true)
    } else if is(arg, "byte") {
        Ok(false)
    } else {
        Err(CmdError::syntax())
    }
}

fn count_bits(s: &[u8], from: u64, to: u64) -> u64 {
    let (first, last) = ((from >> 3) as usize, (to >> 3) as usize);
    if first == last {
        return (from..=to).map(|b| u64::from(get_bit(s, b))).sum();
    }
    let head: u64 = (from..(first as u64 + 1) * 8)
        .map(|b| u64::from(get_bit(s, b)))
        .sum();
    let tail: u64 = (last as u64 * 8..=to)
        .map(|b| u64::from(get_bit(s, b)))
        .sum();
    let mid: u64 = s[first + 1..last]
        .iter()
        .map(|b| u64::from(b.count_ones()))
        .sum();
    head + mid + tail
}

/// `BITCOUNT key [start end [BYTE | BIT]]`
pub(crate) fn bitcount(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let key = &args[1];
    let mut ks = ctx.store().lock_key(key);
    let Some(s) = read_str(ks.shard(key), ctx.db(), key, ctx.now)? else {
        return Ok(Frame::Integer(0));
    };
    drop(ks);
    let range = match args.len() {
        2 => bit_range(s.len(), 0, -1, false),
        4 | 5 => {
            let (start, end) = (int_arg(&args[2])?, int_arg(&args[3])?);
            let in_bits = match args.get(4) {
                Some(u) => unit_arg(u)?,
                None => false,
            };
            // Redis: two negative indexes the wrong way round count nothing
            // (clamping both to 0 would count the first byte).
            if start < 0 && end < 0 && start > end {
                return Ok(Frame::Integer(0));
            }
            bit_range(s.len(), start, end, in_bits)
        }
        _ => return Err(CmdError::syntax()),
    };
    let n = range.map_or(0, |(a, b)| count_bits(&s, a, b));
    Ok(Frame::Integer(n as i64))
}

/// The first bit equal to `bit` in `from..=to`.
fn find_bit(s: &[u8], bit: u8, from: u64, to: u64) -> Option<u64> {
    let skip = if bit == 1 { 0x00 } else { 0xff };
    let mut b = from;
    while b <= to {
        if b & 7 == 0 && b + 7 <= to && s[(b >> 3) as usize] == skip {
            b += 8;
            continue;
        }
        if get_bit(s, b) == bit {
            return Some(b);
        }
        b += 1;
    }
    None
}

/// `BITPOS key bit [start [end [BYTE | BIT]]]`
pub(crate) fn bitpos(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let bit = match int_arg(&args[2])? {
        0 => 0u8,
        1 => 1u8,
        _ => return Err(CmdError::msg(BITPOS_BIT)),
    };
    let key = &args[1];
    let mut ks = ctx.store().lock_key(key);
    let Some(s) = read_str(ks.shard(key), ctx.db(), key, ctx.now)? else {
        return Ok(Frame::Integer(if bit == 1 { -1 } else { 0 }));
    };
    drop(ks);
    let (range, end_given) = match args.len() {
        3 => (bit_range(s.len(), 0, -1, false), false),
        4..=6 => {
            let start = int_arg(&args[3])?;
            let in_bits = match args.get(5) {
                Some(u) => unit_arg(u)?,
                None => false,
            };
            let end = match args.get(4) {
                Some(e) => int_arg(e)?,
                None => -1,
            };
            (bit_range(s.len(), start, end, in_bits), args.len() > 4)
        }
        _ => return Err(CmdError::syntax()),
    };
    let Some((from, to)) = range else {
        return Ok(Frame::Integer(-1));
    };
    let pos = match find_bit(&s, bit, from, to) {
        Some(p) => p as i64,
        // Looking for a clear bit past a range that had none: with no end
        // given, the string is taken as padded with zeros on the right.
        None if bit == 0 && !end_given => ((to >> 3) + 1) as i64 * 8,
        None => -1,
    };
    Ok(Frame::Integer(pos))
}

/// `BITOP AND | OR | XOR | NOT destkey key [key ...]`
pub(crate) fn bitop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    #[derive(Clone, Copy, PartialEq)]
    enum Op {
        And,
        Or,
        Xor,
        Not,
    }
    let op = match &args[1] {
        a if is(a, "and") => Op::And,
        a if is(a, "or") => Op::Or,
        a if is(a, "xor") => Op::Xor,
        a if is(a, "not") => Op::Not,
        _ => return Err(CmdError::syntax()),
    };
    let (dest, srcs) = (&args[2], &args[3..]);
    if op == Op::Not && srcs.len() != 1 {
        return Err(CmdError::msg(BITOP_NOT_SINGLE));
    }
    let (db, now) = (ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_keys(args[2..].iter().map(|k| &k[..]));
    let mut inputs = Vec::with_capacity(srcs.len());
    for k in srcs {
        inputs.push(read_str(ks.shard(k), db, k, now)?.unwrap_or_default());
    }
    let len = inputs.iter().map(Vec::len).max().unwrap_or(0);
    let shard = ks.shard(dest);
    if len == 0 {
        shard.remove(db, dest, now);
        return Ok(Frame::Integer(0));
    }
    let byte = |s: &Vec<u8>, i: usize| s.get(i).copied().unwrap_or(0);
    let out: Vec<u8> = (0..len)
        .map(|i| {
            let mut it = inputs.iter().map(|s| byte(s, i));
            let first = it.next().unwrap_or(0);
            match op {
                Op::Not => !first,
                Op::And => it.fold(first, |a, b| a & b),
                Op::Or => it.fold(first, |a, b| a | b),
                Op::Xor => it.fold(first, |a, b| a ^ b),
            }
        })
        .collect();
    // BITOP replaces the destination like SET: any TTL goes.
    shard.insert_str(db, dest, &out, None, now);
    Ok(Frame::Integer(len as i64))
}

/// A BITFIELD integer type: `i1`..`i64` or `u1`..`u63`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct FieldType {
    signed: bool,
    bits: u32,
}

impl FieldType {
    fn parse(arg: &[u8]) -> Result<FieldType, CmdError> {
        let err = || CmdError::msg(BITFIELD_TYPE);
        let (signed, digits) = match arg.first() {
            Some(b'i' | b'I') => (true, &arg[1..]),
            Some(b'u' | b'U') => (false, &arg[1..]),
            _ => return Err(err()),
        };
        let bits = parse_i64(digits).ok_or_else(err)?;
        let max = if signed { 64 } else { 63 };
        if bits < 1 || bits > max {
            return Err(err());
        }
        Ok(FieldType {
            signed,
            bits: bits as u32,
        })
    }

    fn min(self) -> i128 {
        if self.signed {
            -(1i128 << (self.bits - 1))
        } else {
            0
        }
    }

    fn max(self) -> i128 {
        if self.signed {
            (1i128 << (self.bits - 1)) - 1
        } else {
            (1i128 << self.bits) - 1
        }
    }

    /// Reads the field at bit `offset` (missing bytes read as zero).
    fn read(self, s: &[u8], offset: u64) -> i64 {
        let mut v: u64 = 0;
        for i in 0..u64::from(self.bits) {
            v = (v << 1) | u64::from(get_bit(s, offset + i));
        }
        if self.signed && self.bits < 64 && v >> (self.bits - 1) & 1 == 1 {
            v |= u64::MAX << self.bits;
        }
        v as i64
    }

    /// Writes the low `bits` of `v` at bit `offset`; `s` already covers it.
    fn write(self, s: &mut Vec<u8>, offset: u64, v: i64) {
        let v = v as u64;
        for i in 0..u64::from(self.bits) {
            let on = v >> (u64::from(self.bits) - 1 - i) & 1 == 1;
            set_bit(s, offset + i, on);
        }
    }

    /// `value` brought into range by the overflow policy; `None` for FAIL
    /// when it is out of range.
    fn fit(self, value: i128, overflow: Overflow) -> Option<i64> {
        if (self.min()..=self.max()).contains(&value) {
            return Some(value as i64);
        }
        match overflow {
            Overflow::Fail => None,
            Overflow::Sat => Some(value.clamp(self.min(), self.max()) as i64),
            Overflow::Wrap => {
                let modulus = 1i128 << self.bits;
                let mut w = value.rem_euclid(modulus);
                if self.signed && w > self.max() {
                    w -= modulus;
                }
                Some(w as i64)
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Overflow {
    Wrap,
    Sat,
    Fail,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum FieldOp {
    Get,
    Set(i64),
    IncrBy(i64),
}

#[derive(Clone, Copy, Debug)]
struct FieldCmd {
    op: FieldOp,
    ty: FieldType,
    offset: u64,
    overflow: Overflow,
}

fn parse_fields(args: &[Bytes], read_only: bool) -> Result<Vec<FieldCmd>, CmdError> {
    let mut out = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut args = Args::new(args);
    while let Some(a) = args.next() {
        if is(a, "overflow") {
            let o = args.expect()?;
            overflow = if is(o, "wrap") {
                Overflow::Wrap
            } else if is(o, "sat") {
                Overflow::Sat
            } else if is(o, "fail") {
                Overflow::Fail
            } else {
                return Err(CmdError::msg(BITFIELD_OVERFLOW));
            };
            continue;
        }
        let kind = if is(a, "get") {
            0
        } else if is(a, "set") {
            1
        } else if is(a, "incrby") {
            2
        } else {
            return Err(CmdError::syntax());
        };
        // Every argument of the operation must be there before any is read.
        if args.remaining() < if kind == 0 { 2 } else { 3 } {
            return Err(CmdError::syntax());
        }
        let ty = FieldType::parse(args.expect()?)?;
        let offset = bit_offset(args.expect()?, Some(ty.bits))?;
        let op = match kind {
            0 => FieldOp::Get,
            1 => FieldOp::Set(args.int()?),
            _ => FieldOp::IncrBy(args.int()?),
        };
        if read_only && op != FieldOp::Get {
            return Err(CmdError::msg(BITFIELD_RO_GET_ONLY));
        }
        out.push(FieldCmd {
            op,
            ty,
            offset,
            overflow,
        });
    }
    Ok(out)
}

fn bitfield_impl(ctx: &mut Ctx<'_>, args: &[Bytes], read_only: bool) -> CmdResult {
    let cmds = parse_fields(&args[2..], read_only)?;
    let key = &args[1];
    let (db, now) = (ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    let cur = read_str(shard, db, key, now)?;
    let writes = cmds.iter().any(|c| c.op != FieldOp::Get);
    let existed = cur.is_some();
    let mut s = cur.unwrap_or_default();
    let old_len = s.len();
    if writes {
        // Redis grows the string to the highest field written first, even
        // when an overflow FAIL then leaves that field alone.
        let end = cmds
            .iter()
            .filter(|c| c.op != FieldOp::Get)
            .map(|c| (c.offset + u64::from(c.ty.bits) - 1) / 8 + 1)
            .max()
            .unwrap_or(0) as usize;
        if s.len() < end {
            s.resize(end, 0);
        }
    }
    let before = s.clone();
    let mut changes = 0u64;
    let mut replies = Vec::with_capacity(cmds.len());
    for c in &cmds {
        let old = c.ty.read(&s, c.offset);
        let reply = match c.op {
            FieldOp::Get => Some(old),
            FieldOp::Set(v) => {
                let v = if c.ty.signed {
                    i128::from(v)
                } else {
                    i128::from(v as u64)
                };
                c.ty.fit(v, c.overflow).map(|new| {
                    c.ty.write(&mut s, c.offset, new);
                    old
                })
            }
            FieldOp::IncrBy(d) => {
                changes += 1;
                c.ty.fit(i128::from(old) + i128::from(d), c.overflow)
                    .inspect(|&new| c.ty.write(&mut s, c.offset, new))
            }
        };
        replies.push(reply.map_or(Frame::Null, Frame::Integer));
    }
    if writes {
        let changed = !existed || s.len() != old_len || s != before;
        if changed {
            put_str(shard, db, key, &s, now);
        }
        // As in Redis: INCRBY always counts as a change, SET only when it
        // changed the bytes.
        if changed && changes == 0 {
            changes = 1;
        }
    }
    drop(ks);
    ctx.dirty = Some(changes);
    Ok(Frame::Array(replies))
}

/// `BITFIELD key [GET type offset | SET type offset value | INCRBY type
/// offset increment | OVERFLOW WRAP|SAT|FAIL] ...`
pub(crate) fn bitfield(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    bitfield_impl(ctx, args, false)
}

/// `BITFIELD_RO key [GET type offset] ...`
pub(crate) fn bitfield_ro(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    bitfield_impl(ctx, args, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_types_parse_like_redis() {
        assert_eq!(
            FieldType::parse(b"i64"),
            Ok(FieldType {
                signed: true,
                bits: 64
            })
        );
        assert!(FieldType::parse(b"u64").is_err());
        assert!(FieldType::parse(b"i0").is_err());
        assert!(FieldType::parse(b"x8").is_err());
    }

    #[test]
    fn fields_round_trip_and_overflow() {
        let mut s = vec![0u8; 2];
        let u8t = FieldType::parse(b"u8").expect("u8");
        u8t.write(&mut s, 4, 0xab);
        assert_eq!(s, [0x0a, 0xb0]);
        assert_eq!(u8t.read(&s, 4), 0xab);
        let i5 = FieldType::parse(b"i5").expect("i5");
        assert_eq!(i5.fit(16, Overflow::Wrap), Some(-16));
        assert_eq!(i5.fit(16, Overflow::Sat), Some(15));
        assert_eq!(i5.fit(-17, Overflow::Sat), Some(-16));
        assert_eq!(i5.fit(16, Overflow::Fail), None);
        assert_eq!(u8t.fit(256, Overflow::Wrap), Some(0));
        assert_eq!(u8t.fit(-1, Overflow::Wrap), Some(255));
    }

    #[test]
    fn bit_ranges_clamp_like_redis() {
        assert_eq!(bit_range(3, 0, -1, false), Some((0, 23)));
        assert_eq!(bit_range(3, 1, 1, false), Some((8, 15)));
        assert_eq!(bit_range(3, 5, 100, true), Some((5, 23)));
        assert_eq!(bit_range(3, -1, -2, false), None);
        assert_eq!(bit_range(0, 0, -1, false), None);
    }
}
