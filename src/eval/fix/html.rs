//! An evaluation as one self-contained HTML page (`ldb eval report RUN_DIR --html out.html`):
//! the comparison table, the pass@1-against-iteration chart (the same SVG as
//! `pass_at_iteration.svg`, inline), and one row per task and strategy.
//!
//! Evaluation records keep each task's outcome, not its rounds, so the rows carry the outcome
//! (seed and final on the hidden tests, rounds, tokens, error); where the run kept the task's
//! report ([`crate::eval::fix::fix_reports`]), [`write_fix_pages`] renders it as its own page (the page of
//! `ldb report RUN.json --html`) and the row's task links to it. The page is the minijinja
//! template `eval.html`, rendered with the fix pages' environment ([`crate::report::html`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::report::{self, RunResults, Summary};
use super::{fix_reports, EvalError};
use crate::report::html::{label, render, trusted};

/// Links from the rows of an evaluation page to the fix pages: (run index, task id) → a path
/// relative to the evaluation page.
pub type FixLinks = HashMap<(usize, String), String>;

/// Writes a page for every task of `runs` whose report the run kept, into the folder
/// `<page stem>_fixes/` beside `page`, and returns the links for [`eval_page`].
pub fn write_fix_pages(runs: &[RunResults], page: &Path) -> Result<FixLinks, EvalError> {
    let stem = page
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "eval".into());
    let folder = format!("{stem}_fixes");
    let base: PathBuf = page
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
        .join(&folder);
    let mut links = FixLinks::new();
    for (i, run) in runs.iter().enumerate() {
        let Some(run_dir) = run.path.parent() else {
            continue;
        };
        // Runs of the same strategy from different folders get their own subfolders.
        let sub = format!("{i}-{}", run.header.config.strategy);
        for r in &run.records {
            let Some(fix) = fix_reports::load(run_dir, &r.strategy, &r.task_id) else {
                continue;
            };
            let name = fix_reports::file_name(&r.task_id).replace(".json", ".html");
            let dir = base.join(&sub);
            std::fs::create_dir_all(&dir).map_err(|e| EvalError::io(&dir, e))?;
            let target = dir.join(&name);
            let page = crate::report::html::fix_page(std::slice::from_ref(&fix))?;
            std::fs::write(&target, page).map_err(|e| EvalError::io(&target, e))?;
            links.insert((i, r.task_id.clone()), format!("{folder}/{sub}/{name}"));
        }
    }
    Ok(links)
}

#[derive(Serialize)]
struct SummaryView {
    label: String,
    tasks: usize,
    pass1_seed: String,
    pass1_final: String,
    fixed: usize,
    broken: usize,
    debugged: usize,
    mean_rounds: String,
    mean_tokens: String,
}

#[derive(Serialize)]
struct RunView {
    label: String,
    path: String,
    rows: Vec<RowView>,
}

#[derive(Serialize)]
struct RowView {
    /// `fixed`, `broken`, or empty.
    class: &'static str,
    task: String,
    href: Option<String>,
    seed: bool,
    #[serde(rename = "final")]
    final_: bool,
    status: String,
    rounds: usize,
    tokens: u64,
    says: String,
}

/// The page for `runs`; a row's task links to its fix page when `links` has one.
pub fn eval_page(
    runs: &[RunResults],
    summaries: &[Summary],
    links: &FixLinks,
) -> Result<String, EvalError> {
    let summary_views: Vec<SummaryView> = summaries
        .iter()
        .map(|s| SummaryView {
            label: s.label.clone(),
            tasks: s.tasks,
            pass1_seed: format!("{:.1}", s.pass1_seed),
            pass1_final: format!("{:.1}", s.pass1_final),
            fixed: s.fixed.len(),
            broken: s.broken.len(),
            debugged: s.debugged,
            mean_rounds: format!("{:.2}", s.mean_iterations),
            mean_tokens: format!("{:.0}", s.mean_prompt_tokens + s.mean_completion_tokens),
        })
        .collect();
    let run_views: Vec<RunView> = runs
        .iter()
        .zip(summaries)
        .enumerate()
        .map(|(i, (run, s))| RunView {
            label: s.label.clone(),
            path: run.path.display().to_string(),
            rows: run
                .records
                .iter()
                .map(|r| RowView {
                    class: match (r.seed_hidden_pass, r.final_hidden_pass) {
                        (false, true) => "fixed",
                        (true, false) => "broken",
                        _ => "",
                    },
                    task: r.task_id.clone(),
                    href: links.get(&(i, r.task_id.clone())).cloned(),
                    seed: r.seed_hidden_pass,
                    final_: r.final_hidden_pass,
                    status: r.status.map(|st| label(&st)).unwrap_or_else(|| "-".into()),
                    rounds: r.iterations,
                    tokens: r.tokens.total(),
                    says: r
                        .error
                        .clone()
                        .unwrap_or_else(|| r.final_hidden_summary.clone()),
                })
                .collect(),
        })
        .collect();
    Ok(render(
        "eval.html",
        minijinja::context! {
            summaries => summary_views,
            // Our own SVG, built from numbers and escaped labels.
            chart => trusted(report::plot(summaries)),
            runs => run_views,
        },
    )?)
}
