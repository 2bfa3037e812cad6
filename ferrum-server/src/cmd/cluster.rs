//! `CLUSTER` and the connection commands of cluster mode (`ASKING`,
//! `READONLY`, `READWRITE`): reading and changing the slot map, and
//! finding the keys of a slot for a migration.
//!
//! Without `cluster-enabled` every one of them (`CLUSTER HELP` too) gets
//! Redis's "cluster support disabled", which is how clients tell a
//! standalone server.

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::Millis;

use super::error::{cluster as e, CmdError, CmdResult, CLUSTER_DISABLED};
use super::parse::is;
use super::{help_reply, Ctx};
use crate::cluster::conf::{self, parse_slot};
use crate::cluster::map::{NodeIndex, SlotMap, MYSELF};
use crate::cluster::slot::{key_slot, SLOTS};
use crate::cluster::{Cluster, SaveFailed};

const HELP: &[&str] = &[
    "CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ADDSLOTS <slot> [<slot> ...]",
    "    Assign slots to current node.",
    "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Assign slots which are between <start-slot> and <end-slot> to current node.",
    "BUMPEPOCH",
    "    Advance the cluster config epoch.",
    "COUNTKEYSINSLOT <slot>",
    "    Return the number of keys in <slot>.",
    "DELSLOTS <slot> [<slot> ...]",
    "    Delete slots information from current node.",
    "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Delete slots information which are between <start-slot> and <end-slot> from current node.",
    "FORGET <node-id>",
    "    Remove a node from the cluster.",
    "GETKEYSINSLOT <slot> <count>",
    "    Return key names stored by current node in a slot.",
    "FLUSHSLOTS",
    "    Delete current node own slots information.",
    "INFO",
    "    Return information about the cluster.",
    "KEYSLOT <key>",
    "    Return the hash slot for <key>.",
    "MEET <ip> <port> [<bus-port>]",
    "    Connect nodes into a working cluster.",
    "MYID",
    "    Return the node id.",
    "NODES",
    "    Return cluster configuration seen by node. Output format:",
    "    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
    "RESET [HARD|SOFT]",
    "    Reset current node (default: soft).",
    "SET-CONFIG-EPOCH <epoch>",
    "    Set config epoch of current node.",
    "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
    "    Set slot state.",
    "SAVECONFIG",
    "    Force saving cluster configuration on disk.",
    "SLOTS",
    "    Return information about slots range mappings. Each range is made of:",
    "    start, end, master and replicas IP addresses, ports and ids",
    "SHARDS",
    "    Return information about slot range mappings and the nodes associated with them.",
    "HELP",
    "    Prints this help.",
];

/// `CLUSTER <subcommand> ...`
pub(crate) fn cluster(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let sub = &args[1];
    let cl = enabled(ctx)?;
    let rest = &args[2..];
    let name = String::from_utf8_lossy(sub).to_ascii_lowercase();
    let before = cl.generation();
    let reply = subcommand(ctx, cl, &name, sub, rest);
    if cl.generation() != before {
        // Clients blocked on a slot that left go elsewhere, as Redis's
        // cron sends them.
        ctx.shared.blocking.wake_all();
    }
    reply
}

fn subcommand(
    ctx: &mut Ctx<'_>,
    cl: &Cluster,
    name: &str,
    sub: &Bytes,
    rest: &[Bytes],
) -> CmdResult {
    match name {
        "help" => help_reply(HELP),
        "info" => Ok(verbatim(info(cl))),
        "myid" => Ok(Frame::bulk(cl.map().myself().id.clone())),
        "nodes" => Ok(verbatim(conf::render_nodes(&cl.map()))),
        "slots" => Ok(slots(cl, &cl.map())),
        "shards" => Ok(shards(cl, &cl.map())),
        "keyslot" => Ok(Frame::Integer(key_slot(&rest[0]).into())),
        "countkeysinslot" => count_keys_in_slot(ctx, &rest[0]),
        "getkeysinslot" => get_keys_in_slot(ctx, &rest[0], &rest[1]),
        "addslots" => change_slots(cl, &single_slots(rest)?, true),
        "addslotsrange" => change_slots(cl, &slot_ranges(rest)?, true),
        "delslots" => change_slots(cl, &single_slots(rest)?, false),
        "delslotsrange" => change_slots(cl, &slot_ranges(rest)?, false),
        "flushslots" => flush_slots(ctx, cl),
        "setslot" => setslot(ctx, cl, rest),
        "reset" => reset(ctx, cl, rest),
        "meet" => meet(cl, rest),
        "forget" => forget(cl, &rest[0]),
        "saveconfig" => cl.change(|_| Ok::<_, CmdError>(Frame::ok())),
        "set-config-epoch" | "bumpepoch" => epoch(cl, name, rest),
        _ => Err(CmdError::unknown_subcommand("CLUSTER", sub)),
    }
}

