//! Tests of the configuration: defaults, the table, redis.conf and
//! command-line syntax, `CONFIG GET` globs and `CONFIG SET`.

use super::special::MAX_BIND_ADDRS;
use super::syntax::parse_memory;
use super::table::{HIDDEN, LONG_MAX, MB, STORED_ALIASES};
use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};

fn args(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| (*w).to_owned()).collect()
}

/// The command line's configuration, or the error of its directive
/// (without the line that names it: see `command_line_errors_name_the_line`).
fn parse(words: &[&str]) -> Result<Config, ConfigError> {
    Config::from_args(args(words)).map_err(|e| match e {
        ConfigError::OnCommandLine { error, .. } => *error,
        e => e,
    })
}

fn file(text: &str) -> Result<Config, ConfigError> {
    let mut config = Config::default();
    config.apply_file(Path::new("test.conf"), text.as_bytes())?;
    Ok(config)
}

fn file_err(text: &str) -> String {
    match file(text) {
        Ok(_) => panic!("expected {text:?} to be refused"),
        Err(e) => e.to_string(),
    }
}

fn get1(config: &Config, name: &str) -> String {
    match config.get(name.as_bytes()).as_slice() {
        [(_, value)] => value.clone(),
        other => panic!("expected one parameter for {name}, got {other:?}"),
    }
}

fn set_err(config: &mut Config, name: &str, value: &str) -> String {
    match config.set(name.as_bytes(), value.as_bytes()) {
        Ok(param) => panic!("expected CONFIG SET {name} {value:?} to fail, it set {param:?}"),
        Err(e) => e.to_string(),
    }
}

