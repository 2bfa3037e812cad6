//! The set type: unique byte strings, packed while small (an [`Intset`] of
//! integers or a listpack ([`Forward`]) of strings) and in a dense hash table beyond,
//! with O(1) membership, O(1) random member and an O(1) byte count there.
//!
//! Conversions follow Redis 7.2 and only go forward: a set of integers
//! starts as an intset (up to `set-max-intset-entries`); a non-integer member
//! moves it to a listpack if it stays within `set-max-listpack-entries` and
//! `set-max-listpack-value` (see [`EncodingLimits`]), else to the table; a
//! listpack that outgrows those limits moves to the table for good.

use bytes::Bytes;

use super::dense::Dense;
use super::elem::Elem;
use super::intset::Intset;
use super::listpack::Forward;
use super::EncodingLimits;
use crate::memory::alloc_size;
use crate::value::PackedKind;

/// A Redis set.
///
/// Memory: packed, the intset's or listpack's one allocation; as a table,
/// the box, the dense table (see `Dense` (`types/dense.rs`)) of 24-byte
/// members (see `Elem` (`types/elem.rs`)) and the allocation of each member
/// too long to sit inline, kept in `elem_bytes` incrementally.
#[derive(Clone, Debug)]
pub struct Set(Repr);

#[derive(Clone, Debug)]
enum Repr {
    Int(Intset),
    Packed(Forward),
    Table(Box<Table>),
}

impl Default for Set {
    fn default() -> Set {
        Set(Repr::Int(Intset::new()))
    }
}

#[derive(Clone, Debug, Default)]
struct Table {
    table: Dense<Elem>,
    elem_bytes: usize,
}

impl PartialEq for Set {
    fn eq(&self, other: &Set) -> bool {
        self.len() == other.len() && self.iter().all(|m| other.contains(&m))
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
        match &self.0 {
            Repr::Int(i) => i.len(),
            Repr::Packed(lp) => lp.len(),
            Repr::Table(t) => t.table.len(),
        }
    }

    /// Whether the set has no members.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Heap bytes the set owns. O(1).
    pub fn heap_bytes(&self) -> usize {
        match &self.0 {
            Repr::Int(i) => i.heap_bytes(),
            Repr::Packed(lp) => lp.heap_bytes(),
            Repr::Table(t) => alloc_size(size_of::<Table>()) + t.table.table_bytes() + t.elem_bytes,
        }
    }

