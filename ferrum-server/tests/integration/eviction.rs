//! maxmemory and the eviction policies, against a live server.

use std::collections::HashMap;

use crate::common::{err, run, TestServer};

fn info(c: &mut redis::Connection) -> HashMap<String, String> {
    let text: String = run(c, &["INFO", "all"]).unwrap();
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.trim().to_string()))
        .collect()
}

fn num(c: &mut redis::Connection, field: &str) -> u64 {
    info(c)[field].parse().unwrap()
}

const MB: u64 = 1024 * 1024;

#[test]
fn write_flood_from_many_clients_stays_under_maxmemory() {
    let s = TestServer::start_with(&["--maxmemory", "2mb", "--maxmemory-policy", "allkeys-lru"]);
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let mut c = s.client();
            std::thread::spawn(move || {
                let value = "v".repeat(200);
                for i in 0..5_000 {
                    let mut pipe = redis::pipe();
                    pipe.cmd("SET")
                        .arg(format!("w{w}:{i}"))
                        .arg(&value)
                        .ignore();
                    let _: () = pipe.query(&mut c).unwrap();
                }
            })
        })
        .collect();
    let mut c = s.client();
    let mut peak = 0;
    while writers.iter().any(|w| !w.is_finished()) {
        peak = peak.max(num(&mut c, "used_memory_dataset"));
    }
    for w in writers {
        w.join().unwrap();
    }
    peak = peak.max(num(&mut c, "used_memory_dataset"));
    // The limit plus what in-flight writes hold: each command evicts right
    // after it runs, so at most one write per connection is outstanding,
    // but INFO on the other worker can see it between its growth and its
    // eviction, and one write may double its shard's index (about 12 KiB at
    // this size): 16 KiB per writer.
    assert!(
        peak <= 2 * MB + 4 * 16 * 1024,
        "used_memory peaked at {peak}"
    );
    assert!(num(&mut c, "evicted_keys") > 0);
}

#[test]
fn lowering_maxmemory_at_runtime_evicts_at_once() {
    let s = TestServer::start_with(&["--maxmemory-policy", "allkeys-lru"]);
    let mut c = s.client();
    let value = "x".repeat(1000);
    for i in 0..3000 {
        let _: () = run(&mut c, &["SET", &format!("k{i}"), &value]).unwrap();
    }
    assert_eq!(num(&mut c, "evicted_keys"), 0);
    let _: () = run(&mut c, &["CONFIG", "SET", "maxmemory", "1mb"]).unwrap();
    assert!(num(&mut c, "used_memory_dataset") <= MB);
    assert!(num(&mut c, "evicted_keys") > 1000);
}

#[test]
fn volatile_policies_spare_keys_without_ttl_and_then_refuse() {
    for policy in [
        "volatile-lru",
        "volatile-lfu",
        "volatile-random",
        "volatile-ttl",
    ] {
        let s = TestServer::start_with(&["--maxmemory", "1mb", "--maxmemory-policy", policy]);
        let mut c = s.client();
        let value = "x".repeat(1000);
        for i in 0..300 {
            let _: () = run(&mut c, &["SET", &format!("keep{i}"), &value]).unwrap();
        }
        for i in 0..3000 {
            let _: () = run(&mut c, &["SET", &format!("tmp{i}"), &value, "EX", "1000"]).unwrap();
        }
        assert!(num(&mut c, "evicted_keys") > 0, "{policy}");
        for i in 0..300 {
            assert_eq!(
                run::<i64>(&mut c, &["EXISTS", &format!("keep{i}")]).unwrap(),
                1,
                "{policy}"
            );
        }
        // Fill the rest with keys that cannot be evicted: the server refuses.
        let mut refused = None;
        for i in 0..3000 {
            if let Err(e) = run::<()>(&mut c, &["SET", &format!("more{i}"), &value]) {
                refused = Some(format!(
                    "{} {}",
                    e.code().unwrap_or(""),
                    e.detail().unwrap_or("")
                ));
                break;
            }
        }
        assert_eq!(
            refused.as_deref(),
            Some("OOM command not allowed when used memory > 'maxmemory'."),
            "{policy}"
        );
        assert_eq!(run::<i64>(&mut c, &["EXISTS", "keep0"]).unwrap(), 1);
    }
}

