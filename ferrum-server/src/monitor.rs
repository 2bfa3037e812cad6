//! `MONITOR`: every command the server runs, as a line to each monitoring
//! client (`+1700000000.123456 [0 127.0.0.1:5000] "set" "k" "v"`), in
//! Redis's format. Lines travel through the monitor's Pub/Sub queue, so a
//! slow monitor is cut off at its output limit instead of slowing anyone.
//! Administrative commands are not shown, as in Redis; nor are commands
//! refused before running.
//!
//! Cost with no monitor: one relaxed atomic load per command.
//!
//! # MONITOR (design notes)
//!
//! **MONITOR** (`monitor.rs`). After each command `cmd::run` checks one
//! relaxed atomic (the number of monitors); with monitors, it formats the
//! command's line once and queues it on each monitor's Pub/Sub queue, so a
//! slow monitor hits its output limit instead of slowing the server.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use bytes::Bytes;

use crate::config::OutputBufferLimit;
use crate::pubsub::{Subscriber, TrackingMsg};

/// The monitoring connections. One per server, in `Shared`.
#[derive(Debug, Default)]
pub(crate) struct Monitors {
    count: AtomicUsize,
    list: Mutex<Vec<(u64, Weak<Subscriber>)>>,
}

impl Monitors {
    /// Whether anyone is monitoring.
    pub(crate) fn active(&self) -> bool {
        self.count.load(Ordering::Relaxed) != 0
    }

    /// `MONITOR`: client `id` receives lines through `inbox` from now on.
    pub(crate) fn add(&self, id: u64, inbox: &Arc<Subscriber>) {
        let mut list = self.list.lock().unwrap_or_else(|p| p.into_inner());
        if !list.iter().any(|(i, _)| *i == id) {
            list.push((id, Arc::downgrade(inbox)));
            self.count.store(list.len(), Ordering::Relaxed);
        }
    }

    /// `RESET`, or the connection closing.
    pub(crate) fn remove(&self, id: u64) {
        if !self.active() {
            return;
        }
        let mut list = self.list.lock().unwrap_or_else(|p| p.into_inner());
        list.retain(|(i, _)| *i != id);
        self.count.store(list.len(), Ordering::Relaxed);
    }

    /// Sends one command's line, run at `micros` (Unix microseconds), to
    /// every monitor, whose queues hold at most `limit` (the `pubsub`
    /// class of `client-output-buffer-limit`).
    pub(crate) fn feed(
        &self,
        micros: u64,
        limit: OutputBufferLimit,
        db: usize,
        addr: &str,
        args: &[Bytes],
    ) {
        let line = Bytes::from(format_line(micros, db, addr, args));
        let mut list = self.list.lock().unwrap_or_else(|p| p.into_inner());
        list.retain(|(_, weak)| match weak.upgrade() {
            Some(s) => {
                s.send_tracking(TrackingMsg::Monitor(line.clone()), limit);
                true
            }
            None => false,
        });
        self.count.store(list.len(), Ordering::Relaxed);
    }
}

/// One line, as Redis writes it (`sdscatrepr` quoting).
fn format_line(micros: u64, db: usize, addr: &str, args: &[Bytes]) -> String {
    let mut s = format!(
        "{}.{:06} [{} {}]",
        micros / 1_000_000,
        micros % 1_000_000,
        db,
        addr
    );
    for a in args {
        s.push(' ');
        crate::config::push_repr(&mut s, a);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_quote_arguments_as_redis_does() {
        let args = [
            Bytes::from_static(b"set"),
            Bytes::from_static(b"k \"q\"\n\x01"),
        ];
        assert_eq!(
            format_line(1_700_000_000_000_042, 3, "127.0.0.1:5000", &args),
            "1700000000.000042 [3 127.0.0.1:5000] \"set\" \"k \\\"q\\\"\\n\\x01\""
        );
    }
}
