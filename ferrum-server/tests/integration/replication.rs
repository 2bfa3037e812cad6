//! Replication, the primary's side: `SYNC` sends a snapshot, then each
//! change as the command that replays it; a second server loaded from
//! that snapshot and fed that stream holds what the first one holds.

use std::time::Duration;

use crate::common::{info_fields, resp, run, temp_dir, Raw, TestServer};

/// A connection that sent `SYNC` and read its snapshot.
struct Replica {
    raw: Raw,
    snapshot: Vec<u8>,
}

impl Replica {
    fn attach(s: &TestServer) -> Replica {
        let mut raw = s.raw();
        raw.send(b"SYNC\r\n");
        let header = raw.read_line();
        let len: usize = header
            .strip_prefix('$')
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("a snapshot's length, got {header:?}"));
        let snapshot = raw.read_exact_len(len);
        assert_eq!(snapshot.len(), len, "the whole snapshot");
        assert!(snapshot.starts_with(b"REDIS0010"), "an RDB file");
        Replica { raw, snapshot }
    }

    /// The next command of the stream, its arguments as strings.
    fn next(&mut self) -> Vec<String> {
        let header = self.raw.read_line();
        let n: usize = header
            .strip_prefix('*')
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("a command, got {header:?}"));
        (0..n)
            .map(|_| {
                let len: usize = self.raw.read_line()[1..].parse().expect("a bulk length");
                let arg = self.raw.read_exact_len(len + 2);
                String::from_utf8_lossy(&arg[..len]).into_owned()
            })
            .collect()
    }

    /// The next `n` commands, each joined by spaces, deadlines as `T`.
    fn expect(&mut self, want: &[&str]) {
        for w in want {
            let got = self.next();
            let shown: Vec<String> = got
                .iter()
                .map(|a| {
                    if a.len() == 13 && a.bytes().all(|b| b.is_ascii_digit()) {
                        "T".to_owned()
                    } else {
                        a.clone()
                    }
                })
                .collect();
            assert_eq!(shown.join(" "), *w);
        }
    }
}

fn connected_replicas(c: &mut redis::Connection) -> String {
    info_fields(c, "replication")["connected_slaves"].clone()
}

#[test]
fn writes_are_streamed_as_the_commands_that_replay_them() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut replica = Replica::attach(&s);
    let cmds: &[&[&str]] = &[
        &["SET", "k", "v", "EX", "100"],
        &["SET", "plain", "v", "GET"],
        &["SET", "plain", "w", "NX"], // not set: nothing sent
        &["EXPIRE", "plain", "100"],
        &["DEL", "missing"], // changed nothing
        &["GETDEL", "plain"],
        &["INCRBYFLOAT", "f", "1.5"],
        &["RPUSH", "l", "a", "b", "c"],
        &["LMPOP", "1", "l", "RIGHT", "COUNT", "10"],
        &["SELECT", "2"],
        &["SET", "x", "y"],
    ];
    for cmd in cmds {
        let _: redis::Value = run(&mut c, cmd).expect("command");
    }
    let _: () = redis::pipe()
        .atomic()
        .cmd("SET")
        .arg("a")
        .arg("1")
        .cmd("GET")
        .arg("a")
        .cmd("SET")
        .arg("b")
        .arg("2")
        .query(&mut c)
        .expect("transaction");
    replica.expect(&[
        "SELECT 0",
        "SET k v PXAT T",
        "SET plain v",
        "PEXPIREAT plain T",
        "DEL plain",
        "SET f 1.5 KEEPTTL",
        "RPUSH l a b c",
        "RPOP l 3",
        "SELECT 2",
        "SET x y",
        "MULTI",
        "SET a 1",
        "SET b 2",
        "EXEC",
    ]);
    assert_eq!(connected_replicas(&mut c), "1");
    let role: Vec<redis::Value> = run(&mut c, &["ROLE"]).unwrap();
    assert_eq!(role.len(), 3);
    drop(replica);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while connected_replicas(&mut c) != "0" {
        assert!(
            std::time::Instant::now() < deadline,
            "the replica is never detached"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn expired_and_evicted_keys_are_streamed_as_del() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["DEBUG", "SET-ACTIVE-EXPIRE", "0"]).unwrap();
    let _: () = run(&mut c, &["SET", "soon", "v", "PX", "50"]).unwrap();
    let _: () = run(&mut c, &["SET", "a", "1"]).unwrap();
    let mut replica = Replica::attach(&s);
    s.advance(&mut c, 100);
    let got: Option<String> = run(&mut c, &["GET", "soon"]).unwrap();
    assert_eq!(got, None);
    let _: () = run(
        &mut c,
        &["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"],
    )
    .unwrap();
    let _: () = run(&mut c, &["CONFIG", "SET", "maxmemory", "1"]).unwrap();
    // Alone, not in a transaction, as Redis sends them.
    replica.expect(&["SELECT 0", "DEL soon", "DEL a"]);
}

