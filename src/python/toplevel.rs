//! A module's top-level statements as line ranges: what each one is, which names it binds, and
//! where it starts and ends. Splicing a repaired function into a user's module
//! ([`crate::python::splice`]) and reading a program file into a task both work on this view.
//!
//! Ranges are whole lines, 1-based and inclusive; a decorated definition starts at its first
//! decorator. A module that does not parse has no view ([`TopLevel::read`] returns `None`);
//! [`def_lines_by_text`] finds a top-level `def` by indentation alone for that case.

use rustpython_parser::ast::{self, Ranged};

use super::source::{parse_module, SourceFile};
use super::walk::{self, Binding};

/// What a top-level statement is, as far as splicing cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StmtClass {
    /// `import x`, `from x import y`.
    Import,
    /// `from __future__ import ...`: must stay first, never moved or added after code.
    FutureImport,
    /// A function or class definition.
    Def,
    /// `NAME = ...`, `NAME: T = ...`.
    Assign,
    /// A bare string: the module docstring when first.
    Docstring,
    /// Anything else (calls, loops, `if __name__ == ...`).
    Other,
}

/// One top-level statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stmt {
    pub class: StmtClass,
    /// Names the statement binds at module level (for `if`/`try` blocks, the names bound by
    /// the imports, definitions and assignments inside them).
    pub names: Vec<String>,
    /// First and last line, 1-based, inclusive.
    pub first: u32,
    pub last: u32,
    /// For a function: the line its body starts on, and its docstring's lines.
    pub body_first: Option<u32>,
    pub doc: Option<(u32, u32)>,
}

/// The top-level statements of a module, in order.
#[derive(Debug, Clone, Default)]
pub struct TopLevel {
    pub stmts: Vec<Stmt>,
}

impl TopLevel {
    /// The view of `text`, or `None` when it does not parse.
    pub fn read(text: &str) -> Option<TopLevel> {
        let src = SourceFile::new(text);
        let suite = parse_module(&src).ok()?;
        let line = |offset: usize| src.line_of_offset(u32::try_from(offset).unwrap_or(u32::MAX));
        let mut stmts = Vec::with_capacity(suite.len());
        for (i, stmt) in suite.iter().enumerate() {
            let start = decorator_start(stmt).unwrap_or_else(|| usize::from(stmt.start()));
            let end = usize::from(stmt.end()).saturating_sub(1).max(start);
            let class = match stmt {
                ast::Stmt::ImportFrom(f)
                    if f.module
                        .as_ref()
                        .is_some_and(|m| m.as_str() == "__future__") =>
                {
                    StmtClass::FutureImport
                }
                ast::Stmt::Import(_) | ast::Stmt::ImportFrom(_) => StmtClass::Import,
                ast::Stmt::FunctionDef(_)
                | ast::Stmt::AsyncFunctionDef(_)
                | ast::Stmt::ClassDef(_) => StmtClass::Def,
                ast::Stmt::Assign(_) | ast::Stmt::AnnAssign(_) => StmtClass::Assign,
                _ if i == 0 && docstring(stmt).is_some() => StmtClass::Docstring,
                _ => StmtClass::Other,
            };
            let mut names = Vec::new();
            bound_names_deep(stmt, &mut names);
            let body = match stmt {
                ast::Stmt::FunctionDef(f) => Some(&f.body),
                ast::Stmt::AsyncFunctionDef(f) => Some(&f.body),
                _ => None,
            };
            let body_first = body
                .and_then(|b| b.first())
                .map(|b| line(usize::from(b.start())));
            let doc = body
                .and_then(|b| b.first())
                .filter(|b| docstring(b).is_some())
                .map(|b| {
                    let end = usize::from(b.end()).saturating_sub(1);
                    (line(usize::from(b.start())), line(end))
                });
            stmts.push(Stmt {
                class,
                names,
                first: line(start),
                last: line(end),
                body_first,
                doc,
            });
        }
        Some(TopLevel { stmts })
    }

    /// The definition of `name` (a function or class), if the module has one at top level.
    /// With several, the last wins, as it does when Python runs the module.
    pub fn def(&self, name: &str) -> Option<&Stmt> {
        self.stmts
            .iter()
            .rev()
            .find(|s| s.class == StmtClass::Def && s.names.iter().any(|n| n == name))
    }

    /// Whether some top-level statement binds `name`.
    pub fn binds(&self, name: &str) -> bool {
        self.stmts.iter().any(|s| s.names.iter().any(|n| n == name))
    }
}

fn decorator_start(stmt: &ast::Stmt) -> Option<usize> {
    let decorators = match stmt {
        ast::Stmt::FunctionDef(f) => &f.decorator_list,
        ast::Stmt::AsyncFunctionDef(f) => &f.decorator_list,
        ast::Stmt::ClassDef(c) => &c.decorator_list,
        _ => return None,
    };
    // A decorator's expression starts after its `@`, on the same line.
    decorators.iter().map(|d| usize::from(d.start())).min()
}

