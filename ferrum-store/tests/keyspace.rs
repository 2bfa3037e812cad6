//! The store's contract, driven with hand-made time: expiry, accounting,
//! eviction, versions and cursors.

use bytes::Bytes;
use ferrum_store::{Access, Millis, PolicyConfig, PolicyKind, Store, StoreConfig, Value};

fn key(i: usize) -> Bytes {
    Bytes::from(format!("key:{i:06}"))
}

fn val(n: usize) -> Value {
    Value::str(&vec![b'v'; n])
}

fn store(maxmemory_bytes: u64, policy: PolicyKind) -> Store {
    Store::new(StoreConfig {
        maxmemory_bytes,
        policy,
        ..StoreConfig::default()
    })
}

fn set(s: &Store, k: &Bytes, v: Value, ttl: Option<Millis>, now: Millis) {
    let mut ks = s.lock_key(k);
    ks.shard(k).insert(0, k.clone(), v, ttl, now);
}

fn get(s: &Store, k: &Bytes, now: Millis) -> Option<Value> {
    let mut ks = s.lock_key(k);
    ks.shard(k)
        .lookup(0, k, now, Access::Read)
        .map(|e| e.value().to_value())
}

#[test]
fn lazy_expiry_hides_keys_at_their_deadline() {
    let s = store(0, PolicyKind::NoEviction);
    let k = key(1);
    set(&s, &k, val(3), Some(Millis(100)), Millis(0));
    assert!(get(&s, &k, Millis(99)).is_some());
    assert!(get(&s, &k, Millis(100)).is_none());
    let st = s.stats();
    assert_eq!(
        (st.keyspace_hits, st.keyspace_misses, st.expired_keys),
        (1, 1, 1)
    );
}

#[test]
fn memory_returns_to_baseline_after_delete_and_flush() {
    let s = store(0, PolicyKind::NoEviction);
    let base = s.used_memory_bytes();
    for i in 0..1000 {
        set(&s, &key(i), val(32), None, Millis(0));
    }
    let full = s.used_memory_bytes();
    assert!(
        full - base >= 1000 * (10 + 32),
        "accounting counts keys and values"
    );
    for i in 0..500 {
        let k = key(i);
        let mut ks = s.lock_key(&k);
        assert!(ks.shard(&k).remove(0, &k, Millis(1)).is_some());
    }
    let half = s.used_memory_bytes();
    assert!(half < full && half > base);
    // Deleting the rest and letting the cron run gives the tables back.
    for i in 500..1000 {
        let k = key(i);
        let mut ks = s.lock_key(&k);
        assert!(ks.shard(&k).remove(0, &k, Millis(1)).is_some());
    }
    s.expire_cycle(Millis(1), 10);
    assert_eq!(s.used_memory_bytes(), base, "all memory returned after DEL");
    for i in 0..1000 {
        set(&s, &key(i), val(32), None, Millis(0));
    }
    let mut all = s.lock_all();
    for shard in all.shards() {
        shard.flush_db(0);
    }
    drop(all);
    assert_eq!(s.used_memory_bytes(), base);
}

#[test]
fn overwrites_and_in_place_growth_are_accounted() {
    let s = store(0, PolicyKind::NoEviction);
    let k = key(7);
    set(&s, &k, val(10), None, Millis(0));
    let small = s.used_memory_bytes();
    set(&s, &k, val(1000), None, Millis(0));
    let big = s.used_memory_bytes();
    assert!(big >= small + 900);
    {
        let mut ks = s.lock_key(&k);
        let mut e = ks.shard(&k).lookup_mut(0, &k, Millis(0)).expect("present");
        e.set_str(&[b'v'; 10]);
    }
    assert_eq!(s.used_memory_bytes(), small);
}

#[test]
fn lru_eviction_keeps_memory_under_the_limit_and_the_recent_keys() {
    let s = store(64 * 1024, PolicyKind::AllKeysLru);
    for i in 0..2000 {
        set(&s, &key(i), val(32), None, Millis(i as u64));
        s.enforce_maxmemory(Millis(i as u64));
        assert!(s.used_memory_bytes() as u64 <= 64 * 1024);
    }
    assert!(s.stats().evicted_keys > 0);
    assert!(get(&s, &key(1999), Millis(3000)).is_some());
    assert!(get(&s, &key(0), Millis(3000)).is_none());
}

