//! [`ProtoError`], the one error type of the codec, and every protocol error
//! text in one place.
//!
//! The texts of the request-side variants are Redis 7's own, taken from
//! `processInlineBuffer` and `processMultibulkBuffer` in Redis's
//! `src/networking.c`, without the leading `ERR ` that `addReplyError` adds.
//! A server replies `-ERR {error}\r\n` and then closes the connection, as Redis
//! does. Reply-side variants (type bytes only a server sends) have no Redis
//! text; they follow the same `Protocol error: ...` style.

use std::io;

/// A malformed, over-limit or unreadable RESP stream.
///
/// "Not enough bytes yet" is never an error: the decoder returns `Ok(None)`.
/// After any error the codec's state is unspecified and the connection should
/// be closed. The [`Display`](std::fmt::Display) text is what a server sends
/// after `-ERR `.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProtoError {
    /// `*<n>` where `n` is not a number or is above
    /// [`Limits::max_array_len`](crate::Limits::max_array_len).
    #[error("Protocol error: invalid multibulk length")]
    InvalidMultibulkLength,
    /// `$<n>` where `n` is not a number, is negative in a request, or is above
    /// [`Limits::max_bulk_len`](crate::Limits::max_bulk_len).
    #[error("Protocol error: invalid bulk length")]
    InvalidBulkLength,
    /// A request of more than
    /// [`Limits::UNAUTHENTICATED_MAX_ARRAY_LEN`](crate::Limits::UNAUTHENTICATED_MAX_ARRAY_LEN)
    /// arguments from a peer that has not authenticated
    /// ([`Limits::unauthenticated`](crate::Limits#structfield.unauthenticated)).
    #[error("Protocol error: unauthenticated multibulk length")]
    UnauthenticatedMultibulkLength,
    /// A request bulk over
    /// [`Limits::UNAUTHENTICATED_MAX_BULK_LEN`](crate::Limits::UNAUTHENTICATED_MAX_BULK_LEN)
    /// bytes from a peer that has not authenticated.
    #[error("Protocol error: unauthenticated bulk length")]
    UnauthenticatedBulkLength,
    /// An element of a request's multibulk did not start with `$`. Like
    /// Redis, `\r` and `\n` are shown as a space.
    #[error("Protocol error: expected '$', got '{}'", shown_byte(*.0))]
    ExpectedBulk(u8),
    /// An inline command line longer than
    /// [`Limits::max_inline_len`](crate::Limits::max_inline_len) with no `\n`.
    #[error("Protocol error: too big inline request")]
    TooBigInlineRequest,
    /// An inline command with an unterminated quote, or a closing quote
    /// followed by something other than a space (`"foo"bar`).
    #[error("Protocol error: unbalanced quotes in request")]
    UnbalancedQuotes,
    /// A `*<n>` header line longer than
    /// [`Limits::max_inline_len`](crate::Limits::max_inline_len) with no CRLF.
    #[error("Protocol error: too big mbulk count string")]
    TooBigMultibulkCount,
    /// A `$<n>` header line longer than
    /// [`Limits::max_inline_len`](crate::Limits::max_inline_len) with no CRLF.
    #[error("Protocol error: too big bulk count string")]
    TooBigBulkCount,
    /// A bulk payload was not followed by CRLF. (Redis skips those two bytes
    /// unchecked; FerrumKV rejects them, so a client that miscounts fails at
    /// once instead of desynchronising.)
    #[error("Protocol error: expected CRLF after bulk payload")]
    ExpectedCrlf,
    /// A reply started with a byte that is no RESP2 or RESP3 type.
    #[error("Protocol error: invalid reply type byte '{}'", shown_byte(*.0))]
    InvalidTypeByte(u8),
    /// Aggregates nested deeper than
    /// [`Limits::max_depth`](crate::Limits::max_depth).
    #[error("Protocol error: reply nested too deeply")]
    TooDeep,
    /// A simple string, error, number or other line longer than the limit
    /// with no CRLF.
    #[error("Protocol error: too big line")]
    LineTooLong,
    /// A `:` integer, `(` big number, `,` double, `#` boolean or `_` null line
    /// that does not hold what its type byte promises.
    #[error("Protocol error: invalid {0} value")]
    InvalidValue(&'static str),
    /// A verbatim string (`=`) without its `fmt:` prefix.
    #[error("Protocol error: invalid verbatim string")]
    InvalidVerbatim,
    /// Input that no rule above describes. The parsers map every failure to a
    /// specific variant, so this is a defensive fallback.
    #[error("Protocol error: unexpected input")]
    Unexpected,
    /// Reading from or writing to the transport failed. `tokio-util` requires
    /// this conversion, and uses it for "bytes remaining on stream" at EOF.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Redis formats the offending byte with `%c` and then replaces `\r` and `\n`
/// with spaces so the error stays on one line (`addReplyErrorFormat`).
fn shown_byte(b: u8) -> char {
    match b {
        b'\r' | b'\n' => ' ',
        b => char::from(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_redis_texts_without_err_prefix() {
        let cases: [(ProtoError, &str); 10] = [
            (
                ProtoError::UnauthenticatedMultibulkLength,
                "Protocol error: unauthenticated multibulk length",
            ),
            (
                ProtoError::UnauthenticatedBulkLength,
                "Protocol error: unauthenticated bulk length",
            ),
            (
                ProtoError::InvalidMultibulkLength,
                "Protocol error: invalid multibulk length",
            ),
            (
                ProtoError::InvalidBulkLength,
                "Protocol error: invalid bulk length",
            ),
            (
                ProtoError::ExpectedBulk(b'x'),
                "Protocol error: expected '$', got 'x'",
            ),
            (
                ProtoError::ExpectedBulk(b'\r'),
                "Protocol error: expected '$', got ' '",
            ),
            (
                ProtoError::TooBigInlineRequest,
                "Protocol error: too big inline request",
            ),
            (
                ProtoError::UnbalancedQuotes,
                "Protocol error: unbalanced quotes in request",
            ),
            (
                ProtoError::TooBigMultibulkCount,
                "Protocol error: too big mbulk count string",
            ),
            (
                ProtoError::TooBigBulkCount,
                "Protocol error: too big bulk count string",
            ),
        ];
        for (err, text) in cases {
            assert_eq!(err.to_string(), text);
        }
    }

    #[test]
    fn io_errors_convert_and_keep_their_text() {
        let err = ProtoError::from(io::Error::other("bytes remaining on stream"));
        assert!(matches!(err, ProtoError::Io(_)));
        assert_eq!(err.to_string(), "bytes remaining on stream");
    }
}