/// A config file under the temp directory, removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn new(contents: &str) -> TempFile {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("ferrum-config-{}-{n}.conf", std::process::id()));
        std::fs::write(&path, contents).expect("write temp config");
        TempFile(path)
    }

    fn arg(&self) -> &str {
        self.0.to_str().expect("temp path is UTF-8")
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn defaults() {
    let c = Config::default();
    assert_eq!(c.config_file, None);
    assert_eq!(c.bind, ["127.0.0.1"]);
    assert_eq!(c.port, 6379);
    assert_eq!(c.databases, 16);
    assert_eq!(c.maxmemory_bytes, 0);
    assert_eq!(c.maxmemory_policy, PolicyKind::NoEviction);
    assert_eq!(c.maxmemory_samples, 5);
    assert_eq!(c.lfu_log_factor, 10);
    assert_eq!(c.lfu_decay_time_minutes, 1);
    assert_eq!(c.requirepass, None);
    assert_eq!(c.maxclients, 10000);
    assert_eq!(c.timeout, Duration::ZERO);
    assert_eq!(c.tcp_keepalive, Duration::from_secs(300));
    assert_eq!(c.proto_max_bulk_len_bytes, 512 * MB);
    assert_eq!(c.client_query_buffer_limit_bytes, 1024 * MB);
    assert_eq!(c.hz, 10);
    assert_eq!(c.loglevel, "notice");
    assert_eq!(c.logfile, None);
    assert!(c.protected_mode);
    assert_eq!(c.save, "3600 1 300 100 60 10000");
    assert_eq!(c.active_expire_effort, 1);
    let limits = c.client_output_buffer_limit;
    assert_eq!(limits.normal, OutputBufferLimit::default());
    assert_eq!(
        limits.replica,
        OutputBufferLimit {
            hard_bytes: 256 * MB,
            soft_bytes: 64 * MB,
            soft_seconds: 60
        }
    );
    assert_eq!(
        limits.pubsub,
        OutputBufferLimit {
            hard_bytes: 32 * MB,
            soft_bytes: 8 * MB,
            soft_seconds: 60
        }
    );
    assert_eq!(c.metrics_addr, None);
    assert_eq!(c.dbfilename, "dump.rdb");
    let cwd = std::env::current_dir().expect("current directory");
    assert_eq!(
        c.dir,
        cwd.to_string_lossy(),
        "dir is absolute, as Redis reports it"
    );
    assert_eq!(parse(&[]).expect("no arguments"), c);
}

#[test]
fn table_has_one_row_per_name_and_param() {
    for (i, a) in PARAMS.iter().enumerate() {
        assert_eq!(a.name, a.name.to_ascii_lowercase(), "names are lowercase");
        for b in &PARAMS[i + 1..] {
            assert_ne!(a.name, b.name);
            // Stored parameters share one `Param`; each has its own
            // canonical name, which only an alias shares.
            if a.param == Param::Stored && b.param == Param::Stored {
                let alias = STORED_ALIASES
                    .iter()
                    .any(|&(x, y)| (x, y) == (a.name, b.name) || (y, x) == (a.name, b.name));
                assert_eq!(alias, canonical(a.name) == canonical(b.name));
                continue;
            }
            assert_ne!(a.param, b.param, "{} and {}", a.name, b.name);
        }
    }
}

#[test]
fn every_value_round_trips_through_its_rendering() {
    // What CONFIG GET prints must be accepted back, by the file parser
    // (all rows) and by CONFIG SET (mutable rows), without changing it.
    let c = Config::default();
    for (name, value) in c.get(b"*") {
        let mut again = Config::default();
        let words = vec![name.as_bytes().to_vec(), value.clone().into_bytes()];
        again
            .apply_directive(words)
            .unwrap_or_else(|e| panic!("{name} {value:?}: {e}"));
        assert_eq!(again, c, "{name}");
        if PARAMS.iter().any(|s| s.name == name && s.mutable) {
            let mut again = Config::default();
            again
                .set(name.as_bytes(), value.as_bytes())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(again, c, "{name}");
        }
    }
}

#[test]
fn numeric_bounds_are_enforced_and_fit_their_fields() {
    for spec in PARAMS {
        let (Kind::Int { min, max, .. } | Kind::Memory { min, max, .. }) = spec.kind else {
            continue;
        };
        let mut c = Config::default();
        for n in [min, max] {
            let words = vec![spec.name.as_bytes().to_vec(), n.to_string().into_bytes()];
            c.apply_directive(words)
                .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
            assert_eq!(
                get1(&c, spec.name),
                n.to_string(),
                "{} must hold {n} without narrowing",
                spec.name
            );
        }
        let refused = format!("argument must be between {min} and {max} inclusive");
        let outside = [min.checked_sub(1), max.checked_add(1)];
        // Past i64, an integer row cannot even parse the number (Redis
        // says so too); memory rows parse it and refuse the range.
        let parses = |n: u64| matches!(spec.kind, Kind::Memory { .. }) || n <= LONG_MAX;
        for n in outside.into_iter().flatten().filter(|&n| parses(n)) {
            let words = vec![spec.name.as_bytes().to_vec(), n.to_string().into_bytes()];
            let err = c
                .apply_directive(words)
                .expect_err("out of range")
                .to_string();
            assert!(err.ends_with(&refused), "{}: {err}", spec.name);
        }
    }
}

#[test]
fn memory_units() {
    let cases: &[(&str, u64)] = &[
        ("0", 0),
        ("100", 100),
        ("100b", 100),
        ("1k", 1000),
        ("1K", 1000),
        ("1kb", 1024),
        ("1KB", 1024),
        ("1kB", 1024),
        ("16m", 16_000_000),
        ("16mb", 16 * MB),
        ("1g", 1_000_000_000),
        ("1gb", 1024 * MB),
        ("1Gb", 1024 * MB),
        ("007mb", 7 * MB),
        ("18446744073709551615", u64::MAX),
    ];
    for &(text, bytes) in cases {
        assert_eq!(parse_memory(text), Some(bytes), "{text}");
        let c = parse(&["--maxmemory", text]).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(c.maxmemory_bytes, bytes, "{text}");
    }
    for text in [
        "",
        "kb",
        "-1",
        "1.5mb",
        "1 mb",
        " 1",
        "1tb",
        "1kbb",
        "+1",
        "18446744073709551616",
        "17179869184gb",
    ] {
        assert_eq!(parse_memory(text), None, "{text:?}");
    }
    let err = parse(&["--maxmemory", "abc"])
        .expect_err("not memory")
        .to_string();
    assert_eq!(
        err,
        "invalid argument 'abc' for 'maxmemory': argument must be a memory value"
    );
}

#[test]
fn integer_options_refuse_what_string2ll_refuses() {
    let err = parse(&["--port", "06379"])
        .expect_err("leading zero")
        .to_string();
    assert_eq!(
        err,
        "invalid argument '06379' for 'port': argument couldn't be parsed into an integer"
    );
    let err = parse(&["--timeout", "-1"])
        .expect_err("negative")
        .to_string();
    assert_eq!(
        err,
        "invalid argument '-1' for 'timeout': argument must be between 0 and 2147483647 inclusive"
    );
    let err = parse(&["--hz", "501"]).expect_err("too fast").to_string();
    assert_eq!(
        err,
        "invalid argument '501' for 'hz': argument must be between 1 and 500 inclusive"
    );
}

#[test]
fn debug_command_may_be_allowed_to_local_clients_only() {
    assert_eq!(Config::default().enable_debug_command, Allowed::No);
    for (value, allowed) in [
        ("yes", Allowed::Yes),
        ("LOCAL", Allowed::Local),
        ("no", Allowed::No),
    ] {
        let c = parse(&["--enable-debug-command", value]).expect(value);
        assert_eq!(c.enable_debug_command, allowed);
        assert_eq!(get1(&c, "enable-debug-command"), allowed.as_str());
    }
    let err = parse(&["--enable-debug-command", "maybe"])
        .expect_err("not a setting")
        .to_string();
    assert!(
        err.ends_with("must be one of the following: no, yes, local"),
        "{err}"
    );
    let (loopback, remote) = ([127, 0, 0, 1].into(), [10, 0, 0, 1].into());
    assert!(Allowed::Local.permits(loopback) && !Allowed::Local.permits(remote));
    assert!(Allowed::Yes.permits(remote) && !Allowed::No.permits(loopback));
    assert!(Allowed::Local.permits(std::net::Ipv6Addr::LOCALHOST.into()));
}

#[test]
fn booleans_and_enums() {
    let c = parse(&[
        "--protected-mode",
        "NO",
        "--maxmemory-policy",
        "AllKeys-LFU",
        "--loglevel",
        "Warning",
    ])
    .expect("valid");
    assert!(!c.protected_mode);
    assert_eq!(c.maxmemory_policy, PolicyKind::AllKeysLfu);
    assert_eq!(c.loglevel, "warning");
    assert_eq!(get1(&c, "maxmemory-policy"), "allkeys-lfu");
    assert_eq!(get1(&c, "protected-mode"), "no");
    let err = parse(&["--protected-mode", "true"])
        .expect_err("not yes/no")
        .to_string();
    assert_eq!(
        err,
        "invalid argument 'true' for 'protected-mode': argument must be 'yes' or 'no'"
    );
    let err = parse(&["--loglevel", "loud"])
        .expect_err("no such level")
        .to_string();
    assert_eq!(
        err,
        "invalid argument 'loud' for 'loglevel': argument(s) must be one of the following: debug, verbose, notice, warning"
    );
    let err = parse(&["--maxmemory-policy", "lru"])
        .expect_err("no such policy")
        .to_string();
    assert!(err.ends_with(&MAXMEMORY_POLICIES.join(", ")), "{err}");
    for policy in MAXMEMORY_POLICIES {
        let mut c = Config::default();
        assert_eq!(
            c.set(b"maxmemory-policy", policy.to_uppercase().as_bytes())
                .ok(),
            Some(Param::MaxmemoryPolicy)
        );
        assert_eq!(c.maxmemory_policy.as_str(), policy);
    }
}

#[test]
fn persistence_and_daemonize_only_accept_no() {
    let c = parse(&[
        "--daemonize",
        "no",
        "--appendonly",
        "no",
        "--save",
        "900",
        "1",
    ])
    .expect("accepted");
    assert_eq!(get1(&c, "daemonize"), "no");
    assert_eq!(get1(&c, "appendonly"), "no");
    assert_eq!(c.save, "900 1");
    let err = parse(&["--daemonize", "yes"])
        .expect_err("no daemon")
        .to_string();
    assert!(
        err.starts_with("invalid argument 'yes' for 'daemonize': FerrumKV does not daemonize"),
        "{err}"
    );
    let err = parse(&["--appendonly", "yes"])
        .expect_err("no aof")
        .to_string();
    assert!(
        err.starts_with("invalid argument 'yes' for 'appendonly': FerrumKV has no append-only file (it saves RDB snapshots)"),
        "{err}"
    );
    let mut c = Config::default();
    assert_eq!(c.set(b"appendonly", b"no").ok(), Some(Param::Appendonly));
    assert!(set_err(&mut c, "appendonly", "yes")
        .contains("FerrumKV has no append-only file (it saves RDB snapshots)"));
}

#[test]
fn worker_threads_default_to_auto_and_take_a_count() {
    assert_eq!(Config::default().worker_threads, 0);
    let c = parse(&["--worker-threads", "1"]).expect("valid");
    assert_eq!(c.worker_threads, 1);
    assert_eq!(get1(&c, "worker-threads"), "1");
    assert!(parse(&["--worker-threads", "-1"]).is_err());
    assert!(parse(&["--worker-threads", "1025"]).is_err());
}

#[test]
fn text_values() {
    let c = parse(&[
        "--requirepass",
        "s3cret",
        "--logfile",
        "/var/log/ferrum.log",
        "--metrics-addr",
        "9121",
    ])
    .expect("valid");
    assert_eq!(c.requirepass.as_deref(), Some("s3cret"));
    assert_eq!(c.logfile, Some(PathBuf::from("/var/log/ferrum.log")));
    assert_eq!(
        c.metrics_addr,
        Some(SocketAddr::from(([127, 0, 0, 1], 9121)))
    );
    let c = parse(&["--requirepass", "", "--metrics-addr", "[::1]:9000"]).expect("valid");
    assert_eq!(c.requirepass, None);
    assert_eq!(get1(&c, "metrics-addr"), "[::1]:9000");
    let err = parse(&["--metrics-addr", "localhost:9121"])
        .expect_err("not an address")
        .to_string();
    assert!(
        err.starts_with("invalid argument 'localhost:9121' for 'metrics-addr': "),
        "{err}"
    );
    let err = parse(&["--dbfilename", "/tmp/x.rdb"])
        .expect_err("a path")
        .to_string();
    assert!(
        err.ends_with("dbfilename can't be a path, just a filename"),
        "{err}"
    );
}

#[test]
fn bind_addresses() {
    let c = parse(&["--bind", "127.0.0.1", "-::1", "*", "10.0.0.1"]).expect("valid");
    assert_eq!(c.bind, ["127.0.0.1", "-::1", "*", "10.0.0.1"]);
    assert_eq!(get1(&c, "bind"), "127.0.0.1 -::1 * 10.0.0.1");
    let c = parse(&["--bind", "0.0.0.0 ::"]).expect("one quoted word is split");
    assert_eq!(c.bind, ["0.0.0.0", "::"]);
    let c = parse(&["--bind", "localhost"]).expect("names are resolved when bound");
    assert_eq!(c.bind, ["localhost"]);
    let err = parse(&["--bind", ""]).expect_err("empty").to_string();
    assert!(err.starts_with("invalid argument '' for 'bind'"), "{err}");
    let seventeen = vec!["127.0.0.1"; MAX_BIND_ADDRS + 1].join(" ");
    let err = parse(&["--bind", &seventeen])
        .expect_err("too many")
        .to_string();
    assert!(err.ends_with("Too many bind addresses specified."), "{err}");
}

#[test]
fn latency_percentiles_read_back_as_redis_prints_them() {
    let mut c = Config::default();
    let name = "latency-tracking-info-percentiles";
    assert_eq!(get1(&c, name), "50 99 99.9");
    c.set(name.as_bytes(), b"0.0 50.0 100.0 99.990")
        .expect("valid");
    assert_eq!(get1(&c, name), "0 50 100 99.99");
    c.set(name.as_bytes(), b"")
        .expect("empty is no percentiles");
    assert_eq!(get1(&c, name), "");
    c.set(name.as_bytes(), b"50").expect("valid");
    for (value, reason) in [
        (
            "10.0 50.0 a",
            "Invalid latency-tracking-info-percentiles parameters",
        ),
        (
            "nan",
            "Invalid latency-tracking-info-percentiles parameters",
        ),
        (
            "10.0 50.0 101.0",
            "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]",
        ),
        (
            "-1",
            "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]",
        ),
    ] {
        let err = set_err(&mut c, name, value);
        assert_eq!(
            err,
            format!("ERR CONFIG SET failed (possibly related to argument '{name}') - {reason}")
        );
        assert_eq!(get1(&c, name), "50", "{value} changed nothing");
    }
}

#[test]
fn output_buffer_limits() {
    let mut c = Config::default();
    assert_eq!(
        get1(&c, "client-output-buffer-limit"),
        "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
    );
    // Only the classes named change, in any case; replica and slave are one class.
    c.set(
        b"client-output-buffer-limit",
        b"NORMAL 1mb 512kb 10 replica 1 2 3",
    )
    .expect("valid");
    assert_eq!(
        c.client_output_buffer_limit.normal,
        OutputBufferLimit {
            hard_bytes: MB,
            soft_bytes: 512 * 1024,
            soft_seconds: 10
        }
    );
    assert_eq!(
        c.client_output_buffer_limit.replica,
        OutputBufferLimit {
            hard_bytes: 1,
            soft_bytes: 2,
            soft_seconds: 3
        }
    );
    assert_eq!(c.client_output_buffer_limit.pubsub.hard_bytes, 32 * MB);
    let before = c.clone();
    let wrong = [
        (
            "normal 0 0",
            "Wrong number of arguments in buffer limit configuration.",
        ),
        (
            "master 0 0 0",
            "Invalid client class specified in buffer limit configuration.",
        ),
        (
            "pubsub 1x 0 0",
            "Error in hard, soft or soft_seconds setting in buffer limit configuration.",
        ),
        (
            "pubsub 0 0 -1",
            "Error in hard, soft or soft_seconds setting in buffer limit configuration.",
        ),
        // The first group is fine, the second is not: nothing changes.
        (
            "pubsub 1 1 1 normal 0 0 x",
            "Error in hard, soft or soft_seconds setting in buffer limit configuration.",
        ),
    ];
    for (value, reason) in wrong {
        let err = set_err(&mut c, "client-output-buffer-limit", value);
        assert_eq!(err, format!("ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - {reason}"));
        assert_eq!(c, before, "{value}");
    }
    // In a file, one directive per class, as stock redis.conf writes it.
    let c = file(
        "client-output-buffer-limit normal 0 0 0\nclient-output-buffer-limit pubsub 64mb 16mb 90\n",
    )
    .expect("valid");
    assert_eq!(
        c.client_output_buffer_limit.pubsub,
        OutputBufferLimit {
            hard_bytes: 64 * MB,
            soft_bytes: 16 * MB,
            soft_seconds: 90
        }
    );
}

#[test]
fn config_file_syntax() {
    let text = "# a comment\n\
                \n\
                \t  port 7000  \r\n\
                MaxMemory 100mb\n\
                requirepass \"p@ss word\"\n\
                dir '/var/lib/ferrum'\n\
                save \"\"\n\
                save 900 1 300 10\n\
                port 7001\n\
                \x20  # indented comment\n";
    let c = file(text).expect("valid file");
    assert_eq!(c.port, 7001, "later lines win");
    assert_eq!(c.maxmemory_bytes, 100 * MB);
    assert_eq!(c.requirepass.as_deref(), Some("p@ss word"));
    assert_eq!(c.dir, "/var/lib/ferrum");
    assert_eq!(c.save, "900 1 300 10");
    // No trailing newline, and CRLF line ends.
    assert_eq!(file("port 1\r\nhz 20").expect("valid").hz, 20);
}

#[test]
fn config_file_errors_name_the_line() {
    assert_eq!(
        file_err("port 1\nfoo bar\n"),
        "test.conf:2: unknown option 'foo'"
    );
    assert_eq!(
        file_err("\n\nport\n"),
        "test.conf:3: wrong number of arguments for 'port'"
    );
    assert_eq!(
        file_err("port 1 2"),
        "test.conf:1: wrong number of arguments for 'port'"
    );
    assert_eq!(
        file_err("port 6379 # trailing comment"),
        "test.conf:1: wrong number of arguments for 'port'"
    );
    assert_eq!(
        file_err("requirepass \"abc"),
        "test.conf:1: unbalanced quotes in configuration line"
    );
    assert_eq!(
        file_err("maxmemory 10xb"),
        "test.conf:1: invalid argument '10xb' for 'maxmemory': argument must be a memory value"
    );
    assert_eq!(
        file_err("include /etc/other.conf"),
        "test.conf:1: 'include' is not supported: put every directive in one file"
    );
    assert_eq!(
        file_err("requirepass \"\\xff\""),
        "test.conf:1: invalid argument '\u{fffd}' for 'requirepass': argument must be valid UTF-8"
    );
}

#[test]
fn command_line_errors_name_the_line() {
    let e =
        Config::from_args(args(&["--port", "1", "--port", "--x", "y"])).expect_err("two values");
    assert_eq!(
        e.to_string(),
        "command line, 'port \"--x\" \"y\"': wrong number of arguments for 'port'"
    );
    let report = e.fatal_report();
    assert!(
        report.contains("at line 3\n>>> 'port \"--x\" \"y\"'\nwrong number of arguments"),
        "{report}"
    );
    // After a file, the command line's lines follow the file's and an empty one.
    let conf = TempFile::new("port 1\n\nhz 20\n");
    let e = Config::from_args(args(&[conf.arg(), "--hz", "0"])).expect_err("hz 0");
    assert!(
        e.fatal_report().contains("at line 5\n>>> 'hz \"0\"'\n"),
        "{e}"
    );
    let e = file("bad line").expect_err("unknown");
    assert!(
        e.fatal_report()
            .ends_with("at line 1\n>>> 'bad line'\nBad directive or wrong number of arguments"),
        "{e}"
    );
}

#[test]
fn replicaof_takes_a_host_and_a_port() {
    let c = parse(&["--replicaof", "10.0.0.1", "6380"]).expect("valid");
    assert_eq!(get1(&c, "replicaof"), "10.0.0.1 6380");
    assert_eq!(
        get1(
            &parse(&["--slaveof", "no", "one"]).expect("valid"),
            "slaveof"
        ),
        ""
    );
    for (words, reason) in [
        (
            &["--replicaof", "127.0.0.1", "abc"][..],
            "Invalid master port",
        ),
        (
            &["--replicaof", "127.0.0.1", "70000"],
            "Invalid master port",
        ),
        (&["--replicaof", "--127.0.0.1"], "wrong number of arguments"),
    ] {
        let e = Config::from_args(args(words)).expect_err("refused");
        assert!(
            e.fatal_report().ends_with(reason),
            "{words:?}: {}",
            e.fatal_report()
        );
    }
}

#[test]
fn command_line_overrides_the_file() {
    let conf = TempFile::new("port 7000\nmaxmemory 1gb\nloglevel debug\n");
    let c = parse(&[
        conf.arg(),
        "--port",
        "7001",
        "--maxmemory",
        "2gb",
        "--maxmemory",
        "3gb",
    ])
    .expect("valid");
    assert_eq!(c.port, 7001);
    assert_eq!(c.maxmemory_bytes, 3 * 1024 * MB, "later overrides win");
    assert_eq!(c.loglevel, "debug", "the file still applies");
    assert_eq!(
        c.config_file.as_deref(),
        Some(std::path::absolute(&conf.0).expect("absolute").as_path())
    );
    let c = parse(&[conf.arg()]).expect("file only");
    assert_eq!(c.port, 7000);
    let bad = TempFile::new("port 1\nhz 0\n");
    let err = parse(&[bad.arg()]).expect_err("hz 0").to_string();
    assert_eq!(
        err,
        format!(
            "{}:2: invalid argument '0' for 'hz': argument must be between 1 and 500 inclusive",
            bad.arg()
        )
    );
}

#[test]
fn command_line_grouping() {
    // Every word up to the next --option is a value.
    let c = parse(&["--save", "900", "1", "300", "10", "--port", "1"]).expect("valid");
    assert_eq!((c.save.as_str(), c.port), ("900 1 300 10", 1));
    // The word after a bare option is its value, even if it starts with --.
    let c = parse(&["--requirepass", "--not-an-option", "--port", "2"]).expect("valid");
    assert_eq!(c.requirepass.as_deref(), Some("--not-an-option"));
    // Name and value in one word.
    let c = parse(&["--port 6380", "--maxmemory \"1 mb\""]).map(|c| c.port);
    assert!(
        matches!(
            c,
            Err(ConfigError::InvalidValue {
                name: "maxmemory",
                ..
            })
        ),
        "{c:?}"
    );
    assert_eq!(parse(&["--port 6380"]).expect("valid").port, 6380);
    // A bare --save before another option, or at the end, means save "".
    let c = parse(&["--save", "--port", "3"]).expect("valid");
    assert_eq!((c.save.as_str(), c.port), ("", 3));
    assert_eq!(parse(&["--port", "4", "--save"]).expect("valid").save, "");
    // Options may repeat a name in any case.
    assert_eq!(parse(&["--PORT", "5"]).expect("valid").port, 5);
    // An option without its value.
    let err = parse(&["--port"]).expect_err("no value").to_string();
    assert_eq!(err, "wrong number of arguments for 'port'");
    let err = parse(&["--port", "1", "2"])
        .expect_err("two values")
        .to_string();
    assert_eq!(err, "wrong number of arguments for 'port'");
    let err = parse(&["--nosuch", "1"]).expect_err("unknown").to_string();
    assert_eq!(err, "unknown option 'nosuch'");
}

#[test]
fn words_before_the_first_option_and_redis_7_startup_parameters() {
    // After the file, as redis-server, which appends them as a line of
    // their own.
    let conf = TempFile::new("port 7000\n");
    let c = parse(&[conf.arg(), "loglevel", "verbose", "--maxmemory '700mb'"]).expect("valid");
    assert_eq!((c.loglevel, c.maxmemory_bytes), ("verbose", 700 * MB));
    let c = parse(&[
        "--proc-title-template",
        "--my--title--template",
        "--loglevel",
        "verbose",
    ])
    .expect("valid");
    assert_eq!(get1(&c, "proc-title-template"), "--my--title--template");
    let c = parse(&[
        "--shutdown-on-sigint",
        "nosave",
        "force",
        "now",
        "--shutdown-on-sigterm",
        "nosave force",
    ])
    .expect("valid");
    assert_eq!(get1(&c, "shutdown-on-sigint"), "nosave now force");
    assert_eq!(get1(&c, "shutdown-on-sigterm"), "nosave force");
    let mut c = Config::default();
    assert_eq!(get1(&c, "shutdown-on-sigint"), "default");
    assert_eq!(
        set_err(&mut c, "shutdown-on-sigterm", "save nosave"),
        "ERR CONFIG SET failed (possibly related to argument 'shutdown-on-sigterm') - shutdown can't have both 'save' and 'nosave' flags"
    );
    assert!(set_err(&mut c, "shutdown-on-sigint", "later")
        .ends_with("argument(s) must be one of the following: default, save, nosave, now, force"));
    for bad in ["{nosuch}", "{title}", "{title", "a}b"] {
        assert!(
            set_err(&mut c, "proc-title-template", bad)
                .ends_with("template format is invalid or contains unknown variables"),
            "{bad}"
        );
    }
    c.set(b"proc-title-template", b"{{x}} {port}")
        .expect("valid");
    assert_eq!(get1(&c, "proc-title-template"), "{{x}} {port}");
}

#[test]
fn save_read_at_startup_replaces_the_default_then_adds() {
    assert_eq!(parse(&[]).expect("valid").save, "3600 1 300 100 60 10000");
    let conf = TempFile::new("save 900 1\n");
    let c = parse(&[conf.arg()]).expect("valid");
    assert_eq!(c.save, "900 1", "the first one replaces the default");
    let c = parse(&[conf.arg(), "--save", "100", "100"]).expect("valid");
    assert_eq!(c.save, "900 1 100 100", "later ones add");
    let c = parse(&[conf.arg(), "--save", ""]).expect("valid");
    assert_eq!(c.save, "", "an empty one clears");
    // CONFIG SET replaces.
    let mut c = parse(&[conf.arg()]).expect("valid");
    c.set(b"save", b"60 5").expect("valid");
    assert_eq!(c.save, "60 5");
}

#[test]
fn command_line_oddities() {
    assert!(matches!(parse(&["-h"]), Err(ConfigError::Help)));
    assert!(matches!(parse(&["--help"]), Err(ConfigError::Help)));
    assert!(matches!(parse(&["-v"]), Err(ConfigError::Version)));
    assert!(matches!(
        parse(&["--version", "--port", "1"]),
        Err(ConfigError::Version)
    ));
    // Only as the first argument, as redis-server: elsewhere it is an unknown option.
    assert!(matches!(
        parse(&["--port", "1", "--help"]),
        Err(ConfigError::UnknownOption { .. })
    ));
    assert!(matches!(parse(&["-"]), Err(ConfigError::Stdin)));
    let err = parse(&["-x"]).expect_err("stray").to_string();
    assert_eq!(
        err,
        "unexpected argument '-x': options are written --name value, as in --port 6380"
    );
    assert!(matches!(
        parse(&["--", "port", "1"]),
        Err(ConfigError::UnexpectedArgument { .. })
    ));
    let missing = std::env::temp_dir().join("ferrum-config-does-not-exist.conf");
    let err = parse(&[missing.to_str().expect("UTF-8")])
        .expect_err("missing file")
        .to_string();
    assert!(
        err.starts_with(&format!("can't open config file '{}': ", missing.display())),
        "{err}"
    );
}

#[test]
fn config_get_globs() {
    let c = Config::default();
    let names = |pattern: &str| {
        c.get(pattern.as_bytes())
            .into_iter()
            .map(|(n, _)| n)
            .collect::<Vec<_>>()
    };
    // Hidden parameters only by name, as in Redis.
    assert_eq!(
        names("*").len(),
        PARAMS.len() + ALIASES.len() - HIDDEN.len()
    );
    assert_eq!(names("key-load-delay"), ["key-load-delay"]);
    assert!(names("key-load-*").is_empty());
    assert_eq!(
        names("maxmemory*"),
        [
            "maxmemory",
            "maxmemory-policy",
            "maxmemory-samples",
            "maxmemory-eviction-tenacity",
            "maxmemory-clients"
        ]
    );
    assert_eq!(names("MAXMEMORY-P*"), ["maxmemory-policy"]);
    assert_eq!(names("lfu-*"), ["lfu-log-factor", "lfu-decay-time"]);
    assert_eq!(
        names("*port*"),
        [
            "port",
            "tls-port",
            "cluster-port",
            "cluster-announce-port",
            "cluster-announce-bus-port",
            "cluster-announce-tls-port",
            "replica-announce-port",
            "slave-announce-port"
        ]
    );
    assert_eq!(names("?z"), ["hz"]);
    assert_eq!(
        names("[bp]*"),
        [
            "bind",
            "port",
            "proto-max-bulk-len",
            "protected-mode",
            "proc-title-template",
            "pidfile",
            "propagation-error-behavior",
            "busy-reply-threshold",
            "bind-source-addr",
            "bio_cpulist",
            "bgsave_cpulist"
        ]
    );
    assert_eq!(names("Port"), ["port"], "exact names are case-insensitive");
    assert_eq!(
        names("maxmem"),
        Vec::<&str>::new(),
        "no metacharacters means an exact name"
    );
    assert_eq!(names("nosuch*"), Vec::<&str>::new());
    assert_eq!(c.get(b"maxmemory"), [("maxmemory", "0".to_owned())]);
    assert_eq!(
        c.get(b"proto-max-bulk-len"),
        [("proto-max-bulk-len", "536870912".to_owned())]
    );
    assert_eq!(c.get(b"timeout"), [("timeout", "0".to_owned())]);
    assert_eq!(c.get(b"requirepass"), [("requirepass", String::new())]);
    let many = c.get_many(&[b"port", b"p*", b"hz"]);
    let many: Vec<_> = many.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        many,
        [
            "port",
            "proto-max-bulk-len",
            "hz",
            "protected-mode",
            "proc-title-template",
            "pidfile",
            "propagation-error-behavior"
        ],
        "each once, in table order"
    );
}

