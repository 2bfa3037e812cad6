//! FerrumKV's repository tasks, run as `cargo xtask <task>` (the alias is
//! in `.cargo/config.toml`), in the manner of rust-analyzer's xtask.
//!
//! - `cargo xtask bench`: build release binaries, start servers on
//!   127.0.0.1, run the redis-benchmark scenarios and the hit-ratio matrix
//!   (simulator and live), and write `benches/*.md`, the charts and
//!   `target/bench/<run>/results.json`. See `cargo xtask bench --help`.
//!
//! xtask holds no server code: it drives the release binaries through
//! `std::process` and reads their JSON.

mod bench;
mod equal_memory;
mod keys;
mod machine;
mod procs;
mod redis_benchmark;
mod report;
mod throughput;

use anyhow::Result;
use clap::{Parser, Subcommand};

/// FerrumKV repository tasks.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", about)]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Debug, Subcommand)]
enum Task {
    /// Benchmark FerrumKV (and Redis, when installed): throughput with
    /// redis-benchmark, hit ratios with the simulator and the live driver.
    Bench(bench::Bench),
}

fn main() -> Result<()> {
    match Cli::parse().task {
        Task::Bench(flags) => flags.run(),
    }
}
