//! The equal-memory condition of WORKLOADS.md v2: one fixed `maxmemory`
//! per pattern, `M_ref`, for every FerrumKV policy and for Redis's
//! allkeys-lru and allkeys-lfu.
//!
//! `M_ref` is measured in the run: on a fresh Redis with allkeys-lru,
//! `ferrum-bench live --calibrate-only` finds the `maxmemory` at which it
//! holds `C = 5,000·S` entries at steady state on the pattern's prefix
//! (`30,000·S` requests, 20,000·S with `--quick`), exactly as the live
//! driver calibrates a cell. Then each (server, policy) gets its own
//! server and replays every pattern under that pattern's `M_ref` with
//! `--maxmemory M_ref --fixed-maxmemory`: no per-policy calibration, no
//! correction during the run. Each cell reports the server's hit ratio and
//! the `DBSIZE` it held at the end.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::procs::{on_each_server, ServerKind, ServerProcess};

/// `M_ref` of one pattern.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Reference {
    /// The pattern.
    pub(crate) pattern: String,
    /// The `maxmemory` every cell of the pattern gets.
    pub(crate) maxmemory: u64,
    /// `DBSIZE` Redis allkeys-lru held at the end of the calibration.
    pub(crate) redis_dbsize: u64,
}

/// One (server, policy, pattern) cell.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct EqualCell {
    /// `ferrumkv` or `redis`.
    pub(crate) server: String,
    /// `maxmemory-policy`.
    pub(crate) policy: String,
    /// The pattern.
    pub(crate) pattern: String,
    /// `M_ref` of the pattern.
    pub(crate) maxmemory: u64,
    /// The server's `keyspace_hits / (hits + misses)`.
    pub(crate) hit_ratio: f64,
    /// `DBSIZE` at the end.
    pub(crate) dbsize: u64,
    /// `used_memory` at the end.
    pub(crate) used_memory: u64,
    /// `evicted_keys`.
    pub(crate) evicted: u64,
    /// Replay wall time, seconds.
    pub(crate) elapsed_seconds: f64,
}

/// One scale's run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct EqualMemoryRun {
    /// WORKLOADS.md v2 scale `S`.
    pub(crate) scale: u64,
    /// Entries `M_ref` holds on Redis allkeys-lru: `5,000·S`.
    pub(crate) capacity: u64,
    /// Requests per cell.
    pub(crate) requests: u64,
    /// Requests of the prefix `M_ref` is calibrated on.
    pub(crate) calibration_requests: u64,
    /// `M_ref` per pattern.
    pub(crate) references: Vec<Reference>,
    /// Cells, FerrumKV's policies first, then Redis's.
    pub(crate) cells: Vec<EqualCell>,
    /// Wall time of the whole scale, calibration included, seconds.
    pub(crate) elapsed_seconds: f64,
}

/// What to run at one scale.
#[derive(Clone, Debug)]
pub(crate) struct EqualSpec {
    pub(crate) scale: u64,
    pub(crate) requests: u64,
    pub(crate) calibration_requests: u64,
    /// `ferrum-bench live --pipeline`: requests per round trip.
    pub(crate) pipeline: u64,
    pub(crate) seed: u64,
    pub(crate) patterns: Vec<String>,
    /// `(server, policy)` cells; Redis allkeys-lru must be available for
    /// `M_ref`.
    pub(crate) servers: Vec<(ServerKind, String)>,
}

/// Runs one scale; see the module docs. `bench` is the `ferrum-bench`
/// binary.
pub(crate) fn run(
    spec: &EqualSpec,
    bench: &Path,
    target: &Path,
    run_dir: &Path,
) -> Result<EqualMemoryRun> {
    let started = std::time::Instant::now();
    let s = spec.scale;
    let references = reference(spec, bench, target, run_dir)?;
    for r in &references {
        eprintln!(
            "  scale {s}: M_ref({}) = {} bytes (Redis allkeys-lru held {})",
            r.pattern, r.maxmemory, r.redis_dbsize
        );
    }
    let log = |kind: ServerKind, policy: &str| {
        run_dir.join(format!("equal-s{s}-{}-{policy}.log", kind.name()))
    };
    let cells = on_each_server(
        &spec.servers,
        target,
        |_| &[],
        log,
        |server, kind, policy| {
            let mut cells = Vec::new();
            for r in &references {
                let args = spec.live_args(policy, &r.pattern, server.port, r.maxmemory);
                let json = crate::bench::run_json(bench, &args, None)?;
                let cell = parse_cell(kind, &json, r.maxmemory)?;
                eprintln!(
                    "  scale {s}: {} {policy} {}: {:.2}% hits, dbsize {}",
                    kind.name(),
                    r.pattern,
                    100.0 * cell.hit_ratio,
                    cell.dbsize
                );
                cells.push(cell);
            }
            Ok(cells)
        },
    )?;
    Ok(EqualMemoryRun {
        scale: s,
        capacity: ferrum_bench::workload::capacity(s) as u64,
        requests: spec.requests,
        calibration_requests: spec.calibration_requests,
        references,
        cells,
        elapsed_seconds: started.elapsed().as_secs_f64(),
    })
}

