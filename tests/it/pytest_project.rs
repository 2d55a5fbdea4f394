//! A module in a project, tested by the project's own pytest suite (`tests/fixtures/
//! pytest_project`: a package under `src/` with a relative import, tests with a conftest.py
//! fixture, parametrize over cases a helper module reads from JSON, a class with
//! `setup_method`, a skip, an xfail, and one buggy function): `ldb test` lists every node,
//! `ldb fix --write` fixes the function against a fake OpenAI-compatible server, and the
//! user's tree is never written. The errors and environments are in `pytest_errors.rs`.

use std::path::Path;
use std::process::Output;

use crate::common;
use crate::common::project::{ldb, project, snapshot, text, TARGET};

use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The fix a scripted model returns: the function alone.
const FIXED: &str = "def second_largest(scores):\n    values = clean(scores)\n    distinct = sorted(set(values))\n    if len(distinct) < 2:\n        raise ValueError(\"need two distinct scores\")\n    return distinct[-2]\n";

#[test]
fn ldb_test_lists_every_node_with_its_outcome() {
    let (_dir, root) = project();
    let before = snapshot(&root);
    let out = ldb(&root, &["test", TARGET, "--tests", "tests/"], &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let expected = [
        "  PASS     tests/test_stats.py::test_second_largest[rising]",
        "  FAIL     tests/test_stats.py::test_second_largest[max-first]",
        "           got 9, expected 7 at tests/test_stats.py:15: assert second_largest(scores) == want",
        "  FAIL     tests/test_stats.py::test_second_largest[repeated-max]",
        "  FAIL     tests/test_stats.py::test_second_largest[negatives]",
        "  PASS     tests/test_stats.py::test_second_largest[missing]",
        "  PASS     tests/test_stats.py::test_sample",
        "  FAIL     tests/test_stats.py::test_two_calls",
        "           got 2, expected 1 at tests/test_stats.py:24: assert second_largest([2, 1]) == 1",
        "  PASS     tests/test_stats.py::test_too_few_scores",
        "  PASS     tests/test_stats.py::TestMean::test_mean",
        "  PASS     tests/test_stats.py::TestMean::test_missing_scores_are_left_out",
        "  SKIP     tests/test_stats.py::test_median",
        "           skipped: the median is not written yet",
        "  XFAIL    tests/test_stats.py::test_mean_of_nothing",
        "  12 tests: 6 passed, 4 failed, 1 skipped, 1 xfailed",
    ];
    for line in expected {
        assert!(
            stdout.contains(&format!("{line}\n")),
            "{line}\n---\n{stdout}"
        );
    }
    // Which path ran, with what.
    assert!(stderr.contains("ldb: pytest "), "{stderr}");
    assert!(stderr.contains("runs 12 tests of tests/"), "{stderr}");
    assert!(stderr.contains("pyproject.toml"), "{stderr}");
    // pytest wrote nothing into the project: no cache, no bytecode.
    assert_eq!(snapshot(&root), before, "the project changed");
}

#[test]
fn without_a_function_named_the_one_the_failing_nodes_call_is_under_test() {
    // The suite tests `mean` and `second_largest`; only nodes calling `second_largest` fail
    // (the xfail of `mean([])` is expected), so that is the function under test.
    let (_dir, root) = project();
    let out = ldb(
        &root,
        &["test", "src/ranking/stats.py", "--tests", "tests/"],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "the tests call second_largest, mean; the failing ones call only `second_largest`"
        ),
        "{stderr}"
    );
    assert!(stdout.contains("4 failed"), "{stdout}");
}

