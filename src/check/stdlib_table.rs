//! The standard library as the sandbox's CPython has it (`stdlib_names.txt`, written by
//! `scripts/stdlib_names.py`): its modules, the attributes of the listed ones, and the builtins.

use std::collections::HashSet;
use std::sync::OnceLock;

const TABLE: &str = include_str!("stdlib_names.txt");

pub(super) struct Stdlib {
    /// Listed modules in resolution order, with their attribute names.
    pub listed: Vec<(String, HashSet<String>)>,
    /// Every top-level standard-library module (importable by name).
    pub modules: HashSet<String>,
    pub builtins: HashSet<String>,
}

pub(super) fn table() -> &'static Stdlib {
    static TABLE_CELL: OnceLock<Stdlib> = OnceLock::new();
    TABLE_CELL.get_or_init(|| {
        let mut lib = Stdlib {
            listed: Vec::new(),
            modules: HashSet::new(),
            builtins: HashSet::new(),
        };
        for line in TABLE.lines() {
            let Some((head, rest)) = line.split_once(':') else {
                continue;
            };
            let names = rest.split_whitespace().map(str::to_string);
            match head.trim() {
                h if h.starts_with('#') => {}
                "@modules" => lib.modules.extend(names),
                "@builtins" => lib.builtins.extend(names),
                module => lib.listed.push((module.to_string(), names.collect())),
            }
        }
        // Module globals every program has, though they are not in `builtins`.
        lib.builtins
            .extend(["__file__", "__name__", "__builtins__"].map(str::to_string));
        lib
    })
}

/// Names every Python program can use without defining them.
pub fn builtins() -> &'static HashSet<String> {
    &table().builtins
}
