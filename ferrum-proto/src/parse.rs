//! Plumbing shared by the resumable combine parsers: the input type, a
//! resumable line parser with a length limit, and the driver that turns
//! combine's results into `Ok(None)` or a [`ProtoError`].
//!
//! The parsers run over [`PartialStream`], so running out of bytes is not a
//! failure: combine keeps what it has parsed in an
//! [`AnySendSyncPartialState`](combine::parser::combinator::AnySendSyncPartialState)
//! and reports how many bytes it has committed, which the codec drops from the
//! read buffer. The next call resumes from that state, so no byte is parsed
//! twice. This is the design of redis-rs's `ValueCodec` (redis/src/parser.rs).
//! Protocol errors travel through combine as
//! [`easy::Error::Other`](combine::easy::Error::Other) holding the
//! [`ProtoError`], and [`run`] takes them out again.

use combine::{
    easy,
    error::{ParseResult, StreamError},
    stream::{self, PartialStream, Positioned, RangeStreamOnce, ResetStream, StreamErrorFor},
    Parser, StreamOnce,
};

use crate::line::{find_line, Scan, Terminator};
use crate::ProtoError;

/// What every combine parser in this crate reads.
pub(crate) type Input<'a> = easy::Stream<PartialStream<&'a [u8]>>;

type Errors<'a> = <Input<'a> as StreamOnce>::Error;

/// Wraps a protocol error so it can travel through combine.
pub(crate) fn fail<'a>(err: ProtoError) -> StreamErrorFor<Input<'a>> {
    easy::Error::Other(Box::new(err))
}

/// A parser that consumes nothing and fails with `make()`.
pub(crate) fn reject<'a, O>(
    mut make: impl FnMut() -> ProtoError,
) -> impl Parser<Input<'a>, Output = O, PartialState = ()> {
    combine::parser::function::parser(move |input: &mut Input<'a>| {
        let err = easy::Errors::new(input.position(), fail(make()));
        Err(combine::error::Commit::Commit(err.into()))
    })
}

/// Reads one line and yields its content without the terminator.
///
/// Unlike combine's `take_until_bytes`, it refuses a line that has grown past
/// `max` bytes without a terminator, with the error `too_long` gives. The
/// partial state is how many bytes were already searched, so a line that
/// arrives a byte at a time is scanned once, not once per byte.
pub(crate) struct Line {
    term: Terminator,
    max: usize,
    too_long: fn() -> ProtoError,
}

impl Line {
    /// A `\r\n`-terminated line.
    pub(crate) fn crlf(max: usize, too_long: fn() -> ProtoError) -> Line {
        Line {
            term: Terminator::Crlf,
            max,
            too_long,
        }
    }

    /// A `\n`-terminated line (an optional `\r` before it is dropped).
    pub(crate) fn lf(max: usize, too_long: fn() -> ProtoError) -> Line {
        Line {
            term: Terminator::Lf,
            max,
            too_long,
        }
    }
}

impl<'a> Parser<Input<'a>> for Line {
    type Output = &'a [u8];
    type PartialState = usize;

    fn parse_partial(
        &mut self,
        input: &mut Input<'a>,
        searched: &mut usize,
    ) -> ParseResult<&'a [u8], Errors<'a>> {
        let rest: &'a [u8] = input.0 .0;
        match find_line(rest, *searched, self.term) {
            Scan::Found { content_end, next } => {
                *searched = 0;
                let checkpoint = input.checkpoint();
                match input.0.uncons_range(next) {
                    Ok(_) => ParseResult::CommitOk(&rest[..content_end]),
                    // `find_line` found `next` bytes in `rest`, so this cannot
                    // happen; fail rather than panic on network input.
                    Err(_) => {
                        let _ = input.reset(checkpoint);
                        ParseResult::CommitErr(easy::Errors::new(
                            input.position(),
                            fail(ProtoError::Unexpected),
                        ))
                    }
                }
            }
            Scan::Missing if rest.len() > self.max => {
                ParseResult::CommitErr(easy::Errors::new(input.position(), fail((self.too_long)())))
            }
            Scan::Missing => {
                *searched = rest.len();
                stream::wrap_stream_error(input, StreamError::end_of_input())
            }
        }
    }
}

/// Runs `parser` over `buf`, resuming from `state`.
///
/// Returns the output (or `None` when more bytes are needed) and how many
/// bytes of `buf` were committed and must be dropped before the next call.
///
/// # Errors
///
/// The [`ProtoError`] a parser failed with.
pub(crate) fn run<'a, P>(
    mut parser: P,
    buf: &'a [u8],
    state: &mut P::PartialState,
) -> Result<(Option<P::Output>, usize), ProtoError>
where
    P: Parser<Input<'a>>,
{
    let mut input = easy::Stream(PartialStream(buf));
    match parser.parse_with_state(&mut input, state) {
        Ok(out) => Ok((Some(out), buf.len() - input.0 .0.len())),
        Err(errors) => {
            let mut end_of_input = false;
            for err in errors.errors {
                match err {
                    easy::Error::Other(other) => {
                        return Err(match other.downcast::<ProtoError>() {
                            Ok(err) => *err,
                            Err(_) => ProtoError::Unexpected,
                        })
                    }
                    err => end_of_input |= err.is_unexpected_end_of_input(),
                }
            }
            if end_of_input {
                Ok((None, buf.len() - input.0 .0.len()))
            } else {
                Err(ProtoError::Unexpected)
            }
        }
    }
}
