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
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes, BytesMut};
use tokio_util::sync::CancellationToken;

use crate::config::OutputBufferLimit;
use crate::pubsub::{Subscriber, TrackingMsg};

/// One command for the stream, in database `db`.
#[derive(Debug, Clone)]
pub(crate) struct Op {
    pub(crate) db: usize,
    pub(crate) args: Vec<Bytes>,
}

/// Starts the task that follows a primary (`crate::replica` supplies it,
/// so this state does not depend on the connections that use it).
pub(crate) type Linker = Box<dyn Fn(Arc<Following>) + Send + Sync>;

/// The primary this server follows (`REPLICAOF host port`), and how far
/// its link got. The link task updates it; `INFO` and `ROLE` read it.
#[derive(Debug)]
pub(crate) struct Following {
    pub(crate) host: String,
    pub(crate) port: u16,
    /// Cancelled by `REPLICAOF NO ONE` or another primary: the link ends.
    pub(crate) stop: CancellationToken,
    status: AtomicU8,
    /// The primary's stream offset this replica has applied.
    offset: AtomicU64,
    /// When the link last read from the primary (for
    /// `master_last_io_seconds_ago`).
    last_io: Mutex<Instant>,
}

/// Where a replica's link to its primary stands, as `ROLE` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum LinkStatus {
    /// Waiting to connect (again).
    Connect = 0,
    /// Connecting and handshaking.
    Connecting = 1,
    /// Receiving and loading the snapshot.
    Sync = 2,
    /// Applying the stream.
    Connected = 3,
}

impl Following {
    pub(crate) fn status(&self) -> LinkStatus {
        match self.status.load(Ordering::Relaxed) {
            1 => LinkStatus::Connecting,
            2 => LinkStatus::Sync,
            3 => LinkStatus::Connected,
            _ => LinkStatus::Connect,
        }
    }

    pub(crate) fn set_status(&self, status: LinkStatus) {
        self.status.store(status as u8, Ordering::Relaxed);
    }

    pub(crate) fn offset(&self) -> u64 {
        self.offset.load(Ordering::Relaxed)
    }

    pub(crate) fn set_offset(&self, offset: u64) {
        self.offset.store(offset, Ordering::Relaxed);
    }

    /// The link read something from the primary now.
    pub(crate) fn heard(&self) {
        *self.last_io.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    fn silent_secs(&self) -> u64 {
        self.last_io
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .elapsed()
            .as_secs()
    }
}

/// The replication state: the replicas attached here and their stream,
/// and the primary this server follows, if any. One per server, in
/// `Shared`.
pub(crate) struct Replication {
    /// Whether any replica is attached.
    active: AtomicBool,
    /// Whether this server follows a primary (writes from clients are
    /// refused while `replica-read-only`).
    replica: AtomicBool,
    /// The replication ID, 40 hex digits, new at each start.
    replid: String,
    inner: Mutex<Inner>,
    following: Mutex<Option<Arc<Following>>>,
    linker: OnceLock<Linker>,
    /// While a shutdown waits for replicas: until when.
    shutdown_deadline: Mutex<Option<Instant>>,
}

impl std::fmt::Debug for Replication {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replication")
            .field("active", &self.active)
            .field("replica", &self.replica)
            .finish_non_exhaustive()
    }
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
    /// The port the replica listens on (`REPLCONF listening-port`).
    listening_port: Option<u16>,
    /// The offset the replica last acknowledged (`REPLCONF ACK`).
    acked: u64,
    /// When it last did.
    acked_at: Instant,
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
            replica: AtomicBool::new(false),
            following: Mutex::new(None),
            linker: OnceLock::new(),
            shutdown_deadline: Mutex::new(None),
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
            listening_port: None,
            acked: 0,
            acked_at: Instant::now(),
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

