//! Rules a loaded task must meet before anything runs it.
//!
//! Shape (types, required fields) is checked while reading a record; these rules are about content:
//! a usable id, an entry point Python can call, and at least one test of some kind.

use super::error::FieldProblem;
use super::Task;

const PYTHON_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// True when `name` can be the name of a Python function: an identifier that is not a keyword.
///
/// Unicode letters are accepted as Python does (approximated by `char::is_alphabetic`).
pub fn is_python_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first == '_' || first.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
        && !PYTHON_KEYWORDS.contains(&name)
}

pub(crate) fn validate(task: &Task) -> Result<(), Vec<FieldProblem>> {
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
    } else if !is_python_identifier(&task.entry_point) {
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
