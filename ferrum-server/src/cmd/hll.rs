//! HyperLogLog commands: PFADD, PFCOUNT and PFMERGE, over plain string
//! values in Redis's own HLL layout, so a `GET` of an HLL made here is
//! byte-identical to Redis's for the same adds and an HLL string written
//! by Redis (or restored from its DUMP) works here.
//!
//! Layout (16-byte header, then the registers):
//! - `"HYLL"`, one encoding byte (0 dense, 1 sparse), three unused bytes,
//!   and the cached cardinality as 8 little-endian bytes; the top bit of
//!   the last byte set means "cache stale".
//! - Dense: 16,384 six-bit registers packed least-significant bit first.
//! - Sparse: run-length opcodes: `00xxxxxx` ZERO (1..64 zero registers),
//!   `01xxxxxx yyyyyyyy` XZERO (1..16,384 zero registers) and `1vvvvvxx`
//!   VAL (1..4 registers holding 1..32). A new HLL is sparse; it turns
//!   dense when a register needs more than 32 or the string would pass
//!   `hll-sparse-max-bytes`.
//!
//! Elements are hashed with MurmurHash64A (seed `0xadc83b19`); the low 14
//! bits pick the register and the run of trailing zeros of the rest (plus
//! one) is its candidate value. The estimate is Ertl's improved estimator
//! (arXiv:1702.01284), the one Redis 7.0 uses.

use bytes::Bytes;
use ferrum_proto::Frame;

use super::bitops::{put_str, read_str};
use super::error::{INVALID_HLL, NOT_HLL};
use super::parse::is;
use super::{CmdError, CmdResult, Ctx};

/// log2 of the register count.
const P: u32 = 14;
const REGISTERS: usize = 1 << P;
/// Bits of the hash left for the run length.
const Q: usize = 64 - P as usize;
const HDR: usize = 16;
const DENSE_SIZE: usize = HDR + (REGISTERS * 6).div_ceil(8);
const DENSE: u8 = 0;
const SPARSE: u8 = 1;
const VAL_MAX_VALUE: u8 = 32;
const VAL_MAX_LEN: usize = 4;
const ZERO_MAX_LEN: usize = 64;
const XZERO_MAX_LEN: usize = 16384;
/// Redis's `HLL_ALPHA_INF`: 0.5 / ln 2.
const ALPHA_INF: f64 = 0.721_347_520_444_481_7;

