//! What a restart costs in hit ratio: each (server, policy) replays each
//! pattern read-through twice at the same fixed `maxmemory`, once
//! uninterrupted and once restarted from its snapshot at the half
//! (`ferrum-bench live --split-at R/2 --reload-at-split`: `DEBUG RELOAD`
//! saves, empties the server and loads the file back, as a restart does).
//! The cells compare the second half's hit ratio. Redis's LRU and LFU
//! keep their idle times and counters across the reload, so Redis is the
//! reference for what a warm restart keeps.

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
    /// Requests per replay; the restart comes at half.
    pub(crate) requests: u64,
    pub(crate) seed: u64,
    pub(crate) patterns: Vec<String>,
    pub(crate) servers: Vec<(ServerKind, String)>,
}

impl RestartSpec {
    /// The `ferrum-bench` command line of one replay.
    pub(crate) fn live_args(
        &self,
        policy: &str,
        pattern: &str,
        port: u16,
        reload: bool,
    ) -> Vec<String> {
        let mut args: Vec<String> = [
            "live",
            "--json",
            "--fixed-maxmemory",
            "--calibration-requests",
            "10000",
        ]
        .map(String::from)
        .to_vec();
        args.extend([
            "--capacity".into(),
            self.capacity.to_string(),
            "--requests".into(),
            self.requests.to_string(),
            "--split-at".into(),
            (self.requests / 2).to_string(),
            "--seed".into(),
            self.seed.to_string(),
            "--policies".into(),
            policy.into(),
            "--patterns".into(),
            pattern.into(),
            "--port".into(),
            port.to_string(),
        ]);
        if reload {
            args.push("--reload-at-split".into());
        }
        args
    }

    /// The command lines, for the report.
    pub(crate) fn command_lines(&self) -> Vec<String> {
        let args = self.live_args("P", "X", 0, true);
        vec![format!(
            "ferrum-bench {} # per (server, policy P, pattern X), with and without --reload-at-split",
            args.join(" ").replace("--port 0", "--port PORT")
        )]
    }
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
            let mut half = [(0.0, 0); 2];
            for (i, reload) in [false, true].into_iter().enumerate() {
                let args = spec.live_args(policy, pattern, server.port, reload);
                half[i] = second_half(&crate::bench::run_json(bench, &args, None)?)?;
            }
            eprintln!(
                "  restart: {} {policy} {pattern}: {:.2}% uninterrupted, {:.2}% restarted",
                kind.name(),
                100.0 * half[0].0,
                100.0 * half[1].0
            );
            cells.push(RestartCell {
                server: kind.name().to_owned(),
                policy: policy.to_owned(),
                pattern: pattern.clone(),
                uninterrupted: half[0].0,
                restarted: half[1].0,
                dbsize: (half[0].1, half[1].1),
            });
        }
        Ok(cells)
    })
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

/// The report's table: a row per (server, policy), a column pair per
/// pattern.
pub(crate) fn table(cells: &[RestartCell], patterns: &[String]) -> String {
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
            match cells
                .iter()
                .find(|c| c.server == server && c.policy == policy && &c.pattern == p)
            {
                Some(c) => out.push_str(&format!(
                    " {:.2} | {:.2} | {:+.2} |",
                    100.0 * c.uninterrupted,
                    100.0 * c.restarted,
                    100.0 * (c.restarted - c.uninterrupted)
                )),
                None => out.push_str(" – | – | – |"),
            }
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
            uninterrupted: a,
            restarted: b,
            dbsize: (0, 0),
        };
        let cells = [
            cell("ferrumkv", "allkeys-ahe", "zipf", 0.7146, 0.7152),
            cell("redis", "allkeys-lru", "zipf", 0.6413, 0.6062),
            cell("ferrumkv", "allkeys-ahe", "mixed", 0.5786, 0.5793),
        ];
        let patterns = ["zipf".to_owned(), "mixed".to_owned()];
        let t = table(&cells, &patterns);
        assert!(
            t.contains("| FerrumKV allkeys-ahe | 71.46 | 71.52 | +0.06 | 57.86 | 57.93 | +0.07 |")
        );
        assert!(t.contains("| Redis allkeys-lru | 64.13 | 60.62 | -3.51 | – | – | – |"));
    }

    #[test]
    fn a_replays_second_half_is_read_from_its_json() {
        let json: Value =
            serde_json::json!([{"live": {"after_split_hit_ratio": 0.5, "dbsize": 42}}]);
        assert_eq!(second_half(&json).unwrap(), (0.5, 42));
        assert!(second_half(&serde_json::json!([{"live": {}}])).is_err());
    }
}
