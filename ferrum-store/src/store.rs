//! The sharded store: routing keys to shards, locking them, and keeping the
//! process-wide memory limit.

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use ferrum_evict::{Millis, PolicyConfig, PolicyKind};
use smallvec::SmallVec;

use crate::error::StoreError;
use crate::expired::ExpiredLog;
use crate::keyspace::Shard;
use crate::stats::KeyspaceStats;

/// How a [`Store`] is built.
#[derive(Clone, Debug)]
pub struct StoreConfig {
    /// Number of databases (`databases`, default 16).
    pub databases: usize,
    /// Number of independently locked shards (default 16). Keys are routed
    /// by hash, so more shards mean less contention between cores.
    pub shards: usize,
    /// `maxmemory` in bytes; 0 means no limit.
    pub maxmemory_bytes: u64,
    /// `maxmemory-policy`.
    pub policy: PolicyKind,
    /// Parameters for the policy, including the seed that every random
    /// choice of the store and the policies flows from.
    pub policy_config: PolicyConfig,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            databases: 16,
            shards: 16,
            maxmemory_bytes: 0,
            policy: PolicyKind::NoEviction,
            policy_config: PolicyConfig::default(),
        }
    }
}

/// The whole keyspace: every database, split into shards by key hash, each
/// behind its own mutex.
///
/// Commands lock the shards of the keys they touch ([`Store::lock_keys`]) or
/// all of them ([`Store::lock_all`]), always in ascending order so that two
/// multi-key commands cannot deadlock. The locks are plain `std` mutexes held
/// for the few microseconds a command takes, never across an `.await`.
#[derive(Debug)]
pub struct Store {
    shards: Box<[Mutex<Shard>]>,
    router: foldhash::fast::FixedState,
    databases: usize,
    used_bytes: AtomicUsize,
    /// Bytes the server holds outside the keyspace (its connections'
    /// buffers), reported in `used_memory` but not evicted for: what the
    /// server publishes through [`Store::add_outside_bytes`].
    outside_bytes: AtomicUsize,
    /// Each shard's share of `used_bytes`, published with it, so eviction
    /// can pick the largest shard without taking every lock.
    shard_bytes: Box<[AtomicUsize]>,
    maxmemory_bytes: AtomicU64,
    policy: Mutex<(PolicyKind, PolicyConfig)>,
    /// What [`Store::hold_expired`] last set on every shard; a mutex, so
    /// that two changes never interleave across the shards.
    holding_expired: Mutex<bool>,
    /// Snapshots started so far (the last one's generation).
    snapshots: AtomicU64,
    /// Every shard's removals by expiry, while named (see [`ExpiredLog`]).
    expired_log: Arc<ExpiredLog>,
}

impl Store {
    /// An empty store.
    pub fn new(config: StoreConfig) -> Store {
        let shards = config.shards.max(1);
        let seed = config.policy_config.seed;
        let expired_log = Arc::new(ExpiredLog::default());
        let shards: Box<[Mutex<Shard>]> = (0..shards)
            .map(|i| {
                let mut pc = config.policy_config.clone();
                pc.seed = seed.wrapping_add(i as u64);
                let mut shard = Shard::new(config.databases, config.policy, pc);
                shard.set_expired_log(expired_log.clone());
                Mutex::new(shard)
            })
            .collect();
        let shard_bytes: Box<[AtomicUsize]> = shards
            .iter()
            .map(|s| AtomicUsize::new(lock(s).memory_bytes()))
            .collect();
        let used = shard_bytes.iter().map(|b| b.load(Ordering::Relaxed)).sum();
        Store {
            shards,
            router: foldhash::fast::FixedState::with_seed(seed ^ 0x9e37_79b9_7f4a_7c15),
            databases: config.databases.max(1),
            used_bytes: AtomicUsize::new(used),
            outside_bytes: AtomicUsize::new(0),
            shard_bytes,
            maxmemory_bytes: AtomicU64::new(config.maxmemory_bytes),
            policy: Mutex::new((config.policy, config.policy_config)),
            holding_expired: Mutex::new(false),
            snapshots: AtomicU64::new(0),
            expired_log,
        }
    }

    /// Starts or stops naming the keys expiry removes (see [`ExpiredLog`]).
    pub fn log_expired(&self, on: bool) {
        self.expired_log.set(on);
    }

    /// The keys expiry removed since the last call while
    /// [`log_expired`](Store::log_expired) was on, oldest first.
    pub fn take_expired(&self) -> Vec<(usize, Bytes)> {
        self.expired_log.take()
    }

