//! What a prompt shows of a user's module when one function of it is repaired: the function in
//! full, and only the context it needs, not the whole file (a real module runs to thousands of
//! lines; a model reads the function and what it refers to).
//!
//! The view is the module's imports that bind names the function uses, the module-level names
//! it uses (a function or class as its signature line, a constant as its assignment's first
//! line), the enclosing classes of a method (their header, class attributes and the other
//! methods' signatures), and the function itself at its place in its class. A reply that
//! repeats the view is spliced like any candidate: only the function (and new helpers and
//! imports) goes back into the module.

use std::collections::BTreeSet;

use rustpython_parser::ast::{self, Ranged};

use super::defs;
use super::source::{parse_module, SourceFile};
use super::toplevel::bound_names;

/// Lines of a class shown besides the method: its header, attributes and other methods'
/// signatures, at most this many.
const CLASS_LINES: usize = 40;
/// Module-level definitions the function uses, shown at most.
const CONTEXT_ITEMS: usize = 40;

/// The view of `module` for repairing the function at `entry` (a dotted path), or `None`
/// when the module does not parse or has no such function.
pub fn function_view(module: &str, entry: &str) -> Option<String> {
    let src = SourceFile::new(module);
    let suite = parse_module(&src).ok()?;
    let site = defs::find_in(&src, &suite, entry)?;
    let lines: Vec<&str> = module.lines().collect();
    let text = |a: u32, b: u32| -> String {
        lines
            .get(a.saturating_sub(1) as usize..(b as usize).min(lines.len()))
            .map(|ls| ls.join("\n"))
            .unwrap_or_default()
    };
    let used = names_in(&text(site.first, site.last));
    let mut out: Vec<String> = Vec::new();
    // Imports binding a name the function uses.
    for stmt in &suite {
        if matches!(stmt, ast::Stmt::Import(_) | ast::Stmt::ImportFrom(_))
            && bound_names(stmt).iter().any(|n| used.contains(n))
        {
            let (a, b) = stmt_lines(&src, stmt);
            out.push(text(a, b));
        }
    }
    // Module-level definitions it uses, in module order.
    // The function's own definition (or its outermost class) is shown in full below.
    let outer = entry.split('.').next();
    let mut context = Vec::new();
    for stmt in &suite {
        let names = bound_names(stmt);
        if names.iter().any(|n| Some(n.as_str()) == outer) {
            continue;
        }
        if matches!(stmt, ast::Stmt::Import(_) | ast::Stmt::ImportFrom(_)) {
            continue;
        }
        if !names.iter().any(|n| used.contains(n)) {
            continue;
        }
        let (a, _) = stmt_lines(&src, stmt);
        let header = header_line(&src, stmt).unwrap_or(a);
        let mut shown = text(a, header);
        if matches!(
            stmt,
            ast::Stmt::FunctionDef(_) | ast::Stmt::AsyncFunctionDef(_) | ast::Stmt::ClassDef(_)
        ) {
            shown.push_str(" ...");
        } else if stmt_lines(&src, stmt).1 > header {
            shown.push_str("  # ...");
        }
        context.push(shown);
        if context.len() >= CONTEXT_ITEMS {
            break;
        }
    }
    if !out.is_empty() && !context.is_empty() {
        out.push(String::new());
    }
    out.extend(context);
    if !out.is_empty() {
        out.push(String::new());
        out.push(String::new());
    }
    // The enclosing classes, then the function in its place.
    let mut body = suite.as_slice();
    let parts: Vec<&str> = entry.split('.').collect();
    for (depth, class_name) in parts[..parts.len() - 1].iter().enumerate() {
        let class = body.iter().rev().find_map(|s| match s {
            ast::Stmt::ClassDef(c) if c.name.as_str() == *class_name => Some(c),
            _ => None,
        })?;
        let class_stmt = ast::Stmt::ClassDef(class.clone());
        let (a, _) = stmt_lines(&src, &class_stmt);
        let header = header_line(&src, &class_stmt).unwrap_or(a);
        out.push(text(a, header));
        let next = parts.get(depth + 1).copied().unwrap_or_default();
        let mut shown = 0;
        for s in &class.body {
            if shown >= CLASS_LINES {
                out.push(format!("{}    # ...", indent_of(&text(a, a))));
                break;
            }
            let (sa, sb) = stmt_lines(&src, s);
            let own = match s {
                ast::Stmt::FunctionDef(f) => f.name.as_str() == next,
                ast::Stmt::AsyncFunctionDef(f) => f.name.as_str() == next,
                ast::Stmt::ClassDef(c) => c.name.as_str() == next,
                _ => false,
            };
            if own {
                // Shown below, in full (or as the next class).
                continue;
            }
            match s {
                ast::Stmt::FunctionDef(_)
                | ast::Stmt::AsyncFunctionDef(_)
                | ast::Stmt::ClassDef(_) => {
                    let h = header_line(&src, s).unwrap_or(sa);
                    out.push(format!("{} ...", text(sa, h)));
                }
                ast::Stmt::Expr(_) if sa == stmt_lines(&src, &class.body[0]).0 => {
                    // The class docstring.
                    out.push(text(sa, sb));
                }
                _ => out.push(first_line_with_more(&text(sa, sb))),
            }
            shown += 1;
        }
        body = &class.body;
    }
    out.push(text(site.first, site.last));
    let mut view = out.join("\n");
    view.push('\n');
    Some(view)
}

