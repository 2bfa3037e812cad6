//! What a restart costs in hit ratio: each (server, policy) calibrates
//! `maxmemory` once per pattern, then replays the pattern read-through
//! twice per run length at that `maxmemory`, once uninterrupted and once
//! restarted from its snapshot at the half (`ferrum-bench live --split-at
//! R/2 --reload-at-split`: `DEBUG RELOAD` saves, empties the server and
//! loads the file back, as a restart does). The cells compare the second
//! half's hit ratio. A short run shows what a restart costs before the
//! cache has turned over; a long one, what is left after. Redis's LRU and
//! LFU keep their idle times and counters across the reload, so Redis is
//! the reference for what a warm restart keeps.

use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::procs::{on_each_server, ServerKind};

/// One (server, policy, pattern) cell.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct RestartCell {
    /// `ferrumkv` or `redis`.
    pub(crate) server: String,
    /// `maxmemory-policy`.
    pub(crate) policy: String,
    /// The pattern.
    pub(crate) pattern: String,
    /// Requests per replay; the restart came at half.
    #[serde(default)]
    pub(crate) requests: u64,
    /// The workload's seed.
    #[serde(default)]
    pub(crate) seed: u64,
    /// The calibrated `maxmemory`, the same for both replays.
    #[serde(default)]
    pub(crate) maxmemory: u64,
    /// The second half's hit ratio, uninterrupted.
    pub(crate) uninterrupted: f64,
    /// The second half's hit ratio after the restart.
    pub(crate) restarted: f64,
    /// `DBSIZE` at the end, uninterrupted and restarted.
    pub(crate) dbsize: (u64, u64),
}

/// What to run.
#[derive(Clone, Debug)]
pub(crate) struct RestartSpec {
    /// Entries the calibrated `maxmemory` holds.
    pub(crate) capacity: u64,
    /// Requests per replay, a cell per length; the restart comes at half.
    pub(crate) lengths: Vec<u64>,
    /// Workload seeds: each cell is replayed once per seed, and the report
    /// gives the mean (a policy's own randomness and ties move a single
    /// replay's second half by a few tenths of a point).
    pub(crate) seeds: Vec<u64>,
    pub(crate) patterns: Vec<String>,
    pub(crate) servers: Vec<(ServerKind, String)>,
}

impl RestartSpec {
    /// What every command line names: the pattern, policy and server.
    fn common(&self, policy: &str, pattern: &str, seed: u64, port: u16) -> Vec<String> {
        vec![
            "live".into(),
            "--json".into(),
            "--seed".into(),
            seed.to_string(),
            "--policies".into(),
            policy.into(),
            "--patterns".into(),
            pattern.into(),
            "--port".into(),
            port.to_string(),
        ]
    }

    /// The `ferrum-bench` command line that finds the `maxmemory` holding
    /// `capacity` entries.
    pub(crate) fn calibrate_args(&self, policy: &str, pattern: &str, port: u16) -> Vec<String> {
        let seed = self.seeds.first().copied().unwrap_or_default();
        let mut args = self.common(policy, pattern, seed, port);
        args.extend([
            "--calibrate-only".into(),
            "--calibration-requests".into(),
            "10000".into(),
            "--capacity".into(),
            self.capacity.to_string(),
        ]);
        args
    }

    /// The `ferrum-bench` command line of one replay of `requests` at
    /// `maxmemory`.
    pub(crate) fn live_args(&self, cell: &Replay<'_>, port: u16, reload: bool) -> Vec<String> {
        let mut args = self.common(cell.policy, cell.pattern, cell.seed, port);
        args.extend([
            "--maxmemory".into(),
            cell.maxmemory.to_string(),
            "--fixed-maxmemory".into(),
            "--requests".into(),
            cell.requests.to_string(),
            "--split-at".into(),
            (cell.requests / 2).to_string(),
        ]);
        if reload {
            args.push("--reload-at-split".into());
        }
        args
    }

