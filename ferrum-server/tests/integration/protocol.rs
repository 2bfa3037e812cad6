//! Protocol edge cases over raw sockets: pipelining, inline commands,
//! protocol errors, partial and hostile input.

use crate::common::{resp, run, TestServer};

#[test]
fn pipeline_replies_arrive_in_order() {
    let s = TestServer::start();
    let mut raw = s.raw();
    let mut batch = Vec::new();
    let mut expected = Vec::new();
    for i in 0..16 {
        let v = format!("v{i}");
        batch.extend(resp(&[b"SET", format!("k{i}").as_bytes(), v.as_bytes()]));
        batch.extend(resp(&[b"GET", format!("k{i}").as_bytes()]));
        expected.extend_from_slice(b"+OK\r\n");
        expected.extend(format!("${}\r\n{v}\r\n", v.len()).into_bytes());
    }
    raw.roundtrip(&batch, &expected);
}

#[test]
fn commands_split_across_reads_still_run() {
    let s = TestServer::start();
    let mut raw = s.raw();
    let req = resp(&[b"SET", b"key", b"a value split anywhere"]);
    for chunk in req.chunks(3) {
        raw.send(chunk);
        std::thread::yield_now();
    }
    assert_eq!(raw.read_exact_len(5), b"+OK\r\n");
}

#[test]
fn inline_commands_work_like_telnet() {
    let s = TestServer::start();
    let mut raw = s.raw();
    raw.roundtrip(b"PING\r\n", b"+PONG\r\n");
    raw.roundtrip(b"SET greeting \"hello world\"\n", b"+OK\r\n");
    raw.roundtrip(b"GET greeting\r\n", b"$11\r\nhello world\r\n");
    raw.roundtrip(b"\r\nPING\r\n", b"+PONG\r\n");
}

#[test]
fn unknown_commands_and_arity_keep_the_connection() {
    let s = TestServer::start();
    let mut raw = s.raw();
    raw.roundtrip(
        &resp(&[b"FOO", b"bar", b"baz"]),
        b"-ERR unknown command 'FOO', with args beginning with: 'bar' 'baz' \r\n",
    );
    raw.roundtrip(
        b"GET\r\n",
        b"-ERR wrong number of arguments for 'get' command\r\n",
    );
    raw.roundtrip(b"PING\r\n", b"+PONG\r\n");
}

#[test]
fn client_bytes_in_errors_cannot_forge_replies() {
    // Redis 7.0.15 replies to these exactly so (raw socket): every CR and LF
    // of the name and arguments quoted back becomes a space.
    let s = TestServer::start();
    let mut raw = s.raw();
    raw.roundtrip(
        b"*1\r\n$9\r\nFOO\r\n:666\r\n",
        b"-ERR unknown command 'FOO  :666', with args beginning with: \r\n",
    );
    raw.roundtrip(
        b"*2\r\n$4\r\nFOOx\r\n$6\r\na\r\nb\nc\r\n",
        b"-ERR unknown command 'FOOx', with args beginning with: 'a  b c' \r\n",
    );
    // The replies that follow are still in step.
    raw.roundtrip(b"PING\r\n", b"+PONG\r\n");
}

#[test]
fn protocol_errors_reply_then_close() {
    let s = TestServer::start();
    for (input, reply) in [
        (
            &b"*1\r\n+PING\r\n"[..],
            &b"-ERR Protocol error: expected '$', got '+'\r\n"[..],
        ),
        (
            b"*abc\r\n",
            b"-ERR Protocol error: invalid multibulk length\r\n",
        ),
        (
            b"*1\r\n$-5\r\n",
            b"-ERR Protocol error: invalid bulk length\r\n",
        ),
        (
            b"*1\r\n$999999999999\r\n",
            b"-ERR Protocol error: invalid bulk length\r\n",
        ),
        (
            b"SET a \"unterminated\r\n",
            b"-ERR Protocol error: unbalanced quotes in request\r\n",
        ),
    ] {
        let mut raw = s.raw();
        raw.roundtrip(input, reply);
        assert!(
            raw.is_closed(),
            "connection stays open after {:?}",
            String::from_utf8_lossy(input)
        );
    }
    // The server is fine for everyone else.
    let mut c = s.client();
    assert_eq!(run::<String>(&mut c, &["PING"]).unwrap(), "PONG");
}

#[test]
fn garbage_never_panics_the_server() {
    let s = TestServer::start();
    // A deterministic stream of bytes drawn from a small linear congruential
    // generator, fed in odd-sized pieces to many connections.
    let mut state: u64 = 42;
    for _ in 0..50 {
        let mut raw = s.raw();
        let mut junk = Vec::new();
        for _ in 0..512 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let alphabet = b"*$+-:\r\n0123456789-abcSETGET \"'\\x";
            junk.push(alphabet[(state >> 33) as usize % alphabet.len()]);
        }
        let _ = std::io::Write::write_all(&mut raw.stream, &junk);
    }
    let mut c = s.client();
    assert_eq!(run::<String>(&mut c, &["PING"]).unwrap(), "PONG");
}
