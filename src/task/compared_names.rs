//! A visible test that compares with a name nothing defines.
//!
//! `assert f('qIH') == qIH` (an expected string that lost its quotes, a benchmark's or a user's
//! typo) can never pass: it ends in a `NameError` whatever the program returns, unless the
//! program itself defines the name. A search against it spends its whole budget. ldb still runs
//! such a test (a program may be meant to define `inf` or `PI`), but `ldb test` and `ldb fix`
//! name it first, so its author can mend it.
//!
//! Only bare names that are a comparison's operand in an `assert` count: a name the test calls
//! (`assert decode(encode(x)) == x`) is one the program is expected to define. On LDB's seeds
//! (`benchmarks/undefined_compared.py`): no HumanEval or MBPP test named; 16-17 of 560
//! TransCoder tasks, all but 2 (which compare with `inf`) tasks whose references fail them too.

use std::collections::BTreeSet;

use rustpython_parser::ast;
use rustpython_parser::lexer::lex;
use rustpython_parser::{Mode, Tok};

use crate::python::names::free::analyse;
use crate::python::source::{parse_module, SourceFile};
use crate::python::text::dedent;

use super::Task;

/// One visible test that compares with names nothing defines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndefinedCompared {
    /// Index into the task's `visible_tests`.
    pub test: usize,
    /// The names, in order of first use.
    pub names: Vec<String>,
}

impl UndefinedCompared {
    /// `TASK visible_tests[I] compares with `a`, which neither the program nor the test defines`.
    pub fn message(&self, task_id: &str) -> String {
        let names: Vec<String> = self.names.iter().map(|n| format!("`{n}`")).collect();
        let these = if self.names.len() == 1 { "" } else { "names " };
        format!(
            "{task_id} visible_tests[{}] compares with {these}{}, which neither the program nor \
             the test defines: it fails with a NameError whatever the program returns",
            self.test,
            names.join(", "),
        )
    }

    /// What to do about it.
    pub fn hint(&self) -> String {
        let first = self.names.first().map_or("", String::as_str);
        format!("quote an expected string ('{first}'), or define the name in the test")
    }
}

/// The visible tests of `task` that compare with a name neither `program` nor the test defines.
/// A task run by pytest nodes, or a program that does not parse or imports `*`, gives none; so
/// does a test that imports `*`.
pub fn undefined_compared(task: &Task, program: &str) -> Vec<UndefinedCompared> {
    if !task.pytest_nodes.is_empty() {
        return Vec::new();
    }
    let src = SourceFile::new(program);
    match parse_module(&src) {
        Ok(suite) if !analyse(&src, &suite).star_import => {}
        _ => return Vec::new(),
    }
    let Some(mentioned) = identifiers(program) else {
        return Vec::new();
    };
    task.visible_tests
        .iter()
        .enumerate()
        .filter_map(|(test, source)| {
            let names: Vec<String> = compared_free_names(source)
                .into_iter()
                .filter(|n| *n != task.entry_point && !mentioned.contains(n))
                .collect();
            (!names.is_empty()).then_some(UndefinedCompared { test, names })
        })
        .collect()
}

/// Every identifier token of `program`: a name it mentions anywhere is taken as one it may
/// define (a `global`, a `setattr` on the module), so no test is flagged on a guess.
fn identifiers(program: &str) -> Option<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    for token in lex(program, Mode::Module) {
        if let (Tok::Name { name }, _) = token.ok()? {
            out.insert(name.to_string());
        }
    }
    Some(out)
}

/// The bare names a test's asserts compare with that the test binds nowhere (and that are no
/// builtins), in order of first use.
fn compared_free_names(test: &str) -> Vec<String> {
    let src = SourceFile::new(dedent(test));
    let Ok(suite) = parse_module(&src) else {
        return Vec::new();
    };
    let facts = analyse(&src, &suite);
    // `from helpers import *` may bind the name.
    if facts.star_import {
        return Vec::new();
    }
    let free: BTreeSet<String> = facts.free.into_iter().map(|f| f.name).collect();
    let mut compared = Vec::new();
    crate::python::walk::walk(&suite, &mut |stmt| {
        if let ast::Stmt::Assert(a) = stmt {
            operands(&a.test, &mut compared);
        }
        crate::python::walk::Descend::Into
    });
    let mut out: Vec<String> = Vec::new();
    for name in compared {
        if free.contains(&name) && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// The bare-name operands of the comparisons an assert's condition is made of (through `and`,
/// `or` and `not`).
fn operands(expr: &ast::Expr, out: &mut Vec<String>) {
    match expr {
        ast::Expr::Compare(c) => {
            for side in std::iter::once(c.left.as_ref()).chain(c.comparators.iter()) {
                if let ast::Expr::Name(n) = side {
                    out.push(n.id.to_string());
                }
            }
        }
        ast::Expr::BoolOp(b) => b.values.iter().for_each(|v| operands(v, out)),
        ast::Expr::UnaryOp(u) if matches!(u.op, ast::UnaryOp::Not) => operands(&u.operand, out),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(tests: &[&str]) -> Task {
        Task::from_record(&serde_json::json!({
            "task_id": "t/0",
            "prompt": "",
            "entry_point": "f",
            "visible_tests": tests,
        }))
        .unwrap()
    }

    const PROGRAM: &str = "import math\nPI = 3.14\ndef f(s):\n    return s[::-1]\n";

    #[test]
    fn an_unquoted_expected_string_is_named() {
        let t = task(&[
            "assert f('ab') == 'ba'",
            "assert f('HIq') == qIH",
            "assert qIH == f('x') and not (f('y') != zz)",
        ]);
        let found = undefined_compared(&t, PROGRAM);
        assert_eq!(
            found,
            vec![
                UndefinedCompared {
                    test: 1,
                    names: vec!["qIH".into()]
                },
                UndefinedCompared {
                    test: 2,
                    names: vec!["qIH".into(), "zz".into()]
                },
            ]
        );
        let message = found[0].message("t/0");
        assert!(message.starts_with("t/0 visible_tests[1] compares with `qIH`, which neither"));
        assert!(found[0].hint().contains("'qIH'"), "{}", found[0].hint());
        assert!(found[1].message("t/0").contains("names `qIH`, `zz`"));
    }

    #[test]
    fn names_the_program_or_test_define_or_call_are_not() {
        let t = task(&[
            // The program defines it, or mentions it anywhere.
            "assert f(1) == PI",
            "assert f(1) == math",
            // The test binds it, or it is a builtin.
            "x = 'ab'\nassert f(x) == x",
            "assert [f(c) for c in 'ab'] == [c for c in 'ab']",
            "assert f(1) is None and f(2) == Ellipsis",
            // Called: the program is expected to define it.
            "assert f(g(1)) == g(2)",
            // Not a comparison's bare operand.
            "assert f([abc]) == 1",
            // The entry point itself (a seed that misnames it).
            "assert f == f",
            // A star import may bind it.
            "from consts import *\nassert f(1) == MAX",
            // A parameter of a test function (a pytest fixture).
            "def test_f(expected):\n    assert f(1) == expected",
        ]);
        assert_eq!(undefined_compared(&t, PROGRAM), vec![]);
    }

    #[test]
    fn a_program_that_cannot_be_read_flags_nothing() {
        let t = task(&["assert f(1) == qIH"]);
        assert_eq!(undefined_compared(&t, "def f(:\n"), vec![]);
        assert_eq!(
            undefined_compared(&t, "from math import *\ndef f(x): return x\n"),
            vec![]
        );
        assert_eq!(undefined_compared(&t, "def f(x): return x\n").len(), 1);
    }
}
