//! AHE, the adaptive hybrid eviction policy (`allkeys-ahe`, `volatile-ahe`):
//! a small recency window in front of a frequency-guarded main region, with
//! the split between them learned online.
//!
//! # Algorithm
//!
//! The cache is split into a **window** (an LRU list that every new entry
//! enters) and a **main** region (a segmented LRU: *probation* and
//! *protected*). The window holds the recency share `w` of the cache; main
//! holds the rest, and protected at most `protected_share × (1 - w)` of
//! main.
//!
//! - *Hit.* A window entry moves to the window's head; a probation entry is
//!   promoted to protected (demoting protected's tail to probation if
//!   protected is full); a protected entry moves to protected's head.
//! - *Evict.* With `expired_first` (off by default: the store expires
//!   keys itself) an entry whose expiry deadline has passed goes first.
//!   Otherwise, if the window is over its share, its tail (the
//!   *candidate*) duels main's victim (probation's tail, else protected's):
//!   the candidate is admitted into probation and the victim evicted only if
//!   the frequency sketch says the candidate was accessed more often
//!   (**TinyLFU admission**); otherwise the candidate itself is evicted. A
//!   victim that wins goes round probation once more, *spared* (CLOCK's
//!   second chance), so the next duel is against the next-oldest entry; if
//!   it comes back to the tail still without a hit, it loses to any
//!   candidate that has repeated at all. If the window is within its share,
//!   main's victim goes. While main is below its share (at the first
//!   eviction, or after the window shrank) the window's overflow first
//!   moves into probation without a duel; where main is short because
//!   keys expired or were deleted, it goes to probation's tail, next in
//!   line to leave, one entry per key removed.
//! - *Ageing main.* Protected's tail is demoted to probation once it went
//!   about ten cache-sizes of requests (two sketch periods) without a hit: its
//!   counts have been halved twice since, so it must defend its place again.
//! - *Frequency.* A TinyLFU sketch (`sketch.rs`: a doorkeeper Bloom filter
//!   and a count-min sketch of 4-bit counters, halved every five
//!   cache-sizes of accesses) counts every access, hits and misses,
//!   including keys not resident. The doorkeeper swallows a key's first access in a period, so
//!   a key needs a repeat to count at all.
//! - *Ghosts and the split.* Each eviction is tagged with the side that
//!   advised it: leaving from the window means the frequency filter turned
//!   the newcomer away (**frequency's** decision); leaving from main means
//!   an established entry was dropped for a newcomer (**recency's**). The
//!   key's 32-bit fingerprint goes into a ghost history (`ghost.rs`) that
//!   remembers about a cache's worth of evictions, or rather a one-in-two
//!   sample of them by key hash. A miss whose fingerprint is a ghost is a
//!   *regret* for the side that evicted it, rated per remembered eviction.
//!   The controller (`controller.rs`) hill-climbs the window share `w` on
//!   the hit ratio of successive periods of three cache-sizes of requests;
//!   when one side's regrets (per eviction it decided) exceed the other's
//!   by 5 points the step goes their way instead: frequency's regrets
//!   grow the window, recency's shrink it. When the hit ratio jumps by
//!   more than 5 points (the workload changed) it restarts with a full step
//!   in the direction the regrets point. When the regrets stay lopsided
//!   period after period (smoothed), the steps double up to a quarter of
//!   the cache (a *surge*; down, at most half the share a period, so a mix
//!   such as `ttl` does not overshoot its best share). And within a
//!   period, in slices of half a cache-size: when the hit ratio falls by
//!   5 points and stays down while the newcomers the filter turned away
//!   keep coming back, the hot set rotated under the filter, and `w` jumps
//!   to its maximum (0.95) at once instead of climbing there over several
//!   periods. Staying down means two checks in a row, or only the check of
//!   the fall if the filter's regret rate there rose to 1.5 times its
//!   level before it, and to 0.1 at least (a scan's keys never come
//!   back). A jumped `w` is held while such falls keep coming, and let
//!   down a period later where they come six periods apart or more (the
//!   hot set stays long enough for frequency to learn it). A period
//!   without a hit takes no step. The learned `w` is
//!   the recency weight that `controller_state` reports.
//! - *One controller per store.* The store keeps an instance per shard,
//!   and the shards see the same workload (keys are spread by a hash), so
//!   their instances share one controller (`shared.rs`): it steps once per
//!   period of three times the store's entries, on every shard's
//!   observations, and every instance reads the one share. Sixteen
//!   controllers each steering by a sixteenth of the evidence wandered
//!   apart (after a rotating hot set's first 200,000 requests, shares of
//!   0.30 to 0.80 over the shards of one store) and surged late.
//! - *The sketch follows the split.* While the window holds most of the
//!   cache the duels decide only main's few entries, so the sketch is
//!   sized for half the cache from `w = 0.45`, a quarter from `w = 0.7`
//!   and an eighth from `w = 0.85` (with overlapping bands), and the bytes
//!   hold more keys; not where the rotations come slowly, as the window
//!   comes back down within each.
//!
//! # Why it adapts, and why it does not collapse
//!
//! LRU collapses on scans and loops because every newcomer displaces a
//! resident; here a newcomer must out-count the resident, and a key seen
//! once never counts, so a scan or a stream of one-hit wonders cannot
//! displace anything (they only churn the window). LFU collapses on a
//! rotating hot set because stale counts squat; here counts halve every ten
//! cache-sizes of traffic, idle protected entries are demoted, and a
//! spared victim that is still not read loses to any repeating newcomer,
//! so a rotated-out hot set drains within a period or two. Between those
//! extremes the best window size depends on the workload (about 1% for
//! stable skew, larger for recency-heavy mixes such as `ttl`); the hill
//! climber measures it instead of assuming it, and the ghost regrets tell
//! it which way to go after a change. Everything is counted in events
//! (accesses, evictions, requests), never in time, so the hit ratio does
//! not depend on the request rate.
//!
//! # Parameters
//!
//! See [`AheConfig`] and [`ClimberConfig`]; every default is there with its
//! reason. The sizes and rates are the published defaults of Caffeine and
//! the TinyLFU paper, except the sketch's period (five cache-sizes, not
//! ten: see `sketch.rs`); the protected idle limit is TinyLFU's period.
//! They were checked on the adversarial patterns of ferrum-bench (`loop`,
//! `zipf06`, `onehit`, `phase`) as much as on the five of WORKLOADS.md.
//!
//! # Cost
//!
//! Per slot of the store's handle table: an 8-byte node, as for exact LRU
//! (two `u32` list links of 29-bit slot ids, their spare bits holding the
//! region and a coarse age of the last access), the table grown by an
//! eighth. No key fingerprint per entry:
//! the store passes the key's hash with every hit (it hashed the key to
//! find it) and answers for the two or three entries an eviction weighs
//! (`EvictionPolicy::evict`'s `key_hash`). Per entry of the cache: 8 bytes
//! of sketch and doorkeeper (4, 2 or 1 while the window holds most of the
//! cache) and 2 bytes of ghost history (a 32-bit
//! fingerprint per remembered eviction, one in two remembered; 1 byte, one
//! in four, once the controller steers 2,048 entries: the store's, over
//! all its shards; half a byte, one in eight, when it does and the window
//! holds nearly all of the cache), both sized
//! for exactly the entries tracked at their last resize and resized,
//! keeping their contents, when the count moves by a sixteenth, so a full
//! cache pays 10 bytes per entry beside the node (3 to 4 with a large window;
//! a byte less from 2,048 entries, 1.5 at the top) and memory follows the
//! entries down (DEL, expiry) as well as up, per policy instance (per
//! shard) rather than from a high-water mark. With `expired_first`, keys
//! with a deadline add 8 bytes each and 4 per slot (`heap::Deadlines`). `heap_bytes` counts all
//! of it; `ferrum-bench sim` prints it per entry, and `cargo run --release
//! -p ferrum-evict --example footprint` at any cache size.
//!
//! Idle time is kept coarse, in epochs of a fifth of the idle limit (two
//! cache-sizes of requests), modulo 8 in the link's spare bits: protected's
//! tail is demoted once its last access is five epochs old, so after eight
//! to ten cache-sizes idle. Each new epoch clamps the protected entries
//! older than that (protected's tail end) to five, so an age never wraps.
//! Slot ids take 29 bits: one policy instance (one shard) tracks at most
//! 2^29 - 1 slots.
//!
//! Per request: a hit touches at most 7 sketch words and relinks one or two
//! list nodes; a miss touches at most 7 sketch words and scans one 64-byte
//! ghost bucket; an eviction asks the store for one or two key hashes,
//! reads two sketch estimates (8 words), relinks at most three nodes (a demotion, an admission, a spared victim) and
//! shifts one ghost bucket. Spilling the window into main moves each entry
//! at most once per insert, the sketch's reset pass (one word per entry,
//! once per five cache-sizes of accesses) is O(1) amortised, and a resize
//! of the sketch and ghost is O(n) once the count moved by n/16. All O(1) amortised, except that
//! keys with an expiry deadline pay O(log t) in the deadline heap, `t` the
//! number of tracked keys with a deadline.
//!
//! # Sources
//!
//! - TinyLFU and W-TinyLFU: Einziger, Friedman and Manes, "TinyLFU: A Highly
//!   Efficient Cache Admission Policy", ACM ToS 2017.
//! - The adaptive window (hill climbing): Einziger, Eytan, Friedman and
//!   Manes, "Adaptive Software Cache Management", Middleware 2018, and
//!   Caffeine's `BoundedLocalCache`.
//! - Ghost histories and regret: ARC (Megiddo and Modha, FAST 2003), LeCaR
//!   (Vietri et al., HotStorage 2018), CACHEUS (Rodriguez et al., FAST 2021).
//! - Segmented LRU: Karedla, Love and Wherry, IEEE Computer 1994.
//!
//! ```
//! use ferrum_evict::{Ahe, AheConfig, EntryId, EvictionPolicy, Millis};
//!
//! let mut ahe = Ahe::new(AheConfig::default());
//! for i in 0..4 {
//!     ahe.on_insert(EntryId(i), u64::from(i), 64, Millis(0));
//! }
//! // Entry 0 is read again; the others never are.
//! ahe.on_hit(EntryId(0), 0, Millis(1));
//! // The store answers for each entry's key hash (here, the id).
//! let victim = ahe.evict(Millis(2), &|id| u64::from(id.0));
//! assert!(matches!(victim, Some(EntryId(1..=3))));
//! assert!(ahe.controller_state().is_some());
//! ```

