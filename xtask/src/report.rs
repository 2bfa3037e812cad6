//! The results of a benchmark run and the reports written from them:
//! `results.json` (this module's [`Results`], serialised), the markdown of
//! `benches/redis-benchmark.md` and `benches/hit-ratio.md`, and the charts.
//!
//! The report functions are pure (results in, text out), so they are tested
//! on a fixed input.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use ferrum_bench::svg::{BarChart, LineChart, Series};

use crate::equal_memory::EqualMemoryRun;
use crate::keys::KeysRow;
use crate::machine::Machine;
use crate::redis_benchmark::BenchRow;
use crate::throughput::{self, Sample, ThroughputSpec};

/// Everything a run measured, as written to `results.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Results {
    /// Run id: the UTC start time.
    pub(crate) run: String,
    /// Seed of every workload.
    pub(crate) seed: u64,
    /// Whether `--quick` was given.
    pub(crate) quick: bool,
    /// Machine, versions, commit.
    pub(crate) machine: Machine,
    /// Sizes and lists the run used.
    pub(crate) config: RunConfig,
    /// The commands run, first the xtask invocation.
    pub(crate) commands: Vec<String>,
    /// Parts skipped, and why.
    pub(crate) skipped: Vec<String>,
    /// redis-benchmark rows, FerrumKV and Redis.
    pub(crate) redis_benchmark: Vec<BenchRow>,
    /// The store-engine simulator's cells (`ferrum-bench sim --json`).
    pub(crate) sim: Vec<SimCell>,
    /// FerrumKV live cells (`ferrum-bench live --compare-sim --json`).
    pub(crate) live: Vec<LiveCell>,
    /// Redis live cells with Redis's own policies.
    pub(crate) redis_live: Vec<LiveCell>,
    /// The spacing check at full speed.
    pub(crate) spacing_full: Vec<LiveCell>,
    /// The spacing check at 1 ms between requests.
    pub(crate) spacing_paced: Vec<LiveCell>,
    /// The equal-memory condition (WORKLOADS.md v2), one entry per scale.
    #[serde(default)]
    pub(crate) equal_memory: Vec<EqualMemoryRun>,
    /// The keys-at-maxmemory table.
    #[serde(default)]
    pub(crate) keys_at_maxmemory: Vec<KeysRow>,
    /// The sharded part (`ferrum-bench sharded --json`: `cells`, and the
    /// table as `markdown`), when it ran.
    #[serde(default)]
    pub(crate) sharded: Option<Value>,
    /// The throughput part's sizes, when it ran.
    #[serde(default)]
    pub(crate) throughput_spec: Option<ThroughputSpec>,
    /// The throughput part's rows, every round.
    #[serde(default)]
    pub(crate) throughput: Vec<Sample>,
    /// The 1-minute load average at the start of each throughput round.
    #[serde(default)]
    pub(crate) throughput_load: Vec<f64>,
    /// The restart part's cells, when it ran.
    #[serde(default)]
    pub(crate) restart: Vec<crate::restart::RestartCell>,
    /// The restart part's patterns, in its columns' order.
    #[serde(default)]
    pub(crate) restart_patterns: Vec<String>,
    /// The bgsave part's rounds, when it ran.
    #[serde(default)]
    pub(crate) bgsave: Vec<crate::bgsave::BgsaveRound>,
    /// The restart part's requests per replay, one table each.
    #[serde(default)]
    pub(crate) restart_lengths: Vec<u64>,
}

/// Sizes and lists of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RunConfig {
    /// Requests per hit-ratio cell.
    pub(crate) requests: u64,
    /// Requests per spacing-check cell.
    pub(crate) spacing_requests: u64,
    /// redis-benchmark `-n`.
    pub(crate) bench_requests: u64,
    /// redis-benchmark `-c`.
    pub(crate) clients: u32,
    /// Policies of the hit-ratio matrix.
    pub(crate) policies: Vec<String>,
    /// Policies of the capped scenarios.
    pub(crate) capped_policies: Vec<String>,
    /// Patterns of the hit-ratio matrix.
    pub(crate) patterns: Vec<String>,
}

