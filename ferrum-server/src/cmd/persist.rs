//! `SAVE`, `BGSAVE`, `LASTSAVE`, `DEBUG RELOAD` and loading
//! `dir/dbfilename` at start-up: the commands over [`crate::persist`].

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use ferrum_proto::Frame;

use super::error::{self, BGSAVE_IN_PROGRESS, DEBUG_RELOAD_OPTIONS, RELOAD_FAILED, SAVE_FAILED};
use super::parse::is;
use super::{CmdError, CmdResult, Ctx};
use crate::persist::{self, LoadFailure, Loaded, Saved, SnapshotInfo};
use crate::shared::Shared;

/// Where and how a save writes, read from the configuration when it
/// starts.
struct Target {
    path: PathBuf,
    /// `rdb-key-save-delay`: microseconds to wait after each key (Redis's
    /// knob for tests that need a long save).
    key_delay_us: u64,
}

/// Starts a point-in-time snapshot of the keyspace and the function
/// libraries as they are now; `None` when one is in progress.
fn start_snapshot(shared: &Shared) -> Option<(persist::Snapshot, Target, u64)> {
    let (target, checksum, compress) = {
        let config = shared.config();
        let key_delay_us = config
            .stored_value("rdb-key-save-delay")
            .parse::<i64>()
            .map_or(0, |d| d.max(0) as u64);
        let target = Target {
            path: persist::file_path(&config.dir, &config.dbfilename),
            key_delay_us,
        };
        let yes = |name| config.stored_value(name) == "yes";
        (target, yes("rdbchecksum"), yes("rdbcompression"))
    };
    let changes = shared.stats.dirty.load(Ordering::Relaxed);
    let snap = persist::Snapshot::start(&shared.store, snapshot_info(shared, checksum, compress))?;
    Some((snap, target, changes))
}

/// What a snapshot taken now records beside the keys.
fn snapshot_info(shared: &Shared, checksum: bool, compress: bool) -> SnapshotInfo {
    SnapshotInfo {
        functions: super::function::library_codes(shared),
        now: shared.clock.now(),
        unix_secs: shared.clock.now_micros() / 1_000_000,
        checksum,
        compress,
        used_memory: shared.store.used_memory_bytes(),
    }
}

/// Starts a point-in-time snapshot for a replica's full sync, with
/// `rdbchecksum` and `rdbcompression` as configured; `None` while another
/// is in progress.
pub(crate) fn start_sync_snapshot(shared: &Shared) -> Option<persist::Snapshot> {
    let (checksum, compress) = {
        let config = shared.config();
        let yes = |name| config.stored_value(name) == "yes";
        (yes("rdbchecksum"), yes("rdbcompression"))
    };
    persist::Snapshot::start(&shared.store, snapshot_info(shared, checksum, compress))
}

/// Records a save's outcome, which began with the change counter at
/// `changes`, and logs it.
fn record(shared: &Shared, result: &io::Result<Saved>, changes: u64, path: &Path) {
    match result {
        Ok(saved) => {
            let unix_secs = shared.clock.now_micros() / 1_000_000;
            shared.persistence.saved(unix_secs, changes);
            tracing::info!(
                "DB saved on disk: {} keys, {} bytes, {}",
                saved.keys,
                saved.bytes,
                path.display()
            );
        }
        Err(e) => tracing::warn!("Failed saving the DB to {}: {e}", path.display()),
    }
}

/// Saves the store and the function libraries to `dir/dbfilename` now,
/// on the caller's thread.
///
/// # Errors
/// The I/O error that stopped the save (the previous file is untouched),
/// or a background save in progress.
pub(crate) fn save_now(shared: &Shared) -> io::Result<Saved> {
    let Some((snap, target, changes)) = start_snapshot(shared) else {
        return Err(io::Error::other(BGSAVE_IN_PROGRESS));
    };
    let result = persist::save_now(&shared.store, &snap, &target.path);
    record(shared, &result, changes, &target.path);
    result
}

