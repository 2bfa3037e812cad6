//! Tidy checks on the crate's own sources, in the spirit of rust-analyzer's
//! xtask tidy: every source file opens with a `//!` paragraph saying what it
//! owns.

use std::fs;
use std::path::Path;

#[test]
fn every_source_file_starts_with_a_module_doc() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    for dir in ["src", "tests", "tests/support", "benches"] {
        for entry in fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "rs") {
                let text = fs::read_to_string(&path).unwrap();
                assert!(
                    text.starts_with("//! "),
                    "{} does not start with a //! paragraph",
                    path.display()
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 15, "only {checked} files found");
}
