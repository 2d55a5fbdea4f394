//! LDB's published results (`ldb/results_summary/<dataset>__<model>.jsonl`), re-scored: the
//! sanity line of a report.
//!
//! Each record holds the program LDB ended with (`solution`), its own verdict (`is_solved`),
//! and the debugging it took (`debug_iter`, `token_nums`). We run every `solution` (and LDB's
//! seed for the same model, when its seed file is at hand) on the hidden tests with LDB's own
//! harness, `program + test`, so the row shows both LDB's claimed pass@1 and ours on the same
//! programs. Agreement says our harness and datasets match theirs; any task where the two
//! disagree is listed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::datasets::{load_dataset, LoadedDataset, SeedSpec};
use super::score::{hidden_result, Harness};
use super::EvalError;
use crate::run::sandbox::SandboxError;
use crate::run::{in_parallel, Runner};
use crate::task::Task;

/// One line of a `results_summary` file (fields we do not use are ignored).
#[derive(Debug, Clone, Deserialize)]
struct PublishedRecord {
    task_id: String,
    #[serde(default)]
    is_solved: bool,
    #[serde(default)]
    debug_iter: usize,
    #[serde(default)]
    token_nums: u64,
    #[serde(default)]
    solution: String,
}

/// LDB's published run next to our re-scoring of it.
#[derive(Debug, Clone, Serialize)]
pub struct Published {
    pub file: PathBuf,
    /// `LDB published · humaneval · gpt-3.5-turbo-0613`.
    pub label: String,
    pub dataset: String,
    pub model: String,
    pub tasks: usize,
    /// Tasks LDB marks `is_solved`.
    pub claimed_solved: usize,
    /// Tasks whose `solution` passes the hidden tests here.
    pub rescored_solved: usize,
    /// Seeds (LDB's seed file of the same model) passing the hidden tests here, when found.
    pub seed_solved: Option<usize>,
    pub fixed: Vec<String>,
    pub broken: Vec<String>,
    /// Tasks with at least one debugging round.
    pub debugged: usize,
    pub mean_iterations: f64,
    /// Mean `token_nums` (prompt and completion together) per debugged task.
    pub mean_tokens: f64,
    /// Tasks where `is_solved` and our verdict differ.
    pub disagreements: Vec<String>,
}

impl Published {
    fn pct(&self, k: usize) -> f64 {
        if self.tasks == 0 {
            0.0
        } else {
            100.0 * k as f64 / self.tasks as f64
        }
    }

    pub fn pass1_claimed(&self) -> f64 {
        self.pct(self.claimed_solved)
    }

    pub fn pass1_rescored(&self) -> f64 {
        self.pct(self.rescored_solved)
    }

    pub fn pass1_seed(&self) -> Option<f64> {
        self.seed_solved.map(|k| self.pct(k))
    }
}

/// `humaneval__gpt-3.5-turbo-0613-line-level.jsonl` → (`humaneval`, `gpt-3.5-turbo-0613-line-level`).
fn split_name(path: &Path) -> Option<(String, String)> {
    let stem = path.file_stem()?.to_str()?;
    let (dataset, model) = stem.split_once("__")?;
    Some((dataset.to_string(), model.to_string()))
}

/// The seed model behind a results file: LDB names its level runs `<model>-line-level`.
fn seed_model(model: &str) -> &str {
    model
        .strip_suffix("-line-level")
        .or_else(|| model.strip_suffix("-function-level"))
        .unwrap_or(model)
}

fn read_records(path: &Path) -> Result<Vec<PublishedRecord>, EvalError> {
    let text = std::fs::read_to_string(path).map_err(|e| EvalError::io(path, e))?;
    let mut records = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record: PublishedRecord = serde_json::from_str(line).map_err(|e| {
            EvalError::input(
                format!(
                    "{} line {}: not an LDB results record: {e}",
                    path.display(),
                    i + 1
                ),
                "pass a file of LDB's results_summary folder, e.g. \
                 ldb/results_summary/humaneval__gpt-3.5-turbo-0613.jsonl",
            )
        })?;
        records.push(record);
    }
    Ok(records)
}

