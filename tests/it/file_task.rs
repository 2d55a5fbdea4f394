//! A plain `prog.py` and its tests, as a newcomer gives them: `ldb test prog.py --tests
//! test_prog.py`, `--test`, `--io-test`, the errors for test files ldb cannot run, and
//! `ldb fix prog.py --tests test_prog.py [--write]` against a fake OpenAI-compatible server.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common;
use crate::ldb_snapshot;

const PROG: &str = "def running_max(xs):\n    \"\"\"Return a list whose i-th element is the largest of xs[0], ..., xs[i].\"\"\"\n    out = []\n    best = 0\n    for x in xs:\n        best = max(best, x)\n        out.append(best)\n    return out\n";
const FIXED: &str = "def running_max(xs):\n    out = []\n    for x in xs:\n        out.append(x if not out else max(out[-1], x))\n    return out\n";
const TESTS: &str = "import prog\nfrom prog import running_max\n\n\ndef test_rising():\n    assert running_max([1, 3, 2, 5]) == [1, 3, 3, 5]\n\n\ndef test_negative():\n    assert running_max([-3, -1, -2]) == [-3, -1, -1]\n\n\ndef test_empty():\n    assert prog.running_max([]) == []\n";

/// FIXED spliced into PROG: the fix has no docstring, so PROG's stays.
fn fixed_in_prog() -> String {
    FIXED.replacen(
        "def running_max(xs):\n",
        "def running_max(xs):\n    \"\"\"Return a list whose i-th element is the largest of xs[0], ..., xs[i].\"\"\"\n",
        1,
    )
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
    // `import prog` + `prog.running_max(...)`: the module is the program under test.
    let dir = project(TESTS);
    ldb_snapshot!(common::ldb_in(
        dir.path(),
        &["test", "prog.py", "--tests", "test_prog.py"]
    ));
}

#[test]
fn the_fixed_program_passes_the_same_test_file() {
    let dir = project(TESTS);
    std::fs::write(dir.path().join("prog.py"), FIXED).expect("prog.py");
    ldb_snapshot!(common::ldb_in(
        dir.path(),
        &["test", "prog.py", "--tests", "test_prog.py"]
    ));
}

#[test]
fn test_functions_with_set_up_and_helpers_run_whole() {
    let dir = project(
        "import math\nimport prog as p\n\nCASES = [([2, 1], [2, 2]), ([5], [5])]\n\ndef check(xs, want):\n    assert p.running_max(xs) == want\n\ndef test_cases():\n    for xs, want in CASES:\n        check(xs, want)\n\nclass TestMore:\n    def test_sqrt(self):\n        assert p.running_max([math.isqrt(16)]) == [4]\n",
    );
    ldb_snapshot!(common::ldb_in(
        dir.path(),
        &["test", "prog.py", "--tests", "test_prog.py"]
    ));
}

