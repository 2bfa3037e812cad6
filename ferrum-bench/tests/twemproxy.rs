//! Three FerrumKV nodes behind twemproxy (Debian's `nutcracker`): they
//! serve redis-benchmark and the read-through replay through the proxy,
//! the keys spread over all three, and with `auto_eject_hosts` a node
//! stopped mid-run leaves the other two serving, their keys intact; and a
//! third of the memory on each of the three keeps one node's hit ratio.
//!
//! Skipped, with a message, where `nutcracker` (or, for its part,
//! `redis-benchmark`) is not installed. Waits are bounded in attempts and
//! fail with what they waited for; nothing asserts on time.

mod support;

use std::collections::HashSet;
use std::net::SocketAddr;
use std::process::Command;
use std::thread;
use std::time::Duration;

use ferrum_bench::client::{Client, ClientError};
use ferrum_bench::sharded::{ProxyRoute, ShardedDriver};
use ferrum_bench::twemproxy::{self, Nutcracker, PoolConfig};
use ferrum_bench::workload::{key_name, Pattern, Workload};
use ferrum_evict::PolicyKind;
use ferrum_proto::Frame;
use support::TestServer;

/// Requests of each half of the replay.
const HALF: u64 = 10_000;

#[test]
fn three_nodes_behind_twemproxy_spread_keys_and_survive_an_ejection() {
    if !twemproxy::available() {
        eprintln!("skipped: nutcracker is not installed (apt-get install nutcracker)");
        return;
    }
    let mut nodes: Vec<Option<TestServer>> = (0..3).map(|_| Some(TestServer::start())).collect();
    let addrs: Vec<SocketAddr> = nodes.iter().flatten().map(|n| n.addr).collect();
    let pool = PoolConfig {
        // Eject at the first failure and never retry within the test, so
        // the ring has two nodes from the first failed request on.
        server_failure_limit: 1,
        server_retry_timeout_ms: 600_000,
        timeout_ms: 2_000,
        ..PoolConfig::new(addrs.clone())
    };
    let proxy = Nutcracker::start(&pool).expect("nutcracker starts");

    redis_benchmark_through(proxy.addr());

    // The first half of the read-through replay, with no memory limit: every
    // miss stores its key, so the nodes' keys are exactly the misses.
    let requests = || Workload::new(Pattern::Zipf, 42, 2 * HALF);
    let route = ProxyRoute::connect(proxy.addr()).expect("connect to the proxy");
    let mut driver = ShardedDriver::new(route, &addrs).expect("connect to the nodes");
    let report = driver
        .run(
            PolicyKind::AllKeysLru,
            "zipf",
            requests().take(HALF as usize),
            0,
        )
        .expect("replay through the proxy");
    let misses: u64 = report.nodes.iter().map(|n| n.misses).sum();
    let hits: u64 = report.nodes.iter().map(|n| n.hits).sum();
    assert_eq!(report.requests, HALF);
    assert_eq!(hits + misses, HALF, "{report:?}");
    assert_eq!(hits, report.driver_hits, "{report:?}");
    assert_eq!(report.keys, misses, "every miss stored its key: {report:?}");
    for node in &report.nodes {
        assert!(
            node.keys > 0 && node.keys < report.keys,
            "keys not spread over the nodes: {report:?}"
        );
    }

    // Which node holds which key, read from the nodes themselves.
    let ids: HashSet<u64> = requests().take(HALF as usize).map(|r| r.key_id).collect();
    let held = keys_on_nodes(&addrs, &ids);

    // Stop the first node mid-run: after the proxy ejects it, every request
    // is served again, by the other two.
    drop(nodes[0].take());
    wait_for_ejection(proxy.addr(), &held[0]);
    let route = ProxyRoute::connect(proxy.addr()).expect("connect to the proxy");
    let mut rest = ShardedDriver::new(route, &addrs[1..]).expect("connect to the nodes left");
    let (_, rejected) = rest
        .replay(requests().skip(HALF as usize))
        .expect("the second half is served by the nodes left");
    assert_eq!(rejected, 0);

    // The keys the other two nodes held before the stop are still there and
    // still reached through the proxy (ketama moved only the stopped node's
    // keys).
    let mut client = Client::connect(proxy.addr()).expect("connect to the proxy");
    for key in held[1].iter().chain(&held[2]) {
        let reply = client.call(&["GET", key.as_str()]).expect("GET");
        assert!(
            matches!(reply, Frame::Bulk(_)),
            "{key} lost after the ejection: {reply:?}"
        );
    }
}

