//! `ACL LOG`: the most recent refusals (commands, keys, channels, failed
//! `AUTH`s), newest first, with repeats of one refusal within a minute
//! counted in one entry as Redis counts them.

use std::collections::VecDeque;
use std::sync::Mutex;

use ferrum_proto::Frame;

/// Repeats this close together (milliseconds) share an entry.
const GROUPING_MS: u64 = 60_000;

/// Why an entry was logged, as `ACL LOG`'s `reason` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reason {
    /// The command was not allowed.
    Command,
    /// A key was not allowed.
    Key,
    /// A channel was not allowed.
    Channel,
    /// `AUTH` (or `HELLO ... AUTH`) failed.
    Auth,
}

impl Reason {
    fn name(self) -> &'static str {
        match self {
            Reason::Command => "command",
            Reason::Key => "key",
            Reason::Channel => "channel",
            Reason::Auth => "auth",
        }
    }
}

/// Where the refused command came from, as `ACL LOG`'s `context` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Context {
    /// Sent by the client.
    Toplevel,
    /// Queued in, or run by, a transaction.
    Multi,
    /// Called by a script or function.
    Lua,
}

impl Context {
    fn name(self) -> &'static str {
        match self {
            Context::Toplevel => "toplevel",
            Context::Multi => "multi",
            Context::Lua => "lua",
        }
    }
}

/// One refusal to log.
#[derive(Clone, Debug)]
pub(crate) struct Event {
    /// Why.
    pub(crate) reason: Reason,
    /// Where from.
    pub(crate) context: Context,
    /// The command, key or channel refused (`AUTH` for a failed login).
    pub(crate) object: String,
    /// The user the client ran as (or tried to log in as).
    pub(crate) username: String,
    /// `CLIENT INFO` of the client.
    pub(crate) client_info: String,
}

#[derive(Debug)]
struct Entry {
    event: Event,
    count: u64,
    /// Unix milliseconds of the latest repeat.
    at_ms: u64,
}

/// The log. One per server.
#[derive(Debug, Default)]
pub(crate) struct AclLog {
    entries: Mutex<VecDeque<Entry>>,
}

impl AclLog {
    /// Records `event` at `now_ms` (Unix milliseconds), keeping at most
    /// `max_len` entries (`acllog-max-len`).
    pub(crate) fn record(&self, event: Event, now_ms: u64, max_len: usize) {
        let mut entries = self.lock();
        let same = entries.iter().position(|e| {
            let (a, b) = (&e.event, &event);
            a.reason == b.reason
                && a.context == b.context
                && a.object == b.object
                && a.username == b.username
                && now_ms.saturating_sub(e.at_ms) <= GROUPING_MS
        });
        let entry = match same.and_then(|i| entries.remove(i)) {
            Some(mut e) => {
                e.count += 1;
                e.at_ms = now_ms;
                e.event.client_info = event.client_info;
                e
            }
            None => Entry {
                event,
                count: 1,
                at_ms: now_ms,
            },
        };
        entries.push_front(entry);
        entries.truncate(max_len);
    }

    /// Forgets every entry (`ACL LOG RESET`).
    pub(crate) fn reset(&self) {
        self.lock().clear();
    }

    /// The newest `count` entries as `ACL LOG` replies them.
    pub(crate) fn frames(&self, count: usize, now_ms: u64) -> Frame {
        let entries = self.lock();
        let frames = entries.iter().take(count).map(|e| {
            let age = now_ms.saturating_sub(e.at_ms) as f64 / 1000.0;
            let text = |s: &str| Frame::bulk(s.to_owned());
            Frame::Map(vec![
                (text("count"), Frame::Integer(e.count as i64)),
                (text("reason"), text(e.event.reason.name())),
                (text("context"), text(e.event.context.name())),
                (text("object"), text(&e.event.object)),
                (text("username"), text(&e.event.username)),
                (text("age-seconds"), Frame::Double(age)),
                (text("client-info"), text(&e.event.client_info)),
            ])
        });
        Frame::Array(frames.collect())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(object: &str) -> Event {
        Event {
            reason: Reason::Command,
            context: Context::Toplevel,
            object: object.to_owned(),
            username: "u".to_owned(),
            client_info: String::new(),
        }
    }

    fn counts(log: &AclLog) -> Vec<(String, u64)> {
        log.lock()
            .iter()
            .map(|e| (e.event.object.clone(), e.count))
            .collect()
    }

    #[test]
    fn repeats_group_and_move_to_the_front() {
        let log = AclLog::default();
        log.record(event("get"), 0, 10);
        log.record(event("set"), 1, 10);
        log.record(event("get"), 2, 10);
        assert_eq!(counts(&log), [("get".to_owned(), 2), ("set".to_owned(), 1)]);
        // A minute later the same refusal is a new entry.
        log.record(event("get"), 2 + GROUPING_MS + 1, 10);
        assert_eq!(counts(&log).len(), 3);
    }

    #[test]
    fn bounded_by_max_len() {
        let log = AclLog::default();
        for i in 0..10 {
            log.record(event(&i.to_string()), 0, 5);
        }
        assert_eq!(counts(&log).len(), 5);
        assert_eq!(counts(&log)[0].0, "9");
        log.reset();
        assert!(counts(&log).is_empty());
    }
}
