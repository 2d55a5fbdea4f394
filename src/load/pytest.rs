//! A program tested by its project's pytest suite: `ldb test src/pkg/algo.py --tests tests/`.
//!
//! pytest runs the tests, inside the sandbox, in the user's environment (the virtualenv of
//! `--venv`, else the active one, else `--python-path`, else the system's Python). Here the
//! project and the environment are found, pytest's collection runs once with the program as it
//! is, and what it found becomes the task's tests (one per node) or an `error:` with a
//! `hint:`: no pytest, a collection error, a node id that does not exist, a test that imports
//! a missing module. Those errors are worded in `errors`; the regression tests a fix must keep
//! passing are found in `guards`.

mod errors;
mod guards;

use std::path::{Path, PathBuf};

use super::LoadError;
use crate::run::pytest::PytestProject;
use crate::run::sandbox::pytest::PytestReport;
use crate::run::sandbox::ProjectMount;
use crate::run::{Runner, TestInput};
use crate::task::file_input::project::{self, PythonEnv};
use crate::task::file_input::{self, FileInput};
use crate::task::{PytestNode, Task};
use errors::{check_collection, file_error};
use guards::find_guards;

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
    /// `--tests`: directories, files or node ids.
    pub tests: &'a [PathBuf],
    /// `-k EXPR`.
    pub keyword: Option<&'a str>,
    /// `--venv DIR`.
    pub venv: Option<&'a Path>,
    /// `--entry NAME`.
    pub entry: Option<&'a str>,
    /// `--task TEXT`.
    pub task_text: Option<&'a str>,
    /// Which passing tests a fix must keep passing (`ldb fix --keep-passing`).
    pub keep_passing: KeepPassing,
    /// `HOME` and `VIRTUAL_ENV`, as the settings read them.
    pub shell: &'a project::ShellEnv,
}

/// Which of the project's passing tests guard a fix besides the tests given: those that pass
/// on the given program and run the function under test, from the given tests' files or
/// directories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeepPassing {
    /// Only the tests given (`ldb test`, and `ldb fix --keep-passing none`).
    #[default]
    None,
    File,
    Dir,
}

/// Where a project's pytest run happens: the project, its environment, the tests given, and a
/// runner set up to run them there (the program in place of the module file).
pub struct Setup {
    /// How messages name the tests: the one path given, or all of them.
    pub label: PathBuf,
    /// The given tests: real paths, and their node parts.
    pub given: Vec<(PathBuf, Option<String>)>,
    pub root: PathBuf,
    pub env: PythonEnv,
    pub mount: ProjectMount,
    pub runner: Runner,
    /// The caller's PYTHONPATH entries the runs import from.
    pub user_path: Vec<PathBuf>,
    /// pytest's arguments for the given tests (and `-k`).
    pub pytest_args: Vec<String>,
}

