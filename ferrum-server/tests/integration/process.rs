//! The `ferrum-server` binary itself: startup errors, the start-up lines
//! scripts wait for, and clean shutdown on signals and `SHUTDOWN`.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_ferrum-server");

#[test]
fn unknown_and_malformed_options_stop_startup_naming_them() {
    for (args, named) in [
        (&["--no-such-option", "1"][..], "no-such-option"),
        (&["--maxmemory", "lots"], "maxmemory"),
        (&["--maxmemory-policy", "allkeys-best"], "maxmemory-policy"),
        (&["--port", "70000"], "port"),
    ] {
        let out = Command::new(BIN)
            .args(args)
            .output()
            .expect("run ferrum-server");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(named), "{args:?}: {stderr}");
    }
    let help = Command::new(BIN)
        .arg("--help")
        .output()
        .expect("run ferrum-server");
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).contains("Usage"));
}

/// As Redis logs its start-up line before reading its configuration, a
/// refused configuration still prints " PID: N" first, then exits with 1:
/// a script waiting for the PID line sees the exit at once.
#[test]
fn a_refused_configuration_exits_after_the_pid_line() {
    let out = Command::new(BIN)
        .args(["--appendonly", "yes"])
        .output()
        .expect("run ferrum-server");
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(" PID: "), "{stdout}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("FATAL CONFIG FILE ERROR"));
}

/// Starts the binary on a free port and waits for Redis's start-up lines
/// (Redis's test suite waits for " PID: N", then "Ready to accept
/// connections"); returns the process and its port.
fn start_on_port() -> (std::process::Child, u16) {
    start_on_port_with(&[])
}

/// [`start_on_port`] with extra `--name value` options.
fn start_on_port_with(extra: &[&str]) -> (std::process::Child, u16) {
    // Its own `dir`: with Redis's default save points a signal saves the
    // dataset there (left in the system's temporary directory).
    let dir = crate::common::temp_dir("process");
    let mut child = Command::new(BIN)
        .args(["--port", "0", "--bind", "127.0.0.1"])
        .args(["--dir", &dir.to_string_lossy()])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn ferrum-server");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut lines = BufReader::new(stdout).lines();
    let pid_line = format!(" PID: {}", child.id());
    let saw_pid = lines.any(|l| l.is_ok_and(|l| l.contains(&pid_line)));
    assert!(saw_pid, "the server never logged its PID");
    let ready = lines
        .find_map(|l| {
            let l = l.ok()?;
            let at = l.find("Ready to accept connections on ")?;
            let rest = &l[at + "Ready to accept connections on ".len()..];
            let addr = rest.split_whitespace().next()?;
            addr.rsplit(':').next()?.parse::<u16>().ok()
        })
        .expect("the server never said it was ready");
    // Keep draining so the server never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (child, ready)
}

fn start() -> std::process::Child {
    start_on_port().0
}

#[test]
fn shutdown_command_stops_the_server_cleanly() {
    // A directory no file can be created in: `SHUTDOWN SAVE` fails there.
    let (mut child, port) = start_on_port_with(&["--dir", "/proc"]);
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).expect("url");
    let mut con = client.get_connection().expect("connect");
    let e = redis::cmd("SHUTDOWN")
        .arg("SAVE")
        .query::<()>(&mut con)
        .expect_err("the save fails");
    assert!(e.to_string().contains("Errors trying to SHUTDOWN"), "{e}");
    let e = redis::cmd("SHUTDOWN")
        .arg("ABORT")
        .query::<()>(&mut con)
        .expect_err("no shutdown in progress");
    assert!(e.to_string().contains("No shutdown in progress"), "{e}");
    // The connection closes instead of replying, as with Redis.
    let _ = redis::cmd("SHUTDOWN").arg("NOSAVE").query::<()>(&mut con);
    let status = wait_with_deadline(&mut child);
    assert!(status.success(), "exited with {status}");
}

