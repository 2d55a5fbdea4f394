//! Guard edits: `if not p: return EMPTY` at the top of a function, one per parameter. A program
//! that indexes its first element without looking (`seq[0]`) raises on an empty argument; the
//! usual fix is a guard, which no single-token edit adds. Used only where the program raised on
//! an input made by emptying an argument, with the empty value of the type the program answers
//! with elsewhere (see `repair::search::harden`).

use rustpython_parser::ast::{self, Ranged, Stmt};

use super::{Edit, EditKind};
use crate::python::normalize::program_key;
use crate::python::source::{parse_module, SourceFile};
use crate::python::walk::child_bodies as bodies;

/// The empty value of the type of `answer` (a Python `repr`): `0` for an int, `[]` for a list,
/// and so on; `None` when the type has no obvious empty value.
pub fn empty_like(answer: &str) -> Option<&'static str> {
    let a = answer.trim();
    let first = a.chars().next()?;
    Some(match first {
        '[' => "[]",
        '(' => "()",
        '{' => "{}",
        '\'' | '"' => "''",
        _ if a == "True" || a == "False" => "False",
        _ if a.parse::<i128>().is_ok() => "0",
        _ if a.parse::<f64>().is_ok() => "0.0",
        _ => return None,
    })
}

/// `if not p: return value` as the first statement (after a docstring) of the top-level
/// function `function`, for each of its parameters; every edit parses and differs from the
/// program.
pub fn guards(program: &str, function: &str, value: &str) -> Vec<Edit> {
    let src = SourceFile::new(program.to_string());
    let Ok(suite) = parse_module(&src) else {
        return Vec::new();
    };
    let Some((args, body)) = suite.iter().find_map(|s| match s {
        Stmt::FunctionDef(f) if f.name.as_str() == function => Some((&f.args, &f.body)),
        _ => None,
    }) else {
        return Vec::new();
    };
    let docstring = matches!(body.first(), Some(Stmt::Expr(e))
        if matches!(&*e.value, ast::Expr::Constant(c) if matches!(c.value, ast::Constant::Str(_))));
    // Before the first statement after the docstring (after the docstring if it is alone).
    let (at, indent) = match (docstring, body.get(1), body.first()) {
        (true, Some(next), _) | (false, _, Some(next)) => {
            let start = usize::from(next.range().start());
            let line_start = program[..start].rfind('\n').map_or(0, |i| i + 1);
            let indent = &program[line_start..start];
            if !indent.chars().all(|c| c == ' ' || c == '\t') || indent.is_empty() {
                return Vec::new();
            }
            (line_start, indent.to_string())
        }
        (true, None, Some(doc)) => {
            let end = usize::from(doc.range().end());
            let Some(nl) = program[end..].find('\n') else {
                return Vec::new();
            };
            let start = usize::from(doc.range().start());
            let line_start = program[..start].rfind('\n').map_or(0, |i| i + 1);
            (end + nl + 1, program[line_start..start].to_string())
        }
        _ => return Vec::new(),
    };
    let line = src.line_of_offset(at as u32);
    let original = program_key(program);
    args.posonlyargs
        .iter()
        .chain(&args.args)
        .map(|a| a.def.arg.as_str())
        .filter(|p| *p != "self" && *p != "cls")
        .filter_map(|p| {
            let guard = format!("{indent}if not {p}:\n{indent}    return {value}\n");
            let edited = format!("{}{guard}{}", &program[..at], &program[at..]);
            let parses = parse_module(&SourceFile::new(edited.clone())).is_ok();
            (parses && program_key(&edited) != original).then(|| Edit {
                kind: EditKind::Guard,
                line,
                description: format!("add `if not {p}: return {value}`"),
                program: edited,
            })
        })
        .collect()
}

/// Whether the top-level function `function` can return `None` only by falling off its end: no
/// `return` without a value or `return None` in it, and a body that can run past its last
/// statement. Such a function answering `None` has not answered: a path its author forgot
/// (a loop an empty argument never enters), not a `None` meant as the answer.
pub fn answers_none_only_by_falling_off(program: &str, function: &str) -> bool {
    let Ok(suite) = parse_module(&SourceFile::new(program.to_string())) else {
        return false;
    };
    let Some(body) = suite.iter().find_map(|s| match s {
        Stmt::FunctionDef(f) if f.name.as_str() == function => Some(&f.body),
        _ => None,
    }) else {
        return false;
    };
    !returns_none_explicitly(body) && !always_leaves(body)
}

