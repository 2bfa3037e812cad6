//! AHE, the adaptive hybrid eviction policy (`allkeys-ahe`, `volatile-ahe`):
//! S3-FIFO's three queues, with the split between recency and frequency
//! learned from which side's evictions come back soonest.
//!
//! # Algorithm
//!
//! Every resident entry is in one of two FIFO queues, and recently evicted
//! keys leave a fingerprint in one of two ghost histories:
//!
//! - **small**, the recency side: every newcomer enters here, unless its
//!   key is a ghost. Its share of the cache, `s`, is what AHE learns.
//! - **main**, the frequency side: a CLOCK with 2-bit counters. It holds
//!   the entries that proved themselves: read at least twice while in small
//!   ([`AheConfig::promote_at`]), or come back while their key was a ghost.
//! - **small's ghost** remembers about 0.9 cache-sizes of keys that small
//!   evicted unread; **main's ghost** remembers main's last few evictions
//!   (as many as small's ghost remembers in its newest
//!   [`AheConfig::marginal_ranks`] ranks).
//!
//! A hit only sets the entry's counter (saturating at 3): nothing moves. An
//! insert looks the key up in both ghosts; a newcomer whose key small's
//! ghost remembers goes straight to main, any other to small (a key main
//! evicted too: main's ghost only feeds the rule below). To evict, AHE takes from main while main is over
//! its share `1 - s` (or small is empty), else from small:
//!
//! - *small's head*: if it was read `promote_at` times it moves to main's
//!   tail with its counter cleared; otherwise it is evicted into small's
//!   ghost. Repeat until one is evicted.
//! - *main's head*: if its counter is above 0 it goes round once more with
//!   the counter decremented; otherwise it is evicted into main's ghost.
//!
//! Until the first eviction, newcomers beyond small's share go to main, so
//! a cache fills with its first keys in main rather than churning them
//! through small (libCacheSim's current S3-FIFO does the same).
//!
//! # The one adaptive rule
//!
//! **A ghost hit moves `s` towards the side that evicted the key, by
//! [`AheConfig::step`] entries, if the eviction was recent**: for main's
//! ghost every hit is recent (it remembers only main's last few evictions);
//! for small's ghost, a record in the newest `marginal_ranks` ranks of its
//! bucket. Both recent windows span the same number of evictions, so the
//! two counts compare the hits that one more slice of cache would have won
//! on each side, the marginal utility of each queue, as ARC compares its
//! two ghost lists. `s` stays within [`AheConfig::min_small_share`] and
//! [`AheConfig::max_small_share`].
//!
//! Why only recent ghost hits count: small's ghost also admits (a key that comes back
//! within about a cache-size of evictions earns main), and most of its
//! hits are deep in it. Counting all of them grew `s` on every trace where
//! admission was working, OLTP's to 0.9 (measured: `oltp` at 1,000 entries
//! 6 points below S3-FIFO). Counting only the newest ranks keeps OLTP at
//! 0.25 to 0.45, where it beats S3-FIFO's static 10%, and still takes
//! `zigzag`, `backf` and the night ORM trace, where recency is all there
//! is, to 0.9 and above. The ablation, over the 40 cells of the dev traces
//! (`ferrum-bench replay` on each cell of `../shared/traces/README.md`; the
//! first four rows under another key hash, where `lirs-gli` at 510 entries
//! fared better: the fifth row's predecessor gave −1.26 under replay's):
//!
//! | variant | mean gap to the best known | worst cell |
//! | --- | ---: | ---: |
//! | S3-FIFO, `s` fixed at 0.1 | −1.80 | −17.28 (zigzag, 400) |
//! | every ghost hit moves `s` by 1 entry | −2.32 | −15.78 |
//! | recent ghost hits move `s` by 1 entry | −1.17 | −11.00 |
//! | recent ghost hits move `s` by 4 entries | −0.86 | −6.97 (ps, 150) |
//! | the same, main's ghost hits re-enter small (this) | −0.80 | −6.97 (ps, 150) |
//!
//! # What it does not do yet
//!
//! On loops larger than the cache (`lirs-loop`, `lirs-scan`) LIRS keeps
//! 99% of the cache fixed where AHE keeps 90%: nothing there moves `s`, so
//! it stays at its initial 10%. Shrinking `s` by 0.02 entries on every
//! eviction from small takes the mean gap to +0.67, but costs `backf` at
//! 150 entries 3.2 points and `zigzag` at 400 1.8, so it is not in. Small
//! caches of frequency-heavy traces (`ps` at 150, `multi2` at 280) want a
//! frequency filter as W-TinyLFU's. These are the next steps.
//!
//! # Cost
//!
//! Per slot of the store's handle table, 1 byte: the entry's counter, its
//! queue, a tracked bit and a 4-bit generation. Per entry, 4 bytes of queue
//! cell, at most 1.25 × that with a ring's spare room; stale cells (left
//! by removals) are dropped once they outnumber live ones. Small's ghost:
//! 2 bytes per remembered key, 0.9 per entry, so 1.8 bytes; main's ghost
//! about a tenth of that. About 7.5 bytes per entry in all, against exact
//! LRU's 8 bytes and the eighth it grows by. With
//! [`AheConfig::expired_first`], keys with a deadline add 8 bytes each and 4
//! per slot (`heap::Deadlines`).
//!
//! Per request: a hit writes one byte. A miss scans one 64-byte bucket of
//! each ghost. An eviction pops queue heads until one leaves: every entry
//! it passes over moves at most once per hit it had (a counter is
//! decremented or an entry promoted), so O(1) amortised, as CLOCK.
//!
//! # Sources
//!
//! - S3-FIFO: Yang, Zhang, Qiu, Yue and Vinayak, "FIFO queues are all you
//!   need for cache eviction", SOSP 2023, and libCacheSim's `S3FIFO.c`.
//! - The marginal comparison of two ghosts: ARC (Megiddo and Modha, FAST
//!   2003).
//! - CLOCK: Corbató, 1968; 2-bit counters as in S3-FIFO.
//!
//! ```
//! use ferrum_evict::{Ahe, AheConfig, EntryId, EvictionPolicy, Millis};
//!
//! let mut ahe = Ahe::new(AheConfig::default());
//! for i in 0..4 {
//!     ahe.on_insert(EntryId(i), u64::from(i), 64, Millis(0));
//! }
//! // Entry 0 entered small, the next ones filled main. Entry 0 is read
//! // twice, so it is promoted rather than evicted; main's oldest unread
//! // entry goes instead.
//! ahe.on_hit(EntryId(0), 0, Millis(1));
//! ahe.on_hit(EntryId(0), 0, Millis(1));
//! // The store answers for each entry's key hash (here, the id).
//! let victim = ahe.evict(Millis(2), &|id| u64::from(id.0));
//! assert_eq!(victim, Some(EntryId(1)));
//! assert!(ahe.controller_state().is_some());
//! ```

