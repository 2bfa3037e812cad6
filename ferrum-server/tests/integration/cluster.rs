//! Cluster mode on loopback: three nodes sharing the 16384 slots, MOVED and
//! ASK redirections, CROSSSLOT, and a slot moved between live nodes, with a
//! writer running, without losing a key.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::blocking::wait_blocked;
use crate::common::{err, info_fields, resp, run, TestServer};

/// A fresh directory for one node's `cluster-config-file`, removed when
/// dropped.
struct ConfDir(PathBuf);

impl std::ops::Deref for ConfDir {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for ConfDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn conf_dir() -> ConfDir {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("ferrum-cluster-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("config dir");
    ConfDir(dir)
}

/// A node in cluster mode whose map is saved in `dir`.
fn node_in(dir: &std::path::Path) -> TestServer {
    let file = dir.join("nodes.conf");
    TestServer::start_with(&[
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        file.to_str().expect("utf-8 path"),
    ])
}

/// A node in cluster mode with a directory of its own, which goes when the
/// node does (the server first: fields drop in order).
struct Node {
    server: TestServer,
    _dir: ConfDir,
}

impl std::ops::Deref for Node {
    type Target = TestServer;
    fn deref(&self) -> &TestServer {
        &self.server
    }
}

fn fresh_node() -> Node {
    let dir = conf_dir();
    Node {
        server: node_in(&dir),
        _dir: dir,
    }
}

/// Three nodes holding slots 0-5460, 5461-10922 and 10923-16383, each told
/// of the others by `CLUSTER MEET`.
fn three_nodes() -> Vec<Node> {
    let nodes: Vec<Node> = (0..3).map(|_| fresh_node()).collect();
    for (n, (a, b)) in nodes.iter().zip([(0, 5460), (5461, 10922), (10923, 16383)]) {
        let (a, b) = (a.to_string(), b.to_string());
        let _: () = run(&mut n.client(), &["CLUSTER", "ADDSLOTSRANGE", &a, &b]).unwrap();
    }
    for a in &nodes {
        let mut c = a.client();
        for b in &nodes {
            let port = b.addr.port().to_string();
            let _: () = run(&mut c, &["CLUSTER", "MEET", "127.0.0.1", &port]).unwrap();
        }
    }
    nodes
}

fn keyslot(c: &mut redis::Connection, key: &str) -> u16 {
    run(c, &["CLUSTER", "KEYSLOT", key]).unwrap()
}

/// The node of `nodes` serving `slot`, by the thirds of [`three_nodes`].
fn owner_of(slot: u16) -> usize {
    match slot {
        0..=5460 => 0,
        5461..=10922 => 1,
        _ => 2,
    }
}

fn myid(n: &TestServer) -> String {
    run(&mut n.client(), &["CLUSTER", "MYID"]).unwrap()
}

#[test]
fn every_node_knows_the_map_and_redirects_to_the_owner() {
    let nodes = three_nodes();
    let mut c = nodes[0].client();
    let info: String = run(&mut c, &["CLUSTER", "INFO"]).unwrap();
    assert!(info.contains("cluster_state:ok\r\n"), "{info}");
    assert!(info.contains("cluster_known_nodes:3\r\n"), "{info}");
    assert!(info.contains("cluster_size:3\r\n"), "{info}");
    assert_eq!(info_fields(&mut c, "cluster")["cluster_enabled"], "1");
    let slots: redis::Value = run(&mut c, &["CLUSTER", "SLOTS"]).unwrap();
    let redis::Value::Array(ranges) = slots else {
        panic!("{slots:?}")
    };
    assert_eq!(ranges.len(), 3);
    for key in ["foo", "bar", "hello", "{user1}.name"] {
        let slot = keyslot(&mut c, key);
        let owner = &nodes[owner_of(slot)];
        assert_eq!(
            run::<String>(&mut owner.client(), &["SET", key, "v"]).unwrap(),
            "OK"
        );
        for other in nodes.iter().filter(|n| n.addr != owner.addr) {
            let moved = err(&mut other.client(), &["GET", key]);
            assert_eq!(
                moved,
                format!("MOVED {slot} 127.0.0.1:{}", owner.addr.port())
            );
        }
    }
}

#[test]
fn keys_of_one_command_must_share_a_slot() {
    let nodes = three_nodes();
    let mut c = nodes[0].client();
    let crossslot = "CROSSSLOT Keys in request don't hash to the same slot";
    // `a` and `b` are in different slots, both of node 0's third or not:
    // the slot check comes before the owner check.
    assert_eq!(err(&mut c, &["MSET", "a", "1", "b", "2"]), crossslot);
    let tagged = &["{user1}a", "{user1}b"];
    let slot = keyslot(&mut c, "user1");
    let mut owner = nodes[owner_of(slot)].client();
    let _: () = run(&mut owner, &["MSET", tagged[0], "1", tagged[1], "2"]).unwrap();
    let got: Vec<String> = run(&mut owner, &["MGET", tagged[0], tagged[1]]).unwrap();
    assert_eq!(got, ["1", "2"]);
    // Keys found by key specs count too: EVAL's declared keys.
    assert_eq!(err(&mut c, &["EVAL", "return 1", "2", "a", "b"]), crossslot);
    assert_eq!(
        err(&mut c, &["SELECT", "1"]),
        "ERR SELECT is not allowed in cluster mode"
    );
    assert_eq!(run::<String>(&mut c, &["SELECT", "0"]).unwrap(), "OK");
    assert_eq!(
        err(&mut c, &["SWAPDB", "0", "1"]),
        "ERR SWAPDB is not allowed in cluster mode"
    );
    assert_eq!(
        err(&mut c, &["MOVE", "bar", "1"]),
        "ERR MOVE is not allowed in cluster mode"
    );
    assert_eq!(
        err(&mut c, &["COPY", "bar", "{bar}2", "DB", "1"]),
        "ERR Copying to another database is not allowed in cluster mode"
    );
}

#[test]
fn a_transaction_across_slots_is_discarded() {
    let dir = conf_dir();
    let n = node_in(&dir);
    let mut c = n.client();
    let _: () = run(&mut c, &["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]).unwrap();
    let _: () = run(&mut c, &["MULTI"]).unwrap();
    assert_eq!(run::<String>(&mut c, &["SET", "a", "1"]).unwrap(), "QUEUED");
    assert_eq!(run::<String>(&mut c, &["SET", "b", "1"]).unwrap(), "QUEUED");
    assert_eq!(
        err(&mut c, &["EXEC"]),
        "CROSSSLOT Keys in request don't hash to the same slot"
    );
    // The transaction is gone, and nothing of it ran.
    assert_eq!(err(&mut c, &["EXEC"]), "ERR EXEC without MULTI");
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "a"]).unwrap(), 0);
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "b"]).unwrap(), 0);
}

