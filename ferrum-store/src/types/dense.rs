//! A dense indexed table: entries in a `Vec`, found by key through a
//! `hashbrown::HashTable` of positions. It backs sets and hashes.
//!
//! Keeping the entries dense gives what a plain hash map cannot: a uniformly
//! random entry in O(1) (`SPOP`, `SRANDMEMBER`, `HRANDFIELD`) and a `SCAN`
//! cursor that is just a position. Removal is `swap_remove`, so only the last
//! entry ever moves; [`Dense::scan`] walks positions from the top down, which
//! makes that move harmless: the moved entry was already visited, so at worst
//! it is returned twice (which `SCAN` allows) and never skipped.

use std::hash::BuildHasher;

use hashbrown::HashTable;

use super::elem::Elem;

/// The hasher every collection uses. A fixed seed keeps the store
/// deterministic; the table only stores positions, so iteration order does
/// not depend on it anyway.
pub(crate) const HASHER: foldhash::fast::FixedState =
    foldhash::fast::FixedState::with_seed(0x5eed_f00d_cafe_d00d);

/// Hashes a key with [`HASHER`].
pub(crate) fn hash_key(key: &[u8]) -> u64 {
    HASHER.hash_one(key)
}

/// Something stored in a [`Dense`] table, identified by a byte-string key.
pub(crate) trait Keyed {
    /// The key this entry is found by.
    fn key(&self) -> &[u8];
}

impl Keyed for Elem {
    fn key(&self) -> &[u8] {
        self
    }
}

impl Keyed for (Elem, Elem) {
    fn key(&self) -> &[u8] {
        &self.0
    }
}

/// Entries in insertion order (disturbed only by removals), indexed by key.
#[derive(Clone, Debug)]
pub(crate) struct Dense<T> {
    entries: Vec<T>,
    index: HashTable<u32>,
}

// Not derived: that would ask for `T: Default`.
impl<T> Default for Dense<T> {
    fn default() -> Dense<T> {
        Dense {
            entries: Vec::new(),
            index: HashTable::new(),
        }
    }
}

impl<T: Keyed> Dense<T> {
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn entries(&self) -> &[T] {
        &self.entries
    }

    /// Heap bytes of the two tables themselves (not of what the entries
    /// point to): the entry vector's capacity, and the index's buckets at
    /// hashbrown's 7/8 load factor plus one control byte each.
    pub(crate) fn table_bytes(&self) -> usize {
        let entries = self.entries.capacity() * size_of::<T>();
        let index = self.index.capacity() * (size_of::<u32>() + 1) * 8 / 7;
        crate::memory::alloc_size(entries) + crate::memory::alloc_size(index)
    }

    pub(crate) fn position(&self, key: &[u8]) -> Option<usize> {
        let entries = &self.entries;
        self.index
            .find(hash_key(key), |&i| *entries[i as usize].key() == *key)
            .map(|&i| i as usize)
    }

    /// The entry at `pos` (which must be in range), for modification.
    pub(crate) fn entry_mut(&mut self, pos: usize) -> &mut T {
        &mut self.entries[pos]
    }

    pub(crate) fn get(&self, key: &[u8]) -> Option<&T> {
        self.position(key).map(|i| &self.entries[i])
    }

    /// The position of `key`'s entry, or, when there is none, of the entry
    /// `make` builds for it, appended; and whether it is new (`SADD`,
    /// `HSET`). The key is hashed once. (hashbrown's `entry` would probe
    /// once, but it grows a full table even when the key is present, and a
    /// write that adds nothing must leave the table, and its memory, as it
    /// was.)
    pub(crate) fn find_or_push(&mut self, key: &[u8], make: impl FnOnce() -> T) -> (usize, bool) {
        let hash = hash_key(key);
        let entries = &self.entries;
        if let Some(&i) = self
            .index
            .find(hash, |&i| *entries[i as usize].key() == *key)
        {
            return (i as usize, false);
        }
        let pos = self.entries.len();
        let entries = &self.entries;
        self.index
            .insert_unique(hash, pos as u32, |&i| hash_key(entries[i as usize].key()));
        self.entries.push(make());
        (pos, true)
    }

    /// Removes the entry with `key`, moving the last entry into its place.
    pub(crate) fn remove(&mut self, key: &[u8]) -> Option<T> {
        let pos = self.position(key)?;
        Some(self.remove_at(pos))
    }

    /// Removes the entry at `pos` (which must be in range).
    pub(crate) fn remove_at(&mut self, pos: usize) -> T {
        let hash = hash_key(self.entries[pos].key());
        if let Ok(slot) = self.index.find_entry(hash, |&i| i as usize == pos) {
            slot.remove();
        }
        let last = self.entries.len() - 1;
        if pos != last {
            let moved_hash = hash_key(self.entries[last].key());
            if let Some(i) = self.index.find_mut(moved_hash, |&i| i as usize == last) {
                *i = pos as u32;
            }
        }
        let out = self.entries.swap_remove(pos);
        self.shrink_if_sparse();
        out
    }

    /// Gives memory back once the table is mostly empty, so that deleting
    /// elements shrinks `used_memory` as it would in Redis.
    fn shrink_if_sparse(&mut self) {
        if self.entries.capacity() > 64 && self.entries.len() * 4 < self.entries.capacity() {
            self.entries.shrink_to(self.entries.len() * 2);
            let entries = &self.entries;
            self.index
                .shrink_to(entries.len() * 2, |&i| hash_key(entries[i as usize].key()));
        }
    }

    /// One `SCAN` step: visits up to `count` positions going down from the
    /// cursor (0 starts at the top) and returns the next cursor, 0 when done.
    ///
    /// A cursor `c > 0` means "continue at position `c - 1`".
    pub(crate) fn scan(&self, cursor: u64, count: usize, mut f: impl FnMut(&T)) -> u64 {
        let len = self.entries.len() as u64;
        let mut next = if cursor == 0 { len } else { cursor.min(len) };
        let mut visited = 0;
        while next > 0 && visited < count.max(1) {
            next -= 1;
            f(&self.entries[next as usize]);
            visited += 1;
        }
        next
    }
}
