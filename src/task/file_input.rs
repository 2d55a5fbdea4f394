//! A plain Python file and its tests as a [`Task`]: what `ldb fix prog.py --tests test_prog.py`
//! and `ldb test prog.py ...` debug.
//!
//! The program file becomes the task's seed. Its tests come from `--test` statements, from a
//! pytest-style test file, and from stdin/stdout pairs. A test file is read the way pytest
//! collects it, without needing pytest:
//! - top-level `assert`s, `test*` functions and the `test*` methods of `Test*` classes are tests;
//!   a test function made only of asserts gives one test per assert, so each failure shows its
//!   actual and expected value;
//! - everything else (imports, helpers, constants) is set-up, put in front of the tests that use
//!   one of its names;
//! - imports of the program (`from prog import f`, `import prog`) resolve to the program under
//!   test: tests run in the program's globals, and the sandbox registers the program under its
//!   module name ([`FileTask::module`]), so `import prog` finds it too.
//!
//! The task text is `--task TEXT`, else the entry function's signature and docstring (as in
//! HumanEval), else the module docstring. Nothing here runs Python; the CLI
//! (`cli/file_task.rs`) asks the sandbox which of the test file's other imports it cannot
//! resolve.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rustpython_parser::ast::{self, Ranged};
use rustpython_parser::lexer::lex;
use rustpython_parser::{Mode, Tok};

use super::{IoTest, Task};
use crate::python::source::{parse_module, SourceFile};
use crate::python::text::dedent;

/// Bad input for a file task: which file (and line), what is wrong, and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {message}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct FileInputError {
    pub file: PathBuf,
    pub line: Option<u32>,
    pub message: String,
    pub hint: String,
}

impl FileInputError {
    fn new(file: &Path, message: impl Into<String>, hint: impl Into<String>) -> Self {
        FileInputError {
            file: file.to_path_buf(),
            line: None,
            message: message.into(),
            hint: hint.into(),
        }
    }

    fn at(mut self, line: u32) -> Self {
        self.line = Some(line);
        self
    }
}

/// Everything a file task is made from.
#[derive(Debug, Clone, Default)]
pub struct FileInput {
    /// The program file (its name becomes the task id, its stem the module name).
    pub program_path: PathBuf,
    pub program: String,
    /// Test statements, run in the program's globals (`assert f(1) == 2`).
    pub tests: Vec<String>,
    /// A pytest-style test file: path and text.
    pub test_file: Option<(PathBuf, String)>,
    /// Stdin/stdout pairs for a program that reads its input.
    pub io_tests: Vec<IoTest>,
    /// The function the tests exercise (`--entry`).
    pub entry: Option<String>,
    /// The task text (`--task`).
    pub task_text: Option<String>,
}

/// A file task, ready for the fix loop and the runner.
#[derive(Debug, Clone, PartialEq)]
pub struct FileTask {
    pub task: Task,
    /// The module name the program is importable under in the sandbox (the file's stem), when
    /// that stem is a Python identifier.
    pub module: Option<String>,
    /// Top-level modules the test file imports besides the program; `missing_modules` (CLI) checks
    /// them before anything runs.
    pub imports: Vec<String>,
    /// Things worth telling the user (e.g. no task text was found).
    pub notes: Vec<String>,
}

/// Builds the task. Fails on input that cannot make a sensible task: no tests, a test file that
/// does not parse or uses pytest features ldb does not run (fixtures, parametrize), an entry
/// point that is not in the program, several candidate entry points.
pub fn build(input: &FileInput) -> Result<FileTask, FileInputError> {
    let path = &input.program_path;
    let module = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| super::is_python_identifier(s));
    let program = ProgramFacts::read(&input.program);
    let mut notes = Vec::new();

    let mut visible: Vec<String> = input
        .tests
        .iter()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect();
    let mut imports = Vec::new();
    if let Some((test_path, text)) = &input.test_file {
        let collected = collect_tests(test_path, text, module.as_deref(), path, &program)?;
        visible.extend(collected.tests);
        imports = collected.imports;
    }
    if visible.is_empty() && input.io_tests.is_empty() {
        return Err(FileInputError::new(
            path,
            "no tests to run the program against",
            "pass --tests test_prog.py (a pytest-style file), --test 'assert f(1) == 2' \
             (repeatable), or --io-test INPUT EXPECTED_OUTPUT for a program that reads stdin",
        ));
    }

    let entry = choose_entry(input, &program, &visible)?;
    let prompt = match input.task_text.as_deref().map(str::trim) {
        Some(text) if !text.is_empty() => text.to_string(),
        _ => {
            let found = entry
                .as_deref()
                .and_then(|e| program.described(&input.program, e))
                .or_else(|| program.module_doc.clone());
            match found {
                Some(text) => text,
                None => {
                    notes.push(format!(
                        "{} has no docstring saying what it should do, so the tests alone say it \
                         (--task TEXT describes the task)",
                        path.display()
                    ));
                    entry
                        .as_deref()
                        .and_then(|e| program.signature(&input.program, e))
                        .unwrap_or_else(|| "Make the program pass its tests.".to_string())
                }
            }
        }
    };
    let task_id = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let task = Task {
        task_id,
        prompt,
        entry_point: entry.unwrap_or_default(),
        visible_tests: visible,
        hidden_tests: None,
        seed: Some(input.program.clone()),
        source: None,
        io_tests: input.io_tests.clone(),
    };
    if let Err(problems) = task.validate() {
        if let Some(p) = problems.into_iter().next() {
            return Err(FileInputError::new(path, p.to_string(), "check the flags"));
        }
    }
    Ok(FileTask {
        task,
        module,
        imports,
        notes,
    })
}

