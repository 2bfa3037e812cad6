//! Live runs as a table: each (policy, workload) cell's live result next to
//! the store-engine simulator's on the same requests, as markdown or JSON.

use std::fmt::Write as _;

use ferrum_evict::PolicyKind;
use serde::Serialize;

use crate::driver::{server_shaped_sim, LiveReport};
use crate::workload::Request;

/// The store-engine simulator's answer for a live cell.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimComparison {
    /// What was simulated: the store engine shaped like the server.
    pub engine: String,
    /// `hits / (hits + misses)`.
    pub hit_ratio: f64,
    /// Keys resident at the end.
    pub dbsize: u64,
    /// `live.hit_ratio - hit_ratio`, in percentage points.
    pub difference_pp: f64,
}

/// One live cell and, optionally, its simulated twin.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LiveCell {
    /// What the server did.
    pub live: LiveReport,
    /// What the simulator did with the same requests and `maxmemory`.
    pub sim: Option<SimComparison>,
}

impl LiveCell {
    /// Wraps a live report, and when `requests` is given, runs the
    /// server-shaped store engine (16 shards, the server's policy seed,
    /// the live run's `maxmemory`) on them for comparison.
    pub fn new(live: LiveReport, requests: Option<impl IntoIterator<Item = Request>>) -> LiveCell {
        let sim = requests.and_then(|requests| {
            let policy: PolicyKind = live.policy.parse().ok()?;
            let (report, dbsize) = server_shaped_sim(
                policy,
                requests,
                live.calibration.maxmemory_bytes,
                &live.maxmemory_adjustments,
                live.window,
            );
            let hit_ratio = report.hit_ratio();
            Some(SimComparison {
                engine: "store, 16 shards, server policy seed, live maxmemory".to_owned(),
                hit_ratio,
                dbsize: dbsize as u64,
                difference_pp: 100.0 * (live.hit_ratio - hit_ratio),
            })
        });
        LiveCell { live, sim }
    }
}

/// A markdown table with one row per cell: hit ratio in percent with two
/// decimals, `DBSIZE`, `maxmemory`, evictions, speed, and the simulator's
/// ratio and the difference when present.
pub fn to_markdown(cells: &[LiveCell]) -> String {
    let with_sim = cells.iter().any(|c| c.sim.is_some());
    let mut out = String::from(
        "| server | policy | workload | clock | spacing ms | hit % | dbsize | maxmemory | evicted | expired | req/s |",
    );
    if with_sim {
        out.push_str(" sim hit % | live − sim pp |");
    }
    out.push_str("\n| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    if with_sim {
        out.push_str(" ---: | ---: |");
    }
    out.push('\n');
    for c in cells {
        let l = &c.live;
        let spacing = l.spacing_ms.map_or("–".to_owned(), |s| format!("{s}"));
        let clock = serde_json::to_value(l.clock)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let _ = write!(
            out,
            "| {} {} | {} | {} | {clock} | {spacing} | {:.2} | {} | {} | {} | {} | {:.0} |",
            l.server.name,
            l.server.version,
            l.policy,
            l.source,
            100.0 * l.hit_ratio,
            l.dbsize,
            l.final_maxmemory_bytes,
            l.evicted,
            l.expired,
            l.requests_per_second,
        );
        if with_sim {
            match &c.sim {
                Some(s) => {
                    let _ = write!(
                        out,
                        " {:.2} | {:+.2} |",
                        100.0 * s.hit_ratio,
                        s.difference_pp
                    );
                }
                None => out.push_str(" – | – |"),
            }
        }
        out.push('\n');
    }
    out
}
