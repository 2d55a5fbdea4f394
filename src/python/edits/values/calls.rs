//! Calls: a keyword argument added, changed or dropped as a mock's expected call has it; an
//! argument dropped or two traded; a method call without arguments made the attribute, and
//! back.

use rustpython_parser::ast::{self, Expr, Ranged, Stmt};

use super::{one, short, Hints};
use crate::python::edits::{span, text_of, Candidate, Context, EditKind, Repl};

/// A rendered call: its name, its positional arguments and its keyword arguments, as text.
type RenderedCall = (String, Vec<String>, Vec<(String, String)>);

/// A rendered call `name(a, b, k=v)`: its name and its arguments, as text.
fn parse_call(text: &str) -> Option<RenderedCall> {
    let text = text.trim();
    let open = text.find('(')?;
    if !text.ends_with(')') {
        return None;
    }
    let name = text[..open].trim().rsplit('.').next()?.to_string();
    let inner = &text[open + 1..text.len() - 1];
    let mut args = Vec::new();
    let mut kwargs = Vec::new();
    for part in split_top(inner) {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        match keyword_of(part) {
            Some((k, v)) => kwargs.push((k.to_string(), v.trim().to_string())),
            None => args.push(part.to_string()),
        }
    }
    Some((name, args, kwargs))
}

/// `k=v` at the top of an argument, if it is one.
fn keyword_of(part: &str) -> Option<(&str, &str)> {
    let eq = part.find('=')?;
    let key = &part[..eq];
    let next = part[eq + 1..].chars().next();
    (crate::python::names::is_python_identifier(key.trim()) && next != Some('='))
        .then(|| (key.trim(), &part[eq + 1..]))
}

/// `text` split at its top-level commas (outside brackets, quotes and `<...>` reprs).
fn split_top(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut cur = String::new();
    let mut escaped = false;
    for ch in text.chars() {
        if let Some(q) = quote {
            cur.push(ch);
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == q {
                quote = None;
            }
            continue;
        }
        match ch {
            '\'' | '"' => {
                quote = Some(ch);
                cur.push(ch);
            }
            '(' | '[' | '{' | '<' => {
                depth += 1;
                cur.push(ch);
            }
            ')' | ']' | '}' | '>' => {
                depth -= 1;
                cur.push(ch);
            }
            ',' if depth == 0 => out.push(std::mem::take(&mut cur)),
            _ => cur.push(ch),
        }
    }
    out.push(cur);
    out
}

/// Whether `text` is a Python literal a program can hold (`'x'`, `3`, `False`, `None`, `[]`).
fn is_literal_source(text: &str) -> bool {
    let t = text.trim();
    if t.is_empty() || t.contains('<') || t.len() > 200 {
        return false;
    }
    let src = crate::python::source::SourceFile::new(format!("_ = {t}\n"));
    let Ok(suite) = crate::python::source::parse_module(&src) else {
        return false;
    };
    let Some(Stmt::Assign(a)) = suite.first() else {
        return false;
    };
    fn literal(e: &Expr) -> bool {
        match e {
            Expr::Constant(_) => true,
            Expr::UnaryOp(u) => literal(&u.operand),
            Expr::List(l) => l.elts.iter().all(literal),
            Expr::Tuple(t) => t.elts.iter().all(literal),
            Expr::Set(s) => s.elts.iter().all(literal),
            Expr::Dict(d) => d.keys.iter().flatten().all(literal) && d.values.iter().all(literal),
            _ => false,
        }
    }
    literal(&a.value)
}

