//! `ferrum-bench live`: the live driver on the command line.

use std::fs::File;
use std::io::{self, BufReader, Write};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use ferrum_bench::driver::{ClockMode, LiveConfig, LiveDriver};
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
    /// Requests per (policy, pattern) cell.
    #[arg(long, default_value_t = workload::REQUESTS)]
    requests: u64,
    /// Seed of the workloads.
    #[arg(long, default_value_t = workload::SEED)]
    seed: u64,
    /// Entries the server should hold; `maxmemory` is calibrated to it.
    #[arg(long, default_value_t = workload::CAPACITY)]
    capacity: usize,
    /// Skip calibration and use this `maxmemory` (bytes).
    #[arg(long)]
    maxmemory: Option<u64>,
    /// Requests of the prefix replayed per calibration round.
    #[arg(long, default_value_t = 30_000)]
    calibration_requests: u64,
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
}

/// Runs every (policy, workload) cell against the server.
pub(crate) fn live(args: LiveArgs) -> Result<()> {
    if args.capacity == 0 {
        bail!("--capacity must be at least 1");
    }
    let addr = format!("{}:{}", args.host, args.port);
    let mut driver =
        LiveDriver::connect(&addr).with_context(|| format!("cannot talk to a server at {addr}"))?;
    let config = LiveConfig {
        capacity: args.capacity,
        window: args.window.max(1),
        spacing_ms: args.spacing_ms,
        clock: args.clock,
        calibration_requests: args.calibration_requests,
        maxmemory_bytes: args.maxmemory,
        hold_capacity: !args.fixed_maxmemory,
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
    let mut cells = Vec::new();
    for &policy in &args.policies {
        for source in &sources {
            let requests = || -> Box<dyn Iterator<Item = Request> + '_> {
                match &trace {
                    Some((_, reqs)) => Box::new(reqs.iter().copied()),
                    None => {
                        let pattern: Pattern = source.parse().unwrap_or(Pattern::Zipf);
                        Box::new(Workload::new(pattern, args.seed, args.requests))
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
            eprintln!(
                "\r{policy:>16} {source}: {:.2}% hits, dbsize {}, maxmemory {}, {:.0} req/s{sim}",
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
