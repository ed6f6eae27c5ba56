//! The floor plan, checked: which crate may depend on which, and which module
//! of longfat-sim may import which (docs/architecture.md).
//!
//! - Crates: each crate of the workspace has a floor ([`CRATE_FLOORS`]) and
//!   depends (normal, dev or build) only on crates of lower floors: the
//!   controllers know no simulator, the simulator no kernel and no Python.
//! - longfat-sim's top-level modules: each has a floor ([`SIM_FLOORS`]) and
//!   imports (`crate::x`, outside `#[cfg(test)]` modules) only from lower
//!   floors, so no two modules import each other, directly or round about.
//! - Inside a module that is a directory (`tcp/`, ...): its submodules
//!   import each other without a cycle.
//!
//! A new module needs a floor here; an import that goes up or sideways is a
//! design change to make here, on purpose, not by accident.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The workspace's crates, bottom up.
const CRATE_FLOORS: &[(&str, u32)] = &[
    // the congestion controllers: std only
    ("longfat-cc", 0),
    // the simulator and the kernel path, each on the controllers
    ("longfat-sim", 1),
    ("longfat-kernel", 1),
    // the fuzzer and the Python bindings, on top
    ("longfat-fuzz", 2),
    ("longfat-py", 2),
];

/// longfat-sim's top-level modules, bottom up; a module imports only from
/// lower floors.
const SIM_FLOORS: &[(&str, u32)] = &[
    // units, randomness, time and memory hints, traffic distributions
    ("units", 0),
    ("rng", 0),
    ("event", 0),
    ("prefetch", 0),
    ("traffic", 0),
    // the packet and its pool; the AQMs' decisions (no packet, no engine)
    ("packet", 1),
    ("aqm", 1),
    // what endpoints send through, and the links
    ("outbox", 2),
    ("link", 2),
    // packet captures: records of packets, written as pcapng
    ("capture", 2),
    // the paths, and the transports' endpoints
    ("topology", 3),
    ("tcp", 3),
    ("udp", 3),
    // PLT, built of two TCP senders
    ("plt", 4),
    // one face for every endpoint
    ("flow", 5),
    // what a run will cost, and what it measured
    ("budget", 6),
    ("metrics", 6),
    // the engine
    ("sim", 7),
    // a scenario file to a ready simulation
    ("scenario", 8),
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn crates_depend_only_downward() {
    let root = workspace();
    let manifest: toml::Table = fs::read_to_string(root.join("Cargo.toml"))
        .expect("Cargo.toml")
        .parse()
        .expect("Cargo.toml parses");
    let members = manifest["workspace"]["members"]
        .as_array()
        .expect("workspace.members");
    let floor = |name: &str| {
        CRATE_FLOORS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| *f)
    };
    let mut wrong = Vec::new();
    for member in members {
        let dir = root.join(member.as_str().expect("a path"));
        let toml: toml::Table = fs::read_to_string(dir.join("Cargo.toml"))
            .expect("a member's Cargo.toml")
            .parse()
            .expect("it parses");
        let name = toml["package"]["name"].as_str().expect("package.name");
        let Some(mine) = floor(name) else {
            wrong.push(format!("{name} has no floor in CRATE_FLOORS"));
            continue;
        };
        wrong.extend(crate_violations(name, mine, &toml, floor));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The dependencies of one crate's manifest on workspace crates that are not
/// on a lower floor.
fn crate_violations(
    name: &str,
    mine: u32,
    toml: &toml::Table,
    floor: impl Fn(&str) -> Option<u32>,
) -> Vec<String> {
    let mut wrong = Vec::new();
    for section in ["dependencies", "dev-dependencies", "build-dependencies"] {
        let Some(deps) = toml.get(section).and_then(|d| d.as_table()) else {
            continue;
        };
        for dep in deps.keys() {
            if let Some(theirs) = floor(dep) {
                if theirs >= mine {
                    wrong.push(format!(
                        "{name} (floor {mine}) depends on {dep} (floor {theirs}) in [{section}]"
                    ));
                }
            }
        }
    }
    wrong
}

/// A source file of longfat-sim: its module path and its code outside tests.
struct Source {
    module: Vec<String>,
    path: PathBuf,
    code: String,
}

fn sim_sources() -> Vec<Source> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).expect("read src").flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
        .into_iter()
        .filter_map(|path| {
            let rel = path.strip_prefix(&src).expect("under src");
            let mut module: Vec<String> = rel
                .iter()
                .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
                .collect();
            if module.last().is_some_and(|m| m == "mod" || m == "lib") {
                module.pop();
            }
            if module.is_empty() {
                return None; // lib.rs declares and re-exports; it is the building
            }
            let code = without_tests(&without_comments(&fs::read_to_string(&path).ok()?));
            Some(Source { module, path, code })
        })
        .collect()
}

fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        rest = rest[i + 2..]
            .find("*/")
            .map_or("", |j| &rest[i + 2 + j + 2..]);
    }
    out.push_str(rest);
    out.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `code` without its `#[cfg(test)]` modules and imports.
fn without_tests(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(i) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..i]);
        let after = rest[i + "#[cfg(test)]".len()..].trim_start();
        rest = if after.starts_with("mod ") || after.starts_with("pub mod ") {
            // the test module, to its closing brace
            after
                .find('{')
                .map_or("", |open| &after[matching_brace(after, open) + 1..])
        } else if after.starts_with("use ") {
            // a test-only import
            after.find(';').map_or("", |end| &after[end + 1..])
        } else {
            after
        };
    }
    out.push_str(rest);
    out
}

/// The index of the `}` that closes the `{` at `open`.
fn matching_brace(s: &str, open: usize) -> usize {
    let mut depth = 0;
    for (i, c) in s[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return open + i;
                }
            }
            _ => {}
        }
    }
    s.len() - 1
}

/// The full paths a use tree stands for: `a::{b, c::{d, e}}` -> `a::b`,
/// `a::c::d`, `a::c::e` (as segments).
fn expand(tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let segs: Vec<String> = tree
            .split("::")
            .map(|s| s.split_whitespace().next().unwrap_or("").to_string())
            .filter(|s| !s.is_empty())
            .collect();
        return vec![segs];
    };
    let prefix: Vec<String> = tree[..open]
        .split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    let close = matching_brace(tree, open);
    let inner = &tree[open + 1..close];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(expand)
        .map(|tail| prefix.iter().cloned().chain(tail).collect())
        .collect()
}

/// The paths, from the crate root, that `code` of the module `module`
/// names: `crate::...` anywhere, and `use super::...`, `use self::...` and
/// `use <child>::...` statements.
fn references(module: &[String], code: &str, children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let preceded = rest[..i]
            .chars()
            .last()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$');
        let tail = &rest[i + "crate::".len()..];
        let end = if tail.starts_with('{') {
            matching_brace(tail, 0) + 1
        } else {
            tail.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(tail.len())
        };
        if !preceded {
            out.extend(expand(&tail[..end]));
        }
        rest = &tail[end..];
    }
    let mut rest = code;
    while let Some(i) = rest.find("use ") {
        let preceded = rest[..i]
            .chars()
            .last()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        let tail = &rest[i + "use ".len()..];
        let end = tail.find(';').unwrap_or(tail.len());
        rest = &tail[end..];
        if preceded {
            continue;
        }
        for path in expand(&tail[..end]) {
            // (where the path starts, how many of its segments that replaces)
            let (base, skip) = match path.first().map(String::as_str) {
                Some("super") => (&module[..module.len().saturating_sub(1)], 1),
                Some("self") => (module, 1),
                Some(first) if children.contains(first) => (module, 0),
                _ => continue,
            };
            out.push(
                base.iter()
                    .cloned()
                    .chain(path.into_iter().skip(skip))
                    .collect(),
            );
        }
    }
    out
}

/// Between siblings: (parent, from child, to child) -> the files that make it.
type SiblingEdges = BTreeMap<(Vec<String>, String, String), BTreeSet<String>>;

fn sibling_edges(sources: &[Source]) -> SiblingEdges {
    let modules: BTreeSet<Vec<String>> = sources.iter().map(|s| s.module.clone()).collect();
    let mut edges = SiblingEdges::new();
    for s in sources {
        let children: BTreeSet<String> = modules
            .iter()
            .filter(|m| m.len() == s.module.len() + 1 && m.starts_with(&s.module))
            .map(|m| m[s.module.len()].clone())
            .collect();
        for path in references(&s.module, &s.code, &children) {
            // the longest prefix that is a module of the crate
            let Some(target) = (1..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|p| modules.contains(p))
            else {
                continue;
            };
            let common = s
                .module
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            if common < s.module.len() && common < target.len() {
                edges
                    .entry((
                        s.module[..common].to_vec(),
                        s.module[common].clone(),
                        target[common].clone(),
                    ))
                    .or_default()
                    .insert(s.path.file_name().unwrap().to_string_lossy().into_owned());
            }
        }
    }
    edges
}

/// Top-level imports that do not go to a lower floor, and top-level
/// modules with no floor.
fn floor_violations(edges: &SiblingEdges, top_level: &BTreeSet<String>) -> Vec<String> {
    let floor = |m: &str| SIM_FLOORS.iter().find(|(n, _)| *n == m).map(|(_, f)| *f);
    let mut wrong: Vec<String> = top_level
        .iter()
        .filter(|m| floor(m).is_none())
        .map(|m| format!("longfat-sim's module {m} has no floor in SIM_FLOORS"))
        .collect();
    for ((parent, from, to), files) in edges {
        if !parent.is_empty() {
            continue;
        }
        if let (Some(a), Some(b)) = (floor(from), floor(to)) {
            if a <= b {
                wrong.push(format!(
                    "{from} (floor {a}) imports {to} (floor {b}): in {files:?}"
                ));
            }
        }
    }
    wrong
}

