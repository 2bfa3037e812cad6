//! One window-share controller for every AHE instance of a store.
//!
//! The store keeps a policy instance per shard (16 by default), and keys
//! are spread over the shards by a hash, so every shard sees the same
//! workload with a sixteenth of its traffic. With a controller each, the
//! sixteen instances each steered by a sixteenth of the evidence: a
//! period's regret balance rested on a few dozen ghost hits a side, so the
//! surges a rotating hot set needs started late, shard by shard, and the
//! ghost history had to remember a denser sample of small shards' evictions
//! to be heard at all. A [`SharedController`] pools them: each member
//! batches its observations and hands them over every [`BATCH`] lookups;
//! the pooled [`HillClimber`] takes one step per period of
//! `period_factor` times the store's entries (the members' periods,
//! summed); and every member reads the one share it publishes.
//!
//! A member takes the lock only to hand over a batch (once per 64
//! lookups) and when its size changes (at most once per eviction); reading
//! the share is a relaxed atomic load. The store builds every shard's
//! policy again together (`FLUSHALL`, a policy switch), and
//! [`SharedController::reset`] starts the pooled climber over with them.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::controller::{ClimberConfig, Controller, HillClimber, Signal, Tally};

/// Lookups a member observes before handing them over: the lock is taken
/// once per batch, and a period (thousands of lookups) ends at most a
/// batch per member late.
const BATCH: u64 = 64;

/// A window-share controller shared by the AHE instances of one store (its
/// shards). Cloning gives another handle to the same controller.
///
/// ```
/// use ferrum_evict::ahe::{ClimberConfig, SharedController};
/// use ferrum_evict::{Ahe, AheConfig, EntryId, EvictionPolicy, Millis};
///
/// let store = SharedController::new(ClimberConfig::default());
/// let mut shards: Vec<Ahe> = (0..2)
///     .map(|_| Ahe::sharing(AheConfig::default(), store.clone()))
///     .collect();
/// for i in 0..100u32 {
///     shards[i as usize % 2].on_insert(EntryId(i / 2), u64::from(i), 64, Millis(0));
/// }
/// // Two members of 50 entries each: the store's controller steers 100.
/// assert_eq!(store.entries(), 100);
/// // Every member reads the store's share.
/// for shard in &shards {
///     let state = shard.controller_state().unwrap();
///     assert_eq!(state.recency_weight, store.recency_share());
/// }
/// ```
#[derive(Clone)]
pub struct SharedController {
    inner: Arc<Inner>,
}

struct Inner {
    pool: Mutex<Pool>,
    /// The climber's share, as `f64` bits, for members to read without
    /// the lock.
    share: AtomicU64,
    /// The climber's [`HillClimber::rotations_are_slow`], read the same way.
    slow_rotations: AtomicBool,
}

struct Pool {
    climber: HillClimber,
    config: ClimberConfig,
    /// The members' periods, summed: the pooled climber's period.
    period: u64,
    /// The members' sizes in entries, summed.
    entries: usize,
}

impl SharedController {
    /// A controller with no members yet, at `config.initial_share`.
    pub fn new(config: ClimberConfig) -> Self {
        let climber = HillClimber::new(config.clone());
        let share = AtomicU64::new(climber.recency_share().to_bits());
        let pool = Pool {
            climber,
            config,
            period: 0,
            entries: 0,
        };
        SharedController {
            inner: Arc::new(Inner {
                pool: Mutex::new(pool),
                share,
                slow_rotations: AtomicBool::new(false),
            }),
        }
    }

    /// Starts over at the initial share with nothing learned, as a new
    /// controller, keeping its members and their sizes. The store calls it
    /// when it builds its shards' policies again, so that what the old
    /// keys taught does not steer the new ones.
    pub fn reset(&self) {
        let mut pool = self.lock();
        pool.climber = HillClimber::new(pool.config.clone());
        let period = pool.period;
        pool.climber.set_period(period);
        self.publish(&pool);
    }

    /// The share of each member's cache that recency gets.
    pub fn recency_share(&self) -> f64 {
        f64::from_bits(self.inner.share.load(Ordering::Relaxed))
    }

    /// Whether the hot set rotates slowly (see
    /// [`HillClimber::rotations_are_slow`]).
    pub fn rotations_are_slow(&self) -> bool {
        self.inner.slow_rotations.load(Ordering::Relaxed)
    }

    /// The entries of every member, summed: the cache the controller
    /// steers.
    pub fn entries(&self) -> usize {
        self.lock().entries
    }

    /// The pooled step size and the hit ratio of the last period.
    fn progress(&self) -> (f64, f64) {
        let pool = self.lock();
        (
            pool.climber.learning_rate(),
            pool.climber.window_hit_ratio(),
        )
    }

    fn lock(&self) -> MutexGuard<'_, Pool> {
        // A member that panicked mid-batch leaves counts, never a broken
        // invariant: the pool is still usable.
        self.inner
            .pool
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn publish(&self, pool: &Pool) {
        self.inner
            .share
            .store(pool.climber.recency_share().to_bits(), Ordering::Relaxed);
        self.inner
            .slow_rotations
            .store(pool.climber.rotations_are_slow(), Ordering::Relaxed);
    }

    /// A member's period and size changed from `from` to `to`.
    fn resize(&self, from: (u64, usize), to: (u64, usize)) {
        let mut pool = self.lock();
        pool.period = pool.period - from.0 + to.0;
        pool.entries = pool.entries - from.1 + to.1;
        let period = pool.period;
        pool.climber.set_period(period);
    }

