//! A resident key as commands see it: [`Entry`], a read-only view of its
//! block, and [`EntryMut`], a write guard that keeps the shard's memory
//! accounting and `WATCH` versions right; and the side table of those
//! versions.

use std::sync::atomic::{AtomicU64, Ordering};

use ferrum_evict::Millis;

use crate::block::Block;
use crate::value::{CollRef, Collection, Typed, ValueKind, ValueRef};
use crate::StoreError;

/// A resident key's metadata and value, borrowed from its block.
#[derive(Clone, Copy, Debug)]
pub struct Entry<'a> {
    pub(crate) block: &'a Block,
}

impl<'a> Entry<'a> {
    /// The stored value.
    pub fn value(self) -> ValueRef<'a> {
        self.block.value()
    }

    /// The value's type (`TYPE`, `SCAN ... TYPE`), without copying a packed
    /// collection out as [`value`](Self::value) does.
    pub fn kind(self) -> ValueKind {
        self.block.kind()
    }

    /// When the key expires, as absolute milliseconds on the caller's clock.
    pub fn expires_at(self) -> Option<Millis> {
        Some(self.block.deadline()).filter(|&d| d != 0).map(Millis)
    }

    /// When the key was last read or written (for `OBJECT IDLETIME`),
    /// rounded down to the second as Redis's LRU clock is.
    pub fn last_access(self) -> Millis {
        Millis(self.block.last_access_ms())
    }

    /// What this key costs in the store's accounting: its block and what it
    /// owns outside, at their allocated sizes, plus its slot row and index
    /// share ([`entry_cost`](crate::memory::entry_cost)). The figure
    /// `MEMORY USAGE` reports; the same one the eviction policy is told.
    pub fn memory_usage(self) -> usize {
        crate::memory::entry_cost(self.block.heap_bytes())
    }

    /// The encoding `OBJECT ENCODING` reports: the value's own, except that
    /// a string grown in place is `raw`, as in Redis.
    pub fn encoding(self) -> &'static str {
        if self.block.grown() {
            "raw"
        } else {
            self.value().encoding()
        }
    }
}

/// A mutable borrow of one entry that keeps the shard's memory accounting
/// and the key's `WATCH` version right when it is dropped.
#[derive(Debug)]
pub struct EntryMut<'a> {
    pub(crate) block: &'a mut Block,
    pub(crate) id: u32,
    pub(crate) used_bytes: &'a mut usize,
    pub(crate) watch: &'a mut Watches,
    pub(crate) cost_before: usize,
    pub(crate) dirty: bool,
    pub(crate) unchanged: bool,
    /// A packed collection copied out of the block for modification,
    /// written back when the guard drops.
    pub(crate) unpacked: Option<Collection>,
}

impl<'a> EntryMut<'a> {
    /// A guard over `block` (slot `id`), which costs `cost_before` now.
    pub(crate) fn new(
        block: &'a mut Block,
        id: u32,
        used_bytes: &'a mut usize,
        watch: &'a mut Watches,
    ) -> EntryMut<'a> {
        EntryMut {
            cost_before: block.heap_bytes(),
            block,
            id,
            used_bytes,
            watch,
            dirty: false,
            unchanged: false,
            unpacked: None,
        }
    }
}

