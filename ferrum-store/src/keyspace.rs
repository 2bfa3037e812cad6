//! One shard of the keyspace: every database's keys that hash to it, their
//! expiry, their memory cost and the eviction policy that orders them.
//!
//! A shard is plain single-threaded data; [`Store`](crate::Store) puts each
//! behind its own lock. Keys are routed to shards by hash, so a key lives in
//! the same shard in every database, and `SWAPDB` is a swap of two table
//! indices rather than a rehash.

use std::hash::BuildHasher;
use std::sync::Arc;

use bytes::Bytes;
use ferrum_evict::{AnyPolicy, EntryId, EvictionPolicy, Millis, PolicyConfig, PolicyKind};
use hashbrown::HashTable;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::block::Block;
use crate::entry::{Entry, EntryMut, Watches};
use crate::expired::ExpiredLog;
use crate::memory;
use crate::snapshot::{ShardSnapshot, SnapshotChunk};

/// What a shard hashes to tell whether an exported policy state names
/// keys by the same hashes (see [`Shard::export_policy_state`]).
const HASH_PROBE: &[u8] = b"ferrum policy state";
use crate::stats::KeyspaceStats;
use crate::value::{Typed, Value};
use crate::StoreError;

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

/// Encodes an optional deadline as the block stores it: 0 means none (a
/// deadline at the origin is always already past, so it never needs
/// storing).
fn deadline(expires_at: Option<Millis>) -> u64 {
    expires_at.map_or(0, |m| m.0.max(1))
}

fn is_expired(block: &Block, now: Millis) -> bool {
    let d = block.deadline();
    d != 0 && d <= now.0
}

/// The block for a new key. Keys and strings arrive as bulks no longer than
/// `proto-max-bulk-len`, whose maximum is the block's length limit, and
/// writes that grow a string check Redis's 512 MB limit first.
/// What a new entry holds: a value built already, or a string's bytes,
/// copied once, straight into the entry's block (a `SET` from the network).
enum NewValue<'a> {
    Owned(Value),
    Str(&'a [u8]),
}

fn new_block(key: &[u8], value: NewValue<'_>, table: usize, now: Millis) -> Block {
    match value {
        NewValue::Owned(v) => Block::new(key, v, table as u16, now.0),
        NewValue::Str(bytes) => Block::new_str(key, bytes, table as u16, now.0),
    }
    .unwrap_or_else(|_| unreachable!("bulk lengths are capped below the block limit"))
}

/// One database's index within a shard: key hash to slot id. The keys and
/// entries live in the shard's slot table, so a bucket costs 4 bytes plus a
/// control byte instead of a whole key and entry.
#[derive(Debug, Default)]
struct Table {
    index: HashTable<u32>,
    expires: usize,
    /// How many keys the index holds before it must grow, with no
    /// tombstones: its capacity as last seen clean.
    full: usize,
}

impl Table {
    /// Whether the index should be rebuilt at its size before the next
    /// insert, rather than let grow.
    ///
    /// Removal leaves a tombstone wherever the probe sequence needs one,
    /// and tombstones use up the room for inserts. When it runs out,
    /// hashbrown rehashes in place if the live keys fill at most half the
    /// table, and otherwise doubles it. Under eviction a shard's keys churn
    /// at a steady count, so that rule doubled every index of a full cache
    /// (up to 10 bytes a key instead of 5, 15% of the keys a `maxmemory`
    /// held). Rebuilding at the same size instead is O(keys) once per
    /// `full - keys` inserts; it is done while at least an eighth of the
    /// table's room is free, so it costs at most 7 moves an insert
    /// amortised, and only under churn near the limit.
    fn needs_rebuild(&self) -> bool {
        let len = self.index.len();
        len > 0 && self.index.capacity() == len && len * 8 <= self.full * 7
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
    /// Every resident key of every database, indexed by [`EntryId`]: one
    /// thin pointer a row.
    slots: Vec<Option<Block>>,
    free_slots: Vec<u32>,
    /// Ids of entries with a TTL, for the active expiry cycle.
    volatile: Vec<u32>,
    /// Where the active expiry cycle goes on in `volatile`.
    expire_cursor: usize,
    policy: Option<AnyPolicy>,
    policy_kind: PolicyKind,
    /// What a fresh policy is built from, after `FLUSHALL` or a resize.
    policy_config: PolicyConfig,
    /// Heap bytes of the blocks (and the collections they own).
    used_bytes: usize,
    /// Heap bytes of the indexes' allocations (see `recount_indexes`).
    index_bytes: usize,
    watches: Watches,
    stats: KeyspaceStats,
    seed: u64,
    rng: SmallRng,
    key_hasher: foldhash::fast::FixedState,
    /// Reads treat expired keys as missing but leave them in place (see
    /// [`Shard::set_hold_expired`]).
    hold_expired: bool,
    /// A snapshot in progress (see [`crate::snapshot`]).
    snapshot: Option<Box<ShardSnapshot>>,
    /// Where removals by expiry are named while a store needs them (see
    /// [`ExpiredLog`]); shared by every shard of a store.
    expired_log: Arc<ExpiredLog>,
}

/// A key found in an index: its slot and the hash it was found by, which a
/// hit hands on to the policy rather than hashing the key again.
#[derive(Clone, Copy)]
struct Found {
    id: u32,
    hash: u64,
}

impl Shard {
    /// An empty shard holding `databases` databases, evicting with the
    /// policy `kind` built from `config` (none for `noeviction`). Every
    /// random choice of the shard flows from `config.seed`.
    pub fn new(databases: usize, kind: PolicyKind, config: PolicyConfig) -> Shard {
        let databases = databases.clamp(1, usize::from(u16::MAX));
        let seed = config.seed;
        Shard {
            tables: (0..databases).map(|_| Table::default()).collect(),
            db_table: (0..databases as u16).collect(),
            slots: Vec::new(),
            free_slots: Vec::new(),
            volatile: Vec::new(),
            expire_cursor: 0,
            policy: kind.build(&config),
            policy_kind: kind,
            policy_config: config,
            used_bytes: 0,
            index_bytes: 0,
            watches: Watches::default(),
            stats: KeyspaceStats::default(),
            seed,
            rng: SmallRng::seed_from_u64(seed),
            key_hasher: foldhash::fast::FixedState::with_seed(seed),
            hold_expired: false,
            snapshot: None,
            expired_log: Arc::default(),
        }
    }

