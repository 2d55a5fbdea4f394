//! A fix report as one self-contained HTML page (`ldb report RUN.json --html out.html`): per
//! task the seed-to-final diff, tokens and time, every round's program and test results, the
//! traced test with the trace and the verdict next to each block (wrong blocks highlighted),
//! the model's explanation, and for a search every candidate and which passed.
//!
//! No scripts, fonts or other files: the page opens from disk, in a mail attachment or a CI
//! artifact. The pages are minijinja templates (`fix.html`, `trace.html`, `diff.html` here,
//! `eval.html` beside [`crate::eval::fix::html`]) filled from plain view structs built below;
//! auto-escaping covers every `{{ }}`, since programs and model replies are arbitrary text.

use std::collections::HashMap;

use minijinja::{AutoEscape, Environment, Value};
use serde::Serialize;

use crate::generate::reply::verdicts::Verdict;
use crate::repair::record::{FixReport, IterationReport};

/// A page template failed to render: a bug in a template, not in the report.
#[derive(Debug, thiserror::Error)]
#[error("cannot render the HTML page: {0}")]
pub struct PageError(#[from] minijinja::Error);

/// The templates of both pages, HTML-escaped, with whitespace as written around block tags
/// dropped so that the templates can keep one tag a line.
pub(crate) fn environment() -> Result<Environment<'static>, minijinja::Error> {
    let mut env = Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_keep_trailing_newline(true);
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    // minijinja's own HTML escaper also escapes `/`, which would write every path and task id
    // (`MBPP/11`) as `MBPP&#x2f;11`; the five characters that matter in text and in
    // double-quoted attributes are enough.
    env.set_formatter(|out, state, value| match value.as_str() {
        Some(text) if state.auto_escape() == AutoEscape::Html && !value.is_safe() => {
            out.write_str(&escape(text))?;
            Ok(())
        }
        _ => minijinja::escape_formatter(out, state, value),
    });
    // Templates are part of the binary; a syntax error is caught by the tests.
    for (name, source) in [
        ("fix.html", include_str!("fix.html")),
        ("trace.html", include_str!("trace.html")),
        ("diff.html", include_str!("diff.html")),
        ("eval.html", include_str!("../../eval/fix/eval.html")),
    ] {
        env.add_template(name, source)?;
    }
    Ok(env)
}

/// Renders template `name` of [`environment`] with `view`.
pub(crate) fn render(name: &str, view: impl Serialize) -> Result<String, PageError> {
    let env = environment()?;
    Ok(env.get_template(name)?.render(view)?)
}

/// A value the templates write as it is: HTML this crate built itself (the inline SVG chart).
pub(crate) fn trusted(html: String) -> Value {
    Value::from_safe_string(html)
}

#[derive(Serialize)]
struct FixView {
    title: String,
    tasks: Vec<TaskView>,
}

#[derive(Serialize)]
struct TaskView {
    id: String,
    class: &'static str,
    status: String,
    passed: usize,
    total: usize,
    rounds: usize,
    tokens: u64,
    strategy: String,
    calls: u64,
    prompt_tokens: u64,
    completion_tokens: u64,
    time: String,
    model_time: String,
    error: Option<String>,
    /// `None` when the returned program is the seed.
    diff: Option<Vec<DiffLine>>,
    iterations: Vec<RoundView>,
    candidates: Vec<CandidateView>,
    final_program: String,
}

#[derive(Serialize)]
struct RoundView {
    name: String,
    class: &'static str,
    passed: usize,
    calls: usize,
    tokens: u64,
    time: String,
    program: String,
    tests: Vec<TestView>,
    traced_test: Option<String>,
    trace: Option<Vec<Step>>,
    verdict_problem: Option<String>,
    explanation: Option<String>,
    diff: Option<Vec<DiffLine>>,
    regeneration_problem: Option<String>,
}

#[derive(Serialize)]
struct TestView {
    name: String,
    class: &'static str,
    result: String,
}

#[derive(Serialize)]
struct Step {
    /// `wrong`, `right`, or `none` for a step without a verdict.
    class: &'static str,
    text: String,
    verdict: Option<StepVerdict>,
}

#[derive(Serialize)]
struct StepVerdict {
    word: &'static str,
    explanation: String,
}

#[derive(Serialize)]
struct CandidateView {
    chosen: bool,
    id: usize,
    round: usize,
    proposer: String,
    parent: String,
    class: &'static str,
    passed: String,
    tokens: u64,
    time: String,
    note: String,
}

#[derive(Serialize)]
struct DiffLine {
    /// `add`, `del`, `hunk`, or empty for context and file headers.
    class: &'static str,
    text: String,
}

fn pass_class(passed: bool) -> &'static str {
    if passed {
        "pass"
    } else {
        "fail"
    }
}

