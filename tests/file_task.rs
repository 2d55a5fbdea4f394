//! A plain `prog.py` and its tests, as a newcomer gives them: `ldb test prog.py --tests
//! test_prog.py`, `--test`, `--io-test`, the errors for test files ldb cannot run, and
//! `ldb fix prog.py --tests test_prog.py [--write]` against a fake OpenAI-compatible server.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const PROG: &str = "def running_max(xs):\n    \"\"\"Return a list whose i-th element is the largest of xs[0], ..., xs[i].\"\"\"\n    out = []\n    best = 0\n    for x in xs:\n        best = max(best, x)\n        out.append(best)\n    return out\n";
const FIXED: &str = "def running_max(xs):\n    out = []\n    for x in xs:\n        out.append(x if not out else max(out[-1], x))\n    return out\n";
const TESTS: &str = "import prog\nfrom prog import running_max\n\n\ndef test_rising():\n    assert running_max([1, 3, 2, 5]) == [1, 3, 3, 5]\n\n\ndef test_negative():\n    assert running_max([-3, -1, -2]) == [-3, -1, -1]\n\n\ndef test_empty():\n    assert prog.running_max([]) == []\n";

fn ldb(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ldb"))
        .args(args)
        .current_dir(dir)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("LDB_CONFIG")
        .output()
        .expect("run ldb")
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A directory holding prog.py and test_prog.py.
fn project(tests: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("prog.py"), PROG).expect("prog.py");
    std::fs::write(dir.path().join("test_prog.py"), tests).expect("test_prog.py");
    dir
}

