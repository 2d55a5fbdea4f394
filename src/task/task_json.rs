//! ldb's own task format (`task.json`, DESIGN.md §3), read field by field.
//!
//! A `hidden_tests` that defines `check` without calling it gets `check(<entry_point>)` appended,
//! as for HumanEval. A field close to a known one is an error (a typo such as `visible_test`
//! would otherwise silently drop the tests; the hint suggests the known field); other extra
//! fields are a dataset's metadata (Refactory's `question`, `file`) and are ignored.

use serde_json::{Map, Value};

use super::error::FieldProblem;
use super::fields::{
    optional_string, optional_string_list, reject_misspelt_fields, reject_unknown_fields,
    required_string, type_name,
};
use super::humaneval::runnable_check;
use super::{IoTest, SourceCode, Task};

pub(crate) const FIELDS: &[&str] = &[
    "task_id",
    "prompt",
    "entry_point",
    "visible_tests",
    "hidden_tests",
    "seed",
    "source",
    "io_tests",
    "peers",
];

/// A record with none of ldb's test fields but a field of its own that holds tests (`tests`,
/// `asserts`, `test_cases`): the tests would be dropped as metadata, and the task reported as
/// having none, so name the field and where its tests belong.
fn reject_foreign_test_field(record: &Map<String, Value>) -> Result<(), FieldProblem> {
    if ["visible_tests", "hidden_tests", "io_tests"]
        .iter()
        .any(|f| record.contains_key(*f))
    {
        return Ok(());
    }
    let Some(key) = record.keys().find(|k| {
        let k = k.to_lowercase();
        !FIELDS.contains(&k.as_str()) && (k.contains("test") || k.contains("assert"))
    }) else {
        return Ok(());
    };
    Err(FieldProblem::new(
        key.clone(),
        "unknown field: ldb reads tests only from `visible_tests`, `hidden_tests` or `io_tests`",
        format!(
            "rename `{key}` to `visible_tests` (a list of statements such as \"assert f(1) == 2\", \
             shown to the model) or `hidden_tests` (one Python script, used only to score the result)"
        ),
    ))
}

const TEST_HINT: &str = "write each test as a Python statement string, e.g. \"assert f(1) == 2\"";

pub(crate) fn convert(record: &Map<String, Value>) -> Result<Task, FieldProblem> {
    reject_misspelt_fields(record, FIELDS, "")?;
    reject_foreign_test_field(record)?;
    let mut task = Task {
        task_id: required_string(record, "task_id", "give every task a unique id string, e.g. \"demo/0\"")?,
        prompt: required_string(
            record,
            "prompt",
            "the prompt is the task text: a description, or a signature with a docstring",
        )?,
        entry_point: optional_string(
            record,
            "entry_point",
            "the entry point is the name of the function the tests call, e.g. \"f\"",
        )?
        .unwrap_or_default(),
        visible_tests: optional_string_list(record, "visible_tests", TEST_HINT)?.unwrap_or_default(),
        hidden_tests: optional_string(
            record,
            "hidden_tests",
            "hidden tests are one Python source string, e.g. \"def check(candidate): ...\\ncheck(f)\"",
        )?,
        seed: optional_string(record, "seed", "the seed is a Python program as one string")?,
        source: source(record)?,
        io_tests: io_tests(record)?,
        peers: optional_string_list(
            record,
            "peers",
            "peers are other programs for the same task, each a Python program as one string",
        )?
        .unwrap_or_default(),
        scope: Default::default(),
        pytest_nodes: Vec::new(),
        untold: false,
        in_project: false,
    };
    // DESIGN.md's example writes hidden tests as a bare `def check(candidate): ...`; without the
    // call they would pass every program. Adding it is idempotent, so saved tasks reload unchanged.
    if let Some(hidden) = &task.hidden_tests {
        task.hidden_tests = Some(runnable_check(hidden, &task.entry_point));
    }
    Ok(task)
}

fn source(record: &Map<String, Value>) -> Result<Option<SourceCode>, FieldProblem> {
    const HINT: &str = "write the source as {\"language\": \"cpp\", \"code\": \"...\"}";
    let object = match record.get("source") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(object)) => object,
        Some(other) => {
            return Err(FieldProblem::new(
                "source",
                format!("expected an object, found {}", type_name(other)),
                HINT,
            ))
        }
    };
    reject_unknown_fields(object, &["language", "code"], "source.")?;
    let field = |name: &str| {
        required_string(object, name, HINT).map_err(|mut p| {
            p.field = Some(format!("source.{name}"));
            p
        })
    };
    Ok(Some(SourceCode {
        language: field("language")?,
        code: field("code")?,
    }))
}

fn io_tests(record: &Map<String, Value>) -> Result<Vec<IoTest>, FieldProblem> {
    const HINT: &str = "write each io test as {\"stdin\": \"3\\n1 2 3\\n\", \"stdout\": \"6\\n\"}";
    let items = match record.get("io_tests") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(FieldProblem::new(
                "io_tests",
                format!("expected a list of objects, found {}", type_name(other)),
                HINT,
            ))
        }
    };
    let mut tests = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let prefix = format!("io_tests[{i}]");
        let Value::Object(object) = item else {
            return Err(FieldProblem::new(
                prefix,
                format!("expected an object, found {}", type_name(item)),
                HINT,
            ));
        };
        reject_unknown_fields(object, &["stdin", "stdout"], &format!("{prefix}."))?;
        let rename = |mut p: FieldProblem| {
            p.field = p.field.map(|f| format!("{prefix}.{f}"));
            p
        };
        tests.push(IoTest {
            // A program that reads nothing has no stdin; stdout is what the test checks.
            stdin: optional_string(object, "stdin", HINT)
                .map_err(rename)?
                .unwrap_or_default(),
            stdout: required_string(object, "stdout", HINT).map_err(rename)?,
        });
    }
    Ok(tests)
}
