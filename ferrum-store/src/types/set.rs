//! The set type: unique byte strings with O(1) membership, O(1) random
//! member and an O(1) byte count.

use bytes::Bytes;

use super::dense::Dense;
use super::EncodingLimits;
use crate::memory::alloc_size;


/// The encoding a set would have in Redis 7.2. Conversions only go forward,
/// as in Redis: a set that became a hashtable stays one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
enum Encoding {
    #[default]
    Intset,
    Listpack,
    Hashtable,
}

/// A Redis set.
///
/// Memory: the dense table (see [`Dense`](super::dense)) plus each
/// member's own allocation, kept in `elem_bytes` incrementally.
#[derive(Clone, Debug, Default)]
pub struct Set {
    table: Dense<Bytes>,
    elem_bytes: usize,
    encoding: Encoding,
}

impl PartialEq for Set {
    fn eq(&self, other: &Set) -> bool {
        self.len() == other.len() && self.iter().all(|m| other.contains(m))
    }
}

impl Eq for Set {}

impl Set {
    /// An empty set.
    pub fn new() -> Set {
        Set::default()
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether the set has no members.
    pub fn is_empty(&self) -> bool {
        self.table.len() == 0
    }

    /// Heap bytes the set owns. O(1).
    pub fn heap_bytes(&self) -> usize {
        self.table.table_bytes() + self.elem_bytes
    }

    /// `intset`, `listpack` or `hashtable`, as `OBJECT ENCODING` reports.
    pub fn encoding(&self) -> &'static str {
        match self.encoding {
            Encoding::Intset => "intset",
            Encoding::Listpack => "listpack",
            Encoding::Hashtable => "hashtable",
        }
    }

    /// Whether `m` is a member.
    pub fn contains(&self, m: &[u8]) -> bool {
        self.table.position(m).is_some()
    }

    /// Adds `m`. Returns whether it is new.
    pub fn insert(&mut self, m: &[u8]) -> bool {
        if self.contains(m) {
            return false;
        }
        let m = Bytes::copy_from_slice(m);
        self.elem_bytes += alloc_size(m.len());
        self.upgrade_for(&m);
        self.table.push_new(m);
        true
    }

    fn upgrade_for(&mut self, m: &[u8]) {
        let len = self.len() as u64 + 1;
        let limits = EncodingLimits::current();
        let want = if self.encoding == Encoding::Intset
            && len <= limits.set_max_intset_entries
            && is_intset_member(m)
        {
            Encoding::Intset
        } else if len <= limits.set_max_listpack_entries
            && m.len() as u64 <= limits.set_max_listpack_value
            && self.encoding != Encoding::Hashtable
        {
            Encoding::Listpack
        } else {
            Encoding::Hashtable
        };
        self.encoding = self.encoding.max(want);
    }

    /// Removes `m`. Returns whether it was a member.
    pub fn remove(&mut self, m: &[u8]) -> bool {
        match self.table.remove(m) {
            Some(v) => {
                self.elem_bytes -= alloc_size(v.len());
                true
            }
            None => false,
        }
    }

    /// Removes and returns the member at position `i` of [`Set::iter`].
    pub fn remove_at(&mut self, i: usize) -> Option<Bytes> {
        (i < self.len()).then(|| {
            let v = self.table.remove_at(i);
            self.elem_bytes -= alloc_size(v.len());
            v
        })
    }

    /// Every member, in an unspecified order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &Bytes> {
        self.table.entries().iter()
    }

    /// The member at position `i` of [`Set::iter`] (for random picks).
    pub fn at(&self, i: usize) -> Option<&Bytes> {
        self.table.entries().get(i)
    }

    /// One `SSCAN` step; see [`Dense::scan`](super::dense).
    pub fn scan(&self, cursor: u64, count: usize, f: impl FnMut(&Bytes)) -> u64 {
        self.table.scan(cursor, count, f)
    }
}

/// Whether Redis would store `m` in an intset: the canonical text of an `i64`.
fn is_intset_member(m: &[u8]) -> bool {
    let digits = m.strip_prefix(b"-").unwrap_or(m);
    !digits.is_empty()
        && m.len() <= 20
        && digits.iter().all(u8::is_ascii_digit)
        && (digits[0] != b'0' || m == b"0")
        && std::str::from_utf8(m).is_ok_and(|s| s.parse::<i64>().is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_move_forward_only() {
        let mut s = Set::new();
        s.insert(b"1");
        s.insert(b"-20");
        assert_eq!(s.encoding(), "intset");
        s.insert(b"a");
        assert_eq!(s.encoding(), "listpack");
        s.insert(&[b'x'; 65]);
        assert_eq!(s.encoding(), "hashtable");
        s.remove(&[b'x'; 65]);
        assert_eq!(s.encoding(), "hashtable");
    }

    #[test]
    fn removal_keeps_the_index_right() {
        let mut s = Set::new();
        for i in 0..100 {
            s.insert(i.to_string().as_bytes());
        }
        for i in (0..100).step_by(3) {
            assert!(s.remove(i.to_string().as_bytes()));
        }
        for i in 0..100 {
            assert_eq!(s.contains(i.to_string().as_bytes()), i % 3 != 0);
        }
        assert_eq!(s.len(), 66);
    }

    #[test]
    fn scan_sees_every_member_despite_removals() {
        let mut s = Set::new();
        for i in 0..50 {
            s.insert(i.to_string().as_bytes());
        }
        let mut seen = std::collections::HashSet::new();
        let mut cursor = s.scan(0, 10, |m| {
            seen.insert(m.clone());
        });
        // Remove members that were already returned; the rest must still come.
        let returned: Vec<Bytes> = seen.iter().take(5).cloned().collect();
        for m in &returned {
            s.remove(m);
        }
        while cursor != 0 {
            cursor = s.scan(cursor, 10, |m| {
                seen.insert(m.clone());
            });
        }
        for i in 0..50 {
            assert!(seen.contains(i.to_string().as_bytes()), "{i} missed");
        }
    }
}
