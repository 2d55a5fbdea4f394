//! MBPP records: the original `mbpp.jsonl` (`text`, `test_list`, `test_setup_code`, integer
//! `task_id`) and the sanitized `sanitized-mbpp.json` (`prompt`, `test_list`, `test_imports`).
//!
//! Following the protocol of LDB and Reflexion: the visible test is the first assert, the hidden
//! tests are all of `test_list`; `challenge_test_list` is not used. Set-up code (`test_setup_code`,
//! `test_imports`) goes in front of both, because some asserts need it (task 367's visible assert
//! uses names the set-up defines). MBPP prompts name no function, so the prompt shows the first
//! assert, which fixes the name and arity; the entry point is the function that assert calls.

use rustpython_parser::lexer::lex;
use rustpython_parser::{Mode, Tok};
use serde_json::{Map, Value};

use super::error::FieldProblem;
use super::fields::{
    optional_string, optional_string_list, required_string, required_string_list, type_name,
};
use super::Task;

const TESTS_HINT: &str =
    "MBPP's test_list is a list of assert strings, e.g. [\"assert f(1) == 2\"]";

/// Builtins that wrap the call under test in some asserts, e.g. `assert set(f(x)) == {...}`.
const WRAPPERS: &[&str] = &[
    "abs",
    "all",
    "any",
    "bool",
    "dict",
    "float",
    "frozenset",
    "int",
    "isinstance",
    "len",
    "list",
    "max",
    "min",
    "print",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "sorted",
    "str",
    "sum",
    "tuple",
    "type",
    "zip",
];

/// Original MBPP (`mbpp.jsonl`).
pub(crate) fn convert_original(record: &Map<String, Value>) -> Result<Task, FieldProblem> {
    let task_id = mbpp_task_id(record)?;
    let text = required_string(record, "text", "MBPP's text is the task description")?;
    let setup = optional_string(
        record,
        "test_setup_code",
        "test_setup_code is Python source as one string",
    )?
    .unwrap_or_default();
    build(record, task_id, &text, &setup)
}

/// Sanitized MBPP (`sanitized-mbpp.json`).
pub(crate) fn convert_sanitized(record: &Map<String, Value>) -> Result<Task, FieldProblem> {
    let task_id = mbpp_task_id(record)?;
    let text = required_string(
        record,
        "prompt",
        "sanitized MBPP's prompt is the task description",
    )?;
    let setup = optional_string_list(
        record,
        "test_imports",
        "test_imports is a list of import statements",
    )?
    .unwrap_or_default()
    .join("\n");
    build(record, task_id, &text, &setup)
}

