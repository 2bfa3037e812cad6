//! Runtime policy selection: Redis's `maxmemory-policy` names, their shared
//! parameters, and [`AnyPolicy`], the statically dispatched enum the store
//! holds so `CONFIG SET maxmemory-policy` can swap policies.

use std::fmt;
use std::str::FromStr;

use crate::{
    Ahe, AheConfig, EntryId, EvictionPolicy, Lfu, LfuConfig, Lru, LruConfig, Millis, Random,
    RandomConfig, Ttl, TtlConfig,
};

/// One of Redis's `maxmemory-policy` values.
///
/// `allkeys-*` policies track every key; `volatile-*` policies track only
/// keys with an expiry. The policy object is the same for both: the *store*
/// decides what it registers (see [`PolicyKind::is_volatile`]).
/// More variants may be added, hence `#[non_exhaustive]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PolicyKind {
    /// `noeviction`: writes over the limit fail with `-OOM`.
    NoEviction,
    /// `allkeys-lru`.
    AllKeysLru,
    /// `allkeys-lfu`.
    AllKeysLfu,
    /// `allkeys-random`.
    AllKeysRandom,
    /// `volatile-lru`.
    VolatileLru,
    /// `volatile-lfu`.
    VolatileLfu,
    /// `volatile-random`.
    VolatileRandom,
    /// `volatile-ttl`.
    VolatileTtl,
    /// `allkeys-ahe`: FerrumKV's adaptive hybrid policy.
    AllKeysAhe,
    /// `volatile-ahe`.
    VolatileAhe,
}

impl PolicyKind {
    /// Every kind, in Redis's documentation order, then FerrumKV's own.
    pub const ALL: [PolicyKind; 10] = [
        PolicyKind::NoEviction,
        PolicyKind::AllKeysLru,
        PolicyKind::AllKeysLfu,
        PolicyKind::AllKeysRandom,
        PolicyKind::VolatileLru,
        PolicyKind::VolatileLfu,
        PolicyKind::VolatileRandom,
        PolicyKind::VolatileTtl,
        PolicyKind::AllKeysAhe,
        PolicyKind::VolatileAhe,
    ];

    /// The Redis name, as `CONFIG GET maxmemory-policy` prints it.
    /// A `const fn`, so a configuration table can list the names as a
    /// constant.
    pub const fn as_str(self) -> &'static str {
        match self {
            PolicyKind::NoEviction => "noeviction",
            PolicyKind::AllKeysLru => "allkeys-lru",
            PolicyKind::AllKeysLfu => "allkeys-lfu",
            PolicyKind::AllKeysRandom => "allkeys-random",
            PolicyKind::VolatileLru => "volatile-lru",
            PolicyKind::VolatileLfu => "volatile-lfu",
            PolicyKind::VolatileRandom => "volatile-random",
            PolicyKind::VolatileTtl => "volatile-ttl",
            PolicyKind::AllKeysAhe => "allkeys-ahe",
            PolicyKind::VolatileAhe => "volatile-ahe",
        }
    }

    /// Whether only keys with an expiry are eviction candidates. The store
    /// registers just those keys with the policy.
    pub fn is_volatile(self) -> bool {
        matches!(
            self,
            PolicyKind::VolatileLru
                | PolicyKind::VolatileLfu
                | PolicyKind::VolatileRandom
                | PolicyKind::VolatileTtl
                | PolicyKind::VolatileAhe
        )
    }

    /// Builds the policy, or `None` for [`PolicyKind::NoEviction`], which
    /// has nothing to choose.
    pub fn build(self, config: &PolicyConfig) -> Option<AnyPolicy> {
        let policy = match self {
            PolicyKind::NoEviction => return None,
            PolicyKind::AllKeysLru | PolicyKind::VolatileLru => {
                AnyPolicy::Lru(Lru::new(LruConfig::default()))
            }
            PolicyKind::AllKeysLfu | PolicyKind::VolatileLfu => {
                AnyPolicy::Lfu(Lfu::new(LfuConfig {
                    log_factor: config.lfu_log_factor,
                    decay_time: Millis(u64::from(config.lfu_decay_time_minutes) * 60_000),
                    seed: config.seed,
                    ..LfuConfig::default()
                }))
            }
            PolicyKind::AllKeysRandom | PolicyKind::VolatileRandom => {
                AnyPolicy::Random(Random::new(RandomConfig { seed: config.seed }))
            }
            PolicyKind::VolatileTtl => AnyPolicy::Ttl(Ttl::new(TtlConfig::default())),
            PolicyKind::AllKeysAhe | PolicyKind::VolatileAhe => {
                AnyPolicy::Ahe(Box::new(Ahe::new(AheConfig {
                    expired_first: config.expired_first,
                    ..AheConfig::default()
                })))
            }
        };
        Some(policy)
    }
}

