//! The slot map: the nodes this node knows, which node serves each of the
//! 16384 slots, and the slots being moved in or out.
//!
//! With no cluster bus, the map changes only by commands sent to this node
//! (`CLUSTER ADDSLOTS`, `SETSLOT ... NODE`, `MEET`) and is saved to
//! `cluster-config-file` after each change, in the shape of Redis's
//! `nodes.conf` (see [`super::conf`]).

use std::collections::BTreeMap;

use super::slot::SLOTS;

/// Index of a node in [`SlotMap::nodes`]; the node itself is always 0.
pub(crate) type NodeIndex = usize;

/// The node running this process.
pub(crate) const MYSELF: NodeIndex = 0;

/// An unserved slot in [`SlotMap`]'s owner table.
const NOBODY: u16 = u16::MAX;

/// A node index as the owner table stores it. A map holds at most one
/// node per `CLUSTER MEET` or config line, far fewer than 65535.
fn to_u16(node: NodeIndex) -> u16 {
    u16::try_from(node).unwrap_or(NOBODY)
}

/// One node of the cluster, as `CLUSTER NODES` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Node {
    /// 40 lower-case hex characters.
    pub(crate) id: String,
    /// The address clients reach it at; empty when unknown.
    pub(crate) ip: String,
    /// Its client port.
    pub(crate) port: u16,
    /// Its cluster bus port, shown for compatibility: FerrumKV opens none.
    pub(crate) bus_port: u16,
    /// Its `cluster-announce-hostname`; empty for none.
    pub(crate) hostname: String,
    /// Its config epoch.
    pub(crate) epoch: u64,
}

/// Which node serves each slot, and the slots being migrated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SlotMap {
    /// Every known node; [`MYSELF`] first.
    pub(crate) nodes: Vec<Node>,
    /// The node serving each slot, [`NOBODY`] for none: two bytes a slot,
    /// 32 KiB in all, since `CLUSTER` commands copy the map to change it.
    owners: Box<[u16]>,
    /// Slots this node is moving out, to the node named
    /// (`SETSLOT <slot> MIGRATING <id>`).
    pub(crate) migrating: BTreeMap<u16, NodeIndex>,
    /// Slots this node is taking in, from the node named
    /// (`SETSLOT <slot> IMPORTING <id>`).
    pub(crate) importing: BTreeMap<u16, NodeIndex>,
    /// The cluster's current epoch, as `CLUSTER INFO` reports it.
    pub(crate) current_epoch: u64,
}

impl SlotMap {
    /// A map that knows only `myself` and assigns no slot.
    pub(crate) fn new(myself: Node) -> SlotMap {
        SlotMap {
            nodes: vec![myself],
            owners: vec![NOBODY; SLOTS].into_boxed_slice(),
            migrating: BTreeMap::new(),
            importing: BTreeMap::new(),
            current_epoch: 0,
        }
    }

    /// This node.
    pub(crate) fn myself(&self) -> &Node {
        &self.nodes[MYSELF]
    }

    /// This node, to change its address or epoch.
    pub(crate) fn myself_mut(&mut self) -> &mut Node {
        &mut self.nodes[MYSELF]
    }

    /// The node serving `slot`.
    pub(crate) fn owner(&self, slot: u16) -> Option<NodeIndex> {
        let o = self.owners[usize::from(slot)];
        (o != NOBODY).then_some(usize::from(o))
    }

    /// Makes `node` (or nobody) serve `slot`.
    pub(crate) fn assign(&mut self, slot: u16, node: Option<NodeIndex>) {
        self.owners[usize::from(slot)] = node.map_or(NOBODY, to_u16);
    }

    /// The node with this id.
    pub(crate) fn find(&self, id: &[u8]) -> Option<NodeIndex> {
        self.nodes.iter().position(|n| n.id.as_bytes() == id)
    }

    /// The node with this id, added with `ip:port` if unknown; an
    /// address given for a known node replaces its old one.
    pub(crate) fn learn(&mut self, id: &str, ip: &str, port: u16, bus_port: u16) -> NodeIndex {
        if let Some(i) = self.find(id.as_bytes()) {
            if i != MYSELF {
                let n = &mut self.nodes[i];
                (n.ip, n.port, n.bus_port) = (ip.to_owned(), port, bus_port);
            }
            return i;
        }
        self.nodes.push(Node {
            id: id.to_owned(),
            ip: ip.to_owned(),
            port,
            bus_port,
            hostname: String::new(),
            epoch: 0,
        });
        self.nodes.len() - 1
    }

    /// How many slots have an owner.
    pub(crate) fn assigned(&self) -> usize {
        self.owners.iter().filter(|o| **o != NOBODY).count()
    }

    /// How many nodes serve at least one slot (`cluster_size`).
    pub(crate) fn serving_nodes(&self) -> usize {
        let mut serving = vec![false; self.nodes.len()];
        for o in self.owners.iter().filter(|o| **o != NOBODY) {
            serving[usize::from(*o)] = true;
        }
        serving.iter().filter(|s| **s).count()
    }

    /// The slots `node` serves, as inclusive ranges in ascending order.
    pub(crate) fn ranges_of(&self, node: NodeIndex) -> Vec<(u16, u16)> {
        self.ranges()
            .filter(|(n, _, _)| *n == node)
            .map(|(_, a, b)| (a, b))
            .collect()
    }

