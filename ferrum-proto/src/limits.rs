//! [`Limits`]: how much a peer may declare before the decoder refuses it.
//!
//! Every limit is checked while a header is parsed, before any of the bytes it
//! announces arrive, so a peer that declares `$536870000` and then stalls costs
//! the server nothing but the header. The defaults are Redis 7's.

use crate::line::exceeds;
use crate::ProtoError;

/// Bounds the decoder enforces on untrusted input.
///
/// ```
/// use ferrum_proto::Limits;
///
/// // Tighter than Redis for a server that only stores small values.
/// let limits = Limits { max_bulk_len: 1024 * 1024, ..Limits::default() };
/// assert_eq!(limits.max_array_len, 1024 * 1024);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Longest bulk string payload, in bytes. Default 512 MiB, Redis's
    /// `proto-max-bulk-len`. Longer gives
    /// [`ProtoError::InvalidBulkLength`](crate::ProtoError::InvalidBulkLength).
    pub max_bulk_len: usize,
    /// Most elements in one array (pairs in one map). Default 1024 * 1024,
    /// Redis's multibulk limit. More gives
    /// [`ProtoError::InvalidMultibulkLength`](crate::ProtoError::InvalidMultibulkLength).
    pub max_array_len: usize,
    /// Deepest nesting of aggregates in a reply; a flat array is depth 1.
    /// Default 128. Requests are always flat. Deeper gives
    /// [`ProtoError::TooDeep`](crate::ProtoError::TooDeep).
    pub max_depth: usize,
    /// Longest inline command line or `*`/`$` header line still waiting for
    /// its terminator, in bytes. Default 64 KiB, Redis's
    /// `PROTO_INLINE_MAX_SIZE`.
    pub max_inline_len: usize,
    /// The peer has not authenticated yet. A request array of more than
    /// [`UNAUTHENTICATED_MAX_ARRAY_LEN`](Self::UNAUTHENTICATED_MAX_ARRAY_LEN)
    /// elements or a bulk over
    /// [`UNAUTHENTICATED_MAX_BULK_LEN`](Self::UNAUTHENTICATED_MAX_BULK_LEN)
    /// bytes is then refused with
    /// [`ProtoError::UnauthenticatedMultibulkLength`](crate::ProtoError::UnauthenticatedMultibulkLength)
    /// or
    /// [`ProtoError::UnauthenticatedBulkLength`](crate::ProtoError::UnauthenticatedBulkLength),
    /// as Redis refuses them before `AUTH`, so that a peer without the
    /// password cannot make a server buffer megabytes. Requests only;
    /// default `false`.
    pub unauthenticated: bool,
}

impl Limits {
    /// Redis's `proto-max-bulk-len` default: 512 MiB.
    pub const DEFAULT_MAX_BULK_LEN: usize = 512 * 1024 * 1024;
    /// Redis's multibulk element limit: 1024 * 1024.
    pub const DEFAULT_MAX_ARRAY_LEN: usize = 1024 * 1024;
    /// Default nesting limit for replies.
    pub const DEFAULT_MAX_DEPTH: usize = 128;
    /// Redis's `PROTO_INLINE_MAX_SIZE`: 64 KiB.
    pub const DEFAULT_MAX_INLINE_LEN: usize = 64 * 1024;
    /// Most arguments in a request before authentication, as in Redis.
    pub const UNAUTHENTICATED_MAX_ARRAY_LEN: usize = 10;
    /// Longest bulk in a request before authentication, as in Redis: 16 KiB.
    pub const UNAUTHENTICATED_MAX_BULK_LEN: usize = 16 * 1024;

    /// These limits for a peer that has (`true`) or has not (`false`)
    /// authenticated; see [`Limits::unauthenticated`](Limits#structfield.unauthenticated).
    ///
    /// ```
    /// use ferrum_proto::{Limits, RespCodec};
    /// use bytes::BytesMut;
    /// use tokio_util::codec::Decoder;
    ///
    /// let mut codec = RespCodec::server(Limits::default().authenticated(false));
    /// let mut buf = BytesMut::from(&b"*11\r\n"[..]);
    /// let err = codec.decode(&mut buf).unwrap_err();
    /// assert_eq!(err.to_string(), "Protocol error: unauthenticated multibulk length");
    /// ```
    #[must_use]
    pub fn authenticated(self, authenticated: bool) -> Limits {
        Limits {
            unauthenticated: !authenticated,
            ..self
        }
    }

    /// Checks a request's `*<n>` count, as Redis's `processMultibulkBuffer`
    /// does: the general limit first, then the one before authentication.
    pub(crate) fn request_array_len(&self, n: Option<i64>) -> Result<i64, ProtoError> {
        match n {
            Some(n) if exceeds(n, self.max_array_len) => Err(ProtoError::InvalidMultibulkLength),
            Some(n) if self.unauthenticated && exceeds(n, Self::UNAUTHENTICATED_MAX_ARRAY_LEN) => {
                Err(ProtoError::UnauthenticatedMultibulkLength)
            }
            Some(n) => Ok(n),
            None => Err(ProtoError::InvalidMultibulkLength),
        }
    }

    /// Checks a request bulk's `$<len>`, as [`request_array_len`](Self::request_array_len)
    /// checks a count; a negative length is invalid in a request.
    pub(crate) fn request_bulk_len(&self, len: Option<i64>) -> Result<usize, ProtoError> {
        match len {
            Some(n) if n < 0 || exceeds(n, self.max_bulk_len) => Err(ProtoError::InvalidBulkLength),
            Some(n) if self.unauthenticated && exceeds(n, Self::UNAUTHENTICATED_MAX_BULK_LEN) => {
                Err(ProtoError::UnauthenticatedBulkLength)
            }
            Some(n) => Ok(n as usize),
            None => Err(ProtoError::InvalidBulkLength),
        }
    }
}

impl Default for Limits {
    /// Redis 7's limits: 512 MiB bulks, 1 Mi array elements, 64 KiB inline
    /// lines, and nesting up to 128.
    fn default() -> Self {
        Limits {
            max_bulk_len: Self::DEFAULT_MAX_BULK_LEN,
            max_array_len: Self::DEFAULT_MAX_ARRAY_LEN,
            max_depth: Self::DEFAULT_MAX_DEPTH,
            max_inline_len: Self::DEFAULT_MAX_INLINE_LEN,
            unauthenticated: false,
        }
    }
}
