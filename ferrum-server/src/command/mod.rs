//! The command table: what each command is (name, arity, flags, ACL
//! categories, key positions, docs), without what it does.
//!
//! The handlers live in `cmd`, which maps each row of [`COMMANDS`] to its
//! function; everything below the command layer that needs to know about
//! commands (ACL rules, per-command statistics, `rename-command`, a
//! client's last command in `CLIENT LIST`) reads this module instead, so it
//! does not depend on the handlers.

pub(crate) mod category;
pub(crate) mod getkeys;
pub(crate) mod rename;
mod table;

use std::collections::HashMap;
use std::sync::LazyLock;

use bytes::Bytes;

pub(crate) use table::{COMMANDS, SUBCOMMANDS};

/// Command flags, as `COMMAND INFO` reports them.
pub(crate) mod flag {
    /// May modify the keyspace.
    pub(crate) const WRITE: u32 = 1 << 0;
    /// Only reads.
    pub(crate) const READONLY: u32 = 1 << 1;
    /// May grow memory: refused with OOM over `maxmemory`.
    pub(crate) const DENYOOM: u32 = 1 << 2;
    /// O(1) or O(log n).
    pub(crate) const FAST: u32 = 1 << 3;
    /// Administrative.
    pub(crate) const ADMIN: u32 = 1 << 4;
    /// Allowed before `AUTH`.
    pub(crate) const NO_AUTH: u32 = 1 << 5;
    /// Runs at once inside `MULTI` instead of being queued.
    pub(crate) const NO_QUEUE: u32 = 1 << 6;
    /// Not allowed inside `MULTI` at all.
    pub(crate) const NO_MULTI: u32 = 1 << 7;
    /// Allowed on a replica whose data is stale (Redis's `CMD_STALE`;
    /// reported only: FerrumKV is never a replica).
    pub(crate) const STALE: u32 = 1 << 8;
    /// Has subcommands (`CLIENT LIST`): reported as `client|list`.
    pub(crate) const CONTAINER: u32 = 1 << 9;
    /// May block the client (BLPOP and friends).
    pub(crate) const BLOCKING: u32 = 1 << 10;
    /// A Pub/Sub command.
    pub(crate) const PUBSUB: u32 = 1 << 11;
    /// Allowed while a RESP2 client is subscribed (`SUBSCRIBE`, `PING`, ...).
    pub(crate) const SUBSCRIBED_OK: u32 = 1 << 12;
    /// Refused from scripts (`redis.call('eval', ...)`, `MULTI`, `BLPOP`).
    pub(crate) const NO_SCRIPT: u32 = 1 << 13;
    /// Runs with the transaction gate's write side held: nothing else runs
    /// meanwhile (`EVAL`, `FCALL`).
    pub(crate) const EXCLUSIVE: u32 = 1 << 14;
    /// The handler raises its keys' notifications and tracking
    /// invalidations itself, for keys the table's first/last/step cannot
    /// name (`MIGRATE ... KEYS a b`).
    pub(crate) const SIGNALS_KEYS: u32 = 1 << 15;
    /// Runs while the snapshot loads at start; the others are refused
    /// with `-LOADING` (Redis's `ok-loading`).
    pub(crate) const LOADING: u32 = 1 << 16;
    /// Redis's flags that decide nothing here yet, reported as Redis 7.0
    /// reports them: not fed to `MONITOR` as such (a script's commands
    /// are), kept out of the slow log as such (`EXEC`), served to a
    /// client that asked (`ASKING`) only, keys all optional, refused
    /// during an asynchronous load, allowed while a script runs too long.
    pub(crate) const SKIP_MONITOR: u32 = 1 << 17;
    pub(crate) const SKIP_SLOWLOG: u32 = 1 << 18;
    pub(crate) const ASKING: u32 = 1 << 19;
    pub(crate) const NO_MANDATORY_KEYS: u32 = 1 << 20;
    pub(crate) const NO_ASYNC_LOADING: u32 = 1 << 21;
    pub(crate) const ALLOW_BUSY: u32 = 1 << 22;

