//! Where a function is defined, by its dotted path: `f` at the top level, `Cls.method` in a
//! class, `Outer.Inner.method` in a nested class. The unit of repair in a user's module can be
//! a method ([`crate::python::splice`] puts a fix back at the method's indentation), and the
//! search edits only its lines.
//!
//! Ranges are whole lines, 1-based and inclusive; a decorated definition starts at its first
//! decorator.

use rustpython_parser::ast::{self, Ranged};

use super::source::{parse_module, SourceFile};
use super::toplevel::docstring;

/// One definition found by its dotted path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefSite {
    /// First line (its first decorator's) and last line.
    pub first: u32,
    pub last: u32,
    /// The line of the `def` keyword itself.
    pub def_line: u32,
    /// The line its body starts on.
    pub body_first: Option<u32>,
    /// Its docstring's lines.
    pub doc: Option<(u32, u32)>,
    /// The indentation of its `def` line (empty at the top level).
    pub indent: String,
    /// The enclosing classes' lines, outermost first (empty at the top level).
    pub classes: Vec<(u32, u32)>,
}

/// Whether `path` is a dotted path of Python identifiers (`f`, `Cls.method`).
pub fn is_path(path: &str) -> bool {
    !path.is_empty() && path.split('.').all(super::names::is_python_identifier)
}

/// The last part of a dotted path: the function's own name.
pub fn leaf(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

/// The definition of the function at `path` in `text`, if `text` parses and has one. With
/// several of one name in a body, the last wins, as when Python runs it.
pub fn find(text: &str, path: &str) -> Option<DefSite> {
    let src = SourceFile::new(text);
    let suite = parse_module(&src).ok()?;
    find_in(&src, &suite, path)
}

/// [`find`] on an already parsed module.
pub fn find_in(src: &SourceFile, suite: &[ast::Stmt], path: &str) -> Option<DefSite> {
    if !is_path(path) {
        return None;
    }
    let parts: Vec<&str> = path.split('.').collect();
    let (last, classes) = parts.split_last()?;
    let mut body = suite;
    let mut enclosing = Vec::new();
    for class in classes {
        let c = body.iter().rev().find_map(|s| match s {
            ast::Stmt::ClassDef(c) if c.name.as_str() == *class => Some(c),
            _ => None,
        })?;
        enclosing.push(lines_of(src, s_range(c.range(), &c.decorator_list)));
        body = &c.body;
    }
    let stmt = body.iter().rev().find(|s| match s {
        ast::Stmt::FunctionDef(f) => f.name.as_str() == *last,
        ast::Stmt::AsyncFunctionDef(f) => f.name.as_str() == *last,
        _ => false,
    })?;
    let (decorators, fbody) = match stmt {
        ast::Stmt::FunctionDef(f) => (&f.decorator_list, &f.body),
        ast::Stmt::AsyncFunctionDef(f) => (&f.decorator_list, &f.body),
        _ => return None,
    };
    let (first, last_line) = lines_of(src, s_range(stmt.range(), decorators));
    let def_line = line(src, usize::from(stmt.start()));
    let body_first = fbody.first().map(|b| line(src, usize::from(b.start())));
    let doc = fbody.first().filter(|b| docstring(b).is_some()).map(|b| {
        (
            line(src, usize::from(b.start())),
            line(src, usize::from(b.end()).saturating_sub(1)),
        )
    });
    let def_text = src
        .text()
        .lines()
        .nth(def_line.saturating_sub(1) as usize)
        .unwrap_or("");
    let indent: String = def_text
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    Some(DefSite {
        first,
        last: last_line,
        def_line,
        body_first,
        doc,
        indent,
        classes: enclosing,
    })
}

/// Every function and method of `text` with its dotted path, in source order (nested
/// functions are left out: they are part of the function that defines them).
pub fn all_paths(text: &str) -> Vec<(String, DefSite)> {
    let src = SourceFile::new(text);
    let Ok(suite) = parse_module(&src) else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    collect_paths(&suite, "", &mut paths);
    paths
        .into_iter()
        .filter_map(|p| find_in(&src, &suite, &p).map(|site| (p, site)))
        .collect()
}

fn collect_paths(body: &[ast::Stmt], prefix: &str, out: &mut Vec<String>) {
    for s in body {
        match s {
            ast::Stmt::FunctionDef(f) => out.push(format!("{prefix}{}", f.name)),
            ast::Stmt::AsyncFunctionDef(f) => out.push(format!("{prefix}{}", f.name)),
            ast::Stmt::ClassDef(c) => collect_paths(&c.body, &format!("{prefix}{}.", c.name), out),
            _ => {}
        }
    }
}

fn s_range(range: ast::text_size::TextRange, decorators: &[ast::Expr]) -> (usize, usize) {
    // A decorator's expression starts after its `@`, on the same line.
    let start = decorators
        .iter()
        .map(|d| usize::from(d.start()))
        .chain([usize::from(range.start())])
        .min()
        .unwrap_or(0);
    (start, usize::from(range.end()).saturating_sub(1))
}

fn lines_of(src: &SourceFile, (start, end): (usize, usize)) -> (u32, u32) {
    (line(src, start), line(src, end.max(start)))
}

fn line(src: &SourceFile, offset: usize) -> u32 {
    src.line_of_offset(u32::try_from(offset).unwrap_or(u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = "import re\n\n\ndef top(x):\n    return x\n\n\nclass Shell(object):\n    \"\"\"A shell.\"\"\"\n\n    @property\n    def name(self):\n        \"\"\"Its name.\"\"\"\n        return 'sh'\n\n    class Inner:\n        async def go(self):\n            pass\n";

    #[test]
    fn a_method_is_found_by_its_dotted_path() {
        let m = find(MODULE, "Shell.name").expect("method");
        assert_eq!((m.first, m.def_line, m.last), (11, 12, 14));
        assert_eq!(m.indent, "    ");
        assert_eq!(m.doc, Some((13, 13)));
        assert_eq!(m.body_first, Some(13));
        assert_eq!(m.classes, vec![(8, 18)]);
        let go = find(MODULE, "Shell.Inner.go").expect("nested");
        assert_eq!((go.first, go.last), (17, 18));
        assert_eq!(go.indent, "        ");
        let top = find(MODULE, "top").expect("top");
        assert_eq!((top.first, top.last, top.indent.as_str()), (4, 5, ""));
        assert!(find(MODULE, "Shell.missing").is_none());
        assert!(find(MODULE, "name").is_none());
        assert!(find(MODULE, "Shell..name").is_none());
    }

    #[test]
    fn every_function_and_method_is_listed_in_order() {
        let paths: Vec<String> = all_paths(MODULE).into_iter().map(|(p, _)| p).collect();
        assert_eq!(paths, ["top", "Shell.name", "Shell.Inner.go"]);
        assert_eq!(leaf("Shell.Inner.go"), "go");
        assert!(is_path("Shell.name") && !is_path("Shell.") && !is_path("1a"));
    }
}
