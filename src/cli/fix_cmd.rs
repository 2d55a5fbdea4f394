//! `ldb fix TASK`: run the debugging loop on one task or a file of tasks.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::stream::{self, StreamExt};
use serde::Serialize;

use super::output::{self, CliError, ExitStatus};
use super::progress::StderrProgress;
use super::settings::{FixInput, FixSettings, ProgramTests, SeedChoice, TaskSource};
use super::test_cmd::select_tasks;
use crate::load;
use crate::repair::record::{FixReport, FixStatus, ReportFile, REPORT_VERSION};
use crate::repair::{Fixer, SeedSource, Strategy};
use crate::task::load_seeds;

#[derive(Serialize)]
struct ResultLine<'a> {
    task_id: &'a str,
    status: FixStatus,
    passed: usize,
    total: usize,
    program: &'a str,
}

/// Functions of a project tried in turn when no function is named (`ldb fix --tests NODE`),
/// most suspicious first, at most.
const LOCATED_TRIED: usize = 3;

pub fn run(s: FixSettings) -> Result<ExitStatus, CliError> {
    if let FixInput::Task(TaskSource::Project(tests)) = &s.input {
        let tests = tests.clone();
        return run_project(s, tests);
    }
    run_target(s)
}

/// No function named: find it from what the failing tests ran, then fix the most suspicious
/// functions in turn until one is fixed.
fn run_project(s: FixSettings, tests: ProgramTests) -> Result<ExitStatus, CliError> {
    let located = crate::load::project::locate(&tests, s.sandbox.runner()?, s.quiet)?;
    if located.failing == 0 {
        if !s.quiet {
            eprintln!("ldb: every given test passes: nothing to fix");
        }
        return Ok(ExitStatus::Success);
    }
    let tried: Vec<_> = located.ranked.iter().take(LOCATED_TRIED).collect();
    if tried.is_empty() {
        return Err(CliError::bad_input(
            format!(
                "the failing test{} ran no function of the project under {}",
                if located.failing == 1 { "" } else { "s" },
                located.root.display()
            ),
            "name the function under test: ldb fix path/to/module.py::NAME --tests ...",
        ));
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    if !s.quiet {
        let names: Vec<String> = tried
            .iter()
            .map(|f| {
                format!(
                    "{} ({:.2})",
                    crate::load::project::target_of(f, &cwd).display(),
                    f.score
                )
            })
            .collect();
        eprintln!(
            "ldb: the failing test{} ran {} function{} of the project; most suspicious: {} \
             (ldb locate shows why)",
            if located.failing == 1 { "" } else { "s" },
            located.ranked.len(),
            if located.ranked.len() == 1 { "" } else { "s" },
            names.join(", ")
        );
    }
    let mut last = ExitStatus::TestsFailed;
    for (i, f) in tried.iter().enumerate() {
        let target = crate::load::project::target_of(f, &cwd);
        if !s.quiet {
            eprintln!(
                "ldb: fixing {} ({} of {})",
                target.display(),
                i + 1,
                tried.len()
            );
        }
        let mut one = s.clone();
        one.target = target;
        one.input = FixInput::Task(TaskSource::Program(tests.clone()));
        match run_target(one) {
            // A fix that passes, confirmed or not, ends the search for the function.
            Ok(status @ (ExitStatus::Success | ExitStatus::Unconfirmed)) => return Ok(status),
            Ok(status) => last = status,
            // One function that cannot be fixed (it does not splice, its module does not
            // import alone) leaves the next to try.
            Err(e) if i + 1 < tried.len() => {
                if !s.quiet {
                    eprintln!("ldb: {}: trying the next function", e.message);
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(last)
}

/// What a fix needs from its input, resolved once per input kind: the tasks and the runner
/// they run with, where their seeds come from (seed files read), the file held for `--write`, a
/// snippet still to be made runnable (it needs a model), and the lines of a task file set aside
/// (reported already: the exit status says so).
struct Prepared {
    tasks: Vec<crate::task::Task>,
    seed: SeedSource,
    runner: crate::run::Runner,
    guard: Option<crate::files::WriteGuard>,
    snippet: Option<crate::exec::Snippet>,
    skipped: usize,
}

fn prepare(s: &FixSettings, program_file: &Path) -> Result<Prepared, CliError> {
    let mut prepared = Prepared {
        tasks: Vec::new(),
        seed: SeedSource::TaskOrGenerate,
        runner: s.sandbox.runner()?,
        guard: None,
        snippet: None,
        skipped: 0,
    };
    match &s.input {
        FixInput::Snippet { .. } => {
            prepared.snippet = Some(super::exec_cmd::read_snippet(&s.target)?);
        }
        FixInput::Task(TaskSource::Program(tests)) => {
            let runner = prepared.runner;
            // `--write` holds the file for the whole run: locked (a second run waits), checked
            // to be writable before any model call, and read once; the fix replaces it only if
            // unchanged.
            let (task, runner) = if s.write {
                let guard = hold(program_file, s.quiet)?;
                let text = guard.original().text.clone();
                prepared.guard = Some(guard);
                load::load_text(&s.target, text, tests, runner, s.quiet)?
            } else {
                load::load(&s.target, tests, runner, s.quiet)?
            };
            prepared.tasks.push(task);
            prepared.runner = runner;
        }
        FixInput::Task(TaskSource::Project(_)) => {
            return Err(CliError::internal(
                "a project's function is found before it is fixed",
            ))
        }
        FixInput::Task(TaskSource::Tasks { task_id, strict }) => {
            let (tasks, bad) = select_tasks(&s.target, task_id.as_deref(), *strict)?;
            prepared.tasks = tasks;
            prepared.skipped = bad;
        }
    }
    prepared.seed = seed_source(s, prepared.tasks.len().max(1))?;
    Ok(prepared)
}

fn run_target(s: FixSettings) -> Result<ExitStatus, CliError> {
    let program_file = load::program_file(&s.target);
    let Prepared {
        mut tasks,
        seed,
        mut runner,
        guard,
        snippet,
        skipped,
    } = prepare(&s, &program_file)?;
    if !s.peers.is_empty() {
        let peers = read_peers(&s.peers, &program_file)?;
        if s.options.strategy != Strategy::Search && !s.quiet {
            eprintln!("ldb: --peers votes only in --strategy search; it is ignored here");
        }
        for task in &mut tasks {
            task.peers.extend(peers.iter().cloned());
        }
    }
    if !s.quiet {
        for task in &tasks {
            if let Some(program) = seed.given_program(task) {
                super::test_cmd::warn_undefined_compared(task, &program);
            }
        }
    }
    let (generator, debugger) = crate::cli::models::load(&s.models)?;
    // Before any model call: a task no model here can be shown is bad input.
    for task in &tasks {
        if let Some(why) = crate::cli::models::prompt_too_large(task, &[&generator, &debugger]) {
            return Err(CliError::bad_input(
                format!("{}: {why}", s.target.display()),
                crate::cli::models::PROMPT_TOO_LARGE_HINT,
            ));
        }
    }
    let mut prefix_used = None;
    if let (
        Some(snippet),
        FixInput::Snippet {
            step,
            tests,
            task_text,
        },
    ) = (&snippet, &s.input)
    {
        let prefix = crate::cli::exec_cmd::find_prefix(
            snippet,
            step,
            generator.clone(),
            &runner,
            &s.prompts,
            s.quiet,
        )?;
        let task =
            crate::cli::exec_cmd::snippet_task(snippet, &prefix, tests, task_text.as_deref());
        // The prefix runs before every run of the snippet; the snippet alone is debugged.
        runner = runner.with_prelude(prefix.clone());
        tasks.push(task);
        prefix_used = Some(prefix);
    }
    let fixer = Arc::new(Fixer {
        generator,
        debugger,
        runner,
        prompts: s.prompts.clone(),
        options: s.options.clone(),
        seed,
    });
    let progress = Arc::new(StderrProgress::new(tasks.len(), s.quiet));
    let runtime = crate::cli::runtime()?;
    let mut reports = runtime.block_on(fix_all(fixer, tasks, s.concurrency, progress.clone()));
    progress.finish();
    if let Some(prefix) = &prefix_used {
        // Models shown the set-up code tend to copy it into the program; it runs first anyway.
        for r in &mut reports {
            r.final_program = crate::exec::prefix::without_prefix_copy(&r.final_program, prefix);
        }
    }

    if let Some(path) = &s.report {
        let file = ReportFile {
            version: REPORT_VERSION,
            tasks: reports.clone(),
        };
        let text = serde_json::to_string_pretty(&file)
            .map_err(|e| CliError::internal(format!("cannot encode the report: {e}")))?;
        output::write_file(path, &text, "the report")?;
    }
    if let Some(guard) = &guard {
        write_back(&s, &program_file, guard, &reports)?;
    } else {
        write_results(&s, &reports)?;
    }
    if reports.len() == 1 && s.diff && !s.quiet {
        if let Some(r) = reports.first() {
            print_diff(&r.seed.program, &r.final_program);
        }
    }
    Ok(super::test_cmd::with_skipped(
        exit_status(&reports),
        skipped,
    ))
}

/// The programs of `--peers` (see [`crate::files::peers`]), leaving out the program being fixed
/// and any copy of it.
fn read_peers(paths: &[PathBuf], program: &Path) -> Result<Vec<String>, CliError> {
    let peers = crate::files::peer_programs(paths, program)
        .map_err(|e| CliError::bad_input(e.to_string(), e.hint()))?;
    Ok(peers.into_iter().map(|p| p.text).collect())
}

async fn fix_all(
    fixer: Arc<Fixer>,
    tasks: Vec<crate::task::Task>,
    concurrency: usize,
    progress: Arc<StderrProgress>,
) -> Vec<FixReport> {
    // Each task runs as its own Tokio task (so tasks spread over the worker threads), started
    // in order, at most `concurrency` at once; reports come back in the tasks' order.
    let mut reports: Vec<(usize, FixReport)> = stream::iter(tasks.into_iter().enumerate())
        .map(|(i, task)| {
            let fixer = fixer.clone();
            let progress = progress.clone();
            let run = tokio::spawn(async move { fixer.fix(&task, &*progress).await });
            async move { (i, run.await) }
        })
        .buffer_unordered(concurrency.max(1))
        .filter_map(|(i, joined)| async move {
            match joined {
                Ok(report) => Some((i, report)),
                Err(e) => {
                    eprintln!("error: a task stopped unexpectedly: {e}");
                    None
                }
            }
        })
        .collect()
        .await;
    reports.sort_by_key(|(i, _)| *i);
    reports.into_iter().map(|(_, report)| report).collect()
}

fn seed_source(s: &FixSettings, tasks: usize) -> Result<SeedSource, CliError> {
    Ok(match &s.seed {
        SeedChoice::File(path) => {
            if tasks > 1 {
                return Err(CliError::bad_input(
                    format!(
                        "--seed gives one program, but {} holds {tasks} tasks",
                        s.target.display()
                    ),
                    "use --seeds FILE.jsonl (task_id → program), or pick one task with --task-id",
                ));
            }
            SeedSource::File {
                path: path.clone(),
                program: output::read_source(path)?,
            }
        }
        SeedChoice::Map(path) => SeedSource::Map {
            path: path.clone(),
            programs: load_seeds(path)?,
        },
        SeedChoice::Command(cmd) => SeedSource::Command(cmd.clone()),
        SeedChoice::Generate => SeedSource::Generate,
        SeedChoice::TaskOrGenerate => SeedSource::TaskOrGenerate,
    })
}

/// Hold `path` for `--write`, saying so when another run holds it.
fn hold(path: &std::path::Path, quiet: bool) -> Result<crate::files::WriteGuard, CliError> {
    let shown = path.display().to_string();
    let mut on_wait = || {
        if !quiet {
            eprintln!("ldb: waiting for another ldb run that is writing {shown}");
        }
    };
    crate::files::WriteGuard::acquire(path, &mut on_wait).map_err(|e| match e {
        crate::files::GuardError::Read(e) => e.into(),
        e @ crate::files::GuardError::NotWritable { .. } => CliError::bad_input(
            e.to_string(),
            "make the file and its directory writable, or leave out --write and redirect \
             stdout (ldb fix prog.py ... > fixed.py)",
        ),
    })
}

/// `--write`: the file is replaced only by a program that passes every test, and only if it
/// still holds what was read; otherwise it is left as it was and the program goes to stdout
/// (or, when the file changed meanwhile, beside it).
fn write_back(
    s: &FixSettings,
    path: &std::path::Path,
    guard: &crate::files::WriteGuard,
    reports: &[FixReport],
) -> Result<(), CliError> {
    let [report] = reports else {
        return write_results(s, reports);
    };
    if !report.status.passed() {
        if !s.quiet {
            eprintln!(
                "note: {} left unchanged: no program passed every test ({} of {} at best, \
                 printed below)",
                path.display(),
                report.final_passed,
                report.visible_total
            );
        }
        return write_results(s, reports);
    }
    if report.final_program == report.seed.program {
        if !s.quiet {
            eprintln!("note: {} passes its tests; left unchanged", path.display());
        }
        return Ok(());
    }
    if report.unconfirmed() && !s.unconfirmed {
        if !s.quiet {
            let independent = if report.confirmation.is_some() {
                "no independently written program agrees with it".to_string()
            } else {
                format!(
                    "--strategy {} draws no independent program to compare it with (the \
                     default search does)",
                    serde_json::to_value(report.strategy)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default()
                )
            };
            eprintln!(
                "note: {} left unchanged: the fix passes the visible tests, but nothing else \
                 backs it ({independent}, and no test that passed before guarded it); it is \
                 printed below: review it, add tests, or pass --unconfirmed to write such a fix",
                path.display()
            );
        }
        return write_results(s, reports);
    }
    match guard.commit(&report.final_program) {
        Ok(backup) => {
            if !s.quiet {
                eprintln!(
                    "wrote {} (the original is in {})",
                    path.display(),
                    backup.display()
                );
            }
            Ok(())
        }
        Err(e @ crate::files::CommitError::Changed { .. }) => {
            let crate::files::CommitError::Changed { saved, .. } = &e else {
                return Ok(());
            };
            let hint = match saved {
                Some(beside) => format!(
                    "your edits are kept; the fix is in {}: compare, then run ldb again",
                    beside.display()
                ),
                None => {
                    // Nowhere to put it beside the file: the fix goes to stdout.
                    output::print(&report.final_program);
                    "your edits are kept; the fix was printed to stdout".to_string()
                }
            };
            Err(CliError::bad_input(e.to_string(), hint))
        }
        Err(e) => {
            output::print(&report.final_program);
            Err(CliError {
                message: format!("{e}; {} is unchanged", path.display()),
                hint: Some(
                    "the fix was printed to stdout; free space or fix the permissions, then \
                     save it (ldb fix ... > fixed.py)"
                        .into(),
                ),
                status: output::ExitStatus::BadInput,
            })
        }
    }
}

fn write_results(s: &FixSettings, reports: &[FixReport]) -> Result<(), CliError> {
    let text = if let [single] = reports {
        single.final_program.clone()
    } else {
        let mut out = String::new();
        for r in reports {
            let line = ResultLine {
                task_id: &r.task_id,
                status: r.status,
                passed: r.final_passed,
                total: r.visible_total,
                program: &r.final_program,
            };
            let encoded = serde_json::to_string(&line).map_err(|e| {
                CliError::internal(format!("cannot encode the result of {}: {e}", r.task_id))
            })?;
            out.push_str(&encoded);
            out.push('\n');
        }
        out
    };
    match &s.out {
        Some(path) => output::write_file(path, &text, "the result"),
        None => {
            output::print(&text);
            Ok(())
        }
    }
}

/// Fixed when every task passes; a failure wins over "not fixed": one on ldb's side over a
/// sandbox one, a sandbox one over a backend one.
fn exit_status(reports: &[FixReport]) -> ExitStatus {
    let failed: Vec<&FixReport> = reports
        .iter()
        .filter(|r| r.status == FixStatus::Error)
        .collect();
    let mut hinted = Vec::new();
    for r in &failed {
        eprintln!(
            "error: [{}] {}",
            r.task_id,
            r.error.as_deref().unwrap_or("failed")
        );
        if let Some(class) = r.error_class.filter(|c| !hinted.contains(c)) {
            eprintln!("hint: {}", class.hint());
            hinted.push(class);
        }
    }
    if !failed.is_empty() {
        let statuses: Vec<ExitStatus> = failed
            .iter()
            .map(|r| r.error_class.map_or(ExitStatus::Backend, ExitStatus::of))
            .collect();
        return [ExitStatus::Internal, ExitStatus::Sandbox]
            .into_iter()
            .find(|s| statuses.contains(s))
            .unwrap_or(ExitStatus::Backend);
    }
    if reports.iter().all(|r| r.status.passed()) {
        if reports.iter().any(FixReport::unconfirmed) {
            ExitStatus::Unconfirmed
        } else {
            ExitStatus::Success
        }
    } else {
        ExitStatus::TestsFailed
    }
}

/// The seed → final diff on stderr, coloured when stderr is a terminal that takes colour
/// (`anstream` strips the colours for a pipe, a file or `NO_COLOR`).
fn print_diff(seed: &str, last: &str) {
    use owo_colors::OwoColorize;
    use std::io::Write;
    if seed == last {
        return;
    }
    let diff = crate::repair::unified_diff(seed, last);
    let mut err = anstream::stderr().lock();
    for line in diff.lines() {
        let _ = match line.chars().next() {
            Some('+') if !line.starts_with("+++") => writeln!(err, "{}", line.green()),
            Some('-') if !line.starts_with("---") => writeln!(err, "{}", line.red()),
            Some('@') => writeln!(err, "{}", line.cyan()),
            _ => writeln!(err, "{line}"),
        };
    }
}
