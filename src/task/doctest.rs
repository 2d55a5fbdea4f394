//! Turning the `>>>` examples of a docstring into `assert` statements (visible tests).
//!
//! HumanEval prompts carry their examples as doctests:
//!
//! ```text
//!     >>> has_close_elements([1.0, 2.0, 3.0], 0.5)
//!     False
//! ```
//!
//! becomes `assert has_close_elements([1.0, 2.0, 3.0], 0.5) == False`. Rules, each following what a
//! doctest means:
//! - the expected output runs until a blank line, the next `>>>`, a dedent or the closing quotes;
//!   output spread over several lines (a long list) is joined with spaces;
//! - `...` continuation lines extend the source;
//! - a call with no output line means it returned `None`: `assert f(x) is None`;
//! - a comparison with no output line is a claim the author wrote inline
//!   (`>>> f(3) == 'xix'`): it becomes `assert f(3) == 'xix'`;
//! - a statement with no output (`>>> xs = [1, 2]`) is set-up: it is put in front of the next
//!   converted example, so that example is a small statement block;
//! - trailing comments are dropped, and a side of `==` that would bind looser than `==`
//!   (`not x`, `a if c else b`, tuples) is parenthesised;
//! - anything else is skipped: `print(...)` output, tracebacks, output that is not a Python
//!   expression, and examples whose source does not parse (e.g. `f(x) [0, 1]`, a typo in
//!   HumanEval/116). Each produced assert is re-parsed, so every result is valid Python.
//!
//! Parsing uses `rustpython-parser`; nothing here runs Python.

use rustpython_parser::ast;
use rustpython_parser::lexer::lex;
use rustpython_parser::{parse, Mode, Tok};

/// The `>>>` examples found anywhere in `prompt`, converted to assert statements in order.
/// Examples that cannot be converted faithfully are skipped; the result may be empty.
pub fn docstring_asserts(prompt: &str) -> Vec<String> {
    let lines: Vec<&str> = prompt.lines().collect();
    let mut asserts = Vec::new();
    let mut setup: Vec<String> = Vec::new();
    let mut i = 0;
    while let Some(line) = lines.get(i) {
        let trimmed = line.trim_start();
        let Some(first) = trimmed.strip_prefix(">>>") else {
            i += 1;
            continue;
        };
        let indent = line.len() - trimmed.len();
        let mut source = strip_one_space(first).trim_end().to_string();
        i += 1;
        while let Some(rest) = lines
            .get(i)
            .and_then(|l| l.trim_start().strip_prefix("..."))
        {
            source.push('\n');
            source.push_str(strip_one_space(rest).trim_end());
            i += 1;
        }
        let mut expected: Vec<&str> = Vec::new();
        while let Some(line) = lines.get(i) {
            let text = line.trim();
            let line_indent = line.len() - line.trim_start().len();
            if text.is_empty()
                || text.starts_with(">>>")
                || line_indent < indent
                || text.starts_with("\"\"\"")
                || text.starts_with("'''")
            {
                break;
            }
            i += 1;
            if let Some(before) = text
                .strip_suffix("\"\"\"")
                .or_else(|| text.strip_suffix("'''"))
            {
                if !before.trim().is_empty() {
                    expected.push(before.trim());
                }
                break;
            }
            expected.push(text);
        }
        if let Some(assert) = convert(&source, &expected, &mut setup) {
            asserts.push(assert);
        }
    }
    asserts
}

