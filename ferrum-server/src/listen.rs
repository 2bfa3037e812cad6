//! The listening sockets and their accept loops.
//!
//! Every `bind` address gets a socket on `port` and, when TLS is on, one on
//! `tls-port`; each socket has an accept loop. `CONFIG SET port`, `bind` and
//! `tls-port` replace a family of sockets while the server runs, as Redis 7
//! does: the old sockets close, the new ones bind, and when one cannot, the
//! old ones come back and the command fails. Connections already accepted
//! are left alone: they belong to the server's task tracker, not to the
//! loop that accepted them.
//!
//! An accept loop borrows its socket from a slot for the length of one
//! poll, so closing a socket is synchronous: once [`Listeners::rebind`] has
//! taken it out of its slot, the port is free for the next bind.
//!
//! A TLS handshake runs in the new connection's own task, never in the
//! loop, so a slow or hostile client cannot hold up anyone else's accept.

use std::future::poll_fn;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::BytesMut;
use ferrum_proto::{Frame, Protocol};
use socket2::{Domain, Socket, Type};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::connection::{serve, Closed};
use crate::shared::Shared;
use crate::stream::{ClientStream, Handshake, Plain};
use crate::tls::Tls;

/// Which port a socket serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    /// `port`: plain TCP.
    Plain,
    /// `tls-port`.
    Tls,
}

/// The server's sockets, the tasks they start, and the shutdown signal.
pub(crate) struct Listeners {
    /// The server the accept loops serve (`Shared` owns this struct).
    shared: Weak<Shared>,
    sockets: Mutex<Sockets>,
    /// Every accept loop and connection task, waited for at shutdown.
    tasks: TaskTracker,
    /// Cancelled at shutdown: accept loops and connections end.
    shutdown: CancellationToken,
}

#[derive(Default)]
struct Sockets {
    plain: Vec<Bound>,
    tls: Vec<Bound>,
    /// Whether [`Listeners::start`] ran: sockets bound before it wait for
    /// it, sockets bound after it get their loop at once.
    started: bool,
}

/// One listening socket.
struct Bound {
    addr: SocketAddr,
    /// The socket, until it is closed; the accept loop borrows it per poll.
    slot: Arc<Mutex<Option<TcpListener>>>,
    /// Ends this socket's accept loop (a child of the shutdown token).
    stop: CancellationToken,
}

impl Bound {
    /// Closes the socket now (the port is free on return) and ends its loop.
    fn close(self) {
        drop(lock(&self.slot).take());
        self.stop.cancel();
    }
}

impl Listeners {
    /// Holds sockets bound at start-up; their loops start with
    /// [`Listeners::start`].
    pub(crate) fn new(
        shared: Weak<Shared>,
        plain: Vec<TcpListener>,
        tls: Vec<TcpListener>,
    ) -> Listeners {
        let shutdown = CancellationToken::new();
        let bound = |sockets: Vec<TcpListener>| {
            sockets
                .into_iter()
                .map(|listener| adopt(listener, &shutdown))
                .collect::<Vec<_>>()
        };
        let sockets = Sockets {
            plain: bound(plain),
            tls: bound(tls),
            started: false,
        };
        Listeners {
            shared,
            sockets: Mutex::new(sockets),
            tasks: TaskTracker::new(),
            shutdown,
        }
    }

    /// Starts the accept loop of every socket bound so far.
    pub(crate) fn start(&self) {
        let mut sockets = lock(&self.sockets);
        sockets.started = true;
        for (family, bound) in [(Family::Plain, &sockets.plain), (Family::Tls, &sockets.tls)] {
            for socket in bound {
                self.spawn_loop(family, socket);
            }
        }
    }

    /// The addresses `family` listens on now.
    pub(crate) fn addrs(&self, family: Family) -> Vec<SocketAddr> {
        lock(&self.sockets)
            .of(family)
            .iter()
            .map(|s| s.addr)
            .collect()
    }

    /// The plain port served now (`INFO`'s `tcp_port`), 0 when none is.
    pub(crate) fn port(&self) -> u16 {
        lock(&self.sockets)
            .plain
            .first()
            .map_or(0, |s| s.addr.port())
    }

    /// The task tracker that shutdown waits on, for the server's other
    /// long-running tasks.
    pub(crate) fn tasks(&self) -> &TaskTracker {
        &self.tasks
    }

    /// The token cancelled at shutdown.
    pub(crate) fn shutdown_token(&self) -> &CancellationToken {
        &self.shutdown
    }

