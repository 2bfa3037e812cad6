//! AHE's ghost history: the key hashes of recently evicted entries, each
//! tagged with the side whose advice evicted it.
//!
//! **Structure.** A ring buffer of the last `capacity` evicted hashes
//! (the side in the top bit), and an open-addressing index from hash to
//! ring slot: a power-of-two table of `u32` slot numbers, at least twice
//! the ring, with linear probing and backward-shift deletion (so no
//! tombstones accumulate). Recording overwrites the oldest ring slot and
//! drops its index entry; a hash recorded again keeps only its newest
//! record. A lookup that finds a hash removes it, so one eviction is at
//! most one regret. Hashes are compared on their low 63 bits.
//!
//! **Cost.** 8 bytes per ring slot plus 8 to 16 bytes of index, 16 to 24
//! bytes per remembered hash; the ring holds as many hashes as the cache
//! holds entries. Every operation is one or two short probe sequences at a
//! load factor of at most one half: O(1).
//!
//! **Source.** The ghost lists B1/B2 of ARC (Megiddo and Modha, "ARC: A
//! Self-Tuning, Low Overhead Replacement Cache", FAST 2003) and the
//! per-expert histories of LeCaR (Vietri et al., HotStorage 2018), with
//! hashes in place of keys since a policy never sees keys.

/// Which side's advice evicted an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// Evicted from the main region because the window's newcomers were
    /// preferred: recency's advice.
    Recency,
    /// Evicted from the window because the frequency filter did not admit
    /// it: frequency's advice.
    Frequency,
}

/// The top bit of a ring value marks [`Side::Frequency`].
const FREQUENCY_BIT: u64 = 1 << 63;
/// An empty index cell.
const EMPTY: u32 = u32::MAX;

/// A bounded history of evicted key hashes; see the module docs.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ghost {
    ring: Vec<u64>,
    /// Next ring slot to write.
    cursor: usize,
    /// Ring slot numbers, or `EMPTY`; `index.len()` is a power of two.
    index: Vec<u32>,
    /// Ring slots that hold a live record.
    live: usize,
}

impl Ghost {
    /// Remembers at least `capacity` hashes. Growing keeps what is
    /// remembered, and grows by at least an eighth so that a cache warming
    /// up one entry at a time pays O(1) amortised; shrinking is ignored (the
    /// history is small next to the cache).
    pub(crate) fn ensure_capacity(&mut self, capacity: usize) {
        if capacity <= self.ring.len() {
            return;
        }
        let capacity = capacity.max(self.ring.len() + self.ring.len() / 8);
        // Keep the ring's order: the slots from the cursor on are the
        // oldest, so the new empty slots go just before them.
        let grow = capacity - self.ring.len();
        let tail = self.ring.split_off(self.cursor);
        let old_index = std::mem::take(&mut self.index);
        let live: Vec<bool> = {
            // Which old slots are live: those the old index points at.
            let mut live = vec![false; self.ring.len() + tail.len()];
            for &slot in old_index.iter().filter(|&&s| s != EMPTY) {
                live[slot as usize] = true;
            }
            live
        };
        let head_len = self.ring.len();
        self.ring.extend(std::iter::repeat_n(0, grow));
        self.ring.extend(tail);
        self.index = vec![EMPTY; (2 * capacity).next_power_of_two()];
        self.live = 0;
        for (old, &is_live) in live.iter().enumerate() {
            if is_live {
                let new = if old < head_len { old } else { old + grow };
                self.insert_index(new as u32);
            }
        }
    }

    /// Records that the entry with `hash` was evicted on `side`'s advice.
    pub(crate) fn record(&mut self, hash: u64, side: Side) {
        if self.ring.is_empty() {
            return;
        }
        self.take(hash);
        let slot = self.cursor;
        if let Some(cell) = self.find(self.ring[slot], |s| s == slot as u32) {
            self.remove_index(cell);
        }
        self.ring[slot] = match side {
            Side::Recency => hash & !FREQUENCY_BIT,
            Side::Frequency => hash | FREQUENCY_BIT,
        };
        self.insert_index(slot as u32);
        self.cursor = (slot + 1) % self.ring.len();
    }

    /// If `hash` was evicted recently, forgets it and says on whose advice.
    pub(crate) fn take(&mut self, hash: u64) -> Option<Side> {
        let ring = &self.ring;
        let cell = self.find(hash, |s| same(ring[s as usize], hash))?;
        let value = self.ring[self.index[cell] as usize];
        self.remove_index(cell);
        Some(if value & FREQUENCY_BIT != 0 {
            Side::Frequency
        } else {
            Side::Recency
        })
    }

