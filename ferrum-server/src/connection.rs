//! One client connection: read what is there, run every complete command,
//! write the replies, repeat; block when a blocking command says so;
//! deliver Pub/Sub messages as they arrive.
//!
//! Reading, running and writing go on independently, as in Redis: a
//! connection never stops reading because its replies are unread. What the
//! socket does not take at once waits in the client's output buffer
//! (`crate::obuf`), and every wait of the connection's task watches the
//! socket for input and, while output waits, for room to write, in one
//! future ([`Io::progress`]). A client that writes a whole pipeline before
//! reading anything (redis-py, Jedis and go-redis pipelines do) gets every
//! reply; waiting in a write while the client waits in its own would be a
//! deadlock. The unwritten output is bounded only by Redis's limits:
//! `client-output-buffer-limit` for the client's class (checked after
//! every command, when a write moves it, and at the soft limit's
//! deadline) and `maxmemory-clients`.
//!
//! Batching is what makes pipelining fast: a `redis-benchmark -P 16` burst
//! arrives in one read, and its replies leave in one write, tried at once
//! without building a `select!` (`ClientStream::write_now`). The read
//! buffer is bounded by `client-query-buffer-limit`.
//!
//! A blocked client (see `crate::blocking`) waits with no lock held on: a
//! wake-up for one of its keys, its timeout, `CLIENT UNBLOCK`, `CLIENT
//! KILL`, shutdown, and its own socket, which it goes on writing its
//! earlier replies to and reading from, where EOF means it is gone and is
//! cleaned up at once. Commands pipelined after the blocking one run only
//! once it is served.

use std::future::Future;
use std::io::{ErrorKind, IoSlice};
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use ferrum_proto::{Frame, Limits, RespCodec};
use tokio::time::Instant;
use tokio_util::codec::Encoder;
use tokio_util::sync::CancellationToken;

use crate::client::{ClientHandle, ConnState, End};
use crate::cmd::{self, BlockSpec, Reply};
use crate::obuf::{OutputBuffer, Replies, FLUSH_THRESHOLD};
use crate::pubsub::Subscriptions;
use crate::shared::Shared;
use crate::stream::ClientStream;

/// The argument vector is reused from one command to the next, up to this
/// many arguments of capacity.
const MAX_KEPT_ARGS: usize = 1024;

/// How often a subscriber whose output waits checks its queue against the
/// soft limit, as Redis's `clientsCron` does at its default `hz` of 10.
const QUEUE_CHECK_TICK: Duration = Duration::from_millis(100);

/// A connection's read buffer's size, and what it grows by when nearly
/// full.
const BUFFER: usize = 16 * 1024;

/// A read waits for at least this much room in the read buffer.
const MIN_READ: usize = 4096;

/// An empty read buffer larger than this (a large command grew it) is
/// replaced by a new one of [`BUFFER`] bytes before the next read, so that
/// `used_memory` keeps no high-water mark.
const MAX_IDLE_BUFFER: usize = 4 * BUFFER;

/// How long pending output may still take once shutdown began.
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
        io: Io {
            socket,
            rbuf: BytesMut::with_capacity(BUFFER),
            out: Replies::default(),
            unflushed: false,
            written: 0,
        },
        ended: EndSignal {
            handle: handle.clone(),
            shutdown,
        },
        handle,
        codec: RespCodec::server(limits.authenticated(state.authenticated)),
        args: Vec::new(),
        state,
        idle_timeout,
        qbuf_limit,
        obuf: OutputBuffer::new(),
    };
    let closed = c.run().await;
    c.count_output();
    let id = c.handle.id;
    c.state.subs.clear(&c.shared.pubsub, id);
    c.shared.tracking.disable(id);
    c.shared.monitors.remove(id);
    c.shared.repl.detach(&c.shared.store, id);
    if !matches!(closed, Closed::Io(_)) {
        c.io.socket.close().await;
    }
    closed
}

/// What a wait on the socket brought.
enum Progress {
    /// This many bytes were read (0: the peer closed).
    Read(usize),
    /// Output was written (or flushed); some may still wait.
    Wrote,
}

