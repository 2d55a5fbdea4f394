//! `ldb eval` against a fake OpenAI-compatible server that records every request: hidden tests
//! never reach a prompt (seed generation, LDB and the Self-Debugging and sampling baselines),
//! task-level backend failures are recorded and can be retried, and a failure that would hit
//! every task stops the run with exit status 3 without recording anything.

use crate::common::{self, shared};

use std::collections::HashMap;
use std::path::Path;
use std::process::Output;
use std::sync::Mutex;

use ldb::eval::fix::datasets::load_dataset;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const TASKS: &str = "MBPP/11,MBPP/12,MBPP/18";
const STRATEGIES: &[&str] = &[
    "ldb",
    "selfdebug-expl",
    "selfdebug-trace",
    "resample",
    "search",
];

/// Broken, then correct, programs per entry point; the last one repeats.
fn programs() -> HashMap<&'static str, Vec<&'static str>> {
    HashMap::from([
        (
            "remove_Occ",
            vec![
                "def remove_Occ(s, ch):\n    return s.replace(ch, '', 1)\n",
                "def remove_Occ(s, ch):\n    i = s.find(ch)\n    if i >= 0:\n        s = s[:i] + s[i + 1:]\n    j = s.rfind(ch)\n    if j >= 0:\n        s = s[:j] + s[j + 1:]\n    return s\n",
            ],
        ),
        (
            "sort_matrix",
            vec!["def sort_matrix(M):\n    return sorted(M, reverse=True)\n"],
        ),
        (
            // MBPP/18 names the helper `str_to_list`; the visible test calls this one.
            "remove_dirty_chars",
            vec!["def remove_dirty_chars(string, second_string):\n    return ''.join(c for c in string if c not in second_string)\n"],
        ),
    ])
}

/// Answers by looking at the request: verdicts for structured requests, else the next program
/// of the task the request is about.
struct FakeModel {
    served: Mutex<HashMap<String, usize>>,
}

impl Respond for FakeModel {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap_or_default();
        if body.get("response_format").is_some() {
            return chat(
                r#"{"verdicts": [{"block": "BLOCK-0", "correct": false, "explanation": "the result is built wrongly"}]}"#,
            );
        }
        let text = request_text(&body);
        let all = programs();
        let Some((entry, list)) = all.iter().find(|(entry, _)| text.contains(*entry)) else {
            return chat("I cannot tell which task this is.");
        };
        let mut served = self.served.lock().expect("lock");
        let n = served.entry(entry.to_string()).or_default();
        let program = list[(*n).min(list.len() - 1)];
        *n += 1;
        chat(&format!(
            "The program:\n```python\n{program}```\nIt handles the cases above."
        ))
    }
}

fn chat(content: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(common::completion(content))
}