#[test]
fn inline_tests_and_stdin_programs() {
    let dir = project(TESTS);
    let inline = common::ldb_in(
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
    ldb_snapshot!("inline_tests", inline);

    std::fs::write(
        dir.path().join("add.py"),
        "\"\"\"Print the sum of the two numbers on the input line.\"\"\"\na, b = map(int, input().split())\nprint(a - b)\n",
    )
    .expect("add.py");
    let stdin = common::ldb_in(
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
    ldb_snapshot!("stdin_program", stdin);
}

/// A project of two functions, `stats.py`, and the test file `test_stats.py` calling them.
fn stats_project(stats: &str, tests: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("stats.py"), stats).expect("stats.py");
    std::fs::write(dir.path().join("test_stats.py"), tests).expect("test_stats.py");
    dir
}

fn test_stats(dir: &tempfile::TempDir) -> Output {
    common::ldb_in(
        dir.path(),
        &["test", "stats.py", "--tests", "test_stats.py"],
    )
}

#[test]
fn with_several_functions_tested_the_one_the_failing_tests_call_is_under_test() {
    // A module's test file calls each of its functions: the one whose tests fail is the one to
    // debug, not a question for the user.
    let stats = "def mean(xs):\n    return sum(xs) / len(xs)\n\n\ndef median(xs):\n    \
                 s = sorted(xs)\n    m = len(s) // 2\n    \
                 return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 3\n";
    let dir = stats_project(
        stats,
        "from stats import mean, median\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n\n\
         def test_median():\n    assert median([1, 2, 3, 4]) == 2.5\n",
    );
    ldb_snapshot!("the_failing_ones_call_one", test_stats(&dir));
    // Every test passing: the first one called, said so.
    std::fs::write(dir.path().join("stats.py"), stats.replace("/ 3", "/ 2")).expect("stats.py");
    ldb_snapshot!("every_test_passes", test_stats(&dir));
    // A failing test that calls both: the user says which.
    std::fs::write(
        dir.path().join("test_stats.py"),
        "from stats import mean, median\n\ndef test_both():\n    \
         assert mean([1, 2]) == median([1, 2]) == 1\n",
    )
    .expect("test_stats.py");
    ldb_snapshot!("a_failing_test_calls_both", test_stats(&dir));
}

/// A module of classes alone was refused ("defines no function for the tests to call", with a
/// hint about stdin programs): the method the tests use is the one under test, or, when they
/// use several, the one the failing tests use.
#[test]
fn a_module_of_classes_tests_the_method_its_failing_tests_use() {
    let program = "class Stack:\n    def __init__(self):\n        self.items = []\n\n    \
                   def push(self, x):\n        self.items.insert(0, x)\n\n    \
                   @property\n    def top(self):\n        return self.items[-1]\n";
    let dir = stats_project(
        program,
        "from stats import Stack\n\ndef test_top():\n    s = Stack()\n    s.items = [1, 2]\n    \
         assert s.top == 2\n",
    );
    let out = test_stats(&dir);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 of 1"), "{stdout}\n{stderr}");
    // A helper function beside the class, which the tests never call, is not under test.
    std::fs::write(
        dir.path().join("stats.py"),
        format!("def helper(xs):\n    return xs[:]\n\n\n{program}"),
    )
    .expect("stats.py");
    let out = test_stats(&dir);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 of 1"), "{stdout}\n{stderr}");
    // Two methods used, one by the failing test: that one, said so.
    let two = "from stats import Stack\n\ndef test_push():\n    s = Stack()\n    s.push(1)\n    \
               s.push(2)\n    assert len(s.items) == 2\n\ndef test_top():\n    s = Stack()\n    \
               s.items = [1, 2]\n    assert s.top == 2\n";
    std::fs::write(dir.path().join("test_stats.py"), two).expect("test_stats.py");
    std::fs::write(dir.path().join("stats.py"), program.replace("[-1]", "[0]")).expect("stats.py");
    let out = test_stats(&dir);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("1 of 2"), "{stdout}\n{stderr}");
    assert!(stderr.contains("Stack.top"), "{stderr}");
    // A failing test that uses both: the user names one, told how.
    std::fs::write(
        dir.path().join("test_stats.py"),
        "from stats import Stack\n\ndef test_push():\n    s = Stack()\n    s.push(1)\n    \
         s.push(2)\n    assert s.top == 1\n",
    )
    .expect("test_stats.py");
    let out = test_stats(&dir);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("Stack.push, Stack.top") && stderr.contains("--entry"),
        "{stderr}"
    );
}

#[test]
fn a_missing_module_is_named_before_asking_which_function_is_under_test() {
    // Every test of a file that imports what does not exist fails, so the failing tests call
    // every function: the missing module is the error to show, not a question about --entry.
    let dir = stats_project(
        "def mean(xs):\n    return sum(xs) / len(xs)\n\n\ndef median(xs):\n    return sorted(xs)[len(xs) // 2]\n",
        "import no_such_module_xyz as data\nfrom stats import mean, median\n\n\
         def test_mean():\n    assert mean(data.xs) == 2\n\n\
         def test_median():\n    assert median(data.xs) == 2\n",
    );
    ldb_snapshot!(test_stats(&dir));
}

#[test]
fn importing_a_missing_module_is_a_clear_error() {
    let dir = project("import no_such_module_xyz\nfrom prog import running_max\n\nassert running_max([1]) == [1]\n");
    let test = |dir: &tempfile::TempDir| {
        common::ldb_in(dir.path(), &["test", "prog.py", "--tests", "test_prog.py"])
    };
    ldb_snapshot!("not_installed", test(&dir));
    // The usual slip: the test file imports the program under another name.
    let dir = project("import solution\n\nassert solution.running_max([1]) == [1]\n");
    ldb_snapshot!("the_program_by_another_name", test(&dir));
    let dir = project("from solution import running_max\n\nassert running_max([1]) == [1]\n");
    ldb_snapshot!("a_name_from_another_module", test(&dir));
}

