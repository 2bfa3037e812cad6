//! The collection types a key can hold besides strings: lists, hashes,
//! sets, sorted sets and streams.
//!
//! Small hashes, sets, sorted sets and lists are packed as Redis packs them
//! (`listpack.rs`, `intset.rs`; lists as a chain of packed nodes) and convert
//! in place to their large forms when a threshold of [`EncodingLimits`] is
//! crossed, never back. A packed form is one exact-size allocation, counted
//! as such. The large forms keep a running count of the heap bytes their
//! elements own, so that `Value::heap_bytes` is
//! O(1) however big the collection is: element bytes are copied into their
//! own allocations on the way in (never kept as slices of a network buffer)
//! and counted with [`alloc_size`](crate::memory::alloc_size); the tables
//! that hold them are counted by capacity. Each file documents its
//! structural overhead.

mod dense;
mod elem;
mod hash;
mod intset;
mod limits;
mod list;
mod listpack;
mod ostree;
mod quicklist;
mod set;
mod stream;
mod zpacked;
mod zset;

pub use hash::{Hash, Iter as HashIter};
pub use limits::EncodingLimits;
pub use list::{End, Iter as ListIter, List};
pub use set::Set;
pub use stream::{
    AddError, Claim, Consumer, Group, GroupEntry, IdSpec, Pending, Stream, StreamId, Trim,
};
pub use zset::{LexBound, ScoreBound, ZSet};