    /// The command lines, for the report.
    pub(crate) fn command_lines(&self) -> Vec<String> {
        let port = |args: Vec<String>| args.join(" ").replace("--port 0", "--port PORT");
        let replay = Replay {
            policy: "P",
            pattern: "X",
            seed: 0,
            requests: 0,
            maxmemory: 0,
        };
        let replay = port(self.live_args(&replay, 0, true))
            .replace("--seed 0", "--seed S")
            .replace("--maxmemory 0", "--maxmemory M")
            .replace("--requests 0", "--requests R")
            .replace("--split-at 0", "--split-at R/2");
        vec![
            format!(
                "ferrum-bench {} # M: per (server, policy P, pattern X)",
                port(self.calibrate_args("P", "X", 0))
            ),
            format!(
                "ferrum-bench {replay} # per length R in {:?} and seed S in {:?}, with and without --reload-at-split",
                self.lengths, self.seeds
            ),
        ]
    }
}

/// One replay's cell.
pub(crate) struct Replay<'a> {
    pub(crate) policy: &'a str,
    pub(crate) pattern: &'a str,
    pub(crate) seed: u64,
    pub(crate) requests: u64,
    pub(crate) maxmemory: u64,
}

/// Runs every cell, one server per (server, policy), all at once.
pub(crate) fn run(
    spec: &RestartSpec,
    bench: &Path,
    target: &Path,
    run_dir: &Path,
) -> Result<Vec<RestartCell>> {
    // `DEBUG RELOAD` needs the DEBUG command on Redis too.
    let extra = |kind| -> &'static [&'static str] {
        match kind {
            ServerKind::Ferrum => &[],
            ServerKind::Redis => &["--enable-debug-command", "yes"],
        }
    };
    let log = |kind: ServerKind, policy: &str| {
        run_dir.join(format!("restart-{}-{policy}.log", kind.name()))
    };
    on_each_server(&spec.servers, target, extra, log, |server, kind, policy| {
        let mut cells = Vec::new();
        for pattern in &spec.patterns {
            let args = spec.calibrate_args(policy, pattern, server.port);
            let maxmemory = calibrated(&crate::bench::run_json(bench, &args, None)?)?;
            let lengths = spec.lengths.iter().copied();
            for (requests, seed) in lengths.flat_map(|r| spec.seeds.iter().map(move |&s| (r, s))) {
                let replay = Replay {
                    policy,
                    pattern,
                    seed,
                    requests,
                    maxmemory,
                };
                let mut half = [(0.0, 0); 2];
                for (i, reload) in [false, true].into_iter().enumerate() {
                    let args = spec.live_args(&replay, server.port, reload);
                    half[i] = second_half(&crate::bench::run_json(bench, &args, None)?)?;
                }
                eprintln!(
                    "  restart: {} {policy} {pattern} {requests} seed {seed}: {:.2}% uninterrupted, {:.2}% restarted",
                    kind.name(),
                    100.0 * half[0].0,
                    100.0 * half[1].0
                );
                cells.push(RestartCell {
                    server: kind.name().to_owned(),
                    policy: policy.to_owned(),
                    pattern: pattern.clone(),
                    requests,
                    seed,
                    maxmemory,
                    uninterrupted: half[0].0,
                    restarted: half[1].0,
                    dbsize: (half[0].1, half[1].1),
                });
            }
        }
        Ok(cells)
    })
}

/// The `maxmemory` a `--calibrate-only` run found.
fn calibrated(json: &Value) -> Result<u64> {
    json.get(0)
        .and_then(|c| c["calibration"]["maxmemory_bytes"].as_u64())
        .filter(|&m| m > 0)
        .with_context(|| format!("ferrum-bench live --calibrate-only printed no maxmemory: {json}"))
}

/// The second half's hit ratio and the final `DBSIZE` of one replay.
fn second_half(json: &Value) -> Result<(f64, u64)> {
    let live = json
        .get(0)
        .and_then(|c| c.get("live"))
        .context("ferrum-bench live printed no cell")?;
    let ratio = live["after_split_hit_ratio"]
        .as_f64()
        .context("ferrum-bench live printed no after_split_hit_ratio")?;
    Ok((ratio, live["dbsize"].as_u64().unwrap_or(0)))
}

