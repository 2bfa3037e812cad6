//! The five hit-ratio workloads of `shared/WORKLOADS.md` (v1), plus four
//! adversarial ones of our own, as seeded, deterministic request iterators.
//!
//! The adversarial patterns exist so that a policy is not tuned to the five
//! v1 patterns only; each is a trap that sinks some single policy:
//!
//! - **loop**: a cyclic scan over 5 500 ids, slightly more than the
//!   5 000-entry cache. LRU and FIFO score 0%; the optimum is about 90%.
//! - **zipf06**: weak skew, `Zipf(0.6)` over the keyspace. Little for
//!   frequency to learn; recency and frequency are close.
//! - **onehit**: half the requests are zipf (as `zipf`), half go to keys
//!   that are requested once and never again. LRU lets them flush half its
//!   space.
//! - **phase**: alternating phases of 200 000 requests, zipf then a cyclic
//!   scan of the whole keyspace (each phase starts where the last scan
//!   ended). A policy must switch between keeping the hot set and resisting
//!   the scan, and not carry one phase's lesson into the next.
//!
//! A [`Workload`] is built from `(pattern, seed, requests)` (and, for
//! WORKLOADS.md v2, a scale `S`: [`Workload::scaled`]) and yields
//! [`Request`]s with request `i` at `Millis(i)`. The simulator, the trace
//! export and (later) the live driver all consume this one iterator, which
//! is what makes "same seed, same distribution" hold across them.
//!
//! Every random choice flows from one [`SmallRng`] seeded with the seed: it
//! first shuffles the popularity permutation, then draws per request.
//!
//! # Scale (WORKLOADS.md v2)
//!
//! Scale `S` multiplies every size and keeps every shape: the keyspace
//! (`N = 100,000·S`), the cache the patterns are sized for (`C = 5,000·S`,
//! [`capacity`]), the default request count ([`requests`]), `shift`'s
//! epoch and step, `mixed`'s blocks and scans, `ttl`'s durable ids, newest
//! window, lifetime (`PX 10000·S`) and ephemeral base. Our adversarial
//! patterns scale the same way (the `loop` length, `phase`'s phases, the
//! one-off base). At scale 1 every stream is exactly v1's: the scaled sizes
//! are the v1 constants times one, and the random draws happen in the same
//! order.

use std::fmt;
use std::str::FromStr;

use ferrum_evict::Millis;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// Keyspace size `N`: ids `0..N`.
pub const KEYSPACE: u64 = 100_000;
/// Default cache capacity `C` in entries (1/20th of the keyspace).
pub const CAPACITY: usize = 5_000;
/// Default request count `R` per (policy, pattern) cell.
pub const REQUESTS: u64 = 1_000_000;
/// Default seed.
pub const SEED: u64 = 42;
/// Zipf exponent of every skewed draw.
pub const ZIPF_EXPONENT: f64 = 0.99;
/// Value size in bytes, used as part of the cost passed to policies.
pub const VALUE_BYTES: u32 = 32;

/// `shift`: requests per epoch.
const SHIFT_EPOCH: u64 = 100_000;
/// `shift`: how many ranks the popularity moves each epoch.
const SHIFT_STEP: u64 = 10_000;
/// `mixed`: zipf requests before each scan.
const MIXED_ZIPF: u64 = 100_000;
/// `mixed`: length of each scan.
const MIXED_SCAN: u64 = 20_000;
/// `ttl`: durable ids are `0..TTL_DURABLE`.
const TTL_DURABLE: u64 = 50_000;
/// `ttl`: share of requests that go to ephemeral keys.
const TTL_EPHEMERAL_SHARE: f64 = 0.3;
/// `ttl`: ephemeral key `k` is created at request `k * TTL_SPAWN_EVERY`.
const TTL_SPAWN_EVERY: u64 = 20;
/// `ttl`: an ephemeral request picks among this many newest keys.
const TTL_NEWEST: u64 = 500;
/// `ttl`: ephemeral keys live this long (`PX 10000`).
pub const TTL_EPHEMERAL_LIFE: Millis = Millis(10_000);
/// `ttl`: first ephemeral id, clear of the durable ones.
pub const TTL_EPHEMERAL_BASE: u64 = 1_000_000;
/// `loop`: ids cycled through, 10% more than the default cache.
const LOOP_LEN: u64 = 5_500;
/// `zipf06`: the weak skew's exponent.
const WEAK_ZIPF_EXPONENT: f64 = 0.6;
/// `onehit`: share of requests to keys never requested again.
const ONE_HIT_SHARE: f64 = 0.5;
/// `onehit`: first one-off id, clear of every other pattern's ids.
pub const ONE_HIT_BASE: u64 = 2_000_000;
/// `phase`: requests per phase.
const PHASE_LEN: u64 = 200_000;