/// The first line of a statement, marked when it goes on.
fn first_line_with_more(text: &str) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default().to_string();
    if lines.next().is_some() {
        format!("{first}  # ...")
    } else {
        first
    }
}

fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// Identifiers in `code` (a cheap over-approximation of the names it uses).
fn names_in(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut cur = String::new();
    for c in code.chars() {
        if c == '_' || c.is_alphanumeric() {
            cur.push(c);
        } else if !cur.is_empty() {
            if !cur.starts_with(|c: char| c.is_ascii_digit()) {
                out.insert(std::mem::take(&mut cur));
            } else {
                cur.clear();
            }
        }
    }
    if !cur.is_empty() && !cur.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(cur);
    }
    out
}

fn line(src: &SourceFile, offset: usize) -> u32 {
    src.line_of_offset(u32::try_from(offset).unwrap_or(u32::MAX))
}

/// A statement's lines, from its first decorator.
fn stmt_lines(src: &SourceFile, stmt: &ast::Stmt) -> (u32, u32) {
    let decorators: &[ast::Expr] = match stmt {
        ast::Stmt::FunctionDef(f) => &f.decorator_list,
        ast::Stmt::AsyncFunctionDef(f) => &f.decorator_list,
        ast::Stmt::ClassDef(c) => &c.decorator_list,
        _ => &[],
    };
    let start = decorators
        .iter()
        .map(|d| usize::from(d.start()))
        .chain([usize::from(stmt.start())])
        .min()
        .unwrap_or(0);
    let end = usize::from(stmt.end()).saturating_sub(1).max(start);
    (line(src, start), line(src, end))
}

/// The last line of a compound statement's header (before its body), or of a simple one's
/// first line.
fn header_line(src: &SourceFile, stmt: &ast::Stmt) -> Option<u32> {
    let body: &[ast::Stmt] = match stmt {
        ast::Stmt::FunctionDef(f) => &f.body,
        ast::Stmt::AsyncFunctionDef(f) => &f.body,
        ast::Stmt::ClassDef(c) => &c.body,
        _ => return Some(line(src, usize::from(stmt.start()))),
    };
    let first = body.first()?;
    let body_line = line(src, usize::from(first.start()));
    let def_line = line(src, usize::from(stmt.start()));
    Some(body_line.saturating_sub(1).max(def_line))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = "import os\nimport re\nfrom json import loads, dumps\n\nLIMIT = 10\nOTHER = 3\n\n\ndef helper(x, y=2):\n    return x * y\n\n\ndef unrelated():\n    return 0\n\n\nclass Shell(object):\n    \"\"\"A shell.\"\"\"\n    name = 'sh'\n\n    def __init__(self):\n        self.x = 1\n\n    def info(self, v):\n        if re.match('a', v):\n            return helper(LIMIT)\n        return loads(v)\n";

    #[test]
    fn a_method_is_shown_with_its_class_and_what_it_uses() {
        let view = function_view(MODULE, "Shell.info").expect("view");
        assert_eq!(
            view,
            "import re\nfrom json import loads, dumps\n\nLIMIT = 10\ndef helper(x, y=2): ...\n\n\nclass Shell(object):\n    \"\"\"A shell.\"\"\"\n    name = 'sh'\n    def __init__(self): ...\n    def info(self, v):\n        if re.match('a', v):\n            return helper(LIMIT)\n        return loads(v)\n"
        );
    }

    #[test]
    fn a_function_alone_needs_no_class() {
        let view = function_view(MODULE, "helper").expect("view");
        assert_eq!(view, "def helper(x, y=2):\n    return x * y\n");
        assert!(function_view(MODULE, "missing").is_none());
    }
}
