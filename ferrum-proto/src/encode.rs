//! Writing frames as RESP2 or RESP3 bytes.
//!
//! Frames are written straight into the caller's [`BytesMut`], integers with
//! `itoa`, and nothing is built on the side. A connection that speaks RESP2
//! gets the RESP3-only types written down to their RESP2 forms, as Redis does
//! for a client that has not sent `HELLO 3`: a map becomes a flat array of key,
//! value, ...; a set or push becomes an array; a double becomes a bulk string;
//! a boolean becomes the integer 1 or 0; a verbatim string becomes a bulk
//! string of its text; a big number becomes a bulk string of its digits.

use std::io::Write as _;

use bytes::{BufMut, BytesMut};

use crate::{BulksKind, Frame, Protocol};

const CRLF: &[u8] = b"\r\n";

impl Frame {
    /// Appends this frame to `dst` as `protocol` writes it.
    ///
    /// A simple string or an error is one line, so a `\r` or `\n` inside
    /// one is written as a space, as Redis writes its errors and Lua's status
    /// replies: no frame can end its line early and forge a reply after it,
    /// whatever text a caller puts in it.
    ///
    /// ```
    /// use bytes::BytesMut;
    /// use ferrum_proto::{Frame, Protocol};
    ///
    /// let mut out = BytesMut::new();
    /// Frame::Boolean(true).encode(Protocol::Resp2, &mut out);
    /// Frame::Boolean(true).encode(Protocol::Resp3, &mut out);
    /// assert_eq!(&out[..], b":1\r\n#t\r\n");
    /// ```
    pub fn encode(&self, protocol: Protocol, dst: &mut BytesMut) {
        let resp3 = protocol == Protocol::Resp3;
        match self {
            Frame::Simple(s) => text_line(dst, b'+', s),
            Frame::Error(e) => text_line(dst, b'-', e),
            Frame::Integer(n) => integer(dst, b':', *n),
            Frame::Bulk(b) => bulk(dst, b'$', b),
            Frame::Null if resp3 => dst.extend_from_slice(b"_\r\n"),
            Frame::Null => dst.extend_from_slice(b"$-1\r\n"),
            Frame::NullArray if resp3 => dst.extend_from_slice(b"_\r\n"),
            Frame::NullArray => dst.extend_from_slice(b"*-1\r\n"),
            Frame::Array(items) => aggregate(dst, b'*', items, protocol),
            Frame::Set(items) => aggregate(dst, if resp3 { b'~' } else { b'*' }, items, protocol),
            Frame::Push(items) => aggregate(dst, if resp3 { b'>' } else { b'*' }, items, protocol),
            Frame::Map(pairs) => {
                if resp3 {
                    header(dst, b'%', pairs.len());
                } else {
                    header(dst, b'*', pairs.len() * 2);
                }
                pairs_body(dst, pairs, protocol);
            }
            Frame::Attributed { attrs, reply } => {
                if resp3 {
                    header(dst, b'|', attrs.len());
                    pairs_body(dst, attrs, protocol);
                }
                reply.encode(protocol, dst);
            }
            Frame::Double(d) => {
                let mut repr = [0u8; 40];
                let repr = format_double(*d, &mut repr);
                if resp3 {
                    line(dst, b',', repr);
                } else {
                    bulk(dst, b'$', repr);
                }
            }
            Frame::Boolean(b) if resp3 => {
                dst.extend_from_slice(if *b { b"#t\r\n" } else { b"#f\r\n" })
            }
            Frame::Boolean(b) => dst.extend_from_slice(if *b { b":1\r\n" } else { b":0\r\n" }),
            Frame::Verbatim { format, text } if resp3 => {
                header(dst, b'=', text.len() + 4);
                dst.reserve(text.len() + 6);
                dst.put_slice(format);
                dst.put_u8(b':');
                dst.put_slice(text);
                dst.put_slice(CRLF);
            }
            Frame::Verbatim { text, .. } => bulk(dst, b'$', text),
            Frame::BigNumber(digits) if resp3 => line(dst, b'(', digits),
            Frame::BigNumber(digits) => bulk(dst, b'$', digits),
            Frame::Bulks(bulks) => {
                match (bulks.kind(), resp3) {
                    (BulksKind::Set, true) => header(dst, b'~', bulks.len()),
                    (BulksKind::Map, true) => header(dst, b'%', bulks.len() / 2),
                    _ => header(dst, b'*', bulks.len()),
                }
                dst.extend_from_slice(bulks.body());
            }
        }
    }
}

