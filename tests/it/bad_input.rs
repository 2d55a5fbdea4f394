//! Inputs with limits, checked before any model call: a visible test that does not parse is bad
//! input naming it, a prompt no model can take is refused unsent, and a `.jsonl` with bad lines
//! runs its good tasks and names each bad line (`--strict` stops at the first).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use ldb::generate::model::config::ModelConfig;
use ldb::generate::model::openai::OpenAiModel;
use ldb::generate::model::{ChatModel, ChatRequest, Message, ModelError, Role};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A fake endpoint answering every chat request with a program; its requests are counted.
async fn endpoint() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(common::completion(
            "```python\ndef f(x):\n    return x + 1\n```\n",
        )))
        .mount(&server)
        .await;
    server
}

/// `ldb fix FILE --quiet` against `server`, run from `dir`.
async fn fix(server: &MockServer, dir: &Path, file: &str, extra: &[&str]) -> Output {
    let mut quiet = vec!["--quiet"];
    quiet.extend(extra);
    fix_loud(server, dir, file, &quiet).await
}

/// `ldb fix FILE` against `server`, run from `dir`, its notes and warnings left on.
async fn fix_loud(server: &MockServer, dir: &Path, file: &str, extra: &[&str]) -> Output {
    let config = dir.join("config.toml");
    std::fs::write(&config, "").expect("config");
    let url = format!("{}/v1", server.uri());
    let mut args = vec![
        "fix",
        file,
        "--base-url",
        &url,
        "--model",
        "fake-model",
        "--no-cache",
        "--max-iters",
        "1",
    ];
    let config = config.display().to_string();
    args.extend(["--config", &config]);
    args.extend(extra);
    let (args, dir): (Vec<String>, PathBuf) = (
        args.iter().map(|s| s.to_string()).collect(),
        dir.to_path_buf(),
    );
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        common::ldb_in(&dir, &args)
    })
    .await
    .expect("ldb fix")
}

async fn requests(server: &MockServer) -> usize {
    server.received_requests().await.unwrap_or_default().len()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn task(id: &str, visible: &[&str], seed: &str) -> serde_json::Value {
    serde_json::json!({
        "task_id": id,
        "prompt": "def f(x):\n    \"\"\"x plus one.\"\"\"\n",
        "entry_point": "f",
        "visible_tests": visible,
        "seed": seed,
    })
}

const WRONG: &str = "def f(x):\n    return x\n";
const RIGHT: &str = "def f(x):\n    return x + 1\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_visible_test_that_does_not_parse_is_refused_before_any_model_call() {
    let server = endpoint().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = task("bad/0", &["assert f(1) == 2", "assert f(1 =="], WRONG);
    std::fs::write(dir.path().join("task.json"), bad.to_string()).expect("task");
    let out = fix(&server, dir.path(), "task.json", &[]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("task.json") && err.contains("`visible_tests[1]`"),
        "{err}"
    );
    assert!(err.contains("does not parse"), "{err}");
    // A program with a --test that does not parse, likewise.
    std::fs::write(dir.path().join("prog.py"), WRONG).expect("program");
    let out = fix(
        &server,
        dir.path(),
        "prog.py",
        &["--test", "assert f(1) =="],
    )
    .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("`visible_tests[0]`"), "{err}");
    assert_eq!(requests(&server).await, 0, "a model was asked");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_huge_prompt_is_refused_before_any_request() {
    let server = endpoint().await;
    let dir = tempfile::tempdir().expect("tempdir");
    // Over 8 MiB: more than any model's context, with no context length configured.
    let mut huge = task("huge/0", &["assert f(1) == 2"], WRONG);
    huge["prompt"] = serde_json::json!(format!(
        "def f(x):\n    \"\"\"{}\"\"\"\n",
        "x".repeat(9 << 20)
    ));
    std::fs::write(dir.path().join("huge.json"), huge.to_string()).expect("task");
    let out = fix(&server, dir.path(), "huge.json", &[]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("`prompt`") && err.contains("huge/0"), "{err}");
    // With the endpoint's context given, far smaller prompts are refused too.
    let mut long = task("long/0", &["assert f(1) == 2"], WRONG);
    long["prompt"] = serde_json::json!("x".repeat(20_000));
    std::fs::write(dir.path().join("long.json"), long.to_string()).expect("task");
    let out = fix(
        &server,
        dir.path(),
        "long.json",
        &["--context-tokens", "1000"],
    )
    .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`prompt`") && err.contains("1000 tokens"),
        "{err}"
    );
    assert_eq!(requests(&server).await, 0, "a request was sent");

    // The client itself never sends (nor retries) what the context cannot take.
    let model = OpenAiModel::new(
        ModelConfig::new(format!("{}/v1", server.uri()), "fake-model")
            .with_context_tokens(Some(100)),
    )
    .expect("client");
    let request = ChatRequest::new(vec![Message {
        role: Role::User,
        content: "y".repeat(10_000),
    }]);
    let err = model.chat(&request).await.expect_err("refused");
    assert!(
        matches!(err, ModelError::PromptTooLarge { bytes: 10_000, .. }),
        "{err}"
    );
    assert_eq!(requests(&server).await, 0, "a request was sent");
}