/// A simulator cell; fields the reports do not use are kept in `rest`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct SimCell {
    /// Policy name.
    pub(crate) policy: String,
    /// Pattern name.
    pub(crate) pattern: String,
    /// `hits / (hits + misses)`.
    pub(crate) hit_ratio: f64,
    /// Everything else `ferrum-bench sim --json` printed.
    #[serde(flatten)]
    pub(crate) rest: Map<String, Value>,
}

/// A live cell as `ferrum-bench live --json` prints it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct LiveCell {
    /// What the server did.
    pub(crate) live: LiveRun,
    /// The simulator's twin, with `--compare-sim`.
    pub(crate) sim: Option<SimTwin>,
}

/// The live side of a cell.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct LiveRun {
    /// Policy name.
    pub(crate) policy: String,
    /// Pattern name (or trace path).
    pub(crate) source: String,
    /// The server's own hit ratio.
    pub(crate) hit_ratio: f64,
    /// `DBSIZE` at the end.
    pub(crate) dbsize: u64,
    /// Requests per window of `windows`.
    pub(crate) window: u64,
    /// Hit ratio per window.
    pub(crate) windows: Vec<f64>,
    /// Everything else.
    #[serde(flatten)]
    pub(crate) rest: Map<String, Value>,
}

/// The simulator side of a live cell.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct SimTwin {
    /// The simulator's hit ratio on the same requests.
    pub(crate) hit_ratio: f64,
    /// Live minus simulated, percentage points.
    pub(crate) difference_pp: f64,
    /// Everything else.
    #[serde(flatten)]
    pub(crate) rest: Map<String, Value>,
}

/// The agreement bound of the issue: 0.5 percentage points.
const AGREE_PP: f64 = 0.5;

fn header(out: &mut String, title: &str, r: &Results) {
    let m = &r.machine;
    let _ = writeln!(out, "{title}\n");
    let _ = writeln!(
        out,
        "Written by `cargo xtask bench{}` (run `{}`, commit `{}`); do not edit by hand.\n",
        if r.quick { " --quick" } else { "" },
        r.run,
        m.commit
    );
    let _ = writeln!(
        out,
        "Machine: {} CPUs ({}), {} MiB. Versions: {}; redis-server: {}; redis-benchmark: {}. Seed {}.\n",
        m.nproc,
        m.cpu_model,
        m.memory_mib,
        m.rustc,
        m.redis_server.as_deref().unwrap_or("not installed"),
        m.redis_benchmark.as_deref().unwrap_or("not installed"),
        r.seed
    );
    for s in &r.skipped {
        let _ = writeln!(out, "Skipped: {s}.\n");
    }
}

fn commands(out: &mut String, level: &str, r: &Results, filter: impl Fn(&str) -> bool) {
    let _ = writeln!(out, "{level} Commands\n\n```sh");
    for c in r
        .commands
        .iter()
        .enumerate()
        .filter(|(i, c)| *i == 0 || filter(c))
    {
        let _ = writeln!(out, "{}", c.1);
    }
    let _ = writeln!(out, "```\n");
}

/// `benches/redis-benchmark.md`.
pub(crate) fn redis_benchmark_md(r: &Results) -> String {
    let mut out = String::new();
    header(&mut out, "# redis-benchmark: FerrumKV and Redis", r);
    let _ = writeln!(
        out,
        "`redis-benchmark -t set,get -n {} -c {} --csv` against each server, one server at a time on 127.0.0.1. `pipelined` adds `-P 16`; `capped-*` start the server with `--maxmemory 16mb --maxmemory-policy <policy>` and add `-r 1000000 -d 256` so the writes overflow 16 MB and evict. Redis has no `allkeys-ahe`: that row compares FerrumKV's `allkeys-ahe` with Redis's `allkeys-lru`. The ratio is FerrumKV's requests per second over Redis's.\n",
        r.config.bench_requests, r.config.clients
    );
    let _ = writeln!(
        out,
        "| scenario | test | FerrumKV policy | FerrumKV req/s | p50 ms | p99 ms | Redis policy | Redis req/s | p50 ms | p99 ms | FerrumKV / Redis |\n| --- | --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |"
    );
    for f in r.redis_benchmark.iter().filter(|b| b.server == "ferrumkv") {
        let redis = r
            .redis_benchmark
            .iter()
            .find(|b| b.server == "redis" && b.scenario == f.scenario && b.test == f.test);
        let _ = write!(
            out,
            "| {} | {} | {} | {:.0} | {:.3} | {:.3} |",
            f.scenario, f.test, f.policy, f.rps, f.p50_ms, f.p99_ms
        );
        match redis {
            Some(x) => {
                let _ = writeln!(
                    out,
                    " {} | {:.0} | {:.3} | {:.3} | {:.2} |",
                    x.policy,
                    x.rps,
                    x.p50_ms,
                    x.p99_ms,
                    f.rps / x.rps.max(1e-9)
                );
            }
            None => out.push_str(" – | – | – | – | – |\n"),
        }
    }
    out.push('\n');
    commands(&mut out, "##", r, |c| c.starts_with("redis-benchmark"));
    out
}

