//! The node chain behind a long [`List`](super::List): a quicklist, Redis's
//! name for a list of packed nodes.
//!
//! Every node is a [`Listpack`] with back lengths, holding entries up to
//! `list-max-listpack-size` (see
//! [`EncodingLimits::list_node_limits`](super::EncodingLimits::list_node_limits)).
//! The chain keeps the element count and the sum of its nodes' allocation
//! sizes, so length and memory are O(1). Nodes are kept in a `Vec`: a new
//! node at the head moves the 24-byte node handles, once per node filled
//! (about every 8 KB of elements), which costs less than a deque's extra
//! allocation for every short list. A chain always has two nodes or more
//! and no empty one; with fewer, [`Chain::settle`] hands the list back its
//! single node inline.

use super::list::{End, Repr};
use super::listpack::{Listpack, FIRST};
use super::NodeLimits;

/// The node chain. See the module docs.
#[derive(Clone, Debug, Default)]
pub(crate) struct Chain {
    pub(crate) nodes: Vec<Listpack>,
    pub(crate) len: usize,
    pub(crate) node_bytes: usize,
}

/// Whether `node` may take one more entry of `len` bytes. An element of
/// the plain threshold or longer shares its node with nothing.
pub(crate) fn fits(node: &Listpack, len: usize, limits: NodeLimits) -> bool {
    node.len() == 0
        || (node.len() < limits.entries
            && node.bytes() + Listpack::<true>::entry_size(len) <= limits.bytes
            && len < limits.plain
            && !is_plain(node, limits))
}

/// Whether `node` is one element of the plain threshold or longer.
fn is_plain(node: &Listpack, limits: NodeLimits) -> bool {
    node.len() == 1 && node.get(FIRST).len() >= limits.plain
}

impl Chain {
    /// The representation to keep: inline when one node (or none) is left.
    pub(crate) fn settle(mut self) -> Repr {
        if self.nodes.len() <= 1 {
            Repr::Packed(self.nodes.pop().unwrap_or_default())
        } else {
            Repr::Chain(Box::new(self))
        }
    }

    /// Runs `f` on node `ni`, keeping `node_bytes` right.
    pub(crate) fn edit_node<R>(&mut self, ni: usize, f: impl FnOnce(&mut Listpack) -> R) -> R {
        let before = self.nodes[ni].heap_bytes();
        let r = f(&mut self.nodes[ni]);
        self.node_bytes = self.node_bytes + self.nodes[ni].heap_bytes() - before;
        r
    }

    pub(crate) fn add_node(&mut self, at: usize, lp: Listpack) {
        self.node_bytes += lp.heap_bytes();
        self.nodes.insert(at, lp);
    }

    pub(crate) fn push(&mut self, end: End, v: &[u8], limits: NodeLimits) {
        self.len += 1;
        let ni = match end {
            End::Left => 0,
            End::Right => self.nodes.len().wrapping_sub(1),
        };
        if self
            .nodes
            .get(ni)
            .is_some_and(|lp| fits(lp, v.len(), limits))
        {
            self.edit_node(ni, |lp| match end {
                End::Left => lp.insert(FIRST, &[v]),
                End::Right => lp.push(v),
            });
            return;
        }
        let mut lp = Listpack::new();
        lp.push(v);
        let at = if end == End::Left {
            0
        } else {
            self.nodes.len()
        };
        self.add_node(at, lp);
    }

    /// Inserts `v` at offset `off` of node `ni`, splitting the node in two
    /// if it then exceeds the limits; an element of the plain threshold or
    /// longer gets a node of its own there.
    pub(crate) fn insert_in(&mut self, ni: usize, off: usize, v: &[u8], limits: NodeLimits) {
        if v.len() >= limits.plain {
            self.len += 1;
            self.put_alone(ni, off, v);
            return;
        }
        self.len += 1;
        let full = !fits(&self.nodes[ni], v.len(), limits);
        self.edit_node(ni, |lp| lp.insert(off, &[v]));
        if full && self.nodes[ni].len() > 1 {
            let half = self.nodes[ni].len() / 2;
            let tail = self.edit_node(ni, |lp| {
                let at = lp.seek(half);
                lp.split_off(at, lp.len() - half)
            });
            self.add_node(ni + 1, tail);
        }
    }

    /// Replaces the entry at offset `off` of node `ni` with `v`. In place,
    /// unless `v` is of the plain threshold or longer, or would overflow
    /// a node it shares: then it moves to a node of its own there.
    pub(crate) fn replace_in(&mut self, ni: usize, off: usize, v: &[u8], limits: NodeLimits) {
        let node = &self.nodes[ni];
        let alone = node.len() > 1
            && (v.len() >= limits.plain
                || node.bytes() - (node.next(off) - off) + Listpack::<true>::entry_size(v.len())
                    > limits.bytes);
        if !alone {
            self.edit_node(ni, |lp| lp.replace(off, v));
            return;
        }
        self.edit_node(ni, |lp| lp.delete(off, 1));
        self.put_alone(ni, off, v);
        self.drop_empty();
    }

    /// Puts `v` in a node of its own, where offset `off` of node `ni` is:
    /// the node is split there. The caller counts the element.
    fn put_alone(&mut self, ni: usize, off: usize, v: &[u8]) {
        let mut lp = Listpack::new();
        lp.push(v);
        let node = &self.nodes[ni];
        let at = if off == FIRST {
            ni
        } else if off >= node.end() {
            ni + 1
        } else {
            let before = std::iter::successors(Some(FIRST), |&o| Some(node.next(o)))
                .take_while(|&o| o < off)
                .count();
            let tail = self.edit_node(ni, |lp| lp.split_off(off, lp.len() - before));
            self.add_node(ni + 1, tail);
            ni + 1
        };
        self.add_node(at, lp);
    }

