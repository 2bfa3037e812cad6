//! Cluster mode (`cluster-enabled yes`): the Redis Cluster protocol for
//! cluster-aware clients, over a slot map that changes only by command.
//!
//! There is no cluster bus: no gossip, failure detection or failover. The
//! map is what the operator gives each node, in `cluster-config-file`
//! (Redis's `nodes.conf` shape, see [`conf`]) or by `CLUSTER ADDSLOTS`,
//! `CLUSTER MEET` (a one-time handshake over the peer's client port) and
//! `CLUSTER SETSLOT`, each of which saves the file. Every node must be told
//! every change it should know of, as `redis-cli --cluster reshard` tells
//! both ends of a move with `SETSLOT ... NODE`.
//!
//! [`route`] decides, before a command runs, whether this node serves its
//! keys or the client is sent elsewhere (`-MOVED`, `-ASK`). It is reached
//! only when cluster mode is on: a standalone server pays one branch on an
//! `Option` that is always `None`.
//!
//! # Cluster mode (design notes)
//!
//! `ferrum-server/src/cluster/` holds the Redis Cluster protocol over a
//! static slot map; `cmd/cluster.rs` the `CLUSTER`, `ASKING`, `READONLY` and
//! `READWRITE` commands and the glue to the command path.
//!
//! - **No bus.** `Shared::cluster` is `Some(Cluster)` only with
//!   `cluster-enabled yes`. The `Cluster` holds the `SlotMap`
//!   (`cluster/map.rs`: known nodes, this node first; the owner of each of the
//!   16384 slots as a two-byte node index; the slots migrating and
//!   importing) behind an `RwLock`, and the path of `cluster-config-file`.
//!   Nothing changes the map but a command sent to this node: `Cluster::change`
//!   applies it to a copy (32 KiB), swaps the copy in only when the whole
//!   command is valid (an `ADDSLOTS` with one busy slot assigns none), and
//!   saves the file (`cluster/conf.rs`, Redis's `nodes.conf` lines, written
//!   to a temporary file and renamed). `CLUSTER MEET` (`cluster/meet.rs`) is
//!   a one-time `CLUSTER NODES` over the peer's client port, with
//!   `MIGRATE`'s blocking `Link`, off the tokio worker; the peer's line gives
//!   the port and hostname it announces (`cluster-announce-port`,
//!   `cluster-announce-hostname`), as Redis's pings would, and the address it
//!   was met at stands for its ip. Redirections and `CLUSTER SLOTS` name a
//!   node by `Cluster::endpoint` (`cluster-preferred-endpoint-type`).
//! - **Routing sits in `cmd::prepare`,** after the `AUTH` and ACL checks and
//!   before `MULTI` queueing, where Redis's `processCommand` calls
//!   `getNodeByQuery`. `cmd::cluster::route` gathers the keys
//!   (`getkeys::command_keys`, the key specs `COMMAND GETKEYS` answers from,
//!   so movable keys count; the channels of `SSUBSCRIBE`/`SPUBLISH`; for
//!   `EXEC` every queued command's) and `cluster::route::route` decides as
//!   Redis does: one slot, served, ours, or `-MOVED`; while migrating, a
//!   missing key is `-ASK`ed for; while importing, served after `ASKING`
//!   (`ConnState::asking`, cleared after the next command outside `MULTI`).
//!   `MIGRATE` sends `RESTORE-ASKING` in cluster mode, which the importing
//!   node serves without a client's `ASKING`. While the cluster is down
//!   (`Cluster::is_ok`), `Cluster::when_down` applies
//!   `cluster-allow-reads-when-down` (by the command's `WRITE` flag, as Redis
//!   goes by `CMD_WRITE`) and `cluster-allow-pubsubshard-when-down`. `cmd::script_call::admit` routes
//!   each `redis.call` the same way and refuses another node's keys.
//! - **Routing holds until the command has run.** A check in `prepare` that
//!   found a key here and the command's run are two steps; a `MIGRATE` that
//!   deleted the key between them would leave a `GET` answering nil, found
//!   neither here nor at the target (the cluster test
//!   `reads_during_a_move_always_find_the_key` saw this in a quarter of its
//!   runs). So in cluster mode `MIGRATE` holds the transaction gate's write
//!   side (`cmd::gate::enter_gate`), and `Cluster::generation` counts the
//!   times keys may have changed hands (a map change, a `MIGRATE` that
//!   deleted keys). `prepare` notes it before routing (`Ctx::routed_at`);
//!   once the command holds the gate (`EXEC`: its write side), it is routed
//!   again if the count moved (`cmd::route::recheck`), and no `MIGRATE` can
//!   run before it is done. In the steady state the cost is one atomic load.
//! - **Blocked clients follow their slot.** A `CLUSTER` command that moved
//!   the generation (and a `CONFIG SET` that did, through
//!   `cluster-require-full-coverage`) wakes every blocked client
//!   (`Blocking::wake_all`). Its retry (`cmd::blocking::retry`) asks
//!   `cluster::route::blocked` first, Redis's
//!   `clusterRedirectBlockedClientIfNeeded`: a cluster that is down, or a
//!   slot neither ours nor being imported, ends the wait with the
//!   redirection.
//! - **What it costs.** Outside cluster mode, one branch on an `Option` that
//!   is always `None` per command, and one load of a `bool` that is always
//!   false (`ConnState::asking`) after it: 4 instructions each by callgrind,
//!   in a request that went from 3,219 to 3,249 instructions
//!   (`scripts/instructions-per-request.sh`; the rest is inlining that moved
//!   in `cmd::execute`, where `Ctx`'s drop is no longer inlined). In cluster mode a command with keys
//!   also pays the key extraction (a `Vec` of refcounted `Bytes`), CRC16 of
//!   each key, a read lock of the map, and, only while its slot migrates, a
//!   lookup per key.
//! - **No per-slot index.** Redis 7.0 threads every key of a cluster node on
//!   a per-slot list (two pointers a key). FerrumKV keeps none:
//!   `CLUSTER COUNTKEYSINSLOT`/`GETKEYSINSLOT` walk database 0 one shard lock
//!   at a time (`Store::lock_shard`) hashing each key, which makes them
//!   O(keys) but keeps the cost of a key in cluster mode what it is outside
//!   it. A reshard calls `GETKEYSINSLOT` once per batch of keys, so moving a
//!   slot costs a walk of the keyspace per batch.
//!
//! **Architecture invariant:** with `cluster-enabled no` nothing of cluster
//! mode runs per command beyond the `Shared::cluster` branch; the keyspace
//! holds no slot state in either mode.

