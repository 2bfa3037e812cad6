//! `maxmemory-clients` and `CLIENT NO-EVICT`: clients whose memory puts the
//! clients' sum at the limit are closed, largest first, unless marked
//! `no-evict`; `INFO`'s `evicted_clients` counts them.

use std::time::{Duration, Instant};

use crate::common::{info_fields, resp, run, Raw, TestServer};

/// `name`'s `CLIENT LIST` line, if it is connected.
fn client_line(c: &mut redis::Connection, name: &str) -> Option<String> {
    let list: String = run(c, &["CLIENT", "LIST"]).expect("CLIENT LIST");
    let needle = format!(" name={name} ");
    list.lines()
        .find(|l| l.contains(&needle))
        .map(str::to_owned)
}

/// A field of `name`'s `CLIENT LIST` line.
fn field(c: &mut redis::Connection, name: &str, f: &str) -> Option<u64> {
    let line = client_line(c, name)?;
    let prefix = format!("{f}=");
    let value = line
        .split(' ')
        .find_map(|w| w.strip_prefix(prefix.as_str()))?;
    value.parse().ok()
}

/// Waits (at most 10 s) until `done` holds, and says whether it did.
fn eventually(mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    done()
}

/// A raw client named `name` (the name is how the tests find it).
fn named(s: &TestServer, name: &str) -> Raw {
    let mut raw = s.raw();
    let set = format!(
        "*3\r\n$6\r\nCLIENT\r\n$7\r\nSETNAME\r\n${}\r\n{name}\r\n",
        name.len()
    );
    raw.roundtrip(set.as_bytes(), b"+OK\r\n");
    raw
}

/// Whether `+OK` came back, rather than the connection closing (an
/// eviction may reset it).
fn replied_ok(raw: &mut Raw) -> bool {
    let mut reply = [0u8; 5];
    std::io::Read::read_exact(&mut raw.stream, &mut reply).is_ok() && &reply == b"+OK\r\n"
}

/// Sends `n` bytes of a bulk string that never completes, so that they
/// wait in the client's query buffer.
fn fill_query_buffer(raw: &mut Raw, n: usize) {
    raw.send(format!("*2\r\n${}\r\n", n + 1).as_bytes());
    raw.send(&vec![b'v'; n]);
}

#[test]
fn a_query_buffer_over_the_limit_evicts_its_client() {
    let s = TestServer::start();
    let mut c = s.client();
    run::<()>(&mut c, &["CONFIG", "SET", "maxmemory-clients", "1mb"]).expect("set");
    let mut small = named(&s, "small");
    fill_query_buffer(&mut small, 100_000);
    let mut big = named(&s, "big");
    fill_query_buffer(&mut big, 1_500_000);
    assert!(
        eventually(|| client_line(&mut c, "big").is_none()),
        "still connected"
    );
    assert!(big.is_closed());
    assert!(
        client_line(&mut c, "small").is_some(),
        "only the largest goes"
    );
    assert_eq!(info_fields(&mut c, "stats")["evicted_clients"], "1");
    run::<()>(&mut c, &["CONFIG", "RESETSTAT"]).expect("resetstat");
    assert_eq!(info_fields(&mut c, "stats")["evicted_clients"], "0");
}

#[test]
fn no_evict_clients_stay_until_the_flag_goes() {
    let s = TestServer::start();
    let mut c = s.client();
    run::<()>(&mut c, &["CLIENT", "NO-EVICT", "on"]).expect("no-evict");
    run::<()>(&mut c, &["CONFIG", "SET", "maxmemory-clients", "1mb"]).expect("set");
    let mut kept = named(&s, "kept");
    kept.roundtrip(
        b"*3\r\n$6\r\nCLIENT\r\n$8\r\nNO-EVICT\r\n$2\r\non\r\n",
        b"+OK\r\n",
    );
    let line = client_line(&mut c, "kept").expect("connected");
    assert!(line.contains(" flags=e "), "{line}");
    // A watched key of 1.2 MB stays with the client after the command.
    let key = "k".repeat(1_200_000);
    let watch = format!("*2\r\n$5\r\nWATCH\r\n${}\r\n{key}\r\n", key.len());
    kept.roundtrip(watch.as_bytes(), b"+OK\r\n");
    kept.roundtrip(b"*1\r\n$4\r\nPING\r\n", b"+PONG\r\n");
    assert!(field(&mut c, "kept", "tot-mem").expect("connected") > 1_200_000);
    assert_eq!(info_fields(&mut c, "stats")["evicted_clients"], "0");
    // Lifting the flag evicts it at once.
    kept.send(b"*3\r\n$6\r\nCLIENT\r\n$8\r\nNO-EVICT\r\n$3\r\noff\r\n");
    assert!(eventually(|| client_line(&mut c, "kept").is_none()));
    // Its reply may come first, then the connection closes.
    let _ = kept.read_exact_len(5);
    assert!(kept.is_closed());
    assert_eq!(info_fields(&mut c, "stats")["evicted_clients"], "1");
}

