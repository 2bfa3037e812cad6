//! The throughput scenario (issue 15): FerrumKV against Redis with
//! `redis-benchmark`, in interleaved rounds, reported as medians with the
//! spread of the per-round ratios and a Redis-against-Redis (A/A) column
//! so the reader sees the noise floor of the same method.
//!
//! A round runs, in turn, these units; each unit starts every side on a
//! fresh server (free 127.0.0.1 port, stopped by PID on drop), runs the
//! unit's redis-benchmark invocations against it and stops it:
//!
//! - `plain`: the whole default suite (its 20 rows) at `-c clients`, as
//!   two invocations: every test but `lrange` with `-n requests`, and
//!   `-t lrange` (the LPUSH that fills the list and LRANGE_100..600) with
//!   `-n requests / 5`, as a LRANGE_600 costs ~20 GETs. Sides: FerrumKV,
//!   Redis, Redis again (the A/A side).
//! - `pipelined`: the same with `-P 16` and `pipelined_requests`.
//! - `capped`: `-t set,get -n capped_requests -r 1000000 -d 256` against
//!   `--maxmemory 16mb` under each policy: FerrumKV with every capped
//!   policy, Redis with those it has. FerrumKV's `allkeys-ahe` (Redis lacks
//!   it) is compared with Redis's `allkeys-lru` and `allkeys-lfu` of the
//!   same round.
//!
//! Even rounds run each unit's sides in order, odd rounds in reverse, so
//! neither server always goes first. Per report row: the median ops/s of
//! each server over the rounds, their ratio, and the min-max of the
//! per-round ratios (FerrumKV's run over Redis's run of the same round).

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::procs::{ServerKind, ServerProcess};
use crate::redis_benchmark::parse_csv;

/// The default suite without `lrange` (which runs on its own, at a fifth
/// of the requests): redis-benchmark 7.0's `-t` names.
pub(crate) const SUITE_TESTS: &str =
    "ping,set,get,incr,lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin,mset";

/// How much fewer requests the LRANGE rows get.
pub(crate) const LRANGE_DIVISOR: u64 = 5;

/// The longest one redis-benchmark invocation may take before it is killed
/// and the run fails.
const INVOCATION_TIMEOUT: Duration = Duration::from_secs(600);

/// The sizes of a throughput run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ThroughputSpec {
    /// Interleaved rounds.
    pub(crate) rounds: u32,
    /// `-n` of the plain suite (LRANGE rows: a fifth).
    pub(crate) requests: u64,
    /// `-n` of the `-P 16` suite (LRANGE rows: a fifth).
    pub(crate) pipelined_requests: u64,
    /// `-n` of each capped run (SET, then GET).
    pub(crate) capped_requests: u64,
    /// `-c`.
    pub(crate) clients: u32,
    /// FerrumKV's capped policies; Redis runs those it has.
    pub(crate) capped_policies: Vec<String>,
}

/// One redis-benchmark row of one round.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Sample {
    /// Round, from 0.
    pub(crate) round: u32,
    /// `plain`, `pipelined` or `capped`.
    pub(crate) scenario: String,
    /// `ferrumkv`, `redis` or `redis-aa` (Redis's second, A/A, run).
    pub(crate) side: String,
    /// `maxmemory-policy` (`-` for none).
    pub(crate) policy: String,
    /// redis-benchmark's test name (`SET`, `LRANGE_100 (first 100 elements)`).
    pub(crate) test: String,
    /// Requests per second.
    pub(crate) rps: f64,
    /// Median latency, ms.
    pub(crate) p50_ms: f64,
    /// 99th percentile latency, ms.
    pub(crate) p99_ms: f64,
}

/// A side of a unit: which server, under which policy.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Side {
    kind: ServerKind,
    /// `redis-aa` for Redis's second run.
    name: &'static str,
    policy: Option<String>,
}

impl Side {
    fn new(kind: ServerKind, aa: bool, policy: Option<&str>) -> Side {
        Side {
            kind,
            name: match (kind, aa) {
                (ServerKind::Ferrum, _) => "ferrumkv",
                (ServerKind::Redis, false) => "redis",
                (ServerKind::Redis, true) => "redis-aa",
            },
            policy: policy.map(String::from),
        }
    }
}