mod ghost;
mod ring;

use crate::heap::Deadlines;
use crate::table::grow_for;
use crate::{ControllerState, EntryId, EvictionPolicy, Millis};
use ghost::Ghost;
use ring::Ring;

/// A slot's state byte: the counter (bits 0-1), the queue (bit 2), whether
/// it is tracked (bit 3) and its generation (bits 4-7).
const COUNTER: u8 = 0b0000_0011;
const IN_MAIN: u8 = 0b0000_0100;
const TRACKED: u8 = 0b0000_1000;
const GENERATION_SHIFT: u32 = 4;
/// A queue cell: the slot id in the low 28 bits, its generation above.
const ID_BITS: u32 = 28;
const ID_MASK: u32 = (1 << ID_BITS) - 1;

/// Whether `cell` is the current incarnation of a tracked entry in the
/// queue `queue` (0 or [`IN_MAIN`]); other cells are stale.
fn is_live(state: &[u8], cell: u32, queue: u8) -> bool {
    let s = state[(cell & ID_MASK) as usize];
    s >> GENERATION_SHIFT == (cell >> ID_BITS) as u8 && s & (TRACKED | IN_MAIN) == TRACKED | queue
}

/// Parameters of [`Ahe`].
#[derive(Clone, Debug, PartialEq)]
pub struct AheConfig {
    /// Small's share of the cache before anything was learned. Default:
    /// 0.1, S3-FIFO's: the middle of what the dev traces want (0.01 for
    /// loops, 0.25 for OLTP, 0.9 and above for recency-only traces).
    pub initial_small_share: f64,
    /// Lowest share small is taken to. Default: 0.01 (W-TinyLFU's window).
    pub min_small_share: f64,
    /// Highest share small is taken to. Default: 0.99: main never empties.
    pub max_small_share: f64,
    /// Keys small's ghost remembers, per entry of the cache. Default: 0.9,
    /// S3-FIFO's. On the dev traces 0.5 and 2.0 were each worse on average
    /// (−1.87 and −1.86 against −1.80, with `s` fixed at 0.1).
    pub ghost_share: f64,
    /// Reads while in small that earn main. Default: 2, S3-FIFO's; 1 was
    /// 0.04 worse on average over the dev traces.
    pub promote_at: u8,
    /// Entries `s` moves per recent ghost hit. Default: 4 (1: −1.17, 2:
    /// −0.96, 3: −0.88, 4: −0.86, 6: −0.90 mean gap over the dev traces).
    pub step: f64,
    /// How many of the newest ranks of small's ghost count as recent; main's
    /// ghost remembers that many ranks' worth of evictions. Default: 2 (1:
    /// −1.35, 4: −1.37, with a step of 1).
    pub marginal_ranks: usize,
    /// Keep the keys' expiry deadlines to evict expired entries first (8
    /// bytes per key with one and 4 per slot). Default: false: FerrumKV's
    /// store expires keys itself; the simulator's slab, which never does,
    /// sets it (`PolicyConfig::expired_first`).
    pub expired_first: bool,
}

