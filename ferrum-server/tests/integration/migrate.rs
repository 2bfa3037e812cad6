//! `MIGRATE` between two FerrumKV servers (and to a real redis-server when
//! one is installed): what moves, what stays, and what the client is told
//! when the target refuses, fails or never answers.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{err, info_fields, resp, run, TestServer};

/// `MIGRATE` to `target`'s database `db` with these extra arguments.
fn migrate(
    c: &mut redis::Connection,
    target: &TestServer,
    key: &str,
    db: &str,
    extra: &[&str],
) -> redis::RedisResult<String> {
    let port = target.addr.port().to_string();
    let mut args = vec!["MIGRATE", "127.0.0.1", &port, key, db, "5000"];
    args.extend_from_slice(extra);
    run(c, &args)
}

fn cached_sockets(c: &mut redis::Connection) -> String {
    info_fields(c, "stats")["migrate_cached_sockets"].clone()
}

#[test]
fn one_key_moves_with_its_ttl_over_a_cached_connection() {
    let (src, dst) = (TestServer::start(), TestServer::start());
    let (mut a, mut b) = (src.client(), dst.client());
    let _: () = run(&mut a, &["SET", "k", "v", "EX", "100"]).unwrap();
    let _: () = run(&mut a, &["RPUSH", "l", "x", "y"]).unwrap();
    assert_eq!(cached_sockets(&mut a), "0");
    assert_eq!(migrate(&mut a, &dst, "k", "9", &[]).unwrap(), "OK");
    assert_eq!(cached_sockets(&mut a), "1");
    assert_eq!(run::<i64>(&mut a, &["EXISTS", "k"]).unwrap(), 0);
    let _: () = run(&mut b, &["SELECT", "9"]).unwrap();
    assert_eq!(run::<String>(&mut b, &["GET", "k"]).unwrap(), "v");
    let ttl: i64 = run(&mut b, &["TTL", "k"]).unwrap();
    assert!((90..=100).contains(&ttl), "ttl {ttl}");
    // The same connection serves the next MIGRATE, to another database.
    assert_eq!(migrate(&mut a, &dst, "l", "0", &[]).unwrap(), "OK");
    assert_eq!(cached_sockets(&mut a), "1");
    let _: () = run(&mut b, &["SELECT", "0"]).unwrap();
    let l: Vec<String> = run(&mut b, &["LRANGE", "l", "0", "-1"]).unwrap();
    assert_eq!(l, ["x", "y"]);
    assert_eq!(run::<i64>(&mut b, &["TTL", "l"]).unwrap(), -1);
}

#[test]
fn one_worker_thread_can_migrate_to_its_own_server() {
    // The handler waits off the worker, so the same worker serves the
    // target side of the exchange: no deadlock, where Redis times out.
    let s = TestServer::start_on(1, &[]);
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "k", "v"]).unwrap();
    assert_eq!(migrate(&mut c, &s, "k", "1", &[]).unwrap(), "OK");
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "k"]).unwrap(), 0);
    let _: () = run(&mut c, &["SELECT", "1"]).unwrap();
    assert_eq!(run::<String>(&mut c, &["GET", "k"]).unwrap(), "v");
}

#[test]
fn keys_form_moves_the_keys_present_and_nokey_when_none_is() {
    let (src, dst) = (TestServer::start(), TestServer::start());
    let (mut a, mut b) = (src.client(), dst.client());
    let none = ["KEYS", "n1", "n2"];
    assert_eq!(migrate(&mut a, &dst, "", "0", &none).unwrap(), "NOKEY");
    assert_eq!(migrate(&mut a, &dst, "n1", "0", &[]).unwrap(), "NOKEY");
    let _: () = run(&mut a, &["MSET", "k1", "1", "k2", "2"]).unwrap();
    let keys = ["KEYS", "n1", "k1", "n2", "k2"];
    assert_eq!(migrate(&mut a, &dst, "", "0", &keys).unwrap(), "OK");
    assert_eq!(run::<i64>(&mut a, &["DBSIZE"]).unwrap(), 0);
    let got: Vec<String> = run(&mut b, &["MGET", "k1", "k2"]).unwrap();
    assert_eq!(got, ["1", "2"]);
}

