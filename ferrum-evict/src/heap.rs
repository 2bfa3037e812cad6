//! An indexed binary min-heap over [`EntryId`]s, the ordered structure
//! behind [`Ttl`](crate::Ttl), [`Lfu`](crate::Lfu) and the deadline order
//! of LFU and AHE; and [`Deadlines`], expiry deadlines in 32 bits.
//!
//! The heap array holds `(key, id)` records, so a sift compares keys
//! without leaving the array; a position table indexed by the id maps each
//! member to its record, so removing or re-keying an arbitrary entry is
//! O(log n) (the classic decrease-key extension of Williams, "Algorithm
//! 232: Heapsort", CACM 1964).
//!
//! Cost: a `u32` position per slot, grown by an eighth (`table.rs`), plus
//! one record (`size_of::<K>()` + 4 bytes) per member.

use crate::table::{grow_for, reserve_one};
use crate::{EntryId, Millis};

/// Marks an untracked slot in the position table.
const NIL: u32 = u32::MAX;

/// One member: its key and id.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rec<K> {
    pub(crate) key: K,
    pub(crate) id: u32,
}

/// The heap's order on records. It may consult per-slot state it owns
/// (reachable through [`IndexedHeap::order_mut`]), to break ties on keys.
pub(crate) trait HeapOrder<K> {
    fn less(&self, a: &Rec<K>, b: &Rec<K>) -> bool;
}

/// Orders records by key alone.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ByKey;

impl<K: Ord> HeapOrder<K> for ByKey {
    #[inline]
    fn less(&self, a: &Rec<K>, b: &Rec<K>) -> bool {
        a.key < b.key
    }
}

#[derive(Clone, Debug)]
pub(crate) struct IndexedHeap<K, O = ByKey> {
    heap: Vec<Rec<K>>,
    /// `pos[id]` is the index of `id`'s record in `heap`, or `NIL`.
    pos: Vec<u32>,
    order: O,
}

impl<K, O: Default> Default for IndexedHeap<K, O> {
    fn default() -> Self {
        IndexedHeap {
            heap: Vec::new(),
            pos: Vec::new(),
            order: O::default(),
        }
    }
}

impl<K: Copy, O: HeapOrder<K>> IndexedHeap<K, O> {
    /// The order, with whatever per-slot state it keeps.
    pub(crate) fn order(&self) -> &O {
        &self.order
    }

