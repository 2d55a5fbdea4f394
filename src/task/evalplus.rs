//! EvalPlus releases (`HumanEvalPlus*.jsonl`, `MbppPlus*.jsonl`, uncompressed).
//!
//! Hidden tests are the release's `test` (its extended tests) made runnable with the `check` call,
//! as for HumanEval; visible tests are the docstring examples (HumanEval+) or the first base test
//! with its imports (MBPP+). `canonical_solution` and the raw inputs (`base_input`,
//! `plus_input`) are never read.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::doctest::docstring_asserts;
use super::error::{ErrorKind, FieldProblem, Location, TaskError};
use super::fields::required_string;
use super::records::{read_records, Record};
use super::{humaneval, Task};

const HINT: &str = "EvalPlus records need task_id, prompt, entry_point and test (releases from \
                    HumanEval+ v0.1.10 / MBPP+ v0.2.0 on ship `test`)";

/// Whether `record` is an EvalPlus record: they carry the test inputs (`base_input`,
/// `plus_input`).
pub(crate) fn is_evalplus_record(record: &Map<String, Value>) -> bool {
    record.contains_key("plus_input") || record.contains_key("base_input")
}

/// The tasks of the file at `path` when it is an EvalPlus release (its first record is one),
/// read once; `None` for any other task file.
pub fn load_if_evalplus(path: &Path) -> Result<Option<Vec<Task>>, TaskError> {
    // Recognised by its first good record: a task file with bad lines is not refused here.
    let (records, bad) = crate::task::records::read_records_lenient(path)?;
    if !records
        .first()
        .is_some_and(|r| is_evalplus_record(&r.object))
    {
        return Ok(None);
    }
    let records = if bad.is_empty() {
        records
    } else {
        read_records(path)?
    };
    from_records(path, records).map(Some)
}

/// Every task of an EvalPlus release; fails on the first bad record or a task id used twice.
pub fn load_evalplus(path: &Path) -> Result<Vec<Task>, TaskError> {
    from_records(path, read_records(path)?)
}

fn from_records(path: &Path, records: Vec<Record>) -> Result<Vec<Task>, TaskError> {
    let mut tasks = Vec::new();
    let mut seen: HashMap<String, Location> = HashMap::new();
    for record in records {
        let task = convert(&record.object).map_err(|problem| {
            TaskError::from_problem(ErrorKind::Record, path, record.location, problem)
        })?;
        if let Some(first) = seen.get(&task.task_id) {
            return Err(super::duplicate_error(
                path,
                record.location,
                &task.task_id,
                *first,
            ));
        }
        seen.insert(task.task_id.clone(), record.location);
        tasks.push(task);
    }
    Ok(tasks)
}

fn convert(record: &Map<String, Value>) -> Result<Task, FieldProblem> {
    let task_id = required_string(record, "task_id", HINT)?;
    let prompt = required_string(record, "prompt", HINT)?;
    // The HumanEval reader turns these four fields into a task with runnable hidden tests.
    let mut base = Map::new();
    base.insert("task_id".into(), task_id.clone().into());
    base.insert("prompt".into(), prompt.clone().into());
    for field in ["entry_point", "test"] {
        base.insert(field.into(), required_string(record, field, HINT)?.into());
    }
    let mut task = humaneval::convert(&base)?;
    let mbpp = task_id.starts_with("Mbpp/") || record.contains_key("test_list");
    if mbpp {
        let first = record
            .get("test_list")
            .and_then(Value::as_array)
            .and_then(|l| l.first())
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| {
                prompt
                    .lines()
                    .map(str::trim)
                    .find(|l| l.starts_with("assert "))
                    .map(str::to_string)
            })
            .ok_or_else(|| {
                FieldProblem::new(
                    "test_list",
                    "no base test: neither `test_list` nor an assert in the prompt",
                    HINT,
                )
            })?;
        let imports: Vec<&str> = record
            .get("test_imports")
            .and_then(Value::as_array)
            .map(|l| l.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        task.visible_tests = vec![if imports.is_empty() {
            first
        } else {
            format!("{}\n{first}", imports.join("\n"))
        }];
    } else {
        task.visible_tests = docstring_asserts(&prompt);
    }
    Ok(task)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_without_test_is_named_by_line_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("HumanEvalPlus.jsonl");
        let good = r#"{"task_id":"HumanEval/0","prompt":"def f(x):\n    \"\"\"Identity.\n    >>> f(1)\n    1\n    \"\"\"\n","entry_point":"f","test":"def check(c):\n    assert c(2) == 2\n","base_input":[[1]]}"#;
        let bad = r#"{"task_id":"HumanEval/1","prompt":"def g():\n    pass\n","entry_point":"g","base_input":[]}"#;
        std::fs::write(&path, format!("{good}\n{bad}\n")).unwrap();
        let err = load_if_evalplus(&path).unwrap_err();
        assert_eq!(err.location().line(), Some(2));
        assert_eq!(err.field(), Some("test"));

        std::fs::write(&path, format!("{good}\n")).unwrap();
        let tasks = load_if_evalplus(&path).unwrap().expect("an EvalPlus file");
        assert_eq!(tasks[0].visible_tests, vec!["assert f(1) == 1".to_string()]);
        assert!(tasks[0]
            .hidden_tests
            .as_deref()
            .is_some_and(|t| t.contains("check(f)")));
    }
}
