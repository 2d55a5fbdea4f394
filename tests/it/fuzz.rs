//! Property-based fuzzing of everything that reads untrusted text: task files, model replies
//! (code extraction, verdicts), programs (the CFG builder, valid and invalid Python) and trace
//! rendering over arbitrary values. The property is the same everywhere: no panic, and an
//! answer or a clean error.
//!
//! The default run is short (it is part of the test suite). A longer run:
//! `PROPTEST_CASES=20000 cargo nextest run --test it -E 'test(/^fuzz::/)'`. A case that fails is
//! shrunk and saved under `tests/proptest-regressions/`; turn it into a regression test named
//! after the crash.

use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use ldb::generate::reply::code::extract_program;
use ldb::generate::reply::verdicts::parse_verdicts;
use ldb::python::{ProgramCfg, SourceFile};
use ldb::run::sandbox::{Limits, Sandbox};
use ldb::run::{Runner, TestInput};
use ldb::trace::render::TraceReport;
use ldb::trace::sample::SampleConfig;
use ldb::trace::units::UnitMap;
use ldb::trace::{InstanceEnd, Level, Raised, RawTrace, UnitInstance, Var};

/// Pieces that matter to our parsers, mixed with arbitrary characters.
fn texty() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("```".to_string()),
        Just("```python\n".to_string()),
        Just("~~~py\n".to_string()),
        Just("\n".to_string()),
        Just("    ".to_string()),
        Just("\t".to_string()),
        Just("\r\n".to_string()),
        Just("def f(x):\n".to_string()),
        Just("return x\n".to_string()),
        Just("assert f(1) == 1\n".to_string()),
        Just("# Test cases\n".to_string()),
        Just("{\"verdicts\": [".to_string()),
        Just("{\"block\": \"BLOCK-1\", \"correct\": false, \"explanation\": \"".to_string()),
        Just("\"}".to_string()),
        Just("]}".to_string()),
        Just("[BLOCK-0]".to_string()),
        Just("\"task_id\": ".to_string()),
        Just("\"prompt\": \"".to_string()),
        Just("\"visible_tests\": [\"assert f(1) == 1\"]".to_string()),
        Just("{".to_string()),
        Just("}".to_string()),
        Just(",".to_string()),
        Just("\\u0000".to_string()),
        Just("é𝄞\u{202e}".to_string()),
        any::<String>(),
        "[a-z_(): =+\\-*\"'\\[\\]{}.,0-9#\\\\]{0,12}",
    ];
    prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

/// Python-shaped programs: nested compound statements, valid or slightly broken.
fn python() -> impl Strategy<Value = String> {
    let simple = prop_oneof![
        Just("x = 1".to_string()),
        Just("return x".to_string()),
        Just("break".to_string()),
        Just("continue".to_string()),
        Just("pass".to_string()),
        Just("raise ValueError(x)".to_string()),
        Just("yield x".to_string()),
        Just("x += [i for i in range(3) if i]".to_string()),
        Just("assert x, 'm'".to_string()),
        Just("a = 1; b = 2".to_string()),
        Just("lambda: (yield)".to_string()),
        Just("global x".to_string()),
        Just("del x".to_string()),
    ];
    let header = prop_oneof![
        Just("if x:".to_string()),
        Just("elif y:".to_string()),
        Just("else:".to_string()),
        Just("for i in range(3):".to_string()),
        Just("while x < 3:".to_string()),
        Just("try:".to_string()),
        Just("except ValueError as e:".to_string()),
        Just("finally:".to_string()),
        Just("with open(p) as f:".to_string()),
        Just("def g(a, *b, c=1, **d):".to_string()),
        Just("async def h():".to_string()),
        Just("class C(B):".to_string()),
        Just("match x:".to_string()),
        Just("case [1, *rest]:".to_string()),
    ];
    let line = prop_oneof![
        3 => simple.prop_map(|s| (s, false)),
        2 => header.prop_map(|h| (h, true)),
    ];
    (
        prop::collection::vec((line, 0usize..4), 1..30),
        any::<bool>(),
    )
        .prop_map(|(lines, crlf)| {
            let mut out = String::new();
            let mut depth = 0usize;
            for ((text, opens), jump) in lines {
                depth = depth.min(jump + depth / 2);
                out.push_str(&"    ".repeat(depth));
                out.push_str(&text);
                out.push_str(if crlf { "\r\n" } else { "\n" });
                if opens {
                    depth += 1;
                }
            }
            out
        })
}

