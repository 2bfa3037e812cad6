//! A fuzz-style property test beyond the decoder: arbitrary sequences of
//! string commands, malformed ones included (bad arity, non-numbers, edge
//! integers, unknown names carrying CR and LF, other types' keys), pipelined
//! to an in-process server. Every reply must be one valid RESP frame, the
//! server must never close the connection or stop answering, and a model of
//! the string keyspace must agree with every reply, errors word for word.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::sync::LazyLock;

use bytes::BytesMut;
use ferrum_proto::{Frame, Limits, RespCodec};
use proptest::prelude::*;
use tokio_util::codec::Decoder;

use crate::common::{resp, TestServer};

/// One server for every case; each case starts with `FLUSHALL`.
static SERVER: LazyLock<TestServer> = LazyLock::new(TestServer::start);

const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
const OVERFLOW: &str = "ERR increment or decrement would overflow";

/// What the model holds under a key.
#[derive(Clone, Debug, PartialEq)]
enum Val {
    Str(Vec<u8>),
    /// A list, which string commands must refuse.
    List(i64),
}

/// The model of the keyspace, applying each command as Redis would.
#[derive(Default)]
struct Model(HashMap<Vec<u8>, Val>);

fn err(text: &str) -> Frame {
    Frame::error(text.to_owned())
}

fn bulk(b: &[u8]) -> Frame {
    Frame::bulk(b.to_vec())
}

/// Redis's `string2ll`: no `+`, no leading zeros or spaces.
fn int(b: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(b).ok()?;
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || digits.starts_with('+') || (digits.starts_with('0') && s.len() > 1) {
        return None;
    }
    s.parse().ok()
}

impl Model {
    fn string(&self, k: &[u8]) -> Result<Option<&Vec<u8>>, Frame> {
        match self.0.get(k) {
            None => Ok(None),
            Some(Val::Str(v)) => Ok(Some(v)),
            Some(Val::List(_)) => Err(err(WRONGTYPE)),
        }
    }

    /// The reply to `args`, and its effect on the model.
    fn apply(&mut self, args: &[Vec<u8>]) -> Frame {
        let name = String::from_utf8_lossy(&args[0]).to_ascii_lowercase();
        let arity = |n: usize, exact: bool| {
            let ok = if exact {
                args.len() == n
            } else {
                args.len() >= n
            };
            (!ok).then(|| {
                err(&format!(
                    "ERR wrong number of arguments for '{name}' command"
                ))
            })
        };
        let checked = match name.as_str() {
            "get" | "strlen" | "incr" | "decr" | "getdel" | "llen" => arity(2, true),
            "set" => arity(3, false),
            "append" | "setnx" | "incrby" | "decrby" | "lpush" => {
                arity(3, !matches!(name.as_str(), "lpush"))
            }
            "getrange" => arity(4, true),
            "del" | "exists" | "mget" => arity(2, false),
            "mset" => arity(3, false).or_else(|| {
                (args.len() % 2 == 0)
                    .then(|| err("ERR wrong number of arguments for 'mset' command"))
            }),
            _ => None,
        };
        if let Some(reply) = checked {
            return reply;
        }
        match self.run(&name, args) {
            Ok(frame) | Err(frame) => frame,
        }
    }

