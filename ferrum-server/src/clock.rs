//! The server's one clock: Unix milliseconds, read once per command.
//!
//! Readings come from `tokio::time::Instant` anchored to the wall clock at
//! start, so they are monotonic, and an offset lets tests (through the
//! opt-in `DEBUG ADVANCE-CLOCK` command) move time forward without sleeping.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use ferrum_store::Millis;
use tokio::time::Instant;

/// Unix time in milliseconds, monotonic for the life of the process.
#[derive(Debug)]
pub(crate) struct Clock {
    start: Instant,
    start_unix_ms: u64,
    offset_ms: AtomicU64,
}

impl Clock {
    /// A clock anchored to the current wall-clock time.
    pub(crate) fn new() -> Clock {
        let start_unix_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        Clock {
            start: Instant::now(),
            start_unix_ms,
            offset_ms: AtomicU64::new(0),
        }
    }

    /// Now, in Unix milliseconds.
    pub(crate) fn now(&self) -> Millis {
        Millis(self.now_micros() / 1000)
    }

    /// Now, both in Unix milliseconds and as the instant it was read at:
    /// one clock read serves a command's `now` and the start of its timing.
    pub(crate) fn reading(&self) -> (Millis, Instant) {
        self.reading_at(Instant::now())
    }

    /// The reading of an instant already taken (the end of the previous
    /// command of a pipeline, which is when the next one starts).
    pub(crate) fn reading_at(&self, at: Instant) -> (Millis, Instant) {
        let elapsed = at.duration_since(self.start).as_millis() as u64;
        let ms = self.start_unix_ms + self.offset_ms.load(Ordering::Relaxed) + elapsed;
        (Millis(ms), at)
    }

    /// Now, in Unix microseconds (for `TIME`).
    pub(crate) fn now_micros(&self) -> u64 {
        let elapsed = self.start.elapsed().as_micros() as u64;
        (self.start_unix_ms + self.offset_ms.load(Ordering::Relaxed)) * 1000 + elapsed
    }

    /// Seconds since the server started (for `INFO server`).
    pub(crate) fn uptime_secs(&self) -> u64 {
        self.start.elapsed().as_secs()
    }

    /// Unix seconds when the server started (`LASTSAVE`: nothing is ever
    /// saved, so the last "save" is the empty dataset at start).
    pub(crate) fn start_unix_secs(&self) -> u64 {
        self.start_unix_ms / 1000
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
