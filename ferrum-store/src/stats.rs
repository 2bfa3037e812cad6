//! The keyspace counters INFO and Prometheus publish.

use std::ops::AddAssign;

/// Plain counters kept by each shard and summed by [`Store::stats`].
///
/// They are the one source of truth: the server reads them for `INFO stats`
/// and for its Prometheus exporter alike.
///
/// [`Store::stats`]: crate::Store::stats
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyspaceStats {
    /// Read lookups that found a live key.
    pub keyspace_hits: u64,
    /// Read lookups that found nothing (or an expired key).
    pub keyspace_misses: u64,
    /// Keys removed because their TTL passed, lazily or by the active cycle.
    pub expired_keys: u64,
    /// Keys removed to get back under `maxmemory`.
    pub evicted_keys: u64,
}

impl AddAssign for KeyspaceStats {
    fn add_assign(&mut self, rhs: KeyspaceStats) {
        self.keyspace_hits += rhs.keyspace_hits;
        self.keyspace_misses += rhs.keyspace_misses;
        self.expired_keys += rhs.expired_keys;
        self.evicted_keys += rhs.evicted_keys;
    }
}
