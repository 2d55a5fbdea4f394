//! The CFG as a model reads it (ORCA's textual form, with ldb's block ids): each block's
//! statements with their line numbers, then where control goes next, `If True` / `If False` at
//! a condition, `<END>` at the end of the program or a function.

use std::fmt::Write as _;

use super::block_label;
use crate::python::cfg::{BlockKind, EdgeKind, ProgramCfg, ScopeKind};
use crate::python::source::SourceFile;

/// Every block label of the program, in scope and block order (exits are not blocks one runs).
pub fn labels(cfg: &ProgramCfg) -> Vec<String> {
    let mut out = Vec::new();
    for (si, scope) in cfg.scopes.iter().enumerate() {
        for block in scope.graph.node_weights() {
            if block.kind == BlockKind::Code {
                out.push(block_label(cfg, si, block.number));
            }
        }
    }
    out
}

/// Find a label: its scope and block number.
pub fn parse_label(cfg: &ProgramCfg, label: &str) -> Option<(usize, usize)> {
    let label = label.trim();
    let (scope, number) = match label.rsplit_once(':') {
        Some((qualname, b)) => {
            let scope = cfg
                .scopes
                .iter()
                .position(|s| s.qualname == qualname && s.kind != ScopeKind::Module)?;
            (scope, b)
        }
        None => (0, label),
    };
    let number: usize = number.strip_prefix('B')?.parse().ok()?;
    let block = cfg.scopes.get(scope)?.block(number)?;
    (block.kind == BlockKind::Code).then_some((scope, number))
}

/// The text of the CFG for the prediction prompt.
pub fn render(cfg: &ProgramCfg, src: &SourceFile) -> String {
    let mut out = String::new();
    for (si, scope) in cfg.scopes.iter().enumerate() {
        match scope.kind {
            ScopeKind::Module => out.push_str("Module (the program starts at its first block):\n"),
            ScopeKind::Function | ScopeKind::AsyncFunction => {
                let _ = writeln!(
                    out,
                    "\nFunction {} (runs when called; <END> returns to the caller):",
                    scope.qualname
                );
            }
            ScopeKind::Class => {
                let _ = writeln!(
                    out,
                    "\nClass body {} (runs when the class statement runs):",
                    scope.qualname
                );
            }
        }
        for block in scope.graph.node_weights() {
            if block.kind != BlockKind::Code {
                continue;
            }
            let _ = writeln!(out, "Block {}:", block_label(cfg, si, block.number));
            out.push_str("  Statements:\n");
            for stmt in &block.stmts {
                for line in stmt.first..=stmt.last {
                    let text = src.line(line).unwrap_or("").trim_end();
                    let _ = writeln!(out, "    {line:>3} | {text}");
                }
            }
            out.push_str("  Next:\n");
            let exit = scope.exit_number();
            let target = |to: usize| {
                if to == exit {
                    "<END>".to_string()
                } else {
                    format!("go to {}", block_label(cfg, si, to))
                }
            };
            for (to, kind) in scope.successors(block.number) {
                let line = match kind {
                    EdgeKind::Next => target(to),
                    EdgeKind::True => format!("If True: {}", target(to)),
                    EdgeKind::False => format!("If False: {}", target(to)),
                    EdgeKind::LoopBack => format!("{} (next loop iteration)", target(to)),
                    EdgeKind::Break => format!("{} (break)", target(to)),
                    EdgeKind::Exception => format!("If an exception is caught: {}", target(to)),
                    EdgeKind::Return => format!("Return: {}", target(to)),
                    EdgeKind::Raise => "Raise: the exception leaves this code".to_string(),
                };
                let _ = writeln!(out, "    {line}");
            }
            if scope.successors(block.number).is_empty() {
                out.push_str("    <END>\n");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(code: &str) -> (ProgramCfg, SourceFile) {
        let src = SourceFile::new(code);
        (ProgramCfg::build(&src).unwrap(), src)
    }

    #[test]
    fn branches_and_loops_are_spelled_out() {
        let (cfg, src) =
            cfg("n = 3\nfor i in range(n):\n    if i > 1:\n        n += i\nprint(n)\n");
        let text = render(&cfg, &src);
        assert!(text.contains("Block B0:\n  Statements:\n      1 | n = 3\n  Next:\n    go to B1\n"));
        assert!(text.contains("If True: go to B2"));
        assert!(text.contains("If False: go to B4"));
        assert!(text.contains("go to B1 (next loop iteration)"));
        assert!(text.contains("Block B4:\n  Statements:\n      5 | print(n)\n  Next:\n    <END>\n"));
        assert_eq!(labels(&cfg), ["B0", "B1", "B2", "B3", "B4"]);
    }

    #[test]
    fn function_blocks_have_qualified_labels() {
        let (cfg, src) = cfg("def f(x):\n    return x + 1\nprint(f(2))\n");
        assert_eq!(labels(&cfg), ["B0", "f:B0"]);
        assert_eq!(parse_label(&cfg, "f:B0"), Some((1, 0)));
        assert_eq!(parse_label(&cfg, " B0 "), Some((0, 0)));
        assert_eq!(parse_label(&cfg, "B9"), None);
        assert_eq!(parse_label(&cfg, "g:B0"), None);
        assert!(render(&cfg, &src).contains("Function f (runs when called"));
    }
}