/// The page for `reports` (one section per task).
pub fn fix_page(reports: &[FixReport]) -> Result<String, PageError> {
    let title = match reports {
        [one] => format!("ldb fix: {}", one.task_id),
        _ => format!("ldb fix: {} tasks", reports.len()),
    };
    let tasks = reports.iter().map(task_view).collect();
    render("fix.html", FixView { title, tasks })
}

fn task_view(r: &FixReport) -> TaskView {
    let diff = crate::repair::unified_diff(&r.seed.program, &r.final_program);
    TaskView {
        id: r.task_id.clone(),
        class: pass_class(r.status.passed()),
        status: label(&r.status),
        passed: r.final_passed,
        total: r.visible_total,
        rounds: r.iterations.len().saturating_sub(1),
        tokens: r.usage.prompt_tokens + r.usage.completion_tokens,
        strategy: label(&r.strategy),
        calls: r.usage.calls,
        prompt_tokens: r.usage.prompt_tokens,
        completion_tokens: r.usage.completion_tokens,
        time: seconds(r.timings.total_ms),
        model_time: seconds(r.timings.llm_ms),
        error: r.error.clone(),
        diff: (!diff.trim().is_empty()).then(|| diff_lines(&diff)),
        iterations: r
            .iterations
            .iter()
            .map(|it| round(it, r.visible_total))
            .collect(),
        candidates: candidates(r),
        final_program: r.final_program.clone(),
    }
}

fn round(it: &IterationReport, total: usize) -> RoundView {
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
    let tests = it
        .tests
        .iter()
        .map(|t| {
            let passed = t.status == crate::run::TestStatus::Passed;
            TestView {
                name: t.test.clone(),
                class: pass_class(passed),
                result: if passed {
                    "passed".to_string()
                } else {
                    t.summary.clone()
                },
            }
        })
        .collect();
    RoundView {
        name,
        class: pass_class(it.passed == total),
        passed: it.passed,
        calls: it.calls.len(),
        tokens,
        time: seconds(
            it.timings
                .total_ms
                .max(it.timings.llm_ms + it.timings.tests_ms + it.timings.trace_ms),
        ),
        program: it.program.clone(),
        tests,
        traced_test: it.traced_test.clone(),
        trace: it
            .trace
            .as_deref()
            .map(|trace| trace_steps(trace, &it.verdicts)),
        verdict_problem: it.verdict_problem.clone(),
        explanation: it.explanation.clone(),
        diff: it.diff.as_deref().map(diff_lines),
        regeneration_problem: it.regeneration_problem.clone(),
    }
}

/// The trace split at its step headers (`[BLOCK-3] in f`), each step with its verdict.
fn trace_steps(trace: &str, verdicts: &[Verdict]) -> Vec<Step> {
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
    steps
        .into_iter()
        .map(|(label, text)| {
            let verdict = label.as_deref().and_then(|l| by_label.get(l));
            Step {
                class: match verdict {
                    Some(v) if !v.correct => "wrong",
                    Some(_) => "right",
                    None => "none",
                },
                text: text.trim_end().to_string(),
                verdict: verdict.map(|v| StepVerdict {
                    word: if v.correct { "correct" } else { "wrong" },
                    explanation: v.explanation.clone(),
                }),
            }
        })
        .collect()
}

fn candidates(r: &FixReport) -> Vec<CandidateView> {
    let chosen = r.selection.as_ref().map(|s| s.chosen);
    r.candidates
        .iter()
        .map(|c| {
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
            CandidateView {
                chosen: Some(c.id) == chosen,
                id: c.id,
                round: c.round,
                proposer: label(&c.proposer),
                parent: c.parent.map(|p| p.to_string()).unwrap_or_default(),
                class: pass_class(c.visible_passed == Some(r.visible_total)),
                passed: c.visible_passed.map_or(String::from("not run"), |p| {
                    format!("{p}/{}", r.visible_total)
                }),
                tokens: c.tokens,
                time: seconds(c.wall_ms),
                note: note.join("; "),
            }
        })
        .collect()
}

fn diff_lines(diff: &str) -> Vec<DiffLine> {
    diff.lines()
        .map(|line| DiffLine {
            class: if line.starts_with("+++") || line.starts_with("---") {
                ""
            } else if line.starts_with('+') {
                "add"
            } else if line.starts_with('-') {
                "del"
            } else if line.starts_with("@@") {
                "hunk"
            } else {
                ""
            },
            text: line.to_string(),
        })
        .collect()
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

/// Text as HTML text (also safe inside a double-quoted attribute): the templates' escaper.
fn escape(text: &str) -> String {
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
        let steps = trace_steps(trace, &verdicts);
        let out = render("trace.html", minijinja::context! { steps }).expect("render");
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

    #[test]
    fn every_template_parses() {
        let env = environment().expect("templates parse");
        for name in ["fix.html", "trace.html", "diff.html", "eval.html"] {
            assert!(env.get_template(name).is_ok(), "{name}");
        }
    }
}
