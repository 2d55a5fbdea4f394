//! A program tested by its project's pytest suite: `ldb test src/pkg/algo.py --tests tests/`.
//!
//! pytest runs the tests, inside the sandbox, in the user's environment (the virtualenv of
//! `--venv`, else the active one, else `--python-path`, else the system's Python). Here the
//! project and the environment are found, pytest's collection runs once with the program as it
//! is, and what it found becomes the task's tests (one per node) or an `error:` with a
//! `hint:`: no pytest, a collection error, a node id that does not exist, a test that imports
//! a missing module.

use std::path::{Path, PathBuf};

use super::output::CliError;
use crate::run::pytest::PytestProject;
use crate::run::sandbox::pytest::{CollectError, PytestReport};
use crate::run::sandbox::ProjectMount;
use crate::run::{Runner, TestInput};
use crate::task::file_input::project::{self, EnvSource, PythonEnv};
use crate::task::file_input::{self, FileInput};
use crate::task::{PytestNode, Task};

/// Why the tests go to pytest, for the line that says which path ran.
#[derive(Debug, Clone)]
pub struct Reason(pub String);

/// The program under test and how to speak of it.
pub struct Target<'a> {
    /// The module file as the user gave it.
    pub program: &'a Path,
    /// `module.py::function`'s function.
    pub function: Option<String>,
    /// The module's text.
    pub text: String,
    /// `--python-path` was given (the environment, when no virtualenv is).
    pub python_path_given: bool,
    pub quiet: bool,
}

/// What the command line says about the tests (from `ProgramTests`).
#[derive(Debug, Clone, Copy)]
pub struct TestsArgs<'a> {
    /// `--tests`: a directory, a file or a node id.
    pub tests: Option<&'a Path>,
    /// `-k EXPR`.
    pub keyword: Option<&'a str>,
    /// `--venv DIR`.
    pub venv: Option<&'a Path>,
    /// `--entry NAME`.
    pub entry: Option<&'a str>,
    /// `--task TEXT`.
    pub task_text: Option<&'a str>,
}

