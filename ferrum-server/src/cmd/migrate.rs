//! `MIGRATE`: moves keys to another server as Redis 7.0 does, as `RESTORE`
//! commands carrying `DUMP` payloads (with each key's remaining TTL) sent
//! over a cached connection, after `AUTH` and, when the connection's
//! database differs, `SELECT`. A key the target acknowledged is deleted
//! here unless `COPY` was given.
//!
//! **Where it waits.** The whole exchange runs off the tokio worker
//! ([`script::off_worker`](crate::script::off_worker)), so other
//! connections keep being served, and no shard lock is held while it
//! waits on the network: the keys are serialized under their locks, the
//! locks are released, and the acknowledged keys are locked again to be
//! deleted. A key written meanwhile (Redis, which runs nothing else
//! during a `MIGRATE`, cannot see that) is left in place rather than
//! deleted with its new value unsent: it is compared by its payload's
//! length and CRC-64 and its deadline.
//!
//! **Retries.** As in Redis, a request that failed before any `RESTORE`
//! reply came (a cached connection the target had closed, say) is sent
//! once more on a new connection, unless it failed by timing out.

use std::io;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use ferrum_proto::{Frame, Protocol};
use ferrum_store::{Access, Entry, Millis};

use super::args::Args;
use super::parse::{is, parse_i64};
use super::{error, CmdError, CmdResult, Ctx};
use crate::command::getkeys::layout;
use crate::migrate::Link;

/// A `MIGRATE` call, parsed.
struct Migrate<'a> {
    host: &'a [u8],
    port: &'a [u8],
    /// The target's database.
    db: i64,
    /// For connecting, each 64 KiB written and each reply line read.
    timeout: Duration,
    copy: bool,
    replace: bool,
    username: Option<&'a Bytes>,
    password: Option<&'a Bytes>,
    keys: &'a [Bytes],
}

/// What a key looked like when it was sent: it is deleted only if it
/// still looks so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fingerprint {
    len: usize,
    /// The payload's RDB version and CRC-64.
    footer: [u8; 10],
    expires: Option<Millis>,
}

/// One request to the target: the commands' bytes, and the keys whose
/// `RESTORE` replies follow the `AUTH` and `SELECT` ones.
struct Request {
    bytes: BytesMut,
    auth: bool,
    select: bool,
    sent: Vec<(Bytes, Fingerprint)>,
}

/// How an exchange with the target failed.
#[derive(Debug)]
struct Failure {
    /// While writing the request (else reading the replies).
    writing: bool,
    timed_out: bool,
    /// After at least one `RESTORE` reply: the target may have applied
    /// the request, so it is not sent again.
    replied: bool,
}

/// What the target answered.
#[derive(Debug, Default)]
struct Answer {
    /// Indices into [`Request::sent`] of the keys restored.
    acked: Vec<usize>,
    /// The first error the target replied, without its `-`.
    target_error: Option<Vec<u8>>,
    failure: Option<Failure>,
}

/// `COMMAND INFO`'s tips for `MIGRATE`.
pub(super) const TIPS: &[&str] = &["nondeterministic_output"];

