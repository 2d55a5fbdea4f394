//! An evaluation as one self-contained HTML page (`ldb eval report RUN_DIR --html out.html`):
//! the comparison table, the pass@1-against-iteration chart (the same SVG as
//! `pass_at_iteration.svg`, inline), and one row per task and strategy.
//!
//! Evaluation records keep each task's outcome, not its rounds, so the rows carry the outcome
//! (seed and final on the hidden tests, rounds, tokens, error); where the run kept the task's
//! report ([`super::fix_reports`]), [`write_fix_pages`] renders it as its own page (the page of
//! `ldb report RUN.json --html`) and the row's task links to it.

use std::collections::HashMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use super::report::{self, RunResults, Summary};
use super::{fix_reports, EvalError};
use crate::agent::html::esc;

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
            std::fs::write(
                &target,
                crate::agent::html::fix_page(std::slice::from_ref(&fix)),
            )
            .map_err(|e| EvalError::io(&target, e))?;
            links.insert((i, r.task_id.clone()), format!("{folder}/{sub}/{name}"));
        }
    }
    Ok(links)
}

const STYLE: &str = "
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #1d1d1f; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: .5em 0; } td, th { border: 1px solid #ddd; padding: .25em .6em; text-align: left; }
th { background: #f0f0f0; } td.num { text-align: right; }
.pass { color: #116329; font-weight: 600; } .fail { color: #b42318; }
tr.fixed { background: #e6ffec; } tr.broken { background: #ffebe9; }
.chart svg { max-width: 100%; height: auto; }
";

/// The page for `runs`; a row's task links to its fix page when `links` has one.
pub fn eval_page(runs: &[RunResults], summaries: &[Summary], links: &FixLinks) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ldb eval</title><style>{STYLE}</style></head><body>\n<h1>ldb eval</h1>\n"
    );
    out.push_str("<table><tr><th>run</th><th>tasks</th><th>pass@1 seed</th><th>pass@1 final</th><th>fixed</th><th>broken</th><th>debugged</th><th>mean rounds</th><th>mean tokens</th></tr>\n");
    for (i, s) in summaries.iter().enumerate() {
        let _ = writeln!(
            out,
            "<tr><td><a href=\"#run-{i}\">{}</a></td><td class=\"num\">{}</td><td class=\"num\">{:.1}%</td><td class=\"num\">{:.1}%</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.2}</td><td class=\"num\">{:.0}</td></tr>",
            esc(&s.label),
            s.tasks,
            s.pass1_seed,
            s.pass1_final,
            s.fixed.len(),
            s.broken.len(),
            s.debugged,
            s.mean_iterations,
            s.mean_prompt_tokens + s.mean_completion_tokens
        );
    }
    out.push_str("</table>\n<h2>pass@1 against the rounds allowed</h2>\n<div class=\"chart\">");
    // Our own SVG, built from numbers and escaped labels.
    out.push_str(&report::plot(summaries));
    out.push_str("</div>\n");
    for (i, (run, s)) in runs.iter().zip(summaries).enumerate() {
        let _ = writeln!(out, "<h2 id=\"run-{i}\">{}</h2>", esc(&s.label));
        let _ = writeln!(out, "<p>{}</p>", esc(&run.path.display().to_string()));
        out.push_str("<table><tr><th>task</th><th>seed</th><th>final</th><th>status</th><th>rounds</th><th>tokens</th><th>hidden tests say</th></tr>\n");
        for r in &run.records {
            let class = match (r.seed_hidden_pass, r.final_hidden_pass) {
                (false, true) => " class=\"fixed\"",
                (true, false) => " class=\"broken\"",
                _ => "",
            };
            let mark = |p: bool| {
                if p {
                    "<span class=\"pass\">pass</span>"
                } else {
                    "<span class=\"fail\">fail</span>"
                }
            };
            let status = r
                .status
                .map(|st| crate::agent::html::label(&st))
                .unwrap_or_else(|| "-".into());
            let task = match links.get(&(i, r.task_id.clone())) {
                Some(href) => format!("<a href=\"{}\">{}</a>", esc(href), esc(&r.task_id)),
                None => esc(&r.task_id),
            };
            let _ = writeln!(
                out,
                "<tr{class}><td>{task}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                mark(r.seed_hidden_pass),
                mark(r.final_hidden_pass),
                esc(&status),
                r.iterations,
                r.tokens.total(),
                esc(r.error.as_deref().unwrap_or(&r.final_hidden_summary))
            );
        }
        out.push_str("</table>\n");
    }
    out.push_str("</body></html>\n");
    out
}
