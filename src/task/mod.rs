//! Tasks: the unit of work, and loaders for every format ldb reads.
//!
//! A [`Task`] is what the rest of ldb consumes: a prompt, the function the tests call, the visible
//! tests the debugger may see and run, and optionally hidden tests (evaluation only), a seed
//! program, a source program (translation tasks) and stdin/stdout tests. Its JSON form is ldb's
//! `task.json` (DESIGN.md §3).
//!
//! [`load_tasks`] reads a `.json` file (one task object or an array) or a `.jsonl` file (one record
//! per line) and recognises each record's format on its own (see [`RecordFormat`]): ldb's own,
//! HumanEval, original or sanitized MBPP, and LDB's `probs.jsonl`/`tests.jsonl` layout.
//! [`load_ldb_layout`] joins LDB's two files; [`evalplus`] reads EvalPlus releases;
//! [`load_seeds`] reads seed programs.
//! Every failure is a [`TaskError`] naming file, line or record, field, problem and fix.
//!
//! Module map: `records` (file → JSON objects), `fields` (typed field access), one module per
//! format (`task_json`, `humaneval`, `mbpp`, `ldb_layout`, `evalplus`), `doctest` (docstring examples → asserts),
//! `validate` (content rules), `compared_names` (tests that compare with a name nothing defines),
//! `seeds`, `error`.

pub mod compared_names;
mod doctest;
pub mod embedded;
mod error;
pub mod evalplus;
mod fields;
pub mod file_input;
mod humaneval;
mod ldb_layout;
mod mbpp;
mod records;
mod seeds;
mod task_json;
mod validate;

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use doctest::docstring_asserts;
pub use error::{ErrorKind, FieldProblem, Location, TaskError};
pub(crate) use ldb_layout::read_given_tests;
pub use ldb_layout::{load_ldb_layout, LdbLayout};
pub(crate) use mbpp::{attribute_names, called_names, is_builtin_wrapper};
pub use seeds::load_seeds;
pub use validate::is_python_identifier;

/// One programming task. Serializes to exactly the `task.json` form; empty optional fields are
/// left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    pub task_id: String,
    /// Natural-language text, or a signature with a docstring.
    pub prompt: String,
    /// The function the tests call. Empty only for tasks whose only tests are `io_tests`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub entry_point: String,
    /// Tests the debugger may see and run; each is one Python statement block, usually
    /// `assert f(..) == ..`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub visible_tests: Vec<String>,
    /// Evaluation only, never shown to a model: Python source run after the program, which raises
    /// when the program is wrong. Loaders store it runnable: a `def check(candidate): ...` that is
    /// never called gets `check(<entry_point>)` appended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden_tests: Option<String>,
    /// A program to debug; generated when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
    /// For translation tasks: the program to translate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceCode>,
    /// Whole-program tests: feed `stdin`, expect `stdout`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub io_tests: Vec<IoTest>,
    /// Programs others wrote for the same task (a class's other submissions). Those that pass
    /// the visible tests vote on extra inputs beside the search's own candidates; they are never
    /// shown to a model and never returned.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub peers: Vec<String>,
    /// What a candidate replaces: the whole program, or only the entry function inside the
    /// seed (a user's module). Set by the loader of a program file; not part of `task.json`.
    #[serde(skip)]
    pub scope: ProgramScope,
    /// The task's tests as pytest nodes of a project (`ldb fix src/m.py --tests tests/`): run
    /// by pytest instead of `visible_tests`, which then hold their sources for prompts. Set by
    /// the loader of a project; not part of `task.json`.
    #[serde(skip)]
    pub pytest_nodes: Vec<PytestNode>,
    /// No text says what the function should do (a project's function without a docstring,
    /// and no `--task`): only its tests do. Nothing can be written afresh from the task then.
    /// Set by the loader of a program file; not part of `task.json`.
    #[serde(skip)]
    pub untold: bool,
    /// A function of a package's module or a method (a real project's code): the search
    /// repairs it where it is, not writing it afresh, within the project defaults (120 s,
    /// 3,000 tokens), docstring or not. Set by the loader of a project; not part of `task.json`.
    #[serde(skip)]
    pub in_project: bool,
}

impl Task {
    /// Whether the search only repairs the given program: its tests are its spec
    /// ([`Self::untold`]) or it is a project's function ([`Self::in_project`]).
    pub fn repairs_only(&self) -> bool {
        self.untold || self.in_project
    }
}

/// A test of a task that pytest runs: its node id, and its source as a prompt shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PytestNode {
    pub node_id: String,
    pub source: String,
    /// A regression test: it passed on the given program and runs the function under test;
    /// it must keep passing, and no prompt shows it ([`crate::run::TestInput::is_guard`]).
    pub guard: bool,
}

