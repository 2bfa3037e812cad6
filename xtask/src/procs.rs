//! Servers started for a benchmark: FerrumKV and redis-server as child
//! processes on free 127.0.0.1 ports, stopped by their own PID when dropped.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// Which server to start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ServerKind {
    /// `target/release/ferrum-server`.
    Ferrum,
    /// Debian's `redis-server`.
    Redis,
}

impl ServerKind {
    /// The name used in reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ServerKind::Ferrum => "ferrumkv",
            ServerKind::Redis => "redis",
        }
    }
}

/// A running server; killed and reaped on drop.
#[derive(Debug)]
pub(crate) struct ServerProcess {
    child: Child,
    /// The port it listens on, on 127.0.0.1.
    pub(crate) port: u16,
    /// Its `dir`, of its own and empty at the start (no snapshot left in
    /// a working directory is loaded), removed on drop.
    dir: PathBuf,
}

/// Runs `cells` once per `(server, policy)`, each on a server of its own
/// (started with `extra(kind)`, logging to `log(kind, policy)`), all at
/// once: replays are bound by round trips, not by the CPU. The cells come
/// back in `servers`' order.
pub(crate) fn on_each_server<T: Send>(
    servers: &[(ServerKind, String)],
    target: &Path,
    extra: impl Fn(ServerKind) -> &'static [&'static str] + Sync,
    log: impl Fn(ServerKind, &str) -> PathBuf + Sync,
    cells: impl Fn(&ServerProcess, ServerKind, &str) -> Result<Vec<T>> + Sync,
) -> Result<Vec<T>> {
    let (extra, log, cells) = (&extra, &log, &cells);
    std::thread::scope(|scope| {
        let handles: Vec<_> = servers
            .iter()
            .map(|(kind, policy)| {
                scope.spawn(move || {
                    let server =
                        ServerProcess::start(*kind, target, extra(*kind), &log(*kind, policy))?;
                    cells(&server, *kind, policy)
                })
            })
            .collect();
        let mut all = Vec::new();
        for h in handles {
            let part = h
                .join()
                .map_err(|_| anyhow::anyhow!("a server's thread panicked"))?;
            all.extend(part?);
        }
        Ok(all)
    })
}

/// A port that was free a moment ago on 127.0.0.1.
pub(crate) fn free_port() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").context("cannot bind 127.0.0.1")?;
    Ok(listener.local_addr()?.port())
}

/// Whether `program` can be run (`--version` succeeds).
pub(crate) fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

impl ServerProcess {
    /// Starts `kind` with `extra` options (`--name value` pairs, as both
    /// servers take them) and waits until it accepts connections. FerrumKV
    /// gets `--enable-debug-command yes` so the live driver can drive its
    /// clock; both get their save points off (no background save in a
    /// measurement) and Redis its append-only file off.
    pub(crate) fn start(
        kind: ServerKind,
        target_dir: &Path,
        extra: &[&str],
        log: &Path,
    ) -> Result<ServerProcess> {
        // `free_port` releases the port before the server binds it, so a
        // process started at the same moment (another test's server) can
        // take it: this one then exits at startup, or the readiness check
        // reaches the other one. Both show as an exit, checked again after
        // the port answers; a new port is tried then.
        let mut attempt = 0;
        loop {
            attempt += 1;
            match ServerProcess::start_once(kind, target_dir, extra, log) {
                Err(e) if attempt < 3 && e.to_string().contains("exited at startup") => {}
                other => return other,
            }
        }
    }

    fn start_once(
        kind: ServerKind,
        target_dir: &Path,
        extra: &[&str],
        log: &Path,
    ) -> Result<ServerProcess> {
        let port = free_port()?;
        let port_s = port.to_string();
        let (program, mut args): (PathBuf, Vec<&str>) = match kind {
            ServerKind::Ferrum => (
                target_dir.join("release/ferrum-server"),
                vec!["--enable-debug-command", "yes", "--save", ""],
            ),
            ServerKind::Redis => (
                PathBuf::from("redis-server"),
                vec!["--save", "", "--appendonly", "no"],
            ),
        };
        let dir = std::env::temp_dir().join(format!("xtask-{}-{port}", kind.name()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let dir_s = dir.to_string_lossy().into_owned();
        args.extend(["--bind", "127.0.0.1", "--port", &port_s, "--dir", &dir_s]);
        args.extend(extra);
        let log_file = std::fs::File::create(log)
            .with_context(|| format!("cannot create {}", log.display()))?;
        let mut child = Command::new(&program)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(log_file.try_clone()?)
            .stderr(log_file)
            .spawn()
            .with_context(|| format!("cannot start {}", program.display()))?;
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = child.try_wait()? {
                let _ = std::fs::remove_dir_all(&dir);
                bail!(
                    "{} {} exited at startup ({status}); see {}",
                    kind.name(),
                    args.join(" "),
                    log.display()
                );
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                // A server that lost the port to another exits right away.
                thread::sleep(Duration::from_millis(200));
                if let Some(status) = child.try_wait()? {
                    let _ = std::fs::remove_dir_all(&dir);
                    bail!(
                        "{} on port {port} exited at startup ({status}); see {}",
                        kind.name(),
                        log.display()
                    );
                }
                return Ok(ServerProcess { child, port, dir });
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                let _ = std::fs::remove_dir_all(&dir);
                bail!("{} did not listen on port {port} within 20 s", kind.name());
            }
            thread::sleep(Duration::from_millis(50));
        }
    }
}

impl ServerProcess {
    /// Its process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its `dir`, where a save writes `dump.rdb`.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The process's resident set size from /proc (0 where unreadable).
    pub(crate) fn rss_bytes(&self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .ok()
            .and_then(|s| {
                let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
                line.split_whitespace().nth(1)?.parse::<u64>().ok()
            })
            .map_or(0, |kib| kib * 1024)
    }
}

impl ServerProcess {
    /// The server's CPU time so far, in nanoseconds (see [`cpu_ns`]).
    pub(crate) fn cpu_ns(&self) -> Option<u64> {
        cpu_ns(self.child.id())
    }
}

/// The CPU time of process `pid` so far, in nanoseconds: the scheduler's
/// own count, summed over its live threads from
/// `/proc/PID/task/*/schedstat` (finer than the 10 ms ticks of
/// `/proc/PID/stat`). None once the process is gone or where /proc does
/// not say.
pub(crate) fn cpu_ns(pid: u32) -> Option<u64> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut total = None;
    for task in tasks.flatten() {
        // A thread may exit between the listing and the read: skip it.
        let Ok(stat) = std::fs::read_to_string(task.path().join("schedstat")) else {
            continue;
        };
        if let Some(ns) = stat
            .split_whitespace()
            .next()
            .and_then(|f| f.parse::<u64>().ok())
        {
            *total.get_or_insert(0) += ns;
        }
    }
    total
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // Only this child, by its PID.
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
