//! State shared by every connection: the store, the configuration, the
//! client registry, blocked clients, Pub/Sub subscriptions, the clock and
//! the server's own counters.
//!
//! # Command stats (design notes)
//!
//! **Command stats** (`shared.rs::ServerStats`). Calls, microseconds,
//! rejected and failed calls are relaxed atomics per row of `COMMANDS` and
//! then per row of `SUBCOMMANDS` (`category::subcommand_of_call` finds the
//! row, the same lookup ACL uses); a subcommand's call counts for its
//! container too. `INFO commandstats` and the exporter's `cmd` labels read
//! one list, `ServerStats::commands`, in which a container appears only
//! through its subcommands (`config|get`), as in Redis 7. A subcommand's
//! arity is checked in `cmd::prepare`, so a call short of arguments is
//! rejected, not failed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use ferrum_store::Store;

use crate::blocking::Blocking;
use crate::client::ClientRegistry;
use crate::clock::Clock;
use crate::command::{CommandSpec, COMMANDS, SUBCOMMANDS};
use crate::config::Config;
use crate::pubsub::PubSub;

/// Everything connections share. One instance per server, behind an `Arc`.
pub(crate) struct Shared {
    /// This struct's own `Arc`, for work that outlives a command (a
    /// background save's thread).
    pub(crate) this: std::sync::Weak<Shared>,
    /// The listening sockets and every task they start (`CONFIG SET
    /// port/bind/tls-port` replace them).
    pub(crate) listeners: crate::listen::Listeners,
    /// The keyspace.
    pub(crate) store: Store,
    /// The running configuration (`CONFIG GET/SET`).
    pub(crate) config: RwLock<Config>,
    /// Connected clients (`CLIENT LIST/KILL`).
    pub(crate) clients: ClientRegistry,
    /// The one clock.
    pub(crate) clock: Clock,
    /// Server-level counters for `INFO stats`.
    pub(crate) stats: ServerStats,
    /// Commands hold this for reading while they run; `EXEC` holds it for
    /// writing, so a transaction's commands run with nothing in between,
    /// while each command still locks only the shards it needs.
    pub(crate) tx_gate: RwLock<()>,
    /// ACL users and the ACL log.
    pub(crate) acl: crate::acl::Acl,
    /// `client-output-buffer-limit normal`, read by connections once per
    /// batch, so cached here instead of behind the config lock.
    pub(crate) normal_obuf: crate::obuf::NormalLimit,
    /// [`Config::lacks_good_replicas`](crate::config::Config): read by
    /// every write, so cached here instead of behind the config lock.
    pub(crate) lacks_good_replicas: std::sync::atomic::AtomicBool,
    /// `enable-debug-command`: who may use `DEBUG` (fixed at start-up).
    pub(crate) debug_command: crate::config::Allowed,
    /// `enable-module-command`: who may use `MODULE LOAD`, `LOADEX` and
    /// `UNLOAD` (fixed at start-up).
    pub(crate) module_command: crate::config::Allowed,
    /// Clients blocked in BLPOP and friends, by key.
    pub(crate) blocking: Arc<Blocking>,
    /// Pub/Sub channels and patterns.
    pub(crate) pubsub: PubSub,
    /// Whether the background expiry cycle runs (`DEBUG SET-ACTIVE-EXPIRE`).
    pub(crate) active_expire: std::sync::atomic::AtomicBool,
    /// Whether the periodic work (active expiry, save points, scheduled
    /// saves) is held (`DEBUG PAUSE-CRON 1`), as Redis's `serverCron`.
    pub(crate) cron_paused: std::sync::atomic::AtomicBool,
    /// Cancelled by `SHUTDOWN`: the server stops as on SIGTERM.
    pub(crate) shutdown_request: tokio_util::sync::CancellationToken,
    /// `SLOWLOG`'s entries and parameters.
    pub(crate) slowlog: crate::slowlog::SlowLog,
    /// Which keyspace notifications are sent (`notify-keyspace-events`).
    pub(crate) notify: crate::notify::Notifier,
    /// `LATENCY`'s events and the subcommands' histograms.
    pub(crate) latency: crate::latency::Latency,
    /// `MONITOR` clients.
    pub(crate) monitors: crate::monitor::Monitors,
    /// Replicas and the replication stream.
    pub(crate) repl: crate::replication::Replication,
    /// `CLIENT PAUSE`.
    pub(crate) pause: crate::pause::Pause,
    /// Client-side caching (`CLIENT TRACKING`).
    pub(crate) tracking: crate::tracking::Tracking,
    /// The background freer of `UNLINK`ed values.
    pub(crate) lazyfree: crate::lazyfree::LazyFree,
    /// The Lua VM, its script cache and function libraries.
    pub(crate) scripting: crate::script::Scripting,
    /// The TLS configuration in force, when `tls-port` is set.
    pub(crate) tls: Option<Arc<crate::tls::TlsContext>>,
    /// `MIGRATE`'s cached connections to target servers (INFO's
    /// `migrate_cached_sockets` counts them).
    pub(crate) migrate: crate::migrate::Links,
    /// `maxmemory-clients`: the limit and the eviction count.
    pub(crate) evict_clients: crate::evict_clients::ClientEviction,
    /// The names clients call commands by (`rename-command`, read at
    /// startup only, as in Redis).
    pub(crate) commands: crate::command::rename::CommandNames,
    /// `DEBUG SET-SKIP-CHECKSUM-VALIDATION`: `RESTORE` skips the payload's
    /// CRC-64 (Redis's switch for its tests of corrupt payloads).
    pub(crate) skip_checksum: std::sync::atomic::AtomicBool,
    /// The last save and what `INFO persistence` reports.
    pub(crate) persistence: crate::persist::Persistence,
    /// The slot map, in cluster mode (`cluster-enabled yes`) only.
    pub(crate) cluster: Option<crate::cluster::Cluster>,
}

