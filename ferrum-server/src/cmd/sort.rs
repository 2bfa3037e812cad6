//! `SORT` and `SORT_RO`: the elements of a list, set or sorted set, sorted
//! numerically or (`ALPHA`) byte-wise, by themselves or by external keys
//! (`BY weight_*`, `BY obj_*->field`), with `LIMIT`, `GET` patterns and
//! (`SORT` only) `STORE` into a list.
//!
//! Patterns reach arbitrary keys, so the command locks every shard, as
//! Redis runs it with the whole keyspace to itself. The rules follow Redis
//! 7.0: a `BY` pattern without `*` skips sorting (lists and sorted sets keep
//! their order, `DESC` reverses it), except that an unsorted set being
//! stored is sorted `ALPHA` so the stored list is deterministic; equal
//! numeric scores fall back to comparing the elements byte-wise.
//!
//! # SORT (design notes)
//!
//! **SORT** (`cmd/sort.rs`) locks every shard (`Store::lock_all`), since its
//! BY and GET patterns reach keys known only while it runs; SORT STORE wakes
//! waiters on the destination itself. **DUMP/RESTORE** (`cmd/dump.rs`) write
//! and read Redis 7.0's RDB-10 object format with its CRC-64 footer through
//! `rdb/`, the one RDB codec (MIGRATE and FUNCTION DUMP/RESTORE use it too,
//! and RDB files will), which names no socket and no command, streams
//! included: `rdb/listpack.rs` is Redis's listpack byte format (the
//! store's own listpacks are a different, leaner format), and
//! `rdb/stream.rs` reads RDB types 15 (Redis 5-6.2, its counters
//! estimated as Redis estimates them) and 19, writes 19 in nodes of 100
//! entries, and rebuilds the stream through ferrum-store's public `Stream`
//! API, refusing payloads whose counts, IDs or pending entries do not add
//! up; **MEMORY
//! USAGE** (`cmd/memory.rs`) reports `Entry::memory_usage`, the key's cost in
//! the store's accounting (`ferrum-store/src/memory.rs::entry_cost`).

use std::cmp::Ordering;

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::types::{Hash, List, Set, ZSet};
use ferrum_store::{Access, Locked, Millis, Typed, ValueRef};

use super::args::Args;
use super::coll::store_in;
use super::error::SORT_NOT_DOUBLE;
use super::parse::is;
use super::{CmdError, CmdResult, Ctx};

/// The parsed options of one call.
#[derive(Default)]
struct Opts {
    desc: bool,
    alpha: bool,
    limit: Option<(i64, i64)>,
    by: Option<Bytes>,
    dont_sort: bool,
    gets: Vec<Bytes>,
    store: Option<Bytes>,
}

/// `read_all` says whether the user may read every key, which `BY` and
/// `GET` patterns need, as in Redis.
fn parse(args: &[Bytes], read_only: bool, read_all: bool) -> Result<Opts, CmdError> {
    let mut o = Opts::default();
    let mut args = Args::at(args, 2);
    while let Some(a) = args.next() {
        let left = args.remaining();
        if is(a, "asc") {
            o.desc = false;
        } else if is(a, "desc") {
            o.desc = true;
        } else if is(a, "alpha") {
            o.alpha = true;
        } else if is(a, "limit") && left >= 2 {
            o.limit = Some((args.int()?, args.int()?));
        } else if is(a, "store") && left >= 1 && !read_only {
            o.store = Some(args.expect()?.clone());
        } else if is(a, "by") && left >= 1 {
            let p = args.expect()?.clone();
            // A pattern without `*` names no key per element: don't sort.
            o.dont_sort = !p.contains(&b'*');
            if !o.dont_sort && !read_all {
                return Err(CmdError::msg(super::error::acl::SORT_BY));
            }
            o.by = Some(p);
        } else if is(a, "get") && left >= 1 {
            if !read_all {
                return Err(CmdError::msg(super::error::acl::SORT_GET));
            }
            o.gets.push(args.expect()?.clone());
        } else {
            return Err(CmdError::syntax());
        }
    }
    Ok(o)
}

