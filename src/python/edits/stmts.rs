//! Edits of whole statements: a condition negated, a statement deleted, the statement that
//! ends a loop body moved after the loop (a `return` indented one level too deep), a counter
//! that is only ever updated given its start.

use std::collections::BTreeSet;

use rustpython_parser::ast::{Constant, Expr, Operator, Ranged, Stmt};

use super::{operand, span, text_of, walk, Candidate, Context, EditKind, Repl};

pub(super) fn edits(stmt: &Stmt, ctx: &Context<'_>) -> Vec<Candidate> {
    let mut out = Vec::new();
    negate(stmt, ctx, &mut out);
    move_out_of_loop(stmt, ctx, &mut out);
    move_into_loop(stmt, ctx, &mut out);
    delete(stmt, ctx, &mut out);
    insert_return(ctx, &mut out);
    insert_start(stmt, ctx, &mut out);
    out
}

/// `name = START` at the top of the function (after its docstring) for `name op= value` when
/// the function binds `name` nowhere else: the update raises `UnboundLocalError` on its first
/// run, the slip of a counter whose start was forgotten. The start suits the update: `1` for a
/// product, `''`, `[]` or `()` for text or a sequence added to it, else `0`.
fn insert_start(stmt: &Stmt, ctx: &Context<'_>, out: &mut Vec<Candidate>) {
    let Stmt::AugAssign(update) = stmt else {
        return;
    };
    let Expr::Name(target) = update.target.as_ref() else {
        return;
    };
    let name = target.id.as_str();
    let Some((args, body)) = ctx.parents.iter().rev().find_map(|p| match p {
        Stmt::FunctionDef(f) => Some((&f.args, &f.body)),
        Stmt::AsyncFunctionDef(f) => Some((&f.args, &f.body)),
        _ => None,
    }) else {
        return;
    };
    let mut bound = BTreeSet::new();
    walk::bound_before_updates(args, body, &mut bound);
    if bound.contains(name) {
        return;
    }
    // After the docstring: a string first would no longer be one.
    let first_code = match body.first() {
        Some(Stmt::Expr(e))
            if matches!(
                e.value.as_ref(),
                Expr::Constant(c) if matches!(c.value, Constant::Str(_))
            ) =>
        {
            body.get(1)
        }
        first => first,
    };
    let Some(first) = first_code else {
        return;
    };
    let at = line_start(ctx.text, first.start().into());
    let indent = indent_of(ctx.text, first.start().into());
    let start = match (&update.op, update.value.as_ref()) {
        (Operator::Mult | Operator::Pow, _) => "1",
        (_, Expr::Constant(c)) if matches!(c.value, Constant::Str(_)) => "''",
        (_, Expr::List(_) | Expr::ListComp(_)) => "[]",
        (_, Expr::Tuple(_)) => "()",
        _ => "0",
    };
    out.push(Candidate {
        kind: EditKind::Start,
        repls: vec![Repl {
            start: at,
            end: at,
            text: format!("{indent}{name} = {start}\n"),
        }],
        description: format!("add `{name} = {start}` at the start of the function"),
    });
}

/// `stmt` moved to the end of the loop right before it (an update indented one level too
/// little).
fn move_into_loop(stmt: &Stmt, ctx: &Context<'_>, out: &mut Vec<Candidate>) {
    let Some(prev) = ctx.index.checked_sub(1).and_then(|i| ctx.siblings.get(i)) else {
        return;
    };
    let body: &[Stmt] = match prev {
        Stmt::For(f) => &f.body,
        Stmt::While(w) => &w.body,
        _ => return,
    };
    let (Some(first), Some(last)) = (body.first(), body.last()) else {
        return;
    };
    let Some((start, end)) = own_lines(ctx.text, stmt) else {
        return;
    };
    let at = line_end(ctx.text, span(last).1.saturating_sub(1));
    let from_indent = indent_of(ctx.text, stmt.start().into());
    let to_indent = indent_of(ctx.text, first.start().into());
    let mut moved = String::new();
    for line in ctx.text.get(start..end).unwrap_or("").split_inclusive('\n') {
        moved.push_str(to_indent);
        moved.push_str(line.strip_prefix(from_indent).unwrap_or(line.trim_start()));
    }
    if !moved.ends_with('\n') {
        moved.push('\n');
    }
    let shown = text_of(ctx.text, stmt).lines().next().unwrap_or("").trim();
    out.push(Candidate {
        kind: EditKind::Move,
        repls: vec![
            Repl {
                start: at,
                end: at,
                text: moved,
            },
            Repl {
                start,
                end,
                text: String::new(),
            },
        ],
        description: format!("move `{shown}` into the loop before it"),
    });
}

