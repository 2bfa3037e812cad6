//! String commands: replies, options and error cases.

use crate::common::{err, run, TestServer};

#[test]
fn get_set_and_their_options() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(run::<Option<String>>(&mut c, &["GET", "k"]).unwrap(), None);
    assert_eq!(run::<String>(&mut c, &["SET", "k", "v1"]).unwrap(), "OK");
    assert_eq!(run::<String>(&mut c, &["GET", "k"]).unwrap(), "v1");
    // NX refuses an existing key, XX a missing one; both reply nil.
    assert_eq!(
        run::<Option<String>>(&mut c, &["SET", "k", "v2", "NX"]).unwrap(),
        None
    );
    assert_eq!(
        run::<Option<String>>(&mut c, &["SET", "new", "v", "XX"]).unwrap(),
        None
    );
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "new"]).unwrap(), 0);
    // GET returns the old value, and nil when there was none.
    assert_eq!(
        run::<Option<String>>(&mut c, &["SET", "k", "v3", "GET"])
            .unwrap()
            .as_deref(),
        Some("v1")
    );
    assert_eq!(
        run::<Option<String>>(&mut c, &["SET", "fresh", "x", "GET"]).unwrap(),
        None
    );
    assert_eq!(
        run::<Option<String>>(&mut c, &["SET", "k", "v4", "NX", "GET"])
            .unwrap()
            .as_deref(),
        Some("v3")
    );
    assert_eq!(run::<String>(&mut c, &["GET", "k"]).unwrap(), "v3");
    // Expiry options.
    assert_eq!(
        run::<String>(&mut c, &["SET", "t", "v", "EX", "100"]).unwrap(),
        "OK"
    );
    assert_eq!(run::<i64>(&mut c, &["TTL", "t"]).unwrap(), 100);
    assert_eq!(
        run::<String>(&mut c, &["SET", "t", "v", "PX", "5000"]).unwrap(),
        "OK"
    );
    // Only bounds: the time between SET and PTTL depends on the machine's
    // load.
    let pttl: i64 = run(&mut c, &["PTTL", "t"]).unwrap();
    assert!((1..=5000).contains(&pttl), "{pttl}");
    assert_eq!(
        run::<String>(&mut c, &["SET", "t", "w", "KEEPTTL"]).unwrap(),
        "OK"
    );
    assert!(run::<i64>(&mut c, &["PTTL", "t"]).unwrap() > 0);
    assert_eq!(run::<String>(&mut c, &["SET", "t", "w"]).unwrap(), "OK");
    assert_eq!(run::<i64>(&mut c, &["TTL", "t"]).unwrap(), -1);
    let far = 4_000_000_000u64.to_string();
    assert_eq!(
        run::<String>(&mut c, &["SET", "t", "v", "EXAT", &far]).unwrap(),
        "OK"
    );
    assert_eq!(
        run::<i64>(&mut c, &["EXPIRETIME", "t"]).unwrap(),
        4_000_000_000
    );
    assert_eq!(
        run::<String>(&mut c, &["SET", "t", "v", "PXAT", "4000000000123"]).unwrap(),
        "OK"
    );
    assert_eq!(
        run::<i64>(&mut c, &["PEXPIRETIME", "t"]).unwrap(),
        4_000_000_000_123
    );
    // An absolute time in the past deletes the key.
    assert_eq!(
        run::<String>(&mut c, &["SET", "t", "v", "PXAT", "1"]).unwrap(),
        "OK"
    );
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "t"]).unwrap(), 0);
}

#[test]
fn set_rejects_bad_options() {
    let s = TestServer::start();
    let mut c = s.client();
    for args in [
        &["SET", "k", "v", "NX", "XX"][..],
        &["SET", "k", "v", "EX", "1", "PX", "1"],
        &["SET", "k", "v", "KEEPTTL", "EX", "1"],
        &["SET", "k", "v", "EX"],
        &["SET", "k", "v", "BOGUS"],
    ] {
        assert_eq!(err(&mut c, args), "ERR syntax error", "{args:?}");
    }
    assert_eq!(
        err(&mut c, &["SET", "k", "v", "EX", "0"]),
        "ERR invalid expire time in 'set' command"
    );
    assert_eq!(
        err(&mut c, &["SET", "k", "v", "EX", "-5"]),
        "ERR invalid expire time in 'set' command"
    );
    assert_eq!(
        err(&mut c, &["SET", "k", "v", "EX", "abc"]),
        "ERR value is not an integer or out of range"
    );
    assert_eq!(
        err(&mut c, &["SET", "k"]),
        "ERR wrong number of arguments for 'set' command"
    );
    assert_eq!(
        err(&mut c, &["SETEX", "k", "0", "v"]),
        "ERR invalid expire time in 'setex' command"
    );
    assert_eq!(
        err(&mut c, &["PSETEX", "k", "-1", "v"]),
        "ERR invalid expire time in 'psetex' command"
    );
    // Nothing was stored by any of the failures.
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "k"]).unwrap(), 0);
}

