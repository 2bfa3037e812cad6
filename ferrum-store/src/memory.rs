//! The memory cost model: what an entry costs the allocator, in bytes.
//!
//! The store cannot ask the allocator what it spent without a global hook on
//! every allocation, so it keeps a deterministic estimate instead: each
//! allocation is rounded up to the size class jemalloc (the server's
//! allocator) serves it from, and each key pays a fixed overhead for its
//! rows in the slot table and the index. Being deterministic matters: the
//! simulator and the server must evict at the same points.
//!
//! This module is a leaf: it knows sizes, not the store's types. Every key's
//! cost goes through [`entry_cost`].

/// Bytes the allocator hands out for a request of `n` bytes: jemalloc's
/// size classes, which have no per-allocation header. Up to 128 bytes the
/// classes are 8, 16, then every multiple of 16; above, each doubling is
/// split into four equal steps (160, 192, 224, 256, 320, ...), for small and
/// large allocations alike.
#[inline]
pub fn alloc_size(n: usize) -> usize {
    match n {
        0 => 0,
        1..=8 => 8,
        9..=128 => n.next_multiple_of(16),
        _ => {
            // The step is a quarter of the power of two below `n`.
            let lg = usize::BITS - 1 - (n - 1).leading_zeros();
            n.next_multiple_of(1 << (lg - 2))
        }
    }
}

/// Bytes of a key's row in its shard's slot table: one thin pointer to the
/// key's block.
pub const SLOT_ROW_BYTES: usize = 8;

/// Fixed bytes one key costs beyond its block: its slot row and its share of
/// the index at hashbrown's full load (7/8: a 4-byte slot id and a control
/// byte per bucket). The store counts its tables by capacity; this is the
/// figure a policy is told, which must not change with table growth.
pub const ENTRY_OVERHEAD: usize = SLOT_ROW_BYTES + 5 * 8 / 7;

/// What one key costs in total, given the heap bytes of its block (and of
/// the collection it owns, if any). This is the cost a policy is told.
#[inline]
pub fn entry_cost(block_heap_bytes: usize) -> usize {
    ENTRY_OVERHEAD + block_heap_bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_round_up_to_jemalloc_size_classes() {
        let cases = [
            (0, 0),
            (1, 8),
            (8, 8),
            (9, 16),
            (17, 32),
            (33, 48),
            (58, 64),
            (65, 80),
            (128, 128),
            (129, 160),
            (161, 192),
            (257, 320),
            (1_000, 1_024),
            (1_025, 1_280),
            (16 * 1_024 + 1, 20 * 1_024),
        ];
        for (n, class) in cases {
            assert_eq!(alloc_size(n), class, "alloc_size({n})");
        }
    }

    #[test]
    fn size_classes_never_shrink_and_always_fit() {
        let mut prev = 0;
        for n in 0..70_000 {
            let c = alloc_size(n);
            assert!(c >= n && c >= prev, "alloc_size({n}) = {c}");
            // At most a quarter of waste above the smallest classes.
            assert!(n < 128 || c - n < n / 4 + 1, "alloc_size({n}) = {c}");
            prev = c;
        }
    }

    #[test]
    fn entry_cost_adds_the_rows() {
        assert_eq!(ENTRY_OVERHEAD, 13);
        assert_eq!(entry_cost(64), 77);
    }
}
