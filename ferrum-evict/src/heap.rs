//! An indexed binary min-heap over [`EntryId`]s, the ordered structure
//! behind [`Ttl`](crate::Ttl) and [`Lfu`](crate::Lfu).
//!
//! The heap holds ids; each id's key lives in a table indexed by the id,
//! and a position table maps each id to its heap slot, so removing or
//! re-keying an arbitrary entry is O(log n) (the classic decrease-key
//! extension of Williams, "Algorithm 232: Heapsort", CACM 1964).
//!
//! Cost: 8 bytes per slot for the position table and the heap array, plus
//! `size_of::<K>()` per slot for the keys.

use crate::EntryId;

/// Marks an untracked slot in the position table.
const NIL: u32 = u32::MAX;

#[derive(Clone, Debug, Default)]
pub(crate) struct IndexedHeap<K> {
    heap: Vec<u32>,
    /// `pos[id]` is the index of `id` in `heap`, or `NIL`.
    pos: Vec<u32>,
    keys: Vec<K>,
}

impl<K: Ord + Copy + Default> IndexedHeap<K> {
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }

    pub(crate) fn contains(&self, id: EntryId) -> bool {
        self.position(id).is_some()
    }

    /// The key of a member.
    #[cfg(test)]
    pub(crate) fn key(&self, id: EntryId) -> Option<K> {
        self.position(id).map(|_| self.keys[id.index()])
    }

    /// Adds `id`, or re-keys it if it is already a member.
    pub(crate) fn set(&mut self, id: EntryId, key: K) {
        if let Some(p) = self.position(id) {
            self.keys[id.index()] = key;
            self.sift_up(p);
            self.sift_down(self.pos[id.index()] as usize);
            return;
        }
        if self.pos.len() <= id.index() {
            self.pos.resize(id.index() + 1, NIL);
            self.keys.resize(id.index() + 1, K::default());
        }
        self.keys[id.index()] = key;
        self.heap.push(id.0);
        let last = self.heap.len() - 1;
        self.pos[id.index()] = last as u32;
        self.sift_up(last);
    }

    /// Gives every member a new key computed from its id and old key, then
    /// restores the heap order bottom-up in O(n).
    pub(crate) fn rekey_all(&mut self, mut f: impl FnMut(EntryId, K) -> K) {
        for &id in &self.heap {
            let i = id as usize;
            self.keys[i] = f(EntryId(id), self.keys[i]);
        }
        for p in (0..self.heap.len() / 2).rev() {
            self.sift_down(p);
        }
    }

    /// Removes `id` if it is a member; returns whether it was.
    pub(crate) fn remove(&mut self, id: EntryId) -> bool {
        match self.position(id) {
            Some(p) => {
                self.remove_at(p);
                true
            }
            None => false,
        }
    }

    /// The member with the smallest key, and that key.
    pub(crate) fn peek(&self) -> Option<(EntryId, K)> {
        self.heap
            .first()
            .map(|&id| (EntryId(id), self.keys[id as usize]))
    }

    /// Removes and returns the member with the smallest key.
    pub(crate) fn pop(&mut self) -> Option<EntryId> {
        if self.heap.is_empty() {
            None
        } else {
            Some(self.remove_at(0))
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        (self.heap.capacity() + self.pos.capacity()) * std::mem::size_of::<u32>()
            + self.keys.capacity() * std::mem::size_of::<K>()
    }

    /// Members in pop order, after checking the heap invariant and the
    /// position table; for tests.
    #[cfg(test)]
    pub(crate) fn ordered(&self) -> Vec<u32> {
        for (p, &id) in self.heap.iter().enumerate() {
            assert_eq!(self.pos[id as usize], p as u32, "position of {id}");
            if p > 0 {
                assert!(
                    self.key_at((p - 1) / 2) <= self.key_at(p),
                    "heap order at {p}"
                );
            }
        }
        let mut ids = self.heap.clone();
        ids.sort_by_key(|&id| self.keys[id as usize]);
        ids
    }

    fn position(&self, id: EntryId) -> Option<usize> {
        match self.pos.get(id.index()) {
            Some(&p) if p != NIL => Some(p as usize),
            _ => None,
        }
    }

    fn key_at(&self, p: usize) -> K {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_key_order_after_updates_and_removals() {
        let mut heap = IndexedHeap::default();
        // Keys in a scrambled order: 37 is coprime with 100.
        for i in 0..100u32 {
            heap.set(EntryId(i), (i * 37) % 100);
        }
        for i in (0..100u32).step_by(3) {
            assert!(heap.remove(EntryId(i)));
        }
        assert!(!heap.remove(EntryId(0)));
        heap.set(EntryId(1), 1_000);
        heap.set(EntryId(2), 0);
        assert_eq!(heap.key(EntryId(2)), Some(0));
        assert_eq!(heap.key(EntryId(3)), None);
        let order = heap.ordered();
        assert_eq!(order.len(), 66);
        assert_eq!((order[0], order[65]), (2, 1));
        let mut popped = Vec::new();
        while let Some(id) = heap.pop() {
            popped.push(id.0);
        }
        assert_eq!(popped, order);
        assert_eq!(heap.len(), 0);
    }
}
