//! HumanEval records (`task_id`, `prompt`, `entry_point`, `test`, `canonical_solution`).
//!
//! Visible tests are the prompt's `>>>` examples turned into asserts (see `doctest`); hidden tests
//! are the official `test` text made runnable by calling `check(<entry_point>)`, the way the
//! official harness does. `canonical_solution` is never read: it must not reach any model.
//! Extra fields (EvalPlus's `plus_input`, `atol`, ...) are ignored.

use serde_json::{Map, Value};

use super::doctest::docstring_asserts;
use super::error::FieldProblem;
use super::fields::required_string;
use super::Task;

pub(crate) fn convert(record: &Map<String, Value>) -> Result<Task, FieldProblem> {
    let task_id = required_string(
        record,
        "task_id",
        "HumanEval task ids are strings such as \"HumanEval/0\"",
    )?;
    let prompt = required_string(
        record,
        "prompt",
        "the HumanEval prompt is the signature with its docstring",
    )?;
    let entry_point = required_string(
        record,
        "entry_point",
        "the name of the function under test, e.g. \"has_close_elements\"",
    )?;
    let test = required_string(
        record,
        "test",
        "the HumanEval test is a `def check(candidate): ...` source string",
    )?;
    Ok(Task {
        visible_tests: docstring_asserts(&prompt),
        hidden_tests: Some(runnable_check(&test, &entry_point)),
        task_id,
        prompt,
        entry_point,
        seed: None,
        source: None,
        io_tests: Vec::new(),
        scope: Default::default(),
        peers: Vec::new(),
        pytest_nodes: Vec::new(),
        untold: false,
        in_project: false,
    })
}

/// `test` as a self-contained program suffix: when it defines `check` but never calls it at top
/// level, append `check(<entry_point>)`.
///
/// HumanEval and LDB's TransCoder `probs.jsonl` define `check` without calling it; LDB's MBPP
/// tests already end in `check(<entry_point>)` (calling it twice would run the asserts twice), and
/// TransCoder's `tests.jsonl` holds bare asserts with no `check` at all. All three come out right.
pub(crate) fn runnable_check(test: &str, entry_point: &str) -> String {
    let defines_check = test.lines().any(|l| l.starts_with("def check("));
    let calls_check = test.lines().any(|l| l.starts_with("check("));
    if defines_check && !calls_check && !entry_point.is_empty() {
        format!("{test}\n\ncheck({entry_point})\n")
    } else {
        test.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_call_added_once() {
        let t = "\ndef check(candidate):\n    assert candidate(1) == 2\n";
        assert_eq!(runnable_check(t, "f"), format!("{t}\n\ncheck(f)\n"));
        let called = format!("{t}check(f)\n");
        assert_eq!(runnable_check(&called, "f"), called);
        let bare = "assert f(1) == 2\nassert f(2) == 3";
        assert_eq!(runnable_check(bare, "f"), bare);
    }
}
