//! The throughput scenario (issue 15): FerrumKV against Redis with
//! `redis-benchmark`, in interleaved rounds, reported as medians with the
//! spread of the per-round ratios and a Redis-against-Redis (A/A) column
//! so the reader sees the noise floor of the same method.
//!
//! A round runs, in turn, these units. A unit starts all of its sides at
//! once, each on a fresh server (free 127.0.0.1 port, stopped by PID on
//! drop), then runs its steps one at a time: every step (one
//! redis-benchmark test) runs against every side before the next step
//! starts. So the runs a ratio compares are seconds apart, not a whole
//! suite apart: on a shared VM whose speed drifts by 2x over tens of
//! seconds, that is what makes the ratio repeatable.
//!
//! - `plain`: the whole default suite (its 20 rows) at `-c clients`, a step
//!   per test, in the suite's order (`-t ping` gives both PING rows; `-t
//!   lrange`, the LPUSH that fills the list and LRANGE_100..600, is one step
//!   at `-n requests / 5`, as a LRANGE_600 costs ~20 GETs). Sides: FerrumKV,
//!   Redis, Redis again (the A/A side).
//! - `pipelined`: the same with `-P 16` and `pipelined_requests`.
//! - `capped`: `-t set`, then `-t get`, `-n capped_requests -r 1000000 -d
//!   256` against `--maxmemory 16mb` under each policy: FerrumKV with every
//!   capped policy, Redis with those it has. FerrumKV's `allkeys-ahe` (Redis
//!   lacks it) is compared with Redis's `allkeys-lru` and `allkeys-lfu` of
//!   the same round.
//!
//! The order of the sides rotates from step to step and from round to
//! round, so no server always goes first. Per report row: the median ops/s
//! of each server over the rounds, the median of the per-round ratios
//! (FerrumKV's run over Redis's run of the same round and step) and their
//! min-max.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::procs::{cpu_ns, ServerKind, ServerProcess};
use crate::redis_benchmark::parse_csv;

/// The default suite without `lrange` (which runs on its own, at a fifth
/// of the requests): redis-benchmark 7.0's `-t` names, in its order.
pub(crate) const SUITE_TESTS: [&str; 14] = [
    "ping", "set", "get", "incr", "lpush", "rpush", "lpop", "rpop", "sadd", "hset", "spop", "zadd",
    "zpopmin", "mset",
];

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
    /// The `-t` names of the plain and pipelined steps to run (`lrange` for
    /// the LRANGE step); empty for the whole suite.
    #[serde(default)]
    pub(crate) tests: Vec<String>,
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
    /// redis-benchmark's CPU time over its wall time in the invocation
    /// that printed this row. The client is single-threaded: near 1.0 it
    /// had a core busy the whole run, and the row measured the client as
    /// much as the server. None where /proc did not say (and in reports
    /// written before it was measured).
    #[serde(default)]
    pub(crate) client_busy: Option<f64>,
    /// The server's CPU time per request in that invocation, µs, when the
    /// invocation printed only this row (`-t ping` prints two and `-t
    /// lrange` five, whose costs cannot be told apart); None otherwise.
    #[serde(default)]
    pub(crate) server_cpu_us: Option<f64>,
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

