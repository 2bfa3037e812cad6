//! Ghost histories: 16-bit fingerprints of recently evicted keys.
//!
//! **Structure.** A table of buckets of up to [`WAYS`] `u16` cells (one
//! 64-byte line each) and one cursor byte per bucket. A key's hash picks its
//! bucket (multiply-shift on the low 32 bits, so the bucket count need not
//! be a power of two) and its fingerprint (bits 40..56; 0 marks an empty
//! cell). Each bucket is a ring: recording overwrites the cell under the
//! cursor, the bucket's oldest, and moves the cursor on. Since evictions
//! spread evenly over the buckets, the table holds about the last
//! `capacity` evictions, and a record's distance behind its bucket's cursor
//! (its *age rank*) says how many evictions ago it was recorded, in units of
//! the bucket count.
//!
//! **Fingerprints.** Two keys with the same bucket and fingerprint are one
//! key here. With 32 cells a bucket, a miss finds a stranger's record about
//! once in 2,000 misses (32 / 65,535): an admission into main that was not
//! earned, far below the rates the policy acts on.
//!
//! **Cost.** 2 bytes per remembered eviction plus a byte per 32. Recording
//! and lookup touch one bucket: O(1).
//!
//! **Source.** S3-FIFO's ghost FIFO (Yang et al., SOSP 2023) and ARC's B1/B2
//! (Megiddo and Modha, FAST 2003), with fingerprints in place of keys since
//! a policy never sees keys; buckets of fingerprints as in cuckoo filters
//! (Fan et al., CoNEXT 2014).

/// Cells per bucket: 32 `u16`s fill one 64-byte cache line.
const WAYS: usize = 32;
/// Cells per word of the table.
const LANES: usize = 4;

/// A fixed-capacity history of evicted keys' fingerprints.
///
/// The cells are stored four to a `u64` word (cell `i` of a bucket in bits
/// `16 * (i % 4)..` of its word `i / 4`), so a lookup tests four at once; a
/// bucket of fewer than 32 ways ends in empty lanes, which never match.
#[derive(Clone, Debug, Default)]
pub(super) struct Ghost {
    words: Vec<u64>,
    cursors: Vec<u8>,
    buckets: usize,
    ways: usize,
    /// `ways.div_ceil(LANES)`.
    words_per_bucket: usize,
}

impl Ghost {
    /// Sizes the table for about `entries` records. The table is rebuilt
    /// (forgetting its records) only when the size it should have moved by
    /// more than an eighth, so a cache whose entry count wobbles keeps its
    /// history.
    pub(super) fn fit(&mut self, entries: usize) {
        let ways = entries.clamp(1, WAYS);
        let buckets = entries.div_ceil(ways).max(1);
        let near = buckets.abs_diff(self.buckets) <= self.buckets / 8;
        if self.buckets != 0 && ways == self.ways && near {
            return;
        }
        *self = Ghost::empty(buckets, ways);
    }

    fn empty(buckets: usize, ways: usize) -> Ghost {
        let words_per_bucket = ways.div_ceil(LANES);
        Ghost {
            words: vec![0; buckets * words_per_bucket],
            cursors: vec![0; buckets],
            buckets,
            ways,
            words_per_bucket,
        }
    }

    /// Forgets every record and frees the table.
    pub(super) fn clear(&mut self) {
        *self = Ghost::default();
    }

    /// How many buckets the table has: the unit of a record's age rank.
    pub(super) fn buckets(&self) -> usize {
        self.buckets
    }

    fn locate(&self, hash: u64) -> (usize, u16) {
        let bucket = ((u64::from(hash as u32) * self.buckets as u64) >> 32) as usize;
        let fingerprint = ((hash >> 40) as u16).max(1);
        (bucket, fingerprint)
    }

    /// Cell `i` of `bucket`: its word's index and the lane's shift.
    fn cell(&self, bucket: usize, i: usize) -> (usize, u32) {
        (
            bucket * self.words_per_bucket + i / LANES,
            16 * (i % LANES) as u32,
        )
    }

    fn set(&mut self, bucket: usize, i: usize, value: u16) {
        let (w, shift) = self.cell(bucket, i);
        self.words[w] = (self.words[w] & !(0xffff << shift)) | u64::from(value) << shift;
    }

