//! `ldb fix` end to end against a fake OpenAI-compatible server that records every request:
//! the loop runs for real (sandbox, tracer, prompts, parsing); only the model is scripted.

use crate::common;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The exit status of a fix the LDB loop found: nothing independent confirms it (no
/// independently written program agrees, no regression test guarded it).
const UNCONFIRMED: i32 = 6;

const FIXED: &str = "def sum_evens(xs: list) -> int:\n    total = 0\n    for x in xs:\n        if x % 2 == 0:\n            total += x\n    return total\n";
const VERDICTS: &str = r#"{"verdicts": [{"block": "BLOCK-0", "correct": true, "explanation": "total starts at 0"}, {"block": "BLOCK-1", "correct": false, "explanation": "range(1, len(xs)) skips the first element"}]}"#;

/// Replies in order; a request past the end gets a 500 so a runaway loop shows up as a failure.
struct Script(Mutex<VecDeque<ResponseTemplate>>);

impl Respond for Script {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        self.0
            .lock()
            .ok()
            .and_then(|mut q| q.pop_front())
            .unwrap_or_else(|| ResponseTemplate::new(500).set_body_string("script exhausted"))
    }
}

fn chat(content: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(common::completion(content))
}

fn program_reply(code: &str) -> ResponseTemplate {
    chat(&format!(
        "Here is the corrected program:\n```python\n{code}```\n"
    ))
}

fn task_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sum_evens/task.json")
}

struct Run {
    status: i32,
    stdout: String,
    stderr: String,
    report: serde_json::Value,
    requests: Vec<serde_json::Value>,
}

async fn run_fix(replies: Vec<ResponseTemplate>, extra: &[&str]) -> Run {
    run_fix_on(&task_path(), replies, extra).await
}

async fn run_fix_on(task: &Path, replies: Vec<ResponseTemplate>, extra: &[&str]) -> Run {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Script(Mutex::new(replies.into())))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("report.json");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "").expect("config");
    let mut args: Vec<String> = vec![
        "fix".into(),
        task.display().to_string(),
        "--base-url".into(),
        format!("{}/v1", server.uri()),
        "--model".into(),
        "fake-model".into(),
        "--config".into(),
        config.display().to_string(),
        "--no-cache".into(),
        "--report".into(),
        report.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    // These tests pin LDB's chain; the search has tests of its own (search.rs).
    if !extra.contains(&"--strategy") {
        args.extend(["--strategy".to_string(), "ldb".to_string()]);
    }
    if !extra.contains(&"--max-iters") {
        args.extend(["--max-iters".to_string(), "3".to_string()]);
    }
    let output = tokio::process::Command::from(common::ldb())
        .args(&args)
        .output()
        .await
        .expect("run ldb");
    let requests = server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).expect("request body is JSON"))
        .collect();
    let report = std::fs::read_to_string(&report)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null);
    Run {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        report,
        requests,
    }
}

