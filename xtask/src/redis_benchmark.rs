//! The redis-benchmark scenarios: what each one starts and runs, and the
//! parser for `redis-benchmark --csv`.

use std::process::Command;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// One scenario: a server configuration and the redis-benchmark flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Scenario {
    /// Name in the report (`baseline`, `pipelined`, `capped-allkeys-lru`).
    pub(crate) name: String,
    /// FerrumKV's `maxmemory-policy`, with `--maxmemory 16mb`; `None` for
    /// no limit.
    pub(crate) policy: Option<String>,
    /// Redis's policy for the same row: the same, except `allkeys-ahe`,
    /// which Redis lacks and is compared against `allkeys-lru`.
    pub(crate) redis_policy: Option<String>,
    /// Extra redis-benchmark flags.
    pub(crate) flags: Vec<String>,
}

impl Scenario {
    /// No eviction, one request per round trip.
    pub(crate) fn baseline() -> Scenario {
        Scenario {
            name: "baseline".into(),
            policy: None,
            redis_policy: None,
            flags: vec![],
        }
    }

    /// No eviction, 16 requests per round trip (`-P 16`).
    pub(crate) fn pipelined() -> Scenario {
        Scenario {
            name: "pipelined".into(),
            policy: None,
            redis_policy: None,
            flags: vec!["-P".into(), "16".into()],
        }
    }

    /// `maxmemory 16mb` under `policy`, over up to 1,000,000 random keys
    /// of 256-byte values (`-r 1000000 -d 256`), so that the SETs overflow
    /// 16 MB on both servers and every write past that evicts.
    pub(crate) fn capped(policy: &str) -> Scenario {
        let redis = if policy == "allkeys-ahe" {
            "allkeys-lru"
        } else {
            policy
        };
        Scenario {
            name: format!("capped-{policy}"),
            policy: Some(policy.into()),
            redis_policy: Some(redis.into()),
            flags: ["-r", "1000000", "-d", "256"].map(String::from).to_vec(),
        }
    }

    /// The server options for this scenario on the given side.
    pub(crate) fn server_args(&self, redis: bool) -> Vec<String> {
        let policy = if redis {
            &self.redis_policy
        } else {
            &self.policy
        };
        match policy {
            Some(p) => vec![
                "--maxmemory".into(),
                "16mb".into(),
                "--maxmemory-policy".into(),
                p.clone(),
            ],
            None => vec![],
        }
    }
}

/// One line of redis-benchmark's CSV for one server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct BenchRow {
    /// The scenario's name.
    pub(crate) scenario: String,
    /// `ferrumkv` or `redis`.
    pub(crate) server: String,
    /// The server's `maxmemory-policy` (`-` for none).
    pub(crate) policy: String,
    /// `SET` or `GET`.
    pub(crate) test: String,
    /// Requests per second.
    pub(crate) rps: f64,
    /// Median latency, ms.
    pub(crate) p50_ms: f64,
    /// 99th percentile latency, ms.
    pub(crate) p99_ms: f64,
}

/// The redis-benchmark command line for a scenario against a port.
pub(crate) fn command_line(s: &Scenario, port: u16, requests: u64, clients: u32) -> Vec<String> {
    let mut args: Vec<String> = [
        "-h",
        "127.0.0.1",
        "-p",
        &port.to_string(),
        "-t",
        "set,get",
        "-n",
        &requests.to_string(),
        "-c",
        &clients.to_string(),
        "--csv",
    ]
    .map(String::from)
    .to_vec();
    args.extend(s.flags.iter().cloned());
    args
}

/// Runs redis-benchmark and parses its CSV.
pub(crate) fn run(args: &[String]) -> Result<Vec<(String, f64, f64, f64)>> {
    let out = Command::new("redis-benchmark")
        .args(args)
        .output()
        .context("cannot run redis-benchmark")?;
    if !out.status.success() {
        bail!(
            "redis-benchmark {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    parse_csv(&String::from_utf8_lossy(&out.stdout))
}

/// `(test, rps, p50 ms, p99 ms)` for each row of `redis-benchmark --csv`
/// (Redis 7's columns: `test,rps,avg_latency_ms,min_latency_ms,
/// p50_latency_ms,p95_latency_ms,p99_latency_ms,max_latency_ms`).
pub(crate) fn parse_csv(text: &str) -> Result<Vec<(String, f64, f64, f64)>> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<String> = split(lines.next().context("empty redis-benchmark output")?);
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .with_context(|| format!("redis-benchmark CSV has no {name} column"))
    };
    let (test, rps, p50, p99) = (
        col("test")?,
        col("rps")?,
        col("p50_latency_ms")?,
        col("p99_latency_ms")?,
    );
    lines
        .map(|line| {
            let f = split(line);
            let num = |i: usize| -> Result<f64> {
                f.get(i)
                    .and_then(|v| v.parse().ok())
                    .with_context(|| format!("bad redis-benchmark line: {line}"))
            };
            Ok((
                f.get(test).cloned().unwrap_or_default(),
                num(rps)?,
                num(p50)?,
                num(p99)?,
            ))
        })
        .collect()
}

fn split(line: &str) -> Vec<String> {
    line.split(',')
        .map(|f| f.trim().trim_matches('"').to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_redis_7_csv() {
        let csv = "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"\n\"SET\",\"36036.04\",\"0.822\",\"0.016\",\"0.623\",\"1.463\",\"5.207\",\"30.767\"\n\"GET\",\"31162.36\",\"0.994\",\"0.056\",\"0.663\",\"2.799\",\"9.695\",\"48.831\"\n";
        let rows = parse_csv(csv).map_err(|e| e.to_string());
        assert_eq!(
            rows,
            Ok(vec![
                ("SET".to_owned(), 36036.04, 0.623, 5.207),
                ("GET".to_owned(), 31162.36, 0.663, 9.695),
            ])
        );
    }

    #[test]
    fn ahe_is_compared_against_redis_lru() {
        let s = Scenario::capped("allkeys-ahe");
        assert_eq!(s.server_args(true)[3], "allkeys-lru");
        assert_eq!(s.server_args(false)[3], "allkeys-ahe");
        assert!(Scenario::baseline().server_args(true).is_empty());
    }
}