/// Redis's MurmurHash64A over little-endian 8-byte words.
pub(crate) fn murmur64a(data: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (data.len() as u64).wrapping_mul(M);
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let mut k = u64::from_le_bytes(c.try_into().expect("8-byte chunk"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// The register `ele` maps to and its candidate value (1..=51).
fn pattern(ele: &[u8]) -> (usize, u8) {
    let hash = murmur64a(ele, 0xadc8_3b19);
    let index = (hash & (REGISTERS as u64 - 1)) as usize;
    let rest = (hash >> P) | (1u64 << Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

fn dense_get(regs: &[u8], i: usize) -> u8 {
    let bit = i * 6;
    let (byte, fb) = (bit / 8, bit % 8);
    let b0 = u16::from(regs[byte]);
    let b1 = u16::from(regs.get(byte + 1).copied().unwrap_or(0));
    (((b0 >> fb) | (b1 << (8 - fb))) & 63) as u8
}

fn dense_set(regs: &mut [u8], i: usize, v: u8) {
    let bit = i * 6;
    let (byte, fb) = (bit / 8, bit % 8);
    let v = u16::from(v & 63);
    let w = (u16::from(regs[byte]) & !(63 << fb)) | (v << fb);
    regs[byte] = w as u8;
    if fb > 2 {
        let hi = &mut regs[byte + 1];
        *hi = (*hi & !(63u8 >> (8 - fb))) | (v >> (8 - fb)) as u8;
    }
}

/// One sparse opcode.
#[derive(Clone, Copy)]
enum Op {
    Zero(usize),
    XZero(usize),
    Val(u8, usize),
}

impl Op {
    fn at(s: &[u8], p: usize) -> Op {
        let b = s[p];
        if b & 0xc0 == 0 {
            Op::Zero(usize::from(b & 0x3f) + 1)
        } else if b & 0xc0 == 0x40 {
            let lo = s.get(p + 1).copied().unwrap_or(0);
            Op::XZero(((usize::from(b & 0x3f) << 8) | usize::from(lo)) + 1)
        } else {
            Op::Val(((b >> 2) & 0x1f) + 1, usize::from(b & 3) + 1)
        }
    }

    fn span(self) -> usize {
        match self {
            Op::Zero(n) | Op::XZero(n) | Op::Val(_, n) => n,
        }
    }

    fn width(self) -> usize {
        if matches!(self, Op::XZero(_)) {
            2
        } else {
            1
        }
    }

    /// A run of `n` zero registers as its shortest opcode.
    fn zeros(n: usize, out: &mut Vec<u8>) {
        if n > ZERO_MAX_LEN {
            let n = n - 1;
            out.push(0x40 | (n >> 8) as u8);
            out.push((n & 0xff) as u8);
        } else {
            out.push((n - 1) as u8);
        }
    }

    fn val(v: u8, n: usize) -> u8 {
        0x80 | ((v - 1) << 2) | (n - 1) as u8
    }
}

/// Walks a sparse body, calling `f(first_register, value, run)` for each
/// VAL run; `false` when the runs do not cover exactly 16,384 registers.
fn sparse_walk(body: &[u8], mut f: impl FnMut(usize, u8, usize)) -> bool {
    let (mut p, mut idx) = (0, 0usize);
    while p < body.len() {
        let op = Op::at(body, p);
        if let Op::Val(v, n) = op {
            if idx + n > REGISTERS {
                return false;
            }
            f(idx, v, n);
        }
        idx += op.span();
        p += op.width();
    }
    idx == REGISTERS
}

/// A new, empty HLL: sparse, one XZERO over every register, cache valid.
fn empty() -> Vec<u8> {
    let mut s = Vec::with_capacity(HDR + 2);
    s.extend_from_slice(b"HYLL");
    s.extend_from_slice(&[SPARSE, 0, 0, 0]);
    s.extend_from_slice(&[0; 8]);
    Op::zeros(XZERO_MAX_LEN, &mut s);
    s
}

/// Redis's check that a string is an HLL (`isHLLObjectOrReply`).
fn check(s: &[u8]) -> Result<(), CmdError> {
    let ok = s.len() >= HDR
        && &s[..4] == b"HYLL"
        && s[4] <= SPARSE
        && (s[4] != DENSE || s.len() == DENSE_SIZE);
    if ok {
        Ok(())
    } else {
        Err(CmdError::msg(NOT_HLL))
    }
}

fn invalidate(s: &mut [u8]) {
    s[15] |= 0x80;
}

/// Converts a sparse HLL to dense in place (header, cache included, kept).
fn to_dense(s: &mut Vec<u8>) -> Result<(), CmdError> {
    if s[4] == DENSE {
        return Ok(());
    }
    let mut dense = vec![0u8; DENSE_SIZE];
    dense[..HDR].copy_from_slice(&s[..HDR]);
    dense[4] = DENSE;
    let regs = &mut dense[HDR..];
    let ok = sparse_walk(&s[HDR..], |first, v, n| {
        for i in first..first + n {
            dense_set(regs, i, v);
        }
    });
    if !ok {
        return Err(CmdError::msg(INVALID_HLL));
    }
    *s = dense;
    Ok(())
}

/// Sets register `index` to `count` if that raises it; `Ok(true)` when it
/// did. May turn the HLL dense.
fn set_register(
    s: &mut Vec<u8>,
    index: usize,
    count: u8,
    sparse_max: usize,
) -> Result<bool, CmdError> {
    if s[4] == DENSE {
        let regs = &mut s[HDR..];
        if count > dense_get(regs, index) {
            dense_set(regs, index, count);
            return Ok(true);
        }
        return Ok(false);
    }
    if count > VAL_MAX_VALUE {
        return promote(s, index, count);
    }
    // Find the opcode covering `index`.
    let (mut p, mut first, mut prev) = (HDR, 0usize, None);
    let mut found = None;
    while p < s.len() {
        let op = Op::at(s, p);
        if index < first + op.span() {
            found = Some(op);
            break;
        }
        prev = Some(p);
        p += op.width();
        first += op.span();
    }
    let Some(op) = found.filter(|op| p + op.width() <= s.len()) else {
        return Err(CmdError::msg(INVALID_HLL));
    };
    let last = first + op.span() - 1;
    match op {
        Op::Val(old, _) if old >= count => return Ok(false),
        Op::Val(_, 1) | Op::Zero(1) => {
            s[p] = Op::val(count, 1);
        }
        _ => {
            let mut seq = Vec::with_capacity(5);
            match op {
                Op::Val(old, _) => {
                    if index != first {
                        seq.push(Op::val(old, index - first));
                    }
                    seq.push(Op::val(count, 1));
                    if index != last {
                        seq.push(Op::val(old, last - index));
                    }
                }
                _ => {
                    if index != first {
                        Op::zeros(index - first, &mut seq);
                    }
                    seq.push(Op::val(count, 1));
                    if index != last {
                        Op::zeros(last - index, &mut seq);
                    }
                }
            }
            let old_len = op.width();
            if seq.len() > old_len && s.len() + seq.len() - old_len > sparse_max {
                return promote(s, index, count);
            }
            s.splice(p..p + old_len, seq);
        }
    }
    // Merge adjacent VAL runs of equal value, scanning up to five opcodes
    // from the one before the change (as Redis does, so the bytes match).
    let mut p = prev.unwrap_or(HDR);
    let mut scan = 5;
    while p < s.len() && scan > 0 {
        scan -= 1;
        match Op::at(s, p) {
            Op::XZero(_) => p += 2,
            Op::Zero(_) => p += 1,
            Op::Val(v1, n1) => {
                if p + 1 < s.len() {
                    if let Op::Val(v2, n2) = Op::at(s, p + 1) {
                        if v1 == v2 && n1 + n2 <= VAL_MAX_LEN {
                            s[p + 1] = Op::val(v1, n1 + n2);
                            s.remove(p);
                            continue;
                        }
                    }
                }
                p += 1;
            }
        }
    }
    invalidate(s);
    Ok(true)
}

fn promote(s: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, CmdError> {
    to_dense(s)?;
    let regs = &mut s[HDR..];
    let raised = count > dense_get(regs, index);
    if raised {
        dense_set(regs, index, count);
    }
    Ok(raised)
}

/// Raises `max[i]` to each register of the HLL `s` (already checked).
fn merge_into(max: &mut [u8; REGISTERS], s: &[u8]) -> Result<(), CmdError> {
    if s[4] == DENSE {
        let regs = &s[HDR..];
        for (i, m) in max.iter_mut().enumerate() {
            *m = (*m).max(dense_get(regs, i));
        }
        return Ok(());
    }
    let ok = sparse_walk(&s[HDR..], |first, v, n| {
        for m in &mut max[first..first + n] {
            *m = (*m).max(v);
        }
    });
    if ok {
        Ok(())
    } else {
        Err(CmdError::msg(INVALID_HLL))
    }
}

fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let (mut y, mut z) = (1.0, x);
    loop {
        x *= x;
        let prev = z;
        z += x * y;
        y += y;
        if prev == z {
            return z;
        }
    }
}

fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let (mut y, mut z) = (1.0, 1.0 - x);
    loop {
        x = x.sqrt();
        let prev = z;
        y *= 0.5;
        z -= (1.0 - x).powi(2) * y;
        if prev == z {
            return z / 3.0;
        }
    }
}

/// The estimate from a histogram of register values.
fn estimate(histo: &[u32; 64]) -> u64 {
    let m = REGISTERS as f64;
    let mut z = m * tau((m - f64::from(histo[Q + 1])) / m);
    for j in (1..=Q).rev() {
        z += f64::from(histo[j]);
        z *= 0.5;
    }
    z += m * sigma(f64::from(histo[0]) / m);
    (ALPHA_INF * m * m / z).round() as u64
}

/// The estimate of a checked HLL string; `None` if its sparse body is
/// corrupt.
fn count(s: &[u8]) -> Option<u64> {
    let mut histo = [0u32; 64];
    if s[4] == DENSE {
        let regs = &s[HDR..];
        for i in 0..REGISTERS {
            histo[usize::from(dense_get(regs, i))] += 1;
        }
    } else {
        let (mut p, mut idx, body) = (0, 0usize, &s[HDR..]);
        while p < body.len() {
            let op = Op::at(body, p);
            let slot = match op {
                Op::Val(v, _) => usize::from(v),
                _ => 0,
            };
            histo[slot] = histo[slot].saturating_add(op.span() as u32);
            idx += op.span();
            p += op.width();
        }
        if idx != REGISTERS {
            return None;
        }
    }
    Some(estimate(&histo))
}

fn count_raw(max: &[u8; REGISTERS]) -> u64 {
    let mut histo = [0u32; 64];
    for &v in max {
        histo[usize::from(v & 63)] += 1;
    }
    estimate(&histo)
}

fn sparse_max(ctx: &Ctx<'_>) -> usize {
    ctx.shared
        .config()
        .stored_value("hll-sparse-max-bytes")
        .parse()
        .unwrap_or(3000)
}

/// `PFADD key [element ...]`
pub(crate) fn pfadd(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let limit = sparse_max(ctx);
    let (key, db, now) = (&args[1], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    let (mut s, mut updated) = match read_str(shard, db, key, now)? {
        Some(s) => {
            check(&s)?;
            (s, 0u64)
        }
        None => (empty(), 1),
    };
    for ele in &args[2..] {
        let (index, c) = pattern(ele);
        if set_register(&mut s, index, c, limit)? {
            updated += 1;
        }
    }
    if updated > 0 {
        invalidate(&mut s);
        put_str(shard, db, key, &s, now);
    }
    drop(ks);
    ctx.dirty = Some(updated);
    Ok(Frame::Integer(i64::from(updated > 0)))
}

/// `PFCOUNT key [key ...]`: one key answers from (and refreshes) the
/// cached cardinality; several keys are counted as their union.
pub(crate) fn pfcount(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (db, now) = (ctx.db(), ctx.now);
    if args.len() > 2 {
        let mut ks = ctx.store().lock_keys(args[1..].iter().map(|k| &k[..]));
        let mut max = Box::new([0u8; REGISTERS]);
        for k in &args[1..] {
            if let Some(s) = read_str(ks.shard(k), db, k, now)? {
                check(&s)?;
                merge_into(&mut max, &s)?;
            }
        }
        return Ok(Frame::Integer(count_raw(&max) as i64));
    }
    let key = &args[1];
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    let Some(mut s) = read_str(shard, db, key, now)? else {
        return Ok(Frame::Integer(0));
    };
    check(&s)?;
    if s[15] & 0x80 == 0 {
        let card = u64::from_le_bytes(s[8..16].try_into().expect("8 bytes"));
        return Ok(Frame::Integer(card as i64));
    }
    let card = count(&s).ok_or_else(|| CmdError::msg(INVALID_HLL))?;
    s[8..16].copy_from_slice(&card.to_le_bytes());
    put_str(shard, db, key, &s, now);
    drop(ks);
    ctx.dirty = Some(1);
    Ok(Frame::Integer(card as i64))
}

/// `PFMERGE destkey [sourcekey ...]`: the destination (itself included)
/// gets each register's maximum; dense if any input was.
pub(crate) fn pfmerge(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let limit = sparse_max(ctx);
    let (db, now) = (ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_keys(args[1..].iter().map(|k| &k[..]));
    let mut max = Box::new([0u8; REGISTERS]);
    let mut use_dense = false;
    let mut dest_cur = None;
    for (j, k) in args[1..].iter().enumerate() {
        if let Some(s) = read_str(ks.shard(k), db, k, now)? {
            check(&s)?;
            use_dense |= s[4] == DENSE;
            merge_into(&mut max, &s)?;
            if j == 0 {
                dest_cur = Some(s);
            }
        }
    }
    let dest = &args[1];
    let mut s = dest_cur.unwrap_or_else(empty);
    if use_dense {
        to_dense(&mut s)?;
    }
    for (i, &m) in max.iter().enumerate() {
        if m > 0 {
            set_register(&mut s, i, m, limit)?;
        }
    }
    invalidate(&mut s);
    put_str(ks.shard(dest), db, dest, &s, now);
    drop(ks);
    ctx.dirty = Some(1);
    Ok(Frame::ok())
}

/// `PFDEBUG GETREG|DECODE|ENCODING|TODENSE key`: Redis's internal view
/// of an HLL. GETREG and TODENSE leave the key dense, as in Redis.
pub(crate) fn pfdebug(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (sub, key, db, now) = (&args[1], &args[2], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    let Some(mut s) = read_str(shard, db, key, now)? else {
        return Err(CmdError::msg("ERR The specified key does not exist"));
    };
    check(&s)?;
    let sparse = s[4] == SPARSE;
    let densify = is(sub, "getreg") || is(sub, "todense");
    if densify && sparse {
        to_dense(&mut s)?;
        put_str(shard, db, key, &s, now);
    }
    drop(ks);
    // A conversion is a write (Redis propagates it); nothing else is.
    ctx.dirty = Some(u64::from(densify && sparse));
    if is(sub, "todense") {
        return Ok(Frame::Integer(i64::from(sparse)));
    }
    if is(sub, "getreg") {
        let regs = &s[HDR..];
        let all = (0..REGISTERS).map(|i| Frame::Integer(i64::from(dense_get(regs, i))));
        return Ok(Frame::Array(all.collect()));
    }
    if is(sub, "encoding") {
        Ok(Frame::simple(if sparse { "sparse" } else { "dense" }))
    } else if is(sub, "decode") {
        if !sparse {
            return Err(CmdError::msg("ERR HLL encoding is not sparse"));
        }
        let (body, mut p, mut out) = (&s[HDR..], 0, Vec::new());
        while p < body.len() {
            let op = Op::at(body, p);
            out.push(match op {
                Op::Zero(n) => format!("z:{n}"),
                Op::XZero(n) => format!("Z:{n}"),
                Op::Val(v, n) => format!("v:{v},{n}"),
            });
            p += op.width();
        }
        Ok(Frame::bulk(out.join(" ")))
    } else {
        Err(CmdError::msg(format!(
            "ERR Unknown PFDEBUG subcommand '{}'",
            String::from_utf8_lossy(sub)
        )))
    }
}

/// `PFSELFTEST`: Redis's self-test of the HLL code, run on this one:
/// random values through every dense register, then up to 10,000,000
/// elements added to a dense and a sparse HLL at once, the estimates
/// compared at each power of ten. `OK`, or `TESTFAILED` and what failed.
pub(crate) fn pfselftest(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let sparse_max = sparse_max(ctx);
    let mut seed = [0u8; 8];
    // Without the system's randomness, a fixed seed tests as well.
    let _ = getrandom::fill(&mut seed);
    let seed = u64::from_le_bytes(seed);
    crate::script::off_worker(|| selftest(seed, 1_000, 10_000_000, sparse_max))
        .map(|()| Frame::ok())
        .map_err(|e| CmdError::msg(format!("ERR TESTFAILED {e}")))
}

/// The self-test of [`pfselftest`]: `cycles` rounds of random register
/// values, then `elements` adds.
fn selftest(seed: u64, cycles: usize, elements: u64, sparse_max: usize) -> Result<(), String> {
    let mut rng = super::coll::Picker::from_seed(seed);
    let mut dense = vec![0u8; DENSE_SIZE];
    dense[..4].copy_from_slice(b"HYLL");
    let mut expected = [0u8; REGISTERS];
    for _ in 0..cycles {
        for (i, e) in expected.iter_mut().enumerate() {
            *e = rng.below(64) as u8;
            dense_set(&mut dense[HDR..], i, *e);
        }
        for (i, &e) in expected.iter().enumerate() {
            let got = dense_get(&dense[HDR..], i);
            if got != e {
                return Err(format!("Register {i} should be {e} but is {got}"));
            }
        }
    }
    dense[HDR..].fill(0);
    let mut sparse = empty();
    let relerr = 1.04 / (REGISTERS as f64).sqrt();
    let offset = seed.rotate_left(32);
    let mut checkpoint = 1u64;
    for j in 1..=elements {
        let ele = (j ^ offset).to_le_bytes();
        let (index, c) = pattern(&ele);
        if c > dense_get(&dense[HDR..], index) {
            dense_set(&mut dense[HDR..], index, c);
        }
        set_register(&mut sparse, index, c, sparse_max).map_err(|_| "sparse add failed")?;
        if j != checkpoint {
            continue;
        }
        if (j as usize) < sparse_max / 2 && sparse[4] != SPARSE {
            return Err("sparse encoding not used".into());
        }
        let card = count(&dense).ok_or("dense HLL unreadable")?;
        if count(&sparse) != Some(card) {
            return Err("dense/sparse disagree".into());
        }
        let max_err = if j == 10 {
            1
        } else {
            (relerr * 6.0 * checkpoint as f64).ceil() as u64
        };
        let err = checkpoint.abs_diff(card);
        if err > max_err {
            return Err(format!("Too big error. card:{checkpoint} abserr:{err}"));
        }
        checkpoint *= 10;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_self_test_passes_here_and_catches_a_broken_estimate() {
        // Fewer elements than PFSELFTEST's 10,000,000: a debug build.
        assert_eq!(selftest(7, 3, 100_000, 3000), Ok(()));
        // With sparse HLLs capped at 19 bytes, the first checkpoint finds
        // the HLL already dense.
        assert_eq!(
            selftest(7, 1, 100, 19).unwrap_err(),
            "sparse encoding not used"
        );
    }

    #[test]
    fn dense_registers_round_trip() {
        let mut regs = vec![0u8; DENSE_SIZE - HDR];
        for i in 0..REGISTERS {
            dense_set(&mut regs, i, (i % 64) as u8);
        }
        for i in 0..REGISTERS {
            assert_eq!(dense_get(&regs, i), (i % 64) as u8);
        }
    }

    #[test]
    fn empty_hll_is_redis_bytes_and_counts_zero() {
        let s = empty();
        assert_eq!(
            &s[..],
            b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff"
        );
        assert_eq!(count(&s), Some(0));
    }

    #[test]
    fn sparse_and_dense_agree() {
        let mut s = empty();
        let mut d = empty();
        to_dense(&mut d).unwrap();
        for i in 0..2000u32 {
            let (idx, c) = pattern(i.to_string().as_bytes());
            set_register(&mut s, idx, c, 1 << 20).unwrap();
            set_register(&mut d, idx, c, 1 << 20).unwrap();
        }
        assert_eq!(s[4], SPARSE);
        let est = count(&s).unwrap();
        assert_eq!(Some(est), count(&d));
        assert!((1900..2100).contains(&est), "{est}");
        to_dense(&mut s).unwrap();
        assert_eq!(s[HDR..], d[HDR..]);
    }

    #[test]
    fn corrupt_sparse_is_detected() {
        let mut s = empty();
        s.push(0x00);
        assert_eq!(count(&s), None);
        let mut max = Box::new([0u8; REGISTERS]);
        assert!(merge_into(&mut max, &s).is_err());
        assert!(to_dense(&mut s).is_err());
    }
}