/// Text of every message of a request, joined.
fn request_text(request: &serde_json::Value) -> String {
    request["messages"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .filter_map(|m| m["content"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// No prompt may contain any part of the hidden tests.
fn assert_no_hidden_tests(run: &Run) {
    let task: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(task_path()).expect("task")).expect("json");
    let hidden = task["hidden_tests"]
        .as_str()
        .expect("the example has hidden tests");
    for request in &run.requests {
        let text = request_text(request);
        for line in hidden.lines().map(str::trim).filter(|l| l.len() > 8) {
            assert!(
                !text.contains(line),
                "hidden test text `{line}` was sent to the model"
            );
        }
    }
}

fn first_task(run: &Run) -> &serde_json::Value {
    &run.report["tasks"][0]
}

#[tokio::test(flavor = "multi_thread")]
async fn a_buggy_seed_is_traced_judged_regenerated_and_fixed() {
    let run = run_fix(vec![chat(VERDICTS), program_reply(FIXED)], &[]).await;
    assert_eq!(run.status, UNCONFIRMED, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, FIXED);
    assert_eq!(run.requests.len(), 2);
    // The verdict request asks for structured output and shows the trace and the failure.
    let debug = &run.requests[0];
    assert_eq!(debug["response_format"]["type"], "json_schema");
    let text = request_text(debug);
    assert!(text.contains("[BLOCK-1]"), "{text}");
    assert!(text.contains("got 2, expected 4"), "{text}");
    // The regeneration request carries the wrong block's explanation.
    let regen = request_text(&run.requests[1]);
    assert!(
        regen.contains("range(1, len(xs)) skips the first element"),
        "{regen}"
    );
    let task = first_task(&run);
    assert_eq!(task["status"], "fixed");
    assert_eq!(task["iterations"][0]["verdicts"][1]["correct"], false);
    assert_eq!(task["iterations"][0]["verdicts"][1]["block"], "BLOCK-1");
    assert!(task["iterations"][0]["diff"]
        .as_str()
        .is_some_and(|d| d.contains("+    for x in xs:")));
    assert_eq!(task["final_passed"], 3);
    assert_eq!(task["usage"]["calls"], 2);
    assert_eq!(task["usage"]["prompt_tokens"], 200);
    assert_no_hidden_tests(&run);
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_verdicts_get_one_repair_request() {
    let run = run_fix(
        vec![
            chat("Let me think about this program."),
            chat(VERDICTS),
            program_reply(FIXED),
        ],
        &[],
    )
    .await;
    assert_eq!(run.status, UNCONFIRMED, "stderr: {}", run.stderr);
    assert_eq!(run.requests.len(), 3);
    assert!(request_text(&run.requests[1]).contains("could not read your verdicts"));
    let it = &first_task(&run)["iterations"][0];
    assert_eq!(it["verdicts"].as_array().map(|v| v.len()), Some(2));
    assert!(it["verdict_problem"].as_str().is_some());
    assert_no_hidden_tests(&run);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reply_without_code_gets_one_repair_request() {
    let run = run_fix(
        vec![
            chat(VERDICTS),
            chat("I fixed the loop so it starts at zero."),
            program_reply(FIXED),
        ],
        &[],
    )
    .await;
    assert_eq!(run.status, UNCONFIRMED, "stderr: {}", run.stderr);
    assert_eq!(run.requests.len(), 3);
    assert!(request_text(&run.requests[2]).contains("could not use your reply"));
    assert_eq!(first_task(&run)["status"], "fixed");
    assert_no_hidden_tests(&run);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_error_is_retried() {
    let run = run_fix(
        vec![
            ResponseTemplate::new(500).set_body_string("upstream exploded"),
            chat(VERDICTS),
            program_reply(FIXED),
        ],
        &[],
    )
    .await;
    assert_eq!(run.status, UNCONFIRMED, "stderr: {}", run.stderr);
    assert_eq!(run.requests.len(), 3);
    assert_eq!(first_task(&run)["iterations"][0]["calls"][0]["attempts"], 2);
    assert_no_hidden_tests(&run);
}

#[tokio::test(flavor = "multi_thread")]
async fn rate_limits_honour_retry_after() {
    let started = std::time::Instant::now();
    let run = run_fix(
        vec![
            ResponseTemplate::new(429)
                .insert_header("Retry-After", "1")
                .set_body_string("slow down"),
            chat(VERDICTS),
            program_reply(FIXED),
        ],
        &[],
    )
    .await;
    assert_eq!(run.status, UNCONFIRMED, "stderr: {}", run.stderr);
    assert_eq!(first_task(&run)["iterations"][0]["calls"][0]["attempts"], 2);
    // The retry waited as the server asked (a behaviour check, not a speed measurement).
    assert!(started.elapsed() >= Duration::from_millis(900));
    assert_no_hidden_tests(&run);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_timeout_is_retried() {
    let run = run_fix(
        vec![
            chat(VERDICTS).set_delay(Duration::from_secs(5)),
            chat(VERDICTS),
            program_reply(FIXED),
        ],
        &["--request-timeout", "1"],
    )
    .await;
    assert_eq!(run.status, UNCONFIRMED, "stderr: {}", run.stderr);
    assert_eq!(first_task(&run)["iterations"][0]["calls"][0]["attempts"], 2);
    assert_no_hidden_tests(&run);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_backend_that_keeps_failing_ends_with_exit_code_3_and_the_seed() {
    let failures = (0..10)
        .map(|_| ResponseTemplate::new(503).set_body_string("down"))
        .collect();
    let run = run_fix(failures, &["--retries", "1"]).await;
    assert_eq!(run.status, 3, "stderr: {}", run.stderr);
    assert!(
        run.stderr.contains("gave up after 2 attempts"),
        "{}",
        run.stderr
    );
    let task = first_task(&run);
    assert_eq!(task["status"], "error");
    // Nothing is lost: the best program so far (the seed) is still returned.
    assert!(run.stdout.contains("range(1, len(xs))"));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_report_validates_against_the_documented_schema() {
    let run = run_fix(vec![chat(VERDICTS), program_reply(FIXED)], &[]).await;
    assert_eq!(run.status, UNCONFIRMED, "stderr: {}", run.stderr);
    let schema_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/report.schema.json");
    let documented: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&schema_path).expect("schema file"))
            .expect("schema is JSON");
    // The documented schema is the one the code generates.
    assert_eq!(
        documented,
        ldb::repair::record::report_schema().expect("the schema encodes"),
        "regenerate docs/report.schema.json"
    );
    let validator = jsonschema::validator_for(&documented).expect("valid schema");
    let errors: Vec<String> = validator
        .iter_errors(&run.report)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

/// Run `ldb fix` on a task file with no model replies needed (`--max-iters 0`).
async fn run_seed_only(task: &Path, extra: &[&str]) -> Run {
    let mut args = vec![
        "--task-id".to_string(),
        "HumanEval/0".to_string(),
        "--max-iters".to_string(),
        "0".to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    run_fix_on(task, Vec::new(), &refs).await
}

#[tokio::test(flavor = "multi_thread")]
async fn ldb_and_reflexion_seed_files_work_as_they_are() {
    let ldb_dir = common::shared().join("ldb");
    let probs = ldb_dir.join("humaneval/dataset/probs.jsonl");
    for seeds in ["gpt-3.5-turbo-0613", "reflexion"] {
        let seed_file = ldb_dir.join(format!("humaneval/seed/{seeds}/seed.jsonl"));
        let run = run_seed_only(&probs, &["--seeds", &seed_file.display().to_string()]).await;
        let task = first_task(&run);
        assert!(
            task["seed"]["origin"]
                .as_str()
                .is_some_and(|o| o.starts_with("seeds:")),
            "{seeds}: {task}"
        );
        // Reflexion's seeds are bodies only: the prompt's signature makes them whole programs.
        let program = task["final_program"].as_str().unwrap_or_default();
        assert!(
            ldb::generate::reply::code::defines(program, "has_close_elements"),
            "{seeds}: {program}"
        );
        assert!(run.requests.is_empty(), "{seeds}: no model call was needed");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_seed_command_gets_the_task_without_hidden_tests() {
    let dir = tempfile::tempdir().expect("tempdir");
    let seen = dir.path().join("stdin.json");
    let cmd = format!(
        "cat > {}; printf 'def sum_evens(xs):\\n    return sum(x for x in xs if x %% 2 == 0)\\n'",
        seen.display()
    );
    let run = run_fix_on(&task_path(), Vec::new(), &["--seed-cmd", &cmd]).await;
    assert_eq!(run.status, 0, "stderr: {}", run.stderr);
    assert_eq!(first_task(&run)["status"], "already_passing");
    assert_eq!(first_task(&run)["seed"]["origin"], "command");
    let given: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&seen).expect("stdin saved")).expect("json");
    assert_eq!(given["task_id"], "example/sum_evens");
    assert!(given.get("hidden_tests").is_none(), "{given}");
}

/// Regression: a seed that fails while loading (here a missing `typing` import) has no trace;
/// the debug prompt used to index an empty label list and the run stopped with a template error.
#[tokio::test(flavor = "multi_thread")]
async fn regression_a_seed_that_fails_to_load_is_regenerated_without_verdicts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let seed = dir.path().join("seed.py");
    std::fs::write(
        &seed,
        "def sum_evens(xs: List[int]) -> int:\n    return sum(x for x in xs if x % 2 == 0)\n",
    )
    .expect("seed");
    let run = run_fix(
        vec![program_reply(FIXED)],
        &["--seed", &seed.display().to_string()],
    )
    .await;
    assert_eq!(run.status, UNCONFIRMED, "stderr: {}", run.stderr);
    assert_eq!(run.requests.len(), 1, "only the regeneration call");
    let text = request_text(&run.requests[0]);
    assert!(text.contains("could not be traced"), "{text}");
    assert!(text.contains("NameError"), "{text}");
    assert!(run.requests[0].get("response_format").is_none());
    assert_eq!(first_task(&run)["status"], "fixed");
    assert_no_hidden_tests(&run);
}

#[tokio::test(flavor = "multi_thread")]
async fn replies_in_another_language_or_without_code_end_the_loop_cleanly() {
    let js = ResponseTemplate::new(200).set_body_json(serde_json::json!({
        "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "fake-model",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
            "content": "```javascript\nfunction sumEvens(xs) {\n  return xs.filter(x => x % 2 === 0).reduce((a, b) => a + b, 0);\n}\n```"}}],
    }));
    let prose = chat("The loop should start at index zero; that is the whole fix.");
    let run = run_fix(
        vec![
            chat(VERDICTS),
            js.clone(),
            js,
            chat(VERDICTS),
            prose.clone(),
            prose,
        ],
        &["--max-iters", "2"],
    )
    .await;
    // Not fixed (exit 1), no crash, the seed kept, and no request past the script.
    assert_eq!(run.status, 1, "stderr: {}", run.stderr);
    let task = first_task(&run);
    assert_eq!(task["status"], "not_fixed", "{task}");
    assert!(run.requests.len() <= 6, "{} requests", run.requests.len());
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert_no_hidden_tests(&run);
}
