//! Single-point mutations of a correct program, for bugs with a known location: the
//! localisation benchmark injects one and asks whether a verdict names the block it is in.
//!
//! The operators are the bugs LLM-written code has most: a flipped comparison, an off-by-one
//! constant, a wrong arithmetic operator, `and`/`or` swapped, a condition negated (the branch
//! that should run does not), a variable used in place of another. Each is a token-level edit
//! found by the lexer, so the rest of the program is byte-for-byte unchanged and the line of the
//! edit is exact. Only lines from `first_line` on are touched (e.g. past a docstring).

use rustpython_parser::{Mode, Tok};

/// What kind of bug a mutant carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MutationKind {
    Comparison,
    OffByOne,
    Operator,
    BooleanOperator,
    NegatedCondition,
    WrongVariable,
}

/// One mutant: the edited program and where the edit is.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Mutant {
    pub kind: MutationKind,
    /// 1-based line of the edit.
    pub line: u32,
    pub program: String,
    /// `before → after`, for reports.
    pub edit: String,
}

/// Every single-token mutant of `program` on lines `>= first_line`, in source order.
pub fn mutants(program: &str, first_line: u32) -> Vec<Mutant> {
    let mut tokens: Vec<(Tok, usize, usize)> = Vec::new();
    for t in rustpython_parser::lexer::lex(program, Mode::Module) {
        match t {
            Ok((tok, range)) => tokens.push((tok, range.start().into(), range.end().into())),
            Err(_) => return Vec::new(),
        }
    }
    let line_of = |offset: usize| -> u32 {
        program.as_bytes()[..offset.min(program.len())]
            .iter()
            .filter(|&&b| b == b'\n')
            .count() as u32
            + 1
    };
    // Names that are assigned somewhere (`x = ...`, `for x in`), the candidates for a wrong
    // variable: swapping in a builtin or a module would be a different kind of bug.
    let mut locals: Vec<String> = Vec::new();
    for (i, (tok, _, _)) in tokens.iter().enumerate() {
        if let Tok::Name { name } = tok {
            let next = tokens.get(i + 1).map(|t| &t.0);
            let prev = i.checked_sub(1).and_then(|p| tokens.get(p)).map(|t| &t.0);
            let assigned =
                matches!(next, Some(Tok::Equal) | Some(Tok::In)) && !matches!(prev, Some(Tok::Dot));
            let is_for = matches!(prev, Some(Tok::For));
            if (assigned || is_for) && !locals.contains(&name.to_string()) {
                locals.push(name.to_string());
            }
        }
    }
    let mut out = Vec::new();
    let mut edit = |kind, start: usize, end: usize, replacement: String| {
        let line = line_of(start);
        if line < first_line {
            return;
        }
        let before = &program[start..end];
        let mut text = String::with_capacity(program.len() + 8);
        text.push_str(&program[..start]);
        text.push_str(&replacement);
        text.push_str(&program[end..]);
        out.push(Mutant {
            kind,
            line,
            edit: format!("{before} → {replacement}"),
            program: text,
        });
    };
    for (i, (tok, start, end)) in tokens.iter().enumerate() {
        let (start, end) = (*start, *end);
        let swap = |s: &str| Some(s.to_string());
        let comparison = match tok {
            Tok::Less => swap("<="),
            Tok::LessEqual => swap("<"),
            Tok::Greater => swap(">="),
            Tok::GreaterEqual => swap(">"),
            Tok::EqEqual => swap("!="),
            Tok::NotEqual => swap("=="),
            _ => None,
        };
        if let Some(r) = comparison {
            edit(MutationKind::Comparison, start, end, r);
            continue;
        }
        let operator = match tok {
            Tok::Plus => swap("-"),
            Tok::Minus if is_binary(&tokens, i) => swap("+"),
            Tok::Star => swap("+"),
            Tok::DoubleSlash => swap("%"),
            Tok::Percent if is_binary(&tokens, i) => swap("//"),
            Tok::PlusEqual => swap("-="),
            Tok::MinusEqual => swap("+="),
            _ => None,
        };
        if let Some(r) = operator {
            edit(MutationKind::Operator, start, end, r);
            continue;
        }
        match tok {
            Tok::Int { value } => {
                if let Ok(n) = value.to_string().parse::<i64>() {
                    edit(MutationKind::OffByOne, start, end, (n + 1).to_string());
                }
            }
            Tok::And => edit(MutationKind::BooleanOperator, start, end, "or".into()),
            Tok::Or => edit(MutationKind::BooleanOperator, start, end, "and".into()),
            Tok::If | Tok::Elif | Tok::While => {
                // `if x:` → `if not (x):`, the condition's tokens up to the header's colon.
                if let Some(colon) = header_colon(&tokens, i) {
                    let cond_start = tokens.get(i + 1).map(|t| t.1).unwrap_or(end);
                    let cond_end = tokens[colon - 1].2;
                    if cond_start < cond_end {
                        let cond = &program[cond_start..cond_end];
                        edit(
                            MutationKind::NegatedCondition,
                            cond_start,
                            cond_end,
                            format!("not ({cond})"),
                        );
                    }
                }
            }
            Tok::Name { name } => {
                let prev = i.checked_sub(1).and_then(|p| tokens.get(p)).map(|t| &t.0);
                let next = tokens.get(i + 1).map(|t| &t.0);
                let is_use = !matches!(prev, Some(Tok::Dot) | Some(Tok::Def) | Some(Tok::For))
                    && !matches!(next, Some(Tok::Equal) | Some(Tok::Lpar));
                if is_use && locals.iter().any(|l| l == name.as_str()) {
                    if let Some(other) = locals.iter().find(|l| l.as_str() != name.as_str()) {
                        edit(MutationKind::WrongVariable, start, end, other.clone());
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// A `-` or `%` between two operands (not a sign, not string formatting's first token).
fn is_binary(tokens: &[(Tok, usize, usize)], i: usize) -> bool {
    let Some(prev) = i.checked_sub(1).and_then(|p| tokens.get(p)) else {
        return false;
    };
    matches!(
        prev.0,
        Tok::Name { .. } | Tok::Int { .. } | Tok::Float { .. } | Tok::Rpar | Tok::Rsqb
    )
}

/// Index of the `:` that ends the header starting at token `i` (brackets skipped).
fn header_colon(tokens: &[(Tok, usize, usize)], i: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (j, (tok, _, _)) in tokens.iter().enumerate().skip(i + 1) {
        match tok {
            Tok::Lpar | Tok::Lsqb | Tok::Lbrace => depth += 1,
            Tok::Rpar | Tok::Rsqb | Tok::Rbrace => depth -= 1,
            Tok::Colon if depth == 0 => return Some(j),
            Tok::Newline => return None,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROGRAM: &str = "def f(xs, k):\n    \"\"\"Doc.\"\"\"\n    total = 0\n    for x in xs:\n        if x > k and x % 2 == 0:\n            total += x - 1\n    return total\n";

    fn edits(kind: MutationKind) -> Vec<(u32, String)> {
        mutants(PROGRAM, 3)
            .into_iter()
            .filter(|m| m.kind == kind)
            .map(|m| (m.line, m.edit))
            .collect()
    }

    #[test]
    fn each_operator_edits_one_token_on_its_line() {
        assert!(edits(MutationKind::Comparison).contains(&(5, "> → >=".into())));
        assert!(edits(MutationKind::Comparison).contains(&(5, "== → !=".into())));
        assert!(edits(MutationKind::OffByOne).contains(&(3, "0 → 1".into())));
        assert!(edits(MutationKind::Operator).contains(&(6, "+= → -=".into())));
        assert!(edits(MutationKind::Operator).contains(&(6, "- → +".into())));
        assert!(edits(MutationKind::Operator).contains(&(5, "% → //".into())));
        assert_eq!(
            edits(MutationKind::BooleanOperator),
            [(5, "and → or".into())]
        );
        assert_eq!(
            edits(MutationKind::NegatedCondition),
            [(
                5,
                "x > k and x % 2 == 0 → not (x > k and x % 2 == 0)".into()
            )]
        );
        let wrong = edits(MutationKind::WrongVariable);
        assert!(wrong.contains(&(6, "x → total".into())), "{wrong:?}");
        assert!(wrong.iter().all(|(l, _)| *l >= 3));
    }

    #[test]
    fn mutants_parse_and_differ_from_the_program() {
        let all = mutants(PROGRAM, 1);
        assert!(all.len() > 10);
        for m in &all {
            assert_ne!(m.program, PROGRAM);
            let src = crate::python::source::SourceFile::new(m.program.clone());
            assert!(
                crate::python::source::parse_module(&src).is_ok(),
                "{}: {}",
                m.edit,
                m.program
            );
        }
    }

    #[test]
    fn lines_before_first_line_are_left_alone() {
        assert!(mutants(PROGRAM, 100).is_empty());
        assert!(mutants("def f(:\n  'x\n", 1).is_empty());
    }
}
