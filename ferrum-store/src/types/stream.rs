//! The stream type: entries of field-value pairs ordered by a `ms-seq` ID.
//!
//! Redis keeps a radix tree of listpacks; a `BTreeMap` gives the same
//! operations here (append at the end, range by ID, delete, trim from the
//! head) in O(log n). Beside it the stream keeps where Redis's listpack
//! nodes would begin (a new node every `stream-node-max-entries` appends,
//! XDEL'd entries still taking their room), so that approximate trimming
//! (`MAXLEN ~`, `MINID ~`) removes exactly the whole nodes Redis would.
//! Redis also starts a node when the last one reaches
//! `stream-node-max-bytes`; that limit is not modelled.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;

use bytes::Bytes;

use super::EncodingLimits;
use crate::memory::alloc_size;

/// Estimated fixed cost of one entry in the B-tree: its key and value
/// handles, plus a share of the node they sit in (B-tree nodes hold up to 11
/// entries and run about two-thirds full).
const ENTRY_OVERHEAD: usize = (size_of::<StreamId>() + size_of::<Vec<(Bytes, Bytes)>>()) * 3 / 2;

/// A stream entry ID: milliseconds and a sequence number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId {
    /// The millisecond part.
    pub ms: u64,
    /// The sequence within that millisecond.
    pub seq: u64,
}

impl StreamId {
    /// The smallest ID.
    pub const MIN: StreamId = StreamId { ms: 0, seq: 0 };
    /// The largest ID.
    pub const MAX: StreamId = StreamId {
        ms: u64::MAX,
        seq: u64::MAX,
    };

    /// Parses `ms-seq`, or `ms` alone with `seq` given by `default_seq`.
    pub fn parse(s: &[u8], default_seq: u64) -> Option<StreamId> {
        let s = std::str::from_utf8(s).ok()?;
        let (ms, seq) = match s.split_once('-') {
            Some((ms, seq)) => (ms, Some(seq)),
            None => (s, None),
        };
        let num = |t: &str| {
            (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
                .then(|| t.parse::<u64>().ok())
                .flatten()
        };
        Some(StreamId {
            ms: num(ms)?,
            seq: match seq {
                Some(seq) => num(seq)?,
                None => default_seq,
            },
        })
    }

    /// The next ID after this one, if any.
    pub fn next(self) -> Option<StreamId> {
        match self.seq.checked_add(1) {
            Some(seq) => Some(StreamId { ms: self.ms, seq }),
            None => self.ms.checked_add(1).map(|ms| StreamId { ms, seq: 0 }),
        }
    }

    /// The ID just before this one, if any.
    pub fn prev(self) -> Option<StreamId> {
        match self.seq.checked_sub(1) {
            Some(seq) => Some(StreamId { ms: self.ms, seq }),
            None => self
                .ms
                .checked_sub(1)
                .map(|ms| StreamId { ms, seq: u64::MAX }),
        }
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

/// How `XADD` was asked to choose the new entry's ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdSpec {
    /// `*`: from the clock.
    Auto,
    /// `ms-*`: the given milliseconds, next free sequence.
    AutoSeq(u64),
    /// `ms-seq` (or `ms`).
    Explicit(StreamId),
}

/// Why an `XADD` ID was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddError {
    /// The ID is not above the stream's last ID.
    TooSmall,
    /// `0-0` was given explicitly.
    Zero,
    /// No ID is left above the last one.
    Exhausted,
}

/// How to trim a stream (`MAXLEN` / `MINID`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trim {
    /// Keep at most this many entries.
    MaxLen(usize),
    /// Remove entries below this ID.
    MinId(StreamId),
}

/// A Redis stream.
///
/// Its state is boxed so that a stream does not make every collection value
/// as large as itself (a key holds its collection behind one allocation).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stream(Box<State>);

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct State {
    entries: BTreeMap<StreamId, Vec<(Bytes, Bytes)>>,
    last_id: StreamId,
    entries_added: u64,
    max_deleted: StreamId,
    elem_bytes: usize,
    groups: BTreeMap<Bytes, Group>,
    /// Redis's listpack nodes, oldest first; see [`Node`].
    nodes: VecDeque<Node>,
}