impl fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error for a string that is not a `maxmemory-policy` name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsePolicyError {
    input: String,
}

impl fmt::Display for ParsePolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown maxmemory-policy '{}'", self.input)
    }
}

impl std::error::Error for ParsePolicyError {}

impl FromStr for PolicyKind {
    type Err = ParsePolicyError;

    /// Parses a Redis policy name, ignoring ASCII case as Redis does.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PolicyKind::ALL
            .into_iter()
            .find(|kind| kind.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| ParsePolicyError {
                input: s.to_owned(),
            })
    }
}

/// The eviction parameters of `redis.conf`, shared by every policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyConfig {
    /// `maxmemory-samples`. Default: 5, as Redis. Accepted and reported for
    /// compatibility; the current policies choose exactly and do not sample.
    pub samples: u32,
    /// `lfu-log-factor`. Default: 10, as Redis.
    pub lfu_log_factor: u8,
    /// `lfu-decay-time`, in minutes; 0 disables decay. Default: 1, as Redis.
    pub lfu_decay_time_minutes: u32,
    /// Seed for policies that draw random numbers. Default: 0.
    pub seed: u64,
    /// Whether AHE keeps the keys' expiry deadlines to evict expired
    /// entries first ([`AheConfig::expired_first`]; LFU always does).
    /// Default: false, for a store that expires keys itself, as
    /// FerrumKV's does; a cache that never removes expired entries (the
    /// simulator's slab) sets it.
    pub expired_first: bool,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            samples: 5,
            lfu_log_factor: 10,
            lfu_decay_time_minutes: 1,
            seed: 0,
            expired_first: false,
        }
    }
}

/// Any built-in policy, chosen at runtime and dispatched with a `match`, so
/// the hot path has no virtual call.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum AnyPolicy {
    /// Exact LRU.
    Lru(Lru),
    /// LFU with Redis's counter and an exact, aged victim choice.
    Lfu(Lfu),
    /// Uniform random.
    Random(Random),
    /// Nearest deadline first.
    Ttl(Ttl),
    /// Adaptive hybrid (boxed: it is much larger than the others).
    Ahe(Box<Ahe>),
}

/// Forwards a method call to whichever policy the enum holds.
macro_rules! dispatch {
    ($self:expr, $p:ident => $call:expr) => {
        match $self {
            AnyPolicy::Lru($p) => $call,
            AnyPolicy::Lfu($p) => $call,
            AnyPolicy::Random($p) => $call,
            AnyPolicy::Ttl($p) => $call,
            AnyPolicy::Ahe($p) => $call,
        }
    };
}

