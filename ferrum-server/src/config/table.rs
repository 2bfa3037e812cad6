//! The parameter table: one [`Spec`] row per parameter, in the order
//! `CONFIG GET *` lists them, Redis's aliases, and lookups by name.

use std::path::PathBuf;
use std::time::Duration;

use ferrum_store::glob::glob_match;

use super::kind::{refuse_yes, to_u32, Kind, Spec};
use super::obuf::{render_output_buffer_limits, set_output_buffer_limits};
use super::special::{
    announced_hostname_ok, parse_metrics_addr, proc_title_template_ok, set_bind, set_dbfilename,
    set_dir, set_latency_percentiles, set_maxmemory_clients, set_replicaof, shutdown_flags,
};
use super::syntax::lossy;
use super::tls::{optional_path, parse_protocols, render_path, TLS_AUTH_CLIENTS};
use super::{Allowed, ConfigError, Param, LOGLEVELS, MAXMEMORY_POLICIES};

pub(super) const INT_MAX: u64 = i32::MAX as u64;

pub(super) const LONG_MAX: u64 = i64::MAX as u64;

pub(super) const MB: u64 = 1024 * 1024;

/// Stored parameters with two names, each a row of its own, as Redis 7
/// keeps them: `CONFIG GET` lists both, one value, and an error names the
/// one that was set. (Renamed parameters with a row only under their new
/// name are in [`ALIASES`].)
pub(super) const STORED_ALIASES: &[(&str, &str)] = &[
    ("slave-serve-stale-data", "replica-serve-stale-data"),
    ("slave-read-only", "replica-read-only"),
    ("lua-time-limit", "busy-reply-threshold"),
    ("slaveof", "replicaof"),
    ("min-slaves-to-write", "min-replicas-to-write"),
    ("min-slaves-max-lag", "min-replicas-max-lag"),
    ("repl-ping-slave-period", "repl-ping-replica-period"),
    ("slave-announce-ip", "replica-announce-ip"),
    ("slave-announce-port", "replica-announce-port"),
    ("slave-priority", "replica-priority"),
    ("slave-ignore-maxmemory", "replica-ignore-maxmemory"),
    ("slave-lazy-flush", "replica-lazy-flush"),
    ("cluster-slave-no-failover", "cluster-replica-no-failover"),
    (
        "cluster-slave-validity-factor",
        "cluster-replica-validity-factor",
    ),
];

/// The canonical name of a parameter or alias.
pub(super) fn canonical(name: &str) -> &str {
    STORED_ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, c)| c)
}