mod controller;
mod ghost;
mod shared;
mod sketch;

pub use controller::{ClimberConfig, Controller, HillClimber, Signal};
pub use ghost::Side;
pub use shared::SharedController;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::heap::Deadlines;
use crate::table::grow_for;
use crate::{ControllerState, EntryId, EvictionPolicy, Millis};
use ghost::Ghost;
use shared::Member;
use sketch::FrequencySketch;

/// Bits of a node's link that hold a slot id; the 3 above them hold the
/// region (in `prev`) or the age (in `next`).
const ID_BITS: u32 = 29;
const ID_MASK: u32 = (1 << ID_BITS) - 1;
/// Marks "no neighbour": the largest id a link can hold. Slot ids stay
/// below it (a policy instance, one shard's, tracking 2^29 slots would
/// hold over 40 GB of entries).
const NIL: u32 = ID_MASK;

/// A candidate this frequent that lost its duel is still admitted with
/// probability 1/128, Caffeine's defence against an attacker who makes a
/// victim look hot through hash collisions (and a way out of a tie between
/// two hot keys).
const JITTER_MIN_FREQUENCY: u8 = 6;

/// Configuration for [`Ahe`].
#[derive(Clone, Debug, PartialEq)]
pub struct AheConfig {
    /// The window-share controller.
    pub climber: ClimberConfig,
    /// Protected's share of the main region. Default: 0.8, the SLRU split
    /// of W-TinyLFU: most of main is for entries hit since admission, and
    /// probation is large enough for newcomers to prove themselves.
    pub protected_share: f64,
    /// A controller period is this many times the cache's size in
    /// requests. Default: 3, not Caffeine's 10: at 10 a million-request
    /// run of 17,000 entries has six periods, too few for the window to
    /// climb to where a rotating hot set needs it (on `shift` the share
    /// never passed 0.25). Three still gives a period's hit ratio a
    /// standard error under 0.25 points at 17,000 entries (51,000
    /// requests), and the regret steering keeps the noise from steering.
    pub period_factor: u32,
    /// Protected's tail is demoted to probation once it went this many
    /// cache-sizes of requests without a hit; 0 never demotes on age.
    /// Default: 10, TinyLFU's sample period (the sketch here halves every
    /// 5): an entry idle that long has had its counts halved twice without
    /// refresh.
    pub protected_idle_factor: u32,
    /// Keep the keys' expiry deadlines (8 bytes per key with one and 4 per
    /// slot) to evict entries past theirs before anything else. Default:
    /// false. The store's own expiry removes expired keys anyway, and at
    /// equal memory the deadlines cost more keys than they win back: on
    /// the equal-memory simulator (17,000 entries, 16 shards) `ttl` gains
    /// 0.4 points without them, and at 5,000 equal entries it is
    /// unchanged.
    pub expired_first: bool,
    /// The ghost history remembers one eviction in this many, a sample by
    /// key hash (1: every eviction). Default: 2, 2 bytes per entry instead
    /// of 4; see `ghost.rs` for what it was measured against.
    pub ghost_sample: u32,
    /// From this many entries steered by the controller on (the
    /// instance's, or with a [`SharedController`] the whole store's), the
    /// ghost history remembers one eviction in `ghost_sample_large`
    /// instead. Default: 2,048 (see `ghost_sample_large`). What the regret
    /// rates need is records per period at the controller, wherever they
    /// were remembered.
    pub ghost_large_from: usize,
    /// The sample of a large cache. Default: 4, 1 byte per entry. What
    /// the sample must keep is enough remembered evictions per controller
    /// period for the regret rates to rise above their noise, and a
    /// period is three cache-sizes of requests: a larger cache evicts
    /// more per period, so a sparser sample keeps as many records.
    pub ghost_sample_large: u32,
    /// The sample of a large cache while the window holds nearly all of
    /// it (the sketch's eighth band, see [`SketchSize`]). Default: 8, half
    /// a byte per entry. There main decides few evictions and the ghost
    /// history only has to tell when skew is back. On the equal-memory
    /// simulator (17,000 entries, 16 shards) `shift` gained 0.05 points
    /// over one in four (seeds 42 and 7), and on six traces of a rotating
    /// hot set followed by twice as much stable skew (`ferrum-bench
    /// replay`, 17,000 equal entries) the window came down as fast: AHE
    /// led allkeys-lru by 0.81 points on average, against 0.80 (0.69 at
    /// one in sixteen). The sketch cannot be spared the same way: without
    /// its doorkeeper at the top, or at a sixteenth, the lead on those
    /// traces fell to 0.37 and 0.0, as the window stayed up.
    pub ghost_sample_top: u32,
    /// Size the frequency sketch for about main's share of the cache:
    /// half the entries while the window holds most of it, a quarter or
    /// an eighth while it holds nearly all of it (see [`SketchSize`]). Default:
    /// true. A large window is where recency serves best (a rotating hot
    /// set), the duels then decide only the small main region's entries,
    /// and at equal memory the bytes freed hold more keys: on the
    /// equal-memory simulator at WORKLOADS.md scale 10 (16 shards) `shift`
    /// gains 0.4 points; skewed and scanning workloads keep a small window
    /// and the whole sketch. Not while the hot set rotates slowly
    /// ([`HillClimber::rotations_are_slow`]): the window is let down a
    /// period after each jump, and the sketch, shrunk to an eighth and
    /// grown back, came back with every count merged eight ways. On
    /// `shift` at 5,000 equal entries (seeds 1 to 8) keeping it whole
    /// then lifted AHE from 65.09% to 65.56% over 16 shards and from
    /// 65.12% to 65.72% in one; at 17,000 equal-memory entries and at
    /// scale 10 the rotations are not slow.
    pub sketch_follows_share: bool,
    /// Seed of the admission jitter. Default: 0.
    pub seed: u64,
}

