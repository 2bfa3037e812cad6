//! `LATENCY`: Redis's latency monitor and per-command latency histograms
//! (their state lives in `crate::latency`, which `Shared` holds).
//!
//! **Events.** With `latency-monitor-threshold` above 0, a command that took
//! at least that many milliseconds is logged as event `command` (`fast-command`
//! for commands flagged fast), and an active-expiry cycle as `expire-cycle`.
//! Each event keeps its last 160 samples (one per second, the largest wins),
//! and its all-time maximum, as Redis does. `LATENCY LATEST / HISTORY /
//! RESET / DOCTOR / GRAPH / HELP`.
//!
//! **Histograms.** `LATENCY HISTOGRAM [command ...]` reports, per command
//! (and per subcommand of container commands, `client|id`), its calls and
//! a cumulative histogram over power-of-two microsecond buckets (Redis uses
//! an HDR histogram read out at the same power-of-two steps). Every command
//! adds one relaxed atomic increment for this; `CONFIG RESETSTAT` clears it.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use ferrum_proto::Frame;

use super::error::latency_no_samples;
use super::parse::is;
use super::{flag, CmdError, CmdResult, Ctx, COMMANDS};
use crate::latency::BUCKETS;

/// One command's entry: `calls N histogram_usec {bound cumulative ...}`.
fn histogram_frame(buckets: &[u64; BUCKETS]) -> Frame {
    let calls: u64 = buckets.iter().sum();
    let mut cumulative = 0;
    let mut points = Vec::new();
    for (i, n) in buckets.iter().enumerate() {
        if *n > 0 {
            cumulative += n;
            points.push((
                Frame::Integer(1i64 << i.min(62)),
                Frame::Integer(cumulative as i64),
            ));
        }
    }
    Frame::Map(vec![
        (Frame::bulk("calls"), Frame::Integer(calls as i64)),
        (Frame::bulk("histogram_usec"), Frame::Map(points)),
    ])
}

/// `LATENCY <subcommand> ...`
pub(crate) fn latency(ctx: &mut Ctx<'_>, args: &[Bytes]) -> CmdResult {
    let sub = &args[1];
    let arity = |ok: bool, name: &str| {
        if ok {
            Ok(())
        } else {
            Err(CmdError::subcommand_arity("latency", name))
        }
    };
    let lat = &ctx.shared.latency;
    if is(sub, "histogram") {
        Ok(histogram(ctx, &args[2..]))
    } else if is(sub, "latest") {
        arity(args.len() == 2, "latest")?;
        let events = lat.events();
        Ok(Frame::Array(
            events
                .iter()
                .filter_map(|(name, log)| {
                    let (t, l) = *log.samples.last()?;
                    Some(Frame::Array(vec![
                        Frame::bulk(*name),
                        Frame::Integer(t as i64),
                        Frame::Integer(l as i64),
                        Frame::Integer(log.max as i64),
                    ]))
                })
                .collect(),
        ))
    } else if is(sub, "history") {
        arity(args.len() == 3, "history")?;
        let events = lat.events();
        let samples = events
            .iter()
            .find(|(name, _)| name.as_bytes() == &args[2][..])
            .map(|(_, log)| log.samples.clone())
            .unwrap_or_default();
        Ok(Frame::Array(
            samples
                .into_iter()
                .map(|(t, l)| {
                    Frame::Array(vec![Frame::Integer(t as i64), Frame::Integer(l as i64)])
                })
                .collect(),
        ))
    } else if is(sub, "reset") {
        let mut events = lat.events();
        let n = if args.len() == 2 {
            let n = events.len();
            events.clear();
            n
        } else {
            let before = events.len();
            events.retain(|name, _| !args[2..].iter().any(|a| a[..] == *name.as_bytes()));
            before - events.len()
        };
        Ok(Frame::Integer(n as i64))
    } else if is(sub, "doctor") {
        arity(args.len() == 2, "doctor")?;
        Ok(Frame::Verbatim {
            format: *b"txt",
            text: Bytes::from(doctor(ctx)),
        })
    } else if is(sub, "graph") {
        arity(args.len() == 3, "graph")?;
        let events = lat.events();
        let Some((name, log)) = events
            .iter()
            .find(|(name, _)| name.as_bytes() == &args[2][..])
        else {
            return Err(CmdError::msg(latency_no_samples(&args[2])));
        };
        let mut out = format!(
            "{name} - high {} ms, low {} ms (all time high {} ms)\n",
            log.samples.iter().map(|s| s.1).max().unwrap_or(0),
            log.samples.iter().map(|s| s.1).min().unwrap_or(0),
            log.max
        );
        out.push_str(&"-".repeat(80));
        out.push('\n');
        for (t, l) in &log.samples {
            let _ = writeln!(out, "{t} {l} ms");
        }
        Ok(Frame::Verbatim {
            format: *b"txt",
            text: Bytes::from(out),
        })
    } else if is(sub, "help") {
        arity(args.len() == 2, "help")?;
        super::help_reply(&[
                "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
                "DOCTOR",
                "    Return a human readable latency analysis report.",
                "GRAPH <event>",
                "    Return an ASCII latency graph for the <event> class.",
                "HISTORY <event>",
                "    Return time-latency samples for the <event> class.",
                "LATEST",
                "    Return the latest latency samples for all events.",
                "RESET [<event> ...]",
                "    Reset latency data of one or more <event> classes.",
                "    (default: reset all data for all event classes)",
                "HISTOGRAM [COMMAND ...]",
                "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
                "    If no commands are specified then all histograms are replied.",
                "HELP",
                "    Print this help.",
])
    } else {
        Err(CmdError::unknown_subcommand("LATENCY", sub))
    }
}

