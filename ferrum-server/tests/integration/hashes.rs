//! Hash commands over a real socket.

use crate::common::{err, resp, run, TestServer};

#[test]
fn set_get_delete_and_counts() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(
        run::<i64>(&mut c, &["HSET", "h", "a", "1", "b", "2"]).unwrap(),
        2
    );
    assert_eq!(
        run::<i64>(&mut c, &["HSET", "h", "a", "10", "c", "3"]).unwrap(),
        1
    );
    assert_eq!(
        run::<String>(&mut c, &["HMSET", "h", "d", "4"]).unwrap(),
        "OK"
    );
    assert_eq!(run::<i64>(&mut c, &["HSETNX", "h", "a", "x"]).unwrap(), 0);
    assert_eq!(run::<i64>(&mut c, &["HSETNX", "h", "e", "5"]).unwrap(), 1);
    assert_eq!(run::<String>(&mut c, &["HGET", "h", "a"]).unwrap(), "10");
    assert_eq!(
        run::<Option<String>>(&mut c, &["HGET", "h", "zz"]).unwrap(),
        None
    );
    assert_eq!(
        run::<Vec<Option<String>>>(&mut c, &["HMGET", "h", "a", "zz", "b"]).unwrap(),
        [Some("10".into()), None, Some("2".into())]
    );
    assert_eq!(
        run::<Vec<Option<String>>>(&mut c, &["HMGET", "nokey", "a"]).unwrap(),
        [None]
    );
    assert_eq!(run::<i64>(&mut c, &["HLEN", "h"]).unwrap(), 5);
    assert_eq!(run::<i64>(&mut c, &["HEXISTS", "h", "b"]).unwrap(), 1);
    assert_eq!(run::<i64>(&mut c, &["HSTRLEN", "h", "a"]).unwrap(), 2);
    let mut keys: Vec<String> = run(&mut c, &["HKEYS", "h"]).unwrap();
    keys.sort();
    assert_eq!(keys, ["a", "b", "c", "d", "e"]);
    let all: std::collections::HashMap<String, String> = run(&mut c, &["HGETALL", "h"]).unwrap();
    assert_eq!(all.len(), 5);
    assert_eq!(all["d"], "4");
    assert_eq!(
        run::<Vec<String>>(&mut c, &["HVALS", "nokey"]).unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(
        run::<i64>(&mut c, &["HDEL", "h", "a", "b", "c", "d", "zz"]).unwrap(),
        4
    );
    assert_eq!(run::<i64>(&mut c, &["HDEL", "h", "e"]).unwrap(), 1);
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "h"]).unwrap(), 0);
    assert_eq!(
        err(&mut c, &["HSET", "h", "a"]),
        "ERR wrong number of arguments for 'hset' command"
    );
    assert_eq!(
        err(&mut c, &["HSET", "h", "a", "1", "b"]),
        "ERR wrong number of arguments for 'hset' command"
    );
}

#[test]
fn counters_and_their_errors() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(run::<i64>(&mut c, &["HINCRBY", "h", "n", "5"]).unwrap(), 5);
    assert_eq!(
        run::<i64>(&mut c, &["HINCRBY", "h", "n", "-7"]).unwrap(),
        -2
    );
    let _: i64 = run(
        &mut c,
        &["HSET", "h", "s", "abc", "big", "9223372036854775807"],
    )
    .unwrap();
    assert_eq!(
        err(&mut c, &["HINCRBY", "h", "s", "1"]),
        "ERR hash value is not an integer"
    );
    assert_eq!(
        err(&mut c, &["HINCRBY", "h", "big", "1"]),
        "ERR increment or decrement would overflow"
    );
    assert_eq!(
        err(&mut c, &["HINCRBY", "h", "n", "x"]),
        "ERR value is not an integer or out of range"
    );
    assert_eq!(
        run::<String>(&mut c, &["HINCRBYFLOAT", "h", "f", "10.5"]).unwrap(),
        "10.5"
    );
    assert_eq!(
        run::<String>(&mut c, &["HINCRBYFLOAT", "h", "f", "0.1"]).unwrap(),
        "10.6"
    );
    assert_eq!(
        err(&mut c, &["HINCRBYFLOAT", "h", "s", "1"]),
        "ERR hash value is not a float"
    );
    assert_eq!(
        err(&mut c, &["HINCRBYFLOAT", "h", "f", "inf"]),
        "ERR value is NaN or Infinity",
        "an infinite increment is refused before the hash is read, as in Redis 7.0"
    );
    let _: () = run(&mut c, &["SET", "str", "x"]).unwrap();
    assert_eq!(
        err(&mut c, &["HGET", "str", "a"]),
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    );
}

