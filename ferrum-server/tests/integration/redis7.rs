//! Redis 7.0 commands the suite's data-type files need: MEMORY, the sorted
//! set algebra (ZUNION, ZINTER, ZDIFF, ZDIFFSTORE, ZINTERCARD,
//! ZRANGESTORE), the multi-key pops (LMPOP, BLMPOP, ZMPOP, BZMPOP) and
//! SORT / SORT_RO, DUMP / RESTORE. Replies and error texts as redis-server 7.0.15 gives
//! them.

use crate::blocking::wait_blocked;
use crate::common::{err, resp, run, TestServer};
use crate::migrate::RedisServer;

#[test]
fn memory_usage_follows_the_value_and_subcommands_answer() {
    let s = TestServer::start();
    let mut c = s.client();
    run::<()>(&mut c, &["SET", "small", "x"]).unwrap();
    let big = "y".repeat(10_000);
    run::<()>(&mut c, &["SET", "big", &big]).unwrap();
    let small: i64 = run(&mut c, &["MEMORY", "USAGE", "small"]).unwrap();
    let large: i64 = run(&mut c, &["MEMORY", "USAGE", "big", "SAMPLES", "0"]).unwrap();
    assert!(small > 0);
    assert!(large >= 10_000 && large > small, "{large} vs {small}");
    for i in 0..200 {
        run::<i64>(&mut c, &["HSET", "h", &format!("f{i}"), "v"]).unwrap();
    }
    let h: i64 = run(&mut c, &["MEMORY", "USAGE", "h"]).unwrap();
    assert!(h > 200 * 2, "{h}");
    assert_eq!(
        run::<Option<i64>>(&mut c, &["MEMORY", "USAGE", "missing"]).unwrap(),
        None
    );
    assert_eq!(
        err(&mut c, &["MEMORY", "USAGE", "small", "SAMPLES", "-1"]),
        "ERR syntax error"
    );
    assert_eq!(
        err(&mut c, &["MEMORY", "USAGE", "small", "SAMPLES", "x"]),
        "ERR value is not an integer or out of range"
    );
    assert_eq!(
        err(&mut c, &["MEMORY", "USAGE"]),
        "ERR wrong number of arguments for 'memory|usage' command"
    );
    assert_eq!(
        err(&mut c, &["MEMORY", "FOO"]),
        "ERR unknown subcommand 'FOO'. Try MEMORY HELP."
    );
    assert_eq!(run::<String>(&mut c, &["MEMORY", "PURGE"]).unwrap(), "OK");
    let help: Vec<String> = run(&mut c, &["MEMORY", "HELP"]).unwrap();
    assert!(help[0].starts_with("MEMORY <subcommand>"));
    let stats: Vec<redis::Value> = run(&mut c, &["MEMORY", "STATS"]).unwrap();
    let keys = stats
        .chunks(2)
        .find(|p| p[0] == redis::Value::BulkString(b"keys.count".to_vec()))
        .map(|p| p[1].clone());
    assert_eq!(keys, Some(redis::Value::Int(3)));
    let doctor: String = run(&mut c, &["MEMORY", "DOCTOR"]).unwrap();
    assert!(doctor.starts_with("Hi Sam"));
}

