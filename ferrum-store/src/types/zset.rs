//! The sorted-set type: members ordered by `(score, member)`, with O(1)
//! score lookup and O(log n) rank, range and count.
//!
//! Two structures, as in Redis: an order-statistics treap ([`ostree`]) for
//! the order, and a hash index from member to the treap slot holding it (the
//! member bytes are stored once, in the node).
//!
//! [`ostree`]: super::ostree

use bytes::Bytes;
use hashbrown::HashTable;

use super::dense::hash_key;
use super::ostree::{Node, Tree};
use super::EncodingLimits;
use crate::memory::alloc_size;


/// One end of a score range: `1.5` (inclusive) or `(1.5` (exclusive).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreBound {
    /// The score; may be infinite.
    pub value: f64,
    /// Whether the bound itself is excluded.
    pub exclusive: bool,
}

/// One end of a lexicographic range: `-`, `+`, `[a` or `(a`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LexBound {
    /// `-`: before every member.
    Min,
    /// `+`: after every member.
    Max,
    /// `[m`: includes `m`.
    Incl(Bytes),
    /// `(m`: excludes `m`.
    Excl(Bytes),
}

/// A Redis sorted set. See the module docs.
///
/// Memory: the treap's arena, the hash index's buckets, and each member's
/// own allocation (`elem_bytes`), all O(1) to read.
#[derive(Clone, Debug, Default)]
pub struct ZSet {
    tree: Tree,
    index: HashTable<u32>,
    elem_bytes: usize,
    /// Set once the set outgrew the listpack limits; never cleared.
    skiplist: bool,
}

impl PartialEq for ZSet {
    fn eq(&self, other: &ZSet) -> bool {
        self.len() == other.len()
            && self.range_by_rank(0, self.len()) == other.range_by_rank(0, other.len())
    }
}

impl Eq for ZSet {}

impl ZSet {
    /// An empty sorted set.
    pub fn new() -> ZSet {
        ZSet::default()
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.tree.len()
    }

    /// Whether the set has no members.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Heap bytes the sorted set owns. O(1).
    pub fn heap_bytes(&self) -> usize {
        let index = self.index.capacity() * (size_of::<u32>() + 1) * 8 / 7;
        self.tree.table_bytes() + alloc_size(index) + self.elem_bytes
    }

