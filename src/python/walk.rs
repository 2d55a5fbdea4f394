//! The one walk over Python statements that every pass reading them shares: the statement
//! lists nested in a statement, a walk in source order that each pass steers, and the names a
//! statement binds by itself. Statements of every kind are covered (`match` cases, `try*`,
//! `async for`/`async with`), so a pass that uses these sees code in any of them.
//!
//! Passes that give each statement kind its own meaning (the control-flow graph, the scope
//! analysis of `names`) still match on kinds themselves; they come here for the nesting.

use rustpython_parser::ast::{self, Expr, Pattern, Stmt};

/// The statement lists nested directly in `stmt`, in source order: a compound statement's
/// bodies, `else` and `finally` blocks, `except` handlers and `case` blocks. Empty for a simple
/// statement.
pub fn child_bodies(stmt: &Stmt) -> Vec<&[Stmt]> {
    fn handlers<'a>(
        body: &'a [Stmt],
        handlers: &'a [ast::ExceptHandler],
        orelse: &'a [Stmt],
        finalbody: &'a [Stmt],
    ) -> Vec<&'a [Stmt]> {
        let mut v: Vec<&[Stmt]> = vec![body];
        for h in handlers {
            let ast::ExceptHandler::ExceptHandler(h) = h;
            v.push(&h.body);
        }
        v.push(orelse);
        v.push(finalbody);
        v
    }
    match stmt {
        Stmt::FunctionDef(s) => vec![&s.body],
        Stmt::AsyncFunctionDef(s) => vec![&s.body],
        Stmt::ClassDef(s) => vec![&s.body],
        Stmt::If(s) => vec![&s.body, &s.orelse],
        Stmt::While(s) => vec![&s.body, &s.orelse],
        Stmt::For(s) => vec![&s.body, &s.orelse],
        Stmt::AsyncFor(s) => vec![&s.body, &s.orelse],
        Stmt::With(s) => vec![&s.body],
        Stmt::AsyncWith(s) => vec![&s.body],
        Stmt::Try(s) => handlers(&s.body, &s.handlers, &s.orelse, &s.finalbody),
        Stmt::TryStar(s) => handlers(&s.body, &s.handlers, &s.orelse, &s.finalbody),
        Stmt::Match(s) => s.cases.iter().map(|c| c.body.as_slice()).collect(),
        _ => Vec::new(),
    }
}

/// Whether `stmt` opens a scope of its own: the names its body binds are not the enclosing
/// scope's.
pub fn opens_scope(stmt: &Stmt) -> bool {
    matches!(
        stmt,
        Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_)
    )
}

/// Whether a walk goes into the statements nested in the one just visited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Descend {
    Into,
    Over,
}

/// Visit every statement of `body` in source order, and those nested in each one `visit`
/// answers [`Descend::Into`] for.
pub fn walk<'a>(body: &'a [Stmt], visit: &mut dyn FnMut(&'a Stmt) -> Descend) {
    for stmt in body {
        if visit(stmt) == Descend::Into {
            for nested in child_bodies(stmt) {
                walk(nested, visit);
            }
        }
    }
}

/// Visit the statements of one scope: `body` and its nested blocks, and the `def`/`class`
/// statements in it, but not their bodies.
pub fn walk_scope<'a>(body: &'a [Stmt], visit: &mut dyn FnMut(&'a Stmt)) {
    walk(body, &mut |stmt| {
        visit(stmt);
        if opens_scope(stmt) {
            Descend::Over
        } else {
            Descend::Into
        }
    });
}

/// How a statement binds a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// `def NAME`, `class NAME`.
    Definition,
    /// `import NAME`, `from m import NAME` (`as` names included).
    Import,
    /// `NAME = ...`, `NAME: T = ...`, `NAME: T`.
    Assignment,
    /// `NAME += ...`: binds, but only a name that already has a value.
    Update,
    /// A `for` target, `with ... as NAME`, `except ... as NAME`, a `case` capture.
    Target,
}

