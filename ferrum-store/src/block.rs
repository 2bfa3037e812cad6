//! One key's heap block: its metadata, its key and its value in a single
//! allocation, owned through a thin 8-byte pointer.
//!
//! This is the layout that makes a small key cheap. A string key is one
//! allocation with no per-key header beyond the 16 bytes below; a row of the
//! shard's slot table is just the pointer. Optional fields take space only
//! in the keys that have them (Redis keeps `expires` as a second dict for the
//! same reason).
//!
//! ```text
//! offset  size  field
//!      0     4  key length
//!      4     4  string length (0 for a collection)
//!      8     4  last access, in whole seconds of the caller's clock
//!     12     2  physical table (database) index
//!     14     1  flags: TTL, GROWN, COLL, WATCHED
//!     15     1  (unused)
//!     16    12  if TTL: deadline (u64 ms), position in the volatile list (u32)
//!      -     4  if GROWN: the string's capacity (u32)
//!      -     k  key bytes
//!      -     v  COLL: a `Box<Collection>` pointer; else the string's bytes
//!               (its capacity when GROWN, its length otherwise)
//! ```
//!
//! Multi-byte fields are read and written unaligned, in native byte order;
//! the block is allocated with 8-byte alignment. Lengths are `u32`: a key or
//! a string over 4 GiB cannot be stored (Redis's own limit is 512 MB,
//! `proto-max-bulk-len`), and [`Block::new`] reports it.
//!
//! All `unsafe` in the store lives in this file. The invariants: the pointer
//! is from `alloc` with [`Block::layout`] of the current flags and lengths;
//! every flag or length change goes through [`Block::relayout`], which
//! allocates the new shape before the old one is freed, with the layout the
//! old one was allocated with; a COLL block owns the `Box<Collection>` whose
//! pointer it stores, and drops it exactly once.

// The workspace denies `unsafe`; this module is the one exception, reviewed
// as such (see ARCHITECTURE.md).
#![allow(unsafe_code)]

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::ptr::NonNull;

use crate::memory;
use crate::value::{Collection, Value, ValueRef};

const HEADER: usize = 16;
const TTL_LEN: usize = 12;
const CAP_LEN: usize = 4;
const PTR_LEN: usize = size_of::<usize>();

const F_TTL: u8 = 1;
const F_GROWN: u8 = 2;
const F_COLL: u8 = 4;
const F_WATCHED: u8 = 8;

/// Resolution of [`Block::last_access_ms`]: whole seconds, as Redis's LRU
/// clock, so a `u32` holds Unix time until 2106. `OBJECT IDLETIME`
/// reports seconds, and a policy rebuilt at runtime re-registers keys in
/// access order at this resolution.
const TICK_MS: u64 = 1_000;

/// The longest key or string a block can hold.
pub(crate) const MAX_LEN: usize = u32::MAX as usize;

/// The shape a block's size follows from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Shape {
    key_len: usize,
    /// String capacity in bytes (its length unless GROWN); unused for COLL.
    cap: usize,
    flags: u8,
}

impl Shape {
    fn ttl_len(self) -> usize {
        if self.flags & F_TTL != 0 {
            TTL_LEN
        } else {
            0
        }
    }

    fn cap_len(self) -> usize {
        if self.flags & F_GROWN != 0 {
            CAP_LEN
        } else {
            0
        }
    }

    fn key_at(self) -> usize {
        HEADER + self.ttl_len() + self.cap_len()
    }

    fn value_at(self) -> usize {
        self.key_at() + self.key_len
    }

    fn size(self) -> usize {
        self.value_at()
            + if self.flags & F_COLL != 0 {
                PTR_LEN
            } else {
                self.cap
            }
    }

    fn layout(self) -> Layout {
        // The size is at most 16 + 12 + 4 + 2 * 4 GiB: always a valid layout
        // on a 64-bit target.
        Layout::from_size_align(self.size(), 8)
            .unwrap_or_else(|_| unreachable!("block sizes fit a Layout"))
    }
}

