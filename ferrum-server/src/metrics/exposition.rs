//! One scrape: read the server's and the store's own counters into a
//! [`Snapshot`], then write it in the Prometheus text format.
//!
//! Nothing here keeps state between scrapes. Each render builds a fresh
//! [`PrometheusRecorder`], installs it with [`metrics::with_local_recorder`]
//! for the duration of one closure, records the snapshot's values into it
//! and renders it. So the values are exactly what INFO would print at that
//! moment (one source of truth), a series that no longer exists (an AHE
//! policy switched off by `CONFIG SET`) disappears at once, and servers in
//! one process (tests start many) never see each other's series, because no
//! global recorder is involved.
//!
//! `metrics` counters are integers, while the Redis exporter's
//! `redis_commands_duration_seconds_total` is a counter of fractional
//! seconds. That one family is written after the recorder's output, with the
//! exporter crate's own formatting helpers so escaping stays identical.

use ferrum_store::{ControllerState, KeyspaceStats};
use metrics::{counter, describe_counter, describe_gauge, gauge};
use metrics_exporter_prometheus::formatting::{
    sanitize_label_value, write_help_line, write_type_line,
};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusRecorder};

use super::names::*;
use crate::shared::{CommandStat, Shared};

/// Everything one scrape publishes, read at once.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Snapshot {
    /// Hits, misses, expired and evicted keys, summed over the shards.
    pub(crate) keyspace: KeyspaceStats,
    /// `(keys, keys with a TTL)` per database, database 0 first.
    pub(crate) dbs: Vec<(usize, usize)>,
    /// The store's used memory.
    pub(crate) used_memory_bytes: u64,
    /// The store's `maxmemory`; 0 means no limit.
    pub(crate) maxmemory_bytes: u64,
    /// `maxmemory` as configured (`CONFIG GET maxmemory`).
    pub(crate) config_maxmemory_bytes: u64,
    /// `maxmemory-policy`, as INFO prints it.
    pub(crate) maxmemory_policy: &'static str,
    /// `maxclients`.
    pub(crate) maxclients: u64,
    /// Connected clients.
    pub(crate) connected_clients: u64,
    /// Clients blocked in a blocking command.
    pub(crate) blocked_clients: u64,
    /// Connections accepted since start.
    pub(crate) connections_received: u64,
    /// Connections refused because of `maxclients`.
    pub(crate) rejected_connections: u64,
    /// Commands run since start.
    pub(crate) commands_processed: u64,
    /// Calls and time of every command called at least once.
    pub(crate) commands: Vec<CommandStat>,
    /// Bytes read from clients.
    pub(crate) net_input_bytes: u64,
    /// Bytes written to clients.
    pub(crate) net_output_bytes: u64,
    /// Seconds since start.
    pub(crate) uptime_secs: u64,
    /// The RESP port actually bound.
    pub(crate) tcp_port: u16,
    /// AHE's controller, `None` unless the policy is adaptive.
    pub(crate) ahe: Option<ControllerState>,
}

impl Snapshot {
    /// Reads the counters INFO reads, from the same places.
    pub(crate) fn take(shared: &Shared) -> Snapshot {
        use std::sync::atomic::Ordering::Relaxed;
        let stats = &shared.stats;
        let (maxclients, config_maxmemory_bytes) = {
            let config = shared.config();
            (u64::from(config.maxclients), config.maxmemory_bytes)
        };
        Snapshot {
            keyspace: shared.store.stats(),
            dbs: shared.store.keyspace_sizes(),
            used_memory_bytes: shared.store.used_memory_bytes() as u64,
            maxmemory_bytes: shared.store.maxmemory_bytes(),
            config_maxmemory_bytes,
            maxmemory_policy: shared.store.policy().0.as_str(),
            maxclients,
            connected_clients: shared.clients.len() as u64,
            // The counter INFO's `blocked_clients` reads.
            blocked_clients: shared.blocking.blocked_clients() as u64,
            connections_received: stats.connections_received.load(Relaxed),
            rejected_connections: stats.rejected_connections.load(Relaxed),
            commands_processed: stats.commands_processed.load(Relaxed),
            commands: stats.commands(),
            net_input_bytes: stats.net_input_bytes.load(Relaxed),
            net_output_bytes: stats.net_output_bytes.load(Relaxed),
            uptime_secs: shared.clock.uptime_secs(),
            tcp_port: shared.listeners.port(),
            ahe: shared.store.controller_state(),
        }
    }

