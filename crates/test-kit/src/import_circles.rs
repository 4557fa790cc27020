//! No import circle inside a crate: within each crate of the workspace, no module may
//! import another that imports it back, directly or through other modules of the same
//! crate. A circle makes two files one concept in two places (neither can be read,
//! moved or tested without the other); the names that tie it belong in a module both
//! sides import, the parent, or the module that owns the concept.
//!
//! The check reads the source as text (no compiler): each crate's module tree from its
//! `lib.rs`/`main.rs` and `mod` declarations, then every path a module writes that
//! names something of the same crate (`crate::`, `super::`, `self::`, a child module,
//! a name a `use` brought in, a name a glob brought in). An import points at the file
//! that defines the name: a `pub use` is followed to the definition, so re-exporting a
//! name elsewhere never hides a circle. A module's own ancestors are its context, not
//! its imports (a child takes its parent's names as Rust lets it see their private
//! items). A `#[cfg(test)] mod` is a module of its own: nothing imports it, so its
//! imports cannot close a loop.
//!
//! `cargo test -p cc-test-kit --all-features --lib import_circles::` runs it; a failure
//! lists each circle with its files and the paths that tie them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One import between two files of a crate, with the path written in the first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Import {
    from: PathBuf,
    to: PathBuf,
    path: String,
}

/// A crate's files and the imports between them.
#[derive(Debug, Default)]
struct Graph {
    files: BTreeSet<PathBuf>,
    imports: BTreeSet<Import>,
    /// `mod` declarations whose file is missing (a `#[path]` or a typo): reported, so a
    /// module the check cannot read is never silently left out.
    unread: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    /// `::`
    PathSep,
    Punct(char),
}

/// The tokens of Rust source that matter for paths: comments, strings, characters and
/// lifetimes are dropped.
fn tokens(src: &str) -> Vec<Token> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let ident_start = |ch: char| ch.is_alphabetic() || ch == '_';
    let ident_char = |ch: char| ch.is_alphanumeric() || ch == '_';
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if ch == '"' {
            i = skip_string(&c, i + 1);
        } else if ch == '\'' {
            if next == Some('\\') {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                // A lifetime or a label.
                i += 1;
                while i < c.len() && ident_char(c[i]) {
                    i += 1;
                }
            }
        } else if ident_start(ch) {
            let start = i;
            while i < c.len() && ident_char(c[i]) {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let at = c.get(i).copied();
            match (word.as_str(), at) {
                ("r" | "br" | "cr", Some('"' | '#'))
                    if at == Some('"') || matches!(c.get(i + 1), Some('"' | '#')) =>
                {
                    let mut hashes = 0;
                    while c.get(i) == Some(&'#') {
                        hashes += 1;
                        i += 1;
                    }
                    i += 1;
                    while i < c.len() {
                        if c[i] == '"' && (1..=hashes).all(|k| c.get(i + k) == Some(&'#')) {
                            i += 1 + hashes;
                            break;
                        }
                        i += 1;
                    }
                }
                ("r", Some('#')) => {
                    // A raw identifier.
                    let s = i + 1;
                    i = s;
                    while i < c.len() && ident_char(c[i]) {
                        i += 1;
                    }
                    out.push(Token::Ident(c[s..i].iter().collect()));
                }
                ("b" | "c", Some('"')) => i = skip_string(&c, i + 1),
                ("b", Some('\'')) => {
                    i += 1;
                    if c.get(i) == Some(&'\\') {
                        i += 1;
                    }
                    i += 1;
                    while i < c.len() && c[i] != '\'' {
                        i += 1;
                    }
                    i += 1;
                }
                _ => out.push(Token::Ident(word)),
            }
        } else if ch.is_ascii_digit() {
            while i < c.len()
                && (ident_char(c[i])
                    || c[i] == '.' && c.get(i + 1).is_some_and(char::is_ascii_digit))
            {
                i += 1;
            }
        } else if ch == ':' && next == Some(':') {
            out.push(Token::PathSep);
            i += 2;
        } else {
            out.push(Token::Punct(ch));
            i += 1;
        }
    }
    out
}

