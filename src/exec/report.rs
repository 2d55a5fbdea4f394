//! The result of `ldb exec`: best prefix, minimal covering set, per-line coverage of the
//! snippet's own lines, the tree of attempts, tokens and time — as JSON and as text.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;

use super::coverage::short_ending;
use super::coverage::{statement_status, CoverageFigure, Ending, Execution, LineStatus};
use super::prefix_search::{Searched, Stop};
use super::tree::{Node, Step, Tree};
use super::Snippet;
use crate::python::names::undefined::Undefined;
use crate::repair::record::CallRecord;

/// Everything `ldb exec` found.
#[derive(Debug, Clone, Serialize)]
pub struct ExecReport {
    pub snippet: String,
    pub lines: u32,
    /// Statements of the snippet that can run (the coverage denominator).
    pub statements: usize,
    pub undefined: Undefined,
    /// The snippet with an empty prefix.
    pub as_is: Attempt,
    /// The prefix that covers most on its own.
    pub best: Option<Attempt>,
    /// The fewest prefixes that together cover everything any prefix covered.
    pub minimal_set: Vec<Attempt>,
    pub set_coverage: CoverageFigure,
    /// Every line of the snippet: its statement's status under the best prefix and under the
    /// minimal set (absent on lines that are not statements: blank, comments, `else:`).
    pub line_coverage: Vec<LineView>,
    pub tree: Vec<NodeView>,
    pub stop: Stop,
    pub usage: UsageSummary,
    pub calls: Vec<CallRecord>,
    pub timings: ExecTimings,
}

