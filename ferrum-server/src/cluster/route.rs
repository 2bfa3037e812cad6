//! Routing: whether this node serves a command's keys, or where the client
//! must go instead, decided as Redis's `getNodeByQuery` decides it.
//!
//! All the keys of one command (or of one transaction, for `EXEC`) must
//! hash to one slot (`-CROSSSLOT`). That slot must have an owner
//! (`-CLUSTERDOWN Hash slot not served`) and, with
//! `cluster-require-full-coverage`, so must every slot. A slot of another
//! node redirects the client there (`-MOVED`). While this node migrates
//! the slot out, a command whose keys are not all still here is sent to the
//! importing node (`-ASK`); the importing node serves the slot only to
//! clients that sent `ASKING` first, and a multi-key command whose keys are
//! only partly there yet gets `-TRYAGAIN`.

use bytes::Bytes;

use super::map::{NodeIndex, SlotMap, MYSELF};
use super::slot::key_slot;
use super::Cluster;

/// Why a command is not served here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Redirect {
    /// The slot is another node's: `-MOVED <slot> <ip>:<port>`.
    Moved {
        /// The keys' slot.
        slot: u16,
        /// The owner's `ip:port`.
        addr: String,
    },
    /// The slot is moving to this node: `-ASK <slot> <ip>:<port>`.
    Ask {
        /// The keys' slot.
        slot: u16,
        /// The importing node's `ip:port`.
        addr: String,
    },
    /// The keys hash to different slots.
    CrossSlot,
    /// A multi-key command on a slot being imported, with some keys not
    /// here yet.
    TryAgain,
    /// The keys' slot has no owner.
    Unbound,
    /// Some slot has no owner and full coverage is required.
    Down,
    /// As `Down`, for a write when `cluster-allow-reads-when-down` lets
    /// reads through.
    DownReadOnly,
}

/// What routing needs to know about the client and the command.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Query {
    /// The client sent `ASKING` (or the command is `RESTORE-ASKING`).
    pub(crate) asking: bool,
    /// The command is `MIGRATE`, which runs wherever its slot is open.
    pub(crate) migrate: bool,
    /// The command may write (`cluster-allow-reads-when-down`).
    pub(crate) write: bool,
    /// The command is a sharded Pub/Sub one (`SPUBLISH`, `SSUBSCRIBE`,
    /// `SUNSUBSCRIBE`: `cluster-allow-pubsubshard-when-down`).
    pub(crate) pubsubshard: bool,
}

/// Decides whether this node serves `keys`; `exists` says whether a key is
/// here (only asked while the slot migrates).
///
/// # Errors
/// Where the client must go instead, or why no node serves it.
pub(crate) fn route<'k>(
    cluster: &Cluster,
    keys: impl IntoIterator<Item = &'k Bytes>,
    query: Query,
    exists: impl Fn(&[u8]) -> bool,
) -> Result<(), Redirect> {
    let map = cluster.map();
    let mut first: Option<(&Bytes, u16, NodeIndex)> = None;
    let (mut migrating, mut importing) = (false, false);
    let (mut multiple, mut missing) = (false, 0usize);
    for key in keys {
        match first {
            None => {
                let slot = key_slot(key);
                let owner = map.owner(slot).ok_or(Redirect::Unbound)?;
                migrating = owner == MYSELF && map.migrating.contains_key(&slot);
                importing = !migrating && map.importing.contains_key(&slot);
                first = Some((key, slot, owner));
            }
            Some((k, slot, _)) if k != key => {
                if key_slot(key) != slot {
                    return Err(Redirect::CrossSlot);
                }
                multiple = true;
            }
            Some(_) => {}
        }
        if (migrating || importing) && !exists(key) {
            missing += 1;
        }
    }
    let Some((_, slot, owner)) = first else {
        return Ok(());
    };
    if !cluster.is_ok(&map) {
        if let Some(refusal) = cluster.when_down(query.pubsubshard, query.write) {
            return Err(refusal);
        }
    }
    if (migrating || importing) && query.migrate {
        return Ok(());
    }
    if migrating && missing > 0 {
        let to = map.migrating[&slot];
        return Err(Redirect::Ask {
            slot,
            addr: address(cluster, &map, to),
        });
    }
    if importing && query.asking {
        return if multiple && missing > 0 {
            Err(Redirect::TryAgain)
        } else {
            Ok(())
        };
    }
    if owner == MYSELF {
        return Ok(());
    }
    Err(Redirect::Moved {
        slot,
        addr: address(cluster, &map, owner),
    })
}

