//! Raising keyspace events (`crate::notify` holds which classes are on):
//! [`emit`] publishes one; [`Watch::before`] peeks at a command's key
//! arguments before the handler runs, [`Watch::after`] names the events
//! from the command, its arguments and its reply; [`sweep_expired`] and
//! [`enforce_maxmemory`] report the keys the expiry timer and eviction
//! remove.

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::{Access, Millis, StoreError};

use super::Ctx;
use crate::command::CommandSpec;
use crate::notify::class;
use crate::shared::Shared;

/// What one command's keys looked like before it ran.
pub(crate) struct Watch {
    /// `(key, existed)` for each distinct key argument.
    keys: Vec<(Bytes, bool)>,
    db: usize,
}

/// At most this many key arguments are looked at (an `MSET` of thousands
/// of keys reports the first ones' `new` events only).
const MAX_WATCHED: usize = 256;

impl Watch {
    /// Records whether each key argument of `spec` exists, and reports the
    /// ones past their TTL as `expired` (the command's own lookup removes
    /// them). Called only while some class is enabled.
    pub(crate) fn before(ctx: &Ctx<'_>, spec: &CommandSpec, args: &[Bytes]) -> Watch {
        let db = ctx.db();
        let mut keys: Vec<(Bytes, bool)> = Vec::new();
        for key in key_args(spec, args).take(MAX_WATCHED) {
            if keys.iter().any(|(k, _)| k == key) {
                continue;
            }
            let existed = {
                let mut ks = ctx.store().lock_key(key);
                // Looked up at the origin of time so that an expired key is
                // seen (and left for the command to remove), not removed.
                let deadline = ks
                    .shard(key)
                    .lookup(db, key, Millis(0), Access::Peek)
                    .map(|e| e.expires_at());
                match deadline {
                    Some(Some(d)) if d <= ctx.now => {
                        drop(ks);
                        emit(ctx.shared, class::EXPIRED, "expired", db, key);
                        ctx.shared.tracking.invalidate(ctx.shared, key, 0);
                        false
                    }
                    Some(_) => true,
                    None => false,
                }
            };
            keys.push((key.clone(), existed));
        }
        Watch { keys, db }
    }

    /// Publishes the events of a command that ran and replied `reply`.
    pub(crate) fn after(self, ctx: &Ctx<'_>, spec: &CommandSpec, args: &[Bytes], reply: &Frame) {
        if matches!(reply, Frame::Error(_))
            || !spec.has(crate::command::flag::WRITE)
            || ctx.shared.notify.flags() == 0
        {
            return;
        }
        let exists_now = |key: &[u8], db: usize| {
            let mut ks = ctx.store().lock_key(key);
            ks.shard(key)
                .lookup(db, key, ctx.now, Access::Peek)
                .is_some()
        };
        let now_exist: Vec<bool> = self
            .keys
            .iter()
            .map(|(k, _)| exists_now(k, self.db))
            .collect();
        // `new` comes first, as Redis raises it when the key is added.
        for ((key, existed), now) in self.keys.iter().zip(&now_exist) {
            if !existed && *now {
                emit(ctx.shared, class::NEW, "new", self.db, key);
            }
        }
        let existed_before = |key: &[u8]| self.keys.iter().any(|(k, e)| k == key && *e);
        for (class, event, key, db) in events(spec, args, reply, self.db, &existed_before) {
            emit(ctx.shared, class, event, db, &key);
        }
        // A collection the command drained is deleted: `del` after the
        // command's own event. Commands whose event is the deletion itself
        // are left out.
        if !matches!(
            spec.name,
            "del"
                | "unlink"
                | "getdel"
                | "rename"
                | "renamenx"
                | "move"
                | "expire"
                | "pexpire"
                | "expireat"
                | "pexpireat"
                | "getex"
                | "restore"
                | "set"
                | "copy"
        ) {
            for ((key, existed), now) in self.keys.iter().zip(&now_exist) {
                if *existed && !now {
                    emit(ctx.shared, class::GENERIC, "del", self.db, key);
                }
            }
        }
    }
}

/// A command's key arguments, by the table or, for commands whose keys move
/// (`ZUNIONSTORE dest numkeys ...`), the destination.
fn key_args<'a>(spec: &CommandSpec, args: &'a [Bytes]) -> impl Iterator<Item = &'a Bytes> {
    spec.keys(args)
}