fn var() -> impl Strategy<Value = Var> {
    ("[a-z_]{1,6}|\\PC{0,8}", texty()).prop_map(|(name, value)| Var { name, value })
}

fn instance() -> impl Strategy<Value = UnitInstance> {
    (
        (
            any::<u64>(),
            0u64..5,
            0u32..50,
            "[a-z_<>]{0,8}",
            0u32..20,
            0u32..60,
        ),
        prop::collection::vec(var(), 0..4),
        prop::option::of(prop::collection::vec(var(), 0..4)),
        prop_oneof![
            Just(InstanceEnd::Next),
            texty().prop_map(|value| InstanceEnd::Return { value }),
            texty().prop_map(|value| InstanceEnd::Yield { value }),
            Just(InstanceEnd::Raise),
            Just(InstanceEnd::Unfinished),
        ],
        prop::option::of(
            (texty(), texty(), 0u32..60).prop_map(|(kind, message, line)| Raised {
                kind,
                message,
                line,
            }),
        ),
    )
        .prop_map(
            |((seq, frame, depth, function, unit, line), before, after, end, raised)| {
                UnitInstance {
                    seq,
                    frame,
                    depth,
                    function,
                    unit,
                    line,
                    before,
                    after,
                    end,
                    raised,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: Some(Box::new(FileFailurePersistence::SourceParallel("proptest-regressions"))), ..ProptestConfig::default() })]

    #[test]
    fn task_files_load_or_fail_cleanly(text in texty(), ext in prop::sample::select(vec!["json", "jsonl", "txt"])) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(format!("task.{ext}"));
        std::fs::write(&path, &text).expect("write");
        if let Err(e) = ldb::task::load_tasks(&path) {
            // Every error names the file it is about.
            prop_assert!(e.to_string().contains("task."), "{}", e);
        }
    }

    #[test]
    fn code_extraction_never_panics(reply in texty(), entry in prop::option::of("[a-z_]{1,5}")) {
        if let Ok(found) = extract_program(&reply, entry.as_deref()) {
            // What comes back is Python that parses.
            prop_assert!(ldb::python::parse_module(&SourceFile::new(found.code.clone())).is_ok());
        }
    }

    #[test]
    fn the_self_test_stop_takes_any_reply_token_by_token(reply in texty(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8), keep in any::<prop::sample::Index>()) {
        // Fed as the backend feeds it: a growing reply, the last piece new, any prefix length.
        let bytes = reply.as_bytes();
        let mut ends: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
        ends.push(bytes.len());
        ends.sort_unstable();
        let keep = keep.index(bytes.len() + 1);
        let mut last = 0;
        for end in ends {
            if let Some(at) = ldb::generate::model::self_test_reply_end(&bytes[..end], end - last, keep, "f") {
                // The cut keeps the prefix and lies inside what was written.
                prop_assert!(at >= keep.min(end) && at <= end, "{at} {keep} {end}");
            }
            last = end;
        }
    }

    #[test]
    fn verdict_parsing_never_panics(reply in texty(), labels in prop::collection::vec("BLOCK-[0-9]{1,2}|[a-z]{0,4}", 0..5)) {
        let _ = parse_verdicts(&reply, &labels);
    }

    #[test]
    fn the_cfg_builder_takes_any_text(src in texty()) {
        check_cfg(&src);
    }

    #[test]
    fn the_cfg_builder_takes_python_shaped_programs(src in python()) {
        check_cfg(&src);
    }

    #[test]
    fn every_edit_of_a_program_parses_and_is_a_new_program(src in python()) {
        let lines: Vec<u32> = (1..=src.lines().count() as u32).collect();
        let mut keys = std::collections::HashSet::new();
        keys.insert(ldb::python::normalize::program_key(&src));
        for e in ldb::python::edits::edits(&src, &lines, 300) {
            prop_assert!(
                ldb::python::parse_module(&SourceFile::new(e.program.clone())).is_ok(),
                "{}: {}", e.description, e.program
            );
            prop_assert!(keys.insert(ldb::python::normalize::program_key(&e.program)), "{}", e.description);
        }
    }

    #[test]
    fn splicing_any_candidate_into_any_module_never_panics(module in python(), candidate in python()) {
        for name in ["g", "h", "C"] {
            if let Ok(out) = ldb::python::splice::splice(&module, name, &candidate) {
                // Two programs that parse splice into one that parses.
                let parses = |t: &str| ldb::python::parse_module(&SourceFile::new(t.to_string())).is_ok();
                if parses(&module) && parses(&candidate) {
                    prop_assert!(parses(&out), "module:\n{module}\ncandidate:\n{candidate}\nout:\n{out}");
                }
            }
        }
    }

    #[test]
    fn trace_rendering_takes_any_instances(
        src in python(),
        instances in prop::collection::vec(instance(), 0..30),
        total in any::<u64>(),
        budget in 0usize..4000,
        level in prop::sample::select(vec![Level::Line, Level::Block, Level::Function]),
    ) {
        let source = SourceFile::new(src);
        let cfg = ProgramCfg::build(&source).unwrap_or_else(|_| {
            ProgramCfg::build(&SourceFile::new("pass\n".to_string())).expect("trivial program")
        });
        let units = UnitMap::build(&cfg, level, true, source.line_count());
        let raw = RawTrace { instances, total_instances: total, line_events: total, deadline_hit: total % 2 == 0, ..Default::default() };
        let mut sample = SampleConfig::for_level(level);
        sample.token_budget = budget;
        let report = TraceReport::build(&raw, &units, &source, &sample);
        let _ = report.to_text();
    }
}

