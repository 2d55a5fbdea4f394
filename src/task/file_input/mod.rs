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
//! (`load/file.rs`) asks the sandbox which of the test file's other imports it cannot
//! resolve.
//!
//! A program in a project whose tests pytest runs ([`build_pytest`]) gets its tests as pytest
//! nodes, collected by pytest itself in the sandbox (`load/pytest.rs`); `project` finds the
//! project and the Python environment around the files and renders a node as a prompt shows
//! it.
//!
//! Parts: `collect` (the test file, read as pytest would), `program` (what the program file
//! offers: functions, docstrings, the entry), `project` (a program in a project).

mod collect;
mod program;
pub mod project;
pub mod reach;

use std::path::{Path, PathBuf};

use super::{IoTest, ProgramScope, PytestNode, Task};
use crate::python::splice;

use collect::collect_tests;
use program::{choose_entry, ProgramFacts};

/// Bad input for a file task: which file (and line), what is wrong, and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {message}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct FileInputError {
    pub file: PathBuf,
    pub line: Option<u32>,
    pub message: String,
    pub hint: String,
    /// The test file uses what only pytest runs (fixtures, parametrize, relative imports,
    /// async tests): pytest would run it as it is.
    pub needs_pytest: bool,
    /// The tests call several of the program's functions and none was named: a caller that
    /// can run the tests may name the one the failing tests call ([`entry_of_failing`]).
    pub several: Option<Box<SeveralEntries>>,
}

/// The functions the tests call, and the tests, when they call several.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeveralEntries {
    pub functions: Vec<String>,
    pub tests: Vec<String>,
    /// The test file's imports besides the program (as [`FileTask::imports`]): a missing one
    /// fails every test, which then names no function under test.
    pub imports: Vec<String>,
}

/// The one function of `several` that the failing tests call (`failed[i]` for
/// `several.tests[i]`): the function under test when nothing else says. `Err` with the
/// functions the failing tests call when that is not exactly one (none when none failed).
pub fn entry_of_failing(several: &SeveralEntries, failed: &[bool]) -> Result<String, Vec<String>> {
    let mut called: Vec<String> = Vec::new();
    // Methods (`Cls.name`) are used by attribute, functions by a plain call.
    let (methods, functions): (Vec<String>, Vec<String>) = several
        .functions
        .iter()
        .cloned()
        .partition(|f| f.contains('.'));
    for (test, _) in several.tests.iter().zip(failed).filter(|(_, &f)| f) {
        let mut names = crate::task::called_names(test);
        names.retain(|n| functions.contains(n));
        names.extend(program::methods_used(&methods, std::slice::from_ref(test)));
        for name in names {
            if !called.contains(&name) {
                called.push(name);
            }
        }
    }
    match called.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(called),
    }
}

/// The name a program is importable under (its file's stem), when that is a Python identifier.
pub fn module_name(path: &Path) -> Option<String> {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| crate::task::is_python_identifier(s))
}

impl FileInputError {
    fn new(file: &Path, message: impl Into<String>, hint: impl Into<String>) -> Self {
        FileInputError {
            file: file.to_path_buf(),
            line: None,
            message: message.into(),
            hint: hint.into(),
            needs_pytest: false,
            several: None,
        }
    }

    fn at(mut self, line: u32) -> Self {
        self.line = Some(line);
        self
    }

