//! A test file read the way pytest collects it: top-level asserts, `test*` functions and the
//! `test*` methods of `Test*` classes are tests; the rest is set-up, put in front of the tests
//! that use one of its names; imports of the program resolve to the program under test.

use std::collections::BTreeSet;
use std::path::Path;

use rustpython_parser::ast::{self, Ranged};
use rustpython_parser::lexer::lex;
use rustpython_parser::{Mode, Tok};

use super::program::{bound_names, docstring, is_test_name, lines, ProgramFacts};
use super::FileInputError;
use crate::python::source::{parse_module, SourceFile};
use crate::python::text::dedent;
use crate::python::walk::child_bodies;

/// Tests and set-up read from a test file.
pub(super) struct Collected {
    pub(super) tests: Vec<String>,
    pub(super) imports: Vec<String>,
}

/// One piece of set-up: its text and the names it binds.
pub(super) struct Setup {
    pub(super) text: String,
    pub(super) names: Vec<String>,
}

pub(super) fn collect_tests(
    path: &Path,
    text: &str,
    module: Option<&str>,
    program_path: &Path,
    program: &ProgramFacts,
) -> Result<Collected, FileInputError> {
    let src = SourceFile::new(text);
    let suite = parse_module(&src).map_err(|e| {
        FileInputError::new(
            path,
            format!("not valid Python: {}", e.message),
            "fix the test file's syntax (the program may be broken; its tests may not)",
        )
        .at(e.line)
    })?;
    let line_of = |node: &dyn Ranged| src.line_of_offset(u32::from(node.range().start()));
    let program_name = program_path.display().to_string();
    let mut setup: Vec<Setup> = Vec::new();
    // (test text, set-up index it may use: set-up after a top-level assert still runs first)
    let mut cases: Vec<String> = Vec::new();
    let mut imports: Vec<String> = Vec::new();
    let test_functions: BTreeSet<String> = suite
        .iter()
        .filter_map(|s| match s {
            ast::Stmt::FunctionDef(f) if is_test_name(&f.name) => Some(f.name.to_string()),
            _ => None,
        })
        .collect();

    for stmt in &suite {
        import_names(stmt, module, &mut imports, path, &line_of, &program_name)?;
        match stmt {
            ast::Stmt::Assert(_) => cases.push(statement_text(text, &src, stmt)),
            ast::Stmt::FunctionDef(f) if is_test_name(&f.name) => {
                if has_parameters(&f.args) {
                    return Err(FileInputError::new(
                        path,
                        format!(
                            "test function `{}` takes arguments (a pytest fixture or \
                             parametrize); ldb runs plain test functions without pytest",
                            f.name
                        ),
                        "write the cases out as asserts, or as one test function per case",
                    )
                    .at(line_of(stmt))
                    .for_pytest());
                }
                let body: Vec<&ast::Stmt> =
                    f.body.iter().filter(|s| docstring(s).is_none()).collect();
                if f.decorator_list.is_empty()
                    && !body.is_empty()
                    && body.iter().all(|s| matches!(s, ast::Stmt::Assert(_)))
                {
                    for s in body {
                        cases.push(statement_text(text, &src, s));
                    }
                } else {
                    cases.push(format!(
                        "{}\n{}()",
                        statement_text(text, &src, stmt),
                        f.name
                    ));
                }
            }
            ast::Stmt::AsyncFunctionDef(f) if is_test_name(&f.name) => {
                return Err(FileInputError::new(
                    path,
                    format!(
                        "test function `{}` is async; ldb runs plain test functions",
                        f.name
                    ),
                    "call the coroutine with asyncio.run(...) inside a plain test function",
                )
                .at(line_of(stmt))
                .for_pytest());
            }
            ast::Stmt::ClassDef(c) if c.name.starts_with("Test") => {
                if let Some(hook) = c.body.iter().find_map(|m| match m {
                    ast::Stmt::FunctionDef(f) if SET_UP.contains(&f.name.as_str()) => {
                        Some(f.name.to_string())
                    }
                    _ => None,
                }) {
                    return Err(FileInputError::new(
                        path,
                        format!(
                            "test class `{}` has set-up (`{hook}`), which pytest calls around                              each test; ldb runs plain test methods without pytest",
                            c.name
                        ),
                        "install pytest (ldb then runs the file with it), or move the set-up                          into each test method",
                    )
                    .at(line_of(stmt))
                    .for_pytest());
                }
                let class_text = statement_text(text, &src, stmt);
                for m in &c.body {
                    let ast::Stmt::FunctionDef(f) = m else {
                        continue;
                    };
                    if !is_test_name(&f.name) {
                        continue;
                    }
                    let params = f.args.args.len() + f.args.posonlyargs.len();
                    if params != 1 || f.args.vararg.is_some() || !f.args.kwonlyargs.is_empty() {
                        return Err(FileInputError::new(
                            path,
                            format!(
                                "test method `{}.{}` takes arguments besides self (a pytest \
                                 fixture or parametrize); ldb runs plain test methods",
                                c.name, f.name
                            ),
                            "write the cases out as asserts in methods that take only self",
                        )
                        .at(line_of(m))
                        .for_pytest());
                    }
                    cases.push(format!("{class_text}\n{}().{}()", c.name, f.name));
                }
            }
            ast::Stmt::If(i) if is_main_guard(&i.test) => {}
            // A file that calls its own test functions at the bottom: they are tests already.
            ast::Stmt::Expr(e) if calls_one_of(&e.value, &test_functions) => {}
            ast::Stmt::ImportFrom(i) if imports_program(i, module) => {
                // In the program's globals the names are there already; an alias needs the
                // module, which the sandbox registers.
                if i.names.iter().any(|a| a.asname.is_some()) {
                    setup.push(Setup {
                        text: statement_text(text, &src, stmt),
                        names: bound_names(stmt),
                    });
                }
            }
            _ => {
                let names = bound_names(stmt);
                if let Some(clash) = names
                    .iter()
                    .find(|n| program.names.contains(*n) && !is_program_import(stmt, module))
                {
                    // Importing the function under test from some other module is the usual
                    // slip (`from solution import f` for prog.py): say so.
                    let message = match stmt {
                        ast::Stmt::ImportFrom(i) => format!(
                            "imports `{clash}` from `{}`, but the program under test is \
                             {program_name}, which defines `{clash}`",
                            i.module.as_deref().unwrap_or(".")
                        ),
                        _ => format!(
                            "defines `{clash}`, which {program_name} defines too; tests run in \
                             the program's namespace, so one would replace the other"
                        ),
                    };
                    return Err(FileInputError::new(
                        path,
                        message,
                        format!(
                            "rename `{clash}` in the test file, or import it from the program \
                             (`from {} import {clash}`)",
                            module.unwrap_or("prog")
                        ),
                    )
                    .at(line_of(stmt)));
                }
                setup.push(Setup {
                    text: statement_text(text, &src, stmt),
                    names,
                });
            }
        }
    }
    if cases.is_empty() {
        return Err(FileInputError::new(
            path,
            "holds no tests: no top-level assert, no `test_*` function, no `Test*` class",
            "write tests as `def test_name(): assert f(1) == 2` or as top-level asserts",
        ));
    }
    let defined: BTreeSet<&str> = setup
        .iter()
        .flat_map(|s| s.names.iter().map(String::as_str))
        .collect();
    let setup_text: String = setup.iter().map(|s| format!("{}\n", s.text)).collect();
    let tests = cases
        .into_iter()
        .map(|case| {
            if uses_any(&case, &defined) {
                format!("{setup_text}{case}")
            } else {
                case
            }
        })
        .collect();
    imports.sort();
    imports.dedup();
    Ok(Collected { tests, imports })
}

