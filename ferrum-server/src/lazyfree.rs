//! Lazy freeing: values that take long to free go to a background thread.
//!
//! `UNLINK` (and `DEL` under `lazyfree-lazy-user-del yes`) removes its keys
//! from the store at once, so they are gone and their memory leaves
//! `used_memory` before the reply, but a value whose free effort
//! ([`Value::free_effort`]) is above Redis's threshold of 64 is dropped by
//! the `lazyfree` thread instead of by the connection: freeing a set of a
//! million members takes tens of milliseconds that no client should wait
//! for. `INFO stats` shows `lazyfree_pending_objects` (handed over, not yet
//! freed) and `lazyfreed_objects` (freed there since start or `CONFIG
//! RESETSTAT`), as Redis does.
//!
//! # Lazy freeing (design notes)
//!
//! **Lazy freeing** (`lazyfree.rs`). `UNLINK` (and `DEL` with
//! `lazyfree-lazy-user-del yes`) takes its keys out of the store under the
//! shard locks, so they are gone and uncounted in `used_memory` before the
//! reply, then, with the locks released, hands each value whose free effort
//! (`Value::free_effort`, Redis's `lazyfreeGetFreeEffort`: a large
//! collection's elements, a list's nodes, a stream's nodes and groups) is
//! above 64 to one `lazyfree` thread, started with the first such value.
//! `lazyfree_pending_objects`/`lazyfreed_objects` in `INFO stats` count them
//! as Redis does. `FLUSHALL`/`FLUSHDB ASYNC` still free in place, and the
//! `lazyfree-lazy-eviction/expire/server-del/user-flush` parameters are
//! accepted and change nothing.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};

use ferrum_store::{Value, LAZYFREE_THRESHOLD};

/// The background freer and its counters. One per server; the thread ends
/// when this is dropped.
pub(crate) struct LazyFree {
    /// Where values to free are sent; the thread starts with the first one.
    queue: Mutex<Option<Sender<Value>>>,
    counters: Arc<Counters>,
}

#[derive(Default)]
struct Counters {
    pending: AtomicU64,
    freed: AtomicU64,
}

impl Default for LazyFree {
    fn default() -> LazyFree {
        LazyFree {
            queue: Mutex::new(None),
            counters: Arc::default(),
        }
    }
}

impl LazyFree {
    /// Frees `value`: here if that is cheap, else on the background thread.
    pub(crate) fn free(&self, value: Value) {
        if value.free_effort() <= LAZYFREE_THRESHOLD {
            return;
        }
        self.counters.pending.fetch_add(1, Ordering::Relaxed);
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        let sender = queue.get_or_insert_with(|| self.start());
        if let Err(mpsc::SendError(value)) = sender.send(value) {
            // The thread could not be started: free it here after all.
            drop(value);
            self.counters.pending.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Starts the thread; if the system refuses one, the returned sender's
    /// receiver is already gone and `free` falls back to freeing in place.
    fn start(&self) -> Sender<Value> {
        let (tx, rx) = mpsc::channel::<Value>();
        let counters = Arc::clone(&self.counters);
        let spawned = std::thread::Builder::new()
            .name("lazyfree".into())
            .spawn(move || {
                for value in rx {
                    drop(value);
                    counters.pending.fetch_sub(1, Ordering::Relaxed);
                    counters.freed.fetch_add(1, Ordering::Relaxed);
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("could not start the lazyfree thread, freeing in place: {e}");
        }
        tx
    }

    /// Values handed to the thread and not yet freed.
    pub(crate) fn pending(&self) -> u64 {
        self.counters.pending.load(Ordering::Relaxed)
    }

    /// Values the thread has freed since start or the last reset.
    pub(crate) fn freed(&self) -> u64 {
        self.counters.freed.load(Ordering::Relaxed)
    }

    /// `CONFIG RESETSTAT`.
    pub(crate) fn reset(&self) {
        self.counters.freed.store(0, Ordering::Relaxed);
    }
}
