//! The sorted-set type: members ordered by `(score, member)`, packed while
//! small, and beyond that with O(1) score lookup and O(log n) rank, range and
//! count.
//!
//! A sorted set starts packed ([`ZPacked`], a listpack walked in O(n)) and
//! converts for good once it would hold more than `zset-max-listpack-entries`
//! members or a member longer than `zset-max-listpack-value` bytes (see
//! [`EncodingLimits`]). The large form has two structures, as in Redis: an
//! order-statistics treap ([`ostree`]) for the order, and a hash index from
//! member to the treap slot holding it (the member bytes are stored once, in
//! the node). `OBJECT ENCODING` calls it `skiplist`, as Redis does.
//!
//! [`ostree`]: super::ostree
//! [`ZPacked`]: super::zpacked

use bytes::Bytes;
use hashbrown::HashTable;

use super::dense::hash_key;
use super::elem::Elem;
use super::listpack::Forward;
use super::ostree::{Node, Tree};
use super::zpacked::ZPacked;
use super::EncodingLimits;
use crate::memory::alloc_size;
use crate::value::PackedKind;

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
/// Memory: packed, the listpack's one allocation; as a skiplist, the box,
/// the treap's arena (members inline up to 22 bytes, see `Elem`
/// (`types/elem.rs`)), the hash index's buckets, and the allocation of each
/// member too long to sit inline (`elem_bytes`), all O(1) to read.
#[derive(Clone, Debug, Default)]
pub struct ZSet(Repr);

#[derive(Clone, Debug)]
enum Repr {
    Packed(ZPacked),
    Skip(Box<Skip>),
}

impl Default for Repr {
    fn default() -> Repr {
        Repr::Packed(ZPacked::default())
    }
}