impl Default for AheConfig {
    fn default() -> Self {
        AheConfig {
            initial_small_share: 0.1,
            min_small_share: 0.01,
            max_small_share: 0.99,
            ghost_share: 0.9,
            promote_at: 2,
            step: 4.0,
            marginal_ranks: 2,
            expired_first: false,
        }
    }
}

/// The adaptive hybrid policy; see the [module docs](self).
#[derive(Clone, Debug)]
pub struct Ahe {
    config: AheConfig,
    /// One state byte per slot of the store's handle table.
    state: Vec<u8>,
    small: Ring,
    main: Ring,
    small_len: usize,
    main_len: usize,
    small_ghost: Ghost,
    main_ghost: Ghost,
    /// The entry count the ghosts were last sized for.
    ghosts_fitted_for: Option<usize>,
    /// Small's target size in entries; `None` until the first eviction.
    small_target: Option<f64>,
    deadlines: Deadlines,
    stats: Stats,
    /// [`Ahe::heap_now`] as of the last change: what `heap_bytes` answers,
    /// since the store asks several times a command.
    heap: usize,
}

/// What the queues did, for [`ControllerState`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Stats {
    small_ghost_hits: u64,
    main_ghost_hits: u64,
    promotions: u64,
    small_evictions: u64,
    main_evictions: u64,
}

impl Ahe {
    /// An empty policy.
    pub fn new(config: AheConfig) -> Self {
        Ahe {
            config,
            state: Vec::new(),
            small: Ring::default(),
            main: Ring::default(),
            small_len: 0,
            main_len: 0,
            small_ghost: Ghost::default(),
            main_ghost: Ghost::default(),
            ghosts_fitted_for: None,
            small_target: None,
            deadlines: Deadlines::default(),
            stats: Stats::default(),
            heap: 0,
        }
    }

    /// The heap bytes of every table, counted now.
    fn heap_now(&self) -> usize {
        self.state.capacity()
            + self.small.heap_bytes()
            + self.main.heap_bytes()
            + self.small_ghost.heap_bytes()
            + self.main_ghost.heap_bytes()
            + self.deadlines.heap_bytes()
    }

    /// Brings `heap` up to date after a change.
    fn recount(&mut self) {
        self.heap = self.heap_now();
    }

    /// Small's target share of the cache: what the adaptive rule learned.
    pub fn small_share(&self) -> f64 {
        let len = self.tracked().max(1) as f64;
        match self.small_target {
            Some(target) => (target / len).min(1.0),
            None => self.config.initial_small_share,
        }
    }

    fn tracked(&self) -> usize {
        self.small_len + self.main_len
    }

    fn is_tracked(&self, id: EntryId) -> bool {
        self.state.get(id.index()).is_some_and(|s| s & TRACKED != 0)
    }

    /// The id in `cell` if it is the current incarnation of a tracked
    /// entry in the queue `queue` (0 or [`IN_MAIN`]).
    fn live(&self, cell: u32, queue: u8) -> Option<u32> {
        is_live(&self.state, cell, queue).then_some(cell & ID_MASK)
    }

    fn cell(&self, id: u32) -> u32 {
        id | (u32::from(self.state[id as usize] >> GENERATION_SHIFT) << ID_BITS)
    }

    fn push_small(&mut self, id: u32) {
        self.state[id as usize] &= !IN_MAIN;
        self.small.push(self.cell(id));
        self.small_len += 1;
    }