#[test]
fn a_script_may_not_reach_another_nodes_keys() {
    let nodes = three_nodes();
    let mut c = nodes[0].client();
    // `foo` is slot 12182, node 2's.
    let text = err(&mut c, &["EVAL", "return redis.call('get', 'foo')", "0"]);
    assert!(
        text.contains("Script attempted to access a non local key in a cluster node"),
        "{text}"
    );
    let moved = err(
        &mut c,
        &["EVAL", "return redis.call('get', KEYS[1])", "1", "foo"],
    );
    assert!(moved.starts_with("MOVED 12182 "), "{moved}");
    // `bar` is slot 5061, node 0's own.
    let _: () = run(&mut c, &["SET", "bar", "here"]).unwrap();
    let got: String = run(&mut c, &["EVAL", "return redis.call('get', 'bar')", "0"]).unwrap();
    assert_eq!(got, "here");
}

#[test]
fn unserved_slots_bring_the_cluster_down() {
    let n = fresh_node();
    let mut c = n.client();
    let _: () = run(&mut c, &["CLUSTER", "ADDSLOTSRANGE", "0", "5460"]).unwrap();
    // `foo` is slot 12182, nobody's; `bar` is slot 5061, ours.
    assert_eq!(
        err(&mut c, &["GET", "foo"]),
        "CLUSTERDOWN Hash slot not served"
    );
    assert_eq!(
        err(&mut c, &["GET", "bar"]),
        "CLUSTERDOWN The cluster is down"
    );
    // Keyless commands still run.
    assert_eq!(run::<String>(&mut c, &["PING"]).unwrap(), "PONG");
    let info: String = run(&mut c, &["CLUSTER", "INFO"]).unwrap();
    assert!(
        info.contains("cluster_state:fail\r\ncluster_slots_assigned:5461\r\n"),
        "{info}"
    );
    // Without full coverage required (CONFIG SET, as in Redis) the slots
    // served are served; the others still have no owner.
    let _: () = run(
        &mut c,
        &["CONFIG", "SET", "cluster-require-full-coverage", "no"],
    )
    .unwrap();
    assert_eq!(
        run::<Option<String>>(&mut c, &["GET", "bar"]).unwrap(),
        None
    );
    assert_eq!(
        err(&mut c, &["GET", "foo"]),
        "CLUSTERDOWN Hash slot not served"
    );
    let _: () = run(
        &mut c,
        &["CONFIG", "SET", "cluster-require-full-coverage", "yes"],
    )
    .unwrap();
    assert_eq!(
        err(&mut c, &["GET", "bar"]),
        "CLUSTERDOWN The cluster is down"
    );
}

