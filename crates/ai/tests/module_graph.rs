//! The ai crate's modules depend on each other one way only: every `crate::` path in
//! `src/` becomes an edge between top-level modules (and between `providers::<p>`), and the
//! graph must have no circle, so low-level modules (http, sse, types…) never reach back up.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Where an edge comes from: the first `file:line` that makes it.
type Edges = BTreeMap<String, BTreeMap<String, String>>;

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The names of the child modules of `dir`: `x.rs` (but not `mod.rs`/`lib.rs`) and folders.
fn child_modules(dir: &Path) -> BTreeSet<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|path| {
            let name = path.file_name()?.to_str()?.to_owned();
            if path.is_dir() {
                Some(name)
            } else {
                let stem = name.strip_suffix(".rs")?;
                (stem != "mod" && stem != "lib").then(|| stem.to_owned())
            }
        })
        .collect()
}

/// `src` with comments and string/char literals blanked (newlines kept, so line numbers hold).
fn code_only(src: &str) -> String {
    let chars: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (i == 0 || !is_ident(chars[i - 1]) || chars[i - 1] == 'b')
            && matches!(next, Some('"' | '#'))
            && {
                let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
                chars.get(i + 1 + hashes) == Some(&'"')
            }
        {
            let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
            let open = 2 + hashes;
            out.extend(std::iter::repeat_n(' ', open));
            i += open;
            while i < chars.len() {
                let closes = chars[i] == '"'
                    && chars[i + 1..].iter().take_while(|c| **c == '#').count() >= hashes;
                if closes {
                    out.extend(std::iter::repeat_n(' ', 1 + hashes));
                    i += 1 + hashes;
                    break;
                }
                out.push(blank(chars[i]));
                i += 1;
            }
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < chars.len() {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && next == Some('\\') {
            // An escaped char literal: `'\n'`, `'\u{1F600}'`.
            out.push_str("  ");
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                out.push(' ');
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            out.push_str("   ");
            i += 3;
        } else {
            // Code, including lifetimes (`'a`).
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Every path below `crate::` in `code`, with its 1-based line: `use crate::{a, b::{c, d}}`
/// gives `a`, `b::c` and `b::d`; an inline `crate::x::f(…)` gives `x::f`.
fn crate_paths(code: &str) -> Vec<(usize, Vec<String>)> {
    let bytes = code.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("crate") {
        let start = from + at;
        from = start + "crate".len();
        if start > 0 && is_ident(bytes[start - 1]) {
            continue;
        }
        let mut pos = from;
        skip_space(bytes, &mut pos);
        if !bytes[pos..].starts_with(b"::") {
            continue;
        }
        pos += 2;
        let line = code[..start].matches('\n').count() + 1;
        let mut paths = Vec::new();
        use_tree(bytes, &mut pos, Vec::new(), &mut paths);
        found.extend(paths.into_iter().map(|p| (line, p)));
        from = pos.max(from);
    }
    found
}

fn skip_space(bytes: &[u8], pos: &mut usize) {
    while *pos < bytes.len() && bytes[*pos].is_ascii_whitespace() {
        *pos += 1;
    }
}

/// Reads one use tree (`a::b`, `a::{b, c::d}`, `*`) after `prefix::`.
fn use_tree(bytes: &[u8], pos: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    skip_space(bytes, pos);
    if bytes.get(*pos) == Some(&b'{') {
        *pos += 1;
        loop {
            skip_space(bytes, pos);
            match bytes.get(*pos) {
                None => return,
                Some(b'}') => {
                    *pos += 1;
                    return;
                }
                Some(b',') => *pos += 1,
                Some(_) => {
                    let before = *pos;
                    use_tree(bytes, pos, prefix.clone(), out);
                    // `x as y`: skip the rename up to the next `,` or `}`.
                    while let Some(b) = bytes.get(*pos) {
                        if *b == b',' || *b == b'}' {
                            break;
                        }
                        *pos += 1;
                    }
                    if *pos == before {
                        *pos += 1;
                    }
                }
            }
        }
    }
    let start = *pos;
    while *pos < bytes.len() && (bytes[*pos].is_ascii_alphanumeric() || bytes[*pos] == b'_') {
        *pos += 1;
    }
    let mut path = prefix;
    if *pos > start {
        path.push(String::from_utf8_lossy(&bytes[start..*pos]).into_owned());
    } else if bytes.get(*pos) == Some(&b'*') {
        *pos += 1;
        path.push("*".into());
    }
    let mut after = *pos;
    skip_space(bytes, &mut after);
    let continues = bytes[after..].starts_with(b"::")
        && bytes
            .get(after + 2..)
            .map(|rest| {
                let mut p = 0;
                skip_space(rest, &mut p);
                rest.get(p).is_some_and(|b| {
                    b.is_ascii_alphabetic() || *b == b'_' || *b == b'{' || *b == b'*'
                })
            })
            .unwrap_or(false);
    if continues && *pos > start {
        *pos = after + 2;
        use_tree(bytes, pos, path, out);
    } else if !path.is_empty() {
        out.push(path);
    }
}

/// The crate's module map: top-level modules, `providers`' children, and the root's
/// re-exported names (`pub use x::{…}` in lib.rs) with the module each comes from.
struct Layout {
    top: BTreeSet<String>,
    providers: BTreeSet<String>,
    reexports: BTreeMap<String, String>,
    globs: Vec<String>,
}

impl Layout {
    fn read() -> Self {
        let src = src_dir();
        let top = child_modules(&src);
        let providers = child_modules(&src.join("providers"));
        let lib = code_only(&fs::read_to_string(src.join("lib.rs")).unwrap());
        let mut reexports = BTreeMap::new();
        let mut globs = Vec::new();
        for statement in lib.split(';') {
            let Some(rest) = statement.trim().strip_prefix("pub use") else {
                continue;
            };
            let bytes = rest.as_bytes();
            let mut paths = Vec::new();
            use_tree(bytes, &mut 0, Vec::new(), &mut paths);
            for path in paths {
                let (Some(module), Some(name)) = (path.first(), path.last()) else {
                    continue;
                };
                if name == "*" {
                    globs.push(module.clone());
                } else {
                    reexports.insert(name.clone(), module.clone());
                }
            }
        }
        Self {
            top,
            providers,
            reexports,
            globs,
        }
    }

    /// The node a source file belongs to.
    fn file_node(&self, file: &Path) -> String {
        let rel = file.strip_prefix(src_dir()).unwrap();
        let parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let stem = |s: &str| s.strip_suffix(".rs").unwrap_or(s).to_owned();
        match parts.as_slice() {
            [only] => stem(only),
            [first, second, ..] if first == "providers" && second != "mod.rs" => {
                format!("providers::{}", stem(second))
            }
            [first, ..] => first.clone(),
            [] => unreachable!(),
        }
    }

    /// The node a `crate::` path points into.
    fn path_node(&self, path: &[String]) -> Result<String, String> {
        let first = &path[0];
        if first == "providers" {
            return Ok(match path.get(1) {
                Some(child) if self.providers.contains(child) => format!("providers::{child}"),
                _ => "providers".into(),
            });
        }
        if self.top.contains(first) {
            return Ok(first.clone());
        }
        if let Some(module) = self.reexports.get(first) {
            return self.path_node(std::slice::from_ref(module));
        }
        match self.globs.as_slice() {
            [module] => Ok(module.clone()),
            _ => Err(format!(
                "crate::{} names no module and no single re-export",
                path.join("::")
            )),
        }
    }
}

/// Edges between different nodes; a parent reaching into its own child is not an edge.
fn module_graph() -> Edges {
    let layout = Layout::read();
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    let mut edges = Edges::new();
    for file in &files {
        let from = layout.file_node(file);
        edges.entry(from.clone()).or_default();
        let code = code_only(&fs::read_to_string(file).unwrap());
        for (line, path) in crate_paths(&code) {
            let to = layout.path_node(&path).unwrap_or_else(|e| {
                panic!("{}:{line}: {e}", file.display());
            });
            if to == from || to.starts_with(&format!("{from}::")) || from == "lib" {
                continue;
            }
            let rel = file.strip_prefix(src_dir()).unwrap().display();
            edges
                .entry(from.clone())
                .or_default()
                .entry(to)
                .or_insert_with(|| format!("src/{rel}:{line} (crate::{})", path.join("::")));
        }
    }
    edges
}

/// One circle in the graph, if any: the nodes in order, first repeated last.
fn find_cycle(edges: &Edges) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    fn visit(
        node: &str,
        edges: &Edges,
        marks: &mut BTreeMap<String, Mark>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        marks.insert(node.to_owned(), Mark::Open);
        stack.push(node.to_owned());
        for next in edges.get(node).into_iter().flat_map(BTreeMap::keys) {
            match marks.get(next).copied().unwrap_or(Mark::New) {
                Mark::Open => {
                    let at = stack.iter().position(|n| n == next).unwrap();
                    let mut cycle = stack[at..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Mark::New => {
                    if let Some(cycle) = visit(next, edges, marks, stack) {
                        return Some(cycle);
                    }
                }
                Mark::Done => {}
            }
        }
        stack.pop();
        marks.insert(node.to_owned(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for node in edges.keys() {
        if marks.get(node).copied().unwrap_or(Mark::New) == Mark::New {
            let mut stack = Vec::new();
            if let Some(cycle) = visit(node, edges, &mut marks, &mut stack) {
                return Some(cycle);
            }
        }
    }
    None
}

/// The circle with the source line that makes each step.
fn describe(cycle: &[String], edges: &Edges) -> String {
    cycle
        .windows(2)
        .map(|pair| {
            format!(
                "  {} -> {}  at {}",
                pair[0], pair[1], edges[&pair[0]][&pair[1]]
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn ai_modules_import_each_other_without_a_circle() {
    let mut edges = module_graph();
    let mut cycles = Vec::new();
    // Report every circle: cut one edge of each found and look again.
    while let Some(cycle) = find_cycle(&edges) {
        cycles.push(describe(&cycle, &edges));
        edges.get_mut(&cycle[0]).unwrap().remove(&cycle[1]).unwrap();
    }
    assert!(
        cycles.is_empty(),
        "the ai crate's modules import each other in a circle:\n{}",
        cycles.join("\n\n")
    );
}

#[test]
fn the_graph_sees_the_crate_as_it_is() {
    // Guards against a reader that silently finds nothing.
    let edges = module_graph();
    for (from, to) in [
        ("sse", "http"),
        ("assembler", "partial_json"),
        ("providers::google", "sse"),
        ("providers::mistral", "providers::body_text"),
        ("stream", "registry"),
    ] {
        assert!(
            edges.get(from).is_some_and(|e| e.contains_key(to)),
            "expected an edge {from} -> {to}; edges: {edges:#?}"
        );
    }
}

#[test]
fn paths_are_read_from_groups_inline_uses_and_not_from_comments_or_strings() {
    let code = code_only(
        "use crate::{a, b::{c, d as e}, f::*};\n\
         // crate::comment::x\n\
         let s = \"crate::string::x\"; let r = r#\"crate::raw::x\"#;\n\
         let c = '\"'; let l: &'static str = crate::inline::call(x);\n\
         /* crate::block /* nested */ crate::block2 */ crate::tail::T::<u8>::new();\n",
    );
    let paths: Vec<(usize, String)> = crate_paths(&code)
        .into_iter()
        .map(|(line, p)| (line, p.join("::")))
        .collect();
    let expected: Vec<(usize, String)> = [
        (1, "a"),
        (1, "b::c"),
        (1, "b::d"),
        (1, "f::*"),
        (4, "inline::call"),
        (5, "tail::T"),
    ]
    .into_iter()
    .map(|(l, p)| (l, p.to_owned()))
    .collect();
    assert_eq!(paths, expected);
}
