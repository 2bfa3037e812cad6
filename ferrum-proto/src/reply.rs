//! The resumable reply parser: any RESP2 or RESP3 value a server sends.
//!
//! One named parser per type byte, dispatched from [`reply`]. Aggregates
//! recurse into [`reply`] one level deeper; [`Limits::max_depth`] stops a
//! hostile peer from exhausting the stack. Attributes (`|`) are parsed and
//! dropped, and the value they annotate is returned, as redis-rs does.

use bytes::Bytes;
use combine::{
    any, count_min_max, dispatch, opaque,
    parser::combinator::{any_send_sync_partial_state, AnySendSyncPartialState},
    value, Parser,
};

use crate::line::{exceeds, parse_i64};
use crate::parse::{fail, reject, Input, Line};
use crate::request::payload;
use crate::{Frame, Limits, ProtoError};

/// One reply at nesting `depth` (0 for a top-level value).
pub(crate) fn reply<'a>(
    limits: Limits,
    depth: usize,
) -> impl Parser<Input<'a>, Output = Frame, PartialState = AnySendSyncPartialState> {
    opaque!(any_send_sync_partial_state(any().then_partial(
        move |&mut b| {
            dispatch!(b;
                b'+' => text_line(limits).map(Frame::Simple),
                b'-' => text_line(limits).map(Frame::Error),
                b':' => integer(limits),
                b'$' => bulk(limits),
                b'!' => blob_error(limits),
                b'=' => verbatim(limits),
                b'(' => big_number(limits),
                b',' => double(limits),
                b'#' => boolean(limits),
                b'_' => null(limits),
                b'*' => array(limits, depth),
                b'~' => set(limits, depth),
                b'>' => push(limits, depth),
                b'%' => map(limits, depth),
                b'|' => attribute(limits, depth),
                _ => reject(move || ProtoError::InvalidTypeByte(b)),
            )
        }
    )))
}

/// The rest of a `+`, `-` or `(` line, which may be as long as a bulk.
fn text_line<'a>(limits: Limits) -> impl Parser<Input<'a>, Output = Bytes, PartialState = usize> {
    Line::crlf(limits.max_bulk_len, || ProtoError::LineTooLong).map(Bytes::copy_from_slice)
}

/// The rest of a line that holds a number or a flag.
fn short_line(limits: Limits) -> Line {
    Line::crlf(limits.max_inline_len, || ProtoError::LineTooLong)
}

/// `:<i64>\r\n`
fn integer<'a>(limits: Limits) -> impl Parser<Input<'a>, Output = Frame, PartialState = usize> {
    short_line(limits).and_then(|line: &[u8]| match parse_i64(line) {
        Some(n) => Ok(Frame::Integer(n)),
        None => Err(fail(ProtoError::InvalidValue("integer"))),
    })
}

/// The `<len>\r\n` of a bulk, blob error or verbatim string; `-1` is `None`.
fn blob_len<'a>(
    limits: Limits,
) -> impl Parser<Input<'a>, Output = Option<usize>, PartialState = usize> {
    Line::crlf(limits.max_inline_len, || ProtoError::TooBigBulkCount).and_then(
        move |line: &[u8]| match parse_i64(line) {
            Some(-1) => Ok(None),
            Some(n) if n >= 0 && !exceeds(n, limits.max_bulk_len) => Ok(Some(n as usize)),
            _ => Err(fail(ProtoError::InvalidBulkLength)),
        },
    )
}

/// `$<len>\r\n<bytes>\r\n`, or the RESP2 null bulk `$-1\r\n`.
fn bulk<'a>(
    limits: Limits,
) -> impl Parser<Input<'a>, Output = Frame, PartialState = AnySendSyncPartialState> {
    any_send_sync_partial_state(blob_len(limits).then_partial(|&mut len| match len {
        None => value(Frame::Null).left(),
        Some(len) => payload(len).map(Frame::Bulk).right(),
    }))
}

