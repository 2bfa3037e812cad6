//! The layering of ferrum-server's modules (ARCHITECTURE.md, "Module
//! layers"), checked from the sources: every top-level module sits on one
//! layer, names only modules of its own layer or below, and no modules
//! depend on each other in a cycle.
//!
//! Module A depends on B when A's code names an item of B by a path
//! (`use crate::b::...`, `crate::{b::..}`, an inline `crate::b::x`, or a
//! `super::` chain that climbs out of A into B), as
//! `scripts/module-cycles.py` counts them; sub-modules count as their
//! top-level module. Comments, strings and char literals are skipped.
//! Run the script for the full list of references behind an edge.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Each top-level module's layer, lowest first. A module may name modules
/// of its own layer or below. Keep this in step with ARCHITECTURE.md.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "vocabulary",
        &[
            "alloc", "clock", "command", "config", "error", "logging", "notify", "parse", "rdb",
            "runtime",
        ],
    ),
    (
        "state",
        &[
            "acl",
            "blocking",
            "client",
            "cluster",
            "evict_clients",
            "latency",
            "lazyfree",
            "listen",
            "migrate",
            "monitor",
            "obuf",
            "pause",
            "persist",
            "pubsub",
            "replication",
            "script",
            "slowlog",
            "tls",
            "tracking",
        ],
    ),
    ("shared", &["shared"]),
    ("commands", &["cmd"]),
    (
        "connections",
        &["accept", "connection", "metrics", "replica", "stream"],
    ),
    ("server", &["server"]),
];

/// A reference from one file to another top-level module: `file:line`.
type Refs = BTreeMap<String, BTreeMap<String, Vec<String>>>;