#[test]
fn k_selects_nodes_and_json_carries_each_node() {
    let (_dir, root) = project();
    let out = ldb(
        &root,
        &[
            "test",
            TARGET,
            "--tests",
            "tests/",
            "-k",
            "second_largest",
            "--json",
        ],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let reports: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let results = reports[0]["results"].as_array().expect("results");
    assert_eq!(results.len(), 5, "{stdout}");
    let failing = &results[1];
    assert_eq!(failing["test"]["kind"], "pytest");
    assert_eq!(
        failing["test"]["node_id"],
        "tests/test_stats.py::test_second_largest[max-first]"
    );
    assert_eq!(failing["status"], "failed");
    assert_eq!(failing["actual"], "9");
    assert_eq!(failing["expected"], "7");
    assert_eq!(failing["exception"]["kind"], "AssertionError");
    assert_eq!(
        failing["exception"]["test_location"],
        "tests/test_stats.py:15"
    );
    // The node's source as a prompt shows it: the parameters filled in.
    let source = failing["test"]["source"].as_str().expect("source");
    assert!(
        source.contains("scores = [9, 4, 7]\nwant = 7\n"),
        "{source}"
    );
    assert!(
        source.contains("def test_second_largest(scores, want):"),
        "{source}"
    );
}

#[test]
fn an_exception_in_the_program_names_its_line() {
    let (_dir, root) = project();
    let program = root.join("src/ranking/stats.py");
    let text_before = std::fs::read_to_string(&program).expect("read");
    std::fs::write(
        &program,
        text_before.replace("    return second\n", "    return second + None\n"),
    )
    .expect("write");
    let out = ldb(
        &root,
        &["test", TARGET, "--tests", "tests/", "-k", "rising"],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("ERROR    tests/test_stats.py::test_second_largest[rising]"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "TypeError: unsupported operand type(s) for +: 'int' and 'NoneType' (program line 26)"
        ),
        "{stdout}"
    );
}

#[test]
fn a_test_run_never_writes_into_the_project() {
    let (_dir, root) = project();
    // A test that writes beside itself and reads it back, as under plain pytest; one in a
    // project directory the user keeps private (mode 0700).
    std::fs::write(
        root.join("tests/test_writes.py"),
        "from pathlib import Path\n\n\ndef test_writes_beside_itself():\n    p = Path(__file__).with_name('out.txt')\n    p.write_text('x')\n    assert p.read_text() == 'x'\n\n\ndef test_writes_to_tmp(tmp_path):\n    (tmp_path / 'out.txt').write_text('x')\n    assert (tmp_path / 'out.txt').read_text() == 'x'\n",
    )
    .expect("test file");
    std::fs::set_permissions(&root, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .expect("chmod");
    let before = snapshot(&root);
    let out = ldb(
        &root,
        &["test", TARGET, "--tests", "tests/test_writes.py"],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("PASS     tests/test_writes.py::test_writes_beside_itself"),
        "{stdout}"
    );
    assert!(
        stdout.contains("PASS     tests/test_writes.py::test_writes_to_tmp"),
        "{stdout}"
    );
    assert_eq!(snapshot(&root), before, "the project changed");
    assert!(!root.join("tests/out.txt").exists());
}

#[test]
fn a_plain_file_keeps_the_plain_path_and_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("prog.py"),
        "def inc(x):\n    return x + 1\n",
    )
    .expect("prog");
    std::fs::write(
        dir.path().join("test_prog.py"),
        "from prog import inc\n\ndef test_inc():\n    assert inc(1) == 2\n",
    )
    .expect("tests");
    let out = ldb(
        dir.path(),
        &["test", "prog.py", "--tests", "test_prog.py"],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("PASS     assert inc(1) == 2"), "{stdout}");
    assert!(
        stderr.contains("ldb: test_prog.py read without pytest"),
        "{stderr}"
    );
    // The same file with parametrize goes to pytest, which says why.
    std::fs::write(
        dir.path().join("test_prog.py"),
        "import pytest\nfrom prog import inc\n\n@pytest.mark.parametrize('x', [1, 2])\ndef test_inc(x):\n    assert inc(x) == x + 1\n",
    )
    .expect("tests");
    let out = ldb(
        dir.path(),
        &["test", "prog.py", "--tests", "test_prog.py"],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("PASS     test_prog.py::test_inc[1]"),
        "{stdout}"
    );
    assert!(
        stderr.contains("test_prog.py uses what only pytest runs"),
        "{stderr}"
    );
}

/// How the fake server answers: every reply is `program`.
async fn fix(root: &Path, extra: &[&str], program: &str) -> (Output, Vec<String>) {
    let server = MockServer::start().await;
    let reply = format!("Here is the fix:\n```python\n{program}```\n");
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": "fake-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        })))
        .mount(&server)
        .await;
    let config = root.join("..").join("config.toml");
    std::fs::write(&config, "").expect("config");
    let base = format!("{}/v1", server.uri());
    let mut args: Vec<String> = [
        "fix",
        TARGET,
        "--tests",
        "tests/",
        "--base-url",
        &base,
        "--model",
        "fake-model",
        "--no-cache",
        "--max-iters",
        "2",
        "--config",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(config.display().to_string());
    args.extend(extra.iter().map(|s| s.to_string()));
    let dir = root.to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        common::ldb()
            .args(&args)
            .current_dir(&dir)
            .output()
            .expect("run ldb")
    })
    .await
    .expect("join");
    let requests = server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    (out, requests)
}