/// A key's block. See the module docs.
pub(crate) struct Block(NonNull<u8>);

// SAFETY: a block exclusively owns its allocation and, for a collection, its
// `Box<Collection>`, which is `Send`; nothing is shared between blocks.
unsafe impl Send for Block {}
// SAFETY: `&Block` only reads.
unsafe impl Sync for Block {}

/// A key or string longer than a block can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TooLong;

impl Block {
    /// A block for `key` holding `value`, in physical table `table`, last
    /// accessed at `now_ms`.
    ///
    /// # Errors
    ///
    /// [`TooLong`] when the key or a string value is over [`MAX_LEN`].
    pub(crate) fn new(key: &[u8], value: Value, table: u16, now_ms: u64) -> Result<Block, TooLong> {
        if key.len() > MAX_LEN {
            return Err(TooLong);
        }
        let block = match value {
            Value::Str(s) => {
                if s.len() > MAX_LEN {
                    return Err(TooLong);
                }
                let shape = Shape {
                    key_len: key.len(),
                    cap: s.len(),
                    flags: 0,
                };
                let b = Block::alloc(shape, s.len());
                // SAFETY: the value area holds `cap` = `s.len()` bytes.
                unsafe {
                    b.value_ptr(shape)
                        .copy_from_nonoverlapping(s.as_ptr(), s.len())
                };
                b
            }
            Value::Coll(c) => {
                let shape = Shape {
                    key_len: key.len(),
                    cap: 0,
                    flags: F_COLL,
                };
                let b = Block::alloc(shape, 0);
                let ptr = Box::into_raw(c);
                // SAFETY: the value area holds a pointer; the block now owns
                // the box.
                unsafe {
                    b.value_ptr(shape)
                        .cast::<*mut Collection>()
                        .write_unaligned(ptr)
                };
                b
            }
        };
        let shape = block.shape();
        // SAFETY: the key area holds `key.len()` bytes.
        unsafe {
            block
                .key_ptr(shape)
                .copy_from_nonoverlapping(key.as_ptr(), key.len())
        };
        let mut block = block;
        block.write_u16(12, table);
        block.set_last_access(now_ms);
        Ok(block)
    }

    /// Allocates a block of `shape` with the header's lengths and flags set
    /// and everything else uninitialised.
    fn alloc(shape: Shape, str_len: usize) -> Block {
        let layout = shape.layout();
        // SAFETY: the layout's size is at least HEADER, never zero.
        let ptr = unsafe { alloc(layout) };
        let Some(ptr) = NonNull::new(ptr) else {
            handle_alloc_error(layout)
        };
        let mut b = Block(ptr);
        b.write_u32(0, shape.key_len as u32);
        b.write_u32(4, str_len as u32);
        b.write_u32(8, 0);
        b.write_u16(12, 0);
        // SAFETY: offsets 14 and 15 are inside the header.
        unsafe {
            ptr.as_ptr().add(14).write(shape.flags);
            ptr.as_ptr().add(15).write(0);
        }
        if shape.flags & F_GROWN != 0 {
            b.write_u32(HEADER + shape.ttl_len(), shape.cap as u32);
        }
        b
    }

    fn read_u32(&self, at: usize) -> u32 {
        // SAFETY: callers pass header or optional-field offsets inside the block.
        unsafe { self.0.as_ptr().add(at).cast::<u32>().read_unaligned() }
    }

    fn write_u32(&mut self, at: usize, v: u32) {
        // SAFETY: as in `read_u32`.
        unsafe { self.0.as_ptr().add(at).cast::<u32>().write_unaligned(v) }
    }

    fn write_u16(&mut self, at: usize, v: u16) {
        // SAFETY: as in `read_u32`.
        unsafe { self.0.as_ptr().add(at).cast::<u16>().write_unaligned(v) }
    }