impl Default for AheConfig {
    fn default() -> Self {
        AheConfig {
            climber: ClimberConfig::default(),
            protected_share: 0.8,
            period_factor: 3,
            protected_idle_factor: 10,
            expired_first: false,
            ghost_sample: ghost::SAMPLE,
            ghost_large_from: 2_048,
            ghost_sample_large: 2 * ghost::SAMPLE,
            ghost_sample_top: 4 * ghost::SAMPLE,
            sketch_follows_share: true,
            seed: 0,
        }
    }
}

/// Which list an entry is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Region {
    Untracked = 0,
    Window = 1,
    Probation = 2,
    /// In probation, and it already went round probation once after
    /// winning a duel, without a hit since.
    Spared = 3,
    Protected = 4,
}

impl Region {
    /// The region a node's `prev` link encodes above its id.
    fn from_bits(bits: u32) -> Region {
        match bits {
            1 => Region::Window,
            2 => Region::Probation,
            3 => Region::Spared,
            4 => Region::Protected,
            _ => Region::Untracked,
        }
    }

    fn list(self) -> usize {
        match self {
            Region::Window => 0,
            Region::Probation | Region::Spared => 1,
            Region::Protected => 2,
            // Callers only ask for the list of a tracked entry.
            Region::Untracked => unreachable!("untracked entries are on no list"),
        }
    }
}

