//! A FerrumKV running in the test process, for the driver tests.

use std::net::SocketAddr;
use std::sync::mpsc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use ferrum_server::{Config, Server};
use tokio_util::sync::CancellationToken;

/// A FerrumKV on a free 127.0.0.1 port, with `DEBUG` enabled, stopped on
/// drop.
pub(crate) struct TestServer {
    /// Where it listens.
    pub(crate) addr: SocketAddr,
    shutdown: CancellationToken,
    thread: Option<JoinHandle<()>>,
}

impl TestServer {
    /// Starts one and waits until it listens.
    pub(crate) fn start() -> TestServer {
        TestServer::start_with(&[])
    }

    /// Starts one with `extra` options too and waits until it listens.
    // Each test file compiles this module on its own; not all use this.
    #[allow(dead_code)]
    pub(crate) fn start_with(extra: &[&str]) -> TestServer {
        let args = [
            "--port",
            "0",
            "--bind",
            "127.0.0.1",
            "--enable-debug-command",
            "yes",
        ]
        .iter()
        .chain(extra)
        .map(|a| a.to_string());
        let config = Config::from_args(args).expect("valid configuration");
        let shutdown = CancellationToken::new();
        let token = shutdown.clone();
        let (tx, rx) = mpsc::channel();
        let thread = thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let server = Server::bind(config).await.expect("bind");
                tx.send(server.local_addr()).expect("report address");
                server.run(token).await.expect("server run");
            });
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("server started");
        TestServer {
            addr,
            shutdown,
            thread: Some(thread),
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
