//! Streams in DUMP payloads, as Redis's `rdbSaveObject`/`rdbLoadObject`
//! write and read them: `RDB_TYPE_STREAM_LISTPACKS` (15, Redis 5 to 6.2)
//! is read, `RDB_TYPE_STREAM_LISTPACKS_2` (19, Redis 7.0) read and written.
//! Redis 7.2's type 21 (consumers' active-time) is refused, as 7.0 does.
//!
//! The object: the radix tree of entry nodes (a count, then each node's
//! key, its master ID as 16 big-endian bytes, and its stream listpack);
//! the length; the last ID; in type 19 the first ID, the largest deleted
//! ID and the entries-added counter; then the consumer groups, each with
//! its name, last-delivered ID, in type 19 its entries-read counter (-1
//! unknown), its pending entries (raw 16-byte ID, delivery time in ms as 8
//! little-endian bytes, delivery count) and its consumers (name, seen-time
//! as 8 bytes, and the raw IDs of its pending entries, each one of the
//! group's). Type 15 carries no counters: entries-added is the length and
//! each group's entries-read is Redis's estimate
//! (`streamEstimateDistanceFromFirstEverEntry`, [`Stream::entries_before`]).
//!
//! A stream listpack (t_stream.c) begins with a master entry: the count of
//! live entries, the count of deleted ones, the master fields (a count,
//! the names) and a 0. Each entry follows as flags (1 deleted, 2 same
//! fields as the master), the ID as differences from the master ID (ms,
//! seq), then either the values alone (same fields) or a field count and
//! the field-value pairs, and last its "lp-count", the number of elements
//! before it in the entry. Entries flagged deleted are skipped on reading.
//!
//! Reading refuses anything that does not add up (counts, lp-counts, IDs
//! not strictly ascending, a last ID below an entry, a pending entry that
//! no consumer or two consumers hold, duplicate groups or consumers).

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use ferrum_store::types::{Consumer, Group, Pending, Stream, StreamId};

use super::listpack::{self, Elem};
use super::{put_len, put_str, Corrupt, OrCorrupt, Reader};

/// Entries per written node: Redis's default `stream-node-max-entries`.
/// Any split is valid input for Redis, which keeps the nodes as loaded.
const NODE_ENTRIES: usize = 100;
/// Master entry flags.
const FLAG_DELETED: i64 = 1;
const FLAG_SAMEFIELDS: i64 = 2;

fn id_bytes(id: StreamId) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&id.ms.to_be_bytes());
    b[8..].copy_from_slice(&id.seq.to_be_bytes());
    b
}

fn put_raw(out: &mut Vec<u8>, s: &[u8]) {
    put_len(out, s.len());
    out.extend_from_slice(s);
}

fn put_id(out: &mut Vec<u8>, id: StreamId) {
    put_len(out, id.ms as usize);
    put_len(out, id.seq as usize);
}

/// One node's listpack: the master entry from `entries[0]`, then every
/// entry, with same-fields entries compacted as Redis's `streamAppendItem`
/// does.
fn node(entries: &[(StreamId, &[(Bytes, Bytes)])]) -> Vec<u8> {
    let (master, master_fields) = entries[0];
    let mut w = listpack::Writer::new();
    w.int(entries.len() as i64);
    w.int(0);
    w.int(master_fields.len() as i64);
    for (f, _) in master_fields {
        w.str(f);
    }
    w.int(0);
    for &(id, fields) in entries {
        let same = fields.len() == master_fields.len()
            && fields.iter().zip(master_fields).all(|(a, b)| a.0 == b.0);
        w.int(if same { FLAG_SAMEFIELDS } else { 0 });
        w.int(id.ms.wrapping_sub(master.ms) as i64);
        w.int(id.seq.wrapping_sub(master.seq) as i64);
        if same {
            for (_, v) in fields {
                w.str(v);
            }
            w.int(3 + fields.len() as i64);
        } else {
            w.int(fields.len() as i64);
            for (f, v) in fields {
                w.str(f);
                w.str(v);
            }
            w.int(4 + 2 * fields.len() as i64);
        }
    }
    w.finish()
}