#[test]
fn volatile_ttl_evicts_the_nearest_deadline_first() {
    let s = TestServer::start_with(&["--maxmemory", "1mb", "--maxmemory-policy", "volatile-ttl"]);
    let mut c = s.client();
    let value = "x".repeat(1000);
    let _: () = run(&mut c, &["SET", "late", &value, "EX", "100000"]).unwrap();
    for i in 0..3000 {
        let ttl = (1000 + i).to_string();
        let _: () = run(&mut c, &["SET", &format!("k{i}"), &value, "EX", &ttl]).unwrap();
    }
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "late"]).unwrap(), 1);
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "k0"]).unwrap(), 0);
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "k2999"]).unwrap(), 1);
}

#[test]
fn lfu_keeps_frequently_read_keys_and_reports_freq() {
    let s = TestServer::start_with(&["--maxmemory", "1mb", "--maxmemory-policy", "allkeys-lfu"]);
    let mut c = s.client();
    let value = "x".repeat(1000);
    // Read heavily while the cache is nearly empty: the key must keep that
    // credit once the cache fills (LFU re-keys its priorities for the size
    // it reaches).
    let _: () = run(&mut c, &["SET", "hot", &value]).unwrap();
    for _ in 0..50 {
        let _: String = run(&mut c, &["GET", "hot"]).unwrap();
    }
    let freq: i64 = run(&mut c, &["OBJECT", "FREQ", "hot"]).unwrap();
    assert!(
        freq > 5,
        "a read key's counter grows past LFU_INIT_VAL: {freq}"
    );
    for i in 0..3000 {
        let _: () = run(&mut c, &["SET", &format!("cold{i}"), &value]).unwrap();
    }
    assert_eq!(run::<i64>(&mut c, &["EXISTS", "hot"]).unwrap(), 1);
    assert!(err(&mut c, &["OBJECT", "IDLETIME", "hot"])
        .starts_with("ERR An LFU maxmemory policy is selected"));
}

#[test]
fn policy_switches_at_runtime_without_losing_keys() {
    let s = TestServer::start_with(&["--maxmemory", "4mb"]);
    let mut c = s.client();
    for i in 0..1000 {
        let _: () = run(&mut c, &["SET", &format!("k{i}"), "v"]).unwrap();
    }
    for policy in [
        "allkeys-lfu",
        "allkeys-random",
        "volatile-ttl",
        "allkeys-lru",
        "noeviction",
    ] {
        let _: () = run(&mut c, &["CONFIG", "SET", "maxmemory-policy", policy]).unwrap();
        assert_eq!(info(&mut c)["maxmemory_policy"], policy);
        assert_eq!(run::<i64>(&mut c, &["DBSIZE"]).unwrap(), 1000, "{policy}");
    }
    let _: () = run(
        &mut c,
        &["CONFIG", "SET", "maxmemory-policy", "allkeys-random"],
    )
    .unwrap();
    let value = "x".repeat(1000);
    for i in 0..6000 {
        let _: () = run(&mut c, &["SET", &format!("big{i}"), &value]).unwrap();
    }
    assert!(num(&mut c, "used_memory_dataset") <= 4 * MB);
}

#[test]
fn memory_comes_back_after_del_and_flushall() {
    let s = TestServer::start();
    let mut c = s.client();
    // The dataset's share: the connection's buffers vary with the commands.
    let base = num(&mut c, "used_memory_dataset");
    let value = "x".repeat(100);
    for i in 0..20_000 {
        let _: () = run(&mut c, &["SET", &format!("k{i}"), &value]).unwrap();
    }
    let full = num(&mut c, "used_memory_dataset");
    assert!(full > base + 20_000 * 100, "{base} -> {full}");
    for chunk in (0..20_000).collect::<Vec<_>>().chunks(500) {
        let mut del = redis::cmd("DEL");
        for i in chunk {
            del.arg(format!("k{i}"));
        }
        let _: i64 = del.query(&mut c).unwrap();
    }
    // The slot tables shrink on the expiry cron; force one cycle.
    let _: i64 = run(&mut c, &["DEBUG", "EXPIRE-CYCLE"]).unwrap();
    assert_eq!(num(&mut c, "used_memory_dataset"), base);
    for i in 0..20_000 {
        let _: () = run(&mut c, &["SET", &format!("k{i}"), &value]).unwrap();
    }
    let _: () = run(&mut c, &["FLUSHALL"]).unwrap();
    assert_eq!(num(&mut c, "used_memory_dataset"), base);
}