#[test]
fn copy_keeps_the_source_and_replace_overwrites_the_target() {
    let (src, dst) = (TestServer::start(), TestServer::start());
    let (mut a, mut b) = (src.client(), dst.client());
    let _: () = run(&mut a, &["HSET", "h", "f", "new"]).unwrap();
    let _: () = run(&mut b, &["SET", "h", "old"]).unwrap();
    let e = migrate(&mut a, &dst, "h", "0", &["COPY"]).unwrap_err();
    assert_eq!(e.code(), Some("ERR"));
    assert_eq!(
        e.detail(),
        Some("Target instance replied with error: BUSYKEY Target key name already exists.")
    );
    assert_eq!(run::<String>(&mut b, &["GET", "h"]).unwrap(), "old");
    let ok = migrate(&mut a, &dst, "h", "0", &["COPY", "REPLACE"]).unwrap();
    assert_eq!(ok, "OK");
    assert_eq!(run::<i64>(&mut a, &["EXISTS", "h"]).unwrap(), 1);
    assert_eq!(run::<String>(&mut b, &["HGET", "h", "f"]).unwrap(), "new");
}

#[test]
fn a_busy_key_stays_and_the_acknowledged_ones_are_deleted() {
    let (src, dst) = (TestServer::start(), TestServer::start());
    let (mut a, mut b) = (src.client(), dst.client());
    let _: () = run(&mut a, &["MSET", "a", "1", "b", "2", "c", "3"]).unwrap();
    let _: () = run(&mut b, &["SET", "b", "busy"]).unwrap();
    let e = migrate(&mut a, &dst, "", "0", &["KEYS", "a", "b", "c"]).unwrap_err();
    assert!(e.to_string().contains("BUSYKEY"), "{e}");
    let left: Vec<String> = run(&mut a, &["KEYS", "*"]).unwrap();
    assert_eq!(left, ["b"]);
    let got: Vec<String> = run(&mut b, &["MGET", "a", "b", "c"]).unwrap();
    assert_eq!(got, ["1", "busy", "3"]);
}

#[test]
fn deletes_are_signalled_like_del() {
    let (src, dst) = (TestServer::start(), TestServer::start());
    let mut a = src.client();
    let _: () = run(&mut a, &["CONFIG", "SET", "notify-keyspace-events", "Eg"]).unwrap();
    let _: () = run(&mut a, &["MSET", "a", "1", "b", "2"]).unwrap();
    let mut sub = src.raw();
    sub.roundtrip(
        &resp(&[b"SUBSCRIBE", b"__keyevent@0__:del"]),
        b"*3\r\n$9\r\nsubscribe\r\n$18\r\n__keyevent@0__:del\r\n:1\r\n",
    );
    let mut watcher = src.client();
    let _: () = run(&mut watcher, &["WATCH", "b"]).unwrap();
    let _: () = run(&mut watcher, &["MULTI"]).unwrap();
    let _: () = run(&mut watcher, &["SET", "x", "1"]).unwrap();
    assert_eq!(
        migrate(&mut a, &dst, "", "0", &["KEYS", "a", "b"]).unwrap(),
        "OK"
    );
    let event =
        |key: &str| format!("*3\r\n$7\r\nmessage\r\n$18\r\n__keyevent@0__:del\r\n$1\r\n{key}\r\n");
    let want = event("a") + &event("b");
    assert_eq!(
        String::from_utf8_lossy(&sub.read_exact_len(want.len())),
        want
    );
    let exec: Option<Vec<String>> = run(&mut watcher, &["EXEC"]).unwrap();
    assert_eq!(exec, None, "WATCH saw the migrated key go");
}

