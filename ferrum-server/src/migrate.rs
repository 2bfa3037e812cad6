//! `MIGRATE`'s connections to target servers: blocking sockets with
//! Redis's per-operation timeouts, cached per `host:port` as Redis caches
//! them (at most 64; one idle for more than 10 s is closed).
//!
//! The sockets are `std::net` ones, used from a handler that runs off its
//! tokio worker (`script::off_worker`): `MIGRATE` waits for its target as
//! Redis does, while the worker's other connections move to another
//! thread. A link is taken out of the cache while a command uses it and
//! put back only after a clean exchange, so two `MIGRATE`s never share one
//! and a link that failed is closed, never reused.
//!
//! # MIGRATE (design notes)
//!
//! **MIGRATE** (`cmd/migrate.rs`, `migrate.rs`). Redis blocks its one thread
//! for a whole `MIGRATE`: connect, write every `RESTORE`, read every reply,
//! each step within the timeout. Here a handler runs on a tokio worker,
//! possibly the only one (`worker-threads 1`), so the exchange runs inside
//! `block_in_place` (`script::off_worker`, as a busy script does): the
//! worker's other connections move to another thread, and even a `MIGRATE`
//! to this same server completes, where Redis would time out. No shard lock
//! is held while it waits on the network: the keys are serialized under
//! their locks (payload and deadline, TTL computed then), the locks are
//! released, and after the replies each acknowledged key is locked again and
//! deleted only if its payload's length and CRC-64 and its deadline are
//! unchanged. Other clients' keys, even the migrated ones, thus never wait
//! for the target; what Redis's atomicity gave and this does not is that a
//! key written between the two steps is kept (the target holds the older
//! value) instead of being impossible. The command still holds the
//! transaction gate's read side throughout, so `EXEC` and scripts wait for
//! it. In cluster mode it holds the write side, so every command waits for
//! it, as everything waits in Redis (see the routing paragraph above): a
//! node cannot then migrate to itself: the `MIGRATE` times out and the key
//! stays, as in Redis. The sockets are blocking `std::net`
//! ones with per-operation timeouts (a tokio socket would need the handler
//! to be async, which the command path is not); they are cached per
//! `host:port` as Redis caches them, in `Shared::migrate` (64 at most, a link checked out while
//! in use so two `MIGRATE`s never interleave on one, closed on any error and
//! after 10 s idle by a sweeper task that ends when the cache empties). A
//! request that failed before any `RESTORE` reply (a cached link the target
//! had closed) is retried once on a fresh connection unless it timed out.
//! The deletes are signalled by the handler itself (`del` events, tracking
//! invalidation; the store's delete changes `WATCH` versions), since its
//! keys may follow `KEYS`, where the table's first/last/step triple cannot
//! name them; its row carries `flag::SIGNALS_KEYS` so the dispatcher does
//! not signal them again. `DEBUG SLEEP` holds the gate's write side, so a
//! sleeping target does not answer, as in Redis.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// At most this many cached links (Redis's `MIGRATE_SOCKET_CACHE_ITEMS`).
const MAX_LINKS: usize = 64;
/// A link unused for longer than this is closed (Redis's
/// `MIGRATE_SOCKET_CACHE_TTL`).
const IDLE: Duration = Duration::from_secs(10);
/// How often idle links are looked for (Redis's `serverCron` does it once
/// a second).
const SWEEP: Duration = Duration::from_secs(1);
/// Requests go out in chunks of this size, each within the timeout.
const CHUNK: usize = 64 * 1024;
/// A reply line longer than this is not one of the replies `MIGRATE`
/// expects; the link is treated as broken.
const MAX_LINE: usize = 64 * 1024;

/// One connection to a target server.
#[derive(Debug)]
pub(crate) struct Link {
    stream: TcpStream,
    /// Bytes read past the last line returned.
    pending: Vec<u8>,
    /// The database the target has selected, when known: `SELECT` is sent
    /// only when it differs.
    pub(crate) db: Option<i64>,
    last_use: Instant,
}

impl Link {
    /// Connects to `host:port` within `timeout`, trying each address the
    /// name resolves to.
    ///
    /// # Errors
    /// The last connection error, or `InvalidInput` for a port that is not
    /// a number or a name that resolves to nothing.
    pub(crate) fn connect(host: &str, port: &str, timeout: Duration) -> io::Result<Link> {
        let port: u16 = port
            .parse()
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "bad port"))?;
        let mut last = io::Error::new(io::ErrorKind::InvalidInput, "no address");
        for addr in (host, port).to_socket_addrs()? {
            match TcpStream::connect_timeout(&addr, timeout) {
                Ok(stream) => {
                    stream.set_nodelay(true)?;
                    return Ok(Link {
                        stream,
                        pending: Vec::new(),
                        db: None,
                        last_use: Instant::now(),
                    });
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// Writes `buf` in chunks of 64 KiB, each within `timeout`, as Redis's
    /// `connSyncWrite` calls do.
    ///
    /// # Errors
    /// `TimedOut` when a chunk did not go out in time, or the socket's error.
    pub(crate) fn write_all(&mut self, buf: &[u8], timeout: Duration) -> io::Result<()> {
        for chunk in buf.chunks(CHUNK) {
            let deadline = deadline_after(timeout);
            let mut rest = chunk;
            while !rest.is_empty() {
                self.stream.set_write_timeout(Some(remaining(deadline)?))?;
                match self.stream.write(rest) {
                    Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                    Ok(n) => rest = &rest[n..],
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(timed_out_or(e)),
                }
            }
        }
        self.last_use = Instant::now();
        Ok(())
    }

    /// The next reply line without its CRLF, read within `timeout`.
    ///
    /// # Errors
    /// `TimedOut` when no full line came in time, `UnexpectedEof` when the
    /// target closed, `InvalidData` for a line past 64 KiB.
    pub(crate) fn read_line(&mut self, timeout: Duration) -> io::Result<Vec<u8>> {
        let deadline = deadline_after(timeout);
        loop {
            if let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
                let mut line: Vec<u8> = self.pending.drain(..=end).collect();
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                self.last_use = Instant::now();
                return Ok(line);
            }
            if self.pending.len() > MAX_LINE {
                return Err(io::ErrorKind::InvalidData.into());
            }
            self.stream.set_read_timeout(Some(remaining(deadline)?))?;
            let mut buf = [0u8; 4096];
            match self.stream.read(&mut buf) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => self.pending.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(timed_out_or(e)),
            }
        }
    }
}

