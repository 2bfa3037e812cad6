//! The values a key can hold, and what each costs in memory.

use bytes::Bytes;

use crate::memory;
use crate::types::{Hash, List, Set, Stream, ZSet};
use crate::StoreError;

/// The value stored under a key.
///
/// Strings are inline; every other type sits behind one box in
/// [`Collection`]. Two variants keep `Value` at 24 bytes, a string's own
/// size (the box fits beside the niche in the string's capacity field), so
/// the per-key overhead of plain string keys does not grow with the number
/// of types.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A binary-safe string. Integers are stored as their decimal text, as
    /// Redis clients see them.
    Str(Str),
    /// A list, hash, set, sorted set or stream.
    Coll(Box<Collection>),
}

/// A string value: its bytes in one heap allocation of their exact size
/// (none when empty), which `APPEND` and `SETRANGE` grow with amortised
/// doubling.
///
/// Not a [`Bytes`]: a `Bytes` holding a copy costs a second allocation, its
/// shared header, from the first clone on (32 of the 80 bytes a 32-byte
/// value took). A reply copies the bytes out instead ([`Str::to_bytes`]);
/// a small copy costs about what the reference count did.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Str(Vec<u8>);

impl Str {
    /// A copy of `bytes`, allocated to fit.
    pub fn copy_from(bytes: &[u8]) -> Str {
        Str(bytes.to_vec())
    }

    /// A copy for a reply.
    pub fn to_bytes(&self) -> Bytes {
        Bytes::copy_from_slice(&self.0)
    }

    /// Appends `tail` (`APPEND`).
    pub fn append(&mut self, tail: &[u8]) {
        self.0.extend_from_slice(tail);
    }

    /// Overwrites from `offset` with `data`, zero-padding any gap
    /// (`SETRANGE`).
    pub fn set_range(&mut self, offset: usize, data: &[u8]) {
        let end = offset + data.len();
        if self.0.len() < end {
            self.0.resize(end, 0);
        }
        self.0[offset..end].copy_from_slice(data);
    }

    /// Heap bytes, as the allocator sees them.
    fn heap_bytes(&self) -> usize {
        memory::alloc_size(self.0.capacity())
    }
}

impl std::ops::Deref for Str {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for Str {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Escaped once, as a byte-string literal: `b"a\n"`.
        write!(f, "b\"{}\"", self.0.escape_ascii())
    }
}

impl From<&[u8]> for Str {
    fn from(bytes: &[u8]) -> Str {
        Str::copy_from(bytes)
    }
}

impl From<&str> for Str {
    fn from(s: &str) -> Str {
        Str::copy_from(s.as_bytes())
    }
}

impl From<Vec<u8>> for Str {
    fn from(v: Vec<u8>) -> Str {
        Str(v)
    }
}

/// The non-string types.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Collection {
    /// `list`
    List(List),
    /// `hash`
    Hash(Hash),
    /// `set`
    Set(Set),
    /// `zset`
    ZSet(ZSet),
    /// `stream`
    Stream(Stream),
}

/// The type of a value, as `TYPE` and `SCAN ... TYPE` name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    /// `string`
    Str,
    /// `list`
    List,
    /// `hash`
    Hash,
    /// `set`
    Set,
    /// `zset`
    ZSet,
    /// `stream`
    Stream,
}

const KINDS: [(ValueKind, &str); 6] = [
    (ValueKind::Str, "string"),
    (ValueKind::List, "list"),
    (ValueKind::Hash, "hash"),
    (ValueKind::Set, "set"),
    (ValueKind::ZSet, "zset"),
    (ValueKind::Stream, "stream"),
];

impl ValueKind {
    /// The name `TYPE` replies with.
    pub fn as_str(self) -> &'static str {
        KINDS
            .iter()
            .find(|(k, _)| *k == self)
            .map_or("none", |(_, n)| n)
    }

    /// Parses a `TYPE` name, case-insensitively. Unknown names give `None`.
    pub fn parse(name: &[u8]) -> Option<ValueKind> {
        KINDS
            .iter()
            .find(|(_, n)| name.eq_ignore_ascii_case(n.as_bytes()))
            .map(|(k, _)| *k)
    }
}

/// A collection type that can be read out of, and put into, a [`Value`].
///
/// Command handlers use it to reach a key's list, hash, ... generically,
/// with [`StoreError::WrongType`] for a key of another type.
pub trait Typed: Default + Into<Value> {
    /// The type as `TYPE` names it.
    const KIND: ValueKind;

    /// The value as this type.
    ///
    /// # Errors
    ///
    /// [`StoreError::WrongType`] when the value is of another type.
    fn of(v: &Value) -> Result<&Self, StoreError>;

    /// The value as this type, mutably.
    ///
    /// # Errors
    ///
    /// [`StoreError::WrongType`] when the value is of another type.
    fn of_mut(v: &mut Value) -> Result<&mut Self, StoreError>;

    /// Whether the key should go: Redis never keeps an empty list, hash, set
    /// or sorted set (streams stay, even empty).
    fn is_drained(&self) -> bool;
}

macro_rules! typed {
    ($ty:ident, $variant:ident, $drained:expr) => {
        impl From<$ty> for Value {
            fn from(v: $ty) -> Value {
                Value::Coll(Box::new(Collection::$variant(v)))
            }
        }

        impl Typed for $ty {
            const KIND: ValueKind = ValueKind::$variant;

            fn of(v: &Value) -> Result<&$ty, StoreError> {
                match v {
                    Value::Coll(c) => match &**c {
                        Collection::$variant(x) => Ok(x),
                        _ => Err(StoreError::WrongType),
                    },
                    Value::Str(_) => Err(StoreError::WrongType),
                }
            }

            fn of_mut(v: &mut Value) -> Result<&mut $ty, StoreError> {
                match v {
                    Value::Coll(c) => match &mut **c {
                        Collection::$variant(x) => Ok(x),
                        _ => Err(StoreError::WrongType),
                    },
                    Value::Str(_) => Err(StoreError::WrongType),
                }
            }

            fn is_drained(&self) -> bool {
                let f: fn(&$ty) -> bool = $drained;
                f(self)
            }
        }
    };
}