#[test]
fn config_set_applies_and_reports_the_param() {
    let mut c = Config::default();
    assert_eq!(c.set(b"maxmemory", b"64mb").ok(), Some(Param::Maxmemory));
    assert_eq!(c.maxmemory_bytes, 64 * MB);
    assert_eq!(get1(&c, "maxmemory"), "67108864");
    assert_eq!(
        c.set(b"MAXMEMORY-SAMPLES", b"10").ok(),
        Some(Param::MaxmemorySamples)
    );
    assert_eq!(c.maxmemory_samples, 10);
    assert_eq!(c.set(b"timeout", b"30").ok(), Some(Param::Timeout));
    assert_eq!(c.timeout, Duration::from_secs(30));
    assert_eq!(c.set(b"requirepass", b"pw").ok(), Some(Param::Requirepass));
    assert_eq!(c.requirepass.as_deref(), Some("pw"));
    assert_eq!(c.set(b"requirepass", b"").ok(), Some(Param::Requirepass));
    assert_eq!(c.requirepass, None);
    assert_eq!(c.set(b"save", b"3600 1  300 100").ok(), Some(Param::Save));
    assert_eq!(c.save, "3600 1 300 100");
    assert_eq!(c.set(b"save", b"").ok(), Some(Param::Save));
    assert_eq!(c.save, "");
}