/// One of the listpack nodes Redis would keep these entries in, as far as
/// trimming needs it: the ID its entries start at, and how many entries were
/// ever appended to it (deleted ones still count, as in Redis, where they
/// stay in the listpack flagged until the whole node goes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Node {
    first: StreamId,
    appended: u64,
}

/// A consumer group: what it has delivered, and to whom it is pending.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Group {
    /// The last ID delivered to any consumer (`last-delivered-id`).
    pub last_id: StreamId,
    /// Entries the group has read, when known (`entries-read`).
    pub entries_read: Option<u64>,
    /// Delivered but unacknowledged entries: the pending entries list.
    pub pel: BTreeMap<StreamId, Pending>,
    /// The group's consumers by name.
    pub consumers: BTreeMap<Bytes, Consumer>,
}

/// One pending entry of a group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    /// The consumer it was last delivered to.
    pub consumer: Bytes,
    /// When it was last delivered (ms).
    pub delivery_time: u64,
    /// How many times it was delivered.
    pub delivery_count: u64,
}

/// One consumer of a group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Consumer {
    /// When it last read or was created (ms).
    pub seen_time: u64,
    /// The IDs pending for it (a subset of the group's PEL).
    pub pel: std::collections::BTreeSet<StreamId>,
}

/// [`Stream::entries_before`] over the state's parts, usable while a group
/// is borrowed.
fn estimate_read(s: &State, id: StreamId) -> Option<u64> {
    if s.entries_added == 0 {
        return Some(0);
    }
    if (s.entries.is_empty() && id <= s.last_id) || id == s.last_id {
        return Some(s.entries_added);
    }
    if id > s.last_id {
        return None;
    }
    let first = s
        .entries
        .first_key_value()
        .map_or(StreamId::MIN, |(id, _)| *id);
    if s.max_deleted == StreamId::MIN || s.max_deleted < first {
        let before = s.entries_added - s.entries.len() as u64;
        if id < first {
            return Some(before);
        }
        if id == first {
            return Some(before + 1);
        }
    }
    None
}

/// XCLAIM's options.
#[derive(Clone, Debug, Default)]
pub struct Claim {
    /// Only entries idle at least this long (ms) move.
    pub min_idle: u64,
    /// The delivery time to record (ms).
    pub time: u64,
    /// RETRYCOUNT: the delivery count to set.
    pub retry: Option<u64>,
    /// FORCE: create the pending entry if the stream has the entry.
    pub force: bool,
    /// JUSTID: reply IDs only and leave the delivery count.
    pub justid: bool,
    /// LASTID: raise the group's last delivered ID to this.
    pub last_id: Option<StreamId>,
}

/// One entry of an XREADGROUP reply: a deleted entry still pending has no
/// fields.
pub type GroupEntry = (StreamId, Option<Vec<(Bytes, Bytes)>>);

impl Group {
    /// The consumer named `name`, created (seen now) if new.
    pub fn consumer(&mut self, name: &[u8], now: u64) -> &mut Consumer {
        self.consumers
            .entry(Bytes::copy_from_slice(name))
            .or_insert_with(|| Consumer {
                seen_time: now,
                pel: Default::default(),
            })
    }

    /// Acknowledges `id`: whether it was pending.
    pub fn ack(&mut self, id: StreamId) -> bool {
        match self.pel.remove(&id) {
            Some(p) => {
                if let Some(c) = self.consumers.get_mut(&p.consumer) {
                    c.pel.remove(&id);
                }
                true
            }
            None => false,
        }
    }
}

impl Stream {
    /// An empty stream.
    pub fn new() -> Stream {
        Stream::default()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.0.entries.len()
    }

    /// How many listpack nodes Redis would keep these entries in.
    pub fn nodes(&self) -> usize {
        self.0.nodes.len()
    }