/// `timeout` from now; a timeout past what the clock can add (`MIGRATE
/// ... 9223372036854775807`) waits about a century.
fn deadline_after(timeout: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(timeout)
        .unwrap_or_else(|| now + Duration::from_secs(u64::from(u32::MAX)))
}

/// The time left until `deadline`.
///
/// # Errors
/// `TimedOut` once it has passed (a socket timeout cannot be zero).
fn remaining(deadline: Instant) -> io::Result<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        Err(io::ErrorKind::TimedOut.into())
    } else {
        Ok(left)
    }
}

/// A socket timeout reads as `WouldBlock` on Unix: both mean `TimedOut` here.
fn timed_out_or(e: io::Error) -> io::Error {
    match e.kind() {
        io::ErrorKind::WouldBlock => io::ErrorKind::TimedOut.into(),
        _ => e,
    }
}

/// The cached links, by `host:port` as the client spelled them.
#[derive(Debug, Default)]
pub(crate) struct Links {
    inner: Arc<Mutex<Cache>>,
}

#[derive(Debug, Default)]
struct Cache {
    links: HashMap<String, Link>,
    /// Whether a sweeper task is running for this cache.
    sweeping: bool,
}

impl Links {
    fn lock(&self) -> MutexGuard<'_, Cache> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes the cached link to `name` out of the cache, if any.
    pub(crate) fn take(&self, name: &str) -> Option<Link> {
        self.lock().links.remove(name)
    }

    /// Caches `link` as the link to `name`, closing the one it replaces or,
    /// when the cache is full, an arbitrary other one (Redis drops a random
    /// one). The first link cached starts the sweeper of idle links.
    pub(crate) fn put(&self, name: String, mut link: Link) {
        link.last_use = Instant::now();
        let mut cache = self.lock();
        if cache.links.len() >= MAX_LINKS && !cache.links.contains_key(&name) {
            if let Some(victim) = cache.links.keys().next().cloned() {
                cache.links.remove(&victim);
            }
        }
        cache.links.insert(name, link);
        if !cache.sweeping {
            cache.sweeping = self.start_sweeper();
        }
    }

    /// How many links are cached (`INFO`'s `migrate_cached_sockets`).
    pub(crate) fn len(&self) -> usize {
        self.lock().links.len()
    }

    /// Spawns the task that closes idle links once a second and ends when
    /// none is left; `false` outside a tokio runtime, where links are
    /// closed only when replaced.
    fn start_sweeper(&self) -> bool {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return false;
        };
        let inner = Arc::clone(&self.inner);
        runtime.spawn(async move {
            loop {
                tokio::time::sleep(SWEEP).await;
                let mut cache = inner.lock().unwrap_or_else(|p| p.into_inner());
                cache.links.retain(|_, l| l.last_use.elapsed() <= IDLE);
                if cache.links.is_empty() {
                    cache.sweeping = false;
                    return;
                }
            }
        });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn pair() -> (Link, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port().to_string();
        let link = Link::connect("127.0.0.1", &port, Duration::from_secs(5)).expect("connect");
        let (peer, _) = listener.accept().expect("accept");
        (link, peer)
    }

    #[test]
    fn lines_split_across_reads_and_keep_what_follows() {
        let (mut link, mut peer) = pair();
        peer.write_all(b"+O").expect("write");
        peer.write_all(b"K\r\n-ERR x\r\n+").expect("write");
        let t = Duration::from_secs(5);
        assert_eq!(link.read_line(t).expect("line"), b"+OK");
        assert_eq!(link.read_line(t).expect("line"), b"-ERR x");
        drop(peer);
        let eof = link.read_line(t).expect_err("closed with half a line");
        assert_eq!(eof.kind(), io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn a_silent_peer_times_out() {
        let (mut link, _peer) = pair();
        let e = link
            .read_line(Duration::from_millis(50))
            .expect_err("nothing was sent");
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
    }

    #[test]
    fn an_endless_timeout_still_reads() {
        let (mut link, mut peer) = pair();
        peer.write_all(b"+OK\r\n").expect("write");
        let line = link.read_line(Duration::from_millis(u64::MAX));
        assert_eq!(line.expect("line"), b"+OK");
    }

    #[test]
    fn bad_ports_do_not_connect() {
        for port in ["", "x", "70000", "-1"] {
            let e = Link::connect("127.0.0.1", port, Duration::from_millis(100));
            assert!(e.is_err(), "{port}");
        }
    }

    #[test]
    fn the_cache_holds_one_link_per_name() {
        let links = Links::default();
        let (a, _pa) = pair();
        let (b, _pb) = pair();
        links.put("h:1".into(), a);
        links.put("h:1".into(), b);
        assert_eq!(links.len(), 1);
        assert!(links.take("h:2").is_none());
        assert!(links.take("h:1").is_some());
        assert_eq!(links.len(), 0);
    }
}
