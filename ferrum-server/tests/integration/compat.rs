//! Commands and fields added for Redis 7.0 compatibility (measured by
//! Redis's own test suite): MOVE, LCS, SUBSTR, LASTSAVE, ROLE, LOLWUT,
//! CLIENT REPLY / NO-EVICT, SLOWLOG, DEBUG SLEEP, the parameters kept only
//! for CONFIG GET, errorstats, and error texts without newlines.

use std::collections::HashMap;

use crate::common::{err, info_fields, resp, run, TestServer};

#[test]
fn move_keeps_the_ttl_and_never_overwrites() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "k", "v", "EX", "100"]).unwrap();
    assert_eq!(run::<i64>(&mut c, &["MOVE", "k", "1"]).unwrap(), 1);
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "k"]).unwrap(), 0);
    let _: () = run(&mut c, &["SELECT", "1"]).unwrap();
    assert!(run::<i64>(&mut c, &["TTL", "k"]).unwrap() > 0);
    let _: () = run(&mut c, &["SET", "other", "x"]).unwrap();
    let _: () = run(&mut c, &["SELECT", "0"]).unwrap();
    let _: () = run(&mut c, &["SET", "other", "y"]).unwrap();
    assert_eq!(run::<i64>(&mut c, &["MOVE", "other", "1"]).unwrap(), 0);
    assert_eq!(run::<i64>(&mut c, &["MOVE", "missing", "1"]).unwrap(), 0);
    assert_eq!(
        err(&mut c, &["MOVE", "other", "0"]),
        "ERR source and destination objects are the same"
    );
    assert_eq!(
        err(&mut c, &["MOVE", "other", "99"]),
        "ERR DB index is out of range"
    );
    assert_eq!(
        err(&mut c, &["MOVE", "other", "x"]),
        "ERR value is not an integer or out of range"
    );
}

#[test]
fn lcs_string_len_and_idx_as_redis() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["MSET", "a", "ohmytext", "b", "mynewtext"]).unwrap();
    assert_eq!(run::<String>(&mut c, &["LCS", "a", "b"]).unwrap(), "mytext");
    assert_eq!(run::<i64>(&mut c, &["LCS", "a", "b", "LEN"]).unwrap(), 6);
    // Redis's reply for this pair (its documentation's example).
    let v: redis::Value = run(
        &mut c,
        &["LCS", "a", "b", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN"],
    )
    .unwrap();
    let expected = redis::Value::Array(vec![
        redis::Value::BulkString(b"matches".to_vec()),
        redis::Value::Array(vec![redis::Value::Array(vec![
            redis::Value::Array(vec![redis::Value::Int(4), redis::Value::Int(7)]),
            redis::Value::Array(vec![redis::Value::Int(5), redis::Value::Int(8)]),
            redis::Value::Int(4),
        ])]),
        redis::Value::BulkString(b"len".to_vec()),
        redis::Value::Int(6),
    ]);
    assert_eq!(v, expected);
    assert_eq!(
        err(&mut c, &["LCS", "a", "b", "LEN", "IDX"]),
        "ERR If you want both the length and indexes, please just use IDX."
    );
    let _: i64 = run(&mut c, &["LPUSH", "l", "x"]).unwrap();
    assert_eq!(
        err(&mut c, &["LCS", "a", "l"]),
        "ERR The specified keys must contain string values"
    );
    assert_eq!(run::<String>(&mut c, &["LCS", "a", "nokey"]).unwrap(), "");
    assert_eq!(
        run::<String>(&mut c, &["SUBSTR", "a", "2", "3"]).unwrap(),
        "my"
    );
}