    /// Whether there are no entries. An empty stream still exists as a key.
    pub fn is_empty(&self) -> bool {
        self.0.entries.is_empty()
    }

    /// The last ID ever added (not necessarily still present).
    pub fn last_id(&self) -> StreamId {
        self.0.last_id
    }

    /// How many entries were ever added (`XINFO`'s `entries-added`).
    pub fn entries_added(&self) -> u64 {
        self.0.entries_added
    }

    /// The largest ID ever deleted (`max-deleted-entry-id`), `0-0` if none.
    pub fn max_deleted(&self) -> StreamId {
        self.0.max_deleted
    }

    /// The first entry's ID, `0-0` when empty (`recorded-first-entry-id`).
    pub fn first_id(&self) -> StreamId {
        self.0
            .entries
            .first_key_value()
            .map_or(StreamId::MIN, |(id, _)| *id)
    }

    /// The last entry still present, if any.
    pub fn last_entry_id(&self) -> Option<StreamId> {
        self.0.entries.last_key_value().map(|(id, _)| *id)
    }

    /// `XSETID`: sets the last ID and, when given, the added-entries
    /// counter and the largest deleted ID. The caller checks them.
    pub fn set_ids(
        &mut self,
        last: StreamId,
        entries_added: Option<u64>,
        max_deleted: Option<StreamId>,
    ) {
        self.0.last_id = last;
        if let Some(n) = entries_added {
            self.0.entries_added = n;
        }
        if let Some(id) = max_deleted {
            self.0.max_deleted = id;
        }
    }

    /// The consumer groups by name.
    pub fn groups(&self) -> &BTreeMap<Bytes, Group> {
        &self.0.groups
    }

    /// The consumer groups, for XGROUP and XACK.
    pub fn groups_mut(&mut self) -> &mut BTreeMap<Bytes, Group> {
        &mut self.0.groups
    }

    /// XREADGROUP for one stream. With `after == None` (`>`): up to
    /// `count` entries never delivered to the group, which become pending
    /// for `consumer` unless `noack`. With `Some(id)`: the consumer's own
    /// pending entries after `id` (history), each delivered once more.
    /// `None` when the group does not exist.
    pub fn read_group(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        after: Option<StreamId>,
        count: usize,
        noack: bool,
        now: u64,
    ) -> Option<Vec<GroupEntry>> {
        let mut groups = std::mem::take(&mut self.0.groups);
        let out = self.read_group_in(&mut groups, group, consumer, after, count, noack, now);
        self.0.groups = groups;
        out
    }

    #[allow(clippy::too_many_arguments)]
    fn read_group_in(
        &self,
        groups: &mut BTreeMap<Bytes, Group>,
        group: &[u8],
        consumer: &[u8],
        after: Option<StreamId>,
        count: usize,
        noack: bool,
        now: u64,
    ) -> Option<Vec<GroupEntry>> {
        let state = &*self.0;
        let g = groups.get_mut(group)?;
        let name = Bytes::copy_from_slice(consumer);
        g.consumer(consumer, now).seen_time = now;
        let mut out = Vec::new();
        match after {
            None => {
                let Some(start) = g.last_id.next() else {
                    return Some(out);
                };
                for (id, fields) in state.entries.range(start..).take(count) {
                    out.push((*id, Some(fields.clone())));
                    g.last_id = *id;
                    let tombstone_ahead = !state.entries.is_empty()
                        && state.max_deleted != StreamId::MIN
                        && *id <= state.max_deleted;
                    g.entries_read = match g.entries_read {
                        Some(n) if !tombstone_ahead => Some(n + 1),
                        _ if state.entries_added > 0 => estimate_read(state, *id),
                        keep => keep,
                    };
                    if noack {
                        continue;
                    }
                    if let Some(old) = g.pel.get(id).map(|p| p.consumer.clone()) {
                        if let Some(c) = g.consumers.get_mut(&old) {
                            c.pel.remove(id);
                        }
                    }
                    g.pel.insert(
                        *id,
                        Pending {
                            consumer: name.clone(),
                            delivery_time: now,
                            delivery_count: 1,
                        },
                    );
                    g.consumer(consumer, now).pel.insert(*id);
                }
            }
            Some(after) => {
                let Some(start) = after.next() else {
                    return Some(out);
                };
                let ids: Vec<StreamId> = g
                    .consumer(consumer, now)
                    .pel
                    .range(start..)
                    .take(count)
                    .copied()
                    .collect();
                for id in ids {
                    let fields = state.entries.get(&id).cloned();
                    if fields.is_some() {
                        if let Some(p) = g.pel.get_mut(&id) {
                            p.delivery_count += 1;
                            p.delivery_time = now;
                        }
                    }
                    out.push((id, fields));
                }
            }
        }
        Some(out)
    }

