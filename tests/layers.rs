//! Every import points down, inside each crate as between the crates: the modules of each
//! crate, linked by what they import from each other, form no circle, and nothing is imported
//! from a binary's `main.rs`. docs/ARCHITECTURE.md lists the layers this test keeps.
//!
//! The test reads the sources, not the compiler's view: a module is a file; an edge runs
//! from a file to the file that defines (or re-exports) what it names through `crate::`,
//! `super::` or a child module's name. A re-export (`pub use a::X` in a `lib.rs` or
//! `mod.rs`) is followed to the module it comes from, so a table of contents that re-exports
//! its children is no layer of its own. Comments, strings and `#[cfg(test)]` code are left
//! out: a unit test may reach wherever it needs.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The crates' source roots, with whether the root is a binary's `main.rs`.
const CRATES: &[(&str, &str)] = &[
    ("ring/src", "lib.rs"),
    ("flowcache/src", "lib.rs"),
    ("capture/src", "lib.rs"),
    ("kflows/src", "lib.rs"),
    ("zcap/src", "lib.rs"),
    ("bench/src", "main.rs"),
    ("src", "lib.rs"),
];

/// One file of a crate: its module path and what it says.
struct Module {
    file: PathBuf,
    /// Code with comments, strings and `#[cfg(test)]` items blanked (line breaks kept).
    code: String,
    /// Child modules declared with `mod name;` (not under `#[cfg(test)]`).
    children: Vec<String>,
}

fn main_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Blanks comments, string and char literals, keeping line breaks so lines still count.
fn strip(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |c: u8| if c == b'\n' { b'\n' } else { b' ' };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    out.push(b' ');
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        out.extend([b' ', b' ']);
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        out.extend([b' ', b' ']);
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        out.push(blank(b[i]));
                        i += 1;
                    }
                }
            }
            b'r' if matches!(b.get(i + 1), Some(b'#') | Some(b'"'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let mut j = i + 1;
                let mut hashes = 0;
                while b.get(j) == Some(&b'#') {
                    hashes += 1;
                    j += 1;
                }
                if b.get(j) != Some(&b'"') {
                    out.push(b[i]);
                    i += 1;
                    continue;
                }
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                let end = b[j + 1..]
                    .windows(close.len())
                    .position(|w| w == close.as_slice())
                    .map_or(b.len(), |p| j + 1 + p + close.len());
                out.extend(b[i..end].iter().map(|&c| blank(c)));
                i = end;
            }
            b'"' => {
                out.push(b' ');
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        out.push(b' ');
                        i += 1;
                    }
                    if i < b.len() {
                        out.push(blank(b[i]));
                        i += 1;
                    }
                }
                out.push(b' ');
                i += 1;
            }
            b'\'' => {
                // A char literal ('x', '\n', '\u{..}'); otherwise a lifetime.
                let end = if b.get(i + 1) == Some(&b'\\') {
                    b[i + 2..]
                        .iter()
                        .position(|&c| c == b'\'')
                        .map(|p| i + 3 + p)
                } else if b.get(i + 2) == Some(&b'\'') {
                    Some(i + 3)
                } else {
                    None
                };
                match end {
                    Some(end) => {
                        out.extend(std::iter::repeat_n(b' ', end - i));
                        i = end;
                    }
                    None => {
                        out.push(b'\'');
                        i += 1;
                    }
                }
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).expect("ASCII blanks keep UTF-8")
}

