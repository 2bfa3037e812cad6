//! Store-level cost of the collection operations behind redis-benchmark's
//! rows, without sockets or the command layer: a sorted set of 100,000
//! members (the large form `ZADD myzset __rand_int__ element:__rand_int__`
//! builds with `-r 100000`) updated and popped, and the packed forms (a
//! small set, hash and sorted set, one list node) written and read.
//!
//! Run with `cargo bench -p ferrum-store --bench collections`; criterion
//! prints the time per operation (throughput in elements). The server-side
//! CPU per request of the same rows, both servers, is
//! `scripts/cpu-per-request.sh` (see docs/benchmarks.md, "Profiling recipe").

// criterion_group! generates an undocumented `pub fn benches`.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use ferrum_store::types::{End, Hash, List, Set, ZSet};

const MEMBERS: u64 = 100_000;
const OPS: u64 = 10_000;

/// A fixed pseudo-random sequence below `n` (an LCG's high bits), so every
/// run does the same work.
fn randoms(n: u64, count: u64) -> Vec<u64> {
    let mut x = 42u64;
    (0..count)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) % n
        })
        .collect()
}

fn member(i: u64) -> Vec<u8> {
    format!("element:{i:012}").into_bytes()
}

fn big_zset() -> ZSet {
    let mut z = ZSet::new();
    for i in 0..MEMBERS {
        z.insert(&member(i), i as f64);
    }
    z
}

fn skiplist(c: &mut Criterion) {
    let mut group = c.benchmark_group("skiplist");
    group.throughput(Throughput::Elements(OPS));
    let picks: Vec<(Vec<u8>, f64)> = randoms(MEMBERS, OPS)
        .into_iter()
        .zip(randoms(MEMBERS * 7, OPS))
        .map(|(m, s)| (member(m), s as f64))
        .collect();
    let mut z = big_zset();
    group.bench_function("zadd_rescore", |b| {
        b.iter(|| {
            for (m, s) in &picks {
                black_box(z.insert(m, *s));
            }
        })
    });
    group.bench_function("zpopmin", |b| {
        b.iter_batched_ref(
            big_zset,
            |z| {
                for _ in 0..OPS {
                    black_box(z.pop(1, false));
                }
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

fn packed(c: &mut Criterion) {
    let mut group = c.benchmark_group("packed");
    group.throughput(Throughput::Elements(OPS));
    let picks: Vec<Vec<u8>> = randoms(100, OPS).into_iter().map(member).collect();
    group.bench_function("sadd_sismember", |b| {
        b.iter(|| {
            let mut s = Set::new();
            for m in &picks {
                black_box(s.insert(m));
                black_box(s.contains(m));
            }
        })
    });
    group.bench_function("hset_hget", |b| {
        b.iter(|| {
            let mut h = Hash::new();
            for m in &picks {
                black_box(h.set(m, b"xxx"));
                black_box(h.get(m));
            }
        })
    });
    group.bench_function("zadd_small", |b| {
        b.iter(|| {
            let mut z = ZSet::new();
            for (i, m) in picks.iter().enumerate() {
                black_box(z.insert(m, (i % 97) as f64));
            }
        })
    });
    group.bench_function("lpush_lpop", |b| {
        b.iter(|| {
            let mut l = List::new();
            for m in &picks {
                l.push(End::Left, m);
                if l.len() > 50 {
                    black_box(l.pop(End::Right));
                }
            }
        })
    });
    group.finish();
}

criterion_group!(benches, skiplist, packed);
criterion_main!(benches);
