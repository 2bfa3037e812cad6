//! Argument parsing and number formatting shared by the command families
//! (and by the scripting and key-extraction code below them),
//! with Redis's exact rules for what counts as an integer or a float.

use bytes::Bytes;

use crate::error::CmdError;
use crate::error::{NOT_FLOAT, NOT_INTEGER, TIMEOUT_NEGATIVE, TIMEOUT_NOT_INTEGER};

/// Redis's `string2ll`, the protocol's own integer rules, for arguments.
pub(crate) use ferrum_proto::parse_i64;

/// An integer argument, or `ERR value is not an integer or out of range`.
pub(crate) fn int_arg(b: &[u8]) -> Result<i64, CmdError> {
    parse_i64(b).ok_or_else(|| CmdError::msg(NOT_INTEGER))
}

/// An integer argument within `min..=max`, worded as Redis's
/// `getRangeLongFromObjectOrReply` words it: `msg` for any failure when
/// given, else `not an integer` or `value must between min and max`.
pub(crate) fn int_in_range(
    b: &[u8],
    min: i64,
    max: i64,
    msg: Option<&'static str>,
) -> Result<i64, CmdError> {
    let fail = |default: String| CmdError::msg(msg.map_or(default, str::to_owned));
    let n = parse_i64(b).ok_or_else(|| fail(NOT_INTEGER.to_owned()))?;
    if !(min..=max).contains(&n) {
        return Err(fail(crate::error::out_of_range(min, max)));
    }
    Ok(n)
}

/// A millisecond timeout (`CLIENT PAUSE`, `XREAD BLOCK`): an integer, not
/// negative, with Redis's two texts for the two failures.
pub(crate) fn timeout_ms(b: &[u8]) -> Result<u64, CmdError> {
    let ms = parse_i64(b).ok_or_else(|| CmdError::msg(TIMEOUT_NOT_INTEGER))?;
    u64::try_from(ms).map_err(|_| CmdError::msg(TIMEOUT_NEGATIVE))
}

/// A database index argument (`SELECT`, `MOVE`, `COPY ... DB`): an `int`
/// as Redis reads it (out-of-range texts as [`int_in_range`]'s), then a
/// database that exists, else `ERR DB index is out of range`.
pub(crate) fn db_arg(b: &[u8], databases: usize) -> Result<usize, CmdError> {
    let n = int_in_range(b, i32::MIN.into(), i32::MAX.into(), None)?;
    usize::try_from(n)
        .ok()
        .filter(|&d| d < databases)
        .ok_or_else(|| CmdError::msg(crate::error::DB_RANGE))
}

/// Parses a float the way Redis's `string2ld` accepts it: decimal or
/// exponent notation, `inf`/`-inf`, no spaces, no NaN.
pub(crate) fn parse_f64(b: &[u8]) -> Option<f64> {
    if let Some(v) = short_integer(b) {
        return Some(v);
    }
    let s = std::str::from_utf8(b).ok()?;
    if s.is_empty() || s.starts_with(char::is_whitespace) || s.ends_with(char::is_whitespace) {
        return None;
    }
    let is = |words: &[&str]| words.iter().any(|w| s.eq_ignore_ascii_case(w));
    let v: f64 = if is(&["inf", "+inf", "infinity", "+infinity"]) {
        f64::INFINITY
    } else if is(&["-inf", "-infinity"]) {
        f64::NEG_INFINITY
    } else {
        s.parse().ok()?
    };
    (!v.is_nan()).then_some(v)
}

/// `-?[0-9]{1,15}` as the double it denotes (what the float parser would
/// give: every such integer is exact in a double), the common form of a
/// score; `None` for anything else, which takes the general path.
fn short_integer(b: &[u8]) -> Option<f64> {
    let (negative, digits) = match b.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, b),
    };
    if digits.is_empty() || digits.len() > 15 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = digits
        .iter()
        .fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'));
    // As the parser, `-0` is negative zero.
    let v = n as f64;
    Some(if negative { -v } else { v })
}

/// A float argument, or `ERR value is not a valid float`.
pub(crate) fn float_arg(b: &[u8]) -> Result<f64, CmdError> {
    parse_f64(b).ok_or_else(|| CmdError::msg(NOT_FLOAT))
}

/// Formats an `i64` as the bytes a string value holds.
pub(crate) fn i64_bytes(n: i64) -> Bytes {
    Bytes::copy_from_slice(itoa::Buffer::new().format(n).as_bytes())
}

/// Formats a float result of `INCRBYFLOAT` as Redis does (`%.17Lg` with
/// trailing zeros removed): the shortest text that reads back as the same
/// number, never in exponent notation for ordinary magnitudes.
pub(crate) fn f64_bytes(v: f64) -> Bytes {
    if v.is_infinite() {
        return Bytes::from_static(if v > 0.0 { b"inf" } else { b"-inf" });
    }
    if v == v.trunc() && v.abs() < 1e17 {
        return i64_bytes(v as i64);
    }
    let s = format!("{v}");
    Bytes::from(s)
}

/// Whether `arg` equals `word`, ignoring ASCII case.
pub(crate) fn is(arg: &[u8], word: &str) -> bool {
    arg.eq_ignore_ascii_case(word.as_bytes())
}

/// A command line from words, for tests.
#[cfg(test)]
pub(crate) fn argv(words: &[&str]) -> Vec<Bytes> {
    words
        .iter()
        .map(|w| Bytes::copy_from_slice(w.as_bytes()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_follow_string2ll() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-12"), Some(-12));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            &b""[..],
            b"+1",
            b"01",
            b"-0",
            b" 1",
            b"1 ",
            b"1.0",
            b"9223372036854775808",
            b"-",
        ] {
            assert_eq!(parse_i64(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn floats_follow_string2ld() {
        assert_eq!(parse_f64(b"1.5"), Some(1.5));
        assert_eq!(parse_f64(b"5.0e3"), Some(5000.0));
        assert_eq!(parse_f64(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_f64(b"nan"), None);
        assert_eq!(parse_f64(b" 1"), None);
        assert_eq!(parse_f64(b"abc"), None);
        assert_eq!(parse_f64(b"InFiNiTy"), Some(f64::INFINITY));
    }

    #[test]
    fn short_integers_read_as_the_float_parser_reads_them() {
        let cases = [
            "0",
            "-0",
            "00",
            "7",
            "-7",
            "000000012345",
            "999999999999999",
            "-999999999999999",
            "1000000000000000",
            "9999999999999999",
            "+5",
            "-",
            "",
            "1-",
            "12a",
            "0x10",
        ];
        for s in cases {
            let want = s.parse::<f64>().ok();
            let got = parse_f64(s.as_bytes());
            assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "{s:?}");
        }
    }

    #[test]
    fn float_results_print_like_redis() {
        assert_eq!(&f64_bytes(10.5)[..], b"10.5");
        assert_eq!(&f64_bytes(5000.0)[..], b"5000");
        assert_eq!(&f64_bytes(3.0e-3)[..], b"0.003");
        assert_eq!(&f64_bytes(-1.0)[..], b"-1");
    }
}
