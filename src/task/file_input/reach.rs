//! Do the tests reach the program given, or another module beside it?
//!
//! `ldb test broken.py --tests test_prog.py`, where the tests `from prog import add`, would run
//! and report `prog.py`'s results under `broken.py`'s name. The tests reach the program when
//! they import its module (or its package), use a name it defines that no other import binds
//! (plain tests run in the program's namespace), or import a module beside it that imports the
//! program. When they reach none of these and import a module that is a file beside the
//! program or the tests, that module is what they test: the caller refuses, naming it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rustpython_parser::ast;
use rustpython_parser::lexer::lex;
use rustpython_parser::{Mode, Tok};

use crate::python::source::{parse_module, SourceFile};
use crate::python::toplevel::bound_names;

/// A module the tests import instead of the program: its name and its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignModule {
    pub module: String,
    pub file: PathBuf,
}

/// Every import statement of a module, nested ones included: (top-level module, names bound).
fn imports(suite: &[ast::Stmt], out: &mut Vec<(String, Vec<String>)>) {
    crate::python::walk::walk(suite, &mut |stmt| {
        match stmt {
            ast::Stmt::Import(i) => {
                for a in &i.names {
                    let top = a.name.split('.').next().unwrap_or_default().to_string();
                    let bound = a.asname.as_ref().map_or(top.clone(), |n| n.to_string());
                    out.push((top, vec![bound]));
                }
            }
            ast::Stmt::ImportFrom(i) => {
                let level = i.level.as_ref().map_or(0, |l| l.to_u32());
                if let (0, Some(m)) = (level, i.module.as_deref()) {
                    let top = m.split('.').next().unwrap_or_default().to_string();
                    out.push((top, bound_names(stmt)));
                }
            }
            _ => {}
        }
        crate::python::walk::Descend::Into
    });
}

fn imports_of(text: &str) -> Option<Vec<(String, Vec<String>)>> {
    let suite = parse_module(&SourceFile::new(text)).ok()?;
    let mut out = Vec::new();
    imports(&suite, &mut out);
    Some(out)
}

/// Names a program defines at top level; from its lines when it does not parse (a program
/// with a syntax error still says `def add(...)`).
fn defined_names(program: &str) -> BTreeSet<String> {
    if let Ok(suite) = parse_module(&SourceFile::new(program)) {
        return suite.iter().flat_map(bound_names).collect();
    }
    program
        .lines()
        .filter_map(|line| {
            let rest = line
                .strip_prefix("def ")
                .or_else(|| line.strip_prefix("async def "))
                .or_else(|| line.strip_prefix("class "))?;
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

/// Identifiers the text uses anywhere, attributes (`prog.add`'s `add`) aside.
fn used_names(text: &str) -> BTreeSet<String> {
    let mut after_dot = false;
    let mut out = BTreeSet::new();
    for (tok, _) in lex(text, Mode::Module).filter_map(Result::ok) {
        match tok {
            Tok::Name { ref name } if !after_dot => {
                out.insert(name.to_string());
            }
            _ => {}
        }
        after_dot = matches!(tok, Tok::Dot);
    }
    out
}

/// The module the tests import instead of the program, if they do not reach the program.
/// `program_modules` are the names the program is imported by (its file's stem, its
/// package's top-level name); `dirs` where a sibling module is looked for.
pub fn foreign_module(
    program_path: &Path,
    program: &str,
    program_modules: &[String],
    tests: &str,
    dirs: &[PathBuf],
) -> Option<ForeignModule> {
    let imported = imports_of(tests)?;
    if imported.iter().any(|(m, _)| program_modules.contains(m)) {
        return None;
    }
    // Names the tests take from elsewhere shadow the program's in its namespace.
    let from_elsewhere: BTreeSet<&String> = imported.iter().flat_map(|(_, b)| b).collect();
    let defined = defined_names(program);
    if used_names(tests)
        .iter()
        .any(|n| defined.contains(n) && !from_elsewhere.contains(n))
    {
        return None;
    }
    let program_file = program_path.canonicalize().ok();
    let sibling = |module: &str| {
        dirs.iter().find_map(|d| {
            [
                d.join(format!("{module}.py")),
                d.join(module).join("__init__.py"),
            ]
            .into_iter()
            .find(|f| f.is_file())
        })
    };
    let mut foreign = None;
    for (module, _) in &imported {
        let Some(file) = sibling(module) else {
            continue;
        };
        if file.canonicalize().ok() == program_file {
            return None;
        }
        foreign.get_or_insert(ForeignModule {
            module: module.clone(),
            file,
        });
    }
    // Modules beside it that import the program, directly or through one another: the tests
    // reach it through them.
    let mut seen: BTreeSet<String> = imported.iter().map(|(m, _)| m.clone()).collect();
    let mut queue: Vec<String> = seen.iter().cloned().collect();
    while let Some(module) = queue.pop() {
        if seen.len() > MAX_FOLLOWED {
            break;
        }
        let Some(file) = sibling(&module) else {
            continue;
        };
        let Some(its) = std::fs::read_to_string(&file)
            .ok()
            .and_then(|text| imports_of(&text))
        else {
            continue;
        };
        for (m, _) in its {
            if program_modules.contains(&m) {
                return None;
            }
            if seen.insert(m.clone()) {
                queue.push(m);
            }
        }
    }
    foreign
}

/// Modules followed at most, looking for one that imports the program.
const MAX_FOLLOWED: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    fn check(files: &[(&str, &str)], program: &str, tests: &str) -> Option<String> {
        let dir = dir_with(files);
        let path = dir.path().join(program);
        let text = std::fs::read_to_string(&path).unwrap();
        let stem = program.trim_end_matches(".py").to_string();
        foreign_module(&path, &text, &[stem], tests, &[dir.path().to_path_buf()]).map(|f| f.module)
    }

    #[test]
    fn tests_of_a_sibling_module_are_named() {
        let files = [
            ("prog.py", "def add(a, b):\n    return a + b\n"),
            ("broken.py", "def add(a, b)\n    return a - b\n"),
        ];
        let tests = "from prog import add\ndef test_one():\n    assert add(1, 2) == 3\n";
        assert_eq!(check(&files, "broken.py", tests).as_deref(), Some("prog"));
        let tests = "import prog\ndef test_one():\n    assert prog.add(1, 2) == 3\n";
        assert_eq!(check(&files, "broken.py", tests).as_deref(), Some("prog"));
    }

    #[test]
    fn tests_that_reach_the_program_pass() {
        let files = [
            ("prog.py", "def add(a, b):\n    return a + b\n"),
            ("helpers.py", "def pair():\n    return 1, 2\n"),
            (
                "app.py",
                "import prog\ndef run():\n    return prog.add(1, 2)\n",
            ),
        ];
        // Imports the program.
        assert_eq!(
            check(
                &files,
                "prog.py",
                "from prog import add\nassert add(1, 2) == 3\n"
            ),
            None
        );
        // Uses its names directly, with a helper beside it.
        assert_eq!(
            check(
                &files,
                "prog.py",
                "from helpers import pair\nassert add(*pair()) == 3\n"
            ),
            None
        );
        // Through a module that imports the program.
        assert_eq!(
            check(&files, "prog.py", "import app\nassert app.run() == 3\n"),
            None
        );
        // The standard library only.
        assert_eq!(
            check(&files, "prog.py", "import math\nassert add(1, 2) == 3\n"),
            None
        );
    }
}
