//! One client connection: read what is there, run every complete command,
//! write all the replies with one syscall, repeat; block when a blocking
//! command says so; deliver Pub/Sub messages as they arrive.
//!
//! Batching is what makes pipelining fast: a `redis-benchmark -P 16` burst
//! arrives in one read and leaves in one write. The read buffer is bounded by
//! `client-query-buffer-limit`, the write buffer by `client-output-buffer-limit
//! normal` (see `crate::obuf`). A client that stops reading stops being read
//! from (its task waits in the write), and that write still gives way to
//! `CLIENT KILL` (how an overflowing subscriber is closed), to the soft
//! output limit's seconds and, after a grace period, to shutdown, so none
//! of them can grow the server's memory or hold up its exit.
//!
//! A blocked client (see `crate::blocking`) first gets every reply before
//! its blocking command, then waits with no lock held on: a wake-up for one
//! of its keys, its timeout, `CLIENT UNBLOCK`, `CLIENT KILL`, shutdown, and
//! its own socket, where EOF means it is gone and is cleaned up at once.
//! Commands pipelined after the blocking one run only once it is served.

use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use ferrum_proto::{Frame, Limits, RespCodec};
use tokio::io::{AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::time::Instant;
use tokio_util::codec::Encoder;
use tokio_util::sync::CancellationToken;

use crate::client::{ClientHandle, ConnState, End};
use crate::cmd::{self, BlockSpec, Reply};
use crate::obuf::{OutputBuffer, FLUSH_THRESHOLD};
use crate::pubsub::Subscriptions;
use crate::shared::Shared;
use crate::stream::ClientStream;

/// The argument vector is reused from one command to the next, up to this
/// many arguments of capacity.
const MAX_KEPT_ARGS: usize = 1024;

/// How often a subscriber whose write waits checks its queue against the
/// soft limit, as Redis's `clientsCron` does at its default `hz` of 10.
const QUEUE_CHECK_TICK: Duration = Duration::from_millis(100);

/// A connection's read and write buffers' size, and what the read buffer
/// grows by when nearly full.
const BUFFER: usize = 16 * 1024;

/// An empty read buffer larger than this (a large command grew it) is
/// replaced by a new one of [`BUFFER`] bytes before the next read; the
/// write buffer, which is only ever cleared (never split), is replaced as
/// soon as it is larger than [`BUFFER`], so that the replies and messages
/// of one batch do not keep counting in `used_memory` once written.
const MAX_IDLE_BUFFER: usize = 4 * BUFFER;

/// How long a pending write may still take once shutdown began.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// Why a batch of pipelined commands stopped early.
enum Stop {
    /// A blocking command found nothing to serve.
    Block(BlockSpec),
    /// `CLIENT PAUSE` holds this command (still in the connection's
    /// argument vector).
    Paused,
}

#[derive(Debug)]
pub(crate) enum Closed {
    /// The peer closed, sent QUIT, or was killed.
    Normally,
    /// A protocol error (already reported to the client).
    Protocol,
    /// Idle longer than `timeout`.
    Idle,
    /// The query buffer grew past `client-query-buffer-limit`.
    QueryBufferLimit,
    /// Replies broke `client-output-buffer-limit normal`, or a subscriber
    /// fell behind past its `pubsub` class.
    OutputBufferLimit,
    /// The socket failed.
    Io(std::io::Error),
    /// The TLS handshake failed or timed out.
    Handshake(std::io::Error),
}

/// Serves one connection, its handshake done, until it closes, then drops
/// its subscriptions and closes the stream.
pub(crate) async fn serve<S: ClientStream>(
    shared: Arc<Shared>,
    socket: S,
    handle: Arc<ClientHandle>,
    shutdown: CancellationToken,
) -> Closed {
    let (limits, idle_timeout, qbuf_limit) = {
        let c = shared.config();
        let limits = Limits {
            max_bulk_len: c.proto_max_bulk_len_bytes as usize,
            ..Limits::default()
        };
        let timeout = (!c.timeout.is_zero()).then_some(c.timeout);
        (limits, timeout, c.client_query_buffer_limit_bytes as usize)
    };
    let state = ConnState::new(handle.clone(), !shared.requires_auth());
    let mut c = Connection {
        shared,
        socket,
        ended: EndSignal {
            handle: handle.clone(),
            shutdown,
        },
        handle,
        codec: RespCodec::server(limits.authenticated(state.authenticated)),
        rbuf: BytesMut::with_capacity(BUFFER),
        wbuf: BytesMut::with_capacity(BUFFER),
        args: Vec::new(),
        state,
        idle_timeout,
        qbuf_limit,
        obuf: OutputBuffer::new(),
    };
    let closed = c.run().await;
    let id = c.handle.id;
    c.state.subs.clear(&c.shared.pubsub, id);
    c.shared.tracking.disable(id);
    c.shared.monitors.remove(id);
    if !matches!(closed, Closed::Io(_)) {
        c.socket.close().await;
    }
    closed
}

/// Replaces an empty buffer larger than `max` bytes by a new one of
/// [`BUFFER`] bytes.
fn shrink_if_idle(buf: &mut BytesMut, max: usize) {
    if buf.is_empty() && buf.capacity() > max {
        *buf = BytesMut::with_capacity(BUFFER);
    }
}

/// A connection's task state.
struct Connection<S> {
    shared: Arc<Shared>,
    socket: S,
    handle: Arc<ClientHandle>,
    ended: EndSignal,
    codec: RespCodec,
    rbuf: BytesMut,
    wbuf: BytesMut,
    /// The current command's arguments; see [`MAX_KEPT_ARGS`].
    args: Vec<Bytes>,
    state: ConnState,
    idle_timeout: Option<Duration>,
    qbuf_limit: usize,
    obuf: OutputBuffer,
}

impl<S> Drop for Connection<S> {
    /// The connection's buffers stop counting in `used_memory`.
    fn drop(&mut self) {
        self.handle
            .withdraw_memory(&self.shared.store, &self.shared.clients);
    }
}

impl<S: ClientStream> Connection<S> {
    async fn run(&mut self) -> Closed {
        loop {
            let outcome = self.run_buffered().await;
            // Replies before an error or a blocking command go out first.
            if let Err(closed) = self.flush().await {
                return closed;
            }
            match outcome {
                Err(closed) => return closed,
                Ok(Some(Stop::Block(spec))) => match self.wait_blocked(spec).await {
                    Ok(reply) => {
                        self.encode(&reply);
                        // Run what was pipelined behind it before reading.
                        continue;
                    }
                    Err(closed) => return closed,
                },
                Ok(Some(Stop::Paused)) => match self.wait_paused().await {
                    Ok(None) | Ok(Some(Stop::Paused)) => continue,
                    Ok(Some(Stop::Block(spec))) => match self.wait_blocked(spec).await {
                        Ok(reply) => {
                            self.encode(&reply);
                            continue;
                        }
                        Err(closed) => return closed,
                    },
                    Err(closed) => return closed,
                },
                Ok(None) if self.state.closing => return Closed::Normally,
                Ok(None) => {}
            }
            if self.rbuf.len() > self.qbuf_limit {
                return Closed::QueryBufferLimit;
            }
            if let Err(closed) = self.wait_input().await {
                return closed;
            }
        }
    }

    /// Runs every complete command in the read buffer, encoding replies
    /// (flushing early past the output buffer's watermark). Stops at a
    /// command that blocks and returns what it waits for.
    async fn run_buffered(&mut self) -> Result<Option<Stop>, Closed> {
        self.state.clock_stale();
        let subscribed = self.state.subs.subscribed();
        self.obuf.refresh(&self.shared.normal_obuf, subscribed);
        loop {
            let pending = self.rbuf.len();
            match self.codec.decode_args_into(&mut self.rbuf, &mut self.args) {
                Ok(true) => {}
                Ok(false) => return Ok(None),
                Err(e) => {
                    self.encode(&crate::error::CmdError::from(e).into_frame());
                    return Err(Closed::Protocol);
                }
            };
            self.handle.qbuf.store(pending, Ordering::Relaxed);
            let stop = self.run_command();
            self.handle.qbuf.store(0, Ordering::Relaxed);
            if let Some(stop) = stop {
                return Ok(Some(stop));
            }
            if self.state.closing {
                return Ok(None);
            }
            if self.wbuf.len() >= self.obuf.watermark() {
                self.flush().await?;
                self.state.clock_stale();
            }
        }
    }

    /// Runs the command in `self.args` and encodes its replies, unless it
    /// must wait. The arguments are released (they are slices of the read
    /// buffer) unless `CLIENT PAUSE` holds the command, which keeps them
    /// for [`wait_paused`](Self::wait_paused).
    fn run_command(&mut self) -> Option<Stop> {
        // Subscription confirmations are sent even with replies off,
        // as Redis 7 sends them.
        let confirms = is_subscription(&self.args[0]);
        let reply = cmd::execute(&self.shared, &mut self.state, &self.args);
        if let Reply::Paused = reply {
            return Some(Stop::Paused);
        }
        self.sync_auth_limits();
        // Keep the vector for the next command unless a huge one grew it.
        self.args.clear();
        if self.args.capacity() > MAX_KEPT_ARGS {
            self.args = Vec::new();
        }
        let silenced = (self.state.reply_off || self.state.reply_skip > 0) && !confirms;
        self.state.reply_skip = self.state.reply_skip.saturating_sub(1);
        match reply {
            Reply::Block(spec) => return Some(Stop::Block(spec)),
            _ if silenced => {}
            Reply::One(frame) => self.encode(&frame),
            Reply::Many(frames) => frames.iter().for_each(|f| self.encode(f)),
            Reply::Paused => {}
        }
        None
    }

    /// Holds the command in `self.args`, which `CLIENT PAUSE` covers, until
    /// the pause ends, then runs it; what it then says to do next (it may
    /// block).
    async fn wait_paused(&mut self) -> Result<Option<Stop>, Closed> {
        let shared = self.shared.clone();
        let _held = shared.pause.hold();
        loop {
            tokio::select! {
                () = shared.pause.wait() => {}
                end = self.ended.wait() => return Err(self.closed_by(end)),
            }
            self.state.clock_stale();
            match self.run_command() {
                Some(Stop::Paused) => {}
                other => return Ok(other),
            }
        }
    }

    /// Redis's tighter request limits apply while the client must still
    /// authenticate; `AUTH`, `HELLO ... AUTH`, `RESET` and `CONFIG SET
    /// requirepass` change that.
    fn sync_auth_limits(&mut self) {
        let authenticated = self.state.authenticated || !self.shared.requires_auth();
        if self.codec.limits().unauthenticated == authenticated {
            let limits = self.codec.limits().authenticated(authenticated);
            self.codec.set_limits(limits);
        }
    }

    /// Encodes a reply in the connection's current protocol (which `HELLO`
    /// may just have changed, for its own reply too).
    fn encode(&mut self, frame: &Frame) {
        self.codec.set_protocol(self.state.protocol);
        // Encoding into a BytesMut cannot fail.
        let _ = self.codec.encode(frame, &mut self.wbuf);
    }

    /// Encodes `first` and whatever other messages are queued already, up
    /// to one write batch.
    fn encode_messages(&mut self, first: crate::pubsub::Message) {
        let subscribed = self.state.subs.subscribed();
        if let Some(f) = first.into_frame(self.state.protocol, subscribed) {
            self.encode(&f);
        }
        while self.wbuf.len() < FLUSH_THRESHOLD {
            let Some(msg) = self.state.subs.try_recv() else {
                break;
            };
            if let Some(f) = msg.into_frame(self.state.protocol, subscribed) {
                self.encode(&f);
            }
        }
    }

    /// Writes the pending replies, unless they break the output buffer
    /// limit, which closes the client with none of them written. A write
    /// that waits on a client that does not read still gives way to
    /// `CLIENT KILL`, to the soft limit's time running out, and to shutdown
    /// after [`SHUTDOWN_GRACE`].
    async fn flush(&mut self) -> Result<(), Closed> {
        if self.wbuf.is_empty() {
            return Ok(());
        }
        if self.state.reply_too_large || self.obuf.is_broken(self.wbuf.len()) {
            tracing::warn!(
                client = self.handle.id,
                bytes = self.wbuf.len(),
                "closing a client over the normal output buffer limit"
            );
            self.wbuf.clear();
            return Err(Closed::OutputBufferLimit);
        }
        self.shared
            .stats
            .net_output_bytes
            .fetch_add(self.wbuf.len() as u64, Ordering::Relaxed);
        // The common case: the socket takes everything at once, without
        // building the select below.
        let mut written = 0;
        while written < self.wbuf.len() {
            match self.socket.write_now(&self.wbuf[written..]) {
                Ok(0) => return Err(Closed::Io(std::io::ErrorKind::WriteZero.into())),
                Ok(n) => written += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(Closed::Io(e)),
            }
        }
        if written < self.wbuf.len() {
            // Waiting on the client: what is left shows as `omem`.
            self.handle
                .omem
                .store(self.wbuf.len() - written, Ordering::Relaxed);
            self.shared.evict_clients.publish(
                &self.shared.store,
                &self.shared.clients,
                &self.handle,
            );
        }
        // A subscriber's queue is checked against the pubsub class's soft
        // limit while its write waits, as Redis's cron checks it: at the
        // limit's deadline once the queue is over it, else every tick
        // (publishers may put it over meanwhile).
        let queue_limit = self
            .state
            .subs
            .subscribed()
            .then(|| self.shared.config().client_output_buffer_limit.pubsub);
        let done = {
            let mut rest = std::pin::pin!(write_out(&mut self.socket, &self.wbuf[written..]));
            loop {
                let own = self.obuf.soft_deadline();
                let queue = queue_limit.and_then(|l| self.state.subs.soft_deadline(l));
                let wake = own.or(queue).or_else(|| {
                    queue_limit
                        .filter(|l| l.soft_bytes > 0)
                        .map(|_| Instant::now() + QUEUE_CHECK_TICK)
                });
                let soft_limit = async {
                    match wake {
                        Some(d) => tokio::time::sleep_until(d).await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    r = &mut rest => break Ok(r),
                    () = soft_limit => {
                        // A subscriber's queue grew meanwhile: weigh it
                        // against `maxmemory-clients` too.
                        self.shared.evict_clients.publish(&self.shared.store, &self.shared.clients, &self.handle);
                        let queue_broke = queue_limit.is_some_and(|l| self.state.subs.recheck(l));
                        if own.is_some() || queue_broke {
                            break Err(Some(Closed::OutputBufferLimit));
                        }
                    }
                    end = self.ended.wait() => match end {
                        End::Killed => break Err(None),
                        End::Shutdown => {
                            break Ok(tokio::time::timeout(SHUTDOWN_GRACE, &mut rest).await.unwrap_or_else(|_| {
                                Err(std::io::ErrorKind::TimedOut.into())
                            }))
                        }
                    },
                }
            }
        };
        let result = match done {
            Ok(r) => r.map_err(Closed::Io),
            Err(None) => Err(self.killed()),
            Err(Some(closed)) => Err(closed),
        };
        self.wbuf.clear();
        if result.is_ok() {
            // A client closed for its output keeps showing it until it is
            // gone from CLIENT LIST.
            self.obuf.drained();
            self.handle.omem.store(0, Ordering::Relaxed);
        }
        result
    }

    /// Why a `kill` notification closes this connection.
    fn killed(&self) -> Closed {
        if self.state.subs.overflowed() {
            Closed::OutputBufferLimit
        } else {
            Closed::Normally
        }
    }

    /// How the connection closes for what ended it from outside.
    fn closed_by(&self, end: End) -> Closed {
        match end {
            End::Killed => self.killed(),
            End::Shutdown => Closed::Normally,
        }
    }

    /// Waits for more input (or Pub/Sub messages to deliver).
    ///
    /// The wait polls the socket first (`biased`): a task woken by input,
    /// the common case, then reads without polling anything else. The
    /// other branch watches the end signal and the message queue through
    /// one waker ([`EndSignal::wait_or_messages`]). So that a client whose
    /// input is always ready still ends when killed and still gets its
    /// messages, the end flag (which shutdown raises too) is checked before
    /// waiting, and queued messages are taken after a read.
    async fn wait_input(&mut self) -> Result<(), Closed> {
        if let Some(end) = self.handle.kill.ended() {
            return Err(self.closed_by(end));
        }
        // A large command or a batch of replies grew a buffer; between
        // commands the client gets a fresh one, as Redis shrinks its query
        // and reply buffers, so that `used_memory` keeps no high-water mark.
        shrink_if_idle(&mut self.rbuf, MAX_IDLE_BUFFER);
        shrink_if_idle(&mut self.wbuf, BUFFER);
        if self.rbuf.capacity() - self.rbuf.len() < 4096 {
            self.rbuf.reserve(BUFFER);
        }
        let unparsed = self.rbuf.len() + self.codec.partial_bytes();
        self.handle.qbuf.store(unparsed, Ordering::Relaxed);
        self.handle.buffers.store(
            self.rbuf.capacity() + self.wbuf.capacity() + self.codec.partial_bytes(),
            Ordering::Relaxed,
        );
        self.handle
            .state_bytes
            .store(self.state.state_bytes(), Ordering::Relaxed);
        self.shared
            .evict_clients
            .publish(&self.shared.store, &self.shared.clients, &self.handle);
        // Subscribers are exempt from the idle timeout, as in Redis.
        let idle = self.idle_timeout.filter(|_| !self.state.subs.subscribed());
        let (socket, rbuf) = (&mut self.socket, &mut self.rbuf);
        let read = async {
            match idle {
                Some(t) => tokio::time::timeout(t, socket.read_buf(rbuf)).await.ok(),
                None => Some(socket.read_buf(rbuf).await),
            }
        };
        tokio::select! {
            biased;
            r = read => match r {
                None => return Err(Closed::Idle),
                Some(Ok(0)) => return Err(Closed::Normally),
                Some(Ok(n)) => self.count_input(n),
                Some(Err(e)) => return Err(Closed::Io(e)),
            },
            woke = self.ended.wait_or_messages(&self.state.subs) => match woke {
                Wake::End(end) => return Err(self.closed_by(end)),
                Wake::Messages => {
                    // None when the publisher counted the message and has
                    // not queued it yet; the next wait sees it.
                    if let Some(msg) = self.state.subs.try_recv() {
                        self.encode_messages(msg);
                    }
                    return Ok(());
                }
            },
        }
        if self.state.subs.has_pending() {
            if let Some(msg) = self.state.subs.try_recv() {
                self.encode_messages(msg);
            }
        }
        Ok(())
    }

    fn count_input(&self, n: usize) {
        self.shared
            .stats
            .net_input_bytes
            .fetch_add(n as u64, Ordering::Relaxed);
    }

    /// Blocks the client until `spec` can be served, and returns the reply:
    /// the popped value, the timeout reply, or `CLIENT UNBLOCK`'s.
    async fn wait_blocked(&mut self, spec: BlockSpec) -> Result<Frame, Closed> {
        let blocking = self.shared.blocking.clone();
        let mut reg = blocking.register(self.handle.id, spec.db, &spec.keys, spec.kind());
        self.handle.blocked.store(true, Ordering::Relaxed);
        let deadline = spec.timeout.and_then(|t| Instant::now().checked_add(t));
        let result = loop {
            let w = reg.waiter();
            if w.unblocked.load(Ordering::Relaxed) {
                break Ok(if reg.waiter().unblock_error.load(Ordering::Relaxed) {
                    cmd::unblocked_reply(&self.shared, &spec)
                } else {
                    spec.timeout_reply()
                });
            }
            // Registered first, then retried: a push between the command's
            // own attempt and the registration is seen here.
            if let Some(reply) = cmd::retry_blocked(&self.shared, &mut self.state, &spec) {
                if let cmd::BlockOp::Move { dst, .. } = &spec.op {
                    reg.wrote(dst.clone());
                    // Client-side caching: the push changed `dst` (after
                    // this reply, as in Redis).
                    let t = &self.shared.tracking;
                    if t.active() {
                        t.invalidate(&*self.shared, dst, self.handle.id);
                        t.flush(&*self.shared);
                    }
                }
                break Ok(reply);
            }
            let timeout = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending().await,
                }
            };
            if self.rbuf.capacity() - self.rbuf.len() < 4096 {
                self.rbuf.reserve(16 * 1024);
            }
            tokio::select! {
                () = reg.waiter().wake.notified() => {}
                () = timeout => break Ok(spec.timeout_reply()),
                // Read on to see the peer go away; what it sends waits in
                // the buffer until the client is served.
                r = self.socket.read_buf(&mut self.rbuf) => match r {
                    Ok(0) => break Err(Closed::Normally),
                    Ok(n) => {
                        self.count_input(n);
                        if self.rbuf.len() > self.qbuf_limit {
                            break Err(Closed::QueryBufferLimit);
                        }
                    }
                    Err(e) => break Err(Closed::Io(e)),
                },
                // A RESP3 client may be subscribed and blocked at once.
                msg = self.state.subs.recv() => {
                    self.encode_messages(msg);
                    if let Err(closed) = self.flush().await {
                        break Err(closed);
                    }
                }
                end = self.ended.wait() => break Err(self.closed_by(end)),
            }
        };
        self.handle.blocked.store(false, Ordering::Relaxed);
        drop(reg);
        result
    }
}

