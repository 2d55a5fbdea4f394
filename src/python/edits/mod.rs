//! Model-free single edits of a program at chosen statements: the `mutate` repair proposer.
//!
//! A person fixing a small bug changes one thing: a comparison, a constant by one, a variable,
//! a bound, a condition, a statement too many or in the wrong place. Given the statements
//! fault localisation ranks most suspicious (`crate::locate`), this module lists every such edit
//! of those statements, most suspicious statement first. Edits are found on the AST and made
//! on the text, so the rest of the program stays byte for byte; every edit is parsed again (one
//! that does not parse is dropped) and no program is listed twice.
//!
//! The edits (see [`EditKind`]): comparison operators; arithmetic operators and dropping an
//! added or subtracted term; integer constants ±1 and `True`/`False`; `and`/`or`, operand order
//! and dropping an operand; a condition negated or its `not` removed; ±1 on an index, a slice
//! bound, a `range` argument or a compared value; another variable of the function in place of
//! one (names spelt alike first); an undefined name replaced everywhere by a defined one;
//! `min`/`max`-style swaps and `reverse=True`; a method subscripted by mistake (`xs.count[x]`)
//! called, a sequence called by mistake (`seq(i)`) indexed; a statement deleted; the last
//! statement of a loop moved after it, a statement after a loop moved into it; a `return` added
//! where a function falls off its end; a start (`count = 0`) for a name the function only
//! updates (`count += 1`).
//!
//! Parts: `walk` (statements' expressions, names each function binds), `exprs` (edits of
//! expressions), `stmts` (edits of statements), [`guard`] (a guard against an empty argument,
//! made only on request).

mod exprs;
pub mod guard;
mod imports;
mod stmts;
pub(crate) mod strings;
mod values;
mod walk;

pub use values::Hints;

use std::collections::{BTreeSet, HashSet};

use rustpython_parser::ast::{self, Ranged, Stmt};
use serde::Serialize;

use super::normalize::program_key;
use super::source::{parse_module, SourceFile};

/// What an edit changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EditKind {
    Comparison,
    Arithmetic,
    Constant,
    Boolean,
    Negation,
    /// ±1 on an index, slice bound, `range` argument or compared value.
    OffByOne,
    Variable,
    /// An undefined name replaced at every use by a defined one.
    Rename,
    /// A builtin or method swapped for its counterpart, or `reverse=True` toggled.
    Call,
    /// `obj.method[...]` made a call.
    MethodCall,
    Delete,
    /// A statement moved out of the loop it ends, or into the loop it follows.
    Move,
    /// A `return` added where the function falls off its end.
    Return,
    /// A start (`count = 0`) given to a name the function only ever updates (`count += 1`).
    Start,
    /// `if not p: return EMPTY` added at the top of a function ([`guard`]), `if x is None`
    /// guards, an `except` that catches more.
    Guard,
    /// A string literal rewritten as a failing test's expected value has it, or a regular
    /// expression's class or quantifier changed.
    Literal,
    /// A call's arguments: one dropped, two swapped, a keyword added or changed.
    Argument,
    /// An import the program left out, for a name the failing tests could not read.
    Import,
}

/// One edited program.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Edit {
    pub kind: EditKind,
    /// First line of the edited statement.
    pub line: u32,
    /// `before → after`, for reports.
    pub description: String,
    #[serde(skip)]
    pub program: String,
}

/// A text replacement: bytes `start..end` become `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Repl {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// A candidate before it is applied.
pub(crate) struct Candidate {
    pub kind: EditKind,
    pub repls: Vec<Repl>,
    pub description: String,
}

/// What an edit of one statement may use: the source, the names in scope, the statement's
/// place among its siblings.
pub(crate) struct Context<'a> {
    pub text: &'a str,
    /// Names the enclosing function binds (parameters, locals), or the module's at top level.
    pub locals: &'a BTreeSet<String>,
    /// Of those, the parameters and the names assigned (not functions, classes or imports).
    pub variables: &'a BTreeSet<String>,
    /// Names bound anywhere a read could resolve: locals, module globals, builtins.
    pub defined: &'a BTreeSet<String>,
    /// The enclosing function's statements, for edits of every use of a name.
    pub function_body: &'a [Stmt],
    /// Enclosing statements, innermost last (loops, ifs, the function).
    pub parents: &'a [&'a Stmt],
    /// The body the statement is in and its index there.
    pub siblings: &'a [Stmt],
    pub index: usize,
}

