//! A listpack: byte strings packed one after another in a single exact-size
//! allocation, the representation of small hashes, sets, sorted sets and of
//! each list node.
//!
//! Layout, after Redis's listpack (`listpack.c`) but simpler: a 4-byte
//! little-endian entry count, then the entries. An entry is its length as a
//! LEB128 varint, the bytes, and, in a `Listpack<true>` (list nodes), a
//! "back length": the size of the length and the bytes, written so it can be
//! read from its last byte backwards (7 bits per byte, high bit set on every
//! byte but the first). A list node's entry of up to 127 bytes therefore
//! costs two bytes beyond its data, as in Redis, and the node can be walked
//! both ways, so its last entry is O(1) to find. Hashes, sets and sorted sets
//! only ever walk forwards, so their [`Forward`] listpacks leave the back
//! length out and pay one byte per short entry, one less than Redis.
//!
//! Entries are addressed by byte offset (`FIRST` is the first entry, the
//! buffer's length is the end). The allocation grows and shrinks by whole
//! jemalloc size classes: its capacity is the size class of the content
//! ([`alloc_size`]), the bytes jemalloc would hand out for an exact-size
//! buffer anyway, so the spare room costs no memory, and an insert or delete
//! reallocates only when the content crosses into another class (as Redis's
//! `lpInsert` asks `lp_malloc_size` before it reallocates). Inserts and
//! deletes still move the bytes after them, O(size); the containers keep
//! listpacks below their thresholds, so size stays small.

use crate::memory::alloc_size;

/// Offset of the first entry (just after the count).
pub(crate) const FIRST: usize = 4;

/// A packed list of byte strings; `BACK` says whether entries carry a back
/// length (see the module docs). The buffer's capacity is at most the size
/// class of its length (exactly that after any growth or shrink).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Listpack<const BACK: bool = true>(Vec<u8>);

/// A listpack walked only forwards: entries without back lengths.
pub(crate) type Forward = Listpack<false>;

impl<const BACK: bool> Default for Listpack<BACK> {
    fn default() -> Listpack<BACK> {
        Listpack::from_bytes(&[0; FIRST])
    }
}

/// Bytes a varint of `n` takes.
fn varint_len(n: usize) -> usize {
    let bits = usize::BITS - (n | 1).leading_zeros();
    bits.div_ceil(7) as usize
}

/// Bytes an entry holding `len` data bytes takes in all, with or without a
/// back length.
pub(crate) fn entry_size(len: usize, back: bool) -> usize {
    let head = varint_len(len) + len;
    head + if back { varint_len(head) } else { 0 }
}

/// Writes the entry for `v` at the start of `dst` (exactly `entry_size` long).
fn write_entry(dst: &mut [u8], v: &[u8], back_len: bool) {
    let mut at = 0;
    let mut n = v.len();
    loop {
        let more = n >= 0x80;
        dst[at] = (n as u8 & 0x7f) | if more { 0x80 } else { 0 };
        at += 1;
        n >>= 7;
        if !more {
            break;
        }
    }
    dst[at..at + v.len()].copy_from_slice(v);
    at += v.len();
    if !back_len {
        return;
    }
    let back = at;
    let k = varint_len(back);
    for i in 0..k {
        let group = (back >> (7 * i)) as u8 & 0x7f;
        let more = if i + 1 < k { 0x80 } else { 0 };
        dst[at + k - 1 - i] = group | more;
    }
}

impl<const BACK: bool> Listpack<BACK> {
    /// An empty listpack.
    pub(crate) fn new() -> Listpack<BACK> {
        Listpack::default()
    }

    /// Bytes an entry of `len` data bytes takes in this kind of listpack.
    pub(crate) fn entry_size(len: usize) -> usize {
        entry_size(len, BACK)
    }

    /// Number of entries.
    pub(crate) fn len(&self) -> usize {
        u32::from_le_bytes([self.0[0], self.0[1], self.0[2], self.0[3]]) as usize
    }

    fn set_len(&mut self, n: usize) {
        self.0[..FIRST].copy_from_slice(&(n as u32).to_le_bytes());
    }

    /// Bytes of the whole listpack, header included.
    pub(crate) fn bytes(&self) -> usize {
        self.0.len()
    }

