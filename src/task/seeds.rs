//! Seed programs from a file, keyed by `task_id`.
//!
//! Reads LDB's `seed.jsonl` files (the program is in `solution`) and generic records
//! `{"task_id": ..., "program" | "solution" | "completion": ...}`; when a record has several,
//! `program` wins over `solution`, which wins over `completion`. The text is taken as is, as the
//! full program. Two cases where it is not a full program, which the caller must handle with the
//! task's prompt:
//! - a HumanEval-harness `completion` usually holds only the function body;
//! - LDB's Reflexion seeds hold the body only, and the 14 unsolved ones are empty strings.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use super::error::{ErrorKind, FieldProblem, Location, TaskError};
use super::fields::{required_string, type_name};
use super::records::read_records;

const PROGRAM_FIELDS: &[&str] = &["program", "solution", "completion"];

/// Reads a `.jsonl` (or `.json` array) of seed programs into a map from `task_id` to program.
/// A `task_id` that appears twice is an error (keep one sample per task).
pub fn load_seeds(path: &Path) -> Result<HashMap<String, String>, TaskError> {
    let mut seeds = HashMap::new();
    let mut seen: HashMap<String, Location> = HashMap::new();
    for record in read_records(path)? {
        let at =
            |problem| TaskError::from_problem(ErrorKind::Record, path, record.location, problem);
        let task_id = required_string(
            &record.object,
            "task_id",
            "each seed record names its task, e.g. {\"task_id\": \"HumanEval/0\", \"program\": \"def f(): ...\"}",
        )
        .map_err(at)?;
        let program = program(&record.object).map_err(at)?;
        if let Some(first) = seen.get(&task_id) {
            return Err(super::duplicate_error(
                path,
                record.location,
                &task_id,
                *first,
            ));
        }
        seen.insert(task_id.clone(), record.location);
        seeds.insert(task_id, program);
    }
    Ok(seeds)
}

fn program(record: &serde_json::Map<String, Value>) -> Result<String, FieldProblem> {
    const HINT: &str =
        "put the seed program in `program` (or `solution`/`completion`) as one string";
    for &field in PROGRAM_FIELDS {
        match record.get(field) {
            None | Some(Value::Null) => continue,
            Some(Value::String(s)) => return Ok(s.clone()),
            Some(other) => {
                return Err(FieldProblem::new(
                    field,
                    format!("expected a string, found {}", type_name(other)),
                    HINT,
                ))
            }
        }
    }
    Err(FieldProblem::record(
        "no seed program: the record has none of the fields `program`, `solution`, `completion`",
        HINT,
    ))
}