#[test]
fn zset_algebra_replies_and_stores() {
    let s = TestServer::start();
    let mut c = s.client();
    run::<i64>(&mut c, &["ZADD", "a", "1", "x", "2", "y", "3", "z"]).unwrap();
    run::<i64>(&mut c, &["ZADD", "b", "10", "y", "20", "z", "30", "w"]).unwrap();
    run::<i64>(&mut c, &["SADD", "s", "x", "w"]).unwrap();
    let v: Vec<String> = run(&mut c, &["ZUNION", "2", "a", "b", "WITHSCORES"]).unwrap();
    assert_eq!(v, ["x", "1", "y", "12", "z", "23", "w", "30"]);
    let v: Vec<String> = run(
        &mut c,
        &[
            "ZINTER",
            "2",
            "a",
            "b",
            "WEIGHTS",
            "2",
            "1",
            "AGGREGATE",
            "MAX",
            "WITHSCORES",
        ],
    )
    .unwrap();
    assert_eq!(v, ["y", "10", "z", "20"]);
    let v: Vec<String> = run(&mut c, &["ZDIFF", "2", "a", "b"]).unwrap();
    assert_eq!(v, ["x"]);
    let v: Vec<String> = run(&mut c, &["ZDIFF", "2", "b", "s", "WITHSCORES"]).unwrap();
    assert_eq!(v, ["y", "10", "z", "20"]);
    assert_eq!(
        run::<i64>(&mut c, &["ZDIFFSTORE", "d", "2", "a", "b"]).unwrap(),
        1
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["ZRANGE", "d", "0", "-1"]).unwrap(),
        ["x"]
    );
    assert_eq!(
        run::<i64>(&mut c, &["ZDIFFSTORE", "d", "1", "missing"]).unwrap(),
        0
    );
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "d"]).unwrap(), 0);
    assert_eq!(
        run::<i64>(&mut c, &["ZINTERCARD", "2", "a", "b"]).unwrap(),
        2
    );
    assert_eq!(
        run::<i64>(&mut c, &["ZINTERCARD", "2", "a", "b", "LIMIT", "1"]).unwrap(),
        1
    );
    assert_eq!(
        err(&mut c, &["ZUNION", "0", "a"]),
        "ERR at least 1 input key is needed for 'zunion' command"
    );
    assert_eq!(err(&mut c, &["ZUNION", "3", "a"]), "ERR syntax error");
    assert_eq!(
        err(&mut c, &["ZDIFF", "1", "a", "WEIGHTS", "1"]),
        "ERR syntax error"
    );
    assert_eq!(
        err(&mut c, &["ZINTERCARD", "1", "a", "LIMIT", "-1"]),
        "ERR LIMIT can't be negative"
    );
    run::<()>(&mut c, &["SET", "str", "v"]).unwrap();
    assert!(err(&mut c, &["ZUNION", "2", "a", "str"]).starts_with("WRONGTYPE"));
    // RESP3 nests member-score pairs.
    let mut r = s.raw();
    r.hello3();
    r.roundtrip(
        &resp(&[b"ZINTER", b"2", b"a", b"b", b"WITHSCORES"]),
        b"*2\r\n*2\r\n$1\r\ny\r\n,12\r\n*2\r\n$1\r\nz\r\n,23\r\n",
    );
}

#[test]
fn zrangestore_stores_a_range_or_deletes() {
    let s = TestServer::start();
    let mut c = s.client();
    run::<i64>(
        &mut c,
        &["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"],
    )
    .unwrap();
    assert_eq!(
        run::<i64>(
            &mut c,
            &[
                "ZRANGESTORE",
                "d",
                "z",
                "5",
                "0",
                "BYSCORE",
                "REV",
                "LIMIT",
                "0",
                "2"
            ]
        )
        .unwrap(),
        2
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["ZRANGE", "d", "0", "-1", "WITHSCORES"]).unwrap(),
        ["c", "3", "d", "4"]
    );
    assert_eq!(
        run::<i64>(&mut c, &["ZRANGESTORE", "d", "z", "[f", "[g", "BYLEX"]).unwrap(),
        0
    );
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "d"]).unwrap(), 0);
    assert_eq!(
        err(&mut c, &["ZRANGESTORE", "d", "z", "0", "-1", "WITHSCORES"]),
        "ERR syntax error"
    );
    run::<()>(&mut c, &["SET", "str", "v"]).unwrap();
    run::<i64>(&mut c, &["ZADD", "d", "1", "keep"]).unwrap();
    assert!(err(&mut c, &["ZRANGESTORE", "d", "str", "0", "-1"]).starts_with("WRONGTYPE"));
    assert_eq!(
        run::<Vec<String>>(&mut c, &["ZRANGE", "d", "0", "-1"]).unwrap(),
        ["keep"]
    );
}

