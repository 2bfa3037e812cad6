//! The report writers on a fixed input.

use super::*;
use crate::equal_memory::{EqualCell, EqualMemoryRun, Reference};
use crate::keys::KeysRow;

fn live(policy: &str, pattern: &str, hit_ratio: f64, sim: Option<f64>) -> LiveCell {
    LiveCell {
        live: LiveRun {
            policy: policy.into(),
            source: pattern.into(),
            hit_ratio,
            dbsize: 5_003,
            window: 10_000,
            windows: vec![hit_ratio - 0.1, hit_ratio],
            rest: Map::new(),
        },
        sim: sim.map(|s| SimTwin {
            hit_ratio: s,
            difference_pp: 100.0 * (hit_ratio - s),
            rest: Map::new(),
        }),
    }
}

fn bench(scenario: &str, server: &str, policy: &str, test: &str, rps: f64) -> BenchRow {
    BenchRow {
        scenario: scenario.into(),
        server: server.into(),
        policy: policy.into(),
        test: test.into(),
        rps,
        p50_ms: 0.5,
        p99_ms: 1.25,
    }
}

fn fixed() -> Results {
    Results {
        run: "20260101T000000Z".into(),
        seed: 42,
        quick: true,
        machine: Machine {
            nproc: 2,
            cpu_model: "Test CPU".into(),
            memory_mib: 1024,
            rustc: "rustc 1.85.0".into(),
            redis_server: Some("Redis server v=7.0.15".into()),
            redis_benchmark: Some("redis-benchmark 7.0.15".into()),
            commit: "abc1234".into(),
        },
        config: RunConfig {
            requests: 100_000,
            spacing_requests: 20_000,
            bench_requests: 100_000,
            clients: 50,
            policies: vec!["allkeys-lru".into(), "allkeys-ahe".into()],
            capped_policies: vec!["allkeys-ahe".into()],
            patterns: vec!["zipf".into(), "scan".into()],
        },
        commands: vec![
            "cargo xtask bench --quick".into(),
            "redis-benchmark -t set,get".into(),
            "ferrum-bench live --requests 100000".into(),
        ],
        skipped: vec![],
        redis_benchmark: vec![
            bench("baseline", "ferrumkv", "-", "SET", 30_000.0),
            bench("baseline", "redis", "-", "SET", 40_000.0),
            bench(
                "capped-allkeys-ahe",
                "ferrumkv",
                "allkeys-ahe",
                "GET",
                20_000.0,
            ),
            bench(
                "capped-allkeys-ahe",
                "redis",
                "allkeys-lru",
                "GET",
                25_000.0,
            ),
        ],
        sim: vec![SimCell {
            policy: "allkeys-lru".into(),
            pattern: "zipf".into(),
            hit_ratio: 0.649,
            rest: Map::new(),
        }],
        live: vec![
            live("allkeys-lru", "zipf", 0.6443, Some(0.6440)),
            live("allkeys-ahe", "scan", 0.0420, Some(0.0300)),
        ],
        redis_live: vec![live("allkeys-lru", "zipf", 0.6154, None)],
        spacing_full: vec![live("allkeys-lru", "zipf", 0.6301, None)],
        spacing_paced: vec![live("allkeys-lru", "zipf", 0.6305, None)],
        equal_memory: vec![EqualMemoryRun {
            scale: 1,
            capacity: 5_000,
            requests: 100_000,
            calibration_requests: 20_000,
            references: vec![Reference {
                pattern: "zipf".into(),
                maxmemory: 1_000_000,
                redis_dbsize: 5_002,
            }],
            cells: vec![
                equal("ferrumkv", "allkeys-ahe", 0.6612, 6_100),
                equal("redis", "allkeys-lru", 0.6154, 5_002),
            ],
            elapsed_seconds: 90.0,
        }],
        keys_at_maxmemory: vec![
            keys("redis", "allkeys-lru", 975_418, 150_000_000),
            keys("ferrumkv", "allkeys-ahe", 1_170_000, 140_000_000),
            keys("ferrumkv", "allkeys-lru", 1_400_000, 160_000_000),
        ],
        ..Results::default()
    }
}

fn equal(server: &str, policy: &str, hit_ratio: f64, dbsize: u64) -> EqualCell {
    EqualCell {
        server: server.into(),
        policy: policy.into(),
        pattern: "zipf".into(),
        maxmemory: 1_000_000,
        hit_ratio,
        dbsize,
        ..EqualCell::default()
    }
}

