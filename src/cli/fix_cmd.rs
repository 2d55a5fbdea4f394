//! `ldb fix TASK`: run the debugging loop on one task or a file of tasks.

use std::sync::Arc;

use serde::Serialize;

use super::file_task;
use super::output::{self, CliError, ExitStatus};
use super::progress::StderrProgress;
use super::test_cmd::select_tasks;
use super::FixArgs;
use crate::agent::report::{FixReport, FixStatus, ReportFile, REPORT_VERSION};
use crate::agent::{FixOptions, Fixer, SeedSource};
use crate::prompts::Prompts;
use crate::task::load_seeds;
use crate::trace::sample::SampleConfig;

#[derive(Serialize)]
struct ResultLine<'a> {
    task_id: &'a str,
    status: FixStatus,
    passed: usize,
    total: usize,
    program: &'a str,
}

pub fn run(args: &FixArgs) -> Result<ExitStatus, CliError> {
    let make_runnable = args.snippet.step.make_runnable;
    if make_runnable {
        if let Some(flag) = args.file.given_beyond_test_and_task() {
            return Err(CliError::bad_input(
                format!("{flag} cannot be combined with --make-runnable"),
                "a snippet takes --test STMT (run after it) and --task TEXT; give a test file \
                 to a complete program instead: ldb fix prog.py --tests test_prog.py",
            ));
        }
    }
    // `--write` holds the file for the whole run: locked (a second run waits), checked to be
    // writable before any model call, and read once; the fix replaces it only if unchanged.
    let program_file = file_task::program_file(&args.task);
    let guard = if args.write && file_task::is_program(&args.task) {
        Some(hold(&program_file, args.quiet)?)
    } else {
        None
    };
    let snippet = if make_runnable {
        Some(super::exec_cmd::read_snippet(&args.task)?)
    } else {
        None
    };
    // Bad lines of a .jsonl task file set aside (reported already): the exit status says so.
    let mut skipped = 0;
    let (mut tasks, mut runner) = if snippet.is_some() {
        (Vec::new(), args.sandbox.runner()?)
    } else if file_task::is_program(&args.task) {
        let runner = args.sandbox.runner()?;
        let (task, runner) = match &guard {
            Some(g) => file_task::load_text(
                &args.task,
                g.original().text.clone(),
                &args.file,
                runner,
                args.quiet,
            )?,
            None => file_task::load(&args.task, &args.file, runner, args.quiet)?,
        };
        (vec![task], runner)
    } else {
        file_task::reject_flags_for_task_file(&args.task, &args.file)?;
        if args.write {
            return Err(CliError::bad_input(
                format!(
                    "--write writes a fixed .py program back, but {} is a task file",
                    args.task.display()
                ),
                "use --out FILE (or redirect stdout) for a task file's result",
            ));
        }
        let (tasks, bad) = select_tasks(&args.task, args.task_id.as_deref(), args.strict)?;
        skipped = bad;
        (tasks, args.sandbox.runner()?)
    };
    let seed = seed_source(args, tasks.len().max(1))?;
    let (generator, debugger) = super::models::build(&args.model)?;
    // Before any model call: a task no model here can be shown is bad input.
    for task in &tasks {
        if let Some(why) = super::models::prompt_too_large(task, &[&generator, &debugger]) {
            return Err(CliError::bad_input(
                format!("{}: {why}", args.task.display()),
                super::models::PROMPT_TOO_LARGE_HINT,
            ));
        }
    }
    let prompts = match &args.model.prompts {
        Some(dir) => Prompts::from_dir(dir).map_err(|e| {
            CliError::bad_input(
                e.to_string(),
                "--prompts DIR holds NAME.j2 files named like the templates in prompts/",
            )
        })?,
        None => Prompts::new().map_err(|e| CliError::sandbox(e.to_string()))?,
    };
    let mut prefix_used = None;
    if let Some(snippet) = &snippet {
        let (task, prefix) = super::exec_cmd::runnable_task(
            snippet,
            &args.snippet,
            &args.file,
            generator.clone(),
            &runner,
            &prompts,
            args.quiet,
        )?;
        // The prefix runs before every run of the snippet; the snippet alone is debugged.
        runner = runner.with_prelude(prefix.clone());
        tasks.push(task);
        prefix_used = Some(prefix);
    }
    let mut sample = SampleConfig::for_level(args.level);
    sample.token_budget = args.budget;
    let fixer = Arc::new(Fixer {
        generator,
        debugger,
        runner,
        prompts,
        options: FixOptions {
            strategy: args.strategy,
            level: args.level,
            max_iters: args.max_iters,
            sample,
            value_chars: 120,
            temperature: args.temperature,
            resample_temperature: args.resample_temperature,
            seed,
            budget_tokens: args.search.budget_tokens,
            rng_seed: args.search.rng_seed,
            search: args.search.options()?,
            prefill: !args.search.no_prefill,
        },
    });
    let progress = Arc::new(StderrProgress::new(tasks.len(), args.quiet));
    let runtime = super::runtime()?;
    let mut reports = runtime.block_on(fix_all(
        fixer,
        tasks,
        args.concurrency.max(1),
        progress.clone(),
    ));
    progress.finish();
    if let Some(prefix) = &prefix_used {
        // Models shown the set-up code tend to copy it into the program; it runs first anyway.
        for r in &mut reports {
            r.final_program = crate::exec::prefix::without_prefix_copy(&r.final_program, prefix);
        }
    }

    if let Some(path) = &args.report {
        let file = ReportFile {
            version: REPORT_VERSION,
            tasks: reports.clone(),
        };
        let text = serde_json::to_string_pretty(&file)
            .map_err(|e| CliError::sandbox(format!("cannot encode the report: {e}")))?;
        output::write_file(path, &text, "the report")?;
    }
    if let Some(guard) = &guard {
        write_back(args, &program_file, guard, &reports)?;
    } else {
        write_results(args, &reports)?;
    }
    if reports.len() == 1 && !args.no_diff && !args.quiet {
        if let Some(r) = reports.first() {
            print_diff(&r.seed.program, &r.final_program);
        }
    }
    Ok(super::test_cmd::with_skipped(
        exit_status(&reports),
        skipped,
    ))
}