/// The task whose tests are the pytest nodes `args.tests` (and `-k`) select, and a runner
/// that runs them in the project.
pub fn load(
    target: Target<'_>,
    args: TestsArgs<'_>,
    runner: Runner,
    reason: &Reason,
) -> Result<(Task, Runner), CliError> {
    let Target {
        program,
        function,
        text,
        python_path_given,
        quiet,
    } = target;
    let Some(tests) = args.tests else {
        return Err(CliError::bad_input(
            "pytest needs tests to run: no --tests given",
            "pass --tests tests/ (a directory, a test file or a node id)",
        ));
    };
    let cwd = std::env::current_dir().map_err(|e| {
        CliError::bad_input(
            format!("cannot read the current directory: {e}"),
            "run ldb from an existing directory",
        )
    })?;
    let (tests_path, node_part) = project::split_node(tests);
    // Real paths, as the sandboxed interpreter sees them (a symlinked project would otherwise
    // be shown as a link to nothing).
    let real = |path: &Path| std::fs::canonicalize(project::absolute(path, &cwd));
    let tests_abs = real(&tests_path).map_err(|e| {
        CliError::bad_input(
            format!("{}: {e}", tests_path.display()),
            "pass --tests with a test directory, a test file or a node id \
             (tests/test_x.py::test_y)",
        )
    })?;
    let program_abs = real(program).map_err(|e| {
        CliError::bad_input(
            format!("{}: {e}", program.display()),
            "give the module under test as path/to/module.py[::function]",
        )
    })?;
    let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let root =
        project::find_root(&program_abs, &tests_abs, &cwd, home.as_deref()).map_err(file_error)?;
    let temp = std::env::temp_dir();
    if temp.starts_with(&root) {
        return Err(CliError::bad_input(
            format!(
                "the project directory {} holds {}, where the sandbox keeps its runs",
                root.display(),
                temp.display()
            ),
            "move the module and its tests into a directory of their own",
        ));
    }
    let virtual_env = std::env::var_os("VIRTUAL_ENV").map(PathBuf::from);
    let env = project::find_env(args.venv, virtual_env.as_deref(), python_path_given)
        .map_err(file_error)?;
    let mount = ProjectMount {
        root: root.clone(),
        module_file: program_abs.clone(),
        cwd: if cwd.starts_with(&root) {
            cwd.clone()
        } else {
            root.clone()
        },
    };
    let site = env.site_dirs.clone();
    let shown = env.pth_dirs.clone();
    let system_site = env.system_site;
    let runner = runner
        .map_sandbox(|s| {
            s.with_site_dirs(site, shown, system_site)
                .with_pytest_preloaded()
        })
        .with_project(PytestProject {
            mount: mount.clone(),
            rootdir: root.clone(),
        });
    let mut pytest_args = vec![match &node_part {
        Some(node) => format!("{}::{node}", tests_abs.display()),
        None => tests_abs.display().to_string(),
    }];
    if let Some(k) = args.keyword {
        pytest_args.extend(["-k".to_string(), k.to_string()]);
    }
    let collection = runner.collect(&text, &pytest_args)?;
    let Some(report) = collection.report else {
        let mut e = CliError::sandbox(format!(
            "pytest's collection ended without a report: {}",
            collection.run.summary
        ));
        if collection
            .run
            .summary
            .contains("no file system view of its own")
        {
            e.hint = Some(
                "pytest runs need the sandbox's mount namespace, to show the project with the \
                 program in place of the module: run ldb as root, or allow unprivileged user \
                 namespaces (sysctl kernel.unprivileged_userns_clone=1)"
                    .into(),
            );
        }
        return Err(e);
    };
    check_collection(&report, tests, program, &root, &env, reason)?;
    let rootdir = report
        .rootdir
        .as_deref()
        .map(PathBuf::from)
        .unwrap_or_else(|| root.clone());
    let runner = runner.with_project(PytestProject {
        mount,
        rootdir: rootdir.clone(),
    });
    if report.items.is_empty() {
        return Err(CliError::bad_input(
            format!(
                "{}: pytest collected no tests{}",
                tests.display(),
                args.keyword
                    .map(|k| format!(" matching -k {k:?}"))
                    .unwrap_or_default()
            ),
            "check --tests and -k: pytest collects test_*.py files, test_* functions and \
             Test* classes",
        ));
    }
    let nodes: Vec<PytestNode> = report
        .items
        .iter()
        .map(|item| PytestNode {
            node_id: item.nodeid.clone(),
            source: project::node_source(project::NodeParts {
                nodeid: &item.nodeid,
                function: &item.function,
                source: item.source.as_deref(),
                params: &item.params,
                fixtures: &item.fixtures,
            }),
        })
        .collect();
    if let (Some(given), Some(entry)) = (&function, args.entry) {
        if given != entry {
            return Err(CliError::bad_input(
                format!(
                    "{}::{given} and --entry {entry} name different functions",
                    program.display()
                ),
                "name the function under test once",
            ));
        }
    }
    let mut input = FileInput {
        program_path: program.to_path_buf(),
        program: text,
        entry: function.or_else(|| args.entry.map(str::to_string)),
        task_text: args.task_text.map(str::to_string),
        ..Default::default()
    };
    let mut built = file_input::build_pytest(&input, nodes.clone());
    if let Err(e) = &built {
        if let Some(several) = &e.several {
            // Node sources are the tests `several` holds, in order.
            let tests: Vec<TestInput> = nodes
                .iter()
                .map(|n| TestInput::Pytest {
                    node_id: n.node_id.clone(),
                    source: n.source.clone(),
                })
                .collect();
            let entry = entry_under_test(e, several, &runner, &input.program, &tests, quiet)?;
            input.entry = Some(entry);
            built = file_input::build_pytest(&input, nodes);
        }
    }
    let built = built.map_err(|e| {
        let several = e.hint.contains("--entry");
        let mut cli = file_error(e);
        if several {
            cli.hint = Some(format!(
                "name the function under test: {}::NAME (or --entry NAME)",
                program.display()
            ));
        }
        cli
    })?;
    if !quiet {
        eprintln!(
            "ldb: pytest {} ({}, from {}) runs {} test{} of {} ({}); project {}, rootdir {}{}",
            report.version.as_deref().unwrap_or("?"),
            env.describe(),
            report.location.as_deref().unwrap_or("?"),
            built.task.pytest_nodes.len(),
            if built.task.pytest_nodes.len() == 1 {
                ""
            } else {
                "s"
            },
            tests.display(),
            reason.0,
            root.display(),
            rootdir.display(),
            report
                .inifile
                .as_deref()
                .map(|i| format!(" (settings: {i})"))
                .unwrap_or_default(),
        );
        if report.module_imported == Some(false) {
            eprintln!(
                "note: collecting the tests did not import {} from its path; if they import an \
                 installed copy of it instead, no change to the file reaches them",
                program.display()
            );
        }
        for note in &built.notes {
            eprintln!("note: {note}");
        }
    }
    Ok((built.task, runner))
}