/// The cache capacity `C` at scale `scale`: `5,000·S` entries.
pub fn capacity(scale: u64) -> usize {
    CAPACITY * scale.max(1) as usize
}

/// The default request count `R` at scale `scale`: `1,000,000·S`.
pub fn requests(scale: u64) -> u64 {
    REQUESTS * scale.max(1)
}

/// The keyspace `N` at scale `scale`: `100,000·S`.
pub fn keyspace(scale: u64) -> u64 {
    KEYSPACE * scale.max(1)
}

/// One read-through access: `GET key`, and on a miss `SET key value`, with
/// `PX ttl` when `ttl` is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Request {
    /// When the request happens (virtual time in the simulator).
    pub at: Millis,
    /// The key's id; [`key_name`] turns it into the key string.
    pub key_id: u64,
    /// The TTL a miss sets the value with, if any.
    pub ttl: Option<Millis>,
}

/// The key string for an id: `key:` and the id zero-padded to 6 digits.
pub fn key_name(id: u64) -> String {
    format!("key:{id:06}")
}

/// The id of a key string written by [`key_name`], or `None` for any other
/// string.
pub fn parse_key_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("key:")?;
    if digits.len() < 6 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let id: u64 = digits.parse().ok()?;
    // Reject non-canonical spellings such as `key:0000042`, so that
    // `key_name(parse_key_name(s)) == s` always holds.
    (key_name(id) == name).then_some(id)
}

/// The access patterns of WORKLOADS.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// Stable skew: `perm[r]`, `r ~ Zipf(0.99)`.
    Zipf,
    /// Rotating hot set: the ranks move by 10 000 every 100 000 requests.
    Shift,
    /// Zipf blocks of 100 000 requests, each followed by a 20 000-id scan.
    Mixed,
    /// Cyclic sequential scan of the whole keyspace.
    Scan,
    /// 70% zipf over durable keys, 30% over short-lived keys with a TTL.
    Ttl,
    /// Ours: a cyclic scan slightly larger than the cache.
    Loop,
    /// Ours: weak skew, `Zipf(0.6)`.
    Zipf06,
    /// Ours: half zipf, half keys requested only once.
    OneHit,
    /// Ours: 200 000-request phases alternating zipf and a cyclic scan.
    Phase,
}

impl Pattern {
    /// The WORKLOADS.md v1 patterns, in its order.
    pub const V1: [Pattern; 5] = [
        Pattern::Zipf,
        Pattern::Shift,
        Pattern::Mixed,
        Pattern::Scan,
        Pattern::Ttl,
    ];

    /// Our adversarial patterns (see the module docs).
    pub const ADVERSARIAL: [Pattern; 4] = [
        Pattern::Loop,
        Pattern::Zipf06,
        Pattern::OneHit,
        Pattern::Phase,
    ];

    /// Every pattern: v1, then ours.
    pub const ALL: [Pattern; 9] = [
        Pattern::Zipf,
        Pattern::Shift,
        Pattern::Mixed,
        Pattern::Scan,
        Pattern::Ttl,
        Pattern::Loop,
        Pattern::Zipf06,
        Pattern::OneHit,
        Pattern::Phase,
    ];

