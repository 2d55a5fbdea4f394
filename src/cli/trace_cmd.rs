//! `ldb trace`: run one test under the tracer and print the sampled trace as the debugger sees it.

use serde::Serialize;

use super::output::{self, CliError, ExitStatus};
use super::settings::TraceSettings;
use super::test_cmd::select_tasks;
use crate::python::cfg::ProgramCfg;
use crate::python::source::SourceFile;
use crate::run::{visible_tests, TestInput, TestOutcome};
use crate::trace::render::TraceReport;
use crate::trace::units::UnitMap;
use crate::trace::TraceRequest;

#[derive(Serialize)]
struct TraceOutput<'a> {
    test: &'a TestOutcome,
    trace: &'a TraceReport,
}

pub fn run(s: &TraceSettings) -> Result<ExitStatus, CliError> {
    let mut runner = s.sandbox.runner()?;
    if let Some(path) = &s.prefix {
        runner = runner.with_prelude(output::read_source(path)?);
    }
    let task = match &s.task {
        Some(path) => {
            let (mut tasks, _) = select_tasks(path, s.task_id.as_deref(), false)?;
            if tasks.len() > 1 {
                return Err(CliError::bad_input(
                    format!("{} holds {} tasks", path.display(), tasks.len()),
                    "pick one with --task-id ID",
                ));
            }
            tasks.pop()
        }
        None => None,
    };
    let program =
        match (&s.file, &task) {
            (Some(file), _) => output::read_source(file)?,
            (None, Some(t)) => t.seed.clone().ok_or_else(|| {
                CliError::bad_input(
                    format!("task `{}` has no `seed` program", t.task_id),
                    "pass the program file: ldb trace FILE.py --task TASK",
                )
            })?,
            (None, None) => return Err(CliError::bad_input(
                "nothing to trace",
                "ldb trace FILE.py --test 'assert f(1) == 2' (or --call 'f(1)', or --task TASK)",
            )),
        };
    let test = choose_test(s, task.as_ref(), &program, &runner)?;

    let src = SourceFile::new(program.clone());
    let cfg = ProgramCfg::build(&src).map_err(|e| {
        CliError::bad_input(
            format!(
                "the program does not parse: line {}:{}: {}",
                e.line, e.column, e.message
            ),
            "fix the syntax error first; `ldb test` shows it too",
        )
    })?;
    // After a prefix the program is a snippet: its module-level code is what runs.
    let script = matches!(test, TestInput::Io { .. }) || runner.prelude().is_some();
    let units = UnitMap::build(&cfg, s.level, script, src.line_count());
    let sample = s.sample;
    let wall_ms = runner.sandbox().limits().wall_ms;
    let request = TraceRequest {
        scopes: units.scopes().to_vec(),
        keep_first: sample.head,
        keep_last: sample.tail,
        value_chars: s.value_chars,
        tracer: s.tracer,
        // Leave the parent's kill as a backstop; stop a little earlier so the trace survives.
        deadline_ms: wall_ms.saturating_mul(8) / 10,
    };
    let outcome = runner.run(&program, &test, Some(request))?;
    let raw = outcome.trace.clone().unwrap_or_default();
    let report = TraceReport::build(&raw, &units, &src, &sample);
    if s.json {
        output::print_json(&TraceOutput {
            test: &outcome,
            trace: &report,
        })?;
    } else {
        let mut text = format!(
            "Test: {}\nResult: {} — {}\n",
            test.describe(),
            outcome.status.label(),
            outcome.summary
        );
        if outcome.trace.is_none() {
            text.push_str("No trace: the run ended before the tracer could report.\n");
        }
        text.push_str(&report.to_text());
        output::print(&text);
    }
    for w in &outcome.warnings {
        eprintln!("warning: {w}");
    }
    Ok(if outcome.passed() {
        ExitStatus::Success
    } else {
        ExitStatus::TestsFailed
    })
}

/// The test to trace: `--test`, `--call`, a task's test by index, or its first failing test.
fn choose_test(
    s: &TraceSettings,
    task: Option<&crate::task::Task>,
    program: &str,
    runner: &crate::run::Runner,
) -> Result<TestInput, CliError> {
    if let Some(test) = &s.test {
        return Ok(test.clone());
    }
    if task.is_none() && runner.prelude().is_some() {
        return Ok(TestInput::Code {
            source: crate::cli::exec_cmd::RUNS_TO_THE_END.to_string(),
        });
    }
    let Some(task) = task else {
        return Err(CliError::bad_input(
            "no test given",
            "add --test 'assert f(1) == 2', --call 'f(1)', or --task TASK",
        ));
    };
    let tests = visible_tests(task);
    if tests.is_empty() {
        return Err(CliError::bad_input(
            format!("task `{}` has no visible tests", task.task_id),
            "pass --test or --call instead",
        ));
    }
    if let Some(i) = s.index {
        return tests.get(i).cloned().ok_or_else(|| {
            CliError::bad_input(
                format!(
                    "task `{}` has {} visible tests; --index {i} is out of range",
                    task.task_id,
                    tests.len()
                ),
                format!("use --index 0 to {}", tests.len() - 1),
            )
        });
    }
    // The first failing test is the one worth tracing; fall back to the first test.
    for (test, result) in tests.iter().zip(runner.run_all(program, &tests)) {
        if !result?.passed() {
            return Ok(test.clone());
        }
    }
    Ok(tests[0].clone())
}