/// Waits for the client's kill flag or the server's shutdown: the flag,
/// which the server raises on every connection when it shuts down, and the
/// token, for a connection that registered after that.
struct EndSignal {
    handle: Arc<ClientHandle>,
    shutdown: CancellationToken,
}

/// What wakes a connection waiting for input, besides the input.
enum Wake {
    /// The connection must end.
    End(End),
    /// Messages are queued for it.
    Messages,
}

impl EndSignal {
    /// Ready when the connection must end; until then `cx`'s task is woken
    /// by the kill flag.
    fn poll(&self, cx: &mut Context<'_>) -> Poll<End> {
        if self.shutdown.is_cancelled() {
            return Poll::Ready(End::Shutdown);
        }
        self.handle.kill.poll_ended(cx)
    }

    /// Resolves when the connection must end, at once if it already must.
    fn wait(&self) -> impl Future<Output = End> + '_ {
        std::future::poll_fn(move |cx| self.poll(cx))
    }

    /// Resolves when the connection must end or `subs` has messages queued.
    /// One waker serves both, which costs a wait one registration instead
    /// of two: `Subscriber::deliver` wakes the kill flag's waker after
    /// queueing. The queue is checked after the waker is registered (under
    /// the flag's lock), so a message queued before the check is seen by
    /// it and one queued after it wakes the task.
    fn wait_or_messages<'a>(&'a self, subs: &'a Subscriptions) -> impl Future<Output = Wake> + 'a {
        std::future::poll_fn(move |cx| {
            if let Poll::Ready(end) = self.poll(cx) {
                return Poll::Ready(Wake::End(end));
            }
            if subs.has_pending() {
                Poll::Ready(Wake::Messages)
            } else {
                Poll::Pending
            }
        })
    }
}

/// Writes all of `buf` and flushes it: a TLS stream holds encrypted bytes
/// until flushed (a `TcpStream`'s flush does nothing).
async fn write_out(stream: &mut (impl AsyncWrite + Unpin), buf: &[u8]) -> std::io::Result<()> {
    stream.write_all(buf).await?;
    stream.flush().await
}

/// `SUBSCRIBE` and friends, whose confirmations `CLIENT REPLY OFF` does not
/// silence.
fn is_subscription(name: &[u8]) -> bool {
    ["subscribe", "unsubscribe", "psubscribe", "punsubscribe"]
        .iter()
        .any(|n| name.eq_ignore_ascii_case(n.as_bytes()))
}
