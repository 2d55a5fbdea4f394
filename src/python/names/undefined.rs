//! The scoped view of the names walk ([`super::walk`]): what a snippet uses but never defines,
//! resolved as Python resolves it (function, enclosing functions, module, builtins). At module
//! level a name whose every binding comes after its first use is undefined too (the run reaches
//! the use first). `ldb exec` builds its prefixes from this.
//!
//! For each undefined name the attributes and methods the snippet reads from it are listed as
//! well (`self.mode`, `node.children`, `p.init()`), which is what a prefix has to provide.

use std::collections::{BTreeSet, HashSet};

use serde::Serialize;

use crate::python::source::{parse_module, SourceFile, SyntaxError};

use super::walk::{walk, Use, Walk};
use crate::python::builtins::builtin_set;

/// Names a snippet needs from outside, in the order of their first use.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Undefined {
    pub names: Vec<UndefinedName>,
    /// `name.attr` (read) and `name.method()` (called) for every undefined `name`, sorted.
    pub attributes: Vec<String>,
    /// The snippet has `from X import *`: any name might come from there, so names used at
    /// module level are not reported.
    pub star_import: bool,
    /// Undefined names the snippet tests with `is None` or `is not None`, sorted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub none_tested: Vec<String>,
    /// Names the snippet binds itself and tests with `is None` or `is not None`, sorted: where
    /// one is bound to a stand-in call's result, None takes the branch a stand-in never does.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub none_results: Vec<String>,
    /// Pairs of names the snippet tests for identity (`ctx is not self`) where it binds the
    /// first itself, sorted: where that one is bound to a stand-in call's result, the second's
    /// value takes the branch a new stand-in never does.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub identity_results: Vec<(String, String)>,
    /// Undefined names an `except` clause catches, sorted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub caught: Vec<String>,
    /// Pairs of undefined names the snippet tests for identity (`a is b`), sorted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub identity_tested: Vec<(String, String)>,
    /// String literals that look like file suffixes (`'.txt'`, `'*.py'` as `.py`), sorted: what
    /// a folder the snippet lists may be expected to hold.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suffixes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UndefinedName {
    pub name: String,
    /// Snippet line of the first use.
    pub line: u32,
}

impl Undefined {
    pub fn name_list(&self) -> Vec<String> {
        self.names.iter().map(|n| n.name.clone()).collect()
    }
}

/// The undefined names of `src`, or the syntax error that stops parsing it.
pub fn undefined_names(src: &SourceFile) -> Result<Undefined, SyntaxError> {
    let suite = parse_module(src)?;
    Ok(resolve(walk(&suite), src))
}

/// Whether use `u` finds no definition when it runs.
fn is_undefined(w: &Walk, u: &Use) -> bool {
    if builtin_set().contains(u.name.as_str()) {
        return false;
    }
    match w.lookup(&u.name, u.scope) {
        None => !w.star_import,
        // At module level, a use before every binding is reached first.
        Some(0) if u.scope == 0 => w
            .scopes
            .first()
            .and_then(|m| m.bound.get(&u.name))
            .is_some_and(|&first| first > u.order && !w.star_import),
        Some(_) => false,
    }
}

