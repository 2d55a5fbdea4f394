//! Settings several commands share, resolved from the flag groups of `args::shared`: the
//! sandbox, the prompt templates, the search's options, the `--make-runnable` step and where a
//! command's tasks come from.

use crate::task::file_input::project::ShellEnv;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cli::args::{ExecStepArgs, FileTaskArgs, SandboxArgs, SearchArgs};
use crate::cli::output::CliError;
use crate::exec::ExecOptions;
use crate::generate::prompts::Prompts;
use crate::repair::search::SearchOptions;
use crate::run::sandbox::{Limits, Sandbox};
use crate::run::Runner;

/// The sandbox's limits and import path, checked. The runner itself is made by [`Self::runner`]
/// when a command first needs it: making one prepares the worker image, which commands such
/// as `ldb check --mode predict` never use.
#[derive(Debug, Clone)]
pub struct SandboxSettings {
    pub limits: Limits,
    /// `--python-path` directories, absolute and checked to be readable in the sandbox.
    pub python_path: Vec<PathBuf>,
    /// Tests run at once (`None`: one per CPU).
    pub jobs: Option<usize>,
    /// A fresh worker per run instead of forks of a warm one.
    pub fresh_workers: bool,
}

impl SandboxSettings {
    pub fn resolve(args: &SandboxArgs) -> Result<Self, CliError> {
        let mut limits = Limits::default().with_wall(Duration::from_secs_f64(args.timeout));
        limits.memory_bytes = args.memory.saturating_mul(1 << 20);
        limits.disk_bytes = args.disk.saturating_mul(1 << 20);
        let python_path = args
            .python_path
            .iter()
            .map(|dir| {
                crate::run::sandbox::check_python_path(dir).map_err(|e| {
                    CliError::bad_input(format!("--python-path {}: {e}", dir.display()), e.hint())
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(SandboxSettings {
            limits,
            python_path,
            jobs: args.jobs,
            fresh_workers: args.fresh_workers,
        })
    }

    /// A runner with these settings; its workers are this executable, re-run as the worker.
    pub fn runner(&self) -> Result<Runner, CliError> {
        let exe = std::env::current_exe().map_err(|e| {
            CliError::sandbox(format!(
                "cannot find the ldb executable to start workers: {e}"
            ))
        })?;
        let mut sandbox =
            Sandbox::new(exe, self.limits.clone()).with_python_path(self.python_path.clone());
        if self.fresh_workers {
            sandbox = sandbox.cold();
        }
        let runner = Runner::new(sandbox);
        Ok(match self.jobs {
            Some(j) => runner.with_jobs(j),
            None => runner,
        })
    }
}

/// The prompt templates: the built-in ones, each replaced by `NAME.j2` of `--prompts DIR`.
pub fn prompts(dir: Option<&Path>) -> Result<Prompts, CliError> {
    match dir {
        Some(dir) => Prompts::from_dir(dir).map_err(|e| {
            CliError::bad_input(
                e.to_string(),
                "--prompts DIR holds NAME.j2 files named like the templates in prompts/",
            )
        }),
        None => Prompts::new()
            .map_err(|e| CliError::internal(format!("the built-in prompts do not load: {e}"))),
    }
}

/// The search's options (the value parsers checked the portfolio and the temperature).
pub fn search_options(args: &SearchArgs) -> SearchOptions {
    let mut o = SearchOptions {
        portfolio: args
            .proposers
            .as_ref()
            .map_or_else(|| SearchOptions::default().portfolio, |p| p.0.clone()),
        portfolio_given: args.proposers.is_some(),
        beam: args.beam.max(1),
        max_candidates: args.max_candidates,
        temperature: args.search_temperature,
        select: args.select,
        verify: args.verify,
        extra_inputs: args.extra_inputs,
        verdicts: args.verdicts.into(),
        select_by: args.select_by.into(),
        fresh_as_resample: !args.no_fresh_as_resample,
        locate_top: args.locate_top.max(1),
        mutate_limit: args.mutate_limit,
        mutate_depth: args.mutate_depth.unwrap_or(2).max(1),
        mutate_depth_given: args.mutate_depth.is_some(),
        patch_top: args.patch_top.max(1),
        patch_form: args.patch_form.into(),
        vote_patience: args.vote_patience,
        tie_votes: args.tie_votes,
        settle_votes: !args.all_votes,
        stop_at_passing_vote: args.stop_at_passing_vote,
        batch_votes_only: args.batch_votes_only,
        harden: match (args.no_harden, args.harden) {
            (true, _) => false,
            (_, true) => true,
            _ => SearchOptions::default().harden,
        },
        time_limit: args.time_limit.map(std::time::Duration::from_secs),
        ..SearchOptions::default()
    };
    for &(rule, on) in args.rules.iter().flat_map(|r| &r.0) {
        o.set_rule(rule, on);
    }
    o
}

/// The `ldb exec` step run on a snippet before another command works on it
/// (`--make-runnable`): `None` when the flag is absent.
pub fn exec_step(args: &ExecStepArgs) -> Option<ExecOptions> {
    args.make_runnable.then(|| ExecOptions {
        n: args.exec_n,
        k: args.exec_k,
        allow_missing: args.allow_missing,
        // Debugging reads the values the prefix made: stand-ins answer everything with more
        // stand-ins, so the prefix here is one the model wrote.
        standins: false,
        ..ExecOptions::default()
    })
}

/// Whether `path` names a Python program (rather than a task file): `prog.py`, or
/// `path/to/module.py::function`.
pub fn is_program(path: &Path) -> bool {
    program_file(path).extension().is_some_and(|e| e == "py")
}

pub use crate::load::{program_file, ProgramTests};

/// The environment variables a project's loading reads, read once here: `HOME` (where the
/// search for a project's root stops), `VIRTUAL_ENV` (the active virtualenv, when no `--venv`
/// is given) and `PYTHONPATH` (what the tests import from, as in the shell).
pub fn shell_env() -> ShellEnv {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    ShellEnv {
        home: var("HOME"),
        virtual_env: var("VIRTUAL_ENV"),
        python_path: std::env::var_os("PYTHONPATH"),
    }
}

impl ProgramTests {
    pub fn resolve(args: &FileTaskArgs) -> Self {
        ProgramTests {
            test: args.test.clone(),
            tests: args.tests.clone(),
            io_tests: args
                .io_test
                .chunks(2)
                .map(|pair| {
                    let at = |i: usize| pair.get(i).cloned().unwrap_or_default();
                    (at(0), at(1))
                })
                .collect(),
            entry: args.entry.clone(),
            keyword: args.keyword.clone(),
            venv: args.venv.clone(),
            pytest: args.pytest,
            no_pytest: args.no_pytest,
            task_text: args.task_text.clone(),
            keep_passing: crate::load::KeepPassing::None,
            shell: shell_env(),
        }
    }
}

/// Where a command's task comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskSource {
    /// No program named: the project of the tests the flags name, where localisation finds
    /// the function to fix (`ldb fix --tests NODE`).
    Project(ProgramTests),
    /// A `.py` program (`prog.py` or `prog.py::function`) and the tests the flags name.
    Program(ProgramTests),
    /// A task file; with `task_id`, only that task of it.
    Tasks {
        task_id: Option<String>,
        /// Stop at the first bad line of a `.jsonl` file.
        strict: bool,
    },
}

impl TaskSource {
    /// A program's tests for a `.py` target; for a task file, the program flags are refused
    /// (they would be silently ignored: a task file carries its own tests).
    pub fn resolve(
        target: Option<&Path>,
        file: &FileTaskArgs,
        task_id: Option<&str>,
        strict: bool,
    ) -> Result<Self, CliError> {
        let Some(target) = target else {
            // Declared on the flags: a missing target comes with --tests.
            return Ok(TaskSource::Project(ProgramTests::resolve(file)));
        };
        if is_program(target) {
            return Ok(TaskSource::Program(ProgramTests::resolve(file)));
        }
        if let Some(flag) = given(file) {
            return Err(CliError::bad_input(
                format!(
                    "{flag} applies to a Python program (prog.py), but {} is a task file",
                    target.display()
                ),
                "give the program instead: ldb fix prog.py --tests test_prog.py; a task file \
                 carries its own tests",
            ));
        }
        Ok(TaskSource::Tasks {
            task_id: task_id.map(str::to_string),
            strict,
        })
    }
}

/// The first program flag given other than `--test` and `--task` (those two also describe a
/// snippet debugged with `--make-runnable`).
pub fn given_beyond_test_and_task(args: &FileTaskArgs) -> Option<&'static str> {
    if !args.tests.is_empty() {
        Some("--tests")
    } else if !args.io_test.is_empty() {
        Some("--io-test")
    } else if args.keyword.is_some() {
        Some("-k")
    } else if args.venv.is_some() {
        Some("--venv")
    } else if args.pytest {
        Some("--pytest")
    } else if args.no_pytest {
        Some("--no-pytest")
    } else {
        args.entry.is_some().then_some("--entry")
    }
}

/// The first program flag given.
fn given(args: &FileTaskArgs) -> Option<&'static str> {
    if !args.test.is_empty() {
        Some("--test")
    } else if !args.tests.is_empty() {
        Some("--tests")
    } else if !args.io_test.is_empty() {
        Some("--io-test")
    } else if args.entry.is_some() {
        Some("--entry")
    } else if args.task_text.is_some() {
        Some("--task")
    } else {
        given_beyond_test_and_task(args)
    }
}
