//! Trace files in the WORKLOADS.md CSV format, so the same requests can be
//! fed to other cache simulators and real traces can be replayed here.
//!
//! One request per line, `timestamp_ms,key,ttl_ms`, after the header line
//! `timestamp_ms,key,ttl_ms`; `ttl_ms` is 0 for no TTL and `key` is the key
//! string (`key:000042`). Keys written by [`key_name`] read back as their
//! ids; any other key string gets an id of its own from
//! [`INTERNED_BASE`] upwards, in order of first appearance.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;

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

/// Opens a trace file for [`read_trace`], decompressing it on the way when
/// its name ends in `.zst` (the real traces in `benches/traces` are
/// zstd-compressed CSV).
///
/// # Errors
///
/// The file cannot be opened, or its zstd header is not valid.
pub fn open_trace_file(path: &Path) -> io::Result<Box<dyn BufRead>> {
    let file = File::open(path)?;
    Ok(if path.extension().is_some_and(|e| e == "zst") {
        Box::new(BufReader::new(zstd::stream::read::Decoder::new(file)?))
    } else {
        Box::new(BufReader::new(file))
    })
}

/// Reads a whole trace file (see [`open_trace_file`]).
///
/// # Errors
///
/// [`TraceError`] for a file that cannot be read or a line that does not
/// parse; the caller names the file.
pub fn read_trace_file(path: &Path) -> Result<Vec<Request>, TraceError> {
    read_trace(open_trace_file(path)?).collect()
}

/// What [`write_oracle_general`] wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OracleSummary {
    /// Requests written.
    pub requests: u64,
    /// Distinct keys among them.
    pub keys: u64,
}

/// Writes `requests` in libCacheSim's `oracleGeneral` binary format, so its
/// algorithms (and its offline optimum, Belady, which reads the future
/// from the file) replay exactly the requests FerrumKV's simulator does.
///
/// Each request is 24 little-endian bytes: `u32` time (the request's
/// timestamp, saturated), `u64` object id, `u32` size (1: the cache is
/// counted in entries) and `i64` the 1-based index of the next request for
/// the same key, or -1 when there is none. Object ids number the keys from
/// 1 in order of first request: libCacheSim's hashed structures (its
/// W-TinyLFU's sketch, say) give other hit ratios for other ids of the same
/// requests, and dense ids are what its own converters write.
///
/// # Errors
///
/// Writing fails.
pub fn write_oracle_general<W: Write>(
    mut out: W,
    requests: &[Request],
) -> io::Result<OracleSummary> {
    // One backward pass: the next use of a key is the last one seen.
    let mut next_use = vec![-1_i64; requests.len()];
    let mut seen: HashMap<u64, i64> = HashMap::with_capacity(requests.len() / 4);
    for (i, req) in requests.iter().enumerate().rev() {
        let index = i as i64 + 1;
        next_use[i] = seen.insert(req.key_id, index).unwrap_or(-1);
    }
    let mut ids: HashMap<u64, u64> = HashMap::with_capacity(seen.len());
    let mut record = [0_u8; 24];
    for (req, next) in requests.iter().zip(&next_use) {
        let fresh = ids.len() as u64 + 1;
        let id = *ids.entry(req.key_id).or_insert(fresh);
        let time = u32::try_from(req.at.0).unwrap_or(u32::MAX);
        record[..4].copy_from_slice(&time.to_le_bytes());
        record[4..12].copy_from_slice(&id.to_le_bytes());
        record[12..16].copy_from_slice(&1_u32.to_le_bytes());
        record[16..].copy_from_slice(&next.to_le_bytes());
        out.write_all(&record)?;
    }
    out.flush()?;
    Ok(OracleSummary {
        requests: requests.len() as u64,
        keys: seen.len() as u64,
    })
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

    fn request(at: u64, key_id: u64) -> Request {
        Request {
            at: Millis(at),
            key_id,
            ttl: None,
        }
    }

    #[test]
    fn oracle_general_points_each_request_at_its_next_use() {
        let requests = [request(0, 7), request(1, 8), request(2, 7), request(3, 9)];
        let mut out = Vec::new();
        let summary = write_oracle_general(&mut out, &requests)
            .map_err(|e| e.to_string())
            .unwrap();
        assert_eq!(
            summary,
            OracleSummary {
                requests: 4,
                keys: 3
            }
        );
        assert_eq!(out.len(), 4 * 24);
        let fields: Vec<(u32, u64, u32, i64)> = out
            .chunks(24)
            .map(|r| {
                let u32_at = |i: usize| u32::from_le_bytes([r[i], r[i + 1], r[i + 2], r[i + 3]]);
                let mut id = [0; 8];
                id.copy_from_slice(&r[4..12]);
                let mut next = [0; 8];
                next.copy_from_slice(&r[16..]);
                (
                    u32_at(0),
                    u64::from_le_bytes(id),
                    u32_at(12),
                    i64::from_le_bytes(next),
                )
            })
            .collect();
        assert_eq!(
            fields,
            [(0, 1, 1, 3), (1, 2, 1, -1), (2, 1, 1, -1), (3, 3, 1, -1)]
        );
    }

    #[test]
    fn reads_zstd_compressed_traces() {
        let dir = std::env::temp_dir().join(format!("ferrum-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| e.to_string())
            .unwrap();
        let text = "timestamp_ms,key,ttl_ms\n0,a:1,0\n1,a:2,0\n2,a:1,0\n";
        let plain = dir.join("t.csv");
        let packed = dir.join("t.csv.zst");
        std::fs::write(&plain, text)
            .map_err(|e| e.to_string())
            .unwrap();
        let compressed = zstd::encode_all(text.as_bytes(), 3)
            .map_err(|e| e.to_string())
            .unwrap();
        std::fs::write(&packed, compressed)
            .map_err(|e| e.to_string())
            .unwrap();
        let keys = |path: &Path| -> Vec<u64> {
            read_trace_file(path)
                .map_err(|e| e.to_string())
                .unwrap()
                .iter()
                .map(|r| r.key_id - INTERNED_BASE)
                .collect()
        };
        assert_eq!(keys(&plain), [0, 1, 0]);
        assert_eq!(keys(&packed), [0, 1, 0]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
