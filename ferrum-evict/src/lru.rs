//! Exact least-recently-used eviction.
//!
//! **Structure.** An intrusive doubly linked list threaded through a `Vec`
//! indexed by [`EntryId`]: each tracked slot stores the ids of its neighbours,
//! so insert, hit, remove and evict are O(1) with no allocation once the table
//! has grown to the store's slot count. The head is the most recently used
//! entry, the tail the least.
//!
//! **Cost.** 8 bytes per slot (two `u32` links), whether or not the slot is
//! occupied; an untracked slot is marked by a sentinel in its `prev` link,
//! not by a flag that would pad the struct to 12 bytes. The table grows by
//! an eighth (`table.rs`), so at most about 11% of it is idle growth room.
//!
//! **Source.** The textbook LRU list (e.g. Knuth, TAOCP vol. 1 §2.2.5).
//! Unlike Redis's sampled approximation, the order is exact, and recency is an
//! order of events rather than a wall-clock age, so the hit ratio does not
//! depend on how fast requests arrive.

use crate::table::grow_for;
use crate::{EntryId, EvictionPolicy, Millis};

/// Marks "no neighbour".
const NIL: u32 = u32::MAX;
/// In `prev`, marks an untracked slot. No real neighbour has this id: a
/// table reaching it would hold four billion slots.
const FREE: u32 = u32::MAX - 1;

/// Configuration for [`Lru`]. It has no knobs today; it exists so every policy
/// is built the same way from a config value.
#[derive(Clone, Debug, Default)]
pub struct LruConfig {}

#[derive(Clone, Copy, Debug)]
struct Links {
    /// The more recent neighbour, `NIL` at the head, `FREE` if untracked.
    prev: u32,
    next: u32,
}

const UNTRACKED: Links = Links {
    prev: FREE,
    next: NIL,
};

/// Exact LRU over store-issued handles.
#[derive(Clone, Debug)]
pub struct Lru {
    links: Vec<Links>,
    head: u32,
    tail: u32,
    len: usize,
}

impl Lru {
    /// An empty policy.
    pub fn new(_config: LruConfig) -> Self {
        Lru {
            links: Vec::new(),
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }

    fn unlink(&mut self, i: u32) {
        let Links { prev, next, .. } = self.links[i as usize];
        match prev {
            NIL => self.head = next,
            p => self.links[p as usize].next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.links[n as usize].prev = prev,
        }
    }

    fn push_front(&mut self, i: u32) {
        self.links[i as usize] = Links {
            prev: NIL,
            next: self.head,
        };
        match self.head {
            NIL => self.tail = i,
            h => self.links[h as usize].prev = i,
        }
        self.head = i;
    }

    /// The tracked entries, least recently used first.
    fn oldest_first(&self) -> impl Iterator<Item = EntryId> + '_ {
        let mut cur = self.tail;
        std::iter::from_fn(move || {
            let id = (cur != NIL).then_some(EntryId(cur))?;
            cur = self.links[cur as usize].prev;
            Some(id)
        })
    }

    fn is_tracked(&self, id: EntryId) -> bool {
        self.links.get(id.index()).is_some_and(|l| l.prev != FREE)
    }
}

impl Default for Lru {
    fn default() -> Self {
        Lru::new(LruConfig::default())
    }
}

