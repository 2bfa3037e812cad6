//! List commands over a real socket: replies, RESP2/RESP3 shapes, errors.

use crate::common::{err, resp, run, TestServer};

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

#[test]
fn push_pop_range_and_index() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(
        run::<i64>(&mut c, &["RPUSH", "l", "a", "b", "c"]).unwrap(),
        3
    );
    assert_eq!(run::<i64>(&mut c, &["LPUSH", "l", "z"]).unwrap(), 4);
    assert_eq!(
        run::<Vec<String>>(&mut c, &["LRANGE", "l", "0", "-1"]).unwrap(),
        ["z", "a", "b", "c"]
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["LRANGE", "l", "-2", "100"]).unwrap(),
        ["b", "c"]
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["LRANGE", "l", "3", "1"]).unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(run::<String>(&mut c, &["LINDEX", "l", "-1"]).unwrap(), "c");
    assert_eq!(
        run::<Option<String>>(&mut c, &["LINDEX", "l", "9"]).unwrap(),
        None
    );
    assert_eq!(run::<i64>(&mut c, &["LLEN", "l"]).unwrap(), 4);
    assert_eq!(run::<String>(&mut c, &["LPOP", "l"]).unwrap(), "z");
    assert_eq!(
        run::<Vec<String>>(&mut c, &["RPOP", "l", "2"]).unwrap(),
        ["c", "b"]
    );
    assert_eq!(run::<i64>(&mut c, &["LPUSHX", "nope", "x"]).unwrap(), 0);
    assert_eq!(run::<i64>(&mut c, &["RPUSHX", "l", "x"]).unwrap(), 2);
    assert_eq!(
        run::<Vec<String>>(&mut c, &["LPOP", "l", "5"]).unwrap(),
        ["a", "x"]
    );
    assert_eq!(
        run::<i64>(&mut c, &["EXISTS", "l"]).unwrap(),
        0,
        "an emptied list is deleted"
    );
    assert_eq!(
        err(&mut c, &["LPOP", "l", "-1"]),
        "ERR value is out of range, must be positive"
    );
}

#[test]
fn pop_replies_follow_redis_in_resp2_and_resp3() {
    let s = TestServer::start();
    let mut r = s.raw();
    r.roundtrip(&resp(&[b"LPOP", b"missing"]), b"$-1\r\n");
    r.roundtrip(&resp(&[b"LPOP", b"missing", b"2"]), b"*-1\r\n");
    r.roundtrip(&resp(&[b"RPUSH", b"l", b"a"]), b":1\r\n");
    r.roundtrip(&resp(&[b"LPOP", b"l", b"0"]), b"*0\r\n");
    r.roundtrip(&resp(&[b"LPOS", b"l", b"zz"]), b"$-1\r\n");
    r.roundtrip(
        &resp(&[b"LPOS", b"l", b"a", b"COUNT", b"0"]),
        b"*1\r\n:0\r\n",
    );
}

#[test]
fn set_insert_rem_trim_pos() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: i64 = run(&mut c, &["RPUSH", "l", "a", "b", "a", "c", "a"]).unwrap();
    assert_eq!(
        run::<String>(&mut c, &["LSET", "l", "1", "B"]).unwrap(),
        "OK"
    );
    assert_eq!(
        err(&mut c, &["LSET", "l", "10", "x"]),
        "ERR index out of range"
    );
    assert_eq!(err(&mut c, &["LSET", "nokey", "0", "x"]), "ERR no such key");
    assert_eq!(
        run::<i64>(&mut c, &["LINSERT", "l", "BEFORE", "c", "bc"]).unwrap(),
        6
    );
    assert_eq!(
        run::<i64>(&mut c, &["LINSERT", "l", "AFTER", "zz", "x"]).unwrap(),
        -1
    );
    assert_eq!(
        run::<i64>(&mut c, &["LINSERT", "nokey", "AFTER", "a", "x"]).unwrap(),
        0
    );
    assert_eq!(
        err(&mut c, &["LINSERT", "l", "MIDDLE", "a", "x"]),
        "ERR syntax error"
    );
    assert_eq!(
        run::<Vec<i64>>(&mut c, &["LPOS", "l", "a", "COUNT", "0"]).unwrap(),
        [0, 2, 5]
    );
    assert_eq!(
        run::<i64>(&mut c, &["LPOS", "l", "a", "RANK", "-1"]).unwrap(),
        5
    );
    assert_eq!(
        run::<Vec<i64>>(&mut c, &["LPOS", "l", "a", "RANK", "2", "COUNT", "1"]).unwrap(),
        [2]
    );
    assert!(err(&mut c, &["LPOS", "l", "a", "RANK", "0"]).starts_with("ERR RANK can't be zero"));
    assert_eq!(
        err(&mut c, &["LPOS", "l", "a", "COUNT", "-1"]),
        "ERR COUNT can't be negative"
    );
    assert_eq!(run::<i64>(&mut c, &["LREM", "l", "-1", "a"]).unwrap(), 1);
    assert_eq!(
        run::<Vec<String>>(&mut c, &["LRANGE", "l", "0", "-1"]).unwrap(),
        ["a", "B", "a", "bc", "c"]
    );
    assert_eq!(
        run::<String>(&mut c, &["LTRIM", "l", "1", "2"]).unwrap(),
        "OK"
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["LRANGE", "l", "0", "-1"]).unwrap(),
        ["B", "a"]
    );
    assert_eq!(
        run::<String>(&mut c, &["LTRIM", "l", "5", "1"]).unwrap(),
        "OK"
    );
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "l"]).unwrap(), 0);
}