    /// Removes `n` elements from position `from` on.
    pub(crate) fn remove_range(&mut self, from: usize, n: usize) {
        if n == 0 {
            return;
        }
        let (lo, hi) = (from, from + n);
        let mut base = 0;
        for ni in 0..self.nodes.len() {
            let count = self.nodes[ni].len();
            let (a, b) = (lo.max(base), hi.min(base + count));
            if a < b {
                self.edit_node(ni, |lp| {
                    let off = lp.seek(a - base);
                    lp.delete(off, b - a);
                });
            }
            base += count;
        }
        self.len -= n;
        self.drop_empty();
    }

    pub(crate) fn drop_empty(&mut self) {
        let before = self.nodes.len();
        self.nodes.retain(|lp| lp.len() > 0);
        if self.nodes.len() != before {
            self.node_bytes = self.nodes.iter().map(Listpack::heap_bytes).sum();
            if self.nodes.capacity() > 8 && self.nodes.len() * 4 < self.nodes.capacity() {
                self.nodes.shrink_to(self.nodes.len() * 2);
            }
        }
    }

    /// Removes up to `limit` entries equal to `v`, from the tail if `back`.
    pub(crate) fn remove_matching(&mut self, v: &[u8], limit: usize, back: bool) -> usize {
        let mut removed = 0;
        let order: Vec<usize> = if back {
            (0..self.nodes.len()).rev().collect()
        } else {
            (0..self.nodes.len()).collect()
        };
        for ni in order {
            if removed == limit {
                break;
            }
            let lp = &self.nodes[ni];
            let mut hits = Vec::new();
            let mut off = FIRST;
            while off < lp.end() {
                let (data, next) = lp.entry(off);
                if data == v {
                    hits.push(off);
                }
                off = next;
            }
            if back {
                hits.reverse();
            }
            hits.truncate(limit - removed);
            removed += hits.len();
            hits.sort_unstable_by(|a, b| b.cmp(a));
            self.edit_node(ni, |lp| hits.iter().for_each(|&off| lp.delete(off, 1)));
        }
        self.len -= removed;
        self.drop_empty();
        removed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nodes of up to 8 KiB and a plain threshold of 10 bytes: set per
    /// call, since the process-wide threshold is shared by every test.
    const LIMITS: NodeLimits = NodeLimits {
        entries: usize::MAX,
        bytes: 8192,
        plain: 10,
    };

    fn chain(items: &[&str]) -> Chain {
        let mut c = Chain::default();
        items
            .iter()
            .for_each(|v| c.push(End::Right, v.as_bytes(), LIMITS));
        c
    }

    /// Each node's elements, head to tail.
    fn layout(c: &Chain) -> Vec<Vec<String>> {
        c.nodes
            .iter()
            .map(|lp| {
                lp.iter()
                    .map(|v| String::from_utf8_lossy(v).into_owned())
                    .collect()
            })
            .collect()
    }

    fn offset(c: &Chain, ni: usize, i: usize) -> usize {
        c.nodes[ni].seek(i)
    }

    #[test]
    fn an_element_of_the_plain_threshold_sits_alone() {
        let mut c = chain(&["a", "b", "0123456789", "c", "d"]);
        assert_eq!(
            layout(&c),
            [vec!["a", "b"], vec!["0123456789"], vec!["c", "d"]]
        );
        c.push(End::Left, b"e", LIMITS);
        assert_eq!(layout(&c)[0], ["e", "a", "b"]);
        assert_eq!(c.len, 6);
    }

    #[test]
    fn a_long_insert_splits_its_node() {
        let mut c = chain(&["a", "b", "c"]);
        c.insert_in(0, offset(&c, 0, 1), b"long element", LIMITS);
        assert_eq!(
            layout(&c),
            [vec!["a"], vec!["long element"], vec!["b", "c"]]
        );
        // At either end of a node: no empty node is left behind.
        c.insert_in(2, FIRST, b"another long", LIMITS);
        c.insert_in(0, offset(&c, 0, 0), b"first long!", LIMITS);
        assert_eq!(c.nodes.len(), 5);
        assert!(c.nodes.iter().all(|lp| lp.len() > 0));
        assert_eq!(c.len, 6);
    }

    #[test]
    fn replacing_moves_a_long_value_out_and_keeps_short_ones_in_place() {
        let mut c = chain(&["a", "b", "c", "0123456789"]);
        c.replace_in(0, offset(&c, 0, 1), b"long element", LIMITS);
        assert_eq!(
            layout(&c),
            [
                vec!["a"],
                vec!["long element"],
                vec!["c"],
                vec!["0123456789"]
            ]
        );
        // A plain node takes a short value in place.
        c.replace_in(3, FIRST, b"x", LIMITS);
        assert_eq!(layout(&c)[3], ["x"]);
        c.replace_in(0, FIRST, b"long at the head", LIMITS);
        assert_eq!(layout(&c)[0], ["long at the head"]);
        assert_eq!(c.len, 4);
        let bytes: usize = c.nodes.iter().map(Listpack::heap_bytes).sum();
        assert_eq!(c.node_bytes, bytes);
    }

    #[test]
    fn a_replacement_that_overflows_a_shared_node_moves_out() {
        let limits = NodeLimits {
            plain: usize::MAX,
            bytes: 64,
            ..LIMITS
        };
        let mut c = Chain::default();
        ["a", "b", "c"]
            .iter()
            .for_each(|v| c.push(End::Right, v.as_bytes(), limits));
        c.replace_in(0, offset(&c, 0, 2), &[b'z'; 100], limits);
        assert_eq!(c.nodes.len(), 2);
        assert_eq!(layout(&c)[0], ["a", "b"]);
    }
}