/// Methods pytest calls around a test class's tests.
const SET_UP: &[&str] = &[
    "setup_method",
    "teardown_method",
    "setup_class",
    "teardown_class",
    "setup",
    "teardown",
    "setUp",
    "tearDown",
];

pub(super) fn has_parameters(args: &ast::Arguments) -> bool {
    !args.args.is_empty()
        || !args.posonlyargs.is_empty()
        || !args.kwonlyargs.is_empty()
        || args.vararg.is_some()
        || args.kwarg.is_some()
}

/// `if __name__ == "__main__":`
pub(super) fn is_main_guard(test: &ast::Expr) -> bool {
    let ast::Expr::Compare(c) = test else {
        return false;
    };
    let is_name = |e: &ast::Expr| matches!(e, ast::Expr::Name(n) if n.id.as_str() == "__name__");
    let is_main = |e: &ast::Expr| matches!(e, ast::Expr::Constant(k) if matches!(&k.value, ast::Constant::Str(s) if s == "__main__"));
    match c.comparators.as_slice() {
        [right] => (is_name(&c.left) && is_main(right)) || (is_main(&c.left) && is_name(right)),
        _ => false,
    }
}

pub(super) fn calls_one_of(expr: &ast::Expr, names: &BTreeSet<String>) -> bool {
    match expr {
        ast::Expr::Call(c) => {
            matches!(c.func.as_ref(), ast::Expr::Name(n) if names.contains(n.id.as_str()))
        }
        _ => false,
    }
}