    /// Records this shard's removals by expiry in `log` (while it is on).
    pub fn set_expired_log(&mut self, log: Arc<ExpiredLog>) {
        self.expired_log = log;
    }

    /// Removes slot `id`, whose TTL passed, and counts it expired.
    fn remove_expired(&mut self, id: u32) {
        if self.expired_log.is_on() {
            let block = self.block(id);
            if let Some(db) = self.db_of_table(block.table()) {
                self.expired_log.push(db, block.key());
            }
        }
        self.remove_slot(id);
        self.stats.expired_keys += 1;
    }

    /// Bytes this shard's data, indexes and policy cost, as allocated: the
    /// keys' blocks (and collections), the indexes' and the slot table's
    /// and lists' allocations at their capacity, rounded to the allocator's
    /// size classes, and the policy's own tables. Capacities grow
    /// deterministically with the operations applied, so the simulator and
    /// the server still evict at the same points; counting them is what
    /// keeps `used_memory` within a few percent of what the allocator holds
    /// (at full load only, an index under-counted by up to half).
    pub fn memory_bytes(&self) -> usize {
        // O(1): this runs twice per command (`Locked` publishes the change).
        let slots = memory::alloc_size(self.slots.capacity() * size_of::<Option<Block>>());
        let lists = memory::alloc_size(self.free_slots.capacity() * 4)
            + memory::alloc_size(self.volatile.capacity() * 4);
        let policy = self.policy.as_ref().map_or(0, |p| p.heap_bytes());
        self.used_bytes + self.index_bytes + slots + lists + policy + self.watches.heap_bytes()
    }

    /// Rebuilds table `t`'s index at its current size, dropping its
    /// tombstones (see `Table::needs_rebuild`).
    fn rebuild_index(&mut self, t: usize) {
        let table = &mut self.tables[t];
        let mut fresh = HashTable::with_capacity(table.full);
        let (hasher, slots) = (&self.key_hasher, &self.slots);
        let hash = |id: u32| {
            slots[id as usize]
                .as_ref()
                .map_or(0, |b| hasher.hash_one(b.key()))
        };
        for &id in table.index.iter() {
            fresh.insert_unique(hash(id), id, |&other| hash(other));
        }
        table.index = fresh;
        table.full = table.index.capacity();
        self.recount_indexes();
    }

    /// Recounts [`Shard::memory_bytes`]'s share for the indexes, after an
    /// operation that may have resized one.
    fn recount_indexes(&mut self) {
        self.index_bytes = self
            .tables
            .iter()
            .map(|t| memory::alloc_size(t.index.allocation_size()))
            .sum();
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

    fn block(&self, id: u32) -> &Block {
        // Ids come from the index or the policy, which only hold live slots.
        self.slots[id as usize]
            .as_ref()
            .unwrap_or_else(|| unreachable!("slot {id} is indexed but empty"))
    }

    fn block_mut(&mut self, id: u32) -> &mut Block {
        self.slots[id as usize]
            .as_mut()
            .unwrap_or_else(|| unreachable!("slot {id} is indexed but empty"))
    }

    /// What the policy is told a key costs: its block and its rows.
    fn policy_cost(block: &Block) -> u32 {
        memory::entry_cost(block.heap_bytes()).min(u32::MAX as usize) as u32
    }

    /// While `on`, reads ([`Access::Read`], [`Access::ReadNoTouch`]) see an
    /// expired key as missing without removing it or counting it
    /// expired, as Redis does while clients are paused (a paused primary
    /// must not change its dataset). Writes still remove it first, so a
    /// key is never stored twice.
    pub fn set_hold_expired(&mut self, on: bool) {
        self.hold_expired = on;
    }

    /// The slot holding `key` in physical table `t`, expired or not.
    fn find(&self, t: usize, key: &[u8]) -> Option<Found> {
        let hash = self.key_hasher.hash_one(key);
        let slots = &self.slots;
        self.tables[t]
            .index
            .find(hash, |&id| {
                slots[id as usize].as_ref().is_some_and(|b| b.key() == key)
            })
            .map(|&id| Found { id, hash })
    }

    /// The live slot for `key` in table `t`, removing it first if expired.
    fn find_live(&mut self, t: usize, key: &[u8], now: Millis) -> Option<Found> {
        let found = self.find(t, key)?;
        if is_expired(self.block(found.id), now) {
            self.remove_expired(found.id);
            return None;
        }
        Some(found)
    }

    /// Looks `key` up in database `db`, removing it first if it has expired.
    pub fn lookup(
        &mut self,
        db: usize,
        key: &[u8],
        now: Millis,
        access: Access,
    ) -> Option<Entry<'_>> {
        let t = usize::from(self.db_table[db]);
        let counts = matches!(access, Access::Read | Access::ReadNoTouch);
        let found = if counts && self.hold_expired {
            self.find(t, key)
                .filter(|f| !is_expired(self.block(f.id), now))
        } else {
            self.find_live(t, key, now)
        };
        let Some(found) = found else {
            if counts {
                self.stats.keyspace_misses += 1;
                if let Some(p) = &mut self.policy {
                    p.on_miss(self.key_hasher.hash_one(key), now);
                }
            }
            return None;
        };
        let id = found.id;
        if counts {
            self.stats.keyspace_hits += 1;
        }
        if matches!(access, Access::Read | Access::Write) {
            self.touch(found, now);
        }
        Some(Entry {
            block: self.block(id),
        })
    }

