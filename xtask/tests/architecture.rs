//! The crate-level invariants of ARCHITECTURE.md, checked from the
//! sources: which ferrum crates may depend on which, and that the store
//! and the policies neither read a clock nor touch the network.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask is inside the workspace")
        .to_path_buf()
}

/// The names in a manifest's `[dependencies]` table.
fn dependencies(krate: &str) -> Vec<String> {
    let manifest = std::fs::read_to_string(root().join(krate).join("Cargo.toml"))
        .unwrap_or_else(|e| panic!("{krate}/Cargo.toml: {e}"));
    manifest
        .lines()
        .skip_while(|l| l.trim() != "[dependencies]")
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with('['))
        .filter_map(|l| l.split(['.', '=', ' ']).next())
        .filter(|name| !name.is_empty() && !name.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// Each `.rs` file under `dir`, with its text up to its first
/// `#[cfg(test)]` (the tests may use what the code may not).
fn code_of(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("a source folder") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("a source file");
                let code = text.split("#[cfg(test)]").next().unwrap_or("").to_owned();
                out.push((path, code));
            }
        }
    }
    out
}

#[test]
fn the_protocol_and_the_policies_are_leaves() {
    for krate in ["ferrum-proto", "ferrum-evict"] {
        let deps = dependencies(krate);
        assert!(!deps.is_empty(), "{krate}'s [dependencies] were not read");
        let ferrum: Vec<_> = deps.iter().filter(|d| d.starts_with("ferrum")).collect();
        assert!(ferrum.is_empty(), "{krate} depends on {ferrum:?}");
    }
}

#[test]
fn the_store_never_formats_resp() {
    let deps = dependencies("ferrum-store");
    assert!(deps.iter().any(|d| d == "ferrum-evict"), "{deps:?}");
    assert!(!deps.iter().any(|d| d == "ferrum-proto"), "{deps:?}");
}

#[test]
fn the_store_and_the_policies_read_no_clock_and_touch_no_socket() {
    let forbidden = [
        "Instant::now",
        "SystemTime",
        "std::net",
        "tokio",
        "thread::spawn",
    ];
    for krate in ["ferrum-store", "ferrum-evict"] {
        let files = code_of(&root().join(krate).join("src"));
        assert!(files.len() > 3, "{krate}'s sources were not found");
        for (path, code) in files {
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                if let Some(word) = forbidden.iter().find(|w| line.contains(*w)) {
                    panic!("{} uses {word}: {line}", path.display());
                }
            }
        }
    }
}
