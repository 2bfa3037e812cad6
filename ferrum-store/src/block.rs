//! One key's heap block: its metadata, its key and its value in a single
//! allocation, owned through a thin 8-byte pointer.
//!
//! This is the layout that makes a small key cheap. A string key is one
//! allocation with no per-key header beyond the 16 bytes below, and so is a
//! small packed collection (a listpack or intset of up to
//! [`PACKED_INLINE_MAX`] bytes); a row of the shard's slot table is just the
//! pointer. Optional fields take space only in the keys that have them
//! (Redis keeps `expires` as a second dict for the same reason).
//!
//! ```text
//! offset  size  field
//!      0     4  key length
//!      4     4  value length: a string's, a packed collection's (0 boxed)
//!      8     4  last access, in whole seconds of the caller's clock
//!     12     2  physical table (database) index
//!     14     1  flags: TTL, GROWN, COLL, WATCHED, PACKED, SPILL
//!     15     1  PACKED: which packed form (`PackedKind`); else 0
//!     16    12  if TTL: deadline (u64 ms), position in the volatile list (u32)
//!      -     4  if GROWN: the string's capacity (u32)
//!      -     k  key bytes
//!      -     v  the value, in one of four ways:
//!               a string's bytes (its capacity when GROWN, else its length);
//!               SPILL: a pointer to the string's own exact-size allocation;
//!               PACKED: a packed collection's buffer;
//!               COLL: a `Box<Collection>` pointer
//! ```
//!
//! A string spills out of the block only when that costs less in the
//! allocator's size classes ([`spills`]): a 1,000-byte value with a
//! 16-byte key would round a 1,032-byte block up to 1,280, while a 48-byte
//! block and a 1,024-byte buffer take 1,072. Packed collections are copied
//! out for every read and written back after every write (`EntryMut` does
//! it), which is why only small ones live inline: a copy of at most
//! [`PACKED_INLINE_MAX`] bytes is cheap next to the O(n) walk of the packed
//! form itself, and beyond it the box's 40 bytes are a small share.
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
//! old one was allocated with; a COLL block owns the `Box<Collection>`, a
//! SPILL block the `Box<[u8]>` of the string's length, whose pointer it
//! stores, and drops it exactly once.
//!
//! # Entries (design notes)
//!
//! **Entries.** Each key is one heap block (`ferrum-store/src/block.rs`): a
//! 16-byte header (key and string lengths, last access in seconds, database
//! table, flags), a 12-byte deadline field only for keys with a TTL, a
//! capacity field only for strings grown in place by `APPEND`/`SETRANGE`,
//! then the key's bytes and the value: a string's bytes, a small packed
//! collection's one buffer (up to 512 bytes), or a pointer (to a larger
//! collection's box, or to a string's own buffer when the size classes make
//! that cheaper: a 16-byte key and a 1,000-byte value take a 48-byte block
//! and a 1,024-byte buffer instead of one 1,280-byte block). A 16-byte key
//! with a 32-byte value is one 64-byte jemalloc allocation. The
//! shard's slot table is a `Vec` of thin block pointers (8 bytes a key),
//! indexed by `EntryId` (what the policy sees); each database's index is a
//! `hashbrown::HashTable<u32>` of slot ids (5 bytes a key at full load).
//! Lookups hash the key, and compare bytes only on the block whose 7-bit tag
//! matched. The slot table doubles as the `SCAN` cursor space: a cursor is
//! `slot * shards + shard`, and slots never move while a key is resident, so
//! a key present for a whole scan is always returned. Reads borrow an
//! `Entry` (a view of the block, `ValueRef` for the value); writes go through
//! `EntryMut`, which re-accounts the block when dropped.

// The workspace denies `unsafe`; this module is the one exception, reviewed
// as such (see ARCHITECTURE.md).
#![allow(unsafe_code)]

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::ptr::NonNull;

use crate::memory;
use crate::value::{CollRef, Collection, PackedKind, Value, ValueKind, ValueRef};

const HEADER: usize = 16;
const TTL_LEN: usize = 12;
const CAP_LEN: usize = 4;
const PTR_LEN: usize = size_of::<usize>();

const F_TTL: u8 = 1;
const F_GROWN: u8 = 2;
const F_COLL: u8 = 4;
const F_WATCHED: u8 = 8;
const F_PACKED: u8 = 16;
const F_SPILL: u8 = 32;

