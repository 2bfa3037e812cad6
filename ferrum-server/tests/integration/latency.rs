//! `LATENCY`: per-command histograms and the latency monitor's events.

use crate::common::{err, run, TestServer};

#[test]
fn histograms_count_calls_per_command_and_subcommand() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["CONFIG", "RESETSTAT"]).unwrap();
    let _: () = run(&mut c, &["SET", "a", "1"]).unwrap();
    let _: () = run(&mut c, &["SET", "b", "1"]).unwrap();
    let _: i64 = run(&mut c, &["CLIENT", "ID"]).unwrap();
    let v: redis::Value =
        run(&mut c, &["LATENCY", "HISTOGRAM", "set", "client", "nosuch"]).unwrap();
    let text = format!("{v:?}");
    // `set` with 2 calls and `client|id` with 1; the unknown name skipped.
    let items = match v {
        redis::Value::Array(items) => items,
        other => panic!("unexpected {other:?}"),
    };
    assert_eq!(items.len(), 4, "{text}");
    assert!(text.contains("\"set\"") || text.contains("set"), "{text}");
    assert!(text.contains("client|id"), "{text}");
    let empty: redis::Value = run(&mut c, &["LATENCY", "HISTOGRAM", "nosuch"]).unwrap();
    assert_eq!(empty, redis::Value::Array(vec![]));
}

#[test]
fn events_are_logged_over_the_threshold_and_reset() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(
        &mut c,
        &["CONFIG", "SET", "latency-monitor-threshold", "50"],
    )
    .unwrap();
    let _: () = run(&mut c, &["DEBUG", "SLEEP", "0.1"]).unwrap();
    let latest: Vec<(String, i64, i64, i64)> = run(&mut c, &["LATENCY", "LATEST"]).unwrap();
    assert_eq!(latest.len(), 1);
    assert_eq!(latest[0].0, "command");
    assert!(latest[0].2 >= 100 && latest[0].3 >= 100, "{latest:?}");
    let history: Vec<(i64, i64)> = run(&mut c, &["LATENCY", "HISTORY", "command"]).unwrap();
    assert_eq!(history.len(), 1);
    let none: Vec<(i64, i64)> = run(&mut c, &["LATENCY", "HISTORY", "nosuch"]).unwrap();
    assert!(none.is_empty());
    assert_eq!(run::<i64>(&mut c, &["LATENCY", "RESET"]).unwrap(), 1);
    let latest: Vec<(String, i64, i64, i64)> = run(&mut c, &["LATENCY", "LATEST"]).unwrap();
    assert!(latest.is_empty());
    assert_eq!(
        err(&mut c, &["LATENCY", "HELP", "xxx"]),
        "ERR wrong number of arguments for 'latency|help' command"
    );
    assert!(err(&mut c, &["LATENCY", "NOSUCH"]).starts_with("ERR unknown subcommand 'NOSUCH'"));
}
