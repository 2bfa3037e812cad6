//! Connected clients: each connection's own state, and the registry that
//! `CLIENT LIST`, `CLIENT INFO` and `CLIENT KILL` read.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use ferrum_proto::Protocol;
use ferrum_store::Store;
use tokio::time::Instant;

use crate::acl::User;
use crate::pubsub::Subscriptions;

/// A connection's private state, owned by its task.
#[derive(Debug)]
pub(crate) struct ConnState {
    /// The registry's handle for this client.
    pub(crate) handle: Arc<ClientHandle>,
    /// Selected database.
    pub(crate) db: usize,
    /// Whether `AUTH` succeeded (or no password is set).
    pub(crate) authenticated: bool,
    /// The ACL user commands run as (the registry's copy is for other
    /// connections: `CLIENT LIST`, `CLIENT KILL USER`).
    pub(crate) user: Arc<User>,
    /// RESP version for replies.
    pub(crate) protocol: Protocol,
    /// Commands queued since `MULTI`, or `None` outside a transaction.
    pub(crate) multi: Option<Vec<Vec<Bytes>>>,
    /// The bytes of the commands in `multi` (see [`ConnState::queue`]).
    multi_bytes: usize,
    /// A command failed to queue; `EXEC` must abort.
    pub(crate) multi_failed: bool,
    /// `WATCH`ed keys: database, key, and the version seen (`None` if absent).
    pub(crate) watched: Vec<(usize, Bytes, Option<u64>)>,
    /// Close after the reply is written (`QUIT`, `CLIENT KILL` of self).
    pub(crate) closing: bool,
    /// With `closing`: a reply was too large for the output limit, so the
    /// connection closes without writing what is pending
    /// (`Ctx::reply_fits`).
    pub(crate) reply_too_large: bool,
    /// Channels and patterns subscribed to, and the message queue.
    pub(crate) subs: Subscriptions,
    /// `CLIENT REPLY OFF`: replies are dropped until `CLIENT REPLY ON`.
    pub(crate) reply_off: bool,
    /// `SYNC` made this connection a replica: it receives the replication
    /// stream and no replies.
    pub(crate) replica: bool,
    /// The port a replica said it listens on (`REPLCONF listening-port`,
    /// sent before `SYNC`).
    pub(crate) listening_port: Option<u16>,
    /// This is the link to the primary this server follows: its writes
    /// apply even though clients' are refused.
    pub(crate) primary_link: bool,
    /// Replies still to drop after `CLIENT REPLY SKIP` (its own and the
    /// next command's).
    pub(crate) reply_skip: u8,
    /// Whether `CLIENT TRACKING` is on (the settings are in
    /// `Shared::tracking`).
    pub(crate) tracking: bool,
    /// What the client's BCAST prefixes cost, while `tracking` is on
    /// (see [`ConnState::track_prefixes`]).
    tracking_prefix_bytes: usize,
    /// The end of the previous command of the current batch: the next
    /// command's clock reading, so that a pipeline reads the clock once a
    /// command instead of twice. `None` after the connection awaited
    /// anything (see [`ConnState::clock_stale`]).
    pub(crate) clock_at: Option<Instant>,
    /// `ASKING` was the previous command (or was sent inside the current
    /// `MULTI`): the next command may use a slot this node imports.
    pub(crate) asking: bool,
    /// `READONLY`: kept for `READWRITE` and clients that check it; with no
    /// replicas it routes nothing differently.
    pub(crate) readonly: bool,
}

impl ConnState {
    /// Forgets the chained clock reading: the next command reads the
    /// clock itself. Called whenever the connection has awaited (input,
    /// a flush, a wake-up), since time passed that the chain did not see.
    pub(crate) fn clock_stale(&mut self) {
        self.clock_at = None;
    }

    /// Queues a command inside `MULTI`, counting its bytes.
    pub(crate) fn queue(&mut self, args: &[Bytes]) {
        let queue = self.multi.get_or_insert_default();
        if queue.is_empty() {
            self.multi_bytes = 0;
        }
        self.multi_bytes += args.iter().map(|a| a.len() + ARG_BYTES).sum::<usize>();
        queue.push(args.to_vec());
    }

    /// Counts the client's BCAST prefixes (all of them, after `CLIENT
    /// TRACKING on` added some) in its memory, as Redis counts them.
    pub(crate) fn track_prefixes(&mut self, prefixes: &[Bytes]) {
        self.tracking_prefix_bytes = prefixes.iter().map(|p| p.len() + ENTRY_BYTES).sum();
    }