    /// The pattern's name in WORKLOADS.md and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Pattern::Zipf => "zipf",
            Pattern::Shift => "shift",
            Pattern::Mixed => "mixed",
            Pattern::Scan => "scan",
            Pattern::Ttl => "ttl",
            Pattern::Loop => "loop",
            Pattern::Zipf06 => "zipf06",
            Pattern::OneHit => "onehit",
            Pattern::Phase => "phase",
        }
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Pattern {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Pattern::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                let names: Vec<&str> = Pattern::ALL.iter().map(|p| p.as_str()).collect();
                format!(
                    "unknown pattern '{s}' (expected one of {})",
                    names.join(", ")
                )
            })
    }
}

/// A Zipf distribution over ranks `0..n`: `P(r) ∝ 1 / (r + 1)^s`.
///
/// Sampling inverts a precomputed cumulative distribution with a binary
/// search: 8 bytes per rank and O(log n) per draw, exact up to `f64`
/// rounding.
#[derive(Clone, Debug)]
pub struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    /// The distribution over `0..n` with exponent `s`.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    pub fn new(n: u64, s: f64) -> Self {
        assert!(n > 0, "a Zipf distribution needs at least one rank");
        let mut total = 0.0;
        let mut cdf: Vec<f64> = (1..=n)
            .map(|k| {
                total += (k as f64).powf(-s);
                total
            })
            .collect();
        for c in &mut cdf {
            *c /= total;
        }
        Zipf { cdf }
    }

    /// Draws a rank.
    #[inline]
    pub fn sample<R: Rng>(&self, rng: &mut R) -> u64 {
        let u: f64 = rng.random();
        let r = self.cdf.partition_point(|&c| c <= u);
        r.min(self.cdf.len() - 1) as u64
    }

    /// The probability of rank `r`.
    pub fn probability(&self, r: u64) -> f64 {
        let r = r as usize;
        let below = if r == 0 { 0.0 } else { self.cdf[r - 1] };
        self.cdf.get(r).map_or(0.0, |c| c - below)
    }
}

/// A seeded request stream for one pattern; see the module docs.
#[derive(Clone, Debug)]
pub struct Workload {
    pattern: Pattern,
    rng: SmallRng,
    zipf: Zipf,
    /// Popularity order: rank `r` is id `perm[r]`.
    perm: Vec<u32>,
    next: u64,
    requests: u64,
    /// Scale `S` (WORKLOADS.md v2), at least 1.
    scale: u64,
}

impl Workload {
    /// `requests` requests of `pattern`, every random choice drawn from
    /// `seed`.
    pub fn new(pattern: Pattern, seed: u64, requests: u64) -> Self {
        Workload::scaled(pattern, seed, requests, 1)
    }

    /// `requests` requests of `pattern` at scale `scale` (WORKLOADS.md v2;
    /// 0 is taken as 1), every random choice drawn from `seed`. Scale 1 is
    /// [`Workload::new`].
    ///
    /// # Panics
    ///
    /// If the scaled keyspace does not fit ids in 32 bits (`scale` above
    /// 42,949).
    pub fn scaled(pattern: Pattern, seed: u64, requests: u64, scale: u64) -> Self {
        let scale = scale.max(1);
        let ranks = match pattern {
            Pattern::Ttl => TTL_DURABLE * scale,
            _ => KEYSPACE * scale,
        };
        let ranks_u32 = u32::try_from(ranks).expect("scale too large: ids must fit in 32 bits");
        let exponent = match pattern {
            Pattern::Zipf06 => WEAK_ZIPF_EXPONENT,
            _ => ZIPF_EXPONENT,
        };
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut perm: Vec<u32> = (0..ranks_u32).collect();
        perm.shuffle(&mut rng);
        Workload {
            pattern,
            rng,
            zipf: Zipf::new(ranks, exponent),
            perm,
            next: 0,
            requests,
            scale,
        }
    }