/// `benches/throughput.md`.
pub(crate) fn throughput_md(r: &Results) -> String {
    let mut out = String::new();
    header(
        &mut out,
        "# Throughput: FerrumKV and Redis, interleaved rounds",
        r,
    );
    if let Some(s) = &r.throughput_spec {
        let _ = writeln!(
            out,
            "{} rounds; in each, every unit starts all its servers fresh on 127.0.0.1 and then runs redis-benchmark one test at a time against each of them in turn (the order of the servers rotating from test to test and round to round), so the two runs a ratio compares are seconds apart. `plain`: the default suite, `-c {}`, `-n {}` (LRANGE rows and their LPUSH: `-n {}`); `pipelined`: the same with `-P 16`, `-n {}` (LRANGE: `-n {}`); `capped`: `-t set`, then `-t get`, `-n {} -r 1000000 -d 256` against `--maxmemory 16mb` and the policy. Ops/s and p99 are medians over the rounds; the ratio is the median of the per-round ratios (FerrumKV's run over Redis's run of the same round and test), the range their min-max. `Redis A/A` is Redis's second run of each round over its first, the same way: the noise floor. Redis has no `allkeys-ahe`: it is compared with Redis's `allkeys-lru` and `allkeys-lfu`. `client busy` is redis-benchmark's CPU time over its wall time (median of the runs against each server): near 1.0 the single-threaded client kept a core busy, and the row timed it as much as the server. `server CPU per request` is the median of the per-round ratios of the servers' CPU time per request in the same runs (rows that redis-benchmark printed alone).\n",
            s.rounds,
            s.clients,
            s.requests,
            (s.requests / throughput::LRANGE_DIVISOR).max(1),
            s.pipelined_requests,
            (s.pipelined_requests / throughput::LRANGE_DIVISOR).max(1),
            s.capped_requests
        );
    }
    out.push_str(&throughput::table(&throughput::rows(&r.throughput)));
    out.push('\n');
    if let Some(line) = throughput::load_line(&r.throughput_load, r.machine.nproc) {
        let _ = writeln!(out, "{line}\n");
    }
    commands(&mut out, "##", r, |c| c.starts_with("redis-benchmark"));
    out
}

/// A policies × patterns table of `value(policy, pattern)`.
fn matrix(
    out: &mut String,
    policies: &[String],
    patterns: &[String],
    value: impl Fn(&str, &str) -> Option<String>,
) {
    let _ = write!(out, "| policy |");
    for p in patterns {
        let _ = write!(out, " {p} |");
    }
    let _ = write!(out, "\n| --- |");
    for _ in patterns {
        out.push_str(" ---: |");
    }
    out.push('\n');
    for policy in policies {
        let cells: Vec<Option<String>> = patterns.iter().map(|p| value(policy, p)).collect();
        if cells.iter().all(Option::is_none) {
            continue;
        }
        let _ = write!(out, "| {policy} |");
        for c in cells {
            let _ = write!(out, " {} |", c.as_deref().unwrap_or("–"));
        }
        out.push('\n');
    }
    out.push('\n');
}

fn find<'a>(cells: &'a [LiveCell], policy: &str, pattern: &str) -> Option<&'a LiveCell> {
    cells
        .iter()
        .find(|c| c.live.policy == policy && c.live.source == pattern)
}