fn build(
    record: &Map<String, Value>,
    task_id: String,
    text: &str,
    setup: &str,
) -> Result<Task, FieldProblem> {
    let asserts: Vec<String> = required_string_list(record, "test_list", TESTS_HINT)?
        .iter()
        .map(|t| normalize(t))
        .collect();
    let Some(first) = asserts.first() else {
        return Err(FieldProblem::new(
            "test_list",
            "empty list: MBPP tasks need at least one assert",
            TESTS_HINT,
        ));
    };
    let code = optional_string(
        record,
        "code",
        "MBPP's code is the reference solution as one string",
    )?
    .unwrap_or_default();
    let entry_point = called_function(first, &code).ok_or_else(|| {
        FieldProblem::new(
            "test_list[0]",
            format!("cannot tell which function this assert tests: {first}"),
            "the first assert should call the function under test, e.g. \"assert f(1) == 2\"",
        )
    })?;
    let setup = normalize(setup.trim_end());
    let with_setup = |body: &str| {
        if setup.trim().is_empty() {
            body.to_string()
        } else {
            format!("{setup}\n{body}")
        }
    };
    Ok(Task {
        prompt: format!(
            "{}\nYour code should pass this test:\n{first}",
            text.trim_end()
        ),
        entry_point,
        visible_tests: vec![with_setup(first)],
        hidden_tests: Some(format!("{}\n", with_setup(&asserts.join("\n")))),
        task_id,
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

/// `"MBPP/<n>"` from an integer id; a string id is kept as it is.
fn mbpp_task_id(record: &Map<String, Value>) -> Result<String, FieldProblem> {
    const HINT: &str = "MBPP task ids are whole numbers such as 11";
    match record.get("task_id") {
        None => Err(FieldProblem::new("task_id", "missing required field", HINT)),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(n) => Ok(format!("MBPP/{n}")),
            None => Err(FieldProblem::new(
                "task_id",
                format!("expected a whole non-negative number, found {n}"),
                HINT,
            )),
        },
        Some(other) => Err(FieldProblem::new(
            "task_id",
            format!("expected a number, found {}", type_name(other)),
            HINT,
        )),
    }
}

fn normalize(text: &str) -> String {
    text.replace("\r\n", "\n")
}

/// The function an assert tests: of the plain-name calls in it (not methods), the first one the
/// reference code defines, else the first that is not a builtin wrapper such as `set(...)`.
pub(crate) fn called_function(assert: &str, code: &str) -> Option<String> {
    let calls = called_names(assert);
    let defined = |name: &str| {
        code.lines().any(|l| {
            l.trim_start()
                .strip_prefix("def ")
                .and_then(|rest| rest.trim_start().strip_prefix(name))
                .is_some_and(|rest| rest.trim_start().starts_with('('))
        })
    };
    calls
        .iter()
        .find(|n| defined(n))
        .or_else(|| calls.iter().find(|n| !is_builtin_wrapper(n)))
        .cloned()
}

/// Whether `name` is a builtin that asserts wrap around the call under test (`set(f(x))`).
pub(crate) fn is_builtin_wrapper(name: &str) -> bool {
    WRAPPERS.contains(&name)
}

/// Names called as plain functions (`name(`), in source order; `obj.name(` is skipped.
pub(crate) fn called_names(source: &str) -> Vec<String> {
    names_where(source, |before, after| {
        matches!(after, Some(Tok::Lpar))
            && !matches!(before, Some(Tok::Dot | Tok::Def | Tok::Class))
    })
}

/// Names read as attributes (`obj.name`, called or not), in source order: the methods and
/// properties a test uses.
pub(crate) fn attribute_names(source: &str) -> Vec<String> {
    names_where(source, |before, _| matches!(before, Some(Tok::Dot)))
}

/// The distinct names of `source`, in order, whose neighbouring tokens (before, after) `keep`
/// accepts.
fn names_where(source: &str, keep: impl Fn(Option<&Tok>, Option<&Tok>) -> bool) -> Vec<String> {
    let tokens: Vec<Tok> = lex(source, Mode::Module)
        .map_while(Result::ok)
        .map(|(tok, _)| tok)
        .collect();
    let mut names = Vec::new();
    for (i, tok) in tokens.iter().enumerate() {
        let Tok::Name { name } = tok else { continue };
        let before = i.checked_sub(1).and_then(|p| tokens.get(p));
        if keep(before, tokens.get(i + 1)) && !names.contains(name) {
            names.push(name.clone());
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_read() {
        assert_eq!(
            attribute_names("s = Stack()\ns.push(1)\nassert s.pop() == 1 and s.size == 0"),
            ["push", "pop", "size"]
        );
        assert!(attribute_names("assert f(x, 1.5) == 1").is_empty());
    }

    #[test]
    fn entry_point_from_assert() {
        assert_eq!(
            called_function("assert remove_Occ(\"hello\",\"l\") == \"heo\"", "").as_deref(),
            Some("remove_Occ")
        );
        assert_eq!(
            called_function("assert (Diff([1], [2])) == [1]", "").as_deref(),
            Some("Diff")
        );
        let code = "def binomial_coeff(n, k):\n  pass\ndef lobb_num(n, m):\n  pass";
        assert_eq!(
            called_function("assert int(lobb_num(5, 3)) == 35", code).as_deref(),
            Some("lobb_num")
        );
        assert_eq!(
            called_function("assert set(f(1)) == set([1])", "").as_deref(),
            Some("f")
        );
        assert_eq!(
            called_function("assert math.isclose(g(1), 0.5)", "").as_deref(),
            Some("g")
        );
        assert_eq!(called_function("assert 1 == 1", ""), None);
    }
}
