//! Pub/Sub over real sockets, checked byte for byte in RESP2 and RESP3:
//! confirmations, messages, patterns, PUBSUB introspection, subscribed
//! mode, and a slow subscriber cut off at its output limit.

use std::io::Read;
use std::time::Duration;

use crate::common::{resp, run, Raw, TestServer};

/// Waits until `PUBSUB NUMSUB channel` reads `n` (bounded polling).
fn wait_numsub(c: &mut redis::Connection, channel: &str, n: i64) {
    for _ in 0..2000 {
        let v: (String, i64) = run(c, &["PUBSUB", "NUMSUB", channel]).expect("numsub");
        if v.1 == n {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("NUMSUB {channel} never reached {n}");
}

fn expect(r: &mut Raw, reply: &[u8]) {
    let got = r.read_exact_len(reply.len());
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(reply)
    );
}

#[test]
fn subscribe_publish_and_receive_in_resp2() {
    let s = TestServer::start();
    let mut p = s.client();
    let mut sub = s.raw();
    sub.roundtrip(
        &resp(&[b"SUBSCRIBE", b"a", b"b"]),
        b"*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n*3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n",
    );
    assert_eq!(run::<i64>(&mut p, &["PUBLISH", "a", "hello"]).unwrap(), 1);
    assert_eq!(run::<i64>(&mut p, &["PUBLISH", "nobody", "x"]).unwrap(), 0);
    expect(
        &mut sub,
        b"*3\r\n$7\r\nmessage\r\n$1\r\na\r\n$5\r\nhello\r\n",
    );

    // Subscribed mode: only the Pub/Sub commands, PING, QUIT and RESET.
    sub.roundtrip(
        b"GET x\r\n",
        b"-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n",
    );
    sub.roundtrip(b"PING\r\n", b"*2\r\n$4\r\npong\r\n$0\r\n\r\n");
    sub.roundtrip(b"PING hi\r\n", b"*2\r\n$4\r\npong\r\n$2\r\nhi\r\n");

    // UNSUBSCRIBE with no argument leaves every channel, one reply each.
    sub.roundtrip(
        b"UNSUBSCRIBE\r\n",
        b"*3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:1\r\n*3\r\n$11\r\nunsubscribe\r\n$1\r\nb\r\n:0\r\n",
    );
    sub.roundtrip(
        b"UNSUBSCRIBE\r\n",
        b"*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n",
    );
    sub.roundtrip(b"GET x\r\n", b"$-1\r\n");
    sub.roundtrip(b"PING\r\n", b"+PONG\r\n");
    assert_eq!(run::<i64>(&mut p, &["PUBLISH", "a", "gone"]).unwrap(), 0);
}

#[test]
fn subscribe_publish_and_receive_in_resp3() {
    let s = TestServer::start();
    let mut p = s.client();
    let mut sub = s.raw();
    sub.hello3();
    sub.roundtrip(
        &resp(&[b"SUBSCRIBE", b"news"]),
        b">3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n",
    );
    // RESP3 clients may run any command while subscribed.
    sub.roundtrip(b"GET x\r\n", b"_\r\n");
    sub.roundtrip(b"PING\r\n", b"+PONG\r\n");
    assert_eq!(run::<i64>(&mut p, &["PUBLISH", "news", "hi"]).unwrap(), 1);
    expect(
        &mut sub,
        b">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n",
    );
    sub.roundtrip(
        &resp(&[b"PSUBSCRIBE", b"n*"]),
        b">3\r\n$10\r\npsubscribe\r\n$2\r\nn*\r\n:2\r\n",
    );
    assert_eq!(run::<i64>(&mut p, &["PUBLISH", "news", "both"]).unwrap(), 2);
    let mut got = sub.read_exact_len(
        b">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$4\r\nboth\r\n".len()
            + b">4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$4\r\nboth\r\n".len(),
    );
    // The two deliveries may come in either order.
    let text = String::from_utf8_lossy(&got).into_owned();
    assert!(
        text.contains(">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$4\r\nboth\r\n"),
        "{text}"
    );
    assert!(
        text.contains(">4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$4\r\nboth\r\n"),
        "{text}"
    );
    got.clear();
    sub.roundtrip(
        b"PUNSUBSCRIBE\r\n",
        b">3\r\n$12\r\npunsubscribe\r\n$2\r\nn*\r\n:1\r\n",
    );
    sub.roundtrip(b"RESET\r\n", b"+RESET\r\n");
    assert_eq!(run::<i64>(&mut p, &["PUBLISH", "news", "x"]).unwrap(), 0);
}

#[test]
fn patterns_match_with_glob_rules() {
    let s = TestServer::start();
    let mut p = s.client();
    let mut sub = s.raw();
    sub.roundtrip(
        &resp(&[b"PSUBSCRIBE", b"news.*", b"h?llo"]),
        b"*3\r\n$10\r\npsubscribe\r\n$6\r\nnews.*\r\n:1\r\n*3\r\n$10\r\npsubscribe\r\n$5\r\nh?llo\r\n:2\r\n",
    );
    assert_eq!(
        run::<i64>(&mut p, &["PUBLISH", "news.tech", "m1"]).unwrap(),
        1
    );
    expect(
        &mut sub,
        b"*4\r\n$8\r\npmessage\r\n$6\r\nnews.*\r\n$9\r\nnews.tech\r\n$2\r\nm1\r\n",
    );
    assert_eq!(run::<i64>(&mut p, &["PUBLISH", "news", "no"]).unwrap(), 0);
    assert_eq!(run::<i64>(&mut p, &["PUBLISH", "hallo", "m2"]).unwrap(), 1);
    expect(
        &mut sub,
        b"*4\r\n$8\r\npmessage\r\n$5\r\nh?llo\r\n$5\r\nhallo\r\n$2\r\nm2\r\n",
    );
    sub.roundtrip(
        &resp(&[b"PUNSUBSCRIBE", b"h?llo"]),
        b"*3\r\n$12\r\npunsubscribe\r\n$5\r\nh?llo\r\n:1\r\n",
    );
    assert_eq!(run::<i64>(&mut p, &["PUBLISH", "hallo", "m3"]).unwrap(), 0);
}

#[test]
fn pubsub_introspection_counts_subscribers() {
    let s = TestServer::start();
    let mut c = s.client();
    let mut one = s.raw();
    one.roundtrip(
        &resp(&[b"SUBSCRIBE", b"chan:1"]),
        b"*3\r\n$9\r\nsubscribe\r\n$6\r\nchan:1\r\n:1\r\n",
    );
    let mut two = s.raw();
    two.roundtrip(
        &resp(&[b"SUBSCRIBE", b"chan:1", b"other"]),
        b"*3\r\n$9\r\nsubscribe\r\n$6\r\nchan:1\r\n:1\r\n*3\r\n$9\r\nsubscribe\r\n$5\r\nother\r\n:2\r\n",
    );
    // Subscribing twice to one channel counts once.
    two.roundtrip(
        &resp(&[b"SUBSCRIBE", b"other"]),
        b"*3\r\n$9\r\nsubscribe\r\n$5\r\nother\r\n:2\r\n",
    );
    two.roundtrip(
        &resp(&[b"PSUBSCRIBE", b"chan:*"]),
        b"*3\r\n$10\r\npsubscribe\r\n$6\r\nchan:*\r\n:3\r\n",
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["PUBSUB", "CHANNELS"]).unwrap(),
        ["chan:1", "other"]
    );
    assert_eq!(
        run::<Vec<String>>(&mut c, &["PUBSUB", "CHANNELS", "ch*"]).unwrap(),
        ["chan:1"]
    );
    let numsub: Vec<redis::Value> =
        run(&mut c, &["PUBSUB", "NUMSUB", "chan:1", "other", "none"]).unwrap();
    assert_eq!(
        numsub,
        vec![
            redis::Value::BulkString(b"chan:1".to_vec()),
            redis::Value::Int(2),
            redis::Value::BulkString(b"other".to_vec()),
            redis::Value::Int(1),
            redis::Value::BulkString(b"none".to_vec()),
            redis::Value::Int(0),
        ]
    );
    assert_eq!(run::<i64>(&mut c, &["PUBSUB", "NUMPAT"]).unwrap(), 1);
    // Two channel subscribers plus one pattern subscriber.
    assert_eq!(run::<i64>(&mut c, &["PUBLISH", "chan:1", "x"]).unwrap(), 3);
    let list: String = run(&mut c, &["CLIENT", "LIST"]).unwrap();
    assert!(list.contains("flags=P"), "{list}");
    assert!(list.contains("sub=2 psub=1"), "{list}");
    // A subscriber that disconnects is forgotten.
    drop(two);
    wait_numsub(&mut c, "other", 0);
    assert_eq!(run::<i64>(&mut c, &["PUBSUB", "NUMPAT"]).unwrap(), 0);
    assert_eq!(run::<i64>(&mut c, &["PUBLISH", "chan:1", "y"]).unwrap(), 1);
    drop(one);
    wait_numsub(&mut c, "chan:1", 0);
    assert!(run::<Vec<String>>(&mut c, &["PUBSUB", "CHANNELS"])
        .unwrap()
        .is_empty());
}