/// Writes `s` as the body of an `RDB_TYPE_STREAM_LISTPACKS_2` object
/// (after the type byte).
pub(super) fn write(out: &mut Vec<u8>, s: &Stream) {
    let entries = s.range(StreamId::MIN, StreamId::MAX, usize::MAX, false);
    put_len(out, entries.len().div_ceil(NODE_ENTRIES));
    for chunk in entries.chunks(NODE_ENTRIES) {
        put_raw(out, &id_bytes(chunk[0].0));
        put_raw(out, &node(chunk));
    }
    put_len(out, s.len());
    put_id(out, s.last_id());
    put_id(out, s.first_id());
    put_id(out, s.max_deleted());
    put_len(out, s.entries_added() as usize);
    put_len(out, s.groups().len());
    for (name, g) in s.groups() {
        put_str(out, name);
        put_id(out, g.last_id);
        // -1 (unknown) as Redis writes it: the 64-bit length of all ones.
        put_len(out, g.entries_read.unwrap_or(u64::MAX) as usize);
        put_len(out, g.pel.len());
        for (id, p) in &g.pel {
            out.extend_from_slice(&id_bytes(*id));
            out.extend_from_slice(&p.delivery_time.to_le_bytes());
            put_len(out, p.delivery_count as usize);
        }
        put_len(out, g.consumers.len());
        for (name, c) in &g.consumers {
            put_str(out, name);
            out.extend_from_slice(&c.seen_time.to_le_bytes());
            put_len(out, c.pel.len());
            for id in &c.pel {
                out.extend_from_slice(&id_bytes(*id));
            }
        }
    }
}

