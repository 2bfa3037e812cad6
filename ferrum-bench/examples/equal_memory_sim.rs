//! Hit ratios at equal memory, in process, through the store engine: for
//! each pattern, the `maxmemory` at which FerrumKV's allkeys-lru holds the
//! spec's 5,000 entries (`calibrate_maxmemory`), then every policy replays
//! the pattern under that one fixed limit. A policy whose state costs more
//! holds fewer keys there, and its hit ratio shows whether its choices pay
//! for it. Prints hit ratio and keys held (`DBSIZE` at the end) per cell.
//!
//! With `--redis-ratio R`, two more rows estimate Redis at the same memory:
//! the policy engine's exact allkeys-lru and allkeys-lfu at `5,000 / R`
//! entries, `R` being how many times Redis's keys FerrumKV's allkeys-lru
//! holds at one `maxmemory` (`scripts/keys-at-maxmemory.sh` prints it).
//!
//! ```text
//! cargo run --release -p ferrum-bench --example equal_memory_sim -- \
//!     --seed 42 --policies allkeys-lru,allkeys-lfu,allkeys-ahe --redis-ratio 1.5
//! ```

use anyhow::{bail, Context, Result};
use ferrum_bench::sim::{run_cell, SimConfig};
use ferrum_bench::store_sim::{calibrate_maxmemory, StoreSimConfig, StoreSimulator};
use ferrum_bench::workload::{self, Pattern, Workload};
use ferrum_evict::PolicyKind;

fn list<T: std::str::FromStr>(value: &str) -> Result<Vec<T>>
where
    T::Err: std::fmt::Display,
{
    value
        .split(',')
        .map(|v| v.parse().map_err(|e| anyhow::anyhow!("{v}: {e}")))
        .collect()
}

fn main() -> Result<()> {
    let mut seed = workload::SEED;
    let mut requests = workload::requests(1);
    let mut policies = list::<PolicyKind>("allkeys-lru,allkeys-lfu,allkeys-ahe")?;
    let mut patterns = list::<Pattern>("zipf,shift,mixed,scan,ttl,loop,zipf06,onehit,phase")?;
    let mut redis_ratio: Option<f64> = None;
    let mut config = StoreSimConfig::default();
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--seed" => seed = value.parse()?,
            "--requests" => requests = value.parse()?,
            "--policies" => policies = list(&value)?,
            "--patterns" => patterns = list(&value)?,
            "--redis-ratio" => redis_ratio = Some(value.parse()?),
            "--capacity" => config.capacity = value.parse()?,
            _ => bail!(
                "unknown flag {flag} (--seed, --requests, --policies, --patterns, --redis-ratio, --capacity)"
            ),
        }
    }
    println!(
        "seed {seed}, {requests} requests per cell, maxmemory: allkeys-lru at {} entries",
        config.capacity
    );
    print!("| policy |");
    for p in &patterns {
        print!(" {p} |");
    }
    println!("\n| --- |{}", " ---: |".repeat(patterns.len()));
    let limits: Vec<u64> = patterns
        .iter()
        .map(|&p| calibrate_maxmemory(PolicyKind::AllKeysLru, p, seed, &config))
        .collect();
    for &kind in &policies {
        print!("| {kind} |");
        for (&pattern, &maxmemory) in patterns.iter().zip(&limits) {
            let mut sim = StoreSimulator::with_maxmemory(kind, seed, config.clone(), maxmemory);
            for req in Workload::scaled(pattern, seed, requests, 1) {
                sim.request(&req);
            }
            let keys = sim.dbsize();
            let ratio = sim.finish().hit_ratio();
            print!(" {:.2} ({keys}) |", 100.0 * ratio);
        }
        println!();
    }
    if let Some(r) = redis_ratio {
        let capacity = (config.capacity as f64 / r).round() as usize;
        for kind in [PolicyKind::AllKeysLru, PolicyKind::AllKeysLfu] {
            print!("| Redis {kind} (est., {capacity} entries) |");
            for &pattern in &patterns {
                let sim = SimConfig {
                    capacity,
                    ..SimConfig::default()
                };
                let run = run_cell(kind, pattern, seed, requests, &sim);
                print!(" {:.2} |", 100.0 * run.report.hit_ratio());
            }
            println!();
        }
    }
    Ok(())
}