/// Starts a background save: the snapshot is taken now, and a thread of
/// its own writes it while commands go on.
///
/// # Errors
/// Redis's text when a background save is already running.
pub(crate) fn start_bgsave(shared: &Shared) -> Result<(), &'static str> {
    let p = &shared.persistence;
    let owner = shared.this.upgrade().ok_or(BGSAVE_IN_PROGRESS)?;
    if p.bgsave_running.swap(true, Ordering::AcqRel) {
        return Err(BGSAVE_IN_PROGRESS);
    }
    let Some((snap, target, changes)) = start_snapshot(shared) else {
        p.bgsave_running.store(false, Ordering::Release);
        return Err(BGSAVE_IN_PROGRESS);
    };
    p.bgsave_abort.store(false, Ordering::Relaxed);
    p.bgsave_scheduled.store(false, Ordering::Relaxed);
    p.keys_processed.store(0, Ordering::Relaxed);
    p.keys_total.store(
        shared
            .store
            .keyspace_sizes()
            .iter()
            .map(|&(k, _)| k as u64)
            .sum(),
        Ordering::Relaxed,
    );
    p.displaced_bytes.store(0, Ordering::Relaxed);
    p.bgsave_started_unix
        .store(shared.clock.now_micros() / 1_000_000, Ordering::Relaxed);
    tracing::info!("Background saving started");
    let spawned = std::thread::Builder::new()
        .name("bgsave".into())
        .spawn(move || run_bgsave(&owner, &snap, &target, changes));
    if spawned.is_err() {
        shared.store.snapshot_abort();
        p.bgsave_running.store(false, Ordering::Release);
        return Err(BGSAVE_IN_PROGRESS);
    }
    Ok(())
}

/// The background save's thread: the walk, paced and stoppable, then the
/// outcome in `INFO persistence`.
fn run_bgsave(shared: &Shared, snap: &persist::Snapshot, target: &Target, changes: u64) {
    let p = &shared.persistence;
    let started = std::time::Instant::now();
    let mut last_sample = started;
    let mut pace = |chunk: &ferrum_store::snapshot::SnapshotChunk| -> io::Result<()> {
        if p.bgsave_abort.load(Ordering::Relaxed) {
            return Err(io::Error::other("aborted"));
        }
        let keys = chunk.entries.len() as u64;
        p.keys_processed.fetch_add(keys, Ordering::Relaxed);
        if target.key_delay_us > 0 && keys > 0 {
            std::thread::sleep(Duration::from_micros(target.key_delay_us * keys));
        }
        if last_sample.elapsed() >= Duration::from_millis(100) {
            last_sample = std::time::Instant::now();
            // Shards that finished their walk drop out of the sum: keep
            // the most seen.
            let displaced = shared.store.snapshot_displaced_bytes() as u64;
            p.displaced_bytes.fetch_max(displaced, Ordering::Relaxed);
        }
        Ok(())
    };
    let step = persist::step_bytes(target.key_delay_us > 0);
    let result = persist::save(&shared.store, snap, &target.path, step, &mut pace);
    let aborted = p.bgsave_abort.swap(false, Ordering::Relaxed);
    if aborted {
        tracing::warn!("Background saving terminated before it ended");
    } else {
        record(shared, &result, changes, &target.path);
        p.last_bgsave_failed
            .store(result.is_err(), Ordering::Relaxed);
        if result.is_ok() {
            tracing::info!("Background saving terminated with success");
        }
    }
    p.last_bgsave_secs
        .store(started.elapsed().as_secs() as i64, Ordering::Relaxed);
    let displaced = p.displaced_bytes.swap(0, Ordering::Relaxed);
    p.last_displaced_bytes.store(displaced, Ordering::Relaxed);
    p.keys_processed.store(0, Ordering::Relaxed);
    p.keys_total.store(0, Ordering::Relaxed);
    p.bgsave_running.store(false, Ordering::Release);
}