/// Keyword arguments as a mock's expected call has them: added, changed or dropped.
pub(super) fn mock_keywords(
    c: &ast::ExprCall,
    ctx: &Context<'_>,
    hints: &Hints,
    out: &mut Vec<Candidate>,
) {
    let callee = match c.func.as_ref() {
        Expr::Attribute(a) => a.attr.as_str(),
        Expr::Name(n) => n.id.as_str(),
        _ => return,
    };
    let (_, end) = span_call(c);
    let close = end.saturating_sub(1);
    if ctx.text.get(close..end) != Some(")") {
        return;
    }
    for (expected, actual) in &hints.calls {
        let (Some((name, _, want)), Some((_, _, got))) = (parse_call(expected), parse_call(actual))
        else {
            continue;
        };
        if name != callee {
            continue;
        }
        for (k, v) in &want {
            if !is_literal_source(v) {
                continue;
            }
            match c
                .keywords
                .iter()
                .find(|kw| kw.arg.as_deref() == Some(k.as_str()))
            {
                Some(kw) => {
                    if got.iter().any(|(gk, gv)| gk == k && gv == v) {
                        continue;
                    }
                    let (s, t) = span(&kw.value);
                    out.push(one(
                        EditKind::Argument,
                        s,
                        t,
                        v.clone(),
                        format!(
                            "{k}={} → {k}={v} (as the expected call has it)",
                            text_of(ctx.text, &kw.value)
                        ),
                    ));
                }
                None => {
                    // Right after the last argument (a closing parenthesis on a line of its
                    // own stays there).
                    let (at, sep) = match argument_spans(c).last() {
                        Some(&(_, end)) => (end, ", "),
                        None => (close, ""),
                    };
                    out.push(one(
                        EditKind::Argument,
                        at,
                        at,
                        format!("{sep}{k}={v}"),
                        format!(
                            "add {k}={v} to the call of {callee} (as the expected call has it)"
                        ),
                    ));
                }
            }
        }
        for (k, _) in &got {
            if want.iter().any(|(wk, _)| wk == k) {
                continue;
            }
            if let Some(i) = c
                .keywords
                .iter()
                .position(|kw| kw.arg.as_deref() == Some(k.as_str()))
            {
                if let Some(r) = drop_argument(c, ctx, Arg::Keyword(i)) {
                    out.push(Candidate {
                        kind: EditKind::Argument,
                        repls: vec![r],
                        description: format!(
                            "drop {k}= from the call of {callee} (the expected call has none)"
                        ),
                    });
                }
            }
        }
    }
}

fn span_call(c: &ast::ExprCall) -> (usize, usize) {
    (usize::from(c.range.start()), usize::from(c.range.end()))
}

#[derive(Clone, Copy)]
enum Arg {
    Positional(usize),
    Keyword(usize),
}

/// The call's arguments in source order: their spans.
fn argument_spans(c: &ast::ExprCall) -> Vec<(usize, usize)> {
    let mut all: Vec<(usize, usize)> = c.args.iter().map(span).collect();
    all.extend(c.keywords.iter().map(span));
    all.sort_unstable();
    all
}

/// The replacement that drops one argument with its comma.
fn drop_argument(c: &ast::ExprCall, ctx: &Context<'_>, which: Arg) -> Option<Repl> {
    let target = match which {
        Arg::Positional(i) => span(c.args.get(i)?),
        Arg::Keyword(i) => span(c.keywords.get(i)?),
    };
    let all = argument_spans(c);
    let k = all.iter().position(|s| *s == target)?;
    let (start, end) = if let Some(next) = all.get(k + 1) {
        (target.0, next.0)
    } else if k > 0 {
        (all[k - 1].1, target.1)
    } else {
        target
    };
    // Only commas and spaces go with it.
    let between = |a: usize, b: usize| ctx.text.get(a..b).unwrap_or("");
    let gap_ok = |g: &str| g.chars().all(|ch| ch == ',' || ch.is_whitespace());
    if k + 1 < all.len() && !gap_ok(between(target.1, all[k + 1].0)) {
        return None;
    }
    if k + 1 == all.len() && k > 0 && !gap_ok(between(all[k - 1].1, target.0)) {
        return None;
    }
    Some(Repl {
        start,
        end,
        text: String::new(),
    })
}