    /// Remembers the eviction of the key hashing to `hash`, forgetting its
    /// bucket's oldest record.
    pub(super) fn record(&mut self, hash: u64) {
        if self.buckets == 0 {
            return;
        }
        let (bucket, fingerprint) = self.locate(hash);
        let cursor = usize::from(self.cursors[bucket]);
        self.set(bucket, cursor, fingerprint);
        self.cursors[bucket] = ((cursor + 1) % self.ways) as u8;
    }

    /// Whether the key hashing to `hash` was remembered, as the record's age
    /// rank (0: the newest of its bucket). A record found is removed, so
    /// one eviction comes back at most once.
    pub(super) fn take(&mut self, hash: u64) -> Option<usize> {
        if self.buckets == 0 {
            return None;
        }
        let (bucket, fingerprint) = self.locate(hash);
        let first = bucket * self.words_per_bucket;
        let at = first_match(
            &self.words[first..first + self.words_per_bucket],
            fingerprint,
        )?;
        self.set(bucket, at, 0);
        let cursor = usize::from(self.cursors[bucket]);
        Some((cursor + self.ways - 1 - at) % self.ways)
    }

    /// Heap bytes of the table.
    pub(super) fn heap_bytes(&self) -> usize {
        self.words.capacity() * 8 + self.cursors.capacity()
    }

    /// Appends the table to `out`: the bucket count (4 bytes) and ways (1),
    /// then each bucket's cells (`u16`) and the cursors, little-endian.
    pub(super) fn export(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.buckets as u32).to_le_bytes());
        out.push(self.ways as u8);
        for bucket in 0..self.buckets {
            for i in 0..self.ways {
                let (w, shift) = self.cell(bucket, i);
                out.extend_from_slice(&((self.words[w] >> shift) as u16).to_le_bytes());
            }
        }
        out.extend_from_slice(&self.cursors);
    }

    /// Reads a table [`Ghost::export`] wrote at the start of `bytes`,
    /// returning it and the bytes it took; `None` for anything that is
    /// not one (wrong lengths, ways or cursors out of range).
    pub(super) fn import(bytes: &[u8]) -> Option<(Ghost, usize)> {
        let buckets = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?) as usize;
        let ways = usize::from(*bytes.get(4)?);
        if ways > WAYS || (ways == 0) != (buckets == 0) {
            return None;
        }
        let cells_len = buckets.checked_mul(ways)?;
        let end = 5 + cells_len.checked_mul(2)?.checked_add(buckets)?;
        let body = bytes.get(5..end)?;
        let (cells, cursors) = body.split_at(cells_len * 2);
        if cursors.iter().any(|&c| usize::from(c) >= ways) {
            return None;
        }
        if buckets == 0 {
            return Some((Ghost::default(), end));
        }
        let mut ghost = Ghost::empty(buckets, ways);
        for (n, c) in cells.chunks_exact(2).enumerate() {
            ghost.set(n / ways, n % ways, u16::from_le_bytes([c[0], c[1]]));
        }
        ghost.cursors.copy_from_slice(cursors);
        Some((ghost, end))
    }
}