    fn run(&mut self, name: &str, a: &[Vec<u8>]) -> Result<Frame, Frame> {
        Ok(match name {
            "get" => Frame::bulk_or_null(self.string(&a[1])?.cloned()),
            "strlen" => Frame::Integer(self.string(&a[1])?.map_or(0, |v| v.len() as i64)),
            "getdel" => {
                let v = self.string(&a[1])?.cloned();
                self.0.remove(&a[1]);
                Frame::bulk_or_null(v)
            }
            "set" => return self.set(a),
            "setnx" => {
                let fresh = !self.0.contains_key(&a[1]);
                if fresh {
                    self.0.insert(a[1].clone(), Val::Str(a[2].clone()));
                }
                Frame::Integer(fresh.into())
            }
            "append" => {
                let mut v = self.string(&a[1])?.cloned().unwrap_or_default();
                v.extend_from_slice(&a[2]);
                let len = v.len();
                self.0.insert(a[1].clone(), Val::Str(v));
                Frame::Integer(len as i64)
            }
            "incr" | "decr" | "incrby" | "decrby" => {
                let by = match name {
                    "incr" => 1,
                    "decr" => -1,
                    _ => {
                        let n = int(&a[2]).ok_or_else(|| err(NOT_INTEGER))?;
                        if name == "decrby" {
                            n.checked_neg()
                                .ok_or_else(|| err("ERR decrement would overflow"))?
                        } else {
                            n
                        }
                    }
                };
                let cur = match self.string(&a[1])? {
                    None => 0,
                    Some(v) => int(v).ok_or_else(|| err(NOT_INTEGER))?,
                };
                let new = cur.checked_add(by).ok_or_else(|| err(OVERFLOW))?;
                self.0
                    .insert(a[1].clone(), Val::Str(new.to_string().into_bytes()));
                Frame::Integer(new)
            }
            "getrange" => {
                let (start, end) = match (int(&a[2]), int(&a[3])) {
                    (Some(s), Some(e)) => (s, e),
                    _ => return Err(err(NOT_INTEGER)),
                };
                let v = self.string(&a[1])?.cloned().unwrap_or_default();
                bulk(&getrange(&v, start, end))
            }
            "del" | "exists" => {
                let mut n = 0;
                for k in &a[1..] {
                    let hit = if name == "del" {
                        self.0.remove(k).is_some()
                    } else {
                        self.0.contains_key(k)
                    };
                    n += i64::from(hit);
                }
                Frame::Integer(n)
            }
            "mget" => Frame::Array(
                a[1..]
                    .iter()
                    .map(|k| match self.0.get(k) {
                        Some(Val::Str(v)) => bulk(v),
                        _ => Frame::Null,
                    })
                    .collect(),
            ),
            "mset" => {
                for kv in a[1..].chunks(2) {
                    self.0.insert(kv[0].clone(), Val::Str(kv[1].clone()));
                }
                Frame::ok()
            }
            "lpush" => {
                let n = match self.0.get(&a[1]) {
                    None => 0,
                    Some(Val::List(n)) => *n,
                    Some(Val::Str(_)) => return Err(err(WRONGTYPE)),
                } + (a.len() - 2) as i64;
                self.0.insert(a[1].clone(), Val::List(n));
                Frame::Integer(n)
            }
            "llen" => match self.0.get(&a[1]) {
                None => Frame::Integer(0),
                Some(Val::List(n)) => Frame::Integer(*n),
                Some(Val::Str(_)) => return Err(err(WRONGTYPE)),
            },
            _ => unreachable!("only modelled commands are generated"),
        })
    }

    /// `SET key value [NX|XX] [GET]`.
    fn set(&mut self, a: &[Vec<u8>]) -> Result<Frame, Frame> {
        let (mut nx, mut xx, mut get) = (false, false, false);
        for opt in &a[3..] {
            match String::from_utf8_lossy(opt).to_ascii_lowercase().as_str() {
                "nx" if !xx => nx = true,
                "xx" if !nx => xx = true,
                "get" => get = true,
                _ => return Err(err("ERR syntax error")),
            }
        }
        let old = if get {
            self.string(&a[1])?.cloned()
        } else {
            None
        };
        let exists = self.0.contains_key(&a[1]);
        let write = !(nx && exists || xx && !exists);
        if write {
            self.0.insert(a[1].clone(), Val::Str(a[2].clone()));
        }
        Ok(match (get, write) {
            (true, _) => Frame::bulk_or_null(old),
            (false, true) => Frame::ok(),
            (false, false) => Frame::Null,
        })
    }
}

/// Redis 7.0's `GETRANGE` index rules.
fn getrange(v: &[u8], start: i64, end: i64) -> Vec<u8> {
    let len = v.len() as i64;
    if (start < 0 && end < 0 && start > end) || len == 0 {
        return Vec::new();
    }
    let fix = |i: i64| if i < 0 { (len + i).max(0) } else { i };
    let (start, end) = (fix(start), fix(end).min(len - 1));
    if start > end {
        return Vec::new();
    }
    v[start as usize..=end as usize].to_vec()
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(b"a".to_vec()),
        Just(b"b".to_vec()),
        Just(b"k\r\n".to_vec()),
        Just(b"".to_vec()),
        Just(vec![0, 255]),
    ]
}

/// Values, many of them numbers or almost numbers, to reach INCR's edges.
fn value() -> impl Strategy<Value = Vec<u8>> + Clone {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..8),
        Just(b"9223372036854775807".to_vec()),
        Just(b"-9223372036854775808".to_vec()),
        Just(b"0".to_vec()),
        Just(b"-0".to_vec()),
        Just(b"+1".to_vec()),
        Just(b" 1".to_vec()),
        Just(b"01".to_vec()),
        any::<i64>().prop_map(|n| n.to_string().into_bytes()),
        (-5i64..5).prop_map(|n| n.to_string().into_bytes()),
    ]
}

