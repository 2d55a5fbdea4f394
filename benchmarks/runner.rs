//! Sandbox and tracer benchmark: `cargo bench --bench runner` prints markdown figures.
//!
//! - per-test overhead: wall time of one sandboxed run of a trivial test (isolation, interpreter,
//!   harness), median and p90 over N runs, in a fresh worker process and in a child of a warm
//!   worker;
//! - per-iteration work: what one LDB iteration does besides asking the model (run the visible
//!   tests, trace the first failing one, render the trace) on LDB's GPT-3.5 HumanEval seeds that
//!   fail a visible test, fresh and warm workers, read from `../shared/datasets`;
//! - tracing slowdown on a loop-heavy program: time measured inside the program, untraced vs the
//!   native hook vs the Python-level hook, at block and line level;
//! - the pytest path per candidate (`runner_pytest.rs`): a test file of three tests run as one
//!   pytest session, against the plain path's child per test.
//!
//! Options (after `--`): `--runs N` (default 30), `--loop N` iterations (default 300000),
//! `--data-dir DIR` (default `../shared/datasets` beside the repository), `--only pytest` (that
//! table alone).

use std::time::Duration;

use ldb::python::cfg::ProgramCfg;
use ldb::python::source::SourceFile;
use ldb::run::sandbox::{Limits, Sandbox};
use ldb::run::{Runner, TestInput};
use ldb::trace::units::UnitMap;
use ldb::trace::{Level, TraceRequest, TracerKind};

#[path = "runner_pytest.rs"]
mod runner_pytest;

const LOOP_PROGRAM: &str = "import time