/// A cycle among the submodules of one directory module, if any.
fn sibling_cycles(edges: &SiblingEdges) -> Vec<String> {
    let mut graphs: BTreeMap<&Vec<String>, BTreeMap<&str, Vec<&str>>> = BTreeMap::new();
    for (parent, from, to) in edges.keys() {
        if !parent.is_empty() {
            graphs
                .entry(parent)
                .or_default()
                .entry(from)
                .or_default()
                .push(to);
        }
    }
    let mut cycles = Vec::new();
    for (parent, graph) in graphs {
        // depth-first, with the path on the stack
        fn visit<'a>(
            n: &'a str,
            g: &BTreeMap<&'a str, Vec<&'a str>>,
            stack: &mut Vec<&'a str>,
            done: &mut BTreeSet<&'a str>,
        ) -> Option<Vec<&'a str>> {
            if let Some(i) = stack.iter().position(|s| *s == n) {
                let mut c = stack[i..].to_vec();
                c.push(n);
                return Some(c);
            }
            if !done.insert(n) {
                return None;
            }
            stack.push(n);
            for next in g.get(n).into_iter().flatten() {
                if let Some(c) = visit(next, g, stack, done) {
                    return Some(c);
                }
            }
            stack.pop();
            None
        }
        let mut done = BTreeSet::new();
        for start in graph.keys() {
            if let Some(c) = visit(start, &graph, &mut Vec::new(), &mut done) {
                cycles.push(format!("{}: {}", parent.join("::"), c.join(" -> ")));
                break;
            }
        }
    }
    cycles
}

#[test]
fn sim_modules_import_only_downward() {
    let sources = sim_sources();
    let top_level: BTreeSet<String> = sources.iter().map(|s| s.module[0].clone()).collect();
    let edges = sibling_edges(&sources);
    let mut wrong = floor_violations(&edges, &top_level);
    wrong.extend(sibling_cycles(&edges));
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_import_reader_sees_groups_super_self_and_children_and_skips_tests() {
    let code = without_tests(&without_comments(
        "use crate::{a, b::{c, d::E}};\n\
         use super::f::G; // crate::commented\n\
         pub use child::H;\n\
         use self::k::L;\n\
         fn x() { let _ = crate::m::n(); my_crate::o::p(); }\n\
         #[cfg(test)]\nmod tests { use crate::q; fn t() { if true { crate::r(); } } }\n\
         #[cfg(test)]\nuse crate::u::V;\n\
         fn y() { crate::s::t(); }",
    ));
    let module = ["tcp".to_string(), "sender".to_string()];
    let children = BTreeSet::from(["child".to_string()]);
    let got: BTreeSet<String> = references(&module, &code, &children)
        .into_iter()
        .map(|p| p.join("::"))
        .collect();
    let want: BTreeSet<String> = [
        "a",
        "b::c",
        "b::d::E",
        "m::n",
        "s::t",
        "tcp::f::G",
        "tcp::sender::child::H",
        "tcp::sender::k::L",
    ]
    .into_iter()
    .map(str::to_string)
    .collect();
    assert_eq!(got, want);
}

#[test]
fn an_import_up_a_floor_and_a_cycle_between_submodules_are_reported() {
    let src = |module: &str, code: &str| Source {
        module: module.split("::").map(str::to_string).collect(),
        path: PathBuf::from(format!("{module}.rs")),
        code: code.to_string(),
    };
    let sources = [
        src("units", "use crate::sim::Simulation;"),
        src("sim", "use crate::units::Bandwidth;"),
        src("tcp::a", "use crate::tcp::b::B;"),
        src("tcp::b", "use super::a::A;"),
    ];
    let top: BTreeSet<String> = ["units", "sim", "tcp", "nowhere"]
        .map(str::to_string)
        .into();
    let edges = sibling_edges(&sources);
    let floors = floor_violations(&edges, &top);
    assert_eq!(
        floors,
        [
            "longfat-sim's module nowhere has no floor in SIM_FLOORS",
            "units (floor 0) imports sim (floor 7): in {\"units.rs\"}",
        ]
    );
    assert_eq!(sibling_cycles(&edges), ["tcp: a -> b -> a"]);
    let cc = "[dependencies]\nlongfat-sim = 1\nserde = 1\n"
        .parse()
        .unwrap();
    assert_eq!(
        crate_violations("longfat-cc", 0, &cc, |n| (n == "longfat-sim").then_some(1)),
        ["longfat-cc (floor 0) depends on longfat-sim (floor 1) in [dependencies]"]
    );
}
