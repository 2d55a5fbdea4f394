//! Re-scoring a finished run on the hidden tests as the dataset has them now (`ldb eval
//! rescore`), for when a benchmark's hidden tests were wrong: every record is scored again as
//! its run scored it (the seed, the final program, each iteration budget's program and every
//! candidate that passed the visible tests, from the task's kept report), and the results files
//! are rewritten in place. Nothing runs the fix loop again: hidden tests never reach the loop,
//! so its programs would be the same.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::unit::score_hidden;
use crate::eval::fix::fix_reports;
use crate::eval::fix::report::load_results;
use crate::eval::fix::results::{read_log, rewrite, SeedRecord, TaskRecord};
use crate::eval::fix::score::{ErrorClass, HiddenScorer};
use crate::eval::fix::{EvalError, Harness};
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

/// Re-scores every results file of the run directory `dir` on `tasks`' hidden tests.
pub async fn rescore_run(
    dir: &Path,
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
    let runs = load_results(&[dir.to_path_buf()])?;
    // Check every file before rewriting any: a wrong dataset changes nothing.
    for run in &runs {
        harness_of(&run.path, &run.header.config.harness)?;
        if let Some(missing) = run
            .records
            .iter()
            .find(|r| !by_id.contains_key(r.task_id.as_str()))
        {
            return Err(EvalError::input(
                format!(
                    "{}: task `{}` is not in the dataset given",
                    run.path.display(),
                    missing.task_id
                ),
                "pass the --dataset (and --data-dir) the run was made with",
            ));
        }
    }
    let mut out = Vec::new();
    for run in runs {
        let harness = harness_of(&run.path, &run.header.config.harness)?;
        let scorer = HiddenScorer::new(runner.clone(), harness, 1);
        let mut file = RescoredFile {
            path: run.path.clone(),
            records: run.records.len(),
            ..RescoredFile::default()
        };
        let mut records = Vec::with_capacity(run.records.len());
        for mut record in run.records {
            file.passed_before += usize::from(record.final_hidden_pass);
            let before = (record.seed_hidden_pass, record.final_hidden_pass);
            // A record without a seed program scored nothing; it stays as it is.
            let seed = seeds.get(&record.task_id);
            if record.error_class != Some(ErrorClass::SeedUnavailable) {
                let Some(seed) = seed else {
                    return Err(EvalError::input(
                        format!(
                            "{}: no seed record for task `{}`",
                            seeds_path.display(),
                            record.task_id
                        ),
                        "rescore a whole run directory as `ldb eval` wrote it",
                    ));
                };
                let task = by_id[record.task_id.as_str()];
                let report = fix_reports::load(dir, &record.strategy, &record.task_id);
                if record.debugged && report.is_none() {
                    return Err(EvalError::input(
                        format!(
                            "{}: task `{}` has no kept report, so the programs its run could \
                             have returned at smaller budgets are unknown",
                            run.path.display(),
                            record.task_id
                        ),
                        "rescoring needs the run's reports/ folder (runs made with --no-reports \
                         cannot be rescored); rerun the task instead",
                    ));
                }
                let max_iters = record.hidden_by_budget.len().saturating_sub(1);
                let seed_program = seed.program.clone();
                score_hidden(
                    &scorer,
                    task,
                    &seed_program,
                    &mut record,
                    report.as_ref(),
                    max_iters,
                )
                .await?;
                scorer.forget(&record.task_id);
            }
            file.passed_after += usize::from(record.final_hidden_pass);
            file.changed +=
                usize::from(before != (record.seed_hidden_pass, record.final_hidden_pass));
            records.push(record);
        }
        rewrite::<TaskRecord>(&run.path, &run.header, &records)?;
        out.push(file);
    }
    Ok(out)
}

fn harness_of(path: &Path, label: &str) -> Result<Harness, EvalError> {
    match label {
        "program" => Ok(Harness::Program),
        "prompt-program" => Ok(Harness::PromptProgram),
        other => Err(EvalError::input(
            format!(
                "{}: header names an unknown harness `{other}`",
                path.display()
            ),
            "results files are written by `ldb eval`; pass a run directory it wrote",
        )),
    }
}
