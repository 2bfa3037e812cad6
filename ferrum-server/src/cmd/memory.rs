//! `MEMORY USAGE`, `STATS`, `DOCTOR`, `MALLOC-STATS`, `PURGE` and `HELP`.
//!
//! `MEMORY USAGE` reports the key's cost in the store's own accounting (its
//! block and collection at their allocated sizes, plus its slot row and
//! index share: `Entry::memory_usage`), the same figure `used_memory` sums
//! and the eviction policy is told. The accounting is exact, so `SAMPLES`
//! is validated as in Redis and otherwise has nothing to change.

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::Access;

use super::info::rss_bytes;
use super::parse::{is, parse_i64};
use super::{CmdError, CmdResult, Ctx};

const HELP: &[&str] = &[
    "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
    "HELP",
    "    Prints this help.",
];

/// Subcommands and their Redis arity (name included, `memory` counted).
const SUBS: &[(&str, i32)] = &[
    ("usage", -3),
    ("stats", 2),
    ("doctor", 2),
    ("malloc-stats", 2),
    ("purge", 2),
    ("help", 2),
];

/// `MEMORY <subcommand> ...`
pub(crate) fn memory(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let sub = &args[1];
    let Some(&(name, arity)) = SUBS.iter().find(|(n, _)| is(sub, n)) else {
        return Err(CmdError::unknown_subcommand("MEMORY", sub));
    };
    let argc = args.len() as i32;
    if (arity >= 0 && argc != arity) || (arity < 0 && argc < -arity) {
        return Err(CmdError::subcommand_arity("memory", name));
    }
    match name {
        "usage" => usage(ctx, args),
        "stats" => Ok(stats(ctx)),
        "doctor" => Ok(Frame::Bulk(Bytes::from(doctor(ctx)))),
        "malloc-stats" => Ok(Frame::Bulk(Bytes::from(malloc_stats()))),
        "purge" => Ok(Frame::ok()),
        _ => Ok(Frame::Array(
            HELP.iter().map(|l| Frame::simple(l)).collect(),
        )),
    }
}

/// `MEMORY USAGE key [SAMPLES count]`: bytes, or null for a missing key.
fn usage(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let mut rest = args[3..].iter();
    while let Some(a) = rest.next() {
        match rest.next() {
            Some(n) if is(a, "samples") => match parse_i64(n) {
                Some(n) if n >= 0 => {}
                Some(_) => return Err(CmdError::syntax()),
                None => return Err(CmdError::msg(super::error::NOT_INTEGER)),
            },
            _ => return Err(CmdError::syntax()),
        }
    }
    let (key, db, now) = (&args[2], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let bytes = ks
        .shard(key)
        .lookup(db, key, now, Access::ReadNoTouch)
        .map(|e| e.memory_usage());
    Ok(bytes.map_or(Frame::Null, |b| Frame::Integer(b as i64)))
}

/// Key count over every database.
fn total_keys(ctx: &Ctx<'_>) -> usize {
    let ks = ctx.store().lock_all();
    (0..ctx.store().databases()).map(|db| ks.dbsize(db)).sum()
}

/// `MEMORY STATS`: Redis 7.0's field names, with FerrumKV's figures. The
/// dataset is what the store accounts, the overhead the connections'
/// memory (together `used_memory`); there is no replication backlog, AOF
/// buffer or Lua cache, so those are 0.
fn stats(ctx: &Ctx<'_>) -> Frame {
    let used = ctx.store().used_memory_bytes() as u64;
    let dataset = ctx.store().dataset_bytes() as u64;
    let clients = ctx.store().outside_bytes() as u64;
    let keys = total_keys(ctx) as u64;
    let a = crate::alloc::stats();
    let rss = rss_bytes();
    let ratio = |x: u64, y: u64| Frame::Double(if y == 0 { 0.0 } else { x as f64 / y as f64 });
    let diff = |x: u64, y: u64| Frame::Integer(x as i64 - y as i64);
    let int = |v: u64| Frame::Integer(v as i64);
    let fields = [
        ("peak.allocated", int(used)),
        ("total.allocated", int(used)),
        ("startup.allocated", int(0)),
        ("replication.backlog", int(0)),
        ("clients.slaves", int(0)),
        ("clients.normal", int(clients)),
        ("cluster.links", int(0)),
        ("aof.buffer", int(0)),
        ("lua.caches", int(0)),
        ("functions.caches", int(0)),
        ("overhead.total", int(clients)),
        ("keys.count", int(keys)),
        (
            "keys.bytes-per-key",
            int(dataset.checked_div(keys).unwrap_or(0)),
        ),
        ("dataset.bytes", int(dataset)),
        ("dataset.percentage", ratio(dataset * 100, used)),
        ("peak.percentage", ratio(100, 1)),
        ("allocator.allocated", int(a.allocated)),
        ("allocator.active", int(a.active)),
        ("allocator.resident", int(a.resident)),
        (
            "allocator-fragmentation.ratio",
            ratio(a.active, a.allocated),
        ),
        ("allocator-fragmentation.bytes", diff(a.active, a.allocated)),
        ("allocator-rss.ratio", ratio(a.resident, a.active)),
        ("allocator-rss.bytes", diff(a.resident, a.active)),
        ("rss-overhead.ratio", ratio(rss, a.resident)),
        ("rss-overhead.bytes", diff(rss, a.resident)),
        ("fragmentation", ratio(rss, used)),
        ("fragmentation.bytes", diff(rss, used)),
    ];
    Frame::Map(
        fields
            .into_iter()
            .map(|(k, v)| (Frame::bulk(k), v))
            .collect(),
    )
}

/// `MEMORY DOCTOR`: Redis's report for a small instance, else a short
/// statement of what was checked.
fn doctor(ctx: &Ctx<'_>) -> String {
    let used = ctx.store().used_memory_bytes();
    if used < 5 * 1024 * 1024 {
        return "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.".to_owned();
    }
    "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.".to_owned()
}

/// `MEMORY MALLOC-STATS`: the allocator's counters as text.
fn malloc_stats() -> String {
    let a = crate::alloc::stats();
    format!(
        "___ Begin {} statistics ___\nallocated: {}\nactive: {}\nresident: {}\n--- End {} statistics ---\n",
        a.name, a.allocated, a.active, a.resident, a.name
    )
}
