//! Set commands over a real socket.

use crate::common::{err, resp, run, sorted, TestServer};

#[test]
fn membership_and_cardinality() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(
        run::<i64>(&mut c, &["SADD", "s", "a", "b", "a"]).unwrap(),
        2
    );
    assert_eq!(run::<i64>(&mut c, &["SCARD", "s"]).unwrap(), 2);
    assert_eq!(run::<i64>(&mut c, &["SISMEMBER", "s", "a"]).unwrap(), 1);
    assert_eq!(
        run::<Vec<i64>>(&mut c, &["SMISMEMBER", "s", "a", "z"]).unwrap(),
        [1, 0]
    );
    assert_eq!(
        run::<Vec<i64>>(&mut c, &["SMISMEMBER", "nokey", "a"]).unwrap(),
        [0]
    );
    assert_eq!(sorted(run(&mut c, &["SMEMBERS", "s"]).unwrap()), ["a", "b"]);
    assert_eq!(run::<i64>(&mut c, &["SREM", "s", "a", "z"]).unwrap(), 1);
    assert_eq!(run::<i64>(&mut c, &["SREM", "s", "b"]).unwrap(), 1);
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "s"]).unwrap(), 0);
    let _: () = run(&mut c, &["SET", "str", "x"]).unwrap();
    assert_eq!(
        err(&mut c, &["SADD", "str", "a"]),
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    );
}

#[test]
fn spop_srandmember_and_smove() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(run::<Option<String>>(&mut c, &["SPOP", "s"]).unwrap(), None);
    assert_eq!(
        run::<Vec<String>>(&mut c, &["SPOP", "s", "2"]).unwrap(),
        Vec::<String>::new()
    );
    let _: i64 = run(&mut c, &["SADD", "s", "1", "2", "3", "4"]).unwrap();
    assert_eq!(
        run::<Vec<String>>(&mut c, &["SRANDMEMBER", "s", "-10"])
            .unwrap()
            .len(),
        10
    );
    assert_eq!(
        sorted(run(&mut c, &["SRANDMEMBER", "s", "10"]).unwrap()),
        ["1", "2", "3", "4"]
    );
    let popped: Vec<String> = run(&mut c, &["SPOP", "s", "3"]).unwrap();
    assert_eq!(popped.len(), 3);
    assert_eq!(run::<i64>(&mut c, &["SCARD", "s"]).unwrap(), 1);
    assert_eq!(
        err(&mut c, &["SPOP", "s", "-1"]),
        "ERR value is out of range, must be positive"
    );
    let last: String = run(&mut c, &["SRANDMEMBER", "s"]).unwrap();
    assert_eq!(run::<i64>(&mut c, &["SMOVE", "s", "d", &last]).unwrap(), 1);
    assert_eq!(run::<i64>(&mut c, &["SMOVE", "s", "d", &last]).unwrap(), 0);
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "s"]).unwrap(), 0);
    assert_eq!(
        run::<Vec<String>>(&mut c, &["SMEMBERS", "d"]).unwrap(),
        [last]
    );
}

#[test]
fn algebra_and_store_variants() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: i64 = run(&mut c, &["SADD", "a", "1", "2", "3", "x"]).unwrap();
    let _: i64 = run(&mut c, &["SADD", "b", "2", "3", "4"]).unwrap();
    assert_eq!(
        sorted(run(&mut c, &["SINTER", "a", "b"]).unwrap()),
        ["2", "3"]
    );
    assert_eq!(
        sorted(run(&mut c, &["SUNION", "a", "b", "nokey"]).unwrap()),
        ["1", "2", "3", "4", "x"]
    );
    assert_eq!(
        sorted(run(&mut c, &["SDIFF", "a", "b"]).unwrap()),
        ["1", "x"]
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["SINTER", "a", "nokey"]).unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(
        run::<i64>(&mut c, &["SINTERSTORE", "dst", "a", "b"]).unwrap(),
        2
    );
    assert_eq!(
        run::<i64>(&mut c, &["SUNIONSTORE", "dst", "a", "b"]).unwrap(),
        5
    );
    assert_eq!(
        run::<i64>(&mut c, &["SDIFFSTORE", "dst", "a", "a"]).unwrap(),
        0
    );
    assert_eq!(
        run::<i64>(&mut c, &["EXISTS", "dst"]).unwrap(),
        0,
        "an empty result deletes the destination"
    );
    assert_eq!(
        run::<i64>(&mut c, &["SINTERCARD", "2", "a", "b"]).unwrap(),
        2
    );
    assert_eq!(
        run::<i64>(&mut c, &["SINTERCARD", "2", "a", "b", "LIMIT", "1"]).unwrap(),
        1
    );
    assert_eq!(
        err(&mut c, &["SINTERCARD", "0", "a"]),
        "ERR numkeys should be greater than 0"
    );
    assert_eq!(
        err(&mut c, &["SINTERCARD", "3", "a"]),
        "ERR Number of keys can't be greater than number of args"
    );
    assert_eq!(
        err(&mut c, &["SINTERCARD", "1", "a", "LIMIT", "-1"]),
        "ERR LIMIT can't be negative"
    );
    let _: () = run(&mut c, &["SET", "str", "x"]).unwrap();
    assert_eq!(
        err(&mut c, &["SUNION", "a", "str"]),
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    );
}

#[test]
fn resp3_sets_encodings_and_sscan() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: i64 = run(&mut c, &["SADD", "n", "1", "2"]).unwrap();
    assert_eq!(
        run::<String>(&mut c, &["OBJECT", "ENCODING", "n"]).unwrap(),
        "intset"
    );
    // A string member: a hashtable, as in Redis 7.0 ...
    let _: i64 = run(&mut c, &["SADD", "n", "abc"]).unwrap();
    assert_eq!(
        run::<String>(&mut c, &["OBJECT", "ENCODING", "n"]).unwrap(),
        "hashtable"
    );
    // ... or a listpack while small, with Redis 7.2's setting.
    let _: () = run(&mut c, &["CONFIG", "SET", "set-max-listpack-entries", "2"]).unwrap();
    let _: i64 = run(&mut c, &["SADD", "p", "1", "abc"]).unwrap();
    let encoding = |c: &mut _| run::<String>(c, &["OBJECT", "ENCODING", "p"]).unwrap();
    assert_eq!(encoding(&mut c), "listpack");
    let _: i64 = run(&mut c, &["SADD", "p", "def"]).unwrap();
    assert_eq!(encoding(&mut c), "hashtable");
    let (_, all): (String, Vec<String>) =
        run(&mut c, &["SSCAN", "n", "0", "COUNT", "100"]).unwrap();
    assert_eq!(sorted(all), ["1", "2", "abc"]);
    let mut r = s.raw();
    r.roundtrip(&resp(&[b"SADD", b"one", b"m"]), b":1\r\n");
    r.roundtrip(&resp(&[b"SMEMBERS", b"one"]), b"*1\r\n$1\r\nm\r\n");
    r.hello3();
    r.roundtrip(&resp(&[b"SMEMBERS", b"one"]), b"~1\r\n$1\r\nm\r\n");
    r.roundtrip(&resp(&[b"SINTER", b"one", b"one"]), b"~1\r\n$1\r\nm\r\n");
}