/// `cluster-announce-port` and `-bus-port` (else `cluster-port`) are what
/// the node says it is at, as redis-server 7.0.15's `CLUSTER NODES` and
/// `CLUSTER SLOTS` show them.
#[test]
fn a_node_announces_its_configured_ports() {
    let dir = conf_dir();
    let file = dir.join("nodes.conf");
    let n = TestServer::start_with(&[
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        file.to_str().expect("utf-8 path"),
        "--cluster-announce-port",
        "7777",
        "--cluster-announce-bus-port",
        "17777",
    ]);
    let mut c = n.client();
    let nodes: String = run(&mut c, &["CLUSTER", "NODES"]).unwrap();
    assert!(nodes.contains(":7777@17777 myself,master "), "{nodes}");
    let _: () = run(&mut c, &["CLUSTER", "ADDSLOTS", "1"]).unwrap();
    let slots: redis::Value = run(&mut c, &["CLUSTER", "SLOTS"]).unwrap();
    assert!(format!("{slots:?}").contains("int(7777)"), "{slots:?}");
    drop(c);
    drop(n);
    let dir = conf_dir();
    let file = dir.join("nodes.conf");
    let n = TestServer::start_with(&[
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        file.to_str().expect("utf-8 path"),
        "--cluster-port",
        "17001",
    ]);
    let nodes: String = run(&mut n.client(), &["CLUSTER", "NODES"]).unwrap();
    assert!(nodes.contains("@17001 myself,master "), "{nodes}");
}

/// `cluster-announce-hostname` and `cluster-preferred-endpoint-type`:
/// `CLUSTER NODES`/`SLOTS` and redirections in the shapes redis-server
/// 7.0.15 gives them (its `CLUSTER SLOTS` bytes were compared for each
/// endpoint type; they differ only in Redis's empty `ip` for a node that
/// has not yet learnt its own address).
#[test]
fn hostnames_are_announced_and_preferred_when_asked() {
    let (dir_a, dir_b) = (conf_dir(), conf_dir());
    let node = |dir: &std::path::Path, hostname: &str| {
        let file = dir.join("nodes.conf");
        TestServer::start_with(&[
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            file.to_str().expect("utf-8 path"),
            "--cluster-announce-hostname",
            hostname,
            "--cluster-require-full-coverage",
            "no",
        ])
    };
    let (a, b) = (
        node(&dir_a, "node-a.example"),
        node(&dir_b, "node-b.example"),
    );
    let mut ca = a.client();
    let nodes: String = run(&mut ca, &["CLUSTER", "NODES"]).unwrap();
    assert!(nodes.contains(",node-a.example myself,master "), "{nodes}");
    // `foo` is slot 12182, b's; a learns it, and b's hostname, at MEET.
    let _: () = run(&mut b.client(), &["CLUSTER", "ADDSLOTS", "12182"]).unwrap();
    let port = b.addr.port().to_string();
    let _: () = run(&mut ca, &["CLUSTER", "MEET", "127.0.0.1", &port]).unwrap();
    assert_eq!(
        err(&mut ca, &["GET", "foo"]),
        format!("MOVED 12182 127.0.0.1:{port}")
    );
    let slots: redis::Value = run(&mut ca, &["CLUSTER", "SLOTS"]).unwrap();
    let text = format!("{slots:?}");
    assert!(
        text.contains("\"hostname\"") && text.contains("node-b.example"),
        "{text}"
    );
    let _: () = run(
        &mut ca,
        &[
            "CONFIG",
            "SET",
            "cluster-preferred-endpoint-type",
            "hostname",
        ],
    )
    .unwrap();
    assert_eq!(
        err(&mut ca, &["GET", "foo"]),
        format!("MOVED 12182 node-b.example:{port}")
    );
    let _: () = run(
        &mut ca,
        &[
            "CONFIG",
            "SET",
            "cluster-preferred-endpoint-type",
            "unknown-endpoint",
        ],
    )
    .unwrap();
    assert_eq!(
        err(&mut ca, &["GET", "foo"]),
        format!("MOVED 12182 :{port}")
    );
    // A new hostname applies at once and is saved.
    let _: () = run(
        &mut ca,
        &[
            "CONFIG",
            "SET",
            "cluster-announce-hostname",
            "renamed.example",
        ],
    )
    .unwrap();
    let nodes: String = run(&mut ca, &["CLUSTER", "NODES"]).unwrap();
    assert!(nodes.contains(",renamed.example myself,master "), "{nodes}");
    let saved = std::fs::read_to_string(dir_a.join("nodes.conf")).expect("saved");
    assert!(saved.contains(",renamed.example myself"), "{saved}");
}

