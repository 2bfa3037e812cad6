//! Every metric name the exporter publishes, in one place (STYLE.md §3).
//!
//! Where a concept is also the Redis exporter's (oliver006/redis_exporter),
//! the name and labels are exactly its own, so dashboards written for Redis
//! read FerrumKV unchanged. FerrumKV's own state is under `ferrum_`.

/// Label naming the command on the per-command series (`cmd="get"`), as the
/// Redis exporter labels `cmdstat_get`.
pub(crate) const LABEL_CMD: &str = "cmd";
/// Label naming the database on the per-database series (`db="db0"`).
pub(crate) const LABEL_DB: &str = "db";
/// Label naming one of AHE's queues (`small` or `main`).
pub(crate) const LABEL_QUEUE: &str = "queue";

/// Gauge: 1 while the server answers (the Redis exporter reports 0 when it
/// cannot reach Redis; an in-process exporter that answers is up).
pub(crate) const REDIS_UP: &str = "redis_up";
/// Gauge, always 1: the instance's description in labels, among them
/// `maxmemory_policy`.
pub(crate) const REDIS_INSTANCE_INFO: &str = "redis_instance_info";
/// Gauge: seconds since the server started.
pub(crate) const REDIS_UPTIME_IN_SECONDS: &str = "redis_uptime_in_seconds";

/// Counter: read lookups that found a live key.
pub(crate) const REDIS_KEYSPACE_HITS_TOTAL: &str = "redis_keyspace_hits_total";
/// Counter: read lookups that found nothing.
pub(crate) const REDIS_KEYSPACE_MISSES_TOTAL: &str = "redis_keyspace_misses_total";
/// Counter: keys removed to get back under `maxmemory`.
pub(crate) const REDIS_EVICTED_KEYS_TOTAL: &str = "redis_evicted_keys_total";
/// Counter: keys removed because their TTL passed.
pub(crate) const REDIS_EXPIRED_KEYS_TOTAL: &str = "redis_expired_keys_total";
/// Gauge, labelled `db`: keys per database.
pub(crate) const REDIS_DB_KEYS: &str = "redis_db_keys";
/// Gauge, labelled `db`: keys with a TTL per database.
pub(crate) const REDIS_DB_KEYS_EXPIRING: &str = "redis_db_keys_expiring";

/// Gauge: bytes the dataset costs (INFO `used_memory`).
pub(crate) const REDIS_MEMORY_USED_BYTES: &str = "redis_memory_used_bytes";
/// Gauge: the store's `maxmemory` (INFO `maxmemory`); 0 means no limit.
pub(crate) const REDIS_MEMORY_MAX_BYTES: &str = "redis_memory_max_bytes";
/// Gauge: `maxmemory` as configured (`CONFIG GET maxmemory`).
pub(crate) const REDIS_CONFIG_MAXMEMORY: &str = "redis_config_maxmemory";
/// Gauge: `maxclients` as configured.
pub(crate) const REDIS_CONFIG_MAXCLIENTS: &str = "redis_config_maxclients";

/// Gauge: connected clients.
pub(crate) const REDIS_CONNECTED_CLIENTS: &str = "redis_connected_clients";
/// Gauge: clients blocked in a blocking command.
pub(crate) const REDIS_BLOCKED_CLIENTS: &str = "redis_blocked_clients";
/// Counter: connections accepted.
pub(crate) const REDIS_CONNECTIONS_RECEIVED_TOTAL: &str = "redis_connections_received_total";
/// Counter: connections refused because of `maxclients`.
pub(crate) const REDIS_REJECTED_CONNECTIONS_TOTAL: &str = "redis_rejected_connections_total";

/// Counter: commands run.
pub(crate) const REDIS_COMMANDS_PROCESSED_TOTAL: &str = "redis_commands_processed_total";
/// Counter, labelled `cmd`: calls per command.
pub(crate) const REDIS_COMMANDS_TOTAL: &str = "redis_commands_total";
/// Counter, labelled `cmd`: seconds spent per command (fractional).
pub(crate) const REDIS_COMMANDS_DURATION_SECONDS_TOTAL: &str =
    "redis_commands_duration_seconds_total";
/// Counter: bytes read from clients.
pub(crate) const REDIS_NET_INPUT_BYTES_TOTAL: &str = "redis_net_input_bytes_total";
/// Counter: bytes written to clients.
pub(crate) const REDIS_NET_OUTPUT_BYTES_TOTAL: &str = "redis_net_output_bytes_total";

/// Gauge: hits / (hits + misses) since start, 0 before the first lookup.
pub(crate) const FERRUM_KEYSPACE_HIT_RATIO: &str = "ferrum_keyspace_hit_ratio";
/// Gauge: small's target share of AHE's entries, `0..=1`: what its
/// adaptive rule learned.
pub(crate) const FERRUM_AHE_SMALL_TARGET_SHARE: &str = "ferrum_ahe_small_target_share";
/// Gauge, labelled `queue` (`small`, `main`): entries in each of AHE's
/// queues.
pub(crate) const FERRUM_AHE_ENTRIES: &str = "ferrum_ahe_entries";
/// Counter, labelled `queue`: misses whose key that queue's ghost
/// remembered.
pub(crate) const FERRUM_AHE_GHOST_HITS_TOTAL: &str = "ferrum_ahe_ghost_hits_total";
/// Counter: entries AHE promoted from small to main.
pub(crate) const FERRUM_AHE_PROMOTIONS_TOTAL: &str = "ferrum_ahe_promotions_total";
/// Counter, labelled `queue`: entries evicted from that queue.
pub(crate) const FERRUM_AHE_EVICTIONS_TOTAL: &str = "ferrum_ahe_evictions_total";

/// Every metric name above, for tests that check dashboards against them.
#[cfg(test)]
pub(crate) const ALL: &[&str] = &[
    REDIS_UP,
    REDIS_INSTANCE_INFO,
    REDIS_UPTIME_IN_SECONDS,
    REDIS_KEYSPACE_HITS_TOTAL,
    REDIS_KEYSPACE_MISSES_TOTAL,
    REDIS_EVICTED_KEYS_TOTAL,
    REDIS_EXPIRED_KEYS_TOTAL,
    REDIS_DB_KEYS,
    REDIS_DB_KEYS_EXPIRING,
    REDIS_MEMORY_USED_BYTES,
    REDIS_MEMORY_MAX_BYTES,
    REDIS_CONFIG_MAXMEMORY,
    REDIS_CONFIG_MAXCLIENTS,
    REDIS_CONNECTED_CLIENTS,
    REDIS_BLOCKED_CLIENTS,
    REDIS_CONNECTIONS_RECEIVED_TOTAL,
    REDIS_REJECTED_CONNECTIONS_TOTAL,
    REDIS_COMMANDS_PROCESSED_TOTAL,
    REDIS_COMMANDS_TOTAL,
    REDIS_COMMANDS_DURATION_SECONDS_TOTAL,
    REDIS_NET_INPUT_BYTES_TOTAL,
    REDIS_NET_OUTPUT_BYTES_TOTAL,
    FERRUM_KEYSPACE_HIT_RATIO,
    FERRUM_AHE_SMALL_TARGET_SHARE,
    FERRUM_AHE_ENTRIES,
    FERRUM_AHE_GHOST_HITS_TOTAL,
    FERRUM_AHE_PROMOTIONS_TOTAL,
    FERRUM_AHE_EVICTIONS_TOTAL,
];
