//! Least-frequently-used eviction with Redis 7's counter and an exact,
//! aged victim choice.
//!
//! **Counter (Redis semantics).** Each entry keeps Redis's 8-bit logarithmic
//! Morris counter and its "last decrement time" in minutes. A new entry
//! starts at [`LFU_INIT_VAL`] (5). An access first decays the counter by one
//! for every `decay_time` elapsed since the last access (saturating at 0),
//! then increments it with probability `1 / ((counter - 5) * log_factor + 1)`
//! (certain below 5, never past 255), and stamps the current minute. This is
//! `LFUDecrAndReturn` followed by `LFULogIncr` in Redis's `src/evict.c`, so
//! [`Lfu::counter`] (and `OBJECT FREQ` built on it) reports what Redis would.
//!
//! **Victim choice (ours).** Redis evicts the lowest decayed counter among
//! `maxmemory-samples` random keys merged into a 16-entry pool
//! (`evictionPoolPopulate`). An *exact* minimum of the counter beats that on
//! a stable Zipf workload but collapses when popularity moves: keys that were
//! hot keep a high counter for many minutes (decay is one step per minute),
//! and dead keys (expired but never read again) squat in the cache. Sampling
//! hides this because it sometimes evicts a formerly hot key by chance.
//!
//! We keep the exact minimum but order entries by *priority* =
//! `age + counter`, fixed when the entry is inserted or hit, where `age` is
//! the priority of the last victim. This is LFU with Dynamic Aging (Arlitt,
//! Cherkasova, Dilley, Friedrich and Jin, "Evaluating content management
//! techniques for Web proxy caches", HP Labs HPL-98-173, 1999), with Redis's
//! log counter as the frequency. Entries that stop being accessed fall
//! behind newcomers once the cache has aged past their counter, so a stale
//! hot set drains in a few cache turnovers, while live hot keys refresh their
//! priority on every hit. Ties go to the least recently accessed entry. Age
//! advances with evictions, not with the clock, so the order does not depend
//! on how fast requests arrive (DESIGN.md §2); only Redis's decay does.
//!
//! **Structure.** Because every tracked priority lies in `age..=age + 255`,
//! the priorities map onto a ring of 256 buckets. Each bucket is an
//! intrusive doubly linked list (most recent first) threaded through a `Vec`
//! indexed by [`EntryId`], and a 256-bit occupancy mask finds the lowest
//! non-empty bucket with at most four `trailing_zeros`.
//!
//! **Cost.** 16 bytes per slot (two `u32` links, the minute stamp, the
//! counter and the bucket), plus 2 KiB of fixed bucket heads. Insert, hit,
//! remove and evict are O(1).
//!
//! **Source.** Redis 7 `src/evict.c` (LFU counter and decay) and
//! <http://antirez.com/news/109>; LFU-DA as cited above.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::{EntryId, EvictionPolicy, Millis};

/// Initial counter of a new entry, as Redis's `LFU_INIT_VAL`, so that a new
/// key survives long enough to collect a few hits.
pub const LFU_INIT_VAL: u8 = 5;

/// Marks "no neighbour" and "not tracked".
const NIL: u32 = u32::MAX;
/// Number of priority buckets: one per possible counter value.
const RING: usize = 256;
const MINUTE: u64 = 60_000;

/// Configuration for [`Lfu`], mirroring Redis's `lfu-*` settings.
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
    /// Seed of the generator behind the probabilistic increment.
    /// Default: 0.
    pub seed: u64,
}

