//! The exporter's HTTP endpoint: just enough HTTP/1.1 to answer
//! `GET /metrics`, one request per connection.
//!
//! We bind and serve the socket ourselves rather than use the exporter
//! crate's `http-listener`: that listener binds inside its own future and
//! never tells which port it got, so `metrics-addr 127.0.0.1:0` (what tests
//! use) would be unusable; it also renders a recorder that something must
//! keep updating, whereas here each request reads the counters at that
//! moment. Scrapers send one small GET and accept `Connection: close`, so a
//! full HTTP stack (hyper) would be weight without benefit.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::exposition::Snapshot;
use crate::shared::Shared;

/// The content type of the text exposition format.
const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";
/// The longest request head accepted; a scrape's is a few hundred bytes.
const MAX_HEAD_BYTES: usize = 8 * 1024;
/// How long a client may take to send its request head.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves scrapes on `listener` until `shutdown` is cancelled.
pub(crate) async fn serve(listener: TcpListener, shared: Arc<Shared>, shutdown: CancellationToken) {
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            () = shutdown.cancelled() => break,
        };
        match accepted {
            Ok((socket, _)) => {
                let shared = shared.clone();
                connections.spawn(async move {
                    if let Err(e) = handle(socket, &shared).await {
                        tracing::debug!("metrics connection: {e}");
                    }
                });
            }
            Err(e) => {
                tracing::warn!("metrics accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        while connections.try_join_next().is_some() {}
    }
    // A scrape in flight is cut short: the server is going away anyway.
    connections.shutdown().await;
}

async fn handle(mut socket: TcpStream, shared: &Shared) -> std::io::Result<()> {
    let head = match tokio::time::timeout(READ_TIMEOUT, read_head(&mut socket)).await {
        Ok(head) => head?,
        Err(_) => return Ok(()),
    };
    let reply = respond(&head, || Snapshot::take(shared).render());
    socket.write_all(&reply).await?;
    socket.shutdown().await
}

/// Reads until the blank line that ends the request head (or EOF, or
/// [`MAX_HEAD_BYTES`]). A body, which a GET does not have, is ignored.
async fn read_head(socket: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD_BYTES {
        let n = socket.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    Ok(head)
}

/// The complete response to a request whose head is `head`; `render`
/// produces the exposition and is called only for `GET /metrics`.
pub(crate) fn respond(head: &[u8], render: impl FnOnce() -> String) -> Vec<u8> {
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut parts = line.trim_end().split(' ');
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let (status, content_type, body, head_only) = match (method, path) {
        ("GET" | "HEAD", "/metrics") => ("200 OK", CONTENT_TYPE, render(), method == "HEAD"),
        ("GET" | "HEAD", "/") => (
            "200 OK",
            "text/plain; charset=utf-8",
            "FerrumKV: Prometheus metrics are at /metrics\n".to_owned(),
            method == "HEAD",
        ),
        ("GET" | "HEAD", _) => (
            "404 Not Found",
            "text/plain; charset=utf-8",
            "not found: try /metrics\n".to_owned(),
            method == "HEAD",
        ),
        _ => (
            "405 Method Not Allowed",
            "text/plain; charset=utf-8",
            "only GET and HEAD are served\n".to_owned(),
            false,
        ),
    };
    let allow = if status.starts_with("405") {
        "Allow: GET, HEAD\r\n"
    } else {
        ""
    };
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{allow}Connection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if !head_only {
        out.extend_from_slice(body.as_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(head: &str) -> String {
        String::from_utf8(respond(head.as_bytes(), || "m 1\n".to_owned())).expect("utf-8")
    }

    #[test]
    fn metrics_get_renders_with_the_exposition_content_type() {
        let r = text("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n");
        assert_eq!(
            r,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: 4\r\nConnection: close\r\n\r\nm 1\n"
        );
        assert!(text("GET /metrics?x=1 HTTP/1.0\r\n\r\n").ends_with("\r\n\r\nm 1\n"));
    }

    #[test]
    fn head_has_no_body_and_others_get_errors() {
        assert!(text("HEAD /metrics HTTP/1.1\r\n\r\n")
            .ends_with("Content-Length: 4\r\nConnection: close\r\n\r\n"));
        assert!(text("GET /nope HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404 Not Found\r\n"));
        let r = text("POST /metrics HTTP/1.1\r\n\r\n");
        assert!(r.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"), "{r}");
        assert!(r.contains("Allow: GET, HEAD\r\n"));
        assert!(text("").starts_with("HTTP/1.1 405"), "garbage is refused");
    }

    #[test]
    fn render_runs_only_for_metrics() {
        let called = std::cell::Cell::new(false);
        respond(b"GET / HTTP/1.1\r\n\r\n", || {
            called.set(true);
            String::new()
        });
        assert!(!called.get());
    }
}
