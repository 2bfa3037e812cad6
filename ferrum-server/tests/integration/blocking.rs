//! Blocking pops over real sockets: BLPOP, BRPOP, BLMOVE, BRPOPLPUSH,
//! BZPOPMIN, BZPOPMAX; wake-up order, timeouts, disconnects, MULTI,
//! CLIENT KILL and CLIENT UNBLOCK.
//!
//! A blocked client is a raw socket; the test waits until INFO counts it as
//! blocked before the push that should wake it, so both orders of arrival
//! are exercised deterministically. No test asserts on elapsed time.

use std::time::Duration;

use crate::common::{err, resp, run, Raw, TestServer};

/// `INFO clients`' `blocked_clients`.
fn blocked_clients(c: &mut redis::Connection) -> u64 {
    let info: String = run(c, &["INFO", "clients"]).expect("info");
    info.lines()
        .find_map(|l| l.strip_prefix("blocked_clients:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("blocked_clients line")
}

/// Waits until exactly `n` clients are blocked (bounded: panics after a
/// generous number of polls).
pub(crate) fn wait_blocked(c: &mut redis::Connection, n: u64) {
    for _ in 0..2000 {
        if blocked_clients(c) == n {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("blocked_clients never reached {n}");
}

/// Sends a blocking command on a fresh raw connection.
fn block(s: &TestServer, args: &[&[u8]]) -> Raw {
    let mut r = s.raw();
    r.send(&resp(args));
    r
}

/// Reads exactly `reply`'s length and compares.
fn expect(r: &mut Raw, reply: &[u8]) {
    let got = r.read_exact_len(reply.len());
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(reply)
    );
}

#[test]
fn data_already_there_is_popped_at_once_from_the_first_non_empty_key() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: i64 = run(&mut c, &["RPUSH", "b", "x1", "x2"]).unwrap();
    let _: i64 = run(&mut c, &["RPUSH", "c", "y"]).unwrap();
    assert_eq!(
        run::<Vec<String>>(&mut c, &["BLPOP", "a", "b", "c", "0"]).unwrap(),
        ["b", "x1"]
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["BRPOP", "a", "b", "c", "0"]).unwrap(),
        ["b", "x2"]
    );
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "b"]).unwrap(), 0);
    let _: () = run(&mut c, &["SET", "str", "v"]).unwrap();
    assert!(err(&mut c, &["BLPOP", "str", "0"]).starts_with("WRONGTYPE"));
    assert_eq!(blocked_clients(&mut c), 0);
}

#[test]
fn a_push_wakes_a_blocked_client() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut a = block(&s, &[b"BLPOP", b"l", b"0"]);
    wait_blocked(&mut c, 1);
    assert_eq!(run::<i64>(&mut c, &["LPUSH", "l", "v"]).unwrap(), 1);
    expect(&mut a, b"*2\r\n$1\r\nl\r\n$1\r\nv\r\n");
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "l"]).unwrap(), 0);
    wait_blocked(&mut c, 0);
    // The connection goes on as usual afterwards.
    a.roundtrip(b"PING\r\n", b"+PONG\r\n");
}

#[test]
fn commands_pipelined_after_a_blocking_one_wait_for_it() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut a = s.raw();
    let mut req = resp(&[b"BRPOP", b"p", b"0"]);
    req.extend_from_slice(b"PING\r\n");
    a.send(&req);
    wait_blocked(&mut c, 1);
    let _: i64 = run(&mut c, &["RPUSH", "p", "x", "y"]).unwrap();
    expect(&mut a, b"*2\r\n$1\r\np\r\n$1\r\ny\r\n+PONG\r\n");
}

#[test]
fn blocked_clients_are_served_first_come_first_served() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut first = block(&s, &[b"BLPOP", b"q", b"0"]);
    wait_blocked(&mut c, 1);
    let mut second = block(&s, &[b"BLPOP", b"q", b"0"]);
    wait_blocked(&mut c, 2);
    let _: i64 = run(&mut c, &["RPUSH", "q", "one"]).unwrap();
    expect(&mut first, b"*2\r\n$1\r\nq\r\n$3\r\none\r\n");
    wait_blocked(&mut c, 1);
    let _: i64 = run(&mut c, &["RPUSH", "q", "two"]).unwrap();
    expect(&mut second, b"*2\r\n$1\r\nq\r\n$3\r\ntwo\r\n");
    wait_blocked(&mut c, 0);

    // One push of two elements serves both waiters, in order.
    let mut first = block(&s, &[b"BLPOP", b"q", b"0"]);
    wait_blocked(&mut c, 1);
    let mut second = block(&s, &[b"BLPOP", b"q", b"0"]);
    wait_blocked(&mut c, 2);
    let _: i64 = run(&mut c, &["RPUSH", "q", "a", "b"]).unwrap();
    expect(&mut first, b"*2\r\n$1\r\nq\r\n$1\r\na\r\n");
    expect(&mut second, b"*2\r\n$1\r\nq\r\n$1\r\nb\r\n");
}