#[test]
fn a_fixed_limit_holds_as_many_keys_at_the_end_of_a_long_run_as_after_the_fill() {
    // Keys land on the 16 shards by hash; eviction must keep the shards
    // level, or their sizes random-walk apart and each shard's slot table
    // keeps its high-water length, so the same limit holds fewer keys.
    let s = store(256 * 1024, PolicyKind::AllKeysLru);
    let dbsize = |s: &Store| s.lock_all().dbsize(0);
    let mut after_fill = 0;
    for i in 0..200_000 {
        let now = Millis(i as u64);
        s.reserve_for_write(now).unwrap();
        set(&s, &key(i), val(32), None, now);
        if i == 10_000 {
            after_fill = dbsize(&s);
        }
    }
    let end = dbsize(&s);
    assert!(after_fill > 1000, "the limit holds {after_fill} keys");
    assert!(
        end * 100 >= after_fill * 99,
        "{after_fill} keys after the fill, {end} at the end"
    );
    // The shards hold the same memory (key counts differ by the slot-table
    // slack each shard kept from the fill, when keys arrived unevenly).
    let per_key = s.used_memory_bytes() / end;
    let mut all = s.lock_all();
    let bytes: Vec<usize> = all.shards().map(|sh| sh.memory_bytes()).collect();
    let (min, max) = (bytes.iter().min().unwrap(), bytes.iter().max().unwrap());
    assert!(
        max - min <= 2 * per_key,
        "shard bytes {bytes:?}, {per_key} a key"
    );
}

#[test]
fn noeviction_refuses_instead_of_evicting() {
    let s = store(16 * 1024, PolicyKind::NoEviction);
    let mut i = 0;
    while s.reserve_for_write(Millis(0)).is_ok() {
        set(&s, &key(i), val(64), None, Millis(0));
        i += 1;
        assert!(i < 10_000);
    }
    assert_eq!(s.stats().evicted_keys, 0);
    assert!(get(&s, &key(0), Millis(0)).is_some());
}

#[test]
fn volatile_policies_only_evict_keys_with_a_ttl() {
    let s = store(32 * 1024, PolicyKind::VolatileLru);
    for i in 0..100 {
        set(&s, &key(i), val(32), None, Millis(0));
    }
    for i in 100..2000 {
        set(
            &s,
            &key(i),
            val(32),
            Some(Millis(1_000_000)),
            Millis(i as u64),
        );
        s.enforce_maxmemory(Millis(i as u64));
    }
    for i in 0..100 {
        assert!(
            get(&s, &key(i), Millis(3000)).is_some(),
            "persistent key {i} was evicted"
        );
    }
    // Once only persistent keys are left, nothing can be evicted.
    let mut all = s.lock_all();
    for shard in all.shards() {
        shard.flush_db(0);
    }
    drop(all);
    for i in 0..2000 {
        set(&s, &key(i), val(32), None, Millis(0));
    }
    assert!(s.reserve_for_write(Millis(0)).is_err());
}

#[test]
fn bytes_held_outside_the_keyspace_count_in_used_memory_but_evict_nothing() {
    let s = store(0, PolicyKind::AllKeysLru);
    for i in 0..1000 {
        set(&s, &key(i), val(64), None, Millis(i as u64));
    }
    let dataset = s.dataset_bytes();
    s.set_maxmemory_bytes(dataset as u64);
    assert_eq!(s.enforce_maxmemory(Millis(1000)), 0, "the dataset fits");
    // A connection's buffers grow by a quarter of the dataset: they show
    // in used memory, and `maxmemory`, which bounds the dataset, evicts
    // nothing for them.
    s.add_outside_bytes(0, dataset / 4);
    assert_eq!(s.used_memory_bytes(), s.dataset_bytes() + dataset / 4);
    assert_eq!(
        s.enforce_maxmemory(Millis(1001)),
        0,
        "no key goes for buffers"
    );
    assert!(get(&s, &key(0), Millis(1002)).is_some());
    // The dataset's own growth still evicts.
    set(&s, &key(1000), val(64), None, Millis(1003));
    assert!(s.enforce_maxmemory(Millis(1004)) > 0);
    assert!(s.dataset_bytes() <= dataset);
    // The connection goes: its bytes leave with it.
    s.add_outside_bytes(dataset / 4, 0);
    assert_eq!(s.outside_bytes(), 0);
    assert_eq!(s.used_memory_bytes(), s.dataset_bytes());
}