/// Blanks every item under `#[cfg(test)]` (an inline module, a function, a `mod x;`).
fn strip_test_items(code: &str) -> String {
    let mut out = code.to_string();
    let mut from = 0;
    while let Some(p) = out[from..].find("#[cfg(") {
        let start = from + p;
        let attr_end = start + out[start..].find(']').unwrap_or(out.len() - start);
        let attr = &out[start..attr_end];
        let test_only =
            attr.split(|c: char| !is_ident(c)).any(|w| w == "test") && !attr.contains("not(test");
        if !test_only {
            from = attr_end;
            continue;
        }
        let b = out.as_bytes();
        // The item ends at its first `;` before any `{`, or at the `}` closing its first `{`.
        let mut i = attr_end;
        let mut depth = 0usize;
        let end = loop {
            match b.get(i) {
                None => break b.len(),
                Some(b';') if depth == 0 => break i + 1,
                Some(b'{') => depth += 1,
                Some(b'}') => {
                    depth -= 1;
                    if depth == 0 {
                        break i + 1;
                    }
                }
                _ => {}
            }
            i += 1;
        };
        let blanked: String = out[start..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        out.replace_range(start..end, &blanked);
        from = end;
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `mod name;` declarations of a file's (already stripped) code.
fn child_modules(code: &str) -> Vec<String> {
    let mut kids = Vec::new();
    for line in code.lines() {
        let t = line.trim_start();
        let t = t
            .strip_prefix("pub(crate) ")
            .or_else(|| t.strip_prefix("pub "))
            .unwrap_or(t);
        if let Some(rest) = t.strip_prefix("mod ") {
            if let Some(name) = rest.trim_end().strip_suffix(';') {
                kids.push(name.trim().to_string());
            }
        }
    }
    kids
}

/// Reads a crate's module tree from its root file.
fn read_crate(dir: &Path, root: &str) -> BTreeMap<Vec<String>, Module> {
    let mut modules = BTreeMap::new();
    let mut todo = vec![(Vec::<String>::new(), dir.join(root))];
    while let Some((path, file)) = todo.pop() {
        let src = fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let code = strip_test_items(&strip(&src));
        let children = child_modules(&code);
        // `a.rs` or `a/mod.rs` for module `a` of the root; children of `x/a.rs` in `x/a/`.
        let base = if path.is_empty() || file.ends_with("mod.rs") {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        for kid in &children {
            let (flat, nested) = (
                base.join(format!("{kid}.rs")),
                base.join(kid).join("mod.rs"),
            );
            let kid_file = if flat.exists() { flat } else { nested };
            let mut kid_path = path.clone();
            kid_path.push(kid.clone());
            todo.push((kid_path, kid_file));
        }
        modules.insert(
            path,
            Module {
                file,
                code,
                children,
            },
        );
    }
    modules
}

/// Parses the use-tree or path that starts at `s` into full paths (segments), following
/// `{a, b::c}` groups; `as` renames and `*` globs end a path.
fn paths_at(s: &str) -> Vec<Vec<String>> {
    fn tree(s: &[char], i: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
        let mut cur = prefix;
        loop {
            while *i < s.len() && s[*i].is_whitespace() {
                *i += 1;
            }
            if *i < s.len() && s[*i] == '{' {
                *i += 1;
                loop {
                    tree(s, i, cur.clone(), out);
                    while *i < s.len() && s[*i].is_whitespace() {
                        *i += 1;
                    }
                    match s.get(*i) {
                        Some(',') => *i += 1,
                        Some('}') => {
                            *i += 1;
                            return;
                        }
                        _ => return,
                    }
                    while *i < s.len() && s[*i].is_whitespace() {
                        *i += 1;
                    }
                    if s.get(*i) == Some(&'}') {
                        *i += 1;
                        return;
                    }
                }
            }
            let start = *i;
            while *i < s.len() && is_ident(s[*i]) {
                *i += 1;
            }
            if *i > start {
                cur.push(s[start..*i].iter().collect());
            }
            if s.get(*i) == Some(&':') && s.get(*i + 1) == Some(&':') {
                *i += 2;
                continue;
            }
            // The end of a path: a glob, or a rename (`as NAME`).
            if s.get(*i) == Some(&'*') {
                *i += 1;
            }
            let mut j = *i;
            while j < s.len() && s[j].is_whitespace() {
                j += 1;
            }
            if s.get(j..j + 3) == Some(&['a', 's', ' ']) {
                j += 3;
                while j < s.len() && s[j].is_whitespace() {
                    j += 1;
                }
                while j < s.len() && is_ident(s[j]) {
                    j += 1;
                }
                *i = j;
            }
            out.push(cur);
            return;
        }
    }
    let chars: Vec<char> = s.chars().take(2000).collect();
    let mut out = Vec::new();
    tree(&chars, &mut 0, Vec::new(), &mut out);
    out
}

/// The byte ranges of the inline modules (`mod x { .. }`) of a file's stripped code.
fn inline_modules(code: &str) -> Vec<std::ops::Range<usize>> {
    let b = code.as_bytes();
    let mut ranges = Vec::new();
    for (at, _) in code.match_indices("mod ") {
        if at > 0 && is_ident(b[at - 1] as char) {
            continue;
        }
        let rest = &code[at + 4..];
        let name_len = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        let after = rest[name_len..].trim_start();
        if name_len == 0 || !after.starts_with('{') {
            continue;
        }
        let open = at + 4 + name_len + (rest.len() - name_len - after.len());
        let mut depth = 0usize;
        for (i, &c) in b.iter().enumerate().skip(open) {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        ranges.push(open..i);
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    ranges
}

/// Every path a module names that reaches into its own crate, made absolute, with its line.
fn references(path: &[String], m: &Module) -> Vec<(Vec<String>, usize)> {
    let mut refs = Vec::new();
    let code = &m.code;
    let mut heads: Vec<(&str, Vec<String>)> =
        vec![("crate::", Vec::new()), ("self::", path.to_vec())];
    if !path.is_empty() {
        heads.push(("super::", path[..path.len() - 1].to_vec()));
    }
    for kid in &m.children {
        let mut p = path.to_vec();
        p.push(kid.clone());
        heads.push((Box::leak(format!("{kid}::").into_boxed_str()), p));
    }
    let inline = inline_modules(code);
    for (head, base) in heads {
        let mut from = 0;
        while let Some(p) = code[from..].find(head) {
            let at = from + p;
            from = at + head.len();
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| is_ident(c) || c == '$' || c == ':') {
                continue;
            }
            // `pub(in crate::x)` is a visibility, not an import.
            if code[..at].trim_end().ends_with("(in") {
                continue;
            }
            // `super::` and `self::` inside an inline `mod x { .. }` name the file's own
            // module (or one inside it).
            if (head == "super::" || head == "self::") && inline.iter().any(|r| r.contains(&at)) {
                continue;
            }
            let line = code[..at].matches('\n').count() + 1;
            for tail in paths_at(&code[at + head.len()..]) {
                let mut full = base.clone();
                let mut tail = tail.into_iter().peekable();
                // `super::super::x`
                while tail.peek().is_some_and(|s| s == "super") {
                    tail.next();
                    full.pop();
                }
                full.extend(tail.filter(|s| s != "self"));
                refs.push((full, line));
            }
        }
    }
    refs
}

/// The module a path lands in: the longest module prefix, then through that module's
/// re-exports (`pub use`) of the next name, as far as they lead.
fn resolve(
    modules: &BTreeMap<Vec<String>, Module>,
    reexports: &BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
    path: &[String],
) -> Vec<String> {
    let mut path = path.to_vec();
    for _ in 0..8 {
        let n = (0..=path.len())
            .rev()
            .find(|&n| modules.contains_key(&path[..n]))
            .unwrap_or(0);
        let module = path[..n].to_vec();
        let Some(next) = path.get(n) else {
            return module;
        };
        match reexports.get(&module).and_then(|r| r.get(next)) {
            Some(target) if target != &path[..=n] => {
                let mut p = target.clone();
                p.extend_from_slice(&path[n + 1..]);
                path = p;
            }
            _ => return module,
        }
    }
    path
}

/// `pub use` statements of a module: each exported name and the absolute path it names.
fn reexports_of(path: &[String], m: &Module) -> BTreeMap<String, Vec<String>> {
    let mut map = BTreeMap::new();
    for (i, _) in m.code.match_indices("pub use ") {
        let rest = &m.code[i + "pub use ".len()..];
        let stmt = &rest[..rest.find(';').unwrap_or(rest.len())];
        for p in paths_at(stmt) {
            let Some(first) = p.first() else { continue };
            let mut full: Vec<String> = match first.as_str() {
                "crate" => p[1..].to_vec(),
                "super" => {
                    let mut b = path[..path.len().saturating_sub(1)].to_vec();
                    b.extend_from_slice(&p[1..]);
                    b
                }
                "self" => [path, &p[1..]].concat(),
                kid if m.children.iter().any(|c| c == kid) => [path, &p[..]].concat(),
                _ => continue,
            };
            full.retain(|s| s != "self");
            let as_name = stmt
                .split(" as ")
                .nth(1)
                .filter(|_| !stmt.contains('{'))
                .map(|s| s.trim().to_string());
            if let Some(name) = as_name.or_else(|| full.last().cloned()) {
                map.insert(name, full);
            }
        }
    }
    map
}

/// The module graph of a crate: edges (from, to) with the line of the first reference.
fn graph(modules: &BTreeMap<Vec<String>, Module>) -> BTreeMap<(Vec<String>, Vec<String>), usize> {
    let reexports: BTreeMap<_, _> = modules
        .iter()
        .map(|(p, m)| (p.clone(), reexports_of(p, m)))
        .collect();
    let mut edges = BTreeMap::new();
    for (path, m) in modules {
        for (r, line) in references(path, m) {
            let to = resolve(modules, &reexports, &r);
            if &to != path {
                edges.entry((path.clone(), to)).or_insert(line);
            }
        }
    }
    edges
}

/// Each module's layer: 0 for one that imports nothing of its crate, else one more than the
/// highest layer it imports from (on a graph without circles).
fn layers(
    modules: &BTreeMap<Vec<String>, Module>,
    edges: &BTreeMap<(Vec<String>, Vec<String>), usize>,
) -> BTreeMap<Vec<String>, usize> {
    let mut layer: BTreeMap<Vec<String>, usize> = modules.keys().map(|p| (p.clone(), 0)).collect();
    for _ in 0..modules.len() {
        for (from, to) in edges.keys() {
            let up = layer[to] + 1;
            if layer[from] < up && up <= modules.len() {
                layer.insert(from.clone(), up);
            }
        }
    }
    layer
}

/// Prints each crate's modules by layer, lowest first: `cargo test --test layers -- --nocapture`.
#[test]
fn print_the_layers() {
    for (dir, root) in CRATES {
        let modules = read_crate(&main_dir().join(dir), root);
        let by_module = layers(&modules, &graph(&modules));
        let mut by_layer: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        for (p, l) in by_module {
            by_layer.entry(l).or_default().push(name(&p));
        }
        println!("{dir}:");
        for (l, names) in by_layer {
            println!("  {l}: {}", names.join(", "));
        }
    }
}

fn name(p: &[String]) -> String {
    if p.is_empty() {
        "crate".into()
    } else {
        p.join("::")
    }
}

/// A circle in the graph, if there is one (depth-first search for a back edge).
fn circle(edges: &BTreeMap<(Vec<String>, Vec<String>), usize>) -> Option<Vec<Vec<String>>> {
    let mut next: BTreeMap<&Vec<String>, Vec<&Vec<String>>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        next.entry(from).or_default().push(to);
    }
    fn visit<'a>(
        n: &'a Vec<String>,
        next: &BTreeMap<&'a Vec<String>, Vec<&'a Vec<String>>>,
        stack: &mut Vec<&'a Vec<String>>,
        done: &mut BTreeSet<&'a Vec<String>>,
    ) -> Option<Vec<Vec<String>>> {
        if let Some(i) = stack.iter().position(|s| *s == n) {
            return Some(stack[i..].iter().map(|s| (*s).clone()).collect());
        }
        if done.contains(n) {
            return None;
        }
        stack.push(n);
        for m in next.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, next, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(n);
        None
    }
    let mut done = BTreeSet::new();
    for n in next.keys() {
        if let Some(c) = visit(n, &next, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

#[test]
fn imports_point_down_in_every_crate() {
    let mut failures = Vec::new();
    for (dir, root) in CRATES {
        let modules = read_crate(&main_dir().join(dir), root);
        let edges = graph(&modules);
        let file = |p: &Vec<String>| {
            modules[p]
                .file
                .strip_prefix(main_dir())
                .unwrap()
                .display()
                .to_string()
        };
        if *root == "main.rs" {
            for ((from, to), line) in &edges {
                if to.is_empty() {
                    failures.push(format!("{}:{line} imports from main.rs", file(from)));
                }
            }
        }
        // Every circle, each found after the last one's closing edge is taken out.
        let mut left = edges.clone();
        while let Some(c) = circle(&left) {
            left.remove(&(c[c.len() - 1].clone(), c[0].clone()));
            let steps: Vec<String> = c
                .iter()
                .zip(c.iter().cycle().skip(1))
                .map(|(a, b)| {
                    format!(
                        "{} ({}:{})",
                        name(a),
                        file(a),
                        edges[&(a.clone(), b.clone())]
                    )
                })
                .collect();
            failures.push(format!(
                "{dir}: a circle: {} -> {}",
                steps.join(" -> "),
                name(&c[0])
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "imports that do not point down:\n{}",
        failures.join("\n")
    );
}

#[test]
fn the_reader_sees_through_comments_strings_and_tests() {
    let code = strip_test_items(&strip(
        "use crate::a; // crate::b\n/* crate::c */ let s = \"crate::d\"; let c = '\"';\n\
         #[cfg(test)]\nmod tests { use crate::e; }\nfn f<'a>() { crate::g::h(); }\n\
         pub(in crate::i) fn j() {}\nuse self::k::L;\n",
    ));
    let m = Module {
        file: PathBuf::from("x.rs"),
        children: child_modules(&code),
        code,
    };
    let refs: Vec<String> = references(&["x".into()], &m)
        .into_iter()
        .map(|(p, _)| name(&p))
        .collect();
    assert_eq!(refs, ["a", "g::h", "x::k::L"]);
    let grouped = paths_at("{a::{B, c::D}, e as F, g::*};");
    assert_eq!(
        grouped,
        [
            vec!["a".to_string(), "B".into()],
            vec!["a".into(), "c".into(), "D".into()],
            vec!["e".into()],
            vec!["g".into()],
        ]
    );
}

#[test]
fn a_circle_is_found_and_a_chain_is_not() {
    let e = |pairs: &[(&str, &str)]| -> BTreeMap<(Vec<String>, Vec<String>), usize> {
        pairs
            .iter()
            .map(|(a, b)| ((vec![a.to_string()], vec![b.to_string()]), 1))
            .collect()
    };
    assert!(circle(&e(&[("a", "b"), ("b", "c")])).is_none());
    let c = circle(&e(&[("a", "b"), ("b", "c"), ("c", "a")])).expect("a circle");
    assert_eq!(c.len(), 3);
}
