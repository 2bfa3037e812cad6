//! The server's one clock: Unix milliseconds, read once per command.
//!
//! A reading is one `tokio::time::Instant` (cheap, and what `tokio::time`
//! timeouts compare against) mapped to Unix time by an anchor: the wall
//! clock's nanoseconds at a known instant. Redis reads `gettimeofday` for
//! every command, so its absolute times (`EXPIREAT`, `PXAT`, `TIME`, ...)
//! are the wall clock's; the anchor keeps ours so:
//!
//! - it is kept in nanoseconds, as both clocks count, and the instant is
//!   read *before* the wall clock, so a reading is never behind the wall
//!   clock a client reads just before it sends a command (a millisecond
//!   anchor plus whole elapsed milliseconds sat up to 1 ms behind, and
//!   `GETEX PXAT now+10000` then had a `PTTL` of 10001);
//! - the server's cron re-reads it ([`Clock::resync`]), so a step of the
//!   system clock (NTP, `date -s`, a resumed VM) shows within one tick.
//!   Between steps the two clocks run at the same rate: Linux slews
//!   `CLOCK_MONOTONIC` and `CLOCK_REALTIME` alike.
//!
//! An offset lets tests (through the opt-in `DEBUG ADVANCE-CLOCK` command)
//! move time forward without sleeping.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use ferrum_store::Millis;
use tokio::time::Instant;

/// Unix time in milliseconds, following the wall clock.
#[derive(Debug)]
pub(crate) struct Clock {
    start: Instant,
    /// Unix seconds at start (`LASTSAVE`), fixed for the process's life.
    start_unix_secs: u64,
    /// Unix nanoseconds at `start`, as of the last [`Clock::resync`].
    anchor_ns: AtomicU64,
    offset_ms: AtomicU64,
}

impl Clock {
    /// A clock anchored to the current wall-clock time.
    pub(crate) fn new() -> Clock {
        // The instant first: see the module doc.
        let start = Instant::now();
        let anchor_ns = wall_nanos();
        Clock {
            start,
            start_unix_secs: anchor_ns / 1_000_000_000,
            anchor_ns: AtomicU64::new(anchor_ns),
            offset_ms: AtomicU64::new(0),
        }
    }

    /// Now, in Unix milliseconds.
    pub(crate) fn now(&self) -> Millis {
        Millis(self.unix_nanos_at(Instant::now()) / 1_000_000)
    }

    /// Now, both in Unix milliseconds and as the instant it was read at:
    /// one clock read serves a command's `now` and the start of its timing.
    pub(crate) fn reading(&self) -> (Millis, Instant) {
        self.reading_at(Instant::now())
    }

    /// The reading of an instant already taken (the end of the previous
    /// command of a pipeline, which is when the next one starts).
    pub(crate) fn reading_at(&self, at: Instant) -> (Millis, Instant) {
        (Millis(self.unix_nanos_at(at) / 1_000_000), at)
    }

    /// Now, in Unix microseconds (for `TIME`).
    pub(crate) fn now_micros(&self) -> u64 {
        self.unix_nanos_at(Instant::now()) / 1000
    }

    /// Whole nanoseconds, so that no rounding puts a reading behind the
    /// wall clock (`u64` nanoseconds last until the year 2554).
    fn unix_nanos_at(&self, at: Instant) -> u64 {
        let elapsed_ns = at.saturating_duration_since(self.start).as_nanos() as u64;
        let offset_ns = self.offset_ms.load(Ordering::Relaxed) * 1_000_000;
        self.anchor_ns.load(Ordering::Relaxed) + elapsed_ns + offset_ns
    }

    /// Re-reads the wall clock against the monotonic one, so that a step of
    /// the system clock shows in the readings that follow (backwards too,
    /// as in Redis). Called by the server's cron, never per command.
    pub(crate) fn resync(&self) {
        let now = Instant::now();
        let wall_ns = wall_nanos();
        let elapsed_ns = now.saturating_duration_since(self.start).as_nanos() as u64;
        self.anchor_ns
            .store(wall_ns.saturating_sub(elapsed_ns), Ordering::Relaxed);
    }

    /// Seconds since the server started (for `INFO server`).
    pub(crate) fn uptime_secs(&self) -> u64 {
        self.start.elapsed().as_secs()
    }

    /// Unix seconds when the server started (`LASTSAVE`: nothing is ever
    /// saved, so the last "save" is the empty dataset at start).
    pub(crate) fn start_unix_secs(&self) -> u64 {
        self.start_unix_secs
    }

    /// Moves the clock forward by `ms`.
    pub(crate) fn advance(&self, ms: u64) {
        self.offset_ms.fetch_add(ms, Ordering::Relaxed);
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

/// The wall clock's Unix nanoseconds. Read just after an instant, the
/// pair maps later instants to a time never behind the wall clock (ahead
/// of it by the nanoseconds between the two reads).
fn wall_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_are_never_behind_the_wall_clock() {
        let clock = Clock::new();
        for _ in 0..10_000 {
            let before = wall_nanos() / 1000;
            let (ms, _) = clock.reading();
            assert!(ms.0 >= before / 1000, "{} behind {before} us", ms.0);
            assert!(clock.now_micros() >= before);
        }
    }

    #[test]
    fn resync_follows_a_step_of_the_wall_clock() {
        let clock = Clock::new();
        // A clock whose anchor is an hour off, as after `date -s`.
        clock
            .anchor_ns
            .fetch_sub(3_600_000_000_000, Ordering::Relaxed);
        let before = wall_nanos() / 1000;
        assert!(clock.now_micros() < before);
        clock.resync();
        assert!(clock.now_micros() >= before);
        assert!(clock.now_micros() < wall_nanos() / 1000 + 1_000_000);
    }

    #[test]
    fn advance_moves_readings_but_not_the_anchor() {
        let clock = Clock::new();
        clock.advance(60_000);
        let before = wall_nanos() / 1000;
        clock.resync();
        assert!(clock.now().0 >= before / 1000 + 60_000);
    }
}