    /// XCLAIM: moves the pending `ids` idle at least `o.min_idle` to
    /// `consumer`. Entries deleted from the stream leave the PEL. `None`
    /// when the group does not exist.
    pub fn claim(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        ids: &[StreamId],
        o: &Claim,
        now: u64,
    ) -> Option<Vec<GroupEntry>> {
        let state = &mut *self.0;
        let g = state.groups.get_mut(group)?;
        if let Some(last) = o.last_id {
            if last > g.last_id {
                g.last_id = last;
            }
        }
        let mut out = Vec::new();
        for &id in ids {
            let Some(fields) = state.entries.get(&id) else {
                g.ack(id);
                continue;
            };
            match g.pel.get(&id) {
                None if !o.force => continue,
                // FORCE creates the pending entry; no idle time to check.
                None => {}
                Some(p) if o.min_idle > 0 && now.saturating_sub(p.delivery_time) < o.min_idle => {
                    continue
                }
                Some(_) => {}
            }
            out.push((id, (!o.justid).then(|| fields.clone())));
            Self::move_pending(g, id, consumer, o.time, o.retry, !o.justid, now);
        }
        Some(out)
    }

    /// XAUTOCLAIM: claims up to `count` pending entries from `start` on,
    /// idle at least `min_idle`, examining at most `10 * count`. Returns the
    /// cursor (next PEL ID or `0-0`), the claimed entries and the IDs
    /// dropped because their entries were deleted.
    #[allow(clippy::too_many_arguments)]
    pub fn autoclaim(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        min_idle: u64,
        start: StreamId,
        count: usize,
        justid: bool,
        now: u64,
    ) -> Option<(StreamId, Vec<GroupEntry>, Vec<StreamId>)> {
        let state = &mut *self.0;
        let g = state.groups.get_mut(group)?;
        let (mut claimed, mut deleted) = (Vec::new(), Vec::new());
        let mut attempts = count.saturating_mul(10);
        let mut left = count;
        let mut cursor = start;
        let mut next = StreamId::MIN;
        loop {
            let Some((&id, p)) = g.pel.range(cursor..).next() else {
                next = StreamId::MIN;
                break;
            };
            if attempts == 0 || left == 0 {
                next = id;
                break;
            }
            attempts -= 1;
            cursor = match id.next() {
                Some(n) => n,
                None => StreamId::MAX,
            };
            let idle = now.saturating_sub(p.delivery_time);
            match state.entries.get(&id) {
                None => {
                    g.ack(id);
                    deleted.push(id);
                    left -= 1;
                }
                Some(_) if min_idle > 0 && idle < min_idle => {}
                Some(fields) => {
                    claimed.push((id, (!justid).then(|| fields.clone())));
                    Self::move_pending(g, id, consumer, now, None, !justid, now);
                    left -= 1;
                }
            }
            if id == StreamId::MAX {
                break;
            }
        }
        Some((next, claimed, deleted))
    }