/// Replies checked against redis-server 7.0.15 in cluster mode with the
/// same slots assigned.
#[test]
fn a_down_cluster_serves_what_its_settings_allow() {
    let n = fresh_node();
    let mut c = n.client();
    let _: () = run(&mut c, &["CLUSTER", "ADDSLOTSRANGE", "0", "5460"]).unwrap();
    // Sharded Pub/Sub goes on by default; `bar` is slot 5061, ours.
    assert_eq!(run::<i64>(&mut c, &["SPUBLISH", "bar", "m"]).unwrap(), 0);
    let _: () = run(
        &mut c,
        &["CONFIG", "SET", "cluster-allow-reads-when-down", "yes"],
    )
    .unwrap();
    assert_eq!(
        run::<Option<String>>(&mut c, &["GET", "bar"]).unwrap(),
        None
    );
    assert_eq!(
        err(&mut c, &["SET", "bar", "x"]),
        "CLUSTERDOWN The cluster is down and only accepts read commands"
    );
    let script = err(&mut c, &["EVAL", "return redis.call('set','bar','x')", "0"]);
    assert!(
        script.starts_with(
            "ERR Script attempted to execute a write command while the cluster is down and readonly"
        ),
        "{script}"
    );
    assert_eq!(
        err(&mut c, &["GET", "foo"]),
        "CLUSTERDOWN Hash slot not served"
    );
    let _: () = run(
        &mut c,
        &["CONFIG", "SET", "cluster-allow-pubsubshard-when-down", "no"],
    )
    .unwrap();
    assert_eq!(
        err(&mut c, &["SPUBLISH", "bar", "m"]),
        "CLUSTERDOWN The cluster is down"
    );
}

#[test]
fn slot_commands_refuse_as_redis_does() {
    let n = fresh_node();
    let mut c = n.client();
    let _: () = run(&mut c, &["CLUSTER", "ADDSLOTS", "1", "2"]).unwrap();
    assert_eq!(
        err(&mut c, &["CLUSTER", "ADDSLOTS", "1"]),
        "ERR Slot 1 is already busy"
    );
    assert_eq!(
        err(&mut c, &["CLUSTER", "ADDSLOTS", "16384"]),
        "ERR Invalid or out of range slot"
    );
    assert_eq!(
        err(&mut c, &["CLUSTER", "ADDSLOTS", "7", "7"]),
        "ERR Slot 7 specified multiple times"
    );
    assert_eq!(
        err(&mut c, &["CLUSTER", "ADDSLOTSRANGE", "5", "1"]),
        "ERR start slot number 5 is greater than end slot number 1"
    );
    assert_eq!(
        err(&mut c, &["CLUSTER", "DELSLOTS", "9"]),
        "ERR Slot 9 is already unassigned"
    );
    assert_eq!(
        err(&mut c, &["CLUSTER", "SETSLOT", "1", "NODE", "abcd"]),
        "ERR Unknown node abcd"
    );
    assert_eq!(
        err(&mut c, &["CLUSTER", "SETSLOT", "1", "MIGRATING", "abcd"]),
        "ERR I don't know about node abcd"
    );
    assert_eq!(
        err(&mut c, &["CLUSTER", "SETSLOT", "1", "FOO"]),
        "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP"
    );
    assert_eq!(
        err(&mut c, &["CLUSTER", "COUNTKEYSINSLOT", "16384"]),
        "ERR Invalid slot"
    );
    assert_eq!(
        err(&mut c, &["CLUSTER", "GETKEYSINSLOT", "1", "-1"]),
        "ERR Invalid slot or number of keys"
    );
    assert_eq!(
        err(&mut c, &["CLUSTER", "FOO"]),
        "ERR unknown subcommand 'FOO'. Try CLUSTER HELP."
    );
    assert_eq!(
        err(&mut c, &["CLUSTER", "SET-CONFIG-EPOCH", "x"]),
        "ERR value is not an integer or out of range"
    );
    assert_eq!(
        err(&mut c, &["CLUSTER", "SET-CONFIG-EPOCH", "-1"]),
        "ERR Invalid config epoch specified: -1"
    );
    let _: () = run(&mut c, &["CLUSTER", "SET-CONFIG-EPOCH", "3"]).unwrap();
    assert_eq!(
        err(&mut c, &["CLUSTER", "SET-CONFIG-EPOCH", "4"]),
        "ERR Node config epoch is already non-zero"
    );
    assert_eq!(
        run::<String>(&mut c, &["CLUSTER", "BUMPEPOCH"]).unwrap(),
        "STILL 3"
    );
    // A failed ADDSLOTS assigns none of its slots.
    assert_eq!(
        err(&mut c, &["CLUSTER", "ADDSLOTS", "3", "1"]),
        "ERR Slot 1 is already busy"
    );
    let info: String = run(&mut c, &["CLUSTER", "INFO"]).unwrap();
    assert!(info.contains("cluster_slots_assigned:2\r\n"), "{info}");
}