    fn absorb(&self, tally: &Tally, hits: u64, requests: u64) {
        let mut pool = self.lock();
        pool.climber.absorb(tally, hits, requests);
        self.publish(&pool);
    }
}

impl Default for SharedController {
    fn default() -> Self {
        SharedController::new(ClimberConfig::default())
    }
}

impl fmt::Debug for SharedController {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedController")
            .field("recency_share", &self.recency_share())
            .field("entries", &self.entries())
            .finish()
    }
}

/// One AHE instance's link to its [`SharedController`]: the observations
/// not handed over yet, and what it added to the pooled period and size
/// (taken back when it is dropped).
#[derive(Debug)]
pub(crate) struct Member {
    group: SharedController,
    batch: Tally,
    hits: u64,
    requests: u64,
    /// Everything this member observed, for its own report.
    total: Tally,
    period: u64,
    entries: usize,
}

impl Member {
    pub(crate) fn join(group: SharedController) -> Member {
        Member {
            group,
            batch: Tally::default(),
            hits: 0,
            requests: 0,
            total: Tally::default(),
            period: 0,
            entries: 0,
        }
    }

    pub(crate) fn observe(&mut self, signal: Signal) {
        self.batch.add(signal);
        self.total.add(signal);
        if matches!(signal, Signal::Hit | Signal::Miss) {
            self.hits += u64::from(signal == Signal::Hit);
            self.requests += 1;
            if self.requests >= BATCH {
                self.group.absorb(&self.batch, self.hits, self.requests);
                self.batch = Tally::default();
                (self.hits, self.requests) = (0, 0);
            }
        }
    }

    /// This member now asks for a period of `period` requests and steers
    /// `entries` entries.
    pub(crate) fn set_size(&mut self, period: u64, entries: usize) {
        if (period, entries) != (self.period, self.entries) {
            self.group
                .resize((self.period, self.entries), (period, entries));
            (self.period, self.entries) = (period, entries);
        }
    }

    pub(crate) fn group(&self) -> &SharedController {
        &self.group
    }

    pub(crate) fn totals(&self) -> Tally {
        self.total
    }

    /// The pooled step size and last period's hit ratio.
    pub(crate) fn progress(&self) -> (f64, f64) {
        self.group.progress()
    }
}

impl Clone for Member {
    /// Another member of the same controller, of the same size, with
    /// nothing pending.
    fn clone(&self) -> Self {
        let mut member = Member::join(self.group.clone());
        member.total = self.total;
        member.set_size(self.period, self.entries);
        member
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        self.set_size(0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ahe::Side;

    fn config() -> ClimberConfig {
        ClimberConfig {
            initial_share: 0.5,
            initial_step: 0.1,
            regret_margin: f64::INFINITY,
            surge_margin: f64::INFINITY,
            ..ClimberConfig::default()
        }
    }

    fn lookups(m: &mut Member, hits: u64, misses: u64) {
        for _ in 0..hits {
            m.observe(Signal::Hit);
        }
        for _ in 0..misses {
            m.observe(Signal::Miss);
        }
    }

    #[test]
    fn members_pool_one_period_and_read_one_share() {
        let group = SharedController::new(config());
        let (mut a, mut b) = (Member::join(group.clone()), Member::join(group.clone()));
        a.set_size(BATCH * 2, 100);
        b.set_size(BATCH * 2, 300);
        assert_eq!(group.entries(), 400);
        // Half the pooled period from each member: no step before the
        // second member's batches complete it.
        lookups(&mut a, BATCH, BATCH);
        assert_eq!(group.recency_share(), 0.5);
        lookups(&mut b, BATCH, BATCH);
        // The first period steps blindly, up by the initial step.
        assert!((group.recency_share() - 0.6).abs() < 1e-9);
        assert_eq!(a.totals(), Tally::default(), "hits and misses are no tally");
        a.observe(Signal::Evicted(Side::Recency));
        assert_eq!(a.totals().evicted_recency, 1);
        assert_eq!(b.totals().evicted_recency, 0, "each member reports its own");
    }

    #[test]
    fn a_batch_waits_until_it_is_full() {
        let group = SharedController::new(config());
        let mut a = Member::join(group.clone());
        a.set_size(BATCH, 10);
        lookups(&mut a, BATCH - 1, 0);
        assert_eq!(group.recency_share(), 0.5, "not handed over yet");
        lookups(&mut a, 1, 0);
        assert!((group.recency_share() - 0.6).abs() < 1e-9);
    }

    #[test]
    fn a_dropped_member_takes_its_size_back_and_a_clone_adds_it_again() {
        let group = SharedController::new(config());
        let mut a = Member::join(group.clone());
        a.set_size(300, 100);
        let b = a.clone();
        assert_eq!(group.entries(), 200);
        drop(a);
        assert_eq!(group.entries(), 100);
        drop(b);
        assert_eq!(group.entries(), 0);
        assert_eq!(group.lock().period, 0);
    }

    #[test]
    fn reset_forgets_what_was_learned_but_keeps_the_members() {
        let group = SharedController::new(config());
        let mut a = Member::join(group.clone());
        a.set_size(BATCH, 10);
        lookups(&mut a, BATCH, 0);
        assert!((group.recency_share() - 0.6).abs() < 1e-9);
        group.reset();
        assert_eq!(group.recency_share(), 0.5);
        assert_eq!(group.entries(), 10);
        // The period is still the member's: one batch steps again.
        lookups(&mut a, BATCH, 0);
        assert!((group.recency_share() - 0.6).abs() < 1e-9);
    }
}
