//! AHE's feedback loop: how much of the cache the recency window gets,
//! learned from the hit ratio and the ghost history, separated from the
//! cache so it can be tested on synthetic signals.
//!
//! **Hill climbing.** Every `period` requests the controller compares the
//! period's hit ratio with the previous one. If it did not fall, the last
//! step was good and the next goes the same way; if it fell, the direction
//! reverses. The step size shrinks by `step_decay` each period, so the
//! share settles where the hit ratio peaks. This is Caffeine's adaptive
//! window ("hill climber"; Einziger, Eytan, Friedman and Manes, "Adaptive
//! Software Cache Management", Middleware 2018).
//!
//! A period without a single hit takes no step: every share scores nothing
//! in it (a cold start), so the hit ratio cannot rank them.
//!
//! **Lopsided regrets steer every step.** A period's hit ratio moves with
//! the workload as much as with the share (a rotating hot set makes it
//! jump every rotation), so on its own the climber can wander for many
//! periods. The ghost history measures the share's mistakes directly: when
//! one side's regret rate (below) exceeds the other's by `regret_margin` or
//! more, the step goes the way the regrets point, whatever the hit ratio
//! did; only between the two does hill climbing decide.
//!
//! **Ghost regrets pick the direction after a change.** When the hit
//! ratio moves by more than `restart_threshold` in one period the workload
//! has changed, and the old direction means nothing. The step is reset to
//! its initial size and pointed by the ghost history: each side's regret
//! rate is its ghost hits per eviction it decided in the period (LeCaR,
//! CACHEUS). Frequency's regrets (newcomers the admission filter rejected
//! came back) grow the window; recency's regrets (established entries
//! dropped for newcomers came back) shrink it. Hill climbing alone would
//! have to guess, and a wrong guess costs a whole period.
//!
//! **Persistent regrets surge.** A period's regret balance is noisy (a
//! few hundred remembered evictions a side), so the controller also keeps
//! it smoothed over periods. When the smoothed balance stays lopsided by
//! `surge_margin` or more, the evidence is no longer noise and the climber
//! stops creeping: each period the step doubles in the direction the
//! regrets point, up to `max_step`. A rotating hot set (`shift`), whose
//! rejected newcomers keep coming back, thus reaches a large window in a
//! few periods instead of twenty, while skewed and scanning workloads,
//! whose balance stays within the margin, keep Caffeine's cautious steps.
//! When the balance falls back within the margin, the step is cut back to
//! at most `initial_step` and hill climbing resumes. A surge down takes at
//! most `shrink_fraction` of the share a period (or `initial_step`, if
//! that is more): recency-heavy mixes (`ttl`) have their best share
//! between the extremes, near 0.1, and doubling steps down overshot it to
//! nothing, period after period. From a large share the way down stays
//! fast.
//!
//! **A rotated hot set jumps the window to its maximum.** Periods are long
//! (three cache-sizes of requests), and a surge needs two of them to start,
//! so a hot set that rotated kept a frequency-guarded cache full of stale
//! keys for several periods. The climber therefore also looks at each
//! period in `checks_per_period` slices (*checks*). When a check's hit
//! ratio falls by `restart_threshold` or more below the previous check's,
//! it watches the next two periods' checks. If two checks in a row are
//! still `rotation_depth` below the level before the fall, and in each the
//! newcomers the filter turned away come back, the hot set rotated under
//! the filter: the share jumps to `max_share`, and the watch ends. A check
//! shows that in either of two ways:
//!
//! - frequency's regret rate exceeds recency's by more than
//!   `regret_margin`;
//! - or frequency's regret rate is at least what it was over the last
//!   period before the fall, and below `loop_rate`. Right after a
//!   rotation both sides err: main also drops keys that were lukewarm and
//!   just turned hot, so recency's rate can lead for a few checks while
//!   the filter's holds. On `shift` at 17,000 entries this confirmed the
//!   rotation three checks sooner than the balance did.
//!
//! A scan (`mixed`) makes the hit ratio fall too, but the keys the filter
//! turns away never come back, so its rate collapses, and the hit ratio
//! recovers in the check after. A loop larger than the cache (`loop`)
//! brings nearly every evicted key back (rates near 1), and there a large
//! window is the worst choice, hence `loop_rate`. Stable skew never falls.
//! Hill climbing and the regrets bring the share back down from the
//! maximum if the jump was wrong.
//!
//! **A jump is let down when the rotations stop.** At the top, main holds
//! a twentieth of the cache, and when the workload settles into stable
//! skew the regrets cannot tell the sides apart for a long time: the
//! window stayed up for 300,000 requests after a rotating hot set gave way
//! to skew at 17,000 entries. A rotating hot set makes the hit ratio fall
//! at every rotation, so a share that jumped is held only while such falls
//! keep coming: after twice the periods they came apart (at least
//! `jump_hold`) without one, the next step takes `shrink_fraction` of the
//! share, and hill climbing and the regrets go on from there. If the hot
//! set rotates again, the share jumps again. Where the falls come far
//! apart (`slow_rotation`), each hot set stays long enough for frequency
//! to learn it and pay: the share is let down one period after each jump.
//!
//! A check whose filter regrets are a loop's (`loop_rate`) never confirms
//! a rotation, whatever the balance says.
//!
//! **A loop takes the window down.** When nearly every eviction of a
//! period comes back (`loop_comeback` of them, and at least `loop_rate`
//! on each side), every key returns, at a distance beyond the cache (a
//! loop larger than it): no newcomer is better than what main holds, and
//! a window entry is gone before its key comes round again. The step goes
//! down as far as a surge down may (`shrink_fraction` of the share, or
//! `initial_step`), to the share the climber starts at and no further: a
//! window of one entry did worse than one of 1% (in one shard at 5,000
//! entries, pinned: 77.9% against 80.7%, and 79.5 to 80.2 at 0.2%, 0.5%
//! and 2%). With both rates near 1 the regret balance is a coin toss,
//! and the hit ratio swings by up to ten points from period to period:
//! steered by either, the share of `loop` in one shard wandered between
//! none and a third, or climbed to the top, and the cell lost 6 to 25
//! points (5,000 entries, seeds 1 to 8).
//!
//! **One per store.** A store's shards share one climber
//! ([`SharedController`](super::SharedController)): their observations are
//! pooled in batches, and its period is three times the store's entries.
//!
//! Everything is counted in requests, never in time, so the controller
//! behaves the same whatever the request rate.

use crate::ahe::ghost::Side;
use crate::Millis;

/// One observation fed to a [`Controller`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// A lookup hit.
    Hit,
    /// A lookup missed.
    Miss,
    /// A miss found its key in the ghost history of `Side`'s evictions.
    GhostHit(Side),
    /// The policy evicted an entry on `Side`'s advice.
    Evicted(Side),
    /// The ghost history remembers that eviction (it keeps a sample of
    /// them): ghost hits are rated per remembered eviction.
    Remembered(Side),
}

