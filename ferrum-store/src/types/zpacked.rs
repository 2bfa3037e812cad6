//! A small sorted set packed in a listpack ([`Forward`]): member and score entries
//! alternating, in `(score, member)` order, as Redis's listpack-encoded zset.
//!
//! Scores are stored compactly (see [`score_bytes`]): an integral score as
//! its shortest integer bytes, anything else as an `f64`. Every operation
//! walks the entries, O(n); the sorted set converts to its skiplist form
//! before n passes `zset-max-listpack-entries`.

use bytes::Bytes;

use super::listpack::{read_score, score_bytes, Forward, FIRST};
use super::ostree::cmp_elem;
use super::zset::{LexBound, ScoreBound};

/// A packed sorted set. See the module docs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ZPacked(pub(crate) Forward);

impl ZPacked {
    pub(crate) fn len(&self) -> usize {
        self.0.len() / 2
    }

    /// Every `(member, score)` in order, with the member's offset.
    pub(crate) fn pairs(&self) -> impl Iterator<Item = (usize, &[u8], f64)> + '_ {
        let lp = &self.0;
        let mut off = FIRST;
        std::iter::from_fn(move || {
            if off >= lp.end() {
                return None;
            }
            let at = off;
            let (m, next) = lp.entry(off);
            let (s, after) = lp.entry(next);
            off = after;
            Some((at, m, read_score(s)))
        })
    }

    pub(crate) fn score(&self, member: &[u8]) -> Option<f64> {
        self.find(member).map(|(_, s)| s)
    }

    /// The offset of `member`'s entry and its score.
    pub(crate) fn find(&self, member: &[u8]) -> Option<(usize, f64)> {
        let off = self.0.find(member, 2)?;
        Some((off, read_score(self.0.get(self.0.next(off)))))
    }

    /// Removes the member whose entry is at `off` (from [`find`](Self::find)).
    pub(crate) fn remove_at(&mut self, off: usize) {
        self.0.delete(off, 2);
    }

    /// Inserts a member known to be absent, at its place in the order.
    pub(crate) fn insert_new(&mut self, member: &[u8], score: f64) {
        let at = self
            .pairs()
            .find(|&(_, m, s)| cmp_elem((s, m), (score, member)).is_gt())
            .map_or(self.0.end(), |(off, _, _)| off);
        let mut buf = [0; 8];
        let n = score_bytes(score, &mut buf);
        self.0.insert(at, &[member, &buf[..n]]);
    }

    pub(crate) fn remove(&mut self, member: &[u8]) -> bool {
        let found = self.find(member);
        if let Some((off, _)) = found {
            self.remove_at(off);
        }
        found.is_some()
    }

    pub(crate) fn rank(&self, member: &[u8]) -> Option<usize> {
        self.pairs().position(|(_, m, _)| m == member)
    }

    pub(crate) fn range_by_rank(&self, from: usize, to: usize) -> Vec<(Bytes, f64)> {
        self.pairs()
            .skip(from)
            .take(to.saturating_sub(from))
            .map(|(_, m, s)| (Bytes::copy_from_slice(m), s))
            .collect()
    }

    pub(crate) fn at_rank(&self, rank: usize) -> Option<(&[u8], f64)> {
        self.pairs().nth(rank).map(|(_, m, s)| (m, s))
    }

    pub(crate) fn score_ranks(&self, min: ScoreBound, max: ScoreBound) -> (usize, usize) {
        let first = self
            .pairs()
            .filter(|&(_, _, s)| s < min.value || (min.exclusive && s == min.value))
            .count();
        let end = self
            .pairs()
            .filter(|&(_, _, s)| s < max.value || (!max.exclusive && s == max.value))
            .count();
        (first, end.max(first))
    }

    pub(crate) fn lex_ranks(&self, min: &LexBound, max: &LexBound) -> (usize, usize) {
        let below = |b: &LexBound, is_max: bool, m: &[u8]| match b {
            LexBound::Min => false,
            LexBound::Max => true,
            LexBound::Incl(x) if is_max => m <= &x[..],
            LexBound::Excl(x) if is_max => m < &x[..],
            LexBound::Incl(x) => m < &x[..],
            LexBound::Excl(x) => m <= &x[..],
        };
        let first = self.pairs().filter(|p| below(min, false, p.1)).count();
        let end = self.pairs().filter(|p| below(max, true, p.1)).count();
        (first, end.max(first))
    }

    /// Removes the members at ranks `from..to` (clamped). Returns how many.
    pub(crate) fn remove_ranks(&mut self, from: usize, to: usize) -> usize {
        let to = to.min(self.len());
        if from >= to {
            return 0;
        }
        let start = self.0.seek(2 * from);
        let mut stop = start;
        for _ in 0..2 * (to - from) {
            stop = self.0.next(stop);
        }
        self.0.delete_bytes(start, stop, 2 * (to - from));
        to - from
    }
}
