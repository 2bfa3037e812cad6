//! The frequency sketch behind AHE's admission filter: a doorkeeper Bloom
//! filter in front of a count-min sketch of 4-bit counters with periodic
//! halving, as in TinyLFU.
//!
//! **Structure.** The *doorkeeper* is a Bloom filter (four bits per key)
//! that absorbs each key's first access in a sample period, so one-hit
//! wonders and scans never reach the counters. Later accesses go to the
//! *sketch*: a table of `u64` words, each holding sixteen 4-bit counters. A
//! key's hash picks one counter in each of four words of one block; its
//! estimate is the minimum of the four, which over-counts only when all
//! four collide. Increments are conservative: only the counters at the
//! minimum rise (Estan and Varghese, SIGCOMM 2002), which keeps a small
//! table nearly as accurate as one twice its size. After `5 × cache size`
//! accesses every counter is halved and the doorkeeper cleared, so the
//! sketch forgets old popularity at a pace set by traffic, not by the
//! clock.
//!
//! [`FrequencySketch::frequency`] reports the counters only: a key needs a
//! *repeated* access in the recent past to count at all. The admission rule
//! built on it (a newcomer must out-count the victim) therefore never swaps
//! a resident for a key seen only once, which is what keeps a cyclic scan
//! from flushing the cache.
//!
//! **Sizing.** The sketch is sized for the entries the cache holds now,
//! with no rounding to a power of two: blocks are picked by multiply-shift.
//! [`FrequencySketch::resize`] grows *and shrinks* it, keeping the counts
//! (each new block takes the per-counter maximum of the old blocks covering
//! the same hash range), so the cache's size can follow its entries without
//! forgetting what it learned.
//!
//! **Cost.** Per entry sized for: eight 4-bit counters (4 bytes) and 32
//! doorkeeper bits (4 bytes), 8 bytes, what Caffeine's sketch costs
//! (sixteen counters, no doorkeeper). Split this way, not as sixteen
//! counters: without a doorkeeper a key seen once counts, and a cyclic
//! scan flushes the cache (ferrum-bench `scan`: 0.00% instead of 4.20%).
//! A 32-bit-per-entry doorkeeper is a fair filter only for a few distinct
//! keys per entry, hence the sample period of five cache sizes (TinyLFU's
//! is ten, under which `scan` again fell to 0.00%). Where a period brings
//! more distinct keys than that, the doorkeeper is also cleared early, once
//! `DOORKEEPER_MAX_FILL` of its bits are set (see there). See
//! `ferrum-bench/examples/equal_memory_sim.rs` for the comparison at equal
//! memory that chose this size over the earlier 19 bytes.
//! `increment` and `frequency` touch at most seven words, the four counters
//! within one 64-byte block: O(1). The halving pass is O(size) once per
//! `5 × cache size` accesses, about 0.1 word operations per access
//! amortised. A resize is O(old + new size).
//!
//! **Source.** Einziger, Friedman and Manes, "TinyLFU: A Highly Efficient
//! Cache Admission Policy", ACM ToS 2017 (<https://arxiv.org/abs/1512.00727>);
//! the word layout follows Caffeine's `FrequencySketch`
//! (<https://github.com/ben-manes/caffeine>).

