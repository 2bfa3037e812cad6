//! Expiry commands: EXPIRE and friends with NX/XX/GT/LT, TTL, PTTL,
//! EXPIRETIME, PEXPIRETIME, PERSIST.

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::{Access, Millis};

use super::error::{
    expire_unsupported_option, invalid_expire_time, EXPIRE_GT_AND_LT, EXPIRE_NX_AND_OTHER,
};
use super::parse::{int_arg, is};
use super::{CmdError, CmdResult, Ctx};

/// Which of the four EXPIRE commands, which fixes the unit and whether the
/// time is relative.
#[derive(Clone, Copy)]
struct Form {
    name: &'static str,
    millis: bool,
    absolute: bool,
}

/// `NX | XX | GT | LT`, compared against the key's current expiry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Condition {
    Always,
    Nx,
    Xx,
    Gt,
    Lt,
    /// `XX GT`: only a key with a TTL, and only to a later one.
    XxGt,
    /// `XX LT`: only a key with a TTL, and only to an earlier one.
    XxLt,
}

impl Condition {
    fn parse(args: &[Bytes]) -> Result<Condition, CmdError> {
        let mut cond = Condition::Always;
        for a in args {
            let next = if is(a, "nx") {
                Condition::Nx
            } else if is(a, "xx") {
                Condition::Xx
            } else if is(a, "gt") {
                Condition::Gt
            } else if is(a, "lt") {
                Condition::Lt
            } else {
                return Err(CmdError::msg(expire_unsupported_option(a)));
            };
            cond = match (cond, next) {
                (Condition::Always, n) => n,
                (c, n) if c == n => c,
                // Redis allows XX with GT or LT.
                (Condition::Xx | Condition::XxGt, Condition::Gt)
                | (Condition::Gt | Condition::XxGt, Condition::Xx) => Condition::XxGt,
                (Condition::Xx | Condition::XxLt, Condition::Lt)
                | (Condition::Lt | Condition::XxLt, Condition::Xx) => Condition::XxLt,
                (Condition::Nx, _) | (_, Condition::Nx) => {
                    return Err(CmdError::msg(EXPIRE_NX_AND_OTHER))
                }
                _ => return Err(CmdError::msg(EXPIRE_GT_AND_LT)),
            };
        }
        Ok(cond)
    }

    /// Whether to set `new` given the current deadline (`None` = persistent,
    /// which GT treats as infinite and LT as larger than anything).
    fn allows(self, current: Option<Millis>, new: Millis) -> bool {
        match (self, current) {
            (Condition::Always, _) => true,
            (Condition::Nx, c) => c.is_none(),
            (Condition::Xx, c) => c.is_some(),
            (Condition::Gt, Some(c)) => new > c,
            (Condition::Gt, None) => false,
            (Condition::Lt, Some(c)) => new < c,
            (Condition::Lt, None) => true,
            (Condition::XxGt, c) => c.is_some_and(|c| new > c),
            (Condition::XxLt, c) => c.is_some_and(|c| new < c),
        }
    }
}

fn expire_generic(ctx: &mut Ctx<'_>, args: &[Bytes], form: Form) -> CmdResult {
    let n = int_arg(&args[2])?;
    let cond = Condition::parse(&args[3..])?;
    let invalid = || CmdError::msg(invalid_expire_time(form.name));
    let ms = if form.millis {
        Some(n)
    } else {
        n.checked_mul(1000)
    }
    .ok_or_else(invalid)?;
    let now = ctx.now;
    let deadline = if form.absolute {
        ms
    } else {
        ms.checked_add(now.0 as i64).ok_or_else(invalid)?
    };
    let (key, db) = (&args[1], ctx.db());
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    let Some(e) = shard.lookup(db, key, now, Access::Write) else {
        return Ok(Frame::Integer(0));
    };
    // A deadline at or before now (including negative ones) deletes the key.
    let at = Millis(deadline.max(0) as u64);
    if !cond.allows(e.expires_at(), at) {
        return Ok(Frame::Integer(0));
    }
    if deadline <= now.0 as i64 {
        shard.delete(db, key, now);
    } else {
        shard.set_expiry(db, key, Some(at), now);
    }
    Ok(Frame::Integer(1))
}