/// The socket and the bytes on their way through it.
struct Io<S> {
    socket: S,
    /// Requests read and not yet parsed.
    rbuf: BytesMut,
    /// Replies not yet written.
    out: Replies,
    /// Bytes went to the stream since it was last flushed (a TLS stream
    /// holds them until then).
    unflushed: bool,
    /// Bytes written since the connection last counted them in
    /// `total_net_output_bytes`.
    written: usize,
}

impl<S: ClientStream> Io<S> {
    /// Whether every reply reached the socket.
    fn is_done(&self) -> bool {
        self.out.is_empty() && !self.unflushed
    }

    /// Writes what the socket takes without waiting.
    fn write_now(&mut self) -> std::io::Result<()> {
        while !self.out.is_empty() {
            let taken = match self.out.single() {
                Some(block) => self.socket.write_now(&[IoSlice::new(block)]),
                None => {
                    let (slices, n) = self.out.slices();
                    self.socket.write_now(&slices[..n])
                }
            };
            match taken {
                Ok(0) => return Err(ErrorKind::WriteZero.into()),
                // A stream that writes at once needs no flush.
                Ok(n) => self.out_written(n),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn out_written(&mut self, n: usize) {
        self.out.consume(n);
        self.written += n;
    }

    /// Makes sure the next read has room.
    fn reserve_read(&mut self) {
        if self.rbuf.capacity() - self.rbuf.len() < MIN_READ {
            self.rbuf.reserve(BUFFER);
        }
    }

    /// Resolves when the socket moved bytes: output written (while any
    /// waits) or, with `read`, input read. Polling both in one future is
    /// what keeps a connection reading while its replies wait.
    fn progress(&mut self, read: bool) -> impl Future<Output = std::io::Result<Progress>> + '_ {
        std::future::poll_fn(move |cx| self.poll_progress(cx, read))
    }

    fn poll_progress(
        &mut self,
        cx: &mut Context<'_>,
        read: bool,
    ) -> Poll<std::io::Result<Progress>> {
        let mut wrote = false;
        while !self.out.is_empty() {
            let taken = {
                let (slices, n) = self.out.slices();
                Pin::new(&mut self.socket).poll_write_vectored(cx, &slices[..n])
            };
            match taken {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => {
                    self.out_written(n);
                    self.unflushed = true;
                    wrote = true;
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => break,
            }
        }
        if self.out.is_empty() && self.unflushed {
            match Pin::new(&mut self.socket).poll_flush(cx) {
                Poll::Ready(Ok(())) => {
                    self.unflushed = false;
                    wrote = true;
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => {}
            }
        }
        if read {
            match tokio_util::io::poll_read_buf(Pin::new(&mut self.socket), cx, &mut self.rbuf) {
                Poll::Ready(Ok(n)) => return Poll::Ready(Ok(Progress::Read(n))),
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => {}
            }
        }
        if wrote {
            Poll::Ready(Ok(Progress::Wrote))
        } else {
            Poll::Pending
        }
    }

    /// Writes and flushes everything pending, reading nothing.
    async fn finish(&mut self) -> std::io::Result<()> {
        while !self.is_done() {
            self.progress(false).await?;
        }
        Ok(())
    }
}

/// A connection's task state.
struct Connection<S> {
    shared: Arc<Shared>,
    io: Io<S>,
    handle: Arc<ClientHandle>,
    ended: EndSignal,
    codec: RespCodec,
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
            let outcome = self.run_buffered();
            match outcome {
                // The error's reply goes out before the connection closes.
                Err(Closed::Protocol) => {
                    return self.drain().await.err().unwrap_or(Closed::Protocol)
                }
                Err(closed) => return closed,
                Ok(Some(Stop::Block(spec))) => {
                    if let Err(closed) = self.serve_blocked(spec).await {
                        return closed;
                    }
                    // Run what was pipelined behind it before reading.
                    continue;
                }
                Ok(Some(Stop::Paused)) => match self.wait_paused().await {
                    Ok(None) | Ok(Some(Stop::Paused)) => continue,
                    Ok(Some(Stop::Block(spec))) => {
                        if let Err(closed) = self.serve_blocked(spec).await {
                            return closed;
                        }
                        continue;
                    }
                    Err(closed) => return closed,
                },
                Ok(None) if self.state.closing => {
                    return self.drain().await.err().unwrap_or(Closed::Normally)
                }
                Ok(None) => {}
            }
            if self.io.rbuf.len() > self.qbuf_limit {
                return Closed::QueryBufferLimit;
            }
            if let Err(closed) = self.wait_io().await {
                return closed;
            }
        }
    }

    /// Runs every complete command in the read buffer, encoding replies
    /// into the output buffer, whose limit is checked after each. Stops
    /// at a command that blocks and returns what it waits for.
    fn run_buffered(&mut self) -> Result<Option<Stop>, Closed> {
        self.state.clock_stale();
        let subscribed = self.state.subs.subscribed();
        self.obuf.refresh(&self.shared.normal_obuf, subscribed);
        loop {
            let pending = self.io.rbuf.len();
            match self
                .codec
                .decode_args_into(&mut self.io.rbuf, &mut self.args)
            {
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
            self.check_output_limit()?;
            if let Some(stop) = stop {
                return Ok(Some(stop));
            }
            if self.state.closing {
                return Ok(None);
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
    /// block). Earlier replies go on being written meanwhile, and input
    /// read, as in Redis.
    async fn wait_paused(&mut self) -> Result<Option<Stop>, Closed> {
        let shared = self.shared.clone();
        let _held = shared.pause.hold();
        loop {
            self.io.reserve_read();
            self.publish_memory();
            tokio::select! {
                () = shared.pause.wait() => {}
                p = self.io.progress(true) => {
                    self.on_progress(p)?;
                    continue;
                }
                end = self.ended.wait() => return Err(self.closed_by(end)),
            }
            self.state.clock_stale();
            match self.run_command() {
                Some(Stop::Paused) => {}
                other => {
                    self.check_output_limit()?;
                    return Ok(other);
                }
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
        let _ = self.codec.encode(frame, self.io.out.buf());
        self.io.out.seal();
    }

    /// Encodes `first` and whatever other messages are queued already,
    /// while less than [`FLUSH_THRESHOLD`] bytes wait unwritten.
    fn encode_messages(&mut self, first: crate::pubsub::Message) {
        let subscribed = self.state.subs.subscribed();
        self.encode_message(first, subscribed);
        while self.io.out.len() < FLUSH_THRESHOLD {
            let Some(msg) = self.state.subs.try_recv() else {
                break;
            };
            self.encode_message(msg, subscribed);
        }
    }

    fn encode_message(&mut self, msg: crate::pubsub::Message, subscribed: bool) {
        if let Some(raw) = msg.raw() {
            self.io.out.buf().extend_from_slice(raw);
            self.io.out.seal();
        } else if let Some(f) = msg.into_frame(self.state.protocol, subscribed) {
            self.encode(&f);
        }
    }

    /// Closes the client, with none of its pending output written, if that
    /// output breaks its class's limit (or a command found its reply too
    /// large to build).
    fn check_output_limit(&mut self) -> Result<(), Closed> {
        if self.state.reply_too_large || self.obuf.is_broken(self.io.out.len()) {
            tracing::warn!(
                client = self.handle.id,
                bytes = self.io.out.len(),
                "closing a client over the normal output buffer limit"
            );
            self.io.out.clear();
            return Err(Closed::OutputBufferLimit);
        }
        Ok(())
    }

    /// When the output limits must be checked again though nothing
    /// happens: the soft limit's deadline of the client's own output, or
    /// of a subscriber's queue (at the latest every tick while its output
    /// or messages wait, since publishers may put the queue over it
    /// meanwhile).
    fn limit_deadline(&self) -> Option<Instant> {
        let own = self.obuf.soft_deadline();
        let waiting = self.state.subs.has_pending() || !self.io.out.is_empty();
        let queue = if waiting && self.state.subs.subscribed() {
            let limit = self.shared.config().client_output_buffer_limit.pubsub;
            self.state
                .subs
                .soft_deadline(limit)
                .or_else(|| (limit.soft_bytes > 0).then(|| Instant::now() + QUEUE_CHECK_TICK))
        } else {
            None
        };
        match (own, queue) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Checks the output limits at their deadline.
    fn recheck_limits(&mut self) -> Result<(), Closed> {
        self.check_output_limit()?;
        if self.state.subs.subscribed() {
            // A subscriber's queue grew meanwhile: weigh it against
            // `maxmemory-clients` too.
            self.publish_memory();
            let limit = self.shared.config().client_output_buffer_limit.pubsub;
            if self.state.subs.recheck(limit) {
                return Err(Closed::OutputBufferLimit);
            }
        }
        Ok(())
    }

    /// Takes in what a wait on the socket brought.
    fn on_progress(&mut self, progress: std::io::Result<Progress>) -> Result<(), Closed> {
        match progress {
            Ok(Progress::Read(0)) => Err(Closed::Normally),
            Ok(Progress::Read(n)) => {
                self.count_input(n);
                if self.io.rbuf.len() > self.qbuf_limit {
                    return Err(Closed::QueryBufferLimit);
                }
                Ok(())
            }
            // Output went down: the soft limit's clock may stop.
            Ok(Progress::Wrote) => self.check_output_limit(),
            Err(e) => Err(Closed::Io(e)),
        }
    }

    /// Writes whatever is pending, reading nothing more, before the
    /// connection closes (`QUIT`, a protocol error). Gives way to `CLIENT
    /// KILL`, and to shutdown after [`SHUTDOWN_GRACE`].
    async fn drain(&mut self) -> Result<(), Closed> {
        while !self.io.is_done() {
            tokio::select! {
                p = self.io.progress(false) => p.map_err(Closed::Io).map(drop)?,
                end = self.ended.wait() => return Err(self.closed_by(end)),
            }
        }
        Ok(())
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

    /// Publishes what the connection holds now: its query buffer, its
    /// unwritten output and its buffers, for `CLIENT LIST`, `used_memory`
    /// and `maxmemory-clients`; and counts what it wrote.
    fn publish_memory(&mut self) {
        self.count_output();
        let partial = self.codec.partial_bytes();
        self.handle
            .qbuf
            .store(self.io.rbuf.len() + partial, Ordering::Relaxed);
        self.handle.omem.store(self.io.out.len(), Ordering::Relaxed);
        self.state.subs.set_unwritten(self.io.out.len());
        self.handle.buffers.store(
            self.io.rbuf.capacity() + self.io.out.spare() + partial,
            Ordering::Relaxed,
        );
        self.handle
            .state_bytes
            .store(self.state.state_bytes(), Ordering::Relaxed);
        self.shared
            .evict_clients
            .publish(&self.shared.store, &self.shared.clients, &self.handle);
    }

    /// Adds what was written since the last call to
    /// `total_net_output_bytes`.
    fn count_output(&mut self) {
        let n = std::mem::take(&mut self.io.written);
        if n > 0 {
            self.shared
                .stats
                .net_output_bytes
                .fetch_add(n as u64, Ordering::Relaxed);
        }
    }

    /// Writes what the socket takes now, then waits for more input, for
    /// room to write what is left, for Pub/Sub messages to deliver, or for
    /// an output limit's deadline.
    ///
    /// The wait polls the socket first (`biased`): a task woken by input,
    /// the common case, then reads without polling anything else. The
    /// other branch watches the end signal and the message queue through
    /// one waker ([`EndSignal::wait_or_messages`]). So that a client whose
    /// input is always ready still ends when killed and still gets its
    /// messages, the end flag (which shutdown raises too) is checked before
    /// waiting, and queued messages are taken after a read.
    async fn wait_io(&mut self) -> Result<(), Closed> {
        if let Some(end) = self.handle.kill.ended() {
            return Err(self.closed_by(end));
        }
        if !self.io.out.is_empty() {
            self.io.write_now().map_err(Closed::Io)?;
            self.check_output_limit()?;
        }
        // A large command or a batch of replies grew a buffer; between
        // commands the client gets a fresh one, as Redis shrinks its query
        // and reply buffers, so that `used_memory` keeps no high-water mark.
        if self.io.rbuf.is_empty() && self.io.rbuf.capacity() > MAX_IDLE_BUFFER {
            self.io.rbuf = BytesMut::with_capacity(BUFFER);
        }
        self.io.out.shrink_if_idle();
        self.io.reserve_read();
        self.publish_memory();
        // Subscribers are exempt from the idle timeout, as in Redis.
        let idle = self.idle_timeout.filter(|_| !self.state.subs.subscribed());
        let deadline = self.limit_deadline();
        // Messages wait in their queue, where publishers weigh them
        // against the pubsub limit, while the client is behind.
        let take_messages = self.io.out.len() < FLUSH_THRESHOLD;
        let io = &mut self.io;
        let progress = async {
            match idle {
                Some(t) => tokio::time::timeout(t, io.progress(true)).await.ok(),
                None => Some(io.progress(true).await),
            }
        };
        let limits = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            p = progress => match p {
                None => return Err(Closed::Idle),
                Some(p) => self.on_progress(p)?,
            },
            woke = self.ended.wait_or_messages(&self.state.subs, take_messages) => match woke {
                Wake::End(End::Shutdown) => {
                    // What is pending still gets a moment to go out.
                    let _ = tokio::time::timeout(SHUTDOWN_GRACE, self.io.finish()).await;
                    return Err(Closed::Normally);
                }
                Wake::End(end) => return Err(self.closed_by(end)),
                // Taken below.
                Wake::Messages => {}
            },
            () = limits => self.recheck_limits()?,
        }
        // None when the publisher counted the message and has not queued
        // it yet; the next wait sees it.
        if take_messages && self.state.subs.has_pending() {
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

    /// Blocks the client until `spec` can be served, and encodes the reply.
    async fn serve_blocked(&mut self, spec: BlockSpec) -> Result<(), Closed> {
        let reply = self.wait_blocked(spec).await?;
        self.encode(&reply);
        self.check_output_limit()
    }

    /// Blocks the client until `spec` can be served, and returns the reply:
    /// the popped value, the timeout reply, or `CLIENT UNBLOCK`'s.
    async fn wait_blocked(&mut self, spec: BlockSpec) -> Result<Frame, Closed> {
        let blocking = self.shared.blocking.clone();
        let mut reg = blocking.register(self.handle.id, spec.db, &spec.keys, spec.kind());
        self.handle.blocked.store(true, Ordering::Relaxed);
        let deadline = spec.timeout.and_then(|t| Instant::now().checked_add(t));
        // Whether the keys may have changed since the last attempt.
        let mut retry = true;
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
            if retry {
                if let Some(reply) = cmd::retry_blocked(&self.shared, &mut self.state, &spec) {
                    if let cmd::BlockOp::Move { dst, .. } = &spec.op {
                        reg.wrote(dst.clone());
                        // Client-side caching: the push changed `dst`
                        // (after this reply, as in Redis).
                        let t = &self.shared.tracking;
                        if t.active() {
                            t.invalidate(&*self.shared, dst, self.handle.id);
                            t.flush(&*self.shared);
                        }
                    }
                    break Ok(reply);
                }
            }
            retry = false;
            let timeout = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending().await,
                }
            };
            self.io.reserve_read();
            self.publish_memory();
            let take_messages = self.io.out.len() < FLUSH_THRESHOLD;
            tokio::select! {
                () = reg.waiter().wake.notified() => retry = true,
                () = timeout => break Ok(spec.timeout_reply()),
                // Earlier replies go on being written; input is read on,
                // to see the peer go away, and waits in the buffer until
                // the client is served.
                p = self.io.progress(true) => {
                    if let Err(closed) = self.on_progress(p) {
                        break Err(closed);
                    }
                }
                // A RESP3 client may be subscribed and blocked at once.
                msg = self.state.subs.recv(), if take_messages => self.encode_messages(msg),
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

    /// Resolves when the connection must end or, with `take`, `subs` has
    /// messages queued.
    /// One waker serves both, which costs a wait one registration instead
    /// of two: `Subscriber::deliver` wakes the kill flag's waker after
    /// queueing. The queue is checked after the waker is registered (under
    /// the flag's lock), so a message queued before the check is seen by
    /// it and one queued after it wakes the task.
    fn wait_or_messages<'a>(
        &'a self,
        subs: &'a Subscriptions,
        take: bool,
    ) -> impl Future<Output = Wake> + 'a {
        std::future::poll_fn(move |cx| {
            if let Poll::Ready(end) = self.poll(cx) {
                return Poll::Ready(Wake::End(end));
            }
            if take && subs.has_pending() {
                Poll::Ready(Wake::Messages)
            } else {
                Poll::Pending
            }
        })
    }
}

/// `SUBSCRIBE` and friends, whose confirmations `CLIENT REPLY OFF` does not
/// silence.
fn is_subscription(name: &[u8]) -> bool {
    ["subscribe", "unsubscribe", "psubscribe", "punsubscribe"]
        .iter()
        .any(|n| name.eq_ignore_ascii_case(n.as_bytes()))
}
