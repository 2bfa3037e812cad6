//! `ferrum-bench live`: the live driver on the command line.

use std::fs::File;
use std::io::{self, BufReader, Write};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use ferrum_bench::driver::{Calibration, ClockMode, LiveConfig, LiveDriver};
use ferrum_bench::live::{to_markdown, LiveCell};
use ferrum_bench::trace::read_trace;
use ferrum_bench::workload::{self, Pattern, Request, Workload};
use ferrum_evict::PolicyKind;

/// Arguments of `ferrum-bench live`.
#[derive(Debug, Args)]
pub(crate) struct LiveArgs {
    /// Server host (FerrumKV or Redis).
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Server port.
    #[arg(long, default_value_t = 6379)]
    port: u16,
    /// Comma-separated patterns to replay (ignored with --trace).
    #[arg(long, value_delimiter = ',', default_value = "zipf")]
    patterns: Vec<Pattern>,
    /// Replay this `timestamp_ms,key,ttl_ms` trace instead of a pattern.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Comma-separated `maxmemory-policy` names.
    #[arg(long, value_delimiter = ',', default_value = "allkeys-lru")]
    policies: Vec<PolicyKind>,
    /// Requests per (policy, pattern) cell [default: 1,000,000·scale].
    #[arg(long)]
    requests: Option<u64>,
    /// WORKLOADS.md v2 scale `S`: keyspace 100,000·S, capacity 5,000·S, and
    /// the patterns' epochs, scans and TTLs scaled to match.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
    scale: u64,
    /// Seed of the workloads.
    #[arg(long, default_value_t = workload::SEED)]
    seed: u64,
    /// Entries the server should hold; `maxmemory` is calibrated to it
    /// [default: 5,000·scale].
    #[arg(long)]
    capacity: Option<usize>,
    /// Skip calibration and use this `maxmemory` (bytes).
    #[arg(long)]
    maxmemory: Option<u64>,
    /// Requests of the prefix replayed per calibration round [default:
    /// 30,000·scale].
    #[arg(long)]
    calibration_requests: Option<u64>,
    /// Only calibrate: print, per (policy, pattern), the `maxmemory` at
    /// which the server holds `--capacity` entries at steady state (JSON
    /// with --json), and replay nothing else. The bench's equal-memory
    /// condition measures `M_ref` this way on Redis's allkeys-lru.
    #[arg(long, conflicts_with_all = ["maxmemory", "trace"])]
    calibrate_only: bool,
    /// Keep the calibrated `maxmemory` for the whole run instead of
    /// correcting it every 2,000 requests to hold `--capacity` entries;
    /// shows how many entries a fixed limit holds as the run goes.
    #[arg(long)]
    fixed_maxmemory: bool,
    /// Real milliseconds between requests (e.g. 1); full speed without it.
    #[arg(long)]
    spacing_ms: Option<f64>,
    /// `virtual`: drive the server's clock to each request's timestamp with
    /// DEBUG ADVANCE-CLOCK (FerrumKV with --enable-debug-command yes);
    /// `real`: the server's own clock, PX scaled by real/virtual time.
    /// Default: virtual when the server allows it.
    #[arg(long, value_enum)]
    clock: Option<ClockMode>,
    /// Requests per window of the hit-ratio series.
    #[arg(long, default_value_t = 10_000)]
    window: u64,
    /// Also replay each cell through the store-engine simulator shaped like
    /// the server (16 shards, same maxmemory) and print the difference.
    #[arg(long)]
    compare_sim: bool,
    /// Print JSON (every cell with its windowed series) instead of markdown.
    #[arg(long)]
    json: bool,
    /// Also report the hit ratio from this request on ("after split").
    #[arg(long)]
    split_at: Option<u64>,
    /// At --split-at, restart the server's dataset from a snapshot (DEBUG
    /// RELOAD: save, empty, load) and go on: a warm restart.
    #[arg(long, requires = "split_at")]
    reload_at_split: bool,
    /// Requests per round trip: a batch's GETs go together, its misses'
    /// SETs with the next batch. 1 replays exactly; more is for caches of
    /// hundreds of thousands of entries, where a batch is a sliver of the
    /// cache and an exact replay takes hours.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pipeline: u64,
}