/// Stops a running background save, if any (`FLUSHALL`, shutdown); its
/// temporary file is removed and the last good file stays.
pub(crate) fn abort_bgsave(shared: &Shared) {
    let p = &shared.persistence;
    if p.bgsave_running.load(Ordering::Acquire) {
        p.bgsave_abort.store(true, Ordering::Relaxed);
        shared.store.snapshot_abort();
    }
}

/// `BGSAVE [SCHEDULE]`: starts a background save; inside a transaction it
/// is scheduled for when the transaction ends, as in Redis.
pub(crate) fn bgsave(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    match args.get(1) {
        None => {}
        Some(a) if is(a, "schedule") && args.len() == 2 => {}
        Some(_) => return Err(CmdError::syntax()),
    }
    let p = &ctx.shared.persistence;
    if p.bgsave_running.load(Ordering::Acquire) {
        return Err(CmdError::msg(BGSAVE_IN_PROGRESS));
    }
    if ctx.in_exec {
        p.bgsave_scheduled.store(true, Ordering::Relaxed);
        return Ok(Frame::Simple(Bytes::from_static(
            b"Background saving scheduled",
        )));
    }
    start_bgsave(ctx.shared).map_err(CmdError::msg)?;
    Ok(Frame::Simple(Bytes::from_static(
        b"Background saving started",
    )))
}

/// Seconds a failed background save waits before save points try again
/// (Redis's `CONFIG_BGSAVE_RETRY_DELAY`).
const RETRY_DELAY_SECS: u64 = 5;

/// The server's persistence cron: starts a background save scheduled
/// inside a transaction, or one a `save` point calls for: at least its
/// number of changes since the last save and more than its seconds since
/// then (after a failed attempt, not before [`RETRY_DELAY_SECS`]).
pub(crate) fn cron(shared: &Shared) {
    let p = &shared.persistence;
    // A save while the snapshot loads would replace it with part of it.
    if p.bgsave_running.load(Ordering::Acquire) || p.loading.active() {
        return;
    }
    if p.bgsave_scheduled.load(Ordering::Relaxed) {
        let _ = start_bgsave(shared);
        return;
    }
    let now = shared.clock.now_micros() / 1_000_000;
    let changes = p.changes_since_save(shared.stats.dirty.load(Ordering::Relaxed));
    let since_save = now.saturating_sub(p.last_save_unix());
    let may_retry = !p.last_bgsave_failed.load(Ordering::Relaxed)
        || now.saturating_sub(p.bgsave_started_unix.load(Ordering::Relaxed)) > RETRY_DELAY_SECS;
    let due = shared
        .config()
        .save_points()
        .into_iter()
        .find(|&(secs, min)| changes >= min && since_save > secs);
    if let Some((secs, min)) = due.filter(|_| may_retry) {
        tracing::info!("{min} changes in {secs} seconds. Saving...");
        let _ = start_bgsave(shared);
    }
}

/// Saves before the server stops, as `SHUTDOWN` asks (`save`: always,
/// `nosave`: never, neither: when save points are set); writes wait
/// meanwhile, so what clients were told is written is in the file. A
/// background save in progress is stopped first. Returns whether the
/// server may stop (the save, if any, succeeded).
pub(crate) fn save_for_shutdown(shared: &Shared, save: bool, nosave: bool) -> bool {
    abort_bgsave(shared);
    let wanted = save || (!nosave && !shared.config().save_points().is_empty());
    if !wanted {
        return true;
    }
    if shared.persistence.loading.active() {
        // Part of the snapshot must never replace the whole (Redis
        // does not save when it stops while loading either).
        tracing::warn!("Stopping while the snapshot loads: not saving.");
        return true;
    }
    // Wait for the stopped background save's thread to let go.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while shared.persistence.bgsave_running.load(Ordering::Acquire)
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    let far = tokio::time::Instant::now() + Duration::from_secs(3600);
    shared.pause.pause(far, false);
    tracing::info!("Saving the final RDB snapshot before exiting.");
    let saved = save_now(shared).is_ok();
    if !saved {
        shared.pause.unpause();
        tracing::warn!("Error trying to save the DB, can't exit.");
    }
    saved
}