fn pct(v: f64) -> String {
    format!("{:.1}", 100.0 * v)
}

/// The equal-memory table of one scale: a row per (server, policy), a
/// column per pattern, each cell `hit % (DBSIZE)`; the README's eviction
/// section can lead with it as is.
pub(crate) fn equal_memory_table(run: &EqualMemoryRun) -> String {
    let mut out = String::new();
    let patterns: Vec<&str> = run.references.iter().map(|x| x.pattern.as_str()).collect();
    let _ = write!(out, "| server, policy |");
    for p in &patterns {
        let _ = write!(out, " {p} |");
    }
    let _ = write!(out, "\n| --- |");
    for _ in &patterns {
        out.push_str(" ---: |");
    }
    out.push('\n');
    let rows = server_policy_rows(run.cells.iter().map(|c| (&*c.server, &*c.policy)));
    for (server, policy) in rows {
        let _ = write!(out, "| {} {policy} |", server_label(server));
        for p in &patterns {
            let cell = run
                .cells
                .iter()
                .find(|c| c.server == server && c.policy == policy && c.pattern == *p);
            match cell {
                Some(c) => {
                    let _ = write!(out, " {} ({}) |", pct(c.hit_ratio), c.dbsize);
                }
                None => out.push_str(" – |"),
            }
        }
        out.push('\n');
    }
    let _ = write!(out, "| `M_ref` (bytes) |");
    for x in &run.references {
        let _ = write!(out, " {} |", x.maxmemory);
    }
    out.push('\n');
    out
}

/// The keys-at-maxmemory table of one value size.
fn keys_table(out: &mut String, rows: &[&KeysRow]) {
    let reference = rows
        .iter()
        .find(|x| x.server == "redis" && x.policy == "allkeys-lru")
        .map(|x| x.keys);
    let _ = writeln!(
        out,
        "| server, policy | keys held | vs Redis allkeys-lru | RSS per held key | used_memory | RSS / maxmemory | startup RSS | RSS within maxmemory × 1.10 + startup |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
    );
    for x in rows {
        let name = if x.server == "redis" {
            "Redis"
        } else {
            "FerrumKV"
        };
        let ratio = reference.map_or("–".to_owned(), |r| {
            format!("{:.2}x", x.keys as f64 / r.max(1) as f64)
        });
        let bound = 1.10 * x.maxmemory as f64 + x.baseline_rss_bytes as f64;
        let within = if x.rss_bytes as f64 <= bound {
            "yes"
        } else {
            "no"
        };
        let _ = writeln!(
            out,
            "| {name} {} | {} | {ratio} | {} B | {} | {:.2} | {:.1} MiB | {within} |",
            x.policy,
            x.keys,
            x.rss_bytes / x.keys.max(1),
            x.used_memory,
            x.rss_bytes as f64 / x.maxmemory.max(1) as f64,
            x.baseline_rss_bytes as f64 / 1048576.0
        );
    }
    out.push('\n');
}

/// `benches/sharded.md`: the sharded part's `table` (`ferrum-bench
/// sharded`'s markdown) under the usual header and what it compares.
pub(crate) fn sharded_md(r: &Results, table: &str) -> String {
    let mut out = String::new();
    header(
        &mut out,
        "# Sharded: three nodes, behind twemproxy and as a cluster, against one",
        r,
    );
    let _ = writeln!(
        out,
        "One FerrumKV with the `maxmemory` that holds {} entries at steady state (calibrated per cell on the pattern's prefix), against three FerrumKV nodes each with a third of that `maxmemory`, reached two ways: route `proxy`, behind twemproxy (ketama, fnv1a_64); route `cluster`, in cluster mode with even slot ranges, by a cluster-aware client (CRC16 slots from `CLUSTER SLOTS`, following `-MOVED`). {} requests per cell, read-through. Hit % and keys are the nodes' own `keyspace_hits`/`keyspace_misses` and `DBSIZE`, summed.\n",
        ferrum_bench::workload::CAPACITY,
        r.config.requests,
    );
    out.push_str(table);
    out
}

