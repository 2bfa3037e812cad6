//! Snapshots of the store on disk, in Redis 7.0's RDB format
//! ([`crate::rdb::file`]): writing the whole keyspace to `dir/dbfilename`
//! ([`save`]) and loading such a file back ([`load`]), at start-up, by
//! `DEBUG RELOAD`, and from files Redis wrote.
//!
//! A save writes `temp-<pid>.rdb` in the same directory, fsyncs it and
//! renames it over the target, so a save that fails or is interrupted
//! leaves the last good file in place. A file that does not load is
//! refused whole, with the byte offset where it went wrong; the caller
//! decides what to do with what was loaded before it.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use ferrum_store::{Access, Millis, PolicyKind, Store};

use crate::rdb::file::{self, LoadError, Recency, Writer};

/// The persistence state `LASTSAVE` and `INFO persistence` report.
#[derive(Debug)]
pub(crate) struct Persistence {
    /// Unix seconds of the last successful save, or of start-up.
    last_save_unix: AtomicU64,
    /// The server's change counter when the last successful save began.
    changes_at_save: AtomicU64,
    /// Successful saves since start-up (`rdb_saves`).
    saves: AtomicU64,
}

impl Persistence {
    /// The state at start-up, at Unix time `now_unix_secs`.
    pub(crate) fn new(now_unix_secs: u64) -> Persistence {
        Persistence {
            last_save_unix: AtomicU64::new(now_unix_secs),
            changes_at_save: AtomicU64::new(0),
            saves: AtomicU64::new(0),
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

    /// Records a successful save that began at Unix time `unix_secs`
    /// with the change counter at `changes`.
    pub(crate) fn saved(&self, unix_secs: u64, changes: u64) {
        self.last_save_unix.store(unix_secs, Ordering::Relaxed);
        self.changes_at_save.store(changes, Ordering::Relaxed);
        self.saves.fetch_add(1, Ordering::Relaxed);
    }
}

/// What a snapshot holds beside the keyspace.
pub(crate) struct SnapshotInfo<'a> {
    /// The function libraries' code, in the order `FUNCTION DUMP` lists
    /// them.
    pub(crate) functions: &'a [Bytes],
    /// The store's clock now, for idle times and expired keys.
    pub(crate) now: Millis,
    /// Unix seconds now (`ctime`).
    pub(crate) unix_secs: u64,
    /// `rdbchecksum`.
    pub(crate) checksum: bool,
}

/// What a save wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Saved {
    pub(crate) keys: usize,
    pub(crate) bytes: u64,
}

/// The eviction hint Redis writes per key under `policy`: the idle time
/// under LRU policies. (The LFU counter and AHE's state come with the
/// eviction state's own step.)
fn recency_of(policy: PolicyKind, now: Millis, last_access: Millis) -> Recency {
    match policy {
        PolicyKind::AllKeysLru | PolicyKind::VolatileLru => {
            Recency::IdleSeconds(now.0.saturating_sub(last_access.0) / 1000)
        }
        _ => Recency::None,
    }
}

/// Writes the whole store to `out` as an RDB file, every shard locked for
/// the duration, so the file is one point in time (as `SAVE`, which
/// blocks Redis).
///
/// # Errors
/// When `out` fails.
pub(crate) fn write_store<W: Write>(
    store: &Store,
    info: &SnapshotInfo<'_>,
    out: W,
) -> io::Result<(W, usize)> {
    let ctime = info.unix_secs.to_string();
    let used_mem = store.used_memory_bytes().to_string();
    let aux: [(&str, &[u8]); 5] = [
        ("redis-ver", crate::REDIS_VERSION.as_bytes()),
        ("redis-bits", b"64"),
        ("ctime", ctime.as_bytes()),
        ("used-mem", used_mem.as_bytes()),
        ("aof-base", b"0"),
    ];
    let mut w = Writer::new(out, &aux, info.checksum)?;
    for code in info.functions {
        w.function(code)?;
    }
    let (policy, _) = store.policy();
    let mut ks = store.lock_all();
    let mut keys = 0;
    for db in 0..store.databases() {
        let (mut len, mut expires) = (0, 0);
        for shard in ks.shards() {
            len += shard.len(db);
            expires += shard.expires(db);
        }
        if len == 0 {
            continue;
        }
        w.select_db(db, len, expires)?;
        for shard in ks.shards() {
            let mut failed = None;
            shard.for_each_key(db, info.now, |key, e| {
                if failed.is_some() {
                    return;
                }
                let recency = recency_of(policy, info.now, e.last_access());
                let expires = e.expires_at().map(|m| m.0);
                match w.key(key, e.value(), expires, recency) {
                    Ok(()) => keys += 1,
                    Err(err) => failed = Some(err),
                }
            });
            if let Some(err) = failed {
                return Err(err);
            }
        }
    }
    Ok((w.finish()?, keys))
}

