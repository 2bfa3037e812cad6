//! placeholder

// The placeholder `main` uses nothing from `config` yet; the real main.rs
// replaces this file on merge.
#[allow(dead_code)]
mod config;

fn main() {}