#[test]
fn timeouts_reply_null_and_bad_timeouts_are_errors() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut r = s.raw();
    r.roundtrip(&resp(&[b"BLPOP", b"none", b"0.1"]), b"*-1\r\n");
    r.roundtrip(&resp(&[b"BZPOPMAX", b"none", b"0.1"]), b"*-1\r\n");
    r.roundtrip(
        &resp(&[b"BLMOVE", b"none", b"d", b"LEFT", b"RIGHT", b"0.1"]),
        b"$-1\r\n",
    );
    r.hello3();
    r.roundtrip(&resp(&[b"BRPOP", b"none", b"0.1"]), b"_\r\n");
    r.roundtrip(&resp(&[b"BRPOPLPUSH", b"none", b"d", b"0.1"]), b"_\r\n");
    assert_eq!(
        err(&mut c, &["BLPOP", "k", "-1"]),
        "ERR timeout is negative"
    );
    assert_eq!(
        err(&mut c, &["BLPOP", "k", "soon"]),
        "ERR timeout is not a float or out of range"
    );
    assert_eq!(
        err(&mut c, &["BLMOVE", "a", "b", "UP", "LEFT", "0"]),
        "ERR syntax error"
    );
    assert_eq!(
        err(&mut c, &["BLPOP", "k"]),
        "ERR wrong number of arguments for 'blpop' command"
    );
    assert_eq!(blocked_clients(&mut c), 0);
}

#[test]
fn a_client_that_disconnects_while_blocked_loses_nothing() {
    let s = TestServer::start();
    let mut c = s.client();
    let gone = block(&s, &[b"BLPOP", b"d", b"0"]);
    wait_blocked(&mut c, 1);
    let mut live = block(&s, &[b"BLPOP", b"d", b"0"]);
    wait_blocked(&mut c, 2);
    drop(gone);
    wait_blocked(&mut c, 1);
    let _: i64 = run(&mut c, &["RPUSH", "d", "v"]).unwrap();
    expect(&mut live, b"*2\r\n$1\r\nd\r\n$1\r\nv\r\n");
    // Nothing popped for the client that left.
    let _: i64 = run(&mut c, &["RPUSH", "d", "w"]).unwrap();
    assert_eq!(
        run::<Vec<String>>(&mut c, &["LRANGE", "d", "0", "-1"]).unwrap(),
        ["w"]
    );
    wait_blocked(&mut c, 0);
}

#[test]
fn blmove_serves_and_wakes_clients_blocked_on_its_destination() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut on_dst = block(&s, &[b"BLPOP", b"dst", b"0"]);
    wait_blocked(&mut c, 1);
    let mut mover = block(&s, &[b"BLMOVE", b"src", b"dst", b"RIGHT", b"LEFT", b"0"]);
    wait_blocked(&mut c, 2);
    let _: i64 = run(&mut c, &["RPUSH", "src", "a", "b"]).unwrap();
    expect(&mut mover, b"$1\r\nb\r\n");
    expect(&mut on_dst, b"*2\r\n$3\r\ndst\r\n$1\r\nb\r\n");
    assert_eq!(
        run::<Vec<String>>(&mut c, &["LRANGE", "src", "0", "-1"]).unwrap(),
        ["a"]
    );
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "dst"]).unwrap(), 0);
    // BRPOPLPUSH with data there already.
    assert_eq!(
        run::<String>(&mut c, &["BRPOPLPUSH", "src", "out", "0"]).unwrap(),
        "a"
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["LRANGE", "out", "0", "-1"]).unwrap(),
        ["a"]
    );
    // A wrong-typed destination is an error, and nothing moves.
    let _: () = run(&mut c, &["SET", "s", "x"]).unwrap();
    assert!(err(&mut c, &["BLMOVE", "out", "s", "LEFT", "LEFT", "0"]).starts_with("WRONGTYPE"));
    assert_eq!(run::<i64>(&mut c, &["LLEN", "out"]).unwrap(), 1);
}