/// What the program defines at top level, when it parses.
#[derive(Debug, Default)]
struct ProgramFacts {
    parsed: bool,
    /// Top-level functions, in order.
    functions: Vec<String>,
    /// Top-level functions and classes, and names assigned or imported at top level.
    names: BTreeSet<String>,
    module_doc: Option<String>,
    /// For each top-level function: its name, its header's line range and its docstring's end
    /// line (1-based, inclusive).
    headers: Vec<(String, u32, u32, Option<u32>)>,
}

impl ProgramFacts {
    fn read(text: &str) -> ProgramFacts {
        let src = SourceFile::new(text);
        let Ok(suite) = parse_module(&src) else {
            return ProgramFacts::default();
        };
        let mut facts = ProgramFacts {
            parsed: true,
            ..Default::default()
        };
        facts.module_doc = suite.first().and_then(docstring);
        for stmt in &suite {
            for name in bound_names(stmt) {
                facts.names.insert(name);
            }
            let (name, body, decorators) = match stmt {
                ast::Stmt::FunctionDef(f) => (f.name.as_str(), &f.body, &f.decorator_list),
                ast::Stmt::AsyncFunctionDef(f) => (f.name.as_str(), &f.body, &f.decorator_list),
                _ => continue,
            };
            facts.functions.push(name.to_string());
            let start = decorators
                .iter()
                .map(|d| usize::from(d.range().start()))
                .chain([usize::from(stmt.range().start())])
                .min()
                .unwrap_or(0);
            let first_line = src.line_of_offset(to_u32(start));
            let body_line = body.first().map_or(first_line, |b| {
                src.line_of_offset(to_u32(b.range().start().into()))
            });
            let header_end = body_line.saturating_sub(1).max(first_line);
            let doc_end = body.first().filter(|b| docstring(b).is_some()).map(|b| {
                src.line_of_offset(to_u32(usize::from(b.range().end()).saturating_sub(1)))
            });
            facts
                .headers
                .push((name.to_string(), first_line, header_end, doc_end));
        }
        facts
    }

    /// The function's header and docstring, as HumanEval writes a task.
    fn described(&self, text: &str, entry: &str) -> Option<String> {
        let (_, first, _, doc_end) = self.headers.iter().find(|h| h.0 == entry)?;
        Some(lines(text, *first, (*doc_end)?))
    }

    fn signature(&self, text: &str, entry: &str) -> Option<String> {
        let (_, first, header_end, _) = self.headers.iter().find(|h| h.0 == entry)?;
        Some(lines(text, *first, *header_end))
    }
}