    /// The whole listpack as bytes, to be stored elsewhere (see
    /// [`PackedKind`](crate::value::PackedKind)).
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The listpack whose bytes [`as_bytes`](Self::as_bytes) gave, in a
    /// buffer of their whole size class.
    pub(crate) fn from_bytes(bytes: &[u8]) -> Listpack<BACK> {
        debug_assert!(bytes.len() >= FIRST);
        let mut buf = Vec::with_capacity(alloc_size(bytes.len()));
        buf.extend_from_slice(bytes);
        Listpack(buf)
    }

    /// The allocation's size as the allocator serves it: the size class of
    /// the buffer's capacity.
    pub(crate) fn heap_bytes(&self) -> usize {
        alloc_size(self.0.capacity())
    }

    /// Makes room for `add` more bytes: up to the size class of the new
    /// length, reallocating only when the capacity is short of it.
    fn reserve(&mut self, add: usize) {
        let want = self.0.len() + add;
        if want > self.0.capacity() {
            self.0.reserve_exact(alloc_size(want) - self.0.len());
        }
    }

    /// Gives back the capacity beyond the length's size class, after a
    /// removal took the content into a smaller class.
    fn fit(&mut self) {
        let class = alloc_size(self.0.len());
        if self.0.capacity() > class {
            self.0.shrink_to(class);
        }
    }

    /// The offset just past the last entry.
    pub(crate) fn end(&self) -> usize {
        self.0.len()
    }

    /// The data of the entry at `off` and the offset of the next entry.
    pub(crate) fn entry(&self, off: usize) -> (&[u8], usize) {
        let b = &self.0;
        let (mut len, mut shift, mut at) = (0usize, 0, off);
        loop {
            let byte = b[at];
            len |= usize::from(byte & 0x7f) << shift;
            at += 1;
            shift += 7;
            if byte & 0x80 == 0 {
                break;
            }
        }
        let data = &b[at..at + len];
        let back = if BACK { varint_len(at + len - off) } else { 0 };
        (data, at + len + back)
    }

    /// The data at `off`.
    pub(crate) fn get(&self, off: usize) -> &[u8] {
        self.entry(off).0
    }

    /// The offset of the next entry after the one at `off`.
    pub(crate) fn next(&self, off: usize) -> usize {
        self.entry(off).1
    }

    /// The offset of the `i`-th entry (O(i)); `end()` when `i == len()`.
    pub(crate) fn seek(&self, i: usize) -> usize {
        let mut off = FIRST;
        for _ in 0..i {
            off = self.next(off);
        }
        off
    }

    /// Every entry, first to last.
    pub(crate) fn iter(&self) -> Iter<'_, BACK> {
        Iter {
            lp: self,
            off: FIRST,
            left: self.len(),
        }
    }

    /// The offset of the first entry equal to `v` among entries `0, step,
    /// 2 * step, ...` (fields of a hash with `step` 2).
    pub(crate) fn find(&self, v: &[u8], step: usize) -> Option<usize> {
        let mut off = FIRST;
        let mut i = 0;
        while off < self.end() {
            let (data, next) = self.entry(off);
            if i % step == 0 && data == v {
                return Some(off);
            }
            off = next;
            i += 1;
        }
        None
    }

    /// Inserts `items` as consecutive entries before the entry at `off`
    /// (`end()` appends).
    pub(crate) fn insert(&mut self, off: usize, items: &[&[u8]]) {
        let add: usize = items.iter().map(|v| entry_size(v.len(), BACK)).sum();
        let old = self.0.len();
        self.reserve(add);
        let buf = &mut self.0;
        buf.resize(old + add, 0);
        buf.copy_within(off..old, off + add);
        let mut at = off;
        for v in items {
            let n = entry_size(v.len(), BACK);
            write_entry(&mut buf[at..at + n], v, BACK);
            at += n;
        }
        let count = self.len() + items.len();
        self.set_len(count);
    }

    /// Appends one entry.
    pub(crate) fn push(&mut self, v: &[u8]) {
        self.insert(self.end(), &[v]);
    }

    /// Removes `n` consecutive entries starting at `off`.
    pub(crate) fn delete(&mut self, off: usize, n: usize) {
        let mut stop = off;
        for _ in 0..n {
            stop = self.next(stop);
        }
        self.delete_bytes(off, stop, n);
    }

    /// Removes the bytes `off..stop`, which hold `n` whole entries.
    pub(crate) fn delete_bytes(&mut self, off: usize, stop: usize, n: usize) {
        let count = self.len() - n;
        self.0.drain(off..stop);
        self.fit();
        self.set_len(count);
    }

    /// Replaces the data of the entry at `off` with `v`.
    pub(crate) fn replace(&mut self, off: usize, v: &[u8]) {
        let stop = self.next(off);
        let new = entry_size(v.len(), BACK);
        if stop - off == new {
            write_entry(&mut self.0[off..stop], v, BACK);
            return;
        }
        let mut enc = vec![0; new];
        write_entry(&mut enc, v, BACK);
        if new > stop - off {
            self.reserve(new - (stop - off));
        }
        self.0.splice(off..stop, enc);
        self.fit();
    }

    /// Splits off the entries from `off` on into a new listpack.
    pub(crate) fn split_off(&mut self, off: usize, n: usize) -> Listpack<BACK> {
        let mut tail = Vec::with_capacity(alloc_size(FIRST + self.end() - off));
        tail.extend_from_slice(&(n as u32).to_le_bytes());
        tail.extend_from_slice(&self.0[off..]);
        let count = self.len() - n;
        self.0.truncate(off);
        self.fit();
        self.set_len(count);
        Listpack(tail)
    }
}

