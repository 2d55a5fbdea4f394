//! Edits of the expressions a statement evaluates: operators, constants, names, calls, bounds.
//! Calls are edited in `calls`, names in `names`.

mod calls;
mod names;

use rustpython_parser::ast::{self, CmpOp, Constant, Expr, Operator, Stmt};

use super::walk::{all_exprs, own_exprs};
use super::{operand, span, text_of, Candidate, Context, EditKind, Repl};
use calls::{call, call_subscript, method_subscript};
pub(super) use names::rename_undefined;
use names::variable;

pub(super) fn edits(stmt: &Stmt, ctx: &Context<'_>) -> Vec<Candidate> {
    let mut all = Vec::new();
    for e in own_exprs(stmt) {
        all_exprs(e, &mut all);
    }
    let mut out = Vec::new();
    // In order of how often such a slip is the bug in small programs.
    for e in &all {
        comparison(e, ctx, &mut out);
    }
    // The sums and differences whose right operand is a constant: `x - 1` with the 1 made 0
    // is written as a person writes it, `x` (the program is the same as the term dropped).
    let sums: Vec<&ast::ExprBinOp> = all
        .iter()
        .filter_map(|e| match e {
            Expr::BinOp(b) if matches!(b.op, Operator::Add | Operator::Sub) => Some(b),
            _ => None,
        })
        .collect();
    for e in &all {
        let sum = sums
            .iter()
            .find(|b| span(b.right.as_ref()) == span(*e))
            .copied();
        constant(e, sum, ctx, &mut out);
    }
    for e in &all {
        off_by_one(e, ctx, &mut out);
    }
    for e in &all {
        boolean(e, ctx, &mut out);
    }
    if let Stmt::AugAssign(a) = stmt {
        aug_assign(a, ctx, &mut out);
    }
    for e in &all {
        arithmetic(e, ctx, &mut out);
    }
    for e in &all {
        call(e, ctx, &mut out);
    }
    for e in &all {
        method_subscript(e, ctx, &mut out);
    }
    for e in &all {
        call_subscript(e, ctx, &mut out);
    }
    rename_undefined(&all, ctx, &mut out);
    for e in &all {
        variable(e, ctx, &mut out);
    }
    out
}

fn one(kind: EditKind, start: usize, end: usize, text: String, description: String) -> Candidate {
    Candidate {
        kind,
        repls: vec![Repl { start, end, text }],
        description,
    }
}

/// The operator between two operands: the text between them without spaces and brackets.
fn between(text: &str, left: &Expr, right: &Expr) -> Option<(usize, usize)> {
    let (from, to) = (span(left).1, span(right).0);
    let gap = text.get(from..to)?;
    let skip = |c: char| c.is_whitespace() || c == '(' || c == ')' || c == '\\';
    let lead = gap.len() - gap.trim_start_matches(skip).len();
    let trail = gap.len() - gap.trim_end_matches(skip).len();
    let (s, e) = (from + lead, to - trail);
    (s < e).then_some((s, e))
}

fn cmp_text(op: CmpOp) -> &'static str {
    match op {
        CmpOp::Eq => "==",
        CmpOp::NotEq => "!=",
        CmpOp::Lt => "<",
        CmpOp::LtE => "<=",
        CmpOp::Gt => ">",
        CmpOp::GtE => ">=",
        CmpOp::Is => "is",
        CmpOp::IsNot => "is not",
        CmpOp::In => "in",
        CmpOp::NotIn => "not in",
    }
}

fn comparison(e: &Expr, ctx: &Context<'_>, out: &mut Vec<Candidate>) {
    let Expr::Compare(c) = e else { return };
    for (i, op) in c.ops.iter().enumerate() {
        let left = if i == 0 {
            c.left.as_ref()
        } else {
            &c.comparators[i - 1]
        };
        let Some(right) = c.comparators.get(i) else {
            continue;
        };
        let Some((s, t)) = between(ctx.text, left, right) else {
            continue;
        };
        // The boundary first (< ↔ <=), then the direction, then the rest.
        let alternatives: &[&str] = match op {
            CmpOp::Lt => &["<=", ">", ">=", "==", "!="],
            CmpOp::LtE => &["<", ">=", ">", "==", "!="],
            CmpOp::Gt => &[">=", "<", "<=", "==", "!="],
            CmpOp::GtE => &[">", "<=", "<", "==", "!="],
            CmpOp::Eq => &["!=", "<=", ">=", "<", ">"],
            CmpOp::NotEq => &["==", "<", ">", "<=", ">="],
            CmpOp::Is => &["is not", "=="],
            CmpOp::IsNot => &["is", "!="],
            CmpOp::In => &["not in"],
            CmpOp::NotIn => &["in"],
        };
        for alt in alternatives {
            out.push(one(
                EditKind::Comparison,
                s,
                t,
                alt.to_string(),
                format!("{} → {alt}", cmp_text(*op)),
            ));
        }
    }
}