/// Whether a client blocked on `key` (`BLPOP` and the others) may go on
/// waiting here, as Redis's `clusterRedirectBlockedClientIfNeeded`
/// decides: not while the cluster is down, nor once the key's slot is
/// another node's (or nobody's) and not being imported here. A slot
/// migrating out is still this node's: its clients wait on.
///
/// # Errors
/// The redirection that unblocks the client.
pub(crate) fn blocked(cluster: &Cluster, key: &[u8]) -> Result<(), Redirect> {
    let map = cluster.map();
    if !cluster.is_ok(&map) {
        return Err(Redirect::Down);
    }
    let slot = key_slot(key);
    match map.owner(slot) {
        Some(MYSELF) => Ok(()),
        _ if map.importing.contains_key(&slot) => Ok(()),
        None => Err(Redirect::Unbound),
        Some(owner) => Err(Redirect::Moved {
            slot,
            addr: address(cluster, &map, owner),
        }),
    }
}

/// `endpoint:port` of a node, as redirections name it: its address, or
/// by `cluster-preferred-endpoint-type` its hostname (`?` for none) or
/// nothing.
fn address(cluster: &Cluster, map: &SlotMap, node: NodeIndex) -> String {
    let n = &map.nodes[node];
    format!("{}:{}", cluster.endpoint(n).unwrap_or(""), n.port)
}

#[cfg(test)]
mod tests {
    use super::super::map::Node;
    use super::*;