#[test]
fn switching_policy_keeps_every_key() {
    let s = store(0, PolicyKind::NoEviction);
    for i in 0..3000 {
        set(&s, &key(i), val(64), None, Millis(i as u64));
    }
    s.set_policy(PolicyKind::AllKeysLru, PolicyConfig::default());
    // Tables keep their capacity while keys go, so a quarter of the memory
    // is about 40% of the keys' own bytes.
    s.set_maxmemory_bytes(s.used_memory_bytes() as u64 * 3 / 4);
    let evicted = s.enforce_maxmemory(Millis(10_000));
    assert!(evicted > 500 && evicted < 2500, "{evicted}");
    // Recency survived the switch: the oldest keys went first.
    assert!(get(&s, &key(0), Millis(10_001)).is_none());
    assert!(get(&s, &key(2999), Millis(10_001)).is_some());
}

#[test]
fn versions_change_on_every_write() {
    let s = store(0, PolicyKind::NoEviction);
    let k = key(3);
    let version = |s: &Store| {
        let mut ks = s.lock_key(&k);
        ks.shard(&k).watch_version(0, &k, Millis(0))
    };
    set(&s, &k, val(1), None, Millis(0));
    let v1 = version(&s);
    let _ = get(&s, &k, Millis(0));
    assert_eq!(version(&s), v1, "reads do not change the version");
    set(&s, &k, val(1), None, Millis(0));
    let v2 = version(&s);
    assert_ne!(v1, v2);
    {
        let mut ks = s.lock_key(&k);
        ks.shard(&k).set_expiry(0, &k, Some(Millis(50)), Millis(0));
    }
    assert_ne!(version(&s), v2);
}

/// `WATCH` compares versions, so one handed out twice in a server's life
/// lets a transaction through over a write it never saw. A flush that
/// empties a shard used to start its versions again from 1: `WATCH k`, a
/// flush, `SET k` and the next `WATCH`'s check then read the same number.
#[test]
fn versions_never_repeat_across_flushes_and_swaps() {
    for shards in [1, 4] {
        let s = Store::new(StoreConfig {
            shards,
            databases: 2,
            ..StoreConfig::default()
        });
        let k = key(7);
        let version = |db: usize| {
            let mut ks = s.lock_key(&k);
            ks.shard(&k).watch_version(db, &k, Millis(0))
        };
        let put = |db: usize| {
            let mut ks = s.lock_key(&k);
            ks.shard(&k).insert(db, k.clone(), val(1), None, Millis(0));
        };
        let mut seen = std::collections::HashSet::new();
        for round in 0..20 {
            put(0);
            let v = version(0).expect("k was just set");
            assert!(seen.insert(v), "{shards} shards, round {round}: {v} again");
            let mut all = s.lock_all();
            for shard in all.shards() {
                // Every shard ends up empty, as after FLUSHALL.
                shard.flush_db(0);
                shard.flush_db(1);
            }
            drop(all);
            // The flush removed k, a change: its absence has a version of
            // its own.
            let gone = version(0).expect("absent keys have versions");
            assert!(
                seen.insert(gone),
                "{shards} shards, round {round}: {gone} again"
            );
        }
        // SWAPDB: the key brought in reads as the other database's key, not
        // as the one watched here, and vice versa.
        put(0);
        put(1);
        let (v0, v1) = (version(0).unwrap(), version(1).unwrap());
        assert!(v0 != v1 && !seen.contains(&v0) && !seen.contains(&v1));
        let mut all = s.lock_all();
        for shard in all.shards() {
            shard.swap_db(0, 1);
        }
        drop(all);
        assert_eq!((version(0), version(1)), (Some(v1), Some(v0)));
    }
}

