//! Cluster mode's routing in the command path: the keys of a command (or
//! of a transaction, or of a script's `redis.call`) must be served by this
//! node, or the client is told where to go, in Redis's words. The decision
//! itself is [`crate::cluster::route`]'s; this gathers the keys and words
//! the answer.

use bytes::Bytes;
use ferrum_store::Access;

use super::error::{cluster as e, CmdError};
use super::{CommandSpec, Ctx};
use crate::cluster::route::{Query, Redirect};
use crate::cluster::Cluster;

/// Cluster mode's check before a command runs (see
/// [`crate::cluster::route`]): its keys, or for `EXEC` the keys of every
/// queued command, must be served here. An `EXEC` sent elsewhere discards
/// its transaction, as in Redis.
///
/// # Errors
/// The redirection or refusal, in Redis's words.
pub(super) fn check_command(
    ctx: &mut Ctx<'_>,
    cl: &Cluster,
    spec: &'static CommandSpec,
    args: &[Bytes],
) -> Result<(), CmdError> {
    let keys = if spec.name == "exec" {
        let shared = ctx.shared;
        let queued = ctx.conn.multi.as_deref().unwrap_or_default();
        // Queued as sent: a renamed command is found by its new name.
        queued
            .iter()
            .filter_map(|line| Some(routed_keys(shared.command(&line[0])?, line)))
            .flatten()
            .collect()
    } else {
        routed_keys(spec, args)
    };
    if keys.is_empty() {
        return Ok(());
    }
    let query = Query {
        asking: ctx.conn.asking || spec.name == "restore-asking",
        migrate: spec.name == "migrate",
        write: spec.flags & super::flag::WRITE != 0,
        pubsubshard: is_pubsubshard(spec),
    };
    let Err(redirect) = check(ctx, cl, &keys, query) else {
        return Ok(());
    };
    if spec.name == "exec" {
        ctx.conn.multi = None;
        ctx.conn.multi_failed = false;
        ctx.conn.watched.clear();
    }
    Err(CmdError::msg(redirect_text(&redirect)))
}

/// Routes `keys` for this node, looking up in database 0 whether a key
/// is here while its slot migrates.
fn check(ctx: &Ctx<'_>, cl: &Cluster, keys: &[Bytes], query: Query) -> Result<(), Redirect> {
    let (store, now) = (ctx.store(), ctx.now);
    let exists = |key: &[u8]| {
        let mut locked = store.lock_key(key);
        locked
            .shard(key)
            .lookup(0, key, now, Access::Peek)
            .is_some()
    };
    crate::cluster::route::route(cl, keys, query, exists)
}

/// A script's `redis.call` in cluster mode: its keys must be served by
/// this node, as the script's declared keys were. Returns the keys' slot
/// (`None` for a command without keys), for the script's own check that
/// its commands keep to one slot.
///
/// # Errors
/// Redis's text for a script that reached another node's keys, or ran
/// while the cluster was down.
pub(crate) fn script_route(
    ctx: &Ctx<'_>,
    cl: &Cluster,
    spec: &CommandSpec,
    argv: &[Bytes],
) -> Result<Option<u16>, &'static str> {
    let keys = routed_keys(spec, argv);
    let query = Query {
        asking: ctx.conn.asking,
        migrate: spec.name == "migrate",
        write: spec.flags & super::flag::WRITE != 0,
        pubsubshard: is_pubsubshard(spec),
    };
    match check(ctx, cl, &keys, query) {
        Ok(()) => Ok(keys.first().map(|k| crate::cluster::slot::key_slot(k))),
        Err(Redirect::Down) => Err(e::SCRIPT_DOWN),
        Err(Redirect::DownReadOnly) => Err(e::SCRIPT_DOWN_READ_ONLY),
        Err(_) => Err(e::SCRIPT_NON_LOCAL),
    }
}

/// The error reply of a redirection.
fn redirect_text(r: &Redirect) -> String {
    match r {
        Redirect::Moved { slot, addr } => e::moved(*slot, addr),
        Redirect::Ask { slot, addr } => e::ask(*slot, addr),
        Redirect::CrossSlot => e::CROSSSLOT.to_owned(),
        Redirect::TryAgain => e::TRYAGAIN.to_owned(),
        Redirect::Unbound => e::UNBOUND.to_owned(),
        Redirect::Down => e::DOWN.to_owned(),
        Redirect::DownReadOnly => e::DOWN_READ_ONLY.to_owned(),
    }
}

/// Whether `spec` is a sharded Pub/Sub command, which Redis routes by
/// channel and lets through a down cluster on its own setting.
fn is_pubsubshard(spec: &CommandSpec) -> bool {
    matches!(spec.name, "ssubscribe" | "sunsubscribe" | "spublish")
}

/// The arguments that decide where a command runs: its keys, and the
/// channels of the sharded Pub/Sub commands, which Redis routes as keys.
fn routed_keys(spec: &CommandSpec, args: &[Bytes]) -> Vec<Bytes> {
    match spec.name {
        "ssubscribe" | "sunsubscribe" => args[1..].to_vec(),
        "spublish" => args[1..2].to_vec(),
        _ => super::getkeys::command_keys(spec, args)
            .unwrap_or_default()
            .into_iter()
            .map(|(k, _)| k)
            .collect(),
    }
}