/// A `return` at the end of the enclosing function when it can fall off its end (returning
/// None): of a variable, the length of a parameter, or a constant.
fn insert_return(ctx: &Context<'_>, out: &mut Vec<Candidate>) {
    let Some(function) = ctx
        .parents
        .iter()
        .rev()
        .find(|p| matches!(p, Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_)))
    else {
        return;
    };
    let (args, body) = match function {
        Stmt::FunctionDef(f) => (&f.args, &f.body),
        Stmt::AsyncFunctionDef(f) => (&f.args, &f.body),
        _ => return,
    };
    let (Some(first), Some(last)) = (body.first(), body.last()) else {
        return;
    };
    if matches!(last, Stmt::Return(_) | Stmt::Raise(_)) {
        return;
    }
    let at = line_end(ctx.text, span(last).1.saturating_sub(1));
    let indent = indent_of(ctx.text, first.start().into());
    let lead = if ctx.text.get(..at).unwrap_or("").ends_with('\n') {
        ""
    } else {
        "\n"
    };
    let params: Vec<String> = args
        .posonlyargs
        .iter()
        .chain(&args.args)
        .map(|a| a.def.arg.to_string())
        .collect();
    let mut values: Vec<String> = params.iter().map(|p| format!("len({p})")).collect();
    values.extend(
        ctx.variables
            .iter()
            .filter(|v| !params.contains(v))
            .cloned(),
    );
    values.extend(["0", "True", "False", "-1"].map(String::from));
    for v in values {
        out.push(Candidate {
            kind: EditKind::Return,
            repls: vec![Repl {
                start: at,
                end: at,
                text: format!("{lead}{indent}return {v}\n"),
            }],
            description: format!("add `return {v}` at the end"),
        });
    }
}

fn negate(stmt: &Stmt, ctx: &Context<'_>, out: &mut Vec<Candidate>) {
    let test = match stmt {
        Stmt::If(s) => &s.test,
        Stmt::While(s) => &s.test,
        _ => return,
    };
    let (s, t) = span(test.as_ref());
    out.push(Candidate {
        kind: EditKind::Negation,
        repls: vec![Repl {
            start: s,
            end: t,
            text: format!("not {}", operand(ctx.text, test)),
        }],
        description: format!("negate {}", text_of(ctx.text, test.as_ref())),
    });
}

/// Byte offset of the start of the line holding `offset`.
fn line_start(text: &str, offset: usize) -> usize {
    text.get(..offset)
        .and_then(|t| t.rfind('\n'))
        .map_or(0, |i| i + 1)
}

/// Byte offset just past the line end of the line holding `offset` (or the text's end).
fn line_end(text: &str, offset: usize) -> usize {
    text.get(offset..)
        .and_then(|t| t.find('\n'))
        .map_or(text.len(), |i| offset + i + 1)
}

/// The whole lines of `stmt`, when it has them to itself (nothing else before it on its first
/// line, only a comment after it on its last).
fn own_lines(text: &str, stmt: &Stmt) -> Option<(usize, usize)> {
    let (s, t) = span(stmt);
    let start = line_start(text, s);
    let end = line_end(text, t.saturating_sub(1).max(s));
    let before = text.get(start..s)?;
    let after = text.get(t..end)?.trim();
    (before.trim().is_empty() && (after.is_empty() || after.starts_with('#')))
        .then_some((start, end))
}