/// One prefix and what it did.
#[derive(Debug, Clone, Serialize)]
pub struct Attempt {
    pub node: usize,
    pub prefix: String,
    pub coverage: CoverageFigure,
    pub ending: Option<Ending>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LineView {
    pub line: u32,
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best: Option<LineStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub set: Option<LineStatus>,
}

/// A node of the tree of attempts, for output.
#[derive(Debug, Clone, Serialize)]
pub struct NodeView {
    pub id: usize,
    pub parent: Option<usize>,
    pub step: Step,
    pub prefix: String,
    /// The model's reply the prefix came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply_problem: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dropped_entries: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub removed_statements: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicate_of: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ending: Option<Ending>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stand_ins: Vec<String>,
    /// First lines of the statements this prefix covered.
    pub covered_lines: Vec<u32>,
    pub coverage: CoverageFigure,
    pub in_minimal_set: bool,
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct UsageSummary {
    pub calls: usize,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_prompt_tokens: u64,
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct ExecTimings {
    pub total_ms: u64,
    pub model_ms: u64,
    pub sandbox_ms: u64,
}

impl ExecReport {
    pub fn build(snippet: &Snippet, searched: Searched, elapsed: Duration) -> Self {
        let Searched {
            tree,
            calls,
            stop,
            model_ms,
            run_ms,
        } = searched;
        let total = snippet.statements.len();
        let set_ids = tree.minimal_set();
        let attempt = |id: usize| -> Option<Attempt> {
            let n = tree.get(id)?;
            Some(Attempt {
                node: id,
                prefix: n.prefix.code.clone(),
                coverage: CoverageFigure::of(n.covered.len(), total),
                ending: n.execution.as_ref().map(|e| e.ending.clone()),
            })
        };
        let best_id = tree.best();
        let runs_of = |ids: &[usize]| -> Vec<&Execution> {
            ids.iter()
                .filter_map(|&i| tree.get(i)?.execution.as_ref())
                .collect()
        };
        let best_runs = runs_of(&best_id.into_iter().collect::<Vec<_>>());
        let set_runs = runs_of(&set_ids);
        let best_status = statement_status(&snippet.statements, best_runs.iter().copied());
        let set_status = statement_status(&snippet.statements, set_runs.iter().copied());
        let line_coverage = snippet
            .text
            .lines()
            .enumerate()
            .map(|(i, text)| {
                let line = i as u32 + 1;
                let stmt = snippet.statements.at_line(line);
                LineView {
                    line,
                    text: text.to_string(),
                    best: stmt.and_then(|s| best_status.get(s).copied()),
                    set: stmt.and_then(|s| set_status.get(s).copied()),
                }
            })
            .collect();
        let union: BTreeSet<usize> = set_ids
            .iter()
            .filter_map(|&i| tree.get(i))
            .flat_map(|n| n.covered.iter().copied())
            .collect();
        let tree_view = node_views(&tree, snippet, &set_ids);
        let usage = UsageSummary {
            calls: calls.len(),
            prompt_tokens: calls.iter().map(|c| c.prompt_tokens).sum(),
            completion_tokens: calls.iter().map(|c| c.completion_tokens).sum(),
            cached_prompt_tokens: calls.iter().map(|c| c.cached_prompt_tokens).sum(),
        };
        ExecReport {
            snippet: snippet.name.clone(),
            lines: snippet.statements.line_count(),
            statements: total,
            undefined: snippet.undefined.clone(),
            as_is: attempt(0).unwrap_or(Attempt {
                node: 0,
                prefix: String::new(),
                coverage: CoverageFigure::of(0, total),
                ending: None,
            }),
            best: best_id.and_then(attempt),
            minimal_set: set_ids.iter().filter_map(|&i| attempt(i)).collect(),
            set_coverage: CoverageFigure::of(union.len(), total),
            line_coverage,
            tree: tree_view,
            stop,
            usage,
            calls,
            timings: ExecTimings {
                total_ms: elapsed.as_millis().min(u64::MAX as u128) as u64,
                model_ms,
                sandbox_ms: run_ms,
            },
        }
    }

    /// Whether the best prefix lets the snippet run to its end.
    pub fn runs(&self) -> bool {
        self.best
            .as_ref()
            .and_then(|b| b.ending.as_ref())
            .is_some_and(Ending::finished)
    }

    /// The report as text: best prefix, minimal set, per-line coverage, tree, cost.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let names: Vec<&str> = self
            .undefined
            .names
            .iter()
            .map(|n| n.name.as_str())
            .collect();
        let _ = writeln!(
            out,
            "{}: {} statements on {} lines; undefined names: {}",
            self.snippet,
            self.statements,
            self.lines,
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        );
        let _ = writeln!(out, "As is: {}", describe(&self.as_is));
        match &self.best {
            Some(best) => {
                let _ = writeln!(out, "\nBest prefix (#{}): {}", best.node, describe(best));
                out.push_str(&indent(&crate::exec::standins::fold_classes(&best.prefix)));
            }
            None => out.push_str("\nNo prefix ran.\n"),
        }
        let ids: Vec<String> = self
            .minimal_set
            .iter()
            .map(|a| format!("#{}", a.node))
            .collect();
        let _ = writeln!(
            out,
            "\nMinimal set: {} prefix{} ({}) cover {}/{} statements ({})",
            self.minimal_set.len(),
            if self.minimal_set.len() == 1 {
                ""
            } else {
                "es"
            },
            ids.join(", "),
            self.set_coverage.covered,
            self.set_coverage.total,
            percent(self.set_coverage.fraction)
        );
        for member in &self.minimal_set {
            if Some(member.node) == self.best.as_ref().map(|b| b.node) {
                continue;
            }
            let _ = writeln!(out, "#{}: {}", member.node, describe(member));
            out.push_str(&indent(&crate::exec::standins::fold_classes(
                &member.prefix,
            )));
        }
        out.push_str("\nCoverage per line (best prefix | minimal set):\n");
        for l in &self.line_coverage {
            let mark = |s: Option<LineStatus>| s.map_or(' ', LineStatus::mark);
            let _ = writeln!(
                out,
                "{:>4} {} {} | {}",
                l.line,
                mark(l.best),
                mark(l.set),
                l.text
            );
        }
        out.push_str("     (+ finished, ! raised every time it ran, - not reached)\n");
        out.push_str("\nTree of attempts:\n");
        out.push_str(&self.tree_text());
        let _ = writeln!(
            out,
            "\nModel: {} calls, {} prompt tokens ({} cached), {} reply tokens. Time: {:.1} s \
             (model {:.1} s, sandbox {:.1} s). Stopped: {}.",
            self.usage.calls,
            self.usage.prompt_tokens,
            self.usage.cached_prompt_tokens,
            self.usage.completion_tokens,
            self.timings.total_ms as f64 / 1000.0,
            self.timings.model_ms as f64 / 1000.0,
            self.timings.sandbox_ms as f64 / 1000.0,
            match self.stop {
                Stop::FullCoverage => "every statement covered",
                Stop::StepsDone => "all steps done",
                Stop::Budget => "token budget spent",
            }
        );
        out
    }

    fn tree_text(&self) -> String {
        let mut out = String::new();
        let children = |id: usize| -> Vec<&NodeView> {
            self.tree.iter().filter(|n| n.parent == Some(id)).collect()
        };
        fn walk<'a>(
            node: &'a NodeView,
            prefix: &str,
            last: bool,
            root: bool,
            children: &dyn Fn(usize) -> Vec<&'a NodeView>,
            out: &mut String,
        ) {
            let branch = if root {
                ""
            } else if last {
                "└─ "
            } else {
                "├─ "
            };
            let _ = writeln!(out, "{prefix}{branch}{}", node_line(node));
            let next_prefix = if root {
                String::new()
            } else if last {
                format!("{prefix}   ")
            } else {
                format!("{prefix}│  ")
            };
            let kids = children(node.id);
            for (i, kid) in kids.iter().enumerate() {
                walk(kid, &next_prefix, i + 1 == kids.len(), false, children, out);
            }
        }
        for root in self.tree.iter().filter(|n| n.parent.is_none()) {
            walk(root, "", true, true, &children, &mut out);
        }
        out
    }
}

fn node_line(n: &NodeView) -> String {
    let mut text = format!("#{} {}: ", n.id, n.step.label());
    match (&n.reply_problem, &n.ending) {
        (Some(problem), _) => text.push_str(&format!("no prefix ({problem})")),
        (None, Some(ending)) => {
            text.push_str(&format!(
                "{}/{} covered, {}",
                n.coverage.covered,
                n.coverage.total,
                short_ending(ending)
            ));
        }
        (None, None) => text.push_str("not run"),
    }
    if let Some(d) = n.duplicate_of {
        text.push_str(&format!(" (same prefix as #{d})"));
    }
    if !n.removed_statements.is_empty() {
        text.push_str(&format!(
            " ({} prefix statement{} removed)",
            n.removed_statements.len(),
            if n.removed_statements.len() == 1 {
                ""
            } else {
                "s"
            }
        ));
    }
    if !n.stand_ins.is_empty() {
        text.push_str(&format!(" (stand-ins: {})", n.stand_ins.join(", ")));
    }
    if n.in_minimal_set {
        text.push_str(" *");
    }
    text
}

fn node_views(tree: &Tree, snippet: &Snippet, set: &[usize]) -> Vec<NodeView> {
    let total = snippet.statements.len();
    tree.nodes
        .iter()
        .map(|n: &Node| NodeView {
            id: n.id,
            parent: n.parent,
            step: n.step,
            prefix: n.prefix.code.clone(),
            reply: n.reply.clone(),
            reply_problem: n.reply_problem.clone(),
            dropped_entries: n.dropped_entries.clone(),
            removed_statements: n.removed_statements.clone(),
            duplicate_of: n.duplicate_of,
            ending: n.execution.as_ref().map(|e| e.ending.clone()),
            stand_ins: n
                .execution
                .as_ref()
                .map(|e| e.stand_ins.clone())
                .unwrap_or_default(),
            covered_lines: n
                .covered
                .iter()
                .filter_map(|&i| snippet.statements.list.get(i).map(|s| s.first))
                .collect(),
            coverage: CoverageFigure::of(n.covered.len(), total),
            in_minimal_set: set.contains(&n.id),
        })
        .collect()
}

fn describe(a: &Attempt) -> String {
    format!(
        "{}/{} statements ({}), {}",
        a.coverage.covered,
        a.coverage.total,
        percent(a.coverage.fraction),
        a.ending
            .as_ref()
            .map_or_else(|| "not run".to_string(), short_ending)
    )
}

pub(crate) fn percent(fraction: f64) -> String {
    format!("{:.1}%", fraction * 100.0)
}

fn indent(code: &str) -> String {
    if code.trim().is_empty() {
        return "    (empty)\n".into();
    }
    code.lines().map(|l| format!("    {l}\n")).collect()
}