#[test]
fn test_files_ldb_cannot_run_are_refused_with_the_line_and_a_hint() {
    // Without pytest's help (--no-pytest): auto goes to pytest, see pytest_project.rs.
    let dir = project("from prog import running_max\n\ndef test_f(tmp_path):\n    assert running_max([1]) == [1]\n");
    let out = common::ldb_in(
        dir.path(),
        &["test", "prog.py", "--tests", "test_prog.py", "--no-pytest"],
    );
    ldb_snapshot!("a_fixture_argument", out);
    ldb_snapshot!("no_tests", common::ldb_in(dir.path(), &["test", "prog.py"]));
    std::fs::write(dir.path().join("task.json"), "{}").expect("task.json");
    let out = common::ldb_in(
        dir.path(),
        &["test", "task.json", "--tests", "test_prog.py"],
    );
    ldb_snapshot!("tests_for_a_task_file", out);
}

/// How a fake server answers and how ldb is started.
#[derive(Default)]
struct Run<'a> {
    /// Every reply's program (default FIXED).
    reply: Option<&'a str>,
    /// Each reply waits this long.
    delay: Option<std::time::Duration>,
    /// Extra environment for ldb.
    env: Vec<(&'a str, &'a str)>,
    /// The program file (default prog.py).
    program: Option<&'a str>,
}

/// `ldb fix` on the files against a server whose every reply is the fixed program.
async fn fix(dir: &Path, extra: &[&str]) -> Output {
    fix_with(dir, extra, Run::default()).await
}

async fn fix_with(dir: &Path, extra: &[&str], run: Run<'_>) -> Output {
    let server = MockServer::start().await;
    let reply = format!(
        "Here is the corrected program:\n```python\n{}```\n",
        run.reply.unwrap_or(FIXED)
    );
    let mut response = ResponseTemplate::new(200).set_body_json(serde_json::json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    }));
    if let Some(delay) = run.delay {
        response = response.set_delay(delay);
    }
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(response)
        .mount(&server)
        .await;
    let config = dir.join("config.toml");
    std::fs::write(&config, "").expect("config");
    let base = format!("{}/v1", server.uri());
    let mut args = vec![
        "fix",
        run.program.unwrap_or("prog.py"),
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
    let env: Vec<(String, String)> = run
        .env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    tokio::task::spawn_blocking(move || {
        common::ldb()
            .args(&args)
            .current_dir(&dir)
            .envs(env)
            .output()
            .expect("run ldb")
    })
    .await
    .expect("join")
}

#[tokio::test]
async fn fix_prints_the_fixed_file_and_leaves_the_program_alone() {
    let dir = project(TESTS);
    let out = fix(dir.path(), &[]).await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(6), "{stdout}\n{stderr}");
    assert_eq!(stdout, fixed_in_prog());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("prog.py")).expect("prog.py"),
        PROG
    );
    assert!(!dir.path().join("prog.py.ldb-orig").exists());
}

#[tokio::test]
async fn fix_write_replaces_the_file_and_keeps_the_original() {
    let dir = project(TESTS);
    let out = fix(dir.path(), &["--write", "--unconfirmed"]).await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(6), "{stdout}\n{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.contains("wrote prog.py (the original is in prog.py.ldb-orig)"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("prog.py")).expect("prog.py"),
        fixed_in_prog()
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("prog.py.ldb-orig")).expect("prog.py.ldb-orig"),
        PROG
    );
    // And the tests now pass.
    let out = common::ldb_in(dir.path(), &["test", "prog.py", "--tests", "test_prog.py"]);
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
    assert_eq!(out.status.code(), Some(6), "{stdout}\n{stderr}");
    assert_eq!(stdout, fixed_in_prog());
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("report")).expect("JSON");
    assert_eq!(report["tasks"][0]["task_id"], "prog.py");
    assert_eq!(report["tasks"][0]["final_passed"], 3);
}

// ------------------------------------------------------------ --write never loses code

/// A module with more than the function under test.
const MODULE: &str = "\"\"\"Running maxima, and other things.\"\"\"\nimport os\n\nLIMIT = 10  # the cap\n\n\ndef helper(x):\n    return x * 2\n\n\ndef running_max(xs):\n    \"\"\"Return a list whose i-th element is the largest of xs[0], ..., xs[i].\"\"\"\n    out = []\n    best = 0\n    for x in xs:\n        best = max(best, x)\n        out.append(best)\n    return out\n\n\ndef another():\n    return helper(LIMIT) + len(os.sep)\n";

