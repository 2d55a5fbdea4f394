//! An evaluation as one self-contained HTML page (`ldb eval report RUN_DIR --html out.html`):
//! the comparison table, the pass@1-against-iteration chart (the same SVG as
//! `pass_at_iteration.svg`, inline), and one row per task and strategy.
//!
//! Evaluation records keep each task's outcome, not its rounds, so the rows carry the outcome
//! (seed and final on the hidden tests, rounds, tokens, error); a task's rounds are on its
//! `ldb fix --report` page (`ldb report RUN.json --html`).

use std::fmt::Write;

use super::report::{self, RunResults, Summary};
use crate::agent::html::esc;

const STYLE: &str = "
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #1d1d1f; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: .5em 0; } td, th { border: 1px solid #ddd; padding: .25em .6em; text-align: left; }
th { background: #f0f0f0; } td.num { text-align: right; }
.pass { color: #116329; font-weight: 600; } .fail { color: #b42318; }
tr.fixed { background: #e6ffec; } tr.broken { background: #ffebe9; }
.chart svg { max-width: 100%; height: auto; }
";

/// The page for `runs`.
pub fn eval_page(runs: &[RunResults], summaries: &[Summary]) -> String {
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
                .and_then(|st| serde_json::to_value(st).ok())
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_else(|| "-".into());
            let _ = writeln!(
                out,
                "<tr{class}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                esc(&r.task_id),
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
