//! `ldb test TASK`: run a program against a task's tests and report each result.

use std::path::Path;

use serde::Serialize;

use super::output::{self, CliError, ExitStatus};
use super::settings::{TaskSource, TestSettings};
use crate::load;
use crate::run::{visible_tests, Runner, TestInput, TestOutcome, TestStatus};
use crate::task::{load_tasks, load_tasks_lenient, Task};

#[derive(Serialize)]
struct TaskReport<'a> {
    task_id: &'a str,
    program: String,
    passed: usize,
    total: usize,
    results: Vec<TestOutcome>,
}

pub fn run(s: &TestSettings) -> Result<ExitStatus, CliError> {
    let (tasks, skipped, runner) = load_source(&s.target, &s.source, s.sandbox.runner()?, false)?;
    let program_override = match &s.program {
        Some(p) => Some(output::read_source(p)?),
        None => None,
    };
    let strict = runner.clone().strict();
    let mut all_passed = true;
    let mut reports = Vec::new();
    for task in &tasks {
        let (program, origin) = match (&program_override, &task.seed, &s.program) {
            (Some(p), _, Some(path)) => (p.clone(), path.display().to_string()),
            // A .py program given as the task is its own seed: name the file.
            (None, Some(seed), _) if matches!(s.source, TaskSource::Program(_)) => (
                seed.clone(),
                load::program_file(&s.target).display().to_string(),
            ),
            (None, Some(seed), _) => (seed.clone(), "seed".to_string()),
            _ => {
                return Err(CliError::bad_input(
                    format!(
                        "{}: task `{}` has no `seed` program to test",
                        s.target.display(),
                        task.task_id
                    ),
                    "pass --program FILE.py, or add a \"seed\" field to the task",
                ))
            }
        };
        let tests = visible_tests(task);
        // Hidden tests are scored as `ldb eval` scores them: strictly.
        let hidden: Vec<TestInput> = match (&task.hidden_tests, s.hidden) {
            (Some(source), true) => vec![TestInput::Code {
                source: source.clone(),
            }],
            _ => Vec::new(),
        };
        if tests.is_empty() && hidden.is_empty() {
            return Err(CliError::bad_input(
                format!(
                    "{}: task `{}` has no tests to run",
                    s.target.display(),
                    task.task_id
                ),
                "add \"visible_tests\" or \"io_tests\" to the task (or use --hidden)",
            ));
        }
        let mut results = Vec::with_capacity(tests.len());
        for r in runner.run_all(&program, &tests) {
            results.push(r?);
        }
        for r in strict.run_all(&program, &hidden) {
            results.push(r?);
        }
        let passed = results.iter().filter(|r| r.passed()).count();
        all_passed &= passed == results.len();
        if !s.json {
            output::print(&render_text(&task.task_id, &origin, &results));
        }
        warn_undefined_compared(task, &program);
        reports.push(TaskReport {
            task_id: &task.task_id,
            program: origin,
            passed,
            total: results.len(),
            results,
        });
    }
    if s.json {
        output::print_json(&reports)?;
    }
    for warning in collect_warnings(&reports) {
        eprintln!("warning: {warning}");
    }
    let status = if all_passed {
        ExitStatus::Success
    } else {
        ExitStatus::TestsFailed
    };
    Ok(with_skipped(status, skipped))
}

/// Name the visible tests of `task` that compare with a name neither `program` nor the test
/// defines (`assert f('x') == qIH`), on stderr: they fail whatever the program returns.
pub fn warn_undefined_compared(task: &Task, program: &str) {
    for u in crate::task::compared_names::undefined_compared(task, program) {
        eprintln!("warning: {}", u.message(&task.task_id));
        eprintln!("hint: {}", u.hint());
    }
}