/// A feedback loop that turns observations into a recency share.
pub trait Controller: Send {
    /// Feeds one observation.
    fn observe(&mut self, signal: Signal, now: Millis);
    /// The share of the cache recency should get, always within `0.0..=1.0`.
    fn recency_share(&self) -> f64;
}

/// Parameters of [`HillClimber`].
#[derive(Clone, Debug, PartialEq)]
pub struct ClimberConfig {
    /// Recency share to start from. Default: 0.01, Caffeine's initial
    /// window: on skewed workloads a small window is best, and the climber
    /// grows it where it is not.
    pub initial_share: f64,
    /// Lower bound of the share. Default: 0.0 (the policy still keeps one
    /// window entry).
    pub min_share: f64,
    /// Upper bound of the share. Default: 0.95, so that the
    /// frequency-admitted region never shrinks below a twentieth of the
    /// cache (Caffeine's bound is 0.8). Where a large window serves best (a
    /// rotating hot set) recency is nearly all there is: on the
    /// equal-memory simulator (17,000 entries, 16 shards) `shift` gained
    /// 0.3 points from 0.8 to 0.9, with the sketch an eighth from a share
    /// of 0.85, and 0.04 more at 0.95 (seeds 42 and 7); the other
    /// patterns, whose share stays small, did not move. Above that the
    /// window comes down late when skew returns: at 1.0, main is empty and
    /// `shift` itself lost 0.5-0.8.
    pub max_share: f64,
    /// Size of the first step and of a step after a restart, as a share.
    /// Default: 0.0625 (Caffeine's 6.25%), big enough to cross from a
    /// skewed to a recency-friendly optimum in a few periods.
    pub initial_step: f64,
    /// Factor applied to the step size each period. Default: 0.98,
    /// Caffeine's: the step halves in about 35 periods, so the share
    /// settles without freezing.
    pub step_decay: f64,
    /// A period-to-period hit-ratio change at least this large means the
    /// workload changed; the climber restarts. Default: 0.05, Caffeine's.
    pub restart_threshold: f64,
    /// When the two sides' regret rates of a period differ by at least
    /// this much, the step follows the regrets instead of the hit ratio.
    /// Default: 0.05. On the equal-memory simulator (seeds 42 and 7,
    /// period three cache-sizes) it lifted `shift` by 2.1-2.6 points and
    /// `zipf` by 0.3-0.4, left `mixed`, `scan`, `ttl`, `loop`, `zipf06` and
    /// `phase` within 0.1, and cost `onehit` 0.5; `f64::INFINITY` turns
    /// steering off.
    pub regret_margin: f64,
    /// When the smoothed regret balance is at least this lopsided, the
    /// step doubles each period in its direction (up to `max_step`).
    /// Default: 0.10. Over whole runs a rotating hot set (`shift`) shows
    /// a balance of +0.12 to +0.2, skewed and scanning workloads -0.03 to
    /// -0.07, and `ttl` crosses zero as the window grows. At 5,000 equal
    /// entries over 16 shards (four seeds) `ttl` lost 0.28 points to the
    /// climber without surges at a margin of 0.08, 0.15 at 0.10 and 0.08
    /// at 0.12; on the equal-memory simulator at scale 10 (16 shards,
    /// the sketch following the share) `shift` went from 72.1% without
    /// surges to 72.3, 72.2 and 72.2%. `f64::INFINITY` turns surging off.
    pub surge_margin: f64,
    /// The largest step a surge takes. Default: 0.25, so that from the
    /// initial share a surge reaches the maximum in four periods.
    pub max_step: f64,
    /// Weight of the newest period in the smoothed regret balance (an
    /// exponential moving average). Default: 0.5: a surge needs two
    /// lopsided periods in a row, or one very lopsided one.
    pub smoothing: f64,
    /// The largest fraction of the share a surge takes down in one period
    /// (it may always take `initial_step`). Default: 0.5. On `ttl` at
    /// 17,000 entries over 16 shards doubling steps down overshot to a
    /// share of 0 every few periods; halving at most lifted it from 84.1%
    /// to 84.4-84.5% (seeds 42 and 7), with `scan` still reaching its small
    /// window (12.9%). A cap of one initial step a period did as well on
    /// `ttl`, but after a rotating hot set gave way to stable skew the
    /// window took fourteen periods to come down from its maximum (the
    /// ferrum-bench test `after_a_rotating_hot_set_the_window_comes_back_down_for_stable_skew`).
    pub shrink_fraction: f64,
    /// Checks a period is sliced into to catch a rotated hot set (see the
    /// module docs); 0 turns the checks off. Default: 6, a check of half a
    /// cache-size of requests: at 17,000 entries over 16 shards a check
    /// still remembers a few hundred evictions a side, and a scan of
    /// `mixed` (20,000 requests) spans at most three checks.
    pub checks_per_period: u32,
    /// How far below the level before a fall a check's hit ratio must
    /// still be to confirm a rotation. Default: 0.03: after a rotation of
    /// `shift` the checks sit 4-15 points below, while after a scan of
    /// `mixed` the hit ratio is back within a point in the next check.
    pub rotation_depth: f64,
    /// The regret rate of the filter from which a fall is taken for a
    /// loop larger than the cache, not a rotation: at least this share
    /// of the newcomers turned away come back within a check. Default:
    /// 0.5. After a rotation of `shift` the rate is 0.2-0.3, as before
    /// it; in `loop` it swings up to 1. Without the bound, `loop` at 5,000
    /// entries in one shard fell from 63.1% to 31.2% (seed 42); any bound
    /// from 0.3 to 0.5 kept it. A period is a loop's, and takes the window
    /// down, when both sides' rates reach it and `loop_comeback` holds.
    pub loop_rate: f64,
    /// The share of a period's remembered evictions, both sides together,
    /// that must come back for the period to be taken as a loop's (with
    /// each side's rate at `loop_rate` or more), which takes the window
    /// down (see the module docs). Default: 0.9. In `loop` (store engine,
    /// 5,000 entries, one shard and 16, seeds 1 to 3) nine periods in ten
    /// reach 0.977 or more, and the lowest was 0.73. On the other eight
    /// patterns the most at 5,000 entries was 0.34 (`ttl`, seeds 1 to 4);
    /// at 17,000 equal-memory entries over 16 shards `ttl` reached 0.78
    /// (seeds 1 to 6, at a share of 0.95), with both sides above 0.5,
    /// which is why each side's rate alone does not decide.
    pub loop_comeback: f64,
    /// The fewest periods without a fall of the hit ratio after which a
    /// share that jumped is let down: the next step takes
    /// `shrink_fraction` of it, as a surge down does (see the module docs).
    /// Once falls have come at a pace, the share waits twice that pace
    /// instead, if longer. 0 holds it until hill climbing and the regrets
    /// bring it down. Default: 4. A rotating hot set falls every rotation:
    /// in `shift` every 2 periods at 17,000 entries, 4.4 at scale 10's
    /// 75,300 and 6.7 at 5,000. A fixed hold of 3 cost `shift` 0.24 points
    /// at scale 10, one of 6 cost it up to 0.11 at 5,000 entries. On six
    /// traces of a rotating hot set followed by twice as much stable skew
    /// (17,000 equal entries) AHE led allkeys-lru by 0.74 points without
    /// the release and 1.15 with it: at the top the regrets cannot tell the
    /// sides apart, and the window stayed up for 300,000 requests of skew.
    pub jump_hold: u32,
    /// A confirming check whose filter regret rate (frequency's) is at
    /// least this many times its rate over the last period before the
    /// fall, at least twice `regret_margin` and below `loop_rate`, jumps
    /// the share at once instead of waiting for a second confirming
    /// check. Default: 1.5. After the first rotation of `shift` (17,000
    /// entries over 16 shards, seed 1) the check of the fall rated 0.28
    /// against 0.12 before: the new hot keys the filter turns away come
    /// straight back (0.22 to 0.43 from 12,000 to 25,000 entries and live).
    /// The first check of a scan of `mixed` rated 0.13 against 0.12, as
    /// its keys never return, and in `loop` the rate is above
    /// `loop_rate`. Rates of a few hundredths can triple by chance: on
    /// `scan` at 40,000 equal-memory entries 0.014 became 0.067, the
    /// window jumped and the cell lost 0.2 points (seed 2). Bounding the
    /// rise by 0.1 instead of the rate missed a live rotation that rose
    /// from 0.12 to 0.22 (`shift` 0.1 lower). Every check of delay costs
    /// the rotated epoch: lukewarm keys turned away in it miss again
    /// later. On the equal-memory simulator (six seeds) `shift` gained
    /// 0.09 points (74.87 to 74.96, allkeys-lru 75.38), the other patterns
    /// did not move, nor did any cell at scale 10 or at 5,000 equal
    /// entries (one shard or 16) by more than 0.03. `f64::INFINITY` waits
    /// for two checks always.
    ///
    /// The check's rate must also be no lower than the check's just
    /// before the fall. On the equal-memory simulator (17,000 entries,
    /// seed 42) the first scan of `mixed` began in a check rated 0.18,
    /// against 0.12 over the period before (the first after the warm-up)
    /// but 0.25 and 0.28 in the two checks just before: the scan's keys,
    /// turned away, never return and dilute the rate. The window jumped,
    /// each later scan's fall held it at the top, and the cell scored
    /// 64.0 (allkeys-lru's) instead of 68.3. With the bound the jump waits
    /// for a second confirming check there; `shift` lost 0.06 to 0.08 on
    /// 4 of 18 seeds and no other cell moved (seeds 1 to 16, 42 and 43).
    pub sharp_rise: f64,
    /// Falls of the hit ratio at least this many periods apart (three
    /// cache-sizes of requests each) are a hot set that stays put long
    /// enough for frequency to learn it: a share that jumped is let down
    /// one period after the fall instead of being held (see
    /// `jump_hold`). Default: 6 (18 cache-sizes); 0 holds every jump.
    /// Right after a rotation a large window is best, but on `shift` at
    /// 5,000 entries (an epoch is 20 cache-sizes, falls 6 or 7 periods
    /// apart) a share of 0.6 led 0.95 from the fifth cache-size after the
    /// rotation on, and a share of 0.01 led both from the fifteenth
    /// (16 shards, seed 1); held at the top, AHE scored 64.68% on eight
    /// seeds, let down it scores 65.09 (fixed 0.6: 65.33). At 17,000
    /// equal-memory entries falls come 2 periods apart and at scale 10's
    /// 75,300 4 or 5, where a fixed hold of 3 periods had cost `shift`
    /// 0.24 points: the rule leaves both alone.
    pub slow_rotation: u32,
}

