//! One evaluation run: select tasks, get their seeds, run every strategy on them, score, record.
//!
//! Seeds come first (`seeds.jsonl` in the run directory) so that every strategy debugs the same
//! seed with the same budget. Then each (task, strategy) pair not yet in its results file runs,
//! up to `concurrency` at once, task by task so a partial run still compares strategies on the
//! same tasks. A task's hidden tests run after its loop has ended, and its record is appended at
//! once. Failures that would hit every task (credentials, an unreachable endpoint, a broken
//! sandbox) stop the run without recording the tasks they hit; so does a streak of failed model
//! calls. Other failures are recorded as the task's error class and the run goes on.
//!
//! Parts: `plan` (what to run), `events` (what a run reports and returns), `seeding` (the
//! seed phase), `compacted` (resuming a run whose records were compacted), `unit` (one task
//! under one strategy, scored), `rescore` (a finished run scored again on corrected hidden
//! tests).

mod compacted;
mod events;
mod plan;
mod rescore;
mod seeding;
mod unit;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::stream::{self, StreamExt};

pub use events::{EvalEnv, EvalEvent, EvalOutcome, EvalProgress, QuietEval, Tally};
pub use plan::{default_out_dir, default_run_name, EvalPlan};
pub use rescore::{rescore_run, RescoredFile};

use super::results::{ResultsLog, SeedRecord, TaskRecord};
use super::score::{ErrorClass, HiddenScorer};
use super::shard;
use super::{EvalError, StrategySpec};
use crate::repair::{FixOptions, Fixer, SeedSource, Strategy};
use crate::task::Task;
use crate::trace::sample::SampleConfig;
use crate::trace::Level;
use unit::UnitContext;

/// Characters kept per variable value in traces (as `ldb fix`).
const VALUE_CHARS: usize = 120;

/// Consecutive task-level backend failures after which the run stops (the endpoint is down).
fn breaker_threshold(concurrency: usize) -> usize {
    (concurrency * 2).max(5)
}

struct Shared {
    stop: AtomicBool,
    fatal: Mutex<Option<EvalError>>,
    backend_streak: AtomicUsize,
    breaker: usize,
    progress: Arc<dyn EvalProgress>,
}