/// Runs a bounded `redis-benchmark` through the proxy and checks it
/// finishes and reports its tests (skipped where it is not installed).
fn redis_benchmark_through(proxy: SocketAddr) {
    let port = proxy.port().to_string();
    let args = [
        "-h",
        "127.0.0.1",
        "-p",
        &port,
        "-n",
        "2000",
        "-c",
        "4",
        "-r",
        "1000",
        "-t",
        "set,get,incr,lpush,mset",
        "-q",
    ];
    let out = match Command::new("redis-benchmark").args(args).output() {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipped redis-benchmark: cannot run it ({e}); apt-get install redis-tools");
            return;
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "redis-benchmark through nutcracker failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for test in ["SET:", "GET:", "INCR:", "LPUSH:", "MSET (10 keys):"] {
        assert!(
            stdout.lines().any(|l| l.trim_start().starts_with(test)),
            "redis-benchmark printed no {test} line: {stdout}"
        );
    }
}

/// The names of `ids` each node holds, read over direct connections.
fn keys_on_nodes(addrs: &[SocketAddr], ids: &HashSet<u64>) -> Vec<Vec<String>> {
    addrs
        .iter()
        .map(|&addr| {
            let mut client = Client::connect(addr).expect("connect to a node");
            ids.iter()
                .map(|&id| key_name(id))
                .filter(|key| client.call_int(&["EXISTS", key.as_str()]).expect("EXISTS") == 1)
                .collect()
        })
        .collect()
}

/// Sends `GET` through the proxy for keys that hashed to the stopped node
/// until one is answered (a value or a null, not an error): the proxy has
/// ejected the node. At most 50 attempts, 100 ms apart.
fn wait_for_ejection(proxy: SocketAddr, stopped_keys: &[String]) {
    let key = stopped_keys.first().expect("the stopped node held keys");
    let mut last = String::new();
    for _ in 0..50 {
        // A failed request may close the client's connection: a fresh one
        // each attempt.
        match Client::connect(proxy).and_then(|mut c| c.call(&["GET", key.as_str()])) {
            Ok(Frame::Bulk(_) | Frame::Null) => return,
            Ok(reply) => last = format!("{reply:?}"),
            Err(e) => last = e.to_string(),
        }
        thread::sleep(Duration::from_millis(100));
    }
    panic!("the proxy never served {key} after its node stopped; last answer: {last}");
}

#[test]
fn a_third_of_the_memory_on_each_of_three_nodes_keeps_the_hit_ratio() {
    if !twemproxy::available() {
        eprintln!("skipped: nutcracker is not installed (apt-get install nutcracker)");
        return;
    }
    let single = TestServer::start();
    let nodes: Vec<TestServer> = (0..3).map(|_| TestServer::start()).collect();
    let addrs: Vec<SocketAddr> = nodes.iter().map(|n| n.addr).collect();
    let proxy = Nutcracker::start(&PoolConfig::new(addrs.clone())).expect("nutcracker starts");
    let route = ProxyRoute::connect(proxy.addr()).expect("connect to the proxy");
    // ketama spreads zipf's hot keys over the ring.
    let cell = support::compare_a_third_each(single.addr, route, &addrs);
    assert_eq!(cell.sharded.route, "proxy");
}

/// Commands twemproxy forwards, one per line; see the file's header.
const FORWARDED: &str = include_str!("twemproxy-commands.txt");

#[test]
fn every_command_twemproxy_forwards_gets_the_same_reply_through_it() {
    if !twemproxy::available() {
        eprintln!("skipped: nutcracker is not installed (apt-get install nutcracker)");
        return;
    }
    let (behind, direct) = (TestServer::start(), TestServer::start());
    let proxy = Nutcracker::start(&PoolConfig::new(vec![behind.addr])).expect("nutcracker starts");
    let mut through = Client::connect(proxy.addr()).expect("connect to the proxy");
    let mut plain = Client::connect(direct.addr).expect("connect to the node");
    let mut sent = 0;
    for line in FORWARDED
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let words = split_words(line);
        let proxied = send(&mut through, &words)
            .unwrap_or_else(|e| panic!("{line}: through nutcracker: {e}"));
        let expected = send(&mut plain, &words).unwrap_or_else(|e| panic!("{line}: {e}"));
        assert_eq!(proxied, expected, "{line}");
        sent += 1;
    }
    assert!(sent > 100, "only {sent} commands in the list");
}

/// Sends one command and reads its reply, error replies included.
fn send(client: &mut Client, words: &[String]) -> Result<Frame, ClientError> {
    client.queue(words);
    client.flush()?;
    client.read()
}

/// Splits on spaces, keeping a `"double-quoted"` word whole.
fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut rest = line.trim();
    while !rest.is_empty() {
        let (word, tail) = match rest.strip_prefix('"') {
            Some(quoted) => quoted.split_once('"').unwrap_or((quoted, "")),
            None => rest.split_once(' ').unwrap_or((rest, "")),
        };
        words.push(word.to_owned());
        rest = tail.trim_start();
    }
    words
}
