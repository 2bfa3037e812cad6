//! Pub/Sub commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE,
//! PUBLISH, their sharded forms SSUBSCRIBE, SUNSUBSCRIBE and SPUBLISH, and
//! PUBSUB CHANNELS / NUMSUB / NUMPAT / SHARDCHANNELS / SHARDNUMSUB.
//!
//! Confirmations are push frames (`>` in RESP3, arrays in RESP2), one per
//! channel or pattern, each with the connection's subscription count after
//! it, as in Redis. Delivery itself is in `crate::pubsub`.

use std::sync::atomic::Ordering;

use bytes::Bytes;
use ferrum_proto::Frame;

use super::parse::is;
use super::{CmdError, CmdResult, Ctx};
use crate::pubsub::Kind;

/// One confirmation: `[kind, name (or nil), count]`.
fn confirm(kind: &'static str, name: Option<Bytes>, count: usize) -> Frame {
    Frame::Push(vec![
        Frame::bulk(kind),
        Frame::bulk_or_null(name),
        Frame::Integer(count as i64),
    ])
}

/// Replies with `frames`: the first as the handler's reply, the rest after.
fn replies(ctx: &mut Ctx<'_>, mut frames: Vec<Frame>) -> CmdResult {
    let first = frames.remove(0);
    ctx.more = frames;
    Ok(first)
}

/// Mirrors the counts into the client registry for `CLIENT LIST`.
fn mirror(ctx: &Ctx<'_>) {
    let (h, subs) = (&ctx.conn.handle, &ctx.conn.subs);
    h.subs.store(subs.channels.len(), Ordering::Relaxed);
    h.psubs.store(subs.patterns.len(), Ordering::Relaxed);
    h.ssubs.store(subs.shards.len(), Ordering::Relaxed);
}

/// The confirmation names of a kind: (subscribe, unsubscribe).
fn confirmations(kind: Kind) -> (&'static str, &'static str) {
    match kind {
        Kind::Channel => ("subscribe", "unsubscribe"),
        Kind::Pattern => ("psubscribe", "punsubscribe"),
        Kind::Shard => ("ssubscribe", "sunsubscribe"),
    }
}

fn subscribe_impl(ctx: &mut Ctx<'_>, names: &[Bytes], kind: Kind) -> CmdResult {
    let sub = ctx.conn.subs.subscriber(&ctx.conn.handle);
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        // Copied so the name does not pin the connection's read buffer.
        let name = Bytes::copy_from_slice(name);
        if ctx.conn.subs.set(kind).insert(name.clone()) {
            ctx.shared.pubsub.subscribe(&sub, name.clone(), kind);
        }
        let count = ctx.conn.subs.count(kind);
        out.push(confirm(confirmations(kind).0, Some(name), count));
    }
    mirror(ctx);
    replies(ctx, out)
}

fn unsubscribe_impl(ctx: &mut Ctx<'_>, names: &[Bytes], kind: Kind) -> CmdResult {
    let name_of = confirmations(kind).1;
    let names: Vec<Bytes> = if names.is_empty() {
        ctx.conn.subs.set(kind).iter().cloned().collect()
    } else {
        names.to_vec()
    };
    if names.is_empty() {
        return Ok(confirm(name_of, None, ctx.conn.subs.count(kind)));
    }
    let id = ctx.conn.handle.id;
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        if ctx.conn.subs.set(kind).remove(&name) {
            ctx.shared.pubsub.unsubscribe(id, &name, kind);
        }
        out.push(confirm(name_of, Some(name), ctx.conn.subs.count(kind)));
    }
    mirror(ctx);
    replies(ctx, out)
}

/// `SUBSCRIBE channel [channel ...]`
pub(crate) fn subscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    subscribe_impl(ctx, &args[1..], Kind::Channel)
}

/// `PSUBSCRIBE pattern [pattern ...]`
pub(crate) fn psubscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    subscribe_impl(ctx, &args[1..], Kind::Pattern)
}

/// `SSUBSCRIBE shardchannel [shardchannel ...]`: without cluster mode,
/// shard channels are one more namespace of channels.
pub(crate) fn ssubscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    subscribe_impl(ctx, &args[1..], Kind::Shard)
}