/// Re-scores LDB's published results file `path` against the dataset its name gives
/// (`<dataset>__<model>.jsonl`), read from `data_dir`.
pub fn rescore(path: &Path, data_dir: &Path, runner: &Runner) -> Result<Published, EvalError> {
    let Some((dataset_name, model)) = split_name(path) else {
        return Err(EvalError::input(
            format!(
                "{}: LDB results files are named <dataset>__<model>.jsonl",
                path.display()
            ),
            "pass a file of LDB's results_summary folder, e.g. \
             ldb/results_summary/humaneval__gpt-3.5-turbo-0613.jsonl",
        ));
    };
    let dataset = load_dataset(&dataset_name, Some(data_dir))?;
    let records = read_records(path)?;
    let tasks: HashMap<&str, &Task> = dataset
        .tasks
        .iter()
        .map(|t| (t.task_id.as_str(), t))
        .collect();
    let mut items: Vec<(&PublishedRecord, &Task)> = Vec::with_capacity(records.len());
    for r in &records {
        let Some(task) = tasks.get(r.task_id.as_str()) else {
            return Err(EvalError::input(
                format!(
                    "{}: task `{}` is not in dataset `{dataset_name}`",
                    path.display(),
                    r.task_id
                ),
                "check that --data-dir holds the dataset the file was made on",
            ));
        };
        items.push((r, task));
    }
    let seeds = seed_programs(&dataset, seed_model(&model));
    // Each item runs its programs one after another; the items share `runner.jobs()` threads.
    let strict = runner.clone().with_jobs(1).strict();
    let passes = |task: &Task, program: &str| {
        hidden_result(&strict, Harness::Program, task, program).map(|r| r.passed)
    };
    // Per record: does its solution pass, and its seed (when there is a seed file)?
    let verdicts: Vec<(bool, Option<bool>)> = in_parallel(&items, runner.jobs(), |(r, task)| {
        let solution = passes(task, &r.solution)?;
        let seed = seeds
            .as_ref()
            .and_then(|s| s.get(&r.task_id))
            .map(|seed| passes(task, seed))
            .transpose()?;
        Ok((solution, seed))
    })
    .into_iter()
    .map(|v| v.unwrap_or_else(|| Err(SandboxError::Pipe(std::io::Error::other("not run")))))
    .collect::<Result<_, SandboxError>>()
    .map_err(|e| EvalError::Fatal {
        class: crate::eval::fix::ErrorClass::Sandbox,
        message: e.to_string(),
    })?;
    let scored = || records.iter().zip(&verdicts);
    let ids = |keep: &dyn Fn(&PublishedRecord, bool, Option<bool>) -> bool| -> Vec<String> {
        scored()
            .filter(|(r, (solution, seed))| keep(r, *solution, *seed))
            .map(|(r, _)| r.task_id.clone())
            .collect()
    };
    let mut published = Published {
        file: path.to_path_buf(),
        label: format!("LDB published · {dataset_name} · {model}"),
        dataset: dataset_name,
        model,
        tasks: records.len(),
        claimed_solved: records.iter().filter(|r| r.is_solved).count(),
        rescored_solved: verdicts.iter().filter(|(solution, _)| *solution).count(),
        seed_solved: seeds.as_ref().map(|_| {
            verdicts
                .iter()
                .filter(|(_, seed)| *seed == Some(true))
                .count()
        }),
        fixed: ids(&|_, solution, seed| solution && seed == Some(false)),
        broken: ids(&|_, solution, seed| !solution && seed == Some(true)),
        debugged: 0,
        mean_iterations: 0.0,
        mean_tokens: 0.0,
        disagreements: ids(&|r, solution, _| r.is_solved != solution),
    };
    let debugged: Vec<&PublishedRecord> = records.iter().filter(|r| r.debug_iter > 0).collect();
    if !debugged.is_empty() {
        let k = debugged.len() as f64;
        published.debugged = debugged.len();
        published.mean_iterations = debugged.iter().map(|r| r.debug_iter as f64).sum::<f64>() / k;
        published.mean_tokens = debugged.iter().map(|r| r.token_nums as f64).sum::<f64>() / k;
    }
    Ok(published)
}

/// LDB's seeds of `model` for this dataset, when its seed file is there. Seeds that are only a
/// body (Reflexion's) would need the prompt; those files are skipped rather than mis-scored.
fn seed_programs(dataset: &LoadedDataset, model: &str) -> Option<HashMap<String, String>> {
    if model.contains("reflexion") {
        return None;
    }
    let path = SeedSpec::Ldb(model.to_string()).resolve(dataset).ok()??;
    crate::task::load_seeds(&path).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_give_dataset_and_model() {
        assert_eq!(
            split_name(Path::new(
                "x/humaneval__gpt-3.5-turbo-0613-line-level.jsonl"
            )),
            Some(("humaneval".into(), "gpt-3.5-turbo-0613-line-level".into()))
        );
        assert_eq!(split_name(Path::new("x/results.jsonl")), None);
        assert_eq!(
            seed_model("gpt-3.5-turbo-0613-function-level"),
            "gpt-3.5-turbo-0613"
        );
        assert_eq!(seed_model("codellama"), "codellama");
    }
}
