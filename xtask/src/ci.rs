//! `cargo xtask ci`: the whole test suite in one command, on a fresh
//! machine as on CI.
//!
//! 1. **Prerequisites.** Each tool a test needs is looked for; a missing
//!    one is installed with `apt-get` when that is possible (Debian, as
//!    root), and otherwise named with its package and the run stops there.
//!    Optional tools (`nutcracker`, for the twemproxy tests) are installed
//!    the same way, but a missing one is only named: its tests skip
//!    themselves with a message.
//! 2. `cargo fmt --check`, `cargo clippy -D warnings`, `cargo doc
//!    --workspace --no-deps` with warnings as errors, `cargo test
//!    --workspace`.
//! 3. redis-py 8 against the debug server (`scripts/compat.sh`), and
//!    three debug servers in cluster mode under redis-py's `RedisCluster`
//!    and `redis-benchmark --cluster` (`scripts/cluster.sh`, which skips
//!    the benchmark with the reason printed when it is not installed).
//! 4. Redis 7.0.15's own TCL suite (`../shared/redis-tests/run.sh`,
//!    external mode, profile `core`) against the release server, its
//!    per-file table printed, and the run failed below the must-reach line
//!    of issue 13: 95% overall and 90% in every file, less the files in
//!    [`KNOWN_SHORT`], each named with what it still lacks. Then its
//!    save and reload tests in native mode (`crate::native_suite`), failed
//!    below their floors.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::procs::{ServerKind, ServerProcess};

/// The share of Redis's passing tests FerrumKV must pass over all files.
const MIN_OVERALL: f64 = 0.95;
/// The share every file must reach, except those in [`KNOWN_SHORT`].
const MIN_PER_FILE: f64 = 0.90;

/// Files allowed under [`MIN_PER_FILE`] for now, with what they still
/// lack. A file here still counts in the overall share; the list only
/// shrinks (a file that reaches the bar is reported, so it can be taken
/// off).
const KNOWN_SHORT: &[(&str, &str)] = &[];

/// The files of the suite CI runs: the runner's `@wide` list.
const SUITE_FILES: &str = "@wide";

/// A tool the tests need and the Debian package that has it.
struct Prerequisite {
    /// A program on `PATH`.
    program: &'static str,
    /// The Debian package that installs it.
    package: &'static str,
    /// What needs it.
    needed_by: &'static str,
    /// Whether the suite runs without it: the tests that need it skip
    /// themselves with a message, so a missing optional tool is reported
    /// and the run goes on.
    optional: bool,
}

const PREREQUISITES: &[Prerequisite] = &[
    Prerequisite {
        program: "promtool",
        package: "prometheus",
        needed_by: "the metrics tests (exposition lint)",
        optional: false,
    },
    Prerequisite {
        program: "prometheus",
        package: "prometheus",
        needed_by: "the metrics tests (a real scrape)",
        optional: false,
    },
    Prerequisite {
        program: "tclsh",
        package: "tcl",
        needed_by: "Redis's own test suite",
        optional: false,
    },
    Prerequisite {
        program: "redis-server",
        package: "redis-server",
        needed_by: "the side-by-side scenario tests of xtask",
        optional: false,
    },
    Prerequisite {
        program: "openssl",
        package: "openssl",
        needed_by: "the certificates of scripts/compat.sh's TLS run",
        optional: false,
    },
    Prerequisite {
        program: "redis-benchmark",
        package: "redis-tools",
        needed_by: "the side-by-side scenario tests of xtask",
        optional: false,
    },
    Prerequisite {
        program: "nutcracker",
        package: "nutcracker",
        needed_by: "the twemproxy tests of ferrum-bench (three nodes behind the proxy)",
        optional: true,
    },
];

/// `cargo xtask ci`.
#[derive(Debug, clap::Args)]
pub(crate) struct Ci {
    /// Only report missing prerequisites; never run apt-get.
    #[arg(long)]
    no_install: bool,
    /// Skip Redis's TCL suite (the slowest step).
    #[arg(long)]
    no_redis_suite: bool,
    /// Where Redis's test suite and its runner are (default:
    /// `$FERRUM_REDIS_TESTS`, else `../shared/redis-tests` beside the
    /// repository).
    #[arg(long)]
    redis_tests: Option<PathBuf>,
}