/// Every edit of the statements starting on `targets` (first lines, most suspicious first),
/// in that order, at most `limit`.
pub fn edits(program: &str, targets: &[u32], limit: usize) -> Vec<Edit> {
    edits_with(program, targets, limit, &Hints::default(), None)
}

/// [`edits`], and before them the edits `hints` guide ([`values`]) of every statement of the
/// lines `range` (the function under test), at most `limit` of those too.
pub fn edits_with(
    program: &str,
    targets: &[u32],
    limit: usize,
    hints: &Hints,
    range: Option<(u32, u32)>,
) -> Vec<Edit> {
    let src = SourceFile::new(program.to_string());
    let Ok(suite) = parse_module(&src) else {
        return Vec::new();
    };
    let mut module_names = BTreeSet::new();
    walk::body_names(&suite, &mut module_names);
    let mut builtins: BTreeSet<String> = crate::python::builtins::BUILTINS
        .iter()
        .map(|s| s.to_string())
        .collect();
    builtins.extend(module_names.iter().cloned());
    let mut found: Vec<(u32, Vec<Candidate>)> = Vec::new();
    let mut valued: Vec<(u32, Vec<Candidate>)> = Vec::new();
    let mut generic: Vec<(u32, Vec<Candidate>)> = Vec::new();
    let mut finder = Finder {
        text: program,
        src: &src,
        targets,
        globals: &builtins,
        module_names: &module_names,
        found: &mut found,
        hints,
        range,
        valued: &mut valued,
        generic: &mut generic,
    };
    finder.body(
        &suite,
        &suite,
        &module_names,
        &module_names,
        &mut Vec::new(),
    );
    if range.is_some() {
        if let Some((line, c)) = imports::missing_imports(&src, &suite, &hints.unbound) {
            valued.push((line, vec![c]));
        }
    }
    // Most suspicious statement first; within one, in the order the edits were listed.
    found.sort_by_key(|(line, _)| targets.iter().position(|t| t == line).unwrap_or(usize::MAX));

    // Value-guided edits first, then the usual ones, then the other kinds; the statements
    // most suspicious first in each; each group has `limit` of its own.
    let by_suspicion = |(line, _): &(u32, Vec<Candidate>)| {
        targets.iter().position(|t| t == line).unwrap_or(usize::MAX)
    };
    valued.sort_by_key(by_suspicion);
    generic.sort_by_key(by_suspicion);
    let mut out = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    seen.insert(program_key(program));
    for group in [valued, found, generic] {
        let mut taken = 0;
        'lines: for (line, candidates) in group {
            for c in candidates {
                if taken >= limit {
                    break 'lines;
                }
                let Some(edited) = apply(program, &c.repls) else {
                    continue;
                };
                if parse_module(&SourceFile::new(edited.clone())).is_err() {
                    continue;
                }
                if !seen.insert(program_key(&edited)) {
                    continue;
                }
                taken += 1;
                out.push(Edit {
                    kind: c.kind,
                    line,
                    description: c.description,
                    program: edited,
                });
            }
        }
    }
    out
}