    /// `INFO replication`'s section, after its header.
    pub(crate) fn info(&self, out: &mut String) {
        let following = self.following();
        match &following {
            None => out.push_str("role:master\r\n"),
            Some(f) => {
                let up = f.status() == LinkStatus::Connected;
                let _ = write!(
                    out,
                    "role:slave\r\nmaster_host:{}\r\nmaster_port:{}\r\nmaster_link_status:{}\r\nmaster_last_io_seconds_ago:{}\r\nmaster_sync_in_progress:{}\r\nslave_read_repl_offset:{}\r\nslave_repl_offset:{}\r\nslave_priority:100\r\nslave_read_only:1\r\nreplica_announced:1\r\n",
                    f.host,
                    f.port,
                    if up { "up" } else { "down" },
                    if up { f.silent_secs() as i64 } else { -1 },
                    u8::from(f.status() == LinkStatus::Sync),
                    f.offset(),
                    f.offset(),
                );
            }
        }
        let inner = self.lock();
        let _ = write!(out, "connected_slaves:{}\r\n", inner.links.len());
        for (i, link) in inner.links.iter().enumerate() {
            let (ip, port) = link_address(link);
            let state = if link.held.is_some() {
                "wait_bgsave"
            } else {
                "online"
            };
            let _ = write!(
                out,
                "slave{i}:ip={ip},port={port},state={state},offset={},lag={}\r\n",
                link.acked,
                link.acked_at.elapsed().as_secs()
            );
        }
        let offset = following.as_ref().map_or(inner.offset, |f| f.offset());
        let _ = write!(
            out,
            "master_failover_state:no-failover\r\nmaster_replid:{}\r\nmaster_replid2:0000000000000000000000000000000000000000\r\nmaster_repl_offset:{offset}\r\nsecond_repl_offset:-1\r\n",
            self.replid
        );
    }

