//! The `ferrum-server` binary itself: startup errors and clean shutdown on
//! signals.

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

/// Starts the binary on a free port and waits for its ready line.
fn start() -> std::process::Child {
    let mut child = Command::new(BIN)
        .args(["--port", "0", "--bind", "127.0.0.1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn ferrum-server");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut lines = BufReader::new(stdout).lines();
    let ready = lines.any(|l| l.is_ok_and(|l| l.contains("ready to accept connections")));
    assert!(ready, "the server never said it was ready");
    // Keep draining so the server never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    child
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