/// The distinct (server, policy) pairs of a table's cells, in first-seen
/// order: one row each.
pub(crate) fn server_policy_rows<'a>(
    cells: impl Iterator<Item = (&'a str, &'a str)>,
) -> Vec<(&'a str, &'a str)> {
    let mut rows = Vec::new();
    for pair in cells {
        if !rows.contains(&pair) {
            rows.push(pair);
        }
    }
    rows
}

/// How a report names a server: `Redis` or `FerrumKV`.
pub(crate) fn server_label(server: &str) -> &'static str {
    if server == "redis" {
        "Redis"
    } else {
        "FerrumKV"
    }
}

/// `benches/restart.md`: the second half's hit ratio, uninterrupted and
/// restarted from the snapshot at half.
pub(crate) fn restart_md(r: &Results) -> String {
    let mut out = String::new();
    header(
        &mut out,
        "# Restart: hit ratio after a restart from the snapshot",
        r,
    );
    let _ = writeln!(
        out,
        "Each server and policy replays each pattern read-through (seeds {}) at one `maxmemory`, calibrated on that server and policy to hold {} entries of the pattern, twice per run length and seed: uninterrupted, and with `DEBUG RELOAD` at half (the server saves its snapshot, empties itself and loads the file back, as a restart does). The columns are the hit ratio of the second half, in percent, and the change the restart made, each the mean over the seeds, with the range of the change over the seeds (a policy's own randomness and its ties move a single replay by a few tenths of a point, restarted or not). Redis writes its keys' LRU idle time or LFU counter into the file and reads them back; FerrumKV also its policy's order and AHE's ghosts and controller.\n",
        seed_list(&r.restart),
        ferrum_bench::workload::CAPACITY,
    );
    for &requests in &r.restart_lengths {
        let _ = writeln!(
            out,
            "## {requests} requests, restart at request {}\n",
            requests / 2
        );
        out.push_str(&crate::restart::table(
            &r.restart,
            &r.restart_patterns,
            requests,
        ));
        out.push('\n');
    }
    commands(&mut out, "##", r, |c| {
        c.starts_with("ferrum-bench live --json --seed")
    });
    out
}

/// `benches/bgsave.md`: what a background save costs while clients write.
pub(crate) fn bgsave_md(r: &Results) -> String {
    let mut out = String::new();
    header(
        &mut out,
        "# BGSAVE: what a snapshot costs while clients write",
        r,
    );
    let (keys, size) = r.bgsave.first().map_or((0, 0), |b| (b.keys, b.value_bytes));
    let rounds = r.bgsave.iter().map(|b| b.round).max().unwrap_or(0);
    let _ = writeln!(
        out,
        "Each server, in turn (rounds: {rounds}), starts empty and is filled with `DEBUG POPULATE` ({keys} keys of {size}-byte values). redis-benchmark SET/GET with 20 clients then runs back to back during `BGSAVE`, and for as long again without a save. Each cell is the median over the rounds: the save's wall time, the median of the runs' p99 (the worse of SET and GET) during the save and without, the memory peak during the save against before it (the server's resident set plus its children's private pages: what a fork's copy-on-write costs), Redis's fork pause (`latest_fork_usec`) and the file's size. p99 on this machine moves between runs by more than the save does; the rounds below show it.\n"
    );
    out.push_str(&crate::bgsave::table(&r.bgsave));
    out.push_str("\n## Rounds\n\n| server | round | wall s | p99 ms during (worst) | p99 ms without (worst) | memory MiB before / peak | runs |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for b in &r.bgsave {
        let _ = writeln!(
            out,
            "| {} | {} | {:.2} | {:.2} ({:.2}) | {:.2} ({:.2}) | {} / {} | {} |",
            server_label(&b.server),
            b.round,
            b.wall_s,
            b.p99_ms,
            b.p99_max_ms,
            b.base_p99_ms,
            b.base_p99_max_ms,
            b.mem_before >> 20,
            b.mem_peak >> 20,
            b.runs
        );
    }
    out.push('\n');
    commands(&mut out, "##", r, |c| {
        c.starts_with("DEBUG POPULATE") || c.starts_with("redis-benchmark -p PORT -t set,get -r")
    });
    out
}

