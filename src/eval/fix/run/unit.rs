//! One (task, strategy) run: the fix loop (unless the seed is final), then the hidden tests on
//! every program the run could have returned, then the task's record.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::{add_to_tally, EvalEvent, Shared, Tally};
use crate::eval::fix::results::{
    CandidateSummary, HiddenSource, RecordTimings, ResultsLog, SeedRecord, TaskRecord, Tokens,
};
use crate::eval::fix::score::{program_at_budget, ErrorClass, HiddenScorer};
use crate::eval::fix::{EvalError, StrategySpec};
use crate::repair::progress::{Progress, ProgressEvent};
use crate::repair::record::{FixReport, FixStatus};
use crate::repair::{Fixer, Strategy};
use crate::task::Task;

/// Forwards the fix loop's progress as [`EvalEvent`]s.
pub(super) struct UnitProgress {
    pub(super) shared: Arc<Shared>,
    pub(super) strategy: String,
}

impl Progress for UnitProgress {
    fn event(&self, event: ProgressEvent) {
        let progress = &self.shared.progress;
        match event {
            ProgressEvent::Phase {
                task_id,
                iteration,
                phase,
            } => progress.event(EvalEvent::Activity {
                task_id,
                strategy: self.strategy.clone(),
                text: format!("iteration {iteration}: {}", phase.label()),
            }),
            ProgressEvent::Tokens {
                prompt, completion, ..
            } => progress.event(EvalEvent::Tokens { prompt, completion }),
            ProgressEvent::Notice { task_id, message } => {
                progress.event(EvalEvent::Notice(format!("[{task_id}] {message}")))
            }
            // Test results and the end of a task are reported with the task's record.
            _ => {}
        }
    }
}

/// Everything one (task, strategy) run needs.
pub(super) struct UnitContext {
    pub(super) fixer: Option<Arc<Fixer>>,
    pub(super) log: Option<Arc<ResultsLog<TaskRecord>>>,
    pub(super) seed: Option<SeedRecord>,
    pub(super) scorer: Arc<HiddenScorer>,
    pub(super) shared: Arc<Shared>,
    pub(super) tallies: Arc<Mutex<Vec<Tally>>>,
    pub(super) remaining: Arc<Mutex<HashMap<String, usize>>>,
    pub(super) only_failing: bool,
    pub(super) max_iters: usize,
    /// The output folder, when each task's report is kept there.
    pub(super) reports_dir: Option<PathBuf>,
}

impl UnitContext {
    pub(super) async fn run(self, task: Task, spec: StrategySpec) -> Option<TaskRecord> {
        let record = self.record(&task, spec).await;
        if let Ok(mut remaining) = self.remaining.lock() {
            let left = remaining.entry(task.task_id.clone()).or_default();
            *left = left.saturating_sub(1);
            if *left == 0 {
                self.scorer.forget(&task.task_id);
            }
        }
        let (record, report) = match record {
            Ok(r) => r,
            Err(e) => {
                self.shared.halt(e);
                return None;
            }
        };
        // Before the record: a record never names a report that is not there.
        if let (Some(dir), Some(report)) = (&self.reports_dir, &report) {
            if let Err(e) = crate::eval::fix::fix_reports::save(dir, &record.strategy, report) {
                self.shared.halt(e);
                return None;
            }
        }
        self.shared
            .note_backend(record.error_class, record.error.as_deref());
        let log = self.log.as_ref()?;
        if let Err(e) = log.append(&record) {
            self.shared.halt(e);
            return None;
        }
        let tallies = match self.tallies.lock() {
            Ok(mut t) => {
                if let Some(tally) = t.iter_mut().find(|t| t.strategy == record.strategy) {
                    add_to_tally(tally, &record);
                }
                t.clone()
            }
            Err(_) => Vec::new(),
        };
        self.shared.progress.event(EvalEvent::TaskDone {
            record: Box::new(record.clone()),
            tallies,
        });
        Some(record)
    }