/// The project around `program` (a module file) and the tests of `args`, its environment,
/// and a runner that runs pytest there.
pub fn setup(
    program: &Path,
    args: &TestsArgs<'_>,
    runner: Runner,
    python_path_given: bool,
    quiet: bool,
) -> Result<Setup, LoadError> {
    if args.tests.is_empty() {
        return Err(LoadError::bad_input(
            "pytest needs tests to run: no --tests given",
            "pass --tests tests/ (a directory, a test file or a node id)",
        ));
    }
    let label = PathBuf::from(
        args.tests
            .iter()
            .map(|t| t.display().to_string())
            .collect::<Vec<_>>()
            .join(" "),
    );
    let cwd = std::env::current_dir().map_err(|e| {
        LoadError::bad_input(
            format!("cannot read the current directory: {e}"),
            "run ldb from an existing directory",
        )
    })?;
    // Real paths, as the sandboxed interpreter sees them (a symlinked project would otherwise
    // be shown as a link to nothing).
    let real = |path: &Path| std::fs::canonicalize(project::absolute(path, &cwd));
    let mut given: Vec<(PathBuf, Option<String>)> = Vec::new();
    for t in args.tests {
        let (tests_path, node_part) = project::split_node(t);
        let abs = real(&tests_path).map_err(|e| {
            LoadError::bad_input(
                format!("{}: {e}", tests_path.display()),
                "pass --tests with a test directory, a test file or a node id \
                 (tests/test_x.py::test_y)",
            )
        })?;
        given.push((abs, node_part));
    }
    let tests_abs = given[0].0.clone();
    let program_abs = real(program).map_err(|e| {
        LoadError::bad_input(
            format!("{}: {e}", program.display()),
            "give the module under test as path/to/module.py[::function]",
        )
    })?;
    let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
    let root = project::find_root(&program_abs, &tests_abs, &cwd, args.shell.home.as_deref())
        .map_err(file_error)?;
    let temp = std::env::temp_dir();
    if temp.starts_with(&root) {
        return Err(LoadError::bad_input(
            format!(
                "the project directory {} holds {}, where the sandbox keeps its runs",
                root.display(),
                temp.display()
            ),
            "move the module and its tests into a directory of their own",
        ));
    }
    let env = project::find_env(
        args.venv,
        args.shell.virtual_env.as_deref(),
        python_path_given,
    )
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
    // The caller's PYTHONPATH, as plain pytest run from this shell would import with it.
    let user_path = user_python_path(args.shell.python_path.as_deref(), &cwd, &root, quiet);
    let mut python_path = runner.sandbox().python_path().to_vec();
    for dir in &user_path {
        if !python_path.contains(dir) {
            python_path.push(dir.clone());
        }
    }
    let runner = runner
        .map_sandbox(|s| {
            s.with_python_path(python_path)
                .with_site_dirs(site, shown, system_site)
                .with_pytest_preloaded()
        })
        .with_project(PytestProject {
            mount: mount.clone(),
            rootdir: root.clone(),
        });
    let mut pytest_args: Vec<String> = given
        .iter()
        .map(|(abs, node)| match node {
            Some(node) => format!("{}::{node}", abs.display()),
            None => abs.display().to_string(),
        })
        .collect();
    if let Some(k) = args.keyword {
        pytest_args.extend(["-k".to_string(), k.to_string()]);
    }
    Ok(Setup {
        label,
        given,
        root,
        env,
        mount,
        runner,
        user_path,
        pytest_args,
    })
}

