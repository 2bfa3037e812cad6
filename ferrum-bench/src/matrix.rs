//! The policies × patterns hit-ratio matrix: running it and rendering it as
//! a markdown table, JSON, or SVG charts of the windowed series.

use std::fmt::Write as _;

use ferrum_evict::PolicyKind;
use serde::Serialize;

use crate::sim::{run_scaled_cell, SimConfig, SimReport};
use crate::store_sim::{calibrate_maxmemory, run_store_cell, run_store_cell_at, StoreSimConfig};
use crate::svg::{LineChart, Series};
use crate::workload::Pattern;

/// What a matrix run was asked to do, recorded next to its results.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MatrixSpec {
    /// Seed of every workload and policy.
    pub seed: u64,
    /// Requests per cell.
    pub requests: u64,
    /// Cache capacity in entries.
    pub capacity: usize,
    /// Requests per window of the hit-ratio series.
    pub window: u64,
    /// Which engine replays the requests.
    pub engine: Engine,
    /// Shards of the store engine (the server has 16); the policy engine
    /// has one cache.
    pub shards: usize,
    /// WORKLOADS.md v2 scale of the workloads (1 is v1).
    pub scale: u64,
}

/// How the simulator replays requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// Through the real `ferrum_store::Store`: the server's keyspace,
    /// expiry, memory accounting and eviction, with `maxmemory` calibrated to
    /// the capacity. What the server would do.
    #[default]
    Store,
    /// Straight into the policy over a fixed-capacity slab: faster, counts
    /// entries instead of bytes.
    Policy,
    /// Through the store at equal memory (WORKLOADS.md v2): per pattern,
    /// the `maxmemory` at which allkeys-lru holds the capacity, given
    /// unchanged to every policy, so a policy whose state costs more holds
    /// fewer keys. What `cargo xtask bench --scenarios equal-memory` measures
    /// live, with FerrumKV's allkeys-lru as the reference instead of Redis's.
    EqualMemory,
}

/// One (policy, pattern) result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cell {
    /// The `maxmemory-policy` name.
    pub policy: String,
    /// The pattern name.
    pub pattern: String,
    /// `hits / (hits + misses)`.
    pub hit_ratio: f64,
    /// Replay speed, requests per second of wall time (workload
    /// generation included). Varies between runs, unlike everything else.
    pub requests_per_second: f64,
    /// The simulator's counters and windowed series.
    pub report: SimReport,
}

/// A whole matrix run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Matrix {
    /// The parameters.
    pub spec: MatrixSpec,
    /// Cells, policy-major, in the order requested.
    pub cells: Vec<Cell>,
}

impl Matrix {
    /// Runs every (policy, pattern) pair, one after another, calling
    /// `progress` after each cell.
    pub fn run(
        spec: MatrixSpec,
        policies: &[PolicyKind],
        patterns: &[Pattern],
        mut progress: impl FnMut(&Cell),
    ) -> Matrix {
        let config = SimConfig {
            capacity: spec.capacity,
            window: spec.window,
            volatile_only: false,
        };
        let store_config = StoreSimConfig {
            capacity: spec.capacity,
            window: spec.window,
            shards: spec.shards.max(1),
            scale: spec.scale.max(1),
            ..StoreSimConfig::default()
        };
        let limits: Vec<u64> = match spec.engine {
            Engine::EqualMemory => patterns
                .iter()
                .map(|&p| calibrate_maxmemory(PolicyKind::AllKeysLru, p, spec.seed, &store_config))
                .collect(),
            _ => Vec::new(),
        };
        let mut cells = Vec::with_capacity(policies.len() * patterns.len());
        for &policy in policies {
            for (i, &pattern) in patterns.iter().enumerate() {
                let run = match spec.engine {
                    Engine::Policy => run_scaled_cell(
                        policy,
                        pattern,
                        spec.seed,
                        spec.requests,
                        spec.scale,
                        &config,
                    ),
                    Engine::Store => {
                        run_store_cell(policy, pattern, spec.seed, spec.requests, &store_config)
                    }
                    Engine::EqualMemory => run_store_cell_at(
                        policy,
                        pattern,
                        spec.seed,
                        spec.requests,
                        &store_config,
                        limits[i],
                    ),
                };
                let total = run.report.hits + run.report.misses;
                let cell = Cell {
                    policy: policy.to_string(),
                    pattern: pattern.to_string(),
                    hit_ratio: run.report.hit_ratio(),
                    requests_per_second: total as f64 / run.elapsed.as_secs_f64().max(1e-9),
                    report: run.report,
                };
                progress(&cell);
                cells.push(cell);
            }
        }
        Matrix { spec, cells }
    }