/// Protected's tail is demoted once its age is this many epochs (an epoch
/// is a fifth of the idle limit), so it went between four and five fifths
/// of `protected_idle_factor` cache-sizes, and at most that, without a hit.
const DEMOTE_AGE: u8 = 5;
/// Ages are kept modulo 8 (3 bits); they never reach 8, as every new epoch
/// clamps the protected entries older than [`DEMOTE_AGE`] to it.
const AGE_MASK: u8 = 7;

/// The fraction of the cache's entries the frequency sketch is sized for,
/// as a right shift of the count: the whole cache, half, a quarter or an
/// eighth.
///
/// Four coarse sizes with overlapping bands, so the sketch is resized
/// only when the share clearly moved. Each resize merges or splits blocks
/// (`FrequencySketch::resize`), and merging inflates estimates by
/// collisions: a sketch that followed the share in fine steps, period by
/// period, was re-merged at every move, and the inflated counts let scan
/// keys through (`scan` lost 3 points at 5,000 equal entries). Doubling
/// or halving moves each block's counts to the blocks that split or join
/// its hash range, so little is lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SketchSize {
    shift: u32,
}

impl SketchSize {
    const WHOLE: SketchSize = SketchSize { shift: 0 };
    const EIGHTH: SketchSize = SketchSize { shift: 3 };

    /// The size for recency share `w`, moving from `self` only when `w`
    /// is clearly past a threshold: half from 0.45 (back to whole below
    /// 0.35), a quarter from 0.7 (back to half below 0.6, and straight to
    /// whole below 0.45, as the share can fall that far in a period or
    /// two), an eighth from 0.85 (back below 0.75). Main then holds at
    /// most 55%, 30% or 15% of the cache.
    fn follow(self, w: f64) -> SketchSize {
        let shift = match self.shift {
            _ if w >= 0.85 => 3,
            3 if w >= 0.75 => 3,
            _ if w >= 0.7 => 2,
            2 if w >= 0.6 => 2,
            _ if w >= 0.45 => 1,
            1 if w >= 0.35 => 1,
            _ => 0,
        };
        SketchSize { shift }
    }

    fn entries(self, cache: usize) -> usize {
        (cache >> self.shift).max(16)
    }
}

