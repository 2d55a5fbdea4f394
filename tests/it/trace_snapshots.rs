//! Rendered traces of the fixture corpus, run for real in the sandbox, as snapshots; plus checks
//! of what every trace must get right (frames kept apart, exceptions, omitted-block markers).

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use ldb::python::cfg::ProgramCfg;
use ldb::python::source::SourceFile;
use ldb::run::sandbox::{Limits, Sandbox};
use ldb::run::{Runner, TestInput, TestOutcome, TestStatus};
use ldb::trace::render::{TraceEntry, TraceReport};
use ldb::trace::sample::SampleConfig;
use ldb::trace::units::UnitMap;
use ldb::trace::{InstanceEnd, Level, TraceRequest, TracerKind};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/programs")
}

fn runner() -> Runner {
    common::runner(Duration::from_secs(60))
}

/// The fixture's source and the test named on its first line (`# test: ...`).
fn load(name: &str) -> (String, String) {
    let source = std::fs::read_to_string(fixtures().join(name)).expect("fixture");
    let test = source
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# test: "))
        .expect("first line names the test")
        .to_string();
    (source, test)
}

fn trace(name: &str, level: Level, tracer: TracerKind) -> (TestOutcome, TraceReport) {
    let (source, test) = load(name);
    let src = SourceFile::new(source.clone());
    let cfg = ProgramCfg::build(&src).expect("fixture parses");
    let units = UnitMap::build(&cfg, level, false, src.line_count());
    let sample = SampleConfig::for_level(level);
    let request = TraceRequest {
        scopes: units.scopes().to_vec(),
        keep_first: sample.head,
        keep_last: sample.tail,
        value_chars: 80,
        tracer,
        deadline_ms: 50_000,
    };
    let outcome = runner()
        .run(&source, &TestInput::Code { source: test }, Some(request))
        .expect("sandbox run");
    let raw = outcome.trace.clone().expect("a trace");
    let report = TraceReport::build(&raw, &units, &src, &sample);
    (outcome, report)
}

fn steps(report: &TraceReport) -> Vec<&ldb::trace::render::TraceStep> {
    report
        .entries
        .iter()
        .filter_map(|e| match e {
            TraceEntry::Step(s) => Some(s.as_ref()),
            TraceEntry::Omitted { .. } => None,
        })
        .collect()
}

#[test]
fn every_fixture_traces_to_a_stable_rendering() {
    let mut names: Vec<String> = std::fs::read_dir(fixtures())
        .expect("fixtures")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".py"))
        .collect();
    names.sort();
    assert!(names.len() >= 15, "fixture corpus is too small: {names:?}");
    for name in names {
        let (outcome, report) = trace(&name, Level::Block, TracerKind::Native);
        let text = format!(
            "result: {} — {}\n{}",
            outcome.status.label(),
            outcome.summary,
            report.to_text()
        );
        insta::assert_snapshot!(
            format!("trace_block__{}", name.trim_end_matches(".py")),
            text
        );
    }
}

#[test]
fn line_and_function_levels_render_stably() {
    for level in [Level::Line, Level::Function] {
        let (_, report) = trace("recursion.py", level, TracerKind::Native);
        insta::assert_snapshot!(
            format!("trace_{level:?}__recursion").to_lowercase(),
            report.to_text()
        );
    }
}

#[test]
fn recursion_keeps_frames_apart() {
    let (_, report) = trace("recursion.py", Level::Function, TracerKind::Native);
    let steps = steps(&report);
    let frames: std::collections::HashSet<u64> = steps.iter().map(|s| s.frame).collect();
    assert!(frames.len() > 1, "recursive calls share a frame id");
    assert!(steps.iter().any(|s| s.depth > 0));
    // Every call shown returned its own value.
    assert!(steps
        .iter()
        .all(|s| matches!(s.end, InstanceEnd::Return { .. })));
}

#[test]
fn an_exception_escaping_the_entry_function_is_in_the_trace() {
    let (outcome, report) = trace("exception_escape.py", Level::Block, TracerKind::Native);
    assert_eq!(outcome.status, TestStatus::Error);
    let steps = steps(&report);
    let last = steps.last().expect("steps");
    let raised = last.raised.as_ref().expect("the last step raised");
    assert_eq!(raised.kind, "IndexError");
    assert_eq!(last.end, InstanceEnd::Raise);
}

#[test]
fn a_million_iterations_are_sampled_with_an_omitted_marker() {
    let (outcome, report) = trace("big_loop.py", Level::Block, TracerKind::Native);
    assert_eq!(outcome.status, TestStatus::Passed, "{outcome:?}");
    assert!(report.total > 1_000_000, "total {}", report.total);
    assert_eq!(report.shown, 10);
    let omitted: u64 = report
        .entries
        .iter()
        .map(|e| match e {
            TraceEntry::Omitted { count } => *count,
            TraceEntry::Step(_) => 0,
        })
        .sum();
    assert_eq!(omitted + report.shown as u64, report.total);
    assert!(report.to_text().contains("blocks omitted"));
}

#[test]
fn a_raising_repr_and_huge_values_do_not_break_the_trace() {
    let (outcome, report) = trace("bad_repr.py", Level::Block, TracerKind::Native);
    assert_eq!(outcome.status, TestStatus::Passed, "{outcome:?}");
    let text = report.to_text();
    assert!(text.contains("repr() raised RuntimeError"), "{text}");
    assert!(text.contains("more)"), "long list not cut visibly: {text}");
    assert!(
        text.contains("chars]"),
        "long string not cut visibly: {text}"
    );
}

#[test]
fn multi_line_statements_keep_all_their_lines_and_values() {
    let (_, report) = trace("multiline_statements.py", Level::Block, TracerKind::Native);
    let multi = steps(&report)
        .into_iter()
        .find(|s| s.lines.iter().any(|(a, b)| b > a))
        .expect("a step spanning several lines");
    assert!(multi.code.lines().count() > 1, "{}", multi.code);
    assert!(multi.after.as_ref().is_some_and(|a| !a.is_empty()));
}

#[test]
fn the_python_level_tracer_records_the_same_trace() {
    for name in ["buggy_off_by_one.py", "recursion.py", "generators.py"] {
        let (_, native) = trace(name, Level::Block, TracerKind::Native);
        let (_, python) = trace(name, Level::Block, TracerKind::Python);
        assert_eq!(native.to_text(), python.to_text(), "{name}");
    }
}

#[test]
fn a_traced_infinite_loop_still_returns_its_last_blocks() {
    let source = "def spin(n):\n    i = 0\n    while i < n:\n        i = i - 1\n    return i\n";
    let src = SourceFile::new(source);
    let cfg = ProgramCfg::build(&src).expect("parses");
    let units = UnitMap::build(&cfg, Level::Block, false, src.line_count());
    let limits = Limits::default().with_wall(Duration::from_secs(3));
    let runner = Runner::new(Sandbox::new(env!("CARGO_BIN_EXE_ldb"), limits));
    let request = TraceRequest {
        scopes: units.scopes().to_vec(),
        keep_first: 5,
        keep_last: 5,
        value_chars: 80,
        tracer: TracerKind::Native,
        deadline_ms: 1_500,
    };
    let out = runner
        .run(
            source,
            &TestInput::Code {
                source: "spin(3)".into(),
            },
            Some(request),
        )
        .expect("run");
    assert_eq!(out.status, TestStatus::Timeout, "{out:?}");
    let raw = out.trace.expect("trace despite the timeout");
    assert!(raw.deadline_hit);
    assert_eq!(raw.instances.len(), 10);
}
