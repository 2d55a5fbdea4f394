//! The debugging loop (LDB): test the program; if a visible test fails, trace it block by block,
//! ask the debugger model for a verdict on every block, regenerate the program from those
//! verdicts, and repeat until the visible tests pass or the iteration budget is spent.
//!
//! Data flows one way: task → seed ([`seed`]) → runner → trace → verdicts ([`conversation`]) →
//! regenerated program → [`report`]. Hidden tests never reach a prompt: only the task prompt, the
//! program, visible tests and their results are rendered.

mod conversation;
pub mod progress;
pub mod report;
pub mod seed;

use std::sync::Arc;
use std::time::{Duration, Instant};

use similar::TextDiff;

use conversation::Conversation;
use progress::{Phase, Progress, ProgressEvent};
use report::{FixReport, FixStatus, IterationReport, SeedInfo, TestResult, Timings, UsageTotals};
pub use seed::SeedSource;

use crate::model::{ChatModel, ModelError};
use crate::prompts::{PromptError, Prompts};
use crate::python::cfg::ProgramCfg;
use crate::python::source::SourceFile;
use crate::runner::{visible_tests, Runner, TestInput, TestOutcome, TestStatus};
use crate::sandbox::SandboxError;
use crate::task::Task;
use crate::trace::render::{TraceEntry, TraceReport};
use crate::trace::sample::SampleConfig;
use crate::trace::units::UnitMap;
use crate::trace::{Level, TraceRequest, TracerKind};

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

/// Settings of the loop.
#[derive(Debug, Clone)]
pub struct FixOptions {
    pub level: Level,
    /// Debugging rounds at most (the paper uses 10).
    pub max_iters: usize,
    pub sample: SampleConfig,
    /// Characters kept per variable value in traces.
    pub value_chars: usize,
    pub temperature: f32,
    pub seed: SeedSource,
}

