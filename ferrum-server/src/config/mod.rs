//! FerrumKV's configuration: the redis-server command line, redis.conf files,
//! and `CONFIG GET` / `CONFIG SET` at runtime, all driven by one table.
//!
//! Every parameter is one row of [`PARAMS`]: its name, whether `CONFIG SET`
//! may change it, its default written as redis.conf text, and its [`Kind`],
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
//! `daemonize` and `appendonly` accept only `no`; `save`, `dbfilename` and
//! `dir` are accepted so stock redis.conf files load, and reported by
//! `CONFIG GET`, but FerrumKV keeps no persistence and never writes them.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ferrum_store::glob::glob_match;
use ferrum_store::types::EncodingLimits;

mod rewrite;
mod syntax;
mod tls;

use crate::cmd::error::{
    config_set_failed, config_set_unknown, CONFIG_DUPLICATE, CONFIG_IMMUTABLE,
};
pub(crate) use rewrite::{rewrite_file, strerror};
pub(crate) use syntax::push_repr;
use syntax::{parse_int, parse_memory, split_args, split_overrides, trim};
use tls::{optional_path, parse_protocols, render_path};
pub use tls::{TlsConfig, TlsProtocol, TLS_AUTH_CLIENTS};

/// The `maxmemory-policy` names FerrumKV accepts: exactly the names of
/// [`ferrum_store::PolicyKind::ALL`] (a test keeps the two in step; the
/// config table needs them as a `const` slice).
pub const MAXMEMORY_POLICIES: &[&str] = &[
    "noeviction",
    "allkeys-lru",
    "allkeys-lfu",
    "allkeys-random",
    "volatile-lru",
    "volatile-lfu",
    "volatile-random",
    "volatile-ttl",
    "allkeys-ahe",
    "volatile-ahe",
];

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

/// Redis's `CONFIG_BINDADDR_MAX`.
const MAX_BIND_ADDRS: usize = 16;
const INT_MAX: u64 = i32::MAX as u64;
const LONG_MAX: u64 = i64::MAX as u64;
const MB: u64 = 1024 * 1024;

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

/// The server's configuration, with Redis's defaults (see [`PARAMS`]).
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
    /// `maxmemory-policy`, one of [`MAXMEMORY_POLICIES`].
    pub maxmemory_policy: &'static str,
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
    pub(crate) renamed_commands: crate::cmd::rename::CommandNames,
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
    /// `enable-debug-command`: allow FerrumKV's `DEBUG` test hooks
    /// (`DEBUG ADVANCE-CLOCK`, `DEBUG EXPIRE-CYCLE`). Off by default, as in
    /// Redis; only `yes` and `no` are accepted (not Redis's `local`).
    pub enable_debug_command: bool,
    /// `protected-mode`: while no password is set, accept only loopback
    /// clients (others get Redis's `-DENIED` explanation and are closed).
    pub protected_mode: bool,
    /// `save`, stored for `CONFIG GET`. FerrumKV keeps no persistence, so
    /// it is never acted on; it defaults to Redis's `3600 1 300 100 60
    /// 10000`, which the first `save` read at startup replaces and later
    /// ones extend, as in Redis.
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
    /// `dbfilename`, stored for `CONFIG GET` only: FerrumKV writes no files.
    pub dbfilename: String,
    /// `dir`, absolute: where `aclfile` and `cluster-config-file` are
    /// found. FerrumKV writes no data files there.
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

/// One client class's output buffer limits: disconnect a client whose
/// pending output exceeds `hard_bytes`, or stays over `soft_bytes` for
/// `soft_seconds`. Zero disables a limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutputBufferLimit {
    /// Disconnect as soon as pending output exceeds this.
    pub hard_bytes: u64,
    /// Disconnect when pending output stays above this for `soft_seconds`.
    pub soft_bytes: u64,
    /// How long output may stay above `soft_bytes`.
    pub soft_seconds: u64,
}

impl OutputBufferLimit {
    /// Whether `pending` bytes of output break this limit, as Redis's
    /// `checkClientOutputBufferLimits` decides: at or over the hard limit,
    /// or at or over the soft limit for longer than `soft_seconds`.
    /// `over_soft_since` is when (in milliseconds on the caller's clock,
    /// read as `now_ms`) the output went over the soft limit; this starts
    /// and stops that clock.
    pub fn is_broken(&self, pending: u64, now_ms: u64, over_soft_since: &mut Option<u64>) -> bool {
        let hard = self.hard_bytes > 0 && pending >= self.hard_bytes;
        if self.soft_bytes == 0 || pending < self.soft_bytes {
            *over_soft_since = None;
            return hard;
        }
        let since = *over_soft_since.get_or_insert(now_ms);
        hard || now_ms.saturating_sub(since) > self.soft_seconds.saturating_mul(1000)
    }
}

/// `client-output-buffer-limit` for each client class Redis knows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutputBufferLimits {
    /// Ordinary clients.
    pub normal: OutputBufferLimit,
    /// Replicas (`replica`, or `slave` as Redis prints it). Unused until
    /// FerrumKV replicates, kept so the value round-trips.
    pub replica: OutputBufferLimit,
    /// Clients in subscribed (pub/sub) mode.
    pub pubsub: OutputBufferLimit,
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
    /// One of the parameters kept only for `CONFIG GET` (`Config::stored`).
    Stored,
}

/// Why the configuration was refused.
///
/// Startup errors name the option and the bad value. The `Set*` variants are
/// what [`Config::set`] returns: their `Display` is the complete Redis error
/// line, `ERR` code included, ready to send as `-{error}\r\n`.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// `-h` / `--help`: not a failure; print [`USAGE`] and exit 0.
    #[error("help requested")]
    Help,
    /// `-v` / `--version`: not a failure; print the version and exit 0.
    #[error("version requested")]
    Version,
    /// The configuration file could not be read.
    #[error("can't open config file '{}': {error}", path.display())]
    Read {
        /// The path as given on the command line.
        path: PathBuf,
        /// Why it could not be read.
        error: std::io::Error,
    },
    /// `-` (read the configuration from standard input) is not supported.
    #[error("reading the configuration from standard input ('-') is not supported")]
    Stdin,
    /// A command-line word that is neither an option nor an option's value.
    #[error("unexpected argument '{arg}': options are written --name value, as in --port 6380")]
    UnexpectedArgument {
        /// The offending word.
        arg: String,
    },
    /// An error on a line of the configuration file.
    #[error("{}:{line}: {error}", path.display())]
    InFile {
        /// The configuration file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The line, trimmed, as Redis shows it.
        text: String,
        /// What is wrong with that line.
        error: Box<ConfigError>,
    },
    /// An error in a directive of the command line (`--name value...`).
    #[error("command line, '{text}': {error}")]
    OnCommandLine {
        /// Its line number in Redis's reckoning: redis-server appends the
        /// command line to the file's text, a line per option, after an
        /// empty line.
        line: usize,
        /// The directive as Redis shows it: the name, then each value in
        /// `sdscatrepr` quotes (`port "6379" "6380"`).
        text: String,
        /// What is wrong with it.
        error: Box<ConfigError>,
    },
    /// `rename-command` of an unknown command or to a name already taken.
    #[error("{0}")]
    RenameCommand(&'static str),
    /// A quote is not closed, or a closing quote is followed by more text.
    #[error("unbalanced quotes in configuration line")]
    UnbalancedQuotes,
    /// `include` is a Redis directive FerrumKV does not implement.
    #[error("'include' is not supported: put every directive in one file")]
    Include,
    /// No such parameter.
    #[error("unknown option '{name}'")]
    UnknownOption {
        /// The name as written, lowercased.
        name: String,
    },
    /// A single-value parameter was given no value or several.
    #[error("wrong number of arguments for '{name}'")]
    ArgCount {
        /// The parameter.
        name: &'static str,
    },
    /// A value the parameter does not accept.
    #[error("invalid argument '{value}' for '{name}': {reason}")]
    InvalidValue {
        /// The parameter.
        name: &'static str,
        /// The value as given (several words joined by spaces).
        value: String,
        /// Redis's wording of what is wrong.
        reason: String,
    },
    /// `CONFIG SET` of an unknown parameter.
    #[error("{}", config_set_unknown(name))]
    SetUnknown {
        /// The name as the client sent it.
        name: String,
    },
    /// `CONFIG SET` of a parameter that only takes effect at startup.
    #[error("{}", config_set_failed(name, CONFIG_IMMUTABLE))]
    SetImmutable {
        /// The name as the client sent it.
        name: String,
    },
    /// `CONFIG SET` named the same parameter twice.
    #[error("{}", config_set_failed(name, CONFIG_DUPLICATE))]
    SetDuplicate {
        /// The name as the client sent it.
        name: String,
    },
    /// `CONFIG SET` with a value the parameter does not accept.
    #[error("{}", config_set_failed(name, reason))]
    SetInvalid {
        /// The parameter's canonical name.
        name: &'static str,
        /// Redis's wording of what is wrong.
        reason: String,
    },
}

impl Config {
    /// `maxmemory-clients` in bytes: the value, or its percentage of
    /// `maxmemory` (so `10%` of no `maxmemory` is 0, off, as in Redis).
    pub fn maxmemory_clients_bytes(&self) -> u64 {
        let value = self.stored_value("maxmemory-clients");
        match value.strip_suffix('%') {
            Some(pct) => {
                let pct = pct.parse::<u64>().unwrap_or(0);
                (u128::from(self.maxmemory_bytes) * u128::from(pct) / 100) as u64
            }
            None => parse_memory(value).unwrap_or(0),
        }
    }
}

impl ConfigError {
    /// What redis-server prints to standard error before it exits 1 on
    /// this error. A directive's error is Redis's block: the banner, the
    /// line number, the line and Redis's reason, which is what scripts
    /// (Redis's own test suite among them) match.
    pub fn fatal_report(&self) -> String {
        match self {
            ConfigError::InFile {
                line, text, error, ..
            }
            | ConfigError::OnCommandLine { line, text, error } => format!(
                "{}Reading the configuration file, at line {line}\n>>> '{text}'\n{}",
                fatal_banner(),
                error.reason()
            ),
            ConfigError::Read { .. } => format!("Fatal error, {self}"),
            other => format!("{}{}", fatal_banner(), other.reason()),
        }
    }

