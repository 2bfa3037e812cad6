//! Pub/Sub delivery: which connection listens to which channel or pattern,
//! and the per-subscriber queue that messages travel through.
//!
//! `PUBLISH` never waits for a subscriber. Each subscribed connection owns
//! the receiving end of an unbounded tokio `mpsc` channel, and its task
//! `select!`s on it next to its socket. The channel is unbounded in count
//! but bounded in *bytes*: every [`Subscriber`] counts the bytes queued for
//! it and not yet taken by its connection, and a message that would take the
//! count past the `pubsub` class of `client-output-buffer-limit` (hard
//! limit, or soft limit for longer than its seconds) is not queued; the
//! subscriber is marked overflowed and its connection is closed, as Redis
//! does. Bytes bound memory where a message count would not (one 512 MB
//! message or a million tiny ones), and they are what the Redis setting
//! means. What a limit does not see is the kernel's socket buffer and the
//! one write batch the connection has taken off the queue, both bounded.
//!
//! # Pub/Sub (design notes)
//!
//! **Pub/Sub** (`pubsub.rs`, `cmd/pubsub.rs`). `Shared::pubsub` maps channels,
//! patterns and shard channels (`pubsub::Kind`; without cluster mode shard
//! channels are one more namespace, `SPUBLISH` delivering `smessage`) to
//! subscribers (an `RwLock`: PUBLISH only reads). Each
//! subscribed connection owns the receiving end of a tokio `mpsc` channel and
//! `select!`s on it beside its socket; messages are encoded as `Frame::Push`
//! (`>` in RESP3, an array in RESP2) and written in batches. PUBLISH never
//! waits: sending is non-blocking. The channel is unbounded in count but
//! **bounded in bytes**: each subscriber counts the bytes queued and not yet
//! taken by its connection, and a message that would exceed the `pubsub` class
//! of `client-output-buffer-limit` (hard bytes, or soft bytes for longer than
//! soft seconds) is not queued: the subscriber is marked overflowed and its
//! connection killed. Bytes, not a message count, because bytes are what
//! bound memory and what the Redis setting means. On top of the limit sit the
//! kernel's socket buffer and one 64 KiB write batch. A connection's writes
//! give way to `CLIENT KILL` (and to shutdown after a one-second grace), so a
//! subscriber that never reads is closed even while its write is stuck. In
//! RESP2 a subscribed client may only run the commands flagged
//! `SUBSCRIBED_OK` in the table (the Pub/Sub ones, PING, QUIT, RESET); RESP3
//! clients may run anything. Subscribers are exempt from `timeout`, as in
//! Redis. While a subscriber's write waits, its connection also checks the
//! queue against the soft limit (at its deadline, or every 100 ms, as Redis's
//! cron), so a queue left over it by traffic that then stops still closes it. A closing connection leaves every channel and pattern.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use bytes::Bytes;
use ferrum_proto::{Frame, Protocol};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::config::OutputBufferLimit;

/// What a subscription listens to: a channel, a pattern of channels, or
/// a shard channel (`SSUBSCRIBE`, a namespace of its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `SUBSCRIBE`.
    Channel,
    /// `PSUBSCRIBE`.
    Pattern,
    /// `SSUBSCRIBE`.
    Shard,
}

/// One published message on its way to one subscriber.
#[derive(Clone, Debug)]
pub(crate) struct Message {
    /// The pattern it matched, for `pmessage`; `None` for `message`.
    pub(crate) pattern: Option<Bytes>,
    /// Published with `SPUBLISH`: delivered as `smessage`.
    pub(crate) shard: bool,
    /// The channel it was published to.
    pub(crate) channel: Bytes,
    /// The payload.
    pub(crate) payload: Bytes,
    /// A client-side-caching message instead of a published one.
    pub(crate) tracking: Option<TrackingMsg>,
}

/// What `CLIENT TRACKING` sends a connection.
#[derive(Clone, Debug)]
pub(crate) enum TrackingMsg {
    /// These keys changed; `None`: every key (`FLUSHALL`, `FLUSHDB`).
    Invalidate(Option<Vec<Bytes>>),
    /// The client the tracking client redirects to is gone.
    RedirBroken(u64),
    /// A `MONITOR` line (not tracking, but the same kind of server-made
    /// message).
    Monitor(Bytes),
    /// Bytes written as they are: a replica's snapshot and command stream
    /// (see `crate::replication`).
    Raw(Bytes),
}

