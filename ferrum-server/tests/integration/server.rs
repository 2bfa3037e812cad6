//! Server commands: INFO, CONFIG, COMMAND, DBSIZE, FLUSHDB/FLUSHALL, SWAPDB,
//! TIME.

use std::collections::HashMap;

use crate::common::{err, run, TestServer};

fn info_fields(info: &str) -> HashMap<String, String> {
    info.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.trim().to_string()))
        .collect()
}

#[test]
fn info_sections_use_redis_field_names() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "k", "v"]).unwrap();
    let _: Option<String> = run(&mut c, &["GET", "k"]).unwrap();
    let _: Option<String> = run(&mut c, &["GET", "nope"]).unwrap();
    let info: String = run(&mut c, &["INFO"]).unwrap();
    for section in ["# Server", "# Clients", "# Memory", "# Stats", "# Keyspace"] {
        assert!(info.contains(section), "missing {section}");
    }
    let f = info_fields(&info);
    for field in [
        "redis_version",
        "redis_git_sha1",
        "redis_git_dirty",
        "tcp_port",
        "uptime_in_seconds",
        "connected_clients",
        "maxclients",
        "used_memory",
        "used_memory_human",
        "used_memory_rss",
        "maxmemory",
        "maxmemory_human",
        "maxmemory_policy",
        "mem_fragmentation_ratio",
        "total_connections_received",
        "total_commands_processed",
        "expired_keys",
        "evicted_keys",
    ] {
        assert!(f.contains_key(field), "missing {field}");
    }
    assert_eq!(f["keyspace_hits"], "1");
    assert_eq!(f["keyspace_misses"], "1");
    assert_eq!(f["maxmemory_policy"], "noeviction");
    assert_eq!(f["db0"], "keys=1,expires=0,avg_ttl=0");
    assert_eq!(f["tcp_port"], s.addr.port().to_string());
    let only: String = run(&mut c, &["INFO", "memory"]).unwrap();
    assert!(only.starts_with("# Memory") && !only.contains("# Stats"));
    let _: () = run(&mut c, &["CONFIG", "RESETSTAT"]).unwrap();
    let f = info_fields(&run::<String>(&mut c, &["INFO", "stats"]).unwrap());
    assert_eq!(f["keyspace_hits"], "0");
}

/// `CONFIG RESETSTAT` zeroes what Redis 7.0's does, as redis-server
/// 7.0.15 printed it for the same commands: the stats, then the command,
/// error and latency tables hold only `CONFIG RESETSTAT` itself and the
/// `INFO` reading them.
#[test]
fn config_resetstat_zeroes_what_redis_zeroes() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "a", "1"]).unwrap();
    let _: String = run(&mut c, &["GET", "a"]).unwrap();
    let _: Option<String> = run(&mut c, &["GET", "missing"]).unwrap();
    let _: () = run(&mut c, &["SET", "e", "1", "PX", "1"]).unwrap();
    s.advance(&mut c, 10);
    let _: Option<String> = run(&mut c, &["GET", "e"]).unwrap();
    err(&mut c, &["LPUSH", "a", "x"]);
    drop(s.client());
    let before = info_fields(&run::<String>(&mut c, &["INFO", "stats"]).unwrap());
    assert_eq!(before["expired_keys"], "1", "{before:?}");
    assert_eq!(before["total_error_replies"], "1");
    let _: () = run(&mut c, &["CONFIG", "RESETSTAT"]).unwrap();
    let info: String = run(&mut c, &["INFO", "everything"]).unwrap();
    let f = info_fields(&info);
    for (field, value) in [
        ("total_connections_received", "0"),
        ("total_commands_processed", "1"),
        ("rejected_connections", "0"),
        ("expired_keys", "0"),
        ("evicted_keys", "0"),
        ("keyspace_hits", "0"),
        ("keyspace_misses", "0"),
        ("evicted_clients", "0"),
        ("total_error_replies", "0"),
        ("lazyfreed_objects", "0"),
    ] {
        assert_eq!(f[field], value, "{field}");
    }
    let section = |name: &str| -> Vec<&str> {
        let start = info.find(name).expect(name) + name.len();
        let body = &info[start..];
        body[..body.find("\r\n#").unwrap_or(body.len())]
            .split("\r\n")
            .filter_map(|l| l.split_once(':').map(|(k, _)| k))
            .collect()
    };
    let mut commands = section("# Commandstats");
    commands.sort_unstable();
    assert_eq!(
        commands,
        ["cmdstat_config|resetstat"],
        "INFO itself counts after it runs"
    );
    assert!(section("# Errorstats").is_empty());
    let latency = section("# Latencystats");
    assert_eq!(latency, ["latency_percentiles_usec_config|resetstat"]);
}