#[test]
fn bzpopmin_and_bzpopmax() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut a = block(&s, &[b"BZPOPMIN", b"z1", b"z2", b"0"]);
    wait_blocked(&mut c, 1);
    // A list pushed under a waited-on name wakes no sorted-set waiter (had
    // it woken, the retry would reply WRONGTYPE, as a re-run BZPOPMIN does
    // in Redis 7.2).
    let _: i64 = run(&mut c, &["RPUSH", "z1", "l"]).unwrap();
    let _: i64 = run(&mut c, &["DEL", "z1"]).unwrap();
    let _: i64 = run(&mut c, &["ZADD", "z2", "2", "b", "1", "a"]).unwrap();
    expect(&mut a, b"*3\r\n$2\r\nz2\r\n$1\r\na\r\n$1\r\n1\r\n");
    let mut r = s.raw();
    r.hello3();
    r.roundtrip(
        &resp(&[b"BZPOPMAX", b"z2", b"0"]),
        b"*3\r\n$2\r\nz2\r\n$1\r\nb\r\n,2\r\n",
    );
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "z2"]).unwrap(), 0);
    wait_blocked(&mut c, 0);
}

#[test]
fn inside_multi_blocking_commands_do_not_block_and_exec_wakes_waiters() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut r = s.raw();
    r.roundtrip(b"MULTI\r\n", b"+OK\r\n");
    r.roundtrip(&resp(&[b"BLPOP", b"m", b"0"]), b"+QUEUED\r\n");
    r.roundtrip(
        &resp(&[b"BLMOVE", b"m", b"n", b"LEFT", b"LEFT", b"0"]),
        b"+QUEUED\r\n",
    );
    r.roundtrip(b"EXEC\r\n", b"*2\r\n*-1\r\n$-1\r\n");

    let mut waiter = block(&s, &[b"BLPOP", b"m", b"0"]);
    wait_blocked(&mut c, 1);
    r.roundtrip(b"MULTI\r\n", b"+OK\r\n");
    r.roundtrip(&resp(&[b"RPUSH", b"m", b"1"]), b"+QUEUED\r\n");
    r.roundtrip(&resp(&[b"RPUSH", b"m", b"2"]), b"+QUEUED\r\n");
    r.roundtrip(b"EXEC\r\n", b"*2\r\n:1\r\n:2\r\n");
    expect(&mut waiter, b"*2\r\n$1\r\nm\r\n$1\r\n1\r\n");
    assert_eq!(
        run::<Vec<String>>(&mut c, &["LRANGE", "m", "0", "-1"]).unwrap(),
        ["2"]
    );
}

#[test]
fn client_kill_and_unblock_end_a_blocked_wait() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut victim = s.raw();
    victim.send(b"CLIENT ID\r\n");
    let mut line = Vec::new();
    while !line.ends_with(b"\r\n") {
        line.extend(victim.read_exact_len(1));
    }
    // `:<id>\r\n`
    let id = String::from_utf8_lossy(&line[1..line.len() - 2]).into_owned();
    victim.send(&resp(&[b"BLPOP", b"k", b"0"]));
    wait_blocked(&mut c, 1);
    let list: String = run(&mut c, &["CLIENT", "LIST", "ID", &id]).unwrap();
    assert!(list.contains("flags=b"), "{list}");
    assert_eq!(run::<i64>(&mut c, &["CLIENT", "UNBLOCK", &id]).unwrap(), 1);
    expect(&mut victim, b"*-1\r\n");
    victim.send(&resp(&[b"BLPOP", b"k", b"0"]));
    wait_blocked(&mut c, 1);
    assert_eq!(
        run::<i64>(&mut c, &["CLIENT", "UNBLOCK", &id, "ERROR"]).unwrap(),
        1
    );
    expect(
        &mut victim,
        b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n",
    );
    // Counted as a failed BLPOP, as Redis counts it.
    let stats: String = run(&mut c, &["INFO", "commandstats"]).unwrap();
    let blpop = stats
        .lines()
        .find_map(|l| l.strip_prefix("cmdstat_blpop:"))
        .expect("blpop in commandstats");
    assert!(
        blpop.ends_with(",rejected_calls=0,failed_calls=1"),
        "{blpop}"
    );
    assert_eq!(run::<i64>(&mut c, &["CLIENT", "UNBLOCK", &id]).unwrap(), 0);

    victim.send(&resp(&[b"BLPOP", b"k", b"0"]));
    wait_blocked(&mut c, 1);
    assert_eq!(
        run::<i64>(&mut c, &["CLIENT", "KILL", "ID", &id]).unwrap(),
        1
    );
    assert!(victim.is_closed());
    wait_blocked(&mut c, 0);
    let _: i64 = run(&mut c, &["RPUSH", "k", "kept"]).unwrap();
    assert_eq!(run::<i64>(&mut c, &["LLEN", "k"]).unwrap(), 1);
}