    /// Every run of consecutive slots with one owner: owner, first, last.
    pub(crate) fn ranges(&self) -> impl Iterator<Item = (NodeIndex, u16, u16)> + '_ {
        let mut slot = 0usize;
        std::iter::from_fn(move || {
            while slot < SLOTS && self.owners[slot] == NOBODY {
                slot += 1;
            }
            let owner = *self.owners.get(slot)?;
            let start = slot;
            while slot < SLOTS && self.owners[slot] == owner {
                slot += 1;
            }
            Some((usize::from(owner), start as u16, (slot - 1) as u16))
        })
    }

    /// Forgets every other node and every slot, and returns to epoch 0
    /// when `hard` (`CLUSTER RESET`). The caller gives a hard reset its
    /// new id.
    pub(crate) fn reset(&mut self, hard: bool) {
        self.nodes.truncate(1);
        self.owners.fill(NOBODY);
        self.migrating.clear();
        self.importing.clear();
        if hard {
            self.current_epoch = 0;
            self.myself_mut().epoch = 0;
        }
    }

    /// Drops the node `node` (not [`MYSELF`]), the slots it served and the
    /// migrations to or from it (`CLUSTER FORGET`).
    pub(crate) fn forget(&mut self, node: NodeIndex) {
        let renumber = |i: NodeIndex| match i.cmp(&node) {
            std::cmp::Ordering::Less => Some(i),
            std::cmp::Ordering::Equal => None,
            std::cmp::Ordering::Greater => Some(i - 1),
        };
        self.nodes.remove(node);
        for owner in self.owners.iter_mut().filter(|o| **o != NOBODY) {
            *owner = renumber(usize::from(*owner)).map_or(NOBODY, to_u16);
        }
        for side in [&mut self.migrating, &mut self.importing] {
            *side = side
                .iter()
                .filter_map(|(slot, i)| Some((*slot, renumber(*i)?)))
                .collect();
        }
    }

    /// Closes a migration of `slot` when `node` becomes its owner, as Redis
    /// does on `SETSLOT <slot> NODE`: the importing side stops importing
    /// once it owns the slot, the migrating side stops migrating once the
    /// slot is someone else's.
    pub(crate) fn settle(&mut self, slot: u16, node: NodeIndex) {
        if node == MYSELF {
            self.importing.remove(&slot);
        } else {
            self.migrating.remove(&slot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: char, port: u16) -> Node {
        Node {
            id: id.to_string().repeat(40),
            ip: "127.0.0.1".into(),
            port,
            bus_port: port + 10000,
            hostname: String::new(),
            epoch: 0,
        }
    }

    #[test]
    fn ranges_group_consecutive_slots_by_owner() {
        let mut map = SlotMap::new(node('a', 1));
        let b = map.learn(&"b".repeat(40), "127.0.0.1", 2, 10002);
        for s in 0..=10 {
            map.assign(s, Some(MYSELF));
        }
        map.assign(11, Some(b));
        map.assign(16383, Some(MYSELF));
        let ranges: Vec<_> = map.ranges().collect();
        assert_eq!(ranges, [(0, 0, 10), (1, 11, 11), (0, 16383, 16383)]);
        assert_eq!(map.ranges_of(MYSELF), [(0, 10), (16383, 16383)]);
        assert_eq!(map.assigned(), 13);
        assert_eq!(map.serving_nodes(), 2);
    }

    #[test]
    fn learning_a_known_node_updates_its_address() {
        let mut map = SlotMap::new(node('a', 1));
        let b = map.learn(&"b".repeat(40), "127.0.0.1", 2, 10002);
        assert_eq!(map.learn(&"b".repeat(40), "127.0.0.2", 3, 10003), b);
        assert_eq!(
            (map.nodes[b].ip.as_str(), map.nodes[b].port),
            ("127.0.0.2", 3)
        );
        assert_eq!(map.nodes.len(), 2);
    }

    #[test]
    fn forgetting_a_node_renumbers_the_rest() {
        let mut map = SlotMap::new(node('a', 1));
        let b = map.learn(&"b".repeat(40), "127.0.0.1", 2, 10002);
        let c = map.learn(&"c".repeat(40), "127.0.0.1", 3, 10003);
        map.assign(1, Some(b));
        map.assign(2, Some(c));
        map.migrating.insert(3, c);
        map.importing.insert(4, b);
        map.forget(b);
        assert_eq!(map.owner(1), None);
        assert_eq!(map.owner(2), Some(1));
        assert_eq!(map.nodes[1].port, 3);
        assert_eq!(map.migrating.get(&3), Some(&1));
        assert!(map.importing.is_empty());
    }

    #[test]
    fn reset_forgets_others_and_slots() {
        let mut map = SlotMap::new(node('a', 1));
        let b = map.learn(&"b".repeat(40), "127.0.0.1", 2, 10002);
        map.assign(5, Some(b));
        map.migrating.insert(5, b);
        map.reset(false);
        assert_eq!(map.nodes.len(), 1);
        assert_eq!(map.owner(5), None);
        assert!(map.migrating.is_empty());
    }
}
