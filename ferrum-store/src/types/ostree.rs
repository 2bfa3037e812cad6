//! An order-statistics tree for sorted sets: a treap whose nodes know the
//! size of their subtree, stored in an arena.
//!
//! Redis uses a skip list with spans (Pugh, "Skip Lists: A Probabilistic
//! Alternative to Balanced Trees", CACM 1990; spans as in Redis's
//! `t_zset.c`). A treap (Seidel & Aragon, "Randomized Search Trees",
//! Algorithmica 1996) gives the same expected bounds with less code: each
//! node has a random priority, the tree is a binary search tree by
//! `(score, member)` and a heap by priority, so its expected depth is
//! O(log n). With subtree sizes, "how many elements sort before X" and
//! "the k-th element" are both one walk from the root, O(log n).
//!
//! Nodes live in a `Vec` and refer to each other by `u32` index; a removed
//! node's slot goes on a free list. A live node never moves, so an index is
//! a stable handle while the member is in the set: the sorted set's hash
//! index stores it, and `ZSCAN` uses slots as its cursor.

use std::cmp::Ordering;

use bytes::Bytes;

/// "No node".
pub(crate) const NIL: u32 = u32::MAX;

/// One element: its score, its member, its children and subtree size.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub(crate) score: f64,
    pub(crate) member: Bytes,
    left: u32,
    right: u32,
    priority: u32,
    /// Elements in this subtree; 0 marks a free slot.
    size: u32,
}

/// Orders two elements by score, then member bytes, as Redis does.
pub(crate) fn cmp_elem(a: (f64, &[u8]), b: (f64, &[u8])) -> Ordering {
    a.0.partial_cmp(&b.0)
        .unwrap_or(Ordering::Equal)
        .then_with(|| a.1.cmp(b.1))
}

/// The treap. See the module docs.
#[derive(Clone, Debug)]
pub(crate) struct Tree {
    nodes: Vec<Node>,
    free: Vec<u32>,
    root: u32,
    rng: u64,
}

impl Default for Tree {
    fn default() -> Tree {
        Tree {
            nodes: Vec::new(),
            free: Vec::new(),
            root: NIL,
            rng: 0x9e37_79b9_7f4a_7c15,
        }
    }
}

impl Tree {
    pub(crate) fn len(&self) -> usize {
        self.size(self.root) as usize
    }

    /// Heap bytes of the arena and its free list.
    pub(crate) fn table_bytes(&self) -> usize {
        crate::memory::alloc_size(self.nodes.capacity() * size_of::<Node>())
            + crate::memory::alloc_size(self.free.capacity() * size_of::<u32>())
    }

    fn size(&self, n: u32) -> u32 {
        if n == NIL {
            0
        } else {
            self.nodes[n as usize].size
        }
    }

    pub(crate) fn node(&self, n: u32) -> &Node {
        &self.nodes[n as usize]
    }

    /// The node in slot `i`, if that slot is live (for `ZSCAN`).
    pub(crate) fn slot(&self, i: usize) -> Option<&Node> {
        self.nodes.get(i).filter(|n| n.size > 0)
    }

    pub(crate) fn slot_count(&self) -> usize {
        self.nodes.len()
    }

    fn fix(&mut self, n: u32) {
        let (l, r) = (self.nodes[n as usize].left, self.nodes[n as usize].right);
        self.nodes[n as usize].size = 1 + self.size(l) + self.size(r);
    }

    fn next_priority(&mut self) -> u32 {
        // xorshift64*: deterministic, fast, and plenty random for balance.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        (self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
    }

    /// Splits `t` into the nodes for which `before` holds (a prefix of the
    /// order, since `before` must be monotone) and the rest.
    fn split(&mut self, t: u32, before: &impl Fn(&Node) -> bool) -> (u32, u32) {
        if t == NIL {
            return (NIL, NIL);
        }
        if before(&self.nodes[t as usize]) {
            let (l, r) = self.split(self.nodes[t as usize].right, before);
            self.nodes[t as usize].right = l;
            self.fix(t);
            (t, r)
        } else {
            let (l, r) = self.split(self.nodes[t as usize].left, before);
            self.nodes[t as usize].left = r;
            self.fix(t);
            (l, t)
        }
    }

    /// Joins two treaps where every node of `a` sorts before every node of `b`.
    fn merge(&mut self, a: u32, b: u32) -> u32 {
        if a == NIL {
            return b;
        }
        if b == NIL {
            return a;
        }
        if self.nodes[a as usize].priority > self.nodes[b as usize].priority {
            let r = self.merge(self.nodes[a as usize].right, b);
            self.nodes[a as usize].right = r;
            self.fix(a);
            a
        } else {
            let l = self.merge(a, self.nodes[b as usize].left);
            self.nodes[b as usize].left = l;
            self.fix(b);
            b
        }
    }