    fn cluster(map: SlotMap) -> Cluster {
        let dir = std::env::temp_dir().join(format!(
            "ferrum-route-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("nodes.conf");
        std::fs::write(&path, super::super::conf::render_file(&map)).expect("write map");
        let me = super::super::Endpoint {
            ip: "127.0.0.1".into(),
            port: 7000,
            bus_port: 17000,
            hostname: String::new(),
        };
        let cluster = Cluster::open(path, me, true).expect("open");
        // Routing never saves the map: the file has done its part.
        let _ = std::fs::remove_dir_all(&dir);
        cluster
    }

    /// Slots up to 8191 here, the rest on a peer at port 7001; `foo` is
    /// slot 12182 (the peer's), `bar` 5061 (ours).
    fn two_nodes() -> SlotMap {
        let mut map = SlotMap::new(Node {
            id: "a".repeat(40),
            ip: "127.0.0.1".into(),
            port: 7000,
            bus_port: 17000,
            hostname: String::new(),
            epoch: 0,
        });
        let peer = map.learn(&"b".repeat(40), "127.0.0.1", 7001, 17001);
        for s in 0..16384u16 {
            map.assign(s, Some(if s < 8192 { MYSELF } else { peer }));
        }
        map
    }

    fn keys(names: &[&'static str]) -> Vec<Bytes> {
        names
            .iter()
            .map(|n| Bytes::from_static(n.as_bytes()))
            .collect()
    }

    fn go(
        c: &Cluster,
        names: &[&'static str],
        query: Query,
        here: &[&str],
    ) -> Result<(), Redirect> {
        route(c, &keys(names), query, |k| {
            here.iter().any(|h| h.as_bytes() == k)
        })
    }

    #[test]
    fn own_slots_are_served_and_others_moved() {
        let c = cluster(two_nodes());
        assert_eq!(go(&c, &["bar"], Query::default(), &[]), Ok(()));
        assert_eq!(go(&c, &[], Query::default(), &[]), Ok(()));
        let moved = Redirect::Moved {
            slot: 12182,
            addr: "127.0.0.1:7001".into(),
        };
        assert_eq!(go(&c, &["foo"], Query::default(), &[]), Err(moved));
        assert_eq!(
            go(&c, &["bar", "foo"], Query::default(), &[]),
            Err(Redirect::CrossSlot)
        );
        // The same key twice is one slot.
        assert_eq!(go(&c, &["bar", "bar"], Query::default(), &[]), Ok(()));
        assert_eq!(go(&c, &["{bar}1", "{bar}2"], Query::default(), &[]), Ok(()));
    }

    #[test]
    fn unassigned_slots_are_down() {
        let mut map = two_nodes();
        map.assign(5061, None);
        let c = cluster(map);
        assert_eq!(
            go(&c, &["bar"], Query::default(), &[]),
            Err(Redirect::Unbound)
        );
        // Any missing slot stops every key while full coverage is required.
        assert_eq!(
            go(&c, &["{bar}x"], Query::default(), &[]),
            Err(Redirect::Unbound)
        );
        assert_eq!(
            go(&c, &["hello"], Query::default(), &[]),
            Err(Redirect::Down)
        );
    }

    #[test]
    fn a_down_cluster_serves_what_its_settings_allow() {
        let mut map = two_nodes();
        map.assign(5061, None);
        let c = cluster(map);
        let write = Query {
            write: true,
            ..Query::default()
        };
        let shard = Query {
            pubsubshard: true,
            ..Query::default()
        };
        // Redis's defaults: no reads, sharded Pub/Sub goes on.
        assert_eq!(go(&c, &["hello"], shard, &[]), Ok(()));
        c.set_when_down(true, false);
        assert_eq!(go(&c, &["hello"], Query::default(), &[]), Ok(()));
        assert_eq!(go(&c, &["hello"], write, &[]), Err(Redirect::DownReadOnly));
        assert_eq!(go(&c, &["hello"], shard, &[]), Err(Redirect::Down));
        // Another node's key is still moved, an unowned slot still unbound.
        assert!(matches!(
            go(&c, &["foo"], Query::default(), &[]),
            Err(Redirect::Moved { .. })
        ));
        assert_eq!(
            go(&c, &["bar"], Query::default(), &[]),
            Err(Redirect::Unbound)
        );
    }

    #[test]
    fn a_migrating_slot_asks_for_keys_that_left() {
        let mut map = two_nodes();
        map.migrating.insert(5061, 1);
        let c = cluster(map);
        assert_eq!(go(&c, &["bar"], Query::default(), &["bar"]), Ok(()));
        let ask = Redirect::Ask {
            slot: 5061,
            addr: "127.0.0.1:7001".into(),
        };
        assert_eq!(go(&c, &["bar"], Query::default(), &[]), Err(ask));
        let migrate = Query {
            migrate: true,
            ..Query::default()
        };
        assert_eq!(go(&c, &["bar"], migrate, &[]), Ok(()));
    }

    #[test]
    fn an_importing_slot_serves_only_after_asking() {
        let mut map = two_nodes();
        map.importing.insert(12182, 1);
        let c = cluster(map);
        let asking = Query {
            asking: true,
            ..Query::default()
        };
        assert!(matches!(
            go(&c, &["foo"], Query::default(), &[]),
            Err(Redirect::Moved { .. })
        ));
        assert_eq!(go(&c, &["foo"], asking, &[]), Ok(()));
        assert_eq!(
            go(&c, &["{foo}1", "{foo}2"], asking, &["{foo}1"]),
            Err(Redirect::TryAgain)
        );
        assert_eq!(
            go(&c, &["{foo}1", "{foo}2"], asking, &["{foo}1", "{foo}2"]),
            Ok(())
        );
    }

    #[test]
    fn a_blocked_client_waits_only_where_its_slot_is_served() {
        let mut map = two_nodes();
        map.migrating.insert(5061, 1);
        let c = cluster(map.clone());
        assert_eq!(blocked(&c, b"bar"), Ok(()), "a slot migrating out");
        let moved = Redirect::Moved {
            slot: 12182,
            addr: "127.0.0.1:7001".into(),
        };
        assert_eq!(blocked(&c, b"foo"), Err(moved));
        map.importing.insert(12182, 1);
        assert_eq!(blocked(&cluster(map.clone()), b"foo"), Ok(()));
        // A slot with no owner: down with full coverage, unbound without.
        map.assign(5061, None);
        let c = cluster(map);
        assert_eq!(blocked(&c, b"bar"), Err(Redirect::Down));
        c.set_full_coverage(false);
        assert_eq!(blocked(&c, b"bar"), Err(Redirect::Unbound));
    }
}
