//! Integration tests: a real FerrumKV server on a free loopback port, driven
//! over real sockets by the `redis` client crate and by raw RESP bytes.
//!
//! One test binary with a module per command family keeps link time down.

mod acl;
mod ahe;
mod bitmaps;
mod blocking;
mod client_eviction;
mod cluster;
mod command_fuzz;
mod command_table;
mod common;
mod compat;
mod config_params;
mod config_rewrite;
mod connection;
mod eviction;
mod expiry;
mod fuzz;
mod geo;
mod hardening;
mod hashes;
mod hyperloglog;
mod keys;
mod latency;
mod lists;
mod metrics;
mod migrate;
mod notifications;
mod options;
mod pause;
mod persistence;
mod pipelines;
mod process;
mod protocol;
mod pubsub;
mod redis7;
mod rename;
mod replication;
mod scripting;
mod server;
mod sets;
mod streams;
mod strings;
mod tls;
mod tracking;
mod transactions;
mod zsets;
