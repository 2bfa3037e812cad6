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
//!
//! # Collection types (design notes)
//!
//! - **Layout.** A small packed collection (listpack, intset, one-node list;
//!   at most `block::PACKED_INLINE_MAX` = 512 bytes) lives inline in its key's
//!   block, after the key, with a tag saying which form it is: one allocation
//!   per key. Reads get `CollRef::Unpacked`, a copy of it unpacked (a
//!   bounded copy, cheap next to the O(n) walk of the packed form); a write
//!   through `EntryMut` copies it out once and writes it back when the guard
//!   drops, boxing it if it outgrew the limit or converted. Any other
//!   collection is a `Box<Collection>` whose pointer sits in the block, read
//!   as `CollRef::Borrowed`, written in place. `Value` (`Str(Str)` or
//!   `Coll(Box<Collection>)`) is only the owned form commands build to insert
//!   and `remove` hands back. Types live in `ferrum-store/src/types/`;
//!   commands reach them through the `Typed` trait (`List::of(&entry.value())`
//!   gives `WRONGTYPE` for another type, `EntryMut::coll_mut::<List>()` the
//!   same for writing).
//! - **Small collections are packed**, as in Redis: a hash, a sorted set or a
//!   set of strings sits in one listpack (`types/listpack.rs`:
//!   length-prefixed entries, no back length, one byte of overhead per short
//!   entry; zset scores as the shortest integer bytes or an `f64`), a set of
//!   integers in an intset (`types/intset.rs`: sorted, 2/4/8-byte width). They
//!   convert in place to the large forms below when a threshold of
//!   `types::EncodingLimits` is crossed, and never back. The thresholds are
//!   Redis's parameters (`hash-max-listpack-entries`...), held process-wide in
//!   atomics as Redis keeps them in `server.*`: the types' API needs no config
//!   handle, at the cost that all stores in one process share them.
//! - **Lists** are a quicklist (`types/list.rs`): a chain of listpack nodes with
//!   back lengths (walkable both ways), each up to `list-max-listpack-size`
//!   (8 KB), one node kept inline with no chain allocation. **Large sets and
//!   hashes** are a dense `Vec` of
//!   entries plus a `hashbrown::HashTable` of positions: random picks (`SPOP`,
//!   `HRANDFIELD`) are O(1), removal is `swap_remove`, and `SSCAN`/`HSCAN` walk
//!   positions top-down so the one entry a removal moves was already visited
//!   (a member present for a whole scan is never missed). **Sorted sets** are an
//!   order-statistics treap (subtree sizes, arena of nodes) plus a hash index
//!   from member to node: rank, count and range-start are O(log n), a range of
//!   k members O(log n + k). The elements of these three large forms (members,
//!   fields, values) are `types::Elem`s: up to 22 bytes inline in 24, an
//!   exact-size allocation beyond, so a lookup compares the bytes on the line
//!   it already read and short elements allocate nothing (a 20-byte set member
//!   went from a 32-byte `Bytes` plus a 24-byte allocation to 24 bytes; `HSET
//!   -P 16` on a filled key went from 4.30 + 1.65 simulated LL read + write
//!   misses a request to 3.18 + 0.79, Redis's being 3.65 + 0.23). **Streams** are a `BTreeMap<StreamId, fields>`
//!   plus their consumer groups (`types::Group`: last delivered ID,
//!   entries-read, the pending-entries list and each consumer's own PEL),
//!   and where Redis's listpack nodes would begin (a new one every
//!   `stream-node-max-entries` appends; XDEL'd entries keep their room until
//!   the node empties), so `MAXLEN ~`/`MINID ~` remove exactly the whole nodes
//!   Redis would and `XINFO`'s `radix-tree-keys` counts them
//!   (`stream-node-max-bytes` is not modelled);
//!   `Stream::read_group`, `claim` and `autoclaim` do XREADGROUP/XCLAIM/
//!   XAUTOCLAIM's bookkeeping. **HyperLogLogs** are plain strings in Redis's
//!   byte layout (`cmd/hll.rs`), so they interchange with Redis.
//! - **Memory.** Packed forms count their one allocation by its capacity.
//!   A heap listpack (a list node, or a copy being written) keeps a capacity
//!   of its content's jemalloc size class, which an exact-size buffer would
//!   occupy anyway: it grows and shrinks a class at a time, so a push or pop
//!   reallocates only when it crosses into another class (an 8 KB node, every
//!   ~200 three-byte pushes; before, every push reallocated: 533 of
//!   `LPUSH`'s 7,729 instructions per request in callgrind), and the bytes counted are the bytes held. Inline
//!   packed values are their exact bytes in the key's block. A write that
//!   changed nothing (`SADD` of a present member) leaves a packed block
//!   as it was instead of writing its copy back. Large forms keep a running byte count of their elements'
//!   allocations (`memory::alloc_size`) and count their tables by capacity, so
//!   `Value::heap_bytes` stays O(1) and `EntryMut` re-accounts a key on drop.
//!   Elements are copied out of the network buffer on insertion.
//! - **Empty collections** are deleted by the command layer
//!   (`cmd/coll.rs::write_in`), never stored; streams stay when empty, as in
//!   Redis. `OBJECT ENCODING` reports the representation actually used
//!   (`listpack`, `intset`, `hashtable`, `skiplist`), and `quicklist` for every
//!   list, as Redis 7.0 does. `HSCAN`/`SSCAN`/`ZSCAN` return a packed
//!   collection whole in one call, as Redis does.
//! - **Many-element replies** (`LRANGE`, `LPOP`/`RPOP` with a count,
//!   `HGETALL`, `HKEYS`, `HVALS`, `SMEMBERS`, `SINTER`/`SUNION`/`SDIFF`) are
//!   written as RESP while the handler walks the collection under the shard
//!   lock: the store shows element slices (its iterators, `Set::for_each`,
//!   `List::pop_many_with`), the handler pushes each into a
//!   `ferrum_proto::BulksWriter` (`cmd/coll.rs::reply_writer`), and the
//!   reply is one `Frame::Bulks`: the elements' `$<len>\r\n...\r\n` bytes
//!   in one buffer, with the aggregate's kind (array, set, map) and count.
//!   The connection writes the header for its protocol (`*`, `~`, `%`) and
//!   copies the body whole. Before, an element cost a `Bytes` handle and a
//!   frame, and the encoder copied it a second time (`LRANGE_100` was 8%
//!   above Redis in CPU per request). The store still formats nothing, and
//!   the handler still only returns a frame. Whatever reads replies as
//!   values gets the ordinary frame back with `Bulks::into_frame`: Lua's
//!   `redis.call` (`script/convert.rs`); keyspace notifications only ask
//!   whether it is empty. Frames compare by the reply they stand for, so a
//!   `Frame::Bulks` equals the `Frame::Array` of the same bulks.
//! - **Blocking pops** reuse `list::pop_in`, `list::move_in` and
//!   `zset::pop_in`, which work on already locked shards.

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
pub use limits::{set_list_packed_threshold, EncodingLimits, NodeLimits};
pub use list::{End, Iter as ListIter, List};
pub use set::Set;
pub use stream::{
    AddError, Claim, Consumer, Group, GroupEntry, IdSpec, Pending, Stream, StreamId, Trim,
};
pub use zset::{LexBound, ScoreBound, ZSet};