impl EvictionPolicy for Lru {
    fn name(&self) -> &'static str {
        "lru"
    }

    fn on_insert(&mut self, id: EntryId, _key_hash: u64, _cost: u32, _now: Millis) {
        debug_assert!(!self.is_tracked(id), "{id:?} inserted twice");
        debug_assert!(id.0 < FREE, "{id:?} is reserved");
        grow_for(&mut self.links, id.index(), UNTRACKED);
        self.push_front(id.0);
        self.len += 1;
    }

    fn on_hit(&mut self, id: EntryId, _key_hash: u64, _now: Millis) {
        if self.is_tracked(id) && self.head != id.0 {
            self.unlink(id.0);
            self.push_front(id.0);
        }
    }

    fn on_remove(&mut self, id: EntryId) {
        if self.is_tracked(id) {
            self.unlink(id.0);
            self.links[id.index()] = UNTRACKED;
            self.len -= 1;
        }
    }

    fn evict(&mut self, _now: Millis, _key_hash: &dyn Fn(EntryId) -> u64) -> Option<EntryId> {
        let victim = match self.tail {
            NIL => return None,
            t => EntryId(t),
        };
        self.on_remove(victim);
        Some(victim)
    }

    fn len(&self) -> usize {
        self.len
    }

    fn heap_bytes(&self) -> usize {
        self.links.capacity() * std::mem::size_of::<Links>()
    }

    /// Least recently used first, each at its index: the order to touch
    /// the entries in to rebuild the list. A walk of the links, no keys.
    fn export_order(&self) -> Option<Vec<(EntryId, u32)>> {
        Some(crate::indexed(self.oldest_first()))
    }

    /// Rebuilds the list with the entries `order` names as the least
    /// recently used, in that order, and the others, in their order, as
    /// more recent than any of them.
    fn import_order(&mut self, order: &[(EntryId, u32)]) {
        let (named, placed) =
            crate::first_tracked(order, self.links.len(), |id| self.is_tracked(id));
        let rest: Vec<EntryId> = self
            .oldest_first()
            .filter(|id| !placed[id.index()])
            .collect();
        (self.head, self.tail) = (NIL, NIL);
        for id in named.into_iter().map(|(id, _)| id).chain(rest) {
            self.push_front(id.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tracked ids from most to least recently used.
    fn dump(lru: &Lru) -> Vec<u32> {
        let mut out = Vec::new();
        let mut cur = lru.head;
        while cur != NIL {
            out.push(cur);
            cur = lru.links[cur as usize].next;
        }
        out
    }

    #[test]
    fn orders_by_recency() {
        let mut lru = Lru::default();
        for i in 0..4 {
            lru.on_insert(EntryId(i), 0, 1, Millis(0));
        }
        assert_eq!(dump(&lru), [3, 2, 1, 0]);
        lru.on_hit(EntryId(1), 0, Millis(1));
        assert_eq!(dump(&lru), [1, 3, 2, 0]);
        lru.on_hit(EntryId(0), 0, Millis(2));
        assert_eq!(dump(&lru), [0, 1, 3, 2]);
        assert_eq!(lru.evict(Millis(3), &|_| 0), Some(EntryId(2)));
        assert_eq!(dump(&lru), [0, 1, 3]);
        lru.on_remove(EntryId(1));
        assert_eq!(dump(&lru), [0, 3]);
        assert_eq!(lru.len(), 2);
        assert_eq!(lru.evict(Millis(4), &|_| 0), Some(EntryId(3)));
        assert_eq!(lru.evict(Millis(4), &|_| 0), Some(EntryId(0)));
        assert_eq!(lru.evict(Millis(4), &|_| 0), None);
        assert!(lru.is_empty());
    }

    #[test]
    fn a_slot_costs_eight_bytes() {
        assert_eq!(std::mem::size_of::<Links>(), 8);
        let mut lru = Lru::default();
        for i in 0..1_000 {
            lru.on_insert(EntryId(i), 0, 1, Millis(0));
        }
        // Grown by eighths: at most an eighth (plus one step) idle.
        assert!(lru.heap_bytes() <= 8 * 1_125, "{}", lru.heap_bytes());
        assert!(lru.heap_bytes() >= 8 * 1_000);
    }

    #[test]
    fn an_exported_order_comes_back() {
        let mut lru = Lru::default();
        for i in 0..6 {
            lru.on_insert(EntryId(i), 0, 1, Millis(0));
        }
        lru.on_hit(EntryId(2), 0, Millis(1));
        lru.on_remove(EntryId(4));
        let order = lru.export_order().expect("LRU has an order");
        let ids: Vec<u32> = order.iter().map(|(id, _)| id.0).collect();
        assert_eq!(ids, [0, 1, 3, 5, 2]);
        // A load inserts in another order, then puts the saved one back;
        // ids named twice or not tracked are ignored.
        let mut again = Lru::default();
        for i in [5, 3, 2, 1, 0] {
            again.on_insert(EntryId(i), 0, 1, Millis(2));
        }
        let mut named = order.clone();
        named.extend([0, 4, 99].map(|i| (EntryId(i), 9)));
        again.import_order(&named);
        assert_eq!(dump(&again), dump(&lru));
        // Entries the order leaves out stay more recent than those it names.
        again.import_order(&[(EntryId(2), 0), (EntryId(0), 1)]);
        assert_eq!(dump(&again), [5, 3, 1, 0, 2]);
        assert_eq!(again.len(), 5);
    }

    #[test]
    fn reuses_removed_handles() {
        let mut lru = Lru::default();
        lru.on_insert(EntryId(5), 0, 1, Millis(0));
        lru.on_remove(EntryId(5));
        lru.on_insert(EntryId(5), 0, 1, Millis(1));
        assert_eq!(dump(&lru), [5]);
        assert_eq!(lru.len(), 1);
    }
}