pub(crate) mod conf;
pub(crate) mod map;
pub(crate) mod meet;
pub(crate) mod route;
pub(crate) mod slot;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{RwLock, RwLockReadGuard};

use anyhow::Context as _;

use map::{Node, SlotMap};

/// The cluster state of a node in cluster mode. One per server, in
/// `Shared::cluster`.
#[derive(Debug)]
pub(crate) struct Cluster {
    map: RwLock<SlotMap>,
    /// `cluster-config-file`, resolved against `dir`.
    path: PathBuf,
    /// `cluster-require-full-coverage`: keys are refused while any slot
    /// has no owner. `CONFIG SET` changes it, as in Redis.
    full_coverage: AtomicBool,
    /// `cluster-allow-reads-when-down`: while the cluster is down, serve
    /// commands that do not write.
    reads_when_down: AtomicBool,
    /// `cluster-allow-pubsubshard-when-down`: while the cluster is down,
    /// serve the sharded Pub/Sub commands.
    pubsubshard_when_down: AtomicBool,
    /// `cluster-preferred-endpoint-type`, as its index in
    /// [`ENDPOINT_TYPES`].
    endpoint_type: AtomicU8,
    /// Counts the times keys may have changed hands here: a change of the
    /// slot map, or a `MIGRATE` that deleted keys it sent. A command routed
    /// before it entered the transaction gate is routed again inside it
    /// when this moved (`cmd::route::recheck`).
    generation: AtomicU64,
}