#[test]
fn lmpop_and_zmpop_pop_from_the_first_non_empty_key() {
    let s = TestServer::start();
    let mut c = s.client();
    run::<i64>(&mut c, &["RPUSH", "l2", "a", "b", "c"]).unwrap();
    run::<i64>(&mut c, &["ZADD", "z2", "1", "m", "2", "n", "3", "o"]).unwrap();
    let mut r = s.raw();
    r.roundtrip(
        &resp(&[b"LMPOP", b"2", b"l1", b"l2", b"RIGHT", b"COUNT", b"2"]),
        b"*2\r\n$2\r\nl2\r\n*2\r\n$1\r\nc\r\n$1\r\nb\r\n",
    );
    r.roundtrip(
        &resp(&[b"ZMPOP", b"2", b"z1", b"z2", b"MAX", b"COUNT", b"5"]),
        b"*2\r\n$2\r\nz2\r\n*3\r\n*2\r\n$1\r\no\r\n$1\r\n3\r\n*2\r\n$1\r\nn\r\n$1\r\n2\r\n*2\r\n$1\r\nm\r\n$1\r\n1\r\n",
    );
    r.roundtrip(&resp(&[b"ZMPOP", b"1", b"z2", b"MIN"]), b"*-1\r\n");
    r.roundtrip(&resp(&[b"LMPOP", b"1", b"nolist", b"LEFT"]), b"*-1\r\n");
    assert_eq!(
        err(&mut c, &["LMPOP", "0", "l2", "LEFT"]),
        "ERR numkeys should be greater than 0"
    );
    assert_eq!(err(&mut c, &["LMPOP", "1", "l2", "UP"]), "ERR syntax error");
    assert_eq!(
        err(&mut c, &["ZMPOP", "2", "z2", "MIN"]),
        "ERR syntax error"
    );
    assert_eq!(
        err(&mut c, &["ZMPOP", "1", "z2", "MIN", "COUNT", "0"]),
        "ERR count should be greater than 0"
    );
    assert_eq!(
        err(&mut c, &["LPOP", "l2", "1", "2"]),
        "ERR wrong number of arguments for 'lpop' command"
    );
    run::<()>(&mut c, &["SET", "str", "v"]).unwrap();
    assert!(err(&mut c, &["LMPOP", "1", "str", "LEFT"]).starts_with("WRONGTYPE"));
}

#[test]
fn blmpop_and_bzmpop_wait_for_a_push() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut lb = s.raw();
    lb.send(&resp(&[
        b"BLMPOP", b"0", b"2", b"l1", b"l2", b"LEFT", b"COUNT", b"3",
    ]));
    wait_blocked(&mut c, 1);
    run::<i64>(&mut c, &["RPUSH", "l2", "a", "b"]).unwrap();
    let want = b"*2\r\n$2\r\nl2\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n";
    assert_eq!(lb.read_exact_len(want.len()), want);
    let mut zb = s.raw();
    zb.send(&resp(&[b"BZMPOP", b"0", b"1", b"z", b"MIN"]));
    wait_blocked(&mut c, 1);
    run::<i64>(&mut c, &["ZADD", "z", "5", "m", "1", "k"]).unwrap();
    let want = b"*2\r\n$1\r\nz\r\n*1\r\n*2\r\n$1\r\nk\r\n$1\r\n1\r\n";
    assert_eq!(zb.read_exact_len(want.len()), want);
    // A short timeout replies with a null array.
    zb.roundtrip(
        &resp(&[b"BZMPOP", b"0.01", b"1", b"none", b"MIN"]),
        b"*-1\r\n",
    );
    assert_eq!(
        err(&mut c, &["BZMPOP", "-1", "1", "z", "MIN"]),
        "ERR timeout is negative"
    );
}