impl Default for ClimberConfig {
    fn default() -> Self {
        ClimberConfig {
            initial_share: 0.01,
            min_share: 0.0,
            max_share: 0.95,
            initial_step: 0.0625,
            step_decay: 0.98,
            restart_threshold: 0.05,
            regret_margin: 0.05,
            surge_margin: 0.10,
            max_step: 0.25,
            smoothing: 0.5,
            shrink_fraction: 0.5,
            checks_per_period: 6,
            rotation_depth: 0.03,
            loop_rate: 0.5,
            loop_comeback: 0.9,
            jump_hold: 4,
            sharp_rise: 1.5,
            slow_rotation: 6,
        }
    }
}

/// Per-side tallies of one period and of the whole run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    pub(crate) ghost_recency: u64,
    pub(crate) ghost_frequency: u64,
    pub(crate) evicted_recency: u64,
    pub(crate) evicted_frequency: u64,
    pub(crate) remembered_recency: u64,
    pub(crate) remembered_frequency: u64,
}

impl Tally {
    pub(crate) fn add(&mut self, signal: Signal) {
        match signal {
            Signal::GhostHit(Side::Recency) => self.ghost_recency += 1,
            Signal::GhostHit(Side::Frequency) => self.ghost_frequency += 1,
            Signal::Evicted(Side::Recency) => self.evicted_recency += 1,
            Signal::Evicted(Side::Frequency) => self.evicted_frequency += 1,
            Signal::Remembered(Side::Recency) => self.remembered_recency += 1,
            Signal::Remembered(Side::Frequency) => self.remembered_frequency += 1,
            Signal::Hit | Signal::Miss => {}
        }
    }

    /// Adds another tally's counts to this one.
    pub(crate) fn merge(&mut self, other: &Tally) {
        self.ghost_recency += other.ghost_recency;
        self.ghost_frequency += other.ghost_frequency;
        self.evicted_recency += other.evicted_recency;
        self.evicted_frequency += other.evicted_frequency;
        self.remembered_recency += other.remembered_recency;
        self.remembered_frequency += other.remembered_frequency;
    }

    /// Frequency's regret rate minus recency's: positive when newcomers
    /// the filter turned away come back more often, per decision, than
    /// established entries dropped for newcomers (grow the window). Rated
    /// per remembered eviction, the ghost history's sample.
    fn regret_balance(&self) -> f64 {
        let rate = |ghosts: u64, evictions: u64| ghosts as f64 / evictions.max(1) as f64;
        rate(self.ghost_frequency, self.remembered_frequency)
            - rate(self.ghost_recency, self.remembered_recency)
    }

    /// Frequency's regret rate, uncapped, or `None` if it remembered
    /// fewer than [`MIN_CHECK_RECORDS`] evictions.
    fn frequency_rate(&self) -> Option<f64> {
        rated(self.ghost_frequency, self.remembered_frequency)
    }

    /// Whether the keys come back as a loop's do, whichever side evicted
    /// them: each side's regret rate at least `config.loop_rate`, and
    /// both together at least `config.loop_comeback` (see the module
    /// docs).
    fn loops(&self, config: &ClimberConfig) -> bool {
        let each = [
            rated(self.ghost_recency, self.remembered_recency),
            self.frequency_rate(),
        ]
        .iter()
        .all(|rate| rate.is_some_and(|r| r >= config.loop_rate));
        let both = rated(
            self.ghost_recency + self.ghost_frequency,
            self.remembered_recency + self.remembered_frequency,
        );
        each && both.is_some_and(|r| r >= config.loop_comeback)
    }