/// One unit of a round: sides and the redis-benchmark flags of each
/// invocation (port and `--csv` are added per run).
#[derive(Clone, Debug)]
struct Unit {
    scenario: &'static str,
    sides: Vec<Side>,
    invocations: Vec<Vec<String>>,
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// The units of every round, in run order.
fn units(spec: &ThroughputSpec) -> Vec<Unit> {
    let c = spec.clients.to_string();
    let suite = |n: u64, pipeline: &[&str]| -> Vec<Vec<String>> {
        let lrange = (n / LRANGE_DIVISOR).max(1);
        let mut a = strings(&["-c", &c, "-n", &n.to_string(), "-t", SUITE_TESTS]);
        a.extend(strings(pipeline));
        let mut b = strings(&["-c", &c, "-n", &lrange.to_string(), "-t", "lrange"]);
        b.extend(strings(pipeline));
        vec![a, b]
    };
    let unlimited = vec![
        Side::new(ServerKind::Ferrum, false, None),
        Side::new(ServerKind::Redis, false, None),
        Side::new(ServerKind::Redis, true, None),
    ];
    let mut out = vec![
        Unit {
            scenario: "plain",
            sides: unlimited.clone(),
            invocations: suite(spec.requests, &[]),
        },
        Unit {
            scenario: "pipelined",
            sides: unlimited,
            invocations: suite(spec.pipelined_requests, &["-P", "16"]),
        },
    ];
    if !spec.capped_policies.is_empty() {
        let mut sides = Vec::new();
        for p in &spec.capped_policies {
            sides.push(Side::new(ServerKind::Ferrum, false, Some(p)));
            if redis_has(p) {
                sides.push(Side::new(ServerKind::Redis, false, Some(p)));
            }
        }
        // What FerrumKV's own policies are compared with.
        for p in ["allkeys-lru", "allkeys-lfu"] {
            if !sides
                .iter()
                .any(|s| s.kind == ServerKind::Redis && s.policy.as_deref() == Some(p))
                && spec.capped_policies.iter().any(|x| !redis_has(x))
            {
                sides.push(Side::new(ServerKind::Redis, false, Some(p)));
            }
        }
        out.push(Unit {
            scenario: "capped",
            sides,
            invocations: vec![strings(&[
                "-c",
                &c,
                "-n",
                &spec.capped_requests.to_string(),
                "-t",
                "set,get",
                "-r",
                "1000000",
                "-d",
                "256",
            ])],
        });
    }
    out
}

/// Whether Redis 7.0 has the policy (FerrumKV's `allkeys-ahe` it has not).
fn redis_has(policy: &str) -> bool {
    policy != "allkeys-ahe"
}

/// The redis-benchmark command lines of one round, for the report.
pub(crate) fn command_lines(spec: &ThroughputSpec) -> Vec<String> {
    let mut out = Vec::new();
    for u in units(spec) {
        for inv in &u.invocations {
            let server = if u.scenario == "capped" {
                "  # server: --maxmemory 16mb --maxmemory-policy P"
            } else {
                ""
            };
            out.push(format!(
                "redis-benchmark -h 127.0.0.1 -p PORT {} --csv{server}",
                inv.join(" ")
            ));
        }
    }
    out
}

/// The 1-minute load average (`/proc/loadavg`), if readable: how busy the
/// machine was, printed with the table so a reader can judge the noise.
pub(crate) fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Runs every round; progress on stderr. Returns the samples and the
/// 1-minute load average at the start of each round (where readable).
pub(crate) fn run(
    spec: &ThroughputSpec,
    target: &Path,
    run_dir: &Path,
) -> Result<(Vec<Sample>, Vec<f64>)> {
    let units = units(spec);
    let mut samples = Vec::new();
    let mut loads = Vec::new();
    for round in 0..spec.rounds {
        let started = Instant::now();
        loads.extend(load_average());
        for unit in &units {
            let mut sides = unit.sides.clone();
            if round % 2 == 1 {
                sides.reverse();
            }
            for side in &sides {
                let policy = side.policy.clone().unwrap_or_else(|| "-".into());
                let extra: Vec<&str> = match &side.policy {
                    Some(p) => vec!["--maxmemory", "16mb", "--maxmemory-policy", p],
                    None => vec![],
                };
                let log = run_dir.join(format!(
                    "throughput-{round}-{}-{}-{policy}.log",
                    unit.scenario, side.name
                ));
                let server = ServerProcess::start(side.kind, target, &extra, &log)?;
                for inv in &unit.invocations {
                    let mut args = strings(&["-h", "127.0.0.1", "-p", &server.port.to_string()]);
                    args.extend(inv.iter().cloned());
                    args.push("--csv".into());
                    for (test, rps, p50, p99) in bench(&args)? {
                        samples.push(Sample {
                            round,
                            scenario: unit.scenario.into(),
                            side: side.name.into(),
                            policy: policy.clone(),
                            test,
                            rps,
                            p50_ms: p50,
                            p99_ms: p99,
                        });
                    }
                }
                drop(server);
            }
        }
        eprintln!(
            "  round {}/{} took {:.0} s (load average {})",
            round + 1,
            spec.rounds,
            started.elapsed().as_secs_f64(),
            loads.last().map_or("unknown".into(), |l| format!("{l:.2}"))
        );
    }
    Ok((samples, loads))
}

/// The line that says how busy the machine was during the rounds.
pub(crate) fn load_line(loads: &[f64], cpus: usize) -> Option<String> {
    if loads.is_empty() {
        return None;
    }
    let list: Vec<String> = loads.iter().map(|l| format!("{l:.2}")).collect();
    Some(format!(
        "1-minute load average at the start of each round: {} ({cpus} CPUs). A load above the CPU count means other work shared the machine.",
        list.join(", ")
    ))
}

/// Runs redis-benchmark with `args`, killing it after
/// [`INVOCATION_TIMEOUT`], and parses its CSV.
fn bench(args: &[String]) -> Result<Vec<(String, f64, f64, f64)>> {
    let mut child = Command::new("redis-benchmark")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot run redis-benchmark")?;
    let deadline = Instant::now() + INVOCATION_TIMEOUT;
    // The CSV is a few KiB: it fits the pipe, so polling cannot deadlock.
    while child.try_wait()?.is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "redis-benchmark {} took over {} s",
                args.join(" "),
                INVOCATION_TIMEOUT.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!(
            "redis-benchmark {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let rows = parse_csv(&String::from_utf8_lossy(&out.stdout))?;
    if let Some((test, rps, ..)) = rows.iter().find(|r| !r.1.is_finite() || r.1 <= 0.0) {
        bail!(
            "redis-benchmark {} reported {rps} ops/s for {test}: too few requests to time (it prints inf under a millisecond); raise -n",
            args.join(" ")
        );
    }
    Ok(rows)
}

/// The median of `v` (the mean of the middle two for an even count); NaN
/// for none.
pub(crate) fn median(v: &[f64]) -> f64 {
    let mut v: Vec<f64> = v.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// One row of the report.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Row {
    /// `plain`, `pipelined` or `capped`.
    pub(crate) scenario: String,
    /// The test.
    pub(crate) test: String,
    /// FerrumKV's policy (`-` for none).
    pub(crate) ferrum_policy: String,
    /// Redis's policy.
    pub(crate) redis_policy: String,
    /// Median ops/s over the rounds.
    pub(crate) ferrum_rps: f64,
    /// Median ops/s over the rounds.
    pub(crate) redis_rps: f64,
    /// `ferrum_rps / redis_rps`.
    pub(crate) ratio: f64,
    /// Min and max of the per-round ratios.
    pub(crate) ratio_range: (f64, f64),
    /// Redis's A/A run against its first run: median ratio and range
    /// (unlimited rows only).
    pub(crate) aa: Option<(f64, (f64, f64))>,
    /// Median p99 latencies, ms.
    pub(crate) ferrum_p99: f64,
    /// Median p99 latencies, ms.
    pub(crate) redis_p99: f64,
    /// Rounds with both servers' figures.
    pub(crate) rounds: usize,
}

fn pick<'a>(
    s: &'a [Sample],
    scenario: &'a str,
    side: &'a str,
    policy: &'a str,
    test: &'a str,
) -> impl Iterator<Item = &'a Sample> + 'a {
    s.iter().filter(move |x| {
        x.scenario == scenario && x.side == side && x.policy == policy && x.test == test
    })
}

/// `a`'s median ops/s over `b`'s, and the min-max of the ratios of the
/// rounds both have.
fn compare(a: &[&Sample], b: &[&Sample]) -> (f64, (f64, f64), usize) {
    let rps = |v: &[&Sample]| median(&v.iter().map(|s| s.rps).collect::<Vec<_>>());
    let per_round: Vec<f64> = a
        .iter()
        .filter_map(|x| {
            b.iter()
                .find(|y| y.round == x.round)
                .map(|y| x.rps / y.rps.max(1e-9))
        })
        .collect();
    let lo = per_round.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = per_round.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (rps(a) / rps(b).max(1e-9), (lo, hi), per_round.len())
}

/// The report rows: per (scenario, test) and, for capped, per FerrumKV
/// policy and the Redis policy it is compared with; in run order.
pub(crate) fn rows(samples: &[Sample]) -> Vec<Row> {
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for s in samples.iter().filter(|s| s.side == "ferrumkv") {
        let k = (s.scenario.clone(), s.policy.clone(), s.test.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut out = Vec::new();
    for (scenario, policy, test) in keys {
        let ferrum: Vec<&Sample> = pick(samples, &scenario, "ferrumkv", &policy, &test).collect();
        let against: Vec<String> = if samples
            .iter()
            .any(|s| s.side == "redis" && s.scenario == scenario && s.policy == policy)
        {
            vec![policy.clone()]
        } else {
            ["allkeys-lru", "allkeys-lfu"]
                .into_iter()
                .filter(|p| {
                    samples
                        .iter()
                        .any(|s| s.side == "redis" && s.scenario == scenario && s.policy == *p)
                })
                .map(String::from)
                .collect()
        };
        for rp in against {
            let redis: Vec<&Sample> = pick(samples, &scenario, "redis", &rp, &test).collect();
            if redis.is_empty() {
                continue;
            }
            let aa_runs: Vec<&Sample> = pick(samples, &scenario, "redis-aa", &rp, &test).collect();
            let (ratio, ratio_range, rounds) = compare(&ferrum, &redis);
            let aa = (!aa_runs.is_empty()).then(|| {
                let (r, range, _) = compare(&aa_runs, &redis);
                (r, range)
            });
            let p99 = |v: &[&Sample]| median(&v.iter().map(|s| s.p99_ms).collect::<Vec<_>>());
            let rps = |v: &[&Sample]| median(&v.iter().map(|s| s.rps).collect::<Vec<_>>());
            out.push(Row {
                scenario: scenario.clone(),
                test: test.clone(),
                ferrum_policy: policy.clone(),
                redis_policy: rp.clone(),
                ferrum_rps: rps(&ferrum),
                redis_rps: rps(&redis),
                ratio,
                ratio_range,
                aa,
                ferrum_p99: p99(&ferrum),
                redis_p99: p99(&redis),
                rounds,
            });
        }
    }
    out
}

/// The A/A summary line: the range of the A/A row ratios and of their
/// per-round ratios, over every row that has them.
pub(crate) fn aa_line(rows: &[Row]) -> Option<String> {
    let aa: Vec<(f64, (f64, f64))> = rows.iter().filter_map(|r| r.aa).collect();
    if aa.is_empty() {
        return None;
    }
    let lo = aa.iter().map(|a| a.0).fold(f64::INFINITY, f64::min);
    let hi = aa.iter().map(|a| a.0).fold(f64::NEG_INFINITY, f64::max);
    let rlo = aa.iter().map(|a| a.1 .0).fold(f64::INFINITY, f64::min);
    let rhi = aa.iter().map(|a| a.1 .1).fold(f64::NEG_INFINITY, f64::max);
    let mid = median(&aa.iter().map(|a| a.0).collect::<Vec<_>>());
    Some(format!(
        "A/A (Redis against Redis, same rounds and method, {} rows): median-of-rounds ratios {lo:.2}-{hi:.2} (median {mid:.2}); single-round ratios {rlo:.2}-{rhi:.2}. A FerrumKV/Redis ratio inside that band is noise.",
        aa.len()
    ))
}

/// The table (markdown), the A/A line after it.
pub(crate) fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| scenario | test | FerrumKV policy | Redis policy | FerrumKV ops/s | Redis ops/s | FerrumKV / Redis | per-round range | Redis A/A | FerrumKV p99 ms | Redis p99 ms |\n| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for r in rows {
        let aa = match r.aa {
            Some((x, (lo, hi))) => format!("{x:.2} ({lo:.2}-{hi:.2})"),
            None => "–".into(),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.0} | {:.0} | {:.2} | {:.2}-{:.2} | {aa} | {:.3} | {:.3} |",
            r.scenario,
            r.test,
            r.ferrum_policy,
            r.redis_policy,
            r.ferrum_rps,
            r.redis_rps,
            r.ratio,
            r.ratio_range.0,
            r.ratio_range.1,
            r.ferrum_p99,
            r.redis_p99
        );
    }
    if let Some(line) = aa_line(rows) {
        let _ = writeln!(out, "\n{line}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(round: u32, side: &str, policy: &str, test: &str, rps: f64) -> Sample {
        Sample {
            round,
            scenario: if policy == "-" { "plain" } else { "capped" }.into(),
            side: side.into(),
            policy: policy.into(),
            test: test.into(),
            rps,
            p50_ms: 0.5,
            p99_ms: rps / 100_000.0,
        }
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn ratio_is_of_medians_and_range_of_rounds() {
        let mut v = Vec::new();
        // FerrumKV 100k, 120k, 90k; Redis 100k, 100k, 60k; A/A 110k, 90k, 60k.
        for (r, f, x, a) in [
            (0, 100e3, 100e3, 110e3),
            (1, 120e3, 100e3, 90e3),
            (2, 90e3, 60e3, 60e3),
        ] {
            v.push(s(r, "ferrumkv", "-", "GET", f));
            v.push(s(r, "redis", "-", "GET", x));
            v.push(s(r, "redis-aa", "-", "GET", a));
        }
        let rows = rows(&v);
        assert_eq!(rows.len(), 1);
        let row = &rows[0];
        assert_eq!((row.ferrum_rps, row.redis_rps), (100e3, 100e3));
        assert!((row.ratio - 1.0).abs() < 1e-12);
        assert!((row.ratio_range.0 - 1.0).abs() < 1e-12);
        assert!((row.ratio_range.1 - 1.5).abs() < 1e-12);
        let (aa, (lo, hi)) = row.aa.expect("A/A");
        assert!((aa - 0.9).abs() < 1e-12 && (lo - 0.9).abs() < 1e-12 && (hi - 1.1).abs() < 1e-12);
        assert_eq!(row.rounds, 3);
        let t = table(&rows);
        assert!(
            t.contains("| plain | GET | - | - | 100000 | 100000 | 1.00 | 1.00-1.50 | 0.90 (0.90-1.10) | 1.000 | 1.000 |"),
            "{t}"
        );
        assert!(t.contains("A/A (Redis against Redis, same rounds and method, 1 rows): median-of-rounds ratios 0.90-0.90"), "{t}");
    }

    #[test]
    fn ahe_is_compared_with_redis_lru_and_lfu_of_the_same_round() {
        let mut v = Vec::new();
        for r in 0..2 {
            v.push(s(r, "ferrumkv", "allkeys-ahe", "SET", 80e3));
            v.push(s(r, "redis", "allkeys-lru", "SET", 100e3));
            v.push(s(r, "redis", "allkeys-lfu", "SET", 40e3));
        }
        let rows = rows(&v);
        let pairs: Vec<(&str, f64)> = rows
            .iter()
            .map(|r| (r.redis_policy.as_str(), r.ratio))
            .collect();
        assert_eq!(pairs, [("allkeys-lru", 0.8), ("allkeys-lfu", 2.0)]);
        assert!(rows.iter().all(|r| r.aa.is_none() && r.rounds == 2));
    }

    #[test]
    fn units_alternate_and_cover_the_suite_and_every_policy() {
        let spec = ThroughputSpec {
            rounds: 5,
            requests: 20_000,
            pipelined_requests: 100_000,
            capped_requests: 100_000,
            clients: 50,
            capped_policies: strings(&["allkeys-lru", "allkeys-ahe"]),
        };
        let u = units(&spec);
        let names: Vec<&str> = u.iter().map(|u| u.scenario).collect();
        assert_eq!(names, ["plain", "pipelined", "capped"]);
        assert_eq!(
            u[0].invocations[1],
            strings(&["-c", "50", "-n", "4000", "-t", "lrange"])
        );
        assert!(u[1].invocations[0].ends_with(&strings(&["-P", "16"])));
        let capped: Vec<(&str, Option<&str>)> = u[2]
            .sides
            .iter()
            .map(|s| (s.name, s.policy.as_deref()))
            .collect();
        assert_eq!(
            capped,
            [
                ("ferrumkv", Some("allkeys-lru")),
                ("redis", Some("allkeys-lru")),
                ("ferrumkv", Some("allkeys-ahe")),
                ("redis", Some("allkeys-lfu")),
            ]
        );
        assert_eq!(command_lines(&spec).len(), 5);
    }

    #[test]
    fn load_line_lists_every_round() {
        assert_eq!(load_line(&[], 2), None);
        assert_eq!(
            load_line(&[1.5, 10.25], 2).as_deref(),
            Some("1-minute load average at the start of each round: 1.50, 10.25 (2 CPUs). A load above the CPU count means other work shared the machine.")
        );
    }
}
