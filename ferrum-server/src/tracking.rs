//! Client-side caching (`CLIENT TRACKING`), as Redis 7.0 does it.
//!
//! **Default mode.** A tracking client's read-only commands remember their
//! keys in a table `key -> client ids`. A write to a remembered key sends
//! each of those clients one invalidation and forgets the entry: Redis's
//! "the server remembers at most one invalidation per key and client".
//! `OPTIN` remembers only after `CLIENT CACHING yes`, `OPTOUT` unless after
//! `CLIENT CACHING no` (both for the next command only).
//!
//! **BCAST mode.** Nothing is remembered: a write to a key under one of the
//! client's prefixes (the empty prefix matches every key) is queued for the
//! prefix, and at the end of the command that wrote it (`EXEC` counts as one)
//! every client of the prefix gets one message with all its keys, as Redis
//! sends one per prefix per event-loop turn.
//!
//! **Delivery.** Through the target connection's Pub/Sub queue
//! (`ClientHandle::inbox`): the invalidating command never waits for it.
//! The receiving connection writes the message as its protocol allows
//! (`crate::pubsub::Message::into_frame`): an `invalidate` push in RESP3, a
//! `message` on `__redis__:invalidate` in RESP2 subscribed mode (the
//! `REDIRECT` use), nothing otherwise. `NOLOOP` leaves out the client's own
//! writes. A redirect to a client that has gone sends the tracking client
//! `tracking-redir-broken` (RESP3) instead.
//!
//! **Cost when unused.** Every write command reads one relaxed atomic (the
//! number of tracking clients) and does nothing more while it is 0.
//!
//! **Bounded.** Past `tracking-table-max-keys` remembered keys, keys are
//! dropped from the table (in hash order, Redis picks at random) and their
//! clients told, as if they had changed.
//!
//! Not done: invalidation of evicted keys (the store does not name its
//! victims).
//!
//! # Client-side caching (design notes)
//!
//! **Client-side caching** (`tracking.rs`). `Shared::tracking` holds the
//! key table (`key -> client ids`), BCAST prefixes and each tracking client's
//! mode behind one mutex, and a count of tracking clients that `cmd::run`
//! reads (one relaxed atomic) before doing anything. Reads of a tracking
//! client are remembered, writes of any client invalidate (by the command's
//! key arguments, on success: a write that changed nothing still
//! invalidates, which costs a client a re-fetch, never a stale read), BCAST
//! keys are batched until the end of the top-level command. Messages travel
//! through the target's Pub/Sub queue: every connection now creates its queue
//! when it opens (`ClientHandle::inbox`), so a `REDIRECT` can reach any
//! client, and the receiving connection encodes them for its own protocol.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use bytes::Bytes;

use crate::config::OutputBufferLimit;
use crate::error::{
    prefix_overlap, TRACKING_BCAST_SWITCH, TRACKING_OPTIN_AND_OPTOUT, TRACKING_OPTIN_OPTOUT_BCAST,
    TRACKING_OPT_SWITCH, TRACKING_PREFIX_NEEDS_BCAST,
};
use crate::pubsub::{Subscriber, TrackingMsg};

/// How tracking reaches the clients it sends invalidations to: their
/// message queues, and the limit those are held to. `Shared` implements
/// it from its client registry and configuration, so tracking does not
/// depend on `Shared`.
pub(crate) trait Recipients {
    /// The message queue of client `id`, if it is connected.
    fn inbox(&self, id: u64) -> Option<std::sync::Arc<Subscriber>>;
    /// The `pubsub` class of `client-output-buffer-limit`, now.
    fn pubsub_limit(&self) -> OutputBufferLimit;
}

/// One client's tracking settings.
#[derive(Clone, Debug, Default)]
pub(crate) struct Mode {
    /// Client id invalidations go to; 0 for the client itself.
    pub(crate) redirect: u64,
    pub(crate) bcast: bool,
    pub(crate) optin: bool,
    pub(crate) optout: bool,
    pub(crate) noloop: bool,
    /// `CLIENT CACHING yes` (OPTIN) or `no` (OPTOUT) for the next command.
    pub(crate) caching: bool,
    /// The redirect target was found gone.
    pub(crate) broken: bool,
    /// BCAST prefixes, sorted.
    pub(crate) prefixes: Vec<Bytes>,
}

