//! Server commands: DBSIZE, FLUSHDB, FLUSHALL, SWAPDB, TIME, CONFIG,
//! COMMAND, DEBUG.

use std::sync::atomic::Ordering;

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::glob::glob_match;
use ferrum_store::{PolicyConfig, PolicyKind};

use super::category::SubcommandSpec;
use super::error::{
    CONFIG_NO_FILE, DEBUG_NOT_ALLOWED, MODULE_NOT_ALLOWED, SWAPDB_FIRST, SWAPDB_SECOND,
};
use super::parse::{int_arg, int_in_range, is};
use super::{
    category, flag, getkeys, lookup, CmdError, CmdResult, CommandSpec, Ctx, COMMANDS, SUBCOMMANDS,
};

pub(crate) fn dbsize(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let db = ctx.db();
    let ks = ctx.store().lock_all();
    Ok(Frame::Integer(ks.dbsize(db) as i64))
}

/// `FLUSHDB [ASYNC | SYNC]` / `FLUSHALL [ASYNC | SYNC]`: both modes free at
/// once, since freeing is cheap next to the network round trip.
fn flush(ctx: &mut Ctx<'_>, args: &[Bytes], all: bool) -> CmdResult {
    if let Some(mode) = args.get(1) {
        if args.len() > 2 || !(is(mode, "async") || is(mode, "sync")) {
            return Err(CmdError::syntax());
        }
    }
    let dbs = if all {
        // As in Redis, a background save in progress ends: the data it
        // is saving is gone.
        super::persist::abort_bgsave(ctx.shared);
        0..ctx.store().databases()
    } else {
        ctx.db()..ctx.db() + 1
    };
    // Each key removed is a change (`rdb_changes_since_last_save`), as
    // in Redis.
    ctx.dirty = Some(flush_dbs(ctx, dbs) as u64);
    // With save points, `FLUSHALL` saves the empty dataset at once, as
    // Redis does, so a restart does not bring the data back.
    if all
        && !ctx.shared.config().save_points().is_empty()
        && super::persist::save_now(ctx.shared).is_ok()
    {
        ctx.dirty = Some(0);
    }
    Ok(Frame::ok())
}

/// Empties every database, as `FLUSHALL` (`DEBUG RELOAD`).
pub(super) fn flush_all(ctx: &mut Ctx<'_>) {
    flush_dbs(ctx, 0..ctx.store().databases());
}

/// Empties databases `dbs`; returns how many keys they held.
fn flush_dbs(ctx: &mut Ctx<'_>, dbs: std::ops::Range<usize>) -> usize {
    let mut ks = ctx.store().lock_all();
    let mut removed = 0;
    for shard in ks.shards() {
        for db in dbs.clone() {
            removed += shard.flush_db(db);
        }
    }
    drop(ks);
    // Blocked stream-group readers answer that their key is gone.
    for db in dbs {
        for key in ctx.shared.blocking.keys_in(db) {
            super::wake_key(ctx, db, &key);
        }
    }
    removed
}

pub(crate) fn flushdb(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    flush(ctx, args, false)
}

pub(crate) fn flushall(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    flush(ctx, args, true)
}

pub(crate) fn swapdb(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if ctx.shared.cluster.is_some() {
        return Err(CmdError::msg(super::error::cluster::SWAPDB));
    }
    let index = |b, msg| int_in_range(b, i32::MIN.into(), i32::MAX.into(), Some(msg));
    let a = index(&args[1], SWAPDB_FIRST)?;
    let b = index(&args[2], SWAPDB_SECOND)?;
    let n = ctx.store().databases() as i64;
    if !(0..n).contains(&a) || !(0..n).contains(&b) {
        return Err(CmdError::msg(super::error::DB_RANGE));
    }
    let mut ks = ctx.store().lock_all();
    for shard in ks.shards() {
        shard.swap_db(a as usize, b as usize);
    }
    drop(ks);
    // Either database may now hold data for clients blocked on the other.
    for db in [a as usize, b as usize] {
        for key in ctx.shared.blocking.keys_in(db) {
            super::wake_key(ctx, db, &key);
        }
    }
    Ok(Frame::ok())
}

pub(crate) fn time(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let us = ctx.shared.clock.now_micros();
    let num = |n: u64| {
        Frame::Bulk(Bytes::copy_from_slice(
            itoa::Buffer::new().format(n).as_bytes(),
        ))
    };
    Ok(Frame::Array(vec![num(us / 1_000_000), num(us % 1_000_000)]))
}