    /// Flag names in `COMMAND INFO` order (Redis 7.0's
    /// `addReplyFlagsForCommand`), but for `movablekeys`, which comes
    /// after these, and `allow_busy`, last ([`AFTER_MOVABLE`]).
    pub(crate) const NAMES: &[(u32, &str)] = &[
        (WRITE, "write"),
        (READONLY, "readonly"),
        (DENYOOM, "denyoom"),
        (ADMIN, "admin"),
        (PUBSUB, "pubsub"),
        (NO_SCRIPT, "noscript"),
        (BLOCKING, "blocking"),
        (LOADING, "loading"),
        (STALE, "stale"),
        (SKIP_MONITOR, "skip_monitor"),
        (SKIP_SLOWLOG, "skip_slowlog"),
        (ASKING, "asking"),
        (FAST, "fast"),
        (NO_AUTH, "no_auth"),
        (NO_MANDATORY_KEYS, "no_mandatory_keys"),
        (NO_ASYNC_LOADING, "no_async_loading"),
        (NO_MULTI, "no_multi"),
    ];

    /// The flag named after `movablekeys`.
    pub(crate) const AFTER_MOVABLE: (u32, &str) = (ALLOW_BUSY, "allow_busy");
}

/// One row of the command table, which backs dispatch and `COMMAND`.
#[derive(Debug)]
pub(crate) struct CommandSpec {
    /// Lower-case name.
    pub(crate) name: &'static str,
    /// Redis arity: `n` exactly n arguments (name included), `-n` at least n.
    pub(crate) arity: i32,
    /// Bits from [`flag`].
    pub(crate) flags: u32,
    /// ACL categories: bits from [`category`].
    pub(crate) categories: u32,
    /// Position of the first key argument, 0 if none.
    pub(crate) first_key: i32,
    /// Position of the last key argument; negative counts from the end.
    pub(crate) last_key: i32,
    /// Step between key arguments.
    pub(crate) step: i32,
    /// Command group for `COMMAND DOCS` (`string`, `generic`, `server`, ...).
    pub(crate) group: &'static str,
    /// One-line summary for `COMMAND DOCS`.
    pub(crate) summary: &'static str,
}

/// Whether `argc` arguments (the name included) fit a Redis arity: `n`
/// exactly n, `-n` at least n.
pub(crate) fn arity_fits(arity: i32, argc: usize) -> bool {
    let argc = argc as i64;
    let arity = i64::from(arity);
    if arity >= 0 {
        argc == arity
    } else {
        argc >= -arity
    }
}

impl CommandSpec {
    pub(crate) fn arity_ok(&self, argc: usize) -> bool {
        arity_fits(self.arity, argc)
    }

    /// This row's position in [`COMMANDS`], for per-command counters.
    pub(crate) fn index(&'static self) -> usize {
        let base = COMMANDS.as_ptr() as usize;
        (self as *const CommandSpec as usize - base) / std::mem::size_of::<CommandSpec>()
    }

    pub(crate) fn has(&self, f: u32) -> bool {
        self.flags & f != 0
    }

    /// The key arguments of a call, by the table's first/last/step.
    pub(crate) fn keys<'a>(&self, args: &'a [Bytes]) -> impl Iterator<Item = &'a Bytes> {
        let (first, step) = (self.first_key.max(0) as usize, self.step.max(1) as usize);
        let last = if self.last_key < 0 {
            args.len() as i64 + i64::from(self.last_key)
        } else {
            i64::from(self.last_key)
        };
        let range = if first == 0 || last < first as i64 {
            0..0
        } else {
            first..(last as usize + 1).min(args.len())
        };
        args[range].iter().step_by(step)
    }
}