/// The tests call several of the program's functions and none was named: the one the failing
/// tests call is under test (said on stderr), the first called when every test passes; a
/// failing test that calls two leaves it to `--entry`. `tests` are `several.tests` as run.
pub(super) fn entry_under_test(
    e: &file_input::FileInputError,
    several: &file_input::SeveralEntries,
    runner: &Runner,
    program: &str,
    tests: &[TestInput],
    quiet: bool,
) -> Result<String, CliError> {
    let outcomes = runner
        .run_in_order(program, tests)
        .map_err(CliError::from)?;
    // A test after one that timed out did not run: it names nothing.
    let failed: Vec<bool> = (0..tests.len())
        .map(|i| outcomes.get(i).is_some_and(|o| !o.passed()))
        .collect();
    let functions = several.functions.join(", ");
    let (entry, why) = match file_input::entry_of_failing(several, &failed) {
        Ok(entry) => {
            let why = format!("the failing ones call only `{entry}`, so it");
            (entry, why)
        }
        // Nothing fails: any will do for a check; the first, as a task's first test.
        Err(called) if called.is_empty() && !failed.contains(&true) => {
            let first = several.functions.first().cloned().unwrap_or_default();
            let why = format!("every test passes; `{first}`, called first,");
            (first, why)
        }
        Err(called) => {
            let mut cli = file_error(e.clone());
            cli.hint = Some(if called.is_empty() {
                "the failing tests call none of them themselves; say which one is under test \
                 with --entry NAME"
                    .to_string()
            } else {
                format!(
                    "the failing tests call {}; say which one is under test with --entry NAME",
                    called.join(", ")
                )
            });
            return Err(cli);
        }
    };
    if !quiet {
        eprintln!(
            "ldb: the tests call {functions}; {why} is the function under test (--entry NAME \
             names another)"
        );
    }
    Ok(entry)
}

fn file_error(e: file_input::FileInputError) -> CliError {
    CliError::bad_input(e.to_string(), e.hint)
}

/// pytest missing, a usage error (a node that does not exist) or a collection error, as an
/// `error:` with a `hint:`.
fn check_collection(
    report: &PytestReport,
    tests: &Path,
    program: &Path,
    root: &Path,
    env: &PythonEnv,
    reason: &Reason,
) -> Result<(), CliError> {
    if let Some(why) = &report.import_error {
        return Err(no_pytest(tests, env, reason, why));
    }
    if let Some(first) = report.collect_errors.first() {
        return Err(collection_error(first, report, program, root, env));
    }
    if let Some(usage) = &report.usage_error {
        let first = usage.lines().next().unwrap_or(usage);
        if first.starts_with("not found: ") {
            return Err(CliError::bad_input(
                format!("{}: pytest finds no such test", tests.display()),
                format!(
                    "list the tests and their node ids with: ldb test {} --tests {}",
                    program.display(),
                    project::split_node(tests).0.display()
                ),
            ));
        }
        return Err(CliError::bad_input(
            format!("pytest refused the arguments: {first}"),
            "check --tests and -k EXPR (pytest's own syntax)",
        ));
    }
    Ok(())
}

