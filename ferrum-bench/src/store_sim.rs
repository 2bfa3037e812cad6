//! The simulator's faithful engine: requests replayed through the real
//! [`Store`] — the server's own keyspace, expiry, memory accounting and
//! eviction code — on virtual time.
//!
//! The policy-level engine in [`crate::sim`] counts entries; this one counts
//! bytes, as the server does. [`calibrate_maxmemory`] finds the `maxmemory`
//! at which the store holds exactly the spec's capacity of 5,000 entries of
//! `key:NNNNNN` names with 32-byte values, and [`StoreSimulator::new`]
//! holds the capacity there for the whole run as the live driver holds a
//! server's, so both engines answer the same question. Active expiry runs
//! every 100 virtual milliseconds, as the server does at its default
//! `hz 10`.

use std::time::Instant;

use bytes::Bytes;
use ferrum_evict::{Millis, PolicyConfig, PolicyKind};
use ferrum_store::{Access, Store, StoreConfig, Value};

use crate::hold::Hold;
use crate::sim::{CellRun, SimReport};
use crate::workload::{key_name, Pattern, Request, Workload, VALUE_BYTES};

/// Parameters of a store-engine run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreSimConfig {
    /// Entries the store should hold at steady state. Default: 5 000.
    pub capacity: usize,
    /// Shards of the store. Default: 1, so the policy sees the whole cache as
    /// the policy-level engine does; the server uses 16.
    pub shards: usize,
    /// Virtual milliseconds between active expiry cycles. Default: 100 (the
    /// server's `hz 10`).
    pub expire_every: Millis,
    /// Requests per window of the hit-ratio series. Default: 10 000.
    pub window: u64,
    /// WORKLOADS.md v2 scale of the workload (calibration replays its
    /// first `100,000·scale` requests). Default: 1.
    pub scale: u64,
}

impl Default for StoreSimConfig {
    fn default() -> Self {
        StoreSimConfig {
            capacity: crate::workload::CAPACITY,
            shards: 1,
            expire_every: Millis(100),
            window: 10_000,
            scale: 1,
        }
    }
}

fn store_config(kind: PolicyKind, seed: u64, shards: usize, maxmemory_bytes: u64) -> StoreConfig {
    StoreConfig {
        databases: 1,
        shards,
        maxmemory_bytes,
        policy: kind,
        policy_config: PolicyConfig {
            seed,
            ..PolicyConfig::default()
        },
    }
}

/// The `maxmemory` at which a store of `kind` holds `capacity` entries at
/// steady state on `pattern`.
///
/// Measured through the same code the simulation runs, as the live driver
/// calibrates a server: a first guess from filling an unlimited store with
/// `capacity` entries, then rounds of replaying the pattern's first
/// 100,000 requests under that limit and correcting it by the entries the
/// store held too many or too few at the end (entries with a TTL, and
/// policies that keep per-deadline state, cost a few bytes more).
pub fn calibrate_maxmemory(
    kind: PolicyKind,
    pattern: Pattern,
    seed: u64,
    config: &StoreSimConfig,
) -> u64 {
    let value = Value::str(&[b'v'; VALUE_BYTES as usize]);
    let filled = {
        let store = Store::new(store_config(kind, seed, config.shards, 0));
        for id in 0..config.capacity as u64 {
            let key = Bytes::from(key_name(id));
            let mut ks = store.lock_key(&key);
            ks.shard(&key)
                .insert(0, key.clone(), value.clone(), None, Millis(0));
        }
        store.used_memory_bytes() as u64
    };
    let per_entry = (filled / config.capacity.max(1) as u64).max(1);
    let tolerance = (config.capacity / 1000) as i64;
    let mut maxmemory = filled;
    for _ in 0..6 {
        let mut sim = StoreSimulator::with_maxmemory(kind, seed, config.clone(), maxmemory);
        let scale = config.scale.max(1);
        for req in Workload::scaled(pattern, seed, 100_000 * scale, scale) {
            sim.request(&req);
        }
        let missing = config.capacity as i64 - sim.dbsize() as i64;
        if missing.abs() <= tolerance {
            break;
        }
        maxmemory = maxmemory.saturating_add_signed(missing * per_entry as i64);
    }
    maxmemory
}

/// A read-through client of an in-process store: `GET`, and on a miss `SET`
/// with the request's TTL.
#[derive(Debug)]
pub struct StoreSimulator {
    store: Store,
    value: Value,
    config: StoreSimConfig,
    next_expire: Millis,
    window_hits: u64,
    window_len: u64,
    windows: Vec<f64>,
    small_shares: Vec<f64>,
    /// Holding the capacity, when the limit was calibrated for it.
    hold: Option<Hold>,
    /// Requests replayed so far.
    requests: u64,
}

