//! `ldb exec FILE|-`: find prefixes that make a snippet run, and print the best prefix, the
//! minimal covering set, per-line coverage, the tree of attempts, tokens and time. Also the
//! glue other commands use to make a snippet runnable first (`--make-runnable`).

use std::io::Read;
use std::path::Path;

use super::args::values::Format;
use super::output::{self, CliError, ExitStatus};
use super::settings::ExecSettings;
use super::settings::ModelSettings;
use crate::exec::{make_runnable, ExecError, ExecOptions, ExecReport, Snippet, MAX_SNIPPET_BYTES};
use crate::generate::model::SharedModel;
use crate::generate::prompts::Prompts;
use crate::run::Runner;

impl From<ExecError> for CliError {
    fn from(e: ExecError) -> Self {
        let status = match &e {
            e if e.is_input() => ExitStatus::BadInput,
            ExecError::Prompt(_) => ExitStatus::BadInput,
            ExecError::Internal(_) => ExitStatus::Internal,
            _ => ExitStatus::Sandbox,
        };
        match e {
            ExecError::Model(m) => m.into(),
            e => CliError {
                hint: e.hint(),
                message: e.to_string(),
                status,
            },
        }
    }
}

pub fn run(s: &ExecSettings) -> Result<ExitStatus, CliError> {
    let snippet = read_snippet(&s.file)?;
    let runner = s.sandbox.runner()?;
    let generator = search_model(&s.models, &s.options)?;
    let report = run_search(
        &snippet, generator, &runner, &s.prompts, &s.options, s.quiet,
    )?;
    if let (Some(path), Some(best)) = (&s.write_prefix, &report.best) {
        std::fs::write(path, format!("{}\n", best.prefix.trim_end())).map_err(|e| {
            CliError::bad_input(
                format!("cannot write {}: {e}", path.display()),
                "check that the directory exists and is writable",
            )
        })?;
    }
    match s.format {
        Format::Json => output::print_json(&report)?,
        Format::Text => output::print(&report.to_text()),
    }
    Ok(if report.runs() {
        ExitStatus::Success
    } else {
        ExitStatus::TestsFailed
    })
}

/// The model the search asks; with `--no-model` none is loaded.
pub(super) fn search_model(
    models: &ModelSettings,
    options: &ExecOptions,
) -> Result<SharedModel, CliError> {
    if !options.use_model {
        return Ok(std::sync::Arc::new(crate::exec::NoModel));
    }
    Ok(super::models::load(models)?.0)
}

/// The search on a fresh runtime, with progress lines on stderr unless `quiet`.
pub fn run_search(
    snippet: &Snippet,
    model: SharedModel,
    runner: &Runner,
    prompts: &Prompts,
    options: &ExecOptions,
    quiet: bool,
) -> Result<ExecReport, CliError> {
    let runtime = crate::cli::runtime()?;
    let progress = move |line: String| {
        if !quiet {
            eprintln!("exec: {line}");
        }
    };
    Ok(runtime.block_on(make_runnable(
        snippet, &*model, runner, prompts, options, &progress,
    ))?)
}

/// Read and check a snippet from a file or stdin (`-`).
pub fn read_snippet(path: &Path) -> Result<Snippet, CliError> {
    let (name, bytes) = if path == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .take(MAX_SNIPPET_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| {
                CliError::bad_input(
                    format!("cannot read the snippet from stdin: {e}"),
                    "pipe a Python file in, or pass its path",
                )
            })?;
        ("<stdin>".to_string(), bytes)
    } else {
        let bytes = match crate::files::read_bytes(path, MAX_SNIPPET_BYTES as u64) {
            Ok(bytes) => bytes,
            Err(crate::files::ReadError::TooLarge { size, .. }) => {
                return Err(ExecError::TooLarge {
                    name: path.display().to_string(),
                    bytes: usize::try_from(size).unwrap_or(usize::MAX),
                    limit: MAX_SNIPPET_BYTES,
                }
                .into())
            }
            Err(e) => return Err(e.into()),
        };
        (path.display().to_string(), bytes)
    };
    Ok(Snippet::from_bytes(name, &bytes)?)
}

/// The test a snippet gets when the user gives none: it must run to its end.
pub const RUNS_TO_THE_END: &str = "pass  # the code runs to its end without an exception";

/// The `--make-runnable` step: the best prefix for `snippet`, announced on stderr.
pub fn find_prefix(
    snippet: &Snippet,
    options: &ExecOptions,
    model: SharedModel,
    runner: &Runner,
    prompts: &Prompts,
    quiet: bool,
) -> Result<String, CliError> {
    let report = run_search(snippet, model, runner, prompts, options, quiet)?;
    let Some(best) = report.best.clone() else {
        return Err(CliError {
            message: format!("no prefix made {} run", snippet.name),
            hint: Some("run `ldb exec` on it to see the attempts".into()),
            status: ExitStatus::TestsFailed,
        });
    };
    if !quiet {
        eprintln!(
            "make-runnable: prefix #{} ({}/{} statements covered; the search made {} model \
             calls, {} prompt + {} reply tokens) runs before the snippet:",
            best.node,
            best.coverage.covered,
            best.coverage.total,
            report.usage.calls,
            report.usage.prompt_tokens,
            report.usage.completion_tokens
        );
        for line in best.prefix.lines() {
            eprintln!("    {line}");
        }
    }
    Ok(best.prefix)
}

/// `ldb fix --make-runnable`: the snippet as a task whose seed is the snippet itself, to be
/// run after `prefix` (from [`find_prefix`]); `tests` run after it (default: it must run to
/// its end).
pub fn snippet_task(
    snippet: &Snippet,
    prefix: &str,
    tests: &[String],
    task_text: Option<&str>,
) -> crate::task::Task {
    let id = Path::new(&snippet.name).file_stem().map_or_else(
        || snippet.name.clone(),
        |s| s.to_string_lossy().into_owned(),
    );
    let what = task_text.unwrap_or("Make this code run correctly.");
    let prompt = format!(
        "{what}\n\nThe code runs after this set-up code, which defines the names it uses; the \
         set-up code is not part of the program and stays as it is:\n```python\n{}\n```",
        prefix.trim_end()
    );
    let tests = if tests.is_empty() {
        vec![RUNS_TO_THE_END.to_string()]
    } else {
        tests.to_vec()
    };
    crate::task::Task {
        task_id: id,
        prompt,
        entry_point: String::new(),
        visible_tests: tests,
        hidden_tests: None,
        seed: Some(snippet.text.clone()),
        source: None,
        io_tests: Vec::new(),
        scope: Default::default(),
        peers: Vec::new(),
        pytest_nodes: Vec::new(),
        untold: false,
        in_project: false,
    }
}
