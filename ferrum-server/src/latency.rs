//! The latency monitor's state: events (`command`, `fast-command`,
//! `expire-cycle`) with their last samples, and per-command and
//! per-subcommand histograms over power-of-two microsecond buckets. The
//! `LATENCY` command that reads them is `cmd/latency.rs`.
//!
//! # Latency monitor (design notes)
//!
//! **Latency monitor** (`latency.rs`, `cmd/latency.rs`). `cmd::run` adds each call to a
//! per-command power-of-two microsecond histogram (one relaxed atomic next to
//! the call counters; subcommands of container commands in a small bounded
//! map) and, when `latency-monitor-threshold` is set, logs slow commands as
//! `command`/`fast-command` events; the expiry timer logs `expire-cycle`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::command::COMMANDS;

/// Power-of-two microsecond buckets: bucket `i` holds calls that took at
/// most `2^i` µs (the last one everything longer).
pub(crate) const BUCKETS: usize = 40;

/// Distinct subcommand names with a histogram, at most.
const MAX_SUBCOMMANDS: usize = 512;

/// Samples kept per event (Redis's `LATENCY_TS_LEN`).
const HISTORY_LEN: usize = 160;

/// The bucket a duration of `usec` microseconds falls into.
pub(crate) fn bucket(usec: u64) -> usize {
    if usec <= 1 {
        0
    } else {
        ((64 - (usec - 1).leading_zeros()) as usize).min(BUCKETS - 1)
    }
}

/// One event's samples and its all-time maximum.
#[derive(Debug, Default)]
pub(crate) struct EventLog {
    /// `(unix seconds, milliseconds)`, oldest first.
    pub(crate) samples: Vec<(u64, u64)>,
    /// The largest sample ever logged, in milliseconds.
    pub(crate) max: u64,
}

/// The monitor: events by name, and the subcommands' histograms (the
/// commands' own live in `ServerStats`).
#[derive(Debug, Default)]
pub(crate) struct Latency {
    /// `latency-monitor-threshold` in milliseconds; 0: off.
    pub(crate) threshold_ms: AtomicU64,
    events: Mutex<BTreeMap<&'static str, EventLog>>,
    subcommands: Mutex<BTreeMap<String, [u64; BUCKETS]>>,
}

impl Latency {
    /// Logs `ms` for `event` at `now_s` if the monitor is on and `ms`
    /// reaches the threshold.
    pub(crate) fn sample(&self, event: &'static str, ms: u64, now_s: u64) {
        let threshold = self.threshold_ms.load(Ordering::Relaxed);
        if threshold == 0 || ms < threshold {
            return;
        }
        let mut events = self.events.lock().unwrap_or_else(|p| p.into_inner());
        let log = events.entry(event).or_default();
        log.max = log.max.max(ms);
        match log.samples.last_mut() {
            Some((t, l)) if *t == now_s => *l = (*l).max(ms),
            _ => {
                if log.samples.len() == HISTORY_LEN {
                    log.samples.remove(0);
                }
                log.samples.push((now_s, ms));
            }
        }
    }

    /// Counts one call of a container's subcommand (`client|id`).
    pub(crate) fn record_subcommand(&self, name: String, usec: u64) {
        let mut subs = self.subcommands.lock().unwrap_or_else(|p| p.into_inner());
        // Subcommand names come from clients: bounded, so that made-up
        // ones cannot grow the table without end.
        if !subs.contains_key(&name) && (subs.len() >= MAX_SUBCOMMANDS || name.len() > 64) {
            return;
        }
        subs.entry(name).or_insert([0; BUCKETS])[bucket(usec)] += 1;
    }

    /// `CONFIG RESETSTAT`: the subcommands' histograms.
    pub(crate) fn reset_histograms(&self) {
        self.subcommands
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    /// The events logged, by name, locked (`LATENCY LATEST/HISTORY/RESET`).
    pub(crate) fn events(&self) -> MutexGuard<'_, BTreeMap<&'static str, EventLog>> {
        self.events.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A copy of the subcommands' histograms, by name.
    pub(crate) fn subcommand_histograms(&self) -> BTreeMap<String, [u64; BUCKETS]> {
        self.subcommands
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// Per-command histogram buckets, indexed `command * BUCKETS + bucket`.
#[derive(Debug)]
pub(crate) struct Histograms(Box<[AtomicU64]>);

impl Default for Histograms {
    fn default() -> Self {
        Histograms(
            (0..COMMANDS.len() * BUCKETS)
                .map(|_| AtomicU64::new(0))
                .collect(),
        )
    }
}

impl Histograms {
    /// Counts one call of the command at `index` that took `usec`.
    pub(crate) fn record(&self, index: usize, usec: u64) {
        if let Some(b) = self.0.get(index * BUCKETS + bucket(usec)) {
            b.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The buckets of the command at `index`.
    pub(crate) fn of(&self, index: usize) -> [u64; BUCKETS] {
        let mut out = [0; BUCKETS];
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.0[index * BUCKETS + i].load(Ordering::Relaxed);
        }
        out
    }

    /// Zeroes every bucket (`CONFIG RESETSTAT`).
    pub(crate) fn reset(&self) {
        for b in self.0.iter() {
            b.store(0, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_powers_of_two() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(1), 0);
        assert_eq!(bucket(2), 1);
        assert_eq!(bucket(3), 2);
        assert_eq!(bucket(4), 2);
        assert_eq!(bucket(1000), 10);
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn samples_below_the_threshold_are_not_logged_and_a_second_keeps_its_max() {
        let l = Latency::default();
        l.sample("command", 500, 10);
        assert!(l.events().is_empty());
        l.threshold_ms.store(100, Ordering::Relaxed);
        l.sample("command", 50, 10);
        l.sample("command", 150, 10);
        l.sample("command", 300, 10);
        l.sample("command", 120, 11);
        let events = l.events();
        assert_eq!(events["command"].samples, [(10, 300), (11, 120)]);
        assert_eq!(events["command"].max, 300);
    }
}
