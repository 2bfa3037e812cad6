//! The memory cost model: what an entry costs the allocator, in bytes.
//!
//! The store cannot ask the allocator what it spent without a global hook on
//! every allocation, so it keeps a deterministic estimate instead: each
//! allocation is rounded up to the size class a jemalloc/glibc-style
//! allocator would serve it from, and each entry pays a fixed overhead for its
//! place in the hash table and the slot table. Being deterministic matters:
//! the simulator and the server must evict at the same points.

use std::mem::size_of;

use crate::keyspace::Slot;

/// Bytes the allocator hands out for a request of `n` bytes: at least 16,
/// rounded up to a multiple of 16 (glibc's malloc granularity, with its
/// 8-byte header folded in).
#[inline]
pub fn alloc_size(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        (n + 8).max(16).next_multiple_of(16)
    }
}

/// Fixed bytes one key costs beyond its key and value allocations, at full
/// tables: its row in the shard's slot table and its 4-byte bucket plus
/// control byte in the index at hashbrown's 7/8 load. The store counts the
/// tables' real capacity instead (see `Shard::memory_bytes`); this figure is
/// what a policy is told an entry costs.
pub const ENTRY_OVERHEAD: usize = size_of::<Option<Slot>>() + 5 * 8 / 7;

/// What one key costs in total at full tables, given the heap bytes of its
/// value.
#[inline]
pub fn entry_cost(key_len: usize, value_heap_bytes: usize) -> usize {
    ENTRY_OVERHEAD + alloc_size(key_len) + value_heap_bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_round_up_to_size_classes() {
        assert_eq!(alloc_size(0), 0);
        assert_eq!(alloc_size(1), 16);
        assert_eq!(alloc_size(8), 16);
        assert_eq!(alloc_size(9), 32);
        assert_eq!(alloc_size(32), 48);
    }

    #[test]
    fn a_keys_row_is_72_bytes() {
        // 16 for the key's box, 56 for the entry: a 24-byte value, deadline,
        // last access, version, and the slot's own bookkeeping in the padding.
        assert_eq!(size_of::<Option<Slot>>(), 72);
    }

    #[test]
    fn entry_cost_grows_with_key_and_value() {
        let small = entry_cost(10, alloc_size(32));
        assert!(small > ENTRY_OVERHEAD);
        assert!(entry_cost(100, alloc_size(32)) > small);
    }
}
