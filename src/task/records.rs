//! Reading a `.json` or `.jsonl` file into JSON object records, each with its place in the file.
//!
//! This layer knows nothing about tasks: it turns bytes into `(Location, object)` pairs and reports
//! file-level problems (missing file, unknown extension, non-UTF-8 bytes, JSON syntax, no records,
//! records that are not objects) with the line and column where they occur.

use std::path::Path;

use serde_json::{Map, Value};

use super::error::{ErrorKind, FieldProblem, Location, TaskError};
use super::fields::type_name;

/// One JSON object read from a file.
pub(crate) struct Record {
    pub location: Location,
    pub object: Map<String, Value>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum FileKind {
    Json,
    Jsonl,
}

const EXTENSION_HINT: &str =
    "use .json for one task object or an array of tasks, .jsonl for one task per line";

fn file_kind(path: &Path) -> Option<FileKind> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "json" => Some(FileKind::Json),
        "jsonl" => Some(FileKind::Jsonl),
        _ => None,
    }
}

/// Reads every record of `path`. Fails on the first problem; an empty file is an error.
pub(crate) fn read_records(path: &Path) -> Result<Vec<Record>, TaskError> {
    let (kind, bytes) = read_file(path)?;
    parse_records(path, kind, &bytes)
}

/// The records of `path`, and for a `.jsonl` file the lines that are not one (bad JSON or
/// UTF-8, not an object), each with its error, instead of failing on the first. A `.json` file
/// is read as [`read_records`] reads it. A file with neither records nor bad lines is an error.
pub(crate) fn read_records_lenient(
    path: &Path,
) -> Result<(Vec<Record>, Vec<TaskError>), TaskError> {
    let (kind, bytes) = read_file(path)?;
    if kind == FileKind::Json {
        return Ok((parse_records(path, kind, &bytes)?, Vec::new()));
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    let (mut records, mut bad) = (Vec::new(), Vec::new());
    for line in jsonl_lines(path, bytes) {
        match line {
            Ok(record) => records.push(record),
            Err(e) => bad.push(e),
        }
    }
    if records.is_empty() && bad.is_empty() {
        return Err(empty(path, kind));
    }
    Ok((records, bad))
}

/// The kind and bytes of a task file.
fn read_file(path: &Path) -> Result<(FileKind, Vec<u8>), TaskError> {
    let Some(kind) = file_kind(path) else {
        let hint = if path.to_string_lossy().ends_with(".gz") {
            format!("decompress it first (e.g. gunzip); {EXTENSION_HINT}")
        } else {
            EXTENSION_HINT.to_string()
        };
        return Err(TaskError::new(
            ErrorKind::Extension,
            path,
            Location::File,
            "unknown file type: expected a name ending in .json or .jsonl",
            hint,
        ));
    };
    // Regular files only, up to a cap: `/dev/zero` or a FIFO named as a task file is refused.
    let bytes =
        crate::files::read_bytes(path, crate::files::read::caps::DATA).map_err(|e| match e {
            crate::files::ReadError::Io { source, .. } => TaskError::io(path, source),
            other => TaskError::new(
                ErrorKind::Read,
                path,
                Location::File,
                other.to_string(),
                other.hint(),
            ),
        })?;
    Ok((kind, bytes))
}

/// Records of `bytes` read as the file `path` names (its extension says JSON or JSONL; errors
/// name `path`). For data that is not on disk, such as the benchmarks built into the binary.
pub(crate) fn read_records_from(path: &Path, bytes: &[u8]) -> Result<Vec<Record>, TaskError> {
    let Some(kind) = file_kind(path) else {
        return Err(TaskError::new(
            ErrorKind::Extension,
            path,
            Location::File,
            "unknown file type: expected a name ending in .json or .jsonl",
            EXTENSION_HINT,
        ));
    };
    parse_records(path, kind, bytes)
}

fn parse_records(path: &Path, kind: FileKind, bytes: &[u8]) -> Result<Vec<Record>, TaskError> {
    // A UTF-8 byte-order mark is legal at the start of a text file but not in JSON.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let records = match kind {
        FileKind::Json => read_json(path, bytes)?,
        FileKind::Jsonl => read_jsonl(path, bytes)?,
    };
    if records.is_empty() {
        return Err(empty(path, kind));
    }
    Ok(records)
}

fn empty(path: &Path, kind: FileKind) -> TaskError {
    TaskError::new(
        ErrorKind::Empty,
        path,
        Location::File,
        "no tasks in the file",
        match kind {
            FileKind::Json => "write one task object, or a non-empty array of task objects",
            FileKind::Jsonl => "write one task object per line",
        },
    )
}

fn not_utf8(path: &Path, bytes: &[u8], err: std::str::Utf8Error, line_base: usize) -> TaskError {
    let upto = bytes.get(..err.valid_up_to()).unwrap_or(bytes);
    let line = line_base + upto.iter().filter(|&&b| b == b'\n').count();
    let column = upto.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
    TaskError::new(
        ErrorKind::Encoding,
        path,
        Location::Line {
            line,
            column: Some(column),
        },
        "the file is not UTF-8 text (invalid byte)",
        "task files are JSON text in UTF-8; check that this is the right file and not a binary or compressed one",
    )
}

