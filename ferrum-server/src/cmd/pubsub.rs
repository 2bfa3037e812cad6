//! Pub/Sub commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE,
//! PUBLISH and PUBSUB CHANNELS / NUMSUB / NUMPAT.
//!
//! Confirmations are push frames (`>` in RESP3, arrays in RESP2), one per
//! channel or pattern, each with the connection's subscription count after
//! it, as in Redis. Delivery itself is in `crate::pubsub`.

use std::sync::atomic::Ordering;

use bytes::Bytes;
use ferrum_proto::Frame;

use super::parse::is;
use super::{CmdError, CmdResult, Ctx};

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
    let h = &ctx.conn.handle;
    h.subs
        .store(ctx.conn.subs.channels.len(), Ordering::Relaxed);
    h.psubs
        .store(ctx.conn.subs.patterns.len(), Ordering::Relaxed);
}

fn subscribe_impl(ctx: &mut Ctx<'_>, names: &[Bytes], pattern: bool) -> CmdResult {
    let sub = ctx.conn.subs.subscriber(&ctx.conn.handle);
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let set = if pattern {
            &mut ctx.conn.subs.patterns
        } else {
            &mut ctx.conn.subs.channels
        };
        // Copied so the name does not pin the connection's read buffer.
        let name = Bytes::copy_from_slice(name);
        if set.insert(name.clone()) {
            ctx.shared.pubsub.subscribe(&sub, name.clone(), pattern);
        }
        let kind = if pattern { "psubscribe" } else { "subscribe" };
        out.push(confirm(kind, Some(name), ctx.conn.subs.count()));
    }
    mirror(ctx);
    replies(ctx, out)
}

fn unsubscribe_impl(ctx: &mut Ctx<'_>, names: &[Bytes], pattern: bool) -> CmdResult {
    let kind = if pattern {
        "punsubscribe"
    } else {
        "unsubscribe"
    };
    let set = if pattern {
        &ctx.conn.subs.patterns
    } else {
        &ctx.conn.subs.channels
    };
    let names: Vec<Bytes> = if names.is_empty() {
        set.iter().cloned().collect()
    } else {
        names.to_vec()
    };
    if names.is_empty() {
        return Ok(confirm(kind, None, ctx.conn.subs.count()));
    }
    let id = ctx.conn.handle.id;
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let set = if pattern {
            &mut ctx.conn.subs.patterns
        } else {
            &mut ctx.conn.subs.channels
        };
        if set.remove(&name) {
            ctx.shared.pubsub.unsubscribe(id, &name, pattern);
        }
        out.push(confirm(kind, Some(name), ctx.conn.subs.count()));
    }
    mirror(ctx);
    replies(ctx, out)
}

/// `SUBSCRIBE channel [channel ...]`
pub(crate) fn subscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    subscribe_impl(ctx, &args[1..], false)
}

/// `PSUBSCRIBE pattern [pattern ...]`
pub(crate) fn psubscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    subscribe_impl(ctx, &args[1..], true)
}

/// `UNSUBSCRIBE [channel ...]`: with no channel, from all of them.
pub(crate) fn unsubscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    unsubscribe_impl(ctx, &args[1..], false)
}

/// `PUNSUBSCRIBE [pattern ...]`: with no pattern, from all of them.
pub(crate) fn punsubscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    unsubscribe_impl(ctx, &args[1..], true)
}

/// Leaves every channel and pattern (`RESET`).
pub(crate) fn leave_all(ctx: &mut Ctx<'_>) {
    let id = ctx.conn.handle.id;
    ctx.conn.subs.clear(&ctx.shared.pubsub, id);
    mirror(ctx);
}

/// `PUBLISH channel message`: the number of subscribers that received it.
pub(crate) fn publish(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let limit = ctx.shared.config().client_output_buffer_limit.pubsub;
    // Copied once here so queued messages do not pin the read buffer.
    let channel = Bytes::copy_from_slice(&args[1]);
    let payload = Bytes::copy_from_slice(&args[2]);
    let n = ctx.shared.pubsub.publish(&channel, &payload, limit);
    Ok(Frame::Integer(n as i64))
}

/// `PUBSUB CHANNELS [pattern] | NUMSUB [channel ...] | NUMPAT | HELP`
pub(crate) fn pubsub(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let sub = &args[1];
    let ps = &ctx.shared.pubsub;
    let arity_error = || {
        CmdError::msg(format!(
            "ERR wrong number of arguments for 'pubsub|{}' command",
            String::from_utf8_lossy(sub).to_ascii_lowercase()
        ))
    };
    if is(sub, "channels") {
        if args.len() > 3 {
            return Err(arity_error());
        }
        let channels = ps.channels(args.get(2).map(|p| &p[..]));
        Ok(Frame::Array(
            channels.into_iter().map(Frame::Bulk).collect(),
        ))
    } else if is(sub, "numsub") {
        let mut out = Vec::with_capacity(2 * (args.len() - 2));
        for c in &args[2..] {
            out.extend([Frame::Bulk(c.clone()), Frame::Integer(ps.numsub(c) as i64)]);
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
            "HELP",
            "    Print this help.",
        ])
    } else {
        Err(CmdError::unknown_subcommand("PUBSUB", sub))
    }
}
