//! A random-command fuzzer over the whole command table: commands (and
//! subcommands) drawn from `COMMAND`'s own reply, with arities near the
//! declared ones and edge-case arguments (edge integers and floats, empty,
//! CR LF, NUL, option words, 70 KB strings, keys of every type), pipelined
//! in batches of 50 as a real client does, reading after each batch. Every
//! reply must be one valid RESP frame, one per command, and the
//! connection must stay up to the end.
//!
//! Bounded by a seed and a command count, not by time:
//! `FERRUM_FUZZ_SEED` and `FERRUM_FUZZ_COMMANDS` (default 42 and 20,000;
//! the soak is 4,000,000) replay or lengthen a run, and
//! `FERRUM_FUZZ_ADDR` (`127.0.0.1:PORT`) points it at a running server (a
//! release build, or redis-server to compare) instead of one it starts.
//! It runs `FLUSHALL`: point it only at a throwaway server.

use std::io::{Read, Write};
use std::time::Duration;

use bytes::BytesMut;
use ferrum_proto::{Frame, Limits, RespCodec};
use tokio_util::codec::Decoder;

use crate::common::{resp, TestServer};

/// Commands left out, and why: they end or hand over the connection
/// (`QUIT`, `SHUTDOWN`, `MONITOR`, `SYNC`, `PSYNC`, the `SUBSCRIBE`
/// family, whose replies are not one per command), wait by design (the
/// blocking commands, `WAIT`), reach other hosts (`MIGRATE`, `REPLICAOF`),
/// write files (`SAVE`, `BGSAVE`, `BGREWRITEAOF`) or change the server
/// under the fuzzer (`DEBUG`; most of `CONFIG`, `CLIENT` and `ACL`, whose
/// safe subcommands are kept below).
const LEFT_OUT: &[&str] = &[
    "quit",
    "shutdown",
    "monitor",
    "sync",
    "psync",
    "subscribe",
    "psubscribe",
    "ssubscribe",
    "unsubscribe",
    "punsubscribe",
    "sunsubscribe",
    "blpop",
    "brpop",
    "brpoplpush",
    "blmove",
    "blmpop",
    "bzpopmin",
    "bzpopmax",
    "bzmpop",
    "wait",
    "waitaof",
    "migrate",
    "replicaof",
    "slaveof",
    "failover",
    "save",
    "bgsave",
    "bgrewriteaof",
    "debug",
];

/// The subcommands of `CONFIG`, `CLIENT` and `ACL` that only read.
const SAFE_SUBCOMMANDS: &[&str] = &[
    "config|get",
    "config|help",
    "client|id",
    "client|info",
    "client|list",
    "client|getname",
    "client|help",
    "client|trackinginfo",
    "client|getredir",
    "acl|whoami",
    "acl|cat",
    "acl|list",
    "acl|users",
    "acl|getuser",
    "acl|genpass",
    "acl|log",
    "acl|dryrun",
    "acl|help",
];

/// One command to draw: its name words and `COMMAND`'s arity (counting
/// the name words).
struct Spec {
    words: Vec<Vec<u8>>,
    arity: i64,
}

/// SplitMix64: small, seedable, good enough to draw from.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Keys, one of each type after [`SETUP`], and some that are absent.
const KEYS: &[&str] = &[
    "str", "int", "list", "hash", "set", "zset", "stream", "hll", "geo", "missing", "{str}2",
];

/// Recreates a key of every type (`FLUSHALL` or `DEL` may have taken them).
const SETUP: &[&[&str]] = &[
    &["SET", "str", "hello"],
    &["SET", "int", "42"],
    &["RPUSH", "list", "a", "b", "c", "1"],
    &["HSET", "hash", "f", "v", "n", "1"],
    &["SADD", "set", "a", "b", "1"],
    &["ZADD", "zset", "1", "a", "2", "b"],
    &["XADD", "stream", "*", "f", "v"],
    &["PFADD", "hll", "a", "b"],
    &["GEOADD", "geo", "13.361389", "38.115556", "Palermo"],
];

/// Integers at the edges of every range a command parses, and small ones.
/// Nothing between a million and 2^32, where `SETBIT` and `SETRANGE` would
/// legitimately build strings of hundreds of megabytes.
const INTEGERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "10",
    "100",
    "-100",
    "9223372036854775807",
    "-9223372036854775808",
    "-9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "4294967296",
    "-4294967296",
    "007",
    "+1",
    " 1",
];