    /// `listpack` or `skiplist`, as `OBJECT ENCODING` reports.
    pub fn encoding(&self) -> &'static str {
        if self.skiplist {
            "skiplist"
        } else {
            "listpack"
        }
    }

    fn slot_of(&self, member: &[u8]) -> Option<u32> {
        let tree = &self.tree;
        self.index
            .find(hash_key(member), |&i| tree.node(i).member[..] == *member)
            .copied()
    }

    /// The score of `member`.
    pub fn score(&self, member: &[u8]) -> Option<f64> {
        self.slot_of(member).map(|i| self.tree.node(i).score)
    }

    /// Sets `member`'s score, adding it if new. Returns the old score.
    pub fn insert(&mut self, member: &[u8], score: f64) -> Option<f64> {
        let old = self.score(member);
        match old {
            Some(s) if s == score => return old,
            Some(_) => {
                self.remove(member);
            }
            None => {}
        }
        let m = Bytes::copy_from_slice(member);
        self.elem_bytes += alloc_size(m.len());
        let limits = EncodingLimits::current();
        if m.len() as u64 > limits.zset_max_listpack_value
            || self.len() as u64 >= limits.zset_max_listpack_entries
        {
            self.skiplist = true;
        }
        let id = self.tree.insert(score, m, member);
        let tree = &self.tree;
        self.index
            .insert_unique(hash_key(member), id, |&i| hash_key(&tree.node(i).member));
        old
    }

    /// Removes `member`. Returns whether it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        let tree = &self.tree;
        let Ok(slot) = self
            .index
            .find_entry(hash_key(member), |&i| tree.node(i).member[..] == *member)
        else {
            return false;
        };
        let (id, _) = slot.remove();
        let m = self.tree.remove(id, member);
        self.elem_bytes -= alloc_size(m.len());
        if self.is_empty() {
            self.index = HashTable::new();
        }
        true
    }

    /// 0-based rank of `member` in ascending order.
    pub fn rank(&self, member: &[u8]) -> Option<usize> {
        let score = self.score(member)?;
        Some(self.tree.count_before(|n| {
            super::ostree::cmp_elem((n.score, &n.member), (score, member)).is_lt()
        }))
    }

    /// The members and scores at ranks `from..to`, ascending.
    pub fn range_by_rank(&self, from: usize, to: usize) -> Vec<(Bytes, f64)> {
        self.tree
            .ranks(from, to)
            .into_iter()
            .map(|i| {
                let n = self.tree.node(i);
                (n.member.clone(), n.score)
            })
            .collect()
    }

    /// The rank range `[first, end)` of members whose score lies within
    /// `min..max`. O(log n).
    pub fn score_ranks(&self, min: ScoreBound, max: ScoreBound) -> (usize, usize) {
        let first = self.tree.count_before(|n: &Node| {
            n.score < min.value || (min.exclusive && n.score == min.value)
        });
        let end = self.tree.count_before(|n: &Node| {
            n.score < max.value || (!max.exclusive && n.score == max.value)
        });
        (first, end.max(first))
    }

    /// The rank range `[first, end)` of members within the lexicographic
    /// range `min..max`. Meaningful when all scores are equal, as in Redis.
    pub fn lex_ranks(&self, min: &LexBound, max: &LexBound) -> (usize, usize) {
        let below = |b: &LexBound, is_max: bool| {
            let b = b.clone();
            move |n: &Node| match &b {
                LexBound::Min => false,
                LexBound::Max => true,
                LexBound::Incl(m) if is_max => n.member[..] <= m[..],
                LexBound::Excl(m) if is_max => n.member[..] < m[..],
                LexBound::Incl(m) => n.member[..] < m[..],
                LexBound::Excl(m) => n.member[..] <= m[..],
            }
        };
        let first = self.tree.count_before(below(min, false));
        let end = self.tree.count_before(below(max, true));
        (first, end.max(first))
    }

    /// Removes and returns up to `count` members from the low end (or the
    /// high end with `max`), in pop order. Reused by blocking pops.
    pub fn pop(&mut self, count: usize, max: bool) -> Vec<(Bytes, f64)> {
        let n = count.min(self.len());
        let picked = if max {
            let mut v = self.range_by_rank(self.len() - n, self.len());
            v.reverse();
            v
        } else {
            self.range_by_rank(0, n)
        };
        for (m, _) in &picked {
            self.remove(m);
        }
        picked
    }

    /// Removes the members at ranks `from..to`. Returns how many went.
    pub fn remove_ranks(&mut self, from: usize, to: usize) -> usize {
        let gone = self.range_by_rank(from, to);
        for (m, _) in &gone {
            self.remove(m);
        }
        gone.len()
    }

    /// The member and score at `rank`.
    pub fn at_rank(&self, rank: usize) -> Option<(&Bytes, f64)> {
        let n = self.tree.node(self.tree.select(rank)?);
        Some((&n.member, n.score))
    }

    /// One `ZSCAN` step over the treap's slots, which never move while a
    /// member stays, so a member present for the whole scan is returned.
    pub fn scan(&self, cursor: u64, count: usize, mut f: impl FnMut(&Bytes, f64)) -> u64 {
        let slots = self.tree.slot_count() as u64;
        let (mut c, mut visited) = (cursor, 0);
        while c < slots && visited < count.max(1) {
            if let Some(n) = self.tree.slot(c as usize) {
                f(&n.member, n.score);
            }
            visited += 1;
            c += 1;
        }
        if c >= slots {
            0
        } else {
            c
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zset(items: &[(f64, &str)]) -> ZSet {
        let mut z = ZSet::new();
        for (s, m) in items {
            z.insert(m.as_bytes(), *s);
        }
        z
    }

    #[test]
    fn score_ranges_honour_exclusive_bounds() {
        let z = zset(&[(1.0, "a"), (2.0, "b"), (2.0, "c"), (3.0, "d")]);
        let b = |value, exclusive| ScoreBound { value, exclusive };
        assert_eq!(z.score_ranks(b(2.0, false), b(2.0, false)), (1, 3));
        assert_eq!(z.score_ranks(b(2.0, true), b(f64::INFINITY, false)), (3, 4));
        assert_eq!(
            z.score_ranks(b(f64::NEG_INFINITY, false), b(2.0, true)),
            (0, 1)
        );
        assert_eq!(z.score_ranks(b(5.0, false), b(1.0, false)), (4, 4));
    }

    #[test]
    fn lex_ranges_and_updates() {
        let mut z = zset(&[(0.0, "a"), (0.0, "b"), (0.0, "c")]);
        let incl = |s: &str| LexBound::Incl(Bytes::copy_from_slice(s.as_bytes()));
        assert_eq!(z.lex_ranks(&LexBound::Min, &LexBound::Max), (0, 3));
        assert_eq!(z.lex_ranks(&incl("b"), &LexBound::Max), (1, 3));
        assert_eq!(
            z.lex_ranks(&LexBound::Excl("a".into()), &LexBound::Excl("c".into())),
            (1, 2)
        );
        assert_eq!(z.insert(b"a", 5.0), Some(0.0));
        assert_eq!(z.rank(b"a"), Some(2));
        assert_eq!(z.pop(1, true), [(Bytes::from("a"), 5.0)]);
        assert!(z.remove(b"b"));
        assert!(!z.remove(b"b"));
        assert_eq!(z.len(), 1);
    }
}
