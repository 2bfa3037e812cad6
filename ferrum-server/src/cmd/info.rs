//! `INFO [section ...]`: the server's state in Redis's field names, so
//! existing tools that parse INFO read FerrumKV unchanged.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::PolicyKind;

use super::parse::is;
use super::{CmdResult, Ctx};

/// Writes one section's text.
type SectionWriter = fn(&Ctx<'_>, &mut String);

/// Sections in the order `INFO` prints them. All but `commandstats` and
/// `latencystats` are in the default set; `ahe` only while the policy is
/// AHE (it is FerrumKV's own, and tools that parse a Redis INFO need not
/// see it otherwise).
const SECTIONS: &[(&str, SectionWriter)] = &[
    ("server", server),
    ("clients", clients),
    ("memory", memory),
    ("persistence", persistence),
    ("stats", stats),
    ("replication", replication),
    ("cpu", cpu),
    ("commandstats", commandstats),
    ("errorstats", errorstats),
    ("latencystats", super::latency::latencystats),
    ("cluster", cluster),
    ("keyspace", keyspace),
    ("ahe", ahe),
];

pub(crate) fn info(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (policy, _) = ctx.store().policy();
    let in_default = |name: &str| match name {
        "commandstats" | "latencystats" => false,
        "ahe" => is_ahe(policy),
        _ => true,
    };
    let wanted = |name: &str| {
        (args.len() == 1 && in_default(name))
            || args[1..].iter().any(|a| {
                is(a, name)
                    || is(a, "all")
                    || is(a, "everything")
                    || (is(a, "default") && in_default(name))
            })
    };
    let mut out = String::new();
    for (name, write) in SECTIONS {
        if wanted(name) {
            if !out.is_empty() {
                out.push_str("\r\n");
            }
            write(ctx, &mut out);
        }
    }
    Ok(Frame::Verbatim {
        format: *b"txt",
        text: Bytes::from(out),
    })
}

/// `# Server`. `redis_git_sha1` and `redis_git_dirty` read as those of a
/// Redis built outside git (the suite's printver reads them).
fn server(ctx: &Ctx<'_>, out: &mut String) {
    let config = ctx.shared.config();
    let uptime = ctx.shared.clock.uptime_secs();
    let _ = write!(
        out,
        "# Server\r\nredis_version:{}\r\nredis_git_sha1:00000000\r\nredis_git_dirty:0\r\nferrumkv_version:{}\r\nredis_mode:standalone\r\nos:{} {}\r\narch_bits:64\r\nmultiplexing_api:epoll\r\nprocess_id:{}\r\ntcp_port:{}\r\nserver_time_usec:{}\r\nuptime_in_seconds:{}\r\nuptime_in_days:{}\r\nhz:{}\r\nshutdown_in_milliseconds:{}\r\nexecutable:{}\r\n",
        crate::REDIS_VERSION,
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS,
        std::env::consts::ARCH,
        std::process::id(),
        ctx.shared.listeners.port(),
        ctx.shared.clock.now_micros(),
        uptime,
        uptime / 86_400,
        config.hz,
        ctx.shared.repl.shutdown_in_ms(),
        std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_default(),
    );
}

fn clients(ctx: &Ctx<'_>, out: &mut String) {
    let _ = write!(
        out,
        "# Clients\r\nconnected_clients:{}\r\nmaxclients:{}\r\nblocked_clients:{}\r\ntracking_clients:{}\r\n",
        // Replicas are not clients here, as in Redis.
        ctx.shared.clients.len() - ctx.shared.repl.replica_count().min(ctx.shared.clients.len()),
        ctx.shared.config().maxclients,
        ctx.shared.blocking.blocked_clients() + ctx.shared.pause.waiting(),
        ctx.shared.tracking.counts().3,
    );
}

/// The process's resident set size, from `/proc/self/statm` (0 elsewhere).
pub(crate) fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

/// Redis's `bytesToHuman`: `512B`, `1.50K`, `16.00M`, ...
pub(crate) fn human(bytes: u64) -> String {
    const UNITS: [(f64, &str); 5] = [
        (1024.0 * 1024.0 * 1024.0 * 1024.0 * 1024.0, "P"),
        (1024.0 * 1024.0 * 1024.0 * 1024.0, "T"),
        (1024.0 * 1024.0 * 1024.0, "G"),
        (1024.0 * 1024.0, "M"),
        (1024.0, "K"),
    ];
    let b = bytes as f64;
    for (size, unit) in UNITS {
        if b >= size {
            return format!("{:.2}{unit}", b / size);
        }
    }
    format!("{bytes}B")
}

/// `a / b` with two decimals as Redis prints its ratios, 0 when `b` is 0.
fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// `a - b` as a signed byte count.
fn diff(a: u64, b: u64) -> i128 {
    i128::from(a) - i128::from(b)
}

/// `# Memory`, in Redis 7.0's field names and order (the fields FerrumKV
/// has). `used_memory` is the store's own accounting of the dataset plus
/// the connections' memory, as Redis counts its clients;
/// `used_memory_dataset` is the first alone, which is what `maxmemory`
/// bounds, and `used_memory_overhead` the second (`used_memory_startup` is 0: no
/// connection is open at startup). `used_memory_rss` is the process's RSS
/// from /proc; the
/// `allocator_*` figures are the allocator's (see `crate::alloc`), and the
/// ratios are Redis's: `allocator_frag` = active / allocated,
/// `allocator_rss` = resident / active, `rss_overhead` = RSS / resident,
/// `mem_fragmentation` = RSS / used_memory. `mem_clients_normal` is the
/// connections' memory (`CLIENT LIST`'s `tot-mem`, summed now; the part of
/// `used_memory` is what each connection published at its last read or
/// blocked write). `mem_not_counted_for_evict` is that same published
/// part: eviction counts the dataset only (see `Store::over_limit`), so
/// the connections are what it leaves out, as Redis leaves out its
/// replication and AOF buffers (which FerrumKV does not have). So
/// `used_memory - mem_not_counted_for_evict` is what `maxmemory` bounds,
/// in both servers.
fn memory(ctx: &Ctx<'_>, out: &mut String) {
    let used = ctx.store().used_memory_bytes() as u64;
    let rss = rss_bytes();
    let max = ctx.store().maxmemory_bytes();
    let (policy, _) = ctx.store().policy();
    let a = crate::alloc::stats();
    let clients: usize = ctx.shared.clients.all().iter().map(|c| c.memory()).sum();
    let _ = write!(
        out,
        "# Memory\r\nused_memory:{used}\r\nused_memory_human:{}\r\nused_memory_rss:{rss}\r\nused_memory_rss_human:{}\r\nused_memory_overhead:{}\r\nused_memory_startup:0\r\nused_memory_dataset:{}\r\nallocator_allocated:{}\r\nallocator_active:{}\r\nallocator_resident:{}\r\n",
        human(used),
        human(rss),
        ctx.store().outside_bytes(),
        ctx.store().dataset_bytes(),
        a.allocated,
        a.active,
        a.resident,
    );
    scripting_memory(&ctx.shared.scripting.stats(), out);
    let _ = write!(
        out,
        "maxmemory:{max}\r\nmaxmemory_human:{}\r\nmaxmemory_policy:{}\r\nallocator_frag_ratio:{:.2}\r\nallocator_frag_bytes:{}\r\nallocator_rss_ratio:{:.2}\r\nallocator_rss_bytes:{}\r\nrss_overhead_ratio:{:.2}\r\nrss_overhead_bytes:{}\r\nmem_fragmentation_ratio:{:.2}\r\nmem_fragmentation_bytes:{}\r\nmem_total_replication_buffers:{}\r\nmem_clients_slaves:0\r\nmem_clients_normal:{}\r\nmem_not_counted_for_evict:{}\r\nmem_allocator:{}\r\n",
        human(max),
        policy.as_str(),
        ratio(a.active, a.allocated),
        diff(a.active, a.allocated),
        ratio(a.resident, a.active),
        diff(a.resident, a.active),
        ratio(rss, a.resident),
        diff(rss, a.resident),
        ratio(rss, used),
        diff(rss, used),
        ctx.shared.repl.buffered_bytes(),
        clients,
        ctx.store().outside_bytes(),
        a.name,
    );
}

/// The scripting lines of `INFO memory`, in Redis 7.0's order and names.
/// Redis runs `EVAL` scripts and functions in two VMs; FerrumKV runs both
/// in one, whose heap is reported as the eval VM's (`used_memory_lua` is
/// the old name of `used_memory_vm_eval`), the functions' VM being 0.
/// `used_memory_scripts_eval` is the cached scripts' bodies and SHA-1s,
/// `used_memory_functions` the libraries' code.
fn scripting_memory(lua: &crate::script::EngineStats, out: &mut String) {
    let vm = lua.lua_bytes as u64;
    let scripts = (lua.script_bytes + lua.library_bytes) as u64;
    let _ = write!(
        out,
        "used_memory_lua:{vm}\r\nused_memory_vm_eval:{vm}\r\nused_memory_lua_human:{}\r\nused_memory_scripts_eval:{}\r\nnumber_of_cached_scripts:{}\r\nnumber_of_functions:{}\r\nnumber_of_libraries:{}\r\nused_memory_vm_functions:0\r\nused_memory_vm_total:{vm}\r\nused_memory_vm_total_human:{}\r\nused_memory_functions:{}\r\nused_memory_scripts:{scripts}\r\nused_memory_scripts_human:{}\r\n",
        human(vm),
        lua.script_bytes,
        lua.scripts,
        lua.functions,
        lua.libraries,
        human(vm),
        lua.library_bytes,
        human(scripts),
    );
}

/// Saves and loads so far, and the background save in progress, in
/// Redis's fields and order. A background save here forks nothing: the
/// `cow` fields count the records writes displaced while it ran (see
/// `ferrum_store::snapshot`), `current_fork_perc` its progress.
fn persistence(ctx: &Ctx<'_>, out: &mut String) {
    let p = &ctx.shared.persistence;
    let get = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let running = p.bgsave_running.load(Ordering::Acquire);
    let (processed, total) = (get(&p.keys_processed), get(&p.keys_total));
    let perc = if running && total > 0 {
        processed as f64 * 100.0 / total as f64
    } else {
        0.0
    };
    let now_secs = ctx.shared.clock.now_micros() / 1_000_000;
    let current_secs = if running {
        now_secs.saturating_sub(get(&p.bgsave_started_unix)) as i64
    } else {
        -1
    };
    out.push_str("# Persistence\r\n");
    match p.loading.progress(ctx.shared.clock.now_micros()) {
        // `loading_rdb_used_mem` (the saver's memory, from the file's aux
        // fields) is not tracked: 0.
        Some(l) => {
            let _ = write!(
                out,
                "loading:1\r\nasync_loading:0\r\nloading_start_time:{}\r\nloading_total_bytes:{}\r\nloading_rdb_used_mem:0\r\nloading_loaded_bytes:{}\r\nloading_loaded_perc:{:.2}\r\nloading_eta_seconds:{}\r\n",
                l.started_unix, l.total_bytes, l.loaded_bytes, l.loaded_perc, l.eta_secs
            );
        }
        None => out.push_str("loading:0\r\nasync_loading:0\r\n"),
    }
    let _ = write!(
        out,
        "current_cow_peak:{}\r\ncurrent_cow_size:{}\r\ncurrent_cow_size_age:0\r\ncurrent_fork_perc:{perc:.2}\r\ncurrent_save_keys_processed:{processed}\r\ncurrent_save_keys_total:{total}\r\nrdb_changes_since_last_save:{}\r\nrdb_bgsave_in_progress:{}\r\nrdb_last_save_time:{}\r\nrdb_last_bgsave_status:{}\r\nrdb_last_bgsave_time_sec:{}\r\nrdb_current_bgsave_time_sec:{current_secs}\r\nrdb_saves:{}\r\nrdb_last_cow_size:{}\r\nrdb_last_load_keys_expired:{}\r\nrdb_last_load_keys_loaded:{}\r\naof_enabled:0\r\naof_rewrite_in_progress:0\r\naof_rewrite_scheduled:0\r\naof_last_rewrite_time_sec:-1\r\naof_current_rewrite_time_sec:-1\r\naof_last_bgrewrite_status:ok\r\naof_rewrites:0\r\naof_rewrites_consecutive_failures:0\r\naof_last_write_status:ok\r\naof_last_cow_size:0\r\nmodule_fork_in_progress:0\r\nmodule_fork_last_cow_size:0\r\n",
        // Never decreasing during a save: its peak is its current value.
        get(&p.displaced_bytes),
        get(&p.displaced_bytes),
        p.changes_since_save(ctx.shared.stats.dirty.load(Ordering::Relaxed)),
        u8::from(running),
        p.last_save_unix(),
        if p.last_bgsave_failed.load(Ordering::Relaxed) { "err" } else { "ok" },
        p.last_bgsave_secs.load(Ordering::Relaxed),
        p.saves(),
        get(&p.last_displaced_bytes),
        get(&p.last_load.1),
        get(&p.last_load.0),
    );
}

/// A primary, its replicas and its stream (FerrumKV keeps no backlog: a
/// replica that reconnects syncs in full).
fn replication(ctx: &Ctx<'_>, out: &mut String) {
    out.push_str("# Replication\r\n");
    ctx.shared.repl.info(out);
    out.push_str("repl_backlog_active:0\r\nrepl_backlog_size:1048576\r\nrepl_backlog_first_byte_offset:0\r\nrepl_backlog_histlen:0\r\n");
}

/// CPU time of this process, from `/proc/self/stat` (clock ticks of
/// 1/100 s, Linux's `USER_HZ`). FerrumKV forks no children.
fn cpu(_ctx: &Ctx<'_>, out: &mut String) {
    let (user, sys) = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // Fields after the parenthesised command name; utime and stime
            // are the 14th and 15th fields overall.
            let rest = &s[s.rfind(')')? + 2..];
            let f: Vec<&str> = rest.split_whitespace().collect();
            Some((
                f.get(11)?.parse::<u64>().ok()?,
                f.get(12)?.parse::<u64>().ok()?,
            ))
        })
        .unwrap_or((0, 0));
    let secs = |ticks: u64| ticks as f64 / 100.0;
    let _ = write!(
        out,
        "# CPU\r\nused_cpu_sys:{:.6}\r\nused_cpu_user:{:.6}\r\nused_cpu_sys_children:0.000000\r\nused_cpu_user_children:0.000000\r\n",
        secs(sys),
        secs(user),
    );
}