impl Shared {
    fn halt(&self, error: EvalError) {
        self.stop.store(true, Ordering::SeqCst);
        if let Ok(mut slot) = self.fatal.lock() {
            slot.get_or_insert(error);
        }
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Counts backend failures in a row; trips the breaker when there are too many.
    fn note_backend(&self, class: Option<ErrorClass>, message: Option<&str>) {
        if class.is_some_and(ErrorClass::is_backend) {
            let n = self.backend_streak.fetch_add(1, Ordering::SeqCst) + 1;
            if n >= self.breaker {
                self.halt(EvalError::Fatal {
                    class: ErrorClass::BackendRetries,
                    message: format!(
                        "{n} tasks in a row failed on the model backend (last: {}); stopping",
                        message.unwrap_or("?")
                    ),
                });
            }
        } else {
            self.backend_streak.store(0, Ordering::SeqCst);
        }
    }
}

/// Runs `plan`. Errors before any task ran (bad input, a results file of another run) are
/// returned as `Err`; a run stopped midway returns `Ok` with `stopped` set.
pub async fn run_eval(
    plan: &EvalPlan,
    env: EvalEnv,
    progress: Arc<dyn EvalProgress>,
) -> Result<EvalOutcome, EvalError> {
    if plan.strategies.is_empty() {
        return Err(EvalError::input(
            "no strategy to run",
            "pass --strategy, e.g. --strategy ldb",
        ));
    }
    let candidates = plan.candidates()?;
    std::fs::create_dir_all(&plan.out_dir).map_err(|e| EvalError::io(&plan.out_dir, e))?;
    shard::claim_dir(&plan.out_dir, plan.shard_manifest()?.as_ref())?;
    let generator_name = env.generator.name();
    let debugger_name = env.debugger.name();

    // Open every file first: a mismatched one refuses the run before anything is spent.
    let (seed_log, old_seeds) = ResultsLog::<SeedRecord>::open(
        &plan.seeds_path(),
        &plan.seed_config(&generator_name),
        plan.retry_errors,
    )?;
    let mut logs = HashMap::new();
    let mut done: HashMap<String, HashMap<String, TaskRecord>> = HashMap::new();
    for spec in &plan.strategies {
        let path = plan.results_path(spec);
        let config = plan.config(spec, &generator_name, &debugger_name);
        let (log, old) = ResultsLog::<TaskRecord>::open(&path, &config, plan.retry_errors)?;
        if !old.is_empty() {
            progress.event(EvalEvent::Resumed {
                file: path.clone(),
                records: old.len(),
            });
        }
        done.insert(
            spec.label(),
            old.into_iter().map(|r| (r.task_id.clone(), r)).collect(),
        );
        logs.insert(spec.label(), Arc::new(log));
    }
    if !old_seeds.is_empty() {
        progress.event(EvalEvent::Resumed {
            file: plan.seeds_path(),
            records: old_seeds.len(),
        });
    }
    let shared = Arc::new(Shared {
        stop: AtomicBool::new(false),
        fatal: Mutex::new(None),
        backend_streak: AtomicUsize::new(0),
        breaker: breaker_threshold(plan.concurrency),
        progress: progress.clone(),
    });

    // Seeds, and with them the selection.
    let seed_fixer = Arc::new(Fixer {
        generator: env.generator.clone(),
        debugger: env.debugger.clone(),
        runner: env.runner.clone(),
        prompts: env.prompts.clone(),
        options: FixOptions {
            strategy: Strategy::None,
            level: Level::Block,
            max_iters: 0,
            sample: SampleConfig::for_level(Level::Block),
            value_chars: VALUE_CHARS,
            temperature: plan.temperature,
            ..FixOptions::default()
        },
        seed: match &plan.seed_programs {
            Some((path, programs)) => SeedSource::Map {
                path: path.clone(),
                programs: programs.clone(),
            },
            None => SeedSource::TaskOrGenerate,
        },
    });
    let seed_log = Arc::new(seed_log);
    let mut seeds: HashMap<String, SeedRecord> = old_seeds
        .into_iter()
        .map(|s| (s.task_id.clone(), s))
        .collect();
    let compacted = compacted::take_compacted(&mut seeds, &done, &plan.seeds_path())?;
    let selected = seeding::select(
        plan,
        &candidates,
        &mut seeds,
        &seed_fixer,
        &seed_log,
        &shared,
    )
    .await;
    compacted::check_restored(&seeds, &compacted, &plan.seeds_path())?;

    let files: Vec<(StrategySpec, PathBuf)> = plan
        .strategies
        .iter()
        .map(|s| (*s, plan.results_path(s)))
        .collect();
    let mut outcome = EvalOutcome {
        selected: selected.iter().map(|t| t.task_id.clone()).collect(),
        seeds_file: plan.seeds_path(),
        files,
        records: HashMap::new(),
        stopped: None,
    };
    if shared.stopped() {
        outcome.stopped = shared.fatal.lock().ok().and_then(|mut f| f.take());
        outcome.records = collect(&done, &outcome.selected);
        return Ok(outcome);
    }

    // Debugging.
    let seed_programs: HashMap<String, String> = seeds
        .iter()
        .map(|(id, s)| (id.clone(), s.program.clone()))
        .collect();
    let mut fixers = HashMap::new();
    for spec in &plan.strategies {
        let mut sample = SampleConfig::for_level(spec.level);
        sample.token_budget = plan.trace_budget;
        let max_iters = if spec.strategy == Strategy::None {
            0
        } else {
            plan.max_iters
        };
        fixers.insert(
            spec.label(),
            Arc::new(Fixer {
                generator: env.generator.clone(),
                debugger: env.debugger.clone(),
                runner: env.runner.clone(),
                prompts: env.prompts.clone(),
                options: FixOptions {
                    strategy: spec.strategy,
                    level: spec.level,
                    max_iters,
                    sample,
                    value_chars: VALUE_CHARS,
                    temperature: plan.temperature,
                    budget_tokens: plan.budget_tokens,
                    rng_seed: plan.rng_seed,
                    search: plan.search.clone(),
                    prefill: plan.prefill,
                    ..FixOptions::default()
                },
                seed: SeedSource::Map {
                    path: plan.seeds_path(),
                    programs: seed_programs.clone(),
                },
            }),
        );
    }
    let scorer = Arc::new(HiddenScorer::new(
        env.runner.clone(),
        plan.harness,
        plan.concurrency,
    ));
    let tallies = Arc::new(Mutex::new(initial_tallies(plan, &selected, &done)));
    let mut units = Vec::new();
    for task in &selected {
        for spec in &plan.strategies {
            let already = done
                .get(&spec.label())
                .is_some_and(|d| d.contains_key(&task.task_id));
            if !already {
                units.push((task.clone(), *spec));
            }
        }
    }
    let mut remaining: HashMap<String, usize> = HashMap::new();
    for (task, _) in &units {
        *remaining.entry(task.task_id.clone()).or_default() += 1;
    }
    let remaining = Arc::new(Mutex::new(remaining));
    progress.event(EvalEvent::DebugStarted {
        total: units.len(),
        tallies: snapshot(&tallies),
    });
    let seeds = Arc::new(seeds);
    // Units start in order (task by task, every strategy of a task before the next task), so
    // an interrupted run has compared its strategies on the same tasks; each runs as its own
    // Tokio task (spread over the worker threads), at most `concurrency` at once.
    let mut finished = stream::iter(units)
        .map(|(task, spec)| {
            let ctx = UnitContext {
                fixer: fixers.get(&spec.label()).cloned(),
                log: logs.get(&spec.label()).cloned(),
                seed: seeds.get(&task.task_id).cloned(),
                scorer: scorer.clone(),
                shared: shared.clone(),
                tallies: tallies.clone(),
                remaining: remaining.clone(),
                only_failing: plan.only_failing,
                max_iters: plan.max_iters,
                reports_dir: plan.save_reports.then(|| plan.out_dir.clone()),
            };
            tokio::spawn(async move {
                if ctx.shared.stopped() {
                    return None;
                }
                ctx.run(task, spec).await
            })
        })
        .buffer_unordered(plan.concurrency.max(1));
    while let Some(joined) = finished.next().await {
        match joined {
            Ok(Some(record)) => {
                done.entry(record.strategy.clone())
                    .or_default()
                    .insert(record.task_id.clone(), record);
            }
            Ok(None) => {}
            Err(e) => shared.halt(EvalError::Fatal {
                class: ErrorClass::Internal,
                message: format!("a task stopped unexpectedly: {e}"),
            }),
        }
    }
    outcome.stopped = shared.fatal.lock().ok().and_then(|mut f| f.take());
    outcome.records = collect(&done, &outcome.selected);
    Ok(outcome)
}

fn collect(
    done: &HashMap<String, HashMap<String, TaskRecord>>,
    selected: &[String],
) -> HashMap<String, Vec<TaskRecord>> {
    done.iter()
        .map(|(label, records)| {
            let list = selected
                .iter()
                .filter_map(|id| records.get(id).cloned())
                .collect();
            (label.clone(), list)
        })
        .collect()
}

fn initial_tallies(
    plan: &EvalPlan,
    selected: &[Task],
    done: &HashMap<String, HashMap<String, TaskRecord>>,
) -> Vec<Tally> {
    plan.strategies
        .iter()
        .map(|spec| {
            let mut t = Tally {
                strategy: spec.label(),
                selected: selected.len(),
                ..Tally::default()
            };
            if let Some(records) = done.get(&spec.label()) {
                for task in selected {
                    if let Some(r) = records.get(&task.task_id) {
                        add_to_tally(&mut t, r);
                    }
                }
            }
            t
        })
        .collect()
}

fn add_to_tally(t: &mut Tally, r: &TaskRecord) {
    t.done += 1;
    t.passed += usize::from(r.final_hidden_pass);
    t.seed_passed += usize::from(r.seed_hidden_pass);
    t.fixed += usize::from(!r.seed_hidden_pass && r.final_hidden_pass);
    t.errors += usize::from(r.error_class.is_some());
}

fn snapshot(tallies: &Mutex<Vec<Tally>>) -> Vec<Tally> {
    tallies.lock().map(|t| t.clone()).unwrap_or_default()
}

/// The model of a run that needs none (`--strategy none` with seeds from a file): any call is a
/// configuration error.
pub struct NoModel;

#[async_trait::async_trait]
impl crate::generate::model::ChatModel for NoModel {
    async fn chat(
        &self,
        _request: &crate::generate::model::ChatRequest,
    ) -> Result<crate::generate::model::ChatResponse, crate::generate::model::ModelError> {
        Err(crate::generate::model::ConfigError::NoModelForRun.into())
    }

    fn name(&self) -> String {
        "-".into()
    }
}