#[test]
fn config_set_errors_use_redis_text() {
    let mut c = Config::default();
    let before = c.clone();
    for name in [
        "databases",
        "worker-threads",
        "daemonize",
        "logfile",
        "metrics-addr",
        "enable-debug-command",
    ] {
        assert_eq!(
            set_err(&mut c, name, "1"),
            format!("ERR CONFIG SET failed (possibly related to argument '{name}') - can't set immutable config")
        );
    }
    assert_eq!(
        set_err(&mut c, "DATABASES", "1"),
        "ERR CONFIG SET failed (possibly related to argument 'DATABASES') - can't set immutable config",
        "Redis echoes the name as sent"
    );
    assert_eq!(
        set_err(&mut c, "foo", "1"),
        "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"
    );
    assert_eq!(
        set_err(&mut c, "maxmemory", "lots"),
        "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value"
    );
    assert_eq!(
        set_err(&mut c, "Hz", "0"),
        "ERR CONFIG SET failed (possibly related to argument 'hz') - argument must be between 1 and 500 inclusive"
    );
    assert_eq!(
        set_err(&mut c, "maxmemory-samples", "65"),
        "ERR CONFIG SET failed (possibly related to argument 'maxmemory-samples') - argument must be between 1 and 64 inclusive"
    );
    assert_eq!(
        set_err(&mut c, "protected-mode", "1"),
        "ERR CONFIG SET failed (possibly related to argument 'protected-mode') - argument must be 'yes' or 'no'"
    );
    assert_eq!(
        set_err(&mut c, "maxmemory", "1 2"),
        "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value"
    );
    assert_eq!(
        c.set(b"requirepass", b"\xff").map_err(|e| e.to_string()),
        Err("ERR CONFIG SET failed (possibly related to argument 'requirepass') - argument must be valid UTF-8".to_owned())
    );
    assert_eq!(c, before, "failed sets change nothing");
}

