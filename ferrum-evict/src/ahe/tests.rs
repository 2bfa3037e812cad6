use std::collections::HashMap;

use super::*;
use crate::{Lru, LruConfig};

fn hash(key: u64) -> u64 {
    let mut z = key.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A read-through cache of `capacity` entries over `policy`, as the
/// simulator drives it: slots are reused last-freed first.
struct Cache<P> {
    policy: P,
    capacity: usize,
    slots: HashMap<u64, u32>,
    key_of: Vec<u64>,
    free: Vec<u32>,
    hits: u64,
    requests: u64,
}

impl<P: EvictionPolicy> Cache<P> {
    fn new(policy: P, capacity: usize) -> Self {
        Cache {
            policy,
            capacity,
            slots: HashMap::new(),
            key_of: Vec::new(),
            free: Vec::new(),
            hits: 0,
            requests: 0,
        }
    }

    fn get(&mut self, key: u64) -> bool {
        self.requests += 1;
        let now = Millis(self.requests);
        if let Some(&slot) = self.slots.get(&key) {
            self.policy.on_hit(EntryId(slot), hash(key), now);
            self.hits += 1;
            return true;
        }
        self.policy.on_miss(hash(key), now);
        if self.slots.len() >= self.capacity {
            let key_of = &self.key_of;
            let victim = self
                .policy
                .evict(now, &|id| hash(key_of[id.index()]))
                .expect("a victim while entries are tracked");
            assert!(self.slots.remove(&self.key_of[victim.index()]).is_some());
            self.free.push(victim.0);
        }
        let slot = self.free.pop().unwrap_or_else(|| {
            self.key_of.push(0);
            (self.key_of.len() - 1) as u32
        });
        self.key_of[slot as usize] = key;
        self.slots.insert(key, slot);
        self.policy.on_insert(EntryId(slot), hash(key), 64, now);
        false
    }

    fn remove(&mut self, key: u64) {
        if let Some(slot) = self.slots.remove(&key) {
            self.policy.on_remove(EntryId(slot));
            self.free.push(slot);
        }
    }

    fn hit_ratio(&self) -> f64 {
        self.hits as f64 / self.requests as f64
    }
}

/// A 64-bit xorshift, so the tests need no RNG crate.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn a_scan_does_not_flush_the_hot_set() {
    let mut cache = Cache::new(Ahe::default(), 1_000);
    let mut rng = 1u64;
    // 500 hot keys, read often, then a scan of 20,000 keys never read again.
    for _ in 0..20_000 {
        cache.get(next(&mut rng) % 500);
    }
    for key in 1_000_000..1_020_000 {
        cache.get(key);
    }
    let resident = (0..500).filter(|k| cache.slots.contains_key(k)).count();
    assert!(
        resident >= 490,
        "{resident} of 500 hot keys survived the scan"
    );
    // LRU keeps none of them.
    let mut lru = Cache::new(Lru::new(LruConfig::default()), 1_000);
    for _ in 0..20_000 {
        lru.get(next(&mut rng) % 500);
    }
    for key in 1_000_000..1_020_000 {
        lru.get(key);
    }
    assert_eq!((0..500).filter(|k| lru.slots.contains_key(k)).count(), 0);
}

/// Requests for a sliding window of keys: a new key every other request,
/// and each request picks one of the newest `window`.
fn sliding<P: EvictionPolicy>(cache: &mut Cache<P>, window: u64, requests: u64, rng: &mut u64) {
    for t in 0..requests {
        let newest = t / 2 + window;
        cache.get(newest - next(rng) % window);
    }
}

#[test]
fn recency_that_comes_back_at_once_grows_small() {
    // Only the newest keys are read: a key small evicts is read again soon
    // after, so its ghost's newest ranks keep hitting, while what main
    // holds is old and never read again.
    let mut cache = Cache::new(Ahe::default(), 1_000);
    sliding(&mut cache, 1_200, 200_000, &mut 5);
    let share = cache.policy.small_share();
    assert!(share > 0.8, "small's share {share}");
    // Close to LRU, which is at its best here.
    let mut lru = Cache::new(Lru::new(LruConfig::default()), 1_000);
    sliding(&mut lru, 1_200, 200_000, &mut 5);
    assert!(
        cache.hit_ratio() > lru.hit_ratio() - 0.05,
        "{} against LRU's {}",
        cache.hit_ratio(),
        lru.hit_ratio()
    );
}

