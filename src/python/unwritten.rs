//! Functions a program leaves unwritten: a body of nothing but a docstring and `pass`, `...` or
//! a bare `return` (`return None`). A student who wrote one function of three and left the
//! others as the assignment gave them, or a generator that stubbed a helper, hands over such a
//! program; the `complete` repair proposer has the model write those bodies in the program's
//! context and keeps everything else.

use rustpython_parser::ast::{self, Constant, Expr, Ranged, Stmt};

use super::source::{parse_module, SourceFile};

/// One function whose body is a placeholder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unwritten {
    pub name: String,
    /// The placeholder's lines (1-based, inclusive), after any docstring.
    pub first: u32,
    pub last: u32,
}

/// The unwritten functions of `program`, in source order: top-level functions and methods
/// (not functions nested in functions: those are a function's own business). A body that is
/// only a docstring has no line to replace and is left out; so is a program that does not
/// parse.
pub fn unwritten(program: &str) -> Vec<Unwritten> {
    let src = SourceFile::new(program.to_string());
    let Ok(suite) = parse_module(&src) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    collect(&suite, &src, &mut out);
    out
}

fn collect(body: &[Stmt], src: &SourceFile, out: &mut Vec<Unwritten>) {
    for stmt in body {
        match stmt {
            Stmt::FunctionDef(f) => placeholder(&f.name, &f.body, src, out),
            Stmt::AsyncFunctionDef(f) => placeholder(&f.name, &f.body, src, out),
            Stmt::ClassDef(c) => collect(&c.body, src, out),
            _ => {}
        }
    }
}

fn placeholder(name: &ast::Identifier, body: &[Stmt], src: &SourceFile, out: &mut Vec<Unwritten>) {
    let rest = match body.first() {
        Some(first) if docstring(first) => &body[1..],
        _ => body,
    };
    let (Some(first), Some(last)) = (rest.first(), rest.last()) else {
        return;
    };
    if !rest.iter().all(empty) {
        return;
    }
    out.push(Unwritten {
        name: name.to_string(),
        first: src.line_of_offset(u32::from(first.range().start())),
        last: src.line_of_offset(u32::from(last.range().end()).saturating_sub(1)),
    });
}

fn docstring(s: &Stmt) -> bool {
    matches!(s, Stmt::Expr(e) if matches!(e.value.as_ref(), Expr::Constant(c) if matches!(c.value, Constant::Str(_))))
}

/// `pass`, `...`, `return`, `return None`.
fn empty(s: &Stmt) -> bool {
    match s {
        Stmt::Pass(_) => true,
        Stmt::Expr(e) => {
            matches!(e.value.as_ref(), Expr::Constant(c) if matches!(c.value, Constant::Ellipsis))
        }
        Stmt::Return(r) => match r.value.as_deref() {
            None => true,
            Some(Expr::Constant(c)) => matches!(c.value, Constant::None),
            Some(_) => false,
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(program: &str) -> Vec<(String, u32, u32)> {
        unwritten(program)
            .into_iter()
            .map(|u| (u.name, u.first, u.last))
            .collect()
    }

    #[test]
    fn placeholders_are_found_after_the_docstring() {
        let program = "def a(x):\n    return x + 1\n\ndef b(x):\n    return\n\n\
                       def c(x):\n    \"\"\"Doc.\"\"\"\n    pass\n\nclass K:\n    def m(self):\n        ...\n";
        assert_eq!(
            names(program),
            vec![
                ("b".to_string(), 5, 5),
                ("c".to_string(), 9, 9),
                ("m".to_string(), 13, 13)
            ]
        );
    }

    #[test]
    fn written_bodies_docstrings_alone_and_broken_programs_are_not_placeholders() {
        assert!(names("def a():\n    return None if x else 1\n").is_empty());
        assert!(names("def a():\n    \"\"\"Only a docstring.\"\"\"\n").is_empty());
        assert!(names("def a():\n    x = 1\n    return\n").is_empty());
        assert!(names("def a(:\n    pass\n").is_empty());
        // A function inside a function is the outer one's business.
        assert!(names("def a():\n    def b():\n        pass\n    return b\n").is_empty());
    }

    #[test]
    fn several_placeholder_lines_make_one_span() {
        assert_eq!(
            names("def a():\n    pass\n    return None\n"),
            vec![("a".to_string(), 2, 3)]
        );
    }
}