fn indent_of(text: &str, offset: usize) -> &str {
    let start = line_start(text, offset);
    let line = text.get(start..).unwrap_or("");
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

fn delete(stmt: &Stmt, ctx: &Context<'_>, out: &mut Vec<Candidate>) {
    let simple = matches!(
        stmt,
        Stmt::Expr(_)
            | Stmt::Assign(_)
            | Stmt::AugAssign(_)
            | Stmt::AnnAssign(_)
            | Stmt::Return(_)
            | Stmt::Break(_)
            | Stmt::Continue(_)
            | Stmt::Raise(_)
            | Stmt::Assert(_)
    );
    if !simple {
        return;
    }
    let shown = text_of(ctx.text, stmt).lines().next().unwrap_or("").trim();
    let repl = if ctx.siblings.len() > 1 {
        let Some((start, end)) = own_lines(ctx.text, stmt) else {
            return;
        };
        Repl {
            start,
            end,
            text: String::new(),
        }
    } else {
        let (s, t) = span(stmt);
        Repl {
            start: s,
            end: t,
            text: "pass".into(),
        }
    };
    out.push(Candidate {
        kind: EditKind::Delete,
        repls: vec![repl],
        description: format!("delete `{shown}`"),
    });
}

/// Move `stmt` after the loop it ends: when it is the last statement of the loop's body, the
/// last of an `if` that ends the body, or the whole `else` of such an `if` (which then goes).
fn move_out_of_loop(stmt: &Stmt, ctx: &Context<'_>, out: &mut Vec<Candidate>) {
    let Some(loop_at) = ctx
        .parents
        .iter()
        .rposition(|p| matches!(p, Stmt::For(_) | Stmt::While(_) | Stmt::AsyncFor(_)))
    else {
        return;
    };
    let lp = ctx.parents[loop_at];
    let loop_body: &[Stmt] = match lp {
        Stmt::For(f) => &f.body,
        Stmt::While(w) => &w.body,
        Stmt::AsyncFor(f) => &f.body,
        _ => return,
    };
    let is_last = ctx.index + 1 == ctx.siblings.len();
    if !is_last {
        return;
    }
    let same = |a: &[Stmt], b: &[Stmt]| std::ptr::eq(a.as_ptr(), b.as_ptr());
    let Some((start, end)) = own_lines(ctx.text, stmt) else {
        return;
    };
    let mut removal = vec![Repl {
        start,
        end,
        text: String::new(),
    }];
    let between = &ctx.parents[loop_at + 1..];
    match between {
        // Directly in the loop's body, which keeps other statements.
        [] if same(ctx.siblings, loop_body) && loop_body.len() > 1 => {}
        [Stmt::If(i)]
            if loop_body
                .last()
                .is_some_and(|l| std::ptr::eq(l, between[0])) =>
        {
            if same(ctx.siblings, &i.orelse) && i.orelse.len() == 1 {
                // `else:` with only this statement: the `else:` line goes too.
                let else_line = line_start(ctx.text, start.saturating_sub(1));
                let header = ctx.text.get(else_line..start).unwrap_or("").trim();
                if !header.starts_with("else") || !header.ends_with(':') {
                    return;
                }
                removal[0].start = else_line;
            } else if !(same(ctx.siblings, &i.body) && i.body.len() > 1 && i.orelse.is_empty()) {
                return;
            }
        }
        _ => return,
    }
    let (_, loop_end) = span(lp);
    let at = line_end(ctx.text, loop_end.saturating_sub(1));
    let from_indent = indent_of(ctx.text, stmt.start().into());
    let to_indent = indent_of(ctx.text, lp.start().into());
    let mut moved = String::new();
    if !ctx.text.get(..at).unwrap_or("").ends_with('\n') {
        moved.push('\n');
    }
    for line in ctx.text.get(start..end).unwrap_or("").split_inclusive('\n') {
        let rest = line.strip_prefix(from_indent).unwrap_or(line.trim_start());
        moved.push_str(to_indent);
        moved.push_str(rest);
    }
    if !moved.ends_with('\n') {
        moved.push('\n');
    }
    removal.push(Repl {
        start: at,
        end: at,
        text: moved,
    });
    let shown = text_of(ctx.text, stmt).lines().next().unwrap_or("").trim();
    out.push(Candidate {
        kind: EditKind::Move,
        repls: removal,
        description: format!("move `{shown}` after the loop"),
    });
}