#[test]
fn evictions_from_main_that_come_back_shrink_small() {
    // 950 keys read uniformly fill most of a 1,000-entry cache; one request
    // in five is a key never seen again. Main's evictions are hot keys,
    // which come back at once.
    let mut cache = Cache::new(Ahe::default(), 1_000);
    let mut rng = 7u64;
    let mut fresh = 1_000_000;
    for _ in 0..200_000 {
        if next(&mut rng) % 5 == 0 {
            fresh += 1;
            cache.get(fresh);
        } else {
            cache.get(next(&mut rng) % 950);
        }
    }
    let share = cache.policy.small_share();
    assert!(share < 0.05, "small's share {share}");
    let state = cache.policy.controller_state().expect("adaptive");
    assert!(state.main_ghost_hits > 0 && state.small_evictions > 0);
    assert!(cache.hit_ratio() > 0.7, "{}", cache.hit_ratio());
}

#[test]
fn removed_entries_leave_stale_cells_that_are_skipped() {
    let mut cache = Cache::new(Ahe::default(), 100);
    for key in 0..100 {
        cache.get(key);
    }
    // Remove and re-create keys in place: their slots are reused at once,
    // so the queues hold cells of earlier generations of the same slots.
    for round in 0..40 {
        for key in 0..50 {
            cache.remove(key);
            cache.get(1_000 * (round + 1) + key);
        }
    }
    assert_eq!(cache.policy.len(), 100);
    // Every eviction returns a tracked slot and the cache stays consistent.
    for key in 100_000..100_500 {
        cache.get(key);
        assert_eq!(cache.policy.len(), cache.slots.len());
    }
    assert!(cache.policy.small.heap_bytes() + cache.policy.main.heap_bytes() < 4 * 1_000);
}

#[test]
fn an_emptied_cache_starts_learning_over() {
    let mut cache = Cache::new(Ahe::default(), 200);
    sliding(&mut cache, 240, 40_000, &mut 9);
    assert!(cache.policy.small_share() > 0.5);
    let keys: Vec<u64> = cache.slots.keys().copied().collect();
    for key in keys {
        cache.remove(key);
    }
    assert_eq!(
        cache.policy.small_share(),
        AheConfig::default().initial_small_share
    );
    assert_eq!(cache.policy.small_ghost.heap_bytes(), 0);
    assert_eq!(cache.policy.main_ghost.heap_bytes(), 0);
}

#[test]
fn state_per_entry_is_below_exact_lrus() {
    let size = 100_000;
    let mut ahe = Cache::new(Ahe::default(), size);
    let mut lru = Cache::new(Lru::new(LruConfig::default()), size);
    let mut rng = 3u64;
    for _ in 0..6 * size {
        let key = next(&mut rng) % (4 * size as u64);
        ahe.get(key);
        lru.get(key);
    }
    let per_entry = |bytes: usize| bytes as f64 / size as f64;
    let (a, l) = (
        per_entry(ahe.policy.heap_bytes()),
        per_entry(lru.policy.heap_bytes()),
    );
    assert!(a < l, "AHE {a:.2} bytes per entry, LRU {l:.2}");
}

#[test]
fn expired_entries_go_first_when_asked() {
    let mut ahe = Ahe::new(AheConfig {
        expired_first: true,
        ..AheConfig::default()
    });
    for i in 0..10 {
        ahe.on_insert(EntryId(i), hash(u64::from(i)), 64, Millis(0));
    }
    ahe.on_expiry_change(EntryId(7), Some(Millis(5)));
    let key_hash = |id: EntryId| hash(u64::from(id.0));
    assert_ne!(ahe.evict(Millis(4), &key_hash), Some(EntryId(7)));
    assert_eq!(ahe.evict(Millis(6), &key_hash), Some(EntryId(7)));
    assert_eq!(ahe.len(), 8);
}

/// A policy rebuilt by inserting the same entries and handing back each
/// one's warm hint has every entry in the same queue with the same
/// counter, and the hints ignore untracked ids and any byte.
#[test]
fn warm_hints_put_entries_back_in_their_queue() {
    let mut ahe = Ahe::new(AheConfig::default());
    let hash = |id: EntryId| u64::from(id.0);
    for i in 0..100 {
        ahe.on_insert(EntryId(i), u64::from(i), 1, Millis(0));
        if i % 3 == 0 {
            ahe.on_hit(EntryId(i), u64::from(i), Millis(0));
            ahe.on_hit(EntryId(i), u64::from(i), Millis(0));
        }
    }
    // Churn: evictions promote the read entries of small into main.
    for i in 100..300 {
        ahe.evict(Millis(1), &hash);
        ahe.on_insert(EntryId(i), u64::from(i), 1, Millis(1));
        if i % 4 == 0 {
            ahe.on_hit(EntryId(i), u64::from(i), Millis(1));
        }
    }
    let hints: Vec<(u32, u8)> = (0..300)
        .filter_map(|i| ahe.warm_hint(EntryId(i), Millis(2)).map(|h| (i, h)))
        .collect();
    assert!(hints.iter().any(|&(_, h)| h & IN_MAIN != 0));
    assert!(hints.iter().any(|&(_, h)| h & IN_MAIN == 0));
    let mut again = Ahe::new(AheConfig::default());
    for &(i, _) in &hints {
        again.on_insert(EntryId(i), u64::from(i), 1, Millis(3));
    }
    for &(i, h) in &hints {
        again.restore_warm_hint(EntryId(i), h, Millis(3));
    }
    again.restore_warm_hint(EntryId(5000), 0xff, Millis(3));
    for &(i, h) in &hints {
        assert_eq!(again.warm_hint(EntryId(i), Millis(3)), Some(h), "entry {i}");
    }
    assert_eq!(
        (again.small_len, again.main_len),
        (ahe.small_len, ahe.main_len)
    );
    // Evicting everything evicts each entry once: no queue lost count.
    let mut evicted = std::collections::HashSet::new();
    while let Some(id) = again.evict(Millis(4), &hash) {
        assert!(evicted.insert(id), "{id:?} twice");
    }
    assert_eq!(evicted.len(), hints.len());
}

