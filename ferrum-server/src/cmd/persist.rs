//! `SAVE`, `LASTSAVE`, `DEBUG RELOAD` and loading `dir/dbfilename` at
//! start-up: the commands over [`crate::persist`].

use bytes::Bytes;
use ferrum_proto::Frame;

use super::error::{DEBUG_RELOAD_OPTIONS, RELOAD_FAILED, SAVE_FAILED};
use super::parse::is;
use super::{CmdError, CmdResult, Ctx};
use crate::persist::{self, LoadFailure, Loaded, Saved, SnapshotInfo};
use crate::shared::Shared;

/// Saves the store and the function libraries to `dir/dbfilename`.
///
/// # Errors
/// The I/O error that stopped the save; the previous file is untouched.
pub(crate) fn save_now(shared: &Shared) -> std::io::Result<Saved> {
    let (path, checksum) = {
        let config = shared.config();
        let checksum = config.stored_value("rdbchecksum") == "yes";
        (
            persist::file_path(&config.dir, &config.dbfilename),
            checksum,
        )
    };
    let functions = super::function::library_codes(shared);
    let changes = shared
        .stats
        .dirty
        .load(std::sync::atomic::Ordering::Relaxed);
    let unix_secs = shared.clock.now_micros() / 1_000_000;
    let info = SnapshotInfo {
        functions: &functions,
        now: shared.clock.now(),
        unix_secs,
        checksum,
    };
    let result = persist::save(&shared.store, &info, &path);
    match &result {
        Ok(saved) => {
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
    result
}

/// Loads `dir/dbfilename` into the store, keys and function libraries
/// (`merge` replaces what is already there, else a duplicate is an
/// error). `Ok(None)` when there is no file.
///
/// # Errors
/// What stopped the load, the byte offset named; keys read before it
/// stay in the store.
pub(crate) fn load_file(shared: &Shared, merge: bool) -> Result<Option<Loaded>, String> {
    let path = {
        let config = shared.config();
        persist::file_path(&config.dir, &config.dbfilename)
    };
    let now = shared.clock.now();
    let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let Some(mut loaded) =
        persist::load(&shared.store, &path, now, merge).map_err(|e| match e {
            LoadFailure::Io(e) => fail(&e),
            LoadFailure::Format(e) => fail(&e),
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
    shared.store.enforce_maxmemory(now);
    Ok(Some(loaded))
}

/// `SAVE`: writes the snapshot now; every other command waits, as in
/// Redis.
pub(crate) fn save(ctx: &mut Ctx<'_>, _args: &[Bytes]) -> CmdResult {
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
    match load_file(shared, merge) {
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

/// Loads `dir/dbfilename` at start-up, if it exists, and logs what it
/// held.
///
/// # Errors
/// A file that does not load whole: the server does not start with half
/// a dataset.
pub(crate) fn load_at_start(shared: &Shared) -> Result<(), String> {
    let started = std::time::Instant::now();
    if let Some(loaded) = load_file(shared, false)? {
        tracing::info!(
            "DB loaded from disk (RDB version {}, written by {}): {:.3} seconds, \
             {} keys loaded, {} expired",
            loaded.version.0,
            loaded.version.1,
            started.elapsed().as_secs_f64(),
            loaded.keys,
            loaded.expired
        );
    }
    Ok(())
}