    /// Runs the strategy (unless the seed is final) and scores the result; the fix report when
    /// the strategy ran. `Err` only for failures that stop the run.
    async fn record(
        &self,
        task: &Task,
        spec: StrategySpec,
    ) -> Result<(TaskRecord, Option<FixReport>), EvalError> {
        let label = spec.label();
        let Some(seed) = &self.seed else {
            return Err(EvalError::Fatal {
                class: ErrorClass::Internal,
                message: format!("[{}] no seed record", task.task_id),
            });
        };
        let mut record = TaskRecord {
            kind: "task".into(),
            task_id: task.task_id.clone(),
            strategy: label.clone(),
            status: None,
            debugged: false,
            seed_visible_pass: seed.visible_pass,
            final_visible_pass: seed.visible_pass,
            visible_passed: seed.visible_passed,
            visible_total: seed.visible_total,
            seed_hidden_pass: false,
            final_hidden_pass: false,
            hidden_by_budget: vec![false; self.max_iters + 1],
            hidden_tests: HiddenScorer::tests_of(task).1,
            final_hidden_status: None,
            final_hidden_summary: String::new(),
            iterations: 0,
            tokens: Tokens::default(),
            seed_tokens: seed.tokens,
            calls: 0,
            timings: RecordTimings::default(),
            error_class: None,
            error: None,
            seed_origin: seed.origin.clone(),
            final_program: seed.program.clone(),
            candidates: 0,
            first_pass_hidden_pass: None,
            cost_by_iteration: Vec::new(),
            candidate_log: Vec::new(),
            confirmation: None,
            seed_signature: Vec::new(),
        };
        if seed.error_class.is_some() {
            record.error_class = Some(ErrorClass::SeedUnavailable);
            record.error = seed.error.clone();
            record.final_hidden_summary = "no seed program".into();
            return Ok((record, None));
        }
        let seed_is_final =
            spec.strategy == Strategy::None || (self.only_failing && seed.visible_pass);
        let report = if seed_is_final {
            record.status = Some(if seed.visible_pass {
                FixStatus::AlreadyPassing
            } else {
                FixStatus::NotFixed
            });
            None
        } else {
            let Some(fixer) = &self.fixer else {
                return Err(EvalError::Fatal {
                    class: ErrorClass::Internal,
                    message: format!("no fixer for strategy {label}"),
                });
            };
            let adapter = UnitProgress {
                shared: self.shared.clone(),
                strategy: label.clone(),
            };
            let report = fixer.fix(task, &adapter).await;
            if report.status == FixStatus::Error {
                let message = report.error.clone().unwrap_or_default();
                let class = report.error_class.unwrap_or(ErrorClass::Other);
                if class.is_fatal() {
                    return Err(EvalError::Fatal {
                        class,
                        message: format!("[{}] {label}: {message}", task.task_id),
                    });
                }
                record.error_class = Some(class);
                record.error = Some(message);
            }
            fill_from_report(&mut record, &report);
            Some(report)
        };

        // Hidden tests, after the loop.
        record.timings.hidden_ms += score_hidden(
            &self.scorer,
            task,
            &seed.program,
            &mut record,
            report.as_ref(),
            self.max_iters,
        )
        .await?;
        Ok((record, report))
    }
}

