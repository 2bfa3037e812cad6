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
//! [`EntryId`]s: one keyed by the priority as a `u32`, one keyed by
//! deadline (a 32-bit code, `heap::DeadlineCodec`) holding only entries
//! that have one. Per slot, the counter (8 bits, which also breaks ties:
//! of two equal priorities the higher counter was accessed longer ago and
//! goes first, so the order is exactly that of `(priority, last access)`)
//! and its minute stamp (16 bits, modulo 2^16 as in Redis).
//!
//! A priority is `last_access - base + horizon * counter` in accesses,
//! which fits 32 bits: nothing else per entry is needed, since rebuilding
//! for a new horizon recovers `last_access` from the key and the counter.
//! Once the clock is 2^31 accesses past `base`, `base` moves up by 2^30
//! and every key drops by as much (O(n), once per billion accesses); an
//! entry already that far behind every newcomer is pinned at 0, first in
//! line. Above 8.4 million accesses per counter step (a million entries
//! at the default `aging`), priorities count in units of 2^k accesses so
//! the counter term still fits.
//!
//! **Cost.** 15 bytes per slot: an 8-byte heap record (priority, id) per
//! tracked entry, and per slot a `u32` heap position, the counter and the
//! minute stamp; plus 12 per slot once any entry has a deadline (an 8-byte
//! record per entry with one, a `u32` position per slot). Every table
//! grows by an eighth (`table.rs`). Insert, hit, remove, evict and
//! deadline changes are O(log n).
//!
//! **Source.** Redis 7 `src/evict.c` (counter, decay) and
//! <http://antirez.com/news/109>. Ordering by last access plus a frequency
//! term is in the spirit of LRFU (Lee et al., IEEE Trans. Computers 2001)
//! and LFU with dynamic aging (Arlitt et al., HPL-98-173, 1999).

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::heap::{Deadlines, HeapOrder, IndexedHeap, Rec};
use crate::table::grow_for;
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

/// Per slot, the counter as of the last access (Redis's 8 bits). It also
/// breaks ties between equal priorities: of two entries with
/// `t1 + h * c1 == t2 + h * c2`, the higher counter was accessed longer
/// ago, and least recently accessed goes first.
#[derive(Clone, Debug, Default)]
struct Counters {
    values: Vec<u8>,
}

impl HeapOrder<u32> for Counters {
    #[inline]
    fn less(&self, a: &Rec<u32>, b: &Rec<u32>) -> bool {
        a.key < b.key || (a.key == b.key && self.values[a.id as usize] > self.values[b.id as usize])
    }
}

/// Keys of the priority heap stay below this many units, so a key plus
/// the largest frequency term fits in 32 bits.
const PRIORITY_RANGE: u64 = 1 << 31;

/// Exact, aged LFU over Redis's logarithmic counter.
#[derive(Clone, Debug)]
pub struct Lfu {
    /// Keyed by the priority `last_access + horizon * counter`, in units
    /// of `2^shift` accesses relative to `base` (see `Lfu::priority`);
    /// its order keeps each slot's counter.
    order: IndexedHeap<u32, Counters>,
    /// Entries with an expiry deadline, keyed by it.
    deadlines: Deadlines,
    /// Per slot: the minute of the last access, modulo 2^16 (Redis's
    /// 16-bit "last decrement time").
    ldt: Vec<u16>,
    /// Accesses so far: the policy's own clock.
    ticks: u64,
    /// The access that priority 0 stands for; entries whose priority fell
    /// below it are pinned at 0, ahead of everything else.
    base: u64,
    /// Priorities count accesses in units of `2^shift`: 0 unless
    /// `horizon * 255` alone would not fit in [`PRIORITY_RANGE`].
    shift: u32,
    /// `aging * horizon_len`: the accesses one counter step is worth.
    horizon: u64,
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
        let horizon = u64::from(config.aging);
        Lfu {
            order: IndexedHeap::default(),
            deadlines: Deadlines::default(),
            ldt: Vec::new(),
            ticks: 0,
            base: 0,
            shift: shift_for(horizon),
            horizon,
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
            .then(|| self.decayed(id.index(), now))
    }

