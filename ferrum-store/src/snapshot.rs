//! Point-in-time snapshots taken while the store keeps serving, without
//! fork: what `BGSAVE` writes.
//!
//! A snapshot starts at one instant with every shard locked
//! ([`Store::snapshot_start`](crate::Store::snapshot_start)): each shard
//! notes how many slots it has then and which database each physical table
//! belongs to. From then on each shard's slots are in one of two states,
//! one bit each: *taken* (copied into the snapshot already, or created
//! after the start and so not part of it) or not. A walker
//! ([`Store::snapshot_step`](crate::Store::snapshot_step)) copies the
//! untaken entries out in slot order, a bounded step at a time under the
//! shard's lock. A write that would change or remove an untaken entry
//! first copies it as it was (`Shard::preserve`), so the snapshot holds
//! every key as it was at the start, however the walk and the writes
//! interleave. Memory grows only by the copies of what writes displace,
//! until the walker hands them out with its next step in that shard.
//!
//! The store hands out owned copies ([`SnapshotEntry`]) and knows nothing
//! of file formats: the caller encodes them after the lock is released,
//! so the costly part (serializing, compressing) never holds up a
//! command. A step under the lock is a copy, about a `memcpy` of the
//! step's bytes.

use bytes::Bytes;
use ferrum_evict::Millis;

use crate::block::Block;
use crate::entry::Entry;
use crate::value::Value;

/// One key of a snapshot, as it was at the snapshot's start.
#[derive(Debug, Clone)]
pub struct SnapshotEntry {
    /// Its database at the start.
    pub db: usize,
    /// The key.
    pub key: Bytes,
    /// Its value.
    pub value: Value,
    /// Its deadline, on the store's clock.
    pub expires_at: Option<Millis>,
    /// When it was last read or written (for idle times).
    pub last_access: Millis,
    /// What the eviction policy knew of it at the start, in a byte
    /// (`EvictionPolicy::warm_hint`: the LFU counter under LFU, AHE's
    /// queue and counter), for the policy to take back after a restart.
    pub hint: Option<u8>,
    /// Its place in its shard's policy order as the walk began
    /// (`EvictionPolicy::export_order`: LRU's list, AHE's queues, LFU's
    /// last accesses), for a load to put the entries back in; `None` when
    /// the policy keeps no such order (or a write copied the entry before
    /// the order was taken).
    pub rank: Option<u32>,
}

/// What one step of a shard's walk produced.
#[derive(Debug, Default)]
pub struct SnapshotChunk {
    /// Entries, to write to the snapshot in this order.
    pub entries: Vec<SnapshotEntry>,
    /// Whether this shard is done: every key it held at the start is in
    /// this chunk or an earlier one.
    pub finished: bool,
    /// Whether the snapshot was ended ([`Store::snapshot_abort`](crate::Store::snapshot_abort),
    /// or another started) before this shard finished: nothing more comes.
    pub aborted: bool,
}

/// A shard's part of a snapshot in progress.
#[derive(Debug)]
pub(crate) struct ShardSnapshot {
    /// Which snapshot this is (the store numbers them).
    pub(crate) generation: u64,
    /// One bit per slot below `limit`: taken (see the module docs).
    taken: Vec<u64>,
    /// The slot table's length at the start: slots from here on were
    /// created after it.
    limit: u32,
    /// Where the walk goes on.
    cursor: u32,
    /// The database of each physical table at the start (`SWAPDB` may
    /// change it during the walk).
    table_db: Vec<usize>,
    /// The start, as the store's clock read it (the policy's hints are
    /// taken as of then).
    pub(crate) at: Millis,
    /// Copies not yet handed out, and the bytes they hold.
    out: Vec<SnapshotEntry>,
    out_bytes: usize,
    /// Bytes of the copies writes displaced (made ahead of the walk), in
    /// all: what the snapshot cost in memory beyond the walk's own steps.
    displaced: usize,
    /// Each slot's place in the policy's order as the walk began
    /// ([`NO_RANK`] for none); empty when the policy has no order.
    rank_of: Vec<u32>,
}

/// A slot with no place in the policy's order.
const NO_RANK: u32 = u32::MAX;

impl ShardSnapshot {
    pub(crate) fn new(
        generation: u64,
        slots: usize,
        table_db: Vec<usize>,
        at: Millis,
    ) -> ShardSnapshot {
        let limit = u32::try_from(slots).unwrap_or(u32::MAX);
        ShardSnapshot {
            generation,
            taken: vec![0; slots.div_ceil(64)],
            limit,
            cursor: 0,
            table_db,
            at,
            out: Vec::new(),
            out_bytes: 0,
            displaced: 0,
            rank_of: Vec::new(),
        }
    }