    /// The regret balance of a short slice, or `None` if either side
    /// remembered fewer than [`MIN_CHECK_RECORDS`] evictions in it. Each
    /// rate is capped at 1: when the share jumps, one side's evictions all
    /// but stop while ghost hits on its older evictions go on, and the
    /// uncapped rate ran into the hundreds.
    fn check_balance(&self) -> Option<f64> {
        if self.remembered_frequency.min(self.remembered_recency) < MIN_CHECK_RECORDS {
            return None;
        }
        let rate = |ghosts: u64, evictions: u64| (ghosts as f64 / evictions as f64).min(1.0);
        Some(
            rate(self.ghost_frequency, self.remembered_frequency)
                - rate(self.ghost_recency, self.remembered_recency),
        )
    }
}

/// A check's regret balance needs at least this many remembered evictions
/// a side: a rate over fewer swings by more than the margins it is held to.
const MIN_CHECK_RECORDS: u64 = 100;

/// A side's regret rate, uncapped: `ghosts` per `remembered` eviction, or
/// `None` if it remembered fewer than [`MIN_CHECK_RECORDS`].
fn rated(ghosts: u64, remembered: u64) -> Option<f64> {
    (remembered >= MIN_CHECK_RECORDS).then(|| ghosts as f64 / remembered as f64)
}

/// Checks in a row that must confirm a rotation before the share jumps,
/// unless the filter's regrets rose sharply (`ClimberConfig::sharp_rise`):
/// the check a scan ends in can look like one.
const CONFIRMING_CHECKS: u32 = 2;

/// Periods a fall of the hit ratio is watched for a rotation.
const WATCH_PERIODS: u32 = 2;

/// Slices each period into checks and tells when the hot set rotated
/// under the frequency filter (see the module docs).
#[derive(Clone, Debug, Default)]
struct RotationWatch {
    /// Requests per check; 0 while there are none.
    length: u64,
    tally: Tally,
    hits: u64,
    requests: u64,
    /// The hit ratio of the previous check.
    last_ratio: Option<f64>,
    fall: Option<Fall>,
    /// Checks in a row that confirmed the fall.
    confirmed: u32,
    /// Falls seen so far, watched or not.
    falls: u64,
    /// Frequency's regret rate in the previous check, if rated.
    last_filter_rate: Option<f64>,
}

/// A fall of the hit ratio under watch.
#[derive(Clone, Copy, Debug)]
struct Fall {
    /// The hit ratio of the check before it.
    before: f64,
    /// Frequency's regret rate over the last period before it.
    filter_rate: Option<f64>,
    /// Frequency's regret rate in the check before it, if rated.
    check_rate: Option<f64>,
    /// Checks left to watch.
    left: u32,
}

impl Fall {
    /// Whether a check with hit ratio `ratio` and regrets `tally` confirms
    /// that the hot set rotated under the filter (see the module docs).
    fn confirmed_by(&self, config: &ClimberConfig, ratio: f64, tally: &Tally) -> bool {
        let balance_points_to_frequency = || {
            tally
                .check_balance()
                .is_some_and(|b| b > config.regret_margin)
        };
        let filter_regrets_hold = || {
            self.filter_rates(tally)
                .is_some_and(|(now, before)| now >= before)
        };
        // Where the filter's regrets are a loop's, neither sign means a
        // rotation: every eviction comes back, and capped at 1 the
        // filter's rate led recency's by more than the margin, so `loop`
        // jumped to the top and stayed there (the falls kept coming).
        let looping = || {
            tally
                .frequency_rate()
                .is_some_and(|r| r >= config.loop_rate)
        };
        ratio <= self.before - config.rotation_depth
            && !looping()
            && (balance_points_to_frequency() || filter_regrets_hold())
    }

    /// Whether a confirming check's filter regrets rose so sharply above
    /// their level before the fall that it confirms the rotation alone
    /// (`ClimberConfig::sharp_rise`): above the last period's rate by
    /// that factor, and not below the check's just before. A confirming
    /// check's rate is below `loop_rate` already (see
    /// [`Fall::confirmed_by`]).
    fn sharply_confirmed_by(&self, config: &ClimberConfig, tally: &Tally) -> bool {
        self.filter_rates(tally).is_some_and(|(now, before)| {
            now >= config.sharp_rise * before
                && now >= 2.0 * config.regret_margin
                && self.check_rate.is_none_or(|last| now >= last)
        })
    }

    /// The filter's regret rate in the check of `tally` and over the last
    /// period before the fall, when both were rated and the earlier one
    /// is not zero (nothing can hold or rise against none).
    fn filter_rates(&self, tally: &Tally) -> Option<(f64, f64)> {
        match (tally.frequency_rate(), self.filter_rate) {
            (Some(now), Some(before)) if before > 0.0 => Some((now, before)),
            _ => None,
        }
    }
}

impl RotationWatch {
    fn set_period(&mut self, requests: u64, checks: u32) {
        self.length = match checks {
            0 => 0,
            n => requests / u64::from(n),
        };
    }

    /// Counts lookups; at the end of a check, whether it confirmed a
    /// rotation. `filter_rate` is frequency's regret rate over the last
    /// completed period.
    fn lookups(
        &mut self,
        config: &ClimberConfig,
        hits: u64,
        requests: u64,
        filter_rate: Option<f64>,
    ) -> bool {
        self.hits += hits;
        self.requests += requests;
        if self.length == 0 || self.requests < self.length {
            return false;
        }
        let ratio = self.hits as f64 / self.requests as f64;
        let fell = self
            .last_ratio
            .filter(|&last| last - ratio >= config.restart_threshold);
        // Only the check that opens a watch may confirm alone: later in a
        // watch the filter's regrets also rise where a scan ends (the
        // window's entries it pushed out come back).
        let opens = fell.is_some() && self.fall.is_none();
        if let Some(before) = fell {
            self.falls += 1;
            self.fall = self.fall.or(Some(Fall {
                before,
                filter_rate,
                check_rate: self.last_filter_rate,
                left: WATCH_PERIODS * config.checks_per_period,
            }));
        }
        let (confirms, sharply) = match self.fall {
            Some(fall) if fall.confirmed_by(config, ratio, &self.tally) => (
                true,
                opens && fall.sharply_confirmed_by(config, &self.tally),
            ),
            _ => (false, false),
        };
        self.confirmed = if confirms { self.confirmed + 1 } else { 0 };
        let rotated = sharply || self.confirmed >= CONFIRMING_CHECKS;
        // One jump per fall: a jump ends the watch.
        self.fall = match self.fall {
            Some(fall) if fall.left > 1 && !rotated => Some(Fall {
                left: fall.left - 1,
                ..fall
            }),
            _ => None,
        };
        if rotated {
            self.confirmed = 0;
        }
        self.last_ratio = Some(ratio);
        self.last_filter_rate = self.tally.frequency_rate();
        self.tally = Tally::default();
        self.hits = 0;
        self.requests = 0;
        rotated
    }
}

