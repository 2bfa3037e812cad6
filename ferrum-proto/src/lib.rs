//! RESP2 and RESP3 for FerrumKV: the [`Frame`] type and a streaming codec.
//!
//! This crate is a leaf: it knows nothing of the store or of sockets, so it
//! can be used on its own wherever Redis's wire protocol is spoken.
//!
//! - [`Frame`] is one RESP value; strings are binary [`bytes::Bytes`].
//!   [`BulksWriter`] builds a many-element reply of bulk strings already
//!   written as RESP ([`Frame::Bulks`]), with no frame per element.
//! - [`RespCodec`] is a `tokio-util` decoder and encoder. Its server side reads
//!   requests as redis-server does (multibulk or inline); its client side
//!   reads any reply. Decoding is streaming: partial input returns `Ok(None)`
//!   and resumes later without re-parsing, and complete requests are sliced
//!   out of the read buffer without copying.
//! - [`Limits`] bounds what a peer may declare, and [`ProtoError`] carries
//!   Redis's exact protocol error texts.
//!
//! # Example
//!
//! A server decodes a request and encodes the reply:
//!
//! ```
//! use bytes::BytesMut;
//! use ferrum_proto::{Frame, Limits, Protocol, RespCodec};
//! use tokio_util::codec::{Decoder, Encoder};
//!
//! let mut codec = RespCodec::server(Limits::default());
//! let mut read_buf = BytesMut::from(&b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n"[..]);
//! let request = codec.decode(&mut read_buf)?.expect("a whole command arrived");
//! assert_eq!(request, Frame::bulks(["SET", "key", "value"]));
//!
//! let mut write_buf = BytesMut::new();
//! codec.encode(&Frame::ok(), &mut write_buf)?;
//! assert_eq!(&write_buf[..], b"+OK\r\n");
//!
//! // After `HELLO 3`, RESP3-only types go out as themselves.
//! codec.set_protocol(Protocol::Resp3);
//! codec.encode(Frame::Double(1.5), &mut write_buf)?;
//! assert_eq!(&write_buf[..], b"+OK\r\n,1.5\r\n");
//! # Ok::<(), ferrum_proto::ProtoError>(())
//! ```
//!
//! # Choices where Redis leaves room
//!
//! - A bulk payload must be followed by CRLF
//!   ([`ProtoError::ExpectedCrlf`]); Redis skips those two bytes unchecked.
//! - The line limits ("too big inline request", "too big mbulk count string",
//!   "too big bulk count string") trip, as in Redis, only while a line's
//!   terminator has not arrived, so a long line that arrives whole is accepted.
//! - Inline arguments keep empty quoted strings (`SET k ""`), as Redis 7 does.
//! - Redis's tighter limits for clients that have not authenticated (10
//!   arguments, 16 KiB bulks) are one flag, [`Limits::authenticated`]; a
//!   server switches them with [`RespCodec::set_limits`] once `AUTH`
//!   succeeds.
//! - Requests that straddle reads go through the resumable parser, which
//!   copies their payloads; only whole requests are sliced without copying.
//!
//! A protocol error is the end of the connection: the server sends
//! `-ERR {error}\r\n` and closes, as Redis does.
//!
//! ```
//! use bytes::BytesMut;
//! use ferrum_proto::{Limits, RespCodec};
//! use tokio_util::codec::Decoder;
//!
//! let mut codec = RespCodec::server(Limits::default());
//! let err = codec.decode(&mut BytesMut::from(&b"*1\r\nfoo\r\n"[..])).unwrap_err();
//! assert_eq!(err.to_string(), "Protocol error: expected '$', got 'f'");
//! ```

mod bulks;
mod codec;
mod encode;
mod error;
mod fast;
mod frame;
mod inline;
mod limits;
mod line;
mod parse;
mod reply;
mod request;
pub mod slot;

pub use bulks::{Bulks, BulksIter, BulksKind, BulksWriter};
pub use codec::RespCodec;
pub use error::ProtoError;
pub use frame::{Frame, Protocol};
pub use inline::split_args;
pub use limits::Limits;
pub use line::parse_i64;
