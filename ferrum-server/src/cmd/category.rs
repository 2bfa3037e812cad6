//! ACL command categories (`@read`, `@string`, `@dangerous`...): the bits
//! each row of the command table carries, as Redis 7.0's `COMMAND INFO`
//! reports them, and the subcommands of container commands with theirs.
//!
//! `ACL SETUSER +@category` and `ACL CAT` read these; the table is the one
//! place a command's categories are written down.

use bytes::Bytes;

use super::{flag, CommandSpec};

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
    /// Bits from this module.
    pub(crate) categories: u32,
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

/// The index in [`SUBCOMMANDS`] of what a call of `spec` with `args`
/// runs: `args[1]` (in any case) when `spec` is a container and that is
/// one of its subcommands.
pub(crate) fn subcommand_of_call(spec: &'static CommandSpec, args: &[Bytes]) -> Option<usize> {
    let sub = args.get(1).filter(|_| spec.has(flag::CONTAINER))?;
    subcommands_of(spec)
        .find(|(_, s)| s.name().as_bytes().eq_ignore_ascii_case(sub))
        .map(|(i, _)| i)
}

macro_rules! sub {
    ($name:literal, $arity:expr, [$($cat:ident)|*]) => {
        SubcommandSpec { full_name: $name, arity: $arity, categories: 0 $(| $cat)* }
    };
}

