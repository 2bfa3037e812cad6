//! `cargo xtask bench`: build, start servers, run the redis-benchmark
//! scenarios and the hit-ratio matrix, write the reports.
//!
//! Everything heavy runs in release binaries: `ferrum-server`,
//! `ferrum-bench sim --json` (the store-engine simulator) and
//! `ferrum-bench live --json` (the live driver), plus Debian's
//! `redis-server` and `redis-benchmark` when installed. This file only
//! orchestrates them and collects their JSON into [`Results`].

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;
use std::{fs, thread};

use anyhow::{bail, Context, Result};
use clap::ValueEnum;
use serde_json::Value;

use crate::machine::{output, Machine};
use crate::procs::{have, ServerKind, ServerProcess};
use crate::redis_benchmark::{self, BenchRow, Scenario};
use crate::report::{self, LiveCell, Results, RunConfig};
use crate::sharded::{self, ShardedSpec};
use crate::{equal_memory, keys, throughput};

/// Flags of `cargo xtask bench`.
#[derive(Debug, clap::Args)]
pub(crate) struct Bench {
    /// A shorter run (under 10 minutes on 2 cores): 150,000 requests per
    /// hit-ratio cell (enough for `shift` to cross an epoch and `mixed` to
    /// scan once), 20,000 per spacing cell.
    #[arg(long)]
    quick: bool,
    /// Comma-separated parts to run.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "throughput,sim,live,spacing,equal-memory,keys-at-maxmemory"
    )]
    scenarios: Vec<Part>,
    /// Scales (WORKLOADS.md v2) of the equal-memory condition. Scale 1
    /// runs every --patterns pattern; larger scales run those of zipf,
    /// shift, mixed and ttl that --patterns has (scale 10 is 10x the
    /// requests per cell: add it with `--equal-memory-scales 1,10`).
    #[arg(long, value_delimiter = ',', default_value = "1")]
    equal_memory_scales: Vec<u64>,
    /// Requests per round trip of the equal-memory replays and their
    /// `M_ref` calibration (`ferrum-bench live --pipeline`): 1 replays
    /// exactly; 16 makes a scale of hundreds (caches of hundreds of
    /// thousands of entries, `maxmemory` of tens of MB) take minutes.
    #[arg(long, default_value_t = 1)]
    equal_memory_pipeline: u64,
    /// Requests per calibration round of the equal-memory `M_ref`, at
    /// scale 1 (multiplied by the scale) [default: 30000, or 20000 with
    /// --quick].
    #[arg(long)]
    calibration_requests: Option<u64>,
    /// `maxmemory` (bytes) of the keys-at-maxmemory scenario.
    #[arg(long, default_value_t = 128 << 20)]
    keys_maxmemory: u64,
    /// Value sizes (bytes) of the keys-at-maxmemory scenario [default:
    /// 32,100,1000, or 32 with --quick].
    #[arg(long, value_delimiter = ',')]
    keys_value_sizes: Option<Vec<u64>>,
    /// Requests per hit-ratio cell, simulator and live [default: 1000000,
    /// or 150000 with --quick].
    #[arg(long)]
    requests: Option<u64>,
    /// Requests per cell of the full-speed vs 1 ms spacing check [default:
    /// 100000, or 20000 with --quick].
    #[arg(long)]
    spacing_requests: Option<u64>,
    /// redis-benchmark `-n` of the single-shot baseline/pipelined/capped
    /// parts.
    #[arg(long, default_value_t = 100_000)]
    bench_requests: u64,
    /// Interleaved rounds of the throughput part [default: 5, or 3 with
    /// --quick].
    #[arg(long)]
    throughput_rounds: Option<u32>,
    /// Throughput part: `-n` of the plain default suite (LRANGE rows get a
    /// fifth) [default: 50000, or 2000 with --quick].
    #[arg(long)]
    throughput_requests: Option<u64>,
    /// Throughput part: `-n` of the `-P 16` suite (LRANGE rows get a fifth)
    /// [default: 200000, or 10000 with --quick].
    #[arg(long)]
    throughput_pipelined_requests: Option<u64>,
    /// Throughput part: `-n` of each capped SET/GET run at 16 MB (100,000
    /// random keys of 256 bytes overflow it) [default: 100000, or 10000
    /// with --quick].
    #[arg(long)]
    throughput_capped_requests: Option<u64>,
    /// Throughput part: only these plain/pipelined steps, by
    /// redis-benchmark's `-t` names (`lrange` for the LRANGE rows), e.g.
    /// `--throughput-tests set,get,hset` [default: the whole suite].
    #[arg(long, value_delimiter = ',')]
    throughput_tests: Vec<String>,
    /// redis-benchmark `-c`.
    #[arg(long, default_value_t = 50)]
    clients: u32,
    /// Comma-separated policies of the hit-ratio matrix.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "allkeys-lru,allkeys-lfu,allkeys-random,allkeys-ahe"
    )]
    policies: Vec<String>,
    /// Comma-separated policies of the capped redis-benchmark scenarios.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "allkeys-lru,allkeys-lfu,allkeys-random,allkeys-ahe"
    )]
    capped_policies: Vec<String>,
    /// Comma-separated patterns of the hit-ratio matrix.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "zipf,shift,mixed,scan,ttl"
    )]
    patterns: Vec<String>,
    /// Comma-separated policies of the sharded part.
    #[arg(long, value_delimiter = ',', default_value = "allkeys-lru,allkeys-ahe")]
    sharded_policies: Vec<String>,
    /// Comma-separated patterns of the sharded part (patterns without TTLs:
    /// its nodes keep their own clocks).
    #[arg(long, value_delimiter = ',', default_value = "zipf,shift,mixed")]
    sharded_patterns: Vec<String>,
    /// Comma-separated patterns of the restart part.
    #[arg(long, value_delimiter = ',', default_value = "zipf,mixed,ttl")]
    restart_patterns: Vec<String>,
    /// Comma-separated requests per replay of the restart part, a table
    /// per length, the restart at half [default: 40000,200000, or 40000
    /// with --quick].
    #[arg(long, value_delimiter = ',')]
    restart_requests: Vec<u64>,
    /// Keys of the bgsave part (`DEBUG POPULATE`) [default: 1000000, or
    /// 100000 with --quick].
    #[arg(long)]
    bgsave_keys: Option<u64>,
    /// Value size of the bgsave part, bytes.
    #[arg(long, default_value_t = 1000)]
    bgsave_value_bytes: u64,
    /// Interleaved rounds of the bgsave part [default: 3, or 1 with
    /// --quick].
    #[arg(long)]
    bgsave_rounds: Option<u32>,
    /// Seeds per cell of the restart part, from --seed on, averaged
    /// [default: 5, or 2 with --quick].
    #[arg(long)]
    restart_seeds: Option<usize>,
    /// Seed of every workload.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Where the traces scenario also looks for traces (`*.csv`,
    /// `*.csv.zst`), before the committed `benches/traces` [default:
    /// `../shared/traces` when it is there]. `--quick` runs two small ones.
    #[arg(long)]
    traces: Option<PathBuf>,
    /// Do not run Redis even when it is installed.
    #[arg(long)]
    no_redis: bool,
    /// Where the markdown reports and charts go.
    #[arg(long, default_value = "benches")]
    out: PathBuf,
    /// Use the release binaries already built.
    #[arg(long)]
    skip_build: bool,
    /// Serve the live run's FerrumKV metrics at this address (for example
    /// `127.0.0.1:9379`, the README's Prometheus target), so Grafana shows
    /// the hit ratio and AHE's state move while the bench runs. Each policy
    /// has its own server; the first policy's serves the metrics.
    #[arg(long)]
    metrics_addr: Option<String>,
}