#[test]
fn setnx_setex_psetex_getset_getdel() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(run::<i64>(&mut c, &["SETNX", "k", "a"]).unwrap(), 1);
    assert_eq!(run::<i64>(&mut c, &["SETNX", "k", "b"]).unwrap(), 0);
    assert_eq!(
        run::<String>(&mut c, &["SETEX", "k", "10", "c"]).unwrap(),
        "OK"
    );
    assert_eq!(run::<i64>(&mut c, &["TTL", "k"]).unwrap(), 10);
    assert_eq!(
        run::<String>(&mut c, &["PSETEX", "k", "10000", "d"]).unwrap(),
        "OK"
    );
    assert_eq!(run::<String>(&mut c, &["GETSET", "k", "e"]).unwrap(), "d");
    assert_eq!(
        run::<i64>(&mut c, &["TTL", "k"]).unwrap(),
        -1,
        "GETSET clears the TTL"
    );
    assert_eq!(
        run::<Option<String>>(&mut c, &["GETSET", "missing", "x"]).unwrap(),
        None
    );
    assert_eq!(run::<String>(&mut c, &["GETDEL", "k"]).unwrap(), "e");
    assert_eq!(
        run::<Option<String>>(&mut c, &["GETDEL", "k"]).unwrap(),
        None
    );
}

#[test]
fn getex_changes_expiry() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "k", "v"]).unwrap();
    assert_eq!(
        run::<String>(&mut c, &["GETEX", "k", "EX", "50"]).unwrap(),
        "v"
    );
    assert_eq!(run::<i64>(&mut c, &["TTL", "k"]).unwrap(), 50);
    assert_eq!(
        run::<String>(&mut c, &["GETEX", "k", "PERSIST"]).unwrap(),
        "v"
    );
    assert_eq!(run::<i64>(&mut c, &["TTL", "k"]).unwrap(), -1);
    assert_eq!(run::<String>(&mut c, &["GETEX", "k"]).unwrap(), "v");
    assert_eq!(
        run::<Option<String>>(&mut c, &["GETEX", "nokey", "EX", "5"]).unwrap(),
        None
    );
    assert_eq!(err(&mut c, &["GETEX", "k", "EX"]), "ERR syntax error");
    assert_eq!(
        err(&mut c, &["GETEX", "k", "EX", "0"]),
        "ERR invalid expire time in 'getex' command"
    );
}

#[test]
fn mget_mset_msetnx() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(
        run::<String>(&mut c, &["MSET", "a", "1", "b", "2", "c", "3"]).unwrap(),
        "OK"
    );
    let got: Vec<Option<String>> = run(&mut c, &["MGET", "a", "nope", "c"]).unwrap();
    assert_eq!(got, [Some("1".into()), None, Some("3".into())]);
    assert_eq!(
        err(&mut c, &["MSET", "a", "1", "b"]),
        "ERR wrong number of arguments for 'mset' command"
    );
    assert_eq!(
        run::<i64>(&mut c, &["MSETNX", "x", "1", "a", "9"]).unwrap(),
        0
    );
    assert_eq!(
        run::<i64>(&mut c, &["EXISTS", "x"]).unwrap(),
        0,
        "MSETNX sets nothing when any key exists"
    );
    assert_eq!(
        run::<i64>(&mut c, &["MSETNX", "x", "1", "y", "2"]).unwrap(),
        1
    );
    assert_eq!(run::<String>(&mut c, &["GET", "y"]).unwrap(), "2");
}

