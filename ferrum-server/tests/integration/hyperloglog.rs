//! HyperLogLog: PFADD, PFCOUNT, PFMERGE over strings in Redis's own HLL
//! layout, so the bytes interchange with redis-server 7.0.15.

use crate::common::{err, run, TestServer};

/// `GET` of `PFADD h a b c` on redis-server 7.0.15 (sparse, cache stale).
const REDIS_ABC: &[u8] =
    b"HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80`\xf3\x80P\xb1\x84K\xfb\x80BZ";

#[test]
fn pfadd_builds_redis_identical_sparse_bytes_and_caches_the_count() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(
        run::<i64>(&mut c, &["PFADD", "h", "a", "b", "c"]).unwrap(),
        1
    );
    assert_eq!(run::<Vec<u8>>(&mut c, &["GET", "h"]).unwrap(), REDIS_ABC);
    assert_eq!(run::<i64>(&mut c, &["PFADD", "h", "a", "b"]).unwrap(), 0);
    assert_eq!(run::<i64>(&mut c, &["PFCOUNT", "h"]).unwrap(), 3);
    // The count is cached in the header: bytes 8..16, little-endian.
    let cached: Vec<u8> = run(&mut c, &["GET", "h"]).unwrap();
    assert_eq!(&cached[8..16], &[3, 0, 0, 0, 0, 0, 0, 0]);
    // PFADD with no elements creates an empty HLL and reports 1.
    assert_eq!(run::<i64>(&mut c, &["PFADD", "e"]).unwrap(), 1);
    assert_eq!(run::<i64>(&mut c, &["PFCOUNT", "e"]).unwrap(), 0);
    assert_eq!(run::<i64>(&mut c, &["PFCOUNT", "missing"]).unwrap(), 0);
}

#[test]
fn a_redis_made_hll_string_is_read_and_extended() {
    let s = TestServer::start();
    let mut c = s.client();
    redis::cmd("SET")
        .arg("r")
        .arg(REDIS_ABC)
        .query::<()>(&mut c)
        .unwrap();
    assert_eq!(run::<i64>(&mut c, &["PFCOUNT", "r"]).unwrap(), 3);
    assert_eq!(run::<i64>(&mut c, &["PFADD", "r", "d"]).unwrap(), 1);
    assert_eq!(run::<i64>(&mut c, &["PFCOUNT", "r"]).unwrap(), 4);
}

#[test]
fn large_sets_turn_dense_and_estimates_stay_close() {
    let s = TestServer::start();
    let mut c = s.client();
    for chunk in 0..50 {
        let mut cmd = redis::cmd("PFADD");
        cmd.arg("big");
        for i in 0..200 {
            cmd.arg(format!("e{}", chunk * 200 + i));
        }
        cmd.query::<i64>(&mut c).unwrap();
    }
    let bytes: Vec<u8> = run(&mut c, &["GET", "big"]).unwrap();
    assert_eq!(bytes.len(), 12304, "dense size");
    assert_eq!(bytes[4], 0, "dense encoding byte");
    let n: i64 = run(&mut c, &["PFCOUNT", "big"]).unwrap();
    assert!((9_500..10_500).contains(&n), "{n}");
}

#[test]
fn pfmerge_and_multi_key_pfcount_count_the_union() {
    let s = TestServer::start();
    let mut c = s.client();
    run::<i64>(&mut c, &["PFADD", "h1", "a", "b", "c"]).unwrap();
    run::<i64>(&mut c, &["PFADD", "h2", "b", "c", "d"]).unwrap();
    run::<i64>(&mut c, &["PFADD", "h3", "c", "d", "e"]).unwrap();
    assert_eq!(
        run::<i64>(&mut c, &["PFCOUNT", "h1", "h2", "h3", "none"]).unwrap(),
        5
    );
    assert_eq!(
        run::<String>(&mut c, &["PFMERGE", "m", "h1", "h2", "h3"]).unwrap(),
        "OK"
    );
    assert_eq!(run::<i64>(&mut c, &["PFCOUNT", "m"]).unwrap(), 5);
    // The destination is one of the inputs.
    assert_eq!(
        run::<String>(&mut c, &["PFMERGE", "h1", "h3"]).unwrap(),
        "OK"
    );
    assert_eq!(run::<i64>(&mut c, &["PFCOUNT", "h1"]).unwrap(), 5);
}