fn check_cfg(src: &str) {
    let source = SourceFile::new(src.to_string());
    if let Ok(cfg) = ProgramCfg::build(&source) {
        let owners = cfg.line_owners();
        assert_eq!(owners.len() as u32, cfg.line_count + 1);
        for (scope_idx, scope) in cfg.scopes.iter().enumerate() {
            for block in 0..scope.block_count() {
                for (first, last) in cfg.block_lines(scope_idx, block) {
                    assert!(
                        first <= last && last <= cfg.line_count,
                        "{first}..{last} in {src:?}"
                    );
                }
            }
        }
        let _ = cfg.render_text(&source);
        let _ = cfg.render_dot(&source);
    }
}

/// Values from the program side: the worker renders them (`src/trace/value.rs`) whatever they
/// are. Fewer cases: each one is a sandbox run.
fn python_value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("None".to_string()),
        Just("10**4000".to_string()),
        Just("float('nan')".to_string()),
        Just("-0.0".to_string()),
        Just("b'\\x00\\xff'".to_string()),
        Just("'é𝄞\\u202e' * 50".to_string()),
        Just("object()".to_string()),
        Just("type('R', (), {'__repr__': lambda s: 1/0})()".to_string()),
        Just("type('L', (), {'__repr__': lambda s: 'x' * 10**6})()".to_string()),
        Just("range(10**9)".to_string()),
        Just("(i for i in range(3))".to_string()),
        Just("print".to_string()),
        any::<i64>().prop_map(|i| i.to_string()),
        "[a-z ]{0,10}".prop_map(|s| format!("{s:?}")),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(|v| format!("[{}]", v.join(", "))),
            prop::collection::vec(inner.clone(), 0..6)
                .prop_map(|v| format!("tuple([{}])", v.join(", "))),
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| {
                let items: Vec<String> = v
                    .iter()
                    .enumerate()
                    .map(|(i, x)| format!("{i}: {x}"))
                    .collect();
                format!("{{{}}}", items.join(", "))
            }),
            inner.prop_map(|x| format!("(lambda l: (l.append(l), l.append({x}), l)[2])([])")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: Some(Box::new(FileFailurePersistence::SourceParallel("proptest-regressions"))), ..ProptestConfig::default() })]

    #[test]
    fn the_worker_renders_any_value(expr in python_value()) {
        let runner = Runner::new(Sandbox::new(
            env!("CARGO_BIN_EXE_ldb"),
            Limits::default().with_wall(Duration::from_secs(10)),
        ));
        let out = runner
            .run("", &TestInput::Call { expr: expr.clone() }, None)
            .expect("sandbox run");
        prop_assert!(out.passed(), "{expr}: {out:?}");
        let shown = out.actual.unwrap_or_default();
        prop_assert!(shown.chars().count() <= 4000, "{expr}: {} chars", shown.chars().count());
    }
}
