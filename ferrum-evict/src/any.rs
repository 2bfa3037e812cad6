//! Runtime choice of policy: `maxmemory-policy` names and a statically
//! dispatched enum over the policies.

use std::fmt;
use std::str::FromStr;

use crate::{EntryId, EvictionPolicy, Lru, LruConfig, Millis};

/// The `maxmemory-policy` values, by their Redis names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PolicyKind {
    /// `noeviction`: writes over the limit fail with OOM.
    #[default]
    NoEviction,
    /// `allkeys-lru`
    AllKeysLru,
    /// `volatile-lru`: LRU among keys with a TTL.
    VolatileLru,
}

impl PolicyKind {
    /// Every kind, in Redis's documentation order.
    pub const ALL: &'static [PolicyKind] = &[
        PolicyKind::NoEviction,
        PolicyKind::AllKeysLru,
        PolicyKind::VolatileLru,
    ];

    /// The Redis name.
    pub fn as_str(self) -> &'static str {
        match self {
            PolicyKind::NoEviction => "noeviction",
            PolicyKind::AllKeysLru => "allkeys-lru",
            PolicyKind::VolatileLru => "volatile-lru",
        }
    }

    /// Whether only keys with a TTL are candidates for eviction.
    pub fn is_volatile(self) -> bool {
        matches!(self, PolicyKind::VolatileLru)
    }

    /// Builds the policy, or `None` for `noeviction`.
    pub fn build(self, _config: &PolicyConfig) -> Option<AnyPolicy> {
        match self {
            PolicyKind::NoEviction => None,
            PolicyKind::AllKeysLru | PolicyKind::VolatileLru => {
                Some(AnyPolicy::Lru(Lru::new(LruConfig::default())))
            }
        }
    }
}

impl fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error for a name that is not a known policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownPolicy;

impl fmt::Display for UnknownPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown maxmemory-policy")
    }
}

impl std::error::Error for UnknownPolicy {}

impl FromStr for PolicyKind {
    type Err = UnknownPolicy;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PolicyKind::ALL
            .iter()
            .copied()
            .find(|k| k.as_str().eq_ignore_ascii_case(s))
            .ok_or(UnknownPolicy)
    }
}

/// Parameters shared by the policies (`maxmemory-samples`, `lfu-*`, seed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyConfig {
    /// `maxmemory-samples`. Default 5, as Redis.
    pub samples: u32,
    /// `lfu-log-factor`. Default 10, as Redis.
    pub lfu_log_factor: u8,
    /// `lfu-decay-time` in minutes. Default 1, as Redis.
    pub lfu_decay_time_minutes: u32,
    /// Seed for every random choice. Default 42.
    pub seed: u64,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            samples: 5,
            lfu_log_factor: 10,
            lfu_decay_time_minutes: 1,
            seed: 42,
        }
    }
}

/// Every policy behind one type, dispatched with a `match`.
#[derive(Clone, Debug)]
pub enum AnyPolicy {
    /// Exact LRU.
    Lru(Lru),
}

macro_rules! dispatch {
    ($self:ident, $p:ident => $e:expr) => {
        match $self {
            AnyPolicy::Lru($p) => $e,
        }
    };
}

impl EvictionPolicy for AnyPolicy {
    fn name(&self) -> &'static str {
        dispatch!(self, p => p.name())
    }
    fn on_insert(&mut self, id: EntryId, key_hash: u64, cost: u32, now: Millis) {
        dispatch!(self, p => p.on_insert(id, key_hash, cost, now))
    }
    fn on_hit(&mut self, id: EntryId, now: Millis) {
        dispatch!(self, p => p.on_hit(id, now))
    }
    fn on_miss(&mut self, key_hash: u64, now: Millis) {
        dispatch!(self, p => p.on_miss(key_hash, now))
    }
    fn on_expiry_change(&mut self, id: EntryId, expires_at: Option<Millis>) {
        dispatch!(self, p => p.on_expiry_change(id, expires_at))
    }
    fn on_remove(&mut self, id: EntryId) {
        dispatch!(self, p => p.on_remove(id))
    }
    fn evict(&mut self, now: Millis) -> Option<EntryId> {
        dispatch!(self, p => p.evict(now))
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
}
