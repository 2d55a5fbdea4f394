//! `ldb fix prog.py ...` and `ldb test prog.py ...`: the flags that turn a plain Python file and
//! its tests into a task.
//!
//! The work of reading the files is [`crate::task::file_input`]'s; this module reads the files
//! the user named, turns that module's errors into [`LoadError`]s (a message and a hint), and
//! asks the sandbox (never this process) whether the test file's imports resolve.
//!
//! Two paths run tests, chosen here and named on stderr: pytest, in the project
//! ([`super::pytest`]), for a test directory, a node id, `-k`, a suite with a `conftest.py` or
//! pytest settings, and a test file that uses what only pytest runs (fixtures, parametrize,
//! classes with set-up, relative imports); else a plain test file read without pytest.

use std::path::Path;

use super::pytest::{self, Reason};
use super::ProgramTests;
use super::{read_source, LoadError};
use crate::run::{Runner, TestInput};
use crate::task::file_input::{self, project, FileInput, FileInputError};
use crate::task::{IoTest, Task};

pub use super::program_file;

/// The task made from `program` and the flags, and `runner` set up so the test file's
/// `import prog` finds the program under test.
pub fn load(
    program: &Path,
    args: &ProgramTests,
    runner: Runner,
    quiet: bool,
) -> Result<(Task, Runner), LoadError> {
    let text = read_source(&program_file(program))?;
    load_text(program, text, args, runner, quiet)
}

/// [`load`] with the program's text already read (`--write` reads it under its lock).
/// `target` is the program file, or `file.py::function`.
pub fn load_text(
    target: &Path,
    text: String,
    args: &ProgramTests,
    runner: Runner,
    quiet: bool,
) -> Result<(Task, Runner), LoadError> {
    let (program, function) = project::split_target(target);
    let python_path_given = !runner.sandbox().python_path().is_empty();
    let pytest = |reason: Reason, text: String, runner: Runner| {
        pytest::load(
            pytest::Target {
                program: &program,
                function: function.clone(),
                text,
                python_path_given,
                quiet,
            },
            pytest::TestsArgs {
                tests: &args.tests,
                keep_passing: args.keep_passing,
                keyword: args.keyword.as_deref(),
                venv: args.venv.as_deref(),
                entry: args.entry.as_deref(),
                task_text: args.task_text.as_deref(),
                shell: &args.shell,
            },
            runner,
            &reason,
        )
    };
    refuse_foreign_tests(&program, &text, args)?;
    if let Some(reason) = pytest_wanted(&program, args)? {
        return pytest(reason, text, runner);
    }
    match load_plain(
        &program,
        function.clone(),
        text.clone(),
        args,
        runner.clone(),
        quiet,
    ) {
        Ok(loaded) => Ok(loaded),
        Err(Plain::NeedsPytest(reason, plain_error)) if !args.no_pytest => {
            pytest(reason, text, runner).map_err(|e| {
                // No pytest to run it: the plain path's own refusal says what to change.
                if e.message.contains("these tests need pytest") {
                    LoadError {
                        message: format!("{}; {}", plain_error.message, e.message),
                        ..e
                    }
                } else {
                    e
                }
            })
        }
        Err(Plain::NeedsPytest(_, e)) | Err(Plain::Error(e)) => Err(e),
    }
}

/// Tests that import another module beside the program instead of the program (`from prog
/// import add` given `broken.py`) would report that module's results as the program's:
/// refused, naming the module.
fn refuse_foreign_tests(program: &Path, text: &str, args: &ProgramTests) -> Result<(), LoadError> {
    let mut modules: Vec<String> = file_input::module_name(program).into_iter().collect();
    // Every package the program is in, the top-level one too (`from pkg.sub.mod import f`).
    if let Ok(file) = std::fs::canonicalize(program) {
        let packages = file.ancestors().skip(1);
        modules.extend(
            packages
                .take_while(|d| d.join("__init__.py").is_file())
                .filter_map(|d| d.file_name().map(|n| n.to_string_lossy().into_owned())),
        );
    }
    let here = |p: &Path| match p.parent() {
        Some(d) => d.to_path_buf(),
        None => std::path::PathBuf::new(),
    };
    for tests in &args.tests {
        let (path, _) = project::split_node(tests);
        if !path.is_file() || has_conftest(&path) {
            // A conftest's fixtures may hand the tests the program: nothing to tell statically.
            continue;
        }
        let Ok(source) = std::fs::read_to_string(&path) else {
            continue;
        };
        let dirs = [here(program), here(&path)];
        if let Some(f) = file_input::reach::foreign_module(program, text, &modules, &source, &dirs)
        {
            return Err(LoadError::bad_input(
                format!(
                    "{}: the tests import `{}` ({}), not the program under test ({}): their \
                     results would be that module's",
                    path.display(),
                    f.module,
                    f.file.display(),
                    program.display()
                ),
                format!(
                    "give ldb the module the tests import ({} in place of {}), or import the \
                     program in the tests{}",
                    f.file.display(),
                    program.display(),
                    modules
                        .first()
                        .map(|m| format!(" (`from {m} import ...`)"))
                        .unwrap_or_default()
                ),
            ));
        }
    }
    Ok(())
}

