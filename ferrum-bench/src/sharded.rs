//! The hit ratio of a sharded cache: the read-through replay of the live
//! driver sent through a [`Route`] to several nodes that each hold a share
//! of the memory, counted on every node, next to one node with all of it.
//!
//! # Routing
//!
//! A [`Route`] sends a command about one key to the node that serves it.
//! [`ProxyRoute`] sends everything to one address: twemproxy, which hashes
//! the key to a node itself, or a single node.
//! [`ClusterRoute`](crate::cluster::ClusterRoute) is a cluster-aware
//! client: it maps the key's CRC16 slot to a node from `CLUSTER SLOTS`,
//! keeps one [`Client`] per node, and follows `-MOVED` and `-ASK`. The
//! driver, its resets and its node counters are the same for both.
//!
//! # What is compared
//!
//! The node counters are read over direct connections to the nodes (a
//! proxy forwards neither `INFO` nor `CONFIG`), so the hit ratio is the
//! servers' own `keyspace_hits / (hits + misses)` summed over the nodes.
//! [`compare`] calibrates `maxmemory` on the single node so it holds the
//! WORKLOADS.md capacity (as the live driver does), then replays under that
//! fixed limit on the single node and under a third of it (one n-th, for n
//! nodes) on each node behind the route. No limit is corrected during the
//! runs: the question is what the same bytes do split, so `keys` shows how
//! many entries each layout holds.
//!
//! The servers keep their own clocks, and `PX` is sent unchanged: the
//! patterns without TTLs (`zipf`, `shift`, `mixed`, `scan`) are the ones
//! this comparison is meant for.

use std::fmt::Write as _;
use std::net::SocketAddr;

use ferrum_evict::PolicyKind;
use ferrum_proto::Frame;
use serde::{Deserialize, Serialize};

use crate::client::{Client, ClientError};
use crate::driver::{field, reset_server, ClockMode, DriverError, LiveConfig, LiveDriver};
use crate::workload::{key_name, Request, VALUE_BYTES};

/// How commands reach the node that serves their key; see the module docs.
pub trait Route {
    /// A short name for reports (`proxy`, `cluster`).
    fn name(&self) -> &'static str;

    /// Sends `command`, whose key is `key`, to the node serving `key` and
    /// returns its reply (an error reply is `Ok(Frame::Error)`).
    ///
    /// # Errors
    ///
    /// If the connection fails or the reply cannot be read.
    fn call(&mut self, key: &[u8], command: &[&[u8]]) -> Result<Frame, ClientError>;
}

/// Every command to one address: twemproxy, or a single node.
#[derive(Debug)]
pub struct ProxyRoute {
    client: Client,
}

impl ProxyRoute {
    /// Connects to `addr`.
    ///
    /// # Errors
    ///
    /// If the connection fails.
    pub fn connect(addr: SocketAddr) -> Result<ProxyRoute, ClientError> {
        Ok(ProxyRoute {
            client: Client::connect(addr)?,
        })
    }
}

impl Route for ProxyRoute {
    fn name(&self) -> &'static str {
        "proxy"
    }

    fn call(&mut self, _key: &[u8], command: &[&[u8]]) -> Result<Frame, ClientError> {
        self.client.queue(command);
        self.client.flush()?;
        self.client.read()
    }
}

/// One node's counters at the end of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeCounts {
    /// The node.
    pub addr: String,
    /// `keyspace_hits`.
    pub hits: u64,
    /// `keyspace_misses`.
    pub misses: u64,
    /// `evicted_keys`.
    pub evicted: u64,
    /// `DBSIZE`.
    pub keys: u64,
}

/// What one replay over one layout measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardedReport {
    /// The route's name.
    pub route: String,
    /// The `maxmemory-policy`.
    pub policy: String,
    /// The pattern's name.
    pub source: String,
    /// Requests replayed.
    pub requests: u64,
    /// `maxmemory` of each node.
    pub maxmemory_per_node_bytes: u64,
    /// `keyspace_hits / (hits + misses)` over all nodes.
    pub hit_ratio: f64,
    /// `GET`s the driver saw hit; equals the nodes' hits summed unless
    /// something else talked to them.
    pub driver_hits: u64,
    /// `SET`s refused with an error reply.
    pub rejected: u64,
    /// `DBSIZE` summed over the nodes.
    pub keys: u64,
    /// Each node's counters.
    pub nodes: Vec<NodeCounts>,
}