/// The index just past the string whose body starts at `i`.
fn skip_string(c: &[char], mut i: usize) -> usize {
    while i < c.len() {
        match c[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// Collects the leaves of the `use` tree at `i` under `prefix` (each its whole path and
/// the name it binds, none for a glob) and answers the index just past the tree.
fn use_leaves(
    t: &[Token],
    mut i: usize,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) -> usize {
    let mut path = prefix;
    loop {
        match t.get(i) {
            Some(Token::Ident(w)) => {
                let w = w.clone();
                i += 1;
                if t.get(i) == Some(&Token::PathSep) {
                    path.push(w);
                    i += 1;
                    continue;
                }
                let mut name = if w == "self" {
                    path.last().cloned()
                } else {
                    path.push(w.clone());
                    Some(w)
                };
                if t.get(i) == Some(&Token::Ident("as".into())) {
                    name = match t.get(i + 1) {
                        Some(Token::Ident(a)) if a != "_" => Some(a.clone()),
                        _ => None,
                    };
                    i += 2;
                }
                out.push((path, name));
                return i;
            }
            Some(Token::Punct('*')) => {
                out.push((path, None));
                return i + 1;
            }
            Some(Token::Punct('{')) => {
                i += 1;
                loop {
                    match t.get(i) {
                        Some(Token::Punct('}')) | None => return i + 1,
                        Some(Token::Punct(',')) => i += 1,
                        _ => i = use_leaves(t, i, path.clone(), out),
                    }
                }
            }
            Some(Token::PathSep) => i += 1,
            _ => return i,
        }
    }
}

/// What one module scope (a file, or a `mod name { .. }` inside one) says.
#[derive(Debug, Default)]
struct Scope {
    /// Modules declared here, by name, with their body inline or not.
    children: BTreeSet<String>,
    /// Items defined here (functions, types, constants, macros...).
    items: BTreeSet<String>,
    /// Names bound by `use`, with the path they stand for.
    aliases: BTreeMap<String, Vec<String>>,
    /// The paths of `use ...::*`.
    globs: Vec<Vec<String>>,
    /// A `#[cfg(test)] mod name { .. }`: a module of its own that nothing imports, so it
    /// cannot close a loop; its imports are not its file's.
    test: bool,
    /// Paths written here (in `use` or in code), as written.
    paths: Vec<Vec<String>>,
    /// Single names written here, which a glob import may have brought in.
    names: BTreeSet<String>,
}

/// The keywords a definition's name follows (`macro_rules!` takes its `!` in between).
const ITEM_KEYWORDS: [&str; 9] = [
    "fn",
    "struct",
    "enum",
    "union",
    "trait",
    "type",
    "const",
    "static",
    "macro_rules",
];

/// Reads one file: its scopes by module path (relative to the file's module) and the
/// `mod name;` declarations whose body is another file.
fn read_file(src: &str) -> (BTreeMap<Vec<String>, Scope>, Vec<Vec<String>>) {
    let t = tokens(src);
    let mut scopes: BTreeMap<Vec<String>, Scope> = BTreeMap::new();
    scopes.insert(Vec::new(), Scope::default());
    let mut out_of_line = Vec::new();
    // The inline modules open at this point, with the brace depth each closes at.
    let mut open: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let here = |open: &[(String, usize)]| open.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    let mut i = 0;
    while i < t.len() {
        match &t[i] {
            Token::Punct('{') => {
                depth += 1;
                i += 1;
            }
            Token::Punct('}') => {
                if open.last().is_some_and(|(_, d)| *d == depth) {
                    open.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            Token::Ident(w) if w == "mod" => {
                let (Some(Token::Ident(name)), Some(after)) = (t.get(i + 1), t.get(i + 2)) else {
                    i += 1;
                    continue;
                };
                let mut path = here(&open);
                scopes
                    .entry(path.clone())
                    .or_default()
                    .children
                    .insert(name.clone());
                path.push(name.clone());
                match after {
                    Token::Punct(';') => out_of_line.push(path),
                    Token::Punct('{') => {
                        scopes.entry(path).or_default().test = cfg_test_before(&t, i);
                        depth += 1;
                        open.push((name.clone(), depth));
                    }
                    _ => {}
                }
                i += 3;
            }
            Token::Ident(w) if w == "use" && t.get(i + 1) != Some(&Token::PathSep) => {
                let mut leaves = Vec::new();
                let end = use_leaves(&t, i + 1, Vec::new(), &mut leaves);
                let scope = scopes.entry(here(&open)).or_default();
                for (path, name) in leaves {
                    match name {
                        Some(name) => {
                            scope.aliases.insert(name, path.clone());
                        }
                        None => scope.globs.push(path.clone()),
                    }
                    scope.paths.push(path);
                }
                i = end;
            }
            Token::Ident(w)
                if ITEM_KEYWORDS.contains(&w.as_str())
                    && open.last().map_or(0, |(_, d)| *d) == depth =>
            {
                // `macro_rules! name`, `static mut NAME`: the name comes one later.
                let mut at = i + 1;
                if t.get(at) == Some(&Token::Punct('!'))
                    || t.get(at) == Some(&Token::Ident("mut".into()))
                {
                    at += 1;
                }
                if let Some(Token::Ident(name)) = t.get(at) {
                    scopes
                        .entry(here(&open))
                        .or_default()
                        .items
                        .insert(name.clone());
                }
                i += 1;
            }
            Token::Ident(first) => {
                let after_sep = i > 0 && t[i - 1] == Token::PathSep;
                let after_dot = i > 0 && t[i - 1] == Token::Punct('.');
                // `pub(in crate::x)` is a visibility, not an import.
                let visibility =
                    i > 1 && t[i - 1] == Token::Ident("in".into()) && t[i - 2] == Token::Punct('(');
                if after_sep || after_dot || visibility {
                    i += 1;
                    continue;
                }
                if t.get(i + 1) != Some(&Token::PathSep) {
                    scopes
                        .entry(here(&open))
                        .or_default()
                        .names
                        .insert(first.clone());
                    i += 1;
                    continue;
                }
                let mut path = vec![first.clone()];
                i += 1;
                while t.get(i) == Some(&Token::PathSep) {
                    match t.get(i + 1) {
                        Some(Token::Ident(w)) => {
                            path.push(w.clone());
                            i += 2;
                        }
                        _ => break,
                    }
                }
                scopes.entry(here(&open)).or_default().paths.push(path);
            }
            _ => i += 1,
        }
    }
    (scopes, out_of_line)
}

/// Whether the item starting at `i` (after its visibility) has `#[cfg(test)]` among its
/// attributes.
fn cfg_test_before(t: &[Token], mut i: usize) -> bool {
    let is_pub = |k: usize| t.get(k) == Some(&Token::Ident("pub".into()));
    // Step back over `pub`, `pub(crate)`, `pub(in path)`.
    if i > 0 && is_pub(i - 1) {
        i -= 1;
    } else if i > 0
        && t[i - 1] == Token::Punct(')')
        && let Some(open) = t[..i - 1].iter().rposition(|x| *x == Token::Punct('('))
        && open > 0
        && is_pub(open - 1)
    {
        i = open - 1;
    }
    while i > 0 && t[i - 1] == Token::Punct(']') {
        let end = i - 1;
        let Some(open) = t[..end].iter().rposition(|x| *x == Token::Punct('[')) else {
            return false;
        };
        let body = &t[open + 1..end];
        if body
            == [
                Token::Ident("cfg".into()),
                Token::Punct('('),
                Token::Ident("test".into()),
                Token::Punct(')'),
            ]
        {
            return true;
        }
        i = open.saturating_sub(1);
    }
    false
}

/// The crate-absolute form of `path` written in module `at`, if it names something of
/// this crate.
fn absolute(
    path: &[String],
    at: &[String],
    scope: &Scope,
    follow_alias: bool,
) -> Option<Vec<String>> {
    let first = path.first()?;
    match first.as_str() {
        "crate" => Some(path[1..].to_vec()),
        "self" => absolute_from(at.to_vec(), &path[1..]),
        "super" => absolute_from(at.to_vec(), path),
        name if scope.children.contains(name) => Some([at, path].concat()),
        name if follow_alias => {
            let target = scope.aliases.get(name)?;
            if target.len() == 1 && target[0] == name {
                return None;
            }
            let base = absolute(target, at, scope, false)?;
            Some([base.as_slice(), &path[1..]].concat())
        }
        _ => None,
    }
}

fn absolute_from(mut at: Vec<String>, rest: &[String]) -> Option<Vec<String>> {
    let mut rest = rest;
    while rest.first().is_some_and(|s| s == "super") {
        at.pop()?;
        rest = &rest[1..];
    }
    Some([at.as_slice(), rest].concat())
}

/// Builds the import graph of the crate rooted at `root` (its `lib.rs` or `main.rs`),
/// reading files through `read` (which answers `None` for a missing file).
fn crate_graph(root: &Path, read: &dyn Fn(&Path) -> Option<String>) -> Graph {
    let mut graph = Graph::default();
    // Every module of the crate (a scope) with the file it is written in.
    let mut modules: BTreeMap<Vec<String>, (PathBuf, Scope)> = BTreeMap::new();
    // Files to read: the file, its module path, and the directory its children live in.
    let mut todo = vec![(
        root.to_path_buf(),
        Vec::<String>::new(),
        root.parent().map(Path::to_path_buf).unwrap_or_default(),
    )];
    while let Some((file, module, dir)) = todo.pop() {
        let Some(src) = read(&file) else {
            graph.unread.push(format!(
                "{} (module `{}`)",
                file.display(),
                module.join("::")
            ));
            continue;
        };
        let (file_scopes, out_of_line) = read_file(&src);
        let tests: Vec<Vec<String>> = file_scopes
            .iter()
            .filter(|(_, s)| s.test)
            .map(|(p, _)| p.clone())
            .collect();
        for (inner, scope) in file_scopes {
            // A test module (and what it holds) is a node of its own: `file::tests`.
            let node = match tests
                .iter()
                .filter(|p| inner.starts_with(p))
                .min_by_key(|p| p.len())
            {
                Some(test) => PathBuf::from(format!("{}::{}", file.display(), test.join("::"))),
                None => file.clone(),
            };
            graph.files.insert(node.clone());
            modules.insert([module.as_slice(), &inner].concat(), (node, scope));
        }
        for inner in out_of_line {
            let child_dir = inner[..inner.len() - 1]
                .iter()
                .fold(dir.clone(), |d, s| d.join(s));
            let name = &inner[inner.len() - 1];
            let flat = child_dir.join(format!("{name}.rs"));
            let nested = child_dir.join(name).join("mod.rs");
            let path = [module.as_slice(), &inner].concat();
            if read(&flat).is_some() {
                todo.push((flat, path, child_dir.join(name)));
            } else if read(&nested).is_some() {
                todo.push((nested, path, child_dir.join(name)));
            } else {
                graph.unread.push(format!(
                    "{} or {} (module `{}`)",
                    flat.display(),
                    nested.display(),
                    path.join("::")
                ));
            }
        }
    }
    for (at, (file, scope)) in &modules {
        // What a glob import brought in is written as a single name.
        let mut globbed = Vec::new();
        for glob in &scope.globs {
            let Some(whole) = absolute(glob, at, scope, false) else {
                continue;
            };
            let Some((_, other)) = modules.get(&whole) else {
                continue;
            };
            for name in &scope.names {
                if other.items.contains(name) || other.aliases.contains_key(name) {
                    globbed.push([glob.as_slice(), std::slice::from_ref(name)].concat());
                }
            }
        }
        for path in scope.paths.iter().chain(&globbed) {
            let Some(abs) = absolute(path, at, scope, true) else {
                continue;
            };
            let Some(home) = defined_in(&modules, &abs, 8) else {
                continue;
            };
            // A module's ancestors are its context, not its imports.
            if at.starts_with(home) {
                continue;
            }
            let to = &modules[home].0;
            if to != file {
                graph.imports.insert(Import {
                    from: file.clone(),
                    to: to.clone(),
                    path: path.join("::"),
                });
            }
        }
    }
    graph
}

/// The file that defines what the crate-absolute path `abs` names: a module is its own
/// file; a name a module only brought in with `use` (a `pub use` alias, say) is followed
/// to where it is defined (at most `fuel` steps), so an alias never hides an import.
/// `None` when it is another crate's.
fn defined_in<'m>(
    modules: &'m BTreeMap<Vec<String>, (PathBuf, Scope)>,
    abs: &[String],
    fuel: u32,
) -> Option<&'m [String]> {
    let n = (0..=abs.len())
        .rev()
        .find(|n| modules.contains_key(&abs[..*n]))?;
    let (at, (_, scope)) = modules.get_key_value(&abs[..n])?;
    let Some(name) = abs.get(n) else {
        return Some(at);
    };
    if scope.items.contains(name) || fuel == 0 {
        return Some(at);
    }
    let follow = |target: &[String]| {
        let whole = absolute(target, at, scope, false)?;
        defined_in(
            modules,
            &[whole.as_slice(), &abs[n + 1..]].concat(),
            fuel - 1,
        )
    };
    if let Some(target) = scope.aliases.get(name) {
        return follow(target);
    }
    for glob in &scope.globs {
        let Some(whole) = absolute(glob, at, scope, false) else {
            continue;
        };
        let Some((_, other)) = modules.get(&whole) else {
            continue;
        };
        if other.items.contains(name)
            || other.aliases.contains_key(name)
            || modules.contains_key(&[whole.as_slice(), &abs[n..n + 1]].concat())
        {
            return follow(&[glob.as_slice(), &abs[n..n + 1]].concat());
        }
    }
    // Made by a macro, most likely: the module is what the path shows.
    Some(at)
}

/// The circles of a graph: each set of two or more files that reach each other through
/// imports (a strongly connected component), with the imports inside it.
fn circles(graph: &Graph) -> Vec<Vec<Import>> {
    let files: Vec<&PathBuf> = graph.files.iter().collect();
    let index: BTreeMap<&PathBuf, usize> = files.iter().enumerate().map(|(i, f)| (*f, i)).collect();
    let mut next: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); files.len()];
    for imp in &graph.imports {
        if let (Some(&a), Some(&b)) = (index.get(&imp.from), index.get(&imp.to)) {
            next[a].insert(b);
        }
    }
    let reach = |from: usize| {
        let mut seen = BTreeSet::from([from]);
        let mut stack = vec![from];
        while let Some(n) = stack.pop() {
            for &m in &next[n] {
                if seen.insert(m) {
                    stack.push(m);
                }
            }
        }
        seen
    };
    let reached: Vec<BTreeSet<usize>> = (0..files.len()).map(reach).collect();
    let mut placed = BTreeSet::new();
    let mut out = Vec::new();
    for a in 0..files.len() {
        if placed.contains(&a) {
            continue;
        }
        let members: BTreeSet<usize> = (0..files.len())
            .filter(|&b| reached[a].contains(&b) && reached[b].contains(&a))
            .collect();
        placed.extend(members.iter().copied());
        if members.len() > 1 {
            let inside = |f: &PathBuf| index.get(f).is_some_and(|i| members.contains(i));
            out.push(
                graph
                    .imports
                    .iter()
                    .filter(|imp| inside(&imp.from) && inside(&imp.to))
                    .cloned()
                    .collect(),
            );
        }
    }
    out
}

/// Every crate root under `crates/`: each `src/lib.rs` and `src/main.rs`.
fn crate_roots(crates: &Path) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    let Ok(entries) = std::fs::read_dir(crates) else {
        return roots;
    };
    for entry in entries.flatten() {
        for root in ["src/lib.rs", "src/main.rs"] {
            let file = entry.path().join(root);
            if file.is_file() {
                roots.push(file);
            }
        }
    }
    roots.sort();
    roots
}

