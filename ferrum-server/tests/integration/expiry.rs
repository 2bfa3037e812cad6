//! Expiry: the EXPIRE family, TTL reporting, lazy and active expiry.
//! Time is driven with `DEBUG ADVANCE-CLOCK`, never by sleeping.

use crate::common::{err, run, TestServer};

#[test]
fn expire_family_and_ttl_reporting() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(run::<i64>(&mut c, &["TTL", "k"]).unwrap(), -2);
    assert_eq!(run::<i64>(&mut c, &["EXPIRE", "k", "10"]).unwrap(), 0);
    let _: () = run(&mut c, &["SET", "k", "v"]).unwrap();
    assert_eq!(run::<i64>(&mut c, &["TTL", "k"]).unwrap(), -1);
    assert_eq!(run::<i64>(&mut c, &["EXPIRETIME", "k"]).unwrap(), -1);
    assert_eq!(run::<i64>(&mut c, &["EXPIRE", "k", "10"]).unwrap(), 1);
    assert_eq!(run::<i64>(&mut c, &["TTL", "k"]).unwrap(), 10);
    assert_eq!(run::<i64>(&mut c, &["PEXPIRE", "k", "20000"]).unwrap(), 1);
    assert_eq!(run::<i64>(&mut c, &["TTL", "k"]).unwrap(), 20);
    assert_eq!(
        run::<i64>(&mut c, &["EXPIREAT", "k", "4000000000"]).unwrap(),
        1
    );
    assert_eq!(
        run::<i64>(&mut c, &["EXPIRETIME", "k"]).unwrap(),
        4_000_000_000
    );
    assert_eq!(
        run::<i64>(&mut c, &["PEXPIREAT", "k", "4000000000500"]).unwrap(),
        1
    );
    assert_eq!(
        run::<i64>(&mut c, &["PEXPIRETIME", "k"]).unwrap(),
        4_000_000_000_500
    );
    assert_eq!(run::<i64>(&mut c, &["PERSIST", "k"]).unwrap(), 1);
    assert_eq!(run::<i64>(&mut c, &["PERSIST", "k"]).unwrap(), 0);
    assert_eq!(run::<i64>(&mut c, &["TTL", "k"]).unwrap(), -1);
    // A deadline in the past deletes at once.
    assert_eq!(run::<i64>(&mut c, &["EXPIRE", "k", "-1"]).unwrap(), 1);
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "k"]).unwrap(), 0);
    assert_eq!(
        err(&mut c, &["EXPIRE", "k", "x"]),
        "ERR value is not an integer or out of range"
    );
    assert_eq!(
        err(&mut c, &["EXPIRE", "k", "9223372036854775807"]),
        "ERR invalid expire time in 'expire' command"
    );
}

#[test]
fn expire_conditions() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "k", "v"]).unwrap();
    assert_eq!(
        run::<i64>(&mut c, &["EXPIRE", "k", "100", "XX"]).unwrap(),
        0
    );
    assert_eq!(
        run::<i64>(&mut c, &["EXPIRE", "k", "100", "GT"]).unwrap(),
        0,
        "no TTL counts as infinite"
    );
    assert_eq!(
        run::<i64>(&mut c, &["EXPIRE", "k", "100", "NX"]).unwrap(),
        1
    );
    assert_eq!(
        run::<i64>(&mut c, &["EXPIRE", "k", "200", "NX"]).unwrap(),
        0
    );
    assert_eq!(run::<i64>(&mut c, &["EXPIRE", "k", "50", "GT"]).unwrap(), 0);
    assert_eq!(
        run::<i64>(&mut c, &["EXPIRE", "k", "200", "GT"]).unwrap(),
        1
    );
    assert_eq!(
        run::<i64>(&mut c, &["EXPIRE", "k", "300", "LT"]).unwrap(),
        0
    );
    assert_eq!(
        run::<i64>(&mut c, &["EXPIRE", "k", "150", "LT"]).unwrap(),
        1
    );
    assert_eq!(
        run::<i64>(&mut c, &["EXPIRE", "k", "150", "XX"]).unwrap(),
        1
    );
    assert_eq!(run::<i64>(&mut c, &["TTL", "k"]).unwrap(), 150);
    assert_eq!(
        err(&mut c, &["EXPIRE", "k", "1", "NX", "XX"]),
        "ERR NX and XX, GT or LT options at the same time are not compatible"
    );
    assert_eq!(
        err(&mut c, &["EXPIRE", "k", "1", "GT", "LT"]),
        "ERR GT and LT options at the same time are not compatible"
    );
    assert_eq!(
        err(&mut c, &["EXPIRE", "k", "1", "FOO"]),
        "ERR Unsupported option FOO"
    );
}

