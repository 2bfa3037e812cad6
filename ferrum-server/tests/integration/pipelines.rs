//! Pipelines that clients write whole before reading any reply, as
//! redis-py, Jedis and go-redis do, and the output buffer limits that are
//! the only thing allowed to close such a client: every reply must arrive
//! byte for byte, however much waits, unless `client-output-buffer-limit`
//! says otherwise.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use crate::common::{resp, run, TestServer};

/// Sends `n` × (`GET big`, `ECHO <echo_len bytes>`) on one socket without
/// reading, `big` holding `value_len` bytes, then reads every reply and
/// checks it. Bounded by socket timeouts: a server that stops reading
/// fails the write with a message instead of hanging the suite.
fn write_all_then_read(s: &TestServer, n: usize, value_len: usize, echo_len: usize) {
    let mut c = s.client();
    let value = vec![b'v'; value_len];
    let _: () = redis::cmd("SET")
        .arg("big")
        .arg(&value)
        .query(&mut c)
        .unwrap();
    let mut stream = std::net::TcpStream::connect(s.addr).expect("connect");
    stream
        .set_write_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let echo: Vec<u8> = (0..echo_len).map(|i| b'a' + (i % 26) as u8).collect();
    let mut pair = resp(&[b"GET", b"big"]);
    pair.extend(resp(&[b"ECHO", &echo]));
    let batch: Vec<u8> = pair.repeat(64);
    let mut sent = 0;
    while sent < n {
        let k = (n - sent).min(64);
        stream
            .write_all(&batch[..k * pair.len()])
            .unwrap_or_else(|e| panic!("the server stopped reading after {sent} pairs: {e}"));
        sent += k;
    }
    let mut expected = format!("${value_len}\r\n").into_bytes();
    expected.extend_from_slice(&value);
    expected.extend_from_slice(format!("\r\n${echo_len}\r\n").as_bytes());
    expected.extend_from_slice(&echo);
    expected.extend_from_slice(b"\r\n");
    let mut reply = vec![0u8; expected.len()];
    for i in 0..n {
        stream
            .read_exact(&mut reply)
            .unwrap_or_else(|e| panic!("reply pair {i} of {n} did not arrive: {e}"));
        assert!(reply == expected, "reply pair {i} differs");
    }
    // Nothing more, and the connection is still up.
    stream.write_all(&resp(&[b"PING"])).unwrap();
    let mut pong = [0u8; 7];
    stream.read_exact(&mut pong).unwrap();
    assert_eq!(&pong, b"+PONG\r\n");
}

/// The raw cases: small, middling and large values beside 70 KB
/// echoes, about 100 MB each way for the first.
#[test]
fn a_pipeline_written_whole_before_reading_gets_every_reply() {
    let s = TestServer::start();
    write_all_then_read(&s, 1_500, 100, 70_000);
    write_all_then_read(&s, 200, 100_000, 70_000);
    write_all_then_read(&s, 5_000, 1_000, 70_000);
}

/// Many small replies: they are packed into blocks, not one chunk each.
#[test]
fn a_pipeline_of_small_commands_written_whole_gets_every_reply() {
    let s = TestServer::start();
    write_all_then_read(&s, 50_000, 10, 1_000);
}

/// redis-py's pattern through the `redis` crate: a non-transactional
/// pipeline of 40,000 commands, sent whole, then read.
#[test]
fn a_client_library_pipeline_of_40000_commands_completes() {
    let s = TestServer::start();
    let mut c = s.client();
    let big = vec![b'x'; 1000];
    let _: () = redis::cmd("SET")
        .arg("big")
        .arg(&big)
        .query(&mut c)
        .unwrap();
    let mut p = redis::pipe();
    for i in 0..20_000 {
        p.cmd("SET").arg(format!("k{i}")).arg(vec![b'v'; 1000]);
        p.cmd("GET").arg("big");
    }
    let replies: Vec<redis::Value> = p.query(&mut c).expect("every reply");
    assert_eq!(replies.len(), 40_000);
    for pair in replies.chunks(2) {
        assert_eq!(pair[0], redis::Value::Okay);
        assert_eq!(pair[1], redis::Value::BulkString(big.clone()));
    }
    assert_eq!(run::<i64>(&mut c, &["DBSIZE"]).unwrap(), 20_001);
}