    /// The order, to update its per-slot state. Changing what it says about
    /// a member MUST be followed by [`set`](Self::set) for that member (or
    /// [`rekey_all`](Self::rekey_all)) so the heap is re-ordered.
    pub(crate) fn order_mut(&mut self) -> &mut O {
        &mut self.order
    }

    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }

    pub(crate) fn contains(&self, id: EntryId) -> bool {
        self.position(id).is_some()
    }

    /// The key of a member.
    #[cfg(test)]
    pub(crate) fn key(&self, id: EntryId) -> Option<K> {
        self.position(id).map(|p| self.heap[p].key)
    }

    /// Adds `id`, or re-keys it if it is already a member.
    pub(crate) fn set(&mut self, id: EntryId, key: K) {
        if let Some(p) = self.position(id) {
            self.heap[p].key = key;
            self.sift_up(p);
            self.sift_down(self.pos[id.index()] as usize);
            return;
        }
        grow_for(&mut self.pos, id.index(), NIL);
        reserve_one(&mut self.heap);
        self.heap.push(Rec { key, id: id.0 });
        let last = self.heap.len() - 1;
        self.pos[id.index()] = last as u32;
        self.sift_up(last);
    }

    /// Gives every member a new key computed from the order's state, its id
    /// and its old key, then
    /// restores the heap order bottom-up in O(n).
    pub(crate) fn rekey_all(&mut self, mut f: impl FnMut(&O, EntryId, K) -> K) {
        let order = &self.order;
        for rec in &mut self.heap {
            rec.key = f(order, EntryId(rec.id), rec.key);
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

    /// Every member and its key, in no particular order.
    pub(crate) fn members(&self) -> impl Iterator<Item = (EntryId, K)> + '_ {
        self.heap.iter().map(|r| (EntryId(r.id), r.key))
    }

    /// The member with the smallest key, and that key.
    pub(crate) fn peek(&self) -> Option<(EntryId, K)> {
        self.heap.first().map(|r| (EntryId(r.id), r.key))
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
        self.heap.capacity() * std::mem::size_of::<Rec<K>>()
            + self.pos.capacity() * std::mem::size_of::<u32>()
    }

    /// Members in pop order, after checking the heap invariant and the
    /// position table; for tests.
    #[cfg(test)]
    pub(crate) fn ordered(&self) -> Vec<u32> {
        for (p, rec) in self.heap.iter().enumerate() {
            assert_eq!(
                self.pos[rec.id as usize], p as u32,
                "position of {}",
                rec.id
            );
            if p > 0 {
                assert!(
                    !self.order.less(rec, &self.heap[(p - 1) / 2]),
                    "heap order at {p}"
                );
            }
        }
        let mut recs = self.heap.clone();
        recs.sort_by(|a, b| {
            if self.order.less(a, b) {
                std::cmp::Ordering::Less
            } else if self.order.less(b, a) {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        });
        recs.iter().map(|r| r.id).collect()
    }

    fn position(&self, id: EntryId) -> Option<usize> {
        match self.pos.get(id.index()) {
            Some(&p) if p != NIL => Some(p as usize),
            _ => None,
        }
    }

    fn place(&mut self, p: usize, rec: Rec<K>) {
        self.pos[rec.id as usize] = p as u32;
        self.heap[p] = rec;
    }

    fn sift_up(&mut self, mut p: usize) {
        let rec = self.heap[p];
        while p > 0 {
            let parent = (p - 1) / 2;
            if !self.order.less(&rec, &self.heap[parent]) {
                break;
            }
            self.place(p, self.heap[parent]);
            p = parent;
        }
        self.place(p, rec);
    }

    fn sift_down(&mut self, mut p: usize) {
        let rec = self.heap[p];
        let len = self.heap.len();
        loop {
            let left = 2 * p + 1;
            if left >= len {
                break;
            }
            let right = left + 1;
            let child = if right < len && self.order.less(&self.heap[right], &self.heap[left]) {
                right
            } else {
                left
            };
            if !self.order.less(&self.heap[child], &rec) {
                break;
            }
            self.place(p, self.heap[child]);
            p = child;
        }
        self.place(p, rec);
    }

    fn remove_at(&mut self, p: usize) -> EntryId {
        let rec = self.heap.swap_remove(p);
        self.pos[rec.id as usize] = NIL;
        if p < self.heap.len() {
            // The last leaf filled the hole; it may belong above or below it.
            let moved = self.heap[p].id;
            self.pos[moved as usize] = p as u32;
            self.sift_down(p);
            self.sift_up(self.pos[moved as usize] as usize);
        }
        EntryId(rec.id)
    }
}

/// Deadlines within this many milliseconds of the base are exact (24.8
/// days); later ones are kept in units of [`COARSE_SHIFT`].
const EXACT_RANGE: u64 = 1 << 31;
/// Far deadlines are rounded up to 2^20 ms (17.5 minutes).
const COARSE_SHIFT: u32 = 20;
/// The base moves to `now` once `now` is this far past it (12.4 days), so
/// the exact range always reaches at least 12.4 days ahead.
const REBASE_AFTER: u64 = 1 << 30;

/// An expiry deadline as a `u32`, relative to a base that follows the
/// clock: order-preserving (never strictly reversing two deadlines), exact
/// to the millisecond up to 24.8 days past the base, and rounded *up* to
/// 17.5-minute units beyond, so a deadline never reads earlier than it is
/// and an entry is never taken for expired too soon. Code 0 is "before the
/// base" (already past).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DeadlineCodec {
    /// Milliseconds; `None` until the first `now` is seen.
    base: Option<u64>,
}

impl DeadlineCodec {
    pub(crate) fn encode(&self, deadline: Millis) -> u32 {
        let base = self.base.unwrap_or(0);
        let Some(rel) = deadline.0.checked_sub(base) else {
            return 0;
        };
        if rel < EXACT_RANGE {
            return rel as u32 + 1;
        }
        let coarse = (rel - EXACT_RANGE).div_ceil(1 << COARSE_SHIFT);
        u32::try_from(EXACT_RANGE + 1 + coarse).unwrap_or(u32::MAX)
    }

    /// The deadline a code stands for: exact in the exact range, the upper
    /// end of its unit beyond, just before the base for code 0.
    pub(crate) fn decode(&self, code: u32) -> Millis {
        let base = self.base.unwrap_or(0);
        let code = u64::from(code);
        Millis(match code {
            0 => base.saturating_sub(1),
            c if c <= EXACT_RANGE => base + c - 1,
            c => base.saturating_add(EXACT_RANGE + ((c - EXACT_RANGE - 1) << COARSE_SHIFT)),
        })
    }

    /// Whether the base must move for `now` (the first `now`, or one
    /// [`REBASE_AFTER`] past the base); then every stored code must be
    /// re-encoded with [`rebased`](Self::rebased).
    pub(crate) fn needs_rebase(&self, now: Millis) -> bool {
        self.base
            .is_none_or(|base| now.0.saturating_sub(base) >= REBASE_AFTER)
    }