const FLOATS: &[&str] = &[
    "0.0", "-0.0", "3.5", "-2.5", "1e308", "-1e308", "1e-308", "inf", "-inf", "+inf", "nan", "1e",
    ".5", "0x10",
];

const WORDS: &[&str] = &[
    "NX",
    "XX",
    "GT",
    "LT",
    "CH",
    "INCR",
    "EX",
    "PX",
    "EXAT",
    "PXAT",
    "KEEPTTL",
    "GET",
    "WITHSCORES",
    "WITHVALUES",
    "LIMIT",
    "COUNT",
    "MATCH",
    "TYPE",
    "REV",
    "BYSCORE",
    "BYLEX",
    "STORE",
    "ALPHA",
    "ASC",
    "DESC",
    "BY",
    "LEN",
    "IDX",
    "MINMATCHLEN",
    "WITHMATCHLEN",
    "MAXLEN",
    "MINID",
    "NOMKSTREAM",
    "STREAMS",
    "GROUP",
    "JUSTID",
    "FORCE",
    "IDLE",
    "RETRYCOUNT",
    "AGGREGATE",
    "WEIGHTS",
    "SUM",
    "MIN",
    "MAX",
    "LEFT",
    "RIGHT",
    "BEFORE",
    "AFTER",
    "FROMMEMBER",
    "FROMLONLAT",
    "BYRADIUS",
    "BYBOX",
    "WITHCOORD",
    "WITHDIST",
    "WITHHASH",
    "ANY",
    "m",
    "km",
    "ASYNC",
    "SYNC",
    "OVERFLOW",
    "WRAP",
    "SAT",
    "FAIL",
    "u8",
    "i64",
    "#0",
    "REPLACE",
    "ABSTTL",
    "FREQ",
    "*",
    "$",
    ">",
    "-",
    "+",
    "[a",
    "(1",
    "0-1",
];

const ODD: &[&[u8]] = &[
    b"",
    b"\r\n",
    b"\x00",
    b"a\r\nb",
    b"\xff\xfe",
    b"\"",
    b"'",
    b" ",
];

/// One argument.
fn arg(rng: &mut Rng) -> Vec<u8> {
    match rng.below(100) {
        0..=39 => rng.pick(KEYS).as_bytes().to_vec(),
        40..=64 => rng.pick(INTEGERS).as_bytes().to_vec(),
        65..=74 => rng.pick(FLOATS).as_bytes().to_vec(),
        75..=89 => rng.pick(WORDS).as_bytes().to_vec(),
        90..=98 => rng.pick(ODD).to_vec(),
        _ => vec![b'x'; 70_000],
    }
}

/// Every command (and container subcommand) `COMMAND` lists, less
/// [`LEFT_OUT`].
fn specs(raw: &mut std::net::TcpStream) -> Vec<Spec> {
    raw.write_all(&resp(&[b"COMMAND"])).unwrap();
    let Frame::Array(entries) = read_replies(raw, 1).remove(0) else {
        panic!("COMMAND is not an array");
    };
    let text = |f: &Frame| match f {
        Frame::Bulk(b) | Frame::Simple(b) => String::from_utf8_lossy(b).to_lowercase(),
        other => panic!("a command name: {other:?}"),
    };
    let int = |f: &Frame| match f {
        Frame::Integer(i) => *i,
        other => panic!("an arity: {other:?}"),
    };
    let mut out = Vec::new();
    for entry in &entries {
        let Frame::Array(fields) = entry else {
            panic!("a COMMAND entry: {entry:?}")
        };
        let name = text(&fields[0]);
        if LEFT_OUT.contains(&name.as_str()) {
            continue;
        }
        let subs = match fields.get(9) {
            Some(Frame::Array(subs)) if !subs.is_empty() => subs,
            _ => {
                if !["config", "client", "acl"].contains(&name.as_str()) {
                    out.push(Spec {
                        words: vec![name.into_bytes()],
                        arity: int(&fields[1]),
                    });
                }
                continue;
            }
        };
        for sub in subs {
            let Frame::Array(sf) = sub else { continue };
            let full = text(&sf[0]);
            if ["config", "client", "acl"].contains(&name.as_str())
                && !SAFE_SUBCOMMANDS.contains(&full.as_str())
            {
                continue;
            }
            let words = full.split('|').map(|w| w.as_bytes().to_vec()).collect();
            out.push(Spec {
                words,
                arity: int(&sf[1]),
            });
        }
    }
    out
}

