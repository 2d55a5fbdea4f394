//! The debugging loop: test the program; if a visible test fails, improve it with the chosen
//! [`Strategy`] (LDB by default: trace the failing test block by block, get a verdict per block,
//! regenerate), and repeat until the visible tests pass or the iteration budget is spent.
//!
//! Data flows one way: task → seed ([`seed`]) → runner → one strategy round (`strategies`) → next
//! program → the record ([`record`]; pages: [`crate::report`]). Every strategy shares this loop,
//! the runner, the models, the seed and the budget, so comparisons between them are fair. Hidden
//! tests never reach a prompt: only the task prompt, the program, visible tests and their results
//! are rendered.

mod conversation;
pub mod failure;
pub mod progress;
pub mod record;
pub mod search;
pub mod seed;
mod strategies;
pub mod verdict;

use std::sync::Arc;
use std::time::{Duration, Instant};

use similar::TextDiff;

use progress::{Phase, Progress, ProgressEvent};
use record::{FixReport, FixStatus, IterationReport, SeedInfo, TestResult, Timings, UsageTotals};
pub use seed::SeedSource;

use crate::generate::model::{ChatModel, ModelError};
use crate::generate::prompts::{PromptError, Prompts};
use crate::run::sandbox::SandboxError;
use crate::run::{visible_tests, Runner, TestInput, TestOutcome};
use crate::task::{ProgramScope, Task};
use crate::trace::sample::SampleConfig;
use crate::trace::Level;

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    #[error(transparent)]
    Prompt(#[from] PromptError),
    #[error("seed command `{command}` failed: {detail}")]
    SeedCommand { command: String, detail: String },
    #[error("internal error: {0}")]
    Internal(String),
}

/// How a failing program is improved each round. All strategies share the runner, the model,
/// the seed and the iteration budget, so comparisons between them are fair.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// The seed only: no debugging.
    None,
    /// LDB: trace a failing test, get a verdict per unit (line/block/function), regenerate.
    #[default]
    Ldb,
    /// Self-Debugging +Expl: the model explains the program line by line, then fixes it.
    SelfdebugExpl,
    /// Self-Debugging +Trace: the model dry-runs the program on the failing test, then fixes it.
    SelfdebugTrace,
    /// Repeated sampling: generate a fresh program until the visible tests pass.
    Resample,
    /// Repair by search: candidates from several proposers (test feedback, LDB's trace and
    /// verdicts, fresh programs) each round, checked by execution, the best few carried on.
    Search,
}

impl Strategy {
    /// Whether the strategy gets any rounds after the seed is tested.
    pub fn improves(self) -> bool {
        self != Strategy::None
    }
}

/// Settings of the loop.
#[derive(Debug, Clone)]
pub struct FixOptions {
    pub strategy: Strategy,
    /// Trace granularity for [`Strategy::Ldb`].
    pub level: Level,
    /// Debugging rounds at most (the paper uses 10).
    pub max_iters: usize,
    pub sample: SampleConfig,
    /// Characters kept per variable value in traces.
    pub value_chars: usize,
    /// Temperature of the debugging calls (verdicts, explanations, fixes).
    pub temperature: f32,
    /// Temperature of [`Strategy::Resample`]'s fresh programs (greedy would repeat itself).
    pub resample_temperature: f32,
    /// Stop starting new rounds once the model calls have cost this many tokens (prompt tokens
    /// the backend evaluated plus reply tokens; see [`crate::generate::model::Usage::cost`]). The seed's
    /// own calls do not count: every strategy starts from the same seed.
    pub budget_tokens: Option<u64>,
    /// Base of the sampling seeds: runs with the same base draw the same samples.
    pub rng_seed: u64,
    /// Settings of [`Strategy::Search`].
    pub search: search::SearchOptions,
    /// Programs written from the task alone (resampling, the search's fresh proposer) start
    /// with the task's own code prompt (`seed::reply_prefix`): the embedded model writes only
    /// the body instead of copying the signature and docstring again (not when the prompt
    /// leaves several functions to write).
    pub prefill: bool,
}

impl Default for FixOptions {
    fn default() -> Self {
        FixOptions {
            strategy: Strategy::Ldb,
            level: Level::Block,
            max_iters: 10,
            sample: SampleConfig::for_level(Level::Block),
            value_chars: 120,
            temperature: 0.0,
            resample_temperature: 0.8,
            budget_tokens: None,
            rng_seed: 0,
            search: search::SearchOptions::default(),
            // Measured on the development sets: the same fixes for a third fewer tokens.
            prefill: true,
        }
    }
}