fn module_fixed() -> String {
    MODULE.replace(
        "    out = []\n    best = 0\n    for x in xs:\n        best = max(best, x)\n        out.append(best)\n",
        "    out = []\n    for x in xs:\n        out.append(x if not out else max(out[-1], x))\n",
    )
}

fn module_project() -> tempfile::TempDir {
    let dir = project(TESTS);
    std::fs::write(dir.path().join("prog.py"), MODULE).expect("prog.py");
    dir
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[tokio::test]
async fn write_keeps_the_rest_of_the_module() {
    let dir = module_project();
    // The model's reply holds its own copy of `helper` and a call at the end: neither goes in.
    let reply =
        format!("import os\n\ndef helper(x):\n    return 0\n\n{FIXED}\nprint(running_max([1]))\n");
    let out = fix_with(
        dir.path(),
        &["--write", "--unconfirmed"],
        Run {
            reply: Some(&reply),
            ..Run::default()
        },
    )
    .await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(6), "{stdout}\n{stderr}");
    assert_eq!(read(dir.path(), "prog.py"), module_fixed());
    assert_eq!(read(dir.path(), "prog.py.ldb-orig"), MODULE);
    // The diff shows the function's change only.
    assert!(stderr.contains("-    best = 0\n"), "{stderr}");
    assert!(!stderr.contains("-def helper"), "{stderr}");
    assert!(!stderr.contains("LIMIT"), "{stderr}");
}

#[tokio::test]
async fn a_kill_before_or_after_the_rename_leaves_the_original_or_the_whole_fix() {
    for (point, expected) in [
        ("before-rename", MODULE.to_string()),
        ("after-rename", module_fixed()),
    ] {
        let dir = module_project();
        let out = fix_with(
            dir.path(),
            &["--write", "--unconfirmed"],
            Run {
                env: vec![("LDB_FAULT", point)],
                ..Run::default()
            },
        )
        .await;
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(9), "{point}: {:?}", text(&out));
        assert_eq!(read(dir.path(), "prog.py"), expected, "{point}");
        // The backup was complete before the file was touched.
        assert_eq!(read(dir.path(), "prog.py.ldb-orig"), MODULE, "{point}");
        // The next run cleans up the temp file the killed one left.
        let _ = fix(dir.path(), &["--write", "--unconfirmed"]).await;
        let left: Vec<String> = std::fs::read_dir(dir.path())
            .expect("dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("ldb-tmp"))
            .collect();
        assert!(left.is_empty(), "{point}: {left:?}");
        assert_eq!(read(dir.path(), "prog.py"), module_fixed(), "{point}");
    }
}

#[tokio::test]
async fn an_empty_or_unrelated_backup_is_never_trusted() {
    let dir = module_project();
    // A backup left empty by a killed run, and an editor's unrelated one under the next name.
    std::fs::write(dir.path().join("prog.py.ldb-orig"), "").expect("empty backup");
    std::fs::write(dir.path().join("prog.py.ldb-orig.1"), "unrelated\n").expect("backup");
    let out = fix(dir.path(), &["--write", "--unconfirmed"]).await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(6), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("the original is in prog.py.ldb-orig.2"),
        "{stderr}"
    );
    assert_eq!(read(dir.path(), "prog.py.ldb-orig.2"), MODULE);
    assert_eq!(read(dir.path(), "prog.py.ldb-orig"), "");
    assert_eq!(read(dir.path(), "prog.py.ldb-orig.1"), "unrelated\n");
    assert_eq!(read(dir.path(), "prog.py"), module_fixed());
}

#[tokio::test]
async fn concurrent_write_runs_take_turns() {
    let dir = module_project();
    let slow = || Run {
        delay: Some(std::time::Duration::from_millis(1500)),
        ..Run::default()
    };
    let first = fix_with(dir.path(), &["--write", "--unconfirmed"], slow());
    let second = async {
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        fix_with(dir.path(), &["--write", "--unconfirmed"], slow()).await
    };
    let (a, b) = tokio::join!(first, second);
    let (_, err_a) = text(&a);
    let (_, err_b) = text(&b);
    assert_eq!(a.status.code(), Some(6), "{err_a}");
    assert_eq!(b.status.code(), Some(0), "{err_b}");
    assert!(err_b.contains("waiting for another ldb run"), "{err_b}");
    // The second run read the first one's fix, which passes: nothing more to do.
    assert!(
        err_b.contains("passes its tests; left unchanged"),
        "{err_b}"
    );
    assert_eq!(read(dir.path(), "prog.py"), module_fixed());
    assert_eq!(read(dir.path(), "prog.py.ldb-orig"), MODULE);
    assert!(!dir.path().join("prog.py.ldb-orig.1").exists());
}

