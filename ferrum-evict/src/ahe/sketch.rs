//! The frequency sketch behind AHE's admission filter: a doorkeeper Bloom
//! filter in front of a count-min sketch of 4-bit counters with periodic
//! halving, as in TinyLFU.
//!
//! **Structure.** The *doorkeeper* is a Bloom filter (three bits per key)
//! that absorbs each key's first access in a sample period, so one-hit
//! wonders and scans never reach the counters. Later accesses go to the
//! *sketch*: a table of `u64` words, each holding sixteen 4-bit counters. A
//! key's hash picks one counter in each of four words (four re-mixes of the
//! hash); its estimate is the minimum of the four, which over-counts only
//! when all four collide. After `10 × width` accesses every counter is
//! halved and the doorkeeper cleared, so the sketch forgets old popularity
//! at a pace set by traffic, not by the clock.
//!
//! [`FrequencySketch::frequency`] reports the counters only: a key needs a
//! *repeated* access in the recent past to count at all. The admission rule
//! built on it (a newcomer must out-count the victim) therefore never swaps
//! a resident for a key seen only once, which is what keeps a cyclic scan
//! from flushing the cache.
//!
//! **Cost.** Per counted entry of the cache's size, rounded up to a power of
//! two: one word of counters and one word (64 bits) of doorkeeper, 16 bytes.
//! `increment` and `frequency` touch at most seven words, the four
//! counters within one 64-byte block: O(1). The halving
//! pass is O(width) once per `10 × width` accesses, so 0.2 word operations
//! per access amortised.
//!
//! **Source.** Einziger, Friedman and Manes, "TinyLFU: A Highly Efficient
//! Cache Admission Policy", ACM ToS 2017 (<https://arxiv.org/abs/1512.00727>);
//! the word layout follows Caffeine's `FrequencySketch`
//! (<https://github.com/ben-manes/caffeine>).

/// How many increments, as a multiple of the width, before a halving.
const SAMPLE_FACTOR: u64 = 10;
/// Every counter is saturated at 15.
const MAX_COUNT: u64 = 15;
/// Clears the top bit of every nibble after a shift right by one.
const HALVE_MASK: u64 = 0x7777_7777_7777_7777;

/// A count-min sketch of 4-bit counters that ages by halving.
#[derive(Clone, Debug, Default)]
pub(crate) struct FrequencySketch {
    table: Vec<u64>,
    /// The doorkeeper's bits, as many words as `table`.
    doorkeeper: Vec<u64>,
    /// `table.len() - 1`; the table length is a power of two.
    mask: usize,
    /// Increments since the last halving.
    additions: u64,
    /// Halve after this many increments.
    sample_size: u64,
}

impl FrequencySketch {
    /// Sizes the sketch for a cache of about `entries` entries. Growing
    /// forgets every count, as Caffeine's `ensureCapacity` does; shrinking
    /// never happens, so a cache that briefly held fewer entries keeps its
    /// history.
    pub(crate) fn ensure_capacity(&mut self, entries: usize) {
        let entries = entries.max(16);
        self.sample_size = self.sample_size.max(SAMPLE_FACTOR * entries as u64);
        let width = entries.next_power_of_two();
        if width <= self.table.len() {
            return;
        }
        self.table = vec![0; width];
        self.doorkeeper = vec![0; width];
        self.mask = width - 1;
        self.additions = 0;
    }

    /// The four counters (word, nibble shift) of `hash`, all in one
    /// 64-byte block of eight words so that a lookup costs one cache miss,
    /// as in Caffeine's block-based sketch: one re-mix picks the block, a
    /// second picks a word of the block and a nibble of the word for each
    /// of the four counters.
    #[inline]
    fn slots(&self, hash: u64) -> [(usize, u32); 4] {
        let h1 = mix(hash);
        let h2 = mix(h1 ^ 0x9E37_79B9_7F4A_7C15);
        let block = (h1 as usize) & self.mask & !7;
        std::array::from_fn(|k| {
            let bits = h2 >> (16 * k);
            (block | (bits as usize & 7), ((bits >> 3) as u32 & 15) << 2)
        })
    }