/// Runs the loop for tasks. Cheap to share between concurrent tasks.
pub struct Fixer {
    pub generator: Arc<dyn ChatModel>,
    pub debugger: Arc<dyn ChatModel>,
    pub runner: Runner,
    pub prompts: Prompts,
    pub options: FixOptions,
    /// Where each task's first program comes from (the input, apart from how it is debugged).
    pub seed: SeedSource,
}

/// The program being debugged and what its tests said.
struct Tested {
    program: String,
    outcomes: Vec<TestOutcome>,
    passed: usize,
}

impl Fixer {
    /// Debug one task. Backend and sandbox failures end the run with status `error` and the best
    /// program so far; they are returned as `Err` only when there is no program at all.
    pub async fn fix(&self, task: &Task, progress: &dyn Progress) -> FixReport {
        let started = Instant::now();
        let tests = visible_tests(task);
        let mut report = FixReport {
            task_id: task.task_id.clone(),
            status: FixStatus::Error,
            strategy: self.options.strategy,
            level: self.options.level,
            seed: SeedInfo {
                origin: String::new(),
                program: String::new(),
                calls: Vec::new(),
                problem: None,
            },
            final_program: String::new(),
            final_passed: 0,
            visible_total: tests.len(),
            iterations: Vec::new(),
            usage: UsageTotals::default(),
            timings: Timings::default(),
            error: None,
            error_class: None,
            candidates: Vec::new(),
            selection: None,
            confirmation: None,
            unexercised: Vec::new(),
            regression_tests: tests
                .iter()
                .filter(|t| t.is_guard())
                .map(TestInput::describe)
                .collect(),
            regression_passed: 0,
            kept_passing: 0,
        };
        let outcome = if self.options.strategy == Strategy::Search {
            let options = &self.options.search;
            search::run(self, task, &tests, options, &mut report, progress).await
        } else {
            self.run_loop(task, &tests, &mut report, progress).await
        };
        if let Err(e) = outcome {
            report.status = FixStatus::Error;
            report.error = Some(e.to_string());
            report.error_class = Some(e.class());
        } else {
            self.name_unexercised(task, &tests, &mut report, progress)
                .await;
        }
        report.kept_passing = kept_passing(&tests, &report);
        // Totals over every call.
        for call in report
            .seed
            .calls
            .iter()
            .chain(report.iterations.iter().flat_map(|i| i.calls.iter()))
        {
            report.usage.calls += 1;
            report.usage.prompt_tokens += call.prompt_tokens;
            report.usage.completion_tokens += call.completion_tokens;
            report.usage.cached_prompt_tokens += call.cached_prompt_tokens;
            if call.cached {
                report.usage.replayed_calls += 1;
                report.usage.replayed_tokens += call.cost();
            }
            report.timings.llm_ms += call.latency_ms;
        }
        for it in &report.iterations {
            report.timings.tests_ms += it.timings.tests_ms;
            report.timings.trace_ms += it.timings.trace_ms;
        }
        report.timings.total_ms = ms(started.elapsed());
        progress.event(ProgressEvent::Finished {
            task_id: task.task_id.clone(),
            status: if report.unconfirmed() {
                "Fixed (plausible, not confirmed)".into()
            } else {
                format!("{:?}", report.status)
            },
            passed: report.final_passed,
            total: report.visible_total,
            regression: report.regression_tests.len(),
            regression_passed: report.regression_passed,
        });
        report
    }