    /// Inserts an element the caller guarantees is absent; returns its slot.
    /// `key` is the member's bytes again, borrowed from the caller so that
    /// the stored handle is never cloned (a clone would add a shared header
    /// allocation to every member).
    pub(crate) fn insert(&mut self, score: f64, member: Bytes, key: &[u8]) -> u32 {
        let node = Node {
            score,
            member,
            left: NIL,
            right: NIL,
            priority: self.next_priority(),
            size: 1,
        };
        let id = match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        };
        let (l, r) = self.split(self.root, &|n| {
            cmp_elem((n.score, &n.member), (score, key)) == Ordering::Less
        });
        let l = self.merge(l, id);
        self.root = self.merge(l, r);
        id
    }

    /// Removes the element in slot `id`, whose member bytes are `member`,
    /// returning the stored member.
    pub(crate) fn remove(&mut self, id: u32, member: &[u8]) -> Bytes {
        let score = self.nodes[id as usize].score;
        let (l, r) = self.split(self.root, &|n| {
            cmp_elem((n.score, &n.member), (score, member)) == Ordering::Less
        });
        let (_mid, r) = self.split(r, &|n| {
            cmp_elem((n.score, &n.member), (score, member)) != Ordering::Greater
        });
        self.root = self.merge(l, r);
        let n = &mut self.nodes[id as usize];
        n.size = 0;
        n.left = NIL;
        n.right = NIL;
        let out = std::mem::take(&mut n.member);
        self.free.push(id);
        self.shrink_if_sparse();
        out
    }

    fn shrink_if_sparse(&mut self) {
        if self.len() == 0 {
            self.nodes = Vec::new();
            self.free = Vec::new();
        }
    }

    /// How many elements satisfy the monotone predicate `before` (which
    /// holds for a prefix of the order). O(log n).
    pub(crate) fn count_before(&self, before: impl Fn(&Node) -> bool) -> usize {
        let (mut t, mut count) = (self.root, 0);
        while t != NIL {
            let n = &self.nodes[t as usize];
            if before(n) {
                count += self.size(n.left) as usize + 1;
                t = n.right;
            } else {
                t = n.left;
            }
        }
        count
    }

    /// The slot of the element at 0-based `rank`. O(log n).
    pub(crate) fn select(&self, mut rank: usize) -> Option<u32> {
        let mut t = self.root;
        while t != NIL {
            let n = &self.nodes[t as usize];
            let left = self.size(n.left) as usize;
            match rank.cmp(&left) {
                Ordering::Less => t = n.left,
                Ordering::Equal => return Some(t),
                Ordering::Greater => {
                    rank -= left + 1;
                    t = n.right;
                }
            }
        }
        None
    }

    /// The slots of ranks `from..to`, in order: one O(log n) descent, then
    /// an in-order walk with an explicit stack.
    pub(crate) fn ranks(&self, from: usize, to: usize) -> Vec<u32> {
        let to = to.min(self.len());
        if from >= to {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(to - from);
        // Descend to `from`, stacking every node where we went left: those
        // are the in-order successors still to visit.
        let mut stack = Vec::new();
        let (mut t, mut rank) = (self.root, from);
        while t != NIL {
            let n = &self.nodes[t as usize];
            let left = self.size(n.left) as usize;
            match rank.cmp(&left) {
                Ordering::Less => {
                    stack.push(t);
                    t = n.left;
                }
                Ordering::Equal => {
                    stack.push(t);
                    break;
                }
                Ordering::Greater => {
                    rank -= left + 1;
                    t = n.right;
                }
            }
        }
        while out.len() < to - from {
            let Some(t) = stack.pop() else { break };
            out.push(t);
            let mut c = self.nodes[t as usize].right;
            while c != NIL {
                stack.push(c);
                c = self.nodes[c as usize].left;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_follow_score_then_member() {
        let mut t = Tree::default();
        let mut ids = Vec::new();
        for (s, m) in [(3.0, "c"), (1.0, "z"), (1.0, "a"), (2.0, "b"), (-1.0, "n")] {
            ids.push(t.insert(s, Bytes::from(m), m.as_bytes()));
        }
        let order: Vec<_> = t
            .ranks(0, 10)
            .into_iter()
            .map(|i| t.node(i).member.clone())
            .collect();
        assert_eq!(order, ["n", "a", "z", "b", "c"]);
        assert_eq!(t.count_before(|n| n.score < 2.0), 3);
        assert_eq!(t.node(t.select(3).unwrap()).member, "b");
        t.remove(ids[1], b"z");
        let order: Vec<_> = t
            .ranks(1, 3)
            .into_iter()
            .map(|i| t.node(i).member.clone())
            .collect();
        assert_eq!(order, ["a", "b"]);
        assert_eq!(t.len(), 4);
    }
}
