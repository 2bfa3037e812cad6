//! Generic key commands.

use crate::common::{err, run, TestServer};

#[test]
fn del_exists_touch_type() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["MSET", "a", "1", "b", "2"]).unwrap();
    assert_eq!(
        run::<i64>(&mut c, &["EXISTS", "a", "b", "a", "zz"]).unwrap(),
        3
    );
    assert_eq!(run::<i64>(&mut c, &["TOUCH", "a", "zz"]).unwrap(), 1);
    assert_eq!(run::<String>(&mut c, &["TYPE", "a"]).unwrap(), "string");
    assert_eq!(run::<String>(&mut c, &["TYPE", "zz"]).unwrap(), "none");
    assert_eq!(run::<i64>(&mut c, &["DEL", "a", "zz"]).unwrap(), 1);
    assert_eq!(run::<i64>(&mut c, &["UNLINK", "b"]).unwrap(), 1);
    assert_eq!(run::<i64>(&mut c, &["DBSIZE"]).unwrap(), 0);
}

#[test]
fn rename_and_renamenx() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(err(&mut c, &["RENAME", "nope", "x"]), "ERR no such key");
    let _: () = run(&mut c, &["SET", "a", "1", "EX", "100"]).unwrap();
    assert_eq!(run::<String>(&mut c, &["RENAME", "a", "b"]).unwrap(), "OK");
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "a"]).unwrap(), 0);
    assert_eq!(run::<String>(&mut c, &["GET", "b"]).unwrap(), "1");
    assert_eq!(
        run::<i64>(&mut c, &["TTL", "b"]).unwrap(),
        100,
        "the TTL moves with the key"
    );
    assert_eq!(run::<String>(&mut c, &["RENAME", "b", "b"]).unwrap(), "OK");
    let _: () = run(&mut c, &["SET", "c", "3"]).unwrap();
    assert_eq!(run::<i64>(&mut c, &["RENAMENX", "b", "c"]).unwrap(), 0);
    assert_eq!(run::<i64>(&mut c, &["RENAMENX", "b", "d"]).unwrap(), 1);
    assert_eq!(run::<String>(&mut c, &["GET", "d"]).unwrap(), "1");
    assert_eq!(err(&mut c, &["RENAMENX", "nope", "x"]), "ERR no such key");
}

#[test]
fn copy_within_and_across_databases() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "src", "v", "EX", "100"]).unwrap();
    assert_eq!(run::<i64>(&mut c, &["COPY", "src", "dst"]).unwrap(), 1);
    assert_eq!(run::<String>(&mut c, &["GET", "dst"]).unwrap(), "v");
    assert_eq!(run::<i64>(&mut c, &["TTL", "dst"]).unwrap(), 100);
    assert_eq!(run::<i64>(&mut c, &["COPY", "src", "dst"]).unwrap(), 0);
    let _: () = run(&mut c, &["SET", "src", "w"]).unwrap();
    assert_eq!(
        run::<i64>(&mut c, &["COPY", "src", "dst", "REPLACE"]).unwrap(),
        1
    );
    assert_eq!(run::<String>(&mut c, &["GET", "dst"]).unwrap(), "w");
    assert_eq!(
        run::<i64>(&mut c, &["COPY", "src", "src", "DB", "3"]).unwrap(),
        1
    );
    assert_eq!(run::<i64>(&mut c, &["COPY", "missing", "x"]).unwrap(), 0);
    assert_eq!(
        err(&mut c, &["COPY", "src", "src"]),
        "ERR source and destination objects are the same"
    );
    assert_eq!(
        err(&mut c, &["COPY", "src", "x", "DB", "99"]),
        "ERR DB index is out of range"
    );
    assert_eq!(
        err(&mut c, &["COPY", "src", "x", "FOO"]),
        "ERR syntax error"
    );
    let _: () = run(&mut c, &["SELECT", "3"]).unwrap();
    assert_eq!(run::<String>(&mut c, &["GET", "src"]).unwrap(), "w");
}