/// The `cluster-preferred-endpoint-type` names, as Redis orders them.
pub(crate) const ENDPOINT_TYPES: [&str; 3] = ["ip", "hostname", "unknown-endpoint"];

/// The slot map changed but could not be saved: why, in words.
#[derive(Debug)]
pub(crate) struct SaveFailed(pub(crate) String);

/// Where this node says clients reach it.
#[derive(Clone, Debug)]
pub(crate) struct Endpoint {
    /// `cluster-announce-ip`, or the address bound when it is one address.
    pub(crate) ip: String,
    /// The client port.
    pub(crate) port: u16,
    /// The cluster bus port shown beside it (FerrumKV has no bus).
    pub(crate) bus_port: u16,
    /// `cluster-announce-hostname`; empty for none.
    pub(crate) hostname: String,
}

impl Cluster {
    /// Loads the slot map from `path`, or starts one with a new node id
    /// and no slots when the file does not exist, and saves it with this
    /// node's address as it is now.
    ///
    /// # Errors
    /// The file cannot be read, does not parse, or cannot be written.
    pub(crate) fn open(
        path: PathBuf,
        me: Endpoint,
        full_coverage: bool,
    ) -> anyhow::Result<Cluster> {
        let mut map = match std::fs::read_to_string(&path) {
            Ok(text) => conf::parse(&text)
                .map_err(anyhow::Error::msg)
                .with_context(|| {
                    format!(
                        "unrecoverable error in cluster config file {}",
                        path.display()
                    )
                })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => SlotMap::new(Node {
                id: new_node_id()?,
                ip: String::new(),
                port: 0,
                bus_port: 0,
                hostname: String::new(),
                epoch: 0,
            }),
            Err(e) => return Err(e).with_context(|| format!("could not read {}", path.display())),
        };
        let myself = map.myself_mut();
        myself.ip = me.ip;
        myself.port = me.port;
        myself.bus_port = me.bus_port;
        myself.hostname = me.hostname;
        save(&path, &map)?;
        Ok(Cluster {
            map: RwLock::new(map),
            path,
            full_coverage: AtomicBool::new(full_coverage),
            reads_when_down: AtomicBool::new(false),
            pubsubshard_when_down: AtomicBool::new(true),
            endpoint_type: AtomicU8::new(0),
            generation: AtomicU64::new(0),
        })
    }

    /// The slot map, to read.
    pub(crate) fn map(&self) -> RwLockReadGuard<'_, SlotMap> {
        self.map.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Changes the slot map with `f` and saves it when `f` succeeds.
    ///
    /// # Errors
    /// `f`'s error (nothing changed then), or the file could not be
    /// written (the change stays in force).
    pub(crate) fn change<R, E: From<SaveFailed>>(
        &self,
        f: impl FnOnce(&mut SlotMap) -> Result<R, E>,
    ) -> Result<R, E> {
        let mut map = self.map.write().unwrap_or_else(|p| p.into_inner());
        let mut changed = map.clone();
        let r = f(&mut changed)?;
        *map = changed;
        self.bump_generation();
        save(&self.path, &map).map_err(|e| E::from(SaveFailed(format!("{e:#}"))))?;
        Ok(r)
    }