/// Text of every message of a request, joined.
fn request_text(request: &serde_json::Value) -> String {
    let messages = request["messages"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .filter_map(|m| m["content"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    // A raw prompt (`/completions`) too.
    format!("{messages}\n{}", request["prompt"].as_str().unwrap_or(""))
}

async fn serve(responder: impl Respond + 'static) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(responder)
        .mount(&server)
        .await;
    server
}

async fn eval(server: &MockServer, out: &Path, strategies: &[&str], extra: &[&str]) -> Output {
    let config = out.with_extension("config.toml");
    std::fs::write(&config, "").expect("config");
    let base = format!("{}/v1", server.uri());
    let data = shared();
    let mut args: Vec<String> = [
        "eval",
        "--dataset",
        "mbpp",
        "--data-dir",
        data.to_str().expect("utf-8"),
        "--tasks",
        TASKS,
        "--max-iters",
        "2",
        "--concurrency",
        "2",
        "--base-url",
        &base,
        "--model",
        "fake-model",
        "--config",
        config.to_str().expect("utf-8"),
        "--no-cache",
        "--retries",
        "0",
        "--out",
        out.to_str().expect("utf-8"),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for s in strategies {
        args.push("--strategy".into());
        args.push(s.to_string());
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    tokio::process::Command::from(common::ldb())
        .args(&args)
        .output()
        .await
        .expect("run ldb")
}

async fn requests(server: &MockServer) -> Vec<serde_json::Value> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).expect("request body is JSON"))
        .collect()
}

fn records(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .expect("results file")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .filter(|v: &serde_json::Value| v["kind"] != "header")
        .collect()
}

/// Lines of the hidden tests that are not also visible (or in the prompt), per task.
fn hidden_only_lines() -> Vec<(String, String)> {
    let data = load_dataset("mbpp", Some(&shared())).expect("mbpp");
    let mut lines = Vec::new();
    for id in TASKS.split(',') {
        let task = data.tasks.iter().find(|t| t.task_id == id).expect("task");
        let hidden = task.hidden_tests.as_deref().expect("hidden tests");
        for line in hidden.lines().map(str::trim).filter(|l| l.len() > 8) {
            let shown =
                task.visible_tests.iter().any(|v| v.contains(line)) || task.prompt.contains(line);
            if !shown {
                lines.push((id.to_string(), line.to_string()));
            }
        }
    }
    lines
}

#[tokio::test(flavor = "multi_thread")]
async fn hidden_tests_never_reach_a_prompt() {
    let server = serve(FakeModel {
        served: Mutex::new(HashMap::new()),
    })
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let run = eval(&server, &out, STRATEGIES, &[]).await;
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "stderr: {stderr}");

    let sent = requests(&server).await;
    assert!(sent.len() >= 6, "seeds and debugging rounds ask the model");
    let hidden = hidden_only_lines();
    // Two hidden-only asserts per task, and the check call of each.
    assert!(hidden.len() >= 9, "{hidden:?}");
    for request in &sent {
        let text = request_text(request);
        for (task, line) in &hidden {
            assert!(
                !text.contains(line.as_str()),
                "hidden test of {task} `{line}` was sent to the model:\n{text}"
            );
        }
        assert!(!text.contains("def check(candidate)"), "{text}");
    }
    // The seeds were generated from visible tests only, and are shared by every strategy.
    let seeds = records(&out.join("seeds.jsonl"));
    assert_eq!(seeds.len(), 3);
    assert!(seeds.iter().all(|s| s["origin"] == "generated"));
    for strategy in ["ldb-block", "selfdebug-expl", "selfdebug-trace", "resample"] {
        let recs = records(&out.join(format!("{strategy}.jsonl")));
        assert_eq!(recs.len(), 3, "{strategy}");
        for r in &recs {
            assert_eq!(r["strategy"], strategy);
            assert_eq!(r["hidden_by_budget"].as_array().map(Vec::len), Some(3));
            assert_eq!(r["hidden_tests"], "hidden");
        }
        let by_id = |id: &str| {
            recs.iter()
                .find(|r| r["task_id"] == id)
                .unwrap_or_else(|| panic!("{strategy}: {id}"))
        };
        // The seed that passes its visible test is not debugged.
        assert_eq!(by_id("MBPP/18")["debugged"], false, "{strategy}");
        assert_eq!(by_id("MBPP/18")["status"], "already_passing");
        // A failing seed is debugged and spends tokens.
        let sort = by_id("MBPP/12");
        assert_eq!(sort["seed_hidden_pass"], false);
        assert_eq!(sort["debugged"], true, "{strategy}: {sort}");
        assert!(sort["tokens"]["prompt"].as_u64().is_some_and(|t| t > 0));
    }
    // The default search ran every task too (its fresh programs and votes were among the
    // requests checked above).
    let search = records(&out.join("search.jsonl"));
    assert_eq!(search.len(), 3);
    assert!(search.iter().all(|r| r["hidden_tests"] == "hidden"));
    // LDB fixes remove_Occ in one round: the hidden tests pass from budget 1 on.
    let ldb = records(&out.join("ldb-block.jsonl"));
    let occ = ldb
        .iter()
        .find(|r| r["task_id"] == "MBPP/11")
        .expect("MBPP/11");
    assert_eq!(occ["status"], "fixed", "{occ}");
    assert_eq!(occ["iterations"], 1);
    assert_eq!(
        occ["hidden_by_budget"],
        serde_json::json!([false, true, true])
    );
    let summary = std::fs::read_to_string(out.join("summary.md")).expect("summary");
    assert!(
        summary.contains("ldb-block · mbpp · fake-model"),
        "{summary}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn failed_model_calls_are_recorded_and_retried_later() {
    let down = serve(ResponseTemplate::new(500).set_body_string("overloaded")).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let run = eval(&down, &out, &["ldb"], &[]).await;
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "the run goes on: {stderr}");
    let seeds = records(&out.join("seeds.jsonl"));
    assert_eq!(seeds.len(), 3);
    assert!(seeds.iter().all(|s| s["error_class"] == "backend_retries"));
    let recs = records(&out.join("ldb-block.jsonl"));
    assert!(recs
        .iter()
        .all(|r| r["error_class"] == "seed_unavailable" && r["final_hidden_pass"] == false));

    // Once the endpoint is back, --retry-errors redoes exactly the failed tasks.
    let up = serve(FakeModel {
        served: Mutex::new(HashMap::new()),
    })
    .await;
    let again = eval(&up, &out, &["ldb"], &["--retry-errors"]).await;
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(0), "{stderr}");
    let seeds = records(&out.join("seeds.jsonl"));
    assert_eq!(seeds.len(), 3);
    assert!(
        seeds.iter().all(|s| s["error_class"].is_null()),
        "{seeds:?}"
    );
    let recs = records(&out.join("ldb-block.jsonl"));
    assert_eq!(recs.len(), 3, "each task once");
    assert!(recs.iter().all(|r| r["error_class"].is_null()));
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_credentials_stop_the_run_and_record_nothing() {
    let server = serve(ResponseTemplate::new(401).set_body_json(serde_json::json!({
        "error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}
    })))
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let run = eval(&server, &out, &["ldb"], &[]).await;
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("credentials"), "{stderr}");
    assert!(stderr.contains("hint:"), "{stderr}");
    assert!(records(&out.join("seeds.jsonl")).is_empty());
    assert!(records(&out.join("ldb-block.jsonl")).is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn each_debugged_task_keeps_its_report_and_the_eval_page_links_to_it() {
    let server = serve(FakeModel {
        served: Mutex::new(HashMap::new()),
    })
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let run = eval(&server, &out, &["ldb"], &[]).await;
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    // stderr is not a terminal: no progress lines by default.
    assert!(!stderr.contains("[1/"), "{stderr}");

    // Every task the strategy ran on keeps its report, in `ldb fix --report`'s format.
    let reports = out.join("reports/ldb-block");
    let kept = |name: &str| -> serde_json::Value {
        let text = std::fs::read_to_string(reports.join(name)).expect("report");
        serde_json::from_str(&text).expect("JSON")
    };
    assert_eq!(kept("MBPP_11.json")["tasks"][0]["task_id"], "MBPP/11");
    assert_eq!(kept("MBPP_11.json")["tasks"][0]["status"], "fixed");
    assert_eq!(kept("MBPP_12.json")["tasks"][0]["status"], "not_fixed");
    assert_eq!(
        kept("MBPP_18.json")["tasks"][0]["status"],
        "already_passing"
    );

    let page = dir.path().join("page.html");
    let report = common::ldb()
        .args(["eval", "report"])
        .arg(&out)
        .arg("--html")
        .arg(&page)
        .output()
        .expect("ldb eval report");
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    let html = std::fs::read_to_string(&page).expect("page");
    let link = "page_fixes/0-ldb-block/MBPP_11.html";
    assert!(
        html.contains(&format!("<a href=\"{link}\">MBPP/11</a>")),
        "{html}"
    );
    let fix = std::fs::read_to_string(dir.path().join(link)).expect("fix page");
    assert!(fix.contains("ldb fix: MBPP/11"), "{fix}");
    assert!(fix.contains("remove_Occ"), "the rounds' programs are on it");

    // A run that keeps no reports has rows without links.
    let bare = dir.path().join("bare");
    let quiet = eval(&server, &bare, &["ldb"], &["--no-reports"]).await;
    assert_eq!(quiet.status.code(), Some(0));
    assert!(!bare.join("reports").exists());

    // `--progress lines` is for logs: a line per finished task.
    let again = eval(
        &server,
        &dir.path().join("run2"),
        &["ldb"],
        &["--progress", "lines"],
    )
    .await;
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(stderr.contains("[1/3]"), "{stderr}");
    assert!(stderr.contains("fixed "), "fixed so far: {stderr}");
}