    fn flags(&self) -> u8 {
        // SAFETY: offset 14 is inside the header.
        unsafe { self.0.as_ptr().add(14).read() }
    }

    fn set_flags(&mut self, flags: u8) {
        // SAFETY: offset 14 is inside the header.
        unsafe { self.0.as_ptr().add(14).write(flags) }
    }

    fn shape(&self) -> Shape {
        let flags = self.flags();
        let key_len = self.read_u32(0) as usize;
        let cap = if flags & F_GROWN != 0 {
            let ttl = if flags & F_TTL != 0 { TTL_LEN } else { 0 };
            self.read_u32(HEADER + ttl) as usize
        } else if flags & F_COLL != 0 {
            0
        } else {
            self.read_u32(4) as usize
        };
        Shape {
            key_len,
            cap,
            flags,
        }
    }

    fn key_ptr(&self, shape: Shape) -> *mut u8 {
        // SAFETY: the key starts inside the block.
        unsafe { self.0.as_ptr().add(shape.key_at()) }
    }

    fn value_ptr(&self, shape: Shape) -> *mut u8 {
        // SAFETY: the value area starts inside the block (or at its end for
        // an empty string).
        unsafe { self.0.as_ptr().add(shape.value_at()) }
    }

    /// The key.
    pub(crate) fn key(&self) -> &[u8] {
        let shape = self.shape();
        // SAFETY: the key area holds `key_len` initialised bytes.
        unsafe { std::slice::from_raw_parts(self.key_ptr(shape), shape.key_len) }
    }

    fn coll_ptr(&self, shape: Shape) -> *mut Collection {
        // SAFETY: a COLL block's value area holds the box's pointer.
        unsafe {
            self.value_ptr(shape)
                .cast::<*mut Collection>()
                .read_unaligned()
        }
    }

