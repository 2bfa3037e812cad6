//! ACL command categories (`@read`, `@string`, `@dangerous`...): the bits
//! each row of the command table carries, as Redis 7.0's `COMMAND INFO`
//! reports them, and the subcommands of container commands with theirs.
//!
//! `ACL SETUSER +@category` and `ACL CAT` read these; the table is the one
//! place a command's categories are written down.

use bytes::Bytes;

use super::{flag, CommandSpec, SUBCOMMANDS};

/// `@keyspace`: generic key commands.
pub(crate) const KEYSPACE: u32 = 1 << 0;
/// `@read`: reads keys.
pub(crate) const READ: u32 = 1 << 1;
/// `@write`: writes keys.
pub(crate) const WRITE: u32 = 1 << 2;
/// `@set`: the set type.
pub(crate) const SET: u32 = 1 << 3;
/// `@sortedset`: the sorted-set type.
pub(crate) const SORTEDSET: u32 = 1 << 4;
/// `@list`: the list type.
pub(crate) const LIST: u32 = 1 << 5;
/// `@hash`: the hash type.
pub(crate) const HASH: u32 = 1 << 6;
/// `@string`: the string type.
pub(crate) const STRING: u32 = 1 << 7;
/// `@bitmap`: bit operations on strings.
pub(crate) const BITMAP: u32 = 1 << 8;
/// `@hyperloglog`: HyperLogLog.
pub(crate) const HYPERLOGLOG: u32 = 1 << 9;
/// `@geo`: geospatial indexes.
pub(crate) const GEO: u32 = 1 << 10;
/// `@stream`: streams.
pub(crate) const STREAM: u32 = 1 << 11;
/// `@pubsub`: Pub/Sub.
pub(crate) const PUBSUB: u32 = 1 << 12;
/// `@admin`: administrative.
pub(crate) const ADMIN: u32 = 1 << 13;
/// `@fast`: O(1) or O(log n).
pub(crate) const FAST: u32 = 1 << 14;
/// `@slow`: everything not `@fast`.
pub(crate) const SLOW: u32 = 1 << 15;
/// `@blocking`: may block the client.
pub(crate) const BLOCKING: u32 = 1 << 16;
/// `@dangerous`: may harm the server or its data.
pub(crate) const DANGEROUS: u32 = 1 << 17;
/// `@connection`: about the connection.
pub(crate) const CONNECTION: u32 = 1 << 18;
/// `@transaction`: `MULTI` and friends.
pub(crate) const TRANSACTION: u32 = 1 << 19;
/// `@scripting`: Lua scripts and functions.
pub(crate) const SCRIPTING: u32 = 1 << 20;

/// Every category with its name, in Redis's `ACL CAT` order (which is also
/// the order `ACL GETUSER` tries them in when it describes a user).
pub(crate) const NAMES: &[(u32, &str)] = &[
    (KEYSPACE, "keyspace"),
    (READ, "read"),
    (WRITE, "write"),
    (SET, "set"),
    (SORTEDSET, "sortedset"),
    (LIST, "list"),
    (HASH, "hash"),
    (STRING, "string"),
    (BITMAP, "bitmap"),
    (HYPERLOGLOG, "hyperloglog"),
    (GEO, "geo"),
    (STREAM, "stream"),
    (PUBSUB, "pubsub"),
    (ADMIN, "admin"),
    (FAST, "fast"),
    (SLOW, "slow"),
    (BLOCKING, "blocking"),
    (DANGEROUS, "dangerous"),
    (CONNECTION, "connection"),
    (TRANSACTION, "transaction"),
    (SCRIPTING, "scripting"),
];

/// The category called `name` (without the `@`), case-insensitively.
pub(crate) fn by_name(name: &[u8]) -> Option<u32> {
    NAMES
        .iter()
        .find(|(_, n)| n.as_bytes().eq_ignore_ascii_case(name))
        .map(|&(bit, _)| bit)
}

/// The names of the categories in `bits`, `@`-prefixed, in [`NAMES`] order.
pub(crate) fn names_of(bits: u32) -> impl Iterator<Item = String> {
    NAMES
        .iter()
        .filter(move |(bit, _)| bits & bit != 0)
        .map(|(_, name)| format!("@{name}"))
}

/// The names of every command and subcommand in category `bit`, each row
/// followed by its subcommands (`ACL CAT category`).
pub(crate) fn commands_in(bit: u32) -> impl Iterator<Item = &'static str> {
    super::COMMANDS.iter().flat_map(move |spec| {
        let row = (spec.categories & bit != 0).then_some(spec.name);
        let subs = subcommands_of(spec)
            .filter(move |(_, s)| s.categories & bit != 0)
            .map(|(_, s)| s.full_name);
        row.into_iter().chain(subs)
    })
}

/// One subcommand of a container command, as ACL rules and `COMMAND LIST`
/// name it (`config|get`).
#[derive(Debug)]
pub(crate) struct SubcommandSpec {
    /// `container|subcommand`, lower case.
    pub(crate) full_name: &'static str,
    /// Redis arity, the container's name included.
    pub(crate) arity: i32,
    /// Bits from [`flag`], as `COMMAND INFO` reports them.
    pub(crate) flags: u32,
    /// Bits from this module.
    pub(crate) categories: u32,
    /// First key, last key and step, as the container's row has them.
    pub(crate) keys: (i32, i32, i32),
    /// The Redis version that added it (`COMMAND DOCS`).
    pub(crate) since: &'static str,
    /// One line for `COMMAND DOCS`.
    pub(crate) summary: &'static str,
}

impl SubcommandSpec {
    /// The container's name (`config` of `config|get`).
    pub(crate) fn container(&self) -> &'static str {
        self.full_name.split('|').next().unwrap_or(self.full_name)
    }

    /// The subcommand's own name (`get` of `config|get`).
    pub(crate) fn name(&self) -> &'static str {
        self.full_name.rsplit('|').next().unwrap_or(self.full_name)
    }
}

/// The subcommands of `container`, in table order.
pub(crate) fn subcommands_of(
    container: &'static CommandSpec,
) -> impl Iterator<Item = (usize, &'static SubcommandSpec)> {
    SUBCOMMANDS
        .iter()
        .enumerate()
        .filter(move |(_, s)| s.container() == container.name)
}

/// The index in [`SUBCOMMANDS`](super::SUBCOMMANDS) of what a call of `spec` with `args`
/// runs: `args[1]` (in any case) when `spec` is a container and that is
/// one of its subcommands.
pub(crate) fn subcommand_of_call(spec: &'static CommandSpec, args: &[Bytes]) -> Option<usize> {
    let sub = args.get(1).filter(|_| spec.has(flag::CONTAINER))?;
    subcommands_of(spec)
        .find(|(_, s)| s.name().as_bytes().eq_ignore_ascii_case(sub))
        .map(|(i, _)| i)
}
