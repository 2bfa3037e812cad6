//! The `sharded` part of `cargo xtask bench`: three FerrumKV nodes behind
//! twemproxy, each with a third of one node's `maxmemory`, against that
//! one node, per policy and pattern (`ferrum-bench sharded`, which starts
//! the proxy itself).

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::Value;

use crate::bench::run_json;
use crate::procs::{ServerKind, ServerProcess};

/// Nodes behind the proxy.
const NODES: usize = 3;

/// What the part replays.
#[derive(Clone, Debug)]
pub(crate) struct ShardedSpec {
    /// `maxmemory-policy` names.
    pub(crate) policies: Vec<String>,
    /// Pattern names.
    pub(crate) patterns: Vec<String>,
    /// Requests per cell.
    pub(crate) requests: u64,
    /// Requests per calibration round of the single node's `maxmemory`.
    pub(crate) calibration_requests: u64,
    /// Seed of every workload.
    pub(crate) seed: u64,
}

impl ShardedSpec {
    /// `ferrum-bench sharded`'s arguments, less the addresses.
    fn args(&self) -> Vec<String> {
        vec![
            "--policies".into(),
            self.policies.join(","),
            "--patterns".into(),
            self.patterns.join(","),
            "--requests".into(),
            self.requests.to_string(),
            "--calibration-requests".into(),
            self.calibration_requests.to_string(),
            "--seed".into(),
            self.seed.to_string(),
            "--json".into(),
        ]
    }

    /// The command line the part runs, for the report.
    pub(crate) fn command_line(&self) -> String {
        format!(
            "ferrum-bench sharded --single <node> --nodes <{NODES} nodes> {}  # FerrumKV release nodes",
            self.args().join(" ")
        )
    }
}

/// Starts one FerrumKV with all of the memory and [`NODES`] to share it,
/// runs `ferrum-bench sharded` on them and returns its JSON (`cells` and
/// the table as `markdown`).
pub(crate) fn run(
    spec: &ShardedSpec,
    bench: &Path,
    target: &Path,
    run_dir: &Path,
) -> Result<Value> {
    let start = |name: String| {
        ServerProcess::start(
            ServerKind::Ferrum,
            target,
            &[],
            &run_dir.join(format!("sharded-{name}.log")),
        )
        .with_context(|| format!("cannot start the {name} node"))
    };
    let single = start("single".into())?;
    let nodes = (1..=NODES)
        .map(|i| start(format!("node-{i}")))
        .collect::<Result<Vec<_>>>()?;
    let addrs: Vec<String> = nodes
        .iter()
        .map(|n| format!("127.0.0.1:{}", n.port))
        .collect();
    let mut args = vec![
        "sharded".to_owned(),
        "--single".into(),
        format!("127.0.0.1:{}", single.port),
        "--nodes".into(),
        addrs.join(","),
    ];
    args.extend(spec.args());
    run_json(bench, &args, None)
}