#[test]
fn config_set_many_is_all_or_nothing() {
    let mut c = Config::default();
    let changed = c
        .set_many(&[(b"maxmemory", b"1mb"), (b"hz", b"100")])
        .expect("valid");
    assert_eq!(changed, [Param::Maxmemory, Param::Hz]);
    assert_eq!((c.maxmemory_bytes, c.hz), (MB, 100));
    let before = c.clone();
    let err = c
        .set_many(&[(b"maxmemory", b"2mb"), (b"hz", b"0")])
        .expect_err("bad hz")
        .to_string();
    assert!(err.contains("'hz'"), "{err}");
    assert_eq!(c, before, "the valid maxmemory was rolled back");
    let err = c
        .set_many(&[(b"hz", b"5"), (b"HZ", b"6")])
        .expect_err("twice")
        .to_string();
    assert_eq!(
        err,
        "ERR CONFIG SET failed (possibly related to argument 'HZ') - duplicate parameter"
    );
    // Names are checked before values, and the first failure is reported.
    let err = c
        .set_many(&[(b"hz", b"0"), (b"databases", b"1"), (b"nosuch", b"1")])
        .expect_err("bad")
        .to_string();
    assert_eq!(err, "ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config");
    assert_eq!(c, before);
}

#[test]
fn tls_parameters() {
    let c = Config::default();
    assert_eq!(c.tls, TlsConfig::default());
    assert_eq!(get1(&c, "tls-auth-clients"), "yes");
    let mut c = parse(&[
        "--tls-port",
        "6380",
        "--tls-cert-file",
        "/etc/ferrum/server.crt",
        "--tls-auth-clients",
        "OPTIONAL",
        "--tls-protocols",
        "TLSv1.3",
    ])
    .expect("valid");
    assert_eq!(c.tls.port, 6380);
    assert_eq!(
        c.tls.cert_file.as_deref(),
        Some(Path::new("/etc/ferrum/server.crt"))
    );
    assert_eq!(c.tls.auth_clients, "optional");
    assert_eq!(c.tls.protocol_versions(), [TlsProtocol::Tls1_3]);
    assert_eq!(
        set_err(&mut c, "tls-auth-clients", "maybe"),
        "ERR CONFIG SET failed (possibly related to argument 'tls-auth-clients') - \
         argument(s) must be one of the following: no, yes, optional"
    );
    assert_eq!(c.set(b"tls-cert-file", b"").ok(), Some(Param::TlsCertFile));
    assert_eq!(c.tls.cert_file, None);
    assert_eq!(get1(&c, "tls-cert-file"), "");
}