fn lines(text: &str, first: u32, last: u32) -> String {
    let mut out: String = text
        .lines()
        .skip(first.saturating_sub(1) as usize)
        .take((last + 1).saturating_sub(first) as usize)
        .collect::<Vec<_>>()
        .join("\n");
    out.push('\n');
    out
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The text of a docstring statement.
fn docstring(stmt: &ast::Stmt) -> Option<String> {
    let ast::Stmt::Expr(e) = stmt else {
        return None;
    };
    match e.value.as_ref() {
        ast::Expr::Constant(c) => match &c.value {
            ast::Constant::Str(s) => {
                let s = s.trim();
                (!s.is_empty()).then(|| s.to_string())
            }
            _ => None,
        },
        _ => None,
    }
}

/// Names a top-level statement binds.
fn bound_names(stmt: &ast::Stmt) -> Vec<String> {
    let mut out = Vec::new();
    match stmt {
        ast::Stmt::FunctionDef(f) => out.push(f.name.to_string()),
        ast::Stmt::AsyncFunctionDef(f) => out.push(f.name.to_string()),
        ast::Stmt::ClassDef(c) => out.push(c.name.to_string()),
        ast::Stmt::Import(i) => {
            for a in &i.names {
                let bound = a.asname.as_ref().unwrap_or(&a.name);
                out.push(bound.split('.').next().unwrap_or_default().to_string());
            }
        }
        ast::Stmt::ImportFrom(i) => {
            for a in &i.names {
                if a.name.as_str() != "*" {
                    out.push(a.asname.as_ref().unwrap_or(&a.name).to_string());
                }
            }
        }
        ast::Stmt::Assign(a) => {
            for t in &a.targets {
                target_names(t, &mut out);
            }
        }
        ast::Stmt::AnnAssign(a) => target_names(&a.target, &mut out),
        ast::Stmt::AugAssign(a) => target_names(&a.target, &mut out),
        _ => {}
    }
    out
}

fn target_names(expr: &ast::Expr, out: &mut Vec<String>) {
    match expr {
        ast::Expr::Name(n) => out.push(n.id.to_string()),
        ast::Expr::Tuple(t) => t.elts.iter().for_each(|e| target_names(e, out)),
        ast::Expr::List(l) => l.elts.iter().for_each(|e| target_names(e, out)),
        ast::Expr::Starred(s) => target_names(&s.value, out),
        _ => {}
    }
}

/// Tests and set-up read from a test file.
struct Collected {
    tests: Vec<String>,
    imports: Vec<String>,
}

/// One piece of set-up: its text and the names it binds.
struct Setup {
    text: String,
    names: Vec<String>,
}

fn collect_tests(
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
                    .at(line_of(stmt)));
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
                .at(line_of(stmt)));
            }
            ast::Stmt::ClassDef(c) if c.name.starts_with("Test") => {
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
                        .at(line_of(m)));
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

fn is_test_name(name: &str) -> bool {
    name.starts_with("test")
}

fn has_parameters(args: &ast::Arguments) -> bool {
    !args.args.is_empty()
        || !args.posonlyargs.is_empty()
        || !args.kwonlyargs.is_empty()
        || args.vararg.is_some()
        || args.kwarg.is_some()
}

/// `if __name__ == "__main__":`
fn is_main_guard(test: &ast::Expr) -> bool {
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

fn calls_one_of(expr: &ast::Expr, names: &BTreeSet<String>) -> bool {
    match expr {
        ast::Expr::Call(c) => {
            matches!(c.func.as_ref(), ast::Expr::Name(n) if names.contains(n.id.as_str()))
        }
        _ => false,
    }
}

fn imports_program(i: &ast::StmtImportFrom, module: Option<&str>) -> bool {
    let level = i.level.as_ref().map_or(0, |l| l.to_u32());
    level == 0 && module.is_some() && i.module.as_deref() == module
}

fn is_program_import(stmt: &ast::Stmt, module: Option<&str>) -> bool {
    match stmt {
        ast::Stmt::Import(i) => i.names.iter().all(|a| Some(a.name.as_str()) == module),
        ast::Stmt::ImportFrom(i) => imports_program(i, module),
        _ => false,
    }
}

/// Records the modules `stmt` (and anything nested in it) imports besides the program; refuses
/// imports that cannot reach the program (a relative import, a submodule of it).
fn import_names(
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
                .at(line_of(stmt)));
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
    for body in nested_bodies(stmt) {
        for s in body {
            import_names(s, module, out, path, line_of, program_name)?;
        }
    }
    Ok(())
}

fn nested_bodies(stmt: &ast::Stmt) -> Vec<&[ast::Stmt]> {
    match stmt {
        ast::Stmt::FunctionDef(f) => vec![&f.body],
        ast::Stmt::AsyncFunctionDef(f) => vec![&f.body],
        ast::Stmt::ClassDef(c) => vec![&c.body],
        ast::Stmt::If(i) => vec![&i.body, &i.orelse],
        ast::Stmt::For(f) => vec![&f.body, &f.orelse],
        ast::Stmt::While(w) => vec![&w.body, &w.orelse],
        ast::Stmt::With(w) => vec![&w.body],
        ast::Stmt::Try(t) => {
            let mut v: Vec<&[ast::Stmt]> = vec![&t.body, &t.orelse, &t.finalbody];
            for h in &t.handlers {
                let ast::ExceptHandler::ExceptHandler(h) = h;
                v.push(&h.body);
            }
            v
        }
        _ => Vec::new(),
    }
}

