//! LDB's (LLMDebugger's) data layout: `<dataset>/dataset/probs.jsonl` with the problems and
//! `<dataset>/test/tests.jsonl` with the visible tests in `given_tests`, joined by `task_id`.
//!
//! A record with `given_tests` takes them as visible tests; `test` becomes the runnable hidden test
//! (see [`runnable_check`]). For TransCoder prompts (few-shot `[c++]` / `[python]` blocks) the C++
//! program to translate is the *last* `[c++]` block; it is stored as `source`. (LDB's own code takes
//! the first block, a few-shot example.) `canonical_solution`, `solution`, `is_solved` and the
//! other result fields are ignored.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::error::{ErrorKind, FieldProblem, Location, TaskError};
use super::fields::{required_string, required_string_list};
use super::humaneval::runnable_check;
use super::records::read_records;
use super::{SourceCode, Task};

const GIVEN_HINT: &str = "given_tests is a list of assert strings, e.g. [\"assert f(1) == 2\"]";

pub(crate) fn convert(record: &Map<String, Value>) -> Result<Task, FieldProblem> {
    let task_id = required_string(
        record,
        "task_id",
        "LDB task ids are strings such as \"MBPP/11\"",
    )?;
    let prompt = required_string(record, "prompt", "the prompt is the task text")?;
    let entry_point =
        required_string(record, "entry_point", "the name of the function under test")?;
    let test = required_string(
        record,
        "test",
        "the test is Python source, usually `def check(candidate): ...`",
    )?;
    let visible_tests = required_string_list(record, "given_tests", GIVEN_HINT)?;
    Ok(Task {
        hidden_tests: Some(runnable_check(&test, &entry_point)),
        source: translation_source(&prompt),
        task_id,
        prompt,
        entry_point,
        visible_tests,
        seed: None,
        io_tests: Vec::new(),
        scope: Default::default(),
        peers: Vec::new(),
        pytest_nodes: Vec::new(),
        untold: false,
        in_project: false,
    })
}

/// The C++ program a TransCoder prompt asks to translate: the text of the last `[c++]` block, up
/// to the `[python]` marker that follows it.
pub(crate) fn translation_source(prompt: &str) -> Option<SourceCode> {
    const CPP: &str = "[c++]";
    let start = prompt.rfind(CPP)? + CPP.len();
    let rest = prompt.get(start..)?;
    let end = rest.find("[python]")?;
    let code = rest.get(..end)?.trim_matches(|c| c == '\n' || c == '\r');
    (!code.trim().is_empty()).then(|| SourceCode {
        language: "cpp".to_string(),
        code: code.to_string(),
    })
}

/// The tasks of LDB's layout, and the visible tests set aside because they do not parse.
#[derive(Debug)]
pub struct LdbLayout {
    pub tasks: Vec<Task>,
    /// `TASK visible_tests[i] does not parse as Python: ...`, one per test dropped. LDB's
    /// TransCoder holds such tests (integers with leading zeros, NUL bytes): they could only
    /// fail, and a model would be asked to fix a program against them.
    pub dropped_tests: Vec<String>,
}

/// Loads LDB's layout: the problems of `probs` (any format [`crate::task::load_tasks`] reads), with the
/// visible tests replaced by the `given_tests` of the same `task_id` in `tests` when it is given.
///
/// Every problem must have a record in `tests`; records in `tests` without a problem are ignored,
/// so a trimmed `probs.jsonl` can be used with the full `tests.jsonl`. Only `task_id` and
/// `given_tests` are read from `tests` (TransCoder's `tests.jsonl` has a different prompt and a
/// bare-assert `test`; the problem's own are kept). Visible tests that do not parse are dropped
/// and named in [`LdbLayout::dropped_tests`]: this is a published benchmark, kept whole.
pub fn load_ldb_layout(probs: &Path, tests: Option<&Path>) -> Result<LdbLayout, TaskError> {
    let mut tasks = crate::task::load_located_unparsed(probs)?;
    let given = tests.map(read_given_tests).transpose()?;
    let mut dropped_tests = Vec::new();
    for (location, task) in &mut tasks {
        let mut at = (probs, *location);
        if let (Some(tests_path), Some(given)) = (tests, &given) {
            let Some((tests_location, visible)) = given.get(&task.task_id) else {
                return Err(TaskError::new(
                    ErrorKind::Join,
                    probs,
                    *location,
                    format!(
                        "task `{}` has no record in {}",
                        task.task_id,
                        tests_path.display()
                    ),
                    "pass the tests file that belongs to these problems, or remove the task",
                ));
            };
            task.visible_tests = visible.clone();
            at = (tests_path, *tests_location);
        }
        dropped_tests.extend(super::validate::drop_unparsable(task));
        if let Err(problems) = task.validate() {
            if let Some(problem) = problems.into_iter().next() {
                return Err(TaskError::from_problem(
                    ErrorKind::Invalid,
                    at.0,
                    at.1,
                    problem,
                ));
            }
        }
    }
    Ok(LdbLayout {
        tasks: tasks.into_iter().map(|(_, task)| task).collect(),
        dropped_tests,
    })
}

/// The visible tests of LDB's `tests.jsonl` (`given_tests`) by task id, with where each was.
pub(crate) fn read_given_tests(
    path: &Path,
) -> Result<HashMap<String, (Location, Vec<String>)>, TaskError> {
    let mut given: HashMap<String, (Location, Vec<String>)> = HashMap::new();
    for record in read_records(path)? {
        let at =
            |problem| TaskError::from_problem(ErrorKind::Record, path, record.location, problem);
        let task_id = required_string(
            &record.object,
            "task_id",
            "task ids are strings such as \"HumanEval/0\"",
        )
        .map_err(at)?;
        let tests = required_string_list(&record.object, "given_tests", GIVEN_HINT).map_err(at)?;
        if let Some((first, _)) = given.get(&task_id) {
            return Err(super::duplicate_error(
                path,
                record.location,
                &task_id,
                *first,
            ));
        }
        given.insert(task_id, (record.location, tests));
    }
    Ok(given)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_cpp_block() {
        let p = "[code]\n[c++]\nint a() {}\n[python]\ndef a(): pass\n[c++]\nint b ( ) {\n  return 1;\n}\n[python]";
        let s = translation_source(p).map(|s| s.code);
        assert_eq!(s.as_deref(), Some("int b ( ) {\n  return 1;\n}"));
        assert!(translation_source("def f(): pass").is_none());
        assert!(translation_source("[c++]\n\n[python]").is_none());
    }
}