def work(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            total += i
        else:
            total -= 1
    return total

def bench(n):
    start = time.perf_counter()
    work(n)
    return time.perf_counter() - start
";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let opt = |name: &str, default: usize| -> usize {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let runs = opt("--runs", 30).max(3);
    let iterations = opt("--loop", 300_000);
    let limits = Limits::default().with_wall(Duration::from_secs(120));

    println!("## Sandbox and tracer ({})", machine());
    println!();
    println!("Command: `cargo bench --bench runner -- --runs {runs} --loop {iterations}`");
    println!();
    let only_pytest = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .is_some_and(|v| v == "pytest");
    if let Err(e) = runner_pytest::report(env!("CARGO_BIN_EXE_ldb"), runs) {
        return fail(&format!("the pytest path: {e}"));
    }
    if only_pytest {
        return;
    }

    // Per-test overhead.
    let trivial = TestInput::Code {
        source: "assert f() == 1".into(),
    };
    // A hidden test as benchmarks write them, plain and with strict scoring (restores and
    // checked comparisons; see SECURITY.md).
    let hidden = TestInput::Code {
        source: "def check(candidate):\n    assert candidate() == 1\n    assert candidate() in [1, 2]\ncheck(f)\n"
            .into(),
    };
    let warm = Runner::new(Sandbox::new(env!("CARGO_BIN_EXE_ldb"), limits.clone()));
    let runner = Runner::new(Sandbox::new(env!("CARGO_BIN_EXE_ldb"), limits.clone()).cold());
    println!("| per-test run overhead ({runs} runs) | fresh worker: median | p90 | warm worker: median | p90 |");
    println!("|---|---|---|---|---|");
    let cases: [(&str, &TestInput, bool); 3] = [
        ("one sandboxed test", &trivial, false),
        ("a check(candidate) hidden test", &hidden, false),
        ("the same hidden test, strict scoring", &hidden, true),
    ];
    for (label, test, strict) in cases {
        let mut row = format!("| wall time of {label} |");
        for base in [&runner, &warm] {
            let r = if strict {
                base.clone().strict()
            } else {
                base.clone()
            };
            let mut times = Vec::new();
            // One unmeasured run starts the warm worker.
            for i in 0..=runs {
                let started = std::time::Instant::now();
                match r.run("def f():\n    return 1\n", test, None) {
                    Ok(out) if out.passed() => {
                        if i > 0 {
                            times.push(started.elapsed().as_secs_f64() * 1e3)
                        }
                    }
                    Ok(out) => return fail(&format!("{label} did not pass: {}", out.summary)),
                    Err(e) => return fail(&e.to_string()),
                }
            }
            row += &format!(
                " {:.1} ms | {:.1} ms |",
                percentile(&mut times, 0.5),
                percentile(&mut times, 0.9)
            );
        }
        println!("{row}");
    }
    println!();

    // What one child for all of a program's tests would save: the three visible tests of a
    // task as three warm runs, against one warm run holding all three asserts.
    let single = TestInput::Code {
        source: "assert f() == 1".into(),
    };
    let all_three = TestInput::Code {
        source: "assert f() == 1\nassert f() in [1, 2]\nassert f() != 2\n".into(),
    };
    let mut apart = Vec::new();
    let mut together = Vec::new();
    for _ in 0..runs {
        let started = std::time::Instant::now();
        for _ in 0..3 {
            if let Err(e) = warm.run("def f():\n    return 1\n", &single, None) {
                return fail(&e.to_string());
            }
        }
        apart.push(started.elapsed().as_secs_f64() * 1e3);
        let started = std::time::Instant::now();
        if let Err(e) = warm.run("def f():\n    return 1\n", &all_three, None) {
            return fail(&e.to_string());
        }
        together.push(started.elapsed().as_secs_f64() * 1e3);
    }
    println!("| three tests of one program, warm worker ({runs} runs) | median | p90 |");
    println!("|---|---|---|");
    println!(
        "| a child per test, one after another | {:.1} ms | {:.1} ms |",
        percentile(&mut apart, 0.5),
        percentile(&mut apart, 0.9)
    );
    println!(
        "| one child for all three | {:.1} ms | {:.1} ms |",
        percentile(&mut together, 0.5),
        percentile(&mut together, 0.9)
    );
    println!();

    let data_dir = args
        .iter()
        .position(|a| a == "--data-dir")
        .and_then(|i| args.get(i + 1))
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets")
        });
    match iteration_cases(&data_dir) {
        Ok(cases) => {
            println!(
                "| non-model work of one LDB iteration ({} failing GPT-3.5 HumanEval seeds) | median | p90 |",
                cases.len()
            );
            println!("|---|---|---|");
            for (label, r) in [("fresh worker", &runner), ("warm worker", &warm)] {
                let mut times = Vec::new();
                for (program, tests) in &cases {
                    match iteration(r, program, tests) {
                        Ok(ms) => times.push(ms),
                        Err(e) => return fail(&e),
                    }
                }
                println!(
                    "| visible tests + trace + render, {label} | {:.1} ms | {:.1} ms |",
                    percentile(&mut times, 0.5),
                    percentile(&mut times, 0.9)
                );
            }
            println!();
        }
        Err(e) => println!("(per-iteration figures skipped: {e})\n"),
    }

    // Tracing slowdown, measured inside the program.
    let src = SourceFile::new(LOOP_PROGRAM);
    let cfg = match ProgramCfg::build(&src) {
        Ok(c) => c,
        Err(e) => return fail(&e.to_string()),
    };
    let call = TestInput::Call {
        expr: format!("bench({iterations})"),
    };
    let repeats = (runs / 6).max(3);
    let measure = |trace: Option<TraceRequest>| -> Result<f64, String> {
        let mut secs = Vec::new();
        for _ in 0..repeats {
            let out = runner
                .run(LOOP_PROGRAM, &call, trace.clone())
                .map_err(|e| e.to_string())?;
            let value = out
                .actual
                .as_deref()
                .and_then(|v| v.parse::<f64>().ok())
                .ok_or_else(|| format!("no timing: {}", out.summary))?;
            secs.push(value);
        }
        Ok(percentile(&mut secs, 0.5))
    };
    let request = |level: Level, tracer: TracerKind| {
        let units = UnitMap::build(&cfg, level, false, src.line_count());
        TraceRequest {
            scopes: units.scopes().to_vec(),
            keep_first: 5,
            keep_last: 5,
            value_chars: 120,
            tracer,
            deadline_ms: 0,
        }
    };
    let base = match measure(None) {
        Ok(b) => b,
        Err(e) => return fail(&e),
    };
    println!("| loop of {iterations} iterations (median of {repeats}) | time | slowdown |");
    println!("|---|---|---|");
    println!("| untraced | {:.1} ms | 1.0x |", base * 1e3);
    for (label, level, tracer) in [
        ("native hook, block level", Level::Block, TracerKind::Native),
        (
            "Python-level hook, block level",
            Level::Block,
            TracerKind::Python,
        ),
        ("native hook, line level", Level::Line, TracerKind::Native),
        (
            "Python-level hook, line level",
            Level::Line,
            TracerKind::Python,
        ),
    ] {
        match measure(Some(request(level, tracer))) {
            Ok(t) => println!("| {label} | {:.1} ms | {:.1}x |", t * 1e3, t / base),
            Err(e) => return fail(&e),
        }
    }
}

