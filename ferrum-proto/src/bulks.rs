//! Aggregates of bulk strings written as RESP while they are gathered.
//!
//! A reply of many elements (`LRANGE`, `HGETALL`, `SMEMBERS`...) built as a
//! [`Frame::Array`] of [`Frame::Bulk`]s costs a `Bytes` handle and a frame
//! per element, and the encoder then copies every element a second time.
//! [`BulksWriter`] instead writes each element's `$<len>\r\n<bytes>\r\n`
//! into one buffer as the caller walks its collection, and
//! [`Frame::Bulks`] carries that buffer: the encoder writes the aggregate's
//! header for the connection's protocol and copies the body whole.
//!
//! The body is the same in RESP2 and RESP3 (a bulk string is written the same
//! in both); only the header differs: `*<n>` for an array, `~<n>` for a
//! RESP3 set, `%<n/2>` for a RESP3 map, whose body is keys and values
//! alternating. Consumers that need the values (a script's `redis.call`,
//! tests) get the ordinary frame back with [`Bulks::into_frame`] or walk
//! the elements with [`Bulks::iter`].

use bytes::Bytes;

use crate::Frame;

/// Which aggregate a [`Bulks`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BulksKind {
    /// An array (`*`) in both protocols.
    Array,
    /// A RESP3 set (`~`); an array in RESP2.
    Set,
    /// A RESP3 map (`%`) of keys and values alternating; a flat array in
    /// RESP2.
    Map,
}

/// An aggregate of bulk strings already written as RESP. See the module
/// docs.
#[derive(Clone, Debug, PartialEq)]
pub struct Bulks {
    kind: BulksKind,
    /// Elements in the body (keys and values both, for a map). A `u32` and
    /// a `Vec` (not `Bytes`) keep [`Frame`] at its 40 bytes;
    /// [`BulksWriter::finish`] never makes more.
    count: u32,
    /// Every element as `$<len>\r\n<bytes>\r\n`, back to back.
    body: Vec<u8>,
}

impl Bulks {
    /// The aggregate's kind.
    pub fn kind(&self) -> BulksKind {
        self.kind
    }

    /// Number of elements (keys and values both, for a map).
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The elements' encoded bytes, written after the header.
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// The elements, in order, as slices of the body (no copy).
    pub fn iter(&self) -> BulksIter<'_> {
        BulksIter {
            body: &self.body,
            at: 0,
        }
    }

    /// The same reply as an ordinary frame: an array, set or map of
    /// [`Frame::Bulk`]s (slices of the body, which becomes their one shared
    /// buffer), which encodes to the same bytes.
    pub fn into_frame(self) -> Frame {
        let len = self.len();
        let ranges: Vec<_> = self.iter().ranges().collect();
        let body = Bytes::from(self.body);
        let items = ranges.into_iter().map(|r| Frame::Bulk(body.slice(r)));
        match self.kind {
            BulksKind::Array => Frame::Array(items.collect()),
            BulksKind::Set => Frame::Set(items.collect()),
            BulksKind::Map => {
                let mut items = items;
                let mut pairs = Vec::with_capacity(len / 2);
                while let (Some(k), Some(v)) = (items.next(), items.next()) {
                    pairs.push((k, v));
                }
                Frame::Map(pairs)
            }
        }
    }
}

/// Iterator over a [`Bulks`]'s elements.
pub struct BulksIter<'a> {
    body: &'a [u8],
    at: usize,
}

impl<'a> BulksIter<'a> {
    /// Where each element lies in the body.
    fn ranges(self) -> impl Iterator<Item = std::ops::Range<usize>> + 'a {
        let mut it = self;
        std::iter::from_fn(move || it.next_range())
    }

    fn next_range(&mut self) -> Option<std::ops::Range<usize>> {
        // The body was written by `BulksWriter`, so it is well formed; a
        // malformed one would end the walk rather than panic.
        let rest = self.body.get(self.at..)?;
        let digits = rest.strip_prefix(b"$")?;
        let cr = digits.iter().position(|&b| b == b'\r')?;
        let len: usize = std::str::from_utf8(&digits[..cr]).ok()?.parse().ok()?;
        let start = self.at + 1 + cr + 2;
        let end = start.checked_add(len)?;
        if end + 2 > self.body.len() {
            return None;
        }
        self.at = end + 2;
        Some(start..end)
    }
}

