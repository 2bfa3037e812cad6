//! Least-frequently-used eviction with Redis 7's counter and an exact,
//! aged victim choice.
//!
//! **Counter (Redis semantics).** Each entry keeps Redis's 8-bit logarithmic
//! Morris counter and its "last decrement time" in minutes. A new entry
//! starts at [`LFU_INIT_VAL`] (5). An access first decays the counter by one
//! for every `decay_time` elapsed since the last access (saturating at 0),
//! then increments it with probability `1 / ((counter - 5) * log_factor + 1)`
//! (certain up to 5, never past 255), and stamps the current minute. This is
//! `LFUDecrAndReturn` followed by `LFULogIncr` in Redis's `src/evict.c`, so
//! [`Lfu::counter`] (and `OBJECT FREQ` built on it) reports what Redis would.
//!
//! **Victim choice (ours).** Redis evicts the lowest decayed counter among
//! `maxmemory-samples` random keys merged into a 16-entry pool
//! (`evictionPoolPopulate`). Ordering by the decayed counter
//! `c - elapsed / decay_time` is the same as ordering by the static key
//! `last_access + decay_time * c`, so an exact minimum is cheap. But with a
//! one-minute decay it is too slow to forget: keys that were hot keep a high
//! counter for many minutes and dead keys squat, and on the shifting and
//! TTL workloads an exact minimum falls far below Redis's sampled one
//! (sampling sometimes evicts a formerly hot key by chance).
//!
//! So we order by `last_access + horizon * c`, with time counted in policy
//! accesses (inserts and hits) rather than minutes, and
//! `horizon = aging * len()`: an untouched entry loses one counter step of
//! priority every `aging` cache-sizes of traffic. The victim is the exact
//! minimum, least recently accessed first on ties. Counting accesses keeps
//! the order independent of how fast requests arrive (DESIGN.md §2), and
//! scaling by `len()` keeps it independent of the cache size. `aging` 0 is
//! exact LRU; a huge `aging` approaches exact LFU. The default 8 was chosen
//! on the WORKLOADS.md matrix, where it beats Redis's sampled LFU on every
//! pattern (see ferrum-bench's README).
//!
//! An entry whose expiry deadline has passed can only miss, so with
//! `expired_first` (the default) such entries are evicted before anything
//! else, earliest deadline first, as Redis's active expiry would have
//! reclaimed them.
//!
//! **Structure.** Two indexed binary min-heaps (`heap.rs`) over
//! [`EntryId`]s: one keyed by `(priority, last_access)`, one keyed by
//! deadline holding only entries that have one. Per slot, the counter and
//! its minute stamp.
//!
//! **Cost.** 32 bytes per slot for the priority heap and counter, plus 16
//! per slot once any entry has a deadline. Insert, hit, remove, evict and
//! deadline changes are O(log n).
//!
//! **Source.** Redis 7 `src/evict.c` (counter, decay) and
//! <http://antirez.com/news/109>. Ordering by last access plus a frequency
//! term is in the spirit of LRFU (Lee et al., IEEE Trans. Computers 2001)
//! and LFU with dynamic aging (Arlitt et al., HPL-98-173, 1999).

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::heap::IndexedHeap;
use crate::{EntryId, EvictionPolicy, Millis};

/// Initial counter of a new entry, as Redis's `LFU_INIT_VAL`, so that a new
/// key survives long enough to collect a few hits.
pub const LFU_INIT_VAL: u8 = 5;

const MINUTE: u64 = 60_000;

/// Configuration for [`Lfu`], mirroring Redis's `lfu-*` settings plus the
/// victim-choice knobs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LfuConfig {
    /// `lfu-log-factor`: how many hits it takes to raise the counter. With
    /// the default 10 the counter saturates at 255 after about a million
    /// hits. 0 makes every hit count.
    pub log_factor: u8,
    /// `lfu-decay-time`: the counter drops by one for every period of this
    /// length since the entry's last access. Redis counts it in whole
    /// minutes; a multiple of 60 000 ms behaves exactly like Redis. Zero
    /// disables decay. Default: one minute.
    pub decay_time: Millis,
    /// How many cache-sizes of accesses an untouched entry takes to lose one
    /// counter step of priority. 0 is exact LRU. Default: 8.
    pub aging: u32,
    /// Evict entries past their expiry deadline before anything else.
    /// Default: true.
    pub expired_first: bool,
    /// Seed of the generator behind the probabilistic increment.
    /// Default: 0.
    pub seed: u64,
}

