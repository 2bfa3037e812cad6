//! State shared by every connection: the store, the configuration, the
//! client registry, the clock and the server's own counters.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

use ferrum_store::Store;

use crate::client::ClientRegistry;
use crate::clock::Clock;
use crate::cmd::CommandSpec;
use crate::config::Config;

/// Everything connections share. One instance per server, behind an `Arc`.
pub(crate) struct Shared {
    /// The keyspace.
    pub(crate) store: Store,
    /// The running configuration (`CONFIG GET/SET`).
    pub(crate) config: RwLock<Config>,
    /// Connected clients (`CLIENT LIST/KILL`).
    pub(crate) clients: ClientRegistry,
    /// The one clock.
    pub(crate) clock: Clock,
    /// Server-level counters for `INFO stats`.
    pub(crate) stats: ServerStats,
    /// Commands hold this for reading while they run; `EXEC` holds it for
    /// writing, so a transaction's commands run with nothing in between,
    /// while each command still locks only the shards it needs.
    pub(crate) tx_gate: RwLock<()>,
    /// Whether `requirepass` is set; read on every command, so cached here
    /// instead of behind the config lock.
    pub(crate) auth_required: std::sync::atomic::AtomicBool,
    /// `enable-debug-command`: whether `DEBUG` is allowed.
    pub(crate) debug_enabled: std::sync::atomic::AtomicBool,
    /// The port actually bound (for `INFO server`).
    pub(crate) port: std::sync::atomic::AtomicU16,
}

impl Shared {
    /// Whether clients must `AUTH` first.
    pub(crate) fn requires_auth(&self) -> bool {
        self.auth_required.load(Ordering::Relaxed)
    }

    /// Reads the configuration.
    pub(crate) fn config(&self) -> std::sync::RwLockReadGuard<'_, Config> {
        self.config.read().unwrap_or_else(|p| p.into_inner())
    }
}

/// Per-command call counts and times, and connection counters.
#[derive(Default)]
pub(crate) struct ServerStats {
    /// Connections accepted since start.
    pub(crate) connections_received: AtomicU64,
    /// Connections refused because of `maxclients`.
    pub(crate) rejected_connections: AtomicU64,
    /// Commands run since start.
    pub(crate) commands_processed: AtomicU64,
    /// Bytes read from clients.
    pub(crate) net_input_bytes: AtomicU64,
    /// Bytes written to clients.
    pub(crate) net_output_bytes: AtomicU64,
    /// Calls per command name.
    calls: Mutex<HashMap<&'static str, u64>>,
}

impl ServerStats {
    /// Counts one call of `spec`.
    pub(crate) fn record_call(&self, spec: &'static CommandSpec) {
        self.commands_processed.fetch_add(1, Ordering::Relaxed);
        *self
            .calls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(spec.name)
            .or_default() += 1;
    }

    /// Calls per command, sorted by name.
    pub(crate) fn calls(&self) -> Vec<(&'static str, u64)> {
        let mut v: Vec<_> = self
            .calls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(k, v)| (*k, *v))
            .collect();
        v.sort_unstable();
        v
    }

    /// Zeroes the counters (`CONFIG RESETSTAT`).
    pub(crate) fn reset(&self) {
        for c in [
            &self.connections_received,
            &self.rejected_connections,
            &self.commands_processed,
            &self.net_input_bytes,
            &self.net_output_bytes,
        ] {
            c.store(0, Ordering::Relaxed);
        }
        self.calls.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}