/// `!<len>\r\n<error>\r\n`, RESP3's blob error, read as an error reply.
fn blob_error<'a>(
    limits: Limits,
) -> impl Parser<Input<'a>, Output = Frame, PartialState = AnySendSyncPartialState> {
    any_send_sync_partial_state(blob_len(limits).then_partial(|&mut len| match len {
        None => reject(|| ProtoError::InvalidBulkLength).left(),
        Some(len) => payload(len).map(Frame::Error).right(),
    }))
}

/// `=<len>\r\n<fmt>:<text>\r\n`
fn verbatim<'a>(
    limits: Limits,
) -> impl Parser<Input<'a>, Output = Frame, PartialState = AnySendSyncPartialState> {
    any_send_sync_partial_state(blob_len(limits).then_partial(|&mut len| {
        match len {
            None => reject(|| ProtoError::InvalidBulkLength).left(),
            Some(len) => payload(len)
                .and_then(|payload: Bytes| match payload.get(..4) {
                    Some(&[a, b, c, b':']) => Ok(Frame::Verbatim {
                        format: [a, b, c],
                        text: payload.slice(4..),
                    }),
                    _ => Err(fail(ProtoError::InvalidVerbatim)),
                })
                .right(),
        }
    }))
}

/// `(<digits>\r\n`, kept as its digits.
fn big_number<'a>(limits: Limits) -> impl Parser<Input<'a>, Output = Frame, PartialState = usize> {
    text_line(limits).and_then(|digits: Bytes| {
        let magnitude = digits.strip_prefix(b"-").unwrap_or(&digits);
        if !magnitude.is_empty() && magnitude.iter().all(u8::is_ascii_digit) {
            Ok(Frame::BigNumber(digits))
        } else {
            Err(fail(ProtoError::InvalidValue("big number")))
        }
    })
}

/// `,<double>\r\n`, including `inf`, `-inf` and `nan`.
fn double<'a>(limits: Limits) -> impl Parser<Input<'a>, Output = Frame, PartialState = usize> {
    short_line(limits).and_then(|line: &[u8]| {
        std::str::from_utf8(line)
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .map(Frame::Double)
            .ok_or_else(|| fail(ProtoError::InvalidValue("double")))
    })
}

/// `#t\r\n` or `#f\r\n`.
fn boolean<'a>(limits: Limits) -> impl Parser<Input<'a>, Output = Frame, PartialState = usize> {
    short_line(limits).and_then(|line: &[u8]| match line {
        b"t" => Ok(Frame::Boolean(true)),
        b"f" => Ok(Frame::Boolean(false)),
        _ => Err(fail(ProtoError::InvalidValue("boolean"))),
    })
}

/// `_\r\n`, RESP3's one null.
fn null<'a>(limits: Limits) -> impl Parser<Input<'a>, Output = Frame, PartialState = usize> {
    short_line(limits).and_then(|line: &[u8]| match line {
        b"" => Ok(Frame::Null),
        _ => Err(fail(ProtoError::InvalidValue("null"))),
    })
}

/// The `<n>\r\n` of an aggregate; `-1` (only meaningful for `*`) is `None`.
fn count<'a>(
    limits: Limits,
) -> impl Parser<Input<'a>, Output = Option<usize>, PartialState = usize> {
    Line::crlf(limits.max_inline_len, || ProtoError::TooBigMultibulkCount).and_then(
        move |line: &[u8]| match parse_i64(line) {
            Some(-1) => Ok(None),
            Some(n) if n >= 0 && !exceeds(n, limits.max_array_len) => Ok(Some(n as usize)),
            _ => Err(fail(ProtoError::InvalidMultibulkLength)),
        },
    )
}

/// `n` replies one level deeper than `depth`.
fn elements<'a>(
    limits: Limits,
    depth: usize,
    n: usize,
) -> impl Parser<
    Input<'a>,
    Output = Vec<Frame>,
    PartialState = (usize, Vec<Frame>, AnySendSyncPartialState),
