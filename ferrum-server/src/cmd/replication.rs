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
