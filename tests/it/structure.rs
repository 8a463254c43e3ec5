//! The code's shape (docs/ARCHITECTURE.md §Rules of the layout), checked
//! over every source file of the crates it names: no circle of imports
//! between files, no file over 1,000 lines of code outside its tests, and
//! (in the crates `SHORT_FNS` names) no function over 120 lines.
//!
//! The scan reads the source, not the compiler's output. A file A depends
//! on a file B when A names an item B defines: through `use` (a `pub use`
//! re-export included), a `crate::`, `super::` or `self::` path, or a path
//! through a child module it declares. A path to a re-exported item is
//! followed to the file that defines it; a path out of the crate ends the
//! walk. Test modules (`#[cfg(test)]`) are left out, as `cargo modules
//! dependencies` leaves them out by default.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates held to the rules (their `src` folders, from the root).
const CHECKED: [&str; 5] = [
    "crates/core/src",
    "crates/log/src",
    "crates/ledger/src",
    "crates/service/src",
    "src",
];

/// Most lines of a source file, its test modules aside.
const MAX_LINES: usize = 1000;

/// The crates whose functions are held to `MAX_FN_LINES`.
const SHORT_FNS: [&str; 1] = ["crates/core/src"];

/// Most lines of a function, from its `fn` line to its closing brace.
const MAX_FN_LINES: usize = 120;

type ModPath = Vec<String>;

/// One source file, read.
struct File {
    path: PathBuf,
    module: ModPath,
    /// Its code: comments, strings and test modules blanked.
    code: String,
    /// Modules it declares (`mod x;`), not tests.
    children: BTreeSet<String>,
    /// Names it brings in by `use`: name → the path it stands for.
    uses: BTreeMap<String, Vec<String>>,
    /// Every path it names (each from its first segment).
    paths: Vec<Vec<String>>,
}