#[test]
fn auth_and_auth2_reach_the_target() {
    let src = TestServer::start();
    let dst = TestServer::start_with(&["--requirepass", "secret"]);
    let mut a = src.client();
    let mut b = dst.client();
    let _: () = run(&mut b, &["AUTH", "secret"]).unwrap();
    let _: () = run(
        &mut b,
        &["ACL", "SETUSER", "mover", "on", ">pw", "~*", "+@all"],
    )
    .unwrap();
    let _: () = run(&mut a, &["MSET", "k1", "1", "k2", "2", "k3", "3"]).unwrap();
    let e = migrate(&mut a, &dst, "k1", "0", &[]).unwrap_err();
    assert!(e.to_string().contains("NOAUTH"), "{e}");
    let e = migrate(&mut a, &dst, "k1", "0", &["AUTH", "wrong"]).unwrap_err();
    assert!(e.to_string().contains("WRONGPASS"), "{e}");
    assert_eq!(run::<i64>(&mut a, &["EXISTS", "k1"]).unwrap(), 1);
    assert_eq!(
        migrate(&mut a, &dst, "k1", "0", &["AUTH", "secret"]).unwrap(),
        "OK"
    );
    let auth2 = ["AUTH2", "mover", "pw"];
    assert_eq!(migrate(&mut a, &dst, "k2", "0", &auth2).unwrap(), "OK");
    let got: Vec<String> = run(&mut b, &["MGET", "k1", "k2"]).unwrap();
    assert_eq!(got, ["1", "2"]);
}

#[test]
fn a_silent_target_times_out_and_a_closed_port_refuses() {
    let src = TestServer::start();
    let mut a = src.client();
    let _: () = run(&mut a, &["SET", "k", "v"]).unwrap();
    // Accepts (the kernel completes the handshake) and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port().to_string();
    let line = ["MIGRATE", "127.0.0.1", &port, "k", "0", "200"];
    assert_eq!(
        err(&mut a, &line),
        "IOERR error or timeout reading to target instance"
    );
    assert_eq!(run::<i64>(&mut a, &["EXISTS", "k"]).unwrap(), 1);
    assert_eq!(cached_sockets(&mut a), "0");
    drop(silent);
    let line = ["MIGRATE", "127.0.0.1", &port, "k", "0", "200"];
    assert_eq!(
        err(&mut a, &line),
        "IOERR error or timeout connecting to the client"
    );
}

#[test]
fn a_target_in_debug_sleep_times_out_as_redis_would() {
    let (src, dst) = (TestServer::start(), TestServer::start());
    let mut a = src.client();
    let _: () = run(&mut a, &["SET", "k", "v"]).unwrap();
    let mut sleeper = dst.raw();
    sleeper.send(&resp(&[b"DEBUG", b"SLEEP", b"2"]));
    // Wait until the target stops answering: DEBUG SLEEP holds every client.
    let mut probe = dst.raw();
    let silent = Duration::from_millis(50);
    probe.stream.set_read_timeout(Some(silent)).unwrap();
    loop {
        probe.send(b"PING\r\n");
        let mut b = [0u8; 7];
        match std::io::Read::read(&mut probe.stream, &mut b) {
            Ok(n) if n > 0 => continue,
            _ => break,
        }
    }
    let port = dst.addr.port().to_string();
    let line = ["MIGRATE", "127.0.0.1", &port, "k", "0", "200"];
    assert_eq!(
        err(&mut a, &line),
        "IOERR error or timeout reading to target instance"
    );
    assert_eq!(run::<i64>(&mut a, &["EXISTS", "k"]).unwrap(), 1);
}

#[test]
fn arguments_are_checked_as_redis_checks_them() {
    let src = TestServer::start();
    let mut a = src.client();
    let base = ["MIGRATE", "127.0.0.1", "1", "k", "0", "10"];
    let with = |extra: &[&'static str]| -> Vec<&str> {
        let mut v = base.to_vec();
        v.extend_from_slice(extra);
        v
    };
    assert_eq!(err(&mut a, &with(&["BOGUS"])), "ERR syntax error");
    assert_eq!(err(&mut a, &with(&["AUTH"])), "ERR syntax error");
    assert_eq!(err(&mut a, &with(&["AUTH2", "u"])), "ERR syntax error");
    assert_eq!(
        err(&mut a, &with(&["KEYS", "a"])),
        "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"
    );
    let bad_db = ["MIGRATE", "127.0.0.1", "1", "k", "x", "10"];
    assert_eq!(
        err(&mut a, &bad_db),
        "ERR value is not an integer or out of range"
    );
    assert_eq!(
        err(&mut a, &["MIGRATE", "h", "1", "k", "0"]),
        "ERR wrong number of arguments for 'migrate' command"
    );
    // No key to move: nothing is tried.
    assert_eq!(run::<String>(&mut a, &base).unwrap(), "NOKEY");
}

