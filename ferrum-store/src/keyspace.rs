//! One shard of the keyspace: every database's keys that hash to it, their
//! expiry, their memory cost and the eviction policy that orders them.
//!
//! A shard is plain single-threaded data; [`Store`](crate::Store) puts each
//! behind its own lock. Keys are routed to shards by hash, so a key lives in
//! the same shard in every database, and `SWAPDB` is a swap of two table
//! indices rather than a rehash.

use std::hash::BuildHasher;

use bytes::Bytes;
use ferrum_evict::{AnyPolicy, EntryId, EvictionPolicy, Millis, PolicyKind};
use hashbrown::HashTable;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::memory::{alloc_size, ENTRY_OVERHEAD};
use crate::stats::KeyspaceStats;
use crate::value::Value;

/// Marks "not in the volatile list".
const NOT_VOLATILE: u32 = u32::MAX;

/// How a lookup counts, following Redis's `lookupKey` flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A read command: counts a hit or a miss and refreshes recency.
    Read,
    /// Like `Read`, but leaves recency alone (`EXISTS`, `TYPE`, `OBJECT`).
    ReadNoTouch,
    /// A write command's lookup: refreshes recency, counts nothing.
    Write,
    /// Only looks: counts nothing, touches nothing (expired keys still go).
    Peek,
}

/// A resident key's metadata and value.
#[derive(Debug)]
pub struct Entry {
    value: Value,
    /// Absolute deadline in milliseconds; 0 means none (a deadline at the
    /// origin is always already past, so it never needs storing).
    expires_at: u64,
    last_access: Millis,
    version: u64,
    /// Grown in place (APPEND, SETRANGE): Redis then always reports `raw`.
    grown_in_place: bool,
    // The slot's bookkeeping lives here rather than in `Slot`, so it fills
    // the entry's padding instead of adding 8 bytes to every slot.
    /// Which of the shard's tables indexes the key.
    table: u16,
    /// Position in the shard's volatile list, or [`NOT_VOLATILE`].
    volatile_pos: u32,
}

impl Entry {
    /// The stored value.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// When the key expires, as absolute milliseconds on the caller's clock.
    pub fn expires_at(&self) -> Option<Millis> {
        (self.expires_at != 0).then_some(Millis(self.expires_at))
    }

    /// When the key was last read or written (for `OBJECT IDLETIME`).
    pub fn last_access(&self) -> Millis {
        self.last_access
    }

    /// The encoding `OBJECT ENCODING` reports: the value's own, except that
    /// a string grown in place is `raw`, as in Redis.
    pub fn encoding(&self) -> &'static str {
        if self.grown_in_place {
            "raw"
        } else {
            self.value.encoding()
        }
    }

    /// Changes each time the key is written; `WATCH` compares it.
    pub fn version(&self) -> u64 {
        self.version
    }

    fn is_expired(&self, now: Millis) -> bool {
        self.expires_at != 0 && self.expires_at <= now.0
    }
}

/// Encodes an optional deadline in [`Entry::expires_at`]'s form.
fn deadline(expires_at: Option<Millis>) -> u64 {
    expires_at.map_or(0, |m| m.0.max(1))
}

/// One resident key: the row an [`EntryId`] names.
#[derive(Debug)]
pub(crate) struct Slot {
    key: Box<[u8]>,
    entry: Entry,
}

/// One database's index within a shard: key hash to slot id. The keys and
/// entries live in the shard's slot table, so a bucket costs 4 bytes plus a
/// control byte instead of a whole key and entry.
#[derive(Debug, Default)]
struct Table {
    index: HashTable<u32>,
    expires: usize,
}