    fn push_main(&mut self, id: u32) {
        self.state[id as usize] |= IN_MAIN;
        self.main.push(self.cell(id));
        self.main_len += 1;
    }

    /// Small's target, clamped to the share bounds of the current size.
    fn small_target(&mut self) -> f64 {
        let len = self.tracked() as f64;
        let target = self
            .small_target
            .unwrap_or(self.config.initial_small_share * len);
        let lo = (self.config.min_small_share * len).max(1.0);
        let hi = (self.config.max_small_share * len).max(lo);
        let target = target.clamp(lo, hi);
        self.small_target = Some(target);
        target
    }

    /// Sizes the ghosts for the entries tracked now (nothing to do while
    /// that count stays where it was, as under steady eviction).
    fn fit_ghosts(&mut self) {
        if self.ghosts_fitted_for == Some(self.tracked()) {
            return;
        }
        self.ghosts_fitted_for = Some(self.tracked());
        let entries = (self.config.ghost_share * self.tracked() as f64) as usize;
        self.small_ghost.fit(entries);
        self.main_ghost
            .fit(self.config.marginal_ranks * self.small_ghost.buckets());
    }

    fn forget(&mut self, id: u32) {
        self.state[id as usize] &= !TRACKED;
        // Deadlines are only ever kept with `expired_first`.
        if self.config.expired_first {
            self.deadlines.remove(EntryId(id));
        }
    }

    /// Pops small's head until one entry leaves; promotes the ones read
    /// `promote_at` times on the way.
    fn evict_small(&mut self, key_hash: &dyn Fn(EntryId) -> u64) -> Option<u32> {
        while let Some(cell) = self.small.pop() {
            let Some(id) = self.live(cell, 0) else {
                continue;
            };
            self.small_len -= 1;
            if self.state[id as usize] & COUNTER >= self.config.promote_at {
                self.state[id as usize] &= !COUNTER;
                self.push_main(id);
                self.stats.promotions += 1;
                continue;
            }
            self.forget(id);
            self.small_ghost.record(key_hash(EntryId(id)));
            self.stats.small_evictions += 1;
            return Some(id);
        }
        None
    }

    /// Pops main's head until one entry leaves; one that was read goes
    /// round again with its counter decremented.
    fn evict_main(&mut self, key_hash: &dyn Fn(EntryId) -> u64) -> Option<u32> {
        while let Some(cell) = self.main.pop() {
            let Some(id) = self.live(cell, IN_MAIN) else {
                continue;
            };
            if self.state[id as usize] & COUNTER > 0 {
                self.state[id as usize] -= 1;
                self.main.push(cell);
                continue;
            }
            self.main_len -= 1;
            self.forget(id);
            self.main_ghost.record(key_hash(EntryId(id)));
            self.stats.main_evictions += 1;
            return Some(id);
        }
        None
    }

    /// The adaptive rule: a recent ghost hit moves small's target towards
    /// the side that evicted the key. Returns whether the key goes straight
    /// to main (small's ghost remembered it).
    fn learn(&mut self, key_hash: u64) -> bool {
        let Some(target) = self.small_target else {
            return false;
        };
        if let Some(rank) = self.small_ghost.take(key_hash) {
            self.stats.small_ghost_hits += 1;
            if rank < self.config.marginal_ranks {
                self.small_target = Some(target + self.config.step);
            }
            return true;
        }
        if self.main_ghost.take(key_hash).is_some() {
            self.stats.main_ghost_hits += 1;
            self.small_target = Some(target - self.config.step);
            // Main's ghost only informs: its key re-enters through small,
            // as in S3-FIFO. Sent back to main, a loop's keys churn main
            // (lirs-gli at 510 entries: 1.3% against 31%).
            return false;
        }
        false
    }
}

/// The version byte that starts [`Ahe`]'s exported state. Version 1 (until
/// December 2026) had no promotion count and ended its counts with the
/// removed controller's window hit ratio; it still loads.
const STATE_VERSION: u8 = 2;

/// [`Ahe`]'s exported state, read back.
struct State {
    small_target: Option<f64>,
    stats: Stats,
    small_ghost: Ghost,
    main_ghost: Ghost,
}

/// A cursor over exported bytes.
struct Bytes<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Bytes<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn f64(&mut self) -> Option<f64> {
        self.u64().map(f64::from_bits)
    }

    fn ghost(&mut self) -> Option<Ghost> {
        let (ghost, used) = Ghost::import(self.bytes.get(self.at..)?)?;
        self.at += used;
        Some(ghost)
    }
}

