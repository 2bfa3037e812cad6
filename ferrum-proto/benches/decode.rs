//! Decoding and encoding costs on the server's hot path.
//!
//! `redis-benchmark -P 16 -t set` sends 16 `SET key:<12 digits> xxx` commands
//! per write; each group below decodes one such pipeline or encodes its
//! replies. `combine_only` runs the same input through the resumable parser
//! alone, and `split_reads` feeds it in 64-byte reads so most commands
//! straddle a read and take the resumable path.

use bytes::BytesMut;
use criterion::{criterion_main, BatchSize, Criterion, Throughput};
use ferrum_proto::{Frame, Limits, Protocol, RespCodec};
use std::hint::black_box;
use tokio_util::codec::{Decoder, Encoder};

fn pipeline(commands: usize) -> Vec<u8> {
    let mut out = BytesMut::new();
    for i in 0..commands {
        Frame::bulks(["SET".to_string(), format!("key:{i:012}"), "xxx".to_string()])
            .encode(Protocol::Resp2, &mut out);
    }
    out.to_vec()
}

fn decode_all(codec: &mut RespCodec, buf: &mut BytesMut) -> usize {
    let mut n = 0;
    while let Some(frame) = codec.decode(buf).expect("valid input") {
        black_box(frame);
        n += 1;
    }
    n
}

fn decode(c: &mut Criterion) {
    let input = pipeline(16);
    let mut group = c.benchmark_group("decode_pipeline16_set");
    group.throughput(Throughput::Elements(16));
    for (name, fast) in [("fast_path", true), ("combine_only", false)] {
        group.bench_function(name, |b| {
            let mut codec = RespCodec::server(Limits::default()).with_fast_path(fast);
            b.iter_batched_ref(
                || BytesMut::from(&input[..]),
                |buf| assert_eq!(decode_all(&mut codec, buf), 16),
                BatchSize::SmallInput,
            );
        });
    }
    group.bench_function("split_reads_64b", |b| {
        let mut codec = RespCodec::server(Limits::default());
        b.iter(|| {
            let mut buf = BytesMut::with_capacity(input.len());
            let mut n = 0;
            for chunk in input.chunks(64) {
                buf.extend_from_slice(chunk);
                n += decode_all(&mut codec, &mut buf);
            }
            assert_eq!(n, 16);
        });
    });
    group.finish();
}

fn encode(c: &mut Criterion) {
    let mut group = c.benchmark_group("encode_16_replies");
    group.throughput(Throughput::Elements(16));
    let mut codec = RespCodec::server(Limits::default());
    let mut out = BytesMut::with_capacity(4096);
    group.bench_function("ok", |b| {
        b.iter(|| {
            out.clear();
            for _ in 0..16 {
                codec.encode(&Frame::ok(), &mut out).unwrap();
            }
            black_box(&out);
        });
    });
    let value = Frame::bulk(vec![b'x'; 100]);
    group.bench_function("bulk_100b", |b| {
        b.iter(|| {
            out.clear();
            for _ in 0..16 {
                codec.encode(&value, &mut out).unwrap();
            }
            black_box(&out);
        });
    });
    group.bench_function("integer", |b| {
        b.iter(|| {
            out.clear();
            for i in 0..16 {
                codec
                    .encode(Frame::Integer(black_box(1_000_000 + i)), &mut out)
                    .unwrap();
            }
            black_box(&out);
        });
    });
    group.finish();
}

// The macro generates an undocumented `pub fn benches`.
#[allow(missing_docs)]
mod group {
    use super::{decode, encode};
    criterion::criterion_group!(benches, decode, encode);
}
criterion_main!(group::benches);