/// Absent, created, removed again: the key is absent at both ends, but
/// it changed, and a transaction that watched it must see that (else it
/// commits over a value it read in between). Absent and left alone keeps
/// its version.
#[test]
fn an_absent_key_created_and_removed_again_reads_as_changed() {
    let s = store(0, PolicyKind::NoEviction);
    let k = key(5);
    let version = |s: &Store| {
        let mut ks = s.lock_key(&k);
        ks.shard(&k).watch_version(0, &k, Millis(0))
    };
    let absent = version(&s);
    assert_eq!(version(&s), absent, "nothing happened");
    set(&s, &k, val(1), None, Millis(0));
    let created = version(&s);
    assert_ne!(created, absent);
    {
        let mut ks = s.lock_key(&k);
        assert!(ks.shard(&k).delete(0, &k, Millis(0)));
    }
    let removed = version(&s);
    assert!(removed != absent && removed != created);
    // Created with an expiry and expired: removed all the same.
    set(&s, &k, val(1), Some(Millis(10)), Millis(0));
    let expiring = version(&s);
    let mut ks = s.lock_key(&k);
    let expired = ks.shard(&k).watch_version(0, &k, Millis(20));
    assert!(expired != expiring && expired != removed);
}

#[test]
fn scan_visits_every_key_once_and_terminates() {
    let s = store(0, PolicyKind::NoEviction);
    for i in 0..1000 {
        set(&s, &key(i), val(1), None, Millis(0));
    }
    let mut seen = std::collections::HashSet::new();
    let mut cursor = 0;
    loop {
        let mut all = s.lock_all();
        cursor = all.scan(0, cursor, 37, Millis(0), |k, _| {
            assert!(seen.insert(k.to_vec()), "{k:?} returned twice");
        });
        if cursor == 0 {
            break;
        }
    }
    assert_eq!(seen.len(), 1000);
}

#[test]
fn scan_takes_any_count_and_cursor() {
    // SCAN 0 COUNT 9223372036854775807 returns everything at once, and a
    // cursor past every slot ends the scan, as in Redis.
    let s = store(0, PolicyKind::NoEviction);
    for i in 0..100 {
        set(&s, &key(i), val(1), None, Millis(0));
    }
    let mut all = s.lock_all();
    let mut seen = 0;
    assert_eq!(all.scan(0, 0, usize::MAX, Millis(0), |_, _| seen += 1), 0);
    assert_eq!(seen, 100);
    assert_eq!(all.scan(0, u64::MAX, 10, Millis(0), |_, _| seen += 1), 0);
    assert_eq!(seen, 100);
}

#[test]
fn swapdb_exchanges_contents() {
    let s = store(0, PolicyKind::NoEviction);
    let k = key(1);
    set(&s, &k, val(1), None, Millis(0));
    let mut all = s.lock_all();
    for shard in all.shards() {
        shard.swap_db(0, 1);
    }
    assert_eq!(all.dbsize(0), 0);
    assert_eq!(all.dbsize(1), 1);
    assert!(all
        .shard(&k)
        .lookup(1, &k, Millis(0), Access::Peek)
        .is_some());
}

#[test]
fn active_expiry_removes_unread_keys() {
    let s = store(0, PolicyKind::NoEviction);
    for i in 0..500 {
        set(&s, &key(i), val(1), Some(Millis(10)), Millis(0));
    }
    for i in 500..600 {
        set(&s, &key(i), val(1), Some(Millis(1_000_000)), Millis(0));
    }
    // Each cycle stops once a sample finds few expired keys (Redis's
    // heuristic), so stragglers go over the next cycles, as on a timer.
    let mut removed = 0;
    for _ in 0..1000 {
        removed += s.expire_cycle(Millis(20), 200);
        if removed == 500 {
            break;
        }
    }
    assert_eq!(removed, 500);
    assert_eq!(s.keyspace_sizes()[0], (100, 100));
    assert_eq!(s.stats().expired_keys, 500);
}