    /// The value, borrowed.
    pub(crate) fn value(&self) -> ValueRef<'_> {
        let shape = self.shape();
        if shape.flags & F_COLL != 0 {
            // SAFETY: the block owns a live box; the borrow is tied to `self`.
            ValueRef::Coll(unsafe { &*self.coll_ptr(shape) })
        } else {
            let len = self.read_u32(4) as usize;
            // SAFETY: the first `len` bytes of the value area are the string.
            ValueRef::Str(unsafe { std::slice::from_raw_parts(self.value_ptr(shape), len) })
        }
    }

    /// The collection, mutably; `None` for a string.
    pub(crate) fn coll_mut(&mut self) -> Option<&mut Collection> {
        let shape = self.shape();
        // SAFETY: the block owns a live box; `&mut self` makes it exclusive.
        (shape.flags & F_COLL != 0).then(|| unsafe { &mut *self.coll_ptr(shape) })
    }

    /// Takes the value out, freeing the block.
    pub(crate) fn into_value(self) -> Value {
        let shape = self.shape();
        let value = if shape.flags & F_COLL != 0 {
            // SAFETY: ownership of the box moves out; the block is freed
            // below without running `Drop`, so it is not dropped twice.
            Value::Coll(unsafe { Box::from_raw(self.coll_ptr(shape)) })
        } else {
            match self.value() {
                ValueRef::Str(s) => Value::str(s),
                ValueRef::Coll(_) => unreachable!("the flag said string"),
            }
        };
        // SAFETY: allocated with this shape's layout; forgotten right after.
        unsafe { dealloc(self.0.as_ptr(), shape.layout()) };
        std::mem::forget(self);
        value
    }

    /// Takes a COLL block's collection out of it, turning it into an empty
    /// string block.
    fn take_coll(&mut self) -> Option<Box<Collection>> {
        let shape = self.shape();
        if shape.flags & F_COLL == 0 {
            return None;
        }
        // SAFETY: the block owns the box; `relayout` to a string shape
        // forgets the pointer, so it has exactly one owner again.
        let boxed = unsafe { Box::from_raw(self.coll_ptr(shape)) };
        self.relayout(Shape {
            cap: 0,
            flags: shape.flags & !F_COLL,
            ..shape
        });
        Some(boxed)
    }

    /// Bytes the allocator hands out for this block, plus a collection's
    /// own heap: what the key costs beyond its slot and index rows.
    pub(crate) fn heap_bytes(&self) -> usize {
        memory::alloc_size(self.shape().size()) + self.value().coll_heap_bytes()
    }

    /// The physical table (database) index.
    pub(crate) fn table(&self) -> u16 {
        // SAFETY: offset 12 is inside the header.
        unsafe { self.0.as_ptr().add(12).cast::<u16>().read_unaligned() }
    }

    /// When the key was last read or written, rounded down to the second.
    pub(crate) fn last_access_ms(&self) -> u64 {
        u64::from(self.read_u32(8)) * TICK_MS
    }

    pub(crate) fn set_last_access(&mut self, now_ms: u64) {
        let secs = (now_ms / TICK_MS).min(u64::from(u32::MAX)) as u32;
        self.write_u32(8, secs);
    }

    /// The deadline in ms, 0 for none.
    pub(crate) fn deadline(&self) -> u64 {
        if self.flags() & F_TTL == 0 {
            return 0;
        }
        // SAFETY: a TTL block has the deadline right after the header.
        unsafe { self.0.as_ptr().add(HEADER).cast::<u64>().read_unaligned() }
    }

    /// Sets the deadline (0 for none), reallocating when the TTL field
    /// appears or goes.
    pub(crate) fn set_deadline(&mut self, deadline: u64) {
        let shape = self.shape();
        let has = shape.flags & F_TTL != 0;
        if has != (deadline != 0) {
            self.relayout(Shape {
                flags: shape.flags ^ F_TTL,
                ..shape
            });
        }
        if deadline != 0 {
            // SAFETY: the block now has a TTL field.
            unsafe {
                self.0
                    .as_ptr()
                    .add(HEADER)
                    .cast::<u64>()
                    .write_unaligned(deadline)
            };
        }
    }

    /// Position in the shard's volatile list. Only for blocks with a TTL.
    pub(crate) fn volatile_pos(&self) -> u32 {
        debug_assert!(self.flags() & F_TTL != 0);
        self.read_u32(HEADER + 8)
    }

    pub(crate) fn set_volatile_pos(&mut self, pos: u32) {
        debug_assert!(self.flags() & F_TTL != 0);
        self.write_u32(HEADER + 8, pos);
    }

    /// Whether the string was grown in place (APPEND, SETRANGE): Redis then
    /// reports the `raw` encoding.
    pub(crate) fn grown(&self) -> bool {
        self.flags() & F_GROWN != 0
    }

    /// Whether a client has `WATCH`ed this key (the shard keeps its version
    /// in a side table).
    pub(crate) fn watched(&self) -> bool {
        self.flags() & F_WATCHED != 0
    }

    pub(crate) fn set_watched(&mut self) {
        let f = self.flags();
        self.set_flags(f | F_WATCHED);
    }

    /// Replaces a string value (or turns a collection into a string) with a
    /// copy of `s`, in place when the length is unchanged.
    pub(crate) fn set_str(&mut self, s: &[u8]) -> Result<(), TooLong> {
        if s.len() > MAX_LEN {
            return Err(TooLong);
        }
        drop(self.take_coll());
        let shape = self.shape();
        if shape.flags & F_GROWN != 0 || shape.cap != s.len() {
            self.relayout(Shape {
                cap: s.len(),
                flags: shape.flags & !F_GROWN,
                ..shape
            });
        }
        self.write_u32(4, s.len() as u32);
        let shape = self.shape();
        // SAFETY: the value area holds exactly `s.len()` bytes.
        unsafe {
            self.value_ptr(shape)
                .copy_from_nonoverlapping(s.as_ptr(), s.len())
        };
        Ok(())
    }

    /// Writes `data` at `offset` of the string, zero-filling any gap and
    /// growing the capacity amortised (doubling up to 1 MB, then by 1 MB, as
    /// Redis's `sdsMakeRoomFor`). `APPEND` is `set_range(len, tail)`.
    /// Only for strings.
    pub(crate) fn set_range(&mut self, offset: usize, data: &[u8]) -> Result<(), TooLong> {
        const PREALLOC_MAX: usize = 1 << 20;
        let shape = self.shape();
        debug_assert!(shape.flags & F_COLL == 0);
        let len = self.read_u32(4) as usize;
        let end = offset.checked_add(data.len()).ok_or(TooLong)?;
        if end > MAX_LEN {
            return Err(TooLong);
        }
        if end > shape.cap {
            let cap = if end < PREALLOC_MAX {
                end * 2
            } else {
                end + PREALLOC_MAX
            }
            .min(MAX_LEN);
            self.relayout(Shape {
                cap,
                flags: shape.flags | F_GROWN,
                ..shape
            });
        } else if shape.flags & F_GROWN == 0 {
            // Redis marks a string written in place `raw` even when no
            // reallocation was needed.
            self.relayout(Shape {
                flags: shape.flags | F_GROWN,
                ..shape
            });
        }
        let shape = self.shape();
        let base = self.value_ptr(shape);
        // SAFETY: `end` <= cap; the gap `len..offset` (if any) is inside too.
        unsafe {
            if offset > len {
                base.add(len).write_bytes(0, offset - len);
            }
            base.add(offset)
                .copy_from_nonoverlapping(data.as_ptr(), data.len());
        }
        if end > len {
            self.write_u32(4, end as u32);
        }
        Ok(())
    }

    /// Moves the block to a new allocation of shape `to`, keeping the header,
    /// the deadline fields present in both, the key and as much of the
    /// value as fits.
    fn relayout(&mut self, to: Shape) {
        let from = self.shape();
        let new = Block::alloc(to, 0);
        // SAFETY: both blocks are live and distinct; every copy stays within
        // the smaller of the two areas.
        unsafe {
            let (src, dst) = (self.0.as_ptr(), new.0.as_ptr());
            // Header: lengths, last access, table; then the new flags.
            dst.copy_from_nonoverlapping(src, 14);
            dst.add(14).write(to.flags);
            if from.flags & to.flags & F_TTL != 0 {
                dst.add(HEADER)
                    .copy_from_nonoverlapping(src.add(HEADER), TTL_LEN);
            }
            new.key_ptr(to)
                .copy_from_nonoverlapping(self.key_ptr(from), from.key_len);
            let value_len = if from.flags & to.flags & F_COLL != 0 {
                PTR_LEN
            } else if (from.flags | to.flags) & F_COLL != 0 {
                0
            } else {
                (self.read_u32(4) as usize).min(to.cap)
            };
            new.value_ptr(to)
                .copy_from_nonoverlapping(self.value_ptr(from), value_len);
        }
        let mut new = new;
        if to.flags & F_GROWN != 0 {
            let at = HEADER + to.ttl_len();
            new.write_u32(at, to.cap as u32);
        }
        if to.flags & F_COLL == 0 {
            let len = (self.read_u32(4) as usize).min(to.cap);
            new.write_u32(4, len as u32);
        }
        // The old allocation goes without its collection: ownership moved.
        let old = std::mem::replace(self, new);
        // SAFETY: `old` was allocated with its own shape's layout.
        unsafe { dealloc(old.0.as_ptr(), from.layout()) };
        std::mem::forget(old);
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        let shape = self.shape();
        let layout = shape.layout();
        if shape.flags & F_COLL != 0 {
            // SAFETY: the block owns the box, and this is its last use.
            drop(unsafe { Box::from_raw(self.coll_ptr(shape)) });
        }
        // SAFETY: allocated with this layout (see the module's invariants).
        unsafe { dealloc(self.0.as_ptr(), layout) };
    }
}