/// Per-slot links, the region and the age of the last access: 8 bytes, as
/// for exact LRU. Each `u32` holds a 29-bit slot id; the 3 bits above hold
/// the region (in `prev`) and the epoch of the entry's insert or last hit
/// modulo 8 (in `next`). No key fingerprint: the store passes the key's
/// hash on every hit and gives it on request at eviction, for the few
/// entries a duel and the ghost history need.
#[derive(Clone, Copy, Debug)]
struct Node {
    prev: u32,
    next: u32,
}

impl Node {
    fn prev(self) -> u32 {
        self.prev & ID_MASK
    }

    fn next(self) -> u32 {
        self.next & ID_MASK
    }

    fn set_prev(&mut self, id: u32) {
        self.prev = (self.prev & !ID_MASK) | id;
    }

    fn set_next(&mut self, id: u32) {
        self.next = (self.next & !ID_MASK) | id;
    }

    fn region(self) -> Region {
        Region::from_bits(self.prev >> ID_BITS)
    }

    fn set_region(&mut self, region: Region) {
        self.prev = (self.prev & ID_MASK) | ((region as u32) << ID_BITS);
    }

    /// The epoch (modulo 8) of the entry's insert or last hit.
    fn touched(self) -> u8 {
        (self.next >> ID_BITS) as u8
    }

    fn set_touched(&mut self, epoch: u8) {
        self.next = (self.next & ID_MASK) | (u32::from(epoch & AGE_MASK) << ID_BITS);
    }
}

const UNLINKED: Node = Node {
    prev: NIL,
    next: NIL,
};

/// The 32 bits of a key hash the policy keeps: the high half of its
/// re-mix, so any hash (even a weak one) spreads over them.
fn fingerprint(key_hash: u64) -> u32 {
    (sketch::mix(key_hash) >> 32) as u32
}

/// Where an instance's observations go and its window share comes from.
// One per policy instance, read on every lookup: the bytes a shared
// instance leaves unused cost less than a pointer chase would.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
enum Feedback {
    /// A controller of its own: a cache on its own.
    Own(HillClimber),
    /// The store's, shared with its other shards' instances.
    Shared(Member),
}

impl Feedback {
    fn observe(&mut self, signal: Signal, now: Millis) {
        match self {
            Feedback::Own(climber) => climber.observe(signal, now),
            Feedback::Shared(member) => member.observe(signal),
        }
    }

    fn rotations_are_slow(&self) -> bool {
        match self {
            Feedback::Own(climber) => climber.rotations_are_slow(),
            Feedback::Shared(member) => member.group().rotations_are_slow(),
        }
    }

    fn share(&self) -> f64 {
        match self {
            Feedback::Own(climber) => climber.recency_share(),
            Feedback::Shared(member) => member.group().recency_share(),
        }
    }

    /// The instance asks for a period of `period` requests and holds
    /// `entries` entries.
    fn set_size(&mut self, period: u64, entries: usize) {
        match self {
            Feedback::Own(climber) => climber.set_period(period),
            Feedback::Shared(member) => member.set_size(period, entries),
        }
    }

    /// The entries the controller steers, given the instance's own
    /// `entries`: the store's, when it is shared.
    fn entries(&self, entries: usize) -> usize {
        match self {
            Feedback::Own(_) => entries,
            Feedback::Shared(member) => member.group().entries().max(entries),
        }
    }
}

/// One intrusive doubly linked list: head is most recent.
#[derive(Clone, Copy, Debug)]
struct List {
    head: u32,
    tail: u32,
    len: usize,
}

const EMPTY: List = List {
    head: NIL,
    tail: NIL,
    len: 0,
};

/// The adaptive hybrid policy; see the module docs.
#[derive(Clone, Debug)]
pub struct Ahe {
    nodes: Vec<Node>,
    /// Window, probation, protected.
    lists: [List; 3],
    tracked: usize,
    /// The cache's size in entries, as seen at the last eviction (or the
    /// most entries tracked before the first one).
    size: usize,
    sketch: FrequencySketch,
    ghost: Ghost,
    feedback: Feedback,
    deadlines: Deadlines,
    /// The fingerprint of the last miss: its insert must not count twice.
    pending_miss: Option<u32>,
    /// The clock of `Node::touched`: epochs of `epoch_len` hits and
    /// misses, modulo 8.
    epoch: u8,
    /// Hits and misses since the epoch began.
    epoch_ticks: u64,
    /// Hits and misses per epoch: a fifth of the idle limit.
    epoch_len: u64,
    rng: SmallRng,
    /// The sketch's size as a fraction of the cache.
    sketch_size: SketchSize,
    /// The entry count the sketch and the ghost history were last sized
    /// for.
    history_sized: usize,
    /// Entries removed (expired or deleted) whose room newcomers have not
    /// yet taken through a spill into probation (see [`Ahe::spill_window`]).
    refills: usize,
    config: AheConfig,
}

impl Ahe {
    /// An empty policy.
    pub fn new(config: AheConfig) -> Self {
        Ahe {
            nodes: Vec::new(),
            lists: [EMPTY; 3],
            tracked: 0,
            size: 0,
            sketch: FrequencySketch::default(),
            ghost: Ghost::sampling(config.ghost_sample),
            feedback: Feedback::Own(HillClimber::new(config.climber.clone())),
            deadlines: Deadlines::default(),
            pending_miss: None,
            epoch: 0,
            epoch_ticks: 0,
            epoch_len: u64::MAX,
            rng: SmallRng::seed_from_u64(config.seed),
            sketch_size: SketchSize::WHOLE,
            history_sized: 0,
            refills: 0,
            config,
        }
    }