/// How many increments, as a multiple of the cache's size, before a
/// halving: 5, half TinyLFU's usual 10, so that a doorkeeper of 32 bits
/// per entry sees about five distinct keys per entry between clearings
/// (see the module docs).
const SAMPLE_FACTOR: u64 = 5;
/// The doorkeeper is cleared early, without halving the counters, once
/// this share of its bits is set (in tenths: 30%) and at least half a
/// sample period has gone by since the last halving. With four probes
/// its false positives then stay under 0.3⁴ ≈ 0.8% (with three, as this
/// threshold was chosen, 2.7%), where a period of all distinct keys (a
/// cyclic scan: five cache sizes of them for 32 bits an entry) fills it
/// to 37% and let 5.3% of first accesses count as second ones with three
/// probes. Each of those can displace a resident whose counts were halved
/// to zero, and on a scan the resident set that scores churns: at 5,000
/// entries over 16 shards `scan` went from 3.7 to 4.1 (the 16-byte sketch
/// before issue 11 had 4.1), the other WORKLOADS.md cells within 0.1 on
/// average over six seeds, and at equal memory `scan` +0.3, the rest
/// within 0.1. A threshold of 35% did nothing for `scan`, 25% cost `ttl`
/// 0.3 to 0.6 at equal memory (both with three probes). Without the half
/// period, two clearings in the warm-up (when the sketch is sized for the
/// few entries tracked yet) were enough to send `loop` at 5,000 entries
/// in one shard from 71 to 28: the controller took the wrong turn early
/// and never came back.
const DOORKEEPER_MAX_FILL: u64 = 3;
/// Bits a key sets in the doorkeeper: 4. At the same fill, four probes
/// let through far fewer first accesses as second ones than three (at the
/// 30% clearing point 0.8% against 2.7%, about 0.2% against 0.75% over a
/// filling). On `scan` every such false positive out-counts a resident
/// whose counts were halved to zero, and the frozen set that scores
/// churns: at 5,000 equal entries in one shard main kept about 4,530 of
/// its keys from pass to pass against 4,980 before issue 11's 8-byte
/// sketch. With four probes `scan` went from 4.00% to 4.38% there (seeds
/// 1 to 8; 16-byte sketch before issue 11: 4.40), `loop` from 63.6% to
/// 66.9%; over 16 shards every WORKLOADS.md cell stayed within 0.1. At
/// equal memory `scan` gained 0.2 (17,000 entries) and 0.3 (scale 10),
/// `zipf` lost 0.1 at 17,000 entries and nothing at scale 10, the rest
/// within 0.1. Fewer false positives also fill the doorkeeper a quarter
/// faster; clearing it at 38% instead, as often as three probes did at
/// 30%, cost `zipf` the same 0.1.
const DOORKEEPER_PROBES: u64 = 4;
/// Every counter is saturated at 15.
const MAX_COUNT: u64 = 15;
/// Clears the top bit of every nibble after a shift right by one.
const HALVE_MASK: u64 = 0x7777_7777_7777_7777;
/// 4-bit counters per entry sized for (4 bytes).
pub(crate) const COUNTERS_PER_ENTRY: usize = 8;
/// Doorkeeper bits per entry sized for (4 bytes).
pub(crate) const DOORKEEPER_BITS_PER_ENTRY: usize = 32;
/// Bytes per entry sized for: counters and doorkeeper.
#[cfg(test)]
pub(crate) const BYTES_PER_ENTRY: usize = COUNTERS_PER_ENTRY / 2 + DOORKEEPER_BITS_PER_ENTRY / 8;
/// Words per block: one 64-byte cache line.
const BLOCK: usize = 8;

/// A count-min sketch of 4-bit counters that ages by halving.
#[derive(Clone, Debug, Default)]
pub(crate) struct FrequencySketch {
    /// `blocks * BLOCK` words of sixteen counters.
    table: Vec<u64>,
    /// The doorkeeper's bits.
    doorkeeper: Vec<u64>,
    /// How many bits of `doorkeeper` are used.
    doorkeeper_bits: u64,
    /// How many of them are set.
    doorkeeper_set: u64,
    /// Entries the sketch is sized for.
    entries: usize,
    /// Increments since the last halving.
    additions: u64,
    /// Halve after this many increments: `SAMPLE_FACTOR` times the cache's
    /// size at the last resize.
    sample_size: u64,
}

impl FrequencySketch {
    /// Entries the sketch is sized for.
    #[cfg(test)]
    pub(crate) fn entries(&self) -> usize {
        self.entries
    }