#[test]
fn sort_orders_by_value_pattern_and_stores() {
    let s = TestServer::start();
    let mut c = s.client();
    run::<i64>(&mut c, &["RPUSH", "l", "3", "1", "10", "2"]).unwrap();
    let v: Vec<String> = run(&mut c, &["SORT", "l"]).unwrap();
    assert_eq!(v, ["1", "2", "3", "10"]);
    let v: Vec<String> = run(&mut c, &["SORT", "l", "ALPHA", "DESC", "LIMIT", "0", "2"]).unwrap();
    assert_eq!(v, ["3", "2"]);
    for (id, w, name) in [("1", "30", "one"), ("2", "10", "two"), ("3", "20", "three")] {
        run::<()>(&mut c, &["SET", &format!("w_{id}"), w]).unwrap();
        run::<i64>(&mut c, &["HSET", &format!("o_{id}"), "name", name]).unwrap();
    }
    let v: Vec<Option<String>> = run(
        &mut c,
        &["SORT", "l", "BY", "w_*", "GET", "#", "GET", "o_*->name"],
    )
    .unwrap();
    // No w_10: a missing weight counts 0, so "10" sorts first.
    let want: Vec<Option<String>> = ["10", "", "2", "two", "3", "three", "1", "one"]
        .iter()
        .map(|s| (!s.is_empty()).then(|| s.to_string()))
        .collect();
    assert_eq!(v, want);
    // BY a pattern without `*` keeps the list's order; DESC reverses it.
    let v: Vec<String> = run(&mut c, &["SORT", "l", "BY", "nosort", "DESC"]).unwrap();
    assert_eq!(v, ["2", "10", "1", "3"]);
    assert_eq!(
        run::<i64>(&mut c, &["SORT", "l", "STORE", "dst"]).unwrap(),
        4
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["LRANGE", "dst", "0", "-1"]).unwrap(),
        ["1", "2", "3", "10"]
    );
    assert_eq!(
        run::<i64>(&mut c, &["SORT", "missing", "STORE", "dst"]).unwrap(),
        0
    );
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "dst"]).unwrap(), 0);
    run::<i64>(&mut c, &["SADD", "bad", "1", "x"]).unwrap();
    assert_eq!(
        err(&mut c, &["SORT", "bad"]),
        "ERR One or more scores can't be converted into double"
    );
    assert_eq!(
        err(&mut c, &["SORT_RO", "l", "STORE", "d"]),
        "ERR syntax error"
    );
    let v: Vec<String> = run(&mut c, &["SORT_RO", "bad", "ALPHA"]).unwrap();
    assert_eq!(v, ["1", "x"]);
    run::<()>(&mut c, &["SET", "str", "v"]).unwrap();
    assert!(err(&mut c, &["SORT", "str"]).starts_with("WRONGTYPE"));
}

#[test]
fn sort_store_wakes_a_blocked_pop() {
    let s = TestServer::start();
    let mut c = s.client();
    run::<i64>(&mut c, &["RPUSH", "src", "b", "a"]).unwrap();
    let mut b = s.raw();
    b.send(&resp(&[b"BLPOP", b"dst", b"0"]));
    wait_blocked(&mut c, 1);
    assert_eq!(
        run::<i64>(&mut c, &["SORT", "src", "ALPHA", "STORE", "dst"]).unwrap(),
        2
    );
    let want = b"*2\r\n$3\r\ndst\r\n$1\r\na\r\n";
    assert_eq!(b.read_exact_len(want.len()), want);
}

