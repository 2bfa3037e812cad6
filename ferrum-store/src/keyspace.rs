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
use hashbrown::HashMap;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::memory::entry_cost;
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
    expires_at: Option<Millis>,
    last_access: Millis,
    version: u64,
    id: EntryId,
    /// Grown in place (APPEND, SETRANGE): Redis then always reports `raw`.
    grown_in_place: bool,
}

impl Entry {
    /// The stored value.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// When the key expires, as absolute milliseconds on the caller's clock.
    pub fn expires_at(&self) -> Option<Millis> {
        self.expires_at
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
        self.expires_at.is_some_and(|at| at <= now)
    }
}

/// A row of the slot table: which key an [`EntryId`] stands for, so that a
/// policy's victim can be found and removed.
#[derive(Debug)]
pub(crate) struct Slot {
    table: u16,
    volatile_pos: u32,
    key: Bytes,
}

/// One database's table within a shard.
#[derive(Debug, Default)]
struct Table {
    map: HashMap<Bytes, Entry>,
    expires: usize,
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
        self.entry.expires_at
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
            *self.version_clock += 1;
            self.entry.version = *self.version_clock;
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

    /// Bytes this shard's data and policy cost.
    pub fn memory_bytes(&self) -> usize {
        self.used_bytes + self.policy.as_ref().map_or(0, |p| p.heap_bytes())
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
        self.table(db).map.len()
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

    fn tracks(&self, expires_at: Option<Millis>) -> bool {
        self.policy.is_some() && (!self.policy_kind.is_volatile() || expires_at.is_some())
    }

    /// Looks `key` up in database `db`, removing it first if it has expired.
    pub fn lookup(&mut self, db: usize, key: &[u8], now: Millis, access: Access) -> Option<&Entry> {
        let t = usize::from(self.db_table[db]);
        if self.tables[t]
            .map
            .get(key)
            .is_some_and(|e| e.is_expired(now))
        {
            self.remove_from(t, key);
            self.stats.expired_keys += 1;
        }
        let Some(entry) = self.tables[t].map.get_mut(key) else {
            if matches!(access, Access::Read | Access::ReadNoTouch) {
                self.stats.keyspace_misses += 1;
                if let Some(p) = &mut self.policy {
                    p.on_miss(self.key_hasher.hash_one(key), now);
                }
            }
            return None;
        };
        if matches!(access, Access::Read | Access::ReadNoTouch) {
            self.stats.keyspace_hits += 1;
        }
        if matches!(access, Access::Read | Access::Write) {
            entry.last_access = now;
            if let Some(p) = &mut self.policy {
                if !self.policy_kind.is_volatile() || entry.expires_at.is_some() {
                    p.on_hit(entry.id, now);
                }
            }
        }
        Some(entry)
    }

    /// Looks `key` up for modification (a write access). The returned guard
    /// updates memory accounting and the key's version when dropped.
    pub fn lookup_mut(&mut self, db: usize, key: &[u8], now: Millis) -> Option<EntryMut<'_>> {
        self.lookup(db, key, now, Access::Write)?;
        let t = usize::from(self.db_table[db]);
        let entry = self.tables[t].map.get_mut(key)?;
        Some(EntryMut {
            cost_before: entry.value.heap_bytes(),
            entry,
            used_bytes: &mut self.used_bytes,
            version_clock: &mut self.version_clock,
            dirty: false,
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
        let live = self.tables[t]
            .map
            .get(&key[..])
            .is_some_and(|e| !e.is_expired(now));
        if !live {
            if self.tables[t].map.contains_key(&key[..]) {
                self.remove_from(t, &key);
                self.stats.expired_keys += 1;
            }
            self.insert_new(t, Bytes::copy_from_slice(&key), value, expires_at, now);
            return None;
        }
        self.version_clock += 1;
        let entry = self.tables[t].map.get_mut(&key[..])?;
        self.used_bytes = self.used_bytes - entry.value.heap_bytes() + value.heap_bytes();
        let old = std::mem::replace(&mut entry.value, value);
        entry.grown_in_place = false;
        entry.last_access = now;
        entry.version = self.version_clock;
        let (id, had_ttl) = (entry.id, entry.expires_at.is_some());
        if let Some(p) = &mut self.policy {
            if !self.policy_kind.is_volatile() || had_ttl {
                p.on_hit(id, now);
            }
        }
        self.set_expiry_of(t, &key, expires_at, now);
        Some(old)
    }

    fn insert_new(
        &mut self,
        t: usize,
        key: Bytes,
        value: Value,
        expires_at: Option<Millis>,
        now: Millis,
    ) {
        let id = match self.free_slots.pop() {
            Some(i) => i,
            None => {
                self.slots.push(None);
                (self.slots.len() - 1) as u32
            }
        };
        let cost = entry_cost(key.len(), value.heap_bytes());
        self.used_bytes += cost;
        self.version_clock += 1;
        self.slots[id as usize] = Some(Slot {
            table: t as u16,
            volatile_pos: NOT_VOLATILE,
            key: key.clone(),
        });
        let key_hash = self.key_hasher.hash_one(&key[..]);
        self.tables[t].map.insert(
            key,
            Entry {
                value,
                expires_at,
                last_access: now,
                version: self.version_clock,
                id: EntryId(id),
                grown_in_place: false,
            },
        );
        if expires_at.is_some() {
            self.add_volatile(t, id);
        }
        if self.tracks(expires_at) {
            if let Some(p) = &mut self.policy {
                p.on_insert(
                    EntryId(id),
                    key_hash,
                    cost.min(u32::MAX as usize) as u32,
                    now,
                );
                if expires_at.is_some() {
                    p.on_expiry_change(EntryId(id), expires_at);
                }
            }
        }
    }

    /// Removes `key` from database `db`. An expired key counts as absent.
    pub fn remove(&mut self, db: usize, key: &[u8], now: Millis) -> Option<Value> {
        let t = usize::from(self.db_table[db]);
        let expired = self.tables[t].map.get(key)?.is_expired(now);
        let entry = self.remove_from(t, key)?;
        if expired {
            self.stats.expired_keys += 1;
            return None;
        }
        Some(entry.value)
    }

    /// Removes a key and its slot, telling the policy. The one place entries
    /// leave a table (eviction aside, which the policy already forgot).
    fn remove_from(&mut self, t: usize, key: &[u8]) -> Option<Entry> {
        let entry = self.unlink(t, key)?;
        if self.tracks(entry.expires_at) {
            if let Some(p) = &mut self.policy {
                p.on_remove(entry.id);
            }
        }
        Some(entry)
    }

    /// Removes a key and its slot without telling the policy.
    fn unlink(&mut self, t: usize, key: &[u8]) -> Option<Entry> {
        let (stored_key, entry) = self.tables[t].map.remove_entry(key)?;
        self.used_bytes -= entry_cost(stored_key.len(), entry.value.heap_bytes());
        self.version_clock += 1;
        if entry.expires_at.is_some() {
            self.remove_volatile(t, entry.id.0);
        }
        self.slots[entry.id.index()] = None;
        self.free_slots.push(entry.id.0);
        Some(entry)
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
        if self.lookup(db, key, now, Access::Write).is_none() {
            return false;
        }
        let t = usize::from(self.db_table[db]);
        self.version_clock += 1;
        if let Some(e) = self.tables[t].map.get_mut(key) {
            e.version = self.version_clock;
        }
        self.set_expiry_of(t, key, expires_at, now);
        true
    }

    fn set_expiry_of(&mut self, t: usize, key: &[u8], expires_at: Option<Millis>, now: Millis) {
        let Some(entry) = self.tables[t].map.get_mut(key) else {
            return;
        };
        let before = entry.expires_at;
        entry.expires_at = expires_at;
        let (id, cost) = (entry.id, entry_cost(key.len(), entry.value.heap_bytes()));
        match (before.is_some(), expires_at.is_some()) {
            (false, true) => self.add_volatile(t, id.0),
            (true, false) => self.remove_volatile(t, id.0),
            _ => {}
        }
        let (was, is) = (self.tracks(before), self.tracks(expires_at));
        let key_hash = self.key_hasher.hash_one(key);
        let Some(p) = &mut self.policy else { return };
        match (was, is) {
            (false, true) => {
                p.on_insert(id, key_hash, cost.min(u32::MAX as usize) as u32, now);
                p.on_expiry_change(id, expires_at);
            }
            (true, false) => p.on_remove(id),
            (true, true) if before != expires_at => p.on_expiry_change(id, expires_at),
            _ => {}
        }
    }

    fn add_volatile(&mut self, t: usize, id: u32) {
        if let Some(slot) = &mut self.slots[id as usize] {
            slot.volatile_pos = self.volatile.len() as u32;
            self.volatile.push(id);
            self.tables[t].expires += 1;
        }
    }

    fn remove_volatile(&mut self, t: usize, id: u32) {
        let Some(slot) = &mut self.slots[id as usize] else {
            return;
        };
        let pos = std::mem::replace(&mut slot.volatile_pos, NOT_VOLATILE);
        if pos == NOT_VOLATILE {
            return;
        }
        self.volatile.swap_remove(pos as usize);
        if let Some(&moved) = self.volatile.get(pos as usize) {
            if let Some(s) = &mut self.slots[moved as usize] {
                s.volatile_pos = pos;
            }
        }
        self.tables[t].expires -= 1;
    }

    /// Evicts one entry chosen by the policy. Returns the bytes freed, or
    /// `None` when the policy has nothing to evict.
    pub fn evict_one(&mut self, now: Millis) -> Option<usize> {
        let before = self.memory_bytes();
        let id = self.policy.as_mut()?.evict(now)?;
        let slot = self.slots[id.index()].as_ref()?;
        let (t, key) = (usize::from(slot.table), slot.key.clone());
        self.unlink(t, &key)?;
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
                let id = self.volatile[pos] as usize;
                out.checked += 1;
                let Some(slot) = &self.slots[id] else {
                    continue;
                };
                let (t, key) = (usize::from(slot.table), slot.key.clone());
                if self.tables[t]
                    .map
                    .get(&key[..])
                    .is_some_and(|e| e.is_expired(now))
                {
                    self.remove_from(t, &key);
                    self.stats.expired_keys += 1;
                    expired_this_round += 1;
                }
            }
            out.expired += expired_this_round;
            if expired_this_round * 4 <= round {
                break;
            }
        }
        out
    }