#[test]
fn a_test_file_importing_the_program_both_ways_runs_against_it() {
    let dir = project(TESTS);
    let out = ldb(dir.path(), &["test", "prog.py", "--tests", "test_prog.py"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.starts_with("prog.py (program: prog.py)"), "{stdout}");
    assert!(
        stdout.contains("PASS     assert running_max([1, 3, 2, 5]) == [1, 3, 3, 5]"),
        "{stdout}"
    );
    assert!(
        stdout.contains("FAIL     assert running_max([-3, -1, -2]) == [-3, -1, -1]"),
        "{stdout}"
    );
    assert!(
        stdout.contains("got [0, 0, 0], expected [-3, -1, -1]"),
        "{stdout}"
    );
    // `import prog` + `prog.running_max(...)`: the module is the program under test.
    assert!(
        stdout.contains("PASS     import prog assert prog.running_max([]) == []"),
        "{stdout}"
    );
    assert!(stdout.contains("2 of 3 tests passed"), "{stdout}");
}

#[test]
fn the_fixed_program_passes_the_same_test_file() {
    let dir = project(TESTS);
    std::fs::write(dir.path().join("prog.py"), FIXED).expect("prog.py");
    let out = ldb(dir.path(), &["test", "prog.py", "--tests", "test_prog.py"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("3 of 3 tests passed"), "{stdout}");
}

#[test]
fn test_functions_with_set_up_and_helpers_run_whole() {
    let dir = project(
        "import math\nimport prog as p\n\nCASES = [([2, 1], [2, 2]), ([5], [5])]\n\ndef check(xs, want):\n    assert p.running_max(xs) == want\n\ndef test_cases():\n    for xs, want in CASES:\n        check(xs, want)\n\nclass TestMore:\n    def test_sqrt(self):\n        assert p.running_max([math.isqrt(16)]) == [4]\n",
    );
    let out = ldb(dir.path(), &["test", "prog.py", "--tests", "test_prog.py"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("2 of 2 tests passed"), "{stdout}");
}

#[test]
fn inline_tests_and_stdin_programs() {
    let dir = project(TESTS);
    let out = ldb(
        dir.path(),
        &[
            "test",
            "prog.py",
            "--test",
            "assert running_max([2, 1]) == [2, 2]",
            "--test",
            "assert running_max([-1]) == [-1]",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 of 2 tests passed"), "{stdout}");

    std::fs::write(
        dir.path().join("add.py"),
        "\"\"\"Print the sum of the two numbers on the input line.\"\"\"\na, b = map(int, input().split())\nprint(a - b)\n",
    )
    .expect("add.py");
    let out = ldb(
        dir.path(),
        &[
            "test",
            "add.py",
            "--io-test",
            "1 2",
            "3",
            "--io-test",
            "2 0",
            "2",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 of 2 tests passed"), "{stdout}");
}

#[test]
fn importing_a_missing_module_is_a_clear_error() {
    let dir = project("import no_such_module_xyz\nfrom prog import running_max\n\nassert running_max([1]) == [1]\n");
    let out = ldb(dir.path(), &["test", "prog.py", "--tests", "test_prog.py"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("error: test_prog.py: imports `no_such_module_xyz`"),
        "{stderr}"
    );
    assert!(stderr.contains("hint: "), "{stderr}");
    assert!(
        stderr.contains("pip install no_such_module_xyz"),
        "{stderr}"
    );

    // The usual slip: the test file imports the program under another name.
    let dir = project("import solution\n\nassert solution.running_max([1]) == [1]\n");
    let out = ldb(dir.path(), &["test", "prog.py", "--tests", "test_prog.py"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("error: test_prog.py: imports `solution`"),
        "{stderr}"
    );
    assert!(stderr.contains("hint: if `solution` means the program under test, import it by the program's file name: `from prog import ...`"), "{stderr}");
    let dir = project("from solution import running_max\n\nassert running_max([1]) == [1]\n");
    let out = ldb(dir.path(), &["test", "prog.py", "--tests", "test_prog.py"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("error: test_prog.py:1: imports `running_max` from `solution`, but the program under test is prog.py"), "{stderr}");
    assert!(stderr.contains("hint: rename `running_max` in the test file, or import it from the program (`from prog import running_max`)"), "{stderr}");
}

#[test]
fn test_files_ldb_cannot_run_are_refused_with_the_line_and_a_hint() {
    let dir = project("from prog import running_max\n\ndef test_f(tmp_path):\n    assert running_max([1]) == [1]\n");
    let out = ldb(dir.path(), &["test", "prog.py", "--tests", "test_prog.py"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("error: test_prog.py:3: test function `test_f` takes arguments"),
        "{stderr}"
    );
    assert!(stderr.contains("hint: "), "{stderr}");

    let out = ldb(dir.path(), &["test", "prog.py"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("error: prog.py: no tests"), "{stderr}");
    assert!(
        stderr.contains("hint: pass --tests test_prog.py"),
        "{stderr}"
    );

    std::fs::write(dir.path().join("task.json"), "{}").expect("task.json");
    let out = ldb(
        dir.path(),
        &["test", "task.json", "--tests", "test_prog.py"],
    );
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--tests applies to a Python program"),
        "{stderr}"
    );
}

/// `ldb fix` on the files against a server whose every reply is the fixed program.
async fn fix(dir: &Path, extra: &[&str]) -> Output {
    let server = MockServer::start().await;
    let reply = format!("Here is the corrected program:\n```python\n{FIXED}```\n");
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
    let config = dir.join("config.toml");
    std::fs::write(&config, "").expect("config");
    let base = format!("{}/v1", server.uri());
    let mut args = vec![
        "fix",
        "prog.py",
        "--tests",
        "test_prog.py",
        "--base-url",
        &base,
        "--model",
        "fake-model",
        "--no-cache",
        "--max-iters",
        "2",
    ];
    if !extra.contains(&"--strategy") {
        args.extend(["--strategy", "resample"]);
    }
    let config = config.display().to_string();
    args.extend(["--config", &config]);
    args.extend(extra);
    let dir: PathBuf = dir.to_path_buf();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        ldb(&dir, &args.iter().map(String::as_str).collect::<Vec<_>>())
    })
    .await
    .expect("join")
}

#[tokio::test]
async fn fix_prints_the_fixed_file_and_leaves_the_program_alone() {
    let dir = project(TESTS);
    let out = fix(dir.path(), &[]).await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(stdout, FIXED);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("prog.py")).expect("prog.py"),
        PROG
    );
    assert!(!dir.path().join("prog.py.orig").exists());
}

#[tokio::test]
async fn fix_write_replaces_the_file_and_keeps_the_original() {
    let dir = project(TESTS);
    let out = fix(dir.path(), &["--write"]).await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.contains("wrote prog.py (the original is in prog.py.orig)"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("prog.py")).expect("prog.py"),
        FIXED
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("prog.py.orig")).expect("prog.py.orig"),
        PROG
    );
    // And the tests now pass.
    let out = ldb(dir.path(), &["test", "prog.py", "--tests", "test_prog.py"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
}

#[tokio::test]
async fn the_default_search_fixes_a_file_whose_tests_import_it() {
    let dir = project(TESTS);
    let report = dir.path().join("report.json");
    let report_arg = report.display().to_string();
    let out = fix(
        dir.path(),
        &["--strategy", "search", "--report", &report_arg],
    )
    .await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(stdout, FIXED);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("report")).expect("JSON");
    assert_eq!(report["tasks"][0]["task_id"], "prog.py");
    assert_eq!(report["tasks"][0]["final_passed"], 3);
}
