//! What a benchmark ran on: the machine, the tool versions and the commit,
//! recorded next to every result.

use std::fs;
use std::process::Command;

use serde::{Deserialize, Serialize};

/// The machine and software a run used.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Machine {
    /// Logical CPUs (`nproc`).
    pub(crate) nproc: usize,
    /// `model name` from `/proc/cpuinfo`.
    pub(crate) cpu_model: String,
    /// `MemTotal` from `/proc/meminfo`, in MiB.
    pub(crate) memory_mib: u64,
    /// `rustc --version`.
    pub(crate) rustc: String,
    /// `redis-server --version`, if installed.
    pub(crate) redis_server: Option<String>,
    /// `redis-benchmark --version`, if installed.
    pub(crate) redis_benchmark: Option<String>,
    /// `git rev-parse --short HEAD`, with `-dirty` for uncommitted changes.
    pub(crate) commit: String,
}

impl Machine {
    /// Reads everything; what cannot be read is left empty.
    pub(crate) fn detect() -> Machine {
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let memory_kib: u64 = meminfo
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0);
        let dirty = output("git", &["status", "--porcelain"]).is_some_and(|s| !s.is_empty());
        let commit = output("git", &["rev-parse", "--short", "HEAD"]).unwrap_or_default();
        Machine {
            nproc: std::thread::available_parallelism().map_or(0, usize::from),
            cpu_model: cpuinfo
                .lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
                .unwrap_or_default(),
            memory_mib: memory_kib / 1024,
            rustc: output("rustc", &["--version"]).unwrap_or_default(),
            redis_server: output("redis-server", &["--version"]),
            redis_benchmark: output("redis-benchmark", &["--version"]),
            commit: if dirty {
                format!("{commit}-dirty")
            } else {
                commit
            },
        }
    }
}

/// A command's trimmed standard output, or `None` if it cannot run or
/// fails.
pub(crate) fn output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}
