//! One evaluation run: select tasks, get their seeds, run every strategy on them, score, record.
//!
//! Seeds come first (`seeds.jsonl` in the run directory) so that every strategy debugs the same
//! seed with the same budget. Then each (task, strategy) pair not yet in its results file runs,
//! up to `concurrency` at once, task by task so a partial run still compares strategies on the
//! same tasks. A task's hidden tests run after its loop has ended, and its record is appended at
//! once. Failures that would hit every task (credentials, an unreachable endpoint, a broken
//! sandbox) stop the run without recording the tasks they hit; so does a streak of failed model
//! calls. Other failures are recorded as the task's error class and the run goes on.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Semaphore;

use super::datasets::{LoadedDataset, SeedSpec};
use super::results::{
    CandidateSummary, HiddenSource, RecordTimings, ResultsLog, RunConfig, SeedRecord, TaskRecord,
    Tokens,
};
use super::score::{program_at_budget, ErrorClass, Harness, HiddenScorer};
use super::shard::{self, Manifest, Shard};
use super::{EvalError, StrategySpec};
use crate::agent::progress::{Progress, ProgressEvent};
use crate::agent::report::{FixReport, FixStatus};
use crate::agent::{FixOptions, Fixer, SeedSource, Strategy};
use crate::model::SharedModel;
use crate::prompts::Prompts;
use crate::runner::Runner;
use crate::task::Task;
use crate::trace::sample::SampleConfig;
use crate::trace::Level;

/// Characters kept per variable value in traces (as `ldb fix`).
const VALUE_CHARS: usize = 120;

/// What to run.
#[derive(Debug, Clone)]
pub struct EvalPlan {
    pub dataset: LoadedDataset,
    /// Only these task ids (in dataset order); empty = all.
    pub task_ids: Vec<String>,
    pub seeds: SeedSpec,
    /// Programs of the seed file, when seeds come from one (`task_id` → program).
    pub seed_programs: Option<(PathBuf, HashMap<String, String>)>,
    pub strategies: Vec<StrategySpec>,
    pub max_iters: usize,
    pub temperature: f32,
    /// Token budget of the rendered trace in each debugging prompt.
    pub trace_budget: usize,
    /// Debug only tasks whose seed fails a visible test; the others keep their seed.
    pub only_failing: bool,
    /// Stop selecting after this many tasks (counting only failing seeds with `only_failing`).
    pub limit: Option<usize>,
    pub concurrency: usize,
    pub out_dir: PathBuf,
    /// Redo tasks whose record says they failed on the backend or sandbox.
    pub retry_errors: bool,
    /// How hidden tests run (see [`Harness`]).
    pub harness: Harness,
    /// Model tokens per task at most, for every strategy alike (`--budget-tokens`).
    pub budget_tokens: Option<u64>,
    /// Base of the sampling seeds.
    pub rng_seed: u64,
    /// Settings of the `search` strategy.
    pub search: crate::agent::search::SearchOptions,
    /// Templates that replace built-in prompts (`--prompts`).
    pub prompts_dir: Option<PathBuf>,
    /// Run only this slice of the tasks (`--shard I/N`, see [`super::shard`]).
    pub shard: Option<Shard>,
    /// Keep each debugged task's whole report in `out_dir/reports/` ([`super::fix_reports`]).
    pub save_reports: bool,
}

impl EvalPlan {
    /// The tasks this run (this shard, when sharded) may select from, in dataset order.
    pub fn candidates(&self) -> Result<Vec<Task>, EvalError> {
        let all = self.whole_run_candidates()?;
        Ok(match self.shard {
            Some(shard) => shard.slice(&all),
            None => all,
        })
    }