    /// Sizes the sketch for a cache of `entries` entries, larger or
    /// smaller, keeping what it counted: each new block takes, counter by
    /// counter, the largest of the old blocks covering the same range of
    /// hashes (so an estimate can rise by a collision, never fall), and each
    /// doorkeeper bit the old bit at the same position of the range. O(old +
    /// new size); callers resize only when the cache's size moved by an
    /// eighth.
    pub(crate) fn resize(&mut self, entries: usize, cache_size: usize) {
        self.sample_size = SAMPLE_FACTOR * cache_size.max(16) as u64;
        let entries = entries.max(16);
        if entries == self.entries {
            return;
        }
        let blocks = (entries * COUNTERS_PER_ENTRY).div_ceil(16 * BLOCK);
        let old_blocks = self.table.len() / BLOCK;
        let mut table = vec![0u64; blocks * BLOCK];
        if old_blocks > 0 {
            for (b, new) in table.chunks_exact_mut(BLOCK).enumerate() {
                // Old blocks whose hash range meets new block b's.
                let first = b * old_blocks / blocks;
                let last = ((b + 1) * old_blocks).div_ceil(blocks).min(old_blocks);
                for old in self.table[first * BLOCK..last * BLOCK].chunks_exact(BLOCK) {
                    for (n, &o) in new.iter_mut().zip(old) {
                        *n = nibble_max(*n, o);
                    }
                }
            }
        }
        let bits = (entries * DOORKEEPER_BITS_PER_ENTRY) as u64;
        let mut doorkeeper = vec![0u64; bits.div_ceil(64) as usize];
        if self.doorkeeper_bits > 0 {
            for bit in 0..bits {
                let old = bit * self.doorkeeper_bits / bits;
                if self.doorkeeper[(old / 64) as usize] & (1 << (old % 64)) != 0 {
                    doorkeeper[(bit / 64) as usize] |= 1 << (bit % 64);
                }
            }
        }
        self.table = table;
        self.doorkeeper_set = ones(&doorkeeper);
        self.doorkeeper = doorkeeper;
        self.doorkeeper_bits = bits;
        self.entries = entries;
    }

    /// The four counters (word, nibble shift) of `hash`, all in one
    /// 64-byte block of eight words so that a lookup costs one cache miss,
    /// as in Caffeine's block-based sketch: one re-mix picks the block (by
    /// multiply-shift, so the block count need not be a power of two), a
    /// second picks a word of the block and a nibble of the word for each
    /// of the four counters.
    #[inline]
    fn slots(&self, hash: u64) -> [(usize, u32); 4] {
        let h1 = mix(hash);
        let h2 = mix(h1 ^ 0x9E37_79B9_7F4A_7C15);
        let blocks = (self.table.len() / BLOCK) as u64;
        let block = ((u128::from(h1) * u128::from(blocks)) >> 64) as usize * BLOCK;
        std::array::from_fn(|k| {
            let bits = h2 >> (16 * k);
            (block | (bits as usize & 7), ((bits >> 3) as u32 & 15) << 2)
        })
    }