    /// The reason as Redis words it for a directive it refuses.
    fn reason(&self) -> String {
        match self {
            ConfigError::UnknownOption { .. } => BAD_DIRECTIVE.to_owned(),
            ConfigError::ArgCount { .. } => WRONG_ARG_COUNT.to_owned(),
            ConfigError::InvalidValue { reason, .. } => reason.clone(),
            ConfigError::UnbalancedQuotes => UNBALANCED_QUOTES.to_owned(),
            other => other.to_string(),
        }
    }
}

/// Redis's reason for a directive it does not know, or a special one
/// (`rename-command`) with the wrong number of words.
const BAD_DIRECTIVE: &str = "Bad directive or wrong number of arguments";
/// Redis's reason for a parameter given too few or too many values.
const WRONG_ARG_COUNT: &str = "wrong number of arguments";
/// Redis's reason for a line `sdssplitargs` cannot split.
const UNBALANCED_QUOTES: &str = "Unbalanced quotes in configuration line";

/// The first lines of redis-server's report of a configuration it refuses.
fn fatal_banner() -> String {
    format!(
        "\n*** FATAL CONFIG FILE ERROR (Redis {}) ***\n",
        crate::REDIS_VERSION
    )
}

/// One parameter: everything FerrumKV knows about it.
struct Spec {
    name: &'static str,
    param: Param,
    /// Whether `CONFIG SET` may change it.
    mutable: bool,
    /// The default, as it would be written in redis.conf.
    default: &'static str,
    kind: Kind,
}

/// A parameter's value syntax, with accessors for its typed field.
enum Kind {
    /// `yes` or `no`. The setter may refuse one of them.
    Bool {
        get: fn(&Config) -> bool,
        set: fn(&mut Config, bool) -> Result<(), String>,
    },
    /// A decimal integer in `min..=max` that may be negative.
    SignedInt {
        min: i64,
        max: i64,
        get: fn(&Config) -> i64,
        set: fn(&mut Config, i64),
    },
    /// A decimal integer in `min..=max`.
    Int {
        min: u64,
        max: u64,
        get: fn(&Config) -> u64,
        set: fn(&mut Config, u64),
    },
    /// A byte count with an optional unit, in `min..=max`.
    Memory {
        min: u64,
        max: u64,
        get: fn(&Config) -> u64,
        set: fn(&mut Config, u64),
    },
    /// One of `names`, case-insensitive; the canonical name is stored.
    Enum {
        names: &'static [&'static str],
        get: fn(&Config) -> &'static str,
        set: fn(&mut Config, &'static str),
    },
    /// One free-form argument, checked by the setter.
    Text {
        get: fn(&Config) -> String,
        set: fn(&mut Config, String) -> Result<(), String>,
    },
    /// Any number of words (Redis's `MULTI_ARG_CONFIG`).
    Words {
        get: fn(&Config) -> String,
        set: fn(&mut Config, Vec<String>) -> Result<(), String>,
    },
}

/// A row for a parameter kept only in [`Config::stored`]: `name` or
/// `alias => canonical`, then the value syntax's bounds, the default and
/// whether `CONFIG SET` may change it.
macro_rules! stored_row {
    ($name:literal, $key:literal, $default:literal, $mutable:expr, $kind:expr) => {
        Spec {
            name: $name,
            param: Param::Stored,
            mutable: $mutable,
            default: $default,
            kind: $kind,
        }
    };
}
macro_rules! stored_bool {
    ($name:literal => $key:literal, $default:literal, $mutable:expr) => {
        stored_row!($name, $key, $default, $mutable, Kind::Bool {
            get: |c| c.stored_value($key) == "yes",
            set: |c, v| { c.stored.insert($key, if v { "yes" } else { "no" }.to_owned()); Ok(()) } })
    };
    ($name:literal, $default:literal, $mutable:expr) => { stored_bool!($name => $name, $default, $mutable) };
}
macro_rules! stored_int {
    ($name:literal => $key:literal, $min:expr, $max:expr, $default:literal, $mutable:expr) => {
        stored_row!($name, $key, $default, $mutable, Kind::Int { min: $min, max: $max,
            get: |c| c.stored_value($key).parse().unwrap_or(0),
            set: |c, v| { c.stored.insert($key, v.to_string()); } })
    };
    ($name:literal, $min:expr, $max:expr, $default:literal, $mutable:expr) => {
        stored_int!($name => $name, $min, $max, $default, $mutable)
    };
}
macro_rules! stored_signed {
    ($name:literal, $min:expr, $max:expr, $default:literal, $mutable:expr) => {
        stored_row!(
            $name,
            $name,
            $default,
            $mutable,
            Kind::SignedInt {
                min: $min,
                max: $max,
                get: |c| c.stored_value($name).parse().unwrap_or(0),
                set: |c, v| {
                    c.stored.insert($name, v.to_string());
                }
            }
        )
    };
}
macro_rules! stored_memory {
    ($name:literal, $min:expr, $max:expr, $default:literal, $mutable:expr) => {
        stored_row!(
            $name,
            $name,
            $default,
            $mutable,
            Kind::Memory {
                min: $min,
                max: $max,
                get: |c| c.stored_value($name).parse().unwrap_or(0),
                set: |c, v| {
                    c.stored.insert($name, v.to_string());
                }
            }
        )
    };
}
macro_rules! stored_text {
    ($name:literal => $key:literal, $default:literal, $mutable:expr) => {
        stored_row!(
            $name,
            $key,
            $default,
            $mutable,
            Kind::Text {
                get: |c| c.stored_value($key).to_owned(),
                set: |c, v| {
                    c.stored.insert($key, v);
                    Ok(())
                }
            }
        )
    };
    ($name:literal, $default:literal, $mutable:expr) => {
        stored_row!(
            $name,
            $name,
            $default,
            $mutable,
            Kind::Text {
                get: |c| c.stored_value($name).to_owned(),
                set: |c, v| {
                    c.stored.insert($name, v);
                    Ok(())
                }
            }
        )
    };
}
macro_rules! stored_words {
    ($name:literal, $default:literal, $mutable:expr) => {
        stored_row!(
            $name,
            $name,
            $default,
            $mutable,
            Kind::Words {
                get: |c| c.stored_value($name).to_owned(),
                set: |c, v| {
                    c.stored.insert($name, v.join(" "));
                    Ok(())
                }
            }
        )
    };
}
macro_rules! stored_enum {
    ($name:literal, $names:expr, $default:literal, $mutable:expr) => {
        stored_row!(
            $name,
            $name,
            $default,
            $mutable,
            Kind::Enum {
                names: $names,
                get: |c| {
                    let v = c.stored_value($name);
                    $names.iter().find(|n| **n == v).copied().unwrap_or("")
                },
                set: |c, v| {
                    c.stored.insert($name, v.to_owned());
                }
            }
        )
    };
}

/// Stored parameters with two names, each a row of its own, as Redis 7
/// keeps them: `CONFIG GET` lists both, and setting both in one `CONFIG
/// SET` is a duplicate. (Renamed parameters with a row only under their new
/// name are in [`ALIASES`].)
const STORED_ALIASES: &[(&str, &str)] = &[
    ("slave-serve-stale-data", "replica-serve-stale-data"),
    ("slave-read-only", "replica-read-only"),
    ("lua-time-limit", "busy-reply-threshold"),
    ("slaveof", "replicaof"),
];