#[test]
fn lastsave_role_lolwut() {
    let s = TestServer::start();
    let mut c = s.client();
    let t: i64 = run(&mut c, &["LASTSAVE"]).unwrap();
    let now: Vec<String> = run(&mut c, &["TIME"]).unwrap();
    let now: i64 = now[0].parse().unwrap();
    assert!(t > 0 && t <= now, "{t} {now}");
    let role: (String, i64, Vec<String>) = run(&mut c, &["ROLE"]).unwrap();
    assert_eq!(role, ("master".to_string(), 0, vec![]));
    let art: String = run(&mut c, &["LOLWUT"]).unwrap();
    assert!(art.contains("Redis ver. 7.0.15"), "{art}");
    assert_eq!(err(&mut c, &["LOLWUT", "VERSION"]), "ERR syntax error");
    let f = info_fields(&mut c, "server");
    assert_eq!(f["redis_version"], "7.0.15");
}

#[test]
fn client_reply_off_skip_on() {
    let s = TestServer::start();
    let mut raw = s.raw();
    raw.send(&resp(&[b"CLIENT", b"REPLY", b"OFF"]));
    raw.send(&resp(&[b"SET", b"a", b"1"]));
    raw.send(&resp(&[b"CLIENT", b"REPLY", b"SKIP"]));
    raw.send(&resp(&[b"CLIENT", b"REPLY", b"ON"]));
    // SKIP changes nothing while OFF; ON replies OK; then SKIP hides one
    // reply (checked against redis-server 7.0.15).
    raw.roundtrip(&resp(&[b"GET", b"a"]), b"+OK\r\n$1\r\n1\r\n");
    raw.send(&resp(&[b"CLIENT", b"REPLY", b"SKIP"]));
    raw.send(&resp(&[b"GET", b"a"]));
    raw.roundtrip(&resp(&[b"PING"]), b"+PONG\r\n");
    let mut c = s.client();
    assert_eq!(
        run::<String>(&mut c, &["CLIENT", "NO-EVICT", "on"]).unwrap(),
        "OK"
    );
    assert_eq!(
        err(&mut c, &["CLIENT", "REPLY", "maybe"]),
        "ERR syntax error"
    );
}

#[test]
fn slowlog_records_trims_and_resets() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["CONFIG", "SET", "slowlog-log-slower-than", "0"]).unwrap();
    let _: () = run(&mut c, &["SLOWLOG", "RESET"]).unwrap();
    let long = "A".repeat(129);
    let _: i64 = run(&mut c, &["SADD", "s", "foo", &long]).unwrap();
    let entries: Vec<redis::Value> = run(&mut c, &["SLOWLOG", "GET", "1"]).unwrap();
    assert_eq!(entries.len(), 1);
    let redis::Value::Array(e) = &entries[0] else {
        panic!("entry {entries:?}")
    };
    assert_eq!(e.len(), 6);
    let args: Vec<String> = redis::from_redis_value(&e[3]).unwrap();
    assert_eq!(args[..3], ["SADD", "s", "foo"]);
    assert_eq!(args[3], format!("{}... (1 more bytes)", "A".repeat(128)));
    let _: () = run(&mut c, &["CONFIG", "SET", "slowlog-max-len", "2"]).unwrap();
    for _ in 0..5 {
        let _: String = run(&mut c, &["PING"]).unwrap();
    }
    assert_eq!(run::<i64>(&mut c, &["SLOWLOG", "LEN"]).unwrap(), 2);
    let _: () = run(&mut c, &["CONFIG", "SET", "slowlog-log-slower-than", "-1"]).unwrap();
    let _: () = run(&mut c, &["SLOWLOG", "RESET"]).unwrap();
    let _: () = run(&mut c, &["DEBUG", "SLEEP", "0"]).unwrap();
    assert_eq!(run::<i64>(&mut c, &["SLOWLOG", "LEN"]).unwrap(), 0);
    assert_eq!(
        err(&mut c, &["SLOWLOG", "GET", "-2"]),
        "ERR count should be greater than or equal to -1"
    );
}