    /// The pattern this stream follows.
    pub fn pattern(&self) -> Pattern {
        self.pattern
    }

    /// The scale `S` this stream was built with.
    pub fn scale(&self) -> u64 {
        self.scale
    }

    fn zipf_id(&mut self, shift: u64) -> u64 {
        let r = self.zipf.sample(&mut self.rng);
        let n = self.perm.len() as u64;
        u64::from(self.perm[((r + shift) % n) as usize])
    }

    fn key_at(&mut self, i: u64) -> (u64, Option<Millis>) {
        let s = self.scale;
        let keyspace = KEYSPACE * s;
        match self.pattern {
            Pattern::Zipf => (self.zipf_id(0), None),
            Pattern::Shift => (
                self.zipf_id((i / (SHIFT_EPOCH * s)) * (SHIFT_STEP * s)),
                None,
            ),
            Pattern::Mixed => {
                let (zipf, scan) = (MIXED_ZIPF * s, MIXED_SCAN * s);
                let block = zipf + scan;
                let (j, offset) = (i / block, i % block);
                if offset < zipf {
                    (self.zipf_id(0), None)
                } else {
                    let start = (j * scan) % keyspace;
                    ((start + offset - zipf) % keyspace, None)
                }
            }
            Pattern::Scan => (i % keyspace, None),
            Pattern::Ttl => {
                if self.rng.random::<f64>() < TTL_EPHEMERAL_SHARE {
                    let newest = i / TTL_SPAWN_EVERY;
                    let live = (newest + 1).min(TTL_NEWEST * s);
                    let k = newest - self.rng.random_range(0..live);
                    (
                        TTL_EPHEMERAL_BASE * s + k,
                        Some(Millis(TTL_EPHEMERAL_LIFE.0 * s)),
                    )
                } else {
                    (self.zipf_id(0), None)
                }
            }
            Pattern::Loop => (i % (LOOP_LEN * s), None),
            Pattern::Zipf06 => (self.zipf_id(0), None),
            Pattern::OneHit => {
                if self.rng.random::<f64>() < ONE_HIT_SHARE {
                    (ONE_HIT_BASE * s + i, None)
                } else {
                    (self.zipf_id(0), None)
                }
            }
            Pattern::Phase => {
                let phase_len = PHASE_LEN * s;
                let phase = i / phase_len;
                if phase % 2 == 0 {
                    (self.zipf_id(0), None)
                } else {
                    // Each scan phase resumes where the previous one ended.
                    let scanned = (phase / 2) * phase_len + i % phase_len;
                    (scanned % keyspace, None)
                }
            }
        }
    }
}

impl Iterator for Workload {
    type Item = Request;

