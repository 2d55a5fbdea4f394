//! Self-tests a model appends to the program it writes: asserts, example calls, `print`s, an
//! `if __name__ == "__main__":` block, `check_solution()` and its definition.
//!
//! They cost nothing to drop and a lot to keep: a wrong assert of the model's own fails an
//! otherwise correct function at import time, and a user asking for a fixed function should
//! not get the model's scratch work back. Only programs whose tests call a function (an entry
//! point) are tidied; a stdin/stdout program's top-level calls are the program.

use rustpython_parser::ast::{self, Constant, Expr, Ranged, Stmt};

use super::source::{parse_module, SourceFile};

/// `code` without the top-level self-tests described in the module docs; unchanged when it does
/// not parse or holds none.
pub fn strip_self_tests(code: &str, entry_point: &str) -> String {
    if entry_point.is_empty() {
        return code.to_string();
    }
    let src = SourceFile::new(code);
    let Ok(suite) = parse_module(&src) else {
        return code.to_string();
    };
    let defined: Vec<&str> = suite
        .iter()
        .filter_map(|s| match s {
            Stmt::FunctionDef(f) => Some(f.name.as_str()),
            Stmt::AsyncFunctionDef(f) => Some(f.name.as_str()),
            _ => None,
        })
        .collect();
    let test_fn = |name: &str| {
        name != entry_point
            && defined.contains(&name)
            && (name.starts_with("test") || name.starts_with("check"))
    };
    let mut drop: Vec<bool> = suite
        .iter()
        .map(|s| is_self_test(s, entry_point, &test_fn))
        .collect();
    // A test function nobody calls any more goes too.
    let kept_text = |drop: &[bool], skip: usize| -> String {
        suite
            .iter()
            .enumerate()
            .filter(|&(i, _)| !drop[i] && i != skip)
            .map(|(_, s)| slice(code, s))
            .collect::<Vec<_>>()
            .join("\n")
    };
    for (i, stmt) in suite.iter().enumerate() {
        if let Stmt::FunctionDef(f) = stmt {
            if !drop[i] && test_fn(f.name.as_str()) && !mentions(&kept_text(&drop, i), &f.name) {
                drop[i] = true;
            }
        }
    }
    if !drop.contains(&true) {
        return code.to_string();
    }
    let mut remove = vec![false; src.line_count() as usize + 1];
    for (_, stmt) in suite.iter().enumerate().filter(|&(i, _)| drop[i]) {
        let first = src.line_of_offset(u32::from(stmt.range().start()));
        let last = src.line_of_offset(u32::from(stmt.range().end()).saturating_sub(1));
        for n in first..=last {
            remove[n as usize] = true;
        }
        // Comments at the left margin right above it ("# Test the function") go with it.
        let mut n = first.saturating_sub(1);
        while n > 0 && src.line(n).is_some_and(|l| l.starts_with('#')) {
            remove[n as usize] = true;
            n -= 1;
        }
    }
    let lines: Vec<&str> = (1..=src.line_count())
        .filter(|&n| !remove[n as usize])
        .filter_map(|n| src.line(n))
        .collect();
    let mut out = lines.join("\n");
    // No run of blank lines left where the tests were.
    while out.contains("\n\n\n\n") {
        out = out.replace("\n\n\n\n", "\n\n\n");
    }
    out.trim_end().to_string() + "\n"
}

fn slice<'a>(code: &'a str, stmt: &Stmt) -> &'a str {
    code.get(usize::from(stmt.range().start())..usize::from(stmt.range().end()))
        .unwrap_or("")
}

/// Whether `name` appears as an identifier in `text` (not as part of a longer one).
fn mentions(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !ident(before) && !ident(after)
    })
}

fn is_self_test(stmt: &Stmt, entry_point: &str, test_fn: &dyn Fn(&str) -> bool) -> bool {
    match stmt {
        Stmt::Assert(_) => true,
        Stmt::If(s) => is_main_guard(&s.test),
        Stmt::Expr(e) => match e.value.as_ref() {
            Expr::Call(call) => match call.func.as_ref() {
                Expr::Name(n) => {
                    let name = n.id.as_str();
                    name == "print" || name == entry_point || test_fn(name)
                }
                // `doctest.testmod()`, `unittest.main()`
                Expr::Attribute(a) => {
                    matches!(
                        (a.value.as_ref(), a.attr.as_str()),
                        (Expr::Name(m), "testmod") if m.id.as_str() == "doctest"
                    ) || matches!(
                        (a.value.as_ref(), a.attr.as_str()),
                        (Expr::Name(m), "main") if m.id.as_str() == "unittest"
                    )
                }
                _ => false,
            },
            _ => false,
        },
        _ => false,
    }
}

/// `__name__ == "__main__"`, either way round.
fn is_main_guard(test: &Expr) -> bool {
    let Expr::Compare(c) = test else {
        return false;
    };
    if c.ops.len() != 1 || !matches!(c.ops[0], ast::CmpOp::Eq) {
        return false;
    }
    let is_name = |e: &Expr| matches!(e, Expr::Name(n) if n.id.as_str() == "__name__");
    let is_main = |e: &Expr| matches!(e, Expr::Constant(k) if matches!(&k.value, Constant::Str(s) if s == "__main__"));
    let (left, right) = (c.left.as_ref(), &c.comparators[0]);
    (is_name(left) && is_main(right)) || (is_main(left) && is_name(right))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asserts_prints_example_calls_and_check_functions_go() {
        let code = "\
import math

def f(x):
    \"\"\"Twice x.\"\"\"
    assert x is not None
    return 2 * x

# Test cases
assert f(1) == 2
print(f(3))
f(4)

def check_solution():
    assert f(2) == 4
    print(\"ok\")

# Run the check
check_solution()
";
        assert_eq!(
            strip_self_tests(code, "f"),
            "import math\n\ndef f(x):\n    \"\"\"Twice x.\"\"\"\n    assert x is not None\n    return 2 * x\n"
        );
    }

    #[test]
    fn a_main_guard_goes_and_helpers_stay() {
        let code = "\
TABLE = [1, 2]

def helper(x):
    return TABLE[x]

def check_range(x):
    return 0 <= x < 2

def f(x):
    return helper(x) if check_range(x) else 0

setup = helper(0)

if __name__ == \"__main__\":
    print(f(1))
";
        let out = strip_self_tests(code, "f");
        assert!(!out.contains("__main__"), "{out}");
        // A check_* helper the entry point uses is not a test.
        assert!(out.contains("def check_range"), "{out}");
        assert!(out.contains("setup = helper(0)"), "{out}");
    }

    #[test]
    fn stdin_programs_and_unparsable_code_are_left_alone() {
        let io = "def main():\n    print(input())\n\nmain()\n";
        assert_eq!(strip_self_tests(io, ""), io);
        let broken = "def f(:\n    pass\nassert f()\n";
        assert_eq!(strip_self_tests(broken, "f"), broken);
        let clean = "def f(x):\n    return x\n";
        assert_eq!(strip_self_tests(clean, "f"), clean);
    }
}
