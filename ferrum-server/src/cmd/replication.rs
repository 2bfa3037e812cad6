//! `SYNC` and `PSYNC`: a connection becomes a replica (see
//! `crate::replication`), and `ROLE`'s and `INFO replication`'s view of
//! it.

use std::sync::Arc;
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use ferrum_proto::Frame;

use super::parse::is;
use super::{CmdError, CmdResult, Ctx};
use crate::persist;
use crate::pubsub::Subscriber;
use crate::shared::Shared;

/// How often a full sync waiting for another snapshot to end looks again.
const SNAPSHOT_RETRY: Duration = Duration::from_millis(20);

/// `SYNC`, or `PSYNC replid offset` (always answered with a full sync,
/// `+FULLRESYNC`): this connection gets a snapshot of the dataset, then
/// the stream of changes. It sends no more replies.
pub(crate) fn sync(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if ctx.conn.replica {
        // Redis ignores a second SYNC from a replica.
        return Ok(Frame::Null);
    }
    let owner = ctx
        .shared
        .this
        .upgrade()
        .ok_or_else(|| CmdError::msg("ERR the server is shutting down"))?;
    let handle = ctx.conn.handle.clone();
    let inbox = ctx.conn.subs.subscriber(&handle);
    let link = Joining {
        id: handle.id,
        addr: handle.addr.to_string(),
        inbox,
        psync: is(&args[0], "psync"),
        listening_port: ctx.conn.listening_port,
    };
    std::thread::Builder::new()
        .name("full-sync".into())
        .spawn(move || full_sync(&owner, link))
        .map_err(|e| CmdError::msg(format!("ERR cannot start the full sync: {e}")))?;
    ctx.conn.replica = true;
    ctx.conn.reply_off = true;
    Ok(Frame::Null)
}

/// A replica on its way into the stream.
struct Joining {
    id: u64,
    addr: String,
    inbox: Arc<Subscriber>,
    psync: bool,
    listening_port: Option<u16>,
}

/// The full sync's thread: joins the stream at the moment a snapshot
/// starts (both under the gate, so no write falls between them), writes
/// the snapshot while the server serves, then hands it to the replica
/// ahead of the stream held for it.
fn full_sync(shared: &Shared, link: Joining) {
    let (snap, offset) = loop {
        if shared.clients.get(link.id).is_none() {
            return;
        }
        {
            let _gate = shared.tx_gate.write().unwrap_or_else(|p| p.into_inner());
            if let Some(snap) = super::persist::start_sync_snapshot(shared) {
                let offset =
                    shared
                        .repl
                        .attach(&shared.store, link.id, link.addr.clone(), &link.inbox);
                if let Some(port) = link.listening_port {
                    shared.repl.set_listening_port(link.id, port);
                }
                break (snap, offset);
            }
        }
        // A BGSAVE's snapshot is running: the next one is ours.
        std::thread::sleep(SNAPSHOT_RETRY);
    };
    tracing::info!(
        "Replica {} asks for synchronization: starting a full sync",
        link.addr
    );
    let step = persist::step_bytes(false);
    match persist::write_snapshot(&shared.store, &snap, Vec::new(), step, &mut |_| Ok(())) {
        Ok((rdb, _keys)) => {
            let mut out = BytesMut::with_capacity(rdb.len() + 128);
            if link.psync {
                let line = format!("+FULLRESYNC {} {offset}\r\n", shared.repl.replid());
                out.put_slice(line.as_bytes());
            }
            out.put_slice(format!("${}\r\n", rdb.len()).as_bytes());
            out.put_slice(&rdb);
            shared.repl.snapshot_sent(link.id, out.freeze());
            tracing::info!("Synchronization with replica {} succeeded", link.addr);
        }
        Err(e) => {
            tracing::warn!("Full sync with replica {} failed: {e}", link.addr);
            shared.repl.detach(&shared.store, link.id);
            if let Some(client) = shared.clients.get(link.id) {
                client.kill.raise(crate::client::End::Killed);
            }
        }
    }
}