    /// Refreshes recency: the entry's own clock and the policy's order.
    fn touch(&mut self, Found { id, hash }: Found, now: Millis) {
        let block = self.block_mut(id);
        block.set_last_access(now.0);
        let deadline = block.deadline();
        if self.tracks(deadline) {
            if let Some(p) = &mut self.policy {
                p.on_hit(EntryId(id), hash, now);
            }
        }
    }

    /// Looks `key` up for modification (a write access). The returned guard
    /// updates memory accounting and the key's version when dropped.
    pub fn lookup_mut(&mut self, db: usize, key: &[u8], now: Millis) -> Option<EntryMut<'_>> {
        let t = usize::from(self.db_table[db]);
        let found = self.find_live(t, key, now)?;
        let id = found.id;
        self.touch(found, now);
        self.preserve(id);
        let block = self.slots[id as usize].as_mut()?;
        Some(EntryMut::new(
            block,
            id,
            &mut self.used_bytes,
            &mut self.watches,
        ))
    }

    /// The version `WATCH` compares for `key` in database `db`: it changes
    /// whenever the key is written, removed or created again. An absent
    /// key has one too, which changes when the key is created (see
    /// `Watches`), so absent, created, removed again reads as a change.
    /// Counts nothing and touches no recency.
    pub fn watch_version(&mut self, db: usize, key: &[u8], now: Millis) -> Option<u64> {
        let t = usize::from(self.db_table[db]);
        let Some(found) = self.find_live(t, key, now) else {
            return Some(self.watches.absent_version(t as u16, key));
        };
        let id = found.id;
        let block = self.slots[id as usize].as_mut()?;
        Some(self.watches.version(block, id))
    }

    /// Runs `f` on the collection of type `T` at `key` for a write,
    /// creating an empty one first when the key is absent and `create` is
    /// set, and upholds Redis's rule that no key holds an empty list, hash,
    /// set or sorted set: a key `f` drains is deleted, and a created value is
    /// stored only if `f` left it non-empty. `changed` tells from `f`'s
    /// result whether it changed anything; when it did not, the key keeps
    /// its `WATCH` version. `Ok(None)` when the key is absent and `create`
    /// is not set.
    ///
    /// # Errors
    ///
    /// [`StoreError::WrongType`] when the key holds another type; nothing is
    /// changed then.
    pub fn update<T: Typed, R>(
        &mut self,
        db: usize,
        key: &Bytes,
        now: Millis,
        create: bool,
        f: impl FnOnce(&mut T) -> R,
        changed: impl FnOnce(&R) -> bool,
    ) -> Result<Option<R>, StoreError> {
        // `f` runs in one of two places; the borrow of the entry must end
        // before the absent case can insert.
        let mut f = Some(f);
        let existing = match self.lookup_mut(db, key, now) {
            Some(mut e) => {
                let t = e.coll_mut::<T>()?;
                let r = f.take().map(|f| f(t));
                let drained = t.is_drained();
                if r.as_ref().is_some_and(|r| !changed(r)) {
                    e.mark_unchanged();
                }
                Some((r, drained))
            }
            None => None,
        };
        let (r, drained) = match (existing, f) {
            (Some((Some(r), drained)), _) => (r, drained),
            (None, Some(f)) if create => {
                let mut t = T::default();
                let r = f(&mut t);
                if !t.is_drained() {
                    self.insert(db, key.clone(), t.into(), None, now);
                }
                return Ok(Some(r));
            }
            _ => return Ok(None),
        };
        if drained {
            self.delete(db, key, now);
        }
        Ok(Some(r))
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
        self.insert_value(db, &key, NewValue::Owned(value), expires_at, now)
    }

    /// Stores the string `bytes` under `key`, as [`Shard::insert`] with a
    /// `Value::Str`, but copying the bytes only once, into the entry.
    pub fn insert_str(
        &mut self,
        db: usize,
        key: &[u8],
        bytes: &[u8],
        expires_at: Option<Millis>,
        now: Millis,
    ) -> Option<Value> {
        self.insert_value(db, key, NewValue::Str(bytes), expires_at, now)
    }