/// Whether the server runs in cluster mode (`cluster-enabled`).
fn cluster(ctx: &Ctx<'_>, out: &mut String) {
    let enabled = u8::from(ctx.shared.cluster.is_some());
    let _ = write!(out, "# Cluster\r\ncluster_enabled:{enabled}\r\n");
}

fn stats(ctx: &Ctx<'_>, out: &mut String) {
    let s = &ctx.shared.stats;
    let ks = ctx.store().stats();
    let tracking = ctx.shared.tracking.counts();
    let load = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let _ = write!(
        out,
        "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\ntotal_net_input_bytes:{}\r\ntotal_net_output_bytes:{}\r\nrejected_connections:{}\r\nexpired_keys:{}\r\nevicted_keys:{}\r\nkeyspace_hits:{}\r\nkeyspace_misses:{}\r\npubsub_channels:{}\r\npubsub_patterns:{}\r\nlatest_fork_usec:0\r\ntotal_forks:0\r\nmigrate_cached_sockets:{}\r\nevicted_clients:{}\r\ntotal_error_replies:{}\r\nlazyfree_pending_objects:{}\r\nlazyfreed_objects:{}\r\ntracking_total_keys:{}\r\ntracking_total_items:{}\r\ntracking_total_prefixes:{}\r\n",
        load(&s.connections_received),
        load(&s.commands_processed),
        load(&s.net_input_bytes),
        load(&s.net_output_bytes),
        load(&s.rejected_connections),
        ks.expired_keys,
        ks.evicted_keys,
        ks.keyspace_hits,
        ks.keyspace_misses,
        ctx.shared.pubsub.channels(crate::pubsub::Kind::Channel, None).len(),
        ctx.shared.pubsub.numpat(),
        ctx.shared.migrate.len(),
        ctx.shared.evict_clients.evicted(),
        load(&s.error_replies),
        ctx.shared.lazyfree.pending(),
        ctx.shared.lazyfree.freed(),
        tracking.0,
        tracking.1,
        tracking.2,
    );
}

