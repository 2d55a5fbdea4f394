//! Rules a loaded task must meet before anything runs it.
//!
//! Shape (types, required fields) is checked while reading a record; these rules are about content:
//! a usable id, an entry point Python can call, at least one test of some kind, and visible tests
//! that parse as Python (a test that cannot run is bad input, found before any model is asked
//! to fix a program against it).

use super::error::FieldProblem;
use super::Task;
use crate::python::source::{parse_module, SourceFile};
use crate::python::text::dedent;

pub use crate::python::names::is_python_identifier;

/// Why visible test `i` of `task` does not parse as Python, for each one that does not.
fn unparsable(task: &Task) -> Vec<(usize, String)> {
    task.visible_tests
        .iter()
        .enumerate()
        .filter(|(_, test)| !test.trim().is_empty())
        .filter_map(|(i, test)| {
            parse_module(&SourceFile::new(dedent(test))).err().map(|e| {
                (
                    i,
                    format!(
                        "does not parse as Python: {} (line {}, column {} of the test)",
                        e.message, e.line, e.column
                    ),
                )
            })
        })
        .collect()
}

/// Remove the visible tests that do not parse (a published benchmark's broken tests, which
/// could only ever fail), returning one note per test removed.
pub(crate) fn drop_unparsable(task: &mut Task) -> Vec<String> {
    let bad = unparsable(task);
    for (i, _) in bad.iter().rev() {
        task.visible_tests.remove(*i);
    }
    bad.into_iter()
        .map(|(i, why)| format!("{} visible_tests[{i}] {why}", task.task_id))
        .collect()
}

/// The content rules; `parse` adds the rule that visible tests parse.
pub(crate) fn validate(task: &Task, parse: bool) -> Result<(), Vec<FieldProblem>> {
    let mut problems = Vec::new();
    if task.task_id.trim().is_empty() {
        problems.push(FieldProblem::new(
            "task_id",
            "must not be empty",
            "give every task a unique id, e.g. \"demo/0\"",
        ));
    }
    let has_hidden = task
        .hidden_tests
        .as_deref()
        .is_some_and(|t| !t.trim().is_empty());
    let script_only = task.visible_tests.is_empty() && !has_hidden && !task.io_tests.is_empty();
    if task.entry_point.is_empty() {
        if !script_only {
            problems.push(FieldProblem::new(
                "entry_point",
                "must not be empty: the tests call a function",
                "name the function the tests call, e.g. \"f\"; only tasks with nothing but io_tests may leave it empty",
            ));
        }
    } else if !(is_python_identifier(&task.entry_point)
        // A method of a user's module (`Cls.method`), repaired in place.
        || task.scope == super::ProgramScope::Function
            && crate::python::defs::is_path(&task.entry_point))
    {
        problems.push(FieldProblem::new(
            "entry_point",
            format!("`{}` is not a valid Python function name", task.entry_point),
            "use the bare function name, e.g. \"f\" (no parentheses, dots, spaces or keywords)",
        ));
    }
    if task.visible_tests.is_empty() && task.io_tests.is_empty() && !has_hidden {
        problems.push(FieldProblem::record(
            "the task has no tests: visible_tests, io_tests and hidden_tests are all empty",
            "add at least one test, e.g. \"visible_tests\": [\"assert f(1) == 2\"]",
        ));
    }
    for (i, test) in task.visible_tests.iter().enumerate() {
        if test.trim().is_empty() {
            problems.push(FieldProblem::new(
                format!("visible_tests[{i}]"),
                "empty test",
                "write each test as a Python statement string, e.g. \"assert f(1) == 2\"; remove empty entries",
            ));
        }
    }
    if parse {
        for (i, why) in unparsable(task) {
            problems.push(FieldProblem::new(
                format!("visible_tests[{i}]"),
                why,
                "fix the test's syntax: each visible test is Python statements, e.g. \"assert f(1) == 2\"",
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        for ok in ["f", "_x1", "remove_Occ", "größe"] {
            assert!(is_python_identifier(ok), "{ok}");
        }
        for bad in ["", "1f", "f()", "a.b", "class", "None", "a b", "f-g"] {
            assert!(!is_python_identifier(bad), "{bad}");
        }
    }
}