/// The flags that say where the value is; at most one is set (none: a
/// string inline).
const VALUE_MODE: u8 = F_COLL | F_PACKED | F_SPILL;
/// The flags that describe the key rather than its value, kept when a new
/// value replaces the old.
const KEY_FLAGS: u8 = F_TTL | F_WATCHED;

/// Resolution of [`Block::last_access_ms`]: whole seconds, as Redis's LRU
/// clock, so a `u32` holds Unix time until 2106. `OBJECT IDLETIME`
/// reports seconds, and a policy rebuilt at runtime re-registers keys in
/// access order at this resolution.
const TICK_MS: u64 = 1_000;

/// The longest key or string a block can hold.
pub(crate) const MAX_LEN: usize = u32::MAX as usize;

/// The largest packed collection kept inline in its key's block; a larger
/// one (possible up to the encoding thresholds, a few KiB) keeps its own
/// allocation behind a box. See the module docs.
pub(crate) const PACKED_INLINE_MAX: usize = 512;

/// Whether a string of `len` bytes whose block puts values at `value_at`
/// costs less in its own allocation than inline: the allocator's size
/// classes, not the bytes, decide.
fn spills(value_at: usize, len: usize) -> bool {
    memory::alloc_size(value_at + PTR_LEN) + memory::alloc_size(len)
        < memory::alloc_size(value_at + len)
}

/// The shape a block's size follows from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Shape {
    key_len: usize,
    /// Bytes of the value area's content: a string's capacity (its length
    /// unless GROWN; a SPILL string's length, held outside), a packed
    /// collection's length; 0 for COLL.
    cap: usize,
    flags: u8,
}