fn syntax_error(path: &Path, err: &serde_json::Error, line: usize, hint: &str) -> TaskError {
    // serde_json's message ends in " at line L column C"; the location is shown separately.
    let text = err.to_string();
    let message = match text.rfind(" at line ") {
        Some(cut) => text.get(..cut).unwrap_or(&text).to_string(),
        None => text,
    };
    TaskError::new(
        ErrorKind::Syntax,
        path,
        Location::Line {
            line,
            column: Some(err.column().max(1)),
        },
        format!("invalid JSON: {message}"),
        hint,
    )
}

fn not_an_object(path: &Path, location: Location, value: &Value) -> TaskError {
    TaskError::from_problem(
        ErrorKind::Record,
        path,
        location,
        FieldProblem::record(
            format!("expected a JSON object (one task), found {}", type_name(value)),
            "each record is an object such as {\"task_id\": \"demo/0\", \"prompt\": \"...\", \"entry_point\": \"f\", \"visible_tests\": [\"assert f(1) == 2\"]}",
        ),
    )
}

fn read_json(path: &Path, bytes: &[u8]) -> Result<Vec<Record>, TaskError> {
    let text = std::str::from_utf8(bytes).map_err(|e| not_utf8(path, bytes, e, 1))?;
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        let hint = if e.to_string().starts_with("trailing characters") {
            "a .json file holds one task object or one array of tasks; for one task per line, name the file .jsonl"
        } else {
            "fix the JSON syntax at this position (a missing comma, quote or bracket is common)"
        };
        syntax_error(path, &e, e.line().max(1), hint)
    })?;
    match value {
        Value::Object(object) => Ok(vec![Record {
            location: Location::File,
            object,
        }]),
        Value::Array(items) => {
            let lines = array_element_lines(text);
            let known_lines = lines.len() == items.len();
            let mut records = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                let location = Location::Record {
                    index: i + 1,
                    line: if known_lines {
                        lines.get(i).copied()
                    } else {
                        None
                    },
                };
                match item {
                    Value::Object(object) => records.push(Record { location, object }),
                    other => return Err(not_an_object(path, location, &other)),
                }
            }
            Ok(records)
        }
        other => Err(TaskError::new(
            ErrorKind::Record,
            path,
            Location::File,
            format!(
                "expected a task object or an array of tasks, found {}",
                type_name(&other)
            ),
            "write {\"task_id\": ..., \"prompt\": ..., ...} or [ {...}, {...} ]",
        )),
    }
}

fn read_jsonl(path: &Path, bytes: &[u8]) -> Result<Vec<Record>, TaskError> {
    jsonl_lines(path, bytes).into_iter().collect()
}

/// Each non-blank line of a `.jsonl` file: its record, or why it is not one.
fn jsonl_lines(path: &Path, bytes: &[u8]) -> Vec<Result<Record, TaskError>> {
    let mut lines = Vec::new();
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = i + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let text = match std::str::from_utf8(raw) {
            Ok(text) => text,
            Err(e) => {
                lines.push(Err(not_utf8(path, raw, e, line)));
                continue;
            }
        };
        if text.trim().is_empty() {
            continue;
        }
        let value: Value = match serde_json::from_str(text) {
            Ok(value) => value,
            Err(e) => {
                let hint = if e.is_eof() {
                    "each line of a .jsonl file must hold one complete JSON object; for a pretty-printed file use .json"
                } else {
                    "fix the JSON syntax at this position (a missing comma, quote or bracket is common)"
                };
                lines.push(Err(syntax_error(path, &e, line, hint)));
                continue;
            }
        };
        let location = Location::Line { line, column: None };
        lines.push(match value {
            Value::Object(object) => Ok(Record { location, object }),
            other => Err(not_an_object(path, location, &other)),
        });
    }
    lines
}

/// The 1-based line on which each element of a top-level JSON array starts.
///
/// serde_json does not report positions of parsed values, so this re-scans the (already valid)
/// text, tracking strings and nesting depth.
fn array_element_lines(text: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    let mut line = 1;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut expect_element = false;
    for b in text.bytes() {
        if b == b'\n' {
            line += 1;
        }
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        if depth == 1 && expect_element && !b.is_ascii_whitespace() && b != b']' {
            lines.push(line);
            expect_element = false;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth == 1 {
                    expect_element = true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => expect_element = true,
            _ => {}
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_lines() {
        let text = "[\n {\"a\": \"x,]\"},\n\n [1, {\"b\": 2}],\n 3\n]";
        assert_eq!(array_element_lines(text), vec![2, 4, 5]);
        assert_eq!(array_element_lines("[]"), Vec::<usize>::new());
    }
}
