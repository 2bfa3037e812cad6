//! The values a key can hold, and what each costs in memory.

use bytes::Bytes;

use crate::memory;
use crate::StoreError;

/// The value stored under a key.
///
/// Only strings exist today; lists, hashes, sets, sorted sets and streams
/// join as variants, each keeping its own byte count so that
/// [`Value::heap_bytes`] stays O(1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A binary-safe string. Integers are stored as their decimal text, as
    /// Redis clients see them.
    Str(Bytes),
}

/// The type of a value, as `TYPE` and `SCAN ... TYPE` name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// `string`
    Str,
}

impl ValueKind {
    /// The name `TYPE` replies with.
    pub fn as_str(self) -> &'static str {
        match self {
            ValueKind::Str => "string",
        }
    }

    /// Parses a `TYPE` name, case-insensitively. Unknown names give `None`.
    pub fn parse(name: &[u8]) -> Option<ValueKind> {
        name.eq_ignore_ascii_case(b"string")
            .then_some(ValueKind::Str)
    }
}

impl Value {
    /// The string, or [`StoreError::WrongType`] for any other type.
    ///
    /// # Errors
    ///
    /// [`StoreError::WrongType`] when the value is not a string.
    pub fn as_str(&self) -> Result<&Bytes, StoreError> {
        match self {
            Value::Str(s) => Ok(s),
        }
    }

    /// Which type this value is.
    pub fn kind(&self) -> ValueKind {
        match self {
            Value::Str(_) => ValueKind::Str,
        }
    }

    /// The internal encoding `OBJECT ENCODING` reports, following Redis's
    /// rules for strings: `int` for a canonical 64-bit integer, `embstr` up to
    /// 44 bytes, `raw` beyond.
    pub fn encoding(&self) -> &'static str {
        match self {
            Value::Str(s) if is_canonical_i64(s) => "int",
            Value::Str(s) if s.len() <= 44 => "embstr",
            Value::Str(_) => "raw",
        }
    }

    /// Heap bytes the value owns, as the allocator sees them (rounded up to
    /// its size classes). O(1).
    pub fn heap_bytes(&self) -> usize {
        match self {
            Value::Str(s) if s.is_empty() => 0,
            Value::Str(s) => memory::alloc_size(s.len()) + memory::alloc_size(SHARED_HEADER_BYTES),
        }
    }

    /// A copy that owns its own compact allocation.
    ///
    /// Bytes decoded from the network are slices of a connection's read
    /// buffer; storing such a slice would pin the whole buffer. Everything the
    /// store keeps goes through this first.
    ///
    /// The copy is also made shared up front: the first clone of a `Bytes`
    /// built from a `Vec` allocates a small shared header, and every `GET`
    /// clones. Paying it at store time keeps [`Value::heap_bytes`] true for
    /// the value's whole life instead of growing on first read.
    pub fn compact(self) -> Value {
        match self {
            Value::Str(s) => {
                let owned = Bytes::copy_from_slice(&s);
                drop(owned.clone());
                Value::Str(owned)
            }
        }
    }
}

/// Size of the header `bytes` allocates when a `Bytes` built from a `Vec`
/// is first cloned (a buffer pointer, its capacity and a reference count).
const SHARED_HEADER_BYTES: usize = 3 * std::mem::size_of::<usize>();

/// Whether `s` is the canonical decimal form of an `i64` (no sign on zero, no
/// leading zeros or `+`), the test Redis uses before storing an int encoding.
fn is_canonical_i64(s: &[u8]) -> bool {
    if s.is_empty() || s.len() > 20 {
        return false;
    }
    let Some(n) = std::str::from_utf8(s)
        .ok()
        .and_then(|t| t.parse::<i64>().ok())
    else {
        return false;
    };
    let mut buf = itoa::Buffer::new();
    buf.format(n).as_bytes() == s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_encodings_follow_redis() {
        let enc = |s: &'static [u8]| Value::Str(Bytes::from_static(s)).encoding();
        assert_eq!(enc(b"12345"), "int");
        assert_eq!(enc(b"-7"), "int");
        assert_eq!(enc(b"007"), "embstr");
        assert_eq!(enc(b"+7"), "embstr");
        assert_eq!(enc(b"hello"), "embstr");
        assert_eq!(enc(&[b'x'; 44]), "embstr");
        assert_eq!(enc(&[b'x'; 45]), "raw");
        assert_eq!(enc(b"99999999999999999999"), "embstr");
    }

    #[test]
    fn kinds_parse_case_insensitively() {
        assert_eq!(ValueKind::parse(b"STRING"), Some(ValueKind::Str));
        assert_eq!(ValueKind::parse(b"list"), None);
        assert_eq!(ValueKind::Str.as_str(), "string");
    }
}
