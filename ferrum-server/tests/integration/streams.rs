//! Stream commands over a real socket.

use crate::blocking::wait_blocked;
use crate::common::{err, resp, run, TestServer};

type Entry = (String, Vec<String>);

#[test]
fn xadd_ids_and_errors() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(
        run::<String>(&mut c, &["XADD", "s", "5-1", "f", "v"]).unwrap(),
        "5-1"
    );
    assert_eq!(
        run::<String>(&mut c, &["XADD", "s", "5-*", "f", "v"]).unwrap(),
        "5-2"
    );
    assert_eq!(
        run::<String>(&mut c, &["XADD", "s", "7", "f", "v"]).unwrap(),
        "7-0"
    );
    let auto: String = run(&mut c, &["XADD", "s", "*", "f", "v"]).unwrap();
    assert!(auto.ends_with("-0"), "{auto}");
    assert_eq!(
        err(&mut c, &["XADD", "s", "6-0", "f", "v"]),
        "ERR The ID specified in XADD is equal or smaller than the target stream top item"
    );
    assert_eq!(
        err(&mut c, &["XADD", "t", "0-0", "f", "v"]),
        "ERR The ID specified in XADD must be greater than 0-0"
    );
    assert_eq!(
        err(&mut c, &["XADD", "t", "x-1", "f", "v"]),
        "ERR Invalid stream ID specified as stream command argument"
    );
    assert_eq!(
        err(&mut c, &["XADD", "t", "*", "f"]),
        "ERR wrong number of arguments for 'xadd' command"
    );
    assert_eq!(
        run::<Option<String>>(&mut c, &["XADD", "t", "NOMKSTREAM", "*", "f", "v"]).unwrap(),
        None
    );
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "t"]).unwrap(), 0);
    assert_eq!(run::<i64>(&mut c, &["XLEN", "s"]).unwrap(), 4);
    assert_eq!(run::<String>(&mut c, &["TYPE", "s"]).unwrap(), "stream");
    assert_eq!(
        run::<String>(&mut c, &["OBJECT", "ENCODING", "s"]).unwrap(),
        "stream"
    );
}

#[test]
fn ranges_delete_and_trim() {
    let s = TestServer::start();
    let mut c = s.client();
    for i in 1..=5 {
        let _: String = run(
            &mut c,
            &["XADD", "s", &format!("{i}-0"), "n", &i.to_string()],
        )
        .unwrap();
    }
    let all: Vec<Entry> = run(&mut c, &["XRANGE", "s", "-", "+"]).unwrap();
    assert_eq!(all.len(), 5);
    assert_eq!(
        all[0],
        ("1-0".to_string(), vec!["n".to_string(), "1".to_string()])
    );
    let some: Vec<Entry> = run(&mut c, &["XRANGE", "s", "(2-0", "4", "COUNT", "1"]).unwrap();
    assert_eq!(some[0].0, "3-0");
    let rev: Vec<Entry> = run(&mut c, &["XREVRANGE", "s", "+", "-", "COUNT", "2"]).unwrap();
    assert_eq!(
        rev.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(),
        ["5-0", "4-0"]
    );
    assert_eq!(run::<i64>(&mut c, &["XDEL", "s", "2-0", "9-0"]).unwrap(), 1);
    assert_eq!(
        run::<i64>(&mut c, &["XTRIM", "s", "MAXLEN", "2"]).unwrap(),
        2
    );
    assert_eq!(
        run::<i64>(&mut c, &["XTRIM", "s", "MINID", "5"]).unwrap(),
        1
    );
    assert_eq!(
        run::<i64>(&mut c, &["XTRIM", "s", "MAXLEN", "0"]).unwrap(),
        1
    );
    assert_eq!(
        run::<i64>(&mut c, &["EXISTS", "s"]).unwrap(),
        1,
        "an empty stream stays"
    );
    assert_eq!(
        err(&mut c, &["XTRIM", "s", "MAXLEN", "1", "LIMIT", "5"]),
        "ERR syntax error, LIMIT cannot be used without the special ~ option"
    );
    for i in 10..=260 {
        let _: String = run(
            &mut c,
            &[
                "XADD",
                "s",
                "MAXLEN",
                "~",
                "50",
                &format!("{i}-0"),
                "n",
                "v",
            ],
        )
        .unwrap();
    }
    let len: i64 = run(&mut c, &["XLEN", "s"]).unwrap();
    assert!(
        (50..150).contains(&len),
        "approximate trim keeps at least MAXLEN: {len}"
    );
    assert_eq!(
        run::<Vec<Entry>>(&mut c, &["XRANGE", "nokey", "-", "+"]).unwrap(),
        Vec::<Entry>::new()
    );
    let _: () = run(&mut c, &["SET", "str", "x"]).unwrap();
    assert_eq!(
        err(&mut c, &["XADD", "str", "*", "f", "v"]),
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    );
}

