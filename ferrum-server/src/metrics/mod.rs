//! Prometheus exposition over HTTP (DESIGN.md §6), on when `metrics-addr` is
//! set.
//!
//! - [`names`]: every metric name, as `const`s; Redis exporter names where
//!   the concept is the same, `ferrum_` names for FerrumKV's own state.
//! - [`exposition`]: reads the server's and store's counters at scrape time
//!   and renders them through a per-scrape `metrics-exporter-prometheus`
//!   recorder.
//! - [`http`]: the listener that answers `GET /metrics`.
//!
//! # Metrics (design notes)
//!
//! `ferrum-server/src/metrics/` serves Prometheus's text format on
//! `metrics-addr` (off when unset). `names.rs` holds every metric name as a
//! `const`; Redis exporter names where the concept is the same, `ferrum_` names
//! for FerrumKV's own state (the hit ratio, AHE's controller).
//!
//! **Architecture invariant:** metrics are read, never kept. A scrape reads
//! `ServerStats`, `Store::stats()` and the other accessors INFO uses, records
//! them into a `PrometheusRecorder` built for that scrape (installed with
//! `metrics::with_local_recorder`, never globally) and renders it. There is no
//! second set of counters to drift from INFO, and servers in one process (the
//! tests) cannot see each other's series. Hot paths therefore never call the
//! `metrics` macros.
//!
//! The HTTP side is a small hand-written HTTP/1.1 responder on a tokio
//! `TcpListener` the server binds itself, so port 0 works and
//! `Server::metrics_addr()` reports the port; the crate's `http-listener`
//! (hyper) is not compiled in. `redis_commands_duration_seconds_total` is a
//! fractional counter, which `metrics`' integer counters cannot hold; it is
//! appended with the crate's formatting helpers.

pub(crate) mod exposition;
pub(crate) mod http;
pub(crate) mod names;

#[cfg(test)]
mod tests;

pub(crate) use http::serve;