impl Ci {
    /// Runs every step; the first that fails stops the run.
    pub(crate) fn run(self) -> Result<()> {
        let started = Instant::now();
        let root = crate::workspace_root()?;
        std::env::set_current_dir(&root)?;
        let suite = redis_tests_dir(&root, self.redis_tests.clone());

        self.prerequisites()?;
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        run_step(
            "cargo fmt --check",
            Command::new(&cargo).args(["fmt", "--all", "--check"]),
        )?;
        run_step(
            "cargo clippy",
            Command::new(&cargo).args([
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ]),
        )?;
        run_step(
            "cargo doc (warnings are errors)",
            Command::new(&cargo)
                .args(["doc", "--workspace", "--no-deps"])
                .env("RUSTDOCFLAGS", "-D warnings"),
        )?;
        run_step(
            "cargo test --workspace",
            Command::new(&cargo).args(["test", "--workspace"]),
        )?;
        // The debug server `cargo test` just built, wherever the target
        // directory is.
        let debug_server = crate::target_dir(&root).join("debug/ferrum-server");
        run_step(
            "redis-py compatibility",
            Command::new("scripts/compat.sh").arg(&debug_server),
        )?;
        run_step(
            "redis-py RedisCluster and redis-benchmark --cluster",
            Command::new("scripts/cluster.sh").arg(&debug_server),
        )?;
        run_step(
            "cargo build --release -p ferrum-bench",
            Command::new(&cargo).args(["build", "--release", "-p", "ferrum-bench"]),
        )?;
        println!(
            "== eviction on real traces beside libCacheSim (bench --scenarios traces --quick)"
        );
        let traces_started = Instant::now();
        crate::traces::ci_check(&root)?;
        println!("   (traces: {:.0?})", traces_started.elapsed());
        if self.no_redis_suite {
            println!("== Redis's test suite: skipped (--no-redis-suite)");
        } else {
            run_step(
                "cargo build --release -p ferrum-server",
                Command::new(&cargo).args(["build", "--release", "-p", "ferrum-server"]),
            )?;
            redis_suite(&root, &suite)?;
            let server = crate::target_dir(&root).join("release/ferrum-server");
            crate::native_suite::run(&root, &suite.join("run.sh"), &server)?;
        }
        println!("== all checks passed in {:.0?}", started.elapsed());
        Ok(())
    }