    fn insert_value(
        &mut self,
        db: usize,
        key: &[u8],
        value: NewValue<'_>,
        expires_at: Option<Millis>,
        now: Millis,
    ) -> Option<Value> {
        let t = usize::from(self.db_table[db]);
        let Some(found) = self.find_live(t, key, now) else {
            self.insert_new(t, key, value, deadline(expires_at), now);
            return None;
        };
        let id = found.id;
        self.touch(found, now);
        self.preserve(id);
        let old_deadline = self.block(id).deadline();
        let volatile_pos = (old_deadline != 0).then(|| self.block(id).volatile_pos());
        let mut block = new_block(key, value, t, now);
        // Keep the list position while the old deadline is in place, so
        // `set_deadline` below sees the key as it was.
        if let Some(pos) = volatile_pos {
            block.set_deadline(old_deadline);
            block.set_volatile_pos(pos);
        }
        let slot = self.block_mut(id);
        let watched = slot.watched();
        let old = std::mem::replace(slot, block);
        if watched {
            self.block_mut(id).set_watched();
        }
        self.used_bytes = self.used_bytes - old.heap_bytes() + self.block(id).heap_bytes();
        self.watches.touch(self.block(id).watched(), id);
        self.set_deadline(id, deadline(expires_at), now);
        Some(old.into_value())
    }

    fn insert_new(
        &mut self,
        t: usize,
        key: &[u8],
        value: NewValue<'_>,
        expires_at: u64,
        now: Millis,
    ) {
        let id = match self.free_slots.pop() {
            Some(i) => i,
            None => {
                if self.slots.len() == self.slots.capacity() {
                    // Grow by an eighth, not by doubling: under maxmemory a
                    // doubling slot table would evict a large share of the
                    // keys at once to pay for slots that stay empty. An
                    // eighth keeps pushes amortised O(1).
                    self.slots.reserve_exact((self.slots.len() / 8).max(16));
                }
                self.slots.push(None);
                (self.slots.len() - 1) as u32
            }
        };
        if let Some(s) = &mut self.snapshot {
            // Created after the snapshot's start: not part of it.
            s.take(id);
        }
        let mut block = new_block(key, value, t, now);
        block.set_deadline(expires_at);
        self.watches.created(t as u16, &mut block, id);
        self.used_bytes += block.heap_bytes();
        let cost = Self::policy_cost(&block);
        self.slots[id as usize] = Some(block);
        let hash = self.key_hasher.hash_one(key);
        if self.tables[t].needs_rebuild() {
            self.rebuild_index(t);
        }
        let (hasher, slots) = (&self.key_hasher, &self.slots);
        let before = (
            self.tables[t].index.capacity(),
            self.tables[t].index.allocation_size(),
        );
        self.tables[t].index.insert_unique(hash, id, |&other| {
            slots[other as usize]
                .as_ref()
                .map_or(0, |b| hasher.hash_one(b.key()))
        });
        // An insert into a tombstone raises the capacity by one; more, or a
        // new allocation, means the index was grown or rehashed in place,
        // and either leaves it free of tombstones.
        let after = (
            self.tables[t].index.capacity(),
            self.tables[t].index.allocation_size(),
        );
        if after.1 != before.1 || after.0 > before.0 + 1 {
            self.tables[t].full = after.0;
            self.recount_indexes();
        }
        if expires_at != 0 {
            self.add_volatile(id);
        }
        if self.tracks(expires_at) {
            if let Some(p) = &mut self.policy {
                p.on_insert(EntryId(id), hash, cost, now);
                if expires_at != 0 {
                    p.on_expiry_change(EntryId(id), Some(Millis(expires_at)));
                }
            }
        }
    }

    /// Removes `key` from database `db`. An expired key counts as absent.
    pub fn remove(&mut self, db: usize, key: &[u8], now: Millis) -> Option<Value> {
        let t = usize::from(self.db_table[db]);
        let found = self.find_live(t, key, now)?;
        let id = found.id;
        self.forget_in_policy(id);
        Some(self.unlink(id).into_value())
    }

    /// Removes `key` from database `db` without handing its value back
    /// (`DEL`, `UNLINK`). Returns whether it was there.
    pub fn delete(&mut self, db: usize, key: &[u8], now: Millis) -> bool {
        let t = usize::from(self.db_table[db]);
        let Some(found) = self.find_live(t, key, now) else {
            return false;
        };
        let id = found.id;
        self.remove_slot(id);
        true
    }

    fn forget_in_policy(&mut self, id: u32) {
        if self.tracks(self.block(id).deadline()) {
            if let Some(p) = &mut self.policy {
                p.on_remove(EntryId(id));
            }
        }
    }

    /// Removes a slot and tells the policy. With [`Shard::unlink`], the only
    /// ways entries leave.
    fn remove_slot(&mut self, id: u32) {
        self.forget_in_policy(id);
        drop(self.unlink(id));
    }

    /// Removes a slot from its table and the volatile list, without telling
    /// the policy (eviction: the policy already forgot it).
    fn unlink(&mut self, id: u32) -> Block {
        self.preserve(id);
        if self.block(id).deadline() != 0 {
            self.remove_volatile(id);
        }
        let Some(block) = self.slots[id as usize].take() else {
            unreachable!("slot {id} unlinked twice")
        };
        let t = usize::from(block.table());
        let hash = self.key_hasher.hash_one(block.key());
        if let Ok(found) = self.tables[t].index.find_entry(hash, |&other| other == id) {
            found.remove();
        }
        self.used_bytes -= block.heap_bytes();
        self.watches.forget(&block, id);
        self.free_slots.push(id);
        block
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
        let Some(found) = self.find_live(t, key, now) else {
            return false;
        };
        let id = found.id;
        self.touch(found, now);
        self.watches.touch(self.block(id).watched(), id);
        self.set_deadline(id, deadline(expires_at), now);
        true
    }

