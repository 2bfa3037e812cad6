//! FerrumKV's configuration: the redis-server command line, redis.conf files,
//! and `CONFIG GET` / `CONFIG SET` at runtime, all driven by one table.
//!
//! Every parameter is one row of the table (`table::PARAMS`): its name,
//! whether `CONFIG SET` may change it, its default written as redis.conf
//! text, and its kind (`kind::Kind`),
//! which carries the value syntax and a getter/setter pair for the typed field
//! of [`Config`]. Startup, `CONFIG GET` and `CONFIG SET` all go through the
//! row, so adding a parameter is a field, a [`Param`] variant and one row.
//!
//! Syntax and error wording follow Redis 7 (src/config.c, src/sds.c,
//! src/util.c): `sdssplitargs` quoting, `memtoull` units (`1k` = 1000,
//! `1kb` = 1024), `string2ll` integers (no `+`, no leading zeros), yes/no
//! booleans, case-insensitive names and enum values. Where FerrumKV differs it
//! says so on the row: `bind` defaults to `127.0.0.1` only (Redis 7 adds
//! `-::1`); `port`, `tls-port`, `bind` and `metrics-addr` cannot be changed at
//! runtime; `hz` is refused outside 1..=500 rather than clamped;
//! `maxmemory-samples` is capped at 64 as in Redis 8, since each eviction
//! costs that many samples;
//! `daemonize` and `appendonly` accept only `no` (snapshots are RDB files:
//! `save`, `dbfilename`, `dir`).
//!
//! By concern: `table` holds the rows and lookups by name, `stored` the
//! builders of the rows kept in [`Config::stored`], `kind` the value
//! syntaxes, `special` and `obuf` the parameters with a syntax of their own
//! (`client-output-buffer-limit` in `obuf`), `syntax` redis.conf's lexical
//! rules, `command_line` startup, `error` what is refused and how it is
//! reported, `rewrite` `CONFIG REWRITE`, `tls` the `tls-*` values; this file
//! the [`Config`] value and `CONFIG GET`/`CONFIG SET`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ferrum_store::types::EncodingLimits;
use ferrum_store::PolicyKind;

mod command_line;
mod error;
mod kind;
mod obuf;
mod rewrite;
mod special;
// Before `table`, which uses its macros.
#[macro_use]
mod stored;
mod syntax;
mod table;
mod tls;

pub use error::ConfigError;
use kind::{Kind, Refusal, Spec, NOT_UTF8};
pub use obuf::{OutputBufferLimit, OutputBufferLimits};
pub(crate) use rewrite::{rewrite_file, strerror};
pub use special::Allowed;
use syntax::lossy;
pub(crate) use syntax::{parse_memory, push_repr};
use table::{canonical, lookup, registered_name, selects, settable, ALIASES, PARAMS};

/// What `enable-protected-configs` guards, Redis 7.0's `PROTECTED_CONFIG`
/// parameters: where the server writes its files.
const PROTECTED: &[&str] = &["dir", "dbfilename"];

/// The parameters whose values are passwords, which `SLOWLOG` and
/// `MONITOR` show as `(redacted)`: Redis 7.0's `SENSITIVE_CONFIG`.
const SENSITIVE: &[&str] = &["masteruser", "masterauth", "requirepass"];

/// What `CONFIG SET` refuses with `-LOADING` while a snapshot loads,
/// Redis 7.0's `DENY_LOADING_CONFIG` parameters.
const DENY_LOADING: &[&str] = &["dir", "appendonly", "repl-diskless-load"];
pub use tls::{TlsConfig, TlsProtocol, TLS_AUTH_CLIENTS};

/// The `maxmemory-policy` names FerrumKV accepts: those of
/// [`PolicyKind::ALL`], in its order, as the table's `Enum` row needs them.
pub const MAXMEMORY_POLICIES: [&str; PolicyKind::ALL.len()] = {
    let mut names = [""; PolicyKind::ALL.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = PolicyKind::ALL[i].as_str();
        i += 1;
    }
    names
};

