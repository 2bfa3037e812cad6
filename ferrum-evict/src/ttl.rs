//! Nearest-deadline-first eviction (`volatile-ttl`).
//!
//! **Structure.** An indexed binary min-heap (`heap.rs`) of tracked ids keyed by
//! `(deadline, sequence)`, where the deadline comes from
//! [`on_expiry_change`](EvictionPolicy::on_expiry_change) and entries
//! without one sort after every deadline (`u64::MAX`). The sequence number
//! is taken when the key is set, so equal deadlines leave in the order they
//! were set. Its position table lets `on_remove` and deadline changes find
//! an entry's heap slot in O(1).
//!
//! **Cost.** 24 bytes per slot (a 16-byte key and a `u32` position per slot,
//! a `u32` per tracked id in the heap). Insert, remove, evict and deadline
//! changes are O(log n); hits are O(1) and change nothing.
//!
//! **Source.** Redis's `volatile-ttl` samples `maxmemory-samples` volatile
//! keys into its eviction pool and evicts the one expiring soonest
//! (`src/evict.c`, `evictionPoolPopulate`); this keeps the exact order
//! instead.

use crate::heap::IndexedHeap;
use crate::{EntryId, EvictionPolicy, Millis};

/// Configuration for [`Ttl`]. It has no knobs; it exists so every policy is
/// built the same way from a config value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TtlConfig {}

/// Evicts the tracked entry with the nearest expiry deadline.
#[derive(Clone, Debug, Default)]
pub struct Ttl {
    /// Keyed by the deadline in milliseconds (`u64::MAX` for none), then by
    /// the order in which it was set.
    heap: IndexedHeap<(u64, u64)>,
    seq: u64,
}

impl Ttl {
    /// An empty policy.
    pub fn new(_config: TtlConfig) -> Self {
        Ttl::default()
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }
}

impl EvictionPolicy for Ttl {
    fn name(&self) -> &'static str {
        "ttl"
    }

    fn on_insert(&mut self, id: EntryId, _key_hash: u64, _cost: u32, _now: Millis) {
        debug_assert!(!self.heap.contains(id), "{id:?} inserted twice");
        let seq = self.next_seq();
        self.heap.set(id, (u64::MAX, seq));
    }

    fn on_hit(&mut self, _id: EntryId, _now: Millis) {}

    fn on_expiry_change(&mut self, id: EntryId, expires_at: Option<Millis>) {
        if self.heap.contains(id) {
            let seq = self.next_seq();
            self.heap
                .set(id, (expires_at.map_or(u64::MAX, |m| m.0), seq));
        }
    }

    fn on_remove(&mut self, id: EntryId) {
        self.heap.remove(id);
    }

    fn evict(&mut self, _now: Millis) -> Option<EntryId> {
        self.heap.pop()
    }

    fn len(&self) -> usize {
        self.heap.len()
    }

    fn heap_bytes(&self) -> usize {
        self.heap.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tracked ids in eviction order.
    fn dump(ttl: &Ttl) -> Vec<u32> {
        ttl.heap.ordered()
    }

    fn set(ttl: &mut Ttl, id: u32, deadline: Option<u64>) {
        ttl.on_insert(EntryId(id), 0, 1, Millis(0));
        ttl.on_expiry_change(EntryId(id), deadline.map(Millis));
    }

    #[test]
    fn orders_by_deadline_then_set_order() {
        let mut ttl = Ttl::default();
        set(&mut ttl, 0, Some(500));
        set(&mut ttl, 1, None);
        set(&mut ttl, 2, Some(100));
        set(&mut ttl, 3, Some(500));
        assert_eq!(dump(&ttl), [2, 0, 3, 1]);
        ttl.on_hit(EntryId(2), Millis(1));
        assert_eq!(dump(&ttl), [2, 0, 3, 1]);
        // PERSIST: no deadline goes last, after the older deadline-less 1.
        ttl.on_expiry_change(EntryId(2), None);
        assert_eq!(dump(&ttl), [0, 3, 1, 2]);
        // PEXPIRE brings 1 to the front.
        ttl.on_expiry_change(EntryId(1), Some(Millis(50)));
        assert_eq!(dump(&ttl), [1, 0, 3, 2]);
        assert_eq!(ttl.evict(Millis(2)), Some(EntryId(1)));
        assert_eq!(dump(&ttl), [0, 3, 2]);
        ttl.on_remove(EntryId(0));
        assert_eq!(dump(&ttl), [3, 2]);
        assert_eq!(ttl.evict(Millis(3)), Some(EntryId(3)));
        assert_eq!(ttl.evict(Millis(3)), Some(EntryId(2)));
        assert_eq!(ttl.evict(Millis(3)), None);
        assert!(ttl.is_empty());
    }
}
