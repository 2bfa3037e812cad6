//! Sorted-set commands over a real socket.

use crate::common::{err, resp, run, TestServer};

fn setup(c: &mut redis::Connection) {
    let _: i64 = run(
        c,
        &[
            "ZADD", "z", "1", "a", "2", "b", "2", "c", "3", "d", "-1.5", "m",
        ],
    )
    .unwrap();
}

#[test]
fn zadd_flags_and_replies() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(
        run::<i64>(&mut c, &["ZADD", "z", "1", "a", "2", "b"]).unwrap(),
        2
    );
    assert_eq!(
        run::<i64>(&mut c, &["ZADD", "z", "NX", "5", "a", "3", "c"]).unwrap(),
        1
    );
    assert_eq!(
        run::<i64>(&mut c, &["ZADD", "z", "XX", "CH", "5", "a", "9", "new"]).unwrap(),
        1
    );
    assert_eq!(
        run::<i64>(&mut c, &["ZADD", "z", "GT", "CH", "4", "a", "4", "b"]).unwrap(),
        1
    );
    assert_eq!(
        run::<i64>(&mut c, &["ZADD", "z", "LT", "CH", "1", "a"]).unwrap(),
        1
    );
    assert_eq!(
        run::<String>(&mut c, &["ZADD", "z", "INCR", "2.5", "a"]).unwrap(),
        "3.5"
    );
    assert_eq!(
        run::<Option<String>>(&mut c, &["ZADD", "z", "NX", "INCR", "1", "a"]).unwrap(),
        None
    );
    assert_eq!(
        run::<i64>(&mut c, &["ZADD", "nokey", "XX", "1", "a"]).unwrap(),
        0
    );
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "nokey"]).unwrap(), 0);
    assert_eq!(
        err(&mut c, &["ZADD", "z", "NX", "XX", "1", "a"]),
        "ERR XX and NX options at the same time are not compatible"
    );
    assert_eq!(
        err(&mut c, &["ZADD", "z", "GT", "LT", "1", "a"]),
        "ERR GT, LT, and/or NX options at the same time are not compatible"
    );
    assert_eq!(
        err(&mut c, &["ZADD", "z", "INCR", "1", "a", "2", "b"]),
        "ERR INCR option supports a single increment-element pair"
    );
    assert_eq!(
        err(&mut c, &["ZADD", "z", "x", "a"]),
        "ERR value is not a valid float"
    );
    assert_eq!(
        err(&mut c, &["ZADD", "z", "1", "a", "2"]),
        "ERR syntax error"
    );
    let _: i64 = run(&mut c, &["ZADD", "inf", "inf", "x"]).unwrap();
    assert_eq!(
        err(&mut c, &["ZINCRBY", "inf", "-inf", "x"]),
        "ERR resulting score is not a number (NaN)"
    );
    assert_eq!(
        run::<String>(&mut c, &["ZINCRBY", "z", "0.1", "b"]).unwrap(),
        "4.1"
    );
}

#[test]
fn scores_ranks_and_counts() {
    let s = TestServer::start();
    let mut c = s.client();
    setup(&mut c);
    assert_eq!(run::<i64>(&mut c, &["ZCARD", "z"]).unwrap(), 5);
    assert_eq!(
        run::<String>(&mut c, &["ZSCORE", "z", "m"]).unwrap(),
        "-1.5"
    );
    assert_eq!(
        run::<Vec<Option<String>>>(&mut c, &["ZMSCORE", "z", "a", "zz"]).unwrap(),
        [Some("1".into()), None]
    );
    assert_eq!(run::<i64>(&mut c, &["ZRANK", "z", "c"]).unwrap(), 3);
    assert_eq!(run::<i64>(&mut c, &["ZREVRANK", "z", "c"]).unwrap(), 1);
    assert_eq!(
        run::<Option<i64>>(&mut c, &["ZRANK", "z", "zz"]).unwrap(),
        None
    );
    assert_eq!(run::<i64>(&mut c, &["ZCOUNT", "z", "(1", "2"]).unwrap(), 2);
    assert_eq!(
        run::<i64>(&mut c, &["ZCOUNT", "z", "-inf", "+inf"]).unwrap(),
        5
    );
    assert_eq!(
        err(&mut c, &["ZCOUNT", "z", "x", "2"]),
        "ERR min or max is not a float"
    );
    assert_eq!(run::<i64>(&mut c, &["ZREM", "z", "a", "zz"]).unwrap(), 1);
    let _: i64 = run(
        &mut c,
        &["ZADD", "lex", "0", "a", "0", "b", "0", "c", "0", "d"],
    )
    .unwrap();
    assert_eq!(
        run::<i64>(&mut c, &["ZLEXCOUNT", "lex", "[b", "(d"]).unwrap(),
        2
    );
    assert_eq!(
        run::<i64>(&mut c, &["ZLEXCOUNT", "lex", "-", "+"]).unwrap(),
        4
    );
    assert_eq!(
        err(&mut c, &["ZLEXCOUNT", "lex", "b", "+"]),
        "ERR min or max not valid string range item"
    );
}