    /// What the state holds beside the connection's buffers, as Redis's
    /// client memory counts it: queued commands (`multi-mem`), watched
    /// keys, subscriptions and tracking prefixes, each entry with a fixed
    /// overhead.
    pub(crate) fn state_bytes(&self) -> usize {
        let multi = if self.multi.is_some() {
            self.multi_bytes
        } else {
            0
        };
        let watched: usize = self.watched.iter().map(|w| w.1.len() + ENTRY_BYTES).sum();
        // Channels and patterns count together, shard channels apart.
        let subs = self.subs.count(crate::pubsub::Kind::Channel)
            + self.subs.count(crate::pubsub::Kind::Shard);
        let prefixes = if self.tracking {
            self.tracking_prefix_bytes
        } else {
            0
        };
        multi + watched + subs * ENTRY_BYTES + prefixes
    }

    /// Runs the connection's commands as `user` from now on.
    pub(crate) fn set_user(&mut self, user: Arc<User>) {
        *self.handle.user.lock().unwrap_or_else(|p| p.into_inner()) = user.clone();
        self.user = user;
    }

    /// A fresh connection's state, as the user its handle was registered
    /// with.
    pub(crate) fn new(handle: Arc<ClientHandle>, authenticated: bool) -> ConnState {
        let user = handle.user();
        // Every connection has its message queue from the start, so that
        // `CLIENT TRACKING ... REDIRECT id` can reach any client.
        let mut subs = Subscriptions::default();
        let inbox = subs.subscriber(&handle);
        *handle.inbox.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::downgrade(&inbox));
        ConnState {
            handle,
            db: 0,
            authenticated,
            user,
            protocol: Protocol::Resp2,
            multi: None,
            multi_bytes: 0,
            multi_failed: false,
            watched: Vec::new(),
            closing: false,
            reply_too_large: false,
            subs,
            reply_off: false,
            replica: false,
            listening_port: None,
            primary_link: false,
            reply_skip: 0,
            tracking: false,
            tracking_prefix_bytes: 0,
            clock_at: None,
            asking: false,
            readonly: false,
        }
    }
}

/// What the registry knows of a client; shared between its task and
/// `CLIENT` commands of other connections.
#[derive(Debug)]
pub(crate) struct ClientHandle {
    /// `CLIENT ID`.
    pub(crate) id: u64,
    /// Peer address.
    pub(crate) addr: SocketAddr,
    /// Local address.
    pub(crate) laddr: SocketAddr,
    /// `CLIENT SETNAME`.
    pub(crate) name: Mutex<Option<Bytes>>,
    /// `CLIENT SETINFO LIB-NAME`.
    pub(crate) lib_name: Mutex<Option<Bytes>>,
    /// `CLIENT SETINFO LIB-VER`.
    pub(crate) lib_ver: Mutex<Option<Bytes>>,
    /// Database, mirrored for `CLIENT LIST`.
    pub(crate) db: AtomicUsize,
    /// RESP version, mirrored for `CLIENT LIST`.
    pub(crate) resp: AtomicUsize,
    /// When the connection was accepted.
    pub(crate) created: Instant,
    /// Milliseconds after `created` of the last command.
    pub(crate) last_active_ms: AtomicU64,
    /// The last command's row in `COMMANDS`, or `usize::MAX` before any.
    pub(crate) last_cmd: AtomicUsize,
    /// The last container command's subcommand, lower case.
    last_sub: Mutex<Option<Bytes>>,
    /// Raised to close the connection (`CLIENT KILL`, shutdown).
    pub(crate) kill: EndFlag,
    /// Channels subscribed to, mirrored for `CLIENT LIST`.
    pub(crate) subs: AtomicUsize,
    /// Patterns subscribed to, mirrored for `CLIENT LIST`.
    pub(crate) psubs: AtomicUsize,
    /// Shard channels subscribed to, mirrored for `CLIENT LIST`.
    pub(crate) ssubs: AtomicUsize,
    /// Whether the client is blocked in a blocking command.
    pub(crate) blocked: AtomicBool,
    /// The connection's message queue (Pub/Sub and client-side caching),
    /// for other connections to send to by client id.
    pub(crate) inbox: Mutex<Option<std::sync::Weak<crate::pubsub::Subscriber>>>,
    /// Bytes in the query buffer while a command runs (the command itself
    /// included, as Redis counts them); between commands, the bytes of an
    /// incomplete one, as of the last read.
    pub(crate) qbuf: AtomicUsize,
    /// Reply bytes a write is waiting to hand to the socket; 0 when none
    /// is waiting.
    pub(crate) omem: AtomicUsize,
    /// The capacity of the connection's read and write buffers and the
    /// bytes of a partial request the decoder holds, as of its last read.
    pub(crate) buffers: AtomicUsize,
    /// What the connection's state holds beside its buffers: queued
    /// `MULTI` commands, `WATCH`ed keys, subscriptions (see
    /// [`ConnState::state_bytes`]), as of its last read.
    pub(crate) state_bytes: AtomicUsize,
    /// `CLIENT NO-EVICT on`: `maxmemory-clients` never evicts it.
    pub(crate) no_evict: AtomicBool,
    /// What [`publish_memory`](Self::publish_memory) last told the store
    /// the connection holds.
    published: AtomicUsize,
    /// The ACL user the connection runs as.
    user: Mutex<Arc<User>>,
}

