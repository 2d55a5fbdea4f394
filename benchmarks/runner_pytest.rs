//! The pytest path's cost per candidate, next to the plain path's: one program, a test file of
//! three tests, each candidate's tests run as the fix loop runs them (`Runner::run_all`). The
//! plain path runs a warm child per test; the pytest path one pytest session per candidate, in
//! a warm child of a worker that imported pytest before forking.

use std::path::Path;
use std::time::{Duration, Instant};

use ldb::run::pytest::PytestProject;
use ldb::run::sandbox::{Limits, ProjectMount, RunSpec, Sandbox, TestSpec};
use ldb::run::{Runner, TestInput};

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
            guard: false,
        })
        .collect();
    Ok((plain, nodes))
}

/// One candidate's tests, timed in milliseconds; the program text differs per candidate, as
/// candidates do.
fn once(runner: &Runner, tests: &[TestInput], i: usize) -> Result<f64, String> {
    let program = format!("{MODULE}\n# candidate {i}\n");
    let started = Instant::now();
    for outcome in runner.run_all(&program, tests) {
        let outcome = outcome.map_err(|e| e.to_string())?;
        if !outcome.passed() {
            return Err(format!("{}: {}", outcome.test.describe(), outcome.summary));
        }
    }
    Ok(started.elapsed().as_secs_f64() * 1e3)
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
    let mount = ProjectMount {
        root: root.clone(),
        module_file: root.join("prog.py"),
        cwd: root.clone(),
    };
    let sandbox = Sandbox::new(exe, limits).with_pytest_preloaded();
    let pytest = Runner::new(sandbox.clone()).with_project(PytestProject {
        mount: mount.clone(),
        rootdir: root.clone(),
    });
    // The three ways take turns, candidate by candidate, so that they share the machine's load.
    let ways: [(&Runner, &[TestInput]); 3] =
        [(&warm, &plain), (&serial, &plain), (&pytest, &nodes)];
    let mut times: [Vec<f64>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    let (mut inside, mut cpu) = (Vec::new(), Vec::new());
    for i in 0..=runs {
        for (way, (runner, tests)) in ways.iter().enumerate() {
            let ms = once(runner, tests, i)?;
            // The first round starts the warm workers.
            if i > 0 {
                times[way].push(ms);
            }
        }
        let (wall, used) = session_time(&sandbox, &mount, &nodes, i)?;
        if i > 0 {
            inside.push(wall);
            cpu.push(used);
        }
    }
    let [mut parallel, mut one_by_one, mut session] = times;
    let median = |v: &mut Vec<f64>| super::percentile(v, 0.5);
    let p90 = |v: &mut Vec<f64>| super::percentile(v, 0.9);
    let (plain_med, serial_med, py_med) = (
        median(&mut parallel),
        median(&mut one_by_one),
        median(&mut session),
    );
    println!("| one candidate's 3 tests, warm workers ({runs} candidates, taking turns) | median | p90 |");
    println!("|---|---|---|");
    println!(
        "| plain path: a child per test, {} at once (as `ldb fix` runs them) | {plain_med:.1} ms | {:.1} ms |",
        warm.jobs(),
        p90(&mut parallel)
    );
    println!(
        "| plain path: a child per test, one after another | {serial_med:.1} ms | {:.1} ms |",
        p90(&mut one_by_one)
    );
    println!(
        "| pytest path: one pytest session (one child) per candidate | {py_med:.1} ms | {:.1} ms |",
        p90(&mut session)
    );
    println!(
        "| of which `pytest.main` inside the run (wall; CPU {:.1} ms) | {:.1} ms | {:.1} ms |",
        median(&mut cpu),
        median(&mut inside),
        p90(&mut inside)
    );
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

/// How long `pytest.main` took inside one run of the candidate `i`, wall and CPU, as the run
/// reports it.
fn session_time(
    sandbox: &Sandbox,
    mount: &ProjectMount,
    nodes: &[TestInput],
    i: usize,
) -> Result<(f64, f64), String> {
    let args: Vec<String> = nodes
        .iter()
        .map(|n| format!("{}/{}", mount.root.display(), n.describe()))
        .collect();
    let spec = RunSpec {
        program: format!("{MODULE}\n# candidate {i}\n"),
        test: TestSpec::Pytest {
            args,
            collect_only: false,
            node_timeout_ms: 10_000,
            first: Vec::new(),
            keep_going: false,
            cover: None,
            batch: None,
            trace_project: None,
        },
        stdin: None,
        as_main: false,
        trace: None,
        value_chars: 100,
        strict: false,
        prelude: None,
        module: None,
        project: Some(mount.clone()),
    };
    let out = sandbox.run(&spec).map_err(|e| e.to_string())?;
    let report = out
        .response
        .and_then(|r| r.pytest)
        .ok_or("no pytest report")?;
    match (report.session_ms, report.session_cpu_ms) {
        (Some(ms), Some(c)) => Ok((ms, c)),
        _ => Err("no session time in the run's report".into()),
    }
}

/// A fresh directory under the system temp dir.
fn tempfile_dir() -> Result<std::path::PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("ldb-bench-pytest-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}