#[test]
fn the_map_and_the_node_id_survive_a_restart() {
    let dir = conf_dir();
    let (id, nodes) = {
        let n = node_in(&dir);
        let mut c = n.client();
        let _: () = run(
            &mut c,
            &["CLUSTER", "ADDSLOTSRANGE", "0", "99", "200", "300"],
        )
        .unwrap();
        let nodes: String = run(&mut c, &["CLUSTER", "NODES"]).unwrap();
        (myid(&n), nodes)
    };
    assert_eq!(id.len(), 40);
    assert!(
        nodes.contains(" myself,master - 0 0 0 connected 0-99 200-300\n"),
        "{nodes}"
    );
    let n = node_in(&dir);
    assert_eq!(myid(&n), id);
    let again: String = run(&mut n.client(), &["CLUSTER", "NODES"]).unwrap();
    // Only the port (picked by the OS) may differ.
    let strip = |s: &str| s.split_whitespace().skip(2).collect::<Vec<_>>().join(" ");
    assert_eq!(strip(&again), strip(&nodes));
    let file = std::fs::read_to_string(dir.join("nodes.conf")).expect("nodes.conf");
    assert!(file.starts_with(&id), "{file}");
    assert!(
        file.ends_with("vars currentEpoch 0 lastVoteEpoch 0\n"),
        "{file}"
    );
}

