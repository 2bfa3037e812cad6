//! `COMMAND GETKEYS` and `COMMAND GETKEYSANDFLAGS`: which arguments of a
//! full command line are keys, and what the command does to each.
//!
//! The table's first/last/step triple describes most commands. The others
//! ("movablekeys" in `COMMAND INFO`) find their keys the way Redis 7.0's key
//! specs and `getkeys_proc`s do: after a `numkeys` argument (`ZUNION`,
//! `LMPOP`, `EVAL`...), after `STREAMS` (`XREAD`), behind `STORE`
//! (`SORT`, `GEORADIUS`), or after a subcommand (`MEMORY USAGE`, `XGROUP`).
//! Only `COMMAND GETKEYS*` asks: the command path keeps using the triple.
//!
//! # COMMAND GETKEYS / GETKEYSANDFLAGS (design notes)
//!
//! **COMMAND GETKEYS / GETKEYSANDFLAGS** (`command/getkeys.rs`). The command path
//! finds keys by the table's first/last/step; these two answer for the
//! "movablekeys" commands too, as Redis 7.0's key specs do (after `numkeys`,
//! after `STREAMS`, behind the last `STORE`, after a container's subcommand),
//! and give each key a role (`RO access`, `RW access update`, `OW update`,
//! `RM delete`, and a move's `RW access delete` / `RW insert`) derived from
//! the command's flags and name, which matches Redis for the common commands
//! but not for every key spec.

use bytes::Bytes;

use super::CommandSpec;
use crate::parse::{is, parse_i64};

/// What a command does with one of its keys, as Redis's key-spec flags
/// name it (`RO access`, `OW update`...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyRole {
    /// Read (`GET`).
    Read,
    /// Looked at without reading the value: existence, type, length
    /// (`EXISTS`, `STRLEN`).
    Peek,
    /// Read, and changed in place from what it held (`INCR`).
    Modify,
    /// Elements or bytes added without reading (`LPUSH`, an `LMOVE` destination).
    Insert,
    /// Changed without being read (`HSET`, `EXPIRE`).
    Update,
    /// Elements taken out without being read (`SREM`, `LTRIM`).
    Delete,
    /// Written whole, whatever it held (`SET`, a `STORE` destination).
    Overwrite,
    /// Written whole only when absent (`SETNX`, `RENAMENX`'s destination).
    Create,
    /// Deleted (`DEL`, `UNLINK`).
    Remove,
    /// Read and elements taken out (`LPOP`, `LMOVE`'s source).
    MoveFrom,
    /// Read, with a cached result written back (`PFCOUNT`).
    CachedRead,
    /// Read and added to (`PFMERGE`'s destination).
    Merge,
}

impl KeyRole {
    /// Redis's flag words for this role, in `COMMAND GETKEYSANDFLAGS` order.
    pub(crate) fn flags(self) -> &'static [&'static str] {
        match self {
            KeyRole::Read => &["RO", "access"],
            KeyRole::Peek => &["RO"],
            KeyRole::Modify => &["RW", "access", "update"],
            KeyRole::Insert => &["RW", "insert"],
            KeyRole::Update => &["RW", "update"],
            KeyRole::Delete => &["RW", "delete"],
            KeyRole::Overwrite => &["OW", "update"],
            KeyRole::Create => &["OW", "insert"],
            KeyRole::Remove => &["RM", "delete"],
            KeyRole::MoveFrom => &["RW", "access", "delete"],
            KeyRole::CachedRead => &["RW", "access"],
            KeyRole::Merge => &["RW", "access", "insert"],
        }
    }

    /// Whether the role reads the value (Redis's `access` flag): what a
    /// `%R~` key pattern allows.
    pub(crate) fn reads(self) -> bool {
        self.flags().contains(&"access")
    }

    /// Whether the role changes the key (`insert`, `update` or `delete`):
    /// what a `%W~` key pattern allows.
    pub(crate) fn writes(self) -> bool {
        self.flags()
            .iter()
            .any(|f| matches!(*f, "insert" | "update" | "delete"))
    }
}

