//! Walking the AST for the edit generator: the direct expressions of a statement, every
//! sub-expression of an expression, and the names each function binds.

use std::collections::BTreeSet;

use rustpython_parser::ast::{self, Expr, Stmt};

/// The expressions a statement evaluates itself (a compound statement: its header's), not
/// those of the statements nested in it.
pub(super) fn own_exprs(stmt: &Stmt) -> Vec<&Expr> {
    match stmt {
        Stmt::Expr(s) => vec![&s.value],
        Stmt::Assign(s) => {
            let mut v: Vec<&Expr> = s.targets.iter().collect();
            v.push(&s.value);
            v
        }
        Stmt::AugAssign(s) => vec![&s.target, &s.value],
        Stmt::AnnAssign(s) => {
            let mut v = vec![s.target.as_ref()];
            if let Some(value) = &s.value {
                v.push(value);
            }
            v
        }
        Stmt::Return(s) => s.value.iter().map(|b| b.as_ref()).collect(),
        Stmt::If(s) => vec![&s.test],
        Stmt::While(s) => vec![&s.test],
        Stmt::For(s) => vec![&s.target, &s.iter],
        Stmt::AsyncFor(s) => vec![&s.target, &s.iter],
        Stmt::Assert(s) => {
            let mut v = vec![s.test.as_ref()];
            if let Some(m) = &s.msg {
                v.push(m);
            }
            v
        }
        Stmt::Delete(s) => s.targets.iter().collect(),
        Stmt::Raise(s) => s.exc.iter().map(|b| b.as_ref()).collect(),
        Stmt::With(s) => s.items.iter().map(|i| &i.context_expr).collect(),
        _ => Vec::new(),
    }
}

/// `expr` and every expression inside it, outermost first (lambda bodies included).
pub(super) fn all_exprs<'a>(expr: &'a Expr, out: &mut Vec<&'a Expr>) {
    out.push(expr);
    let mut sub = |e: &'a Expr| all_exprs(e, out);
    match expr {
        Expr::BoolOp(b) => b.values.iter().for_each(sub),
        Expr::NamedExpr(n) => {
            sub(&n.target);
            sub(&n.value);
        }
        Expr::BinOp(b) => {
            sub(&b.left);
            sub(&b.right);
        }
        Expr::UnaryOp(u) => sub(&u.operand),
        Expr::Lambda(l) => sub(&l.body),
        Expr::IfExp(i) => {
            sub(&i.test);
            sub(&i.body);
            sub(&i.orelse);
        }
        Expr::Dict(d) => {
            for k in d.keys.iter().flatten() {
                sub(k);
            }
            d.values.iter().for_each(sub);
        }
        Expr::Set(s) => s.elts.iter().for_each(sub),
        Expr::ListComp(c) => comprehension(&c.elt, None, &c.generators, out),
        Expr::SetComp(c) => comprehension(&c.elt, None, &c.generators, out),
        Expr::GeneratorExp(c) => comprehension(&c.elt, None, &c.generators, out),
        Expr::DictComp(c) => comprehension(&c.key, Some(&c.value), &c.generators, out),
        Expr::Await(a) => sub(&a.value),
        Expr::Yield(y) => {
            if let Some(v) = &y.value {
                sub(v);
            }
        }
        Expr::YieldFrom(y) => sub(&y.value),
        Expr::Compare(c) => {
            sub(&c.left);
            c.comparators.iter().for_each(sub);
        }
        Expr::Call(c) => {
            sub(&c.func);
            c.args.iter().for_each(&mut sub);
            for k in &c.keywords {
                sub(&k.value);
            }
        }
        Expr::FormattedValue(f) => sub(&f.value),
        Expr::JoinedStr(j) => j.values.iter().for_each(sub),
        Expr::Attribute(a) => sub(&a.value),
        Expr::Subscript(s) => {
            sub(&s.value);
            sub(&s.slice);
        }
        Expr::Starred(s) => sub(&s.value),
        Expr::List(l) => l.elts.iter().for_each(sub),
        Expr::Tuple(t) => t.elts.iter().for_each(sub),
        Expr::Slice(s) => {
            for part in [&s.lower, &s.upper, &s.step].into_iter().flatten() {
                sub(part);
            }
        }
        Expr::Constant(_) | Expr::Name(_) => {}
    }
}

fn comprehension<'a>(
    elt: &'a Expr,
    value: Option<&'a Expr>,
    generators: &'a [ast::Comprehension],
    out: &mut Vec<&'a Expr>,
) {
    all_exprs(elt, out);
    if let Some(v) = value {
        all_exprs(v, out);
    }
    for g in generators {
        all_exprs(&g.target, out);
        all_exprs(&g.iter, out);
        for cond in &g.ifs {
            all_exprs(cond, out);
        }
    }
}

/// The statement bodies nested directly in `stmt` (`if`: its body and its `else`).
pub(super) fn bodies(stmt: &Stmt) -> Vec<&[Stmt]> {
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
        Stmt::Try(s) => {
            let mut v: Vec<&[Stmt]> = vec![&s.body, &s.orelse, &s.finalbody];
            for h in &s.handlers {
                let ast::ExceptHandler::ExceptHandler(h) = h;
                v.push(&h.body);
            }
            v
        }
        Stmt::TryStar(s) => {
            let mut v: Vec<&[Stmt]> = vec![&s.body, &s.orelse, &s.finalbody];
            for h in &s.handlers {
                let ast::ExceptHandler::ExceptHandler(h) = h;
                v.push(&h.body);
            }
            v
        }
        _ => Vec::new(),
    }
}