#[test]
fn keys_of_a_slot_are_counted_and_listed() {
    let n = fresh_node();
    let mut c = n.client();
    let _: () = run(&mut c, &["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]).unwrap();
    for i in 0..50 {
        let _: () = run(&mut c, &["SET", &format!("{{t}}{i}"), "v"]).unwrap();
        let _: () = run(&mut c, &["SET", &format!("other{i}"), "v"]).unwrap();
    }
    let slot = keyslot(&mut c, "t").to_string();
    let count: i64 = run(&mut c, &["CLUSTER", "COUNTKEYSINSLOT", &slot]).unwrap();
    assert_eq!(count, 50);
    let some: Vec<String> = run(&mut c, &["CLUSTER", "GETKEYSINSLOT", &slot, "10"]).unwrap();
    assert_eq!(some.len(), 10);
    assert!(some.iter().all(|k| k.starts_with("{t}")), "{some:?}");
}

/// A client of three nodes that follows `-MOVED` and `-ASK` as a cluster
/// client does, starting from `guess` for every key.
struct Follower {
    conns: HashMap<u16, redis::Connection>,
    guess: u16,
    redirects: usize,
}

impl Follower {
    fn new(nodes: &[Node], guess: usize) -> Follower {
        let conns = nodes.iter().map(|n| (n.addr.port(), n.client())).collect();
        Follower {
            conns,
            guess: nodes[guess].addr.port(),
            redirects: 0,
        }
    }

    fn query<T: redis::FromRedisValue>(&mut self, args: &[&str]) -> T {
        let mut port = self.guess;
        let mut asking = false;
        for _ in 0..5 {
            let c = self.conns.get_mut(&port).expect("known node");
            if asking {
                let _: () = run(c, &["ASKING"]).unwrap();
            }
            match run::<T>(c, args) {
                Ok(v) => return v,
                Err(e) => {
                    let code = e.code().unwrap_or("").to_owned();
                    let detail = e.detail().unwrap_or("").to_owned();
                    let addr = detail.split(' ').nth(1).unwrap_or("");
                    port = addr
                        .rsplit(':')
                        .next()
                        .and_then(|p| p.parse().ok())
                        .unwrap_or(0);
                    assert!(
                        matches!(code.as_str(), "MOVED" | "ASK"),
                        "{args:?}: {code} {detail}"
                    );
                    asking = code == "ASK";
                    if !asking {
                        self.guess = port;
                    }
                    self.redirects += 1;
                }
            }
        }
        panic!("{args:?} redirected too often");
    }
}

/// Moves `slot` from `from` to `to` as `redis-cli --cluster reshard` does:
/// IMPORTING on the target, MIGRATING on the source, the keys in batches
/// with `MIGRATE ... KEYS`, then `SETSLOT NODE` on every node.
fn move_slot(nodes: &[Node], slot: u16, from: usize, to: usize) {
    let (mut src, mut dst) = (nodes[from].client(), nodes[to].client());
    let slot = slot.to_string();
    let (from_id, to_id) = (myid(&nodes[from]), myid(&nodes[to]));
    let _: () = run(
        &mut dst,
        &["CLUSTER", "SETSLOT", &slot, "IMPORTING", &from_id],
    )
    .unwrap();
    let _: () = run(
        &mut src,
        &["CLUSTER", "SETSLOT", &slot, "MIGRATING", &to_id],
    )
    .unwrap();
    let port = nodes[to].addr.port().to_string();
    loop {
        let keys: Vec<String> = run(&mut src, &["CLUSTER", "GETKEYSINSLOT", &slot, "7"]).unwrap();
        if keys.is_empty() {
            break;
        }
        let mut args = vec!["MIGRATE", "127.0.0.1", &port, "", "0", "5000", "KEYS"];
        args.extend(keys.iter().map(String::as_str));
        let _: () = run(&mut src, &args).unwrap();
    }
    for n in [to, from]
        .into_iter()
        .chain((0..nodes.len()).filter(|n| ![from, to].contains(n)))
    {
        let mut c = nodes[n].client();
        let _: () = run(&mut c, &["CLUSTER", "SETSLOT", &slot, "NODE", &to_id]).unwrap();
    }
}

#[test]
fn during_a_move_absent_keys_are_asked_for_and_the_target_wants_asking() {
    let nodes = three_nodes();
    // Slot of "t" (15891) is node 2's; move it to node 0.
    let mut src = nodes[2].client();
    let slot = keyslot(&mut src, "t");
    assert_eq!(owner_of(slot), 2);
    let slot_s = slot.to_string();
    let _: () = run(&mut src, &["SET", "{t}here", "1"]).unwrap();
    let mut dst = nodes[0].client();
    let _: () = run(
        &mut dst,
        &["CLUSTER", "SETSLOT", &slot_s, "IMPORTING", &myid(&nodes[2])],
    )
    .unwrap();
    let _: () = run(
        &mut src,
        &["CLUSTER", "SETSLOT", &slot_s, "MIGRATING", &myid(&nodes[0])],
    )
    .unwrap();
    let nodes_line: String = run(&mut src, &["CLUSTER", "NODES"]).unwrap();
    assert!(
        nodes_line.contains(&format!("[{slot}->-{}]", myid(&nodes[0]))),
        "{nodes_line}"
    );
    // Still here: served. Not here: ask the importer.
    assert_eq!(run::<String>(&mut src, &["GET", "{t}here"]).unwrap(), "1");
    let dst_addr = format!("127.0.0.1:{}", nodes[0].addr.port());
    assert_eq!(
        err(&mut src, &["GET", "{t}gone"]),
        format!("ASK {slot} {dst_addr}")
    );
    // The importer redirects back unless asked.
    let src_addr = format!("127.0.0.1:{}", nodes[2].addr.port());
    assert_eq!(
        err(&mut dst, &["SET", "{t}gone", "2"]),
        format!("MOVED {slot} {src_addr}")
    );
    let _: () = run(&mut dst, &["ASKING"]).unwrap();
    assert_eq!(
        run::<String>(&mut dst, &["SET", "{t}gone", "2"]).unwrap(),
        "OK"
    );
    // ASKING holds for one command only.
    assert!(err(&mut dst, &["GET", "{t}gone"]).starts_with("MOVED "));
    // A multi-key command with part of its keys here must wait.
    let _: () = run(&mut dst, &["ASKING"]).unwrap();
    assert_eq!(
        err(&mut dst, &["MGET", "{t}gone", "{t}here"]),
        "TRYAGAIN Multiple keys request during rehashing of slot"
    );
    // The owner may not give the slot away while it holds keys of it.
    assert_eq!(
        err(&mut src, &["CLUSTER", "SETSLOT", &slot_s, "NODE", &myid(&nodes[0])]),
        format!("ERR Can't assign hashslot {slot} to a different node while I still hold keys for this hash slot.")
    );
}

#[test]
fn a_slot_moves_under_load_without_losing_a_key() {
    let nodes = Arc::new(three_nodes());
    let mut c = nodes[0].client();
    let slot = keyslot(&mut c, "load");
    let from = owner_of(slot);
    let to = (from + 1) % 3;
    // Keys written before the move, in the moving slot and elsewhere.
    let mut setup = Follower::new(&nodes, 0);
    for i in 0..200 {
        let _: () = setup.query(&["SET", &format!("{{load}}{i}"), "old"]);
        let _: () = setup.query(&["SET", &format!("k{i}"), "old"]);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let progress = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (nodes, stop, progress) = (nodes.clone(), stop.clone(), progress.clone());
        std::thread::spawn(move || {
            let mut f = Follower::new(&nodes, from);
            let mut written = 0;
            while !stop.load(Ordering::Relaxed) || written < 100 {
                let key = format!("{{load}}new{written}");
                let _: () = f.query(&["SET", &key, &written.to_string()]);
                let got: String = f.query(&["GET", &format!("{{load}}{}", written % 200)]);
                assert_eq!(got, "old");
                written += 1;
                progress.store(written, Ordering::Relaxed);
                if written >= 20_000 {
                    break;
                }
            }
            (written, f.redirects)
        })
    };
    // The move starts once the writer is under way.
    while progress.load(Ordering::Relaxed) < 50 && !writer.is_finished() {
        std::thread::yield_now();
    }
    move_slot(&nodes, slot, from, to);
    stop.store(true, Ordering::Relaxed);
    let (written, redirects) = writer.join().expect("writer");
    assert!(redirects > 0, "the writer never followed a redirection");
    let mut check = Follower::new(&nodes, from);
    for i in 0..200 {
        assert_eq!(
            check.query::<String>(&["GET", &format!("{{load}}{i}")]),
            "old"
        );
        assert_eq!(check.query::<String>(&["GET", &format!("k{i}")]), "old");
    }
    for i in 0..written {
        let got: String = check.query(&["GET", &format!("{{load}}new{i}")]);
        assert_eq!(got, i.to_string());
    }
    // Every node sends the slot's keys to the new owner, which has them all.
    let to_addr = format!("127.0.0.1:{}", nodes[to].addr.port());
    for n in nodes.iter().filter(|n| n.addr != nodes[to].addr) {
        assert_eq!(
            err(&mut n.client(), &["GET", "{load}0"]),
            format!("MOVED {slot} {to_addr}")
        );
    }
    let slot_s = slot.to_string();
    let count: i64 = run(
        &mut nodes[to].client(),
        &["CLUSTER", "COUNTKEYSINSLOT", &slot_s],
    )
    .unwrap();
    assert_eq!(count, 200 + written as i64);
    let left: i64 = run(
        &mut nodes[from].client(),
        &["CLUSTER", "COUNTKEYSINSLOT", &slot_s],
    )
    .unwrap();
    assert_eq!(left, 0);
}

/// A key the source still has is served there, and one it sent away is
/// asked for at the target: a read never finds it in neither place. On a
/// server of many threads that means `MIGRATE` may not delete a key between
/// a command's routing and its run, which Redis's one thread never does.
#[test]
fn reads_during_a_move_always_find_the_key() {
    let nodes = Arc::new(three_nodes());
    let mut c = nodes[0].client();
    let slot = keyslot(&mut c, "read");
    let (from, keys) = (owner_of(slot), 400);
    let mut setup = Follower::new(&nodes, from);
    for i in 0..keys {
        let _: () = setup.query(&["SET", &format!("{{read}}{i}"), &i.to_string()]);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let (nodes, stop) = (nodes.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut f = Follower::new(&nodes, from);
                let mut i = r;
                while !stop.load(Ordering::Relaxed) {
                    let key = format!("{{read}}{}", i % keys);
                    let got: Option<String> = f.query(&["GET", &key]);
                    assert_eq!(got, Some((i % keys).to_string()), "{key}");
                    i += 2;
                }
            })
        })
        .collect();
    move_slot(&nodes, slot, from, (from + 1) % 3);
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.join().expect("reader");
    }
}