    /// One of a store's instances (one per shard), steered by the store's
    /// `controller` with the others instead of a controller of its own
    /// (see `shared.rs`); `config.climber` is then unused, the
    /// controller's own applies.
    pub fn sharing(config: AheConfig, controller: SharedController) -> Self {
        Ahe {
            feedback: Feedback::Shared(Member::join(controller)),
            ..Ahe::new(config)
        }
    }

    /// Its own controller, for inspection; `None` when it shares a
    /// store's.
    pub fn controller(&self) -> Option<&HillClimber> {
        match &self.feedback {
            Feedback::Own(climber) => Some(climber),
            Feedback::Shared(_) => None,
        }
    }

    fn region(&self, id: EntryId) -> Region {
        self.nodes
            .get(id.index())
            .map_or(Region::Untracked, |n| n.region())
    }

    fn unlink(&mut self, i: u32) {
        let node = self.nodes[i as usize];
        let (prev, next) = (node.prev(), node.next());
        let list = &mut self.lists[node.region().list()];
        list.len -= 1;
        match prev {
            NIL => list.head = next,
            p => self.nodes[p as usize].set_next(next),
        }
        match next {
            NIL => list.tail = prev,
            n => self.nodes[n as usize].set_prev(prev),
        }
    }

    fn push_front(&mut self, i: u32, region: Region) {
        let list = &mut self.lists[region.list()];
        let node = &mut self.nodes[i as usize];
        node.set_prev(NIL);
        node.set_next(list.head);
        match list.head {
            NIL => list.tail = i,
            h => self.nodes[h as usize].set_prev(i),
        }
        list.head = i;
        list.len += 1;
        self.nodes[i as usize].set_region(region);
    }

    fn push_back(&mut self, i: u32, region: Region) {
        let list = &mut self.lists[region.list()];
        let node = &mut self.nodes[i as usize];
        node.set_prev(list.tail);
        node.set_next(NIL);
        match list.tail {
            NIL => list.head = i,
            t => self.nodes[t as usize].set_next(i),
        }
        list.tail = i;
        list.len += 1;
        self.nodes[i as usize].set_region(region);
    }

    fn relink(&mut self, i: u32, region: Region) {
        self.unlink(i);
        self.push_front(i, region);
    }

    fn main_len(&self) -> usize {
        self.lists[1].len + self.lists[2].len
    }

    fn window_target(&self) -> usize {
        let share = self.feedback.share();
        // `+ 0.5` and truncation round as `f64::round` does for these
        // non-negative values, without a libm call on every eviction.
        ((share * self.size as f64 + 0.5) as usize).clamp(1, self.size.max(1))
    }

    /// Protected's share shrinks as recency's grows: trusting recency
    /// also means turning main over faster, so stale favourites are
    /// demoted to probation (and its duels) sooner.
    fn protected_max(&self) -> usize {
        let main = self.size.saturating_sub(self.window_target());
        let share = self.config.protected_share * (1.0 - self.feedback.share());
        (share * main as f64 + 0.5) as usize
    }

    /// Moves the window's overflow into probation, without a duel, while
    /// main is below its share of the cache as it will be after the
    /// eviction under way (`tracked - 1` entries). That is warm-up, or the
    /// window having just shrunk, as Caffeine moves entries when it shrinks
    /// its window: there the entry goes to probation's head.
    ///
    /// It is also what happens after keys expire or are deleted: main
    /// lost entries without an eviction, newcomers took the room through
    /// the window, and the window's overflow now spills. Such an entry
    /// skipped the duel only because there was room, so it goes to
    /// probation's tail instead, one per entry removed (`refills`): it is
    /// the next victim, and the next window candidate must out-count it,
    /// unless it is hit first. At the head, a stream of such newcomers
    /// pushed out probation's older entries, which had won their duels:
    /// on `ttl` (a key expiring every 20 requests) the store engine, whose
    /// expiry cycle removes keys, scored 0.2 to 0.3 points below the
    /// policy engine, which evicts expired keys instead, at the same share
    /// (benches/hit-ratio.md, "One shard's `ttl`, taken apart").
    fn spill_window(&mut self) {
        let target = self.window_target();
        while self.lists[0].len > target && self.main_len() + target + 1 < self.tracked {
            let tail = self.lists[0].tail;
            self.unlink(tail);
            if self.refills > 0 {
                self.refills -= 1;
                self.push_back(tail, Region::Probation);
            } else {
                self.push_front(tail, Region::Probation);
            }
        }
    }

    /// How many epochs ago entry `i` was last accessed (at most
    /// [`DEMOTE_AGE`] for a protected entry; see [`Ahe::tick`]).
    fn age(&self, i: u32) -> u8 {
        self.epoch.wrapping_sub(self.nodes[i as usize].touched()) & AGE_MASK
    }

