//! Running `promtool check metrics` and reading samples back out of an
//! exposition, shared by the unit tests of the exporter and the integration
//! tests.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::process::{Command, Stdio};

/// Runs `promtool check metrics` on `text`, failing the test when promtool
/// is missing: CI installs it (.ci/run), so absence is a broken setup.
pub(crate) fn promtool_check(text: &str) -> String {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "promtool not found ({e}): install Debian's `prometheus` package \
                 (apt-get install prometheus), as .ci/run does"
            )
        });
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("feed promtool");
    let out = child.wait_with_output().expect("promtool ran");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "promtool check metrics failed ({}):\n{report}\n--- exposition ---\n{text}",
        out.status
    );
    report
}

/// A sample: name, labels, value.
pub(crate) type Sample = (String, BTreeMap<String, String>, f64);

/// Parses the samples of a text exposition (no escapes in our label values).
pub(crate) fn samples(text: &str) -> Vec<Sample> {
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (series, value) = l.rsplit_once(' ').expect("value");
            let (name, labels) = match series.split_once('{') {
                Some((n, rest)) => (n, rest.trim_end_matches('}')),
                None => (series, ""),
            };
            let labels = labels
                .split(',')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once('=').expect("label");
                    (k.to_owned(), v.trim_matches('"').to_owned())
                })
                .collect();
            (name.to_owned(), labels, value.parse().expect("number"))
        })
        .collect()
}
