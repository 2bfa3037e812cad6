//! Hit-ratio benchmarking for FerrumKV: the workloads of
//! `shared/WORKLOADS.md`, trace files, simulators, and a live driver.
//!
//! - [`workload`]: the five seeded patterns of WORKLOADS.md (`zipf`,
//!   `shift`, `mixed`, `scan`, `ttl`) and four adversarial ones (`loop`,
//!   `zipf06`, `onehit`, `phase`) as `impl Iterator<Item = Request>`, at
//!   any WORKLOADS.md v2 scale (`Workload::scaled`; `--scale S` on `sim`,
//!   `export-trace` and `live`);
//! - [`trace`]: the `timestamp_ms,key,ttl_ms` CSV trace format;
//! - [`sim`]: a fixed-capacity read-through cache on virtual time that
//!   drives a `ferrum_evict::EvictionPolicy` directly;
//! - [`store_sim`]: the same read-through client driving the real
//!   `ferrum_store::Store` (the server's keyspace, expiry, memory accounting
//!   and eviction) with a `maxmemory` calibrated to the capacity;
//! - [`matrix`]: the policies × patterns table, as markdown or JSON, and
//!   its charts;
//! - [`svg`]: a small SVG line-chart writer for those charts;
//! - [`driver`]: the live driver, replaying a workload or trace against a
//!   running FerrumKV or Redis over RESP (through the small blocking
//!   [`client`]) and reading the server's own hit ratio; [`live`] puts its
//!   runs in a table next to the simulator's;
//! - [`sharded`]: the same replay routed over several nodes (through
//!   twemproxy, started by [`twemproxy`], or by a cluster-aware client,
//!   [`cluster`]), its hit ratio next to one node with all of the memory.
//!
//! The `ferrum-bench` binary wraps these (`ferrum-bench sim --help`,
//! `ferrum-bench live --help`).
//!
//! ```
//! use ferrum_bench::sim::{simulate, SimConfig};
//! use ferrum_bench::workload::{Pattern, Workload};
//! use ferrum_evict::{PolicyConfig, PolicyKind};
//!
//! let policy = PolicyKind::AllKeysLru.build(&PolicyConfig::default());
//! let requests = Workload::new(Pattern::Scan, 42, 20_000);
//! let report = simulate(policy, SimConfig::default(), requests);
//! // A cyclic scan over 100 000 keys never hits in an LRU of 5 000.
//! assert_eq!(report.hits, 0);
//! assert_eq!(report.misses, 20_000);
//! assert_eq!(report.windows.len(), 2);
//! ```

pub mod client;
pub mod cluster;
pub mod driver;
mod hold;
pub mod live;
pub mod matrix;
pub mod sharded;
pub mod sim;
pub mod store_sim;
pub mod svg;
pub mod trace;
pub mod twemproxy;
pub mod workload;
