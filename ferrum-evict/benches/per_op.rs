//! Per-request cost of AHE against LRU (and LFU for scale), measured with
//! criterion on a read-through cache of 5 000 entries over a Zipf(0.99)
//! stream of 100 000 keys and over a cyclic scan.
//!
//! The cache around the policy is as cheap as it can be (a `Vec` from key
//! id to slot), so the time per request is the policy's work plus a few
//! array accesses. Run with `cargo bench -p ferrum-evict --bench per_op`;
//! criterion prints the time per request (throughput in elements).

// criterion_group! generates an undocumented `pub fn benches`.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ferrum_evict::{
    Ahe, AheConfig, EntryId, EvictionPolicy, Lfu, LfuConfig, Lru, LruConfig, Millis,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const KEYS: usize = 100_000;
const CAPACITY: usize = 5_000;
const REQUESTS: usize = 200_000;
const NONE: u32 = u32::MAX;

/// Zipf(0.99) key ids by inverting the cumulative distribution.
fn zipf_stream(seed: u64) -> Vec<u32> {
    let mut total = 0.0;
    let mut cdf: Vec<f64> = (1..=KEYS)
        .map(|k| {
            total += (k as f64).powf(-0.99);
            total
        })
        .collect();
    for c in &mut cdf {
        *c /= total;
    }
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..REQUESTS)
        .map(|_| {
            let u: f64 = rng.random();
            cdf.partition_point(|&c| c <= u).min(KEYS - 1) as u32
        })
        .collect()
}

fn scan_stream() -> Vec<u32> {
    (0..REQUESTS).map(|i| (i % KEYS) as u32).collect()
}

/// A cheap, fixed key hash, as a store would pass.
fn key_hash(key: u32) -> u64 {
    u64::from(key).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Replays `keys` read-through against `policy`; returns the hits.
fn replay<P: EvictionPolicy>(mut policy: P, keys: &[u32]) -> u64 {
    let mut slot_of = vec![NONE; KEYS];
    let mut key_of = vec![NONE; CAPACITY];
    let mut free: Vec<u32> = (0..CAPACITY as u32).rev().collect();
    let mut hits = 0;
    for (i, &key) in keys.iter().enumerate() {
        let now = Millis(i as u64);
        let hash = key_hash(key);
        match slot_of[key as usize] {
            NONE => {
                policy.on_miss(hash, now);
                let slot = match free.pop() {
                    Some(slot) => slot,
                    None => {
                        let victim = policy
                            .evict(now, &|id| key_hash(key_of[id.index()]))
                            .map_or(0, |v| v.0);
                        slot_of[key_of[victim as usize] as usize] = NONE;
                        victim
                    }
                };
                key_of[slot as usize] = key;
                slot_of[key as usize] = slot;
                policy.on_insert(EntryId(slot), hash, 42, now);
            }
            slot => {
                policy.on_hit(EntryId(slot), hash, now);
                hits += 1;
            }
        }
    }
    hits
}

fn per_op(c: &mut Criterion) {
    for (name, keys) in [("zipf", zipf_stream(42)), ("scan", scan_stream())] {
        let mut group = c.benchmark_group(format!("per_request_{name}"));
        group.throughput(Throughput::Elements(REQUESTS as u64));
        group.sample_size(20);
        group.bench_with_input(BenchmarkId::new("lru", name), &keys, |b, keys| {
            b.iter(|| replay(Lru::new(LruConfig::default()), black_box(keys)));
        });
        group.bench_with_input(BenchmarkId::new("ahe", name), &keys, |b, keys| {
            b.iter(|| replay(Ahe::new(AheConfig::default()), black_box(keys)));
        });
        group.bench_with_input(BenchmarkId::new("lfu", name), &keys, |b, keys| {
            b.iter(|| replay(Lfu::new(LfuConfig::default()), black_box(keys)));
        });
        group.finish();
    }
}

criterion_group!(benches, per_op);
criterion_main!(benches);
