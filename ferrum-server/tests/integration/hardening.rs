//! Hostile and extreme input: numeric edges of count arguments, limits
//! before `AUTH`, and output buffer limits. Every expected reply here is
//! what Redis 7.0.15 answered to the same command (redis-cli or a raw
//! socket against Debian's redis-server).

use redis::Value;

use crate::common::{err, info_fields, resp, run, sorted, TestServer};

const MAX: &str = "9223372036854775807";
const MIN: &str = "-9223372036854775808";

#[test]
fn random_counts_take_the_whole_i64_range() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["SADD", "s", "a", "b", "c"]).unwrap();
    let _: () = run(&mut c, &["HSET", "h", "f1", "v1", "f2", "v2"]).unwrap();
    let _: () = run(&mut c, &["ZADD", "z", "1", "a", "2", "b"]).unwrap();
    // The largest count returns everything, once.
    let all: Vec<String> = run(&mut c, &["SRANDMEMBER", "s", MAX]).unwrap();
    assert_eq!(sorted(all), ["a", "b", "c"]);
    let all: Vec<String> = run(&mut c, &["HRANDFIELD", "h", MAX]).unwrap();
    assert_eq!(sorted(all), ["f1", "f2"]);
    let all: Vec<String> = run(&mut c, &["ZRANDMEMBER", "z", MAX]).unwrap();
    assert_eq!(sorted(all), ["a", "b"]);
    let range = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807";
    for cmd in ["SRANDMEMBER", "HRANDFIELD", "ZRANDMEMBER"] {
        assert_eq!(err(&mut c, &[cmd, "nokey", MIN]), range, "{cmd}");
        assert_eq!(
            err(&mut c, &[cmd, "s", "9223372036854775808"]),
            "ERR value is not an integer or out of range"
        );
    }
    // With values or scores every pick is two replies: half the range.
    assert_eq!(
        err(&mut c, &["HRANDFIELD", "h", MAX, "WITHVALUES"]),
        "ERR value is out of range"
    );
    assert_eq!(
        err(
            &mut c,
            &["ZRANDMEMBER", "z", "-4611686018427387904", "WITHSCORES"]
        ),
        "ERR value is out of range"
    );
    assert_eq!(
        err(&mut c, &["SRANDMEMBER", "s", "1", "x"]),
        "ERR syntax error"
    );
}

#[test]
fn repeated_picks_too_many_to_send_are_refused_or_close_a_limited_client() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["SADD", "s", "a"]).unwrap();
    // Missing key: nothing to pick, whatever the count.
    let none: Vec<String> = run(&mut c, &["SRANDMEMBER", "nokey", "-9223372036854775807"]).unwrap();
    assert!(none.is_empty());
    // Redis would stream picks until its output limit closed the client,
    // or with none until its memory ran out; FerrumKV refuses to build a
    // reply that could never be sent: with no limit, which never closes a
    // client, by an error.
    let mut raw = s.raw();
    raw.send(&resp(&[b"SRANDMEMBER", b"s", b"-9223372036854775807"]));
    let error =
        b"-ERR reply too large: the picks would take more than proto-max-bulk-len bytes\r\n";
    assert_eq!(raw.read_exact_len(error.len()), error);
    raw.roundtrip(&resp(&[b"PING"]), b"+PONG\r\n");
    let mut raw = s.raw();
    let _ = run::<()>(
        &mut c,
        &[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "normal 1000000 0 0",
        ],
    );
    let _: () = run(&mut c, &["HSET", "h", "a", "b"]).unwrap();
    raw.send(&resp(&[b"HRANDFIELD", b"h", b"-999999999"]));
    assert!(raw.is_closed());
    // A count the limit allows is served.
    let picks: Vec<String> = run(&mut c, &["HRANDFIELD", "h", "-1000"]).unwrap();
    assert_eq!(picks.len(), 1000);
}

