//! The list type: a quicklist, a chain of packed [`Listpack`] nodes, with
//! an O(1) length and byte count.
//!
//! As in Redis's quicklist, each node holds entries up to
//! `list-max-listpack-size` (by default 8 KB of packed bytes; see
//! [`EncodingLimits::list_node_limits`]), so an element costs its bytes
//! plus two, instead of a 32-byte handle and an allocation of its own. Pushes
//! and pops at either end touch one end node, O(node size), which the limit
//! bounds; indexing walks node counts from the nearer end, O(nodes), then one
//! node. A list of one node keeps it inline (no chain allocation), which is
//! what every short list is; `OBJECT ENCODING` says `quicklist` either way,
//! as Redis 7.0 does. `list-compress-depth` is accepted but nodes are never
//! compressed.

use bytes::Bytes;

use super::listpack::{Listpack, FIRST};
use super::quicklist::{fits, Chain};
use super::{EncodingLimits, NodeLimits};
use crate::memory::alloc_size;
use crate::value::PackedKind;

/// Which end of a list an operation works on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The head (`LPUSH`, `LPOP`, index 0).
    Left,
    /// The tail (`RPUSH`, `RPOP`, index -1).
    Right,
}

/// A Redis list. See the module docs.
///
/// Memory: one node, its listpack's allocation; a chain, the box, the node
/// vector's buffer and every node's allocation (kept in `node_bytes`).
#[derive(Clone, Debug, Default)]
pub struct List(Repr);

#[derive(Clone, Debug)]
pub(crate) enum Repr {
    Packed(Listpack),
    Chain(Box<Chain>),
}

impl Default for Repr {
    fn default() -> Repr {
        Repr::Packed(Listpack::new())
    }
}

impl PartialEq for List {
    fn eq(&self, other: &List) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for List {}

fn limits() -> NodeLimits {
    EncodingLimits::current().list_node_limits()
}

impl List {
    /// An empty list.
    pub fn new() -> List {
        List::default()
    }

    fn nodes(&self) -> &[Listpack] {
        match &self.0 {
            Repr::Packed(lp) => std::slice::from_ref(lp),
            Repr::Chain(c) => &c.nodes,
        }
    }

    /// Number of quicklist nodes (1 for a packed list).
    pub fn node_count(&self) -> usize {
        self.nodes().len()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Packed(lp) => lp.len(),
            Repr::Chain(c) => c.len,
        }
    }

    /// Whether the list has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Heap bytes the list owns. O(1).
    pub fn heap_bytes(&self) -> usize {
        match &self.0 {
            Repr::Packed(lp) => lp.heap_bytes(),
            Repr::Chain(c) => {
                alloc_size(size_of::<Chain>())
                    + alloc_size(c.nodes.capacity() * size_of::<Listpack>())
                    + c.node_bytes
            }
        }
    }