    /// The hit ratio of a cell, if it was run.
    pub fn hit_ratio(&self, policy: PolicyKind, pattern: Pattern) -> Option<f64> {
        self.cells
            .iter()
            .find(|c| c.policy == policy.as_str() && c.pattern == pattern.as_str())
            .map(|c| c.hit_ratio)
    }

    /// A markdown table: one row per policy, one column per pattern, hit
    /// ratios in percent with one decimal.
    pub fn to_markdown(&self) -> String {
        let mut patterns: Vec<&str> = Vec::new();
        let mut policies: Vec<&str> = Vec::new();
        for c in &self.cells {
            if !patterns.contains(&c.pattern.as_str()) {
                patterns.push(&c.pattern);
            }
            if !policies.contains(&c.policy.as_str()) {
                policies.push(&c.policy);
            }
        }
        let mut out = String::new();
        let _ = write!(out, "| policy |");
        for p in &patterns {
            let _ = write!(out, " {p} |");
        }
        let _ = write!(out, "\n| --- |");
        for _ in &patterns {
            let _ = write!(out, " ---: |");
        }
        out.push('\n');
        for policy in &policies {
            let _ = write!(out, "| {policy} |");
            for pattern in &patterns {
                let cell = self
                    .cells
                    .iter()
                    .find(|c| c.policy == *policy && c.pattern == *pattern);
                match cell {
                    Some(c) => {
                        let _ = write!(out, " {:.1} |", 100.0 * c.hit_ratio);
                    }
                    None => out.push_str(" – |"),
                }
            }
            out.push('\n');
        }
        out
    }

    /// A markdown table of each policy's own state per tracked entry
    /// (`heap_bytes / len` at the end of each run), one column per pattern.
    pub fn state_bytes_markdown(&self) -> String {
        let mut out = String::from("| policy |");
        let patterns = self.patterns();
        for p in &patterns {
            let _ = write!(out, " {p} |");
        }
        out.push_str("\n| --- |");
        for _ in &patterns {
            out.push_str(" ---: |");
        }
        out.push('\n');
        for policy in self.policies() {
            let _ = write!(out, "| {policy} |");
            for pattern in &patterns {
                let cell = self
                    .cells
                    .iter()
                    .find(|c| c.policy == policy && c.pattern == *pattern);
                match cell {
                    Some(c) if c.report.policy_len > 0 => {
                        let per = c.report.policy_heap_bytes as f64 / c.report.policy_len as f64;
                        let _ = write!(out, " {per:.1} |");
                    }
                    _ => out.push_str(" – |"),
                }
            }
            out.push('\n');
        }
        out
    }

    /// The hit ratio over time on `pattern`, one line per policy.
    pub fn hit_ratio_chart(&self, pattern: &str) -> LineChart {
        let series = self
            .cells
            .iter()
            .filter(|c| c.pattern == pattern)
            .map(|c| Series {
                name: c.policy.clone(),
                values: c.report.windows.clone(),
            })
            .collect();
        LineChart {
            title: format!(
                "Hit ratio over time, {pattern} (seed {}, capacity {})",
                self.spec.seed, self.spec.capacity
            ),
            x_label: "requests".to_owned(),
            y_label: format!("hit ratio per {} requests (%)", self.spec.window),
            x_step: self.spec.window as f64,
            y_max: 1.0,
            y_tick_scale: 100.0,
            series,
        }
    }

    /// AHE's small target share over time, one line per pattern
    /// it ran on; `None` if it has no controller or was not run.
    pub fn small_share_chart(&self, policy: &str) -> Option<LineChart> {
        let series: Vec<Series> = self
            .cells
            .iter()
            .filter(|c| c.policy == policy && !c.report.small_shares.is_empty())
            .map(|c| Series {
                name: c.pattern.clone(),
                values: c.report.small_shares.clone(),
            })
            .collect();
        (!series.is_empty()).then(|| LineChart {
            title: format!("{policy}: small queue's target share over time"),
            x_label: "requests".to_owned(),
            y_label: "small's target share".to_owned(),
            x_step: self.spec.window as f64,
            y_max: 1.0,
            y_tick_scale: 1.0,
            series,
        })
    }