/// The restart part's seeds, in order, as `42, 43`.
fn seed_list(cells: &[crate::restart::RestartCell]) -> String {
    let mut seeds: Vec<u64> = cells.iter().map(|c| c.seed).collect();
    seeds.sort_unstable();
    seeds.dedup();
    let seeds: Vec<String> = seeds.iter().map(u64::to_string).collect();
    seeds.join(", ")
}

/// `benches/equal-memory.md` (scale 1) or `equal-memory-s<S>.md`: the
/// equal-memory condition at the scales `keep` lets through.
pub(crate) fn equal_memory_md(r: &Results, keep: impl Fn(u64) -> bool) -> String {
    let mut out = String::new();
    header(&mut out, "# Equal memory: hit ratio at one maxmemory", r);
    for run in r.equal_memory.iter().filter(|run| keep(run.scale)) {
        let _ = writeln!(
            out,
            "## Hit ratio at equal memory, scale {} (WORKLOADS.md v2)\n\n{} keys, `M_ref` = the `maxmemory` at which Redis 7.0 allkeys-lru holds {} entries of the pattern at steady state (measured in this run on its first {} requests), given unchanged to every server and policy; {} requests per cell. Each cell: hit % (`DBSIZE` at the end). {:.1} min for this scale.\n",
            run.scale,
            ferrum_bench::workload::keyspace(run.scale),
            run.capacity,
            run.calibration_requests,
            run.requests,
            run.elapsed_seconds / 60.0
        );
        out.push_str(&equal_memory_table(run));
        out.push('\n');
    }
    commands(&mut out, "##", r, |c| {
        c.starts_with("ferrum-bench live --json --scale") || c.contains("M_ref")
    });
    out
}

/// `benches/keys-at-maxmemory.md`: the keys each server holds at one
/// `maxmemory`, per value size.
pub(crate) fn keys_at_maxmemory_md(r: &Results) -> String {
    let mut out = String::new();
    header(&mut out, "# Keys held at one maxmemory", r);
    let mut sizes: Vec<u64> = r.keys_at_maxmemory.iter().map(|x| x.value_bytes).collect();
    sizes.dedup();
    for size in sizes {
        let rows: Vec<&KeysRow> = r
            .keys_at_maxmemory
            .iter()
            .filter(|x| x.value_bytes == size)
            .collect();
        let (sets, max) = (rows[0].sets, rows[0].maxmemory);
        let _ = writeln!(
            out,
            "## Keys held at maxmemory {} MiB, {size}-byte values\n\n{sets} distinct 16-byte keys written (about 3x the limit), one server at a time; RSS from /proc 2 s after the fill (startup RSS: before it).\n",
            max >> 20
        );
        keys_table(&mut out, &rows);
    }
    commands(&mut out, "##", r, |c| c.starts_with("keys at maxmemory"));
    out
}