impl Message {
    /// A published message, matched by `pattern` if any, sent by `SPUBLISH`
    /// if `shard`.
    fn published(pattern: Option<Bytes>, channel: &Bytes, payload: &Bytes, shard: bool) -> Message {
        Message {
            pattern,
            shard,
            channel: channel.clone(),
            payload: payload.clone(),
            tracking: None,
        }
    }

    /// A client-side-caching message.
    pub(crate) fn tracking(msg: TrackingMsg) -> Message {
        Message {
            pattern: None,
            shard: false,
            channel: Bytes::new(),
            payload: Bytes::new(),
            tracking: Some(msg),
        }
    }
}

impl Message {
    /// The bytes of a [`TrackingMsg::Raw`] message.
    pub(crate) fn raw(&self) -> Option<&Bytes> {
        match &self.tracking {
            Some(TrackingMsg::Raw(bytes)) => Some(bytes),
            _ => None,
        }
    }

    /// Bytes the message costs against the output limit: its encoded size,
    /// near enough (the RESP framing is at most a few dozen bytes).
    pub(crate) fn cost(&self) -> usize {
        let pattern = self.pattern.as_ref().map_or(0, |p| p.len() + 16);
        let keys = match &self.tracking {
            Some(TrackingMsg::Invalidate(Some(keys))) => keys.iter().map(|k| k.len() + 16).sum(),
            Some(TrackingMsg::Monitor(line) | TrackingMsg::Raw(line)) => line.len(),
            _ => 0,
        };
        self.channel.len() + self.payload.len() + pattern + keys + 40
    }

    /// The frame a subscriber receives: a push (an array in RESP2) of
    /// `message, channel, payload` or `pmessage, pattern, channel, payload`.
    ///
    /// A tracking message becomes Redis's `invalidate` push in RESP3, a
    /// `message` on `__redis__:invalidate` for a RESP2 connection in
    /// subscribed mode, and nothing otherwise (RESP2 has no pushes).
    pub(crate) fn into_frame(self, protocol: Protocol, subscribed: bool) -> Option<Frame> {
        if let Some(t) = self.tracking {
            let resp3 = protocol == Protocol::Resp3;
            return match t {
                TrackingMsg::Invalidate(keys) => {
                    let keys = keys.map_or(Frame::Null, |k| {
                        Frame::Array(k.into_iter().map(Frame::Bulk).collect())
                    });
                    if resp3 {
                        Some(Frame::Push(vec![Frame::bulk("invalidate"), keys]))
                    } else if subscribed {
                        Some(Frame::Push(vec![
                            Frame::bulk("message"),
                            Frame::bulk("__redis__:invalidate"),
                            keys,
                        ]))
                    } else {
                        None
                    }
                }
                TrackingMsg::Monitor(line) => Some(Frame::Simple(line)),
                // Written by the connection before it asks for a frame.
                TrackingMsg::Raw(_) => None,
                TrackingMsg::RedirBroken(id) => resp3.then(|| {
                    Frame::Push(vec![
                        Frame::bulk("tracking-redir-broken"),
                        Frame::Integer(id as i64),
                    ])
                }),
            };
        }
        let mut items = Vec::with_capacity(4);
        match self.pattern {
            Some(p) => items.extend([Frame::bulk("pmessage"), Frame::Bulk(p)]),
            None if self.shard => items.push(Frame::bulk("smessage")),
            None => items.push(Frame::bulk("message")),
        }
        items.extend([Frame::Bulk(self.channel), Frame::Bulk(self.payload)]);
        Some(Frame::Push(items))
    }
}

/// The client a subscriber's queue belongs to, as the queue needs it: to
/// name it, to wake its connection when a message arrives, and to close
/// it when its queue breaks the limit. `ClientHandle` implements it, so
/// the Pub/Sub registry does not depend on the client registry.
pub(crate) trait Client: std::fmt::Debug + Send + Sync {
    /// The client's id.
    fn id(&self) -> u64;
    /// Wakes the client's connection: its queue has something.
    fn wake(&self);
    /// Ends the client's connection (as `CLIENT KILL` does): its queue
    /// broke the limit.
    fn close(&self);
}