impl StoreSimulator {
    /// A store evicting with `kind`, its `maxmemory` calibrated for
    /// `config.capacity` entries of `pattern` and held there for the whole
    /// run as the live driver holds a server's: every 2,000 requests a
    /// count off by more than 0.2% corrects the limit (see `Hold`), so
    /// a policy whose own tables shrink does not get the bytes they free
    /// as extra entries.
    pub fn new(
        kind: PolicyKind,
        pattern: Pattern,
        seed: u64,
        config: StoreSimConfig,
    ) -> StoreSimulator {
        let maxmemory = calibrate_maxmemory(kind, pattern, seed, &config);
        let capacity = config.capacity.max(1) as u64;
        let hold = Hold::new(capacity, (maxmemory / capacity).max(1), maxmemory);
        StoreSimulator {
            hold: Some(hold),
            ..StoreSimulator::with_maxmemory(kind, seed, config, maxmemory)
        }
    }

    /// A store evicting with `kind` under an explicit `maxmemory`.
    pub fn with_maxmemory(
        kind: PolicyKind,
        seed: u64,
        config: StoreSimConfig,
        maxmemory: u64,
    ) -> StoreSimulator {
        StoreSimulator {
            store: Store::new(store_config(kind, seed, config.shards, maxmemory)),
            value: Value::str(&[b'v'; VALUE_BYTES as usize]),
            next_expire: config.expire_every,
            config,
            window_hits: 0,
            window_len: 0,
            windows: Vec::new(),
            small_shares: Vec::new(),
            hold: None,
            requests: 0,
        }
    }

    /// Replays one request; returns whether it hit.
    pub fn request(&mut self, req: &Request) -> bool {
        let now = req.at;
        while now >= self.next_expire {
            while self.store.expire_cycle(self.next_expire, 200) > 0 {}
            self.next_expire = self.next_expire + self.config.expire_every;
        }
        let key = Bytes::from(key_name(req.key_id));
        let hit = {
            let mut ks = self.store.lock_key(&key);
            let shard = ks.shard(&key);
            let hit = shard.lookup(0, &key, now, Access::Read).is_some();
            if !hit {
                let deadline = req.ttl.map(|ttl| now + ttl);
                shard.insert(0, key.clone(), self.value.clone(), deadline, now);
            }
            hit
        };
        if !hit {
            self.store.enforce_maxmemory(now);
        }
        self.requests += 1;
        if self.hold.is_some() && self.requests % Hold::EVERY == 0 {
            self.hold_capacity(now);
        }
        self.window_hits += u64::from(hit);
        self.window_len += 1;
        if self.window_len == self.config.window {
            self.close_window();
        }
        hit
    }

    /// Lets [`Hold`] correct `maxmemory` from the entries held now.
    fn hold_capacity(&mut self, now: Millis) {
        let (keys, used) = (self.dbsize() as u64, self.store.used_memory_bytes() as u64);
        if let Some(maxmemory) = self.hold.as_mut().and_then(|h| h.correct(keys, used)) {
            self.store.set_maxmemory_bytes(maxmemory);
            self.store.enforce_maxmemory(now);
        }
    }

    fn close_window(&mut self) {
        if self.window_len > 0 {
            self.windows
                .push(self.window_hits as f64 / self.window_len as f64);
            if let Some(state) = self.store.controller_state() {
                self.small_shares.push(state.small_target_share);
            }
        }
        self.window_hits = 0;
        self.window_len = 0;
    }

    /// Keys resident now (the live driver's `DBSIZE`).
    pub fn dbsize(&self) -> usize {
        self.store.keyspace_sizes()[0].0
    }

    /// The store, for inspection.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The counters, read from the store's own statistics as `INFO` does.
    pub fn finish(mut self) -> SimReport {
        self.close_window();
        let stats = self.store.stats();
        let (policy_heap_bytes, policy_len) = self.store.policy_footprint();
        SimReport {
            small_shares: self.small_shares,
            policy_heap_bytes,
            policy_len,
            controller: self.store.controller_state(),
            hits: stats.keyspace_hits,
            misses: stats.keyspace_misses,
            evictions: stats.evicted_keys,
            expired: stats.expired_keys,
            rejected: 0,
            window: self.config.window,
            windows: self.windows,
        }
    }
}

/// Runs `kind` on `requests` requests of `pattern` from `seed` through the
/// store engine.
pub fn run_store_cell(
    kind: PolicyKind,
    pattern: Pattern,
    seed: u64,
    requests: u64,
    config: &StoreSimConfig,
) -> CellRun {
    let start = Instant::now();
    let sim = StoreSimulator::new(kind, pattern, seed, config.clone());
    replay(sim, pattern, seed, requests, config.scale, start)
}

/// [`run_store_cell`] under a given `maxmemory` instead of one calibrated
/// for `kind`: the equal-memory condition, where `kind` holds however many
/// entries fit.
pub fn run_store_cell_at(
    kind: PolicyKind,
    pattern: Pattern,
    seed: u64,
    requests: u64,
    config: &StoreSimConfig,
    maxmemory: u64,
) -> CellRun {
    let start = Instant::now();
    let sim = StoreSimulator::with_maxmemory(kind, seed, config.clone(), maxmemory);
    replay(sim, pattern, seed, requests, config.scale, start)
}