#[test]
fn range_and_count_arguments_at_the_edges() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["RPUSH", "l", "a", "b", "c", "a"]).unwrap();
    let _: () = run(&mut c, &["SET", "str", "hello"]).unwrap();
    let lrange: Vec<String> = run(&mut c, &["LRANGE", "l", MIN, MAX]).unwrap();
    assert_eq!(lrange, ["a", "b", "c", "a"]);
    // LPOS: RANK i64::MIN searches from the tail and never stops at COUNT
    // (Redis negates it into itself); COUNT and MAXLEN say "negative" for
    // anything that is no non-negative integer.
    assert_eq!(
        run::<i64>(&mut c, &["LPOS", "l", "a", "RANK", MIN]).unwrap(),
        3
    );
    let all: Vec<i64> = run(&mut c, &["LPOS", "l", "a", "RANK", MIN, "COUNT", "1"]).unwrap();
    assert_eq!(all, [3, 0]);
    assert_eq!(
        err(&mut c, &["LPOS", "l", "a", "COUNT", "9223372036854775808"]),
        "ERR COUNT can't be negative"
    );
    assert_eq!(
        err(&mut c, &["LPOS", "l", "a", "MAXLEN", "x"]),
        "ERR MAXLEN can't be negative"
    );
    // SCAN: any COUNT; cursors read as C's strtoul reads them.
    let Value::Array(reply) = run::<Value>(&mut c, &["SCAN", "0", "COUNT", MAX]).unwrap() else {
        panic!("SCAN reply is an array");
    };
    assert_eq!(reply[0], Value::BulkString(b"0".to_vec()));
    let Value::Array(reply) = run::<Value>(&mut c, &["SCAN", "-1"]).unwrap() else {
        panic!("SCAN reply is an array");
    };
    assert_eq!(reply[0], Value::BulkString(b"0".to_vec()));
    assert_eq!(
        err(&mut c, &["SCAN", "18446744073709551616"]),
        "ERR invalid cursor"
    );
    // GETRANGE clamps a still-negative end to 0.
    assert_eq!(
        run::<String>(&mut c, &["GETRANGE", "str", "0", MIN]).unwrap(),
        "h"
    );
    assert_eq!(
        run::<String>(&mut c, &["GETRANGE", "str", "-100", "-100"]).unwrap(),
        "h"
    );
    // Database indexes are C ints first.
    let int_range = "ERR value is out of range, value must between -2147483648 and 2147483647";
    assert_eq!(err(&mut c, &["SELECT", MAX]), int_range);
    assert_eq!(err(&mut c, &["MOVE", "str", MIN]), int_range);
    assert_eq!(err(&mut c, &["COPY", "str", "x", "DB", MAX]), int_range);
    assert_eq!(
        err(&mut c, &["SELECT", "16"]),
        "ERR DB index is out of range"
    );
    assert_eq!(
        err(&mut c, &["SWAPDB", "0", "99999999999"]),
        "ERR invalid second DB index"
    );
}

#[test]
fn getex_looks_the_key_up_before_reading_the_time() {
    let s = TestServer::start();
    let mut c = s.client();
    let none: Option<String> = run(&mut c, &["GETEX", "nokey", "EX", MIN]).unwrap();
    assert_eq!(none, None);
    let _: () = run(&mut c, &["SET", "k", "v"]).unwrap();
    assert_eq!(
        err(&mut c, &["GETEX", "k", "EX", "0"]),
        "ERR invalid expire time in 'getex' command"
    );
    assert_eq!(
        err(&mut c, &["GETEX", "k", "EX", "x"]),
        "ERR value is not an integer or out of range"
    );
    assert_eq!(err(&mut c, &["GETEX", "k", "BAD", "1"]), "ERR syntax error");
}

#[test]
fn xclaim_negative_retrycount_counts_a_delivery() {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(&mut c, &["XADD", "x", "1-1", "f", "v"]).unwrap();
    let _: () = run(&mut c, &["XGROUP", "CREATE", "x", "g", "0"]).unwrap();
    let _: Value = run(
        &mut c,
        &["XREADGROUP", "GROUP", "g", "c", "STREAMS", "x", ">"],
    )
    .unwrap();
    let _: Value = run(
        &mut c,
        &["XCLAIM", "x", "g", "c", "0", "1-1", "RETRYCOUNT", MIN],
    )
    .unwrap();
    let Value::Array(pending) =
        run::<Value>(&mut c, &["XPENDING", "x", "g", "-", "+", "10"]).unwrap()
    else {
        panic!("XPENDING reply is an array");
    };
    let Value::Array(entry) = &pending[0] else {
        panic!("an entry is an array");
    };
    assert_eq!(entry[3], Value::Int(2));
}

/// A server with a password, and a raw connection that has not sent it.
fn locked() -> TestServer {
    TestServer::start_with(&["--requirepass", "pw"])
}