/// The `loglevel` names, most to least verbose, as in Redis.
pub const LOGLEVELS: &[&str] = &["debug", "verbose", "notice", "warning"];

/// What `--help` prints.
pub const USAGE: &str = "\
Usage: ferrum-server [/path/to/redis.conf] [options]
       ferrum-server -v or --version
       ferrum-server -h or --help

Options are redis.conf directives written as --name value; they are applied
after the configuration file, in order. Examples:
       ferrum-server --port 7777
       ferrum-server --maxmemory 100mb --maxmemory-policy allkeys-lfu
       ferrum-server /etc/ferrum/redis.conf --loglevel verbose --save \"\"
";

/// What reading the configuration at startup has seen so far: state of
/// the reading, not part of the configuration's value (equal always).
#[derive(Clone, Copy, Debug, Default)]
struct LoadState {
    /// A `save` directive was read (the next one adds to it).
    save_read: bool,
}

impl PartialEq for LoadState {
    fn eq(&self, _: &LoadState) -> bool {
        true
    }
}

impl Eq for LoadState {}

/// The server's configuration, with Redis's defaults (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The configuration file it was loaded from, made absolute, as INFO's
    /// `config_file` reports it. Not a parameter.
    pub config_file: Option<PathBuf>,
    /// `bind`: addresses to listen on. An address prefixed with `-` is
    /// optional (skipped if unavailable); `*` and `::*` mean every IPv4 and
    /// IPv6 interface.
    pub bind: Vec<String>,
    /// `port`; 0 asks the OS for a free port (for tests).
    pub port: u16,
    /// `databases`: how many numbered databases `SELECT` can reach.
    pub databases: u32,
    /// `worker-threads` (FerrumKV only): the runtime's worker threads; 0
    /// means three quarters of the CPUs, at least one.
    pub worker_threads: u32,
    /// `maxmemory`; 0 means no limit.
    pub maxmemory_bytes: u64,
    /// `maxmemory-policy`.
    pub maxmemory_policy: PolicyKind,
    /// `maxmemory-samples`: keys sampled per eviction by sampling policies.
    pub maxmemory_samples: u32,
    /// `lfu-log-factor`: how slowly the LFU counter saturates.
    pub lfu_log_factor: u32,
    /// `lfu-decay-time`: minutes for the LFU counter to halve.
    pub lfu_decay_time_minutes: u32,
    /// `requirepass`; `None` (set as `""`) means no password.
    pub requirepass: Option<String>,
    /// `user <name> <rules...>` directives, in order: users the server
    /// starts with (see the `acl` module).
    pub users: Vec<Vec<String>>,
    /// `rename-command` directives, applied in order: the names clients
    /// call commands by (read at startup only, as in Redis).
    pub(crate) renamed_commands: crate::command::rename::CommandNames,
    /// `maxclients`: connections beyond this are refused.
    pub maxclients: u32,
    /// `timeout`: close a client idle this long; zero means never.
    pub timeout: Duration,
    /// `tcp-keepalive`: TCP keepalive interval; zero turns it off.
    pub tcp_keepalive: Duration,
    /// `proto-max-bulk-len`: the largest bulk string a client may send.
    pub proto_max_bulk_len_bytes: u64,
    /// `client-query-buffer-limit`: the most unparsed input held per client.
    pub client_query_buffer_limit_bytes: u64,
    /// `hz`: background task frequency (active expiry), 1..=500.
    pub hz: u32,
    /// `loglevel`, one of [`LOGLEVELS`].
    pub loglevel: &'static str,
    /// `logfile`; `None` (set as `""`) logs to standard output.
    pub logfile: Option<PathBuf>,
    /// `enable-debug-command`: who may use FerrumKV's `DEBUG` test hooks
    /// (`DEBUG ADVANCE-CLOCK`, `DEBUG EXPIRE-CYCLE`). Nobody by default, as
    /// in Redis.
    pub enable_debug_command: Allowed,
    /// `enable-module-command`: who may run `MODULE LOAD`, `LOADEX` and
    /// `UNLOAD` (which FerrumKV answers but cannot honour: it loads no
    /// Redis modules). Nobody by default, as in Redis.
    pub enable_module_command: Allowed,
    /// `protected-mode`: while no password is set, accept only loopback
    /// clients (others get Redis's `-DENIED` explanation and are closed).
    pub protected_mode: bool,
    /// `save`: the save points (`Config::save_points` parses them); Redis's
    /// default `3600 1 300 100 60 10000`, which the first `save` read at
    /// startup replaces and later ones extend, as in Redis.
    pub save: String,
    /// What reading the file and command line has seen so far.
    loading: LoadState,
    /// `active-expire-effort`: 1..=10, how hard the active expiry cycle works.
    pub active_expire_effort: u32,
    /// `client-output-buffer-limit`, per client class.
    pub client_output_buffer_limit: OutputBufferLimits,
    /// `metrics-addr` (FerrumKV only): where to serve Prometheus metrics;
    /// `None` (the default) serves none.
    pub metrics_addr: Option<SocketAddr>,
    /// `dbfilename`: the snapshot's file name, in `dir`.
    pub dbfilename: String,
    /// `dir`, absolute: where snapshots are written and loaded, and where
    /// `aclfile` and `cluster-config-file` are found.
    pub dir: String,
    /// The collection encoding thresholds (`hash-max-listpack-entries`...,
    /// with their `*-ziplist-*` aliases); the server installs them
    /// process-wide with [`EncodingLimits::install`].
    pub encoding: EncodingLimits,
    /// `slowlog-log-slower-than`: microseconds; a negative value turns the
    /// slow log off, 0 logs every command.
    pub slowlog_log_slower_than: i64,
    /// `slowlog-max-len`: entries the slow log keeps.
    pub slowlog_max_len: u64,
    /// The `tls-*` parameters.
    pub tls: TlsConfig,
    /// Parameters accepted for compatibility with redis.conf and Redis's
    /// test suite that change nothing in FerrumKV (persistence,
    /// replication, TLS, defragmentation, ...; README lists them), by
    /// canonical name, as `CONFIG GET` prints them.
    pub stored: std::collections::BTreeMap<&'static str, String>,
}

