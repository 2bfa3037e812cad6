//! `ferrum-bench sharded`: the hit ratio of nodes behind twemproxy or
//! reached by a cluster-aware client next to one node with all of the
//! memory, on the command line.

use std::io::{self, Write};
use std::net::SocketAddr;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use ferrum_bench::cluster::{self, ClusterRoute};
use ferrum_bench::driver::LiveConfig;
use ferrum_bench::sharded::{compare, to_markdown, Comparison, ProxyRoute, Route};
use ferrum_bench::twemproxy::{Nutcracker, PoolConfig};
use ferrum_bench::workload::{self, Pattern, Workload};
use ferrum_evict::PolicyKind;

/// How the sharded replay reaches the nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum RouteKind {
    /// Through a twemproxy (`nutcracker`) started in front of `--nodes`.
    Proxy,
    /// Straight to each key's node, by its slot: `--nodes` are fresh
    /// FerrumKV (or Redis) nodes in cluster mode, given even slot ranges
    /// and told of each other here.
    Cluster,
}

/// Arguments of `ferrum-bench sharded`.
#[derive(Debug, Args)]
pub(crate) struct ShardedArgs {
    /// The node that gets all of the memory (FerrumKV or Redis).
    #[arg(long)]
    single: SocketAddr,
    /// Comma-separated nodes that each get `1/n` of it.
    #[arg(long, value_delimiter = ',', required = true)]
    nodes: Vec<SocketAddr>,
    /// How requests reach `--nodes`.
    #[arg(long, value_enum, default_value_t = RouteKind::Proxy)]
    route: RouteKind,
    /// Comma-separated patterns to replay.
    #[arg(long, value_delimiter = ',', default_value = "zipf,shift,mixed")]
    patterns: Vec<Pattern>,
    /// Comma-separated `maxmemory-policy` names.
    #[arg(long, value_delimiter = ',', default_value = "allkeys-lru,allkeys-ahe")]
    policies: Vec<PolicyKind>,
    /// Requests per (policy, pattern) cell.
    #[arg(long, default_value_t = 150_000)]
    requests: u64,
    /// Seed of the workloads.
    #[arg(long, default_value_t = workload::SEED)]
    seed: u64,
    /// Entries the single node should hold; its `maxmemory` is calibrated
    /// to it.
    #[arg(long, default_value_t = workload::CAPACITY)]
    capacity: usize,
    /// Requests of the prefix replayed per calibration round.
    #[arg(long, default_value_t = 30_000)]
    calibration_requests: u64,
    /// Print JSON (`cells`, and the table as `markdown`) instead of
    /// markdown.
    #[arg(long)]
    json: bool,
}

/// Runs every (policy, pattern) cell, single node then sharded.
pub(crate) fn sharded(args: ShardedArgs) -> Result<()> {
    if args.capacity == 0 {
        bail!("--capacity must be at least 1");
    }
    let cells = match args.route {
        RouteKind::Proxy => {
            let proxy = Nutcracker::start(&PoolConfig::new(args.nodes.clone()))?;
            eprintln!(
                "nutcracker on {} in front of {} nodes",
                proxy.addr(),
                args.nodes.len()
            );
            run_cells(&args, || {
                ProxyRoute::connect(proxy.addr())
                    .with_context(|| format!("cannot talk to nutcracker at {}", proxy.addr()))
            })?
        }
        RouteKind::Cluster => {
            cluster::form(&args.nodes).context(
                "cannot make --nodes one cluster (they must be fresh nodes in cluster mode)",
            )?;
            eprintln!("{} nodes formed one cluster", args.nodes.len());
            let seed = args.nodes[0];
            run_cells(&args, || {
                ClusterRoute::connect(seed)
                    .with_context(|| format!("cannot read the slot map of {seed}"))
            })?
        }
    };
    let table = to_markdown(&cells);
    let mut stdout = io::stdout().lock();
    if args.json {
        let json = serde_json::json!({ "cells": cells, "markdown": table });
        writeln!(stdout, "{}", serde_json::to_string_pretty(&json)?)?;
    } else {
        write!(stdout, "{table}")?;
    }
    Ok(())
}

/// Compares every (policy, pattern) cell, each through a fresh `route()`.
fn run_cells<R: Route>(
    args: &ShardedArgs,
    mut route: impl FnMut() -> Result<R>,
) -> Result<Vec<Comparison>> {
    let config = LiveConfig {
        capacity: args.capacity,
        calibration_requests: args.calibration_requests,
        ..LiveConfig::default()
    };
    let mut cells = Vec::new();
    for &policy in &args.policies {
        for &pattern in &args.patterns {
            let cell = compare(
                args.single,
                route()?,
                &args.nodes,
                policy,
                &pattern.to_string(),
                || Workload::new(pattern, args.seed, args.requests),
                &config,
            )
            .with_context(|| format!("{policy} on {pattern}"))?;
            eprintln!(
                "{policy:>16} {pattern}: 1 node {:.2}% ({} keys), {} nodes by {} {:.2}% ({} keys)",
                100.0 * cell.single.hit_ratio,
                cell.single.keys,
                cell.sharded.nodes.len(),
                cell.sharded.route,
                100.0 * cell.sharded.hit_ratio,
                cell.sharded.keys,
            );
            cells.push(cell);
        }
    }
    Ok(cells)
}