/// A circle as the failure shows it: its files, then each import inside it.
fn describe(circle: &[Import], base: &Path) -> String {
    let short = |p: &Path| p.strip_prefix(base).unwrap_or(p).display().to_string();
    let files: BTreeSet<String> = circle
        .iter()
        .flat_map(|i| [short(&i.from), short(&i.to)])
        .collect();
    let mut s = format!(
        "circle of {} files: {}\n",
        files.len(),
        files.into_iter().collect::<Vec<_>>().join(", ")
    );
    for imp in circle {
        s += &format!(
            "  {} -> {}: {}\n",
            short(&imp.from),
            short(&imp.to),
            imp.path
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph_of(files: &[(&str, &str)]) -> Graph {
        let files: BTreeMap<PathBuf, String> = files
            .iter()
            .map(|(p, s)| (PathBuf::from(p), (*s).to_string()))
            .collect();
        crate_graph(Path::new("src/lib.rs"), &|p: &Path| files.get(p).cloned())
    }

    fn circle_files(files: &[(&str, &str)]) -> Vec<BTreeSet<String>> {
        circles(&graph_of(files))
            .iter()
            .map(|c| {
                c.iter()
                    .flat_map(|i| [i.from.display().to_string(), i.to.display().to_string()])
                    .collect()
            })
            .collect()
    }

    fn set(files: &[&str]) -> BTreeSet<String> {
        files.iter().map(|f| f.to_string()).collect()
    }

    #[test]
    fn workspace_has_no_import_circle() {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        let crates = manifest.parent().expect("test-kit lives in crates/");
        let base = crates.parent().expect("crates/ lives in the workspace");
        let roots = crate_roots(crates);
        assert!(
            roots.len() > 10,
            "the crates were not found under {}",
            crates.display()
        );
        let mut problems = String::new();
        for root in roots {
            let graph = crate_graph(&root, &|p: &Path| std::fs::read_to_string(p).ok());
            for file in &graph.unread {
                problems += &format!("module file not found: {file}\n");
            }
            for circle in circles(&graph) {
                problems += &describe(&circle, base);
            }
        }
        assert!(
            problems.is_empty(),
            "modules of one crate import each other in a loop; move the names that tie \
             them to a module both sides import, the parent, or the module that owns the \
             concept:\n{problems}"
        );
    }

    #[test]
    fn two_siblings_that_import_each_other_are_a_circle() {
        let found = circle_files(&[
            ("src/lib.rs", "mod a;\nmod b;"),
            ("src/a.rs", "use crate::b::B;\npub struct A;"),
            (
                "src/b.rs",
                "pub struct B;\nfn f() -> super::a::A { crate::a::A }",
            ),
        ]);
        assert_eq!(found, vec![set(&["src/a.rs", "src/b.rs"])]);
    }

    #[test]
    fn a_loop_through_a_third_module_and_a_parent_is_a_circle() {
        // cli -> check (a folder module) -> check/journal -> cli, written with
        // `super::`, a brace tree, an alias and a path in code.
        let found = circle_files(&[
            ("src/lib.rs", "pub mod cli;\npub mod check;\nmod other;"),
            (
                "src/cli.rs",
                "use crate::check as doctor;\nfn f() { doctor::run(); }\npub fn default_journal() {}",
            ),
            (
                "src/check.rs",
                "mod journal;\npub fn run() { journal::finding(); }",
            ),
            (
                "src/check/journal.rs",
                "use super::super::{cli::{self}, other};\npub fn finding() { cli::default_journal(); }",
            ),
            ("src/other.rs", "pub fn o() {}"),
        ]);
        assert_eq!(
            found,
            vec![set(&["src/check.rs", "src/check/journal.rs", "src/cli.rs"])]
        );
    }

    #[test]
    fn a_name_taken_from_an_ancestor_is_no_import() {
        // A module sees its ancestors' names as its own context: a child taking a type
        // from its parent, which re-exports the child, is the usual facade, no circle.
        let found = circle_files(&[
            ("src/lib.rs", "mod tools;\npub use tools::Click;"),
            (
                "src/tools/mod.rs",
                "mod click;\npub struct Def;\npub use click::Click;",
            ),
            (
                "src/tools/click.rs",
                "use super::Def;\nuse crate::tools::Def as D;\npub struct Click(Def, D);",
            ),
        ]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn a_pub_use_alias_does_not_hide_a_circle() {
        // `b` takes `A` through the crate root's re-export: that is an import of `a`.
        let found = circle_files(&[
            (
                "src/lib.rs",
                "mod a;\nmod b;\npub use a::A;\npub use self::b::B as Renamed;",
            ),
            ("src/a.rs", "use crate::Renamed;\npub struct A(Renamed);"),
            ("src/b.rs", "use crate::*;\npub struct B;\nfn f(_: A) {}"),
        ]);
        assert_eq!(found, vec![set(&["src/a.rs", "src/b.rs"])]);
    }

    #[test]
    fn a_test_module_is_a_module_of_its_own() {
        // `b`'s tests use `a`, which uses `b`: no module imports one that imports it
        // back, so no circle; `b`'s own code doing the same would be one.
        let files = [
            ("src/lib.rs", "mod a;\nmod b;"),
            ("src/a.rs", "pub fn a() { crate::b::b(); }"),
            (
                "src/b.rs",
                "pub fn b() {}\n#[cfg(test)]\n#[allow(unused)]\nmod tests {\n    use crate::a::a;\n}",
            ),
        ];
        assert!(circle_files(&files).is_empty());
        let files = [
            files[0],
            files[1],
            (
                "src/b.rs",
                "pub fn b() {}\nmod inner {\n    use crate::a::a;\n}",
            ),
        ];
        assert_eq!(circle_files(&files), vec![set(&["src/a.rs", "src/b.rs"])]);
    }

    #[test]
    fn imports_in_one_direction_are_no_circle() {
        let graph = graph_of(&[
            ("src/lib.rs", "mod a;\nmod b;\npub use a::A;"),
            (
                "src/a.rs",
                "use crate::b::B;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\npub struct A(B);",
            ),
            (
                "src/b.rs",
                // None of these is an import of `a`: a comment, strings, a character, a
                // lifetime, an external crate's path and a visibility.
                "// crate::a::A\n/* crate::a /* nested */ crate::a */\n\
                 const S: &str = \"crate::a::A\";\nconst R: &str = r#\"crate::a\"#;\n\
                 const C: char = '\"';\nfn f<'a>(x: &'a str) -> &'a str { ::a::g(); x }\n\
                 pub(in crate::a) struct B;",
            ),
        ]);
        assert!(circles(&graph).is_empty(), "{:?}", graph.imports);
        assert!(
            graph
                .imports
                .iter()
                .any(|i| i.from == Path::new("src/a.rs") && i.to == Path::new("src/b.rs"))
        );
        assert!(graph.unread.is_empty());
    }

    #[test]
    fn a_module_whose_file_is_missing_is_reported() {
        let graph = graph_of(&[("src/lib.rs", "mod gone;")]);
        assert_eq!(graph.unread.len(), 1, "{:?}", graph.unread);
    }

    #[test]
    fn a_failure_names_the_files_and_the_paths() {
        let graph = graph_of(&[
            ("src/lib.rs", "mod a;\nmod b;"),
            ("src/a.rs", "use crate::b::B;"),
            ("src/b.rs", "use crate::a::A;"),
        ]);
        let text = describe(&circles(&graph)[0], Path::new(""));
        assert_eq!(
            text,
            "circle of 2 files: src/a.rs, src/b.rs\n  src/a.rs -> src/b.rs: crate::b::B\n  src/b.rs -> src/a.rs: crate::a::A\n"
        );
    }
}