/// Collect the given tests with `text` in the module's place: pytest's report, checked (no
/// pytest, collection errors, unknown nodes are errors with hints), and the runner set to
/// pytest's own rootdir.
pub fn collect_checked(
    setup: &Setup,
    text: &str,
    program: &Path,
    reason: &Reason,
) -> Result<(PytestReport, PathBuf, Runner), LoadError> {
    let collection = setup.runner.collect(text, &setup.pytest_args)?;
    let Some(report) = collection.report else {
        let mut e = LoadError::sandbox(format!(
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
    check_collection(
        &report,
        &setup.label,
        program,
        &setup.root,
        &setup.env,
        reason,
    )?;
    let rootdir = report
        .rootdir
        .as_deref()
        .map(PathBuf::from)
        .unwrap_or_else(|| setup.root.clone());
    let runner = setup.runner.clone().with_project(PytestProject {
        mount: setup.mount.clone(),
        rootdir: rootdir.clone(),
    });
    Ok((report, rootdir, runner))
}

/// The task whose tests are the pytest nodes `args.tests` (and `-k`) select, and a runner
/// that runs them in the project.
pub fn load(
    target: Target<'_>,
    args: TestsArgs<'_>,
    runner: Runner,
    reason: &Reason,
) -> Result<(Task, Runner), LoadError> {
    let Target {
        program,
        function,
        text,
        python_path_given,
        quiet,
    } = target;
    let st = setup(program, &args, runner, python_path_given, quiet)?;
    let (report, rootdir, runner) = collect_checked(&st, &text, program, reason)?;
    let Setup {
        label,
        given,
        root,
        env,
        user_path,
        ..
    } = st;
    let tests = label.as_path();
    if report.items.is_empty() {
        return Err(LoadError::bad_input(
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
            guard: false,
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
    super::one_entry(program, function.as_deref(), args.entry)?;
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
                    guard: n.guard,
                })
                .collect();
            let entry = entry_under_test(e, several, &runner, &input.program, &tests, quiet)?;
            input.entry = Some(entry);
            built = file_input::build_pytest(&input, nodes);
        }
    }
    let built = built.map_err(|e| {
        let several = e.hint.contains("--entry");
        let mut err = file_error(e);
        if several {
            err.hint = Some(format!(
                "name the function under test: {}::NAME (or --entry NAME)",
                program.display()
            ));
        }
        err
    })?;
    let mut built = built;
    // A package's function or a method is a real project's code: repaired where it is.
    built.task.in_project = built.task.entry_point.contains('.') || package_of(program).is_some();
    let guards = find_guards(
        &runner,
        &built.task,
        &given,
        args.keep_passing,
        args.keyword,
        quiet,
    )?;
    if !quiet && !guards.is_empty() {
        eprintln!(
            "ldb: {} passing test{} of {} run{} `{}`: a fix must keep {} passing (--keep-passing \
             none leaves them out)",
            guards.len(),
            if guards.len() == 1 { "" } else { "s" },
            match args.keep_passing {
                KeepPassing::Dir => "the tests' directories",
                _ => "the tests' files",
            },
            if guards.len() == 1 { "s" } else { "" },
            built.task.entry_point,
            if guards.len() == 1 { "it" } else { "them" },
        );
    }
    built.task.pytest_nodes.extend(guards);
    if !quiet {
        eprintln!(
            "ldb: pytest {} ({}, from {}) runs {} test{} of {} ({}); project {}, rootdir {}{}",
            report.version.as_deref().unwrap_or("?"),
            env.describe(),
            report.location.as_deref().unwrap_or("?"),
            built.task.visible_tests.len(),
            if built.task.visible_tests.len() == 1 {
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
        eprintln!(
            "ldb: the tests run in a sandbox, not in this shell: their own HOME and /tmp, no \
             network beyond loopback, and writes to the project go to a scratch copy that is \
             discarded (docs/fix.md#the-sandbox-of-a-project)"
        );
        if !user_path.is_empty() {
            let dirs: Vec<String> = user_path.iter().map(|d| d.display().to_string()).collect();
            eprintln!(
                "ldb: PYTHONPATH {} is on the tests' import path, as in this shell",
                dirs.join(":")
            );
        }
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
        if built.task.in_project && !built.task.untold {
            eprintln!(
                "note: {} is a project's code: it is repaired where it is, not written afresh \
                 from its docstring",
                built.task.entry_point
            );
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
) -> Result<String, LoadError> {
    let outcomes = runner
        .run_in_order(program, tests)
        .map_err(LoadError::from)?;
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
            let mut err = file_error(e.clone());
            err.hint = Some(if called.is_empty() {
                "the failing tests call none of them themselves; say which one is under test \
                 with --entry NAME"
                    .to_string()
            } else {
                format!(
                    "the failing tests call {}; say which one is under test with --entry NAME",
                    called.join(", ")
                )
            });
            return Err(err);
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

/// The directories of the caller's `PYTHONPATH` (`value`) that a run can show: relative ones
/// resolved against `cwd`; those in the project as they are (the run shows the project),
/// others when the sandbox can show them (a note says why one cannot).
fn user_python_path(
    value: Option<&std::ffi::OsStr>,
    cwd: &Path,
    root: &Path,
    quiet: bool,
) -> Vec<PathBuf> {
    let Some(value) = value else {
        return Vec::new();
    };
    let mut dirs = Vec::new();
    for part in std::env::split_paths(value) {
        // An empty entry is the current directory, as for the interpreter.
        let part = if part.as_os_str().is_empty() {
            cwd.to_path_buf()
        } else {
            part
        };
        let Ok(dir) = std::fs::canonicalize(project::absolute(&part, cwd)) else {
            continue;
        };
        if !dir.is_dir() {
            continue;
        }
        let checked = if dir.starts_with(root) {
            Ok(dir)
        } else {
            crate::run::sandbox::check_python_path(&dir)
        };
        match checked {
            Ok(dir) if !dirs.contains(&dir) => dirs.push(dir),
            Ok(_) => {}
            Err(e) if !quiet => eprintln!("note: PYTHONPATH: {e}; the tests run without it"),
            Err(_) => {}
        }
    }
    dirs
}

/// The package a module file belongs to (its directory holds an `__init__.py`), by name.
pub(super) fn package_of(program: &Path) -> Option<String> {
    let dir = program.parent()?;
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    if !dir.join("__init__.py").is_file() {
        return None;
    }
    let name = std::fs::canonicalize(dir)
        .ok()?
        .file_name()?
        .to_string_lossy()
        .into_owned();
    Some(name)
}
