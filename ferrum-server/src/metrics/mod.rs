//! Prometheus exposition over HTTP (DESIGN.md §6), on when `metrics-addr` is
//! set.
//!
//! - [`names`]: every metric name, as `const`s; Redis exporter names where
//!   the concept is the same, `ferrum_` names for FerrumKV's own state.
//! - [`exposition`]: reads the server's and store's counters at scrape time
//!   and renders them through a per-scrape `metrics-exporter-prometheus`
//!   recorder.
//! - [`http`]: the listener that answers `GET /metrics`.

pub(crate) mod exposition;
pub(crate) mod http;
pub(crate) mod names;

#[cfg(test)]
mod tests;

pub(crate) use http::serve;