    /// Records the policy's order (see `SnapshotEntry::rank`) for the
    /// entries copied from now on.
    pub(crate) fn set_order(&mut self, order: &[(ferrum_evict::EntryId, u32)]) {
        self.rank_of = vec![NO_RANK; self.limit as usize];
        for &(id, place) in order {
            if let Some(r) = self.rank_of.get_mut(id.index()) {
                *r = place.min(NO_RANK - 1);
            }
        }
    }

    /// Whether slot `id` is still to be copied.
    fn untaken(&self, id: u32) -> bool {
        id < self.limit && self.taken[id as usize / 64] & (1 << (id % 64)) == 0
    }

    /// Marks slot `id` taken.
    pub(crate) fn take(&mut self, id: u32) {
        if id < self.limit {
            self.taken[id as usize / 64] |= 1 << (id % 64);
        }
    }

    /// Copies the entry in slot `id` as it is now, if the snapshot still
    /// needs it, before a write changes or removes it.
    /// `hint` is the policy's byte for it.
    pub(crate) fn preserve(&mut self, id: u32, block: &Block, hint: Option<u8>) {
        if self.untaken(id) {
            self.take(id);
            self.displaced += block.heap_bytes();
            self.copy(id, block, hint);
        }
    }

    /// Copies an entry, expired or not: a key past its deadline but not
    /// yet removed is in the snapshot, as Redis writes such keys (a load
    /// skips and counts them).
    fn copy(&mut self, id: u32, block: &Block, hint: Option<u8>) {
        let entry = Entry { block };
        self.out_bytes += block.heap_bytes();
        let rank = self.rank_of.get(id as usize).copied();
        self.out.push(SnapshotEntry {
            db: self.table_db[usize::from(block.table())],
            key: Bytes::copy_from_slice(block.key()),
            value: entry.value().to_value(),
            expires_at: entry.expires_at(),
            last_access: entry.last_access(),
            hint,
            rank: rank.filter(|&r| r != NO_RANK),
        });
    }

    /// Walks on from the cursor until copies of `budget` bytes are ready
    /// (or the walk ends), and hands out every copy made so far. `hint_of`
    /// gives a slot's policy byte.
    pub(crate) fn step(
        &mut self,
        slots: &[Option<Block>],
        budget: usize,
        hint_of: impl Fn(u32) -> Option<u8>,
    ) -> SnapshotChunk {
        while self.cursor < self.limit && self.out_bytes < budget {
            let id = self.cursor;
            self.cursor += 1;
            if !self.untaken(id) {
                continue;
            }
            self.take(id);
            if let Some(Some(block)) = slots.get(id as usize) {
                self.copy(id, block, hint_of(id));
            }
        }
        self.out_bytes = 0;
        SnapshotChunk {
            entries: std::mem::take(&mut self.out),
            finished: self.cursor >= self.limit,
            aborted: false,
        }
    }