    /// Gives pending (or FORCE-created) `id` to `consumer`.
    fn move_pending(
        g: &mut Group,
        id: StreamId,
        consumer: &[u8],
        time: u64,
        retry: Option<u64>,
        bump: bool,
        now: u64,
    ) {
        let name = Bytes::copy_from_slice(consumer);
        g.consumer(consumer, now).seen_time = now;
        let p = g.pel.entry(id).or_insert_with(|| Pending {
            consumer: Bytes::new(),
            delivery_time: time,
            delivery_count: 1,
        });
        let old = std::mem::replace(&mut p.consumer, name.clone());
        p.delivery_time = time;
        match retry {
            Some(n) => p.delivery_count = n,
            None if bump => p.delivery_count += 1,
            None => {}
        }
        if old != name {
            if let Some(c) = g.consumers.get_mut(&old) {
                c.pel.remove(&id);
            }
        }
        if let Some(c) = g.consumers.get_mut(&name) {
            c.pel.insert(id);
        }
    }

    /// Redis's estimate of how many entries precede and include `id` in
    /// the stream's history; `None` when deletions make it unknowable.
    pub fn entries_before(&self, id: StreamId) -> Option<u64> {
        estimate_read(&self.0, id)
    }

    /// Whether a deleted ID lies at or after `id` (Redis's
    /// `streamRangeHasTombstones` from `id` to the end).
    pub fn tombstones_from(&self, id: StreamId) -> bool {
        let s = &*self.0;
        !s.entries.is_empty() && s.max_deleted != StreamId::MIN && id <= s.max_deleted
    }

    /// Heap bytes the stream owns. O(1).
    pub fn heap_bytes(&self) -> usize {
        let nodes = match self.0.nodes.capacity() {
            0 => 0,
            n => alloc_size(n * size_of::<Node>()),
        };
        alloc_size(size_of::<State>()) + self.0.elem_bytes + nodes
    }

    fn entry_bytes(fields: &[(Bytes, Bytes)]) -> usize {
        ENTRY_OVERHEAD
            + alloc_size(size_of_val(fields))
            + fields
                .iter()
                .map(|(f, v)| alloc_size(f.len()) + alloc_size(v.len()))
                .sum::<usize>()
    }

    /// The ID `XADD` would give a new entry, at `now_ms` on the server clock.
    ///
    /// # Errors
    ///
    /// [`AddError`] when the ID is not above the last one, is `0-0`, or no
    /// ID is left.
    pub fn next_id(&self, spec: IdSpec, now_ms: u64) -> Result<StreamId, AddError> {
        let last = self.0.last_id;
        let id = match spec {
            IdSpec::Auto if now_ms > last.ms => StreamId { ms: now_ms, seq: 0 },
            IdSpec::Auto => last.next().ok_or(AddError::Exhausted)?,
            IdSpec::AutoSeq(ms) if ms == last.ms => last
                .next()
                .filter(|n| n.ms == ms)
                .ok_or(AddError::TooSmall)?,
            IdSpec::AutoSeq(ms) => StreamId {
                ms,
                seq: u64::from(ms == 0),
            },
            IdSpec::Explicit(id) if id == StreamId::MIN => return Err(AddError::Zero),
            IdSpec::Explicit(id) => id,
        };
        if id <= last {
            return Err(AddError::TooSmall);
        }
        Ok(id)
    }

    /// Appends an entry with an ID from [`Stream::next_id`].
    pub fn add(&mut self, id: StreamId, fields: &[(Bytes, Bytes)]) {
        let fields: Vec<(Bytes, Bytes)> = fields
            .iter()
            .map(|(f, v)| (Bytes::copy_from_slice(f), Bytes::copy_from_slice(v)))
            .collect();
        self.0.elem_bytes += Stream::entry_bytes(&fields);
        self.0.entries.insert(id, fields);
        let max = EncodingLimits::current().stream_node_max_entries;
        match self.0.nodes.back_mut() {
            // 0 means no limit, as in Redis.
            Some(node) if max == 0 || node.appended < max => node.appended += 1,
            _ => self.0.nodes.push_back(Node {
                first: id,
                appended: 1,
            }),
        }
        self.0.last_id = id;
        self.0.entries_added += 1;
    }