/// A statement's full lines (decorators included), dedented.
fn statement_text(text: &str, src: &SourceFile, stmt: &ast::Stmt) -> String {
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
fn uses_any(code: &str, names: &BTreeSet<&str>) -> bool {
    lex(code, Mode::Module)
        .map_while(Result::ok)
        .any(|(tok, _)| matches!(tok, Tok::Name { name } if names.contains(name.as_str())))
}

/// The function the tests exercise: `--entry`, else the one program function the tests call,
/// else the program's only function. `None` for a program tested only through stdin/stdout.
fn choose_entry(
    input: &FileInput,
    program: &ProgramFacts,
    tests: &[String],
) -> Result<Option<String>, FileInputError> {
    let path = &input.program_path;
    if let Some(entry) = input.entry.as_deref().map(str::trim) {
        if !super::is_python_identifier(entry) {
            return Err(FileInputError::new(
                path,
                format!("--entry `{entry}` is not a Python function name"),
                "pass the bare name, e.g. --entry f",
            ));
        }
        if program.parsed && !program.names.contains(entry) {
            return Err(FileInputError::new(
                path,
                format!("--entry `{entry}`: the program defines no `{entry}`"),
                defined_hint(program),
            ));
        }
        return Ok(Some(entry.to_string()));
    }
    if tests.is_empty() {
        return Ok(None);
    }
    let mut called: Vec<String> = Vec::new();
    for test in tests {
        for name in super::called_names(test) {
            let defined = if program.parsed {
                program.names.contains(&name)
            } else {
                !super::is_builtin_wrapper(&name)
            };
            if defined && !called.contains(&name) && !is_test_name(&name) {
                called.push(name);
            }
        }
    }
    let called_functions: Vec<&String> = called
        .iter()
        .filter(|n| !program.parsed || program.functions.contains(n))
        .collect();
    match (called_functions.as_slice(), program.functions.as_slice()) {
        ([one], _) => Ok(Some((*one).clone())),
        ([], [only]) => Ok(Some(only.clone())),
        ([], []) if !program.parsed => Err(FileInputError::new(
            path,
            "the program does not parse, so the function under test cannot be found",
            "pass --entry NAME (the function the tests call)",
        )),
        ([], _) if program.functions.is_empty() => Err(FileInputError::new(
            path,
            "defines no function for the tests to call",
            "for a program that reads stdin and prints, use --io-test INPUT EXPECTED_OUTPUT",
        )),
        (several, _) => Err(FileInputError::new(
            path,
            format!(
                "the tests call several of its functions ({})",
                if several.is_empty() {
                    program.functions.join(", ")
                } else {
                    several
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
            "say which one is under test with --entry NAME",
        )),
    }
}

fn defined_hint(program: &ProgramFacts) -> String {
    if program.functions.is_empty() {
        "the program defines no top-level function; check the file".to_string()
    } else {
        format!("its top-level functions: {}", program.functions.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROG: &str =
        "def add(a, b):\n    \"\"\"Return the sum of a and b.\"\"\"\n    return a - b\n";

    fn input(tests: &str) -> FileInput {
        FileInput {
            program_path: PathBuf::from("dir/prog.py"),
            program: PROG.into(),
            test_file: Some((PathBuf::from("dir/test_prog.py"), tests.into())),
            ..Default::default()
        }
    }

    #[test]
    fn a_test_file_becomes_visible_tests_and_the_docstring_the_task() {
        let t = build(&input(
            "from prog import add\n\ndef test_add():\n    assert add(1, 2) == 3\n    assert add(0, 0) == 0\n\nassert add(2, 2) == 4\n",
        ))
        .expect("task");
        assert_eq!(t.task.task_id, "prog.py");
        assert_eq!(t.task.entry_point, "add");
        assert_eq!(
            t.task.visible_tests,
            vec![
                "assert add(1, 2) == 3",
                "assert add(0, 0) == 0",
                "assert add(2, 2) == 4"
            ]
        );
        assert_eq!(
            t.task.prompt,
            "def add(a, b):\n    \"\"\"Return the sum of a and b.\"\"\"\n"
        );
        assert_eq!(t.task.seed.as_deref(), Some(PROG));
        assert_eq!(t.module.as_deref(), Some("prog"));
        assert!(t.imports.is_empty());
    }

    #[test]
    fn set_up_goes_in_front_of_the_tests_that_use_it() {
        let t = build(&input(
            "import math\nimport prog\nCASES = [(1, 2, 3)]\n\ndef test_cases():\n    for a, b, c in CASES:\n        assert prog.add(a, b) == c\n\ndef test_plain():\n    assert add(1, 1) == 2\n",
        ))
        .expect("task");
        assert_eq!(t.task.visible_tests.len(), 2);
        let first = &t.task.visible_tests[0];
        assert!(
            first.starts_with("import math\nimport prog\nCASES = [(1, 2, 3)]\n"),
            "{first}"
        );
        assert!(
            first.ends_with("        assert prog.add(a, b) == c\ntest_cases()"),
            "{first}"
        );
        assert_eq!(t.task.visible_tests[1], "assert add(1, 1) == 2");
        assert_eq!(t.imports, vec!["math"]);
    }

    #[test]
    fn test_classes_and_self_calls_are_collected_once() {
        let t = build(&input(
            "class TestAdd:\n    def test_one(self):\n        assert add(1, 0) == 1\n\ndef test_two():\n    x = add(1, 1)\n    assert x == 2\n\nif __name__ == '__main__':\n    test_two()\ntest_two()\n",
        ))
        .expect("task");
        assert_eq!(t.task.visible_tests.len(), 2, "{:?}", t.task.visible_tests);
        assert!(t.task.visible_tests[0].ends_with("TestAdd().test_one()"));
        assert!(t.task.visible_tests[1].ends_with("assert x == 2\ntest_two()"));
    }

    #[test]
    fn fixtures_relative_imports_and_clashes_are_refused_with_a_hint() {
        let e = build(&input("def test_f(tmp_path):\n    assert add(1, 1) == 2\n")).unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(e.message.contains("takes arguments"), "{e}");
        let e = build(&input("from .prog import add\nassert add(1, 1) == 2\n")).unwrap_err();
        assert!(e.hint.contains("from prog import"), "{}", e.hint);
        let e = build(&input(
            "def add(a, b):\n    return 0\nassert add(1, 1) == 2\n",
        ))
        .unwrap_err();
        assert!(e.message.contains("defines `add`"), "{e}");
        let e = build(&input("x = 1\n")).unwrap_err();
        assert!(e.message.contains("no tests"), "{e}");
        let e = build(&input("def test_f(:\n")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("dir/test_prog.py:1: not valid Python"),
            "{e}"
        );
    }

    #[test]
    fn the_entry_is_the_function_the_tests_call() {
        let mut i = FileInput {
            program_path: PathBuf::from("prog.py"),
            program: "def helper(x):\n    return x\n\ndef f(x):\n    return helper(x) + 1\n".into(),
            tests: vec!["assert f(1) == 2".into()],
            ..Default::default()
        };
        assert_eq!(build(&i).expect("task").task.entry_point, "f");
        i.tests = vec!["assert f(1) == helper(2)".into()];
        let e = build(&i).unwrap_err();
        assert!(e.message.contains("several"), "{e}");
        assert!(e.hint.contains("--entry"), "{}", e.hint);
        i.entry = Some("f".into());
        assert_eq!(build(&i).expect("task").task.entry_point, "f");
        i.entry = Some("g".into());
        let e = build(&i).unwrap_err();
        assert!(e.hint.contains("helper, f"), "{}", e.hint);
        i.entry = None;
        i.task_text = Some("Add one.".into());
        i.tests = vec!["assert f(1) == 2".into()];
        let t = build(&i).expect("task");
        assert_eq!(t.task.prompt, "Add one.");
        assert!(t.notes.is_empty());
    }

    #[test]
    fn a_stdin_program_needs_no_entry() {
        let i = FileInput {
            program_path: PathBuf::from("sum.py"),
            program: "\"\"\"Print the sum of the numbers on the line.\"\"\"\nprint(sum(map(int, input().split())))\n".into(),
            io_tests: vec![IoTest {
                stdin: "1 2\n".into(),
                stdout: "3\n".into(),
            }],
            ..Default::default()
        };
        let t = build(&i).expect("task");
        assert!(t.task.is_script());
        assert_eq!(t.task.prompt, "Print the sum of the numbers on the line.");
    }

    #[test]
    fn no_tests_is_an_error_naming_the_flags() {
        let i = FileInput {
            program_path: PathBuf::from("prog.py"),
            program: PROG.into(),
            ..Default::default()
        };
        let e = build(&i).unwrap_err();
        assert!(
            e.hint.contains("--tests") && e.hint.contains("--io-test"),
            "{}",
            e.hint
        );
    }
}