#[test]
fn ranges_in_every_form() {
    let s = TestServer::start();
    let mut c = s.client();
    setup(&mut c);
    let q = |c: &mut redis::Connection, a: &[&str]| run::<Vec<String>>(c, a).unwrap();
    assert_eq!(
        q(&mut c, &["ZRANGE", "z", "0", "-1"]),
        ["m", "a", "b", "c", "d"]
    );
    assert_eq!(
        q(&mut c, &["ZRANGE", "z", "0", "1", "WITHSCORES"]),
        ["m", "-1.5", "a", "1"]
    );
    assert_eq!(q(&mut c, &["ZRANGE", "z", "0", "1", "REV"]), ["d", "c"]);
    assert_eq!(q(&mut c, &["ZREVRANGE", "z", "-2", "-1"]), ["a", "m"]);
    assert_eq!(
        q(&mut c, &["ZRANGE", "z", "(1", "3", "BYSCORE"]),
        ["b", "c", "d"]
    );
    assert_eq!(
        q(
            &mut c,
            &["ZRANGE", "z", "3", "(1", "BYSCORE", "REV", "LIMIT", "1", "1"]
        ),
        ["c"]
    );
    assert_eq!(
        q(
            &mut c,
            &["ZRANGEBYSCORE", "z", "-inf", "2", "LIMIT", "1", "2"]
        ),
        ["a", "b"]
    );
    assert_eq!(
        q(
            &mut c,
            &["ZREVRANGEBYSCORE", "z", "+inf", "2", "WITHSCORES"]
        ),
        ["d", "3", "c", "2", "b", "2"]
    );
    assert_eq!(
        q(&mut c, &["ZRANGEBYSCORE", "z", "5", "9"]),
        Vec::<String>::new()
    );
    let _: i64 = run(&mut c, &["ZADD", "lex", "0", "a", "0", "b", "0", "c"]).unwrap();
    assert_eq!(q(&mut c, &["ZRANGEBYLEX", "lex", "(a", "+"]), ["b", "c"]);
    assert_eq!(
        q(&mut c, &["ZRANGE", "lex", "[c", "-", "BYLEX", "REV"]),
        ["c", "b", "a"]
    );
    assert_eq!(
        err(&mut c, &["ZRANGE", "z", "0", "1", "LIMIT", "0", "1"]),
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
    );
    assert_eq!(
        err(&mut c, &["ZRANGE", "lex", "-", "+", "BYLEX", "WITHSCORES"]),
        "ERR syntax error, WITHSCORES not supported in combination with BYLEX"
    );
    assert_eq!(
        run::<i64>(&mut c, &["ZREMRANGEBYSCORE", "z", "(2", "+inf"]).unwrap(),
        1
    );
    assert_eq!(
        run::<i64>(&mut c, &["ZREMRANGEBYRANK", "z", "0", "1"]).unwrap(),
        2
    );
    assert_eq!(q(&mut c, &["ZRANGE", "z", "0", "-1"]), ["b", "c"]);
    assert_eq!(
        run::<i64>(&mut c, &["ZREMRANGEBYRANK", "z", "0", "-1"]).unwrap(),
        2
    );
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "z"]).unwrap(), 0);
}