impl Default for FixOptions {
    fn default() -> Self {
        FixOptions {
            level: Level::Block,
            max_iters: 10,
            sample: SampleConfig::for_level(Level::Block),
            value_chars: 120,
            temperature: 0.0,
            seed: SeedSource::default(),
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
        };
        if let Err(e) = self.run_loop(task, &tests, &mut report, progress).await {
            report.status = FixStatus::Error;
            report.error = Some(e.to_string());
        }
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
            report.timings.llm_ms += call.latency_ms;
        }
        for it in &report.iterations {
            report.timings.tests_ms += it.timings.tests_ms;
            report.timings.trace_ms += it.timings.trace_ms;
        }
        report.timings.total_ms = ms(started.elapsed());
        progress.event(ProgressEvent::Finished {
            task_id: task.task_id.clone(),
            status: format!("{:?}", report.status),
            passed: report.final_passed,
            total: report.visible_total,
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
        report.seed =
            seed::obtain(task, &self.options.seed, &*self.generator, &self.prompts).await?;
        self.report_tokens(&id, &report.seed.calls, progress);
        let mut program = report.seed.program.clone();
        report.final_program = program.clone();
        let mut best: Option<(String, usize)> = None;

        for index in 0..=self.options.max_iters {
            let mut timings = Timings::default();
            phase(index, Phase::Testing);
            let t = Instant::now();
            let tested = self.test(&program, tests).await?;
            timings.tests_ms = ms(t.elapsed());
            progress.event(ProgressEvent::Tested {
                task_id: id.clone(),
                iteration: index,
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
                diff: None,
                regeneration_problem: None,
                calls: Vec::new(),
                timings,
            };
            let all_pass = tested.passed == tests.len();
            if all_pass || index == self.options.max_iters {
                report.iterations.push(iteration);
                report.status = match (all_pass, index) {
                    (true, 0) => FixStatus::AlreadyPassing,
                    (true, _) => FixStatus::Fixed,
                    (false, _) => FixStatus::NotFixed,
                };
                break;
            }
            let next = self
                .debug_round(task, &tested, &mut iteration, progress)
                .await;
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
                iteration.diff = Some(unified_diff(&program, &new_program));
                program = new_program;
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

    /// Trace the first failing test, get verdicts, regenerate. Returns the new program, if the
    /// model produced one.
    async fn debug_round(
        &self,
        task: &Task,
        tested: &Tested,
        iteration: &mut IterationReport,
        progress: &dyn Progress,
    ) -> Result<Option<String>, AgentError> {
        let id = &task.task_id;
        let Some(failing) = tested.outcomes.iter().find(|o| !o.passed()) else {
            return Ok(None);
        };
        progress.event(ProgressEvent::Phase {
            task_id: id.clone(),
            iteration: iteration.index,
            phase: Phase::Tracing,
        });
        let t = Instant::now();
        let traced = self.trace(&tested.program, &failing.test).await?;
        iteration.timings.trace_ms = ms(t.elapsed());
        iteration.traced_test = Some(failing.test.describe());

        let unit_name = match self.options.level {
            Level::Line => "line",
            Level::Block => "block",
            Level::Function => "function call",
        };
        let (trace_text, labels, failing_result) = match &traced {
            Ok((outcome, report)) => {
                let labels: Vec<String> = report
                    .entries
                    .iter()
                    .filter_map(|e| match e {
                        TraceEntry::Step(s) => Some(s.label.clone()),
                        TraceEntry::Omitted { .. } => None,
                    })
                    .collect();
                (report.to_text(), labels, result_text(outcome))
            }
            Err(reason) => (
                format!("(no trace: {reason})"),
                Vec::new(),
                result_text(failing),
            ),
        };
        iteration.trace = Some(trace_text.clone());
        let test_summary: Vec<String> = tested
            .outcomes
            .iter()
            .map(|o| {
                if o.passed() {
                    format!("PASS `{}`", o.test.describe())
                } else {
                    format!(
                        "{} `{}`: {}",
                        o.status.label(),
                        o.test.describe(),
                        o.summary
                    )
                }
            })
            .collect();
        let vars = serde_json::json!({
            "task_prompt": task.prompt,
            "program": tested.program.trim_end(),
            "test_summary": test_summary,
            "failing_test": failing.test.describe(),
            "failing_result": failing_result,
            "unit_name": unit_name,
            "trace": trace_text,
            "labels": labels,
        });

        let mut conv = Conversation::new(&self.prompts)?;
        conv.temperature = self.options.temperature;
        conv.user(self.prompts.render("debug", &vars)?);
        let traced_ok = !labels.is_empty();
        if traced_ok {
            progress.event(ProgressEvent::Phase {
                task_id: id.clone(),
                iteration: iteration.index,
                phase: Phase::Debugging,
            });
            let outcome = conv
                .ask_verdicts(&*self.debugger, &labels, &self.prompts)
                .await;
            iteration.calls = conv.calls.clone();
            let (verdicts, problem) = outcome?;
            iteration.verdicts = verdicts;
            iteration.verdict_problem = problem;
        } else {
            iteration.verdict_problem = Some("no trace, so no verdicts were asked for".into());
        }
        progress.event(ProgressEvent::Phase {
            task_id: id.clone(),
            iteration: iteration.index,
            phase: Phase::Regenerating,
        });
        let wrong: Vec<_> = iteration
            .verdicts
            .iter()
            .filter(|v| !v.correct)
            .cloned()
            .collect();
        let regen = self.prompts.render(
            "regenerate",
            serde_json::json!({ "wrong_blocks": wrong, "traced": traced_ok }),
        )?;
        if traced_ok {
            conv.user(regen);
        } else if let Some(last) = conv.messages.last_mut() {
            // No verdict exchange: one message carries the context and the request.
            last.content = format!("{}\n{}", last.content.trim_end(), regen);
        }
        let outcome = conv
            .ask_program(
                &*self.debugger,
                &task.entry_point,
                "regenerate",
                "repair_program",
                &self.prompts,
            )
            .await;
        iteration.calls = conv.calls.clone();
        let (program, problem) = outcome?;
        iteration.regeneration_problem = problem;
        Ok(program)
    }

    /// Run `test` traced; `Err` carries why no trace could be had (the program does not parse).
    async fn trace(
        &self,
        program: &str,
        test: &TestInput,
    ) -> Result<Result<(TestOutcome, TraceReport), String>, AgentError> {
        let src = SourceFile::new(program.to_string());
        let cfg = match ProgramCfg::build(&src) {
            Ok(cfg) => cfg,
            Err(e) => {
                return Ok(Err(format!(
                    "the program does not parse (line {}: {})",
                    e.line, e.message
                )))
            }
        };
        let script = matches!(test, TestInput::Io { .. });
        let units = UnitMap::build(&cfg, self.options.level, script, src.line_count());
        let sample = self.options.sample;
        let wall = self.runner.sandbox().limits().wall_ms;
        let request = TraceRequest {
            scopes: units.scopes().to_vec(),
            keep_first: sample.head,
            keep_last: sample.tail,
            value_chars: self.options.value_chars,
            tracer: TracerKind::Native,
            deadline_ms: wall.saturating_mul(8) / 10,
        };
        let runner = self.runner.clone();
        let program = program.to_string();
        let test = test.clone();
        let outcome =
            tokio::task::spawn_blocking(move || runner.run(&program, &test, Some(request)))
                .await
                .map_err(|e| AgentError::Internal(format!("trace worker thread: {e}")))??;
        let Some(raw) = outcome.trace.clone() else {
            return Ok(Err(format!(
                "the run ended before the tracer could report ({})",
                outcome.summary
            )));
        };
        if raw.instances.is_empty() {
            return Ok(Err(format!(
                "no {} of the program ran before the test ended ({})",
                match self.options.level {
                    Level::Line => "line",
                    Level::Block => "block",
                    Level::Function => "function",
                },
                outcome.summary
            )));
        }
        let report = TraceReport::build(&raw, &units, &src, &sample);
        Ok(Ok((outcome, report)))
    }

    fn report_tokens(&self, id: &str, calls: &[report::CallRecord], progress: &dyn Progress) {
        if calls.is_empty() {
            return;
        }
        progress.event(ProgressEvent::Tokens {
            task_id: id.to_string(),
            prompt: calls.iter().map(|c| c.prompt_tokens).sum(),
            completion: calls.iter().map(|c| c.completion_tokens).sum(),
        });
    }
}

fn result_text(outcome: &TestOutcome) -> String {
    match outcome.status {
        TestStatus::Passed => "it passed".into(),
        _ => format!("{} ({})", outcome.status.label(), outcome.summary),
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