impl Default for LfuConfig {
    fn default() -> Self {
        LfuConfig {
            log_factor: 10,
            decay_time: Millis(MINUTE),
            seed: 0,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Node {
    prev: u32,
    next: u32,
    /// Minute of the last access (Redis's "last decrement time").
    ldt_minutes: u32,
    counter: u8,
    /// Ring index of the bucket holding the entry.
    bucket: u8,
    tracked: bool,
}

const UNTRACKED: Node = Node {
    prev: NIL,
    next: NIL,
    ldt_minutes: 0,
    counter: 0,
    bucket: 0,
    tracked: false,
};

/// Exact LFU with dynamic aging over Redis's logarithmic counter.
#[derive(Clone, Debug)]
pub struct Lfu {
    nodes: Vec<Node>,
    // Boxed so that `AnyPolicy` stays small whichever policy it holds.
    heads: Box<[u32; RING]>,
    tails: Box<[u32; RING]>,
    occupied: [u64; RING / 64],
    /// Priority of the last victim; every tracked priority is in
    /// `age..=age + 255`.
    age: u64,
    len: usize,
    log_factor: f64,
    decay_time: Millis,
    rng: SmallRng,
}

impl Lfu {
    /// An empty policy.
    pub fn new(config: LfuConfig) -> Self {
        Lfu {
            nodes: Vec::new(),
            heads: Box::new([NIL; RING]),
            tails: Box::new([NIL; RING]),
            occupied: [0; RING / 64],
            age: 0,
            len: 0,
            log_factor: f64::from(config.log_factor),
            decay_time: config.decay_time,
            rng: SmallRng::seed_from_u64(config.seed),
        }
    }

    /// The decayed counter of a tracked entry at `now`, as Redis's
    /// `OBJECT FREQ` reports it, without touching the entry.
    pub fn counter(&self, id: EntryId, now: Millis) -> Option<u8> {
        self.node(id).map(|n| self.decayed(n, now))
    }

    fn node(&self, id: EntryId) -> Option<&Node> {
        self.nodes.get(id.index()).filter(|n| n.tracked)
    }

    /// `LFUDecrAndReturn`: one step down per whole decay period elapsed
    /// since the last access, both ends truncated to minutes as Redis does.
    fn decayed(&self, node: &Node, now: Millis) -> u8 {
        if self.decay_time.0 == 0 {
            return node.counter;
        }
        let elapsed_minutes = minutes(now).saturating_sub(node.ldt_minutes);
        let periods = u64::from(elapsed_minutes) * MINUTE / self.decay_time.0;
        u8::try_from(u64::from(node.counter).saturating_sub(periods)).unwrap_or(0)
    }

    /// `LFULogIncr`: the higher the counter, the less likely a hit raises it.
    fn log_incr(&mut self, counter: u8) -> u8 {
        if counter == u8::MAX {
            return counter;
        }
        let base = f64::from(counter.saturating_sub(LFU_INIT_VAL));
        let p = 1.0 / (base * self.log_factor + 1.0);
        if self.rng.random::<f64>() < p {
            counter + 1
        } else {
            counter
        }
    }

    /// Ring index of priority `age + counter`.
    fn bucket_of(&self, counter: u8) -> u8 {
        (self.age.wrapping_add(u64::from(counter)) % RING as u64) as u8
    }

    fn push_front(&mut self, i: u32, bucket: u8) {
        let b = usize::from(bucket);
        let node = &mut self.nodes[i as usize];
        node.prev = NIL;
        node.next = self.heads[b];
        node.bucket = bucket;
        node.tracked = true;
        match self.heads[b] {
            NIL => {
                self.tails[b] = i;
                self.occupied[b / 64] |= 1 << (b % 64);
            }
            h => self.nodes[h as usize].prev = i,
        }
        self.heads[b] = i;
    }

    fn unlink(&mut self, i: u32) {
        let Node {
            prev, next, bucket, ..
        } = self.nodes[i as usize];
        let b = usize::from(bucket);
        match prev {
            NIL => self.heads[b] = next,
            p => self.nodes[p as usize].next = next,
        }
        match next {
            NIL => self.tails[b] = prev,
            n => self.nodes[n as usize].prev = prev,
        }
        if self.heads[b] == NIL {
            self.occupied[b / 64] &= !(1 << (b % 64));
        }
    }

    /// The lowest non-empty bucket, scanning the ring upwards from `age`,
    /// and its distance from `age`.
    fn lowest_bucket(&self) -> Option<(usize, u64)> {
        let start = (self.age % RING as u64) as usize;
        // Rotate the mask so that bit 0 is the bucket of priority `age`.
        for step in 0..=RING / 64 {
            let word_index = (start / 64 + step) % (RING / 64);
            let mut word = self.occupied[word_index];
            if step == 0 {
                word &= u64::MAX << (start % 64);
            } else if step == RING / 64 {
                // Wrapped back to the first word: only the bits below start.
                word &= !(u64::MAX << (start % 64));
            }
            if word != 0 {
                let b = word_index * 64 + word.trailing_zeros() as usize;
                let distance = (b + RING - start) % RING;
                return Some((b, distance as u64));
            }
        }
        None
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
        debug_assert!(self.node(id).is_none(), "{id:?} inserted twice");
        if self.nodes.len() <= id.index() {
            self.nodes.resize(id.index() + 1, UNTRACKED);
        }
        let node = &mut self.nodes[id.index()];
        node.counter = LFU_INIT_VAL;
        node.ldt_minutes = minutes(now);
        let bucket = self.bucket_of(LFU_INIT_VAL);
        self.push_front(id.0, bucket);
        self.len += 1;
    }

    fn on_hit(&mut self, id: EntryId, now: Millis) {
        let Some(node) = self.node(id).copied() else {
            return;
        };
        let counter = self.decayed(&node, now);
        let counter = self.log_incr(counter);
        self.unlink(id.0);
        let node = &mut self.nodes[id.index()];
        node.counter = counter;
        node.ldt_minutes = minutes(now);
        let bucket = self.bucket_of(counter);
        self.push_front(id.0, bucket);
    }

    fn on_remove(&mut self, id: EntryId) {
        if self.node(id).is_some() {
            self.unlink(id.0);
            self.nodes[id.index()] = UNTRACKED;
            self.len -= 1;
        }
    }

    fn evict(&mut self, _now: Millis) -> Option<EntryId> {
        let (bucket, distance) = self.lowest_bucket()?;
        self.age += distance;
        let victim = EntryId(self.tails[bucket]);
        self.on_remove(victim);
        Some(victim)
    }

    fn len(&self) -> usize {
        self.len
    }

    fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>() + 2 * RING * std::mem::size_of::<u32>()
    }

    fn lfu_counter(&self, id: EntryId, now: Millis) -> Option<u8> {
        self.counter(id, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tracked ids in eviction order: lowest priority first, least recently
    /// accessed first within a priority.
    fn dump(lfu: &Lfu) -> Vec<u32> {
        let start = (lfu.age % RING as u64) as usize;
        let mut out = Vec::new();
        for step in 0..RING {
            let b = (start + step) % RING;
            let mut cur = lfu.tails[b];
            while cur != NIL {
                out.push(cur);
                cur = lfu.nodes[cur as usize].prev;
            }
        }
        out
    }

    fn insert(lfu: &mut Lfu, id: u32, now: u64) {
        lfu.on_insert(EntryId(id), u64::from(id), 1, Millis(now));
    }

    #[test]
    fn orders_by_counter_then_recency() {
        let mut lfu = Lfu::default();
        for i in 0..4 {
            insert(&mut lfu, i, 0);
        }
        assert_eq!(dump(&lfu), [0, 1, 2, 3]);
        // Below LFU_INIT_VAL + 1 an access always increments: 5 -> 6.
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
    fn aging_lets_newcomers_overtake_stale_entries() {
        let config = LfuConfig {
            log_factor: 0,
            ..LfuConfig::default()
        };
        let mut lfu = Lfu::new(config);
        insert(&mut lfu, 0, 0);
        // With log_factor 0 every hit counts: 5 -> 8.
        for t in 1..=3 {
            lfu.on_hit(EntryId(0), Millis(t));
        }
        insert(&mut lfu, 1, 4);
        assert_eq!(dump(&lfu), [1, 0]);
        // Evicting 1 ages the cache to priority 5; a newcomer now enters at
        // 10, above the stale entry's 8.
        assert_eq!(lfu.evict(Millis(5)), Some(EntryId(1)));
        insert(&mut lfu, 2, 6);
        assert_eq!(dump(&lfu), [0, 2]);
        // A hit refreshes the stale entry to 5 + 9 = 14.
        lfu.on_hit(EntryId(0), Millis(7));
        assert_eq!(dump(&lfu), [2, 0]);
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
        let config = LfuConfig {
            decay_time: Millis(0),
            ..LfuConfig::default()
        };
        let mut lfu = Lfu::new(config);
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
        let mut lfu = Lfu::new(LfuConfig {
            log_factor: 0,
            decay_time: Millis(0),
            seed: 1,
        });
        insert(&mut lfu, 3, 0);
        for t in 0..300 {
            lfu.on_hit(EntryId(3), Millis(t));
        }
        assert_eq!(lfu.counter(EntryId(3), Millis(300)), Some(255));
        // Priority 255 sits at the far end of the ring and stays the last
        // choice while newcomers come and go below it.
        insert(&mut lfu, 4, 300);
        assert_eq!(dump(&lfu), [4, 3]);
        assert_eq!(lfu.evict(Millis(301)), Some(EntryId(4)));
        insert(&mut lfu, 5, 302);
        assert_eq!(dump(&lfu), [5, 3]);
    }

    #[test]
    fn ring_wraps_around() {
        let mut lfu = Lfu::new(LfuConfig {
            log_factor: 0,
            decay_time: Millis(0),
            seed: 1,
        });
        // Push the age far past one turn of the ring.
        for round in 0..100u32 {
            insert(&mut lfu, 0, u64::from(round));
            insert(&mut lfu, 1, u64::from(round));
            lfu.on_hit(EntryId(1), Millis(u64::from(round)));
            assert_eq!(dump(&lfu), [0, 1]);
            assert_eq!(lfu.evict(Millis(0)), Some(EntryId(0)));
            assert_eq!(lfu.evict(Millis(0)), Some(EntryId(1)));
        }
        assert!(lfu.age > RING as u64);
    }
}
