//! The equal-memory, keys-at-maxmemory, throughput and sharded scenarios of
//! `cargo xtask bench` at a small size, against real servers. The first two
//! are skipped with a message when redis-server is not installed, the
//! sharded one's proxy route when nutcracker is not; the throughput test
//! requires redis-server and redis-benchmark and fails without them (the
//! scenario is a comparison with Redis).

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::Value;

fn have_redis() -> bool {
    Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A fresh, empty directory under the system's temporary directory.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xtask-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Runs `cargo xtask bench` with `args` (building the release binaries
/// if they are stale) and returns its results.json and the report.
fn bench(name: &str, args: &[&str]) -> (Value, String) {
    bench_report(name, args, "equal-memory.md")
}

/// [`bench`], returning the report `report` (under the run's `benches`).
fn bench_report(name: &str, args: &[&str], report: &str) -> (Value, String) {
    let dir = scratch(name);
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("bench")
        .args(args)
        .arg("--out")
        .arg(dir.join("benches"))
        .output()
        .expect("run xtask");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "xtask failed:\n{stderr}");
    let results = stderr
        .lines()
        .find_map(|l| l.strip_prefix("results: "))
        .unwrap_or_else(|| panic!("no results path in:\n{stderr}"));
    let json: Value =
        serde_json::from_str(&fs::read_to_string(results).expect("results.json")).expect("json");
    let report = fs::read_to_string(dir.join("benches").join(report)).expect("report");
    let _ = fs::remove_dir_all(&dir);
    (json, report)
}

#[test]
fn equal_memory_gives_every_cell_redis_lru_m_ref() {
    if !have_redis() {
        eprintln!("skipped: redis-server is not installed (apt-get install redis-server)");
        return;
    }
    let (json, report) = bench(
        "equal-memory",
        &[
            "--scenarios",
            "equal-memory",
            "--requests",
            "20000",
            "--calibration-requests",
            "20000",
            "--patterns",
            "zipf,ttl",
            "--policies",
            "allkeys-lru,allkeys-ahe",
        ],
    );
    let runs = json["equal_memory"].as_array().expect("equal_memory");
    assert_eq!(runs.len(), 1, "{json}");
    let run = &runs[0];
    assert_eq!(run["scale"], 1);
    let refs = run["references"].as_array().expect("references");
    let patterns: Vec<&str> = refs
        .iter()
        .map(|r| r["pattern"].as_str().unwrap())
        .collect();
    assert_eq!(patterns, ["zipf", "ttl"]);
    for r in refs {
        let held = r["redis_dbsize"].as_u64().unwrap();
        // Redis expires ttl's keys on its own wall clock, so how many
        // expired keys it still holds at the end of the calibration moves
        // with the replay's speed (5,136 once on a loaded machine).
        let slack = if r["pattern"] == "ttl" { 250 } else { 100 };
        assert!(
            (5_000 - slack..=5_000 + slack).contains(&held),
            "M_ref calibration: {r}"
        );
    }
    let cells = run["cells"].as_array().expect("cells");
    let servers = [
        ("ferrumkv", "allkeys-lru"),
        ("ferrumkv", "allkeys-ahe"),
        ("redis", "allkeys-lru"),
        ("redis", "allkeys-lfu"),
    ];
    assert_eq!(cells.len(), servers.len() * refs.len(), "{run}");
    for (server, policy) in servers {
        for r in refs {
            let cell = cells
                .iter()
                .find(|c| {
                    c["server"] == server && c["policy"] == policy && c["pattern"] == r["pattern"]
                })
                .unwrap_or_else(|| panic!("no cell {server} {policy} {}", r["pattern"]));
            // The same fixed limit for every cell of a pattern.
            assert_eq!(cell["maxmemory"], r["maxmemory"], "{cell}");
            let hit = cell["hit_ratio"].as_f64().unwrap();
            assert!(hit > 0.2 && hit < 1.0, "{cell}");
            let dbsize = cell["dbsize"].as_u64().unwrap();
            assert!(dbsize > 0, "{cell}");
            // At the limit, give or take the last write (Redis evicts
            // before a command, so it may end a few bytes over).
            let limit = r["maxmemory"].as_u64().unwrap();
            assert!(
                cell["used_memory"].as_u64().unwrap() <= limit + limit / 100,
                "{cell}"
            );
            assert!(report.contains(&format!("({dbsize})")), "{report}");
        }
    }
    assert!(
        report.contains("## Hit ratio at equal memory, scale 1"),
        "{report}"
    );
    assert!(report.contains("| FerrumKV allkeys-ahe |"), "{report}");
    assert!(report.contains("| Redis allkeys-lfu |"), "{report}");
}