    /// Installs what is missing where apt-get can; then names what is
    /// still missing, stopping the run for a required tool and going on
    /// without an optional one.
    fn prerequisites(&self) -> Result<()> {
        let absent = |optional: bool| -> Vec<&Prerequisite> {
            PREREQUISITES
                .iter()
                .filter(|p| p.optional == optional && !on_path(p.program))
                .collect()
        };
        let mut required: Vec<&str> = absent(false).iter().map(|p| p.package).collect();
        let python_ok = Command::new("python3")
            .args(["-c", "import ensurepip, venv"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !python_ok {
            required.push("python3-venv");
        }
        required.dedup();
        let optional: Vec<&str> = absent(true).iter().map(|p| p.package).collect();
        let can_install = !self.no_install && have_apt_as_root();
        if can_install && !(required.is_empty() && optional.is_empty()) {
            // Only optional tools missing: nothing here may stop the run
            // (no network, or a release without the package).
            let updated = run_step(
                "apt-get update",
                Command::new("apt-get").args(["update", "-qq"]),
            );
            if !required.is_empty() {
                updated?;
                run_step("apt-get install", &mut apt_install(&required))?;
            } else if let Err(e) = updated {
                println!("== apt-get update failed: {e:#}");
            }
            if !optional.is_empty() {
                if let Err(e) = run_step("apt-get install (optional)", &mut apt_install(&optional))
                {
                    println!("== optional tools not installed: {e:#}");
                }
            }
        }
        for p in absent(true) {
            println!(
                "== {} (Debian package {}) is missing: {} will be skipped",
                p.program, p.package, p.needed_by
            );
        }
        let missing: Vec<String> = absent(false)
            .iter()
            .map(|p| {
                format!(
                    "  {} (Debian package {}), for {}",
                    p.program, p.package, p.needed_by
                )
            })
            .collect();
        if !missing.is_empty() {
            bail!(
                "missing tools{}:\n{}",
                if can_install {
                    " after apt-get install"
                } else {
                    ""
                },
                missing.join("\n")
            );
        }
        Ok(())
    }
}

/// `apt-get install` of `packages`, quiet and without recommends.
fn apt_install(packages: &[&str]) -> Command {
    let mut command = Command::new("apt-get");
    command
        .args(["install", "-y", "-qq", "--no-install-recommends"])
        .args(packages)
        .env("DEBIAN_FRONTEND", "noninteractive");
    command
}

/// Whether `program` is an executable file in a `PATH` directory (not run:
/// `tclsh` has no `--version` and would read a script from its input).
fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(program))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// Whether `apt-get` is there and this process may use it.
fn have_apt_as_root() -> bool {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    root && on_path("apt-get")
}

/// Runs one step with its output passed through; fails the run if it does.
fn run_step(name: &str, command: &mut Command) -> Result<()> {
    println!("== {name}");
    let started = Instant::now();
    let status = command
        .status()
        .with_context(|| format!("cannot run {name}"))?;
    if !status.success() {
        bail!("{name} failed ({status})");
    }
    println!("   ({name}: {:.0?})", started.elapsed());
    Ok(())
}

/// Where Redis's test suite is: `given`, else `$FERRUM_REDIS_TESTS`, else
/// `../shared/redis-tests` beside the repository.
pub(crate) fn redis_tests_dir(root: &Path, given: Option<PathBuf>) -> PathBuf {
    given
        .or_else(|| std::env::var_os("FERRUM_REDIS_TESTS").map(PathBuf::from))
        .unwrap_or_else(|| root.join("../shared/redis-tests"))
}

/// Runs the suite against a release server and checks the bar.
fn redis_suite(root: &Path, suite: &Path) -> Result<()> {
    let runner = suite.join("run.sh");
    if !runner.is_file() {
        bail!(
            "Redis's test suite is not at {} (set FERRUM_REDIS_TESTS or pass --redis-tests)",
            suite.display()
        );
    }
    println!("== Redis's test suite ({SUITE_FILES}, external mode, profile core)");
    let target = crate::target_dir(root);
    let log = target.join("ci-ferrum-server.log");
    let logs = target.join("ci-redis-suite-logs");
    // A fresh folder: the failures listed below are this run's alone.
    let _ = std::fs::remove_dir_all(&logs);
    let server = ServerProcess::start(ServerKind::Ferrum, &target, &[], &log)?;
    let started = Instant::now();
    let out = Command::new(&runner)
        .args(["127.0.0.1", &server.port.to_string(), SUITE_FILES])
        .env("LOG_DIR", &logs)
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run the suite's run.sh")?;
    drop(server);
    let text = String::from_utf8_lossy(&out.stdout);
    print!("{text}");
    println!("   (Redis's test suite: {:.0?})", started.elapsed());
    let rows = parse_table(&text);
    if rows.is_empty() {
        bail!(
            "the suite's runner printed no per-file table (exit {})",
            out.status
        );
    }
    print!("{}", failed_tests(&logs));
    let verdict = judge(&rows, KNOWN_SHORT);
    print!("{}", verdict.report);
    if !verdict.failures.is_empty() {
        bail!(
            "Redis's test suite is below the bar:\n{}",
            verdict.failures.join("\n")
        );
    }
    Ok(())
}

/// Each failed test of the run with the line that says why, from the
/// runner's per-file logs: a CI log then shows what failed, not only how
/// many.
pub(crate) fn failed_tests(logs: &Path) -> String {
    let mut files: Vec<PathBuf> = std::fs::read_dir(logs)
        .map(|dir| dir.filter_map(|e| Some(e.ok()?.path())).collect())
        .unwrap_or_default();
    files.sort();
    let mut out = String::new();
    for file in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "log"))
    {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        out.push_str(&failures_in(&text));
    }
    if !out.is_empty() {
        out.insert_str(0, "failed tests:\n");
    }
    out
}

/// The `[err]` and `[exception]` lines of one log with the line after
/// each (the reason), indented. The harness repeats each failure in its
/// summary as `*** [err]`; those copies are left out.
fn failures_in(log: &str) -> String {
    let mut out = String::new();
    let mut lines = log.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("[err]:") || line.starts_with("[exception]:") {
            let why = lines.next().unwrap_or_default();
            let _ = writeln!(out, "  {line}\n      {why}");
        }
    }
    out
}

/// One file's row of the runner's table.
#[derive(Debug, PartialEq)]
struct FileRow {
    file: String,
    passed: u32,
    /// What Redis 7.0.15 passes (the runner's baseline).
    baseline: u32,
}

/// The rows of the runner's final table that have a baseline.
fn parse_table(text: &str) -> Vec<FileRow> {
    text.lines()
        .filter(|l| l.starts_with("unit/"))
        .filter_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            // FILE PASSED FAILED IGNORED SKIPPED BASELINE STATUS...
            Some(FileRow {
                file: cols.first()?.to_string(),
                passed: cols.get(1)?.parse().ok()?,
                baseline: cols.get(5)?.parse().ok()?,
            })
        })
        .collect()
}

/// The bar's verdict: a printed summary, and what falls short.
struct Verdict {
    report: String,
    failures: Vec<String>,
}

