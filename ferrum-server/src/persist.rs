//! Snapshots of the store on disk, in Redis 7.0's RDB format
//! ([`crate::rdb::file`]): writing the whole keyspace to `dir/dbfilename`
//! ([`save`]) and loading such a file back ([`load`]), at start-up, by
//! `DEBUG RELOAD`, and from files Redis wrote.
//!
//! A save is a point-in-time snapshot of the store
//! ([`ferrum_store::snapshot`]: no fork, no copy of the dataset), walked a
//! shard step at a time while commands keep running, for `SAVE` on the
//! caller's thread and for `BGSAVE` on a thread of its own. It writes
//! `temp-<pid>.rdb` in the same directory, fsyncs it and
//! renames it over the target, so a save that fails or is interrupted
//! leaves the last good file in place. A file that does not load is
//! refused whole, with the byte offset where it went wrong; the caller
//! decides what to do with what was loaded before it.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

use bytes::Bytes;
use ferrum_store::snapshot::{SnapshotChunk, SnapshotEntry};
use ferrum_store::{Access, Millis, PolicyKind, Store};

use crate::rdb::file::{self, LoadError, Recency, Writer};

/// The persistence state `LASTSAVE` and `INFO persistence` report, and
/// the background save in progress.
#[derive(Debug, Default)]
pub(crate) struct Persistence {
    /// Unix seconds of the last successful save, or of start-up.
    last_save_unix: AtomicU64,
    /// The server's change counter when the last successful save began.
    changes_at_save: AtomicU64,
    /// Successful saves since start-up (`rdb_saves`).
    saves: AtomicU64,
    /// A background save is running (`rdb_bgsave_in_progress`).
    pub(crate) bgsave_running: AtomicBool,
    /// Set to make the running background save stop (`FLUSHALL`,
    /// shutdown).
    pub(crate) bgsave_abort: AtomicBool,
    /// A `BGSAVE` inside `EXEC` waits for the transaction to end.
    pub(crate) bgsave_scheduled: AtomicBool,
    /// Whether the last background save failed (`rdb_last_bgsave_status`).
    pub(crate) last_bgsave_failed: AtomicBool,
    /// Seconds the last background save took, -1 before the first.
    pub(crate) last_bgsave_secs: AtomicI64,
    /// When the running (or last) background save started (Unix seconds):
    /// after a failure, save points wait 5 seconds before trying again.
    pub(crate) bgsave_started_unix: AtomicU64,
    /// Keys written so far by the running save, and keys at its start.
    pub(crate) keys_processed: AtomicU64,
    pub(crate) keys_total: AtomicU64,
    /// Bytes of values writes displaced during the running save and copied
    /// into it ahead of the walk (the fork-free analogue of copy-on-write;
    /// sampled every 100 ms, never decreasing during a save), and at the
    /// end of the last one.
    pub(crate) displaced_bytes: AtomicU64,
    pub(crate) last_displaced_bytes: AtomicU64,
    /// Keys the last load stored and skipped as expired.
    pub(crate) last_load: (AtomicU64, AtomicU64),
    /// The load at start-up, while it runs.
    pub(crate) loading: Loading,
}

/// The snapshot loading at start-up: commands without the `loading` flag
/// are refused meanwhile, and `INFO persistence` shows its progress.
#[derive(Debug, Default)]
pub(crate) struct Loading {
    active: AtomicBool,
    /// When it started, microseconds since the Unix epoch.
    started_micros: AtomicU64,
    total_bytes: AtomicU64,
    pub(crate) loaded_bytes: AtomicU64,
}

/// A running load's progress, as `INFO persistence` reports it.
pub(crate) struct LoadProgress {
    pub(crate) started_unix: u64,
    pub(crate) total_bytes: u64,
    pub(crate) loaded_bytes: u64,
    pub(crate) loaded_perc: f64,
    /// Seconds left at the rate so far (1 before anything is read).
    pub(crate) eta_secs: u64,
}

impl Loading {
    /// Whether the load at start-up is still running.
    pub(crate) fn active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// Marks a load of `total_bytes` as started at `now_micros`.
    pub(crate) fn start(&self, total_bytes: u64, now_micros: u64) {
        self.total_bytes.store(total_bytes, Ordering::Relaxed);
        self.loaded_bytes.store(0, Ordering::Relaxed);
        self.started_micros.store(now_micros, Ordering::Relaxed);
        self.active.store(true, Ordering::Release);
    }

    pub(crate) fn finish(&self) {
        self.active.store(false, Ordering::Release);
    }

