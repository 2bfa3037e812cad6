//! Replication, the primary's side: `SYNC` and `PSYNC` attach a replica,
//! which gets a snapshot of the dataset and then the stream of every
//! change made after it, as Redis sends them.
//!
//! **The stream is the effects, not the requests.** Each top-level call
//! (a command, an `EXEC`, a script) collects what it changed as commands
//! that replay to the same result anywhere (`cmd::propagate`): relative TTLs
//! become absolute (`SET k v PXAT t`, `PEXPIREAT`), pops say what they
//! popped (`BLMPOP` becomes `LPOP k n`), a script sends the writes it
//! made. A key that expiry or eviction removes is sent as `DEL`. A call
//! that collected more than one command is wrapped in `MULTI`/`EXEC`;
//! `SELECT` goes ahead of the first command of another database.
//!
//! **Order.** While a replica is attached, every write holds the
//! transaction gate exclusively (`cmd::gate`), so the stream's order is
//! the order the writes happened in. Reads run side by side as before;
//! the keys they expire are named by the store as they go
//! ([`ferrum_store::ExpiredLog`]).
//!
//! **Full sync without fork.** A replica's snapshot is the point-in-time
//! snapshot `BGSAVE` takes (see `crate::persist`), started with the gate
//! held exclusively at the moment the replica joins the stream: what the
//! snapshot misses the stream holds, and nothing twice. The stream waits
//! in the replica's link until the snapshot is sent.
//!
//! With no replica attached all of this costs one relaxed load per
//! command.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes, BytesMut};

use crate::config::OutputBufferLimit;
use crate::pubsub::{Subscriber, TrackingMsg};

/// One command for the stream, in database `db`.
#[derive(Debug, Clone)]
pub(crate) struct Op {
    pub(crate) db: usize,
    pub(crate) args: Vec<Bytes>,
}

/// The primary's replication state. One per server, in `Shared`.
#[derive(Debug)]
pub(crate) struct Replication {
    /// Whether any replica is attached.
    active: AtomicBool,
    /// The replication ID, 40 hex digits, new at each start.
    replid: String,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    links: Vec<Link>,
    /// The database the stream last selected; `None`: the next command
    /// selects its own (a new replica needs a `SELECT` first).
    db: Option<usize>,
    /// Bytes of stream sent so far (`master_repl_offset`).
    offset: u64,
    /// The running call's commands, not yet sent.
    pending: Vec<Op>,
    /// When the stream last carried a `PING` (or was started).
    pinged: Instant,
}

/// One attached replica.
#[derive(Debug)]
struct Link {
    /// The replica's client id.
    id: u64,
    addr: String,
    inbox: Weak<Subscriber>,
    /// The stream sent while the replica's snapshot is still being
    /// made, held for after it; `None` once the snapshot went.
    held: Option<Vec<Bytes>>,
}

/// No limit: the snapshot and what was held for it go out whole.
const UNLIMITED: OutputBufferLimit = OutputBufferLimit {
    hard_bytes: 0,
    soft_bytes: 0,
    soft_seconds: 0,
};

