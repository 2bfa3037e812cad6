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
    ctx.routed_at = Some(cl.generation());
    let keys = if spec.name == "exec" {
        queued_keys(ctx.shared, ctx.conn.multi.as_deref().unwrap_or_default())
    } else {
        routed_keys(spec, args)
    };
    let Err(redirect) = check(ctx, cl, &keys, query(ctx, spec)) else {
        return Ok(());
    };
    if spec.name == "exec" {
        ctx.conn.multi = None;
        ctx.conn.multi_failed = false;
        ctx.conn.watched.clear();
    }
    Err(CmdError::msg(redirect_text(&redirect)))
}

/// Routes a command again once it holds the transaction gate, if keys may
/// have changed hands since [`check_command`] routed it. Between the two a
/// `MIGRATE` may have deleted a key the check found here, and the command
/// would then miss it (a `GET` answering nil, where Redis's one thread
/// answers or redirects). In cluster mode `MIGRATE` holds the gate's write
/// side, so once inside, the answer holds until the command is done.
///
/// # Errors
/// The redirection or refusal, in Redis's words.
pub(super) fn recheck(ctx: &Ctx<'_>, spec: &CommandSpec, args: &[Bytes]) -> Result<(), CmdError> {
    recheck_keys(ctx, query(ctx, spec), || routed_keys(spec, args))
}

/// [`recheck`] for `EXEC`, which takes its transaction's `queue` before
/// it takes the gate.
///
/// # Errors
/// The redirection or refusal, in Redis's words.
pub(super) fn recheck_exec(ctx: &Ctx<'_>, queue: &[Vec<Bytes>]) -> Result<(), CmdError> {
    // As `check_command` routed it: `EXEC` itself neither writes nor
    // migrates.
    let query = Query {
        asking: ctx.conn.asking,
        ..Query::default()
    };
    recheck_keys(ctx, query, || queued_keys(ctx.shared, queue))
}

fn recheck_keys(
    ctx: &Ctx<'_>,
    query: Query,
    keys: impl FnOnce() -> Vec<Bytes>,
) -> Result<(), CmdError> {
    let (Some(cl), Some(seen)) = (&ctx.shared.cluster, ctx.routed_at) else {
        return Ok(());
    };
    if cl.generation() == seen {
        return Ok(());
    }
    check(ctx, cl, &keys(), query).map_err(|r| CmdError::msg(redirect_text(&r)))
}

/// In cluster mode, the redirection that unblocks a client blocked on
/// `keys` that this node no longer serves (see
/// [`crate::cluster::route::blocked`]); its keys share one slot.
pub(crate) fn blocked_elsewhere(ctx: &Ctx<'_>, keys: &[Bytes]) -> Option<CmdError> {
    let cl = ctx.shared.cluster.as_ref()?;
    let redirect = crate::cluster::route::blocked(cl, keys.first()?).err()?;
    Some(CmdError::msg(redirect_text(&redirect)))
}

/// The keys of a transaction's queued commands; a renamed command is
/// found by its new name, as it was queued.
fn queued_keys(shared: &crate::shared::Shared, queue: &[Vec<Bytes>]) -> Vec<Bytes> {
    queue
        .iter()
        .filter_map(|line| Some(routed_keys(shared.command(&line[0])?, line)))
        .flatten()
        .collect()
}

/// What routing needs to know of the client and `spec`.
fn query(ctx: &Ctx<'_>, spec: &CommandSpec) -> Query {
    Query {
        asking: ctx.conn.asking || spec.name == "restore-asking",
        migrate: spec.name == "migrate",
        write: spec.flags & super::flag::WRITE != 0,
        pubsubshard: is_pubsubshard(spec),
    }
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
    match check(ctx, cl, &keys, query(ctx, spec)) {
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