#[test]
fn before_auth_large_requests_are_refused_and_closed() {
    let s = locked();
    let ten: Vec<&[u8]> = vec![b"x"; 10];
    let mut raw = s.raw();
    raw.roundtrip(
        &resp(&ten),
        b"-ERR unknown command 'x', with args beginning with: 'x' 'x' 'x' 'x' 'x' 'x' 'x' 'x' 'x' \r\n",
    );
    raw.roundtrip(
        b"*11\r\n",
        b"-ERR Protocol error: unauthenticated multibulk length\r\n",
    );
    assert!(raw.is_closed());
    let mut raw = s.raw();
    raw.roundtrip(
        b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$16385\r\n",
        b"-ERR Protocol error: unauthenticated bulk length\r\n",
    );
    assert!(raw.is_closed());
    // 16 KiB exactly is still read (and refused for want of AUTH).
    let mut raw = s.raw();
    let value = vec![b'v'; 16384];
    raw.roundtrip(
        &resp(&[b"SET", b"k", &value]),
        b"-NOAUTH Authentication required.\r\n",
    );
}

#[test]
fn after_auth_and_until_reset_requests_are_not_limited() {
    let s = locked();
    let eleven: Vec<&[u8]> = [&b"RPUSH"[..], b"l"]
        .into_iter()
        .chain(std::iter::repeat_n(&b"x"[..], 9))
        .collect();
    let mut raw = s.raw();
    // A failed AUTH changes nothing.
    raw.roundtrip(
        &resp(&[b"AUTH", b"bad"]),
        b"-WRONGPASS invalid username-password pair or user is disabled.\r\n",
    );
    raw.roundtrip(&resp(&[b"AUTH", b"pw"]), b"+OK\r\n");
    raw.roundtrip(&resp(&eleven), b":9\r\n");
    raw.roundtrip(&resp(&[b"RESET"]), b"+RESET\r\n");
    raw.roundtrip(
        &resp(&eleven),
        b"-ERR Protocol error: unauthenticated multibulk length\r\n",
    );
    assert!(raw.is_closed());
    // Pipelined behind AUTH, in the same read, it is already allowed.
    let mut raw = s.raw();
    let mut batch = resp(&[b"AUTH", b"pw"]);
    batch.extend(resp(&eleven));
    raw.roundtrip(&batch, b"+OK\r\n:18\r\n");
}

/// Sets `client-output-buffer-limit` on a fresh server.
fn limited(limit: &str) -> TestServer {
    let s = TestServer::start();
    let mut c = s.client();
    let _: () = run(
        &mut c,
        &["CONFIG", "SET", "client-output-buffer-limit", limit],
    )
    .unwrap();
    s
}

/// `big`: 150 items of 1,000 bytes, a 150 KB `LRANGE big 0 -1` reply.
fn fill_big_list(c: &mut redis::Connection) {
    let item = "x".repeat(1000);
    let items: Vec<&str> = std::iter::repeat_n(item.as_str(), 150).collect();
    let _: () = run(c, &[&["RPUSH", "big"][..], &items].concat()).unwrap();
}

#[test]
fn a_reply_over_the_normal_hard_limit_closes_the_client_unanswered() {
    let s = limited("normal 100000 0 0");
    let mut c = s.client();
    fill_big_list(&mut c);
    let mut raw = s.raw();
    raw.send(&resp(&[b"LRANGE", b"big", b"0", b"-1"]));
    // Nothing of the 150 KB reply, not even its header, is written.
    assert_eq!(raw.read_exact_len(1), b"");
    // Under the limit is fine, and the limit can be lifted again.
    let some: Vec<String> = run(&mut c, &["LRANGE", "big", "0", "49"]).unwrap();
    assert_eq!(some.len(), 50);
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
    let all: Vec<String> = run(&mut c, &["LRANGE", "big", "0", "-1"]).unwrap();
    assert_eq!(all.len(), 150);
}

#[test]
fn a_pipeline_whose_replies_break_the_limit_gets_none_of_them() {
    let s = limited("normal 100000 0 0");
    let mut c = s.client();
    let _: () = run(&mut c, &["SET", "bigkey", &"x".repeat(10_000)]).unwrap();
    let mut raw = s.raw();
    let mut batch = Vec::new();
    for _ in 0..15 {
        batch.extend(resp(&[b"PING"]));
        batch.extend(resp(&[b"GET", b"bigkey"]));
    }
    raw.send(&batch);
    assert_eq!(raw.read_exact_len(1), b"");
    // Other clients are served meanwhile.
    assert_eq!(run::<String>(&mut c, &["PING"]).unwrap(), "PONG");
}