/// The falls of the hit ratio, counted at each period's end: what holds
/// a share that jumped at the top.
#[derive(Clone, Copy, Debug, Default)]
struct Falls {
    /// Periods since the last fall.
    quiet: u32,
    /// Periods from the fall before the last to the last.
    pace: Option<u32>,
    /// The watch's count of falls at the last period's end.
    seen: u64,
}

/// Caffeine's hill climber with ghost-informed restarts; see the module
/// docs.
#[derive(Clone, Debug)]
pub struct HillClimber {
    config: ClimberConfig,
    share: f64,
    /// Signed: the direction of the next move.
    step: f64,
    /// Requests per period; 0 until the policy knows its size.
    period: u64,
    hits: u64,
    requests: u64,
    previous_ratio: Option<f64>,
    last_ratio: f64,
    this_period: Tally,
    total: Tally,
    /// The regret balance smoothed over periods (`ClimberConfig::smoothing`).
    smoothed_balance: f64,
    /// Frequency's regret rate in the last completed period.
    filter_rate: Option<f64>,
    rotation: RotationWatch,
    /// When the hit ratio last fell, and how often it did.
    falls: Falls,
    /// Whether the share jumped and was not let down since.
    held: bool,
}

impl HillClimber {
    /// A climber at `config.initial_share`.
    pub fn new(config: ClimberConfig) -> Self {
        HillClimber {
            share: config
                .initial_share
                .clamp(config.min_share, config.max_share),
            step: config.initial_step,
            config,
            period: 0,
            hits: 0,
            requests: 0,
            previous_ratio: None,
            last_ratio: 0.0,
            this_period: Tally::default(),
            total: Tally::default(),
            smoothed_balance: 0.0,
            filter_rate: None,
            rotation: RotationWatch::default(),
            falls: Falls::default(),
            held: false,
        }
    }

    /// Sets how many requests make a period (the policy passes
    /// `AheConfig::period_factor` times its size).
    pub fn set_period(&mut self, requests: u64) {
        self.period = requests;
        self.rotation
            .set_period(requests, self.config.checks_per_period);
    }

    /// Whether the hot set rotates slowly: the hit ratio's last two falls
    /// came at least `slow_rotation` periods apart, so a share that jumps
    /// is let down a period later (see the module docs).
    pub fn rotations_are_slow(&self) -> bool {
        let slow = self.config.slow_rotation;
        slow > 0 && self.falls.pace.is_some_and(|pace| pace >= slow)
    }

    /// Sets the pace of the falls as if they had come `periods` apart.
    #[cfg(test)]
    pub(crate) fn set_pace(&mut self, periods: u32) {
        self.falls.pace = Some(periods);
    }

    /// The current step size (the learning rate), unsigned.
    pub fn learning_rate(&self) -> f64 {
        self.step.abs()
    }

    /// The hit ratio of the last completed period.
    pub fn window_hit_ratio(&self) -> f64 {
        self.last_ratio
    }

    pub(crate) fn totals(&self) -> Tally {
        self.total
    }

    /// Feeds a batch of observations at once: `tally`'s ghost and
    /// eviction counts, and `requests` lookups of which `hits` hit, as if
    /// observed one by one (a period that ends within the batch ends at
    /// its end). How a [`SharedController`](super::SharedController) pools
    /// its members' observations.
    pub(crate) fn absorb(&mut self, tally: &Tally, hits: u64, requests: u64) {
        self.this_period.merge(tally);
        self.total.merge(tally);
        self.rotation.tally.merge(tally);
        self.hits += hits;
        self.requests += requests;
        self.count_lookups(hits, requests);
    }

    /// Counts lookups for the rotation watch and the period, and acts at
    /// the end of either.
    fn count_lookups(&mut self, hits: u64, requests: u64) {
        if self
            .rotation
            .lookups(&self.config, hits, requests, self.filter_rate)
        {
            self.share = self.config.max_share;
            self.held = true;
        }
        if self.period > 0 && self.requests >= self.period {
            self.adjust();
        }
    }

    /// Ends a period: one hill-climbing step.
    fn adjust(&mut self) {
        if self.hits == 0 {
            self.skip_period();
            return;
        }
        let ratio = self.hits as f64 / self.requests.max(1) as f64;
        let balance = self.this_period.regret_balance();
        self.filter_rate = self.this_period.frequency_rate();
        self.smoothed_balance += self.config.smoothing * (balance - self.smoothed_balance);
        let surge = self.smoothed_balance;
        let looping = self.this_period.loops(&self.config);
        if looping {
            self.step = -self.largest_step_down();
        } else if self.previous_ratio.is_some() && surge.abs() >= self.config.surge_margin {
            let size = if self.step.signum() == surge.signum() {
                (2.0 * self.step.abs()).min(self.config.max_step)
            } else {
                self.config.initial_step
            };
            self.step = surge.signum() * size;
            if surge < 0.0 {
                self.step = self.step.max(-self.largest_step_down());
            }
        } else if let Some(previous) = self.previous_ratio {
            // After a surge, back to cautious steps.
            self.step = self.step.signum() * self.step.abs().min(self.config.initial_step);
            let change = ratio - previous;
            if change.abs() >= self.config.restart_threshold {
                let hint = self.this_period.regret_balance();
                let direction = if hint != 0.0 {
                    hint.signum()
                } else {
                    self.step.signum()
                };
                self.step = direction * self.config.initial_step;
            } else {
                if change < 0.0 {
                    self.step = -self.step;
                }
                self.step *= self.config.step_decay;
                if balance.abs() >= self.config.regret_margin {
                    self.step = balance.signum() * self.step.abs();
                }
            }
        }
        if self.release_jump() {
            self.step = -self.largest_step_down();
        }
        let before = self.share;
        self.move_share(self.step);
        if looping {
            // Down to the share the climber starts at, not below it.
            self.share = self.share.max(self.config.initial_share.min(before));
        }
        self.previous_ratio = Some(ratio);
        self.last_ratio = ratio;
        self.hits = 0;
        self.requests = 0;
        self.this_period = Tally::default();
    }

    /// Ends a period without a hit, and without a step: every share
    /// scores nothing there, so it cannot tell which is better. Such
    /// periods are a cold start's (the first pass of `scan` hits nothing
    /// for 100,000 requests); the climber used to step the same way in
    /// each, and reached 0.37 by the second pass of `scan`, whose
    /// optimum is none. Nor are its regrets (if any) smoothed in.
    fn skip_period(&mut self) {
        self.requests = 0;
        self.this_period = Tally::default();
    }

    /// The most a period's step takes off the share: `shrink_fraction` of
    /// it, or `initial_step` if that is more.
    fn largest_step_down(&self) -> f64 {
        (self.config.shrink_fraction * self.share).max(self.config.initial_step)
    }