impl Shared {
    /// The command a client's `name` calls, after `rename-command`.
    pub(crate) fn command(&self, name: &[u8]) -> Option<&'static CommandSpec> {
        self.commands.resolve(name)
    }

    /// The error writes get now, if any: `-MISCONF` after a failed
    /// background save (with `stop-writes-on-bgsave-error` and save
    /// points), else `-NOREPLICAS` (`min-replicas-to-write`).
    pub(crate) fn refuses_writes(&self) -> Option<&'static str> {
        // One relaxed load each while nothing is wrong.
        if self.persistence.last_bgsave_failed.load(Ordering::Relaxed) {
            let config = self.config();
            if config.stored_value("stop-writes-on-bgsave-error") == "yes"
                && !config.save_points().is_empty()
            {
                return Some(crate::error::MISCONF);
            }
        }
        self.lacks_good_replicas
            .load(Ordering::Relaxed)
            .then_some(crate::error::NOREPLICAS)
    }

    /// Before stopping: lets lagging replicas catch up, for at most
    /// `shutdown-timeout` seconds, with clients' writes paused meanwhile.
    pub(crate) fn wait_for_replicas(&self) {
        if !self.repl.active() {
            return;
        }
        let (timeout, limit) = {
            let c = self.config();
            let secs = c.stored_value("shutdown-timeout").parse().unwrap_or(10);
            (
                std::time::Duration::from_secs(secs),
                c.client_output_buffer_limit.replica,
            )
        };
        let far = tokio::time::Instant::now() + timeout + std::time::Duration::from_secs(1);
        self.pause.pause(far, false);
        crate::script::off_worker(|| self.repl.wait_before_shutdown(timeout, limit));
    }

    /// Recounts the replicas in good standing for `min-replicas-to-write`
    /// (on every expiry tick, as Redis's replication cron does each
    /// second).
    pub(crate) fn refresh_good_replicas(&self) {
        let lacks = self
            .config()
            .lacks_good_replicas(|lag| self.repl.good_replicas(lag));
        self.lacks_good_replicas
            .store(lacks, std::sync::atomic::Ordering::Relaxed);
    }

    /// Reads see expired keys as gone without removing them while clients
    /// are paused (the dataset must not change) or while this server is a
    /// replica (its primary sends the `DEL`).
    pub(crate) fn hold_expiry(&self) {
        self.store
            .hold_expired(self.pause.is_on() || self.repl.is_replica());
    }

    /// Whether clients must `AUTH` first.
    pub(crate) fn requires_auth(&self) -> bool {
        self.acl.requires_auth()
    }

    /// The transaction gate's read side if nobody holds its write side
    /// (for background work that should not wait behind `EXEC` or a
    /// script).
    pub(crate) fn try_gate(&self) -> Option<std::sync::RwLockReadGuard<'_, ()>> {
        match self.tx_gate.try_read() {
            Ok(g) => Some(g),
            Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// Reads the configuration.
    pub(crate) fn config(&self) -> std::sync::RwLockReadGuard<'_, Config> {
        self.config.read().unwrap_or_else(|p| p.into_inner())
    }
}

