//! The exposition checked as data: every name rendered, valid per
//! `promtool`, and the shipped dashboard asking only for what is exported.

use std::collections::BTreeSet;

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
                rejected: 0,
                failed: 0,
            },
            CommandStat {
                name: "set",
                calls: 10,
                usec: 25,
                rejected: 1,
                failed: 0,
            },
        ],
        net_input_bytes: 1000,
        net_output_bytes: 2000,
        uptime_secs: 42,
        tcp_port: 6379,
        ahe: Some(ControllerState {
            small_entries: 30,
            main_entries: 70,
            small_target_share: 0.25,
            small_ghost_hits: 6,
            main_ghost_hits: 4,
            promotions: 9,
            small_evictions: 12,
            main_evictions: 11,
        }),
    }
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

// Shared with the integration tests, which cannot reach this crate's
// private test modules.
#[path = "../../tests/support/promtool.rs"]
mod promtool;
pub(super) use promtool::{promtool_check, samples, Sample};

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
    assert_eq!(v(names::FERRUM_AHE_SMALL_TARGET_SHARE, &[]), 0.25);
    let queue = |q| [("queue", q)];
    assert_eq!(v(names::FERRUM_AHE_ENTRIES, &queue("small")), 30.0);
    assert_eq!(v(names::FERRUM_AHE_ENTRIES, &queue("main")), 70.0);
    assert_eq!(v(names::FERRUM_AHE_GHOST_HITS_TOTAL, &queue("small")), 6.0);
    assert_eq!(v(names::FERRUM_AHE_GHOST_HITS_TOTAL, &queue("main")), 4.0);
    assert_eq!(v(names::FERRUM_AHE_PROMOTIONS_TOTAL, &[]), 9.0);
    assert_eq!(v(names::FERRUM_AHE_EVICTIONS_TOTAL, &queue("small")), 12.0);
    assert_eq!(v(names::FERRUM_AHE_EVICTIONS_TOTAL, &queue("main")), 11.0);
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

/// PromQL (and Grafana's `label_values`) functions and keywords the
/// dashboard may use; anything else in function position is a mistake.
const PROMQL_FUNCTIONS: &[&str] = &[
    "sum",
    "avg",
    "min",
    "max",
    "count",
    "rate",
    "irate",
    "increase",
    "clamp_min",
    "clamp_max",
    "topk",
    "label_values",
];
/// Keywords that take a parenthesised list of label names.
const LABEL_LIST_KEYWORDS: &[&str] = &["by", "without", "on", "ignoring"];
/// Operator and modifier keywords.
const OPERATOR_KEYWORDS: &[&str] = &["and", "or", "unless", "bool", "offset"];

#[derive(Debug, PartialEq)]
enum Token {
    Ident(String),
    Open,
    Close,
    Comma,
}

/// PromQL's tokens that matter for naming metrics. Label matchers (`{...}`),
/// ranges (`[...]`), strings, numbers, durations and Grafana variables are
/// skipped: none of them names a metric.
fn tokens(expr: &str) -> Vec<Token> {
    let chars: Vec<char> = expr.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let skip_to = |i: &mut usize, close: char| {
        let mut quote = false;
        while *i < chars.len() {
            let c = chars[*i];
            *i += 1;
            match c {
                '\\' if quote => *i += 1,
                '"' => quote = !quote,
                c if c == close && !quote => return,
                _ => {}
            }
        }
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '{' => {
                i += 1;
                skip_to(&mut i, '}');
            }
            '[' => {
                i += 1;
                skip_to(&mut i, ']');
            }
            '"' => {
                i += 1;
                skip_to(&mut i, '"');
            }
            '$' => {
                i += 1;
                if chars.get(i) == Some(&'{') {
                    skip_to(&mut i, '}');
                }
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
            '(' => {
                out.push(Token::Open);
                i += 1;
            }
            ')' => {
                out.push(Token::Close);
                i += 1;
            }
            ',' => {
                out.push(Token::Comma);
                i += 1;
            }
            c if c.is_ascii_digit() || c == '.' => {
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                    i += 1;
                }
            }
            c if c.is_ascii_alphabetic() || c == '_' || c == ':' => {
                let start = i;
                while i < chars.len()
                    && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == ':')
                {
                    i += 1;
                }
                out.push(Token::Ident(chars[start..i].iter().collect()));
            }
            _ => i += 1,
        }
    }
    out
}

/// What an expression refers to: metric names and label names.
#[derive(Debug, Default, PartialEq)]
struct Refs {
    metrics: Vec<String>,
    labels: Vec<String>,
}

/// Splits an expression's identifiers into metric names and label names.
///
/// # Errors
///
/// An identifier in function position that is not in [`PROMQL_FUNCTIONS`].
fn promql_refs(expr: &str) -> Result<Refs, String> {
    // Each open parenthesis: whether it holds label names, and for
    // `label_values` how many commas were seen (its second argument is a
    // label).
    enum Ctx {
        Labels,
        LabelValues(usize),
        Expr,
    }
    let toks = tokens(expr);
    let mut stack: Vec<Ctx> = Vec::new();
    let mut refs = Refs::default();
    for (i, t) in toks.iter().enumerate() {
        let next_open = toks.get(i + 1) == Some(&Token::Open);
        match t {
            Token::Ident(id) if next_open => {
                if LABEL_LIST_KEYWORDS.contains(&id.as_str()) {
                    stack.push(Ctx::Labels);
                } else if id == "label_values" {
                    stack.push(Ctx::LabelValues(0));
                } else if PROMQL_FUNCTIONS.contains(&id.as_str()) {
                    stack.push(Ctx::Expr);
                } else {
                    return Err(format!("unknown function {id} in {expr}"));
                }
            }
            Token::Ident(id) if OPERATOR_KEYWORDS.contains(&id.as_str()) => {}
            // An aggregation written `sum by (l) (expr)`: its own parenthesis
            // comes after the label list.
            Token::Ident(id)
                if PROMQL_FUNCTIONS.contains(&id.as_str())
                    && matches!(toks.get(i + 1), Some(Token::Ident(k)) if LABEL_LIST_KEYWORDS.contains(&k.as_str())) =>
                {}
            Token::Ident(id) => match stack.last() {
                Some(Ctx::Labels) | Some(Ctx::LabelValues(1..)) => refs.labels.push(id.clone()),
                _ => refs.metrics.push(id.clone()),
            },
            Token::Open => {
                let after_ident = i > 0 && matches!(toks[i - 1], Token::Ident(_));
                if !after_ident {
                    stack.push(Ctx::Expr);
                }
            }
            Token::Close => {
                stack.pop();
            }
            Token::Comma => {
                if let Some(Ctx::LabelValues(n)) = stack.last_mut() {
                    *n += 1;
                }
            }
        }
    }
    Ok(refs)
}