/// The role of every key of the commands whose keys all play one role, as
/// Redis 7.0's key specs give it. Commands not listed read their keys, or
/// modify them if they write.
#[rustfmt::skip]
const ROLES: &[(KeyRole, &[&str])] = &[
    (KeyRole::Peek, &["strlen", "llen", "hlen", "hexists", "hstrlen", "sismember", "scard", "zcard", "xlen", "exists", "touch", "type", "watch", "memory", "object"]),
    (KeyRole::Create, &["setnx", "msetnx"]),
    (KeyRole::Overwrite, &["setex", "psetex", "mset", "restore", "restore-asking"]),
    (KeyRole::MoveFrom, &["getdel", "lpop", "rpop", "blpop", "brpop", "lmpop", "blmpop", "spop", "zpopmin", "zpopmax", "bzpopmin", "bzpopmax", "zmpop", "bzmpop"]),
    (KeyRole::Insert, &["append", "lpush", "rpush", "lpushx", "rpushx", "linsert", "hsetnx", "sadd", "pfadd"]),
    (KeyRole::Update, &["setrange", "lset", "hset", "hmset", "zadd", "geoadd", "xadd", "xsetid", "xack", "xclaim", "expire", "pexpire", "expireat", "pexpireat", "persist"]),
    (KeyRole::Delete, &["lrem", "ltrim", "hdel", "srem", "zrem", "zremrangebyrank", "zremrangebyscore", "zremrangebylex", "xdel", "xautoclaim", "xtrim"]),
    (KeyRole::CachedRead, &["pfcount"]),
    (KeyRole::Remove, &["del", "unlink"]),
];

/// Commands whose first key is a destination with this role and whose
/// other keys are read.
const DEST_THEN_SOURCES: &[(&str, KeyRole)] = &[
    ("bitop", KeyRole::Overwrite),
    ("sinterstore", KeyRole::Update),
    ("sunionstore", KeyRole::Overwrite),
    ("sdiffstore", KeyRole::Overwrite),
    ("zrangestore", KeyRole::Overwrite),
    ("geosearchstore", KeyRole::Overwrite),
    ("pfmerge", KeyRole::Merge),
];

/// Commands with a source key and a destination key, and their roles.
const SOURCE_THEN_DEST: &[(&str, [KeyRole; 2])] = &[
    ("lmove", [KeyRole::MoveFrom, KeyRole::Insert]),
    ("blmove", [KeyRole::MoveFrom, KeyRole::Insert]),
    ("rpoplpush", [KeyRole::MoveFrom, KeyRole::Insert]),
    ("brpoplpush", [KeyRole::MoveFrom, KeyRole::Insert]),
    ("smove", [KeyRole::MoveFrom, KeyRole::Insert]),
    ("rename", [KeyRole::MoveFrom, KeyRole::Overwrite]),
    ("renamenx", [KeyRole::MoveFrom, KeyRole::Create]),
    ("copy", [KeyRole::Read, KeyRole::Overwrite]),
];

/// Commands whose keys follow a `numkeys` argument, with its position.
const NUMKEYS_AT: &[(&str, usize)] = &[
    ("zunion", 1),
    ("zinter", 1),
    ("zdiff", 1),
    ("zintercard", 1),
    ("sintercard", 1),
    ("lmpop", 1),
    ("zmpop", 1),
    ("blmpop", 2),
    ("bzmpop", 2),
    ("eval", 2),
    ("evalsha", 2),
    ("eval_ro", 2),
    ("evalsha_ro", 2),
    ("fcall", 2),
    ("fcall_ro", 2),
];

/// Scripts that may write whatever keys they are given.
const SCRIPTS_THAT_WRITE: &[&str] = &["eval", "evalsha", "fcall"];

/// Commands that store into their first key and read `numkeys` keys after it.
const DEST_THEN_NUMKEYS: &[&str] = &["zunionstore", "zinterstore", "zdiffstore"];

/// Container commands whose subcommands take a key right after them.
const KEY_AFTER_SUBCOMMAND: &[&str] = &["memory", "xgroup", "xinfo", "object"];

