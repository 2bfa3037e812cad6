//! The registry of clients blocked in BLPOP, BRPOP, BLMOVE, BRPOPLPUSH,
//! BZPOPMIN and BZPOPMAX: who waits on which key, in arrival order.
//!
//! A blocked client never holds a lock while it waits. It registers a
//! [`Waiter`] in the queue of each of its keys, then awaits the waiter's
//! `Notify` (together with its timeout, `CLIENT KILL`, shutdown and its own
//! socket). A command that writes a key calls [`Blocking::wake`], which
//! notifies the *first* waiter of the right type on that key, so waiters are
//! served first come, first served, as in Redis. The woken client retries
//! its pop under the shard lock; only the waiter itself ever pops, so no
//! element is taken for a client that is gone.
//!
//! A wake-up is a hint, never a hand-off, so none may be lost: when a waiter
//! leaves (served, timed out, killed or disconnected) its [`Registration`]
//! passes a wake-up on to the next waiter of each of its keys. That covers
//! a push of several elements (each served client passes the rest on) and a
//! client that was woken but disconnected before it could retry.
//!
//! # Blocking pops (design notes)
//!
//! **Blocking pops** (`cmd/blocking.rs`, `blocking.rs`, `connection.rs`).
//! The handler of BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BZPOPMIN, BZPOPMAX, BLMPOP
//! or BZMPOP validates its arguments and tries the pop at once, like the non-blocking
//! command (first non-empty key in argument order). Inside `MULTI` an empty
//! result is the timeout reply at once. Otherwise it sets `Ctx::block` and
//! `execute` returns `Reply::Block(BlockSpec)`. The connection then:
//!
//! 1. flushes the replies encoded before it (commands pipelined after it stay
//!    in the read buffer until it is served, as in Redis);
//! 2. registers a `Waiter` at the back of the queue of each key,
//!    `(db, key) -> VecDeque<Arc<Waiter>>` in `Shared::blocking`, and bumps the
//!    one blocked-clients counter that INFO and the exporter read;
//! 3. retries the pop (data may have arrived before it registered), under the
//!    transaction gate and the shard locks, like any command;
//! 4. if still empty, awaits with no lock held: the waiter's `Notify`, the
//!    deadline, `CLIENT KILL`, shutdown, and its socket. Reading the socket
//!    detects a client that goes away (EOF), which leaves at once; bytes it
//!    sends are kept for later. `CLIENT UNBLOCK` sets a flag and notifies.
//!    Then it loops to 3.
//!
//! Every write command, after it ran and released its locks, wakes the first
//! waiter on each of its keys (`cmd::run`, skipped with one atomic load when no
//! client is blocked). List commands wake list waiters, sorted-set commands
//! sorted-set waiters, stream commands stream readers; other commands (RENAME,
//! COPY, SWAPDB, DEL, SET, FLUSHDB) look the key's type up first. XREAD BLOCK and
//! XREADGROUP BLOCK are waiters of kind stream: since reading consumes nothing,
//! every stream waiter on the key is woken, and a write that leaves the key
//! absent or of another type wakes them too, so a blocked XREADGROUP answers
//! `UNBLOCKED`/`NOGROUP` as in Redis (a plain XREAD just waits on). A wake-up is only a hint: **only the waiter itself pops**, so an
//! element is never popped for a client that has gone. Dropping a waiter's
//! `Registration` (served, timed out, unblocked, killed or disconnected) wakes
//! the next waiter of each of its keys, and BLMOVE's destination: a push of two
//! elements serves two waiters in order, and a wake-up consumed by a client
//! that then disconnects is never lost. Writes inside `EXEC` wake waiters as
//! they run, but the waiters cannot retry before `EXEC` releases the gate, so
//! they see the transaction's result, as in Redis.
//!
//! Differences from Redis, by design: Redis serves blocked clients inside the
//! pushing command, so nothing can run in between; here the woken client
//! retries a moment later, and a plain LPOP from a third client that lands in
//! that moment can take the element first (the waiter then keeps its place and
//! waits on). A retry re-runs the whole pop, passing over a waited-on key that now holds
//! another type (the client stays blocked, as in Redis 7.0); a BLMOVE
//! destination of the wrong type still yields WRONGTYPE.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use ferrum_store::ValueKind;
use tokio::sync::Notify;

