//! Eviction policies for FerrumKV, behind one narrow trait.
//!
//! A policy decides *which* resident entry leaves when the cache is over its
//! budget. It never sees keys, values, sockets or clocks: the store hands it
//! opaque [`EntryId`] handles, a 64-bit key hash (at insert, hit and miss,
//! and on request at eviction), a byte cost and the current time as a plain
//! [`Millis`] value. That keeps every policy deterministic for
//! a given seed and lets the same code run inside the server and inside the
//! hit-ratio simulator, where time is virtual.
//!
//! Policies: [`Lru`] (exact), [`Lfu`] (Redis's counter, exact aged
//! choice), [`Random`], [`Ttl`] (nearest deadline) and [`Ahe`] (ours:
//! adaptive hybrid of recency and frequency, see [`ahe`]). [`PolicyKind`] parses
//! Redis's `maxmemory-policy` names and builds an [`AnyPolicy`], which
//! dispatches with a `match`.
//!
//! ```
//! use ferrum_evict::{EntryId, EvictionPolicy, Millis, PolicyConfig, PolicyKind};
//!
//! let kind: PolicyKind = "allkeys-lfu".parse()?;
//! let mut policy = kind.build(&PolicyConfig::default()).expect("not noeviction");
//! for i in 0..3 {
//!     policy.on_insert(EntryId(i), u64::from(i), 64, Millis(u64::from(i)));
//! }
//! policy.on_hit(EntryId(0), 0, Millis(3));
//! policy.on_hit(EntryId(1), 1, Millis(4));
//! // Entry 2 was never read again: it has the lowest counter.
//! // At eviction the store answers for each key's hash (here, the id).
//! let key_hash = |id: EntryId| u64::from(id.0);
//! assert_eq!(policy.evict(Millis(5), &key_hash), Some(EntryId(2)));
//! assert_eq!(policy.len(), 2);
//! assert_eq!(policy.lfu_counter(EntryId(0), Millis(5)), Some(6));
//! # Ok::<(), ferrum_evict::ParsePolicyError>(())
//! ```
//!
//! With the `testing` feature, `testing` exports the conformance suite
//! every policy passes, for policies written outside this crate.

pub mod ahe;
mod controller;
mod heap;
mod kind;
mod lfu;
mod lru;
mod random;
mod table;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod time;
mod ttl;

pub use ahe::{Ahe, AheConfig};
pub use controller::ControllerState;
pub use kind::{AnyPolicy, ParsePolicyError, PolicyConfig, PolicyKind};
pub use lfu::{Lfu, LfuConfig, LFU_INIT_VAL};
pub use lru::{Lru, LruConfig};
pub use random::{Random, RandomConfig};
pub use time::Millis;
pub use ttl::{Ttl, TtlConfig};

/// Slot handle issued by the store.
///
/// It is stable while the entry is resident and may be reused by the store
/// after the entry was removed or evicted. Handles are small dense integers,
/// so policies can keep per-entry state in a `Vec` indexed by them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EntryId(pub u32);

impl EntryId {
    /// The handle as a `usize` index into per-entry tables.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The contract between a store and an eviction policy.
///
/// The caller (the store or the simulator) owns the entries; the policy only
/// orders handles. Every method takes the current time as an argument so that
/// policies never read a clock.
pub trait EvictionPolicy: Send {
    /// Stable lowercase name, used for metric labels and in bench output
    /// (`"lru"`, `"lfu"`, `"ahe"`).
    fn name(&self) -> &'static str;

    /// A new entry became resident.
    ///
    /// The caller guarantees that `id` is not currently tracked. The
    /// implementation MUST track it until [`evict`](Self::evict) returns it or
    /// [`on_remove`](Self::on_remove) is called for it.
    fn on_insert(&mut self, id: EntryId, key_hash: u64, cost: u32, now: Millis);

    /// A lookup found the tracked entry `id`, whose key hashes to
    /// `key_hash` (the value its [`on_insert`](Self::on_insert) was given).
    ///
    /// The caller guarantees that `id` is tracked.
    fn on_hit(&mut self, id: EntryId, key_hash: u64, now: Millis);

    /// A lookup for `key_hash` found nothing. Adaptive policies consult their
    /// ghost history here; the default ignores it.
    fn on_miss(&mut self, _key_hash: u64, _now: Millis) {}

    /// The expiry deadline of tracked entry `id` changed (set, changed or
    /// removed with `None`). Only TTL-ordered policies care; the default
    /// ignores it.
    fn on_expiry_change(&mut self, _id: EntryId, _expires_at: Option<Millis>) {}

    /// The entry left for a reason other than eviction (DEL, overwrite,
    /// expiry, FLUSHDB).
    ///
    /// The caller guarantees that `id` is tracked. The implementation MUST
    /// stop tracking it.
    fn on_remove(&mut self, id: EntryId);

