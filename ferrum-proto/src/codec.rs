//! [`RespCodec`]: the `tokio-util` [`Decoder`] and [`Encoder`] for RESP.
//!
//! One type serves both ends of a connection. [`RespCodec::server`] decodes
//! requests the way redis-server reads them (multibulk or inline, always an
//! array of bulk strings); [`RespCodec::client`] decodes any RESP2 or RESP3
//! reply. Either encodes frames in the [`Protocol`] set with
//! [`RespCodec::set_protocol`].
//!
//! Decoding first tries the fast path (`fast.rs`) when the server codec is
//! between frames; if the frame is incomplete, or on the client side, the
//! resumable combine parser takes over and keeps its place across reads.

use std::ops::Range;

use bytes::{Buf, Bytes, BytesMut};
use combine::parser::combinator::AnySendSyncPartialState;
use tokio_util::codec::{Decoder, Encoder};

use crate::fast::{self, Step};
use crate::parse::run;
use crate::{reply, request, Frame, Limits, ProtoError, Protocol};

/// Which side of the connection the codec decodes for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    /// Decodes requests, as a server reads them.
    Server,
    /// Decodes replies, as a client reads them.
    Client,
}

/// A streaming RESP2/RESP3 codec for [`tokio_util::codec::Framed`].
///
/// Decoding never reserves buffer space for a length a peer declares: bytes
/// are parsed as they arrive, limits are checked as soon as a header is read,
/// and a frame cut short by the end of a read resumes where it stopped.
///
/// ```
/// use bytes::BytesMut;
/// use ferrum_proto::{Frame, Limits, RespCodec};
/// use tokio_util::codec::Decoder;
///
/// let mut codec = RespCodec::server(Limits::default());
/// let mut buf = BytesMut::from(&b"*2\r\n$3\r\nGET\r\n$1\r"[..]);
/// assert_eq!(codec.decode(&mut buf)?, None); // the rest has not arrived
/// buf.extend_from_slice(b"\nk\r\nPING\r\n");
/// assert_eq!(codec.decode(&mut buf)?, Some(Frame::bulks(["GET", "k"])));
/// assert_eq!(codec.decode(&mut buf)?, Some(Frame::bulks(["PING"]))); // inline
/// # Ok::<(), ferrum_proto::ProtoError>(())
/// ```
pub struct RespCodec {
    side: Side,
    limits: Limits,
    protocol: Protocol,
    fast_path: bool,
    /// Where the combine parser stopped, when `in_frame`.
    state: AnySendSyncPartialState,
    /// The combine parser holds part of a frame; its bytes have left `buf`.
    in_frame: bool,
    /// How many bytes of that part have left `buf`.
    partial_bytes: usize,
    /// Scratch space for the fast path's argument positions.
    spans: Vec<Range<usize>>,
}

impl RespCodec {
    /// A codec for the server side: decodes requests (multibulk or inline)
    /// into [`Frame::Array`]s of [`Frame::Bulk`]s, and encodes replies in
    /// RESP2 until [`set_protocol`](Self::set_protocol) says otherwise.
    ///
    /// Like redis-server, it skips requests with no arguments (`*0`, `*-1`,
    /// a blank inline line) instead of yielding them.
    pub fn server(limits: Limits) -> RespCodec {
        RespCodec::new(Side::Server, limits)
    }

    /// A codec for the client side: decodes any RESP2 or RESP3 reply,
    /// including nested aggregates. `$-1` is [`Frame::Null`], `*-1` is
    /// [`Frame::NullArray`], RESP3's `_` is [`Frame::Null`], a blob error `!`
    /// is a [`Frame::Error`], and attributes (`|`) are skipped.
    pub fn client(limits: Limits) -> RespCodec {
        RespCodec::new(Side::Client, limits)
    }

    fn new(side: Side, limits: Limits) -> RespCodec {
        RespCodec {
            side,
            limits,
            protocol: Protocol::Resp2,
            fast_path: true,
            state: AnySendSyncPartialState::default(),
            in_frame: false,
            partial_bytes: 0,
            spans: Vec::new(),
        }
    }

    /// Selects how the encoder writes RESP3-only frames (after `HELLO 3`, say).
    /// Decoding accepts both protocols either way.
    pub fn set_protocol(&mut self, protocol: Protocol) {
        self.protocol = protocol;
    }

    /// The protocol the encoder writes.
    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    /// Bytes of a frame not yet complete that decoding took out of the
    /// buffer: what the decoder holds for it (a server counts them as the
    /// client's memory, as Redis counts a partial command's arguments).
    /// 0 between frames.
    pub fn partial_bytes(&self) -> usize {
        self.partial_bytes
    }

    /// The limits the decoder enforces.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Replaces the limits, from the next header read on (a server may
    /// tighten them for a connection that has not authenticated).
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// Turns the complete-request fast path on (the default) or off.
    ///
    /// Off, every request goes through the resumable combine parser, and its
    /// bulk payloads are copied instead of sliced from the read buffer. Both
    /// give the same frames and errors; tests, benchmarks and the fuzz target
    /// turn it off to compare them. The client side has no fast path.
    #[must_use]
    pub fn with_fast_path(mut self, enabled: bool) -> RespCodec {
        self.fast_path = enabled;
        self
    }