/// Names an assignment target stores to.
pub(super) fn stored(target: &Expr, out: &mut BTreeSet<String>) {
    match target {
        Expr::Name(n) => {
            out.insert(n.id.to_string());
        }
        Expr::Tuple(t) => t.elts.iter().for_each(|e| stored(e, out)),
        Expr::List(l) => l.elts.iter().for_each(|e| stored(e, out)),
        Expr::Starred(s) => stored(&s.value, out),
        _ => {}
    }
}

/// Names a function's parameters and body bind (not those of nested functions).
pub(super) fn function_names(args: &ast::Arguments, body: &[Stmt], out: &mut BTreeSet<String>) {
    for a in args
        .posonlyargs
        .iter()
        .chain(&args.args)
        .chain(&args.kwonlyargs)
    {
        out.insert(a.def.arg.to_string());
    }
    for a in [&args.vararg, &args.kwarg].into_iter().flatten() {
        out.insert(a.arg.to_string());
    }
    body_names(body, out);
}

/// Names bound by `body`'s statements (assignments, loop targets, `with ... as`, `except ...
/// as`, imports, nested `def`/`class`), without descending into nested functions.
pub(super) fn body_names(body: &[Stmt], out: &mut BTreeSet<String>) {
    names_bound(body, out, true);
}

/// Names a function's parameters and body bind other than by an update (`x += 1`), and the
/// names it declares `global` or `nonlocal`: a name outside this set that an update stores to
/// has no value before its first update.
pub(super) fn bound_before_updates(
    args: &ast::Arguments,
    body: &[Stmt],
    out: &mut BTreeSet<String>,
) {
    function_names(args, &[], out);
    names_bound(body, out, false);
    declared_outside(body, out);
}

/// The names `Global`/`Nonlocal` statements of `body` declare (not in nested functions).
fn declared_outside(body: &[Stmt], out: &mut BTreeSet<String>) {
    for stmt in body {
        match stmt {
            Stmt::Global(ast::StmtGlobal { names, .. })
            | Stmt::Nonlocal(ast::StmtNonlocal { names, .. }) => {
                out.extend(names.iter().map(|n| n.to_string()));
            }
            Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_) => {}
            _ => {
                for b in bodies(stmt) {
                    declared_outside(b, out);
                }
            }
        }
    }
}

fn names_bound(body: &[Stmt], out: &mut BTreeSet<String>, updates: bool) {
    for stmt in body {
        match stmt {
            Stmt::Assign(s) => s.targets.iter().for_each(|t| stored(t, out)),
            Stmt::AugAssign(s) if updates => stored(&s.target, out),
            Stmt::AnnAssign(s) => stored(&s.target, out),
            Stmt::For(s) => stored(&s.target, out),
            Stmt::AsyncFor(s) => stored(&s.target, out),
            Stmt::With(s) => s
                .items
                .iter()
                .filter_map(|i| i.optional_vars.as_deref())
                .for_each(|t| stored(t, out)),
            Stmt::FunctionDef(s) => {
                out.insert(s.name.to_string());
            }
            Stmt::AsyncFunctionDef(s) => {
                out.insert(s.name.to_string());
            }
            Stmt::ClassDef(s) => {
                out.insert(s.name.to_string());
            }
            Stmt::Import(s) => {
                for a in &s.names {
                    let bound = a.asname.as_ref().unwrap_or(&a.name);
                    out.insert(bound.split('.').next().unwrap_or_default().to_string());
                }
            }
            Stmt::ImportFrom(s) => {
                for a in &s.names {
                    out.insert(a.asname.as_ref().unwrap_or(&a.name).to_string());
                }
            }
            Stmt::Try(s) => {
                for h in &s.handlers {
                    let ast::ExceptHandler::ExceptHandler(h) = h;
                    if let Some(n) = &h.name {
                        out.insert(n.to_string());
                    }
                }
            }
            _ => {}
        }
        if !matches!(
            stmt,
            Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_)
        ) {
            for b in bodies(stmt) {
                names_bound(b, out, updates);
            }
        }
    }
}

/// Of the names a function binds, the parameters and assigned variables: not the functions,
/// classes and modules it defines or imports.
pub(super) fn function_variables(args: &ast::Arguments, body: &[Stmt], out: &mut BTreeSet<String>) {
    let mut all = BTreeSet::new();
    function_names(args, body, &mut all);
    let mut defined = BTreeSet::new();
    definitions(body, &mut defined);
    out.extend(all.difference(&defined).cloned());
}

/// Names `body` binds by `def`, `class` and imports (not inside nested functions).
fn definitions(body: &[Stmt], out: &mut BTreeSet<String>) {
    for stmt in body {
        match stmt {
            Stmt::FunctionDef(s) => {
                out.insert(s.name.to_string());
            }
            Stmt::AsyncFunctionDef(s) => {
                out.insert(s.name.to_string());
            }
            Stmt::ClassDef(s) => {
                out.insert(s.name.to_string());
            }
            Stmt::Import(s) => {
                for a in &s.names {
                    let bound = a.asname.as_ref().unwrap_or(&a.name);
                    out.insert(bound.split('.').next().unwrap_or_default().to_string());
                }
            }
            Stmt::ImportFrom(s) => {
                for a in &s.names {
                    out.insert(a.asname.as_ref().unwrap_or(&a.name).to_string());
                }
            }
            _ => {
                for b in bodies(stmt) {
                    definitions(b, out);
                }
            }
        }
    }
}
