#!/usr/bin/env python3
"""Find import cycles between the top-level modules of one Rust crate.

Usage: scripts/module-cycles.py [--edges] [--check] SRC_DIR

SRC_DIR is a crate's `src` directory (e.g. `ferrum-server/src`). The crate
root is `lib.rs` (or `main.rs` when there is no `lib.rs`); its top-level
modules are the `mod name;` items it declares, and every file under
`name.rs` / `name/` belongs to `name` (sub-modules count as their top-level
module: `cmd::zset` is `cmd`).

Module A depends on module B when A's code names an item of B by a path:
`use crate::b::...`, `use crate::{b::..., ...}`, an inline `crate::b::item`,
or a `super::` chain that climbs out of A into B. Comments (doc comments and
intra-doc links included), string and char literals are ignored, and so are
`$crate` paths (macro hygiene) and names at the crate root that are not
modules (`crate::REDIS_VERSION`). A `pub use` re-export does not hide an
edge: the file that names `crate::b::x` depends on b whatever b re-exports.

The script prints every strongly connected component of more than one
module, and under it each edge that stays inside the component with the
`file:line` references that create it. `--edges` also prints the whole
graph, one `a -> b` line per edge. `--check` exits with status 1 when any
component is printed (for CI); without it the exit status is 0.

No dependencies beyond Python 3's standard library; the lexer is a small
hand-written one, good enough for rustfmt-formatted code (it does not
expand macros, so a path built by a macro from fragments is not seen).
"""

import os
import re
import signal
import sys
from collections import defaultdict

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def strip(src):
    """Blank out comments, strings and char literals, keeping newlines so
    line numbers survive."""
    out = []
    i, n = 0, len(src)

    def blank(text):
        out.append("".join("\n" if c == "\n" else " " for c in text))

    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            blank(src[i:j])
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(src[i:j])
            i = j
        elif c in "rb" and re.match(r"(?:br|r)#*\"", src[i:i + 300]) and (
            i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")
        ):
            m = re.match(r"(?:br|r)(#*)\"", src[i:])
            close = '"' + m.group(1)
            j = src.find(close, i + m.end())
            j = n if j < 0 else j + len(close)
            blank(src[i:j])
            i = j
        elif c == '"' or (c == "b" and src.startswith('b"', i)
                          and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_"))):
            j = i + (2 if c == "b" else 1)
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            blank(src[i:j + 1])
            i = j + 1
        elif c == "'":
            # A char literal ('x', '\n', '\u{1F600}', b'x' handled by the
            # same rule since `b` is just copied), or a lifetime ('a).
            m = re.match(r"'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", src[i:i + 12])
            if m:
                blank(m.group(0))
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def top_modules(src_dir):
    root = None
    for name in ("lib.rs", "main.rs"):
        if os.path.exists(os.path.join(src_dir, name)):
            root = os.path.join(src_dir, name)
            break
    if root is None:
        sys.exit(f"{src_dir}: no lib.rs or main.rs")
    with open(root, encoding="utf-8") as f:
        text = strip(f.read())
    return root, re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_][A-Za-z0-9_]*)\s*;", text, re.M)


def files_of(src_dir, module):
    """(path, module path inside the crate) for each file of `module`."""
    single = os.path.join(src_dir, module + ".rs")
    if os.path.exists(single):
        yield single, [module]
    folder = os.path.join(src_dir, module)
    for dirpath, _, names in os.walk(folder):
        for name in sorted(names):
            if not name.endswith(".rs"):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, src_dir)[:-3].split(os.sep)
            if rel[-1] == "mod":
                rel = rel[:-1]
            yield path, rel


PATH_START = re.compile(r"(?<![A-Za-z0-9_$])(crate|super)\s*::")