impl std::fmt::Debug for Block {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Block")
            .field("key", &self.key().escape_ascii().to_string())
            .field("value", &self.value())
            .field("deadline", &self.deadline())
            .field("table", &self.table())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{End, List};
    use crate::value::Typed;

    fn s(v: &[u8]) -> Value {
        Value::str(v)
    }

    #[test]
    fn a_small_string_key_is_one_block_of_header_key_and_value() {
        let b = Block::new(b"key:000042", s(&[b'v'; 32]), 3, 5_000).unwrap();
        assert_eq!(b.key(), b"key:000042");
        assert_eq!(b.value(), ValueRef::Str(&[b'v'; 32]));
        assert_eq!(b.shape().size(), 16 + 10 + 32);
        assert_eq!(b.heap_bytes(), memory::alloc_size(58));
        assert_eq!(b.table(), 3);
        assert_eq!(b.last_access_ms(), 5_000);
        let b = Block::new(b"k", s(b""), 0, 6_999).unwrap();
        assert_eq!(b.last_access_ms(), 6_000);
        assert_eq!(b.deadline(), 0);
        assert!(!b.grown() && !b.watched());
    }

    #[test]
    fn the_ttl_field_comes_and_goes_with_the_deadline() {
        let mut b = Block::new(b"k", s(b"hello"), 1, 0).unwrap();
        let plain = b.shape().size();
        b.set_deadline(77);
        b.set_volatile_pos(9);
        assert_eq!((b.deadline(), b.volatile_pos()), (77, 9));
        assert_eq!(b.shape().size(), plain + TTL_LEN);
        b.set_deadline(78);
        assert_eq!((b.deadline(), b.volatile_pos()), (78, 9));
        b.set_deadline(0);
        assert_eq!(b.deadline(), 0);
        assert_eq!(b.shape().size(), plain);
        assert_eq!((b.key(), b.value()), (&b"k"[..], ValueRef::Str(b"hello")));
        assert_eq!(b.table(), 1);
    }

