//! Redis's listpack (`listpack.c`), byte for byte, as DUMP payloads carry
//! it: hashes, sorted sets and list nodes are read from it, stream nodes
//! are read and written.
//!
//! Layout: a 6-byte header (total bytes, u32 little-endian; element count,
//! u16 little-endian, 65535 when it does not fit), the elements, and a
//! 0xFF end byte. An element is its encoding (a 7-bit unsigned integer in
//! one byte, a 13-bit signed integer in two, 16/24/32/64-bit integers after
//! a 0xF1-0xF4 byte, strings after a 6-bit, 12-bit or 32-bit length), then
//! its "backlen": the size of the encoding, 7 bits a byte, most significant
//! group first, every byte but the first with its high bit set, so the
//! list can be walked backwards from its last byte. FerrumKV's own
//! listpacks (`ferrum_store::types::listpack`) are a different, simpler
//! format; this one is only for payloads.

use ferrum_proto::parse_i64;

/// Size of the header: total bytes and element count.
const HEADER: usize = 6;
/// The byte after the last element.
const END: u8 = 0xff;
/// The element count a header gives when the count is 65535 or more.
const COUNT_UNKNOWN: u16 = u16::MAX;

/// One element: Redis stores strings that are the canonical text of an
/// integer as that integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Elem<'a> {
    Int(i64),
    Str(&'a [u8]),
}

impl Elem<'_> {
    /// The integer, also from a string holding one (as Redis's
    /// `lpGetIntegerIfValid` reads either).
    pub(super) fn int(self) -> Option<i64> {
        match self {
            Elem::Int(n) => Some(n),
            Elem::Str(s) => parse_i64(s),
        }
    }

    /// The element as a string, integers in decimal.
    pub(super) fn to_vec(self) -> Vec<u8> {
        match self {
            Elem::Int(n) => n.to_string().into_bytes(),
            Elem::Str(s) => s.to_vec(),
        }
    }
}

/// The backlen of an element whose encoding takes `len` bytes, as
/// `lpEncodeBacklen` writes it (note its `<` bounds: 16383 takes three
/// bytes). Returns the bytes and how many of them are used.
fn backlen(len: usize) -> ([u8; 5], usize) {
    let n = match len {
        0..=127 => 1,
        128..=16_382 => 2,
        16_383..=2_097_150 => 3,
        2_097_151..=268_435_454 => 4,
        _ => 5,
    };
    let mut out = [0u8; 5];
    for (i, b) in out[..n].iter_mut().enumerate() {
        let shift = 7 * (n - 1 - i);
        *b = ((len >> shift) & 0x7f) as u8;
        if i > 0 {
            *b |= 0x80;
        }
    }
    (out, n)
}

/// Reads the listpack `lp`: every element, or `None` when the header's
/// total or count, an encoding, a backlen or the end byte is wrong.
pub(super) fn read(lp: &[u8]) -> Option<Vec<Elem<'_>>> {
    let total = u32::from_le_bytes(lp.get(0..4)?.try_into().ok()?) as usize;
    let count = u16::from_le_bytes(lp.get(4..6)?.try_into().ok()?);
    if total != lp.len() {
        return None;
    }
    let mut i = HEADER;
    let mut out = Vec::new();
    loop {
        let b = *lp.get(i)?;
        if b == END {
            break;
        }
        let (len, elem) = element(lp, i)?;
        let (back, n) = backlen(len);
        let end = i.checked_add(len)?;
        if lp.get(end..end.checked_add(n)?)? != &back[..n] {
            return None;
        }
        i = end + n;
        out.push(elem);
    }
    let count_ok = count == COUNT_UNKNOWN || usize::from(count) == out.len();
    (i + 1 == lp.len() && count_ok).then_some(out)
}

/// The element at `i`: the size of its encoding and its value.
fn element(lp: &[u8], i: usize) -> Option<(usize, Elem<'_>)> {
    let b = *lp.get(i)?;
    let bytes = |from: usize, n: usize| lp.get(i + from..(i + from).checked_add(n)?);
    let int = |w: usize| -> Option<i64> {
        let mut le = [0u8; 8];
        le[..w].copy_from_slice(bytes(1, w)?);
        let shift = 64 - 8 * w as u32;
        Some((i64::from_le_bytes(le) << shift) >> shift)
    };
    Some(if b & 0x80 == 0 {
        (1, Elem::Int(i64::from(b)))
    } else if b & 0xc0 == 0x80 {
        let n = usize::from(b & 0x3f);
        (1 + n, Elem::Str(bytes(1, n)?))
    } else if b & 0xe0 == 0xc0 {
        let raw = (i64::from(b & 0x1f) << 8) | i64::from(*bytes(1, 1)?.first()?);
        // 13-bit two's complement.
        let v = if raw >= 1 << 12 { raw - (1 << 13) } else { raw };
        (2, Elem::Int(v))
    } else if b & 0xf0 == 0xe0 {
        let n = (usize::from(b & 0x0f) << 8) | usize::from(*bytes(1, 1)?.first()?);
        (2 + n, Elem::Str(bytes(2, n)?))
    } else {
        match b {
            0xf0 => {
                let n = u32::from_le_bytes(bytes(1, 4)?.try_into().ok()?) as usize;
                (5usize.checked_add(n)?, Elem::Str(bytes(5, n)?))
            }
            0xf1 => (3, Elem::Int(int(2)?)),
            0xf2 => (4, Elem::Int(int(3)?)),
            0xf3 => (5, Elem::Int(int(4)?)),
            0xf4 => (9, Elem::Int(int(8)?)),
            _ => return None,
        }
    })
}

