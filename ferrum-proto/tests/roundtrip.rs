//! Property tests: arbitrary frames encoded then decoded through short reads
//! of random sizes come back equal (redis-rs's `partial_io_parse` idea), and
//! arbitrary bytes decode the same with and without the fast path.

mod support;

use bytes::{Bytes, BytesMut};
use ferrum_proto::{Frame, Limits, Protocol, RespCodec};
use proptest::prelude::*;
use support::{feed, Outcome};

/// Text that is valid inside a simple string or error line.
fn line_text() -> impl Strategy<Value = Bytes> {
    "[a-zA-Z0-9 :_.-]{0,20}".prop_map(Bytes::from)
}

fn binary() -> impl Strategy<Value = Bytes> {
    prop::collection::vec(any::<u8>(), 0..40).prop_map(Bytes::from)
}

/// Finite and infinite doubles; NaN is never equal to itself, so it has its
/// own unit test.
fn double() -> impl Strategy<Value = f64> {
    prop::num::f64::POSITIVE
        | prop::num::f64::NEGATIVE
        | prop::num::f64::ZERO
        | prop::num::f64::SUBNORMAL
        | prop::num::f64::INFINITE
}

/// Frames every protocol writes as themselves.
fn resp2_leaf() -> impl Strategy<Value = Frame> {
    prop_oneof![
        line_text().prop_map(Frame::Simple),
        line_text().prop_map(Frame::Error),
        any::<i64>().prop_map(Frame::Integer),
        binary().prop_map(Frame::Bulk),
        Just(Frame::Null),
        Just(Frame::NullArray),
    ]
}

fn resp2_frame() -> impl Strategy<Value = Frame> {
    resp2_leaf().prop_recursive(4, 48, 6, |inner| {
        prop::collection::vec(inner, 0..6).prop_map(Frame::Array)
    })
}

fn resp3_leaf() -> impl Strategy<Value = Frame> {
    prop_oneof![
        line_text().prop_map(Frame::Simple),
        line_text().prop_map(Frame::Error),
        any::<i64>().prop_map(Frame::Integer),
        binary().prop_map(Frame::Bulk),
        Just(Frame::Null),
        double().prop_map(Frame::Double),
        any::<bool>().prop_map(Frame::Boolean),
        ("[a-z]{3}", binary()).prop_map(|(format, text)| Frame::Verbatim {
            format: format.as_bytes().try_into().unwrap(),
            text,
        }),
        "-?[1-9][0-9]{0,40}".prop_map(|digits| Frame::BigNumber(Bytes::from(digits))),
    ]
}

fn resp3_frame() -> impl Strategy<Value = Frame> {
    resp3_leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Frame::Array),
            prop::collection::vec(inner.clone(), 0..6).prop_map(Frame::Set),
            prop::collection::vec(inner.clone(), 0..6).prop_map(Frame::Push),
            prop::collection::vec((inner.clone(), inner), 0..4).prop_map(Frame::Map),
        ]
    })
}

fn chunks() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..24, 1..8)
}

fn encode_all(frames: &[Frame], protocol: Protocol) -> Vec<u8> {
    let mut out = BytesMut::new();
    for frame in frames {
        frame.encode(protocol, &mut out);
    }
    out.to_vec()
}

/// Bytes built from RESP-ish tokens, so random input reaches deep into the
/// parsers instead of failing on the first byte.
fn resp_ish() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        Just(&b"*"[..]),
        Just(&b"$"[..]),
        Just(&b"\r\n"[..]),
        Just(&b"\r"[..]),
        Just(&b"\n"[..]),
        Just(&b"0"[..]),
        Just(&b"1"[..]),
        Just(&b"2"[..]),
        Just(&b"3"[..]),
        Just(&b"-1"[..]),
        Just(&b"SET"[..]),
        Just(&b"\""[..]),
        Just(&b"'"[..]),
        Just(&b" "[..]),
        Just(&b"\\x4"[..]),
        Just(&b"\0"[..]),
        Just(&b":"[..]),
        Just(&b"%"[..]),
        Just(&b"|"[..]),
        Just(&b"~"[..]),
        Just(&b"="[..]),
        Just(&b","[..]),
        Just(&b"_"[..]),
        Just(&b"#t"[..]),
        Just(&b"txt:"[..]),
    ];
    prop::collection::vec(token, 0..40).prop_map(|tokens| tokens.concat())
}