#[derive(Debug, Default)]
struct Prefix {
    clients: HashSet<u64>,
    /// Keys written since the last flush, with the writer's id.
    pending: Vec<(Bytes, u64)>,
}

#[derive(Debug, Default)]
struct Inner {
    keys: HashMap<Bytes, HashSet<u64>>,
    prefixes: BTreeMap<Bytes, Prefix>,
    clients: HashMap<u64, Mode>,
    /// Whether some prefix has keys waiting for [`Tracking::flush`].
    pending: bool,
}

/// The server's tracking state. One per server, in `Shared`.
#[derive(Debug, Default)]
pub(crate) struct Tracking {
    /// Clients with tracking on: 0 means no work anywhere.
    clients: AtomicUsize,
    /// `tracking-table-max-keys`; 0: no limit.
    max_keys: AtomicU64,
    inner: Mutex<Inner>,
}

/// Why `CLIENT TRACKING on` was refused; the text is Redis's.
pub(crate) type Refusal = String;

impl Tracking {
    /// No client tracking yet; `max_keys` is `tracking-table-max-keys`.
    pub(crate) fn new(max_keys: u64) -> Tracking {
        Tracking {
            max_keys: AtomicU64::new(max_keys),
            ..Tracking::default()
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether any client has tracking on.
    pub(crate) fn active(&self) -> bool {
        self.clients.load(Ordering::Relaxed) != 0
    }

    /// Client `id`'s settings, if tracking is on for it.
    pub(crate) fn mode(&self, id: u64) -> Option<Mode> {
        if !self.active() {
            return None;
        }
        self.lock().clients.get(&id).cloned()
    }

    /// `CLIENT TRACKING on ...`, after the options parsed: checks them
    /// against each other and the client's current mode, as Redis does.
    pub(crate) fn enable(&self, id: u64, new: Mode) -> Result<(), Refusal> {
        let mut inner = self.lock();
        if !new.bcast && !new.prefixes.is_empty() {
            return Err(TRACKING_PREFIX_NEEDS_BCAST.to_owned());
        }
        let old = inner.clients.get(&id).cloned();
        if let Some(old) = &old {
            if old.bcast != new.bcast {
                return Err(TRACKING_BCAST_SWITCH.to_owned());
            }
        }
        if new.bcast && (new.optin || new.optout) {
            return Err(TRACKING_OPTIN_OPTOUT_BCAST.to_owned());
        }
        if new.optin && new.optout {
            return Err(TRACKING_OPTIN_AND_OPTOUT.to_owned());
        }
        if let Some(old) = &old {
            if (new.optin && old.optout) || (new.optout && old.optin) {
                return Err(TRACKING_OPT_SWITCH.to_owned());
            }
        }
        let existing: &[Bytes] = old.as_ref().map_or(&[], |o| &o.prefixes);
        if new.bcast {
            for (i, p) in new.prefixes.iter().enumerate() {
                if let Some(e) = existing.iter().find(|e| overlaps(e, p)) {
                    return Err(prefix_overlap(p, e, false));
                }
                if let Some(q) = new.prefixes[i + 1..].iter().find(|q| overlaps(p, q)) {
                    return Err(prefix_overlap(p, q, true));
                }
            }
        }
        let mut mode = new;
        if mode.bcast {
            let mut prefixes: Vec<Bytes> = existing.to_vec();
            if mode.prefixes.is_empty() {
                mode.prefixes.push(Bytes::new());
            }
            for p in std::mem::take(&mut mode.prefixes) {
                if !prefixes.contains(&p) {
                    prefixes.push(p);
                }
            }
            prefixes.sort();
            for p in &prefixes {
                inner
                    .prefixes
                    .entry(p.clone())
                    .or_default()
                    .clients
                    .insert(id);
            }
            mode.prefixes = prefixes;
        }
        if inner.clients.insert(id, mode).is_none() {
            self.clients.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// `CLIENT TRACKING off`, `RESET`, or the connection closing.
    pub(crate) fn disable(&self, id: u64) {
        if !self.active() {
            return;
        }
        let mut inner = self.lock();
        let Some(mode) = inner.clients.remove(&id) else {
            return;
        };
        self.clients.fetch_sub(1, Ordering::Relaxed);
        for p in &mode.prefixes {
            if let Some(state) = inner.prefixes.get_mut(p) {
                state.clients.remove(&id);
                if state.clients.is_empty() {
                    inner.prefixes.remove(p);
                }
            }
        }
        // Entries of the key table naming `id` are skipped when sent, as in
        // Redis; drop them now when nobody tracks anything any more.
        if inner.clients.is_empty() {
            inner.keys = HashMap::new();
        }
    }

    /// `CLIENT CACHING yes|no`: for the next command only.
    pub(crate) fn set_caching(&self, id: u64) {
        if let Some(m) = self.lock().clients.get_mut(&id) {
            m.caching = true;
        }
    }

    /// After each command of a tracking client (but `CLIENT CACHING`
    /// itself): the caching flag lasts one command.
    pub(crate) fn command_done(&self, id: u64) {
        if let Some(m) = self.lock().clients.get_mut(&id) {
            m.caching = false;
        }
    }

    /// `(keys, items, prefixes, clients)` for `INFO`: keys remembered,
    /// (key, client) pairs, BCAST prefixes, clients with tracking on.
    pub(crate) fn counts(&self) -> (usize, usize, usize, usize) {
        let inner = self.lock();
        let items = inner.keys.values().map(HashSet::len).sum();
        (
            inner.keys.len(),
            items,
            inner.prefixes.len(),
            inner.clients.len(),
        )
    }

    /// Installs `tracking-table-max-keys` and applies it.
    pub(crate) fn set_max_keys(&self, shared: &impl Recipients, max: u64) {
        self.max_keys.store(max, Ordering::Relaxed);
        self.enforce_max_keys(shared);
    }

    /// Drops keys from the table while it holds more than the limit,
    /// telling their clients.
    fn enforce_max_keys(&self, shared: &impl Recipients) {
        let max = self.max_keys.load(Ordering::Relaxed);
        if max == 0 {
            return;
        }
        let mut sends = Vec::new();
        {
            let mut inner = self.lock();
            let over = (inner.keys.len() as u64).saturating_sub(max) as usize;
            if over == 0 {
                return;
            }
            let victims: Vec<Bytes> = inner.keys.keys().take(over).cloned().collect();
            for key in victims {
                let Some(ids) = inner.keys.remove(&key) else {
                    continue;
                };
                for id in ids {
                    if let Some(mode) = inner.clients.get(&id).filter(|m| !m.bcast) {
                        sends.push((id, mode.redirect, vec![key.clone()]));
                    }
                }
            }
        }
        self.send_all(shared, sends);
    }

    /// Remembers that client `id` read `keys` (a read-only command).
    pub(crate) fn remember<'a>(
        &self,
        shared: &impl Recipients,
        id: u64,
        keys: impl Iterator<Item = &'a Bytes>,
    ) {
        self.remember_keys(id, keys);
        self.enforce_max_keys(shared);
    }

    fn remember_keys<'a>(&self, id: u64, keys: impl Iterator<Item = &'a Bytes>) {
        let mut inner = self.lock();
        let Some(mode) = inner.clients.get(&id) else {
            return;
        };
        if mode.bcast || (mode.optin && !mode.caching) || (mode.optout && mode.caching) {
            return;
        }
        for key in keys {
            match inner.keys.get_mut(key) {
                Some(ids) => {
                    ids.insert(id);
                }
                None => {
                    inner
                        .keys
                        .insert(Bytes::copy_from_slice(key), HashSet::from([id]));
                }
            }
        }
    }

    /// `key` changed, by client `writer` (0 for the server itself: expiry).
    /// Default-mode clients are told now; BCAST ones at [`Tracking::flush`].
    pub(crate) fn invalidate(&self, shared: &impl Recipients, key: &[u8], writer: u64) {
        let mut sends = Vec::new();
        {
            let mut inner = self.lock();
            let inner = &mut *inner;
            for (prefix, state) in inner.prefixes.iter_mut() {
                if key.starts_with(prefix) {
                    state.pending.push((Bytes::copy_from_slice(key), writer));
                    inner.pending = true;
                }
            }
            if let Some(ids) = inner.keys.remove(key) {
                for id in ids {
                    let Some(mode) = inner.clients.get(&id) else {
                        continue;
                    };
                    if mode.bcast || (mode.noloop && id == writer) {
                        continue;
                    }
                    sends.push((id, mode.redirect, vec![Bytes::copy_from_slice(key)]));
                }
            }
        }
        self.send_all(shared, sends);
    }

    /// Sends what BCAST clients have waiting: one message per prefix and
    /// client. Called after each top-level command.
    pub(crate) fn flush(&self, shared: &impl Recipients) {
        if !self.active() {
            return;
        }
        let mut sends = Vec::new();
        {
            let mut inner = self.lock();
            if !inner.pending {
                return;
            }
            inner.pending = false;
            let inner = &mut *inner;
            for state in inner.prefixes.values_mut() {
                if state.pending.is_empty() {
                    continue;
                }
                let pending = std::mem::take(&mut state.pending);
                for &id in &state.clients {
                    let Some(mode) = inner.clients.get(&id) else {
                        continue;
                    };
                    let keys: Vec<Bytes> = pending
                        .iter()
                        .filter(|(_, w)| !(mode.noloop && *w == id))
                        .map(|(k, _)| k.clone())
                        .collect();
                    if !keys.is_empty() {
                        sends.push((id, mode.redirect, keys));
                    }
                }
            }
        }
        self.send_all(shared, sends);
    }

    /// `FLUSHALL` / `FLUSHDB`: every tracking client is told that every key
    /// changed, and the key table is emptied.
    pub(crate) fn invalidate_all(&self, shared: &impl Recipients) {
        if !self.active() {
            return;
        }
        let sends: Vec<(u64, u64)> = {
            let mut inner = self.lock();
            inner.keys = HashMap::new();
            inner
                .clients
                .iter()
                .map(|(id, m)| (*id, m.redirect))
                .collect()
        };
        for (id, redirect) in sends {
            self.send(shared, id, redirect, TrackingMsg::Invalidate(None));
        }
    }

    fn send_all(&self, shared: &impl Recipients, sends: Vec<(u64, u64, Vec<Bytes>)>) {
        for (id, redirect, keys) in sends {
            self.send(shared, id, redirect, TrackingMsg::Invalidate(Some(keys)));
        }
    }

    /// Queues `msg` for client `id`, or for the client it redirects to.
    fn send(&self, shared: &impl Recipients, id: u64, redirect: u64, msg: TrackingMsg) {
        let limit = shared.pubsub_limit();
        let target = if redirect == 0 { id } else { redirect };
        if let Some(inbox) = shared.inbox(target) {
            inbox.send_tracking(msg, limit);
            return;
        }
        if redirect != 0 {
            if let Some(m) = self.lock().clients.get_mut(&id) {
                m.broken = true;
            }
            if let Some(own) = shared.inbox(id) {
                own.send_tracking(TrackingMsg::RedirBroken(redirect), limit);
            }
        }
    }
}

/// Whether one prefix is a prefix of the other (Redis refuses both).
fn overlaps(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().min(b.len());
    a[..n] == b[..n]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_checked_as_redis_does() {
        let t = Tracking::default();
        let prefix = |p: &'static str| Bytes::from_static(p.as_bytes());
        let e = t
            .enable(
                1,
                Mode {
                    prefixes: vec![prefix("a")],
                    ..Mode::default()
                },
            )
            .unwrap_err();
        assert!(e.contains("PREFIX option requires BCAST"), "{e}");
        let e = t
            .enable(
                1,
                Mode {
                    bcast: true,
                    optin: true,
                    ..Mode::default()
                },
            )
            .unwrap_err();
        assert!(
            e.contains("OPTIN and OPTOUT are not compatible with BCAST"),
            "{e}"
        );
        let e = t
            .enable(
                1,
                Mode {
                    bcast: true,
                    prefixes: vec![prefix("foo"), prefix("fo")],
                    ..Mode::default()
                },
            )
            .unwrap_err();
        assert!(e.contains("overlaps with another provided prefix"), "{e}");
        t.enable(
            1,
            Mode {
                bcast: true,
                prefixes: vec![prefix("a:")],
                ..Mode::default()
            },
        )
        .unwrap();
        let e = t
            .enable(
                1,
                Mode {
                    bcast: true,
                    prefixes: vec![prefix("a:b")],
                    ..Mode::default()
                },
            )
            .unwrap_err();
        assert!(e.contains("overlaps with an existing prefix 'a:'"), "{e}");
        let e = t.enable(1, Mode::default()).unwrap_err();
        assert!(e.contains("switch BCAST mode"), "{e}");
        assert!(t.active());
        t.disable(1);
        assert!(!t.active());
        assert!(t.lock().prefixes.is_empty());
    }
}