    fn next(&mut self) -> Option<Request> {
        if self.next >= self.requests {
            return None;
        }
        let i = self.next;
        self.next += 1;
        let (key_id, ttl) = self.key_at(i);
        Some(Request {
            at: Millis(i),
            key_id,
            ttl,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::try_from(self.requests - self.next).unwrap_or(usize::MAX);
        (left, Some(left))
    }
}

impl ExactSizeIterator for Workload {}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    fn ids(pattern: Pattern, seed: u64, requests: u64) -> Vec<u64> {
        Workload::new(pattern, seed, requests)
            .map(|r| r.key_id)
            .collect()
    }

    #[test]
    fn key_names_are_zero_padded_and_round_trip() {
        assert_eq!(key_name(42), "key:000042");
        assert_eq!(key_name(1_000_123), "key:1000123");
        assert_eq!(parse_key_name("key:000042"), Some(42));
        assert_eq!(parse_key_name("key:1000123"), Some(1_000_123));
        assert_eq!(parse_key_name("key:42"), None);
        assert_eq!(parse_key_name("key:0000042"), None);
        assert_eq!(parse_key_name("user:000042"), None);
    }

    #[test]
    fn patterns_parse_case_insensitively() {
        for p in Pattern::ALL {
            assert_eq!(p.as_str().to_uppercase().parse::<Pattern>(), Ok(p));
        }
        assert!("zipfian".parse::<Pattern>().is_err());
    }

    #[test]
    fn same_seed_same_stream_other_seed_other_stream() {
        for p in Pattern::ALL {
            assert_eq!(ids(p, 7, 2_000), ids(p, 7, 2_000), "{p}");
        }
        assert_ne!(ids(Pattern::Zipf, 7, 2_000), ids(Pattern::Zipf, 8, 2_000));
    }

    #[test]
    fn requests_are_one_millisecond_apart() {
        let w = Workload::new(Pattern::Zipf, 1, 5);
        assert_eq!(w.len(), 5);
        let at: Vec<u64> = w.map(|r| r.at.0).collect();
        assert_eq!(at, [0, 1, 2, 3, 4]);
    }

    #[test]
    fn zipf_matches_its_law() {
        let zipf = Zipf::new(KEYSPACE, ZIPF_EXPONENT);
        let p0 = zipf.probability(0);
        // H(100 000, 0.99) is about 12.8, so the top rank gets about 7.8%.
        assert!((0.07..0.085).contains(&p0), "p0 {p0}");
        assert!((zipf.probability(9) * 10f64.powf(0.99) / p0 - 1.0).abs() < 1e-9);
        let mut rng = SmallRng::seed_from_u64(5);
        let draws = 200_000;
        let top = (0..draws).filter(|_| zipf.sample(&mut rng) == 0).count();
        let share = top as f64 / f64::from(draws);
        assert!((share - p0).abs() < 0.005, "top share {share} vs {p0}");
    }

    #[test]
    fn zipf_ranks_are_permuted() {
        // The most popular id should be perm[0], not id 0.
        let w = Workload::new(Pattern::Zipf, SEED, 0);
        assert_ne!(w.perm[..10], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        let mut sorted = w.perm.clone();
        sorted.sort_unstable();
        assert!(sorted.iter().enumerate().all(|(i, &v)| i as u32 == v));
    }

    #[test]
    fn shift_moves_the_hot_set_each_epoch() {
        let w = Workload::new(Pattern::Shift, SEED, 0);
        let top_of = |epoch: u64| u64::from(w.perm[(epoch * SHIFT_STEP) as usize]);
        let stream = ids(Pattern::Shift, SEED, 2 * SHIFT_EPOCH);
        let count = |range: std::ops::Range<usize>, id: u64| {
            stream[range].iter().filter(|&&x| x == id).count()
        };
        // Epoch 0's hottest key is hot in epoch 0 and cold in epoch 1.
        assert!(count(0..100_000, top_of(0)) > 5_000);
        assert!(count(100_000..200_000, top_of(0)) < 50);
        assert!(count(100_000..200_000, top_of(1)) > 5_000);
    }

    #[test]
    fn mixed_scans_follow_each_zipf_block() {
        let stream = ids(Pattern::Mixed, SEED, 2 * 120_000);
        let first: Vec<u64> = (0..20_000).collect();
        let second: Vec<u64> = (20_000..40_000).collect();
        assert_eq!(stream[100_000..120_000], first[..]);
        assert_eq!(stream[220_000..240_000], second[..]);
    }

    #[test]
    fn scan_cycles_through_the_keyspace() {
        let stream = ids(Pattern::Scan, SEED, 100_003);
        assert_eq!(stream[..3], [0, 1, 2]);
        assert_eq!(stream[100_000..], [0, 1, 2]);
    }

    #[test]
    fn adversarial_patterns_have_their_shape() {
        let looped = ids(Pattern::Loop, SEED, 11_002);
        assert_eq!(
            (looped[5_499], looped[5_500], looped[11_001]),
            (5_499, 0, 1)
        );

        let onehit = ids(Pattern::OneHit, SEED, 100_000);
        let once = onehit.iter().filter(|&&id| id >= ONE_HIT_BASE).count();
        assert!((49_000..51_000).contains(&once), "{once} one-off keys");
        let distinct: HashSet<u64> = onehit
            .iter()
            .copied()
            .filter(|&id| id >= ONE_HIT_BASE)
            .collect();
        assert_eq!(distinct.len(), once);

        // A scan phase covers the keyspace twice, so the next one resumes
        // at 0 again; zipf phases in between are not sequential.
        let phase = ids(Pattern::Phase, SEED, 4 * PHASE_LEN);
        assert_eq!(phase[200_000..200_003], [0, 1, 2]);
        assert_eq!(phase[399_999], 99_999);
        assert_eq!(phase[600_000..600_002], [0, 1]);
        assert_ne!(phase[400_000..400_003], [0, 1, 2]);

        // Weak skew: the top rank gets far less than zipf's 7.8%.
        let weak = Zipf::new(KEYSPACE, WEAK_ZIPF_EXPONENT);
        assert!(weak.probability(0) < 0.01, "{}", weak.probability(0));
    }

    #[test]
    fn ttl_mixes_durable_and_ephemeral_keys() {
        let requests: Vec<Request> = Workload::new(Pattern::Ttl, SEED, 100_000).collect();
        let ephemeral: Vec<&Request> = requests
            .iter()
            .filter(|r| r.key_id >= TTL_EPHEMERAL_BASE)
            .collect();
        let share = ephemeral.len() as f64 / requests.len() as f64;
        assert!((0.29..0.31).contains(&share), "ephemeral share {share}");
        for r in &requests {
            if r.key_id >= TTL_EPHEMERAL_BASE {
                let k = r.key_id - TTL_EPHEMERAL_BASE;
                let newest = r.at.0 / TTL_SPAWN_EVERY;
                assert!(k <= newest && newest - k < TTL_NEWEST, "{r:?}");
                assert_eq!(r.ttl, Some(TTL_EPHEMERAL_LIFE));
            } else {
                assert!(r.key_id < TTL_DURABLE, "{r:?}");
                assert_eq!(r.ttl, None);
            }
        }
        let distinct: HashSet<u64> = ephemeral.iter().map(|r| r.key_id).collect();
        // 100 000 requests create 5 000 ephemeral keys, each read about 6
        // times (fewer for the newest), so almost all are read at least once.
        assert!(distinct.len() > 4_700, "{} ephemeral keys", distinct.len());
    }

    /// FNV-1a over every field of the first 300,000 requests of each
    /// pattern, seed 42, recorded from the v1 generator before scale
    /// existed: scale 1 must reproduce v1 exactly.
    const V1_STREAMS: [(Pattern, u64); 9] = [
        (Pattern::Zipf, 0x1586_c5e6_e68b_98c7),
        (Pattern::Shift, 0xa84e_7309_05a4_636c),
        (Pattern::Mixed, 0xaf5c_6f50_f7c1_43df),
        (Pattern::Scan, 0x44d7_9435_a339_41e5),
        (Pattern::Ttl, 0x8638_0063_2012_e933),
        (Pattern::Loop, 0x743f_a7e0_2234_2fe5),
        (Pattern::Zipf06, 0x5306_d7f0_314c_cf62),
        (Pattern::OneHit, 0xc0ca_1f1b_3232_aabb),
        (Pattern::Phase, 0x8d40_84f3_f08a_92ee),
    ];

    fn stream_hash(requests: impl Iterator<Item = Request>) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for r in requests {
            for x in [r.at.0, r.key_id, r.ttl.map_or(0, |t| t.0 + 1)] {
                h = (h ^ x).wrapping_mul(0x0100_0000_01b3);
            }
        }
        h
    }

    #[test]
    fn scale_one_reproduces_v1_exactly() {
        for (pattern, expected) in V1_STREAMS {
            let v1 = stream_hash(Workload::new(pattern, SEED, 300_000));
            let scaled = stream_hash(Workload::scaled(pattern, SEED, 300_000, 1));
            assert_eq!(v1, expected, "{pattern}: v1 stream changed");
            assert_eq!(scaled, expected, "{pattern}: scale 1 differs from v1");
        }
        assert_eq!(
            (capacity(1), requests(1), keyspace(1)),
            (5_000, 1_000_000, 100_000)
        );
        assert_eq!(Workload::scaled(Pattern::Zipf, SEED, 1, 0).scale(), 1);
    }

    #[test]
    fn scale_two_has_the_v2_shapes() {
        let s = 2;
        assert_eq!(
            (capacity(s), requests(s), keyspace(s)),
            (10_000, 2_000_000, 200_000)
        );
        let ids = |p: Pattern, n: u64| -> Vec<u64> {
            Workload::scaled(p, SEED, n, s).map(|r| r.key_id).collect()
        };

        // zipf: over 0..200,000, the popularity permutation covers it all.
        let w = Workload::scaled(Pattern::Zipf, SEED, 0, s);
        assert_eq!(w.perm.len(), 200_000);
        let zipf = ids(Pattern::Zipf, 200_000);
        assert!(zipf.iter().all(|&id| id < 200_000));
        assert!(zipf.iter().any(|&id| id >= 100_000));

        // shift: epochs of 200,000 requests, the hot set moves 20,000 ranks.
        let stream = ids(Pattern::Shift, 400_000);
        let count = |range: std::ops::Range<usize>, id: u64| {
            stream[range].iter().filter(|&&x| x == id).count()
        };
        let (top0, top1) = (u64::from(w.perm[0]), u64::from(w.perm[20_000]));
        assert!(count(0..200_000, top0) > 10_000);
        assert!(count(100_000..200_000, top0) > 5_000, "still epoch 0");
        assert!(count(200_000..400_000, top0) < 100);
        assert!(count(200_000..400_000, top1) > 10_000);

        // mixed: 200,000 zipf requests, then a scan of 40,000 ids from
        // (j * 40,000) % 200,000.
        let mixed = ids(Pattern::Mixed, 2 * 240_000);
        let first: Vec<u64> = (0..40_000).collect();
        let second: Vec<u64> = (40_000..80_000).collect();
        assert_eq!(mixed[200_000..240_000], first[..]);
        assert_eq!(mixed[440_000..480_000], second[..]);
        assert_ne!(mixed[100_000..100_003], [100_000, 100_001, 100_002]);

        // scan: cycles through 200,000 ids.
        let scan = ids(Pattern::Scan, 200_002);
        assert_eq!(
            (scan[199_999], scan[200_000], scan[200_001]),
            (199_999, 0, 1)
        );

        // ttl: durable ids below 100,000; ephemeral ids from 2,000,000, one
        // created every 20 requests, picked among the 1,000 newest, PX 20000.
        let ttl: Vec<Request> = Workload::scaled(Pattern::Ttl, SEED, 200_000, s).collect();
        let mut oldest_gap = 0;
        for r in &ttl {
            if r.key_id >= 2_000_000 {
                let k = r.key_id - 2_000_000;
                let newest = r.at.0 / 20;
                assert!(k <= newest && newest - k < 1_000, "{r:?}");
                oldest_gap = oldest_gap.max(newest - k);
                assert_eq!(r.ttl, Some(Millis(20_000)));
            } else {
                assert!(r.key_id < 100_000, "{r:?}");
                assert_eq!(r.ttl, None);
            }
        }
        assert!(
            oldest_gap >= 990,
            "picks span the 1,000 newest: {oldest_gap}"
        );
        let share = ttl.iter().filter(|r| r.ttl.is_some()).count() as f64 / ttl.len() as f64;
        assert!((0.29..0.31).contains(&share), "ephemeral share {share}");
        assert!(ttl.iter().any(|r| r.key_id >= 50_000 && r.key_id < 100_000));

        // Wider ids are printed in full.
        assert_eq!(key_name(2_000_123), "key:2000123");
    }
}
