//! AHE's ghost history: 32-bit fingerprints of recently evicted entries'
//! keys, each tagged with the side whose advice evicted it.
//!
//! **Structure.** A table of buckets of [`WAYS`] `u32` cells (one 64-byte
//! line each). A cell holds a 31-bit fingerprint and, in its top bit, the
//! side; 0 is an empty cell. A fingerprint lives in the bucket its
//! re-mixed value picks (multiply-shift, so the bucket count need not be a
//! power of two), and each bucket is a small FIFO, newest first: recording
//! shifts the bucket down one cell, dropping its oldest record, and writes
//! the new one in front. So the table remembers about the last `capacity`
//! evictions with no index and no ring: per bucket the most recent, which
//! over the table is the last `capacity` evictions give or take the
//! spread of evictions over buckets. A fingerprint recorded again keeps only
//! its newest record. A lookup that finds a fingerprint removes it, so one
//! eviction is at most one regret.
//!
//! **Fingerprints.** Two keys whose 32-bit fingerprints agree (the policy
//! never sees keys) are one key here: a miss on one finds the other's
//! record. With a million records that is a false regret once per about
//! 2^31 / 16 = 134 million misses, far below the controller's noise.
//!
//! **A sample, not every eviction.** Only evictions whose fingerprint
//! falls in a fixed one-in-`sample` subset of the hash space are
//! remembered, and only misses in that subset are looked up (spatial
//! sampling, as SHARDS samples keys for miss-ratio curves: Waldspurger et
//! al., FAST 2015). The subset is chosen by hash, independently of how a
//! key is used, so regrets per remembered eviction estimate regrets per
//! eviction without bias; the controller computes its rates on the sample
//! ([`super::controller::Signal::Remembered`]). At equal memory the
//! bytes saved hold more keys. On the equal-memory simulator (17,000
//! entries, 16 shards) a half sample and a quarter both beat the full
//! history by 0.1-0.7 points on every WORKLOADS.md pattern; at 5,000
//! equal entries over 16 shards (about 300 entries a shard) a quarter
//! left too few regrets per period and cost `mixed` 0.5 points, a half
//! stays within 0.2 of the full history everywhere, and an eighth was
//! noisy even at 17,000.
//!
//! **Sparser for a large cache.** What the sample must keep is enough
//! remembered evictions per controller period (three cache-sizes of
//! requests) for the regret rates to rise above their noise. A larger
//! cache evicts more per period, so once the controller steers
//! `AheConfig::ghost_large_from` entries (2,048) one eviction in four is
//! remembered, 1 byte per entry. The controller counts, so a store's
//! shards, sharing one controller, take the sample of the store's size.
//! On the equal-memory simulator at WORKLOADS.md scale 10 (16 shards of
//! about 4,700 entries) every cell gained: `shift` 72.23 → 72.30 (seed
//! 42) and 71.94 → 72.04 (seed 7), `zipf`, `mixed` and `ttl` 0.01-0.08
//! (allkeys-lru: `shift` 72.69 and 72.68); at 17,000 entries over 16
//! shards, where each shard was below the threshold before the shards
//! shared a controller, nothing changed. At
//! 5,000 equal entries in one instance (above it) every cell stays within
//! 0.2 points. Switching samples keeps the records that are in the new
//! one.
//!
//! **Cost.** 4 bytes per remembered eviction, so 2 bytes per entry of the
//! cache (1 from 2,048 entries); the table is sized to the sample of the cache's entries and
//! resized with it, keeping its records. Recording and lookup scan one
//! bucket: O(1).
//!
//! **Source.** The ghost lists B1/B2 of ARC (Megiddo and Modha, "ARC: A
//! Self-Tuning, Low Overhead Replacement Cache", FAST 2003) and the
//! per-expert histories of LeCaR (Vietri et al., HotStorage 2018), with
//! fingerprints in place of keys since a policy never sees keys; buckets
//! of fingerprints as in cuckoo filters (Fan et al., CoNEXT 2014).

use super::sketch::mix;

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

/// The default sample: one eviction in 2 is remembered (see the module
/// docs and `AheConfig::ghost_sample`).
pub(crate) const SAMPLE: u32 = 2;

/// Cells per bucket: 16 `u32`s, one cache line.
pub(crate) const WAYS: usize = 16;
/// The top bit of a cell marks [`Side::Frequency`].
const FREQUENCY_BIT: u32 = 1 << 31;
/// The fingerprint bits of a cell.
const FINGERPRINT: u32 = !FREQUENCY_BIT;

/// A bounded history of evicted keys' fingerprints; see the module docs.
#[derive(Clone, Debug)]
pub(crate) struct Ghost {
    /// `buckets * WAYS` cells, each bucket newest first, empties last.
    cells: Vec<u32>,
    /// One eviction in `sample` is remembered: those whose fingerprint is
    /// a multiple of it.
    sample: u32,
}