#[test]
fn dump_and_restore_round_trip_every_type_with_options() {
    let s = TestServer::start();
    let mut c = s.client();
    run::<()>(&mut c, &["SET", "s", "hello"]).unwrap();
    run::<i64>(&mut c, &["RPUSH", "l", "a", "1", "b"]).unwrap();
    run::<i64>(&mut c, &["SADD", "st", "1", "2", "x"]).unwrap();
    run::<i64>(&mut c, &["ZADD", "z", "1.5", "a", "-inf", "b"]).unwrap();
    run::<i64>(&mut c, &["HSET", "h", "f", "v", "n", "123"]).unwrap();
    for key in ["s", "l", "st", "z", "h"] {
        let payload: Vec<u8> = run(&mut c, &["DUMP", key]).unwrap();
        let mut cmd = redis::cmd("RESTORE");
        cmd.arg(format!("{key}-copy")).arg(0).arg(&payload[..]);
        let ok: String = cmd.query(&mut c).unwrap();
        assert_eq!(ok, "OK");
        let again: Vec<u8> = run(&mut c, &["DUMP", &format!("{key}-copy")]).unwrap();
        assert_eq!(again, payload, "{key}");
        // Without REPLACE an existing key is refused; with it, replaced.
        let mut cmd = redis::cmd("RESTORE");
        cmd.arg(key).arg(0).arg(&payload[..]);
        let e = cmd.query::<String>(&mut c).unwrap_err();
        assert_eq!(e.code(), Some("BUSYKEY"));
        let mut cmd = redis::cmd("RESTORE");
        cmd.arg(key)
            .arg(5000)
            .arg(&payload[..])
            .arg("REPLACE")
            .arg("IDLETIME")
            .arg(1000);
        assert_eq!(cmd.query::<String>(&mut c).unwrap(), "OK");
        let ttl: i64 = run(&mut c, &["PTTL", key]).unwrap();
        assert!(ttl > 0 && ttl <= 5000, "{ttl}");
        let idle: i64 = run(&mut c, &["OBJECT", "IDLETIME", key]).unwrap();
        assert!(idle >= 1000, "{idle}");
    }
    assert_eq!(
        run::<Vec<String>>(&mut c, &["LRANGE", "l-copy", "0", "-1"]).unwrap(),
        ["a", "1", "b"]
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["ZRANGE", "z-copy", "0", "-1", "WITHSCORES"]).unwrap(),
        ["b", "-inf", "a", "1.5"]
    );
    assert_eq!(
        run::<Option<Vec<u8>>>(&mut c, &["DUMP", "missing"]).unwrap(),
        None
    );
    assert_eq!(
        err(&mut c, &["RESTORE", "k", "0", "garbage"]),
        "ERR DUMP payload version or checksum are wrong"
    );
    assert_eq!(
        err(&mut c, &["RESTORE", "k", "-1", "garbage"]),
        "ERR Invalid TTL value, must be >= 0"
    );
    assert_eq!(
        err(&mut c, &["RESTORE", "k", "0", "x", "FOO"]),
        "ERR syntax error"
    );
    // A Redis 7.0.15 dump (SET foo bar) restores, and an absolute TTL in
    // the past leaves no key.
    let redis_dump = b"\x00\x03bar\n\x00\xe6\xbeI`\xeef\xfd\x17";
    let mut cmd = redis::cmd("RESTORE");
    cmd.arg("foo").arg(0).arg(&redis_dump[..]);
    assert_eq!(cmd.query::<String>(&mut c).unwrap(), "OK");
    assert_eq!(run::<String>(&mut c, &["GET", "foo"]).unwrap(), "bar");
    let mut cmd = redis::cmd("RESTORE");
    cmd.arg("past").arg(1000).arg(&redis_dump[..]).arg("ABSTTL");
    assert_eq!(cmd.query::<String>(&mut c).unwrap(), "OK");
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "past"]).unwrap(), 0);
}

#[test]
fn a_blocked_pop_stays_blocked_when_its_key_turns_into_another_type() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut b = s.raw();
    b.send(&resp(&[b"BLPOP", b"k", b"0"]));
    wait_blocked(&mut c, 1);
    let mut tx = redis::pipe();
    tx.atomic()
        .cmd("LPUSH")
        .arg("k")
        .arg("a")
        .cmd("DEL")
        .arg("k")
        .cmd("SET")
        .arg("k")
        .arg("foo");
    let _: redis::Value = tx.query(&mut c).unwrap();
    // Still blocked: a string does not serve a list pop.
    wait_blocked(&mut c, 1);
    run::<i64>(&mut c, &["DEL", "k"]).unwrap();
    run::<i64>(&mut c, &["LPUSH", "k", "b"]).unwrap();
    let want = b"*2\r\n$1\r\nk\r\n$1\r\nb\r\n";
    assert_eq!(b.read_exact_len(want.len()), want);
}

#[test]
fn smove_of_a_member_the_destination_has_keeps_a_watch() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut other = s.client();
    run::<i64>(&mut c, &["SADD", "src", "a", "b"]).unwrap();
    run::<i64>(&mut c, &["SADD", "dst", "a"]).unwrap();
    run::<()>(&mut c, &["WATCH", "dst"]).unwrap();
    assert_eq!(
        run::<i64>(&mut other, &["SMOVE", "src", "dst", "a"]).unwrap(),
        1
    );
    run::<()>(&mut c, &["MULTI"]).unwrap();
    run::<String>(&mut c, &["SADD", "dst", "c"]).unwrap();
    let exec: Option<Vec<i64>> = run(&mut c, &["EXEC"]).unwrap();
    assert_eq!(exec, Some(vec![1]));
    assert_eq!(run::<i64>(&mut c, &["SCARD", "dst"]).unwrap(), 2);
    assert_eq!(
        err(&mut c, &["SINTERCARD", "x", "dst"]),
        "ERR numkeys should be greater than 0"
    );
    assert_eq!(
        err(&mut c, &["SINTERCARD", "1", "dst", "LIMIT", "x"]),
        "ERR LIMIT can't be negative"
    );
}