    /// Demotes protected's tail to probation if it went about a whole
    /// sketch period (`protected_idle_factor` cache-sizes of requests)
    /// without a hit: the counts that earned its place have been halved
    /// since, and it should defend its place in duels again. This is what
    /// clears a rotated-out hot set; without it, stale favourites leave
    /// protected only as fast as newcomers are promoted into it.
    fn demote_idle_protected(&mut self) {
        let tail = self.lists[2].tail;
        if tail != NIL && self.config.protected_idle_factor > 0 && self.age(tail) >= DEMOTE_AGE {
            self.relink(tail, Region::Probation);
        }
    }

    /// Main's victim: probation's tail, else protected's.
    fn main_victim(&self) -> u32 {
        match self.lists[1].tail {
            NIL => self.lists[2].tail,
            t => t,
        }
    }

    /// TinyLFU's duel: whether `candidate` should replace `victim`, whose
    /// keys hash to `candidate_hash` and `victim_hash`. A victim that
    /// already went round probation without a hit (spared) loses to any
    /// candidate that has repeated at all.
    fn admit(&mut self, victim: u32, candidate_hash: u64, victim_hash: u64) -> bool {
        let c = self.sketch.frequency(fingerprint(candidate_hash));
        let v = self.sketch.frequency(fingerprint(victim_hash));
        c > v
            || (c > 0 && self.nodes[victim as usize].region() == Region::Spared)
            || (c >= JITTER_MIN_FREQUENCY && self.rng.random::<u8>() & 127 == 0)
    }

    fn detach(&mut self, i: u32) {
        self.unlink(i);
        self.nodes[i as usize].set_region(Region::Untracked);
        self.deadlines.remove(EntryId(i));
        self.tracked -= 1;
    }

    /// Sizes the window, protected and the controller's period for a
    /// cache of `size` entries.
    fn resize(&mut self, size: usize) {
        self.size = size;
        self.feedback
            .set_size(u64::from(self.config.period_factor) * size as u64, size);
        // Without an idle limit no age is read: the clock stands still, so
        // no epoch walks protected's tail.
        let limit = u64::from(self.config.protected_idle_factor) * size as u64;
        self.epoch_len = match limit {
            0 => u64::MAX,
            l => (l / u64::from(DEMOTE_AGE)).max(1),
        };
    }

    /// Keeps the sketch and the ghost history sized for the entries
    /// tracked now: when that count leaves `[15/16, 17/16]` of the size
    /// they were last given, both are resized to exactly that count (the
    /// sketch to its fraction of it, [`SketchSize`]), keeping what they
    /// hold; the sketch is resized too when the share moves it to another
    /// fraction. A resize is O(n) and needs the count to move by n/16 or
    /// the share to cross a band, so O(1) amortised; memory follows the
    /// entries down as well as up, and a full cache (whose count stays
    /// put) pays for exactly its entries.
    fn fit_history(&mut self) {
        let t = self.tracked.max(16);
        // Where the hot set rotates slowly the window comes back down a
        // period after each jump, and a sketch shrunk for the jump would
        // grow back with every count merged eight ways: it stays whole.
        let follows = self.config.sketch_follows_share && !self.feedback.rotations_are_slow();
        let size = match follows {
            true => self.sketch_size.follow(self.feedback.share()),
            false => SketchSize::WHOLE,
        };
        let sized = self.history_sized;
        if size != self.sketch_size || t > sized + sized / 16 || t < sized - sized / 16 {
            self.sketch_size = size;
            self.history_sized = t;
            self.sketch.resize(size.entries(t), t);
            let large = self.feedback.entries(t) >= self.config.ghost_large_from;
            let sample = match (large, size) {
                (true, SketchSize::EIGHTH) => self.config.ghost_sample_top,
                (true, _) => self.config.ghost_sample_large,
                (false, _) => self.config.ghost_sample,
            };
            self.ghost.resize(t, sample);
        }
    }

    /// Advances the clock by one access. When an epoch ends, protected's
    /// entries older than [`DEMOTE_AGE`] epochs (they sit at its tail, as
    /// protected is ordered by last access) are clamped to that age, so an
    /// age stays below 8 and never wraps its 3 bits. Clamped entries are
    /// exactly those the next evictions demote, so the walk is O(1)
    /// amortised.
    fn tick(&mut self) {
        self.epoch_ticks += 1;
        if self.epoch_ticks < self.epoch_len {
            return;
        }
        self.epoch_ticks = 0;
        self.epoch = self.epoch.wrapping_add(1) & AGE_MASK;
        let oldest = self.epoch.wrapping_sub(DEMOTE_AGE) & AGE_MASK;
        let mut cur = self.lists[2].tail;
        while cur != NIL && self.age(cur) > DEMOTE_AGE {
            let node = &mut self.nodes[cur as usize];
            node.set_touched(oldest);
            cur = node.prev();
        }
    }