impl Reader<'_> {
    fn u64(&mut self) -> Option<u64> {
        self.len().map(|n| n as u64)
    }

    fn id(&mut self) -> Option<StreamId> {
        Some(StreamId {
            ms: self.u64()?,
            seq: self.u64()?,
        })
    }

    fn raw_id(&mut self) -> Option<StreamId> {
        raw_id(self.take(16)?)
    }

    fn millis(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

fn raw_id(b: &[u8]) -> Option<StreamId> {
    let (ms, seq) = b.split_at_checked(8)?;
    Some(StreamId {
        ms: u64::from_be_bytes(ms.try_into().ok()?),
        seq: u64::from_be_bytes(seq.try_into().ok()?),
    })
}

/// Reads the entries of one node whose master ID is `master` into `s`,
/// refusing IDs not above `*last`, which it advances. Returns how many
/// live entries it added.
fn read_node(
    s: &mut Stream,
    master: StreamId,
    lp: &[u8],
    last: &mut Option<StreamId>,
) -> Option<u64> {
    let elems = listpack::read(lp)?;
    let mut it = elems.into_iter();
    fn int(it: &mut std::vec::IntoIter<Elem<'_>>) -> Option<i64> {
        it.next()?.int()
    }
    let live = u64::try_from(int(&mut it)?).ok()?;
    let deleted = u64::try_from(int(&mut it)?).ok()?;
    let nmaster = usize::try_from(int(&mut it)?).ok()?;
    let master_fields: Vec<Bytes> = (0..nmaster)
        .map(|_| it.next().map(|e| Bytes::from(e.to_vec())))
        .collect::<Option<_>>()?;
    if int(&mut it)? != 0 {
        return None;
    }
    let (mut seen_live, mut seen_deleted) = (0u64, 0u64);
    while let Some(flags) = it.next() {
        let flags = flags.int()?;
        let id = StreamId {
            ms: master.ms.wrapping_add(int(&mut it)? as u64),
            seq: master.seq.wrapping_add(int(&mut it)? as u64),
        };
        if id < master || last.is_some_and(|l| id <= l) {
            return None;
        }
        *last = Some(id);
        let (fields, elems): (Vec<(Bytes, Bytes)>, i64) = if flags & FLAG_SAMEFIELDS != 0 {
            let fields = master_fields
                .iter()
                .map(|f| Some((f.clone(), Bytes::from(it.next()?.to_vec()))))
                .collect::<Option<_>>()?;
            (fields, 3 + nmaster as i64)
        } else {
            let n = usize::try_from(int(&mut it)?).ok()?;
            if n > it.len() / 2 {
                return None;
            }
            let fields = (0..n)
                .map(|_| {
                    let f = it.next()?.to_vec();
                    Some((Bytes::from(f), Bytes::from(it.next()?.to_vec())))
                })
                .collect::<Option<_>>()?;
            (fields, 4 + 2 * n as i64)
        };
        if int(&mut it)? != elems {
            return None;
        }
        if flags & FLAG_DELETED != 0 {
            seen_deleted += 1;
        } else {
            seen_live += 1;
            s.add(id, &fields);
        }
    }
    (seen_live == live && seen_deleted == deleted && live + deleted > 0).then_some(live)
}

/// Reads the body of a type 15 (`v2` false) or type 19 stream object.
pub(super) fn read(r: &mut Reader<'_>, v2: bool) -> Result<Stream, Corrupt> {
    let mut s = Stream::new();
    let nodes = r.len().read()?;
    let (mut last, mut prev_master, mut live) = (None, None, 0u64);
    for _ in 0..nodes {
        let master = raw_id(&r.string().read()?)
            .or_corrupt("Stream node key entry is not the size of a stream ID")?;
        if prev_master.is_some_and(|p| master <= p) {
            return Err(Corrupt("Listpack re-added with existing key"));
        }
        prev_master = Some(master);
        let lp = r.string().read()?;
        live += read_node(&mut s, master, &lp, &mut last)
            .or_corrupt("Stream listpack integrity check failed.")?;
    }
    let length = r.u64().read()?;
    let last_id = r.id().read()?;
    if length != live {
        return Err(Corrupt("Stream length inconsistent with rax entries"));
    }
    if s.last_entry_id().is_some_and(|l| l > last_id) {
        return Err(Corrupt("Stream last ID below an entry's"));
    }
    let (max_deleted, entries_added) = if v2 {
        let _first = r.id().read()?;
        (r.id().read()?, r.u64().read()?)
    } else {
        (StreamId::MIN, length)
    };
    if entries_added < length {
        return Err(Corrupt("Stream entries-added below its length"));
    }
    s.set_ids(last_id, Some(entries_added), Some(max_deleted));
    let ngroups = r.len().read()?;
    for _ in 0..ngroups {
        let name = Bytes::from(r.string().read()?);
        let group = read_group(r, &s, v2)?;
        if s.groups_mut().insert(name, group).is_some() {
            return Err(Corrupt("Duplicated consumer group name"));
        }
    }
    Ok(s)
}

/// One consumer group, checked for a consistent PEL.
fn read_group(r: &mut Reader<'_>, s: &Stream, v2: bool) -> Result<Group, Corrupt> {
    let last_id = r.id().read()?;
    let entries_read = if v2 {
        Some(r.u64().read()?).filter(|&n| n != u64::MAX)
    } else {
        s.entries_before(last_id)
    };
    // Each pending entry's owner is only known once the consumers are read.
    let mut pel: BTreeMap<StreamId, (u64, u64, Option<Bytes>)> = BTreeMap::new();
    for _ in 0..r.len().read()? {
        let id = r.raw_id().read()?;
        let (time, count) = (r.millis().read()?, r.u64().read()?);
        if pel.insert(id, (time, count, None)).is_some() {
            return Err(Corrupt(
                "Duplicated global PEL entry loading stream consumer group",
            ));
        }
    }
    let mut consumers = BTreeMap::new();
    for _ in 0..r.len().read()? {
        let name = Bytes::from(r.string().read()?);
        let seen_time = r.millis().read()?;
        let mut ids = BTreeSet::new();
        for _ in 0..r.len().read()? {
            let id = r.raw_id().read()?;
            let owner = &mut pel
                .get_mut(&id)
                .or_corrupt("Consumer entry not found in group global PEL")?
                .2;
            if owner.is_some() {
                return Err(Corrupt(
                    "Duplicated consumer PEL entry loading a stream consumer group",
                ));
            }
            *owner = Some(name.clone());
            ids.insert(id);
        }
        let c = Consumer {
            seen_time,
            pel: ids,
        };
        if consumers.insert(name, c).is_some() {
            return Err(Corrupt("Duplicate stream consumer detected."));
        }
    }
    let pel = pel
        .into_iter()
        .map(|(id, (delivery_time, delivery_count, owner))| {
            Some((
                id,
                Pending {
                    consumer: owner?,
                    delivery_time,
                    delivery_count,
                },
            ))
        })
        .collect::<Option<_>>()
        .or_corrupt("Stream CG PEL entry without consumer")?;
    Ok(Group {
        last_id,
        entries_read,
        pel,
        consumers,
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::{deserialize, serialize, verify};
    use super::*;
    use ferrum_store::{Collection, Value, ValueRef};

    /// unit/type/stream-cgroups.tcl's "Loading from legacy (Redis <=
    /// v6.2.x, rdb_ver < 10) persistence": a type 15 stream DUMPed by Redis
    /// 5 after XADDs of 1-0..6-0, XDEL 3-0, groups g1 and g2 at 0, g1's
    /// c11 reading four, and XTRIM MAXLEN 2.
    pub(crate) const REDIS5_STREAM: &[u8] =
        b"\x0F\x01\x10\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\xC3\x40\
      \x4A\x40\x57\x16\x57\x00\x00\x00\x23\x00\x02\x01\x04\x01\x01\x01\x84\x64\x61\x74\x61\
      \x05\x00\x01\x03\x01\x00\x20\x01\x03\x81\x61\x02\x04\x20\x0A\x00\x01\x40\x0A\x00\x62\
      \x60\x0A\x00\x02\x40\x0A\x00\x63\x60\x0A\x40\x22\x01\x81\x64\x20\x0A\x40\x39\x20\x0A\
      \x00\x65\x60\x0A\x00\x05\x40\x0A\x00\x66\x20\x0A\x00\xFF\x02\x06\x00\x02\x02\x67\x31\
      \x05\x00\x04\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x3E\xF7\
      \x83\x43\x7A\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\
      \x00\x00\x3E\xF7\x83\x43\x7A\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\
      \x00\x00\x00\x00\x00\x00\x3E\xF7\x83\x43\x7A\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\
      \x00\x05\x00\x00\x00\x00\x00\x00\x00\x00\x3E\xF7\x83\x43\x7A\x01\x00\x00\x01\x01\x03\
      \x63\x31\x31\x3E\xF7\x83\x43\x7A\x01\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00\x01\x00\
      \x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\
      \x00\x00\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\
      \x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x00\x02\x67\x32\x00\x00\x00\x00\x09\
      \x00\x3D\x52\xEF\x68\x67\x52\x1D\xFA";

    fn id(ms: u64, seq: u64) -> StreamId {
        StreamId { ms, seq }
    }

    fn stream_of(v: &Value) -> Stream {
        match v.as_ref() {
            ValueRef::Coll(c) => match &*c {
                Collection::Stream(s) => s.clone(),
                _ => panic!("not a stream"),
            },
            ValueRef::Str(_) => panic!("not a stream"),
        }
    }

    /// A stream with two nodes' worth of entries (some with the master's
    /// fields, some not, integers and long values), deletions, and a group
    /// with pending entries held by two consumers, plus an empty group.
    fn sample() -> Stream {
        let mut s = Stream::new();
        let f = |k: &str, v: &str| (Bytes::from(k.to_owned()), Bytes::from(v.to_owned()));
        for i in 1..=150u64 {
            let fields = match i % 3 {
                0 => vec![f("a", &i.to_string()), f("b", "x")],
                1 => vec![f("a", "-70000"), f("b", &"y".repeat(i as usize * 40))],
                _ => vec![f("c", "1")],
            };
            s.add(id(1_700_000_000_000 + i / 7, i % 7), &fields);
        }
        s.delete(id(1_700_000_000_003, 3));
        s.read_group(b"g1", b"alice", None, 0, false, 0);
        s.groups_mut().insert(Bytes::from("g1"), Group::default());
        s.groups_mut().insert(Bytes::from("g2"), Group::default());
        s.read_group(b"g1", b"alice", None, 5, false, 1_000);
        s.read_group(b"g1", b"bob", None, 3, false, 2_000);
        s.read_group(b"g1", b"carol", None, 2, true, 3_000);
        s.delete(id(1_700_000_000_000, 2));
        s
    }

    #[test]
    fn redis5_stream_restores_with_estimated_counters() {
        let v = deserialize(verify(REDIS5_STREAM).expect("footer")).expect("valid stream");
        let s = stream_of(&v);
        assert_eq!(s.len(), 2);
        assert_eq!(s.first_id(), id(5, 0));
        assert_eq!(s.last_id(), id(6, 0));
        assert_eq!(s.entries_added(), 2);
        assert_eq!(s.max_deleted(), StreamId::MIN);
        let g1 = &s.groups()[&b"g1"[..]];
        assert_eq!(g1.entries_read, Some(1));
        assert_eq!(g1.pel.len(), 4);
        assert_eq!(g1.consumers[&b"c11"[..]].pel.len(), 4);
        assert_eq!(s.groups()[&b"g2"[..]].entries_read, Some(0));
        let fields = s.range(id(6, 0), id(6, 0), 1, false);
        assert_eq!(fields[0].1, [(Bytes::from("data"), Bytes::from("f"))]);
    }

    #[test]
    fn streams_round_trip_as_type_19() {
        let s = sample();
        let v: Value = s.clone().into();
        let payload = serialize(v.as_ref());
        assert_eq!(payload[0], 19);
        let back = deserialize(verify(&payload).unwrap()).expect("reads back");
        // Node boundaries are rebuilt from the live entries, so compare the
        // parts (the whole `Stream` would print megabytes on failure).
        let t = stream_of(&back);
        let all = |s: &Stream| {
            format!(
                "{:?}",
                s.range(StreamId::MIN, StreamId::MAX, usize::MAX, false)
            )
        };
        assert!(all(&t) == all(&s), "entries differ");
        assert!(t.groups() == s.groups(), "groups differ");
        assert_eq!(
            (t.last_id(), t.max_deleted(), t.entries_added()),
            (s.last_id(), s.max_deleted(), s.entries_added())
        );
        assert_eq!(serialize(back.as_ref()), payload);
        // An empty stream (every entry deleted) is a value too.
        let mut e = Stream::new();
        e.add(id(1, 1), &[(Bytes::from("f"), Bytes::from("v"))]);
        e.delete(id(1, 1));
        let v: Value = e.clone().into();
        let back = deserialize(verify(&serialize(v.as_ref())).unwrap()).unwrap();
        let back = stream_of(&back);
        assert_eq!(
            (back.len(), back.last_id(), back.max_deleted()),
            (0, id(1, 1), id(1, 1))
        );
    }

    /// A type 19 body of one node at 5-0 holding entries at these offsets
    /// from it (same fields as the master), the listpack's live count and
    /// each entry's lp-count given, then `length`, and `groups` as they are.
    fn body(offsets: &[i64], live: i64, lp_count: i64, length: usize, groups: &[u8]) -> Vec<u8> {
        let mut w = listpack::Writer::new();
        for n in [live, 0, 1] {
            w.int(n);
        }
        w.str(b"f");
        w.int(0);
        for &off in offsets {
            for n in [FLAG_SAMEFIELDS, 0, off] {
                w.int(n);
            }
            w.str(b"v");
            w.int(lp_count);
        }
        let mut out = vec![19];
        put_len(&mut out, 1);
        put_raw(&mut out, &id_bytes(id(5, 0)));
        put_raw(&mut out, &w.finish());
        put_len(&mut out, length);
        for i in [id(5, 9), id(5, 0), StreamId::MIN] {
            put_id(&mut out, i);
        }
        put_len(&mut out, 10);
        out.extend_from_slice(groups);
        out
    }

    /// One group `g` with pending entries 5-`pel[i]`, and consumers each
    /// holding 5-`ids[j]`.
    fn group(pel: &[u64], consumers: &[(&str, &[u64])]) -> Vec<u8> {
        let mut out = Vec::new();
        put_str(&mut out, b"g");
        put_id(&mut out, id(5, 9));
        put_len(&mut out, 10);
        put_len(&mut out, pel.len());
        for &seq in pel {
            out.extend_from_slice(&id_bytes(id(5, seq)));
            out.extend_from_slice(&7u64.to_le_bytes());
            put_len(&mut out, 1);
        }
        put_len(&mut out, consumers.len());
        for (name, ids) in consumers {
            put_str(&mut out, name.as_bytes());
            out.extend_from_slice(&7u64.to_le_bytes());
            put_len(&mut out, ids.len());
            for &seq in ids.iter() {
                out.extend_from_slice(&id_bytes(id(5, seq)));
            }
        }
        out
    }

    #[test]
    fn inconsistent_streams_are_refused() {
        let one = |g: &[u8]| [&[1u8][..], g].concat();
        let ok_group = one(&group(&[1], &[("c", &[1])]));
        let good = body(&[0, 1], 2, 4, 2, &ok_group);
        let s = stream_of(&deserialize(&good).expect("the valid one reads"));
        assert_eq!(s.len(), 2);
        assert_eq!(s.groups()[&b"g"[..]].pel[&id(5, 1)].consumer, "c");
        for cut in 1..good.len() {
            assert!(deserialize(&good[..cut]).is_err(), "cut at {cut}");
        }
        let bad = [
            ("length", body(&[0, 1], 2, 4, 3, &ok_group)),
            ("master count", body(&[0, 1], 1, 4, 2, &ok_group)),
            ("lp-count", body(&[0, 1], 2, 5, 2, &ok_group)),
            ("duplicate ID", body(&[1, 1], 2, 4, 2, &ok_group)),
            ("ID below master", body(&[-1, 1], 2, 4, 2, &ok_group)),
            (
                "PEL entry without consumer",
                body(&[0, 1], 2, 4, 2, &one(&group(&[1], &[("c", &[])]))),
            ),
            (
                "consumer entry not in PEL",
                body(&[0, 1], 2, 4, 2, &one(&group(&[1], &[("c", &[1, 2])]))),
            ),
            (
                "two owners",
                body(
                    &[0, 1],
                    2,
                    4,
                    2,
                    &one(&group(&[1], &[("c", &[1]), ("d", &[1])])),
                ),
            ),
            (
                "duplicate PEL entry",
                body(&[0, 1], 2, 4, 2, &one(&group(&[1, 1], &[("c", &[1])]))),
            ),
            (
                "duplicate consumer",
                body(
                    &[0, 1],
                    2,
                    4,
                    2,
                    &one(&group(&[], &[("c", &[]), ("c", &[])])),
                ),
            ),
            (
                "duplicate group",
                body(
                    &[0, 1],
                    2,
                    4,
                    2,
                    &[&[2u8][..], &ok_group[1..], &ok_group[1..]].concat(),
                ),
            ),
        ];
        for (what, b) in bad {
            assert!(deserialize(&b).is_err(), "{what}");
        }
        // Redis 7.2's type 21 is not read, as Redis 7.0 does not read it.
        let mut t21 = good.clone();
        t21[0] = 21;
        assert!(deserialize(&t21).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Random byte changes, insertions and cuts of a valid stream
        /// payload never make the decoder panic.
        #[test]
        fn mutated_stream_payloads_never_panic(
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..4), 1..6),
            cut in any::<prop::sample::Index>(),
        ) {
            let v: Value = sample().into();
            let good = serialize(v.as_ref());
            let mut body = good[..good.len() - 10].to_vec();
            for (at, byte, kind) in edits {
                let i = at.index(body.len());
                match kind {
                    0 => body[i] = byte,
                    1 => body.insert(i, byte),
                    2 => { body.remove(i); }
                    _ => body[i] ^= 1 << (byte % 8),
                }
            }
            if cut.index(8) == 0 {
                body.truncate(cut.index(body.len()));
            }
            let _ = deserialize(&body);
            let _ = deserialize(&REDIS5_STREAM[..REDIS5_STREAM.len() - 10]);
        }
    }
}