impl Default for LfuConfig {
    fn default() -> Self {
        LfuConfig {
            log_factor: 10,
            decay_time: Millis(MINUTE),
            aging: 8,
            expired_first: true,
            seed: 0,
        }
    }
}

/// Redis's per-key LFU state.
#[derive(Clone, Copy, Debug, Default)]
struct Counter {
    /// Minute of the last access (Redis's "last decrement time").
    ldt_minutes: u32,
    value: u8,
}

/// Exact, aged LFU over Redis's logarithmic counter.
#[derive(Clone, Debug)]
pub struct Lfu {
    /// Keyed by `(last_access + horizon * counter, last_access)`.
    order: IndexedHeap<(u64, u64)>,
    /// Entries with an expiry deadline, keyed by it.
    deadlines: IndexedHeap<u64>,
    counters: Vec<Counter>,
    /// Accesses so far: the policy's own clock.
    ticks: u64,
    /// The cache size the priorities were computed with. Re-keyed when the
    /// size drifts by a quarter (see `rebalance`), so keys read while the
    /// cache was still filling are not aged as if it would stay small.
    horizon_len: usize,
    config: LfuConfig,
    rng: SmallRng,
}

impl Lfu {
    /// An empty policy.
    pub fn new(config: LfuConfig) -> Self {
        Lfu {
            order: IndexedHeap::default(),
            deadlines: IndexedHeap::default(),
            counters: Vec::new(),
            ticks: 0,
            horizon_len: 0,
            rng: SmallRng::seed_from_u64(config.seed),
            config,
        }
    }

    /// The decayed counter of a tracked entry at `now`, as Redis's
    /// `OBJECT FREQ` reports it, without touching the entry.
    pub fn counter(&self, id: EntryId, now: Millis) -> Option<u8> {
        self.order
            .contains(id)
            .then(|| self.decayed(self.counters[id.index()], now))
    }

    /// `LFUDecrAndReturn`: one step down per whole decay period elapsed
    /// since the last access, both ends truncated to minutes as Redis does.
    fn decayed(&self, counter: Counter, now: Millis) -> u8 {
        if self.config.decay_time.0 == 0 {
            return counter.value;
        }
        let elapsed_minutes = minutes(now).saturating_sub(counter.ldt_minutes);
        let periods = u64::from(elapsed_minutes) * MINUTE / self.config.decay_time.0;
        u8::try_from(u64::from(counter.value).saturating_sub(periods)).unwrap_or(0)
    }

    /// `LFULogIncr`: the higher the counter, the less likely a hit raises it.
    fn log_incr(&mut self, counter: u8) -> u8 {
        if counter == u8::MAX {
            return counter;
        }
        let base = f64::from(counter.saturating_sub(LFU_INIT_VAL));
        let p = 1.0 / (base * f64::from(self.config.log_factor) + 1.0);
        if self.rng.random::<f64>() < p {
            counter + 1
        } else {
            counter
        }
    }

    /// Records an access with counter `value` at `now` and re-keys the entry.
    fn touch(&mut self, id: EntryId, value: u8, now: Millis) {
        self.ticks += 1;
        self.counters[id.index()] = Counter {
            ldt_minutes: minutes(now),
            value,
        };
        let priority = self.priority(self.ticks, value);
        self.order.set(id, (priority, self.ticks));
    }

    fn priority(&self, tick: u64, value: u8) -> u64 {
        let horizon = u64::from(self.config.aging) * self.horizon_len.max(1) as u64;
        tick.saturating_add(horizon.saturating_mul(u64::from(value)))
    }

