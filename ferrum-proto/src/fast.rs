//! The fast path for requests whose bytes have all arrived.
//!
//! Under pipelining (`redis-benchmark -P 16`) a read usually holds many whole
//! commands. For those, one pass over the buffer records where each argument
//! lies, then the command's bytes are split off the read buffer and frozen,
//! and each argument becomes a [`Bytes`] slice of them: no payload is copied,
//! and the only allocation is the argument `Vec` (a `Vec<Bytes>` that
//! [`RespCodec::decode_args_into`](crate::RespCodec::decode_args_into)
//! reuses from one command to the next; the `Decoder` wraps the arguments
//! in frames). This is the approach of
//! redis-protocol.rs's `decode_bytes_mut` (src/resp2/decode.rs).
//!
//! When the command is incomplete this path gives up and the codec hands the
//! same bytes to the resumable combine parser, which keeps its place from then
//! on. Both use the helpers of `line.rs` and must return the same frames and
//! errors; the differential tests and the fuzz target check that they do.

use std::ops::Range;

use bytes::{Buf, Bytes, BytesMut};

use crate::inline::split_frames;
use crate::line::{find_line, parse_i64, Scan, Terminator};
use crate::{Frame, Limits, ProtoError};

/// What the fast path made of the start of the buffer.
pub(crate) enum Step {
    /// A whole multibulk command, already split off the buffer: its
    /// arguments (never none) are in the `out` vector given.
    Args,
    /// A whole inline command, already split off the buffer.
    Frame(Frame),
    /// A command with no arguments (`*0`, `*-1`, a blank line), already
    /// dropped from the buffer.
    Skipped,
    /// Not all of the command is here; the buffer is untouched.
    Incomplete,
}

/// Tries to decode one whole request from the front of `buf`.
///
/// `spans` is scratch space, kept by the codec so a steady stream of commands
/// does not allocate it each time.
///
/// # Errors
///
/// The same [`ProtoError`] the combine parser would give for these bytes.
pub(crate) fn request(
    buf: &mut BytesMut,
    limits: &Limits,
    spans: &mut Vec<Range<usize>>,
    out: &mut Vec<Bytes>,
) -> Result<Step, ProtoError> {
    match buf.first() {
        None => Ok(Step::Incomplete),
        Some(b'*') => multibulk(buf, limits, spans, out),
        Some(_) => inline(buf, limits),
    }
}

/// Finds the line that starts at `buf[from..]`, or says why there is none.
fn line(
    buf: &[u8],
    from: usize,
    max: usize,
    term: Terminator,
    too_long: ProtoError,
) -> Result<Option<(Range<usize>, usize)>, ProtoError> {
    let rest = &buf[from..];
    match find_line(rest, 0, term) {
        Scan::Found { content_end, next } => Ok(Some((from..from + content_end, from + next))),
        Scan::Missing if rest.len() > max => Err(too_long),
        Scan::Missing => Ok(None),
    }
}

fn multibulk(
    buf: &mut BytesMut,
    limits: &Limits,
    spans: &mut Vec<Range<usize>>,
    out: &mut Vec<Bytes>,
) -> Result<Step, ProtoError> {
    let max_line = limits.max_inline_len;
    let Some((header, mut pos)) = line(
        buf,
        1,
        max_line,
        Terminator::Crlf,
        ProtoError::TooBigMultibulkCount,
    )?
    else {
        return Ok(Step::Incomplete);
    };
    let n = limits.request_array_len(parse_i64(&buf[header]))?;
    if n <= 0 {
        buf.advance(pos);
        return Ok(Step::Skipped);
    }
    spans.clear();
    for _ in 0..n {
        match buf.get(pos) {
            None => return Ok(Step::Incomplete),
            Some(b'$') => {}
            Some(&other) => return Err(ProtoError::ExpectedBulk(other)),
        }
        let Some((len_line, start)) = line(
            buf,
            pos + 1,
            max_line,
            Terminator::Crlf,
            ProtoError::TooBigBulkCount,
        )?
        else {
            return Ok(Step::Incomplete);
        };
        let len = limits.request_bulk_len(parse_i64(&buf[len_line]))?;
        let end = start.saturating_add(len);
        match buf.get(end..end.saturating_add(2)) {
            None => return Ok(Step::Incomplete),
            Some(b"\r\n") => {}
            Some(_) => return Err(ProtoError::ExpectedCrlf),
        }
        spans.push(start..end);
        pos = end + 2;
    }
    let command = buf.split_to(pos).freeze();
    out.clear();
    out.extend(spans.drain(..).map(|span| command.slice(span)));
    // A rare huge command should not pin its scratch space forever.
    if spans.capacity() > 1024 {
        *spans = Vec::new();
    }
    Ok(Step::Args)
}

fn inline(buf: &mut BytesMut, limits: &Limits) -> Result<Step, ProtoError> {
    let Some((content, next)) = line(
        buf,
        0,
        limits.max_inline_len,
        Terminator::Lf,
        ProtoError::TooBigInlineRequest,
    )?
    else {
        return Ok(Step::Incomplete);
    };
    let args = split_frames(&buf[content])?;
    buf.advance(next);
    Ok(if args.is_empty() {
        Step::Skipped
    } else {
        Step::Frame(Frame::Array(args))
    })
}