/// The parts of a benchmark run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Part {
    /// FerrumKV against Redis, interleaved rounds of redis-benchmark's
    /// default suite (plain and `-P 16`) and capped SET/GET per policy,
    /// medians, ratio spread and a Redis A/A column (needs redis-server
    /// and redis-benchmark).
    Throughput,
    /// redis-benchmark, no eviction, one shot per server (no ratio
    /// spread: use `throughput` for comparisons).
    Baseline,
    /// redis-benchmark with `-P 16`.
    Pipelined,
    /// redis-benchmark at `maxmemory 16mb`, per capped policy.
    Capped,
    /// The hit-ratio matrix in the store-engine simulator.
    Sim,
    /// The hit-ratio matrix on live servers (FerrumKV, and Redis's own
    /// policies when installed).
    Live,
    /// Full speed against 1 ms spacing on the live server.
    Spacing,
    /// WORKLOADS.md v2 equal memory: Redis allkeys-lru's `M_ref` for
    /// every policy of both servers (needs redis-server).
    EqualMemory,
    /// Keys held at `maxmemory 128mb`, both servers, one at a time.
    KeysAtMaxmemory,
    /// Three FerrumKV nodes behind twemproxy with a third of the memory
    /// each, against one node with all of it (needs nutcracker; not in the
    /// default list).
    Sharded,
    /// What a restart from the snapshot costs in hit ratio, every policy
    /// of both servers (not in the default list).
    Restart,
    /// What `BGSAVE` costs while clients write: wall time, p99, memory,
    /// both servers interleaved (needs redis-benchmark; not in the default
    /// list).
    Bgsave,
    /// Every real trace (`benches/traces` and `--traces DIR`) through
    /// FerrumKV's policies beside libCacheSim's algorithms, written to
    /// `benches/traces.md` and `traces.svg` (needs python3 and PyPI for
    /// `libcachesim`; not in the default list).
    Traces,
}

/// Paths a run uses.
struct Paths {
    root: PathBuf,
    target: PathBuf,
    run_dir: PathBuf,
}

impl Paths {
    fn bench_bin(&self) -> PathBuf {
        self.target.join("release/ferrum-bench")
    }
}