/// The sending side of one subscribed connection, shared by every channel
/// and pattern it listens to.
#[derive(Debug)]
pub(crate) struct Subscriber {
    client: Arc<dyn Client>,
    tx: mpsc::UnboundedSender<Message>,
    /// Bytes queued and not yet taken by the connection.
    pending_bytes: AtomicUsize,
    /// Bytes the connection took and has not written yet, as of its last
    /// wait: with the queue, what the `pubsub` limit weighs.
    unwritten: AtomicUsize,
    /// Milliseconds after `created` when the queue went over the soft
    /// limit, plus one (0: under it).
    over_soft_since: AtomicU64,
    created: Instant,
    overflowed: AtomicBool,
}

impl Subscriber {
    /// Queues `msg` unless that would break `limit`; on a break, marks the
    /// subscriber overflowed and asks its connection to close. Whether the
    /// message was queued.
    fn deliver(&self, msg: Message, limit: OutputBufferLimit) -> bool {
        if self.overflowed.load(Ordering::Relaxed) {
            return false;
        }
        let cost = msg.cost();
        if self.breaks(limit, cost) {
            return self.overflow();
        }
        self.pending_bytes.fetch_add(cost, Ordering::Relaxed);
        let queued = self.tx.send(msg).is_ok();
        // A connection waiting for input watches its queue through its
        // kill flag's waker, not the channel's (`Connection::wait_input`).
        self.client.wake();
        queued
    }

    /// Whether `more` bytes on top of the queue break `limit`; starts and
    /// stops the soft limit's clock.
    fn breaks(&self, limit: OutputBufferLimit, more: usize) -> bool {
        let pending = self.pending_bytes.load(Ordering::Relaxed)
            + self.unwritten.load(Ordering::Relaxed)
            + more;
        // Publishers race here only to start the soft clock at about the
        // same moment.
        let stored = self.over_soft_since.load(Ordering::Relaxed);
        let mut since = stored.checked_sub(1);
        let now = self.created.elapsed().as_millis() as u64;
        let broken = limit.is_broken(pending as u64, now, &mut since);
        let since = since.map_or(0, |s| s + 1);
        if since != stored {
            self.over_soft_since.store(since, Ordering::Relaxed);
        }
        broken
    }

    /// When the queue breaks the soft limit of `limit` if it stays over
    /// it with no new message (nothing checks it then but its connection).
    fn soft_deadline(&self, limit: OutputBufferLimit) -> Option<Instant> {
        let since = self
            .over_soft_since
            .load(Ordering::Relaxed)
            .checked_sub(1)?;
        self.created.checked_add(std::time::Duration::from_millis(
            limit.soft_deadline_ms(since),
        ))
    }

    fn overflow(&self) -> bool {
        if !self.overflowed.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                client = self.client.id(),
                "closing a subscriber over the pubsub output buffer limit"
            );
            self.client.close();
        }
        false
    }

    /// Queues a client-side-caching message for this connection.
    pub(crate) fn send_tracking(&self, msg: TrackingMsg, limit: OutputBufferLimit) -> bool {
        self.deliver(Message::tracking(msg), limit)
    }

    /// Bytes of messages queued and not yet taken by the connection.
    pub(crate) fn pending_bytes(&self) -> usize {
        self.pending_bytes.load(Ordering::Relaxed)
    }

    /// The whole output waiting for the client: queued, and taken but not
    /// yet written, as of the connection's last wait.
    pub(crate) fn waiting_bytes(&self) -> usize {
        self.pending_bytes() + self.unwritten.load(Ordering::Relaxed)
    }

    /// Whether the subscriber broke its output limit and is being closed.
    pub(crate) fn overflowed(&self) -> bool {
        self.overflowed.load(Ordering::Relaxed)
    }
}

/// Subscribers of one channel or pattern, by client id.
type Listeners = HashMap<u64, Arc<Subscriber>>;

#[derive(Debug, Default)]
struct Tables {
    channels: HashMap<Bytes, Listeners>,
    patterns: HashMap<Bytes, Listeners>,
    shards: HashMap<Bytes, Listeners>,
}

impl Tables {
    fn of(&mut self, kind: Kind) -> &mut HashMap<Bytes, Listeners> {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard => &mut self.shards,
        }
    }

    fn get(&self, kind: Kind) -> &HashMap<Bytes, Listeners> {
        match kind {
            Kind::Channel => &self.channels,
            Kind::Pattern => &self.patterns,
            Kind::Shard => &self.shards,
        }
    }
}

