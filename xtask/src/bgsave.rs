//! What a background save costs while clients write (#38): `BGSAVE`'s wall
//! time, GET/SET latency during the save against without one, and memory
//! during the save against before it, FerrumKV and Redis interleaved.
//!
//! Per round and server in turn: the server starts empty, `DEBUG
//! POPULATE` fills it (`keys` keys of `value_bytes`-byte values) and one
//! redis-benchmark run warms it. Then:
//!
//! - with a save: `BGSAVE`, and redis-benchmark (`-t set,get -r keys -d
//!   value_bytes -c 20`) runs back to back until the save ends (its wall
//!   time: `rdb_bgsave_in_progress` polled every 20 ms);
//! - without: as many runs, for as long.
//!
//! Latency is the median of the runs' p99 (the worse of SET's and GET's).
//! Memory is the server's resident set plus the pages private to its
//! children (a forked saver's pages that writes copied), sampled every
//! 20 ms from /proc: the server's own smaps are not read, since walking
//! its page tables stalls it. For Redis the fork also shows as its
//! `latest_fork_usec`.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use ferrum_bench::client::Client;
use serde::{Deserialize, Serialize};

use crate::procs::{ServerKind, ServerProcess};

/// What to run.
#[derive(Clone, Debug)]
pub(crate) struct BgsaveSpec {
    pub(crate) keys: u64,
    pub(crate) value_bytes: u64,
    /// Interleaved rounds; the report gives medians.
    pub(crate) rounds: u32,
    /// redis-benchmark `-n` per run.
    pub(crate) requests: u64,
    pub(crate) servers: Vec<ServerKind>,
}

/// One server's round.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct BgsaveRound {
    /// `ferrumkv` or `redis`.
    pub(crate) server: String,
    pub(crate) round: u32,
    pub(crate) keys: u64,
    pub(crate) value_bytes: u64,
    /// `BGSAVE` to the end of the save, seconds.
    pub(crate) wall_s: f64,
    /// Median and worst p99 of the runs during the save, ms.
    pub(crate) p99_ms: f64,
    pub(crate) p99_max_ms: f64,
    /// The same without a save.
    pub(crate) base_p99_ms: f64,
    pub(crate) base_p99_max_ms: f64,
    /// Memory before the save and its peak during it, bytes.
    pub(crate) mem_before: u64,
    pub(crate) mem_peak: u64,
    /// Redis's `latest_fork_usec`, ms (0 for FerrumKV).
    pub(crate) fork_ms: f64,
    /// redis-benchmark runs during the save.
    pub(crate) runs: usize,
    /// The file written, bytes.
    pub(crate) file_bytes: u64,
}

impl BgsaveSpec {
    /// The redis-benchmark command line of one run against `port`.
    fn bench_args(&self, port: u16) -> Vec<String> {
        [
            "-p",
            &port.to_string(),
            "-t",
            "set,get",
            "-r",
            &self.keys.to_string(),
            "-d",
            &self.value_bytes.to_string(),
            "-n",
            &self.requests.to_string(),
            "-c",
            "20",
            "--csv",
            "--precision",
            "3",
        ]
        .map(String::from)
        .to_vec()
    }

    /// The command lines, for the report.
    pub(crate) fn command_lines(&self) -> Vec<String> {
        vec![
            format!(
                "DEBUG POPULATE {} key {} # per server and round, on a fresh server",
                self.keys, self.value_bytes
            ),
            format!(
                "redis-benchmark {} # back to back, during BGSAVE and for as long without",
                self.bench_args(0).join(" ").replace("-p 0", "-p PORT")
            ),
        ]
    }
}

/// Runs every round, one server at a time.
pub(crate) fn run(spec: &BgsaveSpec, target: &Path, run_dir: &Path) -> Result<Vec<BgsaveRound>> {
    let mut rounds = Vec::new();
    for round in 1..=spec.rounds {
        for &kind in &spec.servers {
            let log = run_dir.join(format!("bgsave-{}-{round}.log", kind.name()));
            let r = one(spec, kind, round, target, &log)
                .with_context(|| format!("bgsave round {round} on {}", kind.name()))?;
            eprintln!(
                "  bgsave: round {round} {}: {:.2} s, p99 {:.2} ms vs {:.2} ms without, memory {} -> {} MB, fork {:.1} ms",
                kind.name(),
                r.wall_s,
                r.p99_ms,
                r.base_p99_ms,
                r.mem_before >> 20,
                r.mem_peak >> 20,
                r.fork_ms
            );
            rounds.push(r);
        }
    }
    Ok(rounds)
}

