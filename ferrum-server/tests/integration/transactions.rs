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

/// The sequence: A watches `k`, B empties the keyspace and creates
/// `k` again with the very value A saw; A's EXEC must abort, as in Redis,
/// at 1, 2 and 4 worker threads, for each command that replaces a
/// database's keys.
#[test]
fn a_flush_or_swap_aborts_a_watch_on_a_key_it_removed_even_if_recreated() {
    for workers in [1, 2, 4] {
        let s = TestServer::start_on(workers, &[]);
        let mut b = s.client();
        let mut a = s.raw();
        for flush in [
            &["FLUSHALL"][..],
            &["FLUSHDB"],
            &["FLUSHALL", "ASYNC"],
            &["SWAPDB", "0", "1"],
        ] {
            let _: () = run(&mut b, &["FLUSHALL"]).unwrap();
            a.roundtrip(b"SET k 0\r\n", b"+OK\r\n");
            a.roundtrip(b"WATCH k\r\n", b"+OK\r\n");
            let _: () = run(&mut b, flush).unwrap();
            let _: () = run(&mut b, &["SET", "k", "0"]).unwrap();
            a.roundtrip(b"MULTI\r\n", b"+OK\r\n");
            a.roundtrip(b"SET k 1\r\n", b"+QUEUED\r\n");
            a.roundtrip(b"EXEC\r\n", b"*-1\r\n");
            assert_eq!(
                run::<String>(&mut b, &["GET", "k"]).unwrap(),
                "0",
                "{flush:?} at {workers} workers"
            );
        }
        // A key absent when watched and still absent after a flush is
        // left alone, as Redis leaves it.
        a.roundtrip(b"WATCH nokey\r\n", b"+OK\r\n");
        let _: () = run(&mut b, &["FLUSHALL"]).unwrap();
        a.roundtrip(b"MULTI\r\n", b"+OK\r\n");
        a.roundtrip(b"EXEC\r\n", b"*0\r\n");
    }
}

/// As Redis 7.0: SWAPDB touches a watched key only if a live key is on
/// either side; nothing swapped for nothing, an expired key included, is
/// no change.
#[test]
fn a_swap_of_nothing_for_nothing_keeps_a_watch() {
    let s = TestServer::start();
    let mut b = s.client();
    let mut a = s.raw();
    let _: () = run(&mut b, &["DEBUG", "SET-ACTIVE-EXPIRE", "0"]).unwrap();
    let in_db1 = |b: &mut redis::Connection, line: &[&str]| {
        let _: () = run(b, &["SELECT", "1"]).unwrap();
        let _: redis::Value = run(b, line).unwrap();
        let _: () = run(b, &["SELECT", "0"]).unwrap();
    };
    // Absent on both sides; expired in the watched database; expired in
    // the other one, which the swap brings in.
    let _: () = run(&mut b, &["SET", "stale", "v", "PX", "1"]).unwrap();
    in_db1(&mut b, &["SET", "stale-other", "v", "PX", "1"]);
    let _: () = run(&mut b, &["DEBUG", "ADVANCE-CLOCK", "10"]).unwrap();
    for key in ["nokey", "stale", "stale-other"] {
        a.roundtrip(format!("WATCH {key}\r\n").as_bytes(), b"+OK\r\n");
        let _: () = run(&mut b, &["SWAPDB", "0", "1"]).unwrap();
        a.roundtrip(b"MULTI\r\n", b"+OK\r\n");
        a.roundtrip(b"PING\r\n", b"+QUEUED\r\n");
        a.roundtrip(b"EXEC\r\n", b"*1\r\n+PONG\r\n");
    }
    // A live key the swap brings in, or takes away, is a change.
    let _: () = run(&mut b, &["FLUSHALL"]).unwrap();
    in_db1(&mut b, &["SET", "live", "v"]);
    for _ in 0..2 {
        a.roundtrip(b"WATCH live\r\n", b"+OK\r\n");
        let _: () = run(&mut b, &["SWAPDB", "0", "1"]).unwrap();
        a.roundtrip(b"MULTI\r\n", b"+OK\r\n");
        a.roundtrip(b"PING\r\n", b"+QUEUED\r\n");
        a.roundtrip(b"EXEC\r\n", b"*-1\r\n");
    }
}

/// Optimistic locking at 4 workers with FLUSHDB racing it: every client
/// reads `counter`, writes read + 1 under WATCH, and logs what it wrote
/// in database 1 inside the same transaction; the flusher logs its
/// flushes the same way. EXEC is atomic, so the log is the order the
/// writes took effect in, and each write must be one more than the value
/// before it (0 after a flush): a transaction that ran on a value it never
/// read shows as a gap. Bounded in count, not in time.
#[test]
fn optimistic_locking_loses_no_update_while_flushdb_races_it() {
    let s = TestServer::start_on(4, &[]);
    let clients = 4;
    let per_client = 300;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flusher = {
        let mut c = s.client();
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut flushes = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && flushes < 5_000 {
                let _: redis::Value = redis::pipe()
                    .atomic()
                    .cmd("FLUSHDB")
                    .cmd("SELECT")
                    .arg(1)
                    .cmd("RPUSH")
                    .arg("log")
                    .arg("F")
                    .cmd("SELECT")
                    .arg(0)
                    .query(&mut c)
                    .expect("flush");
                flushes += 1;
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            flushes
        })
    };
    let workers: Vec<_> = (0..clients)
        .map(|_| {
            let mut c = s.client();
            std::thread::spawn(move || {
                let mut committed = 0;
                let mut tries = 0;
                while committed < per_client && tries < 100_000 {
                    tries += 1;
                    let _: () = redis::cmd("WATCH").arg("counter").query(&mut c).unwrap();
                    let read: Option<i64> = redis::cmd("GET").arg("counter").query(&mut c).unwrap();
                    let next = read.unwrap_or(0) + 1;
                    let done: Option<redis::Value> = redis::pipe()
                        .atomic()
                        .cmd("SET")
                        .arg("counter")
                        .arg(next)
                        .cmd("SELECT")
                        .arg(1)
                        .cmd("RPUSH")
                        .arg("log")
                        .arg(next)
                        .cmd("SELECT")
                        .arg(0)
                        .query(&mut c)
                        .unwrap();
                    committed += usize::from(done.is_some());
                }
                committed
            })
        })
        .collect();
    let committed: usize = workers.into_iter().map(|w| w.join().unwrap()).sum();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let flushes = flusher.join().unwrap();
    assert_eq!(committed, clients * per_client);
    assert!(flushes > 0);
    let mut c = s.client();
    let _: () = run(&mut c, &["SELECT", "1"]).unwrap();
    let log: Vec<String> = run(&mut c, &["LRANGE", "log", "0", "-1"]).unwrap();
    assert_eq!(log.len(), committed + flushes);
    let mut current = 0;
    for (i, entry) in log.iter().enumerate() {
        if entry == "F" {
            current = 0;
            continue;
        }
        let wrote: i64 = entry.parse().unwrap();
        assert_eq!(
            wrote,
            current + 1,
            "entry {i} wrote {wrote} over {current}: a lost update; log around it: {:?}",
            &log[i.saturating_sub(8)..(i + 8).min(log.len())]
        );
        current = wrote;
    }
}