#[test]
fn a_move_from_a_missing_list_ignores_the_destination_type() {
    let s = TestServer::start();
    let mut c = s.client();
    run::<()>(&mut c, &["SET", "dst", "x"]).unwrap();
    assert_eq!(
        run::<Option<String>>(&mut c, &["LMOVE", "nosrc", "dst", "LEFT", "LEFT"]).unwrap(),
        None
    );
    // Blocking, it waits; a push then fails it on the destination and the
    // element stays where it was.
    let mut b = s.raw();
    b.send(&resp(&[b"BRPOPLPUSH", b"src", b"dst", b"0"]));
    wait_blocked(&mut c, 1);
    run::<i64>(&mut c, &["RPUSH", "src", "foo"]).unwrap();
    let want = b"-WRONGTYPE";
    assert_eq!(b.read_exact_len(want.len()), want);
    assert_eq!(
        run::<Vec<String>>(&mut c, &["LRANGE", "src", "0", "-1"]).unwrap(),
        ["foo"]
    );
}

/// unit/type/stream-cgroups.tcl's "Loading from legacy (Redis <= v6.2.x,
/// rdb_ver < 10) persistence": a stream DUMPed by Redis 5 (RDB type 15)
/// after XADD x 1-0 .. 6-0 (data a .. f), XDEL x 3-0, XGROUP CREATE x g1 0
/// and g2 0, XREADGROUP GROUP g1 c11 COUNT 4 STREAMS x >, XTRIM x MAXLEN 2.
const REDIS5_STREAM: &[u8] =
    b"\x0F\x01\x10\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\xC3\
      \x40\x4A\x40\x57\x16\x57\x00\x00\x00\x23\x00\x02\x01\x04\x01\x01\x01\x84\x64\x61\
      \x74\x61\x05\x00\x01\x03\x01\x00\x20\x01\x03\x81\x61\x02\x04\x20\x0A\x00\x01\x40\
      \x0A\x00\x62\x60\x0A\x00\x02\x40\x0A\x00\x63\x60\x0A\x40\x22\x01\x81\x64\x20\x0A\
      \x40\x39\x20\x0A\x00\x65\x60\x0A\x00\x05\x40\x0A\x00\x66\x20\x0A\x00\xFF\x02\x06\
      \x00\x02\x02\x67\x31\x05\x00\x04\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\
      \x00\x00\x00\x00\x3E\xF7\x83\x43\x7A\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\
      \x02\x00\x00\x00\x00\x00\x00\x00\x00\x3E\xF7\x83\x43\x7A\x01\x00\x00\x01\x00\x00\
      \x00\x00\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x3E\xF7\x83\x43\x7A\x01\
      \x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x00\x3E\
      \xF7\x83\x43\x7A\x01\x00\x00\x01\x01\x03\x63\x31\x31\x3E\xF7\x83\x43\x7A\x01\x00\
      \x00\x04\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\
      \x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\
      \x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\
      \x00\x00\x00\x00\x00\x00\x02\x67\x32\x00\x00\x00\x00\x09\x00\x3D\x52\xEF\x68\x67\
      \x52\x1D\xFA";

/// The value after `name` in a RESP2 map reply (a flat array of pairs).
fn field<'a>(reply: &'a redis::Value, name: &str) -> &'a redis::Value {
    let redis::Value::Array(items) = reply else {
        panic!("not an array: {reply:?}");
    };
    let at = items
        .chunks_exact(2)
        .position(|kv| kv[0] == redis::Value::BulkString(name.as_bytes().to_vec()))
        .unwrap_or_else(|| panic!("no {name}"));
    &items[2 * at + 1]
}

fn int(v: &redis::Value) -> i64 {
    redis::from_redis_value(v).unwrap()
}

