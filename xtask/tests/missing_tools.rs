//! `cargo xtask bench` on a machine without Redis's tools: the scenarios
//! that need them are skipped with a message naming the package, and the
//! run still succeeds.

use std::fs;
use std::path::PathBuf;
use std::process::Command;

/// A fresh, empty directory under the system's temporary directory.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("xtask-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

#[test]
fn missing_redis_tools_skip_their_scenarios_with_a_message() {
    let dir = scratch("missing-tools");
    let empty_path = dir.join("bin");
    fs::create_dir_all(&empty_path).expect("create empty PATH dir");
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args([
            "bench",
            "--scenarios",
            "throughput,baseline,pipelined,capped,equal-memory",
            "--skip-build",
        ])
        .arg("--out")
        .arg(dir.join("benches"))
        .env("PATH", &empty_path)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .output()
        .expect("run xtask");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "xtask failed:\n{stderr}");
    for note in [
        "throughput needs redis-benchmark (apt-get install redis-tools): skipped",
        "redis-benchmark is not installed (apt-get install redis-tools): throughput scenarios skipped",
        "redis-server is not installed (apt-get install redis-server): Redis rows skipped",
        "equal memory needs redis-server for M_ref (apt-get install redis-server): skipped",
        "no report (every scenario was skipped)",
    ] {
        assert!(stderr.contains(note), "missing {note:?} in:\n{stderr}");
    }
    assert!(!dir.join("benches/redis-benchmark.md").exists());
    // results.json records what was skipped.
    let runs: Vec<_> = fs::read_dir(dir.join("target/bench"))
        .expect("run directory")
        .flatten()
        .collect();
    assert_eq!(runs.len(), 1);
    let json = fs::read_to_string(runs[0].path().join("results.json")).expect("results.json");
    assert!(json.contains("redis-tools"), "{json}");
    let _ = fs::remove_dir_all(&dir);
}