    /// The index cell on `hash`'s probe sequence whose slot satisfies
    /// `wanted`.
    fn find(&self, hash: u64, wanted: impl Fn(u32) -> bool) -> Option<usize> {
        if self.index.is_empty() {
            return None;
        }
        let mask = self.index.len() - 1;
        let mut cell = home(hash, mask);
        loop {
            match self.index[cell] {
                EMPTY => return None,
                slot if wanted(slot) => return Some(cell),
                _ => cell = (cell + 1) & mask,
            }
        }
    }

    fn insert_index(&mut self, slot: u32) {
        let mask = self.index.len() - 1;
        let mut cell = home(self.ring[slot as usize], mask);
        while self.index[cell] != EMPTY {
            cell = (cell + 1) & mask;
        }
        self.index[cell] = slot;
        self.live += 1;
    }

    /// Empties `cell`, shifting later members of its cluster back so every
    /// member stays reachable from its home cell.
    fn remove_index(&mut self, mut hole: usize) {
        let mask = self.index.len() - 1;
        let mut cell = hole;
        loop {
            cell = (cell + 1) & mask;
            let slot = self.index[cell];
            if slot == EMPTY {
                break;
            }
            let want = home(self.ring[slot as usize], mask);
            // Move it back unless its home lies cyclically in (hole, cell].
            let stays = if hole <= cell {
                hole < want && want <= cell
            } else {
                hole < want || want <= cell
            };
            if !stays {
                self.index[hole] = slot;
                hole = cell;
            }
        }
        self.index[hole] = EMPTY;
        self.live -= 1;
    }

    /// How many hashes are remembered.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.live
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.ring.capacity() * std::mem::size_of::<u64>()
            + self.index.capacity() * std::mem::size_of::<u32>()
    }
}

/// Whether a ring value records `hash` (ignoring the side bit).
fn same(value: u64, hash: u64) -> bool {
    (value ^ hash) & !FREQUENCY_BIT == 0
}

/// A hash's home cell. The high half picks it, so that it is independent
/// of the low bits the sketch and the store's sharding lean on.
fn home(hash: u64, mask: usize) -> usize {
    ((hash & !FREQUENCY_BIT) >> 31) as usize & mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_the_last_capacity_evictions() {
        let mut g = Ghost::default();
        g.record(1, Side::Recency); // no capacity yet: ignored
        assert_eq!(g.take(1), None);
        g.ensure_capacity(3);
        g.record(1, Side::Recency);
        g.record(2, Side::Frequency);
        g.record(3, Side::Recency);
        g.record(4, Side::Frequency); // overwrites 1
        assert_eq!(g.len(), 3);
        assert_eq!(g.take(1), None);
        assert_eq!(g.take(2), Some(Side::Frequency));
        assert_eq!(g.take(2), None);
        assert_eq!(g.take(3), Some(Side::Recency));
        assert_eq!(g.take(4), Some(Side::Frequency));
    }

    #[test]
    fn a_hash_evicted_twice_keeps_its_newest_record() {
        let mut g = Ghost::default();
        g.ensure_capacity(2);
        g.record(9, Side::Recency);
        g.record(9, Side::Frequency);
        // Overwriting the first slot must not drop the newer record.
        g.record(5, Side::Recency);
        assert_eq!(g.take(9), Some(Side::Frequency));
    }

    #[test]
    fn deletions_keep_colliding_hashes_reachable() {
        let mut g = Ghost::default();
        g.ensure_capacity(8);
        // Same home cell (equal high bits), different low bits.
        let hs: Vec<u64> = (0..6).map(|i| (7u64 << 31) | i).collect();
        for &h in &hs {
            g.record(h, Side::Recency);
        }
        assert_eq!(g.take(hs[1]), Some(Side::Recency));
        assert_eq!(g.take(hs[3]), Some(Side::Recency));
        for h in [hs[0], hs[2], hs[4], hs[5]] {
            assert_eq!(g.take(h), Some(Side::Recency), "{h}");
        }
        assert_eq!(g.len(), 0);
        assert!(g.index.iter().all(|&c| c == EMPTY));
    }

    #[test]
    fn growing_keeps_the_history_in_order() {
        let mut g = Ghost::default();
        g.ensure_capacity(2);
        g.record(1, Side::Recency);
        g.record(2, Side::Recency);
        g.record(3, Side::Recency); // cursor now at slot 1; 2 is oldest
        g.ensure_capacity(3);
        assert_eq!(g.ring.len(), 3);
        g.ensure_capacity(4);
        g.record(4, Side::Recency);
        g.record(5, Side::Recency);
        assert_eq!(g.len(), 4);
        g.record(6, Side::Recency); // overwrites the oldest, 2
        assert_eq!(g.take(2), None);
        for h in [3, 4, 5, 6] {
            assert_eq!(g.take(h), Some(Side::Recency), "{h}");
        }
    }
}
