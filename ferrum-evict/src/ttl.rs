//! Nearest-deadline-first eviction (`volatile-ttl`).
//!
//! **Structure.** An indexed binary min-heap (`heap.rs`) of tracked ids keyed by
//! `(deadline, sequence)`, where the deadline comes from
//! [`on_expiry_change`](EvictionPolicy::on_expiry_change) as a 32-bit code
//! relative to a base that follows the clock (`heap::DeadlineCodec`: exact
//! to the millisecond for 24.8 days ahead, rounded up to 17.5-minute units
//! beyond), and entries without one sort after every deadline
//! (`u32::MAX`). The 32-bit sequence number is taken when the key is set,
//! so equal deadlines leave in the order they were set; when it would wrap,
//! every entry is renumbered in heap order. The position table lets
//! `on_remove` and deadline changes find an entry's record in O(1).
//!
//! **Cost.** 16 bytes per slot: a 12-byte heap record (code, sequence, id)
//! per tracked entry and a `u32` position per slot, both grown by an
//! eighth. Insert, remove, evict and deadline changes are O(log n); hits
//! are O(1) and change nothing. The base moves once per 12.4 days of clock,
//! and the sequence wraps once per four billion sets, each an O(n) pass.
//!
//! **Source.** Redis's `volatile-ttl` samples `maxmemory-samples` volatile
//! keys into its eviction pool and evicts the one expiring soonest
//! (`src/evict.c`, `evictionPoolPopulate`); this keeps the exact order
//! instead.

use crate::heap::{DeadlineCodec, IndexedHeap};
use crate::{EntryId, EvictionPolicy, Millis};

/// Configuration for [`Ttl`]. It has no knobs; it exists so every policy is
/// built the same way from a config value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TtlConfig {}

/// Evicts the tracked entry with the nearest expiry deadline.
#[derive(Clone, Debug, Default)]
pub struct Ttl {
    /// Keyed by the deadline's code (`u32::MAX` for none), then by the
    /// order in which it was set.
    heap: IndexedHeap<(u32, u32)>,
    codec: DeadlineCodec,
    seq: u32,
}

impl Ttl {
    /// An empty policy.
    pub fn new(_config: TtlConfig) -> Self {
        Ttl::default()
    }

    fn next_seq(&mut self) -> u32 {
        if self.seq == u32::MAX {
            self.renumber();
        }
        self.seq += 1;
        self.seq
    }

    /// Gives the members sequence numbers `1..=len` in their current
    /// order, so the counter can go on from `len`. Once per four billion
    /// sets: O(n log n).
    fn renumber(&mut self) {
        let mut order: Vec<((u32, u32), u32)> = Vec::with_capacity(self.heap.len());
        while let Some((id, key)) = self.heap.peek() {
            self.heap.pop();
            order.push((key, id.0));
        }
        for (seq, ((code, _), id)) in (1..).zip(order) {
            self.heap.set(EntryId(id), (code, seq));
            self.seq = seq;
        }
        if self.heap.len() == 0 {
            self.seq = 0;
        }
    }

    /// Moves the deadline base with the clock (once per 12.4 days).
    fn observe(&mut self, now: Millis) {
        if self.codec.needs_rebase(now) {
            let (old, new) = (self.codec, DeadlineCodec::rebased(now));
            self.heap.rekey_all(|_, _, (code, seq)| match code {
                u32::MAX => (code, seq),
                _ => (new.encode(old.decode(code)).min(u32::MAX - 1), seq),
            });
            self.codec = new;
        }
    }
}