    /// `quicklist`, whatever the size, as Redis 7.0 reports (7.2 says
    /// `listpack` for a list of one small node).
    pub fn encoding(&self) -> &'static str {
        "quicklist"
    }

    /// Runs `f` on the chain form, then keeps a chain of at most one node
    /// inline again.
    fn edit<R>(&mut self, f: impl FnOnce(&mut Chain) -> R) -> R {
        // A chain is edited in place: taking it out of `self.0` would leave
        // an empty listpack behind, an allocation and a free on every push
        // to a long list (they showed in `LPUSH`'s profile).
        if let Repr::Chain(c) = &mut self.0 {
            let r = f(c);
            if c.nodes.len() <= 1 {
                if let Repr::Chain(c) = std::mem::take(&mut self.0) {
                    self.0 = c.settle();
                }
            }
            return r;
        }
        let lp = match std::mem::take(&mut self.0) {
            Repr::Packed(lp) => lp,
            Repr::Chain(_) => unreachable!("a chain was edited above"),
        };
        let mut c = Chain {
            len: lp.len(),
            node_bytes: lp.heap_bytes(),
            nodes: vec![lp],
        };
        let r = f(&mut c);
        self.0 = c.settle();
        r
    }

    /// Adds `v` at `end`.
    pub fn push(&mut self, end: End, v: &[u8]) {
        if let Repr::Packed(lp) = &mut self.0 {
            if fits(lp, v.len(), limits()) {
                match end {
                    End::Left => lp.insert(FIRST, &[v]),
                    End::Right => lp.push(v),
                }
                return;
            }
        }
        self.edit(|c| c.push(end, v, limits()));
    }

    /// Removes and returns the element at `end`. O(size of the end node).
    pub fn pop(&mut self, end: End) -> Option<Bytes> {
        match &mut self.0 {
            Repr::Packed(lp) => {
                let off = match end {
                    End::Left => (lp.len() > 0).then_some(FIRST),
                    End::Right => lp.last(),
                }?;
                let v = Bytes::copy_from_slice(lp.get(off));
                lp.delete(off, 1);
                Some(v)
            }
            Repr::Chain(c) => {
                // A chain always has two nodes or more, none of them empty.
                let ni = match end {
                    End::Left => 0,
                    End::Right => c.nodes.len() - 1,
                };
                let lp = &c.nodes[ni];
                let off = match end {
                    End::Left => FIRST,
                    End::Right => lp.last()?,
                };
                let v = Bytes::copy_from_slice(lp.get(off));
                c.edit_node(ni, |lp| lp.delete(off, 1));
                c.len -= 1;
                if c.nodes[ni].len() == 0 {
                    self.edit(Chain::drop_empty);
                }
                Some(v)
            }
        }
    }

    /// Removes up to `count` elements from `end`, in pop order.
    pub fn pop_many(&mut self, end: End, count: usize) -> Vec<Bytes> {
        if count == 1 {
            return self.pop(end).into_iter().collect();
        }
        let mut out = Vec::with_capacity(count.min(self.len()));
        self.pop_many_with(end, count, |v| out.push(Bytes::copy_from_slice(v)));
        out
    }

    /// Removes up to `count` elements from `end`, showing each to `f` in pop
    /// order first, so a caller that only copies them somewhere (a reply)
    /// copies them once. Returns how many were removed.
    pub fn pop_many_with(&mut self, end: End, count: usize, mut f: impl FnMut(&[u8])) -> usize {
        let n = count.min(self.len());
        if n == 0 {
            return 0;
        }
        let from = match end {
            End::Left => 0,
            End::Right => self.len() - n,
        };
        match end {
            End::Left => self.iter_from(from, n).for_each(&mut f),
            // The iterator walks head to tail; a right pop reports the tail
            // first.
            End::Right => {
                let items: Vec<&[u8]> = self.iter_from(from, n).collect();
                items.into_iter().rev().for_each(&mut f);
            }
        }
        self.edit(|c| c.remove_range(from, n));
        n
    }

    /// Resolves a Redis index (negative counts from the tail) to a position.
    pub fn resolve(&self, index: i64) -> Option<usize> {
        let len = self.len() as i64;
        let i = if index < 0 { len + index } else { index };
        (0..len).contains(&i).then_some(i as usize)
    }

    /// `(node, offset)` of position `i` (`i < len`), walking node counts
    /// from the nearer end.
    fn locate(&self, i: usize) -> (usize, usize) {
        let nodes = self.nodes();
        let (ni, within) = if i < self.len() / 2 {
            let mut base = 0;
            let mut ni = 0;
            while base + nodes[ni].len() <= i {
                base += nodes[ni].len();
                ni += 1;
            }
            (ni, i - base)
        } else {
            let mut top = self.len();
            let mut ni = nodes.len() - 1;
            while top - nodes[ni].len() > i {
                top -= nodes[ni].len();
                ni -= 1;
            }
            (ni, i - (top - nodes[ni].len()))
        };
        (ni, nodes[ni].seek(within))
    }

    /// The element at a Redis index.
    pub fn get(&self, index: i64) -> Option<&[u8]> {
        let i = self.resolve(index)?;
        let (ni, off) = self.locate(i);
        Some(self.nodes()[ni].get(off))
    }

    /// Replaces the element at a Redis index. Returns `false` when out of range.
    pub fn set(&mut self, index: i64, v: &[u8]) -> bool {
        let Some(i) = self.resolve(index) else {
            return false;
        };
        let (ni, off) = self.locate(i);
        self.edit(|c| c.replace_in(ni, off, v, limits()));
        true
    }

    /// Clamps a Redis `start stop` range to positions, `None` when empty.
    pub fn range_bounds(&self, start: i64, stop: i64) -> Option<(usize, usize)> {
        let len = self.len() as i64;
        let start = if start < 0 {
            (len + start).max(0)
        } else {
            start
        };
        let stop = if stop < 0 {
            len + stop
        } else {
            stop.min(len - 1)
        };
        (start <= stop && start < len).then_some((start as usize, stop as usize))
    }

    /// Elements in the Redis range `start..=stop`.
    pub fn range(&self, start: i64, stop: i64) -> Iter<'_> {
        match self.range_bounds(start, stop) {
            Some((a, b)) => self.iter_from(a, b - a + 1),
            None => self.iter_from(0, 0),
        }
    }

    /// `n` elements from position `from` on.
    fn iter_from(&self, from: usize, n: usize) -> Iter<'_> {
        let (node, off) = if n == 0 {
            (0, FIRST)
        } else {
            self.locate(from)
        };
        Iter {
            nodes: self.nodes(),
            node,
            off,
            left: n,
        }
    }

    /// All elements, head to tail.
    pub fn iter(&self) -> Iter<'_> {
        self.iter_from(0, self.len())
    }

    /// Keeps only the Redis range `start..=stop` (`LTRIM`).
    pub fn trim(&mut self, start: i64, stop: i64) {
        let len = self.len();
        match self.range_bounds(start, stop) {
            Some((a, b)) => self.edit(|c| {
                c.remove_range(b + 1, len - b - 1);
                c.remove_range(0, a);
            }),
            None => self.edit(|c| c.remove_range(0, len)),
        }
    }

    /// Inserts `v` before or after the first occurrence of `pivot`.
    /// Returns the new length, or `None` if the pivot is absent.
    pub fn insert_at_pivot(&mut self, pivot: &[u8], v: &[u8], after: bool) -> Option<usize> {
        let (ni, off) = self.nodes().iter().enumerate().find_map(|(ni, lp)| {
            let mut off = FIRST;
            while off < lp.end() {
                let (data, next) = lp.entry(off);
                if data == pivot {
                    return Some((ni, if after { next } else { off }));
                }
                off = next;
            }
            None
        })?;
        self.edit(|c| c.insert_in(ni, off, v, limits()));
        Some(self.len())
    }

    /// Removes occurrences of `v`: the first `count` from the head when
    /// positive, from the tail when negative, all when zero (`LREM`).
    pub fn remove_value(&mut self, v: &[u8], count: i64) -> usize {
        let limit = if count == 0 {
            usize::MAX
        } else {
            count.unsigned_abs() as usize
        };
        self.edit(|c| c.remove_matching(v, limit, count < 0))
    }

    /// Positions of `v` for `LPOS`: starting with the `rank`-th match
    /// (negative ranks search from the tail), at most `count` of them
    /// (0 = all), looking at no more than `maxlen` elements (0 = all).
    pub fn positions(&self, v: &[u8], rank: i64, count: usize, maxlen: usize) -> Vec<usize> {
        let len = self.len();
        let limit = if maxlen == 0 { len } else { maxlen.min(len) };
        let want = if count == 0 { usize::MAX } else { count };
        let mut skip = rank.unsigned_abs() as usize - 1;
        let mut out = Vec::new();
        let mut consider = |i: usize, x: &[u8], out: &mut Vec<usize>| {
            if x == v {
                if skip > 0 {
                    skip -= 1;
                } else {
                    out.push(i);
                }
            }
            out.len() < want
        };
        if rank > 0 {
            for (i, x) in self.iter().take(limit).enumerate() {
                if !consider(i, x, &mut out) {
                    break;
                }
            }
        } else {
            let mut i = len;
            'nodes: for lp in self.nodes().iter().rev() {
                let mut off = lp.end();
                while off > FIRST {
                    if i == len - limit {
                        break 'nodes;
                    }
                    off = lp.prev(off);
                    i -= 1;
                    if !consider(i, lp.get(off), &mut out) {
                        break 'nodes;
                    }
                }
            }
        }
        out
    }
}