    /// `intset`, `listpack` or `hashtable`, as `OBJECT ENCODING` reports.
    pub fn encoding(&self) -> &'static str {
        match self.0 {
            Repr::Int(_) => "intset",
            Repr::Packed(_) => "listpack",
            Repr::Table(_) => "hashtable",
        }
    }

    /// Whether `m` is a member.
    pub fn contains(&self, m: &[u8]) -> bool {
        match &self.0 {
            Repr::Int(i) => as_int(m).is_some_and(|v| i.contains(v)),
            Repr::Packed(lp) => lp.find(m, 1).is_some(),
            Repr::Table(t) => t.table.position(m).is_some(),
        }
    }

    /// Adds `m`. Returns whether it is new.
    pub fn insert(&mut self, m: &[u8]) -> bool {
        self.insert_within(m, &EncodingLimits::current())
    }

    /// [`Set::insert`] under `limits` rather than the process's.
    fn insert_within(&mut self, m: &[u8], limits: &EncodingLimits) -> bool {
        let len = self.len() as u64;
        match &mut self.0 {
            Repr::Int(set) => match as_int(m) {
                Some(v) => {
                    if set.contains(v) {
                        return false;
                    }
                    if len < limits.set_max_intset_entries {
                        return set.insert(v);
                    }
                    self.convert(false);
                }
                None => {
                    let fits = len < limits.set_max_listpack_entries
                        && m.len() as u64 <= limits.set_max_listpack_value
                        && set
                            .iter()
                            .all(|v| int_len(v) as u64 <= limits.set_max_listpack_value);
                    self.convert(fits);
                }
            },
            Repr::Packed(lp) => {
                if lp.find(m, 1).is_some() {
                    return false;
                }
                if len < limits.set_max_listpack_entries
                    && m.len() as u64 <= limits.set_max_listpack_value
                {
                    lp.push(m);
                    return true;
                }
                self.convert(false);
            }
            Repr::Table(_) => {}
        }
        match &mut self.0 {
            Repr::Packed(lp) => {
                lp.push(m);
                true
            }
            Repr::Table(t) => t.insert(m),
            Repr::Int(_) => unreachable!("an intset was converted above"),
        }
    }

    /// Moves the set to a listpack (`packed`) or to the table, for good.
    fn convert(&mut self, packed: bool) {
        let members: Vec<Bytes> = self.iter().collect();
        self.0 = if packed {
            let mut lp = Forward::new();
            let refs: Vec<&[u8]> = members.iter().map(|m| &m[..]).collect();
            lp.insert(lp.end(), &refs);
            Repr::Packed(lp)
        } else {
            let mut t = Table::default();
            for m in &members {
                t.insert(m);
            }
            Repr::Table(Box::new(t))
        };
    }

    /// Removes `m`. Returns whether it was a member.
    pub fn remove(&mut self, m: &[u8]) -> bool {
        match &mut self.0 {
            Repr::Int(i) => as_int(m).is_some_and(|v| i.remove(v)),
            Repr::Packed(lp) => match lp.find(m, 1) {
                Some(off) => {
                    lp.delete(off, 1);
                    true
                }
                None => false,
            },
            Repr::Table(t) => match t.table.remove(m) {
                Some(v) => {
                    t.elem_bytes -= v.heap_bytes();
                    true
                }
                None => false,
            },
        }
    }

    /// Removes and returns the member at position `i` of [`Set::iter`].
    pub fn remove_at(&mut self, i: usize) -> Option<Bytes> {
        if i >= self.len() {
            return None;
        }
        Some(match &mut self.0 {
            Repr::Int(set) => int_bytes(set.remove_at(i)),
            Repr::Packed(lp) => {
                let off = lp.seek(i);
                let m = Bytes::copy_from_slice(lp.get(off));
                lp.delete(off, 1);
                m
            }
            Repr::Table(t) => {
                let v = t.table.remove_at(i);
                t.elem_bytes -= v.heap_bytes();
                v.into_bytes()
            }
        })
    }

    /// Every member, in an unspecified order (ascending for an intset).
    pub fn iter(&self) -> Box<dyn ExactSizeIterator<Item = Bytes> + '_> {
        match &self.0 {
            Repr::Int(i) => Box::new(i.iter().map(int_bytes)),
            Repr::Packed(lp) => Box::new(lp.iter().map(Bytes::copy_from_slice)),
            Repr::Table(t) => Box::new(t.table.entries().iter().map(|m| Bytes::copy_from_slice(m))),
        }
    }

    /// Shows every member to `f`, in [`Set::iter`]'s order, as a slice: an
    /// integer as its decimal digits, without an allocation per member.
    pub fn for_each(&self, mut f: impl FnMut(&[u8])) {
        match &self.0 {
            Repr::Int(i) => i
                .iter()
                .for_each(|v| f(itoa::Buffer::new().format(v).as_bytes())),
            Repr::Packed(lp) => lp.iter().for_each(f),
            Repr::Table(t) => t.table.entries().iter().for_each(|m| f(m)),
        }
    }

    /// The member at position `i` of [`Set::iter`] (for random picks).
    pub fn at(&self, i: usize) -> Option<Bytes> {
        (i < self.len()).then(|| match &self.0 {
            Repr::Int(set) => int_bytes(set.get(i)),
            Repr::Packed(lp) => Bytes::copy_from_slice(lp.get(lp.seek(i))),
            Repr::Table(t) => Bytes::copy_from_slice(&t.table.entries()[i]),
        })
    }

    /// One `SSCAN` step; see `Dense::scan` in `types/dense.rs`. A packed set is
    /// returned whole in one call, as Redis does.
    pub fn scan(&self, cursor: u64, count: usize, mut f: impl FnMut(&[u8])) -> u64 {
        match &self.0 {
            Repr::Table(t) => t.table.scan(cursor, count, |m| f(m)),
            _ => {
                self.iter().for_each(|m| f(&m));
                0
            }
        }
    }
}

impl Table {
    fn insert(&mut self, m: &[u8]) -> bool {
        let (pos, new) = self.table.find_or_push(m, || Elem::new(m));
        if new {
            self.elem_bytes += self.table.entries()[pos].heap_bytes();
        }
        new
    }
}