    /// The progress at `now_micros`, or `None` when no load runs.
    pub(crate) fn progress(&self, now_micros: u64) -> Option<LoadProgress> {
        if !self.active() {
            return None;
        }
        let started = self.started_micros.load(Ordering::Relaxed);
        let total = self.total_bytes.load(Ordering::Relaxed);
        let loaded = self.loaded_bytes.load(Ordering::Relaxed).min(total);
        let elapsed = now_micros.saturating_sub(started) as f64 / 1e6;
        let eta_secs = if loaded == 0 || elapsed <= 0.0 {
            1
        } else {
            ((total - loaded) as f64 / (loaded as f64 / elapsed)) as u64
        };
        Some(LoadProgress {
            started_unix: started / 1_000_000,
            total_bytes: total,
            loaded_bytes: loaded,
            loaded_perc: if total == 0 {
                0.0
            } else {
                loaded as f64 * 100.0 / total as f64
            },
            eta_secs,
        })
    }
}

impl Persistence {
    /// The state at start-up, at Unix time `now_unix_secs`.
    pub(crate) fn new(now_unix_secs: u64) -> Persistence {
        Persistence {
            last_save_unix: AtomicU64::new(now_unix_secs),
            last_bgsave_secs: AtomicI64::new(-1),
            ..Persistence::default()
        }
    }

    /// `rdb_changes_since_last_save`, given the server's change counter
    /// now.
    pub(crate) fn changes_since_save(&self, changes: u64) -> u64 {
        changes.saturating_sub(self.changes_at_save.load(Ordering::Relaxed))
    }

    /// `rdb_saves`.
    pub(crate) fn saves(&self) -> u64 {
        self.saves.load(Ordering::Relaxed)
    }

    /// `LASTSAVE`: Unix seconds of the last successful save (start-up
    /// before the first).
    pub(crate) fn last_save_unix(&self) -> u64 {
        self.last_save_unix.load(Ordering::Relaxed)
    }

    /// Records a successful save, ended at Unix time `unix_secs`, that
    /// began with the change counter at `changes`.
    pub(crate) fn saved(&self, unix_secs: u64, changes: u64) {
        self.last_save_unix.store(unix_secs, Ordering::Relaxed);
        self.changes_at_save.store(changes, Ordering::Relaxed);
        self.saves.fetch_add(1, Ordering::Relaxed);
    }
}

/// What a snapshot holds beside the keyspace, and how it is written.
pub(crate) struct SnapshotInfo {
    /// The function libraries' code, in the order `FUNCTION DUMP` lists
    /// them.
    pub(crate) functions: Vec<Bytes>,
    /// The store's clock at the start, for idle times and expired keys.
    pub(crate) now: Millis,
    /// Unix seconds at the start (`ctime`).
    pub(crate) unix_secs: u64,
    /// `rdbchecksum`.
    pub(crate) checksum: bool,
    /// `rdbcompression`.
    pub(crate) compress: bool,
    /// `used_memory` at the start (`used-mem`).
    pub(crate) used_memory: usize,
}

/// What a save wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Saved {
    pub(crate) keys: usize,
    pub(crate) bytes: u64,
}

/// The eviction hint written per key under `policy`: the idle time under
/// LRU policies and the LFU counter under LFU ones, as Redis writes them;
/// under AHE, its queue and counter in the same `FREQ` byte (which Redis
/// reads only under an LFU policy, as a low counter).
fn recency_of(policy: PolicyKind, now: Millis, e: &SnapshotEntry) -> Recency {
    match policy {
        PolicyKind::AllKeysLru | PolicyKind::VolatileLru => {
            Recency::IdleSeconds(now.0.saturating_sub(e.last_access.0) / 1000)
        }
        PolicyKind::AllKeysLfu
        | PolicyKind::VolatileLfu
        | PolicyKind::AllKeysAhe
        | PolicyKind::VolatileAhe => e.hint.map_or(Recency::None, Recency::Freq),
        _ => Recency::None,
    }
}

/// A point-in-time snapshot started in the store and not yet written.
pub(crate) struct Snapshot {
    generation: u64,
    info: SnapshotInfo,
    /// The eviction policy at the start (which hint each key carries).
    policy: PolicyKind,
}

/// The aux field carrying what the eviction policy learnt beyond each
/// key's hint (AHE's controller, ghosts and queue order), which Redis
/// skips as it skips any aux field it does not know: a format byte (1),
/// the shard count (4 bytes), then per shard a length (4 bytes, 0 for
/// none) and the shard's state, little-endian.
const POLICY_AUX: &str = "ferrum-policy-state";

/// The aux field, after the keys, that gives each key record's place in
/// its shard's policy order at the snapshot's start (LRU's list, LFU's
/// last accesses, AHE's queues; `EvictionPolicy::export_order`): a format
/// byte (1), the shard count and the record count (4 bytes each), then a
/// place per record in file order (4 bytes, `u32::MAX` for none),
/// little-endian. A load re-sorts each shard's order by it.
const ORDER_AUX: &str = "ferrum-policy-order";