#[test]
fn shutdown_closes_blocked_clients() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut a = block(&s, &[b"BLPOP", b"k", b"0"]);
    wait_blocked(&mut c, 1);
    drop(s);
    assert!(a.is_closed());
}

#[test]
fn the_exporter_reads_the_same_blocked_clients_counter() {
    let s = TestServer::start_with(&["--metrics-addr", "127.0.0.1:0"]);
    let mut c = s.client();
    let _a = block(&s, &[b"BLPOP", b"k", b"0"]);
    wait_blocked(&mut c, 1);
    let body = crate::metrics::scrape(&s);
    assert!(
        body.lines().any(|l| l == "redis_blocked_clients 1"),
        "{body}"
    );
}

/// Commands of two clients that arrive together run in arrival order, as
/// Redis runs them: a reader that sent `XREADGROUP ... BLOCK 0` just before
/// another client's `DEL` (or `FLUSHALL`) has blocked by then, and is
/// released with `-UNBLOCKED`, not refused with `-NOGROUP` (Redis's
/// "Blocking XREADGROUP: key deleted" and "flushed DB"). Each round sends
/// the two back to back; tokio's LIFO slot ran the later one first in
/// nearly every round (`ferrum_server::runtime`).
#[test]
fn commands_that_arrive_together_run_in_arrival_order() {
    let s = TestServer::start_on(1, &[]);
    let mut c = s.client();
    let mut writer = s.raw();
    for round in 0..20 {
        let _: i64 = run(&mut c, &["DEL", "mystream"]).unwrap();
        let _: String = run(&mut c, &["XADD", "mystream", "666", "f", "v"]).unwrap();
        let _: () = run(&mut c, &["XGROUP", "CREATE", "mystream", "mygroup", "$"]).unwrap();
        let mut reader = s.raw();
        reader.send(&resp(&[b"PING"]));
        expect(&mut reader, b"+PONG\r\n");
        reader.send(&resp(&[
            b"XREADGROUP",
            b"GROUP",
            b"mygroup",
            b"Alice",
            b"BLOCK",
            b"0",
            b"STREAMS",
            b"mystream",
            b">",
        ]));
        if round % 2 == 0 {
            writer.send(&resp(&[b"DEL", b"mystream"]));
        } else {
            writer.send(&resp(&[b"FLUSHALL"]));
        }
        expect(
            &mut reader,
            b"-UNBLOCKED the stream key no longer exists\r\n",
        );
        expect(
            &mut writer,
            if round % 2 == 0 {
                b":1\r\n"
            } else {
                b"+OK\r\n"
            },
        );
    }
}

/// Redis's "BRPOPLPUSH does not affect WATCH while still blocked": an
/// `EXEC` that arrived just before the push that serves a blocked
/// BRPOPLPUSH runs first, so the move does not touch the key it watched.
#[test]
fn an_exec_that_arrived_first_runs_before_the_push_that_serves_a_waiter() {
    let s = TestServer::start_on(1, &[]);
    let mut c = s.client();
    let mut pusher = s.raw();
    for _ in 0..10 {
        let _: i64 = run(&mut c, &["DEL", "srclist", "dstlist", "somekey"]).unwrap();
        let _: () = run(&mut c, &["SET", "somekey", "somevalue"]).unwrap();
        let mut blocked = block(&s, &[b"BRPOPLPUSH", b"srclist", b"dstlist", b"0"]);
        wait_blocked(&mut c, 1);
        let mut watcher = s.raw();
        watcher.send(&resp(&[b"WATCH", b"dstlist"]));
        expect(&mut watcher, b"+OK\r\n");
        watcher.send(&resp(&[b"MULTI"]));
        expect(&mut watcher, b"+OK\r\n");
        watcher.send(&resp(&[b"GET", b"somekey"]));
        expect(&mut watcher, b"+QUEUED\r\n");
        watcher.send(&resp(&[b"EXEC"]));
        pusher.send(&resp(&[b"LPUSH", b"srclist", b"element"]));
        expect(&mut watcher, b"*1\r\n$9\r\nsomevalue\r\n");
        expect(&mut pusher, b":1\r\n");
        expect(&mut blocked, b"$7\r\nelement\r\n");
    }
}
