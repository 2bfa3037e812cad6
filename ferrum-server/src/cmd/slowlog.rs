//! `SLOWLOG`, which reads and clears the slow log (`crate::slowlog`).

use bytes::Bytes;
use ferrum_proto::Frame;

use super::error::SLOWLOG_COUNT;
use super::parse::{int_arg, is};
use super::{CmdError, CmdResult, Ctx};

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
        let entries = log.entries();
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
        let n = log.entries().len();
        Ok(Frame::Integer(n as i64))
    } else if is(sub, "reset") {
        arity(args.len() == 2)?;
        log.entries().clear();
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