/// The canonical name of a parameter or alias.
fn canonical(name: &str) -> &str {
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
static PARAMS: &[Spec] = &[
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
        kind: Kind::Enum { names: MAXMEMORY_POLICIES, get: |c| c.maxmemory_policy, set: |c, v| c.maxmemory_policy = v } },
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
        kind: Kind::Bool { get: |c| c.enable_debug_command, set: |c, v| { c.enable_debug_command = v; Ok(()) } } },
    Spec { name: "protected-mode", param: Param::ProtectedMode, mutable: true, default: "yes",
        kind: Kind::Bool { get: |c| c.protected_mode, set: |c, v| { c.protected_mode = v; Ok(()) } } },
    Spec { name: "appendonly", param: Param::Appendonly, mutable: true, default: "no",
        kind: Kind::Bool { get: |_| false, set: |_, yes| refuse_yes(yes, "FerrumKV keeps no persistence") } },
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
    // Redis 7.2's; FerrumKV packs small string sets as 7.2 does.
    Spec { name: "set-max-listpack-entries", param: Param::SetMaxListpackEntries, mutable: true, default: "128",
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
    // Cluster mode (see the `cluster` module): fixed at startup, except
    // what Redis lets `CONFIG SET` change. `cluster-announce-ip` is
    // accepted at runtime and takes effect at the next start, since
    // nodes learn each other's address only at `CLUSTER MEET`.
    stored_bool!("cluster-enabled", "no", false),
    stored_text!("cluster-config-file", "nodes.conf", false),
    stored_bool!("cluster-require-full-coverage", "yes", true),
    stored_text!("cluster-announce-ip", "", true),
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
    stored_bool!("rdbchecksum", "yes", false),
    stored_bool!("replica-serve-stale-data", "yes", true),
    stored_bool!("slave-serve-stale-data" => "replica-serve-stale-data", "yes", true),
    stored_bool!("replica-read-only", "yes", true),
    stored_bool!("slave-read-only" => "replica-read-only", "yes", true),
    stored_enum!("appendfsync", &["always", "everysec", "no"], "everysec", true),
    stored_text!("appendfilename", "appendonly.aof", false),
    stored_text!("appenddirname", "appendonlydir", false),
    stored_bool!("no-appendfsync-on-rewrite", "no", true),
    stored_bool!("aof-use-rdb-preamble", "yes", true),
    stored_int!("auto-aof-rewrite-percentage", 0, INT_MAX, "100", true),
    stored_bool!("activerehashing", "yes", true),
    stored_enum!("enable-protected-configs", &["no", "yes", "local"], "no", false),
    stored_enum!("enable-module-command", &["no", "yes", "local"], "no", false),
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
    stored_int!("min-replicas-max-lag", 0, INT_MAX, "10", true),
    stored_enum!("acl-pubsub-default", &["allchannels", "resetchannels"], "resetchannels", true),
    stored_int!("acllog-max-len", 0, LONG_MAX, "128", true),
    stored_text!("aclfile", "", false),
    stored_int!("tracking-table-max-keys", 0, LONG_MAX, "1000000", true),
    stored_int!("repl-timeout", 1, INT_MAX, "60", true),
    stored_int!("repl-ping-replica-period", 1, INT_MAX, "10", true),
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
static ALIASES: &[(&str, &str)] = &[
    ("hash-max-ziplist-entries", "hash-max-listpack-entries"),
    ("hash-max-ziplist-value", "hash-max-listpack-value"),
    ("zset-max-ziplist-entries", "zset-max-listpack-entries"),
    ("zset-max-ziplist-value", "zset-max-listpack-value"),
    ("list-max-ziplist-size", "list-max-listpack-size"),
];

/// The row for `name` (a canonical name or an alias, any case).
fn lookup(name: &[u8]) -> Option<&'static Spec> {
    let canonical = ALIASES
        .iter()
        .find(|(alias, _)| alias.as_bytes().eq_ignore_ascii_case(name))
        .map_or(name, |(_, canonical)| canonical.as_bytes());
    PARAMS
        .iter()
        .find(|s| s.name.as_bytes().eq_ignore_ascii_case(canonical))
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
    /// Parses redis-server's command line (without the program name): an
    /// optional configuration file path (a first argument not starting with
    /// `-`), then `--name value...` overrides applied after the file. Every
    /// word up to the next `--name` belongs to the current option, and the
    /// word right after a bare `--name` is always its value, even if it starts
    /// with `--`. `--save` with no value means `--save ""`. A single word
    /// holding both name and values (`"--port 6380"`) is split.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Help`] / [`ConfigError::Version`] for `-h`/`--help` and
    /// `-v`/`--version` as the first argument (exit 0 after printing); any
    /// other variant means startup must stop, and its message names the
    /// option, the value and, for the file, `path:line`.
    pub fn from_args(args: impl IntoIterator<Item = String>) -> Result<Config, ConfigError> {
        let args: Vec<String> = args.into_iter().collect();
        let mut config = Config::default();
        let mut overrides = args.as_slice();
        let mut file_lines = 0;
        if let Some(first) = args.first() {
            match first.as_str() {
                "-h" | "--help" => return Err(ConfigError::Help),
                "-v" | "--version" => return Err(ConfigError::Version),
                "-" => return Err(ConfigError::Stdin),
                _ => {}
            }
            if !first.starts_with('-') {
                let path = PathBuf::from(first);
                let text = std::fs::read(&path).map_err(|error| ConfigError::Read {
                    path: path.clone(),
                    error,
                })?;
                config.apply_file(&path, &text)?;
                file_lines = text.iter().filter(|&&b| b == b'\n').count();
                config.config_file = Some(std::path::absolute(&path).unwrap_or(path));
                overrides = &args[1..];
            }
        }
        for (index, directive) in split_overrides(overrides)?.into_iter().enumerate() {
            let text = shown_directive(&directive);
            config
                .apply_directive(directive)
                .map_err(|error| ConfigError::OnCommandLine {
                    line: file_lines + 2 + index,
                    text,
                    error: Box::new(error),
                })?;
        }
        Ok(config)
    }

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
        self.set_value(spec, value)?;
        Ok(spec.param)
    }

    /// `CONFIG SET name value [name value ...]` (Redis 7): all or nothing.
    /// Returns the changed parameters in the order given.
    ///
    /// # Errors
    ///
    /// As [`Config::set`], for the first pair that fails (names are all
    /// checked before any value), plus a duplicate-parameter error; on error
    /// nothing changes.
    pub fn set_many(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<Vec<Param>, ConfigError> {
        let mut specs: Vec<&Spec> = Vec::with_capacity(pairs.len());
        for &(name, _) in pairs {
            let spec = settable(name)?;
            let same = |s: &&Spec| {
                s.param == spec.param
                    && (spec.param != Param::Stored || canonical(s.name) == canonical(spec.name))
            };
            if specs.iter().any(same) {
                return Err(ConfigError::SetDuplicate { name: lossy(name) });
            }
            specs.push(spec);
        }
        let mut next = self.clone();
        for (spec, &(_, value)) in specs.iter().zip(pairs) {
            next.set_value(spec, value)?;
        }
        *self = next;
        Ok(specs.iter().map(|s| s.param).collect())
    }

    fn set_value(&mut self, spec: &Spec, value: &[u8]) -> Result<(), ConfigError> {
        let invalid = |reason: String| ConfigError::SetInvalid {
            name: spec.name,
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

    /// Applies a redis.conf file's contents: one directive per line, `#`
    /// comment lines, blank lines, `sdssplitargs` quoting; later lines win.
    fn apply_file(&mut self, path: &Path, text: &[u8]) -> Result<(), ConfigError> {
        for (index, line) in text.split(|&b| b == b'\n').enumerate() {
            let line = trim(line);
            if line.is_empty() || line[0] == b'#' {
                continue;
            }
            let at = |error| ConfigError::InFile {
                path: path.to_owned(),
                line: index + 1,
                text: lossy(line),
                error: Box::new(error),
            };
            let words = split_args(line).ok_or_else(|| at(ConfigError::UnbalancedQuotes))?;
            if !words.is_empty() {
                self.apply_directive(words).map_err(at)?;
            }
        }
        Ok(())
    }

    /// Applies one directive, name first, from the file or the command line.
    fn apply_directive(&mut self, words: Vec<Vec<u8>>) -> Result<(), ConfigError> {
        let mut words = words.into_iter();
        let name = lossy(&words.next().unwrap_or_default()).to_ascii_lowercase();
        if name == "include" {
            return Err(ConfigError::Include);
        }
        if name == "rename-command" {
            let [from, to] = <[Vec<u8>; 2]>::try_from(words.collect::<Vec<_>>())
                .map_err(|_| ConfigError::UnknownOption { name })?;
            return self
                .renamed_commands
                .rename(&from, &to)
                .map_err(ConfigError::RenameCommand);
        }
        if name == "user" {
            // ACL rules are checked when the server builds its users.
            let words = words.map(|w| lossy(&w)).collect();
            self.users.push(words);
            return Ok(());
        }
        let spec = lookup(name.as_bytes()).ok_or(ConfigError::UnknownOption { name })?;
        let words: Vec<Vec<u8>> = words.collect();
        let shown = words.iter().map(|w| lossy(w)).collect::<Vec<_>>().join(" ");
        let invalid = |reason: &str| ConfigError::InvalidValue {
            name: spec.name,
            value: shown.clone(),
            reason: reason.to_owned(),
        };
        let mut args = words
            .into_iter()
            .map(String::from_utf8)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| invalid(NOT_UTF8))?;
        // Like Redis, a multi-word option given as one quoted word is split
        // again, so `--save "900 1"` means `save 900 1`; an empty word stays.
        if matches!(spec.kind, Kind::Words { .. }) && args.len() == 1 && !args[0].is_empty() {
            let split =
                split_args(args[0].as_bytes()).ok_or_else(|| invalid("unbalanced quotes"))?;
            args = split
                .into_iter()
                .map(String::from_utf8)
                .collect::<Result<_, _>>()
                .map_err(|_| invalid(NOT_UTF8))?;
        }
        if spec.param == Param::Save {
            args = self.loaded_save(args);
        }
        spec.kind
            .apply(self, args)
            .map_err(|refusal| match refusal {
                Refusal::ArgCount => ConfigError::ArgCount { name: spec.name },
                Refusal::Invalid(reason) => invalid(&reason),
            })
    }

    /// What a `save` directive read at startup sets, by Redis's rule: the
    /// first replaces the default, later ones add their pairs, and an
    /// empty one (`save ""`) clears the list.
    fn loaded_save(&mut self, words: Vec<String>) -> Vec<String> {
        let clears = words.iter().all(String::is_empty);
        let first = !std::mem::replace(&mut self.loading.save_read, true);
        if clears || first {
            return words;
        }
        self.save
            .split_whitespace()
            .map(str::to_owned)
            .chain(words)
            .collect()
    }

    /// A parameter kept in [`Config::stored`], as `CONFIG GET` prints it.
    pub fn stored_value(&self, name: &str) -> &str {
        self.stored.get(name).map_or("", String::as_str)
    }

    /// `cluster-enabled`: whether the server runs in cluster mode.
    pub(crate) fn cluster_enabled(&self) -> bool {
        self.stored_value("cluster-enabled") == "yes"
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

    /// Whether writes are refused for want of replicas: Redis refuses them
    /// when `min-replicas-to-write` and `min-replicas-max-lag` are both
    /// set and fewer replicas are in good standing, and FerrumKV has none.
    pub(crate) fn lacks_good_replicas(&self) -> bool {
        let set = |name| self.stored_value(name).parse::<u64>().is_ok_and(|n| n > 0);
        set("min-replicas-to-write") && set("min-replicas-max-lag")
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
            maxmemory_policy: "",
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
            enable_debug_command: false,
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

const NOT_UTF8: &str = "argument must be valid UTF-8";

/// Why a row refused its arguments, before the caller says where they came from.
enum Refusal {
    ArgCount,
    Invalid(String),
}

/// Whether `CONFIG GET pattern` lists the parameter called `name`.
/// Parameters `CONFIG GET` shows only when asked for by name, never for a
/// pattern: those Redis marks hidden, and FerrumKV's own that cannot change
/// at runtime, so that setting every parameter `CONFIG GET *` lists to its
/// own value succeeds, as it does in Redis (its test suite does exactly
/// that).
const HIDDEN: &[&str] = &[
    "rdb-key-save-delay",
    "key-load-delay",
    "worker-threads",
    "metrics-addr",
];

fn selects(pattern: &[u8], name: &str) -> bool {
    if pattern.iter().any(|b| matches!(b, b'*' | b'?' | b'[')) {
        !HIDDEN.contains(&name) && glob_match(pattern, name.as_bytes(), true)
    } else {
        name.as_bytes().eq_ignore_ascii_case(pattern)
    }
}

impl Kind {
    /// Validates `args` completely, then stores them; on error `config` is
    /// untouched.
    fn apply(&self, config: &mut Config, args: Vec<String>) -> Result<(), Refusal> {
        let single = |args: Vec<String>| match <[String; 1]>::try_from(args) {
            Ok([value]) => Ok(value),
            Err(_) => Err(Refusal::ArgCount),
        };
        match *self {
            Kind::Words { set, .. } => set(config, args).map_err(Refusal::Invalid),
            Kind::Bool { set, .. } => {
                set(config, parse_bool(&single(args)?)?).map_err(Refusal::Invalid)
            }
            Kind::Int { min, max, set, .. } => {
                let n = parse_int(&single(args)?)
                    .ok_or_else(|| invalid("argument couldn't be parsed into an integer"))?;
                // Every bound is non-negative, so a negative number is simply out of range.
                let n = u64::try_from(n).map_err(|_| out_of_range(min, max))?;
                set(config, check_range(n, min, max)?);
                Ok(())
            }
            Kind::SignedInt { min, max, set, .. } => {
                let n = parse_int(&single(args)?)
                    .ok_or_else(|| invalid("argument couldn't be parsed into an integer"))?;
                if !(min..=max).contains(&n) {
                    return Err(Refusal::Invalid(format!(
                        "argument must be between {min} and {max} inclusive"
                    )));
                }
                set(config, n);
                Ok(())
            }
            Kind::Memory { min, max, set, .. } => {
                let n = parse_memory(&single(args)?)
                    .ok_or_else(|| invalid("argument must be a memory value"))?;
                set(config, check_range(n, min, max)?);
                Ok(())
            }
            Kind::Enum { names, set, .. } => {
                let value = single(args)?;
                let name = names
                    .iter()
                    .find(|n| n.eq_ignore_ascii_case(&value))
                    .ok_or_else(|| {
                        Refusal::Invalid(format!(
                            "argument(s) must be one of the following: {}",
                            names.join(", ")
                        ))
                    })?;
                set(config, name);
                Ok(())
            }
            Kind::Text { set, .. } => set(config, single(args)?).map_err(Refusal::Invalid),
        }
    }

    /// The value as `CONFIG GET` prints it.
    fn render(&self, config: &Config) -> String {
        match *self {
            Kind::Bool { get, .. } => if get(config) { "yes" } else { "no" }.to_owned(),
            Kind::Int { get, .. } | Kind::Memory { get, .. } => get(config).to_string(),
            Kind::SignedInt { get, .. } => get(config).to_string(),
            Kind::Enum { get, .. } => get(config).to_owned(),
            Kind::Text { get, .. } | Kind::Words { get, .. } => get(config),
        }
    }
}

fn invalid(reason: &str) -> Refusal {
    Refusal::Invalid(reason.to_owned())
}

fn out_of_range(min: u64, max: u64) -> Refusal {
    Refusal::Invalid(format!(
        "argument must be between {min} and {max} inclusive"
    ))
}

fn check_range(n: u64, min: u64, max: u64) -> Result<u64, Refusal> {
    if (min..=max).contains(&n) {
        Ok(n)
    } else {
        Err(out_of_range(min, max))
    }
}

/// Narrows a value the row's bounds already keep within `u32`.
fn to_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

fn refuse_yes(yes: bool, why: &str) -> Result<(), String> {
    if yes {
        Err(format!("{why}; only 'no' is accepted"))
    } else {
        Ok(())
    }
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A command-line directive as redis-server shows it in a startup error:
/// the name, then each value quoted by `sdscatrepr`.
fn shown_directive(words: &[Vec<u8>]) -> String {
    let mut text = words.first().map(|w| lossy(w)).unwrap_or_default();
    for word in words.iter().skip(1) {
        text.push(' ');
        push_repr(&mut text, word);
    }
    text
}

/// Finds a parameter `CONFIG SET` may change.
fn settable(name: &[u8]) -> Result<&'static Spec, ConfigError> {
    let spec = lookup(name).ok_or_else(|| ConfigError::SetUnknown { name: lossy(name) })?;
    if !spec.mutable {
        // Redis names the argument as the client spelled it here.
        return Err(ConfigError::SetImmutable { name: lossy(name) });
    }
    Ok(spec)
}

/// Redis's `yesnotoi`: `yes` or `no`, any case.
fn parse_bool(s: &str) -> Result<bool, Refusal> {
    if s.eq_ignore_ascii_case("yes") {
        Ok(true)
    } else if s.eq_ignore_ascii_case("no") {
        Ok(false)
    } else {
        Err(invalid("argument must be 'yes' or 'no'"))
    }
}

/// `replicaof host port` (or `no one`), checked as Redis checks it and
/// stored: FerrumKV does not replicate.
fn set_replicaof(config: &mut Config, words: Vec<String>) -> Result<(), String> {
    // No words (the default, or `""` as `CONFIG GET` renders it): not a
    // replica.
    if words.iter().all(String::is_empty) {
        config.stored.insert("replicaof", String::new());
        return Ok(());
    }
    let [host, port] = words.as_slice() else {
        return Err("wrong number of arguments".into());
    };
    let no_one = host.eq_ignore_ascii_case("no") && port.eq_ignore_ascii_case("one");
    if !no_one && !port.parse::<i64>().is_ok_and(|p| (0..=65535).contains(&p)) {
        return Err("Invalid master port".into());
    }
    let value = if no_one {
        String::new()
    } else {
        format!("{host} {port}")
    };
    config.stored.insert("replicaof", value);
    Ok(())
}

/// `maxmemory-clients`: a memory value or a percentage of `maxmemory`
/// (Redis's `PERCENT_CONFIG`), stored as given and read back by
/// [`Config::maxmemory_clients_bytes`].
fn set_maxmemory_clients(config: &mut Config, value: String) -> Result<(), String> {
    if let Some(pct) = value.strip_suffix('%') {
        let n = parse_int(pct).ok_or("argument must be a memory or percent value")?;
        if n < 0 {
            return Err("argument must be a memory or percent value".into());
        }
        if n > 100 {
            return Err("percentage argument must be less or equal to 100".into());
        }
    } else {
        parse_memory(&value).ok_or("argument must be a memory or percent value")?;
    }
    config.stored.insert("maxmemory-clients", value);
    Ok(())
}

/// Whether Redis would accept `template` as `proc-title-template`: its
/// `sdstemplate` syntax (`{name}` variables of Redis's list, `{{` and `}}`
/// for braces), expanding (with an empty title) to something other than
/// spaces.
fn proc_title_template_ok(template: &str) -> bool {
    let mut expanded = String::new();
    let mut rest = template;
    while let Some(c) = rest.chars().next() {
        if let Some(r) = rest.strip_prefix("{{") {
            expanded.push('{');
            rest = r;
        } else if let Some(r) = rest.strip_prefix("}}") {
            expanded.push('}');
            rest = r;
        } else if let Some(r) = rest.strip_prefix('{') {
            let Some(end) = r.find('}') else {
                return false;
            };
            match &r[..end] {
                "title" | "server-mode" | "unixsocket" => {}
                "listen-addr" | "port" | "tls-port" | "config-file" => expanded.push('x'),
                _ => return false,
            }
            rest = &r[end + 1..];
        } else if c == '}' {
            return false;
        } else {
            expanded.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    !expanded.trim_matches(' ').is_empty()
}

/// The flags of `shutdown-on-sigint`/`-sigterm`, in Redis's order.
const SHUTDOWN_FLAGS: [&str; 5] = ["default", "save", "nosave", "now", "force"];

/// Redis's multi-argument enum for `shutdown-on-sigint`/`-sigterm`: one or
/// more of [`SHUTDOWN_FLAGS`] (any case), not both `save` and `nosave`,
/// kept as Redis prints them back (`default` alone, else the flags set in
/// table order).
fn shutdown_flags(words: &[String]) -> Result<String, String> {
    let one_of = || {
        format!(
            "argument(s) must be one of the following: {}",
            SHUTDOWN_FLAGS.join(", ")
        )
    };
    let mut set = [false; SHUTDOWN_FLAGS.len()];
    for word in words {
        let i = SHUTDOWN_FLAGS
            .iter()
            .position(|f| f.eq_ignore_ascii_case(word))
            .ok_or_else(one_of)?;
        set[i] = true;
    }
    if words.is_empty() {
        return Err(one_of());
    }
    if set[1] && set[2] {
        return Err("shutdown can't have both 'save' and 'nosave' flags".into());
    }
    let named: Vec<&str> = SHUTDOWN_FLAGS
        .iter()
        .zip(set)
        .skip(1)
        .filter_map(|(f, on)| on.then_some(*f))
        .collect();
    Ok(if named.is_empty() {
        "default".to_owned()
    } else {
        named.join(" ")
    })
}

/// Redis's `latency-tracking-info-percentiles`: numbers in 0..=100, kept
/// as Redis prints them back (`%f` without trailing zeros: `50.0` is `50`).
fn set_latency_percentiles(config: &mut Config, words: Vec<String>) -> Result<(), String> {
    let mut kept = Vec::with_capacity(words.len());
    for word in &words {
        let p: f64 = word
            .parse()
            .ok()
            .filter(|p: &f64| !p.is_nan())
            .ok_or("Invalid latency-tracking-info-percentiles parameters")?;
        if !(0.0..=100.0).contains(&p) {
            return Err(
                "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
                    .into(),
            );
        }
        kept.push(trim_double(&format!("{p:.6}")).to_owned());
    }
    config
        .stored
        .insert("latency-tracking-info-percentiles", kept.join(" "));
    Ok(())
}

/// Redis's `trimDoubleString`: `%f`'s output without trailing zeros, and
/// without the point when nothing follows it.
fn trim_double(fixed: &str) -> &str {
    if fixed.contains('.') {
        fixed.trim_end_matches('0').trim_end_matches('.')
    } else {
        fixed
    }
}

/// Redis's `isValidDBfilename`: a file name, not a path.
fn set_dbfilename(config: &mut Config, name: String) -> Result<(), String> {
    if name.contains('/') {
        return Err("dbfilename can't be a path, just a filename".into());
    }
    config.dbfilename = name;
    Ok(())
}

/// `dir`, kept absolute as Redis reports it (Redis changes into it and
/// answers `getcwd`), so that `CONFIG REWRITE` and `CONFIG GET` agree
/// wherever the server is restarted from: resolved when it exists, else
/// joined to the current directory. FerrumKV writes nothing there, so
/// unlike Redis it does not refuse a directory that does not exist.
fn set_dir(config: &mut Config, dir: String) -> Result<(), String> {
    let path = Path::new(&dir);
    let absolute = std::fs::canonicalize(path).or_else(|_| std::path::absolute(path));
    config.dir = absolute.map_or(dir, |p| p.to_string_lossy().into_owned());
    Ok(())
}

fn set_bind(config: &mut Config, addrs: Vec<String>) -> Result<(), String> {
    if addrs.iter().all(String::is_empty) {
        return Err("at least one address is required".into());
    }
    if addrs.len() > MAX_BIND_ADDRS {
        return Err("Too many bind addresses specified.".into());
    }
    // As in Redis, an address is only checked when it is bound: a bad one
    // fails start-up, or the `CONFIG SET`, with the bind's own error.
    config.bind = addrs;
    Ok(())
}

/// `metrics-addr`: empty for none, `ip:port`, or a bare port on 127.0.0.1
/// (DESIGN.md: the exporter binds to loopback unless told otherwise).
fn parse_metrics_addr(value: &str) -> Result<Option<SocketAddr>, String> {
    if value.is_empty() {
        return Ok(None);
    }
    if let Ok(port) = value.parse::<u16>() {
        return Ok(Some(SocketAddr::from(([127, 0, 0, 1], port))));
    }
    value
        .parse()
        .map(Some)
        .map_err(|_| "argument must be an address such as 127.0.0.1:9121, or a port".to_owned())
}

/// Redis's `client-output-buffer-limit` syntax: groups of
/// `<class> <hard> <soft> <soft-seconds>`. Only the classes named change.
fn set_output_buffer_limits(config: &mut Config, words: Vec<String>) -> Result<(), String> {
    if words.len() % 4 != 0 {
        return Err("Wrong number of arguments in buffer limit configuration.".into());
    }
    let mut limits = config.client_output_buffer_limit;
    for group in words.chunks_exact(4) {
        let slot = match group[0].to_ascii_lowercase().as_str() {
            "normal" => &mut limits.normal,
            "replica" | "slave" => &mut limits.replica,
            "pubsub" => &mut limits.pubsub,
            _ => {
                return Err("Invalid client class specified in buffer limit configuration.".into())
            }
        };
        let parsed = (
            parse_memory(&group[1]),
            parse_memory(&group[2]),
            group[3].parse::<u64>().ok(),
        );
        let (Some(hard_bytes), Some(soft_bytes), Some(soft_seconds)) = parsed else {
            return Err(
                "Error in hard, soft or soft_seconds setting in buffer limit configuration.".into(),
            );
        };
        *slot = OutputBufferLimit {
            hard_bytes,
            soft_bytes,
            soft_seconds,
        };
    }
    config.client_output_buffer_limit = limits;
    Ok(())
}

/// As Redis 7 prints it, every class, in bytes, with `slave` for replicas.
fn render_output_buffer_limits(config: &Config) -> String {
    let l = &config.client_output_buffer_limit;
    [
        ("normal", l.normal),
        ("slave", l.replica),
        ("pubsub", l.pubsub),
    ]
    .iter()
    .map(|(class, x)| {
        format!(
            "{class} {} {} {}",
            x.hard_bytes, x.soft_bytes, x.soft_seconds
        )
    })
    .collect::<Vec<_>>()
    .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    /// The command line's configuration, or the error of its directive
    /// (without the line that names it: see `command_line_errors_name_the_line`).
    fn parse(words: &[&str]) -> Result<Config, ConfigError> {
        Config::from_args(args(words)).map_err(|e| match e {
            ConfigError::OnCommandLine { error, .. } => *error,
            e => e,
        })
    }

    fn file(text: &str) -> Result<Config, ConfigError> {
        let mut config = Config::default();
        config.apply_file(Path::new("test.conf"), text.as_bytes())?;
        Ok(config)
    }

    fn file_err(text: &str) -> String {
        match file(text) {
            Ok(_) => panic!("expected {text:?} to be refused"),
            Err(e) => e.to_string(),
        }
    }

    fn get1(config: &Config, name: &str) -> String {
        match config.get(name.as_bytes()).as_slice() {
            [(_, value)] => value.clone(),
            other => panic!("expected one parameter for {name}, got {other:?}"),
        }
    }

    fn set_err(config: &mut Config, name: &str, value: &str) -> String {
        match config.set(name.as_bytes(), value.as_bytes()) {
            Ok(param) => panic!("expected CONFIG SET {name} {value:?} to fail, it set {param:?}"),
            Err(e) => e.to_string(),
        }
    }

    /// A config file under the temp directory, removed on drop.
    struct TempFile(PathBuf);

    impl TempFile {
        fn new(contents: &str) -> TempFile {
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path =
                std::env::temp_dir().join(format!("ferrum-config-{}-{n}.conf", std::process::id()));
            std::fs::write(&path, contents).expect("write temp config");
            TempFile(path)
        }

        fn arg(&self) -> &str {
            self.0.to_str().expect("temp path is UTF-8")
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    #[test]
    fn defaults() {
        let c = Config::default();
        assert_eq!(c.config_file, None);
        assert_eq!(c.bind, ["127.0.0.1"]);
        assert_eq!(c.port, 6379);
        assert_eq!(c.databases, 16);
        assert_eq!(c.maxmemory_bytes, 0);
        assert_eq!(c.maxmemory_policy, "noeviction");
        assert_eq!(c.maxmemory_samples, 5);
        assert_eq!(c.lfu_log_factor, 10);
        assert_eq!(c.lfu_decay_time_minutes, 1);
        assert_eq!(c.requirepass, None);
        assert_eq!(c.maxclients, 10000);
        assert_eq!(c.timeout, Duration::ZERO);
        assert_eq!(c.tcp_keepalive, Duration::from_secs(300));
        assert_eq!(c.proto_max_bulk_len_bytes, 512 * MB);
        assert_eq!(c.client_query_buffer_limit_bytes, 1024 * MB);
        assert_eq!(c.hz, 10);
        assert_eq!(c.loglevel, "notice");
        assert_eq!(c.logfile, None);
        assert!(c.protected_mode);
        assert_eq!(c.save, "3600 1 300 100 60 10000");
        assert_eq!(c.active_expire_effort, 1);
        let limits = c.client_output_buffer_limit;
        assert_eq!(limits.normal, OutputBufferLimit::default());
        assert_eq!(
            limits.replica,
            OutputBufferLimit {
                hard_bytes: 256 * MB,
                soft_bytes: 64 * MB,
                soft_seconds: 60
            }
        );
        assert_eq!(
            limits.pubsub,
            OutputBufferLimit {
                hard_bytes: 32 * MB,
                soft_bytes: 8 * MB,
                soft_seconds: 60
            }
        );
        assert_eq!(c.metrics_addr, None);
        assert_eq!(c.dbfilename, "dump.rdb");
        let cwd = std::env::current_dir().expect("current directory");
        assert_eq!(
            c.dir,
            cwd.to_string_lossy(),
            "dir is absolute, as Redis reports it"
        );
        assert_eq!(parse(&[]).expect("no arguments"), c);
    }

    #[test]
    fn table_has_one_row_per_name_and_param() {
        for (i, a) in PARAMS.iter().enumerate() {
            assert_eq!(a.name, a.name.to_ascii_lowercase(), "names are lowercase");
            for b in &PARAMS[i + 1..] {
                assert_ne!(a.name, b.name);
                // Stored parameters share one `Param`; each has its own
                // canonical name, which only an alias shares.
                if a.param == Param::Stored && b.param == Param::Stored {
                    let alias = STORED_ALIASES
                        .iter()
                        .any(|&(x, y)| (x, y) == (a.name, b.name) || (y, x) == (a.name, b.name));
                    assert_eq!(alias, canonical(a.name) == canonical(b.name));
                    continue;
                }
                assert_ne!(a.param, b.param, "{} and {}", a.name, b.name);
            }
        }
    }

    #[test]
    fn every_value_round_trips_through_its_rendering() {
        // What CONFIG GET prints must be accepted back, by the file parser
        // (all rows) and by CONFIG SET (mutable rows), without changing it.
        let c = Config::default();
        for (name, value) in c.get(b"*") {
            let mut again = Config::default();
            let words = vec![name.as_bytes().to_vec(), value.clone().into_bytes()];
            again
                .apply_directive(words)
                .unwrap_or_else(|e| panic!("{name} {value:?}: {e}"));
            assert_eq!(again, c, "{name}");
            if PARAMS.iter().any(|s| s.name == name && s.mutable) {
                let mut again = Config::default();
                again
                    .set(name.as_bytes(), value.as_bytes())
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(again, c, "{name}");
            }
        }
    }

    #[test]
    fn numeric_bounds_are_enforced_and_fit_their_fields() {
        for spec in PARAMS {
            let (Kind::Int { min, max, .. } | Kind::Memory { min, max, .. }) = spec.kind else {
                continue;
            };
            let mut c = Config::default();
            for n in [min, max] {
                let words = vec![spec.name.as_bytes().to_vec(), n.to_string().into_bytes()];
                c.apply_directive(words)
                    .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
                assert_eq!(
                    get1(&c, spec.name),
                    n.to_string(),
                    "{} must hold {n} without narrowing",
                    spec.name
                );
            }
            let refused = format!("argument must be between {min} and {max} inclusive");
            let outside = [min.checked_sub(1), max.checked_add(1)];
            // Past i64, an integer row cannot even parse the number (Redis
            // says so too); memory rows parse it and refuse the range.
            let parses = |n: u64| matches!(spec.kind, Kind::Memory { .. }) || n <= LONG_MAX;
            for n in outside.into_iter().flatten().filter(|&n| parses(n)) {
                let words = vec![spec.name.as_bytes().to_vec(), n.to_string().into_bytes()];
                let err = c
                    .apply_directive(words)
                    .expect_err("out of range")
                    .to_string();
                assert!(err.ends_with(&refused), "{}: {err}", spec.name);
            }
        }
    }

    #[test]
    fn memory_units() {
        let cases: &[(&str, u64)] = &[
            ("0", 0),
            ("100", 100),
            ("100b", 100),
            ("1k", 1000),
            ("1K", 1000),
            ("1kb", 1024),
            ("1KB", 1024),
            ("1kB", 1024),
            ("16m", 16_000_000),
            ("16mb", 16 * MB),
            ("1g", 1_000_000_000),
            ("1gb", 1024 * MB),
            ("1Gb", 1024 * MB),
            ("007mb", 7 * MB),
            ("18446744073709551615", u64::MAX),
        ];
        for &(text, bytes) in cases {
            assert_eq!(parse_memory(text), Some(bytes), "{text}");
            let c = parse(&["--maxmemory", text]).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(c.maxmemory_bytes, bytes, "{text}");
        }
        for text in [
            "",
            "kb",
            "-1",
            "1.5mb",
            "1 mb",
            " 1",
            "1tb",
            "1kbb",
            "+1",
            "18446744073709551616",
            "17179869184gb",
        ] {
            assert_eq!(parse_memory(text), None, "{text:?}");
        }
        let err = parse(&["--maxmemory", "abc"])
            .expect_err("not memory")
            .to_string();
        assert_eq!(
            err,
            "invalid argument 'abc' for 'maxmemory': argument must be a memory value"
        );
    }

    #[test]
    fn integer_options_refuse_what_string2ll_refuses() {
        let err = parse(&["--port", "06379"])
            .expect_err("leading zero")
            .to_string();
        assert_eq!(
            err,
            "invalid argument '06379' for 'port': argument couldn't be parsed into an integer"
        );
        let err = parse(&["--timeout", "-1"])
            .expect_err("negative")
            .to_string();
        assert_eq!(err, "invalid argument '-1' for 'timeout': argument must be between 0 and 2147483647 inclusive");
        let err = parse(&["--hz", "501"]).expect_err("too fast").to_string();
        assert_eq!(
            err,
            "invalid argument '501' for 'hz': argument must be between 1 and 500 inclusive"
        );
    }

    #[test]
    fn booleans_and_enums() {
        let c = parse(&[
            "--protected-mode",
            "NO",
            "--maxmemory-policy",
            "AllKeys-LFU",
            "--loglevel",
            "Warning",
        ])
        .expect("valid");
        assert!(!c.protected_mode);
        assert_eq!(c.maxmemory_policy, "allkeys-lfu");
        assert_eq!(c.loglevel, "warning");
        assert_eq!(get1(&c, "maxmemory-policy"), "allkeys-lfu");
        assert_eq!(get1(&c, "protected-mode"), "no");
        let err = parse(&["--protected-mode", "true"])
            .expect_err("not yes/no")
            .to_string();
        assert_eq!(
            err,
            "invalid argument 'true' for 'protected-mode': argument must be 'yes' or 'no'"
        );
        let err = parse(&["--loglevel", "loud"])
            .expect_err("no such level")
            .to_string();
        assert_eq!(
            err,
            "invalid argument 'loud' for 'loglevel': argument(s) must be one of the following: debug, verbose, notice, warning"
        );
        let err = parse(&["--maxmemory-policy", "lru"])
            .expect_err("no such policy")
            .to_string();
        assert!(err.ends_with(&MAXMEMORY_POLICIES.join(", ")), "{err}");
        for policy in MAXMEMORY_POLICIES {
            let mut c = Config::default();
            assert_eq!(
                c.set(b"maxmemory-policy", policy.to_uppercase().as_bytes())
                    .ok(),
                Some(Param::MaxmemoryPolicy)
            );
            assert_eq!(c.maxmemory_policy, *policy);
        }
    }

    #[test]
    fn persistence_and_daemonize_only_accept_no() {
        let c = parse(&[
            "--daemonize",
            "no",
            "--appendonly",
            "no",
            "--save",
            "900",
            "1",
        ])
        .expect("accepted");
        assert_eq!(get1(&c, "daemonize"), "no");
        assert_eq!(get1(&c, "appendonly"), "no");
        assert_eq!(c.save, "900 1");
        let err = parse(&["--daemonize", "yes"])
            .expect_err("no daemon")
            .to_string();
        assert!(
            err.starts_with("invalid argument 'yes' for 'daemonize': FerrumKV does not daemonize"),
            "{err}"
        );
        let err = parse(&["--appendonly", "yes"])
            .expect_err("no aof")
            .to_string();
        assert!(
            err.starts_with(
                "invalid argument 'yes' for 'appendonly': FerrumKV keeps no persistence"
            ),
            "{err}"
        );
        let mut c = Config::default();
        assert_eq!(c.set(b"appendonly", b"no").ok(), Some(Param::Appendonly));
        assert!(set_err(&mut c, "appendonly", "yes").contains("FerrumKV keeps no persistence"));
    }

    #[test]
    fn worker_threads_default_to_auto_and_take_a_count() {
        assert_eq!(Config::default().worker_threads, 0);
        let c = parse(&["--worker-threads", "1"]).expect("valid");
        assert_eq!(c.worker_threads, 1);
        assert_eq!(get1(&c, "worker-threads"), "1");
        assert!(parse(&["--worker-threads", "-1"]).is_err());
        assert!(parse(&["--worker-threads", "1025"]).is_err());
    }

    #[test]
    fn text_values() {
        let c = parse(&[
            "--requirepass",
            "s3cret",
            "--logfile",
            "/var/log/ferrum.log",
            "--metrics-addr",
            "9121",
        ])
        .expect("valid");
        assert_eq!(c.requirepass.as_deref(), Some("s3cret"));
        assert_eq!(c.logfile, Some(PathBuf::from("/var/log/ferrum.log")));
        assert_eq!(
            c.metrics_addr,
            Some(SocketAddr::from(([127, 0, 0, 1], 9121)))
        );
        let c = parse(&["--requirepass", "", "--metrics-addr", "[::1]:9000"]).expect("valid");
        assert_eq!(c.requirepass, None);
        assert_eq!(get1(&c, "metrics-addr"), "[::1]:9000");
        let err = parse(&["--metrics-addr", "localhost:9121"])
            .expect_err("not an address")
            .to_string();
        assert!(
            err.starts_with("invalid argument 'localhost:9121' for 'metrics-addr': "),
            "{err}"
        );
        let err = parse(&["--dbfilename", "/tmp/x.rdb"])
            .expect_err("a path")
            .to_string();
        assert!(
            err.ends_with("dbfilename can't be a path, just a filename"),
            "{err}"
        );
    }

    #[test]
    fn bind_addresses() {
        let c = parse(&["--bind", "127.0.0.1", "-::1", "*", "10.0.0.1"]).expect("valid");
        assert_eq!(c.bind, ["127.0.0.1", "-::1", "*", "10.0.0.1"]);
        assert_eq!(get1(&c, "bind"), "127.0.0.1 -::1 * 10.0.0.1");
        let c = parse(&["--bind", "0.0.0.0 ::"]).expect("one quoted word is split");
        assert_eq!(c.bind, ["0.0.0.0", "::"]);
        let c = parse(&["--bind", "localhost"]).expect("names are resolved when bound");
        assert_eq!(c.bind, ["localhost"]);
        let err = parse(&["--bind", ""]).expect_err("empty").to_string();
        assert!(err.starts_with("invalid argument '' for 'bind'"), "{err}");
        let seventeen = vec!["127.0.0.1"; MAX_BIND_ADDRS + 1].join(" ");
        let err = parse(&["--bind", &seventeen])
            .expect_err("too many")
            .to_string();
        assert!(err.ends_with("Too many bind addresses specified."), "{err}");
    }

    #[test]
    fn latency_percentiles_read_back_as_redis_prints_them() {
        let mut c = Config::default();
        let name = "latency-tracking-info-percentiles";
        assert_eq!(get1(&c, name), "50 99 99.9");
        c.set(name.as_bytes(), b"0.0 50.0 100.0 99.990")
            .expect("valid");
        assert_eq!(get1(&c, name), "0 50 100 99.99");
        c.set(name.as_bytes(), b"")
            .expect("empty is no percentiles");
        assert_eq!(get1(&c, name), "");
        c.set(name.as_bytes(), b"50").expect("valid");
        for (value, reason) in [
            (
                "10.0 50.0 a",
                "Invalid latency-tracking-info-percentiles parameters",
            ),
            (
                "nan",
                "Invalid latency-tracking-info-percentiles parameters",
            ),
            (
                "10.0 50.0 101.0",
                "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]",
            ),
            (
                "-1",
                "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]",
            ),
        ] {
            let err = set_err(&mut c, name, value);
            assert_eq!(
                err,
                format!("ERR CONFIG SET failed (possibly related to argument '{name}') - {reason}")
            );
            assert_eq!(get1(&c, name), "50", "{value} changed nothing");
        }
    }

    #[test]
    fn output_buffer_limits() {
        let mut c = Config::default();
        assert_eq!(
            get1(&c, "client-output-buffer-limit"),
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
        );
        // Only the classes named change, in any case; replica and slave are one class.
        c.set(
            b"client-output-buffer-limit",
            b"NORMAL 1mb 512kb 10 replica 1 2 3",
        )
        .expect("valid");
        assert_eq!(
            c.client_output_buffer_limit.normal,
            OutputBufferLimit {
                hard_bytes: MB,
                soft_bytes: 512 * 1024,
                soft_seconds: 10
            }
        );
        assert_eq!(
            c.client_output_buffer_limit.replica,
            OutputBufferLimit {
                hard_bytes: 1,
                soft_bytes: 2,
                soft_seconds: 3
            }
        );
        assert_eq!(c.client_output_buffer_limit.pubsub.hard_bytes, 32 * MB);
        let before = c.clone();
        let wrong = [
            (
                "normal 0 0",
                "Wrong number of arguments in buffer limit configuration.",
            ),
            (
                "master 0 0 0",
                "Invalid client class specified in buffer limit configuration.",
            ),
            (
                "pubsub 1x 0 0",
                "Error in hard, soft or soft_seconds setting in buffer limit configuration.",
            ),
            (
                "pubsub 0 0 -1",
                "Error in hard, soft or soft_seconds setting in buffer limit configuration.",
            ),
            // The first group is fine, the second is not: nothing changes.
            (
                "pubsub 1 1 1 normal 0 0 x",
                "Error in hard, soft or soft_seconds setting in buffer limit configuration.",
            ),
        ];
        for (value, reason) in wrong {
            let err = set_err(&mut c, "client-output-buffer-limit", value);
            assert_eq!(err, format!("ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - {reason}"));
            assert_eq!(c, before, "{value}");
        }
        // In a file, one directive per class, as stock redis.conf writes it.
        let c = file("client-output-buffer-limit normal 0 0 0\nclient-output-buffer-limit pubsub 64mb 16mb 90\n").expect("valid");
        assert_eq!(
            c.client_output_buffer_limit.pubsub,
            OutputBufferLimit {
                hard_bytes: 64 * MB,
                soft_bytes: 16 * MB,
                soft_seconds: 90
            }
        );
    }

    #[test]
    fn config_file_syntax() {
        let text = "# a comment\n\
                    \n\
                    \t  port 7000  \r\n\
                    MaxMemory 100mb\n\
                    requirepass \"p@ss word\"\n\
                    dir '/var/lib/ferrum'\n\
                    save \"\"\n\
                    save 900 1 300 10\n\
                    port 7001\n\
                    \x20  # indented comment\n";
        let c = file(text).expect("valid file");
        assert_eq!(c.port, 7001, "later lines win");
        assert_eq!(c.maxmemory_bytes, 100 * MB);
        assert_eq!(c.requirepass.as_deref(), Some("p@ss word"));
        assert_eq!(c.dir, "/var/lib/ferrum");
        assert_eq!(c.save, "900 1 300 10");
        // No trailing newline, and CRLF line ends.
        assert_eq!(file("port 1\r\nhz 20").expect("valid").hz, 20);
    }

    #[test]
    fn config_file_errors_name_the_line() {
        assert_eq!(
            file_err("port 1\nfoo bar\n"),
            "test.conf:2: unknown option 'foo'"
        );
        assert_eq!(
            file_err("\n\nport\n"),
            "test.conf:3: wrong number of arguments for 'port'"
        );
        assert_eq!(
            file_err("port 1 2"),
            "test.conf:1: wrong number of arguments for 'port'"
        );
        assert_eq!(
            file_err("port 6379 # trailing comment"),
            "test.conf:1: wrong number of arguments for 'port'"
        );
        assert_eq!(
            file_err("requirepass \"abc"),
            "test.conf:1: unbalanced quotes in configuration line"
        );
        assert_eq!(
            file_err("maxmemory 10xb"),
            "test.conf:1: invalid argument '10xb' for 'maxmemory': argument must be a memory value"
        );
        assert_eq!(
            file_err("include /etc/other.conf"),
            "test.conf:1: 'include' is not supported: put every directive in one file"
        );
        assert_eq!(
            file_err("requirepass \"\\xff\""),
            "test.conf:1: invalid argument '\u{fffd}' for 'requirepass': argument must be valid UTF-8"
        );
    }

    #[test]
    fn command_line_errors_name_the_line() {
        let e = Config::from_args(args(&["--port", "1", "--port", "--x", "y"]))
            .expect_err("two values");
        assert_eq!(
            e.to_string(),
            "command line, 'port \"--x\" \"y\"': wrong number of arguments for 'port'"
        );
        let report = e.fatal_report();
        assert!(
            report.contains("at line 3\n>>> 'port \"--x\" \"y\"'\nwrong number of arguments"),
            "{report}"
        );
        // After a file, the command line's lines follow the file's and an empty one.
        let conf = TempFile::new("port 1\n\nhz 20\n");
        let e = Config::from_args(args(&[conf.arg(), "--hz", "0"])).expect_err("hz 0");
        assert!(
            e.fatal_report().contains("at line 5\n>>> 'hz \"0\"'\n"),
            "{e}"
        );
        let e = file("bad line").expect_err("unknown");
        assert!(
            e.fatal_report()
                .ends_with("at line 1\n>>> 'bad line'\nBad directive or wrong number of arguments"),
            "{e}"
        );
    }

    #[test]
    fn replicaof_takes_a_host_and_a_port() {
        let c = parse(&["--replicaof", "10.0.0.1", "6380"]).expect("valid");
        assert_eq!(get1(&c, "replicaof"), "10.0.0.1 6380");
        assert_eq!(
            get1(
                &parse(&["--slaveof", "no", "one"]).expect("valid"),
                "slaveof"
            ),
            ""
        );
        for (words, reason) in [
            (
                &["--replicaof", "127.0.0.1", "abc"][..],
                "Invalid master port",
            ),
            (
                &["--replicaof", "127.0.0.1", "70000"],
                "Invalid master port",
            ),
            (&["--replicaof", "--127.0.0.1"], "wrong number of arguments"),
        ] {
            let e = Config::from_args(args(words)).expect_err("refused");
            assert!(
                e.fatal_report().ends_with(reason),
                "{words:?}: {}",
                e.fatal_report()
            );
        }
    }

    #[test]
    fn command_line_overrides_the_file() {
        let conf = TempFile::new("port 7000\nmaxmemory 1gb\nloglevel debug\n");
        let c = parse(&[
            conf.arg(),
            "--port",
            "7001",
            "--maxmemory",
            "2gb",
            "--maxmemory",
            "3gb",
        ])
        .expect("valid");
        assert_eq!(c.port, 7001);
        assert_eq!(c.maxmemory_bytes, 3 * 1024 * MB, "later overrides win");
        assert_eq!(c.loglevel, "debug", "the file still applies");
        assert_eq!(
            c.config_file.as_deref(),
            Some(std::path::absolute(&conf.0).expect("absolute").as_path())
        );
        let c = parse(&[conf.arg()]).expect("file only");
        assert_eq!(c.port, 7000);
        let bad = TempFile::new("port 1\nhz 0\n");
        let err = parse(&[bad.arg()]).expect_err("hz 0").to_string();
        assert_eq!(
            err,
            format!(
                "{}:2: invalid argument '0' for 'hz': argument must be between 1 and 500 inclusive",
                bad.arg()
            )
        );
    }

    #[test]
    fn command_line_grouping() {
        // Every word up to the next --option is a value.
        let c = parse(&["--save", "900", "1", "300", "10", "--port", "1"]).expect("valid");
        assert_eq!((c.save.as_str(), c.port), ("900 1 300 10", 1));
        // The word after a bare option is its value, even if it starts with --.
        let c = parse(&["--requirepass", "--not-an-option", "--port", "2"]).expect("valid");
        assert_eq!(c.requirepass.as_deref(), Some("--not-an-option"));
        // Name and value in one word.
        let c = parse(&["--port 6380", "--maxmemory \"1 mb\""]).map(|c| c.port);
        assert!(
            matches!(
                c,
                Err(ConfigError::InvalidValue {
                    name: "maxmemory",
                    ..
                })
            ),
            "{c:?}"
        );
        assert_eq!(parse(&["--port 6380"]).expect("valid").port, 6380);
        // A bare --save before another option, or at the end, means save "".
        let c = parse(&["--save", "--port", "3"]).expect("valid");
        assert_eq!((c.save.as_str(), c.port), ("", 3));
        assert_eq!(parse(&["--port", "4", "--save"]).expect("valid").save, "");
        // Options may repeat a name in any case.
        assert_eq!(parse(&["--PORT", "5"]).expect("valid").port, 5);
        // An option without its value.
        let err = parse(&["--port"]).expect_err("no value").to_string();
        assert_eq!(err, "wrong number of arguments for 'port'");
        let err = parse(&["--port", "1", "2"])
            .expect_err("two values")
            .to_string();
        assert_eq!(err, "wrong number of arguments for 'port'");
        let err = parse(&["--nosuch", "1"]).expect_err("unknown").to_string();
        assert_eq!(err, "unknown option 'nosuch'");
    }

    #[test]
    fn words_before_the_first_option_and_redis_7_startup_parameters() {
        // After the file, as redis-server, which appends them as a line of
        // their own.
        let conf = TempFile::new("port 7000\n");
        let c = parse(&[conf.arg(), "loglevel", "verbose", "--maxmemory '700mb'"]).expect("valid");
        assert_eq!((c.loglevel, c.maxmemory_bytes), ("verbose", 700 * MB));
        let c = parse(&[
            "--proc-title-template",
            "--my--title--template",
            "--loglevel",
            "verbose",
        ])
        .expect("valid");
        assert_eq!(get1(&c, "proc-title-template"), "--my--title--template");
        let c = parse(&[
            "--shutdown-on-sigint",
            "nosave",
            "force",
            "now",
            "--shutdown-on-sigterm",
            "nosave force",
        ])
        .expect("valid");
        assert_eq!(get1(&c, "shutdown-on-sigint"), "nosave now force");
        assert_eq!(get1(&c, "shutdown-on-sigterm"), "nosave force");
        let mut c = Config::default();
        assert_eq!(get1(&c, "shutdown-on-sigint"), "default");
        assert_eq!(
            set_err(&mut c, "shutdown-on-sigterm", "save nosave"),
            "ERR CONFIG SET failed (possibly related to argument 'shutdown-on-sigterm') - shutdown can't have both 'save' and 'nosave' flags"
        );
        assert!(set_err(&mut c, "shutdown-on-sigint", "later").ends_with(
            "argument(s) must be one of the following: default, save, nosave, now, force"
        ));
        for bad in ["{nosuch}", "{title}", "{title", "a}b"] {
            assert!(
                set_err(&mut c, "proc-title-template", bad)
                    .ends_with("template format is invalid or contains unknown variables"),
                "{bad}"
            );
        }
        c.set(b"proc-title-template", b"{{x}} {port}")
            .expect("valid");
        assert_eq!(get1(&c, "proc-title-template"), "{{x}} {port}");
    }

    #[test]
    fn save_read_at_startup_replaces_the_default_then_adds() {
        assert_eq!(parse(&[]).expect("valid").save, "3600 1 300 100 60 10000");
        let conf = TempFile::new("save 900 1\n");
        let c = parse(&[conf.arg()]).expect("valid");
        assert_eq!(c.save, "900 1", "the first one replaces the default");
        let c = parse(&[conf.arg(), "--save", "100", "100"]).expect("valid");
        assert_eq!(c.save, "900 1 100 100", "later ones add");
        let c = parse(&[conf.arg(), "--save", ""]).expect("valid");
        assert_eq!(c.save, "", "an empty one clears");
        // CONFIG SET replaces.
        let mut c = parse(&[conf.arg()]).expect("valid");
        c.set(b"save", b"60 5").expect("valid");
        assert_eq!(c.save, "60 5");
    }

    #[test]
    fn command_line_oddities() {
        assert!(matches!(parse(&["-h"]), Err(ConfigError::Help)));
        assert!(matches!(parse(&["--help"]), Err(ConfigError::Help)));
        assert!(matches!(parse(&["-v"]), Err(ConfigError::Version)));
        assert!(matches!(
            parse(&["--version", "--port", "1"]),
            Err(ConfigError::Version)
        ));
        // Only as the first argument, as redis-server: elsewhere it is an unknown option.
        assert!(matches!(
            parse(&["--port", "1", "--help"]),
            Err(ConfigError::UnknownOption { .. })
        ));
        assert!(matches!(parse(&["-"]), Err(ConfigError::Stdin)));
        let err = parse(&["-x"]).expect_err("stray").to_string();
        assert_eq!(
            err,
            "unexpected argument '-x': options are written --name value, as in --port 6380"
        );
        assert!(matches!(
            parse(&["--", "port", "1"]),
            Err(ConfigError::UnexpectedArgument { .. })
        ));
        let missing = std::env::temp_dir().join("ferrum-config-does-not-exist.conf");
        let err = parse(&[missing.to_str().expect("UTF-8")])
            .expect_err("missing file")
            .to_string();
        assert!(
            err.starts_with(&format!("can't open config file '{}': ", missing.display())),
            "{err}"
        );
    }

    #[test]
    fn config_get_globs() {
        let c = Config::default();
        let names = |pattern: &str| {
            c.get(pattern.as_bytes())
                .into_iter()
                .map(|(n, _)| n)
                .collect::<Vec<_>>()
        };
        // Hidden parameters only by name, as in Redis.
        assert_eq!(
            names("*").len(),
            PARAMS.len() + ALIASES.len() - HIDDEN.len()
        );
        assert_eq!(names("key-load-delay"), ["key-load-delay"]);
        assert!(names("key-load-*").is_empty());
        assert_eq!(
            names("maxmemory*"),
            [
                "maxmemory",
                "maxmemory-policy",
                "maxmemory-samples",
                "maxmemory-eviction-tenacity",
                "maxmemory-clients"
            ]
        );
        assert_eq!(names("MAXMEMORY-P*"), ["maxmemory-policy"]);
        assert_eq!(names("lfu-*"), ["lfu-log-factor", "lfu-decay-time"]);
        assert_eq!(names("*port*"), ["port", "tls-port"]);
        assert_eq!(names("?z"), ["hz"]);
        assert_eq!(
            names("[bp]*"),
            [
                "bind",
                "port",
                "proto-max-bulk-len",
                "protected-mode",
                "proc-title-template",
                "pidfile",
                "propagation-error-behavior",
                "busy-reply-threshold",
                "bind-source-addr"
            ]
        );
        assert_eq!(names("Port"), ["port"], "exact names are case-insensitive");
        assert_eq!(
            names("maxmem"),
            Vec::<&str>::new(),
            "no metacharacters means an exact name"
        );
        assert_eq!(names("nosuch*"), Vec::<&str>::new());
        assert_eq!(c.get(b"maxmemory"), [("maxmemory", "0".to_owned())]);
        assert_eq!(
            c.get(b"proto-max-bulk-len"),
            [("proto-max-bulk-len", "536870912".to_owned())]
        );
        assert_eq!(c.get(b"timeout"), [("timeout", "0".to_owned())]);
        assert_eq!(c.get(b"requirepass"), [("requirepass", String::new())]);
        let many = c.get_many(&[b"port", b"p*", b"hz"]);
        let many: Vec<_> = many.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            many,
            [
                "port",
                "proto-max-bulk-len",
                "hz",
                "protected-mode",
                "proc-title-template",
                "pidfile",
                "propagation-error-behavior"
            ],
            "each once, in table order"
        );
    }

    #[test]
    fn config_set_applies_and_reports_the_param() {
        let mut c = Config::default();
        assert_eq!(c.set(b"maxmemory", b"64mb").ok(), Some(Param::Maxmemory));
        assert_eq!(c.maxmemory_bytes, 64 * MB);
        assert_eq!(get1(&c, "maxmemory"), "67108864");
        assert_eq!(
            c.set(b"MAXMEMORY-SAMPLES", b"10").ok(),
            Some(Param::MaxmemorySamples)
        );
        assert_eq!(c.maxmemory_samples, 10);
        assert_eq!(c.set(b"timeout", b"30").ok(), Some(Param::Timeout));
        assert_eq!(c.timeout, Duration::from_secs(30));
        assert_eq!(c.set(b"requirepass", b"pw").ok(), Some(Param::Requirepass));
        assert_eq!(c.requirepass.as_deref(), Some("pw"));
        assert_eq!(c.set(b"requirepass", b"").ok(), Some(Param::Requirepass));
        assert_eq!(c.requirepass, None);
        assert_eq!(c.set(b"save", b"3600 1  300 100").ok(), Some(Param::Save));
        assert_eq!(c.save, "3600 1 300 100");
        assert_eq!(c.set(b"save", b"").ok(), Some(Param::Save));
        assert_eq!(c.save, "");
    }

    #[test]
    fn config_set_errors_use_redis_text() {
        let mut c = Config::default();
        let before = c.clone();
        for name in [
            "databases",
            "worker-threads",
            "daemonize",
            "logfile",
            "metrics-addr",
            "enable-debug-command",
        ] {
            assert_eq!(
                set_err(&mut c, name, "1"),
                format!("ERR CONFIG SET failed (possibly related to argument '{name}') - can't set immutable config")
            );
        }
        assert_eq!(
            set_err(&mut c, "DATABASES", "1"),
            "ERR CONFIG SET failed (possibly related to argument 'DATABASES') - can't set immutable config",
            "Redis echoes the name as sent"
        );
        assert_eq!(
            set_err(&mut c, "foo", "1"),
            "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"
        );
        assert_eq!(
            set_err(&mut c, "maxmemory", "lots"),
            "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value"
        );
        assert_eq!(
            set_err(&mut c, "Hz", "0"),
            "ERR CONFIG SET failed (possibly related to argument 'hz') - argument must be between 1 and 500 inclusive"
        );
        assert_eq!(
            set_err(&mut c, "maxmemory-samples", "65"),
            "ERR CONFIG SET failed (possibly related to argument 'maxmemory-samples') - argument must be between 1 and 64 inclusive"
        );
        assert_eq!(
            set_err(&mut c, "protected-mode", "1"),
            "ERR CONFIG SET failed (possibly related to argument 'protected-mode') - argument must be 'yes' or 'no'"
        );
        assert_eq!(
            set_err(&mut c, "maxmemory", "1 2"),
            "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value"
        );
        assert_eq!(
            c.set(b"requirepass", b"\xff").map_err(|e| e.to_string()),
            Err("ERR CONFIG SET failed (possibly related to argument 'requirepass') - argument must be valid UTF-8".to_owned())
        );
        assert_eq!(c, before, "failed sets change nothing");
    }

    #[test]
    fn config_set_many_is_all_or_nothing() {
        let mut c = Config::default();
        let changed = c
            .set_many(&[(b"maxmemory", b"1mb"), (b"hz", b"100")])
            .expect("valid");
        assert_eq!(changed, [Param::Maxmemory, Param::Hz]);
        assert_eq!((c.maxmemory_bytes, c.hz), (MB, 100));
        let before = c.clone();
        let err = c
            .set_many(&[(b"maxmemory", b"2mb"), (b"hz", b"0")])
            .expect_err("bad hz")
            .to_string();
        assert!(err.contains("'hz'"), "{err}");
        assert_eq!(c, before, "the valid maxmemory was rolled back");
        let err = c
            .set_many(&[(b"hz", b"5"), (b"HZ", b"6")])
            .expect_err("twice")
            .to_string();
        assert_eq!(
            err,
            "ERR CONFIG SET failed (possibly related to argument 'HZ') - duplicate parameter"
        );
        // Names are checked before values, and the first failure is reported.
        let err = c
            .set_many(&[(b"hz", b"0"), (b"databases", b"1"), (b"nosuch", b"1")])
            .expect_err("bad")
            .to_string();
        assert_eq!(err, "ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config");
        assert_eq!(c, before);
    }

    #[test]
    fn tls_parameters() {
        let c = Config::default();
        assert_eq!(c.tls, TlsConfig::default());
        assert_eq!(get1(&c, "tls-auth-clients"), "yes");
        let mut c = parse(&[
            "--tls-port",
            "6380",
            "--tls-cert-file",
            "/etc/ferrum/server.crt",
            "--tls-auth-clients",
            "OPTIONAL",
            "--tls-protocols",
            "TLSv1.3",
        ])
        .expect("valid");
        assert_eq!(c.tls.port, 6380);
        assert_eq!(
            c.tls.cert_file.as_deref(),
            Some(Path::new("/etc/ferrum/server.crt"))
        );
        assert_eq!(c.tls.auth_clients, "optional");
        assert_eq!(c.tls.protocol_versions(), [TlsProtocol::Tls1_3]);
        assert_eq!(
            set_err(&mut c, "tls-auth-clients", "maybe"),
            "ERR CONFIG SET failed (possibly related to argument 'tls-auth-clients') - \
             argument(s) must be one of the following: no, yes, optional"
        );
        assert_eq!(c.set(b"tls-cert-file", b"").ok(), Some(Param::TlsCertFile));
        assert_eq!(c.tls.cert_file, None);
        assert_eq!(get1(&c, "tls-cert-file"), "");
    }

    #[test]
    fn policy_names_are_the_eviction_crates() {
        let kinds: Vec<&str> = ferrum_store::PolicyKind::ALL
            .iter()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(MAXMEMORY_POLICIES, kinds.as_slice());
    }

    #[test]
    fn encoding_thresholds_and_their_ziplist_aliases() {
        let c = Config::default();
        assert_eq!(c.encoding, EncodingLimits::DEFAULT);
        assert_eq!(get1(&c, "hash-max-ziplist-entries"), "512");
        assert_eq!(get1(&c, "list-max-listpack-size"), "-2");
        // An alias answers under the name asked for; a glob lists both names.
        assert_eq!(
            c.get(b"HASH-MAX-ZIPLIST-VALUE"),
            [("hash-max-ziplist-value", "64".to_owned())]
        );
        let names: Vec<&str> = c.get(b"zset-max-*").into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            names,
            [
                "zset-max-listpack-entries",
                "zset-max-listpack-value",
                "zset-max-ziplist-entries",
                "zset-max-ziplist-value"
            ]
        );
        let mut c = parse(&[
            "--list-max-ziplist-size",
            "-5",
            "--zset-max-ziplist-entries",
            "7",
        ])
        .expect("aliases on the command line");
        assert_eq!(c.encoding.list_max_listpack_size, -5);
        assert_eq!(c.encoding.zset_max_listpack_entries, 7);
        let c2 = file("hash-max-ziplist-value 3\nset-max-intset-entries 9\n").expect("file");
        assert_eq!(c2.encoding.hash_max_listpack_value, 3);
        assert_eq!(c2.encoding.set_max_intset_entries, 9);
        assert_eq!(
            c.set(b"list-max-ziplist-size", b"100000")
                .expect("set alias"),
            Param::ListMaxListpackSize
        );
        assert_eq!(get1(&c, "list-max-listpack-size"), "100000");
        assert_eq!(
            set_err(&mut c, "list-max-ziplist-size", "-9999999999"),
            "ERR CONFIG SET failed (possibly related to argument 'list-max-listpack-size') - \
             argument must be between -2147483648 and 2147483647 inclusive"
        );
        assert_eq!(
            set_err(&mut c, "hash-max-ziplist-entries", "1k"),
            "ERR CONFIG SET failed (possibly related to argument 'hash-max-listpack-entries') - \
             argument couldn't be parsed into an integer"
        );
        assert!(set_err(&mut c, "list-compress-depth", "-1")
            .ends_with("between 0 and 2147483647 inclusive"));
        let dup = c.set_many(&[
            (b"hash-max-ziplist-value", b"1"),
            (b"hash-max-listpack-value", b"2"),
        ]);
        assert!(matches!(dup, Err(ConfigError::SetDuplicate { .. })));
    }
}