/// Saves the store to `path`: written to a temporary file in the same
/// directory, fsynced, then renamed over `path`. On failure `path` is as
/// it was and the temporary file is gone.
///
/// # Errors
/// When the file cannot be created, written or renamed.
pub(crate) fn save(store: &Store, info: &SnapshotInfo<'_>, path: &Path) -> io::Result<Saved> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let temp = dir.join(format!("temp-{}.rdb", std::process::id()));
    let result = write_file(store, info, &temp).and_then(|saved| {
        std::fs::rename(&temp, path)?;
        // The rename is durable once the directory is.
        File::open(dir)?.sync_all()?;
        Ok(saved)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

fn write_file(store: &Store, info: &SnapshotInfo<'_>, temp: &Path) -> io::Result<Saved> {
    let out = BufWriter::with_capacity(1 << 20, File::create(temp)?);
    let (out, keys) = write_store(store, info, out)?;
    let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.sync_all()?;
    let bytes = file.metadata()?.len();
    Ok(Saved { keys, bytes })
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
) -> Result<Option<Loaded>, LoadFailure> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(LoadFailure::Io(e)),
    };
    let mut loaded = Loaded::default();
    let databases = store.databases();
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
        if let Recency::IdleSeconds(secs) = k.recency {
            if let Some(mut e) = shard.lookup_mut(k.db, &key, now) {
                e.set_last_access(Millis(now.0.saturating_sub(secs.saturating_mul(1000))));
                e.mark_unchanged();
            }
        }
        loaded.keys += 1;
        Ok(())
    })
    .map_err(LoadFailure::Format)?;
    loaded.functions = header.functions;
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

    fn info(now: Millis, functions: &[Bytes]) -> SnapshotInfo<'_> {
        SnapshotInfo {
            functions,
            now,
            unix_secs: now.0 / 1000,
            checksum: true,
        }
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
        let saved = save(&s, &info(now, std::slice::from_ref(&code)), &path).expect("saved");
        assert_eq!(saved.keys, 502);
        assert_eq!(saved.bytes, std::fs::metadata(&path).expect("file").len());
        assert!(!dir
            .join(format!("temp-{}.rdb", std::process::id()))
            .exists());

        let later = Millis(now.0 + 1_000);
        let t = store(4);
        let loaded = load(&t, &path, later, false)
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
        let err = load(&t, &path, later, false).expect_err("duplicates");
        assert!(err.to_string().contains("duplicate key"), "{err}");
        // Merging replaces.
        let merged = load(&t, &path, later, true)
            .expect("merges")
            .expect("a file");
        assert_eq!(merged.keys, 501);
        // Fewer databases than the file uses.
        let err = load(&store(2), &path, later, false).expect_err("db 3");
        assert!(err.to_string().contains("database"), "{err}");
        // No file: nothing to load.
        assert!(load(&t, &dir.join("none.rdb"), later, false)
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
        save(&s, &info(now, &[]), &path).expect("saved");
        let good = std::fs::read(&path).expect("file");
        // A save into a directory that is gone fails and changes nothing.
        let err = save(&s, &info(now, &[]), &dir.join("missing").join("dump.rdb"));
        assert!(err.is_err());
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
        let err = write_store(&s, &info(now, &[]), Failing(20))
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
        let (bytes, _) = write_store(&s, &info(now, &[]), Vec::new()).expect("in memory");
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
}
