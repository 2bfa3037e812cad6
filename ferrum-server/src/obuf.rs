//! A client's output buffer, as Redis keeps it: the replies not yet
//! written, and `client-output-buffer-limit normal`, how much of them a
//! client may leave unread before the server closes it.
//!
//! A connection never stops reading because its replies are unread (see
//! `crate::connection`): what the socket does not take waits here, in
//! [`Replies`], a list of chunks (small replies packed into blocks of
//! [`BLOCK`] bytes, a large reply as a chunk of its own), so a client that
//! reads slowly costs about one byte of memory per byte of reply, and the
//! buffer never copies what it already holds to grow. Unwritten bytes show
//! as `omem` in `CLIENT LIST` and count in `tot-mem`, `mem_clients_normal`
//! and `used_memory`, where `maxmemory-clients` can weigh them.
//!
//! With Redis's default `normal 0 0 0` nothing bounds them but
//! `maxmemory-clients`. With a limit set, [`OutputBuffer`] checks the
//! unwritten bytes after every command and whenever a write moves them, as
//! Redis checks after every reply: a client at the hard limit, or over the
//! soft limit for longer than its seconds, is closed with nothing more
//! written.
//!
//! Subscribed clients are in Redis's `pubsub` class, whose limit bounds
//! their message queue (`crate::pubsub`): a connection takes messages off
//! its queue only while less than [`FLUSH_THRESHOLD`] bytes wait here, so
//! a subscriber that does not read leaves them in the queue, where
//! publishers weigh them against that class.

use std::collections::VecDeque;
use std::io::IoSlice;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::{Buf, Bytes, BytesMut};
use tokio::time::{Duration, Instant};

use crate::config::OutputBufferLimit;

/// A subscriber takes messages off its queue while less than this waits
/// unwritten.
pub(crate) const FLUSH_THRESHOLD: usize = 64 * 1024;

/// The size of the blocks small replies are packed into (Redis's
/// `PROTO_REPLY_CHUNK_BYTES`), and of an idle connection's block.
pub(crate) const BLOCK: usize = 16 * 1024;

/// A block with less room than this is sealed before the next reply.
const MIN_SPARE: usize = 1024;

/// The most chunks one write hands to the socket.
const MAX_SLICES: usize = 64;

/// Replies encoded and not yet written, oldest first: sealed chunks, then
/// the block being filled.
#[derive(Debug)]
pub(crate) struct Replies {
    /// Full blocks and large replies, the first possibly partly written.
    sealed: VecDeque<Bytes>,
    /// The bytes in `sealed`.
    sealed_bytes: usize,
    /// The block replies are encoded into; sealed once it holds [`BLOCK`]
    /// bytes or more.
    tail: BytesMut,
}

impl Default for Replies {
    fn default() -> Self {
        Replies {
            sealed: VecDeque::new(),
            sealed_bytes: 0,
            tail: BytesMut::with_capacity(BLOCK),
        }
    }
}

impl Replies {
    /// Where the next reply is encoded; call [`seal`](Self::seal) after.
    /// A nearly full block is sealed first: a reply that does not fit in
    /// what is left would make the block grow by doubling, half of it then
    /// unused.
    pub(crate) fn buf(&mut self) -> &mut BytesMut {
        if self.spare() < MIN_SPARE && !self.tail.is_empty() {
            self.seal_now();
        }
        &mut self.tail
    }

    /// Seals the block being filled once it is full, so that the next
    /// replies go to another block and nothing written is ever moved.
    pub(crate) fn seal(&mut self) {
        if self.tail.len() >= BLOCK {
            self.seal_now();
        }
    }

    fn seal_now(&mut self) {
        let full = if self.spare() > self.tail.len() / 4 {
            // A reply grew the block by doubling: keep only its bytes, in
            // an allocation of their size, and fill the block again.
            let exact = Bytes::copy_from_slice(&self.tail);
            self.tail.clear();
            exact
        } else {
            std::mem::replace(&mut self.tail, BytesMut::with_capacity(BLOCK)).freeze()
        };
        self.sealed_bytes += full.len();
        self.sealed.push_back(full);
    }

