//! Snapshots: `SAVE`, loading `dir/dbfilename` at start-up, `DEBUG
//! RELOAD`, `SHUTDOWN SAVE`, and files moved between FerrumKV and Debian's
//! redis-server 7.0.15 in both directions.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{err, info_fields, run, temp_dir, TestServer};
use crate::migrate::RedisServer;

/// A function library for the snapshots to carry.
const LIBRARY: &str =
    "#!lua name=persisted\nredis.register_function('hello', function() return 'hi' end)";

/// Fills databases 0 and 5 with every type, large and small (so Redis
/// writes its listpack, intset and quicklist encodings), a key with a
/// TTL and one function library.
fn fill(c: &mut redis::Connection) {
    let long = "L".repeat(200);
    let mut commands: Vec<Vec<String>> = vec![
        vec!["SET".into(), "str".into(), "hello".into()],
        vec!["SET".into(), "int".into(), "-12345".into()],
        vec!["SET".into(), "long".into(), long.clone()],
        vec![
            "SET".into(),
            "ttl".into(),
            "x".into(),
            "EX".into(),
            "1000".into(),
        ],
        vec![
            "RPUSH".into(),
            "list".into(),
            "a".into(),
            "b".into(),
            "1".into(),
        ],
        vec![
            "SADD".into(),
            "intset".into(),
            "1".into(),
            "2".into(),
            "-3".into(),
        ],
        vec!["SADD".into(), "set".into(), "a".into(), "b".into()],
        vec!["HSET".into(), "hash".into(), "f".into(), "v".into()],
        vec![
            "ZADD".into(),
            "zset".into(),
            "1".into(),
            "a".into(),
            "2.5".into(),
            "b".into(),
        ],
        vec![
            "XADD".into(),
            "stream".into(),
            "1-1".into(),
            "f".into(),
            "v".into(),
        ],
        vec![
            "XGROUP".into(),
            "CREATE".into(),
            "stream".into(),
            "g".into(),
            "0".into(),
        ],
        vec![
            "XREADGROUP".into(),
            "GROUP".into(),
            "g".into(),
            "c".into(),
            "STREAMS".into(),
            "stream".into(),
            ">".into(),
        ],
    ];
    let mut big = [
        vec!["RPUSH".to_string(), "biglist".into()],
        vec!["HSET".to_string(), "bighash".into()],
        vec!["ZADD".to_string(), "bigzset".into()],
        vec!["SADD".to_string(), "bigset".into()],
    ];
    for i in 0..300 {
        let m = format!("m{i}");
        big[0].extend([m.clone(), long.clone()]);
        big[1].extend([m.clone(), long.clone()]);
        big[2].extend([format!("{i}.5"), m.clone()]);
        big[3].push(m);
    }
    commands.extend(big);
    for c2 in &commands {
        let _: redis::Value = run(c, &c2.iter().map(String::as_str).collect::<Vec<_>>()).unwrap();
    }
    let _: () = run(c, &["SELECT", "5"]).unwrap();
    let _: () = run(c, &["SET", "in-db-5", "y"]).unwrap();
    let _: () = run(c, &["SELECT", "0"]).unwrap();
    let _: String = run(c, &["FUNCTION", "LOAD", LIBRARY]).unwrap();
}

/// Everything in databases 0-15, in an order-independent form: per
/// database and key, its type, its content and whether it has a TTL.
fn contents(c: &mut redis::Connection) -> BTreeMap<(u32, String), (String, String, bool)> {
    let mut all = BTreeMap::new();
    for db in 0..16u32 {
        let _: () = run(c, &["SELECT", &db.to_string()]).unwrap();
        let keys: Vec<String> = run(c, &["KEYS", "*"]).unwrap();
        for k in keys {
            let kind: String = run(c, &["TYPE", &k]).unwrap();
            let content = match kind.as_str() {
                "string" => run::<String>(c, &["GET", &k]).unwrap(),
                "list" => format!(
                    "{:?}",
                    run::<Vec<String>>(c, &["LRANGE", &k, "0", "-1"]).unwrap()
                ),
                "set" => {
                    let mut m: Vec<String> = run(c, &["SMEMBERS", &k]).unwrap();
                    m.sort();
                    format!("{m:?}")
                }
                "hash" => format!(
                    "{:?}",
                    run::<BTreeMap<String, String>>(c, &["HGETALL", &k]).unwrap()
                ),
                "zset" => format!(
                    "{:?}",
                    run::<Vec<String>>(c, &["ZRANGE", &k, "0", "-1", "WITHSCORES"]).unwrap()
                ),
                "stream" => format!(
                    "{:?} {:?}",
                    run::<redis::Value>(c, &["XRANGE", &k, "-", "+"]).unwrap(),
                    run::<redis::Value>(c, &["XINFO", "STREAM", &k, "FULL"]).unwrap()
                ),
                other => panic!("type {other}"),
            };
            let ttl: i64 = run(c, &["PTTL", &k]).unwrap();
            all.insert((db, k), (kind, content, ttl > 0));
        }
    }
    let _: () = run(c, &["SELECT", "0"]).unwrap();
    all
}