    /// `hits / (hits + misses)`, 0 before the first lookup.
    pub(crate) fn hit_ratio(&self) -> f64 {
        let ks = &self.keyspace;
        let lookups = ks.keyspace_hits + ks.keyspace_misses;
        if lookups == 0 {
            0.0
        } else {
            ks.keyspace_hits as f64 / lookups as f64
        }
    }

    /// The snapshot in the Prometheus text exposition format (0.0.4).
    pub(crate) fn render(&self) -> String {
        let recorder: PrometheusRecorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        metrics::with_local_recorder(&recorder, || self.record());
        let mut out = handle.render();
        self.render_command_durations(&mut out);
        out
    }

    /// Records every value into the current (local) recorder.
    fn record(&self) {
        self.record_server();
        self.record_keyspace();
        self.record_clients();
        if let Some(ahe) = &self.ahe {
            record_ahe(ahe);
        }
    }

    fn record_server(&self) {
        describe_gauge!(REDIS_UP, "Whether the server answers (always 1 here).");
        gauge!(REDIS_UP).set(1.0);
        describe_gauge!(
            REDIS_INSTANCE_INFO,
            "Information about the FerrumKV instance, in labels."
        );
        gauge!(
            REDIS_INSTANCE_INFO,
            "role" => "master",
            "redis_version" => crate::REDIS_VERSION,
            "redis_mode" => "standalone",
            "os" => std::env::consts::OS,
            "maxmemory_policy" => self.maxmemory_policy,
            "tcp_port" => self.tcp_port.to_string(),
            "process_id" => std::process::id().to_string(),
        )
        .set(1.0);
        describe_gauge!(REDIS_UPTIME_IN_SECONDS, "Seconds since the server started.");
        gauge!(REDIS_UPTIME_IN_SECONDS).set(self.uptime_secs as f64);
        describe_counter!(REDIS_COMMANDS_PROCESSED_TOTAL, "Commands run since start.");
        counter!(REDIS_COMMANDS_PROCESSED_TOTAL).absolute(self.commands_processed);
        describe_counter!(REDIS_COMMANDS_TOTAL, "Total number of calls per command.");
        for c in &self.commands {
            counter!(REDIS_COMMANDS_TOTAL, LABEL_CMD => c.name).absolute(c.calls);
        }
        describe_counter!(REDIS_NET_INPUT_BYTES_TOTAL, "Bytes read from clients.");
        counter!(REDIS_NET_INPUT_BYTES_TOTAL).absolute(self.net_input_bytes);
        describe_counter!(REDIS_NET_OUTPUT_BYTES_TOTAL, "Bytes written to clients.");
        counter!(REDIS_NET_OUTPUT_BYTES_TOTAL).absolute(self.net_output_bytes);
    }

    fn record_keyspace(&self) {
        let ks = &self.keyspace;
        describe_counter!(REDIS_KEYSPACE_HITS_TOTAL, "Read lookups that found a key.");
        counter!(REDIS_KEYSPACE_HITS_TOTAL).absolute(ks.keyspace_hits);
        describe_counter!(
            REDIS_KEYSPACE_MISSES_TOTAL,
            "Read lookups that found nothing."
        );
        counter!(REDIS_KEYSPACE_MISSES_TOTAL).absolute(ks.keyspace_misses);
        describe_counter!(
            REDIS_EVICTED_KEYS_TOTAL,
            "Keys evicted to stay within maxmemory."
        );
        counter!(REDIS_EVICTED_KEYS_TOTAL).absolute(ks.evicted_keys);
        describe_counter!(
            REDIS_EXPIRED_KEYS_TOTAL,
            "Keys removed because their TTL passed."
        );
        counter!(REDIS_EXPIRED_KEYS_TOTAL).absolute(ks.expired_keys);
        describe_gauge!(
            FERRUM_KEYSPACE_HIT_RATIO,
            "Keyspace hits over hits plus misses since start (0 before any lookup)."
        );
        gauge!(FERRUM_KEYSPACE_HIT_RATIO).set(self.hit_ratio());
        // Every database, empty ones too, as the Redis exporter pads them:
        // a series that appears only once a database has keys would make
        // rates and sums jump.
        describe_gauge!(REDIS_DB_KEYS, "Total number of keys by DB.");
        describe_gauge!(
            REDIS_DB_KEYS_EXPIRING,
            "Total number of expiring keys by DB."
        );
        for (i, (keys, expires)) in self.dbs.iter().enumerate() {
            gauge!(REDIS_DB_KEYS, LABEL_DB => format!("db{i}")).set(*keys as f64);
            gauge!(REDIS_DB_KEYS_EXPIRING, LABEL_DB => format!("db{i}")).set(*expires as f64);
        }
        describe_gauge!(
            REDIS_MEMORY_USED_BYTES,
            "Bytes the dataset costs (used_memory)."
        );
        gauge!(REDIS_MEMORY_USED_BYTES).set(self.used_memory_bytes as f64);
        describe_gauge!(
            REDIS_MEMORY_MAX_BYTES,
            "maxmemory in bytes; 0 means no limit."
        );
        gauge!(REDIS_MEMORY_MAX_BYTES).set(self.maxmemory_bytes as f64);
        describe_gauge!(
            REDIS_CONFIG_MAXMEMORY,
            "The maxmemory configuration, in bytes."
        );
        gauge!(REDIS_CONFIG_MAXMEMORY).set(self.config_maxmemory_bytes as f64);
    }

