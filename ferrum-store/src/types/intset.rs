//! An intset: a sorted array of distinct integers, all stored with the
//! smallest width that fits the largest of them (2, 4 or 8 bytes, as Redis's
//! `intset.c`), in one exact-size allocation.
//!
//! Layout: one byte holding the width, then the integers little-endian in
//! ascending order. Membership is a binary search, O(log n); insertion and
//! removal move the tail, O(n), which the set keeps small
//! (`set-max-intset-entries`). Adding an integer too wide for the current
//! width rewrites the whole array at the new width ("upgrade"); as in Redis
//! the width never shrinks.

use crate::memory::alloc_size;

/// A sorted set of integers. See the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Intset(Box<[u8]>);

impl Default for Intset {
    fn default() -> Intset {
        Intset(Box::new([2]))
    }
}

/// The narrowest width that holds `v`.
fn width_of(v: i64) -> usize {
    if i16::try_from(v).is_ok() {
        2
    } else if i32::try_from(v).is_ok() {
        4
    } else {
        8
    }
}

impl Intset {
    /// An empty intset (width 2).
    pub(crate) fn new() -> Intset {
        Intset::default()
    }

    fn width(&self) -> usize {
        usize::from(self.0[0])
    }

    /// Number of integers.
    pub(crate) fn len(&self) -> usize {
        (self.0.len() - 1) / self.width()
    }

    /// The allocation's size as the allocator serves it.
    pub(crate) fn heap_bytes(&self) -> usize {
        alloc_size(self.0.len())
    }

    /// The whole intset as bytes, to be stored elsewhere (see
    /// [`PackedKind`](crate::value::PackedKind)).
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The intset whose bytes [`as_bytes`](Self::as_bytes) gave.
    pub(crate) fn from_bytes(bytes: &[u8]) -> Intset {
        debug_assert!(matches!(bytes.first(), Some(2 | 4 | 8)));
        Intset(bytes.into())
    }

    /// The `i`-th smallest integer (`i < len()`).
    pub(crate) fn get(&self, i: usize) -> i64 {
        let w = self.width();
        let b = &self.0[1 + i * w..1 + (i + 1) * w];
        match w {
            2 => i64::from(i16::from_le_bytes([b[0], b[1]])),
            4 => i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            _ => i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        }
    }

    fn put(buf: &mut [u8], w: usize, i: usize, v: i64) {
        buf[1 + i * w..1 + (i + 1) * w].copy_from_slice(&v.to_le_bytes()[..w]);
    }

    /// `Ok(i)` if `v` is at position `i`, else `Err(i)` where it would go.
    fn search(&self, v: i64) -> Result<usize, usize> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.get(mid).cmp(&v) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    /// Whether `v` is a member. O(log n).
    pub(crate) fn contains(&self, v: i64) -> bool {
        self.search(v).is_ok()
    }

    /// Adds `v`. Returns whether it is new.
    pub(crate) fn insert(&mut self, v: i64) -> bool {
        let Err(at) = self.search(v) else {
            return false;
        };
        let (len, old_w) = (self.len(), self.width());
        let w = old_w.max(width_of(v));
        let mut buf = vec![0u8; 1 + (len + 1) * w];
        buf[0] = w as u8;
        for i in 0..len {
            let dst = if i < at { i } else { i + 1 };
            Intset::put(&mut buf, w, dst, self.get(i));
        }
        Intset::put(&mut buf, w, at, v);
        self.0 = buf.into_boxed_slice();
        true
    }

    /// Removes the integer at position `i`, returning it.
    pub(crate) fn remove_at(&mut self, i: usize) -> i64 {
        let v = self.get(i);
        let w = self.width();
        let mut buf = std::mem::take(&mut self.0).into_vec();
        buf.drain(1 + i * w..1 + (i + 1) * w);
        self.0 = buf.into_boxed_slice();
        v
    }

    /// Removes `v`. Returns whether it was a member.
    pub(crate) fn remove(&mut self, v: i64) -> bool {
        match self.search(v) {
            Ok(i) => {
                self.remove_at(i);
                true
            }
            Err(_) => false,
        }
    }

    /// The integers in ascending order.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = i64> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_upgrade_and_order_holds() {
        let mut s = Intset::new();
        assert!(s.insert(5));
        assert!(s.insert(-3));
        assert!(!s.insert(5));
        assert_eq!(s.heap_bytes(), alloc_size(1 + 2 * 2));
        assert!(s.insert(70_000));
        assert_eq!(s.width(), 4);
        assert!(s.insert(i64::MIN));
        assert_eq!(s.width(), 8);
        assert_eq!(s.iter().collect::<Vec<_>>(), [i64::MIN, -3, 5, 70_000]);
        assert!(s.contains(70_000) && !s.contains(4));
        assert!(s.remove(i64::MIN));
        assert_eq!(s.width(), 8, "never downgraded, as in Redis");
        assert_eq!(s.remove_at(0), -3);
        assert_eq!(s.len(), 2);
    }
}