fn pairs_body(dst: &mut BytesMut, pairs: &[(Frame, Frame)], protocol: Protocol) {
    for (key, value) in pairs {
        key.encode(protocol, dst);
        value.encode(protocol, dst);
    }
}

fn line(dst: &mut BytesMut, prefix: u8, body: &[u8]) {
    dst.reserve(body.len() + 3);
    dst.put_u8(prefix);
    dst.put_slice(body);
    dst.put_slice(CRLF);
}

/// [`line`] for text that may hold a CR or LF: each becomes a space. The
/// scan is over a short line that the encoder copies anyway.
fn text_line(dst: &mut BytesMut, prefix: u8, body: &[u8]) {
    if !body.iter().any(|&b| b == b'\r' || b == b'\n') {
        return line(dst, prefix, body);
    }
    dst.reserve(body.len() + 3);
    dst.put_u8(prefix);
    dst.extend(body.iter().map(|&b| match b {
        b'\r' | b'\n' => b' ',
        b => b,
    }));
    dst.put_slice(CRLF);
}

fn integer(dst: &mut BytesMut, prefix: u8, n: i64) {
    line(dst, prefix, itoa::Buffer::new().format(n).as_bytes());
}

fn header(dst: &mut BytesMut, prefix: u8, len: usize) {
    line(dst, prefix, itoa::Buffer::new().format(len).as_bytes());
}

fn bulk(dst: &mut BytesMut, prefix: u8, body: &[u8]) {
    let mut len = itoa::Buffer::new();
    let len = len.format(body.len()).as_bytes();
    dst.reserve(len.len() + body.len() + 5);
    dst.put_u8(prefix);
    dst.put_slice(len);
    dst.put_slice(CRLF);
    dst.put_slice(body);
    dst.put_slice(CRLF);
}

fn aggregate(dst: &mut BytesMut, prefix: u8, items: &[Frame], protocol: Protocol) {
    header(dst, prefix, items.len());
    for item in items {
        item.encode(protocol, dst);
    }
}

/// Formats a double the way it reads back exactly: the shortest digits that
/// round-trip (Rust's float formatting guarantees this), without an exponent
/// for everyday magnitudes (`1`, `1.5`, `0.001`) and with one for very large or
/// small ones, written as C's `%g` writes it, as Redis replies (`1e+300`,
/// `1.5e-07`). Infinities and NaN are `inf`, `-inf` and `nan`, as Redis writes
/// them.
pub(crate) fn format_double(d: f64, buf: &mut [u8; 40]) -> &[u8] {
    if d.is_nan() {
        return b"nan";
    }
    if d.is_infinite() {
        return if d > 0.0 { b"inf" } else { b"-inf" };
    }
    let magnitude = d.abs();
    // Whole scores (counts, timestamps) are the common case. Below 2^53
    // every integer is a double and its neighbours are at most 1 apart, so
    // the shortest digits that round-trip are the integer's own: what
    // `{d}` writes, without the float formatter (a fifth of a ZPOPMIN's
    // instructions). `-0` keeps its sign through the formatter.
    if d.fract() == 0.0
        && magnitude < 9_007_199_254_740_992.0
        && !(d == 0.0 && d.is_sign_negative())
    {
        let mut digits = itoa::Buffer::new();
        let digits = digits.format(d as i64).as_bytes();
        buf[..digits.len()].copy_from_slice(digits);
        return &buf[..digits.len()];
    }
    if magnitude == 0.0 || (1e-5..1e17).contains(&magnitude) {
        return write_into(buf, format_args!("{d}"));
    }
    // Rust writes `1.5e-7` and `1e300`; C, and so Redis, `1.5e-07` and
    // `1e+300`: a sign always, and at least two exponent digits.
    let mut mantissa = [0u8; 40];
    let scientific = write_into(&mut mantissa, format_args!("{d:e}"));
    let Some(at) = scientific.iter().position(|&b| b == b'e') else {
        return b"nan";
    };
    let (digits, exponent) = (&scientific[..at], &scientific[at + 1..]);
    let (sign, exponent) = match exponent.strip_prefix(b"-") {
        Some(rest) => ('-', rest),
        None => ('+', exponent),
    };
    let (digits, exponent) = (
        std::str::from_utf8(digits).unwrap_or("nan"),
        std::str::from_utf8(exponent).unwrap_or("0"),
    );
    write_into(buf, format_args!("{digits}e{sign}{exponent:0>2}"))
}