#[test]
fn snapshot_and_stream_together_rebuild_the_dataset_under_concurrent_writes() {
    let s = TestServer::start();
    let mut c = s.client();
    for i in 0..2000 {
        let _: () = run(&mut c, &["SET", &format!("key:{i}"), &i.to_string()]).unwrap();
    }
    // Writers run while the replica attaches and its snapshot is made.
    let addr = s.addr;
    let writers: Vec<_> = (0..2)
        .map(|w| {
            std::thread::spawn(move || {
                let client = redis::Client::open(format!("redis://{addr}")).unwrap();
                let mut c = client.get_connection().unwrap();
                for i in 0..1500 {
                    let _: i64 = run(&mut c, &["INCR", "counter"]).unwrap();
                    let _: i64 =
                        run(&mut c, &["RPUSH", &format!("list:{w}"), &i.to_string()]).unwrap();
                    let _: i64 = run(&mut c, &["DEL", &format!("key:{}", i + w * 500)]).unwrap();
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(5));
    let mut replica = Replica::attach(&s);
    for w in writers {
        w.join().expect("writer");
    }
    let _: () = run(&mut c, &["SET", "end-of-stream", "1"]).unwrap();

    // A second server loads the snapshot and replays the stream.
    let dir = temp_dir("replica");
    std::fs::write(dir.join("dump.rdb"), &replica.snapshot).unwrap();
    let copy = TestServer::start_with(&["--dir", &dir.to_string_lossy()]);
    let mut feed = copy.raw();
    loop {
        let cmd = replica.next();
        let args: Vec<&[u8]> = cmd.iter().map(|a| a.as_bytes()).collect();
        feed.send(&resp(&args));
        feed.read_line();
        if cmd == ["SET", "end-of-stream", "1"] {
            break;
        }
    }
    let mut d = copy.client();
    for key in ["counter", "list:0", "list:1"] {
        let dump =
            |c: &mut redis::Connection| -> Option<Vec<u8>> { run(c, &["DUMP", key]).unwrap() };
        assert_eq!(dump(&mut d), dump(&mut c), "{key}");
    }
    let size = |c: &mut redis::Connection| -> i64 { run(c, &["DBSIZE"]).unwrap() };
    assert_eq!(size(&mut d), size(&mut c));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Waits until `c`'s `INFO replication` has `field:value`.
fn wait_for(c: &mut redis::Connection, field: &str, value: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while info_fields(c, "replication").get(field).map(String::as_str) != Some(value) {
        if std::time::Instant::now() > deadline {
            let role: redis::Value = run(c, &["ROLE"]).unwrap();
            panic!("{field} never became {value}: ROLE {role:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_replica_follows_its_primary_until_told_otherwise() {
    let primary = TestServer::start();
    let replica = TestServer::start();
    let mut p = primary.client();
    let mut r = replica.client();
    let _: () = run(&mut p, &["SET", "before", "1"]).unwrap();
    let _: () = run(&mut r, &["SET", "replaced", "1"]).unwrap();
    let port = primary.addr.port().to_string();
    let _: () = run(&mut r, &["REPLICAOF", "127.0.0.1", &port]).unwrap();
    let again: String = run(&mut r, &["REPLICAOF", "127.0.0.1", &port]).unwrap();
    assert_eq!(again, "OK Already connected to specified master");
    wait_for(&mut r, "master_link_status", "up");
    let _: () = run(&mut p, &["SET", "after", "2", "EX", "100"]).unwrap();
    let _: i64 = run(&mut p, &["RPUSH", "l", "a", "b"]).unwrap();
    let acked: i64 = run(&mut p, &["WAIT", "1", "5000"]).unwrap();
    assert_eq!(acked, 1);
    // The primary's dataset replaced the replica's own.
    let keys: Vec<String> = crate::common::sorted(run(&mut r, &["KEYS", "*"]).unwrap());
    assert_eq!(keys, ["after", "before", "l"]);
    let ttl: i64 = run(&mut r, &["TTL", "after"]).unwrap();
    assert!((90..=100).contains(&ttl), "{ttl}");
    assert_eq!(
        crate::common::err(&mut r, &["SET", "x", "1"]),
        "READONLY You can't write against a read only replica."
    );
    let offset =
        |c: &mut redis::Connection| info_fields(c, "replication")["master_repl_offset"].clone();
    assert_eq!(offset(&mut r), offset(&mut p));
    let role: Vec<redis::Value> = run(&mut r, &["ROLE"]).unwrap();
    assert_eq!(role[0], redis::Value::BulkString(b"slave".to_vec()));
    assert_eq!(info_fields(&mut p, "replication")["connected_slaves"], "1");

    // min-replicas-to-write counts the replicas that acknowledge in time.
    let set = |c: &mut redis::Connection, name: &str, v: &str| {
        let _: () = run(c, &["CONFIG", "SET", name, v]).unwrap();
    };
    set(&mut p, "min-replicas-max-lag", "10");
    set(&mut p, "min-replicas-to-write", "1");
    let _: () = run(&mut p, &["SET", "guarded", "1"]).unwrap();
    set(&mut p, "min-replicas-to-write", "2");
    assert_eq!(
        crate::common::err(&mut p, &["SET", "guarded", "2"]),
        "NOREPLICAS Not enough good replicas to write."
    );
    set(&mut p, "min-replicas-to-write", "0");

    // `replicaof` in the configuration: a replica from the start.
    let configured = TestServer::start_with(&["--replicaof", "127.0.0.1", &port]);
    let mut c = configured.client();
    wait_for(&mut c, "master_link_status", "up");
    let got: Option<String> = run(&mut c, &["GET", "before"]).unwrap();
    assert_eq!(got.as_deref(), Some("1"));

    let _: () = run(&mut r, &["REPLICAOF", "NO", "ONE"]).unwrap();
    let _: () = run(&mut r, &["SET", "x", "1"]).unwrap();
    let kept: Option<String> = run(&mut r, &["GET", "before"]).unwrap();
    assert_eq!(kept.as_deref(), Some("1"));
}

#[test]
fn a_replica_cut_off_from_its_primary_serves_stale_data_only_if_allowed() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "k", "v"]).unwrap();
    // Nothing listens on port 1: the link stays down.
    let _: () = run(&mut c, &["REPLICAOF", "127.0.0.1", "1"]).unwrap();
    let v: Option<String> = run(&mut c, &["GET", "k"]).unwrap();
    assert_eq!(v.as_deref(), Some("v"));
    assert_eq!(
        crate::common::err(&mut c, &["WAIT", "0", "0"])
            .split('.')
            .next()
            .unwrap(),
        "ERR WAIT cannot be used with replica instances"
    );
    let _: () = run(&mut c, &["CONFIG", "SET", "replica-serve-stale-data", "no"]).unwrap();
    let refused =
        "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
    assert_eq!(crate::common::err(&mut c, &["GET", "k"]), refused);
    assert_eq!(
        info_fields(&mut c, "replication")["master_link_status"],
        "down"
    );
    // A function runs on a stale replica only if it allows it, and what
    // it calls must allow it too; one that may write is refused.
    let _: () = run(
        &mut c,
        &["CONFIG", "SET", "replica-serve-stale-data", "yes"],
    )
    .unwrap();
    let code = "#!lua name=lib
        redis.register_function{function_name='stale', callback=function() return 'ok' end, flags={'allow-stale', 'no-writes'}}
        redis.register_function{function_name='get', callback=function() return redis.call('get', 'k') end, flags={'allow-stale', 'no-writes'}}
        redis.register_function{function_name='fresh', callback=function() return 'ok' end, flags={'no-writes'}}
        redis.register_function{function_name='writes', callback=function() return redis.call('set', 'k', 'w') end}";
    let readonly = "READONLY You can't write against a read only replica.";
    assert_eq!(
        crate::common::err(&mut c, &["FUNCTION", "LOAD", code]),
        readonly
    );
    let _: () = run(&mut c, &["REPLICAOF", "NO", "ONE"]).unwrap();
    let _: String = run(&mut c, &["FUNCTION", "LOAD", code]).unwrap();
    let _: () = run(&mut c, &["REPLICAOF", "127.0.0.1", "1"]).unwrap();
    assert_eq!(
        crate::common::err(&mut c, &["FCALL", "writes", "0"]),
        readonly
    );
    let _: () = run(&mut c, &["CONFIG", "SET", "replica-serve-stale-data", "no"]).unwrap();
    let ok: String = run(&mut c, &["FCALL", "stale", "0"]).unwrap();
    assert_eq!(ok, "ok");
    assert_eq!(
        crate::common::err(&mut c, &["FCALL", "fresh", "0"]),
        refused
    );
    assert!(crate::common::err(&mut c, &["FCALL", "get", "0"])
        .starts_with("ERR Can not execute the command on a stale replica"));

    let _: () = run(&mut c, &["REPLICAOF", "NO", "ONE"]).unwrap();
    let v: Option<String> = run(&mut c, &["GET", "k"]).unwrap();
    assert_eq!(v.as_deref(), Some("v"));
}

/// A redis-server's client, with a timeout.
fn redis_client(port: u16) -> redis::Connection {
    let c = redis::Client::open(format!("redis://127.0.0.1:{port}/"))
        .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(10)))
        .expect("connect to redis-server");
    c.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    c
}

/// Redis 7.0.15 follows FerrumKV, and FerrumKV follows Redis: each loads
/// the other's snapshot and applies the other's stream.
#[test]
fn redis_and_ferrumkv_replicate_each_other() {
    // Redis's snapshots (its own as a primary, its primary's as a
    // replica) go to a directory of the test's own.
    let dir = temp_dir("redis-replication");
    let Some(redis) = crate::migrate::RedisServer::start_with(&["--dir", &dir.to_string_lossy()])
    else {
        return;
    };
    let ours = TestServer::start();
    let mut o = ours.client();
    let mut r = redis_client(redis.port);
    let fill = |c: &mut redis::Connection| {
        let _: () = run(c, &["MSET", "a", "1", "b", "2"]).unwrap();
        let _: i64 = run(c, &["HSET", "h", "f", "v"]).unwrap();
        let _: () = run(c, &["SET", "e", "v", "EX", "100"]).unwrap();
    };
    let after = |c: &mut redis::Connection| {
        let _: () = run(c, &["SET", "c", "3"]).unwrap();
        let _: String = run(c, &["INCRBYFLOAT", "f", "1.5"]).unwrap();
        let _: i64 = run(c, &["RPUSH", "l", "x", "y"]).unwrap();
        let _: Option<String> = run(c, &["LPOP", "l"]).unwrap();
    };
    let check = |c: &mut redis::Connection| {
        let v: Vec<Option<String>> = run(c, &["MGET", "a", "b", "c", "f"]).unwrap();
        assert_eq!(
            v,
            [Some("1"), Some("2"), Some("3"), Some("1.5")].map(|s| s.map(String::from))
        );
        let l: Vec<String> = run(c, &["LRANGE", "l", "0", "-1"]).unwrap();
        assert_eq!(l, ["y"]);
        let ttl: i64 = run(c, &["TTL", "e"]).unwrap();
        assert!((90..=100).contains(&ttl), "{ttl}");
    };
    // Redis follows FerrumKV.
    fill(&mut o);
    let port = ours.addr.port().to_string();
    let _: () = run(&mut r, &["REPLICAOF", "127.0.0.1", &port]).unwrap();
    wait_for(&mut r, "master_link_status", "up");
    after(&mut o);
    let acked: i64 = run(&mut o, &["WAIT", "1", "5000"]).unwrap();
    assert_eq!(acked, 1);
    check(&mut r);
    // FerrumKV follows Redis.
    let _: () = run(&mut r, &["REPLICAOF", "NO", "ONE"]).unwrap();
    let _: () = run(&mut o, &["FLUSHALL"]).unwrap();
    let _: () = run(&mut r, &["FLUSHALL"]).unwrap();
    fill(&mut r);
    let _: () = run(&mut o, &["REPLICAOF", "127.0.0.1", &redis.port.to_string()]).unwrap();
    wait_for(&mut o, "master_link_status", "up");
    after(&mut r);
    let acked: i64 = run(&mut r, &["WAIT", "1", "5000"]).unwrap();
    assert_eq!(acked, 1);
    check(&mut o);
    drop(redis);
    let _ = std::fs::remove_dir_all(&dir);
}
