//! The `ferrum-bench` command line: run the hit-ratio matrix in the
//! simulator, export workloads as trace files, replay trace files, and
//! replay workloads against a live server (`live`, in `live_cmd.rs`) or
//! through twemproxy or a cluster-aware client to several (`sharded`, in
//! `sharded_cmd.rs`).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use ferrum_bench::matrix::{Engine, Matrix, MatrixSpec};
use ferrum_bench::sim::{simulate, SimConfig};
use ferrum_bench::trace::{read_trace_file, write_oracle_general, write_trace};
use ferrum_bench::workload::{self, Pattern, Workload};
use ferrum_evict::{PolicyConfig, PolicyKind};

mod live_cmd;
mod sharded_cmd;

/// FerrumKV hit-ratio benchmarks (WORKLOADS.md).
#[derive(Debug, Parser)]
#[command(name = "ferrum-bench", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Simulate every policy on every pattern and print the hit-ratio
    /// matrix (percent) as a markdown table, or JSON with --json.
    Sim(SimArgs),
    /// Write a pattern's requests as a `timestamp_ms,key,ttl_ms` CSV trace.
    ExportTrace(ExportArgs),
    /// Replay a CSV trace (`.csv`, or zstd-compressed `.csv.zst`) against
    /// each policy at each capacity and print the hit ratios.
    Replay(ReplayArgs),
    /// Convert a CSV trace to libCacheSim's `oracleGeneral` binary format
    /// (unit sizes, next-use indices for Belady), so libCacheSim replays
    /// the same requests; prints the request and key counts as JSON.
    ToLibcachesim(ToLibcachesimArgs),
    /// Replay patterns or a trace against a live FerrumKV or Redis server
    /// and report the server's own hit ratio.
    Live(live_cmd::LiveArgs),
    /// Replay patterns through twemproxy or a cluster-aware client to
    /// several nodes, each with a share of the memory, and report the hit ratio next to one node with
    /// all of it.
    Sharded(sharded_cmd::ShardedArgs),
}

#[derive(Debug, Args)]
struct SimArgs {
    /// Requests per (policy, pattern) cell [default: 1,000,000·scale].
    #[arg(long)]
    requests: Option<u64>,
    /// WORKLOADS.md v2 scale `S`: keyspace 100,000·S, and the patterns'
    /// epochs, scans and TTLs scaled to match.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
    scale: u64,
    /// Seed of every workload and policy.
    #[arg(long, default_value_t = workload::SEED)]
    seed: u64,
    /// Cache capacity in entries [default: 5,000·scale].
    #[arg(long)]
    capacity: Option<usize>,
    /// Comma-separated `maxmemory-policy` names.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "allkeys-lru,allkeys-lfu,allkeys-random,allkeys-ahe"
    )]
    policies: Vec<PolicyKind>,
    /// Comma-separated patterns (`zipf,shift,mixed,scan,ttl` are
    /// WORKLOADS.md v1; `loop,zipf06,onehit,phase` are our adversarial
    /// additions).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "zipf,shift,mixed,scan,ttl,loop,zipf06,onehit,phase"
    )]
    patterns: Vec<Pattern>,
    /// Requests per window of the hit-ratio series in the JSON output.
    #[arg(long, default_value_t = 10_000)]
    window: u64,
    /// Print JSON (spec, hit ratios, counters, windowed series) instead of
    /// the markdown tables.
    #[arg(long)]
    json: bool,
    /// `store` replays through the server's own keyspace code (bytes,
    /// expiry, eviction), `maxmemory` calibrated per policy to the capacity;
    /// `equal-memory` the same under one `maxmemory` per pattern (allkeys-lru's
    /// at the capacity) for every policy; `policy` drives the policy over an
    /// entry-counted slab, faster.
    #[arg(long, value_enum, default_value_t = Engine::Store)]
    engine: Engine,
    /// Shards of the store engine: 1 shows the policy on the whole cache,
    /// 16 the server's layout (each shard evicting its own keys).
    #[arg(long, default_value_t = 1)]
    shards: usize,
    /// Also write SVG charts into this directory: the hit ratio over time
    /// per pattern (`hit-ratio-<pattern>.svg`, one line per policy) and
    /// AHE's small target share over time (`<policy>-small-share.svg`,
    /// one line per pattern).
    #[arg(long)]
    charts: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct ExportArgs {
    /// The pattern to export.
    #[arg(long)]
    pattern: Pattern,
    /// Where to write the trace (`-` for standard output).
    #[arg(long)]
    out: PathBuf,
    /// Requests to write [default: 1,000,000·scale].
    #[arg(long)]
    requests: Option<u64>,
    /// Seed of the workload.
    #[arg(long, default_value_t = workload::SEED)]
    seed: u64,
    /// WORKLOADS.md v2 scale `S`: keyspace 100,000·S, and the patterns'
    /// epochs, scans and TTLs scaled to match.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
    scale: u64,
}