impl EntryMut<'_> {
    /// The value, read-only (with any change made through this guard).
    pub fn value(&self) -> ValueRef<'_> {
        match &self.unpacked {
            Some(c) => ValueRef::Coll(CollRef::Borrowed(c)),
            None => self.block.value(),
        }
    }

    /// The collection for modification: a boxed one in place, a packed one
    /// copied out once (and written back on drop).
    fn coll(&mut self) -> Option<&mut Collection> {
        if self.unpacked.is_none() {
            self.unpacked = self.block.unpack();
        }
        match &mut self.unpacked {
            Some(c) => Some(c),
            None => self.block.coll_mut(),
        }
    }

    /// The collection as type `T`, for modification. Marks the key as
    /// written.
    ///
    /// # Errors
    ///
    /// [`StoreError::WrongType`] when the value is not a `T`.
    pub fn coll_mut<T: Typed>(&mut self) -> Result<&mut T, StoreError> {
        if self.coll().is_none_or(|c| T::of_coll(c).is_none()) {
            return Err(StoreError::WrongType);
        }
        self.dirty = true;
        Ok(self
            .coll()
            .and_then(T::of_coll_mut)
            .unwrap_or_else(|| unreachable!("checked just above")))
    }

    /// The collection, whatever its type, for modification.
    pub fn collection_mut(&mut self) -> Option<&mut Collection> {
        self.dirty = true;
        self.coll()
    }

    /// Replaces the value with the string `s` (`INCR` and friends).
    pub fn set_str(&mut self, s: &[u8]) {
        self.dirty = true;
        self.unpacked = None;
        self.block
            .set_str(s)
            .unwrap_or_else(|_| unreachable!("strings are capped below the block limit"));
    }

    /// Writes `data` at `offset` of the string, zero-filling any gap and
    /// growing it in place with amortised spare capacity (`SETRANGE`; the
    /// caller checked the 512 MB limit). Returns the new length. Redis then
    /// reports the `raw` encoding.
    ///
    /// # Errors
    ///
    /// [`StoreError::WrongType`] when the value is not a string.
    pub fn set_range(&mut self, offset: usize, data: &[u8]) -> Result<usize, StoreError> {
        self.block.value().as_str()?;
        self.dirty = true;
        self.block
            .set_range(offset, data)
            .unwrap_or_else(|_| unreachable!("strings are capped below the block limit"));
        Ok(self.block.value().as_str()?.len())
    }

    /// Appends `tail` to the string (`APPEND`). Returns the new length.
    ///
    /// # Errors
    ///
    /// [`StoreError::WrongType`] when the value is not a string.
    pub fn append(&mut self, tail: &[u8]) -> Result<usize, StoreError> {
        let len = self.block.value().as_str()?.len();
        self.set_range(len, tail)
    }

    /// Sets when the key was last accessed (what `OBJECT IDLETIME`
    /// reports), as `RESTORE ... IDLETIME` does. The eviction policy's own
    /// recency order is left as it is.
    pub fn set_last_access(&mut self, at: Millis) {
        self.block.set_last_access(at.0);
    }

    /// The expiry deadline.
    pub fn expires_at(&self) -> Option<Millis> {
        Some(self.block.deadline()).filter(|&d| d != 0).map(Millis)
    }

    /// Records that the command, though it borrowed the value for writing,
    /// changed nothing (`SADD` of members already present, `SREM` of absent
    /// ones): the key keeps its version, so a `WATCH` on it still holds, as
    /// Redis only signals a key a command modified.
    pub fn mark_unchanged(&mut self) {
        self.unchanged = true;
    }
}

impl Drop for EntryMut<'_> {
    fn drop(&mut self) {
        if let Some(c) = self.unpacked.take() {
            // Unpacked only to check its type, or by a command that changed
            // nothing (`SADD` of a member already present): the block's
            // bytes are still right.
            if self.dirty && !self.unchanged {
                self.block.put_coll(c);
            }
        }
        if self.dirty {
            let after = self.block.heap_bytes();
            *self.used_bytes = *self.used_bytes - self.cost_before + after;
            if !self.unchanged {
                self.watch.touch(self.block.watched(), self.id);
            }
        }
    }
}

/// `WATCH` versions, kept only for keys a client watched: every other key
/// pays nothing for transactions. A watched key's block carries a flag, and
/// every write to a flagged key takes a fresh version.
///
/// Absence has versions too, or a key watched while absent, then created
/// and removed again before `EXEC`, would read as unchanged (absent both
/// times) and a client would commit on a value it read in between: a lost
/// update. So a key watched while absent, and a flagged key when it is
/// removed (deleted, expired, evicted, flushed), leaves a record of its
/// table and name with a fresh version; creating the key takes the record
/// back and flags the new block with a fresh version. The records are
/// bounded ([`MAX_ABSENT`]): past that they are dropped together, and a
/// client watching one of them then sees a change it did not miss (its
/// `EXEC` aborts; no update is lost).
///
/// Versions come from one process-wide counter ([`WATCH_CLOCK`]), never
/// from the shard: a shard that is emptied (`FLUSHALL`, `FLUSHDB`), made
/// again or replaced with its store keeps handing out versions no `WATCH`
/// has seen, and a key that `SWAPDB` brings in from another database reads
/// as the other key it is (two live keys never share a version).
#[derive(Debug, Default)]
pub(crate) struct Watches {
    versions: hashbrown::HashMap<u32, u64, foldhash::fast::FixedState>,
    /// Versions of watched keys that are absent, by table and name (a
    /// table probed with the name itself, so looking up allocates nothing:
    /// every key created in a shard that holds records is looked up).
    absent: hashbrown::HashTable<Absent>,
    /// The bytes of the names in `absent`.
    absent_key_bytes: usize,
}

/// A watched key's absence from its table, at a version.
#[derive(Debug)]
struct Absent {
    table: u16,
    key: Box<[u8]>,
    version: u64,
}

/// The hash `Watches::absent` files a table and name under.
fn absent_hash(table: u16, key: &[u8]) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = foldhash::fast::FixedState::default().build_hasher();
    h.write_u16(table);
    h.write(key);
    h.finish()
}

