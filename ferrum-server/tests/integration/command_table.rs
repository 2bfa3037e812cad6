//! `COMMAND` as redis-server 7.0.15 answers it, command by command (#47):
//! arity and flags, for every command and subcommand both servers have.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::common::{run, temp_dir, TestServer};
use crate::migrate::RedisServer;

/// Rows that still differ, each for a reason of its own.
const KNOWN: &[(&str, &str)] = &[
    // Containers: FerrumKV still decides some of a call's checks (admin,
    // loading, noscript) on the container's row, so it carries flags that
    // Redis puts on the subcommands only.
    ("acl", "flags on the container"),
    ("client", "flags on the container"),
    ("config", "flags on the container"),
    ("function", "flags on the container"),
    ("latency", "flags on the container"),
    ("object", "flags on the container"),
    ("pubsub", "flags on the container"),
    ("script", "flags on the container"),
    ("slowlog", "flags on the container"),
    ("xinfo", "flags on the container"),
    // Redis 7.2's WITHSCORE is served: arity -3 where 7.0 says 3.
    ("zrank", "WITHSCORE"),
    ("zrevrank", "WITHSCORE"),
];

/// Name -> (arity, flags in order) of every command and subcommand in a
/// `COMMAND` reply.
fn rows(reply: &redis::Value) -> BTreeMap<String, (i64, Vec<String>)> {
    let mut out = BTreeMap::new();
    let redis::Value::Array(entries) = reply else {
        panic!("COMMAND: {reply:?}");
    };
    for entry in entries {
        add(entry, &mut out);
    }
    out
}

fn add(entry: &redis::Value, out: &mut BTreeMap<String, (i64, Vec<String>)>) {
    let text = |v: &redis::Value| match v {
        redis::Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        redis::Value::SimpleString(s) => s.clone(),
        other => panic!("not a string: {other:?}"),
    };
    let redis::Value::Array(fields) = entry else {
        panic!("entry: {entry:?}");
    };
    let (redis::Value::Int(arity), redis::Value::Array(flags)) = (&fields[1], &fields[2]) else {
        panic!("entry: {entry:?}");
    };
    let flags = flags.iter().map(text).collect();
    out.insert(text(&fields[0]), (*arity, flags));
    if let Some(redis::Value::Array(subs)) = fields.get(9) {
        for sub in subs {
            add(sub, out);
        }
    }
}

/// A connection to `redis` whose replies time out.
fn connect(redis: &RedisServer) -> redis::Connection {
    let c = redis::Client::open(format!("redis://127.0.0.1:{}/", redis.port))
        .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(10)))
        .expect("connect to redis-server");
    c.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    c
}

#[test]
fn arity_and_flags_are_redis_7_0s() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let mut theirs = connect(&redis);
    let s = TestServer::start();
    let mut ours = s.client();
    let want = rows(&run(&mut theirs, &["COMMAND"]).unwrap());
    let got = rows(&run(&mut ours, &["COMMAND"]).unwrap());
    let mut differ = Vec::new();
    for (name, row) in &got {
        let Some(theirs) = want.get(name) else {
            continue;
        };
        let known = KNOWN.iter().any(|(k, _)| k == name);
        if (row != theirs) != known {
            differ.push(format!(
                "{name}: ours {row:?}, Redis {theirs:?}, known: {known}"
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
    // The comparison covers the table, not a handful of rows.
    let shared = got.keys().filter(|n| want.contains_key(*n)).count();
    assert!(shared > 300, "{shared} rows in common");
}

/// `MODULE` as Redis 7.0 answers it, with module commands refused (the
/// default) and allowed: FerrumKV loads no module, so `LIST` is empty and
/// a load fails as one that cannot load does in Redis.
#[test]
fn module_answers_as_redis_does_without_modules() {
    let calls: &[&[&str]] = &[
        &["MODULE", "LIST"],
        &["MODULE", "HELP"],
        &["MODULE", "LOAD", "/nonexistent/module.so"],
        &[
            "MODULE",
            "LOADEX",
            "/nonexistent/module.so",
            "CONFIG",
            "a",
            "b",
        ],
        &["MODULE", "UNLOAD", "nosuchmodule"],
        &["MODULE", "LIST", "extra"],
        &["MODULE", "LOAD"],
        &["MODULE", "UNLOAD"],
        &["MODULE", "NOSUCH"],
        &["MODULE"],
    ];
    let reply = |c: &mut redis::Connection, args: &[&str]| match run::<redis::Value>(c, args) {
        Ok(v) => format!("{v:?}"),
        Err(e) => format!("error: {e}"),
    };
    for allowed in ["no", "yes"] {
        let dir = temp_dir("module");
        let dir = dir.to_str().expect("a UTF-8 path");
        let args = [
            "--dir",
            dir,
            "--save",
            "",
            "--enable-module-command",
            allowed,
        ];
        let Some(redis) = RedisServer::start_with(&args) else {
            return;
        };
        let mut theirs = connect(&redis);
        let s = TestServer::start_with(&["--enable-module-command", allowed]);
        let mut ours = s.client();
        for call in calls {
            assert_eq!(
                reply(&mut ours, call),
                reply(&mut theirs, call),
                "{call:?} with enable-module-command {allowed}"
            );
        }
    }
}