#[derive(Debug, Args)]
struct ReplayArgs {
    /// The trace to replay.
    #[arg(long)]
    trace: PathBuf,
    /// Comma-separated cache capacities in entries.
    #[arg(long, value_delimiter = ',', default_values_t = [workload::CAPACITY])]
    capacity: Vec<usize>,
    /// Comma-separated `maxmemory-policy` names.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "allkeys-lru,allkeys-lfu,allkeys-random,allkeys-ahe"
    )]
    policies: Vec<PolicyKind>,
    /// Seed of the policies.
    #[arg(long, default_value_t = workload::SEED)]
    seed: u64,
    /// Print JSON (`requests`, `keys`, and a cell per policy and
    /// capacity) instead of a markdown table.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct ToLibcachesimArgs {
    /// The CSV trace to convert (`.csv` or `.csv.zst`).
    #[arg(long)]
    trace: PathBuf,
    /// Where to write the `oracleGeneral` file.
    #[arg(long)]
    out: PathBuf,
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Command::Sim(args) => sim(args),
        Command::ExportTrace(args) => export(args),
        Command::Replay(args) => replay(args),
        Command::ToLibcachesim(args) => to_libcachesim(args),
        Command::Live(args) => live_cmd::live(args),
        Command::Sharded(args) => sharded_cmd::sharded(args),
    }
}

fn sim(args: SimArgs) -> Result<()> {
    let capacity = args.capacity.unwrap_or(workload::capacity(args.scale));
    if capacity == 0 {
        bail!("--capacity must be at least 1");
    }
    if args.shards == 0 || (args.shards > 1 && args.engine == Engine::Policy) {
        bail!("--shards must be at least 1, and 1 with --engine policy");
    }
    let spec = MatrixSpec {
        seed: args.seed,
        requests: args.requests.unwrap_or(workload::requests(args.scale)),
        capacity,
        window: args.window.max(1),
        engine: args.engine,
        shards: args.shards,
        scale: args.scale,
    };
    let matrix = Matrix::run(spec, &args.policies, &args.patterns, |cell| {
        eprintln!(
            "{:>16} {:>6}: {:5.1}% hits, {:.2} M requests/s",
            cell.policy,
            cell.pattern,
            100.0 * cell.hit_ratio,
            cell.requests_per_second / 1e6
        );
    });
    let mut stdout = io::stdout().lock();
    if args.json {
        writeln!(stdout, "{}", matrix.to_json()?)?;
    } else {
        write!(stdout, "{}", matrix.to_markdown())?;
        writeln!(
            stdout,
            "\nPolicy state, bytes per tracked entry at the end of the run:\n"
        )?;
        write!(stdout, "{}", matrix.state_bytes_markdown())?;
    }
    if let Some(dir) = &args.charts {
        write_charts(&matrix, &args, dir)?;
    }
    Ok(())
}

