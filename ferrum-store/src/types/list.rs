//! The list type: a deque of byte strings with an O(1) byte count.

use std::collections::VecDeque;

use bytes::Bytes;

use crate::memory::alloc_size;

/// Which end of a list an operation works on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The head (`LPUSH`, `LPOP`, index 0).
    Left,
    /// The tail (`RPUSH`, `RPOP`, index -1).
    Right,
}

/// A Redis list.
///
/// Memory: the deque's buffer (its capacity times the 32-byte `Bytes`
/// handle) plus each element's own allocation, kept in `elem_bytes` as
/// elements come and go, so [`List::heap_bytes`] is O(1).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct List {
    items: VecDeque<Bytes>,
    elem_bytes: usize,
}


impl List {
    /// An empty list.
    pub fn new() -> List {
        List::default()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the list has no elements.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Heap bytes the list owns. O(1).
    pub fn heap_bytes(&self) -> usize {
        alloc_size(self.items.capacity() * size_of::<Bytes>()) + self.elem_bytes
    }

    /// Bytes the elements' own allocations take: the running count behind
    /// [`List::heap_bytes`], without the deque's buffer.
    pub fn element_bytes(&self) -> usize {
        self.elem_bytes
    }

    /// `quicklist`, whatever the size, as Redis 7.0 reports (7.2 says
    /// `listpack` for a list of one small node).
    pub fn encoding(&self) -> &'static str {
        "quicklist"
    }

    /// Adds `v` at `end`, copying it into its own allocation.
    pub fn push(&mut self, end: End, v: &[u8]) {
        let v = Bytes::copy_from_slice(v);
        self.elem_bytes += alloc_size(v.len());
        match end {
            End::Left => self.items.push_front(v),
            End::Right => self.items.push_back(v),
        }
    }

    /// Removes and returns the element at `end`.
    pub fn pop(&mut self, end: End) -> Option<Bytes> {
        let v = match end {
            End::Left => self.items.pop_front(),
            End::Right => self.items.pop_back(),
        }?;
        self.forget(&v);
        Some(v)
    }

    /// Removes up to `count` elements from `end`, in pop order.
    pub fn pop_many(&mut self, end: End, count: usize) -> Vec<Bytes> {
        let n = count.min(self.len());
        let out = (0..n).filter_map(|_| self.pop(end)).collect();
        self.shrink_if_sparse();
        out
    }

    fn forget(&mut self, v: &Bytes) {
        self.elem_bytes -= alloc_size(v.len());
    }

    fn shrink_if_sparse(&mut self) {
        if self.items.capacity() > 64 && self.items.len() * 4 < self.items.capacity() {
            self.items.shrink_to(self.items.len() * 2);
        }
    }

    /// Resolves a Redis index (negative counts from the tail) to a position.
    pub fn resolve(&self, index: i64) -> Option<usize> {
        let len = self.len() as i64;
        let i = if index < 0 { len + index } else { index };
        (0..len).contains(&i).then_some(i as usize)
    }

    /// The element at a Redis index.
    pub fn get(&self, index: i64) -> Option<&Bytes> {
        self.resolve(index).map(|i| &self.items[i])
    }

    /// Replaces the element at a Redis index. Returns `false` when out of range.
    pub fn set(&mut self, index: i64, v: &[u8]) -> bool {
        let Some(i) = self.resolve(index) else {
            return false;
        };
        let v = Bytes::copy_from_slice(v);
        self.elem_bytes += alloc_size(v.len());
        let old = std::mem::replace(&mut self.items[i], v);
        self.forget(&old);
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
    pub fn range(&self, start: i64, stop: i64) -> impl Iterator<Item = &Bytes> {
        let (a, n) = match self.range_bounds(start, stop) {
            Some((a, b)) => (a, b - a + 1),
            None => (0, 0),
        };
        self.items.iter().skip(a).take(n)
    }

    /// All elements, head to tail.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Bytes> + ExactSizeIterator {
        self.items.iter()
    }

    /// Keeps only the Redis range `start..=stop` (`LTRIM`).
    pub fn trim(&mut self, start: i64, stop: i64) {
        let dropped: Vec<Bytes> = match self.range_bounds(start, stop) {
            Some((a, b)) => {
                let mut gone: Vec<Bytes> = self.items.drain(b + 1..).collect();
                gone.extend(self.items.drain(..a));
                gone
            }
            None => self.items.drain(..).collect(),
        };
        for v in &dropped {
            self.forget(v);
        }
        self.shrink_if_sparse();
    }

    /// Inserts `v` before or after the first occurrence of `pivot`.
    /// Returns the new length, or `None` if the pivot is absent.
    pub fn insert_at_pivot(&mut self, pivot: &[u8], v: &[u8], after: bool) -> Option<usize> {
        let pos = self.items.iter().position(|x| x[..] == *pivot)?;
        let v = Bytes::copy_from_slice(v);
        self.elem_bytes += alloc_size(v.len());
        self.items.insert(if after { pos + 1 } else { pos }, v);
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
        let mut removed = 0;
        let mut kept = VecDeque::with_capacity(self.items.len());
        let mut take = |x: Bytes, removed: &mut usize, kept: &mut VecDeque<Bytes>, front: bool| {
            if *removed < limit && x[..] == *v {
                *removed += 1;
                self.elem_bytes -= alloc_size(x.len());
            } else if front {
                kept.push_back(x);
            } else {
                kept.push_front(x);
            }
        };
        let items = std::mem::take(&mut self.items);
        if count >= 0 {
            for x in items {
                take(x, &mut removed, &mut kept, true);
            }
        } else {
            for x in items.into_iter().rev() {
                take(x, &mut removed, &mut kept, false);
            }
        }
        self.items = kept;
        self.shrink_if_sparse();
        removed
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
        let mut consider = |i: usize, out: &mut Vec<usize>| {
            if self.items[i][..] == *v {
                if skip > 0 {
                    skip -= 1;
                } else {
                    out.push(i);
                }
            }
            out.len() < want
        };
        if rank > 0 {
            for i in 0..limit {
                if !consider(i, &mut out) {
                    break;
                }
            }
        } else {
            for i in (len - limit..len).rev() {
                if !consider(i, &mut out) {
                    break;
                }
            }
        }
        out
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
        assert_eq!(l.elem_bytes, 0);
    }

    #[test]
    fn trim_keeps_the_range() {
        let mut l = list(&["a", "b", "c", "d"]);
        l.trim(1, -2);
        assert_eq!(items(&l), ["b", "c"]);
        l.trim(5, 10);
        assert!(l.is_empty());
        assert_eq!(l.elem_bytes, 0);
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