fn resolve(w: Walk, src: &SourceFile) -> Undefined {
    let mut names: Vec<UndefinedName> = Vec::new();
    let mut seen = HashSet::new();
    let undefined: Vec<bool> = w.uses.iter().map(|u| is_undefined(&w, u)).collect();
    for (u, &undef) in w.uses.iter().zip(&undefined) {
        if undef && seen.insert(u.name.clone()) {
            names.push(UndefinedName {
                name: u.name.clone(),
                line: src.line_of_offset(u.offset),
            });
        }
    }
    let attributes: BTreeSet<String> = w
        .attributes
        .iter()
        .filter(|a| undefined.get(a.base).copied().unwrap_or(false))
        .filter_map(|a| {
            let base = &w.uses.get(a.base)?.name;
            let call = if a.called { "()" } else { "" };
            Some(format!("{base}.{}{call}", a.attr))
        })
        .collect();
    let undefined_of = |uses: &[usize]| -> Vec<String> {
        let set: BTreeSet<String> = uses
            .iter()
            .filter(|&&i| undefined.get(i).copied().unwrap_or(false))
            .filter_map(|&i| Some(w.uses.get(i)?.name.clone()))
            .collect();
        set.into_iter().collect()
    };
    let identity_tested: BTreeSet<(String, String)> = w
        .identity_tested
        .iter()
        .filter(|(a, b)| {
            [a, b]
                .iter()
                .all(|&&i| undefined.get(i).copied().unwrap_or(false))
        })
        .filter_map(|&(a, b)| Some((w.uses.get(a)?.name.clone(), w.uses.get(b)?.name.clone())))
        .filter(|(a, b)| a != b)
        .collect();
    let none_results: BTreeSet<String> = w
        .none_tested
        .iter()
        .filter(|&&i| !undefined.get(i).copied().unwrap_or(false))
        .filter_map(|&i| Some(w.uses.get(i)?.name.clone()))
        .collect();
    let is_undefined = |i: usize| undefined.get(i).copied().unwrap_or(false);
    let identity_results: BTreeSet<(String, String)> = w
        .identity_tested
        .iter()
        .flat_map(|&(a, b)| [(a, b), (b, a)])
        .filter(|&(bound, _)| !is_undefined(bound))
        .filter_map(|(bound, other)| {
            Some((
                w.uses.get(bound)?.name.clone(),
                w.uses.get(other)?.name.clone(),
            ))
        })
        .filter(|(a, b)| a != b)
        .collect();
    Undefined {
        names,
        none_results: none_results.into_iter().collect(),
        identity_results: identity_results.into_iter().collect(),
        attributes: attributes.into_iter().collect(),
        star_import: w.star_import,
        none_tested: undefined_of(&w.none_tested),
        caught: undefined_of(&w.caught),
        identity_tested: identity_tested.into_iter().collect(),
        suffixes: w.suffixes.iter().cloned().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn undefined(code: &str) -> Vec<String> {
        undefined_names(&SourceFile::new(code))
            .expect("parses")
            .name_list()
    }

    #[test]
    fn undefined_names_tested_for_identity_are_paired() {
        let code = "\
x = object()
if exc is _sentinel or x is y or a.b is c:
    pass
if value is not MISSING and value is value:
    pass
";
        let u = undefined_names(&SourceFile::new(code)).expect("parses");
        let pairs = [("exc", "_sentinel"), ("value", "MISSING")]
            .map(|(a, b)| (a.to_string(), b.to_string()));
        assert_eq!(u.identity_tested, pairs);
        let bound = [("x".to_string(), "y".to_string())];
        assert_eq!(u.identity_results, bound, "x is bound in the snippet");
    }

    #[test]
    fn string_literals_that_look_like_file_suffixes_are_listed() {
        let code =
            "names = [f for f in os.listdir(d) if f.endswith('.txt') or f.endswith('*.py')]\n\
                    x = ('.', 'a.b', '.toolong', '.tar.gz', 'py', '.CSV', '.2f', f'{v:.3e}')\n";
        let u = undefined_names(&SourceFile::new(code)).expect("parses");
        assert_eq!(u.suffixes, [".CSV", ".py", ".txt"]);
    }

    #[test]
    fn undefined_names_tested_against_none_are_listed() {
        let code = "\
x = None
if x is None or key is not None:
    pass
if hi is None and a.b is None and None is y:
    pass
";
        let u = undefined_names(&SourceFile::new(code)).expect("parses");
        assert_eq!(u.none_tested, ["hi", "key"]);
        assert_eq!(
            u.none_results,
            ["x"],
            "bound in the snippet, tested against None"
        );
        assert_eq!(u.name_list(), ["key", "hi", "a", "y"]);
    }

    #[test]
    fn undefined_names_an_except_clause_catches_are_listed() {
        let code = "\
class Mine(Exception):
    pass
try:
    run()
except (NotFound, Mine, KeyError):
    pass
except errors.Timeout:
    pass
except Gone as e:
    print(e)
";
        let u = undefined_names(&SourceFile::new(code)).expect("parses");
        assert_eq!(u.caught, ["Gone", "NotFound"]);
    }

    #[test]
    fn free_names_in_order_of_first_use() {
        assert_eq!(undefined("a = b + foo()\nprint(a, c)\n"), ["b", "foo", "c"]);
    }

    #[test]
    fn bindings_of_every_kind_define_names() {
        let code = "\
import os.path
import numpy as np
from json import loads as parse, dumps
def f(x, *args, y=1, **kw):
    return x + y + len(args) + len(kw) + g
class C:
    attr = 1
    def m(self):
        return attr
for i, (j, *rest) in enumerate([]):
    pass
with open('f') as fh:
    pass
try:
    pass
except ValueError as err:
    print(err)
if (n := 3) > 2:
    print(n)
squares = [k * k for k in range(3) if k]
match squares:
    case [first, *others]:
        print(first, others)
    case {'a': va, **extra}:
        print(va, extra)
lam = lambda q: q + z
print(os, np, parse, dumps, f, C, i, j, rest, fh, squares, lam)
";
        // `g` and `z` are free; `attr` is not visible from a method.
        assert_eq!(undefined(code), ["g", "attr", "z"]);
    }

    #[test]
    fn augmented_assignment_and_use_before_binding_are_undefined() {
        assert_eq!(undefined("total += 1\n"), ["total"]);
        assert_eq!(undefined("print(x)\nx = 1\n"), ["x"]);
        // A function body's parameters: read by the statement that first binds them.
        assert_eq!(
            undefined("a = os.fspath(a)\nb = [a]\nfor c in c:\n    pass\n"),
            ["os", "a", "c"]
        );
        // Inside a function the order of definitions does not matter.
        assert!(undefined("def f():\n    return x\nx = 1\nf()\n").is_empty());
    }

    #[test]
    fn global_and_nonlocal_send_bindings_up() {
        let code = "def f():\n    global counter\n    counter = 1\nf()\nprint(counter)\n";
        assert!(undefined(code).is_empty());
        let code = "def f():\n    v = 0\n    def g():\n        nonlocal v\n        v = 2\n    g()\n    return v\n";
        assert!(undefined(code).is_empty());
    }

    #[test]
    fn attributes_and_methods_of_undefined_names_are_listed() {
        let found = undefined_names(&SourceFile::new(
            "if self.user_type:\n    r = get_func(self.name)\n    y = d.year - p.init()\nok = {}.get('a')\n",
        ))
        .expect("parses");
        assert_eq!(found.name_list(), ["self", "get_func", "d", "p"]);
        assert_eq!(
            found.attributes,
            ["d.year", "p.init()", "self.name", "self.user_type"]
        );
    }

    #[test]
    fn builtins_are_defined_and_star_imports_silence_module_names() {
        assert!(undefined("print(len(range(3)), __name__)\n").is_empty());
        let found = undefined_names(&SourceFile::new("from tkinter import *\nroot = Tk()\n"))
            .expect("parses");
        assert!(found.names.is_empty());
        assert!(found.star_import);
    }

    #[test]
    fn a_comprehension_walrus_binds_outside() {
        assert!(undefined("ys = [last := x for x in range(3)]\nprint(last)\n").is_empty());
        // The first iterable is evaluated outside the comprehension.
        assert_eq!(undefined("ys = [x for x in xs]\n"), ["xs"]);
    }
}