#[test]
fn a_redis5_stream_restores_with_redis_estimated_counters() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut cmd = redis::cmd("RESTORE");
    cmd.arg("x").arg(0).arg(REDIS5_STREAM);
    assert_eq!(cmd.query::<String>(&mut c).unwrap(), "OK");
    let info: redis::Value = run(&mut c, &["XINFO", "STREAM", "x", "FULL"]).unwrap();
    let text = |v: &redis::Value| redis::from_redis_value::<String>(v).unwrap();
    assert_eq!(text(field(&info, "max-deleted-entry-id")), "0-0");
    assert_eq!(int(field(&info, "entries-added")), 2);
    assert_eq!(int(field(&info, "length")), 2);
    let groups: Vec<redis::Value> = redis::from_redis_value(field(&info, "groups")).unwrap();
    assert_eq!(int(field(&groups[0], "entries-read")), 1);
    assert_eq!(int(field(&groups[0], "lag")), 1);
    assert_eq!(int(field(&groups[1], "entries-read")), 0);
    assert_eq!(int(field(&groups[1], "lag")), 2);
    let range: Vec<(String, Vec<String>)> = run(&mut c, &["XRANGE", "x", "-", "+"]).unwrap();
    assert_eq!(
        range,
        [
            ("5-0".to_owned(), vec!["data".to_owned(), "e".to_owned()]),
            ("6-0".to_owned(), vec!["data".to_owned(), "f".to_owned()]),
        ]
    );
    let pending: (i64, String, String, Vec<(String, String)>) =
        run(&mut c, &["XPENDING", "x", "g1"]).unwrap();
    assert_eq!(
        pending,
        (
            4,
            "1-0".to_owned(),
            "5-0".to_owned(),
            vec![("c11".to_owned(), "4".to_owned())]
        )
    );
    // A truncated stream payload, with a footer that fits it, is refused
    // as bad data and loads nothing.
    let body = &REDIS5_STREAM[..REDIS5_STREAM.len() - 10];
    for cut in [1, 3, 40, body.len() - 1] {
        let mut p = body[..body.len() - cut].to_vec();
        p.extend_from_slice(&10u16.to_le_bytes());
        let crc = crc64(&p);
        p.extend_from_slice(&crc.to_le_bytes());
        let mut cmd = redis::cmd("RESTORE");
        cmd.arg("y").arg(0).arg(p);
        let e = cmd.query::<String>(&mut c).unwrap_err();
        // `ERR Bad data format`, as the client library shows it.
        assert!(
            e.to_string().ends_with("ResponseError: Bad data format"),
            "cut {cut}: {e}"
        );
    }
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "y"]).unwrap(), 0);
}

/// Redis's CRC-64 (Jones polynomial, reflected), bit by bit, for payloads
/// a test alters.
fn crc64(data: &[u8]) -> u64 {
    let mut crc = 0u64;
    for &b in data {
        crc ^= u64::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0x95ac_9329_ac4b_c9b5
            } else {
                crc >> 1
            };
        }
    }
    crc
}

/// A stream with two listpack nodes' worth of entries, deletions (one of a
/// pending entry), two groups, pending entries held by three consumers
/// (one claimed over), one acknowledged, and one consumer with nothing.
fn build_stream(c: &mut redis::Connection, key: &str) {
    for i in 1..=130 {
        let id = format!("{}-{}", 1000 + i / 4, i % 4);
        let v = i.to_string();
        let line: Vec<&str> = match i % 3 {
            0 => vec!["XADD", key, &id, "a", &v, "b", "text"],
            1 => vec!["XADD", key, &id, "a", "-70000", "long", "hello world"],
            _ => vec!["XADD", key, &id, "c", &v],
        };
        run::<String>(c, &line).unwrap();
    }
    run::<i64>(c, &["XDEL", key, "1010-1", "1001-2"]).unwrap();
    run::<()>(c, &["XGROUP", "CREATE", key, "g1", "0"]).unwrap();
    run::<()>(c, &["XGROUP", "CREATE", key, "g2", "1020-0"]).unwrap();
    let read = |c: &mut redis::Connection, who: &str, n: &str| {
        let line = [
            "XREADGROUP",
            "GROUP",
            "g1",
            who,
            "COUNT",
            n,
            "STREAMS",
            key,
            ">",
        ];
        run::<redis::Value>(c, &line).unwrap();
    };
    read(c, "alice", "5");
    read(c, "bob", "3");
    run::<i64>(c, &["XGROUP", "CREATECONSUMER", key, "g1", "carol"]).unwrap();
    run::<i64>(c, &["XGROUP", "CREATECONSUMER", key, "g1", "dave"]).unwrap();
    run::<redis::Value>(c, &["XCLAIM", key, "g1", "carol", "0", "1001-0"]).unwrap();
    run::<i64>(c, &["XACK", key, "g1", "1000-1"]).unwrap();
    run::<i64>(c, &["XDEL", key, "1001-1"]).unwrap();
    let line = [
        "XREADGROUP",
        "GROUP",
        "g2",
        "erin",
        "COUNT",
        "2",
        "STREAMS",
        key,
        ">",
    ];
    run::<redis::Value>(c, &line).unwrap();
}

