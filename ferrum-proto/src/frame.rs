//! The RESP value model shared by requests and replies.

use bytes::Bytes;

use crate::Bulks;

/// Which RESP version a connection speaks. `HELLO 3` switches to RESP3.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Protocol {
    /// RESP2, the default for a new connection.
    #[default]
    Resp2,
    /// RESP3, negotiated with `HELLO 3`.
    Resp3,
}

/// One RESP value.
///
/// Strings are binary [`Bytes`], never `String`. RESP3-only types are encoded
/// down to their RESP2 equivalents when the connection speaks RESP2, the way
/// Redis does (a map becomes a flat array, a double a bulk string, ...).
///
/// Frames compare by the reply they stand for: a [`Frame::Bulks`] equals the
/// array, set or map of bulk strings it encodes the same as.
#[derive(Clone, Debug)]
pub enum Frame {
    /// `+OK\r\n`
    Simple(Bytes),
    /// `-ERR message\r\n`
    Error(Bytes),
    /// `:42\r\n`
    Integer(i64),
    /// `$3\r\nfoo\r\n`
    Bulk(Bytes),
    /// The null bulk string (`$-1\r\n` in RESP2, `_\r\n` in RESP3).
    Null,
    /// The null array (`*-1\r\n` in RESP2, `_\r\n` in RESP3).
    NullArray,
    /// `*2\r\n...`
    Array(Vec<Frame>),
    /// RESP3 map `%`; a flat array of key, value, key, value in RESP2.
    Map(Vec<(Frame, Frame)>),
    /// RESP3 set `~`; an array in RESP2.
    Set(Vec<Frame>),
    /// RESP3 double `,`; a bulk string in RESP2.
    Double(f64),
    /// RESP3 boolean `#`; the integer 1 or 0 in RESP2.
    Boolean(bool),
    /// RESP3 verbatim string `=`, with its three-byte format (`txt`, `mkd`);
    /// a bulk string of the text in RESP2.
    Verbatim {
        /// The format, such as `b"txt"`.
        format: [u8; 3],
        /// The text after the `fmt:` prefix.
        text: Bytes,
    },
    /// RESP3 big number `(`, kept as its decimal digits; a bulk string in RESP2.
    BigNumber(Bytes),
    /// RESP3 out-of-band push `>`; an array in RESP2.
    Push(Vec<Frame>),
    /// An array, set or map of bulk strings already written as RESP (see
    /// [`crate::BulksWriter`]): a many-element reply without a frame per
    /// element. Never produced by the decoder.
    Bulks(Bulks),
    /// A reply with RESP3 attributes (`|`): the attributes are written
    /// first, then the reply; RESP2 gets the reply alone. Never produced by
    /// the decoder, which drops attributes.
    Attributed {
        /// The attributes, key and value.
        attrs: Vec<(Frame, Frame)>,
        /// The reply they annotate.
        reply: Box<Frame>,
    },
}

impl PartialEq for Frame {
    fn eq(&self, other: &Frame) -> bool {
        use Frame::*;
        match (self, other) {
            (Bulks(a), Bulks(b)) => a == b || a.clone().into_frame() == b.clone().into_frame(),
            (Bulks(a), b) | (b, Bulks(a)) => a.clone().into_frame() == *b,
            (Simple(a), Simple(b)) | (Error(a), Error(b)) | (Bulk(a), Bulk(b)) => a == b,
            (BigNumber(a), BigNumber(b)) => a == b,
            (Integer(a), Integer(b)) => a == b,
            (Null, Null) | (NullArray, NullArray) => true,
            (Array(a), Array(b)) | (Set(a), Set(b)) | (Push(a), Push(b)) => a == b,
            (Map(a), Map(b)) => a == b,
            (
                Attributed { attrs, reply },
                Attributed {
                    attrs: a2,
                    reply: r2,
                },
            ) => attrs == a2 && reply == r2,
            (Double(a), Double(b)) => a == b,
            (Boolean(a), Boolean(b)) => a == b,
            (
                Verbatim { format, text },
                Verbatim {
                    format: f2,
                    text: t2,
                },
            ) => format == f2 && text == t2,
            _ => false,
        }
    }
}

impl Frame {
    /// `+OK`.
    pub const fn ok() -> Frame {
        Frame::Simple(Bytes::from_static(b"OK"))
    }

    /// A simple string from static text.
    pub const fn simple(s: &'static str) -> Frame {
        Frame::Simple(Bytes::from_static(s.as_bytes()))
    }

    /// An error reply from its full text, including the prefix (`ERR ...`,
    /// `WRONGTYPE ...`).
    pub fn error(msg: impl Into<Bytes>) -> Frame {
        Frame::Error(msg.into())
    }

    /// A bulk string.
    pub fn bulk(b: impl Into<Bytes>) -> Frame {
        Frame::Bulk(b.into())
    }

    /// A bulk string, or the null bulk string for `None`.
    pub fn bulk_or_null(b: Option<impl Into<Bytes>>) -> Frame {
        b.map_or(Frame::Null, |b| Frame::Bulk(b.into()))
    }

    /// An array of bulk strings.
    pub fn bulks<I, B>(items: I) -> Frame
    where
        I: IntoIterator<Item = B>,
        B: Into<Bytes>,
    {
        Frame::Array(items.into_iter().map(|b| Frame::Bulk(b.into())).collect())
    }
}