/// A read-through client of a cache of several nodes; see the module docs.
#[derive(Debug)]
pub struct ShardedDriver<R> {
    route: R,
    nodes: Vec<(SocketAddr, Client)>,
    value: Vec<u8>,
}

impl<R: Route> ShardedDriver<R> {
    /// A driver sending requests through `route`, with a direct connection
    /// to each of `nodes` for resets and counters.
    ///
    /// # Errors
    ///
    /// If a node cannot be reached.
    pub fn new(route: R, nodes: &[SocketAddr]) -> Result<ShardedDriver<R>, ClientError> {
        let nodes = nodes
            .iter()
            .map(|&addr| Ok((addr, Client::connect(addr)?)))
            .collect::<Result<_, ClientError>>()?;
        Ok(ShardedDriver {
            route,
            nodes,
            value: vec![b'v'; VALUE_BYTES as usize],
        })
    }

    /// Empties every node and gives each `policy` and `maxmemory_per_node`.
    ///
    /// # Errors
    ///
    /// If a node refuses a command.
    pub fn reset(
        &mut self,
        policy: PolicyKind,
        maxmemory_per_node: u64,
    ) -> Result<(), ClientError> {
        for (_, client) in &mut self.nodes {
            reset_server(client, policy, maxmemory_per_node)?;
        }
        Ok(())
    }

    /// Replays `requests` read-through (`GET`, and `SET [PX]` on a miss);
    /// returns the `GET`s that hit and the `SET`s refused.
    ///
    /// # Errors
    ///
    /// If the route fails, or a `GET` gets neither a value nor a null.
    pub fn replay(
        &mut self,
        requests: impl IntoIterator<Item = Request>,
    ) -> Result<(u64, u64), ClientError> {
        let (mut hits, mut rejected) = (0, 0);
        for req in requests {
            let key = key_name(req.key_id);
            let key = key.as_bytes();
            match self.route.call(key, &[b"GET", key])? {
                Frame::Bulk(_) => hits += 1,
                Frame::Null => rejected += u64::from(self.set(key, &req)?),
                reply => {
                    return Err(ClientError::Unexpected {
                        command: format!("GET {}", String::from_utf8_lossy(key)),
                        reply: format!("{reply:?}"),
                    })
                }
            }
        }
        Ok((hits, rejected))
    }

    /// Sets `key` as `req` says; true when the node refused it.
    fn set(&mut self, key: &[u8], req: &Request) -> Result<bool, ClientError> {
        let px = req.ttl.map(|ttl| ttl.0.to_string());
        let reply = match &px {
            Some(px) => self
                .route
                .call(key, &[b"SET", key, &self.value, b"PX", px.as_bytes()])?,
            None => self.route.call(key, &[b"SET", key, &self.value])?,
        };
        Ok(matches!(reply, Frame::Error(_)))
    }

    /// Every node's counters, read directly from the node.
    ///
    /// # Errors
    ///
    /// If a node fails.
    pub fn node_counts(&mut self) -> Result<Vec<NodeCounts>, ClientError> {
        self.nodes
            .iter_mut()
            .map(|(addr, client)| {
                let info = client.info("stats")?;
                Ok(NodeCounts {
                    addr: addr.to_string(),
                    hits: field(&info, "keyspace_hits"),
                    misses: field(&info, "keyspace_misses"),
                    evicted: field(&info, "evicted_keys"),
                    keys: client.call_int(&["DBSIZE"])?.max(0) as u64,
                })
            })
            .collect()
    }

