//! A user's program and tests made into a task: `ldb fix prog.py --tests ...`, `ldb test`,
//! `ldb locate --tests NODE`.
//!
//! The flags say what the tests are ([`ProgramTests`]); [`file`] chooses the path that runs
//! them and names it on stderr: a plain test file read without pytest, or pytest in the
//! project ([`pytest`]: the project, its environment, collection in the sandbox, the passing
//! tests that guard a fix). With no program named, [`project`] runs the failing tests traced
//! and ranks the project's functions. Reading the files is [`crate::task::file_input`]'s work;
//! collecting and running tests is the sandbox's ([`crate::run`]), never this process's. Errors
//! are [`LoadError`]s: what went wrong, and a hint for the fix.

pub mod file;
pub mod project;
pub mod pytest;

use std::path::{Path, PathBuf};

use crate::task::file_input::project::ShellEnv;

pub use file::{load, load_text};
pub use pytest::KeepPassing;

/// The tests of a `.py` program given in place of a task file (`--test`, `--tests`,
/// `--io-test`, ...).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProgramTests {
    /// `--test STMT`, in order.
    pub test: Vec<String>,
    /// `--tests PATH` (repeatable): test files, directories or pytest node ids.
    pub tests: Vec<PathBuf>,
    /// `--io-test INPUT EXPECTED`, in order.
    pub io_tests: Vec<(String, String)>,
    pub entry: Option<String>,
    /// `-k EXPR`.
    pub keyword: Option<String>,
    pub venv: Option<PathBuf>,
    pub pytest: bool,
    pub no_pytest: bool,
    /// `--task TEXT`.
    pub task_text: Option<String>,
    /// `--keep-passing` (`ldb fix` only; other commands run the tests given).
    pub keep_passing: KeepPassing,
    /// What the shell says about the project's surroundings, read once by the settings.
    pub shell: ShellEnv,
}

/// Why a program and its tests could not be made into a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    pub message: String,
    pub hint: Option<String>,
    pub kind: LoadErrorKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadErrorKind {
    /// The files or flags the user gave: the hint says what to change.
    BadInput,
    /// The sandbox could not run the tests' collection or a test.
    Sandbox,
}

impl LoadError {
    pub fn bad_input(message: impl Into<String>, hint: impl Into<String>) -> Self {
        LoadError {
            message: message.into(),
            hint: Some(hint.into()),
            kind: LoadErrorKind::BadInput,
        }
    }

    pub fn sandbox(message: impl Into<String>) -> Self {
        LoadError {
            message: message.into(),
            hint: None,
            kind: LoadErrorKind::Sandbox,
        }
    }
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\nhint: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for LoadError {}

impl From<crate::run::sandbox::SandboxError> for LoadError {
    fn from(e: crate::run::sandbox::SandboxError) -> Self {
        LoadError::sandbox(e.to_string())
    }
}

impl From<crate::files::ReadError> for LoadError {
    fn from(e: crate::files::ReadError) -> Self {
        LoadError::bad_input(e.to_string(), e.hint())
    }
}

/// Read a program or test file the user named (regular files only, up to
/// [`crate::files::read::caps::SOURCE`], a byte-order mark dropped), with an error that names it.
pub fn read_source(path: &Path) -> Result<String, LoadError> {
    Ok(crate::files::read_text(path, crate::files::read::caps::SOURCE)?.text)
}

/// The file of a program target (`module.py::function` → `module.py`).
pub fn program_file(path: &Path) -> PathBuf {
    crate::task::file_input::project::split_target(path).0
}

/// `module.py::function` and `--entry` must name the same function when both are given.
fn one_entry(program: &Path, function: Option<&str>, entry: Option<&str>) -> Result<(), LoadError> {
    match (function, entry) {
        (Some(given), Some(entry)) if given != entry => Err(LoadError::bad_input(
            format!(
                "{}::{given} and --entry {entry} name different functions",
                program.display()
            ),
            "name the function under test once",
        )),
        _ => Ok(()),
    }
}
