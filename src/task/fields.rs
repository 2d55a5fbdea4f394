//! Typed access to the fields of a JSON record, with errors that name the field and the type found.
//!
//! The loaders read records through these helpers instead of `serde` derive so that a wrong type
//! is reported as "field `visible_tests`: expected a list of strings, found a number" rather than
//! serde's position-only message.

use serde_json::{Map, Value};

use super::error::FieldProblem;

/// How a JSON value's type is named in messages: "found a number".
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn missing(field: &str, hint: &str) -> FieldProblem {
    FieldProblem::new(field, "missing required field", hint)
}

fn wrong_type(field: &str, expected: &str, found: &Value, hint: &str) -> FieldProblem {
    FieldProblem::new(
        field,
        format!("expected {expected}, found {}", type_name(found)),
        hint,
    )
}

/// A required string field. `null` counts as a wrong type, not as absent.
pub(crate) fn required_string(
    record: &Map<String, Value>,
    field: &str,
    hint: &str,
) -> Result<String, FieldProblem> {
    match record.get(field) {
        None => Err(missing(field, hint)),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(wrong_type(field, "a string", other, hint)),
    }
}

/// An optional string field; absent and `null` both give `None`.
pub(crate) fn optional_string(
    record: &Map<String, Value>,
    field: &str,
    hint: &str,
) -> Result<Option<String>, FieldProblem> {
    match record.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(wrong_type(field, "a string", other, hint)),
    }
}

/// An optional list of strings; absent and `null` both give `None`.
pub(crate) fn optional_string_list(
    record: &Map<String, Value>,
    field: &str,
    hint: &str,
) -> Result<Option<Vec<String>>, FieldProblem> {
    match record.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => string_list(value, field, hint).map(Some),
    }
}

/// A required list of strings.
pub(crate) fn required_string_list(
    record: &Map<String, Value>,
    field: &str,
    hint: &str,
) -> Result<Vec<String>, FieldProblem> {
    match record.get(field) {
        None => Err(missing(field, hint)),
        Some(value) => string_list(value, field, hint),
    }
}

fn string_list(value: &Value, field: &str, hint: &str) -> Result<Vec<String>, FieldProblem> {
    let Value::Array(items) = value else {
        return Err(wrong_type(field, "a list of strings", value, hint));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::String(s) => Ok(s.clone()),
            other => Err(wrong_type(
                &format!("{field}[{i}]"),
                "a string",
                other,
                hint,
            )),
        })
        .collect()
}

/// The first key of `record` not in `allowed`, reported with a "did you mean" hint when a known
/// field is close.
pub(crate) fn reject_unknown_fields(
    record: &Map<String, Value>,
    allowed: &[&str],
    prefix: &str,
) -> Result<(), FieldProblem> {
    let Some(unknown) = record.keys().find(|k| !allowed.contains(&k.as_str())) else {
        return Ok(());
    };
    let hint = match closest(unknown, allowed) {
        Some(known) => format!("did you mean `{prefix}{known}`?"),
        None => format!(
            "the known fields are {}",
            allowed
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Err(FieldProblem::new(
        format!("{prefix}{unknown}"),
        "unknown field",
        hint,
    ))
}

/// The first key of `record` that is not in `allowed` but is close to an allowed name: a typo
/// such as `visible_test`. Other unknown keys are metadata a dataset carries (Refactory's
/// `question`, `file`) and are ignored.
pub(crate) fn reject_misspelt_fields(
    record: &Map<String, Value>,
    allowed: &[&str],
    prefix: &str,
) -> Result<(), FieldProblem> {
    for key in record.keys().filter(|k| !allowed.contains(&k.as_str())) {
        if let Some(known) = closest(key, allowed) {
            return Err(FieldProblem::new(
                format!("{prefix}{key}"),
                "unknown field",
                format!("did you mean `{prefix}{known}`?"),
            ));
        }
    }
    Ok(())
}

/// The allowed name nearest to `name` by edit distance, if it is near enough to be a typo.
fn closest<'a>(name: &str, allowed: &[&'a str]) -> Option<&'a str> {
    let lower = name.to_lowercase().replace('-', "_");
    allowed
        .iter()
        .map(|&a| (edit_distance(&lower, a), a))
        .filter(|&(d, a)| d <= 2.max(a.len() / 4))
        .min_by_key(|&(d, _)| d)
        .map(|(_, a)| a)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = Vec::with_capacity(b.len() + 1);
        cur.push(i + 1);
        for (j, cb) in b.iter().enumerate() {
            let substitute = prev.get(j).copied().unwrap_or(usize::MAX / 2) + usize::from(ca != cb);
            let delete = prev.get(j + 1).copied().unwrap_or(usize::MAX / 2) + 1;
            let insert = cur.get(j).copied().unwrap_or(usize::MAX / 2) + 1;
            cur.push(substitute.min(delete).min(insert));
        }
        prev = cur;
    }
    prev.last().copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typo_suggestions() {
        let allowed = ["task_id", "visible_tests", "io_tests"];
        assert_eq!(closest("visible_test", &allowed), Some("visible_tests"));
        assert_eq!(closest("Visible-Tests", &allowed), Some("visible_tests"));
        assert_eq!(closest("taskid", &allowed), Some("task_id"));
        assert_eq!(closest("completely_else", &allowed), None);
    }
}