impl Bench {
    /// Runs the benchmark; see the module docs.
    pub(crate) fn run(self) -> Result<()> {
        let started = Instant::now();
        let root = crate::workspace_root()?;
        std::env::set_current_dir(&root)?;
        let target = crate::target_dir(&root);
        if self
            .scenarios
            .iter()
            .any(|p| matches!(p, Part::Sim | Part::Live))
        {
            // Checked now rather than after the run: the report is
            // spliced into this file's hand-written text at the end.
            let path = self.out.join("hit-ratio.md");
            let existing = fs::read_to_string(&path).unwrap_or_default();
            report::splice(&existing, "").with_context(|| path.display().to_string())?;
        }
        let run = output("date", &["-u", "+%Y%m%dT%H%M%SZ"]).unwrap_or_else(|| "run".into());
        let run_dir = target.join("bench").join(&run);
        fs::create_dir_all(&run_dir)
            .with_context(|| format!("cannot create {}", run_dir.display()))?;
        let paths = Paths {
            root,
            target,
            run_dir,
        };
        let requests = self
            .requests
            .unwrap_or(if self.quick { 150_000 } else { 1_000_000 });
        let spacing_requests =
            self.spacing_requests
                .unwrap_or(if self.quick { 20_000 } else { 100_000 });

        if !self.skip_build {
            step("building release binaries");
            let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
                .args([
                    "build",
                    "--release",
                    "-p",
                    "ferrum-server",
                    "-p",
                    "ferrum-bench",
                ])
                .status()
                .context("cannot run cargo build")?;
            if !status.success() {
                bail!("cargo build --release failed");
            }
        }
        let machine = Machine::detect();
        let mut skipped = Vec::new();
        let want_redis_server = !self.no_redis && have("redis-server");
        if !self.no_redis && !want_redis_server {
            skipped.push(note(
                "redis-server is not installed (apt-get install redis-server): Redis rows skipped",
            ));
        }
        let mut results = Results {
            run,
            seed: self.seed,
            quick: self.quick,
            machine,
            config: RunConfig {
                requests,
                spacing_requests,
                bench_requests: self.bench_requests,
                clients: self.clients,
                policies: self.policies.clone(),
                capped_policies: self.capped_policies.clone(),
                patterns: self.patterns.clone(),
            },
            commands: vec![format!(
                "cargo xtask {}",
                std::env::args().skip(1).collect::<Vec<_>>().join(" ")
            )],
            skipped: Vec::new(),
            redis_benchmark: Vec::new(),
            sim: Vec::new(),
            live: Vec::new(),
            redis_live: Vec::new(),
            spacing_full: Vec::new(),
            spacing_paced: Vec::new(),
            equal_memory: Vec::new(),
            keys_at_maxmemory: Vec::new(),
            sharded: None,
            throughput_spec: None,
            throughput: Vec::new(),
            throughput_load: Vec::new(),
            restart: Vec::new(),
            restart_patterns: Vec::new(),
            restart_lengths: Vec::new(),
            bgsave: Vec::new(),
        };

        let has = |p: Part| self.scenarios.contains(&p);
        if has(Part::Baseline) || has(Part::Pipelined) || has(Part::Capped) {
            if have("redis-benchmark") {
                results.redis_benchmark =
                    self.redis_benchmark(&paths, want_redis_server, &mut results.commands)?;
            } else {
                skipped.push(note(
                    "redis-benchmark is not installed (apt-get install redis-tools): throughput scenarios skipped",
                ));
            }
        }
        if has(Part::Throughput) {
            if !have("redis-benchmark") {
                skipped.push(note(
                    "throughput needs redis-benchmark (apt-get install redis-tools): skipped",
                ));
            } else if !want_redis_server {
                skipped.push(note(
                    "throughput needs redis-server to compare with (apt-get install redis-server): skipped",
                ));
            } else {
                let spec = self.throughput_spec();
                step(&format!(
                    "throughput: {} interleaved rounds of FerrumKV, Redis and Redis again (A/A); -n {} plain, {} with -P 16, {} capped",
                    spec.rounds, spec.requests, spec.pipelined_requests, spec.capped_requests
                ));
                results.commands.extend(throughput::command_lines(&spec));
                let started = Instant::now();
                let (samples, loads) = throughput::run(&spec, &paths.target, &paths.run_dir)?;
                results.throughput = samples;
                results.throughput_load = loads;
                eprintln!(
                    "  throughput took {:.1} min",
                    started.elapsed().as_secs_f64() / 60.0
                );
                println!(
                    "{}",
                    throughput::table(&throughput::rows(&results.throughput))
                );
                results.throughput_spec = Some(spec);
            }
        }
        // The spacing check is mostly idle waiting (1 ms per request), so it
        // runs on its own servers alongside the full-speed work.
        let spacing = has(Part::Spacing).then(|| {
            let args = self.live_args(spacing_requests);
            let policies = self.policies.clone();
            let bench = paths.bench_bin();
            let (target, run_dir) = (paths.target.clone(), paths.run_dir.clone());
            results.commands.push(format!(
                "ferrum-bench live {} --compare-sim --json [--spacing-ms 1]",
                args.join(" ")
            ));
            thread::spawn(move || spacing_check(&bench, &target, &run_dir, &policies, &args))
        });
        if has(Part::Sim) {
            step(&format!(
                "simulator: {} policies x {} patterns, {requests} requests per cell",
                self.policies.len(),
                self.patterns.len()
            ));
            let args = self.sim_args(requests);
            results
                .commands
                .push(format!("ferrum-bench {}", args.join(" ")));
            let json = run_json(&paths.bench_bin(), &args, None)?;
            results.sim = serde_json::from_value(json["cells"].clone())
                .context("unexpected ferrum-bench sim output")?;
        }
        if has(Part::Live) {
            // One server and one driver per policy, all at once: a replay is
            // one request in flight at a time, bound by round trips rather
            // than CPU, so the cells overlap well even on two cores. Each
            // FerrumKV cell runs on its own virtual clock and gives the
            // same figures however it is scheduled.
            step(&format!(
                "live: FerrumKV{}, {requests} requests per cell, one server per policy",
                if want_redis_server {
                    " and Redis allkeys-lru,allkeys-lfu,allkeys-random"
                } else {
                    ""
                }
            ));
            let mut compare = self.live_args(requests);
            compare.push("--compare-sim".into());
            results.commands.push(format!(
                "ferrum-bench live {} --json (one server per policy)",
                compare.join(" ")
            ));
            let ferrum = LiveGroup {
                kind: ServerKind::Ferrum,
                policies: self.policies.clone(),
                args: compare,
                first_server_args: match &self.metrics_addr {
                    Some(addr) => vec!["--metrics-addr".into(), addr.clone()],
                    None => Vec::new(),
                },
            }
            .spawn(&paths);
            let redis = want_redis_server.then(|| {
                let policies: Vec<String> = ["allkeys-lru", "allkeys-lfu", "allkeys-random"]
                    .map(String::from)
                    .to_vec();
                let args = self.live_args_for(&policies, requests);
                results.commands.push(format!(
                    "ferrum-bench live {} --json (against redis-server, one per policy)",
                    args.join(" ")
                ));
                LiveGroup {
                    kind: ServerKind::Redis,
                    policies,
                    args,
                    first_server_args: Vec::new(),
                }
                .spawn(&paths)
            });
            results.live = join_cells(ferrum)?;
            if let Some(redis) = redis {
                results.redis_live = join_cells(redis)?;
            }
        }
        if has(Part::EqualMemory) {
            if want_redis_server {
                for &scale in &self.equal_memory_scales {
                    let run = self.equal_memory(&paths, scale, requests, &mut results.commands)?;
                    results.equal_memory.push(run);
                }
            } else {
                skipped.push(note(
                    "equal memory needs redis-server for M_ref (apt-get install redis-server): skipped",
                ));
            }
        }
        if has(Part::KeysAtMaxmemory) {
            let sizes = self.keys_value_sizes.clone().unwrap_or(if self.quick {
                vec![32]
            } else {
                vec![32, 100, 1000]
            });
            step(&format!(
                "keys at maxmemory {} bytes, values of {sizes:?} bytes, one server at a time",
                self.keys_maxmemory
            ));
            let mut servers = Vec::new();
            if want_redis_server {
                servers.extend(
                    ["allkeys-lru", "allkeys-lfu"].map(|p| (ServerKind::Redis, p.to_owned())),
                );
            }
            servers.extend(
                self.policies
                    .iter()
                    .map(|p| (ServerKind::Ferrum, p.clone())),
            );
            let spec = keys::KeysSpec {
                maxmemory: self.keys_maxmemory,
                value_sizes: sizes,
                overflow: 3,
                servers,
            };
            results.commands.push(format!(
                "keys at maxmemory: {spec:?} (as scripts/keys-at-maxmemory.sh)"
            ));
            let started = Instant::now();
            results.keys_at_maxmemory = keys::run(&spec, &paths.target, &paths.run_dir)?;
            eprintln!(
                "  keys at maxmemory took {:.1} min",
                started.elapsed().as_secs_f64() / 60.0
            );
        }
        if has(Part::Sharded) {
            let mut routes = vec![sharded::Route::Cluster];
            if ferrum_bench::twemproxy::available() {
                routes.insert(0, sharded::Route::Proxy);
            } else {
                skipped.push(note(
                    "sharded behind twemproxy needs nutcracker (apt-get install nutcracker): skipped",
                ));
            }
            let spec = ShardedSpec {
                routes,
                policies: self.sharded_policies.clone(),
                patterns: self.sharded_patterns.clone(),
                requests,
                calibration_requests: if self.quick { 20_000 } else { 30_000 },
                seed: self.seed,
            };
            let routes: Vec<&str> = spec.routes.iter().map(|r| r.name()).collect();
            step(&format!(
                "sharded: 3 FerrumKV nodes against 1, by route {}, {requests} requests per cell",
                routes.join(" and ")
            ));
            results.commands.extend(spec.command_lines());
            let started = Instant::now();
            let json = sharded::run(&spec, &paths.bench_bin(), &paths.target, &paths.run_dir)?;
            eprintln!(
                "  sharded took {:.1} min",
                started.elapsed().as_secs_f64() / 60.0
            );
            if let Some(table) = json["markdown"].as_str() {
                println!("{table}");
            }
            results.sharded = Some(json);
        }
        if has(Part::Restart) {
            let mut servers: Vec<(ServerKind, String)> = self
                .policies
                .iter()
                .map(|p| (ServerKind::Ferrum, p.clone()))
                .collect();
            if want_redis_server {
                servers.extend(
                    ["allkeys-lru", "allkeys-lfu"].map(|p| (ServerKind::Redis, p.to_owned())),
                );
            }
            let spec = crate::restart::RestartSpec {
                capacity: ferrum_bench::workload::CAPACITY as u64,
                lengths: match (&self.restart_requests[..], self.quick) {
                    ([], true) => vec![40_000],
                    ([], false) => vec![40_000, 200_000],
                    (given, _) => given.to_vec(),
                },
                seeds: (self.seed..)
                    .take(self.restart_seeds.unwrap_or(if self.quick { 2 } else { 5 }))
                    .collect(),
                patterns: self.restart_patterns.clone(),
                servers,
            };
            step(&format!(
                "restart: {:?} requests per replay, restarted at half, {} servers",
                spec.lengths,
                spec.servers.len()
            ));
            results.commands.extend(spec.command_lines());
            let started = Instant::now();
            results.restart =
                crate::restart::run(&spec, &paths.bench_bin(), &paths.target, &paths.run_dir)?;
            results.restart_patterns = spec.patterns.clone();
            results.restart_lengths = spec.lengths.clone();
            eprintln!(
                "  restart took {:.1} min",
                started.elapsed().as_secs_f64() / 60.0
            );
        }
        if has(Part::Bgsave) {
            if have("redis-benchmark") {
                let mut servers = vec![ServerKind::Ferrum];
                if want_redis_server {
                    servers.push(ServerKind::Redis);
                }
                let spec = crate::bgsave::BgsaveSpec {
                    keys: (self.bgsave_keys).unwrap_or(if self.quick {
                        100_000
                    } else {
                        1_000_000
                    }),
                    value_bytes: self.bgsave_value_bytes,
                    rounds: (self.bgsave_rounds).unwrap_or(if self.quick { 1 } else { 3 }),
                    requests: 20_000,
                    servers,
                };
                step(&format!(
                    "bgsave: {} keys of {} bytes, {} rounds",
                    spec.keys, spec.value_bytes, spec.rounds
                ));
                results.commands.extend(spec.command_lines());
                results.bgsave = crate::bgsave::run(&spec, &paths.target, &paths.run_dir)?;
            } else {
                results.skipped.push(
                    "redis-benchmark is not installed (apt-get install redis-tools): bgsave skipped"
                        .into(),
                );
            }
        }
        let mut written_traces = Vec::new();
        if has(Part::Traces) {
            let spec = crate::traces::TracesSpec {
                dirs: crate::traces::dirs(&paths.root, self.traces.as_deref()),
                quick: self.quick,
                policies: self.policies.clone(),
                seed: self.seed,
            };
            step(&format!(
                "traces{}: from {}",
                if spec.quick { " (quick)" } else { "" },
                spec.dirs
                    .iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" and ")
            ));
            let run = crate::traces::run(&spec, &paths.root, &paths.bench_bin(), &paths.run_dir)?;
            fs::write(
                paths.run_dir.join("traces.json"),
                serde_json::to_string_pretty(&run)?,
            )?;
            let out = paths.root.join(&self.out);
            fs::create_dir_all(&out)?;
            fs::write(
                out.join("traces.md"),
                crate::traces::markdown(&run, &self.policies),
            )?;
            fs::write(out.join("traces.svg"), crate::traces::chart(&run))?;
            written_traces.push(self.out.join("traces.md"));
            written_traces.push(self.out.join("traces.svg"));
        }
        if let Some(handle) = spacing {
            step("waiting for the 1 ms spacing check");
            let (full, paced) = handle
                .join()
                .map_err(|_| anyhow::anyhow!("the spacing check panicked"))??;
            results.spacing_full = full;
            results.spacing_paced = paced;
        }
        results.skipped = skipped;
        let mut written = self.write(&paths, &results)?;
        written.extend(written_traces);
        let written: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
        step(&format!(
            "done in {:.1} min: {}",
            started.elapsed().as_secs_f64() / 60.0,
            if written.is_empty() {
                "no report (every scenario was skipped)".to_owned()
            } else {
                written.join(", ")
            }
        ));
        Ok(())
    }

    fn redis_benchmark(
        &self,
        paths: &Paths,
        with_redis: bool,
        commands: &mut Vec<String>,
    ) -> Result<Vec<BenchRow>> {
        let mut scenarios = Vec::new();
        if self.scenarios.contains(&Part::Baseline) {
            scenarios.push(Scenario::baseline());
        }
        if self.scenarios.contains(&Part::Pipelined) {
            scenarios.push(Scenario::pipelined());
        }
        if self.scenarios.contains(&Part::Capped) {
            scenarios.extend(self.capped_policies.iter().map(|p| Scenario::capped(p)));
        }
        let mut rows = Vec::new();
        let kinds: &[ServerKind] = if with_redis {
            &[ServerKind::Ferrum, ServerKind::Redis]
        } else {
            &[ServerKind::Ferrum]
        };
        for (i, s) in scenarios.iter().enumerate() {
            for &kind in kinds {
                let redis = kind == ServerKind::Redis;
                let server_args = s.server_args(redis);
                let policy = server_args.get(3).cloned().unwrap_or_else(|| "-".into());
                step(&format!(
                    "redis-benchmark {}/{}: {} on {} ({policy})",
                    i + 1,
                    scenarios.len(),
                    s.name,
                    kind.name()
                ));
                let refs: Vec<&str> = server_args.iter().map(String::as_str).collect();
                let log = paths
                    .run_dir
                    .join(format!("{}-{}.log", kind.name(), s.name));
                let server = match ServerProcess::start(kind, &paths.target, &refs, &log) {
                    Ok(server) => server,
                    Err(e) => {
                        eprintln!("  skipped: {e:#}");
                        continue;
                    }
                };
                let args = redis_benchmark::command_line(
                    s,
                    server.port,
                    self.bench_requests,
                    self.clients,
                );
                if kind == ServerKind::Ferrum {
                    commands.push(format!(
                        "redis-benchmark {}  # server: {}",
                        args.join(" "),
                        server_args.join(" ")
                    ));
                }
                for (test, rps, p50, p99) in redis_benchmark::run(&args)? {
                    eprintln!("  {test}: {rps:.0} req/s, p50 {p50} ms, p99 {p99} ms");
                    rows.push(BenchRow {
                        scenario: s.name.clone(),
                        server: kind.name().into(),
                        policy: policy.clone(),
                        test,
                        rps,
                        p50_ms: p50,
                        p99_ms: p99,
                    });
                }
            }
        }
        Ok(rows)
    }

    /// The equal-memory condition at `scale`; see `equal_memory.rs`.
    fn equal_memory(
        &self,
        paths: &Paths,
        scale: u64,
        requests: u64,
        commands: &mut Vec<String>,
    ) -> Result<equal_memory::EqualMemoryRun> {
        let patterns: Vec<String> = self
            .patterns
            .iter()
            .filter(|p| scale == 1 || ["zipf", "shift", "mixed", "ttl"].contains(&p.as_str()))
            .cloned()
            .collect();
        let mut servers: Vec<(ServerKind, String)> = self
            .policies
            .iter()
            .map(|p| (ServerKind::Ferrum, p.clone()))
            .collect();
        servers.extend(["allkeys-lru", "allkeys-lfu"].map(|p| (ServerKind::Redis, p.to_owned())));
        let calibration =
            self.calibration_requests
                .unwrap_or(if self.quick { 20_000 } else { 30_000 });
        let spec = equal_memory::EqualSpec {
            scale,
            requests: requests * scale,
            calibration_requests: calibration * scale,
            pipeline: self.equal_memory_pipeline,
            seed: self.seed,
            patterns,
            servers,
        };
        step(&format!(
            "equal memory at scale {scale}: M_ref from Redis allkeys-lru, then {} servers x {} patterns, {} requests per cell",
            spec.servers.len(),
            spec.patterns.len(),
            spec.requests
        ));
        commands.push(format!(
            "ferrum-bench {}  # M_ref, against redis-server allkeys-lru",
            spec.reference_args(0)
                .join(" ")
                .replace("--port 0", "--port PORT")
        ));
        commands.push(format!(
            "ferrum-bench live --json --scale {scale} --seed {} --pipeline {} --requests {} --policies P --patterns X --maxmemory M_ref(X) --fixed-maxmemory  # per (server, policy, pattern)",
            spec.seed, spec.pipeline, spec.requests
        ));
        let run = equal_memory::run(&spec, &paths.bench_bin(), &paths.target, &paths.run_dir)?;
        eprintln!(
            "  equal memory at scale {scale} took {:.1} min",
            run.elapsed_seconds / 60.0
        );
        Ok(run)
    }

    fn throughput_spec(&self) -> throughput::ThroughputSpec {
        let q = self.quick;
        throughput::ThroughputSpec {
            rounds: self.throughput_rounds.unwrap_or(if q { 3 } else { 5 }),
            requests: self
                .throughput_requests
                .unwrap_or(if q { 2_000 } else { 50_000 }),
            pipelined_requests: self.throughput_pipelined_requests.unwrap_or(if q {
                10_000
            } else {
                200_000
            }),
            capped_requests: self.throughput_capped_requests.unwrap_or(if q {
                10_000
            } else {
                100_000
            }),
            clients: self.clients,
            capped_policies: self.capped_policies.clone(),
            tests: self.throughput_tests.clone(),
        }
    }

    fn sim_args(&self, requests: u64) -> Vec<String> {
        vec![
            "sim".into(),
            "--json".into(),
            "--requests".into(),
            requests.to_string(),
            "--seed".into(),
            self.seed.to_string(),
            "--policies".into(),
            self.policies.join(","),
            "--patterns".into(),
            self.patterns.join(","),
        ]
    }

    fn live_args(&self, requests: u64) -> Vec<String> {
        self.live_args_for(&self.policies, requests)
    }

    fn live_args_for(&self, policies: &[String], requests: u64) -> Vec<String> {
        // Quick runs calibrate on a shorter prefix: every pattern is at
        // steady state after 20,000 requests, and the driver holds the
        // capacity during the run.
        let calibration = if self.quick { 20_000 } else { 30_000 };
        vec![
            "--calibration-requests".into(),
            calibration.to_string(),
            "--requests".into(),
            requests.to_string(),
            "--seed".into(),
            self.seed.to_string(),
            "--policies".into(),
            policies.join(","),
            "--patterns".into(),
            self.patterns.join(","),
        ]
    }

    /// Writes `results.json` and the reports the results fill; returns the
    /// reports written (relative to the workspace root when inside it).
    fn write(&self, paths: &Paths, results: &Results) -> Result<Vec<PathBuf>> {
        let json = paths.run_dir.join("results.json");
        fs::write(&json, serde_json::to_string_pretty(results)?)
            .with_context(|| format!("cannot write {}", json.display()))?;
        let out = paths.root.join(&self.out);
        let mut written = Vec::new();
        if !results.redis_benchmark.is_empty() {
            fs::create_dir_all(&out)?;
            fs::write(
                out.join("redis-benchmark.md"),
                report::redis_benchmark_md(results),
            )?;
            written.push(self.out.join("redis-benchmark.md"));
        }
        if !results.throughput.is_empty() {
            fs::create_dir_all(&out)?;
            fs::write(out.join("throughput.md"), report::throughput_md(results))?;
            written.push(self.out.join("throughput.md"));
        }
        if let Some(table) = results
            .sharded
            .as_ref()
            .and_then(|j| j["markdown"].as_str())
        {
            fs::create_dir_all(&out)?;
            fs::write(out.join("sharded.md"), report::sharded_md(results, table))?;
            written.push(self.out.join("sharded.md"));
        }
        // Scale 1 in `equal-memory.md`; each larger scale, whose runs take
        // other options (`--equal-memory-pipeline`), in a file of its own.
        let mut scales: Vec<u64> = results.equal_memory.iter().map(|r| r.scale).collect();
        scales.sort_unstable();
        scales.dedup();
        let small: Vec<u64> = scales.iter().copied().filter(|&s| s <= 10).collect();
        let mut files: Vec<(String, Vec<u64>)> = Vec::new();
        if !small.is_empty() {
            files.push(("equal-memory.md".into(), small));
        }
        for s in scales.into_iter().filter(|&s| s > 10) {
            files.push((format!("equal-memory-s{s}.md"), vec![s]));
        }
        for (name, keep) in files {
            fs::create_dir_all(&out)?;
            let text = report::equal_memory_md(results, |s| keep.contains(&s));
            fs::write(out.join(&name), text)?;
            written.push(self.out.join(name));
        }
        if !results.keys_at_maxmemory.is_empty() {
            fs::create_dir_all(&out)?;
            fs::write(
                out.join("keys-at-maxmemory.md"),
                report::keys_at_maxmemory_md(results),
            )?;
            written.push(self.out.join("keys-at-maxmemory.md"));
        }
        if !results.bgsave.is_empty() {
            fs::create_dir_all(&out)?;
            fs::write(out.join("bgsave.md"), report::bgsave_md(results))?;
            written.push(self.out.join("bgsave.md"));
        }
        if !results.restart.is_empty() {
            fs::create_dir_all(&out)?;
            fs::write(out.join("restart.md"), report::restart_md(results))?;
            written.push(self.out.join("restart.md"));
        }
        if !results.sim.is_empty() || !results.live.is_empty() {
            // The file also holds hand-written analysis (AHE against its
            // targets): replace only the generated block.
            fs::create_dir_all(&out)?;
            let path = out.join("hit-ratio.md");
            let existing = fs::read_to_string(&path).unwrap_or_default();
            let spliced =
                report::splice(&existing, &report::hit_ratio_md(results)).with_context(|| {
                    format!("{} (results kept in {})", path.display(), json.display())
                })?;
            fs::write(&path, spliced)?;
            written.push(self.out.join("hit-ratio.md"));
            for (name, svg) in report::charts(results) {
                fs::write(out.join(&name), svg)?;
                written.push(self.out.join(name));
            }
        }
        eprintln!("results: {}", json.display());
        Ok(written)
    }
}