impl Default for Ghost {
    fn default() -> Self {
        Ghost::sampling(SAMPLE)
    }
}

impl Ghost {
    /// An empty history remembering one eviction in `sample` (at least 1).
    pub(crate) fn sampling(sample: u32) -> Ghost {
        Ghost {
            cells: Vec::new(),
            sample: sample.max(1),
        }
    }

    /// Whether evictions of the key with fingerprint `fp` are remembered.
    fn sampled(&self, fp: u32) -> bool {
        fp % self.sample == 0
    }

    /// One eviction in how many is remembered.
    #[cfg(test)]
    pub(crate) fn sample(&self) -> u32 {
        self.sample
    }

    /// How many records the table holds at most.
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.cells.len()
    }

    /// Resizes the table to remember about `evictions` evictions, one in
    /// `sample` (at least 1) of them, larger or smaller, keeping the
    /// records that are in the new sample (the newest of each old bucket
    /// first when shrinking). O(old + new size).
    pub(crate) fn resize(&mut self, evictions: usize, sample: u32) {
        let sample = sample.max(1);
        let buckets = (evictions / sample as usize).div_ceil(WAYS).max(1);
        let resample = sample != self.sample;
        if buckets * WAYS == self.cells.len() && !resample {
            return;
        }
        self.sample = sample;
        let old = std::mem::replace(&mut self.cells, vec![0; buckets * WAYS]);
        // Oldest first, so each new bucket ends newest first.
        for way in (0..WAYS).rev() {
            for bucket in old.chunks_exact(WAYS) {
                let cell = bucket[way];
                if cell != 0 && (!resample || self.sampled(cell & FINGERPRINT)) {
                    self.push(cell);
                }
            }
        }
    }

    /// Records that the entry with fingerprint `fp` was evicted on
    /// `side`'s advice, if it is in the sample; says whether it was.
    pub(crate) fn record(&mut self, fp: u32, side: Side) -> bool {
        if self.cells.is_empty() || !self.sampled(fp) {
            return false;
        }
        self.take(fp);
        let cell = match side {
            Side::Recency => tag(fp),
            Side::Frequency => tag(fp) | FREQUENCY_BIT,
        };
        self.push(cell);
        true
    }

    /// Writes `cell` in front of its bucket, dropping the bucket's oldest.
    fn push(&mut self, cell: u32) {
        let b = self.bucket(cell & FINGERPRINT);
        let bucket = &mut self.cells[b..b + WAYS];
        bucket.copy_within(0..WAYS - 1, 1);
        bucket[0] = cell;
    }

    /// If `fp` was evicted recently, forgets it and says on whose advice.
    pub(crate) fn take(&mut self, fp: u32) -> Option<Side> {
        if self.cells.is_empty() || !self.sampled(fp) {
            return None;
        }
        let t = tag(fp);
        let b = self.bucket(t);
        let bucket = &mut self.cells[b..b + WAYS];
        let way = bucket.iter().position(|&c| c & FINGERPRINT == t)?;
        let cell = bucket[way];
        bucket.copy_within(way + 1.., way);
        bucket[WAYS - 1] = 0;
        Some(if cell & FREQUENCY_BIT != 0 {
            Side::Frequency
        } else {
            Side::Recency
        })
    }

    /// The first cell of `t`'s bucket.
    fn bucket(&self, t: u32) -> usize {
        let buckets = (self.cells.len() / WAYS) as u64;
        let h = mix(u64::from(t));
        ((u128::from(h) * u128::from(buckets)) >> 64) as usize * WAYS
    }

    /// How many fingerprints are remembered.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.cells.iter().filter(|&&c| c != 0).count()
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.cells.capacity() * std::mem::size_of::<u32>()
    }
}