/// Which parameter a successful [`Config::set`] changed, so the server can
/// react (for example evict at once when `maxmemory` shrinks). Each variant
/// is the parameter of the same name; `set` never returns the immutable ones
/// (`Bind`, `Port`, `Databases`, `WorkerThreads`, `Logfile`, `Daemonize`,
/// `MetricsAddr`, `TlsPort`).
// Each variant is the parameter of the same name, as said above; a doc line
// per variant would only repeat it.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Param {
    Bind,
    Port,
    Databases,
    WorkerThreads,
    Maxmemory,
    MaxmemoryPolicy,
    MaxmemorySamples,
    LfuLogFactor,
    LfuDecayTime,
    Requirepass,
    Maxclients,
    Timeout,
    TcpKeepalive,
    ProtoMaxBulkLen,
    ClientQueryBufferLimit,
    Hz,
    Loglevel,
    Logfile,
    Daemonize,
    ProtectedMode,
    EnableDebugCommand,
    EnableModuleCommand,
    Appendonly,
    Save,
    ActiveExpireEffort,
    ClientOutputBufferLimit,
    MetricsAddr,
    Dbfilename,
    Dir,
    HashMaxListpackEntries,
    HashMaxListpackValue,
    SetMaxIntsetEntries,
    SetMaxListpackEntries,
    SetMaxListpackValue,
    ZsetMaxListpackEntries,
    ZsetMaxListpackValue,
    ListMaxListpackSize,
    ListCompressDepth,
    StreamNodeMaxEntries,
    SlowlogLogSlowerThan,
    SlowlogMaxLen,
    TlsPort,
    TlsCertFile,
    TlsKeyFile,
    TlsCaCertFile,
    TlsCaCertDir,
    TlsAuthClients,
    TlsProtocols,
    TlsCiphers,
    TlsCiphersuites,
    TlsPreferServerCiphers,
    TlsSessionCaching,
    TlsSessionCacheSize,
    TlsSessionCacheTimeout,
    TlsDhParamsFile,
    TlsCluster,
    TlsReplication,
    /// One of the parameters kept only for `CONFIG GET` (`Config::stored`).
    Stored,
}