/// Redis's `lookupKeyByPattern`: `#` is the element itself; otherwise the
/// first `*` is replaced by the element, and a `->field` suffix (with a
/// non-empty field) reads that hash field instead of a string key. `None`
/// when the pattern has no `*`, or the key is missing or of another type.
fn lookup_pattern(
    ks: &mut Locked<'_>,
    db: usize,
    now: Millis,
    pattern: &[u8],
    elem: &[u8],
) -> Option<Bytes> {
    if pattern == b"#" {
        return Some(Bytes::copy_from_slice(elem));
    }
    let star = pattern.iter().position(|&b| b == b'*')?;
    let arrow = pattern[star..]
        .windows(2)
        .position(|w| w == b"->")
        .map(|i| star + i)
        .filter(|&i| i + 2 < pattern.len());
    let (key_end, field) = match arrow {
        Some(i) => (i, Some(&pattern[i + 2..])),
        None => (pattern.len(), None),
    };
    let mut key = Vec::with_capacity(key_end + elem.len());
    key.extend_from_slice(&pattern[..star]);
    key.extend_from_slice(elem);
    key.extend_from_slice(&pattern[star + 1..key_end]);
    let e = ks.shard(&key).lookup(db, &key, now, Access::Read)?;
    match (field, e.value()) {
        (None, ValueRef::Str(s)) => Some(Bytes::copy_from_slice(s)),
        (None, _) => None,
        (Some(f), v) => Hash::of(&v).ok()?.get(f).map(Bytes::copy_from_slice),
    }
}

/// `strtod` as Redis applies it to a sort weight: the whole text must be a
/// number (leading blanks allowed, empty is 0), never NaN.
fn weight(b: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(b).ok()?.trim_start();
    if s.is_empty() {
        return Some(0.0);
    }
    s.parse::<f64>().ok().filter(|v| !v.is_nan())
}

/// The elements to sort, in the value's own order.
fn elements(v: ValueRef<'_>) -> Result<(Vec<Bytes>, bool, bool), CmdError> {
    if let Ok(l) = List::of(&v) {
        return Ok((l.iter().map(Bytes::copy_from_slice).collect(), true, false));
    }
    if let Ok(s) = Set::of(&v) {
        return Ok((s.iter().collect(), false, true));
    }
    let z = ZSet::of(&v)?;
    let items = z
        .range_by_rank(0, z.len())
        .into_iter()
        .map(|(m, _)| m)
        .collect();
    Ok((items, true, false))
}