#[test]
fn stored_parameters_validate_like_redis() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["CONFIG", "SET", "stream-node-max-entries", "10"]).unwrap();
    let v: Vec<String> = run(&mut c, &["CONFIG", "GET", "stream-node-max-entries"]).unwrap();
    assert_eq!(v, ["stream-node-max-entries", "10"]);
    // Aliases: both names listed, one value; setting both at once is no
    // duplicate in Redis 7.0.15 (checked live: the later value wins).
    let _: () = run(&mut c, &["CONFIG", "SET", "slave-read-only", "no"]).unwrap();
    let v: HashMap<String, String> = run(&mut c, &["CONFIG", "GET", "*read-only"]).unwrap();
    assert_eq!(v["replica-read-only"], "no");
    assert_eq!(v["slave-read-only"], "no");
    let _: () = run(
        &mut c,
        &[
            "CONFIG",
            "SET",
            "slave-read-only",
            "yes",
            "replica-read-only",
            "no",
        ],
    )
    .unwrap();
    let v: HashMap<String, String> = run(&mut c, &["CONFIG", "GET", "*read-only"]).unwrap();
    assert_eq!(v["slave-read-only"], "no");
    assert!(err(
        &mut c,
        &[
            "CONFIG",
            "SET",
            "slave-read-only",
            "yes",
            "SLAVE-READ-ONLY",
            "no"
        ]
    )
    .contains("duplicate parameter"));
    assert!(err(&mut c, &["CONFIG", "SET", "appendfsync", "sometimes"]).contains("must be one of"));
    assert!(err(&mut c, &["CONFIG", "SET", "pidfile", "/tmp/x"]).contains("immutable"));
    let _: () = run(&mut c, &["CONFIG", "SET", "slowlog-log-slower-than", "-1"]).unwrap();
    assert!(
        err(&mut c, &["CONFIG", "SET", "slowlog-log-slower-than", "-2"])
            .contains("argument must be between -1 and")
    );
}

#[test]
fn error_stats_and_newline_free_errors() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["CONFIG", "RESETSTAT"]).unwrap();
    let e = err(&mut c, &["NOSUCH", "a\r\nb"]);
    assert!(!e.contains('\n') && e.contains("a  b"), "{e}");
    let _: i64 = run(&mut c, &["LPUSH", "l", "x"]).unwrap();
    assert!(err(&mut c, &["GET", "l"]).starts_with("WRONGTYPE"));
    assert!(err(&mut c, &["GET"]).contains("wrong number"));
    let f = info_fields(&mut c, "errorstats");
    assert_eq!(f["errorstat_ERR"], "count=2");
    assert_eq!(f["errorstat_WRONGTYPE"], "count=1");
    let stats = info_fields(&mut c, "stats");
    assert_eq!(stats["total_error_replies"], "3");
    let cmd = info_fields(&mut c, "commandstats");
    assert!(
        cmd["cmdstat_get"].ends_with("rejected_calls=1,failed_calls=1"),
        "{}",
        cmd["cmdstat_get"]
    );
}

#[test]
fn subcommands_have_their_own_command_stats() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["CONFIG", "RESETSTAT"]).unwrap();
    let _: Vec<String> = run(&mut c, &["CONFIG", "GET", "maxmemory"]).unwrap();
    let _: String = run(&mut c, &["XADD", "s", "*", "f", "v"]).unwrap();
    assert!(err(&mut c, &["XGROUP", "CREATECONSUMER", "s", "nogroup", "c"]).starts_with("NOGROUP"));
    assert!(err(&mut c, &["CONFIG", "GET"]).contains("wrong number"));
    let cmd = info_fields(&mut c, "commandstats");
    let suffix = |name: &str| {
        let line = &cmd[name];
        line[line.find(",rejected").expect("rejected_calls")..].to_owned()
    };
    assert!(cmd["cmdstat_config|get"].starts_with("calls=1,"));
    assert_eq!(
        suffix("cmdstat_config|get"),
        ",rejected_calls=1,failed_calls=0"
    );
    assert!(cmd["cmdstat_xgroup|createconsumer"].starts_with("calls=1,"));
    assert_eq!(
        suffix("cmdstat_xgroup|createconsumer"),
        ",rejected_calls=0,failed_calls=1"
    );
    // As in Redis, a container has no line of its own.
    assert!(!cmd.contains_key("cmdstat_config"), "{cmd:?}");
    assert!(!cmd.contains_key("cmdstat_xgroup"), "{cmd:?}");
}

