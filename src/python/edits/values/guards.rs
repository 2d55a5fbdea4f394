//! Guards and handlers: a parameter or a name just assigned that is `None` returns early (or
//! skips the loop's turn), a condition asks first that an operand is not `None`, and an
//! `except` also catches what the failing tests raised.

use rustpython_parser::ast::{self, Expr, Ranged, Stmt};

use super::{one, Hints};
use crate::python::edits::walk::all_exprs;
use crate::python::edits::{span, text_of, Candidate, Context, EditKind, Repl};

/// Operands of one condition given a `None` check, at most.
const NONE_CHECKS: usize = 4;

/// The indentation of the line `offset` is on.
fn indent_at(text: &str, offset: usize) -> String {
    let start = text[..offset.min(text.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    text[start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

fn line_start(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1)
}

/// `if NAME is None: return V` (or `continue` in a loop) where a `None` would go wrong: before
/// a function's first statement for each parameter, after a plain assignment for its name.
pub(super) fn guards(stmt: &Stmt, ctx: &Context<'_>, hints: &Hints, out: &mut Vec<Candidate>) {
    let step = "    ";
    // `None`, what the failing tests expect, then the empty values a caller may expect.
    let mut values: Vec<String> = vec!["None".to_string()];
    for r in hints
        .returns
        .iter()
        .chain(["[]", "''", "{}", "0", "False"].map(String::from).iter())
    {
        if !values.contains(r) {
            values.push(r.clone());
        }
    }
    let function = ctx.parents.iter().rev().find_map(|p| match p {
        Stmt::FunctionDef(f) => Some((&f.args, &f.body)),
        Stmt::AsyncFunctionDef(f) => Some((&f.args, &f.body)),
        _ => None,
    });
    let Some((args, body)) = function else {
        return;
    };
    let params: Vec<String> = args
        .posonlyargs
        .iter()
        .chain(&args.args)
        .chain(&args.kwonlyargs)
        .map(|a| a.def.arg.to_string())
        .filter(|p| p != "self" && p != "cls")
        .collect();
    let in_loop = ctx
        .parents
        .iter()
        .rev()
        .take_while(|p| !matches!(p, Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_)))
        .any(|p| matches!(p, Stmt::For(_) | Stmt::AsyncFor(_) | Stmt::While(_)));
    let (s, _) = span(stmt);
    let indent = indent_at(ctx.text, s);
    let at = line_start(ctx.text, s);
    // The function's first statement (after its docstring): a guard for each parameter.
    let first_real = body
        .iter()
        .position(|b| !is_docstring(b))
        .and_then(|i| body.get(i));
    if first_real.is_some_and(|f| f.range() == stmt.range()) {
        for p in &params {
            for v in values.iter().chain(params.iter().filter(|q| *q != p)) {
                out.push(Candidate {
                    kind: EditKind::Guard,
                    repls: vec![Repl {
                        start: at,
                        end: at,
                        text: format!("{indent}if {p} is None:\n{indent}{step}return {v}\n"),
                    }],
                    description: format!("return {v} when {p} is None"),
                });
            }
        }
    }
    // After `x = ...`: a guard for `x`.
    let assigned = match stmt {
        Stmt::Assign(a) if a.targets.len() == 1 => match &a.targets[0] {
            Expr::Name(n) => Some(n.id.to_string()),
            _ => None,
        },
        _ => None,
    };
    if let Some(x) = assigned {
        let (_, end) = span(stmt);
        let after = ctx.text[end..]
            .find('\n')
            .map_or(ctx.text.len(), |i| end + i + 1);
        if in_loop {
            out.push(Candidate {
                kind: EditKind::Guard,
                repls: vec![Repl {
                    start: after,
                    end: after,
                    text: format!("{indent}if {x} is None:\n{indent}{step}continue\n"),
                }],
                description: format!("skip the turn when {x} is None"),
            });
        }
        for v in &values {
            out.push(Candidate {
                kind: EditKind::Guard,
                repls: vec![Repl {
                    start: after,
                    end: after,
                    text: format!("{indent}if {x} is None:\n{indent}{step}return {v}\n"),
                }],
                description: format!("return {v} when {x} is None"),
            });
        }
    }
    // A loop's turn skipped when its variable is None.
    if let Stmt::For(f) = stmt {
        let mut names = Vec::new();
        crate::python::toplevel::target_names(&f.target, &mut names);
        if let Some(first) = f.body.first() {
            let (fs, _) = span(first);
            let inner = indent_at(ctx.text, fs);
            let fat = line_start(ctx.text, fs);
            for n in names {
                out.push(Candidate {
                    kind: EditKind::Guard,
                    repls: vec![Repl {
                        start: fat,
                        end: fat,
                        text: format!("{inner}if {n} is None:\n{inner}{step}continue\n"),
                    }],
                    description: format!("skip the turn when {n} is None"),
                });
            }
        }
    }
}

/// `if x is not None and COND:` (or `while`) for each operand of the condition that a `None`
/// would make raise: what `len()` or another call is given, what an attribute is read from or
/// what is indexed, a comparison's or arithmetic's side. An operand is a variable of the
/// function or an attribute path from one (`self.columns`), never a module's name. Offered
/// where the failing tests raised on a `None` ([`Hints::used_none`]).
pub(super) fn none_checked_conditions(stmt: &Stmt, ctx: &Context<'_>, out: &mut Vec<Candidate>) {
    let test = match stmt {
        Stmt::If(s) => s.test.as_ref(),
        Stmt::While(s) => s.test.as_ref(),
        _ => return,
    };
    let mut exprs = Vec::new();
    all_exprs(test, &mut exprs);
    let mut operands: Vec<&Expr> = Vec::new();
    for e in &exprs {
        match e {
            Expr::Call(c) => operands.extend(c.args.iter()),
            Expr::Attribute(a) => operands.push(&a.value),
            Expr::Subscript(s) => operands.push(&s.value),
            Expr::Compare(c) => {
                operands.push(&c.left);
                operands.extend(c.comparators.iter());
            }
            Expr::BinOp(b) => {
                operands.push(&b.left);
                operands.push(&b.right);
            }
            _ => {}
        }
    }
    operands.retain(|o| may_be_none(o, ctx));
    operands.sort_by_key(|o| span(*o));
    let (start, end) = span(test);
    let cond = text_of(ctx.text, test);
    // `and` binds tighter than these: they keep their meaning in parentheses only.
    let cond = match test {
        Expr::BoolOp(b) if b.op == ast::BoolOp::Or => format!("({cond})"),
        Expr::IfExp(_) | Expr::Lambda(_) | Expr::NamedExpr(_) => format!("({cond})"),
        _ => cond.to_string(),
    };
    let mut seen: Vec<&str> = Vec::new();
    for o in operands {
        let name = text_of(ctx.text, o);
        if seen.contains(&name) || seen.len() >= NONE_CHECKS {
            continue;
        }
        seen.push(name);
        out.push(one(
            EditKind::Guard,
            start,
            end,
            format!("{name} is not None and {cond}"),
            format!("only when {name} is not None: {}", super::short(&cond)),
        ));
    }
}

/// A variable of the function, or an attribute path from one or from `self` (`self.columns`,
/// `task.workers`): what may hold a `None`. A module's name or `self` itself never does.
fn may_be_none(e: &Expr, ctx: &Context<'_>) -> bool {
    let mut root = e;
    while let Expr::Attribute(a) = root {
        root = &a.value;
    }
    let Expr::Name(n) = root else {
        return false;
    };
    let id = n.id.as_str();
    match e {
        Expr::Name(_) => ctx.variables.contains(id) && id != "self" && id != "cls",
        _ => ctx.variables.contains(id) || id == "self" || id == "cls",
    }
}

fn is_docstring(stmt: &Stmt) -> bool {
    crate::python::toplevel::docstring(stmt).is_some()
}

/// `except E:` that also catches what the failing tests raised.
pub(super) fn except_more(stmt: &Stmt, ctx: &Context<'_>, hints: &Hints, out: &mut Vec<Candidate>) {
    let Stmt::Try(t) = stmt else { return };
    for h in &t.handlers {
        let ast::ExceptHandler::ExceptHandler(h) = h;
        let Some(kind) = &h.type_ else { continue };
        let caught = text_of(ctx.text, kind.as_ref());
        for raised in &hints.raised {
            if caught.contains(raised.as_str()) {
                continue;
            }
            let (s, e) = span(kind.as_ref());
            let new = match kind.as_ref() {
                Expr::Tuple(tu) => {
                    let inner: Vec<&str> = tu.elts.iter().map(|x| text_of(ctx.text, x)).collect();
                    format!("({}, {raised})", inner.join(", "))
                }
                _ => format!("({caught}, {raised})"),
            };
            out.push(one(
                EditKind::Guard,
                s,
                e,
                new.clone(),
                format!("except {caught} → except {new}"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::python::edits::{edits_with, Hints};

    const COPY: &str = "class Copy:\n    columns = None\n\n    def copy(self, f):\n        names = ''\n        if len(self.columns) > 0:\n            names = ','.join(self.columns)\n        return f.format(names, os.sep)\n";

    fn none_checks(program: &str, hints: &Hints) -> Vec<String> {
        edits_with(program, &[6], 100, hints, Some((4, 8)))
            .into_iter()
            .filter(|e| e.description.starts_with("only when"))
            .map(|e| e.program.lines().nth(5).unwrap_or("").trim().to_string())
            .collect()
    }

    #[test]
    fn a_condition_that_raised_on_none_asks_first_that_its_operand_is_not_none() {
        let hints = Hints {
            used_none: true,
            ..Hints::default()
        };
        assert_eq!(
            none_checks(COPY, &hints),
            ["if self.columns is not None and len(self.columns) > 0:"]
        );
        // Without a None raised, no such edit.
        assert!(none_checks(COPY, &Hints::default()).is_empty());
        // An `or` keeps its meaning in parentheses; a module's name and `self` are no operands.
        let either = COPY.replace(
            "if len(self.columns) > 0:",
            "if f.width > os.sep.count('/') or self.columns[0]:",
        );
        assert_eq!(
            none_checks(&either, &hints),
            [
                "if f is not None and (f.width > os.sep.count('/') or self.columns[0]):",
                "if f.width is not None and (f.width > os.sep.count('/') or self.columns[0]):",
                "if self.columns is not None and (f.width > os.sep.count('/') or self.columns[0]):",
            ]
        );
    }
}
