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

/// The node chain. See the module docs.
#[derive(Clone, Debug, Default)]
pub(crate) struct Chain {
    pub(crate) nodes: Vec<Listpack>,
    pub(crate) len: usize,
    pub(crate) node_bytes: usize,
}

/// Whether `node` may take one more entry of `len` bytes.
pub(crate) fn fits(node: &Listpack, len: usize, limits: (usize, usize)) -> bool {
    node.len() == 0
        || (node.len() < limits.0 && node.bytes() + Listpack::<true>::entry_size(len) <= limits.1)
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

    pub(crate) fn push(&mut self, end: End, v: &[u8], limits: (usize, usize)) {
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
    /// if it then exceeds the limits.
    pub(crate) fn insert_in(&mut self, ni: usize, off: usize, v: &[u8], limits: (usize, usize)) {
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