#[test]
fn an_exported_state_makes_a_reloaded_policy_evict_as_the_original() {
    // Hashes spread over both ghosts' buckets and fingerprints.
    let key_hash = |id: EntryId| hash(u64::from(id.0));
    let mut ahe = Ahe::new(AheConfig::default());
    let mut resident: Vec<u32> = Vec::new();
    let mut next = 0u32;
    // A working set with a hot part, churned well past the cache size,
    // so the ghosts fill and the controller moves.
    for step in 0..5_000u32 {
        let id = if step % 3 == 0 && !resident.is_empty() {
            resident[(step as usize * 7) % resident.len()]
        } else {
            next += 1;
            next
        };
        if resident.contains(&id) {
            ahe.on_hit(EntryId(id), key_hash(EntryId(id)), Millis(1));
            continue;
        }
        ahe.on_miss(key_hash(EntryId(id)), Millis(1));
        if resident.len() >= 200 {
            let victim = ahe.evict(Millis(1), &key_hash).expect("a victim");
            resident.retain(|&r| r != victim.0);
        }
        ahe.on_insert(EntryId(id), key_hash(EntryId(id)), 1, Millis(1));
        resident.push(id);
    }
    assert!(ahe.small_target.is_some());
    let state = ahe.export_state().expect("AHE has state");
    // The entries in queue order, head first, with their hints.
    let mut queues = ahe.clone();
    let mut order = Vec::new();
    for queue in [0, IN_MAIN] {
        let ring = if queue == 0 {
            &mut queues.small
        } else {
            &mut queues.main
        };
        while let Some(cell) = ring.pop() {
            if is_live(&ahe.state, cell, queue) {
                let id = cell & ID_MASK;
                order.push((id, ahe.warm_hint(EntryId(id), Millis(2)).expect("tracked")));
            }
        }
    }
    assert_eq!(order.len(), resident.len());
    let exported: Vec<u32> = ahe
        .export_order()
        .expect("AHE has an order")
        .iter()
        .map(|(id, _)| id.0)
        .collect();
    assert_eq!(exported, order.iter().map(|&(i, _)| i).collect::<Vec<_>>());
    // A restart: the entries come back in another order (a file is in
    // slot order), each with its hint; then the state and the order.
    let mut shuffled = order.clone();
    shuffled.sort_by_key(|&(i, _)| hash(u64::from(i)));
    let mut again = Ahe::new(AheConfig::default());
    for &(i, h) in &shuffled {
        again.on_insert(EntryId(i), key_hash(EntryId(i)), 1, Millis(3));
        again.restore_warm_hint(EntryId(i), h, Millis(3));
    }
    let without_state = again.clone();
    again.import_state(&state);
    // Named twice or not at all: ignored.
    let mut named: Vec<(EntryId, u32)> = exported.iter().map(|&i| (EntryId(i), i)).collect();
    named.push(named[0]);
    named.push((EntryId(1 << 20), 0));
    again.import_order(&named);
    assert_eq!(again.small_share(), ahe.small_share());

    // From here both see the same requests: the same victims, the same
    // admissions (ghosts), the same moves of the controller.
    let drive = |p: &mut Ahe| -> Vec<u32> {
        let mut resident: Vec<u32> = order.iter().map(|&(i, _)| i).collect();
        let mut victims = Vec::new();
        for n in 0..600u32 {
            // New keys, and keys evicted shortly before the save (which
            // the ghosts remember and the controller learns from).
            let id = if n % 2 == 0 {
                next + 1 + n
            } else {
                next - n % 400
            };
            if resident.contains(&id) {
                p.on_hit(EntryId(id), key_hash(EntryId(id)), Millis(4));
                continue;
            }
            p.on_miss(key_hash(EntryId(id)), Millis(4));
            let victim = p.evict(Millis(4), &key_hash).expect("a victim");
            resident.retain(|&r| r != victim.0);
            victims.push(victim.0);
            p.on_insert(EntryId(id), key_hash(EntryId(id)), 1, Millis(4));
            resident.push(id);
        }
        victims
    };
    let original = drive(&mut ahe.clone());
    assert_eq!(drive(&mut again), original);
    assert_ne!(
        drive(&mut without_state.clone()),
        original,
        "the state made no difference: the test shows nothing"
    );

    // A version-1 state (before promotions were counted, with the removed
    // controller's window hit ratio after the counts) still loads.
    let mut v1 = vec![1u8];
    v1.extend_from_slice(&state[1..25]); // small's target, both ghosts' hits
    v1.extend_from_slice(&state[33..49]); // both queues' evictions
    v1.extend_from_slice(&0.25f64.to_le_bytes());
    v1.extend_from_slice(&state[49..]);
    let mut from_v1 = without_state.clone();
    from_v1.import_state(&v1);
    assert_eq!(from_v1.small_share(), ahe.small_share());
    assert_eq!(from_v1.stats.promotions, 0);
    assert_eq!(from_v1.stats.main_evictions, ahe.stats.main_evictions);
    from_v1.import_order(&named);
    assert_eq!(drive(&mut from_v1), original);

    // Bytes that are not a state, or cut short, change nothing.
    for bad in [&state[..state.len() - 1], &state[1..], b"", &[9u8; 40][..]] {
        let mut p = without_state.clone();
        p.import_state(bad);
        assert_eq!(drive(&mut p), drive(&mut without_state.clone()));
    }
}