impl<'a> Iterator for BulksIter<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let body = self.body;
        self.next_range().map(|r| &body[r])
    }
}

/// Builds a [`Frame::Bulks`] element by element.
///
/// ```
/// use bytes::BytesMut;
/// use ferrum_proto::{BulksKind, BulksWriter, Frame, Protocol};
///
/// let mut w = BulksWriter::with_capacity(2, 4);
/// w.push(b"a");
/// w.push_int(-7);
/// let frame = w.finish(BulksKind::Array);
/// let mut out = BytesMut::new();
/// frame.encode(Protocol::Resp3, &mut out);
/// assert_eq!(&out[..], b"*2\r\n$1\r\na\r\n$2\r\n-7\r\n");
/// assert_eq!(frame, Frame::bulks(["a", "-7"]));
/// ```
#[derive(Debug, Default)]
pub struct BulksWriter {
    buf: Vec<u8>,
    count: usize,
}

impl BulksWriter {
    /// A writer with room for `elements` elements of `bytes` bytes in all,
    /// so that a caller that knows the sizes writes without reallocating.
    pub fn with_capacity(elements: usize, bytes: usize) -> BulksWriter {
        // Each element adds `$`, its length's digits and two CRLFs: 7 bytes
        // up to 99 bytes long, 8 up to 999.
        BulksWriter {
            buf: Vec::with_capacity(bytes + elements * 8),
            count: 0,
        }
    }

    /// Appends one bulk string.
    pub fn push(&mut self, item: &[u8]) {
        let mut len = itoa::Buffer::new();
        let len = len.format(item.len()).as_bytes();
        self.buf.reserve(len.len() + item.len() + 5);
        self.buf.push(b'$');
        self.buf.extend_from_slice(len);
        self.buf.extend_from_slice(b"\r\n");
        self.buf.extend_from_slice(item);
        self.buf.extend_from_slice(b"\r\n");
        self.count += 1;
    }

    /// Appends an integer as a bulk string of its decimal digits (an intset
    /// member, say).
    pub fn push_int(&mut self, n: i64) {
        self.push(itoa::Buffer::new().format(n).as_bytes());
    }