impl Listpack<true> {
    /// The offset of the entry before `off` (which must not be `FIRST`).
    pub(crate) fn prev(&self, off: usize) -> usize {
        let (mut head, mut shift, mut at) = (0usize, 0, off);
        loop {
            at -= 1;
            let byte = self.0[at];
            head |= usize::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                break;
            }
        }
        at - head
    }

    /// The offset of the last entry, if any.
    pub(crate) fn last(&self) -> Option<usize> {
        (self.len() > 0).then(|| self.prev(self.end()))
    }
}

/// Iterator over a listpack's entries, first to last.
pub(crate) struct Iter<'a, const BACK: bool> {
    lp: &'a Listpack<BACK>,
    off: usize,
    left: usize,
}

impl<'a, const BACK: bool> Iterator for Iter<'a, BACK> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.left == 0 {
            return None;
        }
        let (data, next) = self.lp.entry(self.off);
        self.off = next;
        self.left -= 1;
        Some(data)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<const BACK: bool> ExactSizeIterator for Iter<'_, BACK> {}

/// A sorted-set score as a listpack entry: an integral score of magnitude
/// below 2^53 as its shortest little-endian two's-complement bytes (0 to 7
/// of them), anything else as the 8 bytes of the `f64`.
pub(crate) fn score_bytes(score: f64, out: &mut [u8; 8]) -> usize {
    const LIMIT: f64 = 9_007_199_254_740_992.0; // 2^53
    let negative_zero = score == 0.0 && score.is_sign_negative();
    if score.fract() != 0.0 || score.abs() >= LIMIT || negative_zero {
        *out = score.to_le_bytes();
        return 8;
    }
    let n = score as i64;
    let bytes = n.to_le_bytes();
    // The fewest bytes that sign-extend back to n; 7 always do below 2^53.
    let k = (0..7)
        .find(|&k| i64::from_le_bytes(sign_extend(&bytes[..k])) == n)
        .unwrap_or(7);
    out[..k].copy_from_slice(&bytes[..k]);
    k
}

fn sign_extend(b: &[u8]) -> [u8; 8] {
    let fill = if b.last().is_some_and(|&x| x & 0x80 != 0) {
        0xff
    } else {
        0
    };
    let mut out = [fill; 8];
    out[..b.len()].copy_from_slice(b);
    out
}