    /// Bytes of the copies writes displaced so far (see `displaced`).
    pub(crate) fn displaced_bytes(&self) -> usize {
        self.displaced
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use bytes::Bytes;
    use proptest::prelude::*;

    use super::*;
    use crate::{PolicyConfig, PolicyKind, Store, StoreConfig, Value, ValueRef};

    type Contents = BTreeMap<(usize, Vec<u8>), Vec<u8>>;

    fn collect(chunk: &SnapshotChunk, into: &mut Contents) {
        for e in &chunk.entries {
            let ValueRef::Str(v) = e.value.as_ref() else {
                panic!("strings only")
            };
            let fresh = into.insert((e.db, e.key.to_vec()), v.to_vec());
            assert!(fresh.is_none(), "a key taken twice");
        }
    }

    fn contents(store: &Store, now: Millis) -> Contents {
        let mut all = Contents::new();
        let mut ks = store.lock_all();
        for db in 0..store.databases() {
            for shard in ks.shards() {
                shard.for_each_key(db, now, |k, e| {
                    let ValueRef::Str(v) = e.value() else { return };
                    all.insert((db, k.to_vec()), v.to_vec());
                });
            }
        }
        all
    }

    #[derive(Debug, Clone)]
    enum Op {
        Set(usize, u8, u8),
        Append(usize, u8),
        Del(usize, u8),
        Expire(usize, u8),
        Flush(usize),
        Swap,
        Step(usize),
        Tick,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0..3usize, any::<u8>(), any::<u8>()).prop_map(|(d, k, v)| Op::Set(d, k, v)),
            2 => (0..3usize, any::<u8>()).prop_map(|(d, k)| Op::Append(d, k)),
            2 => (0..3usize, any::<u8>()).prop_map(|(d, k)| Op::Del(d, k)),
            1 => (0..3usize, any::<u8>()).prop_map(|(d, k)| Op::Expire(d, k)),
            1 => (0..3usize).prop_map(Op::Flush),
            1 => Just(Op::Swap),
            4 => (0..4usize).prop_map(Op::Step),
            1 => Just(Op::Tick),
        ]
    }

    fn key(k: u8) -> Bytes {
        Bytes::from(format!("k{k}"))
    }

    proptest! {
        /// However writes and the walk interleave, the snapshot holds each
        /// key of the start exactly once, as it was then, and nothing else;
        /// and the store itself ends as the writes left it.
        #[test]
        fn a_snapshot_is_the_store_at_its_start(
            before in proptest::collection::vec(op(), 0..200),
            during in proptest::collection::vec(op(), 0..300),
            policy in prop_oneof![Just(PolicyKind::NoEviction), Just(PolicyKind::AllKeysAhe)],
        ) {
            let store = Store::new(StoreConfig {
                databases: 3,
                shards: 4,
                maxmemory_bytes: 0,
                policy,
                policy_config: PolicyConfig::default(),
            });
            let mut now = Millis(1_000);
            let apply = |op: &Op,
                         now: &mut Millis,
                         out: &mut Contents,
                         running: bool,
                         generation: u64,
                         done: &mut [bool]|
             -> Result<(), TestCaseError> {
                match *op {
                    Op::Set(db, k, v) => {
                        let key = key(k);
                        let mut ks = store.lock_key(&key);
                        ks.shard(&key).insert(db, key.clone(), Value::str(&[b'a' + v % 26]), None, *now);
                    }
                    Op::Append(db, k) => {
                        let key = key(k);
                        let mut ks = store.lock_key(&key);
                        if let Some(mut e) = ks.shard(&key).lookup_mut(db, &key, *now) {
                            let _ = e.append(b"+");
                        };
                    }
                    Op::Del(db, k) => {
                        let key = key(k);
                        let mut ks = store.lock_key(&key);
                        ks.shard(&key).delete(db, &key, *now);
                    }
                    Op::Expire(db, k) => {
                        let key = key(k);
                        let mut ks = store.lock_key(&key);
                        ks.shard(&key).set_expiry(db, &key, Some(Millis(now.0 + 5)), *now);
                    }
                    Op::Flush(db) => {
                        for shard in store.lock_all().shards() {
                            shard.flush_db(db);
                        }
                    }
                    Op::Swap => {
                        for shard in store.lock_all().shards() {
                            shard.swap_db(0, 1);
                        }
                    }
                    Op::Step(shard) if running && !done[shard] => {
                        let chunk = store.snapshot_step(generation, shard, 8);
                        prop_assert!(!chunk.aborted);
                        collect(&chunk, out);
                        done[shard] = chunk.finished;
                    }
                    Op::Step(_) => {}
                    Op::Tick => {
                        now.0 += 3;
                        store.expire_cycle(*now, usize::MAX);
                    }
                }
                Ok(())
            };
            let mut ignored = Contents::new();
            for op in &before {
                apply(op, &mut now, &mut ignored, false, 0, &mut [])?;
            }
            let at_start = contents(&store, now);
            let generation = store.snapshot_start(now);
            prop_assert!(generation.is_some());
            prop_assert!(store.snapshot_start(now).is_none());
            let generation = generation.unwrap_or_default();
            let mut taken = Contents::new();
            let mut done = vec![false; store.shard_count()];
            for op in &during {
                apply(op, &mut now, &mut taken, true, generation, &mut done)?;
            }
            // Finish the walk.
            for shard in (0..store.shard_count()).filter(|&s| !done[s]) {
                loop {
                    let chunk = store.snapshot_step(generation, shard, 64);
                    prop_assert!(!chunk.aborted);
                    collect(&chunk, &mut taken);
                    if chunk.finished {
                        break;
                    }
                }
            }
            prop_assert_eq!(&taken, &at_start);
            // A second snapshot may start now that the first is done; the
            // first one's walker gets nothing from it.
            let second = store.snapshot_start(now);
            prop_assert!(second.is_some_and(|g| g != generation));
            prop_assert!(store.snapshot_step(generation, 0, 64).aborted);
            store.snapshot_abort();
            prop_assert!(store.snapshot_step(second.unwrap_or_default(), 0, 64).aborted);
            prop_assert_eq!(store.snapshot_displaced_bytes(), 0);
        }
    }
}
