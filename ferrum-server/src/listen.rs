//! The listening sockets.
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
//! poll ([`Acceptor::accept`]), so closing a socket is synchronous: once
//! [`Listeners::rebind`] has taken it out of its slot, the port is free
//! for the next bind.
//!
//! The accept loops themselves, and what they do with a connection, are
//! the connection layer's (`crate::accept`): this module owns sockets, not
//! clients, so `Shared` can hold it without depending on connection
//! handling.

use std::future::poll_fn;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use socket2::{Domain, Socket, Type};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Which port a socket serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    /// `port`: plain TCP.
    Plain,
    /// `tls-port`.
    Tls,
}

/// What serves a socket: called with each socket once the server starts
/// (and with each socket bound after that), it spawns the socket's accept
/// loop. The connection layer supplies it (`crate::accept::starter`), so
/// the sockets do not depend on what serves them.
pub(crate) type Starter = Box<dyn Fn(Family, Acceptor) + Send + Sync>;

/// The server's sockets, the tasks they start, and the shutdown signal.
pub(crate) struct Listeners {
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
    /// Set by [`Listeners::start`]: sockets bound before it wait for it,
    /// sockets bound after it get their loop at once.
    starter: Option<Starter>,
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

    /// A handle for the socket's accept loop.
    fn acceptor(&self) -> Acceptor {
        Acceptor {
            slot: self.slot.clone(),
            stop: self.stop.clone(),
        }
    }
}

/// One socket as its accept loop sees it.
#[derive(Clone)]
pub(crate) struct Acceptor {
    /// The socket, until it is closed; borrowed per poll.
    slot: Arc<Mutex<Option<TcpListener>>>,
    /// Cancelled when the socket closes or the server shuts down.
    stop: CancellationToken,
}

impl Acceptor {
    /// The next connection; `None` once the socket is closed (by
    /// [`Listeners::rebind`], or at shutdown).
    pub(crate) async fn accept(&self) -> Option<io::Result<(TcpStream, SocketAddr)>> {
        tokio::select! {
            a = poll_fn(|cx| poll_accept(&self.slot, cx)) => a,
            () = self.stop.cancelled() => None,
        }
    }
}

impl Listeners {
    /// Holds sockets bound at start-up; their loops start with
    /// [`Listeners::start`].
    pub(crate) fn new(plain: Vec<TcpListener>, tls: Vec<TcpListener>) -> Listeners {
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
            starter: None,
        };
        Listeners {
            sockets: Mutex::new(sockets),
            tasks: TaskTracker::new(),
            shutdown,
        }
    }

    /// Starts the accept loop of every socket bound so far with
    /// `starter`, and of every socket bound from now on.
    pub(crate) fn start(&self, starter: Starter) {
        let mut sockets = lock(&self.sockets);
        for (family, bound) in [(Family::Plain, &sockets.plain), (Family::Tls, &sockets.tls)] {
            for socket in bound {
                starter(family, socket.acceptor());
            }
        }
        sockets.starter = Some(starter);
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
            if let Some(start) = &sockets.starter {
                start(family, socket.acceptor());
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

#[cfg(test)]
mod tests {
    use super::*;

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