/// The large form: the treap for the order, the index for members.
#[derive(Clone, Debug, Default)]
struct Skip {
    tree: Tree,
    index: HashTable<u32>,
    elem_bytes: usize,
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
        match &self.0 {
            Repr::Packed(p) => p.len(),
            Repr::Skip(s) => s.len(),
        }
    }

    /// Whether the set has no members.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Heap bytes the sorted set owns. O(1).
    pub fn heap_bytes(&self) -> usize {
        match &self.0 {
            Repr::Packed(p) => p.0.heap_bytes(),
            Repr::Skip(s) => {
                let index = s.index.capacity() * (size_of::<u32>() + 1) * 8 / 7;
                alloc_size(size_of::<Skip>())
                    + s.tree.table_bytes()
                    + alloc_size(index)
                    + s.elem_bytes
            }
        }
    }

    /// `listpack` or `skiplist`, as `OBJECT ENCODING` reports.
    pub fn encoding(&self) -> &'static str {
        match self.0 {
            Repr::Packed(_) => "listpack",
            Repr::Skip(_) => "skiplist",
        }
    }

    /// The score of `member`.
    pub fn score(&self, member: &[u8]) -> Option<f64> {
        match &self.0 {
            Repr::Packed(p) => p.score(member),
            Repr::Skip(s) => s.score(member),
        }
    }

    /// Sets `member`'s score, adding it if new. Returns the old score.
    pub fn insert(&mut self, member: &[u8], score: f64) -> Option<f64> {
        if let Repr::Packed(p) = &mut self.0 {
            let found = p.find(member);
            let old = found.map(|(_, s)| s);
            if old == Some(score) {
                return old;
            }
            let limits = EncodingLimits::current();
            let len = p.len() + usize::from(old.is_none());
            if member.len() as u64 <= limits.zset_max_listpack_value
                && len as u64 <= limits.zset_max_listpack_entries
            {
                if let Some((off, _)) = found {
                    p.remove_at(off);
                }
                p.insert_new(member, score);
                return old;
            }
            self.convert();
        }
        let Repr::Skip(s) = &mut self.0 else {
            unreachable!("converted above")
        };
        s.insert(member, score)
    }

    /// Moves a packed sorted set to the skiplist form, for good.
    fn convert(&mut self) {
        let Repr::Packed(p) = &self.0 else {
            return;
        };
        let mut s = Skip::default();
        for (_, m, score) in p.pairs() {
            s.insert(m, score);
        }
        self.0 = Repr::Skip(Box::new(s));
    }

    /// Removes `member`. Returns whether it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match &mut self.0 {
            Repr::Packed(p) => p.remove(member),
            Repr::Skip(s) => s.remove(member),
        }
    }

    /// 0-based rank of `member` in ascending order.
    pub fn rank(&self, member: &[u8]) -> Option<usize> {
        match &self.0 {
            Repr::Packed(p) => p.rank(member),
            Repr::Skip(s) => s.rank(member),
        }
    }

    /// The members and scores at ranks `from..to`, ascending.
    pub fn range_by_rank(&self, from: usize, to: usize) -> Vec<(Bytes, f64)> {
        match &self.0 {
            Repr::Packed(p) => p.range_by_rank(from, to),
            Repr::Skip(s) => s.range_by_rank(from, to),
        }
    }

    /// The rank range `[first, end)` of members whose score lies within
    /// `min..max`. O(log n) as a skiplist.
    pub fn score_ranks(&self, min: ScoreBound, max: ScoreBound) -> (usize, usize) {
        match &self.0 {
            Repr::Packed(p) => p.score_ranks(min, max),
            Repr::Skip(s) => s.score_ranks(min, max),
        }
    }

    /// The rank range `[first, end)` of members within the lexicographic
    /// range `min..max`. Meaningful when all scores are equal, as in Redis.
    pub fn lex_ranks(&self, min: &LexBound, max: &LexBound) -> (usize, usize) {
        match &self.0 {
            Repr::Packed(p) => p.lex_ranks(min, max),
            Repr::Skip(s) => s.lex_ranks(min, max),
        }
    }

    /// Removes and returns up to `count` members from the low end (or the
    /// high end with `max`), in pop order. Reused by blocking pops.
    pub fn pop(&mut self, count: usize, max: bool) -> Vec<(Bytes, f64)> {
        if let Repr::Skip(s) = &mut self.0 {
            return std::iter::from_fn(|| s.pop_end(max)).take(count).collect();
        }
        let (len, n) = (self.len(), count.min(self.len()));
        let (from, to) = if max { (len - n, len) } else { (0, n) };
        let mut picked = self.range_by_rank(from, to);
        if max {
            picked.reverse();
        }
        self.remove_ranks(from, to);
        picked
    }

    /// Removes the members at ranks `from..to`. Returns how many went.
    pub fn remove_ranks(&mut self, from: usize, to: usize) -> usize {
        match &mut self.0 {
            Repr::Packed(p) => p.remove_ranks(from, to),
            Repr::Skip(s) => s.remove_ranks(from, to),
        }
    }

    /// The member and score at `rank`.
    pub fn at_rank(&self, rank: usize) -> Option<(&[u8], f64)> {
        match &self.0 {
            Repr::Packed(p) => p.at_rank(rank),
            Repr::Skip(s) => s.at_rank(rank),
        }
    }

    /// One `ZSCAN` step. A packed sorted set is returned whole in one call,
    /// as Redis does; a skiplist is walked by treap slot.
    pub fn scan(&self, cursor: u64, count: usize, mut f: impl FnMut(&[u8], f64)) -> u64 {
        match &self.0 {
            Repr::Packed(p) => {
                p.pairs().for_each(|(_, m, s)| f(m, s));
                0
            }
            Repr::Skip(s) => s.scan(cursor, count, f),
        }
    }
}

impl Skip {
    fn len(&self) -> usize {
        self.tree.len()
    }
    fn slot_of(&self, member: &[u8]) -> Option<u32> {
        let tree = &self.tree;
        self.index
            .find(hash_key(member), |&i| tree.node(i).member[..] == *member)
            .copied()
    }

    /// The score of `member`.
    pub(crate) fn score(&self, member: &[u8]) -> Option<f64> {
        self.slot_of(member).map(|i| self.tree.node(i).score)
    }

