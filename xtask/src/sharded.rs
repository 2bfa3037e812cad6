//! The `sharded` part of `cargo xtask bench`: three FerrumKV nodes, each
//! with a third of one node's `maxmemory`, against that one node, per
//! policy and pattern, once per route: behind twemproxy (`ferrum-bench
//! sharded --route proxy`, which starts the proxy itself) and as a
//! cluster reached by a cluster-aware client (`--route cluster`, on nodes
//! started in cluster mode, which `ferrum-bench` gives their slots).

use std::path::Path;

use anyhow::{Context, Result};
use ferrum_bench::sharded::{to_markdown, Comparison};
use serde_json::Value;

use crate::bench::run_json;
use crate::procs::{ServerKind, ServerProcess};

/// Nodes that share the memory.
const NODES: usize = 3;

/// How the sharded nodes are reached: `ferrum-bench sharded --route`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    /// Behind twemproxy.
    Proxy,
    /// A cluster-aware client straight to the nodes, in cluster mode.
    Cluster,
}

impl Route {
    /// The `--route` value, and the route's name in reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Route::Proxy => "proxy",
            Route::Cluster => "cluster",
        }
    }
}

/// What the part replays.
#[derive(Clone, Debug)]
pub(crate) struct ShardedSpec {
    /// The routes, in order.
    pub(crate) routes: Vec<Route>,
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
    /// `ferrum-bench sharded`'s arguments for `route`, less the addresses.
    fn args(&self, route: Route) -> Vec<String> {
        vec![
            "--route".into(),
            route.name().into(),
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

    /// The command lines the part runs, one per route, for the report.
    pub(crate) fn command_lines(&self) -> Vec<String> {
        self.routes
            .iter()
            .map(|&route| {
                let mode = match route {
                    Route::Proxy => "",
                    Route::Cluster => ", --cluster-enabled yes",
                };
                format!(
                    "ferrum-bench sharded --single <node> --nodes <{NODES} nodes> {}  # FerrumKV release nodes{mode}",
                    self.args(route).join(" ")
                )
            })
            .collect()
    }
}

/// Starts one FerrumKV with all of the memory and, per route, [`NODES`]
/// fresh ones to share it, runs `ferrum-bench sharded` on them and returns
/// every route's cells and their table as `markdown`.
pub(crate) fn run(
    spec: &ShardedSpec,
    bench: &Path,
    target: &Path,
    run_dir: &Path,
) -> Result<Value> {
    let start = |name: &str, extra: &[&str]| {
        ServerProcess::start(
            ServerKind::Ferrum,
            target,
            extra,
            &run_dir.join(format!("sharded-{name}.log")),
        )
        .with_context(|| format!("cannot start the {name} node"))
    };
    let single = start("single", &[])?;
    let mut cells = Vec::new();
    for &route in &spec.routes {
        // The nodes of one route stop (on drop) before the next route's
        // start, so the routes do not share the machine's memory.
        let nodes = (1..=NODES)
            .map(|i| {
                let name = format!("{}-node-{i}", route.name());
                let conf = run_dir.join(format!("sharded-{name}.conf"));
                // A map left by an earlier run would hold the slots.
                let _ = std::fs::remove_file(&conf);
                let conf = conf.to_str().context("non-UTF-8 run directory")?.to_owned();
                match route {
                    Route::Proxy => start(&name, &[]),
                    Route::Cluster => start(
                        &name,
                        &["--cluster-enabled", "yes", "--cluster-config-file", &conf],
                    ),
                }
            })
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
        args.extend(spec.args(route));
        let json = run_json(bench, &args, None)?;
        match json["cells"].as_array() {
            Some(route_cells) => cells.extend(route_cells.iter().cloned()),
            None => anyhow::bail!(
                "ferrum-bench sharded --route {} printed no cells",
                route.name()
            ),
        }
    }
    let parsed: Vec<Comparison> =
        serde_json::from_value(Value::Array(cells.clone())).context("sharded cells")?;
    Ok(serde_json::json!({ "cells": cells, "markdown": to_markdown(&parsed) }))
}
