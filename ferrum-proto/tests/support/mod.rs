//! Helpers shared by the integration tests: feeding a codec in chunks and
//! recording what it yields.

#![allow(dead_code)] // Each test binary uses its own subset.

use bytes::BytesMut;
use ferrum_proto::{Frame, Limits, RespCodec};
use tokio_util::codec::Decoder;

/// What a stream decoded to: the frames, then the error text if it failed.
#[derive(Debug, PartialEq)]
pub(crate) struct Outcome {
    pub(crate) frames: Vec<Frame>,
    pub(crate) error: Option<String>,
}

/// Feeds `input` to `codec` in chunks of the given sizes (cycled), decoding
/// after each chunk until the codec asks for more.
pub(crate) fn feed(codec: &mut RespCodec, input: &[u8], chunks: &[usize]) -> (Outcome, BytesMut) {
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    let mut rest = input;
    let mut sizes = chunks.iter().copied().filter(|&n| n > 0).cycle();
    while !rest.is_empty() {
        let n = sizes.next().unwrap_or(rest.len()).min(rest.len());
        buf.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
        loop {
            match codec.decode(&mut buf) {
                Ok(Some(frame)) => frames.push(frame),
                Ok(None) => break,
                Err(err) => {
                    return (
                        Outcome {
                            frames,
                            error: Some(err.to_string()),
                        },
                        buf,
                    )
                }
            }
        }
    }
    (
        Outcome {
            frames,
            error: None,
        },
        buf,
    )
}

/// The codecs a side is tested with: fast path on and off.
pub(crate) fn codecs(server: bool, limits: Limits) -> Vec<(&'static str, RespCodec)> {
    let make = || {
        if server {
            RespCodec::server(limits)
        } else {
            RespCodec::client(limits)
        }
    };
    vec![
        ("fast path", make()),
        ("combine only", make().with_fast_path(false)),
    ]
}
