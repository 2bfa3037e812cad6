//! The transaction gate, as the dispatcher enters it, and `-BUSY`.
//!
//! Every command holds the gate's read side while it runs; `EXEC` and
//! scripts hold its write side. The fast path is one `try_read`, the cost
//! of the `read` it replaces. Only when that fails does a command look at
//! [`Running`](crate::script::Running): with no script running it polls every few microseconds (a
//! transaction ends in microseconds); while a script runs it polls every
//! millisecond, and once the script has run past `busy-reply-threshold`
//! it replies `-BUSY`, except for the few commands Redis lets through (`SCRIPT KILL`, `FUNCTION
//! KILL`, `FUNCTION STATS`, `SHUTDOWN`), which run without the gate.

use std::sync::{RwLockReadGuard, RwLockWriteGuard, TryLockError};
use std::time::Duration;

use bytes::Bytes;

use crate::command::{flag, CommandSpec};
use crate::error::CmdError;
use crate::error::{BUSY_FUNCTION, BUSY_SCRIPT};
use crate::parse;
use crate::script::Kind;
use crate::shared::Shared;

/// How often a command waiting behind a running script looks again.
const POLL: Duration = Duration::from_millis(1);
/// How often it looks again behind a transaction, which holds the gate
/// for microseconds.
const TX_POLL: Duration = Duration::from_micros(20);

/// The hold on the gate a running command keeps.
pub(crate) enum GateGuard<'a> {
    /// An ordinary command.
    Read(#[allow(dead_code)] RwLockReadGuard<'a, ()>),
    /// A script: nothing else runs.
    Write(#[allow(dead_code)] RwLockWriteGuard<'a, ()>),
    /// Allowed while a script is busy; runs beside it.
    Bypass,
}

/// Enters the gate for `spec`: the write side for scripts
/// (`flag::EXCLUSIVE`), `DEBUG SLEEP` and, in cluster mode, `MIGRATE`;
/// else the read side.
///
/// In cluster mode `MIGRATE` keeps every client waiting while it moves
/// keys, as Redis's one thread does: a command routed here because its key
/// was here (`cmd::route::recheck`) must not see the key leave before it
/// runs. A standalone server's `MIGRATE` runs beside other commands, so
/// that it can migrate to the server itself.
///
/// # Errors
/// `-BUSY` when a script has run past `busy-reply-threshold`.
pub(crate) fn enter_gate<'a>(
    shared: &'a Shared,
    spec: &CommandSpec,
    args: &[Bytes],
) -> Result<GateGuard<'a>, CmdError> {
    let exclusive = spec.has(flag::EXCLUSIVE)
        || is_debug_sleep(spec, args)
        || (spec.name == "migrate" && shared.cluster.is_some())
        || (shared.repl.active() && replicated(spec));
    let attempt = if exclusive {
        try_write(shared)
    } else {
        try_read(shared)
    };
    let guard = match attempt {
        Some(guard) => guard,
        None => crate::script::off_worker(|| wait(shared, spec, args, exclusive))?,
    };
    // A replica attached while this write waited: it runs alone after all.
    if !exclusive && shared.repl.active() && replicated(spec) {
        drop(guard);
        return enter_gate(shared, spec, args);
    }
    Ok(guard)
}

/// Whether `spec` may send something down the replication stream, and so
/// must run alone while a replica is attached (the stream's order is the
/// order of the writes). Containers count: some of their subcommands
/// write (`FUNCTION LOAD`).
fn replicated(spec: &CommandSpec) -> bool {
    spec.has(flag::WRITE) || spec.has(flag::CONTAINER) || super::may_replicate(spec)
}

/// `DEBUG SLEEP`, which keeps every client waiting, as Redis's one thread
/// does: Redis's suite sleeps a target server this way to see `MIGRATE`
/// time out, and a client pipeline be read in one go.
fn is_debug_sleep(spec: &CommandSpec, args: &[Bytes]) -> bool {
    spec.name == "debug" && args.get(1).is_some_and(|a| parse::is(a, "sleep"))
}

/// The slow path of [`enter_gate`]: someone holds the write side. It
/// polls rather than blocks: a script takes the gate a moment before it
/// is marked running, and a command that blocked in that moment would
/// wait for the whole script, never answering `-BUSY`.
fn wait<'a>(
    shared: &'a Shared,
    spec: &CommandSpec,
    args: &[Bytes],
    exclusive: bool,
) -> Result<GateGuard<'a>, CmdError> {
    loop {
        match shared.scripting.running.current() {
            // A transaction (or a script about to start) holds the gate.
            None => std::thread::sleep(TX_POLL),
            Some(_) if allowed_when_busy(spec, args) => return Ok(GateGuard::Bypass),
            Some((kind, ms)) if ms >= shared.config().busy_threshold_ms() => {
                return Err(CmdError::msg(match kind {
                    Kind::Eval => BUSY_SCRIPT,
                    Kind::Function => BUSY_FUNCTION,
                }));
            }
            Some(_) => std::thread::sleep(POLL),
        }
        let attempt = if exclusive {
            try_write(shared)
        } else {
            try_read(shared)
        };
        if let Some(guard) = attempt {
            return Ok(guard);
        }
    }
}

/// Redis's `-BUSY` text if a script has run past `busy-reply-threshold`.
/// Commands queued in `MULTI` (and its `EXEC`) meet it without entering
/// the gate.
pub(crate) fn busy_text(shared: &Shared) -> Option<&'static str> {
    let (kind, ms) = shared.scripting.running.current()?;
    (ms >= shared.config().busy_threshold_ms()).then_some(match kind {
        Kind::Eval => BUSY_SCRIPT,
        Kind::Function => BUSY_FUNCTION,
    })
}

fn try_read(shared: &Shared) -> Option<GateGuard<'_>> {
    shared.try_gate().map(GateGuard::Read)
}

fn try_write(shared: &Shared) -> Option<GateGuard<'_>> {
    match shared.tx_gate.try_write() {
        Ok(g) => Some(GateGuard::Write(g)),
        Err(TryLockError::Poisoned(p)) => Some(GateGuard::Write(p.into_inner())),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// The commands Redis flags `allow-busy` that FerrumKV serves.
fn allowed_when_busy(spec: &CommandSpec, args: &[Bytes]) -> bool {
    let sub = |names: &[&str]| {
        args.get(1)
            .is_some_and(|a| names.iter().any(|n| parse::is(a, n)))
    };
    match spec.name {
        "script" => sub(&["kill"]),
        "function" => sub(&["kill", "stats"]),
        "shutdown" => true,
        _ => false,
    }
}