/// `benches/hit-ratio.md`.
pub(crate) fn hit_ratio_md(r: &Results) -> String {
    let mut out = String::new();
    let c = &r.config;
    header(
        &mut out,
        "## Live and simulated hit ratio (cargo xtask bench)",
        r,
    );
    let _ = writeln!(
        out,
        "The workloads of `shared/WORKLOADS.md`: 100,000 keys, a cache of 5,000 entries, {} requests per cell, seed {}. Hit ratio in percent, cold start included.\n",
        c.requests, r.seed
    );
    let policies = &c.policies;
    let patterns = &c.patterns;
    if !r.sim.is_empty() {
        let _ = writeln!(out, "### Simulator (store engine, 1 shard)\n\n`ferrum-bench sim`: the server's own keyspace code on virtual time, `maxmemory` calibrated to 5,000 entries.\n");
        matrix(&mut out, policies, patterns, |pol, pat| {
            r.sim
                .iter()
                .find(|s| s.policy == pol && s.pattern == pat)
                .map(|s| pct(s.hit_ratio))
        });
    }
    if !r.live.is_empty() {
        let _ = writeln!(out, "### Live FerrumKV\n\n`ferrum-bench live` against a release `ferrum-server` (16 shards): the server's `keyspace_hits / (keyspace_hits + keyspace_misses)`. The server's clock follows the workload's virtual time (`DEBUG ADVANCE-CLOCK`), `maxmemory` is calibrated on the server and held at 5,000 entries (±0.2%).\n");
        matrix(&mut out, policies, patterns, |pol, pat| {
            find(&r.live, pol, pat).map(|x| pct(x.live.hit_ratio))
        });
        let _ = writeln!(
            out,
            "`DBSIZE` at the end of each live run (target 5,000 ± 1%):\n"
        );
        matrix(&mut out, policies, patterns, |pol, pat| {
            find(&r.live, pol, pat).map(|x| x.live.dbsize.to_string())
        });
    }
    if !r.redis_live.is_empty() {
        let redis_policies: Vec<String> = ["allkeys-lru", "allkeys-lfu", "allkeys-random"]
            .map(String::from)
            .to_vec();
        let _ = writeln!(out, "### Live Redis\n\nThe same driver against `redis-server` with its own policies (sampled LRU/LFU, `maxmemory-samples 5`). Redis has no virtual clock: it runs on its own, and the driver scales each `PX` by real over virtual time. Its LRU clock has 1 s resolution and its LFU decays per minute, so at full speed (~1 s per 20,000 requests) both see compressed time.\n");
        matrix(&mut out, &redis_policies, patterns, |pol, pat| {
            find(&r.redis_live, pol, pat)
                .map(|x| format!("{} ({})", pct(x.live.hit_ratio), x.live.dbsize))
        });
        let _ = writeln!(out, "Each cell: hit % (`DBSIZE` at the end).\n");
    }
    agreement(&mut out, r);
    if !r.live.is_empty() || !r.sim.is_empty() {
        let _ = writeln!(
            out,
            "### Charts\n\n![hit ratio per policy and pattern](hit-ratio-matrix.svg)\n"
        );
        for p in patterns.iter().filter(|_| !r.live.is_empty()) {
            let _ = writeln!(out, "![{p}: hit ratio over time](live-hit-ratio-{p}.svg)\n");
        }
    }
    commands(&mut out, "###", r, |c| c.starts_with("ferrum-bench"));
    out
}