    #[test]
    fn strings_grow_amortised_and_zero_fill_gaps() {
        let mut b = Block::new(b"k", s(b"ab"), 0, 0).unwrap();
        b.set_deadline(5);
        b.set_range(2, b"cd").unwrap();
        assert!(b.grown());
        let cap = b.shape().cap;
        assert_eq!(cap, 8);
        b.set_range(6, b"z").unwrap();
        assert_eq!(b.value(), ValueRef::Str(b"abcd\0\0z"));
        assert_eq!(b.shape().cap, cap, "fits the spare capacity");
        b.set_range(0, b"X").unwrap();
        assert_eq!(b.value(), ValueRef::Str(b"Xbcd\0\0z"));
        assert_eq!(b.deadline(), 5);
        b.set_str(b"new").unwrap();
        assert!(!b.grown());
        assert_eq!(b.value(), ValueRef::Str(b"new"));
        assert_eq!(b.deadline(), 5);
    }

    #[test]
    fn writing_in_place_without_growth_still_marks_raw() {
        let mut b = Block::new(b"k", s(b"abc"), 0, 0).unwrap();
        b.set_range(0, b"x").unwrap();
        assert!(b.grown());
        assert_eq!(b.value(), ValueRef::Str(b"xbc"));
    }

    #[test]
    fn collections_are_owned_and_given_back() {
        let mut list = List::new();
        list.push(End::Right, b"a");
        let mut b = Block::new(b"mylist", list.into(), 0, 0).unwrap();
        b.set_deadline(10);
        match b.coll_mut() {
            Some(Collection::List(l)) => l.push(End::Right, b"b"),
            other => panic!("not a list: {other:?}"),
        }
        assert_eq!(b.key(), b"mylist");
        let v = b.into_value();
        assert_eq!(List::of(v.as_ref()).unwrap().len(), 2);
    }