/// A `conftest.py` beside the test file or in a directory above it (up to the file system's
/// root or a `.git`).
fn has_conftest(tests: &Path) -> bool {
    let Ok(file) = std::fs::canonicalize(tests) else {
        return false;
    };
    for d in file.ancestors().skip(1) {
        if d.join("conftest.py").is_file() {
            return true;
        }
        if d.join(".git").exists() {
            return false;
        }
    }
    false
}

/// Why the tests must go to pytest before the file is read: `--pytest`, a directory, a node
/// id, `-k`, a `conftest.py` or pytest settings in the project.
fn pytest_wanted(program: &Path, args: &ProgramTests) -> Result<Option<Reason>, LoadError> {
    // `--pytest` and `-k` require `--tests` (declared on the flags).
    let Some(tests) = args.tests.first() else {
        return Ok(None);
    };
    let (path, node) = project::split_node(tests);
    let obvious = if args.pytest {
        Some("--pytest")
    } else if args.tests.len() > 1 {
        Some("several --tests")
    } else if path.is_dir() {
        Some("a test directory")
    } else if node.is_some() {
        Some("a node id")
    } else if args.keyword.is_some() {
        Some("-k")
    } else {
        None
    };
    if args.no_pytest {
        return match obvious {
            Some(what) => Err(LoadError::bad_input(
                format!(
                    "--no-pytest: {} is {what}, which only pytest runs",
                    tests.display()
                ),
                "give one test file without --no-pytest's limits, or leave out --no-pytest",
            )),
            None => Ok(None),
        };
    }
    if let Some(what) = obvious {
        return Ok(Some(Reason(what.to_string())));
    }
    // A module of a package is imported by its package path (`from pkg.mod import f`), as the
    // project imports it: only pytest, run in the project, shows the tests that module.
    if let Some(package) = super::pytest::package_of(program) {
        return Ok(Some(Reason(format!(
            "the program is a module of the package `{package}`"
        ))));
    }
    let Ok(cwd) = std::env::current_dir() else {
        return Ok(None);
    };
    let home = args.shell.home.as_deref();
    let program_abs = project::absolute(program, &cwd);
    let tests_abs = project::absolute(&path, &cwd);
    Ok(project::find_root(&program_abs, &tests_abs, &cwd, home)
        .ok()
        .filter(|root| project::uses_pytest_config(root, &tests_abs))
        .map(|_| Reason("the project has a conftest.py or pytest settings".into())))
}

/// How the plain path failed.
enum Plain {
    /// The file uses what only pytest runs; the reason, and the plain path's own error.
    NeedsPytest(Reason, LoadError),
    Error(LoadError),
}

impl From<LoadError> for Plain {
    fn from(e: LoadError) -> Self {
        Plain::Error(e)
    }
}

