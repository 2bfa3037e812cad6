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
fn info_ahe_reports_its_queues_ghosts_and_target() {
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
    let share = |name: &str| f[name].parse::<f64>().unwrap();
    let count = |name: &str| f[name].parse::<u64>().unwrap();
    for name in ["ahe_small_target_share", "ahe_small_share"] {
        assert!((0.0..=1.0).contains(&share(name)), "{name}: {text}");
    }
    // The queues hold every key, and the actual share is theirs.
    let dbsize: u64 = run(&mut c, &["DBSIZE"]).unwrap();
    let (small, main) = (count("ahe_small_entries"), count("ahe_main_entries"));
    assert_eq!(small + main, dbsize, "{text}");
    assert!((share("ahe_small_share") - small as f64 / dbsize as f64).abs() < 1e-3);
    // No key has a TTL, so every eviction came from one of the queues.
    let stats = fields(&info(&mut c, &["stats"]));
    let evicted: u64 = stats["evicted_keys"].parse().unwrap();
    assert!(evicted > 1_000, "{evicted} evictions");
    assert_eq!(
        count("ahe_small_evictions") + count("ahe_main_evictions"),
        evicted
    );
    // The hot keys were read twice in small: promoted.
    assert!(count("ahe_promotions") > 0, "{text}");
    assert!(count("ahe_small_ghost_hits") + count("ahe_main_ghost_hits") > 0);
    // Part of the default INFO while AHE is the policy, and of everything.
    assert!(info(&mut c, &[]).contains("# Ahe\r\n"));
    assert!(info(&mut c, &["everything"]).contains("ahe_small_target_share:"));
    assert!(info(&mut c, &["all"]).contains("ahe_small_target_share:"));
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
    assert!(!f.contains_key("ahe_small_target_share"));

    for policy in ["allkeys-ahe", "VOLATILE-AHE"] {
        let _: () = run(&mut c, &["CONFIG", "SET", "maxmemory-policy", policy]).unwrap();
        let got: Vec<String> = run(&mut c, &["CONFIG", "GET", "maxmemory-policy"]).unwrap();
        assert_eq!(got, ["maxmemory-policy", &policy.to_lowercase()]);
        let f = fields(&info(&mut c, &[]));
        assert_eq!(f["ahe_enabled"], "1");
        assert_eq!(f["maxmemory_policy"], policy.to_lowercase());
        assert_eq!(f["ahe_small_target_share"], "0.1000");
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