#[test]
fn pops_random_and_scan() {
    let s = TestServer::start();
    let mut c = s.client();
    setup(&mut c);
    assert_eq!(
        run::<Vec<String>>(&mut c, &["ZPOPMIN", "z"]).unwrap(),
        ["m", "-1.5"]
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["ZPOPMAX", "z", "2"]).unwrap(),
        ["d", "3", "c", "2"]
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["ZPOPMIN", "nokey"]).unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(
        err(&mut c, &["ZPOPMIN", "z", "-1"]),
        "ERR value is out of range, must be positive"
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["ZRANDMEMBER", "z", "-5"])
            .unwrap()
            .len(),
        5
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["ZRANDMEMBER", "z", "5", "WITHSCORES"])
            .unwrap()
            .len(),
        4
    );
    let (_, items): (String, Vec<String>) =
        run(&mut c, &["ZSCAN", "z", "0", "COUNT", "100"]).unwrap();
    assert_eq!(items.len(), 4);
    assert_eq!(
        run::<String>(&mut c, &["OBJECT", "ENCODING", "z"]).unwrap(),
        "listpack"
    );
    let _: i64 = run(&mut c, &["ZADD", "z", "1", &"x".repeat(65)]).unwrap();
    assert_eq!(
        run::<String>(&mut c, &["OBJECT", "ENCODING", "z"]).unwrap(),
        "skiplist"
    );
    assert_eq!(run::<String>(&mut c, &["TYPE", "z"]).unwrap(), "zset");
}

#[test]
fn resp3_scores_are_doubles() {
    let s = TestServer::start();
    let mut r = s.raw();
    r.roundtrip(&resp(&[b"ZADD", b"z", b"1.5", b"a", b"2", b"b"]), b":2\r\n");
    r.roundtrip(&resp(&[b"ZSCORE", b"z", b"a"]), b"$3\r\n1.5\r\n");
    r.roundtrip(
        &resp(&[b"ZRANGE", b"z", b"0", b"0", b"WITHSCORES"]),
        b"*2\r\n$1\r\na\r\n$3\r\n1.5\r\n",
    );
    r.hello3();
    r.roundtrip(&resp(&[b"ZSCORE", b"z", b"a"]), b",1.5\r\n");
    r.roundtrip(
        &resp(&[b"ZRANGE", b"z", b"0", b"0", b"WITHSCORES"]),
        b"*1\r\n*2\r\n$1\r\na\r\n,1.5\r\n",
    );
    r.roundtrip(&resp(&[b"ZPOPMIN", b"z"]), b"*2\r\n$1\r\na\r\n,1.5\r\n");
    r.roundtrip(
        &resp(&[b"ZPOPMIN", b"z", b"1"]),
        b"*1\r\n*2\r\n$1\r\nb\r\n,2\r\n",
    );
}

#[test]
fn union_and_intersection_store() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: i64 = run(&mut c, &["ZADD", "a", "1", "x", "2", "y"]).unwrap();
    let _: i64 = run(&mut c, &["ZADD", "b", "10", "y", "20", "z"]).unwrap();
    let _: i64 = run(&mut c, &["SADD", "s", "y"]).unwrap();
    assert_eq!(
        run::<i64>(&mut c, &["ZUNIONSTORE", "u", "2", "a", "b"]).unwrap(),
        3
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["ZRANGE", "u", "0", "-1", "WITHSCORES"]).unwrap(),
        ["x", "1", "y", "12", "z", "20"]
    );
    assert_eq!(
        run::<i64>(
            &mut c,
            &[
                "ZINTERSTORE",
                "i",
                "3",
                "a",
                "b",
                "s",
                "WEIGHTS",
                "1",
                "2",
                "3",
                "AGGREGATE",
                "MAX"
            ]
        )
        .unwrap(),
        1
    );
    assert_eq!(run::<String>(&mut c, &["ZSCORE", "i", "y"]).unwrap(), "20");
    assert_eq!(
        run::<i64>(&mut c, &["ZINTERSTORE", "i", "2", "a", "nokey"]).unwrap(),
        0
    );
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "i"]).unwrap(), 0);
    assert_eq!(
        err(&mut c, &["ZUNIONSTORE", "u", "0", "a"]),
        "ERR at least 1 input key is needed for 'zunionstore' command"
    );
    assert_eq!(
        err(&mut c, &["ZUNIONSTORE", "u", "1", "a", "WEIGHTS", "x"]),
        "ERR weight value is not a float"
    );
    assert_eq!(
        err(&mut c, &["ZUNIONSTORE", "u", "1", "a", "AGGREGATE", "avg"]),
        "ERR syntax error"
    );
}