#[test]
fn wrong_types_and_corrupt_hlls_get_redis_errors() {
    const NOT_HLL: &str = "WRONGTYPE Key is not a valid HyperLogLog string value.";
    const CORRUPT: &str = "INVALIDOBJ Corrupted HLL object detected";
    let s = TestServer::start();
    let mut c = s.client();
    run::<()>(&mut c, &["SET", "s", "bar"]).unwrap();
    assert_eq!(err(&mut c, &["PFADD", "s", "x"]), NOT_HLL);
    assert_eq!(err(&mut c, &["PFCOUNT", "s"]), NOT_HLL);
    assert_eq!(err(&mut c, &["PFMERGE", "d", "s"]), NOT_HLL);
    assert_eq!(err(&mut c, &["PFMERGE", "s", "d"]), NOT_HLL);
    run::<i64>(&mut c, &["LPUSH", "l", "x"]).unwrap();
    assert!(err(&mut c, &["PFCOUNT", "l"]).starts_with("WRONGTYPE Operation against"));
    run::<i64>(&mut c, &["PFADD", "h", "a", "b", "c"]).unwrap();
    run::<i64>(&mut c, &["APPEND", "h", "hello"]).unwrap();
    assert_eq!(err(&mut c, &["PFCOUNT", "h"]), CORRUPT);
    run::<i64>(&mut c, &["SETRANGE", "h", "4", "\x00"]).unwrap();
    assert_eq!(err(&mut c, &["PFCOUNT", "h"]), NOT_HLL);
    assert_eq!(
        err(&mut c, &["PFADD"]),
        "ERR wrong number of arguments for 'pfadd' command"
    );
    // Damage anywhere in the body never takes the server down.
    for pos in [16, 17, 18, 20, 25] {
        run::<()>(&mut c, &["DEL", "f"]).unwrap();
        run::<i64>(&mut c, &["PFADD", "f", "1", "2", "3", "4", "5"]).unwrap();
        run::<i64>(&mut c, &["SETRANGE", "f", &pos.to_string(), "\u{7f}"]).unwrap();
        let _ = redis::cmd("PFCOUNT").arg("f").query::<i64>(&mut c);
        let _ = redis::cmd("PFADD").arg("f").arg("q").query::<i64>(&mut c);
    }
    assert_eq!(run::<String>(&mut c, &["PING"]).unwrap(), "PONG");
}

#[test]
fn pfdebug_shows_the_registers_and_the_encoding_as_redis_does() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: i64 = run(&mut c, &["PFADD", "h", "a", "b", "c"]).unwrap();
    let pfdebug = |c: &mut redis::Connection, sub: &str, key: &str| {
        run::<redis::Value>(c, &["PFDEBUG", sub, key])
    };
    let encoding: String = run(&mut c, &["PFDEBUG", "ENCODING", "h"]).unwrap();
    assert_eq!(encoding, "sparse");
    // Three runs of one register each, between runs of zeros.
    let decoded: String = run(&mut c, &["PFDEBUG", "DECODE", "h"]).unwrap();
    assert_eq!(decoded.matches("v:").count(), 3, "{decoded}");
    assert!(
        decoded.starts_with('Z') || decoded.starts_with('z'),
        "{decoded}"
    );
    let regs: Vec<i64> = run(&mut c, &["PFDEBUG", "GETREG", "h"]).unwrap();
    assert_eq!(regs.len(), 16384);
    assert_eq!(regs.iter().filter(|&&r| r > 0).count(), 3);
    // GETREG left it dense, as in Redis; TODENSE then has nothing to do.
    let encoding: String = run(&mut c, &["PFDEBUG", "ENCODING", "h"]).unwrap();
    assert_eq!(encoding, "dense");
    assert_eq!(run::<i64>(&mut c, &["PFDEBUG", "TODENSE", "h"]).unwrap(), 0);
    assert_eq!(run::<i64>(&mut c, &["PFCOUNT", "h"]).unwrap(), 3);
    let _: i64 = run(&mut c, &["PFADD", "h2", "x"]).unwrap();
    assert_eq!(
        run::<i64>(&mut c, &["PFDEBUG", "TODENSE", "h2"]).unwrap(),
        1
    );
    for (sub, key, error) in [
        ("DECODE", "h", "ERR HLL encoding is not sparse"),
        ("ENCODING", "nokey", "ERR The specified key does not exist"),
        ("BOGUS", "h", "ERR Unknown PFDEBUG subcommand 'BOGUS'"),
    ] {
        assert_eq!(err(&mut c, &["PFDEBUG", sub, key]), error, "{sub}");
    }
    let _: () = run(&mut c, &["SET", "str", "x"]).unwrap();
    let e = pfdebug(&mut c, "ENCODING", "str").unwrap_err();
    assert_eq!(e.code(), Some("WRONGTYPE"), "{e}");
}
