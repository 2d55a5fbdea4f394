//! The standard library as the sandbox's CPython has it (`stdlib_names.txt`, written by
//! `scripts/stdlib_names.py`): its modules and the attributes of the listed ones. (Its
//! `@builtins` line is the list in [`crate::python::builtins`].)

use std::collections::HashSet;
use std::sync::OnceLock;

const TABLE: &str = include_str!("stdlib_names.txt");

pub(super) struct Stdlib {
    /// Listed modules in resolution order, with their attribute names.
    pub listed: Vec<(String, HashSet<String>)>,
    /// Every top-level standard-library module (importable by name).
    pub modules: HashSet<String>,
}

pub(super) fn table() -> &'static Stdlib {
    static TABLE_CELL: OnceLock<Stdlib> = OnceLock::new();
    TABLE_CELL.get_or_init(|| {
        let mut lib = Stdlib {
            listed: Vec::new(),
            modules: HashSet::new(),
        };
        for line in TABLE.lines() {
            let Some((head, rest)) = line.split_once(':') else {
                continue;
            };
            let names = rest.split_whitespace().map(str::to_string);
            match head.trim() {
                h if h.starts_with('#') => {}
                "@modules" => lib.modules.extend(names),
                "@builtins" => {}
                module => lib.listed.push((module.to_string(), names.collect())),
            }
        }
        lib
    })
}