/// What a candidate program replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProgramScope {
    /// The candidate is the whole program (task files, benchmarks, snippets).
    #[default]
    Whole,
    /// The seed is the user's module and the unit of repair is its entry function: a
    /// candidate's definition of the entry, with the helpers and imports it adds, is spliced
    /// into the seed ([`crate::python::splice`]); the rest of the module stays byte for byte.
    Function,
}

/// The program a translation task starts from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceCode {
    /// e.g. `"cpp"`.
    pub language: String,
    pub code: String,
}

/// A stdin/stdout test for a whole program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IoTest {
    #[serde(default)]
    pub stdin: String,
    pub stdout: String,
}

/// The record formats [`load_tasks`] recognises, decided per record from its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordFormat {
    /// ldb's own (`visible_tests`, `io_tests` or `hidden_tests` present). Also the fallback, so an
    /// unrecognised record is reported against ldb's fields (e.g. "unknown field `visible_test`").
    Native,
    /// HumanEval (`prompt`, `entry_point`, `test`; no `given_tests`), including LDB's HumanEval
    /// `probs.jsonl` and EvalPlus records.
    HumanEval,
    /// Original MBPP (`text`, `test_list`).
    MbppOriginal,
    /// Sanitized MBPP (`prompt`, `test_list`).
    MbppSanitized,
    /// LDB's layout with visible tests in `given_tests`.
    LdbLayout,
}

impl RecordFormat {
    /// Recognises the format of one record.
    pub fn detect(record: &Map<String, Value>) -> RecordFormat {
        let has = |field: &str| record.contains_key(field);
        if has("visible_tests") || has("io_tests") || has("hidden_tests") {
            RecordFormat::Native
        } else if has("test_list") && has("text") {
            RecordFormat::MbppOriginal
        } else if has("test_list") && has("prompt") {
            RecordFormat::MbppSanitized
        } else if has("given_tests") {
            RecordFormat::LdbLayout
        } else if has("test") && has("entry_point") && has("prompt") {
            RecordFormat::HumanEval
        } else {
            RecordFormat::Native
        }
    }
}

impl Task {
    /// Reads one record of any recognised format and validates it. On failure, returns the first
    /// problem found.
    pub fn from_record(record: &Value) -> Result<Task, FieldProblem> {
        let Value::Object(object) = record else {
            return Err(FieldProblem::record(
                format!(
                    "expected a JSON object (one task), found {}",
                    fields::type_name(record)
                ),
                "a task is an object such as {\"task_id\": \"demo/0\", \"prompt\": \"...\", \"entry_point\": \"f\", \"visible_tests\": [\"assert f(1) == 2\"]}",
            ));
        };
        let task = convert(object)?;
        match task.validate() {
            Ok(()) => Ok(task),
            Err(problems) => Err(problems.into_iter().next().unwrap_or_else(|| {
                FieldProblem::record("invalid task", "check the task's fields")
            })),
        }
    }

    /// Checks the content rules: a non-empty `task_id`; an `entry_point` that is a Python
    /// identifier (empty only when the task has nothing but `io_tests`); at least one visible, io
    /// or hidden test; no empty visible test, and none that does not parse as Python. Returns
    /// every problem found.
    pub fn validate(&self) -> Result<(), Vec<FieldProblem>> {
        validate::validate(self, true)
    }

    /// The fields a model may be shown (never the hidden tests), each as its name (a path such
    /// as `visible_tests[2]`) and its length in bytes.
    pub fn shown_fields(&self) -> Vec<(String, usize)> {
        let mut fields = vec![("prompt".to_string(), self.prompt.len())];
        if let Some(seed) = &self.seed {
            // One function of a user's module: prompts show it with its context, not the file.
            let shown = match self.scope {
                ProgramScope::Function => {
                    crate::python::view::function_view(seed, &self.entry_point)
                        .map_or(seed.len(), |v| v.len())
                }
                ProgramScope::Whole => seed.len(),
            };
            fields.push(("seed".into(), shown));
        }
        if let Some(source) = &self.source {
            fields.push(("source.code".into(), source.code.len()));
        }
        for (i, test) in self.visible_tests.iter().enumerate() {
            fields.push((format!("visible_tests[{i}]"), test.len()));
        }
        for (i, test) in self.io_tests.iter().enumerate() {
            fields.push((format!("io_tests[{i}].stdin"), test.stdin.len()));
            fields.push((format!("io_tests[{i}].stdout"), test.stdout.len()));
        }
        fields
    }

    /// True for a whole-program task: only stdin/stdout tests, no function to call.
    pub fn is_script(&self) -> bool {
        self.visible_tests.is_empty()
            && self
                .hidden_tests
                .as_deref()
                .is_none_or(|t| t.trim().is_empty())
            && !self.io_tests.is_empty()
    }
}

fn convert(record: &Map<String, Value>) -> Result<Task, FieldProblem> {
    match RecordFormat::detect(record) {
        RecordFormat::Native => task_json::convert(record),
        RecordFormat::HumanEval => humaneval::convert(record),
        RecordFormat::MbppOriginal => mbpp::convert_original(record),
        RecordFormat::MbppSanitized => mbpp::convert_sanitized(record),
        RecordFormat::LdbLayout => ldb_layout::convert(record),
    }
}

