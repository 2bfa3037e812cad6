//! The listener: accepts connections up to `maxclients` (and, in protected
//! mode, only from loopback) on the plain port and on the TLS port, runs the
//! active expiry cycle and the metrics endpoint, and shuts down cleanly on
//! request.
//!
//! One accept loop serves both ports, generic over the [`Handshake`]: a TLS
//! handshake runs in the new connection's own task, never in the loop, so a
//! slow or hostile client cannot hold up anyone else's accept.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use anyhow::Context as _;
use bytes::BytesMut;
use ferrum_proto::{Frame, Protocol};
use ferrum_store::{Store, StoreConfig};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::client::{ClientRegistry, End};
use crate::clock::Clock;
use crate::cmd::policy_of;
use crate::config::Config;
use crate::connection::{serve, Closed};
use crate::shared::{ServerStats, Shared};
use crate::stream::{ClientStream, Handshake, Plain};
use crate::tls::{Tls, TlsContext};

/// A bound, not yet running, FerrumKV server.
pub struct Server {
    listeners: Vec<TcpListener>,
    /// `tls-port`'s listeners, one per `bind` address; none without TLS.
    tls_listeners: Vec<TcpListener>,
    /// The Prometheus endpoint's listener, when `metrics-addr` is set.
    metrics: Option<TcpListener>,
    shared: Arc<Shared>,
}

impl Server {
    /// Builds the store and binds every `bind` address on `port` (0 picks a
    /// free port, shared by all addresses) and, when set, on `tls-port`,
    /// and `metrics-addr` if set.
    ///
    /// # Errors
    ///
    /// When an address cannot be bound, or the `tls-*` files cannot be
    /// loaded.
    pub async fn bind(config: Config) -> anyhow::Result<Server> {
        let (policy, policy_config) = policy_of(&config);
        config.encoding.install();
        let store = Store::new(StoreConfig {
            databases: config.databases as usize,
            shards: 16,
            maxmemory_bytes: config.maxmemory_bytes,
            policy,
            policy_config,
        });
        let (listeners, port) = bind_all(&config.bind, config.port).await?;
        anyhow::ensure!(!listeners.is_empty(), "no bind address given");
        let (tls, tls_listeners) = if config.tls.port == 0 {
            (None, Vec::new())
        } else {
            let context = TlsContext::new(&config.tls).context("Failed to configure TLS")?;
            let (listeners, _) = bind_all(&config.bind, config.tls.port).await?;
            (Some(Arc::new(context)), listeners)
        };
        let metrics = match config.metrics_addr {
            Some(addr) => Some(
                TcpListener::bind(addr)
                    .await
                    .with_context(|| format!("could not bind metrics-addr {addr}"))?,
            ),
            None => None,
        };
        let slowlog =
            crate::cmd::SlowLog::new(config.slowlog_log_slower_than, config.slowlog_max_len);
        let notify = crate::notify::Notifier::default();
        notify.install(config.stored_value("notify-keyspace-events"));
        let latency = crate::cmd::Latency::default();
        latency
            .threshold_ms
            .store(config.latency_threshold_ms(), Ordering::Relaxed);
        let tracking_max = config.tracking_max_keys();
        let normal_obuf = crate::obuf::NormalLimit::default();
        normal_obuf.install(config.client_output_buffer_limit.normal);
        let acl = crate::acl::Acl::from_config(&config).map_err(anyhow::Error::msg)?;
        let shared = Arc::new(Shared {
            store,
            normal_obuf,
            acl,
            lacks_good_replicas: AtomicBool::new(config.lacks_good_replicas()),
            debug_enabled: AtomicBool::new(config.enable_debug_command),
            port: AtomicU16::new(port),
            config: RwLock::new(config),
            clients: ClientRegistry::default(),
            clock: Clock::new(),
            stats: ServerStats::default(),
            tx_gate: RwLock::new(()),
            blocking: Arc::default(),
            pubsub: crate::pubsub::PubSub::default(),
            slowlog,
            notify,
            tracking: crate::tracking::Tracking::new(tracking_max),
            scripting: crate::script::Scripting::new(),
            latency,
            pause: crate::pause::Pause::default(),
            monitors: crate::monitor::Monitors::default(),
            lazyfree: crate::lazyfree::LazyFree::default(),
            active_expire: AtomicBool::new(true),
            shutdown_request: CancellationToken::new(),
            tls,
        });
        Ok(Server {
            listeners,
            tls_listeners,
            metrics,
            shared,
        })
    }

    /// The first bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.listeners[0]
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// The first address bound on `tls-port`, or `None` without TLS.
    pub fn tls_addr(&self) -> Option<SocketAddr> {
        self.tls_listeners.first().and_then(|l| l.local_addr().ok())
    }