impl Table {
    /// Bytes the index needs for its keys at hashbrown's full load (7/8):
    /// 4-byte buckets plus a control byte each. Counted from the number of
    /// keys rather than the allocation: the allocation doubles on growth
    /// and, under churn, on tombstones, and counting that slack would move
    /// eviction points with allocator history instead of content (a cache
    /// calibrated for 5,000 entries would hold 4,600 or 5,400 depending on
    /// when the index last grew). The slack is at most 5 bytes a key.
    fn heap_bytes(&self) -> usize {
        self.index.len() * 5 * 8 / 7
    }
}

/// A mutable borrow of one entry's value that keeps the shard's memory
/// accounting and the key's version right when it is dropped.
#[derive(Debug)]
pub struct EntryMut<'a> {
    entry: &'a mut Entry,
    used_bytes: &'a mut usize,
    version_clock: &'a mut u64,
    cost_before: usize,
    dirty: bool,
    unchanged: bool,
}

impl EntryMut<'_> {
    /// The value, read-only.
    pub fn value(&self) -> &Value {
        &self.entry.value
    }

    /// The value, for modification. Marks the key as written.
    pub fn value_mut(&mut self) -> &mut Value {
        self.dirty = true;
        &mut self.entry.value
    }

    /// The expiry deadline.
    pub fn expires_at(&self) -> Option<Millis> {
        self.entry.expires_at()
    }

    /// Records that the command, though it borrowed the value for writing,
    /// changed nothing (`SADD` of members already present, `SREM` of absent
    /// ones): the key keeps its version, so a `WATCH` on it still holds, as
    /// Redis only signals a key a command modified.
    pub fn mark_unchanged(&mut self) {
        self.unchanged = true;
    }

    /// Records that the value was grown in place (`APPEND`, `SETRANGE`), so
    /// `OBJECT ENCODING` reports `raw` as Redis does.
    pub fn mark_grown_in_place(&mut self) {
        self.entry.grown_in_place = true;
    }
}

impl Drop for EntryMut<'_> {
    fn drop(&mut self) {
        if self.dirty {
            let after = self.entry.value.heap_bytes();
            *self.used_bytes = *self.used_bytes - self.cost_before + after;
            if !self.unchanged {
                *self.version_clock += 1;
                self.entry.version = *self.version_clock;
            }
        }
    }
}

/// The outcome of one run of the active expiry cycle on a shard.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExpireCycle {
    /// Keys with a TTL that were looked at.
    pub checked: usize,
    /// Of those, how many had expired and were removed.
    pub expired: usize,
}

/// One shard of the keyspace. See the module docs.
#[derive(Debug)]
pub struct Shard {
    /// Physical tables; `db_table[db]` says which one a database uses.
    tables: Vec<Table>,
    db_table: Vec<u16>,
    /// Every resident key of every database, indexed by [`EntryId`].
    slots: Vec<Option<Slot>>,
    free_slots: Vec<u32>,
    /// Ids of entries with a TTL, for the active expiry cycle's sampling.
    volatile: Vec<u32>,
    policy: Option<AnyPolicy>,
    policy_kind: PolicyKind,
    used_bytes: usize,
    version_clock: u64,
    stats: KeyspaceStats,
    rng: SmallRng,
    key_hasher: foldhash::fast::FixedState,
}

impl Shard {
    /// An empty shard holding `databases` databases, evicting with `policy`
    /// (built from `kind`; `None` for `noeviction`).
    pub fn new(databases: usize, kind: PolicyKind, policy: Option<AnyPolicy>, seed: u64) -> Shard {
        let databases = databases.clamp(1, usize::from(u16::MAX));
        Shard {
            tables: (0..databases).map(|_| Table::default()).collect(),
            db_table: (0..databases as u16).collect(),
            slots: Vec::new(),
            free_slots: Vec::new(),
            volatile: Vec::new(),
            policy,
            policy_kind: kind,
            used_bytes: 0,
            version_clock: 0,
            stats: KeyspaceStats::default(),
            rng: SmallRng::seed_from_u64(seed),
            key_hasher: foldhash::fast::FixedState::with_seed(seed),
        }
    }