/// Command names of up to [`PACKED`] bytes, lower-cased and packed into
/// one integer (see [`pack`]), to rows. Every command looks its name up
/// here: an integer key hashes in a few instructions and compares in one,
/// where std's SipHash over a byte slice and a `memcmp` cost about 150 a
/// command. The names are our own table's, so a flooding-resistant hash
/// protects nothing.
static BY_NAME: LazyLock<HashMap<u128, &'static CommandSpec, foldhash::fast::FixedState>> =
    LazyLock::new(|| {
        COMMANDS
            .iter()
            .filter_map(|c| Some((pack(c.name.as_bytes())?, c)))
            .collect()
    });

/// Rows whose names are longer than [`PACKED`] bytes (`georadiusbymember_ro`).
static BY_LONG_NAME: LazyLock<
    HashMap<&'static [u8], &'static CommandSpec, foldhash::fast::FixedState>,
> = LazyLock::new(|| {
    COMMANDS
        .iter()
        .filter(|c| pack(c.name.as_bytes()).is_none())
        .map(|c| (c.name.as_bytes(), c))
        .collect()
});

/// The longest name [`pack`] packs.
const PACKED: usize = 15;

/// `name` lower-cased into the low bytes of a `u128`, its length in the top
/// byte (so `get` and `get\0` differ); `None` past [`PACKED`] bytes.
fn pack(name: &[u8]) -> Option<u128> {
    if name.len() > PACKED {
        return None;
    }
    let mut b = [0u8; 16];
    for (d, s) in b.iter_mut().zip(name) {
        *d = s.to_ascii_lowercase();
    }
    b[15] = name.len() as u8;
    Some(u128::from_le_bytes(b))
}

/// Finds a command by name, case-insensitively, without allocating.
pub(crate) fn lookup(name: &[u8]) -> Option<&'static CommandSpec> {
    if let Some(key) = pack(name) {
        return BY_NAME.get(&key).copied();
    }
    let mut buf = [0u8; 32];
    let lower = buf.get_mut(..name.len())?;
    for (d, s) in lower.iter_mut().zip(name) {
        *d = s.to_ascii_lowercase();
    }
    BY_LONG_NAME.get(&lower[..]).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_is_case_insensitive_and_bounded() {
        assert_eq!(lookup(b"GeT").map(|c| c.name), Some("get"));
        assert!(lookup(b"nosuchcommand").is_none());
        assert!(lookup(&[b'a'; 100]).is_none());
        // The length is part of the packed key.
        assert!(lookup(b"get\0").is_none());
        assert!(lookup(b"").is_none());
    }

    #[test]
    fn every_row_is_found_by_its_name_in_any_case() {
        let mut long = 0;
        for c in COMMANDS {
            let upper = c.name.to_ascii_uppercase();
            for name in [c.name.as_bytes(), upper.as_bytes()] {
                let found = lookup(name).map(|s| s.name);
                assert_eq!(found, Some(c.name), "{}", String::from_utf8_lossy(name));
            }
            long += usize::from(c.name.len() > PACKED);
        }
        // Both maps are in use: some names are longer than a packed key.
        assert!(long > 0);
        assert_eq!(BY_NAME.len() + BY_LONG_NAME.len(), COMMANDS.len());
    }

    #[test]
    fn every_command_has_one_row() {
        let mut names: Vec<_> = COMMANDS.iter().map(|c| c.name).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "duplicate command rows");
        for c in COMMANDS {
            assert_eq!(c.name, c.name.to_ascii_lowercase());
            assert_ne!(c.arity, 0, "{} has no arity", c.name);
        }
    }

    #[test]
    fn rows_know_their_index() {
        for (i, c) in COMMANDS.iter().enumerate() {
            assert_eq!(c.index(), i);
        }
    }

    #[test]
    fn key_positions_follow_the_table() {
        let args: Vec<Bytes> = ["mset", "a", "1", "b", "2"].map(Bytes::from).to_vec();
        let mset = lookup(b"mset").expect("mset row");
        let keys: Vec<_> = mset.keys(&args).map(|k| &k[..]).collect();
        assert_eq!(keys, [&b"a"[..], b"b"]);
    }
}
