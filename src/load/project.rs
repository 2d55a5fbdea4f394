//! No function named, only failing tests of a project (`ldb locate --tests NODE`, `ldb fix
//! --tests NODE`): the failing tests and the other tests of their files run once, tracing the
//! project's own files, and the project's functions are ranked from what they ran
//! ([`crate::locate::project`]).

use std::path::{Path, PathBuf};

use super::pytest::{self, KeepPassing, Reason, TestsArgs};
use super::LoadError;
use super::ProgramTests;
use crate::locate::project::{rank, ProjectRun, RankedFunction};
use crate::run::sandbox::protocol::ProjectTrace;
use crate::run::{Runner, TestInput};

/// The ranking, and what it came from.
pub struct Located {
    pub ranked: Vec<RankedFunction>,
    pub root: PathBuf,
    /// The given tests, and how many of them failed.
    pub given: usize,
    pub failing: usize,
    /// The other tests of their files that ran beside them, and how many passed.
    pub others: usize,
    pub others_passing: usize,
}

/// Run the tests of `tests` with the project traced and rank its functions.
pub fn locate(tests: &ProgramTests, runner: Runner, quiet: bool) -> Result<Located, LoadError> {
    let first = tests.tests.first().ok_or_else(|| {
        LoadError::bad_input(
            "no tests given: ldb finds the function from what failing tests run",
            "pass --tests tests/test_x.py::test_y (a failing test of the project)",
        )
    })?;
    // The sandbox shows a module file in the program's place; with no program named, a test
    // file stands there as it is.
    let (path, _) = crate::task::file_input::project::split_node(first);
    let stand_in = stand_in_file(&path).ok_or_else(|| {
        LoadError::bad_input(
            format!("{}: no test file there", path.display()),
            "pass --tests with a test file or a node id (tests/test_x.py::test_y)",
        )
    })?;
    let text = super::read_source(&stand_in)?;
    let args = TestsArgs {
        tests: &tests.tests,
        keyword: tests.keyword.as_deref(),
        venv: tests.venv.as_deref(),
        entry: None,
        task_text: None,
        keep_passing: KeepPassing::None,
        shell: &tests.shell,
    };
    let python_path_given = !runner.sandbox().python_path().is_empty();
    let st = pytest::setup(&stand_in, &args, runner, python_path_given, quiet)?;
    let reason = Reason("a node id".into());
    let (report, _, runner) = pytest::collect_checked(&st, &text, &stand_in, &reason)?;
    if report.items.is_empty() {
        return Err(LoadError::bad_input(
            format!("{}: pytest collected no tests", st.label.display()),
            "check --tests and -k",
        ));
    }
    let given_ids: Vec<String> = report.items.iter().map(|i| i.nodeid.clone()).collect();
    // The other tests of the given tests' files: what passes there tells what is right.
    let files: Vec<String> = st
        .given
        .iter()
        .filter(|(_, node)| node.is_some())
        .map(|(p, _)| p.display().to_string())
        .fold(Vec::new(), |mut v, f| {
            if !v.contains(&f) {
                v.push(f);
            }
            v
        });
    let mut others: Vec<String> = Vec::new();
    if !files.is_empty() {
        if let Ok(pool) = runner.collect(&text, &files) {
            if let Some(r) = pool.report.filter(|r| r.collect_errors.is_empty()) {
                others = r
                    .items
                    .iter()
                    .map(|i| i.nodeid.clone())
                    .filter(|id| !given_ids.contains(id))
                    .collect();
            }
        }
    }
    let node = |id: &String| TestInput::Pytest {
        node_id: id.clone(),
        source: String::new(),
        guard: false,
    };
    let all: Vec<TestInput> = given_ids.iter().chain(&others).map(node).collect();
    let skip = test_places(&st.root, &st.given);
    // The failing tests run last: what a process does once (a lazy import, a first
    // configuration read, a cache filled) is then done by the tests before them, not charged
    // to the failing tests' spectra.
    let runs = runner.trace_project(
        &text,
        &all,
        &others,
        ProjectTrace {
            root: st.root.clone(),
            skip,
        },
    )?;
    let mut project_runs = Vec::new();
    let (mut failing, mut others_passing) = (0, 0);
    for (i, (outcome, node)) in runs.iter().enumerate() {
        let passed = outcome.passed();
        if i < given_ids.len() && !passed {
            failing += 1;
        }
        if i >= given_ids.len() && passed {
            others_passing += 1;
        }
        let Some(node) = node else { continue };
        let mut run = ProjectRun {
            passed,
            ..ProjectRun::default()
        };
        for (file, lines) in node.lines.iter().flatten() {
            run.lines
                .insert(PathBuf::from(file), lines.iter().copied().collect());
        }
        run.entries = node
            .entries
            .iter()
            .map(|(f, l)| (PathBuf::from(f), *l))
            .collect();
        if let Some(e) = &outcome.exception {
            run.frames = e
                .project_frames
                .iter()
                .map(|(f, l, _)| (PathBuf::from(f), *l))
                .collect();
        }
        project_runs.push(run);
    }
    let ranked = rank(&project_runs, |p| std::fs::read_to_string(p).ok());
    Ok(Located {
        ranked,
        root: st.root.clone(),
        given: given_ids.len(),
        failing,
        others: others.len(),
        others_passing,
    })
}

/// A test file to stand in the program's place: the file itself, or in a directory its first
/// `test*.py`.
fn stand_in_file(path: &Path) -> Option<PathBuf> {
    if path.is_file() {
        return Some(path.to_path_buf());
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "py")
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("test"))
        })
        .collect();
    files.sort();
    files.into_iter().next()
}

/// What localisation leaves out as tests, not code: the given test files, and the test
/// directories they sit in (a directory named `test`, `tests` or `testing`).
fn test_places(root: &Path, given: &[(PathBuf, Option<String>)]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for (path, _) in given {
        if !out.contains(path) {
            out.push(path.clone());
        }
        for dir in path
            .ancestors()
            .skip(1)
            .take_while(|d| d.starts_with(root) && *d != root)
        {
            let named = dir.file_name().is_some_and(|n| {
                matches!(n.to_string_lossy().as_ref(), "test" | "tests" | "testing")
            });
            if named && !out.iter().any(|o| o == dir) {
                out.push(dir.to_path_buf());
            }
        }
    }
    out
}

/// `file::function`, with the file relative to `cwd` when it is under it.
pub fn target_of(f: &RankedFunction, cwd: &Path) -> PathBuf {
    let file = f.file.strip_prefix(cwd).unwrap_or(&f.file);
    PathBuf::from(format!("{}::{}", file.display(), f.function))
}