/// The [`ORDER_AUX`] value for `ranks` (one per key record) written by a
/// store of `shards` shards.
fn encode_order(shards: usize, ranks: &[u32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(9 + 4 * ranks.len());
    out.push(1);
    out.extend_from_slice(&(shards as u32).to_le_bytes());
    out.extend_from_slice(&(ranks.len() as u32).to_le_bytes());
    for r in ranks {
        out.extend_from_slice(&r.to_le_bytes());
    }
    out
}

/// The ranks of an [`ORDER_AUX`] value written for `shards` shards;
/// `None` for another format or shard count, or damage.
fn decode_order(bytes: &[u8], shards: usize) -> Option<Vec<u32>> {
    let (&format, rest) = bytes.split_first()?;
    let word = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(rest.get(at..at + 4)?.try_into().ok()?))
    };
    let (count, n) = (word(0)? as usize, word(4)? as usize);
    if format != 1 || count != shards || rest.len() != 8 + n.checked_mul(4)? {
        return None;
    }
    Some((0..n).filter_map(|i| word(8 + 4 * i)).collect())
}

/// The [`POLICY_AUX`] value for `states`, one per shard; `None` when no
/// shard has one.
fn encode_policy_states(states: &[Option<Vec<u8>>]) -> Option<Vec<u8>> {
    if states.iter().all(Option::is_none) {
        return None;
    }
    let mut out = vec![1];
    out.extend_from_slice(&(states.len() as u32).to_le_bytes());
    for state in states {
        let state = state.as_deref().unwrap_or_default();
        out.extend_from_slice(&(state.len() as u32).to_le_bytes());
        out.extend_from_slice(state);
    }
    Some(out)
}

/// The per-shard states of a [`POLICY_AUX`] value written for `shards`
/// shards; `None` for another format or shard count, or damage.
fn decode_policy_states(bytes: &[u8], shards: usize) -> Option<Vec<&[u8]>> {
    let (&format, rest) = bytes.split_first()?;
    let count = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
    if format != 1 || count != shards {
        return None;
    }
    let mut rest = &rest[4..];
    let mut states = Vec::with_capacity(count);
    for _ in 0..count {
        let len = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
        states.push(rest.get(4..4usize.checked_add(len)?)?);
        rest = &rest[4 + len..];
    }
    rest.is_empty().then_some(states)
}

impl Snapshot {
    /// Starts a snapshot of the store as it is now (every shard locked for
    /// the start only). `None` when one is already in progress.
    pub(crate) fn start(store: &Store, info: SnapshotInfo) -> Option<Snapshot> {
        let (policy, _) = store.policy();
        let generation = store.snapshot_start(info.now)?;
        Some(Snapshot {
            generation,
            info,
            policy,
        })
    }
}

/// Bytes of entries a walk step copies under a shard's lock: small enough
/// that no command waits long behind it (the copy is about a `memcpy`;
/// encoding and compressing happen after the lock is released). Measured
/// with the method `cargo xtask bench --scenarios bgsave` now runs (1M
/// keys of 1000 bytes, SET/GET load):
/// GET/SET p99 during the save was 3.9x that without at 64 KiB steps,
/// 1.5x at 4 KiB, with no cost in the save's wall time.
const STEP_BYTES: usize = 4 * 1024;

/// How a walk goes on after each step: `pace` sees each chunk (to count
/// progress, slow down or stop: an error ends the walk with it).
pub(crate) type Pace<'a> = &'a mut dyn FnMut(&SnapshotChunk) -> io::Result<()>;

/// Writes `snap` to `out` as an RDB file, walking the shards in turn a
/// step at a time (other commands run between steps), with `step_bytes`
/// per step. Returns the output and the keys written.
///
/// # Errors
/// When `out` or `pace` fails, or the snapshot was aborted; the snapshot
/// is ended then.
pub(crate) fn write_snapshot<W: Write>(
    store: &Store,
    snap: &Snapshot,
    out: W,
    step_bytes: usize,
    pace: Pace<'_>,
) -> io::Result<(W, usize)> {
    let written = walk(store, snap, out, step_bytes, pace);
    if written.is_err() {
        store.snapshot_abort();
    }
    written
}