/// Every parameter, in the order `CONFIG GET *` lists them.
///
/// Bounds are Redis 7's unless the module docs say otherwise (`INT_MAX` is
/// C's `int` limit, which Redis uses for "unbounded").
#[rustfmt::skip] // One row per parameter reads better than rustfmt's layout.
pub(super) static PARAMS: &[Spec] = &[
    Spec { name: "bind", param: Param::Bind, mutable: true, default: "127.0.0.1",
        kind: Kind::Words { get: |c| c.bind.join(" "), set: set_bind } },
    Spec { name: "port", param: Param::Port, mutable: true, default: "6379",
        kind: Kind::Int { min: 0, max: 65535, get: |c| c.port.into(),
            set: |c, v| c.port = u16::try_from(v).unwrap_or(u16::MAX) } },
    Spec { name: "databases", param: Param::Databases, mutable: false, default: "16",
        kind: Kind::Int { min: 1, max: INT_MAX, get: |c| c.databases.into(), set: |c, v| c.databases = to_u32(v) } },
    Spec { name: "worker-threads", param: Param::WorkerThreads, mutable: false, default: "0",
        kind: Kind::Int { min: 0, max: 1024, get: |c| c.worker_threads.into(), set: |c, v| c.worker_threads = to_u32(v) } },
    Spec { name: "maxmemory", param: Param::Maxmemory, mutable: true, default: "0",
        kind: Kind::Memory { min: 0, max: u64::MAX, get: |c| c.maxmemory_bytes, set: |c, v| c.maxmemory_bytes = v } },
    Spec { name: "maxmemory-policy", param: Param::MaxmemoryPolicy, mutable: true, default: "noeviction",
        kind: Kind::Enum { names: &MAXMEMORY_POLICIES, get: |c| c.maxmemory_policy.as_str(),
            // `v` is one of the names, so it always parses.
            set: |c, v| if let Ok(kind) = v.parse() { c.maxmemory_policy = kind } } },
    Spec { name: "maxmemory-samples", param: Param::MaxmemorySamples, mutable: true, default: "5",
        kind: Kind::Int { min: 1, max: 64, get: |c| c.maxmemory_samples.into(),
            set: |c, v| c.maxmemory_samples = to_u32(v) } },
    Spec { name: "lfu-log-factor", param: Param::LfuLogFactor, mutable: true, default: "10",
        kind: Kind::Int { min: 0, max: INT_MAX, get: |c| c.lfu_log_factor.into(),
            set: |c, v| c.lfu_log_factor = to_u32(v) } },
    Spec { name: "lfu-decay-time", param: Param::LfuDecayTime, mutable: true, default: "1",
        kind: Kind::Int { min: 0, max: INT_MAX, get: |c| c.lfu_decay_time_minutes.into(),
            set: |c, v| c.lfu_decay_time_minutes = to_u32(v) } },
    Spec { name: "requirepass", param: Param::Requirepass, mutable: true, default: "",
        kind: Kind::Text { get: |c| c.requirepass.clone().unwrap_or_default(),
            set: |c, v| { c.requirepass = (!v.is_empty()).then_some(v); Ok(()) } } },
    Spec { name: "maxclients", param: Param::Maxclients, mutable: true, default: "10000",
        kind: Kind::Int { min: 1, max: u32::MAX as u64, get: |c| c.maxclients.into(),
            set: |c, v| c.maxclients = to_u32(v) } },
    Spec { name: "timeout", param: Param::Timeout, mutable: true, default: "0",
        kind: Kind::Int { min: 0, max: INT_MAX, get: |c| c.timeout.as_secs(),
            set: |c, v| c.timeout = Duration::from_secs(v) } },
    Spec { name: "tcp-keepalive", param: Param::TcpKeepalive, mutable: true, default: "300",
        kind: Kind::Int { min: 0, max: INT_MAX, get: |c| c.tcp_keepalive.as_secs(),
            set: |c, v| c.tcp_keepalive = Duration::from_secs(v) } },
    Spec { name: "proto-max-bulk-len", param: Param::ProtoMaxBulkLen, mutable: true, default: "512mb",
        // At most 4 GiB - 1, where Redis allows LONG_MAX: a key's block
        // stores lengths in 32 bits (see ferrum-store's block.rs).
        kind: Kind::Memory { min: MB, max: u32::MAX as u64, get: |c| c.proto_max_bulk_len_bytes,
            set: |c, v| c.proto_max_bulk_len_bytes = v } },
    Spec { name: "client-query-buffer-limit", param: Param::ClientQueryBufferLimit, mutable: true, default: "1gb",
        kind: Kind::Memory { min: MB, max: LONG_MAX, get: |c| c.client_query_buffer_limit_bytes,
            set: |c, v| c.client_query_buffer_limit_bytes = v } },
    Spec { name: "hz", param: Param::Hz, mutable: true, default: "10",
        kind: Kind::Int { min: 1, max: 500, get: |c| c.hz.into(), set: |c, v| c.hz = to_u32(v) } },
    Spec { name: "loglevel", param: Param::Loglevel, mutable: true, default: "notice",
        kind: Kind::Enum { names: LOGLEVELS, get: |c| c.loglevel, set: |c, v| c.loglevel = v } },
    Spec { name: "logfile", param: Param::Logfile, mutable: false, default: "",
        kind: Kind::Text { get: |c| c.logfile.as_ref().map(|p| p.display().to_string()).unwrap_or_default(),
            set: |c, v| { c.logfile = (!v.is_empty()).then(|| PathBuf::from(v)); Ok(()) } } },
    Spec { name: "daemonize", param: Param::Daemonize, mutable: false, default: "no",
        kind: Kind::Bool { get: |_| false,
            set: |_, yes| refuse_yes(yes, "FerrumKV does not daemonize; run it in the foreground under a supervisor") } },
    Spec { name: "enable-debug-command", param: Param::EnableDebugCommand, mutable: false, default: "no",
        kind: Kind::Enum { names: &Allowed::NAMES, get: |c| c.enable_debug_command.as_str(),
            // `v` is one of the names, so it always parses.
            set: |c, v| if let Some(a) = Allowed::from_name(v) { c.enable_debug_command = a } } },
    Spec { name: "enable-module-command", param: Param::EnableModuleCommand, mutable: false, default: "no",
        kind: Kind::Enum { names: &Allowed::NAMES, get: |c| c.enable_module_command.as_str(),
            set: |c, v| if let Some(a) = Allowed::from_name(v) { c.enable_module_command = a } } },
    Spec { name: "protected-mode", param: Param::ProtectedMode, mutable: true, default: "yes",
        kind: Kind::Bool { get: |c| c.protected_mode, set: |c, v| { c.protected_mode = v; Ok(()) } } },
    Spec { name: "appendonly", param: Param::Appendonly, mutable: true, default: "no",
        kind: Kind::Bool { get: |_| false, set: |_, yes| refuse_yes(yes, "FerrumKV has no append-only file (it saves RDB snapshots)") } },
    Spec { name: "save", param: Param::Save, mutable: true, default: "3600 1 300 100 60 10000",
        kind: Kind::Words { get: |c| c.save.clone(), set: |c, words| { c.save = words.join(" "); Ok(()) } } },
    Spec { name: "active-expire-effort", param: Param::ActiveExpireEffort, mutable: true, default: "1",
        kind: Kind::Int { min: 1, max: 10, get: |c| c.active_expire_effort.into(),
            set: |c, v| c.active_expire_effort = to_u32(v) } },
    Spec { name: "client-output-buffer-limit", param: Param::ClientOutputBufferLimit, mutable: true,
        default: "normal 0 0 0 slave 256mb 64mb 60 pubsub 32mb 8mb 60",
        kind: Kind::Words { get: render_output_buffer_limits, set: set_output_buffer_limits } },
    Spec { name: "metrics-addr", param: Param::MetricsAddr, mutable: false, default: "",
        kind: Kind::Text { get: |c| c.metrics_addr.map(|a| a.to_string()).unwrap_or_default(),
            set: |c, v| { c.metrics_addr = parse_metrics_addr(&v)?; Ok(()) } } },
    Spec { name: "dbfilename", param: Param::Dbfilename, mutable: true, default: "dump.rdb",
        kind: Kind::Text { get: |c| c.dbfilename.clone(), set: set_dbfilename } },
    Spec { name: "dir", param: Param::Dir, mutable: true, default: "./",
        kind: Kind::Text { get: |c| c.dir.clone(), set: set_dir } },
    Spec { name: "hash-max-listpack-entries", param: Param::HashMaxListpackEntries, mutable: true, default: "512",
        kind: Kind::Int { min: 0, max: LONG_MAX, get: |c| c.encoding.hash_max_listpack_entries,
            set: |c, v| c.encoding.hash_max_listpack_entries = v } },
    Spec { name: "hash-max-listpack-value", param: Param::HashMaxListpackValue, mutable: true, default: "64",
        kind: Kind::Int { min: 0, max: LONG_MAX, get: |c| c.encoding.hash_max_listpack_value,
            set: |c, v| c.encoding.hash_max_listpack_value = v } },
    Spec { name: "set-max-intset-entries", param: Param::SetMaxIntsetEntries, mutable: true, default: "512",
        kind: Kind::Int { min: 0, max: LONG_MAX, get: |c| c.encoding.set_max_intset_entries,
            set: |c, v| c.encoding.set_max_intset_entries = v } },
    // Redis 7.2's, off by default as in 7.0 (which has no such setting and
    // keeps every set of strings in a hashtable); 128, 7.2's default,
    // packs small string sets as 7.2 does.
    Spec { name: "set-max-listpack-entries", param: Param::SetMaxListpackEntries, mutable: true, default: "0",
        kind: Kind::Int { min: 0, max: LONG_MAX, get: |c| c.encoding.set_max_listpack_entries,
            set: |c, v| c.encoding.set_max_listpack_entries = v } },
    Spec { name: "set-max-listpack-value", param: Param::SetMaxListpackValue, mutable: true, default: "64",
        kind: Kind::Int { min: 0, max: LONG_MAX, get: |c| c.encoding.set_max_listpack_value,
            set: |c, v| c.encoding.set_max_listpack_value = v } },
    Spec { name: "zset-max-listpack-entries", param: Param::ZsetMaxListpackEntries, mutable: true, default: "128",
        kind: Kind::Int { min: 0, max: LONG_MAX, get: |c| c.encoding.zset_max_listpack_entries,
            set: |c, v| c.encoding.zset_max_listpack_entries = v } },
    Spec { name: "zset-max-listpack-value", param: Param::ZsetMaxListpackValue, mutable: true, default: "64",
        kind: Kind::Int { min: 0, max: LONG_MAX, get: |c| c.encoding.zset_max_listpack_value,
            set: |c, v| c.encoding.zset_max_listpack_value = v } },
    Spec { name: "list-max-listpack-size", param: Param::ListMaxListpackSize, mutable: true, default: "-2",
        kind: Kind::SignedInt { min: i32::MIN as i64, max: i32::MAX as i64,
            get: |c| c.encoding.list_max_listpack_size, set: |c, v| c.encoding.list_max_listpack_size = v } },
    // Accepted and reported; FerrumKV does not compress list nodes.
    Spec { name: "list-compress-depth", param: Param::ListCompressDepth, mutable: true, default: "0",
        kind: Kind::Int { min: 0, max: INT_MAX, get: |c| c.encoding.list_compress_depth,
            set: |c, v| c.encoding.list_compress_depth = v } },
    Spec { name: "stream-node-max-entries", param: Param::StreamNodeMaxEntries, mutable: true, default: "100",
        kind: Kind::Int { min: 0, max: LONG_MAX, get: |c| c.encoding.stream_node_max_entries,
            set: |c, v| c.encoding.stream_node_max_entries = v } },
    Spec { name: "slowlog-log-slower-than", param: Param::SlowlogLogSlowerThan, mutable: true, default: "10000",
        kind: Kind::SignedInt { min: -1, max: i64::MAX, get: |c| c.slowlog_log_slower_than,
            set: |c, v| c.slowlog_log_slower_than = v } },
    Spec { name: "slowlog-max-len", param: Param::SlowlogMaxLen, mutable: true, default: "128",
        kind: Kind::Int { min: 0, max: LONG_MAX, get: |c| c.slowlog_max_len, set: |c, v| c.slowlog_max_len = v } },
    // TLS (`crate::tls`). The port is fixed at startup, as `port` is; the
    // files, client authentication and protocols reload on `CONFIG SET`.
    Spec { name: "tls-port", param: Param::TlsPort, mutable: true, default: "0",
        kind: Kind::Int { min: 0, max: 65535, get: |c| c.tls.port.into(),
            set: |c, v| c.tls.port = u16::try_from(v).unwrap_or(u16::MAX) } },
    Spec { name: "tls-cert-file", param: Param::TlsCertFile, mutable: true, default: "",
        kind: Kind::Text { get: |c| render_path(&c.tls.cert_file),
            set: |c, v| { c.tls.cert_file = optional_path(v); Ok(()) } } },
    Spec { name: "tls-key-file", param: Param::TlsKeyFile, mutable: true, default: "",
        kind: Kind::Text { get: |c| render_path(&c.tls.key_file),
            set: |c, v| { c.tls.key_file = optional_path(v); Ok(()) } } },
    Spec { name: "tls-ca-cert-file", param: Param::TlsCaCertFile, mutable: true, default: "",
        kind: Kind::Text { get: |c| render_path(&c.tls.ca_cert_file),
            set: |c, v| { c.tls.ca_cert_file = optional_path(v); Ok(()) } } },
    Spec { name: "tls-ca-cert-dir", param: Param::TlsCaCertDir, mutable: true, default: "",
        kind: Kind::Text { get: |c| render_path(&c.tls.ca_cert_dir),
            set: |c, v| { c.tls.ca_cert_dir = optional_path(v); Ok(()) } } },
    Spec { name: "tls-auth-clients", param: Param::TlsAuthClients, mutable: true, default: "yes",
        kind: Kind::Enum { names: TLS_AUTH_CLIENTS, get: |c| c.tls.auth_clients, set: |c, v| c.tls.auth_clients = v } },
    Spec { name: "tls-protocols", param: Param::TlsProtocols, mutable: true, default: "",
        kind: Kind::Text { get: |c| c.tls.protocols.clone(),
            set: |c, v| { parse_protocols(&v)?; c.tls.protocols = v; Ok(()) } } },
    Spec { name: "tls-ciphers", param: Param::TlsCiphers, mutable: true, default: "",
        kind: Kind::Text { get: |c| c.tls.ciphers.clone(), set: |c, v| { c.tls.ciphers = v; Ok(()) } } },
    Spec { name: "tls-ciphersuites", param: Param::TlsCiphersuites, mutable: true, default: "",
        kind: Kind::Text { get: |c| c.tls.ciphersuites.clone(), set: |c, v| { c.tls.ciphersuites = v; Ok(()) } } },
    Spec { name: "tls-prefer-server-ciphers", param: Param::TlsPreferServerCiphers, mutable: true, default: "no",
        kind: Kind::Bool { get: |c| c.tls.prefer_server_ciphers,
            set: |c, v| { c.tls.prefer_server_ciphers = v; Ok(()) } } },
    Spec { name: "tls-session-caching", param: Param::TlsSessionCaching, mutable: true, default: "yes",
        kind: Kind::Bool { get: |c| c.tls.session_caching, set: |c, v| { c.tls.session_caching = v; Ok(()) } } },
    Spec { name: "tls-session-cache-size", param: Param::TlsSessionCacheSize, mutable: true, default: "20480",
        kind: Kind::Int { min: 0, max: INT_MAX, get: |c| c.tls.session_cache_size,
            set: |c, v| c.tls.session_cache_size = v } },
    Spec { name: "tls-session-cache-timeout", param: Param::TlsSessionCacheTimeout, mutable: true, default: "300",
        kind: Kind::Int { min: 0, max: INT_MAX, get: |c| c.tls.session_cache_timeout_secs,
            set: |c, v| c.tls.session_cache_timeout_secs = v } },
    Spec { name: "tls-dh-params-file", param: Param::TlsDhParamsFile, mutable: true, default: "",
        kind: Kind::Text { get: |c| render_path(&c.tls.dh_params_file),
            set: |c, v| { c.tls.dh_params_file = optional_path(v); Ok(()) } } },
    Spec { name: "tls-cluster", param: Param::TlsCluster, mutable: true, default: "no",
        kind: Kind::Bool { get: |c| c.tls.cluster, set: |c, v| { c.tls.cluster = v; Ok(()) } } },
    Spec { name: "tls-replication", param: Param::TlsReplication, mutable: true, default: "no",
        kind: Kind::Bool { get: |c| c.tls.replication, set: |c, v| { c.tls.replication = v; Ok(()) } } },
    // Accepted and unused: FerrumKV opens no outgoing TLS connection (no
    // replication, a plain cluster bus) and reads only unencrypted keys.
    stored_text!("tls-key-file-pass", "", true),
    stored_text!("tls-client-cert-file", "", true),
    stored_text!("tls-client-key-file", "", true),
    stored_text!("tls-client-key-file-pass", "", true),
    // Cluster mode (see the `cluster` module): fixed at startup, except
    // what Redis lets `CONFIG SET` change. `cluster-announce-ip` is
    // accepted at runtime and takes effect at the next start, since
    // nodes learn each other's address only at `CLUSTER MEET`.
    stored_bool!("cluster-enabled", "no", false),
    stored_text!("cluster-config-file", "nodes.conf", false),
    stored_bool!("cluster-require-full-coverage", "yes", true),
    stored_text!("cluster-announce-ip", "", true),
    // The announced ports are read at startup (`server::open_cluster`),
    // like `cluster-announce-ip`; the hostname and endpoint type also at
    // `CONFIG SET`, as the `*-when-down` pair (`cmd::server`). The rest
    // (bus tuning, failover) is accepted with Redis's validation and changes
    // nothing: FerrumKV's cluster has no failover, no replicas and no
    // gossip bus (see the README).
    stored_int!("cluster-port", 0, 65535, "0", false),
    stored_int!("cluster-announce-port", 0, 65535, "0", true),
    stored_int!("cluster-announce-bus-port", 0, 65535, "0", true),
    stored_int!("cluster-announce-tls-port", 0, 65535, "0", true),
    Spec { name: "cluster-announce-hostname", param: Param::Stored, mutable: true, default: "",
        kind: Kind::Text { get: |c| c.stored_value("cluster-announce-hostname").to_owned(), set: |c, v| {
            announced_hostname_ok(&v)?;
            c.stored.insert("cluster-announce-hostname", v);
            Ok(())
        } } },
    stored_enum!("cluster-preferred-endpoint-type", &["ip", "hostname", "unknown-endpoint"], "ip", true),
    stored_int!("cluster-node-timeout", 0, LONG_MAX, "15000", true),
    stored_int!("cluster-migration-barrier", 0, INT_MAX, "1", true),
    stored_int!("cluster-replica-validity-factor", 0, INT_MAX, "10", true),
    stored_int!("cluster-slave-validity-factor" => "cluster-replica-validity-factor", 0, INT_MAX, "10", true),
    stored_bool!("cluster-replica-no-failover", "no", true),
    stored_bool!("cluster-slave-no-failover" => "cluster-replica-no-failover", "no", true),
    stored_bool!("cluster-allow-replica-migration", "yes", true),
    stored_bool!("cluster-allow-reads-when-down", "no", true),
    stored_bool!("cluster-allow-pubsubshard-when-down", "yes", true),
    stored_memory!("cluster-link-sendbuf-limit", 0, u64::MAX, "0", true),
    // Accepted, with Redis's validation, and changing nothing here.
    stored_bool!("always-show-logo", "no", false),
    Spec { name: "proc-title-template", param: Param::Stored, mutable: true, default: "{title} {listen-addr} {server-mode}",
        kind: Kind::Text { get: |c| c.stored_value("proc-title-template").to_owned(), set: |c, v| {
            if !proc_title_template_ok(&v) {
                return Err("template format is invalid or contains unknown variables".into());
            }
            c.stored.insert("proc-title-template", v);
            Ok(())
        } } },
    Spec { name: "shutdown-on-sigint", param: Param::Stored, mutable: true, default: "default",
        kind: Kind::Words { get: |c| c.stored_value("shutdown-on-sigint").to_owned(), set: |c, words| {
            c.stored.insert("shutdown-on-sigint", shutdown_flags(&words)?);
            Ok(())
        } } },
    Spec { name: "shutdown-on-sigterm", param: Param::Stored, mutable: true, default: "default",
        kind: Kind::Words { get: |c| c.stored_value("shutdown-on-sigterm").to_owned(), set: |c, words| {
            c.stored.insert("shutdown-on-sigterm", shutdown_flags(&words)?);
            Ok(())
        } } },
    stored_int!("loading-process-events-interval-bytes", 1024, INT_MAX, "2097152", true),
    stored_text!("pidfile", "", false),
    stored_text!("unixsocket", "", false),
    stored_int!("unixsocketperm", 0, 0o777, "0", false),
    // Validated and kept in its canonical form (`KA` reads back as `AK`);
    // `crate::notify` sends the events.
    Spec { name: "notify-keyspace-events", param: Param::Stored, mutable: true, default: "",
        kind: Kind::Text { get: |c| c.stored_value("notify-keyspace-events").to_owned(),
            set: |c, v| {
                let flags = crate::notify::parse_flags(v.as_bytes()).ok_or_else(|| {
                    "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.".to_owned()
                })?;
                c.stored.insert("notify-keyspace-events", crate::notify::flags_to_string(flags));
                Ok(())
            } } },
    stored_int!("latency-monitor-threshold", 0, LONG_MAX, "0", true),
    stored_bool!("latency-tracking", "yes", true),
    Spec { name: "latency-tracking-info-percentiles", param: Param::Stored, mutable: true, default: "50 99 99.9",
        kind: Kind::Words { get: |c| c.stored_value("latency-tracking-info-percentiles").to_owned(),
            set: set_latency_percentiles } },
    stored_int!("repl-diskless-sync-delay", 0, INT_MAX, "5", true),
    stored_bool!("repl-diskless-sync", "yes", true),
    stored_bool!("rdbcompression", "yes", true),
    // Redis's hidden switch to exit instead of aborting on a panic; a
    // FerrumKV panic already ends the process (or is caught per command).
    stored_bool!("use-exit-on-panic", "no", true),
    stored_bool!("rdbchecksum", "yes", false),
    // FerrumKV's: a snapshot that fails to load part way leaves the keys
    // read before the damage and the server starts (read at start-up).
    stored_bool!("rdb-load-partial", "no", true),
    stored_bool!("replica-serve-stale-data", "yes", true),
    stored_bool!("slave-serve-stale-data" => "replica-serve-stale-data", "yes", true),
    stored_bool!("replica-read-only", "yes", true),
    stored_bool!("slave-read-only" => "replica-read-only", "yes", true),
    stored_enum!("appendfsync", &["everysec", "always", "no"], "everysec", true),
    stored_text!("appendfilename", "appendonly.aof", false),
    stored_text!("appenddirname", "appendonlydir", false),
    stored_bool!("no-appendfsync-on-rewrite", "no", true),
    stored_bool!("aof-use-rdb-preamble", "yes", true),
    stored_int!("auto-aof-rewrite-percentage", 0, INT_MAX, "100", true),
    stored_bool!("activerehashing", "yes", true),
    stored_enum!("enable-protected-configs", &["no", "yes", "local"], "no", false),
    stored_enum!("propagation-error-behavior", &["ignore", "panic", "panic-on-replicas"], "ignore", true),
    stored_memory!("stream-node-max-bytes", 0, LONG_MAX, "4096", true),
    stored_int!("busy-reply-threshold", 0, LONG_MAX, "5000", true),
    stored_int!("lua-time-limit" => "busy-reply-threshold", 0, LONG_MAX, "5000", true),
    stored_signed!("rdb-key-save-delay", i32::MIN as i64, i32::MAX as i64, "0", true),
    stored_signed!("key-load-delay", i32::MIN as i64, i32::MAX as i64, "0", true),
    stored_enum!("oom-score-adj", &["no", "yes", "relative", "absolute"], "no", true),
    stored_words!("oom-score-adj-values", "0 200 800", true),
    stored_bool!("activedefrag", "no", true),
    stored_int!("active-defrag-threshold-lower", 0, 1000, "10", true),
    stored_int!("active-defrag-threshold-upper", 0, 1000, "100", true),
    stored_memory!("active-defrag-ignore-bytes", 1, LONG_MAX, "104857600", true),
    stored_int!("active-defrag-cycle-min", 1, 99, "1", true),
    stored_int!("active-defrag-cycle-max", 1, 99, "25", true),
    stored_int!("active-defrag-max-scan-fields", 1, LONG_MAX, "1000", true),
    stored_int!("min-replicas-to-write", 0, INT_MAX, "0", true),
    stored_int!("min-slaves-to-write" => "min-replicas-to-write", 0, INT_MAX, "0", true),
    stored_int!("min-replicas-max-lag", 0, INT_MAX, "10", true),
    stored_int!("min-slaves-max-lag" => "min-replicas-max-lag", 0, INT_MAX, "10", true),
    stored_enum!("acl-pubsub-default", &["allchannels", "resetchannels"], "resetchannels", true),
    stored_int!("acllog-max-len", 0, LONG_MAX, "128", true),
    stored_text!("aclfile", "", false),
    stored_int!("tracking-table-max-keys", 0, LONG_MAX, "1000000", true),
    stored_int!("repl-timeout", 1, INT_MAX, "60", true),
    stored_int!("repl-ping-replica-period", 1, INT_MAX, "10", true),
    stored_int!("repl-ping-slave-period" => "repl-ping-replica-period", 1, INT_MAX, "10", true),
    stored_bool!("repl-disable-tcp-nodelay", "no", true),
    stored_enum!("repl-diskless-load", &["disabled", "on-empty-db", "swapdb"], "disabled", true),
    stored_int!("repl-diskless-sync-max-replicas", 0, INT_MAX, "0", true),
    stored_text!("replica-announce-ip", "", true),
    stored_text!("slave-announce-ip" => "replica-announce-ip", "", true),
    stored_int!("replica-announce-port", 0, 65535, "0", true),
    stored_int!("slave-announce-port" => "replica-announce-port", 0, 65535, "0", true),
    stored_bool!("replica-announced", "yes", true),
    stored_int!("replica-priority", 0, INT_MAX, "100", true),
    stored_int!("slave-priority" => "replica-priority", 0, INT_MAX, "100", true),
    stored_bool!("replica-ignore-maxmemory", "yes", true),
    stored_bool!("slave-ignore-maxmemory" => "replica-ignore-maxmemory", "yes", true),
    stored_bool!("replica-lazy-flush", "no", true),
    stored_bool!("slave-lazy-flush" => "replica-lazy-flush", "no", true),
    stored_bool!("replica-ignore-disk-write-errors", "no", true),
    stored_bool!("rdb-del-sync-files", "no", true),
    stored_bool!("rdb-save-incremental-fsync", "yes", true),
    stored_bool!("aof-rewrite-incremental-fsync", "yes", true),
    stored_bool!("aof-load-truncated", "yes", true),
    stored_bool!("aof-timestamp-enabled", "no", true),
    stored_bool!("aof-disable-auto-gc", "no", true),
    stored_memory!("auto-aof-rewrite-min-size", 0, LONG_MAX, "64mb", true),
    stored_memory!("repl-backlog-size", 1, LONG_MAX, "1048576", true),
    stored_int!("repl-backlog-ttl", 0, INT_MAX, "3600", true),
    stored_text!("masterauth", "", true),
    stored_text!("masteruser", "", true),
    stored_int!("hll-sparse-max-bytes", 0, LONG_MAX, "3000", true),
    stored_int!("maxmemory-eviction-tenacity", 0, 100, "10", true),
    stored_text!("bind-source-addr", "", true),
    stored_bool!("lazyfree-lazy-eviction", "no", true),
    stored_bool!("lazyfree-lazy-expire", "no", true),
    stored_bool!("lazyfree-lazy-server-del", "no", true),
    stored_bool!("lazyfree-lazy-user-del", "no", true),
    stored_bool!("lazyfree-lazy-user-flush", "no", true),
    stored_bool!("io-threads-do-reads", "no", false),
    stored_int!("io-threads", 1, 128, "1", false),
    stored_bool!("crash-log-enabled", "yes", true),
    stored_bool!("crash-memcheck-enabled", "yes", true),
    stored_bool!("set-proc-title", "yes", false),
    stored_bool!("stop-writes-on-bgsave-error", "yes", true),
    stored_bool!("dynamic-hz", "yes", true),
    stored_bool!("jemalloc-bg-thread", "yes", true),
    stored_text!("syslog-ident", "redis", false),
    stored_bool!("syslog-enabled", "no", false),
    stored_int!("tcp-backlog", 0, INT_MAX, "511", false),
    stored_int!("socket-mark-id", 0, u32::MAX as u64, "0", false),
    stored_bool!("disable-thp", "yes", false),
    stored_enum!("supervised", &["upstart", "systemd", "auto", "no"], "no", false),
    stored_enum!("syslog-facility",
        &["user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"], "local0", false),
    stored_text!("server_cpulist", "", false),
    stored_text!("bio_cpulist", "", false),
    stored_text!("aof_rewrite_cpulist", "", false),
    stored_text!("bgsave_cpulist", "", false),
    // Mutable in Redis 7.0 (`ignore-warnings ARM64-COW-BUG`): the
    // warnings it silences are Redis's start-up checks, which FerrumKV
    // does not make.
    stored_text!("ignore-warnings", "", true),
    // `no`, `yes` or `clients`: RESTORE decodes every payload into the
    // store's own structures, so it always checks what `yes` checks.
    stored_enum!("sanitize-dump-payload", &["no", "yes", "clients"], "no", true),
    // FerrumKV has no replicas to wait for at SHUTDOWN, as Redis with
    // none, so the wait it bounds is always zero.
    stored_int!("shutdown-timeout", 0, INT_MAX, "10", true),
    stored_row!("replicaof", "replicaof", "", false,
        Kind::Words { get: |c| c.stored_value("replicaof").to_owned(), set: set_replicaof }),
    stored_row!("slaveof", "replicaof", "", false,
        Kind::Words { get: |c| c.stored_value("replicaof").to_owned(), set: set_replicaof }),
    Spec { name: "maxmemory-clients", param: Param::Stored, mutable: true, default: "0",
        kind: Kind::Text { get: |c| c.stored_value("maxmemory-clients").to_owned(), set: set_maxmemory_clients } },
];

