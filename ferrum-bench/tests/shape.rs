//! Shape tests of the simulator on reduced runs: who beats whom, where
//! policies collapse, and that a seed reproduces its run. Exact numbers go
//! to the JSON report, not into asserts.

use ferrum_bench::sim::{run_cell, SimConfig, SimReport};
use ferrum_bench::workload::Pattern;
use ferrum_evict::PolicyKind;

/// Enough requests for the cache (5 000 entries) to warm up and for the
/// shift pattern to cross one epoch.
const REQUESTS: u64 = 200_000;

fn run(kind: PolicyKind, pattern: Pattern, seed: u64) -> SimReport {
    run_cell(kind, pattern, seed, REQUESTS, &SimConfig::default()).report
}

fn ratio(kind: PolicyKind, pattern: Pattern) -> f64 {
    run(kind, pattern, 42).hit_ratio()
}

#[test]
fn lru_and_lfu_score_zero_on_a_cyclic_scan() {
    // Every key is evicted before the cycle returns to it. (Random too, in
    // practice: a key survives 95 000 evictions with probability e^-19.)
    for kind in [PolicyKind::AllKeysLru, PolicyKind::AllKeysLfu] {
        let report = run(kind, Pattern::Scan, 42);
        assert_eq!(report.hits, 0, "{kind}");
        assert_eq!(report.misses, REQUESTS, "{kind}");
    }
}

#[test]
fn a_seed_reproduces_its_run() {
    for kind in [
        PolicyKind::AllKeysLru,
        PolicyKind::AllKeysLfu,
        PolicyKind::AllKeysRandom,
    ] {
        let first = run(kind, Pattern::Ttl, 9);
        assert_eq!(first, run(kind, Pattern::Ttl, 9), "{kind}");
        assert_ne!(first, run(kind, Pattern::Ttl, 10), "{kind}");
    }
}

#[test]
fn lfu_beats_lru_where_frequency_matters() {
    for pattern in [Pattern::Zipf, Pattern::Mixed, Pattern::Ttl] {
        let lfu = ratio(PolicyKind::AllKeysLfu, pattern);
        let lru = ratio(PolicyKind::AllKeysLru, pattern);
        assert!(lfu > lru, "{pattern}: lfu {lfu} vs lru {lru}");
    }
}

#[test]
fn lfu_does_not_collapse_when_popularity_shifts() {
    // An exact LFU on the bare counter falls far below LRU here; aging
    // must keep Lfu at least level with it.
    let lfu = ratio(PolicyKind::AllKeysLfu, Pattern::Shift);
    let lru = ratio(PolicyKind::AllKeysLru, Pattern::Shift);
    assert!(lfu >= lru - 0.005, "shift: lfu {lfu} vs lru {lru}");
}

#[test]
fn random_trails_lru_on_skewed_patterns() {
    for pattern in [Pattern::Zipf, Pattern::Shift, Pattern::Ttl] {
        let random = ratio(PolicyKind::AllKeysRandom, pattern);
        let lru = ratio(PolicyKind::AllKeysLru, pattern);
        assert!(random < lru, "{pattern}: random {random} vs lru {lru}");
    }
}

#[test]
fn shift_dips_right_after_each_epoch() {
    let report = run(PolicyKind::AllKeysLru, Pattern::Shift, 42);
    // Windows of 10 000 requests: window 10 starts epoch 1.
    assert_eq!(report.windows.len(), 20);
    let (before, after) = (report.windows[9], report.windows[10]);
    assert!(after < before - 0.03, "before {before}, after {after}");
}