/// The names `stmt` binds by itself (not by the statements nested in it), in source order.
/// `from m import *` binds nothing that can be named.
pub fn bindings(stmt: &Stmt) -> Vec<(String, Binding)> {
    let mut out = Vec::new();
    let targets = |e: &Expr, how: Binding, out: &mut Vec<(String, Binding)>| {
        let mut names = Vec::new();
        target_names(e, &mut names);
        out.extend(names.into_iter().map(|n| (n, how)));
    };
    match stmt {
        Stmt::FunctionDef(s) => out.push((s.name.to_string(), Binding::Definition)),
        Stmt::AsyncFunctionDef(s) => out.push((s.name.to_string(), Binding::Definition)),
        Stmt::ClassDef(s) => out.push((s.name.to_string(), Binding::Definition)),
        Stmt::Import(s) => {
            for a in &s.names {
                let bound = a.asname.as_ref().unwrap_or(&a.name);
                let top = bound.split('.').next().unwrap_or_default();
                out.push((top.to_string(), Binding::Import));
            }
        }
        Stmt::ImportFrom(s) => {
            for a in s.names.iter().filter(|a| a.name.as_str() != "*") {
                let bound = a.asname.as_ref().unwrap_or(&a.name);
                out.push((bound.to_string(), Binding::Import));
            }
        }
        Stmt::Assign(s) => s
            .targets
            .iter()
            .for_each(|t| targets(t, Binding::Assignment, &mut out)),
        Stmt::AnnAssign(s) => targets(&s.target, Binding::Assignment, &mut out),
        Stmt::AugAssign(s) => targets(&s.target, Binding::Update, &mut out),
        Stmt::For(s) => targets(&s.target, Binding::Target, &mut out),
        Stmt::AsyncFor(s) => targets(&s.target, Binding::Target, &mut out),
        Stmt::With(s) => s
            .items
            .iter()
            .filter_map(|i| i.optional_vars.as_deref())
            .for_each(|t| targets(t, Binding::Target, &mut out)),
        Stmt::AsyncWith(s) => s
            .items
            .iter()
            .filter_map(|i| i.optional_vars.as_deref())
            .for_each(|t| targets(t, Binding::Target, &mut out)),
        Stmt::Try(s) => handler_names(&s.handlers, &mut out),
        Stmt::TryStar(s) => handler_names(&s.handlers, &mut out),
        Stmt::Match(s) => {
            for case in &s.cases {
                let mut names = Vec::new();
                captures(&case.pattern, &mut names);
                out.extend(names.into_iter().map(|n| (n, Binding::Target)));
            }
        }
        _ => {}
    }
    out
}

fn handler_names(handlers: &[ast::ExceptHandler], out: &mut Vec<(String, Binding)>) {
    for h in handlers {
        let ast::ExceptHandler::ExceptHandler(h) = h;
        if let Some(n) = &h.name {
            out.push((n.to_string(), Binding::Target));
        }
    }
}

/// Names an assignment target stores to (`a`, `a, (b, *c)`); attributes and subscripts store
/// to no name.
pub fn target_names(target: &Expr, out: &mut Vec<String>) {
    match target {
        Expr::Name(n) => out.push(n.id.to_string()),
        Expr::Tuple(t) => t.elts.iter().for_each(|e| target_names(e, out)),
        Expr::List(l) => l.elts.iter().for_each(|e| target_names(e, out)),
        Expr::Starred(s) => target_names(&s.value, out),
        _ => {}
    }
}

