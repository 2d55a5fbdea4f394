//! Sandbox and tracer benchmark: `cargo bench --bench runner` prints markdown figures.
//!
//! - per-test overhead: wall time of one sandboxed run of a trivial test (fresh worker process,
//!   isolation, interpreter start, harness), median and p90 over N runs;
//! - tracing slowdown on a loop-heavy program: time measured inside the program, untraced vs the
//!   native hook vs the Python-level hook, at block and line level.
//!
//! Options (after `--`): `--runs N` (default 30), `--loop N` iterations (default 300000).

use std::time::Duration;

use ldb::python::cfg::ProgramCfg;
use ldb::python::source::SourceFile;
use ldb::runner::{Runner, TestInput};
use ldb::sandbox::{Limits, Sandbox};
use ldb::trace::units::UnitMap;
use ldb::trace::{Level, TraceRequest, TracerKind};

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
    let runner = Runner::new(Sandbox::new(env!("CARGO_BIN_EXE_ldb"), limits));

    println!("## Sandbox and tracer ({})", machine());
    println!();
    println!("Command: `cargo bench --bench runner -- --runs {runs} --loop {iterations}`");
    println!();

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
    let strict = runner.clone().strict();
    let cases: [(&str, &Runner, &TestInput); 3] = [
        ("one sandboxed test", &runner, &trivial),
        ("a check(candidate) hidden test", &runner, &hidden),
        ("the same hidden test, strict scoring", &strict, &hidden),
    ];
    println!("| per-test run overhead (fresh worker, {runs} runs) | median | p90 |");
    println!("|---|---|---|");
    for (label, runner, test) in cases {
        let mut times = Vec::new();
        for _ in 0..runs {
            match runner.run("def f():\n    return 1\n", test, None) {
                Ok(out) if out.passed() => times.push(out.elapsed_ms as f64),
                Ok(out) => return fail(&format!("{label} did not pass: {}", out.summary)),
                Err(e) => return fail(&e.to_string()),
            }
        }
        println!(
            "| wall time of {label} | {:.1} ms | {:.1} ms |",
            percentile(&mut times, 0.5),
            percentile(&mut times, 0.9)
        );
    }
    println!();

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
