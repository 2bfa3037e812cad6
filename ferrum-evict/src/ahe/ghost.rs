//! AHE's ghost history: the key hashes of recently evicted entries, each
//! tagged with the side whose advice evicted it.
//!
//! **Structure.** A ring buffer of the last `capacity` evicted hashes, and
//! a hash map from hash to its ring position with the side in the top bit.
//! Recording overwrites the oldest ring slot and drops it from the map (if
//! the map still points at that slot: a hash evicted twice keeps only its
//! newest record). A lookup that finds a hash removes it, so one eviction
//! is at most one regret.
//!
//! **Cost.** 8 bytes per ring slot plus the map's `(u64, u32)` pairs and
//! control bytes, about 17 bytes per remembered hash at full load; the ring
//! holds as many hashes as the cache holds entries. Every operation is one
//! hash-map probe: O(1).
//!
//! **Source.** The ghost lists B1/B2 of ARC (Megiddo and Modha, "ARC: A
//! Self-Tuning, Low Overhead Replacement Cache", FAST 2003) and the
//! per-expert histories of LeCaR (Vietri et al., HotStorage 2018), with
//! hashes in place of keys since a policy never sees keys.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

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

/// The top bit of a map value marks [`Side::Frequency`].
const FREQUENCY_BIT: u32 = 1 << 31;

/// A bounded history of evicted key hashes; see the module docs.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ghost {
    ring: Vec<u64>,
    /// Next ring slot to write.
    cursor: usize,
    map: HashMap<u64, u32, BuildHasherDefault<PassThrough>>,
}

impl Ghost {
    /// Remembers at least `capacity` hashes. Growing keeps what is
    /// remembered, and grows by at least an eighth so that a cache warming
    /// up one entry at a time pays O(1) amortised; shrinking is ignored (the
    /// history is small next to the cache).
    pub(crate) fn ensure_capacity(&mut self, capacity: usize) {
        if capacity > self.ring.len() {
            let capacity = capacity.max(self.ring.len() + self.ring.len() / 8);
            // Keep the ring's order: the slots after the cursor are the
            // oldest, so the new empty slots go there.
            let grow = capacity - self.ring.len();
            let tail = self.ring.split_off(self.cursor);
            self.ring.extend(std::iter::repeat_n(0, grow));
            for (i, &h) in tail.iter().enumerate() {
                let pos = self.ring.len() as u32;
                if let Some(v) = self.map.get_mut(&h) {
                    if *v & !FREQUENCY_BIT == (self.cursor + i) as u32 {
                        *v = (*v & FREQUENCY_BIT) | pos;
                    }
                }
                self.ring.push(h);
            }
        }
    }

    /// Records that the entry with `hash` was evicted on `side`'s advice.
    pub(crate) fn record(&mut self, hash: u64, side: Side) {
        if self.ring.is_empty() {
            return;
        }
        let slot = self.cursor;
        let old = self.ring[slot];
        if self
            .map
            .get(&old)
            .is_some_and(|&v| v & !FREQUENCY_BIT == slot as u32)
        {
            self.map.remove(&old);
        }
        self.ring[slot] = hash;
        let tag = match side {
            Side::Recency => 0,
            Side::Frequency => FREQUENCY_BIT,
        };
        self.map.insert(hash, slot as u32 | tag);
        self.cursor = (slot + 1) % self.ring.len();
    }

    /// If `hash` was evicted recently, forgets it and says on whose advice.
    pub(crate) fn take(&mut self, hash: u64) -> Option<Side> {
        let v = self.map.remove(&hash)?;
        Some(if v & FREQUENCY_BIT != 0 {
            Side::Frequency
        } else {
            Side::Recency
        })
    }

    /// How many hashes are remembered.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        // hashbrown stores each pair plus one control byte per bucket.
        self.ring.capacity() * std::mem::size_of::<u64>()
            + self.map.capacity() * (std::mem::size_of::<(u64, u32)>() + 1)
    }
}

/// The keys are already well-mixed hashes: use them as they are.
#[derive(Default)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
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