fn sort(ctx: &mut Ctx<'_>, args: &[Bytes], read_only: bool) -> CmdResult {
    // Called as sent: a renamed SORT is found by its new name.
    let read_all = ctx
        .shared
        .command(&args[0])
        .is_none_or(|spec| super::acl::reads_every_key(ctx, spec, args));
    let mut o = parse(args, read_only, read_all)?;
    let (key, db, now) = (&args[1], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_all();
    let (mut items, ordered, is_set) = match ks.shard(key).lookup(db, key, now, Access::Read) {
        Some(e) => elements(e.value())?,
        None => (Vec::new(), false, false),
    };
    // An unsorted set has no order to keep: a stored result, or one a
    // script reads, is sorted ALPHA instead, so replicas and reruns see
    // the same list (as Redis does).
    if o.dont_sort && is_set && (o.store.is_some() || ctx.in_script) {
        o.dont_sort = false;
        o.alpha = true;
        o.by = None;
    }
    if o.dont_sort {
        if ordered && o.desc {
            items.reverse();
        }
    } else {
        sort_items(&mut ks, db, now, &o, &mut items)?;
    }
    // LIMIT, as Redis clamps it.
    let len = items.len() as i64;
    let (mut start, mut end) = match o.limit {
        Some((off, count)) => {
            let start = off.max(0);
            let end = if count < 0 {
                len - 1
            } else {
                start.saturating_add(count) - 1
            };
            (start, end)
        }
        None => (0, len - 1),
    };
    if start >= len {
        start = len - 1;
        end = len - 2;
    }
    end = end.min(len - 1);
    let picked: &[Bytes] = if start < 0 || end < start {
        &[]
    } else {
        &items[start as usize..=end as usize]
    };
    let mut out: Vec<Option<Bytes>> = Vec::new();
    for elem in picked {
        if o.gets.is_empty() {
            out.push(Some(elem.clone()));
        }
        for g in &o.gets {
            out.push(lookup_pattern(&mut ks, db, now, g, elem));
        }
    }
    let Some(dst) = o.store else {
        return Ok(Frame::Array(
            out.into_iter()
                .map(|v| v.map_or(Frame::Null, Frame::Bulk))
                .collect(),
        ));
    };
    let mut list = List::new();
    for v in &out {
        list.push(ferrum_store::types::End::Right, v.as_deref().unwrap_or(b""));
    }
    let n = out.len();
    store_in(ks.shard(&dst), db, &dst, now, list);
    drop(ks);
    super::wake_key(ctx, db, &dst);
    Ok(Frame::Integer(n as i64))
}

/// Sorts `items` by the options: numeric or byte-wise, by themselves or by
/// the `BY` pattern's values.
fn sort_items(
    ks: &mut Locked<'_>,
    db: usize,
    now: Millis,
    o: &Opts,
    items: &mut Vec<Bytes>,
) -> Result<(), CmdError> {
    let mut keyed: Vec<(Bytes, Option<Bytes>, f64)> = Vec::with_capacity(items.len());
    for elem in items.drain(..) {
        let by = match &o.by {
            Some(p) => lookup_pattern(ks, db, now, p, &elem),
            None => None,
        };
        let score = if o.alpha {
            0.0
        } else {
            match (&o.by, &by) {
                (Some(_), None) => 0.0,
                (Some(_), Some(v)) => weight(v).ok_or_else(|| CmdError::msg(SORT_NOT_DOUBLE))?,
                (None, _) => weight(&elem).ok_or_else(|| CmdError::msg(SORT_NOT_DOUBLE))?,
            }
        };
        keyed.push((elem, by, score));
    }
    let by_pattern = o.by.is_some();
    keyed.sort_by(|a, b| {
        let cmp = if !o.alpha {
            a.2.partial_cmp(&b.2)
                .unwrap_or(Ordering::Equal)
                .then_with(|| a.0.cmp(&b.0))
        } else if by_pattern {
            match (&a.1, &b.1) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Less,
                (Some(_), None) => Ordering::Greater,
                (Some(x), Some(y)) => x.cmp(y),
            }
        } else {
            a.0.cmp(&b.0)
        };
        if o.desc {
            cmp.reverse()
        } else {
            cmp
        }
    });
    items.extend(keyed.into_iter().map(|(e, _, _)| e));
    Ok(())
}

/// `SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA] [STORE destination]`
pub(crate) fn sort_cmd(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    sort(ctx, args, false)
}

/// `SORT_RO key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC] [ALPHA]`
pub(crate) fn sort_ro(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    sort(ctx, args, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_follow_strtod() {
        assert_eq!(weight(b"1.5"), Some(1.5));
        assert_eq!(weight(b"  2"), Some(2.0));
        assert_eq!(weight(b""), Some(0.0));
        assert_eq!(weight(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(weight(b"not-a-double"), None);
        assert_eq!(weight(b"nan"), None);
        assert_eq!(weight(b"1 "), None);
    }

    #[test]
    fn options_parse_as_redis() {
        let args = |s: &str| -> Vec<Bytes> {
            s.split(' ')
                .map(|w| Bytes::copy_from_slice(w.as_bytes()))
                .collect()
        };
        let o = parse(
            &args("sort k by nosort desc limit 0 2 get # store d"),
            false,
            true,
        )
        .unwrap();
        assert!(o.dont_sort && o.desc);
        assert_eq!(o.limit, Some((0, 2)));
        assert_eq!(o.store.as_deref(), Some(&b"d"[..]));
        assert!(parse(&args("sort_ro k store d"), true, true).is_err());
        assert!(parse(&args("sort k limit 1"), false, true).is_err());
        assert!(
            !parse(&args("sort k by w_*"), false, true)
                .unwrap()
                .dont_sort
        );
    }
}