/// Every subscription on the server. One per server, in `Shared`.
#[derive(Debug, Default)]
pub(crate) struct PubSub {
    tables: RwLock<Tables>,
}

impl PubSub {
    /// Adds `sub` to a channel's (or pattern's) listeners.
    pub(crate) fn subscribe(&self, sub: &Arc<Subscriber>, name: Bytes, kind: Kind) {
        let mut t = self.tables.write().unwrap_or_else(|p| p.into_inner());
        t.of(kind)
            .entry(name)
            .or_default()
            .insert(sub.client.id(), sub.clone());
    }

    /// Removes client `id` from a channel's (or pattern's) listeners.
    pub(crate) fn unsubscribe(&self, id: u64, name: &Bytes, kind: Kind) {
        let mut t = self.tables.write().unwrap_or_else(|p| p.into_inner());
        let table = t.of(kind);
        if let Some(listeners) = table.get_mut(name) {
            listeners.remove(&id);
            if listeners.is_empty() {
                table.remove(name);
            }
        }
    }

    /// Sends `payload` to every subscriber of `channel` and of every pattern
    /// matching it; the number of messages queued. Never waits: a
    /// subscriber over `limit` is dropped instead.
    pub(crate) fn publish(
        &self,
        channel: &Bytes,
        payload: &Bytes,
        limit: OutputBufferLimit,
    ) -> usize {
        self.publish_to(false, channel, payload, limit)
    }

    /// `SPUBLISH`: sends `payload` to every subscriber of the shard
    /// channel (patterns never match one); the number of messages queued.
    pub(crate) fn publish_shard(
        &self,
        channel: &Bytes,
        payload: &Bytes,
        limit: OutputBufferLimit,
    ) -> usize {
        self.publish_to(true, channel, payload, limit)
    }

    fn publish_to(
        &self,
        shard: bool,
        channel: &Bytes,
        payload: &Bytes,
        limit: OutputBufferLimit,
    ) -> usize {
        let t = self.tables.read().unwrap_or_else(|p| p.into_inner());
        let direct = if shard { &t.shards } else { &t.channels };
        let mut receivers = 0;
        if let Some(listeners) = direct.get(channel) {
            for sub in listeners.values() {
                let msg = Message::published(None, channel, payload, shard);
                receivers += usize::from(sub.deliver(msg, limit));
            }
        }
        let patterns = t.patterns.iter().filter(|_| !shard);
        for (pattern, listeners) in patterns {
            if !ferrum_store::glob::glob_match(pattern, channel, false) {
                continue;
            }
            for sub in listeners.values() {
                let msg = Message::published(Some(pattern.clone()), channel, payload, false);
                receivers += usize::from(sub.deliver(msg, limit));
            }
        }
        receivers
    }

    /// `PUBSUB CHANNELS [pattern]` (`kind` `Channel`) and `PUBSUB
    /// SHARDCHANNELS [pattern]` (`Shard`): channels with at least one
    /// subscriber.
    pub(crate) fn channels(&self, kind: Kind, pattern: Option<&[u8]>) -> Vec<Bytes> {
        let t = self.tables.read().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<Bytes> = t
            .get(kind)
            .keys()
            .filter(|c| pattern.is_none_or(|p| ferrum_store::glob::glob_match(p, c, false)))
            .cloned()
            .collect();
        out.sort_unstable();
        out
    }

    /// `PUBSUB NUMSUB` (`kind` `Channel`) and `SHARDNUMSUB` (`Shard`):
    /// subscribers of one channel (patterns not counted).
    pub(crate) fn numsub(&self, kind: Kind, channel: &[u8]) -> usize {
        let t = self.tables.read().unwrap_or_else(|p| p.into_inner());
        t.get(kind).get(channel).map_or(0, HashMap::len)
    }

    /// Everything client `id` listens to.
    pub(crate) fn subscriptions_of(&self, id: u64) -> Vec<(Bytes, Kind)> {
        let t = self.tables.read().unwrap_or_else(|p| p.into_inner());
        [Kind::Channel, Kind::Pattern, Kind::Shard]
            .into_iter()
            .flat_map(|kind| {
                t.get(kind)
                    .iter()
                    .filter(|(_, listeners)| listeners.contains_key(&id))
                    .map(move |(name, _)| (name.clone(), kind))
            })
            .collect()
    }