    #[test]
    fn a_collection_can_become_a_string_and_back() {
        let mut b = Block::new(b"k", List::new().into(), 0, 0).unwrap();
        b.set_str(b"now a string").unwrap();
        assert_eq!(b.value(), ValueRef::Str(b"now a string"));
        assert!(b.coll_mut().is_none());
        drop(b);
    }

    #[test]
    fn watched_survives_relayout() {
        let mut b = Block::new(b"k", s(b"v"), 0, 0).unwrap();
        b.set_watched();
        b.set_deadline(3);
        b.set_range(1, b"w").unwrap();
        assert!(b.watched());
        assert_eq!(b.value(), ValueRef::Str(b"vw"));
    }

    /// One change to a string block, for the property test below.
    #[derive(Clone, Debug)]
    enum Op {
        SetStr(Vec<u8>),
        SetRange(usize, Vec<u8>),
        Deadline(u64),
        Watch,
        Touch(u64),
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        let bytes = || prop::collection::vec(any::<u8>(), 0..40);
        prop_oneof![
            bytes().prop_map(Op::SetStr),
            (0..60usize, bytes()).prop_map(|(o, d)| Op::SetRange(o, d)),
            prop_oneof![Just(0u64), 1..u64::MAX].prop_map(Op::Deadline),
            Just(Op::Watch),
            (0..u64::from(u32::MAX) * 1_000).prop_map(Op::Touch),
        ]
    }

    proptest::proptest! {
        /// Any sequence of changes leaves the block agreeing with a plain
        /// model of its fields, and its size with its shape; every
        /// reallocation keeps the key and the table.
        #[test]
        fn a_block_matches_a_model_through_any_changes(
            key in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..30),
            table in 0..u16::MAX,
            ops in proptest::collection::vec(op(), 0..40),
        ) {
            let mut b = Block::new(&key, Value::str(b"init"), table, 0).unwrap();
            let (mut val, mut deadline, mut watched, mut grown) = (b"init".to_vec(), 0, false, false);
            let mut pos = 0;
            for op in ops {
                match op {
                    Op::SetStr(v) => {
                        b.set_str(&v).unwrap();
                        val = v;
                        grown = false;
                    }
                    Op::SetRange(o, d) => {
                        b.set_range(o, &d).unwrap();
                        if val.len() < o + d.len() {
                            val.resize(o + d.len(), 0);
                        }
                        val[o..o + d.len()].copy_from_slice(&d);
                        grown = true;
                    }
                    Op::Deadline(d) => {
                        b.set_deadline(d);
                        if d != 0 {
                            pos += 1;
                            b.set_volatile_pos(pos);
                        }
                        deadline = d;
                    }
                    Op::Watch => {
                        b.set_watched();
                        watched = true;
                    }
                    Op::Touch(ms) => b.set_last_access(ms),
                }
                proptest::prop_assert_eq!(b.key(), &key[..]);
                proptest::prop_assert_eq!(b.value(), ValueRef::Str(&val));
                proptest::prop_assert_eq!(b.deadline(), deadline);
                if deadline != 0 {
                    proptest::prop_assert_eq!(b.volatile_pos(), pos);
                }
                proptest::prop_assert_eq!((b.watched(), b.grown()), (watched, grown));
                proptest::prop_assert_eq!(b.table(), table);
                let shape = b.shape();
                proptest::prop_assert!(shape.cap >= val.len());
                proptest::prop_assert_eq!(b.heap_bytes(), memory::alloc_size(shape.size()));
            }
            proptest::prop_assert_eq!(b.into_value(), Value::str(&val));
        }
    }

    #[test]
    fn empty_keys_and_values_fit() {
        let b = Block::new(b"", s(b""), 0, 0).unwrap();
        assert_eq!(b.key(), b"");
        assert_eq!(b.value(), ValueRef::Str(b""));
        assert_eq!(b.into_value(), s(b""));
    }
}