/// The live cells of one server kind: a server and a `ferrum-bench live`
/// per policy, run in parallel.
struct LiveGroup {
    kind: ServerKind,
    policies: Vec<String>,
    /// `ferrum-bench live` arguments; `--policies` is replaced per thread.
    args: Vec<String>,
    /// Extra server options for the first policy's server only (a metrics
    /// address can be bound once).
    first_server_args: Vec<String>,
}

type CellsHandle = thread::JoinHandle<Result<Vec<LiveCell>>>;

impl LiveGroup {
    fn spawn(self, paths: &Paths) -> Vec<CellsHandle> {
        let name = match self.kind {
            ServerKind::Ferrum => "ferrum",
            ServerKind::Redis => "redis",
        };
        self.policies
            .iter()
            .enumerate()
            .map(|(i, policy)| {
                let (bench, target) = (paths.bench_bin(), paths.target.clone());
                let log = paths.run_dir.join(format!("{name}-live-{policy}.log"));
                let server_args = if i == 0 {
                    self.first_server_args.clone()
                } else {
                    Vec::new()
                };
                let mut args = with_policy(&self.args, policy);
                let (kind, policy) = (self.kind, policy.clone());
                thread::spawn(move || -> Result<Vec<LiveCell>> {
                    let server_args: Vec<&str> = server_args.iter().map(String::as_str).collect();
                    let server = ServerProcess::start(kind, &target, &server_args, &log)?;
                    args.extend(["--port".into(), server.port.to_string()]);
                    let cells = cells(run_json(&bench, &live(&args), None)?)?;
                    eprintln!("\n  live done: {name} {policy}");
                    Ok(cells)
                })
            })
            .collect()
    }
}

