//! The live driver against a real FerrumKV running in this process: the
//! server's hit ratio agrees with the store-engine simulator given the same
//! requests and `maxmemory`, and the calibration holds the capacity.
//! Shapes only, no timing: small request counts keep the test light.

mod support;

use ferrum_bench::driver::{server_shaped_sim, ClockMode, LiveConfig, LiveDriver};
use ferrum_bench::live::{to_markdown, LiveCell};
use ferrum_bench::trace::{read_trace, write_trace};
use ferrum_bench::workload::{Pattern, Workload};
use ferrum_evict::PolicyKind;
use support::TestServer;

const REQUESTS: u64 = 20_000;

#[test]
fn zipf_live_agrees_with_the_simulator_and_holds_the_capacity() {
    let server = TestServer::start();
    let mut driver = LiveDriver::connect(server.addr).expect("connect");
    assert_eq!(driver.server().name, "ferrumkv");
    assert!(driver.server().virtual_clock);
    let config = LiveConfig {
        calibration_requests: REQUESTS,
        ..LiveConfig::default()
    };
    let requests = || Workload::new(Pattern::Zipf, 42, REQUESTS);
    let report = driver
        .run(
            PolicyKind::AllKeysLru,
            "zipf",
            requests,
            &config,
            &mut |_| {},
        )
        .expect("live run");
    assert_eq!(report.clock, ClockMode::Virtual);
    assert_eq!(report.requests, REQUESTS);
    assert_eq!(report.hits + report.misses, REQUESTS, "{report:?}");
    assert_eq!(report.hits, report.driver_hits, "{report:?}");
    assert_eq!(report.windows.len(), 2);
    assert!(
        (4_950..=5_050).contains(&report.dbsize),
        "dbsize {} with maxmemory {}",
        report.dbsize,
        report.final_maxmemory_bytes
    );
    let (sim, _) = server_shaped_sim(
        PolicyKind::AllKeysLru,
        requests(),
        report.calibration.maxmemory_bytes,
        &report.maxmemory_adjustments,
        report.window,
    );
    let (live, simulated) = (report.hit_ratio, sim.hit_ratio());
    assert!(
        (live - simulated).abs() < 0.005,
        "live {live:.4} vs sim {simulated:.4}"
    );
    let cell = LiveCell::new(report, Some(requests()));
    let table = to_markdown(&[cell]);
    assert_eq!(table.lines().count(), 3, "{table}");
    assert!(
        table
            .lines()
            .nth(2)
            .is_some_and(|l| l.starts_with("| ferrumkv ")),
        "{table}"
    );
}

#[test]
fn a_pipelined_replay_serves_every_request_and_keeps_the_hit_ratio() {
    let server = TestServer::start();
    let mut driver = LiveDriver::connect(server.addr).expect("connect");
    let requests = || Workload::new(Pattern::Ttl, 42, REQUESTS);
    let mut run = |pipeline: usize| {
        let config = LiveConfig {
            maxmemory_bytes: Some(400_000),
            hold_capacity: false,
            split_at: Some(REQUESTS / 2),
            pipeline,
            ..LiveConfig::default()
        };
        let report = driver
            .run(
                PolicyKind::AllKeysLru,
                "ttl",
                requests,
                &config,
                &mut |_| {},
            )
            .expect("live run");
        assert_eq!(report.requests, REQUESTS);
        assert_eq!(report.hits + report.misses, REQUESTS, "{report:?}");
        assert_eq!(report.hits, report.driver_hits, "{report:?}");
        assert_eq!(report.windows.len(), 2, "{report:?}");
        report
    };
    let (exact, batched) = (run(1), run(16));
    // 16 requests of a cache of thousands: a key missed twice within a
    // batch, or its TTL starting at the batch's clock, moves little.
    assert!(
        (exact.hit_ratio - batched.hit_ratio).abs() < 0.005,
        "exact {:.4} vs batched {:.4}",
        exact.hit_ratio,
        batched.hit_ratio
    );
    let after = |r: &ferrum_bench::driver::LiveReport| r.after_split_hit_ratio.expect("split");
    assert!((after(&exact) - after(&batched)).abs() < 0.01);
}