fn constant(e: &Expr, sum: Option<&ast::ExprBinOp>, ctx: &Context<'_>, out: &mut Vec<Candidate>) {
    let Expr::Constant(c) = e else { return };
    let (s, t) = span(e);
    let old = text_of(ctx.text, e);
    match &c.value {
        Constant::Bool(b) => {
            let new = if *b { "False" } else { "True" };
            out.push(one(
                EditKind::Constant,
                s,
                t,
                new.into(),
                format!("{old} → {new}"),
            ));
        }
        Constant::Int(n) => {
            let Ok(n) = n.to_string().parse::<i64>() else {
                return;
            };
            // `sys.maxsize`-sized literals have no neighbour in an i64 on one side.
            for new in [n.checked_add(1), n.checked_sub(1)].into_iter().flatten() {
                // A truth value plus 0 is an int; the left operand alone would be a bool.
                if let (0, Some(b)) = (new, sum.filter(|b| !is_truth_value(&b.left))) {
                    let (s, t) = (usize::from(b.range.start()), usize::from(b.range.end()));
                    let left = sum_operand(ctx.text, &b.left);
                    out.push(one(
                        EditKind::Constant,
                        s,
                        t,
                        left,
                        format!(
                            "{} → {}",
                            ctx.text.get(s..t).unwrap_or(""),
                            text_of(ctx.text, b.left.as_ref())
                        ),
                    ));
                    continue;
                }
                // `-1` in place of `0` inside `x - 0` reads `x - -1`: valid, and a real option.
                let text = new.to_string();
                out.push(one(
                    EditKind::Constant,
                    s,
                    t,
                    text.clone(),
                    format!("{old} → {text}"),
                ));
            }
        }
        _ => {}
    }
}

/// `e + 1` and `e - 1` for the text of `e`.
fn plus_minus(ctx: &Context<'_>, e: &Expr, kind: EditKind, out: &mut Vec<Candidate>) {
    if matches!(e, Expr::Constant(_)) {
        // Constants change by their own edit.
        return;
    }
    let (s, t) = span(e);
    let base = operand(ctx.text, e);
    for sign in ["+", "-"] {
        let text = format!("{base} {sign} 1");
        out.push(one(
            kind,
            s,
            t,
            text.clone(),
            format!("{} → {text}", text_of(ctx.text, e)),
        ));
    }
}

fn off_by_one(e: &Expr, ctx: &Context<'_>, out: &mut Vec<Candidate>) {
    match e {
        Expr::Subscript(s) => match s.slice.as_ref() {
            Expr::Slice(sl) => {
                for bound in [&sl.lower, &sl.upper].into_iter().flatten() {
                    plus_minus(ctx, bound, EditKind::OffByOne, out);
                    // Drop the bound (`xs[1:]` → `xs[:]` reads as a copy: also a real option).
                    let (a, b) = span(bound.as_ref());
                    out.push(one(
                        EditKind::OffByOne,
                        a,
                        b,
                        String::new(),
                        format!("drop slice bound {}", text_of(ctx.text, bound.as_ref())),
                    ));
                }
            }
            index => plus_minus(ctx, index, EditKind::OffByOne, out),
        },
        Expr::Call(c) => {
            if let Expr::Name(n) = c.func.as_ref() {
                if n.id.as_str() == "range" {
                    for a in &c.args {
                        plus_minus(ctx, a, EditKind::OffByOne, out);
                    }
                }
            }
        }
        Expr::Compare(c) => {
            for side in std::iter::once(c.left.as_ref()).chain(c.comparators.iter()) {
                if matches!(side, Expr::Name(_) | Expr::Call(_) | Expr::Subscript(_)) {
                    plus_minus(ctx, side, EditKind::OffByOne, out);
                }
            }
        }
        _ => {}
    }
}

fn boolean(e: &Expr, ctx: &Context<'_>, out: &mut Vec<Candidate>) {
    match e {
        Expr::BoolOp(b) if b.values.len() >= 2 => {
            let (old, new) = match b.op {
                ast::BoolOp::And => ("and", "or"),
                ast::BoolOp::Or => ("or", "and"),
            };
            let repls: Vec<Repl> = b
                .values
                .windows(2)
                .filter_map(|w| between(ctx.text, &w[0], &w[1]))
                .map(|(start, end)| Repl {
                    start,
                    end,
                    text: new.to_string(),
                })
                .collect();
            if repls.len() == b.values.len() - 1 {
                out.push(Candidate {
                    kind: EditKind::Boolean,
                    repls,
                    description: format!("{old} → {new}"),
                });
            }
            let (s, t) = span(e);
            let parts: Vec<String> = b.values.iter().map(|v| bool_operand(ctx.text, v)).collect();
            if parts.len() == 2 {
                // Order matters when the first operand guards the second (`not xs or xs[0]`).
                out.push(one(
                    EditKind::Boolean,
                    s,
                    t,
                    format!("{} {old} {}", parts[1], parts[0]),
                    format!("swap the operands of {old}"),
                ));
            }
            for (i, part) in parts.iter().enumerate() {
                let rest: Vec<&str> = parts
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != i)
                    .map(|(_, p)| p.as_str())
                    .collect();
                out.push(one(
                    EditKind::Boolean,
                    s,
                    t,
                    rest.join(&format!(" {old} ")),
                    format!("drop `{part}` from {old}"),
                ));
            }
        }
        Expr::UnaryOp(u) if matches!(u.op, ast::UnaryOp::Not) => {
            let (s, t) = span(e);
            out.push(one(
                EditKind::Negation,
                s,
                t,
                operand(ctx.text, &u.operand),
                format!("drop `not` from {}", text_of(ctx.text, e)),
            ));
        }
        Expr::IfExp(i) => {
            let (s, t) = span(i.test.as_ref());
            out.push(one(
                EditKind::Negation,
                s,
                t,
                format!("not {}", operand(ctx.text, &i.test)),
                format!("negate {}", text_of(ctx.text, i.test.as_ref())),
            ));
        }
        _ => {}
    }
}