/// The cells of every thread, in policy order.
fn join_cells(handles: Vec<CellsHandle>) -> Result<Vec<LiveCell>> {
    join_all(handles, "live")
}

/// Every cell the threads made, in the threads' order; `what` names the
/// part in the error when one panicked.
pub(crate) fn join_all<T>(
    handles: Vec<thread::JoinHandle<Result<Vec<T>>>>,
    what: &str,
) -> Result<Vec<T>> {
    let mut all = Vec::new();
    for h in handles {
        all.extend(
            h.join()
                .map_err(|_| anyhow::anyhow!("a {what} thread panicked"))??,
        );
    }
    Ok(all)
}

/// `args` with its `--policies` value replaced by `policy`.
fn with_policy(args: &[String], policy: &str) -> Vec<String> {
    let mut args = args.to_vec();
    if let Some(i) = args.iter().position(|a| a == "--policies") {
        args[i + 1] = policy.to_owned();
    }
    args
}

/// `live` followed by `args` and `--json`.
fn live(args: &[String]) -> Vec<String> {
    let mut all = vec!["live".to_owned(), "--json".to_owned()];
    all.extend(args.iter().cloned());
    all
}

/// Runs `bin args`, progress on stderr (or into `log`), and parses the JSON
/// it prints.
pub(crate) fn run_json(bin: &Path, args: &[String], log: Option<&Path>) -> Result<Value> {
    let stderr = match log {
        Some(path) => Stdio::from(fs::File::create(path)?),
        None => Stdio::inherit(),
    };
    let out = Command::new(bin)
        .args(args)
        .stderr(stderr)
        .output()
        .with_context(|| format!("cannot run {}", bin.display()))?;
    if !out.status.success() {
        bail!(
            "{} {} failed ({})",
            bin.display(),
            args.join(" "),
            out.status
        );
    }
    serde_json::from_slice(&out.stdout)
        .with_context(|| format!("{} {} printed no JSON", bin.display(), args.join(" ")))
}