fn one(
    spec: &BgsaveSpec,
    kind: ServerKind,
    round: u32,
    target: &Path,
    log: &Path,
) -> Result<BgsaveRound> {
    let extra: &[&str] = match kind {
        ServerKind::Ferrum => &[],
        ServerKind::Redis => &["--enable-debug-command", "yes"],
    };
    let server = ServerProcess::start(kind, target, extra, log)?;
    let mut client = Client::connect(("127.0.0.1", server.port))?;
    let (keys, size) = (spec.keys.to_string(), spec.value_bytes.to_string());
    client.call(&["DEBUG", "POPULATE", &keys, "key", &size])?;
    let args = spec.bench_args(server.port);
    // One run first, so neither measurement pays for a cold start.
    bench_p99(&args)?;
    thread::sleep(Duration::from_secs(1));
    let pid = server.pid();
    let before = memory_bytes(pid);

    // With a save.
    let peak = AtomicU64::new(before);
    let saving = AtomicBool::new(true);
    let started = Instant::now();
    client.call(&["BGSAVE"])?;
    let (during, wall) = thread::scope(|s| -> Result<(Vec<f64>, Duration)> {
        s.spawn(|| {
            while saving.load(Ordering::Relaxed) {
                peak.fetch_max(memory_bytes(pid), Ordering::Relaxed);
                thread::sleep(Duration::from_millis(20));
            }
        });
        let watcher = s.spawn(|| -> Result<Duration> {
            let mut watch = Client::connect(("127.0.0.1", server.port))?;
            let result = loop {
                let info = watch.info("persistence")?;
                if info.get("rdb_bgsave_in_progress").map(String::as_str) != Some("1") {
                    break Ok(started.elapsed());
                }
                if started.elapsed() > Duration::from_secs(600) {
                    break Err(anyhow::anyhow!("BGSAVE still running after 600 s"));
                }
                thread::sleep(Duration::from_millis(20));
            };
            saving.store(false, Ordering::Relaxed);
            result
        });
        let mut during = Vec::new();
        while saving.load(Ordering::Relaxed) || during.is_empty() {
            during.push(bench_p99(&args)?);
        }
        let wall = watcher.join().expect("the watcher does not panic")?;
        Ok((during, wall))
    })?;
    let info = client.info("persistence")?;
    if info.get("rdb_last_bgsave_status").map(String::as_str) != Some("ok") {
        bail!("BGSAVE failed: {info:?}");
    }
    let fork_us: f64 = (client.info("stats")?)
        .get("latest_fork_usec")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);

    // Without a save: runs for as long.
    let t1 = Instant::now();
    let mut without = Vec::new();
    while t1.elapsed() < wall || without.is_empty() {
        without.push(bench_p99(&args)?);
    }
    let file_bytes = std::fs::metadata(server.dir().join("dump.rdb"))
        .map(|m| m.len())
        .unwrap_or(0);
    let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    Ok(BgsaveRound {
        server: kind.name().to_owned(),
        round,
        keys: spec.keys,
        value_bytes: spec.value_bytes,
        wall_s: wall.as_secs_f64(),
        p99_ms: crate::throughput::median(&during),
        p99_max_ms: max(&during),
        base_p99_ms: crate::throughput::median(&without),
        base_p99_max_ms: max(&without),
        mem_before: before,
        mem_peak: peak.into_inner(),
        fork_ms: fork_us / 1000.0,
        runs: during.len(),
        file_bytes,
    })
}

/// One redis-benchmark run: the worse p99 of its SET and GET, ms.
fn bench_p99(args: &[String]) -> Result<f64> {
    let rows = crate::redis_benchmark::run(args)?;
    let worst = rows.iter().map(|r| r.3).fold(f64::NAN, f64::max);
    if worst.is_nan() {
        bail!("redis-benchmark printed no rows");
    }
    Ok(worst)
}