impl EqualSpec {
    fn common(&self) -> Vec<String> {
        vec![
            "--scale".into(),
            self.scale.to_string(),
            "--seed".into(),
            self.seed.to_string(),
            "--pipeline".into(),
            self.pipeline.to_string(),
        ]
    }

    fn live_args(&self, policy: &str, pattern: &str, port: u16, maxmemory: u64) -> Vec<String> {
        let mut args: Vec<String> = vec!["live".into(), "--json".into()];
        args.extend(self.common());
        args.extend([
            "--requests".into(),
            self.requests.to_string(),
            "--policies".into(),
            policy.into(),
            "--patterns".into(),
            pattern.into(),
            "--maxmemory".into(),
            maxmemory.to_string(),
            "--fixed-maxmemory".into(),
            "--port".into(),
            port.to_string(),
        ]);
        args
    }

    /// The `ferrum-bench` command line that measures `M_ref`.
    pub(crate) fn reference_args(&self, port: u16) -> Vec<String> {
        let mut args: Vec<String> = vec!["live".into(), "--json".into(), "--calibrate-only".into()];
        args.extend(self.common());
        args.extend([
            "--calibration-requests".into(),
            self.calibration_requests.to_string(),
            "--policies".into(),
            "allkeys-lru".into(),
            "--patterns".into(),
            self.patterns.join(","),
            "--port".into(),
            port.to_string(),
        ]);
        args
    }
}

/// `M_ref` per pattern, on a Redis of its own.
fn reference(
    spec: &EqualSpec,
    bench: &Path,
    target: &Path,
    run_dir: &Path,
) -> Result<Vec<Reference>> {
    let log: PathBuf = run_dir.join(format!("equal-s{}-reference.log", spec.scale));
    let server = ServerProcess::start(ServerKind::Redis, target, &[], &log)?;
    let json = crate::bench::run_json(bench, &spec.reference_args(server.port), None)?;
    let rows = json
        .as_array()
        .context("ferrum-bench live --calibrate-only printed no array")?;
    let mut refs = Vec::new();
    for row in rows {
        let cal = &row["calibration"];
        refs.push(Reference {
            pattern: row["pattern"].as_str().unwrap_or_default().to_owned(),
            maxmemory: cal["maxmemory_bytes"].as_u64().unwrap_or(0),
            redis_dbsize: cal["dbsize"].as_u64().unwrap_or(0),
        });
    }
    if refs.len() != spec.patterns.len() || refs.iter().any(|r| r.maxmemory == 0) {
        bail!("unexpected M_ref calibration output: {json}");
    }
    Ok(refs)
}

fn parse_cell(kind: ServerKind, json: &Value, maxmemory: u64) -> Result<EqualCell> {
    let live = json
        .get(0)
        .and_then(|c| c.get("live"))
        .context("ferrum-bench live printed no cell")?;
    let num = |name: &str| live[name].as_u64().unwrap_or(0);
    Ok(EqualCell {
        server: kind.name().to_owned(),
        policy: live["policy"].as_str().unwrap_or_default().to_owned(),
        pattern: live["source"].as_str().unwrap_or_default().to_owned(),
        maxmemory,
        hit_ratio: live["hit_ratio"].as_f64().unwrap_or(0.0),
        dbsize: num("dbsize"),
        used_memory: num("used_memory_bytes"),
        evicted: num("evicted"),
        elapsed_seconds: live["elapsed_seconds"].as_f64().unwrap_or(0.0),
    })
}