/// `text` with the replacements made; `None` when they overlap or fall outside it.
pub(crate) fn apply(text: &str, repls: &[Repl]) -> Option<String> {
    let mut sorted: Vec<&Repl> = repls.iter().collect();
    sorted.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(text.len() + 16);
    let mut at = 0;
    for r in sorted {
        if r.start < at || r.end < r.start || r.end > text.len() {
            return None;
        }
        out.push_str(text.get(at..r.start)?);
        out.push_str(&r.text);
        at = r.end;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

struct Finder<'a> {
    text: &'a str,
    src: &'a SourceFile,
    targets: &'a [u32],
    /// Builtins and module-level names.
    globals: &'a BTreeSet<String>,
    module_names: &'a BTreeSet<String>,
    found: &'a mut Vec<(u32, Vec<Candidate>)>,
    hints: &'a Hints,
    /// Lines whose statements get value-guided edits.
    range: Option<(u32, u32)>,
    valued: &'a mut Vec<(u32, Vec<Candidate>)>,
    /// The other edits of those statements ([`values`]).
    generic: &'a mut Vec<(u32, Vec<Candidate>)>,
}

impl<'a> Finder<'a> {
    fn body(
        &mut self,
        body: &'a [Stmt],
        function_body: &'a [Stmt],
        locals: &BTreeSet<String>,
        variables: &BTreeSet<String>,
        parents: &mut Vec<&'a Stmt>,
    ) {
        for (index, stmt) in body.iter().enumerate() {
            let line = self.src.line_of_offset(u32::from(stmt.start()));
            let in_range = self.range.is_some_and(|(a, b)| a <= line && line <= b)
                && !matches!(
                    stmt,
                    Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_)
                );
            if self.targets.contains(&line) || in_range {
                let mut defined = self.globals.clone();
                defined.extend(locals.iter().cloned());
                let ctx = Context {
                    text: self.text,
                    locals,
                    variables,
                    defined: &defined,
                    function_body,
                    parents,
                    siblings: body,
                    index,
                };
                if self.targets.contains(&line) {
                    let mut candidates = exprs::edits(stmt, &ctx);
                    candidates.extend(stmts::edits(stmt, &ctx));
                    self.found.push((line, candidates));
                }
                if in_range {
                    let (guided, generic) = values::edits(stmt, &ctx, self.hints);
                    self.valued.push((line, guided));
                    self.generic.push((line, generic));
                }
            }
            let function = match stmt {
                Stmt::FunctionDef(f) => Some((&f.args, &f.body)),
                Stmt::AsyncFunctionDef(f) => Some((&f.args, &f.body)),
                _ => None,
            };
            parents.push(stmt);
            match (stmt, function) {
                (_, Some((args, fbody))) => {
                    let mut names = BTreeSet::new();
                    let mut vars = BTreeSet::new();
                    // A nested function reads its enclosing function's names (closures).
                    if inside_function(parents) {
                        names.extend(locals.iter().cloned());
                        vars.extend(variables.iter().cloned());
                    }
                    walk::function_names(args, fbody, &mut names);
                    walk::function_variables(args, fbody, &mut vars);
                    self.body(fbody, fbody, &names, &vars, parents);
                }
                (Stmt::ClassDef(c), None) => {
                    // A class defined inside a function: its methods read that function's
                    // names (closures), not every name of the module. Given the module's
                    // names, a method's variable edits swapped `self` for each of the
                    // module's classes and imports (hundreds of edits on one line).
                    let (names, vars) = if inside_function(parents) {
                        (locals, variables)
                    } else {
                        (self.module_names, self.module_names)
                    };
                    self.body(&c.body, &c.body, names, vars, parents);
                }
                _ => {
                    for b in crate::python::walk::child_bodies(stmt) {
                        self.body(b, function_body, locals, variables, parents);
                    }
                }
            }
            parents.pop();
        }
    }
}

/// Whether the statement last pushed on `parents` sits inside a function (at any depth).
fn inside_function(parents: &[&Stmt]) -> bool {
    parents.split_last().is_some_and(|(_, outer)| {
        outer
            .iter()
            .any(|p| matches!(p, Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_)))
    })
}

/// The source text of a node.
pub(crate) fn text_of<'t>(text: &'t str, node: &impl Ranged) -> &'t str {
    text.get(usize::from(node.start())..usize::from(node.end()))
        .unwrap_or("")
}

/// Byte range of a node.
pub(crate) fn span(node: &impl Ranged) -> (usize, usize) {
    (usize::from(node.start()), usize::from(node.end()))
}

/// Whether an expression must be parenthesised to stand as an operand.
pub(crate) fn needs_parens(e: &ast::Expr) -> bool {
    !matches!(
        e,
        ast::Expr::Name(_)
            | ast::Expr::Constant(_)
            | ast::Expr::Call(_)
            | ast::Expr::Attribute(_)
            | ast::Expr::Subscript(_)
            | ast::Expr::List(_)
            | ast::Expr::Tuple(_)
            | ast::Expr::Dict(_)
            | ast::Expr::Set(_)
            | ast::Expr::ListComp(_)
            | ast::Expr::SetComp(_)
            | ast::Expr::DictComp(_)
            | ast::Expr::GeneratorExp(_)
    )
}

/// An expression's text, parenthesised when it would not stand alone as an operand.
pub(crate) fn operand(text: &str, e: &ast::Expr) -> String {
    let t = text_of(text, e);
    if needs_parens(e) {
        format!("({t})")
    } else {
        t.to_string()
    }
}

#[cfg(test)]
mod tests;