/// The plain path: the test file read without pytest.
fn load_plain(
    program: &Path,
    function: Option<String>,
    text: String,
    args: &ProgramTests,
    runner: Runner,
    quiet: bool,
) -> Result<(Task, Runner), Plain> {
    let test_file = match args.tests.first() {
        Some(path) => Some((path.clone(), read_source(path)?)),
        None => None,
    };
    let io_tests = args
        .io_tests
        .iter()
        .map(|(stdin, stdout)| IoTest {
            stdin: with_newline(stdin),
            stdout: stdout.clone(),
        })
        .collect();
    super::one_entry(program, function.as_deref(), args.entry.as_deref())?;
    let mut input = FileInput {
        program_path: program.to_path_buf(),
        program: text,
        tests: args.test.clone(),
        test_file,
        io_tests,
        entry: function.or_else(|| args.entry.clone()),
        task_text: args.task_text.clone(),
    };
    let mut built = file_input::build(&input);
    // The test file's imports checked already, with the module name they were checked under.
    let mut checked = None;
    if let Err(e) = &built {
        if let Some(several) = &e.several {
            let runner = match file_input::module_name(program) {
                Some(name) => runner.clone().with_module(name),
                None => runner.clone(),
            };
            // A test file importing what does not exist fails every test: that error first.
            let missing = missing_modules(&runner, &several.imports).map_err(LoadError::from)?;
            if let Some(e) =
                missing_module_error(program, &input, file_input::module_name(program), &missing)
            {
                return Err(e);
            }
            checked = Some((file_input::module_name(program), several.imports.clone()));
            let tests: Vec<TestInput> = several
                .tests
                .iter()
                .map(|t| TestInput::Code { source: t.clone() })
                .collect();
            let entry =
                pytest::entry_under_test(e, several, &runner, &input.program, &tests, quiet)
                    .map_err(Plain::Error)?;
            input.entry = Some(entry);
            built = file_input::build(&input);
        }
    }
    let built = match built {
        Ok(built) => built,
        Err(e) if e.needs_pytest => {
            let reason = Reason(format!("{} uses what only pytest runs", e.file.display()));
            return Err(Plain::NeedsPytest(reason, file_error(e)));
        }
        Err(e) => return Err(Plain::Error(file_error(e))),
    };
    // The program's module name resolves to the program under test.
    let runner = match &built.module {
        Some(name) => runner.with_module(name.clone()),
        None => runner,
    };
    // One sandbox run per set of imports: when choosing the function checked them, it is done.
    if checked != Some((built.module.clone(), built.imports.clone())) {
        let missing = missing_modules(&runner, &built.imports).map_err(LoadError::from)?;
        if let Some(e) = missing_module_error(program, &input, built.module.clone(), &missing) {
            return Err(e);
        }
    }
    if !quiet {
        if let Some((test_path, _)) = &input.test_file {
            eprintln!(
                "ldb: {} read without pytest (plain test functions and asserts)",
                test_path.display()
            );
        }
        for note in &built.notes {
            eprintln!("note: {note}");
        }
    }
    Ok((built.task, runner))
}

/// The error for a test file importing `missing` (none missing: `None`): a module of the
/// project (pytest finds it), or one that neither the program nor the sandbox's Python has.
fn missing_module_error(
    program: &Path,
    input: &FileInput,
    module: Option<String>,
    missing: &[String],
) -> Option<Plain> {
    let (first, (test_path, _)) = (missing.first()?, input.test_file.as_ref()?);
    if let Some(reason) = project_import(program, test_path, missing) {
        let e = LoadError::bad_input(
            format!(
                "{}: imports `{first}` from its project",
                test_path.display()
            ),
            "install pytest: ldb runs such tests with it",
        );
        return Some(Plain::NeedsPytest(reason, e));
    }
    let module_hint = match &module {
        Some(m) => format!(
            "if `{first}` means the program under test, import it by the program's file \
             name: `from {m} import ...` or `import {m}`; otherwise install it for the \
             Python ldb runs (python3 -m pip install {first})"
        ),
        None => format!("install it for the Python ldb runs (python3 -m pip install {first})"),
    };
    Some(Plain::Error(LoadError::bad_input(
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
    )))
}

/// A module the test file imports that is a module or package of the program's project
/// (beside the program or the tests, or under `src/`): pytest's import path finds it.
fn project_import(program: &Path, tests: &Path, missing: &[String]) -> Option<Reason> {
    let dirs: Vec<std::path::PathBuf> = [program.parent(), tests.parent()]
        .into_iter()
        .flatten()
        .flat_map(|d| [d.to_path_buf(), d.join("src"), d.join("..").join("src")])
        .collect();
    missing.iter().find_map(|m| {
        dirs.iter()
            .any(|d| d.join(m).is_dir() || d.join(format!("{m}.py")).is_file())
            .then(|| Reason(format!("the tests import `{m}` from the project")))
    })
}

fn with_newline(input: &str) -> String {
    if input.is_empty() || input.ends_with('\n') {
        input.to_string()
    } else {
        format!("{input}\n")
    }
}

fn file_error(e: FileInputError) -> LoadError {
    LoadError::bad_input(e.to_string(), e.hint)
}

/// Which of `modules` the sandbox's Python cannot import (checked in the sandbox, never here).
pub fn missing_modules(
    runner: &Runner,
    modules: &[String],
) -> Result<Vec<String>, crate::run::sandbox::SandboxError> {
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