    /// The estimated count of `hash`, `0..=15`.
    #[inline]
    pub(crate) fn frequency(&self, fp: u32) -> u8 {
        let hash = u64::from(fp);
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
    pub(crate) fn increment(&mut self, fp: u32) {
        let hash = u64::from(fp);
        if self.table.is_empty() {
            return;
        }
        if self.admit_to_doorkeeper(hash) {
            // Conservative update: only the counters at the key's minimum
            // rise, so collisions inflate estimates less.
            let slots = self.slots(hash);
            let min = slots
                .iter()
                .map(|&(word, shift)| (self.table[word] >> shift) & MAX_COUNT)
                .min()
                .unwrap_or(MAX_COUNT);
            if min < MAX_COUNT {
                for (word, shift) in slots {
                    if (self.table[word] >> shift) & MAX_COUNT == min {
                        self.table[word] += 1 << shift;
                    }
                }
            }
        }
        self.additions += 1;
        if self.additions >= self.sample_size {
            self.reset();
        } else if self.doorkeeper_set * 10 >= DOORKEEPER_MAX_FILL * self.doorkeeper_bits
            && self.additions * 2 >= self.sample_size
        {
            self.clear_doorkeeper();
        }
    }

    /// Sets `hash`'s doorkeeper bits ([`DOORKEEPER_PROBES`]); returns
    /// whether all were set already (the key was seen in this period, or
    /// a false positive).
    #[inline]
    fn admit_to_doorkeeper(&mut self, hash: u64) -> bool {
        let bits = self.doorkeeper_bits;
        let mut seen = true;
        for bit in doorkeeper_probes(hash, bits) {
            let (word, mask) = ((bit / 64) as usize, 1u64 << (bit % 64));
            if self.doorkeeper[word] & mask == 0 {
                seen = false;
                self.doorkeeper[word] |= mask;
                self.doorkeeper_set += 1;
            }
        }
        seen
    }

    /// Halves every counter and clears the doorkeeper: old popularity fades
    /// geometrically.
    fn reset(&mut self) {
        for word in &mut self.table {
            *word = (*word >> 1) & HALVE_MASK;
        }
        self.clear_doorkeeper();
        self.additions = 0;
    }

    /// Clears the doorkeeper alone; the counters keep their counts.
    fn clear_doorkeeper(&mut self) {
        self.doorkeeper.fill(0);
        self.doorkeeper_set = 0;
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        (self.table.capacity() + self.doorkeeper.capacity()) * std::mem::size_of::<u64>()
    }
}

/// The larger of each pair of 4-bit counters.
fn nibble_max(a: u64, b: u64) -> u64 {
    (0..16).fold(0, |out, k| {
        let shift = 4 * k;
        out | (((a >> shift) & MAX_COUNT).max((b >> shift) & MAX_COUNT) << shift)
    })
}

/// SplitMix64's finaliser: spreads any bit pattern over all 64 bits.
#[inline]
pub(crate) fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The doorkeeper bits of `hash` in an array of `bits` bits: double
/// hashing (Kirsch and Mitzenmacher, "Less Hashing, Same Performance",
/// 2006), each probe scaled onto the array by multiply-shift, so every bit
/// of any array is reachable. (Slices of 21 bits of one hash, as before,
/// reached only 2^21 positions: above 65,536 entries per sketch the
/// doorkeeper filled, and let through, as if it were that small.)
fn doorkeeper_probes(hash: u64, bits: u64) -> impl Iterator<Item = u64> {
    let h1 = mix(hash ^ 0xD00D_CAFE_F00D_BEEF);
    let h2 = mix(h1) | 1;
    (0..DOORKEEPER_PROBES).map(move |k| {
        let probe = h1.wrapping_add(k.wrapping_mul(h2));
        ((u128::from(probe) * u128::from(bits)) >> 64) as u64
    })
}

/// Bits set in `words`.
fn ones(words: &[u64]) -> u64 {
    words.iter().map(|w| u64::from(w.count_ones())).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_access_goes_to_the_doorkeeper_then_counts_saturate() {
        let mut s = FrequencySketch::default();
        assert_eq!(s.frequency(1), 0);
        s.increment(1); // no table yet: ignored
        s.resize(100, 100);
        // 800 counters in blocks of 128.
        assert_eq!(s.table.len(), 7 * BLOCK);
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
    fn resets_after_five_times_its_size() {
        let mut s = FrequencySketch::default();
        s.resize(16, 16);
        for _ in 0..5 {
            s.increment(42);
        }
        assert_eq!(s.frequency(42), 4);
        for h in 0..74u64 {
            s.increment(mix(h + 1_000) as u32);
        }
        assert_eq!(s.additions, 79);
        s.increment(42); // the 80th access resets
        assert_eq!(s.additions, 0);
        assert!(s.frequency(42) <= 3, "{}", s.frequency(42));
        assert!(s.doorkeeper.iter().all(|&w| w == 0));
    }

    /// Feeds one key never seen before (ids from `next`).
    fn distinct(s: &mut FrequencySketch, next: &mut u64) {
        *next += 1;
        s.increment(mix(*next + 1_000_000) as u32);
    }

    #[test]
    fn a_doorkeeper_filled_by_distinct_keys_is_cleared_early() {
        // 1,000 entries: 32,000 doorkeeper bits, a period of 5,000 accesses.
        let mut s = FrequencySketch::default();
        s.resize(1_000, 1_000);
        assert_eq!((s.doorkeeper_bits, s.sample_size), (32_000, 5_000));
        s.increment(7);
        s.increment(7);
        assert_eq!(s.frequency(7), 1);
        // Distinct keys, as a scan brings them: 30% of the bits are set
        // after about 2,850 (4 bits each, some shared), and then the
        // doorkeeper alone is cleared.
        let mut next = 0;
        let mut peak = 0;
        // At most one access short of the period's end, where the halving
        // would clear it anyway.
        while s.additions + 1 < s.sample_size {
            peak = peak.max(s.doorkeeper_set);
            distinct(&mut s, &mut next);
            assert_eq!(s.doorkeeper_set, ones(&s.doorkeeper));
            if s.doorkeeper_set == 0 {
                break;
            }
        }
        assert_eq!(s.doorkeeper_set, 0);
        assert!((2_600..3_100).contains(&s.additions), "{}", s.additions);
        assert!(
            peak * 10 < 3 * 32_000 && (peak + 4) * 10 >= 3 * 32_000,
            "{peak}"
        );
        // The counters were not halved, and the period goes on.
        assert_eq!(s.frequency(7), 1);
        // Key 7's next access is a first one again for the doorkeeper.
        s.increment(7);
        assert_eq!(s.frequency(7), 1);
        s.increment(7);
        assert_eq!(s.frequency(7), 2);
    }

    #[test]
    fn a_large_doorkeeper_uses_all_its_bits() {
        // 200,000 entries: 6.4 million bits. After 350,000 distinct keys
        // a fifth of them are set, and a key never seen passes for seen
        // with four probes about 0.2% of the time. Probes that reached
        // only 2^21 positions filled those to half: 7%.
        let mut s = FrequencySketch::default();
        s.resize(200_000, 200_000);
        for key in 0..350_000u64 {
            s.admit_to_doorkeeper(key);
        }
        let fill = s.doorkeeper_set as f64 / s.doorkeeper_bits as f64;
        assert!((0.19..0.21).contains(&fill), "{fill}");
        let passed = (1_000_000..1_020_000u64)
            .filter(|&key| s.admit_to_doorkeeper(key))
            .count();
        assert!(passed < 100, "{passed} of 20,000 unseen keys passed");
    }

    #[test]
    fn a_full_doorkeeper_is_kept_for_half_a_period() {
        // Sized for a quarter of a 4,000-entry cache (the window holds most
        // of it): 32,000 bits, but a period of 20,000 accesses. 30% of the
        // bits are set long before half of it; the doorkeeper is kept until
        // then.
        let mut s = FrequencySketch::default();
        s.resize(1_000, 4_000);
        let mut next = 0;
        while s.additions + 1 < 10_000 {
            distinct(&mut s, &mut next);
        }
        assert!(s.doorkeeper_set * 10 >= 3 * 32_000, "{}", s.doorkeeper_set);
        distinct(&mut s, &mut next);
        assert_eq!((s.additions, s.doorkeeper_set), (10_000, 0));
    }

    #[test]
    fn a_doorkeeper_of_few_keys_is_kept_for_the_whole_period() {
        // Zipf-like traffic over a few hundred keys never fills 30% of the
        // bits, so only the halving clears the doorkeeper.
        let mut s = FrequencySketch::default();
        s.resize(1_000, 1_000);
        for i in 0..4_999u64 {
            s.increment(mix(i % 300) as u32);
        }
        assert!(s.doorkeeper_set > 0);
        assert_eq!(s.additions, 4_999);
        s.increment(mix(0) as u32);
        assert_eq!((s.additions, s.doorkeeper_set), (0, 0));
    }

    #[test]
    fn resizing_keeps_the_counts_both_ways() {
        let mut s = FrequencySketch::default();
        s.resize(1_000, 1_000);
        let keys: Vec<u32> = (0..200).map(|k| mix(k + 7) as u32).collect();
        for (i, &k) in keys.iter().enumerate() {
            for _ in 0..=(i % 6) {
                s.increment(k);
            }
        }
        let before: Vec<u8> = keys.iter().map(|&k| s.frequency(k)).collect();
        for size in [1_130, 5_000, 700, 40, 3_000] {
            s.resize(size, size);
            assert_eq!(s.entries(), size);
            for (i, &k) in keys.iter().enumerate() {
                // Never lower; higher only through collisions, which a
                // 40-entry sketch has plenty of.
                assert!(s.frequency(k) >= before[i], "size {size}, key {i}");
            }
        }
        // Sized to the entries: 4 bytes of counters (rounded up to a
        // 64-byte block of 16 entries) and 4 of doorkeeper each.
        assert_eq!(BYTES_PER_ENTRY, 8);
        assert_eq!(s.heap_bytes(), 3_008 * 4 + 3_000 * 4);
        // Counting goes on after a resize.
        s.resize(100_000, 100_000);
        let k = mix(999_999) as u32;
        let f0 = s.frequency(k);
        s.increment(k);
        s.increment(k);
        assert!((f0 + 1..=f0 + 2).contains(&s.frequency(k)), "{f0}");
    }

    #[test]
    fn nibble_max_is_per_counter() {
        assert_eq!(nibble_max(0x0F1E, 0x1E0F), 0x1F1F);
        assert_eq!(nibble_max(u64::MAX, 0), u64::MAX);
    }
}