    /// Re-keys every entry when the cache size has drifted by more than a
    /// quarter from the size the priorities assume. A key's priority stands
    /// for "`aging` cache-sizes of traffic per counter step"; computing it
    /// with the size at the time of each access would let keys read while
    /// the cache was filling (when it held a handful of keys) be evicted
    /// long before keys with lower counters. O(n) per rebuild, and a
    /// rebuild needs the size to change by n/4, so O(1) amortised.
    fn rebalance(&mut self) {
        let len = self.order.len();
        let h = self.horizon_len;
        if len * 4 <= h * 5 && len * 5 >= h * 4 {
            return;
        }
        self.horizon_len = len;
        let horizon = u64::from(self.config.aging) * len.max(1) as u64;
        let counters = &self.counters;
        self.order.rekey_all(|id, (_, tick)| {
            let value = u64::from(counters[id.index()].value);
            (tick.saturating_add(horizon.saturating_mul(value)), tick)
        });
    }
}

fn minutes(now: Millis) -> u32 {
    u32::try_from(now.0 / MINUTE).unwrap_or(u32::MAX)
}

impl Default for Lfu {
    fn default() -> Self {
        Lfu::new(LfuConfig::default())
    }
}

impl EvictionPolicy for Lfu {
    fn name(&self) -> &'static str {
        "lfu"
    }

    fn on_insert(&mut self, id: EntryId, _key_hash: u64, _cost: u32, now: Millis) {
        debug_assert!(!self.order.contains(id), "{id:?} inserted twice");
        if self.counters.len() <= id.index() {
            self.counters.resize(id.index() + 1, Counter::default());
        }
        self.touch(id, LFU_INIT_VAL, now);
    }

    fn on_hit(&mut self, id: EntryId, now: Millis) {
        if !self.order.contains(id) {
            return;
        }
        let value = self.decayed(self.counters[id.index()], now);
        let value = self.log_incr(value);
        self.touch(id, value, now);
    }

    fn on_expiry_change(&mut self, id: EntryId, expires_at: Option<Millis>) {
        match expires_at {
            Some(deadline) if self.order.contains(id) => self.deadlines.set(id, deadline.0),
            _ => {
                self.deadlines.remove(id);
            }
        }
    }

    fn on_remove(&mut self, id: EntryId) {
        self.order.remove(id);
        self.deadlines.remove(id);
    }

    fn evict(&mut self, now: Millis) -> Option<EntryId> {
        let expired = match self.deadlines.peek() {
            // Redis's rule: a key is expired once `now > deadline`.
            Some((id, deadline)) if self.config.expired_first && now.0 > deadline => Some(id),
            _ => None,
        };
        self.rebalance();
        let victim = expired.or_else(|| self.order.peek().map(|(id, _)| id))?;
        self.on_remove(victim);
        Some(victim)
    }

    fn len(&self) -> usize {
        self.order.len()
    }

    fn heap_bytes(&self) -> usize {
        self.order.heap_bytes()
            + self.deadlines.heap_bytes()
            + self.counters.capacity() * std::mem::size_of::<Counter>()
    }

    fn lfu_counter(&self, id: EntryId, now: Millis) -> Option<u8> {
        self.counter(id, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tracked ids in eviction order, ignoring deadlines: lowest priority
    /// first, least recently accessed first within a priority.
    fn dump(lfu: &Lfu) -> Vec<u32> {
        lfu.order.ordered()
    }

    fn insert(lfu: &mut Lfu, id: u32, now: u64) {
        lfu.on_insert(EntryId(id), u64::from(id), 1, Millis(now));
    }

    /// Every hit counts and nothing decays, so orders are predictable.
    fn counting(aging: u32) -> Lfu {
        Lfu::new(LfuConfig {
            log_factor: 0,
            decay_time: Millis(0),
            aging,
            ..LfuConfig::default()
        })
    }

    #[test]
    fn orders_by_counter_then_recency() {
        let mut lfu = Lfu::default();
        // Priorities tick + 8 * max(len, 1) * 5: 41, 42, 83, 124.
        for i in 0..4 {
            insert(&mut lfu, i, 0);
        }
        assert_eq!(dump(&lfu), [0, 1, 2, 3]);
        // Up to LFU_INIT_VAL an access always increments: 5 -> 6, and the
        // priority becomes 5 + 32 * 6 = 197.
        lfu.on_hit(EntryId(1), Millis(1));
        assert_eq!(lfu.counter(EntryId(1), Millis(1)), Some(6));
        assert_eq!(dump(&lfu), [0, 2, 3, 1]);
        lfu.on_hit(EntryId(0), Millis(2));
        assert_eq!(dump(&lfu), [2, 3, 1, 0]);
        assert_eq!(lfu.evict(Millis(3)), Some(EntryId(2)));
        assert_eq!(dump(&lfu), [3, 1, 0]);
        lfu.on_remove(EntryId(1));
        assert_eq!(dump(&lfu), [3, 0]);
        assert_eq!(lfu.len(), 2);
        assert_eq!(lfu.evict(Millis(4)), Some(EntryId(3)));
        assert_eq!(lfu.evict(Millis(4)), Some(EntryId(0)));
        assert_eq!(lfu.evict(Millis(4)), None);
        assert!(lfu.is_empty());
    }

    #[test]
    fn aging_lets_recent_entries_overtake_stale_frequent_ones() {
        let mut lfu = counting(1);
        insert(&mut lfu, 0, 0); // tick 1, priority 1 + 5
        for t in 1..=3 {
            lfu.on_hit(EntryId(0), Millis(t)); // ticks 2..4, counter 6..8
        }
        assert_eq!(lfu.order.key(EntryId(0)), Some((12, 4)));
        insert(&mut lfu, 1, 4); // tick 5: 5 + 1 * 5 = 10
        assert_eq!(dump(&lfu), [1, 0]);
        // The horizon stays at the size it was computed for (1) until an
        // eviction finds the cache a quarter larger or smaller.
        lfu.on_hit(EntryId(1), Millis(5)); // tick 6: 6 + 1 * 6 = 12
        assert_eq!(dump(&lfu), [0, 1]);
        insert(&mut lfu, 2, 6); // tick 7: 7 + 1 * 5 = 12
        assert_eq!(dump(&lfu), [0, 1, 2]);
        // Evicting re-keys everyone for the real size, 3:
        // 0: 4 + 3 * 8 = 28, 1: 6 + 3 * 6 = 24, 2: 7 + 3 * 5 = 22.
        assert_eq!(lfu.evict(Millis(7)), Some(EntryId(2)));
        assert_eq!(dump(&lfu), [1, 0]);
    }

    #[test]
    fn keys_read_while_the_cache_filled_keep_their_credit() {
        let mut lfu = counting(8);
        insert(&mut lfu, 0, 0);
        for t in 1..=20 {
            lfu.on_hit(EntryId(0), Millis(t)); // counter 25 at cache size 1
        }
        for i in 1..100 {
            insert(&mut lfu, i, 21);
        }
        // Computed at size 1, key 0's priority is 21 + 8 * 25 = 221, below
        // any newcomer's once the size used reaches 6 (8 * 6 * 5 = 240).
        // Evicting re-keys everyone at size 100, where key 0 outranks them.
        for _ in 0..50 {
            assert_ne!(lfu.evict(Millis(22)), Some(EntryId(0)));
        }
        assert!(lfu.order.contains(EntryId(0)));
    }

    #[test]
    fn aging_zero_is_exact_lru() {
        let mut lfu = counting(0);
        for i in 0..3 {
            insert(&mut lfu, i, 0);
        }
        for _ in 0..10 {
            lfu.on_hit(EntryId(0), Millis(1));
        }
        lfu.on_hit(EntryId(1), Millis(2));
        assert_eq!(dump(&lfu), [2, 0, 1]);
    }

    #[test]
    fn huge_aging_is_frequency_first() {
        let mut lfu = counting(u32::MAX);
        for i in 0..3 {
            insert(&mut lfu, i, 0);
        }
        lfu.on_hit(EntryId(0), Millis(1));
        lfu.on_hit(EntryId(0), Millis(1));
        lfu.on_hit(EntryId(2), Millis(2));
        assert_eq!(dump(&lfu), [1, 2, 0]);
    }

    #[test]
    fn expired_entries_go_first() {
        let mut lfu = counting(8);
        insert(&mut lfu, 0, 0);
        insert(&mut lfu, 1, 0);
        lfu.on_hit(EntryId(1), Millis(1));
        lfu.on_expiry_change(EntryId(1), Some(Millis(100)));
        assert_eq!(dump(&lfu), [0, 1]);
        // At the deadline the entry is still live (Redis: `now > deadline`).
        assert_eq!(lfu.evict(Millis(100)), Some(EntryId(0)));
        insert(&mut lfu, 0, 100);
        assert_eq!(lfu.evict(Millis(101)), Some(EntryId(1)));
        assert_eq!(lfu.evict(Millis(101)), Some(EntryId(0)));
        assert_eq!(lfu.evict(Millis(101)), None);

        let mut lfu = Lfu::new(LfuConfig {
            expired_first: false,
            ..LfuConfig::default()
        });
        insert(&mut lfu, 0, 0);
        insert(&mut lfu, 1, 0);
        lfu.on_hit(EntryId(1), Millis(1));
        lfu.on_expiry_change(EntryId(1), Some(Millis(100)));
        assert_eq!(lfu.evict(Millis(101)), Some(EntryId(0)));
    }

    #[test]
    fn persist_and_removal_forget_the_deadline() {
        let mut lfu = counting(8);
        insert(&mut lfu, 0, 0);
        insert(&mut lfu, 1, 0);
        lfu.on_hit(EntryId(1), Millis(0));
        lfu.on_expiry_change(EntryId(1), Some(Millis(10)));
        lfu.on_expiry_change(EntryId(1), None);
        assert_eq!(lfu.evict(Millis(50)), Some(EntryId(0)));
        lfu.on_expiry_change(EntryId(1), Some(Millis(10)));
        lfu.on_remove(EntryId(1));
        assert_eq!(lfu.deadlines.len(), 0);
        // A deadline for an untracked id is ignored.
        lfu.on_expiry_change(EntryId(7), Some(Millis(10)));
        assert_eq!(lfu.deadlines.len(), 0);
    }

    #[test]
    fn counter_decays_one_step_per_period() {
        let mut lfu = Lfu::default();
        insert(&mut lfu, 7, 0);
        assert_eq!(lfu.counter(EntryId(7), Millis(59_999)), Some(5));
        assert_eq!(lfu.counter(EntryId(7), Millis(60_000)), Some(4));
        assert_eq!(lfu.counter(EntryId(7), Millis(3 * 60_000)), Some(2));
        assert_eq!(lfu.counter(EntryId(7), Millis(60 * 60_000)), Some(0));
        // Access at minute 3: decay to 2, then a certain increment to 3.
        lfu.on_hit(EntryId(7), Millis(3 * 60_000 + 5));
        assert_eq!(lfu.counter(EntryId(7), Millis(3 * 60_000 + 5)), Some(3));
        assert_eq!(lfu.counter(EntryId(8), Millis(0)), None);
    }

    #[test]
    fn decay_time_zero_never_decays() {
        let mut lfu = counting(8);
        insert(&mut lfu, 0, 0);
        assert_eq!(lfu.counter(EntryId(0), Millis(u64::MAX)), Some(5));
    }

    #[test]
    fn log_factor_slows_the_counter() {
        let mut lfu = Lfu::new(LfuConfig {
            seed: 7,
            ..LfuConfig::default()
        });
        insert(&mut lfu, 0, 0);
        for _ in 0..1_000 {
            lfu.on_hit(EntryId(0), Millis(0));
        }
        // Expected hits to climb from 5 to c are about 5 * (c - 5)^2, so a
        // thousand hits land near 19; never near 255 and never below 15.
        let c = lfu.counter(EntryId(0), Millis(0)).unwrap_or(0);
        assert!((15..=25).contains(&c), "counter {c}");
    }

    #[test]
    fn counter_saturates() {
        let mut lfu = counting(8);
        insert(&mut lfu, 3, 0);
        for t in 0..300 {
            lfu.on_hit(EntryId(3), Millis(t));
        }
        assert_eq!(lfu.counter(EntryId(3), Millis(300)), Some(255));
        insert(&mut lfu, 4, 300);
        assert_eq!(dump(&lfu), [4, 3]);
    }
}