    /// Bytes this shard's data, indexes and policy cost: the keys' and
    /// values' allocations, the slot table and lists at their length, and
    /// the indexes at full load. Growth slack in the tables is not counted
    /// (see `Table::heap_bytes`), so the figure is a function of what is
    /// stored; measured at 1M keys it stays within a few percent of RSS.
    pub fn memory_bytes(&self) -> usize {
        let tables: usize = self.tables.iter().map(Table::heap_bytes).sum();
        let slots = self.slots.len() * std::mem::size_of::<Option<Slot>>();
        let lists = (self.free_slots.len() + self.volatile.len()) * 4;
        let policy = self.policy.as_ref().map_or(0, |p| p.heap_bytes());
        self.used_bytes + tables + slots + lists + policy
    }

    /// This shard's counters.
    pub fn stats(&self) -> KeyspaceStats {
        self.stats
    }

    /// Zeroes the counters (`CONFIG RESETSTAT`).
    pub fn reset_stats(&mut self) {
        self.stats = KeyspaceStats::default();
    }

    /// How many keys database `db` holds here (expired ones not yet removed
    /// included, as Redis's `DBSIZE` does).
    pub fn len(&self, db: usize) -> usize {
        self.table(db).index.len()
    }

    /// Whether database `db` holds no keys here.
    pub fn is_empty(&self, db: usize) -> bool {
        self.len(db) == 0
    }

    /// How many keys of database `db` here have a TTL.
    pub fn expires(&self, db: usize) -> usize {
        self.table(db).expires
    }

    fn table(&self, db: usize) -> &Table {
        &self.tables[usize::from(self.db_table[db])]
    }

    fn tracks(&self, expires_at: u64) -> bool {
        self.policy.is_some() && (!self.policy_kind.is_volatile() || expires_at != 0)
    }

    fn slot(&self, id: u32) -> &Slot {
        // Ids come from the index or the policy, which only hold live slots.
        self.slots[id as usize]
            .as_ref()
            .unwrap_or_else(|| unreachable!("slot {id} is indexed but empty"))
    }

    fn slot_mut(&mut self, id: u32) -> &mut Slot {
        self.slots[id as usize]
            .as_mut()
            .unwrap_or_else(|| unreachable!("slot {id} is indexed but empty"))
    }

    /// The slot holding `key` in physical table `t`, expired or not.
    fn find(&self, t: usize, key: &[u8]) -> Option<u32> {
        let hash = self.key_hasher.hash_one(key);
        let slots = &self.slots;
        self.tables[t]
            .index
            .find(hash, |&id| {
                slots[id as usize]
                    .as_ref()
                    .is_some_and(|s| &s.key[..] == key)
            })
            .copied()
    }

    /// The live slot for `key` in table `t`, removing it first if expired.
    fn find_live(&mut self, t: usize, key: &[u8], now: Millis) -> Option<u32> {
        let id = self.find(t, key)?;
        if self.slot(id).entry.is_expired(now) {
            self.remove_slot(id);
            self.stats.expired_keys += 1;
            return None;
        }
        Some(id)
    }

    /// Looks `key` up in database `db`, removing it first if it has expired.
    pub fn lookup(&mut self, db: usize, key: &[u8], now: Millis, access: Access) -> Option<&Entry> {
        let t = usize::from(self.db_table[db]);
        let counts = matches!(access, Access::Read | Access::ReadNoTouch);
        let Some(id) = self.find_live(t, key, now) else {
            if counts {
                self.stats.keyspace_misses += 1;
                if let Some(p) = &mut self.policy {
                    p.on_miss(self.key_hasher.hash_one(key), now);
                }
            }
            return None;
        };
        if counts {
            self.stats.keyspace_hits += 1;
        }
        if matches!(access, Access::Read | Access::Write) {
            self.touch(id, now);
        }
        Some(&self.slot(id).entry)
    }