/// `UNSUBSCRIBE [channel ...]`: with no channel, from all of them.
pub(crate) fn unsubscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    unsubscribe_impl(ctx, &args[1..], Kind::Channel)
}

/// `PUNSUBSCRIBE [pattern ...]`: with no pattern, from all of them.
pub(crate) fn punsubscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    unsubscribe_impl(ctx, &args[1..], Kind::Pattern)
}

/// `SUNSUBSCRIBE [shardchannel ...]`: with none, from all of them.
pub(crate) fn sunsubscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    unsubscribe_impl(ctx, &args[1..], Kind::Shard)
}

/// Leaves every channel and pattern (`RESET`).
pub(crate) fn leave_all(ctx: &mut Ctx<'_>) {
    let id = ctx.conn.handle.id;
    ctx.conn.subs.clear(&ctx.shared.pubsub, id);
    mirror(ctx);
}

/// `PUBLISH channel message`: the number of subscribers that received it.
pub(crate) fn publish(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    publish_impl(ctx, args, Kind::Channel)
}

/// `SPUBLISH shardchannel message`: the number of shard subscribers that
/// received it.
pub(crate) fn spublish(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    publish_impl(ctx, args, Kind::Shard)
}

fn publish_impl(ctx: &mut Ctx<'_>, args: &[Bytes], kind: Kind) -> CmdResult {
    let limit = ctx.shared.config().client_output_buffer_limit.pubsub;
    // Copied once here so queued messages do not pin the read buffer.
    let channel = Bytes::copy_from_slice(&args[1]);
    let payload = Bytes::copy_from_slice(&args[2]);
    let ps = &ctx.shared.pubsub;
    let n = match kind {
        Kind::Shard => ps.publish_shard(&channel, &payload, limit),
        _ => ps.publish(&channel, &payload, limit),
    };
    Ok(Frame::Integer(n as i64))
}

/// `PUBSUB CHANNELS [pattern] | NUMSUB [channel ...] | NUMPAT | HELP`
pub(crate) fn pubsub(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let sub = &args[1];
    let ps = &ctx.shared.pubsub;
    let arity_error = || CmdError::subcommand_arity("pubsub", sub);
    let shard = is(sub, "shardchannels") || is(sub, "shardnumsub");
    let kind = if shard { Kind::Shard } else { Kind::Channel };
    if is(sub, "channels") || is(sub, "shardchannels") {
        if args.len() > 3 {
            return Err(arity_error());
        }
        let channels = ps.channels(kind, args.get(2).map(|p| &p[..]));
        Ok(Frame::Array(
            channels.into_iter().map(Frame::Bulk).collect(),
        ))
    } else if is(sub, "numsub") || is(sub, "shardnumsub") {
        let mut out = Vec::with_capacity(2 * (args.len() - 2));
        for c in &args[2..] {
            let n = ps.numsub(kind, c) as i64;
            out.extend([Frame::Bulk(c.clone()), Frame::Integer(n)]);
        }
        Ok(Frame::Array(out))
    } else if is(sub, "numpat") {
        if args.len() != 2 {
            return Err(arity_error());
        }
        Ok(Frame::Integer(ps.numpat() as i64))
    } else if is(sub, "help") {
        super::help_reply(&[
            "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "CHANNELS [<pattern>]",
            "    Return the currently active channels matching a <pattern> (default: '*').",
            "NUMPAT",
            "    Return number of subscriptions to patterns.",
            "NUMSUB [<channel> ...]",
            "    Return the number of subscribers for the specified channels, excluding",
            "    pattern subscriptions(default: no channels).",
            "SHARDCHANNELS [<pattern>]",
            "    Return the currently active shard level channels matching a <pattern> (default: '*').",
            "SHARDNUMSUB [<shardchannel> ...]",
            "    Return the number of subscribers for the specified shard level channel(s)",
            "HELP",
            "    Print this help.",
        ])
    } else {
        Err(CmdError::unknown_subcommand("PUBSUB", sub))
    }
}