/// `CONFIG GET pattern [pattern ...] | SET name value [name value ...] |
/// RESETSTAT | REWRITE | HELP`
pub(crate) fn config(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let sub = &args[1];
    let sub_arity = |ok: bool, name: &str| {
        if ok {
            Ok(())
        } else {
            Err(CmdError::subcommand_arity("config", name))
        }
    };
    if is(sub, "get") {
        sub_arity(args.len() >= 3, "get")?;
        let config = ctx.shared.config();
        let patterns: Vec<&[u8]> = args[2..].iter().map(|p| &p[..]).collect();
        let pairs = config
            .get_many(&patterns)
            .into_iter()
            .map(|(k, v)| (Frame::bulk(k), Frame::bulk(v)))
            .collect();
        Ok(Frame::Map(pairs))
    } else if is(sub, "set") {
        sub_arity(args.len() >= 4 && args.len() % 2 == 0, "set")?;
        config_set(ctx, &args[2..])
    } else if is(sub, "resetstat") {
        sub_arity(args.len() == 2, "resetstat")?;
        config_resetstat(ctx.shared);
        Ok(Frame::ok())
    } else if is(sub, "rewrite") {
        sub_arity(args.len() == 2, "rewrite")?;
        config_rewrite(ctx, false, super::error::config_rewrite_failed)
    } else if is(sub, "help") {
        super::help_reply(&[
            "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "GET <pattern>",
            "    Return parameters matching the glob-like <pattern> and their values.",
            "SET <directive> <value>",
            "    Set the configuration <directive> to <value>.",
            "RESETSTAT",
            "    Reset statistics reported by the INFO command.",
            "REWRITE",
            "    Rewrite the configuration file.",
            "HELP",
            "    Print this help.",
        ])
    } else {
        Err(CmdError::unknown_subcommand("CONFIG", sub))
    }
}

/// `CONFIG RESETSTAT`: zeroes what Redis 7.0's `resetServerStats`,
/// `resetCommandTableStats` and `resetErrorTableStats` zero, of what
/// FerrumKV counts: INFO stats' connections, commands, network bytes,
/// rejected connections, hits, misses, expired and evicted keys, evicted
/// clients, error replies and lazily freed objects; `INFO commandstats`,
/// `errorstats` and `latencystats` (subcommands' histograms included).
/// As in Redis, the slow log, the latency monitor's events, `ACL LOG` and
/// `rdb_changes_since_last_save` stay; so do the AHE controller's
/// counters in `INFO ahe`, which are its learning state, not statistics.
fn config_resetstat(shared: &crate::shared::Shared) {
    shared.store.reset_stats();
    shared.stats.reset();
    shared.latency.reset_histograms();
    shared.lazyfree.reset();
    shared.evict_clients.reset();
}

/// Rewrites the configuration file the server started from for the
/// current configuration and users (`CONFIG REWRITE`, or with
/// `force_all` `DEBUG CONFIG-REWRITE-FORCE-ALL`).
///
/// # Errors
///
/// [`CONFIG_NO_FILE`] without a configuration file; else `failed` of the
/// system's reason the file could not be rewritten (Redis quotes
/// `strerror`).
fn config_rewrite(ctx: &Ctx<'_>, force_all: bool, failed: fn(&str) -> String) -> CmdResult {
    let config = ctx.shared.config().clone();
    let Some(path) = &config.config_file else {
        return Err(CmdError::msg(CONFIG_NO_FILE));
    };
    // With an ACL file the users live there, and no `user` line stays.
    let users = crate::acl::acl_file_path(&config)
        .is_none()
        .then(|| ctx.shared.acl.list());
    match crate::config::rewrite_file(path, &config, users.as_deref(), force_all) {
        Ok(()) => {
            tracing::warn!("CONFIG REWRITE executed with success.");
            Ok(Frame::ok())
        }
        Err(e) => {
            let reason = crate::config::strerror(&e);
            tracing::warn!("CONFIG REWRITE failed: {reason}");
            Err(CmdError::msg(failed(&reason)))
        }
    }
}

