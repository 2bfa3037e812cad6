//! Keyspace notifications (`notify-keyspace-events`), as Redis sends them:
//! a write publishes `__keyspace@<db>__:<key>` with the event's name as the
//! message (class `K`) and `__keyevent@<db>__:<event>` with the key as the
//! message (class `E`), through ordinary Pub/Sub.
//!
//! **Cost when off.** The parameter is empty by default; the command path
//! then reads one relaxed atomic ([`Notifier::flags`]) and does nothing
//! else. Events are only worked out when some class is enabled.
//!
//! **Where events come from.** Redis raises events inside each command's
//! implementation. FerrumKV raises them in the command layer, around the
//! handler (`cmd/notify.rs`, which names each command's events): before the command it
//! peeks at each key argument (whether it exists, and whether it is past its
//! TTL, which the command's own lookup is about to expire: an `expired`
//! event); after it, it names the command's event from the command, its
//! arguments and its reply (`SREM` that removed nothing, `SET NX` that set
//! nothing send no event, as in Redis), adds `new` for keys that did not
//! exist before, and `del` for a collection the command emptied. Keys that
//! expire in the background are reported by [`sweep_expired`], called from
//! the expiry timer while class `x` is on, evicted keys by
//! [`enforce_maxmemory`] while class `e` (or tracking) is on. Known gaps:
//! keys expired by commands without key arguments (`KEYS`, `SCAN`, `RANDOMKEY`), nor the
//! writes of a blocked command served later (`BLPOP` woken by a push).

use std::sync::atomic::{AtomicU32, Ordering};

use bytes::Bytes;
use ferrum_store::{Access, Millis};

use crate::shared::Shared;

/// Event classes, one bit each (Redis's `NOTIFY_*`).
pub(crate) mod class {
    /// `K`: publish to `__keyspace@<db>__:<key>`.
    pub(crate) const KEYSPACE: u32 = 1 << 0;
    /// `E`: publish to `__keyevent@<db>__:<event>`.
    pub(crate) const KEYEVENT: u32 = 1 << 1;
    /// `g`: generic commands (DEL, EXPIRE, RENAME, ...).
    pub(crate) const GENERIC: u32 = 1 << 2;
    /// `$`: string commands.
    pub(crate) const STRING: u32 = 1 << 3;
    /// `l`: list commands.
    pub(crate) const LIST: u32 = 1 << 4;
    /// `s`: set commands.
    pub(crate) const SET: u32 = 1 << 5;
    /// `h`: hash commands.
    pub(crate) const HASH: u32 = 1 << 6;
    /// `z`: sorted-set commands.
    pub(crate) const ZSET: u32 = 1 << 7;
    /// `x`: a key expired.
    pub(crate) const EXPIRED: u32 = 1 << 8;
    /// `e`: a key was evicted.
    pub(crate) const EVICTED: u32 = 1 << 9;
    /// `t`: stream commands.
    pub(crate) const STREAM: u32 = 1 << 10;
    /// `m`: a read found no key.
    pub(crate) const KEY_MISS: u32 = 1 << 11;
    /// `d`: module events (none here; accepted for compatibility).
    pub(crate) const MODULE: u32 = 1 << 12;
    /// `n`: a key was created.
    pub(crate) const NEW: u32 = 1 << 13;
    /// `A`: every class but `m` and `n`.
    pub(crate) const ALL: u32 =
        GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM | MODULE;
}

/// Parses a `notify-keyspace-events` value; `None` on a character that
/// names no class.
pub(crate) fn parse_flags(text: &[u8]) -> Option<u32> {
    let mut flags = 0;
    for &c in text {
        flags |= match c {
            b'A' => class::ALL,
            b'g' => class::GENERIC,
            b'$' => class::STRING,
            b'l' => class::LIST,
            b's' => class::SET,
            b'h' => class::HASH,
            b'z' => class::ZSET,
            b'x' => class::EXPIRED,
            b'e' => class::EVICTED,
            b'K' => class::KEYSPACE,
            b'E' => class::KEYEVENT,
            b't' => class::STREAM,
            b'm' => class::KEY_MISS,
            b'd' => class::MODULE,
            b'n' => class::NEW,
            _ => return None,
        };
    }
    Some(flags)
}

/// The canonical text of `flags`, as `CONFIG GET` shows it (`KA` reads
/// back as `AK`).
pub(crate) fn flags_to_string(flags: u32) -> String {
    let mut s = String::new();
    if flags & class::ALL == class::ALL {
        s.push('A');
    } else {
        for (bit, c) in [
            (class::GENERIC, 'g'),
            (class::STRING, '$'),
            (class::LIST, 'l'),
            (class::SET, 's'),
            (class::HASH, 'h'),
            (class::ZSET, 'z'),
            (class::EXPIRED, 'x'),
            (class::EVICTED, 'e'),
            (class::STREAM, 't'),
            (class::MODULE, 'd'),
            (class::NEW, 'n'),
        ] {
            if flags & bit != 0 {
                s.push(c);
            }
        }
    }
    for (bit, c) in [
        (class::KEYSPACE, 'K'),
        (class::KEYEVENT, 'E'),
        (class::KEY_MISS, 'm'),
    ] {
        if flags & bit != 0 {
            s.push(c);
        }
    }
    s
}

/// The enabled classes, shared by every connection.
#[derive(Debug, Default)]
pub(crate) struct Notifier {
    flags: AtomicU32,
}

impl Notifier {
    /// The enabled classes; 0 when nothing is ever sent (no `K` and no `E`,
    /// or no event class).
    pub(crate) fn flags(&self) -> u32 {
        self.flags.load(Ordering::Relaxed)
    }

    /// Installs the parameter's value (already validated by the config).
    pub(crate) fn install(&self, text: &str) {
        let flags = parse_flags(text.as_bytes()).unwrap_or(0);
        let sends = flags & (class::KEYSPACE | class::KEYEVENT) != 0
            && flags & !(class::KEYSPACE | class::KEYEVENT) != 0;
        self.flags
            .store(if sends { flags } else { 0 }, Ordering::Relaxed);
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

/// Evicts down to `maxmemory`, raising an `evicted` event and client-side
/// caching's invalidation for each victim when either is on (the store is
/// asked for the victims' names only then: off, eviction costs nothing
/// more).
pub(crate) fn enforce_maxmemory(shared: &Shared, now: Millis) {
    let report = shared.notify.flags() & class::EVICTED != 0 || shared.tracking.active();
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
    for (db, key) in victims {
        emit(shared, class::EVICTED, "evicted", db, &key);
        shared.tracking.invalidate(shared, &key, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_read_back_as_redis_prints_them() {
        for (given, shown) in [
            ("KA", "AK"),
            ("EA", "AE"),
            ("gKE", "gKE"),
            ("$lshzxeKE", "$lshzxeKE"),
            ("Kmn", "nKm"),
            ("AKEmnd", "AKEm"),
            ("", ""),
        ] {
            let flags = parse_flags(given.as_bytes()).expect("valid");
            assert_eq!(flags_to_string(flags), shown, "{given}");
        }
        assert_eq!(parse_flags(b"KQ"), None);
    }

    #[test]
    fn nothing_is_sent_without_k_or_e_or_without_a_class() {
        let n = Notifier::default();
        n.install("A");
        assert_eq!(n.flags(), 0);
        n.install("K");
        assert_eq!(n.flags(), 0);
        n.install("Kg");
        assert_ne!(n.flags(), 0);
        n.install("");
        assert_eq!(n.flags(), 0);
    }
}
