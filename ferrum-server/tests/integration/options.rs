//! Option parsing: which error wins when an option is short of values, has
//! a value of the wrong kind, or is followed by leftovers, for the commands
//! whose options the argument cursor (`cmd/args.rs`) reads. Every text was
//! checked against Redis 7.0.15.

use crate::common::{err, run, TestServer};

const SYNTAX: &str = "ERR syntax error";
const NOT_INTEGER: &str = "ERR value is not an integer or out of range";

fn check(c: &mut redis::Connection, cases: &[(&[&str], &str)]) {
    for (args, want) in cases {
        assert_eq!(err(c, args), *want, "{args:?}");
    }
}

#[test]
fn string_and_key_options() {
    let s = TestServer::start();
    let mut c = s.client();
    check(
        &mut c,
        &[
            (&["SET", "k", "v", "EX"], SYNTAX),
            (&["SET", "k", "v", "EX", "abc"], NOT_INTEGER),
            (
                &["SET", "k", "v", "EX", "0"],
                "ERR invalid expire time in 'set' command",
            ),
            (&["SET", "k", "v", "NX", "XX"], SYNTAX),
            (&["SET", "k", "v", "KEEPTTL", "EX", "10"], SYNTAX),
            (&["LCS", "a", "b", "MINMATCHLEN"], SYNTAX),
            (&["LCS", "a", "b", "MINMATCHLEN", "x"], NOT_INTEGER),
            (&["COPY", "a", "b", "DB"], SYNTAX),
            (&["COPY", "a", "b", "DB", "x"], NOT_INTEGER),
            (&["SCAN", "0", "COUNT", "0"], SYNTAX),
            (&["SORT", "l", "LIMIT", "0"], SYNTAX),
            (&["SORT", "l", "LIMIT", "x", "1"], NOT_INTEGER),
            (&["RESTORE", "k", "0", "x", "IDLETIME"], SYNTAX),
            (
                &["RESTORE", "k", "0", "x", "IDLETIME", "-1"],
                "ERR Invalid IDLETIME value, must be >= 0",
            ),
            (
                &["RESTORE", "k", "0", "x", "FREQ", "300"],
                "ERR Invalid FREQ value, must be >= 0 and <= 255",
            ),
            (
                &["RESTORE", "k", "0", "x", "IDLETIME", "1", "FREQ", "1"],
                SYNTAX,
            ),
            (&["BITFIELD", "b", "GET", "u8"], SYNTAX),
            (&["BITFIELD", "b", "OVERFLOW"], SYNTAX),
            (
                &["BITFIELD", "b", "OVERFLOW", "foo"],
                "ERR Invalid OVERFLOW type specified",
            ),
            (&["CLIENT", "TRACKING", "on", "REDIRECT"], SYNTAX),
            (&["CLIENT", "TRACKING", "on", "REDIRECT", "x"], NOT_INTEGER),
            (
                &["FUNCTION", "LIST", "LIBRARYNAME"],
                "ERR library name argument was not given",
            ),
            (
                &["FUNCTION", "LIST", "WITHCODE", "WITHCODE"],
                "ERR Unknown argument WITHCODE",
            ),
        ],
    );
    // SET's options still set: GET replies the old value, EX sets a TTL.
    let _: () = run(&mut c, &["SET", "k", "old"]).unwrap();
    let old: String = run(&mut c, &["SET", "k", "new", "get", "ex", "100"]).unwrap();
    assert_eq!(old, "old");
    assert!(run::<i64>(&mut c, &["TTL", "k"]).unwrap() > 0);
}

#[test]
fn sorted_set_and_geo_options() {
    let s = TestServer::start();
    let mut c = s.client();
    check(
        &mut c,
        &[
            (
                &["ZADD", "z", "INCR", "1", "a", "2", "b"],
                "ERR INCR option supports a single increment-element pair",
            ),
            // LIMIT needs both values before either is read.
            (&["ZRANGE", "z", "0", "-1", "LIMIT", "x"], SYNTAX),
            (&["ZRANGE", "z", "0", "-1", "LIMIT", "x", "1"], NOT_INTEGER),
            (
                &["ZRANGEBYSCORE", "z", "0", "1", "LIMIT", "0", "x"],
                NOT_INTEGER,
            ),
            (&["ZUNION", "2", "a", "b", "WEIGHTS", "1"], SYNTAX),
            (
                &["ZUNION", "2", "a", "b", "WEIGHTS", "1", "x"],
                "ERR weight value is not a float",
            ),
            (&["ZUNION", "2", "a", "b", "AGGREGATE"], SYNTAX),
            (&["GEOADD", "g", "NX", "XX", "1", "2", "m"], SYNTAX),
            (
                &[
                    "GEOSEARCH",
                    "g",
                    "FROMLONLAT",
                    "1",
                    "2",
                    "BYBOX",
                    "x",
                    "2",
                    "m",
                ],
                "ERR need numeric width",
            ),
        ],
    );
}