    /// `LFUDecrAndReturn`: one step down per whole decay period elapsed
    /// since the last access, both ends truncated to minutes and the
    /// elapsed minutes taken modulo 2^16, as Redis does.
    fn decayed(&self, i: usize, now: Millis) -> u8 {
        let value = self.order.order().values[i];
        if self.config.decay_time.0 == 0 {
            return value;
        }
        let elapsed_minutes = minutes(now).wrapping_sub(self.ldt[i]);
        let periods = u64::from(elapsed_minutes) * MINUTE / self.config.decay_time.0;
        u8::try_from(u64::from(value).saturating_sub(periods)).unwrap_or(0)
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
        if (self.ticks - self.base) >> self.shift >= PRIORITY_RANGE {
            self.rekey(self.horizon, self.shift);
        }
        self.order.order_mut().values[id.index()] = value;
        self.ldt[id.index()] = minutes(now);
        let priority = self.priority(self.ticks, value);
        self.order.set(id, priority);
    }

    /// Each tracked entry's last access in the policy's clock, relative to
    /// `base` (negative when the frequency term alone kept it above the
    /// base), recovered from its priority.
    fn last_accesses(&self) -> Vec<(i128, EntryId)> {
        let values = &self.order.order().values;
        (self.order.members())
            .map(|(id, key)| {
                let value = i128::from(values[id.index()]);
                let tick = (i128::from(key) << self.shift) - i128::from(self.horizon) * value;
                (tick, id)
            })
            .collect()
    }

    /// Records an access to `id` now, in the policy's clock only: the
    /// counter and its minute stamp stay as they are.
    fn retick(&mut self, id: EntryId) {
        self.ticks += 1;
        if (self.ticks - self.base) >> self.shift >= PRIORITY_RANGE {
            self.rekey(self.horizon, self.shift);
        }
        let priority = self.priority(self.ticks, self.order.order().values[id.index()]);
        self.order.set(id, priority);
    }

    /// `(tick - base + horizon * value) >> shift`. Below `2^32`: the tick
    /// term is below [`PRIORITY_RANGE`] units (`touch` rebases before it
    /// gets there) and so is the frequency term (`shift_for`).
    fn priority(&self, tick: u64, value: u8) -> u32 {
        let p = (tick - self.base + self.horizon * u64::from(value)) >> self.shift;
        u32::try_from(p).unwrap_or(u32::MAX)
    }

    /// Re-keys every entry for `horizon` and `shift`, and moves `base` up if
    /// the clock is too far past it for the new units. Each entry's last
    /// access is recovered from its key (`key << shift - horizon * value`),
    /// so nothing else is stored per entry. Entries whose priority falls
    /// below the new base are pinned at 0: they were far behind any
    /// newcomer (`2^30` units of accesses) and stay first in line, only
    /// their order among themselves is lost. O(n).
    fn rekey(&mut self, horizon: u64, shift: u32) {
        let (old_base, old_h, old_s) = (self.base, self.horizon, self.shift);
        if (self.ticks - self.base) >> shift >= PRIORITY_RANGE / 2 {
            self.base = self.ticks - ((PRIORITY_RANGE / 2) << shift);
        }
        let moved = i128::from(self.base - old_base);
        self.order.rekey_all(|counters, id, key| {
            if key == 0 {
                return 0;
            }
            let value = i128::from(counters.values[id.index()]);
            // The last access, relative to the new base; may be negative
            // when the frequency term kept the priority above the base.
            let tick = (i128::from(key) << old_s) - i128::from(old_h) * value - moved;
            let p = (tick + i128::from(horizon) * value) >> shift;
            u32::try_from(p.max(0)).unwrap_or(u32::MAX)
        });
        self.horizon = horizon;
        self.shift = shift;
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
        let horizon = u64::from(self.config.aging).saturating_mul(len.max(1) as u64);
        self.rekey(horizon, shift_for(horizon));
    }
}