    /// The Prometheus endpoint's bound address (`http://{addr}/metrics`),
    /// or `None` when `metrics-addr` is unset. With port 0 this is the port
    /// the OS picked.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// Serves until `shutdown` is cancelled, then stops accepting, closes
    /// every connection after its current batch, and returns.
    ///
    /// # Errors
    ///
    /// Never today; the `Result` leaves room for fatal listener errors.
    pub async fn run(self, shutdown: CancellationToken) -> anyhow::Result<()> {
        let mut tasks = JoinSet::new();
        for listener in self.listeners {
            tasks.spawn(accept_loop(
                listener,
                Plain,
                self.shared.clone(),
                shutdown.clone(),
            ));
        }
        if let Some(context) = &self.shared.tls {
            for listener in self.tls_listeners {
                let tls = Tls(context.clone());
                tasks.spawn(accept_loop(
                    listener,
                    tls,
                    self.shared.clone(),
                    shutdown.clone(),
                ));
            }
        }
        tasks.spawn(expire_loop(self.shared.clone(), shutdown.clone()));
        if let Some(listener) = self.metrics {
            tasks.spawn(crate::metrics::serve(
                listener,
                self.shared.clone(),
                shutdown.clone(),
            ));
        }
        tokio::select! {
            () = shutdown.cancelled() => {}
            () = self.shared.shutdown_request.cancelled() => shutdown.cancel(),
        }
        // A busy script would hold its connection (and so this join)
        // forever: it stops at its next instruction hook.
        self.shared.scripting.running.abort_for_shutdown();
        // Connections wait on their own flag, not on the token: end each.
        // One registered after this sees the token at its start.
        for c in self.shared.clients.all() {
            c.kill.raise(End::Shutdown);
        }
        while tasks.join_next().await.is_some() {}
        Ok(())
    }
}

/// Binds every address in `bind` (a leading `-` marks an optional one in
/// redis.conf; it is bound like any other) on `port`; with port 0 the first
/// bind picks a free port and the others share it. Returns the port bound.
async fn bind_all(bind: &[String], mut port: u16) -> anyhow::Result<(Vec<TcpListener>, u16)> {
    let mut listeners = Vec::new();
    for addr in bind {
        let addr = addr.trim_start_matches('-');
        let listener = TcpListener::bind((addr, port))
            .await
            .with_context(|| format!("could not bind {addr}:{port}"))?;
        port = listener.local_addr()?.port();
        listeners.push(listener);
    }
    Ok((listeners, port))
}

/// Accepts connections on one listener until shutdown. Each socket's
/// handshake (a ready future on the plain port) runs in the connection's
/// own task, after the client was admitted and registered, so it counts
/// against `maxclients` and shows in `CLIENT LIST` from the start, as in
/// Redis.
async fn accept_loop<H: Handshake>(
    listener: TcpListener,
    handshake: H,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
) {
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            () = shutdown.cancelled() => break,
        };
        let (socket, addr) = match accepted {
            Ok(a) => a,
            Err(e) => {
                // Out of file descriptors and the like: back off, don't spin.
                tracing::warn!("accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        shared
            .stats
            .connections_received
            .fetch_add(1, Ordering::Relaxed);
        // As Redis does: without it, replies sit behind Nagle's algorithm
        // waiting for delayed ACKs.
        let _ = socket.set_nodelay(true);
        let laddr = socket.local_addr().unwrap_or(addr);
        let stream = handshake.start(socket);
        if let Some(text) = refusal(&shared, addr.ip()) {
            shared
                .stats
                .rejected_connections
                .fetch_add(1, Ordering::Relaxed);
            tokio::spawn(async move {
                if let Ok(stream) = stream.await {
                    refuse(stream, text).await;
                }
            });
            continue;
        }
        let handle = shared
            .clients
            .register(addr, laddr, shared.acl.default_user());
        let (shared, shutdown) = (shared.clone(), shutdown.clone());
        connections.spawn(async move {
            let id = handle.id;
            let stream = tokio::select! {
                s = stream => s.map_err(Closed::Handshake),
                _ = handle.kill.wait() => Err(Closed::Normally),
                () = shutdown.cancelled() => Err(Closed::Normally),
            };
            let closed = match stream {
                Ok(stream) => serve(shared.clone(), stream, handle, shutdown).await,
                Err(closed) => closed,
            };
            shared.clients.unregister(id);
            match closed {
                Closed::Io(e) => tracing::debug!(client = id, "connection error: {e}"),
                Closed::Handshake(e) => tracing::debug!(client = id, "TLS handshake failed: {e}"),
                other => tracing::debug!(client = id, "connection closed: {other:?}"),
            }
        });
        // Reap finished connection tasks so the set does not grow.
        while connections.try_join_next().is_some() {}
    }
    while connections.join_next().await.is_some() {}
}

/// Why a new client is turned away, if it is: `maxclients` reached, or
/// protected mode.
fn refusal(shared: &Shared, peer: IpAddr) -> Option<&'static str> {
    let maxclients = shared.config().maxclients as usize;
    if shared.clients.len() >= maxclients {
        return Some(crate::cmd::MAX_CLIENTS);
    }
    let protected = shared.config().protected_mode;
    protected_mode_refuses(protected, shared.requires_auth(), peer)
        .then_some(crate::cmd::PROTECTED_MODE_DENIED)
}

