//! Redis 7.0's RDB encoding, with no sockets and no commands: one codec for
//! `DUMP`/`RESTORE`, `MIGRATE`, `FUNCTION DUMP`/`RESTORE` and, later, RDB
//! files and replication.
//!
//! A `DUMP` payload is an RDB object (type
//! byte, then the value), the RDB version (10) as two little-endian bytes,
//! and a CRC-64 (Jones polynomial, as Redis's `crc64`) of everything before
//! it, little-endian. A value dumped by Redis 7.0 restores here and a value
//! dumped here restores in Redis.
//!
//! Written forms: strings (integers in Redis's compact encodings), lists
//! as `RDB_TYPE_LIST`, sets, hashes and sorted sets (binary scores) in
//! their plain forms, which every RDB 10 reader loads, and streams as
//! `RDB_TYPE_STREAM_LISTPACKS_2` (listpack nodes of 100 entries, groups,
//! PELs and consumers; see [`stream`]). Read forms: those, plus
//! LZF-compressed strings, string-scored sorted sets, intsets, listpacks
//! (quicklist 2, hash, sorted set), ziplists (quicklist, list, hash,
//! sorted set) and Redis 5-6.2's `RDB_TYPE_STREAM_LISTPACKS`, as Redis 7.0
//! and older write them. Redis 7.2's forms (RDB 11) are refused, as Redis
//! 7.0 refuses them. [`listpack`] is Redis's listpack byte format, read for
//! every listpack form and written for streams.

use ferrum_proto::parse_i64;
use ferrum_store::types::{End, Hash, List, Set, ZSet};
use ferrum_store::{Value, ValueRef};

/// The RDB version Redis 7.0 writes.
const RDB_VERSION: u16 = 10;

const T_STRING: u8 = 0;
const T_LIST: u8 = 1;
const T_SET: u8 = 2;
const T_ZSET: u8 = 3;
const T_HASH: u8 = 4;
const T_ZSET_2: u8 = 5;
const T_HASH_ZIPMAP: u8 = 9;
const T_LIST_ZIPLIST: u8 = 10;
const T_SET_INTSET: u8 = 11;
const T_ZSET_ZIPLIST: u8 = 12;
const T_HASH_ZIPLIST: u8 = 13;
const T_LIST_QUICKLIST: u8 = 14;
const T_HASH_LISTPACK: u8 = 16;
const T_ZSET_LISTPACK: u8 = 17;
const T_LIST_QUICKLIST_2: u8 = 18;
const T_STREAM: u8 = 15;
const T_STREAM_2: u8 = 19;

pub(crate) mod file;
mod listpack;
mod lzf;
mod stream;

/// Redis's CRC-64 (Jones polynomial, reflected, no final xor).
fn crc64(data: &[u8]) -> u64 {
    crc64_update(0, data)
}