/// Names a `case` pattern captures.
fn captures(pattern: &Pattern, out: &mut Vec<String>) {
    match pattern {
        Pattern::MatchAs(p) => {
            if let Some(inner) = &p.pattern {
                captures(inner, out);
            }
            if let Some(n) = &p.name {
                out.push(n.to_string());
            }
        }
        Pattern::MatchStar(p) => {
            if let Some(n) = &p.name {
                out.push(n.to_string());
            }
        }
        Pattern::MatchSequence(p) => p.patterns.iter().for_each(|q| captures(q, out)),
        Pattern::MatchOr(p) => {
            // Every alternative binds the same names; the first says which.
            if let Some(first) = p.patterns.first() {
                captures(first, out);
            }
        }
        Pattern::MatchMapping(p) => {
            p.patterns.iter().for_each(|q| captures(q, out));
            if let Some(rest) = &p.rest {
                out.push(rest.to_string());
            }
        }
        Pattern::MatchClass(p) => {
            p.patterns.iter().for_each(|q| captures(q, out));
            p.kwd_patterns.iter().for_each(|q| captures(q, out));
        }
        Pattern::MatchValue(_) | Pattern::MatchSingleton(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::source::{parse_module, SourceFile};

    fn suite(text: &str) -> ast::Suite {
        parse_module(&SourceFile::new(text)).expect("parses")
    }

    /// How many assignments the walk reaches, and every name bound on the way.
    fn reached(text: &str) -> (usize, Vec<(String, Binding)>) {
        let module = suite(text);
        let mut assignments = 0;
        let mut names = Vec::new();
        walk(&module, &mut |s| {
            assignments += usize::from(matches!(s, Stmt::Assign(_)));
            names.extend(bindings(s));
            Descend::Into
        });
        (assignments, names)
    }

    fn names_of(bound: &[(String, Binding)]) -> Vec<&str> {
        bound.iter().map(|(n, _)| n.as_str()).collect()
    }

    #[test]
    fn match_cases_are_walked_and_their_captures_bound() {
        let (assignments, names) = reached(
            "match cmd:\n    case [x, *rest]:\n        a = 1\n    case {'k': v, **kw}:\n        b = 2\n    case Point(x=px) | Point(y=px):\n        c = 3\n    case other:\n        d = 4\n",
        );
        assert_eq!(assignments, 4);
        let bound = names_of(&names);
        // The statement's own captures first, then what its cases' bodies bind.
        assert_eq!(
            bound,
            ["x", "rest", "v", "kw", "px", "other", "a", "b", "c", "d"]
        );
        assert!(names
            .iter()
            .all(|(n, b)| (*b == Binding::Target) != ["a", "b", "c", "d"].contains(&n.as_str())));
    }

    #[test]
    fn async_with_and_async_for_bodies_and_targets_are_walked() {
        let (assignments, names) = reached(
            "async def f():\n    async with open_it() as (r, w):\n        x = 1\n    async for item in stream():\n        y = 2\n    else:\n        z = 3\n",
        );
        assert_eq!(assignments, 3);
        let bound = names_of(&names);
        assert_eq!(bound, ["f", "r", "w", "x", "item", "y", "z"]);
    }

    #[test]
    fn try_star_handlers_are_walked_and_their_names_bound() {
        let (assignments, names) = reached(
            "try:\n    a = 1\nexcept* ValueError as group:\n    b = 2\nelse:\n    c = 3\nfinally:\n    d = 4\n",
        );
        assert_eq!(assignments, 4);
        let bound = names_of(&names);
        assert_eq!(bound, ["group", "a", "b", "c", "d"]);
    }

    #[test]
    fn a_scope_walk_does_not_enter_nested_definitions() {
        let module = suite("x = 1\ndef f():\n    y = 2\nclass C:\n    z = 3\nif x:\n    w = 4\n");
        let mut names = Vec::new();
        walk_scope(&module, &mut |s| names.extend(bindings(s)));
        let bound: Vec<(&str, Binding)> = names.iter().map(|(n, b)| (n.as_str(), *b)).collect();
        assert_eq!(
            bound,
            [
                ("x", Binding::Assignment),
                ("f", Binding::Definition),
                ("C", Binding::Definition),
                ("w", Binding::Assignment)
            ]
        );
    }

    #[test]
    fn imports_bind_their_first_name_or_alias_and_star_binds_nothing() {
        let module = suite("import os.path\nimport numpy as np\nfrom a import b, c as d\nfrom e import *\nn += 1\n");
        let names: Vec<(String, Binding)> = module.iter().flat_map(bindings).collect();
        let bound: Vec<(&str, Binding)> = names.iter().map(|(n, b)| (n.as_str(), *b)).collect();
        assert_eq!(
            bound,
            [
                ("os", Binding::Import),
                ("np", Binding::Import),
                ("b", Binding::Import),
                ("d", Binding::Import),
                ("n", Binding::Update)
            ]
        );
    }
}
