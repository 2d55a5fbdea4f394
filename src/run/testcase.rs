//! Test statements → what the worker runs.
//!
//! `assert <lhs> == <rhs>` is split so the worker can report the actual value of `<lhs>` next to
//! the expected one: that pair is what a debugger needs to see. Other single asserts report the
//! value of their expression; anything else runs as plain statements.

use rustpython_parser::ast::{self, Ranged};

use super::sandbox::TestSpec;
use crate::python::source::{parse_module, SourceFile};
use crate::python::text::dedent;

/// Decide how to run one test statement block.
pub fn test_spec(source: &str) -> TestSpec {
    let text = dedent(source);
    let src = SourceFile::new(text.clone());
    let Ok(suite) = parse_module(&src) else {
        // Let the worker compile it and report the syntax error in context.
        return TestSpec::Statements { source: text };
    };
    // A test's last statement is the assert whose two sides get reported; statements before
    // it are its set-up.
    let Some((ast::Stmt::Assert(assert), before)) = suite.split_last() else {
        return TestSpec::Statements { source: text };
    };
    let setup = match before {
        [] => None,
        [first, ..] => match setup_text(&text, first, usize::from(assert.range().start())) {
            Some(setup) => Some(setup),
            None => return TestSpec::Statements { source: text },
        },
    };
    if let ast::Expr::Compare(cmp) = assert.test.as_ref() {
        match (cmp.ops.as_slice(), cmp.comparators.as_slice()) {
            ([ast::CmpOp::Eq], [right]) => {
                if let (Some(lhs), Some(rhs)) = (slice(&text, &*cmp.left), slice(&text, right)) {
                    return TestSpec::AssertEq {
                        source: text.clone(),
                        lhs,
                        rhs,
                        setup,
                    };
                }
            }
            // A chain (`a == b == c`) evaluates its middle once; splitting it would not.
            (_, [_, _, ..]) => return TestSpec::Statements { source: text },
            _ => {}
        }
    }
    if let Some(expr) = slice(&text, assert.test.as_ref()) {
        return TestSpec::AssertTruthy {
            source: text.clone(),
            expr,
            setup,
        };
    }
    TestSpec::Statements { source: text }
}

/// The statements before a test's final assert, as one block run first, when they are plain
/// set-up (imports, helpers, constants). Set-up holding an `assert` of its own stays one block
/// of statements: it is part of the test, not set-up.
fn setup_text(text: &str, first: &ast::Stmt, assert_start: usize) -> Option<String> {
    let start = usize::from(first.range().start());
    let end = assert_start;
    // From the start of the assert's line, so the set-up keeps its own line numbers.
    let end = text.get(..end)?.rfind('\n').map_or(0, |i| i + 1);
    let setup = text.get(..end)?;
    if start >= end || setup.trim().is_empty() {
        return None;
    }
    let has_assert = rustpython_parser::lexer::lex(setup, rustpython_parser::Mode::Module)
        .map_while(Result::ok)
        .any(|(tok, _)| matches!(tok, rustpython_parser::Tok::Assert));
    (!has_assert).then(|| setup.to_string())
}

/// Source text of a node; parenthesised so a multi-line slice still evaluates as one expression.
fn slice(text: &str, node: &impl Ranged) -> Option<String> {
    let range = node.range();
    let part = text.get(usize::from(range.start())..usize::from(range.end()))?;
    Some(if part.contains('\n') {
        format!("({part})")
    } else {
        part.to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equality_assert_is_split_into_its_two_sides() {
        assert_eq!(
            test_spec("assert f([1, 2]) == [2, 1]"),
            TestSpec::AssertEq {
                source: "assert f([1, 2]) == [2, 1]".into(),
                lhs: "f([1, 2])".into(),
                rhs: "[2, 1]".into(),
                setup: None,
            }
        );
    }

    #[test]
    fn other_asserts_report_their_expression() {
        assert_eq!(
            test_spec("assert abs(f(2) - 1.5) < 1e-6"),
            TestSpec::AssertTruthy {
                source: "assert abs(f(2) - 1.5) < 1e-6".into(),
                expr: "abs(f(2) - 1.5) < 1e-6".into(),
                setup: None,
            }
        );
    }

    #[test]
    fn chained_comparisons_and_blocks_run_as_statements() {
        assert!(matches!(
            test_spec("assert 1 == f(1) == 1"),
            TestSpec::Statements { .. }
        ));
        assert!(matches!(
            test_spec("def check(c):\n    assert c(1) == 2\ncheck(f)"),
            TestSpec::Statements { .. }
        ));
        assert!(matches!(
            test_spec("assert f(1 =="),
            TestSpec::Statements { .. }
        ));
    }

    #[test]
    fn an_assert_after_set_up_keeps_its_two_sides() {
        let source = "import math\nfrom prog import area\n\nassert area(1) == math.pi";
        assert_eq!(
            test_spec(source),
            TestSpec::AssertEq {
                source: source.into(),
                lhs: "area(1)".into(),
                rhs: "math.pi".into(),
                setup: Some("import math\nfrom prog import area\n\n".into()),
            }
        );
    }

    #[test]
    fn set_up_with_asserts_of_its_own_stays_one_block() {
        // Several asserts (MBPP's hidden tests) run as one block of statements.
        assert!(matches!(
            test_spec("assert f(1) == 2\nassert f(2) == 3"),
            TestSpec::Statements { .. }
        ));
        assert!(matches!(
            test_spec("def helper():\n    assert f(0) == 0\nassert f(1) == 2"),
            TestSpec::Statements { .. }
        ));
    }

    #[test]
    fn indented_tests_are_dedented() {
        assert_eq!(
            test_spec("    assert f(1) == 2"),
            TestSpec::AssertEq {
                source: "assert f(1) == 2".into(),
                lhs: "f(1)".into(),
                rhs: "2".into(),
                setup: None,
            }
        );
    }
}
