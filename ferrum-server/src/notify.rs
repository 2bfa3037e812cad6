//! Keyspace notifications (`notify-keyspace-events`), as Redis sends them:
//! a write publishes `__keyspace@<db>__:<key>` with the event's name as the
//! message (class `K`) and `__keyevent@<db>__:<event>` with the key as the
//! message (class `E`), through ordinary Pub/Sub.
//!
//! **Cost when off.** The parameter is empty by default; the command path
//! then reads one relaxed atomic ([`Notifier::flags`]) and does nothing
//! else. Events are only worked out when some class is enabled.
//!
//! This module holds which classes are on (the parameter's parsing, and
//! [`Notifier`] in `Shared`); raising events is the command layer's
//! (`cmd/notify.rs`).
//!
//! **Where events come from.** Redis raises events inside each command's
//! implementation. FerrumKV raises them in the command layer, around the
//! handler: before the command it peeks at each key argument (whether it exists, and whether it is past its
//! TTL, which the command's own lookup is about to expire: an `expired`
//! event); after it, it names the command's event from the command, its
//! arguments and its reply (`SREM` that removed nothing, `SET NX` that set
//! nothing send no event, as in Redis), adds `new` for keys that did not
//! exist before, and `del` for a collection the command emptied. Keys that
//! expire in the background are reported by `cmd::notify::sweep_expired`,
//! called from the expiry timer while class `x` is on, evicted keys by
//! `cmd::notify::enforce_maxmemory` while class `e` (or tracking) is on. Known gaps:
//! keys expired by commands without key arguments (`KEYS`, `SCAN`, `RANDOMKEY`), nor the
//! writes of a blocked command served later (`BLPOP` woken by a push).
//!
//! # Keyspace notifications (design notes)
//!
//! **Keyspace notifications** (`notify.rs`, `cmd/notify.rs`). With `notify-keyspace-events`
//! empty (the default) the command path reads one relaxed atomic and nothing
//! more. Otherwise `cmd::run` peeks at the key arguments before the handler
//! (existence; a key past its TTL is reported `expired`, as the handler's
//! lookup removes it) and, after a successful write, names the command's
//! events from its name, arguments and reply, adds `new` and the `del` of a
//! drained collection, and publishes through `Shared::pubsub`. While class `x`
//! is on, the expiry timer walks the slot tables itself (1,024 slots a shard a
//! tick) instead of the store's sampling cycle, which removes keys without
//! naming them. Evictions are not reported: the store does not name its victims.

use std::sync::atomic::{AtomicU32, Ordering};

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