fn write_charts(matrix: &Matrix, args: &SimArgs, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut charts = Vec::new();
    for pattern in &args.patterns {
        charts.push((
            format!("hit-ratio-{pattern}.svg"),
            matrix.hit_ratio_chart(pattern.as_str()),
        ));
    }
    for policy in &args.policies {
        if let Some(chart) = matrix.small_share_chart(policy.as_str()) {
            charts.push((format!("{policy}-small-share.svg"), chart));
        }
    }
    for (name, chart) in charts {
        let path = dir.join(name);
        std::fs::write(&path, chart.to_svg())
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

fn export(args: ExportArgs) -> Result<()> {
    let requests = Workload::scaled(
        args.pattern,
        args.seed,
        args.requests.unwrap_or(workload::requests(args.scale)),
        args.scale,
    );
    let written = if args.out.as_os_str() == "-" {
        write_trace(BufWriter::new(io::stdout().lock()), requests)?
    } else {
        let file = File::create(&args.out)
            .with_context(|| format!("cannot create {}", args.out.display()))?;
        write_trace(BufWriter::new(file), requests)
            .with_context(|| format!("cannot write {}", args.out.display()))?
    };
    eprintln!("wrote {written} requests of {}", args.pattern);
    Ok(())
}

fn replay(args: ReplayArgs) -> Result<()> {
    if args.capacity.contains(&0) {
        bail!("--capacity must be at least 1");
    }
    // The replay's slab expires nothing itself (see `sim::run_cell`).
    let config = PolicyConfig {
        seed: args.seed,
        expired_first: true,
        ..PolicyConfig::default()
    };
    let requests = read_trace_file(&args.trace)
        .with_context(|| format!("cannot read {}", args.trace.display()))?;
    let keys = requests
        .iter()
        .map(|r| r.key_id)
        .collect::<std::collections::HashSet<_>>()
        .len();
    let mut cells = Vec::new();
    for &capacity in &args.capacity {
        for &kind in &args.policies {
            let sim_config = SimConfig {
                capacity,
                volatile_only: kind.is_volatile(),
                ..SimConfig::default()
            };
            let report = simulate(kind.build(&config), sim_config, requests.iter().copied());
            cells.push((kind, capacity, report));
        }
    }
    let mut stdout = io::stdout().lock();
    if args.json {
        let cells: Vec<_> = cells
            .iter()
            .map(|(kind, capacity, report)| {
                serde_json::json!({
                    "policy": kind.as_str(),
                    "capacity": capacity,
                    "hits": report.hits,
                    "requests": report.hits + report.misses,
                    "hit_ratio": report.hit_ratio(),
                })
            })
            .collect();
        let out = serde_json::json!({
            "trace": args.trace.display().to_string(),
            "requests": requests.len(),
            "keys": keys,
            "seed": args.seed,
            "cells": cells,
        });
        writeln!(stdout, "{out}")?;
    } else {
        writeln!(stdout, "| policy | capacity | hit ratio | requests |")?;
        writeln!(stdout, "| --- | ---: | ---: | ---: |")?;
        for (kind, capacity, report) in &cells {
            writeln!(
                stdout,
                "| {kind} | {capacity} | {:.2} | {} |",
                100.0 * report.hit_ratio(),
                report.hits + report.misses
            )?;
        }
    }
    Ok(())
}

fn to_libcachesim(args: ToLibcachesimArgs) -> Result<()> {
    let requests = read_trace_file(&args.trace)
        .with_context(|| format!("cannot read {}", args.trace.display()))?;
    let file =
        File::create(&args.out).with_context(|| format!("cannot create {}", args.out.display()))?;
    let summary = write_oracle_general(BufWriter::new(file), &requests)
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    println!(
        "{}",
        serde_json::json!({"requests": summary.requests, "keys": summary.keys})
    );
    Ok(())
}
