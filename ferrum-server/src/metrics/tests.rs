//! The exposition checked as data: every name rendered, valid per
//! `promtool`, and the shipped dashboard asking only for what is exported.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::process::{Command, Stdio};

use ferrum_store::{ControllerState, KeyspaceStats};

use super::exposition::Snapshot;
use super::names;
use crate::shared::CommandStat;

/// A snapshot with every kind of series, AHE included.
fn full_snapshot() -> Snapshot {
    Snapshot {
        keyspace: KeyspaceStats {
            keyspace_hits: 30,
            keyspace_misses: 10,
            expired_keys: 2,
            evicted_keys: 5,
        },
        dbs: vec![(7, 2), (0, 0), (1, 1)],
        used_memory_bytes: 1 << 20,
        maxmemory_bytes: 2 << 20,
        config_maxmemory_bytes: 2 << 20,
        maxmemory_policy: "allkeys-lru",
        maxclients: 100,
        connected_clients: 3,
        blocked_clients: 0,
        connections_received: 9,
        rejected_connections: 1,
        commands_processed: 40,
        commands: vec![
            CommandStat {
                name: "get",
                calls: 30,
                usec: 1_500_000,
            },
            CommandStat {
                name: "set",
                calls: 10,
                usec: 25,
            },
        ],
        net_input_bytes: 1000,
        net_output_bytes: 2000,
        uptime_secs: 42,
        tcp_port: 6379,
        ahe: Some(ControllerState {
            recency_weight: 0.25,
            learning_rate: 0.01,
            ghost_hits_recency: 4,
            ghost_hits_frequency: 6,
            decisions_recency: 11,
            decisions_frequency: 12,
            window_hit_ratio: 0.75,
        }),
    }
}

/// A sample: name, labels, value.
type Sample = (String, BTreeMap<String, String>, f64);

/// Parses the samples of a text exposition (no escapes in our label values).
fn samples(text: &str) -> Vec<Sample> {
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (series, value) = l.rsplit_once(' ').expect("value");
            let (name, labels) = match series.split_once('{') {
                Some((n, rest)) => (n, rest.trim_end_matches('}')),
                None => (series, ""),
            };
            let labels = labels
                .split(',')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once('=').expect("label");
                    (k.to_owned(), v.trim_matches('"').to_owned())
                })
                .collect();
            (name.to_owned(), labels, value.parse().expect("number"))
        })
        .collect()
}

fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    samples
        .iter()
        .find(|(n, l, _)| {
            n == name
                && labels
                    .iter()
                    .all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|s| s.2)
}

/// Runs `promtool check metrics` on `text`, failing the test when promtool
/// is missing: CI installs it (.ci/run), so absence is a broken setup.
pub(super) fn promtool_check(text: &str) -> String {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "promtool not found ({e}): install Debian's `prometheus` package \
                 (apt-get install prometheus), as .ci/run does"
            )
        });
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("feed promtool");
    let out = child.wait_with_output().expect("promtool ran");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "promtool check metrics failed ({}):\n{report}\n--- exposition ---\n{text}",
        out.status
    );
    report
}

#[test]
fn every_name_is_rendered_with_help_and_type() {
    let text = full_snapshot().render();
    for name in names::ALL {
        assert!(
            text.contains(&format!("# TYPE {name} ")),
            "{name} missing from:\n{text}"
        );
        assert!(
            text.contains(&format!("# HELP {name} ")),
            "{name} has no HELP"
        );
    }
    let families: BTreeSet<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split(' ').next())
        .collect();
    let all: BTreeSet<&str> = names::ALL.iter().copied().collect();
    assert_eq!(
        families, all,
        "nothing rendered that names.rs does not list"
    );
}