    /// Before the server stops: waits up to `timeout` for every replica
    /// to acknowledge the whole stream (Redis 7's `shutdown-timeout`),
    /// asking them to, and logs how many did. `deadline` is published
    /// meanwhile (`shutdown_in_milliseconds`).
    pub(crate) fn wait_before_shutdown(&self, timeout: Duration, limit: OutputBufferLimit) {
        let (target, total) = {
            let inner = self.lock();
            (inner.offset, inner.links.len())
        };
        if total == 0 || timeout.is_zero() {
            return;
        }
        let deadline = Instant::now() + timeout;
        *self
            .shutdown_deadline
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(deadline);
        tracing::warn!("Waiting for replicas before shutting down.");
        self.request_acks(limit);
        while self.acked_at_least(target) < total && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let inner = self.lock();
        for l in inner.links.iter().filter(|l| l.acked < target) {
            let (ip, port) = link_address(l);
            tracing::warn!(
                "Lagging replica {ip}:{port} reported offset {} behind master, lag={}, state=online.",
                target - l.acked,
                l.acked_at.elapsed().as_secs()
            );
        }
        let synced = inner.links.iter().filter(|l| l.acked >= target).count();
        tracing::warn!("{synced} of {total} replicas are in sync when shutting down.");
        drop(inner);
        *self
            .shutdown_deadline
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Milliseconds left of a shutdown's wait for replicas, 0 for none.
    pub(crate) fn shutdown_in_ms(&self) -> u64 {
        let deadline = *self
            .shutdown_deadline
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        deadline.map_or(0, |d| {
            d.saturating_duration_since(Instant::now())
                .as_millis()
                .max(1) as u64
        })
    }

    /// Replicas online that acknowledged within `max_lag` seconds
    /// (`min-replicas-to-write`'s good ones).
    pub(crate) fn good_replicas(&self, max_lag: u64) -> usize {
        if !self.active() {
            return 0;
        }
        let inner = self.lock();
        inner
            .links
            .iter()
            .filter(|l| l.held.is_none() && l.acked_at.elapsed().as_secs() <= max_lag)
            .count()
    }

    /// How many replicas are attached (they are not counted as clients).
    pub(crate) fn replica_count(&self) -> usize {
        if !self.active() {
            return 0;
        }
        self.lock().links.len()
    }

    /// Bytes of stream waiting for the replicas: held for those still
    /// syncing, and queued or unwritten for the others
    /// (`mem_total_replication_buffers`).
    pub(crate) fn buffered_bytes(&self) -> usize {
        let inner = self.lock();
        inner
            .links
            .iter()
            .map(|l| match &l.held {
                Some(held) => held.iter().map(Bytes::len).sum(),
                None => l.inbox.upgrade().map_or(0, |i| i.waiting_bytes()),
            })
            .sum()
    }

    /// `ROLE`'s list of replicas: address, port and acknowledged offset.
    pub(crate) fn replicas(&self) -> Vec<(String, String, u64)> {
        let inner = self.lock();
        inner
            .links
            .iter()
            .filter(|l| l.held.is_none())
            .map(|l| {
                let (ip, port) = link_address(l);
                (ip, port, l.acked)
            })
            .collect()
    }

    /// `REPLCONF listening-port`: where replica `id` accepts connections.
    pub(crate) fn set_listening_port(&self, id: u64, port: u16) -> bool {
        let mut inner = self.lock();
        let link = inner.links.iter_mut().find(|l| l.id == id);
        link.map(|l| l.listening_port = Some(port)).is_some()
    }

    /// `REPLCONF ACK offset` from replica `id`.
    pub(crate) fn acked(&self, id: u64, offset: u64) {
        let mut inner = self.lock();
        if let Some(l) = inner.links.iter_mut().find(|l| l.id == id) {
            l.acked = l.acked.max(offset);
            l.acked_at = Instant::now();
        }
    }

    /// How many replicas acknowledged the stream up to `offset`.
    pub(crate) fn acked_at_least(&self, offset: u64) -> usize {
        let inner = self.lock();
        inner
            .links
            .iter()
            .filter(|l| l.held.is_none() && l.acked >= offset)
            .count()
    }

    /// Asks every replica to acknowledge what it applied (`REPLCONF
    /// GETACK *`, which `WAIT` sends).
    pub(crate) fn request_acks(&self, limit: OutputBufferLimit) {
        let mut inner = self.lock();
        if inner.links.is_empty() {
            return;
        }
        let mut out = BytesMut::new();
        let words = [b"REPLCONF".as_slice(), b"GETACK", b"*"];
        encode(&mut out, &words.map(Bytes::from_static));
        Self::send(&mut inner, out.freeze(), limit);
    }

    /// Supplies the task that follows a primary; once, at start-up.
    pub(crate) fn set_linker(&self, linker: Linker) {
        let _ = self.linker.set(linker);
    }

    /// Whether this server follows a primary: one relaxed load.
    pub(crate) fn is_replica(&self) -> bool {
        self.replica.load(Ordering::Relaxed)
    }

    /// The primary followed, if any.
    pub(crate) fn following(&self) -> Option<Arc<Following>> {
        self.following
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// `REPLICAOF host port`: follows that primary from now on, ending the
    /// link to any other. `false` when it follows that one already.
    pub(crate) fn follow(&self, host: &str, port: u16) -> bool {
        let mut following = self.following.lock().unwrap_or_else(|p| p.into_inner());
        if following
            .as_ref()
            .is_some_and(|f| f.host.eq_ignore_ascii_case(host) && f.port == port)
        {
            return false;
        }
        if let Some(old) = following.take() {
            old.stop.cancel();
        }
        let f = Arc::new(Following {
            host: host.to_owned(),
            port,
            stop: CancellationToken::new(),
            status: AtomicU8::new(LinkStatus::Connect as u8),
            offset: AtomicU64::new(0),
            last_io: Mutex::new(Instant::now()),
        });
        *following = Some(f.clone());
        self.replica.store(true, Ordering::Relaxed);
        drop(following);
        if let Some(linker) = self.linker.get() {
            linker(f);
        }
        true
    }

    /// `REPLICAOF NO ONE`: a primary again, the dataset kept.
    pub(crate) fn unfollow(&self) {
        let mut following = self.following.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(old) = following.take() {
            old.stop.cancel();
        }
        self.replica.store(false, Ordering::Relaxed);
    }

    /// Ends every replica's link (their dataset is no longer this one's:
    /// a full sync from a new primary replaced it). Returns their ids.
    pub(crate) fn drop_replicas(&self, store: &ferrum_store::Store) -> Vec<u64> {
        let mut inner = self.lock();
        let ids = inner.links.iter().map(|l| l.id).collect();
        inner.links.clear();
        self.idle_if_alone(store, &mut inner);
        ids
    }
}

/// A replica's address as `INFO` shows it: its IP, and the port it
/// listens on if it said so (else the one it connected from).
fn link_address(link: &Link) -> (String, String) {
    let (ip, port) = link.addr.rsplit_once(':').unwrap_or((&link.addr, "0"));
    let port = link
        .listening_port
        .map_or_else(|| port.to_owned(), |p| p.to_string());
    (ip.to_owned(), port)
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
    use crate::parse::argv as args;

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