    async fn run_loop(
        &self,
        task: &Task,
        tests: &[TestInput],
        report: &mut FixReport,
        progress: &dyn Progress,
    ) -> Result<(), AgentError> {
        let id = task.task_id.clone();
        let phase = |iteration, phase| {
            progress.event(ProgressEvent::Phase {
                task_id: id.clone(),
                iteration,
                phase,
            })
        };
        phase(0, Phase::Seeding);
        report.seed = seed::obtain(task, &self.seed, &*self.generator, &self.prompts).await?;
        self.report_tokens(&id, &report.seed.calls, progress);
        let mut program = report.seed.program.clone();
        report.final_program = program.clone();
        let mut best: Option<(String, usize)> = None;
        // The seed's outcomes: a later program may not skip what it ran.
        let mut given: Option<Vec<crate::run::TestOutcome>> = None;
        // `Strategy::None` measures the seed alone: one test run, no model call after the seed.
        let rounds = if self.options.strategy.improves() {
            self.options.max_iters
        } else {
            0
        };

        for index in 0..=rounds {
            let mut timings = Timings::default();
            phase(index, Phase::Testing);
            let t = Instant::now();
            let mut tested = self.test(&program, tests).await?;
            match &given {
                Some(given) => {
                    if crate::run::hold_to_given(&mut tested.outcomes, given) > 0 {
                        tested.passed = tested.outcomes.iter().filter(|o| o.passed()).count();
                    }
                }
                None => given = Some(tested.outcomes.clone()),
            }
            timings.tests_ms = ms(t.elapsed());
            progress.event(ProgressEvent::Tested {
                task_id: id.clone(),
                iteration: index,
                candidate: None,
                passed: tested.passed,
                total: tests.len(),
                first_failure: tested
                    .outcomes
                    .iter()
                    .find(|o| !o.passed())
                    .map(|o| (o.status, o.summary.clone())),
            });
            if best.as_ref().is_none_or(|(_, p)| tested.passed >= *p) {
                best = Some((program.clone(), tested.passed));
            }
            let mut iteration = IterationReport {
                index,
                program: program.clone(),
                tests: tested
                    .outcomes
                    .iter()
                    .map(|o| TestResult {
                        test: o.test.describe(),
                        status: o.status,
                        summary: o.summary.clone(),
                    })
                    .collect(),
                passed: tested.passed,
                traced_test: None,
                trace: None,
                verdicts: Vec::new(),
                verdict_problem: None,
                explanation: None,
                diff: None,
                regeneration_problem: None,
                calls: Vec::new(),
                timings,
            };
            let all_pass = tested.passed == tests.len();
            let spent: u64 = report
                .iterations
                .iter()
                .flat_map(|i| i.calls.iter())
                .map(|c| c.cost())
                .sum();
            let out_of_budget = self.options.budget_tokens.is_some_and(|b| spent >= b);
            if all_pass || index == rounds || out_of_budget {
                report.iterations.push(iteration);
                report.status = match (all_pass, index) {
                    (true, 0) => FixStatus::AlreadyPassing,
                    (true, _) => FixStatus::Fixed,
                    (false, _) => FixStatus::NotFixed,
                };
                break;
            }
            let mut round = strategies::Round {
                fixer: self,
                task,
                tested: &tested,
                iteration: &mut iteration,
                progress,
            };
            let next = strategies::improve(self.options.strategy, &mut round).await;
            self.report_tokens(&id, &iteration.calls, progress);
            let next = match next {
                Ok(next) => next,
                Err(e) => {
                    report.iterations.push(iteration);
                    self.finish(report, best);
                    return Err(e);
                }
            };
            if let Some(new_program) = next {
                match shape(task, &report.seed.program, new_program) {
                    Ok(new_program) => {
                        iteration.diff = Some(unified_diff(&program, &new_program));
                        program = new_program;
                    }
                    Err(problem) => iteration.regeneration_problem = Some(problem.to_string()),
                }
            }
            report.iterations.push(iteration);
        }
        self.finish(report, best);
        Ok(())
    }

    /// Choose the final program: the last one if it passes, else the best seen.
    fn finish(&self, report: &mut FixReport, best: Option<(String, usize)>) {
        let last = report.iterations.last();
        match (last, best) {
            (Some(last), _) if last.passed == report.visible_total => {
                report.final_program = last.program.clone();
                report.final_passed = last.passed;
            }
            (_, Some((program, passed))) => {
                report.final_program = program;
                report.final_passed = passed;
            }
            _ => {}
        }
    }

    /// Names the functions of the returned program that no visible test runs (best effort: a
    /// program that cannot be observed names none).
    async fn name_unexercised(
        &self,
        task: &Task,
        tests: &[TestInput],
        report: &mut FixReport,
        progress: &dyn Progress,
    ) {
        // `none` only tests the seed (it is `ldb eval`'s seed phase, over every task).
        if report.final_program.is_empty() || self.options.strategy == Strategy::None {
            return;
        }
        let runner = self.runner.clone();
        let program = report.final_program.clone();
        let tests_owned = tests.to_vec();
        let found = tokio::task::spawn_blocking(move || {
            crate::locate::unexercised(&runner, &program, &tests_owned)
        })
        .await;
        let Ok(Ok(mut found)) = found else {
            return;
        };
        // In a user's module, only the function under test (and what a fix added in it) is
        // the run's business; the module's other functions were never to be checked.
        if task.scope == ProgramScope::Function {
            let lines = crate::python::splice::def_lines(&report.final_program, &task.entry_point);
            found.retain(|f| lines.is_some_and(|(a, b)| a <= f.first_line && f.last_line <= b));
        }
        for f in &found {
            let lines = if f.first_line == f.last_line {
                format!("line {}", f.first_line)
            } else {
                format!("lines {}-{}", f.first_line, f.last_line)
            };
            progress.event(ProgressEvent::Notice {
                task_id: task.task_id.clone(),
                message: format!(
                    "the visible tests never run `{}` ({lines}): nothing checked it; a test \
                     that calls it would",
                    f.function
                ),
            });
        }
        report.unexercised = found;
    }