fn name(n: &'static str) -> Vec<u8> {
    // Mixed case: command names are case-insensitive.
    n.bytes()
        .enumerate()
        .map(|(i, b)| {
            if i % 2 == 0 {
                b.to_ascii_uppercase()
            } else {
                b
            }
        })
        .collect()
}

/// One command, well-formed or not.
fn command() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let words = prop::collection::vec(value(), 0..4);
    prop_oneof![
        (
            key(),
            value(),
            prop::collection::vec(
                prop_oneof![
                    Just(b"NX".to_vec()),
                    Just(b"xx".to_vec()),
                    Just(b"GET".to_vec()),
                    value()
                ],
                0..3,
            )
        )
            .prop_map(|(k, v, opts)| [vec![name("set"), k, v], opts].concat()),
        (
            prop_oneof![
                Just("get"),
                Just("strlen"),
                Just("incr"),
                Just("decr"),
                Just("getdel"),
                Just("llen")
            ],
            key()
        )
            .prop_map(|(n, k)| vec![name(n), k]),
        (
            prop_oneof![
                Just("append"),
                Just("setnx"),
                Just("incrby"),
                Just("decrby"),
                Just("lpush")
            ],
            key(),
            value()
        )
            .prop_map(|(n, k, v)| vec![name(n), k, v]),
        (key(), value(), value()).prop_map(|(k, s, e)| vec![name("getrange"), k, s, e]),
        (
            prop_oneof![Just("del"), Just("exists"), Just("mget")],
            prop::collection::vec(key(), 1..4)
        )
            .prop_map(|(n, keys)| [vec![name(n)], keys].concat()),
        prop::collection::vec((key(), value()), 1..3).prop_map(|kvs| [
            vec![name("mset")],
            kvs.into_iter().flat_map(|(k, v)| [k, v]).collect()
        ]
        .concat()),
        // Wrong arity for any modelled command.
        (
            prop_oneof![
                Just("get"),
                Just("set"),
                Just("getrange"),
                Just("incrby"),
                Just("mset"),
                Just("del")
            ],
            words.clone()
        )
            .prop_map(|(n, w)| [vec![name(n)], w].concat()),
        // No such command, with bytes that would forge replies if echoed raw.
        (prop::collection::vec(any::<u8>(), 0..6), words).prop_map(|(junk, w)| [
            vec![[b"\r\n:1\r\nx".to_vec(), junk].concat()],
            w
        ]
        .concat()),
    ]
}

/// Reads exactly `n` replies; panics on EOF, a protocol error or leftovers.
fn read_replies(stream: &mut std::net::TcpStream, n: usize) -> Vec<Frame> {
    let mut codec = RespCodec::client(Limits::default());
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    while out.len() < n {
        match codec.decode(&mut buf).expect("every reply is valid RESP") {
            Some(frame) => out.push(frame),
            None => {
                let got = stream.read(&mut chunk).expect("reply arrives");
                assert!(got > 0, "server closed after {} of {n} replies", out.len());
                buf.extend_from_slice(&chunk[..got]);
            }
        }
    }
    assert!(buf.is_empty(), "bytes after the last reply: {buf:?}");
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn command_sequences_agree_with_a_model_of_the_keyspace(
        commands in prop::collection::vec(command(), 1..40),
    ) {
        let mut raw = SERVER.raw();
        let mut batch = resp(&[b"FLUSHALL"]);
        for c in &commands {
            let args: Vec<&[u8]> = c.iter().map(Vec::as_slice).collect();
            batch.extend(resp(&args));
        }
        batch.extend(resp(&[b"PING"]));
        raw.stream.write_all(&batch).expect("write");
        let replies = read_replies(&mut raw.stream, commands.len() + 2);
        prop_assert_eq!(&replies[0], &Frame::ok());
        prop_assert_eq!(replies.last(), Some(&Frame::simple("PONG")));
        let mut model = Model::default();
        for (c, got) in commands.iter().zip(&replies[1..]) {
            let shown: Vec<_> = c.iter().map(|a| String::from_utf8_lossy(a).into_owned()).collect();
            if c[0].starts_with(b"\r\n") {
                // An unknown command: an error naming it, with no line break.
                let Frame::Error(text) = got else {
                    return Err(TestCaseError::fail(format!("{shown:?} got {got:?}")));
                };
                prop_assert!(text.starts_with(b"ERR unknown command '  :1  x"), "{:?}", text);
                continue;
            }
            let want = model.apply(c);
            prop_assert_eq!(got, &want, "{:?}", shown);
        }
    }
}