    /// `PUBSUB NUMPAT`: distinct patterns with at least one subscriber.
    pub(crate) fn numpat(&self) -> usize {
        let t = self.tables.read().unwrap_or_else(|p| p.into_inner());
        t.patterns.len()
    }
}

/// A connection's own view of its subscriptions, owned by its task.
#[derive(Debug, Default)]
pub(crate) struct Subscriptions {
    /// Channels subscribed to, sorted (so `UNSUBSCRIBE` with no argument
    /// answers in a stable order).
    pub(crate) channels: BTreeSet<Bytes>,
    /// Patterns subscribed to, sorted.
    pub(crate) patterns: BTreeSet<Bytes>,
    /// Shard channels subscribed to, sorted.
    pub(crate) shards: BTreeSet<Bytes>,
    sender: Option<Arc<Subscriber>>,
    rx: Option<mpsc::UnboundedReceiver<Message>>,
}

impl Subscriptions {
    /// The count Redis reports in confirmations: channels plus patterns,
    /// or shard channels for `SSUBSCRIBE` and `SUNSUBSCRIBE`.
    pub(crate) fn count(&self, kind: Kind) -> usize {
        match kind {
            Kind::Shard => self.shards.len(),
            _ => self.channels.len() + self.patterns.len(),
        }
    }

