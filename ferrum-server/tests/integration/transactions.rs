//! MULTI / EXEC / DISCARD / WATCH / UNWATCH.

use redis::Value;

use crate::common::{err, run, Raw, TestServer};

#[test]
fn exec_runs_queued_commands_in_order() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut raw = s.raw();
    raw.roundtrip(b"MULTI\r\n", b"+OK\r\n");
    raw.roundtrip(b"SET a 1\r\n", b"+QUEUED\r\n");
    raw.roundtrip(b"INCR a\r\n", b"+QUEUED\r\n");
    raw.roundtrip(b"INCR nonnum\r\n", b"+QUEUED\r\n");
    raw.roundtrip(b"GET a\r\n", b"+QUEUED\r\n");
    raw.roundtrip(b"EXEC\r\n", b"*4\r\n+OK\r\n:2\r\n:1\r\n$1\r\n2\r\n");
    assert_eq!(run::<String>(&mut c, &["GET", "a"]).unwrap(), "2");
}

#[test]
fn runtime_errors_do_not_abort_the_rest() {
    let s = TestServer::start();
    let mut raw = s.raw();
    raw.roundtrip(b"SET s abc\r\n", b"+OK\r\n");
    raw.roundtrip(b"MULTI\r\n", b"+OK\r\n");
    raw.roundtrip(b"INCR s\r\n", b"+QUEUED\r\n");
    raw.roundtrip(b"SET s2 x\r\n", b"+QUEUED\r\n");
    raw.roundtrip(
        b"EXEC\r\n",
        b"*2\r\n-ERR value is not an integer or out of range\r\n+OK\r\n",
    );
}

#[test]
fn queue_time_errors_abort_with_execabort() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut raw = s.raw();
    raw.roundtrip(b"MULTI\r\n", b"+OK\r\n");
    raw.roundtrip(b"SET a 1\r\n", b"+QUEUED\r\n");
    raw.roundtrip(
        b"GET\r\n",
        b"-ERR wrong number of arguments for 'get' command\r\n",
    );
    raw.roundtrip(
        b"EXEC\r\n",
        b"-EXECABORT Transaction discarded because of previous errors.\r\n",
    );
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "a"]).unwrap(), 0);
    raw.roundtrip(b"MULTI\r\n", b"+OK\r\n");
    raw.roundtrip(
        b"NOSUCH\r\n",
        b"-ERR unknown command 'NOSUCH', with args beginning with: \r\n",
    );
    raw.roundtrip(
        b"EXEC\r\n",
        b"-EXECABORT Transaction discarded because of previous errors.\r\n",
    );
}

#[test]
fn discard_and_misuse() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(err(&mut c, &["EXEC"]), "ERR EXEC without MULTI");
    assert_eq!(err(&mut c, &["DISCARD"]), "ERR DISCARD without MULTI");
    let mut raw = s.raw();
    raw.roundtrip(b"MULTI\r\n", b"+OK\r\n");
    raw.roundtrip(b"MULTI\r\n", b"-ERR MULTI calls can not be nested\r\n");
    raw.roundtrip(
        b"WATCH x\r\n",
        b"-ERR WATCH inside MULTI is not allowed\r\n",
    );
    raw.roundtrip(b"SET a 1\r\n", b"+QUEUED\r\n");
    raw.roundtrip(b"DISCARD\r\n", b"+OK\r\n");
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "a"]).unwrap(), 0);
}

