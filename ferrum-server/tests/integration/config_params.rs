//! Every parameter Redis 7.0.15 lists: `CONFIG GET *`'s names, and round
//! trips through `CONFIG SET`/`GET`, the command line and a configuration
//! file for a sample of each kind (boolean, bounded integer, enum, string,
//! memory size, immutable, alias), with Redis's error texts.
//!
//! Every error text below was checked against Debian's redis-server 7.0.15
//! (`/usr/bin/redis-server --port P --save ""`) with redis-cli, beside a
//! FerrumKV started the same way: the replies were byte for byte the same.

use std::collections::{BTreeSet, HashMap};

use crate::common::{err, run, TestServer};

/// The names `CONFIG GET *` lists on a fresh Redis 7.0.15: Debian's
/// redis-server 7.0.15 started with `--port P --save ""` and no file, then
/// `redis-cli -p P config get '*' | paste - - | cut -f1 | sort` (192 names,
/// aliases included; hidden parameters such as `key-load-delay` are not
/// listed).
const REDIS_7_0_15_NAMES: &str = "
    acl-pubsub-default aclfile acllog-max-len active-defrag-cycle-max 
    active-defrag-cycle-min active-defrag-ignore-bytes 
    active-defrag-max-scan-fields active-defrag-threshold-lower 
    active-defrag-threshold-upper active-expire-effort activedefrag 
    activerehashing always-show-logo aof-disable-auto-gc aof-load-truncated 
    aof-rewrite-incremental-fsync aof-timestamp-enabled aof-use-rdb-preamble 
    aof_rewrite_cpulist appenddirname appendfilename appendfsync appendonly 
    auto-aof-rewrite-min-size auto-aof-rewrite-percentage bgsave_cpulist bind 
    bind-source-addr bio_cpulist busy-reply-threshold 
    client-output-buffer-limit client-query-buffer-limit 
    cluster-allow-pubsubshard-when-down cluster-allow-reads-when-down 
    cluster-allow-replica-migration cluster-announce-bus-port 
    cluster-announce-hostname cluster-announce-ip cluster-announce-port 
    cluster-announce-tls-port cluster-config-file cluster-enabled 
    cluster-link-sendbuf-limit cluster-migration-barrier cluster-node-timeout 
    cluster-port cluster-preferred-endpoint-type cluster-replica-no-failover 
    cluster-replica-validity-factor cluster-require-full-coverage 
    cluster-slave-no-failover cluster-slave-validity-factor crash-log-enabled 
    crash-memcheck-enabled daemonize databases dbfilename dir disable-thp 
    dynamic-hz enable-debug-command enable-module-command 
    enable-protected-configs hash-max-listpack-entries hash-max-listpack-value 
    hash-max-ziplist-entries hash-max-ziplist-value hll-sparse-max-bytes hz 
    ignore-warnings io-threads io-threads-do-reads jemalloc-bg-thread 
    latency-monitor-threshold latency-tracking 
    latency-tracking-info-percentiles lazyfree-lazy-eviction 
    lazyfree-lazy-expire lazyfree-lazy-server-del lazyfree-lazy-user-del 
    lazyfree-lazy-user-flush lfu-decay-time lfu-log-factor list-compress-depth 
    list-max-listpack-size list-max-ziplist-size logfile loglevel 
    lua-time-limit masterauth masteruser maxclients maxmemory maxmemory-clients 
    maxmemory-eviction-tenacity maxmemory-policy maxmemory-samples 
    min-replicas-max-lag min-replicas-to-write min-slaves-max-lag 
    min-slaves-to-write no-appendfsync-on-rewrite notify-keyspace-events 
    oom-score-adj oom-score-adj-values pidfile port proc-title-template 
    propagation-error-behavior protected-mode proto-max-bulk-len 
    rdb-del-sync-files rdb-save-incremental-fsync rdbchecksum rdbcompression 
    repl-backlog-size repl-backlog-ttl repl-disable-tcp-nodelay 
    repl-diskless-load repl-diskless-sync repl-diskless-sync-delay 
    repl-diskless-sync-max-replicas repl-ping-replica-period 
    repl-ping-slave-period repl-timeout replica-announce-ip 
    replica-announce-port replica-announced replica-ignore-disk-write-errors 
    replica-ignore-maxmemory replica-lazy-flush replica-priority 
    replica-read-only replica-serve-stale-data replicaof requirepass 
    sanitize-dump-payload save server_cpulist set-max-intset-entries 
    set-proc-title shutdown-on-sigint shutdown-on-sigterm shutdown-timeout 
    slave-announce-ip slave-announce-port slave-ignore-maxmemory 
    slave-lazy-flush slave-priority slave-read-only slave-serve-stale-data 
    slaveof slowlog-log-slower-than slowlog-max-len socket-mark-id 
    stop-writes-on-bgsave-error stream-node-max-bytes stream-node-max-entries 
    supervised syslog-enabled syslog-facility syslog-ident tcp-backlog 
    tcp-keepalive timeout tls-auth-clients tls-ca-cert-dir tls-ca-cert-file 
    tls-cert-file tls-ciphers tls-ciphersuites tls-client-cert-file 
    tls-client-key-file tls-client-key-file-pass tls-cluster tls-dh-params-file 
    tls-key-file tls-key-file-pass tls-port tls-prefer-server-ciphers 
    tls-protocols tls-replication tls-session-cache-size 
    tls-session-cache-timeout tls-session-caching tracking-table-max-keys 
    unixsocket unixsocketperm zset-max-listpack-entries zset-max-listpack-value 
    zset-max-ziplist-entries zset-max-ziplist-value 