    /// The names subscribed to of one kind.
    pub(crate) fn set(&mut self, kind: Kind) -> &mut BTreeSet<Bytes> {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard => &mut self.shards,
        }
    }

    /// Whether the connection is in RESP2 subscribed mode, where only the
    /// Pub/Sub commands, PING, QUIT and RESET are allowed.
    pub(crate) fn restricts(&self, protocol: Protocol) -> bool {
        protocol == Protocol::Resp2 && self.subscribed()
    }

    /// Whether the connection listens to anything.
    pub(crate) fn subscribed(&self) -> bool {
        !(self.channels.is_empty() && self.patterns.is_empty() && self.shards.is_empty())
    }

    /// The connection's subscriber, created on first use.
    pub(crate) fn subscriber(&mut self, client: &Arc<impl Client + 'static>) -> Arc<Subscriber> {
        if let Some(s) = &self.sender {
            return s.clone();
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let s = Arc::new(Subscriber {
            client: client.clone(),
            tx,
            pending_bytes: AtomicUsize::new(0),
            unwritten: AtomicUsize::new(0),
            over_soft_since: AtomicU64::new(0),
            created: Instant::now(),
            overflowed: AtomicBool::new(false),
        });
        self.sender = Some(s.clone());
        self.rx = Some(rx);
        s
    }

    /// Whether this connection broke its output limit.
    pub(crate) fn overflowed(&self) -> bool {
        self.sender.as_ref().is_some_and(|s| s.overflowed())
    }

    /// When the queue, over the soft limit of `limit`, breaks it if no
    /// message comes to check it (Redis checks in its cron); `None` when
    /// it is under.
    pub(crate) fn soft_deadline(&self, limit: OutputBufferLimit) -> Option<Instant> {
        self.sender.as_ref()?.soft_deadline(limit)
    }

    /// Checks the queue against `limit` with no new message, and closes
    /// the connection if it breaks it; whether it did.
    pub(crate) fn recheck(&self, limit: OutputBufferLimit) -> bool {
        let Some(s) = &self.sender else {
            return false;
        };
        let broke = s.breaks(limit, 0);
        if broke {
            s.overflow();
        }
        broke
    }

    /// Waits for the next message; never completes for a connection that
    /// never subscribed.
    pub(crate) async fn recv(&mut self) -> Message {
        let Some(rx) = &mut self.rx else {
            return std::future::pending().await;
        };
        // The subscriber holds a sender as long as `self` lives, so the
        // channel cannot close under us.
        match rx.recv().await {
            Some(msg) => {
                self.taken(&msg);
                msg
            }
            None => std::future::pending().await,
        }
    }

    /// Tells the queue how many bytes the connection holds unwritten, so
    /// that the `pubsub` limit weighs the whole output, as Redis's does.
    pub(crate) fn set_unwritten(&self, bytes: usize) {
        if let Some(s) = &self.sender {
            s.unwritten.store(bytes, Ordering::Relaxed);
        }
    }

    /// Whether messages are queued (one relaxed load: every queued message
    /// counts at least 40 bytes in `pending_bytes` until taken).
    pub(crate) fn has_pending(&self) -> bool {
        self.sender.as_ref().is_some_and(|s| s.pending_bytes() > 0)
    }

    /// The next message if one is queued already.
    pub(crate) fn try_recv(&mut self) -> Option<Message> {
        let msg = self.rx.as_mut()?.try_recv().ok()?;
        self.taken(&msg);
        Some(msg)
    }

    fn taken(&self, msg: &Message) {
        if let Some(s) = &self.sender {
            s.pending_bytes.fetch_sub(msg.cost(), Ordering::Relaxed);
        }
    }

    /// Leaves every channel and pattern (`RESET`, connection close).
    pub(crate) fn clear(&mut self, pubsub: &PubSub, id: u64) {
        for kind in [Kind::Channel, Kind::Pattern, Kind::Shard] {
            for name in std::mem::take(self.set(kind)) {
                pubsub.unsubscribe(id, &name, kind);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client that only counts what the queue asks of it.
    #[derive(Debug, Default)]
    struct TestClient {
        closed: AtomicBool,
    }

    impl Client for TestClient {
        fn id(&self) -> u64 {
            1
        }
        fn wake(&self) {}
        fn close(&self) {
            self.closed.store(true, Ordering::Relaxed);
        }
    }

    fn client() -> Arc<TestClient> {
        Arc::new(TestClient::default())
    }

    #[tokio::test]
    async fn publish_reaches_channels_and_patterns() {
        let ps = PubSub::default();
        let mut subs = Subscriptions::default();
        let s = subs.subscriber(&client());
        ps.subscribe(&s, Bytes::from_static(b"news"), Kind::Channel);
        ps.subscribe(&s, Bytes::from_static(b"n*"), Kind::Pattern);
        let n = ps.publish(
            &Bytes::from_static(b"news"),
            &Bytes::from_static(b"hi"),
            OutputBufferLimit::default(),
        );
        assert_eq!(n, 2);
        assert!(subs.recv().await.pattern.is_none());
        assert_eq!(
            subs.try_recv().and_then(|m| m.pattern),
            Some(Bytes::from_static(b"n*"))
        );
        assert_eq!(
            ps.channels(Kind::Channel, None),
            [Bytes::from_static(b"news")]
        );
        assert_eq!((ps.numsub(Kind::Channel, b"news"), ps.numpat()), (1, 1));
        ps.unsubscribe(s.client.id(), &Bytes::from_static(b"news"), Kind::Channel);
        assert_eq!(ps.numsub(Kind::Channel, b"news"), 0);
    }

    #[tokio::test]
    async fn shard_channels_are_a_namespace_of_their_own() {
        let ps = PubSub::default();
        let mut subs = Subscriptions::default();
        let s = subs.subscriber(&client());
        let (chan, hi) = (Bytes::from_static(b"orders"), Bytes::from_static(b"hi"));
        ps.subscribe(&s, chan.clone(), Kind::Shard);
        let limit = OutputBufferLimit::default();
        assert_eq!(ps.publish(&chan, &hi, limit), 0);
        assert_eq!(ps.publish_shard(&chan, &hi, limit), 1);
        let frame = subs.recv().await.into_frame(Protocol::Resp2, true);
        let expected = ["smessage", "orders", "hi"].map(Frame::bulk).to_vec();
        assert_eq!(frame, Some(Frame::Push(expected)));
        assert_eq!(ps.channels(Kind::Shard, None), std::slice::from_ref(&chan));
        assert_eq!(ps.subscriptions_of(s.client.id()), [(chan, Kind::Shard)]);
    }

    #[test]
    fn a_full_queue_overflows_instead_of_growing() {
        let ps = PubSub::default();
        let mut subs = Subscriptions::default();
        let c = client();
        let s = subs.subscriber(&c);
        ps.subscribe(&s, Bytes::from_static(b"c"), Kind::Channel);
        let limit = OutputBufferLimit {
            hard_bytes: 1000,
            soft_bytes: 0,
            soft_seconds: 0,
        };
        let payload = Bytes::from(vec![b'x'; 100]);
        let queued: usize = (0..100)
            .map(|_| ps.publish(&Bytes::from_static(b"c"), &payload, limit))
            .sum();
        assert!(queued > 0 && queued < 10, "{queued} queued");
        assert!(subs.overflowed());
        assert!(c.closed.load(Ordering::Relaxed), "the client is closed");
        assert!(s.pending_bytes.load(Ordering::Relaxed) <= 1000);
    }
}