async fn fix_all(
    fixer: Arc<Fixer>,
    tasks: Vec<crate::task::Task>,
    concurrency: usize,
    progress: Arc<StderrProgress>,
) -> Vec<FixReport> {
    let limit = Arc::new(tokio::sync::Semaphore::new(concurrency));
    let mut handles = Vec::with_capacity(tasks.len());
    for task in tasks {
        let fixer = fixer.clone();
        let progress = progress.clone();
        let limit = limit.clone();
        handles.push(tokio::spawn(async move {
            let _permit = limit.acquire_owned().await.ok();
            fixer.fix(&task, &*progress).await
        }));
    }
    let mut reports = Vec::with_capacity(handles.len());
    for handle in handles {
        match handle.await {
            Ok(report) => reports.push(report),
            Err(e) => eprintln!("error: a task stopped unexpectedly: {e}"),
        }
    }
    reports
}

fn seed_source(args: &FixArgs, tasks: usize) -> Result<SeedSource, CliError> {
    if let Some(path) = &args.seed {
        if tasks > 1 {
            return Err(CliError::bad_input(
                format!(
                    "--seed gives one program, but {} holds {tasks} tasks",
                    args.task.display()
                ),
                "use --seeds FILE.jsonl (task_id → program), or pick one task with --task-id",
            ));
        }
        return Ok(SeedSource::File {
            path: path.clone(),
            program: output::read_source(path)?,
        });
    }
    if let Some(path) = &args.seeds {
        return Ok(SeedSource::Map {
            path: path.clone(),
            programs: load_seeds(path)?,
        });
    }
    if let Some(cmd) = &args.seed_cmd {
        return Ok(SeedSource::Command(cmd.clone()));
    }
    Ok(if args.generate {
        SeedSource::Generate
    } else {
        SeedSource::TaskOrGenerate
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
    args: &FixArgs,
    path: &std::path::Path,
    guard: &crate::files::WriteGuard,
    reports: &[FixReport],
) -> Result<(), CliError> {
    let [report] = reports else {
        return write_results(args, reports);
    };
    if !report.status.passed() {
        if !args.quiet {
            eprintln!(
                "note: {} left unchanged: no program passed every test ({} of {} at best, \
                 printed below)",
                path.display(),
                report.final_passed,
                report.visible_total
            );
        }
        return write_results(args, reports);
    }
    if report.final_program == report.seed.program {
        if !args.quiet {
            eprintln!("note: {} passes its tests; left unchanged", path.display());
        }
        return Ok(());
    }
    match guard.commit(&report.final_program) {
        Ok(backup) => {
            if !args.quiet {
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

fn write_results(args: &FixArgs, reports: &[FixReport]) -> Result<(), CliError> {
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
                CliError::sandbox(format!("cannot encode the result of {}: {e}", r.task_id))
            })?;
            out.push_str(&encoded);
            out.push('\n');
        }
        out
    };
    match &args.out {
        Some(path) => output::write_file(path, &text, "the result"),
        None => {
            output::print(&text);
            Ok(())
        }
    }
}

/// Fixed when every task passes; a backend or sandbox failure wins over "not fixed" (a sandbox
/// one over a backend one).
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
        return if statuses.contains(&ExitStatus::Sandbox) {
            ExitStatus::Sandbox
        } else {
            ExitStatus::Backend
        };
    }
    if reports.iter().all(|r| r.status.passed()) {
        ExitStatus::Success
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
    let diff = crate::agent::unified_diff(seed, last);
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