    fn patterns(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for c in &self.cells {
            if !out.contains(&c.pattern) {
                out.push(c.pattern.clone());
            }
        }
        out
    }

    fn policies(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for c in &self.cells {
            if !out.contains(&c.policy) {
                out.push(c.policy.clone());
            }
        }
        out
    }

    /// Pretty-printed JSON of the spec and every cell.
    ///
    /// # Errors
    ///
    /// Only if serialisation fails, which plain numbers and strings do not.
    pub fn to_json(&self) -> serde_json::Result<String> {
        serde_json::to_string_pretty(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(policies: &[PolicyKind], patterns: &[Pattern]) -> Matrix {
        let spec = MatrixSpec {
            engine: Engine::Policy,
            seed: 1,
            requests: 3_000,
            capacity: 100,
            window: 1_000,
            shards: 1,
            scale: 1,
        };
        Matrix::run(spec, policies, patterns, |_| {})
    }

    #[test]
    fn markdown_has_a_row_per_policy_and_a_column_per_pattern() {
        let m = small(
            &[PolicyKind::AllKeysLru, PolicyKind::AllKeysRandom],
            &[Pattern::Scan, Pattern::Zipf],
        );
        let table = m.to_markdown();
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 4, "{table}");
        assert_eq!(lines[0], "| policy | scan | zipf |");
        assert_eq!(lines[1], "| --- | ---: | ---: |");
        // LRU on a 100 000-key cycle never hits.
        assert!(lines[2].starts_with("| allkeys-lru | 0.0 | "), "{table}");
        assert!(lines[3].starts_with("| allkeys-random | 0.0 | "), "{table}");
    }

    #[test]
    fn equal_memory_gives_every_policy_lru_s_limit() {
        let spec = MatrixSpec {
            engine: Engine::EqualMemory,
            seed: 1,
            requests: 20_000,
            capacity: 500,
            window: 10_000,
            shards: 1,
            scale: 1,
        };
        let m = Matrix::run(
            spec,
            &[PolicyKind::AllKeysLru, PolicyKind::AllKeysAhe],
            &[Pattern::Zipf],
            |_| {},
        );
        let held: Vec<usize> = m.cells.iter().map(|c| c.report.policy_len).collect();
        // allkeys-lru holds the capacity (the calibration's tolerance is a
        // thousandth, and 20 000 requests reach steady state), and AHE,
        // whose state costs less per entry, at least as many under the
        // same limit.
        assert!((490..=510).contains(&held[0]), "{held:?}");
        assert!(held[1] >= held[0], "{held:?}");
    }

    #[test]
    fn charts_and_state_bytes_cover_the_cells() {
        let m = small(
            &[PolicyKind::AllKeysLru, PolicyKind::AllKeysAhe],
            &[Pattern::Zipf, Pattern::Shift],
        );
        let chart = m.hit_ratio_chart("shift");
        let names: Vec<&str> = chart.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["allkeys-lru", "allkeys-ahe"]);
        assert_eq!(chart.series[0].values.len(), 3);
        let weights = m.small_share_chart("allkeys-ahe").map(|c| c.series.len());
        assert_eq!(weights, Some(2));
        assert!(m.small_share_chart("allkeys-lru").is_none());
        let bytes = m.state_bytes_markdown();
        let lines: Vec<&str> = bytes.lines().collect();
        assert_eq!(lines[0], "| policy | zipf | shift |");
        // LRU keeps 8 bytes per slot; a full cache of 100 has ~100 slots.
        assert!(lines[2].starts_with("| allkeys-lru | "), "{bytes}");
        assert!(lines[3].starts_with("| allkeys-ahe | "), "{bytes}");
    }

    #[test]
    fn json_carries_spec_and_windows() {
        let m = small(&[PolicyKind::AllKeysLfu], &[Pattern::Zipf]);
        let json = m.to_json().map_err(|e| e.to_string());
        let value: serde_json::Value = json
            .and_then(|j| serde_json::from_str(&j).map_err(|e| e.to_string()))
            .unwrap_or_default();
        assert_eq!(value["spec"]["seed"], 1);
        assert_eq!(value["cells"][0]["policy"], "allkeys-lfu");
        assert_eq!(
            value["cells"][0]["report"]["windows"]
                .as_array()
                .map(Vec::len),
            Some(3)
        );
    }
}