/// Real examples are short and shallow. Long or deeply bracketed text is skipped before it
/// reaches the parser, whose syntax trees are built and dropped recursively: this bounds the
/// nesting any example can produce (a stack-overflow risk on hostile input).
fn reasonable(text: &str) -> bool {
    const MAX_LEN: usize = 2_000;
    const MAX_BRACKETS: usize = 100;
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' | '[' | '{' => {
                depth += 1;
                if depth > MAX_BRACKETS {
                    return false;
                }
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    text.len() <= MAX_LEN
}

fn strip_one_space(s: &str) -> &str {
    s.strip_prefix(' ').unwrap_or(s)
}

/// Converts one example; `setup` collects statements that have no output for later examples.
fn convert(source: &str, expected: &[&str], setup: &mut Vec<String>) -> Option<String> {
    if !reasonable(source) || !expected.iter().all(|l| reasonable(l)) {
        return None;
    }
    let source = code_text(source)?;
    let module = parse(&source, Mode::Module, "<doctest>").ok()?;
    let ast::Mod::Module(module) = module else {
        return None;
    };
    let [stmt] = module.body.as_slice() else {
        return None;
    };
    let ast::Stmt::Expr(stmt) = stmt else {
        // A statement (assignment, import, def): keep it as set-up if it prints nothing.
        // (Bounded, so hostile input cannot make every later assert grow without limit.)
        if expected.is_empty() && setup.len() < 20 {
            setup.push(source);
        }
        return None;
    };
    let value = stmt.value.as_ref();
    if is_print_call(value) {
        return None;
    }
    let assertion = if expected.is_empty() {
        match value {
            ast::Expr::Compare(_) => format!("assert {source}"),
            ast::Expr::Call(_) => format!("assert {source} is None"),
            _ => return None,
        }
    } else {
        let output = expected_expression(expected)?;
        format!(
            "assert {} == {}",
            comparable(&source, value),
            comparable_text(&output)?
        )
    };
    let block = if setup.is_empty() {
        assertion
    } else {
        format!("{}\n{assertion}", setup.join("\n"))
    };
    // Guard: only valid Python leaves this module.
    parse(&block, Mode::Module, "<doctest>").ok()?;
    Some(block)
}

/// The expected output as Python expression text, or `None` when it is not one (a traceback,
/// printed text, an ellipsis pattern).
fn expected_expression(lines: &[&str]) -> Option<String> {
    let first = lines.first()?;
    if first.starts_with("Traceback") || lines.iter().any(|l| l.contains("<BLANKLINE>")) {
        return None;
    }
    // Output wrapped over lines only happens inside brackets, where a space is equivalent.
    let joined = lines.join(" ");
    if !reasonable(&joined) {
        return None;
    }
    let text = code_text(&joined)?;
    parse(&text, Mode::Expression, "<doctest>").ok()?;
    Some(text)
}

fn is_print_call(expr: &ast::Expr) -> bool {
    matches!(expr, ast::Expr::Call(call)
        if matches!(call.func.as_ref(), ast::Expr::Name(name) if name.id.as_str() == "print"))
}

/// `code` without trailing comments or blank space: cut after the last real token.
fn code_text(code: &str) -> Option<String> {
    let mut end = 0usize;
    for token in lex(code, Mode::Module) {
        let (_, range) = token.ok()?;
        let (start, stop) = (usize::from(range.start()), usize::from(range.end()));
        if is_code(code.get(start..stop)) {
            end = end.max(stop);
        }
    }
    let text = code.get(..end)?.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// Whether a token's text is code, not layout (newline, indent, end of file) or a comment.
/// Decided by text because which layout and comment tokens exist depends on the lexer's features.
fn is_code(token_text: Option<&str>) -> bool {
    token_text.is_some_and(|t| !t.trim().is_empty() && !t.starts_with('#'))
}

/// `text` (the source of `expr`) ready to sit on one side of `==`.
fn comparable(text: &str, expr: &ast::Expr) -> String {
    let loose = match expr {
        ast::Expr::Compare(_)
        | ast::Expr::BoolOp(_)
        | ast::Expr::IfExp(_)
        | ast::Expr::Lambda(_)
        | ast::Expr::NamedExpr(_)
        | ast::Expr::Tuple(_)
        | ast::Expr::Yield(_)
        | ast::Expr::YieldFrom(_)
        | ast::Expr::Starred(_) => true,
        ast::Expr::UnaryOp(op) => matches!(op.op, ast::UnaryOp::Not),
        _ => false,
    };
    if loose && !fully_parenthesized(text) {
        format!("({text})")
    } else {
        text.to_string()
    }
}

fn comparable_text(text: &str) -> Option<String> {
    let parsed = parse(text, Mode::Expression, "<doctest>").ok()?;
    let ast::Mod::Expression(expr) = parsed else {
        return None;
    };
    Some(comparable(text, &expr.body))
}

/// True when `text` is one parenthesised group, e.g. `(1, 2)` but not `(1), (2)`.
fn fully_parenthesized(text: &str) -> bool {
    let mut depth = 0usize;
    let mut tokens = lex(text, Mode::Module)
        .filter_map(Result::ok)
        .filter(|(_, range)| {
            is_code(text.get(usize::from(range.start())..usize::from(range.end())))
        })
        .map(|(tok, range)| (tok, usize::from(range.end())))
        .peekable();
    if !matches!(tokens.peek(), Some((Tok::Lpar, _))) {
        return false;
    }
    for (tok, end) in tokens {
        match tok {
            Tok::Lpar | Tok::Lsqb | Tok::Lbrace => depth += 1,
            Tok::Rpar | Tok::Rsqb | Tok::Rbrace => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return end == text.trim_end().len();
                }
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(body: &str) -> String {
        format!("def f(x):\n    \"\"\"Doc.\n{body}\n    \"\"\"\n")
    }

    #[test]
    fn simple_pairs() {
        let p = doc("    >>> f(1)\n    2\n    >>> f('a')\n    'b'");
        assert_eq!(
            docstring_asserts(&p),
            vec!["assert f(1) == 2", "assert f('a') == 'b'"]
        );
    }

    #[test]
    fn inline_claims_none_and_comments() {
        let p = doc("    >>> f(1) == 3\n    >>> f([])\n\n    >>> round(f(2), 2) # note\n    1.0");
        assert_eq!(
            docstring_asserts(&p),
            vec![
                "assert f(1) == 3",
                "assert f([]) is None",
                "assert round(f(2), 2) == 1.0"
            ]
        );
    }

    #[test]
    fn multiline_output_and_continuations() {
        let p = doc("    >>> f(['3',\n    ...    '1'])\n    [\"a\",\n     \"b\"]\n    \"\"\"");
        assert_eq!(
            docstring_asserts(&p),
            vec!["assert f(['3',\n   '1']) == [\"a\", \"b\"]"]
        );
    }

    #[test]
    fn closing_quotes_on_output_line() {
        let p = "def f():\n    \"\"\"\n    >>> f()\n    [1, 2]\"\"\"\n";
        assert_eq!(docstring_asserts(p), vec!["assert f() == [1, 2]"]);
    }

    #[test]
    fn setup_and_precedence() {
        let p = doc(
            "    >>> xs = [1, 2]\n    >>> not f(xs)\n    True\n    >>> f(xs), f(xs)\n    (1, 1)",
        );
        assert_eq!(
            docstring_asserts(&p),
            vec![
                "xs = [1, 2]\nassert (not f(xs)) == True",
                "xs = [1, 2]\nassert (f(xs), f(xs)) == (1, 1)"
            ]
        );
    }

    #[test]
    fn skipped_examples() {
        let p = doc(
            "    >>> print(f(1))\n    2\n    >>> f(0)\n    Traceback (most recent call last):\n    ValueError\n    >>> f(1) [0, 1]\n    >>> f(2)\n    hello world",
        );
        assert!(docstring_asserts(&p).is_empty());
        assert!(docstring_asserts("no examples here").is_empty());
    }
}
