//! Point-in-time snapshots taken while the store keeps serving, without
//! fork: what `BGSAVE` writes.
//!
//! A snapshot starts at one instant with every shard locked
//! ([`Store::snapshot_start`](crate::Store::snapshot_start)): each shard
//! notes how many slots it has then and which database each physical table
//! belongs to. From then on each shard's slots are in one of two states,
//! one bit each: *taken* (encoded into the snapshot already, or created
//! after the start and so not part of it) or not. A walker
//! ([`Store::snapshot_step`](crate::Store::snapshot_step)) encodes the
//! untaken slots in slot order, a bounded step at a time under the shard's
//! lock. A write that would change or remove an untaken entry first
//! encodes it as it was (`Shard::preserve`), so the snapshot holds every
//! key as it was at the start, however the walk and the writes interleave.
//! Memory grows only by the encoded records of what writes displace,
//! until the walker hands them out with its next step in that shard.
//!
//! The store knows nothing of the file format: an [`EntryEncoder`] writes
//! the records (the server's writes RDB).

use std::sync::Arc;

use ferrum_evict::Millis;

use crate::block::Block;
use crate::entry::Entry;

/// Writes a snapshot's records, called under a shard's lock.
pub trait EntryEncoder: Send + Sync {
    /// Appends the record that starts database `db`'s keys (records of
    /// different databases interleave, as shards and writes take them).
    fn select_db(&self, out: &mut Vec<u8>, db: usize);
    /// Appends one key's record.
    fn entry(&self, out: &mut Vec<u8>, key: &[u8], entry: Entry<'_>);
}

/// What one step of a shard's walk produced.
#[derive(Debug, Default)]
pub struct SnapshotChunk {
    /// Encoded records, to append to the snapshot in this order.
    pub bytes: Vec<u8>,
    /// Keys in `bytes`.
    pub keys: usize,
    /// Whether this shard is done: every key it held at the start is in
    /// this chunk or an earlier one.
    pub finished: bool,
    /// Whether the snapshot was ended ([`Store::snapshot_abort`](crate::Store::snapshot_abort),
    /// or another started) before this shard finished: nothing more comes.
    pub aborted: bool,
}

/// A shard's part of a snapshot in progress.
pub(crate) struct ShardSnapshot {
    /// Which snapshot this is (the store numbers them).
    pub(crate) generation: u64,
    encoder: Arc<dyn EntryEncoder>,
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
    /// The start: keys expired by then are not in the snapshot.
    at: Millis,
    /// Records not yet handed out, and how many keys they hold.
    out: Vec<u8>,
    keys: usize,
    /// The database of the last record in `out`.
    last_db: Option<usize>,
}

impl std::fmt::Debug for ShardSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardSnapshot")
            .field("limit", &self.limit)
            .field("cursor", &self.cursor)
            .field("pending", &self.out.len())
            .finish_non_exhaustive()
    }
}

impl ShardSnapshot {
    pub(crate) fn new(
        generation: u64,
        encoder: Arc<dyn EntryEncoder>,
        slots: usize,
        table_db: Vec<usize>,
        at: Millis,
    ) -> ShardSnapshot {
        let limit = u32::try_from(slots).unwrap_or(u32::MAX);
        ShardSnapshot {
            generation,
            encoder,
            taken: vec![0; slots.div_ceil(64)],
            limit,
            cursor: 0,
            table_db,
            at,
            out: Vec::new(),
            keys: 0,
            last_db: None,
        }
    }

    /// Whether slot `id` is still to be encoded.
    fn untaken(&self, id: u32) -> bool {
        id < self.limit && self.taken[id as usize / 64] & (1 << (id % 64)) == 0
    }

    /// Marks slot `id` taken.
    pub(crate) fn take(&mut self, id: u32) {
        if id < self.limit {
            self.taken[id as usize / 64] |= 1 << (id % 64);
        }
    }

    /// Encodes the entry in slot `id` as it is now, if the snapshot still
    /// needs it, before a write changes or removes it.
    pub(crate) fn preserve(&mut self, id: u32, block: &Block) {
        if self.untaken(id) {
            self.take(id);
            self.encode(block);
        }
    }

    fn encode(&mut self, block: &Block) {
        let d = block.deadline();
        if d != 0 && d <= self.at.0 {
            return;
        }
        let db = self.table_db[usize::from(block.table())];
        if self.last_db != Some(db) {
            self.encoder.select_db(&mut self.out, db);
            self.last_db = Some(db);
        }
        self.encoder
            .entry(&mut self.out, block.key(), Entry { block });
        self.keys += 1;
    }

    /// Walks on from the cursor until `budget` bytes of records are ready
    /// (or the walk ends), and hands out everything encoded so far.
    pub(crate) fn step(&mut self, slots: &[Option<Block>], budget: usize) -> SnapshotChunk {
        while self.cursor < self.limit && self.out.len() < budget {
            let id = self.cursor;
            self.cursor += 1;
            if !self.untaken(id) {
                continue;
            }
            self.take(id);
            if let Some(Some(block)) = slots.get(id as usize) {
                self.encode(block);
            }
        }
        self.last_db = None;
        SnapshotChunk {
            bytes: std::mem::take(&mut self.out),
            keys: std::mem::take(&mut self.keys),
            finished: self.cursor >= self.limit,
            aborted: false,
        }
    }

    /// Bytes of records waiting to be handed out.
    pub(crate) fn pending_bytes(&self) -> usize {
        self.out.capacity()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use bytes::Bytes;
    use proptest::prelude::*;

    use super::*;
    use crate::{PolicyConfig, PolicyKind, Store, StoreConfig, Value, ValueRef};

    /// Records as `db key = value` lines, strings only.
    struct Lines;

    impl EntryEncoder for Lines {
        fn select_db(&self, out: &mut Vec<u8>, db: usize) {
            out.extend_from_slice(format!("@{db}\n").as_bytes());
        }
        fn entry(&self, out: &mut Vec<u8>, key: &[u8], entry: Entry<'_>) {
            let ValueRef::Str(v) = entry.value() else {
                panic!("strings only")
            };
            out.extend_from_slice(key);
            out.push(b'=');
            out.extend_from_slice(v);
            out.push(b'\n');
        }
    }

    type Contents = BTreeMap<(usize, Vec<u8>), Vec<u8>>;

    fn decode(bytes: &[u8], into: &mut Contents) {
        let mut db = usize::MAX;
        for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            if let Some(n) = line.strip_prefix(b"@") {
                db = std::str::from_utf8(n).unwrap().parse().unwrap();
                continue;
            }
            let at = line.iter().position(|&b| b == b'=').unwrap();
            let fresh = into.insert((db, line[..at].to_vec()), line[at + 1..].to_vec());
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
                        decode(&chunk.bytes, out);
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
            let generation = store.snapshot_start(Arc::new(Lines), now);
            prop_assert!(generation.is_some());
            prop_assert!(store.snapshot_start(Arc::new(Lines), now).is_none());
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
                    decode(&chunk.bytes, &mut taken);
                    if chunk.finished {
                        break;
                    }
                }
            }
            prop_assert_eq!(&taken, &at_start);
            // A second snapshot may start now that the first is done; the
            // first one's walker gets nothing from it.
            let second = store.snapshot_start(Arc::new(Lines), now);
            prop_assert!(second.is_some_and(|g| g != generation));
            prop_assert!(store.snapshot_step(generation, 0, 64).aborted);
            store.snapshot_abort();
            prop_assert!(store.snapshot_step(second.unwrap_or_default(), 0, 64).aborted);
            prop_assert_eq!(store.snapshot_pending_bytes(), 0);
        }
    }
}