impl Replication {
    /// No replicas, and a fresh replication ID.
    pub(crate) fn new() -> Replication {
        let mut bytes = [0u8; 20];
        // Without randomness the ID is still unique enough per process.
        if getrandom::fill(&mut bytes).is_err() {
            bytes[..8].copy_from_slice(&std::process::id().to_le_bytes().repeat(2));
        }
        let replid = bytes.iter().fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        });
        Replication {
            active: AtomicBool::new(false),
            replid,
            inner: Mutex::new(Inner {
                links: Vec::new(),
                db: None,
                offset: 0,
                pending: Vec::new(),
                pinged: Instant::now(),
            }),
        }
    }

    /// Whether any replica is attached: one relaxed load.
    pub(crate) fn active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// The replication ID.
    pub(crate) fn replid(&self) -> &str {
        &self.replid
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The stream's offset now (`master_repl_offset`).
    pub(crate) fn offset(&self) -> u64 {
        self.lock().offset
    }

    /// Attaches client `id` (at `addr`) as a replica whose stream starts
    /// now; it is held until [`snapshot_sent`](Self::snapshot_sent). The
    /// caller holds the transaction gate exclusively and has just started
    /// the replica's snapshot. Returns the stream's offset, where the
    /// replica starts.
    pub(crate) fn attach(
        &self,
        store: &ferrum_store::Store,
        id: u64,
        addr: String,
        inbox: &Arc<Subscriber>,
    ) -> u64 {
        let mut inner = self.lock();
        inner.links.retain(|l| l.id != id);
        inner.links.push(Link {
            id,
            addr,
            inbox: Arc::downgrade(inbox),
            held: Some(Vec::new()),
        });
        // The new replica's stream must say which database comes first.
        inner.db = None;
        inner.pinged = Instant::now();
        store.log_expired(true);
        self.active.store(true, Ordering::Relaxed);
        inner.offset
    }

    /// Sends client `id` its snapshot (`payload`, already framed), then
    /// the stream held for it; from now on the stream goes to it directly.
    pub(crate) fn snapshot_sent(&self, id: u64, payload: Bytes) {
        let mut inner = self.lock();
        let Some(link) = inner.links.iter_mut().find(|l| l.id == id) else {
            return;
        };
        let held = link.held.take().unwrap_or_default();
        let alive = link.inbox.upgrade().is_some_and(|inbox| {
            std::iter::once(payload)
                .chain(held)
                .all(|bytes| inbox.send_tracking(TrackingMsg::Raw(bytes), UNLIMITED))
        });
        if !alive {
            inner.links.retain(|l| l.id != id);
        }
    }

    /// Detaches client `id` (its connection closed, or its snapshot
    /// failed).
    pub(crate) fn detach(&self, store: &ferrum_store::Store, id: u64) {
        if !self.active() {
            return;
        }
        let mut inner = self.lock();
        inner.links.retain(|l| l.id != id);
        self.idle_if_alone(store, &mut inner);
    }

    fn idle_if_alone(&self, store: &ferrum_store::Store, inner: &mut Inner) {
        if inner.links.is_empty() {
            self.active.store(false, Ordering::Relaxed);
            store.log_expired(false);
            inner.pending.clear();
        }
    }

    /// Adds a command to the running call's share of the stream.
    pub(crate) fn push(&self, db: usize, args: Vec<Bytes>) {
        self.lock().pending.push(Op { db, args });
    }

    /// Whether the running call has collected commands.
    pub(crate) fn has_pending(&self) -> bool {
        !self.lock().pending.is_empty()
    }

    /// Sends the running call's commands: in `MULTI`/`EXEC` when more than
    /// one and `atomic`, as Redis does for a call (not for expiry,
    /// eviction, or commands that touch arbitrary keys). `limit` is the
    /// replicas' output limit.
    pub(crate) fn flush(
        &self,
        store: &ferrum_store::Store,
        atomic: bool,
        limit: OutputBufferLimit,
    ) {
        let mut inner = self.lock();
        if inner.pending.is_empty() {
            return;
        }
        let ops = std::mem::take(&mut inner.pending);
        let wrap = atomic && ops.len() > 1;
        let mut out = BytesMut::new();
        if wrap {
            select(&mut out, &mut inner.db, ops[0].db);
            encode(&mut out, &[Bytes::from_static(b"MULTI")]);
        }
        for op in &ops {
            select(&mut out, &mut inner.db, op.db);
            encode(&mut out, &op.args);
        }
        if wrap {
            encode(&mut out, &[Bytes::from_static(b"EXEC")]);
        }
        Self::send(&mut inner, out.freeze(), limit);
        self.idle_if_alone(store, &mut inner);
    }

    /// A `PING` down the stream when `period` passed since the last one,
    /// so that replicas see a live link (`repl-ping-replica-period`).
    pub(crate) fn ping_if_due(&self, period: Duration, limit: OutputBufferLimit) {
        if !self.active() {
            return;
        }
        let mut inner = self.lock();
        if inner.pinged.elapsed() < period {
            return;
        }
        inner.pinged = Instant::now();
        let mut out = BytesMut::new();
        encode(&mut out, &[Bytes::from_static(b"PING")]);
        Self::send(&mut inner, out.freeze(), limit);
    }

    /// Sends `bytes` to every replica (held for those still waiting for
    /// their snapshot); a replica past `limit` is dropped, as Redis drops
    /// one past `client-output-buffer-limit replica`.
    fn send(inner: &mut Inner, bytes: Bytes, limit: OutputBufferLimit) {
        inner.offset += bytes.len() as u64;
        inner.links.retain_mut(|link| match &mut link.held {
            Some(held) => {
                held.push(bytes.clone());
                true
            }
            None => link
                .inbox
                .upgrade()
                .is_some_and(|inbox| inbox.send_tracking(TrackingMsg::Raw(bytes.clone()), limit)),
        });
    }

    /// `INFO replication`'s lines about the replicas and the stream.
    pub(crate) fn info(&self, out: &mut String) {
        let inner = self.lock();
        let _ = write!(out, "connected_slaves:{}\r\n", inner.links.len());
        for (i, link) in inner.links.iter().enumerate() {
            let (ip, port) = link.addr.rsplit_once(':').unwrap_or((&link.addr, "0"));
            let state = if link.held.is_some() {
                "wait_bgsave"
            } else {
                "online"
            };
            let _ = write!(
                out,
                "slave{i}:ip={ip},port={port},state={state},offset={},lag=0\r\n",
                inner.offset
            );
        }
        let _ = write!(
            out,
            "master_failover_state:no-failover\r\nmaster_replid:{}\r\nmaster_replid2:0000000000000000000000000000000000000000\r\nmaster_repl_offset:{}\r\nsecond_repl_offset:-1\r\n",
            self.replid, inner.offset
        );
    }

    /// `ROLE`'s list of replicas: address, port and offset of each.
    pub(crate) fn replicas(&self) -> Vec<(String, String, u64)> {
        let inner = self.lock();
        inner
            .links
            .iter()
            .filter(|l| l.held.is_none())
            .map(|l| {
                let (ip, port) = l.addr.rsplit_once(':').unwrap_or((&l.addr, "0"));
                (ip.to_owned(), port.to_owned(), inner.offset)
            })
            .collect()
    }
}