/// The keys of `args` (the full command line, name first) for `spec`, each
/// with its role; `None` when the arguments do not fit the command's syntax
/// (a `numkeys` that is not a number or exceeds the arguments).
pub(crate) fn command_keys(spec: &CommandSpec, args: &[Bytes]) -> Option<Vec<(Bytes, KeyRole)>> {
    let name = spec.name;
    let default = default_role(spec);
    let all = |keys: &[Bytes], role: KeyRole| keys.iter().map(|k| (k.clone(), role)).collect();
    if let Some(&(_, at)) = NUMKEYS_AT.iter().find(|(n, _)| *n == name) {
        let keys = after_numkeys(args, at);
        if keys.is_none() && keys_optional(spec) {
            return Some(Vec::new());
        }
        return Some(all(keys?, default));
    }
    if DEST_THEN_NUMKEYS.contains(&name) {
        let mut keys = vec![(args.get(1)?.clone(), KeyRole::Overwrite)];
        keys.extend(all(after_numkeys(args, 2)?, KeyRole::Read));
        return Some(keys);
    }
    if KEY_AFTER_SUBCOMMAND.contains(&name) {
        return Some(all(args.get(2..3).unwrap_or_default(), default));
    }
    if let Some((_, role)) = DEST_THEN_SOURCES.iter().find(|(n, _)| *n == name) {
        let roles = std::iter::once(*role).chain(std::iter::repeat(KeyRole::Read));
        return Some(spec.keys(args).cloned().zip(roles).collect());
    }
    if let Some((_, roles)) = SOURCE_THEN_DEST.iter().find(|(n, _)| *n == name) {
        return Some(spec.keys(args).cloned().zip(*roles).collect());
    }
    match name {
        "sort" | "sort_ro" | "georadius" | "georadiusbymember" => {
            Some(key_then_stores(args, &["store", "storedist"]))
        }
        "xread" | "xreadgroup" => Some(all(after_streams(args)?, default)),
        "migrate" => {
            // Redis answers "invalid arguments" for a call without keys.
            let keys = &args[layout(args).keys];
            (!keys.is_empty()).then(|| all(keys, KeyRole::MoveFrom))
        }
        "set" => Some(all(args.get(1..2)?, set_role(args))),
        "bitfield" => Some(all(args.get(1..2)?, bitfield_role(args))),
        _ => Some(spec.keys(args).map(|k| (k.clone(), default)).collect()),
    }
}

/// Whether `spec`'s keys may all be missing (Redis's `NO_MANDATORY_KEYS`,
/// which is the scripts: `EVAL*` and `FCALL*`, the rows flagged
/// `EXCLUSIVE`): `COMMAND GETKEYS` then answers an empty list rather than
/// an error, even when `numkeys` is not a number or exceeds the
/// arguments, as Redis 7.0 does.
pub(crate) fn keys_optional(spec: &CommandSpec) -> bool {
    spec.has(super::flag::EXCLUSIVE)
}

/// The role every key of `spec` has unless the command says otherwise.
fn default_role(spec: &CommandSpec) -> KeyRole {
    if let Some((role, _)) = ROLES.iter().find(|(_, names)| names.contains(&spec.name)) {
        return *role;
    }
    if SCRIPTS_THAT_WRITE.contains(&spec.name) {
        return KeyRole::Modify;
    }
    if spec.has(super::flag::WRITE) {
        KeyRole::Modify
    } else {
        KeyRole::Read
    }
}

/// `SET` reads its key only with `GET`, as Redis's `setGetKeys` decides.
fn set_role(args: &[Bytes]) -> KeyRole {
    if args.iter().skip(3).any(|a| is(a, "get")) {
        KeyRole::Modify
    } else {
        KeyRole::Overwrite
    }
}

/// `BITFIELD` with nothing but `GET`s (and `OVERFLOW`) only reads, as
/// Redis's `bitfieldGetKeys` decides; anything else may write.
fn bitfield_role(args: &[Bytes]) -> KeyRole {
    let mut i = 2;
    while i < args.len() {
        let rest = args.len() - i - 1;
        if is(&args[i], "get") && rest >= 2 {
            i += 3;
        } else if is(&args[i], "overflow") && rest >= 1 {
            i += 2;
        } else {
            return KeyRole::Modify;
        }
    }
    KeyRole::Read
}

/// The `numkeys` keys after the `numkeys` argument at `at`.
fn after_numkeys(args: &[Bytes], at: usize) -> Option<&[Bytes]> {
    let n = usize::try_from(parse_i64(args.get(at)?)?).ok()?;
    args.get(at + 1..at + 1 + n)
}

/// The first key, read, and the argument after the last of `words` (Redis
/// keeps the last `STORE`), overwritten.
fn key_then_stores(args: &[Bytes], words: &[&str]) -> Vec<(Bytes, KeyRole)> {
    let mut keys: Vec<(Bytes, KeyRole)> = args
        .get(1)
        .map(|k| (k.clone(), KeyRole::Read))
        .into_iter()
        .collect();
    let store = args
        .windows(2)
        .skip(2)
        .filter(|w| words.iter().any(|word| is(&w[0], word)))
        .last()
        .map(|w| w[1].clone());
    keys.extend(store.map(|k| (k, KeyRole::Overwrite)));
    keys
}

/// XREAD's and XREADGROUP's keys: the first half of what follows `STREAMS`.
fn after_streams(args: &[Bytes]) -> Option<&[Bytes]> {
    let at = args.iter().position(|a| is(a, "streams"))? + 1;
    let rest = &args[at..];
    (rest.len() % 2 == 0).then(|| &rest[..rest.len() / 2])
}

