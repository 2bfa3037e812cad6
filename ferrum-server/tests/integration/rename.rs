//! `rename-command`: commands called under their new names, hidden under
//! their old ones, disabled by an empty name; refused renames stop startup
//! with Redis's report.

use std::process::Command;

use crate::common::{err, info_fields, run, TestServer};

const BIN: &str = env!("CARGO_BIN_EXE_ferrum-server");

#[test]
fn a_renamed_command_answers_to_its_new_name_only() {
    let s = TestServer::start_with(&["--rename-command", "flushdb", "badger"]);
    let mut c = s.client();
    run::<()>(&mut c, &["SET", "k", "v"]).expect("SET");
    assert_eq!(
        err(&mut c, &["FLUSHDB"]),
        "ERR unknown command 'FLUSHDB', with args beginning with:"
    );
    assert_eq!(run::<String>(&mut c, &["BADGER"]).expect("renamed"), "OK");
    assert_eq!(run::<i64>(&mut c, &["DBSIZE"]).expect("DBSIZE"), 0);
    // Stats keep the command's own name, as Redis's do.
    let stats = info_fields(&mut c, "commandstats");
    assert!(stats.contains_key("cmdstat_flushdb"), "{stats:?}");
}

#[test]
fn renames_hold_inside_transactions_and_scripts() {
    let s = TestServer::start_with(&["--rename-command", "set", "put"]);
    let mut c = s.client();
    run::<()>(&mut c, &["MULTI"]).expect("MULTI");
    assert_eq!(
        err(&mut c, &["SET", "k", "v"]),
        "ERR unknown command 'SET', with args beginning with: 'k' 'v'"
    );
    run::<String>(&mut c, &["PUT", "k", "v"]).expect("queued");
    assert_eq!(
        err(&mut c, &["EXEC"]),
        "EXECABORT Transaction discarded because of previous errors."
    );
    let put = "return redis.call('put', 'k', 'v')";
    assert_eq!(
        run::<String>(&mut c, &["EVAL", put, "0"]).expect("EVAL"),
        "OK"
    );
    let set = "return redis.call('set', 'k', 'v')";
    let e = err(&mut c, &["EVAL", set, "0"]);
    assert!(
        e.contains("Unknown Redis command called from script"),
        "{e}"
    );
}

#[test]
fn an_empty_name_disables_a_command() {
    let s = TestServer::start_with(&["--rename-command", "config", ""]);
    let mut c = s.client();
    let e = err(&mut c, &["CONFIG", "GET", "port"]);
    assert!(e.starts_with("ERR unknown command 'CONFIG'"), "{e}");
    assert_eq!(run::<String>(&mut c, &["PING"]).expect("PING"), "PONG");
}

/// Writes `text` as a configuration file and runs the binary on it;
/// returns the exit code and standard error.
fn run_with_file(name: &str, text: &str) -> (Option<i32>, String) {
    let path = std::env::temp_dir().join(format!("ferrum-{name}-{}.conf", std::process::id()));
    std::fs::write(&path, text).expect("write the configuration");
    let out = Command::new(BIN)
        .arg(&path)
        .output()
        .expect("run ferrum-server");
    let _ = std::fs::remove_file(&path);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_refused_rename_stops_startup_with_redis_report() {
    let (code, stderr) = run_with_file(
        "rename-unknown",
        "port 0\n# a comment\nrename-command nosuch other\n",
    );
    assert_eq!(code, Some(1));
    assert_eq!(
        stderr,
        "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\n\
         Reading the configuration file, at line 3\n\
         >>> 'rename-command nosuch other'\n\
         No such command in rename-command\n"
    );
    let (code, stderr) = run_with_file("rename-taken", "rename-command get set\n");
    assert_eq!(code, Some(1));
    assert!(
        stderr.ends_with("Target command name already exists\n"),
        "{stderr}"
    );
    let (code, stderr) = run_with_file("rename-arity", "rename-command get\n");
    assert_eq!(code, Some(1));
    assert!(
        stderr.ends_with("Bad directive or wrong number of arguments\n"),
        "{stderr}"
    );
}

#[test]
fn command_line_errors_are_reported_as_lines_after_the_file() {
    let out = Command::new(BIN)
        .args(["--port", "6379", "6380"])
        .output()
        .expect("run ferrum-server");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\n\
         Reading the configuration file, at line 2\n\
         >>> 'port \"6379\" \"6380\"'\n\
         wrong number of arguments\n"
    );
}
