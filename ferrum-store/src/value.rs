//! The values a key can hold, and what each costs in memory.

use bytes::Bytes;

use crate::memory;
use crate::types::{Hash, List, Set, Stream, ZSet};
use crate::StoreError;

/// A value on its way into or out of the store.
///
/// The store does not keep `Value`s: a resident string's bytes are copied
/// into its key's block, a collection's box is moved there (see
/// `block.rs`), and reads borrow a [`ValueRef`]. `Value` is what commands
/// build to insert and what `remove` gives back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A binary-safe string. Integers are stored as their decimal text, as
    /// Redis clients see them.
    Str(Str),
    /// A list, hash, set, sorted set or stream.
    Coll(Box<Collection>),
}

/// An owned string value, in transit (see [`Value`]).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Str(Vec<u8>);

impl Str {
    /// A copy of `bytes`, allocated to fit.
    pub fn copy_from(bytes: &[u8]) -> Str {
        Str(bytes.to_vec())
    }

    /// The bytes in an exact-size allocation (no copy when the buffer is
    /// exact already, as [`Str::copy_from`] makes it).
    pub(crate) fn into_boxed(self) -> Box<[u8]> {
        self.0.into_boxed_slice()
    }

    /// A copy for a reply.
    pub fn to_bytes(&self) -> Bytes {
        Bytes::copy_from_slice(&self.0)
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

/// Which packed form a key's block holds inline (see `block.rs`): a small
/// collection's one buffer, stored without its box.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum PackedKind {
    /// A list of one node (a listpack with back lengths).
    List = 1,
    /// A listpack of fields and values.
    Hash = 2,
    /// An intset.
    IntSet = 3,
    /// A listpack of members.
    StrSet = 4,
    /// A listpack of members and scores.
    ZSet = 5,
}

impl PackedKind {
    /// The type of the collection this form packs.
    pub(crate) fn value_kind(self) -> ValueKind {
        match self {
            PackedKind::List => ValueKind::List,
            PackedKind::Hash => ValueKind::Hash,
            PackedKind::IntSet | PackedKind::StrSet => ValueKind::Set,
            PackedKind::ZSet => ValueKind::ZSet,
        }
    }

    /// The kind a block's tag byte names.
    pub(crate) fn from_tag(tag: u8) -> PackedKind {
        match tag {
            1 => PackedKind::List,
            2 => PackedKind::Hash,
            3 => PackedKind::IntSet,
            4 => PackedKind::StrSet,
            5 => PackedKind::ZSet,
            _ => unreachable!("a packed block's tag is written from a PackedKind"),
        }
    }
}

impl Collection {
    /// Which type this collection is.
    pub fn kind(&self) -> ValueKind {
        match self {
            Collection::List(_) => ValueKind::List,
            Collection::Hash(_) => ValueKind::Hash,
            Collection::Set(_) => ValueKind::Set,
            Collection::ZSet(_) => ValueKind::ZSet,
            Collection::Stream(_) => ValueKind::Stream,
        }
    }

    /// The packed buffer, if this collection is in a packed form.
    pub(crate) fn packed(&self) -> Option<(PackedKind, &[u8])> {
        match self {
            Collection::List(l) => l.packed(),
            Collection::Hash(h) => h.packed(),
            Collection::Set(s) => s.packed(),
            Collection::ZSet(z) => z.packed(),
            Collection::Stream(_) => None,
        }
    }

    /// The collection whose buffer [`packed`](Self::packed) gave.
    pub(crate) fn from_packed(kind: PackedKind, bytes: &[u8]) -> Collection {
        match kind {
            PackedKind::List => Collection::List(List::from_packed(bytes)),
            PackedKind::Hash => Collection::Hash(Hash::from_packed(bytes)),
            PackedKind::IntSet | PackedKind::StrSet => {
                Collection::Set(Set::from_packed(kind, bytes))
            }
            PackedKind::ZSet => Collection::ZSet(ZSet::from_packed(bytes)),
        }
    }

