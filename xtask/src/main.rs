//! FerrumKV's repository tasks, run as `cargo xtask <task>` (the alias is
//! in `.cargo/config.toml`), in the manner of rust-analyzer's xtask.
//!
//! - `cargo xtask bench`: build release binaries, start servers on
//!   127.0.0.1, run the redis-benchmark scenarios and the hit-ratio matrix
//!   (simulator and live), and write `benches/*.md`, the charts and
//!   `target/bench/<run>/results.json`. See `cargo xtask bench --help`.
//!
//! - `cargo xtask ci`: the whole test suite, as CI runs it: installs what
//!   the tests need (apt-get, where it can), then fmt, clippy, the
//!   workspace's tests, redis-py, and Redis's own test suite with its bar.
//!
//! - `cargo xtask suite`: Redis's own test suite against FerrumKV and
//!   Redis in one run, external and native mode, written to
//!   `benches/redis-suite.md`.
//!
//! xtask holds no server code: it drives the release binaries through
//! `std::process` and reads their JSON.

mod bench;
mod bgsave;
mod ci;
mod equal_memory;
mod keys;
mod machine;
mod native_suite;
mod procs;
mod redis_benchmark;
mod report;
mod restart;
mod sharded;
mod suite;
mod throughput;
mod traces;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
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
    Bench(Box<bench::Bench>),
    /// The whole test suite as CI runs it: installs missing tools (apt-get),
    /// then fmt, clippy, `cargo test --workspace`, redis-py and Redis's own
    /// test suite, failing below its bar.
    Ci(ci::Ci),
    /// Redis's own test suite against FerrumKV and Redis in one run,
    /// external and native mode, written to `benches/redis-suite.md`.
    Suite(suite::Suite),
}

/// The workspace's root directory (xtask's parent).
pub(crate) fn workspace_root() -> Result<PathBuf> {
    Ok(Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("xtask is not inside the workspace")?
        .to_path_buf())
}

/// Cargo's target directory: `CARGO_TARGET_DIR`, else `target` under the
/// workspace root.
pub(crate) fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or(root.join("target"), PathBuf::from)
}

fn main() -> Result<()> {
    match Cli::parse().task {
        Task::Bench(flags) => flags.run(),
        Task::Ci(flags) => flags.run(),
        Task::Suite(flags) => flags.run(),
    }
}