#[test]
fn geo_add_pos_dist_hash_match_redis() {
    let s = TestServer::start();
    let mut c = s.client();
    let added: i64 = run(
        &mut c,
        &[
            "GEOADD",
            "Sicily",
            "13.361389",
            "38.115556",
            "Palermo",
            "15.087269",
            "37.502669",
            "Catania",
        ],
    )
    .unwrap();
    assert_eq!(added, 2);
    // Values printed by redis-server 7.0.15 for the same commands.
    assert_eq!(
        run::<String>(&mut c, &["GEODIST", "Sicily", "Palermo", "Catania", "km"]).unwrap(),
        "166.2742"
    );
    let pos: Vec<Option<Vec<String>>> =
        run(&mut c, &["GEOPOS", "Sicily", "Palermo", "Nowhere"]).unwrap();
    assert_eq!(
        pos,
        [
            Some(vec![
                "13.36138933897018433".to_string(),
                "38.11555639549629859".to_string()
            ]),
            None
        ]
    );
    let hashes: Vec<Option<String>> =
        run(&mut c, &["GEOHASH", "Sicily", "Palermo", "Catania", "x"]).unwrap();
    assert_eq!(
        hashes,
        [Some("sqc8b49rny0".into()), Some("sqdtr74hyu0".into()), None]
    );
    assert_eq!(
        run::<String>(&mut c, &["ZSCORE", "Sicily", "Palermo"]).unwrap(),
        "3479099956230698"
    );
    assert_eq!(
        err(&mut c, &["GEOADD", "Sicily", "200", "100", "x"]),
        "ERR invalid longitude,latitude pair 200.000000,100.000000"
    );
    assert_eq!(
        err(
            &mut c,
            &["GEODIST", "Sicily", "Palermo", "Catania", "parsec"]
        ),
        "ERR unsupported unit provided. please use M, KM, FT, MI"
    );
    assert!(
        run::<Option<String>>(&mut c, &["GEODIST", "Sicily", "Palermo", "x"])
            .unwrap()
            .is_none()
    );
}

#[test]
fn command_list_names_subcommands_and_flags_movable_keys() {
    let s = TestServer::start();
    let mut c = s.client();
    let all: Vec<String> = run(&mut c, &["COMMAND", "LIST"]).unwrap();
    assert!(all.iter().any(|n| n == "client|list"));
    let config: Vec<String> = run(
        &mut c,
        &["COMMAND", "LIST", "FILTERBY", "PATTERN", "config|*re*"],
    )
    .unwrap();
    assert!(
        config.contains(&"config|resetstat".to_owned()),
        "{config:?}"
    );
    let info: redis::Value = run(&mut c, &["COMMAND", "INFO", "zunionstore"]).unwrap();
    assert!(format!("{info:?}").contains("movablekeys"), "{info:?}");
    assert_eq!(
        err(&mut c, &["CLIENT", "KILL"]),
        "ERR wrong number of arguments for 'client|kill' command"
    );
    // The running command is in the query buffer, as Redis counts it.
    let line: String = run(&mut c, &["CLIENT", "INFO"]).unwrap();
    assert!(line.contains(" qbuf=26 "), "{line}");
    // Hidden parameters only by name.
    let all: Vec<String> = run(&mut c, &["CONFIG", "GET", "*"]).unwrap();
    assert!(!all.contains(&"key-load-delay".to_owned()));
    let one: Vec<String> = run(&mut c, &["CONFIG", "GET", "key-load-delay"]).unwrap();
    assert_eq!(one, ["key-load-delay", "0"]);
}

