//! Walking the AST for the edit generator: the direct expressions of a statement, every
//! sub-expression of an expression, and the names each function binds.

use std::collections::BTreeSet;

use rustpython_parser::ast::{self, Expr, Stmt};

use crate::python::walk::{self, Binding};

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

/// Names an assignment target stores to.
pub(super) fn stored(target: &Expr, out: &mut BTreeSet<String>) {
    let mut names = Vec::new();
    walk::target_names(target, &mut names);
    out.extend(names);
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
/// as`, `case` captures, imports, nested `def`/`class`), without descending into nested
/// functions.
pub(super) fn body_names(body: &[Stmt], out: &mut BTreeSet<String>) {
    names_bound(body, out, |_| true);
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
    names_bound(body, out, |b| b != Binding::Update);
    walk::walk_scope(body, &mut |stmt| match stmt {
        Stmt::Global(ast::StmtGlobal { names, .. })
        | Stmt::Nonlocal(ast::StmtNonlocal { names, .. }) => {
            out.extend(names.iter().map(|n| n.to_string()));
        }
        _ => {}
    });
}

/// The names `body`'s scope binds in the ways `keep` accepts.
fn names_bound(body: &[Stmt], out: &mut BTreeSet<String>, keep: impl Fn(Binding) -> bool) {
    walk::walk_scope(body, &mut |stmt| {
        out.extend(
            walk::bindings(stmt)
                .into_iter()
                .filter(|(_, b)| keep(*b))
                .map(|(n, _)| n),
        );
    });
}

/// Of the names a function binds, the parameters and assigned variables: not the functions,
/// classes and modules it defines or imports.
pub(super) fn function_variables(args: &ast::Arguments, body: &[Stmt], out: &mut BTreeSet<String>) {
    let mut all = BTreeSet::new();
    function_names(args, body, &mut all);
    let mut defined = BTreeSet::new();
    names_bound(body, &mut defined, |b| {
        matches!(b, Binding::Definition | Binding::Import)
    });
    out.extend(all.difference(&defined).cloned());
}