    /// Entries with IDs in `start..=end`, ascending (or descending with
    /// `rev`), at most `count`.
    pub fn range(
        &self,
        start: StreamId,
        end: StreamId,
        count: usize,
        rev: bool,
    ) -> Vec<(StreamId, &[(Bytes, Bytes)])> {
        if start > end {
            return Vec::new();
        }
        let it = self.0.entries.range(start..=end);
        fn pick<'a>(
            (id, f): (&StreamId, &'a Vec<(Bytes, Bytes)>),
        ) -> (StreamId, &'a [(Bytes, Bytes)]) {
            (*id, &f[..])
        }
        if rev {
            it.rev().take(count).map(pick).collect()
        } else {
            it.take(count).map(pick).collect()
        }
    }

    /// Deletes an entry. Returns whether it was there.
    pub fn delete(&mut self, id: StreamId) -> bool {
        match self.0.entries.remove(&id) {
            Some(fields) => {
                self.0.elem_bytes -= Stream::entry_bytes(&fields);
                self.0.max_deleted = self.0.max_deleted.max(id);
                // A node whose every entry is gone goes too (Redis frees it).
                let at = self.0.nodes.partition_point(|n| n.first <= id);
                if at > 0 && self.node_live(at - 1) == 0 {
                    self.0.nodes.remove(at - 1);
                    self.release_nodes_if_empty();
                }
                true
            }
            None => false,
        }
    }

    /// The entries still present in node `i`.
    fn node_live(&self, i: usize) -> usize {
        self.node_entries(i).count()
    }

    /// The entries still present in node `i`, oldest first.
    fn node_entries(&self, i: usize) -> impl DoubleEndedIterator<Item = &StreamId> {
        let first = self.0.nodes[i].first;
        let range = match self.0.nodes.get(i + 1) {
            Some(next) => self.0.entries.range(first..next.first),
            None => self.0.entries.range(first..),
        };
        range.map(|(id, _)| id)
    }

    /// Gives the node table's memory back once no node is left.
    fn release_nodes_if_empty(&mut self) {
        if self.0.nodes.is_empty() {
            self.0.nodes = VecDeque::new();
        }
    }

    /// Removes the oldest entry (trimming, which unlike XDEL leaves
    /// max-deleted-entry-id alone, as Redis 7.0 does).
    fn pop_oldest(&mut self) {
        if let Some((_, fields)) = self.0.entries.pop_first() {
            self.0.elem_bytes -= Stream::entry_bytes(&fields);
        }
    }

    /// Whether the entry `id` is past the trim point of `how`, with `len`
    /// entries left.
    fn trimmable(how: Trim, len: usize, id: StreamId) -> bool {
        match how {
            Trim::MaxLen(n) => len > n,
            Trim::MinId(min) => id < min,
        }
    }