def references(text, file_mod, modules):
    """Yield (line, target top-level module) for each path in `text` (a
    stripped file whose module path is `file_mod`) that names another
    top-level module."""
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_of(pos):
        lo, hi = 0, len(line_starts)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if line_starts[mid] <= pos:
                lo = mid
            else:
                hi = mid
        return lo + 1

    # Inline modules (`mod tests { ... }`) shift what `super` means, so
    # track them by brace depth.
    inline = []  # (brace depth at which the inline module's body ends, name)
    events = []
    for m in re.finditer(r"\bmod\s+([A-Za-z_][A-Za-z0-9_]*)\s*\{", text):
        events.append((m.end() - 1, "mod", m.group(1)))
    for m in PATH_START.finditer(text):
        events.append((m.start(), "path", m))
    events.sort(key=lambda e: e[0])

    depth, pos = 0, 0
    for at, kind, data in events:
        segment = text[pos:at]
        for ch in segment:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                while inline and inline[-1][0] > depth:
                    inline.pop()
        pos = at
        if kind == "mod":
            depth += 1
            pos = at + 1
            inline.append((depth, data))
            continue
        m = data
        here = file_mod + [name for _, name in inline]
        targets = list(_resolve(text, m, here, modules))
        for t in targets:
            yield line_of(m.start()), t


def _resolve(text, m, here, modules):
    """Top-level modules named by the path starting at match `m`."""
    i = m.start()
    base = list(here)
    # Climb `super::super::...` or start at the root for `crate::`.
    while True:
        sm = re.compile(r"(crate|super|self)\s*::\s*").match(text, i)
        if not sm:
            break
        word = sm.group(1)
        if word == "crate":
            base = []
        elif word == "super":
            base = base[:-1]
        i = sm.end()
    if base:
        # Still inside a top-level module: only that module is named.
        return
    # At the root: the next segment, or a `{...}` group of them.
    if text.startswith("{", i):
        depth, j = 0, i
        while j < len(text):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        group = text[i + 1:j]
        # Only first segments at the group's top level name modules.
        top, depth, current = [], 0, []
        for ch in group:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                top.append("".join(current))
                current = []
            else:
                current.append(ch)
        top.append("".join(current))
        for item in top:
            im = IDENT.match(item.strip())
            if im and im.group(0) in modules:
                yield im.group(0)
    else:
        im = IDENT.match(text, i)
        if im and im.group(0) in modules:
            yield im.group(0)


def graph(src_dir):
    _, modules = top_modules(src_dir)
    modset = set(modules)
    edges = defaultdict(lambda: defaultdict(list))  # a -> b -> ["file:line"]
    for module in modules:
        for path, mod_path in files_of(src_dir, module):
            with open(path, encoding="utf-8") as f:
                text = strip(f.read())
            rel = os.path.relpath(path, src_dir)
            for line, target in references(text, mod_path, modset):
                if target != module:
                    edges[module][target].append(f"{rel}:{line}")
    return modules, edges


def sccs(nodes, edges):
    """Tarjan's algorithm, iterative; components in discovery order."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    flags = {a for a in argv if a.startswith("--")}
    unknown = flags - {"--edges", "--check"}
    if len(args) != 1 or unknown:
        sys.exit(__doc__.split("\n\n")[1])
    src_dir = args[0]
    modules, edges = graph(src_dir)
    if "--edges" in flags:
        for a in sorted(edges):
            for b in sorted(edges[a]):
                print(f"{a} -> {b} ({len(edges[a][b])})")
        print()
    big = sorted((c for c in sccs(modules, edges) if len(c) > 1), key=lambda c: (-len(c), c))
    if not big:
        print(f"{src_dir}: no cycles between top-level modules")
    for comp in big:
        print(f"SCC of {len(comp)}: {' '.join(comp)}")
        members = set(comp)
        for a in comp:
            for b in sorted(edges[a]):
                if b in members:
                    refs = edges[a][b]
                    print(f"  {a} -> {b}: {' '.join(refs)}")
        print()
    return 1 if big and "--check" in flags else 0


if __name__ == "__main__":
    # Piped into `head`, stop quietly.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main(sys.argv[1:]))