/// DEBUG has no subcommands in Redis 7.0's table: it counts, and its
/// latency shows, as `debug`, whatever follows it.
#[test]
fn debug_counts_as_one_command() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["DEBUG", "SLEEP", "0"]).unwrap();
    let info: String = run(&mut c, &["INFO", "commandstats", "latencystats"]).unwrap();
    assert!(info.contains("\r\ncmdstat_debug:calls=1,"), "{info}");
    assert!(
        info.contains("\r\nlatency_percentiles_usec_debug:p50="),
        "{info}"
    );
    assert!(!info.contains("debug|"), "{info}");
    let list: String = run(&mut c, &["CLIENT", "LIST"]).unwrap();
    assert!(list.contains(" cmd=client|list "), "{list}");
}

/// `enable-debug-command local` serves a loopback client, as Redis's
/// `local` does; `no` refuses everyone with Redis's text.
#[test]
fn debug_command_for_local_clients_only() {
    let local = TestServer::start_with(&["--enable-debug-command", "local"]);
    let mut c = local.client();
    let n: i64 = run(&mut c, &["DEBUG", "EXPIRE-CYCLE"]).unwrap();
    assert_eq!(n, 0);
    let off = TestServer::start_with(&["--enable-debug-command", "no"]);
    let e = err(&mut off.client(), &["DEBUG", "EXPIRE-CYCLE"]);
    assert!(e.starts_with("ERR DEBUG command not allowed."), "{e}");
}

#[test]
fn config_get_set_with_globs() {
    let s = TestServer::start();
    let mut c = s.client();
    let got: HashMap<String, String> = run(&mut c, &["CONFIG", "GET", "maxmemory*"]).unwrap();
    assert_eq!(got["maxmemory"], "0");
    assert_eq!(got["maxmemory-policy"], "noeviction");
    assert_eq!(got["maxmemory-samples"], "5");
    let _: () = run(&mut c, &["CONFIG", "SET", "maxmemory", "16mb"]).unwrap();
    let got: HashMap<String, String> = run(&mut c, &["CONFIG", "GET", "maxmemory"]).unwrap();
    assert_eq!(got["maxmemory"], (16 * 1024 * 1024).to_string());
    let _: () = run(
        &mut c,
        &["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"],
    )
    .unwrap();
    let f = info_fields(&run::<String>(&mut c, &["INFO", "memory"]).unwrap());
    assert_eq!(f["maxmemory_policy"], "allkeys-lru");
    assert_eq!(f["maxmemory"], (16 * 1024 * 1024).to_string());
    assert!(
        err(&mut c, &["CONFIG", "SET", "databases", "1"]).contains("can't set immutable config")
    );
    assert!(err(&mut c, &["CONFIG", "SET", "nosuch", "1"]).starts_with("ERR Unknown option"));
    assert!(err(&mut c, &["CONFIG", "SET", "maxmemory-policy", "bogus"]).starts_with("ERR"));
    let got: HashMap<String, String> = run(&mut c, &["CONFIG", "GET", "nomatch*"]).unwrap();
    assert!(got.is_empty());
    assert_eq!(
        err(&mut c, &["CONFIG", "GET"]),
        "ERR wrong number of arguments for 'config|get' command"
    );
}

