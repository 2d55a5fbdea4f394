//! Imports a program left out: each name the failing tests could not read (`NameError`) that
//! the standard library resolves ([`crate::python::stdlib`]: `re.search` → `import re`,
//! `col.deque` → `import collections as col`, a bare `gcd` → `from math import gcd`), or a
//! conventional third-party alias (`np`), imported in one edit at the top of the module, after
//! its docstring and the imports it has. Generated code often leaves an import out; a person
//! reading the `NameError` adds it and changes nothing else.

use rustpython_parser::ast::{Constant, Expr, Ranged, Stmt};

use super::{Candidate, EditKind, Repl};
use crate::python::names::free::analyse;
use crate::python::source::SourceFile;
use crate::python::stdlib;

/// The edit importing every name of `unbound` the program reads without binding, with the line
/// of the first such read; `None` when no such name resolves to a module.
pub(super) fn missing_imports(
    src: &SourceFile,
    suite: &[Stmt],
    unbound: &[String],
) -> Option<(u32, Candidate)> {
    if unbound.is_empty() {
        return None;
    }
    // The tests stop at the first name missing; a module read only as `module.attr` (the
    // module's own name) is missing too, and imported in the same edit.
    let free: Vec<_> = analyse(src, suite)
        .free
        .into_iter()
        .filter(|f| unbound.contains(&f.name) || (!f.bare && stdlib::is_module(&f.name)))
        .collect();
    let line = free.iter().map(|f| f.line).min()?;
    let resolved = stdlib::resolve(&free);
    let mut imports = resolved.imports;
    imports.extend(
        resolved
            .unresolved
            .iter()
            .filter_map(|name| stdlib::third_party_import(name)),
    );
    // Only an import that mends a name the tests missed makes the edit.
    if !imports.iter().any(|i| unbound.contains(&i.name)) {
        return None;
    }
    let statements: Vec<String> = imports.into_iter().map(|i| i.statement).collect();
    let at = insertion_offset(src.text(), suite);
    Some((
        line,
        Candidate {
            kind: EditKind::Import,
            repls: vec![Repl {
                start: at,
                end: at,
                text: statements.iter().map(|s| format!("{s}\n")).collect(),
            }],
            description: format!("add `{}`", statements.join("`, `")),
        },
    ))
}

/// Where a new import goes: after the last of the module's leading imports (its docstring and
/// imports come first), so `from __future__` stays first and the new lines join the others.
fn insertion_offset(text: &str, suite: &[Stmt]) -> usize {
    let mut after = None;
    for (i, s) in suite.iter().enumerate() {
        let docstring = i == 0
            && matches!(s, Stmt::Expr(e) if matches!(
                e.value.as_ref(),
                Expr::Constant(c) if matches!(c.value, Constant::Str(_))
            ));
        if !(docstring || matches!(s, Stmt::Import(_) | Stmt::ImportFrom(_))) {
            break;
        }
        after = Some(usize::from(s.end()));
    }
    // The start of the line after the statement's end.
    after.map_or(0, |end| {
        text.get(end..)
            .and_then(|rest| rest.find('\n'))
            .map_or(text.len(), |nl| end + nl + 1)
    })
}

#[cfg(test)]
mod tests {
    use super::super::apply;
    use super::*;
    use crate::python::source::parse_module;

    fn edit(program: &str, unbound: &[&str]) -> Option<String> {
        let src = SourceFile::new(program.to_string());
        let suite = parse_module(&src).expect("parses");
        let names: Vec<String> = unbound.iter().map(|s| s.to_string()).collect();
        let (_, c) = missing_imports(&src, &suite, &names)?;
        apply(program, &c.repls)
    }

    #[test]
    fn a_module_read_without_its_import_is_imported_above_the_function() {
        let program = "\"\"\"Doc.\"\"\"\nimport os\n\n\ndef f(s):\n    return re.findall(r'\\d', s), math.pi\n";
        assert_eq!(
            edit(program, &["re", "math"]).as_deref(),
            Some("\"\"\"Doc.\"\"\"\nimport os\nimport re\nimport math\n\n\ndef f(s):\n    return re.findall(r'\\d', s), math.pi\n")
        );
        // An abbreviation and a bare name a module exports.
        let program = "def f(xs):\n    q = col.deque(xs)\n    return gcd(q[0], 4)\n";
        let fixed = edit(program, &["col", "gcd"]).expect("an edit");
        assert!(
            fixed.starts_with("import collections as col\nfrom math import gcd\ndef f"),
            "{fixed}"
        );
    }

    #[test]
    fn names_the_tests_did_not_miss_or_no_module_has_are_left() {
        let program = "def f(s):\n    return re.sub('a', 'b', s) + undefined_helper(s)\n";
        // `re` read, but the failing tests raised for another name only.
        assert_eq!(edit(program, &["undefined_helper"]), None);
        assert_eq!(edit(program, &[]), None);
    }
}
