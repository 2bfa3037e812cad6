//! The slow log: commands that ran for at least `slowlog-log-slower-than`
//! microseconds, newest first, at most `slowlog-max-len` of them, and the
//! `SLOWLOG` command that reads and clears it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;

use bytes::Bytes;
use ferrum_proto::Frame;

use super::error::SLOWLOG_COUNT;
use super::parse::{int_arg, is};
use super::{CmdError, CmdResult, Ctx};

/// Arguments kept per entry, as in Redis (`SLOWLOG_ENTRY_MAX_ARGC`).
const MAX_ARGS: usize = 32;
/// Bytes kept per argument (`SLOWLOG_ENTRY_MAX_STRING`).
const MAX_ARG_BYTES: usize = 128;

/// One logged command.
#[derive(Debug)]
struct Entry {
    id: u64,
    unix_secs: u64,
    usec: u64,
    args: Vec<Bytes>,
    addr: String,
    name: Bytes,
}

/// The log and its two parameters, shared by every connection.
#[derive(Debug)]
pub(crate) struct SlowLog {
    entries: Mutex<VecDeque<Entry>>,
    next_id: AtomicU64,
    /// `slowlog-log-slower-than`, microseconds; negative is off.
    pub(crate) threshold_usec: AtomicI64,
    /// `slowlog-max-len`.
    pub(crate) max_len: AtomicU64,
}

impl SlowLog {
    /// An empty log with the configured parameters.
    pub(crate) fn new(threshold_usec: i64, max_len: u64) -> SlowLog {
        SlowLog {
            entries: Mutex::new(VecDeque::new()),
            next_id: AtomicU64::new(0),
            threshold_usec: AtomicI64::new(threshold_usec),
            max_len: AtomicU64::new(max_len),
        }
    }

    /// Whether a command that took `usec` belongs in the log.
    pub(crate) fn wants(&self, usec: u64) -> bool {
        let t = self.threshold_usec.load(Ordering::Relaxed);
        t >= 0 && usec >= t as u64
    }

    /// Logs a command, trimming its arguments as Redis does.
    pub(crate) fn record(&self, ctx: &Ctx<'_>, args: &[Bytes], usec: u64) {
        let mut kept: Vec<Bytes> = Vec::with_capacity(args.len().min(MAX_ARGS));
        for (i, a) in args.iter().enumerate() {
            if i == MAX_ARGS - 1 && args.len() > MAX_ARGS {
                kept.push(Bytes::from(format!(
                    "... ({} more arguments)",
                    args.len() - MAX_ARGS + 1
                )));
                break;
            }
            if a.len() > MAX_ARG_BYTES {
                let mut v = a[..MAX_ARG_BYTES].to_vec();
                v.extend_from_slice(
                    format!("... ({} more bytes)", a.len() - MAX_ARG_BYTES).as_bytes(),
                );
                kept.push(Bytes::from(v));
            } else {
                kept.push(a.clone());
            }
        }
        let handle = &ctx.conn.handle;
        let name = handle
            .name
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .unwrap_or_default();
        let entry = Entry {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            unix_secs: ctx.now.0 / 1000,
            usec,
            args: kept,
            addr: handle.addr.to_string(),
            name,
        };
        let max = self.max_len.load(Ordering::Relaxed) as usize;
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.push_front(entry);
        entries.truncate(max);
    }

    /// Drops entries beyond a lowered `slowlog-max-len`.
    pub(crate) fn trim(&self) {
        let max = self.max_len.load(Ordering::Relaxed) as usize;
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .truncate(max);
    }
}

/// `SLOWLOG GET [count] | LEN | RESET | HELP`
pub(crate) fn slowlog(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let sub = &args[1];
    let log = &ctx.shared.slowlog;
    let arity = |ok: bool| {
        if ok {
            Ok(())
        } else {
            Err(CmdError::subcommand_arity("slowlog", sub))
        }
    };
    if is(sub, "get") {
        arity(args.len() <= 3)?;
        let count = match args.get(2) {
            Some(c) => {
                let n = int_arg(c)?;
                if n < -1 {
                    return Err(CmdError::msg(SLOWLOG_COUNT));
                }
                if n == -1 {
                    usize::MAX
                } else {
                    n as usize
                }
            }
            None => 10,
        };
        let entries = log.entries.lock().unwrap_or_else(|p| p.into_inner());
        let out = entries
            .iter()
            .take(count)
            .map(|e| {
                Frame::Array(vec![
                    Frame::Integer(e.id as i64),
                    Frame::Integer(e.unix_secs as i64),
                    Frame::Integer(e.usec as i64),
                    Frame::Array(e.args.iter().cloned().map(Frame::Bulk).collect()),
                    Frame::bulk(e.addr.clone()),
                    Frame::Bulk(e.name.clone()),
                ])
            })
            .collect();
        Ok(Frame::Array(out))
    } else if is(sub, "len") {
        arity(args.len() == 2)?;
        let n = log.entries.lock().unwrap_or_else(|p| p.into_inner()).len();
        Ok(Frame::Integer(n as i64))
    } else if is(sub, "reset") {
        arity(args.len() == 2)?;
        log.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        Ok(Frame::ok())
    } else if is(sub, "help") {
        super::help_reply(&[
            "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "GET [<count>]",
            "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
            "    Entries are made of:",
            "    id, timestamp, time in microseconds, arguments array, client IP and port,",
            "    client name",
            "LEN",
            "    Return the length of the slowlog.",
            "RESET",
            "    Reset the slowlog.",
            "HELP",
            "    Print this help.",
        ])
    } else {
        Err(CmdError::unknown_subcommand("SLOWLOG", sub))
    }
}
