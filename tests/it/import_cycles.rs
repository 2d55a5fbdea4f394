//! No two modules of `src/` depend on each other, directly or around a loop, and no top-level
//! module names one in a higher layer: every `use` and path between sibling modules runs one
//! way, down the pipeline, so a reader (and the compiler's incremental builds) can take the crate
//! bottom up. Test modules and comments are not counted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;
/// Module → the modules it names.
type Graph = BTreeMap<Module, BTreeSet<Module>>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn module_of(root: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(root).expect("under src");
    let mut parts: Module = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// Identifiers following `prefix` in `code` (`super::` → `source` in `super::source::X`).
fn names_after<'a>(code: &'a str, prefix: &str) -> Vec<(&'a str, Option<&'a str>)> {
    let ident = |s: &'a str| -> &'a str {
        let end = s
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        &s[..end]
    };
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        let boundary = i == 0 || {
            let b = rest.as_bytes()[i - 1];
            !(b.is_ascii_alphanumeric() || b == b'_')
        };
        rest = &rest[i + prefix.len()..];
        if !boundary {
            continue;
        }
        let first = ident(rest);
        let second = rest[first.len()..].strip_prefix("::").map(ident);
        if !first.is_empty() {
            out.push((first, second.filter(|s| !s.is_empty())));
        }
    }
    out
}

/// Each module's dependencies lifted to the pair of sibling modules they run between (`a::x`
/// naming `b::y` is the arrow `a -> b`), with a file that shows each arrow.
fn sibling_graph() -> (Graph, BTreeMap<(Module, Module), Module>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let modules: BTreeMap<Module, PathBuf> = files
        .iter()
        .map(|f| (module_of(&root, f), f.clone()))
        .collect();
    // Module → modules it names.
    let mut deps: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, file) in &modules {
        let text = std::fs::read_to_string(file).expect("read");
        let text = match text.find("#[cfg(test)]\nmod tests") {
            Some(i) => &text[..i],
            None => &text[..],
        };
        let code: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let parent: Module = module[..module.len().saturating_sub(1)].to_vec();
        let mut named = BTreeSet::new();
        for (first, _) in names_after(&code, "super::") {
            let mut m = parent.clone();
            m.push(first.to_string());
            named.insert(m);
        }
        for (first, second) in names_after(&code, "crate::") {
            let two: Module = vec![first.to_string(), second.unwrap_or_default().to_string()];
            named.insert(if modules.contains_key(&two) {
                two
            } else {
                vec![first.to_string()]
            });
        }
        named.retain(|m| m != module && modules.contains_key(m));
        deps.insert(module.clone(), named);
    }
    // Lift each dependency to the pair of siblings it runs between.
    let mut graph: Graph = BTreeMap::new();
    let mut why: BTreeMap<(Module, Module), Module> = BTreeMap::new();
    for (a, targets) in &deps {
        for b in targets {
            let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
            if common < a.len() && common < b.len() {
                let (x, y) = (a[..=common].to_vec(), b[..=common].to_vec());
                graph.entry(x.clone()).or_default().insert(y.clone());
                why.entry((x, y)).or_insert_with(|| a.clone());
            }
        }
    }
    (graph, why)
}

#[test]
fn sibling_modules_never_depend_on_each_other_in_a_loop() {
    let (graph, _) = sibling_graph();
    // A loop exists when some module reaches itself.
    let mut loops = Vec::new();
    for start in graph.keys() {
        let mut stack: Vec<(Module, Vec<Module>)> = vec![(start.clone(), vec![start.clone()])];
        let mut seen = BTreeSet::new();
        while let Some((node, path)) = stack.pop() {
            for next in graph.get(&node).into_iter().flatten() {
                if next == start {
                    let mut cycle = path.clone();
                    cycle.push(next.clone());
                    loops.push(
                        cycle
                            .iter()
                            .map(|m| m.join("::"))
                            .collect::<Vec<_>>()
                            .join(" -> "),
                    );
                } else if seen.insert(next.clone()) {
                    let mut p = path.clone();
                    p.push(next.clone());
                    stack.push((next.clone(), p));
                }
            }
        }
    }
    assert!(
        loops.is_empty(),
        "import cycles between modules of src/:\n{}",
        loops.join("\n")
    );
    // The scan itself works: it sees the pipeline's known one-way dependencies.
    let run = vec!["run".to_string()];
    assert!(graph
        .get(&run)
        .is_some_and(|d| d.contains(&vec!["task".to_string()])));
}

/// The crate's top-level modules in layers, lowest first (`docs/architecture/layers.txt`, which
/// `scripts/import_graph.py` draws from too).
fn layers() -> Vec<Vec<String>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture/layers.txt");
    std::fs::read_to_string(&path)
        .expect("read the layers")
        .lines()
        .map(|l| {
            l.split('#')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .filter(|names| !names.is_empty())
        .collect()
}

#[test]
fn no_module_names_one_in_a_higher_layer() {
    let (graph, why) = sibling_graph();
    let layers = layers();
    let layer_of = |m: &str| layers.iter().position(|l| l.iter().any(|x| x == m));
    let mut climbing = Vec::new();
    let mut unplaced = BTreeSet::new();
    for (from, targets) in graph.iter().filter(|(m, _)| m.len() == 1) {
        for to in targets {
            match (layer_of(&from[0]), layer_of(&to[0])) {
                (Some(a), Some(b)) if b > a => climbing.push(format!(
                    "{} -> {} (in {})",
                    from[0],
                    to[0],
                    why[&(from.clone(), to.clone())].join("::")
                )),
                (Some(_), Some(_)) => {}
                (a, b) => {
                    if a.is_none() {
                        unplaced.insert(from[0].clone());
                    }
                    if b.is_none() {
                        unplaced.insert(to[0].clone());
                    }
                }
            }
        }
    }
    assert!(
        unplaced.is_empty(),
        "top-level modules missing from docs/architecture/layers.txt (place them there and in src/lib.rs): {unplaced:?}"
    );
    assert!(
        climbing.is_empty(),
        "modules naming a module in a higher layer:\n{}",
        climbing.join("\n")
    );
    // The scan sees arrows across layers at all: the fix loop runs programs.
    assert!(graph
        .get(&vec!["repair".to_string()])
        .is_some_and(|d| d.contains(&vec!["run".to_string()])));
}
