//! `cargo xtask bench --scenarios traces`: every real trace replayed
//! through FerrumKV's policies (the simulator, `ferrum-bench replay`) and
//! beside them libCacheSim's known algorithms (the PyPI package
//! `libcachesim`, in a virtual environment made here), written to
//! `benches/traces.md` and `benches/traces.svg`.
//!
//! The traces are the committed ones in `benches/traces` and those of
//! `--traces DIR` (default `../shared/traces`, when it is there); a trace
//! in both is read from DIR. Each trace is replayed at the capacities its
//! directory's `README.md` table names (a `trace` column beside a `C` or
//! `capacities` column), else at 0.1%, 1% and 10% of its distinct keys
//! (at least 100). Both sides read the same requests: `ferrum-bench
//! to-libcachesim` writes them in libCacheSim's `oracleGeneral` format.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;
use std::{fs, thread};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::machine::{output, Machine};

/// The libCacheSim release the reference hit ratios come from.
pub(crate) const LIBCACHESIM: &str = "libcachesim==0.3.5";

/// The traces of `--quick`: the two smallest, which hold two of AHE's
/// weakest cells.
pub(crate) const QUICK: [&str; 2] = ["lirs-backf", "lirs-ps"];

/// libCacheSim's algorithms in report order; the last, Belady, is the
/// offline optimum and never "best known".
pub(crate) const KNOWN: [&str; 10] = [
    "ARC",
    "LIRS",
    "S3-FIFO",
    "SIEVE",
    "W-TinyLFU",
    "Cacheus",
    "2Q",
    "LRU",
    "LFU",
    "Belady",
];

/// The FerrumKV policy whose gap the report is about.
const AHE: &str = "allkeys-ahe";

/// What one run replays.
#[derive(Debug)]
pub(crate) struct TracesSpec {
    /// Directories to take traces from, first match of a name wins.
    pub(crate) dirs: Vec<PathBuf>,
    /// Only [`QUICK`].
    pub(crate) quick: bool,
    /// FerrumKV policies (AHE among them).
    pub(crate) policies: Vec<String>,
    /// Seed of the policies.
    pub(crate) seed: u64,
}

/// A trace found on disk.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TraceFile {
    pub(crate) name: String,
    pub(crate) path: PathBuf,
    /// From a README table, if one names the trace.
    pub(crate) capacities: Option<Vec<u64>>,
}

/// One (trace, capacity) cell of the report; hit ratios in percent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Cell {
    pub(crate) trace: String,
    pub(crate) requests: u64,
    pub(crate) capacity: u64,
    /// FerrumKV policy name to hit %.
    pub(crate) ferrum: BTreeMap<String, f64>,
    /// libCacheSim algorithm ([`KNOWN`]) to hit %.
    pub(crate) known: BTreeMap<String, f64>,
}

impl Cell {
    /// The best of the known algorithms but Belady, and its hit %.
    pub(crate) fn best_known(&self) -> Option<(&str, f64)> {
        KNOWN[..KNOWN.len() - 1]
            .iter()
            .filter_map(|&a| self.known.get(a).map(|&v| (a, v)))
            .fold(None, |best, (a, v)| match best {
                Some((_, b)) if b >= v => best,
                _ => Some((a, v)),
            })
    }

    /// AHE's hit % minus the best known's, both rounded as printed.
    pub(crate) fn gap(&self) -> Option<f64> {
        self.gap_of(*self.ferrum.get(AHE)?)
    }

    /// `hit` (a hit %) minus the best known's, both rounded as printed.
    fn gap_of(&self, hit: f64) -> Option<f64> {
        Some(round2(round2(hit) - round2(self.best_known()?.1)))
    }
}

/// What a run produced.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct TracesRun {
    pub(crate) cells: Vec<Cell>,
    /// Traces a README names that were not found, with why.
    pub(crate) skipped: Vec<String>,
    pub(crate) command: String,
    pub(crate) date: String,
    pub(crate) machine: Machine,
    pub(crate) libcachesim: String,
    pub(crate) seconds: f64,
}

