//! Each policy's own memory per tracked entry (`heap_bytes() / len()`), at
//! a given cache size, after the cache filled and then turned over twice
//! under eviction (a miss, an eviction, an insert into the freed slot, and
//! a hit on a resident entry, per step), as the store drives it.
//!
//! ```text
//! cargo run --release -p ferrum-evict --example footprint -- 5000 1000000
//! ```
//!
//! With `--ttl`, every entry also gets an expiry deadline (what the
//! `volatile-*` policies and keys with a TTL cost).

use ferrum_evict::{AnyPolicy, EntryId, EvictionPolicy, Millis, PolicyConfig, PolicyKind};

fn hash(key: u64) -> u64 {
    let mut z = key.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn measure(kind: PolicyKind, size: u32, ttl: bool) -> Option<(usize, usize)> {
    let mut policy: AnyPolicy = kind.build(&PolicyConfig::default())?;
    let mut key = 0u64;
    let mut now = Millis(0);
    let deadline = |now: Millis| ttl.then_some(now + Millis(3_600_000));
    for id in 0..size {
        policy.on_miss(hash(key), now);
        policy.on_insert(EntryId(id), hash(key), 64, now);
        policy.on_expiry_change(EntryId(id), deadline(now));
        key += 1;
        now = now + Millis(1);
    }
    // The key in each slot, to answer the policy's key-hash requests.
    let mut key_of: Vec<u64> = (0..u64::from(size)).collect();
    for step in 0..2 * u64::from(size) {
        // A hit on an entry chosen by a fixed stride (the slot may be any).
        let hot = EntryId(((step * 7_919) % u64::from(size)) as u32);
        policy.on_hit(hot, hash(key_of[hot.index()]), now);
        policy.on_miss(hash(key), now);
        let free = policy.evict(now, &|id| hash(key_of[id.index()]))?;
        key_of[free.index()] = key;
        policy.on_insert(free, hash(key), 64, now);
        policy.on_expiry_change(free, deadline(now));
        key += 1;
        now = now + Millis(1);
    }
    Some((policy.heap_bytes(), policy.len()))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let ttl = args.iter().any(|a| a == "--ttl");
    let sizes: Vec<u32> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() {
        vec![5_000, 1_000_000]
    } else {
        sizes
    };
    let kinds = [
        PolicyKind::AllKeysLru,
        PolicyKind::AllKeysLfu,
        PolicyKind::AllKeysRandom,
        PolicyKind::AllKeysAhe,
        PolicyKind::VolatileTtl,
    ];
    print!("| policy |");
    for size in &sizes {
        print!(" {size} entries |");
    }
    println!("\n| --- |{}", " ---: |".repeat(sizes.len()));
    for kind in kinds {
        print!("| {kind}{} |", if ttl { " (with TTL)" } else { "" });
        for &size in &sizes {
            match measure(kind, size, ttl) {
                Some((bytes, len)) => print!(" {:.1} B |", bytes as f64 / len.max(1) as f64),
                None => print!(" – |"),
            }
        }
        println!();
    }
}
