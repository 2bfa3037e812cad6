//! The slow log: commands that ran for at least `slowlog-log-slower-than`
//! microseconds, newest first, at most `slowlog-max-len` of them. The
//! `SLOWLOG` command that reads and clears it is `cmd/slowlog.rs`.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use bytes::Bytes;
use ferrum_store::Millis;

use crate::client::ClientHandle;

/// Arguments kept per entry, as in Redis (`SLOWLOG_ENTRY_MAX_ARGC`).
const MAX_ARGS: usize = 32;
/// Bytes kept per argument (`SLOWLOG_ENTRY_MAX_STRING`).
const MAX_ARG_BYTES: usize = 128;

/// One logged command.
#[derive(Debug)]
pub(crate) struct Entry {
    /// Entries are numbered from 0 since start.
    pub(crate) id: u64,
    /// When it ran, in Unix seconds.
    pub(crate) unix_secs: u64,
    /// How long it ran, in microseconds.
    pub(crate) usec: u64,
    /// Its arguments, trimmed as Redis trims them.
    pub(crate) args: Vec<Bytes>,
    /// The client's address.
    pub(crate) addr: String,
    /// The client's name (`CLIENT SETNAME`), empty if none.
    pub(crate) name: Bytes,
}

/// The log and its two parameters, shared by every connection.
#[derive(Debug)]
pub(crate) struct SlowLog {
    entries: Mutex<VecDeque<Entry>>,
    next_id: AtomicU64,
    /// `slowlog-log-slower-than`, microseconds; negative is off.
    pub(crate) threshold_usec: AtomicI64,
    /// `slowlog-max-len`.
    pub(crate) max_len: AtomicU64,
}

impl SlowLog {
    /// An empty log with the configured parameters.
    pub(crate) fn new(threshold_usec: i64, max_len: u64) -> SlowLog {
        SlowLog {
            entries: Mutex::new(VecDeque::new()),
            next_id: AtomicU64::new(0),
            threshold_usec: AtomicI64::new(threshold_usec),
            max_len: AtomicU64::new(max_len),
        }
    }

    /// Whether a command that took `usec` belongs in the log.
    pub(crate) fn wants(&self, usec: u64) -> bool {
        let t = self.threshold_usec.load(Ordering::Relaxed);
        t >= 0 && usec >= t as u64
    }

    /// Logs a command, trimming its arguments as Redis does.
    pub(crate) fn record(&self, client: &ClientHandle, now: Millis, args: &[Bytes], usec: u64) {
        let mut kept: Vec<Bytes> = Vec::with_capacity(args.len().min(MAX_ARGS));
        for (i, a) in args.iter().enumerate() {
            if i == MAX_ARGS - 1 && args.len() > MAX_ARGS {
                kept.push(Bytes::from(format!(
                    "... ({} more arguments)",
                    args.len() - MAX_ARGS + 1
                )));
                break;
            }
            if a.len() > MAX_ARG_BYTES {
                let mut v = a[..MAX_ARG_BYTES].to_vec();
                v.extend_from_slice(
                    format!("... ({} more bytes)", a.len() - MAX_ARG_BYTES).as_bytes(),
                );
                kept.push(Bytes::from(v));
            } else {
                kept.push(a.clone());
            }
        }
        let name = client
            .name
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .unwrap_or_default();
        let entry = Entry {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            unix_secs: now.0 / 1000,
            usec,
            args: kept,
            addr: client.addr.to_string(),
            name,
        };
        let max = self.max_len.load(Ordering::Relaxed) as usize;
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.push_front(entry);
        entries.truncate(max);
    }

    /// The entries, newest first, locked (`SLOWLOG GET/LEN/RESET`).
    pub(crate) fn entries(&self) -> MutexGuard<'_, VecDeque<Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Drops entries beyond a lowered `slowlog-max-len`.
    pub(crate) fn trim(&self) {
        let max = self.max_len.load(Ordering::Relaxed) as usize;
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .truncate(max);
    }
}