/// Judges `rows` against the bars, the files in `known_short` (file,
/// what it lacks) exempt from the per-file one.
fn judge(rows: &[FileRow], known_short: &[(&str, &str)]) -> Verdict {
    let passed: u32 = rows.iter().map(|r| r.passed).sum();
    let baseline: u32 = rows.iter().map(|r| r.baseline).sum();
    let share = |p: u32, b: u32| {
        if b == 0 {
            1.0
        } else {
            f64::from(p) / f64::from(b)
        }
    };
    let mut report = String::new();
    let mut failures = Vec::new();
    let overall = share(passed, baseline);
    let _ = writeln!(
        report,
        "overall: {passed} of {baseline} ({:.1}%), bar {:.0}%",
        overall * 100.0,
        MIN_OVERALL * 100.0
    );
    if overall < MIN_OVERALL {
        failures.push(format!(
            "  overall {:.1}% < {:.0}%",
            overall * 100.0,
            MIN_OVERALL * 100.0
        ));
    }
    for row in rows {
        let s = share(row.passed, row.baseline);
        let known = known_short.iter().find(|(f, _)| *f == row.file);
        match (s >= MIN_PER_FILE, known) {
            (true, Some(_)) => {
                let _ = writeln!(
                    report,
                    "  {} now at {:.1}%: take it off xtask's KNOWN_SHORT list",
                    row.file,
                    s * 100.0
                );
            }
            (false, Some((_, lacks))) => {
                let _ = writeln!(
                    report,
                    "  {} {}/{} ({:.1}%), known short: {lacks}",
                    row.file,
                    row.passed,
                    row.baseline,
                    s * 100.0
                );
            }
            (false, None) => failures.push(format!(
                "  {} {}/{} ({:.1}%) < {:.0}%",
                row.file,
                row.passed,
                row.baseline,
                s * 100.0,
                MIN_PER_FILE * 100.0
            )),
            (true, None) => {}
        }
    }
    Verdict { report, failures }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "\
FILE                     PASSED FAILED IGNORED SKIPPED BASELINE  STATUS
unit/type/string             72      0       3       0       72  ok (4s)
unit/multi                   30      9       0       0       39  failures (9s)
unit/lazyfree                 2      2       0       0        4  failures (9s)
unit/geo                     50      9       0       0       59  failures (9s)
(IGNORED = tag-filtered blocks/tests, incl. external:skip; BASELINE = tests Redis 7.0.15 ran)
TOTALS                      154     20       3       0
passed/total: 154/174 (88.5%)
";

    #[test]
    fn a_logs_failures_are_listed_once_with_their_reason() {
        let log = "\
[ok]: CONFIG SET duplicate configs (0 ms)
[err]: zset score double range in tests/unit/type/zset.tcl
Expected '1e308' to equal or match '1e+308'
[ok]: next (1 ms)
*** [err]: zset score double range in tests/unit/type/zset.tcl
Expected '1e308' to equal or match '1e+308'
";
        assert_eq!(
            failures_in(log),
            "  [err]: zset score double range in tests/unit/type/zset.tcl\n      \
             Expected '1e308' to equal or match '1e+308'\n"
        );
        assert_eq!(failures_in("[ok]: fine (0 ms)\n"), "");
    }

    #[test]
    fn the_runners_table_is_read_per_file() {
        let rows = parse_table(TABLE);
        assert_eq!(rows.len(), 4);
        assert_eq!(
            rows[3],
            FileRow {
                file: "unit/geo".into(),
                passed: 50,
                baseline: 59
            }
        );
    }

    /// A known-short list for the tests (the real one may be empty).
    const KNOWN: &[(&str, &str)] = &[("unit/lazyfree", "what it lacks")];

    #[test]
    fn a_short_file_fails_unless_known_and_the_overall_bar_holds() {
        let verdict = judge(&parse_table(TABLE), KNOWN);
        // 154/174 is under 95%; geo (84.7%) and multi (76.9%) are not on
        // the known list; lazyfree (50%) is, so it is reported, not failed.
        assert_eq!(verdict.failures.len(), 3, "{:?}", verdict.failures);
        assert!(verdict.failures.iter().any(|f| f.contains("overall")));
        assert!(verdict.failures.iter().any(|f| f.contains("unit/geo")));
        assert!(verdict.failures.iter().any(|f| f.contains("unit/multi")));
        assert!(verdict.report.contains("unit/lazyfree 2/4"));
    }

    #[test]
    fn a_known_file_that_reaches_the_bar_is_pointed_out() {
        let rows = [FileRow {
            file: "unit/lazyfree".into(),
            passed: 4,
            baseline: 4,
        }];
        let verdict = judge(&rows, KNOWN);
        assert!(verdict.failures.is_empty());
        assert!(verdict.report.contains("take it off"));
    }
}