/// Applies `CONFIG SET` pairs all-or-nothing, then tells the store about the
/// parameters it depends on.
fn config_set(ctx: &mut Ctx<'_>, pairs: &[Bytes]) -> CmdResult {
    let shared = ctx.shared;
    let mut config = shared.config.write().unwrap_or_else(|p| p.into_inner());
    let mut staged = config.clone();
    let pairs: Vec<(&[u8], &[u8])> = pairs
        .chunks_exact(2)
        .map(|kv| (&kv[0][..], &kv[1][..]))
        .collect();
    let password_set = pairs
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case(b"requirepass"));
    // Before any other error, as Redis: clients may retry on `-LOADING`.
    if shared.persistence.loading.active()
        && pairs
            .iter()
            .any(|(k, _)| crate::Config::denied_while_loading(k))
    {
        return Err(CmdError::msg(super::error::LOADING));
    }
    // All or nothing, as Redis 7: the error text is the whole reply.
    let protected_allowed = config
        .protected_configs()
        .permits(ctx.conn.handle.addr.ip());
    staged
        .set_many_as(&pairs, protected_allowed)
        .map_err(|e| CmdError::msg(e.to_string()))?;
    if staged.tls != config.tls {
        reload_tls(shared, &staged, &pairs)?;
    }
    rebind(shared, &config, &staged)?;
    let policy_changed = staged.maxmemory_policy != config.maxmemory_policy
        || staged.maxmemory_samples != config.maxmemory_samples
        || staged.lfu_log_factor != config.lfu_log_factor
        || staged.lfu_decay_time_minutes != config.lfu_decay_time_minutes;
    *config = staged;
    shared
        .slowlog
        .threshold_usec
        .store(config.slowlog_log_slower_than, Ordering::Relaxed);
    shared
        .slowlog
        .max_len
        .store(config.slowlog_max_len, Ordering::Relaxed);
    shared.slowlog.trim();
    let (maxmemory, policy) = (config.maxmemory_bytes, policy_of(&config));
    config.encoding.install();
    crate::logging::set_level(config.loglevel);
    if password_set {
        shared
            .acl
            .set_default_password(config.requirepass.as_deref());
    }
    let good = |lag| shared.repl.good_replicas(lag);
    shared
        .lacks_good_replicas
        .store(config.lacks_good_replicas(good), Ordering::Relaxed);
    shared
        .normal_obuf
        .install(config.client_output_buffer_limit.normal);
    shared
        .notify
        .install(config.stored_value("notify-keyspace-events"));
    ctx.shared
        .latency
        .threshold_ms
        .store(config.latency_threshold_ms(), Ordering::Relaxed);
    let tracking_max = config.tracking_max_keys();
    shared
        .evict_clients
        .set_limit(config.maxmemory_clients_bytes());
    if let Some(cluster) = &shared.cluster {
        let before = cluster.generation();
        cluster.set_full_coverage(config.stored_value("cluster-require-full-coverage") == "yes");
        cluster.set_when_down(
            config.cluster_reads_when_down(),
            config.cluster_pubsubshard_when_down(),
        );
        cluster.set_endpoint_type(config.stored_value("cluster-preferred-endpoint-type"));
        cluster.set_hostname(config.stored_value("cluster-announce-hostname"));
        // Full coverage turned on may bring the cluster down for blocked
        // clients.
        if cluster.generation() != before {
            shared.blocking.wake_all();
        }
    }
    drop(config);
    shared.evict_clients.enforce(&shared.store, &shared.clients);
    shared.tracking.set_max_keys(shared, tracking_max);
    if policy_changed {
        let (kind, pc) = policy;
        shared.store.set_policy(kind, pc);
    }
    shared.store.set_maxmemory_bytes(maxmemory);
    // Inside a transaction, eviction waits for its end, as in Redis.
    if !ctx.in_exec {
        super::notify::enforce_maxmemory(shared, ctx.now);
    }
    Ok(Frame::ok())
}

/// Replaces the sockets whose `bind`, `port` or `tls-port` a `CONFIG SET`
/// changes, as Redis's apply functions do (`bind` rebinds both ports). On
/// failure the old sockets are bound again, the error names the parameter,
/// the log says why, and nothing of the `CONFIG SET` applies.
fn rebind(
    shared: &crate::shared::Shared,
    old: &crate::config::Config,
    new: &crate::config::Config,
) -> Result<(), CmdError> {
    use crate::listen::Family;
    let bind_changed = old.bind != new.bind;
    let plain = bind_changed || old.port != new.port;
    let tls = (bind_changed && new.tls.port != 0) || old.tls.port != new.tls.port;
    let backlog = new.tcp_backlog();
    let failed = |name: &str, e: std::io::Error| {
        tracing::warn!("CONFIG SET {name}: could not listen: {e}");
        CmdError::msg(if bind_changed {
            super::error::bind_failed()
        } else {
            super::error::listen_failed(name)
        })
    };
    if tls && new.tls.port != 0 && shared.tls.is_none() {
        tracing::warn!(
            "CONFIG SET tls-port: TLS was not configured at start-up (start with tls-port set)"
        );
        return Err(CmdError::msg(super::error::tls_reload_failed("tls-port")));
    }
    if plain {
        shared
            .listeners
            .rebind(Family::Plain, &new.bind, new.port, backlog)
            .map_err(|e| failed("port", e))?;
    }
    if tls {
        if let Err(e) = shared
            .listeners
            .rebind(Family::Tls, &new.bind, new.tls.port, backlog)
        {
            if plain {
                // Best effort, as Redis's rollback: the log names a failure.
                let _ = shared
                    .listeners
                    .rebind(Family::Plain, &old.bind, old.port, backlog);
            }
            return Err(failed("tls-port", e));
        }
    }
    Ok(())
}

/// Loads the `tls-*` files of a `CONFIG SET` for the handshakes to come,
/// as Redis does, when TLS is on; on failure nothing changes and the log
/// says why.
fn reload_tls(
    shared: &crate::shared::Shared,
    staged: &crate::config::Config,
    pairs: &[(&[u8], &[u8])],
) -> Result<(), CmdError> {
    let Some(tls) = &shared.tls else {
        return Ok(());
    };
    tls.reload(&staged.tls).map_err(|e| {
        tracing::warn!("Failed to update TLS configuration: {e}");
        let name = pairs
            .iter()
            .map(|(name, _)| String::from_utf8_lossy(name).to_ascii_lowercase())
            .find(|name| name.starts_with("tls-"))
            .unwrap_or_default();
        CmdError::msg(super::error::tls_reload_failed(&name))
    })
}

/// The store's policy settings from the configuration.
pub(crate) fn policy_of(config: &crate::config::Config) -> (PolicyKind, PolicyConfig) {
    let kind = config.maxmemory_policy;
    let pc = PolicyConfig {
        samples: config.maxmemory_samples,
        lfu_log_factor: config.lfu_log_factor.min(255) as u8,
        lfu_decay_time_minutes: config.lfu_decay_time_minutes,
        ..PolicyConfig::default()
    };
    (kind, pc)
}