/// A port nobody listens on now: the OS picks it, the probe lets it go.
fn free_port() -> u16 {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("probe");
    probe.local_addr().expect("probe addr").port()
}

fn config_get(c: &mut redis::Connection, name: &str) -> String {
    let got: HashMap<String, String> = run(c, &["CONFIG", "GET", name]).unwrap();
    got[name].clone()
}

fn pings(port: u16) -> bool {
    redis::Client::open(format!("redis://127.0.0.1:{port}/"))
        .and_then(|client| client.get_connection())
        .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c))
        .is_ok_and(|pong| pong == "PONG")
}

#[test]
fn config_set_port_moves_the_listener_and_keeps_connections() {
    let s = TestServer::start();
    let mut c = s.client();
    let old = s.addr.port();
    assert_eq!(config_get(&mut c, "port"), old.to_string());
    let new = free_port();
    let _: () = run(&mut c, &["CONFIG", "SET", "port", &new.to_string()]).unwrap();
    assert_eq!(config_get(&mut c, "port"), new.to_string());
    assert!(pings(new), "the new port serves");
    assert!(!pings(old), "the old port is closed");
    let pong: String = run(&mut c, &["PING"]).unwrap();
    assert_eq!(pong, "PONG", "a connection made before the move stays");
    let info = run::<String>(&mut c, &["INFO", "server"]).unwrap();
    assert_eq!(info_fields(&info)["tcp_port"], new.to_string());
}

#[test]
fn config_set_port_in_use_fails_and_rolls_back_every_pair() {
    let s = TestServer::start();
    let mut c = s.client();
    let port = s.addr.port();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("taken");
    let used = taken.local_addr().unwrap().port().to_string();
    let maxmemory = config_get(&mut c, "maxmemory");
    assert_eq!(
        err(&mut c, &["CONFIG", "SET", "maxmemory", "10000001", "port", &used]),
        "ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs."
    );
    assert_eq!(config_get(&mut c, "maxmemory"), maxmemory);
    assert_eq!(config_get(&mut c, "port"), port.to_string());
    assert!(pings(port), "the old port is bound again");
    // The same value is no change: nothing rebinds.
    let _: () = run(&mut c, &["CONFIG", "SET", "port", &port.to_string()]).unwrap();
    assert!(pings(port));
}

#[test]
fn config_set_bind_rebinds_and_refuses_an_address_not_here() {
    let s = TestServer::start();
    let mut c = s.client();
    let port = s.addr.port();
    // `-` marks an optional address: one this machine lacks is skipped.
    let _: () = run(&mut c, &["CONFIG", "SET", "bind", "127.0.0.1 -192.0.2.1"]).unwrap();
    assert_eq!(config_get(&mut c, "bind"), "127.0.0.1 -192.0.2.1");
    assert!(pings(port), "127.0.0.1 is bound again on the same port");
    // 192.0.2.1 (TEST-NET-1) is never local.
    assert_eq!(
        err(&mut c, &["CONFIG", "SET", "bind", "192.0.2.1"]),
        "ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified addresses."
    );
    assert_eq!(config_get(&mut c, "bind"), "127.0.0.1 -192.0.2.1");
    assert!(pings(port));
    assert!(
        err(&mut c, &["CONFIG", "SET", "bind", "999.999.999.999"]).contains("Failed to bind"),
        "an address that is not one fails when bound, as in Redis"
    );
}