#[test]
fn a_trace_replays_with_its_ttls_on_virtual_time() {
    let server = TestServer::start();
    let mut driver = LiveDriver::connect(server.addr).expect("connect");
    let mut csv = Vec::new();
    write_trace(&mut csv, Workload::new(Pattern::Ttl, 7, 3_000)).expect("write trace");
    let requests: Vec<_> = read_trace(&csv[..])
        .collect::<Result<_, _>>()
        .expect("read trace");
    let config = LiveConfig {
        // No limit: only expiry removes keys, and the 3 s of virtual time
        // are too short for the 10 s TTLs.
        maxmemory_bytes: Some(0),
        ..LiveConfig::default()
    };
    let report = driver
        .run(
            PolicyKind::AllKeysLru,
            "trace",
            || requests.iter().copied(),
            &config,
            &mut |_| {},
        )
        .expect("live run");
    assert_eq!(report.hits + report.misses, 3_000);
    assert_eq!(report.evicted, 0);
    assert_eq!(report.expired, 0);
    assert_eq!(report.misses, report.dbsize, "every miss stored its key");
    // Eleven seconds later on the server's clock, every ephemeral key is gone.
    let mut client = ferrum_bench::client::Client::connect(server.addr).expect("connect");
    client
        .call(&["DEBUG", "ADVANCE-CLOCK", "11000"])
        .expect("advance");
    client.call(&["DEBUG", "EXPIRE-CYCLE"]).expect("expire");
    let left = client.call_int(&["DBSIZE"]).expect("dbsize") as u64;
    let durable = requests
        .iter()
        .filter(|r| r.ttl.is_none())
        .map(|r| r.key_id)
        .collect::<std::collections::HashSet<_>>()
        .len() as u64;
    assert_eq!(left, durable);
}

/// Under `noeviction` every miss past the limit gets `-OOM`: the driver
/// reads each `SET`'s reply late (after the next `GET` went out) and must
/// still count every refusal, and no other reply, as rejected. With no
/// expiry and no eviction, a miss's key is never resident, so every `SET`
/// either stored a new key or was refused: `DBSIZE` is the misses minus
/// the refusals, exactly.
#[test]
fn refused_sets_are_counted_whatever_reply_comes_next() {
    let server = TestServer::start();
    let mut driver = LiveDriver::connect(server.addr).expect("connect");
    let config = LiveConfig {
        maxmemory_bytes: Some(256 * 1024),
        hold_capacity: false,
        ..LiveConfig::default()
    };
    let report = driver
        .run(
            PolicyKind::NoEviction,
            "zipf",
            || Workload::new(Pattern::Zipf, 42, REQUESTS),
            &config,
            &mut |_| {},
        )
        .expect("live run");
    assert!(report.rejected > 0, "{report:?}");
    assert_eq!(report.evicted, 0, "{report:?}");
    assert_eq!(report.dbsize + report.rejected, report.misses, "{report:?}");
    assert_eq!(report.hits, report.driver_hits, "{report:?}");
}

/// A restart from a snapshot (`DEBUG RELOAD` at the split) keeps the
/// second half's hit ratio within 0.5 points of an uninterrupted run, for
/// Redis's LRU and LFU and for AHE (issue 38's bound).
#[test]
fn a_restart_from_a_snapshot_keeps_the_hit_ratio() {
    for policy in [
        PolicyKind::AllKeysLru,
        PolicyKind::AllKeysLfu,
        PolicyKind::AllKeysAhe,
    ] {
        // Both runs at the `maxmemory` the first calibrated, so the restart
        // is the only difference between them.
        let second_half = |reload_at_split: bool, maxmemory_bytes: Option<u64>| {
            let server = TestServer::start();
            let mut driver = LiveDriver::connect(server.addr).expect("connect");
            let config = LiveConfig {
                capacity: 1_000,
                calibration_requests: 10_000,
                maxmemory_bytes,
                hold_capacity: false,
                split_at: Some(10_000),
                reload_at_split,
                ..LiveConfig::default()
            };
            let requests = || Workload::new(Pattern::Zipf, 7, 20_000);
            let report = driver
                .run(policy, "zipf", requests, &config, &mut |_| {})
                .expect("live run");
            let ratio = report.after_split_hit_ratio.expect("a split");
            (ratio, report.calibration.maxmemory_bytes)
        };
        let (uninterrupted, maxmemory) = second_half(false, None);
        let (restarted, _) = second_half(true, Some(maxmemory));
        assert!(
            (uninterrupted - restarted).abs() <= 0.005,
            "{policy}: {uninterrupted:.4} uninterrupted, {restarted:.4} restarted, maxmemory {maxmemory}"
        );
    }
}