/// Redis's other names for parameters, `(alias, canonical name)`: Redis 7
/// renamed the ziplist thresholds to listpack and still accepts the old
/// names everywhere. `CONFIG GET` answers an alias under the name asked for,
/// and a glob lists every matching name, alias or not, as redis-server does.
pub(super) static ALIASES: &[(&str, &str)] = &[
    ("hash-max-ziplist-entries", "hash-max-listpack-entries"),
    ("hash-max-ziplist-value", "hash-max-listpack-value"),
    ("zset-max-ziplist-entries", "zset-max-listpack-entries"),
    ("zset-max-ziplist-value", "zset-max-listpack-value"),
    ("list-max-ziplist-size", "list-max-listpack-size"),
];

/// The row for `name` (a canonical name or an alias, any case).
pub(super) fn lookup(name: &[u8]) -> Option<&'static Spec> {
    let canonical = ALIASES
        .iter()
        .find(|(alias, _)| alias.as_bytes().eq_ignore_ascii_case(name))
        .map_or(name, |(_, canonical)| canonical.as_bytes());
    PARAMS
        .iter()
        .find(|s| s.name.as_bytes().eq_ignore_ascii_case(canonical))
}

/// The name Redis registered for what `CONFIG SET` called `name` (its
/// row's `spec`): the alias's own name for an alias, as Redis 7.0 keeps
/// a copy of the row under each alias, which error texts and the
/// duplicate check go by.
pub(super) fn registered_name(name: &[u8], spec: &'static Spec) -> &'static str {
    ALIASES
        .iter()
        .find(|(alias, _)| alias.as_bytes().eq_ignore_ascii_case(name))
        .map_or(spec.name, |(alias, _)| alias)
}

/// Whether `CONFIG GET pattern` lists the parameter called `name`.
/// Parameters `CONFIG GET` shows only when asked for by name, never for a
/// pattern: those Redis marks hidden, and FerrumKV's own, so that `CONFIG
/// GET *` lists what Redis 7.0.15 lists and setting every parameter it
/// lists to its own value succeeds, as it does in Redis (its test suite
/// does exactly that).
pub(super) const HIDDEN: &[&str] = &[
    "rdb-key-save-delay",
    "key-load-delay",
    "loading-process-events-interval-bytes",
    "use-exit-on-panic",
    "worker-threads",
    "metrics-addr",
    "rdb-load-partial",
];

pub(super) fn selects(pattern: &[u8], name: &str) -> bool {
    if pattern.iter().any(|b| matches!(b, b'*' | b'?' | b'[')) {
        !HIDDEN.contains(&name) && glob_match(pattern, name.as_bytes(), true)
    } else {
        name.as_bytes().eq_ignore_ascii_case(pattern)
    }
}

/// Finds a parameter `CONFIG SET` may change.
pub(super) fn settable(name: &[u8]) -> Result<&'static Spec, ConfigError> {
    let spec = lookup(name).ok_or_else(|| ConfigError::SetUnknown { name: lossy(name) })?;
    if !spec.mutable {
        // Redis names the argument as the client spelled it here.
        return Err(ConfigError::SetImmutable { name: lossy(name) });
    }
    Ok(spec)
}
