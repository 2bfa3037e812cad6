//! The AHE policy through the server: selecting it with CONFIG SET and at
//! start-up, and its controller state in `INFO ahe`.

use std::collections::HashMap;

use crate::common::{run, TestServer};

fn info(con: &mut redis::Connection, section: &[&str]) -> String {
    let mut args = vec!["INFO"];
    args.extend_from_slice(section);
    run(con, &args).unwrap()
}

fn fields(info: &str) -> HashMap<String, String> {
    info.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.trim().to_string()))
        .collect()
}

#[test]
fn info_ahe_reports_what_the_controller_decided() {
    let s = TestServer::start_with(&["--maxmemory", "1mb", "--maxmemory-policy", "allkeys-ahe"]);
    let mut c = s.client();
    let value = "x".repeat(1000);
    for i in 0..3_000 {
        let _: () = run(&mut c, &["SET", &format!("k{i}"), &value]).unwrap();
        // Re-read a few keys often (hits) and one older key (often a miss
        // on an evicted key: a ghost hit).
        let _: Option<String> = run(&mut c, &["GET", &format!("k{}", i % 7)]).unwrap();
        let _: Option<String> = run(&mut c, &["GET", &format!("k{}", i / 3)]).unwrap();
    }
    let text = info(&mut c, &["ahe"]);
    assert!(text.starts_with("# Ahe\r\n"), "{text}");
    assert!(!text.contains("# Memory"), "{text}");
    let f = fields(&text);
    assert_eq!(f["ahe_enabled"], "1");
    assert_eq!(f["ahe_policy"], "allkeys-ahe");
    let weight: f64 = f["ahe_recency_weight"].parse().unwrap();
    let frequency: f64 = f["ahe_frequency_weight"].parse().unwrap();
    assert!((0.0..=1.0).contains(&weight), "{weight}");
    assert!((weight + frequency - 1.0).abs() < 1e-3);
    assert!(f["ahe_learning_rate"].parse::<f64>().unwrap() > 0.0);
    let ratio: f64 = f["ahe_window_hit_ratio"].parse().unwrap();
    assert!((0.0..=1.0).contains(&ratio), "{ratio}");
    let count = |name: &str| f[name].parse::<u64>().unwrap();
    // No key has a TTL, so every eviction was one side's decision.
    let stats = fields(&info(&mut c, &["stats"]));
    let evicted: u64 = stats["evicted_keys"].parse().unwrap();
    assert!(evicted > 1_000, "{evicted} evictions");
    assert_eq!(
        count("ahe_decisions_recency") + count("ahe_decisions_frequency"),
        evicted
    );
    assert!(count("ahe_ghost_hits_recency") + count("ahe_ghost_hits_frequency") > 0);
    // Part of the default INFO while AHE is the policy, and of everything.
    assert!(info(&mut c, &[]).contains("# Ahe\r\n"));
    assert!(info(&mut c, &["everything"]).contains("ahe_recency_weight:"));
    assert!(info(&mut c, &["all"]).contains("ahe_recency_weight:"));
    // The hot keys survived.
    assert_eq!(
        run::<i64>(&mut c, &["EXISTS", "k0", "k1", "k2"]).unwrap(),
        3
    );
}

#[test]
fn config_set_maxmemory_policy_switches_to_ahe_and_back() {
    let s = TestServer::start();
    let mut c = s.client();
    assert!(!info(&mut c, &[]).contains("# Ahe"));
    let f = fields(&info(&mut c, &["ahe"]));
    assert_eq!(f["ahe_enabled"], "0");
    assert_eq!(f["ahe_policy"], "noeviction");
    assert!(!f.contains_key("ahe_recency_weight"));

    for policy in ["allkeys-ahe", "VOLATILE-AHE"] {
        let _: () = run(&mut c, &["CONFIG", "SET", "maxmemory-policy", policy]).unwrap();
        let got: Vec<String> = run(&mut c, &["CONFIG", "GET", "maxmemory-policy"]).unwrap();
        assert_eq!(got, ["maxmemory-policy", &policy.to_lowercase()]);
        let f = fields(&info(&mut c, &[]));
        assert_eq!(f["ahe_enabled"], "1");
        assert_eq!(f["maxmemory_policy"], policy.to_lowercase());
        assert_eq!(f["ahe_recency_weight"], "0.1000");
    }
    let _: () = run(&mut c, &["SET", "k", "v"]).unwrap();
    let _: () = run(
        &mut c,
        &["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"],
    )
    .unwrap();
    assert!(!info(&mut c, &[]).contains("# Ahe"));
    assert_eq!(fields(&info(&mut c, &["ahe"]))["ahe_enabled"], "0");
    assert_eq!(run::<String>(&mut c, &["GET", "k"]).unwrap(), "v");
}
