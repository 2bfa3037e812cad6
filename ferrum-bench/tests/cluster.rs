//! The cluster-aware route against three FerrumKV nodes in cluster mode on
//! loopback: it follows `-MOVED` (and keeps the new owner), `-ASK` (with
//! `ASKING`, keeping its map), gives up on a cluster that redirects in
//! circles, and a third of the memory on each node keeps one node's hit
//! ratio, as through twemproxy.

mod support;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use ferrum_bench::client::{Client, ClientError};
use ferrum_bench::cluster::{self, key_slot, ClusterRoute};
use ferrum_bench::sharded::Route;
use ferrum_proto::Frame;
use support::TestServer;

/// A FerrumKV in cluster mode with its `cluster-config-file` in a fresh
/// directory of its own, removed after the node stops.
struct Node {
    server: TestServer,
    dir: PathBuf,
}

impl Node {
    fn start() -> Node {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("ferrum-bench-cluster-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("config dir");
        let file = dir.join("nodes.conf");
        let server = TestServer::start_with(&[
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            file.to_str().expect("utf-8 path"),
        ]);
        Node { server, dir }
    }

    fn addr(&self) -> SocketAddr {
        self.server.addr
    }

    fn call(&self, args: &[&str]) -> Frame {
        Client::connect(self.addr())
            .and_then(|mut c| c.call(args))
            .unwrap_or_else(|e| panic!("{args:?} on {}: {e}", self.addr()))
    }

    fn id(&self) -> String {
        match self.call(&["CLUSTER", "MYID"]) {
            Frame::Bulk(id) => String::from_utf8_lossy(&id).into_owned(),
            reply => panic!("CLUSTER MYID: {reply:?}"),
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        // The server stops when its field drops, after this; the directory
        // holds only the file it saves, which it no longer needs.
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Three nodes made one cluster by [`cluster::form`].
fn three_nodes() -> (Vec<Node>, Vec<SocketAddr>) {
    let nodes: Vec<Node> = (0..3).map(|_| Node::start()).collect();
    let addrs: Vec<SocketAddr> = nodes.iter().map(Node::addr).collect();
    cluster::form(&addrs).expect("the nodes form a cluster");
    (nodes, addrs)
}

fn set(route: &mut ClusterRoute, key: &str) -> Result<Frame, ClientError> {
    route.call(key.as_bytes(), &[b"SET", key.as_bytes(), b"v"])
}

#[test]
fn the_route_reads_the_map_and_sends_each_key_to_its_owner() {
    let (nodes, addrs) = three_nodes();
    let mut route = ClusterRoute::connect(addrs[1]).expect("read the map");
    for (slot, owner) in [
        (0, 0),
        (5460, 0),
        (5461, 1),
        (10921, 1),
        (10922, 2),
        (16383, 2),
    ] {
        assert_eq!(route.owner(slot), Some(addrs[owner]), "slot {slot}");
    }
    for key in ["foo", "bar", "hello", "key:000001"] {
        assert_eq!(set(&mut route, key).unwrap(), Frame::Simple("OK".into()));
    }
    // Each key is on its slot's owner, and nowhere else.
    let mut total = 0;
    for node in &nodes {
        let Frame::Integer(n) = node.call(&["DBSIZE"]) else {
            panic!("DBSIZE")
        };
        total += n;
    }
    assert_eq!(total, 4);
    for key in ["foo", "bar", "hello", "key:000001"] {
        let owner = addrs
            .iter()
            .position(|&a| route.owner(key_slot(key.as_bytes())) == Some(a))
            .expect("an owner");
        assert_eq!(
            nodes[owner].call(&["EXISTS", key]),
            Frame::Integer(1),
            "{key}"
        );
    }
}

#[test]
fn moved_updates_the_map_and_the_command_is_resent_to_the_new_owner() {
    let (nodes, addrs) = three_nodes();
    let mut route = ClusterRoute::connect(addrs[0]).expect("read the map");
    // "foo" (12182) is node 2's; its slot is empty, so it can be given to
    // node 0 on every node.
    let slot = key_slot(b"foo");
    assert_eq!(route.owner(slot), Some(addrs[2]));
    let new_owner = nodes[0].id();
    for node in &nodes {
        node.call(&["CLUSTER", "SETSLOT", &slot.to_string(), "NODE", &new_owner]);
    }
    assert_eq!(set(&mut route, "foo").unwrap(), Frame::Simple("OK".into()));
    assert_eq!(route.owner(slot), Some(addrs[0]), "the map keeps the MOVED");
    assert_eq!(nodes[0].call(&["GET", "foo"]), Frame::Bulk("v".into()));
    assert_eq!(nodes[0].call(&["DBSIZE"]), Frame::Integer(1));
    assert_eq!(nodes[2].call(&["DBSIZE"]), Frame::Integer(0));
}

#[test]
fn ask_sends_asking_and_the_command_to_the_importer_and_keeps_the_map() {
    let (nodes, addrs) = three_nodes();
    let mut route = ClusterRoute::connect(addrs[0]).expect("read the map");
    // The slot of "t" (15891) moves from node 2 to node 0.
    let slot = key_slot(b"t").to_string();
    nodes[0].call(&["CLUSTER", "SETSLOT", &slot, "IMPORTING", &nodes[2].id()]);
    nodes[2].call(&["CLUSTER", "SETSLOT", &slot, "MIGRATING", &nodes[0].id()]);
    assert_eq!(
        set(&mut route, "{t}new").unwrap(),
        Frame::Simple("OK".into())
    );
    assert_eq!(route.owner(key_slot(b"t")), Some(addrs[2]));
    assert_eq!(nodes[0].call(&["DBSIZE"]), Frame::Integer(1));
    assert_eq!(nodes[2].call(&["DBSIZE"]), Frame::Integer(0));
}

#[test]
fn a_cluster_redirecting_in_circles_is_a_clear_error() {
    let (nodes, addrs) = three_nodes();
    let mut route = ClusterRoute::connect(addrs[0]).expect("read the map");
    // Nodes 0 and 1 each say the other serves the slot of "bar".
    let slot = key_slot(b"bar");
    let s = slot.to_string();
    nodes[0].call(&["CLUSTER", "SETSLOT", &s, "NODE", &nodes[1].id()]);
    nodes[1].call(&["CLUSTER", "SETSLOT", &s, "NODE", &nodes[0].id()]);
    match set(&mut route, "bar") {
        Err(e @ ClientError::TooManyRedirects { .. }) => {
            let ClientError::TooManyRedirects { slot: got, .. } = e else {
                unreachable!("matched above")
            };
            assert_eq!(got, slot);
            assert!(
                e.to_string()
                    .starts_with(&format!("SET for slot {slot}: still redirected after 5")),
                "{e}"
            );
        }
        other => panic!("a redirect loop was followed: {other:?}"),
    }
}

#[test]
fn a_third_of_the_memory_on_each_of_three_cluster_nodes_keeps_the_hit_ratio() {
    let single = TestServer::start();
    let (_nodes, addrs) = three_nodes();
    let route = ClusterRoute::connect(addrs[0]).expect("read the map");
    // CRC16 spreads zipf's hot keys over the slots as ketama does over the
    // ring.
    let cell = support::compare_a_third_each(single.addr, route, &addrs);
    assert_eq!(cell.sharded.route, "cluster");
}