/// Whether the client named `name` is still connected.
fn connected(c: &mut redis::Connection, name: &str) -> bool {
    let list: String = run(c, &["CLIENT", "LIST"]).unwrap();
    list.lines().any(|l| l.contains(&format!(" name={name} ")))
}

/// A raw client named `name` that sends `n` × `GET big` and reads nothing.
fn hog(s: &TestServer, name: &str, n: usize) -> std::net::TcpStream {
    let mut stream = std::net::TcpStream::connect(s.addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .set_write_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .write_all(&resp(&[b"CLIENT", b"SETNAME", name.as_bytes()]))
        .unwrap();
    let mut ok = [0u8; 5];
    stream.read_exact(&mut ok).unwrap();
    assert_eq!(&ok, b"+OK\r\n");
    let batch = resp(&[b"GET", b"big"]).repeat(n);
    // The server may close it while it writes: that is the point.
    let _ = stream.write_all(&batch);
    stream
}

/// Polls until `name` is gone, for at most `limit`; how long it took.
fn wait_gone(c: &mut redis::Connection, name: &str, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if !connected(c, name) {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// A server with `client-output-buffer-limit` at `limit`, a client, and
/// `big` holding the 100 KB value returned.
fn with_big_value(limit: &str) -> (TestServer, redis::Connection, Vec<u8>) {
    let s = TestServer::start_with(&["--client-output-buffer-limit", limit]);
    let mut c = s.client();
    let value = vec![b'v'; 100_000];
    let _: () = redis::cmd("SET")
        .arg("big")
        .arg(&value)
        .query(&mut c)
        .unwrap();
    (s, c, value)
}

/// The probe's case: `normal 8mb 4mb 10`, and a client holding more than
/// 8 MiB of unread replies is closed; one that reads is not.
#[test]
fn the_normal_hard_limit_closes_a_client_with_more_unread() {
    let (s, mut c, value) = with_big_value("normal 8mb 4mb 10");
    // 30 MB of replies: more than the kernel's buffers and the limit.
    let stream = hog(&s, "hog", 300);
    assert!(
        wait_gone(&mut c, "hog", Duration::from_secs(20)).is_some(),
        "the client over the hard limit is still connected"
    );
    let got = read_to_end_of(stream, usize::MAX);
    assert!(got < 300 * 100_000, "{got} bytes arrived");
    // A client that reads as it goes gets the same 30 MB.
    for _ in 0..300 {
        let got: Vec<u8> = redis::cmd("GET").arg("big").query(&mut c).unwrap();
        assert_eq!(got.len(), value.len());
    }
}

/// `normal 0 2mb 1`: over the soft limit for more than a second closes
/// the client, without a command or a write to check it.
#[test]
fn the_normal_soft_limit_closes_a_client_over_it_for_its_seconds() {
    let (s, mut c, _) = with_big_value("normal 0 2mb 1");
    let stream = hog(&s, "slow", 300);
    let took = wait_gone(&mut c, "slow", Duration::from_secs(20))
        .expect("the client over the soft limit is still connected");
    // Not at once: the soft limit allows its seconds first.
    assert!(took >= Duration::from_millis(500), "closed after {took:?}");
    drop(stream);
    // With the limit off, nothing closes it.
    let _: () = run(
        &mut c,
        &[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "normal 0 0 0",
        ],
    )
    .unwrap();
    let stream = hog(&s, "unlimited", 300);
    assert!(wait_gone(&mut c, "unlimited", Duration::from_secs(3)).is_none());
    let replies = 300 * "$100000\r\n".len() + 300 * (100_000 + 2);
    assert_eq!(read_to_end_of(stream, replies), replies);
}

/// Reads `n` bytes, or until EOF; how many came.
fn read_to_end_of(mut stream: std::net::TcpStream, n: usize) -> usize {
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0;
    while total < n {
        match stream.read(&mut buf[..(n - total).min(1 << 16)]) {
            Ok(0) | Err(_) => break,
            Ok(k) => total += k,
        }
    }
    total
}