    /// [`Shard::set_hold_expired`] on every shard. Cheap to call again
    /// with the same value: shards are locked only when it changes.
    pub fn hold_expired(&self, on: bool) {
        let mut holding = lock(&self.holding_expired);
        if *holding == on {
            return;
        }
        *holding = on;
        for shard in self.shards.iter() {
            lock(shard).set_hold_expired(on);
        }
    }

    /// How many databases there are.
    pub fn databases(&self) -> usize {
        self.databases
    }

    /// How many shards there are.
    pub fn shard_count(&self) -> usize {
        self.shards.len()
    }

    /// Which shard `key` lives in.
    pub fn shard_of(&self, key: &[u8]) -> usize {
        (self.router.hash_one(key) % self.shards.len() as u64) as usize
    }

    /// Locks the shard holding `key`.
    pub fn lock_key(&self, key: &[u8]) -> Locked<'_> {
        let i = self.shard_of(key);
        self.lock_indices(std::iter::once(i))
    }

    /// Locks the shards holding `keys`, in ascending shard order.
    pub fn lock_keys<'k>(&self, keys: impl IntoIterator<Item = &'k [u8]>) -> Locked<'_> {
        let mut idx: SmallVec<[usize; 4]> = keys.into_iter().map(|k| self.shard_of(k)).collect();
        idx.sort_unstable();
        idx.dedup();
        self.lock_indices(idx)
    }

    /// Locks shard `i` alone (`i < shard_count()`), for walks over the
    /// whole keyspace that let other commands run between shards.
    ///
    /// # Panics
    /// If `i` is not below [`Store::shard_count`].
    pub fn lock_shard(&self, i: usize) -> Locked<'_> {
        self.lock_indices(std::iter::once(i))
    }

    /// Starts a point-in-time snapshot of every key as it is now, which
    /// [`Store::snapshot_step`] hands out shard by shard (see
    /// [`crate::snapshot`]). Every shard is locked for the start only.
    /// Returns the snapshot's generation, which its steps name; `None`,
    /// changing nothing, when a snapshot is already in progress.
    pub fn snapshot_start(&self, now: Millis) -> Option<u64> {
        let mut all = self.lock_all();
        if all.shards().any(|s| s.snapshot_running()) {
            return None;
        }
        let generation = self.snapshots.fetch_add(1, Ordering::Relaxed) + 1;
        for shard in all.shards() {
            shard.snapshot_start(generation, now);
        }
        Some(generation)
    }

    /// Gives snapshot `generation` each shard's eviction order (AHE's
    /// queues) for the entries it copies from then on, shard by shard
    /// (see `SnapshotEntry::rank`): for the saving thread, before its walk.
    pub fn snapshot_take_order(&self, generation: u64) {
        for shard in self.shards.iter() {
            lock(shard).snapshot_take_order(generation);
        }
    }

    /// One step of the snapshot in shard `shard`: the copies made so far
    /// plus the walk's next `budget` bytes or so, under the shard's lock
    /// only.
    ///
    /// # Panics
    /// If `shard` is not below [`Store::shard_count`].
    pub fn snapshot_step(
        &self,
        generation: u64,
        shard: usize,
        budget: usize,
    ) -> crate::snapshot::SnapshotChunk {
        let mut locked = self.lock_shard(shard);
        let chunk = locked
            .shards()
            .next()
            .map(|s| s.snapshot_step(generation, budget));
        chunk.unwrap_or_default()
    }

    /// Each shard's eviction-policy state (see
    /// [`Shard::export_policy_state`]), each shard locked in turn.
    pub fn policy_states(&self) -> Vec<Option<Vec<u8>>> {
        self.shards
            .iter()
            .map(|shard| lock(shard).export_policy_state())
            .collect()
    }

    /// Hands shard `shard`'s policy a state [`Store::policy_states`] gave
    /// (ignored when `shard` is out of range).
    pub fn import_policy_state(&self, shard: usize, state: &[u8]) {
        if shard < self.shards.len() {
            let mut locked = self.lock_shard(shard);
            for s in locked.shards() {
                s.import_policy_state(state);
            }
        }
    }

    /// Hands shard `shard`'s policy the order of a load's keys (see
    /// [`Shard::import_policy_order`]; ignored when `shard` is out of
    /// range).
    pub fn import_policy_order(&self, shard: usize, keys: &[(usize, &[u8], u32)], now: Millis) {
        if shard < self.shards.len() {
            let mut locked = self.lock_shard(shard);
            for s in locked.shards() {
                s.import_policy_order(keys, now);
            }
        }
    }

    /// Ends the snapshot in progress, if any, in every shard.
    pub fn snapshot_abort(&self) {
        for shard in self.shards.iter() {
            lock(shard).snapshot_abort();
        }
    }

    /// Bytes of the copies writes displaced during the snapshot in
    /// progress, over all shards: the fork-free analogue of Redis's
    /// copy-on-write size (a shard that finished its walk no longer
    /// counts).
    pub fn snapshot_displaced_bytes(&self) -> usize {
        self.shards
            .iter()
            .map(|s| lock(s).snapshot_displaced_bytes())
            .sum()
    }

    /// Locks every shard, for commands that see the whole keyspace
    /// (`DBSIZE`, `KEYS`, `FLUSHALL`, `EXEC`).
    pub fn lock_all(&self) -> Locked<'_> {
        self.lock_indices(0..self.shards.len())
    }

    fn lock_indices(&self, idx: impl IntoIterator<Item = usize>) -> Locked<'_> {
        let guards = idx
            .into_iter()
            .map(|i| {
                let g = lock(&self.shards[i]);
                let mem = g.memory_bytes();
                (i, g, mem)
            })
            .collect();
        Locked {
            store: self,
            guards,
        }
    }

    /// Bytes in use now, as `INFO`'s `used_memory`: the dataset's
    /// ([`dataset_bytes`](Self::dataset_bytes), which `maxmemory` bounds)
    /// and what the server holds outside it
    /// ([`outside_bytes`](Self::outside_bytes)).
    pub fn used_memory_bytes(&self) -> usize {
        self.dataset_bytes()
            .wrapping_add(self.outside_bytes.load(Ordering::Relaxed))
    }

    /// Bytes the dataset and the policies' structures cost now.
    pub fn dataset_bytes(&self) -> usize {
        self.used_bytes.load(Ordering::Relaxed)
    }

    /// Bytes the server published as held outside the keyspace.
    pub fn outside_bytes(&self) -> usize {
        self.outside_bytes.load(Ordering::Relaxed)
    }

    /// Publishes a change, from `before` to `after` bytes, in what one
    /// holder outside the keyspace (a connection) keeps; each holder
    /// publishes its own figure and takes it back (`after` 0) when it
    /// goes. It shows in `used_memory`; eviction does not count it.
    pub fn add_outside_bytes(&self, before: usize, after: usize) {
        if before != after {
            self.outside_bytes
                .fetch_add(after.wrapping_sub(before), Ordering::Relaxed);
        }
    }

    /// `maxmemory` in bytes; 0 means no limit.
    pub fn maxmemory_bytes(&self) -> u64 {
        self.maxmemory_bytes.load(Ordering::Relaxed)
    }

    /// Changes `maxmemory`. The caller should then call
    /// [`enforce_maxmemory`](Self::enforce_maxmemory) to evict at once.
    pub fn set_maxmemory_bytes(&self, bytes: u64) {
        self.maxmemory_bytes.store(bytes, Ordering::Relaxed);
    }

    /// The current policy and its parameters.
    pub fn policy(&self) -> (PolicyKind, PolicyConfig) {
        lock(&self.policy).clone()
    }

    /// Switches the eviction policy at runtime. Each shard is rebuilt in
    /// turn, keeping its keys and their recency order.
    pub fn set_policy(&self, kind: PolicyKind, config: PolicyConfig) {
        *lock(&self.policy) = (kind, config.clone());
        for (i, shard) in self.shards.iter().enumerate() {
            let mut pc = config.clone();
            pc.seed = config.seed.wrapping_add(i as u64);
            let mut g = lock(shard);
            let before = g.memory_bytes();
            g.set_policy(kind, pc);
            self.add_used(i, before, g.memory_bytes());
        }
    }

    /// Whether the dataset is over `maxmemory`. Connections' bytes
    /// ([`outside_bytes`](Self::outside_bytes)) are reported beside it but
    /// evict nothing: eviction stays exact and deterministic, at the same
    /// points as in the simulator, whatever the clients' buffers do.
    pub fn over_maxmemory(&self) -> bool {
        let max = self.maxmemory_bytes();
        max != 0 && self.dataset_bytes() as u64 > max
    }

    /// Evicts until used memory is within `maxmemory` or nothing more can be
    /// evicted. Returns how many keys were evicted.
    ///
    /// Each victim comes from the shard that uses the most memory now, so
    /// the shards stay the same size while keys land on them by hash: the
    /// store holds the same number of keys for a given limit however long it
    /// runs. (Visiting shards in turn let their sizes random-walk apart, and
    /// each shard's slot table keeps its high-water length, so a fixed limit
    /// held 8% fewer keys after a million requests.) A shard with nothing the
    /// policy may evict is skipped for the rest of the call.
    /// Must not be called while this thread holds a [`Locked`].
    pub fn enforce_maxmemory(&self, now: Millis) -> usize {
        self.enforce_maxmemory_reporting(now, &mut |_, _| {})
    }

    /// [`enforce_maxmemory`](Self::enforce_maxmemory), telling `on_evict`
    /// each victim's database and key as it goes (under its shard's lock:
    /// `on_evict` must not reach into the store).
    pub fn enforce_maxmemory_reporting(
        &self,
        now: Millis,
        on_evict: &mut dyn FnMut(usize, &[u8]),
    ) -> usize {
        let mut evicted = 0;
        // Allocated only when a shard has nothing left to evict.
        let mut exhausted = Vec::new();
        while self.over_maxmemory() {
            let Some(i) = self.largest_shard(&exhausted) else {
                break;
            };
            let mut g = lock(&self.shards[i]);
            let before = g.memory_bytes();
            if g.evict_one_reporting(now, on_evict).is_some() {
                evicted += 1;
            } else {
                exhausted.resize(self.shards.len(), false);
                exhausted[i] = true;
            }
            self.add_used(i, before, g.memory_bytes());
        }
        evicted
    }

    /// The shard using the most memory among those not `skip`ped; the lowest
    /// index wins a tie, so the choice is deterministic.
    fn largest_shard(&self, skip: &[bool]) -> Option<usize> {
        (0..self.shards.len())
            .filter(|&i| !skip.get(i).copied().unwrap_or(false))
            .max_by_key(|&i| {
                (
                    self.shard_bytes[i].load(Ordering::Relaxed),
                    std::cmp::Reverse(i),
                )
            })
    }

    /// Gets under `maxmemory` before a command that may grow memory runs.
    ///
    /// # Errors
    ///
    /// [`StoreError::OutOfMemory`] when used memory is over the limit and the
    /// policy cannot evict anything (`noeviction`, or a `volatile-*` policy
    /// with no key that has a TTL).
    pub fn reserve_for_write(&self, now: Millis) -> Result<(), StoreError> {
        if !self.over_maxmemory() {
            return Ok(());
        }
        self.enforce_maxmemory(now);
        if self.over_maxmemory() {
            Err(StoreError::OutOfMemory)
        } else {
            Ok(())
        }
    }

    /// Runs active expiry over every shard, examining at most `max_checks`
    /// keys with a TTL per shard. The server calls this from a timer and
    /// bounds the total work; the store reads no clock itself.
    pub fn expire_cycle(&self, now: Millis, max_checks: usize) -> usize {
        let mut expired = 0;
        for (i, shard) in self.shards.iter().enumerate() {
            let mut g = lock(shard);
            let before = g.memory_bytes();
            expired += g.expire_cycle(now, max_checks).expired;
            self.add_used(i, before, g.memory_bytes());
        }
        expired
    }

    /// The counters, summed over the shards.
    pub fn stats(&self) -> KeyspaceStats {
        let mut total = KeyspaceStats::default();
        for shard in self.shards.iter() {
            total += lock(shard).stats();
        }
        total
    }

    /// Heap bytes of the policies' own structures and the entries they
    /// track, summed over the shards.
    pub fn policy_footprint(&self) -> (usize, usize) {
        self.shards.iter().fold((0, 0), |(bytes, len), s| {
            let (b, l) = lock(s).policy_footprint();
            (bytes + b, len + l)
        })
    }

    /// The adaptive policy's controller state, combined over the shards;
    /// `None` unless the policy is adaptive.
    pub fn controller_state(&self) -> Option<ferrum_evict::ControllerState> {
        let states: Vec<_> = self
            .shards
            .iter()
            .filter_map(|s| lock(s).controller_state())
            .collect();
        ferrum_evict::ControllerState::combine(states)
    }

    /// Zeroes the counters (`CONFIG RESETSTAT`).
    pub fn reset_stats(&self) {
        for shard in self.shards.iter() {
            lock(shard).reset_stats();
        }
    }

    /// Keys and keys-with-TTL per database, for `INFO keyspace`.
    pub fn keyspace_sizes(&self) -> Vec<(usize, usize)> {
        let mut sizes = vec![(0, 0); self.databases];
        for shard in self.shards.iter() {
            let g = lock(shard);
            for (db, size) in sizes.iter_mut().enumerate() {
                size.0 += g.len(db);
                size.1 += g.expires(db);
            }
        }
        sizes
    }

    /// Publishes shard `i`'s change in memory use, measured under its lock.
    fn add_used(&self, i: usize, before: usize, after: usize) {
        // A read changes nothing: no atomic write, so the counters' cache
        // line is not pulled away from the other workers on every GET.
        if before == after {
            return;
        }
        // Wrapping arithmetic on the unsigned counters applies a signed delta.
        let delta = after.wrapping_sub(before);
        self.shard_bytes[i].fetch_add(delta, Ordering::Relaxed);
        self.used_bytes.fetch_add(delta, Ordering::Relaxed);
    }
}