/// A raw connection subscribed to `firehose`, which then never reads.
fn firehose_subscriber(s: &TestServer) -> Raw {
    let mut slow = s.raw();
    slow.roundtrip(
        &resp(&[b"SUBSCRIBE", b"firehose"]),
        b"*3\r\n$9\r\nsubscribe\r\n$8\r\nfirehose\r\n:1\r\n",
    );
    slow
}

#[test]
fn a_slow_subscriber_is_disconnected_at_its_output_limit() {
    let s = TestServer::start_with(&["--client-output-buffer-limit pubsub 256kb 0 0"]);
    let mut p = s.client();
    let mut slow = firehose_subscriber(&s);
    // It never reads again. The publisher is never held up: every PUBLISH
    // returns, first with the subscriber counted, then without it.
    let payload = "x".repeat(16 * 1024);
    let mut counts = Vec::new();
    for _ in 0..2000 {
        counts.push(run::<i64>(&mut p, &["PUBLISH", "firehose", &payload]).unwrap());
    }
    assert_eq!(counts[0], 1);
    assert_eq!(*counts.last().unwrap(), 0, "the subscriber was dropped");
    wait_numsub(&mut p, "firehose", 0);
    // What reaches the slow client is cut short and ends with EOF (or a
    // reset): far less than the 32 MiB published.
    let mut received = 0usize;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match slow.stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => received += n,
        }
    }
    assert!(received < 2000 * payload.len(), "{received} bytes");
    // The server is healthy.
    assert_eq!(run::<String>(&mut p, &["PING"]).unwrap(), "PONG");
}

#[test]
fn a_subscriber_over_the_soft_limit_is_closed_once_traffic_stops() {
    let s = TestServer::start_with(&["--client-output-buffer-limit pubsub 0 256kb 1"]);
    let mut p = s.client();
    // Kept open, never read.
    let _slow = firehose_subscriber(&s);
    // Publish until its queue is over the soft limit (the kernel's socket
    // buffers take the first megabytes), then stop: no later PUBLISH
    // checks it, its own connection must (Redis's cron does).
    let payload = "x".repeat(16 * 1024);
    let over = (0..4000).any(|_| {
        let _: i64 = run(&mut p, &["PUBLISH", "firehose", &payload]).unwrap();
        let list: String = run(&mut p, &["CLIENT", "LIST"]).unwrap();
        list.lines()
            .filter(|l| l.contains("flags=P"))
            .filter_map(|l| l.split_whitespace().find_map(|f| f.strip_prefix("omem=")))
            .any(|omem| omem.parse::<u64>().unwrap() > 300 * 1024)
    });
    assert!(over, "the queue never went over the soft limit");
    wait_numsub(&mut p, "firehose", 0);
}