/// Replays `requests` of `pattern` through `sim`, timed from `start`.
fn replay(
    mut sim: StoreSimulator,
    pattern: Pattern,
    seed: u64,
    requests: u64,
    scale: u64,
    start: Instant,
) -> CellRun {
    for req in Workload::scaled(pattern, seed, requests, scale) {
        sim.request(&req);
    }
    CellRun {
        report: sim.finish(),
        elapsed: start.elapsed(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{run_cell, SimConfig};

    #[test]
    fn calibration_holds_the_capacity_at_steady_state() {
        let config = StoreSimConfig {
            capacity: 500,
            ..StoreSimConfig::default()
        };
        let mut sim = StoreSimulator::new(PolicyKind::AllKeysLru, Pattern::Scan, 42, config);
        for req in Workload::new(Pattern::Scan, 42, 5_000) {
            sim.request(&req);
        }
        let resident = sim.dbsize();
        assert!(
            (495..=505).contains(&resident),
            "{resident} entries resident"
        );
    }

    #[test]
    fn calibration_holds_ttl_workloads_within_one_percent() {
        for kind in [PolicyKind::AllKeysLru, PolicyKind::AllKeysLfu] {
            let mut sim = StoreSimulator::new(kind, Pattern::Ttl, 42, StoreSimConfig::default());
            for req in Workload::new(Pattern::Ttl, 42, 150_000) {
                sim.request(&req);
            }
            let resident = sim.dbsize();
            assert!(
                (4950..=5050).contains(&resident),
                "{kind}: {resident} entries resident"
            );
        }
    }

    #[test]
    fn the_capacity_is_held_while_ahes_share_moves() {
        // On `shift` AHE's small queue grows after the first rotation
        // (100,000 requests), moving entries between its queues and its
        // ghosts' sizes with them; the limit calibrated before must still
        // hold the same entries.
        let mut sim = StoreSimulator::new(
            PolicyKind::AllKeysAhe,
            Pattern::Shift,
            42,
            StoreSimConfig::default(),
        );
        // The entries held over the last 100,000 requests, every 1,000.
        let mut held = Vec::new();
        for (i, req) in Workload::new(Pattern::Shift, 42, 250_000).enumerate() {
            sim.request(&req);
            if i >= 150_000 && i % 1_000 == 999 {
                held.push(sim.dbsize());
            }
        }
        let weights = sim.finish().small_shares;
        assert!(
            weights.iter().any(|&w| w >= 2.0 * weights[0]),
            "{weights:?}"
        );
        let mean = held.iter().sum::<usize>() / held.len();
        assert!(
            (4_950..=5_050).contains(&mean),
            "{mean} entries on average: {held:?}"
        );
    }

    #[test]
    fn store_engine_agrees_with_the_policy_engine() {
        for pattern in [Pattern::Zipf, Pattern::Shift, Pattern::Mixed, Pattern::Scan] {
            for kind in [PolicyKind::AllKeysLru, PolicyKind::AllKeysLfu] {
                let store = run_store_cell(kind, pattern, 42, 100_000, &StoreSimConfig::default());
                let policy = run_cell(kind, pattern, 42, 100_000, &SimConfig::default());
                let (a, b) = (store.report.hit_ratio(), policy.report.hit_ratio());
                assert!(
                    (a - b).abs() < 0.005,
                    "{kind} {pattern}: store {a:.4} vs policy {b:.4}"
                );
            }
        }
    }

    #[test]
    fn the_servers_sixteen_shards_keep_the_whole_caches_hit_ratio() {
        // Each shard evicts its own keys; with the shards kept level, the
        // partitioned cache does as well as one cache of the same size.
        for kind in [PolicyKind::AllKeysLru, PolicyKind::AllKeysAhe] {
            let run = |shards| {
                let config = StoreSimConfig {
                    shards,
                    ..StoreSimConfig::default()
                };
                run_store_cell(kind, Pattern::Zipf, 42, 150_000, &config)
                    .report
                    .hit_ratio()
            };
            let (one, sixteen) = (run(1), run(16));
            // One-sided: sixteen small AHE sketches, each sized exactly for
            // its shard's entries, may do a little better than one (0.6820
            // against 0.6783 on this run), never worse.
            assert!(
                sixteen > one - 0.003,
                "{kind}: 1 shard {one:.4}, 16 shards {sixteen:.4}"
            );
        }
    }

    #[test]
    fn the_adaptive_share_is_reported_per_window() {
        let run =
            |kind| run_store_cell(kind, Pattern::Shift, 42, 30_000, &StoreSimConfig::default());
        let ahe = run(PolicyKind::AllKeysAhe).report;
        assert_eq!(ahe.small_shares.len(), ahe.windows.len());
        assert!(ahe.small_shares.iter().all(|w| (0.0..=1.0).contains(w)));
        assert!(run(PolicyKind::AllKeysLru).report.small_shares.is_empty());
    }

    #[test]
    fn a_seed_reproduces_the_same_run() {
        let run = || {
            run_store_cell(
                PolicyKind::AllKeysRandom,
                Pattern::Ttl,
                7,
                30_000,
                &StoreSimConfig::default(),
            )
        };
        assert_eq!(run().report, run().report);
    }
}
