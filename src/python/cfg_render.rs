//! Rendering a [`ProgramCfg`]: a stable text listing (for people and snapshots) and Graphviz DOT.
//!
//! Text format, per scope:
//!
//! ```text
//! scope 1 f (function, def 1, lines 2-5, parent 0)
//!   B0 [2-3] -> B1 (next)
//!          2 simple   | total = 0
//!   B1 [3] -> B2 (true), B3 (false)
//!          3 for      | for x in xs:
//!   ...
//!   B4 exit <- B1 (false), B2 (return)
//! ```
//!
//! Each block head lists its merged line ranges and successors (`(unreachable)` when a
//! non-entry block has no predecessor); then every line of its statements follows, the
//! statement kind on the first line of each.

use std::fmt::Write as _;

use super::cfg::{BlockKind, EdgeKind, ProgramCfg, ScopeCfg, ScopeKind};
use super::source::SourceFile;

pub(crate) fn render_text(cfg: &ProgramCfg, src: &SourceFile) -> String {
    let width = src.line_count().max(1).to_string().len().max(3);
    let mut out = String::new();
    for (idx, scope) in cfg.scopes.iter().enumerate() {
        let _ = writeln!(out, "{}", scope_title(idx, scope));
        for block in scope.graph.node_weights() {
            let n = block.number;
            if block.kind == BlockKind::Exit {
                let _ = writeln!(
                    out,
                    "  B{n} exit{}",
                    edge_list(" <-", &scope.predecessors(n))
                );
                continue;
            }
            let unreachable = n != scope.entry.index() && scope.predecessors(n).is_empty();
            let _ = writeln!(
                out,
                "  B{n} [{}]{}{}",
                ranges(&cfg.block_lines(idx, n)),
                edge_list(" ->", &scope.successors(n)),
                if unreachable { "  (unreachable)" } else { "" },
            );
            for stmt in &block.stmts {
                for line in stmt.first..=stmt.last {
                    let kind = if line == stmt.first {
                        stmt.kind.to_string()
                    } else {
                        String::new()
                    };
                    let text = src.line(line).unwrap_or("").trim_end();
                    let _ = writeln!(out, "    {line:>width$} {kind:<8} | {text}");
                }
            }
        }
    }
    out
}

pub(crate) fn render_dot(cfg: &ProgramCfg, src: &SourceFile) -> String {
    let mut out = String::from("digraph cfg {\n");
    out.push_str("  node [shape=box, fontname=\"monospace\", fontsize=10];\n");
    out.push_str("  edge [fontname=\"monospace\", fontsize=9];\n");
    for (idx, scope) in cfg.scopes.iter().enumerate() {
        let _ = writeln!(out, "  subgraph cluster_{idx} {{");
        let _ = writeln!(out, "    label=\"{}\";", escape(&scope_title(idx, scope)));
        for block in scope.graph.node_weights() {
            let n = block.number;
            if block.kind == BlockKind::Exit {
                let _ = writeln!(out, "    s{idx}_b{n} [label=\"exit\", shape=oval];");
                continue;
            }
            // `\l` ends a left-justified line in Graphviz labels.
            let mut label = format!("B{n}\\l");
            for stmt in &block.stmts {
                for line in stmt.first..=stmt.last {
                    let text = src.line(line).unwrap_or("").trim_end();
                    label.push_str(&escape(&format!("{line}: {text}")));
                    label.push_str("\\l");
                }
            }
            let _ = writeln!(out, "    s{idx}_b{n} [label=\"{label}\"];");
        }
        for block in scope.graph.node_weights() {
            for (to, kind) in scope.successors(block.number) {
                let _ = writeln!(
                    out,
                    "    s{idx}_b{} -> s{idx}_b{to} [label=\"{kind}\"{}];",
                    block.number,
                    if matches!(kind, EdgeKind::Exception | EdgeKind::Raise) {
                        ", style=dashed"
                    } else {
                        ""
                    }
                );
            }
        }
        out.push_str("  }\n");
    }
    out.push_str("}\n");
    out
}

fn scope_title(idx: usize, scope: &ScopeCfg) -> String {
    let lines = match scope.line_span() {
        Some((a, b)) => format!(", lines {}", span(a, b)),
        None => String::new(),
    };
    match (scope.kind, scope.parent) {
        (ScopeKind::Module, _) | (_, None) => {
            format!("scope {idx} {} ({}{lines})", scope.qualname, scope.kind)
        }
        (_, Some(parent)) => format!(
            "scope {idx} {} ({}, def {}{lines}, parent {parent})",
            scope.qualname,
            scope.kind,
            span(scope.def_lines.0, scope.def_lines.1)
        ),
    }
}

fn span(a: u32, b: u32) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a}-{b}")
    }
}

fn ranges(rs: &[(u32, u32)]) -> String {
    rs.iter()
        .map(|&(a, b)| span(a, b))
        .collect::<Vec<_>>()
        .join(",")
}

fn edge_list(arrow: &str, edges: &[(usize, EdgeKind)]) -> String {
    if edges.is_empty() {
        return String::new();
    }
    let items: Vec<String> = edges.iter().map(|(b, k)| format!("B{b} ({k})")).collect();
    format!("{arrow} {}", items.join(", "))
}

/// Escape text for a double-quoted DOT string; control characters become spaces.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\t' => out.push_str("    "),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}
impl ProgramCfg {
    /// Human-readable listing.
    pub fn render_text(&self, src: &SourceFile) -> String {
        render_text(self, src)
    }

    /// Graphviz DOT with one cluster per scope.
    pub fn render_dot(&self, src: &SourceFile) -> String {
        render_dot(self, src)
    }
}