    /// At a period's end, after a jump: whether the falls of the hit
    /// ratio that held the share up stopped (see the module docs).
    fn release_jump(&mut self) -> bool {
        let falls = &mut self.falls;
        if self.rotation.falls > falls.seen {
            if falls.seen > 0 {
                falls.pace = Some(falls.quiet + 1);
            }
            falls.quiet = 0;
            falls.seen = self.rotation.falls;
        } else {
            falls.quiet = falls.quiet.saturating_add(1);
        }
        let patience = if self.rotations_are_slow() {
            1
        } else {
            let pace = self.falls.pace.map_or(0, |p| 2 * p);
            pace.max(self.config.jump_hold)
        };
        let release = self.held && self.config.jump_hold > 0 && self.falls.quiet >= patience;
        if release {
            self.held = false;
        }
        release
    }

    fn move_share(&mut self, by: f64) {
        self.share = (self.share + by).clamp(self.config.min_share, self.config.max_share);
    }
}

impl Controller for HillClimber {
    fn observe(&mut self, signal: Signal, _now: Millis) {
        self.this_period.add(signal);
        self.total.add(signal);
        self.rotation.tally.add(signal);
        if matches!(signal, Signal::Hit | Signal::Miss) {
            let hit = u64::from(signal == Signal::Hit);
            self.hits += hit;
            self.requests += 1;
            self.count_lookups(hit, 1);
        }
    }

