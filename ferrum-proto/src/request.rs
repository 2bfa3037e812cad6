//! The resumable request parser: what a client sends to a server.
//!
//! Redis reads two request shapes (`processInputBuffer`): a multibulk
//! (`*<n>\r\n` then `n` bulk strings, each `$<len>\r\n<bytes>\r\n`), and, when
//! the first byte is not `*`, an inline command line. Both become a
//! [`Frame::Array`] of [`Frame::Bulk`]s. `*0`, `*-1` and a blank inline line
//! carry no command and yield `None`, which the codec skips, as Redis does.

use bytes::Bytes;
use combine::{
    any, count_min_max, look_ahead,
    parser::{
        combinator::{any_send_sync_partial_state, AnySendSyncPartialState},
        range::take,
    },
    value, Parser,
};

use crate::inline::split_frames;
use crate::line::parse_i64;
use crate::parse::{fail, reject, Input, Line};
use crate::{Frame, Limits, ProtoError};

/// One request, or `None` for an empty one that the codec skips.
pub(crate) fn request<'a>(
    limits: Limits,
) -> impl Parser<Input<'a>, Output = Option<Frame>, PartialState = AnySendSyncPartialState> {
    any_send_sync_partial_state(look_ahead(any()).then_partial(move |&mut first| {
        if first == b'*' {
            multibulk(limits).left()
        } else {
            inline(limits).right()
        }
    }))
}

/// `*<n>\r\n` followed by `n` bulk strings.
fn multibulk<'a>(
    limits: Limits,
) -> impl Parser<Input<'a>, Output = Option<Frame>, PartialState = AnySendSyncPartialState> {
    any_send_sync_partial_state(any().with(count(limits)).then_partial(move |&mut n| {
        if n <= 0 {
            value(None).left()
        } else {
            let n = n as usize;
            count_min_max(n, n, argument(limits))
                .map(|args: Vec<Frame>| Some(Frame::Array(args)))
                .right()
        }
    }))
}

/// The `<n>\r\n` of a multibulk. Zero or negative counts are valid and mean
/// "no command".
fn count<'a>(limits: Limits) -> impl Parser<Input<'a>, Output = i64, PartialState = usize> {
    Line::crlf(limits.max_inline_len, || ProtoError::TooBigMultibulkCount)
        .and_then(move |line: &[u8]| limits.request_array_len(parse_i64(line)).map_err(fail))
}

/// One element of a multibulk, which Redis insists is a bulk string.
fn argument<'a>(
    limits: Limits,
) -> impl Parser<Input<'a>, Output = Frame, PartialState = AnySendSyncPartialState> {
    any_send_sync_partial_state(any().then_partial(move |&mut b| {
        if b == b'$' {
            bulk_len(limits)
                .then_partial(|&mut len| payload(len))
                .map(Frame::Bulk)
                .left()
        } else {
            reject(move || ProtoError::ExpectedBulk(b)).right()
        }
    }))
}

/// The `<len>\r\n` of a request bulk, checked against the limit before any of
/// the payload is read.
fn bulk_len<'a>(limits: Limits) -> impl Parser<Input<'a>, Output = usize, PartialState = usize> {
    Line::crlf(limits.max_inline_len, || ProtoError::TooBigBulkCount)
        .and_then(move |line: &[u8]| limits.request_bulk_len(parse_i64(line)).map_err(fail))
}

/// `len` payload bytes and their CRLF.
///
/// The payload and its CRLF are taken as one range, so nothing borrowed from
/// the read buffer is kept in the partial state between calls: `take` waits
/// until all `len + 2` bytes are there, without copying or reserving anything.
/// The payload is then copied into its own [`Bytes`]; only the fast path can
/// slice the read buffer without copying.
pub(crate) fn payload<'a>(len: usize) -> impl Parser<Input<'a>, Output = Bytes, PartialState = ()> {
    take(len.saturating_add(2)).and_then(move |bytes: &[u8]| match bytes.split_at_checked(len) {
        Some((payload, b"\r\n")) => Ok(Bytes::copy_from_slice(payload)),
        _ => Err(fail(ProtoError::ExpectedCrlf)),
    })
}

/// An inline command line, split the way `sdssplitargs` splits it.
fn inline<'a>(
    limits: Limits,
) -> impl Parser<Input<'a>, Output = Option<Frame>, PartialState = usize> {
    Line::lf(limits.max_inline_len, || ProtoError::TooBigInlineRequest).and_then(|line: &[u8]| {
        match split_frames(line) {
            Ok(args) if args.is_empty() => Ok(None),
            Ok(args) => Ok(Some(Frame::Array(args))),
            Err(err) => Err(fail(err)),
        }
    })
}
