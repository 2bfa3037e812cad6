//! `ferrum-server`: run FerrumKV with redis-server's command line.
//!
//! # Start-up lines (design notes)
//!
//! **Start-up lines.** `main` prints `... starting, PID: N` before it reads
//! its configuration, as Redis logs its start-up line first, and `Ready to
//! accept connections on ADDR` once bound: Redis's test suite in native mode
//! waits for these two, so a refused configuration (`appendonly yes`) shows up
//! as an exit at once instead of a two-minute wait.
//! A refused configuration is reported in Redis's words on standard error
//! (`ConfigError::fatal_report`): `*** FATAL CONFIG FILE ERROR (Redis
//! 7.0.15) ***`, the line number, the line as `>>> '...'` and Redis's reason,
//! then exit 1. Command-line directives count as lines after the file's, as
//! redis-server appends them to the file's text, and show their values in
//! `sdscatrepr` quotes (`port "6379" "6380"`), which is what the suite's
//! command-line tests match.

use anyhow::Context as _;
use ferrum_server::config::{ConfigError, USAGE};
use ferrum_server::{Config, Server};
use tokio_util::sync::CancellationToken;

// The global allocator, chosen by cargo feature (see Cargo.toml and
// `ferrum_server::alloc`); `main` tells INFO which one it is.
#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's start-up options, read by jemalloc itself through this
/// symbol (`malloc_conf`, with the `_rjem_` prefix of tikv-jemalloc-sys).
/// Freed pages go back to the system after 1 s instead of the default
/// 10 s: filling a `maxmemory 128mb` server with 3,050,402 32-byte SETs
/// (allkeys-lru) peaked at VmHWM 175-180 MB with the default and 151-154
/// MB with this, ending at RSS 144-148 MB against 150-153 MB. The purging is
/// done by the background threads `alloc::set_global` starts.
/// `_RJEM_MALLOC_CONF` in the environment still overrides it.
#[cfg(feature = "jemalloc")]
#[allow(unsafe_code)] // exporting a symbol is `unsafe_code`; it is plain data.
#[export_name = "_rjem_malloc_conf"]
pub static MALLOC_CONF: &[u8; 20] = b"dirty_decay_ms:1000\0";

#[cfg(all(feature = "mimalloc", not(feature = "jemalloc")))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Redis's start-up line comes before its configuration is read, so
    // scripts that wait for it (Redis's own test suite among them: it looks
    // for " PID: N" before anything else) see a server that refused its
    // configuration exit instead of waiting minutes for it to start.
    if !args
        .iter()
        .any(|a| matches!(a.as_str(), "-h" | "--help" | "-v" | "--version"))
    {
        println!(
            "FerrumKV {} (Redis {} compatible) starting, PID: {}",
            env!("CARGO_PKG_VERSION"),
            ferrum_server::REDIS_VERSION,
            std::process::id()
        );
    }
    let config = match Config::from_args(args) {
        Ok(config) => config,
        Err(ConfigError::Help) => {
            print!("{USAGE}");
            return Ok(());
        }
        Err(ConfigError::Version) => {
            println!(
                "ferrum-server v={} (redis_version={})",
                env!("CARGO_PKG_VERSION"),
                ferrum_server::REDIS_VERSION
            );
            return Ok(());
        }
        Err(e) => {
            eprintln!("{}", e.fatal_report());
            std::process::exit(1);
        }
    };
    init_logging(config.loglevel);
    ferrum_server::alloc::set_global(ferrum_server::alloc::SELECTED);
    let runtime = ferrum_server::runtime::builder(worker_count(config.worker_threads))
        .build()
        .context("could not start the runtime")?;
    runtime.block_on(async {
        // Register for the signals before announcing readiness, so a signal
        // sent as soon as the server says it is ready is never missed.
        let signals = Signals::register().context("could not install signal handlers")?;
        // After " PID: N" (above), the second line scripts wait for:
        // "Ready to accept connections".
        let port = config.port;
        let server = match Server::bind(config).await {
            Ok(server) => server,
            Err(e) => {
                tracing::warn!("Failed listening on port {port} (TCP), aborting: {e:#}");
                return Err(e);
            }
        };
        let shutdown = CancellationToken::new();
        tokio::spawn(signals.cancel_on_signal(server.shutdown_hook(), shutdown.clone()));
        if let Err(e) = server.run(shutdown).await {
            if e.is::<ferrum_server::SnapshotError>() {
                tracing::error!("Fatal error loading the DB: {e:#}. Exiting.");
                tracing::error!("Terminating server after rdb file reading failure.");
            }
            return Err(e);
        }
        tracing::info!("FerrumKV is now ready to exit, bye bye...");
        Ok(())
    })
}

/// SIGINT and SIGTERM handlers, installed up front.
struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    fn register() -> std::io::Result<Signals> {
        use tokio::signal::unix::{signal, SignalKind};
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
        })
    }

    /// Cancels `shutdown` on SIGINT or SIGTERM, once `hook` allows it (a
    /// save it makes may fail: the server then goes on, as Redis does,
    /// until the next signal).
    async fn cancel_on_signal(
        mut self,
        hook: ferrum_server::ShutdownHook,
        shutdown: CancellationToken,
    ) {
        loop {
            let signal = tokio::select! {
                _ = self.interrupt.recv() => "sigint",
                _ = self.terminate.recv() => "sigterm",
            };
            tracing::info!("received {}, shutting down", signal.to_ascii_uppercase());
            let hook = hook.clone();
            let stop = tokio::task::spawn_blocking(move || hook.before_stop(signal)).await;
            if stop.unwrap_or(true) {
                shutdown.cancel();
                return;
            }
        }
    }
}

/// The runtime's worker threads: `worker-threads` when set; else tokio's
/// own `TOKIO_WORKER_THREADS` when that is set (`None`: tokio reads it);
/// else three quarters of the CPUs, at least one. That is Redis's advice
/// for `io-threads` (2-3 of 4 cores, 6 of 8), for the same reason: the
/// kernel's network processing, and often the clients, need CPU too. On 2
/// cores one worker costs less CPU per request than two and serves more
/// requests per second (issue 15's notes).
fn worker_count(configured: u32) -> Option<usize> {
    if configured > 0 {
        return Some(configured as usize);
    }
    if std::env::var_os("TOKIO_WORKER_THREADS").is_some() {
        return None;
    }
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    Some((cpus * 3 / 4).max(1))
}

/// Logs to stdout at the configured `loglevel`, which `CONFIG SET
/// loglevel` changes later; `RUST_LOG`, when set, fixes the filter.
fn init_logging(loglevel: &str) {
    use tracing_subscriber::prelude::*;
    use tracing_subscriber::{reload, EnvFilter};
    let from_env = EnvFilter::try_from_default_env().ok();
    let pinned = from_env.is_some();
    let filter =
        from_env.unwrap_or_else(|| EnvFilter::new(ferrum_server::logging::filter_for(loglevel)));
    let (filter, handle) = reload::Layer::new(filter);
    tracing_subscriber::registry()
        .with(filter)
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout())),
        )
        .init();
    if !pinned {
        ferrum_server::logging::install(move |f| {
            let _ = handle.reload(EnvFilter::new(f));
        });
    }
}