impl From<SaveFailed> for CmdError {
    fn from(failed: SaveFailed) -> CmdError {
        CmdError::msg(e::save_failed(&failed.0))
    }
}

fn verbatim(text: String) -> Frame {
    Frame::Verbatim {
        format: *b"txt",
        text: Bytes::from(text),
    }
}

/// The cluster mode handle, or Redis's refusal without cluster mode.
fn enabled<'a>(ctx: &Ctx<'a>) -> Result<&'a Cluster, CmdError> {
    ctx.shared
        .cluster
        .as_ref()
        .ok_or_else(|| CmdError::msg(CLUSTER_DISABLED))
}

/// `ASKING`: the next command may use a slot this node is importing.
pub(crate) fn asking(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    enabled(ctx)?;
    ctx.conn.asking = true;
    Ok(Frame::ok())
}

/// `READONLY`: accepted; with no replicas nothing reads differently.
pub(crate) fn readonly(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    enabled(ctx)?;
    ctx.conn.readonly = true;
    Ok(Frame::ok())
}

/// `READWRITE`: undoes `READONLY`.
pub(crate) fn readwrite(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    enabled(ctx)?;
    ctx.conn.readonly = false;
    Ok(Frame::ok())
}

/// `CLUSTER INFO`'s text.
fn info(cl: &Cluster) -> String {
    let map = cl.map();
    let state = if cl.is_ok(&map) { "ok" } else { "fail" };
    let assigned = map.assigned();
    format!(
        "cluster_state:{state}\r\n\
         cluster_slots_assigned:{assigned}\r\n\
         cluster_slots_ok:{assigned}\r\n\
         cluster_slots_pfail:0\r\n\
         cluster_slots_fail:0\r\n\
         cluster_known_nodes:{}\r\n\
         cluster_size:{}\r\n\
         cluster_current_epoch:{}\r\n\
         cluster_my_epoch:{}\r\n\
         cluster_stats_messages_sent:0\r\n\
         cluster_stats_messages_received:0\r\n\
         total_cluster_links_buffer_limit_exceeded:0\r\n",
        map.nodes.len(),
        map.serving_nodes(),
        map.current_epoch,
        map.myself().epoch,
    )
}

/// `CLUSTER SLOTS`: each run of slots with its owner's preferred
/// endpoint, port and id, then (Redis 7's `addNodeToNodeReply`) its
/// address and hostname where the endpoint is not already that.
fn slots(cl: &Cluster, map: &SlotMap) -> Frame {
    let ranges = map.ranges().map(|(owner, a, b)| {
        let n = &map.nodes[owner];
        let mut details = Vec::new();
        if !cl.endpoint_is_ip() {
            details.push((Frame::bulk("ip"), Frame::bulk(n.ip.clone())));
        }
        if !cl.endpoint_is_hostname() && !n.hostname.is_empty() {
            details.push((Frame::bulk("hostname"), Frame::bulk(n.hostname.clone())));
        }
        Frame::Array(vec![
            Frame::Integer(a.into()),
            Frame::Integer(b.into()),
            Frame::Array(vec![
                cl.endpoint(n)
                    .map_or(Frame::Null, |e| Frame::bulk(e.to_owned())),
                Frame::Integer(n.port.into()),
                Frame::bulk(n.id.clone()),
                Frame::Map(details),
            ]),
        ])
    });
    Frame::Array(ranges.collect())
}