/// The agreement table: live against the server-shaped simulator, and
/// full speed against 1 ms spacing.
fn agreement(out: &mut String, r: &Results) {
    if r.live.is_empty() && r.spacing_full.is_empty() {
        return;
    }
    let _ = writeln!(out, "### Agreement\n\n- **live vs sim**: the live FerrumKV run against the store engine built like the server (16 shards, the server's policy seed, the live run's `maxmemory` and its corrections at the same requests), on the same {} requests. The 1-shard table above differs from both by the sharding.\n- **full vs 1 ms**: {} requests per cell replayed at full speed and with 1 ms between requests, each against its own server.\n\nBound: {AGREE_PP} percentage points.\n", r.config.requests, r.config.spacing_requests);
    let _ = writeln!(out, "| policy | pattern | live % | sim % | live − sim pp | full % | 1 ms % | full − 1 ms pp | within {AGREE_PP} pp |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
    let (mut ok, mut total) = (0, 0);
    for pol in &r.config.policies {
        for pat in &r.config.patterns {
            let live = find(&r.live, pol, pat);
            let full = find(&r.spacing_full, pol, pat);
            let paced = find(&r.spacing_paced, pol, pat);
            if live.is_none() && full.is_none() {
                continue;
            }
            let sim = live.and_then(|l| l.sim.as_ref());
            let d1 = sim.map(|s| s.difference_pp);
            let d2 = full
                .zip(paced)
                .map(|(f, p)| 100.0 * (f.live.hit_ratio - p.live.hit_ratio));
            let good = [d1, d2].iter().flatten().all(|d| d.abs() <= AGREE_PP);
            total += 1;
            ok += usize::from(good);
            let opt = |v: Option<f64>, f: fn(f64) -> String| v.map_or("–".to_owned(), f);
            let _ = writeln!(
                out,
                "| {pol} | {pat} | {} | {} | {} | {} | {} | {} | {} |",
                opt(live.map(|l| l.live.hit_ratio), |v| format!(
                    "{:.2}",
                    100.0 * v
                )),
                opt(sim.map(|s| s.hit_ratio), |v| format!("{:.2}", 100.0 * v)),
                opt(d1, |v| format!("{v:+.2}")),
                opt(full.map(|l| l.live.hit_ratio), |v| format!(
                    "{:.2}",
                    100.0 * v
                )),
                opt(paced.map(|l| l.live.hit_ratio), |v| format!(
                    "{:.2}",
                    100.0 * v
                )),
                opt(d2, |v| format!("{v:+.2}")),
                if good { "yes" } else { "**no**" }
            );
        }
    }
    let _ = writeln!(out, "\n{ok} of {total} cells within {AGREE_PP} pp.\n");
}

/// The charts, as file name and SVG text: live (or, without a live run,
/// simulated) hit ratio per policy and pattern as grouped bars, and the live
/// hit ratio over time per pattern, one line per policy.
pub(crate) fn charts(r: &Results) -> Vec<(String, String)> {
    let c = &r.config;
    let live = !r.live.is_empty();
    let ratio = |pol: &str, pat: &str| -> f64 {
        if live {
            find(&r.live, pol, pat).map_or(f64::NAN, |x| x.live.hit_ratio)
        } else {
            r.sim
                .iter()
                .find(|s| s.policy == pol && s.pattern == pat)
                .map_or(f64::NAN, |s| s.hit_ratio)
        }
    };
    let matrix = BarChart {
        title: format!(
            "{} hit ratio, {} requests per cell",
            if live { "Live FerrumKV" } else { "Simulated" },
            c.requests
        ),
        y_label: "hit ratio (%)".into(),
        categories: c.patterns.clone(),
        y_max: 1.0,
        y_tick_scale: 100.0,
        series: c
            .policies
            .iter()
            .map(|pol| Series {
                name: pol.clone(),
                values: c.patterns.iter().map(|pat| ratio(pol, pat)).collect(),
            })
            .collect(),
    };
    let mut out = vec![("hit-ratio-matrix.svg".to_owned(), matrix.to_svg())];
    for pat in c.patterns.iter().filter(|_| live) {
        let series: Vec<Series> = c
            .policies
            .iter()
            .filter_map(|pol| find(&r.live, pol, pat))
            .map(|x| Series {
                name: x.live.policy.clone(),
                values: x.live.windows.clone(),
            })
            .collect();
        let window = find(&r.live, &c.policies[0], pat).map_or(10_000, |x| x.live.window);
        let chart = LineChart {
            title: format!("{pat}: live FerrumKV hit ratio per {window} requests"),
            x_label: "requests".into(),
            y_label: "hit ratio (%)".into(),
            x_step: window as f64,
            y_max: 1.0,
            y_tick_scale: 100.0,
            series,
        };
        out.push((format!("live-hit-ratio-{pat}.svg"), chart.to_svg()));
    }
    out
}

/// The markers around the generated part of `benches/hit-ratio.md`.
pub(crate) const BEGIN: &str = "<!-- cargo xtask bench: begin (generated, do not edit) -->";
/// See [`BEGIN`].
pub(crate) const END: &str = "<!-- cargo xtask bench: end -->";

/// `existing` with the text between [`BEGIN`] and [`END`] replaced by
/// `generated` (appended, with markers, when there are none), so the
/// hand-written analysis around it survives a rerun. A file with only
/// one of the markers, or with them out of order, is an error: appending
/// would leave a second, stale copy of the generated part behind.
pub(crate) fn splice(existing: &str, generated: &str) -> anyhow::Result<String> {
    let block = format!("{BEGIN}\n\n{}\n{END}\n", generated.trim_end());
    Ok(match (existing.find(BEGIN), existing.find(END)) {
        (Some(b), Some(e)) if b < e => {
            format!(
                "{}{block}{}",
                &existing[..b],
                existing[e + END.len()..].trim_start_matches('\n')
            )
        }
        (None, None) if existing.trim().is_empty() => block,
        (None, None) => format!("{}\n\n{block}", existing.trim_end()),
        _ => anyhow::bail!(
            "the generated part's markers are missing or out of order: the file needs \
             `{BEGIN}` before `{END}`, or neither"
        ),
    })
}

#[cfg(test)]
mod tests;