impl crate::tracking::Recipients for Shared {
    fn inbox(&self, id: u64) -> Option<Arc<crate::pubsub::Subscriber>> {
        self.clients.inbox(id)
    }

    fn pubsub_limit(&self) -> crate::config::OutputBufferLimit {
        self.config().client_output_buffer_limit.pubsub
    }
}

/// Per-command call counts and times, and connection counters. All plain
/// atomics: every command touches them, so no lock may sit here.
pub(crate) struct ServerStats {
    /// Connections accepted since start.
    pub(crate) connections_received: AtomicU64,
    /// Connections refused because of `maxclients`.
    pub(crate) rejected_connections: AtomicU64,
    /// Commands run since start.
    pub(crate) commands_processed: AtomicU64,
    /// Bytes read from clients.
    pub(crate) net_input_bytes: AtomicU64,
    /// Bytes written to clients.
    pub(crate) net_output_bytes: AtomicU64,
    /// Changes to the keyspace since start (`rdb_changes_since_last_save`
    /// counts from the last save's). Each successful write command counts
    /// one, unless it reports its own count.
    pub(crate) dirty: AtomicU64,
    /// Error replies sent (`total_error_replies`).
    pub(crate) error_replies: AtomicU64,
    /// Error replies by error code (`INFO errorstats`).
    errors: std::sync::Mutex<std::collections::BTreeMap<String, u64>>,
    /// Calls and microseconds per command, indexed like `COMMANDS`, then
    /// per subcommand, indexed like `SUBCOMMANDS` after them (a
    /// subcommand's call counts for its container as well).
    per_command: Box<[CommandCounters]>,
    /// Per-command latency histograms (`LATENCY HISTOGRAM`).
    pub(crate) histogram: crate::latency::Histograms,
}

#[derive(Default)]
struct CommandCounters {
    calls: AtomicU64,
    usec: AtomicU64,
    /// Refused before running (arity, `NOAUTH`, ...).
    rejected: AtomicU64,
    /// Ran and replied with an error.
    failed: AtomicU64,
}

/// One command's (or subcommand's) totals, for `INFO commandstats` and
/// the exporter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CommandStat {
    /// Lower-case command name; `container|sub` for a subcommand.
    pub(crate) name: &'static str,
    /// Calls since start (or `CONFIG RESETSTAT`).
    pub(crate) calls: u64,
    /// Microseconds spent in the command, summed.
    pub(crate) usec: u64,
    /// Calls refused before running (arity, `NOAUTH`, `OOM`...).
    pub(crate) rejected: u64,
    /// Calls that ran and replied with an error.
    pub(crate) failed: u64,
}

impl Default for ServerStats {
    fn default() -> Self {
        ServerStats {
            connections_received: AtomicU64::new(0),
            rejected_connections: AtomicU64::new(0),
            commands_processed: AtomicU64::new(0),
            net_input_bytes: AtomicU64::new(0),
            net_output_bytes: AtomicU64::new(0),
            dirty: AtomicU64::new(0),
            error_replies: AtomicU64::new(0),
            errors: std::sync::Mutex::default(),
            per_command: (0..COMMANDS.len() + SUBCOMMANDS.len())
                .map(|_| CommandCounters::default())
                .collect(),
            histogram: crate::latency::Histograms::default(),
        }
    }
}