fn arg_is(args: &[Bytes], word: &str) -> bool {
    args.iter().any(|a| a.eq_ignore_ascii_case(word.as_bytes()))
}

/// A non-empty reply: not nil, not 0, not an empty array.
fn did(reply: &Frame) -> bool {
    match reply {
        Frame::Null => false,
        Frame::Integer(n) => *n > 0,
        Frame::Array(a) | Frame::Push(a) | Frame::Set(a) => !a.is_empty(),
        Frame::Bulks(b) => !b.is_empty(),
        _ => true,
    }
}

type Event = (u32, &'static str, Bytes, usize);

/// The events a successful write sends, in Redis's order.
fn events(
    spec: &CommandSpec,
    args: &[Bytes],
    reply: &Frame,
    db: usize,
    existed: &dyn Fn(&[u8]) -> bool,
) -> Vec<Event> {
    use class::{GENERIC, HASH, LIST, SET, STREAM, STRING, ZSET};
    let key = || args.get(1).cloned().unwrap_or_default();
    let one = |c: u32, e: &'static str| vec![(c, e, key(), db)];
    let when = |cond: bool, c: u32, e: &'static str| if cond { one(c, e) } else { Vec::new() };
    let side = |w: &[u8]| {
        if w.eq_ignore_ascii_case(b"left") {
            "l"
        } else {
            "r"
        }
    };
    match spec.name {
        "set" => {
            let conditional = arg_is(&args[3..], "nx") || arg_is(&args[3..], "xx");
            let done = !matches!(reply, Frame::Null) || (arg_is(&args[3..], "get") && !conditional);
            let mut v = when(done, STRING, "set");
            let expiring = ["ex", "px", "exat", "pxat"]
                .iter()
                .any(|w| arg_is(&args[3..], w));
            if done && expiring {
                v.extend(one(GENERIC, "expire"));
            }
            v
        }
        "setnx" => when(did(reply), STRING, "set"),
        "getset" => one(STRING, "set"),
        "setex" | "psetex" => {
            let mut v = one(STRING, "set");
            v.extend(one(GENERIC, "expire"));
            v
        }
        "mset" => args[1..]
            .chunks(2)
            .map(|kv| (STRING, "set", kv[0].clone(), db))
            .collect(),
        "msetnx" if did(reply) => args[1..]
            .chunks(2)
            .map(|kv| (STRING, "set", kv[0].clone(), db))
            .collect(),
        "append" => one(STRING, "append"),
        "setrange" => when(!args[3].is_empty() || existed(&args[1]), STRING, "setrange"),
        "incr" | "decr" | "incrby" | "decrby" => one(STRING, "incrby"),
        "incrbyfloat" => one(STRING, "incrbyfloat"),
        "setbit" | "bitfield" => one(STRING, "setbit"),
        "bitop" => when(true, STRING, "set")
            .into_iter()
            .map(|(c, e, _, d)| (c, e, args[2].clone(), d))
            .collect(),
        "getdel" => when(did(reply), GENERIC, "del"),
        "getex" if !matches!(reply, Frame::Null) => {
            if arg_is(&args[2..], "persist") {
                one(GENERIC, "persist")
            } else if args.len() > 2 {
                one(GENERIC, "expire")
            } else {
                Vec::new()
            }
        }
        "del" | "unlink" => spec
            .keys(args)
            .filter(|k| existed(k))
            .map(|k| (GENERIC, "del", k.clone(), db))
            .collect(),
        "expire" | "pexpire" | "expireat" | "pexpireat" if did(reply) => {
            // A deadline already past deletes the key.
            one(GENERIC, "expire")
        }
        "persist" => when(did(reply), GENERIC, "persist"),
        "rename" | "renamenx" if did(reply) || matches!(reply, Frame::Simple(_)) => vec![
            (GENERIC, "rename_from", args[1].clone(), db),
            (GENERIC, "rename_to", args[2].clone(), db),
        ],
        "move" if did(reply) => {
            let to = std::str::from_utf8(&args[2])
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(db);
            vec![
                (GENERIC, "move_from", args[1].clone(), db),
                (GENERIC, "move_to", args[1].clone(), to),
            ]
        }
        "copy" if did(reply) => vec![(GENERIC, "copy_to", args[2].clone(), db)],
        "restore" => one(GENERIC, "restore"),
        "lpush" | "rpush" => one(
            LIST,
            if spec.name == "lpush" {
                "lpush"
            } else {
                "rpush"
            },
        ),
        "lpushx" => when(did(reply), LIST, "lpush"),
        "rpushx" => when(did(reply), LIST, "rpush"),
        "lpop" => when(did(reply), LIST, "lpop"),
        "rpop" => when(did(reply), LIST, "rpop"),
        "blpop" | "brpop" => match reply {
            Frame::Array(a) if a.len() == 2 => {
                let ev = if spec.name == "blpop" { "lpop" } else { "rpop" };
                let k = match &a[0] {
                    Frame::Bulk(k) => k.clone(),
                    _ => return Vec::new(),
                };
                vec![(LIST, ev, k, db)]
            }
            _ => Vec::new(),
        },
        "linsert" => when(did(reply), LIST, "linsert"),
        "lset" => one(LIST, "lset"),
        "ltrim" => one(LIST, "ltrim"),
        "lrem" => when(did(reply), LIST, "lrem"),
        "rpoplpush" | "brpoplpush" if did(reply) => vec![
            (LIST, "rpop", args[1].clone(), db),
            (LIST, "lpush", args[2].clone(), db),
        ],
        "lmove" | "blmove" if did(reply) => {
            let from = if side(&args[3]) == "l" {
                "lpop"
            } else {
                "rpop"
            };
            let to = if side(&args[4]) == "l" {
                "lpush"
            } else {
                "rpush"
            };
            vec![
                (LIST, from, args[1].clone(), db),
                (LIST, to, args[2].clone(), db),
            ]
        }
        "sadd" => when(did(reply), SET, "sadd"),
        "srem" => when(did(reply), SET, "srem"),
        "spop" => when(did(reply), SET, "spop"),
        "smove" if did(reply) => vec![
            (SET, "srem", args[1].clone(), db),
            (SET, "sadd", args[2].clone(), db),
        ],
        "sinterstore" | "sunionstore" | "sdiffstore" => when(
            did(reply),
            SET,
            match spec.name {
                "sinterstore" => "sinterstore",
                "sunionstore" => "sunionstore",
                _ => "sdiffstore",
            },
        ),
        "hset" | "hmset" => one(HASH, "hset"),
        "hsetnx" => when(did(reply), HASH, "hset"),
        "hdel" => when(did(reply), HASH, "hdel"),
        "hincrby" => one(HASH, "hincrby"),
        "hincrbyfloat" => one(HASH, "hincrbyfloat"),
        "zadd" => {
            let incr = arg_is(&args[2..], "incr");
            when(did(reply), ZSET, if incr { "zincr" } else { "zadd" })
        }
        "zincrby" => one(ZSET, "zincr"),
        "zrem" => when(did(reply), ZSET, "zrem"),
        "zremrangebyscore" => when(did(reply), ZSET, "zremrangebyscore"),
        "zremrangebyrank" => when(did(reply), ZSET, "zremrangebyrank"),
        "zremrangebylex" => when(did(reply), ZSET, "zremrangebylex"),
        "zpopmin" => when(did(reply), ZSET, "zpopmin"),
        "zpopmax" => when(did(reply), ZSET, "zpopmax"),
        "zunionstore" | "zinterstore" | "zdiffstore" | "zrangestore" => when(
            did(reply),
            ZSET,
            match spec.name {
                "zunionstore" => "zunionstore",
                "zinterstore" => "zinterstore",
                "zdiffstore" => "zdiffstore",
                _ => "zrangestore",
            },
        ),
        "xadd" => when(did(reply), STREAM, "xadd"),
        "xdel" => when(did(reply), STREAM, "xdel"),
        "xtrim" => when(did(reply), STREAM, "xtrim"),
        "xsetid" => one(STREAM, "xsetid"),
        _ => Vec::new(),
    }
}

/// Publishes one event of class `class` about `key` in `db`, if enabled.
pub(crate) fn emit(shared: &Shared, class: u32, event: &str, db: usize, key: &[u8]) {
    let flags = shared.notify.flags();
    if flags & class == 0 {
        return;
    }
    let limit = shared.config().client_output_buffer_limit.pubsub;
    if flags & class::KEYSPACE != 0 {
        let mut channel = format!("__keyspace@{db}__:").into_bytes();
        channel.extend_from_slice(key);
        let payload = Bytes::copy_from_slice(event.as_bytes());
        shared
            .pubsub
            .publish(&Bytes::from(channel), &payload, limit);
    }
    if flags & class::KEYEVENT != 0 {
        let channel = Bytes::from(format!("__keyevent@{db}__:{event}"));
        shared
            .pubsub
            .publish(&channel, &Bytes::copy_from_slice(key), limit);
    }
}

/// Background expiry while class `x` is on: removes expired keys itself,
/// `limit` slots per shard at a time from a cursor, and reports each. The
/// store's own sampling cycle would remove them without naming them.
/// Returns the keys expired.
pub(crate) fn sweep_expired(shared: &Shared, cursor: &mut usize, limit: usize) -> usize {
    let now = shared.clock.now();
    let store = &shared.store;
    let mut found: Vec<(usize, Bytes)> = Vec::new();
    {
        let mut all = store.lock_all();
        let sizes: Vec<usize> = (0..store.databases()).map(|db| all.dbsize(db)).collect();
        let mut wrapped = true;
        for shard in all.shards() {
            let end = (*cursor + limit).min(shard.slot_count());
            if end < shard.slot_count() {
                wrapped = false;
            }
            for slot in *cursor..end {
                for (db, _) in sizes.iter().enumerate().filter(|(_, n)| **n > 0) {
                    if let Some((key, e)) = shard.key_at_slot(db, slot, Millis(0)) {
                        if e.expires_at().is_some_and(|d| d <= now) {
                            found.push((db, Bytes::copy_from_slice(key)));
                        }
                    }
                }
            }
        }
        *cursor = if wrapped { 0 } else { *cursor + limit };
    }
    for (db, key) in &found {
        // The lookup at `now` removes the expired key.
        let gone = {
            let mut ks = store.lock_key(key);
            ks.shard(key).lookup(*db, key, now, Access::Peek).is_none()
        };
        if gone {
            emit(shared, class::EXPIRED, "expired", *db, key);
            shared.tracking.invalidate(shared, key, 0);
        }
    }
    shared.tracking.flush(shared);
    found.len()
}

/// Gets under `maxmemory` before a command that may grow memory, as
/// [`ferrum_store::Store::reserve_for_write`] does, evicting through
/// [`enforce_maxmemory`] so each victim raises its event and
/// invalidation.
///
/// # Errors
/// `OutOfMemory` when still over the limit with nothing left to evict.
pub(crate) fn reserve_for_write(shared: &Shared, now: Millis) -> Result<(), StoreError> {
    // A replica holds what its primary holds: it never evicts (Redis's
    // `replica-ignore-maxmemory yes`).
    if !shared.store.over_maxmemory() || shared.repl.is_replica() {
        return Ok(());
    }
    enforce_maxmemory(shared, now);
    if shared.store.over_maxmemory() {
        Err(StoreError::OutOfMemory)
    } else {
        Ok(())
    }
}

/// Evicts down to `maxmemory`, raising an `evicted` event and client-side
/// caching's invalidation for each victim when either is on (the store is
/// asked for the victims' names only then: off, eviction costs nothing
/// more).
pub(crate) fn enforce_maxmemory(shared: &Shared, now: Millis) {
    if shared.repl.is_replica() {
        return;
    }
    let replicate = shared.repl.active();
    let report =
        shared.notify.flags() & class::EVICTED != 0 || shared.tracking.active() || replicate;
    if !report {
        shared.store.enforce_maxmemory(now);
        return;
    }
    let mut victims = Vec::new();
    shared
        .store
        .enforce_maxmemory_reporting(now, &mut |db, key| {
            victims.push((db, Bytes::copy_from_slice(key)));
        });
    // Evictions go down the replication stream on their own, as Redis
    // sends them, unless the running call already collected commands:
    // then they join it, in order.
    let alone = replicate && !shared.repl.has_pending();
    for (db, key) in victims {
        emit(shared, class::EVICTED, "evicted", db, &key);
        shared.tracking.invalidate(shared, &key, 0);
        if replicate {
            shared.repl.push(db, vec![Bytes::from_static(b"DEL"), key]);
        }
    }
    if alone {
        super::flush_stream(shared, false);
    }
}