/// Limits small enough for random input to hit them.
fn small_limits() -> Limits {
    Limits {
        max_bulk_len: 8,
        max_array_len: 4,
        max_depth: 3,
        max_inline_len: 12,
        unauthenticated: false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn resp3_frames_round_trip_through_short_reads(
        frames in prop::collection::vec(resp3_frame(), 1..4),
        chunks in chunks(),
    ) {
        let input = encode_all(&frames, Protocol::Resp3);
        let (outcome, rest) = feed(&mut RespCodec::client(Limits::default()), &input, &chunks);
        prop_assert_eq!(outcome, Outcome { frames, error: None });
        prop_assert!(rest.is_empty());
    }

    #[test]
    fn resp2_frames_round_trip_through_short_reads(
        frames in prop::collection::vec(resp2_frame(), 1..4),
        chunks in chunks(),
    ) {
        let input = encode_all(&frames, Protocol::Resp2);
        let (outcome, rest) = feed(&mut RespCodec::client(Limits::default()), &input, &chunks);
        prop_assert_eq!(outcome, Outcome { frames, error: None });
        prop_assert!(rest.is_empty());
    }

    #[test]
    fn any_text_in_a_line_frame_stays_one_reply(
        text in binary(),
        error in any::<bool>(),
        protocol in prop_oneof![Just(Protocol::Resp2), Just(Protocol::Resp3)],
    ) {
        // Whatever bytes a caller puts in a simple string or error, the
        // encoder writes one reply: a client reads back exactly one frame of
        // the same type and length, and nothing after it.
        let frame = if error { Frame::Error(text.clone()) } else { Frame::Simple(text.clone()) };
        let input = encode_all(std::slice::from_ref(&frame), protocol);
        let (outcome, rest) = feed(&mut RespCodec::client(Limits::default()), &input, &[usize::MAX]);
        prop_assert_eq!(outcome.error, None);
        prop_assert!(rest.is_empty());
        prop_assert_eq!(outcome.frames.len(), 1);
        let read = match &outcome.frames[0] {
            Frame::Error(t) if error => t.clone(),
            Frame::Simple(t) if !error => t.clone(),
            other => return Err(TestCaseError::fail(format!("read back {other:?}"))),
        };
        prop_assert_eq!(read.len(), text.len());
    }

    #[test]
    fn resp3_frames_written_as_resp2_decode_to_their_resp2_form(
        frame in resp3_frame(),
        chunks in chunks(),
    ) {
        // Encoding down to RESP2 loses the type, but decoding and re-encoding
        // must give the same bytes.
        let input = encode_all(std::slice::from_ref(&frame), Protocol::Resp2);
        let (outcome, _) = feed(&mut RespCodec::client(Limits::default()), &input, &chunks);
        prop_assert_eq!(outcome.error, None);
        prop_assert_eq!(encode_all(&outcome.frames, Protocol::Resp2), input);
    }

    #[test]
    fn commands_round_trip_through_the_server_side(
        commands in prop::collection::vec(
            prop::collection::vec(prop::collection::vec(any::<u8>(), 0..20), 1..6),
            1..6,
        ),
        chunks in chunks(),
        fast_path in any::<bool>(),
    ) {
        let frames: Vec<Frame> = commands.iter().map(|args| Frame::bulks(args.clone())).collect();
        let input = encode_all(&frames, Protocol::Resp2);
        let mut codec = RespCodec::server(Limits::default()).with_fast_path(fast_path);
        let (outcome, rest) = feed(&mut codec, &input, &chunks);
        prop_assert_eq!(outcome, Outcome { frames, error: None });
        prop_assert!(rest.is_empty());
    }

    #[test]
    fn fast_path_and_combine_agree_on_any_request_bytes(
        input in resp_ish(),
        chunks in chunks(),
        small in any::<bool>(),
    ) {
        let limits = if small { small_limits() } else { Limits::default() };
        let (fast, _) = feed(&mut RespCodec::server(limits), &input, &chunks);
        let (slow, _) = feed(&mut RespCodec::server(limits).with_fast_path(false), &input, &chunks);
        prop_assert_eq!(fast, slow);
    }

    #[test]
    fn client_side_survives_any_bytes(input in resp_ish(), chunks in chunks(), small in any::<bool>()) {
        let limits = if small { small_limits() } else { Limits::default() };
        let (whole, _) = feed(&mut RespCodec::client(limits), &input, &[usize::MAX]);
        let (split, _) = feed(&mut RespCodec::client(limits), &input, &chunks);
        // How the bytes are split must not change what they mean, except that
        // a line-length limit trips only while the terminator is missing, so
        // it depends on how much has arrived (in Redis too).
        let too_big = |o: &Outcome| {
            o.error.as_deref().is_some_and(|e| e.starts_with("Protocol error: too big"))
        };
        if !too_big(&whole) && !too_big(&split) {
            prop_assert_eq!(whole, split);
        }
    }

    #[test]
    fn server_side_split_does_not_change_meaning(input in resp_ish(), chunks in chunks()) {
        let (whole, _) = feed(&mut RespCodec::server(Limits::default()), &input, &[usize::MAX]);
        let (split, _) = feed(&mut RespCodec::server(Limits::default()), &input, &chunks);
        prop_assert_eq!(whole, split);
    }
}
