//! The hash type: field-value pairs with O(1) lookup, O(1) random field and
//! an O(1) byte count.

use bytes::Bytes;

use super::dense::Dense;
use super::EncodingLimits;
use crate::memory::alloc_size;


/// A Redis hash.
///
/// Memory: the dense table (see [`Dense`](super::dense)) plus each field's
/// and value's own allocation, kept in `elem_bytes` incrementally.
#[derive(Clone, Debug, Default)]
pub struct Hash {
    table: Dense<(Bytes, Bytes)>,
    elem_bytes: usize,
    /// Set once the hash outgrew the listpack limits; never cleared, as in Redis.
    hashtable: bool,
}

impl PartialEq for Hash {
    fn eq(&self, other: &Hash) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .all(|(f, v)| other.get(f).is_some_and(|o| o == v))
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
        self.table.len()
    }

    /// Whether the hash has no fields.
    pub fn is_empty(&self) -> bool {
        self.table.len() == 0
    }

    /// Heap bytes the hash owns. O(1).
    pub fn heap_bytes(&self) -> usize {
        self.table.table_bytes() + self.elem_bytes
    }

    /// `listpack` or `hashtable`, as `OBJECT ENCODING` reports.
    pub fn encoding(&self) -> &'static str {
        if self.hashtable {
            "hashtable"
        } else {
            "listpack"
        }
    }

    /// The value of `field`.
    pub fn get(&self, field: &[u8]) -> Option<&Bytes> {
        self.table.get(field).map(|(_, v)| v)
    }

    /// Sets `field` to `value`. Returns whether the field is new.
    pub fn set(&mut self, field: &[u8], value: &[u8]) -> bool {
        self.note_sizes(field.len().max(value.len()));
        let value = Bytes::copy_from_slice(value);
        self.elem_bytes += alloc_size(value.len());
        if let Some((_, v)) = self.table.get_mut(field) {
            let old = std::mem::replace(v, value);
            self.elem_bytes -= alloc_size(old.len());
            return false;
        }
        let field = Bytes::copy_from_slice(field);
        self.elem_bytes += alloc_size(field.len());
        self.table.push_new((field, value));
        if self.len() as u64 > EncodingLimits::current().hash_max_listpack_entries {
            self.hashtable = true;
        }
        true
    }

    fn note_sizes(&mut self, longest: usize) {
        if longest as u64 > EncodingLimits::current().hash_max_listpack_value {
            self.hashtable = true;
        }
    }

    /// Removes `field`. Returns whether it was there.
    pub fn remove(&mut self, field: &[u8]) -> bool {
        match self.table.remove(field) {
            Some((f, v)) => {
                self.elem_bytes -= alloc_size(f.len()) + alloc_size(v.len());
                true
            }
            None => false,
        }
    }

    /// Every field and value, in an unspecified but stable order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&Bytes, &Bytes)> {
        self.table.entries().iter().map(|(f, v)| (f, v))
    }

    /// The pair at position `i` of [`Hash::iter`] (for random picks).
    pub fn at(&self, i: usize) -> Option<(&Bytes, &Bytes)> {
        self.table.entries().get(i).map(|(f, v)| (f, v))
    }

    /// One `HSCAN` step; see [`Dense::scan`](super::dense).
    pub fn scan(&self, cursor: u64, count: usize, mut f: impl FnMut(&Bytes, &Bytes)) -> u64 {
        self.table.scan(cursor, count, |(k, v)| f(k, v))
    }
}