/// Builds a listpack element by element, in the encodings Redis's
/// `lpAppend` and `lpAppendInteger` choose.
#[derive(Debug)]
pub(super) struct Writer {
    buf: Vec<u8>,
    count: usize,
}

impl Writer {
    /// An empty listpack (header room only).
    pub(super) fn new() -> Writer {
        Writer {
            buf: vec![0; HEADER],
            count: 0,
        }
    }

    /// Appends an integer in its smallest encoding.
    pub(super) fn int(&mut self, v: i64) {
        let start = self.buf.len();
        match v {
            0..=127 => self.buf.push(v as u8),
            -4096..=4095 => {
                let u = (v & 0x1fff) as u16;
                self.buf
                    .extend_from_slice(&[0xc0 | (u >> 8) as u8, u as u8]);
            }
            _ => {
                let (tag, w) = match v {
                    -32_768..=32_767 => (0xf1, 2),
                    -8_388_608..=8_388_607 => (0xf2, 3),
                    -2_147_483_648..=2_147_483_647 => (0xf3, 4),
                    _ => (0xf4, 8),
                };
                self.buf.push(tag);
                self.buf.extend_from_slice(&v.to_le_bytes()[..w]);
            }
        }
        self.end_element(start);
    }

    /// Appends a string, as an integer when it is the canonical text of
    /// one (Redis's `lpStringToInt64`).
    pub(super) fn str(&mut self, s: &[u8]) {
        if s.len() <= 20 {
            if let Some(n) = parse_i64(s).filter(|n| n.to_string().as_bytes() == s) {
                return self.int(n);
            }
        }
        let start = self.buf.len();
        let n = s.len();
        if n < 64 {
            self.buf.push(0x80 | n as u8);
        } else if n < 4096 {
            self.buf
                .extend_from_slice(&[0xe0 | (n >> 8) as u8, n as u8]);
        } else {
            self.buf.push(0xf0);
            self.buf.extend_from_slice(&(n as u32).to_le_bytes());
        }
        self.buf.extend_from_slice(s);
        self.end_element(start);
    }

    fn end_element(&mut self, start: usize) {
        let (back, n) = backlen(self.buf.len() - start);
        self.buf.extend_from_slice(&back[..n]);
        self.count += 1;
    }

    /// The finished listpack: header filled in, end byte appended.
    pub(super) fn finish(mut self) -> Vec<u8> {
        self.buf.push(END);
        let total = self.buf.len() as u32;
        let count = u16::try_from(self.count).unwrap_or(COUNT_UNKNOWN);
        self.buf[0..4].copy_from_slice(&total.to_le_bytes());
        self.buf[4..6].copy_from_slice(&count.to_le_bytes());
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_encoding_round_trips() {
        let ints = [
            0,
            127,
            128,
            -1,
            -4096,
            4095,
            4096,
            -4097,
            32_767,
            -32_768,
            8_388_607,
            -8_388_608,
            i64::from(i32::MAX),
            i64::from(i32::MIN),
            i64::MAX,
            i64::MIN,
        ];
        let long = vec![b'x'; 70_000];
        let strs: [&[u8]; 6] = [b"", b"a", &[b'y'; 63], &[b'z'; 64], &[b'w'; 4095], &long];
        let mut w = Writer::new();
        for &n in &ints {
            w.int(n);
        }
        for s in strs {
            w.str(s);
        }
        w.str(b"-12");
        w.str(b"007");
        let lp = w.finish();
        let got = read(&lp).expect("valid listpack");
        let mut want: Vec<Elem<'_>> = ints.iter().map(|&n| Elem::Int(n)).collect();
        want.extend(strs.iter().map(|s| Elem::Str(s)));
        want.push(Elem::Int(-12));
        want.push(Elem::Str(b"007"));
        assert_eq!(got, want);
    }

    #[test]
    fn bytes_are_redis_listpack_bytes() {
        // A listpack of "a", 1, "hello" as redis-server 7.0.15 dumps a list
        // node (see dump.rs's `redis_dumps_restore`).
        let mut w = Writer::new();
        w.str(b"a");
        w.str(b"1");
        w.str(b"hello");
        assert_eq!(
            w.finish(),
            b"\x13\x00\x00\x00\x03\x00\x81a\x02\x01\x01\x85hello\x06\xff"
        );
        // Backlens of 16383 and more bytes take three (`lpEncodeBacklen`).
        assert_eq!(backlen(127), ([127, 0, 0, 0, 0], 1));
        assert_eq!(backlen(128), ([1, 0x80, 0, 0, 0], 2));
        assert_eq!(backlen(16_383).1, 3);
        let mut w = Writer::new();
        w.str(&[b'q'; 16_380]);
        assert_eq!(read(&w.finish()).unwrap().len(), 1);
    }

    #[test]
    fn damage_is_refused() {
        let mut w = Writer::new();
        w.str(b"hello");
        w.int(1000);
        let lp = w.finish();
        for cut in 0..lp.len() {
            assert!(read(&lp[..cut]).is_none(), "cut at {cut}");
        }
        let mut bad = lp.clone();
        bad[4] = 3; // count
        assert!(read(&bad).is_none());
        let mut bad = lp.clone();
        bad[12] ^= 1; // backlen of "hello"
        assert!(read(&bad).is_none());
        let mut bad = lp;
        bad[6] = 0x86; // string length past its bytes
        assert!(read(&bad).is_none());
    }
}