#[test]
fn the_slowlog_does_not_show_credentials() {
    let src = TestServer::start();
    let mut a = src.client();
    let _: () = run(&mut a, &["CONFIG", "SET", "slowlog-log-slower-than", "0"]).unwrap();
    let line = ["MIGRATE", "h", "1", "k", "0", "10", "AUTH2", "user", "pw"];
    assert_eq!(run::<String>(&mut a, &line).unwrap(), "NOKEY");
    let log: Vec<Vec<redis::Value>> = run(&mut a, &["SLOWLOG", "GET", "1"]).unwrap();
    let args: Vec<String> = redis::from_redis_value(&log[0][3]).unwrap();
    assert_eq!(
        args,
        [
            "MIGRATE",
            "h",
            "1",
            "k",
            "0",
            "10",
            "AUTH2",
            "(redacted)",
            "(redacted)"
        ]
    );
    // Users and passwords, as Redis 7.0 redacts them (ACL SETUSER whole,
    // CONFIG SET of the password parameters only).
    let _: () = run(&mut a, &["SLOWLOG", "RESET"]).unwrap();
    let _: () = run(&mut a, &["ACL", "SETUSER", "someone", "on", ">pw", "+get"]).unwrap();
    let _: () = run(
        &mut a,
        &[
            "CONFIG",
            "SET",
            "masterauth",
            "pw",
            "slowlog-max-len",
            "128",
        ],
    )
    .unwrap();
    let log: Vec<Vec<redis::Value>> = run(&mut a, &["SLOWLOG", "GET", "2"]).unwrap();
    let line = |i: usize| -> String {
        let args: Vec<String> = redis::from_redis_value(&log[i][3]).unwrap();
        args.join(" ")
    };
    assert_eq!(
        line(0),
        "CONFIG SET masterauth (redacted) slowlog-max-len 128"
    );
    assert_eq!(
        line(1),
        "ACL SETUSER (redacted) (redacted) (redacted) (redacted)"
    );
}

/// A redis-server on a free loopback port, stopped when dropped.
pub(crate) struct RedisServer {
    child: Child,
    pub(crate) port: u16,
}

impl RedisServer {
    /// Starts `/usr/bin/redis-server`, checking RESTORE payloads deeply;
    /// `None` (the test skips) when it is not installed.
    pub(crate) fn start() -> Option<RedisServer> {
        RedisServer::start_with(&[])
    }

