//! Simulator throughput: requests per second per policy on the zipf pattern,
//! with and without workload generation. A plain timed run (no criterion):
//! the target is at least 1M requests/s per policy, and the numbers are
//! printed, never asserted. Run with `cargo bench -p ferrum-bench`.

use std::time::Instant;

use ferrum_bench::sim::{simulate, SimConfig};
use ferrum_bench::workload::{Pattern, Request, Workload};
use ferrum_evict::{PolicyConfig, PolicyKind};

const REQUESTS: u64 = 1_000_000;

fn main() {
    let start = Instant::now();
    let requests: Vec<Request> = Workload::new(Pattern::Zipf, 42, REQUESTS).collect();
    let generate = start.elapsed().as_secs_f64();
    println!(
        "workload generation (zipf): {:.2} M requests/s",
        REQUESTS as f64 / generate / 1e6
    );
    for kind in [
        PolicyKind::AllKeysLru,
        PolicyKind::AllKeysLfu,
        PolicyKind::AllKeysRandom,
    ] {
        let policy = kind.build(&PolicyConfig::default());
        let start = Instant::now();
        let report = simulate(policy, SimConfig::default(), requests.iter().copied());
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{kind:>16}: {:.2} M requests/s replaying, {:.2} M requests/s with generation ({:.1}% hits)",
            REQUESTS as f64 / secs / 1e6,
            REQUESTS as f64 / (secs + generate) / 1e6,
            100.0 * report.hit_ratio()
        );
    }
}