/// The text of a docstring statement.
pub fn docstring(stmt: &ast::Stmt) -> Option<String> {
    let ast::Stmt::Expr(e) = stmt else {
        return None;
    };
    match e.value.as_ref() {
        ast::Expr::Constant(c) => match &c.value {
            ast::Constant::Str(s) => {
                let s = s.trim();
                (!s.is_empty()).then(|| s.to_string())
            }
            _ => None,
        },
        _ => None,
    }
}

/// Names a top-level statement binds directly: by `def`/`class`, imports and assignments
/// (loop, `with` and `except` targets aside).
pub fn bound_names(stmt: &ast::Stmt) -> Vec<String> {
    walk::bindings(stmt)
        .into_iter()
        .filter(|(_, b)| *b != Binding::Target)
        .map(|(n, _)| n)
        .collect()
}

/// Names bound by `stmt`, and by the statements of its blocks in the same scope (a module
/// often imports or defines inside `try: ... except ImportError:`).
fn bound_names_deep(stmt: &ast::Stmt, out: &mut Vec<String>) {
    walk::walk_scope(std::slice::from_ref(stmt), &mut |s| {
        out.extend(bound_names(s))
    });
}

pub use super::walk::target_names;

/// The lines of the top-level `def NAME` (or `async def`, or `class NAME`) found by
/// indentation, for text that does not parse: from its first decorator to the last indented
/// or blank line before the next line that starts at column 0 (comments there end it too).
/// The last such definition wins, as in Python.
pub fn def_lines_by_text(text: &str, name: &str) -> Option<(u32, u32)> {
    let lines: Vec<&str> = text.lines().collect();
    let opens = |line: &str| {
        let rest = line
            .strip_prefix("async ")
            .map(str::trim_start)
            .unwrap_or(line);
        let rest = match rest.strip_prefix("def ") {
            Some(r) => r,
            None => match rest.strip_prefix("class ") {
                Some(r) => r,
                None => return false,
            },
        };
        let rest = rest.trim_start();
        rest.strip_prefix(name)
            .is_some_and(|after| after.trim_start().starts_with(['(', ':']))
    };
    let start = lines.iter().rposition(|l| opens(l))?;
    let mut first = start;
    while first > 0 && lines[first - 1].starts_with('@') {
        first -= 1;
    }
    let mut last = start;
    for (i, line) in lines.iter().enumerate().skip(start + 1) {
        if line.trim().is_empty() {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            last = i;
        } else {
            break;
        }
    }
    Some((first as u32 + 1, last as u32 + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = "\"\"\"Doc.\"\"\"\nimport os\nfrom __future__ import annotations\nLIMIT = 3\n\n@cache\n@other(1)\ndef f(x):\n    return x\n\ntry:\n    import numpy as np\nexcept ImportError:\n    np = None\n\nclass C:\n    pass\nprint(f(1))\n";

    #[test]
    fn statements_get_their_lines_class_and_names() {
        let top = TopLevel::read(MODULE).expect("parses");
        let view: Vec<(StmtClass, Vec<&str>, u32, u32)> = top
            .stmts
            .iter()
            .map(|s| {
                (
                    s.class,
                    s.names.iter().map(String::as_str).collect(),
                    s.first,
                    s.last,
                )
            })
            .collect();
        assert_eq!(
            view,
            vec![
                (StmtClass::Docstring, vec![], 1, 1),
                (StmtClass::Import, vec!["os"], 2, 2),
                (StmtClass::FutureImport, vec!["annotations"], 3, 3),
                (StmtClass::Assign, vec!["LIMIT"], 4, 4),
                (StmtClass::Def, vec!["f"], 6, 9),
                (StmtClass::Other, vec!["np", "np"], 11, 14),
                (StmtClass::Def, vec!["C"], 16, 17),
                (StmtClass::Other, vec![], 18, 18),
            ]
        );
        assert_eq!(top.def("f").map(|s| (s.first, s.last)), Some((6, 9)));
        assert!(top.def("LIMIT").is_none());
        assert!(top.binds("np") && top.binds("LIMIT") && !top.binds("x"));
    }

    #[test]
    fn a_def_is_found_by_indentation_when_the_text_does_not_parse() {
        let text = "import os\n\n@dec\ndef f(x):\n    if x\n        return 1\n\n    return 2\n# after\ndef g():\n    pass\n";
        assert_eq!(def_lines_by_text(text, "f"), Some((3, 8)));
        assert_eq!(def_lines_by_text(text, "g"), Some((10, 11)));
        assert_eq!(def_lines_by_text(text, "fx"), None);
        assert_eq!(def_lines_by_text(text, "h"), None);
    }
}