/// Loads every task in a `.json` file (one task object, or an array of them) or a `.jsonl` file
/// (one record per line, blank lines skipped). Records may be in any [`RecordFormat`], mixed.
/// Fails on the first problem: unreadable or empty file, bad JSON, a bad record, a task that breaks
/// a rule of [`Task::validate`], or a `task_id` used twice.
pub fn load_tasks(path: &Path) -> Result<Vec<Task>, TaskError> {
    Ok(load_located(path)?
        .into_iter()
        .map(|(_, task)| task)
        .collect())
}

/// [`load_tasks`], keeping where each task was found for later error messages.
pub(crate) fn load_located(path: &Path) -> Result<Vec<(Location, Task)>, TaskError> {
    located(path, records::read_records(path)?, true)
}

/// [`load_located`] without the rule that visible tests parse: for a benchmark whose broken
/// visible tests are dropped afterwards ([`validate::drop_unparsable`]), or replaced.
pub(crate) fn load_located_unparsed(path: &Path) -> Result<Vec<(Location, Task)>, TaskError> {
    located(path, records::read_records(path)?, false)
}

/// [`load_tasks`] on data held in memory: `name` stands for the file (its extension gives the
/// format; errors name it).
pub fn load_tasks_from(name: &Path, bytes: &[u8]) -> Result<Vec<Task>, TaskError> {
    let records = records::read_records_from(name, bytes)?;
    Ok(located(name, records, true)?
        .into_iter()
        .map(|(_, task)| task)
        .collect())
}

fn located(
    path: &Path,
    records: Vec<records::Record>,
    parse: bool,
) -> Result<Vec<(Location, Task)>, TaskError> {
    let mut tasks = Vec::new();
    let mut seen: HashMap<String, Location> = HashMap::new();
    for record in records {
        tasks.push(locate(path, record, &mut seen, parse)?);
    }
    Ok(tasks)
}

/// The task of one record, checked against the rules and against the ids `seen` before it.
fn locate(
    path: &Path,
    record: records::Record,
    seen: &mut HashMap<String, Location>,
    parse: bool,
) -> Result<(Location, Task), TaskError> {
    let task = convert(&record.object).map_err(|problem| {
        TaskError::from_problem(ErrorKind::Record, path, record.location, problem)
    })?;
    if let Err(problems) = validate::validate(&task, parse) {
        if let Some(problem) = problems.into_iter().next() {
            return Err(TaskError::from_problem(
                ErrorKind::Invalid,
                path,
                record.location,
                problem,
            ));
        }
    }
    if let Some(first) = seen.get(&task.task_id) {
        return Err(duplicate_error(
            path,
            record.location,
            &task.task_id,
            *first,
        ));
    }
    seen.insert(task.task_id.clone(), record.location);
    Ok((record.location, task))
}

/// The tasks of a file, and the records set aside as bad (see [`load_tasks_lenient`]).
#[derive(Debug)]
pub struct LoadedTasks {
    pub tasks: Vec<Task>,
    /// One error per bad line, in file order.
    pub skipped: Vec<TaskError>,
}

/// [`load_tasks`], except that in a `.jsonl` file a bad line (not JSON, not a task, a task that
/// breaks a rule, an id used before) is set aside with its error and every other task loads.
/// Problems with the file as a whole still fail, and a `.json` file is read as [`load_tasks`]
/// reads it. `tasks` may come back empty when every line is bad.
pub fn load_tasks_lenient(path: &Path) -> Result<LoadedTasks, TaskError> {
    let (records, mut skipped) = records::read_records_lenient(path)?;
    let mut tasks = Vec::new();
    let mut seen: HashMap<String, Location> = HashMap::new();
    for record in records {
        match locate(path, record, &mut seen, true) {
            Ok((_, task)) => tasks.push(task),
            Err(e) => skipped.push(e),
        }
    }
    skipped.sort_by_key(|e| e.location().line());
    Ok(LoadedTasks { tasks, skipped })
}

pub(crate) fn duplicate_error(
    path: &Path,
    location: Location,
    task_id: &str,
    first: Location,
) -> TaskError {
    let first = match first {
        Location::File => "earlier".to_string(),
        Location::Line { line, .. } => format!("on line {line}"),
        Location::Record {
            index,
            line: Some(line),
        } => format!("in record {index} (line {line})"),
        Location::Record { index, line: None } => format!("in record {index}"),
    };
    TaskError::from_problem(
        ErrorKind::Duplicate,
        path,
        location,
        FieldProblem::new(
            "task_id",
            format!("duplicate task id `{task_id}`, first used {first}"),
            "every task id in a file must be unique; rename or remove one of the two",
        ),
    )
}