#[test]
fn one_sweep_of_active_expiry_reaches_every_expired_key() {
    // One shard, so each cycle's checks all go to one volatile list.
    let s = Store::new(StoreConfig {
        shards: 1,
        ..StoreConfig::default()
    });
    // A few expired keys among many live ones: every round finds at most
    // a tenth expired and ends its cycle, as in a cache whose TTL keys
    // expire one by one.
    let (live, expired) = (1_000, 25);
    for i in 0..live + expired {
        let deadline = if i % 41 == 0 && i / 41 < expired {
            10
        } else {
            1_000_000
        };
        set(&s, &key(i), val(1), Some(Millis(deadline)), Millis(0));
    }
    // As many checks as there are keys with a TTL, a round of 20 a cycle.
    // Random picks would leave about a third of the expired keys (each is
    // missed by 1,025 draws with probability (1 - 1/1025)^1025); a cursor
    // looks at every key once.
    let mut removed = 0;
    for _ in 0..(live + expired).div_ceil(20) {
        removed += s.expire_cycle(Millis(20), 20);
    }
    assert_eq!(removed, expired);
    assert_eq!(s.keyspace_sizes()[0], (live, live));
}

#[test]
fn active_expiry_goes_on_while_more_than_a_tenth_of_a_round_expired() {
    let s = Store::new(StoreConfig {
        shards: 1,
        ..StoreConfig::default()
    });
    // Three expired keys in every twenty (15%): Redis 7 keeps going above
    // 10% stale, so one cycle reaches them all.
    for i in 0..2_000 {
        let deadline = if i % 20 < 3 { 10 } else { 1_000_000 };
        set(&s, &key(i), val(1), Some(Millis(deadline)), Millis(0));
    }
    assert_eq!(s.expire_cycle(Millis(20), usize::MAX), 300);
}

/// A read-through replay of skewed requests: `GET`, and `SET` on a miss.
/// Returns (hits, misses, keys held at the end).
fn replay(s: &Store, requests: u64, keyspace: u64) -> (u64, u64, usize) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
    let before = s.stats();
    for i in 0..requests {
        // Squaring a uniform draw skews requests towards low ids.
        let u: f64 = rng.random();
        let k = key((u * u * keyspace as f64) as usize);
        let now = Millis(i);
        if get(s, &k, now).is_none() {
            s.reserve_for_write(now).expect("an evicting policy");
            set(s, &k, val(32), None, now);
            s.enforce_maxmemory(now);
        }
    }
    let after = s.stats();
    let dbsize = s.keyspace_sizes()[0].0;
    (
        after.keyspace_hits - before.keyspace_hits,
        after.keyspace_misses - before.keyspace_misses,
        dbsize,
    )
}

fn flush_all(s: &Store) {
    let mut all = s.lock_all();
    for shard in all.shards() {
        for db in 0..s.databases() {
            shard.flush_db(db);
        }
    }
}

#[test]
fn a_flushed_store_serves_the_same_requests_as_a_new_one() {
    let limit = 400_000;
    for policy in [
        PolicyKind::AllKeysLru,
        PolicyKind::AllKeysLfu,
        PolicyKind::AllKeysRandom,
        PolicyKind::AllKeysAhe,
    ] {
        let s = store(limit, policy);
        let baseline = s.used_memory_bytes();
        let first = replay(&s, 30_000, 20_000);
        assert!(first.0 > 0 && first.1 > 0, "{policy:?}: {first:?}");
        flush_all(&s);
        assert_eq!(
            s.used_memory_bytes(),
            baseline,
            "{policy:?}: memory back to a new store's"
        );
        let second = replay(&s, 30_000, 20_000);
        assert_eq!(first, second, "{policy:?}: the same run after FLUSHALL");

        // A store that first ran with a larger limit serves the same too.
        let t = store(4 * limit, policy);
        replay(&t, 30_000, 20_000);
        flush_all(&t);
        t.set_maxmemory_bytes(limit);
        assert_eq!(
            replay(&t, 30_000, 20_000),
            first,
            "{policy:?}: after a larger run"
        );
    }
}

/// Writes 20,000 one-off keys under `policy`; after every 20 of them,
/// writes one "warm" key and reads it three times at once. Returns how
/// many of the 1,000 warm keys are still resident, and the store.
fn warm_keys_under_a_flood(policy: PolicyKind) -> (usize, Store) {
    let s = store(300_000, policy);
    let warm = |j: usize| key(1_000_000 + j);
    for i in 0..20_000 {
        let now = Millis(i as u64);
        set(&s, &key(i), val(32), None, now);
        s.enforce_maxmemory(now);
        if i % 20 == 0 {
            set(&s, &warm(i / 20), val(32), None, now);
            s.enforce_maxmemory(now);
            for _ in 0..3 {
                get(&s, &warm(i / 20), now);
            }
        }
    }
    let now = Millis(30_000);
    let kept = (0..1_000)
        .filter(|&j| get(&s, &warm(j), now).is_some())
        .count();
    (kept, s)
}

