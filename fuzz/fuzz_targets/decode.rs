//! Feeds arbitrary bytes, cut into arbitrary reads, to both sides' decoders.
//!
//! The first bytes of the input choose the read sizes and the limits; the
//! rest is the stream. Beyond "no panic, no hang, no runaway allocation" it
//! checks three properties:
//! - the server side gives the same frames and error with and without the
//!   fast path (the two parsers must agree);
//! - how a stream is cut into reads never changes the frames it yields
//!   (line-length limits aside, which depend on how much has arrived);
//! - whatever the client side decodes re-encodes to bytes that decode to the
//!   same frames.

#![no_main]

use bytes::BytesMut;
use ferrum_proto::{Frame, Limits, Protocol, RespCodec};
use libfuzzer_sys::fuzz_target;
use tokio_util::codec::Decoder;

/// What a stream decoded to: its frames, then its error text, if any.
#[derive(Debug, PartialEq)]
struct Outcome {
    frames: Vec<Frame>,
    error: Option<String>,
}

fn feed(mut codec: RespCodec, input: &[u8], reads: &[usize]) -> Outcome {
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    let mut rest = input;
    let mut sizes = reads.iter().copied().cycle();
    while !rest.is_empty() {
        let n = sizes.next().unwrap_or(rest.len()).clamp(1, rest.len());
        buf.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
        loop {
            match codec.decode(&mut buf) {
                Ok(Some(frame)) => frames.push(frame),
                Ok(None) => break,
                Err(err) => {
                    return Outcome {
                        frames,
                        error: Some(err.to_string()),
                    }
                }
            }
        }
    }
    Outcome {
        frames,
        error: None,
    }
}

fn too_big(outcome: &Outcome) -> bool {
    outcome
        .error
        .as_deref()
        .is_some_and(|e| e.starts_with("Protocol error: too big"))
}

fn encode(frames: &[Frame]) -> Vec<u8> {
    let mut out = BytesMut::new();
    for frame in frames {
        frame.encode(Protocol::Resp3, &mut out);
    }
    out.to_vec()
}

fuzz_target!(|data: &[u8]| {
    let Some((&control, rest)) = data.split_first() else {
        return;
    };
    let (read_bytes, input) = rest.split_at(rest.len().min(3));
    let reads: Vec<usize> = read_bytes
        .iter()
        .map(|&b| usize::from(b % 32) + 1)
        .collect();
    let limits = if control & 1 == 1 {
        Limits {
            max_bulk_len: 16,
            max_array_len: 8,
            max_depth: 4,
            max_inline_len: 24,
        }
    } else {
        Limits::default()
    };

    let fast = feed(RespCodec::server(limits), input, &reads);
    let slow = feed(
        RespCodec::server(limits).with_fast_path(false),
        input,
        &reads,
    );
    assert_eq!(fast, slow, "fast path and combine disagree");
    let whole = feed(RespCodec::server(limits), input, &[usize::MAX]);
    if !too_big(&whole) && !too_big(&fast) {
        assert_eq!(whole, fast, "server result depends on read sizes");
    }

    let client = feed(RespCodec::client(limits), input, &reads);
    let whole = feed(RespCodec::client(limits), input, &[usize::MAX]);
    if !too_big(&whole) && !too_big(&client) {
        assert_eq!(whole, client, "client result depends on read sizes");
    }
    let encoded = encode(&client.frames);
    let again = feed(RespCodec::client(Limits::default()), &encoded, &reads);
    assert_eq!(again.error, None, "re-encoded frames do not decode");
    assert_eq!(encode(&again.frames), encoded, "re-encoding is not stable");
});
