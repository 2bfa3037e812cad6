//! LZF, the compression Redis applies to strings in RDB files
//! (`rdbcompression`): Marc Lehmann's format, as Redis's `lzf_c.c` writes
//! it and `lzf_d.c` reads it. A stream is a sequence of
//!
//! - literal runs: a control byte `000LLLLL`, then `L + 1` bytes (1-32);
//! - back references: a control byte `LLLOOOOO` (`L` of 1-6, or 7 and an
//!   extension byte added), then the offset's low byte: copy `L + 2` bytes
//!   starting `offset + 1` bytes back (up to 8,192 back, 264 long).
//!
//! Any valid stream decodes the same everywhere, so this compressor need
//! not produce Redis's exact bytes, only valid ones.

/// Farthest back a reference reaches.
const MAX_OFFSET: usize = 1 << 13;
/// Longest reference: 7 + 255 + 2.
const MAX_REF: usize = 264;
/// Longest literal run.
const MAX_LIT: usize = 32;
const HASH_BITS: u32 = 14;

thread_local! {
    /// The last position of each 3-byte hash, kept between calls and never
    /// cleared (as Redis's `lzf_c.c` leaves its table uninitialised): a
    /// stale entry is checked against the input before it is used, so it
    /// costs at most a missed match, and a string costs no table reset.
    static TABLE: std::cell::RefCell<Vec<u32>> = std::cell::RefCell::new(vec![0; 1 << HASH_BITS]);
}

/// Compresses `input` into at most `max_out` bytes; `None` when it does
/// not fit (Redis then stores the string as it is).
pub(super) fn compress(input: &[u8], max_out: usize) -> Option<Vec<u8>> {
    TABLE.with(|t| compress_with(&mut t.borrow_mut(), input, max_out))
}

fn compress_with(table: &mut [u32], input: &[u8], max_out: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(max_out.min(input.len()));
    let hash = |at: usize| {
        let v =
            u32::from(input[at]) << 16 | u32::from(input[at + 1]) << 8 | u32::from(input[at + 2]);
        (v.wrapping_mul(2_654_435_761) >> (32 - HASH_BITS)) as usize
    };
    // Where the current literal run's control byte is, and its length.
    let mut lit_at = out.len();
    out.push(0);
    let mut lit = 0usize;
    let mut ip = 0;
    while ip < input.len() {
        let mut matched = 0;
        let mut back = 0;
        if ip + 2 < input.len() {
            let h = hash(ip);
            // A position from this input, or a stale one from another:
            // only one before `ip` is a candidate, and its bytes decide.
            let from = table[h] as usize;
            table[h] = ip as u32;
            if from < ip {
                back = ip - from;
                if back <= MAX_OFFSET && input[from..from + 3] == input[ip..ip + 3] {
                    let most = MAX_REF.min(input.len() - ip);
                    matched = 3;
                    while matched < most && input[from + matched] == input[ip + matched] {
                        matched += 1;
                    }
                }
            }
        }
        if matched >= 3 {
            // Close the literal run (or drop its unused control byte).
            if lit > 0 {
                out[lit_at] = (lit - 1) as u8;
            } else {
                out.pop();
            }
            let len = matched - 2;
            let off = back - 1;
            if len < 7 {
                out.push(((len << 5) | (off >> 8)) as u8);
            } else {
                out.push(((7 << 5) | (off >> 8)) as u8);
                out.push((len - 7) as u8);
            }
            out.push(off as u8);
            ip += matched;
            lit_at = out.len();
            out.push(0);
            lit = 0;
        } else {
            out.push(input[ip]);
            ip += 1;
            lit += 1;
            if lit == MAX_LIT {
                out[lit_at] = (lit - 1) as u8;
                lit_at = out.len();
                out.push(0);
                lit = 0;
            }
        }
        if out.len() > max_out + 1 {
            return None;
        }
    }
    if lit > 0 {
        out[lit_at] = (lit - 1) as u8;
    } else {
        out.pop();
    }
    (out.len() <= max_out).then_some(out)
}

/// Decompresses `input`, which must expand to exactly `len` bytes.
pub(super) fn decompress(input: &[u8], len: usize) -> Option<Vec<u8>> {
    // `len` comes from the input: reserve no more than it could expand
    // to (a reference of 3 bytes makes at most 264), so a hostile length
    // allocates nothing it cannot fill.
    let mut out = Vec::with_capacity(len.min(input.len().saturating_mul(MAX_REF / 3 + 1)));
    let mut i = 0;
    while i < input.len() {
        let ctrl = usize::from(input[i]);
        i += 1;
        if ctrl < 32 {
            let run = ctrl + 1;
            out.extend_from_slice(input.get(i..i + run)?);
            i += run;
        } else {
            let mut n = ctrl >> 5;
            if n == 7 {
                n += usize::from(*input.get(i)?);
                i += 1;
            }
            let back = ((ctrl & 0x1f) << 8) + usize::from(*input.get(i)?) + 1;
            i += 1;
            let start = out.len().checked_sub(back)?;
            for k in 0..n + 2 {
                let b = out[start + k];
                out.push(b);
            }
        }
        if out.len() > len {
            return None;
        }
    }
    (out.len() == len).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn literals_and_back_references_expand() {
        // "abcabcabc": literal "abc", then a 6-byte back reference.
        let c = [0x02, b'a', b'b', b'c', 0x80, 0x02];
        assert_eq!(decompress(&c, 9).unwrap(), b"abcabcabc");
        assert!(decompress(&c, 8).is_none());
        // A hostile length allocates nothing it cannot fill.
        assert!(decompress(&c, usize::MAX).is_none());
    }

    #[test]
    fn repetitive_text_shrinks_and_random_bytes_do_not_fit() {
        let text = b"value:1234".repeat(100);
        let packed = compress(&text, text.len() - 4).expect("compresses");
        assert!(packed.len() < text.len() / 10, "{}", packed.len());
        assert_eq!(decompress(&packed, text.len()).unwrap(), text);
        let noise: Vec<u8> = (0..200u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        assert!(compress(&noise, noise.len() - 4).is_none());
    }

    proptest! {
        #[test]
        fn whatever_compresses_decompresses_to_itself(
            input in proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), any::<u8>()], 0..3000),
        ) {
            if let Some(packed) = compress(&input, input.len() + 64) {
                prop_assert!(packed.len() <= input.len() + 64);
                prop_assert_eq!(decompress(&packed, input.len()), Some(input.clone()));
            }
            // A budget it cannot meet is refused, never overrun.
            if let Some(packed) = compress(&input, input.len() / 2) {
                prop_assert!(packed.len() <= input.len() / 2);
            }
        }
    }
}