fn start_in(dir: &Path) -> TestServer {
    TestServer::start_with(&["--dir", &dir.to_string_lossy()])
}

#[test]
fn a_saved_snapshot_loads_at_the_next_start() {
    let dir = temp_dir("persist-restart");
    let before = {
        let s = start_in(&dir);
        let mut c = s.client();
        fill(&mut c);
        let first: i64 = run(&mut c, &["LASTSAVE"]).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1100));
        assert_eq!(run::<String>(&mut c, &["SAVE"]).unwrap(), "OK");
        let last: i64 = run(&mut c, &["LASTSAVE"]).unwrap();
        assert!(last > first, "LASTSAVE {first} -> {last}");
        let f = info_fields(&mut c, "persistence");
        assert_eq!(f["rdb_changes_since_last_save"], "0");
        assert_eq!(f["rdb_saves"], "1");
        assert_eq!(f["rdb_last_save_time"], last.to_string());
        // Written after the save: not in the file.
        let _: () = run(&mut c, &["SET", "late", "1"]).unwrap();
        let f = info_fields(&mut c, "persistence");
        assert_eq!(f["rdb_changes_since_last_save"], "1");
        let mut before = contents(&mut c);
        before.remove(&(0, "late".to_string()));
        before
    };
    assert!(dir.join("dump.rdb").exists());
    assert!(std::fs::read_dir(&dir).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .starts_with("temp-")));
    let s = start_in(&dir);
    let mut c = s.client();
    assert_eq!(contents(&mut c), before);
    let ttl: i64 = run(&mut c, &["TTL", "ttl"]).unwrap();
    assert!((990..=1000).contains(&ttl), "TTL {ttl}");
    assert_eq!(
        run::<String>(&mut c, &["FCALL", "hello", "0"]).unwrap(),
        "hi"
    );
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn while_the_snapshot_loads_commands_get_loading_and_info_shows_it() {
    let dir = temp_dir("persist-loading");
    {
        let s = start_in(&dir);
        let mut c = s.client();
        let _: () = run(&mut c, &["DEBUG", "POPULATE", "1000"]).unwrap();
        let _: String = run(&mut c, &["SAVE"]).unwrap();
    }
    let saved = std::fs::read(dir.join("dump.rdb")).unwrap();
    // 1,000 keys at 2 ms each: two seconds of loading, with save points
    // that must not fire meanwhile.
    let d = dir.to_string_lossy().into_owned();
    let args = ["--dir", &d, "--key-load-delay", "2000", "--save", "1 1"];
    let s = TestServer::start_loading(&args);
    let mut c = s.client();
    let info: String = run(&mut c, &["INFO", "persistence"]).unwrap();
    assert!(info.contains("loading:1\r\n"), "{info}");
    for field in [
        "loading_start_time:",
        "loading_total_bytes:",
        "loading_eta_seconds:",
    ] {
        assert!(info.contains(field), "{field} in {info}");
    }
    let e = run::<String>(&mut c, &["GET", "key:1"]).unwrap_err();
    assert_eq!(e.code(), Some("LOADING"), "{e}");
    let e = run::<String>(&mut c, &["DEBUG", "RELOAD"]).unwrap_err();
    assert_eq!(e.code(), Some("LOADING"), "{e}");
    // The load reads from `dir`: it stays put until the load ends, which
    // Redis says with -LOADING before any other error; other parameters
    // change.
    let e = run::<()>(&mut c, &["CONFIG", "SET", "loglevel", "debug", "dir", "/x"]).unwrap_err();
    assert_eq!(e.code(), Some("LOADING"), "{e}");
    let _: () = run(&mut c, &["CONFIG", "SET", "loglevel", "debug"]).unwrap();
    // A shutdown meanwhile stops the load and saves nothing over the file.
    let _ = run::<String>(&mut c, &["SHUTDOWN"]);
    drop(s);
    assert_eq!(std::fs::read(dir.join("dump.rdb")).unwrap(), saved);
    // Loaded whole, the keys are there and writes go on.
    let s = start_in(&dir);
    let mut c = s.client();
    assert_eq!(run::<u64>(&mut c, &["DBSIZE"]).unwrap(), 1000);
    let info: String = run(&mut c, &["INFO", "persistence"]).unwrap();
    assert!(info.contains("loading:0\r\n"), "{info}");
    let _: String = run(&mut c, &["SET", "k", "v"]).unwrap();
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn where_files_go_is_protected_unless_enable_protected_configs_allows_it() {
    let refused = |name: &str| {
        format!("ERR CONFIG SET failed (possibly related to argument '{name}') - can't set protected config")
    };
    let s = TestServer::start();
    let mut c = s.client();
    let d = s.dir.to_string_lossy().into_owned();
    assert_eq!(err(&mut c, &["CONFIG", "SET", "dir", &d]), refused("dir"));
    assert_eq!(
        err(
            &mut c,
            &["CONFIG", "SET", "maxmemory", "1mb", "DBFILENAME", "x.rdb"]
        ),
        refused("DBFILENAME")
    );
    // All or nothing: maxmemory did not change either.
    let got: Vec<String> = run(&mut c, &["CONFIG", "GET", "maxmemory"]).unwrap();
    assert_eq!(got[1], "0");
    // An unknown name is reported first, as Redis does.
    assert!(
        err(&mut c, &["CONFIG", "SET", "nope", "1", "dir", &d]).starts_with("ERR Unknown option")
    );
    for allowed in ["yes", "local"] {
        let s = TestServer::start_with(&["--enable-protected-configs", allowed]);
        let mut c = s.client();
        let _: () = run(&mut c, &["CONFIG", "SET", "dbfilename", "x.rdb"]).unwrap();
        let _: String = run(&mut c, &["SAVE"]).unwrap();
        assert!(s.dir.join("x.rdb").exists());
    }
}

#[test]
fn save_is_not_allowed_in_multi_and_a_failed_save_says_err() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["MULTI"]).unwrap();
    assert_eq!(
        err(&mut c, &["SAVE"]),
        "ERR Command not allowed inside a transaction"
    );
    assert!(err(&mut c, &["EXEC"]).starts_with("EXECABORT"));
    let _: () = run(&mut c, &["SET", "k", "v"]).unwrap();
    assert_eq!(run::<String>(&mut c, &["SAVE"]).unwrap(), "OK");
    let good = std::fs::read(s.dir.join("dump.rdb")).unwrap();
    // The directory made unwritable: the save fails and the file stays.
    let mut perms = std::fs::metadata(&s.dir).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o500);
    std::fs::set_permissions(&s.dir, perms.clone()).unwrap();
    let probe = std::fs::File::create(s.dir.join("probe"));
    let _: () = run(&mut c, &["SET", "k", "changed"]).unwrap();
    if probe.is_err() {
        // (Root writes anyway: this half only runs as another user.)
        assert_eq!(err(&mut c, &["SAVE"]), "ERR");
        assert_eq!(std::fs::read(s.dir.join("dump.rdb")).unwrap(), good);
    }
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o700);
    std::fs::set_permissions(&s.dir, perms).unwrap();
    // Gone altogether: fails for every user.
    let moved = s.dir.with_extension("moved");
    std::fs::rename(&s.dir, &moved).unwrap();
    assert_eq!(err(&mut c, &["SAVE"]), "ERR");
    std::fs::rename(&moved, &s.dir).unwrap();
    assert_eq!(std::fs::read(s.dir.join("dump.rdb")).unwrap(), good);
}