#[test]
fn counters() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(run::<i64>(&mut c, &["INCR", "n"]).unwrap(), 1);
    assert_eq!(run::<i64>(&mut c, &["INCRBY", "n", "10"]).unwrap(), 11);
    assert_eq!(run::<i64>(&mut c, &["DECR", "n"]).unwrap(), 10);
    assert_eq!(run::<i64>(&mut c, &["DECRBY", "n", "-5"]).unwrap(), 15);
    let _: () = run(&mut c, &["SET", "s", "abc"]).unwrap();
    assert_eq!(
        err(&mut c, &["INCR", "s"]),
        "ERR value is not an integer or out of range"
    );
    assert_eq!(
        err(&mut c, &["INCRBY", "n", "x"]),
        "ERR value is not an integer or out of range"
    );
    let _: () = run(&mut c, &["SET", "big", "9223372036854775807"]).unwrap();
    assert_eq!(
        err(&mut c, &["INCR", "big"]),
        "ERR increment or decrement would overflow"
    );
    assert_eq!(
        err(&mut c, &["DECRBY", "n", "-9223372036854775808"]),
        "ERR decrement would overflow"
    );
    // The TTL survives an increment.
    let _: () = run(&mut c, &["SET", "t", "1", "EX", "100"]).unwrap();
    let _: i64 = run(&mut c, &["INCR", "t"]).unwrap();
    assert_eq!(run::<i64>(&mut c, &["TTL", "t"]).unwrap(), 100);
    assert_eq!(
        run::<String>(&mut c, &["INCRBYFLOAT", "f", "10.5"]).unwrap(),
        "10.5"
    );
    assert_eq!(
        run::<String>(&mut c, &["INCRBYFLOAT", "f", "0.1"]).unwrap(),
        "10.6"
    );
    assert_eq!(
        run::<String>(&mut c, &["INCRBYFLOAT", "f", "-5.6"]).unwrap(),
        "5"
    );
    let _: () = run(&mut c, &["SET", "e", "5.0e3"]).unwrap();
    assert_eq!(
        run::<String>(&mut c, &["INCRBYFLOAT", "e", "200"]).unwrap(),
        "5200"
    );
    assert_eq!(
        err(&mut c, &["INCRBYFLOAT", "s", "1"]),
        "ERR value is not a valid float"
    );
    assert_eq!(
        err(&mut c, &["INCRBYFLOAT", "f", "nan"]),
        "ERR value is not a valid float"
    );
    assert_eq!(
        err(&mut c, &["INCRBYFLOAT", "f", "inf"]),
        "ERR increment would produce NaN or Infinity"
    );
}

#[test]
fn append_strlen_ranges() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(run::<i64>(&mut c, &["APPEND", "k", "Hello"]).unwrap(), 5);
    assert_eq!(run::<i64>(&mut c, &["APPEND", "k", " World"]).unwrap(), 11);
    assert_eq!(run::<i64>(&mut c, &["STRLEN", "k"]).unwrap(), 11);
    assert_eq!(run::<i64>(&mut c, &["STRLEN", "nokey"]).unwrap(), 0);
    assert_eq!(
        run::<String>(&mut c, &["GETRANGE", "k", "0", "4"]).unwrap(),
        "Hello"
    );
    assert_eq!(
        run::<String>(&mut c, &["GETRANGE", "k", "-5", "-1"]).unwrap(),
        "World"
    );
    assert_eq!(
        run::<String>(&mut c, &["GETRANGE", "k", "5", "2"]).unwrap(),
        ""
    );
    assert_eq!(
        run::<String>(&mut c, &["GETRANGE", "k", "0", "100"]).unwrap(),
        "Hello World"
    );
    assert_eq!(
        run::<String>(&mut c, &["GETRANGE", "nokey", "0", "1"]).unwrap(),
        ""
    );
    assert_eq!(
        run::<i64>(&mut c, &["SETRANGE", "k", "6", "Redis"]).unwrap(),
        11
    );
    assert_eq!(run::<String>(&mut c, &["GET", "k"]).unwrap(), "Hello Redis");
    assert_eq!(
        run::<i64>(&mut c, &["SETRANGE", "pad", "3", "x"]).unwrap(),
        4
    );
    assert_eq!(run::<Vec<u8>>(&mut c, &["GET", "pad"]).unwrap(), b"\0\0\0x");
    assert_eq!(
        run::<i64>(&mut c, &["SETRANGE", "empty", "5", ""]).unwrap(),
        0
    );
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "empty"]).unwrap(), 0);
    assert_eq!(
        err(&mut c, &["SETRANGE", "k", "-1", "x"]),
        "ERR offset is out of range"
    );
    assert_eq!(
        err(&mut c, &["SETRANGE", "k", "536870912", "x"]),
        "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
    );
}

#[test]
fn binary_safe_keys_and_values() {
    let s = TestServer::start();
    let mut c = s.client();
    let key = b"k\0\r\n\xff".to_vec();
    let val = b"\0\x01\x02\r\n".to_vec();
    let _: () = redis::cmd("SET").arg(&key).arg(&val).query(&mut c).unwrap();
    let got: Vec<u8> = redis::cmd("GET").arg(&key).query(&mut c).unwrap();
    assert_eq!(got, val);
}