/// A client blocked on a slot that moves away is sent to the new owner,
/// and one blocked on a slot that loses its owner learns that the cluster
/// is down, as Redis's cron tells them; neither waits out its timeout.
#[test]
fn blocked_clients_follow_their_slot() {
    let nodes = three_nodes();
    let slot = keyslot(&mut nodes[0].client(), "queue");
    let (from, to) = (owner_of(slot), (owner_of(slot) + 1) % 3);
    let mut moved = nodes[from].raw();
    moved.send(&resp(&[b"BLPOP", b"{queue}a", b"0"]));
    wait_blocked(&mut nodes[from].client(), 1);
    move_slot(&nodes, slot, from, to);
    let to_addr = format!("127.0.0.1:{}", nodes[to].addr.port());
    let reply = format!("-MOVED {slot} {to_addr}\r\n");
    let got = moved.read_exact_len(reply.len());
    assert_eq!(String::from_utf8_lossy(&got), reply);
    wait_blocked(&mut nodes[from].client(), 0);

    let mut down = nodes[to].raw();
    down.send(&resp(&[b"BRPOP", b"{queue}b", b"0"]));
    wait_blocked(&mut nodes[to].client(), 1);
    let slot_s = slot.to_string();
    let _: () = run(&mut nodes[to].client(), &["CLUSTER", "DELSLOTS", &slot_s]).unwrap();
    let reply = b"-CLUSTERDOWN The cluster is down\r\n";
    let got = down.read_exact_len(reply.len());
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(reply)
    );
}