#[test]
fn command_introspection() {
    let s = TestServer::start();
    let mut c = s.client();
    let count: i64 = run(&mut c, &["COMMAND", "COUNT"]).unwrap();
    let list: Vec<String> = run(&mut c, &["COMMAND", "LIST"]).unwrap();
    // COMMAND LIST names subcommands too (`client|list`), as Redis does;
    // COMMAND COUNT counts only commands.
    assert_eq!(
        count as usize,
        list.iter().filter(|n| !n.contains('|')).count()
    );
    assert!(list.iter().any(|n| n == "client|list"));
    for name in ["get", "set", "multi", "exec", "scan", "client", "hello"] {
        assert!(
            list.iter().any(|n| n == name),
            "{name} missing from COMMAND LIST"
        );
    }
    let info: redis::Value = run(&mut c, &["COMMAND", "INFO", "get", "nosuch"]).unwrap();
    let redis::Value::Array(items) = info else {
        panic!("{info:?}")
    };
    assert_eq!(items.len(), 2);
    let redis::Value::Array(get) = &items[0] else {
        panic!("{:?}", items[0])
    };
    assert_eq!(get[0], redis::Value::BulkString(b"get".to_vec()));
    assert_eq!(get[1], redis::Value::Int(2));
    assert_eq!(items[1], redis::Value::Nil);
    let docs: redis::Value = run(&mut c, &["COMMAND", "DOCS", "set"]).unwrap();
    assert!(format!("{docs:?}").contains("summary"));
}

/// A subcommand is a row of its own, as in Redis 7.0.15: `COMMAND INFO
/// config` lists `config|get` and the others last, `COMMAND INFO
/// config|get` (any case) answers with that row, and `COMMAND DOCS client`
/// has a `subcommands` map with each one's docs.
#[test]
fn command_info_and_docs_report_subcommands_as_rows() {
    let s = TestServer::start();
    let mut c = s.client();
    let bulk = |v: &redis::Value| match v {
        redis::Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        redis::Value::SimpleString(s) => s.clone(),
        other => panic!("{other:?}"),
    };
    let info: Vec<Vec<redis::Value>> =
        run(&mut c, &["COMMAND", "INFO", "config", "CONFIG|get"]).unwrap();
    let redis::Value::Array(subs) = &info[0][9] else {
        panic!("{:?}", info[0][9])
    };
    let names: Vec<String> = subs
        .iter()
        .map(|s| match s {
            redis::Value::Array(row) => bulk(&row[0]),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        names,
        [
            "config|get",
            "config|help",
            "config|resetstat",
            "config|rewrite",
            "config|set"
        ]
    );
    let get = &info[1];
    assert_eq!(bulk(&get[0]), "config|get");
    assert_eq!(get[1], redis::Value::Int(-3));
    let redis::Value::Array(flags) = &get[2] else {
        panic!("{:?}", get[2])
    };
    let flags: Vec<String> = flags.iter().map(bulk).collect();
    assert_eq!(flags, ["admin", "noscript", "loading", "stale"]);
    let redis::Value::Array(cats) = &get[6] else {
        panic!("{:?}", get[6])
    };
    let cats: Vec<String> = cats.iter().map(bulk).collect();
    assert_eq!(cats, ["@admin", "@slow", "@dangerous"]);
    // OBJECT's subcommands name their key as the container does.
    let object: Vec<Vec<redis::Value>> =
        run(&mut c, &["COMMAND", "INFO", "object|encoding"]).unwrap();
    assert_eq!(
        object[0][3..6],
        [
            redis::Value::Int(2),
            redis::Value::Int(2),
            redis::Value::Int(1)
        ]
    );
    let docs = format!(
        "{:?}",
        run::<redis::Value>(&mut c, &["COMMAND", "DOCS", "client"]).unwrap()
    );
    assert!(docs.contains("subcommands"), "{docs}");
    assert!(docs.contains("client|list"), "{docs}");
    assert!(
        docs.contains("Get the list of client connections"),
        "{docs}"
    );
    let docs = format!(
        "{:?}",
        run::<redis::Value>(&mut c, &["COMMAND", "DOCS", "config|set"]).unwrap()
    );
    assert!(
        docs.contains("Set configuration parameters to the given values"),
        "{docs}"
    );
    assert!(docs.contains("2.0.0"), "{docs}");
}

#[test]
fn dbsize_flush_swapdb_time() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["MSET", "a", "1", "b", "2"]).unwrap();
    let _: () = run(&mut c, &["SELECT", "1"]).unwrap();
    let _: () = run(&mut c, &["SET", "c", "3"]).unwrap();
    assert_eq!(run::<i64>(&mut c, &["DBSIZE"]).unwrap(), 1);
    let _: () = run(&mut c, &["SWAPDB", "0", "1"]).unwrap();
    assert_eq!(run::<i64>(&mut c, &["DBSIZE"]).unwrap(), 2);
    assert_eq!(run::<String>(&mut c, &["GET", "a"]).unwrap(), "1");
    assert_eq!(
        err(&mut c, &["SWAPDB", "0", "99"]),
        "ERR DB index is out of range"
    );
    assert_eq!(
        err(&mut c, &["SWAPDB", "x", "1"]),
        "ERR invalid first DB index"
    );
    let _: () = run(&mut c, &["FLUSHDB"]).unwrap();
    assert_eq!(run::<i64>(&mut c, &["DBSIZE"]).unwrap(), 0);
    let _: () = run(&mut c, &["SELECT", "0"]).unwrap();
    assert_eq!(run::<i64>(&mut c, &["DBSIZE"]).unwrap(), 1);
    assert_eq!(err(&mut c, &["FLUSHALL", "BOGUS"]), "ERR syntax error");
    let _: () = run(&mut c, &["FLUSHALL", "ASYNC"]).unwrap();
    assert_eq!(run::<i64>(&mut c, &["DBSIZE"]).unwrap(), 0);
    let (secs, micros): (u64, u64) = run(&mut c, &["TIME"]).unwrap();
    assert!(secs > 1_700_000_000 && micros < 1_000_000);
}

