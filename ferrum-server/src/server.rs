//! The server: builds the store and the shared state, binds the sockets
//! ([`crate::listen`] owns them and their accept loops), runs the active
//! expiry cycle and the metrics endpoint, and shuts down cleanly on request.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use anyhow::Context as _;
use ferrum_store::{Store, StoreConfig};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::client::{ClientRegistry, End};
use crate::clock::Clock;
use crate::cmd::policy_of;
use crate::config::Config;
use crate::listen::{bind_all, Family, Listeners};
use crate::shared::{ServerStats, Shared};
use crate::tls::TlsContext;

/// `dir/dbfilename` exists but does not load: the server does not start
/// with half a dataset. The text names the file and the byte offset.
#[derive(Debug)]
pub struct SnapshotError(pub String);

impl std::fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "could not load the RDB file {}", self.0)
    }
}

impl std::error::Error for SnapshotError {}

/// A bound, not yet running, FerrumKV server.
pub struct Server {
    /// The Prometheus endpoint's listener, when `metrics-addr` is set.
    metrics: Option<TcpListener>,
    shared: Arc<Shared>,
}

/// The cluster state when `cluster-enabled` is on: the slot map from
/// `cluster-config-file`, with this node at `cluster-announce-ip` (or the
/// address bound, when it is a single one) and `cluster-announce-port`
/// (or the port bound), its bus port `cluster-announce-bus-port`, else
/// `cluster-port`, else the port plus 10000, as Redis announces them.
fn open_cluster(
    config: &Config,
    bound: std::net::IpAddr,
) -> anyhow::Result<Option<crate::cluster::Cluster>> {
    if !config.cluster_enabled() {
        return Ok(None);
    }
    let ip = match config.stored_value("cluster-announce-ip") {
        "" if bound.is_unspecified() => String::new(),
        "" => bound.to_string(),
        ip => ip.to_owned(),
    };
    let port_of = |name| {
        config
            .stored_value(name)
            .parse::<u16>()
            .ok()
            .filter(|&p| p != 0)
    };
    let port = port_of("cluster-announce-port").unwrap_or(config.port);
    let bus_port = port_of("cluster-announce-bus-port")
        .or_else(|| port_of("cluster-port"))
        .unwrap_or_else(|| config.port.checked_add(10000).unwrap_or(0));
    let hostname = config.stored_value("cluster-announce-hostname").to_owned();
    let me = crate::cluster::Endpoint {
        ip,
        port,
        bus_port,
        hostname,
    };
    let full_coverage = config.stored_value("cluster-require-full-coverage") == "yes";
    let cluster = crate::cluster::Cluster::open(config.cluster_config_path(), me, full_coverage)?;
    cluster.set_when_down(
        config.cluster_reads_when_down(),
        config.cluster_pubsubshard_when_down(),
    );
    cluster.set_endpoint_type(config.stored_value("cluster-preferred-endpoint-type"));
    Ok(Some(cluster))
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
    pub async fn bind(mut config: Config) -> anyhow::Result<Server> {
        let (policy, policy_config) = policy_of(&config);
        config.encoding.install();
        let store = Store::new(StoreConfig {
            databases: config.databases as usize,
            shards: 16,
            maxmemory_bytes: config.maxmemory_bytes,
            policy,
            policy_config,
        });
        let backlog = config.tcp_backlog();
        let plain = tokio_listeners(bind_all(&config.bind, config.port, backlog))
            .with_context(|| format!("could not bind port {}", config.port))?;
        anyhow::ensure!(!plain.is_empty(), "no bind address given");
        // Port 0 picked a free port: CONFIG GET and INFO show that one.
        let port = plain[0].local_addr()?.port();
        config.port = port;
        let (tls, tls_sockets) = if config.tls.port == 0 {
            (None, Vec::new())
        } else {
            let context = TlsContext::new(&config.tls).context("Failed to configure TLS")?;
            let sockets = tokio_listeners(bind_all(&config.bind, config.tls.port, backlog))
                .with_context(|| format!("could not bind tls-port {}", config.tls.port))?;
            (Some(Arc::new(context)), sockets)
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
            crate::slowlog::SlowLog::new(config.slowlog_log_slower_than, config.slowlog_max_len);
        let notify = crate::notify::Notifier::default();
        notify.install(config.stored_value("notify-keyspace-events"));
        let latency = crate::latency::Latency::default();
        latency
            .threshold_ms
            .store(config.latency_threshold_ms(), Ordering::Relaxed);
        let cluster = open_cluster(&config, plain[0].local_addr()?.ip())?;
        let tracking_max = config.tracking_max_keys();
        let normal_obuf = crate::obuf::NormalLimit::default();
        normal_obuf.install(config.client_output_buffer_limit.normal);
        let acl = crate::acl::Acl::from_config(&config).map_err(anyhow::Error::msg)?;
        let commands = config.renamed_commands.clone();
        let evict_clients =
            crate::evict_clients::ClientEviction::new(config.maxmemory_clients_bytes());
        let clock = Clock::new();
        let shared = Arc::new_cyclic(|this| Shared {
            this: this.clone(),
            listeners: Listeners::new(plain, tls_sockets),
            store,
            normal_obuf,
            acl,
            lacks_good_replicas: AtomicBool::new(config.lacks_good_replicas(|_| 0)),
            debug_command: config.enable_debug_command,
            module_command: config.enable_module_command,
            config: RwLock::new(config),
            clients: ClientRegistry::default(),
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
            repl: crate::replication::Replication::new(),
            lazyfree: crate::lazyfree::LazyFree::default(),
            active_expire: AtomicBool::new(true),
            cron_paused: AtomicBool::new(false),
            shutdown_request: CancellationToken::new(),
            tls,
            migrate: crate::migrate::Links::default(),
            commands,
            evict_clients,
            cluster,
            persistence: crate::persist::Persistence::new(clock.start_unix_secs()),
            skip_checksum: AtomicBool::new(false),
            clock,
        });
        crate::cmd::persist::begin_load(&shared);
        // Before any client can say REPLICAOF.
        shared
            .repl
            .set_linker(crate::replica::linker(Arc::downgrade(&shared)));
        // `replicaof host port` in the configuration: a replica from the start.
        let primary = shared.config().stored_value("replicaof").to_owned();
        if let Some((host, port)) = primary.split_once(' ') {
            if let Ok(port) = port.parse() {
                shared.repl.follow(host, port);
                shared.hold_expiry();
            }
        }
        Ok(Server { metrics, shared })
    }

    /// What a signal handler asks before stopping the server (see
    /// [`ShutdownHook`]).
    pub fn shutdown_hook(&self) -> ShutdownHook {
        ShutdownHook(self.shared.clone())
    }

    /// The first bound address.
    pub fn local_addr(&self) -> SocketAddr {
        let addrs = self.shared.listeners.addrs(Family::Plain);
        addrs
            .first()
            .copied()
            .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// The first address bound on `tls-port`, or `None` without TLS.
    pub fn tls_addr(&self) -> Option<SocketAddr> {
        self.shared.listeners.addrs(Family::Tls).first().copied()
    }

    /// The Prometheus endpoint's bound address (`http://{addr}/metrics`),
    /// or `None` when `metrics-addr` is unset. With port 0 this is the port
    /// the OS picked.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// Serves until `shutdown` is cancelled, then stops accepting, closes
    /// every connection after its current batch, and returns. The
    /// snapshot in `dir` loads first, while connections are served (and
    /// refused with `-LOADING`); then "Ready to accept connections" is
    /// logged.
    ///
    /// # Errors
    ///
    /// A [`SnapshotError`] when the snapshot does not load whole: the
    /// server stops instead of serving half a dataset.
    pub async fn run(self, shutdown: CancellationToken) -> anyhow::Result<()> {
        let shared = self.shared.clone();
        let (addr, tls_addr, metrics_addr) =
            (self.local_addr(), self.tls_addr(), self.metrics_addr());
        let listeners = &shared.listeners;
        listeners.start(crate::accept::starter(Arc::downgrade(&shared)));
        let stop = listeners.shutdown_token().clone();
        let tasks = listeners.tasks();
        tasks.spawn(expire_loop(shared.clone(), stop.clone()));
        tasks.spawn(persist_loop(shared.clone(), stop.clone()));
        if let Some(listener) = self.metrics {
            tasks.spawn(crate::metrics::serve(listener, shared.clone(), stop));
        }
        let stop_requested = || async {
            tokio::select! {
                () = shutdown.cancelled() => {}
                () = shared.shutdown_request.cancelled() => shutdown.cancel(),
            }
        };
        let stop_loading = Arc::new(AtomicBool::new(false));
        let loaded = tokio::select! {
            loaded = load_snapshot(&shared, &stop_loading) => Some(loaded),
            () = stop_requested() => None,
        };
        stop_loading.store(true, Ordering::Relaxed);
        if let Some(Ok(())) = loaded {
            tracing::info!(
                "Ready to accept connections on {addr} (FerrumKV {})",
                env!("CARGO_PKG_VERSION")
            );
            if let Some(addr) = tls_addr {
                tracing::info!("TLS connections on {addr}");
            }
            if let Some(addr) = metrics_addr {
                tracing::info!("Prometheus metrics at http://{addr}/metrics");
            }
            stop_requested().await;
        }
        listeners.shut_down();
        // A background save stops (its temporary file goes), as Redis
        // kills its child at shutdown.
        crate::cmd::persist::abort_bgsave(&shared);
        // A busy script would hold its connection (and so this join)
        // forever: it stops at its next instruction hook.
        shared.scripting.running.abort_for_shutdown();
        // Connections wait on their own flag, not on the token: end each.
        // One registered after this sees the token at its start.
        for c in shared.clients.all() {
            c.kill.raise(End::Shutdown);
        }
        listeners.wait().await;
        match loaded {
            Some(Err(e)) => Err(SnapshotError(e).into()),
            _ => Ok(()),
        }
    }
}

/// Loads the snapshot at start-up (when [`crate::cmd::persist::begin_load`]
/// found one) on a thread of its own, so connections are served meanwhile.
/// `stop` raised makes the thread give up at its next key; dropping this
/// future does not wait for it.
async fn load_snapshot(shared: &Arc<Shared>, stop: &Arc<AtomicBool>) -> Result<(), String> {
    if !shared.persistence.loading.active() {
        return Ok(());
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    let (shared, stop) = (shared.clone(), stop.clone());
    std::thread::Builder::new()
        .name("load".into())
        .spawn(move || {
            let _ = tx.send(crate::cmd::persist::load_at_start(&shared, &stop));
        })
        .map_err(|e| format!("could not start the loading thread: {e}"))?;
    rx.await
        .unwrap_or_else(|_| Err("the loading thread stopped without a result".into()))
}

/// Runs what Redis does on SIGTERM or SIGINT before the server stops.
#[derive(Clone)]
pub struct ShutdownHook(Arc<Shared>);

impl ShutdownHook {
    /// Before stopping on `signal` (`"sigterm"` or `"sigint"`): saves as
    /// `shutdown-on-sigterm`/`shutdown-on-sigint` say (`default`: when
    /// save points are set; `save`, `nosave`, `force`). Returns whether
    /// the server may stop: `false` when the save failed without `force`,
    /// and the server goes on, as Redis does. Blocks while it saves. A
    /// script running then is stopped first (where Redis would wait for
    /// it), and what it wrote is saved.
    pub fn before_stop(&self, signal: &str) -> bool {
        if self.0.scripting.running.current().is_some() {
            self.0.scripting.running.abort_for_shutdown();
        }
        let flags = self
            .0
            .config()
            .stored_value(&format!("shutdown-on-{signal}"))
            .to_owned();
        let has = |f: &str| flags.split_whitespace().any(|w| w.eq_ignore_ascii_case(f));
        if !has("now") {
            self.0.wait_for_replicas();
        }
        crate::cmd::persist::save_for_shutdown(&self.0, has("save"), has("nosave")) || has("force")
    }
}

/// Hands bound sockets to tokio (in the runtime, as `Server::bind` is).
fn tokio_listeners(
    sockets: std::io::Result<Vec<std::net::TcpListener>>,
) -> std::io::Result<Vec<TcpListener>> {
    sockets?.into_iter().map(TcpListener::from_std).collect()
}

/// Persistence's cron, ten times a second: starts a `BGSAVE` scheduled
/// inside a transaction once it has ended.
async fn persist_loop(shared: Arc<Shared>, shutdown: CancellationToken) {
    loop {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(100)) => {}
            () = shutdown.cancelled() => return,
        }
        if !shared
            .cron_paused
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            crate::cmd::persist::cron(&shared);
        }
    }
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
        // A step of the system clock shows in readings from here on.
        shared.clock.resync();
        if shared.repl.active() {
            let (period, limit) = {
                let c = shared.config();
                let secs = c
                    .stored_value("repl-ping-replica-period")
                    .parse()
                    .unwrap_or(10);
                (
                    Duration::from_secs(secs),
                    c.client_output_buffer_limit.replica,
                )
            };
            shared.repl.ping_if_due(period, limit);
        }
        // A replica's keys expire when its primary says so (`DEL`);
        // until then reads see them as gone, as in Redis.
        let replica = shared.repl.is_replica();
        shared.hold_expiry();
        shared.refresh_good_replicas();
        let active = shared
            .active_expire
            .load(std::sync::atomic::Ordering::Relaxed)
            && !shared
                .cron_paused
                .load(std::sync::atomic::Ordering::Relaxed);
        if !active || shared.pause.is_on() || replica {
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
            crate::cmd::notify::sweep_expired(&shared, &mut sweep_cursor, 1024);
            if shared.repl.active() {
                crate::cmd::flush_stream(&shared, false);
            }
            continue;
        }
        loop {
            let expired = {
                let Some(_gate) = shared.try_gate() else {
                    break;
                };
                let expired = shared.store.expire_cycle(shared.clock.now(), 200);
                if shared.repl.active() {
                    crate::cmd::flush_stream(&shared, false);
                }
                expired
            };
            if expired == 0 || started.elapsed() >= budget {
                break;
            }
        }
    }
}