/// Whether a `return`, `return None` (not inside a nested function or class) is in `body`.
fn returns_none_explicitly(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Return(r) => r.value.as_deref().is_none_or(
            |v| matches!(v, ast::Expr::Constant(c) if matches!(c.value, ast::Constant::None)),
        ),
        Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_) | Stmt::ClassDef(_) => false,
        _ => bodies(s).into_iter().any(returns_none_explicitly),
    })
}

/// Whether every path through `body` ends in a `return` or `raise` (conservatively: an `if`
/// whose branches both do, or `while True` without `break`, counts; anything else may run on).
fn always_leaves(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Return(_) | Stmt::Raise(_) => true,
        Stmt::If(s) => always_leaves(&s.body) && always_leaves(&s.orelse),
        Stmt::While(s) => {
            matches!(&*s.test, ast::Expr::Constant(c) if matches!(c.value, ast::Constant::Bool(true)))
                && !breaks(&s.body)
        }
        _ => false,
    })
}

/// Whether a `break` of this loop (not of a nested loop, function or class) is in `body`.
fn breaks(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Break(_) => true,
        Stmt::For(_)
        | Stmt::AsyncFor(_)
        | Stmt::While(_)
        | Stmt::FunctionDef(_)
        | Stmt::AsyncFunctionDef(_)
        | Stmt::ClassDef(_) => false,
        _ => bodies(s).into_iter().any(breaks),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_empty_value_follows_the_answer_type() {
        assert_eq!(empty_like("3"), Some("0"));
        assert_eq!(empty_like("-2.5"), Some("0.0"));
        assert_eq!(empty_like("[1, 2]"), Some("[]"));
        assert_eq!(empty_like("('a', 1)"), Some("()"));
        assert_eq!(empty_like("'abc'"), Some("''"));
        assert_eq!(empty_like("True"), Some("False"));
        assert_eq!(empty_like("None"), None);
        assert_eq!(empty_like("<object at 0x1>"), None);
    }

    #[test]
    fn a_guard_goes_after_the_docstring_one_per_parameter() {
        let program = "def search(x, seq):\n    \"\"\"Where x goes.\"\"\"\n    if x <= seq[0]:\n        return 0\n    return len(seq)\n";
        let found = guards(program, "search", "0");
        assert_eq!(found.len(), 2);
        assert_eq!(
            found[1].program,
            "def search(x, seq):\n    \"\"\"Where x goes.\"\"\"\n    if not seq:\n        return 0\n    if x <= seq[0]:\n        return 0\n    return len(seq)\n"
        );
        assert_eq!(found[1].line, 3);
        assert!(guards(program, "other", "0").is_empty());
        // A body on the def's own line has no place for a guard.
        assert!(guards("def f(xs): return xs[0]\n", "f", "0").is_empty());
    }

    #[test]
    fn none_only_by_falling_off_needs_a_path_past_the_end_and_no_return_none() {
        let falls = "def search(x, seq):\n    for i, e in enumerate(seq):\n        if x <= e:\n            return i\n        elif x > seq[-1]:\n            return len(seq)\n";
        assert!(answers_none_only_by_falling_off(falls, "search"));
        assert!(!answers_none_only_by_falling_off(falls, "other"));
        // A `None` meant as the answer.
        let meant = "def first(xs):\n    for x in xs:\n        return x\n    return None\n";
        assert!(!answers_none_only_by_falling_off(meant, "first"));
        let bare = "def first(xs):\n    if not xs:\n        return\n    return xs[0]\n";
        assert!(!answers_none_only_by_falling_off(bare, "first"));
        // Every path returns.
        let both = "def sign(x):\n    if x < 0:\n        return -1\n    else:\n        return 1\n";
        assert!(!answers_none_only_by_falling_off(both, "sign"));
        let forever = "def f(xs):\n    while True:\n        if xs:\n            return 1\n";
        assert!(!answers_none_only_by_falling_off(forever, "f"));
        let broken = "def f(xs):\n    while True:\n        if xs:\n            break\n    x = 1\n";
        assert!(answers_none_only_by_falling_off(broken, "f"));
        // A nested function's `return None` is not this function's.
        let nested =
            "def f(xs):\n    def g():\n        return None\n    for x in xs:\n        return g()\n";
        assert!(answers_none_only_by_falling_off(nested, "f"));
    }
}
