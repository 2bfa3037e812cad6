//! The tokio runtime the server runs on, built in one place for the binary
//! and for tests that start a server in process.
//!
//! **Arrival order.** Redis serves clients in the order `epoll` reports
//! them, so of two commands that arrive together the one sent first runs
//! first; Redis's own tests rely on it (a client that sent `XREADGROUP ...
//! BLOCK` just before another's `DEL` has blocked by then and gets
//! `-UNBLOCKED`). tokio's multi-threaded scheduler would run the task an
//! I/O event woke *last* first (its "LIFO slot", a heuristic for
//! message passing), and the rest after it in order: with one worker, the
//! later of two arrivals ran first in 299 of 300 rounds of that sequence.
//! `disable_lifo_slot` turns the heuristic off, so every woken task goes to
//! the back of the run queue in the order it was woken, at no cost per
//! request. It is one of tokio's unstable options, available under
//! `--cfg tokio_unstable`, which the workspace's `.cargo/config.toml` sets.

use tokio::runtime::Builder;

/// A multi-threaded runtime builder with `workers` worker threads (tokio's
/// default, one per CPU, when `None`), all drivers enabled, that runs woken
/// connections in arrival order (see the module docs).
pub fn builder(workers: Option<usize>) -> Builder {
    let mut builder = Builder::new_multi_thread();
    if let Some(workers) = workers {
        builder.worker_threads(workers);
    }
    #[cfg(tokio_unstable)]
    builder.disable_lifo_slot();
    builder.enable_all();
    builder
}