    /// Number of elements pushed so far.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether nothing was pushed yet.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The frame of the elements pushed.
    ///
    /// A map's elements are its keys and values alternating; the caller
    /// guarantees an even count (a last key without a value would go out as
    /// one more element than the header announces in RESP3). Past `u32::MAX`
    /// elements (not a reply anyone can hold) it returns the ordinary frame.
    pub fn finish(self, kind: BulksKind) -> Frame {
        debug_assert!(kind != BulksKind::Map || self.count % 2 == 0);
        let bulks = Bulks {
            kind,
            count: u32::try_from(self.count).unwrap_or(u32::MAX),
            body: self.buf,
        };
        if bulks.len() == self.count {
            Frame::Bulks(bulks)
        } else {
            bulks.into_frame()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Protocol;
    use bytes::BytesMut;
    use proptest::prelude::*;

    fn written(items: &[Vec<u8>], kind: BulksKind) -> Frame {
        let mut w = BulksWriter::with_capacity(items.len(), 0);
        for item in items {
            w.push(item);
        }
        w.finish(kind)
    }

    /// The same reply built the ordinary way, a frame per element.
    fn ordinary(items: &[Vec<u8>], kind: BulksKind) -> Frame {
        let bulk = |b: &Vec<u8>| Frame::Bulk(Bytes::copy_from_slice(b));
        match kind {
            BulksKind::Array => Frame::Array(items.iter().map(bulk).collect()),
            BulksKind::Set => Frame::Set(items.iter().map(bulk).collect()),
            BulksKind::Map => Frame::Map(
                items
                    .chunks_exact(2)
                    .map(|p| (bulk(&p[0]), bulk(&p[1])))
                    .collect(),
            ),
        }
    }

    fn bytes_of(frame: &Frame, protocol: Protocol) -> Vec<u8> {
        let mut out = BytesMut::new();
        frame.encode(protocol, &mut out);
        out.to_vec()
    }

    /// Byte-exact against the ordinary path in both protocols, equal to it,
    /// and converted back to it.
    fn check(items: &[Vec<u8>], kind: BulksKind) {
        let (w, o) = (written(items, kind), ordinary(items, kind));
        assert!(matches!(w, Frame::Bulks(_)));
        for protocol in [Protocol::Resp2, Protocol::Resp3] {
            assert_eq!(
                bytes_of(&w, protocol),
                bytes_of(&o, protocol),
                "{kind:?} {protocol:?}"
            );
        }
        assert_eq!(w, o);
        assert_eq!(o, w);
        let Frame::Bulks(b) = w else {
            unreachable!("checked above")
        };
        assert_eq!(b.len(), items.len());
        assert!(b.iter().eq(items.iter().map(|i| &i[..])));
        assert!(matches!(
            (b.into_frame(), &o),
            (Frame::Array(_), Frame::Array(_))
                | (Frame::Set(_), Frame::Set(_))
                | (Frame::Map(_), Frame::Map(_))
        ));
    }

    #[test]
    fn headers_by_kind_and_protocol() {
        let items: Vec<Vec<u8>> = vec![b"k".to_vec(), b"".to_vec()];
        let enc = |kind, protocol| bytes_of(&written(&items, kind), protocol);
        assert_eq!(
            enc(BulksKind::Array, Protocol::Resp3),
            b"*2\r\n$1\r\nk\r\n$0\r\n\r\n"
        );
        assert_eq!(
            enc(BulksKind::Set, Protocol::Resp2),
            b"*2\r\n$1\r\nk\r\n$0\r\n\r\n"
        );
        assert_eq!(
            enc(BulksKind::Set, Protocol::Resp3),
            b"~2\r\n$1\r\nk\r\n$0\r\n\r\n"
        );
        assert_eq!(
            enc(BulksKind::Map, Protocol::Resp2),
            b"*2\r\n$1\r\nk\r\n$0\r\n\r\n"
        );
        assert_eq!(
            enc(BulksKind::Map, Protocol::Resp3),
            b"%1\r\n$1\r\nk\r\n$0\r\n\r\n"
        );
        for kind in [BulksKind::Array, BulksKind::Set, BulksKind::Map] {
            check(&[], kind);
            check(&items, kind);
        }
    }

    #[test]
    fn binary_and_long_elements() {
        let items = vec![
            b"a\r\n$3\r\n".to_vec(),
            vec![0u8; 1000],
            vec![b'x'; 100_000],
        ];
        check(&items, BulksKind::Array);
        check(&items, BulksKind::Set);
    }

    #[test]
    fn integers_are_written_as_their_digits() {
        let mut w = BulksWriter::default();
        for n in [0, -1, i64::MIN, i64::MAX] {
            w.push_int(n);
        }
        assert_eq!(
            w.finish(BulksKind::Set),
            Frame::Set(
                ["0", "-1", "-9223372036854775808", "9223372036854775807"]
                    .into_iter()
                    .map(Frame::bulk)
                    .collect()
            )
        );
    }

    #[test]
    fn different_replies_are_not_equal() {
        let one = written(&[b"a".to_vec()], BulksKind::Array);
        assert_ne!(one, Frame::bulks(["b"]));
        assert_ne!(one, Frame::Set(vec![Frame::bulk("a")]));
        assert_ne!(one, written(&[b"a".to_vec()], BulksKind::Set));
        assert_ne!(one, Frame::bulk("a"));
    }

    #[test]
    fn frame_keeps_its_size() {
        assert_eq!(size_of::<Frame>(), 40);
    }

    proptest! {
        #[test]
        fn encodes_as_the_ordinary_frame(
            items in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..30),
            kind in prop_oneof![Just(BulksKind::Array), Just(BulksKind::Set), Just(BulksKind::Map)],
        ) {
            let mut items = items;
            if kind == BulksKind::Map && items.len() % 2 == 1 {
                items.pop();
            }
            check(&items, kind);
        }
    }
}