#[test]
fn lowering_the_limit_evicts_at_once_largest_first() {
    let s = TestServer::start();
    let mut c = s.client();
    run::<()>(&mut c, &["CLIENT", "NO-EVICT", "on"]).expect("no-evict");
    let sizes = [
        ("c100k", 100_000usize),
        ("c300k", 300_000),
        ("c700k", 700_000),
    ];
    let mut raws = Vec::new();
    for (name, n) in sizes {
        let mut raw = named(&s, name);
        fill_query_buffer(&mut raw, n);
        assert!(eventually(
            || field(&mut c, name, "tot-mem").unwrap_or(0) > n as u64
        ));
        raws.push(raw);
    }
    let total: u64 = sizes
        .iter()
        .map(|(name, _)| field(&mut c, name, "tot-mem").expect("connected"))
        .sum();
    let largest = field(&mut c, "c700k", "tot-mem").expect("connected");
    let limit = (total - largest + 64 * 1024).to_string();
    run::<()>(&mut c, &["CONFIG", "SET", "maxmemory-clients", &limit]).expect("set");
    // Evicted before CONFIG SET replied, as in Redis.
    assert!(client_line(&mut c, "c700k").is_none());
    assert!(client_line(&mut c, "c300k").is_some());
    assert!(client_line(&mut c, "c100k").is_some());
    assert_eq!(info_fields(&mut c, "stats")["evicted_clients"], "1");
}

#[test]
fn a_percentage_is_of_maxmemory() {
    let s = TestServer::start();
    let mut c = s.client();
    run::<()>(&mut c, &["CONFIG", "SET", "maxmemory", "10mb"]).expect("set");
    run::<()>(&mut c, &["CONFIG", "SET", "maxmemory-clients", "5%"]).expect("set");
    let got: Vec<String> = run(&mut c, &["CONFIG", "GET", "maxmemory-clients"]).expect("get");
    assert_eq!(got, ["maxmemory-clients", "5%"]);
    // 5% of 10 MiB is 524,288 bytes: 200,000 stay, 600,000 go.
    let mut kept = named(&s, "kept");
    fill_query_buffer(&mut kept, 200_000);
    assert!(eventually(|| {
        field(&mut c, "kept", "qbuf").is_some_and(|q| q >= 200_000)
    }));
    let mut big = named(&s, "big");
    fill_query_buffer(&mut big, 600_000);
    assert!(eventually(|| client_line(&mut c, "big").is_none()));
    assert!(client_line(&mut c, "kept").is_some());
    let _ = kept;
}

#[test]
fn queued_multi_commands_count() {
    let s = TestServer::start();
    let mut c = s.client();
    run::<()>(&mut c, &["CONFIG", "SET", "maxmemory-clients", "1mb"]).expect("set");
    let mut tx = named(&s, "tx");
    tx.roundtrip(b"*1\r\n$5\r\nMULTI\r\n", b"+OK\r\n");
    let value = "v".repeat(300_000);
    let set = format!(
        "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n${}\r\n{value}\r\n",
        value.len()
    );
    // The third 300 kB command puts the queue over 1 MB with what the
    // connection holds; the client may be gone before it sends them all.
    for _ in 0..10 {
        if std::io::Write::write_all(&mut tx.stream, set.as_bytes()).is_err() {
            break;
        }
    }
    assert!(eventually(|| client_line(&mut c, "tx").is_none()));
    assert_eq!(info_fields(&mut c, "stats")["evicted_clients"], "1");
}

#[test]
fn tracking_prefixes_and_subscriptions_count() {
    let s = TestServer::start();
    let mut c = s.client();
    run::<()>(&mut c, &["CONFIG", "SET", "maxmemory-clients", "300kb"]).expect("set");
    // Prefixes of 100 kB, one command each: the query buffer of one stays
    // well under the limit, the prefixes together pass it.
    let mut tracker = named(&s, "tracker");
    for letter in b'a'..=b'e' {
        let prefix = vec![letter; 100_000];
        tracker.send(&resp(&[
            b"CLIENT",
            b"TRACKING",
            b"on",
            b"BCAST",
            b"PREFIX",
            &prefix,
        ]));
        if !replied_ok(&mut tracker) {
            break;
        }
    }
    assert!(eventually(|| client_line(&mut c, "tracker").is_none()));
    // 6,000 subscriptions, at 64 bytes and more each, pass 300 kB.
    let mut subscriber = named(&s, "subscriber");
    let mut batch = Vec::new();
    for i in 0..6_000 {
        batch.extend(resp(&[b"SUBSCRIBE", format!("channel-{i}").as_bytes()]));
    }
    let _ = std::io::Write::write_all(&mut subscriber.stream, &batch);
    assert!(eventually(|| client_line(&mut c, "subscriber").is_none()));
    assert_eq!(info_fields(&mut c, "stats")["evicted_clients"], "2");
}

/// A client that does not read its replies grows its output buffer (with
/// `normal 0 0 0`, nothing else bounds it) until `maxmemory-clients`
/// evicts it; a client that reads is left alone.
#[test]
fn unread_output_evicts_its_client() {
    let s = TestServer::start();
    let mut c = s.client();
    run::<()>(&mut c, &["CONFIG", "SET", "maxmemory-clients", "5mb"]).expect("set");
    let value = "v".repeat(100_000);
    run::<()>(&mut c, &["SET", "big", &value]).expect("set");
    let mut reader = named(&s, "reader");
    let mut hog = named(&s, "hog");
    // 30 MB of replies, more than the kernel's socket buffers hold.
    hog.send(&resp(&[b"GET", b"big"]).repeat(300));
    assert!(
        eventually(|| client_line(&mut c, "hog").is_none()),
        "the client with 30 MB unread is still connected"
    );
    assert_eq!(info_fields(&mut c, "stats")["evicted_clients"], "1");
    for _ in 0..50 {
        reader.send(&resp(&[b"GET", b"big"]));
        assert_eq!(reader.read_exact_len(100_011).len(), 100_011);
    }
    assert!(client_line(&mut c, "reader").is_some());
}