/// Reads a score written by [`score_bytes`].
pub(crate) fn read_score(b: &[u8]) -> f64 {
    match b.len() {
        0 => 0.0,
        8 => f64::from_le_bytes(b.try_into().unwrap_or([0; 8])),
        _ => i64::from_le_bytes(sign_extend(b)) as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_walk_both_ways() {
        let mut lp = Listpack::<true>::new();
        let long = vec![b'x'; 300];
        let huge = vec![b'y'; 20_000];
        lp.push(b"a");
        lp.push(&long);
        lp.push(b"");
        lp.push(&huge);
        assert_eq!(lp.len(), 4);
        let all: Vec<&[u8]> = lp.iter().collect();
        assert_eq!(all, [&b"a"[..], &long[..], b"", &huge[..]]);
        let mut off = lp.end();
        let mut back = Vec::new();
        while off > FIRST {
            off = lp.prev(off);
            back.push(lp.get(off).len());
        }
        assert_eq!(back, [20_000, 0, 300, 1]);
        assert_eq!(lp.heap_bytes(), alloc_size(lp.bytes()));
    }

    #[test]
    fn insert_delete_replace_split() {
        let mut lp = Forward::new();
        lp.insert(FIRST, &[b"b", b"d"]);
        lp.insert(FIRST, &[b"a"]);
        let d = lp.find(b"d", 1).unwrap();
        lp.insert(d, &[b"c"]);
        assert_eq!(lp.iter().collect::<Vec<_>>(), [b"a", b"b", b"c", b"d"]);
        let c = lp.find(b"c", 1).unwrap();
        lp.replace(c, &[b'z'; 200]);
        lp.replace(lp.find(b"a", 1).unwrap(), b"A");
        assert_eq!(lp.get(lp.seek(2)), &[b'z'; 200][..]);
        lp.delete(lp.seek(1), 2);
        assert_eq!(lp.iter().collect::<Vec<_>>(), [b"A", b"d"]);
        assert_eq!(lp.find(b"d", 2), None, "d is not at an even position");
        let tail = lp.split_off(lp.seek(1), 1);
        assert_eq!(lp.iter().collect::<Vec<_>>(), [b"A"]);
        assert_eq!(tail.iter().collect::<Vec<_>>(), [b"d"]);
    }

    /// The buffer holds exactly its content's size class: no memory beyond
    /// what an exact-size buffer would cost, and room to grow into.
    fn assert_class_capacity<const B: bool>(lp: &Listpack<B>) {
        assert_eq!(
            lp.0.capacity(),
            alloc_size(lp.bytes()),
            "{} bytes",
            lp.bytes()
        );
        assert_eq!(lp.heap_bytes(), alloc_size(lp.bytes()));
    }

    #[test]
    fn capacity_grows_and_shrinks_by_size_class() {
        let mut lp = Listpack::<true>::new();
        assert_class_capacity(&lp);
        let mut moves = 0;
        for i in 0..2_000usize {
            let before = lp.as_bytes().as_ptr();
            let class = lp.heap_bytes();
            let v = vec![b'v'; i % 7];
            if i % 2 == 0 {
                lp.insert(FIRST, &[&v]);
            } else {
                lp.push(&v);
            }
            assert_class_capacity(&lp);
            if lp.heap_bytes() == class {
                // Room within the class: the buffer stayed where it was.
                assert_eq!(lp.as_bytes().as_ptr(), before);
            } else {
                moves += 1;
            }
        }
        // 2,000 pushes of up to 8 bytes (about 10 KB) cross only a few
        // dozen classes.
        assert!(moves < 60, "{moves} reallocations");
        let tail = lp.split_off(lp.seek(1_500), 500);
        assert_class_capacity(&lp);
        assert_class_capacity(&tail);
        while lp.len() > 0 {
            lp.delete(FIRST, 1);
            assert_class_capacity(&lp);
        }
        let mut f = Forward::new();
        for _ in 0..50 {
            f.push(b"abc");
        }
        let f_copy = Forward::from_bytes(f.as_bytes());
        assert_class_capacity(&f_copy);
        f.replace(FIRST, &[b'x'; 300]);
        assert_class_capacity(&f);
        f.replace(FIRST, b"y");
        assert_class_capacity(&f);
    }

    #[test]
    fn scores_round_trip_compactly() {
        let mut buf = [0; 8];
        for s in [
            0.0, 1.0, -1.0, 127.0, 128.0, -129.0, 1e15, -1e15, 2.5, -0.0, 1e300,
        ] {
            let n = score_bytes(s, &mut buf);
            let back = read_score(&buf[..n]);
            assert_eq!(back.to_bits(), s.to_bits(), "{s}");
        }
        assert_eq!(score_bytes(1.0, &mut buf), 1);
        assert_eq!(score_bytes(0.0, &mut buf), 0);
        assert_eq!(score_bytes(2.5, &mut buf), 8);
    }

    #[test]
    fn forward_entries_skip_the_back_length() {
        let mut f = Forward::new();
        let mut b = Listpack::<true>::new();
        for v in [&b"abc"[..], &[b'x'; 200][..]] {
            f.push(v);
            b.push(v);
        }
        assert_eq!(f.bytes(), FIRST + 4 + 202);
        assert_eq!(b.bytes(), FIRST + 5 + 204);
        assert_eq!(f.iter().collect::<Vec<_>>(), b.iter().collect::<Vec<_>>());
    }
}