fn op_alternatives(op: Operator) -> &'static [&'static str] {
    match op {
        Operator::Add => &["-", "*"],
        Operator::Sub => &["+"],
        Operator::Mult => &["/", "//", "+", "**"],
        Operator::Div => &["//", "*"],
        Operator::FloorDiv => &["/", "%", "*"],
        Operator::Mod => &["//"],
        Operator::Pow => &["*"],
        _ => &[],
    }
}

fn arithmetic(e: &Expr, ctx: &Context<'_>, out: &mut Vec<Candidate>) {
    let Expr::BinOp(b) = e else { return };
    // `"%s" % x` formats; leave string arithmetic alone.
    if matches!(b.left.as_ref(), Expr::Constant(c) if matches!(c.value, Constant::Str(_))) {
        return;
    }
    if let Some((s, t)) = between(ctx.text, &b.left, &b.right) {
        let old = ctx.text.get(s..t).unwrap_or("");
        for alt in op_alternatives(b.op) {
            out.push(one(
                EditKind::Arithmetic,
                s,
                t,
                alt.to_string(),
                format!("{old} → {alt}"),
            ));
        }
    }
    if matches!(b.op, Operator::Add | Operator::Sub) && !is_truth_value(&b.left) {
        // `len(xs) - 1` → `len(xs)`: a term too many.
        let (s, t) = span(e);
        out.push(one(
            EditKind::Arithmetic,
            s,
            t,
            sum_operand(ctx.text, &b.left),
            format!(
                "{} → {}",
                text_of(ctx.text, e),
                text_of(ctx.text, b.left.as_ref())
            ),
        ));
    }
}

fn aug_assign(a: &ast::StmtAugAssign, ctx: &Context<'_>, out: &mut Vec<Candidate>) {
    let Some((s, t)) = between(ctx.text, &a.target, &a.value) else {
        return;
    };
    let old = ctx.text.get(s..t).unwrap_or("");
    let alternatives: Vec<String> = op_alternatives(a.op)
        .iter()
        .map(|o| format!("{o}="))
        .chain(std::iter::once("=".to_string()))
        .collect();
    for alt in alternatives {
        out.push(one(
            EditKind::Arithmetic,
            s,
            t,
            alt.clone(),
            format!("{old} → {alt}"),
        ));
    }
}

/// Every expression of every statement of `stmt` and below (not into nested functions).
fn collect_stmt_exprs<'a>(stmt: &'a Stmt, out: &mut Vec<&'a Expr>) {
    for e in own_exprs(stmt) {
        all_exprs(e, out);
    }
    if matches!(
        stmt,
        Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_)
    ) {
        return;
    }
    for body in crate::python::walk::child_bodies(stmt) {
        for s in body {
            collect_stmt_exprs(s, out);
        }
    }
}

/// Whether `e` evaluates to a bool by its form (a comparison, `not`; `and`/`or` give an
/// operand back).
fn is_truth_value(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Compare(_)
            | Expr::UnaryOp(ast::ExprUnaryOp {
                op: ast::UnaryOp::Not,
                ..
            })
    )
}

/// The left operand of a `+`/`-` written in the sum's place: as it stands when it binds at
/// least as tightly as the sum did (`x - y` for `x - y - 1`), parenthesised when the source had
/// to (`(x or y) - 1` becomes `(x or y)`, which may stand inside a comparison).
fn sum_operand(text: &str, e: &Expr) -> String {
    let tight = match e {
        Expr::BinOp(b) => matches!(
            b.op,
            Operator::Add
                | Operator::Sub
                | Operator::Mult
                | Operator::MatMult
                | Operator::Div
                | Operator::Mod
                | Operator::FloorDiv
                | Operator::Pow
        ),
        Expr::UnaryOp(u) => !matches!(u.op, ast::UnaryOp::Not),
        Expr::Await(_) => true,
        other => !super::needs_parens(other),
    };
    let t = text_of(text, e);
    if tight {
        t.to_string()
    } else {
        format!("({t})")
    }
}

/// An operand of `and`/`or`, parenthesised only where precedence needs it.
fn bool_operand(text: &str, e: &Expr) -> String {
    let t = text_of(text, e);
    if matches!(
        e,
        Expr::BoolOp(_) | Expr::IfExp(_) | Expr::Lambda(_) | Expr::NamedExpr(_)
    ) {
        format!("({t})")
    } else {
        t.to_string()
    }
}