impl Default for Config {
    /// Redis's defaults (with FerrumKV's documented differences), built by
    /// applying each row's `default` text through the row's own setter, so a
    /// default can never be something the parser would refuse.
    fn default() -> Self {
        let mut config = Config::blank();
        for spec in PARAMS {
            let args = match spec.kind {
                Kind::Words { .. } => spec.default.split_whitespace().map(str::to_owned).collect(),
                _ => vec![spec.default.to_owned()],
            };
            if spec.kind.apply(&mut config, args).is_err() {
                // The table is a constant and the `defaults` test applies every
                // row, so this is a bug in PARAMS, not something input can reach.
                unreachable!("invalid default {:?} for {}", spec.default, spec.name);
            }
        }
        config
    }
}

impl Config {
    /// `CONFIG GET pattern`: every parameter whose name matches the glob
    /// `pattern` (case-insensitive), once each, with its value as Redis
    /// prints it (memory in bytes, booleans as yes/no). A pattern without
    /// `*`, `?` or `[` is an exact, case-insensitive name, as in Redis.
    pub fn get(&self, pattern: &[u8]) -> Vec<(&'static str, String)> {
        self.get_many(&[pattern])
    }

    /// `CONFIG GET pattern [pattern ...]` (Redis 7): each parameter matching
    /// any pattern, listed once.
    pub fn get_many(&self, patterns: &[&[u8]]) -> Vec<(&'static str, String)> {
        let aliases = ALIASES.iter().filter_map(|&(alias, canonical)| {
            let spec = PARAMS.iter().find(|s| s.name == canonical)?;
            Some((alias, spec))
        });
        PARAMS
            .iter()
            .map(|spec| (spec.name, spec))
            .chain(aliases)
            .filter(|(name, _)| patterns.iter().any(|p| selects(p, name)))
            .map(|(name, spec)| (name, spec.kind.render(self)))
            .collect()
    }

    /// `CONFIG SET name value`: validates and applies one parameter, and says
    /// which one changed. Multi-word parameters (`save`, `bind`,
    /// `client-output-buffer-limit`) take their words space-separated in
    /// `value`. On error nothing changes.
    ///
    /// # Errors
    ///
    /// A `ConfigError::Set*` variant whose `Display` is Redis's reply text:
    /// unknown names, immutable parameters (`databases`, `daemonize`,
    /// `logfile`, `metrics-addr`, ...) and invalid values. `bind`, `port`
    /// and `tls-port` are set here; the server rebinds its sockets after.
    pub fn set(&mut self, name: &[u8], value: &[u8]) -> Result<Param, ConfigError> {
        let spec = settable(name)?;
        self.set_value(spec, registered_name(name, spec), value)?;
        Ok(spec.param)
    }