#[test]
fn keys_at_maxmemory_fills_each_server_past_its_limit() {
    if !have_redis() {
        eprintln!("skipped: redis-server is not installed (apt-get install redis-server)");
        return;
    }
    let maxmemory: u64 = 4 << 20;
    let (json, report) = bench_report(
        "keys-at-maxmemory",
        &[
            "--scenarios",
            "keys-at-maxmemory",
            "--keys-maxmemory",
            &maxmemory.to_string(),
            "--keys-value-sizes",
            "32,1000",
            "--policies",
            "allkeys-lru,allkeys-ahe",
        ],
        "keys-at-maxmemory.md",
    );
    let rows = json["keys_at_maxmemory"]
        .as_array()
        .expect("keys_at_maxmemory");
    // Redis lru and lfu, FerrumKV lru and ahe, for each of two sizes.
    assert_eq!(rows.len(), 8, "{json}");
    for row in rows {
        let (keys, sets) = (row["keys"].as_u64().unwrap(), row["sets"].as_u64().unwrap());
        let value = row["value_bytes"].as_u64().unwrap();
        assert_eq!(sets, 3 * maxmemory / (value + 100), "{row}");
        assert!(keys > 0 && keys < sets, "evicted some, kept some: {row}");
        // Redis counts its clients' buffers in `used_memory` and evicts
        // for them only at the next write, so it may end a little over.
        let slack = if row["server"] == "redis" {
            maxmemory / 100
        } else {
            4096
        };
        assert!(
            row["used_memory"].as_u64().unwrap() <= maxmemory + slack,
            "{row}"
        );
        assert!(row["rss_bytes"].as_u64().unwrap() > 0, "{row}");
    }
    assert!(
        report.contains("## Keys held at maxmemory 4 MiB, 32-byte values"),
        "{report}"
    );
    assert!(
        report.contains("## Keys held at maxmemory 4 MiB, 1000-byte values"),
        "{report}"
    );
    assert!(report.contains("| Redis allkeys-lru |"), "{report}");
    assert!(report.contains("| 1.00x |"), "{report}");
}