/// The index of the first cell equal to `fingerprint` (not 0) in a
/// bucket's words: each word's four cells are tested at once (a bucket is
/// 8 words, where a search cell by cell cost about 200 instructions a
/// miss).
fn first_match(words: &[u64], fingerprint: u16) -> Option<usize> {
    const ONES: u64 = 0x0001_0001_0001_0001;
    const LOW15: u64 = 0x7fff_7fff_7fff_7fff;
    const HIGH: u64 = 0x8000_8000_8000_8000;
    let pattern = u64::from(fingerprint) * ONES;
    // A lane is zero where the cell matches; its high bit survives in
    // `zero` exactly then (no carry crosses lanes: each is 15 bits).
    let zero = |word: u64| {
        let v = word ^ pattern;
        !(((v & LOW15) + LOW15) | v) & HIGH
    };
    let first = |w: usize, z: u64| LANES * w + z.trailing_zeros() as usize / 16;
    if let Ok(full) = <&[u64; WAYS / LANES]>::try_from(words) {
        // A full bucket, the usual one: every word tested without a branch
        // (a miss, the common case, tests them all anyway), which compiles
        // to a few vector operations.
        let zeros = full.map(zero);
        if zeros.iter().fold(0, |a, z| a | z) == 0 {
            return None;
        }
        return zeros
            .iter()
            .position(|&z| z != 0)
            .map(|w| first(w, zeros[w]));
    }
    words
        .iter()
        .enumerate()
        .find_map(|(w, &word)| Some(first(w, Some(zero(word)).filter(|&z| z != 0)?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_the_last_capacity_records_and_ranks_them_by_age() {
        let mut ghost = Ghost::default();
        ghost.fit(64);
        assert_eq!((ghost.buckets(), ghost.heap_bytes()), (2, 2 * 64 + 2));
        // Hashes whose low half picks bucket 0 and whose fingerprints differ.
        let hash = |i: u64| (i + 1) << 40;
        for i in 0..40 {
            ghost.record(hash(i));
        }
        // The bucket holds the last 32; the newest has rank 0.
        assert_eq!(ghost.take(hash(39)), Some(0));
        assert_eq!(ghost.take(hash(8)), Some(31));
        assert_eq!(ghost.take(hash(7)), None, "overwritten");
        assert_eq!(ghost.take(hash(39)), None, "taken once");
    }

    #[test]
    fn keeps_its_records_while_the_size_moves_by_an_eighth() {
        let mut ghost = Ghost::default();
        ghost.fit(3_200);
        ghost.record(42 << 40);
        ghost.fit(3_300);
        assert_eq!(ghost.take(42 << 40), Some(0));
        ghost.record(42 << 40);
        ghost.fit(6_400);
        assert_eq!(ghost.take(42 << 40), None, "rebuilt");
        ghost.clear();
        assert_eq!(ghost.heap_bytes(), 0);
    }

    #[test]
    fn an_exported_table_imports_as_it_was_and_damage_is_refused() {
        let mut ghost = Ghost::default();
        ghost.fit(100);
        // Distinct fingerprints (bits 40..56), spread over the buckets.
        let hash = |i: u64| (i + 1) << 40 | (i * 2_654_435_761) & 0xffff_ffff;
        for i in 0..70 {
            ghost.record(hash(i));
        }
        let mut bytes = Vec::new();
        ghost.export(&mut bytes);
        let (mut back, used) = Ghost::import(&bytes).expect("imports");
        assert_eq!(used, bytes.len());
        let mut found = 0;
        for i in (0..70).rev() {
            let rank = ghost.take(hash(i));
            assert_eq!(back.take(hash(i)), rank, "{i}");
            found += usize::from(rank.is_some());
        }
        assert!(found > 0);
        for cut in 0..bytes.len() {
            assert!(Ghost::import(&bytes[..cut]).is_none(), "cut at {cut}");
        }
        let mut bad = bytes.clone();
        *bad.last_mut().unwrap() = 200;
        assert!(Ghost::import(&bad).is_none(), "cursor beyond the ways");
    }

    #[test]
    fn a_small_table_is_one_short_bucket() {
        let mut ghost = Ghost::default();
        ghost.fit(3);
        for i in 1..=4 {
            ghost.record(i << 40);
        }
        assert_eq!(ghost.take(1 << 40), None);
        assert_eq!(ghost.take(2 << 40), Some(2));
    }

    #[test]
    fn the_word_search_finds_what_a_cell_search_finds() {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        // Few distinct values, so buckets hold repeats and every lane
        // pattern (high bits, 0x7fff, 0xffff, empty cells) comes up.
        let values = [0, 1, 0x7fff, 0x8000, 0xffff, 0x8001, 0x00ff, 0xff00];
        for _ in 0..20_000 {
            let len = (next() % 33) as usize;
            let cells: Vec<u16> = (0..len)
                .map(|_| values[(next() % values.len() as u64) as usize])
                .collect();
            let words: Vec<u64> = cells
                .chunks(LANES)
                .map(|c| {
                    c.iter()
                        .enumerate()
                        .fold(0, |w, (i, &v)| w | u64::from(v) << (16 * i))
                })
                .collect();
            let fp = values[1 + (next() % (values.len() as u64 - 1)) as usize];
            assert_eq!(
                first_match(&words, fp),
                cells.iter().position(|&c| c == fp),
                "{cells:?} {fp}"
            );
        }
    }
}