    /// The codec for base `now`.
    pub(crate) fn rebased(now: Millis) -> Self {
        DeadlineCodec { base: Some(now.0) }
    }
}

/// Tracked entries' expiry deadlines in a min-heap of 32-bit codes
/// ([`DeadlineCodec`]): 8 bytes per entry with a deadline and 4 per slot.
#[derive(Clone, Debug, Default)]
pub(crate) struct Deadlines {
    heap: IndexedHeap<u32>,
    codec: DeadlineCodec,
}

impl Deadlines {
    /// Follows the clock; call with every `now` the policy sees. O(1)
    /// except once per 12.4 days of clock, when every code is re-encoded.
    #[inline]
    pub(crate) fn observe(&mut self, now: Millis) {
        if self.codec.needs_rebase(now) {
            let old = self.codec;
            let new = DeadlineCodec::rebased(now);
            self.heap
                .rekey_all(|_, _, code| new.encode(old.decode(code)));
            self.codec = new;
        }
    }

    pub(crate) fn set(&mut self, id: EntryId, deadline: Millis) {
        let code = self.codec.encode(deadline);
        self.heap.set(id, code);
    }

    pub(crate) fn remove(&mut self, id: EntryId) {
        self.heap.remove(id);
    }

    /// The entry with the nearest deadline, if that deadline has passed at
    /// `now` (Redis's rule: expired once `now > deadline`).
    pub(crate) fn expired(&self, now: Millis) -> Option<EntryId> {
        let (id, code) = self.heap.peek()?;
        (now > self.codec.decode(code)).then_some(id)
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.heap.heap_bytes()
    }

    /// How many entries have a deadline.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_key_order_after_updates_and_removals() {
        let mut heap: IndexedHeap<u32> = IndexedHeap::default();
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

    #[test]
    fn records_are_eight_bytes() {
        assert_eq!(std::mem::size_of::<Rec<u32>>(), 8);
        assert_eq!(std::mem::size_of::<Rec<(u32, u32)>>(), 12);
    }

    #[test]
    fn deadline_codes_are_exact_near_and_rounded_up_far() {
        let codec = DeadlineCodec::rebased(Millis(1_000));
        assert_eq!(codec.encode(Millis(999)), 0);
        assert!(codec.decode(0) < Millis(1_000));
        for d in [1_000, 1_001, 5_000_000, 1_000 + EXACT_RANGE - 1] {
            assert_eq!(codec.decode(codec.encode(Millis(d))), Millis(d), "{d}");
        }
        // Beyond 24.8 days: rounded up to 2^20 ms, never down.
        let far = 1_000 + EXACT_RANGE + 12_345;
        let back = codec.decode(codec.encode(Millis(far)));
        assert!(
            back >= Millis(far) && back.0 - far < 1 << COARSE_SHIFT,
            "{back}"
        );
        // Order-preserving across the whole range, saturating at the top.
        let mut last = 0;
        for d in (0..60).map(|k| 1u64 << k) {
            let code = codec.encode(Millis(d));
            assert!(code >= last, "{d}");
            last = code;
        }
        assert_eq!(codec.encode(Millis(u64::MAX)), u32::MAX);
    }

    #[test]
    fn deadlines_follow_the_clock_across_rebases() {
        let mut d = Deadlines::default();
        let start = Millis(1_700_000_000_000); // an epoch-based clock
        d.observe(start);
        d.set(EntryId(0), start + Millis(35 * 86_400_000)); // 35 days: coarse
        d.set(EntryId(1), start + Millis(20 * 86_400_000)); // 20 days: exact
        d.set(EntryId(2), start + Millis(5_000));
        assert_eq!(d.expired(start + Millis(5_000)), None);
        assert_eq!(d.expired(start + Millis(5_001)), Some(EntryId(2)));
        d.remove(EntryId(2));
        // 15 days later the base moves; 1 stays exact, 0 becomes exact
        // (rounded up by less than 17.5 minutes).
        let later = start + Millis(15 * 86_400_000);
        d.observe(later);
        let one = start + Millis(20 * 86_400_000);
        assert_eq!(d.expired(one), None);
        assert_eq!(d.expired(one + Millis(1)), Some(EntryId(1)));
        d.remove(EntryId(1));
        let zero = start + Millis(35 * 86_400_000);
        assert_eq!(d.expired(zero), None);
        assert_eq!(
            d.expired(zero + Millis(1 << COARSE_SHIFT)),
            Some(EntryId(0))
        );
    }
}