> {
    count_min_max(n, n, reply(limits, depth + 1))
}

/// An aggregate's header, refused before its count is read if it would nest
/// deeper than the limit.
fn aggregate<'a, P>(
    limits: Limits,
    depth: usize,
    body: impl FnMut(&mut Option<usize>) -> P,
) -> impl Parser<Input<'a>, Output = Frame, PartialState = AnySendSyncPartialState>
where
    P: Parser<Input<'a>, Output = Frame, PartialState: Send + Sync + 'static>,
{
    any_send_sync_partial_state(if depth >= limits.max_depth {
        reject(|| ProtoError::TooDeep).left()
    } else {
        count(limits).then_partial(body).right()
    })
}

/// `*<n>\r\n` and `n` replies, or the RESP2 null array `*-1\r\n`.
fn array<'a>(
    limits: Limits,
    depth: usize,
) -> impl Parser<Input<'a>, Output = Frame, PartialState = AnySendSyncPartialState> {
    aggregate(limits, depth, move |&mut n| match n {
        None => value(Frame::NullArray).left(),
        Some(n) => elements(limits, depth, n).map(Frame::Array).right(),
    })
}

/// `~<n>\r\n` and `n` replies.
fn set<'a>(
    limits: Limits,
    depth: usize,
) -> impl Parser<Input<'a>, Output = Frame, PartialState = AnySendSyncPartialState> {
    aggregate(limits, depth, move |&mut n| match n {
        None => reject(|| ProtoError::InvalidMultibulkLength).left(),
        Some(n) => elements(limits, depth, n).map(Frame::Set).right(),
    })
}

/// `><n>\r\n` and `n` replies.
fn push<'a>(
    limits: Limits,
    depth: usize,
) -> impl Parser<Input<'a>, Output = Frame, PartialState = AnySendSyncPartialState> {
    aggregate(limits, depth, move |&mut n| match n {
        None => reject(|| ProtoError::InvalidMultibulkLength).left(),
        Some(n) => elements(limits, depth, n).map(Frame::Push).right(),
    })
}

/// `n` key-value pairs one level deeper than `depth`.
fn pairs<'a, C>(
    limits: Limits,
    depth: usize,
    n: usize,
) -> impl Parser<Input<'a>, Output = C, PartialState = AnySendSyncPartialState>
where
    C: Extend<(Frame, Frame)> + Default + Send + Sync + 'static,
{
    any_send_sync_partial_state(count_min_max(
        n,
        n,
        (reply(limits, depth + 1), reply(limits, depth + 1)),
    ))
}

/// `%<n>\r\n` and `n` key-value pairs.
fn map<'a>(
    limits: Limits,
    depth: usize,
) -> impl Parser<Input<'a>, Output = Frame, PartialState = AnySendSyncPartialState> {
    aggregate(limits, depth, move |&mut n| match n {
        None => reject(|| ProtoError::InvalidMultibulkLength).left(),
        Some(n) => pairs(limits, depth, n).map(Frame::Map).right(),
    })
}

/// `|<n>\r\n`, `n` pairs, then the value they describe, which is returned.
///
/// The value counts as one level deeper, so a chain of attributes cannot
/// recurse without bound.
fn attribute<'a>(
    limits: Limits,
    depth: usize,
) -> impl Parser<Input<'a>, Output = Frame, PartialState = AnySendSyncPartialState> {
    aggregate(limits, depth, move |&mut n| match n {
        None => reject(|| ProtoError::InvalidMultibulkLength).left(),
        Some(n) => pairs::<Discard>(limits, depth, n)
            .with(reply(limits, depth + 1))
            .right(),
    })
}

/// Drops the attribute pairs as they are parsed, so they cost no memory.
#[derive(Default)]
struct Discard;

impl<T> Extend<T> for Discard {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        iter.into_iter().for_each(drop);
    }
}