/// LDB's GPT-3.5 seeds of HumanEval that fail a visible test, with their visible tests.
fn iteration_cases(data_dir: &std::path::Path) -> Result<Vec<(String, Vec<TestInput>)>, String> {
    use ldb::eval::fix::datasets::{load_dataset, SeedSpec};
    let dataset = load_dataset("humaneval", Some(data_dir)).map_err(|e| e.to_string())?;
    let seeds = SeedSpec::parse(Some("ldb:gpt-3.5-turbo-0613"))
        .resolve(&dataset)
        .map_err(|e| e.to_string())?
        .ok_or("no seed file")?;
    let seeds = ldb::task::load_seeds(&seeds).map_err(|e| e.to_string())?;
    let probe = Runner::new(Sandbox::new(
        env!("CARGO_BIN_EXE_ldb"),
        Limits::default().with_wall(Duration::from_secs(10)),
    ));
    let mut cases = Vec::new();
    for task in &dataset.tasks {
        let (Some(program), tests) = (seeds.get(&task.task_id), ldb::run::visible_tests(task))
        else {
            continue;
        };
        let outcomes = probe
            .run_all(program, &tests)
            .into_iter()
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        if outcomes.iter().any(|o| !o.passed()) {
            cases.push((program.clone(), tests));
        }
    }
    Ok(cases)
}

/// One iteration's work besides the model, as the `ldb` strategy does it, in milliseconds.
fn iteration(runner: &Runner, program: &str, tests: &[TestInput]) -> Result<f64, String> {
    let started = std::time::Instant::now();
    let outcomes = runner
        .run_all(program, tests)
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    let Some(failing) = outcomes.iter().find(|o| !o.passed()) else {
        return Err("a failing seed passed its visible tests".into());
    };
    let src = SourceFile::new(program.to_string());
    if let Ok(cfg) = ProgramCfg::build(&src) {
        let units = UnitMap::build(&cfg, Level::Block, false, src.line_count());
        let sample = ldb::trace::sample::SampleConfig::for_level(Level::Block);
        let request = TraceRequest {
            scopes: units.scopes().to_vec(),
            keep_first: sample.head,
            keep_last: sample.tail,
            value_chars: 120,
            tracer: TracerKind::Native,
            deadline_ms: 8_000,
        };
        let traced = runner
            .run(program, &failing.test, Some(request))
            .map_err(|e| e.to_string())?;
        if let Some(raw) = &traced.trace {
            let text = ldb::trace::render::TraceReport::build(raw, &units, &src, &sample).to_text();
            std::hint::black_box(text);
        }
    }
    Ok(started.elapsed().as_secs_f64() * 1e3)
}

fn fail(message: &str) {
    eprintln!("benchmark failed: {message}");
    std::process::exit(1);
}

fn percentile(values: &mut [f64], p: f64) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    let idx = ((values.len() as f64 - 1.0) * p).round() as usize;
    values.get(idx).copied().unwrap_or(f64::NAN)
}

/// CPU model, core count and date, for the results file.
fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let date = std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    format!("{cpu}, {cores} cores, {date}")
}