#[test]
fn list_and_stream_options() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: i64 = run(&mut c, &["RPUSH", "l", "3", "1", "2"]).unwrap();
    let _: String = run(&mut c, &["XADD", "s", "1-0", "f", "v"]).unwrap();
    let _: () = run(&mut c, &["XGROUP", "CREATE", "s", "g", "0"]).unwrap();
    check(
        &mut c,
        &[
            (&["LPOS", "l", "a", "RANK"], SYNTAX),
            (&["XADD", "s", "MAXLEN", "x", "*"], NOT_INTEGER),
            (
                &[
                    "XADD", "s", "MAXLEN", "~", "5", "LIMIT", "-1", "*", "f", "v",
                ],
                "ERR The LIMIT argument must be >= 0.",
            ),
            (
                &["XADD", "s", "MAXLEN", "5", "LIMIT", "10", "*", "f", "v"],
                "ERR syntax error, LIMIT cannot be used without the special ~ option",
            ),
            (&["XTRIM", "s", "MAXLEN", "1", "foo"], SYNTAX),
            (
                &["XREAD", "BLOCK", "-1", "STREAMS", "s", "0"],
                "ERR timeout is negative",
            ),
            (&["XREAD", "COUNT", "1", "BLOCK"], SYNTAX),
            (
                &["XSETID", "s", "1-1", "ENTRIESADDED", "-1"],
                "ERR entries_added must be positive",
            ),
            (
                &["XCLAIM", "s", "g", "c", "0", "0-1", "IDLE", "x"],
                "ERR Invalid IDLE option argument for XCLAIM",
            ),
            (
                &["XCLAIM", "s", "g", "c", "0", "0-1", "FOO"],
                "ERR Unrecognized XCLAIM option 'FOO'",
            ),
            (
                &["XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "0"],
                "ERR COUNT must be > 0",
            ),
        ],
    );
    let ids: Vec<String> = run(
        &mut c,
        &[
            "XCLAIM",
            "s",
            "g",
            "c",
            "0",
            "1-0",
            "FORCE",
            "JUSTID",
            "RETRYCOUNT",
            "5",
        ],
    )
    .unwrap();
    assert_eq!(ids, ["1-0"]);
}

/// Where Redis reads a key before its options, or names the option or
/// subcommand in its error, checked against Redis 7.0.15.
#[test]
fn the_errors_that_name_what_was_wrong() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: i64 = run(&mut c, &["ZADD", "z", "1", "a"]).unwrap();
    let _: i64 = run(&mut c, &["HSET", "h", "f", "v"]).unwrap();
    let _: String = run(&mut c, &["XADD", "s", "1-0", "f", "v"]).unwrap();
    let bylex = "ERR syntax error, WITHSCORES not supported in combination with BYLEX";
    check(
        &mut c,
        &[
            (&["ZRANGEBYLEX", "z", "-", "+", "WITHSCORES"], bylex),
            (&["ZRANGE", "z", "-", "+", "BYLEX", "WITHSCORES"], bylex),
            (&["HSCAN", "h", "0", "COUNT", "x"], NOT_INTEGER),
            (
                &["SSCAN", "h", "0", "COUNT", "x"],
                "WRONGTYPE Operation against a key holding the wrong kind of value",
            ),
            (&["HELLO", "3", "AUTH", "a"], "ERR Syntax error in HELLO option 'AUTH'"),
            (&["hello", "3", "setname"], "ERR Syntax error in HELLO option 'setname'"),
            (
                &["HELLO", "3", "AUTH", "u", "wrong", "BOGUS"],
                "ERR Syntax error in HELLO option 'BOGUS'",
            ),
            (
                &["XGROUP", "SETID", "s", "g", "0", "x", "y"],
                "ERR unknown subcommand or wrong number of arguments for 'SETID'. Try XGROUP HELP.",
            ),
            (
                &["XGROUP", "create", "s", "g2", "$", "MKSTREAM", "x"],
                "ERR unknown subcommand or wrong number of arguments for 'create'. Try XGROUP HELP.",
            ),
        ],
    );
    // A missing key answers an empty scan whatever its options say.
    for cmd in ["HSCAN", "SSCAN", "ZSCAN"] {
        let (cursor, items): (String, Vec<String>) =
            run(&mut c, &[cmd, "nokey", "0", "COUNT", "x"]).unwrap();
        assert_eq!((cursor.as_str(), items.len()), ("0", 0), "{cmd}");
    }
}