    /// The estimated count of `hash`, `0..=15`.
    #[inline]
    pub(crate) fn frequency(&self, hash: u64) -> u8 {
        if self.table.is_empty() {
            return 0;
        }
        self.slots(hash)
            .iter()
            .map(|&(word, shift)| ((self.table[word] >> shift) & MAX_COUNT) as u8)
            .min()
            .unwrap_or(0)
    }

    /// Counts one access to `hash`: the first in a sample period sets the
    /// doorkeeper's bits, later ones raise the counters.
    #[inline]
    pub(crate) fn increment(&mut self, hash: u64) {
        if self.table.is_empty() {
            return;
        }
        if self.admit_to_doorkeeper(hash) {
            for (word, shift) in self.slots(hash) {
                if (self.table[word] >> shift) & MAX_COUNT < MAX_COUNT {
                    self.table[word] += 1 << shift;
                }
            }
        }
        self.additions += 1;
        if self.additions >= self.sample_size {
            self.reset();
        }
    }

    /// Sets `hash`'s three doorkeeper bits; returns whether all were set
    /// already (the key was seen in this period, or a false positive).
    #[inline]
    fn admit_to_doorkeeper(&mut self, hash: u64) -> bool {
        let h = mix(hash ^ 0xD00D_CAFE_F00D_BEEF);
        let bits = (self.table.len() * 64) as u64;
        let mut seen = true;
        for k in 0..3 {
            // A 21-bit slice of the hash scaled onto the bit array.
            let bit = (((h >> (k * 21)) & 0x1F_FFFF) * bits) >> 21;
            let (word, mask) = ((bit / 64) as usize, 1u64 << (bit % 64));
            seen &= self.doorkeeper[word] & mask != 0;
            self.doorkeeper[word] |= mask;
        }
        seen
    }

    /// Halves every counter and clears the doorkeeper: old popularity fades
    /// geometrically.
    fn reset(&mut self) {
        for word in &mut self.table {
            *word = (*word >> 1) & HALVE_MASK;
        }
        self.doorkeeper.fill(0);
        self.additions = 0;
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        (self.table.capacity() + self.doorkeeper.capacity()) * std::mem::size_of::<u64>()
    }
}

/// SplitMix64's finaliser: spreads any bit pattern over all 64 bits.
#[inline]
pub(crate) fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_access_goes_to_the_doorkeeper_then_counts_saturate() {
        let mut s = FrequencySketch::default();
        assert_eq!(s.frequency(1), 0);
        s.increment(1); // no table yet: ignored
        s.ensure_capacity(100);
        assert_eq!(s.table.len(), 128);
        s.increment(7);
        assert_eq!(s.frequency(7), 0);
        s.increment(7);
        assert_eq!(s.frequency(7), 1);
        for _ in 0..20 {
            s.increment(7);
        }
        assert_eq!(s.frequency(7), 15);
        s.reset();
        assert_eq!(s.frequency(7), 7);
        // The doorkeeper forgot 7: its next access is a first one again.
        s.increment(7);
        assert_eq!(s.frequency(7), 7);
    }

    #[test]
    fn resets_after_ten_times_its_width() {
        let mut s = FrequencySketch::default();
        s.ensure_capacity(16);
        for _ in 0..5 {
            s.increment(42);
        }
        assert_eq!(s.frequency(42), 4);
        for h in 0..154u64 {
            s.increment(mix(h + 1_000));
        }
        assert_eq!(s.additions, 159);
        s.increment(42); // the 160th access resets
        assert_eq!(s.additions, 0);
        assert!(s.frequency(42) <= 3, "{}", s.frequency(42));
        assert!(s.doorkeeper.iter().all(|&w| w == 0));
    }

    #[test]
    fn growing_forgets_and_shrinking_is_ignored() {
        let mut s = FrequencySketch::default();
        s.ensure_capacity(16);
        s.increment(3);
        s.increment(3);
        s.ensure_capacity(8);
        assert_eq!(s.frequency(3), 1);
        s.ensure_capacity(1_000);
        assert_eq!((s.table.len(), s.frequency(3)), (1024, 0));
        assert_eq!(s.heap_bytes(), 16 * 1024);
    }
}