#[test]
fn debug_reload_keeps_the_data_and_its_options_behave_as_in_redis() {
    let s = TestServer::start();
    let mut c = s.client();
    fill(&mut c);
    let before = contents(&mut c);
    assert_eq!(run::<String>(&mut c, &["DEBUG", "RELOAD"]).unwrap(), "OK");
    assert_eq!(contents(&mut c), before);
    assert_eq!(
        run::<String>(&mut c, &["FCALL", "hello", "0"]).unwrap(),
        "hi"
    );
    assert_eq!(
        err(&mut c, &["DEBUG", "RELOAD", "BOGUS"]),
        "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options."
    );
    // NOFLUSH without MERGE: every key (and the library) is a duplicate.
    assert_eq!(
        err(&mut c, &["DEBUG", "RELOAD", "NOFLUSH"]),
        "ERR Error trying to load the RDB dump"
    );
    assert_eq!(
        run::<String>(&mut c, &["DEBUG", "RELOAD", "NOFLUSH", "MERGE"]).unwrap(),
        "OK"
    );
    assert_eq!(contents(&mut c), before);
    // NOSAVE loads the file as it is: what changed since is undone.
    let _: () = run(&mut c, &["SET", "str", "changed"]).unwrap();
    let _: () = run(&mut c, &["SET", "new", "1"]).unwrap();
    let _: String = run(&mut c, &["FUNCTION", "FLUSH"]).unwrap();
    assert_eq!(
        run::<String>(&mut c, &["DEBUG", "RELOAD", "NOSAVE"]).unwrap(),
        "OK"
    );
    assert_eq!(contents(&mut c), before);
    assert_eq!(
        run::<String>(&mut c, &["FCALL", "hello", "0"]).unwrap(),
        "hi"
    );
    // Adding the file to what is there: NOSAVE NOFLUSH MERGE.
    let _: () = run(&mut c, &["SET", "new", "1"]).unwrap();
    assert_eq!(
        run::<String>(&mut c, &["DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE"]).unwrap(),
        "OK"
    );
    assert_eq!(run::<String>(&mut c, &["GET", "new"]).unwrap(), "1");
    // A key WATCHed across a reload: the transaction fails, as a flush.
    let _: () = run(&mut c, &["WATCH", "str"]).unwrap();
    let mut other = s.client();
    assert_eq!(
        run::<String>(&mut other, &["DEBUG", "RELOAD"]).unwrap(),
        "OK"
    );
    let _: () = run(&mut c, &["MULTI"]).unwrap();
    let _: String = run(&mut c, &["SET", "str", "x"]).unwrap();
    assert_eq!(run::<Option<Vec<String>>>(&mut c, &["EXEC"]).unwrap(), None);
}