#[test]
fn expired_keys_are_never_returned() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "k", "v", "PX", "1700"]).unwrap();
    let _: () = run(&mut c, &["SET", "stay", "v"]).unwrap();
    assert_eq!(
        run::<i64>(&mut c, &["TTL", "k"]).unwrap(),
        2,
        "TTL rounds to the nearest second"
    );
    s.advance(&mut c, 1_000);
    assert_eq!(run::<String>(&mut c, &["GET", "k"]).unwrap(), "v");
    s.advance(&mut c, 700);
    assert_eq!(run::<Option<String>>(&mut c, &["GET", "k"]).unwrap(), None);
    assert_eq!(run::<i64>(&mut c, &["TTL", "k"]).unwrap(), -2);
    assert_eq!(
        run::<Vec<String>>(&mut c, &["KEYS", "*"]).unwrap(),
        ["stay"]
    );
    let info: String = run(&mut c, &["INFO", "stats"]).unwrap();
    assert!(info.contains("expired_keys:1\r\n"), "{info}");
}

#[test]
fn active_expiry_removes_keys_nobody_reads() {
    let s = TestServer::start();
    let mut c = s.client();
    for i in 0..1000 {
        let _: () = run(&mut c, &["SET", &format!("k{i}"), "v", "PX", "1000"]).unwrap();
    }
    for i in 0..10 {
        let _: () = run(&mut c, &["SET", &format!("durable{i}"), "v"]).unwrap();
    }
    s.advance(&mut c, 2_000);
    // The server's own timer may already have removed some; a forced full
    // cycle removes the rest without any key being read.
    let _: i64 = run(&mut c, &["DEBUG", "EXPIRE-CYCLE"]).unwrap();
    assert_eq!(run::<i64>(&mut c, &["DBSIZE"]).unwrap(), 10);
    let stats: String = run(&mut c, &["INFO", "stats"]).unwrap();
    assert!(stats.contains("expired_keys:1000\r\n"), "{stats}");
    assert!(
        stats.contains("keyspace_misses:0\r\n"),
        "no key was read: {stats}"
    );
    let info: String = run(&mut c, &["INFO", "keyspace"]).unwrap();
    assert!(info.contains("db0:keys=10,expires=0,avg_ttl=0"), "{info}");
}

/// Redis's `GETEX PXAT option` test: a deadline the client computes from
/// its own wall clock leaves at most the TTL it meant, since the server's
/// clock is never behind the wall clock the client read first.
#[test]
fn absolute_deadlines_follow_the_wall_clock() {
    let s = TestServer::start_on(1, &[]);
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "foo", "bar"]).unwrap();
    for _ in 0..300 {
        let wall_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970")
            .as_millis();
        let at = (wall_ms + 10_000).to_string();
        let _: String = run(&mut c, &["GETEX", "foo", "PXAT", &at]).unwrap();
        let pttl: i64 = run(&mut c, &["PTTL", "foo"]).unwrap();
        assert!((5_000..=10_000).contains(&pttl), "PTTL {pttl}");
    }
}