#[test]
fn monitor_shows_commands_as_they_run() {
    let s = TestServer::start();
    let mut m = s.raw();
    m.roundtrip(b"MONITOR\r\n", b"+OK\r\n");
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "foo", "bar baz"]).unwrap();
    // `+<time> [0 <addr>] "SET" "foo" "bar baz"`
    let mut line = Vec::new();
    while !line.ends_with(b"\r\n") {
        line.extend(m.read_exact_len(1));
    }
    let line = String::from_utf8(line).expect("utf8");
    assert!(line.starts_with('+'), "{line}");
    assert!(line.contains(" [0 127.0.0.1:"), "{line}");
    assert!(
        line.ends_with("] \"SET\" \"foo\" \"bar baz\"\r\n"),
        "{line}"
    );
    // RESET stops it.
    m.roundtrip(b"RESET\r\n", b"+RESET\r\n");
    let _: () = run(&mut c, &["SET", "foo", "x"]).unwrap();
    m.roundtrip(b"PING\r\n", b"+PONG\r\n");
    assert_eq!(
        err(&mut c, &["CLIENT", "KILL", "USER", "nobody"]),
        "ERR No such user 'nobody'"
    );
}

#[test]
fn debug_protocol_writes_each_type_as_redis_does() {
    let s = TestServer::start();
    let mut c = s.raw();
    let attrib = b"*3\r\n$5\r\nDEBUG\r\n$8\r\nPROTOCOL\r\n$6\r\nattrib\r\n";
    let real = "$39\r\nSome real reply following the attribute\r\n";
    // RESP2 gets the reply alone.
    c.roundtrip(attrib, real.as_bytes());
    c.send(b"HELLO 3\r\n");
    let _ = c.read_line();
    let hello_fields = 7;
    for _ in 0..hello_fields * 2 {
        skip_value(&mut c);
    }
    let want = format!("|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n{real}");
    c.roundtrip(attrib, want.as_bytes());
    for (name, reply) in [
        ("bignum", "(1234567999999999999999999999999999999\r\n"),
        ("true", "#t\r\n"),
        ("false", "#f\r\n"),
        ("verbatim", "=29\r\ntxt:This is a verbatim\nstring\r\n"),
        ("double", ",3.141\r\n"),
        ("map", "%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n"),
    ] {
        let line = format!("DEBUG PROTOCOL {name}\r\n");
        c.roundtrip(line.as_bytes(), reply.as_bytes());
    }
    c.send(b"DEBUG PROTOCOL nope\r\n");
    let line = c.read_line();
    assert!(line.starts_with("-ERR Wrong protocol type name"), "{line}");
}

#[test]
fn a_list_element_over_the_packed_threshold_keeps_the_list_whole() {
    let s = TestServer::start();
    let mut c = s.client();
    let threshold = |c: &mut redis::Connection, v: &str| {
        run::<()>(c, &["DEBUG", "QUICKLIST-PACKED-THRESHOLD", v])
    };
    for bad in ["5gb", "x", "-1"] {
        let e = threshold(&mut c, bad).unwrap_err();
        assert!(
            e.to_string().contains("argument must be a memory value"),
            "{e}"
        );
    }
    threshold(&mut c, "5b").unwrap();
    for v in ["aa", "bb", "cc", "dd"] {
        let _: () = run(&mut c, &["RPUSH", "l", v]).unwrap();
    }
    let _: () = run(&mut c, &["LSET", "l", "1", "long value"]).unwrap();
    let _: () = run(&mut c, &["LINSERT", "l", "BEFORE", "cc", "another long"]).unwrap();
    let _: () = run(&mut c, &["LPUSH", "l", "head value"]).unwrap();
    let all: Vec<String> = run(&mut c, &["LRANGE", "l", "0", "-1"]).unwrap();
    assert_eq!(
        all,
        ["head value", "aa", "long value", "another long", "cc", "dd"]
    );
    let _: () = run(&mut c, &["LSET", "l", "2", "x"]).unwrap();
    assert_eq!(run::<String>(&mut c, &["LINDEX", "l", "2"]).unwrap(), "x");
    let _: () = run(&mut c, &["LTRIM", "l", "1", "-2"]).unwrap();
    let all: Vec<String> = run(&mut c, &["LRANGE", "l", "0", "-1"]).unwrap();
    assert_eq!(all, ["aa", "x", "another long", "cc"]);
    threshold(&mut c, "0").unwrap();
}

