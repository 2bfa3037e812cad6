//! Trace files in the WORKLOADS.md CSV format, so the same requests can be
//! fed to other cache simulators and real traces can be replayed here.
//!
//! One request per line, `timestamp_ms,key,ttl_ms`, after the header line
//! `timestamp_ms,key,ttl_ms`; `ttl_ms` is 0 for no TTL and `key` is the key
//! string (`key:000042`). Keys written by [`key_name`] read back as their
//! ids; any other key string gets an id of its own from
//! [`INTERNED_BASE`] upwards, in order of first appearance.

use std::collections::HashMap;
use std::io::{self, BufRead, Write};

use ferrum_evict::Millis;

use crate::workload::{key_name, parse_key_name, Request};

/// The header line.
pub const HEADER: &str = "timestamp_ms,key,ttl_ms";

/// First id given to key strings that are not `key:NNNNNN`; far above any
/// id the built-in workloads use.
pub const INTERNED_BASE: u64 = 1 << 62;

/// Errors reading or writing a trace.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The underlying reader or writer failed.
    #[error("trace i/o: {0}")]
    Io(#[from] io::Error),
    /// A line is not `timestamp_ms,key,ttl_ms`.
    #[error("trace line {line}: {reason}")]
    Parse {
        /// 1-based line number.
        line: u64,
        /// What is wrong with it.
        reason: String,
    },
}

/// Writes the header and one line per request; returns how many requests
/// were written.
///
/// # Errors
///
/// [`TraceError::Io`] when writing fails.
pub fn write_trace<W, I>(mut out: W, requests: I) -> Result<u64, TraceError>
where
    W: Write,
    I: IntoIterator<Item = Request>,
{
    writeln!(out, "{HEADER}")?;
    let mut written = 0;
    for req in requests {
        let ttl = req.ttl.map_or(0, |t| t.0);
        writeln!(out, "{},{},{}", req.at.0, key_name(req.key_id), ttl)?;
        written += 1;
    }
    out.flush()?;
    Ok(written)
}

/// Reads a trace as [`Request`]s; see [`read_trace`].
#[derive(Debug)]
pub struct TraceReader<R> {
    input: R,
    line: u64,
    buf: String,
    interned: HashMap<String, u64>,
}

/// Reads requests from a trace. The header line is optional, so headerless
/// traces from other tools replay too.
pub fn read_trace<R: BufRead>(input: R) -> TraceReader<R> {
    TraceReader {
        input,
        line: 0,
        buf: String::new(),
        interned: HashMap::new(),
    }
}

impl<R: BufRead> TraceReader<R> {
    fn parse(&mut self) -> Result<Request, TraceError> {
        let line = self.line;
        let err = |reason: &str| TraceError::Parse {
            line,
            reason: reason.to_owned(),
        };
        let text = self.buf.trim_end_matches(['\n', '\r']);
        let mut fields = text.split(',');
        let (Some(at), Some(key), Some(ttl), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(err("expected 3 comma-separated fields"));
        };
        let at: u64 = at
            .parse()
            .map_err(|_| err("timestamp_ms is not an integer"))?;
        let ttl: u64 = ttl.parse().map_err(|_| err("ttl_ms is not an integer"))?;
        if key.is_empty() {
            return Err(err("empty key"));
        }
        let key_id = match parse_key_name(key) {
            Some(id) => id,
            None => {
                let next = INTERNED_BASE + self.interned.len() as u64;
                *self.interned.entry(key.to_owned()).or_insert(next)
            }
        };
        Ok(Request {
            at: Millis(at),
            key_id,
            ttl: (ttl > 0).then_some(Millis(ttl)),
        })
    }
}

impl<R: BufRead> Iterator for TraceReader<R> {
    type Item = Result<Request, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            self.buf.clear();
            match self.input.read_line(&mut self.buf) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => return Some(Err(e.into())),
            }
            self.line += 1;
            let text = self.buf.trim_end_matches(['\n', '\r']);
            if text.is_empty() || (self.line == 1 && text == HEADER) {
                continue;
            }
            return Some(self.parse());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Pattern, Workload};

    #[test]
    fn writes_the_documented_format() {
        let mut out = Vec::new();
        let requests = [
            Request {
                at: Millis(0),
                key_id: 42,
                ttl: None,
            },
            Request {
                at: Millis(1),
                key_id: 1_000_007,
                ttl: Some(Millis(10_000)),
            },
        ];
        assert_eq!(write_trace(&mut out, requests).ok(), Some(2));
        assert_eq!(
            String::from_utf8_lossy(&out),
            "timestamp_ms,key,ttl_ms\n0,key:000042,0\n1,key:1000007,10000\n"
        );
    }

    #[test]
    fn round_trips_a_workload() {
        let original: Vec<Request> = Workload::new(Pattern::Ttl, 3, 5_000).collect();
        let mut out = Vec::new();
        write_trace(&mut out, original.iter().copied())
            .map_err(|e| e.to_string())
            .unwrap();
        let read: Result<Vec<Request>, _> = read_trace(&out[..]).collect();
        assert_eq!(read.map_err(|e| e.to_string()), Ok(original));
    }

    #[test]
    fn interns_foreign_keys_and_accepts_no_header() {
        let input = "5,user:alice,0\r\n6,user:bob,250\n\n7,user:alice,0\n";
        let read: Vec<(u64, u64, Option<Millis>)> = read_trace(input.as_bytes())
            .map(|r| r.map(|r| (r.at.0, r.key_id, r.ttl)))
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())
            .unwrap();
        assert_eq!(
            read,
            [
                (5, INTERNED_BASE, None),
                (6, INTERNED_BASE + 1, Some(Millis(250))),
                (7, INTERNED_BASE, None),
            ]
        );
    }

    #[test]
    fn reports_the_bad_line() {
        let input = "timestamp_ms,key,ttl_ms\n0,key:000001,0\n1,key:000002\n";
        let results: Vec<String> = read_trace(input.as_bytes())
            .map(|r| r.map_or_else(|e| e.to_string(), |r| r.key_id.to_string()))
            .collect();
        assert_eq!(
            results,
            ["1", "trace line 3: expected 3 comma-separated fields"]
        );
        let bad_ttl = read_trace("0,key:000001,soon\n".as_bytes()).next();
        assert_eq!(
            bad_ttl.map(|r| r.map_err(|e| e.to_string())),
            Some(Err("trace line 1: ttl_ms is not an integer".to_owned()))
        );
    }
}