    /// Heap bytes the collection owns, its box not included. O(1).
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            Collection::List(l) => l.heap_bytes(),
            Collection::Hash(h) => h.heap_bytes(),
            Collection::Set(s) => s.heap_bytes(),
            Collection::ZSet(z) => z.heap_bytes(),
            Collection::Stream(s) => s.heap_bytes(),
        }
    }
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

    /// The collection as this type, if it is one.
    fn of_coll(c: &Collection) -> Option<&Self>;

    /// The collection as this type, mutably, if it is one.
    fn of_coll_mut(c: &mut Collection) -> Option<&mut Self>;

    /// Whether the key should go: Redis never keeps an empty list, hash, set
    /// or sorted set (streams stay, even empty).
    fn is_drained(&self) -> bool;

    /// The value as this type.
    ///
    /// # Errors
    ///
    /// [`StoreError::WrongType`] when the value is of another type.
    fn of<'a>(v: &'a ValueRef<'_>) -> Result<&'a Self, StoreError> {
        match v {
            ValueRef::Coll(c) => Self::of_coll(c).ok_or(StoreError::WrongType),
            ValueRef::Str(_) => Err(StoreError::WrongType),
        }
    }

    /// An owned value as this type, mutably.
    ///
    /// # Errors
    ///
    /// [`StoreError::WrongType`] when the value is of another type.
    fn of_mut(v: &mut Value) -> Result<&mut Self, StoreError> {
        match v {
            Value::Coll(c) => Self::of_coll_mut(c).ok_or(StoreError::WrongType),
            Value::Str(_) => Err(StoreError::WrongType),
        }
    }
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

            fn of_coll(c: &Collection) -> Option<&$ty> {
                match c {
                    Collection::$variant(x) => Some(x),
                    _ => None,
                }
            }

            fn of_coll_mut(c: &mut Collection) -> Option<&mut $ty> {
                match c {
                    Collection::$variant(x) => Some(x),
                    _ => None,
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

    /// The value, borrowed as the store hands out a resident key's.
    pub fn as_ref(&self) -> ValueRef<'_> {
        match self {
            Value::Str(s) => ValueRef::Str(s),
            Value::Coll(c) => ValueRef::Coll(CollRef::Borrowed(c)),
        }
    }

    /// Which type this value is.
    pub fn kind(&self) -> ValueKind {
        self.as_ref().kind()
    }

    /// The internal encoding `OBJECT ENCODING` reports (see
    /// [`ValueRef::encoding`]).
    pub fn encoding(&self) -> &'static str {
        self.as_ref().encoding()
    }

    /// Roughly how many allocations freeing this value releases, Redis's
    /// `lazyfreeGetFreeEffort`: 1 for a string or a packed collection, the
    /// elements of a large set, hash or sorted set, a list's nodes, and a
    /// stream's nodes plus, per consumer group, one and its pending entries.
    /// Above [`LAZYFREE_THRESHOLD`] `UNLINK` frees the value in the background.
    pub fn free_effort(&self) -> usize {
        let Value::Coll(c) = self else {
            return 1;
        };
        match &**c {
            Collection::List(l) => l.node_count(),
            Collection::Stream(s) => {
                let pel: usize = s.groups().values().map(|g| g.pel.len()).sum();
                s.nodes() + 1 + s.groups().len() + pel
            }
            _ if matches!(self.encoding(), "listpack" | "intset") => 1,
            Collection::Hash(h) => h.len(),
            Collection::Set(set) => set.len(),
            Collection::ZSet(z) => z.len(),
        }
    }
}

/// The free effort ([`Value::free_effort`]) above which Redis frees a
/// value in the background (`LAZYFREE_THRESHOLD`).
pub const LAZYFREE_THRESHOLD: usize = 64;

