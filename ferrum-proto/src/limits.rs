//! [`Limits`]: how much a peer may declare before the decoder refuses it.
//!
//! Every limit is checked while a header is parsed, before any of the bytes it
//! announces arrive, so a peer that declares `$536870000` and then stalls costs
//! the server nothing but the header. The defaults are Redis 7's.

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
        }
    }
}