/// The report's table for replays of `requests`: a row per (server,
/// policy), a column triple per pattern, each the mean over the seeds
/// (with the range of the change when there are several).
pub(crate) fn table(cells: &[RestartCell], patterns: &[String], requests: u64) -> String {
    let cells: Vec<&RestartCell> = cells.iter().filter(|c| c.requests == requests).collect();
    let mut out = String::from("| server, policy |");
    for p in patterns {
        out.push_str(&format!(" {p}: uninterrupted | restarted | change |"));
    }
    out.push_str("\n| --- |");
    out.push_str(&" ---: | ---: | ---: |".repeat(patterns.len()));
    out.push('\n');
    let rows = crate::report::server_policy_rows(cells.iter().map(|c| (&*c.server, &*c.policy)));
    for (server, policy) in rows {
        let name = crate::report::server_label(server);
        out.push_str(&format!("| {name} {policy} |"));
        for p in patterns {
            let seeds: Vec<&&RestartCell> = (cells.iter())
                .filter(|c| c.server == server && c.policy == policy && &c.pattern == p)
                .collect();
            if seeds.is_empty() {
                out.push_str(" – | – | – |");
                continue;
            }
            let mean = |f: &dyn Fn(&RestartCell) -> f64| {
                100.0 * seeds.iter().map(|c| f(c)).sum::<f64>() / seeds.len() as f64
            };
            let changes: Vec<f64> = (seeds.iter())
                .map(|c| 100.0 * (c.restarted - c.uninterrupted))
                .collect();
            let (lo, hi) = changes
                .iter()
                .fold((f64::MAX, f64::MIN), |(lo, hi), &c| (lo.min(c), hi.max(c)));
            let range = if seeds.len() > 1 {
                format!(" ({lo:+.2} to {hi:+.2})")
            } else {
                String::new()
            };
            out.push_str(&format!(
                " {:.2} | {:.2} | {:+.2}{range} |",
                mean(&|c| c.uninterrupted),
                mean(&|c| c.restarted),
                mean(&|c| c.restarted - c.uninterrupted),
            ));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_a_row_per_server_and_policy() {
        let cell = |server: &str, policy: &str, pattern: &str, a: f64, b: f64| RestartCell {
            server: server.into(),
            policy: policy.into(),
            pattern: pattern.into(),
            requests: 200_000,
            seed: 42,
            maxmemory: 460_000,
            uninterrupted: a,
            restarted: b,
            dbsize: (0, 0),
        };
        let mut short = cell("ferrumkv", "allkeys-ahe", "zipf", 0.6, 0.5);
        short.requests = 40_000;
        let mut other_seed = cell("ferrumkv", "allkeys-ahe", "zipf", 0.7000, 0.7100);
        other_seed.seed = 43;
        let cells = [
            cell("ferrumkv", "allkeys-ahe", "zipf", 0.7146, 0.7152),
            other_seed,
            cell("redis", "allkeys-lru", "zipf", 0.6413, 0.6062),
            cell("ferrumkv", "allkeys-ahe", "mixed", 0.5786, 0.5793),
            short,
        ];
        let patterns = ["zipf".to_owned(), "mixed".to_owned()];
        let t = table(&cells, &patterns, 200_000);
        assert!(
            t.contains("| FerrumKV allkeys-ahe | 70.73 | 71.26 | +0.53 (+0.06 to +1.00) | 57.86 | 57.93 | +0.07 |"),
            "{t}"
        );
        assert!(t.contains("| Redis allkeys-lru | 64.13 | 60.62 | -3.51 | – | – | – |"));
    }

    #[test]
    fn a_replays_second_half_is_read_from_its_json() {
        let json: Value =
            serde_json::json!([{"live": {"after_split_hit_ratio": 0.5, "dbsize": 42}}]);
        assert_eq!(second_half(&json).unwrap(), (0.5, 42));
        assert!(second_half(&serde_json::json!([{"live": {}}])).is_err());
        let json = serde_json::json!([{"calibration": {"maxmemory_bytes": 459744}}]);
        assert_eq!(calibrated(&json).unwrap(), 459_744);
        assert!(calibrated(&serde_json::json!([{"calibration": {}}])).is_err());
    }
}