/// A command near `spec`'s arity: exact or at least it, and now and then
/// one argument short or over.
fn command(rng: &mut Rng, spec: &Spec) -> Vec<Vec<u8>> {
    let least = spec.arity.unsigned_abs() as usize;
    let mut n = if spec.arity < 0 {
        least + rng.below(5)
    } else {
        least
    };
    match rng.below(20) {
        0 => n = n.saturating_sub(1).max(spec.words.len()),
        1 => n += 1,
        _ => {}
    }
    let mut c = spec.words.clone();
    while c.len() < n {
        c.push(arg(rng));
    }
    c
}

/// Reads exactly `n` replies; panics on EOF, a protocol error or leftovers.
fn read_replies(stream: &mut std::net::TcpStream, n: usize) -> Vec<Frame> {
    let mut codec = RespCodec::client(Limits::default());
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    while out.len() < n {
        match codec.decode(&mut buf) {
            Ok(Some(frame)) => out.push(frame),
            Ok(None) => {
                let got = stream
                    .read(&mut chunk)
                    .unwrap_or_else(|e| panic!("reply {} of {n} did not arrive: {e}", out.len()));
                assert!(got > 0, "server closed after {} of {n} replies", out.len());
                buf.extend_from_slice(&chunk[..got]);
            }
            Err(e) => panic!("reply {} of {n} is not valid RESP: {e}", out.len()),
        }
    }
    assert!(buf.is_empty(), "bytes after the last reply: {buf:?}");
    out
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn random_commands_from_the_command_table_never_break_the_connection() {
    let seed = env_or("FERRUM_FUZZ_SEED", 42);
    let total = env_or("FERRUM_FUZZ_COMMANDS", 20_000) as usize;
    let external = std::env::var("FERRUM_FUZZ_ADDR").ok();
    let server = external.is_none().then(TestServer::start);
    let addr = match (&external, &server) {
        (Some(a), _) => a.parse().expect("FERRUM_FUZZ_ADDR is host:port"),
        (None, Some(s)) => s.addr,
        (None, None) => unreachable!("a server was started"),
    };
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    stream
        .set_write_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let specs = specs(&mut stream);
    assert!(specs.len() > 200, "{} commands", specs.len());
    let mut rng = Rng(seed);
    let mut sent = 0;
    while sent < total {
        let mut batch = Vec::new();
        let mut shown = Vec::new();
        let mut count = 0;
        if sent % 1000 == 0 {
            // Out of any transaction and subscribed or RESP3 state, with a
            // key of every type in database 0.
            batch.extend(resp(&[b"RESET"]));
            count += 1;
            for c in SETUP {
                let args: Vec<&[u8]> = c.iter().map(|a| a.as_bytes()).collect();
                batch.extend(resp(&args));
                count += 1;
            }
        }
        for _ in 0..50 {
            let spec = rng.pick(&specs);
            let c = command(&mut rng, spec);
            let args: Vec<&[u8]> = c.iter().map(Vec::as_slice).collect();
            batch.extend(resp(&args));
            shown.push(
                c.iter()
                    .map(|a| String::from_utf8_lossy(&a[..a.len().min(20)]).into_owned())
                    .collect::<Vec<_>>()
                    .join(" "),
            );
            count += 1;
        }
        sent += 50;
        stream
            .write_all(&batch)
            .unwrap_or_else(|e| panic!("sending the batch before command {sent}: {e}"));
        let replies = read_replies(&mut stream, count);
        assert_eq!(
            replies.len(),
            count,
            "seed {seed}, batch ending at {sent}: {shown:?}"
        );
    }
    // Still up, and still itself once reset.
    stream.write_all(&resp(&[b"RESET"])).unwrap();
    stream.write_all(&resp(&[b"PING"])).unwrap();
    let last = read_replies(&mut stream, 2);
    assert_eq!(last[1], Frame::simple("PONG"));
}