    /// Removes every key of database `db`. Returns how many there were.
    pub fn flush_db(&mut self, db: usize) -> usize {
        let t = usize::from(self.db_table[db]);
        let keys: Vec<Bytes> = self.tables[t].map.keys().cloned().collect();
        for key in &keys {
            self.remove_from(t, key);
        }
        keys.len()
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
        let mut resident: Vec<(Millis, EntryId, u64, usize, Option<Millis>)> = self
            .tables
            .iter()
            .flat_map(|t| t.map.iter())
            .filter(|(_, e)| self.tracks(e.expires_at))
            .map(|(k, e)| {
                let cost = entry_cost(k.len(), e.value.heap_bytes());
                (
                    e.last_access,
                    e.id,
                    self.key_hasher.hash_one(&k[..]),
                    cost,
                    e.expires_at,
                )
            })
            .collect();
        resident.sort_unstable_by_key(|r| (r.0, r.1));
        if let Some(p) = &mut self.policy {
            for (at, id, hash, cost, expires_at) in resident {
                p.on_insert(id, hash, cost.min(u32::MAX as usize) as u32, at);
                if expires_at.is_some() {
                    p.on_expiry_change(id, expires_at);
                }
            }
        }
    }

    /// The policy's controller state, if it is adaptive.
    pub fn controller_state(&self) -> Option<ferrum_evict::ControllerState> {
        self.policy.as_ref()?.controller_state()
    }

