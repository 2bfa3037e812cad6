//! `ferrum-bench sharded`: the hit ratio of nodes behind twemproxy next to
//! one node with all of the memory, on the command line.

use std::io::{self, Write};
use std::net::SocketAddr;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use ferrum_bench::driver::LiveConfig;
use ferrum_bench::sharded::{compare, to_markdown, ProxyRoute};
use ferrum_bench::twemproxy::{Nutcracker, PoolConfig};
use ferrum_bench::workload::{self, Pattern, Workload};
use ferrum_evict::PolicyKind;

/// How the sharded replay reaches the nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum RouteKind {
    /// Through a twemproxy (`nutcracker`) started in front of `--nodes`.
    Proxy,
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
    let proxy = match args.route {
        RouteKind::Proxy => Nutcracker::start(&PoolConfig::new(args.nodes.clone()))?,
    };
    eprintln!(
        "nutcracker on {} in front of {} nodes",
        proxy.addr(),
        args.nodes.len()
    );
    let config = LiveConfig {
        capacity: args.capacity,
        calibration_requests: args.calibration_requests,
        ..LiveConfig::default()
    };
    let mut cells = Vec::new();
    for &policy in &args.policies {
        for &pattern in &args.patterns {
            let route = ProxyRoute::connect(proxy.addr())
                .with_context(|| format!("cannot talk to nutcracker at {}", proxy.addr()))?;
            let cell = compare(
                args.single,
                route,
                &args.nodes,
                policy,
                &pattern.to_string(),
                || Workload::new(pattern, args.seed, args.requests),
                &config,
            )
            .with_context(|| format!("{policy} on {pattern}"))?;
            eprintln!(
                "{policy:>16} {pattern}: 1 node {:.2}% ({} keys), {} nodes {:.2}% ({} keys)",
                100.0 * cell.single.hit_ratio,
                cell.single.keys,
                cell.sharded.nodes.len(),
                100.0 * cell.sharded.hit_ratio,
                cell.sharded.keys,
            );
            cells.push(cell);
        }
    }
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
