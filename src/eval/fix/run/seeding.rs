//! The seed phase: one seed per selected task, tested on the visible tests and recorded, so
//! every strategy debugs the same seed.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::stream::{self, StreamExt};

use super::unit::UnitProgress;
use super::{EvalEvent, EvalPlan, Shared};
use crate::eval::fix::results::{ResultsLog, SeedRecord, Tokens};
use crate::eval::fix::score::ErrorClass;
use crate::eval::fix::EvalError;
use crate::repair::record::{FixReport, FixStatus};
use crate::repair::Fixer;
use crate::task::Task;

/// Gets missing seeds and picks the tasks to run, in dataset order. With `only_failing` and a
/// limit, seeds are fetched a window at a time until enough failing seeds are found.
pub(super) async fn select(
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
    // Each seed is fetched as its own Tokio task, started in order, at most `concurrency` at
    // once; records are kept by task id, so the order they finish in does not matter.
    let mut finished = stream::iter(missing)
        .map(|task| {
            let fixer = fixer.clone();
            let log = log.clone();
            let shared = shared.clone();
            tokio::spawn(async move {
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
            })
        })
        .buffer_unordered(plan.concurrency.max(1));
    while let Some(joined) = finished.next().await {
        match joined {
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
            replayed: report.usage.replayed_tokens,
        },
        calls: report.usage.calls,
        llm_ms: report.timings.llm_ms,
        total_ms: report.timings.total_ms,
        problem: report.seed.problem.clone(),
        error: error_class.and(report.error.clone()),
        error_class,
    }
}
