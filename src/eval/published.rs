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
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::datasets::{load_dataset, LoadedDataset, SeedSpec};
use super::score::{Harness, HiddenScorer};
use super::EvalError;
use crate::runner::Runner;
use crate::sandbox::SandboxError;
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
    let mut jobs: Vec<(&Task, String)> = Vec::new();
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
        jobs.push((task, r.solution.clone()));
    }
    let seeds = seed_programs(&dataset, seed_model(&model));
    if let Some(seeds) = &seeds {
        for r in &records {
            if let (Some(task), Some(seed)) = (tasks.get(r.task_id.as_str()), seeds.get(&r.task_id))
            {
                jobs.push((task, seed.clone()));
            }
        }
    }
    let verdicts = score_all(runner, &jobs)?;
    let solved = |i: usize| verdicts.get(i).copied().unwrap_or(false);
    let n = records.len();
    let mut published = Published {
        file: path.to_path_buf(),
        label: format!("LDB published · {dataset_name} · {model}"),
        dataset: dataset_name,
        model,
        tasks: n,
        claimed_solved: records.iter().filter(|r| r.is_solved).count(),
        rescored_solved: (0..n).filter(|&i| solved(i)).count(),
        seed_solved: None,
        fixed: Vec::new(),
        broken: Vec::new(),
        debugged: 0,
        mean_iterations: 0.0,
        mean_tokens: 0.0,
        disagreements: records
            .iter()
            .enumerate()
            .filter(|(i, r)| r.is_solved != solved(*i))
            .map(|(_, r)| r.task_id.clone())
            .collect(),
    };
    if let Some(seeds) = &seeds {
        // Seed verdicts follow the solutions in `jobs`, for the records that have a seed.
        let mut seed_pass: HashMap<&str, bool> = HashMap::new();
        let mut at = n;
        for r in &records {
            if seeds.contains_key(&r.task_id) {
                seed_pass.insert(r.task_id.as_str(), solved(at));
                at += 1;
            }
        }
        published.seed_solved = Some(seed_pass.values().filter(|&&p| p).count());
        for (i, r) in records.iter().enumerate() {
            match (seed_pass.get(r.task_id.as_str()), solved(i)) {
                (Some(false), true) => published.fixed.push(r.task_id.clone()),
                (Some(true), false) => published.broken.push(r.task_id.clone()),
                _ => {}
            }
        }
    }
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

/// Runs each (task, program) on the task's hidden tests with LDB's harness, `runner`'s job count
/// at once; verdicts in input order.
fn score_all(runner: &Runner, jobs: &[(&Task, String)]) -> Result<Vec<bool>, EvalError> {
    let next = AtomicUsize::new(0);
    let verdicts: Mutex<Vec<Option<Result<bool, SandboxError>>>> =
        Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..runner.jobs().min(jobs.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some((task, program)) = jobs.get(i) else {
                    break;
                };
                let (tests, _) = HiddenScorer::tests_of(task);
                let source = Harness::Program.assemble(task, program);
                // One worker per test run; running them one by one here keeps at most
                // `jobs` workers alive across all threads.
                let single = runner.clone().with_jobs(1).strict();
                let verdict = single
                    .run_all(&source, &tests)
                    .into_iter()
                    .try_fold(true, |all, r| r.map(|o| all && o.passed()));
                if let Ok(mut v) = verdicts.lock() {
                    if let Some(slot) = v.get_mut(i) {
                        *slot = Some(verdict);
                    }
                }
            });
        }
    });
    let verdicts = verdicts
        .into_inner()
        .map_err(|_| EvalError::input("a scoring thread panicked", "this is a bug in ldb"))?;
    verdicts
        .into_iter()
        .map(|v| match v {
            Some(Ok(pass)) => Ok(pass),
            Some(Err(e)) => Err(EvalError::Fatal {
                class: super::ErrorClass::Sandbox,
                message: e.to_string(),
            }),
            None => Ok(false),
        })
        .collect()
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