typed!(List, List, List::is_empty);
typed!(Hash, Hash, Hash::is_empty);
typed!(Set, Set, Set::is_empty);
typed!(ZSet, ZSet, ZSet::is_empty);
typed!(Stream, Stream, |_| false);

impl Value {
    /// A string value holding a copy of `bytes`.
    pub fn str(bytes: &[u8]) -> Value {
        Value::Str(Str::copy_from(bytes))
    }

    /// The string, mutably, or [`StoreError::WrongType`] for any other
    /// type.
    ///
    /// # Errors
    ///
    /// [`StoreError::WrongType`] when the value is not a string.
    pub fn as_str_mut(&mut self) -> Result<&mut Str, StoreError> {
        match self {
            Value::Str(s) => Ok(s),
            Value::Coll(_) => Err(StoreError::WrongType),
        }
    }

    /// The string, or [`StoreError::WrongType`] for any other type.
    ///
    /// # Errors
    ///
    /// [`StoreError::WrongType`] when the value is not a string.
    pub fn as_str(&self) -> Result<&Str, StoreError> {
        match self {
            Value::Str(s) => Ok(s),
            Value::Coll(_) => Err(StoreError::WrongType),
        }
    }

    /// Which type this value is.
    pub fn kind(&self) -> ValueKind {
        match self {
            Value::Str(_) => ValueKind::Str,
            Value::Coll(c) => match &**c {
                Collection::List(_) => ValueKind::List,
                Collection::Hash(_) => ValueKind::Hash,
                Collection::Set(_) => ValueKind::Set,
                Collection::ZSet(_) => ValueKind::ZSet,
                Collection::Stream(_) => ValueKind::Stream,
            },
        }
    }

    /// The internal encoding `OBJECT ENCODING` reports, following Redis's
    /// rules: for strings `int` for a canonical 64-bit integer, `embstr` up
    /// to 44 bytes, `raw` beyond; each collection type reports its own.
    pub fn encoding(&self) -> &'static str {
        match self {
            Value::Str(s) if is_canonical_i64(s) => "int",
            Value::Str(s) if s.len() <= 44 => "embstr",
            Value::Str(_) => "raw",
            Value::Coll(c) => match &**c {
                Collection::List(l) => l.encoding(),
                Collection::Hash(h) => h.encoding(),
                Collection::Set(s) => s.encoding(),
                Collection::ZSet(z) => z.encoding(),
                Collection::Stream(_) => "stream",
            },
        }
    }

    /// Heap bytes the value owns, as the allocator sees them (rounded up to
    /// its size classes). O(1): collections keep their own running count.
    pub fn heap_bytes(&self) -> usize {
        match self {
            Value::Str(s) => s.heap_bytes(),
            Value::Coll(c) => {
                memory::alloc_size(size_of::<Collection>())
                    + match &**c {
                        Collection::List(l) => l.heap_bytes(),
                        Collection::Hash(h) => h.heap_bytes(),
                        Collection::Set(s) => s.heap_bytes(),
                        Collection::ZSet(z) => z.heap_bytes(),
                        Collection::Stream(s) => s.heap_bytes(),
                    }
            }
        }
    }

    /// The value with no spare capacity, as the store keeps it: a string
    /// built by a command (a formatted number, say) may have been allocated
    /// larger than it is. Collections copy each element as it is added, so
    /// they are already compact.
    pub fn compact(self) -> Value {
        match self {
            Value::Str(mut s) => {
                s.0.shrink_to_fit();
                Value::Str(s)
            }
            coll @ Value::Coll(_) => coll,
        }
    }
}

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
    use crate::types::End;

    #[test]
    fn string_encodings_follow_redis() {
        let enc = |s: &'static [u8]| Value::str(s).encoding();
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
        assert_eq!(ValueKind::parse(b"zSet"), Some(ValueKind::ZSet));
        assert_eq!(ValueKind::parse(b"nope"), None);
        assert_eq!(ValueKind::Stream.as_str(), "stream");
    }

    #[test]
    fn value_stays_one_string_wide() {
        assert_eq!(size_of::<Value>(), size_of::<Str>());
        assert_eq!(size_of::<Value>(), 24);
    }

    #[test]
    fn strings_cost_one_exact_allocation_and_grow_amortised() {
        let v = Value::str(&[b'x'; 32]);
        assert_eq!(v.heap_bytes(), memory::alloc_size(32));
        assert_eq!(Value::str(b"").heap_bytes(), 0);
        let mut s = Str::copy_from(b"ab");
        s.append(b"cd");
        s.set_range(6, b"z");
        assert_eq!(&*s, b"abcd\0\0z");
        let grown = Value::Str(s);
        assert!(grown.heap_bytes() >= memory::alloc_size(7));
        let compacted = grown.compact();
        assert_eq!(compacted.heap_bytes(), memory::alloc_size(7));
    }

    #[test]
    fn typed_access_checks_the_type() {
        let mut v: Value = List::new().into();
        assert!(Set::of(&v).is_err());
        assert!(v.as_str().is_err());
        List::of_mut(&mut v).unwrap().push(End::Left, b"x");
        assert_eq!(List::of(&v).unwrap().len(), 1);
        assert_eq!(v.kind(), ValueKind::List);
        assert_eq!(v.encoding(), "listpack");
    }
}