#[test]
fn xread_reads_after_the_given_ids_with_redis_errors() {
    let s = TestServer::start();
    let mut c = s.client();
    run::<String>(&mut c, &["XADD", "s1", "1-1", "a", "1"]).unwrap();
    run::<String>(&mut c, &["XADD", "s1", "2-1", "b", "2"]).unwrap();
    run::<String>(&mut c, &["XADD", "s2", "5-0", "c", "3"]).unwrap();
    let v: redis::Value = run(
        &mut c,
        &["XREAD", "COUNT", "1", "STREAMS", "s1", "s2", "1-1", "0"],
    )
    .unwrap();
    let bulk = |s: &str| redis::Value::BulkString(s.as_bytes().to_vec());
    let entry = |id: &str, f: &str, v: &str| {
        redis::Value::Array(vec![bulk(id), redis::Value::Array(vec![bulk(f), bulk(v)])])
    };
    assert_eq!(
        v,
        redis::Value::Array(vec![
            redis::Value::Array(vec![
                bulk("s1"),
                redis::Value::Array(vec![entry("2-1", "b", "2")])
            ]),
            redis::Value::Array(vec![
                bulk("s2"),
                redis::Value::Array(vec![entry("5-0", "c", "3")])
            ]),
        ])
    );
    // `$` and a missing key: nothing to read, a null reply.
    let none: redis::Value = run(&mut c, &["XREAD", "STREAMS", "s1", "nokey", "$", "0"]).unwrap();
    assert_eq!(none, redis::Value::Nil);
    assert_eq!(
        err(&mut c, &["XREAD", "STREAMS", "s1", "0", "x"]),
        "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."
    );
    assert!(err(&mut c, &["XREAD", "STREAMS", "s1", ">"]).contains("XREADGROUP"));
    assert_eq!(
        err(&mut c, &["XREAD", "BLOCK", "-1", "STREAMS", "s1", "0"]),
        "ERR timeout is negative"
    );
    assert_eq!(
        err(&mut c, &["XREAD", "FOO", "STREAMS", "s1", "0"]),
        "ERR syntax error"
    );
    run::<()>(&mut c, &["SET", "str", "x"]).unwrap();
    assert!(err(&mut c, &["XREAD", "STREAMS", "str", "0"]).starts_with("WRONGTYPE"));
}

#[test]
fn blocked_xread_readers_are_all_served_by_one_xadd() {
    let s = TestServer::start();
    let mut c = s.client();
    let req = resp(&[b"XREAD", b"BLOCK", b"0", b"STREAMS", b"bk", b"$"]);
    let (mut r1, mut r2) = (s.raw(), s.raw());
    r1.send(&req);
    r2.send(&req);
    wait_blocked(&mut c, 2);
    // A write of another type under the same name wakes nobody.
    run::<i64>(&mut c, &["LPUSH", "other", "x"]).unwrap();
    run::<String>(&mut c, &["XADD", "bk", "7-0", "k", "v"]).unwrap();
    let want = b"*1\r\n*2\r\n$2\r\nbk\r\n*1\r\n*2\r\n$3\r\n7-0\r\n*2\r\n$1\r\nk\r\n$1\r\nv\r\n";
    assert_eq!(r1.read_exact_len(want.len()), want);
    assert_eq!(r2.read_exact_len(want.len()), want);
    // A timeout answers null.
    let mut r3 = s.raw();
    r3.send(&resp(&[b"XREAD", b"BLOCK", b"20", b"STREAMS", b"bk", b"$"]));
    assert_eq!(r3.read_exact_len(5), b"*-1\r\n");
}

