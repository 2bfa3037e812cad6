//! One element of a large set, hash or sorted set (a member, a field, a
//! value): its bytes kept inline when short, in an exact-size allocation
//! otherwise.
//!
//! A `Bytes` per element cost 32 bytes in the table plus an allocation of
//! its own, which every lookup had to follow to compare the key. Most
//! elements are short (`element:000000012345` is 20 bytes), and an
//! [`Elem`] holds up to [`Elem::INLINE`] bytes in its own 24: no allocation,
//! and a lookup compares bytes on the cache line it already read. A table
//! entry of a set shrinks from 32 bytes plus a 24-byte allocation to 24
//! bytes; a hash entry from 64 bytes plus two allocations to 48; a sorted
//! set's tree node from 56 bytes plus one to 48.

use std::fmt;
use std::ops::Deref;

use bytes::Bytes;

use crate::memory::alloc_size;

/// A byte string, inline up to [`Elem::INLINE`] bytes. See the module docs.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Elem {
    /// `len` bytes at the start of `buf`.
    Inline { len: u8, buf: [u8; Elem::INLINE] },
    /// Longer strings, in an allocation of their exact length.
    Heap(Box<[u8]>),
}

// The tag, the length and the inline bytes fill the 24 bytes a boxed slice
// needs with its tag; a longer inline buffer would make every element 32.
const _: () = assert!(size_of::<Elem>() == 24);

impl Elem {
    /// The longest string kept inline.
    pub(crate) const INLINE: usize = 22;

    /// A copy of `b`.
    pub(crate) fn new(b: &[u8]) -> Elem {
        if b.len() <= Elem::INLINE {
            let mut buf = [0; Elem::INLINE];
            buf[..b.len()].copy_from_slice(b);
            Elem::Inline {
                len: b.len() as u8,
                buf,
            }
        } else {
            Elem::Heap(b.into())
        }
    }

    /// Heap bytes the element owns besides its own 24: its allocation, if
    /// it has one.
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            Elem::Inline { .. } => 0,
            Elem::Heap(b) => alloc_size(b.len()),
        }
    }

    /// The bytes as a `Bytes`, without a copy when they have their own
    /// allocation (a popped member goes into a reply).
    pub(crate) fn into_bytes(self) -> Bytes {
        match self {
            Elem::Inline { len, buf } => Bytes::copy_from_slice(&buf[..usize::from(len)]),
            Elem::Heap(b) => Bytes::from(b),
        }
    }
}

impl Default for Elem {
    /// The empty string (what a freed sorted-set node keeps).
    fn default() -> Elem {
        Elem::Inline {
            len: 0,
            buf: [0; Elem::INLINE],
        }
    }
}

impl Deref for Elem {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Elem::Inline { len, buf } => &buf[..usize::from(*len)],
            Elem::Heap(b) => b,
        }
    }
}

impl AsRef<[u8]> for Elem {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl fmt::Debug for Elem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&Bytes::copy_from_slice(self), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_strings_are_inline_and_long_ones_allocated() {
        for len in [0, 1, Elem::INLINE, Elem::INLINE + 1, 100] {
            let b: Vec<u8> = (0..len as u8).collect();
            let e = Elem::new(&b);
            assert_eq!(&e[..], &b[..]);
            assert_eq!(
                e.heap_bytes(),
                if len <= Elem::INLINE {
                    0
                } else {
                    alloc_size(len)
                }
            );
            assert_eq!(e.clone().into_bytes(), b);
        }
    }
}
