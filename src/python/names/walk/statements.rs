//! The walk over statements: what each binds (assignments, imports, `def`/`class`, `for`/`with`/
//! `except` targets, match captures, `global`/`nonlocal`) and what it reads.

use rustpython_parser::ast::{self, Expr, Ranged, Stmt};

use super::{offset, reads_stdin_uncalled, FunctionBody, ScopeKind, Walk};

impl Walk {
    pub(super) fn declarations(&mut self, stmt: &Stmt, scope: usize) {
        let (names, global) = match stmt {
            Stmt::Global(g) => (&g.names, true),
            Stmt::Nonlocal(n) => (&n.names, false),
            // Declarations in nested blocks of the same scope count too.
            _ if !crate::python::walk::opens_scope(stmt) => {
                for body in crate::python::walk::child_bodies(stmt) {
                    body.iter().for_each(|b| self.declarations(b, scope));
                }
                return;
            }
            _ => return,
        };
        if let Some(s) = self.scopes.get_mut(scope) {
            for n in names {
                if global {
                    s.globals.insert(n.to_string());
                } else {
                    s.nonlocals.insert(n.to_string());
                }
            }
        }
    }

    pub(super) fn function(&mut self, scope: usize, args: &ast::Arguments, body: FunctionBody<'_>) {
        // Defaults and annotations are evaluated where the function is defined.
        let all_args = args
            .posonlyargs
            .iter()
            .chain(&args.args)
            .chain(&args.kwonlyargs);
        for a in all_args.clone() {
            if let Some(d) = &a.default {
                self.expr(d, scope);
            }
            if let Some(ann) = &a.def.annotation {
                self.expr(ann, scope);
            }
        }
        for a in args.vararg.iter().chain(&args.kwarg) {
            if let Some(ann) = &a.annotation {
                self.expr(ann, scope);
            }
        }
        let inner = self.new_scope(ScopeKind::Function, scope);
        for a in all_args {
            self.bind(inner, a.def.arg.as_str());
        }
        for a in args.vararg.iter().chain(&args.kwarg) {
            self.bind(inner, a.arg.as_str());
        }
        match body {
            FunctionBody::Stmts(stmts) => self.stmts(stmts, inner),
            FunctionBody::Expr(e) => self.expr(e, inner),
        }
    }

    pub(super) fn stmt(&mut self, stmt: &Stmt, scope: usize) {
        let outer = self.statement;
        self.statement = offset(stmt.range());
        self.stmt_parts(stmt, scope);
        self.statement = outer;
    }