impl ClientHandle {
    /// The ACL user the client runs as.
    pub(crate) fn user(&self) -> Arc<User> {
        self.user.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Marks activity at `at` (the command's clock reading), by the command
    /// at `COMMANDS[cmd]` and, for container commands, its subcommand.
    pub(crate) fn touch(&self, cmd: usize, sub: Option<&Bytes>, at: Instant) {
        let ms = at.saturating_duration_since(self.created).as_millis() as u64;
        self.last_active_ms.store(ms, Ordering::Relaxed);
        if let Some(sub) = sub {
            let sub = Bytes::from(sub.to_ascii_lowercase());
            *self.last_sub.lock().unwrap_or_else(|p| p.into_inner()) = Some(sub);
        }
        self.last_cmd.store(cmd, Ordering::Relaxed);
    }

    /// The last command as `CLIENT LIST` names it (`get`, `client|list`).
    fn last_command(&self) -> String {
        let Some(spec) = crate::command::COMMANDS.get(self.last_cmd.load(Ordering::Relaxed)) else {
            return "NULL".to_owned();
        };
        if spec.has(crate::command::flag::CONTAINER) {
            if let Some(sub) = self
                .last_sub
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .as_ref()
            {
                return format!("{}|{}", spec.name, String::from_utf8_lossy(sub));
            }
        }
        spec.name.to_owned()
    }

    /// Output not yet written, as `CLIENT LIST`'s `omem`: replies waiting
    /// on the socket and messages queued for the connection.
    pub(crate) fn output_bytes(&self) -> usize {
        let queued = self
            .inbox
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .and_then(std::sync::Weak::upgrade)
            .map_or(0, |s| s.pending_bytes());
        self.omem.load(Ordering::Relaxed) + queued
    }

    /// The connection's memory, as `CLIENT LIST`'s `tot-mem` and `INFO`'s
    /// `mem_clients_normal` count it: its fixed state, its buffers, and
    /// its unwritten output.
    pub(crate) fn memory(&self) -> usize {
        CONNECTION_BYTES
            + self.buffers.load(Ordering::Relaxed)
            + self.state_bytes.load(Ordering::Relaxed)
            + self.output_bytes()
    }

    /// What [`publish_memory`](Self::publish_memory) last counted.
    pub(crate) fn published_memory(&self) -> usize {
        self.published.load(Ordering::Relaxed)
    }

    /// Tells the store and the registry what the connection holds now
    /// ([`memory`](Self::memory)), so that `used_memory` counts it (as
    /// Redis counts its normal clients) and `maxmemory-clients` weighs it.
    pub(crate) fn publish_memory(&self, store: &Store, clients: &ClientRegistry) {
        self.republish(store, clients, self.memory());
    }

    /// Takes the connection's bytes back from the store and the registry
    /// as it closes (or is evicted).
    pub(crate) fn withdraw_memory(&self, store: &Store, clients: &ClientRegistry) {
        self.republish(store, clients, 0);
    }

    fn republish(&self, store: &Store, clients: &ClientRegistry, now: usize) {
        let before = self.published.swap(now, Ordering::Relaxed);
        // Most reads leave the figure as it was: the shared sums, which
        // every connection writes, are then left alone.
        if before != now {
            store.add_outside_bytes(before, now);
            clients
                .memory
                .fetch_add(now.wrapping_sub(before), Ordering::Relaxed);
        }
    }

    /// The client's line in `CLIENT LIST` / `CLIENT INFO`, with Redis's
    /// field names and order (fields FerrumKV has no notion of read 0).
    pub(crate) fn info_line(&self) -> String {
        let age = self.created.elapsed();
        let idle = age.as_millis() as u64
            - self
                .last_active_ms
                .load(Ordering::Relaxed)
                .min(age.as_millis() as u64);
        let text = |m: &Mutex<Option<Bytes>>| {
            let v = m.lock().unwrap_or_else(|p| p.into_inner()).clone();
            String::from_utf8_lossy(&v.unwrap_or_default()).into_owned()
        };
        let name = text(&self.name);
        let (subs, psubs, ssubs) = (
            self.subs.load(Ordering::Relaxed),
            self.psubs.load(Ordering::Relaxed),
            self.ssubs.load(Ordering::Relaxed),
        );
        let mut flags = String::new();
        if subs + psubs + ssubs > 0 {
            flags.push('P');
        }
        if self.blocked.load(Ordering::Relaxed) {
            flags.push('b');
        }
        if self.no_evict.load(Ordering::Relaxed) {
            flags.push('e');
        }
        if flags.is_empty() {
            flags.push('N');
        }
        format!(
            "id={} addr={} laddr={} fd=0 name={} age={} idle={} flags={} db={} sub={} psub={} ssub={} multi=-1 qbuf={} qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem={} tot-mem={} events=r cmd={} user={} redir=-1 resp={} lib-name={} lib-ver={}",
            self.id,
            self.addr,
            self.laddr,
            name,
            age.as_secs(),
            idle / 1000,
            flags,
            self.db.load(Ordering::Relaxed),
            subs,
            psubs,
            ssubs,
            self.qbuf.load(Ordering::Relaxed),
            self.output_bytes(),
            self.memory(),
            self.last_command(),
            self.user().name,
            self.resp.load(Ordering::Relaxed),
            text(&self.lib_name),
            text(&self.lib_ver),
        )
    }
}

/// What a connection costs besides its buffers: its task, its state and
/// its registry entry, near enough.
const CONNECTION_BYTES: usize = 2048;

/// What a queued command's argument costs beside its bytes (its `Bytes`
/// handle and vector slot), near enough.
const ARG_BYTES: usize = 32;

/// What a watched key or a subscription costs beside its name (its list
/// entry here and in the shared index), near enough.
const ENTRY_BYTES: usize = 64;

/// Every connected client, by id.
#[derive(Debug, Default)]
pub(crate) struct ClientRegistry {
    next_id: AtomicU64,
    clients: Mutex<BTreeMap<u64, Arc<ClientHandle>>>,
    /// The sum of the clients' published memory, which
    /// `maxmemory-clients` bounds.
    memory: AtomicUsize,
}

impl ClientRegistry {
    /// Registers a new connection, running as `user`.
    pub(crate) fn register(
        &self,
        addr: SocketAddr,
        laddr: SocketAddr,
        user: Arc<User>,
    ) -> Arc<ClientHandle> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let handle = Arc::new(ClientHandle {
            id,
            addr,
            laddr,
            name: Mutex::new(None),
            lib_name: Mutex::new(None),
            lib_ver: Mutex::new(None),
            db: AtomicUsize::new(0),
            resp: AtomicUsize::new(2),
            created: Instant::now(),
            last_active_ms: AtomicU64::new(0),
            last_cmd: AtomicUsize::new(usize::MAX),
            last_sub: Mutex::new(None),
            kill: EndFlag::default(),
            subs: AtomicUsize::new(0),
            psubs: AtomicUsize::new(0),
            ssubs: AtomicUsize::new(0),
            blocked: AtomicBool::new(false),
            inbox: Mutex::new(None),
            qbuf: AtomicUsize::new(0),
            omem: AtomicUsize::new(0),
            buffers: AtomicUsize::new(0),
            state_bytes: AtomicUsize::new(0),
            no_evict: AtomicBool::new(false),
            published: AtomicUsize::new(0),
            user: Mutex::new(user),
        });
        self.lock().insert(id, handle.clone());
        handle
    }

    /// Removes a closed connection.
    pub(crate) fn unregister(&self, id: u64) {
        self.lock().remove(&id);
    }

    /// What the connected clients hold, as last published.
    pub(crate) fn memory(&self) -> usize {
        self.memory.load(Ordering::Relaxed)
    }

    /// How many clients are connected.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    /// The client with this id, if connected.
    pub(crate) fn get(&self, id: u64) -> Option<Arc<ClientHandle>> {
        self.lock().get(&id).cloned()
    }

    /// The message queue of client `id` (Pub/Sub messages, tracking
    /// invalidations, `MONITOR` lines), if it is connected.
    pub(crate) fn inbox(&self, id: u64) -> Option<Arc<crate::pubsub::Subscriber>> {
        let handle = self.get(id)?;
        let weak = handle
            .inbox
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()?;
        weak.upgrade()
    }

    /// A snapshot of every client, by id.
    pub(crate) fn all(&self) -> Vec<Arc<ClientHandle>> {
        self.lock().values().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Arc<ClientHandle>>> {
        self.clients.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl crate::pubsub::Client for ClientHandle {
    fn id(&self) -> u64 {
        self.id
    }

    fn wake(&self) {
        self.kill.wake();
    }

    fn close(&self) {
        self.kill.raise(End::Killed);
    }
}

/// What ends a connection from outside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum End {
    /// `CLIENT KILL`, or a Pub/Sub queue over its hard limit.
    Killed = 1,
    /// The server shuts down.
    Shutdown = 2,
}

/// Tells a connection's task to end, and wakes it. The task polls it in
/// every wait of its life (input, output, pause, blocking), so polling is
/// cheap: an atomic load and, while nothing happened, keeping the task's
/// waker under an uncontended lock. A `tokio::sync::Notify` waited on with
/// a fresh `notified()` per read cost a waiter registration and removal
/// (a lock and a list edit each) on every request.
#[derive(Debug, Default)]
pub(crate) struct EndFlag {
    /// 0, or the `End` raised first.
    ended: AtomicU8,
    waker: Mutex<Option<Waker>>,
}

impl EndFlag {
    /// Ends the connection for `why`, unless it already ends; wakes its
    /// task.
    pub(crate) fn raise(&self, why: End) {
        let _ = self
            .ended
            .compare_exchange(0, why as u8, Ordering::AcqRel, Ordering::Acquire);
        if let Some(w) = self.lock().take() {
            w.wake();
        }
    }

    /// Wakes the task without ending it: its message queue, which it
    /// waits on through this flag's waker, has something (see
    /// `Subscriber::deliver`).
    pub(crate) fn wake(&self) {
        if let Some(w) = self.lock().take() {
            w.wake();
        }
    }

    /// What ended the connection, if anything did.
    pub(crate) fn ended(&self) -> Option<End> {
        match self.ended.load(Ordering::Acquire) {
            1 => Some(End::Killed),
            2 => Some(End::Shutdown),
            _ => None,
        }
    }

    /// Ready once raised; until then, `cx`'s task is woken by the raise.
    pub(crate) fn poll_ended(&self, cx: &mut Context<'_>) -> Poll<End> {
        if let Some(end) = self.ended() {
            return Poll::Ready(end);
        }
        {
            let mut waker = self.lock();
            match &*waker {
                Some(w) if w.will_wake(cx.waker()) => {}
                _ => *waker = Some(cx.waker().clone()),
            }
        }
        // A raise between the load and the registration found no waker.
        self.ended().map_or(Poll::Pending, Poll::Ready)
    }

    /// Resolves once raised.
    pub(crate) fn wait(&self) -> impl std::future::Future<Output = End> + '_ {
        std::future::poll_fn(|cx| self.poll_ended(cx))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Waker>> {
        self.waker.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;
    use std::task::Wake;

    use super::*;

    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn a_raise_wakes_the_waiting_task_once_and_the_first_reason_stays() {
        let flag = EndFlag::default();
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        assert_eq!(flag.poll_ended(&mut cx), Poll::Pending);
        // Polling again with the same waker keeps one registration.
        assert_eq!(flag.poll_ended(&mut cx), Poll::Pending);
        flag.raise(End::Killed);
        assert_eq!(count.0.load(Ordering::Relaxed), 1);
        flag.raise(End::Shutdown);
        assert_eq!(count.0.load(Ordering::Relaxed), 1, "no waker left to wake");
        assert_eq!(flag.poll_ended(&mut cx), Poll::Ready(End::Killed));
        assert_eq!(flag.ended(), Some(End::Killed));
    }
}
