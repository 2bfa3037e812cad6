//! The live driver as a library: replay one pattern against a running
//! server under each policy and print the server's hit ratio next to the
//! store-engine simulator's.
//!
//! ```sh
//! cargo run --release -p ferrum-server -- --port 6390 --enable-debug-command yes &
//! cargo run --release -p ferrum-bench --example hit_ratio_bench -- 127.0.0.1:6390 zipf 200000
//! ```

use anyhow::{Context, Result};
use ferrum_bench::driver::{LiveConfig, LiveDriver};
use ferrum_bench::live::{to_markdown, LiveCell};
use ferrum_bench::workload::{Pattern, Workload, SEED};
use ferrum_evict::PolicyKind;

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:6379".to_owned());
    let pattern: Pattern = args
        .next()
        .unwrap_or_else(|| "zipf".to_owned())
        .parse()
        .map_err(anyhow::Error::msg)?;
    let requests: u64 = args.next().map_or(Ok(200_000), |n| n.parse())?;
    let mut driver =
        LiveDriver::connect(&addr).with_context(|| format!("cannot reach a server at {addr}"))?;
    let config = LiveConfig::default();
    let mut cells = Vec::new();
    for policy in [
        PolicyKind::AllKeysLru,
        PolicyKind::AllKeysLfu,
        PolicyKind::AllKeysRandom,
        PolicyKind::AllKeysAhe,
    ] {
        let workload = || Workload::new(pattern, SEED, requests);
        let report = match driver.run(policy, pattern.as_str(), workload, &config, &mut |_| {}) {
            Ok(report) => report,
            Err(e) => {
                // Redis has no allkeys-ahe: say so and go on.
                eprintln!("{policy}: {e}");
                continue;
            }
        };
        let compare = (driver.server().name == "ferrumkv").then(workload);
        cells.push(LiveCell::new(report, compare));
    }
    print!("{}", to_markdown(&cells));
    Ok(())
}