/// Redis's `crc64` continued over `data` from `crc`, the checksum of what
/// came before (an RDB file's checksum covers the whole file).
fn crc64_update(mut crc: u64, data: &[u8]) -> u64 {
    const POLY: u64 = 0x95ac_9329_ac4b_c9b5;
    static TABLE: std::sync::LazyLock<[u64; 256]> = std::sync::LazyLock::new(|| {
        let mut t = [0u64; 256];
        for (i, slot) in t.iter_mut().enumerate() {
            let mut c = i as u64;
            for _ in 0..8 {
                c = if c & 1 == 1 { (c >> 1) ^ POLY } else { c >> 1 };
            }
            *slot = c;
        }
        t
    });
    for &b in data {
        crc = TABLE[((crc ^ u64::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

// ---- writing ----

fn put_len(out: &mut Vec<u8>, n: usize) {
    if n < 1 << 6 {
        out.push(n as u8);
    } else if n < 1 << 14 {
        out.extend_from_slice(&[0x40 | (n >> 8) as u8, n as u8]);
    } else if n <= u32::MAX as usize {
        out.push(0x80);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&(n as u64).to_be_bytes());
    }
}

/// A string, as an 8/16/32-bit integer when it is the canonical text of
/// one (Redis's `rdbTryIntegerEncoding`), else length-prefixed.
fn put_str(out: &mut Vec<u8>, s: &[u8]) {
    if s.len() <= 11 {
        if let Some(n) = parse_i64(s).filter(|n| n.to_string().as_bytes() == s) {
            if let Ok(v) = i8::try_from(n) {
                out.extend_from_slice(&[0xc0, v as u8]);
                return;
            }
            if let Ok(v) = i16::try_from(n) {
                out.push(0xc1);
                out.extend_from_slice(&v.to_le_bytes());
                return;
            }
            if let Ok(v) = i32::try_from(n) {
                out.push(0xc2);
                out.extend_from_slice(&v.to_le_bytes());
                return;
            }
        }
    }
    put_len(out, s.len());
    out.extend_from_slice(s);
}

/// A string in a file: LZF-compressed when `compress` is set and that
/// saves at least 4 bytes, as Redis's `rdbSaveRawString` does for strings
/// over 20 bytes that are not integers.
fn put_str_packed(out: &mut Vec<u8>, s: &[u8], compress: bool) {
    if compress && s.len() > 20 {
        if let Some(packed) = lzf::compress(s, s.len() - 4) {
            out.push(0xc3);
            put_len(out, packed.len());
            put_len(out, s.len());
            out.extend_from_slice(&packed);
            return;
        }
    }
    put_str(out, s);
}

/// The serialized value.
pub(crate) fn serialize(v: ValueRef<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    write_object(&mut out, v);
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Writes `v` as an RDB object: its type byte, then its value.
fn write_object(out: &mut Vec<u8>, v: ValueRef<'_>) {
    out.push(object_type(&v));
    write_value(out, v, false);
}

/// The RDB type `v` is written as.
fn object_type(v: &ValueRef<'_>) -> u8 {
    match v {
        ValueRef::Str(_) => T_STRING,
        ValueRef::Coll(c) => match &**c {
            ferrum_store::Collection::List(_) => T_LIST,
            ferrum_store::Collection::Set(_) => T_SET,
            ferrum_store::Collection::Hash(_) => T_HASH,
            ferrum_store::Collection::ZSet(_) => T_ZSET_2,
            ferrum_store::Collection::Stream(_) => T_STREAM_2,
        },
    }
}

/// Writes `v`'s value, in the form [`object_type`] names; its strings
/// LZF-compressed where that pays when `compress` is set.
fn write_value(out: &mut Vec<u8>, v: ValueRef<'_>, compress: bool) {
    let put_str = |out: &mut Vec<u8>, s: &[u8]| put_str_packed(out, s, compress);
    match v {
        ValueRef::Str(s) => put_str(out, s),
        ValueRef::Coll(c) => match &*c {
            ferrum_store::Collection::List(l) => {
                put_len(out, l.len());
                for e in l.iter() {
                    put_str(out, e);
                }
            }
            ferrum_store::Collection::Set(s) => {
                put_len(out, s.len());
                for m in s.iter() {
                    put_str(out, &m);
                }
            }
            ferrum_store::Collection::Hash(h) => {
                put_len(out, h.len());
                for (f, v) in h.iter() {
                    put_str(out, f);
                    put_str(out, v);
                }
            }
            ferrum_store::Collection::ZSet(z) => {
                put_len(out, z.len());
                // Highest score first, as Redis writes a skiplist.
                for (m, s) in z.range_by_rank(0, z.len()).iter().rev() {
                    put_str(out, m);
                    out.extend_from_slice(&s.to_le_bytes());
                }
            }
            ferrum_store::Collection::Stream(s) => stream::write(out, s),
        },
    }
}

/// RDB's opcode for a function library (`RDB_OPCODE_FUNCTION2`).
const OPCODE_FUNCTION: u8 = 245;

/// `FUNCTION DUMP`'s payload for libraries of these codes: each as an RDB
/// function record, then the version and CRC-64 footer of `DUMP`, as Redis
/// writes it (so payloads move between the two servers).
pub(crate) fn function_payload<'a>(codes: impl Iterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    for code in codes {
        out.push(OPCODE_FUNCTION);
        put_str(&mut out, code);
    }
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// The library codes in a `FUNCTION DUMP` payload; `None` if the footer
/// or a record is bad.
pub(crate) fn function_codes(payload: &[u8]) -> Option<Vec<Vec<u8>>> {
    let body = verify(payload)?;
    let mut r = Reader::new(body, 0);
    let mut codes = Vec::new();
    while r.pos < body.len() {
        if r.byte()? != OPCODE_FUNCTION {
            return None;
        }
        codes.push(r.string()?);
    }
    Some(codes)
}

// ---- reading ----

/// A cursor over an RDB object; every read fails with `None` at the end.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Whether a read went past the end (a truncated input, or a length
    /// that overstates what follows).
    short: bool,
}

/// A length, or one of the special string encodings.
enum Len {
    Plain(usize),
    Enc(u8),
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8], pos: usize) -> Reader<'a> {
        Reader {
            buf,
            pos,
            short: false,
        }
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self
            .pos
            .checked_add(n)
            .and_then(|end| self.buf.get(self.pos..end));
        match s {
            Some(_) => self.pos += n,
            None => self.short = true,
        }
        s
    }

    fn byte(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn len_or_enc(&mut self) -> Option<Len> {
        let b = self.byte()?;
        Some(match b >> 6 {
            0 => Len::Plain(usize::from(b & 0x3f)),
            1 => Len::Plain(usize::from(b & 0x3f) << 8 | usize::from(self.byte()?)),
            2 if b == 0x80 => {
                Len::Plain(u32::from_be_bytes(self.take(4)?.try_into().ok()?) as usize)
            }
            2 if b == 0x81 => Len::Plain(
                usize::try_from(u64::from_be_bytes(self.take(8)?.try_into().ok()?)).ok()?,
            ),
            2 => return None,
            _ => Len::Enc(b & 0x3f),
        })
    }

    fn len(&mut self) -> Option<usize> {
        match self.len_or_enc()? {
            Len::Plain(n) => Some(n),
            Len::Enc(_) => None,
        }
    }

    fn string(&mut self) -> Option<Vec<u8>> {
        match self.len_or_enc()? {
            Len::Plain(n) => Some(self.take(n)?.to_vec()),
            Len::Enc(0) => Some((self.byte()? as i8).to_string().into_bytes()),
            Len::Enc(1) => {
                let v = i16::from_le_bytes(self.take(2)?.try_into().ok()?);
                Some(v.to_string().into_bytes())
            }
            Len::Enc(2) => {
                let v = i32::from_le_bytes(self.take(4)?.try_into().ok()?);
                Some(v.to_string().into_bytes())
            }
            Len::Enc(3) => {
                let clen = self.len()?;
                let len = self.len()?;
                lzf::decompress(self.take(clen)?, len)
            }
            Len::Enc(_) => None,
        }
    }

    /// A `RDB_TYPE_ZSET` score: a length byte and the text (253 NaN, 254
    /// +inf, 255 -inf).
    fn text_double(&mut self) -> Option<f64> {
        match self.byte()? {
            253 => None,
            254 => Some(f64::INFINITY),
            255 => Some(f64::NEG_INFINITY),
            n => std::str::from_utf8(self.take(usize::from(n))?)
                .ok()?
                .parse()
                .ok(),
        }
    }

    fn binary_double(&mut self) -> Option<f64> {
        Some(f64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

/// The entries of a listpack, as strings.
fn listpack(lp: &[u8]) -> Option<Vec<Vec<u8>>> {
    Some(
        listpack::read(lp)?
            .into_iter()
            .map(|e| e.to_vec())
            .collect(),
    )
}

/// The entries of a ziplist, as strings. Checked as Redis's deep
/// `ziplistValidateIntegrity` does: the total length, the tail offset,
/// the entry count (unless it saturated at 65,535), and each entry's
/// record of the previous entry's length.
fn ziplist(zl: &[u8]) -> Option<Vec<Vec<u8>>> {
    let total = u32::from_le_bytes(zl.get(0..4)?.try_into().ok()?) as usize;
    let tail = u32::from_le_bytes(zl.get(4..8)?.try_into().ok()?) as usize;
    let count = u16::from_le_bytes(zl.get(8..10)?.try_into().ok()?);
    if total != zl.len() {
        return None;
    }
    let mut i = 10;
    let (mut last_start, mut last_len) = (10, 0);
    let mut out = Vec::new();
    loop {
        let p = *zl.get(i)?;
        if p == 0xff {
            break;
        }
        let start = i;
        let prevlen = if p == 0xfe {
            u32::from_le_bytes(zl.get(i + 1..i + 5)?.try_into().ok()?) as usize
        } else {
            usize::from(p)
        };
        if prevlen != last_len {
            return None;
        }
        i += if p == 0xfe { 5 } else { 1 };
        let b = *zl.get(i)?;
        let int = |w: usize, at: usize| -> Option<i64> {
            let mut bytes = [0u8; 8];
            bytes[..w].copy_from_slice(zl.get(at..at + w)?);
            let v = i64::from_le_bytes(bytes);
            let shift = 64 - 8 * w as u32;
            Some((v << shift) >> shift)
        };
        let (skip, value) = match b >> 6 {
            0 => {
                let n = usize::from(b & 0x3f);
                (1 + n, zl.get(i + 1..i + 1 + n)?.to_vec())
            }
            1 => {
                let n = (usize::from(b & 0x3f) << 8) | usize::from(*zl.get(i + 1)?);
                (2 + n, zl.get(i + 2..i + 2 + n)?.to_vec())
            }
            2 => {
                let n = u32::from_be_bytes(zl.get(i + 1..i + 5)?.try_into().ok()?) as usize;
                (5 + n, zl.get(i + 5..i + 5 + n)?.to_vec())
            }
            _ => match b {
                0xc0 => (3, int(2, i + 1)?.to_string().into_bytes()),
                0xd0 => (5, int(4, i + 1)?.to_string().into_bytes()),
                0xe0 => (9, int(8, i + 1)?.to_string().into_bytes()),
                0xf0 => (4, int(3, i + 1)?.to_string().into_bytes()),
                0xfe => (2, int(1, i + 1)?.to_string().into_bytes()),
                0xf1..=0xfd => (1, (i64::from(b & 0x0f) - 1).to_string().into_bytes()),
                _ => return None,
            },
        };
        i += skip;
        (last_start, last_len) = (start, i - start);
        out.push(value);
    }
    let counted = count == u16::MAX || usize::from(count) == out.len();
    (counted && tail == last_start && i + 1 == zl.len()).then_some(out)
}

/// The members of an intset, as strings.
fn intset(is: &[u8]) -> Option<Vec<Vec<u8>>> {
    let width = u32::from_le_bytes(is.get(0..4)?.try_into().ok()?) as usize;
    let n = u32::from_le_bytes(is.get(4..8)?.try_into().ok()?) as usize;
    if !matches!(width, 2 | 4 | 8) || is.len() != 8 + width * n {
        return None;
    }
    Some(
        is[8..]
            .chunks_exact(width)
            .map(|c| {
                let v = match width {
                    2 => i64::from(i16::from_le_bytes([c[0], c[1]])),
                    4 => i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                    _ => i64::from_le_bytes(c.try_into().unwrap_or([0; 8])),
                };
                v.to_string().into_bytes()
            })
            .collect(),
    )
}

fn list_of(items: impl IntoIterator<Item = Vec<u8>>) -> List {
    let mut l = List::new();
    for e in items {
        l.push(End::Right, &e);
    }
    l
}

/// The fields and values of a zipmap, the small-hash encoding of Redis
/// before 2.6 (RDB type 9): a count byte, then per pair the field's
/// length and bytes, the value's length, a count of unused bytes, the
/// value and those bytes; a length is one byte below 254, else 254 and
/// four bytes; 255 ends the map.
fn zipmap(zm: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut i = 1;
    let len = |i: &mut usize| -> Option<Option<usize>> {
        let b = *zm.get(*i)?;
        *i += 1;
        Some(match b {
            255 => None,
            254 => {
                let n = u32::from_le_bytes(zm.get(*i..*i + 4)?.try_into().ok()?);
                *i += 4;
                Some(n as usize)
            }
            n => Some(usize::from(n)),
        })
    };
    let mut out = Vec::new();
    while let Some(field_len) = len(&mut i)? {
        out.push(zm.get(i..i.checked_add(field_len)?)?.to_vec());
        i += field_len;
        let value_len = len(&mut i)??;
        let free = usize::from(*zm.get(i)?);
        i += 1;
        out.push(zm.get(i..i.checked_add(value_len)?)?.to_vec());
        i += value_len + free;
    }
    // An empty zipmap is corrupt, as Redis's check has it.
    (i == zm.len() && !out.is_empty()).then_some(out)
}

fn pairs_hash(items: Vec<Vec<u8>>) -> Option<Hash> {
    if items.len() % 2 != 0 {
        return None;
    }
    let mut h = Hash::new();
    for p in items.chunks_exact(2) {
        if !h.set(&p[0], &p[1]) {
            return None;
        }
    }
    Some(h)
}

fn pairs_zset(items: Vec<Vec<u8>>) -> Option<ZSet> {
    if items.len() % 2 != 0 {
        return None;
    }
    let mut z = ZSet::new();
    for p in items.chunks_exact(2) {
        let s: f64 = std::str::from_utf8(&p[1]).ok()?.parse().ok()?;
        if s.is_nan() || z.insert(&p[0], s).is_some() {
            return None;
        }
    }
    Some(z)
}

/// Why an object did not read, in Redis's words where Redis has them
/// (`rdb.c`), so that a log line reads the same as Redis's and searches
/// find both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Corrupt(pub(crate) &'static str);

impl Corrupt {
    /// A length, string or number that does not read: past the end of
    /// the input, or in an encoding that does not exist.
    const READ: Corrupt = Corrupt("Short read or unknown encoding of a length or string");
}

impl std::fmt::Display for Corrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// `Option` to [`Corrupt`]: `.or_corrupt("Intset integrity check
/// failed.")`, or `.read()` for a plain read.
trait OrCorrupt<T> {
    fn or_corrupt(self, why: &'static str) -> Result<T, Corrupt>;

    fn read(self) -> Result<T, Corrupt>
    where
        Self: Sized,
    {
        self.or_corrupt(Corrupt::READ.0)
    }
}

impl<T> OrCorrupt<T> for Option<T> {
    fn or_corrupt(self, why: &'static str) -> Result<T, Corrupt> {
        self.ok_or(Corrupt(why))
    }
}

/// Parses one serialized object (without the footer): anything
/// malformed, an empty collection, or bytes left over is refused.
fn deserialize(body: &[u8]) -> Result<Value, Corrupt> {
    let mut r = Reader::new(body, 1);
    let value = read_object(&mut r, *body.first().read()?)?;
    if r.pos != body.len() {
        return Err(Corrupt("Bytes left over after the object"));
    }
    Ok(value)
}

/// Reads the value of an object of RDB type `t` at the reader's position,
/// refusing an empty collection.
fn read_object(r: &mut Reader<'_>, t: u8) -> Result<Value, Corrupt> {
    let value = read_value(r, t)?;
    if is_empty_collection(&value) {
        return Err(Corrupt("Empty keys are not allowed"));
    }
    Ok(value)
}

/// [`read_object`], but an empty collection is read as such.
fn read_value(r: &mut Reader<'_>, t: u8) -> Result<Value, Corrupt> {
    const DUP_SET: &str = "Duplicate set members detected";
    const DUP_ZSET: &str = "Duplicate zset fields detected";
    const DUP_HASH: &str = "Duplicate hash fields detected";
    let value: Value = match t {
        T_STRING => Value::str(&r.string().read()?),
        T_LIST => {
            let n = r.len().read()?;
            let items = (0..n)
                .map(|_| r.string().read())
                .collect::<Result<Vec<_>, _>>()?;
            list_of(items).into()
        }
        T_SET => {
            let n = r.len().read()?;
            let mut s = Set::new();
            for _ in 0..n {
                // A member twice: the file is corrupt (Redis refuses it).
                if !s.insert(&r.string().read()?) {
                    return Err(Corrupt(DUP_SET));
                }
            }
            s.into()
        }
        T_ZSET | T_ZSET_2 => {
            let n = r.len().read()?;
            let mut z = ZSet::new();
            for _ in 0..n {
                let m = r.string().read()?;
                let s = if t == T_ZSET {
                    r.text_double().or_corrupt("Zset with a bad score")?
                } else {
                    r.binary_double().read()?
                };
                if s.is_nan() {
                    return Err(Corrupt("Zset with NAN score detected"));
                }
                if z.insert(&m, s).is_some() {
                    return Err(Corrupt(DUP_ZSET));
                }
            }
            z.into()
        }
        T_HASH => {
            let n = r.len().read()?;
            let mut h = Hash::new();
            for _ in 0..n {
                let (f, v) = (r.string().read()?, r.string().read()?);
                if !h.set(&f, &v) {
                    return Err(Corrupt(DUP_HASH));
                }
            }
            h.into()
        }
        T_SET_INTSET => {
            const BAD: &str = "Intset integrity check failed.";
            let mut s = Set::new();
            for m in intset(&r.string().read()?).or_corrupt(BAD)? {
                if !s.insert(&m) {
                    return Err(Corrupt(BAD));
                }
            }
            s.into()
        }
        T_LIST_ZIPLIST => packed(
            r,
            ziplist,
            |items| Some(list_of(items)),
            "List ziplist integrity check failed.",
        )?
        .into(),
        T_ZSET_ZIPLIST => packed(
            r,
            ziplist,
            pairs_zset,
            "Zset ziplist integrity check failed.",
        )?
        .into(),
        T_HASH_ZIPLIST => packed(
            r,
            ziplist,
            pairs_hash,
            "Hash ziplist integrity check failed.",
        )?
        .into(),
        T_HASH_ZIPMAP => packed(r, zipmap, pairs_hash, "Zipmap integrity check failed.")?.into(),
        T_ZSET_LISTPACK => packed(
            r,
            listpack,
            pairs_zset,
            "Zset listpack integrity check failed.",
        )?
        .into(),
        T_HASH_LISTPACK => packed(
            r,
            listpack,
            pairs_hash,
            "Hash listpack integrity check failed.",
        )?
        .into(),
        T_LIST_QUICKLIST | T_LIST_QUICKLIST_2 => {
            let nodes = r.len().read()?;
            let mut items = Vec::new();
            for _ in 0..nodes {
                // PLAIN (1, one large element as it is) or PACKED (2).
                let container = if t == T_LIST_QUICKLIST {
                    2
                } else {
                    r.len().read()?
                };
                if !matches!(container, 1 | 2) {
                    return Err(Corrupt("Quicklist integrity check failed."));
                }
                let node = r.string().read()?;
                if node.is_empty() {
                    return Err(Corrupt("Quicklist node of length 0"));
                }
                if container == 1 {
                    items.push(node);
                } else if t == T_LIST_QUICKLIST {
                    items.extend(ziplist(&node).or_corrupt("Ziplist integrity check failed.")?);
                } else {
                    items.extend(listpack(&node).or_corrupt("Listpack integrity check failed.")?);
                }
            }
            list_of(items).into()
        }
        T_STREAM | T_STREAM_2 => stream::read(r, t == T_STREAM_2)?.into(),
        _ => return Err(Corrupt("Unknown RDB encoding type")),
    };
    Ok(value)
}

/// A value in one of the packed encodings (a string holding a ziplist,
/// listpack or zipmap): `decode` reads its entries and `build` makes the
/// value of them; when either refuses, `why`, in Redis's words.
fn packed<T>(
    r: &mut Reader<'_>,
    decode: fn(&[u8]) -> Option<Vec<Vec<u8>>>,
    build: fn(Vec<Vec<u8>>) -> Option<T>,
    why: &'static str,
) -> Result<T, Corrupt> {
    let items = decode(&r.string().read()?).or_corrupt(why)?;
    build(items).or_corrupt(why)
}

/// Whether `value` is a list, hash, set or sorted set without elements,
/// which no key may hold (Redis skips such keys when it loads a file, and
/// `RESTORE` refuses them).
fn is_empty_collection(value: &Value) -> bool {
    match value.as_ref() {
        ValueRef::Str(_) => false,
        ValueRef::Coll(c) => match &*c {
            ferrum_store::Collection::List(l) => l.is_empty(),
            ferrum_store::Collection::Hash(h) => h.is_empty(),
            ferrum_store::Collection::Set(s) => s.is_empty(),
            ferrum_store::Collection::ZSet(z) => z.is_empty(),
            // Redis keeps a stream whose entries are all deleted, and
            // dumps it as it is.
            ferrum_store::Collection::Stream(_) => false,
        },
    }
}

/// Checks the footer (RDB version not newer than 10, CRC-64) and returns
/// the object bytes before it.
fn verify(payload: &[u8]) -> Option<&[u8]> {
    verify_with(payload, true)
}

/// [`verify`], with the CRC-64 checked only when `check_crc`.
fn verify_with(payload: &[u8], check_crc: bool) -> Option<&[u8]> {
    if payload.len() < 10 {
        return None;
    }
    let (body, footer) = payload.split_at(payload.len() - 10);
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    let crc = u64::from_le_bytes(footer[2..].try_into().ok()?);
    (version <= RDB_VERSION && (!check_crc || crc64(&payload[..payload.len() - 8]) == crc))
        .then_some(body)
}

/// The value of a `DUMP` payload (`RESTORE`, `MIGRATE`'s target).
///
/// # Errors
/// [`PayloadError::Footer`] when the version or checksum is wrong,
/// [`PayloadError::Data`] when the object is malformed.
/// With `check_crc` off (`DEBUG SET-SKIP-CHECKSUM-VALIDATION 1`) the
/// CRC-64 is not checked; everything else is.
pub(crate) fn restore_payload(payload: &[u8], check_crc: bool) -> Result<Value, PayloadError> {
    let body = verify_with(payload, check_crc).ok_or(PayloadError::Footer)?;
    deserialize(body).map_err(PayloadError::Data)
}

/// Why a `DUMP` payload did not load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PayloadError {
    /// The RDB version is newer than 10, or the checksum is wrong.
    Footer,
    /// The object is malformed (or an empty collection), and why.
    Data(Corrupt),
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrum_store::Typed;

    #[test]
    fn crc64_is_redis_jones() {
        // Redis's crc64 test vector.
        assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    }

    #[test]
    fn redis_dumps_restore() {
        // `DUMP` replies of redis-server 7.0.15: SET foo bar; RPUSH l a 1
        // hello (quicklist 2 of one listpack); HSET h f v n 123 (listpack).
        let string = b"\x00\x03bar\n\x00\xe6\xbeI`\xeef\xfd\x17";
        let body = verify(string).expect("footer");
        assert_eq!(deserialize(body).unwrap().as_ref(), ValueRef::Str(b"bar"));
        let list = b"\x12\x01\x02\x13\x13\x00\x00\x00\x03\x00\x81a\x02\x01\x01\x85hello\x06\xff\n\x00\xa2\x108\xa5\x16\xcf}Q";
        let v = deserialize(verify(list).expect("footer")).unwrap();
        let want: Value = list_of([b"a".to_vec(), b"1".to_vec(), b"hello".to_vec()]).into();
        assert_eq!(serialize(v.as_ref()), serialize(want.as_ref()));
        let hash = b"\x10\x12\x12\x00\x00\x00\x04\x00\x81f\x02\x81v\x02\x81n\x02{\x01\xff\n\x00\xc8\x18\xce\xf8\x84|\xec?";
        let v = deserialize(verify(hash).expect("footer")).unwrap();
        let v = v.as_ref();
        let h = Hash::of(&v).unwrap();
        assert_eq!(h.get(b"f"), Some(&b"v"[..]));
        assert_eq!(h.get(b"n"), Some(&b"123"[..]));
        // The string as FerrumKV writes it is byte for byte Redis's.
        assert_eq!(serialize(ValueRef::Str(b"bar")), string);
    }

    #[test]
    fn round_trips_and_rejects_damage() {
        let mut z = ZSet::new();
        z.insert(b"a", 1.5);
        z.insert(b"b", f64::INFINITY);
        let v: Value = z.into();
        let payload = serialize(v.as_ref());
        let back = deserialize(verify(&payload).unwrap()).unwrap();
        assert_eq!(serialize(back.as_ref()), payload);
        let mut bad = payload.clone();
        bad[1] ^= 1;
        assert!(verify(&bad).is_none());
        assert!(deserialize(&[T_LIST, 0]).is_err(), "empty list");
        assert!(
            deserialize(&[T_STRING, 0x05, b'a']).is_err(),
            "short string"
        );
        for n in ["12", "-100", "70000", "12345678901", "007"] {
            let v = Value::str(n.as_bytes());
            let p = serialize(v.as_ref());
            let back = deserialize(verify(&p).unwrap()).unwrap();
            assert_eq!(back.as_ref(), v.as_ref());
        }
    }

    #[test]
    fn zipmaps_of_redis_before_2_6_load() {
        // {"f": "value", <300 x "k">: "v"}: short lengths, a 254-prefixed
        // one, a value with 2 unused bytes after it, the end marker.
        let long = vec![b'k'; 300];
        let mut zm = vec![2u8, 1, b'f', 5, 2];
        zm.extend_from_slice(b"value\0\0");
        zm.push(254);
        zm.extend_from_slice(&300u32.to_le_bytes());
        zm.extend_from_slice(&long);
        zm.extend_from_slice(&[1, 0, b'v', 255]);
        let items = zipmap(&zm).expect("valid");
        assert_eq!(
            items,
            vec![b"f".to_vec(), b"value".to_vec(), long, b"v".to_vec()]
        );
        // Cut anywhere: refused, never a panic.
        for cut in 0..zm.len() {
            assert!(zipmap(&zm[..cut]).is_none(), "cut at {cut}");
        }
        let mut payload = vec![T_HASH_ZIPMAP];
        put_str(&mut payload, &zm);
        let mut r = Reader::new(&payload, 1);
        let value = read_object(&mut r, T_HASH_ZIPMAP).expect("a hash");
        assert!(matches!(value.as_ref(), ValueRef::Coll(_)));
    }

    #[test]
    fn refusals_say_why_in_redis_words() {
        let why = |payload: &[u8]| match restore_payload(payload, false) {
            Err(PayloadError::Data(Corrupt(why))) => why,
            other => panic!("refused as data, not {other:?}"),
        };
        // From Redis's corrupt-dump tests: an empty zipmap; a zset ziplist
        // whose entry header reaches past the end; a set member twice.
        assert_eq!(
            why(b"\x09\x02\x00\xFF\x09\x00\xC0\xF1\xB8\x67\x4C\x16\xAC\xE3"),
            "Zipmap integrity check failed."
        );
        let mut zset = vec![T_ZSET_ZIPLIST];
        let mut zl = Vec::new();
        zl.extend_from_slice(&14u32.to_le_bytes());
        zl.extend_from_slice(&10u32.to_le_bytes());
        zl.extend_from_slice(&1u16.to_le_bytes());
        zl.extend_from_slice(&[0, 0x05, b'a', 0xff]);
        put_str(&mut zset, &zl);
        zset.extend_from_slice(&[10, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(why(&zset), "Zset ziplist integrity check failed.");
        let mut set = vec![T_SET, 2];
        put_str(&mut set, b"m");
        put_str(&mut set, b"m");
        set.extend_from_slice(&[10, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(why(&set), "Duplicate set members detected");
    }

    #[test]
    fn ziplists_are_checked_as_redis_checks_them() {
        // "a" at 10 (prevlen 0), "bb" at 13 (prevlen 3), the end at 17.
        let build = |tail: u32, count: u16, second_prevlen: u8| {
            let mut zl = Vec::new();
            zl.extend_from_slice(&18u32.to_le_bytes());
            zl.extend_from_slice(&tail.to_le_bytes());
            zl.extend_from_slice(&count.to_le_bytes());
            zl.extend_from_slice(&[0, 0x01, b'a', second_prevlen, 0x02, b'b', b'b', 0xff]);
            zl
        };
        let items = vec![b"a".to_vec(), b"bb".to_vec()];
        assert_eq!(ziplist(&build(13, 2, 3)), Some(items.clone()));
        // A count that saturated is not checked.
        assert_eq!(ziplist(&build(13, u16::MAX, 3)), Some(items));
        assert_eq!(ziplist(&build(13, 3, 3)), None, "wrong count");
        assert_eq!(ziplist(&build(10, 2, 3)), None, "wrong tail");
        assert_eq!(ziplist(&build(13, 2, 2)), None, "wrong prevlen");
        // Duplicates in a hash or a set are refused, as Redis refuses them.
        assert!(pairs_hash(vec![
            b"f".to_vec(),
            b"1".to_vec(),
            b"f".to_vec(),
            b"2".to_vec()
        ])
        .is_none());
        assert!(pairs_zset(vec![
            b"m".to_vec(),
            b"1".to_vec(),
            b"m".to_vec(),
            b"2".to_vec()
        ])
        .is_none());
    }
}