    async fn test(&self, program: &str, tests: &[TestInput]) -> Result<Tested, AgentError> {
        let runner = self.runner.clone();
        let program_owned = program.to_string();
        let tests_owned = tests.to_vec();
        let results =
            tokio::task::spawn_blocking(move || runner.run_all(&program_owned, &tests_owned))
                .await
                .map_err(|e| AgentError::Internal(format!("test worker thread: {e}")))?;
        let mut outcomes = Vec::with_capacity(results.len());
        for r in results {
            outcomes.push(r?);
        }
        let passed = outcomes.iter().filter(|o| o.passed()).count();
        Ok(Tested {
            program: program.to_string(),
            outcomes,
            passed,
        })
    }

    fn report_tokens(&self, id: &str, calls: &[record::CallRecord], progress: &dyn Progress) {
        if calls.is_empty() {
            return;
        }
        progress.event(ProgressEvent::Tokens {
            task_id: id.to_string(),
            prompt: calls.iter().map(|c| c.prompt_tokens).sum(),
            completion: calls.iter().map(|c| c.completion_tokens).sum(),
            replayed: calls
                .iter()
                .filter(|c| c.cached)
                .map(|c| c.prompt_tokens + c.completion_tokens)
                .sum(),
        });
    }
}

/// The program a model's candidate becomes: the candidate itself, or, when the task repairs one
/// function of the user's module ([`ProgramScope::Function`]), the seed module with the
/// candidate's definition spliced in. `Err` says why a candidate gives no program.
pub(crate) fn shape(
    task: &Task,
    seed: &str,
    candidate: String,
) -> Result<String, crate::python::splice::SpliceError> {
    match task.scope {
        ProgramScope::Whole => Ok(candidate),
        ProgramScope::Function => {
            crate::python::splice::splice(seed, &task.entry_point, &candidate)
        }
    }
}

/// The program as a prompt shows it: the whole program, or for one function of a user's
/// module ([`ProgramScope::Function`]) that function with the context it uses
/// ([`crate::python::view`]); a reply is spliced back either way ([`shape`]).
pub(crate) fn shown_program(task: &Task, program: &str) -> String {
    match task.scope {
        ProgramScope::Whole => program.to_string(),
        ProgramScope::Function => crate::python::view::function_view(program, &task.entry_point)
            .unwrap_or_else(|| program.to_string()),
    }
}

/// Unified diff of two programs.
pub fn unified_diff(old: &str, new: &str) -> String {
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header("before", "after")
        .to_string()
}

fn ms(d: Duration) -> u64 {
    d.as_millis().min(u64::MAX as u128) as u64
}

/// The project's tests that passed on the given program and pass on the returned one: its
/// regression tests (which run only once the given tests pass, and passed before by
/// definition) and the given pytest nodes that passed on the seed. With independent
/// programs, what backs a fix beyond the tests it was searched against.
fn kept_passing(tests: &[TestInput], report: &FixReport) -> usize {
    if report.status != FixStatus::Fixed {
        return 0;
    }
    let passed = |it: &IterationReport| -> Vec<bool> {
        it.tests
            .iter()
            .map(|t| t.status == crate::run::TestStatus::Passed)
            .collect()
    };
    let (Some(seed), Some(last)) = (
        report.iterations.first(),
        report
            .iterations
            .iter()
            .rev()
            .find(|it| it.program == report.final_program),
    ) else {
        return 0;
    };
    let (before, after) = (passed(seed), passed(last));
    tests
        .iter()
        .enumerate()
        .filter(|(i, t)| {
            let now = after.get(*i).copied().unwrap_or(false);
            match t {
                TestInput::Pytest { guard: true, .. } => now,
                TestInput::Pytest { .. } => now && before.get(*i).copied().unwrap_or(false),
                _ => false,
            }
        })
        .count()
}
