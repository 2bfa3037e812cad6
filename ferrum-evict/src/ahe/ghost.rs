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

/// A fixed-capacity history of evicted keys' fingerprints.
#[derive(Clone, Debug, Default)]
pub(super) struct Ghost {
    cells: Vec<u16>,
    cursors: Vec<u8>,
    buckets: usize,
    ways: usize,
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
        self.buckets = buckets;
        self.ways = ways;
        self.cells = vec![0; buckets * ways];
        self.cursors = vec![0; buckets];
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

    /// Remembers the eviction of the key hashing to `hash`, forgetting its
    /// bucket's oldest record.
    pub(super) fn record(&mut self, hash: u64) {
        if self.buckets == 0 {
            return;
        }
        let (bucket, fingerprint) = self.locate(hash);
        let cursor = usize::from(self.cursors[bucket]);
        self.cells[bucket * self.ways + cursor] = fingerprint;
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
        let cursor = usize::from(self.cursors[bucket]);
        let ways = self.ways;
        let cells = &mut self.cells[bucket * ways..(bucket + 1) * ways];
        let at = first_match(cells, fingerprint)?;
        cells[at] = 0;
        Some((cursor + ways - 1 - at) % ways)
    }

    /// Heap bytes of the table.
    pub(super) fn heap_bytes(&self) -> usize {
        self.cells.capacity() * 2 + self.cursors.capacity()
    }

    /// Appends the table to `out`: the bucket count (4 bytes) and ways (1),
    /// then the cells and cursors, little-endian.
    pub(super) fn export(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.buckets as u32).to_le_bytes());
        out.push(self.ways as u8);
        for c in &self.cells {
            out.extend_from_slice(&c.to_le_bytes());
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
        let ghost = Ghost {
            cells: cells
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect(),
            cursors: cursors.to_vec(),
            buckets,
            ways,
        };
        Some((ghost, end))
    }
}

/// The index of the first cell equal to `fingerprint`. A full bucket (the
/// usual one) is first tested as a whole, every cell compared without a
/// branch, which compiles to a few vector compares: a miss, the common
/// case, costs that alone (a search cell by cell cost about 200
/// instructions).
fn first_match(cells: &[u16], fingerprint: u16) -> Option<usize> {
    if let Ok(full) = <&[u16; WAYS]>::try_from(cells) {
        if !full.iter().fold(false, |any, &c| any | (c == fingerprint)) {
            return None;
        }
    }
    cells.iter().position(|&c| c == fingerprint)
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
    fn the_bucket_test_finds_what_a_cell_search_finds() {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let values = [0, 1, 0x7fff, 0x8000, 0xffff, 0x8001, 0x00ff, 0xff00];
        for _ in 0..20_000 {
            let len = [WAYS, (next() % 33) as usize][(next() % 2) as usize];
            let cells: Vec<u16> = (0..len)
                .map(|_| values[(next() % values.len() as u64) as usize])
                .collect();
            let fp = values[1 + (next() % (values.len() as u64 - 1)) as usize];
            assert_eq!(
                first_match(&cells, fp),
                cells.iter().position(|&c| c == fp),
                "{cells:?} {fp}"
            );
        }
    }
}