/// One blocked client's place in the queues of its keys.
#[derive(Debug)]
pub(crate) struct Waiter {
    /// The client's id, for `CLIENT UNBLOCK`.
    pub(crate) client_id: u64,
    /// The type it pops: a list or a sorted set.
    kind: ValueKind,
    /// Notified when one of its keys may have data, or when it is unblocked.
    pub(crate) wake: Notify,
    /// Set by `CLIENT UNBLOCK ... ERROR`: reply with an error, not a timeout.
    pub(crate) unblock_error: AtomicBool,
    /// Set by `CLIENT UNBLOCK`: stop waiting now.
    pub(crate) unblocked: AtomicBool,
}

type Queues = HashMap<(usize, Bytes), VecDeque<Arc<Waiter>>>;

/// Every blocked client, by the keys it waits on. One per server, in
/// `Shared`.
#[derive(Debug, Default)]
pub(crate) struct Blocking {
    queues: Mutex<Queues>,
    /// Blocked clients: the one number `INFO blocked_clients` and
    /// `redis_blocked_clients` read.
    blocked: AtomicUsize,
    /// Waiters by client id, for `CLIENT UNBLOCK`.
    by_client: Mutex<HashMap<u64, Arc<Waiter>>>,
}

impl Blocking {
    /// How many clients are blocked now.
    pub(crate) fn blocked_clients(&self) -> usize {
        self.blocked.load(Ordering::Relaxed)
    }

    /// Whether no client is blocked, so writers can skip [`Blocking::wake`].
    ///
    /// A writer checks this after it released the shard lock of the key it
    /// wrote, and a waiter registers before it retries under that same lock,
    /// so the lock orders the two: a writer that reads "idle" wrote before
    /// the waiter's retry, which then sees the data.
    pub(crate) fn is_idle(&self) -> bool {
        self.blocked.load(Ordering::Relaxed) == 0
    }

    /// Queues a client on `keys` of database `db`. The client must retry
    /// its pop after this returns (data may have arrived since it last
    /// looked) and stays registered until the [`Registration`] is dropped.
    pub(crate) fn register(
        self: &Arc<Self>,
        client_id: u64,
        db: usize,
        keys: &[Bytes],
        kind: ValueKind,
    ) -> Registration {
        let waiter = Arc::new(Waiter {
            client_id,
            kind,
            wake: Notify::new(),
            unblock_error: AtomicBool::new(false),
            unblocked: AtomicBool::new(false),
        });
        let mut unique: Vec<Bytes> = Vec::with_capacity(keys.len());
        for k in keys {
            if !unique.contains(k) {
                unique.push(k.clone());
            }
        }
        {
            let mut queues = self.lock();
            for k in &unique {
                queues
                    .entry((db, k.clone()))
                    .or_default()
                    .push_back(waiter.clone());
            }
            self.blocked.fetch_add(1, Ordering::Relaxed);
        }
        self.clients().insert(client_id, waiter.clone());
        Registration {
            blocking: self.clone(),
            waiter,
            db,
            keys: unique,
            also_wake: None,
        }
    }

    /// Wakes the longest-waiting client blocked on `key` that pops a
    /// `kind`. Spurious wake-ups are harmless: the client retries, finds
    /// nothing and waits on in its place.
    pub(crate) fn wake(&self, db: usize, key: &[u8], kind: ValueKind) {
        if self.is_idle() {
            return;
        }
        let queues = self.lock();
        // The map is keyed by `Bytes`; a borrowed lookup needs an owned key
        // only when someone waits at all, which the check above filters.
        let Some(queue) = queues.get(&(db, Bytes::copy_from_slice(key))) else {
            return;
        };
        if kind == ValueKind::Stream {
            // Readers take nothing away: every one of them is served.
            queue
                .iter()
                .filter(|w| w.kind == kind)
                .for_each(|w| w.wake.notify_one());
        } else if let Some(w) = queue.iter().find(|w| w.kind == kind) {
            w.wake.notify_one();
        }
    }

    /// Wakes every blocked client, to look again at where its keys are
    /// served: the cluster's slot map or state changed.
    pub(crate) fn wake_all(&self) {
        if self.is_idle() {
            return;
        }
        self.clients().values().for_each(|w| w.wake.notify_one());
    }