#[test]
fn lmove_and_rpoplpush() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: i64 = run(&mut c, &["RPUSH", "src", "a", "b", "c"]).unwrap();
    assert_eq!(
        run::<String>(&mut c, &["LMOVE", "src", "dst", "LEFT", "RIGHT"]).unwrap(),
        "a"
    );
    assert_eq!(
        run::<String>(&mut c, &["RPOPLPUSH", "src", "dst"]).unwrap(),
        "c"
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["LRANGE", "dst", "0", "-1"]).unwrap(),
        ["c", "a"]
    );
    assert_eq!(
        run::<String>(&mut c, &["LMOVE", "dst", "dst", "LEFT", "RIGHT"]).unwrap(),
        "c"
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["LRANGE", "dst", "0", "-1"]).unwrap(),
        ["a", "c"]
    );
    assert_eq!(
        run::<Option<String>>(&mut c, &["LMOVE", "none", "dst", "LEFT", "LEFT"]).unwrap(),
        None
    );
    assert_eq!(
        err(&mut c, &["LMOVE", "src", "dst", "UP", "LEFT"]),
        "ERR syntax error"
    );
    let _: () = run(&mut c, &["SET", "str", "x"]).unwrap();
    assert_eq!(
        err(&mut c, &["LMOVE", "src", "str", "LEFT", "LEFT"]),
        WRONGTYPE
    );
    assert_eq!(
        run::<i64>(&mut c, &["LLEN", "src"]).unwrap(),
        1,
        "nothing moved on WRONGTYPE"
    );
}

#[test]
fn wrong_types_are_refused_both_ways() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "str", "x"]).unwrap();
    let _: i64 = run(&mut c, &["RPUSH", "l", "a"]).unwrap();
    assert_eq!(err(&mut c, &["LPUSH", "str", "a"]), WRONGTYPE);
    assert_eq!(err(&mut c, &["LRANGE", "str", "0", "-1"]), WRONGTYPE);
    assert_eq!(err(&mut c, &["GET", "l"]), WRONGTYPE);
    assert_eq!(err(&mut c, &["APPEND", "l", "x"]), WRONGTYPE);
    assert_eq!(run::<String>(&mut c, &["TYPE", "l"]).unwrap(), "list");
    assert_eq!(
        run::<String>(&mut c, &["OBJECT", "ENCODING", "l"]).unwrap(),
        "quicklist",
        "Redis 7.0.15 says quicklist for every list"
    );
    let big: Vec<String> = (0..200).map(|i| i.to_string()).collect();
    let mut args = vec!["RPUSH", "big"];
    args.extend(big.iter().map(String::as_str));
    let _: i64 = run(&mut c, &args).unwrap();
    assert_eq!(
        run::<String>(&mut c, &["OBJECT", "ENCODING", "big"]).unwrap(),
        "quicklist"
    );
    assert_eq!(
        run::<String>(&mut c, &["SET", "l", "now a string"]).unwrap(),
        "OK"
    );
    assert_eq!(run::<String>(&mut c, &["TYPE", "l"]).unwrap(), "string");
}

/// The dataset's share of `used_memory` (the connection's buffers vary
/// with the commands).
fn used_memory(c: &mut redis::Connection) -> i64 {
    let info: String = run(c, &["INFO", "memory"]).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory_dataset:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("used_memory_dataset in INFO memory")
}

#[test]
fn list_memory_grows_and_shrinks() {
    let s = TestServer::start();
    let mut c = s.client();
    let base = used_memory(&mut c);
    let value = "v".repeat(100);
    for _ in 0..100 {
        let _: i64 = run(&mut c, &["RPUSH", "l", &value]).unwrap();
    }
    let grown = used_memory(&mut c);
    assert!(grown - base >= 100 * 100, "grew by {}", grown - base);
    let _: Vec<String> = run(&mut c, &["LPOP", "l", "90"]).unwrap();
    let shrunk = used_memory(&mut c);
    assert!(shrunk < grown - 90 * 100, "{shrunk} vs {grown}");
    let _: i64 = run(&mut c, &["DEL", "l"]).unwrap();
    // The emptied slot-table row is given back by the expiry cron.
    let _: i64 = run(&mut c, &["DEBUG", "EXPIRE-CYCLE"]).unwrap();
    assert_eq!(used_memory(&mut c), base);
}