#[test]
fn throughput_interleaves_rounds_and_reports_ratios_and_aa() {
    for tool in ["redis-server", "redis-benchmark"] {
        assert!(
            Command::new(tool)
                .arg("--version")
                .stdout(Stdio::null())
                .status()
                .is_ok_and(|s| s.success()),
            "{tool} is required by this test (apt-get install redis-server redis-tools)"
        );
    }
    let (json, report) = bench_report(
        "throughput",
        &[
            "--scenarios",
            "throughput",
            "--throughput-rounds",
            "2",
            "--throughput-requests",
            "2000",
            "--throughput-pipelined-requests",
            "20000",
            "--throughput-capped-requests",
            "1000",
            "--capped-policies",
            "allkeys-lru,allkeys-ahe",
            "--clients",
            "5",
        ],
        "throughput.md",
    );
    let samples = json["throughput"].as_array().expect("throughput");
    let count = |scenario: &str, side: &str, policy: &str| {
        samples
            .iter()
            .filter(|s| s["scenario"] == scenario && s["side"] == side && s["policy"] == policy)
            .count()
    };
    // The default suite has 20 rows: 2 rounds of each side.
    for scenario in ["plain", "pipelined"] {
        for side in ["ferrumkv", "redis", "redis-aa"] {
            assert_eq!(count(scenario, side, "-"), 40, "{scenario} {side}");
        }
    }
    // SET and GET: FerrumKV lru and ahe, Redis lru and lfu (for ahe).
    for (side, policy) in [
        ("ferrumkv", "allkeys-lru"),
        ("ferrumkv", "allkeys-ahe"),
        ("redis", "allkeys-lru"),
        ("redis", "allkeys-lfu"),
    ] {
        assert_eq!(count("capped", side, policy), 4, "{side} {policy}");
    }
    for s in samples {
        assert!(s["rps"].as_f64().is_some_and(|r| r > 0.0), "{s}");
    }
    // The order of the sides rotates by round (and by step): round 0's
    // first step starts with FerrumKV, round 1's with Redis.
    let first = |round: u64| {
        samples
            .iter()
            .find(|s| s["round"] == round)
            .map(|s| s["side"].as_str().unwrap().to_owned())
    };
    assert_eq!(first(0).as_deref(), Some("ferrumkv"));
    assert_eq!(first(1).as_deref(), Some("redis"));
    for row in [
        "| plain | PING_INLINE | - | - |",
        "| plain | LRANGE_600 (first 600 elements) | - | - |",
        "| pipelined | MSET (10 keys) | - | - |",
        "| capped | SET | allkeys-ahe | allkeys-lru |",
        "| capped | GET | allkeys-ahe | allkeys-lfu |",
        "| capped | GET | allkeys-lru | allkeys-lru |",
    ] {
        assert!(report.contains(row), "missing {row} in:\n{report}");
    }
    assert!(report.contains("A/A (Redis against Redis"), "{report}");
    assert_eq!(json["throughput_load"].as_array().map(Vec::len), Some(2));
    assert!(
        report.contains("1-minute load average at the start of each round: "),
        "{report}"
    );
}

#[test]
fn sharded_compares_three_nodes_by_each_route_with_one() {
    // The cluster route needs nothing else; the proxy route needs
    // nutcracker and is skipped by the bench itself without it.
    let proxy = ferrum_bench::twemproxy::available();
    if !proxy {
        eprintln!("nutcracker is not installed (apt-get install nutcracker): cluster route only");
    }
    let (json, report) = bench_report(
        "sharded",
        &[
            "--scenarios",
            "sharded",
            "--quick",
            "--requests",
            "20000",
            "--sharded-policies",
            "allkeys-lru",
            "--sharded-patterns",
            "zipf,mixed",
        ],
        "sharded.md",
    );
    let cells = json["sharded"]["cells"].as_array().expect("sharded cells");
    let routes: &[&str] = if proxy {
        &["proxy", "cluster"]
    } else {
        &["cluster"]
    };
    assert_eq!(cells.len(), 2 * routes.len(), "{json}");
    for cell in cells {
        let nodes = cell["sharded"]["nodes"].as_array().expect("nodes");
        assert_eq!(nodes.len(), 3, "{cell}");
        for node in nodes {
            assert!(node["keys"].as_u64().unwrap() > 0, "{cell}");
            assert!(node["evicted"].as_u64().unwrap() > 0, "{cell}");
        }
        for layout in ["single", "sharded"] {
            assert_eq!(cell[layout]["requests"], 20_000, "{cell}");
            let ratio = cell[layout]["hit_ratio"].as_f64().unwrap();
            assert!(ratio > 0.0 && ratio < 1.0, "{cell}");
        }
    }
    for route in routes {
        for pattern in ["zipf", "mixed"] {
            let row = format!("| allkeys-lru | {pattern} | {route} |");
            assert!(report.contains(&row), "missing {row} in:\n{report}");
        }
    }
}