#[test]
fn xinfo_stream_reports_counters_and_xsetid_moves_them() {
    let s = TestServer::start();
    let mut c = s.client();
    for id in ["1-0", "2-0", "3-0"] {
        run::<String>(&mut c, &["XADD", "x", id, "f", "v"]).unwrap();
    }
    run::<i64>(&mut c, &["XDEL", "x", "1-0"]).unwrap();
    let info: std::collections::HashMap<String, redis::Value> =
        run(&mut c, &["XINFO", "STREAM", "x"]).unwrap();
    let text = |v: &redis::Value| match v {
        redis::Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        redis::Value::Int(n) => n.to_string(),
        other => format!("{other:?}"),
    };
    assert_eq!(text(&info["length"]), "2");
    assert_eq!(text(&info["entries-added"]), "3");
    assert_eq!(text(&info["last-generated-id"]), "3-0");
    assert_eq!(text(&info["max-deleted-entry-id"]), "1-0");
    assert_eq!(text(&info["recorded-first-entry-id"]), "2-0");
    assert_eq!(text(&info["groups"]), "0");
    let full: std::collections::HashMap<String, redis::Value> =
        run(&mut c, &["XINFO", "STREAM", "x", "FULL", "COUNT", "1"]).unwrap();
    assert!(matches!(&full["entries"], redis::Value::Array(e) if e.len() == 1));

    assert_eq!(
        run::<String>(
            &mut c,
            &[
                "XSETID",
                "x",
                "9-0",
                "ENTRIESADDED",
                "7",
                "MAXDELETEDID",
                "4-0"
            ]
        )
        .unwrap(),
        "OK"
    );
    let info: std::collections::HashMap<String, redis::Value> =
        run(&mut c, &["XINFO", "STREAM", "x"]).unwrap();
    assert_eq!(text(&info["last-generated-id"]), "9-0");
    assert_eq!(text(&info["entries-added"]), "7");
    assert_eq!(text(&info["max-deleted-entry-id"]), "4-0");
    assert!(err(&mut c, &["XADD", "x", "8-0", "f", "v"]).contains("equal or smaller"));

    let cases: &[(&[&str], &str)] = &[
        (
            &["XSETID", "x", "2-0"],
            "ERR The ID specified in XSETID is smaller than the target stream top item",
        ),
        (&["XSETID", "nokey", "1-1"], "ERR no such key"),
        (&["XSETID", "x", "10-0", "0"], "ERR syntax error"),
        (
            &[
                "XSETID",
                "x",
                "10-0",
                "ENTRIESADDED",
                "-1",
                "MAXDELETEDID",
                "0-0",
            ],
            "ERR entries_added must be positive",
        ),
        (
            &[
                "XSETID",
                "x",
                "10-0",
                "ENTRIESADDED",
                "9",
                "MAXDELETEDID",
                "11-0",
            ],
            "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id",
        ),
        (
            &[
                "XSETID",
                "x",
                "10-0",
                "ENTRIESADDED",
                "1",
                "MAXDELETEDID",
                "0-0",
            ],
            "ERR The entries_added specified in XSETID is smaller than the target stream length",
        ),
        (
            &["XINFO", "HELP", "x"],
            "ERR wrong number of arguments for 'xinfo|help' command",
        ),
        (&["XINFO", "STREAM", "nokey"], "ERR no such key"),
        (
            &["XINFO", "CONSUMERS", "x", "g"],
            "NOGROUP No such consumer group 'g' for key name 'x'",
        ),
    ];
    for (args, want) in cases {
        assert_eq!(&err(&mut c, args), want, "{args:?}");
    }
}

