//! `ldb fix prog.py ...` and `ldb test prog.py ...`: the flags that turn a plain Python file and
//! its tests into a task, and writing the fixed file back (`--write`).
//!
//! The work of reading the files is library code ([`crate::task::file_input`]); this module
//! reads the files the user named, turns that module's errors into `error:`/`hint:` lines, and
//! asks the sandbox (never this process) whether the test file's imports resolve.

use std::path::{Path, PathBuf};

use clap::{ArgAction, Args};

use super::output::{self, CliError};
use crate::runner::{Runner, TestInput};
use crate::task::file_input::{self, FileInput, FileInputError};
use crate::task::{IoTest, Task};

/// Flags for a `.py` program given in place of a task file.
#[derive(Debug, Clone, Default, Args)]
pub struct FileTaskArgs {
    /// A test statement for a .py program, e.g. 'assert f(1) == 2' (repeatable); with
    /// --make-runnable, a statement run after the snippet, e.g. 'assert total == 6'.
    #[arg(long = "test", value_name = "STMT")]
    pub test: Vec<String>,
    /// A pytest-style test file for a .py program: top-level asserts and test_* functions that
    /// import the program as `from prog import f` or `import prog` (pytest is not needed).
    #[arg(long = "tests", value_name = "TEST_FILE.py")]
    pub tests: Option<PathBuf>,
    /// A stdin/stdout test for a .py program that reads its input: the input and the expected
    /// output (repeatable).
    #[arg(long = "io-test", num_args = 2, value_names = ["INPUT", "EXPECTED"], action = ArgAction::Append)]
    pub io_test: Vec<String>,
    /// The function under test, when the tests call several of the program's functions.
    #[arg(long, value_name = "NAME")]
    pub entry: Option<String>,
    /// What the program should do (default: the entry function's docstring, else the module's).
    #[arg(long = "task", value_name = "TEXT")]
    pub task_text: Option<String>,
}

impl FileTaskArgs {
    /// The first flag given other than `--test` and `--task` (those two also describe a
    /// snippet debugged with `--make-runnable`).
    pub(crate) fn given_beyond_test_and_task(&self) -> Option<&'static str> {
        if self.tests.is_some() {
            Some("--tests")
        } else if !self.io_test.is_empty() {
            Some("--io-test")
        } else {
            self.entry.is_some().then_some("--entry")
        }
    }

    pub(crate) fn given(&self) -> Option<&'static str> {
        if !self.test.is_empty() {
            Some("--test")
        } else if self.tests.is_some() {
            Some("--tests")
        } else if !self.io_test.is_empty() {
            Some("--io-test")
        } else if self.entry.is_some() {
            Some("--entry")
        } else if self.task_text.is_some() {
            Some("--task")
        } else {
            None
        }
    }
}

/// Whether `path` names a Python program (rather than a task file).
pub fn is_program(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "py")
}

/// Refuses the file-task flags on a task file, where they would be silently ignored.
pub fn reject_flags_for_task_file(path: &Path, args: &FileTaskArgs) -> Result<(), CliError> {
    match args.given() {
        Some(flag) if !is_program(path) => Err(CliError::bad_input(
            format!(
                "{flag} applies to a Python program (prog.py), but {} is a task file",
                path.display()
            ),
            "give the program instead: ldb fix prog.py --tests test_prog.py; a task file \
             carries its own tests",
        )),
        _ => Ok(()),
    }
}

/// The task made from `program` and the flags, and `runner` set up so the test file's
/// `import prog` finds the program under test.
pub fn load(
    program: &Path,
    args: &FileTaskArgs,
    runner: Runner,
    quiet: bool,
) -> Result<(Task, Runner), CliError> {
    let text = output::read_source(program)?;
    load_text(program, text, args, runner, quiet)
}

/// [`load`] with the program's text already read (`--write` reads it under its lock).
pub fn load_text(
    program: &Path,
    text: String,
    args: &FileTaskArgs,
    runner: Runner,
    quiet: bool,
) -> Result<(Task, Runner), CliError> {
    let test_file = match &args.tests {
        Some(path) => Some((path.clone(), output::read_source(path)?)),
        None => None,
    };
    let io_tests = args
        .io_test
        .chunks(2)
        .map(|pair| IoTest {
            stdin: with_newline(pair.first().map(String::as_str).unwrap_or_default()),
            stdout: pair.get(1).cloned().unwrap_or_default(),
        })
        .collect();
    let input = FileInput {
        program_path: program.to_path_buf(),
        program: text,
        tests: args.test.clone(),
        test_file,
        io_tests,
        entry: args.entry.clone(),
        task_text: args.task_text.clone(),
    };
    let built = file_input::build(&input).map_err(file_error)?;
    // The program's module name resolves to the program under test.
    let runner = match &built.module {
        Some(name) => runner.with_module(name.clone()),
        None => runner,
    };
    let missing = missing_modules(&runner, &built.imports)?;
    if let (Some(first), Some((test_path, _))) = (missing.first(), &input.test_file) {
        let module_hint = match &built.module {
            Some(m) => format!(
                "if `{first}` means the program under test, import it by the program's file \
                 name: `from {m} import ...` or `import {m}`; otherwise install it for the \
                 Python ldb runs (python3 -m pip install {first})"
            ),
            None => format!("install it for the Python ldb runs (python3 -m pip install {first})"),
        };
        return Err(CliError::bad_input(
            format!(
                "{}: imports `{first}`, which is neither the program under test ({}) nor a \
                 module the sandbox's Python can import{}",
                test_path.display(),
                program.display(),
                if missing.len() > 1 {
                    format!(" (also missing: {})", missing[1..].join(", "))
                } else {
                    String::new()
                }
            ),
            module_hint,
        ));
    }
    if !quiet {
        for note in &built.notes {
            eprintln!("note: {note}");
        }
    }
    Ok((built.task, runner))
}

fn with_newline(input: &str) -> String {
    if input.is_empty() || input.ends_with('\n') {
        input.to_string()
    } else {
        format!("{input}\n")
    }
}

fn file_error(e: FileInputError) -> CliError {
    CliError::bad_input(e.to_string(), e.hint)
}

/// Which of `modules` the sandbox's Python cannot import (checked in the sandbox, never here).
pub fn missing_modules(
    runner: &Runner,
    modules: &[String],
) -> Result<Vec<String>, crate::sandbox::SandboxError> {
    if modules.is_empty() {
        return Ok(Vec::new());
    }
    let list = modules
        .iter()
        .map(|m| format!("{m:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    let probe = format!(
        "import importlib.util\n\
         _missing = [m for m in [{list}] if importlib.util.find_spec(m) is None]\n"
    );
    let outcome = runner.run(
        &probe,
        &TestInput::Call {
            expr: "' '.join(_missing)".into(),
        },
        None,
    )?;
    let rendered = outcome.actual.unwrap_or_default();
    let words = rendered.trim_matches(|c| c == '\'' || c == '"');
    Ok(words
        .split_whitespace()
        .filter(|w| modules.iter().any(|m| m == w))
        .map(str::to_string)
        .collect())
}