#[test]
fn hgetall_is_a_map_in_resp3_and_flat_in_resp2() {
    let s = TestServer::start();
    let mut r = s.raw();
    r.roundtrip(&resp(&[b"HSET", b"h", b"f", b"v"]), b":1\r\n");
    r.roundtrip(&resp(&[b"HGETALL", b"h"]), b"*2\r\n$1\r\nf\r\n$1\r\nv\r\n");
    r.roundtrip(&resp(&[b"HGETALL", b"nokey"]), b"*0\r\n");
    r.hello3();
    r.roundtrip(&resp(&[b"HGETALL", b"h"]), b"%1\r\n$1\r\nf\r\n$1\r\nv\r\n");
    r.roundtrip(
        &resp(&[b"HRANDFIELD", b"h", b"1", b"WITHVALUES"]),
        b"*1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n",
    );
    r.roundtrip(&resp(&[b"HGETALL", b"nokey"]), b"%0\r\n");
}

#[test]
fn hrandfield_counts_and_hscan() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(
        run::<Option<String>>(&mut c, &["HRANDFIELD", "h"]).unwrap(),
        None
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["HRANDFIELD", "h", "3"]).unwrap(),
        Vec::<String>::new()
    );
    let _: i64 = run(&mut c, &["HSET", "h", "a", "1", "b", "2", "c", "3"]).unwrap();
    let mut distinct: Vec<String> = run(&mut c, &["HRANDFIELD", "h", "10"]).unwrap();
    distinct.sort();
    assert_eq!(distinct, ["a", "b", "c"]);
    assert_eq!(
        run::<Vec<String>>(&mut c, &["HRANDFIELD", "h", "-7"])
            .unwrap()
            .len(),
        7
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["HRANDFIELD", "h", "2", "WITHVALUES"])
            .unwrap()
            .len(),
        4
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["HRANDFIELD", "h", "0"])
            .unwrap()
            .len(),
        0
    );
    assert_eq!(
        err(&mut c, &["HRANDFIELD", "h", "1", "FOO"]),
        "ERR syntax error"
    );
    let one: String = run(&mut c, &["HRANDFIELD", "h"]).unwrap();
    assert!(["a", "b", "c"].contains(&one.as_str()));
    let mut seen = Vec::new();
    let mut cursor = "0".to_string();
    loop {
        let (next, items): (String, Vec<String>) =
            run(&mut c, &["HSCAN", "h", &cursor, "COUNT", "1"]).unwrap();
        seen.extend(items.chunks(2).map(|p| p.join("=")));
        if next == "0" {
            break;
        }
        cursor = next;
    }
    seen.sort();
    assert_eq!(seen, ["a=1", "b=2", "c=3"]);
    let (_, only): (String, Vec<String>) =
        run(&mut c, &["HSCAN", "h", "0", "MATCH", "b*", "COUNT", "100"]).unwrap();
    assert_eq!(only, ["b", "2"]);
    assert_eq!(err(&mut c, &["HSCAN", "h", "x"]), "ERR invalid cursor");
}

#[test]
fn encodings_follow_the_listpack_limits() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: i64 = run(&mut c, &["HSET", "h", "a", "1"]).unwrap();
    assert_eq!(
        run::<String>(&mut c, &["OBJECT", "ENCODING", "h"]).unwrap(),
        "listpack"
    );
    let long = "x".repeat(65);
    let _: i64 = run(&mut c, &["HSET", "h", "b", &long]).unwrap();
    assert_eq!(
        run::<String>(&mut c, &["OBJECT", "ENCODING", "h"]).unwrap(),
        "hashtable"
    );
    assert_eq!(run::<String>(&mut c, &["TYPE", "h"]).unwrap(), "hash");
}