/// `CLUSTER SHARDS`: one shard per node (no replicas), with its slot
/// ranges flattened and its one node described.
fn shards(cl: &Cluster, map: &SlotMap) -> Frame {
    let shard = |i: NodeIndex| {
        let n = &map.nodes[i];
        let slots = map
            .ranges_of(i)
            .into_iter()
            .flat_map(|(a, b)| [Frame::Integer(a.into()), Frame::Integer(b.into())]);
        let mut fields = vec![
            (Frame::bulk("id"), Frame::bulk(n.id.clone())),
            (Frame::bulk("port"), Frame::Integer(n.port.into())),
            (Frame::bulk("ip"), Frame::bulk(n.ip.clone())),
            // Redis's `getPreferredEndpoint` gives `""` for unknown-endpoint here.
            (
                Frame::bulk("endpoint"),
                Frame::bulk(cl.endpoint(n).unwrap_or_default().to_owned()),
            ),
        ];
        if !n.hostname.is_empty() {
            fields.push((Frame::bulk("hostname"), Frame::bulk(n.hostname.clone())));
        }
        fields.extend([
            (Frame::bulk("role"), Frame::bulk("master")),
            (Frame::bulk("replication-offset"), Frame::Integer(0)),
            (Frame::bulk("health"), Frame::bulk("online")),
        ]);
        let node = Frame::Map(fields);
        Frame::Map(vec![
            (Frame::bulk("slots"), Frame::Array(slots.collect())),
            (Frame::bulk("nodes"), Frame::Array(vec![node])),
        ])
    };
    Frame::Array((0..map.nodes.len()).map(shard).collect())
}

/// A slot argument of `ADDSLOTS`, `SETSLOT`...
fn slot_arg(arg: &[u8]) -> Result<u16, CmdError> {
    parse_slot_or(arg, e::BAD_SLOT)
}

/// `ADDSLOTS`/`DELSLOTS`'s slots, each a range of one.
fn single_slots(args: &[Bytes]) -> Result<Vec<(u16, u16)>, CmdError> {
    args.iter().map(|a| slot_arg(a).map(|s| (s, s))).collect()
}

/// `ADDSLOTSRANGE`/`DELSLOTSRANGE`'s start-end pairs.
fn slot_ranges(args: &[Bytes]) -> Result<Vec<(u16, u16)>, CmdError> {
    if args.len() % 2 != 0 {
        return Err(CmdError::subcommand_arity("cluster", b"addslotsrange"));
    }
    args.chunks(2)
        .map(|p| {
            let (a, b) = (slot_arg(&p[0])?, slot_arg(&p[1])?);
            if a > b {
                return Err(CmdError::msg(e::reversed_range(a, b)));
            }
            Ok((a, b))
        })
        .collect()
}

/// Gives this node the slots of `ranges` (`add`) or takes them from
/// whoever serves them, all or none, refusing as Redis does a slot
/// already served (or not served), or named twice.
fn change_slots(cl: &Cluster, ranges: &[(u16, u16)], add: bool) -> CmdResult {
    cl.change(|map| {
        let mut seen = vec![false; SLOTS];
        for &(a, b) in ranges {
            for slot in a..=b {
                let served = map.owner(slot).is_some();
                if add && served {
                    return Err(CmdError::msg(e::busy(slot)));
                }
                if !add && !served {
                    return Err(CmdError::msg(e::unassigned(slot)));
                }
                if std::mem::replace(&mut seen[usize::from(slot)], true) {
                    return Err(CmdError::msg(e::repeated(slot)));
                }
            }
        }
        for &(a, b) in ranges {
            for slot in a..=b {
                map.assign(slot, add.then_some(MYSELF));
                if add {
                    map.importing.remove(&slot);
                }
            }
        }
        Ok(Frame::ok())
    })
}

/// `CLUSTER FLUSHSLOTS`: this node gives up all its slots, refused while
/// it holds keys.
fn flush_slots(ctx: &Ctx<'_>, cl: &Cluster) -> CmdResult {
    if ctx.store().lock_all().dbsize(0) != 0 {
        return Err(CmdError::msg(e::FLUSHSLOTS_WITH_KEYS));
    }
    cl.change(|map| {
        for slot in 0..SLOTS as u16 {
            if map.owner(slot) == Some(MYSELF) {
                map.assign(slot, None);
            }
        }
        Ok::<_, CmdError>(Frame::ok())
    })
}