/// Redis 7.0's subcommands of the container commands FerrumKV serves
/// (`CLUSTER`'s only as far as they are answered), with their categories.
#[rustfmt::skip]
pub(crate) static SUBCOMMANDS: &[SubcommandSpec] = &[
sub!("client|caching", 3, [SLOW | CONNECTION]),
    sub!("client|getname", 2, [SLOW | CONNECTION]),
    sub!("client|getredir", 2, [SLOW | CONNECTION]),
    sub!("client|help", 2, [SLOW | CONNECTION]),
    sub!("client|id", 2, [SLOW | CONNECTION]),
    sub!("client|info", 2, [SLOW | CONNECTION]),
    sub!("client|kill", -3, [ADMIN | SLOW | DANGEROUS | CONNECTION]),
    sub!("client|list", -2, [ADMIN | SLOW | DANGEROUS | CONNECTION]),
    sub!("client|no-evict", 3, [ADMIN | SLOW | DANGEROUS | CONNECTION]),
    sub!("client|pause", -3, [ADMIN | SLOW | DANGEROUS | CONNECTION]),
    sub!("client|reply", 3, [SLOW | CONNECTION]),
    sub!("client|setinfo", -4, [SLOW | CONNECTION]),
    sub!("client|setname", 3, [SLOW | CONNECTION]),
    sub!("client|tracking", -3, [SLOW | CONNECTION]),
    sub!("client|trackinginfo", 2, [SLOW | CONNECTION]),
    sub!("client|unblock", -3, [ADMIN | SLOW | DANGEROUS | CONNECTION]),
    sub!("client|unpause", 2, [ADMIN | SLOW | DANGEROUS | CONNECTION]),
    sub!("config|get", -3, [ADMIN | SLOW | DANGEROUS]),
    sub!("config|help", 2, [SLOW]),
    sub!("config|resetstat", 2, [ADMIN | SLOW | DANGEROUS]),
    sub!("config|rewrite", 2, [ADMIN | SLOW | DANGEROUS]),
    sub!("config|set", -4, [ADMIN | SLOW | DANGEROUS]),
    sub!("command|count", 2, [SLOW | CONNECTION]),
    sub!("command|docs", -2, [SLOW | CONNECTION]),
    sub!("command|getkeys", -4, [SLOW | CONNECTION]),
    sub!("command|getkeysandflags", -4, [SLOW | CONNECTION]),
    sub!("command|help", 2, [SLOW | CONNECTION]),
    sub!("command|info", -2, [SLOW | CONNECTION]),
    sub!("command|list", -2, [SLOW | CONNECTION]),
    sub!("object|encoding", 3, [KEYSPACE | READ | SLOW]),
    sub!("object|freq", 3, [KEYSPACE | READ | SLOW]),
    sub!("object|help", 2, [KEYSPACE | SLOW]),
    sub!("object|idletime", 3, [KEYSPACE | READ | SLOW]),
    sub!("object|refcount", 3, [KEYSPACE | READ | SLOW]),
    sub!("memory|doctor", 2, [SLOW]),
    sub!("memory|help", 2, [SLOW]),
    sub!("memory|malloc-stats", 2, [SLOW]),
    sub!("memory|purge", 2, [SLOW]),
    sub!("memory|stats", 2, [SLOW]),
    sub!("memory|usage", -3, [READ | SLOW]),
    sub!("xinfo|consumers", 4, [READ | STREAM | SLOW]),
    sub!("xinfo|groups", 3, [READ | STREAM | SLOW]),
    sub!("xinfo|help", 2, [STREAM | SLOW]),
    sub!("xinfo|stream", -3, [READ | STREAM | SLOW]),
    sub!("xgroup|create", -5, [WRITE | STREAM | SLOW]),
    sub!("xgroup|createconsumer", 5, [WRITE | STREAM | SLOW]),
    sub!("xgroup|delconsumer", 5, [WRITE | STREAM | SLOW]),
    sub!("xgroup|destroy", 4, [WRITE | STREAM | SLOW]),
    sub!("xgroup|help", 2, [STREAM | SLOW]),
    sub!("xgroup|setid", -5, [WRITE | STREAM | SLOW]),
    sub!("script|debug", 3, [SLOW | SCRIPTING]),
    sub!("script|exists", -3, [SLOW | SCRIPTING]),
    sub!("script|flush", -2, [SLOW | SCRIPTING]),
    sub!("script|help", 2, [SLOW | SCRIPTING]),
    sub!("script|kill", 2, [SLOW | SCRIPTING]),
    sub!("script|load", 3, [SLOW | SCRIPTING]),
    sub!("function|delete", 3, [WRITE | SLOW | SCRIPTING]),
    sub!("function|dump", 2, [SLOW | SCRIPTING]),
    sub!("function|flush", -2, [WRITE | SLOW | SCRIPTING]),
    sub!("function|help", 2, [SLOW | SCRIPTING]),
    sub!("function|kill", 2, [SLOW | SCRIPTING]),
    sub!("function|list", -2, [SLOW | SCRIPTING]),
    sub!("function|load", -3, [WRITE | SLOW | SCRIPTING]),
    sub!("function|restore", -3, [WRITE | SLOW | SCRIPTING]),
    sub!("function|stats", 2, [SLOW | SCRIPTING]),
    sub!("pubsub|channels", -2, [PUBSUB | SLOW]),
    sub!("pubsub|help", 2, [SLOW]),
    sub!("pubsub|numpat", 2, [PUBSUB | SLOW]),
    sub!("pubsub|numsub", -2, [PUBSUB | SLOW]),
    sub!("pubsub|shardchannels", -2, [PUBSUB | SLOW]),
    sub!("pubsub|shardnumsub", -2, [PUBSUB | SLOW]),
    sub!("slowlog|get", -2, [ADMIN | SLOW | DANGEROUS]),
    sub!("slowlog|help", 2, [SLOW]),
    sub!("slowlog|len", 2, [ADMIN | SLOW | DANGEROUS]),
    sub!("slowlog|reset", 2, [ADMIN | SLOW | DANGEROUS]),
    sub!("latency|doctor", 2, [ADMIN | SLOW | DANGEROUS]),
    sub!("latency|graph", 3, [ADMIN | SLOW | DANGEROUS]),
    sub!("latency|help", 2, [SLOW]),
    sub!("latency|histogram", -2, [ADMIN | SLOW | DANGEROUS]),
    sub!("latency|history", 3, [ADMIN | SLOW | DANGEROUS]),
    sub!("latency|latest", 2, [ADMIN | SLOW | DANGEROUS]),
    sub!("latency|reset", -2, [ADMIN | SLOW | DANGEROUS]),
    sub!("cluster|addslots", -3, [ADMIN | SLOW | DANGEROUS]),
    sub!("cluster|addslotsrange", -4, [ADMIN | SLOW | DANGEROUS]),
    sub!("cluster|bumpepoch", 2, [ADMIN | SLOW | DANGEROUS]),
    sub!("cluster|countkeysinslot", 3, [SLOW]),
    sub!("cluster|delslots", -3, [ADMIN | SLOW | DANGEROUS]),
    sub!("cluster|delslotsrange", -4, [ADMIN | SLOW | DANGEROUS]),
    sub!("cluster|flushslots", 2, [ADMIN | SLOW | DANGEROUS]),
    sub!("cluster|forget", 3, [ADMIN | SLOW | DANGEROUS]),
    sub!("cluster|getkeysinslot", 4, [SLOW]),
    sub!("cluster|help", 2, [SLOW]),
    sub!("cluster|info", 2, [SLOW]),
    sub!("cluster|keyslot", 3, [SLOW]),
    sub!("cluster|meet", -4, [ADMIN | SLOW | DANGEROUS]),
    sub!("cluster|myid", 2, [SLOW]),
    sub!("cluster|nodes", 2, [SLOW]),
    sub!("cluster|reset", -2, [ADMIN | SLOW | DANGEROUS]),
    sub!("cluster|saveconfig", 2, [ADMIN | SLOW | DANGEROUS]),
    sub!("cluster|set-config-epoch", 3, [ADMIN | SLOW | DANGEROUS]),
    sub!("cluster|setslot", -4, [ADMIN | SLOW | DANGEROUS]),
    sub!("cluster|shards", 2, [SLOW]),
    sub!("cluster|slots", 2, [SLOW]),
    sub!("acl|cat", -2, [SLOW]),
    sub!("acl|deluser", -3, [ADMIN | SLOW | DANGEROUS]),
    sub!("acl|dryrun", -4, [ADMIN | SLOW | DANGEROUS]),
    sub!("acl|genpass", -2, [SLOW]),
    sub!("acl|getuser", 3, [ADMIN | SLOW | DANGEROUS]),
    sub!("acl|help", 2, [SLOW]),
    sub!("acl|list", 2, [ADMIN | SLOW | DANGEROUS]),
    sub!("acl|load", 2, [ADMIN | SLOW | DANGEROUS]),
    sub!("acl|log", -2, [ADMIN | SLOW | DANGEROUS]),
    sub!("acl|save", 2, [ADMIN | SLOW | DANGEROUS]),
    sub!("acl|setuser", -3, [ADMIN | SLOW | DANGEROUS]),
    sub!("acl|users", 2, [ADMIN | SLOW | DANGEROUS]),
    sub!("acl|whoami", 2, [SLOW]),
];