#[tokio::test]
async fn an_edit_made_during_the_run_is_kept() {
    let dir = module_project();
    let edited = MODULE.replace("LIMIT = 10", "LIMIT = 11");
    let run = fix_with(
        dir.path(),
        &["--write", "--unconfirmed"],
        Run {
            delay: Some(std::time::Duration::from_millis(1500)),
            ..Run::default()
        },
    );
    let edit = async {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        std::fs::write(dir.path().join("prog.py"), &edited).expect("edit");
    };
    let (out, ()) = tokio::join!(run, edit);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(stderr.contains("changed while ldb was running"), "{stderr}");
    assert!(stderr.contains("prog.py.ldb-fix"), "{stderr}");
    assert_eq!(read(dir.path(), "prog.py"), edited);
    assert_eq!(read(dir.path(), "prog.py.ldb-fix"), module_fixed());
    assert!(!dir.path().join("prog.py.ldb-orig").exists());
}

#[tokio::test]
async fn a_bom_and_crlf_lines_round_trip() {
    let dir = module_project();
    let crlf = |t: &str| t.replace('\n', "\r\n");
    let mut original = b"\xEF\xBB\xBF".to_vec();
    original.extend_from_slice(crlf(MODULE).as_bytes());
    std::fs::write(dir.path().join("prog.py"), &original).expect("prog.py");
    // Tests run: the BOM is no syntax error.
    let out = common::ldb_in(dir.path(), &["test", "prog.py", "--tests", "test_prog.py"]);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("2 of 3 tests passed"), "{stdout}");
    let out = fix(dir.path(), &["--write", "--unconfirmed"]).await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(6), "{stdout}\n{stderr}");
    let mut expected = b"\xEF\xBB\xBF".to_vec();
    expected.extend_from_slice(crlf(&module_fixed()).as_bytes());
    assert_eq!(
        String::from_utf8_lossy(&std::fs::read(dir.path().join("prog.py")).expect("prog.py")),
        String::from_utf8_lossy(&expected)
    );
    assert_eq!(
        std::fs::read(dir.path().join("prog.py.ldb-orig")).expect("backup"),
        original
    );
    // Only the function's lines are in the diff.
    assert_eq!(stderr.matches("\n-    ").count(), 3, "{stderr}");
}