    /// The task list every shard slices: the tasks `task_ids` picks and, when sharded, the
    /// first `limit` of them (slicing first would give each shard its own first `limit`).
    fn whole_run_candidates(&self) -> Result<Vec<Task>, EvalError> {
        let mut all = self.picked()?;
        if self.shard.is_some() {
            if self.only_failing && self.limit.is_some() {
                return Err(EvalError::input(
                    "--only-failing --limit N cannot be split into shards: which tasks count \
                     toward N depends on every other shard's seeds",
                    "drop --limit (or --only-failing), or pick the tasks with --tasks",
                ));
            }
            all.truncate(self.limit.unwrap_or(usize::MAX));
        }
        Ok(all)
    }

    /// The manifest of a sharded run's directory.
    pub fn shard_manifest(&self) -> Result<Option<Manifest>, EvalError> {
        let Some(shard) = self.shard else {
            return Ok(None);
        };
        Ok(Some(Manifest {
            shard,
            dataset: self.dataset.label.clone(),
            tasks: self
                .whole_run_candidates()?
                .into_iter()
                .map(|t| t.task_id)
                .collect(),
        }))
    }

    /// The tasks `task_ids` picks, in dataset order; unknown ids are an error.
    fn picked(&self) -> Result<Vec<Task>, EvalError> {
        if self.task_ids.is_empty() {
            return Ok(self.dataset.tasks.clone());
        }
        let known: std::collections::HashSet<&str> = self
            .dataset
            .tasks
            .iter()
            .map(|t| t.task_id.as_str())
            .collect();
        let missing: Vec<&str> = self
            .task_ids
            .iter()
            .map(String::as_str)
            .filter(|id| !known.contains(id))
            .collect();
        if !missing.is_empty() {
            return Err(EvalError::input(
                format!(
                    "dataset `{}` has no task {}",
                    self.dataset.label,
                    missing
                        .iter()
                        .map(|m| format!("`{m}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                "check --tasks against the dataset's task ids, e.g. HumanEval/0 or MBPP/11",
            ));
        }
        Ok(self
            .dataset
            .tasks
            .iter()
            .filter(|t| self.task_ids.contains(&t.task_id))
            .cloned()
            .collect())
    }

    /// Whether the run needs a model: a strategy calls one, or some seed must be generated.
    pub fn needs_models(&self) -> Result<bool, EvalError> {
        if self.strategies.iter().any(StrategySpec::uses_model) {
            return Ok(true);
        }
        let mut candidates = self.candidates()?;
        if !self.only_failing {
            // Only the first `limit` tasks can be selected.
            candidates.truncate(self.limit.unwrap_or(usize::MAX));
        }
        Ok(match &self.seed_programs {
            Some((_, programs)) => candidates
                .iter()
                .any(|t| !programs.contains_key(&t.task_id)),
            None => candidates.iter().any(|t| t.seed.is_none()),
        })
    }

    fn generates_seeds(&self) -> bool {
        self.seeds == SeedSpec::Generate
    }

    pub fn seeds_path(&self) -> PathBuf {
        self.out_dir.join("seeds.jsonl")
    }

    pub fn results_path(&self, spec: &StrategySpec) -> PathBuf {
        self.out_dir.join(format!("{}.jsonl", spec.label()))
    }

    fn seed_config(&self, generator: &str) -> RunConfig {
        RunConfig {
            dataset: self.dataset.label.clone(),
            strategy: "seeds".into(),
            max_iters: 0,
            seeds: self.seeds.label(),
            generator: if self.generates_seeds() {
                generator.to_string()
            } else {
                "-".into()
            },
            debugger: "-".into(),
            temperature: self.temperature,
            trace_budget: 0,
            harness: "-".into(),
            budget_tokens: None,
            rng_seed: 0,
            search: None,
            prompts: self.prompts_dir.as_ref().map(|d| d.display().to_string()),
        }
    }

    /// The prompt templates of the run.
    pub fn prompts(&self) -> Result<Prompts, crate::prompts::PromptError> {
        match &self.prompts_dir {
            Some(dir) => Prompts::from_dir(dir),
            None => Prompts::new(),
        }
    }

    /// The header settings of `spec`'s results file.
    pub fn config(&self, spec: &StrategySpec, generator: &str, debugger: &str) -> RunConfig {
        RunConfig {
            strategy: spec.label(),
            max_iters: self.max_iters,
            debugger: if spec.uses_model() {
                debugger.to_string()
            } else {
                "-".into()
            },
            trace_budget: self.trace_budget,
            harness: self.harness.label().into(),
            budget_tokens: self.budget_tokens,
            rng_seed: self.rng_seed,
            search: (spec.strategy == Strategy::Search).then(|| {
                let o = &self.search;
                let mut label = format!(
                    "{} beam {} max {} select {} inputs {} t {}",
                    o.portfolio_label(),
                    o.beam,
                    o.max_candidates,
                    o.select,
                    o.extra_inputs,
                    o.temperature
                );
                // Only when not the full form, so earlier runs' headers still match.
                if o.verdicts != crate::debugger::VerdictForm::Full {
                    label.push_str(&format!(" verdicts {}", o.verdicts.name()));
                }
                if o.select_by != crate::agent::search::SelectRule::Groups {
                    label.push_str(&format!(" by {}", o.select_by.name()));
                }
                label
            }),
            ..self.seed_config(generator)
        }
    }
}

/// What runs it: the models and the sandboxed runner.
#[derive(Clone)]
pub struct EvalEnv {
    pub generator: SharedModel,
    pub debugger: SharedModel,
    pub runner: Runner,
}

/// Progress of one strategy over the selected tasks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub strategy: String,
    pub done: usize,
    pub selected: usize,
    /// Finished tasks whose final program passes the hidden tests.
    pub passed: usize,
    pub seed_passed: usize,
    /// Finished tasks whose seed fails the hidden tests and whose final program passes them.
    pub fixed: usize,
    pub errors: usize,
}

/// What a run reports while it goes.
#[derive(Debug, Clone)]
pub enum EvalEvent {
    Notice(String),
    /// Records found in a results file from an earlier run.
    Resumed {
        file: PathBuf,
        records: usize,
    },
    /// The seed phase starts: `total` seeds to get.
    SeedsStarted {
        total: usize,
    },
    SeedDone {
        task_id: String,
        visible_pass: bool,
        error: Option<String>,
    },
    /// The debugging phase starts: `total` (task, strategy) runs to do.
    DebugStarted {
        total: usize,
        tallies: Vec<Tally>,
    },
    /// What a task is doing now.
    Activity {
        task_id: String,
        strategy: String,
        text: String,
    },
    /// Tokens just spent.
    Tokens {
        prompt: u64,
        completion: u64,
    },
    TaskDone {
        record: Box<TaskRecord>,
        tallies: Vec<Tally>,
    },
}

/// Receives [`EvalEvent`]s (the CLI draws a progress bar).
pub trait EvalProgress: Send + Sync {
    fn event(&self, event: EvalEvent);
}

/// Reports nothing.
pub struct QuietEval;

impl EvalProgress for QuietEval {
    fn event(&self, _event: EvalEvent) {}
}

/// What a run did.
#[derive(Debug)]
pub struct EvalOutcome {
    /// Task ids selected, in order.
    pub selected: Vec<String>,
    pub seeds_file: PathBuf,
    /// Each strategy's results file.
    pub files: Vec<(StrategySpec, PathBuf)>,
    /// Records of the selected tasks by strategy label (earlier runs' included).
    pub records: HashMap<String, Vec<TaskRecord>>,
    /// Set when the run stopped early; the results so far are intact.
    pub stopped: Option<EvalError>,
}

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
        prompts: plan.prompts()?,
        options: FixOptions {
            strategy: Strategy::None,
            level: Level::Block,
            max_iters: 0,
            sample: SampleConfig::for_level(Level::Block),
            value_chars: VALUE_CHARS,
            temperature: plan.temperature,
            seed: match &plan.seed_programs {
                Some((path, programs)) => SeedSource::Map {
                    path: path.clone(),
                    programs: programs.clone(),
                },
                None => SeedSource::TaskOrGenerate,
            },
            ..FixOptions::default()
        },
    });
    let seed_log = Arc::new(seed_log);
    let mut seeds: HashMap<String, SeedRecord> = old_seeds
        .into_iter()
        .map(|s| (s.task_id.clone(), s))
        .collect();
    let selected = select(
        plan,
        &candidates,
        &mut seeds,
        &seed_fixer,
        &seed_log,
        &shared,
    )
    .await;

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
                prompts: plan.prompts()?,
                options: FixOptions {
                    strategy: spec.strategy,
                    level: spec.level,
                    max_iters,
                    sample,
                    value_chars: VALUE_CHARS,
                    temperature: plan.temperature,
                    seed: SeedSource::Map {
                        path: plan.seeds_path(),
                        programs: seed_programs.clone(),
                    },
                    budget_tokens: plan.budget_tokens,
                    rng_seed: plan.rng_seed,
                    search: plan.search.clone(),
                    ..FixOptions::default()
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
    let limit = Arc::new(Semaphore::new(plan.concurrency.max(1)));
    let seeds = Arc::new(seeds);
    let mut handles = Vec::with_capacity(units.len());
    for (task, spec) in units {
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
        // Units start in order (task by task, every strategy of a task before the next task),
        // so an interrupted run has compared its strategies on the same tasks.
        let permit = limit.clone().acquire_owned().await.ok();
        handles.push(tokio::spawn(async move {
            let _permit = permit;
            if ctx.shared.stopped() {
                return None;
            }
            ctx.run(task, spec).await
        }));
    }
    for handle in handles {
        match handle.await {
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

/// Gets missing seeds and picks the tasks to run, in dataset order. With `only_failing` and a
/// limit, seeds are fetched a window at a time until enough failing seeds are found.
async fn select(
    plan: &EvalPlan,
    candidates: &[Task],
    seeds: &mut HashMap<String, SeedRecord>,
    fixer: &Arc<Fixer>,
    log: &Arc<ResultsLog<SeedRecord>>,
    shared: &Arc<Shared>,
) -> Vec<Task> {
    let limit = plan.limit.unwrap_or(usize::MAX);
    if !plan.only_failing {
        let chosen: Vec<Task> = candidates.iter().take(limit).cloned().collect();
        ensure_seeds(plan, &chosen, seeds, fixer, log, shared).await;
        return chosen;
    }
    let window = if plan.limit.is_some() {
        (plan.concurrency * 2).max(8)
    } else {
        candidates.len().max(1)
    };
    let mut chosen = Vec::new();
    let mut failing = 0usize;
    for chunk in candidates.chunks(window) {
        if failing >= limit || shared.stopped() {
            break;
        }
        ensure_seeds(plan, chunk, seeds, fixer, log, shared).await;
        for task in chunk {
            if failing >= limit {
                break;
            }
            let Some(seed) = seeds.get(&task.task_id) else {
                // Not obtained (the run is stopping).
                continue;
            };
            if !seed.visible_pass {
                failing += 1;
            }
            chosen.push(task.clone());
        }
    }
    chosen
}

/// Gets the seeds `tasks` lack, `concurrency` at once, recording each.
async fn ensure_seeds(
    plan: &EvalPlan,
    tasks: &[Task],
    seeds: &mut HashMap<String, SeedRecord>,
    fixer: &Arc<Fixer>,
    log: &Arc<ResultsLog<SeedRecord>>,
    shared: &Arc<Shared>,
) {
    let missing: Vec<Task> = tasks
        .iter()
        .filter(|t| !seeds.contains_key(&t.task_id))
        .cloned()
        .collect();
    if missing.is_empty() {
        return;
    }
    shared.progress.event(EvalEvent::SeedsStarted {
        total: missing.len(),
    });
    let limit = Arc::new(Semaphore::new(plan.concurrency.max(1)));
    let mut handles = Vec::new();
    for task in missing {
        let fixer = fixer.clone();
        let log = log.clone();
        let shared = shared.clone();
        let limit = limit.clone();
        handles.push(tokio::spawn(async move {
            let _permit = limit.acquire_owned().await.ok();
            if shared.stopped() {
                return None;
            }
            let adapter = UnitProgress {
                shared: shared.clone(),
                strategy: "seed".into(),
            };
            let report = fixer.fix(&task, &adapter).await;
            let record = seed_record(&report);
            if let Some(class) = record.error_class.filter(|c| c.is_fatal()) {
                shared.halt(EvalError::Fatal {
                    class,
                    message: format!(
                        "[{}] getting the seed failed: {}",
                        task.task_id,
                        record.error.as_deref().unwrap_or("?")
                    ),
                });
                return None;
            }
            shared.note_backend(record.error_class, record.error.as_deref());
            if let Err(e) = log.append(&record) {
                shared.halt(e);
                return None;
            }
            shared.progress.event(EvalEvent::SeedDone {
                task_id: task.task_id.clone(),
                visible_pass: record.visible_pass,
                error: record.error.clone(),
            });
            Some(record)
        }));
    }
    for handle in handles {
        match handle.await {
            Ok(Some(record)) => {
                seeds.insert(record.task_id.clone(), record);
            }
            Ok(None) => {}
            Err(e) => shared.halt(EvalError::Fatal {
                class: ErrorClass::Internal,
                message: format!("a seed task stopped unexpectedly: {e}"),
            }),
        }
    }
}

fn seed_record(report: &FixReport) -> SeedRecord {
    let first = report.iterations.first();
    let visible_passed = first.map_or(0, |i| i.passed);
    let error_class = (report.status == FixStatus::Error)
        .then(|| report.error_class.unwrap_or(ErrorClass::Other));
    SeedRecord {
        kind: "seed".into(),
        task_id: report.task_id.clone(),
        origin: report.seed.origin.clone(),
        program: report.seed.program.clone(),
        visible_passed,
        visible_total: report.visible_total,
        visible_pass: first.is_some() && visible_passed == report.visible_total,
        tokens: Tokens {
            prompt: report.usage.prompt_tokens,
            completion: report.usage.completion_tokens,
            cached_prompt: report.usage.cached_prompt_tokens,
        },
        calls: report.usage.calls,
        llm_ms: report.timings.llm_ms,
        total_ms: report.timings.total_ms,
        problem: report.seed.problem.clone(),
        error: error_class.and(report.error.clone()),
        error_class,
    }
}

/// Forwards the fix loop's progress as [`EvalEvent`]s.
struct UnitProgress {
    shared: Arc<Shared>,
    strategy: String,
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
struct UnitContext {
    fixer: Option<Arc<Fixer>>,
    log: Option<Arc<ResultsLog<TaskRecord>>>,
    seed: Option<SeedRecord>,
    scorer: Arc<HiddenScorer>,
    shared: Arc<Shared>,
    tallies: Arc<Mutex<Vec<Tally>>>,
    remaining: Arc<Mutex<HashMap<String, usize>>>,
    only_failing: bool,
    max_iters: usize,
    /// The output folder, when each task's report is kept there.
    reports_dir: Option<PathBuf>,
}

impl UnitContext {
    async fn run(self, task: Task, spec: StrategySpec) -> Option<TaskRecord> {
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
            if let Err(e) = super::fix_reports::save(dir, &record.strategy, report) {
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

        // Hidden tests, after the loop: the seed, the final program and each budget's program.
        let mut programs: Vec<String> = vec![seed.program.clone(), record.final_program.clone()];
        let first_passing = report
            .as_ref()
            .and_then(|r| r.selection.as_ref())
            .map(|s| s.first_passing_program.clone());
        if let Some(report) = &report {
            for k in 0..=self.max_iters {
                programs.push(program_at_budget(report, k).to_string());
            }
        }
        programs.extend(first_passing.clone());
        // Every candidate that passes the visible tests could have been returned: score them
        // all, so the selection can be judged against the alternatives.
        if let Some(report) = &report {
            programs.extend(
                report
                    .candidates
                    .iter()
                    .filter(|c| c.visible_passed == Some(record.visible_total))
                    .filter_map(|c| c.program.clone()),
            );
        }
        let mut verdicts: HashMap<String, bool> = HashMap::new();
        for program in programs {
            if verdicts.contains_key(&program) {
                continue;
            }
            let (result, ms) =
                self.scorer
                    .score(task, &program)
                    .await
                    .map_err(|e| EvalError::Fatal {
                        class: ErrorClass::Sandbox,
                        message: format!("[{}] scoring on hidden tests: {e}", task.task_id),
                    })?;
            record.timings.hidden_ms += ms;
            if program == record.final_program {
                record.final_hidden_status = Some(result.status);
                record.final_hidden_summary = result.summary.clone();
            }
            verdicts.insert(program, result.passed);
        }
        let verdict = |p: &str| verdicts.get(p).copied().unwrap_or(false);
        record.seed_hidden_pass = verdict(&seed.program);
        record.final_hidden_pass = verdict(&record.final_program);
        record.first_pass_hidden_pass = first_passing.as_deref().map(verdict);
        for c in &mut record.candidate_log {
            if c.visible_passed == Some(record.visible_total) {
                let program = report
                    .as_ref()
                    .and_then(|r| r.candidates.get(c.id))
                    .and_then(|r| r.program.as_deref());
                c.hidden_pass = program.map(verdict);
            }
        }
        record.hidden_by_budget = (0..=self.max_iters)
            .map(|k| match &report {
                Some(r) => verdict(program_at_budget(r, k)),
                None => record.final_hidden_pass,
            })
            .collect();
        if record.hidden_tests == HiddenSource::Visible {
            record.final_hidden_summary = format!(
                "(no hidden tests; scored on visible) {}",
                record.final_hidden_summary
            );
        }
        Ok((record, report))
    }
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
            }
        })
        .collect();
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

/// The model of a run that needs none (`--strategy none` with seeds from a file): any call is a
/// configuration error.
pub struct NoModel;

#[async_trait::async_trait]
impl crate::model::ChatModel for NoModel {
    async fn chat(
        &self,
        _request: &crate::model::ChatRequest,
    ) -> Result<crate::model::ChatResponse, crate::model::ModelError> {
        Err(crate::model::ModelError::Config(
            "this run was started without a model, but a task needed one".into(),
        ))
    }

    fn name(&self) -> String {
        "-".into()
    }
}

/// Default run directory name: `<dataset>-<seeds>-<model>`, safe for file names.
pub fn default_run_name(dataset: &str, seeds: &SeedSpec, model: Option<&str>) -> String {
    let seeds = match seeds {
        SeedSpec::Generate => "generated".to_string(),
        SeedSpec::Ldb(m) => format!("ldbseeds-{m}"),
        SeedSpec::File(p) => format!(
            "seeds-{}",
            p.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        ),
    };
    let mut name = format!("{dataset}-{seeds}");
    if let Some(m) = model {
        name.push('-');
        name.push_str(super::results::model_name(m));
    }
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// `results/<name>` under the current directory.
pub fn default_out_dir(name: &str) -> PathBuf {
    Path::new("results").join(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_names_are_file_safe() {
        assert_eq!(
            default_run_name(
                "humaneval",
                &SeedSpec::Ldb("gpt-3.5-turbo-0613".into()),
                Some("gpt-4o-mini@api.openai.com")
            ),
            "humaneval-ldbseeds-gpt-3.5-turbo-0613-gpt-4o-mini"
        );
        assert_eq!(
            default_run_name("my tasks", &SeedSpec::Generate, Some("a/b:c")),
            "my-tasks-generated-a-b-c"
        );
    }
}