/// What must match between two servers holding the same stream: XINFO
/// STREAM FULL (all entries, without the radix tree's node counts, which
/// depend on each server's layout), XRANGE, and XPENDING without idle
/// times.
fn observed(c: &mut redis::Connection, key: &str) -> Vec<redis::Value> {
    let mut info: redis::Value = run(c, &["XINFO", "STREAM", key, "FULL", "COUNT", "0"]).unwrap();
    if let redis::Value::Array(items) = &mut info {
        let kept: Vec<redis::Value> = items
            .chunks_exact(2)
            .filter(|kv| {
                let k: String = redis::from_redis_value(&kv[0]).unwrap();
                !k.starts_with("radix-tree-")
            })
            .flat_map(|kv| kv.to_vec())
            .collect();
        *items = kept;
    }
    let range: redis::Value = run(c, &["XRANGE", key, "-", "+"]).unwrap();
    let summary: redis::Value = run(c, &["XPENDING", key, "g1"]).unwrap();
    let pending: Vec<(String, String, i64, i64)> =
        run(c, &["XPENDING", key, "g1", "-", "+", "100"]).unwrap();
    let pending: Vec<(String, String, i64)> = pending
        .into_iter()
        .map(|(id, who, _idle, n)| (id, who, n))
        .collect();
    let pending = redis::Value::BulkString(format!("{pending:?}").into_bytes());
    vec![info, range, summary, pending]
}

fn restore(c: &mut redis::Connection, key: &str, payload: &[u8]) {
    let mut cmd = redis::cmd("RESTORE");
    cmd.arg(key).arg(0).arg(payload);
    assert_eq!(cmd.query::<String>(c).unwrap(), "OK");
}

#[test]
fn streams_move_between_ferrumkv_and_redis_server() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let s = TestServer::start();
    let mut f = s.client();
    let mut r = redis::Client::open(format!("redis://127.0.0.1:{}/", redis.port))
        .unwrap()
        .get_connection()
        .unwrap();
    // FerrumKV to Redis.
    build_stream(&mut f, "s");
    let payload: Vec<u8> = run(&mut f, &["DUMP", "s"]).unwrap();
    restore(&mut r, "s", &payload);
    assert_eq!(observed(&mut r, "s"), observed(&mut f, "s"));
    // What Redis dumps of it comes back the same.
    let again: Vec<u8> = run(&mut r, &["DUMP", "s"]).unwrap();
    restore(&mut f, "s2", &again);
    assert_eq!(observed(&mut f, "s2"), observed(&mut f, "s"));
    // Redis to FerrumKV.
    build_stream(&mut r, "t");
    let payload: Vec<u8> = run(&mut r, &["DUMP", "t"]).unwrap();
    restore(&mut f, "t", &payload);
    assert_eq!(observed(&mut f, "t"), observed(&mut r, "t"));
    // And an empty stream with a group, which Redis keeps as a key. (Each
    // copy is compared with its source: for a group created at `$` on an
    // empty stream Redis 7.0.15 reports entries-read nil, FerrumKV's
    // XGROUP CREATE 1.)
    for c in [&mut f, &mut r] {
        run::<String>(c, &["XADD", "e", "5-5", "f", "v"]).unwrap();
        run::<i64>(c, &["XDEL", "e", "5-5"]).unwrap();
        run::<()>(c, &["XGROUP", "CREATE", "e", "g1", "$"]).unwrap();
    }
    let payload: Vec<u8> = run(&mut r, &["DUMP", "e"]).unwrap();
    restore(&mut f, "e2", &payload);
    assert_eq!(observed(&mut f, "e2"), observed(&mut r, "e"));
    let payload: Vec<u8> = run(&mut f, &["DUMP", "e"]).unwrap();
    restore(&mut r, "e2", &payload);
    assert_eq!(observed(&mut r, "e2"), observed(&mut f, "e"));
}
