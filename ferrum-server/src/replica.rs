//! Following a primary (`REPLICAOF host port`): the link task connects,
//! handshakes as a Redis replica does (`PING`, `REPLCONF`, `PSYNC ? -1`),
//! loads the primary's snapshot in place of the dataset, then applies the
//! primary's stream command by command, as a client whose writes are
//! allowed (`ConnState::primary_link`) and whose replies go nowhere.
//!
//! It acknowledges what it applied every second and when asked
//! (`REPLCONF GETACK`), so the primary's `WAIT` and `INFO` see it. A
//! broken link is tried again every second until `REPLICAOF NO ONE` or
//! another primary cancels it. There is no partial resync: each
//! (re)connection syncs in full.

use std::sync::{Arc, Weak};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use ferrum_proto::{Limits, RespCodec};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::client::ConnState;
use crate::cmd::{self, Reply};
use crate::replication::{Following, LinkStatus, Linker};
use crate::shared::Shared;

/// How long a link waits before it tries again.
const RETRY: Duration = Duration::from_secs(1);
/// How often it acknowledges what it applied.
const ACK_EVERY: Duration = Duration::from_secs(1);

/// The linker `Replication::follow` calls: a task per primary followed.
pub(crate) fn linker(shared: Weak<Shared>) -> Linker {
    Box::new(move |following| {
        let shared = shared.clone();
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(follow(shared, following));
        }
    })
}

/// Follows one primary until told to stop.
async fn follow(shared: Weak<Shared>, f: Arc<Following>) {
    while !f.stop.is_cancelled() {
        let Some(s) = shared.upgrade() else {
            return;
        };
        tracing::info!("Connecting to MASTER {}:{}", f.host, f.port);
        f.set_status(LinkStatus::Connecting);
        let shutdown = s.listeners.shutdown_token().clone();
        let outcome = tokio::select! {
            r = sync_and_apply(&s, &f) => r,
            () = f.stop.cancelled() => Ok(()),
            () = shutdown.cancelled() => return,
        };
        drop(s);
        f.set_status(LinkStatus::Connect);
        if let Err(e) = outcome {
            tracing::warn!("Link with MASTER {}:{} lost: {e}", f.host, f.port);
        }
        tokio::select! {
            () = tokio::time::sleep(RETRY) => {}
            () = f.stop.cancelled() => return,
        }
    }
}

type Io<T> = std::io::Result<T>;

fn broken(what: String) -> std::io::Error {
    std::io::Error::other(what)
}

/// One link: handshake, full sync, then the stream until it breaks.
async fn sync_and_apply(shared: &Arc<Shared>, f: &Following) -> Io<()> {
    let timeout = Duration::from_secs(
        shared
            .config()
            .stored_value("repl-timeout")
            .parse()
            .unwrap_or(60),
    );
    let sock = tokio::time::timeout(timeout, TcpStream::connect((f.host.as_str(), f.port)))
        .await
        .map_err(|_| broken("timed out connecting".into()))??;
    let (peer, local) = (sock.peer_addr()?, sock.local_addr()?);
    let mut sock = BufReader::new(sock);
    let (user, password, port) = {
        let c = shared.config();
        let text = |name| Some(c.stored_value(name).to_owned()).filter(|v| !v.is_empty());
        (
            text("masteruser"),
            text("masterauth"),
            shared.listeners.port(),
        )
    };
    if let Some(password) = password {
        let mut auth = vec![Bytes::from_static(b"AUTH")];
        auth.extend(user.map(Bytes::from));
        auth.push(Bytes::from(password));
        expect_ok(&mut sock, &auth, timeout).await?;
    }
    let ping = ask(&mut sock, &[Bytes::from_static(b"PING")], timeout).await?;
    if ping.starts_with('-') && !ping.starts_with("-NOAUTH") {
        return Err(broken(format!("PING: {ping}")));
    }
    let port = Bytes::from(port.to_string());
    let words = |w: &[&'static str]| {
        w.iter()
            .map(|s| Bytes::from_static(s.as_bytes()))
            .collect::<Vec<_>>()
    };
    let mut listening = words(&["REPLCONF", "listening-port"]);
    listening.push(port);
    // Older primaries refuse what they do not know: not fatal, as in Redis.
    ask(&mut sock, &listening, timeout).await?;
    ask(&mut sock, &words(&["REPLCONF", "capa", "psync2"]), timeout).await?;
    let reply = ask(&mut sock, &words(&["PSYNC", "?", "-1"]), timeout).await?;
    let offset = match reply.strip_prefix("+FULLRESYNC ") {
        Some(rest) => rest
            .split_whitespace()
            .nth(1)
            .and_then(|o| o.parse::<u64>().ok())
            .ok_or_else(|| broken(format!("PSYNC: {reply}")))?,
        None => return Err(broken(format!("PSYNC: {reply}"))),
    };
    f.set_status(LinkStatus::Sync);
    let rdb = read_snapshot(&mut sock, timeout).await?;
    f.heard();
    let owner = shared.clone();
    let keys = tokio::task::spawn_blocking(move || load(&owner, &rdb))
        .await
        .map_err(|e| broken(e.to_string()))?
        .map_err(broken)?;
    tracing::info!("MASTER <-> REPLICA sync: loaded {keys} keys; applying the stream");
    f.set_offset(offset);
    f.set_status(LinkStatus::Connected);
    apply_stream(shared, f, sock, (peer, local), timeout).await
}

