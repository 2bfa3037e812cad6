//! The keys that expiry removed, named while someone needs them: a
//! replication stream has to say `DEL` for each key a primary expires, as
//! its replicas never expire keys themselves.
//!
//! Every shard of a store shares one [`ExpiredLog`]. Off (the default), a
//! removal costs one relaxed load more; on, each removed key is pushed
//! under the log's mutex while its shard is still locked, so the log holds
//! the removals in the order they happened to each key.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use bytes::Bytes;

/// Keys removed because their TTL passed, as `(database, key)`, in order.
#[derive(Debug, Default)]
pub struct ExpiredLog {
    on: AtomicBool,
    keys: Mutex<Vec<(usize, Bytes)>>,
}

impl ExpiredLog {
    /// Whether removals are being recorded.
    pub(crate) fn is_on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// Starts or stops recording; stopping drops what was recorded.
    pub(crate) fn set(&self, on: bool) {
        self.on.store(on, Ordering::Relaxed);
        if !on {
            self.lock().clear();
        }
    }

    pub(crate) fn push(&self, db: usize, key: &[u8]) {
        self.lock().push((db, Bytes::copy_from_slice(key)));
    }

    /// What was recorded since the last call, oldest first.
    pub(crate) fn take(&self) -> Vec<(usize, Bytes)> {
        if !self.is_on() {
            return Vec::new();
        }
        std::mem::take(&mut *self.lock())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(usize, Bytes)>> {
        self.keys.lock().unwrap_or_else(|p| p.into_inner())
    }
}