#[test]
fn rename_copy_and_expiry_carry_lists() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: i64 = run(&mut c, &["RPUSH", "l", "a", "b"]).unwrap();
    assert_eq!(run::<i64>(&mut c, &["COPY", "l", "l2"]).unwrap(), 1);
    let _: i64 = run(&mut c, &["RPUSH", "l2", "c"]).unwrap();
    assert_eq!(
        run::<i64>(&mut c, &["LLEN", "l"]).unwrap(),
        2,
        "a copy is deep"
    );
    assert_eq!(
        run::<String>(&mut c, &["RENAME", "l2", "l3"]).unwrap(),
        "OK"
    );
    assert_eq!(run::<i64>(&mut c, &["LLEN", "l3"]).unwrap(), 3);
    assert_eq!(run::<i64>(&mut c, &["PEXPIRE", "l3", "100"]).unwrap(), 1);
    s.advance(&mut c, 101);
    assert_eq!(run::<i64>(&mut c, &["LLEN", "l3"]).unwrap(), 0);
    let (_, found): (String, Vec<String>) =
        run(&mut c, &["SCAN", "0", "TYPE", "list", "COUNT", "100"]).unwrap();
    assert_eq!(found, ["l"]);
}

/// Replies written as the collection is walked (`Frame::Bulks`) go out
/// byte for byte as the ordinary frames would, in both protocols, inside
/// `MULTI`, and reach scripts as values.
#[test]
fn many_element_replies_in_both_protocols() {
    let s = TestServer::start();
    let mut raw = s.raw();
    raw.roundtrip(b"RPUSH l a bb \"\" ccc\r\n", b":4\r\n");
    raw.roundtrip(b"HSET h f v\r\n", b":1\r\n");
    raw.roundtrip(b"SADD s 5\r\n", b":1\r\n");
    raw.roundtrip(b"SADD t x\r\n", b":1\r\n");
    let lrange = b"*4\r\n$1\r\na\r\n$2\r\nbb\r\n$0\r\n\r\n$3\r\nccc\r\n";
    for resp3 in [false, true] {
        let (map, set, nil) = if resp3 {
            ("%1", "~1", "_")
        } else {
            ("*2", "*1", "*-1")
        };
        let hgetall = format!("{map}\r\n$1\r\nf\r\n$1\r\nv\r\n");
        raw.roundtrip(b"LRANGE l 0 -1\r\n", lrange);
        raw.roundtrip(b"LRANGE nol 0 -1\r\n", b"*0\r\n");
        raw.roundtrip(b"HGETALL h\r\n", hgetall.as_bytes());
        raw.roundtrip(b"HKEYS h\r\n", b"*1\r\n$1\r\nf\r\n");
        raw.roundtrip(
            b"SMEMBERS s\r\n",
            format!("{set}\r\n$1\r\n5\r\n").as_bytes(),
        );
        raw.roundtrip(b"SUNION t\r\n", format!("{set}\r\n$1\r\nx\r\n").as_bytes());
        raw.roundtrip(b"LPOP nol 2\r\n", format!("{nil}\r\n").as_bytes());
        raw.roundtrip(
            b"EVAL \"return redis.call('lrange', KEYS[1], 0, 1)\" 1 l\r\n",
            b"*2\r\n$1\r\na\r\n$2\r\nbb\r\n",
        );
        raw.roundtrip(
            b"EVAL \"redis.setresp(3); return redis.call('hgetall', KEYS[1])\" 1 h\r\n",
            hgetall.as_bytes(),
        );
        raw.roundtrip(b"MULTI\r\n", b"+OK\r\n");
        raw.roundtrip(b"HGETALL h\r\n", b"+QUEUED\r\n");
        raw.roundtrip(b"SMEMBERS s\r\n", b"+QUEUED\r\n");
        raw.roundtrip(
            b"EXEC\r\n",
            format!("*2\r\n{hgetall}{set}\r\n$1\r\n5\r\n").as_bytes(),
        );
        if !resp3 {
            raw.send(b"HELLO 3\r\n");
            let mut hello = Vec::new();
            while !hello.ends_with(b"modules\r\n*0\r\n") {
                hello.extend(raw.read_exact_len(1));
            }
        }
    }
    raw.roundtrip(
        b"RPOP l 3\r\n",
        b"*3\r\n$3\r\nccc\r\n$0\r\n\r\n$2\r\nbb\r\n",
    );
    raw.roundtrip(b"LPOP l 5\r\n", b"*1\r\n$1\r\na\r\n");
    raw.roundtrip(b"EXISTS l\r\n", b":0\r\n");
}