#[test]
fn a_standalone_server_says_cluster_support_is_disabled() {
    let s = TestServer::start();
    let mut c = s.client();
    let disabled = "ERR This instance has cluster support disabled";
    for args in [
        &["CLUSTER", "HELP"][..],
        &["CLUSTER", "INFO"],
        &["CLUSTER", "KEYSLOT", "foo"],
        &["ASKING"],
        &["READONLY"],
        &["READWRITE"],
    ] {
        assert_eq!(err(&mut c, args), disabled, "{args:?}");
    }
    assert_eq!(info_fields(&mut c, "cluster")["cluster_enabled"], "0");
    // Keys go unrouted and every database is there.
    let _: () = run(&mut c, &["MSET", "a", "1", "b", "2"]).unwrap();
    assert_eq!(run::<String>(&mut c, &["SELECT", "1"]).unwrap(), "OK");
}

#[test]
fn scripts_with_flags_keep_to_one_slot_unless_allowed() {
    let n = fresh_node();
    let mut c = n.client();
    let _: () = run(&mut c, &["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]).unwrap();
    let two_slots = "redis.call('set', 'foo', 'x'); redis.call('set', 'bar', 'y'); return 1";
    let cross = "ERR Script attempted to access keys that do not hash to the same slot";
    // A script with a shebang keeps to one slot, declared keys' included.
    let flagged = format!("#!lua\n{two_slots}");
    assert!(err(&mut c, &["EVAL", &flagged, "0"]).starts_with(cross));
    let one = "#!lua\nredis.call('set', 'foo', 'x'); return 1";
    assert!(err(&mut c, &["EVAL", one, "1", "bar"]).starts_with(cross));
    // An old-style script may cross slots, as may one flagged to.
    assert_eq!(run::<i64>(&mut c, &["EVAL", two_slots, "0"]).unwrap(), 1);
    let allowed = format!("#!lua flags=allow-cross-slot-keys\n{two_slots}");
    assert_eq!(run::<i64>(&mut c, &["EVAL", &allowed, "0"]).unwrap(), 1);
}