/// Finds the traces and their capacities (see the module docs); returns
/// them by name and what README tables name but no directory has.
pub(crate) fn discover(dirs: &[PathBuf], quick: bool) -> Result<(Vec<TraceFile>, Vec<String>)> {
    let mut found: BTreeMap<String, TraceFile> = BTreeMap::new();
    let mut named: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for dir in dirs {
        let table = match fs::read_to_string(dir.join("README.md")) {
            Ok(text) => capacity_table(&text),
            Err(_) => BTreeMap::new(),
        };
        let Ok(entries) = fs::read_dir(dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for path in files {
            let Some(file) = path.file_name().and_then(|f| f.to_str()) else {
                continue;
            };
            let Some(name) = file
                .strip_suffix(".csv.zst")
                .or_else(|| file.strip_suffix(".csv"))
            else {
                continue;
            };
            found.entry(name.to_owned()).or_insert_with(|| TraceFile {
                name: name.to_owned(),
                path: path.clone(),
                capacities: table.get(name).cloned(),
            });
        }
        for (name, caps) in &table {
            named.entry(name.clone()).or_insert_with(|| caps.clone());
        }
    }
    // A trace whose own directory's README is silent takes another's.
    for trace in found.values_mut() {
        if trace.capacities.is_none() {
            trace.capacities = named.get(&trace.name).cloned();
        }
    }
    let searched: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    let mut skipped: Vec<String> = named
        .keys()
        .filter(|n| !found.contains_key(*n))
        .map(|n| format!("{n}: not in {}", searched.join(" or ")))
        .collect();
    let mut traces: Vec<TraceFile> = found.into_values().collect();
    if quick {
        traces.retain(|t| QUICK.contains(&t.name.as_str()));
        skipped.clear();
        let missing: Vec<&str> = QUICK
            .iter()
            .copied()
            .filter(|q| !traces.iter().any(|t| t.name == *q))
            .collect();
        if !missing.is_empty() {
            bail!(
                "--quick needs {} in {}",
                missing.join(" and "),
                searched.join(" or ")
            );
        }
    }
    if traces.is_empty() {
        bail!(
            "no traces (*.csv or *.csv.zst) in {}",
            searched.join(" or ")
        );
    }
    Ok((traces, skipped))
}

/// The capacities a README's markdown tables give each trace: any table
/// with a `trace` column and a `C` or `capacities` column; a trace may
/// have a row per capacity or several capacities in one cell.
pub(crate) fn capacity_table(readme: &str) -> BTreeMap<String, Vec<u64>> {
    let mut table: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut columns: Option<(usize, usize)> = None;
    for line in readme.lines() {
        let line = line.trim();
        if !line.starts_with('|') {
            columns = None;
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.iter().all(|c| c.chars().all(|ch| "-: ".contains(ch))) {
            continue;
        }
        let Some((name_col, cap_col)) = columns else {
            let find = |names: &[&str]| cells.iter().position(|c| names.contains(c));
            columns = find(&["trace"]).zip(find(&["C", "capacities"]));
            // A table without both columns is skipped to its end.
            if columns.is_none() {
                columns = Some((usize::MAX, usize::MAX));
            }
            continue;
        };
        let (Some(name), Some(caps)) = (cells.get(name_col), cells.get(cap_col)) else {
            continue;
        };
        let name = name.trim_matches('`');
        let caps = caps
            .split([',', '/', ' '])
            .filter_map(|c| c.trim().parse::<u64>().ok());
        let entry = table.entry(name.to_owned()).or_default();
        for c in caps {
            if !entry.contains(&c) {
                entry.push(c);
            }
        }
    }
    table.retain(|_, caps| !caps.is_empty());
    table
}

/// 0.1%, 1% and 10% of `keys`, at least 100 entries, without repeats.
pub(crate) fn default_capacities(keys: u64) -> Vec<u64> {
    let mut caps: Vec<u64> = [1000, 100, 10]
        .iter()
        .map(|d| (keys / d).max(100))
        .collect();
    caps.dedup();
    caps
}

/// The virtual environment with libCacheSim (made on first use).
fn libcachesim_python(target: &Path) -> Result<PathBuf> {
    let venv = target.join("libcachesim-venv");
    let python = venv.join("bin/python");
    let has = |python: &Path| {
        Command::new(python)
            .args(["-c", "import libcachesim"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if has(&python) {
        return Ok(python);
    }
    eprintln!("  making {} with {LIBCACHESIM}", venv.display());
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .context("cannot run python3 -m venv")?;
    if !made.success() {
        bail!("python3 -m venv failed (apt-get install python3-venv)");
    }
    let installed = Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", LIBCACHESIM])
        .status()
        .context("cannot run pip")?;
    if !installed.success() || !has(&python) {
        bail!("pip install {LIBCACHESIM} failed: the traces scenario needs it from PyPI");
    }
    Ok(python)
}

/// Runs the scenario: FerrumKV's replays and libCacheSim's cells as child
/// processes, two at a time (a core each).
pub(crate) fn run(
    spec: &TracesSpec,
    root: &Path,
    bench: &Path,
    run_dir: &Path,
) -> Result<TracesRun> {
    let started = Instant::now();
    let target = crate::target_dir(root);
    let (traces, skipped) = discover(&spec.dirs, spec.quick)?;
    for s in &skipped {
        eprintln!("note: skipped {s}");
    }
    let python = libcachesim_python(&target)?;
    let libcachesim = output(
        &python.display().to_string(),
        &["-c", "import libcachesim; print(libcachesim.__version__)"],
    )
    .unwrap_or_default();
    let converted = run_dir.join("traces");
    fs::create_dir_all(&converted)?;

    // Convert every trace first: the capacities may depend on its keys.
    let mut jobs = Vec::new();
    let mut sizes = BTreeMap::new();
    for trace in &traces {
        let oracle = converted.join(format!("{}.oracleGeneral", trace.name));
        let json = crate::bench::run_json(
            bench,
            &[
                "to-libcachesim".into(),
                "--trace".into(),
                trace.path.display().to_string(),
                "--out".into(),
                oracle.display().to_string(),
            ],
            None,
        )?;
        let requests = json["requests"].as_u64().unwrap_or(0);
        let keys = json["keys"].as_u64().unwrap_or(0);
        let capacities = trace
            .capacities
            .clone()
            .unwrap_or_else(|| default_capacities(keys));
        sizes.insert(trace.name.clone(), requests);
        jobs.push((trace, oracle, capacities));
    }
    let cells_total: usize = jobs.iter().map(|(_, _, c)| c.len()).sum();
    eprintln!(
        "  {} traces, {cells_total} cells: FerrumKV {} and libCacheSim {}, two at a time",
        jobs.len(),
        spec.policies.join(","),
        KNOWN.join(",")
    );
    // A FerrumKV replay per trace (every capacity and policy in one
    // process), a libCacheSim process per cell; the longest first, so the
    // two workers end together.
    let mut queue: Vec<Job> = Vec::new();
    for (trace, oracle, caps) in &jobs {
        queue.push(Job::Ferrum {
            name: trace.name.clone(),
            args: vec![
                "replay".into(),
                "--json".into(),
                "--trace".into(),
                trace.path.display().to_string(),
                "--capacity".into(),
                caps.iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(","),
                "--policies".into(),
                spec.policies.join(","),
                "--seed".into(),
                spec.seed.to_string(),
            ],
            work: sizes[&trace.name],
        });
        for &capacity in caps {
            queue.push(Job::Known {
                name: trace.name.clone(),
                oracle: oracle.clone(),
                capacity,
                // libCacheSim runs ten algorithms, each slower than ours.
                work: 20 * sizes[&trace.name],
            });
        }
    }
    queue.sort_by_key(|j| std::cmp::Reverse(j.work()));
    let total = queue.len();
    let queue = Mutex::new(queue.into_iter().collect::<VecDeque<_>>());
    let done = Mutex::new(Vec::new());
    let script = root.join("scripts/libcachesim_cells.py");
    thread::scope(|scope| -> Result<()> {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| -> Result<()> {
                    loop {
                        let Some(job) = lock(&queue).pop_front() else {
                            return Ok(());
                        };
                        let what = job.describe();
                        let out = job.run(bench, &python, &script)?;
                        let mut done = lock(&done);
                        done.push(out);
                        eprintln!("  [{}/{total}] {what}", done.len());
                    }
                })
            })
            .collect();
        for w in workers {
            w.join()
                .map_err(|_| anyhow::anyhow!("a traces worker panicked"))??;
        }
        Ok(())
    })?;

    let mut cells: BTreeMap<(String, u64), Cell> = BTreeMap::new();
    for out in done.into_inner().unwrap_or_else(PoisonError::into_inner) {
        for c in out {
            let trace = c["trace"].as_str().unwrap_or("?");
            let capacity = c["capacity"].as_u64().unwrap_or(0);
            let hit = 100.0 * c["hit_ratio"].as_f64().unwrap_or(f64::NAN);
            let cell = cells
                .entry((trace.to_owned(), capacity))
                .or_insert_with(|| Cell {
                    trace: trace.to_owned(),
                    requests: sizes.get(trace).copied().unwrap_or(0),
                    capacity,
                    ferrum: BTreeMap::new(),
                    known: BTreeMap::new(),
                });
            if let Some(policy) = c["policy"].as_str() {
                cell.ferrum.insert(policy.to_owned(), hit);
            } else if let Some(algorithm) = c["algorithm"].as_str() {
                cell.known.insert(algorithm.to_owned(), hit);
            }
        }
    }
    Ok(TracesRun {
        cells: cells.into_values().collect(),
        skipped,
        command: format!(
            "cargo xtask {}",
            std::env::args().skip(1).collect::<Vec<_>>().join(" ")
        ),
        date: output("date", &["-u", "+%Y-%m-%d %H:%M UTC"]).unwrap_or_default(),
        machine: Machine::detect(),
        libcachesim,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// One process of a run.
enum Job {
    /// `ferrum-bench replay` of one trace at all its capacities.
    Ferrum {
        name: String,
        args: Vec<String>,
        work: u64,
    },
    /// `scripts/libcachesim_cells.py` for one cell.
    Known {
        name: String,
        oracle: PathBuf,
        capacity: u64,
        work: u64,
    },
}

impl Job {
    fn work(&self) -> u64 {
        match self {
            Job::Ferrum { work, .. } | Job::Known { work, .. } => *work,
        }
    }

    fn describe(&self) -> String {
        match self {
            Job::Ferrum { name, .. } => format!("FerrumKV {name}"),
            Job::Known { name, capacity, .. } => format!("libCacheSim {name} @{capacity}"),
        }
    }

    /// Runs the process; returns its cells as JSON objects, each with
    /// `trace`, `capacity`, `hit_ratio` and `policy` or `algorithm`.
    fn run(&self, bench: &Path, python: &Path, script: &Path) -> Result<Vec<Value>> {
        match self {
            Job::Ferrum { name, args, .. } => {
                let json = crate::bench::run_json(bench, args, None)?;
                let mut cells = json["cells"].as_array().cloned().unwrap_or_default();
                for c in &mut cells {
                    c["trace"] = Value::from(name.as_str());
                }
                Ok(cells)
            }
            Job::Known {
                name,
                oracle,
                capacity,
                ..
            } => {
                let out = Command::new(python)
                    .arg(script)
                    .arg(name)
                    .arg(oracle)
                    .arg(capacity.to_string())
                    .stderr(Stdio::inherit())
                    .output()
                    .with_context(|| format!("cannot run {}", script.display()))?;
                if !out.status.success() {
                    bail!(
                        "{} failed on {name} @{capacity} ({})",
                        script.display(),
                        out.status
                    );
                }
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .map(|l| {
                        serde_json::from_str(l)
                            .with_context(|| format!("libCacheSim printed `{l}`"))
                    })
                    .collect()
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// The summary line's figures.
#[derive(Debug, PartialEq)]
pub(crate) struct Summary {
    pub(crate) cells: usize,
    pub(crate) ahead: usize,
    pub(crate) mean: f64,
    pub(crate) worst: f64,
}

impl Summary {
    /// The figures of these gaps (points to the best known).
    fn of(gaps: &[f64]) -> Summary {
        Summary {
            cells: gaps.len(),
            ahead: gaps.iter().filter(|&&g| g >= 0.0).count(),
            mean: round2(gaps.iter().sum::<f64>() / gaps.len().max(1) as f64),
            worst: gaps.iter().copied().fold(f64::INFINITY, f64::min),
        }
    }
}

/// AHE's summary over `cells`.
pub(crate) fn summary(cells: &[Cell]) -> Summary {
    let gaps: Vec<f64> = cells.iter().filter_map(Cell::gap).collect();
    Summary::of(&gaps)
}

/// The FerrumKV policies' column titles: `allkeys-lru` is "FerrumKV LRU".
fn ferrum_title(policy: &str) -> String {
    let short = policy.strip_prefix("allkeys-").unwrap_or(policy);
    let short = match short {
        "ahe" | "lru" | "lfu" => short.to_uppercase(),
        other => other.to_owned(),
    };
    format!("FerrumKV {short}")
}

/// The column of libCacheSim's W-TinyLFU, marked for the note below the
/// table.
const WTINYLFU_TITLE: &str = "W-TinyLFU ¹";

/// `benches/traces.md`.
pub(crate) fn markdown(run: &TracesRun, policies: &[String]) -> String {
    let mut out = String::new();
    let m = &run.machine;
    let s = summary(&run.cells);
    let others: Vec<&String> = policies.iter().filter(|p| *p != AHE).collect();
    out.push_str("# Real traces: FerrumKV's policies beside libCacheSim\n\n");
    out.push_str(&format!(
        "Written by `{}` at commit {} on {}: {} CPUs ({}), {} MiB, {}; libCacheSim {} \
         (PyPI `libcachesim`); {:.1} min. Regenerate it with the same command.\n\n",
        run.command,
        m.commit,
        run.date,
        m.nproc,
        m.cpu_model,
        m.memory_mib,
        m.rustc,
        run.libcachesim,
        run.seconds / 60.0
    ));
    out.push_str(
        "Hit %, cold start included, every request read-through (a miss inserts the key), \
         the cache counted in entries. FerrumKV's columns are `ferrum-bench replay --trace FILE \
         --capacity C --seed 42`; libCacheSim's replay the same requests, converted by \
         `ferrum-bench to-libcachesim` into its `oracleGeneral` format (unit sizes). *Best known* \
         is the best of libCacheSim's algorithms but Belady, the offline optimum. \
         Capacities are those the trace directory's README names, else 0.1%, 1% and 10% of the \
         trace's keys (at least 100). The chart is [traces.svg](traces.svg).\n\n",
    );
    out.push_str(&format!(
        "**{} cells; AHE >= best known in {}; mean AHE - best known {:+.2} pp; worst {:+.2}.**\n\n",
        s.cells, s.ahead, s.mean, s.worst
    ));
    out.push_str(&column_summary(&run.cells, policies));
    let mut header = vec![
        "trace".to_owned(),
        "requests".into(),
        "C".into(),
        "best known".into(),
        ferrum_title(AHE),
        "AHE - best".into(),
    ];
    header.extend(others.iter().map(|p| ferrum_title(p)));
    header.extend(KNOWN.iter().map(|&k| {
        if k == "W-TinyLFU" {
            WTINYLFU_TITLE.to_owned()
        } else {
            k.to_owned()
        }
    }));
    out.push_str(&format!("| {} |\n", header.join(" | ")));
    let aligns: Vec<&str> = header
        .iter()
        .enumerate()
        .map(|(i, _)| if i == 0 || i == 3 { "---" } else { "---:" })
        .collect();
    out.push_str(&format!("|{}|\n", aligns.join("|")));
    let pct = |v: Option<&f64>| v.map_or("-".to_owned(), |v| format!("{v:.2}"));
    for c in &run.cells {
        let best = c
            .best_known()
            .map_or("-".to_owned(), |(a, v)| format!("{a} {v:.2}"));
        let mut row = vec![
            c.trace.clone(),
            c.requests.to_string(),
            c.capacity.to_string(),
            best,
            pct(c.ferrum.get(AHE)),
            c.gap().map_or("-".to_owned(), |g| format!("{g:+.2}")),
        ];
        row.extend(others.iter().map(|p| pct(c.ferrum.get(*p))));
        row.extend(KNOWN.iter().map(|k| pct(c.known.get(*k))));
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out.push_str(
        "\n¹ libCacheSim's W-TinyLFU has an open bug (libCacheSim issue 162): after the \
         window's victim wins the admission, it can evict more than one entry. Its column is \
         printed as libCacheSim computes it.\n\n\
         Each libCacheSim cell runs in a process of its own, its algorithms in the column order: \
         libCacheSim's Cacheus draws from a process-wide random generator, so its hit ratio \
         depends on what ran before it in the same process (`lirs-ps` at 150 entries: 27.51 \
         alone, 32.54 after `lirs-backf`'s cell).\n",
    );
    if !run.skipped.is_empty() {
        out.push_str("\nSkipped (see `benches/traces/README.md` for where to get them):\n\n");
        for s in &run.skipped {
            out.push_str(&format!("- {s}\n"));
        }
    }
    out
}

/// Every column's mean and worst gap to the best known, best first: how
/// each policy and algorithm fares over the whole set.
fn column_summary(cells: &[Cell], policies: &[String]) -> String {
    let mut columns: Vec<(String, Summary)> = Vec::new();
    let mut add = |title: String, value: &dyn Fn(&Cell) -> Option<f64>| {
        let gaps: Vec<f64> = cells.iter().filter_map(|c| c.gap_of(value(c)?)).collect();
        if !gaps.is_empty() {
            columns.push((title, Summary::of(&gaps)));
        }
    };
    for p in policies {
        add(ferrum_title(p), &|c: &Cell| c.ferrum.get(p).copied());
    }
    for k in &KNOWN[..KNOWN.len() - 1] {
        add(format!("libCacheSim {k}"), &|c: &Cell| {
            c.known.get(*k).copied()
        });
    }
    columns.sort_by(|a, b| b.1.mean.total_cmp(&a.1.mean));
    let mut out = String::from(
        "| policy | mean gap to the best known | worst cell |\n| --- | ---: | ---: |\n",
    );
    for (title, s) in columns {
        out.push_str(&format!("| {title} | {:+.2} | {:+.2} |\n", s.mean, s.worst));
    }
    out.push('\n');
    out
}

/// `benches/traces.svg`: AHE - best known per cell.
pub(crate) fn chart(run: &TracesRun) -> String {
    ferrum_bench::svg::GapChart {
        title: "FerrumKV AHE - best known (libCacheSim), per trace and capacity".into(),
        x_label: "hit-ratio points".into(),
        rows: run
            .cells
            .iter()
            .map(|c| {
                (
                    format!("{} @{}", c.trace, c.capacity),
                    c.gap().unwrap_or(f64::NAN),
                )
            })
            .collect(),
    }
    .to_svg()
}

/// A row of a written report, as [`parse_report`] reads it back.
#[derive(Debug, PartialEq)]
pub(crate) struct ReportRow {
    pub(crate) trace: String,
    pub(crate) capacity: u64,
    pub(crate) ahe: f64,
    pub(crate) gap: f64,
}

/// Reads a `traces.md` back: its rows and its summary line, each checked
/// against the other.
pub(crate) fn parse_report(md: &str) -> Result<(Vec<ReportRow>, Summary)> {
    let mut lines = md.lines();
    let header = lines
        .by_ref()
        .find(|l| l.starts_with("| trace | requests | C |"))
        .context("no table header `| trace | requests | C |`")?;
    let titles: Vec<&str> = header.trim_matches('|').split('|').map(str::trim).collect();
    let col = |t: &str| {
        titles
            .iter()
            .position(|c| *c == t)
            .with_context(|| format!("no `{t}` column"))
    };
    let (ahe_col, gap_col) = (col(&ferrum_title(AHE))?, col("AHE - best")?);
    let mut rows = Vec::new();
    for line in lines.skip(1).take_while(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let num = |i: usize| -> Result<f64> {
            cells
                .get(i)
                .and_then(|c| c.parse().ok())
                .with_context(|| format!("bad number in column {i} of `{line}`"))
        };
        rows.push(ReportRow {
            trace: cells[0].to_owned(),
            capacity: num(2)? as u64,
            ahe: num(ahe_col)?,
            gap: num(gap_col)?,
        });
    }
    if rows.is_empty() {
        bail!("the table has no rows");
    }
    let line = md
        .lines()
        .find(|l| l.starts_with("**") && l.contains("cells; AHE >= best known in"))
        .context("no summary line")?;
    let summary = Summary {
        cells: line
            .trim_start_matches('*')
            .split_whitespace()
            .next()
            .and_then(|w| w.parse().ok())
            .context("the summary line does not start with a count")?,
        ahead: parse_signed(line, "best known in ")? as usize,
        mean: parse_signed(line, "best known ")?,
        worst: parse_signed(line, "worst ")?,
    };
    let gaps: Vec<f64> = rows.iter().map(|r| r.gap).collect();
    let recomputed = Summary::of(&gaps);
    if recomputed != summary {
        bail!("the summary line says {summary:?}, the rows {recomputed:?}");
    }
    Ok((rows, summary))
}

/// The signed number right after the last `marker` in `line` (a
/// sentence's full stop after it is not part of it).
fn parse_signed(line: &str, marker: &str) -> Result<f64> {
    let at = line
        .rfind(marker)
        .with_context(|| format!("no `{marker}` in `{line}`"))?;
    let rest = &line[at + marker.len()..];
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || "+-.".contains(c)))
        .unwrap_or(rest.len());
    let number = rest[..end].trim_end_matches('.');
    number
        .parse()
        .with_context(|| format!("`{number}` after `{marker}` is not a number"))
}

/// The directories of a run: `--traces DIR` (or `../shared/traces` when
/// it is there), then the committed `benches/traces`.
pub(crate) fn dirs(root: &Path, given: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    match given {
        Some(dir) => dirs.push(dir.to_path_buf()),
        None => {
            let shared = root.join("../shared/traces");
            if shared.is_dir() {
                dirs.push(shared);
            }
        }
    }
    dirs.push(root.join("benches/traces"));
    let mut seen = BTreeSet::new();
    dirs.retain(|d| seen.insert(fs::canonicalize(d).unwrap_or_else(|_| d.clone())));
    dirs
}

/// What CI runs: the `--quick` scenario into `target/ci-traces`, then
/// [`verify`] on its report.
pub(crate) fn ci_check(root: &Path) -> Result<()> {
    let target = crate::target_dir(root);
    let out = target.join("ci-traces");
    fs::create_dir_all(&out)?;
    let bench = target.join("release/ferrum-bench");
    let spec = TracesSpec {
        dirs: dirs(root, None),
        quick: true,
        policies: ["allkeys-lru", "allkeys-lfu", "allkeys-random", AHE]
            .map(String::from)
            .to_vec(),
        seed: 42,
    };
    let run = run(&spec, root, &bench, &out)?;
    let report = out.join("traces.md");
    fs::write(&report, markdown(&run, &spec.policies))?;
    verify(&report, &spec.dirs, &bench)
}

/// CI's check of a `--quick` report: it parses, its summary agrees with
/// its rows, and every AHE cell equals a fresh `ferrum-bench replay`.
pub(crate) fn verify(report: &Path, dirs: &[PathBuf], bench: &Path) -> Result<()> {
    let md = fs::read_to_string(report).with_context(|| report.display().to_string())?;
    let (rows, summary) = parse_report(&md).with_context(|| report.display().to_string())?;
    let (traces, _) = discover(dirs, false)?;
    for row in &rows {
        let trace = traces
            .iter()
            .find(|t| t.name == row.trace)
            .with_context(|| format!("{} is in the report but not on disk", row.trace))?;
        let json = crate::bench::run_json(
            bench,
            &[
                "replay".into(),
                "--json".into(),
                "--trace".into(),
                trace.path.display().to_string(),
                "--capacity".into(),
                row.capacity.to_string(),
                "--policies".into(),
                AHE.into(),
                "--seed".into(),
                "42".into(),
            ],
            None,
        )?;
        let replayed = 100.0 * json["cells"][0]["hit_ratio"].as_f64().unwrap_or(f64::NAN);
        if format!("{replayed:.2}") != format!("{:.2}", row.ahe) {
            bail!(
                "{} @{}: the report's AHE is {:.2}, ferrum-bench replay gives {replayed:.2}",
                row.trace,
                row.capacity,
                row.ahe
            );
        }
    }
    println!(
        "   {} rows match ferrum-bench replay; {} cells, mean gap {:+.2}, worst {:+.2}",
        rows.len(),
        summary.cells,
        summary.mean,
        summary.worst
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_capacities_from_either_table_shape() {
        let readme = "\
intro

| trace | requests | C | best known |
|---|---:|---:|---|
| oltp | 914145 | 1000 | S3FIFO 40.86 |
| oltp | 914145 | 5000 | S3FIFO 55.75 |
| `web07` | 76118 | 200 | x |

| file | origin |
| --- | --- |
| `p3` | ARC paper |

| trace | capacities | origin |
| --- | --- | --- |
| lirs-ps | 150, 620 | LIRS |
| oltp | 1000, 15000 | ARC |
";
        let table = capacity_table(readme);
        assert_eq!(table["oltp"], [1000, 5000, 15000]);
        assert_eq!(table["web07"], [200]);
        assert_eq!(table["lirs-ps"], [150, 620]);
        assert!(!table.contains_key("p3"));
    }

    #[test]
    fn default_capacities_are_fractions_of_the_keys_with_a_floor() {
        assert_eq!(default_capacities(762_543), [762, 7625, 76254]);
        assert_eq!(default_capacities(3_083), [100, 308]);
        assert_eq!(default_capacities(50), [100]);
    }

    fn cell(trace: &str, capacity: u64, ahe: f64, best: f64) -> Cell {
        Cell {
            trace: trace.into(),
            requests: 1000,
            capacity,
            ferrum: [(AHE.to_owned(), ahe), ("allkeys-lru".to_owned(), 10.0)].into(),
            known: KNOWN
                .iter()
                .enumerate()
                .map(|(i, k)| {
                    let v = match *k {
                        "Belady" => 99.0,
                        "LIRS" => best,
                        _ => best - 1.0 - i as f64,
                    };
                    ((*k).to_owned(), v)
                })
                .collect(),
        }
    }

    fn run(cells: Vec<Cell>) -> TracesRun {
        TracesRun {
            cells,
            skipped: vec!["p3: not in benches/traces".into()],
            command: "cargo xtask bench --scenarios traces".into(),
            date: "2026-12-06 10:00 UTC".into(),
            machine: Machine::default(),
            libcachesim: "0.3.5".into(),
            seconds: 60.0,
        }
    }

    #[test]
    fn the_report_reads_back_and_its_summary_agrees() {
        let r = run(vec![
            cell("lirs-ps", 150, 27.154, 34.12),
            cell("lirs-ps", 620, 58.51, 58.0),
        ]);
        let policies = ["allkeys-lru".to_owned(), AHE.to_owned()];
        let md = markdown(&r, &policies);
        assert!(
            md.contains("| LIRS 34.12 | 27.15 | -6.97 | 10.00 |"),
            "{md}"
        );
        assert!(
            md.contains(
                "**2 cells; AHE >= best known in 1; mean AHE - best known -3.23 pp; worst -6.97.**"
            ),
            "{md}"
        );
        assert!(md.contains("libCacheSim issue 162") && md.contains("- p3: not in"));
        // Every column's mean gap, best first (LIRS is the best known in
        // both cells, the others trail it by 1 to 9 points).
        assert!(
            md.contains(
                "| libCacheSim S3-FIFO | -3.00 | -3.00 |\n| FerrumKV AHE | -3.23 | -6.97 |"
            ),
            "{md}"
        );
        assert!(md.contains("| FerrumKV LRU | -36.06 | -48.00 |"), "{md}");
        let (rows, summary) = parse_report(&md).map_err(|e| format!("{e:#}")).unwrap();
        assert_eq!(
            rows,
            [
                ReportRow {
                    trace: "lirs-ps".into(),
                    capacity: 150,
                    ahe: 27.15,
                    gap: -6.97
                },
                ReportRow {
                    trace: "lirs-ps".into(),
                    capacity: 620,
                    ahe: 58.51,
                    gap: 0.51
                },
            ]
        );
        assert_eq!(summary.mean, -3.23);
        // A summary that disagrees with its rows is refused.
        let tampered = md.replace("mean AHE - best known -3.23", "mean AHE - best known -0.40");
        let err = parse_report(&tampered).map(|_| ()).unwrap_err();
        assert!(format!("{err:#}").contains("summary line says"), "{err:#}");
        let svg = chart(&r);
        assert!(svg.contains("lirs-ps @150: -6.97"), "{svg}");
    }

    #[test]
    fn discovery_prefers_the_given_directory_and_names_what_is_missing() {
        let base = std::env::temp_dir().join(format!("xtask-traces-{}", std::process::id()));
        let (given, committed) = (base.join("given"), base.join("committed"));
        for d in [&given, &committed] {
            fs::create_dir_all(d).map_err(|e| e.to_string()).unwrap();
        }
        let write = |p: PathBuf, s: &str| fs::write(p, s).map_err(|e| e.to_string()).unwrap();
        write(committed.join("a.csv.zst"), "");
        write(committed.join("b.csv"), "");
        write(given.join("a.csv"), "");
        write(given.join("notes.txt"), "");
        write(
            committed.join("README.md"),
            "| trace | capacities |\n|---|---|\n| a | 100, 200 |\n| big | 5000 |\n",
        );
        let (traces, skipped) = discover(&[given.clone(), committed.clone()], false)
            .map_err(|e| e.to_string())
            .unwrap();
        let got: Vec<(&str, &Path, Option<Vec<u64>>)> = traces
            .iter()
            .map(|t| (t.name.as_str(), t.path.as_path(), t.capacities.clone()))
            .collect();
        let a = given.join("a.csv");
        let b = committed.join("b.csv");
        assert_eq!(
            got,
            [
                ("a", a.as_path(), Some(vec![100, 200])),
                ("b", b.as_path(), None)
            ]
        );
        assert_eq!(skipped.len(), 1);
        assert!(skipped[0].starts_with("big: not in "), "{skipped:?}");
        let quick = discover(&[given, committed], true).map(|_| ()).unwrap_err();
        assert!(format!("{quick}").contains("--quick needs lirs-backf and lirs-ps"));
        let _ = fs::remove_dir_all(&base);
    }
}
