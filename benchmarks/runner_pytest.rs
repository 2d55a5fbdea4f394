//! The pytest path's cost per candidate, next to the plain path's: one program, a test file of
//! three tests, each candidate's tests run as the fix loop runs them (`Runner::run_all`). The
//! plain path runs a warm child per test; the pytest path one pytest session per candidate, in
//! a warm child of a worker that imported pytest before forking.

use std::path::Path;
use std::time::{Duration, Instant};

use ldb::runner::pytest::PytestProject;
use ldb::runner::{Runner, TestInput};
use ldb::sandbox::{Limits, ProjectMount, Sandbox};

const MODULE: &str = "def inc(x):\n    return x + 1\n";
const TESTS: [&str; 3] = [
    "assert inc(1) == 2",
    "assert inc(-1) == 0",
    "assert inc(41) == 42",
];

/// A project of one module and a test file of three tests; (plain tests, pytest nodes).
fn project(root: &Path) -> Result<(Vec<TestInput>, Vec<TestInput>), String> {
    let write = |name: &str, text: String| {
        std::fs::write(root.join(name), text).map_err(|e| format!("{name}: {e}"))
    };
    write("prog.py", MODULE.to_string())?;
    let mut file = String::from("from prog import inc\n");
    for (i, t) in TESTS.iter().enumerate() {
        file.push_str(&format!("\n\ndef test_{i}():\n    {t}\n"));
    }
    write("test_prog.py", file)?;
    let plain = TESTS
        .iter()
        .map(|t| TestInput::Code {
            source: t.to_string(),
        })
        .collect();
    let nodes = (0..TESTS.len())
        .map(|i| TestInput::Pytest {
            node_id: format!("test_prog.py::test_{i}"),
            source: String::new(),
        })
        .collect();
    Ok((plain, nodes))
}

/// Median and p90 of `runs` candidates' test runs, after one unmeasured run.
fn time(runner: &Runner, tests: &[TestInput], runs: usize) -> Result<(f64, f64), String> {
    let mut times = Vec::with_capacity(runs);
    for i in 0..=runs {
        // A new candidate each time: the program text differs, as candidates do.
        let program = format!("{MODULE}\n# candidate {i}\n");
        let started = Instant::now();
        for outcome in runner.run_all(&program, tests) {
            let outcome = outcome.map_err(|e| e.to_string())?;
            if !outcome.passed() {
                return Err(format!("{}: {}", outcome.test.describe(), outcome.summary));
            }
        }
        if i > 0 {
            times.push(started.elapsed().as_secs_f64() * 1e3);
        }
    }
    Ok((
        super::percentile(&mut times, 0.5),
        super::percentile(&mut times, 0.9),
    ))
}

/// Prints the table; `Err` says why it could not be measured.
pub fn report(exe: &str, runs: usize) -> Result<(), String> {
    let dir = tempfile_dir()?;
    let root = dir.join("project");
    std::fs::create_dir_all(&root).map_err(|e| e.to_string())?;
    let (plain, nodes) = project(&root)?;
    let limits = Limits::default().with_wall(Duration::from_secs(30));
    let warm = Runner::new(Sandbox::new(exe, limits.clone())).with_module("prog");
    let serial = warm.clone().with_jobs(1);
    let pytest = Runner::new(Sandbox::new(exe, limits).with_pytest_preloaded()).with_project(
        PytestProject {
            mount: ProjectMount {
                root: root.clone(),
                module_file: root.join("prog.py"),
                cwd: root.clone(),
            },
            rootdir: root.clone(),
        },
    );
    println!("| one candidate's 3 tests, warm workers ({runs} candidates) | median | p90 |");
    println!("|---|---|---|");
    let (plain_med, plain_p90) = time(&warm, &plain, runs)?;
    println!(
        "| plain path: a child per test, {} at once (as `ldb fix` runs them) | {plain_med:.1} ms | {plain_p90:.1} ms |",
        warm.jobs()
    );
    let (serial_med, serial_p90) = time(&serial, &plain, runs)?;
    println!(
        "| plain path: a child per test, one after another | {serial_med:.1} ms | {serial_p90:.1} ms |"
    );
    let (py_med, py_p90) = time(&pytest, &nodes, runs)?;
    println!("| pytest path: one pytest session (one child) per candidate | {py_med:.1} ms | {py_p90:.1} ms |");
    let per_test = serial_med / TESTS.len() as f64;
    println!();
    println!(
        "pytest per candidate: {:.1}x the plain path's candidate, {:.1}x its per-test time ({per_test:.1} ms)",
        py_med / plain_med,
        py_med / per_test
    );
    println!();
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// A fresh directory under the system temp dir.
fn tempfile_dir() -> Result<std::path::PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("ldb-bench-pytest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}