#[tokio::test]
async fn fix_write_replaces_only_the_function_and_every_node_then_passes() {
    let (_dir, root) = project();
    let program = root.join("src/ranking/stats.py");
    let original = std::fs::read_to_string(&program).expect("read");
    let (out, _) = fix(&root, &["--write", "--strategy", "resample"], FIXED).await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stderr.contains("wrote src/ranking/stats.py"), "{stderr}");
    let written = std::fs::read_to_string(&program).expect("read");
    // Only the function's body changed: the module docstring, the import, mean() and the
    // function's docstring stay byte for byte.
    let start = original
        .find("    values = clean(scores)\n    if len(set")
        .expect("body");
    assert_eq!(&written[..start], &original[..start]);
    assert!(written.ends_with("    distinct = sorted(set(values))\n    if len(distinct) < 2:\n        raise ValueError(\"need two distinct scores\")\n    return distinct[-2]\n"), "{written}");
    assert_eq!(
        std::fs::read_to_string(root.join("src/ranking/stats.py.ldb-orig")).expect("backup"),
        original
    );
    let out = ldb(&root, &["test", TARGET, "--tests", "tests/"], &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("12 tests: 10 passed, 1 skipped, 1 xfailed"),
        "{stdout}"
    );
}

/// LDB's debugger prompt traces the first failing node: its source with the parameters filled
/// in is the test, and the trace is of the function under test on those values.
#[tokio::test]
async fn the_debugger_sees_the_failing_node_with_its_values_and_its_trace() {
    let (_dir, root) = project();
    let (out, requests) = fix(&root, &["--strategy", "ldb"], FIXED).await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let debug = requests
        .iter()
        .find(|r| r.contains("Execution of a failing test"))
        .unwrap_or_else(|| panic!("no debug prompt in {requests:?}"));
    let prompt: serde_json::Value = serde_json::from_str(debug).expect("request json");
    let user = prompt["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .expect("user message");
    assert!(
        user.contains("The program was run on this test: FAIL (got 9, expected 7"),
        "{user}"
    );
    assert!(
        user.contains("# tests/test_stats.py::test_second_largest[max-first]\nscores = [9, 4, 7]\nwant = 7\ndef test_second_largest(scores, want):"),
        "{user}"
    );
    // The trace is of second_largest on those scores.
    assert!(user.contains("[BLOCK-0] in second_largest"), "{user}");
    assert!(user.contains("scores = [9, 4, 7]"), "{user}");
}

/// A test that calls the function twice, the second call failing: the trace keeps that call
/// only (the runner's library API, as the fix loop uses it).
#[test]
fn the_trace_of_a_node_shows_the_call_that_failed() {
    use ldb::python::cfg::ProgramCfg;
    use ldb::python::source::SourceFile;
    use ldb::run::pytest::PytestProject;
    use ldb::run::sandbox::{Limits, ProjectMount, Sandbox};
    use ldb::run::{Runner, TestInput, TestStatus};
    use ldb::trace::units::UnitMap;
    use ldb::trace::{Level, TraceRequest, TracerKind};

    let (_dir, root) = project();
    let module = root.join("src/ranking/stats.py");
    let program = std::fs::read_to_string(&module).expect("read");
    let limits = Limits::default().with_wall(std::time::Duration::from_secs(30));
    let runner =
        Runner::new(Sandbox::new(env!("CARGO_BIN_EXE_ldb"), limits).with_pytest_preloaded())
            .with_project(PytestProject {
                mount: ProjectMount {
                    root: root.clone(),
                    module_file: module,
                    cwd: root.clone(),
                },
                rootdir: root.clone(),
            });
    let src = SourceFile::new(program.clone());
    let cfg = ProgramCfg::build(&src).expect("cfg");
    let units = UnitMap::build(&cfg, Level::Block, false, src.line_count());
    let request = TraceRequest {
        scopes: units.scopes().to_vec(),
        keep_first: 50,
        keep_last: 50,
        value_chars: 100,
        tracer: TracerKind::Native,
        deadline_ms: 20_000,
    };
    let test = TestInput::Pytest {
        node_id: "tests/test_stats.py::test_two_calls".into(),
        source: String::new(),
        guard: false,
    };
    let out = runner.run(&program, &test, Some(request)).expect("run");
    assert_eq!(out.status, TestStatus::Failed, "{}", out.summary);
    let trace = out.trace.expect("trace");
    let first = trace.instances.first().expect("an instance");
    assert_eq!(first.function, "second_largest");
    let scores: Vec<&str> = trace
        .instances
        .iter()
        .flat_map(|i| i.before.iter())
        .filter(|v| v.name == "scores")
        .map(|v| v.value.as_str())
        .collect();
    assert!(!scores.is_empty(), "{trace:?}");
    assert!(scores.iter().all(|s| *s == "[2, 1]"), "{scores:?}");

    // The same nodes together: one session, each its own outcome.
    let nodes: Vec<TestInput> = ["test_sample", "test_two_calls", "test_median"]
        .iter()
        .map(|n| TestInput::Pytest {
            node_id: format!("tests/test_stats.py::{n}"),
            source: String::new(),
            guard: false,
        })
        .collect();
    let outcomes: Vec<TestStatus> = runner
        .run_all(&program, &nodes)
        .into_iter()
        .map(|o| o.expect("run").status)
        .collect();
    assert_eq!(
        outcomes,
        [TestStatus::Passed, TestStatus::Failed, TestStatus::Skipped]
    );
}

/// A node that never ends stops at its own time limit; the session goes on to the others.
#[test]
fn a_node_that_loops_times_out_alone() {
    let (_dir, root) = project();
    let program = root.join("src/ranking/stats.py");
    let text_before = std::fs::read_to_string(&program).expect("read");
    std::fs::write(
        &program,
        text_before.replace(
            "    values = clean(scores)\n    if len(set",
            "    values = clean(scores)\n    while values == [2, 1]:\n        pass\n    if len(set",
        ),
    )
    .expect("write");
    let started = std::time::Instant::now();
    let out = ldb(
        &root,
        &["test", TARGET, "--tests", "tests/", "--timeout", "2"],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(
            "TIMEOUT  tests/test_stats.py::test_two_calls\n           stopped at the time limit"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("12 tests: 6 passed, 3 failed, 1 timed out, 1 skipped, 1 xfailed"),
        "{stdout}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

/// `ldb test --program` puts another program in the module file's place, as every candidate
/// of `ldb fix` is: the tests import it by the module's real path.
#[test]
fn another_program_takes_the_module_files_place() {
    let (_dir, root) = project();
    let module = std::fs::read_to_string(root.join("src/ranking/stats.py")).expect("read");
    let start = module.find("def second_largest").expect("def");
    let fixed = format!("{}{FIXED}", &module[..start]);
    let other = root.join("..").join("fixed.py");
    std::fs::write(&other, fixed).expect("write");
    let other = other.display().to_string();
    let out = ldb(
        &root,
        &["test", TARGET, "--tests", "tests/", "--program", &other],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("12 tests: 10 passed, 1 skipped, 1 xfailed"),
        "{stdout}"
    );
    // The user's file is as it was.
    assert_eq!(
        std::fs::read_to_string(root.join("src/ranking/stats.py")).expect("read"),
        module
    );
}

/// A "fix" that skips every test from inside the function would pass them all as pytest counts
/// (a skip is no failure): a test the given program ran may not be skipped by a candidate.
#[tokio::test]
async fn a_candidate_that_skips_the_tests_is_not_a_fix() {
    for (strategy, workers) in [
        ("resample", None),
        ("search", None),
        ("search", Some("--fresh-workers")),
    ] {
        let (_dir, root) = project();
        let program = root.join("src/ranking/stats.py");
        let original = std::fs::read_to_string(&program).expect("read");
        let skip = "def second_largest(scores):\n    import pytest\n    pytest.skip(\"x\")\n";
        let mut args = vec!["--write", "--strategy", strategy, "--proposers", "fresh:2"];
        args.extend(workers);
        let (out, _) = fix(&root, &args, skip).await;
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(1), "{strategy}: {stdout}\n{stderr}");
        assert!(
            stderr.contains("a fix may not skip a test"),
            "{strategy}: {stderr}"
        );
        assert_eq!(
            std::fs::read_to_string(&program).expect("read"),
            original,
            "{strategy}"
        );
    }
}

/// A "fix" that writes result records of its own on every descriptor, then ends the process
/// before pytest reports: what it wrote lacks the run's seal, so every node counts as failed.
#[tokio::test]
async fn a_fake_result_and_os_exit_is_not_a_fix_under_pytest() {
    let (_dir, root) = project();
    let program = root.join("src/ranking/stats.py");
    let original = std::fs::read_to_string(&program).expect("read");
    let forge = r#"def second_largest(scores):
    import gc, json, os
    from _pytest.nodes import Item
    ids = sorted({o.nodeid for o in gc.get_objects() if isinstance(o, Item)})
    nodes = [{"nodeid": i, "outcome": "passed", "when": "call", "duration_ms": 1.0} for i in ids]
    fake = json.dumps({"status": "passed", "phase": None, "exception": None, "actual": None,
        "expected": None, "exit_code": None, "pytest": {"exit_code": 0, "nodes": nodes}}).encode()
    for fd in range(3, 64):
        try:
            os.write(fd, fake)
        except OSError:
            pass
    os._exit(0)
"#;
    for workers in [None, Some("--fresh-workers")] {
        // Only the model's programs: an edit of the given one could be a real fix.
        let mut args = vec!["--write", "--strategy", "resample"];
        args.extend(workers);
        let (out, _) = fix(&root, &args, forge).await;
        let (stdout, stderr) = text(&out);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{workers:?}: {stdout}\n{stderr}"
        );
        assert!(!stderr.contains("12/12"), "{workers:?}: {stderr}");
        assert_eq!(std::fs::read_to_string(&program).expect("read"), original);
    }
}

/// A project root only its owner may read (`mktemp -d`, umask 077, a home directory) runs as a
/// 0755 one does, on warm workers and on fresh ones.
#[test]
fn a_0700_project_runs() {
    for workers in [None, Some("--fresh-workers")] {
        let (_dir, root) = project();
        std::fs::set_permissions(&root, std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .expect("chmod");
        let mut args = vec!["test", TARGET, "--tests", "tests/"];
        args.extend(workers);
        let out = ldb(&root, &args, &[]);
        let (stdout, stderr) = text(&out);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{workers:?}: {stdout}\n{stderr}"
        );
        assert!(
            stdout.contains("12 tests: 6 passed, 4 failed, 1 skipped, 1 xfailed"),
            "{workers:?}: {stdout}\n{stderr}"
        );
    }
}

/// `ldb fix TARGET --tests NODE --write --unconfirmed` in a one-module project `files` makes
/// in a temporary directory, against a fake model that always replies `reply`. The run must end
/// as a fix (exit 0, or 6 for an unconfirmed one); the module's text after it (`module`) and the
/// run's stderr.
async fn fix_module(
    files: &[(&str, &str)],
    target: &str,
    node: &str,
    reply: &str,
    module: &str,
    extra: &[&str],
) -> (String, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("proj");
    std::fs::create_dir(&root).expect("root");
    for (name, text) in files {
        std::fs::write(root.join(name), text).expect("write");
    }
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(common::completion(reply)))
        .mount(&server)
        .await;
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "").expect("config");
    let base = format!("{}/v1", server.uri());
    let mut args: Vec<String> = [
        "fix",
        target,
        "--tests",
        node,
        "--write",
        "--unconfirmed",
        "--base-url",
        &base,
        "--model",
        "fake-model",
        "--no-cache",
        "--config",
        &config.display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    let cwd = root.clone();
    let out = tokio::task::spawn_blocking(move || {
        common::ldb()
            .args(&args)
            .current_dir(&cwd)
            .output()
            .expect("run ldb")
    })
    .await
    .expect("join");
    let (stdout, stderr) = text(&out);
    assert!(
        matches!(out.status.code(), Some(0 | 6)),
        "{stdout}\n{stderr}"
    );
    let written = std::fs::read_to_string(root.join(module)).expect("read");
    (written, stderr)
}

/// [`fix_module`] on `copier.py`'s `Copy.statement`, tested by `test_copier.py::NODE`.
async fn fix_copier(
    module: &str,
    tests: &str,
    node: &str,
    reply: &str,
    extra: &[&str],
) -> (String, String) {
    fix_module(
        &[("copier.py", module), ("test_copier.py", tests)],
        "copier.py::Copy.statement",
        &format!("test_copier.py::{node}"),
        reply,
        "copier.py",
        extra,
    )
    .await
}

/// A project's function that reads `json` its module never imports fails its node with a
/// `NameError`: the edit adds the import beside the module's others.
#[tokio::test]
async fn a_missing_import_is_added_beside_the_modules_imports() {
    let module = "\"\"\"Tools.\"\"\"\nimport os\n\n\ndef dump(d):\n    return json.dumps(d, sort_keys=True)\n\n\ndef sep():\n    return os.sep\n";
    let tests = "from tools import dump, sep\n\n\ndef test_dump():\n    assert dump({'b': 1, 'a': 2}) == '{\"a\": 2, \"b\": 1}'\n\n\ndef test_sep():\n    assert sep() == '/'\n";
    // The model, asked after the edit passed, writes the function back unchanged.
    let reply = "```python\ndef dump(d):\n    return json.dumps(d, sort_keys=True)\n```\n";
    let (written, stderr) = fix_module(
        &[("tools.py", module), ("test_tools.py", tests)],
        "tools.py::dump",
        "test_tools.py::test_dump",
        reply,
        "tools.py",
        &[],
    )
    .await;
    assert_eq!(
        written,
        module.replace("import os\n", "import os\nimport json\n"),
        "{stderr}"
    );
}

/// A method whose condition reads `len(self.columns)` raises `TypeError` on a task made with
/// `columns=None` (luigi's `S3CopyToTable.copy`, BugsInPy luigi:4): the edit asks first that the
/// attribute is not `None`, and the test with columns keeps passing.
#[tokio::test]
async fn a_condition_that_raised_on_none_checks_its_operand_first() {
    let module = "class Copy:\n    def __init__(self, columns):\n        self.columns = columns\n\n    def statement(self, table):\n        names = ''\n        if len(self.columns) > 0:\n            names = '({})'.format(','.join(self.columns))\n        return 'COPY {} {}'.format(table, names).strip()\n";
    let tests = "from copier import Copy\n\n\ndef test_columns():\n    assert Copy(['a', 'b']).statement('t') == 'COPY t (a,b)'\n\n\ndef test_no_columns():\n    assert Copy(None).statement('t') == 'COPY t'\n";
    // The model writes the method back unchanged: only the edit can pass.
    let reply = "```python\ndef statement(self, table):\n    names = ''\n    if len(self.columns) > 0:\n        names = '({})'.format(','.join(self.columns))\n    return 'COPY {} {}'.format(table, names).strip()\n```\n";
    let (written, stderr) = fix_copier(
        module,
        tests,
        "test_no_columns",
        reply,
        &["--rules", "none-checks"],
    )
    .await;
    assert_eq!(
        written,
        module.replace(
            "if len(self.columns) > 0:",
            "if self.columns is not None and len(self.columns) > 0:"
        ),
        "{stderr}"
    );
}

/// Edits of a project's function run with the function swapped into one pytest session; the
/// swap dedented a method's source, and with it the text of its multi-line strings, so an edit
/// of a method that builds SQL in a triple-quoted string failed there though it passes (BugsInPy
/// luigi:4). The edit of the condition must be found and written.
#[tokio::test]
async fn regression_a_swapped_method_kept_the_text_of_its_multiline_strings() {
    let module = "class Copy:\n    def __init__(self, columns):\n        self.columns = columns\n\n    def statement(self, table):\n        names = ''\n        if len(self.columns) > 1:\n            names = '({})'.format(','.join(self.columns))\n        return \"\"\"\n          COPY {} {}\n        ;\"\"\".format(table, names)\n";
    let tests = "from copier import Copy\n\n\ndef test_one_column():\n    assert Copy(['a']).statement('t') == '\\n          COPY t (a)\\n        ;'\n";
    let reply = "```python\ndef statement(self, table):\n    return None\n```\n";
    let (written, stderr) = fix_copier(module, tests, "test_one_column", reply, &[]).await;
    // `> 0` or `>= 1`, whichever edit comes first; the string's text stays.
    let fixed = |op: &str| module.replace("> 1:", op);
    assert!(
        written == fixed("> 0:") || written == fixed(">= 1:"),
        "{written}\n{stderr}"
    );
}
