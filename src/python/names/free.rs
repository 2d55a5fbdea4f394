//! The program-wide view of the names walk ([`super::walk`]): the names a program or snippet
//! uses but binds nowhere, how it uses them (bare, or only as `X.attr`), which statements read
//! standard input, and where a `return` stands outside any function (a flattened function body).
//! `ldb check` reads a snippet's missing imports from this.
//!
//! Binding is counted program-wide, not per scope: a snippet's missing context is what is wanted
//! here (imports it left out), and a name bound anywhere is the program's own business.

use std::collections::{BTreeSet, HashMap, HashSet};

use rustpython_parser::ast::Stmt;

use super::walk::walk;

use crate::python::builtins::builtin_set;
use crate::python::source::SourceFile;

/// A name loaded somewhere and bound nowhere (and not a builtin).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreeName {
    pub name: String,
    /// First line that uses it.
    pub line: u32,
    /// Attributes read from it (`math.gcd` → `gcd`).
    pub attrs: BTreeSet<String>,
    /// Used other than as `name.attr` (called, passed, indexed, ...).
    pub bare: bool,
}

/// A `return` outside every function: (byte offsets) the statement's start, the end of the
/// `return` keyword, and the statement's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModuleReturn {
    pub start: usize,
    pub keyword_end: usize,
    pub end: usize,
    pub line: u32,
}

/// What [`analyse`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameFacts {
    /// In order of first use.
    pub free: Vec<FreeName>,
    /// First lines of the statements that read standard input (`input()`, `sys.stdin`,
    /// `open(0)`).
    pub input_lines: BTreeSet<u32>,
    pub module_returns: Vec<ModuleReturn>,
    /// Some `from M import *` binds names no reading of the text can see.
    pub star_import: bool,
}

impl NameFacts {
    pub fn reads_input(&self) -> bool {
        !self.input_lines.is_empty()
    }
}

/// Analyse a parsed module.
pub fn analyse(src: &SourceFile, suite: &[Stmt]) -> NameFacts {
    let w = walk(suite);
    let builtins = builtin_set();
    let attribute_bases: HashSet<usize> = w.attributes.iter().map(|a| a.base).collect();
    // Program-wide: bound in any scope.
    let bound: HashSet<&str> = w
        .scopes
        .iter()
        .flat_map(|s| s.bound.keys().map(String::as_str))
        .collect();
    let mut free: Vec<FreeName> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, u) in w.uses.iter().enumerate() {
        let name = u.name.as_str();
        if builtins.contains(name) || bound.contains(name) {
            continue;
        }
        let at = *index.entry(name).or_insert_with(|| {
            free.push(FreeName {
                name: name.to_string(),
                line: src.line_of_offset(u.offset),
                attrs: BTreeSet::new(),
                bare: false,
            });
            free.len() - 1
        });
        if let Some(f) = free.get_mut(at) {
            f.bare |= !attribute_bases.contains(&i);
        }
    }
    for a in &w.attributes {
        let Some(u) = w.uses.get(a.base) else {
            continue;
        };
        if let Some(f) = index.get(u.name.as_str()).and_then(|&at| free.get_mut(at)) {
            f.attrs.insert(a.attr.clone());
        }
    }
    let module_returns = w
        .module_returns
        .iter()
        .map(|&(start, end)| ModuleReturn {
            start: start as usize,
            keyword_end: start as usize + "return".len(),
            end: end as usize,
            line: src.line_of_offset(start),
        })
        .collect();
    NameFacts {
        star_import: w.star_import,
        free,
        input_lines: w
            .input_statements
            .iter()
            .map(|&at| src.line_of_offset(at))
            .collect(),
        module_returns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::source::parse_module;

    fn facts(code: &str) -> NameFacts {
        let src = SourceFile::new(code);
        let suite = parse_module(&src).unwrap();
        analyse(&src, &suite)
    }

    #[test]
    fn free_names_are_the_unbound_non_builtins() {
        let f = facts(
            "n = 4\nfor i in range(n):\n    x = gcd(i, n) + math.floor(2.5)\nprint(mat.pi, x)\n\
             def g(a, *b, k=dflt):\n    return a + b + k\ny = [z for z in q]\n",
        );
        let names: Vec<&str> = f.free.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["gcd", "math", "mat", "dflt", "q"]);
        let math = &f.free[1];
        assert_eq!(math.line, 3);
        assert!(!math.bare);
        assert_eq!(math.attrs.iter().collect::<Vec<_>>(), ["floor"]);
        assert!(f.free[0].bare);
        assert!(f.module_returns.is_empty(), "the return is inside g");
    }

    #[test]
    fn input_reading_statements_are_found() {
        let f = facts(
            "import sys\na = int(input())\nb = sys.stdin.readline()\nfor line in open(0):\n    \
             pass\nc = 1\n",
        );
        assert_eq!(f.input_lines.iter().copied().collect::<Vec<_>>(), [2, 3, 4]);
        assert!(f.free.is_empty());
        // An alias of a reader reads nothing until it is called.
        let f = facts("import sys\nread = sys.stdin.readline\nn = 4\nm = int(read())\n");
        assert_eq!(f.input_lines.iter().copied().collect::<Vec<_>>(), [4]);
        let f = facts("import sys\ninput = sys.stdin.readline\nn = 4\n");
        assert!(!f.reads_input());
    }

    #[test]
    fn module_level_returns_are_located() {
        let code = "x = 1\nif x:\n    return x + 1\nreturn\n";
        let f = facts(code);
        assert_eq!(f.module_returns.len(), 2);
        let r = f.module_returns[0];
        assert_eq!(r.line, 3);
        assert_eq!(&code[r.start..r.keyword_end], "return");
        assert_eq!(&code[r.start..r.end], "return x + 1");
        assert_eq!(f.module_returns[1].line, 4);
    }

    #[test]
    fn a_name_bound_in_any_scope_is_not_free_though_the_scoped_view_misses_it() {
        // One walk, two views: program-wide here, scoped for `ldb exec`.
        let code = "def f():\n    n = 1\n    return n\nprint(n)\n";
        assert!(facts(code).free.is_empty());
        let scoped = crate::python::names::undefined::undefined_names(&SourceFile::new(code));
        assert_eq!(scoped.expect("parses").name_list(), ["n"]);
    }

    #[test]
    fn an_annotation_alone_binds_nothing_and_del_reads_its_name() {
        let names =
            |code: &str| -> Vec<String> { facts(code).free.into_iter().map(|f| f.name).collect() };
        assert_eq!(names("x: int\nprint(x)\n"), ["x"]);
        assert_eq!(names("y: int = 1\nprint(y)\ndel z\n"), ["z"]);
    }

    #[test]
    fn augmented_assignment_to_an_unbound_name_is_a_use() {
        let f = facts("total += 1\n");
        assert_eq!(f.free.len(), 1);
        assert_eq!(f.free[0].name, "total");
    }
}