#[test]
fn promql_refs_tell_metrics_from_labels() {
    let refs = promql_refs(
        r#"sum by (cmd) (rate(redis_commands_total{instance=~"$instance",x="a}b"}[$__rate_interval])) / 1e-9 > bool 0"#,
    )
    .expect("valid");
    assert_eq!(refs.metrics, ["redis_commands_total"]);
    assert_eq!(refs.labels, ["cmd"]);
    let refs = promql_refs("label_values(redis_up, instance)").expect("valid");
    assert_eq!(
        (refs.metrics, refs.labels),
        (vec!["redis_up".to_owned()], vec!["instance".to_owned()])
    );
    assert!(promql_refs("histogram_quantile(0.9, x)").is_err());
    let refs = promql_refs("1 - ferrum_ahe_small_target_share{a=\"b\"} offset 5m").expect("valid");
    assert_eq!(refs.metrics, ["ferrum_ahe_small_target_share"]);
}

/// Every panel, rows' nested panels included.
fn all_panels(panels: &[serde_json::Value], out: &mut Vec<serde_json::Value>) {
    for p in panels {
        out.push(p.clone());
        if let Some(inner) = p.get("panels").and_then(|v| v.as_array()) {
            all_panels(inner, out);
        }
    }
}

#[test]
fn dashboard_queries_only_exported_metrics() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../dashboards/ferrumkv.json");
    let text = std::fs::read_to_string(path).expect("dashboards/ferrumkv.json");
    let dash: serde_json::Value = serde_json::from_str(&text).expect("dashboard is JSON");
    assert!(
        dash["schemaVersion"].as_u64().unwrap_or(0) >= 36,
        "current schema"
    );
    let vars = dash["templating"]["list"].as_array().expect("templating");
    assert!(
        vars.iter().any(|v| v["type"] == "datasource"
            && v["name"] == "datasource"
            && v["query"] == "prometheus"),
        "the data source is a variable"
    );

    // What the server exports, with AHE on: metric families and labels.
    let rendered = samples(&full_snapshot().render());
    let exported: BTreeSet<String> = rendered.iter().map(|s| s.0.clone()).collect();
    let mut labels: BTreeSet<String> = rendered.iter().flat_map(|s| s.1.keys().cloned()).collect();
    // Prometheus adds these to every scraped series.
    labels.extend(["instance".to_owned(), "job".to_owned()]);

    let mut exprs: Vec<String> = vars
        .iter()
        .filter_map(|v| v["definition"].as_str().map(str::to_owned))
        .collect();
    let mut panels = Vec::new();
    all_panels(dash["panels"].as_array().expect("panels"), &mut panels);
    let mut used = BTreeSet::new();
    for p in panels.iter().filter(|p| p["type"] != "row") {
        let title = p["title"].as_str().unwrap_or("?");
        assert_eq!(p["datasource"]["uid"], "${datasource}", "panel {title}");
        let targets = p["targets"].as_array().expect("targets");
        assert!(!targets.is_empty(), "panel {title} has no query");
        for t in targets {
            assert_eq!(t["datasource"]["uid"], "${datasource}", "panel {title}");
            exprs.push(t["expr"].as_str().expect("expr").to_owned());
        }
    }
    for expr in &exprs {
        let refs = promql_refs(expr).unwrap_or_else(|e| panic!("{e}"));
        assert!(!refs.metrics.is_empty(), "{expr} names no metric");
        for m in refs.metrics {
            assert!(exported.contains(&m), "{m} (in {expr}) is not exported");
            used.insert(m);
        }
        for l in refs.labels {
            assert!(labels.contains(&l), "label {l} (in {expr}) is not exported");
        }
    }
    // The panels the dashboard exists for.
    for m in [
        names::FERRUM_KEYSPACE_HIT_RATIO,
        names::REDIS_KEYSPACE_HITS_TOTAL,
        names::REDIS_KEYSPACE_MISSES_TOTAL,
        names::REDIS_EVICTED_KEYS_TOTAL,
        names::REDIS_MEMORY_USED_BYTES,
        names::REDIS_MEMORY_MAX_BYTES,
        names::FERRUM_AHE_SMALL_TARGET_SHARE,
        names::FERRUM_AHE_ENTRIES,
        names::FERRUM_AHE_GHOST_HITS_TOTAL,
        names::FERRUM_AHE_PROMOTIONS_TOTAL,
        names::FERRUM_AHE_EVICTIONS_TOTAL,
        names::REDIS_COMMANDS_TOTAL,
        names::REDIS_COMMANDS_DURATION_SECONDS_TOTAL,
        names::REDIS_CONNECTED_CLIENTS,
    ] {
        assert!(used.contains(m), "no panel shows {m}");
    }
}