    pub(crate) fn insert(&mut self, member: &[u8], score: f64) -> Option<f64> {
        if let Some(id) = self.slot_of(member) {
            let old = self.tree.node(id).score;
            if old != score {
                self.tree.rescore(id, score);
            }
            return Some(old);
        }
        let m = Elem::new(member);
        self.elem_bytes += m.heap_bytes();
        let id = self.tree.insert(score, m);
        let tree = &self.tree;
        self.index
            .insert_unique(hash_key(member), id, |&i| hash_key(&tree.node(i).member));
        None
    }

    /// Removes `member`. Returns whether it was there.
    pub(crate) fn remove(&mut self, member: &[u8]) -> bool {
        let tree = &self.tree;
        let Ok(slot) = self
            .index
            .find_entry(hash_key(member), |&i| tree.node(i).member[..] == *member)
        else {
            return false;
        };
        let (id, _) = slot.remove();
        self.free_slot(id);
        true
    }

    /// Removes the lowest member (the highest with `max`) and returns it
    /// with its score: a walk down one edge of the tree, with no lookup by
    /// member bytes in the tree and no copy of them.
    pub(crate) fn pop_end(&mut self, max: bool) -> Option<(Bytes, f64)> {
        let id = self.tree.end(max)?;
        let score = self.tree.node(id).score;
        let hash = hash_key(&self.tree.node(id).member);
        if let Ok(slot) = self.index.find_entry(hash, |&i| i == id) {
            slot.remove();
        }
        Some((self.free_slot(id), score))
    }

    /// Takes the member in slot `id`, already out of the index, out of the
    /// tree and the byte count.
    fn free_slot(&mut self, id: u32) -> Bytes {
        let m = self.tree.remove(id);
        self.elem_bytes -= m.heap_bytes();
        if self.len() == 0 {
            self.index = HashTable::new();
        }
        m.into_bytes()
    }

    /// 0-based rank of `member` in ascending order.
    pub(crate) fn rank(&self, member: &[u8]) -> Option<usize> {
        let score = self.score(member)?;
        Some(self.tree.count_before(|n| {
            super::ostree::cmp_elem((n.score, &n.member), (score, member)).is_lt()
        }))
    }

    /// The members and scores at ranks `from..to`, ascending.
    pub(crate) fn range_by_rank(&self, from: usize, to: usize) -> Vec<(Bytes, f64)> {
        self.tree
            .ranks(from, to)
            .into_iter()
            .map(|i| {
                let n = self.tree.node(i);
                (Bytes::copy_from_slice(&n.member), n.score)
            })
            .collect()
    }

    /// The rank range `[first, end)` of members whose score lies within
    /// `min..max`. O(log n).
    pub(crate) fn score_ranks(&self, min: ScoreBound, max: ScoreBound) -> (usize, usize) {
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
    pub(crate) fn lex_ranks(&self, min: &LexBound, max: &LexBound) -> (usize, usize) {
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

    /// Removes the members at ranks `from..to`. Returns how many went.
    pub(crate) fn remove_ranks(&mut self, from: usize, to: usize) -> usize {
        let gone = self.range_by_rank(from, to);
        for (m, _) in &gone {
            self.remove(m);
        }
        gone.len()
    }

    /// The member and score at `rank`.
    pub(crate) fn at_rank(&self, rank: usize) -> Option<(&[u8], f64)> {
        let n = self.tree.node(self.tree.select(rank)?);
        Some((&n.member[..], n.score))
    }

    /// One `ZSCAN` step over the treap's slots, which never move while a
    /// member stays, so a member present for the whole scan is returned.
    pub(crate) fn scan(&self, cursor: u64, count: usize, mut f: impl FnMut(&[u8], f64)) -> u64 {
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

impl ZSet {
    /// The packed form's bytes, if the sorted set is packed.
    pub(crate) fn packed(&self) -> Option<(PackedKind, &[u8])> {
        match &self.0 {
            Repr::Packed(p) => Some((PackedKind::ZSet, p.0.as_bytes())),
            Repr::Skip(_) => None,
        }
    }

    /// The packed sorted set whose bytes [`packed`](Self::packed) gave.
    pub(crate) fn from_packed(bytes: &[u8]) -> ZSet {
        ZSet(Repr::Packed(ZPacked(Forward::from_bytes(bytes))))
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
