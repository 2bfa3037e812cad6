//! AHE in the simulator: the "must reach" row at full size, no
//! collapse on any pattern (v1 and adversarial) against LRU and LFU at the
//! same request count, determinism, a loop larger than the cache, and
//! stable skew after a rotating hot set.

use ferrum_bench::sim::{run_cell, simulate, SimConfig, SimReport};
use ferrum_bench::workload::{Pattern, Workload, REQUESTS, SEED};
use ferrum_evict::{Ahe, AheConfig, Lru, Millis, PolicyKind};

fn run(kind: PolicyKind, pattern: Pattern, requests: u64) -> SimReport {
    run_cell(kind, pattern, SEED, requests, &SimConfig::default()).report
}

/// The minimum hit ratios (percent) at WORKLOADS.md's full size:
/// seed 42, 1 000 000 requests, capacity 5 000.
const MUST_REACH: [(Pattern, f64); 5] = [
    (Pattern::Zipf, 71.0),
    (Pattern::Shift, 64.3),
    (Pattern::Mixed, 60.2),
    (Pattern::Scan, 0.0),
    (Pattern::Ttl, 74.8),
];

#[test]
fn ahe_reaches_the_must_row_at_full_size() {
    let mut misses = Vec::new();
    for (pattern, must) in MUST_REACH {
        let percent = 100.0 * run(PolicyKind::AllKeysAhe, pattern, REQUESTS).hit_ratio();
        // "Reaches 71.0" means it prints as at least 71.0 with one decimal.
        if percent < must - 0.05 {
            misses.push(format!("{pattern}: {percent:.2} < {must}"));
        }
    }
    assert!(misses.is_empty(), "{misses:?}");
}

#[test]
fn ahe_never_falls_far_behind_lru_or_lfu() {
    // 200 000 requests: thirteen controller periods, two shift epochs,
    // one and a half mixed blocks, two full scans. At this count AHE is
    // still warming up, so allow it 1.5 points behind the better of LRU
    // and LFU; where both collapse (scan, loop: 0 hits) AHE must not. It
    // keeps 0.93% on scan here (over 1% with ten-size periods); half a
    // percent is a thousand hits where LRU and LFU have none.
    const REDUCED: u64 = 200_000;
    for pattern in Pattern::ALL {
        let ahe = run(PolicyKind::AllKeysAhe, pattern, REDUCED).hit_ratio();
        let lru = run(PolicyKind::AllKeysLru, pattern, REDUCED).hit_ratio();
        let lfu = run(PolicyKind::AllKeysLfu, pattern, REDUCED).hit_ratio();
        let best = lru.max(lfu);
        assert!(
            ahe >= best - 0.015,
            "{pattern}: ahe {ahe:.4}, lru {lru:.4}, lfu {lfu:.4}"
        );
        if matches!(pattern, Pattern::Scan | Pattern::Loop) {
            assert_eq!(best, 0.0, "{pattern}: a single policy should collapse");
            assert!(ahe > 0.005, "{pattern}: ahe {ahe:.4} collapsed too");
        }
    }
}

#[test]
fn a_loop_larger_than_the_cache_keeps_most_of_its_hits() {
    // `loop` cycles through 10% more ids than the 5 000-entry cache, where
    // LRU and LFU keep nothing. Keys main evicted re-enter through small
    // rather than main, so main is not churned by the loop: about 71%
    // hit (the AHE before this design kept 77%, with a loop veto of its
    // own; sending main's ghost hits back to main kept about half).
    for seed in [1, 7] {
        let report = run_cell(
            PolicyKind::AllKeysAhe,
            Pattern::Loop,
            seed,
            300_000,
            &SimConfig::default(),
        )
        .report;
        let hit_ratio = report.hit_ratio();
        assert!(hit_ratio >= 0.65, "seed {seed}: hit ratio {hit_ratio:.4}");
    }
}

#[test]
fn a_seed_reproduces_an_ahe_run() {
    let first = run(PolicyKind::AllKeysAhe, Pattern::Shift, 100_000);
    assert_eq!(first, run(PolicyKind::AllKeysAhe, Pattern::Shift, 100_000));
    assert_ne!(first, run(PolicyKind::AllKeysLru, Pattern::Shift, 100_000));
    // AHE draws no random numbers: the same requests give the same run.
    let zipf = || {
        simulate(
            Some(Ahe::new(AheConfig::default())),
            SimConfig::default(),
            Workload::new(Pattern::Zipf, SEED, 100_000),
        )
    };
    assert_eq!(zipf(), zipf());
}

#[test]
fn the_small_share_is_reported_per_window() {
    let report = run(PolicyKind::AllKeysAhe, Pattern::Shift, 100_000);
    assert_eq!(report.small_shares.len(), report.windows.len());
    assert!(report.small_shares.iter().all(|w| (0.0..=1.0).contains(w)));
    let state = report.controller.expect("ahe has a controller");
    assert!(state.small_evictions + state.main_evictions > 20_000);
    assert!(state.small_ghost_hits + state.main_ghost_hits > 0);
    assert!(run(PolicyKind::AllKeysLru, Pattern::Shift, 10_000)
        .controller
        .is_none());
}

#[test]
fn the_hit_ratio_does_not_depend_on_the_request_rate() {
    // DESIGN.md §2: the same trace at 1 ms spacing, at full speed (every
    // request in the same millisecond) and at 1 s spacing gives the same
    // hits, because AHE counts events, never time. (No TTLs here: expiry
    // is time by definition.)
    for pattern in [Pattern::Shift, Pattern::Mixed] {
        let replay = |spacing: u64| {
            let policy = Ahe::new(AheConfig::default());
            let requests = Workload::new(pattern, SEED, 100_000).map(|mut r| {
                r.at = ferrum_evict::Millis(r.at.0 * spacing);
                r
            });
            let report = simulate(Some(policy), SimConfig::default(), requests);
            (report.hits, report.evictions, report.small_shares)
        };
        let paced = replay(1);
        assert_eq!(paced, replay(0), "{pattern}: full speed");
        assert_eq!(paced, replay(1_000), "{pattern}: 1 s apart");
    }
}

#[test]
fn after_a_rotating_hot_set_stable_skew_is_served_as_well_as_by_lru() {
    // A hot set that rotates (`shift`), then stable skew (`zipf` of another
    // seed, so other keys are hot): whatever the rotation taught the split,
    // the settled part must be served at least as well as LRU serves it.
    const ROTATING: u64 = 300_000;
    let config = SimConfig {
        capacity: 17_000,
        ..SimConfig::default()
    };
    for (rotating, settled) in [(SEED, 7), (1, 2), (3, 4)] {
        let requests = || {
            let settled = Workload::new(Pattern::Zipf, settled, 700_000).map(|mut r| {
                r.at = Millis(r.at.0 + ROTATING);
                r
            });
            Workload::new(Pattern::Shift, rotating, ROTATING).chain(settled)
        };
        let settled_hits = |report: &SimReport| {
            let skip = (ROTATING / report.window) as usize;
            report.windows[skip..].iter().sum::<f64>() / (report.windows.len() - skip) as f64
        };
        let ahe = simulate(
            Some(Ahe::new(AheConfig::default())),
            config.clone(),
            requests(),
        );
        let lru = simulate(Some(Lru::default()), config.clone(), requests());
        assert!(
            settled_hits(&ahe) >= settled_hits(&lru),
            "shift {rotating}, zipf {settled}: {:.4} against LRU's {:.4}",
            settled_hits(&ahe),
            settled_hits(&lru)
        );
    }
}
