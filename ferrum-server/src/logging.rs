//! `loglevel`, as Redis reads it, on top of `tracing`: the binary installs
//! a way to change its subscriber's filter ([`install`]), and `CONFIG SET
//! loglevel` goes through `set_level`. `RUST_LOG`, when set, wins over
//! both, for debugging the server itself.

use std::sync::OnceLock;

type Setter = Box<dyn Fn(&str) + Send + Sync>;

static SETTER: OnceLock<Setter> = OnceLock::new();

/// The `tracing` filter for a Redis `loglevel`: `verbose` shows what
/// Redis logs at that level (refused RESTORE payloads, closed
/// connections) as `debug` events; `debug` shows everything.
pub fn filter_for(loglevel: &str) -> &'static str {
    match loglevel {
        "debug" => "trace",
        "verbose" => "debug",
        "warning" => "warn",
        _ => "info",
    }
}

/// Installs how `set_level` (`CONFIG SET loglevel`) changes the subscriber's filter (once; a
/// library user that installs nothing keeps its own subscriber as is).
pub fn install(set_filter: impl Fn(&str) + Send + Sync + 'static) {
    let _ = SETTER.set(Box::new(set_filter));
}

/// Applies a `loglevel` set at run time.
pub(crate) fn set_level(loglevel: &str) {
    if let Some(set) = SETTER.get() {
        set(filter_for(loglevel));
    }
}