    fn stmt_parts(&mut self, stmt: &Stmt, scope: usize) {
        match stmt {
            Stmt::FunctionDef(f) => {
                self.exprs(&f.decorator_list, scope);
                if let Some(r) = &f.returns {
                    self.expr(r, scope);
                }
                self.bind(scope, f.name.as_str());
                self.function(scope, &f.args, FunctionBody::Stmts(&f.body));
            }
            Stmt::AsyncFunctionDef(f) => {
                self.exprs(&f.decorator_list, scope);
                if let Some(r) = &f.returns {
                    self.expr(r, scope);
                }
                self.bind(scope, f.name.as_str());
                self.function(scope, &f.args, FunctionBody::Stmts(&f.body));
            }
            Stmt::ClassDef(c) => {
                self.exprs(&c.decorator_list, scope);
                self.exprs(&c.bases, scope);
                for k in &c.keywords {
                    self.expr(&k.value, scope);
                }
                self.bind(scope, c.name.as_str());
                let inner = self.new_scope(ScopeKind::Class, scope);
                self.stmts(&c.body, inner);
            }
            Stmt::Return(r) => {
                if scope == 0 {
                    self.module_returns
                        .push((offset(r.range), u32::from(r.range.end())));
                }
                if let Some(v) = &r.value {
                    self.expr(v, scope);
                }
            }
            Stmt::Delete(d) => self.exprs(&d.targets, scope),
            Stmt::Assign(a) => {
                if reads_stdin_uncalled(&a.value) {
                    // `input = sys.stdin.readline` reads nothing; calling the alias does.
                    for t in &a.targets {
                        if let Expr::Name(n) = t {
                            self.stdin_aliases.insert(n.id.to_string());
                        }
                    }
                    self.quiet_input += 1;
                    self.expr(&a.value, scope);
                    self.quiet_input -= 1;
                } else {
                    self.expr(&a.value, scope);
                }
                for t in &a.targets {
                    self.target(t, scope);
                }
            }
            Stmt::TypeAlias(t) => {
                self.expr(&t.value, scope);
                self.target(&t.name, scope);
            }
            Stmt::AugAssign(a) => {
                self.expr(&a.value, scope);
                // `n += 1` reads `n` first; it defines nothing new.
                self.expr(&a.target, scope);
            }
            Stmt::AnnAssign(a) => {
                self.expr(&a.annotation, scope);
                if let Some(v) = &a.value {
                    self.expr(v, scope);
                    self.target(&a.target, scope);
                } else if !matches!(*a.target, Expr::Name(_)) {
                    self.expr(&a.target, scope);
                }
            }
            Stmt::For(f) => {
                self.expr(&f.iter, scope);
                self.target(&f.target, scope);
                self.stmts_same(&f.body, scope);
                self.stmts_same(&f.orelse, scope);
            }
            Stmt::AsyncFor(f) => {
                self.expr(&f.iter, scope);
                self.target(&f.target, scope);
                self.stmts_same(&f.body, scope);
                self.stmts_same(&f.orelse, scope);
            }
            Stmt::While(w) => {
                self.expr(&w.test, scope);
                self.stmts_same(&w.body, scope);
                self.stmts_same(&w.orelse, scope);
            }
            Stmt::If(i) => {
                self.expr(&i.test, scope);
                self.stmts_same(&i.body, scope);
                self.stmts_same(&i.orelse, scope);
            }
            Stmt::With(w) => {
                self.with_items(&w.items, scope);
                self.stmts_same(&w.body, scope);
            }
            Stmt::AsyncWith(w) => {
                self.with_items(&w.items, scope);
                self.stmts_same(&w.body, scope);
            }
            Stmt::Match(m) => {
                self.expr(&m.subject, scope);
                for case in &m.cases {
                    self.pattern(&case.pattern, scope);
                    if let Some(g) = &case.guard {
                        self.expr(g, scope);
                    }
                    self.stmts_same(&case.body, scope);
                }
            }
            Stmt::Raise(r) => {
                if let Some(e) = &r.exc {
                    self.expr(e, scope);
                }
                if let Some(c) = &r.cause {
                    self.expr(c, scope);
                }
            }
            Stmt::Try(t) => self.try_parts(&t.body, &t.handlers, &t.orelse, &t.finalbody, scope),
            Stmt::TryStar(t) => {
                self.try_parts(&t.body, &t.handlers, &t.orelse, &t.finalbody, scope)
            }
            Stmt::Assert(a) => {
                self.expr(&a.test, scope);
                if let Some(m) = &a.msg {
                    self.expr(m, scope);
                }
            }
            Stmt::Import(i) => {
                for alias in &i.names {
                    // `import a.b` binds `a`.
                    let bound = match &alias.asname {
                        Some(a) => a.to_string(),
                        None => alias.name.split('.').next().unwrap_or("").to_string(),
                    };
                    self.bind(scope, &bound);
                }
            }
            Stmt::ImportFrom(i) => {
                for alias in &i.names {
                    if alias.name.as_str() == "*" {
                        self.star_import = true;
                        continue;
                    }
                    let bound = alias.asname.as_ref().unwrap_or(&alias.name);
                    self.bind(scope, bound.as_str());
                }
            }
            Stmt::Global(_) | Stmt::Nonlocal(_) => {}
            Stmt::Expr(e) => self.expr(&e.value, scope),
            Stmt::Pass(_) | Stmt::Break(_) | Stmt::Continue(_) => {}
        }
    }