#[test]
fn keys_and_scan_with_match_count_type() {
    let s = TestServer::start();
    let mut c = s.client();
    for i in 0..300 {
        let _: () = run(&mut c, &["SET", &format!("user:{i}"), "x"]).unwrap();
    }
    let _: () = run(&mut c, &["SET", "other", "y"]).unwrap();
    let mut keys: Vec<String> = run(&mut c, &["KEYS", "user:1?"]).unwrap();
    keys.sort();
    assert_eq!(
        keys,
        (10..20).map(|i| format!("user:{i}")).collect::<Vec<_>>()
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["KEYS", "*"]).unwrap().len(),
        301
    );

    let mut seen = std::collections::BTreeSet::new();
    let mut cursor = "0".to_string();
    let mut rounds = 0;
    loop {
        let (next, batch): (String, Vec<String>) =
            run(&mut c, &["SCAN", &cursor, "MATCH", "user:*", "COUNT", "50"]).unwrap();
        seen.extend(batch);
        rounds += 1;
        cursor = next;
        if cursor == "0" {
            break;
        }
        assert!(rounds < 1000, "scan did not terminate");
    }
    assert_eq!(
        seen.len(),
        300,
        "every key present for the whole scan is returned"
    );
    assert!(rounds > 1, "COUNT bounds each call's work");
    let (_, none): (String, Vec<String>) =
        run(&mut c, &["SCAN", "0", "TYPE", "list", "COUNT", "1000"]).unwrap();
    assert!(none.is_empty());
    assert_eq!(err(&mut c, &["SCAN", "abc"]), "ERR invalid cursor");
    assert_eq!(
        err(&mut c, &["SCAN", "0", "COUNT", "0"]),
        "ERR syntax error"
    );
    assert_eq!(err(&mut c, &["SCAN", "0", "FOO", "1"]), "ERR syntax error");
}

#[test]
fn randomkey() {
    let s = TestServer::start();
    let mut c = s.client();
    assert_eq!(run::<Option<String>>(&mut c, &["RANDOMKEY"]).unwrap(), None);
    let _: () = run(&mut c, &["MSET", "a", "1", "b", "2"]).unwrap();
    for _ in 0..20 {
        let k: String = run(&mut c, &["RANDOMKEY"]).unwrap();
        assert!(k == "a" || k == "b", "{k}");
    }
}

#[test]
fn object_subcommands() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(
        &mut c,
        &["MSET", "i", "123", "e", "hello", "r", &"x".repeat(100)],
    )
    .unwrap();
    assert_eq!(
        run::<String>(&mut c, &["OBJECT", "ENCODING", "i"]).unwrap(),
        "int"
    );
    assert_eq!(
        run::<String>(&mut c, &["OBJECT", "ENCODING", "e"]).unwrap(),
        "embstr"
    );
    assert_eq!(
        run::<String>(&mut c, &["OBJECT", "ENCODING", "r"]).unwrap(),
        "raw"
    );
    assert_eq!(
        run::<Option<String>>(&mut c, &["OBJECT", "ENCODING", "missing"]).unwrap(),
        None
    );
    assert_eq!(run::<i64>(&mut c, &["OBJECT", "REFCOUNT", "e"]).unwrap(), 1);
    s.advance(&mut c, 5_000);
    assert_eq!(run::<i64>(&mut c, &["OBJECT", "IDLETIME", "e"]).unwrap(), 5);
    assert!(err(&mut c, &["OBJECT", "FREQ", "e"])
        .starts_with("ERR An LFU maxmemory policy is not selected"));
    assert_eq!(
        err(&mut c, &["OBJECT", "NOPE", "e"]),
        "ERR unknown subcommand 'NOPE'. Try OBJECT HELP."
    );
    assert!(
        run::<Vec<String>>(&mut c, &["OBJECT", "HELP"])
            .unwrap()
            .len()
            > 4
    );
}