/// Loads `dir/dbfilename` into the store, keys and function libraries
/// (`merge` replaces what is already there, else a duplicate is an
/// error). `Ok(None)` when there is no file.
///
/// # Errors
/// What stopped the load, the byte offset named; keys read before it
/// stay in the store.
pub(crate) fn load_file(
    shared: &Shared,
    merge: bool,
    after_key: impl FnMut(usize) -> Result<(), String>,
) -> Result<Option<Loaded>, String> {
    let path = snapshot_path(shared);
    let now = shared.clock.now();
    let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let Some(mut loaded) =
        persist::load(&shared.store, &path, now, merge, after_key).map_err(|e| match e {
            LoadFailure::Io(e) => fail(&e),
            LoadFailure::Format(e) => {
                // What redis-check-rdb would say: the key and type it was in.
                for line in e.report() {
                    tracing::warn!("{line}");
                }
                fail(&e)
            }
        })?
    else {
        return Ok(None);
    };
    let functions = std::mem::take(&mut loaded.functions);
    if !functions.is_empty() {
        super::function::restore_libraries(shared, functions, false, merge)
            .map_err(|e| fail(&format_args!("a function library: {e}")))?;
    }
    // A file saved under a larger `maxmemory` fits at once.
    // (Not on a replica: it holds what its primary holds.)
    super::notify::enforce_maxmemory(shared, now);
    let (keys, expired) = &shared.persistence.last_load;
    keys.store(loaded.keys as u64, Ordering::Relaxed);
    expired.store(loaded.expired as u64, Ordering::Relaxed);
    Ok(Some(loaded))
}

/// `SAVE`: writes the snapshot now, before replying.
pub(crate) fn save(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    if ctx
        .shared
        .persistence
        .bgsave_running
        .load(Ordering::Acquire)
    {
        return Err(CmdError::msg(BGSAVE_IN_PROGRESS));
    }
    save_now(ctx.shared).map_err(|_| CmdError::msg(SAVE_FAILED))?;
    Ok(Frame::ok())
}

/// `LASTSAVE`: Unix seconds of the last successful save (start-up before
/// the first, as in Redis).
pub(crate) fn lastsave(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
    Ok(Frame::Integer(
        ctx.shared.persistence.last_save_unix() as i64
    ))
}

/// `DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]`: save (unless `NOSAVE`),
/// empty the keyspace and the function libraries (unless `NOFLUSH`), and
/// load the file back (`MERGE`: replacing keys and libraries that exist,
/// which are otherwise an error).
pub(crate) fn debug_reload(ctx: &mut Ctx<'_>, options: &[Bytes]) -> CmdResult {
    // Saving now would put part of the loading snapshot in its place.
    if ctx.shared.persistence.loading.active() {
        return Err(CmdError::msg(error::LOADING));
    }
    let (mut merge, mut flush, mut save) = (false, true, true);
    for o in options {
        if is(o, "merge") {
            merge = true;
        } else if is(o, "noflush") {
            flush = false;
        } else if is(o, "nosave") {
            save = false;
        } else {
            return Err(CmdError::msg(DEBUG_RELOAD_OPTIONS));
        }
    }
    let shared = ctx.shared;
    if save {
        save_now(shared).map_err(|_| CmdError::msg(SAVE_FAILED))?;
    }
    if flush {
        super::server::flush_all(ctx);
        super::function::restore_libraries(shared, Vec::new(), true, false)?;
    }
    match load_file(shared, merge, |_| Ok(())) {
        Ok(_) => {
            tracing::warn!("DB reloaded by DEBUG RELOAD");
            Ok(Frame::ok())
        }
        Err(e) => {
            tracing::warn!("DEBUG RELOAD: {e}");
            Err(CmdError::msg(RELOAD_FAILED))
        }
    }
}