/// Runs every (policy, workload) cell against the server.
pub(crate) fn live(args: LiveArgs) -> Result<()> {
    let capacity = args.capacity.unwrap_or(workload::capacity(args.scale));
    if capacity == 0 {
        bail!("--capacity must be at least 1");
    }
    let requests_per_cell = args.requests.unwrap_or(workload::requests(args.scale));
    let addr = format!("{}:{}", args.host, args.port);
    let mut driver =
        LiveDriver::connect(&addr).with_context(|| format!("cannot talk to a server at {addr}"))?;
    let config = LiveConfig {
        capacity,
        window: args.window.max(1),
        spacing_ms: args.spacing_ms,
        clock: args.clock,
        calibration_requests: args.calibration_requests.unwrap_or(30_000 * args.scale),
        maxmemory_bytes: args.maxmemory,
        hold_capacity: !args.fixed_maxmemory,
        split_at: args.split_at,
        reload_at_split: args.reload_at_split,
        pipeline: args.pipeline as usize,
        ..LiveConfig::default()
    };
    let trace: Option<(String, Vec<Request>)> = match &args.trace {
        Some(path) => {
            let file =
                File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
            let requests = read_trace(BufReader::new(file))
                .collect::<Result<Vec<_>, _>>()
                .with_context(|| format!("cannot read {}", path.display()))?;
            Some((path.display().to_string(), requests))
        }
        None => None,
    };
    let sources: Vec<String> = match &trace {
        Some((name, _)) => vec![name.clone()],
        None => args.patterns.iter().map(ToString::to_string).collect(),
    };
    if args.calibrate_only {
        return calibrate_only(&mut driver, &args, &sources, &config);
    }
    let mut cells = Vec::new();
    for &policy in &args.policies {
        for source in &sources {
            let requests = || -> Box<dyn Iterator<Item = Request> + '_> {
                match &trace {
                    Some((_, reqs)) => Box::new(reqs.iter().copied()),
                    None => {
                        let pattern: Pattern = source.parse().unwrap_or(Pattern::Zipf);
                        Box::new(Workload::scaled(
                            pattern,
                            args.seed,
                            requests_per_cell,
                            args.scale,
                        ))
                    }
                }
            };
            let total = requests().size_hint().0 as u64;
            let mut last_tenth = 0;
            let mut progress = |done: u64| {
                let tenth = done * 10 / total.max(1);
                if tenth > last_tenth {
                    last_tenth = tenth;
                    eprint!("\r{policy:>16} {source}: {:3}%", tenth * 10);
                }
            };
            let report = driver
                .run(policy, source, requests, &config, &mut progress)
                .with_context(|| format!("{policy} on {source} against {addr}"))?;
            let cell = LiveCell::new(report, args.compare_sim.then(requests));
            let sim = cell.sim.as_ref().map_or(String::new(), |s| {
                format!(
                    ", sim {:.2}% ({:+.2} pp)",
                    100.0 * s.hit_ratio,
                    s.difference_pp
                )
            });
            let split = cell.live.after_split_hit_ratio.map_or(String::new(), |r| {
                format!(", after the split {:.2}%", 100.0 * r)
            });
            eprintln!(
                "\r{policy:>16} {source}: {:.2}% hits{split}, dbsize {}, maxmemory {}, {:.0} req/s{sim}",
                100.0 * cell.live.hit_ratio,
                cell.live.dbsize,
                cell.live.calibration.maxmemory_bytes,
                cell.live.requests_per_second,
            );
            cells.push(cell);
        }
    }
    let mut stdout = io::stdout().lock();
    if args.json {
        writeln!(stdout, "{}", serde_json::to_string_pretty(&cells)?)?;
    } else {
        write!(stdout, "{}", to_markdown(&cells))?;
    }
    Ok(())
}

/// One `--calibrate-only` result.
#[derive(Debug, serde::Serialize)]
struct CalibrationRow {
    server: String,
    version: String,
    policy: String,
    pattern: String,
    scale: u64,
    capacity: usize,
    calibration: Calibration,
}

/// `--calibrate-only`: the `maxmemory` holding the capacity, per (policy,
/// pattern), measured as a run's calibration is.
fn calibrate_only(
    driver: &mut LiveDriver,
    args: &LiveArgs,
    sources: &[String],
    config: &LiveConfig,
) -> Result<()> {
    let mut rows = Vec::new();
    for &policy in &args.policies {
        for source in sources {
            let pattern: Pattern = source.parse().map_err(anyhow::Error::msg)?;
            let calibration = driver
                .calibrate(
                    policy,
                    || {
                        Workload::scaled(
                            pattern,
                            args.seed,
                            config.calibration_requests,
                            args.scale,
                        )
                    },
                    config,
                )
                .with_context(|| format!("calibrating {policy} on {source}"))?;
            eprintln!(
                "{policy:>16} {source}: maxmemory {} holds {} entries (target {}, {} rounds)",
                calibration.maxmemory_bytes,
                calibration.dbsize,
                config.capacity,
                calibration.rounds
            );
            rows.push(CalibrationRow {
                server: driver.server().name.clone(),
                version: driver.server().version.clone(),
                policy: policy.to_string(),
                pattern: source.clone(),
                scale: args.scale,
                capacity: config.capacity,
                calibration,
            });
        }
    }
    let mut stdout = io::stdout().lock();
    if args.json {
        writeln!(stdout, "{}", serde_json::to_string_pretty(&rows)?)?;
    } else {
        writeln!(
            stdout,
            "| server | policy | pattern | scale | capacity | maxmemory | dbsize |"
        )?;
        writeln!(stdout, "| --- | --- | --- | ---: | ---: | ---: | ---: |")?;
        for r in &rows {
            writeln!(
                stdout,
                "| {} {} | {} | {} | {} | {} | {} | {} |",
                r.server,
                r.version,
                r.policy,
                r.pattern,
                r.scale,
                r.capacity,
                r.calibration.maxmemory_bytes,
                r.calibration.dbsize
            )?;
        }
    }
    Ok(())
}