pub(crate) fn expire(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    expire_generic(
        ctx,
        args,
        Form {
            name: "expire",
            millis: false,
            absolute: false,
        },
    )
}

pub(crate) fn pexpire(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    expire_generic(
        ctx,
        args,
        Form {
            name: "pexpire",
            millis: true,
            absolute: false,
        },
    )
}

pub(crate) fn expireat(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    expire_generic(
        ctx,
        args,
        Form {
            name: "expireat",
            millis: false,
            absolute: true,
        },
    )
}

pub(crate) fn pexpireat(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    expire_generic(
        ctx,
        args,
        Form {
            name: "pexpireat",
            millis: true,
            absolute: true,
        },
    )
}

/// What the TTL-family commands report: -2 for no key, -1 for no expiry.
fn ttl_generic(
    ctx: &mut Ctx<'_>,
    key: &Bytes,
    report: impl Fn(Millis, Millis) -> i64,
) -> CmdResult {
    let (db, now) = (ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    Ok(Frame::Integer(
        match ks.shard(key).lookup(db, key, now, Access::ReadNoTouch) {
            None => -2,
            Some(e) => e.expires_at().map_or(-1, |at| report(at, now)),
        },
    ))
}

pub(crate) fn ttl(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    // Rounded to the nearest second, as Redis does.
    ttl_generic(ctx, &args[1], |at, now| {
        (at.saturating_sub(now).0 as i64 + 500) / 1000
    })
}

pub(crate) fn pttl(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ttl_generic(ctx, &args[1], |at, now| at.saturating_sub(now).0 as i64)
}

pub(crate) fn expiretime(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    // Rounded to the nearest second, as Redis does.
    ttl_generic(ctx, &args[1], |at, _| ((at.0 + 500) / 1000) as i64)
}

pub(crate) fn pexpiretime(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    ttl_generic(ctx, &args[1], |at, _| at.0 as i64)
}

pub(crate) fn persist(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (key, db, now) = (&args[1], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    match shard.lookup(db, key, now, Access::Write) {
        Some(e) if e.expires_at().is_some() => {
            shard.set_expiry(db, key, None, now);
            Ok(Frame::Integer(1))
        }
        _ => Ok(Frame::Integer(0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(v: &[&'static str]) -> Vec<Bytes> {
        v.iter().map(|s| Bytes::from_static(s.as_bytes())).collect()
    }

    #[test]
    fn conditions_parse_and_conflict_like_redis() {
        assert_eq!(Condition::parse(&b(&["NX"])), Ok(Condition::Nx));
        assert_eq!(Condition::parse(&b(&["gt", "GT"])), Ok(Condition::Gt));
        assert!(Condition::parse(&b(&["nx", "xx"])).is_err());
        assert!(Condition::parse(&b(&["gt", "lt"])).is_err());
        assert_eq!(Condition::parse(&b(&["xx", "lt"])), Ok(Condition::XxLt));
        assert_eq!(Condition::parse(&b(&["gt", "xx"])), Ok(Condition::XxGt));
        assert!(Condition::parse(&b(&["xx", "lt", "gt"])).is_err());
        assert!(Condition::parse(&b(&["xx", "gt", "nx"])).is_err());
        assert_eq!(
            Condition::parse(&b(&["foo"])),
            Err(CmdError::msg("ERR Unsupported option foo"))
        );
    }

    #[test]
    fn gt_treats_no_ttl_as_infinite() {
        assert!(!Condition::Gt.allows(None, Millis(5)));
        assert!(Condition::Lt.allows(None, Millis(5)));
        assert!(Condition::Gt.allows(Some(Millis(4)), Millis(5)));
        assert!(!Condition::Lt.allows(Some(Millis(4)), Millis(5)));
        assert!(Condition::Nx.allows(None, Millis(1)));
        assert!(!Condition::Xx.allows(None, Millis(1)));
        // XX LT: Redis refuses a key without a TTL, though LT alone sets it.
        assert!(!Condition::XxLt.allows(None, Millis(5)));
        assert!(Condition::XxLt.allows(Some(Millis(6)), Millis(5)));
        assert!(!Condition::XxGt.allows(Some(Millis(6)), Millis(5)));
    }
}
