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

use super::elem::Elem;

/// "No node".
pub(crate) const NIL: u32 = u32::MAX;

/// One element: its score, its member, its children and subtree size.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub(crate) score: f64,
    pub(crate) member: Elem,
    left: u32,
    right: u32,
    priority: u32,
    /// Elements in this subtree; 0 marks a free slot.
    size: u32,
}

/// Orders two elements by score, then member bytes, as Redis does. The
/// members are only reached on a tie: an inline [`Elem`] is a branch away
/// from its bytes, and most comparisons in a tree walk are decided by the
/// scores alone.
#[inline]
pub(crate) fn cmp_elem<A, B>(a: (f64, &A), b: (f64, &B)) -> Ordering
where
    A: AsRef<[u8]> + ?Sized,
    B: AsRef<[u8]> + ?Sized,
{
    a.0.partial_cmp(&b.0)
        .unwrap_or(Ordering::Equal)
        .then_with(|| a.1.as_ref().cmp(b.1.as_ref()))
}

/// Whether `a` sorts before `b` among members of equal score: by bytes.
#[inline(never)]
fn member_less(a: &Elem, b: &Elem) -> bool {
    a[..] < b[..]
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

    /// Whether the element in slot `a` sorts before the one in slot `b`.
    /// Every step of a tree walk asks this, and the scores decide it but
    /// on a tie; the member comparison is kept out of line so that this
    /// stays small enough to inline into the walks.
    #[inline]
    fn less(&self, a: u32, b: u32) -> bool {
        let (x, y) = (&self.nodes[a as usize], &self.nodes[b as usize]);
        match x.score.partial_cmp(&y.score) {
            Some(Ordering::Less) => true,
            Some(Ordering::Greater) => false,
            _ => member_less(&x.member, &y.member),
        }
    }

    /// Points the link that led to a subtree at `to`: `parent`'s left or
    /// right child, or the root when `parent` is [`NIL`].
    fn relink(&mut self, parent: u32, left: bool, to: u32) {
        match parent {
            NIL => self.root = to,
            p if left => self.nodes[p as usize].left = to,
            p => self.nodes[p as usize].right = to,
        }
    }

    /// Splits `t` into the nodes that sort before the element in slot `at`
    /// (which is not in `t`) and the rest.
    fn split(&mut self, t: u32, at: u32) -> (u32, u32) {
        if t == NIL {
            return (NIL, NIL);
        }
        if self.less(t, at) {
            let (l, r) = self.split(self.nodes[t as usize].right, at);
            self.nodes[t as usize].right = l;
            self.fix(t);
            (t, r)
        } else {
            let (l, r) = self.split(self.nodes[t as usize].left, at);
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

    /// One step of a descent from node `t` towards where the element in
    /// slot `id` belongs, counting it into `t`'s subtree (`grow`) or out of
    /// it. Returns whether the step went left, and the child it went to.
    fn step(&mut self, t: u32, id: u32, grow: bool) -> (bool, u32) {
        let left = self.less(id, t);
        let n = &mut self.nodes[t as usize];
        if grow {
            n.size += 1;
        } else {
            n.size -= 1;
        }
        (left, if left { n.left } else { n.right })
    }

    /// Links the lone node in slot `id` into the tree: one descent to where
    /// its priority puts it, counting it into every subtree on the way, and
    /// a split of the subtree found there into its two children. The
    /// subtree a random priority lands on is small (expected O(1) nodes to
    /// split), so this is a single O(log n) walk where split-then-merge
    /// walked the whole depth three times.
    fn attach(&mut self, id: u32) {
        let priority = self.nodes[id as usize].priority;
        let (mut parent, mut left, mut t) = (NIL, false, self.root);
        while t != NIL && self.nodes[t as usize].priority > priority {
            parent = t;
            (left, t) = self.step(t, id, true);
        }
        let (l, r) = self.split(t, id);
        let n = &mut self.nodes[id as usize];
        n.left = l;
        n.right = r;
        self.fix(id);
        self.relink(parent, left, id);
    }

    /// Unlinks the node in slot `id` from the tree, leaving it alone in its
    /// slot: one descent to it, uncounting it from every subtree on the way,
    /// then its two children merged in its place (expected O(1) work).
    fn detach(&mut self, id: u32) {
        let (mut parent, mut left, mut t) = (NIL, false, self.root);
        while t != id {
            // The node is in the tree, so the descent meets it before NIL.
            debug_assert!(t != NIL, "slot {id} is not in the tree");
            parent = t;
            (left, t) = self.step(t, id, false);
        }
        let n = &self.nodes[id as usize];
        let merged = self.merge(n.left, n.right);
        self.relink(parent, left, merged);
        let n = &mut self.nodes[id as usize];
        n.left = NIL;
        n.right = NIL;
        n.size = 1;
    }

    /// Inserts an element the caller guarantees is absent; returns its slot.
    pub(crate) fn insert(&mut self, score: f64, member: Elem) -> u32 {
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
        self.attach(id);
        id
    }

    /// Gives the element in slot `id` a new score, keeping its slot and
    /// member (`ZADD` and `ZINCRBY` of a present member: no allocation, and
    /// the hash index stays as it is).
    pub(crate) fn rescore(&mut self, id: u32, score: f64) {
        self.detach(id);
        self.nodes[id as usize].score = score;
        self.attach(id);
    }

    /// Removes the element in slot `id`, returning the stored member.
    pub(crate) fn remove(&mut self, id: u32) -> Elem {
        self.detach(id);
        let n = &mut self.nodes[id as usize];
        n.size = 0;
        let out = std::mem::take(&mut n.member);
        self.free.push(id);
        self.shrink_if_sparse();
        out
    }

    /// The slot of the first element (or, with `last`, the last one).
    /// O(log n).
    pub(crate) fn end(&self, last: bool) -> Option<u32> {
        let mut t = self.root;
        if t == NIL {
            return None;
        }
        loop {
            let n = &self.nodes[t as usize];
            let next = if last { n.right } else { n.left };
            if next == NIL {
                return Some(t);
            }
            t = next;
        }
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
            ids.push(t.insert(s, Elem::new(m.as_bytes())));
        }
        let order: Vec<_> = t
            .ranks(0, 10)
            .into_iter()
            .map(|i| t.node(i).member.to_vec())
            .collect();
        assert_eq!(order, [b"n", b"a", b"z", b"b", b"c"]);
        assert_eq!(t.count_before(|n| n.score < 2.0), 3);
        assert_eq!(&t.node(t.select(3).unwrap()).member[..], b"b");
        assert_eq!(&t.remove(ids[1])[..], b"z");
        let order: Vec<_> = t
            .ranks(1, 3)
            .into_iter()
            .map(|i| t.node(i).member.to_vec())
            .collect();
        assert_eq!(order, [b"a", b"b"]);
        assert_eq!(t.len(), 4);
    }

    /// Checks every node below `t`: order, heap by priority, subtree size.
    /// Returns the subtree's size.
    fn check(t: &Tree, n: u32) -> u32 {
        if n == NIL {
            return 0;
        }
        let node = t.node(n);
        for (child, before) in [(node.left, true), (node.right, false)] {
            if child != NIL {
                assert_eq!(t.less(child, n), before, "order at slot {n}");
                assert!(t.node(child).priority <= node.priority, "heap at slot {n}");
            }
        }
        let size = 1 + check(t, node.left) + check(t, node.right);
        assert_eq!(node.size, size, "size at slot {n}");
        size
    }

    #[test]
    fn attach_and_detach_keep_the_treap_invariants() {
        let mut t = Tree::default();
        let mut live = Vec::new();
        let mut rng = 7u64;
        for step in 0..3000u32 {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let score = f64::from((rng >> 40) as u32 % 50);
            match (rng >> 33) % 4 {
                0 | 1 => live.push(t.insert(score, Elem::new(step.to_string().as_bytes()))),
                2 if !live.is_empty() => {
                    let id = live[(rng >> 20) as usize % live.len()];
                    t.rescore(id, score);
                }
                _ if !live.is_empty() => {
                    let id = live.swap_remove((rng >> 20) as usize % live.len());
                    let member = t.node(id).member.clone();
                    assert_eq!(t.remove(id), member);
                }
                _ => {}
            }
            assert_eq!(check(&t, t.root) as usize, live.len());
        }
        let first = t.end(false).map(|i| t.node(i).score);
        let last = t.end(true).map(|i| t.node(i).score);
        let ranked: Vec<f64> = t
            .ranks(0, t.len())
            .iter()
            .map(|&i| t.node(i).score)
            .collect();
        assert_eq!(first, ranked.first().copied());
        assert_eq!(last, ranked.last().copied());
    }
}