fn walk<W: Write>(
    store: &Store,
    snap: &Snapshot,
    out: W,
    step_bytes: usize,
    pace: Pace<'_>,
) -> io::Result<(W, usize)> {
    let info = &snap.info;
    let ctime = info.unix_secs.to_string();
    let used_mem = info.used_memory.to_string();
    let mut aux: Vec<(&str, &[u8])> = vec![
        ("redis-ver", crate::REDIS_VERSION.as_bytes()),
        ("redis-bits", b"64"),
        ("ctime", ctime.as_bytes()),
        ("used-mem", used_mem.as_bytes()),
        ("aof-base", b"0"),
    ];
    // Taken by the saving thread as the walk begins, each shard locked in
    // turn (not on the thread that ran BGSAVE, which serves connections):
    // a hint, so the writes since the start only make it a little older.
    let policy_state = encode_policy_states(&store.policy_states());
    store.snapshot_take_order(snap.generation);
    if let Some(state) = &policy_state {
        aux.push((POLICY_AUX, state));
    }
    let mut w = Writer::new(out, &aux, info.checksum)?;
    for code in &info.functions {
        w.function(code)?;
    }
    let mut keys = 0;
    let mut records = Vec::new();
    // Each record's place in its policy's order (see ORDER_AUX).
    let mut ranks: Vec<u32> = Vec::new();
    let mut finished = vec![false; store.shard_count()];
    while finished.contains(&false) {
        for (shard, done) in finished.iter_mut().enumerate().filter(|(_, d)| !**d) {
            let chunk = store.snapshot_step(snap.generation, shard, step_bytes);
            if chunk.aborted {
                return Err(io::Error::other("the snapshot was aborted"));
            }
            // Encoded with no lock held.
            records.clear();
            let mut db = None;
            for e in &chunk.entries {
                if db != Some(e.db) {
                    file::encode_select_db(&mut records, e.db);
                    db = Some(e.db);
                }
                let recency = recency_of(snap.policy, info.now, e);
                let expires = e.expires_at.map(|m| m.0);
                let value = e.value.as_ref();
                file::encode_key(&mut records, &e.key, value, expires, recency, info.compress);
                ranks.push(e.rank.unwrap_or(u32::MAX));
            }
            w.records(&records)?;
            keys += chunk.entries.len();
            *done = chunk.finished;
            pace(&chunk)?;
        }
    }
    if ranks.iter().any(|&r| r != u32::MAX) {
        w.aux(ORDER_AUX, &encode_order(store.shard_count(), &ranks))?;
    }
    Ok((w.finish()?, keys))
}

/// Writes `snap` to `path`: to a temporary file in the same directory,
/// fsynced, then renamed over `path`. On failure `path` is as it was and
/// the temporary file is gone.
///
/// # Errors
/// When the file cannot be created, written or renamed, or `pace` stops
/// the walk.
pub(crate) fn save(
    store: &Store,
    snap: &Snapshot,
    path: &Path,
    step_bytes: usize,
    pace: Pace<'_>,
) -> io::Result<Saved> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let temp = dir.join(format!("temp-{}.rdb", std::process::id()));
    let written = File::create(&temp).and_then(|file| {
        let out = BufWriter::with_capacity(1 << 20, file);
        let (out, keys) = write_snapshot(store, snap, out, step_bytes, pace)?;
        let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        Ok(Saved {
            keys,
            bytes: file.metadata()?.len(),
        })
    });
    let result = written.and_then(|saved| {
        std::fs::rename(&temp, path)?;
        // The rename is durable once the directory is.
        File::open(dir)?.sync_all()?;
        Ok(saved)
    });
    if result.is_err() {
        // (A file that could not be created left the walk unstarted.)
        store.snapshot_abort();
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// [`save`] at full speed, for `SAVE`: the walk runs to its end on the
/// caller's thread.
///
/// # Errors
/// As [`save`].
pub(crate) fn save_now(store: &Store, snap: &Snapshot, path: &Path) -> io::Result<Saved> {
    save(store, snap, path, STEP_BYTES, &mut |_| Ok(()))
}

/// The bytes a background save's step collects: one key at a time while
/// `rdb-key-save-delay` slows the walk (so the delay applies per key).
pub(crate) fn step_bytes(per_key_delay: bool) -> usize {
    if per_key_delay {
        1
    } else {
        STEP_BYTES
    }
}

/// `dir/dbfilename`.
pub(crate) fn file_path(dir: &str, dbfilename: &str) -> PathBuf {
    Path::new(dir).join(dbfilename)
}

/// What a load put in the store.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    /// Keys stored.
    pub(crate) keys: usize,
    /// Keys skipped because their deadline had passed.
    pub(crate) expired: usize,
    /// Function libraries' code, for the caller to compile.
    pub(crate) functions: Vec<Vec<u8>>,
    /// Keys skipped because they held an empty collection.
    pub(crate) empty: usize,
    /// The file's RDB version and the `redis-ver` that wrote it.
    pub(crate) version: (u16, String),
}

/// Why a load failed.
#[derive(Debug)]
pub(crate) enum LoadFailure {
    /// The file could not be read.
    Io(io::Error),
    /// The file is not a valid RDB file, or holds what the store cannot
    /// take (a database beyond `databases`, a duplicated key).
    Format(LoadError),
}

impl std::fmt::Display for LoadFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadFailure::Io(e) => write!(f, "{e}"),
            LoadFailure::Format(e) => write!(f, "{e}"),
        }
    }
}

