//! What the program file offers a task: its functions and their signatures, its docstrings, and
//! which function the tests call (the entry).

use std::collections::BTreeSet;

use rustpython_parser::ast::{self, Ranged};

use super::{FileInput, FileInputError};
use crate::python::source::{parse_module, SourceFile};
pub(super) use crate::python::toplevel::{bound_names, docstring};

/// What the program defines at top level, when it parses.
#[derive(Debug, Default)]
pub(super) struct ProgramFacts {
    pub(super) parsed: bool,
    /// Top-level functions, in order.
    pub(super) functions: Vec<String>,
    /// Top-level functions and classes, and names assigned or imported at top level.
    pub(super) names: BTreeSet<String>,
    pub(super) module_doc: Option<String>,
    /// For each top-level function: its name, its header's line range and its docstring's end
    /// line (1-based, inclusive).
    pub(super) headers: Vec<(String, u32, u32, Option<u32>)>,
}

impl ProgramFacts {
    pub(super) fn read(text: &str) -> ProgramFacts {
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
    pub(super) fn described(&self, text: &str, entry: &str) -> Option<String> {
        if entry.contains('.') {
            let site = crate::python::defs::find(text, entry)?;
            let (_, doc_end) = site.doc?;
            return Some(dedent(&lines(text, site.first, doc_end)));
        }
        let (_, first, _, doc_end) = self.headers.iter().find(|h| h.0 == entry)?;
        Some(lines(text, *first, (*doc_end)?))
    }

    pub(super) fn signature(&self, text: &str, entry: &str) -> Option<String> {
        if entry.contains('.') {
            let site = crate::python::defs::find(text, entry)?;
            let end = site
                .body_first
                .map_or(site.def_line, |b| b.saturating_sub(1));
            return Some(dedent(&lines(text, site.first, end.max(site.def_line))));
        }
        let (_, first, header_end, _) = self.headers.iter().find(|h| h.0 == entry)?;
        Some(lines(text, *first, *header_end))
    }

    /// Whether the program defines the method at `path` (`Cls.method`).
    pub(super) fn defines_method(text: &str, path: &str) -> bool {
        crate::python::defs::find(text, path).is_some()
    }
}

pub(super) fn lines(text: &str, first: u32, last: u32) -> String {
    let mut out: String = text
        .lines()
        .skip(first.saturating_sub(1) as usize)
        .take((last + 1).saturating_sub(first) as usize)
        .collect::<Vec<_>>()
        .join("\n");
    out.push('\n');
    out
}

/// `text` with the indentation of its first line taken off every line that has it.
fn dedent(text: &str) -> String {
    let first = text.lines().next().unwrap_or("");
    let indent = &first[..first.len() - first.trim_start().len()];
    text.split_inclusive('\n')
        .map(|l| l.strip_prefix(indent).unwrap_or(l))
        .collect()
}

pub(super) fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The function the tests exercise: `--entry`, else the one program function the tests call,
/// else the program's only function. `None` for a program tested only through stdin/stdout.
pub(super) fn choose_entry(
    input: &FileInput,
    program: &ProgramFacts,
    tests: &[String],
) -> Result<Option<String>, FileInputError> {
    let path = &input.program_path;
    if let Some(entry) = input.entry.as_deref().map(str::trim) {
        if entry.contains('.') && crate::python::defs::is_path(entry) {
            // A method: `Cls.method` (`Outer.Inner.method` in a nested class).
            if program.parsed && !ProgramFacts::defines_method(&input.program, entry) {
                return Err(FileInputError::new(
                    path,
                    format!("`{entry}`: the program defines no method `{entry}`"),
                    methods_hint(&input.program),
                ));
            }
            return Ok(Some(entry.to_string()));
        }
        if !crate::task::is_python_identifier(entry) {
            return Err(FileInputError::new(
                path,
                format!("--entry `{entry}` is not a Python function or method name"),
                "pass the bare name, e.g. --entry f, or Cls.method for a method",
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
        for name in crate::task::called_names(test) {
            let defined = if program.parsed {
                program.names.contains(&name)
            } else {
                !crate::task::is_builtin_wrapper(&name)
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
        // The tests call none of its functions and use a method: a class is under test,
        // whatever helpers the module has beside it.
        ([], _) if program.parsed && !methods_used(&program_methods(input), tests).is_empty() => {
            called_method(input, tests)
        }
        ([], [only]) => Ok(Some(only.clone())),
        ([], []) if !program.parsed => Err(FileInputError::new(
            path,
            "the program does not parse, so the function under test cannot be found",
            "pass --entry NAME (the function the tests call)",
        )),
        ([], _) if program.functions.is_empty() => called_method(input, tests),
        (several, _) => {
            let mut e = FileInputError::new(
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
            );
            if !several.is_empty() {
                e.several = Some(Box::new(super::SeveralEntries {
                    functions: several.iter().map(|s| s.to_string()).collect(),
                    tests: tests.to_vec(),
                    imports: Vec::new(),
                }));
            }
            Err(e)
        }
    }
}

/// A program of classes alone: the one method (or property) of it the tests use by name
/// (`obj.name`), else an error that names its methods and how to choose one. Tests that use
/// several carry them, so a caller that runs the tests can take the one the failing tests use
/// ([`super::entry_of_failing`]).
fn called_method(input: &FileInput, tests: &[String]) -> Result<Option<String>, FileInputError> {
    let path = &input.program_path;
    let methods = program_methods(input);
    let used = methods_used(&methods, tests);
    let file = path.display();
    let choose = format!(
        "name the one under test with {file}::Cls.method, or leave the program out \
         (ldb fix --tests NODE) to find it from what the failing tests run"
    );
    match used.as_slice() {
        [one] => Ok(Some(one.clone())),
        [] if methods.is_empty() => Err(FileInputError::new(
            path,
            "defines no function for the tests to call",
            "for a program that reads stdin and prints, use --io-test INPUT EXPECTED_OUTPUT",
        )),
        [] => Err(FileInputError::new(
            path,
            "defines no top-level function, and the tests use none of its methods by name",
            format!("{}; {choose}", methods_hint(&input.program)),
        )),
        several => {
            let mut e = FileInputError::new(
                path,
                format!(
                    "the tests use several of its methods ({})",
                    several.join(", ")
                ),
                choose,
            );
            e.several = Some(Box::new(super::SeveralEntries {
                functions: several.to_vec(),
                tests: tests.to_vec(),
                imports: Vec::new(),
            }));
            Err(e)
        }
    }
}

/// The program's methods, as paths (`Cls.name`, `Outer.Inner.name`).
fn program_methods(input: &FileInput) -> Vec<String> {
    crate::python::defs::all_paths(&input.program)
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| p.contains('.'))
        .collect()
}

/// The methods (`Cls.name` paths of `methods`) whose name `tests` read as an attribute, in the
/// order the tests first use them; dunders (`__init__`, run by `Cls()`) are not named by a test.
pub(super) fn methods_used(methods: &[String], tests: &[String]) -> Vec<String> {
    let mut used: Vec<String> = Vec::new();
    for name in tests.iter().flat_map(|t| crate::task::attribute_names(t)) {
        if name.starts_with("__") && name.ends_with("__") {
            continue;
        }
        for m in methods {
            if m.rsplit('.').next() == Some(name.as_str()) && !used.contains(m) {
                used.push(m.clone());
            }
        }
    }
    used
}

/// The program's methods, for a hint.
fn methods_hint(text: &str) -> String {
    let methods: Vec<String> = crate::python::defs::all_paths(text)
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| p.contains('.'))
        .take(12)
        .collect();
    if methods.is_empty() {
        "the program defines no methods; name a function with FILE::NAME".to_string()
    } else {
        format!("its methods include: {}", methods.join(", "))
    }
}

pub(super) fn defined_hint(program: &ProgramFacts) -> String {
    if program.functions.is_empty() {
        "the program defines no top-level function; check the file".to_string()
    } else {
        format!("its top-level functions: {}", program.functions.join(", "))
    }
}

/// pytest's rule for test functions and methods.
pub(super) fn is_test_name(name: &str) -> bool {
    name.starts_with("test")
}