    /// Replaces `family`'s sockets with `bind` on `port` (none for port 0),
    /// as Redis's `changeListenPort`: the old sockets close first, so a new
    /// one may take the same address; if any address cannot be bound, none
    /// is, the old addresses are bound again, and the error is returned.
    ///
    /// # Errors
    ///
    /// The first bind's failure (address in use, not on this machine, ...).
    pub(crate) fn rebind(
        &self,
        family: Family,
        bind: &[String],
        port: u16,
        backlog: i32,
    ) -> io::Result<()> {
        let mut sockets = lock(&self.sockets);
        let old: Vec<SocketAddr> = sockets.of(family).iter().map(|s| s.addr).collect();
        for socket in sockets.of(family).drain(..) {
            socket.close();
        }
        let (bound, result) = match bind_all(bind, port, backlog) {
            Ok(new) => (new, Ok(())),
            Err(e) => {
                let back = old
                    .iter()
                    .filter_map(|&addr| match bind_one(addr, backlog) {
                        Ok(socket) => Some(socket),
                        Err(e) => {
                            tracing::warn!("could not bind {addr} again: {e}");
                            None
                        }
                    })
                    .collect();
                (back, Err(e))
            }
        };
        for socket in bound {
            let socket = adopt(TcpListener::from_std(socket)?, &self.shutdown);
            if sockets.started {
                self.spawn_loop(family, &socket);
            }
            sockets.of(family).push(socket);
        }
        result
    }

    /// Stops every accept loop and signals every connection to end.
    pub(crate) fn shut_down(&self) {
        self.shutdown.cancel();
    }

    /// Waits until every accept loop and connection task has ended.
    pub(crate) async fn wait(&self) {
        self.tasks.close();
        self.tasks.wait().await;
    }

    fn spawn_loop(&self, family: Family, socket: &Bound) {
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        let (slot, stop) = (socket.slot.clone(), socket.stop.clone());
        match (family, shared.tls.clone()) {
            (Family::Plain, _) => {
                self.tasks
                    .spawn(self.accept_loop(slot, stop, Plain, shared));
            }
            (Family::Tls, Some(context)) => {
                self.tasks
                    .spawn(self.accept_loop(slot, stop, Tls(context), shared));
            }
            // TLS sockets exist only when TLS is configured.
            (Family::Tls, None) => {}
        }
    }