/// Whether protected mode refuses a client connecting from `peer`, as Redis
/// 7 decides it: protected mode is on, the default user has no password,
/// and the peer is not on the loopback interface (127.0.0.0/8, `::1`, or
/// either as an IPv4-mapped IPv6 address). The `bind` addresses play no
/// part (Redis 7 dropped that condition); bound to loopback only, no
/// client can be refused.
pub(crate) fn protected_mode_refuses(
    protected_mode: bool,
    password_set: bool,
    peer: IpAddr,
) -> bool {
    protected_mode && !password_set && !peer.to_canonical().is_loopback()
}

/// Sends a refused connection its error line, then closes it.
async fn refuse(mut stream: impl ClientStream, text: &'static str) {
    let mut line = BytesMut::new();
    Frame::error(text).encode(Protocol::Resp2, &mut line);
    let _ = stream.write_all(&line).await;
    let _ = stream.flush().await;
    stream.close().await;
}

/// Logs the expiry cycle's duration as the `expire-cycle` latency event
/// when it ends (however the cycle's loop is left).
struct ExpireCycleSample<'a>(&'a Shared, tokio::time::Instant);

impl Drop for ExpireCycleSample<'_> {
    fn drop(&mut self) {
        let ms = self.1.elapsed().as_millis() as u64;
        self.0
            .latency
            .sample("expire-cycle", ms, self.0.clock.now_micros() / 1_000_000);
    }
}

/// Redis's active expiry: `hz` times a second, sample keys with a TTL and
/// remove the expired ones, within a quarter of the tick's time.
async fn expire_loop(shared: Arc<Shared>, shutdown: CancellationToken) {
    let mut sweep_cursor = 0;
    loop {
        let hz = u64::from(shared.config().hz.clamp(1, 500));
        let tick = Duration::from_millis(1000 / hz);
        tokio::select! {
            () = tokio::time::sleep(tick) => {}
            () = shutdown.cancelled() => return,
        }
        crate::pause::hold_expiry(&shared);
        let active = shared
            .active_expire
            .load(std::sync::atomic::Ordering::Relaxed);
        if !active || shared.pause.is_on() {
            continue;
        }
        let budget = tick / 4;
        let started = tokio::time::Instant::now();
        let _sample = ExpireCycleSample(&shared, started);
        if shared.notify.flags() & crate::notify::class::EXPIRED != 0 || shared.tracking.active() {
            // The store's sampling would remove keys without naming them.
            // A transaction or script holding the gate skips this tick:
            // keys do not expire under it, as in Redis.
            let Some(_gate) = shared.try_gate() else {
                continue;
            };
            crate::notify::sweep_expired(&shared, &mut sweep_cursor, 1024);
            continue;
        }
        loop {
            let expired = {
                let Some(_gate) = shared.try_gate() else {
                    break;
                };
                shared.store.expire_cycle(shared.clock.now(), 200)
            };
            if expired == 0 || started.elapsed() >= budget {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_mode_refuses_only_remote_peers_without_a_password() {
        let remote: IpAddr = "192.0.2.7".parse().unwrap();
        let remote6: IpAddr = "2001:db8::1".parse().unwrap();
        for local in ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"] {
            let local: IpAddr = local.parse().unwrap();
            assert!(!protected_mode_refuses(true, false, local), "{local}");
        }
        assert!(protected_mode_refuses(true, false, remote));
        assert!(protected_mode_refuses(true, false, remote6));
        assert!(protected_mode_refuses(
            true,
            false,
            "::ffff:192.0.2.7".parse().unwrap()
        ));
        // A password, or protected mode off, lets everyone in.
        assert!(!protected_mode_refuses(true, true, remote));
        assert!(!protected_mode_refuses(false, false, remote));
        assert!(!protected_mode_refuses(false, false, remote6));
    }
}
