//! A fix report as one self-contained HTML page (`ldb report RUN.json --html out.html`): per
//! task the seed-to-final diff, tokens and time, every round's program and test results, the
//! traced test with the trace and the verdict next to each block (wrong blocks highlighted),
//! the model's explanation, and for a search every candidate and which passed.
//!
//! No scripts, fonts or other files: the page opens from disk, in a mail attachment or a CI
//! artifact. Everything from the report is escaped, since programs and model replies are
//! arbitrary text.

use std::collections::HashMap;
use std::fmt::Write;

use super::report::{FixReport, IterationReport};
use crate::reply::verdicts::Verdict;

const STYLE: &str = "
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #1d1d1f; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
h3 { font-size: 1.05em; margin-top: 1.6em; }
pre { background: #f6f8fa; padding: .6em .8em; overflow-x: auto; border-radius: 4px; margin: .3em 0; font: 12.5px/1.4 ui-monospace, monospace; }
table { border-collapse: collapse; margin: .5em 0; } td, th { border: 1px solid #ddd; padding: .25em .6em; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
.pass { color: #116329; font-weight: 600; } .fail { color: #b42318; font-weight: 600; }
.summary span { margin-right: 1.5em; }
.diff .add { background: #e6ffec; display: block; } .diff .del { background: #ffebe9; display: block; } .diff .hunk { color: #6639ba; display: block; }
.trace { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: .3em .8em; align-items: start; }
.trace .block pre { margin: 0; } .trace .verdict { padding: .4em .6em; border-radius: 4px; font-size: 13px; }
.trace .wrong pre { background: #ffebe9; border-left: 4px solid #b42318; } .verdict.wrong { background: #ffebe9; }
.verdict.right { background: #eef7ee; } .verdict.none { color: #777; }
.note { color: #555; } .chosen { background: #fff8c5; }
";

/// The page for `reports` (one section per task).
pub fn fix_page(reports: &[FixReport]) -> String {
    let mut out = String::new();
    let title = match reports {
        [one] => format!("ldb fix: {}", one.task_id),
        _ => format!("ldb fix: {} tasks", reports.len()),
    };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    if reports.len() > 1 {
        out.push_str("<table><tr><th>task</th><th>status</th><th>visible tests</th><th>rounds</th><th>tokens</th></tr>\n");
        for (i, r) in reports.iter().enumerate() {
            let _ = writeln!(
                out,
                "<tr><td><a href=\"#task-{i}\">{}</a></td><td class=\"{}\">{}</td><td>{}/{}</td><td>{}</td><td>{}</td></tr>",
                esc(&r.task_id),
                if r.status.passed() { "pass" } else { "fail" },
                esc(&label(&r.status)),
                r.final_passed,
                r.visible_total,
                r.iterations.len().saturating_sub(1),
                r.usage.prompt_tokens + r.usage.completion_tokens
            );
        }
        out.push_str("</table>\n");
    }
    for (i, r) in reports.iter().enumerate() {
        task_section(&mut out, i, r);
    }
    out.push_str("</body></html>\n");
    out
}

fn task_section(out: &mut String, index: usize, r: &FixReport) {
    let _ = writeln!(out, "<h2 id=\"task-{index}\">{}</h2>", esc(&r.task_id));
    let _ = writeln!(
        out,
        "<p class=\"summary\"><span class=\"{}\">{}</span><span>{} of {} visible tests pass</span><span>strategy {}</span><span>{} model calls, {} prompt + {} completion tokens</span><span>{} (model {})</span></p>",
        if r.status.passed() { "pass" } else { "fail" },
        esc(&label(&r.status)),
        r.final_passed,
        r.visible_total,
        esc(&label(&r.strategy)),
        r.usage.calls,
        r.usage.prompt_tokens,
        r.usage.completion_tokens,
        seconds(r.timings.total_ms),
        seconds(r.timings.llm_ms)
    );
    if let Some(e) = &r.error {
        let _ = writeln!(out, "<p class=\"fail\">error: {}</p>", esc(e));
    }
    let diff = super::unified_diff(&r.seed.program, &r.final_program);
    if diff.trim().is_empty() {
        out.push_str("<p class=\"note\">The returned program is the seed.</p>\n");
    } else {
        out.push_str("<h3>Seed → returned program</h3>\n");
        diff_block(out, &diff);
    }
    for it in &r.iterations {
        round(out, it, r.visible_total);
    }
    candidates(out, r);
    out.push_str("<h3>Returned program</h3>\n");
    let _ = writeln!(out, "<pre>{}</pre>", esc(&r.final_program));
}

fn round(out: &mut String, it: &IterationReport, total: usize) {
    let name = if it.index == 0 {
        "Round 0 (the seed)".to_string()
    } else {
        format!("Round {}", it.index)
    };
    let tokens: u64 = it
        .calls
        .iter()
        .map(|c| c.prompt_tokens + c.completion_tokens)
        .sum();
    let _ = writeln!(
        out,
        "<h3>{name}: <span class=\"{}\">{} of {total} visible tests pass</span> <span class=\"note\">({} calls, {tokens} tokens, {})</span></h3>",
        if it.passed == total { "pass" } else { "fail" },
        it.passed,
        it.calls.len(),
        seconds(it.timings.total_ms.max(it.timings.llm_ms + it.timings.tests_ms + it.timings.trace_ms))
    );
    let _ = writeln!(out, "<pre>{}</pre>", esc(&it.program));
    if !it.tests.is_empty() {
        out.push_str("<table><tr><th>test</th><th>result</th></tr>\n");
        for t in &it.tests {
            let passed = t.status == crate::runner::TestStatus::Passed;
            let _ = writeln!(
                out,
                "<tr><td><code>{}</code></td><td class=\"{}\">{}</td></tr>",
                esc(&t.test),
                if passed { "pass" } else { "fail" },
                esc(if passed { "passed" } else { &t.summary })
            );
        }
        out.push_str("</table>\n");
    }
    if let Some(test) = &it.traced_test {
        let _ = writeln!(
            out,
            "<p>Traced failing test: <code>{}</code></p>",
            esc(test)
        );
    }
    if let Some(trace) = &it.trace {
        trace_with_verdicts(out, trace, &it.verdicts);
    }
    if let Some(p) = &it.verdict_problem {
        let _ = writeln!(out, "<p class=\"note\">verdicts: {}</p>", esc(p));
    }
    if let Some(e) = &it.explanation {
        let _ = writeln!(out, "<p>The model's explanation:</p><pre>{}</pre>", esc(e));
    }
    if let Some(d) = &it.diff {
        out.push_str("<p>Change made this round:</p>\n");
        diff_block(out, d);
    }
    if let Some(p) = &it.regeneration_problem {
        let _ = writeln!(out, "<p class=\"note\">regeneration: {}</p>", esc(p));
    }
}

/// The trace split at its step headers (`[BLOCK-3] in f`), each step beside its verdict.
fn trace_with_verdicts(out: &mut String, trace: &str, verdicts: &[Verdict]) {
    let by_label: HashMap<&str, &Verdict> =
        verdicts.iter().map(|v| (v.block.as_str(), v)).collect();
    let mut steps: Vec<(Option<String>, String)> = Vec::new();
    for line in trace.lines() {
        let label = line
            .strip_prefix('[')
            .and_then(|rest| rest.split_once("] in "))
            .map(|(label, _)| label.to_string());
        match (label, steps.last_mut()) {
            (Some(l), _) => steps.push((Some(l), format!("{line}\n"))),
            (None, Some((_, text))) => {
                text.push_str(line);
                text.push('\n');
            }
            (None, None) => steps.push((None, format!("{line}\n"))),
        }
    }
    out.push_str("<div class=\"trace\">\n");
    for (label, text) in &steps {
        let verdict = label.as_deref().and_then(|l| by_label.get(l));
        let class = match verdict {
            Some(v) if !v.correct => "wrong",
            Some(_) => "right",
            None => "none",
        };
        let _ = writeln!(
            out,
            "<div class=\"block {class}\"><pre>{}</pre></div>",
            esc(text.trim_end())
        );
        match verdict {
            Some(v) => {
                let _ = writeln!(
                    out,
                    "<div class=\"verdict {class}\"><b>{}</b> {}</div>",
                    if v.correct { "correct" } else { "wrong" },
                    esc(&v.explanation)
                );
            }
            None => out.push_str("<div class=\"verdict none\"></div>\n"),
        }
    }
    out.push_str("</div>\n");
}

fn candidates(out: &mut String, r: &FixReport) {
    if r.candidates.is_empty() {
        return;
    }
    let chosen = r.selection.as_ref().map(|s| s.chosen);
    out.push_str("<h3>Candidates</h3>\n<table><tr><th>id</th><th>round</th><th>proposer</th><th>parent</th><th>visible tests</th><th>tokens</th><th>time</th><th>note</th></tr>\n");
    for c in &r.candidates {
        let passed = c.visible_passed.map_or(String::from("not run"), |p| {
            format!("{p}/{}", r.visible_total)
        });
        let all = c.visible_passed == Some(r.visible_total);
        let mut note = Vec::new();
        if let Some(d) = c.duplicate_of {
            note.push(format!("same as {d}"));
        }
        if let Some(g) = c.group {
            note.push(format!("selection group {g}"));
        }
        if Some(c.id) == chosen {
            note.push("chosen".to_string());
        }
        if let Some(p) = &c.problem {
            note.push(p.clone());
        }
        let _ = writeln!(
            out,
            "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            if Some(c.id) == chosen { " class=\"chosen\"" } else { "" },
            c.id,
            c.round,
            esc(&label(&c.proposer)),
            c.parent.map(|p| p.to_string()).unwrap_or_default(),
            if all { "pass" } else { "fail" },
            passed,
            c.tokens,
            seconds(c.wall_ms),
            esc(&note.join("; "))
        );
    }
    out.push_str("</table>\n");
}

fn diff_block(out: &mut String, diff: &str) {
    out.push_str("<pre class=\"diff\">");
    for line in diff.lines() {
        let class = if line.starts_with("+++") || line.starts_with("---") {
            ""
        } else if line.starts_with('+') {
            "add"
        } else if line.starts_with('-') {
            "del"
        } else if line.starts_with("@@") {
            "hunk"
        } else {
            ""
        };
        if class.is_empty() {
            let _ = writeln!(out, "{}", esc(line));
        } else {
            // Block spans carry their own line break.
            let _ = write!(out, "<span class=\"{class}\">{}</span>", esc(line));
        }
    }
    out.push_str("</pre>\n");
}

/// A serde enum's name as the report writes it (`already_passing`, `search`, ...); a value
/// that does not encode as a name shows as Rust writes it rather than as nothing.
pub(crate) fn label(value: &(impl serde::Serialize + std::fmt::Debug)) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => format!("{value:?}"),
    }
}

fn seconds(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// Text as HTML text (also safe inside a double-quoted attribute).
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_sit_beside_their_verdicts_and_text_is_escaped() {
        let trace = "Execution trace (block level): 2 blocks executed, 2 shown.\n[BLOCK-0] in f\n  1 | x = a < b\n  state after:  x = True\n[BLOCK-1] in f\n  2 | return x\n";
        let verdicts = vec![
            Verdict {
                block: "BLOCK-0".into(),
                correct: true,
                explanation: "fine".into(),
            },
            Verdict {
                block: "BLOCK-1".into(),
                correct: false,
                explanation: "should return <b>not x</b>".into(),
            },
        ];
        let mut out = String::new();
        trace_with_verdicts(&mut out, trace, &verdicts);
        assert!(out.contains("<div class=\"block right\"><pre>[BLOCK-0] in f\n  1 | x = a &lt; b\n  state after:  x = True</pre></div>"), "{out}");
        assert!(
            out.contains("<div class=\"block wrong\"><pre>[BLOCK-1] in f"),
            "{out}"
        );
        assert!(
            out.contains("<b>wrong</b> should return &lt;b&gt;not x&lt;/b&gt;"),
            "{out}"
        );
        assert!(
            out.contains("<div class=\"block none\"><pre>Execution trace"),
            "{out}"
        );
    }
}