    /// Resets the nodes, replays `requests` and reports.
    ///
    /// # Errors
    ///
    /// As [`ShardedDriver::reset`], [`ShardedDriver::replay`] and
    /// [`ShardedDriver::node_counts`].
    pub fn run(
        &mut self,
        policy: PolicyKind,
        source: &str,
        requests: impl IntoIterator<Item = Request>,
        maxmemory_per_node: u64,
    ) -> Result<ShardedReport, ClientError> {
        self.reset(policy, maxmemory_per_node)?;
        let mut count = 0;
        let (driver_hits, rejected) = self.replay(requests.into_iter().inspect(|_| count += 1))?;
        let nodes = self.node_counts()?;
        let hits: u64 = nodes.iter().map(|n| n.hits).sum();
        let misses: u64 = nodes.iter().map(|n| n.misses).sum();
        Ok(ShardedReport {
            route: self.route.name().to_owned(),
            policy: policy.to_string(),
            source: source.to_owned(),
            requests: count,
            maxmemory_per_node_bytes: maxmemory_per_node,
            hit_ratio: hits as f64 / (hits + misses).max(1) as f64,
            driver_hits,
            rejected,
            keys: nodes.iter().map(|n| n.keys).sum(),
            nodes,
        })
    }
}

/// One (policy, pattern) cell: one node with all of the memory against the
/// same memory split over the nodes behind a route.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The single node, `maxmemory` calibrated to the capacity.
    pub single: ShardedReport,
    /// The nodes behind the route, each with `1/n` of that `maxmemory`.
    pub sharded: ShardedReport,
}

impl Comparison {
    /// `sharded - single` hit ratio, in percentage points.
    pub fn difference_pp(&self) -> f64 {
        100.0 * (self.sharded.hit_ratio - self.single.hit_ratio)
    }
}

/// Calibrates `maxmemory` on `single` for `config.capacity` entries, then
/// runs `requests()` on `single` under it and through `route` on `nodes`
/// under `1/n` of it each; see the module docs. `requests` must yield the
/// same stream at every call.
///
/// # Errors
///
/// If a server fails or refuses a command.
pub fn compare<R: Route, I: IntoIterator<Item = Request>>(
    single: SocketAddr,
    route: R,
    nodes: &[SocketAddr],
    policy: PolicyKind,
    source: &str,
    mut requests: impl FnMut() -> I,
    config: &LiveConfig,
) -> Result<Comparison, DriverError> {
    // The runs keep the servers' own clocks, so the calibration does too.
    let config = LiveConfig {
        clock: Some(ClockMode::Real),
        ..config.clone()
    };
    let maxmemory = match config.maxmemory_bytes {
        Some(bytes) => bytes,
        None => {
            LiveDriver::connect(single)?
                .calibrate(policy, &mut requests, &config)?
                .maxmemory_bytes
        }
    };
    let alone = ShardedDriver::new(ProxyRoute::connect(single)?, &[single])?.run(
        policy,
        source,
        requests(),
        maxmemory,
    )?;
    let share = maxmemory / nodes.len().max(1) as u64;
    let split = ShardedDriver::new(route, nodes)?.run(policy, source, requests(), share)?;
    Ok(Comparison {
        single: alone,
        sharded: split,
    })
}

/// A markdown table, one row per cell: the route, the `maxmemory` of the
/// single node and of each sharded node, hit ratio in percent with two
/// decimals and keys held, single node then sharded, the keys of each node
/// and the difference.
pub fn to_markdown(cells: &[Comparison]) -> String {
    let mut out = String::from(
        "| policy | workload | route | maxmemory: 1 node / each node | 1 node hit % | 1 node keys | sharded hit % | sharded keys | keys per node | sharded − 1 node pp |\n\
         | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |\n",
    );
    for c in cells {
        let per_node: Vec<String> = c.sharded.nodes.iter().map(|n| n.keys.to_string()).collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} / {} | {:.2} | {} | {:.2} | {} | {} | {:+.2} |",
            c.single.policy,
            c.single.source,
            c.sharded.route,
            c.single.maxmemory_per_node_bytes,
            c.sharded.maxmemory_per_node_bytes,
            100.0 * c.single.hit_ratio,
            c.single.keys,
            100.0 * c.sharded.hit_ratio,
            c.sharded.keys,
            per_node.join(" / "),
            c.difference_pp(),
        );
    }
    out
}