#[test]
fn shutdown_save_writes_the_snapshot() {
    let dir = temp_dir("persist-shutdown");
    {
        let s = start_in(&dir);
        let mut c = s.client();
        let _: () = run(&mut c, &["SET", "k", "v"]).unwrap();
        let _: redis::RedisResult<()> = redis::cmd("SHUTDOWN").arg("SAVE").query(&mut c);
    }
    let s = start_in(&dir);
    let mut c = s.client();
    assert_eq!(run::<String>(&mut c, &["GET", "k"]).unwrap(), "v");
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Starts a server on `dir` without the test harness's `expect`, for
/// files that must be refused.
fn bind_error(dir: &Path) -> String {
    let args = [
        "--port",
        "0",
        "--bind",
        "127.0.0.1",
        "--dir",
        &dir.to_string_lossy(),
    ]
    .map(String::from)
    .to_vec();
    let config = ferrum_server::Config::from_args(args).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let run = async {
        let server = ferrum_server::Server::bind(config).await?;
        let never = tokio_util::sync::CancellationToken::new();
        tokio::time::timeout(std::time::Duration::from_secs(30), server.run(never))
            .await
            .map_err(|_| anyhow::anyhow!("the server started: no load failure"))?
    };
    match rt.block_on(run) {
        Ok(()) => String::new(),
        Err(e) => format!("{e:#}"),
    }
}

/// Keys in all 16 databases.
fn all_keys(c: &mut redis::Connection) -> u64 {
    let info: String = run(c, &["INFO", "keyspace"]).unwrap();
    info.lines()
        .filter_map(|l| {
            l.split_once(":keys=")?
                .1
                .split(',')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum()
}

#[test]
fn a_corrupt_or_truncated_file_stops_the_start_with_its_offset() {
    let dir = temp_dir("persist-corrupt");
    let saved_keys = {
        let s = start_in(&dir);
        let mut c = s.client();
        fill(&mut c);
        let _: String = run(&mut c, &["SAVE"]).unwrap();
        all_keys(&mut c)
    };
    let good = std::fs::read(dir.join("dump.rdb")).unwrap();
    std::fs::write(dir.join("dump.rdb"), &good[..good.len() / 2]).unwrap();
    let e = bind_error(&dir);
    assert!(
        e.contains("dump.rdb")
            && e.contains("unexpected end of file")
            && e.contains("at byte offset"),
        "{e}"
    );
    // Asked to, the server starts with the keys before the damage.
    let d = dir.to_string_lossy().into_owned();
    let s = TestServer::start_with(&["--dir", &d, "--rdb-load-partial", "yes"]);
    let mut c = s.client();
    let keys = all_keys(&mut c);
    assert!(0 < keys && keys < saved_keys, "{keys} of {saved_keys} keys");
    drop(s);
    std::fs::write(dir.join("dump.rdb"), &good[..good.len() / 2]).unwrap();
    let mut flipped = good.clone();
    let at = good.len() - 20;
    flipped[at] ^= 0xff;
    std::fs::write(dir.join("dump.rdb"), &flipped).unwrap();
    let e = bind_error(&dir);
    assert!(e.contains("at byte offset"), "{e}");
    std::fs::write(dir.join("dump.rdb"), b"not an rdb file").unwrap();
    let e = bind_error(&dir);
    assert!(e.contains("not an RDB file"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn files_move_between_redis_and_ferrumkv_both_ways() {
    let theirs = temp_dir("persist-from-redis");
    let dir = theirs.to_string_lossy().into_owned();
    let debug = ["--enable-debug-command", "yes"];
    let Some(redis) = RedisServer::start_with(&["--dir", &dir, debug[0], debug[1]]) else {
        return;
    };
    let mut r = redis::Client::open(format!("redis://127.0.0.1:{}/", redis.port))
        .unwrap()
        .get_connection()
        .unwrap();
    fill(&mut r);
    let expected = contents(&mut r);
    let digest: String = run(&mut r, &["DEBUG", "DIGEST"]).unwrap();
    let keys: Vec<String> = run(&mut r, &["KEYS", "*"]).unwrap();
    let mut digest_values = vec!["DEBUG", "DIGEST-VALUE"];
    digest_values.extend(keys.iter().map(String::as_str));
    let value_digests: Vec<String> = run(&mut r, &digest_values).unwrap();
    let _: String = run(&mut r, &["SAVE"]).unwrap();
    drop(redis);
    // Redis's file, loaded here (by a server that lets a local client
    // move its `dir`).
    let s = TestServer::start_with(&[
        "--dir",
        &theirs.to_string_lossy(),
        "--enable-protected-configs",
        "local",
    ]);
    let mut c = s.client();
    assert_eq!(contents(&mut c), expected);
    assert_eq!(
        run::<String>(&mut c, &["FCALL", "hello", "0"]).unwrap(),
        "hi"
    );
    // Redis's digests, computed here the same way.
    assert_eq!(run::<String>(&mut c, &["DEBUG", "DIGEST"]).unwrap(), digest);
    assert_eq!(
        run::<Vec<String>>(&mut c, &digest_values).unwrap(),
        value_digests
    );
    // Saved here, loaded by Redis.
    let ours = temp_dir("persist-to-redis");
    let ours_s = ours.to_string_lossy().into_owned();
    let _: () = run(&mut c, &["CONFIG", "SET", "dir", &ours_s]).unwrap();
    // Under AHE the file also carries its state in an aux field, which
    // Redis must skip.
    let _: () = run(
        &mut c,
        &["CONFIG", "SET", "maxmemory-policy", "allkeys-ahe"],
    )
    .unwrap();
    let _: String = run(&mut c, &["SAVE"]).unwrap();
    drop(s);
    let file = std::fs::read(ours.join("dump.rdb")).unwrap();
    assert!(file.windows(19).any(|w| w == b"ferrum-policy-state"));
    let check = std::process::Command::new("redis-check-rdb")
        .arg(ours.join("dump.rdb"))
        .output();
    if let Ok(out) = check {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    let redis = RedisServer::start_with(&["--dir", &ours_s, debug[0], debug[1]]).unwrap();
    let mut r = redis::Client::open(format!("redis://127.0.0.1:{}/", redis.port))
        .unwrap()
        .get_connection()
        .unwrap();
    assert_eq!(contents(&mut r), expected);
    assert_eq!(
        run::<String>(&mut r, &["FCALL", "hello", "0"]).unwrap(),
        "hi"
    );
    assert_eq!(run::<String>(&mut r, &["DEBUG", "DIGEST"]).unwrap(), digest);
    drop(redis);
    let _ = std::fs::remove_dir_all(&theirs);
    let _ = std::fs::remove_dir_all(&ours);
}

#[test]
fn debug_populate_and_digest_behave_as_in_redis() {
    let s = TestServer::start();
    let mut c = s.client();
    let zeros = "0".repeat(40);
    assert_eq!(run::<String>(&mut c, &["DEBUG", "DIGEST"]).unwrap(), zeros);
    let _: () = run(&mut c, &["SET", "key:3", "kept"]).unwrap();
    let _: () = run(&mut c, &["DEBUG", "POPULATE", "1000"]).unwrap();
    assert_eq!(run::<i64>(&mut c, &["DBSIZE"]).unwrap(), 1000);
    assert_eq!(
        run::<String>(&mut c, &["GET", "key:999"]).unwrap(),
        "value:999"
    );
    assert_eq!(run::<String>(&mut c, &["GET", "key:3"]).unwrap(), "kept");
    let _: () = run(&mut c, &["DEBUG", "POPULATE", "2", "p", "3"]).unwrap();
    assert_eq!(run::<String>(&mut c, &["GET", "p:1"]).unwrap(), "val");
    let _: () = run(&mut c, &["DEBUG", "POPULATE", "2", "q", "10"]).unwrap();
    let padded: Vec<u8> = run(&mut c, &["GET", "q:1"]).unwrap();
    assert_eq!(padded, b"value:1\0\0\0");
    assert_eq!(
        err(&mut c, &["DEBUG", "POPULATE", "-1"]),
        "ERR value is out of range, must be positive"
    );
    let digest: String = run(&mut c, &["DEBUG", "DIGEST"]).unwrap();
    assert_ne!(digest, zeros);
    let _: () = run(&mut c, &["DEBUG", "RELOAD"]).unwrap();
    assert_eq!(run::<String>(&mut c, &["DEBUG", "DIGEST"]).unwrap(), digest);
    // A changed value changes the digest, and one key's digest alone.
    let before: Vec<String> = run(&mut c, &["DEBUG", "DIGEST-VALUE", "key:1", "nokey"]).unwrap();
    assert_eq!(before[1], zeros);
    let _: () = run(&mut c, &["SET", "key:1", "other"]).unwrap();
    let after: Vec<String> = run(&mut c, &["DEBUG", "DIGEST-VALUE", "key:1"]).unwrap();
    assert_ne!(after[0], before[0]);
    assert_ne!(run::<String>(&mut c, &["DEBUG", "DIGEST"]).unwrap(), digest);
    let _: () = run(&mut c, &["FLUSHALL"]).unwrap();
    assert_eq!(run::<String>(&mut c, &["DEBUG", "DIGEST"]).unwrap(), zeros);
}

/// Polls `INFO persistence` until no background save runs (30 s at most).
fn wait_for_bgsave(c: &mut redis::Connection) -> std::collections::HashMap<String, String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let f = info_fields(c, "persistence");
        if f["rdb_bgsave_in_progress"] == "0" {
            return f;
        }
        assert!(std::time::Instant::now() < deadline, "BGSAVE never ended");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn bgsave_writes_the_data_as_it_was_when_it_started() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["DEBUG", "POPULATE", "5000"]).unwrap();
    let _: () = run(&mut c, &["SELECT", "2"]).unwrap();
    let _: () = run(&mut c, &["DEBUG", "POPULATE", "500", "other"]).unwrap();
    let _: () = run(&mut c, &["SELECT", "0"]).unwrap();
    let _: () = run(&mut c, &["SET", "ttl", "t", "EX", "1000"]).unwrap();
    let digest: String = run(&mut c, &["DEBUG", "DIGEST"]).unwrap();
    // Slow the walk down (100 us a key) so the writes below land while
    // it runs.
    let _: () = run(&mut c, &["CONFIG", "SET", "rdb-key-save-delay", "100"]).unwrap();
    let started: String = run(&mut c, &["BGSAVE"]).unwrap();
    assert_eq!(started, "Background saving started");
    let f = info_fields(&mut c, "persistence");
    assert_eq!(f["rdb_bgsave_in_progress"], "1");
    assert_eq!(f["current_save_keys_total"], "5501");
    assert_eq!(
        err(&mut c, &["BGSAVE"]),
        "ERR Background save already in progress"
    );
    assert_eq!(
        err(&mut c, &["SAVE"]),
        "ERR Background save already in progress"
    );
    // Every kind of write, while the save walks.
    for i in (0..5000).step_by(7) {
        let key = format!("key:{i}");
        match i % 4 {
            0 => run::<()>(&mut c, &["SET", &key, "changed"]).unwrap(),
            1 => run::<()>(&mut c, &["DEL", &key]).unwrap(),
            2 => run::<()>(&mut c, &["APPEND", &key, "+"]).unwrap(),
            _ => run::<()>(&mut c, &["EXPIRE", &key, "100"]).unwrap(),
        }
        let _: () = run(&mut c, &["SET", &format!("new:{i}"), "x"]).unwrap();
    }
    let _: () = run(&mut c, &["SWAPDB", "0", "2"]).unwrap();
    let _: () = run(&mut c, &["FLUSHDB"]).unwrap();
    let f = info_fields(&mut c, "persistence");
    if f["rdb_bgsave_in_progress"] == "1" {
        let processed: u64 = f["current_save_keys_processed"].parse().unwrap();
        assert!(processed <= 5501, "{processed}");
    }
    let f = wait_for_bgsave(&mut c);
    assert_eq!(f["rdb_last_bgsave_status"], "ok");
    assert_eq!(f["rdb_saves"], "1");
    let _: () = run(&mut c, &["CONFIG", "SET", "rdb-key-save-delay", "0"]).unwrap();
    // What the file holds is the dataset of the moment BGSAVE started.
    let _: () = run(&mut c, &["DEBUG", "RELOAD", "NOSAVE"]).unwrap();
    assert_eq!(run::<String>(&mut c, &["DEBUG", "DIGEST"]).unwrap(), digest);
    assert_eq!(run::<i64>(&mut c, &["DBSIZE"]).unwrap(), 5001);
}

#[test]
fn flushall_stops_a_bgsave_and_the_last_good_file_stays() {
    // No save points: FLUSHALL would save the empty dataset otherwise.
    let s = TestServer::start_with(&["--save", ""]);
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "first", "1"]).unwrap();
    let _: String = run(&mut c, &["SAVE"]).unwrap();
    let good = std::fs::read(s.dir.join("dump.rdb")).unwrap();
    let _: () = run(&mut c, &["DEBUG", "POPULATE", "5000"]).unwrap();
    // 1 ms a key: 5 seconds unless stopped.
    let _: () = run(&mut c, &["CONFIG", "SET", "rdb-key-save-delay", "1000"]).unwrap();
    let _: String = run(&mut c, &["BGSAVE"]).unwrap();
    let _: () = run(&mut c, &["FLUSHALL"]).unwrap();
    let started = std::time::Instant::now();
    let f = wait_for_bgsave(&mut c);
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    // It saved nothing: the changes are still unsaved, the status is not
    // an error (it was stopped, as Redis's killed child), the file is the
    // last good one and no temporary file is left.
    let changes: u64 = f["rdb_changes_since_last_save"].parse().unwrap();
    assert!(changes >= 5000, "{changes}");
    assert_eq!(f["rdb_last_bgsave_status"], "ok");
    assert_eq!(std::fs::read(s.dir.join("dump.rdb")).unwrap(), good);
    let names: Vec<String> = std::fs::read_dir(&s.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["dump.rdb"]);
    let _: () = run(&mut c, &["SET", "x", "xx"]).unwrap();
    // A new one runs to its end and resets the change counter.
    let _: () = run(&mut c, &["CONFIG", "SET", "rdb-key-save-delay", "0"]).unwrap();
    let _: String = run(&mut c, &["BGSAVE"]).unwrap();
    let f = wait_for_bgsave(&mut c);
    assert_eq!(f["rdb_changes_since_last_save"], "0");
}

#[test]
fn bgsave_in_a_transaction_is_scheduled_for_its_end() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["MULTI"]).unwrap();
    let _: String = run(&mut c, &["BGSAVE"]).unwrap();
    let _: String = run(&mut c, &["SET", "after", "1"]).unwrap();
    let replies: Vec<String> = run(&mut c, &["EXEC"]).unwrap();
    assert_eq!(replies, ["Background saving scheduled", "OK"]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while info_fields(&mut c, "persistence")["rdb_saves"] != "1" {
        assert!(std::time::Instant::now() < deadline, "never saved");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    wait_for_bgsave(&mut c);
    // The save came after the whole transaction.
    let _: () = run(&mut c, &["DEBUG", "RELOAD", "NOSAVE"]).unwrap();
    assert_eq!(run::<String>(&mut c, &["GET", "after"]).unwrap(), "1");
    assert_eq!(err(&mut c, &["BGSAVE", "NOW"]), "ERR syntax error");
}

#[test]
fn rdbcompression_and_rdbchecksum_change_the_file_as_in_redis() {
    let mut sizes = Vec::new();
    // `rdbchecksum` is fixed at start-up, as in Redis.
    for (compression, checksum) in [("yes", "yes"), ("no", "yes"), ("no", "no")] {
        let s = TestServer::start_with(&["--rdbchecksum", checksum]);
        let mut c = s.client();
        let _: () = run(&mut c, &["DEBUG", "POPULATE", "1000", "key", "500"]).unwrap();
        let digest: String = run(&mut c, &["DEBUG", "DIGEST"]).unwrap();
        let _: () = run(&mut c, &["CONFIG", "SET", "rdbcompression", compression]).unwrap();
        let _: String = run(&mut c, &["SAVE"]).unwrap();
        let bytes = std::fs::read(s.dir.join("dump.rdb")).unwrap();
        sizes.push(bytes.len());
        let crc = &bytes[bytes.len() - 8..];
        assert_eq!(crc == [0; 8], checksum == "no", "{compression} {checksum}");
        let _: () = run(&mut c, &["DEBUG", "RELOAD", "NOSAVE"]).unwrap();
        assert_eq!(run::<String>(&mut c, &["DEBUG", "DIGEST"]).unwrap(), digest);
    }
    // 500-byte values of "value:N" and zeros: LZF shrinks them a lot.
    assert!(sizes[0] * 5 < sizes[1], "{sizes:?}");
    assert_eq!(sizes[1], sizes[2]);
}

#[test]
fn with_save_points_flushall_saves_and_changes_start_a_bgsave() {
    let s = TestServer::start_with(&["--save", "1 3"]);
    let mut c = s.client();
    for k in ["a", "b"] {
        let _: () = run(&mut c, &["SET", k, "1"]).unwrap();
    }
    // Two changes: under the save point's three, nothing is saved.
    std::thread::sleep(std::time::Duration::from_millis(2300));
    assert_eq!(info_fields(&mut c, "persistence")["rdb_saves"], "0");
    let _: () = run(&mut c, &["SET", "c", "1"]).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while info_fields(&mut c, "persistence")["rdb_saves"] != "1" {
        assert!(
            std::time::Instant::now() < deadline,
            "the save point never saved"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let f = wait_for_bgsave(&mut c);
    assert_eq!(f["rdb_changes_since_last_save"], "0");
    // FLUSHALL saves the empty dataset at once, so a restart is empty.
    let _: () = run(&mut c, &["FLUSHALL"]).unwrap();
    let f = info_fields(&mut c, "persistence");
    assert_eq!(f["rdb_changes_since_last_save"], "0");
    assert_eq!(f["rdb_saves"], "2");
    let _: () = run(&mut c, &["DEBUG", "RELOAD", "NOSAVE"]).unwrap();
    assert_eq!(run::<i64>(&mut c, &["DBSIZE"]).unwrap(), 0);
}

#[test]
fn a_failed_bgsave_stops_writes_until_a_save_succeeds() {
    let s = TestServer::start_with(&["--save", "3600 1"]);
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "x", "1"]).unwrap();
    // The directory gone: the save fails.
    let moved = s.dir.with_extension("moved");
    std::fs::rename(&s.dir, &moved).unwrap();
    let _: String = run(&mut c, &["BGSAVE"]).unwrap();
    let f = wait_for_bgsave(&mut c);
    assert_eq!(f["rdb_last_bgsave_status"], "err");
    // Reads work; writes, and scripts and transactions that write, get
    // -MISCONF.
    assert_eq!(run::<String>(&mut c, &["GET", "x"]).unwrap(), "1");
    assert!(err(&mut c, &["SET", "x", "2"]).starts_with("MISCONF "));
    let script = ["EVAL", "return redis.call('set','x','3')", "1", "x"];
    assert!(
        err(&mut c, &script).contains("MISCONF"),
        "{}",
        err(&mut c, &script)
    );
    // Refused as it is queued, so the transaction aborts (as in Redis).
    let _: () = run(&mut c, &["MULTI"]).unwrap();
    assert!(err(&mut c, &["SET", "x", "4"]).starts_with("MISCONF "));
    assert!(err(&mut c, &["EXEC"]).starts_with("EXECABORT"));
    // Not with stop-writes-on-bgsave-error off.
    let _: () = run(
        &mut c,
        &["CONFIG", "SET", "stop-writes-on-bgsave-error", "no"],
    )
    .unwrap();
    let _: () = run(&mut c, &["SET", "x", "5"]).unwrap();
    let _: () = run(
        &mut c,
        &["CONFIG", "SET", "stop-writes-on-bgsave-error", "yes"],
    )
    .unwrap();
    assert!(err(&mut c, &["SET", "x", "6"]).starts_with("MISCONF "));
    // The directory back, a save that succeeds lifts it.
    std::fs::rename(&moved, &s.dir).unwrap();
    let _: String = run(&mut c, &["BGSAVE"]).unwrap();
    let f = wait_for_bgsave(&mut c);
    assert_eq!(f["rdb_last_bgsave_status"], "ok");
    let _: () = run(&mut c, &["SET", "x", "7"]).unwrap();
}

#[test]
fn debug_set_skip_checksum_validation_lets_restore_ignore_the_crc() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "k", "v"]).unwrap();
    let mut payload: Vec<u8> = run(&mut c, &["DUMP", "k"]).unwrap();
    let last = payload.len() - 1;
    payload[last] ^= 0xff;
    let restore = |c: &mut redis::Connection, p: &[u8]| {
        redis::cmd("RESTORE")
            .arg("k2")
            .arg(0)
            .arg(p)
            .arg("REPLACE")
            .query::<()>(c)
    };
    let e = restore(&mut c, &payload).expect_err("bad CRC");
    assert!(e.to_string().contains("checksum"), "{e}");
    let _: () = run(&mut c, &["DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "1"]).unwrap();
    restore(&mut c, &payload).expect("CRC not checked");
    assert_eq!(run::<String>(&mut c, &["GET", "k2"]).unwrap(), "v");
    // The rest of the payload is still checked.
    let e = restore(&mut c, &payload[1..]).expect_err("bad data");
    assert!(
        e.to_string().contains("Bad data format") || e.to_string().contains("checksum"),
        "{e}"
    );
    let _: () = run(&mut c, &["DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "0"]).unwrap();
    assert!(restore(&mut c, &payload).is_err());
}
