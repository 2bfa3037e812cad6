//! The policy-level hit-ratio simulator: a fixed-capacity read-through cache
//! that drives an [`EvictionPolicy`] directly, on virtual time.
//!
//! The cache is a slab of entries indexed by [`EntryId`], a hash map from
//! key id to slot, and each entry's expiry deadline. Per request, as
//! WORKLOADS.md specifies:
//!
//! 1. look the key up; an entry whose deadline has passed (`now > deadline`,
//!    as Redis's `keyIsExpired`) is removed (`on_remove`) and counts as a
//!    miss, otherwise it is a hit (`on_hit`);
//! 2. on a miss, `on_miss`, then insert the key with the request's TTL,
//!    evicting first when the cache holds `capacity` entries.
//!
//! Expiry is lazy only, like a Redis with its active expiry cycle off: a
//! dead key that is never read again stays until the policy evicts it.
//! For `volatile-*` policies only keys with a TTL are registered with the
//! policy; when it has nothing to evict, the insert is refused as Redis
//! refuses a write with `-OOM` (and so does `noeviction`).
//!
//! This is the fast path for comparing policies; the store-level simulator
//! (driving `Keyspace<AnyPolicy>`) is a later addition.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::time::{Duration, Instant};

use ferrum_evict::{
    AnyPolicy, ControllerState, EntryId, EvictionPolicy, Millis, PolicyConfig, PolicyKind,
};
use serde::Serialize;

use crate::workload::{Pattern, Request, Workload, VALUE_BYTES};

/// Parameters of one simulation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimConfig {
    /// Maximum number of resident entries. Default: 5 000.
    pub capacity: usize,
    /// Requests per reported window of the hit-ratio series. Default: 10 000.
    pub window: u64,
    /// Register only keys with a TTL with the policy (`volatile-*`).
    /// Default: false.
    pub volatile_only: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            capacity: crate::workload::CAPACITY,
            window: 10_000,
            volatile_only: false,
        }
    }
}

/// The outcome of one simulation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimReport {
    /// Lookups that found a live entry.
    pub hits: u64,
    /// Lookups that found nothing or an expired entry.
    pub misses: u64,
    /// Entries the policy evicted.
    pub evictions: u64,
    /// Entries removed because they were found expired.
    pub expired: u64,
    /// Inserts refused because nothing was evictable.
    pub rejected: u64,
    /// Requests per window in `windows`.
    pub window: u64,
    /// Hit ratio of each consecutive window of `window` requests (the last
    /// one may be shorter).
    pub windows: Vec<f64>,
    /// For AHE, small's target share of the cache at the end of each
    /// window (what its adaptive rule learned); empty for the others.
    pub small_shares: Vec<f64>,
    /// The policy's own heap bytes at the end of the run.
    pub policy_heap_bytes: usize,
    /// Entries the policy tracked at the end of the run.
    pub policy_len: usize,
    /// For adaptive policies, the controller's state at the end of the run.
    pub controller: Option<ControllerState>,
}