/// Replaces the dataset with the primary's snapshot, with every client
/// kept out, and ends this server's own replicas' links (they sync again).
fn load(shared: &Shared, rdb: &[u8]) -> Result<usize, String> {
    let _gate = shared.tx_gate.write().unwrap_or_else(|p| p.into_inner());
    for id in shared.repl.drop_replicas(&shared.store) {
        if let Some(client) = shared.clients.get(id) {
            client.kill.raise(crate::client::End::Killed);
        }
    }
    cmd::persist::replace_dataset(shared, rdb)
}

/// Applies the primary's commands until the link breaks or goes silent
/// for `timeout`.
async fn apply_stream(
    shared: &Arc<Shared>,
    f: &Following,
    sock: BufReader<TcpStream>,
    (peer, local): (std::net::SocketAddr, std::net::SocketAddr),
    timeout: Duration,
) -> Io<()> {
    let handle = shared
        .clients
        .register(peer, local, shared.acl.default_user());
    let _registered = Registered(shared, handle.id);
    let mut state = ConnState::new(handle, true);
    state.primary_link = true;
    state.reply_off = true;
    let mut codec = RespCodec::server(Limits::default());
    // What the handshake's reader took past the snapshot is the stream's.
    let mut buf = BytesMut::from(sock.buffer());
    let mut sock = sock.into_inner();
    let mut args: Vec<Bytes> = Vec::new();
    let mut offset = f.offset();
    // Bytes of the command being decoded: the codec takes a partial
    // command's bytes out of the buffer as it goes.
    let mut consumed = 0;
    let mut ack = tokio::time::interval(ACK_EVERY);
    loop {
        // Every complete command in the buffer, in order.
        loop {
            let before = buf.len();
            let decoded = codec.decode_args_into(&mut buf, &mut args);
            consumed += (before - buf.len()) as u64;
            match decoded {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => return Err(broken(format!("bad stream: {e}"))),
            }
            let consumed = std::mem::take(&mut consumed);
            if is_getack(&args) {
                send_ack(&mut sock, offset).await?;
            } else {
                run(shared, &mut state, &args).await;
            }
            args.clear();
            offset += consumed;
            f.set_offset(offset);
        }
        tokio::select! {
            read = tokio::time::timeout(timeout, sock.read_buf(&mut buf)) => {
                match read {
                    Ok(Ok(0)) => return Err(broken("the primary closed the link".into())),
                    Ok(Ok(_)) => f.heard(),
                    Ok(Err(e)) => return Err(e),
                    Err(_) => return Err(broken("timeout, no data from the primary".into())),
                }
            }
            _ = ack.tick() => send_ack(&mut sock, offset).await?,
        }
    }
}

/// Runs one of the primary's commands; one that `CLIENT PAUSE` holds runs
/// once the pause ends.
async fn run(shared: &Shared, state: &mut ConnState, args: &[Bytes]) {
    while let Reply::Paused = cmd::execute(shared, state, args) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Unregisters the primary's client when the link ends.
struct Registered<'a>(&'a Shared, u64);

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.0.clients.unregister(self.1);
    }
}

fn is_getack(args: &[Bytes]) -> bool {
    args.len() >= 2
        && args[0].eq_ignore_ascii_case(b"replconf")
        && args[1].eq_ignore_ascii_case(b"getack")
}

async fn send_ack(sock: &mut TcpStream, offset: u64) -> Io<()> {
    let offset = offset.to_string();
    let mut out = BytesMut::new();
    let words = [
        Bytes::from_static(b"REPLCONF"),
        Bytes::from_static(b"ACK"),
        Bytes::from(offset),
    ];
    crate::replication::encode(&mut out, &words);
    sock.write_all(&out).await
}

/// Sends a command and reads its one-line reply.
async fn ask(sock: &mut BufReader<TcpStream>, args: &[Bytes], timeout: Duration) -> Io<String> {
    let mut out = BytesMut::new();
    crate::replication::encode(&mut out, args);
    sock.get_mut().write_all(&out).await?;
    read_line(sock, timeout).await
}

async fn expect_ok(sock: &mut BufReader<TcpStream>, args: &[Bytes], timeout: Duration) -> Io<()> {
    let reply = ask(sock, args, timeout).await?;
    if reply.starts_with('-') {
        return Err(broken(format!(
            "{}: {reply}",
            String::from_utf8_lossy(&args[0])
        )));
    }
    Ok(())
}

/// One line without its line end; the primary's keep-alive newlines
/// (sent while it prepares the snapshot) are skipped.
async fn read_line(sock: &mut BufReader<TcpStream>, timeout: Duration) -> Io<String> {
    loop {
        let mut line = String::new();
        let n = tokio::time::timeout(timeout, sock.read_line(&mut line))
            .await
            .map_err(|_| broken("timeout reading from the primary".into()))??;
        if n == 0 {
            return Err(broken("the primary closed the link".into()));
        }
        let line = line.trim_end();
        if !line.is_empty() {
            return Ok(line.to_owned());
        }
    }
}

/// The snapshot: `$<length>` and that many bytes.
async fn read_snapshot(sock: &mut BufReader<TcpStream>, timeout: Duration) -> Io<Vec<u8>> {
    let header = read_line(sock, timeout).await?;
    let len: usize = header
        .strip_prefix('$')
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| broken(format!("expected the snapshot's length, got {header:?}")))?;
    let mut rdb = vec![0u8; len];
    tokio::time::timeout(
        timeout.max(Duration::from_secs(600)),
        sock.read_exact(&mut rdb),
    )
    .await
    .map_err(|_| broken("timeout reading the snapshot".into()))??;
    Ok(rdb)
}