    /// [`RedisServer::start`] with extra arguments (`--dir`, which it
    /// loads `dump.rdb` from).
    pub(crate) fn start_with(extra: &[&str]) -> Option<RedisServer> {
        const BIN: &str = "/usr/bin/redis-server";
        if !std::path::Path::new(BIN).exists() {
            println!("skipped: {BIN} is not installed (cargo xtask ci installs it)");
            return None;
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new(BIN)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            // Deep checks of every RESTORE payload (listpack headers and
            // back lengths, stream entry counts and PELs), so what FerrumKV
            // sends must be exactly well-formed, not merely loadable.
            .args(["--sanitize-dump-payload", "yes"])
            .args(extra)
            .stdout(Stdio::null())
            .spawn()
            .expect("start redis-server");
        let server = RedisServer { child, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        // Up once it answers PING (not -LOADING).
        loop {
            let ready = std::net::TcpStream::connect(("127.0.0.1", port)).is_ok_and(|mut s| {
                use std::io::{Read, Write};
                let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
                let mut buf = [0u8; 7];
                s.write_all(b"PING\r\n").is_ok()
                    && s.read_exact(&mut buf).is_ok()
                    && &buf == b"+PONG\r\n"
            });
            if ready {
                break;
            }
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(server)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn redis_server_accepts_what_ferrumkv_migrates() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let src = TestServer::start();
    let mut a = src.client();
    let _: () = run(&mut a, &["RPUSH", "l", "1", "two", "3"]).unwrap();
    let _: () = run(&mut a, &["ZADD", "z", "1.5", "m"]).unwrap();
    let _: () = run(&mut a, &["SET", "s", "v", "PX", "60000"]).unwrap();
    let _: String = run(&mut a, &["XADD", "x", "7-1", "f", "v"]).unwrap();
    let port = redis.port.to_string();
    let line = [
        "MIGRATE",
        "127.0.0.1",
        &port,
        "",
        "2",
        "5000",
        "KEYS",
        "l",
        "z",
        "s",
        "x",
    ];
    assert_eq!(run::<String>(&mut a, &line).unwrap(), "OK");
    let mut r = redis::Client::open(format!("redis://127.0.0.1:{port}/2"))
        .unwrap()
        .get_connection()
        .unwrap();
    let l: Vec<String> = run(&mut r, &["LRANGE", "l", "0", "-1"]).unwrap();
    assert_eq!(l, ["1", "two", "3"]);
    assert_eq!(run::<String>(&mut r, &["ZSCORE", "z", "m"]).unwrap(), "1.5");
    let pttl: i64 = run(&mut r, &["PTTL", "s"]).unwrap();
    assert!((1..=60000).contains(&pttl), "pttl {pttl}");
    let x: Vec<(String, Vec<String>)> = run(&mut r, &["XRANGE", "x", "-", "+"]).unwrap();
    assert_eq!(
        x,
        [("7-1".to_owned(), vec!["f".to_owned(), "v".to_owned()])]
    );
    // Redis's own error comes back through.
    let _: () = run(&mut a, &["SET", "s", "again"]).unwrap();
    let e = run::<String>(&mut a, &line).unwrap_err();
    assert!(e.to_string().contains("BUSYKEY"), "{e}");
}

#[test]
fn command_info_getkeys_and_acl_see_the_keys_as_redis_does() {
    let s = TestServer::start();
    let mut c = s.client();
    let info: Vec<Vec<redis::Value>> = run(&mut c, &["COMMAND", "INFO", "migrate"]).unwrap();
    let flags: Vec<String> = redis::from_redis_value(&info[0][2]).unwrap();
    assert_eq!(flags, ["write", "movablekeys"]);
    let triple: Vec<i64> = info[0][3..6]
        .iter()
        .map(|v| redis::from_redis_value(v).unwrap())
        .collect();
    assert_eq!(triple, [3, 3, 1]);
    let specs: Vec<redis::Value> = redis::from_redis_value(&info[0][8]).unwrap();
    assert_eq!(specs.len(), 2);
    // AUTH's password may read KEYS: it is skipped, as Redis skips it.
    let line = [
        "COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "0", "AUTH", "KEYS", "KEYS", "a", "b",
    ];
    assert_eq!(run::<Vec<String>>(&mut c, &line).unwrap(), ["a", "b"]);
    let rules = [
        "ACL",
        "SETUSER",
        "t",
        "on",
        "nopass",
        "+@all",
        "%R~read*",
        "%W~write*",
        "%RW~rw*",
    ];
    let _: () = run(&mut c, &rules).unwrap();
    let dryrun = |c: &mut redis::Connection, key: &str| -> String {
        run(
            c,
            &[
                "ACL", "DRYRUN", "t", "MIGRATE", "h", "1", "", "0", "5", "KEYS", key,
            ],
        )
        .unwrap()
    };
    assert_eq!(dryrun(&mut c, "rw"), "OK");
    assert_eq!(
        dryrun(&mut c, "read"),
        "This user has no permissions to access the 'read' key"
    );
    assert_eq!(
        dryrun(&mut c, "write"),
        "This user has no permissions to access the 'write' key"
    );
}