impl SimReport {
    /// `hits / (hits + misses)`, or 0 with no requests.
    pub fn hit_ratio(&self) -> f64 {
        let total = self.hits + self.misses;
        if total == 0 {
            0.0
        } else {
            self.hits as f64 / total as f64
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    key_id: u64,
    expires_at: Option<Millis>,
    tracked: bool,
}

/// A read-through cache of at most `capacity` entries, evicting with `P`.
#[derive(Debug)]
pub struct Simulator<P> {
    policy: Option<P>,
    config: SimConfig,
    slots: Vec<Slot>,
    free: Vec<u32>,
    index: HashMap<u64, u32, BuildHasherDefault<IdHasher>>,
    report: SimReport,
    window_hits: u64,
    window_len: u64,
}

impl<P: EvictionPolicy> Simulator<P> {
    /// An empty cache. `policy` is `None` for `noeviction`.
    pub fn new(policy: Option<P>, config: SimConfig) -> Self {
        let capacity = config.capacity;
        Simulator {
            policy,
            slots: Vec::with_capacity(capacity),
            free: Vec::new(),
            index: HashMap::with_capacity_and_hasher(capacity, BuildHasherDefault::default()),
            report: SimReport {
                hits: 0,
                misses: 0,
                evictions: 0,
                expired: 0,
                rejected: 0,
                window: config.window.max(1),
                windows: Vec::new(),
                small_shares: Vec::new(),
                policy_heap_bytes: 0,
                policy_len: 0,
                controller: None,
            },
            config,
            window_hits: 0,
            window_len: 0,
        }
    }

    /// Replays one request; returns whether it hit.
    pub fn request(&mut self, req: &Request) -> bool {
        let hit = self.lookup(req);
        if !hit {
            self.insert(req);
        }
        self.report.hits += u64::from(hit);
        self.report.misses += u64::from(!hit);
        self.window_hits += u64::from(hit);
        self.window_len += 1;
        if self.window_len == self.report.window {
            self.close_window();
        }
        hit
    }

    /// How many entries are resident.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether no entry is resident.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The policy, for inspection.
    pub fn policy(&self) -> Option<&P> {
        self.policy.as_ref()
    }

    /// Ends the run and returns the counters.
    pub fn finish(mut self) -> SimReport {
        if self.window_len > 0 {
            self.close_window();
        }
        if let Some(policy) = &self.policy {
            self.report.policy_heap_bytes = policy.heap_bytes();
            self.report.policy_len = policy.len();
            self.report.controller = policy.controller_state();
        }
        self.report
    }

    fn close_window(&mut self) {
        let ratio = self.window_hits as f64 / self.window_len as f64;
        self.report.windows.push(ratio);
        if let Some(state) = self.policy.as_ref().and_then(|p| p.controller_state()) {
            self.report.small_shares.push(state.small_target_share);
        }
        self.window_hits = 0;
        self.window_len = 0;
    }

    fn lookup(&mut self, req: &Request) -> bool {
        let Some(&slot) = self.index.get(&req.key_id) else {
            return false;
        };
        let entry = self.slots[slot as usize];
        if entry.expires_at.is_some_and(|deadline| req.at > deadline) {
            if entry.tracked {
                if let Some(policy) = &mut self.policy {
                    policy.on_remove(EntryId(slot));
                }
            }
            self.release(slot);
            self.report.expired += 1;
            return false;
        }
        if entry.tracked {
            if let Some(policy) = &mut self.policy {
                policy.on_hit(EntryId(slot), key_hash(req.key_id), req.at);
            }
        }
        true
    }

    fn insert(&mut self, req: &Request) {
        let hash = key_hash(req.key_id);
        if let Some(policy) = &mut self.policy {
            policy.on_miss(hash, req.at);
        }
        if self.index.len() >= self.config.capacity {
            let slots = &self.slots;
            let hash_of = |id: EntryId| key_hash(slots[id.index()].key_id);
            let victim = self.policy.as_mut().and_then(|p| p.evict(req.at, &hash_of));
            match victim {
                Some(id) => {
                    self.release(id.0);
                    self.report.evictions += 1;
                }
                None => {
                    self.report.rejected += 1;
                    return;
                }
            }
        }
        let expires_at = req.ttl.map(|ttl| req.at + ttl);
        let tracked = !self.config.volatile_only || expires_at.is_some();
        let entry = Slot {
            key_id: req.key_id,
            expires_at,
            tracked,
        };
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = entry;
                slot
            }
            None => {
                self.slots.push(entry);
                (self.slots.len() - 1) as u32
            }
        };
        self.index.insert(req.key_id, slot);
        if tracked {
            if let Some(policy) = &mut self.policy {
                policy.on_insert(EntryId(slot), hash, cost(req.key_id), req.at);
                if expires_at.is_some() {
                    policy.on_expiry_change(EntryId(slot), expires_at);
                }
            }
        }
    }

    /// Frees a slot whose entry the policy no longer tracks.
    fn release(&mut self, slot: u32) {
        let key_id = self.slots[slot as usize].key_id;
        self.index.remove(&key_id);
        self.free.push(slot);
    }
}

/// Replays `requests` against a fresh cache evicting with `policy`.
pub fn simulate<P, I>(policy: Option<P>, config: SimConfig, requests: I) -> SimReport
where
    P: EvictionPolicy,
    I: IntoIterator<Item = Request>,
{
    let mut sim = Simulator::new(policy, config);
    for req in requests {
        sim.request(&req);
    }
    sim.finish()
}

/// One cell of the policies × patterns matrix, with its wall time.
#[derive(Clone, Debug)]
pub struct CellRun {
    /// The counters.
    pub report: SimReport,
    /// Wall time of the replay, workload generation included.
    pub elapsed: Duration,
}

/// Runs `kind` on `requests` requests of `pattern` generated from `seed`,
/// seeding the policy with the same seed.
pub fn run_cell(
    kind: PolicyKind,
    pattern: Pattern,
    seed: u64,
    requests: u64,
    config: &SimConfig,
) -> CellRun {
    run_scaled_cell(kind, pattern, seed, requests, 1, config)
}