impl State {
    /// Parses what `export_state` wrote; `None` for anything else.
    fn parse(bytes: &[u8]) -> Option<State> {
        let mut r = Bytes { bytes, at: 0 };
        let version = r.take(1)?[0];
        if !(1..=STATE_VERSION).contains(&version) {
            return None;
        }
        let target = r.f64()?;
        let small_target = (target.is_finite() && target >= 0.0).then_some(target);
        let mut stats = Stats {
            small_ghost_hits: r.u64()?,
            main_ghost_hits: r.u64()?,
            ..Stats::default()
        };
        if version >= 2 {
            stats.promotions = r.u64()?;
        }
        stats.small_evictions = r.u64()?;
        stats.main_evictions = r.u64()?;
        if version == 1 {
            r.f64()?;
        }
        let state = State {
            small_target,
            stats,
            small_ghost: r.ghost()?,
            main_ghost: r.ghost()?,
        };
        (r.at == bytes.len()).then_some(state)
    }
}

impl Default for Ahe {
    fn default() -> Self {
        Ahe::new(AheConfig::default())
    }
}

impl EvictionPolicy for Ahe {
    fn name(&self) -> &'static str {
        "ahe"
    }

    fn on_insert(&mut self, id: EntryId, key_hash: u64, _cost: u32, now: Millis) {
        debug_assert!(!self.is_tracked(id), "{id:?} inserted twice");
        debug_assert!(id.0 <= ID_MASK, "{id:?} is beyond 28 bits");
        self.deadlines.observe(now);
        grow_for(&mut self.state, id.index(), 0);
        let generation = (self.state[id.index()] >> GENERATION_SHIFT).wrapping_add(1) & 0x0f;
        self.state[id.index()] = TRACKED | (generation << GENERATION_SHIFT);
        let to_main = self.learn(key_hash);
        let filling = self.small_target.is_none()
            && self.small_len as f64
                >= self.config.initial_small_share * (self.tracked() + 1) as f64;
        if to_main || filling {
            self.push_main(id.0);
        } else {
            self.push_small(id.0);
        }
        self.recount();
    }

    fn on_hit(&mut self, id: EntryId, _key_hash: u64, _now: Millis) {
        if let Some(s) = self.state.get_mut(id.index()) {
            if *s & TRACKED != 0 && *s & COUNTER != COUNTER {
                *s += 1;
            }
        }
    }

    /// The entry's queue and counter: `IN_MAIN | counter`.
    fn warm_hint(&self, id: EntryId, _now: Millis) -> Option<u8> {
        let s = *self.state.get(id.index())?;
        (s & TRACKED != 0).then_some(s & (IN_MAIN | COUNTER))
    }

    /// Puts a just-loaded entry back in the queue it was in, with its
    /// counter; the queues' order within is the load's.
    fn restore_warm_hint(&mut self, id: EntryId, hint: u8, _now: Millis) {
        if !self.is_tracked(id) {
            return;
        }
        let i = id.index();
        self.state[i] = (self.state[i] & !COUNTER) | (hint & COUNTER);
        let in_main = self.state[i] & IN_MAIN != 0;
        // A load moves each entry just after its insert, so its cell is
        // its old queue's tail: taken back, it costs no memory. Otherwise
        // it stays behind, dead (`live` checks the queue bit).
        let cell = self.cell(id.0);
        match (in_main, hint & IN_MAIN != 0) {
            (false, true) => {
                self.small_len -= 1;
                self.small.unpush(cell);
                self.push_main(id.0);
            }
            (true, false) => {
                self.main_len -= 1;
                self.main.unpush(cell);
                self.push_small(id.0);
            }
            _ => {}
        }
        self.recount();
    }

    fn on_expiry_change(&mut self, id: EntryId, expires_at: Option<Millis>) {
        match expires_at {
            Some(deadline) if self.config.expired_first && self.is_tracked(id) => {
                self.deadlines.set(id, deadline);
            }
            _ => self.deadlines.remove(id),
        }
        self.recount();
    }

    fn on_remove(&mut self, id: EntryId) {
        if !self.is_tracked(id) {
            return;
        }
        if self.state[id.index()] & IN_MAIN != 0 {
            self.main_len -= 1;
        } else {
            self.small_len -= 1;
        }
        self.forget(id.0);
        let state = &self.state;
        self.small.compact(self.small_len, |c| is_live(state, c, 0));
        self.main
            .compact(self.main_len, |c| is_live(state, c, IN_MAIN));
        if self.tracked() == 0 {
            // An emptied cache (FLUSHDB, or every key expired) starts over.
            self.small_target = None;
            self.small_ghost.clear();
            self.ghosts_fitted_for = None;
            self.main_ghost.clear();
        }
        self.recount();
    }

    fn evict(&mut self, now: Millis, key_hash: &dyn Fn(EntryId) -> u64) -> Option<EntryId> {
        if self.tracked() == 0 {
            return None;
        }
        self.deadlines.observe(now);
        if self.config.expired_first {
            if let Some(id) = self.deadlines.expired(now) {
                self.on_remove(id);
                return Some(id);
            }
        }
        self.fit_ghosts();
        let small_target = self.small_target();
        let main_target = self.tracked() as f64 - small_target;
        let victim = loop {
            let from_main = self.main_len as f64 > main_target || self.small_len == 0;
            let victim = if from_main {
                self.evict_main(key_hash)
            } else {
                self.evict_small(key_hash)
            };
            if let Some(id) = victim {
                break id;
            }
        };
        self.recount();
        Some(EntryId(victim))
    }

    fn len(&self) -> usize {
        self.tracked()
    }

    fn heap_bytes(&self) -> usize {
        self.heap
    }

    /// The controller (small's target and its counts) and both ghosts:
    /// version byte, then little-endian fields (see `State::parse`). A
    /// copy of the ghosts' tables, about 2 bytes per entry. The queues'
    /// order is [`EvictionPolicy::export_order`]'s.
    fn export_state(&self) -> Option<Vec<u8>> {
        let mut out = vec![STATE_VERSION];
        out.extend_from_slice(&self.small_target.unwrap_or(f64::NAN).to_le_bytes());
        let s = &self.stats;
        for n in [
            s.small_ghost_hits,
            s.main_ghost_hits,
            s.promotions,
            s.small_evictions,
            s.main_evictions,
        ] {
            out.extend_from_slice(&n.to_le_bytes());
        }
        self.small_ghost.export(&mut out);
        self.main_ghost.export(&mut out);
        Some(out)
    }

    /// Takes back the controller and the ghosts.
    fn import_state(&mut self, state: &[u8]) {
        let Some(state) = State::parse(state) else {
            return;
        };
        self.small_target = state.small_target;
        self.stats = state.stats;
        self.small_ghost = state.small_ghost;
        self.main_ghost = state.main_ghost;
        self.ghosts_fitted_for = None;
        self.recount();
    }

    /// Small's live entries, head first, then main's; each placed at its
    /// index.
    fn export_order(&self) -> Option<Vec<(EntryId, u32)>> {
        let small = self.small.iter().filter_map(|c| self.live(c, 0));
        let main = self.main.iter().filter_map(|c| self.live(c, IN_MAIN));
        Some(crate::indexed(small.chain(main).map(EntryId)))
    }

    /// Rebuilds each queue with the entries `order` names first, in that
    /// order, then the others as they were; stale cells go.
    fn import_order(&mut self, order: &[(EntryId, u32)]) {
        let mut placed = vec![false; self.state.len()];
        let (mut small, mut main) = (Vec::new(), Vec::new());
        let named = order.iter().map(|(id, _)| id.0);
        let rest = (self.small.iter().filter_map(|c| self.live(c, 0)))
            .chain(self.main.iter().filter_map(|c| self.live(c, IN_MAIN)));
        for id in named.chain(rest) {
            if !self.is_tracked(EntryId(id)) || std::mem::replace(&mut placed[id as usize], true) {
                continue;
            }
            if self.state[id as usize] & IN_MAIN != 0 {
                main.push(self.cell(id));
            } else {
                small.push(self.cell(id));
            }
        }
        self.small.replace(small);
        self.main.replace(main);
        self.recount();
    }

    fn controller_state(&self) -> Option<ControllerState> {
        let s = &self.stats;
        Some(ControllerState {
            small_entries: self.small_len as u64,
            main_entries: self.main_len as u64,
            small_target_share: self.small_share(),
            small_ghost_hits: s.small_ghost_hits,
            main_ghost_hits: s.main_ghost_hits,
            promotions: s.promotions,
            small_evictions: s.small_evictions,
            main_evictions: s.main_evictions,
        })
    }
}

#[cfg(test)]
mod tests;
