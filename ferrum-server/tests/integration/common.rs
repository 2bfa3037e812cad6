//! Starting and stopping a server for a test, and small client helpers.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::thread::JoinHandle;
use std::time::Duration;

use ferrum_server::{Config, Server};
use tokio_util::sync::CancellationToken;

/// A server running on its own thread and runtime, bound to 127.0.0.1 on a
/// port the OS picked. Dropping it shuts the server down and waits for it.
pub(crate) struct TestServer {
    pub(crate) addr: SocketAddr,
    /// The Prometheus endpoint, when started with `--metrics-addr`.
    pub(crate) metrics_addr: Option<SocketAddr>,
    /// The TLS port, when started with `--tls-port`.
    pub(crate) tls_addr: Option<SocketAddr>,
    /// A directory of its own for `dir` (snapshots), removed on drop.
    pub(crate) dir: std::path::PathBuf,
    shutdown: CancellationToken,
    thread: Option<JoinHandle<()>>,
}

/// A new empty directory under the system's temporary directory.
pub(crate) fn temp_dir(what: &str) -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("ferrum-{what}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

impl TestServer {
    /// A server with default settings plus `DEBUG` enabled.
    pub(crate) fn start() -> TestServer {
        TestServer::start_with(&[])
    }

    /// A server with extra `--name value` arguments.
    pub(crate) fn start_with(extra: &[&str]) -> TestServer {
        TestServer::start_on(2, extra)
    }

    /// A server started from the configuration file at `path` (which the
    /// test arguments then override), as `ferrum-server path --port 0 ...`.
    pub(crate) fn start_from_file(path: &std::path::Path) -> TestServer {
        TestServer::start_args(2, Some(path), &[], true)
    }

    /// A server whose runtime has `workers` worker threads, with extra
    /// `--name value` arguments.
    pub(crate) fn start_on(workers: usize, extra: &[&str]) -> TestServer {
        TestServer::start_args(workers, None, extra, true)
    }

    /// [`TestServer::start_with`], returning while a snapshot in its
    /// directory may still be loading.
    pub(crate) fn start_loading(extra: &[&str]) -> TestServer {
        TestServer::start_args(2, None, extra, false)
    }

    fn start_args(
        workers: usize,
        file: Option<&std::path::Path>,
        extra: &[&str],
        wait_loaded: bool,
    ) -> TestServer {
        let file = file.map(|p| p.to_string_lossy().into_owned());
        let mut args: Vec<String> = file.into_iter().collect();
        // Snapshots go to a directory of the server's own, never the
        // working directory (a `--dir` among `extra` wins).
        let dir = temp_dir("test-server");
        args.extend(
            [
                "--port",
                "0",
                "--bind",
                "127.0.0.1",
                "--enable-debug-command",
                "yes",
                "--dir",
                &dir.to_string_lossy(),
            ]
            .iter()
            .map(|s| s.to_string()),
        );
        args.extend(extra.iter().map(|s| s.to_string()));
        let config = Config::from_args(args).expect("valid test configuration");
        let shutdown = CancellationToken::new();
        let (tx, rx) = std::sync::mpsc::channel();
        let token = shutdown.clone();
        let thread = std::thread::spawn(move || {
            let rt = ferrum_server::runtime::builder(Some(workers))
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let server = Server::bind(config).await.expect("bind");
                tx.send((
                    server.local_addr(),
                    server.metrics_addr(),
                    server.tls_addr(),
                ))
                .expect("report address");
                server.run(token).await.expect("server run");
            });
        });
        let (addr, metrics_addr, tls_addr) = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("server started");
        let server = TestServer {
            addr,
            metrics_addr,
            tls_addr,
            dir,
            shutdown,
            thread: Some(thread),
        };
        // A snapshot in the server's directory loads while it serves:
        // tests start once it has (`-LOADING` otherwise).
        let data_dir = extra
            .windows(2)
            .rfind(|w| w[0] == "--dir")
            .map(|w| std::path::PathBuf::from(w[1]))
            .unwrap_or_else(|| server.dir.clone());
        if wait_loaded && data_dir.join("dump.rdb").exists() {
            server.wait_loaded();
        }
        server
    }

    /// Waits until the snapshot the server found at start has loaded:
    /// until `PING` is no longer answered with `-LOADING`.
    pub(crate) fn wait_loaded(&self) {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let mut raw = self.raw();
        loop {
            raw.send(b"*1\r\n$4\r\nPING\r\n");
            let reply = raw.read_line();
            if !reply.starts_with("-LOADING") {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the snapshot did not load in 30 s"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// A `redis` crate connection.
    pub(crate) fn client(&self) -> redis::Connection {
        let c = redis::Client::open(format!("redis://{}/", self.addr))
            .expect("client")
            .get_connection()
            .expect("connect");
        // A hang fails the test with a message instead of stalling it.
        c.set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        c.set_write_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        c
    }

    /// A raw socket for protocol-level tests.
    pub(crate) fn raw(&self) -> Raw {
        let stream = TcpStream::connect(self.addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        Raw { stream }
    }

    /// Moves the server's clock forward by `ms` (via `DEBUG ADVANCE-CLOCK`).
    pub(crate) fn advance(&self, con: &mut redis::Connection, ms: u64) {
        let _: () = redis::cmd("DEBUG")
            .arg("ADVANCE-CLOCK")
            .arg(ms)
            .query(con)
            .expect("advance clock");
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A raw RESP connection.
pub(crate) struct Raw {
    pub(crate) stream: TcpStream,
}

impl Raw {
    /// Sends bytes as they are.
    pub(crate) fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("write");
    }

    /// Reads until `expected.len()` bytes arrived (or the peer closed) and
    /// returns what came.
    pub(crate) fn read_exact_len(&mut self, len: usize) -> Vec<u8> {
        let mut out = vec![0u8; len];
        let mut got = 0;
        while got < len {
            match self.stream.read(&mut out[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) => panic!("read failed after {got} bytes: {e}"),
            }
        }
        out.truncate(got);
        out
    }

    /// Sends `request` and asserts the reply is exactly `reply`.
    pub(crate) fn roundtrip(&mut self, request: &[u8], reply: &[u8]) {
        self.send(request);
        let got = self.read_exact_len(reply.len());
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(reply),
            "reply to {:?}",
            String::from_utf8_lossy(request)
        );
    }

    /// Reads one line, without its CRLF.
    pub(crate) fn read_line(&mut self) -> String {
        let mut line = Vec::new();
        let mut b = [0u8; 1];
        while !line.ends_with(b"\r\n") {
            match self.stream.read(&mut b) {
                Ok(0) => break,
                Ok(_) => line.push(b[0]),
                Err(e) => panic!("read failed: {e}"),
            }
        }
        String::from_utf8_lossy(&line).trim_end().to_owned()
    }

    /// Whether the server closed the connection (reads EOF).
    pub(crate) fn is_closed(&mut self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.stream.read(&mut b), Ok(0) | Err(_))
    }
}

/// `v` in order, to compare replies whose order is random.
pub(crate) fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// Encodes a command as a RESP array of bulk strings.
pub(crate) fn resp(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Runs a command and returns its result, errors included.
pub(crate) fn run<T: redis::FromRedisValue>(
    con: &mut redis::Connection,
    args: &[&str],
) -> redis::RedisResult<T> {
    let mut c = redis::cmd(args[0]);
    for a in &args[1..] {
        c.arg(*a);
    }
    c.query(con)
}

/// One `INFO` section as `field -> value`.
pub(crate) fn info_fields(
    c: &mut redis::Connection,
    section: &str,
) -> std::collections::HashMap<String, String> {
    let info: String = run(c, &["INFO", section]).expect("INFO");
    info.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.trim().to_string()))
        .collect()
}

/// The error text of a command that must fail (code and message joined).
pub(crate) fn err(con: &mut redis::Connection, args: &[&str]) -> String {
    match run::<redis::Value>(con, args) {
        Ok(v) => panic!("{args:?} succeeded with {v:?}"),
        Err(e) => {
            let code = e.code().unwrap_or("");
            let detail = e.detail().unwrap_or("");
            format!("{code} {detail}").trim().to_string()
        }
    }
}

impl Raw {
    /// Switches the connection to RESP3 (`HELLO 3`) and discards the
    /// handshake reply, whose length depends on the server.
    pub(crate) fn hello3(&mut self) {
        self.send(b"HELLO 3\r\nECHO end-of-hello\r\n");
        let mut got = Vec::new();
        let mut b = [0u8; 256];
        while !got.ends_with(b"end-of-hello\r\n") {
            let n = self.stream.read(&mut b).expect("read hello reply");
            assert!(n > 0, "closed during HELLO");
            got.extend_from_slice(&b[..n]);
        }
    }
}