/// Where a load put a key record, to put its policy's order back.
struct Placed {
    /// The record's index in the file.
    index: usize,
    shard: usize,
    db: usize,
    key: Bytes,
    /// Its idle seconds (`IDLE`), 0 for none.
    idle: u64,
    /// Its place in its policy's order (see [`ORDER_AUX`]), once known.
    place: u32,
}

/// Loads the RDB file at `path` into `store`, which keeps its keys (an
/// empty store loads the file as it is). Keys already past their deadline
/// are skipped. A key already in the store is refused unless `merge`,
/// which replaces it. `Ok(None)` when there is no file. The keys read
/// before a failure stay in the store.
///
/// # Errors
/// A [`LoadFailure`] naming the offset of the first bad record.
pub(crate) fn load(
    store: &Store,
    path: &Path,
    now: Millis,
    merge: bool,
    mut after_key: impl FnMut(usize) -> Result<(), String>,
) -> Result<Option<Loaded>, LoadFailure> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(LoadFailure::Io(e)),
    };
    let mut loaded = Loaded::default();
    let databases = store.databases();
    // Under a policy with an order (LRU, LFU, AHE), where each key went,
    // to put the order back at the end.
    let ordered = matches!(
        store.policy().0,
        PolicyKind::AllKeysLru
            | PolicyKind::VolatileLru
            | PolicyKind::AllKeysLfu
            | PolicyKind::VolatileLfu
            | PolicyKind::AllKeysAhe
            | PolicyKind::VolatileAhe
    );
    let mut placed: Vec<Placed> = Vec::new();
    let header = file::read(&bytes, |k| {
        if k.db >= databases {
            return Err(format!(
                "the file holds database {}, but `databases` is {databases}",
                k.db
            ));
        }
        if k.expires_ms.is_some_and(|at| at <= now.0) {
            loaded.expired += 1;
            return Ok(());
        }
        let mut ks = store.lock_key(&k.key);
        let shard = ks.shard(&k.key);
        if !merge && shard.lookup(k.db, &k.key, now, Access::Peek).is_some() {
            return Err(format!(
                "duplicate key '{}'",
                String::from_utf8_lossy(&k.key)
            ));
        }
        let key = Bytes::from(k.key);
        shard.insert(k.db, key.clone(), k.value, k.expires_ms.map(Millis), now);
        let mut idle = 0;
        match k.recency {
            Recency::IdleSeconds(secs) => {
                idle = secs;
                if let Some(mut e) = shard.lookup_mut(k.db, &key, now) {
                    e.set_last_access(Millis(now.0.saturating_sub(secs.saturating_mul(1000))));
                    e.mark_unchanged();
                }
            }
            Recency::Freq(hint) => shard.restore_warm_hint(k.db, &key, hint, now),
            Recency::None => {}
        }
        loaded.keys += 1;
        if ordered {
            let (index, shard, db) = (k.index, store.shard_of(&key), k.db);
            placed.push(Placed {
                index,
                shard,
                db,
                key,
                idle,
                place: u32::MAX,
            });
        }
        after_key(k.end)
    })
    .map_err(LoadFailure::Format)?;
    // After the keys: the states order the entries their hints placed.
    let shards = store.shard_count();
    let policy_aux = header
        .aux
        .iter()
        .find(|(name, _)| name == POLICY_AUX.as_bytes());
    if let Some(states) = policy_aux.and_then(|(_, v)| decode_policy_states(v, shards)) {
        for (shard, state) in states.into_iter().enumerate() {
            store.import_policy_state(shard, state);
        }
    }
    let order_aux = header
        .aux
        .iter()
        .find(|(name, _)| name == ORDER_AUX.as_bytes());
    let ranks = order_aux.and_then(|(_, v)| decode_order(v, shards));
    let ranked = ranks.is_some();
    match ranks {
        Some(ranks) => {
            for p in &mut placed {
                p.place = ranks.get(p.index).copied().unwrap_or(u32::MAX);
            }
            placed.sort_by_key(|p| (p.shard, p.place));
        }
        // A file from Redis (or from FerrumKV under another policy): the
        // idle times, oldest first, order what they can; a stable sort
        // keeps the file's order among equals, and each key's place is
        // its rank in its shard (set below).
        None => placed.sort_by_key(|p| (p.shard, std::cmp::Reverse(p.idle))),
    }
    // Sorted by shard: one run per shard.
    for run in placed.chunk_by_mut(|a, b| a.shard == b.shard) {
        if !ranked {
            for (p, rank) in run.iter_mut().zip(0..) {
                p.place = rank;
            }
        }
        let keys: Vec<(usize, &[u8], u32)> =
            run.iter().map(|p| (p.db, &p.key[..], p.place)).collect();
        store.import_policy_order(run[0].shard, &keys, now);
    }
    loaded.functions = header.functions;
    for key in &header.empty_keys {
        tracing::warn!("skipping empty key: {}", String::from_utf8_lossy(key));
    }
    loaded.empty = header.empty_keys.len();
    let writer = header.aux.iter().find(|(name, _)| name == b"redis-ver");
    let writer = writer.map_or_else(String::new, |(_, v)| {
        String::from_utf8_lossy(v).into_owned()
    });
    loaded.version = (header.version, writer);
    Ok(Some(loaded))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrum_store::{PolicyConfig, StoreConfig, Value};

    fn store(databases: usize) -> Store {
        Store::new(StoreConfig {
            databases,
            shards: 4,
            maxmemory_bytes: 0,
            policy: PolicyKind::AllKeysLru,
            policy_config: PolicyConfig::default(),
        })
    }

    /// One database of `shards` shards under `policy`, at `maxmemory`.
    fn policy_store(policy: PolicyKind, shards: usize, maxmemory_bytes: u64) -> Store {
        Store::new(StoreConfig {
            databases: 1,
            shards,
            maxmemory_bytes,
            policy,
            policy_config: PolicyConfig::default(),
        })
    }

    fn put(s: &Store, db: usize, key: &str, value: Value, expires: Option<u64>, now: Millis) {
        let mut ks = s.lock_key(key.as_bytes());
        ks.shard(key.as_bytes()).insert(
            db,
            Bytes::from(key.to_owned()),
            value,
            expires.map(Millis),
            now,
        );
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("ferrum-persist-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    fn snap(s: &Store, now: Millis, functions: &[Bytes]) -> Snapshot {
        let info = SnapshotInfo {
            functions: functions.to_vec(),
            now,
            unix_secs: now.0 / 1000,
            checksum: true,
            compress: true,
            used_memory: s.used_memory_bytes(),
        };
        Snapshot::start(s, info).expect("no other snapshot")
    }

    fn in_memory(s: &Store, now: Millis) -> io::Result<Vec<u8>> {
        let snap = snap(s, now, &[]);
        let written = write_snapshot(s, &snap, Vec::new(), STEP_BYTES, &mut |_| Ok(()));
        written.map(|(bytes, _)| bytes)
    }

    #[test]
    fn a_store_saved_and_loaded_is_the_same_store() {
        let now = Millis(1_700_000_000_000);
        let s = store(4);
        for i in 0..500 {
            put(
                &s,
                i % 3,
                &format!("k{i}"),
                Value::str(format!("v{i}").as_bytes()),
                None,
                now,
            );
        }
        put(&s, 3, "ttl", Value::str(b"x"), Some(now.0 + 60_000), now);
        put(&s, 3, "gone", Value::str(b"x"), Some(now.0 + 10), now);
        let dir = temp_dir("roundtrip");
        let path = dir.join("dump.rdb");
        let code = Bytes::from_static(
            b"#!lua name=l\nredis.register_function('f', function() return 1 end)",
        );
        let snap = snap(&s, now, std::slice::from_ref(&code));
        let saved = save_now(&s, &snap, &path).expect("saved");
        assert_eq!(saved.keys, 502);
        assert_eq!(saved.bytes, std::fs::metadata(&path).expect("file").len());
        assert!(!dir
            .join(format!("temp-{}.rdb", std::process::id()))
            .exists());

        let later = Millis(now.0 + 1_000);
        let t = store(4);
        let loaded = load(&t, &path, later, false, |_| Ok(()))
            .expect("loads")
            .expect("a file");
        assert_eq!((loaded.keys, loaded.expired), (501, 1));
        assert_eq!(loaded.functions, vec![code.to_vec()]);
        let ks = t.lock_all();
        assert_eq!(ks.dbsize(0) + ks.dbsize(1) + ks.dbsize(2), 500);
        drop(ks);
        let mut ks = t.lock_key(b"k7");
        let e = ks
            .shard(b"k7")
            .lookup(1, b"k7", later, Access::Peek)
            .expect("k7");
        assert_eq!(e.value().as_str().ok(), Some(&b"v7"[..]));
        drop(ks);
        let mut ks = t.lock_key(b"ttl");
        let e = ks
            .shard(b"ttl")
            .lookup(3, b"ttl", later, Access::Peek)
            .expect("ttl");
        assert_eq!(e.expires_at(), Some(Millis(now.0 + 60_000)));
        drop(ks);

        // Loading again into the loaded store: the first key is a duplicate.
        let err = load(&t, &path, later, false, |_| Ok(())).expect_err("duplicates");
        assert!(err.to_string().contains("duplicate key"), "{err}");
        // Merging replaces.
        let merged = load(&t, &path, later, true, |_| Ok(()))
            .expect("merges")
            .expect("a file");
        assert_eq!(merged.keys, 501);
        // Fewer databases than the file uses.
        let err = load(&store(2), &path, later, false, |_| Ok(())).expect_err("db 3");
        assert!(err.to_string().contains("database"), "{err}");
        // No file: nothing to load.
        assert!(load(&t, &dir.join("none.rdb"), later, false, |_| Ok(()))
            .expect("ok")
            .is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_failed_save_leaves_the_last_good_file() {
        let now = Millis(1_700_000_000_000);
        let s = store(1);
        put(&s, 0, "a", Value::str(b"1"), None, now);
        let dir = temp_dir("failed");
        let path = dir.join("dump.rdb");
        save_now(&s, &snap(&s, now, &[]), &path).expect("saved");
        let good = std::fs::read(&path).expect("file");
        // A save into a directory that is gone fails and changes nothing.
        let missing = dir.join("missing").join("dump.rdb");
        assert!(save_now(&s, &snap(&s, now, &[]), &missing).is_err());
        // A walk stopped half-way: the same.
        put(&s, 0, "b", Value::str(b"2"), None, now);
        let stopped = save(&s, &snap(&s, now, &[]), &path, 1, &mut |_| {
            Err(io::Error::other("stop"))
        });
        assert_eq!(stopped.expect_err("stopped").to_string(), "stop");
        assert_eq!(std::fs::read(&path).expect("file"), good);
        // A writer that fails half-way: the error comes back.
        struct Failing(usize);
        impl Write for Failing {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                if self.0 < b.len() {
                    return Err(io::Error::other("disk full"));
                }
                self.0 -= b.len();
                Ok(b.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let snap = snap(&s, now, &[]);
        let err = write_snapshot(&s, &snap, Failing(20), STEP_BYTES, &mut |_| Ok(()))
            .err()
            .expect("fails");
        assert_eq!(err.to_string(), "disk full");
        assert_eq!(std::fs::read(&path).expect("file"), good);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn idle_times_survive_under_lru() {
        let now = Millis(1_700_000_000_000);
        let s = store(1);
        put(
            &s,
            0,
            "old",
            Value::str(b"1"),
            None,
            Millis(now.0 - 500_000),
        );
        put(&s, 0, "new", Value::str(b"1"), None, now);
        let bytes = in_memory(&s, now).expect("in memory");
        let mut idle = Vec::new();
        file::read(&bytes, |k| {
            idle.push((k.key, k.recency));
            Ok(())
        })
        .expect("reads");
        idle.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            idle,
            vec![
                (b"new".to_vec(), Recency::IdleSeconds(0)),
                (b"old".to_vec(), Recency::IdleSeconds(500)),
            ]
        );
    }

    /// Drives `s` as a cache: `n` inserts of keys from `from` on at 64 KB,
    /// each followed by a read of an older key; then its keys, sorted.
    fn drive_lru(s: &Store, from: usize, n: usize, now: Millis) -> Vec<Vec<u8>> {
        for i in from..from + n {
            put(s, 0, &format!("key:{i}"), Value::str(b"value"), None, now);
            let old = format!("key:{}", i * 7 % (i + 1));
            let mut ks = s.lock_key(old.as_bytes());
            ks.shard(old.as_bytes())
                .lookup(0, old.as_bytes(), now, Access::Read);
            drop(ks);
            s.enforce_maxmemory(now);
        }
        let mut keys = Vec::new();
        for shard in s.lock_all().shards() {
            shard.for_each_key(0, now, |k, _| keys.push(k.to_vec()));
        }
        keys.sort();
        keys
    }

    #[test]
    fn lru_order_comes_back_as_it_was_saved() {
        let now = Millis(1_700_000_000_000);
        let lru_store = || policy_store(PolicyKind::AllKeysLru, 2, 64 * 1024);
        // All within one second: the idle times cannot tell the keys apart.
        let s = lru_store();
        drive_lru(&s, 0, 3_000, now);
        let dir = temp_dir("lru");
        let path = dir.join("dump.rdb");
        save_now(&s, &snap(&s, now, &[]), &path).expect("saved");
        let t = lru_store();
        load(&t, &path, now, false, |_| Ok(())).expect("loads");
        let kept = drive_lru(&s, 3_000, 500, now);
        assert!(kept.len() > 100, "{} keys", kept.len());
        // The same requests from here evict the same keys, but for one or
        // two at the edge (the tables' growth rounds the memory apart by a
        // few bytes); the order a load makes on its own differs in hundreds.
        let got = drive_lru(&t, 3_000, 500, now);
        let differ = kept.iter().filter(|k| !got.contains(k)).count()
            + got.iter().filter(|k| !kept.contains(k)).count();
        assert!(differ <= 2, "{differ} of {} keys differ", kept.len());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn idle_times_order_a_file_without_ours() {
        // As Redis writes: idle times, no order of ours, keys in any order.
        let mut records = Vec::new();
        file::encode_select_db(&mut records, 0);
        for (key, idle) in [("b", 100), ("new", 0), ("a", 300), ("c", 100)] {
            let value = Value::str(b"1");
            let idle = Recency::IdleSeconds(idle);
            file::encode_key(
                &mut records,
                key.as_bytes(),
                value.as_ref(),
                None,
                idle,
                false,
            );
        }
        let mut w = Writer::new(Vec::new(), &[], true).expect("header");
        w.records(&records).expect("records");
        let bytes = w.finish().expect("written");
        let dir = temp_dir("idle-order");
        let path = dir.join("dump.rdb");
        std::fs::write(&path, bytes).expect("written");
        let now = Millis(1_700_000_000_000);
        let s = policy_store(PolicyKind::AllKeysLru, 1, 0);
        load(&s, &path, now, false, |_| Ok(())).expect("loads");
        s.set_maxmemory_bytes(1);
        let mut victims = Vec::new();
        s.enforce_maxmemory_reporting(now, &mut |_, k| victims.push(k.to_vec()));
        // Oldest first; equals in the file's order.
        assert_eq!(victims, [&b"a"[..], b"b", b"c", b"new"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn ahe_comes_back_as_it_was_saved() {
        let now = Millis(1_700_000_000_000);
        let ahe_store = |shards| policy_store(PolicyKind::AllKeysAhe, shards, 64 * 1024);
        let s = ahe_store(2);
        // Ten times what fits, with a hot tenth read between inserts: the
        // ghosts fill, entries are promoted, the controller moves.
        for i in 0..3_000 {
            put(&s, 0, &format!("key:{i}"), Value::str(b"value"), None, now);
            let hot = format!("key:{}", i / 10 * 10);
            let mut ks = s.lock_key(hot.as_bytes());
            ks.shard(hot.as_bytes())
                .lookup(0, hot.as_bytes(), now, Access::Read);
            drop(ks);
            s.enforce_maxmemory(now);
        }
        let before = s.policy_states();
        assert!(before
            .iter()
            .all(|st| st.as_ref().is_some_and(|b| b.len() > 1_000)));
        let dir = temp_dir("ahe");
        let path = dir.join("dump.rdb");
        save_now(&s, &snap(&s, now, &[]), &path).expect("saved");
        let t = ahe_store(2);
        load(&t, &path, now, false, |_| Ok(())).expect("loads");
        // Queues in the same order, ghosts and controller the same.
        assert_eq!(t.policy_states(), before);
        // Another shard count hashes keys otherwise: the state is left out
        // and the keys still load.
        let u = ahe_store(3);
        let loaded = load(&u, &path, now, false, |_| Ok(())).expect("loads");
        assert_eq!(loaded.map(|l| l.keys), Some(s.lock_all().dbsize(0)));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn policy_states_decode_only_for_their_shard_count() {
        let states = vec![Some(vec![1, 2, 3]), None, Some(vec![])];
        let bytes = encode_policy_states(&states).expect("some state");
        let want: Vec<&[u8]> = vec![&[1, 2, 3], &[], &[]];
        assert_eq!(decode_policy_states(&bytes, 3), Some(want));
        assert_eq!(decode_policy_states(&bytes, 2), None);
        for cut in 0..bytes.len() {
            assert_eq!(decode_policy_states(&bytes[..cut], 3), None, "cut at {cut}");
        }
        assert_eq!(encode_policy_states(&[None, None]), None);
        let ranks = [3, u32::MAX, 0, 7];
        let order = encode_order(2, &ranks);
        assert_eq!(decode_order(&order, 2), Some(ranks.to_vec()));
        assert_eq!(decode_order(&order, 3), None);
        for cut in 0..order.len() {
            assert_eq!(decode_order(&order[..cut], 2), None, "cut at {cut}");
        }
    }

    #[test]
    fn lfu_counters_survive_under_lfu() {
        let now = Millis(1_700_000_000_000);
        let lfu_store = || policy_store(PolicyKind::AllKeysLfu, 2, 0);
        let s = lfu_store();
        put(&s, 0, "hot", Value::str(b"1"), None, now);
        put(&s, 0, "cold", Value::str(b"1"), None, now);
        for _ in 0..2000 {
            let mut ks = s.lock_key(b"hot");
            ks.shard(b"hot").lookup(0, b"hot", now, Access::Read);
        }
        let counter = |s: &Store, key: &[u8]| {
            let mut ks = s.lock_key(key);
            ks.shard(key).lfu_counter(0, key, now).expect("a counter")
        };
        let (hot, cold) = (counter(&s, b"hot"), counter(&s, b"cold"));
        assert!(hot > cold + 3, "{hot} {cold}");
        let dir = temp_dir("lfu");
        let path = dir.join("dump.rdb");
        save_now(&s, &snap(&s, now, &[]), &path).expect("saved");
        let t = lfu_store();
        load(&t, &path, now, false, |_| Ok(())).expect("loads");
        assert_eq!((counter(&t, b"hot"), counter(&t, b"cold")), (hot, cold));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