    /// How many times keys may have changed hands here. Routing reads it
    /// first, so that a move after the read shows as a new value.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Keys may have changed hands (after the change is in place).
    pub(crate) fn bump_generation(&self) {
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// Whether keys are served: every slot has an owner, or
    /// `cluster-require-full-coverage` is off (`cluster_state:ok`).
    pub(crate) fn is_ok(&self, map: &SlotMap) -> bool {
        !self.full_coverage.load(Ordering::Relaxed) || map.assigned() == slot::SLOTS
    }

    /// Installs `cluster-require-full-coverage` (`CONFIG SET`).
    pub(crate) fn set_full_coverage(&self, on: bool) {
        if self.full_coverage.swap(on, Ordering::Relaxed) != on {
            self.bump_generation();
        }
    }

    /// Installs `cluster-allow-reads-when-down` and
    /// `cluster-allow-pubsubshard-when-down` (startup and `CONFIG SET`).
    pub(crate) fn set_when_down(&self, reads: bool, pubsubshard: bool) {
        self.reads_when_down.store(reads, Ordering::Relaxed);
        self.pubsubshard_when_down
            .store(pubsubshard, Ordering::Relaxed);
    }

    /// What a command may do while the cluster is down, as Redis's
    /// `getNodeByQuery` decides: a sharded Pub/Sub command runs if
    /// `cluster-allow-pubsubshard-when-down`, another command if
    /// `cluster-allow-reads-when-down` and it does not write.
    pub(crate) fn when_down(&self, pubsubshard: bool, write: bool) -> Option<route::Redirect> {
        if pubsubshard {
            return (!self.pubsubshard_when_down.load(Ordering::Relaxed))
                .then_some(route::Redirect::Down);
        }
        if !self.reads_when_down.load(Ordering::Relaxed) {
            Some(route::Redirect::Down)
        } else if write {
            Some(route::Redirect::DownReadOnly)
        } else {
            None
        }
    }

    /// Installs `cluster-announce-hostname` (`CONFIG SET`): this node's
    /// hostname changes at once, and the file is saved, as in Redis.
    pub(crate) fn set_hostname(&self, hostname: &str) {
        if self.map().myself().hostname == hostname {
            return;
        }
        let saved = self.change(|map| {
            map.myself_mut().hostname = hostname.to_owned();
            Ok::<(), SaveFailed>(())
        });
        if let Err(SaveFailed(why)) = saved {
            tracing::warn!("Could not save the cluster config file: {why}");
        }
    }

    /// Installs `cluster-preferred-endpoint-type` (one of
    /// [`ENDPOINT_TYPES`]; startup and `CONFIG SET`).
    pub(crate) fn set_endpoint_type(&self, name: &str) {
        let index = ENDPOINT_TYPES.iter().position(|t| *t == name).unwrap_or(0);
        self.endpoint_type
            .store(u8::try_from(index).unwrap_or(0), Ordering::Relaxed);
    }

    /// How clients are told to reach `node` (Redis's
    /// `getPreferredEndpoint`): its address, its hostname (`?` when it has
    /// none), or `None` for `unknown-endpoint`.
    pub(crate) fn endpoint<'n>(&self, node: &'n map::Node) -> Option<&'n str> {
        match self.endpoint_type.load(Ordering::Relaxed) {
            0 => Some(&node.ip),
            1 if node.hostname.is_empty() => Some("?"),
            1 => Some(&node.hostname),
            _ => None,
        }
    }

    /// Whether the preferred endpoint is the address (`ip`), which
    /// `CLUSTER SLOTS` then does not repeat among a node's details.
    pub(crate) fn endpoint_is_ip(&self) -> bool {
        self.endpoint_type.load(Ordering::Relaxed) == 0
    }

    /// Whether the preferred endpoint is the hostname.
    pub(crate) fn endpoint_is_hostname(&self) -> bool {
        self.endpoint_type.load(Ordering::Relaxed) == 1
    }

    /// A fresh node id for this node (`CLUSTER RESET HARD`).
    ///
    /// # Errors
    /// The OS has no randomness to give.
    pub(crate) fn new_id() -> anyhow::Result<String> {
        new_node_id()
    }
}

/// Writes the map to `path` whole: to a temporary file first, renamed
/// over the old one, so a crash leaves the old map or the new one.
fn save(path: &Path, map: &SlotMap) -> anyhow::Result<()> {
    let tmp = path.with_extension("tmp-ferrum");
    std::fs::write(&tmp, conf::render_file(map))
        .and_then(|()| std::fs::rename(&tmp, path))
        .with_context(|| format!("could not save the cluster config file {}", path.display()))
}

/// 40 random hex characters.
fn new_node_id() -> anyhow::Result<String> {
    let mut bytes = [0u8; 20];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no randomness for a node id: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