    fn record_clients(&self) {
        describe_gauge!(REDIS_CONNECTED_CLIENTS, "Connected clients.");
        gauge!(REDIS_CONNECTED_CLIENTS).set(self.connected_clients as f64);
        describe_gauge!(
            REDIS_BLOCKED_CLIENTS,
            "Clients blocked in a blocking command."
        );
        gauge!(REDIS_BLOCKED_CLIENTS).set(self.blocked_clients as f64);
        describe_gauge!(REDIS_CONFIG_MAXCLIENTS, "The maxclients configuration.");
        gauge!(REDIS_CONFIG_MAXCLIENTS).set(self.maxclients as f64);
        describe_counter!(REDIS_CONNECTIONS_RECEIVED_TOTAL, "Connections accepted.");
        counter!(REDIS_CONNECTIONS_RECEIVED_TOTAL).absolute(self.connections_received);
        describe_counter!(
            REDIS_REJECTED_CONNECTIONS_TOTAL,
            "Connections refused because of maxclients."
        );
        counter!(REDIS_REJECTED_CONNECTIONS_TOTAL).absolute(self.rejected_connections);
    }

    /// `redis_commands_duration_seconds_total`, a counter of fractional
    /// seconds, which `metrics` counters (integers) cannot hold.
    fn render_command_durations(&self, out: &mut String) {
        if self.commands.is_empty() {
            return;
        }
        let name = REDIS_COMMANDS_DURATION_SECONDS_TOTAL;
        write_help_line(
            out,
            name,
            None,
            None,
            "Total amount of time in seconds spent per command.",
        );
        write_type_line(out, name, None, None, "counter");
        for c in &self.commands {
            let seconds = c.usec as f64 / 1e6;
            out.push_str(&format!(
                "{name}{{{LABEL_CMD}=\"{}\"}} {seconds}\n",
                sanitize_label_value(c.name)
            ));
        }
        out.push('\n');
    }
}

/// AHE's queues, ghosts and target, under FerrumKV's own names.
fn record_ahe(ahe: &ControllerState) {
    describe_gauge!(
        FERRUM_AHE_SMALL_TARGET_SHARE,
        "Small's target share of AHE's entries (0..1), learned from ghost hits."
    );
    gauge!(FERRUM_AHE_SMALL_TARGET_SHARE).set(ahe.small_target_share);
    describe_gauge!(FERRUM_AHE_ENTRIES, "Entries in each of AHE's queues.");
    gauge!(FERRUM_AHE_ENTRIES, LABEL_QUEUE => "small").set(ahe.small_entries as f64);
    gauge!(FERRUM_AHE_ENTRIES, LABEL_QUEUE => "main").set(ahe.main_entries as f64);
    describe_counter!(
        FERRUM_AHE_GHOST_HITS_TOTAL,
        "Misses whose key the queue's ghost remembered."
    );
    counter!(FERRUM_AHE_GHOST_HITS_TOTAL, LABEL_QUEUE => "small").absolute(ahe.small_ghost_hits);
    counter!(FERRUM_AHE_GHOST_HITS_TOTAL, LABEL_QUEUE => "main").absolute(ahe.main_ghost_hits);
    describe_counter!(
        FERRUM_AHE_PROMOTIONS_TOTAL,
        "Entries AHE moved from small to main."
    );
    counter!(FERRUM_AHE_PROMOTIONS_TOTAL).absolute(ahe.promotions);
    describe_counter!(
        FERRUM_AHE_EVICTIONS_TOTAL,
        "Entries evicted from each of AHE's queues."
    );
    counter!(FERRUM_AHE_EVICTIONS_TOTAL, LABEL_QUEUE => "small").absolute(ahe.small_evictions);
    counter!(FERRUM_AHE_EVICTIONS_TOTAL, LABEL_QUEUE => "main").absolute(ahe.main_evictions);
}