/// [`run_cell`] on the pattern at WORKLOADS.md v2 scale `scale`.
pub fn run_scaled_cell(
    kind: PolicyKind,
    pattern: Pattern,
    seed: u64,
    requests: u64,
    scale: u64,
    config: &SimConfig,
) -> CellRun {
    // The slab expires nothing itself: expired entries go only when a
    // policy evicts them, so those that can evict them first do.
    let policy_config = PolicyConfig {
        seed,
        expired_first: true,
        ..PolicyConfig::default()
    };
    let policy: Option<AnyPolicy> = kind.build(&policy_config);
    let config = SimConfig {
        volatile_only: kind.is_volatile(),
        ..config.clone()
    };
    let start = Instant::now();
    let report = simulate(
        policy,
        config,
        Workload::scaled(pattern, seed, requests, scale),
    );
    CellRun {
        report,
        elapsed: start.elapsed(),
    }
}

/// The cost a policy is told: key name bytes plus value bytes.
fn cost(key_id: u64) -> u32 {
    let digits = key_id.checked_ilog10().map_or(1, |d| d + 1).max(6);
    4 + digits + VALUE_BYTES
}

/// A well-mixed 64-bit hash of a key id (SplitMix64's finaliser), standing
/// in for the store's key hash.
pub fn key_hash(key_id: u64) -> u64 {
    let mut z = key_id.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Hashes `u64` key ids with [`key_hash`]: deterministic and cheaper than
/// SipHash, which the simulator does not need since keys are not
/// adversarial.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = key_hash(self.0 ^ u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = key_hash(n);
    }
}

#[cfg(test)]
mod tests {
    use ferrum_evict::{Lru, LruConfig};

    use super::*;

    fn req(at: u64, key_id: u64, ttl: Option<u64>) -> Request {
        Request {
            at: Millis(at),
            key_id,
            ttl: ttl.map(Millis),
        }
    }

    fn lru_sim(capacity: usize) -> Simulator<Lru> {
        let config = SimConfig {
            capacity,
            window: 2,
            volatile_only: false,
        };
        Simulator::new(Some(Lru::new(LruConfig::default())), config)
    }

    #[test]
    fn read_through_with_lru_eviction() {
        let mut sim = lru_sim(2);
        let hits: Vec<bool> = [1, 2, 1, 3, 2, 1]
            .iter()
            .enumerate()
            .map(|(i, &k)| sim.request(&req(i as u64, k, None)))
            .collect();
        // 3 evicts 2 (LRU); then 2 misses and evicts 1, and 1 evicts 3.
        assert_eq!(hits, [false, false, true, false, false, false]);
        assert_eq!(sim.len(), 2);
        let report = sim.finish();
        assert_eq!((report.hits, report.misses, report.evictions), (1, 5, 3));
        assert_eq!(report.windows, [0.0, 0.5, 0.0]);
    }

    #[test]
    fn expired_entries_miss_and_are_replaced() {
        let mut sim = lru_sim(4);
        assert!(!sim.request(&req(0, 9, Some(10))));
        assert!(sim.request(&req(10, 9, Some(10))));
        assert!(!sim.request(&req(11, 9, Some(10))));
        assert!(sim.request(&req(12, 9, Some(10))));
        assert_eq!(sim.len(), 1);
        assert_eq!(sim.policy().map(|p| p.len()), Some(1));
        let report = sim.finish();
        assert_eq!((report.hits, report.misses, report.expired), (2, 2, 1));
    }

    #[test]
    fn volatile_policy_only_evicts_keys_with_a_ttl() {
        let config = SimConfig {
            capacity: 2,
            window: 10,
            volatile_only: true,
        };
        let mut sim = Simulator::new(Some(Lru::new(LruConfig::default())), config);
        sim.request(&req(0, 1, None));
        sim.request(&req(1, 2, Some(1_000)));
        sim.request(&req(2, 3, None)); // evicts 2, the only volatile key
        sim.request(&req(3, 4, None)); // nothing evictable: refused
        assert!(sim.request(&req(4, 1, None)));
        assert!(sim.request(&req(5, 3, None)));
        assert!(!sim.request(&req(6, 4, None)));
        let report = sim.finish();
        assert_eq!((report.evictions, report.rejected), (1, 2));
    }

    #[test]
    fn noeviction_refuses_inserts_when_full() {
        let config = SimConfig {
            capacity: 1,
            ..SimConfig::default()
        };
        let report = simulate::<AnyPolicy, _>(
            None,
            config,
            [req(0, 1, None), req(1, 2, None), req(2, 1, None)],
        );
        assert_eq!((report.hits, report.misses, report.rejected), (1, 2, 1));
    }

    #[test]
    fn cost_counts_key_and_value_bytes() {
        assert_eq!(cost(42), 10 + VALUE_BYTES);
        assert_eq!(cost(0), 10 + VALUE_BYTES);
        assert_eq!(cost(1_000_000), 11 + VALUE_BYTES);
    }
}