/// A resident key's value as the store lends it: a string's bytes, or a
/// collection (see [`CollRef`]).
#[derive(Clone, Debug, PartialEq)]
pub enum ValueRef<'a> {
    /// A string's bytes.
    Str(&'a [u8]),
    /// A list, hash, set, sorted set or stream.
    Coll(CollRef<'a>),
}

/// A resident collection, read-only: borrowed from behind its box, or, for a
/// small packed collection that lives inline in its key's block, unpacked
/// into a copy of its one buffer (bounded by `block::PACKED_INLINE_MAX`).
/// Either way it dereferences to the [`Collection`].
#[derive(Clone)]
pub enum CollRef<'a> {
    /// A collection in its own allocation.
    Borrowed(&'a Collection),
    /// A packed collection, copied out of its key's block.
    Unpacked(Collection),
}

impl std::ops::Deref for CollRef<'_> {
    type Target = Collection;

    fn deref(&self) -> &Collection {
        match self {
            CollRef::Borrowed(c) => c,
            CollRef::Unpacked(c) => c,
        }
    }
}

impl std::fmt::Debug for CollRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl PartialEq for CollRef<'_> {
    fn eq(&self, other: &CollRef<'_>) -> bool {
        **self == **other
    }
}

impl<'a> ValueRef<'a> {
    /// The string, or [`StoreError::WrongType`] for any other type.
    ///
    /// # Errors
    ///
    /// [`StoreError::WrongType`] when the value is not a string.
    pub fn as_str(self) -> Result<&'a [u8], StoreError> {
        match self {
            ValueRef::Str(s) => Ok(s),
            ValueRef::Coll(_) => Err(StoreError::WrongType),
        }
    }

    /// An owned copy (`COPY`, `RENAME` across shards, `GETDEL`).
    pub fn to_value(self) -> Value {
        match self {
            ValueRef::Str(s) => Value::str(s),
            ValueRef::Coll(CollRef::Borrowed(c)) => Value::Coll(Box::new(c.clone())),
            ValueRef::Coll(CollRef::Unpacked(c)) => Value::Coll(Box::new(c)),
        }
    }

    /// Which type this value is.
    pub fn kind(self) -> ValueKind {
        match self {
            ValueRef::Str(_) => ValueKind::Str,
            ValueRef::Coll(c) => c.kind(),
        }
    }

    /// The internal encoding `OBJECT ENCODING` reports, following Redis's
    /// rules: for strings `int` for a canonical 64-bit integer, `embstr` up
    /// to 44 bytes, `raw` beyond; each collection type reports its own.
    pub fn encoding(self) -> &'static str {
        match self {
            ValueRef::Str(s) if is_canonical_i64(s) => "int",
            ValueRef::Str(s) if s.len() <= 44 => "embstr",
            ValueRef::Str(_) => "raw",
            ValueRef::Coll(c) => match &*c {
                Collection::List(l) => l.encoding(),
                Collection::Hash(h) => h.encoding(),
                Collection::Set(s) => s.encoding(),
                Collection::ZSet(z) => z.encoding(),
                Collection::Stream(_) => "stream",
            },
        }
    }

    /// Heap bytes the value would own beyond a key's block in its own
    /// allocation: a collection's box and what the collection allocates
    /// (rounded up to the allocator's size classes; O(1), collections keep
    /// a running count). 0 for a string.
    pub fn coll_heap_bytes(self) -> usize {
        match self {
            ValueRef::Str(_) => 0,
            ValueRef::Coll(c) => memory::alloc_size(size_of::<Collection>()) + c.heap_bytes(),
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
    fn typed_access_checks_the_type() {
        let mut v: Value = List::new().into();
        assert!(Set::of(&v.as_ref()).is_err());
        assert!(v.as_str().is_err());
        List::of_mut(&mut v).unwrap().push(End::Left, b"x");
        assert_eq!(List::of(&v.as_ref()).unwrap().len(), 1);
        assert_eq!(v.kind(), ValueKind::List);
        assert_eq!(v.encoding(), "quicklist");
        assert!(v.as_ref().coll_heap_bytes() > 0);
        assert_eq!(Value::str(b"x").as_ref().coll_heap_bytes(), 0);
    }
}