#[test]
fn a_transaction_runs_to_the_end_before_its_client_is_closed() {
    let s = limited("normal 100000 0 0");
    let mut c = s.client();
    fill_big_list(&mut c);
    let mut raw = s.raw();
    let mut batch = resp(&[b"MULTI"]);
    batch.extend(resp(&[b"SET", b"k2", b"v2"]));
    batch.extend(resp(&[b"LRANGE", b"big", b"0", b"-1"]));
    batch.extend(resp(&[b"SET", b"k3", b"v3"]));
    batch.extend(resp(&[b"EXEC"]));
    raw.send(&batch);
    assert!(raw.is_closed());
    assert_eq!(run::<String>(&mut c, &["GET", "k2"]).unwrap(), "v2");
    assert_eq!(run::<String>(&mut c, &["GET", "k3"]).unwrap(), "v3");
}

#[test]
fn client_list_reports_output_memory() {
    let s = TestServer::start();
    let mut c = s.client();
    let list: String = run(&mut c, &["CLIENT", "LIST"]).unwrap();
    let field = |name: &str| -> u64 {
        list.split_whitespace()
            .find_map(|f| f.strip_prefix(name))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name} in {list}"))
    };
    // Nothing unwritten; the connection's own buffers and state.
    assert_eq!(field("omem="), 0);
    assert!(field("tot-mem=") >= 16 * 1024, "{list}");
    let info: String = run(&mut c, &["INFO", "memory"]).unwrap();
    let clients: u64 = info
        .lines()
        .find_map(|l| l.strip_prefix("mem_clients_normal:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("mem_clients_normal");
    // The same connection's buffers, as of its last read.
    assert!(clients >= 16 * 1024, "{info}");
}

/// With Redis's default `normal 0 0 0`, a client that sends and does not
/// read is still read from, and its replies wait in its output buffer,
/// counted in `omem` and `tot-mem`, as Redis buffers them. Nothing is lost:
/// reading later gets every reply.
#[test]
fn a_client_that_does_not_read_is_read_on_and_its_replies_wait() {
    let s = TestServer::start();
    let mut c = s.client();
    let value = "v".repeat(200_000);
    let _: () = run(&mut c, &["SET", "k", &value]).unwrap();
    let mut raw = s.raw();
    raw.send(&resp(&[b"CLIENT", b"SETNAME", b"reader"]));
    assert_eq!(raw.read_exact_len(5), b"+OK\r\n");
    let requests = 100;
    let mut batch = Vec::new();
    for _ in 0..requests {
        batch.extend(resp(&[b"GET", b"k"]));
    }
    batch.extend(resp(&[b"SET", b"done", b"1"]));
    raw.send(&batch);
    let reader_field = |c: &mut redis::Connection, name: &str| -> u64 {
        let list: String = run(c, &["CLIENT", "LIST"]).unwrap();
        let line = list.lines().find(|l| l.contains(" name=reader ")).unwrap();
        line.split(' ')
            .find_map(|f| f.strip_prefix(name))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{name} in {line}"))
    };
    // 20 MB of replies: the socket takes a few, the rest wait for it, and
    // the command after them ran.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while run::<Option<String>>(&mut c, &["GET", "done"])
        .unwrap()
        .is_none()
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(run::<String>(&mut c, &["GET", "done"]).unwrap(), "1");
    // The connection publishes what waits once it has tried to write it.
    while reader_field(&mut c, "omem=") < 5_000_000 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let omem = reader_field(&mut c, "omem=");
    let tot = reader_field(&mut c, "tot-mem=");
    assert!(omem > 5_000_000, "omem={omem}");
    assert!(tot >= omem && tot < omem + 1_000_000, "tot-mem={tot}");
    let used: u64 = info_fields(&mut c, "memory")["mem_clients_normal"]
        .parse()
        .unwrap();
    assert!(used >= omem, "mem_clients_normal={used}");
    let reply_len = format!("${}\r\n{value}\r\n", value.len()).len();
    let got = raw.read_exact_len(reply_len * requests + 5);
    assert_eq!(got.len(), reply_len * requests + 5, "every reply arrives");
    assert!(got.ends_with(b"+OK\r\n"));
}