    /// Bytes waiting to be written.
    pub(crate) fn len(&self) -> usize {
        self.sealed_bytes + self.tail.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Capacity held beyond the bytes waiting: the rest of the open block.
    pub(crate) fn spare(&self) -> usize {
        self.tail.capacity() - self.tail.len()
    }

    /// Everything waiting, when it is one block (the common case: a
    /// batch's replies); no vector of slices to build then.
    pub(crate) fn single(&self) -> Option<&[u8]> {
        self.sealed.is_empty().then_some(&self.tail[..])
    }

    /// The next bytes to write, oldest first, as one vectored write takes
    /// them: at most [`MAX_SLICES`] chunks.
    pub(crate) fn slices(&self) -> ([IoSlice<'_>; MAX_SLICES], usize) {
        let mut out = [IoSlice::new(&[]); MAX_SLICES];
        let mut n = 0;
        let chunks = self
            .sealed
            .iter()
            .map(|b| &b[..])
            .chain(std::iter::once(&self.tail[..]))
            .filter(|c| !c.is_empty());
        for (slot, chunk) in out.iter_mut().zip(chunks) {
            *slot = IoSlice::new(chunk);
            n += 1;
        }
        (out, n)
    }

    /// Drops the first `n` bytes, which the socket took.
    pub(crate) fn consume(&mut self, mut n: usize) {
        while n > 0 {
            let Some(front) = self.sealed.front_mut() else {
                if n < self.tail.len() {
                    self.tail.advance(n);
                } else {
                    // Written whole, the common case: the block is filled
                    // again from its start, whose cache lines are warm
                    // (advancing would walk the replies through it).
                    self.tail.clear();
                }
                return;
            };
            let k = n.min(front.len());
            front.advance(k);
            self.sealed_bytes -= k;
            n -= k;
            if front.is_empty() {
                self.sealed.pop_front();
            }
        }
    }

    /// Drops everything unwritten (a client closed over its limit).
    pub(crate) fn clear(&mut self) {
        self.sealed.clear();
        self.sealed_bytes = 0;
        self.tail.clear();
    }

    /// With nothing waiting, gives back a block that a large reply grew,
    /// as Redis shrinks an idle client's reply buffer, so that
    /// `used_memory` keeps no high-water mark.
    pub(crate) fn shrink_if_idle(&mut self) {
        if self.is_empty() && self.tail.capacity() > BLOCK {
            self.tail = BytesMut::with_capacity(BLOCK);
        }
    }
}

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

/// One connection's unwritten output against its class's limit.
#[derive(Debug)]
pub(crate) struct OutputBuffer {
    limit: OutputBufferLimit,
    /// When the unwritten output went over the soft limit, in
    /// milliseconds after `epoch`.
    over_soft_since: Option<u64>,
    epoch: Instant,
}

impl OutputBuffer {
    /// A connection's state, with no limit until [`refresh`](Self::refresh).
    pub(crate) fn new() -> OutputBuffer {
        OutputBuffer {
            limit: OutputBufferLimit::default(),
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
        if self.limit.soft_bytes == 0 {
            self.over_soft_since = None;
        }
    }

    /// Whether any limit applies (most clients have none).
    pub(crate) fn is_limited(&self) -> bool {
        self.limit.hard_bytes > 0 || self.limit.soft_bytes > 0
    }

    /// Whether `pending` unwritten bytes break the limit now.
    pub(crate) fn is_broken(&mut self, pending: usize) -> bool {
        if !self.is_limited() {
            return false;
        }
        // Only a soft limit needs the clock.
        let now = if self.limit.soft_bytes > 0 {
            self.epoch.elapsed().as_millis() as u64
        } else {
            0
        };
        self.limit
            .is_broken(pending as u64, now, &mut self.over_soft_since)
    }

    /// When the output breaks the soft limit if it stays over it: the
    /// moment to check again while nothing else happens.
    pub(crate) fn soft_deadline(&self) -> Option<Instant> {
        let since = self.over_soft_since?;
        let at = self.limit.soft_deadline_ms(since);
        self.epoch.checked_add(Duration::from_millis(at))
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
    fn without_a_limit_nothing_breaks() {
        let mut b = OutputBuffer::new();
        b.refresh(&limit(0, 0, 0), false);
        assert!(!b.is_limited());
        assert!(!b.is_broken(usize::MAX));
        assert_eq!(b.soft_deadline(), None);
    }

    #[test]
    fn a_hard_limit_breaks_at_it() {
        let mut b = OutputBuffer::new();
        b.refresh(&limit(100_000, 0, 0), false);
        assert!(!b.is_broken(99_999));
        assert!(b.is_broken(100_000));
        assert_eq!(b.soft_deadline(), None);
    }

    #[test]
    fn a_soft_limit_breaks_only_after_its_seconds() {
        let mut b = OutputBuffer::new();
        b.refresh(&limit(0, 100_000, 60), false);
        assert!(!b.is_broken(200_000));
        let deadline = b.soft_deadline().expect("over the soft limit");
        assert!(deadline >= b.epoch + Duration::from_secs(60));
        assert!(deadline <= b.epoch + Duration::from_secs(62));
        // Back under it: the clock starts again.
        assert!(!b.is_broken(10));
        assert_eq!(b.soft_deadline(), None);
    }

    #[test]
    fn soft_seconds_are_whole_seconds_as_on_redis_clock() {
        let l = OutputBufferLimit {
            hard_bytes: 0,
            soft_bytes: 100,
            soft_seconds: 0,
        };
        let mut since = None;
        assert!(!l.is_broken(200, 1_500, &mut since));
        assert!(!l.is_broken(200, 1_999, &mut since));
        assert!(l.is_broken(200, 2_000, &mut since));
        let l = OutputBufferLimit {
            soft_seconds: 2,
            ..l
        };
        let mut since = None;
        assert!(!l.is_broken(200, 1_500, &mut since));
        assert!(!l.is_broken(200, 3_999, &mut since));
        assert!(l.is_broken(200, 4_000, &mut since));
    }

    #[test]
    fn subscribers_are_left_to_the_pubsub_class() {
        let mut b = OutputBuffer::new();
        b.refresh(&limit(10, 10, 0), true);
        assert!(!b.is_limited());
        assert!(!b.is_broken(1 << 20));
    }

    fn written(r: &Replies) -> Vec<u8> {
        let (slices, n) = r.slices();
        slices[..n].iter().flat_map(|s| s.iter().copied()).collect()
    }

    #[test]
    fn replies_pack_into_blocks_and_leave_in_order() {
        let mut r = Replies::default();
        let mut expected = Vec::new();
        for i in 0..5000u32 {
            let reply = format!("+reply {i}\r\n");
            r.buf().extend_from_slice(reply.as_bytes());
            r.seal();
            expected.extend_from_slice(reply.as_bytes());
        }
        assert_eq!(r.len(), expected.len());
        assert!(r.sealed.len() >= expected.len() / BLOCK - 1, "packed");
        assert!(r.sealed.iter().all(|c| c.len() < BLOCK + 64));
        // Blocks are nearly full, with little allocated and unused.
        let held: usize = r.sealed.iter().map(|c| c.len()).sum();
        assert!(held >= r.sealed.len() * (BLOCK - MIN_SPARE - 64));
        // Written in uneven pieces, every byte leaves once, in order.
        let mut out = Vec::new();
        let mut step = 1;
        while !r.is_empty() {
            let next = written(&r);
            let n = step.min(next.len());
            out.extend_from_slice(&next[..n]);
            r.consume(n);
            step = step * 7 % 40_000 + 1;
        }
        assert_eq!(out, expected);
        assert_eq!(r.sealed_bytes, 0);
    }

    #[test]
    fn a_large_reply_is_a_chunk_of_its_own_and_an_idle_buffer_shrinks() {
        let mut r = Replies::default();
        r.buf().extend_from_slice(b"+OK\r\n");
        r.seal();
        r.buf().extend_from_slice(&vec![b'x'; 200_000]);
        r.seal();
        assert_eq!(r.sealed.len(), 1);
        assert_eq!(r.len(), 200_005);
        assert!(r.spare() <= BLOCK);
        r.consume(200_005);
        assert!(r.is_empty());
        r.shrink_if_idle();
        assert!(r.tail.capacity() <= BLOCK);
        r.buf().extend_from_slice(b"+OK\r\n");
        r.clear();
        assert!(r.is_empty());
    }
}
