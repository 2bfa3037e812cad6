//! `client-output-buffer-limit normal`: how much reply output a client may
//! leave unwritten before the server closes it, as Redis does.
//!
//! A connection encodes a batch's replies into one buffer and writes it when
//! the batch ends or the buffer reaches its watermark. With no limit set
//! (Redis's default, `normal 0 0 0`) the watermark is 64 KiB and a client
//! that does not read simply stops being served: its task waits in the
//! write, so its memory stays bounded. With a limit set, the replies of a
//! batch are held up to the limit (at most [`MAX_HELD`]) before they are
//! written, so the limit is measured as Redis measures it, on what one
//! batch produced and what is still unwritten, and a pipeline whose replies
//! break it gets none of them: the client is closed. A write that waits on
//! a client over the soft limit gives way when the soft limit's seconds
//! run out.
//!
//! Subscribed clients are in Redis's `pubsub` class, whose limit bounds
//! their message queue (`crate::pubsub`); this limit leaves them alone.

use std::sync::atomic::{AtomicU64, Ordering};

use tokio::time::{Duration, Instant};

use crate::config::OutputBufferLimit;

/// Replies are written once this many bytes are pending, when no limit
/// asks to hold more.
pub(crate) const FLUSH_THRESHOLD: usize = 64 * 1024;

/// The most a connection holds unwritten to measure a limit: a limit above
/// it is still enforced on single replies, while a pipeline's replies
/// go out in batches of this size, as without a limit.
pub(crate) const MAX_HELD: usize = 1024 * 1024;

/// The `normal` class's limit, shared by every connection and installed by
/// `CONFIG SET`; connections read it once per batch.
#[derive(Debug, Default)]
pub(crate) struct NormalLimit {
    hard_bytes: AtomicU64,
    soft_bytes: AtomicU64,
    soft_seconds: AtomicU64,
}

impl NormalLimit {
    /// Makes `limit` the one connections apply from their next batch.
    pub(crate) fn install(&self, limit: OutputBufferLimit) {
        self.hard_bytes.store(limit.hard_bytes, Ordering::Relaxed);
        self.soft_bytes.store(limit.soft_bytes, Ordering::Relaxed);
        self.soft_seconds
            .store(limit.soft_seconds, Ordering::Relaxed);
    }

    /// The limit in force.
    pub(crate) fn get(&self) -> OutputBufferLimit {
        OutputBufferLimit {
            hard_bytes: self.hard_bytes.load(Ordering::Relaxed),
            soft_bytes: self.soft_bytes.load(Ordering::Relaxed),
            soft_seconds: self.soft_seconds.load(Ordering::Relaxed),
        }
    }
}

/// One connection's output buffer against its limit.
#[derive(Debug)]
pub(crate) struct OutputBuffer {
    limit: OutputBufferLimit,
    watermark: usize,
    /// When the pending output went over the soft limit, in milliseconds
    /// after `epoch`.
    over_soft_since: Option<u64>,
    epoch: Instant,
}

impl OutputBuffer {
    /// A connection's state, with no limit until [`refresh`](Self::refresh).
    pub(crate) fn new() -> OutputBuffer {
        OutputBuffer {
            limit: OutputBufferLimit::default(),
            watermark: FLUSH_THRESHOLD,
            over_soft_since: None,
            epoch: Instant::now(),
        }
    }

    /// Takes up the limit in force for the next batch; `subscribed`
    /// clients are in the `pubsub` class, which this does not apply.
    pub(crate) fn refresh(&mut self, limit: &NormalLimit, subscribed: bool) {
        self.limit = if subscribed {
            OutputBufferLimit::default()
        } else {
            limit.get()
        };
        let held = [self.limit.hard_bytes, self.limit.soft_bytes]
            .into_iter()
            .filter(|&l| l > 0)
            .min()
            .map_or(FLUSH_THRESHOLD, |l| {
                usize::try_from(l).unwrap_or(MAX_HELD).min(MAX_HELD)
            });
        self.watermark = held.max(FLUSH_THRESHOLD);
    }

    /// Pending bytes at which the connection writes (and checks the limit)
    /// before the batch ends.
    pub(crate) fn watermark(&self) -> usize {
        self.watermark
    }

    /// Whether `pending` unwritten bytes break the limit now.
    pub(crate) fn is_broken(&mut self, pending: usize) -> bool {
        // Only a soft limit needs the clock; every flush asks.
        let now = if self.limit.soft_bytes > 0 {
            self.epoch.elapsed().as_millis() as u64
        } else {
            0
        };
        self.limit
            .is_broken(pending as u64, now, &mut self.over_soft_since)
    }

    /// When a write still pending must give up: the soft limit's time
    /// running out, if the output is over it.
    pub(crate) fn soft_deadline(&self) -> Option<Instant> {
        let since = self.over_soft_since?;
        let at = since.saturating_add(self.limit.soft_seconds.saturating_mul(1000));
        self.epoch
            .checked_add(Duration::from_millis(at.saturating_add(1)))
    }

    /// Everything pending was written: the soft limit's clock stops.
    pub(crate) fn drained(&mut self) {
        self.over_soft_since = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(hard: u64, soft: u64, secs: u64) -> NormalLimit {
        let l = NormalLimit::default();
        l.install(OutputBufferLimit {
            hard_bytes: hard,
            soft_bytes: soft,
            soft_seconds: secs,
        });
        l
    }

    #[test]
    fn without_a_limit_replies_go_out_every_64_kib() {
        let mut b = OutputBuffer::new();
        b.refresh(&limit(0, 0, 0), false);
        assert_eq!(b.watermark(), FLUSH_THRESHOLD);
        assert!(!b.is_broken(usize::MAX));
        assert_eq!(b.soft_deadline(), None);
    }

    #[test]
    fn a_hard_limit_holds_a_batch_up_to_it_and_breaks_at_it() {
        let mut b = OutputBuffer::new();
        b.refresh(&limit(100_000, 0, 0), false);
        assert_eq!(b.watermark(), 100_000);
        assert!(!b.is_broken(99_999));
        assert!(b.is_broken(100_000));
        // Small limits still write in 64 KiB batches; large ones hold at
        // most MAX_HELD.
        b.refresh(&limit(1000, 0, 0), false);
        assert_eq!(b.watermark(), FLUSH_THRESHOLD);
        assert!(b.is_broken(1000));
        b.refresh(&limit(1 << 30, 0, 0), false);
        assert_eq!(b.watermark(), MAX_HELD);
    }

    #[test]
    fn a_soft_limit_breaks_only_after_its_seconds() {
        let mut b = OutputBuffer::new();
        b.refresh(&limit(0, 100_000, 60), false);
        assert!(!b.is_broken(200_000));
        let deadline = b.soft_deadline().expect("over the soft limit");
        assert!(deadline >= b.epoch + Duration::from_secs(60));
        // Back under it: the clock starts again.
        assert!(!b.is_broken(10));
        assert_eq!(b.soft_deadline(), None);
        // With zero seconds, the first time over is allowed, the next is not.
        b.refresh(&limit(0, 100, 0), false);
        assert!(!b.is_broken(200));
        std::thread::sleep(Duration::from_millis(2));
        assert!(b.is_broken(200));
    }

    #[test]
    fn subscribers_are_left_to_the_pubsub_class() {
        let mut b = OutputBuffer::new();
        b.refresh(&limit(10, 10, 0), true);
        assert_eq!(b.watermark(), FLUSH_THRESHOLD);
        assert!(!b.is_broken(1 << 20));
    }
}
