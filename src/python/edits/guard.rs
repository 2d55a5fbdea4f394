//! Guard edits: `if not p: return EMPTY` at the top of a function, one per parameter. A program
//! that indexes its first element without looking (`seq[0]`) raises on an empty argument; the
//! usual fix is a guard, which no single-token edit adds. Used only where the program raised on
//! an input made by emptying an argument, with the empty value of the type the program answers
//! with elsewhere (see `repair::search::harden`).

use rustpython_parser::ast::{self, Ranged, Stmt};

use super::{Edit, EditKind};
use crate::python::normalize::program_key;
use crate::python::source::{parse_module, SourceFile};

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
}