    /// Runs the resumable parser on `buf`, drops what it committed, and
    /// returns its output: `None` for "more bytes needed", `Some(None)` for a
    /// request to skip.
    /// Decodes one request straight into its arguments, the server's hot
    /// path: the same requests and errors as [`Decoder::decode`], without
    /// building a [`Frame`] per argument. Requests with no arguments are
    /// skipped, as the decoder skips them. Server side only: a client codec
    /// decodes replies, which are not argument lists.
    ///
    /// # Errors
    ///
    /// The [`ProtoError`] that [`Decoder::decode`] gives for these bytes.
    pub fn decode_args(&mut self, buf: &mut BytesMut) -> Result<Option<Vec<Bytes>>, ProtoError> {
        let mut args = Vec::new();
        Ok(self.decode_args_into(buf, &mut args)?.then_some(args))
    }

    /// [`RespCodec::decode_args`] into `args` (replacing what it held),
    /// so that a connection reuses one vector for every command: `true`
    /// when a request was decoded, `false` when more bytes are needed.
    ///
    /// # Errors
    ///
    /// The [`ProtoError`] that [`Decoder::decode`] gives for these bytes.
    pub fn decode_args_into(
        &mut self,
        buf: &mut BytesMut,
        args: &mut Vec<Bytes>,
    ) -> Result<bool, ProtoError> {
        debug_assert!(self.side == Side::Server, "decode_args is for requests");
        loop {
            if buf.is_empty() {
                return Ok(false);
            }
            if self.fast_path && !self.in_frame {
                match fast::request(buf, &self.limits, &mut self.spans, args)? {
                    Step::Args => return Ok(true),
                    Step::Frame(frame) => match frame_args(frame, args) {
                        true => return Ok(true),
                        false => continue,
                    },
                    Step::Skipped => continue,
                    Step::Incomplete => {}
                }
            }
            match self.resume(buf)? {
                None => return Ok(false),
                Some(Some(frame)) => match frame_args(frame, args) {
                    true => return Ok(true),
                    false => continue,
                },
                Some(None) => continue,
            }
        }
    }

    fn resume(&mut self, buf: &mut BytesMut) -> Result<Option<Option<Frame>>, ProtoError> {
        let (out, committed) = match self.side {
            Side::Server => run(request::request(self.limits), &buf[..], &mut self.state)?,
            Side::Client => {
                let (frame, committed) =
                    run(reply::reply(self.limits, 0), &buf[..], &mut self.state)?;
                (frame.map(Some), committed)
            }
        };
        buf.advance(committed);
        self.in_frame = out.is_none();
        self.partial_bytes = if self.in_frame {
            self.partial_bytes + committed
        } else {
            0
        };
        if !self.in_frame {
            // Start the next frame from a clean state rather than whatever the
            // finished parsers left behind.
            self.state = AnySendSyncPartialState::default();
        }
        Ok(out)
    }
}

/// Puts a request frame's arguments in `args`, replacing what it held:
/// the server-side parsers only produce arrays of bulk strings; anything
/// else (or an empty array) gives `false`.
fn frame_args(frame: Frame, args: &mut Vec<Bytes>) -> bool {
    let Frame::Array(items) = frame else {
        return false;
    };
    args.clear();
    args.extend(items.into_iter().filter_map(|f| match f {
        Frame::Bulk(b) => Some(b),
        _ => None,
    }));
    !args.is_empty()
}

impl Decoder for RespCodec {
    type Item = Frame;
    type Error = ProtoError;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, ProtoError> {
        loop {
            if buf.is_empty() {
                return Ok(None);
            }
            if self.side == Side::Server && self.fast_path && !self.in_frame {
                let mut args = Vec::new();
                match fast::request(buf, &self.limits, &mut self.spans, &mut args)? {
                    Step::Args => {
                        return Ok(Some(Frame::Array(
                            args.into_iter().map(Frame::Bulk).collect(),
                        )))
                    }
                    Step::Frame(frame) => return Ok(Some(frame)),
                    Step::Skipped => continue,
                    Step::Incomplete => {}
                }
            }
            match self.resume(buf)? {
                None => return Ok(None),
                Some(Some(frame)) => return Ok(Some(frame)),
                Some(None) => continue,
            }
        }
    }
}

impl Encoder<&Frame> for RespCodec {
    type Error = ProtoError;

    fn encode(&mut self, frame: &Frame, dst: &mut BytesMut) -> Result<(), ProtoError> {
        frame.encode(self.protocol, dst);
        Ok(())
    }
}

impl Encoder<Frame> for RespCodec {
    type Error = ProtoError;

    fn encode(&mut self, frame: Frame, dst: &mut BytesMut) -> Result<(), ProtoError> {
        frame.encode(self.protocol, dst);
        Ok(())
    }
}

impl std::fmt::Debug for RespCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RespCodec")
            .field("side", &self.side)
            .field("limits", &self.limits)
            .field("protocol", &self.protocol)
            .field("fast_path", &self.fast_path)
            .field("in_frame", &self.in_frame)
            .finish_non_exhaustive()
    }
}
