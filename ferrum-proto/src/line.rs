//! Line scanning and number parsing shared by both decoder paths.
//!
//! The fast path and the resumable combine parsers must agree byte for byte
//! on where a line ends, how long it may grow and which numbers are valid, so
//! both call these functions. Numbers follow Redis's `string2ll`: an optional
//! `-`, no `+`, no leading zeros, no spaces, and no overflow.

/// How a line ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Terminator {
    /// `\r\n`, as every RESP header and simple value ends.
    Crlf,
    /// `\n`, with one `\r` before it dropped if present: inline commands, as
    /// Redis's `processInlineBuffer` reads them.
    Lf,
}

/// Where the line starting at the beginning of a buffer ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scan {
    /// The line's content is `buf[..content_end]`; the next item starts at
    /// `next`.
    Found { content_end: usize, next: usize },
    /// No terminator in `buf`; `buf.len()` bytes were searched, so a later
    /// search can resume there.
    Missing,
}

/// Finds the end of the line at the start of `buf`. The first `resume` bytes
/// are known to hold no terminator (a previous search looked at them).
pub(crate) fn find_line(buf: &[u8], resume: usize, term: Terminator) -> Scan {
    match term {
        Terminator::Crlf => {
            // A `\r` may have been the last byte searched before, so look at it
            // again: its `\n` may have arrived since.
            let mut from = resume.saturating_sub(1);
            while let Some(i) = buf.get(from..).and_then(|rest| position(rest, b'\r')) {
                let cr = from + i;
                match buf.get(cr + 1) {
                    Some(b'\n') => {
                        return Scan::Found {
                            content_end: cr,
                            next: cr + 2,
                        }
                    }
                    Some(_) => from = cr + 1,
                    None => break,
                }
            }
            Scan::Missing
        }
        Terminator::Lf => match buf.get(resume..).and_then(|rest| position(rest, b'\n')) {
            Some(i) => {
                let lf = resume + i;
                let content_end = if lf > 0 && buf[lf - 1] == b'\r' {
                    lf - 1
                } else {
                    lf
                };
                Scan::Found {
                    content_end,
                    next: lf + 1,
                }
            }
            None => Scan::Missing,
        },
    }
}

#[inline]
fn position(haystack: &[u8], needle: u8) -> Option<usize> {
    haystack.iter().position(|&b| b == needle)
}

/// Parses a decimal `i64` exactly as Redis's `string2ll` does: an optional
/// `-`, then `0` or digits without a leading zero, fitting an `i64`; no
/// `+`, no spaces, no `-0`. Redis reads lengths on the wire, integer
/// arguments and integer configuration values by these rules.
///
/// ```
/// use ferrum_proto::parse_i64;
/// assert_eq!(parse_i64(b"-42"), Some(-42));
/// assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
/// for refused in [&b"+1"[..], b"01", b"-0", b" 1", b"", b"9223372036854775808"] {
///     assert_eq!(parse_i64(refused), None);
/// }
/// ```
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    if s == b"0" {
        return Some(0);
    }
    let (negative, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    // At most 19 digits fit; the first must be 1-9 ("0" alone was handled).
    if digits.is_empty() || digits.len() > 19 || !(b'1'..=b'9').contains(&digits[0]) {
        return None;
    }
    let mut value: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    if negative {
        // i64::MIN's magnitude is one more than i64::MAX.
        if value > i64::MAX as u64 + 1 {
            None
        } else {
            Some((value as i64).wrapping_neg())
        }
    } else {
        i64::try_from(value).ok()
    }
}

/// Whether a declared length `n` (already known to be non-negative) exceeds
/// `max`.
pub(crate) fn exceeds(n: i64, max: usize) -> bool {
    u64::try_from(n).unwrap_or(0) > u64::try_from(max).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_follow_string2ll() {
        for (s, want) in [
            (&b"0"[..], Some(0)),
            (b"1", Some(1)),
            (b"-1", Some(-1)),
            (b"42", Some(42)),
            (b"9223372036854775807", Some(i64::MAX)),
            (b"-9223372036854775808", Some(i64::MIN)),
            (b"9223372036854775808", None),
            (b"-9223372036854775809", None),
            (b"99999999999999999999", None),
            (b"", None),
            (b"-", None),
            (b"-0", None),
            (b"007", None),
            (b"+5", None),
            (b" 5", None),
            (b"5 ", None),
            (b"1x", None),
        ] {
            assert_eq!(parse_i64(s), want, "{:?}", String::from_utf8_lossy(s));
        }
    }

    #[test]
    fn crlf_lines_resume_across_a_split_terminator() {
        assert_eq!(find_line(b"abc\r", 0, Terminator::Crlf), Scan::Missing);
        assert_eq!(
            find_line(b"abc\r\nx", 4, Terminator::Crlf),
            Scan::Found {
                content_end: 3,
                next: 5
            }
        );
        assert_eq!(
            find_line(b"a\rb\r\n", 0, Terminator::Crlf),
            Scan::Found {
                content_end: 3,
                next: 5
            }
        );
    }

    #[test]
    fn lf_lines_drop_one_cr() {
        assert_eq!(
            find_line(b"PING\r\n", 0, Terminator::Lf),
            Scan::Found {
                content_end: 4,
                next: 6
            }
        );
        assert_eq!(
            find_line(b"PING\n", 0, Terminator::Lf),
            Scan::Found {
                content_end: 4,
                next: 5
            }
        );
        assert_eq!(
            find_line(b"\n", 0, Terminator::Lf),
            Scan::Found {
                content_end: 0,
                next: 1
            }
        );
        assert_eq!(find_line(b"PING", 0, Terminator::Lf), Scan::Missing);
    }

    #[test]
    fn exceeds_compares_without_wrapping() {
        assert!(!exceeds(10, 10));
        assert!(exceeds(11, 10));
        assert!(!exceeds(i64::MAX, usize::MAX));
    }
}