/// The most absence records a shard keeps.
const MAX_ABSENT: usize = 1 << 16;

/// The last `WATCH` version handed out in this process. Taken only when a
/// watched key is written or a key is first watched, so its cache line is
/// contended only by transactions.
static WATCH_CLOCK: AtomicU64 = AtomicU64::new(0);

/// A `WATCH` version never handed out before in this process.
fn next_version() -> u64 {
    // Relaxed: only uniqueness matters, and a fetch_add on one atomic never
    // hands the same value out twice. 2^64 writes never wrap.
    WATCH_CLOCK.fetch_add(1, Ordering::Relaxed) + 1
}

impl Watches {
    /// The key in slot `id` was written; `watched` is its block's flag.
    pub(crate) fn touch(&mut self, watched: bool, id: u32) {
        if watched {
            let v = next_version();
            self.versions.insert(id, v);
        }
    }

    /// The key in `block` (slot `id`) left: if it was watched, its absence
    /// is a change with a version of its own.
    pub(crate) fn forget(&mut self, block: &Block, id: u32) {
        if block.watched() {
            self.versions.remove(&id);
            self.record_absent(block.table(), block.key(), next_version());
        }
    }

    /// The key in `block` (slot `id`, table `table`) was just created: if
    /// it was watched while absent, the new block is watched, at a version
    /// its absence never had.
    pub(crate) fn created(&mut self, table: u16, block: &mut Block, id: u32) {
        if self.absent.is_empty() {
            return;
        }
        let key = block.key();
        let found = self.absent.find_entry(absent_hash(table, key), |a| {
            a.table == table && *a.key == *key
        });
        if let Ok(entry) = found {
            entry.remove();
            self.absent_key_bytes -= key.len();
            block.set_watched();
            self.versions.insert(id, next_version());
        }
    }

    /// The version of the key in slot `id`, starting to track it if needed.
    pub(crate) fn version(&mut self, block: &mut Block, id: u32) -> u64 {
        if !block.watched() {
            block.set_watched();
            let v = next_version();
            self.versions.insert(id, v);
        }
        self.versions[&id]
    }

    /// The version of `key`'s absence from table `table`, starting to
    /// track it if needed.
    pub(crate) fn absent_version(&mut self, table: u16, key: &[u8]) -> u64 {
        let found = self.absent.find(absent_hash(table, key), |a| {
            a.table == table && *a.key == *key
        });
        if let Some(a) = found {
            return a.version;
        }
        let v = next_version();
        self.record_absent(table, key, v);
        v
    }

    fn record_absent(&mut self, table: u16, key: &[u8], version: u64) {
        let hash = absent_hash(table, key);
        if let Some(a) = self
            .absent
            .find_mut(hash, |a| a.table == table && *a.key == *key)
        {
            a.version = version;
            return;
        }
        if self.absent.len() >= MAX_ABSENT {
            self.absent = Default::default();
            self.absent_key_bytes = 0;
        }
        self.absent_key_bytes += key.len();
        let record = Absent {
            table,
            key: key.into(),
            version,
        };
        self.absent
            .insert_unique(hash, record, |a| absent_hash(a.table, &a.key));
    }

    /// `SWAPDB` of the databases in tables `a` and `b`: the absence
    /// records change tables with the databases, so a key absent (or
    /// expired) on both sides reads as unchanged, as in Redis, where a swap
    /// that replaces nothing with nothing touches no watched key. A key
    /// live on either side reads as changed: its version is not the one
    /// the other side had.
    pub(crate) fn swap_tables(&mut self, a: u16, b: u16) {
        if a == b || self.absent.is_empty() {
            return;
        }
        for mut record in std::mem::take(&mut self.absent) {
            if record.table == a {
                record.table = b;
            } else if record.table == b {
                record.table = a;
            }
            let hash = absent_hash(record.table, &record.key);
            self.absent
                .insert_unique(hash, record, |r| absent_hash(r.table, &r.key));
        }
    }

    /// Drops the allocation of the live keys' versions once every key is
    /// gone (the records of absent keys stay: their watchers still count).
    pub(crate) fn release_versions(&mut self) {
        debug_assert!(self.versions.is_empty());
        self.versions = Default::default();
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        // hashbrown: 12-byte buckets (u32, u64 packed to 16) plus a control
        // byte each, at its 7/8 load; an absence record's bucket holds a
        // boxed name (16 bytes), the table and the version (32 in all).
        self.versions.len() * 17 * 8 / 7 + self.absent.len() * 33 * 8 / 7 + self.absent_key_bytes
    }
}
