//! How many keys the store holds at a fixed `maxmemory`, in process and
//! deterministic: the store-side half of `scripts/keys-at-maxmemory.sh`
//! (which measures the live server's RSS next to Redis's).
//!
//! Writes distinct 16-byte keys with values of the given size until three
//! times the limit was written, evicting as the server does, then prints
//! the keys held and what each costs.
//!
//! ```sh
//! cargo run --release -p ferrum-store --example keys_at_limit -- allkeys-ahe 32 134217728
//! ```

use bytes::Bytes;
use ferrum_store::{Millis, PolicyKind, Store, StoreConfig, Value};

fn main() {
    let mut args = std::env::args().skip(1);
    let policy: PolicyKind = args
        .next()
        .unwrap_or_else(|| "allkeys-lru".into())
        .parse()
        .expect("a maxmemory-policy name");
    let value_len: usize = args.next().map_or(32, |a| a.parse().expect("a value size"));
    let maxmemory: u64 = args.next().map_or(128 << 20, |a| a.parse().expect("bytes"));
    let store = Store::new(StoreConfig {
        maxmemory_bytes: maxmemory,
        policy,
        ..StoreConfig::default()
    });
    let value = vec![b'v'; value_len];
    let writes = 3 * maxmemory / (value_len as u64 + 16);
    for i in 0..writes {
        let key = Bytes::from(format!("key:{i:012}"));
        let now = Millis(i);
        if store.reserve_for_write(now).is_err() {
            break;
        }
        store
            .lock_key(&key)
            .shard(&key)
            .insert(0, key.clone(), Value::str(&value), None, now);
        store.enforce_maxmemory(now);
    }
    let keys: usize = store.keyspace_sizes().iter().map(|(k, _)| k).sum();
    let (policy_bytes, _) = store.policy_footprint();
    println!(
        "{} value={value_len} maxmemory={maxmemory}: keys={keys} used_memory/key={} policy/key={}",
        policy.as_str(),
        store.used_memory_bytes() / keys.max(1),
        policy_bytes / keys.max(1),
    );
}