    /// Chooses a victim and stops tracking it.
    ///
    /// `key_hash` gives the key hash of a tracked entry, the value its
    /// [`on_insert`](Self::on_insert) was given: the store has the key's
    /// bytes, so a policy that weighs candidates by their keys (AHE's
    /// frequency duel and ghost history) asks for the hashes of the few
    /// entries it considers instead of keeping one per entry. The
    /// implementation MUST call it only with tracked ids (before it stops
    /// tracking the victim); the caller MUST answer with the hash it passed
    /// to `on_insert`.
    ///
    /// The implementation MUST return `None` only when nothing is tracked, and
    /// MUST NOT return an id that is not tracked.
    fn evict(&mut self, now: Millis, key_hash: &dyn Fn(EntryId) -> u64) -> Option<EntryId>;

    /// How many entries are tracked.
    fn len(&self) -> usize;

    /// Whether nothing is tracked.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Heap bytes the policy's own structures cost, for `used_memory`.
    fn heap_bytes(&self) -> usize;

    /// The logarithmic access counter of tracked entry `id` after decay at
    /// `now`, as Redis's `OBJECT FREQ` reports it. `None` when `id` is not
    /// tracked or the policy keeps no such counter (everything but LFU).
    fn lfu_counter(&self, _id: EntryId, _now: Millis) -> Option<u8> {
        None
    }

    /// Sets the logarithmic access counter of `id` to `counter`, as of
    /// `now` (`RESTORE ... FREQ`, Redis's `objectSetLRUOrLFU`). The caller
    /// guarantees nothing: an untracked `id` MUST be ignored. A policy that
    /// keeps no counter ignores every call (the default); one that does MUST
    /// then report `counter` from [`EvictionPolicy::lfu_counter`] at `now`.
    fn set_lfu_counter(&mut self, _id: EntryId, _counter: u8, _now: Millis) {}

    /// What this policy knows of `id` in one byte, for a snapshot to carry
    /// across a restart (RDB's per-key `FREQ` byte): by default the LFU
    /// counter at `now`. `None` when `id` is not tracked or there is
    /// nothing to carry.
    fn warm_hint(&self, id: EntryId, now: Millis) -> Option<u8> {
        self.lfu_counter(id, now)
    }

    /// Takes back a [`EvictionPolicy::warm_hint`] for `id`, just inserted
    /// by a load, as of `now`; by default as the LFU counter. An untracked
    /// `id` MUST be ignored, and any byte accepted (a file may come from
    /// another policy).
    fn restore_warm_hint(&mut self, id: EntryId, hint: u8, now: Millis) {
        self.set_lfu_counter(id, hint, now);
    }

    /// What the policy learnt beyond its entries' hints (an adaptive
    /// policy's controller and ghost history), as bytes a snapshot carries
    /// across a restart. Taken under the shard's lock while commands wait,
    /// so it MUST cost about a copy of the policy's own tables, never a
    /// visit to every entry's key. `None` for policies whose state is all
    /// in their entries (the default).
    fn export_state(&self) -> Option<Vec<u8>> {
        None
    }

    /// Takes back [`EvictionPolicy::export_state`]'s bytes once a load has
    /// inserted its entries (and restored their hints). Bytes from another
    /// policy or version MUST be ignored; never panic. By default ignored.
    fn import_state(&mut self, _state: &[u8]) {}

    /// The tracked entries in the order the policy would have them back
    /// after a restart, for a policy whose order is more than its entries'
    /// hints say (LRU: least recent first; AHE: each queue, head first),
    /// each with its place: a number that never decreases along the order,
    /// its index unless the spacing matters too (LFU: accesses since the
    /// oldest). `None` by default. A pass over the policy's own tables,
    /// never over the entries' keys: it is taken under the shard's lock as
    /// a snapshot starts.
    fn export_order(&self) -> Option<Vec<(EntryId, u32)>> {
        None
    }

    /// Puts tracked entries back in `order` (as a load inserted them, in
    /// [`EvictionPolicy::export_order`]'s order and with its places),
    /// after their hints were restored. Entries `order` does not name
    /// keep their place after those it does; ids not tracked, or named
    /// twice, MUST be ignored, and any place accepted.
    fn import_order(&mut self, _order: &[(EntryId, u32)]) {}

    /// An adaptive policy's controller state, for `INFO` and metrics;
    /// `None` for policies without a controller.
    fn controller_state(&self) -> Option<ControllerState> {
        None
    }
}

/// What [`EvictionPolicy::import_order`] takes of `order`: the entries
/// `tracked` accepts, each at its first mention, and a table over the
/// policy's `slots` marking them. `tracked` must reject ids of `slots` or
/// more.
pub(crate) fn first_tracked(
    order: &[(EntryId, u32)],
    slots: usize,
    tracked: impl Fn(EntryId) -> bool,
) -> (Vec<(EntryId, u32)>, Vec<bool>) {
    let mut placed = vec![false; slots];
    let named = (order.iter().copied())
        .filter(|&(id, _)| tracked(id) && !std::mem::replace(&mut placed[id.index()], true))
        .collect();
    (named, placed)
}

/// An order placed by index, for [`EvictionPolicy::export_order`].
pub(crate) fn indexed(order: impl Iterator<Item = EntryId>) -> Vec<(EntryId, u32)> {
    order.zip(0..).collect()
}