#[test]
fn values_come_from_the_snapshot() {
    let s = samples(&full_snapshot().render());
    let v = |name, labels: &[(&str, &str)]| value(&s, name, labels).expect(name);
    assert_eq!(v(names::REDIS_KEYSPACE_HITS_TOTAL, &[]), 30.0);
    assert_eq!(v(names::REDIS_KEYSPACE_MISSES_TOTAL, &[]), 10.0);
    assert_eq!(v(names::FERRUM_KEYSPACE_HIT_RATIO, &[]), 0.75);
    assert_eq!(v(names::REDIS_DB_KEYS, &[("db", "db0")]), 7.0);
    assert_eq!(v(names::REDIS_DB_KEYS, &[("db", "db1")]), 0.0);
    assert_eq!(v(names::REDIS_DB_KEYS_EXPIRING, &[("db", "db2")]), 1.0);
    assert_eq!(v(names::REDIS_MEMORY_MAX_BYTES, &[]), f64::from(2 << 20));
    assert_eq!(
        v(
            names::REDIS_INSTANCE_INFO,
            &[("maxmemory_policy", "allkeys-lru")]
        ),
        1.0
    );
    assert_eq!(v(names::REDIS_COMMANDS_TOTAL, &[("cmd", "get")]), 30.0);
    assert_eq!(
        v(
            names::REDIS_COMMANDS_DURATION_SECONDS_TOTAL,
            &[("cmd", "get")]
        ),
        1.5
    );
    assert_eq!(
        v(
            names::REDIS_COMMANDS_DURATION_SECONDS_TOTAL,
            &[("cmd", "set")]
        ),
        0.000025
    );
    assert_eq!(v(names::FERRUM_AHE_RECENCY_WEIGHT, &[]), 0.25);
    assert_eq!(v(names::FERRUM_AHE_LEARNING_RATE, &[]), 0.01);
    assert_eq!(v(names::FERRUM_AHE_WINDOW_HIT_RATIO, &[]), 0.75);
    assert_eq!(
        v(names::FERRUM_AHE_GHOST_HITS_TOTAL, &[("side", "recency")]),
        4.0
    );
    assert_eq!(
        v(names::FERRUM_AHE_GHOST_HITS_TOTAL, &[("side", "frequency")]),
        6.0
    );
    assert_eq!(
        v(names::FERRUM_AHE_DECISIONS_TOTAL, &[("side", "recency")]),
        11.0
    );
    assert_eq!(
        v(names::FERRUM_AHE_DECISIONS_TOTAL, &[("side", "frequency")]),
        12.0
    );
}

#[test]
fn ahe_series_are_absent_without_an_adaptive_policy() {
    let snapshot = Snapshot {
        ahe: None,
        commands: Vec::new(),
        keyspace: KeyspaceStats::default(),
        ..full_snapshot()
    };
    let text = snapshot.render();
    assert!(!text.contains("ferrum_ahe_"), "{text}");
    assert!(
        !text.contains(names::REDIS_COMMANDS_DURATION_SECONDS_TOTAL),
        "no empty family"
    );
    let s = samples(&text);
    assert_eq!(
        value(&s, names::FERRUM_KEYSPACE_HIT_RATIO, &[]),
        Some(0.0),
        "0 before any lookup, never NaN"
    );
    promtool_check(&text);
}

#[test]
fn exposition_passes_promtool() {
    let report = promtool_check(&full_snapshot().render());
    assert_eq!(report.trim(), "", "promtool printed lint findings");
}

#[test]
fn renders_in_parallel_do_not_see_each_other() {
    // Each render has its own local recorder: concurrent scrapes of
    // different servers (as in the test suite) must not mix their values.
    let handles: Vec<_> = (0..8u64)
        .map(|i| {
            std::thread::spawn(move || {
                let snap = Snapshot {
                    connections_received: i,
                    ..full_snapshot()
                };
                (0..20).all(|_| {
                    let s = samples(&snap.render());
                    value(&s, names::REDIS_CONNECTIONS_RECEIVED_TOTAL, &[]) == Some(i as f64)
                })
            })
        })
        .collect();
    for h in handles {
        assert!(h.join().expect("thread"));
    }
}