/// One unit of a round: sides and the redis-benchmark flags of each step
/// (port and `--csv` are added per run).
#[derive(Clone, Debug)]
struct Unit {
    scenario: &'static str,
    sides: Vec<Side>,
    steps: Vec<Vec<String>>,
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// The units of every round, in run order.
fn units(spec: &ThroughputSpec) -> Vec<Unit> {
    let c = spec.clients.to_string();
    let wanted = |t: &str| spec.tests.is_empty() || spec.tests.iter().any(|x| x == t);
    let suite = |n: u64, pipeline: &[&str]| -> Vec<Vec<String>> {
        let step = |n: u64, test: &str| {
            let mut v = strings(&["-c", &c, "-n", &n.to_string(), "-t", test]);
            v.extend(strings(pipeline));
            v
        };
        let mut steps: Vec<Vec<String>> = SUITE_TESTS
            .iter()
            .filter(|t| wanted(t))
            .map(|t| step(n, t))
            .collect();
        if wanted("lrange") {
            steps.push(step((n / LRANGE_DIVISOR).max(1), "lrange"));
        }
        steps
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
            steps: suite(spec.requests, &[]),
        },
        Unit {
            scenario: "pipelined",
            sides: unlimited,
            steps: suite(spec.pipelined_requests, &["-P", "16"]),
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
        let n = spec.capped_requests.to_string();
        let step = |test| strings(&["-c", &c, "-n", &n, "-t", test, "-r", "1000000", "-d", "256"]);
        out.push(Unit {
            scenario: "capped",
            sides,
            steps: vec![step("set"), step("get")],
        });
    }
    out.retain(|u| !u.steps.is_empty());
    out
}

/// The order in which step `step` of round `round` visits `n` sides: a
/// rotation that moves by one each step and each round.
fn side_order(n: usize, round: u32, step: usize) -> impl Iterator<Item = usize> {
    let first = (round as usize + step) % n.max(1);
    (0..n).map(move |i| (first + i) % n)
}

/// Whether Redis 7.0 has the policy (FerrumKV's `allkeys-ahe` it has not).
fn redis_has(policy: &str) -> bool {
    policy != "allkeys-ahe"
}

/// The redis-benchmark command lines of one round, for the report.
pub(crate) fn command_lines(spec: &ThroughputSpec) -> Vec<String> {
    let mut out = Vec::new();
    for u in units(spec) {
        for inv in &u.steps {
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
            let servers = unit
                .sides
                .iter()
                .map(|side| {
                    let extra: Vec<&str> = match &side.policy {
                        Some(p) => vec!["--maxmemory", "16mb", "--maxmemory-policy", p],
                        None => vec![],
                    };
                    let log = run_dir.join(format!(
                        "throughput-{round}-{}-{}-{}.log",
                        unit.scenario,
                        side.name,
                        side.policy.as_deref().unwrap_or("-")
                    ));
                    ServerProcess::start(side.kind, target, &extra, &log)
                })
                .collect::<Result<Vec<_>>>()?;
            for (i, step) in unit.steps.iter().enumerate() {
                for s in side_order(unit.sides.len(), round, i) {
                    let side = &unit.sides[s];
                    let mut args =
                        strings(&["-h", "127.0.0.1", "-p", &servers[s].port.to_string()]);
                    args.extend(step.iter().cloned());
                    args.push("--csv".into());
                    let server_before = servers[s].cpu_ns();
                    let run = bench(&args)?;
                    let server_cpu_us = match (server_before, servers[s].cpu_ns(), &run.rows[..]) {
                        (Some(before), Some(after), [_]) => requests_of(step)
                            .map(|n| after.saturating_sub(before) as f64 / 1_000.0 / n as f64),
                        _ => None,
                    };
                    for (test, rps, p50, p99) in run.rows {
                        samples.push(Sample {
                            round,
                            scenario: unit.scenario.into(),
                            side: side.name.into(),
                            policy: side.policy.clone().unwrap_or_else(|| "-".into()),
                            test,
                            rps,
                            p50_ms: p50,
                            p99_ms: p99,
                            client_busy: run.client_busy,
                            server_cpu_us,
                        });
                    }
                }
            }
            drop(servers);
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

/// The `-n` of a step's redis-benchmark arguments.
fn requests_of(step: &[String]) -> Option<u64> {
    let at = step.iter().position(|a| a == "-n")?;
    step.get(at + 1)?.parse().ok()
}

/// What one redis-benchmark invocation printed and how busy it was.
struct Invocation {
    /// Test, ops/s, p50 ms, p99 ms, per row.
    rows: Vec<(String, f64, f64, f64)>,
    /// Its CPU time over its wall time (see [`Sample::client_busy`]).
    client_busy: Option<f64>,
}

/// Runs redis-benchmark with `args`, killing it after
/// [`INVOCATION_TIMEOUT`], and parses its CSV. Its CPU time is read from
/// /proc while it runs: the last reading over the time it was taken is
/// its busy share (the final few milliseconds, after the last reading,
/// are left out of both).
fn bench(args: &[String]) -> Result<Invocation> {
    let started = Instant::now();
    let mut child = Command::new("redis-benchmark")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot run redis-benchmark")?;
    let deadline = Instant::now() + INVOCATION_TIMEOUT;
    let mut busy = None;
    // The CSV is a few KiB: it fits the pipe, so polling cannot deadlock.
    while child.try_wait()?.is_none() {
        if let Some(ns) = cpu_ns(child.id()) {
            let wall = started.elapsed().as_secs_f64();
            busy = (wall > 0.0).then(|| ns as f64 / 1e9 / wall);
        }
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
    Ok(Invocation {
        rows,
        client_busy: busy,
    })
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
    /// The median of the per-round ratios of FerrumKV's ops/s over Redis's.
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
    /// The client's median busy share in FerrumKV's runs and in Redis's
    /// (see [`Sample::client_busy`]).
    pub(crate) client_busy: (Option<f64>, Option<f64>),
    /// The median of the per-round ratios of FerrumKV's server CPU time
    /// per request over Redis's, where both were measured.
    pub(crate) cpu_ratio: Option<f64>,
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

/// The per-round ratios of `value` in `a` over `value` in `b`, for the
/// rounds where both have one.
fn per_round(a: &[&Sample], b: &[&Sample], value: impl Fn(&Sample) -> Option<f64>) -> Vec<f64> {
    a.iter()
        .filter_map(|x| {
            let y = b.iter().find(|y| y.round == x.round)?;
            Some(value(x)? / value(y)?.max(1e-9))
        })
        .collect()
}

/// The median and the min-max of the ratios of `a`'s ops/s over `b`'s in
/// the rounds both have, and how many rounds that is.
fn compare(a: &[&Sample], b: &[&Sample]) -> (f64, (f64, f64), usize) {
    let per_round = per_round(a, b, |s| Some(s.rps));
    let lo = per_round.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = per_round.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (median(&per_round), (lo, hi), per_round.len())
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
            let busy = |v: &[&Sample]| {
                let b: Vec<f64> = v.iter().filter_map(|s| s.client_busy).collect();
                (!b.is_empty()).then(|| median(&b))
            };
            let cpu = per_round(&ferrum, &redis, |s| s.server_cpu_us);
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
                client_busy: (busy(&ferrum), busy(&redis)),
                cpu_ratio: (!cpu.is_empty()).then(|| median(&cpu)),
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
        "| scenario | test | FerrumKV policy | Redis policy | FerrumKV ops/s | Redis ops/s | FerrumKV / Redis | per-round range | Redis A/A | FerrumKV p99 ms | Redis p99 ms | client busy (FerrumKV / Redis runs) | server CPU per request, FerrumKV / Redis |\n| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    let two = |x: Option<f64>| x.map_or("–".into(), |x| format!("{x:.2}"));
    for r in rows {
        let aa = match r.aa {
            Some((x, (lo, hi))) => format!("{x:.2} ({lo:.2}-{hi:.2})"),
            None => "–".into(),
        };
        let busy = format!("{} / {}", two(r.client_busy.0), two(r.client_busy.1));
        let cpu = two(r.cpu_ratio);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.0} | {:.0} | {:.2} | {:.2}-{:.2} | {aa} | {:.3} | {:.3} | {busy} | {cpu} |",
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
    if let Some(line) = client_line(rows) {
        let _ = writeln!(out, "\n{line}");
    }
    out
}

/// How many rows had a client that kept its core busy: there the ratio
/// says as much about redis-benchmark as about the servers, and the
/// server CPU per request is what tells them apart.
pub(crate) fn client_line(rows: &[Row]) -> Option<String> {
    let measured: Vec<f64> = rows
        .iter()
        .filter_map(|r| Some(r.client_busy.0?.max(r.client_busy.1?)))
        .collect();
    if measured.is_empty() {
        return None;
    }
    let bound = measured.iter().filter(|&&b| b >= CLIENT_BOUND).count();
    Some(format!(
        "In {bound} of {} rows the client's median busy share was {CLIENT_BOUND} or more in one server's runs: redis-benchmark is single-threaded, so those rows timed the client about as much as the servers. Their server CPU per request (the last column, from /proc/PID/task/*/schedstat, rows of single-test invocations) compares the servers' own work.",
        measured.len()
    ))
}

/// A client busy share from which a row counts as client-bound.
const CLIENT_BOUND: f64 = 0.9;

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
            client_busy: Some(0.5 + rps / 1_000_000.0),
            server_cpu_us: Some(100_000.0 / rps),
        }
    }

    #[test]
    fn rows_carry_the_clients_busy_share_and_the_servers_cpu_ratio() {
        let samples = vec![
            s(0, "ferrumkv", "-", "GET", 400e3),
            s(0, "redis", "-", "GET", 100e3),
            s(1, "ferrumkv", "-", "GET", 200e3),
            s(1, "redis", "-", "GET", 200e3),
        ];
        let row = &rows(&samples)[0];
        // Busy: medians of 0.9, 0.7 and of 0.6, 0.7.
        let (f, r) = row.client_busy;
        assert!(
            (f.unwrap() - 0.8).abs() < 1e-9 && (r.unwrap() - 0.65).abs() < 1e-9,
            "{f:?} {r:?}"
        );
        // CPU per request: 0.25 over 1.0, then 0.5 over 0.5.
        assert!(
            (row.cpu_ratio.unwrap() - 0.625).abs() < 1e-9,
            "{:?}",
            row.cpu_ratio
        );
        let table = table(&rows(&samples));
        assert!(table.contains("| 0.80 / 0.65 | 0.62 |"), "{table}");
        assert!(table.contains("client's median busy share"), "{table}");
        // A row without CPU figures (a multi-row invocation) shows none.
        let mut bare = samples.clone();
        for x in &mut bare {
            x.server_cpu_us = None;
            x.client_busy = None;
        }
        let row = &rows(&bare)[0];
        assert_eq!((row.client_busy, row.cpu_ratio), ((None, None), None));
    }

    #[test]
    fn requests_are_read_from_the_steps_n() {
        assert_eq!(
            requests_of(&strings(&["-c", "50", "-n", "2000", "-t", "get"])),
            Some(2000)
        );
        assert_eq!(requests_of(&strings(&["-t", "get"])), None);
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn ratio_is_the_median_of_the_rounds_and_range_their_spread() {
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
        // Per-round ratios 1.0, 1.2, 1.5; A/A 1.1, 0.9, 1.0.
        assert!((row.ratio - 1.2).abs() < 1e-12);
        assert!((row.ratio_range.0 - 1.0).abs() < 1e-12);
        assert!((row.ratio_range.1 - 1.5).abs() < 1e-12);
        let (aa, (lo, hi)) = row.aa.expect("A/A");
        assert!((aa - 1.0).abs() < 1e-12 && (lo - 0.9).abs() < 1e-12 && (hi - 1.1).abs() < 1e-12);
        assert_eq!(row.rounds, 3);
        let t = table(&rows);
        assert!(
            t.contains("| plain | GET | - | - | 100000 | 100000 | 1.20 | 1.00-1.50 | 1.00 (0.90-1.10) | 1.000 | 1.000 |"),
            "{t}"
        );
        assert!(t.contains("A/A (Redis against Redis, same rounds and method, 1 rows): median-of-rounds ratios 1.00-1.00"), "{t}");
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
            tests: Vec::new(),
        };
        let u = units(&spec);
        let names: Vec<&str> = u.iter().map(|u| u.scenario).collect();
        assert_eq!(names, ["plain", "pipelined", "capped"]);
        assert_eq!(u[0].steps.len(), SUITE_TESTS.len() + 1);
        assert_eq!(
            u[0].steps[0],
            strings(&["-c", "50", "-n", "20000", "-t", "ping"])
        );
        assert_eq!(
            u[0].steps[SUITE_TESTS.len()],
            strings(&["-c", "50", "-n", "4000", "-t", "lrange"])
        );
        assert!(u[1]
            .steps
            .iter()
            .all(|s| s.ends_with(&strings(&["-P", "16"]))));
        let capped_tests: Vec<&str> = u[2].steps.iter().map(|s| s[5].as_str()).collect();
        assert_eq!(capped_tests, ["set", "get"]);
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
        assert_eq!(command_lines(&spec).len(), 2 * (SUITE_TESTS.len() + 1) + 2);
    }

    #[test]
    fn a_test_filter_keeps_only_its_steps_in_suite_order() {
        let spec = ThroughputSpec {
            rounds: 1,
            requests: 1000,
            pipelined_requests: 1000,
            capped_requests: 1000,
            clients: 50,
            capped_policies: Vec::new(),
            tests: strings(&["lrange", "hset", "set"]),
        };
        let u = units(&spec);
        assert_eq!(u.len(), 2);
        let tests: Vec<&str> = u[0].steps.iter().map(|s| s[5].as_str()).collect();
        assert_eq!(tests, ["set", "hset", "lrange"]);
    }

    #[test]
    fn side_order_rotates_by_step_and_round() {
        let order = |r, s| side_order(3, r, s).collect::<Vec<_>>();
        assert_eq!(order(0, 0), [0, 1, 2]);
        assert_eq!(order(0, 1), [1, 2, 0]);
        assert_eq!(order(1, 1), [2, 0, 1]);
        // Over three consecutive steps every side goes first once.
        let firsts: Vec<usize> = (0..3).map(|s| order(4, s)[0]).collect();
        assert_eq!(
            firsts
                .iter()
                .copied()
                .collect::<std::collections::BTreeSet<_>>()
                .len(),
            3
        );
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