/// Locks a shard, recovering it if a panicking thread poisoned the mutex: a
/// shard's invariants hold between operations, so the data is still sound.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Shards locked for one command (or one `EXEC`).
///
/// Dropping it publishes the change in memory use to the store.
#[derive(Debug)]
pub struct Locked<'a> {
    store: &'a Store,
    /// Shard index, guard, and the shard's memory when locked. Inline for
    /// one or two shards: most commands name one key, and this is built
    /// for every command.
    guards: SmallVec<[(usize, MutexGuard<'a, Shard>, usize); 2]>,
}

impl<'a> Locked<'a> {
    /// The shard holding `key`.
    ///
    /// # Panics
    ///
    /// If that shard was not locked: the command layer locks every key a
    /// command names before running it, so this is a bug in the caller.
    pub fn shard(&mut self, key: &[u8]) -> &mut Shard {
        let i = self.store.shard_of(key);
        let pos = if self.guards.len() == self.store.shards.len() {
            i
        } else {
            self.guards
                .iter()
                .position(|(j, _, _)| *j == i)
                .unwrap_or_else(|| unreachable!("key's shard {i} was not locked by the caller"))
        };
        &mut self.guards[pos].1
    }

    /// Every locked shard.
    pub fn shards(&mut self) -> impl Iterator<Item = &mut Shard> + use<'_, 'a> {
        self.guards.iter_mut().map(|(_, g, _)| &mut **g)
    }

    /// The store these shards belong to.
    pub fn store(&self) -> &Store {
        self.store
    }

    /// Keys in database `db` across the locked shards.
    pub fn dbsize(&self, db: usize) -> usize {
        self.guards.iter().map(|(_, g, _)| g.len(db)).sum()
    }

    /// A random live key of database `db` across the locked shards, each
    /// shard weighted by its size.
    pub fn random_key(&mut self, db: usize, now: Millis) -> Option<Bytes> {
        let total = self.dbsize(db);
        if total == 0 {
            return None;
        }
        let pick = (self.guards[0].1.random_u64() % total as u64) as usize;
        // Start at the shard the pick falls in, then try the others: a shard
        // whose keys all expired since they were counted yields nothing.
        let mut acc = 0;
        let first = self
            .guards
            .iter()
            .position(|(_, g, _)| {
                acc += g.len(db);
                acc > pick
            })
            .unwrap_or(0);
        let n = self.guards.len();
        (0..n).find_map(|i| self.guards[(first + i) % n].1.random_key(db, now))
    }

    /// One step of `SCAN` over database `db`: visits slots from `cursor` on,
    /// interleaving shards, and calls `f` on each live key until `count` keys
    /// were seen or ten times as many slots were visited. Returns the next
    /// cursor, 0 when the scan is complete.
    ///
    /// A cursor is `slot * shards + shard`. Slots never move while a key is
    /// resident, so every key present for the whole scan is returned.
    pub fn scan(
        &mut self,
        db: usize,
        cursor: u64,
        count: usize,
        now: Millis,
        mut f: impl FnMut(&[u8], crate::Entry<'_>),
    ) -> u64 {
        let n = self.guards.len() as u64;
        let max_slots = self
            .guards
            .iter()
            .map(|(_, g, _)| g.slot_count())
            .max()
            .unwrap_or(0) as u64;
        let mut c = cursor;
        let (mut seen, mut visited) = (0, 0);
        let budget = count.max(1);
        while c / n < max_slots && seen < budget && visited < budget.saturating_mul(10) {
            let (shard, slot) = ((c % n) as usize, (c / n) as usize);
            self.guards[shard].1.expire_slot(db, slot, now);
            if let Some((k, e)) = self.guards[shard].1.key_at_slot(db, slot, now) {
                f(k, e);
                seen += 1;
            }
            visited += 1;
            c += 1;
        }
        if c / n >= max_slots {
            0
        } else {
            c
        }
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        for (i, g, before) in &self.guards {
            self.store.add_used(*i, *before, g.memory_bytes());
        }
    }
}
