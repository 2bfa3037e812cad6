//! The FerrumKV server: a Redis-compatible cache whose reason to exist is
//! eviction quality.
//!
//! The binary (`cargo run --release -p ferrum-server`) accepts the same
//! command line as `redis-server`. The library exposes [`Server`] and
//! [`Config`] so tests and embedders can run a server in-process:
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use ferrum_server::{Config, Server};
//! use tokio_util::sync::CancellationToken;
//!
//! let mut config = Config::default();
//! config.port = 0; // any free port
//! let server = Server::bind(config).await?;
//! println!("listening on {}", server.local_addr());
//! let shutdown = CancellationToken::new();
//! server.run(shutdown).await
//! # }
//! ```

mod accept;
mod acl;
pub mod alloc;
mod blocking;
mod client;
mod clock;
mod cluster;
mod cmd;
mod command;
pub mod config;
mod connection;
mod error;
mod evict_clients;
mod latency;
mod lazyfree;
mod listen;
pub mod logging;
mod metrics;
mod migrate;
mod monitor;
mod notify;
mod obuf;
mod parse;
mod pause;
mod persist;
mod pubsub;
mod rdb;
mod replica;
mod replication;
pub mod runtime;
mod script;
mod server;
mod shared;
mod slowlog;
mod stream;
mod tls;
mod tracking;

pub use config::Config;
pub use server::{Server, ShutdownHook, SnapshotError};

/// The Redis version FerrumKV reports in `INFO` and `HELLO`: the Redis
/// release whose behaviour it follows, so clients enable the right features.
pub const REDIS_VERSION: &str = "7.0.15";