#[test]
fn encoding_thresholds_and_their_ziplist_aliases() {
    let c = Config::default();
    assert_eq!(c.encoding, EncodingLimits::DEFAULT);
    assert_eq!(get1(&c, "hash-max-ziplist-entries"), "512");
    assert_eq!(get1(&c, "list-max-listpack-size"), "-2");
    // An alias answers under the name asked for; a glob lists both names.
    assert_eq!(
        c.get(b"HASH-MAX-ZIPLIST-VALUE"),
        [("hash-max-ziplist-value", "64".to_owned())]
    );
    let names: Vec<&str> = c.get(b"zset-max-*").into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        [
            "zset-max-listpack-entries",
            "zset-max-listpack-value",
            "zset-max-ziplist-entries",
            "zset-max-ziplist-value"
        ]
    );
    let mut c = parse(&[
        "--list-max-ziplist-size",
        "-5",
        "--zset-max-ziplist-entries",
        "7",
    ])
    .expect("aliases on the command line");
    assert_eq!(c.encoding.list_max_listpack_size, -5);
    assert_eq!(c.encoding.zset_max_listpack_entries, 7);
    let c2 = file("hash-max-ziplist-value 3\nset-max-intset-entries 9\n").expect("file");
    assert_eq!(c2.encoding.hash_max_listpack_value, 3);
    assert_eq!(c2.encoding.set_max_intset_entries, 9);
    assert_eq!(
        c.set(b"list-max-ziplist-size", b"100000")
            .expect("set alias"),
        Param::ListMaxListpackSize
    );
    assert_eq!(get1(&c, "list-max-listpack-size"), "100000");
    assert_eq!(
        set_err(&mut c, "list-max-ziplist-size", "-9999999999"),
        // As redis-server 7.0.15 names it: the alias it was set by.
        "ERR CONFIG SET failed (possibly related to argument 'list-max-ziplist-size') - \
         argument must be between -2147483648 and 2147483647 inclusive"
    );
    assert_eq!(
        set_err(&mut c, "hash-max-ziplist-entries", "1k"),
        "ERR CONFIG SET failed (possibly related to argument 'hash-max-ziplist-entries') - \
         argument couldn't be parsed into an integer"
    );
    assert!(set_err(&mut c, "list-compress-depth", "-1")
        .ends_with("between 0 and 2147483647 inclusive"));
    // Redis 7.0.15 keeps an alias as a parameter of its own: both names
    // in one CONFIG SET are no duplicate, and the later value wins.
    c.set_many(&[
        (b"hash-max-ziplist-value", b"1"),
        (b"hash-max-listpack-value", b"2"),
    ])
    .expect("an alias and its parameter");
    assert_eq!(get1(&c, "hash-max-ziplist-value"), "2");
    c.set_many(&[(b"slave-priority", b"7"), (b"replica-priority", b"8")])
        .expect("a stored alias and its parameter");
    assert_eq!(get1(&c, "slave-priority"), "8");
    let dup = c.set_many(&[(b"slave-priority", b"1"), (b"SLAVE-priority", b"2")]);
    assert!(matches!(dup, Err(ConfigError::SetDuplicate { .. })));
}

/// Every parameter, and every other name one goes by, is named (in
/// backticks) in the configuration reference, docs/configuration.md.
#[test]
fn every_parameter_is_in_the_configuration_reference() {
    let doc = include_str!("../../../docs/configuration.md");
    let names = super::table::PARAMS
        .iter()
        .map(|s| s.name)
        .chain(super::table::ALIASES.iter().map(|(alias, _)| *alias));
    let missing: Vec<&str> = names
        .filter(|name| !doc.contains(&format!("`{name}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "not in docs/configuration.md: {missing:?}"
    );
}
