//! Client eviction (`maxmemory-clients`, `CLIENT NO-EVICT`), as Redis 7.0
//! does it: when the memory of all connected clients (buffers, unwritten
//! output, queued `MULTI` commands, watched keys, subscriptions, tracking
//! prefixes; what
//! `CLIENT LIST` shows as `tot-mem`) reaches the limit, the largest
//! clients not marked `no-evict` are closed, largest first, until the sum
//! is below it. `maxmemory` still bounds the dataset only.
//!
//! Each connection publishes its memory before it waits for input and
//! while a write waits on the client, so the sum is a relaxed atomic and
//! the check after each publish costs one load and a compare; only a sum
//! over the limit takes the registry's lock and sorts its clients. Redis
//! keeps its clients in power-of-two size buckets for that; with the sort
//! happening only on eviction, exact order is as cheap here. An evicted
//! client leaves the registry (and the sum) at once, so `CLIENT LIST` and
//! the next check no longer see it, and its task closes its socket at its
//! next wait, without writing what is pending.
//!
//! # Connections' memory (design notes)
//!
//! **Connections' memory** counts in `used_memory`, as Redis counts its
//! normal clients, but not against `maxmemory`: the store keeps a second
//! counter, `outside_bytes`, that each connection adds its figure to
//! (`ClientHandle::publish_memory`: fixed state, buffer capacities, the
//! decoder's partial request, unwritten output) at each read and waiting
//! write, and takes it back when it closes (`Drop` of the connection).
//! `used_memory_dataset` is the store's own accounting alone, and the one
//! `maxmemory` bounds: eviction stays exact and deterministic, at the same
//! points as in the simulator, whatever the clients' buffers do (with
//! connections counted, a live run's calibrated `maxmemory` held 4,935
//! entries instead of 5,000, and its peaks moved with buffer growth). Redis
//! evicts keys for its clients too; here `client-output-buffer-limit` and
//! `maxmemory-clients` bound them (see "Client buffers" in docs/security.md).
//!
//! # Client eviction (design notes)
//!
//! **Client eviction** (`evict_clients.rs`, `maxmemory-clients`). The
//! same publish also adds each client's figure (now with its state:
//! queued `MULTI` bytes, kept as commands queue in `ConnState::queue`;
//! watched keys; subscriptions; BCAST tracking prefixes, set when `CLIENT
//! TRACKING on` adds some; each entry at a fixed overhead) to a sum in the
//! registry; after each publish one relaxed load compares the sum with
//! the limit. Only over it does `enforce` sort the registry's clients
//! without `no-evict` by published memory and close the largest until the
//! sum is below (Redis uses power-of-two buckets to avoid that sort on
//! its hot path; here the sort only happens when evicting). An evicted
//! client leaves the registry and the sum at once, so `CLIENT LIST` and
//! the next check do not see it, and its task ends at its next wait.
//! `CONFIG SET maxmemory`/`maxmemory-clients` and `CLIENT NO-EVICT off`
//! enforce at once, as in Redis; a subscriber whose write waits
//! republishes on its 100 ms queue check, so a growing queue counts.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ferrum_store::Store;

use crate::client::{ClientHandle, ClientRegistry, End};

/// The limit in force and the eviction count.
#[derive(Debug, Default)]
pub(crate) struct ClientEviction {
    /// `maxmemory-clients` in bytes (a percentage already applied to
    /// `maxmemory`); 0 turns eviction off.
    limit_bytes: AtomicU64,
    /// `INFO`'s `evicted_clients`.
    evicted: AtomicU64,
}

impl ClientEviction {
    /// A limit of `limit_bytes` (0: off).
    pub(crate) fn new(limit_bytes: u64) -> ClientEviction {
        ClientEviction {
            limit_bytes: AtomicU64::new(limit_bytes),
            evicted: AtomicU64::new(0),
        }
    }

    /// Makes `limit_bytes` the limit (`CONFIG SET maxmemory-clients` or
    /// `maxmemory`); the caller then calls [`ClientEviction::enforce`] so that a lowered
    /// limit evicts at once, as in Redis.
    pub(crate) fn set_limit(&self, limit_bytes: u64) {
        self.limit_bytes.store(limit_bytes, Ordering::Relaxed);
    }

    /// Clients evicted since start (or `CONFIG RESETSTAT`).
    pub(crate) fn evicted(&self) -> u64 {
        self.evicted.load(Ordering::Relaxed)
    }

    /// Zeroes the count (`CONFIG RESETSTAT`).
    pub(crate) fn reset(&self) {
        self.evicted.store(0, Ordering::Relaxed);
    }

    /// Publishes what `handle`'s connection holds now (see
    /// `ClientHandle::publish_memory`), then evicts if that put the clients
    /// over `maxmemory-clients`: possibly this very client.
    pub(crate) fn publish(&self, store: &Store, clients: &ClientRegistry, handle: &ClientHandle) {
        // A client on its way out (evicted, killed) must not count again.
        if handle.kill.ended().is_some() {
            return;
        }
        handle.publish_memory(store, clients);
        self.enforce(store, clients);
    }

    /// Evicts the largest evictable clients while the clients' memory is at
    /// or over `maxmemory-clients`.
    pub(crate) fn enforce(&self, store: &Store, clients: &ClientRegistry) {
        if self.exceeded(clients.memory()).is_none() {
            return;
        }
        let mut candidates: Vec<Arc<ClientHandle>> = clients
            .all()
            .into_iter()
            .filter(|c| !c.no_evict.load(Ordering::Relaxed))
            .collect();
        candidates.sort_by_key(|c| std::cmp::Reverse(c.published_memory()));
        for client in candidates {
            if self.exceeded(clients.memory()).is_none() {
                break;
            }
            tracing::info!(
                client = client.id,
                bytes = client.published_memory(),
                "evicting a client over maxmemory-clients"
            );
            // Raised first: from then on its task publishes nothing, so the
            // withdrawal below is not undone by a publish already under way
            // but for that one publish, which its task's end takes back.
            client.kill.raise(End::Killed);
            clients.unregister(client.id);
            client.withdraw_memory(store, clients);
            self.evicted.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The limit, if eviction is on and the clients' memory reached it.
    fn exceeded(&self, clients_bytes: usize) -> Option<usize> {
        let limit = self.limit_bytes.load(Ordering::Relaxed);
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        (limit > 0 && clients_bytes >= limit).then_some(limit)
    }
}