/// The memory of process `pid` and its children, bytes (0 once gone):
/// its resident set (`VmRSS`, which costs it nothing to read) plus the
/// pages private to each child.
fn memory_bytes(pid: u32) -> u64 {
    let kib_of = |text: &str, fields: &[&str]| -> u64 {
        text.lines()
            .filter(|l| fields.iter().any(|f| l.starts_with(f)))
            .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .sum()
    };
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return 0;
    };
    let mut kib = kib_of(&status, &["VmRSS:"]);
    let children =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    for child in children.split_whitespace() {
        if let Ok(smaps) = std::fs::read_to_string(format!("/proc/{child}/smaps_rollup")) {
            kib += kib_of(&smaps, &["Private_Clean:", "Private_Dirty:"]);
        }
    }
    kib * 1024
}

/// The report's table: a row per server, medians over the rounds.
pub(crate) fn table(rounds: &[BgsaveRound]) -> String {
    let mut out = String::from(
        "| server | BGSAVE wall time | p99 during the save / without | memory peak / before | fork pause | file |\n\
         | --- | ---: | ---: | ---: | ---: | ---: |\n",
    );
    let mut servers: Vec<&str> = rounds.iter().map(|r| r.server.as_str()).collect();
    servers.sort_unstable();
    servers.dedup();
    for server in servers {
        let rs: Vec<&BgsaveRound> = rounds.iter().filter(|r| r.server == server).collect();
        let med = |f: &dyn Fn(&BgsaveRound) -> f64| {
            crate::throughput::median(&rs.iter().map(|r| f(r)).collect::<Vec<_>>())
        };
        let (p99, base) = (med(&|r| r.p99_ms), med(&|r| r.base_p99_ms));
        let mb = |b: f64| b / (1u64 << 20) as f64;
        let (peak, before) = (
            mb(med(&|r| r.mem_peak as f64)),
            mb(med(&|r| r.mem_before as f64)),
        );
        let fork = med(&|r| r.fork_ms);
        let fork = if fork > 0.0 {
            format!("{fork:.1} ms")
        } else {
            "none".to_owned()
        };
        out.push_str(&format!(
            "| {} | {:.2} s | {p99:.2} / {base:.2} ms ({:.2}x) | {peak:.0} / {before:.0} MiB ({:.2}x) | {fork} | {:.0} MiB |\n",
            crate::report::server_label(server),
            med(&|r| r.wall_s),
            p99 / base,
            peak / before,
            mb(med(&|r| r.file_bytes as f64)),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_gives_each_servers_medians() {
        let round = |server: &str, n: u32, wall: f64, p99: f64, fork: f64| BgsaveRound {
            server: server.into(),
            round: n,
            wall_s: wall,
            p99_ms: p99,
            base_p99_ms: 0.4,
            mem_before: 1000 << 20,
            mem_peak: 1100 << 20,
            fork_ms: fork,
            file_bytes: 64 << 20,
            ..BgsaveRound::default()
        };
        let rounds = [
            round("ferrumkv", 1, 1.7, 0.6, 0.0),
            round("redis", 1, 2.9, 0.5, 17.0),
            round("ferrumkv", 2, 1.9, 0.8, 0.0),
            round("redis", 2, 3.1, 0.7, 18.0),
            round("ferrumkv", 3, 1.8, 1.0, 0.0),
            round("redis", 3, 3.0, 0.9, 19.0),
        ];
        let t = table(&rounds);
        assert!(
            t.contains("| FerrumKV | 1.80 s | 0.80 / 0.40 ms (2.00x) | 1100 / 1000 MiB (1.10x) | none | 64 MiB |"),
            "{t}"
        );
        assert!(
            t.contains("| Redis | 3.00 s | 0.70 / 0.40 ms (1.75x)"),
            "{t}"
        );
        assert!(t.contains("| 18.0 ms | 64 MiB |"), "{t}");
    }

    #[test]
    fn a_process_that_is_gone_has_no_memory() {
        assert_eq!(memory_bytes(u32::MAX), 0);
        assert!(memory_bytes(std::process::id()) > 0);
    }
}