/// The integer Redis would store `m` as in an intset: `m` must be the
/// canonical text of an `i64` (no sign on zero, no leading zeros, no `+`).
fn as_int(m: &[u8]) -> Option<i64> {
    let digits = m.strip_prefix(b"-").unwrap_or(m);
    let canonical = !digits.is_empty()
        && m.len() <= 20
        && digits.iter().all(u8::is_ascii_digit)
        && (digits[0] != b'0' || m == b"0");
    if !canonical {
        return None;
    }
    std::str::from_utf8(m).ok()?.parse().ok()
}

fn int_bytes(v: i64) -> Bytes {
    Bytes::copy_from_slice(itoa::Buffer::new().format(v).as_bytes())
}

fn int_len(v: i64) -> usize {
    itoa::Buffer::new().format(v).len()
}

impl Set {
    /// The packed form's bytes, if the set is packed.
    pub(crate) fn packed(&self) -> Option<(PackedKind, &[u8])> {
        match &self.0 {
            Repr::Int(is) => Some((PackedKind::IntSet, is.as_bytes())),
            Repr::Packed(lp) => Some((PackedKind::StrSet, lp.as_bytes())),
            Repr::Table(_) => None,
        }
    }

    /// The packed set whose bytes [`packed`](Self::packed) gave.
    pub(crate) fn from_packed(kind: PackedKind, bytes: &[u8]) -> Set {
        Set(if kind == PackedKind::IntSet {
            Repr::Int(Intset::from_bytes(bytes))
        } else {
            Repr::Packed(Forward::from_bytes(bytes))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Redis 7.2's limits, where small sets of strings are packed.
    const PACKED: EncodingLimits = EncodingLimits {
        set_max_listpack_entries: 128,
        ..EncodingLimits::DEFAULT
    };

    #[test]
    fn encodings_move_forward_only() {
        let mut s = Set::new();
        s.insert(b"1");
        s.insert(b"-20");
        assert_eq!(s.encoding(), "intset");
        // Redis 7.0's defaults: no packed sets of strings.
        let mut table = s.clone();
        table.insert_within(b"a", &EncodingLimits::DEFAULT);
        assert_eq!(table.encoding(), "hashtable");
        s.insert_within(b"a", &PACKED);
        assert_eq!(s.encoding(), "listpack");
        s.insert_within(&[b'x'; 65], &PACKED);
        assert_eq!(s.encoding(), "hashtable");
        s.remove(&[b'x'; 65]);
        assert_eq!(s.encoding(), "hashtable");
        let mut big = Set::new();
        for i in 0..=512 {
            big.insert(i.to_string().as_bytes());
        }
        assert_eq!(big.encoding(), "hashtable");
        assert!(big.contains(b"512") && !big.contains(b"0512"));
    }

    #[test]
    fn a_packed_set_scans_whole_and_pops_by_position() {
        let mut s = Set::new();
        for m in ["3", "1", "2"] {
            s.insert(m.as_bytes());
        }
        assert_eq!(s.heap_bytes(), alloc_size(1 + 3 * 2));
        let mut seen = Vec::new();
        assert_eq!(s.scan(0, 1, |m| seen.push(m.to_vec())), 0);
        assert_eq!(seen, [b"1", b"2", b"3"]);
        assert_eq!(s.remove_at(1).as_deref(), Some(&b"2"[..]));
        assert!(!s.contains(b"01") && s.contains(b"1"));
        s.insert_within(b"x", &PACKED);
        assert_eq!(s.encoding(), "listpack");
        assert_eq!(s.at(2).as_deref(), Some(&b"x"[..]));
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
        for i in 0..600 {
            s.insert(format!("m{i}").as_bytes());
        }
        assert_eq!(s.encoding(), "hashtable");
        let mut seen = std::collections::HashSet::new();
        let mut cursor = s.scan(0, 10, |m| {
            seen.insert(Bytes::copy_from_slice(m));
        });
        // Remove members that were already returned; the rest must still come.
        let returned: Vec<Bytes> = seen.iter().take(5).cloned().collect();
        assert_ne!(cursor, 0, "a table is scanned in steps");
        for m in &returned {
            s.remove(m);
        }
        while cursor != 0 {
            cursor = s.scan(cursor, 10, |m| {
                seen.insert(Bytes::copy_from_slice(m));
            });
        }
        for i in 0..600 {
            assert!(seen.contains(format!("m{i}").as_bytes()), "{i} missed");
        }
    }
}