#[test]
fn a_load_that_restores_each_hint_after_its_insert_leaves_no_stale_cells() {
    let mut ahe = Ahe::new(AheConfig::default());
    for i in 0..1_000u32 {
        ahe.on_insert(EntryId(i), hash(u64::from(i)), 1, Millis(0));
        // Every third in main, the others in small.
        let hint = if i % 3 == 0 { IN_MAIN | 1 } else { 0 };
        ahe.restore_warm_hint(EntryId(i), hint, Millis(0));
    }
    assert_eq!((ahe.small_len, ahe.main_len), (666, 334));
    let mut cells = 0;
    let (mut small, mut main) = (ahe.small.clone(), ahe.main.clone());
    while small.pop().is_some() || main.pop().is_some() {
        cells += 1;
    }
    // Without taking moved cells back, 1,000 entries left up to 1,000
    // stale cells: 4 bytes each counted against `maxmemory`, so fewer
    // keys fit after a restart (measured: 983 instead of 1,006).
    assert_eq!(cells, 1_000);
}

#[test]
fn the_heap_bytes_it_answers_are_those_of_its_tables() {
    // `heap_bytes` answers a count kept at each change; every change of
    // every table must be counted, or `used_memory` drifts.
    let mut ahe = Ahe::new(AheConfig {
        expired_first: true,
        ..AheConfig::default()
    });
    let key_hash = |id: EntryId| hash(u64::from(id.0));
    let mut resident: Vec<u32> = Vec::new();
    let mut x = 7u64;
    for step in 0..20_000u32 {
        x = hash(x);
        let now = Millis(u64::from(step));
        match x % 8 {
            0..=2 if resident.len() < 500 || x % 3 == 0 => {
                let id = step;
                ahe.on_insert(EntryId(id), key_hash(EntryId(id)), 1, now);
                if x % 5 == 0 {
                    ahe.on_expiry_change(EntryId(id), Some(Millis(now.0 + 100)));
                }
                resident.push(id);
            }
            3 if !resident.is_empty() => {
                let id = resident.swap_remove((x as usize / 8) % resident.len());
                ahe.on_remove(EntryId(id));
            }
            4 | 5 if resident.len() > 300 => {
                let victim = ahe.evict(now, &key_hash).expect("a victim");
                resident.retain(|&r| r != victim.0);
            }
            _ if !resident.is_empty() => {
                let id = resident[(x as usize / 8) % resident.len()];
                ahe.on_hit(EntryId(id), key_hash(EntryId(id)), now);
                if x % 7 == 0 {
                    ahe.on_expiry_change(EntryId(id), None);
                }
            }
            _ => {}
        }
        assert_eq!(ahe.heap_bytes(), ahe.heap_now(), "step {step}");
    }
    let state = ahe.export_state().expect("AHE has state");
    let order = ahe.export_order().expect("AHE has an order");
    let mut again = Ahe::new(AheConfig::default());
    for &(id, _) in &order {
        again.on_insert(id, key_hash(id), 1, Millis(0));
        again.restore_warm_hint(id, IN_MAIN, Millis(0));
    }
    again.import_state(&state);
    again.import_order(&order);
    assert_eq!(again.heap_bytes(), again.heap_now());
    assert!(again.heap_bytes() > 0);
}