    /// Accepts connections on one socket until it closes or the server
    /// shuts down. Each socket's handshake (a ready future on the plain
    /// port) runs in the connection's own task, after the client was
    /// admitted and registered, so it counts against `maxclients` and
    /// shows in `CLIENT LIST` from the start, as in Redis.
    fn accept_loop<H: Handshake>(
        &self,
        slot: Arc<Mutex<Option<TcpListener>>>,
        stop: CancellationToken,
        handshake: H,
        shared: Arc<Shared>,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let (tasks, shutdown) = (self.tasks.clone(), self.shutdown.clone());
        async move {
            loop {
                let accepted = tokio::select! {
                    a = poll_fn(|cx| poll_accept(&slot, cx)) => a,
                    () = stop.cancelled() => break,
                };
                let (socket, addr) = match accepted {
                    Some(Ok(a)) => a,
                    // Closed by `rebind`.
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
    }
}

impl Sockets {
    fn of(&mut self, family: Family) -> &mut Vec<Bound> {
        match family {
            Family::Plain => &mut self.plain,
            Family::Tls => &mut self.tls,
        }
    }
}

/// Takes a bound socket into the set, with a stop token of its own.
fn adopt(listener: TcpListener, shutdown: &CancellationToken) -> Bound {
    let addr = listener
        .local_addr()
        .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    Bound {
        addr,
        slot: Arc::new(Mutex::new(Some(listener))),
        stop: shutdown.child_token(),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One accept on the socket in `slot`; `None` once the socket is closed.
fn poll_accept(
    slot: &Mutex<Option<TcpListener>>,
    cx: &mut Context<'_>,
) -> Poll<Option<io::Result<(TcpStream, SocketAddr)>>> {
    match lock(slot).as_ref() {
        Some(listener) => listener.poll_accept(cx).map(Some),
        None => Poll::Ready(None),
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

/// Binds every address in `bind` on `port`. With port 0 the first address
/// picks a free port and the others share it (start-up only: `CONFIG SET
/// port 0` closes the port instead). An address with a leading `-` is
/// optional, as in Redis: skipped when this machine does not have it.
///
/// # Errors
///
/// The first address that cannot be bound, named in the error.
pub(crate) fn bind_all(
    bind: &[String],
    mut port: u16,
    backlog: i32,
) -> io::Result<Vec<std::net::TcpListener>> {
    let mut sockets = Vec::with_capacity(bind.len());
    for text in bind {
        let (optional, ip) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.as_str()),
        };
        let ip = parse_bind(ip).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("bad address {ip}"))
        })?;
        let addr = SocketAddr::new(ip, port);
        match bind_one(addr, backlog) {
            Ok(socket) => {
                port = socket.local_addr()?.port();
                sockets.push(socket);
            }
            Err(e) if optional && not_on_this_machine(&e) => {
                tracing::warn!("skipping optional bind address {addr}: {e}");
            }
            Err(e) => return Err(io::Error::new(e.kind(), format!("{addr}: {e}"))),
        }
    }
    Ok(sockets)
}

/// `*` is every IPv4 address, `::*` every IPv6 one, as in Redis; an IP
/// literal is itself, and a host name is resolved (its first address).
/// Something shaped like an IP literal that does not parse
/// (`999.999.999.999`) is refused without asking a resolver.
fn parse_bind(text: &str) -> Option<IpAddr> {
    match text {
        "*" => return Some(Ipv4Addr::UNSPECIFIED.into()),
        "::*" => return Some(Ipv6Addr::UNSPECIFIED.into()),
        _ => {}
    }
    if let Ok(ip) = text.parse() {
        return Some(ip);
    }
    let literal_shaped =
        text.contains(':') || text.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    if literal_shaped {
        return None;
    }
    use std::net::ToSocketAddrs as _;
    (text, 0).to_socket_addrs().ok()?.next().map(|a| a.ip())
}

/// The failures that make a `-`-prefixed address skipped: the address or
/// its family does not exist here (`EADDRNOTAVAIL`, `EAFNOSUPPORT`).
fn not_on_this_machine(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::AddrNotAvailable || e.raw_os_error() == Some(libc::EAFNOSUPPORT)
}

/// One listening socket, as Redis opens it: `SO_REUSEADDR`, IPv6 sockets
/// IPv6-only (so `bind * ::*` can share a port), `tcp-backlog` pending
/// connections, non-blocking for tokio.
fn bind_one(addr: SocketAddr, backlog: i32) -> io::Result<std::net::TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    if addr.is_ipv6() {
        socket.set_only_v6(true)?;
    }
    socket.set_reuse_address(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(backlog)?;
    Ok(socket.into())
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

    #[test]
    fn bind_addresses_read_as_redis_reads_them() {
        assert_eq!(parse_bind("*"), Some(Ipv4Addr::UNSPECIFIED.into()));
        assert_eq!(parse_bind("::*"), Some(Ipv6Addr::UNSPECIFIED.into()));
        assert_eq!(parse_bind("127.0.0.1"), Some(Ipv4Addr::LOCALHOST.into()));
        assert_eq!(parse_bind("::1"), Some(Ipv6Addr::LOCALHOST.into()));
        assert_eq!(parse_bind("999.999.999.999"), None);
        assert_eq!(parse_bind("::zz"), None);
    }

    #[test]
    fn port_zero_is_picked_once_and_shared_by_every_address() {
        let bind = ["127.0.0.1".to_owned(), "-127.0.0.2".to_owned()];
        let sockets = bind_all(&bind, 0, 16).expect("loopback binds");
        let ports: Vec<u16> = sockets
            .iter()
            .map(|s| s.local_addr().unwrap().port())
            .collect();
        assert!(ports[0] != 0);
        assert!(ports.iter().all(|&p| p == ports[0]), "{ports:?}");
    }

    #[test]
    fn a_used_port_fails_the_bind_and_names_the_address() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let err = bind_all(&["127.0.0.1".to_owned()], port, 16).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AddrInUse);
        assert!(
            err.to_string().contains(&format!("127.0.0.1:{port}")),
            "{err}"
        );
    }

    #[test]
    fn an_optional_address_this_machine_lacks_is_skipped() {
        // 192.0.2.0/24 is TEST-NET-1: never a local address.
        let bind = ["127.0.0.1".to_owned(), "-192.0.2.1".to_owned()];
        assert_eq!(bind_all(&bind, 0, 16).expect("skipped").len(), 1);
        let required = ["192.0.2.1".to_owned()];
        let err = bind_all(&required, 0, 16).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AddrNotAvailable);
    }
}