impl Default for Replication {
    fn default() -> Replication {
        Replication::new()
    }
}

/// `SELECT db` into `out` unless the stream is in `db` already.
fn select(out: &mut BytesMut, current: &mut Option<usize>, db: usize) {
    if *current != Some(db) {
        let mut n = itoa::Buffer::new();
        encode(
            out,
            &[
                Bytes::from_static(b"SELECT"),
                Bytes::copy_from_slice(n.format(db).as_bytes()),
            ],
        );
        *current = Some(db);
    }
}

/// One command as a RESP array of bulk strings.
pub(crate) fn encode(out: &mut BytesMut, args: &[Bytes]) {
    let mut n = itoa::Buffer::new();
    out.put_u8(b'*');
    out.put_slice(n.format(args.len()).as_bytes());
    out.put_slice(b"\r\n");
    for a in args {
        out.put_u8(b'$');
        out.put_slice(n.format(a.len()).as_bytes());
        out.put_slice(b"\r\n");
        out.put_slice(a);
        out.put_slice(b"\r\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<Bytes> {
        words
            .iter()
            .map(|w| Bytes::copy_from_slice(w.as_bytes()))
            .collect()
    }

    #[test]
    fn encode_writes_an_array_of_bulk_strings() {
        let mut out = BytesMut::new();
        encode(&mut out, &args(&["SET", "k", ""]));
        assert_eq!(&out[..], b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n");
    }

    #[test]
    fn select_is_sent_only_when_the_database_changes() {
        let (mut out, mut db) = (BytesMut::new(), None);
        select(&mut out, &mut db, 2);
        select(&mut out, &mut db, 2);
        assert_eq!(&out[..], b"*2\r\n$6\r\nSELECT\r\n$1\r\n2\r\n");
    }
}
