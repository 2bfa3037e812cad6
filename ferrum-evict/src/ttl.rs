//! Nearest-deadline-first eviction (`volatile-ttl`).
//!
//! **Structure.** An indexed binary min-heap of tracked ids keyed by
//! `(deadline, sequence)`, where the deadline comes from
//! [`on_expiry_change`](EvictionPolicy::on_expiry_change) and entries
//! without one sort after every deadline (`u64::MAX`). The sequence number
//! is taken when the key is set, so equal deadlines leave in the order they
//! were set. A position table indexed by [`EntryId`] lets `on_remove` and
//! deadline changes find an entry's heap slot in O(1).
//!
//! **Cost.** 24 bytes per slot (a 16-byte key and a `u32` position per slot,
//! a `u32` per tracked id in the heap). Insert, remove, evict and deadline
//! changes are O(log n); hits are O(1) and change nothing.
//!
//! **Source.** Redis's `volatile-ttl` samples `maxmemory-samples` volatile
//! keys into its eviction pool and evicts the one expiring soonest
//! (`src/evict.c`, `evictionPoolPopulate`); this keeps the exact order
//! instead. The heap is the textbook one (Williams, "Algorithm 232:
//! Heapsort", CACM 1964) with a position index for decrease-key.

use crate::{EntryId, EvictionPolicy, Millis};

/// Marks an untracked slot in the position table.
const NIL: u32 = u32::MAX;

/// Configuration for [`Ttl`]. It has no knobs; it exists so every policy is
/// built the same way from a config value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TtlConfig {}

/// Heap key: the deadline in milliseconds (`u64::MAX` for none), then the
/// order in which it was set.
type Key = (u64, u64);

/// Evicts the tracked entry with the nearest expiry deadline.
#[derive(Clone, Debug, Default)]
pub struct Ttl {
    heap: Vec<u32>,
    /// `pos[id]` is the index of `id` in `heap`, or `NIL`.
    pos: Vec<u32>,
    keys: Vec<Key>,
    seq: u64,
}

impl Ttl {
    /// An empty policy.
    pub fn new(_config: TtlConfig) -> Self {
        Ttl::default()
    }

    fn position(&self, id: EntryId) -> Option<usize> {
        match self.pos.get(id.index()) {
            Some(&p) if p != NIL => Some(p as usize),
            _ => None,
        }
    }

    fn key_at(&self, p: usize) -> Key {
        self.keys[self.heap[p] as usize]
    }

    fn place(&mut self, p: usize, id: u32) {
        self.heap[p] = id;
        self.pos[id as usize] = p as u32;
    }

    fn sift_up(&mut self, mut p: usize) {
        let id = self.heap[p];
        let key = self.keys[id as usize];
        while p > 0 {
            let parent = (p - 1) / 2;
            if self.key_at(parent) <= key {
                break;
            }
            self.place(p, self.heap[parent]);
            p = parent;
        }
        self.place(p, id);
    }

    fn sift_down(&mut self, mut p: usize) {
        let id = self.heap[p];
        let key = self.keys[id as usize];
        loop {
            let left = 2 * p + 1;
            if left >= self.heap.len() {
                break;
            }
            let right = left + 1;
            let child = if right < self.heap.len() && self.key_at(right) < self.key_at(left) {
                right
            } else {
                left
            };
            if key <= self.key_at(child) {
                break;
            }
            self.place(p, self.heap[child]);
            p = child;
        }
        self.place(p, id);
    }

    fn remove_at(&mut self, p: usize) -> EntryId {
        let id = self.heap.swap_remove(p);
        self.pos[id as usize] = NIL;
        if let Some(&moved) = self.heap.get(p) {
            // The last leaf filled the hole; it may belong above or below it.
            self.pos[moved as usize] = p as u32;
            self.sift_down(p);
            self.sift_up(self.pos[moved as usize] as usize);
        }
        EntryId(id)
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
        debug_assert!(self.position(id).is_none(), "{id:?} inserted twice");
        if self.pos.len() <= id.index() {
            self.pos.resize(id.index() + 1, NIL);
            self.keys.resize(id.index() + 1, (u64::MAX, 0));
        }
        self.keys[id.index()] = (u64::MAX, self.next_seq());
        self.heap.push(id.0);
        self.pos[id.index()] = (self.heap.len() - 1) as u32;
        self.sift_up(self.heap.len() - 1);
    }

    fn on_hit(&mut self, _id: EntryId, _now: Millis) {}

    fn on_expiry_change(&mut self, id: EntryId, expires_at: Option<Millis>) {
        let Some(p) = self.position(id) else {
            return;
        };
        let deadline = expires_at.map_or(u64::MAX, |m| m.0);
        self.keys[id.index()] = (deadline, self.next_seq());
        self.sift_up(p);
        self.sift_down(self.pos[id.index()] as usize);
    }

    fn on_remove(&mut self, id: EntryId) {
        if let Some(p) = self.position(id) {
            self.remove_at(p);
        }
    }

    fn evict(&mut self, _now: Millis) -> Option<EntryId> {
        if self.heap.is_empty() {
            return None;
        }
        Some(self.remove_at(0))
    }

    fn len(&self) -> usize {
        self.heap.len()
    }

    fn heap_bytes(&self) -> usize {
        (self.heap.capacity() + self.pos.capacity()) * std::mem::size_of::<u32>()
            + self.keys.capacity() * std::mem::size_of::<Key>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tracked ids in eviction order, checking the heap invariant and the
    /// position table on the way.
    fn dump(ttl: &Ttl) -> Vec<u32> {
        for (p, &id) in ttl.heap.iter().enumerate() {
            assert_eq!(ttl.pos[id as usize], p as u32, "position of {id}");
            if p > 0 {
                assert!(
                    ttl.key_at((p - 1) / 2) <= ttl.key_at(p),
                    "heap order at {p}"
                );
            }
        }
        let mut ids = ttl.heap.clone();
        ids.sort_by_key(|&id| ttl.keys[id as usize]);
        ids
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

    #[test]
    fn evicts_in_deadline_order_at_scale() {
        let mut ttl = Ttl::default();
        // Deadlines in a scrambled order: 37 is coprime with 100.
        for i in 0..100u32 {
            set(&mut ttl, i, Some(u64::from((i * 37) % 100)));
        }
        for i in (0..100u32).step_by(3) {
            ttl.on_remove(EntryId(i));
        }
        dump(&ttl);
        let mut last = 0;
        while let Some(id) = ttl.evict(Millis(0)) {
            let deadline = (id.0 * 37) % 100;
            assert!(deadline >= last, "{deadline} after {last}");
            assert_ne!(id.0 % 3, 0, "removed id {} came back", id.0);
            last = deadline;
        }
    }
}