    /// The policy's logarithmic access counter for a live key, as `OBJECT
    /// FREQ` reports it; `None` if the key is absent or the policy keeps none.
    pub fn lfu_counter(&mut self, db: usize, key: &[u8], now: Millis) -> Option<u8> {
        let id = self.lookup(db, key, now, Access::Peek)?.id;
        self.policy.as_ref()?.lfu_counter(id, now)
    }

    /// Calls `f` on each live key of database `db`.
    pub fn for_each_key(&self, db: usize, now: Millis, mut f: impl FnMut(&Bytes, &Entry)) {
        for (k, e) in &self.table(db).map {
            if !e.is_expired(now) {
                f(k, e);
            }
        }
    }

    /// The slot table's length: cursors for `SCAN` range over `0..slot_count()`.
    pub fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// The live key of database `db` held in slot `slot`, if any.
    pub fn key_at_slot(&self, db: usize, slot: usize, now: Millis) -> Option<(&Bytes, &Entry)> {
        let s = self.slots.get(slot)?.as_ref()?;
        if s.table != self.db_table[db] {
            return None;
        }
        let (k, e) = self.tables[usize::from(s.table)]
            .map
            .get_key_value(&s.key[..])?;
        (!e.is_expired(now)).then_some((k, e))
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
                return Some(k.clone());
            }
        }
        let live = self
            .table(db)
            .map
            .values()
            .filter(|e| !e.is_expired(now))
            .count();
        if live == 0 {
            return None;
        }
        let nth = self.rng.random_range(0..live);
        let t = usize::from(self.db_table[db]);
        let mut keys = self.tables[t]
            .map
            .iter()
            .filter(|(_, e)| !e.is_expired(now));
        keys.nth(nth).map(|(k, _)| k.clone())
    }

    /// A random number for callers that need one drawn from the shard's seed.
    pub fn random_u64(&mut self) -> u64 {
        self.rng.random()
    }
}
