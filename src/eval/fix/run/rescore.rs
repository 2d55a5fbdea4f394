//! Re-scoring a finished run on the hidden tests as the dataset has them now (`ldb eval
//! rescore`), for when a benchmark's hidden tests were wrong: every record is scored again as
//! its run scored it (the seed, the final program, each iteration budget's program and every
//! candidate that passed the visible tests, from the task's kept report), and the results files
//! are rewritten in place. Nothing runs the fix loop again: hidden tests never reach the loop,
//! so its programs would be the same.
//!
//! Three steps, so that a wrong dataset or a missing report changes nothing: check every file
//! and record, score them all in memory, then rewrite the files (each atomically).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::unit::score_hidden;
use crate::eval::fix::fix_reports;
use crate::eval::fix::report::{load_results, RunResults};
use crate::eval::fix::results::{read_log, rewrite, SeedRecord, TaskRecord};
use crate::eval::fix::score::{ErrorClass, HiddenScorer};
use crate::eval::fix::{EvalError, Harness};
use crate::repair::record::FixReport;
use crate::run::Runner;
use crate::task::Task;

/// What re-scoring changed in one results file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RescoredFile {
    pub path: PathBuf,
    pub records: usize,
    /// Final programs that pass the hidden tests, before and after.
    pub passed_before: usize,
    pub passed_after: usize,
    /// Records whose seed or final verdict changed.
    pub changed: usize,
}

/// One record to score again: its task, seed program and kept report (`None` for a record
/// without a seed program, which stays as it is).
struct Work<'a> {
    record: TaskRecord,
    scored: Option<(&'a Task, String, Option<FixReport>)>,
}

/// Re-scores every results file of the run directory `dir` on `tasks`' hidden tests; `label`
/// is the dataset's name, which must be the one the run was made on.
pub async fn rescore_run(
    dir: &Path,
    label: &str,
    tasks: &[Task],
    runner: Runner,
) -> Result<Vec<RescoredFile>, EvalError> {
    let by_id: HashMap<&str, &Task> = tasks.iter().map(|t| (t.task_id.as_str(), t)).collect();
    let seeds_path = dir.join("seeds.jsonl");
    if !seeds_path.is_file() {
        return Err(EvalError::input(
            format!(
                "{} is not a run directory of `ldb eval` (no seeds.jsonl)",
                dir.display()
            ),
            "pass the --out DIR of a finished `ldb eval` run",
        ));
    }
    let (_, seeds, _) = read_log::<SeedRecord>(&seeds_path)?;
    let seeds: HashMap<String, SeedRecord> =
        seeds.into_iter().map(|s| (s.task_id.clone(), s)).collect();

    // 1. Check everything before anything is scored or written.
    let mut planned: Vec<(RunResults, Harness, Vec<Work>)> = Vec::new();
    for mut run in load_results(&[dir.to_path_buf()])? {
        let harness = harness_of(&run.path, &run.header.config.harness)?;
        if run.header.config.dataset != label {
            return Err(EvalError::input(
                format!(
                    "{}: the run was made on `{}`, not on `{label}`",
                    run.path.display(),
                    run.header.config.dataset
                ),
                "pass the benchmark the run was made on, corrected (its file keeps its name)",
            ));
        }
        let mut work = Vec::with_capacity(run.records.len());
        for record in std::mem::take(&mut run.records) {
            if record.error_class == Some(ErrorClass::SeedUnavailable) {
                work.push(Work {
                    record,
                    scored: None,
                });
                continue;
            }
            let Some(task) = by_id.get(record.task_id.as_str()).copied() else {
                return Err(EvalError::input(
                    format!(
                        "{}: task `{}` is not in the dataset given",
                        run.path.display(),
                        record.task_id
                    ),
                    "pass the --dataset (and --data-dir) the run was made on",
                ));
            };
            let Some(seed) = seeds.get(&record.task_id) else {
                return Err(EvalError::input(
                    format!(
                        "{}: no seed record for task `{}`",
                        seeds_path.display(),
                        record.task_id
                    ),
                    "rescore a whole run directory as `ldb eval` wrote it",
                ));
            };
            let report = fix_reports::load_checked(dir, &record.strategy, &record.task_id)?;
            // A record whose loop ran (even one that kept its seed) was scored with the
            // programs of its report.
            if report.is_none() && (record.debugged || !record.candidate_log.is_empty()) {
                return Err(EvalError::input(
                    format!(
                        "{}: task `{}` has no kept report ({}), so the programs its run could \
                         have returned are unknown",
                        run.path.display(),
                        record.task_id,
                        fix_reports::path(dir, &record.strategy, &record.task_id).display()
                    ),
                    "rescoring needs the run's reports/ folder (runs made with --no-reports \
                     cannot be rescored); rerun the task instead",
                ));
            }
            work.push(Work {
                record,
                scored: Some((task, seed.program.clone(), report)),
            });
        }
        planned.push((run, harness, work));
    }

    // 2. Score, in memory.
    let mut out = Vec::new();
    let mut rewritten = Vec::new();
    for (run, harness, work) in planned {
        let scorer = HiddenScorer::new(runner.clone(), harness, 1);
        let mut file = RescoredFile {
            path: run.path.clone(),
            records: work.len(),
            ..RescoredFile::default()
        };
        let mut records = Vec::with_capacity(work.len());
        for Work { mut record, scored } in work {
            file.passed_before += usize::from(record.final_hidden_pass);
            let before = (record.seed_hidden_pass, record.final_hidden_pass);
            if let Some((task, seed_program, report)) = scored {
                let max_iters = record.hidden_by_budget.len().saturating_sub(1);
                let ms = score_hidden(
                    &scorer,
                    task,
                    &seed_program,
                    &mut record,
                    report.as_ref(),
                    max_iters,
                )
                .await
                .map_err(|e| in_file(&run.path, e))?;
                record.timings.hidden_ms = ms;
                scorer.forget(&record.task_id);
            }
            file.passed_after += usize::from(record.final_hidden_pass);
            file.changed +=
                usize::from(before != (record.seed_hidden_pass, record.final_hidden_pass));
            records.push(record);
        }
        rewritten.push((run.path, run.header, records));
        out.push(file);
    }

    // 3. Write.
    for (path, header, records) in rewritten {
        rewrite::<TaskRecord>(&path, &header, &records)?;
    }
    Ok(out)
}

/// Names the results file in a scoring failure.
fn in_file(path: &Path, e: EvalError) -> EvalError {
    match e {
        EvalError::Fatal { class, message } => EvalError::Fatal {
            class,
            message: format!("{}: {message}", path.display()),
        },
        other => other,
    }
}

fn harness_of(path: &Path, label: &str) -> Result<Harness, EvalError> {
    [Harness::Program, Harness::PromptProgram]
        .into_iter()
        .find(|h| h.label() == label)
        .ok_or_else(|| {
            EvalError::input(
                format!(
                    "{}: header names an unknown harness `{label}`",
                    path.display()
                ),
                "results files are written by `ldb eval`; pass a run directory it wrote",
            )
        })
}