    /// Refreshes recency: the entry's own clock and the policy's order.
    fn touch(&mut self, id: u32, now: Millis) {
        let tracked = self.tracks(self.slot(id).entry.expires_at);
        self.slot_mut(id).entry.last_access = now;
        if tracked {
            if let Some(p) = &mut self.policy {
                p.on_hit(EntryId(id), now);
            }
        }
    }

    /// Looks `key` up for modification (a write access). The returned guard
    /// updates memory accounting and the key's version when dropped.
    pub fn lookup_mut(&mut self, db: usize, key: &[u8], now: Millis) -> Option<EntryMut<'_>> {
        let t = usize::from(self.db_table[db]);
        let id = self.find_live(t, key, now)?;
        self.touch(id, now);
        let entry = &mut self.slots[id as usize].as_mut()?.entry;
        Some(EntryMut {
            cost_before: entry.value.heap_bytes(),
            entry,
            used_bytes: &mut self.used_bytes,
            version_clock: &mut self.version_clock,
            dirty: false,
            unchanged: false,
        })
    }

    /// Stores `value` under `key` with the given expiry, replacing any value.
    /// Returns the value it replaced.
    pub fn insert(
        &mut self,
        db: usize,
        key: Bytes,
        value: Value,
        expires_at: Option<Millis>,
        now: Millis,
    ) -> Option<Value> {
        let value = value.compact();
        let t = usize::from(self.db_table[db]);
        let Some(id) = self.find_live(t, &key, now) else {
            self.insert_new(t, &key, value, deadline(expires_at), now);
            return None;
        };
        self.touch(id, now);
        self.version_clock += 1;
        let version = self.version_clock;
        let entry = &mut self.slot_mut(id).entry;
        let cost_before = entry.value.heap_bytes();
        let cost_after = value.heap_bytes();
        let old = std::mem::replace(&mut entry.value, value);
        entry.grown_in_place = false;
        entry.version = version;
        self.used_bytes = self.used_bytes - cost_before + cost_after;
        self.set_deadline(id, deadline(expires_at), now);
        Some(old)
    }

    fn insert_new(&mut self, t: usize, key: &[u8], value: Value, expires_at: u64, now: Millis) {
        let id = match self.free_slots.pop() {
            Some(i) => i,
            None => {
                if self.slots.len() == self.slots.capacity() {
                    // Grow by an eighth, not by doubling: under maxmemory a
                    // doubling slot table (72 bytes a slot) would evict a
                    // large share of the keys at once to pay for slots that
                    // stay empty. An eighth keeps pushes amortised O(1).
                    self.slots.reserve_exact((self.slots.len() / 8).max(16));
                }
                self.slots.push(None);
                (self.slots.len() - 1) as u32
            }
        };
        let cost = alloc_size(key.len()) + value.heap_bytes();
        self.used_bytes += cost;
        self.version_clock += 1;
        self.slots[id as usize] = Some(Slot {
            key: key.into(),
            entry: Entry {
                value,
                expires_at,
                last_access: now,
                version: self.version_clock,
                grown_in_place: false,
                table: t as u16,
                volatile_pos: NOT_VOLATILE,
            },
        });
        let hash = self.key_hasher.hash_one(key);
        let (hasher, slots) = (&self.key_hasher, &self.slots);
        self.tables[t].index.insert_unique(hash, id, |&other| {
            slots[other as usize]
                .as_ref()
                .map_or(0, |s| hasher.hash_one(&s.key[..]))
        });
        if expires_at != 0 {
            self.add_volatile(id);
        }
        if self.tracks(expires_at) {
            if let Some(p) = &mut self.policy {
                let policy_cost = (cost + ENTRY_OVERHEAD).min(u32::MAX as usize) as u32;
                p.on_insert(EntryId(id), hash, policy_cost, now);
                if expires_at != 0 {
                    p.on_expiry_change(EntryId(id), Some(Millis(expires_at)));
                }
            }
        }
    }

    /// Removes `key` from database `db`. An expired key counts as absent.
    pub fn remove(&mut self, db: usize, key: &[u8], now: Millis) -> Option<Value> {
        let t = usize::from(self.db_table[db]);
        let id = self.find_live(t, key, now)?;
        let tracked = self.tracks(self.slot(id).entry.expires_at);
        if tracked {
            if let Some(p) = &mut self.policy {
                p.on_remove(EntryId(id));
            }
        }
        Some(self.unlink(id).entry.value)
    }

    /// Removes a slot and tells the policy. With [`Shard::unlink`], the only
    /// ways entries leave.
    fn remove_slot(&mut self, id: u32) {
        if self.tracks(self.slot(id).entry.expires_at) {
            if let Some(p) = &mut self.policy {
                p.on_remove(EntryId(id));
            }
        }
        self.unlink(id);
    }

    /// Removes a slot from its table and the volatile list, without telling
    /// the policy (eviction: the policy already forgot it).
    fn unlink(&mut self, id: u32) -> Slot {
        if self.slot(id).entry.expires_at != 0 {
            self.remove_volatile(id);
        }
        let Some(slot) = self.slots[id as usize].take() else {
            unreachable!("slot {id} unlinked twice")
        };
        let t = usize::from(slot.entry.table);
        let hash = self.key_hasher.hash_one(&slot.key[..]);
        if let Ok(found) = self.tables[t].index.find_entry(hash, |&other| other == id) {
            found.remove();
        }
        self.used_bytes -= alloc_size(slot.key.len()) + slot.entry.value.heap_bytes();
        self.version_clock += 1;
        self.free_slots.push(id);
        slot
    }

    /// Sets or clears the expiry of an existing key. Returns whether the key
    /// existed (and was live).
    pub fn set_expiry(
        &mut self,
        db: usize,
        key: &[u8],
        expires_at: Option<Millis>,
        now: Millis,
    ) -> bool {
        let t = usize::from(self.db_table[db]);
        let Some(id) = self.find_live(t, key, now) else {
            return false;
        };
        self.touch(id, now);
        self.version_clock += 1;
        self.slot_mut(id).entry.version = self.version_clock;
        self.set_deadline(id, deadline(expires_at), now);
        true
    }

    /// Changes a slot's deadline, keeping the volatile list and a volatile
    /// policy's membership in step.
    fn set_deadline(&mut self, id: u32, expires_at: u64, now: Millis) {
        let before = std::mem::replace(&mut self.slot_mut(id).entry.expires_at, expires_at);
        match (before != 0, expires_at != 0) {
            (false, true) => self.add_volatile(id),
            (true, false) => self.remove_volatile(id),
            _ => {}
        }
        let (was, is) = (self.tracks(before), self.tracks(expires_at));
        let slot = self.slot(id);
        let hash = self.key_hasher.hash_one(&slot.key[..]);
        let cost = alloc_size(slot.key.len()) + slot.entry.value.heap_bytes() + ENTRY_OVERHEAD;
        let new_deadline = (expires_at != 0).then_some(Millis(expires_at));
        let Some(p) = &mut self.policy else { return };
        let id = EntryId(id);
        match (was, is) {
            (false, true) => {
                p.on_insert(id, hash, cost.min(u32::MAX as usize) as u32, now);
                p.on_expiry_change(id, new_deadline);
            }
            (true, false) => p.on_remove(id),
            (true, true) if before != expires_at => p.on_expiry_change(id, new_deadline),
            _ => {}
        }
    }

    fn add_volatile(&mut self, id: u32) {
        let pos = self.volatile.len() as u32;
        let slot = self.slot_mut(id);
        slot.entry.volatile_pos = pos;
        let t = usize::from(slot.entry.table);
        self.volatile.push(id);
        self.tables[t].expires += 1;
    }

    fn remove_volatile(&mut self, id: u32) {
        let slot = self.slot_mut(id);
        let pos = std::mem::replace(&mut slot.entry.volatile_pos, NOT_VOLATILE);
        let t = usize::from(slot.entry.table);
        if pos == NOT_VOLATILE {
            return;
        }
        self.volatile.swap_remove(pos as usize);
        if let Some(&moved) = self.volatile.get(pos as usize) {
            self.slot_mut(moved).entry.volatile_pos = pos;
        }
        self.tables[t].expires -= 1;
    }

    /// Evicts one entry chosen by the policy. Returns the bytes freed, or
    /// `None` when the policy has nothing to evict.
    pub fn evict_one(&mut self, now: Millis) -> Option<usize> {
        let before = self.memory_bytes();
        let id = self.policy.as_mut()?.evict(now)?;
        self.slots.get(id.index())?.as_ref()?;
        self.unlink(id.0);
        self.stats.evicted_keys += 1;
        Some(before.saturating_sub(self.memory_bytes()))
    }

    /// One pass of active expiry: samples up to `max_checks` keys with a TTL
    /// in rounds of 20, removing the expired ones, and stops early once a
    /// round finds no more than a quarter expired (Redis's heuristic: most of
    /// what is left is not due yet).
    pub fn expire_cycle(&mut self, now: Millis, max_checks: usize) -> ExpireCycle {
        const ROUND: usize = 20;
        let mut out = ExpireCycle::default();
        while out.checked < max_checks && !self.volatile.is_empty() {
            let mut expired_this_round = 0;
            let round = ROUND.min(self.volatile.len());
            for _ in 0..round {
                if self.volatile.is_empty() {
                    break;
                }
                let pos = self.rng.random_range(0..self.volatile.len());
                let id = self.volatile[pos];
                out.checked += 1;
                if self.slot(id).entry.is_expired(now) {
                    self.remove_slot(id);
                    self.stats.expired_keys += 1;
                    expired_this_round += 1;
                }
            }
            out.expired += expired_this_round;
            if expired_this_round * 4 <= round {
                break;
            }
        }
        self.shrink_if_sparse();
        out
    }

    /// Removes every key of database `db`. Returns how many there were.
    pub fn flush_db(&mut self, db: usize) -> usize {
        let t = usize::from(self.db_table[db]);
        let ids: Vec<u32> = self.tables[t].index.iter().copied().collect();
        for &id in &ids {
            self.remove_slot(id);
        }
        // Give the index's memory back, as Redis frees a flushed dict.
        self.tables[t].index = HashTable::new();
        self.shrink_if_sparse();
        ids.len()
    }

    /// Returns memory after mass deletion, as Redis's cron resizes sparse
    /// dicts: trailing free slots are cut off the slot table (ids of live
    /// entries never change, so policies and SCAN cursors stay valid) and
    /// indexes are shrunk to fit. O(slots) when it acts, which is only when
    /// three quarters of the slot table are free; the server calls it from
    /// the active expiry cycle.
    pub fn shrink_if_sparse(&mut self) {
        let live = self.slots.len() - self.free_slots.len();
        if self.slots.is_empty() || live * 4 > self.slots.len() {
            return;
        }
        while matches!(self.slots.last(), Some(None)) {
            self.slots.pop();
        }
        let len = self.slots.len() as u32;
        self.free_slots.retain(|&id| id < len);
        self.slots.shrink_to_fit();
        self.free_slots.shrink_to_fit();
        self.volatile.shrink_to_fit();
        let (hasher, slots) = (&self.key_hasher, &self.slots);
        for table in &mut self.tables {
            let n = table.index.len();
            table.index.shrink_to(n, |&id| {
                slots[id as usize]
                    .as_ref()
                    .map_or(0, |s| hasher.hash_one(&s.key[..]))
            });
        }
    }

    /// Exchanges the contents of databases `a` and `b`.
    pub fn swap_db(&mut self, a: usize, b: usize) {
        self.db_table.swap(a, b);
        self.version_clock += 1;
    }

    /// Replaces the eviction policy, re-registering every qualifying key in
    /// the order it was last accessed, so that recency survives the switch.
    pub fn set_policy(&mut self, kind: PolicyKind, policy: Option<AnyPolicy>) {
        self.policy_kind = kind;
        self.policy = policy;
        if self.policy.is_none() {
            return;
        }
        let mut resident: Vec<(Millis, u32)> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(id, s)| s.as_ref().map(|s| (s.entry.last_access, id as u32)))
            .filter(|&(_, id)| self.tracks(self.slot(id).entry.expires_at))
            .collect();
        resident.sort_unstable();
        for (at, id) in resident {
            let slot = self.slot(id);
            let hash = self.key_hasher.hash_one(&slot.key[..]);
            let cost = alloc_size(slot.key.len()) + slot.entry.value.heap_bytes() + ENTRY_OVERHEAD;
            let expires_at = slot.entry.expires_at();
            if let Some(p) = &mut self.policy {
                p.on_insert(EntryId(id), hash, cost.min(u32::MAX as usize) as u32, at);
                if expires_at.is_some() {
                    p.on_expiry_change(EntryId(id), expires_at);
                }
            }
        }
    }

    /// Heap bytes of the policy's own structures, and how many entries it
    /// tracks.
    pub fn policy_footprint(&self) -> (usize, usize) {
        self.policy
            .as_ref()
            .map_or((0, 0), |p| (p.heap_bytes(), p.len()))
    }

    /// The policy's controller state, if it is adaptive.
    pub fn controller_state(&self) -> Option<ferrum_evict::ControllerState> {
        self.policy.as_ref()?.controller_state()
    }

    /// The policy's logarithmic access counter for a live key, as `OBJECT
    /// FREQ` reports it; `None` if the key is absent or the policy keeps none.
    pub fn lfu_counter(&mut self, db: usize, key: &[u8], now: Millis) -> Option<u8> {
        let t = usize::from(self.db_table[db]);
        let id = self.find_live(t, key, now)?;
        self.policy.as_ref()?.lfu_counter(EntryId(id), now)
    }

    /// Calls `f` on each live key of database `db`.
    pub fn for_each_key(&self, db: usize, now: Millis, mut f: impl FnMut(&[u8], &Entry)) {
        for &id in self.table(db).index.iter() {
            let slot = self.slot(id);
            if !slot.entry.is_expired(now) {
                f(&slot.key, &slot.entry);
            }
        }
    }

    /// The slot table's length: cursors for `SCAN` range over `0..slot_count()`.
    pub fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// The live key of database `db` held in slot `slot`, if any.
    pub fn key_at_slot(&self, db: usize, slot: usize, now: Millis) -> Option<(&[u8], &Entry)> {
        let s = self.slots.get(slot)?.as_ref()?;
        (s.entry.table == self.db_table[db] && !s.entry.is_expired(now))
            .then_some((&s.key[..], &s.entry))
    }

    /// A uniformly random live key of database `db`, if it has any.
    pub fn random_key(&mut self, db: usize, now: Millis) -> Option<Bytes> {
        if self.is_empty(db) {
            return None;
        }
        // Rejection sampling over the slot table is O(1) expected while the
        // database fills a fair part of it; fall back to a walk otherwise.
        for _ in 0..64 {
            let slot = self.rng.random_range(0..self.slots.len());
            if let Some((k, _)) = self.key_at_slot(db, slot, now) {
                return Some(Bytes::copy_from_slice(k));
            }
        }
        let mut live = Vec::new();
        self.for_each_key(db, now, |k, _| live.push(Bytes::copy_from_slice(k)));
        if live.is_empty() {
            return None;
        }
        let i = self.rng.random_range(0..live.len());
        Some(live.swap_remove(i))
    }

    /// A random number for callers that need one drawn from the shard's seed.
    pub fn random_u64(&mut self) -> u64 {
        self.rng.random()
    }
}