    /// The keys of database `db` that someone waits on (for `SWAPDB`, which
    /// can make all of them non-empty at once).
    pub(crate) fn keys_in(&self, db: usize) -> Vec<Bytes> {
        self.lock()
            .keys()
            .filter(|(d, _)| *d == db)
            .map(|(_, k)| k.clone())
            .collect()
    }

    /// `CLIENT UNBLOCK id [TIMEOUT|ERROR]`: whether `id` was blocked.
    pub(crate) fn unblock(&self, client_id: u64, error: bool) -> bool {
        let Some(w) = self.clients().get(&client_id).cloned() else {
            return false;
        };
        w.unblock_error.store(error, Ordering::Relaxed);
        w.unblocked.store(true, Ordering::Relaxed);
        w.wake.notify_one();
        true
    }

    fn remove(&self, waiter: &Arc<Waiter>, db: usize, keys: &[Bytes]) {
        {
            let mut queues = self.lock();
            for k in keys {
                let slot = (db, k.clone());
                if let Some(q) = queues.get_mut(&slot) {
                    q.retain(|w| !Arc::ptr_eq(w, waiter));
                    if q.is_empty() {
                        queues.remove(&slot);
                    }
                }
            }
            self.blocked.fetch_sub(1, Ordering::Relaxed);
        }
        let mut clients = self.clients();
        if clients
            .get(&waiter.client_id)
            .is_some_and(|w| Arc::ptr_eq(w, waiter))
        {
            clients.remove(&waiter.client_id);
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queues> {
        self.queues.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn clients(&self) -> MutexGuard<'_, HashMap<u64, Arc<Waiter>>> {
        self.by_client.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A client's registration; dropping it leaves every queue and passes a
/// wake-up on to the next waiter of each key, whatever the reason for
/// leaving, so a wake-up this client consumed is never lost.
#[derive(Debug)]
pub(crate) struct Registration {
    blocking: Arc<Blocking>,
    waiter: Arc<Waiter>,
    db: usize,
    keys: Vec<Bytes>,
    /// A key this client wrote when it was served (BLMOVE's destination).
    also_wake: Option<Bytes>,
}

impl Registration {
    /// The waiter to await.
    pub(crate) fn waiter(&self) -> &Waiter {
        &self.waiter
    }

    /// Records that serving this client wrote `key` (BLMOVE's destination),
    /// so list waiters on it are woken when this client leaves.
    pub(crate) fn wrote(&mut self, key: Bytes) {
        self.also_wake = Some(key);
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.blocking.remove(&self.waiter, self.db, &self.keys);
        for k in &self.keys {
            self.blocking.wake(self.db, k, self.waiter.kind);
        }
        if let Some(k) = &self.also_wake {
            self.blocking.wake(self.db, k, ValueKind::List);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(ks: &[&'static str]) -> Vec<Bytes> {
        ks.iter()
            .map(|k| Bytes::from_static(k.as_bytes()))
            .collect()
    }

    #[tokio::test]
    async fn wakes_the_first_waiter_of_the_right_kind() {
        let b = Arc::new(Blocking::default());
        let z = b.register(1, 0, &keys(&["k"]), ValueKind::ZSet);
        let l1 = b.register(2, 0, &keys(&["k", "k"]), ValueKind::List);
        let l2 = b.register(3, 0, &keys(&["k"]), ValueKind::List);
        assert_eq!(b.blocked_clients(), 3);
        b.wake(0, b"k", ValueKind::List);
        // The permit is stored: the first list waiter wakes at once.
        l1.waiter().wake.notified().await;
        drop(l1);
        // Leaving passed the wake-up on to the next list waiter.
        l2.waiter().wake.notified().await;
        drop((z, l2));
        assert_eq!(b.blocked_clients(), 0);
        assert!(b.lock().is_empty(), "queues are removed when empty");
        assert!(b.keys_in(0).is_empty());
    }

    #[test]
    fn unblock_finds_only_blocked_clients() {
        let b = Arc::new(Blocking::default());
        let r = b.register(7, 0, &keys(&["a"]), ValueKind::List);
        assert!(b.unblock(7, true));
        assert!(r.waiter().unblocked.load(Ordering::Relaxed));
        drop(r);
        assert!(!b.unblock(7, false));
    }
}