fn wait_with_deadline(child: &mut std::process::Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "server did not exit after the signal"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sigterm_and_sigint_shut_down_cleanly() {
    for signal in ["-TERM", "-INT"] {
        let mut child = start();
        let sent = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .expect("kill");
        assert!(sent.success());
        let status = wait_with_deadline(&mut child);
        assert!(status.success(), "{signal}: exited with {status}");
    }
}

/// Starts the binary on a free port; returns it and its address.
fn start_with_addr() -> (std::process::Child, String) {
    let (child, port) = start_on_port();
    (child, format!("127.0.0.1:{port}"))
}

/// `INFO memory` over a raw RESP2 connection, as `name -> value`.
fn info_memory(addr: &str) -> std::collections::HashMap<String, String> {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(addr).expect("connect");
    conn.write_all(b"*2\r\n$4\r\nINFO\r\n$6\r\nmemory\r\n")
        .expect("send");
    let mut reader = BufReader::new(conn);
    let mut header = String::new();
    reader.read_line(&mut header).expect("reply header");
    let len: usize = header
        .trim_end()
        .strip_prefix('$')
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not a bulk string: {header:?}"));
    let mut body = vec![0; len + 2];
    reader.read_exact(&mut body).expect("reply body");
    String::from_utf8_lossy(&body)
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_owned(), v.trim().to_owned()))
        .collect()
}

#[test]
fn info_memory_reports_the_allocator_as_redis_does() {
    let (mut child, addr) = start_with_addr();
    let f = info_memory(&addr);
    let num = |name: &str| -> u64 {
        f.get(name)
            .unwrap_or_else(|| panic!("missing {name} in {f:?}"))
            .parse()
            .unwrap_or_else(|_| panic!("{name} is not a count: {f:?}"))
    };
    for field in [
        "used_memory_rss_human",
        "allocator_frag_ratio",
        "allocator_frag_bytes",
        "allocator_rss_ratio",
        "rss_overhead_ratio",
        "mem_fragmentation_ratio",
        "mem_fragmentation_bytes",
    ] {
        assert!(f.contains_key(field), "missing {field} in {f:?}");
    }
    let rss = num("used_memory_rss");
    assert!(rss > 1 << 20, "RSS {rss}");
    let allocator = &f["mem_allocator"];
    if cfg!(feature = "jemalloc") {
        // Redis prints the release: jemalloc-5.3.0.
        assert!(allocator.starts_with("jemalloc-5."), "{allocator}");
        assert_eq!(allocator.matches('-').count(), 1, "{allocator}");
        let (allocated, active, resident) = (
            num("allocator_allocated"),
            num("allocator_active"),
            num("allocator_resident"),
        );
        assert!(
            0 < allocated && allocated <= active && active <= resident,
            "{f:?}"
        );
        assert_eq!(
            f["allocator_frag_bytes"],
            (active - allocated).to_string(),
            "{f:?}"
        );
        let ratio: f64 = f["allocator_frag_ratio"].parse().unwrap();
        assert!(
            (ratio - active as f64 / allocated as f64).abs() < 0.006,
            "{f:?}"
        );
    } else if cfg!(feature = "mimalloc") {
        assert_eq!(allocator, "mimalloc");
    } else {
        assert_eq!(allocator, "libc");
        assert_eq!(num("allocator_allocated"), 0);
    }
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    assert!(wait_with_deadline(&mut child).success());
}

/// A server process that is killed if a test fails before it exits.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts a script that writes, says so on channel `started`, and then
/// loops forever; waits until it wrote and other clients get `-BUSY`.
/// Returns the server, a client for the commands that are still served,
/// and the script's own connection.
fn start_with_busy_script() -> (Child, redis::Connection, std::net::TcpStream) {
    use std::io::Write;
    let (child, port) = start_on_port_with(&["--busy-reply-threshold", "10"]);
    let child = Child(child);
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).expect("url");
    let mut listener = client.get_connection().expect("connect");
    let mut pubsub = listener.as_pubsub();
    pubsub.subscribe("started").expect("subscribe");
    let mut script = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    script
        .write_all(
            b"EVAL \"redis.call('set','x','y') redis.call('publish','started','1') while true do end\" 0\r\n",
        )
        .expect("send the script");
    pubsub.get_message().expect("the script wrote");
    drop(pubsub);
    let mut con = client.get_connection().expect("connect");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match redis::cmd("PING").query::<String>(&mut con) {
            Err(e) if e.code() == Some("BUSY") => break,
            other => assert!(Instant::now() < deadline, "never busy: {other:?}"),
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    (child, con, script)
}