/// Reads one simple value (a line, or a bulk string) of a HELLO map.
fn skip_value(c: &mut crate::common::Raw) {
    let line = c.read_line();
    if let Some(len) = line.strip_prefix('$') {
        let len: usize = len.parse().unwrap();
        c.read_exact_len(len + 2);
    } else if let Some(n) = line.strip_prefix('*') {
        for _ in 0..n.parse::<usize>().unwrap() {
            skip_value(c);
        }
    }
}

#[test]
fn monitor_shows_auth_and_hello_with_their_credentials_redacted() {
    let s = TestServer::start();
    let mut m = s.raw();
    m.roundtrip(b"MONITOR\r\n", b"+OK\r\n");
    let mut c = s.client();
    for line in [
        &["AUTH", "not-real"][..],
        &["AUTH", "user", "secret"],
        &["HELLO", "2", "AUTH", "user", "secret", "SETNAME", "n"],
    ] {
        let _ = run::<redis::Value>(&mut c, line);
    }
    let mut lines = Vec::new();
    while lines.len() < 3 {
        let mut line = Vec::new();
        while !line.ends_with(b"\r\n") {
            let byte = m.read_exact_len(1);
            assert!(!byte.is_empty(), "MONITOR ended after {lines:?}");
            line.extend(byte);
        }
        lines.push(String::from_utf8(line).expect("utf8"));
    }
    assert!(
        lines[0].ends_with("] \"AUTH\" \"(redacted)\"\r\n"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].ends_with("] \"AUTH\" \"(redacted)\" \"(redacted)\"\r\n"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].ends_with(
            "] \"HELLO\" \"2\" \"AUTH\" \"(redacted)\" \"(redacted)\" \"SETNAME\" \"n\"\r\n"
        ),
        "{}",
        lines[2]
    );
    assert!(lines.iter().all(|l| !l.contains("secret")));
}

#[test]
fn command_getkeys_finds_movable_keys_and_their_flags() {
    let s = TestServer::start();
    let mut c = s.client();
    let keys = |c: &mut redis::Connection, line: &[&str]| -> Vec<String> {
        let mut args = vec!["COMMAND", "GETKEYS"];
        args.extend_from_slice(line);
        run(c, &args).unwrap()
    };
    assert_eq!(
        keys(&mut c, &["ZUNIONSTORE", "t", "2", "a", "b"]),
        ["t", "a", "b"]
    );
    assert_eq!(
        keys(&mut c, &["SORT", "abc", "STORE", "x", "STORE", "def"]),
        ["abc", "def"]
    );
    assert_eq!(keys(&mut c, &["MEMORY", "USAGE", "k"]), ["k"]);
    assert_eq!(keys(&mut c, &["XGROUP", "CREATE", "k", "g", "$"]), ["k"]);
    assert_eq!(
        err(&mut c, &["COMMAND", "GETKEYS", "ZUNION", "9", "a"]),
        "ERR Invalid arguments specified for command"
    );
    assert_eq!(
        err(&mut c, &["COMMAND", "GETKEYS", "ECHO", "hi"]),
        "ERR The command has no key arguments"
    );
    // The subcommand's arity (-4) is checked first, as in Redis 7.0.
    assert_eq!(
        err(&mut c, &["COMMAND", "GETKEYS", "PING"]),
        "ERR wrong number of arguments for 'command|getkeys' command"
    );
    let v: redis::Value = run(
        &mut c,
        &[
            "COMMAND",
            "GETKEYSANDFLAGS",
            "LMOVE",
            "k1",
            "k2",
            "LEFT",
            "RIGHT",
        ],
    )
    .unwrap();
    let entry = |key: &str, flags: &[&str]| {
        redis::Value::Array(vec![
            redis::Value::BulkString(key.as_bytes().to_vec()),
            redis::Value::Array(
                flags
                    .iter()
                    .map(|f| redis::Value::SimpleString((*f).to_string()))
                    .collect(),
            ),
        ])
    };
    assert_eq!(
        v,
        redis::Value::Array(vec![
            entry("k1", &["RW", "access", "delete"]),
            entry("k2", &["RW", "insert"]),
        ])
    );
}