#[test]
fn ahe_counts_and_remembers_keys_by_the_stores_hashes() {
    // AHE keeps no key fingerprint per entry: the store passes each key's
    // hash on a hit and answers for it at eviction. The warm keys' reads
    // must be counted under the hash the store gives at eviction, or they
    // lose their duels to the one-off keys, as they do under LRU.
    let (lru_kept, _) = warm_keys_under_a_flood(PolicyKind::AllKeysLru);
    let (ahe_kept, s) = warm_keys_under_a_flood(PolicyKind::AllKeysAhe);
    assert!(s.stats().evicted_keys > 15_000, "{:?}", s.stats());
    assert!(lru_kept < 200, "LRU kept {lru_kept} warm keys");
    assert!(ahe_kept > 500, "AHE kept {ahe_kept} warm keys");
    // The ghost history holds the evicted keys' hashes as the store gave
    // them at eviction: a read-through client's rewrites of recently
    // evicted one-off keys are regrets.
    let regrets = |s: &Store| {
        let c = s.controller_state().unwrap_or_default();
        c.small_ghost_hits + c.main_ghost_hits
    };
    let before = regrets(&s);
    for i in 19_000..19_500 {
        let now = Millis(40_000);
        if get(&s, &key(i), now).is_none() {
            set(&s, &key(i), val(32), None, now);
            s.enforce_maxmemory(now);
        }
    }
    let after = regrets(&s);
    assert!(
        after >= before + 100,
        "{before} regrets before, {after} after"
    );
}

#[test]
fn each_shard_learns_its_own_ahe_share_and_the_store_combines_them() {
    // A rotating hot set: the hot keys move to cold ones every 20,000
    // requests, so keys evicted young from AHE's small queue come back and
    // its share moves. Every shard sees a sixteenth of the same traffic and
    // learns from it alone, with no lock shared between shards; the store
    // reports their combination, counts summed and the target share
    // weighted by each shard's entries.
    let s = store(250_000, PolicyKind::AllKeysAhe);
    let mut all = s.lock_all();
    let start: Vec<f64> = all
        .shards()
        .map(|sh| sh.controller_state().expect("AHE").small_target_share)
        .collect();
    drop(all);
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::SmallRng::seed_from_u64(11);
    for i in 0..200_000u64 {
        let u: f64 = rng.random();
        let hot = (u * u * u * 20_000.0) as u64;
        let k = key(((hot + (i / 20_000) * 5_000) % 100_000) as usize);
        let now = Millis(i);
        if get(&s, &k, now).is_none() {
            s.reserve_for_write(now).expect("an evicting policy");
            set(&s, &k, val(32), None, now);
            s.enforce_maxmemory(now);
        }
    }
    let mut all = s.lock_all();
    let states: Vec<_> = all
        .shards()
        .map(|sh| sh.controller_state().expect("AHE"))
        .collect();
    drop(all);
    assert_eq!(states.len(), 16);
    assert!(start.iter().all(|&w| w == start[0]));
    let moved = states
        .iter()
        .filter(|st| st.small_target_share != start[0])
        .count();
    assert!(moved >= 12, "{moved} of 16 shares moved: {states:?}");
    assert!(states
        .iter()
        .all(|st| st.small_evictions + st.main_evictions > 0));
    let total = s.controller_state().expect("AHE");
    let sum: u64 = states.iter().map(|st| st.main_evictions).sum();
    assert_eq!(total.main_evictions, sum);
    let small: u64 = states.iter().map(|st| st.small_entries).sum();
    assert_eq!(total.small_entries, small);
    let (lo, hi) = states.iter().fold((1.0f64, 0.0f64), |(lo, hi), st| {
        (lo.min(st.small_target_share), hi.max(st.small_target_share))
    });
    let share = total.small_target_share;
    assert!(
        lo - 1e-9 <= share && share <= hi + 1e-9,
        "{share} not in {lo}..{hi}"
    );
}