impl EvictionPolicy for Ttl {
    fn name(&self) -> &'static str {
        "ttl"
    }

    fn on_insert(&mut self, id: EntryId, _key_hash: u64, _cost: u32, now: Millis) {
        debug_assert!(!self.heap.contains(id), "{id:?} inserted twice");
        self.observe(now);
        let seq = self.next_seq();
        self.heap.set(id, (u32::MAX, seq));
    }

    fn on_hit(&mut self, _id: EntryId, _key_hash: u64, _now: Millis) {}

    fn on_expiry_change(&mut self, id: EntryId, expires_at: Option<Millis>) {
        if self.heap.contains(id) {
            let seq = self.next_seq();
            // A deadline 71 000 years out still sorts before "none".
            let code = expires_at.map_or(u32::MAX, |m| self.codec.encode(m).min(u32::MAX - 1));
            self.heap.set(id, (code, seq));
        }
    }

    fn on_remove(&mut self, id: EntryId) {
        self.heap.remove(id);
    }

    fn evict(&mut self, now: Millis, _key_hash: &dyn Fn(EntryId) -> u64) -> Option<EntryId> {
        self.observe(now);
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
        ttl.on_hit(EntryId(2), 0, Millis(1));
        assert_eq!(dump(&ttl), [2, 0, 3, 1]);
        // PERSIST: no deadline goes last, after the older deadline-less 1.
        ttl.on_expiry_change(EntryId(2), None);
        assert_eq!(dump(&ttl), [0, 3, 1, 2]);
        // PEXPIRE brings 1 to the front.
        ttl.on_expiry_change(EntryId(1), Some(Millis(50)));
        assert_eq!(dump(&ttl), [1, 0, 3, 2]);
        assert_eq!(ttl.evict(Millis(2), &|_| 0), Some(EntryId(1)));
        assert_eq!(dump(&ttl), [0, 3, 2]);
        ttl.on_remove(EntryId(0));
        assert_eq!(dump(&ttl), [3, 2]);
        assert_eq!(ttl.evict(Millis(3), &|_| 0), Some(EntryId(3)));
        assert_eq!(ttl.evict(Millis(3), &|_| 0), Some(EntryId(2)));
        assert_eq!(ttl.evict(Millis(3), &|_| 0), None);
        assert!(ttl.is_empty());
    }

    #[test]
    fn the_sequence_wraps_by_renumbering_in_order() {
        let mut ttl = Ttl::default();
        set(&mut ttl, 0, Some(500));
        set(&mut ttl, 1, None);
        set(&mut ttl, 2, Some(500));
        set(&mut ttl, 3, None);
        ttl.seq = u32::MAX - 1;
        // 4's insert takes the last number; its deadline renumbers 0..=4
        // as 1..=5 in their order and takes 6; 5 takes 7 and 8.
        set(&mut ttl, 4, Some(500));
        set(&mut ttl, 5, None);
        assert_eq!(ttl.seq, 8);
        assert_eq!(dump(&ttl), [0, 2, 4, 1, 3, 5]);
        assert_eq!(ttl.heap.key(EntryId(4)).map(|k| k.1), Some(6));
        assert_eq!(ttl.heap.key(EntryId(0)).map(|k| k.1), Some(1));
    }

    #[test]
    fn deadlines_keep_their_order_as_the_clock_moves_on() {
        let mut ttl = Ttl::default();
        let day = 86_400_000;
        ttl.on_insert(EntryId(0), 0, 1, Millis(0));
        ttl.on_expiry_change(EntryId(0), Some(Millis(30 * day))); // coarse
        ttl.on_insert(EntryId(1), 0, 1, Millis(0));
        ttl.on_expiry_change(EntryId(1), Some(Millis(30 * day - 1))); // coarse, tie
        ttl.on_insert(EntryId(2), 0, 1, Millis(0));
        ttl.on_expiry_change(EntryId(2), Some(Millis(20 * day)));
        assert_eq!(dump(&ttl), [2, 0, 1]);
        // 25 days on, the base moves: 0 and 1 were rounded up to the same
        // unit and keep their tie, in the order they were set.
        ttl.on_insert(EntryId(3), 0, 1, Millis(25 * day));
        ttl.on_expiry_change(EntryId(3), Some(Millis(25 * day + 1)));
        assert_eq!(dump(&ttl), [2, 3, 0, 1]);
    }
}