impl Shape {
    /// The shape for a string of `len` bytes under `key_len` and the key's
    /// `flags` (only [`KEY_FLAGS`] are kept), inline or spilled, whichever
    /// costs less.
    fn for_str(key_len: usize, len: usize, flags: u8) -> Shape {
        let shape = Shape {
            key_len,
            cap: len,
            flags: flags & KEY_FLAGS,
        };
        if spills(shape.value_at(), len) {
            Shape {
                flags: shape.flags | F_SPILL,
                ..shape
            }
        } else {
            shape
        }
    }

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
            + if self.flags & (F_COLL | F_SPILL) != 0 {
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

/// What a block owns outside itself, taken out by [`Block::take_outside`].
enum Outside {
    Nothing,
    Coll(Box<Collection>),
    Spill(Box<[u8]>),
}

/// A key's block. See the module docs.
pub(crate) struct Block(NonNull<u8>);

// SAFETY: a block exclusively owns its allocation and, for a collection or a
// spilled string, its box, which is `Send`; nothing is shared between blocks.
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
                let shape = Shape::for_str(key.len(), s.len(), 0);
                let mut b = Block::alloc(shape, s.len());
                if shape.flags & F_SPILL != 0 {
                    b.write_ptr(shape, Box::into_raw(s.into_boxed()).cast::<u8>());
                } else {
                    b.value_area(shape).copy_from_slice(&s);
                }
                b
            }
            Value::Coll(c) => match c.packed() {
                Some((kind, bytes)) if bytes.len() <= PACKED_INLINE_MAX => {
                    let shape = Shape {
                        key_len: key.len(),
                        cap: bytes.len(),
                        flags: F_PACKED,
                    };
                    let mut b = Block::alloc(shape, bytes.len());
                    b.write_packed(shape, kind, bytes);
                    b
                }
                _ => {
                    let shape = Shape {
                        key_len: key.len(),
                        cap: 0,
                        flags: F_COLL,
                    };
                    let mut b = Block::alloc(shape, 0);
                    b.write_ptr(shape, Box::into_raw(c).cast::<u8>());
                    b
                }
            },
        };
        Ok(block.with_key(key, table, now_ms))
    }

    /// A string key's block with `bytes` copied straight in (or into its
    /// own buffer, where the value spills): one allocation fewer than
    /// [`Block::new`] with a `Value::Str` built first.
    pub(crate) fn new_str(
        key: &[u8],
        bytes: &[u8],
        table: u16,
        now_ms: u64,
    ) -> Result<Block, TooLong> {
        if key.len() > MAX_LEN || bytes.len() > MAX_LEN {
            return Err(TooLong);
        }
        let shape = Shape::for_str(key.len(), bytes.len(), 0);
        let mut b = Block::alloc(shape, bytes.len());
        if shape.flags & F_SPILL != 0 {
            b.write_ptr(shape, Box::into_raw(Box::<[u8]>::from(bytes)).cast::<u8>());
        } else {
            b.value_area(shape).copy_from_slice(bytes);
        }
        Ok(b.with_key(key, table, now_ms))
    }

    /// Fills in a new block's key, database table and last access.
    fn with_key(mut self, key: &[u8], table: u16, now_ms: u64) -> Block {
        let shape = self.shape();
        debug_assert_eq!(shape.key_len, key.len());
        // SAFETY: the key area holds `key.len()` bytes.
        unsafe {
            self.key_ptr(shape)
                .copy_from_nonoverlapping(key.as_ptr(), key.len())
        };
        self.write_u16(12, table);
        self.set_last_access(now_ms);
        self
    }

    /// Allocates a block of `shape` with the header's lengths and flags set
    /// and everything else uninitialised.
    fn alloc(shape: Shape, value_len: usize) -> Block {
        let layout = shape.layout();
        // SAFETY: the layout's size is at least HEADER, never zero.
        let ptr = unsafe { alloc(layout) };
        let Some(ptr) = NonNull::new(ptr) else {
            handle_alloc_error(layout)
        };
        let mut b = Block(ptr);
        b.write_u32(0, shape.key_len as u32);
        b.write_u32(4, value_len as u32);
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

    /// The value area of an inline string or packed block, `cap` bytes.
    fn value_area(&mut self, shape: Shape) -> &mut [u8] {
        debug_assert!(shape.flags & (F_COLL | F_SPILL) == 0);
        // SAFETY: the area holds `cap` bytes (uninitialised ones only in a
        // block just allocated, which callers write before reading);
        // `&mut self` makes it exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.value_ptr(shape), shape.cap) }
    }

    /// The pointer a COLL or SPILL block stores.
    fn read_ptr(&self, shape: Shape) -> *mut u8 {
        debug_assert!(shape.flags & (F_COLL | F_SPILL) != 0);
        // SAFETY: such a block's value area holds a pointer.
        unsafe { self.value_ptr(shape).cast::<*mut u8>().read_unaligned() }
    }

    fn write_ptr(&mut self, shape: Shape, ptr: *mut u8) {
        debug_assert!(shape.flags & (F_COLL | F_SPILL) != 0);
        // SAFETY: such a block's value area holds a pointer.
        unsafe { self.value_ptr(shape).cast::<*mut u8>().write_unaligned(ptr) }
    }

    /// Writes a packed collection's tag, length and bytes (`shape.cap` of
    /// them) into a PACKED block.
    fn write_packed(&mut self, shape: Shape, kind: PackedKind, bytes: &[u8]) {
        debug_assert!(shape.flags & F_PACKED != 0 && shape.cap == bytes.len());
        // SAFETY: offset 15 is inside the header.
        unsafe { self.0.as_ptr().add(15).write(kind as u8) };
        self.write_u32(4, bytes.len() as u32);
        self.value_area(shape).copy_from_slice(bytes);
    }

    /// The key.
    pub(crate) fn key(&self) -> &[u8] {
        let shape = self.shape();
        // SAFETY: the key area holds `key_len` initialised bytes.
        unsafe { std::slice::from_raw_parts(self.key_ptr(shape), shape.key_len) }
    }

    /// The bytes of a string or of a packed collection.
    fn bytes(&self, shape: Shape) -> &[u8] {
        let len = self.read_u32(4) as usize;
        let at = if shape.flags & F_SPILL != 0 {
            self.read_ptr(shape)
        } else {
            self.value_ptr(shape)
        };
        // SAFETY: a SPILL block's buffer holds exactly `len` bytes; an
        // inline string's or packed value's first `len` bytes are written.
        unsafe { std::slice::from_raw_parts(at, len) }
    }

    fn packed_kind(&self) -> PackedKind {
        // SAFETY: offset 15 is inside the header.
        PackedKind::from_tag(unsafe { self.0.as_ptr().add(15).read() })
    }

    /// The value, as the store lends it: a string's bytes, a boxed
    /// collection borrowed, a packed one unpacked into a copy.
    pub(crate) fn value(&self) -> ValueRef<'_> {
        let shape = self.shape();
        if shape.flags & F_COLL != 0 {
            // SAFETY: the block owns a live box; the borrow is tied to `self`.
            let c = unsafe { &*self.read_ptr(shape).cast::<Collection>() };
            ValueRef::Coll(CollRef::Borrowed(c))
        } else if shape.flags & F_PACKED != 0 {
            let c = Collection::from_packed(self.packed_kind(), self.bytes(shape));
            ValueRef::Coll(CollRef::Unpacked(c))
        } else {
            ValueRef::Str(self.bytes(shape))
        }
    }

    /// The value's type, read from the flags without unpacking anything.
    pub(crate) fn kind(&self) -> ValueKind {
        let shape = self.shape();
        if shape.flags & F_COLL != 0 {
            // SAFETY: the block owns a live box.
            unsafe { &*self.read_ptr(shape).cast::<Collection>() }.kind()
        } else if shape.flags & F_PACKED != 0 {
            self.packed_kind().value_kind()
        } else {
            ValueKind::Str
        }
    }

    /// A packed collection, copied out for modification; `None` for any
    /// other value.
    pub(crate) fn unpack(&self) -> Option<Collection> {
        let shape = self.shape();
        (shape.flags & F_PACKED != 0)
            .then(|| Collection::from_packed(self.packed_kind(), self.bytes(shape)))
    }

    /// A boxed collection, mutably; `None` for any other value (a packed
    /// one is [`unpack`](Self::unpack)ed instead).
    pub(crate) fn coll_mut(&mut self) -> Option<&mut Collection> {
        let shape = self.shape();
        // SAFETY: the block owns a live box; `&mut self` makes it exclusive.
        (shape.flags & F_COLL != 0)
            .then(|| unsafe { &mut *self.read_ptr(shape).cast::<Collection>() })
    }

    /// Stores `c` as the value, replacing whatever was there: inline when it
    /// is packed and small enough, else behind a box.
    pub(crate) fn put_coll(&mut self, c: Collection) {
        let shape = self.shape();
        let key_flags = shape.flags & KEY_FLAGS;
        // SAFETY: every branch below relayouts to a shape that does not
        // claim what was taken, or overwrites the pointer, before anything
        // reads the value again.
        let outside = unsafe { self.take_outside(shape) };
        match c.packed() {
            Some((kind, bytes)) if bytes.len() <= PACKED_INLINE_MAX => {
                let to = Shape {
                    key_len: shape.key_len,
                    cap: bytes.len(),
                    flags: key_flags | F_PACKED,
                };
                if to != shape {
                    self.relayout(to);
                }
                self.write_packed(to, kind, bytes);
            }
            _ => {
                let to = Shape {
                    key_len: shape.key_len,
                    cap: 0,
                    flags: key_flags | F_COLL,
                };
                if to != shape {
                    self.relayout(to);
                }
                self.write_ptr(to, Box::into_raw(Box::new(c)).cast::<u8>());
            }
        }
        drop(outside);
    }

    /// Takes a COLL block's box or a SPILL block's buffer out, leaving the
    /// block's pointer dangling.
    ///
    /// # Safety
    ///
    /// Before the block is read or dropped, the caller must relayout it to a
    /// shape without COLL and SPILL, or write a new pointer.
    unsafe fn take_outside(&mut self, shape: Shape) -> Outside {
        if shape.flags & F_COLL != 0 {
            // SAFETY: the block owns the box; the caller's contract ends
            // the block's claim on it.
            Outside::Coll(unsafe { Box::from_raw(self.read_ptr(shape).cast::<Collection>()) })
        } else if shape.flags & F_SPILL != 0 {
            let len = self.read_u32(4) as usize;
            let ptr = std::ptr::slice_from_raw_parts_mut(self.read_ptr(shape), len);
            // SAFETY: the buffer is the `Box<[u8]>` of `len` bytes the block
            // owns; as above.
            Outside::Spill(unsafe { Box::from_raw(ptr) })
        } else {
            Outside::Nothing
        }
    }

    /// Takes the value out, freeing the block.
    pub(crate) fn into_value(mut self) -> Value {
        let shape = self.shape();
        let value = if shape.flags & F_PACKED != 0 {
            Value::Coll(Box::new(Collection::from_packed(
                self.packed_kind(),
                self.bytes(shape),
            )))
        } else if shape.flags & (F_COLL | F_SPILL) == 0 {
            Value::str(self.bytes(shape))
        } else {
            // SAFETY: the block is freed below without running `Drop`, so
            // what it owned has exactly one owner again.
            match unsafe { self.take_outside(shape) } {
                Outside::Coll(c) => Value::Coll(c),
                Outside::Spill(s) => Value::Str(s.into_vec().into()),
                Outside::Nothing => unreachable!("the flags said outside"),
            }
        };
        // SAFETY: allocated with this shape's layout; forgotten right after.
        unsafe { dealloc(self.0.as_ptr(), shape.layout()) };
        std::mem::forget(self);
        value
    }

    /// Bytes the allocator hands out for this block, plus what it owns
    /// outside (a collection's box and heap, a spilled string's buffer):
    /// what the key costs beyond its slot and index rows.
    pub(crate) fn heap_bytes(&self) -> usize {
        let shape = self.shape();
        let outside = if shape.flags & F_COLL != 0 {
            // SAFETY: the block owns a live box.
            let c = unsafe { &*self.read_ptr(shape).cast::<Collection>() };
            memory::alloc_size(size_of::<Collection>()) + c.heap_bytes()
        } else if shape.flags & F_SPILL != 0 {
            memory::alloc_size(shape.cap)
        } else {
            0
        };
        memory::alloc_size(shape.size()) + outside
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

    /// Replaces the value (a string or a collection) with a copy of the
    /// string `s`, in place when the shape is unchanged.
    pub(crate) fn set_str(&mut self, s: &[u8]) -> Result<(), TooLong> {
        if s.len() > MAX_LEN {
            return Err(TooLong);
        }
        let shape = self.shape();
        let to = Shape::for_str(shape.key_len, s.len(), shape.flags);
        if to == shape && shape.flags & F_SPILL != 0 {
            // SAFETY: the buffer holds exactly `s.len()` bytes.
            unsafe {
                self.read_ptr(shape)
                    .copy_from_nonoverlapping(s.as_ptr(), s.len())
            };
            return Ok(());
        }
        // SAFETY: relayout or the pointer write below ends the claim.
        let outside = unsafe { self.take_outside(shape) };
        if to != shape {
            self.relayout(to);
        }
        self.write_u32(4, s.len() as u32);
        if to.flags & F_SPILL != 0 {
            self.write_ptr(to, Box::into_raw(Box::<[u8]>::from(s)).cast::<u8>());
        } else {
            self.value_area(to).copy_from_slice(s);
        }
        drop(outside);
        Ok(())
    }

    /// Writes `data` at `offset` of the string, zero-filling any gap and
    /// growing the capacity amortised (doubling up to 1 MB, then by 1 MB, as
    /// Redis's `sdsMakeRoomFor`). `APPEND` is `set_range(len, tail)`. A
    /// spilled string comes back inline first. Only for strings.
    pub(crate) fn set_range(&mut self, offset: usize, data: &[u8]) -> Result<(), TooLong> {
        const PREALLOC_MAX: usize = 1 << 20;
        let mut shape = self.shape();
        debug_assert!(shape.flags & (F_COLL | F_PACKED) == 0);
        let end = offset.checked_add(data.len()).ok_or(TooLong)?;
        if end > MAX_LEN {
            return Err(TooLong);
        }
        if shape.flags & F_SPILL != 0 {
            // SAFETY: the relayout right below drops SPILL.
            let Outside::Spill(s) = (unsafe { self.take_outside(shape) }) else {
                unreachable!("the flags said spilled")
            };
            shape = Shape {
                flags: shape.flags & !F_SPILL,
                ..shape
            };
            self.relayout(shape);
            self.value_area(shape).copy_from_slice(&s);
        }
        let len = self.read_u32(4) as usize;
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

    /// Moves the block to a new allocation of shape `to`, keeping the
    /// header, the deadline fields present in both, the key and, when the
    /// value stays where it is (same [`VALUE_MODE`]), as much of the value
    /// as fits; a value that moves is the caller's to write.
    fn relayout(&mut self, to: Shape) {
        let from = self.shape();
        let new = Block::alloc(to, 0);
        let same_mode = from.flags & VALUE_MODE == to.flags & VALUE_MODE;
        let len = self.read_u32(4) as usize;
        // SAFETY: both blocks are live and distinct; every copy stays within
        // the smaller of the two areas.
        unsafe {
            let (src, dst) = (self.0.as_ptr(), new.0.as_ptr());
            // Header: lengths, last access, table, packed tag; then the new
            // flags.
            dst.copy_from_nonoverlapping(src, HEADER);
            dst.add(14).write(to.flags);
            if to.flags & F_PACKED == 0 {
                dst.add(15).write(0);
            }
            if from.flags & to.flags & F_TTL != 0 {
                dst.add(HEADER)
                    .copy_from_nonoverlapping(src.add(HEADER), TTL_LEN);
            }
            new.key_ptr(to)
                .copy_from_nonoverlapping(self.key_ptr(from), from.key_len);
            let value_len = if !same_mode {
                0
            } else if to.flags & (F_COLL | F_SPILL) != 0 {
                PTR_LEN
            } else {
                len.min(to.cap)
            };
            new.value_ptr(to)
                .copy_from_nonoverlapping(self.value_ptr(from), value_len);
        }
        let mut new = new;
        if to.flags & F_GROWN != 0 {
            let at = HEADER + to.ttl_len();
            new.write_u32(at, to.cap as u32);
        }
        let new_len = if to.flags & F_COLL != 0 {
            0
        } else {
            len.min(to.cap)
        };
        new.write_u32(4, new_len as u32);
        // The old allocation goes without what it owned: ownership moved
        // (or was taken by the caller).
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
        // SAFETY: this is the block's last use; what it owned is dropped
        // exactly once, here.
        drop(unsafe { self.take_outside(shape) });
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

    fn list_of(items: &[&[u8]]) -> List {
        let mut list = List::new();
        for it in items {
            list.push(End::Right, it);
        }
        list
    }

    #[test]
    fn a_small_collection_is_packed_inline_and_written_back() {
        let mut b = Block::new(b"mylist", list_of(&[b"a"]).into(), 0, 0).unwrap();
        b.set_deadline(10);
        assert!(b.coll_mut().is_none(), "no box to borrow");
        let Some(Collection::List(mut l)) = b.unpack() else {
            panic!("not a packed list")
        };
        l.push(End::Right, b"b");
        let bytes = l.packed().unwrap().1.len();
        b.put_coll(Collection::List(l));
        let shape = b.shape();
        assert_eq!(shape.flags & VALUE_MODE, F_PACKED);
        assert_eq!(shape.cap, bytes);
        assert_eq!(
            b.heap_bytes(),
            memory::alloc_size(shape.size()),
            "one allocation"
        );
        assert_eq!((b.key(), b.deadline()), (&b"mylist"[..], 10));
        let v = b.into_value();
        assert_eq!(List::of(&v.as_ref()).unwrap().len(), 2);
    }

    #[test]
    fn a_large_collection_keeps_its_box() {
        let big = vec![b'x'; PACKED_INLINE_MAX];
        let mut b = Block::new(b"k", list_of(&[b"a"]).into(), 0, 0).unwrap();
        b.put_coll(Collection::List(list_of(&[&big])));
        assert_eq!(b.shape().flags & VALUE_MODE, F_COLL);
        match b.coll_mut() {
            Some(Collection::List(l)) => l.push(End::Left, b"y"),
            other => panic!("not a boxed list: {other:?}"),
        }
        assert!(b.heap_bytes() > PACKED_INLINE_MAX + memory::alloc_size(size_of::<Collection>()));
        // Written back small, it moves inline again.
        b.put_coll(Collection::List(list_of(&[b"z"])));
        assert_eq!(b.shape().flags & VALUE_MODE, F_PACKED);
        assert_eq!(b.into_value(), list_of(&[b"z"]).into());
    }

    #[test]
    fn a_string_spills_only_when_that_saves_bytes() {
        let key = [b'k'; 16];
        for (len, spilled) in [(32, false), (100, false), (1_000, true), (5_000, false)] {
            let b = Block::new(&key, s(&vec![7; len]), 0, 0).unwrap();
            assert_eq!(b.shape().flags & F_SPILL != 0, spilled, "{len} bytes");
            let inline = memory::alloc_size(HEADER + key.len() + len);
            assert!(b.heap_bytes() <= inline, "{len} bytes");
            assert_eq!(b.value(), ValueRef::Str(&vec![7; len]));
        }
        let mut b = Block::new(&key, s(&[1; 1_000]), 0, 0).unwrap();
        assert_eq!(b.heap_bytes(), 48 + 1_024);
        b.set_str(&[2; 1_000]).unwrap();
        assert_eq!(b.value(), ValueRef::Str(&[2; 1_000]));
        b.set_range(1_000, b"tail").unwrap();
        assert!(b.grown() && b.shape().flags & F_SPILL == 0);
        let mut want = vec![2; 1_000];
        want.extend_from_slice(b"tail");
        assert_eq!(b.value(), ValueRef::Str(&want));
        b.set_str(&[3; 1_000]).unwrap();
        assert!(!b.grown() && b.shape().flags & F_SPILL != 0);
        assert_eq!(b.into_value(), s(&[3; 1_000]));
    }

    #[test]
    fn a_collection_can_become_a_string_and_back() {
        let mut b = Block::new(b"k", List::new().into(), 0, 0).unwrap();
        b.set_str(b"now a string").unwrap();
        assert_eq!(b.value(), ValueRef::Str(b"now a string"));
        assert!(b.coll_mut().is_none() && b.unpack().is_none());
        b.put_coll(Collection::List(list_of(&[b"again"])));
        assert_eq!(b.value().kind(), crate::ValueKind::List);
        b.set_str(&[0; 1_000]).unwrap();
        assert_eq!(b.value(), ValueRef::Str(&[0; 1_000]));
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

    /// One change to a block, for the property test below.
    #[derive(Clone, Debug)]
    enum Op {
        SetStr(Vec<u8>),
        PutList(Vec<Vec<u8>>),
        SetRange(usize, Vec<u8>),
        Deadline(u64),
        Watch,
        Touch(u64),
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        let bytes = || prop::collection::vec(any::<u8>(), 0..40);
        // Long enough to spill, or to keep a list in its box.
        let long = || prop::collection::vec(any::<u8>(), 900..1_100);
        prop_oneof![
            bytes().prop_map(Op::SetStr),
            long().prop_map(Op::SetStr),
            prop::collection::vec(prop_oneof![bytes(), long()], 0..4).prop_map(Op::PutList),
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
            let mut val = Value::str(b"init");
            let (mut deadline, mut watched, mut grown) = (0, false, false);
            let mut pos = 0;
            for op in ops {
                match op {
                    Op::SetStr(v) => {
                        b.set_str(&v).unwrap();
                        val = Value::str(&v);
                        grown = false;
                    }
                    Op::PutList(items) => {
                        let items: Vec<&[u8]> = items.iter().map(|i| &i[..]).collect();
                        b.put_coll(Collection::List(list_of(&items)));
                        val = list_of(&items).into();
                        grown = false;
                    }
                    Op::SetRange(o, d) => {
                        let Value::Str(s) = &val else { continue };
                        b.set_range(o, &d).unwrap();
                        let mut v = s.to_vec();
                        if v.len() < o + d.len() {
                            v.resize(o + d.len(), 0);
                        }
                        v[o..o + d.len()].copy_from_slice(&d);
                        val = Value::str(&v);
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
                proptest::prop_assert_eq!(b.value(), val.as_ref());
                proptest::prop_assert_eq!(b.kind(), val.kind());
                proptest::prop_assert_eq!(b.deadline(), deadline);
                if deadline != 0 {
                    proptest::prop_assert_eq!(b.volatile_pos(), pos);
                }
                proptest::prop_assert_eq!((b.watched(), b.grown()), (watched, grown));
                proptest::prop_assert_eq!(b.table(), table);
                let shape = b.shape();
                let outside = match shape.flags & VALUE_MODE {
                    0 | F_PACKED => 0,
                    F_SPILL => memory::alloc_size(shape.cap),
                    F_COLL => val.as_ref().coll_heap_bytes(),
                    _ => unreachable!("one value mode at a time"),
                };
                proptest::prop_assert_eq!(b.heap_bytes(), memory::alloc_size(shape.size()) + outside);
                if let Value::Str(s) = &val {
                    proptest::prop_assert!(shape.cap >= s.len());
                }
            }
            proptest::prop_assert_eq!(b.into_value(), val);
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