/// The error for a project whose environment has no pytest.
pub fn no_pytest(tests: &Path, env: &PythonEnv, reason: &Reason, why: &str) -> CliError {
    let hint = match &env.source {
        EnvSource::Venv { dir, .. } => format!(
            "install it in the virtualenv: {}/bin/pip install pytest",
            dir.display()
        ),
        EnvSource::PythonPath => "install pytest where --python-path points (python3.11 -m pip \
                                  install --target DIR pytest), or pass --venv DIR"
            .to_string(),
        EnvSource::System => "install it for the Python ldb runs (sudo apt-get install \
                              python3-pytest, or python3.11 -m pip install pytest), or activate \
                              the project's virtualenv"
            .to_string(),
    };
    CliError::bad_input(
        format!(
            "{}: these tests need pytest ({}), and {} has none ({why})",
            tests.display(),
            reason.0,
            env.describe()
        ),
        hint,
    )
}

fn collection_error(
    error: &CollectError,
    report: &PytestReport,
    program: &Path,
    root: &Path,
    env: &PythonEnv,
) -> CliError {
    let more = match report.collect_errors.len() {
        0 | 1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    let what = if error.nodeid.is_empty() {
        "the tests".to_string()
    } else {
        error.nodeid.clone()
    };
    let exception = error.exception.as_ref();
    let at = exception
        .and_then(|e| e.test_location.clone())
        .map(|l| format!(" ({l})"))
        .unwrap_or_default();
    let text = exception
        .map(|e| {
            format!(
                "{}: {}",
                e.kind,
                e.message.lines().next().unwrap_or_default()
            )
        })
        .unwrap_or_else(|| "an error".into());
    if let Some(line) = exception.and_then(|e| e.program_line) {
        return CliError::bad_input(
            format!(
                "{what}: pytest could not collect it: {program} raised {text} at line {line} \
                 when imported{more}",
                program = program.display()
            ),
            "the module must import for its tests to be collected: fix that line, then run ldb \
             again",
        );
    }
    if let Some(module) = &error.missing_module {
        let top = module.split('.').next().unwrap_or(module);
        let in_project = [
            root.join(top),
            root.join(format!("{top}.py")),
            root.join("src").join(top),
        ]
        .iter()
        .any(|p| p.exists());
        let hint = if in_project {
            format!(
                "`{top}` is in the project but not on the tests' import path: tell pytest where \
                 it is (`pythonpath = src` in pytest.ini, or [tool.pytest.ini_options] in \
                 pyproject.toml), as plain pytest needs too"
            )
        } else {
            match &env.source {
                EnvSource::Venv { dir, .. } => format!(
                    "install it in the virtualenv ({}/bin/pip install {top}), or fix the import",
                    dir.display()
                ),
                _ => format!(
                    "install it for the Python ldb runs (python3.11 -m pip install {top}), use \
                     --venv DIR for a virtualenv that has it, or fix the import"
                ),
            }
        };
        return CliError::bad_input(
            format!(
                "{what}: pytest could not collect it: it imports `{module}`, which {} cannot \
                 import{at}{more}",
                env.describe()
            ),
            hint,
        );
    }
    CliError::bad_input(
        format!("{what}: pytest could not collect it: {text}{at}{more}"),
        "fix the test file or its conftest.py (plain `pytest --collect-only` shows the same \
         error)",
    )
}
