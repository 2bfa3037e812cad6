//! Errors the store reports to the command layer.

use thiserror::Error;

/// Why a store operation did not happen. The server turns each into Redis's
/// exact error reply in one place; this crate never formats RESP.
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq)]
pub enum StoreError {
    /// The key holds a value of another type.
    #[error("operation against a key holding the wrong kind of value")]
    WrongType,
    /// A write would exceed `maxmemory` and nothing can be evicted.
    #[error("used memory is over maxmemory and nothing can be evicted")]
    OutOfMemory,
    /// The stored string is not a base-10 64-bit integer.
    #[error("value is not an integer or out of range")]
    NotAnInteger,
    /// The stored string is not a valid float.
    #[error("value is not a valid float")]
    NotAFloat,
    /// An increment would overflow 64 bits.
    #[error("increment or decrement would overflow")]
    Overflow,
    /// The result of a float increment is NaN or infinite.
    #[error("increment would produce NaN or Infinity")]
    NanOrInfinity,
    /// A string would grow past `proto-max-bulk-len`.
    #[error("string exceeds maximum allowed size")]
    StringTooLong,
}