#[test]
fn noeviction_refuses_writes_over_maxmemory_and_keeps_data() {
    let s = TestServer::start_with(&["--maxmemory", "1mb"]);
    let mut c = s.client();
    let value = "x".repeat(1000);
    let mut stored = 0;
    let oom = loop {
        match run::<()>(&mut c, &["SET", &format!("k{stored}"), &value]) {
            Ok(()) => stored += 1,
            Err(e) => break format!("{} {}", e.code().unwrap_or(""), e.detail().unwrap_or("")),
        }
        assert!(stored < 10_000, "maxmemory never enforced");
    };
    assert_eq!(
        oom,
        "OOM command not allowed when used memory > 'maxmemory'."
    );
    // Reads and deletes still work, and nothing stored was lost.
    assert_eq!(run::<i64>(&mut c, &["DBSIZE"]).unwrap(), stored);
    assert_eq!(run::<String>(&mut c, &["GET", "k0"]).unwrap(), value);
    assert_eq!(run::<i64>(&mut c, &["DEL", "k0", "k1"]).unwrap(), 2);
}

#[test]
fn allkeys_lru_evicts_to_stay_under_maxmemory() {
    let s = TestServer::start_with(&["--maxmemory", "1mb", "--maxmemory-policy", "allkeys-lru"]);
    let mut c = s.client();
    let value = "x".repeat(1000);
    for i in 0..5_000 {
        let _: () = run(&mut c, &["SET", &format!("k{i}"), &value]).unwrap();
    }
    let f = info_fields(&run::<String>(&mut c, &["INFO"]).unwrap());
    let used: u64 = f["used_memory_dataset"].parse().unwrap();
    assert!(
        used <= 1024 * 1024 + 4096,
        "used_memory_dataset {used} over the limit"
    );
    let evicted: u64 = f["evicted_keys"].parse().unwrap();
    let dbsize: u64 = run(&mut c, &["DBSIZE"]).unwrap();
    assert_eq!(evicted + dbsize, 5_000);
    // The most recent write survives; the first ones went.
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "k4999"]).unwrap(), 1);
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "k0"]).unwrap(), 0);
}

#[test]
fn proto_max_bulk_len_stops_below_four_gib() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(
        &mut c,
        &["CONFIG", "SET", "proto-max-bulk-len", "4294967295"],
    )
    .unwrap();
    let e = err(
        &mut c,
        &["CONFIG", "SET", "proto-max-bulk-len", "4294967296"],
    );
    assert!(e.contains("argument must be between"), "{e}");
}