";

/// What FerrumKV lists beyond Redis 7.0.15: Redis 7.2's packed-set
/// thresholds, which FerrumKV implements (see the README).
const FERRUM_EXTRA_NAMES: [&str; 2] = ["set-max-listpack-entries", "set-max-listpack-value"];

fn get(con: &mut redis::Connection, name: &str) -> String {
    let got: HashMap<String, String> = run(con, &["CONFIG", "GET", name]).expect("CONFIG GET");
    got.get(name)
        .unwrap_or_else(|| panic!("CONFIG GET {name}: {got:?}"))
        .clone()
}

fn set(con: &mut redis::Connection, name: &str, value: &str) {
    let _: () = run(con, &["CONFIG", "SET", name, value])
        .unwrap_or_else(|e| panic!("CONFIG SET {name} {value}: {e}"));
}

/// Redis's `CONFIG SET` error frame around `reason`.
fn refused(name: &str, reason: &str) -> String {
    format!("ERR CONFIG SET failed (possibly related to argument '{name}') - {reason}")
}

#[test]
fn config_get_star_lists_what_redis_7_0_15_lists() {
    let server = TestServer::start();
    let mut con = server.client();
    let pairs: Vec<String> = run(&mut con, &["CONFIG", "GET", "*"]).expect("CONFIG GET *");
    let names: Vec<&str> = pairs.iter().step_by(2).map(String::as_str).collect();
    let listed: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(listed.len(), names.len(), "each name once");
    let mut expected: BTreeSet<&str> = REDIS_7_0_15_NAMES.split_whitespace().collect();
    assert_eq!(expected.len(), 192);
    expected.extend(FERRUM_EXTRA_NAMES);
    let missing: Vec<_> = expected.difference(&listed).collect();
    let extra: Vec<_> = listed.difference(&expected).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:?}, not in Redis {extra:?}"
    );
}