/// `LATENCY HISTOGRAM [command ...]`: commands (or `container|sub` names)
/// with at least one call; unknown names are skipped.
fn histogram(ctx: &Ctx<'_>, names: &[Bytes]) -> Frame {
    Frame::Map(
        histograms(ctx, names)
            .into_iter()
            .map(|(name, b)| (Frame::bulk(name), histogram_frame(&b)))
            .collect(),
    )
}

/// `INFO latencystats`: for each command (and subcommand) with calls, the
/// `latency-tracking-info-percentiles` of its latency in microseconds,
/// while `latency-tracking` is on. Read from the power-of-two histograms,
/// so each percentile is the upper bound of the bucket it falls in (Redis
/// reads an HDR histogram with 2 significant digits).
pub(crate) fn latencystats(ctx: &Ctx<'_>, out: &mut String) {
    out.push_str("# Latencystats\r\n");
    let percentiles: Vec<f64> = {
        let config = ctx.shared.config();
        if config.stored_value("latency-tracking") != "yes" {
            return;
        }
        config
            .stored_value("latency-tracking-info-percentiles")
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect()
    };
    for (name, buckets) in histograms(ctx, &[]) {
        let fields: Vec<String> = percentiles
            .iter()
            .map(|&p| format!("p{p}={:.3}", percentile(&buckets, p)))
            .collect();
        let _ = write!(
            out,
            "latency_percentiles_usec_{name}:{}\r\n",
            fields.join(",")
        );
    }
}

/// The `p`th percentile (0 to 100) of the calls counted in `buckets`: the
/// upper bound of the bucket holding the call of that rank.
fn percentile(buckets: &[u64; BUCKETS], p: f64) -> f64 {
    let total: u64 = buckets.iter().sum();
    let rank = ((p / 100.0) * total as f64).ceil().max(1.0) as u64;
    let mut seen = 0;
    let at = buckets
        .iter()
        .position(|n| {
            seen += n;
            seen >= rank
        })
        .unwrap_or(BUCKETS - 1);
    (1u64 << at) as f64
}

/// The histograms of `names` (every command with calls when empty), as
/// `(name, buckets)`; subcommands are named `container|sub`.
fn histograms(ctx: &Ctx<'_>, names: &[Bytes]) -> Vec<(String, [u64; BUCKETS])> {
    let stats = &ctx.shared.stats;
    let subs = ctx.shared.latency.subcommand_histograms();
    let mut out: Vec<(String, [u64; BUCKETS])> = Vec::new();
    let add_command = |spec: &'static super::CommandSpec, out: &mut Vec<_>| {
        if spec.has(flag::CONTAINER) {
            let prefix = format!("{}|", spec.name);
            for (name, b) in subs.iter().filter(|(n, _)| n.starts_with(&prefix)) {
                out.push((name.clone(), *b));
            }
        } else {
            let b = stats.histogram.of(spec.index());
            if b.iter().any(|n| *n > 0) {
                out.push((spec.name.to_owned(), b));
            }
        }
    };
    if names.is_empty() {
        for spec in COMMANDS {
            add_command(spec, &mut out);
        }
    } else {
        for name in names {
            let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
            if let Some(b) = subs.get(&lower) {
                out.push((lower, *b));
            } else if let Some(spec) = super::lookup(name) {
                add_command(spec, &mut out);
            }
        }
    }
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

/// `LATENCY DOCTOR`: a short report in Redis's spirit.
fn doctor(ctx: &Ctx<'_>) -> String {
    let lat = &ctx.shared.latency;
    let threshold = lat.threshold_ms.load(Ordering::Relaxed);
    let events = lat.events();
    let mut out = String::from("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n");
    if threshold == 0 {
        return "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sleep better in this moment. (The latency monitor is disabled: set latency-monitor-threshold to a number of milliseconds to enable it.)\n".to_owned();
    }
    if events.is_empty() {
        return "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sleep better in this moment.\n".to_owned();
    }
    for (i, (name, log)) in events.iter().enumerate() {
        let avg = log.samples.iter().map(|s| s.1).sum::<u64>() / log.samples.len().max(1) as u64;
        let _ = writeln!(
            out,
            "{}. {}: {} latency spikes (average {}ms, worst all time {}ms).",
            i + 1,
            name,
            log.samples.len(),
            avg,
            log.max
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::latency::bucket;

    #[test]
    fn percentiles_are_bucket_bounds() {
        let mut b = [0; BUCKETS];
        b[bucket(3)] = 98; // 4 us
        b[bucket(100)] = 2; // 128 us
        assert_eq!(percentile(&b, 50.0), 4.0);
        assert_eq!(percentile(&b, 98.0), 4.0);
        assert_eq!(percentile(&b, 99.0), 128.0);
        assert_eq!(percentile(&b, 0.0), 4.0);
        assert_eq!(percentile(&b, 100.0), 128.0);
    }
}