fn cells(json: Value) -> Result<Vec<LiveCell>> {
    serde_json::from_value(json).context("unexpected ferrum-bench live output")
}

/// Full speed, then 1 ms spacing, for each policy on its own FerrumKV
/// (one thread per policy: they wait far more than they work).
fn spacing_check(
    bench: &Path,
    target: &Path,
    run_dir: &Path,
    policies: &[String],
    args: &[String],
) -> Result<(Vec<LiveCell>, Vec<LiveCell>)> {
    let handles: Vec<_> = policies
        .iter()
        .map(|policy| {
            let (bench, target, run_dir) =
                (bench.to_owned(), target.to_owned(), run_dir.to_owned());
            let mut args = with_policy(args, policy);
            let policy = policy.clone();
            thread::spawn(move || -> Result<(Vec<LiveCell>, Vec<LiveCell>)> {
                let log = run_dir.join(format!("ferrum-spacing-{policy}.log"));
                let server = ServerProcess::start(ServerKind::Ferrum, &target, &[], &log)?;
                args.extend(["--port".into(), server.port.to_string()]);
                let full_log = run_dir.join(format!("spacing-full-{policy}.log"));
                let full = cells(run_json(&bench, &live(&args), Some(&full_log))?)?;
                args.extend(["--spacing-ms".into(), "1".into()]);
                let paced_log = run_dir.join(format!("spacing-paced-{policy}.log"));
                let paced = cells(run_json(&bench, &live(&args), Some(&paced_log))?)?;
                eprintln!("  spacing check done: {policy}");
                Ok((full, paced))
            })
        })
        .collect();
    let (mut full, mut paced) = (Vec::new(), Vec::new());
    for h in handles {
        let (f, p) = h
            .join()
            .map_err(|_| anyhow::anyhow!("a spacing thread panicked"))??;
        full.extend(f);
        paced.extend(p);
    }
    Ok((full, paced))
}

fn step(what: &str) {
    eprintln!("==> {what}");
}

fn note(what: &str) -> String {
    eprintln!("note: {what}");
    what.to_owned()
}