/// What `COMMAND INFO` and `COMMAND DOCS` name: a command's row, or a
/// subcommand's (`config|get`, any case), as in Redis 7.
#[derive(Clone, Copy)]
enum Named {
    Command(&'static CommandSpec),
    Sub(&'static SubcommandSpec),
}

fn named(name: &[u8]) -> Option<Named> {
    if let Some(c) = lookup(name) {
        return Some(Named::Command(c));
    }
    SUBCOMMANDS
        .iter()
        .find(|s| s.full_name.as_bytes().eq_ignore_ascii_case(name))
        .map(Named::Sub)
}

/// `flags` by name, in Redis's order, with `movablekeys` in its place.
fn flag_names(flags: u32, movable: bool) -> Vec<Frame> {
    let (busy, busy_name) = flag::AFTER_MOVABLE;
    let named = flag::NAMES.iter().filter(|(bit, _)| flags & bit != 0);
    let names = named.map(|(_, name)| *name);
    let names = names.chain(movable.then_some("movablekeys"));
    let names = names.chain((flags & busy != 0).then_some(busy_name));
    names.map(Frame::simple).collect()
}

/// The fields of a `COMMAND INFO` entry, in Redis 7's ten-element shape.
struct InfoEntry {
    name: &'static str,
    arity: i32,
    flags: Vec<Frame>,
    keys: (i32, i32, i32),
    categories: u32,
    tips: &'static [&'static str],
    key_specs: Vec<Frame>,
    subcommands: Vec<Frame>,
}

impl InfoEntry {
    fn frame(self) -> Frame {
        Frame::Array(vec![
            Frame::bulk(self.name),
            Frame::Integer(i64::from(self.arity)),
            Frame::Set(self.flags),
            Frame::Integer(i64::from(self.keys.0)),
            Frame::Integer(i64::from(self.keys.1)),
            Frame::Integer(i64::from(self.keys.2)),
            Frame::Set(
                category::names_of(self.categories)
                    .map(Frame::bulk)
                    .collect(),
            ),
            Frame::Set(self.tips.iter().map(|t| Frame::bulk(*t)).collect()),
            Frame::Set(self.key_specs),
            Frame::Array(self.subcommands),
        ])
    }
}

/// One command's `COMMAND INFO` entry, its subcommands' entries last.
fn command_info(c: &'static CommandSpec) -> Frame {
    // Commands whose keys the first/last/step triple cannot describe are
    // `movablekeys`.
    let flags = flag_names(c.flags, MOVABLE_KEYS.contains(&c.name));
    // Only MIGRATE states its tips and key specs so far.
    let (tips, key_specs) = if c.name == "migrate" {
        (super::migrate::TIPS, super::migrate::key_specs())
    } else {
        (&[][..], Vec::new())
    };
    InfoEntry {
        name: c.name,
        arity: c.arity,
        flags,
        keys: (c.first_key, c.last_key, c.step),
        categories: c.categories,
        tips,
        key_specs,
        subcommands: category::subcommands_of(c)
            .map(|(_, s)| subcommand_info(s))
            .collect(),
    }
    .frame()
}

fn subcommand_info(s: &'static SubcommandSpec) -> Frame {
    InfoEntry {
        name: s.full_name,
        arity: s.arity,
        flags: flag_names(s.flags, false),
        keys: s.keys,
        categories: s.categories,
        tips: &[],
        key_specs: Vec::new(),
        subcommands: Vec::new(),
    }
    .frame()
}

fn command_docs(c: &'static CommandSpec) -> Frame {
    let mut docs = vec![
        (Frame::bulk("summary"), Frame::bulk(c.summary)),
        (Frame::bulk("since"), Frame::bulk("1.0.0")),
        (Frame::bulk("group"), Frame::bulk(c.group)),
    ];
    let subs: Vec<(Frame, Frame)> = category::subcommands_of(c)
        .map(|(_, s)| (Frame::bulk(s.full_name), subcommand_docs(s, c.group)))
        .collect();
    if !subs.is_empty() {
        docs.push((Frame::bulk("subcommands"), Frame::Map(subs)));
    }
    Frame::Map(docs)
}

fn subcommand_docs(s: &SubcommandSpec, group: &'static str) -> Frame {
    Frame::Map(vec![
        (Frame::bulk("summary"), Frame::bulk(s.summary)),
        (Frame::bulk("since"), Frame::bulk(s.since)),
        (Frame::bulk("group"), Frame::bulk(group)),
    ])
}

/// `COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern]`
/// Commands with a key count among their arguments (`ZUNIONSTORE dst
/// numkeys ...`), flagged `movablekeys` as Redis does.
const MOVABLE_KEYS: &[&str] = &[
    "zunionstore",
    "zinterstore",
    "zdiffstore",
    "zunion",
    "zinter",
    "zdiff",
    "zintercard",
    "sintercard",
    "lmpop",
    "blmpop",
    "zmpop",
    "bzmpop",
    "xread",
    "xreadgroup",
    "sort",
    "sort_ro",
    "georadius",
    "georadiusbymember",
    "migrate",
    "eval",
    "evalsha",
    "eval_ro",
    "evalsha_ro",
    "fcall",
    "fcall_ro",
];

/// Every command with its subcommands after it: `(name, row)`.
fn commands_and_subcommands() -> Vec<(String, u32)> {
    let mut out = Vec::new();
    for c in COMMANDS {
        out.push((c.name.to_owned(), c.categories));
        out.extend(
            category::subcommands_of(c).map(|(_, s)| (s.full_name.to_owned(), s.categories)),
        );
    }
    out
}

fn command_list(args: &[Bytes]) -> CmdResult {
    let names = commands_and_subcommands();
    let bulks =
        |v: Vec<(String, u32)>| Frame::Array(v.into_iter().map(|(n, _)| Frame::bulk(n)).collect());
    match args {
        [] => Ok(bulks(names)),
        [by, kind, value] if is(by, "filterby") => {
            if is(kind, "pattern") {
                let keep = names
                    .into_iter()
                    .filter(|(n, _)| glob_match(value, n.as_bytes(), true))
                    .collect();
                Ok(bulks(keep))
            } else if is(kind, "aclcat") {
                let want = category::by_name(value).unwrap_or(0);
                let keep = names
                    .into_iter()
                    .filter(|(_, cats)| cats & want != 0)
                    .collect();
                Ok(bulks(keep))
            } else if is(kind, "module") {
                Ok(Frame::Array(Vec::new()))
            } else {
                Err(CmdError::syntax())
            }
        }
        _ => Err(CmdError::syntax()),
    }
}

/// `COMMAND GETKEYS full-command` (each key) and `COMMAND GETKEYSANDFLAGS
/// full-command` (each key with its flags), for `line`, the full command.
fn command_getkeys(line: &[Bytes], with_flags: bool) -> CmdResult {
    let invalid = || CmdError::msg(super::error::GETKEYS_INVALID);
    let spec = line
        .first()
        .and_then(|n| lookup(n))
        .filter(|spec| spec.arity_ok(line.len()))
        .ok_or_else(invalid)?;
    let keys = getkeys::command_keys(spec, line).ok_or_else(invalid)?;
    if keys.is_empty() && !getkeys::keys_optional(spec) {
        return Err(CmdError::msg(super::error::GETKEYS_NONE));
    }
    let entry = |(key, role): (Bytes, getkeys::KeyRole)| {
        if !with_flags {
            return Frame::Bulk(key);
        }
        let flags = role.flags().iter().copied().map(Frame::simple).collect();
        Frame::Array(vec![Frame::Bulk(key), Frame::Set(flags)])
    };
    Ok(Frame::Array(keys.into_iter().map(entry).collect()))
}

/// `COMMAND [COUNT | INFO [name ...] | DOCS [name ...] | LIST | HELP]`
pub(crate) fn command(_ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let Some(sub) = args.get(1) else {
        return Ok(Frame::Array(COMMANDS.iter().map(command_info).collect()));
    };
    if is(sub, "count") {
        Ok(Frame::Integer(COMMANDS.len() as i64))
    } else if is(sub, "list") {
        command_list(&args[2..])
    } else if is(sub, "info") {
        if args.len() == 2 {
            return Ok(Frame::Array(COMMANDS.iter().map(command_info).collect()));
        }
        Ok(Frame::Array(
            args[2..]
                .iter()
                .map(|n| match named(n) {
                    Some(Named::Command(c)) => command_info(c),
                    Some(Named::Sub(s)) => subcommand_info(s),
                    None => Frame::NullArray,
                })
                .collect(),
        ))
    } else if is(sub, "docs") {
        let specs: Vec<Named> = if args.len() == 2 {
            COMMANDS.iter().map(Named::Command).collect()
        } else {
            args[2..].iter().filter_map(|n| named(n)).collect()
        };
        Ok(Frame::Map(
            specs
                .into_iter()
                .map(|n| match n {
                    Named::Command(c) => (Frame::bulk(c.name), command_docs(c)),
                    Named::Sub(s) => {
                        let group = lookup(s.container().as_bytes()).map_or("", |c| c.group);
                        (Frame::bulk(s.full_name), subcommand_docs(s, group))
                    }
                })
                .collect(),
        ))
    } else if is(sub, "getkeys") || is(sub, "getkeysandflags") {
        command_getkeys(&args[2..], is(sub, "getkeysandflags"))
    } else if is(sub, "help") {
        super::help_reply(&[
            "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "(no subcommand)",
            "    Return details about all commands.",
            "COUNT",
            "    Return the total number of commands in this server.",
            "LIST",
            "    Return a list of all commands in this server.",
            "INFO [<command-name> ...]",
            "    Return details about multiple commands.",
            "DOCS [<command-name> ...]",
            "    Return documentation details about multiple commands.",
            "GETKEYS <full-command>",
            "    Return the keys from a full Redis command.",
            "GETKEYSANDFLAGS <full-command>",
            "    Return the keys and the access flags from a full Redis command.",
            "HELP",
            "    Print this help.",
        ])
    } else {
        Err(CmdError::unknown_subcommand("COMMAND", sub))
    }
}

const MODULE_HELP: &[&str] = &[
    "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LIST",
    "    Return a list of loaded modules.",
    "LOAD <path> [<arg> ...]",
    "    Load a module library from <path>, passing to it any optional arguments.",
    "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
    "    Load a module library from <path>, while passing it module configurations and optional arguments.",
    "UNLOAD <name>",
    "    Unload a module.",
    "HELP",
    "    Prints this help.",
];

/// `MODULE`: FerrumKV loads no Redis modules (they are C libraries built
/// against Redis's own module API), so `LIST` is empty, and `LOAD` and
/// `LOADEX` fail as a module that cannot load fails in Redis, with the
/// reason in the log; `UNLOAD` finds no module. Who may try is
/// `enable-module-command`'s, as in Redis. The subcommands' arities are
/// checked before this runs (their rows).
pub(crate) fn module(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let sub = &args[1];
    if is(sub, "help") {
        return Ok(Frame::Array(
            MODULE_HELP
                .iter()
                .map(|l| Frame::Simple(Bytes::from_static(l.as_bytes())))
                .collect(),
        ));
    }
    if is(sub, "list") {
        return Ok(Frame::Array(Vec::new()));
    }
    let loads = is(sub, "load") || is(sub, "loadex");
    if !loads && !is(sub, "unload") {
        return Err(CmdError::unknown_subcommand("MODULE", sub));
    }
    if !ctx.shared.module_command.permits(ctx.conn.handle.addr.ip()) {
        return Err(CmdError::msg(MODULE_NOT_ALLOWED));
    }
    if loads {
        tracing::warn!(
            "Module {} failed to load: FerrumKV does not load Redis modules",
            String::from_utf8_lossy(&args[2])
        );
        return Err(CmdError::msg(
            "ERR Error loading the extension. Please check the server logs.",
        ));
    }
    Err(CmdError::msg(
        "ERR Error unloading module: no such module with that name",
    ))
}

/// `DEBUG ADVANCE-CLOCK ms` moves the server's clock forward, so tests can
/// cross TTLs without sleeping. Refused unless `enable-debug-command` is set.
pub(crate) fn debug(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if !ctx.shared.debug_command.permits(ctx.conn.handle.addr.ip()) {
        return Err(CmdError::msg(DEBUG_NOT_ALLOWED));
    }
    let sub = &args[1];
    if is(sub, "advance-clock") && args.len() == 3 {
        let ms = int_arg(&args[2])?;
        let ms = u64::try_from(ms).map_err(|_| CmdError::msg(super::error::NOT_INTEGER))?;
        ctx.shared.clock.advance(ms);
        Ok(Frame::ok())
    } else if is(sub, "sleep") && args.len() == 3 {
        // As in Redis, the command itself takes that long, and every other
        // command waits: it holds the transaction gate's write side
        // (`gate::enter_gate`).
        let secs = super::parse::float_arg(&args[2])?;
        if secs > 0.0 {
            std::thread::sleep(std::time::Duration::from_secs_f64(secs.min(3600.0)));
        }
        Ok(Frame::ok())
    } else if is(sub, "log") && args.len() == 3 {
        // A marker in the log, for tests that read it (Redis's words).
        tracing::warn!("DEBUG LOG: {}", String::from_utf8_lossy(&args[2]));
        Ok(Frame::ok())
    } else if is(sub, "set-active-expire") && args.len() == 3 {
        let on = int_arg(&args[2])? != 0;
        ctx.shared.active_expire.store(on, Ordering::Relaxed);
        Ok(Frame::ok())
    } else if is(sub, "pause-cron") && args.len() == 3 {
        let paused = int_arg(&args[2])? != 0;
        ctx.shared.cron_paused.store(paused, Ordering::Relaxed);
        Ok(Frame::ok())
    } else if is(sub, "expire-cycle") && args.len() == 2 {
        let n = ctx.store().expire_cycle(ctx.shared.clock.now(), usize::MAX);
        Ok(Frame::Integer(n as i64))
    } else if is(sub, "digest") && args.len() == 2 {
        super::digest::dataset(ctx)
    } else if is(sub, "digest-value") {
        super::digest::values(ctx, &args[2..])
    } else if is(sub, "populate") && (3..=5).contains(&args.len()) {
        debug_populate(ctx, &args[2..])
    } else if is(sub, "set-skip-checksum-validation") && args.len() == 3 {
        let skip = int_arg(&args[2])? != 0;
        ctx.shared.skip_checksum.store(skip, Ordering::Relaxed);
        Ok(Frame::ok())
    } else if is(sub, "quicklist-packed-threshold") && args.len() == 3 {
        // From this size on, a list element gets a node of its own.
        let size = std::str::from_utf8(&args[2])
            .ok()
            .and_then(crate::config::parse_memory);
        if !size.is_some_and(ferrum_store::types::set_list_packed_threshold) {
            return Err(CmdError::msg(
                "ERR argument must be a memory value bigger than 1 and smaller than 4gb",
            ));
        }
        Ok(Frame::ok())
    } else if is(sub, "reload") {
        super::persist::debug_reload(ctx, &args[2..])
    } else if is(sub, "object") && args.len() == 3 {
        debug_object(ctx, &args[2])
    } else if is(sub, "config-rewrite-force-all") && args.len() == 2 {
        config_rewrite(ctx, true, super::error::debug_rewrite_failed)
    } else if is(sub, "protocol") && args.len() == 3 {
        debug_protocol(&args[2])
    } else if is(sub, "help") && args.len() == 2 {
        super::help_reply(DEBUG_HELP)
    } else {
        Err(CmdError::unknown_subcommand("DEBUG", sub))
    }
}

/// `DEBUG PROTOCOL type`: a sample reply of each RESP3 type, as Redis's,
/// for clients to test their parsers with (written down to RESP2 for a
/// RESP2 client). `push` is not among them: a reply here is one frame.
fn debug_protocol(name: &[u8]) -> CmdResult {
    let ints = || (0..3).map(Frame::Integer).collect::<Vec<_>>();
    Ok(match name.to_ascii_lowercase().as_slice() {
        b"string" => Frame::bulk("Hello World"),
        b"integer" => Frame::Integer(12345),
        // Redis's sample value, which is not meant as pi.
        #[allow(clippy::approx_constant)]
        b"double" => Frame::Double(3.141),
        b"bignum" => Frame::BigNumber(Bytes::from_static(b"1234567999999999999999999999999999999")),
        b"null" => Frame::Null,
        b"array" => Frame::Array(ints()),
        b"set" => Frame::Set(ints()),
        b"map" => Frame::Map(
            (0..3)
                .map(|j| (Frame::Integer(j), Frame::Boolean(j == 1)))
                .collect(),
        ),
        b"attrib" => Frame::Attributed {
            attrs: vec![(
                Frame::bulk("key-popularity"),
                Frame::Array(vec![Frame::bulk("key:123"), Frame::Integer(90)]),
            )],
            reply: Box::new(Frame::bulk("Some real reply following the attribute")),
        },
        b"verbatim" => Frame::Verbatim {
            format: *b"txt",
            text: Bytes::from_static(b"This is a verbatim\nstring"),
        },
        b"true" => Frame::Boolean(true),
        b"false" => Frame::Boolean(false),
        _ => {
            return Err(CmdError::msg(
                "ERR Wrong protocol type name. Please use one of the following: \
                 string|integer|double|bignum|null|array|set|map|attrib|verbatim|true|false",
            ))
        }
    })
}

/// `DEBUG HELP`: the subcommands above, in Redis's words where Redis has
/// them.
const DEBUG_HELP: &[&str] = &[
    "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ADVANCE-CLOCK <milliseconds>",
    "    Move the server's clock forward (FerrumKV's; TTLs expire as if that time passed).",
    "CONFIG-REWRITE-FORCE-ALL",
    "    Like CONFIG REWRITE but writes all configuration options, including",
    "    keywords not listed in original configuration file or default values.",
    "DIGEST",
    "    Output a hex signature representing the current DB content.",
    "DIGEST-VALUE <key> [<key> ...]",
    "    Output a hex signature of the values of all the specified keys.",
    "EXPIRE-CYCLE",
    "    Run one active expiry cycle over every key now (FerrumKV's).",
    "LOG <message>",
    "    Write <message> to the server log.",
    "OBJECT <key>",
    "    Show low level info about the <key> and associated value.",
    "POPULATE <count> [<prefix>] [<size>]",
    "    Create <count> string keys named key:<num>. If <prefix> is specified then",
    "    it is used instead of the 'key' prefix.",
    "PROTOCOL <type>",
    "    Reply with a test value of the specified type. <type> can be: string,",
    "    integer, double, bignum, null, array, set, map, attrib, verbatim, true, false.",
    "QUICKLIST-PACKED-THRESHOLD <size>",
    "    Sets the threshold for elements to be inserted as plain vs packed nodes",
    "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
    "RELOAD [option value] ...",
    "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
    "    * MERGE: conflicting keys will be loaded from RDB.",
    "    * NOFLUSH: the existing database will not be removed before load, but",
    "      conflicting keys make the reload fail.",
    "    * NOSAVE: the database will be loaded from an existing RDB file.",
    "    Examples:",
    "    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
    "      the database.",
    "    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
    "      existing RDB file.",
    "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
    "      file to the database.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys in background when they are not",
    "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
    "    default.",
    "SET-SKIP-CHECKSUM-VALIDATION <0|1>",
    "    Enables or disables checksum checks for RDB files and RESTORE's payload.",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
    "PAUSE-CRON <0|1>",
    "    Stop periodic cron job processing.",
];

/// `DEBUG POPULATE count [prefix] [size]`: creates `prefix:0` ..
/// `prefix:<count-1>` (prefix `key`) in the current database, skipping
/// keys that exist, with the values `value:N`, or, given a size, that
/// text cut or padded with zero bytes to `size` bytes, as in Redis.
fn debug_populate(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let positive = |b: &Bytes| {
        int_arg(b).and_then(|n| {
            u64::try_from(n).map_err(|_| CmdError::msg(super::error::MUST_BE_POSITIVE))
        })
    };
    let count = positive(&args[0])?;
    let size = args.get(2).map(positive).transpose()?.unwrap_or(0) as usize;
    let prefix: &[u8] = args.get(1).map_or(b"key", |p| &p[..]);
    let (db, now) = (ctx.db(), ctx.now);
    let mut key = Vec::new();
    let mut value = Vec::new();
    for j in 0..count {
        key.clear();
        key.extend_from_slice(prefix);
        key.push(b':');
        key.extend_from_slice(itoa::Buffer::new().format(j).as_bytes());
        let mut ks = ctx.store().lock_key(&key);
        let shard = ks.shard(&key);
        if shard
            .lookup(db, &key, now, ferrum_store::Access::Write)
            .is_some()
        {
            continue;
        }
        value.clear();
        value.extend_from_slice(b"value:");
        value.extend_from_slice(itoa::Buffer::new().format(j).as_bytes());
        if size != 0 {
            value.resize(size, 0);
        }
        shard.insert_str(db, &key, &value, None, now);
    }
    Ok(Frame::ok())
}

/// `DEBUG OBJECT key`: Redis's one-line description of a value. Nothing
/// here has an address or a serialized form, so both read 0.
fn debug_object(ctx: &Ctx<'_>, key: &[u8]) -> CmdResult {
    let (db, now) = (ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let entry = ks
        .shard(key)
        .lookup(db, key, now, ferrum_store::Access::ReadNoTouch);
    let e = entry.ok_or_else(|| CmdError::msg(super::error::NO_SUCH_KEY))?;
    let idle = (now.0 / 1000).saturating_sub(e.last_access().0 / 1000);
    let line = format!(
        "Value at:0x0 refcount:1 encoding:{} serializedlength:0 lru:0 lru_seconds_idle:{idle}",
        e.encoding()
    );
    Ok(Frame::Simple(Bytes::from(line)))
}

/// `SHUTDOWN [NOSAVE | SAVE] [NOW] [FORCE] [ABORT]`: stops the server as
/// SIGTERM does, saving first with `SAVE`, or without `NOSAVE` when save
/// points are set; a failed save keeps the server up unless `FORCE`.
/// Unless `NOW`, lagging replicas get up to `shutdown-timeout` seconds to
/// catch up first (there is no `ABORT` of that wait). While a script is busy only `SHUTDOWN NOSAVE` is served, as in
/// Redis; it stops the script even if it wrote.
pub(crate) fn shutdown(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (mut save, mut nosave, mut force, mut now) = (false, false, false, false);
    for a in &args[1..] {
        if is(a, "save") {
            save = true;
        } else if is(a, "nosave") {
            nosave = true;
        } else if is(a, "force") {
            force = true;
        } else if is(a, "abort") {
            return Err(CmdError::msg(super::error::SHUTDOWN_NOT_IN_PROGRESS));
        } else if is(a, "now") {
            now = true;
        } else {
            return Err(CmdError::syntax());
        }
    }
    if !nosave {
        if let Some(busy) = super::gate::busy_text(ctx.shared) {
            return Err(CmdError::msg(busy));
        }
    }
    // Lagging replicas catch up first, unless NOW (or a busy script's
    // SHUTDOWN NOSAVE, which must not wait).
    if !now && !ctx.in_exec && !ctx.in_script {
        ctx.shared.wait_for_replicas();
    }
    if !super::persist::save_for_shutdown(ctx.shared, save, nosave) && !force {
        return Err(CmdError::msg(super::error::SHUTDOWN_FAILED));
    }
    tracing::warn!("User requested shutdown...");
    ctx.shared.shutdown_request.cancel();
    ctx.conn.closing = true;
    Ok(Frame::ok())
}

/// `BGREWRITEAOF`: refused with a clear error (snapshots are RDB only).
/// It is in the table so that `MULTI` queues it as Redis does (an unknown
/// command inside `MULTI` would leave the transaction open for a client
/// that stops at the error), and a client is told why rather than
/// "unknown command".
pub(crate) fn bgrewriteaof(_ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Err(CmdError::msg(super::error::NO_AOF))
}

/// `ROLE`: always a master with no replicas.
pub(crate) fn role(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    let repl = &ctx.shared.repl;
    if let Some(f) = repl.following() {
        use crate::replication::LinkStatus;
        let state = match f.status() {
            LinkStatus::Connect => "connect",
            LinkStatus::Connecting => "connecting",
            LinkStatus::Sync => "sync",
            LinkStatus::Connected => "connected",
        };
        return Ok(Frame::Array(vec![
            Frame::bulk("slave"),
            Frame::Bulk(Bytes::from(f.host.clone())),
            Frame::Integer(i64::from(f.port)),
            Frame::bulk(state),
            Frame::Integer(f.offset() as i64),
        ]));
    }
    let replicas = repl
        .replicas()
        .into_iter()
        .map(|(ip, port, offset)| {
            Frame::Array(vec![
                Frame::Bulk(Bytes::from(ip)),
                Frame::Bulk(Bytes::from(port)),
                Frame::Bulk(Bytes::from(offset.to_string())),
            ])
        })
        .collect();
    Ok(Frame::Array(vec![
        Frame::bulk("master"),
        Frame::Integer(repl.offset() as i64),
        Frame::Array(replicas),
    ]))
}

/// `LOLWUT [VERSION v]`: the version line Redis 7.0 prints (its drawings
/// for versions 5 and 6 are not reproduced).
pub(crate) fn lolwut(_ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    match &args[1..] {
        [] => {}
        [kw, v] if is(kw, "version") => {
            int_arg(v)?;
        }
        _ => return Err(CmdError::syntax()),
    }
    Ok(Frame::Verbatim {
        format: *b"txt",
        text: Bytes::from(format!("Redis ver. {}\n", crate::REDIS_VERSION)),
    })
}