fn keys(server: &str, policy: &str, keys: u64, rss_bytes: u64) -> KeysRow {
    KeysRow {
        server: server.into(),
        policy: policy.into(),
        value_bytes: 32,
        sets: 3_050_402,
        maxmemory: 128 << 20,
        keys,
        rss_bytes,
        baseline_rss_bytes: 8 << 20,
        used_memory: 134_000_000,
    }
}

#[test]
fn equal_memory_and_keys_held_have_a_report_each() {
    let md = equal_memory_md(&fixed(), |_| true);
    assert!(
        md.contains(
            "| server, policy | zipf |\n| --- | ---: |\n| FerrumKV allkeys-ahe | 66.1 (6100) |\n| Redis allkeys-lru | 61.5 (5002) |\n| `M_ref` (bytes) | 1000000 |\n"
        ),
        "{md}"
    );
    assert!(md.contains("## Hit ratio at equal memory, scale 1"), "{md}");
    assert!(md.contains("first 20000 requests"), "{md}");
    assert!(!md.contains("## Keys held"), "{md}");
    let md = keys_at_maxmemory_md(&fixed());
    assert!(md.starts_with("# Keys held at one maxmemory\n"), "{md}");
    assert!(!md.contains("## Hit ratio at equal memory"), "{md}");
    assert!(
        md.contains("## Keys held at maxmemory 128 MiB, 32-byte values"),
        "{md}"
    );
    assert!(
        md.contains(
            "| Redis allkeys-lru | 975418 | 1.00x | 153 B | 134000000 | 1.12 | 8.0 MiB | yes |"
        ),
        "{md}"
    );
    assert!(
        md.contains(
            "| FerrumKV allkeys-ahe | 1170000 | 1.20x | 119 B | 134000000 | 1.04 | 8.0 MiB | yes |"
        ),
        "{md}"
    );
    // 160 MB is above 1.10 x 128 MiB + 8 MiB (156.0 MB).
    assert!(
        md.contains(
            "| FerrumKV allkeys-lru | 1400000 | 1.44x | 114 B | 134000000 | 1.19 | 8.0 MiB | no |"
        ),
        "{md}"
    );
}

#[test]
fn redis_benchmark_rows_pair_servers_and_give_the_ratio() {
    let md = redis_benchmark_md(&fixed());
    assert!(
        md.starts_with("# redis-benchmark: FerrumKV and Redis\n"),
        "{md}"
    );
    assert!(md.contains("2 CPUs (Test CPU), 1024 MiB"), "{md}");
    assert!(
        md.contains(
            "| baseline | SET | - | 30000 | 0.500 | 1.250 | - | 40000 | 0.500 | 1.250 | 0.75 |"
        ),
        "{md}"
    );
    assert!(
        md.contains("| capped-allkeys-ahe | GET | allkeys-ahe | 20000 | 0.500 | 1.250 | allkeys-lru | 25000 | 0.500 | 1.250 | 0.80 |"),
        "{md}"
    );
    assert!(md.contains("redis-benchmark -t set,get\n"), "{md}");
    assert!(!md.contains("ferrum-bench live"), "{md}");
}

#[test]
fn hit_ratio_tables_agreement_and_commands() {
    let md = hit_ratio_md(&fixed());
    // Simulator matrix: one row (only LRU was simulated), dashes for gaps.
    assert!(
        md.contains(
            "| policy | zipf | scan |\n| --- | ---: | ---: |\n| allkeys-lru | 64.9 | – |\n\n"
        ),
        "{md}"
    );
    // Live matrix and DBSIZE.
    assert!(
        md.contains("| allkeys-lru | 64.4 | – |\n| allkeys-ahe | – | 4.2 |"),
        "{md}"
    );
    assert!(md.contains("| allkeys-lru | 5003 | – |"), "{md}");
    // Redis with dbsize.
    assert!(md.contains("| allkeys-lru | 61.5 (5003) | – |"), "{md}");
    // Agreement: LRU zipf agrees on both counts, AHE scan is 1.2 pp off.
    assert!(
        md.contains("| allkeys-lru | zipf | 64.43 | 64.40 | +0.03 | 63.01 | 63.05 | -0.04 | yes |"),
        "{md}"
    );
    assert!(
        md.contains("| allkeys-ahe | scan | 4.20 | 3.00 | +1.20 | – | – | – | **no** |"),
        "{md}"
    );
    assert!(md.contains("1 of 2 cells within 0.5 pp."), "{md}");
    assert!(
        md.contains("![zipf: hit ratio over time](live-hit-ratio-zipf.svg)"),
        "{md}"
    );
    assert!(
        md.contains("```sh\ncargo xtask bench --quick\nferrum-bench live --requests 100000\n```"),
        "{md}"
    );
}