#[test]
fn consumer_groups_deliver_track_and_acknowledge() {
    let s = TestServer::start();
    let mut c = s.client();
    assert!(err(&mut c, &["XGROUP", "CREATE", "s", "g", "$"]).contains("MKSTREAM"));
    assert_eq!(
        run::<String>(&mut c, &["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]).unwrap(),
        "OK"
    );
    assert_eq!(
        err(&mut c, &["XGROUP", "CREATE", "s", "g", "$"]),
        "BUSYGROUP Consumer Group name already exists"
    );
    for id in ["1-0", "2-0", "3-0"] {
        run::<String>(&mut c, &["XADD", "s", id, "f", "v"]).unwrap();
    }
    let ids = |v: redis::Value| -> Vec<String> {
        let redis::Value::Array(streams) = v else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for st in streams {
            let redis::Value::Array(kv) = st else {
                continue;
            };
            let Some(redis::Value::Array(entries)) = kv.get(1) else {
                continue;
            };
            for e in entries {
                if let redis::Value::Array(pair) = e {
                    if let Some(redis::Value::BulkString(id)) = pair.first() {
                        out.push(String::from_utf8_lossy(id).into_owned());
                    }
                }
            }
        }
        out
    };
    let a = run(
        &mut c,
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "c1",
            "COUNT",
            "1",
            "STREAMS",
            "s",
            ">",
        ],
    )
    .unwrap();
    assert_eq!(ids(a), ["1-0"]);
    let b = run(
        &mut c,
        &["XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">"],
    )
    .unwrap();
    assert_eq!(ids(b), ["2-0", "3-0"]);
    // History: only what c1 owns.
    let h = run(
        &mut c,
        &["XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", "0"],
    )
    .unwrap();
    assert_eq!(ids(h), ["1-0"]);
    let summary: redis::Value = run(&mut c, &["XPENDING", "s", "g"]).unwrap();
    let redis::Value::Array(parts) = summary else {
        panic!("{summary:?}")
    };
    assert_eq!(parts[0], redis::Value::Int(3));
    let ext: Vec<(String, String, i64, i64)> =
        run(&mut c, &["XPENDING", "s", "g", "-", "+", "10", "c2"]).unwrap();
    assert_eq!(
        ext.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ["2-0", "3-0"]
    );
    assert!(ext.iter().all(|r| r.1 == "c2" && r.3 == 1));
    assert_eq!(
        run::<i64>(&mut c, &["XACK", "s", "g", "1-0", "1-0", "9-0"]).unwrap(),
        1
    );
    assert_eq!(
        run::<i64>(&mut c, &["XGROUP", "DELCONSUMER", "s", "g", "c2"]).unwrap(),
        2
    );
    assert_eq!(
        run::<i64>(&mut c, &["XGROUP", "CREATECONSUMER", "s", "g", "c9"]).unwrap(),
        1
    );
    assert_eq!(
        run::<i64>(&mut c, &["XGROUP", "CREATECONSUMER", "s", "g", "c9"]).unwrap(),
        0
    );
    assert!(err(
        &mut c,
        &["XREADGROUP", "GROUP", "nog", "c", "STREAMS", "s", ">"]
    )
    .starts_with("NOGROUP"));
    assert!(err(
        &mut c,
        &["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "$"]
    )
    .contains("meaningless"));
    assert_eq!(
        err(&mut c, &["XGROUP", "HELP", "x"]),
        "ERR wrong number of arguments for 'xgroup|help' command"
    );
    assert_eq!(
        run::<i64>(&mut c, &["XGROUP", "DESTROY", "s", "g"]).unwrap(),
        1
    );
    assert_eq!(
        run::<i64>(&mut c, &["XGROUP", "DESTROY", "s", "g"]).unwrap(),
        0
    );
}

#[test]
fn blocked_xreadgroup_gets_the_next_entry() {
    let s = TestServer::start();
    let mut c = s.client();
    run::<String>(&mut c, &["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]).unwrap();
    let mut r = s.raw();
    r.send(&resp(&[
        b"XREADGROUP",
        b"GROUP",
        b"g",
        b"c",
        b"BLOCK",
        b"0",
        b"STREAMS",
        b"s",
        b">",
    ]));
    wait_blocked(&mut c, 1);
    run::<String>(&mut c, &["XADD", "s", "5-0", "k", "v"]).unwrap();
    let want = b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\nk\r\n$1\r\nv\r\n";
    assert_eq!(r.read_exact_len(want.len()), want);
    let pending: Vec<(String, String, i64, i64)> =
        run(&mut c, &["XPENDING", "s", "g", "-", "+", "10"]).unwrap();
    assert_eq!(pending[0].0, "5-0");
    assert_eq!(pending[0].1, "c");
}

#[test]
fn xclaim_and_xautoclaim_move_pending_entries() {
    let s = TestServer::start();
    let mut c = s.client();
    run::<String>(&mut c, &["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]).unwrap();
    for id in ["1-0", "2-0", "3-0", "4-0"] {
        run::<String>(&mut c, &["XADD", "s", id, "f", "v"]).unwrap();
    }
    run::<redis::Value>(
        &mut c,
        &["XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">"],
    )
    .unwrap();
    let ids: Vec<String> = run(
        &mut c,
        &["XCLAIM", "s", "g", "c2", "0", "1-0", "2-0", "JUSTID"],
    )
    .unwrap();
    assert_eq!(ids, ["1-0", "2-0"]);
    // A large min-idle-time leaves the entry where it is.
    let none: Vec<String> = run(&mut c, &["XCLAIM", "s", "g", "c2", "3600000", "3-0"]).unwrap();
    assert!(none.is_empty());
    let rows: Vec<(String, String, i64, i64)> =
        run(&mut c, &["XPENDING", "s", "g", "-", "+", "10"]).unwrap();
    let owners: Vec<(&str, &str, i64)> = rows
        .iter()
        .map(|r| (r.0.as_str(), r.1.as_str(), r.3))
        .collect();
    assert_eq!(
        owners,
        [
            ("1-0", "c2", 1),
            ("2-0", "c2", 1),
            ("3-0", "c1", 1),
            ("4-0", "c1", 1)
        ]
    );
    // XAUTOCLAIM drops the pending entry whose stream entry was deleted.
    run::<i64>(&mut c, &["XDEL", "s", "3-0"]).unwrap();
    let (cursor, claimed, deleted): (String, Vec<String>, Vec<String>) = run(
        &mut c,
        &[
            "XAUTOCLAIM",
            "s",
            "g",
            "c3",
            "0",
            "0",
            "COUNT",
            "3",
            "JUSTID",
        ],
    )
    .unwrap();
    assert_eq!(
        (cursor.as_str(), claimed, deleted),
        (
            "4-0",
            vec!["1-0".to_owned(), "2-0".to_owned()],
            vec!["3-0".to_owned()]
        )
    );
    let cases: &[(&[&str], &str)] = &[
        (
            &["XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "0"],
            "ERR COUNT must be > 0",
        ),
        (
            &["XCLAIM", "s", "nog", "c", "0", "1-0"],
            "NOGROUP No such key 's' or consumer group 'nog'",
        ),
        (
            &["XCLAIM", "s", "g", "c", "x", "1-0"],
            "ERR Invalid min-idle-time argument for XCLAIM",
        ),
        (
            &["XCLAIM", "s", "g", "c", "0", "1-0", "bogus"],
            "ERR Unrecognized XCLAIM option 'bogus'",
        ),
    ];
    for (args, want) in cases {
        assert_eq!(&err(&mut c, args), want, "{args:?}");
    }
}

#[test]
fn blocked_xreadgroup_is_told_when_its_key_or_group_goes_away() {
    let s = TestServer::start();
    let mut c = s.client();
    let req = resp(&[
        b"XREADGROUP",
        b"GROUP",
        b"g",
        b"alice",
        b"BLOCK",
        b"0",
        b"STREAMS",
        b"s",
        b">",
    ]);
    let gone = b"-UNBLOCKED the stream key no longer exists\r\n";
    let nogroup = b"-NOGROUP the consumer group this client was blocked on no longer exists\r\n";
    let cases: [(&[&str], &[u8]); 3] = [
        (&["DEL", "s"], gone),
        (&["SET", "s", "x"], gone),
        (&["XGROUP", "DESTROY", "s", "g"], nogroup),
    ];
    for (action, want) in cases {
        run::<()>(&mut c, &["DEL", "s"]).unwrap();
        run::<String>(&mut c, &["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]).unwrap();
        let mut r = s.raw();
        r.send(&req);
        wait_blocked(&mut c, 1);
        run::<redis::Value>(&mut c, action).unwrap();
        assert_eq!(r.read_exact_len(want.len()), want, "{action:?}");
        wait_blocked(&mut c, 0);
    }
}

/// `XGROUP CREATE`/`SETID` with `$` leave the group's read counter unknown,
/// as Redis 7.0.15 does (checked against redis-server: `entries-read` is
/// nil and XINFO estimates the lag), until a read over a stream without
/// tombstones in range counts it again.
#[test]
fn a_group_created_at_dollar_has_no_read_counter_yet() {
    let s = TestServer::start();
    let mut c = s.client();
    // (entries-read, lag) of the one group of `key`.
    let group = |c: &mut redis::Connection, key: &str| -> (Option<i64>, Option<i64>) {
        let v: Vec<Vec<redis::Value>> = run(c, &["XINFO", "GROUPS", key]).unwrap();
        let field = |name: &str| {
            let i = v[0]
                .iter()
                .position(|x| *x == redis::Value::BulkString(name.as_bytes().to_vec()))
                .unwrap();
            match &v[0][i + 1] {
                redis::Value::Int(n) => Some(*n),
                redis::Value::Nil => None,
                other => panic!("{name}: {other:?}"),
            }
        };
        (field("entries-read"), field("lag"))
    };
    for id in ["1-0", "2-0", "3-0"] {
        let _: String = run(&mut c, &["XADD", "b", id, "f", "v"]).unwrap();
    }
    let _: i64 = run(&mut c, &["XDEL", "b", "1-0", "2-0", "3-0"]).unwrap();
    let _: () = run(&mut c, &["XGROUP", "CREATE", "b", "g", "$"]).unwrap();
    assert_eq!(group(&mut c, "b"), (None, Some(0)));
    let _: String = run(&mut c, &["XADD", "b", "4-0", "f", "v"]).unwrap();
    let _: redis::Value = run(
        &mut c,
        &["XREADGROUP", "GROUP", "g", "c", "STREAMS", "b", ">"],
    )
    .unwrap();
    assert_eq!(group(&mut c, "b"), (Some(4), Some(0)));
    let _: () = run(&mut c, &["XGROUP", "SETID", "b", "g", "$"]).unwrap();
    assert_eq!(group(&mut c, "b"), (None, Some(0)));
}
