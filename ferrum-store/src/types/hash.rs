//! The hash type: field-value pairs, packed in a listpack ([`Forward`]) while small and
//! in a dense hash table beyond, with O(1) lookup, O(1) random field and an
//! O(1) byte count in the large form.
//!
//! A hash starts packed (fields and values alternating, O(n) lookups) and
//! converts to the table for good once it has more than
//! `hash-max-listpack-entries` fields or a field or value longer than
//! `hash-max-listpack-value` bytes (see [`EncodingLimits`]), as Redis does.

use super::dense::Dense;
use super::elem::Elem;
use super::listpack::{self, Forward};
use super::EncodingLimits;
use crate::memory::alloc_size;
use crate::value::PackedKind;

/// A Redis hash.
///
/// Memory: packed, the listpack's one allocation; as a table, the box, the
/// dense table (see `Dense` (`types/dense.rs`)) of 48-byte field-value pairs
/// (see `Elem` (`types/elem.rs`)) and the allocation of each field or value
/// too long to sit inline, kept in `elem_bytes` incrementally.
#[derive(Clone, Debug, Default)]
pub struct Hash(Repr);

#[derive(Clone, Debug)]
enum Repr {
    Packed(Forward),
    Table(Box<Table>),
}

impl Default for Repr {
    fn default() -> Repr {
        Repr::Packed(Forward::new())
    }
}

#[derive(Clone, Debug, Default)]
struct Table {
    table: Dense<(Elem, Elem)>,
    elem_bytes: usize,
}

impl PartialEq for Hash {
    fn eq(&self, other: &Hash) -> bool {
        self.len() == other.len() && self.iter().all(|(f, v)| other.get(f) == Some(v))
    }
}

impl Eq for Hash {}

impl Hash {
    /// An empty hash.
    pub fn new() -> Hash {
        Hash::default()
    }

    /// Number of fields.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Packed(lp) => lp.len() / 2,
            Repr::Table(t) => t.table.len(),
        }
    }

    /// Whether the hash has no fields.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Heap bytes the hash owns. O(1).
    pub fn heap_bytes(&self) -> usize {
        match &self.0 {
            Repr::Packed(lp) => lp.heap_bytes(),
            Repr::Table(t) => alloc_size(size_of::<Table>()) + t.table.table_bytes() + t.elem_bytes,
        }
    }

    /// `listpack` or `hashtable`, as `OBJECT ENCODING` reports.
    pub fn encoding(&self) -> &'static str {
        match self.0 {
            Repr::Packed(_) => "listpack",
            Repr::Table(_) => "hashtable",
        }
    }

    /// The value of `field`.
    pub fn get(&self, field: &[u8]) -> Option<&[u8]> {
        match &self.0 {
            Repr::Packed(lp) => lp.find(field, 2).map(|off| lp.get(lp.next(off))),
            Repr::Table(t) => t.table.get(field).map(|(_, v)| &v[..]),
        }
    }

    /// Sets `field` to `value`. Returns whether the field is new.
    pub fn set(&mut self, field: &[u8], value: &[u8]) -> bool {
        if let Repr::Packed(lp) = &mut self.0 {
            let limits = EncodingLimits::current();
            let longest = field.len().max(value.len()) as u64;
            if longest <= limits.hash_max_listpack_value {
                if let Some(off) = lp.find(field, 2) {
                    lp.replace(lp.next(off), value);
                    return false;
                }
                if ((lp.len() / 2) as u64) < limits.hash_max_listpack_entries {
                    lp.insert(lp.end(), &[field, value]);
                    return true;
                }
            }
            self.convert();
        }
        let Repr::Table(t) = &mut self.0 else {
            unreachable!("converted above")
        };
        t.set(field, value)
    }

    /// Moves a packed hash into the table form, for good.
    fn convert(&mut self) {
        let Repr::Packed(lp) = &self.0 else {
            return;
        };
        let mut t = Table::default();
        let mut it = lp.iter();
        while let (Some(f), Some(v)) = (it.next(), it.next()) {
            t.set(f, v);
        }
        self.0 = Repr::Table(Box::new(t));
    }

    /// Removes `field`. Returns whether it was there.
    pub fn remove(&mut self, field: &[u8]) -> bool {
        match &mut self.0 {
            Repr::Packed(lp) => match lp.find(field, 2) {
                Some(off) => {
                    lp.delete(off, 2);
                    true
                }
                None => false,
            },
            Repr::Table(t) => match t.table.remove(field) {
                Some((f, v)) => {
                    t.elem_bytes -= f.heap_bytes() + v.heap_bytes();
                    true
                }
                None => false,
            },
        }
    }

    /// Every field and value, in an unspecified but stable order.
    pub fn iter(&self) -> Iter<'_> {
        Iter(match &self.0 {
            Repr::Packed(lp) => IterRepr::Packed(lp.iter()),
            Repr::Table(t) => IterRepr::Table(t.table.entries().iter()),
        })
    }

    /// The pair at position `i` of [`Hash::iter`] (for random picks).
    pub fn at(&self, i: usize) -> Option<(&[u8], &[u8])> {
        match &self.0 {
            Repr::Packed(lp) => (i < lp.len() / 2).then(|| {
                let off = lp.seek(2 * i);
                let (f, next) = lp.entry(off);
                (f, lp.get(next))
            }),
            Repr::Table(t) => t.table.entries().get(i).map(|(f, v)| (&f[..], &v[..])),
        }
    }

    /// One `HSCAN` step; see `Dense::scan` in `types/dense.rs`. A packed hash
    /// is returned whole in one call, as Redis does.
    pub fn scan(&self, cursor: u64, count: usize, mut f: impl FnMut(&[u8], &[u8])) -> u64 {
        match &self.0 {
            Repr::Packed(_) => {
                self.iter().for_each(|(k, v)| f(k, v));
                0
            }
            Repr::Table(t) => t.table.scan(cursor, count, |(k, v)| f(k, v)),
        }
    }
}