    /// Statements of a nested block in the same scope (declarations were already read).
    pub(super) fn stmts_same(&mut self, body: &[Stmt], scope: usize) {
        for s in body {
            self.stmt(s, scope);
        }
    }

    pub(super) fn try_parts(
        &mut self,
        body: &[Stmt],
        handlers: &[ast::ExceptHandler],
        orelse: &[Stmt],
        finalbody: &[Stmt],
        scope: usize,
    ) {
        self.stmts_same(body, scope);
        for h in handlers {
            let ast::ExceptHandler::ExceptHandler(h) = h;
            self.statement = offset(h.range);
            if let Some(t) = &h.type_ {
                let before = self.uses.len();
                self.expr(t, scope);
                // `except X` / `except (X, Y)`: an undefined X has to be an exception class.
                let named: Vec<&str> = match &**t {
                    Expr::Name(n) => vec![n.id.as_str()],
                    Expr::Tuple(tuple) => tuple
                        .elts
                        .iter()
                        .filter_map(|e| match e {
                            Expr::Name(n) => Some(n.id.as_str()),
                            _ => None,
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                let caught = (before..self.uses.len())
                    .filter(|&i| self.uses.get(i).is_some_and(|u| named.contains(&&*u.name)));
                self.caught.extend(caught);
            }
            if let Some(name) = &h.name {
                self.bind(scope, name.as_str());
            }
            self.stmts_same(&h.body, scope);
        }
        self.stmts_same(orelse, scope);
        self.stmts_same(finalbody, scope);
    }

    pub(super) fn with_items(&mut self, items: &[ast::WithItem], scope: usize) {
        for item in items {
            self.expr(&item.context_expr, scope);
            if let Some(v) = &item.optional_vars {
                self.target(v, scope);
            }
        }
    }

    pub(super) fn pattern(&mut self, pattern: &ast::Pattern, scope: usize) {
        use ast::Pattern as P;
        match pattern {
            P::MatchValue(v) => self.expr(&v.value, scope),
            P::MatchSingleton(_) => {}
            P::MatchSequence(s) => s.patterns.iter().for_each(|p| self.pattern(p, scope)),
            P::MatchMapping(m) => {
                self.exprs(&m.keys, scope);
                m.patterns.iter().for_each(|p| self.pattern(p, scope));
                if let Some(rest) = &m.rest {
                    self.bind(scope, rest.as_str());
                }
            }
            P::MatchClass(c) => {
                self.expr(&c.cls, scope);
                c.patterns
                    .iter()
                    .chain(&c.kwd_patterns)
                    .for_each(|p| self.pattern(p, scope));
            }
            P::MatchStar(s) => {
                if let Some(n) = &s.name {
                    self.bind(scope, n.as_str());
                }
            }
            P::MatchAs(a) => {
                if let Some(p) = &a.pattern {
                    self.pattern(p, scope);
                }
                if let Some(n) = &a.name {
                    self.bind(scope, n.as_str());
                }
            }
            P::MatchOr(o) => o.patterns.iter().for_each(|p| self.pattern(p, scope)),
        }
    }

    /// An assignment target: names are bound, everything else in it is read.
    pub(super) fn target(&mut self, target: &Expr, scope: usize) {
        match target {
            Expr::Name(n) => self.bind(scope, n.id.as_str()),
            Expr::Tuple(t) => t.elts.iter().for_each(|e| self.target(e, scope)),
            Expr::List(l) => l.elts.iter().for_each(|e| self.target(e, scope)),
            Expr::Starred(s) => self.target(&s.value, scope),
            // `a.b = ...`, `a[i] = ...` read `a` (and `i`).
            other => self.expr(other, scope),
        }
    }
}
