//! Integration tests: a real FerrumKV server on a free loopback port, driven
//! over real sockets by the `redis` client crate and by raw RESP bytes.
//!
//! One test binary with a module per command family keeps link time down.

mod ahe;
mod common;
mod connection;
mod expiry;
mod keys;
mod protocol;
mod server;
mod strings;
mod transactions;