/// `CLUSTER SETSLOT <slot> IMPORTING <id> | MIGRATING <id> | STABLE |
/// NODE <id>`.
fn setslot(ctx: &Ctx<'_>, cl: &Cluster, args: &[Bytes]) -> CmdResult {
    let slot = slot_arg(&args[0])?;
    let action = &args[1];
    let with_node = args.len() == 3;
    if is(action, "stable") && args.len() == 2 {
        return cl.change(|map| {
            map.migrating.remove(&slot);
            map.importing.remove(&slot);
            Ok::<_, CmdError>(Frame::ok())
        });
    }
    if !with_node
        || !["migrating", "importing", "node"]
            .iter()
            .any(|a| is(action, a))
    {
        return Err(CmdError::msg(e::BAD_SETSLOT));
    }
    let id = &args[2];
    let holds_keys = is(action, "node") && keys_in_slot(ctx, slot, 1).len() == 1;
    cl.change(|map| {
        if is(action, "node") {
            let node = map
                .find(id)
                .ok_or_else(|| CmdError::msg(e::unknown_node(id)))?;
            if map.owner(slot) == Some(MYSELF) && node != MYSELF && holds_keys {
                return Err(CmdError::msg(e::still_holds_keys(slot)));
            }
            map.assign(slot, Some(node));
            map.settle(slot, node);
            return Ok(Frame::ok());
        }
        let node = map
            .find(id)
            .ok_or_else(|| CmdError::msg(e::dont_know(id)))?;
        if is(action, "migrating") {
            if map.owner(slot) != Some(MYSELF) {
                return Err(CmdError::msg(e::not_owner(slot)));
            }
            map.migrating.insert(slot, node);
        } else {
            if map.owner(slot) == Some(MYSELF) {
                return Err(CmdError::msg(e::already_owner(slot)));
            }
            map.importing.insert(slot, node);
        }
        Ok(Frame::ok())
    })
}

/// `CLUSTER RESET [HARD|SOFT]`: forgets every other node and every slot;
/// a hard reset also takes a new node id. Refused while keys are stored.
fn reset(ctx: &Ctx<'_>, cl: &Cluster, args: &[Bytes]) -> CmdResult {
    let hard = match args {
        [] => false,
        [a] if is(a, "soft") => false,
        [a] if is(a, "hard") => true,
        _ => return Err(CmdError::syntax()),
    };
    if ctx.store().lock_all().dbsize(0) != 0 {
        return Err(CmdError::msg(e::RESET_WITH_KEYS));
    }
    let new_id = if hard {
        Some(Cluster::new_id().map_err(|err| CmdError::msg(e::save_failed(&format!("{err:#}"))))?)
    } else {
        None
    };
    cl.change(|map| {
        map.reset(hard);
        if let Some(id) = new_id {
            map.myself_mut().id = id;
        }
        Ok::<_, CmdError>(Frame::ok())
    })
}

/// `CLUSTER FORGET <id>`: drops a peer and the slots it served.
fn forget(cl: &Cluster, id: &[u8]) -> CmdResult {
    cl.change(|map| {
        let node = map
            .find(id)
            .ok_or_else(|| CmdError::msg(e::unknown_node(id)))?;
        if node == MYSELF {
            return Err(CmdError::msg(e::FORGET_MYSELF));
        }
        map.forget(node);
        Ok(Frame::ok())
    })
}

/// `CLUSTER SET-CONFIG-EPOCH <epoch>` and `CLUSTER BUMPEPOCH`.
fn epoch(cl: &Cluster, name: &str, args: &[Bytes]) -> CmdResult {
    if name == "bumpepoch" {
        // As Redis: a new epoch unless this node's is already the highest.
        return cl.change(|map| {
            let max = map.nodes.iter().map(|n| n.epoch).max().unwrap_or(0);
            let mine = map.myself().epoch;
            let word = if mine == 0 || mine != max.max(map.current_epoch) {
                map.current_epoch += 1;
                map.myself_mut().epoch = map.current_epoch;
                "BUMPED"
            } else {
                "STILL"
            };
            let text = format!("{word} {}", map.myself().epoch);
            Ok::<_, CmdError>(Frame::Simple(Bytes::from(text)))
        });
    }
    let epoch = super::parse::parse_i64(&args[0])
        .ok_or_else(|| CmdError::msg(super::error::NOT_INTEGER))?;
    let epoch = u64::try_from(epoch).map_err(|_| CmdError::msg(e::bad_epoch(&args[0])))?;
    cl.change(|map| {
        if map.nodes.len() > 1 {
            return Err(CmdError::msg(e::EPOCH_WITH_PEERS));
        }
        if map.myself().epoch != 0 {
            return Err(CmdError::msg(e::EPOCH_SET));
        }
        map.myself_mut().epoch = epoch;
        map.current_epoch = map.current_epoch.max(epoch);
        Ok(Frame::ok())
    })
}