impl ServerStats {
    /// Counts one call of `spec` (and of its subcommand at `sub` in
    /// `SUBCOMMANDS`, for a container) that took `usec` microseconds.
    pub(crate) fn record_call(&self, spec: &'static CommandSpec, sub: Option<usize>, usec: u64) {
        self.commands_processed.fetch_add(1, Ordering::Relaxed);
        for c in self.counters(spec, sub) {
            c.calls.fetch_add(1, Ordering::Relaxed);
            c.usec.fetch_add(usec, Ordering::Relaxed);
        }
        self.histogram.record(spec.index(), usec);
    }

    /// The counters a call of `spec` (and its subcommand `sub`) updates.
    fn counters(
        &self,
        spec: &'static CommandSpec,
        sub: Option<usize>,
    ) -> impl Iterator<Item = &CommandCounters> {
        let sub = sub.and_then(|i| self.per_command.get(COMMANDS.len() + i));
        std::iter::once(&self.per_command[spec.index()]).chain(sub)
    }

    /// Counts an error reply with this text (its first word is the code).
    pub(crate) fn record_error(&self, text: &[u8]) {
        self.error_replies.fetch_add(1, Ordering::Relaxed);
        let code = text.split(|&b| b == b' ').next().unwrap_or_default();
        let code = String::from_utf8_lossy(code).into_owned();
        let mut errors = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        // Redis keeps at most 128 distinct codes.
        if errors.len() < 128 || errors.contains_key(&code) {
            *errors.entry(code).or_insert(0) += 1;
        }
    }

    /// Error replies by code, for `INFO errorstats`.
    pub(crate) fn errors(&self) -> Vec<(String, u64)> {
        let errors = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        errors.iter().map(|(k, v)| (k.clone(), *v)).collect()
    }

    /// Counts a call of `spec` (and its subcommand `sub`) refused before
    /// it ran.
    pub(crate) fn record_rejected(&self, spec: &'static CommandSpec, sub: Option<usize>) {
        for c in self.counters(spec, sub) {
            c.rejected.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts a call of `spec` (and its subcommand `sub`) that replied
    /// with an error.
    pub(crate) fn record_failed(&self, spec: &'static CommandSpec, sub: Option<usize>) {
        for c in self.counters(spec, sub) {
            c.failed.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Totals of every command called, refused or failed at least once,
    /// in table order; a container's are its subcommands' (`config|get`),
    /// as Redis 7's `INFO commandstats` lists them.
    pub(crate) fn commands(&self) -> Vec<CommandStat> {
        let mut out = Vec::new();
        for spec in COMMANDS {
            if spec.has(crate::command::flag::CONTAINER) {
                for (i, sub) in crate::command::category::subcommands_of(spec) {
                    out.extend(self.stat(sub.full_name, COMMANDS.len() + i));
                }
            } else {
                out.extend(self.stat(spec.name, spec.index()));
            }
        }
        out
    }

    /// The totals at `index` in `per_command` under `name`, unless all 0.
    fn stat(&self, name: &'static str, index: usize) -> Option<CommandStat> {
        let c = &self.per_command[index];
        let stat = CommandStat {
            name,
            calls: c.calls.load(Ordering::Relaxed),
            usec: c.usec.load(Ordering::Relaxed),
            rejected: c.rejected.load(Ordering::Relaxed),
            failed: c.failed.load(Ordering::Relaxed),
        };
        (stat.calls + stat.rejected + stat.failed > 0).then_some(stat)
    }

    /// Zeroes the counters (`CONFIG RESETSTAT`).
    pub(crate) fn reset(&self) {
        for c in [
            &self.connections_received,
            &self.rejected_connections,
            &self.commands_processed,
            &self.net_input_bytes,
            &self.net_output_bytes,
            &self.error_replies,
        ] {
            c.store(0, Ordering::Relaxed);
        }
        for c in self.per_command.iter() {
            c.calls.store(0, Ordering::Relaxed);
            c.usec.store(0, Ordering::Relaxed);
            c.rejected.store(0, Ordering::Relaxed);
            c.failed.store(0, Ordering::Relaxed);
        }
        self.errors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        self.histogram.reset();
    }
}
