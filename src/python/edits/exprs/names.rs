//! Edits of names: a name nothing defines replaced at every use by a defined one spelt alike,
//! and a variable read replaced by another of the function's.

use std::collections::BTreeSet;

use rustpython_parser::ast::{self, Expr};

use super::{collect_stmt_exprs, one};
use crate::python::edits::walk::stored;
use crate::python::edits::{span, Candidate, Context, EditKind, Repl};

/// Names read that nothing defines: each replaced at every use by a defined name spelt alike.
pub(in crate::python::edits) fn rename_undefined(
    all: &[&Expr],
    ctx: &Context<'_>,
    out: &mut Vec<Candidate>,
) {
    // Names the statement binds itself: a comprehension's targets, a lambda's parameters, a
    // `:=` target. Read inside, they are defined.
    let mut own = BTreeSet::new();
    for e in all {
        match e {
            Expr::ListComp(ast::ExprListComp { generators, .. })
            | Expr::SetComp(ast::ExprSetComp { generators, .. })
            | Expr::GeneratorExp(ast::ExprGeneratorExp { generators, .. })
            | Expr::DictComp(ast::ExprDictComp { generators, .. }) => {
                for g in generators {
                    stored(&g.target, &mut own);
                }
            }
            Expr::Lambda(l) => {
                let a = &l.args;
                for p in a.posonlyargs.iter().chain(&a.args).chain(&a.kwonlyargs) {
                    own.insert(p.def.arg.to_string());
                }
                for p in [&a.vararg, &a.kwarg].into_iter().flatten() {
                    own.insert(p.arg.to_string());
                }
            }
            Expr::NamedExpr(n) => stored(&n.target, &mut own),
            _ => {}
        }
    }
    let mut undefined: BTreeSet<&str> = BTreeSet::new();
    for e in all {
        if let Expr::Name(n) = e {
            if matches!(n.ctx, ast::ExprContext::Load)
                && !ctx.defined.contains(n.id.as_str())
                && !own.contains(n.id.as_str())
            {
                undefined.insert(n.id.as_str());
            }
        }
    }
    if undefined.is_empty() {
        return;
    }
    let mut uses = Vec::new();
    for stmt in ctx.function_body {
        collect_stmt_exprs(stmt, &mut uses);
    }
    for name in undefined {
        let mut options: Vec<(usize, &String)> =
            ctx.locals.iter().map(|l| (distance(name, l), l)).collect();
        options.sort();
        for (_, replacement) in options.into_iter().take(3) {
            let repls: Vec<Repl> = uses
                .iter()
                .filter_map(|x| match x {
                    Expr::Name(n) if n.id.as_str() == name => {
                        let (s, t) = span(*x);
                        Some(Repl {
                            start: s,
                            end: t,
                            text: replacement.clone(),
                        })
                    }
                    _ => None,
                })
                .collect();
            out.push(Candidate {
                kind: EditKind::Rename,
                repls,
                description: format!("undefined {name} → {replacement}"),
            });
        }
    }
}

pub(super) fn variable(e: &Expr, ctx: &Context<'_>, out: &mut Vec<Candidate>) {
    let Expr::Name(n) = e else { return };
    if !matches!(n.ctx, ast::ExprContext::Load) || !ctx.locals.contains(n.id.as_str()) {
        return;
    }
    let (s, t) = span(e);
    // Names spelt alike first (`r_bar` → `r_bar_user`, `i` → `j`): a slip between two names
    // is usually between two that look alike, and a project's edits stop at the group of
    // edits that holds a fix, so the order is time.
    let mut others: Vec<&String> = ctx
        .locals
        .iter()
        .filter(|l| l.as_str() != n.id.as_str())
        .collect();
    others.sort_by_cached_key(|other| unlike(n.id.as_str(), other));
    for other in others {
        out.push(one(
            EditKind::Variable,
            s,
            t,
            other.clone(),
            format!("{} → {other}", n.id),
        ));
    }
}

/// How unlike two names are: the edit distance, less the length of one when it holds the
/// other (`r_bar` in `r_bar_user`: one more word, not five slips).
fn unlike(a: &str, b: &str) -> usize {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let d = distance(a, b);
    if short.len() >= 2 && long.contains(short) {
        d.saturating_sub(short.len()).max(1)
    } else {
        d
    }
}

/// Edit distance, for spelling.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let v = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
            cur.push(v);
        }
        prev = cur;
    }
    prev[b.len()]
}