/// `CLUSTER COUNTKEYSINSLOT <slot>`
fn count_keys_in_slot(ctx: &Ctx<'_>, slot: &[u8]) -> CmdResult {
    let slot = parse_slot_or(slot, e::INVALID_SLOT)?;
    Ok(Frame::Integer(
        keys_in_slot(ctx, slot, usize::MAX).len() as i64
    ))
}

/// `CLUSTER GETKEYSINSLOT <slot> <count>`
fn get_keys_in_slot(ctx: &Ctx<'_>, slot: &[u8], count: &[u8]) -> CmdResult {
    let slot = parse_slot_or(slot, e::INVALID_SLOT_OR_COUNT)?;
    let count = super::parse::parse_i64(count)
        .and_then(|c| usize::try_from(c).ok())
        .ok_or_else(|| CmdError::msg(e::INVALID_SLOT_OR_COUNT))?;
    let keys = keys_in_slot(ctx, slot, count);
    Ok(Frame::Array(keys.into_iter().map(Frame::Bulk).collect()))
}

/// A slot number, or the error `text` for anything else.
fn parse_slot_or(arg: &[u8], text: &'static str) -> Result<u16, CmdError> {
    std::str::from_utf8(arg)
        .ok()
        .and_then(parse_slot)
        .ok_or_else(|| CmdError::msg(text))
}

/// Up to `limit` live keys of database 0 in `slot`.
///
/// FerrumKV keeps no index by slot (it would cost every key bytes, in
/// cluster mode or not): this walks the keyspace hashing each key, as
/// `SCAN` walks it, a few thousand entries per shard lock so that other
/// clients run in between. It is what `COUNTKEYSINSLOT` and
/// `GETKEYSINSLOT` cost: O(keys).
pub(crate) fn keys_in_slot(ctx: &Ctx<'_>, slot: u16, limit: usize) -> Vec<Bytes> {
    /// Entries looked at per lock.
    const CHUNK: usize = 4096;
    let now: Millis = ctx.now;
    let store = ctx.store();
    let mut keys = Vec::new();
    for i in 0..store.shard_count() {
        let mut at = 0;
        loop {
            if keys.len() >= limit {
                return keys;
            }
            let mut locked = store.lock_shard(i);
            let Some(shard) = locked.shards().next() else {
                break;
            };
            let end = (at + CHUNK).min(shard.slot_count());
            for entry in at..end {
                if let Some((k, _)) = shard.key_at_slot(0, entry, now) {
                    if keys.len() < limit && key_slot(k) == slot {
                        keys.push(Bytes::copy_from_slice(k));
                    }
                }
            }
            if end == shard.slot_count() {
                break;
            }
            at = end;
        }
    }
    keys
}

/// `CLUSTER MEET <ip> <port> [<bus-port>]`: learns the peer's id, the
/// port and hostname it announces, and the slots it serves by asking it
/// (`CLUSTER NODES`) over its client port, once. Slots the peer serves that this node's map gives nobody become the
/// peer's; a slot already given to a node stays with it.
fn meet(cl: &Cluster, args: &[Bytes]) -> CmdResult {
    let (ip, port) = (&args[0], &args[1]);
    let port_num = std::str::from_utf8(port)
        .ok()
        .and_then(|p| p.parse::<u16>().ok())
        .ok_or_else(|| CmdError::msg(e::bad_port(port)))?;
    let ip_text = std::str::from_utf8(ip)
        .ok()
        .filter(|ip| ip.parse::<std::net::IpAddr>().is_ok())
        .ok_or_else(|| CmdError::msg(e::bad_address(ip, port)))?;
    let addr = format!("{ip_text}:{port_num}");
    let peer = crate::script::off_worker(|| crate::cluster::meet::ask_peer(ip_text, port_num))
        .map_err(|why| CmdError::msg(e::meet_failed(&addr, &why)))?;
    cl.change(|map| {
        let me = map.myself().id.clone();
        if peer.myself().id == me {
            return Ok(Frame::ok());
        }
        let p = peer.myself();
        // The port and hostname the peer announces (as Redis learns them
        // from its pings), the address it was met at.
        let port = if p.port == 0 { port_num } else { p.port };
        let node = map.learn(&p.id, ip_text, port, p.bus_port);
        map.nodes[node].hostname = p.hostname.clone();
        for (a, b) in peer.ranges_of(MYSELF) {
            for slot in a..=b {
                if map.owner(slot).is_none() {
                    map.assign(slot, Some(node));
                }
            }
        }
        Ok::<_, CmdError>(Frame::ok())
    })
}