#[test]
fn results_round_trip_through_json_with_unknown_fields_kept() {
    let mut r = fixed();
    r.live[0]
        .live
        .rest
        .insert("evicted".into(), Value::from(123));
    let json = serde_json::to_string(&r).unwrap_or_default();
    let value: Value = serde_json::from_str(&json).unwrap_or_default();
    assert_eq!(value["live"][0]["live"]["evicted"], 123);
    assert_eq!(value["config"]["requests"], 100_000);
    assert_eq!(value["machine"]["nproc"], 2);
    let back: Option<Results> = serde_json::from_str(&json).ok();
    assert_eq!(back, Some(r));
}

#[test]
fn charts_are_one_bar_chart_and_a_line_chart_per_pattern() {
    let charts = charts(&fixed());
    let names: Vec<&str> = charts.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "hit-ratio-matrix.svg",
            "live-hit-ratio-zipf.svg",
            "live-hit-ratio-scan.svg"
        ]
    );
    assert!(charts.iter().all(|(_, svg)| svg.starts_with("<svg")));
    // LRU zipf and AHE scan have bars; the other two cells are gaps.
    assert_eq!(charts[0].1.matches("<title>").count(), 2);
}

#[test]
fn splice_keeps_the_hand_written_text() {
    let first = splice("# Analysis\n\nBy hand.\n", "| table |\n").unwrap();
    assert!(
        first.starts_with("# Analysis\n\nBy hand.\n\n<!-- cargo xtask bench: begin"),
        "{first}"
    );
    assert!(
        first.ends_with("| table |\n<!-- cargo xtask bench: end -->\n"),
        "{first}"
    );
    let second = splice(&format!("{first}\nAfter.\n"), "| new |\n").unwrap();
    assert!(second.contains("| new |"), "{second}");
    assert!(!second.contains("| table |"), "{second}");
    assert!(
        second.ends_with("<!-- cargo xtask bench: end -->\nAfter.\n"),
        "{second}"
    );
    assert_eq!(splice("", "x").unwrap(), format!("{BEGIN}\n\nx\n{END}\n"));
}

#[test]
fn splice_refuses_a_file_with_one_marker_or_both_out_of_order() {
    let whole = splice("# Analysis\n", "| table |\n").unwrap();
    let without_begin = whole.replace(BEGIN, "");
    let without_end = whole.replace(END, "");
    let reversed = format!("{END}\n{BEGIN}\n");
    for broken in [without_begin, without_end, reversed] {
        let err = splice(&broken, "| new |\n").unwrap_err();
        assert!(err.to_string().contains("markers"), "{err}");
    }
}

#[test]
fn throughput_report_has_the_table_the_aa_line_and_the_commands() {
    use crate::throughput::{Sample, ThroughputSpec};
    let mut r = fixed();
    r.throughput_spec = Some(ThroughputSpec {
        rounds: 2,
        requests: 1_000,
        pipelined_requests: 5_000,
        capped_requests: 3_000,
        clients: 50,
        capped_policies: vec![],
        tests: vec![],
    });
    r.commands
        .push("redis-benchmark -h 127.0.0.1 -p PORT -t lrange".into());
    for (round, side, rps) in [
        (0, "ferrumkv", 50e3),
        (0, "redis", 40e3),
        (0, "redis-aa", 42e3),
        (1, "redis-aa", 38e3),
        (1, "redis", 40e3),
        (1, "ferrumkv", 60e3),
    ] {
        r.throughput.push(Sample {
            round,
            scenario: "pipelined".into(),
            side: side.into(),
            policy: "-".into(),
            test: "LRANGE_100 (first 100 elements)".into(),
            rps,
            p50_ms: 1.0,
            p99_ms: 2.0,
            // `-t lrange` prints five rows: no CPU per request.
            client_busy: Some(0.95),
            server_cpu_us: None,
        });
    }
    let md = throughput_md(&r);
    assert!(
        md.starts_with("# Throughput: FerrumKV and Redis, interleaved rounds\n"),
        "{md}"
    );
    assert!(md.contains("2 rounds;"), "{md}");
    assert!(
        md.contains("(LRANGE rows and their LPUSH: `-n 200`)"),
        "{md}"
    );
    assert!(
        md.contains("| pipelined | LRANGE_100 (first 100 elements) | - | - | 55000 | 40000 | 1.38 | 1.25-1.50 | 1.00 (0.95-1.05) | 2.000 | 2.000 | 0.95 / 0.95 | – |"),
        "{md}"
    );
    assert!(md.contains("single-round ratios 0.95-1.05"), "{md}");
    assert!(
        md.contains("redis-benchmark -h 127.0.0.1 -p PORT -t lrange\n"),
        "{md}"
    );
}
