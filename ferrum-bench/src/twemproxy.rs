//! twemproxy (`nutcracker`, Debian's package) in front of FerrumKV nodes:
//! its configuration written from a [`PoolConfig`], and a [`Nutcracker`]
//! process on a free 127.0.0.1 port, stopped by its own PID when dropped.
//!
//! The sharded replay ([`crate::sharded`]) and the twemproxy tests start it
//! this way, so the pool they measure is the one `deploy/twemproxy/`
//! documents: ketama over `fnv1a_64`, `redis: true`, one name per node.

use std::fmt::Write as _;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Where Debian's `nutcracker` package installs the program: `/usr/sbin`,
/// which is on root's `PATH` but often not on a user's.
const DEBIAN_PATH: &str = "/usr/sbin/nutcracker";

/// The `nutcracker` to run: Debian's when it is there, else whichever is
/// on `PATH`.
pub fn program() -> PathBuf {
    let debian = Path::new(DEBIAN_PATH);
    if debian.is_file() {
        debian.to_owned()
    } else {
        PathBuf::from("nutcracker")
    }
}

/// Whether `nutcracker` can be run here.
pub fn available() -> bool {
    Command::new(program())
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// One twemproxy server pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolConfig {
    /// The nodes, in ring order; each is named `ferrum-<i>` (from 1) on the
    /// hash ring, so the ring depends on the names, not the ports.
    pub servers: Vec<SocketAddr>,
    /// Milliseconds twemproxy waits to connect to a node or for its reply.
    /// Default: 400.
    pub timeout_ms: u64,
    /// Take a failing node out of the ring. Default: true.
    pub auto_eject_hosts: bool,
    /// Consecutive failures that eject a node. Default: 2.
    pub server_failure_limit: u32,
    /// Milliseconds before an ejected node is tried again. Default: 30 000.
    pub server_retry_timeout_ms: u64,
    /// Connections twemproxy opens to each node. Default: 4.
    pub server_connections: u32,
}

impl PoolConfig {
    /// The defaults of `deploy/twemproxy/nutcracker.yml` for `servers`.
    pub fn new(servers: Vec<SocketAddr>) -> PoolConfig {
        PoolConfig {
            servers,
            timeout_ms: 400,
            auto_eject_hosts: true,
            server_failure_limit: 2,
            server_retry_timeout_ms: 30_000,
            server_connections: 4,
        }
    }

    /// The YAML of a pool named `ferrum` listening on `listen`.
    pub fn to_yaml(&self, listen: SocketAddr) -> String {
        let mut out = format!(
            "ferrum:\n  listen: {listen}\n  redis: true\n  hash: fnv1a_64\n  distribution: ketama\n  \
             hash_tag: \"{{}}\"\n  timeout: {}\n  auto_eject_hosts: {}\n  server_failure_limit: {}\n  \
             server_retry_timeout: {}\n  preconnect: true\n  server_connections: {}\n  servers:\n",
            self.timeout_ms,
            self.auto_eject_hosts,
            self.server_failure_limit,
            self.server_retry_timeout_ms,
            self.server_connections,
        );
        for (i, server) in self.servers.iter().enumerate() {
            let _ = writeln!(out, "    - {server}:1 ferrum-{}", i + 1);
        }
        out
    }
}

/// Errors starting twemproxy.
#[derive(Debug, thiserror::Error)]
pub enum NutcrackerError {
    /// The configuration could not be written or the program not run.
    #[error("cannot start nutcracker: {0}")]
    Io(#[from] std::io::Error),
    /// It exited or did not listen in time.
    #[error("nutcracker {what}; its log:\n{log}")]
    NotListening {
        /// What happened.
        what: String,
        /// Its log (the files are removed with the process).
        log: String,
    },
}

/// A running `nutcracker`; killed (by its PID) and its files removed on
/// drop.
#[derive(Debug)]
pub struct Nutcracker {
    child: Child,
    addr: SocketAddr,
    dir: PathBuf,
}

impl Nutcracker {
    /// Writes `pool`'s configuration to a fresh directory under the system
    /// temp directory, starts `nutcracker` on free 127.0.0.1 ports (client
    /// and stats) and waits up to 20 s until it accepts connections.
    ///
    /// # Errors
    ///
    /// If the files cannot be written, the program is missing, or it exits
    /// or does not listen in time.
    pub fn start(pool: &PoolConfig) -> Result<Nutcracker, NutcrackerError> {
        let (listen, stats) = (free_port()?, free_port()?);
        let addr = SocketAddr::from(([127, 0, 0, 1], listen));
        let dir =
            std::env::temp_dir().join(format!("ferrum-nutcracker-{}-{listen}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let conf = dir.join("nutcracker.yml");
        std::fs::write(&conf, pool.to_yaml(addr))?;
        let log = dir.join("nutcracker.log");
        // A configuration it refuses is reported on stderr, before its own
        // log opens: both go to the one file, appended.
        let stderr = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)?;
        let child = Command::new(program())
            .arg("-c")
            .arg(&conf)
            .arg("-o")
            .arg(&log)
            .args(["-s", &stats.to_string(), "-a", "127.0.0.1"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()?;
        let mut proxy = Nutcracker { child, addr, dir };
        proxy.wait_listening(&log)?;
        Ok(proxy)
    }

    /// The address clients connect to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    fn wait_listening(&mut self, log: &Path) -> Result<(), NutcrackerError> {
        let deadline = Instant::now() + Duration::from_secs(20);
        let failed = |what: String| NutcrackerError::NotListening {
            what,
            log: std::fs::read_to_string(log).unwrap_or_default(),
        };
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Err(failed(format!("exited at startup ({status})")));
            }
            if TcpStream::connect(self.addr).is_ok() {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(failed(format!(
                    "did not listen on {} within 20 s",
                    self.addr
                )));
            }
            thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Nutcracker {
    fn drop(&mut self) {
        // Only this child, by its PID.
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A port that was free a moment ago on 127.0.0.1.
fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_names_each_node_and_lists_it_with_weight_one() {
        let servers = vec![
            "127.0.0.1:7001".parse().unwrap(),
            "127.0.0.1:7002".parse().unwrap(),
        ];
        let yaml = PoolConfig::new(servers).to_yaml("127.0.0.1:22121".parse().unwrap());
        assert!(
            yaml.starts_with("ferrum:\n  listen: 127.0.0.1:22121\n"),
            "{yaml}"
        );
        assert!(yaml.contains("\n  distribution: ketama\n"), "{yaml}");
        assert!(yaml.contains("\n  auto_eject_hosts: true\n"), "{yaml}");
        assert!(
            yaml.ends_with("    - 127.0.0.1:7001:1 ferrum-1\n    - 127.0.0.1:7002:1 ferrum-2\n"),
            "{yaml}"
        );
    }

    #[test]
    fn a_pool_nutcracker_refuses_is_an_error_with_its_reason() {
        if !available() {
            eprintln!("skipped: nutcracker is not installed (apt-get install nutcracker)");
            return;
        }
        match Nutcracker::start(&PoolConfig::new(Vec::new())) {
            Err(NutcrackerError::NotListening { what, log }) => {
                assert!(what.starts_with("exited at startup"), "{what}");
                assert!(log.contains("syntax is invalid"), "{log}");
            }
            other => panic!("a pool without servers started: {other:?}"),
        }
    }
}