#[test]
fn unlink_frees_big_values_in_the_background() {
    let s = TestServer::start();
    let mut c = s.client();
    let members: Vec<String> = (0..1000).map(|i| i.to_string()).collect();
    let mut sadd = vec!["SADD", "big"];
    sadd.extend(members.iter().map(String::as_str));
    let _: i64 = run(&mut c, &sadd).unwrap();
    let _: () = run(&mut c, &["SET", "small", "v"]).unwrap();
    assert_eq!(
        run::<i64>(&mut c, &["UNLINK", "big", "small", "none"]).unwrap(),
        2
    );
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "big"]).unwrap(), 0);
    // Only the set was worth a background free; wait for the thread.
    let mut freed = String::new();
    for _ in 0..500 {
        let stats = info_fields(&mut c, "stats");
        freed = stats["lazyfreed_objects"].clone();
        if freed == "1" && stats["lazyfree_pending_objects"] == "0" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(freed, "1");
    let _: () = run(&mut c, &["CONFIG", "RESETSTAT"]).unwrap();
    assert_eq!(info_fields(&mut c, "stats")["lazyfreed_objects"], "0");
}

#[test]
fn restore_freq_sets_the_lfu_counter() {
    let s = TestServer::start_with(&["--maxmemory-policy", "allkeys-lfu"]);
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "k", "v"]).unwrap();
    let dump: Vec<u8> = run(&mut c, &["DUMP", "k"]).unwrap();
    let mut con = c;
    let _: () = redis::cmd("RESTORE")
        .arg("k")
        .arg(0)
        .arg(dump)
        .arg("REPLACE")
        .arg("FREQ")
        .arg(100)
        .query(&mut con)
        .unwrap();
    assert_eq!(run::<i64>(&mut con, &["OBJECT", "FREQ", "k"]).unwrap(), 100);
}

#[test]
fn bgrewriteaof_is_refused_and_queued_in_multi() {
    let s = TestServer::start();
    let mut c = s.client();
    // BGREWRITEAOF is queued, as in Redis, and fails in EXEC.
    assert_eq!(
        err(&mut c, &["BGREWRITEAOF"]),
        "ERR FerrumKV has no append-only file (it saves RDB snapshots): BGREWRITEAOF is not supported"
    );
    let _: () = run(&mut c, &["MULTI"]).unwrap();
    let queued: String = run(&mut c, &["BGREWRITEAOF"]).unwrap();
    assert_eq!(queued, "QUEUED");
    // EXEC's one reply is the error (redis-rs reports it as the error).
    let e = err(&mut c, &["EXEC"]);
    assert!(e.contains("BGREWRITEAOF is not supported"), "{e}");
}

#[test]
fn small_integers_are_not_shared_under_lru_with_a_maxmemory() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "a", "1"]).unwrap();
    assert!(run::<i64>(&mut c, &["OBJECT", "REFCOUNT", "a"]).unwrap() > 1);
    let _: () = run(&mut c, &["CONFIG", "SET", "maxmemory", "1gb"]).unwrap();
    let _: () = run(
        &mut c,
        &["CONFIG", "SET", "maxmemory-policy", "allkeys-random"],
    )
    .unwrap();
    assert!(run::<i64>(&mut c, &["OBJECT", "REFCOUNT", "a"]).unwrap() > 1);
    let _: () = run(
        &mut c,
        &["CONFIG", "SET", "maxmemory-policy", "volatile-lru"],
    )
    .unwrap();
    assert_eq!(run::<i64>(&mut c, &["OBJECT", "REFCOUNT", "a"]).unwrap(), 1);
}