#[tokio::test]
async fn a_full_disk_leaves_the_file_intact_and_prints_the_fix() {
    // A real ENOSPC: a 64 KiB tmpfs mounted for the test (needs root; skipped otherwise).
    let dir = tempfile::tempdir().expect("tempdir");
    let mnt = dir.path().join("small");
    std::fs::create_dir(&mnt).expect("mnt");
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&mnt)
        .output();
    if !mounted.as_ref().is_ok_and(|o| o.status.success()) {
        eprintln!(
            "skipped: cannot mount a small tmpfs here (needs root): {:?}",
            mounted.map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
        );
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(mnt.clone());
    std::fs::write(mnt.join("prog.py"), MODULE).expect("prog.py");
    std::fs::write(mnt.join("test_prog.py"), TESTS).expect("tests");
    // Fill the file system so that neither a backup nor the new file fits.
    let filler = vec![b'x'; 4096];
    let mut f = std::fs::File::create(mnt.join("filler")).expect("filler");
    use std::io::Write;
    while f.write_all(&filler).is_ok() {}
    drop(f);
    let out = fix(&mnt, &["--write", "--unconfirmed"]).await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(stderr.contains("prog.py is unchanged"), "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert_eq!(stdout, module_fixed());
    assert_eq!(read(&mnt, "prog.py"), MODULE);
}

// ------------------------------------------------------------ --peers

#[test]
fn peers_in_a_directory_vote_and_the_program_itself_is_left_out() {
    // `x ** 1` passes the one visible test; the class's other submissions square. Edits alone
    // (no model is reachable): the peers are the only votes, and the edit they agree with is
    // printed. The directory holds the program itself too, which must not vote for itself, and
    // the test file, which is no program.
    let dir = tempfile::tempdir().expect("tempdir");
    let class = dir.path().join("class");
    std::fs::create_dir(&class).expect("class dir");
    let prog = "def sum_squares(xs):\n    return sum(x ** 1 for x in xs)\n";
    std::fs::write(class.join("prog.py"), prog).expect("prog.py");
    std::fs::write(
        class.join("test_prog.py"),
        "from prog import sum_squares\n\ndef test_one():\n    assert sum_squares([1]) == 1\n",
    )
    .expect("test_prog.py");
    std::fs::write(
        class.join("ann.py"),
        "def sum_squares(xs):\n    return sum(v * v for v in xs)\n",
    )
    .expect("ann.py");
    std::fs::write(
        class.join("bob.py"),
        "def sum_squares(xs):\n    t = 0\n    for x in xs:\n        t += x ** 2\n    return t\n",
    )
    .expect("bob.py");
    // Edits alone: no model is reachable.
    let fix_with_peers = || {
        common::ldb_in(
            &class,
            &[
                "fix",
                "prog.py",
                "--tests",
                "test_prog.py",
                "--peers",
                ".",
                "--proposers",
                "mutate",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--model",
                "none",
            ],
        )
    };
    let out = fix_with_peers();
    let (stdout, stderr) = text(&out);
    assert!(
        stderr.contains("2 of 2 peer programs pass the visible tests"),
        "{stderr}"
    );
    assert!(
        stdout.contains("sum(x ** 2 for x in xs)"),
        "{stdout}\n{stderr}"
    );
    assert!(stderr.contains("the fix is confirmed"), "{stderr}");

    // A copy of the program elsewhere (the class as handed in) is the program itself.
    std::fs::create_dir(class.join("handed-in")).expect("handed-in");
    std::fs::write(class.join("handed-in").join("prog.py"), prog).expect("copy");
    let out = fix_with_peers();
    let (_, stderr) = text(&out);
    assert!(
        stderr.contains("2 of 2 peer programs pass the visible tests"),
        "{stderr}"
    );

    let missing = common::ldb_in(
        &class,
        &[
            "fix",
            "prog.py",
            "--tests",
            "test_prog.py",
            "--peers",
            "nowhere",
        ],
    );
    ldb_snapshot!("peers_that_are_not_there", missing);
}

/// `broken.py` (a syntax error) beside `prog.py`, tests that import `prog`: the results would be
/// prog.py's, reported as broken.py's. Refused with exit 2, naming the module, before anything
/// runs or is written; with pytest and without.
#[test]
fn tests_that_import_another_module_are_refused() {
    let dir = project(TESTS);
    let broken = "def running_max(xs)\n    return xs\n";
    std::fs::write(dir.path().join("broken.py"), broken).expect("broken.py");
    for (name, args) in [
        (
            "plain",
            vec!["test", "broken.py", "--tests", "test_prog.py"],
        ),
        (
            "pytest",
            vec!["test", "broken.py", "--tests", "test_prog.py", "--pytest"],
        ),
        (
            "node",
            vec!["test", "broken.py", "--tests", "test_prog.py::test_rising"],
        ),
        (
            "fix",
            vec!["fix", "broken.py", "--tests", "test_prog.py", "--write"],
        ),
    ] {
        ldb_snapshot!(
            format!("another_module_refused_{name}"),
            common::ldb_in(dir.path(), &args)
        );
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("broken.py")).expect("read"),
        broken
    );
    // The tests of prog.py, given prog.py, still run.
    let out = common::ldb_in(dir.path(), &["test", "prog.py", "--tests", "test_prog.py"]);
    assert_eq!(out.status.code(), Some(1), "{:?}", text(&out));
}

/// The fix of a run that nothing independent confirms (one model program, the LDB loop: no
/// independently written program agrees, no regression test guards it) is printed, not
/// written, and exits 6; `--unconfirmed` writes it, still exiting 6.
#[tokio::test]
async fn an_unconfirmed_fix_is_not_written_without_the_flag() {
    let dir = module_project();
    let out = fix(dir.path(), &["--write"]).await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(6), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("Fixed (plausible, not confirmed)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("prog.py left unchanged") && stderr.contains("--unconfirmed"),
        "{stderr}"
    );
    assert_eq!(read(dir.path(), "prog.py"), MODULE);
    assert!(!dir.path().join("prog.py.ldb-orig").exists());
    assert_eq!(stdout, module_fixed(), "the fix is printed");

    let out = fix(dir.path(), &["--write", "--unconfirmed"]).await;
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(6), "{stdout}\n{stderr}");
    assert_eq!(read(dir.path(), "prog.py"), module_fixed());
    assert_eq!(read(dir.path(), "prog.py.ldb-orig"), MODULE);
}
