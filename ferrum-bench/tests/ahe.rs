//! AHE in the simulator: the "must reach" row at full size, no
//! collapse on any pattern (v1 and adversarial) against LRU and LFU at the
//! same request count, determinism for a seed, and the way back from a
//! rotating hot set to stable skew.

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
fn a_loop_larger_than_the_cache_keeps_the_window_small() {
    // `loop` cycles through 10% more ids than the 5 000-entry cache: every
    // key comes back, whichever side evicted it, so no window helps; it
    // only takes room from the entries main keeps resident. Steered by
    // the regret balance (a coin toss where both sides' rates are near 1)
    // and by a hit ratio that swings by up to ten points a period, the
    // window wandered up to a third (seed 1: 0.13 on average, 72.2%).
    for seed in [1, 7] {
        let report = run_cell(
            PolicyKind::AllKeysAhe,
            Pattern::Loop,
            seed,
            300_000,
            &SimConfig::default(),
        )
        .report;
        // The first period (15 000 requests) steps up blindly. A period
        // without an admission has no recency regrets to rate, so it is
        // not taken for a loop's, and the window may rise for a period or
        // two before the next one takes it down.
        let shares = &report.recency_weights[2..];
        let mean = shares.iter().sum::<f64>() / shares.len() as f64;
        let hit_ratio = report.hit_ratio();
        assert!(
            mean <= 0.05 && hit_ratio >= 0.77,
            "seed {seed}: window {mean:.3} on average, hit ratio {hit_ratio:.4}"
        );
    }
}

#[test]
fn a_seed_reproduces_an_ahe_run() {
    let first = run(PolicyKind::AllKeysAhe, Pattern::Shift, 100_000);
    assert_eq!(first, run(PolicyKind::AllKeysAhe, Pattern::Shift, 100_000));
    assert_ne!(first, run(PolicyKind::AllKeysLru, Pattern::Shift, 100_000));
    // The policy's own seed (the store gives each shard its own) feeds only
    // the admission jitter, which fires only when a hot newcomer loses a
    // duel; a run is reproducible for any one seed.
    let with_seed = |seed| {
        let policy = Ahe::new(AheConfig {
            seed,
            ..AheConfig::default()
        });
        simulate(
            Some(policy),
            SimConfig::default(),
            Workload::new(Pattern::Zipf, SEED, 100_000),
        )
    };
    assert_eq!(with_seed(1), with_seed(1));
    assert_eq!(with_seed(7), with_seed(7));
}

#[test]
fn the_recency_weight_is_reported_per_window() {
    let report = run(PolicyKind::AllKeysAhe, Pattern::Shift, 100_000);
    assert_eq!(report.recency_weights.len(), report.windows.len());
    assert!(report
        .recency_weights
        .iter()
        .all(|w| (0.0..=1.0).contains(w)));
    let state = report.controller.expect("ahe has a controller");
    assert!(state.decisions_frequency + state.decisions_recency > 20_000);
    assert!(state.ghost_hits_frequency + state.ghost_hits_recency > 0);
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
            (report.hits, report.evictions, report.recency_weights)
        };
        let paced = replay(1);
        assert_eq!(paced, replay(0), "{pattern}: full speed");
        assert_eq!(paced, replay(1_000), "{pattern}: 1 s apart");
    }
}

#[test]
fn after_a_rotating_hot_set_the_window_comes_back_down_for_stable_skew() {
    // A hot set that rotates (`shift`) sends the window to its maximum;
    // when the workload then settles into stable skew (`zipf` of another
    // seed, so other keys are hot), the window must shrink again and the
    // frequency filter win back its lead over LRU. Whatever makes a large
    // window cheaper (a smaller sketch, a sparser ghost history) must not
    // cost this way back. Six seed pairs: where the climber settles on
    // one is a random walk (the hit ratio keeps rising while the sketch
    // learns the new skew, whichever way the share steps), so a bound on
    // one pair says little.
    const ROTATING: u64 = 300_000;
    const PAIRS: [(u64, u64); 6] = [(SEED, 7), (7, SEED), (1, 2), (3, 4), (5, 6), (11, 12)];
    // The equal-memory size of WORKLOADS.md scale 1: large enough for the
    // controller's checks to see a rotation.
    let config = SimConfig {
        capacity: 17_000,
        ..SimConfig::default()
    };
    let largest = |weights: &[f64]| weights.iter().fold(0.0_f64, |a, &w| a.max(w));
    let mut settled_sum = 0.0;
    for (rotating, settled) in PAIRS {
        let requests = || {
            let settled = Workload::new(Pattern::Zipf, settled, 700_000).map(|mut r| {
                r.at = Millis(r.at.0 + ROTATING);
                r
            });
            Workload::new(Pattern::Shift, rotating, ROTATING).chain(settled)
        };
        let ahe = simulate(
            Some(Ahe::new(AheConfig::default())),
            config.clone(),
            requests(),
        );
        let lru = simulate(Some(Lru::default()), config.clone(), requests());
        let pair = format!("shift {rotating}, zipf {settled}");
        let windows = ahe.recency_weights.len();
        let rotating_top = largest(&ahe.recency_weights[..30]);
        assert!(
            rotating_top >= 0.85,
            "{pair}: the window never grew: {rotating_top}"
        );
        // Fourteen periods of skew: at the top the regrets cannot tell the
        // sides apart for a while (the tiny main turns lukewarm keys away,
        // and its victims are hot), but once the surge down starts it
        // halves the share each period. One initial step a period would
        // still be near 0.5 here.
        let settled = largest(&ahe.recency_weights[windows - 10..]);
        assert!(settled <= 0.4, "{pair}: the window stayed large: {settled}");
        settled_sum += settled;
        // The last 200,000 requests: AHE ahead of LRU, as on `zipf` alone.
        let tail = |r: &SimReport| r.windows[windows - 20..].iter().sum::<f64>() / 20.0;
        assert!(
            tail(&ahe) > tail(&lru) + 0.01,
            "{pair}: ahe {:.4}, lru {:.4}",
            tail(&ahe),
            tail(&lru)
        );
    }
    let mean = settled_sum / PAIRS.len() as f64;
    assert!(mean <= 0.3, "the window stayed large: {mean} on average");
}