impl EvictionPolicy for AnyPolicy {
    fn name(&self) -> &'static str {
        dispatch!(self, p => p.name())
    }

    #[inline]
    fn on_insert(&mut self, id: EntryId, key_hash: u64, cost: u32, now: Millis) {
        dispatch!(self, p => p.on_insert(id, key_hash, cost, now))
    }

    #[inline]
    fn on_hit(&mut self, id: EntryId, key_hash: u64, now: Millis) {
        dispatch!(self, p => p.on_hit(id, key_hash, now))
    }

    #[inline]
    fn on_miss(&mut self, key_hash: u64, now: Millis) {
        dispatch!(self, p => p.on_miss(key_hash, now))
    }

    #[inline]
    fn on_expiry_change(&mut self, id: EntryId, expires_at: Option<Millis>) {
        dispatch!(self, p => p.on_expiry_change(id, expires_at))
    }

    #[inline]
    fn on_remove(&mut self, id: EntryId) {
        dispatch!(self, p => p.on_remove(id))
    }

    #[inline]
    fn evict(&mut self, now: Millis, key_hash: &dyn Fn(EntryId) -> u64) -> Option<EntryId> {
        dispatch!(self, p => p.evict(now, key_hash))
    }

    fn len(&self) -> usize {
        dispatch!(self, p => p.len())
    }

    fn heap_bytes(&self) -> usize {
        dispatch!(self, p => p.heap_bytes())
    }

    fn lfu_counter(&self, id: EntryId, now: Millis) -> Option<u8> {
        dispatch!(self, p => p.lfu_counter(id, now))
    }

    fn set_lfu_counter(&mut self, id: EntryId, counter: u8, now: Millis) {
        dispatch!(self, p => p.set_lfu_counter(id, counter, now))
    }

    fn warm_hint(&self, id: EntryId, now: Millis) -> Option<u8> {
        dispatch!(self, p => p.warm_hint(id, now))
    }

    fn restore_warm_hint(&mut self, id: EntryId, hint: u8, now: Millis) {
        dispatch!(self, p => p.restore_warm_hint(id, hint, now))
    }

    fn export_state(&self) -> Option<Vec<u8>> {
        dispatch!(self, p => p.export_state())
    }

    fn import_state(&mut self, state: &[u8]) {
        dispatch!(self, p => p.import_state(state))
    }

    fn export_order(&self) -> Option<Vec<(EntryId, u32)>> {
        dispatch!(self, p => p.export_order())
    }

    fn import_order(&mut self, order: &[(EntryId, u32)]) {
        dispatch!(self, p => p.import_order(order))
    }

    fn controller_state(&self) -> Option<crate::ControllerState> {
        dispatch!(self, p => p.controller_state())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_case_insensitively() {
        for kind in PolicyKind::ALL {
            assert_eq!(kind.as_str().parse::<PolicyKind>(), Ok(kind));
            assert_eq!(kind.as_str().to_uppercase().parse::<PolicyKind>(), Ok(kind));
            assert_eq!(kind.to_string(), kind.as_str());
        }
        assert_eq!(
            "AllKeys-LFU".parse::<PolicyKind>(),
            Ok(PolicyKind::AllKeysLfu)
        );
        let err = "allkeys-fifo".parse::<PolicyKind>().map(|_| ());
        assert_eq!(
            err.map_err(|e| e.to_string()),
            Err("unknown maxmemory-policy 'allkeys-fifo'".to_owned())
        );
    }

    #[test]
    fn builds_the_matching_policy() {
        let config = PolicyConfig::default();
        assert!(PolicyKind::NoEviction.build(&config).is_none());
        let names: Vec<(&str, bool)> = PolicyKind::ALL[1..]
            .iter()
            .map(|k| {
                let name = k.build(&config).map_or("none", |p| p.name());
                (name, k.is_volatile())
            })
            .collect();
        assert_eq!(
            names,
            [
                ("lru", false),
                ("lfu", false),
                ("random", false),
                ("lru", true),
                ("lfu", true),
                ("random", true),
                ("ttl", true),
                ("ahe", false),
                ("ahe", true),
            ]
        );
        assert!(!PolicyKind::NoEviction.is_volatile());
    }

    #[test]
    fn lfu_counter_is_answered_only_by_lfu() {
        let config = PolicyConfig::default();
        for kind in [PolicyKind::AllKeysLru, PolicyKind::AllKeysLfu] {
            let Some(mut policy) = kind.build(&config) else {
                panic!("{kind} built nothing");
            };
            policy.on_insert(EntryId(0), 0, 1, Millis(0));
            let expected = (kind == PolicyKind::AllKeysLfu).then_some(crate::LFU_INIT_VAL);
            assert_eq!(policy.lfu_counter(EntryId(0), Millis(0)), expected);
            assert_eq!(policy.lfu_counter(EntryId(1), Millis(0)), None);
        }
    }
}