#[test]
fn modules_form_no_cycle() {
    let (modules, edges) = graph(&src_dir());
    let cycles: Vec<Vec<String>> = sccs(&modules, &edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .collect();
    let mut report = String::new();
    for comp in &cycles {
        report.push_str(&format!("cycle: {}\n", comp.join(" ")));
        for a in comp {
            for (b, refs) in &edges[a] {
                if comp.contains(b) {
                    report.push_str(&format!("  {a} -> {b}: {}\n", refs.join(" ")));
                }
            }
        }
    }
    assert!(
        cycles.is_empty(),
        "module cycles in ferrum-server:\n{report}"
    );
}

#[test]
fn modules_depend_only_on_their_layer_or_below() {
    let (modules, edges) = graph(&src_dir());
    let layer: BTreeMap<&str, usize> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(i, (_, ms))| ms.iter().map(move |m| (*m, i)))
        .collect();
    let unplaced: Vec<&String> = modules
        .iter()
        .filter(|m| !layer.contains_key(m.as_str()))
        .collect();
    assert!(
        unplaced.is_empty(),
        "modules on no layer (add them to LAYERS here and to ARCHITECTURE.md): {unplaced:?}"
    );
    let mut upward = Vec::new();
    for (a, targets) in &edges {
        for (b, refs) in targets {
            let (la, lb) = (layer[a.as_str()], layer[b.as_str()]);
            if lb > la {
                upward.push(format!(
                    "{a} ({}) -> {b} ({}): {}",
                    LAYERS[la].0,
                    LAYERS[lb].0,
                    refs.join(" ")
                ));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "modules naming a higher layer:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_scanner_sees_paths_and_skips_comments_and_strings() {
    let modules: BTreeSet<String> = ["a", "b", "c", "d"].map(String::from).into();
    let text = strip(concat!(
        "use crate::{a::X, b::{self, Y}};\n",
        "// crate::c::Z in a comment\n",
        "let s = \"crate::c::Z\"; let r = r#\"crate::c::Z\"#; let ch = '\"';\n",
        "fn f<'x>(v: &'x u8) -> crate::d::T { super::super::c::g() }\n",
        "mod tests { use super::*; }\n",
    ));
    let found: Vec<(usize, String)> = references(&text, &["a".into(), "inner".into()], &modules);
    assert_eq!(
        found,
        [
            (1, "a".into()),
            (1, "b".into()),
            (4, "d".into()),
            (4, "c".into())
        ]
    );
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level modules `lib.rs` declares, and the references between them.
fn graph(src: &Path) -> (Vec<String>, Refs) {
    let root = strip(&fs::read_to_string(src.join("lib.rs")).expect("lib.rs"));
    let modules: Vec<String> = root
        .lines()
        .filter_map(|line| {
            let (vis, name) = line.trim().split_once("mod ")?;
            let name = name.strip_suffix(';')?.trim();
            (vis.is_empty() || vis.starts_with("pub")).then(|| name.to_owned())
        })
        .collect();
    let set: BTreeSet<String> = modules.iter().cloned().collect();
    let mut edges: Refs = modules
        .iter()
        .map(|m| (m.clone(), BTreeMap::new()))
        .collect();
    for module in &modules {
        for (path, mod_path) in files_of(src, module) {
            let text = strip(&fs::read_to_string(&path).expect("source file"));
            let rel = path
                .strip_prefix(src)
                .expect("under src")
                .display()
                .to_string();
            for (line, target) in references(&text, &mod_path, &set) {
                if &target != module {
                    edges
                        .get_mut(module)
                        .expect("a module")
                        .entry(target)
                        .or_default()
                        .push(format!("{rel}:{line}"));
                }
            }
        }
    }
    (modules, edges)
}

/// Every file of `module` (`module.rs`, and everything under `module/`),
/// with its module path inside the crate.
fn files_of(src: &Path, module: &str) -> Vec<(PathBuf, Vec<String>)> {
    let mut out = Vec::new();
    let single = src.join(format!("{module}.rs"));
    if single.exists() {
        out.push((single, vec![module.to_owned()]));
    }
    let mut dirs = vec![src.join(module)];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path
                    .strip_prefix(src)
                    .expect("under src")
                    .with_extension("");
                let mut parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if parts.last().is_some_and(|p| p == "mod") {
                    parts.pop();
                }
                out.push((path, parts));
            }
        }
    }
    out
}

/// `src` with comments, strings and char literals blanked out (newlines
/// kept, so line numbers hold).
fn strip(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let blank = |out: &mut Vec<u8>, s: &[u8]| {
        out.extend(s.iter().map(|&c| if c == b'\n' { b'\n' } else { b' ' }));
    };
    let ident = |i: usize| i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            blank(&mut out, &b[i..end]);
            i = end;
        } else if rest.starts_with(b"/*") {
            let (mut depth, mut j) = (1, i + 2);
            while j < b.len() && depth > 0 {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, &b[i..j]);
            i = j;
        } else if let Some(hashes) = raw_string_start(rest).filter(|_| !ident(i)) {
            let open = rest.iter().position(|&c| c == b'"').expect("a quote") + 1;
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let end = b[i + open..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |p| i + open + p + close.len());
            blank(&mut out, &b[i..end]);
            i = end;
        } else if rest[0] == b'"' || (rest.starts_with(b"b\"") && !ident(i)) {
            let mut j = i + if rest[0] == b'b' { 2 } else { 1 };
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(b.len());
            blank(&mut out, &b[i..end]);
            i = end;
        } else if rest[0] == b'\'' {
            match char_literal_len(rest) {
                Some(n) => {
                    blank(&mut out, &b[i..i + n]);
                    i += n;
                }
                None => {
                    out.push(b'\'');
                    i += 1;
                }
            }
        } else {
            out.push(rest[0]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The number of `#`s of a raw string starting here (`r"`, `r#"`, `br#"`).
fn raw_string_start(s: &[u8]) -> Option<usize> {
    let s = s.strip_prefix(b"b").unwrap_or(s).strip_prefix(b"r")?;
    let hashes = s.iter().take_while(|&&c| c == b'#').count();
    (s.get(hashes) == Some(&b'"')).then_some(hashes)
}

/// The length of a char literal starting here (`'x'`, `'\n'`,
/// `'\u{1F600}'`, a multi-byte char), or `None` for a lifetime.
fn char_literal_len(s: &[u8]) -> Option<usize> {
    if s.get(1) == Some(&b'\\') {
        if s.get(2) == Some(&b'u') {
            let close = s.iter().position(|&c| c == b'}')?;
            return (s.get(close + 1) == Some(&b'\'')).then_some(close + 2);
        }
        return (s.get(3) == Some(&b'\'')).then_some(4);
    }
    let text = std::str::from_utf8(&s[1..s.len().min(6)])
        .unwrap_or_else(|e| std::str::from_utf8(&s[1..1 + e.valid_up_to()]).expect("valid prefix"));
    let c = text.chars().next()?;
    let after = 1 + c.len_utf8();
    (s.get(after) == Some(&b'\'')).then_some(after + 1)
}

/// `(line, module)` for each path in `text` (a stripped file whose module
/// path is `file_mod`) that names a top-level module in `modules`.
fn references(text: &str, file_mod: &[String], modules: &BTreeSet<String>) -> Vec<(usize, String)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    // Inline modules (`mod tests { ... }`) change what `super` means.
    let mut inline: Vec<(usize, String)> = Vec::new();
    let (mut depth, mut line, mut i) = (0usize, 1usize, 0usize);
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
        } else if c == b'{' {
            depth += 1;
        } else if c == b'}' {
            depth = depth.saturating_sub(1);
            while inline.last().is_some_and(|(d, _)| *d > depth) {
                inline.pop();
            }
        } else if starts_word(b, i, "mod") {
            if let Some((name, open)) = inline_module(b, i + 3) {
                depth += 1;
                inline.push((depth, name));
                line += b[i..=open].iter().filter(|&&c| c == b'\n').count();
                i = open + 1;
                continue;
            }
        } else if (starts_word(b, i, "crate") || starts_word(b, i, "super"))
            && (i == 0 || b[i - 1] != b'$')
        {
            let mut here: Vec<String> = file_mod.to_vec();
            here.extend(inline.iter().map(|(_, n)| n.clone()));
            for m in resolve(b, i, here, modules) {
                out.push((line, m));
            }
        }
        i += 1;
    }
    out
}

