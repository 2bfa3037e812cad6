//! `CLIENT PAUSE timeout [WRITE|ALL]` and `CLIENT UNPAUSE`.
//!
//! While a pause is on, a command it covers is not run: the connection
//! holds it (counted in `blocked_clients`, as Redis counts postponed
//! clients) and runs it once the pause ends, by `CLIENT UNPAUSE` or its
//! deadline. `ALL` covers every command; `WRITE` covers writes, commands
//! that may replicate (`PUBLISH`), and an `EXEC` whose queue holds a write.
//! Commands refused before running (arity, unknown command) are answered at
//! once, and commands queued inside `MULTI` are queued as usual.
//!
//! While any pause is on, keys do not expire, as in Redis: the active
//! cycle skips its ticks and reads see an expired key as missing without
//! removing it (`Shared::hold_expiry`), so the dataset does not change under a
//! pause (a failover waits on exactly that). The keys go once it ends.
//!
//! Cost when no pause is on: one relaxed atomic load per command.
//!
//! # Client pause (design notes)
//!
//! **Client pause** (`pause.rs`). `cmd::prepare` asks `Shared::pause` (one
//! relaxed atomic when no pause is on) whether a command must wait, after the
//! arity and `MULTI`-queueing checks; `cmd::execute` then returns
//! `Reply::Paused(args)` and the connection holds the command (counted in
//! `blocked_clients`) and runs it again once the pause ends, before anything
//! pipelined behind it. While any pause is on, keys do not expire (Redis's
//! `PAUSE_ACTION_EXPIRE`): the expiry loop skips its ticks, and
//! `Store::hold_expired` makes reads see an expired key as missing without
//! removing or counting it; writes still remove it first, so a key is never
//! stored twice. `Shared::hold_expiry` sets it on `CLIENT PAUSE`/`UNPAUSE` and
//! re-syncs it on every expiry tick, which notices a pause's deadline.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use tokio::sync::Notify;
use tokio::time::Instant;

/// The server's pause state. One per server, in `Shared`.
#[derive(Debug, Default)]
pub(crate) struct Pause {
    on: AtomicBool,
    /// Deadline, and whether every command is paused (`ALL`).
    state: Mutex<Option<(Instant, bool)>>,
    /// Woken when the pause is lifted or replaced.
    changed: Notify,
    /// Connections holding a paused command.
    waiting: AtomicUsize,
}

impl Pause {
    /// `CLIENT PAUSE`: a later deadline or a stricter mode than the current
    /// pause's wins, as in Redis.
    pub(crate) fn pause(&self, until: Instant, all: bool) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let (until, all) = match *state {
            Some((u, a)) => (u.max(until), a || all),
            None => (until, all),
        };
        *state = Some((until, all));
        self.on.store(true, Ordering::Relaxed);
        self.changed.notify_waiters();
    }

    /// `CLIENT UNPAUSE`.
    pub(crate) fn unpause(&self) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.on.store(false, Ordering::Relaxed);
        self.changed.notify_waiters();
    }

    /// Whether any pause (`WRITE` or `ALL`) is on.
    pub(crate) fn is_on(&self) -> bool {
        self.holds(|| true)
    }

    /// Whether a command must wait: `write` says whether it writes (or may
    /// replicate). One atomic load when no pause is on.
    pub(crate) fn holds(&self, write: impl FnOnce() -> bool) -> bool {
        if !self.on.load(Ordering::Relaxed) {
            return false;
        }
        match self.current() {
            Some((_, all)) => all || write(),
            None => false,
        }
    }

    /// The pause in force, clearing one whose deadline has passed.
    fn current(&self) -> Option<(Instant, bool)> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match *state {
            Some((until, _)) if until <= Instant::now() => {
                *state = None;
                self.on.store(false, Ordering::Relaxed);
                None
            }
            s => s,
        }
    }

    /// Waits until the pause may have ended (unpaused, replaced, or its
    /// deadline); the caller asks [`Pause::holds`] again.
    pub(crate) async fn wait(&self) {
        let notified = self.changed.notified();
        let Some((until, _)) = self.current() else {
            return;
        };
        tokio::select! {
            () = notified => {}
            () = tokio::time::sleep_until(until) => {}
        }
    }

    /// Connections holding a paused command, for `blocked_clients`.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }

    /// Counts a connection as held while the guard lives.
    pub(crate) fn hold(&self) -> Held<'_> {
        self.waiting.fetch_add(1, Ordering::Relaxed);
        Held(self)
    }
}

/// A connection holding a paused command.
pub(crate) struct Held<'a>(&'a Pause);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn write_pauses_hold_writes_only_until_unpaused_or_expired() {
        let p = Pause::default();
        assert!(!p.holds(|| true));
        p.pause(Instant::now() + Duration::from_secs(60), false);
        assert!(p.holds(|| true));
        assert!(!p.holds(|| false));
        p.unpause();
        assert!(!p.holds(|| true));
        p.pause(Instant::now() + Duration::from_millis(20), true);
        assert!(p.holds(|| false));
        p.wait().await;
        assert!(!p.holds(|| false));
    }
}