/// Fewer arguments, or two positional ones swapped.
pub(super) fn arguments(c: &ast::ExprCall, ctx: &Context<'_>, out: &mut Vec<Candidate>) {
    let callee = short(text_of(ctx.text, c.func.as_ref()));
    for i in 0..c.args.len() {
        if matches!(c.args[i], Expr::Starred(_)) {
            continue;
        }
        if let Some(r) = drop_argument(c, ctx, Arg::Positional(i)) {
            out.push(Candidate {
                kind: EditKind::Argument,
                repls: vec![r],
                description: format!(
                    "drop `{}` from the call of {callee}",
                    short(text_of(ctx.text, &c.args[i]))
                ),
            });
        }
    }
    for (i, kw) in c.keywords.iter().enumerate() {
        if kw.arg.is_none() {
            continue;
        }
        if let Some(r) = drop_argument(c, ctx, Arg::Keyword(i)) {
            out.push(Candidate {
                kind: EditKind::Argument,
                repls: vec![r],
                description: format!(
                    "drop `{}` from the call of {callee}",
                    short(text_of(ctx.text, kw))
                ),
            });
        }
    }
    for i in 0..c.args.len().saturating_sub(1) {
        let (a, b) = (&c.args[i], &c.args[i + 1]);
        if matches!(a, Expr::Starred(_)) || matches!(b, Expr::Starred(_)) {
            continue;
        }
        let (ta, tb) = (text_of(ctx.text, a), text_of(ctx.text, b));
        if ta == tb {
            continue;
        }
        let (sa, ea) = span(a);
        let (sb, eb) = span(b);
        out.push(Candidate {
            kind: EditKind::Argument,
            repls: vec![
                Repl {
                    start: sa,
                    end: ea,
                    text: tb.to_string(),
                },
                Repl {
                    start: sb,
                    end: eb,
                    text: ta.to_string(),
                },
            ],
            description: format!(
                "swap `{}` and `{}` in the call of {callee}",
                short(ta),
                short(tb)
            ),
        });
    }
}

/// `obj.attr()` with no arguments made `obj.attr`, and `obj.attr` (read, not called) made
/// `obj.attr()`.
pub(super) fn attribute_call(
    e: &Expr,
    ctx: &Context<'_>,
    exprs: &[&Expr],
    out: &mut Vec<Candidate>,
) {
    let Expr::Attribute(a) = e else { return };
    if !matches!(a.ctx, ast::ExprContext::Load) {
        return;
    }
    let called = exprs.iter().find_map(|x| match x {
        Expr::Call(c) if c.func.range() == e.range() => Some(c),
        _ => None,
    });
    let (s, t) = span(e);
    match called {
        Some(c) if c.args.is_empty() && c.keywords.is_empty() => {
            let (cs, ce) = span_call(c);
            out.push(one(
                EditKind::Call,
                cs,
                ce,
                text_of(ctx.text, e).to_string(),
                format!(
                    "{}() → {} (no call)",
                    short(text_of(ctx.text, e)),
                    short(text_of(ctx.text, e))
                ),
            ));
        }
        Some(_) => {}
        None => out.push(one(
            EditKind::Call,
            s,
            t,
            format!("{}()", text_of(ctx.text, e)),
            format!(
                "{} → {}() (a call)",
                short(text_of(ctx.text, e)),
                short(text_of(ctx.text, e))
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rendered_call_splits_into_its_arguments() {
        let (name, args, kwargs) = parse_call(
            "prompt('Select', type=<click.Choice object at 0x1>, default='1', show_choices=False)",
        )
        .expect("call");
        assert_eq!(name, "prompt");
        assert_eq!(args, ["'Select'"]);
        assert_eq!(kwargs.len(), 3);
        assert_eq!(kwargs[2], ("show_choices".to_string(), "False".to_string()));
        assert!(is_literal_source("False") && is_literal_source("[]"));
        assert!(!is_literal_source("<click.Choice object at 0x1>"));
    }
}
