//! Imports a snippet left out, found by name: each free name ([`crate::python::names::free`]) is matched
//! against the standard library as the sandbox's CPython has it (`stdlib_names.txt`, written by
//! `scripts/stdlib_names.py`), and the matches become a prelude run before the snippet.
//!
//! Rules, in order: a module's own name used as `name.attr` with attributes the module has
//! (`math.gcd` → `import math`); an abbreviation of a listed module whose attributes fit
//! (`mat.gcd` → `import math as mat`, `hq.heappush` → `import heapq as hq`); a bare name exported by a listed module, first in the
//! list wins (`gcd` → `from math import gcd`). One-letter names are never guessed, and
//! third-party modules (numpy, ...) are not the standard library: those names stay unresolved,
//! but a conventional alias (`np`, `pd`, `plt`) is also tried as a guarded import, which binds
//! it only where the module is importable ([`third_party_import`]).

use std::collections::{BTreeSet, HashMap, HashSet};

use super::stdlib_table::{table, Stdlib};
use crate::python::names::free::FreeName;

/// One import added for a free name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AddedImport {
    pub name: String,
    /// The statement, e.g. `from math import gcd`.
    pub statement: String,
}

/// What the free names resolved to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolution {
    pub imports: Vec<AddedImport>,
    /// Free names no rule matched, in order of first use.
    pub unresolved: Vec<String>,
}

/// Resolve `free` names to standard-library imports.
pub fn resolve(free: &[FreeName]) -> Resolution {
    let lib = table();
    let listed: HashMap<&str, &HashSet<String>> =
        lib.listed.iter().map(|(m, n)| (m.as_str(), n)).collect();
    let mut out = Resolution::default();
    for f in free {
        match resolve_one(f, lib, &listed) {
            Some(statement) => out.imports.push(AddedImport {
                name: f.name.clone(),
                statement,
            }),
            None => out.unresolved.push(f.name.clone()),
        }
    }
    out
}

fn resolve_one(
    f: &FreeName,
    lib: &Stdlib,
    listed: &HashMap<&str, &HashSet<String>>,
) -> Option<String> {
    let name = f.name.as_str();
    if name.chars().count() < 2 {
        return None;
    }
    let has_all = |exports: &HashSet<String>, attrs: &BTreeSet<String>| {
        attrs.iter().all(|a| exports.contains(a))
    };
    let only_attributes = !f.bare && !f.attrs.is_empty();
    if only_attributes {
        match listed.get(name) {
            Some(exports) if has_all(exports, &f.attrs) => return Some(format!("import {name}")),
            Some(_) => {}
            None if lib.modules.contains(name) => return Some(format!("import {name}")),
            None => {}
        }
        // An abbreviation: `mat` for math, `col` for collections; else one that keeps the
        // module's first letter and drops others (`hq` for heapq, `dt` for datetime). Every
        // attribute read must be the module's, so a short name picks no module by its letters
        // alone.
        let abbreviates = |m: &str, strict: bool| {
            if strict {
                m.starts_with(name)
            } else {
                m.chars().next() == name.chars().next() && is_subsequence(name, m)
            }
        };
        for strict in [true, false] {
            if let Some((module, _)) = lib
                .listed
                .iter()
                .find(|(m, exports)| abbreviates(m, strict) && has_all(exports, &f.attrs))
            {
                return Some(format!("import {module} as {name}"));
            }
        }
    }
    // A name a module exports (`gcd`, `deque`; also `datetime.now()` → the class).
    lib.listed
        .iter()
        .find(|(_, exports)| exports.contains(name))
        .map(|(module, _)| format!("from {module} import {name}"))
}

/// Whether the characters of `short` appear in `long` in order.
fn is_subsequence(short: &str, long: &str) -> bool {
    let mut rest = long.chars();
    short.chars().all(|c| rest.any(|l| l == c))
}

/// Whether `name` is a top-level module of the standard library.
pub fn is_module(name: &str) -> bool {
    table().modules.contains(name)
}

/// The module a conventional alias stands for, when that module is not in the standard library
/// (`np` → numpy): a prediction is told what the name most likely is.
pub fn third_party_alias(name: &str) -> Option<&'static str> {
    Some(match name {
        "np" | "numpy" => "numpy",
        "pd" | "pandas" => "pandas",
        "plt" => "matplotlib.pyplot",
        "sp" | "scipy" => "scipy",
        "sympy" => "sympy",
        "nx" | "networkx" => "networkx",
        _ => return None,
    })
}

/// The import a conventional third-party alias stands for (`np` → `import numpy as np`).
pub fn third_party_import(name: &str) -> Option<AddedImport> {
    let module = third_party_alias(name)?;
    let statement = if module == name {
        format!("import {module}")
    } else {
        format!("import {module} as {name}")
    };
    Some(AddedImport {
        name: name.to_string(),
        statement,
    })
}

/// The prelude that makes `imports` available, each guarded so that a module missing from the
/// interpreter leaves its name unbound instead of failing the run.
pub fn prelude(imports: &[AddedImport]) -> String {
    let mut out = String::new();
    for i in imports {
        out.push_str("try:\n    ");
        out.push_str(&i.statement);
        out.push_str("\nexcept ImportError:\n    pass\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free(name: &str, attrs: &[&str], bare: bool) -> FreeName {
        FreeName {
            name: name.into(),
            line: 1,
            attrs: attrs.iter().map(|a| a.to_string()).collect(),
            bare,
        }
    }

    fn statements(r: &Resolution) -> Vec<&str> {
        r.imports.iter().map(|i| i.statement.as_str()).collect()
    }

    #[test]
    fn common_snippet_names_resolve() {
        let r = resolve(&[
            free("math", &["gcd", "sqrt"], false),
            free("gcd", &[], true),
            free("deque", &[], true),
            free("mat", &["gcd"], false),
            free("sys", &["stdin", "setrecursionlimit"], false),
            free("datetime", &["now"], false),
            free("Counter", &[], true),
            free("heapq", &["heappush"], false),
            free("hq", &["heappush", "heappop"], false),
            free("dt", &["timedelta"], false),
        ]);
        assert_eq!(
            statements(&r),
            [
                "import math",
                "from math import gcd",
                "from collections import deque",
                "import math as mat",
                "import sys",
                "from datetime import datetime",
                "from collections import Counter",
                "import heapq",
                "import heapq as hq",
                "import datetime as dt",
            ]
        );
        assert!(r.unresolved.is_empty());
    }

    #[test]
    fn third_party_and_guesswork_stay_unresolved() {
        let r = resolve(&[
            free("np", &["array", "sum"], false),
            free("e", &[], true),
            free("sympy", &["isprime"], false),
            free("my_helper", &[], true),
            // A parameter named like a module, used as a value, is not the module.
            free("string", &["upper"], false),
            // Letters of a module's name, but not its attributes.
            free("hq", &["sqrt"], false),
        ]);
        assert!(r.imports.is_empty(), "{:?}", r.imports);
        assert_eq!(
            r.unresolved,
            ["np", "e", "sympy", "my_helper", "string", "hq"]
        );
    }

    #[test]
    fn the_prelude_guards_each_import() {
        let text = prelude(&[AddedImport {
            name: "gcd".into(),
            statement: "from math import gcd".into(),
        }]);
        assert_eq!(
            text,
            "try:\n    from math import gcd\nexcept ImportError:\n    pass\n"
        );
        let builtins = crate::python::builtins::builtin_set();
        assert!(builtins.contains("print") && builtins.contains("__file__"));
    }
}