/// Whether the word `w` starts at `i` (not inside a longer identifier).
fn starts_word(b: &[u8], i: usize, w: &str) -> bool {
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    b[i..].starts_with(w.as_bytes())
        && (i == 0 || !word(b[i - 1]))
        && b.get(i + w.len()).is_none_or(|&c| !word(c))
}

/// After `mod`: the name and the position of `{` of an inline module.
fn inline_module(b: &[u8], mut i: usize) -> Option<(String, usize)> {
    while b.get(i)?.is_ascii_whitespace() {
        i += 1;
    }
    let start = i;
    while b
        .get(i)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        i += 1;
    }
    let name = std::str::from_utf8(&b[start..i]).ok()?.to_owned();
    while b.get(i)?.is_ascii_whitespace() {
        i += 1;
    }
    (b[i] == b'{' && !name.is_empty()).then_some((name, i))
}

/// The top-level modules named by the path starting at `i`.
fn resolve(
    b: &[u8],
    mut i: usize,
    mut here: Vec<String>,
    modules: &BTreeSet<String>,
) -> Vec<String> {
    let skip_ws = |mut i: usize| {
        while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
            i += 1;
        }
        i
    };
    loop {
        let word = ["crate", "super", "self"]
            .into_iter()
            .find(|w| starts_word(b, i, w));
        let Some(word) = word else { break };
        let after = skip_ws(i + word.len());
        if !b[after..].starts_with(b"::") {
            return Vec::new();
        }
        match word {
            "crate" => here.clear(),
            "super" => {
                here.pop();
            }
            _ => {}
        }
        i = skip_ws(after + 2);
    }
    if !here.is_empty() {
        return Vec::new();
    }
    let first = |s: &[u8]| -> Option<String> {
        let s = s.trim_ascii_start();
        let n = s
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
            .count();
        let name = std::str::from_utf8(&s[..n]).ok()?;
        modules.contains(name).then(|| name.to_owned())
    };
    if b.get(i) != Some(&b'{') {
        return first(&b[i..]).into_iter().collect();
    }
    // A group: the first segment of each item at the group's top level.
    let (mut depth, mut start, mut out) = (0usize, i + 1, Vec::new());
    for j in i..b.len() {
        match b[j] {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    out.extend(first(&b[start..j]));
                    break;
                }
            }
            b',' if depth == 1 => {
                out.extend(first(&b[start..j]));
                start = j + 1;
            }
            _ => {}
        }
    }
    out
}

/// Tarjan's strongly connected components of the module graph.
fn sccs(nodes: &[String], edges: &Refs) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a Refs,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.edges[v].keys() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                comp.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            comp.sort();
            s.out.push(comp);
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in nodes {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}