/// Writes `args` into `buf` and returns what was written. 40 bytes hold the
/// longest double either way (17 significant digits, sign, point, and
/// `e-324` or five leading zeros).
fn write_into<'b>(buf: &'b mut [u8; 40], args: std::fmt::Arguments<'_>) -> &'b [u8] {
    let mut cursor = &mut buf[..];
    let written = cursor.write_fmt(args);
    let left = cursor.len();
    match written {
        Ok(()) => &buf[..40 - left],
        // Unreachable by the size argument above; write something valid.
        Err(_) => b"nan",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn enc(frame: &Frame, protocol: Protocol) -> String {
        let mut out = BytesMut::new();
        frame.encode(protocol, &mut out);
        String::from_utf8(out.to_vec()).unwrap()
    }

    fn both(frame: Frame, resp2: &str, resp3: &str) {
        assert_eq!(enc(&frame, Protocol::Resp2), resp2, "RESP2 {frame:?}");
        assert_eq!(enc(&frame, Protocol::Resp3), resp3, "RESP3 {frame:?}");
    }

    #[test]
    fn resp2_types_are_the_same_in_both_protocols() {
        both(Frame::ok(), "+OK\r\n", "+OK\r\n");
        both(Frame::error("ERR x"), "-ERR x\r\n", "-ERR x\r\n");
        both(Frame::Integer(-42), ":-42\r\n", ":-42\r\n");
        both(
            Frame::Integer(i64::MIN),
            ":-9223372036854775808\r\n",
            ":-9223372036854775808\r\n",
        );
        both(Frame::bulk("foo"), "$3\r\nfoo\r\n", "$3\r\nfoo\r\n");
        both(Frame::bulk(""), "$0\r\n\r\n", "$0\r\n\r\n");
        both(Frame::Array(vec![]), "*0\r\n", "*0\r\n");
        both(
            Frame::bulks(["a", "bc"]),
            "*2\r\n$1\r\na\r\n$2\r\nbc\r\n",
            "*2\r\n$1\r\na\r\n$2\r\nbc\r\n",
        );
    }

    #[test]
    fn line_breaks_in_simple_strings_and_errors_become_spaces() {
        // A client's bytes quoted in an error cannot end its line early and
        // forge a reply of their own (`:666` here).
        both(
            Frame::error("ERR unknown command 'FOO\r\n:666'"),
            "-ERR unknown command 'FOO  :666'\r\n",
            "-ERR unknown command 'FOO  :666'\r\n",
        );
        both(
            Frame::Simple(Bytes::from_static(b"a\nb\rc")),
            "+a b c\r\n",
            "+a b c\r\n",
        );
        // Bulk strings carry any bytes.
        both(Frame::bulk("a\r\n"), "$3\r\na\r\n\r\n", "$3\r\na\r\n\r\n");
    }

    #[test]
    fn nulls_are_one_type_in_resp3() {
        both(Frame::Null, "$-1\r\n", "_\r\n");
        both(Frame::NullArray, "*-1\r\n", "_\r\n");
    }

    #[test]
    fn resp3_types_fall_back_in_resp2() {
        both(
            Frame::Map(vec![(Frame::bulk("k"), Frame::Integer(1))]),
            "*2\r\n$1\r\nk\r\n:1\r\n",
            "%1\r\n$1\r\nk\r\n:1\r\n",
        );
        both(
            Frame::Set(vec![Frame::Integer(1)]),
            "*1\r\n:1\r\n",
            "~1\r\n:1\r\n",
        );
        both(
            Frame::Push(vec![Frame::bulk("m")]),
            "*1\r\n$1\r\nm\r\n",
            ">1\r\n$1\r\nm\r\n",
        );
        both(Frame::Boolean(false), ":0\r\n", "#f\r\n");
        both(
            Frame::Verbatim {
                format: *b"txt",
                text: Bytes::from_static(b"hi"),
            },
            "$2\r\nhi\r\n",
            "=6\r\ntxt:hi\r\n",
        );
        both(
            Frame::BigNumber(Bytes::from_static(b"-123")),
            "$4\r\n-123\r\n",
            "(-123\r\n",
        );
        both(Frame::Double(1.5), "$3\r\n1.5\r\n", ",1.5\r\n");
    }

    #[test]
    fn attributes_come_before_their_reply_and_only_in_resp3() {
        let attributed = Frame::Attributed {
            attrs: vec![(
                Frame::bulk("key-popularity"),
                Frame::Array(vec![Frame::bulk("key:123"), Frame::Integer(90)]),
            )],
            reply: Box::new(Frame::bulk("real")),
        };
        both(
            attributed,
            "$4\r\nreal\r\n",
            "|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n$4\r\nreal\r\n",
        );
    }

    #[test]
    fn doubles_are_shortest_round_trip() {
        let mut buf = [0u8; 40];
        for (d, want) in [
            (1.0, "1"),
            (-0.0, "-0"),
            (0.0, "0"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (3.0e-5, "0.00003"),
            (1e300, "1e+300"),
            (1.5e-7, "1.5e-07"),
            (f64::MAX, "1.7976931348623157e+308"),
            (1e17, "1e+17"),
            (-1.25e123, "-1.25e+123"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (-5e-324, "-5e-324"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
        ] {
            let got = std::str::from_utf8(format_double(d, &mut buf))
                .unwrap()
                .to_owned();
            assert_eq!(got, want);
            if d.is_finite() {
                assert_eq!(got.parse::<f64>().unwrap(), d);
            }
        }
        assert_eq!(format_double(0.1 + 0.2, &mut buf), b"0.30000000000000004");
    }

    #[test]
    fn whole_doubles_are_written_as_the_formatter_writes_them() {
        let mut buf = [0u8; 40];
        let edges = [0.0, 1.0, 9.0, 10.0, 1e15, 1e16, 2f64.powi(52) + 1.0];
        let below = 2f64.powi(53);
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let random = (0..20_000).map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Every magnitude up to 2^53, both signs.
            let d = (x >> (11 + i % 53)) as f64;
            if i % 2 == 0 {
                d
            } else {
                -d
            }
        });
        for d in edges
            .into_iter()
            .flat_map(|d| [d, -d, below - d - 1.0])
            .chain(random)
        {
            let want = format!("{d}");
            assert_eq!(
                std::str::from_utf8(format_double(d, &mut buf)).unwrap(),
                want
            );
        }
        assert_eq!(format_double(-0.0, &mut buf), b"-0");
        assert_eq!(format_double(below, &mut buf), b"9007199254740992");
    }
}
