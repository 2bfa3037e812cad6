//! Every relative link in README.md, ARCHITECTURE.md and docs/ leads
//! somewhere: the file exists, and a `#section` names one of its headings
//! (as GitHub makes anchors of them). Web links are not fetched. And the
//! README and ARCHITECTURE.md stay short.

use std::path::{Path, PathBuf};

/// The documents checked, from the repository's root.
fn documents(root: &Path) -> Vec<PathBuf> {
    let mut docs = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("a docs/ folder")
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    docs.extend(pages);
    docs
}

/// The text outside fenced code blocks, with inline code spans blanked
/// (a `[x](y)` inside backticks is not a link).
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
            }
            out.push(if in_code || c == '`' { ' ' } else { c });
        }
        out.push('\n');
    }
    out
}

/// The targets of the Markdown links in `text`.
fn links(text: &str) -> Vec<String> {
    let prose = prose(text);
    let mut out = Vec::new();
    let mut rest = prose.as_str();
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            let target = rest[..end].trim();
            if !target.is_empty() && !target.contains(char::is_whitespace) {
                out.push(target.to_owned());
            }
        }
    }
    out
}

/// GitHub's anchor for a heading: lower case, punctuation dropped,
/// spaces to hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown file's headings.
fn anchors(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.push(slug(line.trim_start_matches('#')));
        }
    }
    out
}

#[test]
fn relative_links_in_the_docs_lead_somewhere() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root");
    let mut broken = Vec::new();
    for doc in documents(root) {
        let text = std::fs::read_to_string(&doc).expect("readable");
        let dir = doc.parent().expect("a folder");
        for target in links(&text) {
            if target.starts_with("http://")
                || target.starts_with("https://")
                || target.starts_with("mailto:")
            {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let file = if path.is_empty() {
                doc.clone()
            } else {
                dir.join(path)
            };
            let shown = doc.strip_prefix(root).unwrap_or(&doc).display().to_string();
            if !file.exists() {
                broken.push(format!("{shown}: {target} (no such file)"));
                continue;
            }
            if let Some(anchor) = anchor {
                let target_text = std::fs::read_to_string(&file).unwrap_or_default();
                if !anchors(&target_text).iter().any(|a| a == anchor) {
                    broken.push(format!("{shown}: {target} (no such heading)"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_checker_reads_links_and_anchors_as_github_does() {
    let text = "See [a](docs/a.md#the-section) and `[not](a link)`.\n\
                ```\n[also not](x.md)\n```\n[web](https://example.com)";
    assert_eq!(
        links(text),
        ["docs/a.md#the-section", "https://example.com"]
    );
    assert_eq!(
        slug(" The section: what (and why)?"),
        "the-section-what-and-why"
    );
    assert_eq!(
        anchors("# Title\n```\n# no\n```\n### `CONFIG REWRITE`"),
        ["title", "config-rewrite"]
    );
}

/// The README is read by a newcomer in five minutes and ARCHITECTURE.md
/// is a map that fits in one sitting: at most 300 and 400 lines, the
/// reference being in docs/ and each module's detail in its `//!` docs
/// (issue 39).
#[test]
fn the_readme_and_the_architecture_stay_short() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root");
    for (file, most, elsewhere) in [
        ("README.md", 300, "docs/"),
        ("ARCHITECTURE.md", 400, "the modules' //! docs"),
    ] {
        let lines = std::fs::read_to_string(root.join(file))
            .expect("readable")
            .lines()
            .count();
        assert!(
            lines <= most,
            "{file} has {lines} lines (at most {most}); move detail to {elsewhere}"
        );
    }
}
