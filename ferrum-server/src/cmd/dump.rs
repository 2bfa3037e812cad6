//! `DUMP` and `RESTORE`, in Redis 7.0's serialization (`crate::rdb`): a
//! value dumped by Redis 7.0 restores here and a value dumped here
//! restores in Redis.

use bytes::Bytes;
use ferrum_proto::Frame;
use ferrum_store::{Access, Millis};

use super::args::Args;
use super::error::{
    BUSYKEY, DUMP_BAD_DATA, DUMP_BAD_PAYLOAD, RESTORE_FREQ, RESTORE_IDLETIME, RESTORE_TTL,
};
use super::parse::{is, parse_i64};
use super::{CmdError, CmdResult, Ctx};
use crate::rdb::{self, PayloadError};

/// `DUMP key`: the serialized value, or nil.
pub(crate) fn dump(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (key, db, now) = (&args[1], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let Some(e) = ks.shard(key).lookup(db, key, now, Access::Read) else {
        return Ok(Frame::Null);
    };
    Ok(Frame::Bulk(Bytes::from(rdb::serialize(e.value()))))
}

/// `RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]`
pub(crate) fn restore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let (mut replace, mut absttl) = (false, false);
    let (mut idle, mut freq): (Option<i64>, Option<i64>) = (None, None);
    let mut opts = Args::at(args, 4);
    while let Some(a) = opts.next() {
        let more = !opts.is_empty();
        if is(a, "replace") {
            replace = true;
        } else if is(a, "absttl") {
            absttl = true;
        } else if is(a, "idletime") && more && freq.is_none() {
            let v = opts.int()?;
            if v < 0 {
                return Err(CmdError::msg(RESTORE_IDLETIME));
            }
            idle = Some(v);
        } else if is(a, "freq") && more && idle.is_none() {
            let v = opts.int()?;
            if !(0..=255).contains(&v) {
                return Err(CmdError::msg(RESTORE_FREQ));
            }
            freq = Some(v);
        } else {
            return Err(CmdError::syntax());
        }
    }
    let ttl = parse_i64(&args[2]).ok_or_else(|| CmdError::msg(super::error::NOT_INTEGER))?;
    if ttl < 0 {
        return Err(CmdError::msg(RESTORE_TTL));
    }
    let (key, db, now) = (&args[1], ctx.db(), ctx.now);
    let mut ks = ctx.store().lock_key(key);
    let shard = ks.shard(key);
    let exists = shard.lookup(db, key, now, Access::Peek).is_some();
    if exists && !replace {
        return Err(CmdError::msg(BUSYKEY));
    }
    let check_crc = !ctx
        .shared
        .skip_checksum
        .load(std::sync::atomic::Ordering::Relaxed);
    let value = rdb::restore_payload(&args[3], check_crc).map_err(|e| match e {
        PayloadError::Footer => CmdError::msg(DUMP_BAD_PAYLOAD),
        PayloadError::Data(why) => {
            // Redis's words, at its level (verbose), so a user can find why.
            tracing::debug!("Internal error in RDB reading offset 0 -> {why}");
            CmdError::msg(DUMP_BAD_DATA)
        }
    })?;
    let expires = match ttl {
        0 => None,
        t if absttl => Some(Millis(t as u64)),
        t => Some(Millis(now.0.saturating_add(t as u64))),
    };
    if expires.is_some_and(|at| at.0 <= now.0) {
        // Already expired: the key ends up absent, as in Redis.
        if exists {
            shard.delete(db, key, now);
        }
        return Ok(Frame::ok());
    }
    shard.insert(db, key.clone(), value, expires, now);
    if let Some(secs) = idle {
        if let Some(mut e) = shard.lookup_mut(db, key, now) {
            let at = now.0.saturating_sub((secs as u64).saturating_mul(1000));
            e.set_last_access(Millis(at));
            e.mark_unchanged();
        }
    }
    if let Some(freq) = freq.and_then(|f| u8::try_from(f).ok()) {
        shard.set_lfu_counter(db, key, freq, now);
    }
    Ok(Frame::ok())
}