    /// Changes a slot's deadline, keeping the volatile list, the memory
    /// count (the deadline takes room in the block) and a volatile policy's
    /// membership in step.
    fn set_deadline(&mut self, id: u32, expires_at: u64, now: Millis) {
        let before = self.block(id).deadline();
        if before == expires_at {
            return;
        }
        self.preserve(id);
        if before != 0 && expires_at == 0 {
            self.remove_volatile(id);
        }
        let block = self.block_mut(id);
        let bytes_before = block.heap_bytes();
        block.set_deadline(expires_at);
        let bytes_after = block.heap_bytes();
        self.used_bytes = self.used_bytes - bytes_before + bytes_after;
        if before == 0 && expires_at != 0 {
            self.add_volatile(id);
        }
        let (was, is) = (self.tracks(before), self.tracks(expires_at));
        let block = self.block(id);
        let hash = self.key_hasher.hash_one(block.key());
        let cost = Self::policy_cost(block);
        let new_deadline = (expires_at != 0).then_some(Millis(expires_at));
        let Some(p) = &mut self.policy else { return };
        let id = EntryId(id);
        match (was, is) {
            (false, true) => {
                p.on_insert(id, hash, cost, now);
                p.on_expiry_change(id, new_deadline);
            }
            (true, false) => p.on_remove(id),
            (true, true) => p.on_expiry_change(id, new_deadline),
            (false, false) => {}
        }
    }

    /// Adds a slot whose block has a deadline to the volatile list.
    fn add_volatile(&mut self, id: u32) {
        let pos = self.volatile.len() as u32;
        let block = self.block_mut(id);
        block.set_volatile_pos(pos);
        let t = usize::from(block.table());
        self.volatile.push(id);
        self.tables[t].expires += 1;
    }

    /// Removes a slot whose block still has its deadline from the volatile
    /// list.
    fn remove_volatile(&mut self, id: u32) {
        let block = self.block(id);
        let pos = block.volatile_pos();
        let t = usize::from(block.table());
        self.volatile.swap_remove(pos as usize);
        if let Some(&moved) = self.volatile.get(pos as usize) {
            self.block_mut(moved).set_volatile_pos(pos);
        }
        self.tables[t].expires -= 1;
    }

    /// Evicts one entry chosen by the policy. Returns the bytes freed, or
    /// `None` when the policy has nothing to evict.
    pub fn evict_one(&mut self, now: Millis) -> Option<usize> {
        self.evict_one_reporting(now, &mut |_, _| {})
    }

    /// [`evict_one`](Self::evict_one), telling `evicted` the victim's
    /// database and key (for keyspace notifications and client-side
    /// caching's invalidations) before it is freed.
    pub fn evict_one_reporting(
        &mut self,
        now: Millis,
        evicted: &mut dyn FnMut(usize, &[u8]),
    ) -> Option<usize> {
        let before = self.memory_bytes();
        let (slots, hasher) = (&self.slots, &self.key_hasher);
        // The policy asks only for tracked, hence resident, entries.
        let key_hash = |id: EntryId| {
            slots[id.index()]
                .as_ref()
                .map_or(0, |block| hasher.hash_one(block.key()))
        };
        let id = self.policy.as_mut()?.evict(now, &key_hash)?;
        self.slots.get(id.index())?.as_ref()?;
        let block = self.unlink(id.0);
        if let Some(db) = self.db_of_table(block.table()) {
            evicted(db, block.key());
        }
        drop(block);
        self.stats.evicted_keys += 1;
        Some(before.saturating_sub(self.memory_bytes()))
    }

    /// The database that uses physical table `t` now (`SWAPDB` moves them).
    fn db_of_table(&self, t: u16) -> Option<usize> {
        self.db_table.iter().position(|&x| x == t)
    }

    /// One pass of active expiry, as Redis 7's cycle (`activeExpireCycle`
    /// at the default effort): rounds of 20 keys with a TTL, taken in turn
    /// from a cursor that walks the volatile list and wraps, removing the
    /// expired ones, for at most `max_checks` keys. It stops early once a
    /// round finds no more than a tenth expired: so few are stale that the
    /// rest can wait for the next pass. A cursor rather than random picks,
    /// as Redis walks its `expires` table: every key with a TTL is looked
    /// at once per sweep, so an expired key waits at most one sweep to be
    /// reclaimed, where random sampling left some for many passes.
    pub fn expire_cycle(&mut self, now: Millis, max_checks: usize) -> ExpireCycle {
        /// Keys a round looks at (Redis's `ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP`).
        const ROUND: usize = 20;
        /// Another round follows while more than this share of the last
        /// one, in percent, had expired
        /// (`ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE`).
        const ACCEPTABLE_STALE: usize = 10;
        let mut out = ExpireCycle::default();
        while out.checked < max_checks && !self.volatile.is_empty() {
            let round = ROUND.min(self.volatile.len());
            let mut expired_this_round = 0;
            for _ in 0..round {
                if self.volatile.is_empty() {
                    break;
                }
                if self.expire_cursor >= self.volatile.len() {
                    self.expire_cursor = 0;
                }
                let id = self.volatile[self.expire_cursor];
                out.checked += 1;
                if is_expired(self.block(id), now) {
                    // The list's last id moves into the cursor's place:
                    // it is looked at next.
                    self.remove_expired(id);
                    expired_this_round += 1;
                } else {
                    self.expire_cursor += 1;
                }
            }
            out.expired += expired_this_round;
            if expired_this_round * 100 <= round * ACCEPTABLE_STALE {
                break;
            }
        }
        self.shrink_if_sparse();
        out
    }

