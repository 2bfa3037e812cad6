//! The keys-at-maxmemory scenario (issue 11): how many keys each server and
//! policy holds at one fixed `maxmemory`, the same as
//! `scripts/keys-at-maxmemory.sh`.
//!
//! For each value size, each server/policy in turn (one server at a time,
//! so they do not compete for memory): start it with the `maxmemory` and
//! the policy, write `overflow × maxmemory / (value + 100)` distinct 16-byte
//! keys (`key:%012d`; 3,050,402 for 32-byte values at 128 MiB), pipelined
//! 1,000 at a time, then read `DBSIZE`, `used_memory` and, [`SETTLE`]
//! later, the process's RSS from /proc. The RSS of the fresh server, read
//! before the fill, is the startup baseline of issue 11's bound (RSS within
//! `maxmemory` × 1.10 plus that baseline).

use std::path::Path;
use std::thread;
use std::time::Duration;

use anyhow::{Context, Result};
use ferrum_bench::client::Client;
use serde::{Deserialize, Serialize};

use crate::procs::{ServerKind, ServerProcess};

/// How long after the fill RSS is read: twice jemalloc's `dirty_decay_ms`
/// in FerrumKV (1 s), so the number is what stays resident rather than a
/// moment in the middle of a purge.
const SETTLE: Duration = Duration::from_secs(2);

/// One (server, policy, value size) result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct KeysRow {
    /// `ferrumkv` or `redis`.
    pub(crate) server: String,
    /// `maxmemory-policy`.
    pub(crate) policy: String,
    /// Value size in bytes.
    pub(crate) value_bytes: u64,
    /// Distinct keys written.
    pub(crate) sets: u64,
    /// `maxmemory` in bytes.
    pub(crate) maxmemory: u64,
    /// `DBSIZE` at the end.
    pub(crate) keys: u64,
    /// The server process's RSS at the end, [`SETTLE`] after the fill.
    pub(crate) rss_bytes: u64,
    /// The server process's RSS before the fill: its startup baseline.
    #[serde(default)]
    pub(crate) baseline_rss_bytes: u64,
    /// What `maxmemory` bounds at the end: `used_memory` for Redis,
    /// `used_memory_dataset` for FerrumKV.
    pub(crate) used_memory: u64,
}

/// What to run.
#[derive(Clone, Debug)]
pub(crate) struct KeysSpec {
    /// `maxmemory` in bytes.
    pub(crate) maxmemory: u64,
    /// Value sizes in bytes.
    pub(crate) value_sizes: Vec<u64>,
    /// How many times `maxmemory` the written data overflows it (about).
    pub(crate) overflow: u64,
    /// `(server, policy)` pairs, in report order.
    pub(crate) servers: Vec<(ServerKind, String)>,
}

/// Distinct keys written for `value` bytes per value: `overflow ×
/// maxmemory / (value + 100)`, about 100 bytes being a Redis entry's
/// overhead with a 16-byte key.
pub(crate) fn sets_for(maxmemory: u64, value: u64, overflow: u64) -> u64 {
    overflow * maxmemory / (value + 100)
}

/// Runs every (value size, server/policy) cell; see the module docs.
pub(crate) fn run(spec: &KeysSpec, target: &Path, run_dir: &Path) -> Result<Vec<KeysRow>> {
    let mut rows = Vec::new();
    for &value in &spec.value_sizes {
        let sets = sets_for(spec.maxmemory, value, spec.overflow);
        for (kind, policy) in &spec.servers {
            let log = run_dir.join(format!("keys-{}-{policy}-{value}.log", kind.name()));
            let maxmemory = spec.maxmemory.to_string();
            let server = ServerProcess::start(
                *kind,
                target,
                &["--maxmemory", &maxmemory, "--maxmemory-policy", policy],
                &log,
            )?;
            let baseline = server.rss_bytes();
            let mut row = fill(&server, kind.name(), policy, value, sets, spec.maxmemory)
                .with_context(|| format!("{} {policy}, {value}-byte values", kind.name()))?;
            row.baseline_rss_bytes = baseline;
            eprintln!(
                "  {} {policy} {value} B: {} keys held of {sets}, RSS {:.1} MiB, used_memory {}",
                kind.name(),
                row.keys,
                row.rss_bytes as f64 / 1048576.0,
                row.used_memory
            );
            rows.push(row);
        }
    }
    Ok(rows)
}

fn fill(
    server: &ServerProcess,
    name: &str,
    policy: &str,
    value_bytes: u64,
    sets: u64,
    maxmemory: u64,
) -> Result<KeysRow> {
    let mut client = Client::connect(("127.0.0.1", server.port))?;
    let value = vec![b'v'; value_bytes as usize];
    const BATCH: u64 = 1_000;
    let mut i = 0;
    while i < sets {
        let n = BATCH.min(sets - i);
        for id in i..i + n {
            let key = format!("key:{id:012}");
            client.queue(&[b"SET".as_slice(), key.as_bytes(), &value]);
        }
        client.flush()?;
        for _ in 0..n {
            // An -OOM refusal is an answer too: count what is held at the end.
            client.read()?;
        }
        i += n;
    }
    let keys = client.call_int(&["DBSIZE"])?.max(0) as u64;
    let info = client.info("memory")?;
    let used_memory = info
        .get(ferrum_bench::driver::bounded_memory_field(name))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    thread::sleep(SETTLE);
    Ok(KeysRow {
        server: name.to_owned(),
        policy: policy.to_owned(),
        value_bytes,
        sets,
        maxmemory,
        keys,
        rss_bytes: server.rss_bytes(),
        baseline_rss_bytes: 0,
        used_memory,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_table_writes_about_three_million_keys_at_32_bytes() {
        assert_eq!(sets_for(128 << 20, 32, 3), 3_050_402);
        assert_eq!(sets_for(128 << 20, 1000, 3), 366_048);
    }
}