impl Table {
    fn set(&mut self, field: &[u8], value: &[u8]) -> bool {
        // The value goes into a new entry, or replaces the present one's.
        let (pos, new) = self
            .table
            .find_or_push(field, || (Elem::new(field), Elem::new(value)));
        let entry = self.table.entry_mut(pos);
        if new {
            self.elem_bytes += entry.0.heap_bytes() + entry.1.heap_bytes();
        } else {
            let old = std::mem::replace(&mut entry.1, Elem::new(value));
            self.elem_bytes = self.elem_bytes + entry.1.heap_bytes() - old.heap_bytes();
        }
        new
    }
}

/// Iterator over a hash's fields and values.
pub struct Iter<'a>(IterRepr<'a>);

enum IterRepr<'a> {
    Packed(listpack::Iter<'a, false>),
    Table(std::slice::Iter<'a, (Elem, Elem)>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterRepr::Packed(it) => Some((it.next()?, it.next()?)),
            IterRepr::Table(it) => it.next().map(|(f, v)| (&f[..], &v[..])),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match &self.0 {
            IterRepr::Packed(it) => it.len() / 2,
            IterRepr::Table(it) => it.len(),
        };
        (n, Some(n))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl Hash {
    /// The packed form's bytes, if the hash is packed.
    pub(crate) fn packed(&self) -> Option<(PackedKind, &[u8])> {
        match &self.0 {
            Repr::Packed(lp) => Some((PackedKind::Hash, lp.as_bytes())),
            Repr::Table(_) => None,
        }
    }

    /// The packed hash whose bytes [`packed`](Self::packed) gave.
    pub(crate) fn from_packed(bytes: &[u8]) -> Hash {
        Hash(Repr::Packed(Forward::from_bytes(bytes)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::listpack::FIRST;

    #[test]
    fn packed_until_a_limit_then_a_table_for_good() {
        let mut h = Hash::new();
        assert!(h.set(b"f", b"1"));
        assert!(!h.set(b"f", b"22"));
        assert_eq!(h.encoding(), "listpack");
        assert_eq!(h.get(b"f"), Some(&b"22"[..]));
        assert_eq!(h.heap_bytes(), alloc_size(FIRST + 2 + 3));
        h.set(b"g", &[b'x'; 65]);
        assert_eq!(h.encoding(), "hashtable");
        assert_eq!(h.get(b"f"), Some(&b"22"[..]));
        assert!(h.remove(b"g"));
        assert_eq!(h.encoding(), "hashtable");
        let mut big = Hash::new();
        for i in 0..=EncodingLimits::DEFAULT.hash_max_listpack_entries {
            big.set(i.to_string().as_bytes(), b"v");
        }
        assert_eq!(big.encoding(), "hashtable");
        assert_eq!(big.len(), 513);
    }

    #[test]
    fn a_packed_hash_scans_whole_in_one_call() {
        let mut h = Hash::new();
        for i in 0..20 {
            h.set(format!("f{i}").as_bytes(), b"v");
        }
        let mut n = 0;
        assert_eq!(h.scan(0, 1, |_, _| n += 1), 0);
        assert_eq!(n, 20);
        assert_eq!(h.at(19).map(|(f, _)| f), Some(&b"f19"[..]));
        assert_eq!(h.at(20), None);
    }
}