    /// `CONFIG SET name value [name value ...]` (Redis 7): all or nothing.
    /// Returns the changed parameters in the order given.
    ///
    /// # Errors
    ///
    /// As [`Config::set`], for the first pair that fails (names are all
    /// checked before any value), plus a duplicate-parameter error for a
    /// name given twice (in any case; a parameter and its alias are two
    /// names, as in Redis 7.0, and the later value wins); on error nothing
    /// changes.
    pub fn set_many(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<Vec<Param>, ConfigError> {
        self.set_many_as(pairs, true)
    }

    /// [`Config::set_many`] by a client that `enable-protected-configs`
    /// allows to set the protected parameters (`dir`, `dbfilename`) or
    /// not. Refused, they fail as an immutable parameter does.
    ///
    /// # Errors
    ///
    /// As [`Config::set_many`], and `ConfigError::SetProtected`.
    pub fn set_many_as(
        &mut self,
        pairs: &[(&[u8], &[u8])],
        protected_allowed: bool,
    ) -> Result<Vec<Param>, ConfigError> {
        let mut specs: Vec<(&Spec, &'static str)> = Vec::with_capacity(pairs.len());
        for &(name, _) in pairs {
            let spec = settable(name)?;
            if !protected_allowed && PROTECTED.contains(&spec.name) {
                return Err(ConfigError::SetProtected { name: lossy(name) });
            }
            let registered = registered_name(name, spec);
            if specs.iter().any(|&(_, seen)| seen == registered) {
                return Err(ConfigError::SetDuplicate { name: lossy(name) });
            }
            specs.push((spec, registered));
        }
        let mut next = self.clone();
        for (&(spec, registered), &(_, value)) in specs.iter().zip(pairs) {
            next.set_value(spec, registered, value)?;
        }
        *self = next;
        Ok(specs.iter().map(|(s, _)| s.param).collect())
    }

    /// Whether `CONFIG SET name` must wait until a load ends (`dir`: the
    /// load reads from it), as Redis's `DENY_LOADING_CONFIG`.
    pub fn denied_while_loading(name: &[u8]) -> bool {
        lookup(name).is_some_and(|spec| DENY_LOADING.contains(&spec.name))
    }

    /// Whether `name`'s value is a password (`requirepass`, `masterauth`,
    /// `masteruser`), which logs of commands must not show.
    pub fn is_sensitive(name: &[u8]) -> bool {
        lookup(name).is_some_and(|spec| SENSITIVE.contains(&spec.name))
    }

    /// `enable-protected-configs`: who may set the protected parameters.
    pub fn protected_configs(&self) -> Allowed {
        Allowed::from_name(self.stored_value("enable-protected-configs")).unwrap_or(Allowed::No)
    }

    /// Sets `spec` from `value`; errors name the parameter by `registered`,
    /// the name (or alias) Redis would have looked it up by.
    fn set_value(
        &mut self,
        spec: &Spec,
        registered: &'static str,
        value: &[u8],
    ) -> Result<(), ConfigError> {
        let invalid = |reason: String| ConfigError::SetInvalid {
            name: registered,
            reason,
        };
        let value = std::str::from_utf8(value).map_err(|_| invalid(NOT_UTF8.to_owned()))?;
        let args = match spec.kind {
            Kind::Words { .. } => value.split_ascii_whitespace().map(str::to_owned).collect(),
            _ => vec![value.to_owned()],
        };
        spec.kind.apply(self, args).map_err(|refusal| {
            invalid(match refusal {
                Refusal::ArgCount => "wrong number of arguments".to_owned(),
                Refusal::Invalid(reason) => reason,
            })
        })
    }

    /// A parameter kept in [`Config::stored`], as `CONFIG GET` prints it.
    pub fn stored_value(&self, name: &str) -> &str {
        self.stored.get(name).map_or("", String::as_str)
    }

    /// The `save` points: (seconds, changes) pairs; a background save
    /// starts when at least `changes` writes happened and `seconds`
    /// passed since the last save. Empty: no automatic saves.
    pub(crate) fn save_points(&self) -> Vec<(u64, u64)> {
        let numbers: Vec<u64> = self
            .save
            .split_whitespace()
            .filter_map(|w| w.parse().ok())
            .collect();
        numbers.chunks_exact(2).map(|p| (p[0], p[1])).collect()
    }

    /// `cluster-enabled`: whether the server runs in cluster mode.
    pub(crate) fn cluster_enabled(&self) -> bool {
        self.stored_value("cluster-enabled") == "yes"
    }

    /// `cluster-allow-reads-when-down`.
    pub(crate) fn cluster_reads_when_down(&self) -> bool {
        self.stored_value("cluster-allow-reads-when-down") == "yes"
    }

    /// `cluster-allow-pubsubshard-when-down`.
    pub(crate) fn cluster_pubsubshard_when_down(&self) -> bool {
        self.stored_value("cluster-allow-pubsubshard-when-down") == "yes"
    }

    /// `cluster-config-file`, relative to `dir` unless absolute, as Redis
    /// (which changes into `dir`) reads it.
    pub(crate) fn cluster_config_path(&self) -> PathBuf {
        Path::new(&self.dir).join(self.stored_value("cluster-config-file"))
    }

    /// `latency-monitor-threshold`, in ms (0: off).
    /// `tcp-backlog`: the listen queue of each socket bound.
    pub(crate) fn tcp_backlog(&self) -> i32 {
        self.stored_value("tcp-backlog").parse().unwrap_or(511)
    }

    pub(crate) fn latency_threshold_ms(&self) -> u64 {
        self.stored_value("latency-monitor-threshold")
            .parse()
            .unwrap_or(0)
    }

    /// `busy-reply-threshold` (`lua-time-limit`), in ms: how long a script
    /// runs before other clients get `-BUSY`.
    pub(crate) fn busy_threshold_ms(&self) -> u64 {
        self.stored_value("busy-reply-threshold")
            .parse()
            .unwrap_or(5000)
    }

    /// Whether writes are refused for want of replicas, with `good` of
    /// them in good standing (acknowledged within `min-replicas-max-lag`
    /// seconds): Redis refuses them when `min-replicas-to-write` and
    /// `min-replicas-max-lag` are both set and fewer replicas are good.
    pub(crate) fn lacks_good_replicas(&self, good: impl FnOnce(u64) -> usize) -> bool {
        let get = |name| self.stored_value(name).parse::<u64>().unwrap_or(0);
        let (min, lag) = (get("min-replicas-to-write"), get("min-replicas-max-lag"));
        min > 0 && lag > 0 && (good(lag) as u64) < min
    }

    /// `tracking-table-max-keys` (0: unlimited).
    pub(crate) fn tracking_max_keys(&self) -> u64 {
        self.stored_value("tracking-table-max-keys")
            .parse()
            .unwrap_or(1_000_000)
    }

    /// A value for every field, overwritten by `Default` from the table.
    fn blank() -> Config {
        Config {
            config_file: None,
            bind: Vec::new(),
            port: 0,
            databases: 0,
            worker_threads: 0,
            maxmemory_bytes: 0,
            maxmemory_policy: PolicyKind::NoEviction,
            maxmemory_samples: 0,
            lfu_log_factor: 0,
            lfu_decay_time_minutes: 0,
            requirepass: None,
            users: Vec::new(),
            renamed_commands: Default::default(),
            maxclients: 0,
            timeout: Duration::ZERO,
            tcp_keepalive: Duration::ZERO,
            proto_max_bulk_len_bytes: 0,
            client_query_buffer_limit_bytes: 0,
            hz: 0,
            loglevel: "",
            logfile: None,
            protected_mode: false,
            enable_debug_command: Allowed::No,
            enable_module_command: Allowed::No,
            save: String::new(),
            loading: LoadState::default(),
            active_expire_effort: 0,
            client_output_buffer_limit: OutputBufferLimits::default(),
            metrics_addr: None,
            dbfilename: String::new(),
            dir: String::new(),
            encoding: EncodingLimits::DEFAULT,
            slowlog_log_slower_than: 0,
            slowlog_max_len: 0,
            tls: TlsConfig::default(),
            stored: std::collections::BTreeMap::new(),
        }
    }
}

#[cfg(test)]
mod tests;