/// `REPLICAOF host port` (and `SLAVEOF`): follow that primary, replacing
/// this server's dataset with its own; `REPLICAOF NO ONE`: a primary
/// again, keeping the dataset.
pub(crate) fn replicaof(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if ctx.shared.cluster.is_some() {
        return Err(CmdError::msg("ERR REPLICAOF not allowed in cluster mode."));
    }
    if is(&args[1], "no") && is(&args[2], "one") {
        if ctx.shared.repl.is_replica() {
            ctx.shared.repl.unfollow();
            ctx.shared.hold_expiry();
            tracing::info!("MASTER MODE enabled (user request)");
        }
        return Ok(Frame::ok());
    }
    if ctx.conn.replica {
        return Err(CmdError::msg(
            "ERR Command is not valid when client is a replica.",
        ));
    }
    let port = super::parse::parse_i64(&args[2])
        .filter(|p| (0..=65535).contains(p))
        .ok_or_else(|| CmdError::msg("ERR Invalid master port"))?;
    let host = String::from_utf8_lossy(&args[1]).into_owned();
    if !ctx.shared.repl.follow(&host, port as u16) {
        return Ok(Frame::simple("OK Already connected to specified master"));
    }
    ctx.shared.hold_expiry();
    tracing::info!("REPLICAOF {host}:{port} enabled (user request)");
    Ok(Frame::ok())
}

/// `REPLCONF option value ...`: what a replica tells its primary about
/// itself (`listening-port`, `capa`, `ACK offset`). `ACK` has no reply.
pub(crate) fn replconf(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    if args.len() % 2 == 0 {
        return Err(CmdError::syntax());
    }
    let id = ctx.conn.handle.id;
    for pair in args[1..].chunks(2) {
        let (option, value) = (&pair[0], &pair[1]);
        if is(option, "ack") {
            let offset = super::parse::parse_i64(value).filter(|o| *o >= 0);
            if let Some(offset) = offset {
                ctx.shared.repl.acked(id, offset as u64);
            }
            // A replica's acknowledgement gets no reply.
            ctx.conn.reply_skip = ctx.conn.reply_skip.max(1);
            return Ok(Frame::Null);
        } else if is(option, "listening-port") {
            let port = super::parse::parse_i64(value)
                .filter(|p| (0..=65535).contains(p))
                .ok_or_else(|| CmdError::msg("ERR value is out of range"))?;
            ctx.conn.listening_port = Some(port as u16);
        } else if is(option, "getack") {
            // Only a primary asks; a primary is not asked.
            return Ok(Frame::Null);
        } else if !["capa", "ip-address", "rdb-only", "rdb-filter-only"]
            .iter()
            .any(|known| is(option, known))
        {
            let name = String::from_utf8_lossy(option);
            return Err(CmdError::msg(format!(
                "ERR Unrecognized REPLCONF option: {name}"
            )));
        }
    }
    Ok(Frame::ok())
}

/// How often `WAIT` looks at the replicas' acknowledgements.
const WAIT_POLL: Duration = Duration::from_millis(5);

/// `WAIT numreplicas timeout`: blocks until that many replicas
/// acknowledged every write made so far, or the timeout (milliseconds, 0
/// for none) passes; replies how many did.
pub(crate) fn wait(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let repl = &ctx.shared.repl;
    if repl.is_replica() {
        return Err(CmdError::msg("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated."));
    }
    let wanted = super::parse::parse_i64(&args[1])
        .ok_or_else(|| CmdError::msg(super::error::NOT_INTEGER))?;
    let timeout = super::parse::parse_i64(&args[2])
        .ok_or_else(|| CmdError::msg("ERR timeout is not an integer or out of range"))?;
    if timeout < 0 {
        return Err(CmdError::msg("ERR timeout is negative"));
    }
    let target = repl.offset();
    let count = || repl.acked_at_least(target) as i64;
    if count() >= wanted || ctx.in_exec || ctx.in_script {
        return Ok(Frame::Integer(count()));
    }
    let limit = ctx.shared.config().client_output_buffer_limit.replica;
    repl.request_acks(limit);
    let deadline =
        (timeout > 0).then(|| std::time::Instant::now() + Duration::from_millis(timeout as u64));
    let handle = ctx.conn.handle.clone();
    let reached = crate::script::off_worker(|| loop {
        let n = count();
        let expired = deadline.is_some_and(|d| std::time::Instant::now() >= d);
        if n >= wanted || expired || handle.kill.ended().is_some() {
            return n;
        }
        std::thread::sleep(WAIT_POLL);
    });
    Ok(Frame::Integer(reached))
}