    fn for_pytest(mut self) -> Self {
        self.needs_pytest = true;
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
    let module = module_name(path);
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

    let task = finish(input, &program, visible, Vec::new(), &mut notes).map_err(|mut e| {
        if let Some(several) = e.several.as_mut() {
            several.imports = imports.clone();
        }
        e
    })?;
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

/// The task for a program whose tests are pytest nodes of its project (found by running
/// pytest's collection, which the caller did): the nodes are the tests, their sources what a
/// prompt shows. The entry is `input.entry`, else the one program function the nodes' sources
/// call, else the program's only function.
pub fn build_pytest(input: &FileInput, nodes: Vec<PytestNode>) -> Result<FileTask, FileInputError> {
    let path = &input.program_path;
    let program = ProgramFacts::read(&input.program);
    let mut notes = Vec::new();
    if nodes.is_empty() {
        return Err(FileInputError::new(
            path,
            "pytest collected no tests to run the program against",
            "check --tests (a test file, a directory, or a node id) and -k EXPR",
        ));
    }
    let sources: Vec<String> = nodes.iter().map(|n| n.source.clone()).collect();
    let task = finish(input, &program, sources, nodes, &mut notes)?;
    // Node sources show parameter values as pytest rendered them, not always Python.
    if let Err(problems) = crate::task::validate::validate(&task, false) {
        if let Some(p) = problems.into_iter().next() {
            return Err(FileInputError::new(path, p.to_string(), "check the flags"));
        }
    }
    Ok(FileTask {
        task,
        module: None,
        imports: Vec::new(),
        notes,
    })
}

/// The task from its tests: the entry, the task text, the scope.
fn finish(
    input: &FileInput,
    program: &ProgramFacts,
    visible: Vec<String>,
    pytest_nodes: Vec<PytestNode>,
    notes: &mut Vec<String>,
) -> Result<Task, FileInputError> {
    let path = &input.program_path;
    let entry = choose_entry(input, program, &visible)?;
    let mut untold = false;
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
                    untold = true;
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
    // A function of the module is what gets repaired; the rest of the file stays.
    let scope = match &entry {
        Some(e) if splice::defines(&input.program, e) => ProgramScope::Function,
        _ => ProgramScope::Whole,
    };
    Ok(Task {
        task_id,
        prompt,
        entry_point: entry.unwrap_or_default(),
        visible_tests: visible,
        hidden_tests: None,
        seed: Some(input.program.clone()),
        source: None,
        io_tests: input.io_tests.clone(),
        scope,
        peers: Vec::new(),
        pytest_nodes,
        untold,
        in_project: false,
    })
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
    fn a_class_the_tests_use_is_under_test_beside_a_helper_function() {
        let mut i = FileInput {
            program_path: PathBuf::from("prog.py"),
            program: "def helper(xs):\n    return xs[:]\n\nclass Stack:\n    def __init__(self):\n        \
                      self.items = []\n\n    def push(self, x):\n        self.items.append(x)\n\n    \
                      @property\n    def top(self):\n        return self.items[0]\n"
                .into(),
            tests: vec!["s = Stack()\ns.items = [1, 2]\nassert s.top == 2".into()],
            ..Default::default()
        };
        assert_eq!(build(&i).expect("task").task.entry_point, "Stack.top");
        // Two methods used: the failing tests choose.
        i.tests = vec![
            "s = Stack()\ns.push(1)\nassert s.items == [1]".into(),
            "s = Stack()\ns.items = [1, 2]\nassert s.top == 2".into(),
        ];
        let several = build(&i).unwrap_err().several.expect("several entries");
        assert_eq!(several.functions, ["Stack.push", "Stack.top"]);
        assert_eq!(
            entry_of_failing(&several, &[false, true]),
            Ok("Stack.top".to_string())
        );
        // Tests that call the helper keep it under test.
        i.tests = vec!["assert helper([1]) == [1]".into()];
        assert_eq!(build(&i).expect("task").task.entry_point, "helper");
    }

    #[test]
    fn with_several_functions_called_the_failing_tests_name_the_entry() {
        let i = FileInput {
            program_path: PathBuf::from("prog.py"),
            program: "def mean(xs):\n    return 0\n\ndef median(xs):\n    return 0\n".into(),
            tests: vec![
                "assert mean([1, 3]) == 2".into(),
                "assert median([1, 3]) == 2".into(),
                "assert median([2]) == mean([2])".into(),
            ],
            ..Default::default()
        };
        let several = build(&i).unwrap_err().several.expect("several entries");
        assert_eq!(several.functions, ["mean", "median"]);
        assert_eq!(several.tests.len(), 3);
        assert_eq!(
            entry_of_failing(&several, &[false, true, false]),
            Ok("median".to_string())
        );
        // A failing test that calls both leaves it open; nothing failing names none.
        assert_eq!(
            entry_of_failing(&several, &[false, true, true]),
            Err(vec!["median".to_string(), "mean".to_string()])
        );
        assert_eq!(entry_of_failing(&several, &[false; 3]), Err(Vec::new()));
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
