//! Edits guided by what the failing tests saw ([`Hints`]): the edits a person makes after
//! reading a failed assertion, where the expected value shows what the code got wrong.
//!
//! - A string literal whose text shows up in the actual value is rewritten to what the
//!   expected value holds at the same place (a missing part added, a stray quote dropped, a
//!   separator replaced); a literal with format fields (`{0}`, `%s`) is matched with the
//!   fields' values left free, and keeps its fields.
//! - A regular expression's character class gains a character the failing tests use, or
//!   loses one; a quantifier changes (`+`/`*`, greedy/lazy).
//! - A call's keyword argument is added, changed or dropped as a mock's expected call has it.
//! - A call loses an argument, or two of its arguments trade places; a method call with no
//!   arguments becomes the attribute, and back.
//! - A guard: a parameter or a name just assigned that is `None` returns early (with `None`,
//!   a value the failing tests expect, or another parameter), or skips the loop's turn; where
//!   the failing tests raised on a `None`, a condition first asks that its operand is not
//!   `None` (`if x is not None and len(x) > 0:`).
//! - An `except` also catches the exception the failing tests raised.
//!
//! The kinds follow what single-statement bugs of Python projects look like (PySStuBs:
//! changed literal, more or fewer arguments, swapped arguments, changed attribute or call).
//!
//! Parts: `literals` (string literals), `regex` (regular expressions), `calls` (arguments and
//! attributes), `guards` (guards and handlers).

mod calls;
mod guards;
mod literals;
mod regex;

use rustpython_parser::ast::{Constant, Expr, Stmt};

use super::walk::{all_exprs, own_exprs};
use super::{Candidate, Context, EditKind, Repl};
use calls::{arguments, attribute_call, mock_keywords};
use guards::{except_more, guards, none_checked_conditions};
use literals::literal;

/// What failing tests saw, for value-guided edits.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hints {
    /// What failing assertions compared: (actual, expected), as the strings' values when both
    /// sides were strings, else as rendered.
    pub compared: Vec<(String, String)>,
    /// A mock's expected and actual calls, as rendered (`name(a, k=v)`).
    pub calls: Vec<(String, String)>,
    /// Characters of the failing tests' own strings and expected values that are neither
    /// letters, digits nor spaces (what a regular expression's class may lack).
    pub chars: Vec<char>,
    /// Ranges a regular expression's class may lack: `0-9`, `A-Z`, `a-z` when an expected
    /// value has such characters that the actual value lacks.
    pub ranges: Vec<&'static str>,
    /// Expected values short enough to return, as Python source (`[]`, `None`, `'x'`).
    pub returns: Vec<String>,
    /// Exceptions the failing tests raised inside the program.
    pub raised: Vec<String>,
    /// Names the failing tests could not read (`NameError: name 'x' is not defined`).
    pub unbound: Vec<String>,
    /// A failing test raised inside the program on a `None` used as a value (`object of type
    /// 'NoneType' has no len()`, `'NoneType' object is not subscriptable`).
    pub used_none: bool,
}

impl Hints {
    pub fn is_empty(&self) -> bool {
        self == &Hints::default()
    }
}

/// The edits of one statement: those the failing tests' values point at (a literal made as
/// the expected value has it, a keyword argument as a mock's expected call has it, an
/// `except` for what was raised), and the generic ones of the kinds above (regular
/// expressions, arguments, calls, guards, a name nothing defines renamed), which come after
/// the usual edits.
pub(super) fn edits(
    stmt: &Stmt,
    ctx: &Context<'_>,
    hints: &Hints,
) -> (Vec<Candidate>, Vec<Candidate>) {
    let mut guided = Vec::new();
    let mut generic = Vec::new();
    let mut exprs: Vec<&Expr> = Vec::new();
    for e in own_exprs(stmt) {
        all_exprs(e, &mut exprs);
    }
    for e in &exprs {
        match e {
            Expr::Constant(c) if matches!(c.value, Constant::Str(_)) => {
                literal(e, ctx, hints, &exprs, (&mut guided, &mut generic))
            }
            Expr::Call(c) => {
                mock_keywords(c, ctx, hints, &mut guided);
                arguments(c, ctx, &mut generic);
            }
            Expr::Attribute(_) => attribute_call(e, ctx, &exprs, &mut generic),
            _ => {}
        }
    }
    except_more(stmt, ctx, hints, &mut guided);
    if hints.used_none {
        none_checked_conditions(stmt, ctx, &mut guided);
    }
    // A name nothing defines is a slip wherever it is, suspicious or not.
    super::exprs::rename_undefined(&exprs, ctx, &mut generic);
    guards(stmt, ctx, hints, &mut generic);
    (guided, generic)
}

fn one(kind: EditKind, start: usize, end: usize, text: String, description: String) -> Candidate {
    Candidate {
        kind,
        repls: vec![Repl { start, end, text }],
        description,
    }
}

fn short(s: &str) -> String {
    let one_line: String = s.chars().take(40).collect();
    if s.chars().count() > 40 {
        format!("{one_line}...")
    } else {
        one_line
    }
}
