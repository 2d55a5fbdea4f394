//! Errors from loading tasks and seeds.
//!
//! Every error names the file, the place in it (line, line and column, or record number), the field
//! when there is one, what is wrong, and a hint for the fix. `Display` renders all of that in the
//! form the CLI prints as is:
//!
//! ```text
//! tasks.jsonl:3: field `visible_tests`: expected a list of strings, found a number
//! hint: write each test as a Python statement string, e.g. "assert f(1) == 2"
//! ```

use std::fmt;
use std::path::{Path, PathBuf};

/// Where in a file a problem sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// The file as a whole: a missing or empty file, or the one task of a single-object `.json`.
    File,
    /// A 1-based line, with a 1-based column when known (JSONL records, JSON syntax errors).
    Line { line: usize, column: Option<usize> },
    /// A 1-based record number in a JSON array, with the line where the record starts when known.
    Record { index: usize, line: Option<usize> },
}

impl Location {
    /// The 1-based line this location points at, if it has one.
    pub fn line(&self) -> Option<usize> {
        match *self {
            Location::File => None,
            Location::Line { line, .. } => Some(line),
            Location::Record { line, .. } => line,
        }
    }
}

/// Renders the part that follows the file name: `:3`, `:3:17`, `:14: record 2`, `: record 2`.
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Location::File => Ok(()),
            Location::Line { line, column: None } => write!(f, ":{line}"),
            Location::Line {
                line,
                column: Some(column),
            } => write!(f, ":{line}:{column}"),
            Location::Record {
                index,
                line: Some(line),
            } => write!(f, ":{line}: record {index}"),
            Location::Record { index, line: None } => write!(f, ": record {index}"),
        }
    }
}

/// What kind of failure a [`TaskError`] reports, for callers that react differently to each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file could not be read (missing, a directory, no permission).
    Read,
    /// The file name does not end in `.json` or `.jsonl`.
    Extension,
    /// The file holds no records.
    Empty,
    /// The file is not UTF-8 text.
    Encoding,
    /// The file is not valid JSON.
    Syntax,
    /// A record has the wrong shape: a missing, unknown or wrongly typed field.
    Record,
    /// A record is well formed but its content breaks a rule (e.g. an invalid entry point).
    Invalid,
    /// Two records share a `task_id`.
    Duplicate,
    /// Joining two files by `task_id` failed (a task has no record in the other file).
    Join,
}

/// A problem with one field of one record, without the file and location (see [`TaskError`]).
///
/// `field` is `None` when the problem concerns the record as a whole (e.g. it is not an object).
/// Nested fields are written as paths: `visible_tests[2]`, `io_tests[0].stdout`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldProblem {
    pub field: Option<String>,
    pub problem: String,
    pub hint: String,
}

impl FieldProblem {
    pub(crate) fn new(
        field: impl Into<String>,
        problem: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        FieldProblem {
            field: Some(field.into()),
            problem: problem.into(),
            hint: hint.into(),
        }
    }

    pub(crate) fn record(problem: impl Into<String>, hint: impl Into<String>) -> Self {
        FieldProblem {
            field: None,
            problem: problem.into(),
            hint: hint.into(),
        }
    }
}

impl fmt::Display for FieldProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(field) = &self.field {
            write!(f, "field `{field}`: ")?;
        }
        write!(f, "{}", self.problem)?;
        if !self.hint.is_empty() {
            write!(f, "\nhint: {}", self.hint)?;
        }
        Ok(())
    }
}

/// An error from loading tasks or seeds. See the module documentation for the rendered form.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct TaskError(Box<Details>);

/// Boxed so that `Result<_, TaskError>` stays one pointer wide on the success path.
#[derive(Debug, thiserror::Error)]
struct Details {
    kind: ErrorKind,
    path: PathBuf,
    location: Location,
    field: Option<String>,
    message: String,
    hint: String,
    #[source]
    source: Option<std::io::Error>,
}

impl TaskError {
    pub(crate) fn new(
        kind: ErrorKind,
        path: &Path,
        location: Location,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        TaskError(Box::new(Details {
            kind,
            path: path.to_path_buf(),
            location,
            field: None,
            message: message.into(),
            hint: hint.into(),
            source: None,
        }))
    }

    pub(crate) fn io(path: &Path, err: std::io::Error) -> Self {
        let hint = match err.kind() {
            std::io::ErrorKind::NotFound => {
                "check the path; a relative path is taken from the current directory"
            }
            std::io::ErrorKind::PermissionDenied => "check the file's permissions",
            _ if path.is_dir() => "pass a .json or .jsonl file, not a directory",
            _ => "check that the path names a readable file",
        };
        let mut e = TaskError::new(
            ErrorKind::Read,
            path,
            Location::File,
            format!("cannot read the file: {err}"),
            hint,
        );
        e.0.source = Some(err);
        e
    }

    /// Wraps a problem found in one record.
    pub(crate) fn from_problem(
        kind: ErrorKind,
        path: &Path,
        location: Location,
        problem: FieldProblem,
    ) -> Self {
        let mut e = TaskError::new(kind, path, location, problem.problem, problem.hint);
        e.0.field = problem.field;
        e
    }

    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The file the error is about, as the caller named it.
    pub fn path(&self) -> &Path {
        &self.0.path
    }

    pub fn location(&self) -> Location {
        self.0.location
    }

    /// The field at fault, as a path such as `visible_tests[2]`, when there is one.
    pub fn field(&self) -> Option<&str> {
        self.0.field.as_deref()
    }

    /// What is wrong, without file, location, field or hint.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// How to fix it.
    pub fn hint(&self) -> &str {
        &self.0.hint
    }
}

impl fmt::Display for Details {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}: ", self.path.display(), self.location)?;
        if let Some(field) = &self.field {
            write!(f, "field `{field}`: ")?;
        }
        write!(f, "{}", self.message)?;
        if !self.hint.is_empty() {
            write!(f, "\nhint: {}", self.hint)?;
        }
        Ok(())
    }
}