/// A fingerprint's cell value without the side: its low 31 bits, with 0
/// (the empty cell) taken as 1.
fn tag(fp: u32) -> u32 {
    (fp & FINGERPRINT).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distinct sampled fingerprints that all land in bucket 0.
    fn same_bucket(g: &Ghost, n: usize) -> Vec<u32> {
        (1..)
            .map(|f| f * SAMPLE)
            .filter(|&f| g.bucket(tag(f)) == 0)
            .take(n)
            .collect()
    }

    /// Room for `records` sampled records: evictions are sampled.
    fn room(records: usize) -> usize {
        records * SAMPLE as usize
    }

    #[test]
    fn only_the_sample_is_remembered() {
        let mut g = Ghost::default();
        g.resize(room(64), SAMPLE);
        let remembered: Vec<u32> = (1..=400)
            .filter(|&fp| g.record(fp, Side::Recency))
            .collect();
        assert!(remembered.iter().all(|&fp| fp % SAMPLE == 0));
        assert_eq!(remembered.len(), 400 / SAMPLE as usize);
        assert_eq!(g.take(5), None, "an unsampled key is never a regret");
        assert_eq!(g.take(400), Some(Side::Recency));
    }

    #[test]
    fn remembers_recent_evictions_and_each_once() {
        let mut g = Ghost::default();
        assert!(!g.record(SAMPLE, Side::Recency), "no capacity yet: ignored");
        assert_eq!(g.take(SAMPLE), None);
        g.resize(room(100), SAMPLE);
        assert_eq!(g.capacity(), 7 * WAYS);
        let k = 7_919 * SAMPLE;
        for fp in 1..=50 {
            g.record(
                fp * k,
                if fp % 2 == 0 {
                    Side::Frequency
                } else {
                    Side::Recency
                },
            );
        }
        assert_eq!(g.len(), 50);
        assert_eq!(g.take(2 * k), Some(Side::Frequency));
        assert_eq!(g.take(2 * k), None);
        assert_eq!(g.take(3 * k), Some(Side::Recency));
        assert_eq!(g.take(51 * k), None);
        assert_eq!(g.len(), 48);
    }

    #[test]
    fn a_full_bucket_drops_its_oldest_record() {
        let mut g = Ghost::default();
        g.resize(room(4 * WAYS), SAMPLE);
        let fps = same_bucket(&g, WAYS + 2);
        for &fp in &fps {
            g.record(fp, Side::Recency);
        }
        assert_eq!(g.take(fps[0]), None);
        assert_eq!(g.take(fps[1]), None);
        for &fp in &fps[2..] {
            assert_eq!(g.take(fp), Some(Side::Recency), "{fp}");
        }
    }

    #[test]
    fn a_key_evicted_twice_keeps_its_newest_record() {
        let mut g = Ghost::default();
        g.resize(room(WAYS), SAMPLE);
        let fps = same_bucket(&g, WAYS);
        g.record(fps[0], Side::Recency);
        for &fp in &fps[1..WAYS - 1] {
            g.record(fp, Side::Recency);
        }
        // Recorded again: moves to the front, on its new side ...
        g.record(fps[0], Side::Frequency);
        // ... so the bucket's next overflow drops fps[1], not it.
        g.record(fps[WAYS - 1], Side::Recency);
        g.record(99_999_996, Side::Recency);
        assert_eq!(g.take(fps[0]), Some(Side::Frequency));
    }

    #[test]
    fn colliding_fingerprints_are_one_key() {
        let mut g = Ghost::default();
        g.resize(room(64), SAMPLE);
        // The side bit is not part of the fingerprint: these two agree on
        // their low 31 bits, as two keys with one fingerprint would.
        let (a, b) = (0x1234_5678, 0x9234_5678);
        g.record(a, Side::Recency);
        assert_eq!(g.take(b), Some(Side::Recency));
        assert_eq!(g.take(a), None);
        // Fingerprint 0 is stored as 1 (0 marks an empty cell).
        g.record(0, Side::Frequency);
        assert_eq!(g.take(0), Some(Side::Frequency));
    }

    #[test]
    fn resizing_keeps_the_newest_records() {
        let mut g = Ghost::default();
        g.resize(room(64), SAMPLE);
        let fps: Vec<u32> = (1..=64u32)
            .map(|i| i.wrapping_mul(0x9E37_79B9) & !(SAMPLE - 1))
            .collect();
        for &fp in &fps {
            g.record(fp, Side::Recency);
        }
        let kept = g.len();
        g.resize(room(1_000), SAMPLE);
        assert_eq!((g.capacity(), g.len()), (63 * WAYS, kept));
        // Growing lost nothing: every record is found, once.
        let mut again = g.clone();
        let found = fps.iter().filter(|&&f| again.take(f).is_some()).count();
        assert_eq!((found, again.len()), (kept, 0));
        // Shrinking to one bucket keeps 16 of them, the newest of each old
        // bucket first.
        g.resize(room(16), SAMPLE);
        assert_eq!((g.capacity(), g.len()), (WAYS, WAYS));
        let found = fps.iter().filter(|&&f| g.take(f).is_some()).count();
        assert_eq!(found, WAYS);
    }

    #[test]
    fn a_sparser_sample_keeps_only_its_records() {
        let mut g = Ghost::default();
        g.resize(room(64), SAMPLE);
        let fps: Vec<u32> = (1..=32u32).map(|i| i * SAMPLE).collect();
        for &fp in &fps {
            g.record(fp, Side::Recency);
        }
        g.resize(room(64), 2 * SAMPLE);
        let kept: Vec<u32> = fps
            .iter()
            .copied()
            .filter(|fp| fp % (2 * SAMPLE) == 0)
            .collect();
        assert_eq!(g.len(), kept.len());
        assert!(!g.record(SAMPLE, Side::Recency), "out of the new sample");
        for fp in kept {
            assert_eq!(g.take(fp), Some(Side::Recency), "{fp}");
        }
    }
}
