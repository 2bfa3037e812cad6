//! The accept loops: each listening socket's loop admits or refuses the
//! clients it accepts, registers them, and serves each in a task of its
//! own. The sockets are `crate::listen`'s; [`starter`] is what it calls
//! to serve one.
//!
//! A TLS handshake runs in the new connection's own task, never in the
//! loop, so a slow or hostile client cannot hold up anyone else's accept.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use bytes::BytesMut;
use ferrum_proto::{Frame, Protocol};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::connection::{serve, Closed};
use crate::listen::{Acceptor, Family, Starter};
use crate::shared::Shared;
use crate::stream::{ClientStream, Handshake, Plain, Tls};

/// What `Listeners` calls to serve a socket: an accept loop on the
/// server's task tracker, plain or TLS by the socket's family. Holds the
/// server weakly: `Shared` owns the listeners, which own this.
pub(crate) fn starter(shared: Weak<Shared>) -> Starter {
    Box::new(move |family, socket| {
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let tasks = shared.listeners.tasks().clone();
        match (family, shared.tls.clone()) {
            (Family::Plain, _) => {
                tasks.spawn(accept_loop(socket, Plain, shared));
            }
            (Family::Tls, Some(context)) => {
                tasks.spawn(accept_loop(socket, Tls(context), shared));
            }
            // TLS sockets exist only when TLS is configured.
            (Family::Tls, None) => {}
        }
    })
}

/// Accepts connections on one socket until it closes or the server
/// shuts down. Each socket's handshake (a ready future on the plain
/// port) runs in the connection's own task, after the client was
/// admitted and registered, so it counts against `maxclients` and
/// shows in `CLIENT LIST` from the start, as in Redis.
async fn accept_loop<H: Handshake>(acceptor: Acceptor, handshake: H, shared: Arc<Shared>) {
    let listeners = &shared.listeners;
    let (tasks, shutdown) = (
        listeners.tasks().clone(),
        listeners.shutdown_token().clone(),
    );
    loop {
        let (socket, addr) = match acceptor.accept().await {
            Some(Ok(a)) => a,
            // Closed by `rebind`, or the server shuts down.
            None => break,
            Some(Err(e)) => {
                // Out of file descriptors and the like: back off.
                tracing::warn!("accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        admit(&shared, &tasks, &shutdown, &handshake, socket, addr);
    }
}

/// Admits or refuses one accepted socket; an admitted one is registered
/// and served in a task of its own.
fn admit<H: Handshake>(
    shared: &Arc<Shared>,
    tasks: &TaskTracker,
    shutdown: &CancellationToken,
    handshake: &H,
    socket: TcpStream,
    addr: SocketAddr,
) {
    shared
        .stats
        .connections_received
        .fetch_add(1, Ordering::Relaxed);
    // As Redis does: without it, replies sit behind Nagle's algorithm
    // waiting for delayed ACKs.
    let _ = socket.set_nodelay(true);
    let laddr = socket.local_addr().unwrap_or(addr);
    let stream = handshake.start(socket);
    if let Some(text) = refusal(shared, addr.ip()) {
        shared
            .stats
            .rejected_connections
            .fetch_add(1, Ordering::Relaxed);
        tasks.spawn(async move {
            if let Ok(stream) = stream.await {
                refuse(stream, text).await;
            }
        });
        return;
    }
    let handle = shared
        .clients
        .register(addr, laddr, shared.acl.default_user());
    let (shared, shutdown) = (shared.clone(), shutdown.clone());
    tasks.spawn(async move {
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
}

/// Why a new client is turned away, if it is: `maxclients` reached, or
/// protected mode.
fn refusal(shared: &Shared, peer: IpAddr) -> Option<&'static str> {
    let maxclients = shared.config().maxclients as usize;
    if shared.clients.len() >= maxclients {
        return Some(crate::error::MAX_CLIENTS);
    }
    let protected = shared.config().protected_mode;
    protected_mode_refuses(protected, shared.requires_auth(), peer)
        .then_some(crate::error::PROTECTED_MODE_DENIED)
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