/// A `.jsonl` of two good tasks around three bad lines: bad JSON, a record that is not a task,
/// a visible test that does not parse.
fn mixed(dir: &Path) -> PathBuf {
    let lines = [
        task("good/0", &["assert f(1) == 2"], RIGHT).to_string(),
        "{\"task_id\": \"broken\", ".to_string(),
        serde_json::json!({"task_id": "odd/1", "prompt": "p", "entry_point": "not a name", "visible_tests": ["assert True"]}).to_string(),
        task("unparsable/2", &["assert f(1) == 2", "assert f(("], RIGHT).to_string(),
        task("good/1", &["assert f(2) == 3"], RIGHT).to_string(),
    ];
    let path = dir.join("mixed.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").expect("tasks");
    path
}

#[test]
fn a_mixed_jsonl_runs_its_good_tasks_and_names_each_bad_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    mixed(dir.path());
    let out = common::ldb_in(dir.path(), &["test", "mixed.jsonl"]);
    let (text, err) = (String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(
        text.contains("good/0") && text.contains("good/1"),
        "{text}\n{err}"
    );
    for line in ["mixed.jsonl:2:", "mixed.jsonl:3:", "mixed.jsonl:4:"] {
        assert!(err.contains(line), "{line} not named: {err}");
    }
    assert!(err.contains("`visible_tests[1]`"), "{err}");
    // The good tasks passed; the bad lines make it bad input.
    assert_eq!(out.status.code(), Some(2), "{err}");

    // --strict stops at the first bad line, before any task runs.
    let out = common::ldb_in(dir.path(), &["test", "mixed.jsonl", "--strict"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        err.contains("mixed.jsonl:2:") && !err.contains("mixed.jsonl:3:"),
        "{err}"
    );

    // ldb eval scores the good tasks and names the bad lines.
    let out = common::ldb_in(
        dir.path(),
        &[
            "eval",
            "--dataset",
            "mixed.jsonl",
            "--strategy",
            "none",
            "--out",
            "run",
            "--quiet",
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("mixed.jsonl:4:"), "{err}");
    let results = std::fs::read_to_string(dir.path().join("run/none.jsonl")).expect("results");
    let ids: Vec<String> = results
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("record"))
        .map(|r| r["task_id"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert!(ids.contains(&"good/0".to_string()) && ids.contains(&"good/1".to_string()));
}

/// `ldb` with `args` in `dir`, killed if it has not ended within a minute (a FIFO read would
/// block for ever).
fn ldb_bounded(args: &[&str], dir: &Path) -> Output {
    let mut child = common::ldb()
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ldb");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("ldb {args:?} did not end: it is reading a special file");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

#[test]
fn dev_zero_and_a_fifo_are_refused_by_name_not_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("prog.py"), WRONG).expect("program");
    let fifo = dir.path().join("fifo.py");
    let c = std::ffi::CString::new(fifo.to_str().expect("utf-8 path")).expect("path");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("task.json")).expect("symlink");
    for args in [
        &["test", "prog.py", "--tests", "/dev/zero"][..],
        &["test", "prog.py", "--tests", "fifo.py"][..],
        &["test", "fifo.py", "--test", "assert f(1) == 2"][..],
        &["test", "task.json"][..],
        &["fix", "prog.py", "--tests", "/dev/zero", "--write"][..],
    ] {
        let out = ldb_bounded(args, dir.path());
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("not a regular file"), "{args:?}: {err}");
        assert!(err.contains("hint:"), "{args:?}: {err}");
    }
    // Nothing was written beside the program.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["fifo.py", "prog.py", "task.json"]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("prog.py")).expect("program"),
        WRONG
    );
}