    /// Trims from the oldest entry as Redis's `streamTrim` does: whole nodes
    /// go while every entry of the node is past the trim point and, with a
    /// `limit` (0 = none), while the entries removed stay within it; then,
    /// unless `approx`, the entries past the point in the next node one by
    /// one. Returns how many entries were removed.
    pub fn trim(&mut self, how: Trim, approx: bool, limit: usize) -> usize {
        let mut removed = 0;
        while !self.0.nodes.is_empty() {
            let live = self.node_live(0);
            let whole = match how {
                Trim::MaxLen(n) => self.len() - live >= n,
                Trim::MinId(min) => self
                    .node_entries(0)
                    .next_back()
                    .is_none_or(|last| *last < min),
            };
            if !whole {
                if !approx {
                    while let Some((&id, _)) = self.0.entries.first_key_value() {
                        if !Stream::trimmable(how, self.len(), id) {
                            break;
                        }
                        self.pop_oldest();
                        removed += 1;
                    }
                }
                break;
            }
            if limit > 0 && removed + live > limit {
                break;
            }
            for _ in 0..live {
                self.pop_oldest();
            }
            self.0.nodes.pop_front();
            removed += live;
        }
        self.release_nodes_if_empty();
        removed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(ms: u64, seq: u64) -> StreamId {
        StreamId { ms, seq }
    }

    #[test]
    fn ids_parse_and_order() {
        assert_eq!(StreamId::parse(b"5-3", 0), Some(id(5, 3)));
        assert_eq!(StreamId::parse(b"5", 7), Some(id(5, 7)));
        assert_eq!(StreamId::parse(b"5-", 0), None);
        assert_eq!(StreamId::parse(b"-5", 0), None);
        assert_eq!(id(1, 9).next(), Some(id(1, 10)));
        assert_eq!(id(1, 0).prev(), Some(id(0, u64::MAX)));
    }

    #[test]
    fn next_ids_follow_redis() {
        let mut s = Stream::new();
        assert_eq!(
            s.next_id(IdSpec::Explicit(StreamId::MIN), 1),
            Err(AddError::Zero)
        );
        assert_eq!(s.next_id(IdSpec::AutoSeq(0), 1), Ok(id(0, 1)));
        s.add(id(10, 0), &[]);
        assert_eq!(s.next_id(IdSpec::Auto, 5), Ok(id(10, 1)));
        assert_eq!(s.next_id(IdSpec::Auto, 20), Ok(id(20, 0)));
        assert_eq!(s.next_id(IdSpec::AutoSeq(10), 0), Ok(id(10, 1)));
        assert_eq!(s.next_id(IdSpec::AutoSeq(9), 0), Err(AddError::TooSmall));
        assert_eq!(
            s.next_id(IdSpec::Explicit(id(10, 0)), 0),
            Err(AddError::TooSmall)
        );
    }

    #[test]
    fn approximate_trim_takes_whole_nodes() {
        let mut s = Stream::new();
        for i in 1..=250 {
            s.add(id(i, 0), &[(Bytes::from("f"), Bytes::from("v"))]);
        }
        assert_eq!(s.trim(Trim::MaxLen(60), true, 0), 100);
        assert_eq!(s.len(), 150);
        assert_eq!(s.trim(Trim::MaxLen(60), false, 0), 90);
        assert_eq!(s.trim(Trim::MinId(id(200, 0)), false, 0), 9);
        assert_eq!(s.len(), 51);
        while let Some((first, _)) = s.0.entries.first_key_value() {
            let first = *first;
            s.delete(first);
        }
        assert_eq!(s.heap_bytes(), Stream::new().heap_bytes());
    }

    #[test]
    fn approximate_trim_follows_redis_nodes() {
        // unit/type/stream's "XTRIM with MAXLEN option basic test": exact
        // trims leave a partly used first node, which `~` then takes whole.
        let mut s = Stream::new();
        for i in 1..=1000 {
            s.add(id(i, 0), &[(Bytes::from("f"), Bytes::from("v"))]);
        }
        assert_eq!(s.trim(Trim::MaxLen(666), false, 0), 334);
        assert_eq!(s.trim(Trim::MaxLen(555), false, 0), 111);
        s.trim(Trim::MaxLen(444), true, 0);
        assert_eq!(s.len(), 500);
        s.trim(Trim::MaxLen(400), true, 0);
        assert_eq!(s.len(), 400);
        // A limit stops before a node that would exceed it.
        assert_eq!(s.trim(Trim::MaxLen(0), true, 150), 100);
        assert_eq!(s.len(), 300);
        // MINID ~ takes a node only when its last entry is below the ID.
        // Left: 701..=1000 in three nodes; the first one's last entry is 800.
        assert_eq!(s.trim(Trim::MinId(id(800, 0)), true, 0), 0);
        assert_eq!(s.trim(Trim::MinId(id(801, 0)), true, 0), 100);
        assert_eq!(s.len(), 200);
    }

    #[test]
    fn a_node_emptied_by_xdel_goes() {
        let mut s = Stream::new();
        for i in 1..=150 {
            s.add(id(i, 0), &[]);
        }
        for i in 1..=100 {
            s.delete(id(i, 0));
        }
        assert_eq!(s.0.nodes.len(), 1);
        assert_eq!(s.trim(Trim::MaxLen(0), true, 0), 50);
        assert_eq!(s.heap_bytes(), Stream::new().heap_bytes());
    }
}