    /// Chooses the victim among tracked, unexpired entries, the side
    /// whose advice it follows, and its key's hash; `key_hash` gives the
    /// keys' hashes.
    fn choose(&mut self, key_hash: &dyn Fn(EntryId) -> u64) -> (u32, Side, u64) {
        self.spill_window();
        self.demote_idle_protected();
        let target = self.window_target();
        let hash_of = |i: u32| key_hash(EntryId(i));
        if self.main_len() == 0 {
            let tail = self.lists[0].tail;
            return (tail, Side::Frequency, hash_of(tail));
        }
        let victim = self.main_victim();
        if self.lists[0].len <= target {
            return (victim, Side::Recency, hash_of(victim));
        }
        let candidate = self.lists[0].tail;
        let (c_hash, v_hash) = (hash_of(candidate), hash_of(victim));
        if self.admit(victim, c_hash, v_hash) {
            self.relink(candidate, Region::Probation);
            (victim, Side::Recency, v_hash)
        } else {
            // The victim defended its place on frequency: it goes round
            // probation again, as a CLOCK hand spares a referenced page, so
            // the next newcomer duels the next-oldest entry instead of the
            // same stale favourite until the sketch ages it.
            if self.nodes[victim as usize].region() == Region::Probation {
                self.relink(victim, Region::Spared);
            }
            (candidate, Side::Frequency, c_hash)
        }
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
        debug_assert_eq!(self.region(id), Region::Untracked, "{id:?} inserted twice");
        self.tracked += 1;
        if self.tracked > self.size {
            self.resize(self.tracked);
        }
        self.fit_history();
        let fp = fingerprint(key_hash);
        if self.pending_miss.take() != Some(fp) {
            self.sketch.increment(fp);
        }
        grow_for(&mut self.nodes, id.index(), UNLINKED);
        self.nodes[id.index()].set_touched(self.epoch);
        self.push_front(id.0, Region::Window);
        self.deadlines.observe(now);
    }

    fn on_hit(&mut self, id: EntryId, key_hash: u64, now: Millis) {
        let region = self.region(id);
        if region == Region::Untracked {
            return;
        }
        self.sketch.increment(fingerprint(key_hash));
        self.feedback.observe(Signal::Hit, now);
        self.tick();
        self.nodes[id.index()].set_touched(self.epoch);
        match region {
            Region::Probation | Region::Spared => {
                self.relink(id.0, Region::Protected);
                if self.lists[2].len > self.protected_max() {
                    let tail = self.lists[2].tail;
                    self.relink(tail, Region::Probation);
                }
            }
            _ => self.relink(id.0, region),
        }
    }

    fn on_miss(&mut self, key_hash: u64, now: Millis) {
        let fp = fingerprint(key_hash);
        self.sketch.increment(fp);
        self.tick();
        self.pending_miss = Some(fp);
        self.feedback.observe(Signal::Miss, now);
        if let Some(side) = self.ghost.take(fp) {
            self.feedback.observe(Signal::GhostHit(side), now);
        }
    }

    fn on_expiry_change(&mut self, id: EntryId, expires_at: Option<Millis>) {
        match expires_at {
            Some(deadline) if self.config.expired_first && self.region(id) != Region::Untracked => {
                self.deadlines.set(id, deadline);
            }
            _ => self.deadlines.remove(id),
        }
    }

    fn on_remove(&mut self, id: EntryId) {
        if self.region(id) != Region::Untracked {
            // At most a cache's worth: a refill is a removed entry's room.
            self.refills = (self.refills + 1).min(self.size);
            self.detach(id.0);
            self.fit_history();
        }
    }

    fn evict(&mut self, now: Millis, key_hash: &dyn Fn(EntryId) -> u64) -> Option<EntryId> {
        if self.tracked == 0 {
            return None;
        }
        self.deadlines.observe(now);
        if self.config.expired_first {
            if let Some(id) = self.deadlines.expired(now) {
                self.detach(id.0);
                self.fit_history();
                return Some(id);
            }
        }
        self.resize(self.tracked);
        let (victim, side, hash) = self.choose(key_hash);
        self.feedback.observe(Signal::Evicted(side), now);
        if self.ghost.record(fingerprint(hash), side) {
            self.feedback.observe(Signal::Remembered(side), now);
        }
        self.detach(victim);
        self.fit_history();
        Some(EntryId(victim))
    }

    fn len(&self) -> usize {
        self.tracked
    }

    fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.sketch.heap_bytes()
            + self.ghost.heap_bytes()
            + self.deadlines.heap_bytes()
    }

    fn controller_state(&self) -> Option<ControllerState> {
        let (t, (learning_rate, window_hit_ratio)) = match &self.feedback {
            Feedback::Own(c) => (c.totals(), (c.learning_rate(), c.window_hit_ratio())),
            Feedback::Shared(m) => (m.totals(), m.progress()),
        };
        Some(ControllerState {
            recency_weight: self.feedback.share(),
            learning_rate,
            ghost_hits_recency: t.ghost_recency,
            ghost_hits_frequency: t.ghost_frequency,
            decisions_recency: t.evicted_recency,
            decisions_frequency: t.evicted_frequency,
            window_hit_ratio,
        })
    }
}

#[cfg(test)]
mod tests;