#[test]
fn watch_aborts_when_a_watched_key_changes() {
    let s = TestServer::start();
    let mut other = s.client();
    let mut raw = s.raw();
    let _: () = run(&mut other, &["SET", "w", "1"]).unwrap();
    raw.roundtrip(b"WATCH w\r\n", b"+OK\r\n");
    let _: () = run(&mut other, &["SET", "w", "2"]).unwrap();
    raw.roundtrip(b"MULTI\r\n", b"+OK\r\n");
    raw.roundtrip(b"SET w 3\r\n", b"+QUEUED\r\n");
    raw.roundtrip(b"EXEC\r\n", b"*-1\r\n");
    assert_eq!(run::<String>(&mut other, &["GET", "w"]).unwrap(), "2");

    // Unchanged: EXEC runs. The watch was cleared by the previous EXEC.
    raw.roundtrip(b"WATCH w\r\n", b"+OK\r\n");
    raw.roundtrip(b"MULTI\r\n", b"+OK\r\n");
    raw.roundtrip(b"SET w 3\r\n", b"+QUEUED\r\n");
    raw.roundtrip(b"EXEC\r\n", b"*1\r\n+OK\r\n");

    // A key that did not exist and was created also aborts.
    raw.roundtrip(b"WATCH fresh\r\n", b"+OK\r\n");
    let _: () = run(&mut other, &["SET", "fresh", "x"]).unwrap();
    raw.roundtrip(b"MULTI\r\n", b"+OK\r\n");
    raw.roundtrip(b"EXEC\r\n", b"*-1\r\n");

    // UNWATCH forgets.
    raw.roundtrip(b"WATCH w\r\n", b"+OK\r\n");
    let _: () = run(&mut other, &["SET", "w", "4"]).unwrap();
    raw.roundtrip(b"UNWATCH\r\n", b"+OK\r\n");
    raw.roundtrip(b"MULTI\r\n", b"+OK\r\n");
    raw.roundtrip(b"EXEC\r\n", b"*0\r\n");
}

#[test]
fn writes_that_change_nothing_keep_the_watch() {
    // Redis signals a key only when the command changed it (checked against
    // redis-server 7.0): these no-ops let EXEC run, a real add aborts it.
    let s = TestServer::start();
    let mut other = s.client();
    let mut raw = s.raw();
    for setup in [
        &["SADD", "s", "a"][..],
        &["HSET", "h", "f", "v"],
        &["RPUSH", "l", "x"],
        &["ZADD", "z", "1", "m"],
    ] {
        let _: i64 = run(&mut other, setup).unwrap();
    }
    let no_ops: [&[&str]; 7] = [
        &["SADD", "s", "a"],
        &["SREM", "s", "nope"],
        &["HDEL", "h", "nope"],
        &["HSETNX", "h", "f", "w"],
        &["LREM", "l", "0", "nope"],
        &["ZREM", "z", "nope"],
        &["ZREMRANGEBYSCORE", "z", "5", "6"],
    ];
    fn watch_around(raw: &mut Raw, other: &mut redis::Connection, write: &[&str], exec: &[u8]) {
        raw.roundtrip(format!("WATCH {}\r\n", write[1]).as_bytes(), b"+OK\r\n");
        let _: i64 = run(other, write).unwrap();
        raw.roundtrip(b"MULTI\r\n", b"+OK\r\n");
        raw.roundtrip(b"PING\r\n", b"+QUEUED\r\n");
        raw.roundtrip(b"EXEC\r\n", exec);
    }
    for write in no_ops {
        watch_around(&mut raw, &mut other, write, b"*1\r\n+PONG\r\n");
    }
    watch_around(&mut raw, &mut other, &["SADD", "s", "new"], b"*-1\r\n");
}

#[test]
fn watched_key_expiring_aborts() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut raw = s.raw();
    let _: () = run(&mut c, &["SET", "t", "v", "PX", "1000"]).unwrap();
    raw.roundtrip(b"WATCH t\r\n", b"+OK\r\n");
    s.advance(&mut c, 2_000);
    raw.roundtrip(b"MULTI\r\n", b"+OK\r\n");
    raw.roundtrip(b"EXEC\r\n", b"*-1\r\n");
}

#[test]
fn client_library_transactions() {
    let s = TestServer::start();
    let mut c = s.client();
    let (a, b): (i64, i64) = redis::pipe()
        .atomic()
        .cmd("INCR")
        .arg("n")
        .cmd("INCRBY")
        .arg("n")
        .arg(5)
        .query(&mut c)
        .unwrap();
    assert_eq!((a, b), (1, 6));
    let v: Value = redis::cmd("GET").arg("n").query(&mut c).unwrap();
    assert_eq!(v, Value::BulkString(b"6".to_vec()));
}