/// A task written with a `tests` field (as other tools name it) was read as having no tests, and
/// the one error came twice, the second as "no line holds a task (1 bad lines)".
#[test]
fn a_tests_field_is_named_with_where_its_tests_belong_in_one_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let record = serde_json::json!({
        "task_id": "demo/0", "prompt": "def f(x):\n", "entry_point": "f",
        "tests": ["assert f(1) == 2"], "seed": RIGHT,
    });
    std::fs::write(dir.path().join("task.json"), record.to_string()).expect("task");
    for cmd in ["test", "fix"] {
        let out = common::ldb_in(dir.path(), &[cmd, "task.json"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {err}");
        assert!(
            err.contains("`tests`") && err.contains("visible_tests") && err.contains("hint:"),
            "{cmd}: {err}"
        );
        assert_eq!(err.matches("error:").count(), 1, "{cmd}: {err}");
    }
    // Beside ldb's own test fields a `tests` key is metadata, as before.
    let mut record = record;
    record["visible_tests"] = serde_json::json!(["assert f(1) == 2"]);
    std::fs::write(dir.path().join("task.json"), record.to_string()).expect("task");
    let out = common::ldb_in(dir.path(), &["test", "task.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// `ldb test --tests NODE` without a program was clap's bare "required arguments were not
/// provided: <TASK>"; `ldb fix` and `ldb locate` take that form, so say what `ldb test` needs.
#[test]
fn ldb_test_without_a_program_says_to_name_it_or_locate() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("test_m.py"),
        "def test_f():\n    assert 1 == 2\n",
    )
    .expect("test file");
    let out = common::ldb_in(dir.path(), &["test", "--tests", "test_m.py::test_f"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no program given") && err.contains("ldb locate --tests"),
        "{err}"
    );
}

/// An expected string that lost its quotes (`== two`) fails with a NameError whatever the
/// program returns: `ldb test` and `ldb fix` name the test and the fix, and still run it.
#[tokio::test(flavor = "multi_thread")]
async fn a_test_comparing_with_an_unquoted_string_is_named() {
    let server = endpoint().await;
    let dir = tempfile::tempdir().expect("tempdir");
    let tests = ["assert f(1) == 2", "assert str(f(1)) == two"];
    let typo = task("typo/0", &tests, WRONG);
    std::fs::write(dir.path().join("task.json"), typo.to_string()).expect("task");
    let out = common::ldb_in(dir.path(), &["test", "task.json"]);
    let (text, err) = (String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert_eq!(out.status.code(), Some(1), "{text}\n{err}");
    assert!(text.contains("NameError"), "{text}");
    assert!(
        err.contains("warning: typo/0 visible_tests[1] compares with `two`, which neither"),
        "{err}"
    );
    assert!(
        err.contains("hint: quote an expected string ('two')"),
        "{err}"
    );

    // A program that defines the name is not warned about.
    let defined = task("typo/1", &tests, "two = '2'\ndef f(x):\n    return x + 1\n");
    std::fs::write(dir.path().join("defined.json"), defined.to_string()).expect("task");
    let out = common::ldb_in(dir.path(), &["test", "defined.json"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("compares with"), "{err}");

    // ldb fix says so before it starts.
    let out = fix_loud(&server, dir.path(), "task.json", &[]).await;
    let err = stderr(&out);
    assert!(
        err.contains("warning: typo/0 visible_tests[1] compares with `two`"),
        "{err}"
    );
}