#[test]
fn every_parameter_is_in_the_configuration_docs() {
    let server = TestServer::start();
    let mut con = server.client();
    let pairs: Vec<String> = run(&mut con, &["CONFIG", "GET", "*"]).expect("CONFIG GET *");
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/configuration.md");
    let docs = std::fs::read_to_string(path).expect("docs/configuration.md");
    let missing: Vec<&str> = (pairs.iter().step_by(2))
        .map(String::as_str)
        .filter(|name| !docs.contains(&format!("`{name}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/configuration.md does not name {missing:?}"
    );
}

#[test]
fn each_kind_round_trips_with_redis_errors() {
    let server = TestServer::start();
    let mut c = server.client();
    // Booleans.
    assert_eq!(get(&mut c, "repl-disable-tcp-nodelay"), "no");
    set(&mut c, "repl-disable-tcp-nodelay", "YES");
    assert_eq!(get(&mut c, "repl-disable-tcp-nodelay"), "yes");
    assert_eq!(get(&mut c, "aof-load-truncated"), "yes");
    assert_eq!(
        err(
            &mut c,
            &["CONFIG", "SET", "repl-disable-tcp-nodelay", "maybe"]
        ),
        refused("repl-disable-tcp-nodelay", "argument must be 'yes' or 'no'")
    );
    // Integers with bounds.
    assert_eq!(get(&mut c, "cluster-node-timeout"), "15000");
    set(&mut c, "cluster-node-timeout", "5000");
    assert_eq!(get(&mut c, "cluster-node-timeout"), "5000");
    assert_eq!(
        err(&mut c, &["CONFIG", "SET", "cluster-node-timeout", "-1"]),
        refused(
            "cluster-node-timeout",
            "argument must be between 0 and 9223372036854775807 inclusive"
        )
    );
    assert_eq!(
        err(&mut c, &["CONFIG", "SET", "tls-session-cache-timeout", "x"]),
        refused(
            "tls-session-cache-timeout",
            "argument couldn't be parsed into an integer"
        )
    );
    assert_eq!(
        err(&mut c, &["CONFIG", "SET", "replica-announce-port", "65536"]),
        refused(
            "replica-announce-port",
            "argument must be between 0 and 65535 inclusive"
        )
    );
    set(&mut c, "shutdown-timeout", "0");
    assert_eq!(get(&mut c, "shutdown-timeout"), "0");
    // Enums: any case in, Redis's spelling out, Redis's order in errors.
    assert_eq!(get(&mut c, "sanitize-dump-payload"), "no");
    set(&mut c, "sanitize-dump-payload", "CLIENTS");
    assert_eq!(get(&mut c, "sanitize-dump-payload"), "clients");
    set(&mut c, "repl-diskless-load", "swapdb");
    assert_eq!(get(&mut c, "repl-diskless-load"), "swapdb");
    assert_eq!(
        err(&mut c, &["CONFIG", "SET", "sanitize-dump-payload", "bogus"]),
        refused(
            "sanitize-dump-payload",
            "argument(s) must be one of the following: no, yes, clients"
        )
    );
    assert_eq!(
        err(&mut c, &["CONFIG", "SET", "repl-diskless-load", "bogus"]),
        refused(
            "repl-diskless-load",
            "argument(s) must be one of the following: disabled, on-empty-db, swapdb"
        )
    );
    assert_eq!(
        err(&mut c, &["CONFIG", "SET", "appendfsync", "bogus"]),
        refused(
            "appendfsync",
            "argument(s) must be one of the following: everysec, always, no"
        )
    );
    // Strings.
    set(&mut c, "replica-announce-ip", "10.0.0.1");
    assert_eq!(get(&mut c, "replica-announce-ip"), "10.0.0.1");
    set(&mut c, "cluster-announce-hostname", "node-1.example");
    assert_eq!(get(&mut c, "cluster-announce-hostname"), "node-1.example");
    assert_eq!(
        err(
            &mut c,
            &["CONFIG", "SET", "cluster-announce-hostname", "bad_host"]
        ),
        refused(
            "cluster-announce-hostname",
            "Hostnames may only contain alphanumeric characters, hyphens or dots"
        )
    );
    let long = "a".repeat(256);
    assert_eq!(
        err(
            &mut c,
            &["CONFIG", "SET", "cluster-announce-hostname", &long]
        ),
        refused(
            "cluster-announce-hostname",
            "Hostnames must be less than 256 characters"
        )
    );
    set(&mut c, "ignore-warnings", "ARM64-COW-BUG");
    assert_eq!(get(&mut c, "ignore-warnings"), "ARM64-COW-BUG");
    // Memory sizes: units in, bytes out.
    assert_eq!(get(&mut c, "auto-aof-rewrite-min-size"), "67108864");
    set(&mut c, "auto-aof-rewrite-min-size", "1mb");
    assert_eq!(get(&mut c, "auto-aof-rewrite-min-size"), "1048576");
    set(&mut c, "cluster-link-sendbuf-limit", "1k");
    assert_eq!(get(&mut c, "cluster-link-sendbuf-limit"), "1000");
    assert_eq!(
        err(
            &mut c,
            &["CONFIG", "SET", "cluster-link-sendbuf-limit", "-1"]
        ),
        refused(
            "cluster-link-sendbuf-limit",
            "argument must be a memory value"
        )
    );
    // Immutable at runtime.
    for (name, value) in [
        ("cluster-port", "1"),
        ("supervised", "systemd"),
        ("syslog-facility", "user"),
        ("disable-thp", "no"),
        ("socket-mark-id", "1"),
        ("server_cpulist", "0"),
        ("bio_cpulist", "0"),
        ("aof_rewrite_cpulist", "0"),
        ("bgsave_cpulist", "0"),
    ] {
        assert_eq!(
            err(&mut c, &["CONFIG", "SET", name, value]),
            refused(name, "can't set immutable config")
        );
    }
    assert_eq!(get(&mut c, "supervised"), "no");
    assert_eq!(get(&mut c, "syslog-facility"), "local0");
    assert_eq!(get(&mut c, "disable-thp"), "yes");
}

#[test]
fn aliases_are_names_of_their_own_for_one_value() {
    let server = TestServer::start();
    let mut c = server.client();
    for (alias, canonical, value) in [
        ("slave-priority", "replica-priority", "7"),
        ("slave-announce-ip", "replica-announce-ip", "10.1.2.3"),
        ("slave-announce-port", "replica-announce-port", "7000"),
        ("slave-ignore-maxmemory", "replica-ignore-maxmemory", "no"),
        ("slave-lazy-flush", "replica-lazy-flush", "yes"),
        (
            "cluster-slave-no-failover",
            "cluster-replica-no-failover",
            "yes",
        ),
        (
            "cluster-slave-validity-factor",
            "cluster-replica-validity-factor",
            "3",
        ),
        ("repl-ping-slave-period", "repl-ping-replica-period", "4"),
        ("min-slaves-max-lag", "min-replicas-max-lag", "5"),
    ] {
        set(&mut c, alias, value);
        assert_eq!(get(&mut c, canonical), value, "{alias}");
        assert_eq!(get(&mut c, alias), value, "{alias}");
    }
    // Both names in one CONFIG SET: no duplicate in Redis 7.0.15, the
    // later wins; errors name the alias as set.
    let _: () = run(
        &mut c,
        &[
            "CONFIG",
            "SET",
            "replica-priority",
            "1",
            "slave-priority",
            "2",
        ],
    )
    .expect("both names");
    assert_eq!(get(&mut c, "replica-priority"), "2");
    assert_eq!(
        err(&mut c, &["CONFIG", "SET", "slave-announce-port", "65536"]),
        refused(
            "slave-announce-port",
            "argument must be between 0 and 65535 inclusive"
        )
    );
    let priorities: HashMap<String, String> =
        run(&mut c, &["CONFIG", "GET", "*priority*"]).expect("glob");
    assert_eq!(priorities.len(), 2, "{priorities:?}");
    // min-slaves-* is min-replicas-*, which takes effect: writes are
    // refused for want of replicas.
    set(&mut c, "min-slaves-to-write", "1");
    assert_eq!(get(&mut c, "min-replicas-to-write"), "1");
    assert!(err(&mut c, &["SET", "k", "v"]).starts_with("NOREPLICAS"));
    set(&mut c, "min-slaves-to-write", "0");
    let _: () = run(&mut c, &["SET", "k", "v"]).expect("writes again");
}

#[test]
fn the_command_line_and_a_file_take_them_too() {
    let server = TestServer::start_with(&[
        "--cluster-node-timeout",
        "5000",
        "--slave-priority",
        "9",
        "--supervised",
        "systemd",
        "--sanitize-dump-payload",
        "yes",
        "--tls-session-cache-size",
        "100",
    ]);
    let mut c = server.client();
    assert_eq!(get(&mut c, "cluster-node-timeout"), "5000");
    assert_eq!(get(&mut c, "replica-priority"), "9");
    assert_eq!(get(&mut c, "supervised"), "systemd");
    assert_eq!(get(&mut c, "sanitize-dump-payload"), "yes");
    assert_eq!(get(&mut c, "tls-session-cache-size"), "100");
    let path =
        std::env::temp_dir().join(format!("ferrum-config-params-{}.conf", std::process::id()));
    std::fs::write(
        &path,
        "cluster-node-timeout 5000\nsyslog-facility local7\nmin-slaves-max-lag 3\n\
         auto-aof-rewrite-min-size 32mb\nserver_cpulist 0-1\n",
    )
    .expect("write the file");
    let server = TestServer::start_from_file(&path);
    let mut c = server.client();
    assert_eq!(get(&mut c, "cluster-node-timeout"), "5000");
    assert_eq!(get(&mut c, "syslog-facility"), "local7");
    assert_eq!(get(&mut c, "min-replicas-max-lag"), "3");
    assert_eq!(get(&mut c, "auto-aof-rewrite-min-size"), "33554432");
    assert_eq!(get(&mut c, "server_cpulist"), "0-1");
    // CONFIG REWRITE writes them back by their canonical names, sizes
    // with units, and drops a string emptied at runtime.
    set(&mut c, "repl-diskless-load", "on-empty-db");
    set(&mut c, "tls-ciphers", "HIGH:!aNULL");
    let _: () = run(&mut c, &["CONFIG", "REWRITE"]).expect("CONFIG REWRITE");
    let text = std::fs::read_to_string(&path).expect("read the file");
    let _ = std::fs::remove_file(&path);
    for line in [
        "cluster-node-timeout 5000",
        "syslog-facility local7",
        "min-replicas-max-lag 3",
        "auto-aof-rewrite-min-size 32mb",
        "server_cpulist \"0-1\"",
        "repl-diskless-load on-empty-db",
        "tls-ciphers \"HIGH:!aNULL\"",
    ] {
        assert!(text.lines().any(|l| l == line), "{line:?} in\n{text}");
    }
    assert!(!text.contains("min-slaves"), "{text}");
}

#[test]
fn the_file_refuses_bad_values_in_redis_words() {
    let path = std::env::temp_dir().join(format!(
        "ferrum-config-params-bad-{}.conf",
        std::process::id()
    ));
    std::fs::write(&path, "supervised sometimes\n").expect("write the file");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ferrum-server"))
        .arg(&path)
        .args(["--port", "0"])
        .output()
        .expect("run the server");
    let _ = std::fs::remove_file(&path);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(">>> 'supervised sometimes'\nargument(s) must be one of the following: upstart, systemd, auto, no"),
        "{stderr}"
    );
}
