//! `cargo xtask suite`: Redis 7.0.15's own test suite against FerrumKV and
//! Redis in one run, written to `benches/redis-suite.md`.
//!
//! Two parts, each run for both servers through the suite's `run.sh`:
//!
//! - **external**: `@wide` against a server started here (profile `core`,
//!   as `cargo xtask ci` runs it);
//! - **native**: the harness starts each server itself, once per test
//!   block, and restarts it over the files it saved, under `PROFILE=custom
//!   TAGS=-slow`: `@wide` with its `needs:save`, `needs:debug` and
//!   `needs:repl` blocks, and the persistence files of `tests/integration`
//!   ([`crate::native_suite::FILES`]).
//!
//! Redis's counts are measured in the same run with the `redis-server` on
//! `PATH`, never taken from a table. The report lists each test FerrumKV
//! fails with the harness's reason.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::machine::Machine;
use crate::procs::{ServerKind, ServerProcess};

/// `cargo xtask suite`.
#[derive(Debug, clap::Args)]
pub(crate) struct Suite {
    /// Where Redis's test suite and its runner are (default:
    /// `$FERRUM_REDIS_TESTS`, else `../shared/redis-tests` beside the
    /// repository).
    #[arg(long)]
    redis_tests: Option<PathBuf>,
    /// Run one part only: `external` or `native`.
    #[arg(long)]
    only: Option<String>,
    /// Where to write the report (default `benches/redis-suite.md`).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// One part of the run, for both servers.
struct Part {
    title: &'static str,
    /// How the part was run, for the report.
    command: String,
    /// Per file: FerrumKV's passes and Redis's.
    rows: Vec<Row>,
    /// The tests FerrumKV failed, with the harness's reason.
    failures: String,
}

/// One file of a part.
#[derive(Debug, PartialEq)]
struct Row {
    file: String,
    ferrum: u32,
    redis: u32,
}

impl Suite {
    pub(crate) fn run(self) -> Result<()> {
        let root = crate::workspace_root()?;
        std::env::set_current_dir(&root)?;
        let suite = crate::ci::redis_tests_dir(&root, self.redis_tests.clone());
        let runner = suite.join("run.sh");
        if !runner.is_file() {
            bail!("Redis's test suite is not at {}", suite.display());
        }
        let redis = which("redis-server").context(
            "redis-server is not on PATH: the report compares with Redis, run in the same run",
        )?;
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(&cargo)
            .args(["build", "--release", "-p", "ferrum-server"])
            .status()?;
        if !status.success() {
            bail!("cargo build --release failed ({status})");
        }
        let target = crate::target_dir(&root);
        let ferrum = target.join("release/ferrum-server");
        let machine = Machine::detect();
        let started = chrono_now();
        let mut parts = Vec::new();
        if self.only.as_deref().is_none_or(|p| p == "external") {
            parts.push(external(&runner, &target)?);
        }
        if self.only.as_deref().is_none_or(|p| p == "native") {
            parts.push(native(&runner, &target, &ferrum, &redis)?);
        }
        if parts.is_empty() {
            bail!("--only takes `external` or `native`");
        }
        let mut invocation = String::from("cargo xtask suite");
        if let Some(p) = &self.only {
            let _ = write!(invocation, " --only {p}");
        }
        let text = report(&invocation, &started, &machine, &parts);
        let out = self
            .out
            .unwrap_or_else(|| root.join("benches/redis-suite.md"));
        std::fs::write(&out, text).with_context(|| format!("cannot write {}", out.display()))?;
        println!("wrote {}", out.display());
        Ok(())
    }
}

/// The external part: `@wide` against each server, started here.
fn external(runner: &Path, target: &Path) -> Result<Part> {
    let mut passed = Vec::new();
    let mut failures = String::new();
    for kind in [ServerKind::Ferrum, ServerKind::Redis] {
        let logs = target.join(format!("suite-external-{}", kind.name()));
        let _ = std::fs::remove_dir_all(&logs);
        std::fs::create_dir_all(&logs)?;
        // FerrumKV gets the DEBUG command from `ServerProcess` already.
        let extra: &[&str] = match kind {
            ServerKind::Ferrum => &[],
            ServerKind::Redis => &["--enable-debug-command", "yes"],
        };
        let server = ServerProcess::start(kind, target, extra, &logs.join("server.log"))?;
        let port = server.port.to_string();
        let text = run_suite(
            Command::new(runner).args(["127.0.0.1", &port, "@wide"]),
            &logs,
            kind,
        )?;
        drop(server);
        if kind == ServerKind::Ferrum {
            failures = crate::ci::failed_tests(&logs);
        }
        passed.push(passed_per_file(&text));
    }
    Ok(Part {
        title: "External mode",
        command: "run.sh 127.0.0.1 PORT @wide".into(),
        rows: rows(&passed[0], &passed[1]),
        failures,
    })
}

/// The native part: the harness starts each binary itself.
fn native(runner: &Path, target: &Path, ferrum: &Path, redis: &Path) -> Result<Part> {
    let files: Vec<&str> = std::iter::once("@wide")
        .chain(
            crate::native_suite::FILES
                .iter()
                .map(|f| f.name)
                .filter(|f| f.starts_with("integration/")),
        )
        .collect();
    let mut passed = Vec::new();
    let mut failures = String::new();
    for (kind, binary) in [(ServerKind::Ferrum, ferrum), (ServerKind::Redis, redis)] {
        let logs = target.join(format!("suite-native-{}", kind.name()));
        let _ = std::fs::remove_dir_all(&logs);
        std::fs::create_dir_all(&logs)?;
        let text = run_suite(
            Command::new(runner)
                .args(["-", "-"])
                .args(&files)
                .env("NATIVE", binary)
                .env("PROFILE", "custom")
                .env("TAGS", "-slow"),
            &logs,
            kind,
        )?;
        if kind == ServerKind::Ferrum {
            failures = crate::ci::failed_tests(&logs);
        }
        passed.push(passed_per_file(&text));
    }
    Ok(Part {
        title: "Native mode",
        command: format!(
            "NATIVE=<server binary> PROFILE=custom TAGS=-slow run.sh - - {}",
            files.join(" ")
        ),
        rows: rows(&passed[0], &passed[1]),
        failures,
    })
}

/// Runs the suite's runner and returns its standard output.
fn run_suite(command: &mut Command, logs: &Path, kind: ServerKind) -> Result<String> {
    let started = Instant::now();
    println!("== Redis's suite against {}", kind.name());
    let out = command
        .env("LOG_DIR", logs)
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run the suite's run.sh")?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    println!("   ({}: {:.0?})", kind.name(), started.elapsed());
    if passed_per_file(&text).is_empty() {
        bail!(
            "the suite's runner printed no per-file table (exit {}):\n{text}",
            out.status
        );
    }
    Ok(text)
}

/// The runner's final table as (file, passed).
pub(crate) fn passed_per_file(text: &str) -> Vec<(String, u32)> {
    text.lines()
        .filter(|l| l.starts_with("unit/") || l.starts_with("integration/"))
        .filter_map(|line| {
            let mut cols = line.split_whitespace();
            let file = cols.next()?;
            // The progress lines ("unit/x   done: 3 ok ...") precede the
            // table; only the table's second column is a number.
            Some((file.to_owned(), cols.next()?.parse().ok()?))
        })
        .collect()
}

/// Both servers' counts per file, in FerrumKV's order, then any file
/// only Redis's run reported (FerrumKV's count 0).
fn rows(ferrum: &[(String, u32)], redis: &[(String, u32)]) -> Vec<Row> {
    let count = |list: &[(String, u32)], file: &str| {
        list.iter().find(|(f, _)| f == file).map_or(0, |(_, n)| *n)
    };
    let mut out: Vec<Row> = ferrum
        .iter()
        .map(|(file, n)| Row {
            file: file.clone(),
            ferrum: *n,
            redis: count(redis, file),
        })
        .collect();
    for (file, n) in redis {
        if !out.iter().any(|r| &r.file == file) {
            out.push(Row {
                file: file.clone(),
                ferrum: 0,
                redis: *n,
            });
        }
    }
    out
}

/// The markdown report.
fn report(invocation: &str, started: &str, m: &Machine, parts: &[Part]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Redis's test suite: FerrumKV and Redis\n");
    let _ = writeln!(
        out,
        "Written by `{invocation}` ({started}, commit `{}`); do not edit by hand.\n",
        m.commit
    );
    let _ = writeln!(
        out,
        "Machine: {} CPUs ({}), {} MiB. redis-server: {}. The suite is Redis 7.0.15's \
         `tests/` (`../shared/redis-tests`); both servers run it in this run, through the \
         same runner. A count is the tests the file passed.\n",
        m.nproc,
        m.cpu_model,
        m.memory_mib,
        m.redis_server.as_deref().unwrap_or("unknown"),
    );
    for part in parts {
        let (ours, theirs) = part
            .rows
            .iter()
            .fold((0, 0), |(a, b), r| (a + r.ferrum, b + r.redis));
        let _ = writeln!(out, "## {}\n", part.title);
        let _ = writeln!(out, "`{}`\n", part.command);
        let _ = writeln!(
            out,
            "**FerrumKV passes {ours} of the {theirs} tests Redis passes ({:.1}%).**\n",
            100.0 * f64::from(ours) / f64::from(theirs.max(1))
        );
        let _ = writeln!(out, "| file | FerrumKV | Redis |\n| --- | ---: | ---: |");
        for r in &part.rows {
            let mark = if r.ferrum < r.redis { " ◂" } else { "" };
            let _ = writeln!(out, "| {} | {}{mark} | {} |", r.file, r.ferrum, r.redis);
        }
        let _ = writeln!(out, "| **total** | **{ours}** | **{theirs}** |\n");
        if !part.failures.is_empty() {
            // A reason may quote raw bytes (a process's command line, with
            // its NULs): control characters become spaces.
            let failures: String = part
                .failures
                .trim_start_matches("failed tests:\n")
                .chars()
                .map(|c| if c.is_control() && c != '\n' { ' ' } else { c })
                .collect();
            let _ = writeln!(
                out,
                "What FerrumKV failed, with the harness's reason:\n\n```text\n{failures}```\n"
            );
        }
    }
    out
}

/// The current UTC time, `YYYY-MM-DD HH:MM UTC` (from `date`, which every
/// machine that runs the suite has).
fn chrono_now() -> String {
    Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// The path of `program` on `PATH`.
fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(program))
            .find(|p| p.is_file())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_counts_both_servers_per_file() {
        let ferrum = "\
unit/a   done: 3 ok, 1 err (1s)
FILE                     PASSED FAILED IGNORED SKIPPED BASELINE  STATUS
unit/a                        3      1       0       0      n/a  failures (1s)
integration/b                 5      0       0       0      n/a  ok (1s)
TOTALS                        8      1       0       0
";
        let redis = "\
unit/a                        4      0       0       0      n/a  ok (1s)
integration/b                 5      0       0       0      n/a  ok (1s)
unit/c                        2      0       0       0      n/a  ok (1s)
";
        let rows = rows(&passed_per_file(ferrum), &passed_per_file(redis));
        assert_eq!(
            rows,
            [
                Row {
                    file: "unit/a".into(),
                    ferrum: 3,
                    redis: 4
                },
                Row {
                    file: "integration/b".into(),
                    ferrum: 5,
                    redis: 5
                },
                Row {
                    file: "unit/c".into(),
                    ferrum: 0,
                    redis: 2
                },
            ]
        );
        let part = Part {
            title: "Native mode",
            command: "run.sh".into(),
            rows,
            failures: "failed tests:\n  [err]: x in unit/a\n      why\0not\n".into(),
        };
        let text = report("cargo xtask suite", "now", &Machine::default(), &[part]);
        assert!(text.contains("FerrumKV passes 8 of the 11 tests Redis passes (72.7%)"));
        assert!(text.contains("| unit/a | 3 ◂ | 4 |"));
        assert!(text.contains("[err]: x in unit/a\n      why not\n"));
        assert!(!text.contains("failed tests:"));
    }
}