    /// Removes every key of database `db`. Returns how many there were.
    ///
    /// The policy starts over, as if new: its history of the flushed keys
    /// (frequency counts, ghosts) would otherwise steer what the next
    /// workload keeps, so the same requests after a `FLUSHALL` would be
    /// served differently from a fresh server. Keys of other databases are
    /// registered again in access order.
    pub fn flush_db(&mut self, db: usize) -> usize {
        let t = usize::from(self.db_table[db]);
        let ids: Vec<u32> = self.tables[t].index.iter().copied().collect();
        // The policy is rebuilt below: skip telling it about each key.
        let policy = self.policy.take();
        for &id in &ids {
            drop(self.unlink(id));
        }
        self.policy = policy;
        // Give the index's memory back, as Redis frees a flushed dict.
        self.tables[t].index = HashTable::new();
        self.tables[t].full = 0;
        self.recount_indexes();
        self.shrink_if_sparse();
        if self.slots.iter().all(Option::is_none) {
            // Nothing left: back to the state of a new shard, random
            // streams included.
            self.slots = Vec::new();
            self.free_slots = Vec::new();
            self.volatile = Vec::new();
            self.expire_cursor = 0;
            // The versions left with their keys (`unlink`); drop the
            // table's allocation. The clock behind them is not the
            // shard's, so no version handed out before comes back.
            self.watches.release_versions();
            self.rng = SmallRng::seed_from_u64(self.seed);
        }
        self.rebuild_policy();
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
                    .map_or(0, |b| hasher.hash_one(b.key()))
            });
            table.full = table.index.capacity();
        }
        self.recount_indexes();
    }

    /// Exchanges the contents of databases `a` and `b`.
    pub fn swap_db(&mut self, a: usize, b: usize) {
        let (ta, tb) = (self.db_table[a], self.db_table[b]);
        self.watches.swap_tables(ta, tb);
        self.db_table.swap(a, b);
    }

    /// Replaces the eviction policy (`CONFIG SET maxmemory-policy` and its
    /// parameters), re-registering every qualifying key in the order it was
    /// last accessed, so that recency survives the switch.
    pub fn set_policy(&mut self, kind: PolicyKind, config: PolicyConfig) {
        self.policy_kind = kind;
        self.policy_config = config;
        self.rebuild_policy();
    }

    /// Starts the policy over from its configuration, as if new, and
    /// registers the resident keys in access order (`maxmemory` changed,
    /// the keys were flushed, the policy switched). A policy sized for an
    /// old limit, or remembering keys no longer here, would make the next
    /// run's result depend on what ran before.
    pub fn rebuild_policy(&mut self) {
        self.policy = self.policy_kind.build(&self.policy_config);
        if self.policy.is_none() {
            return;
        }
        let mut resident: Vec<(u64, u32)> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(id, b)| b.as_ref().map(|b| (b.last_access_ms(), id as u32)))
            .filter(|&(_, id)| self.tracks(self.block(id).deadline()))
            .collect();
        resident.sort_unstable();
        for (at, id) in resident {
            let block = self.block(id);
            let hash = self.key_hasher.hash_one(block.key());
            let cost = Self::policy_cost(block);
            let expires_at = block.deadline();
            if let Some(p) = &mut self.policy {
                p.on_insert(EntryId(id), hash, cost, Millis(at));
                if expires_at != 0 {
                    p.on_expiry_change(EntryId(id), Some(Millis(expires_at)));
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
        let found = self.find_live(t, key, now)?;
        let id = found.id;
        self.policy.as_ref()?.lfu_counter(EntryId(id), now)
    }

    /// Sets a live key's logarithmic access counter in the policy (`RESTORE
    /// ... FREQ`); a policy without counters ignores it.
    pub fn set_lfu_counter(&mut self, db: usize, key: &[u8], counter: u8, now: Millis) {
        self.with_policy_of(db, key, now, |p, id| p.set_lfu_counter(id, counter, now));
    }

    /// Runs `f` on the policy and a live key's id, if the policy tracks
    /// the key.
    fn with_policy_of(
        &mut self,
        db: usize,
        key: &[u8],
        now: Millis,
        f: impl FnOnce(&mut AnyPolicy, EntryId),
    ) {
        let t = usize::from(self.db_table[db]);
        let Some(found) = self.find_live(t, key, now) else {
            return;
        };
        let id = found.id;
        if self.tracks(self.block(id).deadline()) {
            if let Some(p) = &mut self.policy {
                f(p, EntryId(id));
            }
        }
    }

    /// Before slot `id`'s entry changes or goes: a snapshot in progress
    /// that still needs it encodes it as it is.
    fn preserve(&mut self, id: u32) {
        if let Some(s) = &mut self.snapshot {
            if let Some(block) = self.slots[id as usize].as_ref() {
                // The same hint the walk would have taken (AHE's queue
                // and counter as well as LFU's counter).
                let hint = self
                    .policy
                    .as_ref()
                    .and_then(|p| p.warm_hint(EntryId(id), s.at));
                s.preserve(id, block, hint);
            }
        }
    }

    /// Starts this shard's part of a snapshot of every key live `at` now
    /// (see [`crate::snapshot`]), replacing any other in progress.
    pub(crate) fn snapshot_start(&mut self, generation: u64, at: Millis) {
        let table_db = (0..self.tables.len())
            .map(|t| self.db_of_table(t as u16).unwrap_or(0))
            .collect();
        self.snapshot = Some(Box::new(ShardSnapshot::new(
            generation,
            self.slots.len(),
            table_db,
            at,
        )));
    }

    /// Gives snapshot `generation` the policy's order for the entries it
    /// copies from now on (a pass over the policy's own queues, no keys;
    /// called by the saving thread, one shard locked at a time, rather
    /// than at the start, when every shard is).
    pub(crate) fn snapshot_take_order(&mut self, generation: u64) {
        let Some(s) = self
            .snapshot
            .as_mut()
            .filter(|s| s.generation == generation)
        else {
            return;
        };
        if let Some(order) = self.policy.as_ref().and_then(|p| p.export_order()) {
            s.set_order(&order);
        }
    }

    /// One step of this shard's part of snapshot `generation`: copies of
    /// at least `budget` bytes unless the walk ends. Aborted when that
    /// snapshot is not in progress here.
    pub(crate) fn snapshot_step(&mut self, generation: u64, budget: usize) -> SnapshotChunk {
        let Some(s) = self
            .snapshot
            .as_mut()
            .filter(|s| s.generation == generation)
        else {
            return SnapshotChunk {
                aborted: true,
                ..SnapshotChunk::default()
            };
        };
        let (policy, at) = (&self.policy, s.at);
        let hint_of = |id| policy.as_ref().and_then(|p| p.warm_hint(EntryId(id), at));
        let chunk = s.step(&self.slots, budget, hint_of);
        if chunk.finished {
            self.snapshot = None;
        }
        chunk
    }

    /// Drops the snapshot in progress, if any.
    pub(crate) fn snapshot_abort(&mut self) {
        self.snapshot = None;
    }

    /// Whether a snapshot is in progress here.
    pub(crate) fn snapshot_running(&self) -> bool {
        self.snapshot.is_some()
    }

    /// Bytes of the copies writes displaced here during the snapshot in
    /// progress.
    pub(crate) fn snapshot_displaced_bytes(&self) -> usize {
        self.snapshot.as_ref().map_or(0, |s| s.displaced_bytes())
    }

    /// Calls `f` on each live key of database `db`.
    pub fn for_each_key(&self, db: usize, now: Millis, mut f: impl FnMut(&[u8], Entry<'_>)) {
        for &id in self.table(db).index.iter() {
            let block = self.block(id);
            if !is_expired(block, now) {
                f(block.key(), Entry { block });
            }
        }
    }

    /// Gives a just-loaded key's policy byte back to the policy (see
    /// [`crate::snapshot::SnapshotEntry::hint`]); a policy that tracks
    /// nothing of the key ignores it.
    pub fn restore_warm_hint(&mut self, db: usize, key: &[u8], hint: u8, now: Millis) {
        self.with_policy_of(db, key, now, |p, id| p.restore_warm_hint(id, hint, now));
    }

    /// What the eviction policy learnt beyond its entries' hints (see
    /// [`EvictionPolicy::export_state`]), for a snapshot.
    ///
    /// The state names keys by their hashes, so it starts with this
    /// shard's hash of a fixed probe: a shard that hashes keys otherwise
    /// (another seed or shard count) ignores it.
    pub fn export_policy_state(&self) -> Option<Vec<u8>> {
        let state = self.policy.as_ref()?.export_state()?;
        let mut out = self.key_hasher.hash_one(HASH_PROBE).to_le_bytes().to_vec();
        out.extend_from_slice(&state);
        Some(out)
    }

    /// Hands the policy a state [`Shard::export_policy_state`] gave,
    /// once a load has inserted the keys (see
    /// [`EvictionPolicy::import_state`]).
    pub fn import_policy_state(&mut self, state: &[u8]) {
        let probe = self.key_hasher.hash_one(HASH_PROBE).to_le_bytes();
        let Some(state) = state.strip_prefix(&probe[..]) else {
            return;
        };
        if let Some(p) = &mut self.policy {
            p.import_state(state);
        }
    }

    /// Puts the policy's entries for `keys` (database, key and place, as
    /// a load inserted them) in that order (see
    /// [`EvictionPolicy::import_order`]); keys not here are skipped.
    pub fn import_policy_order(&mut self, keys: &[(usize, &[u8], u32)], now: Millis) {
        if self.policy.is_none() {
            return;
        }
        let ids: Vec<(EntryId, u32)> = keys
            .iter()
            .filter_map(|&(db, key, place)| {
                let t = usize::from(*self.db_table.get(db)?);
                self.find_live(t, key, now).map(|f| (EntryId(f.id), place))
            })
            .collect();
        if let Some(p) = &mut self.policy {
            p.import_order(&ids);
        }
    }

    /// The slot table's length: cursors for `SCAN` range over `0..slot_count()`.
    pub fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// The live key of database `db` held in slot `slot`, if any.
    pub fn key_at_slot(&self, db: usize, slot: usize, now: Millis) -> Option<(&[u8], Entry<'_>)> {
        let block = self.slots.get(slot)?.as_ref()?;
        (block.table() == self.db_table[db] && !is_expired(block, now))
            .then_some((block.key(), Entry { block }))
    }

    /// Removes the key in `slot` if it belongs to database `db` and its TTL
    /// passed at `now` (unless expiry is held), as Redis's `SCAN` and
    /// `RANDOMKEY` expire the keys they meet. Whether it did.
    pub fn expire_slot(&mut self, db: usize, slot: usize, now: Millis) -> bool {
        let expired = self
            .slots
            .get(slot)
            .and_then(Option::as_ref)
            .is_some_and(|block| block.table() == self.db_table[db] && is_expired(block, now));
        if expired && !self.hold_expired {
            self.remove_expired(slot as u32);
            return true;
        }
        false
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
            if self.expire_slot(db, slot, now) && self.is_empty(db) {
                return None;
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: usize) -> Bytes {
        Bytes::from(format!("key:{i:08}"))
    }

    #[test]
    fn held_expiry_hides_expired_keys_from_reads_without_removing_them() {
        let mut shard = Shard::new(1, PolicyKind::NoEviction, PolicyConfig::default());
        shard.insert(0, key(1), Value::str(b"v"), Some(Millis(10)), Millis(0));
        shard.insert(0, key(2), Value::str(b"v"), Some(Millis(10)), Millis(0));
        shard.set_hold_expired(true);
        assert!(shard.lookup(0, &key(1), Millis(20), Access::Read).is_none());
        assert_eq!((shard.len(0), shard.stats().expired_keys), (2, 0));
        // A write still removes the key first: it is never stored twice.
        shard.insert(0, key(2), Value::str(b"w"), None, Millis(20));
        assert_eq!((shard.len(0), shard.stats().expired_keys), (2, 1));
        shard.set_hold_expired(false);
        assert!(shard.lookup(0, &key(1), Millis(20), Access::Read).is_none());
        assert_eq!((shard.len(0), shard.stats().expired_keys), (1, 2));
    }

    #[test]
    fn expiry_names_the_keys_it_removes_only_while_logged() {
        let mut shard = Shard::new(2, PolicyKind::NoEviction, PolicyConfig::default());
        let log = Arc::new(ExpiredLog::default());
        shard.set_expired_log(log.clone());
        for k in 1..=4 {
            shard.insert(1, key(k), Value::str(b"v"), Some(Millis(10)), Millis(0));
        }
        assert!(shard.lookup(1, &key(1), Millis(20), Access::Read).is_none());
        assert!(log.take().is_empty(), "nothing is named while off");
        log.set(true);
        // A read, a slot met by SCAN or RANDOMKEY, and the active cycle.
        assert!(shard.lookup(1, &key(2), Millis(20), Access::Read).is_none());
        let slot = (0..shard.slot_count())
            .find(|&s| {
                shard
                    .key_at_slot(1, s, Millis(0))
                    .is_some_and(|(k, _)| k == key(3))
            })
            .expect("key 3's slot");
        assert!(
            !shard.expire_slot(0, slot, Millis(20)),
            "another database's slot"
        );
        assert!(shard.expire_slot(1, slot, Millis(20)));
        shard.expire_cycle(Millis(20), 100);
        assert_eq!(log.take(), vec![(1, key(2)), (1, key(3)), (1, key(4))]);
        assert_eq!(shard.stats().expired_keys, 4);
    }

    #[test]
    fn churn_at_a_steady_count_does_not_grow_the_index() {
        let mut shard = Shard::new(1, PolicyKind::NoEviction, PolicyConfig::default());
        // 80% of a 1,024-bucket table's room (896 keys), above the half
        // that hashbrown would rehash in place at.
        let n = 716;
        for i in 0..n {
            shard.insert(0, key(i), Value::str(b"v"), None, Millis(0));
        }
        let allocated = shard.tables[0].index.allocation_size();
        for i in n..n + 20_000 {
            assert!(shard.delete(0, &key(i - n), Millis(0)));
            shard.insert(0, key(i), Value::str(b"v"), None, Millis(0));
        }
        assert_eq!(shard.tables[0].index.allocation_size(), allocated);
        assert_eq!(shard.len(0), n);
        for i in 20_000..20_000 + n {
            assert!(shard.lookup(0, &key(i), Millis(0), Access::Peek).is_some());
        }
    }

    #[test]
    fn insert_str_stores_what_insert_of_a_string_value_stores() {
        // Inline, at the spill boundary region, and spilled values; new keys
        // and replacements, with and without a deadline.
        let sizes = [0, 1, 31, 32, 200, 1_000, 5_000, 70_000];
        let [mut by_value, mut by_str] =
            [(); 2].map(|()| Shard::new(1, PolicyKind::AllKeysLru, PolicyConfig::default()));
        for (round, at) in [(0, None), (1, Some(Millis(60_000)))] {
            for (i, &len) in sizes.iter().enumerate() {
                let v = vec![b'a' + (i + round) as u8; len];
                let old_a = by_value.insert(0, key(i), Value::str(&v), at, Millis(1));
                let old_b = by_str.insert_str(0, &key(i), &v, at, Millis(1));
                assert_eq!(old_a.is_some(), old_b.is_some());
                let got = by_str.lookup(0, &key(i), Millis(2), Access::Peek).unwrap();
                assert_eq!(got.value().as_str().unwrap(), &v[..]);
                assert_eq!(got.expires_at(), at);
                assert_eq!(by_str.memory_bytes(), by_value.memory_bytes());
            }
        }
        assert_eq!(by_str.len(0), sizes.len());
    }
}