/// Where a `MIGRATE` call's keys and credentials are, read leniently as
/// Redis's `migrateGetKeys` reads it (an unknown word is skipped, not
/// refused: the command itself refuses it).
pub(crate) struct Layout {
    /// The key argument, or what follows `KEYS`; empty for `KEYS` after a
    /// key argument, which the command refuses.
    pub(crate) keys: std::ops::Range<usize>,
    /// The arguments of `AUTH` and `AUTH2`.
    pub(crate) secrets: Vec<usize>,
}

/// The layout of the `MIGRATE` call `args`.
pub(crate) fn layout(args: &[Bytes]) -> Layout {
    let mut layout = Layout {
        keys: 3.min(args.len())..4.min(args.len()),
        secrets: Vec::new(),
    };
    let mut i = 6;
    while i < args.len() {
        let a = &args[i];
        let takes = if is(a, "auth") {
            1
        } else if is(a, "auth2") {
            2
        } else if is(a, "keys") {
            let after_key = args.get(3).is_some_and(|k| !k.is_empty());
            layout.keys = if after_key { 0..0 } else { i + 1..args.len() };
            break;
        } else {
            0
        };
        layout
            .secrets
            .extend((i + 1..=i + takes).filter(|&j| j < args.len()));
        i += 1 + takes;
    }
    layout
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::lookup;

    fn keys(line: &str) -> Option<Vec<(String, KeyRole)>> {
        let args: Vec<Bytes> = line
            .split(' ')
            .map(|a| Bytes::copy_from_slice(a.as_bytes()))
            .collect();
        let spec = lookup(&args[0]).expect("a command of the table");
        let found = command_keys(spec, &args)?;
        Some(
            found
                .into_iter()
                .map(|(k, r)| (String::from_utf8_lossy(&k).into_owned(), r))
                .collect(),
        )
    }

    fn names(line: &str) -> Vec<String> {
        keys(line)
            .unwrap_or_default()
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    }

    #[test]
    fn movable_keys_are_found_as_redis_finds_them() {
        assert_eq!(names("zunionstore t 2 a b WEIGHTS 1 2"), ["t", "a", "b"]);
        assert_eq!(
            names("sort abc store invalid store stillbad store def"),
            ["abc", "def"]
        );
        assert_eq!(names("memory usage k"), ["k"]);
        assert_eq!(names("xgroup create k g $"), ["k"]);
        assert_eq!(names("xread count 2 streams s1 s2 0 0"), ["s1", "s2"]);
        assert_eq!(names("blmpop 0 2 l1 l2 left"), ["l1", "l2"]);
        assert_eq!(names("lcs k1 k2"), ["k1", "k2"]);
        assert_eq!(keys("zunion x a"), None);
        assert_eq!(names("migrate h 1 k 0 0"), ["k"]);
        assert_eq!(
            names("migrate h 1 k 0 0 copy auth keys keys2 auth2 u keys"),
            ["k"]
        );
        assert_eq!(names("migrate h 1  0 0 replace keys a b"), ["a", "b"]);
        assert_eq!(keys("migrate h 1 k 0 0 keys a"), None);
        assert_eq!(keys("migrate h 1  0 0 keys"), None);
        assert_eq!(keys("zunion 3 a"), None);
    }

    #[test]
    fn scripts_keys_follow_numkeys_and_may_be_missing() {
        assert_eq!(names("eval s 2 a b c"), ["a", "b"]);
        assert_eq!(names("evalsha_ro s 1 a b"), ["a"]);
        assert_eq!(names("fcall f 2 a b c"), ["a", "b"]);
        for line in ["eval s 0", "eval s 5 a", "eval s x a", "fcall f -1 a"] {
            assert_eq!(keys(line), Some(Vec::new()), "{line}");
        }
        let role = |line| keys(line).unwrap()[0].1;
        assert_eq!(role("eval s 1 a"), KeyRole::Modify);
        assert_eq!(role("fcall f 1 a"), KeyRole::Modify);
        assert_eq!(role("eval_ro s 1 a"), KeyRole::Read);
        assert_eq!(role("fcall_ro f 1 a"), KeyRole::Read);
    }

    #[test]
    fn roles_follow_the_command() {
        let roles = |line| {
            keys(line)
                .unwrap()
                .into_iter()
                .map(|(_, r)| r)
                .collect::<Vec<_>>()
        };
        assert_eq!(roles("set k v"), [KeyRole::Overwrite]);
        assert_eq!(
            roles("lmove a b left right"),
            [KeyRole::MoveFrom, KeyRole::Insert]
        );
        assert_eq!(roles("sort a store b"), [KeyRole::Read, KeyRole::Overwrite]);
        assert_eq!(roles("incr a"), [KeyRole::Modify]);
        assert_eq!(roles("get a"), [KeyRole::Read]);
    }
}