pub(super) fn imports_program(i: &ast::StmtImportFrom, module: Option<&str>) -> bool {
    let level = i.level.as_ref().map_or(0, |l| l.to_u32());
    level == 0 && module.is_some() && i.module.as_deref() == module
}

pub(super) fn is_program_import(stmt: &ast::Stmt, module: Option<&str>) -> bool {
    match stmt {
        ast::Stmt::Import(i) => i.names.iter().all(|a| Some(a.name.as_str()) == module),
        ast::Stmt::ImportFrom(i) => imports_program(i, module),
        _ => false,
    }
}

/// Records the modules `stmt` (and anything nested in it) imports besides the program; refuses
/// imports that cannot reach the program (a relative import, a submodule of it).
pub(super) fn import_names(
    stmt: &ast::Stmt,
    module: Option<&str>,
    out: &mut Vec<String>,
    path: &Path,
    line_of: &dyn Fn(&dyn Ranged) -> u32,
    program_name: &str,
) -> Result<(), FileInputError> {
    let relative_hint = || match module {
        Some(m) => format!("import the program by its file name: `from {m} import ...`"),
        None => "rename the program to a valid module name (e.g. prog.py) and import it as \
                 `from prog import ...`"
            .to_string(),
    };
    match stmt {
        ast::Stmt::Import(i) => {
            for a in &i.names {
                let top = a.name.split('.').next().unwrap_or_default();
                if Some(top) == module {
                    if a.name.as_str() != top {
                        return Err(FileInputError::new(
                            path,
                            format!("imports `{}`, but {program_name} is one module", a.name),
                            relative_hint(),
                        )
                        .at(line_of(stmt)));
                    }
                } else {
                    out.push(top.to_string());
                }
            }
        }
        ast::Stmt::ImportFrom(i) => {
            let level = i.level.as_ref().map_or(0, |l| l.to_u32());
            let name = i.module.as_deref().unwrap_or_default();
            if level > 0 {
                return Err(FileInputError::new(
                    path,
                    format!(
                        "relative import `from {}{name} import ...`: ldb runs the program \
                         alone, outside any package",
                        ".".repeat(level as usize)
                    ),
                    relative_hint(),
                )
                .at(line_of(stmt))
                .for_pytest());
            }
            let top = name.split('.').next().unwrap_or_default();
            if Some(top) == module {
                if name != top {
                    return Err(FileInputError::new(
                        path,
                        format!("imports from `{name}`, but {program_name} is one module"),
                        relative_hint(),
                    )
                    .at(line_of(stmt)));
                }
            } else if !top.is_empty() && top != "__future__" {
                out.push(top.to_string());
            }
        }
        _ => {}
    }
    for body in child_bodies(stmt) {
        for s in body {
            import_names(s, module, out, path, line_of, program_name)?;
        }
    }
    Ok(())
}

/// A statement's full lines (decorators included), dedented.
pub(super) fn statement_text(text: &str, src: &SourceFile, stmt: &ast::Stmt) -> String {
    let decorators: &[ast::Expr] = match stmt {
        ast::Stmt::FunctionDef(f) => &f.decorator_list,
        ast::Stmt::AsyncFunctionDef(f) => &f.decorator_list,
        ast::Stmt::ClassDef(c) => &c.decorator_list,
        _ => &[],
    };
    let start = decorators
        .iter()
        .map(|d| u32::from(d.range().start()))
        .chain([u32::from(stmt.range().start())])
        .min()
        .unwrap_or(0);
    let end = u32::from(stmt.range().end()).saturating_sub(1);
    let first = src.line_of_offset(start);
    let last = src.line_of_offset(end).max(first);
    dedent(lines(text, first, last).trim_end())
}

/// Whether `code` mentions one of `names` (by token, so strings and comments do not count).
pub(super) fn uses_any(code: &str, names: &BTreeSet<&str>) -> bool {
    lex(code, Mode::Module)
        .map_while(Result::ok)
        .any(|(tok, _)| matches!(tok, Tok::Name { name } if names.contains(name.as_str())))
}