/// Isolation warnings are the same for every run; say each once.
fn collect_warnings(reports: &[TaskReport<'_>]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for w in reports
        .iter()
        .flat_map(|r| r.results.iter())
        .flat_map(|o| o.warnings.iter())
    {
        if !seen.contains(w) {
            seen.push(w.clone());
        }
    }
    seen
}

fn render_text(task_id: &str, origin: &str, results: &[TestOutcome]) -> String {
    let mut out = format!("{task_id} (program: {origin})\n");
    for r in results {
        out.push_str(&format!(
            "  {:<8} {}\n",
            r.status.label(),
            r.test.describe()
        ));
        if r.status != TestStatus::Passed {
            out.push_str(&format!("           {}\n", r.summary));
        }
    }
    let pytest = results
        .iter()
        .any(|r| matches!(r.test, TestInput::Pytest { .. }));
    if pytest {
        out.push_str(&format!("  {}\n", pytest_counts(results)));
    } else {
        let passed = results.iter().filter(|r| r.passed()).count();
        out.push_str(&format!("  {passed} of {} tests passed\n", results.len()));
    }
    out
}

/// pytest's way: `4 passed, 1 failed, 1 skipped, 1 xfailed`, statuses in a fixed order.
fn pytest_counts(results: &[TestOutcome]) -> String {
    let order = [
        (TestStatus::Passed, "passed"),
        (TestStatus::Failed, "failed"),
        (TestStatus::Error, "error"),
        (TestStatus::Timeout, "timed out"),
        (TestStatus::Skipped, "skipped"),
        (TestStatus::XFailed, "xfailed"),
    ];
    let mut parts: Vec<String> = order
        .iter()
        .map(|(status, name)| (results.iter().filter(|r| r.status == *status).count(), name))
        .filter(|(n, _)| *n > 0)
        .map(|(n, name)| format!("{n} {name}"))
        .collect();
    let other = results
        .iter()
        .filter(|r| !order.iter().any(|(s, _)| *s == r.status))
        .count();
    if other > 0 {
        parts.push(format!("{other} other"));
    }
    let tests = if results.len() == 1 { "test" } else { "tests" };
    format!("{} {tests}: {}", results.len(), parts.join(", "))
}

/// The tasks of `source` (a program and its tests, or a task file), how many bad lines of a
/// task file were set aside, and `runner` set up for them.
pub fn load_source(
    target: &Path,
    source: &TaskSource,
    runner: Runner,
    quiet: bool,
) -> Result<(Vec<Task>, usize, Runner), CliError> {
    match source {
        TaskSource::Program(tests) => {
            let (task, runner) = load::load(target, tests, runner, quiet)?;
            Ok((vec![task], 0, runner))
        }
        TaskSource::Tasks { task_id, strict } => {
            let (tasks, skipped) = select_tasks(target, task_id.as_deref(), *strict)?;
            Ok((tasks, skipped, runner))
        }
        TaskSource::Project(_) => Err(CliError::bad_input(
            "no program given",
            "name the program: ldb test path/to/module.py --tests ... (ldb locate --tests NODE \
             finds the function from a failing test)",
        )),
    }
}

/// Load a task file and keep one task when `task_id` is given. Without `strict`, the bad lines
/// of a `.jsonl` file are reported on stderr and set aside; the second value counts those that
/// matter to the exit status (none when `task_id` found its task). With `strict`, the first bad
/// line fails.
pub fn select_tasks(
    path: &Path,
    task_id: Option<&str>,
    strict: bool,
) -> Result<(Vec<Task>, usize), CliError> {
    let (tasks, skipped) = if strict {
        (load_tasks(path)?, Vec::new())
    } else {
        let loaded = load_tasks_lenient(path)?;
        (loaded.tasks, loaded.skipped)
    };
    let tasks_is_empty = tasks.is_empty();
    let found = match task_id {
        None => tasks,
        Some(id) => tasks.into_iter().filter(|t| t.task_id == id).collect(),
    };
    // A file of one bad record: its own error says it all.
    let mut skipped = skipped;
    if found.is_empty() && task_id.is_none() && tasks_is_empty && skipped.len() == 1 {
        if let Some(only) = skipped.pop() {
            return Err(only.into());
        }
    }
    let level = if task_id.is_some() && !found.is_empty() {
        "warning"
    } else {
        "error"
    };
    for e in &skipped {
        eprintln!("{level}: {e}");
    }
    if found.is_empty() {
        return Err(match (task_id, skipped.is_empty()) {
            (Some(id), _) => CliError::bad_input(
                format!("{}: no task with id `{id}`", path.display()),
                "check --task-id against the file's \"task_id\" fields (and the bad lines named above)",
            ),
            (None, _) => CliError::bad_input(
                format!(
                    "{}: no line holds a task ldb can run ({} bad lines, named above)",
                    path.display(),
                    skipped.len()
                ),
                "fix those lines",
            ),
        });
    }
    if skipped.is_empty() || level == "warning" {
        return Ok((found, 0));
    }
    eprintln!(
        "note: {}: skipped {} bad line{}, running its other {} task{} (--strict stops at the \
         first bad line instead)",
        path.display(),
        skipped.len(),
        if skipped.len() == 1 { "" } else { "s" },
        found.len(),
        if found.len() == 1 { "" } else { "s" },
    );
    Ok((found, skipped.len()))
}

/// The exit status of a run that set aside `skipped` bad task lines: bad input (2) unless it
/// failed worse (model backend, sandbox).
pub fn with_skipped(status: ExitStatus, skipped: usize) -> ExitStatus {
    match status {
        ExitStatus::Success | ExitStatus::TestsFailed | ExitStatus::Unconfirmed if skipped > 0 => {
            ExitStatus::BadInput
        }
        other => other,
    }
}