/// Iterator over a list's elements, head to tail.
pub struct Iter<'a> {
    nodes: &'a [Listpack],
    node: usize,
    off: usize,
    left: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.left == 0 {
            return None;
        }
        while self.off >= self.nodes[self.node].end() {
            self.node += 1;
            self.off = FIRST;
        }
        let (data, next) = self.nodes[self.node].entry(self.off);
        self.off = next;
        self.left -= 1;
        Some(data)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl List {
    /// The single node's bytes, if the list is one packed node.
    pub(crate) fn packed(&self) -> Option<(PackedKind, &[u8])> {
        match &self.0 {
            Repr::Packed(lp) => Some((PackedKind::List, lp.as_bytes())),
            Repr::Chain(_) => None,
        }
    }

    /// The one-node list whose bytes [`packed`](Self::packed) gave.
    pub(crate) fn from_packed(bytes: &[u8]) -> List {
        List(Repr::Packed(Listpack::from_bytes(bytes)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[&str]) -> List {
        let mut l = List::new();
        for i in items {
            l.push(End::Right, i.as_bytes());
        }
        l
    }

    fn items(l: &List) -> Vec<String> {
        l.iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect()
    }

    #[test]
    fn bytes_follow_pushes_and_pops() {
        let mut l = List::new();
        let empty = l.heap_bytes();
        l.push(End::Left, b"abc");
        l.push(End::Right, &[b'x'; 100]);
        assert!(l.heap_bytes() > empty + 100);
        l.pop(End::Right);
        l.pop(End::Left);
        assert_eq!(l.heap_bytes(), empty);
    }

    #[test]
    fn trim_keeps_the_range() {
        let mut l = list(&["a", "b", "c", "d"]);
        l.trim(1, -2);
        assert_eq!(items(&l), ["b", "c"]);
        l.trim(5, 10);
        assert!(l.is_empty());
    }

    #[test]
    fn lrem_counts_from_either_end() {
        let mut l = list(&["a", "b", "a", "c", "a"]);
        assert_eq!(l.remove_value(b"a", -2), 2);
        assert_eq!(items(&l), ["a", "b", "c"]);
        assert_eq!(l.remove_value(b"a", 0), 1);
        assert_eq!(items(&l), ["b", "c"]);
    }

    #[test]
    fn lpos_ranks_and_maxlen() {
        let l = list(&["a", "b", "a", "c", "a"]);
        assert_eq!(l.positions(b"a", 1, 0, 0), [0, 2, 4]);
        assert_eq!(l.positions(b"a", 2, 1, 0), [2]);
        assert_eq!(l.positions(b"a", -1, 2, 0), [4, 2]);
        assert_eq!(l.positions(b"a", 1, 0, 2), [0]);
    }
}