fn module_of(src: &Path, file: &Path) -> ModPath {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

/// The text with comments, string and char literals blanked (lengths and
/// line breaks kept).
fn blank(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let blank_to = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            let end = text[i..].find('\n').map_or(b.len(), |n| i + n);
            blank_to(&mut out, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let end = text[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
            blank_to(&mut out, i, end);
            i = end;
        } else if b[i] == b'r' && (b[i + 1..].starts_with(b"#") || b[i + 1..].starts_with(b"\"")) {
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            if b.get(i + 1 + hashes) == Some(&b'"') && (i == 0 || !b[i - 1].is_ascii_alphanumeric())
            {
                let close = format!("\"{}", "#".repeat(hashes));
                let start = i + 2 + hashes;
                let end = text[start..]
                    .find(&close)
                    .map_or(b.len(), |n| start + n + close.len());
                blank_to(&mut out, i, end);
                i = end;
            } else {
                i += 1;
            }
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank_to(&mut out, i, (j + 1).min(b.len()));
            i = j + 1;
        } else if b[i] == b'\'' {
            // A char literal ('x', '\n', '\u{..}'), not a lifetime.
            let close = if b.get(i + 1) == Some(&b'\\') {
                text[i + 2..].find('\'').map(|n| i + 2 + n)
            } else if b.get(i + 2) == Some(&b'\'') {
                Some(i + 2)
            } else {
                text[i + 1..]
                    .chars()
                    .next()
                    .filter(|c| c.len_utf8() > 1)
                    .and_then(|c| {
                        (b.get(i + 1 + c.len_utf8()) == Some(&b'\'')).then(|| i + 1 + c.len_utf8())
                    })
            };
            match close {
                Some(end) => {
                    blank_to(&mut out, i, end + 1);
                    i = end + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The code with `#[cfg(test)]` items blanked, and the test modules it
/// declares as files.
fn without_tests(code: &str) -> (String, BTreeSet<String>) {
    let mut out = code.to_string();
    let mut test_files = BTreeSet::new();
    let mut from = 0;
    while let Some(n) = out[from..].find("#[cfg(test)]") {
        let at = from + n;
        let rest = &out[at..];
        let semi = rest.find(';').unwrap_or(rest.len());
        let brace = rest.find('{').unwrap_or(rest.len());
        let end = if semi < brace {
            let decl = &rest[..semi];
            if let Some(name) = decl
                .split_whitespace()
                .last()
                .filter(|_| decl.contains("mod "))
            {
                test_files.insert(name.to_string());
            }
            at + semi + 1
        } else {
            let mut depth = 0;
            let mut end = out.len();
            for (k, c) in rest.char_indices().skip(brace) {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = at + k + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            end
        };
        let blanked: String = out[at..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        out.replace_range(at..end, &blanked);
        from = at + blanked.len();
    }
    (out, test_files)
}

fn ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Expands a `use` tree (`a::{b, c::d as e, f::*}`) into (name, path).
fn expand(prefix: &[String], tree: &str, out: &mut Vec<(String, Vec<String>)>) {
    let tree = tree.trim();
    if tree.is_empty() {
        return;
    }
    if let Some(open) = tree.find('{') {
        let head: Vec<String> = tree[..open]
            .split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        let mut base = prefix.to_vec();
        base.extend(head);
        let inner = &tree[open + 1..tree.rfind('}').unwrap()];
        let mut depth = 0;
        let mut start = 0;
        for (k, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&base, &inner[start..k], out);
                    start = k + 1;
                }
                _ => {}
            }
        }
        expand(&base, &inner[start..], out);
        return;
    }
    let (path, alias) = match tree.split_once(" as ") {
        Some((p, a)) => (p.trim(), Some(a.trim().to_string())),
        None => (tree, None),
    };
    let mut full = prefix.to_vec();
    full.extend(path.split("::").map(|s| s.trim().to_string()));
    let last = full.last().cloned().unwrap_or_default();
    let name = match (alias, last.as_str()) {
        (Some(a), _) => a,
        (None, "self") => {
            full.pop();
            full.last().cloned().unwrap_or_default()
        }
        (None, _) => last,
    };
    out.push((name, full));
}

fn read(src: &Path, path: &Path) -> (File, BTreeSet<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    let (code, test_files) = without_tests(&blank(&text));
    let mut children = BTreeSet::new();
    let mut uses = BTreeMap::new();
    let mut paths = Vec::new();
    // Statements: split at `;`, `{` and `}` is enough to find `mod` and `use`.
    for stmt in code.split([';', '}']) {
        let stmt = stmt.rsplit('{').next().unwrap_or(stmt);
        let words: Vec<&str> = stmt.split_whitespace().collect();
        let Some(k) = words.iter().position(|w| *w == "mod" || *w == "use") else {
            continue;
        };
        if words[..k].iter().any(|w| !w.starts_with("pub")) {
            continue;
        }
        if words[k] == "mod" && words.len() == k + 2 {
            children.insert(words[k + 1].to_string());
        }
    }
    let mut rest = code.as_str();
    while let Some(n) = find_word(rest, "use") {
        let after = &rest[n + 3..];
        let end = after.find(';').unwrap_or(after.len());
        let mut list = Vec::new();
        expand(&[], &after[..end], &mut list);
        for (name, path) in list {
            if name != "*" && name != "_" {
                uses.insert(name, path.clone());
            }
            paths.push(path);
        }
        rest = &after[end..];
    }
    // Inline paths `a::b::c` whose first segment is crate, super, self or a
    // name the file declares or brings in.
    let chars: Vec<(usize, char)> = code.char_indices().collect();
    let mut k = 0;
    while k < chars.len() {
        let (at, c) = chars[k];
        if ident(c) && (k == 0 || !ident(chars[k - 1].1) && chars[k - 1].1 != ':') {
            let tail = &code[at..];
            let len: usize = tail
                .chars()
                .take_while(|&c| ident(c) || c == ':')
                .map(char::len_utf8)
                .sum();
            let seg: Vec<String> = tail[..len].split("::").map(String::from).collect();
            if seg.len() > 1 && seg.iter().all(|s| !s.is_empty()) {
                paths.push(seg);
            }
            k += tail[..len].chars().count().max(1);
        } else {
            k += 1;
        }
    }
    let module = module_of(src, path);
    (
        File {
            path: path.to_path_buf(),
            module,
            code,
            children,
            uses,
            paths,
        },
        test_files,
    )
}

fn find_word(text: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(n) = text[from..].find(word) {
        let at = from + n;
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        if !before.is_some_and(ident) && after.is_some_and(char::is_whitespace) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// One crate's files, test files left out.
fn crate_files(src: &Path) -> Vec<File> {
    let mut paths = Vec::new();
    sources(src, &mut paths);
    paths.sort();
    let mut files = Vec::new();
    let mut tests: BTreeSet<ModPath> = BTreeSet::new();
    for p in &paths {
        let (f, t) = read(src, p);
        for name in t {
            let mut m = f.module.clone();
            m.push(name);
            tests.insert(m);
        }
        files.push(f);
    }
    files.retain(|f| !tests.iter().any(|t| f.module.starts_with(t)));
    files
}

/// The file defining what `path`, named in `from`, stands for; `None` out
/// of the crate or not found.
fn resolve(files: &[File], from: usize, path: &[String], depth: usize) -> Option<usize> {
    if depth > 16 || path.is_empty() {
        return None;
    }
    let here = &files[from];
    let mut abs: ModPath = match path[0].as_str() {
        "crate" => Vec::new(),
        "self" => here.module.clone(),
        "super" => {
            let mut m = here.module.clone();
            m.pop();
            m
        }
        first if here.children.contains(first) => {
            let mut m = here.module.clone();
            m.push(first.to_string());
            m
        }
        first => {
            let target = here.uses.get(first)?;
            if target.first().map(String::as_str) == Some(first) && !here.children.contains(first) {
                return None; // an outside crate
            }
            let mut joined = target.clone();
            joined.extend_from_slice(&path[1..]);
            return resolve(files, from, &joined, depth + 1);
        }
    };
    let mut rest = &path[1..];
    while rest.first().map(String::as_str) == Some("super") {
        abs.pop();
        rest = &rest[1..];
    }
    // Walk down as far as files go.
    let find = |m: &ModPath| files.iter().position(|f| &f.module == m);
    let mut at = find(&abs)?;
    let mut k = 0;
    while k < rest.len() {
        let mut next = files[at].module.clone();
        next.push(rest[k].clone());
        match find(&next) {
            Some(n) => {
                at = n;
                k += 1;
            }
            None => break,
        }
    }
    // An item the file re-exports is followed to where it is defined.
    if let Some(name) = rest.get(k) {
        if let Some(target) = files[at].uses.get(name).filter(|_| at != from) {
            let mut joined = target.clone();
            joined.extend_from_slice(&rest[k + 1..]);
            if let Some(def) = resolve(files, at, &joined, depth + 1) {
                return Some(def);
            }
            return None;
        }
    }
    Some(at)
}

/// Circles of imports (each a strongly connected set of two files or
/// more), with one import per edge to show why.
/// For each file, the files it imports from, each with the first path
/// that makes it so.
fn imports(files: &[File]) -> Vec<BTreeMap<usize, String>> {
    let mut edges: Vec<BTreeMap<usize, String>> = vec![BTreeMap::new(); files.len()];
    for (a, f) in files.iter().enumerate() {
        for p in &f.paths {
            if let Some(b) = resolve(files, a, p, 0) {
                if b != a {
                    edges[a].entry(b).or_insert_with(|| p.join("::"));
                }
            }
        }
    }
    edges
}

fn circles(files: &[File]) -> Vec<Vec<String>> {
    let n = files.len();
    let edges = imports(files);
    // Tarjan's strongly connected components.
    struct T<'e> {
        edges: &'e [BTreeMap<usize, String>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on: Vec<bool>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(t: &mut T, v: usize) {
        t.index[v] = Some(t.next);
        t.low[v] = t.next;
        t.next += 1;
        t.stack.push(v);
        t.on[v] = true;
        for &w in t.edges[v].keys() {
            match t.index[w] {
                None => {
                    visit(t, w);
                    t.low[v] = t.low[v].min(t.low[w]);
                }
                Some(i) if t.on[w] => t.low[v] = t.low[v].min(i),
                _ => {}
            }
        }
        if Some(t.low[v]) == t.index[v] {
            let mut c = Vec::new();
            loop {
                let w = t.stack.pop().unwrap();
                t.on[w] = false;
                c.push(w);
                if w == v {
                    break;
                }
            }
            if c.len() > 1 {
                t.out.push(c);
            }
        }
    }
    let mut t = T {
        edges: &edges,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on: vec![false; n],
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            visit(&mut t, v);
        }
    }
    t.out
        .iter()
        .map(|c| {
            let set: BTreeSet<usize> = c.iter().copied().collect();
            let mut lines = Vec::new();
            for &a in &set {
                for (b, why) in &edges[a] {
                    if set.contains(b) {
                        lines.push(format!(
                            "{} → {} ({why})",
                            files[a].path.display(),
                            files[*b].path.display()
                        ));
                    }
                }
            }
            lines
        })
        .collect()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn no_circle_of_imports_between_files() {
    let mut found = Vec::new();
    for src in CHECKED {
        let files = crate_files(&root().join(src));
        assert!(files.len() > 3, "{src}: the scan found too few files");
        let found_here = circles(&files);
        // The scan's figures, for the record (`--nocapture` shows them).
        println!(
            "{src}: {} files, {} imports between files, {} circles",
            files.len(),
            imports(&files).iter().map(BTreeMap::len).sum::<usize>(),
            found_here.len()
        );
        for c in found_here {
            found.push(format!("in {src}:\n  {}", c.join("\n  ")));
        }
    }
    assert!(
        found.is_empty(),
        "import circles (docs/ARCHITECTURE.md §Rules of the layout):\n{}",
        found.join("\n")
    );
}

#[test]
fn no_source_file_is_over_a_thousand_lines_of_code() {
    let mut long = Vec::new();
    for src in CHECKED {
        for f in crate_files(&root().join(src)) {
            let lines = f.code.trim_end().lines().count();
            if lines > MAX_LINES {
                long.push(format!("{} ({lines} lines)", f.path.display()));
            }
        }
    }
    assert!(long.is_empty(), "over {MAX_LINES} lines: {long:?}");
}

/// The functions of `code` (comments, strings and tests blanked) longer
/// than `most` lines: (name, first line, lines).
fn long_functions(code: &str, most: usize) -> Vec<(String, usize, usize)> {
    let mut long = Vec::new();
    let mut from = 0;
    while let Some(n) = find_word(&code[from..], "fn") {
        let at = from + n;
        from = at + 2;
        let rest = &code[from..];
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|&c| ident(c))
            .collect();
        // A declaration without a body (a trait's) ends at `;` first.
        let (Some(open), semi) = (rest.find('{'), rest.find(';')) else {
            continue;
        };
        if semi.is_some_and(|s| s < open) {
            continue;
        }
        let mut depth = 0;
        let mut close = None;
        for (k, c) in rest[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(from + open + k);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else { break };
        let first = code[..at].matches('\n').count() + 1;
        let lines = code[at..close].matches('\n').count() + 1;
        if lines > most {
            long.push((name, first, lines));
        }
    }
    long
}

#[test]
fn no_function_is_over_120_lines() {
    let mut long = Vec::new();
    for src in SHORT_FNS {
        for f in crate_files(&root().join(src)) {
            for (name, line, lines) in long_functions(&f.code, MAX_FN_LINES) {
                long.push(format!(
                    "{}:{line} fn {name} ({lines} lines)",
                    f.path.display()
                ));
            }
        }
    }
    assert!(long.is_empty(), "over {MAX_FN_LINES} lines: {long:#?}");
}

/// The length scan finds a long function, with or without nested braces,
/// and passes over a trait's declarations and a short one.
#[test]
fn the_scan_finds_a_long_function() {
    let body = "    let x = { 1 };\n".repeat(8);
    let text = format!(
        "trait T {{ fn declared(&self) -> u8; }}\nfn short() {{\n{body}}}\n\
         fn long(a: u8) -> u8 {{\n    if a > 0 {{\n{body}{body}    }}\n    a\n}}\n\
         /* fn in_a_comment() {{ }} */\n"
    );
    let (code, _) = without_tests(&blank(&text));
    assert_eq!(
        long_functions(&code, 10),
        vec![("long".to_string(), 12, 21)]
    );
    assert!(long_functions(&code, 21).is_empty());
}

/// The scan finds a circle where there is one, through a re-export too.
#[test]
fn the_scan_finds_a_circle() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("a")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\npub use a::Thing;\n").unwrap();
    std::fs::write(
        src.join("a/mod.rs"),
        "mod inner;\npub struct Thing;\nfn f() { crate::b::g(); }\n",
    )
    .unwrap();
    std::fs::write(src.join("a/inner.rs"), "use super::Thing;\n").unwrap();
    std::fs::write(
        src.join("b.rs"),
        "use crate::Thing;\npub fn g() {}\n#[cfg(test)]\nmod tests { use crate::a::Thing; }\n",
    )
    .unwrap();
    let files = crate_files(src);
    let found = circles(&files);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].len(), 2, "a ↔ b through the re-export: {found:?}");
    // A child naming its parent's item is a use; a parent declaring its
    // child is not.
    std::fs::write(
        src.join("a/mod.rs"),
        "mod inner;\npub struct Thing;\nfn f() { inner::h(); }\n",
    )
    .unwrap();
    std::fs::write(src.join("b.rs"), "pub fn g() {}\n").unwrap();
    std::fs::write(src.join("a/inner.rs"), "use super::Thing;\npub fn h() {}\n").unwrap();
    let found = circles(&crate_files(src));
    assert_eq!(found.len(), 1, "a/mod.rs ↔ a/inner.rs: {found:?}");
    std::fs::write(src.join("a/mod.rs"), "mod inner;\npub struct Thing;\n").unwrap();
    assert!(circles(&crate_files(src)).is_empty());
}