/// `# Commandstats`: a line per command with calls, rejected or failed
/// calls; a container's are its subcommands' (`cmdstat_config|get`), as
/// Redis 7 reports them.
fn commandstats(ctx: &Ctx<'_>, out: &mut String) {
    out.push_str("# Commandstats\r\n");
    for c in ctx.shared.stats.commands() {
        let per_call = if c.calls == 0 {
            0.0
        } else {
            c.usec as f64 / c.calls as f64
        };
        let _ = write!(
            out,
            "cmdstat_{}:calls={},usec={},usec_per_call={per_call:.2},rejected_calls={},failed_calls={}\r\n",
            c.name, c.calls, c.usec, c.rejected, c.failed
        );
    }
}

/// Error replies by code (`ERR`, `WRONGTYPE`, ...).
fn errorstats(ctx: &Ctx<'_>, out: &mut String) {
    out.push_str("# Errorstats\r\n");
    for (code, count) in ctx.shared.stats.errors() {
        let _ = write!(out, "errorstat_{code}:count={count}\r\n");
    }
}

fn is_ahe(policy: PolicyKind) -> bool {
    matches!(policy, PolicyKind::AllKeysAhe | PolicyKind::VolatileAhe)
}

/// `# Ahe`: AHE's queues and what its adaptive rule saw, summed over the
/// shards. Every newcomer enters the small FIFO; entries read twice there
/// are promoted to the main CLOCK; each queue's evictions leave a
/// fingerprint in its ghost. A miss on a key small's ghost remembers goes
/// straight to main and grows small's target; one main's ghost remembers
/// shrinks it. Shares are of the entries AHE holds.
fn ahe(ctx: &Ctx<'_>, out: &mut String) {
    let (policy, _) = ctx.store().policy();
    let _ = write!(
        out,
        "# Ahe\r\nahe_enabled:{}\r\nahe_policy:{}\r\n",
        u8::from(is_ahe(policy)),
        policy.as_str()
    );
    let Some(state) = ctx.store().controller_state() else {
        return;
    };
    let _ = write!(
        out,
        "ahe_small_target_share:{:.4}\r\nahe_small_share:{:.4}\r\nahe_small_entries:{}\r\nahe_main_entries:{}\r\nahe_small_ghost_hits:{}\r\nahe_main_ghost_hits:{}\r\nahe_promotions:{}\r\nahe_small_evictions:{}\r\nahe_main_evictions:{}\r\n",
        state.small_target_share,
        state.small_share(),
        state.small_entries,
        state.main_entries,
        state.small_ghost_hits,
        state.main_ghost_hits,
        state.promotions,
        state.small_evictions,
        state.main_evictions,
    );
}

fn keyspace(ctx: &Ctx<'_>, out: &mut String) {
    out.push_str("# Keyspace\r\n");
    for (db, (keys, expires)) in ctx.store().keyspace_sizes().into_iter().enumerate() {
        if keys > 0 {
            let _ = write!(out, "db{db}:keys={keys},expires={expires},avg_ttl=0\r\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes_match_redis() {
        assert_eq!(human(512), "512B");
        assert_eq!(human(1536), "1.50K");
        assert_eq!(human(16 * 1024 * 1024), "16.00M");
        assert_eq!(human(0), "0B");
    }
}