/// `dir/dbfilename`.
fn snapshot_path(shared: &Shared) -> std::path::PathBuf {
    let config = shared.config();
    persist::file_path(&config.dir, &config.dbfilename)
}

/// Marks the load at start-up as begun when `dir/dbfilename` exists, so
/// that from the first connection on, commands without the `loading`
/// flag are refused with `-LOADING` until [`load_at_start`] ends.
pub(crate) fn begin_load(shared: &Shared) {
    if let Ok(meta) = std::fs::metadata(snapshot_path(shared)) {
        let now = shared.clock.now_micros();
        shared.persistence.loading.start(meta.len(), now);
    }
}

/// Loads `dir/dbfilename` at start-up, if [`begin_load`] found it, while
/// connections are served; logs what it held, and ends the loading state.
/// Each key waits `key-load-delay` microseconds (a test hook, as in
/// Redis); `stop` raised ends the load early (a shutdown).
///
/// # Errors
/// A file that does not load whole: the server does not start with half
/// a dataset, unless `rdb-load-partial yes` asks it to.
pub(crate) fn load_at_start(shared: &Shared, stop: &AtomicBool) -> Result<(), String> {
    let loading = &shared.persistence.loading;
    if !loading.active() {
        return Ok(());
    }
    let started = std::time::Instant::now();
    let delay = shared
        .config()
        .stored_value("key-load-delay")
        .parse::<i64>()
        .unwrap_or(0);
    let after_key = |end: usize| {
        loading.loaded_bytes.store(end as u64, Ordering::Relaxed);
        if delay > 0 {
            std::thread::sleep(Duration::from_micros(delay as u64));
        }
        if stop.load(Ordering::Relaxed) {
            return Err("the server is stopping".to_owned());
        }
        Ok(())
    };
    let loaded = load_file(shared, false, after_key);
    loading.finish();
    if stop.load(Ordering::Relaxed) {
        // A shutdown, not a bad file.
        return Ok(());
    }
    let loaded = match loaded {
        Err(e) if shared.config().stored_value("rdb-load-partial") == "yes" => {
            tracing::warn!("{e}");
            tracing::warn!(
                "Serving the keys read before the damage (rdb-load-partial yes); \
                 the next save replaces the file."
            );
            return Ok(());
        }
        loaded => loaded?,
    };
    if let Some(loaded) = loaded {
        tracing::info!(
            "DB loaded from disk (RDB version {}, written by {}): {:.3} seconds, \
             keys loaded: {}, keys expired: {}, empty keys skipped: {}",
            loaded.version.0,
            loaded.version.1,
            started.elapsed().as_secs_f64(),
            loaded.keys,
            loaded.expired,
            loaded.empty
        );
    }
    Ok(())
}

/// A replica's full sync: the primary's snapshot `rdb` replaces the
/// dataset and the function libraries, and becomes `dir/dbfilename` (as
/// in Redis). The caller holds the transaction gate exclusively. Returns
/// the keys loaded.
///
/// # Errors
/// The file cannot be written, or the snapshot does not load; the dataset
/// is empty then.
pub(crate) fn replace_dataset(shared: &Shared, rdb: &[u8]) -> Result<usize, String> {
    let path = snapshot_path(shared);
    let dir = path.parent().unwrap_or(Path::new("."));
    let temp = dir.join(format!("temp-{}-sync.rdb", std::process::id()));
    std::fs::write(&temp, rdb)
        .and_then(|()| std::fs::rename(&temp, &path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&temp);
            format!("{}: {e}", path.display())
        })?;
    {
        let mut ks = shared.store.lock_all();
        for shard in ks.shards() {
            for db in 0..shared.store.databases() {
                shard.flush_db(db);
            }
        }
    }
    super::function::restore_libraries(shared, Vec::new(), true, false)
        .map_err(|e| format!("{e:?}"))?;
    let loaded = load_file(shared, false, |_| Ok(()))?;
    Ok(loaded.map_or(0, |l| l.keys))
}