/// Scores `record` on `task`'s hidden tests: the seed, the final program, each iteration
/// budget's program and every candidate that passed the visible tests (any of them could have
/// been returned). Fills the record's hidden verdicts; returns the milliseconds spent. `report`
/// is the run's fix report (`None` when the seed was final).
pub(super) async fn score_hidden(
    scorer: &HiddenScorer,
    task: &Task,
    seed_program: &str,
    record: &mut TaskRecord,
    report: Option<&FixReport>,
    max_iters: usize,
) -> Result<u64, EvalError> {
    let mut programs: Vec<String> = vec![seed_program.to_string(), record.final_program.clone()];
    let first_passing = report
        .and_then(|r| r.selection.as_ref())
        .map(|s| s.first_passing_program.clone());
    if let Some(report) = report {
        for k in 0..=max_iters {
            programs.push(program_at_budget(report, k).to_string());
        }
        programs.extend(
            report
                .candidates
                .iter()
                .filter(|c| c.visible_passed == Some(record.visible_total))
                .filter_map(|c| c.program.clone()),
        );
    }
    programs.extend(first_passing.clone());
    let mut spent = 0;
    let mut verdicts: HashMap<String, bool> = HashMap::new();
    for program in programs {
        if verdicts.contains_key(&program) {
            continue;
        }
        let (result, ms) = scorer
            .score(task, &program)
            .await
            .map_err(|e| EvalError::Fatal {
                class: ErrorClass::Sandbox,
                message: format!("[{}] scoring on hidden tests: {e}", task.task_id),
            })?;
        spent += ms;
        if program == record.final_program {
            record.final_hidden_status = Some(result.status);
            record.final_hidden_summary = result.summary.clone();
        }
        verdicts.insert(program, result.passed);
    }
    let verdict = |p: &str| verdicts.get(p).copied().unwrap_or(false);
    record.seed_hidden_pass = verdict(seed_program);
    record.final_hidden_pass = verdict(&record.final_program);
    record.first_pass_hidden_pass = first_passing.as_deref().map(verdict);
    for c in &mut record.candidate_log {
        if c.visible_passed == Some(record.visible_total) {
            let program = report
                .and_then(|r| r.candidates.get(c.id))
                .and_then(|r| r.program.as_deref());
            c.hidden_pass = program.map(verdict);
        }
    }
    record.hidden_by_budget = (0..=max_iters)
        .map(|k| match report {
            Some(r) => verdict(program_at_budget(r, k)),
            None => record.final_hidden_pass,
        })
        .collect();
    record.hidden_tests = HiddenScorer::tests_of(task).1;
    if record.hidden_tests == HiddenSource::Visible {
        record.final_hidden_summary = format!(
            "(no hidden tests; scored on visible) {}",
            record.final_hidden_summary
        );
    }
    Ok(spent)
}

fn fill_from_report(record: &mut TaskRecord, report: &FixReport) {
    record.status = Some(report.status);
    record.final_program = report.final_program.clone();
    record.visible_passed = report.final_passed;
    record.visible_total = report.visible_total;
    record.final_visible_pass =
        !report.iterations.is_empty() && report.final_passed == report.visible_total;
    record.iterations = if report.status == FixStatus::Error {
        report.iterations.len()
    } else {
        report.iterations.len().saturating_sub(1)
    };
    record.debugged = record.iterations > 0;
    record.tokens = Tokens {
        prompt: report.usage.prompt_tokens,
        completion: report.usage.completion_tokens,
        cached_prompt: report.usage.cached_prompt_tokens,
        replayed: report.usage.replayed_tokens,
    };
    record.candidates = report.candidates.len().saturating_sub(1);
    let mut spent = 0;
    record.candidate_log = report
        .candidates
        .iter()
        .map(|c| {
            spent += c.tokens;
            CandidateSummary {
                id: c.id,
                round: c.round,
                proposer: c.proposer,
                parent: c.parent,
                tokens: c.tokens,
                spent,
                duplicate_of: c.duplicate_of,
                visible_passed: c.visible_passed,
                group: c.group,
                hidden_pass: None,
                signature: report
                    .selection
                    .as_ref()
                    .and_then(|s| s.signatures.get(&c.id).cloned()),
                diff_lines: c.diff_lines,
                edit: c.edit.clone(),
            }
        })
        .collect();
    record.confirmation = report.confirmation.clone();
    record.seed_signature = report
        .selection
        .as_ref()
        .map(|s| s.seed_signature.clone())
        .unwrap_or_default();
    let mut cost = 0;
    record.cost_by_iteration = report
        .iterations
        .iter()
        .map(|it| {
            cost += it.calls.iter().map(|c| c.cost()).sum::<u64>();
            cost
        })
        .collect();
    record.calls = report.usage.calls;
    record.timings = RecordTimings {
        llm_ms: report.timings.llm_ms,
        non_llm_ms: report
            .timings
            .total_ms
            .saturating_sub(report.timings.llm_ms),
        total_ms: report.timings.total_ms,
        tests_ms: report.timings.tests_ms,
        trace_ms: report.timings.trace_ms,
        hidden_ms: 0,
    };
}