/// `MIGRATE`'s key specs as Redis 7.0 declares them, for `COMMAND INFO`:
/// the key argument, then whatever follows `KEYS` (`incomplete`: a
/// password could read `KEYS`).
pub(super) fn key_specs() -> Vec<Frame> {
    let map = |pairs: Vec<(&'static str, Frame)>| {
        Frame::Map(
            pairs
                .into_iter()
                .map(|(k, v)| (Frame::bulk(k), v))
                .collect(),
        )
    };
    let flags =
        |names: &[&'static str]| Frame::Set(names.iter().map(|n| Frame::simple(n)).collect());
    let range = |last: i64| {
        map(vec![
            ("type", Frame::bulk("range")),
            (
                "spec",
                map(vec![
                    ("lastkey", Frame::Integer(last)),
                    ("keystep", Frame::Integer(1)),
                    ("limit", Frame::Integer(0)),
                ]),
            ),
        ])
    };
    let by_index = map(vec![
        ("type", Frame::bulk("index")),
        ("spec", map(vec![("index", Frame::Integer(3))])),
    ]);
    let by_keyword = map(vec![
        ("type", Frame::bulk("keyword")),
        (
            "spec",
            map(vec![
                ("keyword", Frame::bulk("KEYS")),
                ("startfrom", Frame::Integer(-2)),
            ]),
        ),
    ]);
    vec![
        map(vec![
            ("flags", flags(&["RW", "access", "delete"])),
            ("begin_search", by_index),
            ("find_keys", range(0)),
        ]),
        map(vec![
            ("flags", flags(&["RW", "access", "delete", "incomplete"])),
            ("begin_search", by_keyword),
            ("find_keys", range(-1)),
        ]),
    ]
}

/// The positions of the credentials, which `MONITOR` and `SLOWLOG` show
/// as `(redacted)`.
pub(super) fn secrets(args: &[Bytes]) -> Vec<usize> {
    layout(args).secrets
}

/// `MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE]
/// [AUTH password] [AUTH2 username password] [KEYS key [key ...]]`
pub(crate) fn migrate(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let m = Migrate::parse(args)?;
    let keys = present_keys(ctx, m.keys);
    if keys.is_empty() {
        return Ok(Frame::simple("NOKEY"));
    }
    crate::script::off_worker(|| m.transfer(ctx, &keys))
}

/// The keys of `keys` that exist, looked up as reads (hits and misses
/// count, as Redis's `lookupKeyRead`), duplicates kept as Redis keeps them.
fn present_keys(ctx: &Ctx<'_>, keys: &[Bytes]) -> Vec<Bytes> {
    let (db, now) = (ctx.db(), ctx.now);
    keys.iter()
        .filter(|k| {
            let mut ks = ctx.store().lock_key(k);
            ks.shard(k).lookup(db, k, now, Access::Read).is_some()
        })
        .cloned()
        .collect()
}

impl<'a> Migrate<'a> {
    /// Options first, then the timeout and the database, in Redis's order
    /// (so a syntax error wins over a bad number).
    fn parse(args: &'a [Bytes]) -> Result<Migrate<'a>, CmdError> {
        let mut m = Migrate {
            host: &args[1],
            port: &args[2],
            db: 0,
            timeout: Duration::ZERO,
            copy: false,
            replace: false,
            username: None,
            password: None,
            keys: &args[3..4],
        };
        let mut opts = Args::at(args, 6);
        while let Some(a) = opts.next() {
            let more = opts.remaining();
            if is(a, "copy") {
                m.copy = true;
            } else if is(a, "replace") {
                m.replace = true;
            } else if is(a, "auth") && more >= 1 {
                m.password = Some(opts.expect()?);
            } else if is(a, "auth2") && more >= 2 {
                m.username = Some(opts.expect()?);
                m.password = Some(opts.expect()?);
            } else if is(a, "keys") {
                if !args[3].is_empty() {
                    return Err(CmdError::msg(error::MIGRATE_KEYS_NOT_EMPTY));
                }
                m.keys = opts.take_rest();
                break;
            } else {
                return Err(CmdError::syntax());
            }
        }
        let not_integer = || CmdError::msg(error::NOT_INTEGER);
        let timeout = parse_i64(&args[5]).ok_or_else(not_integer)?;
        m.db = parse_i64(&args[4]).ok_or_else(not_integer)?;
        // A timeout of 0 or less means one second, as in Redis.
        m.timeout = match u64::try_from(timeout) {
            Ok(ms) if ms > 0 => Duration::from_millis(ms),
            _ => Duration::from_secs(1),
        };
        Ok(m)
    }

    /// The cache's name for the target: `host:port` as the client wrote them.
    fn link_name(&self) -> String {
        format!(
            "{}:{}",
            String::from_utf8_lossy(self.host),
            String::from_utf8_lossy(self.port)
        )
    }

    /// Sends the keys and applies the target's answer, retrying once on a
    /// new connection as Redis does.
    fn transfer(&self, ctx: &mut Ctx<'_>, keys: &[Bytes]) -> CmdResult {
        let links = &ctx.shared.migrate;
        let name = self.link_name();
        let mut may_retry = true;
        loop {
            let mut link = match links.take(&name) {
                Some(link) => link,
                None => self.connect()?,
            };
            let request = self.request(ctx, keys, link.db);
            let answer = self.exchange(&mut link, &request);
            let retry = answer.target_error.is_none()
                && answer
                    .failure
                    .as_ref()
                    .is_some_and(|f| !f.replied && !f.timed_out);
            if retry && may_retry {
                // The link is dropped, which closes it.
                may_retry = false;
                continue;
            }
            let deleted = if self.copy {
                0
            } else {
                delete_acked(ctx, &request.sent, &answer.acked)
            };
            ctx.dirty = Some(deleted);
            return match (answer.target_error, answer.failure) {
                (Some(line), failure) => {
                    if failure.is_none() {
                        // The target may have refused the SELECT.
                        link.db = None;
                        links.put(name, link);
                    }
                    Err(CmdError::msg(error::migrate_target_error(&line)))
                }
                (None, Some(f)) => Err(CmdError::msg(error::migrate_io(f.writing))),
                (None, None) => {
                    link.db = Some(self.db);
                    links.put(name, link);
                    Ok(Frame::ok())
                }
            };
        }
    }

    fn connect(&self) -> Result<Link, CmdError> {
        let refused = || CmdError::msg(error::MIGRATE_CONNECT);
        let host = std::str::from_utf8(self.host).map_err(|_| refused())?;
        let port = std::str::from_utf8(self.port).map_err(|_| refused())?;
        Link::connect(host, port, self.timeout).map_err(|_| refused())
    }

    /// Serializes the keys still present (each under its shard's lock,
    /// released before anything is sent) into `AUTH`, `SELECT` (when the
    /// link's database is not `db`) and one `RESTORE` a key.
    fn request(&self, ctx: &Ctx<'_>, keys: &[Bytes], link_db: Option<i64>) -> Request {
        let mut request = Request {
            bytes: BytesMut::new(),
            auth: self.password.is_some(),
            select: link_db != Some(self.db),
            sent: Vec::with_capacity(keys.len()),
        };
        let mut push = |parts: Vec<Bytes>| {
            let frame = Frame::Array(parts.into_iter().map(Frame::Bulk).collect());
            frame.encode(Protocol::Resp2, &mut request.bytes);
        };
        if let Some(password) = self.password {
            let mut auth = vec![Bytes::from_static(b"AUTH")];
            auth.extend(self.username.cloned());
            auth.push(password.clone());
            push(auth);
        }
        if request.select {
            push(vec![
                Bytes::from_static(b"SELECT"),
                Bytes::from(self.db.to_string()),
            ]);
        }
        let (db, now) = (ctx.db(), ctx.shared.clock.now());
        for key in keys {
            let Some(value) = serialized(ctx, db, key, now) else {
                // Expired (or deleted) since it was found.
                continue;
            };
            let fingerprint = value.fingerprint();
            // A key about to expire still gets a TTL, never 0 (no TTL).
            let ttl = value
                .expires
                .map_or(0, |at| at.0.saturating_sub(now.0).max(1));
            // In cluster mode the target imports the slot: RESTORE-ASKING
            // is served there without a client's `ASKING`, as in Redis.
            let restore_cmd: &'static [u8] = if ctx.shared.cluster.is_some() {
                b"RESTORE-ASKING"
            } else {
                b"RESTORE"
            };
            let mut restore = vec![
                Bytes::from_static(restore_cmd),
                key.clone(),
                Bytes::from(ttl.to_string()),
                Bytes::from(value.payload),
            ];
            if self.replace {
                restore.push(Bytes::from_static(b"REPLACE"));
            }
            push(restore);
            request.sent.push((key.clone(), fingerprint));
        }
        request
    }

    /// Writes the request and reads one reply line per command in it. A
    /// key is acknowledged when its `RESTORE` and the `AUTH` and `SELECT`
    /// before it all succeeded, as Redis decides.
    fn exchange(&self, link: &mut Link, request: &Request) -> Answer {
        let t = self.timeout;
        let failed = |e: io::Error, writing: bool, replied: bool| Answer {
            failure: Some(Failure {
                writing,
                timed_out: e.kind() == io::ErrorKind::TimedOut,
                replied,
            }),
            ..Answer::default()
        };
        if let Err(e) = link.write_all(&request.bytes, t) {
            return failed(e, true, false);
        }
        let mut preamble = Vec::new();
        for expected in [request.auth, request.select] {
            if expected {
                match link.read_line(t) {
                    Ok(line) => preamble.push(line),
                    Err(e) => return failed(e, false, false),
                }
            }
        }
        let mut answer = Answer::default();
        for i in 0..request.sent.len() {
            let line = match link.read_line(t) {
                Ok(line) => line,
                Err(e) => {
                    answer.failure = failed(e, false, i > 0).failure;
                    break;
                }
            };
            let refused = preamble
                .iter()
                .chain(std::iter::once(&line))
                .find(|l| l.first() == Some(&b'-'));
            match refused {
                Some(l) if answer.target_error.is_none() => {
                    answer.target_error = Some(l[1..].to_vec());
                }
                Some(_) => {}
                None => answer.acked.push(i),
            }
        }
        answer
    }
}

/// A key's `DUMP` payload and deadline, as sent.
struct Serialized {
    payload: Vec<u8>,
    expires: Option<Millis>,
}

impl Serialized {
    /// The entry's value serialized.
    fn of(e: Entry<'_>) -> Serialized {
        Serialized {
            payload: crate::rdb::serialize(e.value()),
            expires: e.expires_at(),
        }
    }

    fn fingerprint(&self) -> Fingerprint {
        let mut footer = [0u8; 10];
        footer.copy_from_slice(&self.payload[self.payload.len() - 10..]);
        Fingerprint {
            len: self.payload.len(),
            footer,
            expires: self.expires,
        }
    }
}

/// `key` serialized under its shard's lock, or `None` when it is gone.
fn serialized(ctx: &Ctx<'_>, db: usize, key: &[u8], now: Millis) -> Option<Serialized> {
    let mut ks = ctx.store().lock_key(key);
    let e = ks.shard(key).lookup(db, key, now, Access::Peek)?;
    Some(Serialized::of(e))
}

/// Deletes the acknowledged keys that still hold what was sent, each
/// signalled as `DEL` signals it (the `del` event, tracking invalidation;
/// `WATCH` sees the store's version change); returns how many.
fn delete_acked(ctx: &Ctx<'_>, sent: &[(Bytes, Fingerprint)], acked: &[usize]) -> u64 {
    let (db, writer) = (ctx.db(), ctx.conn.handle.id);
    let mut deleted = 0;
    for (key, fingerprint) in acked.iter().filter_map(|&i| sent.get(i)) {
        let now = ctx.shared.clock.now();
        let removed = {
            let mut ks = ctx.store().lock_key(key);
            let shard = ks.shard(key);
            let now_looks = shard
                .lookup(db, key, now, Access::Peek)
                .map(Serialized::of)
                .map(|s| s.fingerprint());
            now_looks == Some(*fingerprint) && shard.delete(db, key, now)
        };
        if removed {
            super::notify::emit(ctx.shared, crate::notify::class::GENERIC, "del", db, key);
            ctx.shared.tracking.invalidate(ctx.shared, key, writer);
            deleted += 1;
        }
    }
    if let (Some(cl), true) = (&ctx.shared.cluster, deleted > 0) {
        cl.bump_generation();
    }
    deleted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> Vec<Bytes> {
        text.split(' ')
            .map(|a| Bytes::copy_from_slice(a.as_bytes()))
            .collect()
    }

    #[test]
    fn credentials_are_redacted_wherever_they_are() {
        let shown = |text: &str| {
            let args = line(text);
            let secrets = secrets(&args);
            args.iter()
                .enumerate()
                .map(|(i, a)| match secrets.contains(&i) {
                    true => "(redacted)".to_owned(),
                    false => String::from_utf8_lossy(a).into_owned(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(
            shown("migrate h 1 k 0 5 auth pw copy"),
            "migrate h 1 k 0 5 auth (redacted) copy"
        );
        assert_eq!(
            shown("migrate h 1  0 5 AUTH2 u p KEYS auth x"),
            "migrate h 1  0 5 AUTH2 (redacted) (redacted) KEYS auth x"
        );
        // A trailing AUTH without its argument redacts nothing; a short
        // line (arity is checked before) finds no keys, and panics not.
        assert!(layout(&line("migrate h")).keys.is_empty());
        assert_eq!(shown("migrate h 1 k 0 5 auth"), "migrate h 1 k 0 5 auth");
    }

    #[test]
    fn options_parse_in_redis_order() {
        let m = |text: &str| Migrate::parse(&line(text)).map(|m| (m.copy, m.replace, m.timeout));
        assert_eq!(
            m("migrate h 1 k 0 0 copy replace"),
            Ok((true, true, Duration::from_secs(1)))
        );
        assert_eq!(
            m("migrate h 1 k 0 250"),
            Ok((false, false, Duration::from_millis(250)))
        );
        // A syntax error is found before a bad number.
        assert_eq!(m("migrate h 1 k x x bogus"), Err(CmdError::syntax()));
        assert_eq!(
            m("migrate h 1 k x 5"),
            Err(CmdError::msg(error::NOT_INTEGER))
        );
        let keys = Migrate::parse(&line("migrate h 1  0 5 auth2 u p keys a b"))
            .map(|m| (m.username.cloned(), m.password.cloned(), m.keys.len()));
        assert_eq!(
            keys,
            Ok((Some(Bytes::from("u")), Some(Bytes::from("p")), 2))
        );
    }
}