#[test]
fn shutdown_nosave_stops_a_busy_script_that_wrote() {
    let (mut child, mut con, _script) = start_with_busy_script();
    let e = redis::cmd("SCRIPT")
        .arg("KILL")
        .query::<()>(&mut con)
        .expect_err("the script wrote");
    assert_eq!(e.code(), Some("UNKILLABLE"), "{e}");
    // As in Redis, a plain SHUTDOWN (which would save) is refused.
    let e = redis::cmd("SHUTDOWN")
        .query::<()>(&mut con)
        .expect_err("busy");
    assert_eq!(e.code(), Some("BUSY"), "{e}");
    let _ = redis::cmd("SHUTDOWN").arg("NOSAVE").query::<()>(&mut con);
    let status = wait_with_deadline(&mut child.0);
    assert!(status.success(), "exited with {status}");
}

#[test]
fn sigterm_stops_a_busy_script() {
    let (mut child, _con, _script) = start_with_busy_script();
    let sent = Command::new("kill")
        .args(["-TERM", &child.0.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());
    let status = wait_with_deadline(&mut child.0);
    assert!(status.success(), "exited with {status}");
}

/// A declared bulk length is not allocated before its bytes arrive: the
/// connection's buffers (`CLIENT LIST`'s `tot-mem`) stay small, and so
/// does the server's RSS. The server runs in a process of its own, as the
/// test binary's RSS is that of every test running beside this one.
#[test]
fn declared_huge_bulk_costs_nothing_until_it_arrives() {
    use std::io::{Read, Write};
    let (child, addr) = start_with_addr();
    let _child = Child(child);
    let rss = || -> u64 {
        info_memory(&addr)["used_memory_rss"]
            .parse()
            .expect("used_memory_rss")
    };
    let before = rss();
    let mut hostile = std::net::TcpStream::connect(&addr).expect("connect");
    hostile
        .write_all(b"*3\r\n$6\r\nCLIENT\r\n$7\r\nSETNAME\r\n$7\r\nhostile\r\n")
        .expect("send");
    let mut ok = [0u8; 5];
    hostile.read_exact(&mut ok).expect("reply");
    assert_eq!(&ok, b"+OK\r\n");
    // 500 MB declared, a few bytes sent.
    hostile
        .write_all(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$524288000\r\nabc")
        .expect("send");
    let client = redis::Client::open(format!("redis://{addr}/")).expect("url");
    let mut c = client.get_connection().expect("connect");
    // The server has read the partial command once its client shows it.
    let deadline = Instant::now() + Duration::from_secs(30);
    let line = loop {
        let list: String = redis::cmd("CLIENT").arg("LIST").query(&mut c).unwrap();
        let line = list
            .lines()
            .find(|l| l.contains(" name=hostile "))
            .map(str::to_owned);
        if let Some(line) = line.filter(|l| !l.contains(" qbuf=0 ")) {
            break line;
        }
        assert!(
            Instant::now() < deadline,
            "the partial command never arrived: {list}"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    let field = |name: &str| -> u64 {
        line.split(' ')
            .find_map(|f| f.strip_prefix(name)?.strip_prefix('='))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {line}"))
    };
    assert!(field("tot-mem") < 1 << 20, "{line}");
    let grown = rss().saturating_sub(before);
    assert!(
        grown < 64 << 20,
        "RSS grew by {grown} bytes: the declared length was allocated"
    );
    let dbsize: i64 = redis::cmd("DBSIZE").query(&mut c).unwrap();
    assert_eq!(dbsize, 0);
    // Hanging up mid-command loses nothing for others.
    drop(hostile);
    let _: () = redis::cmd("SET")
        .arg("after")
        .arg("ok")
        .query(&mut c)
        .unwrap();
    let after: String = redis::cmd("GET").arg("after").query(&mut c).unwrap();
    assert_eq!(after, "ok");
}

/// With save points (Redis's defaults here), SIGTERM saves before the
/// server exits, and the next start loads what was saved.
#[test]
fn sigterm_saves_and_the_next_start_loads_it() {
    let dir = crate::common::temp_dir("sigterm-save");
    let dir_s = dir.to_string_lossy().into_owned();
    let (mut child, port) = start_on_port_with(&["--dir", &dir_s]);
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).expect("url");
    let mut con = client.get_connection().expect("connect");
    let _: () = redis::cmd("SET")
        .arg("kept")
        .arg("1")
        .query(&mut con)
        .expect("SET");
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());
    assert!(wait_with_deadline(&mut child).success());
    assert!(dir.join("dump.rdb").exists());
    let (child, port) = start_on_port_with(&["--dir", &dir_s]);
    let _child = Child(child);
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).expect("url");
    let mut con = client.get_connection().expect("connect");
    let kept: String = redis::cmd("GET").arg("kept").query(&mut con).expect("GET");
    assert_eq!(kept, "1");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server killed (SIGKILL) in the middle of a background save leaves
/// the last good file as it was, and the next start loads it.
#[test]
fn a_crash_in_the_middle_of_a_save_leaves_the_last_good_file() {
    let dir = crate::common::temp_dir("crash-save");
    let dir_s = dir.to_string_lossy().into_owned();
    let debug = ["--enable-debug-command", "yes"];
    let (child, port) = start_on_port_with(&["--dir", &dir_s, "--save", "", debug[0], debug[1]]);
    let mut child = Child(child);
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).expect("url");
    let mut con = client.get_connection().expect("connect");
    con.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let _: () = redis::cmd("SET")
        .arg("kept")
        .arg("1")
        .query(&mut con)
        .unwrap();
    let _: () = redis::cmd("SAVE").query(&mut con).unwrap();
    let good = std::fs::read(dir.join("dump.rdb")).expect("saved");
    // A slow save of more keys (10 ms per key), killed on its way.
    let _: () = redis::cmd("DEBUG")
        .arg("POPULATE")
        .arg(100)
        .query(&mut con)
        .unwrap();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("rdb-key-save-delay")
        .arg(10_000)
        .query(&mut con)
        .unwrap();
    let _: String = redis::cmd("BGSAVE").query(&mut con).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let temp = loop {
        let temp = std::fs::read_dir(&dir)
            .expect("dir")
            .filter_map(|e| e.ok())
            .find(|e| e.file_name().to_string_lossy().starts_with("temp-"));
        if let Some(t) = temp {
            break t.path();
        }
        assert!(Instant::now() < deadline, "the save never wrote its file");
        std::thread::sleep(Duration::from_millis(10));
    };
    // A tenth of a second into the one-second walk (100 keys).
    std::thread::sleep(Duration::from_millis(100));
    child.0.kill().expect("SIGKILL");
    let _ = child.0.wait();
    assert_eq!(
        std::fs::read(dir.join("dump.rdb")).expect("still there"),
        good
    );
    let _ = std::fs::remove_file(temp);
    let (again, port) = start_on_port_with(&["--dir", &dir_s, "--save", ""]);
    let _again = Child(again);
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).expect("url");
    let mut con = client.get_connection().expect("connect");
    let size: i64 = redis::cmd("DBSIZE").query(&mut con).unwrap();
    assert_eq!(size, 1, "the last good file: one key");
    let _ = std::fs::remove_dir_all(&dir);
}