/// The smallest shift that keeps `horizon * 255`, the largest frequency
/// term, below [`PRIORITY_RANGE`] units: 0 up to a horizon of 8.4 million
/// accesses (a million entries at the default `aging`).
fn shift_for(horizon: u64) -> u32 {
    let top = u128::from(horizon) * u128::from(u8::MAX);
    let mut shift = 0;
    while top >> shift >= u128::from(PRIORITY_RANGE) {
        shift += 1;
    }
    shift
}

/// Redis's `LFUGetTimeInMinutes`: minutes modulo 2^16.
fn minutes(now: Millis) -> u16 {
    (now.0 / MINUTE) as u16
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
        grow_for(&mut self.order.order_mut().values, id.index(), 0);
        grow_for(&mut self.ldt, id.index(), 0);
        self.deadlines.observe(now);
        self.touch(id, LFU_INIT_VAL, now);
    }

    fn on_hit(&mut self, id: EntryId, _key_hash: u64, now: Millis) {
        if !self.order.contains(id) {
            return;
        }
        let value = self.decayed(id.index(), now);
        let value = self.log_incr(value);
        self.touch(id, value, now);
    }

    fn on_expiry_change(&mut self, id: EntryId, expires_at: Option<Millis>) {
        match expires_at {
            Some(deadline) if self.order.contains(id) => self.deadlines.set(id, deadline),
            _ => self.deadlines.remove(id),
        }
    }

    fn on_remove(&mut self, id: EntryId) {
        self.order.remove(id);
        self.deadlines.remove(id);
    }

    fn evict(&mut self, now: Millis, _key_hash: &dyn Fn(EntryId) -> u64) -> Option<EntryId> {
        self.deadlines.observe(now);
        let expired = if self.config.expired_first {
            self.deadlines.expired(now)
        } else {
            None
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
            + self.order.order().values.capacity()
            + self.ldt.capacity() * std::mem::size_of::<u16>()
    }

    fn lfu_counter(&self, id: EntryId, now: Millis) -> Option<u8> {
        self.counter(id, now)
    }

    /// Redis stamps the counter with the current minute, so it decays from
    /// `now`; here the entry is also re-keyed as of an access at `now`.
    fn set_lfu_counter(&mut self, id: EntryId, counter: u8, now: Millis) {
        if self.order.contains(id) {
            self.touch(id, counter, now);
        }
    }

    /// Least recently accessed first, each placed at its last access in
    /// accesses since the oldest's (recovered from its priority, as
    /// `rekey` does): the spacing matters, since a counter step is worth
    /// `horizon` accesses. A sort of the heap's records, no keys.
    fn export_order(&self) -> Option<Vec<(EntryId, u32)>> {
        let mut by_access = self.last_accesses();
        by_access.sort_unstable_by_key(|&(tick, id)| (tick, id.0));
        let oldest = by_access.first().map_or(0, |&(tick, _)| tick);
        let place = |tick: i128| u32::try_from(tick - oldest).unwrap_or(u32::MAX - 1);
        Some(
            by_access
                .into_iter()
                .map(|(t, id)| (id, place(t)))
                .collect(),
        )
    }

    /// Gives the entries `order` names their last accesses back, spaced as
    /// placed, as the least recently accessed; then accesses the others
    /// again, in their order. Counters stay as they are.
    fn import_order(&mut self, order: &[(EntryId, u32)]) {
        let (named, placed) =
            crate::first_tracked(order, self.ldt.len(), |id| self.order.contains(id));
        let mut rest = self.last_accesses();
        rest.retain(|(_, id)| !placed[id.index()]);
        rest.sort_unstable_by_key(|&(tick, id)| (tick, id.0));
        // Places count from the oldest; at most half the priority range
        // (2^30 units) is kept, far beyond any cache's horizon.
        let limit = (PRIORITY_RANGE / 2) << self.shift;
        let span = named
            .iter()
            .map(|&(_, p)| u64::from(p))
            .max()
            .unwrap_or(0)
            .min(limit);
        self.ticks += span + 1;
        if (self.ticks - self.base) >> self.shift >= PRIORITY_RANGE {
            self.rekey(self.horizon, self.shift);
        }
        let first = self.ticks - span;
        for (id, place) in named {
            let tick = first + u64::from(place).min(span);
            let priority = self.priority(tick, self.order.order().values[id.index()]);
            self.order.set(id, priority);
        }
        for (_, id) in rest {
            self.retick(id);
        }
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
        lfu.on_hit(EntryId(1), 1, Millis(1));
        assert_eq!(lfu.counter(EntryId(1), Millis(1)), Some(6));
        assert_eq!(dump(&lfu), [0, 2, 3, 1]);
        lfu.on_hit(EntryId(0), 0, Millis(2));
        assert_eq!(dump(&lfu), [2, 3, 1, 0]);
        assert_eq!(
            lfu.evict(Millis(3), &|id| u64::from(id.0)),
            Some(EntryId(2))
        );
        assert_eq!(dump(&lfu), [3, 1, 0]);
        lfu.on_remove(EntryId(1));
        assert_eq!(dump(&lfu), [3, 0]);
        assert_eq!(lfu.len(), 2);
        assert_eq!(
            lfu.evict(Millis(4), &|id| u64::from(id.0)),
            Some(EntryId(3))
        );
        assert_eq!(
            lfu.evict(Millis(4), &|id| u64::from(id.0)),
            Some(EntryId(0))
        );
        assert_eq!(lfu.evict(Millis(4), &|id| u64::from(id.0)), None);
        assert!(lfu.is_empty());
    }

    #[test]
    fn aging_lets_recent_entries_overtake_stale_frequent_ones() {
        let mut lfu = counting(1);
        insert(&mut lfu, 0, 0); // tick 1, priority 1 + 5
        for t in 1..=3 {
            lfu.on_hit(EntryId(0), 0, Millis(t)); // ticks 2..4, counter 6..8
        }
        assert_eq!(lfu.order.key(EntryId(0)), Some(12));
        insert(&mut lfu, 1, 4); // tick 5: 5 + 1 * 5 = 10
        assert_eq!(dump(&lfu), [1, 0]);
        // The horizon stays at the size it was computed for (1) until an
        // eviction finds the cache a quarter larger or smaller.
        lfu.on_hit(EntryId(1), 1, Millis(5)); // tick 6: 6 + 1 * 6 = 12
        assert_eq!(dump(&lfu), [0, 1]);
        insert(&mut lfu, 2, 6); // tick 7: 7 + 1 * 5 = 12
        assert_eq!(dump(&lfu), [0, 1, 2]);
        // Evicting re-keys everyone for the real size, 3:
        // 0: 4 + 3 * 8 = 28, 1: 6 + 3 * 6 = 24, 2: 7 + 3 * 5 = 22.
        assert_eq!(
            lfu.evict(Millis(7), &|id| u64::from(id.0)),
            Some(EntryId(2))
        );
        assert_eq!(dump(&lfu), [1, 0]);
    }

    #[test]
    fn an_exported_order_comes_back_spaced_as_it_was() {
        let mut lfu = counting(8);
        for i in 0..8 {
            insert(&mut lfu, i, 0);
        }
        // Hits with gaps between them, long enough for recency to beat a
        // counter step (8 accesses) for some pairs and not for others.
        for (i, gap) in [(3, 0), (5, 3), (3, 12), (1, 0), (6, 20), (0, 2)] {
            for _ in 0..gap {
                insert(&mut lfu, 100, 0);
                lfu.on_remove(EntryId(100));
            }
            lfu.on_hit(EntryId(i), 0, Millis(0));
        }
        lfu.on_remove(EntryId(7));
        let order = lfu.export_order().expect("LFU has an order");
        let places: Vec<u32> = order.iter().map(|&(_, p)| p).collect();
        assert!(places.windows(2).all(|w| w[0] <= w[1]), "{places:?}");
        // A load: the entries come back in another order with their
        // counters, then the order; ids untracked or named twice ignored.
        let mut again = counting(8);
        for &(id, _) in order.iter().rev() {
            insert(&mut again, id.0, 1);
            let counter = lfu.counter(id, Millis(0)).expect("tracked");
            again.set_lfu_counter(id, counter, Millis(1));
        }
        let mut named = order.clone();
        named.extend([(EntryId(0), 0), (EntryId(7), 0), (EntryId(99), 0)]);
        again.import_order(&named);
        assert_eq!(dump(&again), dump(&lfu));
        // Placed by index alone, the spacing is lost and so is the order.
        let mut squeezed = again.clone();
        let by_index: Vec<(EntryId, u32)> =
            order.iter().zip(0..).map(|(&(id, _), i)| (id, i)).collect();
        squeezed.import_order(&by_index);
        assert_ne!(dump(&squeezed), dump(&lfu));
    }

    #[test]
    fn keys_read_while_the_cache_filled_keep_their_credit() {
        let mut lfu = counting(8);
        insert(&mut lfu, 0, 0);
        for t in 1..=20 {
            lfu.on_hit(EntryId(0), 0, Millis(t)); // counter 25 at cache size 1
        }
        for i in 1..100 {
            insert(&mut lfu, i, 21);
        }
        // Computed at size 1, key 0's priority is 21 + 8 * 25 = 221, below
        // any newcomer's once the size used reaches 6 (8 * 6 * 5 = 240).
        // Evicting re-keys everyone at size 100, where key 0 outranks them.
        for _ in 0..50 {
            assert_ne!(
                lfu.evict(Millis(22), &|id| u64::from(id.0)),
                Some(EntryId(0))
            );
        }
        assert!(lfu.order.contains(EntryId(0)));
    }

    #[test]
    fn the_priority_base_moves_before_keys_overflow() {
        let mut lfu = counting(8);
        for i in 0..3 {
            insert(&mut lfu, i, 0);
        }
        lfu.on_hit(EntryId(1), 1, Millis(0));
        // Two billion accesses later (skipped): the next touch moves the
        // base up by 2^30, and 0..=2, whose priorities are that far behind
        // any newcomer's, are pinned at 0, still first in line.
        lfu.ticks = lfu.base + PRIORITY_RANGE - 1;
        insert(&mut lfu, 3, 1);
        assert_eq!(lfu.base, PRIORITY_RANGE / 2);
        for i in 0..3 {
            assert_eq!(lfu.order.key(EntryId(i)), Some(0), "{i}");
        }
        // 3's priority: 2^30 accesses past the base plus 8 * 5.
        assert_eq!(lfu.order.key(EntryId(3)), Some((1 << 30) + 40));
        insert(&mut lfu, 4, 1);
        lfu.on_hit(EntryId(3), 3, Millis(1));
        lfu.on_hit(EntryId(3), 3, Millis(1));
        // Pinned entries tie on 0; the higher counter (1's) goes first.
        let order = dump(&lfu);
        assert_eq!(order[0], 1);
        assert_eq!(&order[3..], [4, 3]);
        // A rebuild for the real size (5, horizon 40) keeps the pinned at 0
        // and the others exact, relative to a base kept 2^30 behind the
        // clock: 4 was last read two accesses ago with counter 5, 3 just
        // now with counter 7.
        assert_eq!(
            lfu.evict(Millis(2), &|id| u64::from(id.0)),
            Some(EntryId(1))
        );
        assert_eq!(lfu.base, lfu.ticks - (1 << 30));
        let key = |i| lfu.order.key(EntryId(i)).map_or(0, u64::from);
        assert_eq!(key(4), (1 << 30) - 2 + 40 * 5);
        assert_eq!(key(3), (1 << 30) + 40 * 7);
        assert_eq!(key(0), 0);
    }

    #[test]
    fn huge_horizons_count_in_coarser_units() {
        assert_eq!(shift_for(8 * 1_000_000), 0);
        assert_eq!(shift_for(8 * 2_000_000), 1);
        let huge = u64::from(u32::MAX) * 4_000_000;
        let s = shift_for(huge);
        assert!((u128::from(huge) * 255) >> s < u128::from(PRIORITY_RANGE));
        assert!((u128::from(huge) * 255) >> (s - 1) >= u128::from(PRIORITY_RANGE));
    }

    #[test]
    fn aging_zero_is_exact_lru() {
        let mut lfu = counting(0);
        for i in 0..3 {
            insert(&mut lfu, i, 0);
        }
        for _ in 0..10 {
            lfu.on_hit(EntryId(0), 0, Millis(1));
        }
        lfu.on_hit(EntryId(1), 1, Millis(2));
        assert_eq!(dump(&lfu), [2, 0, 1]);
    }

    #[test]
    fn huge_aging_is_frequency_first() {
        let mut lfu = counting(u32::MAX);
        for i in 0..3 {
            insert(&mut lfu, i, 0);
        }
        lfu.on_hit(EntryId(0), 0, Millis(1));
        lfu.on_hit(EntryId(0), 0, Millis(1));
        lfu.on_hit(EntryId(2), 2, Millis(2));
        assert_eq!(dump(&lfu), [1, 2, 0]);
    }

    #[test]
    fn expired_entries_go_first() {
        let mut lfu = counting(8);
        insert(&mut lfu, 0, 0);
        insert(&mut lfu, 1, 0);
        lfu.on_hit(EntryId(1), 1, Millis(1));
        lfu.on_expiry_change(EntryId(1), Some(Millis(100)));
        assert_eq!(dump(&lfu), [0, 1]);
        // At the deadline the entry is still live (Redis: `now > deadline`).
        assert_eq!(
            lfu.evict(Millis(100), &|id| u64::from(id.0)),
            Some(EntryId(0))
        );
        insert(&mut lfu, 0, 100);
        assert_eq!(
            lfu.evict(Millis(101), &|id| u64::from(id.0)),
            Some(EntryId(1))
        );
        assert_eq!(
            lfu.evict(Millis(101), &|id| u64::from(id.0)),
            Some(EntryId(0))
        );
        assert_eq!(lfu.evict(Millis(101), &|id| u64::from(id.0)), None);

        let mut lfu = Lfu::new(LfuConfig {
            expired_first: false,
            ..LfuConfig::default()
        });
        insert(&mut lfu, 0, 0);
        insert(&mut lfu, 1, 0);
        lfu.on_hit(EntryId(1), 1, Millis(1));
        lfu.on_expiry_change(EntryId(1), Some(Millis(100)));
        assert_eq!(
            lfu.evict(Millis(101), &|id| u64::from(id.0)),
            Some(EntryId(0))
        );
    }

    #[test]
    fn persist_and_removal_forget_the_deadline() {
        let mut lfu = counting(8);
        insert(&mut lfu, 0, 0);
        insert(&mut lfu, 1, 0);
        lfu.on_hit(EntryId(1), 1, Millis(0));
        lfu.on_expiry_change(EntryId(1), Some(Millis(10)));
        lfu.on_expiry_change(EntryId(1), None);
        assert_eq!(
            lfu.evict(Millis(50), &|id| u64::from(id.0)),
            Some(EntryId(0))
        );
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
        lfu.on_hit(EntryId(7), 7, Millis(3 * 60_000 + 5));
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
            lfu.on_hit(EntryId(0), 0, Millis(0));
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
            lfu.on_hit(EntryId(3), 3, Millis(t));
        }
        assert_eq!(lfu.counter(EntryId(3), Millis(300)), Some(255));
        insert(&mut lfu, 4, 300);
        assert_eq!(dump(&lfu), [4, 3]);
    }
}
