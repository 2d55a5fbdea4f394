//! Edits of calls: a builtin or method swapped for the one it is often mistaken for
//! (`min`/`max`, `append`/`extend`), `reverse=True` added to a sort, a method subscripted by
//! mistake (`xs.count[x]`) called, a sequence called by mistake (`seq(i)`) indexed.

use rustpython_parser::ast::Expr;

use super::{collect_stmt_exprs, one};
use crate::python::edits::{span, text_of, Candidate, Context, EditKind, Repl};

/// Builtins that are each other's mistake.
const BUILTIN_SWAPS: &[(&str, &str)] = &[
    ("min", "max"),
    ("max", "min"),
    ("any", "all"),
    ("all", "any"),
    ("sorted", "reversed"),
    ("reversed", "sorted"),
];

/// Methods that are each other's mistake.
const METHOD_SWAPS: &[(&str, &str)] = &[
    ("append", "extend"),
    ("extend", "append"),
    ("index", "find"),
    ("find", "index"),
    ("lower", "upper"),
    ("upper", "lower"),
    ("pop", "remove"),
    ("remove", "pop"),
];

/// Methods of built-in types: `obj.NAME[...]` with one of these is a call written wrongly.
const METHODS: &[&str] = &[
    "append",
    "count",
    "index",
    "pop",
    "remove",
    "insert",
    "extend",
    "sort",
    "reverse",
    "get",
    "keys",
    "values",
    "items",
    "split",
    "join",
    "strip",
    "lower",
    "upper",
    "find",
    "replace",
    "startswith",
    "endswith",
    "add",
    "discard",
    "update",
    "copy",
    "isdigit",
    "isalpha",
];

pub(super) fn call(e: &Expr, ctx: &Context<'_>, out: &mut Vec<Candidate>) {
    let Expr::Call(c) = e else { return };
    match c.func.as_ref() {
        Expr::Name(n) => {
            for (from, to) in BUILTIN_SWAPS {
                if n.id.as_str() == *from && !ctx.locals.contains(*from) {
                    let (s, t) = span(c.func.as_ref());
                    out.push(one(
                        EditKind::Call,
                        s,
                        t,
                        to.to_string(),
                        format!("{from} → {to}"),
                    ));
                }
            }
        }
        Expr::Attribute(a) => {
            for (from, to) in METHOD_SWAPS {
                if a.attr.as_str() == *from {
                    // The attribute name ends the `func` expression.
                    let (_, t) = span(c.func.as_ref());
                    out.push(one(
                        EditKind::Call,
                        t - from.len(),
                        t,
                        to.to_string(),
                        format!(".{from} → .{to}"),
                    ));
                }
            }
        }
        _ => {}
    }
    let sorts = match c.func.as_ref() {
        Expr::Name(n) => n.id.as_str() == "sorted",
        Expr::Attribute(a) => a.attr.as_str() == "sort",
        _ => false,
    };
    if sorts
        && !c
            .keywords
            .iter()
            .any(|k| k.arg.as_deref() == Some("reverse"))
    {
        // Insert before the closing parenthesis.
        let (_, t) = span(e);
        let close = t.saturating_sub(1);
        if ctx.text.get(close..t) == Some(")") {
            let sep = if c.args.is_empty() && c.keywords.is_empty() {
                ""
            } else {
                ", "
            };
            out.push(one(
                EditKind::Call,
                close,
                close,
                format!("{sep}reverse=True"),
                "sort in reverse".into(),
            ));
        }
    }
}

pub(super) fn method_subscript(e: &Expr, ctx: &Context<'_>, out: &mut Vec<Candidate>) {
    let Expr::Subscript(s) = e else { return };
    let Expr::Attribute(a) = s.value.as_ref() else {
        return;
    };
    if !METHODS.contains(&a.attr.as_str()) {
        return;
    }
    // Every `obj.method[...]` of the function: one slip is usually made everywhere.
    let mut repls = Vec::new();
    let mut all = Vec::new();
    for stmt in ctx.function_body {
        collect_stmt_exprs(stmt, &mut all);
    }
    for x in all {
        let Expr::Subscript(sx) = x else { continue };
        let Expr::Attribute(ax) = sx.value.as_ref() else {
            continue;
        };
        if !METHODS.contains(&ax.attr.as_str()) {
            continue;
        }
        let (xs, xt) = span(x);
        let inner = match sx.slice.as_ref() {
            Expr::Tuple(t) => t
                .elts
                .iter()
                .map(|el| text_of(ctx.text, el))
                .collect::<Vec<_>>()
                .join(", "),
            other => text_of(ctx.text, other).to_string(),
        };
        let text = format!("{}({inner})", text_of(ctx.text, sx.value.as_ref()));
        if !repls.iter().any(|r: &Repl| r.start < xt && xs < r.end) {
            repls.push(Repl {
                start: xs,
                end: xt,
                text,
            });
        }
    }
    if !repls.is_empty() {
        out.push(Candidate {
            kind: EditKind::MethodCall,
            description: format!(".{}[...] → .{}(...)", a.attr, a.attr),
            repls,
        });
    }
}

/// A sequence called instead of indexed (`seq(i)` for `seq[i]`): every such call of that name
/// in the function becomes an index.
pub(super) fn call_subscript(e: &Expr, ctx: &Context<'_>, out: &mut Vec<Candidate>) {
    let Expr::Call(c) = e else { return };
    let Expr::Name(n) = c.func.as_ref() else {
        return;
    };
    let name = n.id.as_str();
    if !ctx.variables.contains(name) || c.args.len() != 1 || !c.keywords.is_empty() {
        return;
    }
    let mut all = Vec::new();
    for stmt in ctx.function_body {
        collect_stmt_exprs(stmt, &mut all);
    }
    let repls: Vec<Repl> = all
        .into_iter()
        .filter_map(|x| match x {
            Expr::Call(cx) if cx.args.len() == 1 && cx.keywords.is_empty() => {
                match cx.func.as_ref() {
                    Expr::Name(nx) if nx.id.as_str() == name => {
                        let (s, t) = span(x);
                        Some(Repl {
                            start: s,
                            end: t,
                            text: format!("{name}[{}]", text_of(ctx.text, &cx.args[0])),
                        })
                    }
                    _ => None,
                }
            }
            _ => None,
        })
        .collect();
    out.push(Candidate {
        kind: EditKind::MethodCall,
        repls,
        description: format!("{name}(...) → {name}[...]"),
    });
}