    fn recency_share(&self) -> f64 {
        self.share
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(c: &mut HillClimber, hits: u64, misses: u64) {
        for _ in 0..hits {
            c.observe(Signal::Hit, Millis(0));
        }
        for _ in 0..misses {
            c.observe(Signal::Miss, Millis(0));
        }
    }

    fn climber() -> HillClimber {
        let mut c = HillClimber::new(ClimberConfig {
            initial_share: 0.5,
            initial_step: 0.1,
            step_decay: 0.5,
            regret_margin: f64::INFINITY,
            surge_margin: f64::INFINITY,
            ..ClimberConfig::default()
        });
        c.set_period(100);
        c
    }

    #[test]
    fn keeps_going_while_the_hit_ratio_rises_and_turns_when_it_falls() {
        let mut c = climber();
        feed(&mut c, 50, 50); // first period: step up blindly
        assert!((c.recency_share() - 0.6).abs() < 1e-9);
        feed(&mut c, 52, 48); // better: same way, half the step
        assert!((c.recency_share() - 0.65).abs() < 1e-9);
        feed(&mut c, 51, 49); // worse: turn back
        assert!((c.recency_share() - 0.625).abs() < 1e-9);
        assert!((c.learning_rate() - 0.025).abs() < 1e-9);
        assert!((c.window_hit_ratio() - 0.51).abs() < 1e-9);
    }

    #[test]
    fn a_period_without_a_hit_takes_no_step() {
        let mut c = climber();
        for _ in 0..3 {
            feed(&mut c, 0, 100); // a cold start: nothing can hit
        }
        assert_eq!(c.recency_share(), 0.5);
        assert_eq!(c.window_hit_ratio(), 0.0);
        feed(&mut c, 50, 50); // the first period that says something
        assert!((c.recency_share() - 0.6).abs() < 1e-9);
        feed(&mut c, 0, 100); // and none that does not
        assert!((c.recency_share() - 0.6).abs() < 1e-9);
        assert!((c.window_hit_ratio() - 0.5).abs() < 1e-9);
    }

    #[test]
    fn a_workload_change_restarts_in_the_direction_ghosts_point_to() {
        let mut c = climber();
        feed(&mut c, 50, 50); // share 0.6, step +0.1
                              // The hit ratio collapses, and the evicted established entries are
                              // what come back: recency is at fault, so the window must shrink.
        for _ in 0..10 {
            for side in [Side::Recency, Side::Frequency] {
                c.observe(Signal::Evicted(side), Millis(0));
                c.observe(Signal::Remembered(side), Millis(0));
            }
        }
        for _ in 0..5 {
            c.observe(Signal::GhostHit(Side::Recency), Millis(0));
        }
        c.observe(Signal::GhostHit(Side::Frequency), Millis(0));
        feed(&mut c, 20, 80);
        assert!(
            (c.recency_share() - 0.5).abs() < 1e-9,
            "{}",
            c.recency_share()
        );
        assert!((c.learning_rate() - 0.1).abs() < 1e-9);
        let t = c.totals();
        assert_eq!((t.ghost_recency, t.ghost_frequency), (5, 1));
        assert_eq!((t.evicted_recency, t.evicted_frequency), (10, 10));
    }

    #[test]
    fn regrets_are_rated_per_remembered_eviction() {
        let mut t = Tally::default();
        // 40 evictions a side, a quarter of them remembered (any sample
        // works the same): 5 of
        // recency's 10 came back, 1 of frequency's.
        for side in [Side::Recency, Side::Frequency] {
            for i in 0..40 {
                t.add(Signal::Evicted(side));
                if i % 4 == 0 {
                    t.add(Signal::Remembered(side));
                }
            }
        }
        for _ in 0..5 {
            t.add(Signal::GhostHit(Side::Recency));
        }
        t.add(Signal::GhostHit(Side::Frequency));
        assert!((t.regret_balance() - (0.1 - 0.5)).abs() < 1e-9);
    }

    /// One period's evictions (all remembered) and ghost hits per side.
    fn regrets(c: &mut HillClimber, recency: (u64, u64), frequency: (u64, u64)) {
        for (side, (evicted, ghosts)) in [(Side::Recency, recency), (Side::Frequency, frequency)] {
            for _ in 0..evicted {
                c.observe(Signal::Evicted(side), Millis(0));
                c.observe(Signal::Remembered(side), Millis(0));
            }
            for _ in 0..ghosts {
                c.observe(Signal::GhostHit(side), Millis(0));
            }
        }
    }

    #[test]
    fn lopsided_regrets_steer_the_step_whatever_the_hit_ratio_did() {
        let mut c = HillClimber::new(ClimberConfig {
            regret_margin: 0.1,
            ..climber().config
        });
        c.set_period(100);
        feed(&mut c, 50, 50); // share 0.6, step +0.1
                              // The hit ratio rose, so hill climbing alone would go on growing,
                              // but the window's evictions come back far more often (recency
                              // regrets 5 of 10, frequency's 1 of 10): shrink it.
        regrets(&mut c, (10, 5), (10, 1));
        feed(&mut c, 52, 48);
        assert!(
            (c.recency_share() - 0.55).abs() < 1e-9,
            "{}",
            c.recency_share()
        );
        // Within the margin (0.3 vs 0.25) the hit ratio decides again: it
        // fell, so the step turns once more.
        regrets(&mut c, (20, 6), (20, 5));
        feed(&mut c, 51, 49);
        assert!(
            (c.recency_share() - 0.575).abs() < 1e-9,
            "{}",
            c.recency_share()
        );
    }

    #[test]
    fn persistent_regrets_surge_and_the_steps_calm_down_after() {
        let mut c = HillClimber::new(ClimberConfig {
            initial_share: 0.1,
            initial_step: 0.05,
            max_step: 0.2,
            max_share: 1.0,
            surge_margin: 0.1,
            smoothing: 0.5,
            ..climber().config
        });
        c.set_period(100);
        feed(&mut c, 50, 50); // the first period steps blindly: 0.15
        let mut shares = Vec::new();
        for _ in 0..4 {
            // Frequency's rejections come back half the time, recency's
            // never: balance +0.5 every period, smoothed +0.25, +0.375...
            regrets(&mut c, (10, 0), (10, 5));
            feed(&mut c, 50, 50);
            shares.push(c.recency_share());
        }
        let expected = [0.25, 0.45, 0.65, 0.85];
        for (got, want) in shares.iter().zip(expected) {
            assert!((got - want).abs() < 1e-9, "{shares:?}");
        }
        assert!((c.learning_rate() - 0.2).abs() < 1e-9);
        // Balanced regrets: the smoothed balance halves each period, and
        // once it is within the margin the step is back to the initial
        // size at most (then hill climbing: the hit ratio held, so on).
        regrets(&mut c, (10, 2), (10, 2));
        feed(&mut c, 50, 50); // smoothed 0.23: still a surge, capped at 1.0
        assert_eq!(c.recency_share(), 1.0);
        for _ in 0..3 {
            regrets(&mut c, (10, 2), (10, 2));
            feed(&mut c, 50, 50);
        }
        assert!(c.learning_rate() <= 0.05 + 1e-9, "{}", c.learning_rate());
    }

    /// A climber at the default settings whose periods are 600 requests:
    /// checks of 100.
    fn watcher() -> HillClimber {
        let mut c = HillClimber::new(ClimberConfig::default());
        c.set_period(600);
        c
    }

    /// Checks of 100 lookups each, given as (hit ratio, recency's regret
    /// rate, frequency's), with 200 remembered evictions a side; the
    /// share after each.
    fn checks(c: &mut HillClimber, checks: &[(f64, f64, f64)]) -> Vec<f64> {
        let ghosts = |rate: f64| (rate * 200.0).round() as u64;
        let mut shares = Vec::new();
        for &(ratio, recency, frequency) in checks {
            regrets(c, (200, ghosts(recency)), (200, ghosts(frequency)));
            let hits = (ratio * 100.0).round() as u64;
            feed(c, hits, 100 - hits);
            shares.push(c.recency_share());
        }
        shares
    }

    #[test]
    fn a_hot_set_rotating_under_the_filter_jumps_the_window_to_its_maximum() {
        // The hit ratio falls by 20 points and the newcomers the filter
        // turned away come back. One such check could be a scan's end; two
        // in a row, still well below the level before, are not.
        let fall = (0.60, 0.2, 0.35);
        let still_down = (0.66, 0.2, 0.35);
        let steady = (0.80, 0.2, 0.2);
        let shares = checks(&mut watcher(), &[steady, steady, fall, still_down]);
        assert_eq!(shares, [0.01, 0.01, 0.01, 0.95]);
        // Recency's regrets may lead right after a rotation (main drops
        // keys that just turned hot), but the filter's regrets hold at
        // their rate of the period before the fall (0.2): that confirms
        // too. The first period's end stepped the share to 0.0725.
        let mut c = watcher();
        checks(&mut c, &[steady; 6]);
        let shares = checks(&mut c, &[(0.60, 0.4, 0.2), (0.62, 0.4, 0.25)]);
        assert_eq!(shares, [0.0725, 0.95]);
    }

    #[test]
    fn a_sharp_rise_of_the_filters_regrets_jumps_in_the_check_of_the_fall() {
        // After a period at 0.2, the filter's regret rate in the check of
        // the fall is 1.75 times that (at least `sharp_rise`, 1.5): the
        // new hot keys it turns away come straight back. No second check.
        let steady = (0.80, 0.2, 0.2);
        let mut c = watcher();
        checks(&mut c, &[steady; 6]);
        assert_eq!(checks(&mut c, &[(0.60, 0.2, 0.35)]), [0.95]);
        // At 1.25 times it, or with the rule off, the second check decides.
        for (sharp_rise, fall) in [(1.5, (0.60, 0.2, 0.25)), (f64::INFINITY, (0.60, 0.2, 0.35))] {
            let mut c = HillClimber::new(ClimberConfig {
                sharp_rise,
                ..ClimberConfig::default()
            });
            c.set_period(600);
            checks(&mut c, &[steady; 6]);
            assert_eq!(checks(&mut c, &[fall, fall]), [0.0725, 0.95]);
        }
        // Nor when the rates are too small to mean much: 0.02 doubling
        // to 0.04 stays below twice `regret_margin` (0.1).
        let mut c = watcher();
        checks(&mut c, &[(0.80, 0.2, 0.02); 6]);
        assert_eq!(checks(&mut c, &[(0.60, 0.2, 0.04)]), [0.0725]);
        // Nor at a loop's rates (at or above `loop_rate`), however sharp
        // the rise: both sides' regrets swing there.
        let mut c = watcher();
        checks(&mut c, &[(0.80, 0.2, 0.3); 6]);
        let shares = checks(&mut c, &[(0.60, 0.2, 0.6)]);
        assert!(shares[0] < 0.2, "{shares:?}");
        // Nor when the rate falls against the check just before, however
        // far above the period's it is (0.40 against a period of 0.24 and
        // a last check of 0.45): a scan's first check, whose keys the
        // filter turns away never come back, after a warm-up period.
        let mut c = watcher();
        checks(
            &mut c,
            &[steady, steady, steady, steady, steady, (0.80, 0.2, 0.45)],
        );
        assert_eq!(checks(&mut c, &[(0.60, 0.2, 0.40)]), [0.0725]);
    }

    #[test]
    fn a_fall_that_recovers_or_points_the_other_way_does_not_jump() {
        let steady = (0.80, 0.2, 0.2);
        // A scan: the hit ratio collapses for a check, the check it ends
        // in is still low, then it is back within a point. The keys the
        // filter turns away in the scan never come back; frequency's
        // regrets after it are the window's entries the scan pushed out.
        let scan = [(0.30, 0.3, 0.05), (0.70, 0.2, 0.35), (0.79, 0.2, 0.35)];
        // A fall where recency's regrets lead and the filter's fall.
        let recency_led = [(0.60, 0.4, 0.1), (0.62, 0.4, 0.15)];
        for after in [&scan[..], &recency_led[..]] {
            let mut c = watcher();
            checks(&mut c, &[steady; 6]);
            let shares = checks(&mut c, after);
            assert!(shares.iter().all(|&s| s == 0.0725), "{shares:?}");
        }
        // A loop larger than the cache: nearly every eviction comes back,
        // on both sides, before the fall as after it; the filter's rate,
        // uncapped, can pass 1 and lead recency's by more than the margin.
        for after in [(0.9, 0.9), (0.7, 1.2)] {
            let mut c = watcher();
            checks(&mut c, &[(0.80, 0.6, 0.6); 6]);
            let (recency, frequency) = after;
            let shares = checks(
                &mut c,
                &[(0.60, recency, frequency), (0.62, recency, frequency)],
            );
            assert!(shares.iter().all(|&s| s < 0.2), "{shares:?}");
        }
        // Nor with too few remembered evictions to rate regrets by.
        let mut c = watcher();
        feed(&mut c, 80, 20);
        for ratio in [0.60, 0.62, 0.64] {
            regrets(&mut c, (50, 20), (50, 40));
            let hits = (ratio * 100.0) as u64;
            feed(&mut c, hits, 100 - hits);
        }
        assert_eq!(c.recency_share(), 0.01);
    }

    #[test]
    fn a_jump_is_let_down_once_the_falls_stop() {
        let steady = (0.80, 0.2, 0.2);
        let fall = [(0.60, 0.2, 0.35), (0.66, 0.2, 0.35)];
        let run_with = |jump_hold: u32, slow_rotation: u32, falls_every: usize| {
            let mut c = HillClimber::new(ClimberConfig {
                jump_hold,
                slow_rotation,
                ..ClimberConfig::default()
            });
            c.set_period(600);
            checks(&mut c, &[steady; 6]);
            if falls_every > 0 {
                // An earlier fall sets the pace.
                checks(&mut c, &[fall[0]]);
                checks(&mut c, &vec![steady; falls_every - 1]);
            }
            assert_eq!(checks(&mut c, &fall)[1], 0.95);
            let mut shares = Vec::new();
            for i in 1..=60 {
                let check = match falls_every {
                    n if n > 0 && i % n == 0 => fall[0],
                    _ => steady,
                };
                shares.extend(checks(&mut c, &[check]));
            }
            shares
        };
        let run = |jump_hold: u32, falls_every: usize| run_with(jump_hold, 6, falls_every);
        // After the period of the fall, six periods (36 checks) without
        // one: the next step halves the share.
        let released = run(6, 0);
        assert!(released[..39].iter().all(|&s| s == 0.95), "{released:?}");
        assert_eq!(released[39], 0.475, "{released:?}");
        // Without the release, or with a fall every two periods (a
        // rotating hot set), it is not let down: hill climbing alone moves
        // it, one small step a period.
        assert!(run(0, 0).iter().all(|&s| s == 0.95));
        let not_let_down = |shares: &[f64]| shares.windows(2).all(|w| w[0] - w[1] < 0.1);
        let rotating = run(6, 12);
        assert!(not_let_down(&rotating), "{rotating:?}");
        // Falls every four periods: the share waits twice that pace, even
        // with a hold of two.
        let slow = run(2, 24);
        assert!(not_let_down(&slow), "{slow:?}");
        // Falls six periods apart (`slow_rotation`): frequency has time
        // to learn each new hot set, and the share is let down one period
        // after each jump.
        let slower = run(4, 36);
        assert!(slower[..9].iter().all(|&s| s == 0.95), "{slower:?}");
        assert_eq!((slower[9], slower[35], slower[45]), (0.475, 0.95, 0.475));
        assert!(not_let_down(&run_with(4, 0, 36)));
    }

    #[test]
    fn a_surge_down_takes_at_most_half_the_share_a_period() {
        let mut c = HillClimber::new(ClimberConfig {
            initial_share: 0.9,
            max_share: 0.9,
            checks_per_period: 0,
            ..ClimberConfig::default()
        });
        c.set_period(100);
        let mut shares = vec![c.recency_share()];
        for _ in 0..8 {
            // Recency's evictions come back half the time, frequency's
            // never: a lopsided balance of -0.5 every period.
            regrets(&mut c, (10, 5), (10, 0));
            feed(&mut c, 50, 50);
            shares.push(c.recency_share());
        }
        // From the top the steps double as before (0.0625, 0.125, 0.25)...
        assert!((shares[4] - 0.4625).abs() < 1e-9, "{shares:?}");
        // ...and below half the share halves at most, down to the
        // initial step.
        for pair in shares.windows(2) {
            let most = (pair[0] * 0.5).max(0.0625);
            assert!(pair[0] - pair[1] <= most + 1e-9, "{shares:?}");
        }
        assert!((shares[5] - 0.23125).abs() < 1e-9, "{shares:?}");
        assert_eq!(shares[8], 0.0, "{shares:?}");
    }

    #[test]
    fn a_loop_takes_the_window_down_whatever_the_hit_ratio_and_balance_say() {
        let mut c = HillClimber::new(ClimberConfig {
            checks_per_period: 0,
            ..ClimberConfig::default()
        });
        c.set_period(1_000);
        // Frequency's evictions come back half the time, recency's never:
        // the surge takes the share up.
        for _ in 0..4 {
            regrets(&mut c, (200, 0), (200, 100));
            feed(&mut c, 500, 500);
        }
        let mut shares = vec![c.recency_share()];
        assert!(shares[0] > 0.5, "{shares:?}");
        // Then nearly every eviction comes back on both sides, frequency's
        // a little more often (a balance of +0.06, past the margin), and
        // the hit ratio rises: steering and hill climbing would both grow
        // the window.
        for hits in [500, 600, 700, 800, 800, 800, 800, 800] {
            regrets(&mut c, (200, 188), (200, 200));
            feed(&mut c, hits, 1_000 - hits);
            shares.push(c.recency_share());
        }
        // Down by half the share a period, or by the initial step, to the
        // initial share, and no further.
        for pair in shares.windows(2) {
            let most = (0.5 * pair[0]).max(0.0625);
            let at_start = (pair[1] - 0.01).abs() < 1e-9;
            assert!(pair[1] < pair[0] || at_start, "{shares:?}");
            assert!(pair[0] - pair[1] <= most + 1e-9, "{shares:?}");
        }
        for last in &shares[shares.len() - 2..] {
            assert!((last - 0.01).abs() < 1e-9, "{shares:?}");
        }
        // Where only the filter's evictions come back (a rotated hot set),
        // the rule does not apply: the balance grows the window again.
        regrets(&mut c, (200, 20), (200, 200));
        feed(&mut c, 800, 200);
        let grown = c.recency_share();
        assert!(grown > 0.01, "{grown}");
        // Nor where both sides' evictions come back often but not nearly
        // all (`ttl` at a large cache): 0.6 and 0.7 together are 0.65.
        regrets(&mut c, (200, 120), (200, 140));
        feed(&mut c, 800, 200);
        assert!(c.recency_share() > grown, "{}", c.recency_share());
    }

    #[test]
    fn the_share_stays_within_its_bounds() {
        let mut c = climber();
        for _ in 0..20 {
            feed(&mut c, 100, 0);
        }
        assert!(c.recency_share() <= 0.95);
        let mut c = HillClimber::new(ClimberConfig {
            initial_share: 2.0,
            ..ClimberConfig::default()
        });
        assert_eq!(c.recency_share(), 0.95);
        c.set_period(0);
        feed(&mut c, 1_000, 0); // no period: no learning
        assert_eq!(c.recency_share(), 0.95);
    }
}