/// Polls `INFO` until `done` holds, at most 200 times 20 ms apart (the
/// server's connections publish their memory as they read).
fn wait_for(
    c: &mut redis::Connection,
    done: impl Fn(&HashMap<String, String>) -> bool,
) -> HashMap<String, String> {
    for _ in 0..200 {
        let fields = info(c);
        if done(&fields) {
            return fields;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    info(c)
}

#[test]
fn a_clients_memory_counts_in_used_memory_but_evicts_no_keys() {
    let s = TestServer::start_with(&["--maxmemory-policy", "allkeys-lru"]);
    let mut c = s.client();
    let value = "x".repeat(1000);
    for i in 0..2000 {
        let _: () = run(&mut c, &["SET", &format!("k{i}"), &value]).unwrap();
    }
    let f = info(&mut c);
    let field = |f: &HashMap<String, String>, name: &str| -> u64 { f[name].parse().unwrap() };
    let (used, dataset, overhead) = (
        field(&f, "used_memory"),
        field(&f, "used_memory_dataset"),
        field(&f, "used_memory_overhead"),
    );
    assert_eq!(used, dataset + overhead);
    assert!(overhead > 0, "this connection's buffers count");
    let limit = dataset + 256 * 1024;
    let _: () = run(&mut c, &["CONFIG", "SET", "maxmemory", &limit.to_string()]).unwrap();
    // A client sends most of a 1 MB argument and stops: what the server
    // holds for it shows in used_memory, and `maxmemory`, which bounds the
    // dataset, evicts nothing for it.
    let mut dead = s.raw();
    dead.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1000000\r\n");
    dead.send(&vec![b'y'; 600_000]);
    let f = wait_for(&mut c, |f| field(f, "used_memory_overhead") > 600_000);
    assert!(field(&f, "used_memory_overhead") > 600_000, "{f:?}");
    assert!(field(&f, "used_memory") > limit, "{f:?}");
    assert_eq!(field(&f, "evicted_keys"), 0, "{f:?}");
    assert_eq!(field(&f, "used_memory_dataset"), dataset, "{f:?}");
    // Once it is gone, its bytes are too.
    drop(dead);
    let f = wait_for(&mut c, |f| {
        field(f, "used_memory_overhead") < overhead + 64 * 1024
    });
    assert!(
        field(&f, "used_memory_overhead") < overhead + 64 * 1024,
        "{f:?}"
    );
}

#[test]
fn a_large_command_does_not_leave_its_buffer_counted() {
    let s = TestServer::start();
    let mut c = s.client();
    let base = num(&mut c, "used_memory");
    let members: Vec<String> = (0..100_000).map(|i| i.to_string()).collect();
    let mut cmd = redis::cmd("SADD");
    cmd.arg("set").arg(&members);
    let _: i64 = cmd.query(&mut c).unwrap();
    let _: i64 = run(&mut c, &["UNLINK", "set"]).unwrap();
    // The lazyfree suite's check: back under twice the empty figure.
    let used = |f: &HashMap<String, String>| -> u64 { f["used_memory"].parse().unwrap() };
    let f = wait_for(&mut c, |f| used(f) < 2 * base);
    assert!(
        used(&f) < 2 * base,
        "used_memory {} against {base} empty",
        used(&f)
    );
}

/// What `maxmemory` bounds is `used_memory - mem_not_counted_for_evict`,
/// as in Redis (whose tests compute it so): here the connections' memory is
/// what eviction leaves out, so the difference is the dataset.
#[test]
fn memory_not_counted_for_eviction_is_the_connections() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "k", &"v".repeat(10_000)]).unwrap();
    let i = info(&mut c);
    let field = |f: &str| -> u64 { i[f].parse().unwrap() };
    assert!(
        field("mem_not_counted_for_evict") > 0,
        "a client is connected"
    );
    assert_eq!(
        field("used_memory") - field("mem_not_counted_for_evict"),
        field("used_memory_dataset")
    );
    assert_eq!(
        field("mem_not_counted_for_evict"),
        field("used_memory_overhead")
    );
}
