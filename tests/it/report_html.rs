//! `ldb report RUN.json --html`: a real `ldb fix --strategy ldb` run (fake model server, real
//! sandbox and tracer) rendered as a page with each round, the trace beside its verdicts, the
//! wrong block marked, and the diff.

use std::path::Path;

use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::common;

const FIXED: &str = "def sum_evens(xs: list) -> int:\n    total = 0\n    for x in xs:\n        if x % 2 == 0:\n            total += x\n    return total\n";
const VERDICTS: &str = r#"{"verdicts": [{"block": "BLOCK-0", "correct": true, "explanation": "total starts at 0"}, {"block": "BLOCK-1", "correct": false, "explanation": "range(1, len(xs)) skips the first element <xs[0]>"}]}"#;

/// Verdicts for a structured request, the fixed program for any other.
struct Model;

impl Respond for Model {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let content = if body.get("response_format").is_some() {
            VERDICTS.to_string()
        } else {
            format!("Fixed:\n```python\n{FIXED}```\n")
        };
        ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "fake-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        }))
    }
}

#[tokio::test]
async fn a_fix_report_renders_rounds_verdicts_and_the_diff() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(Model)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("run.json");
    let html = dir.path().join("run.html");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "").expect("config");
    let task = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sum_evens/task.json");
    let base = format!("{}/v1", server.uri());
    let (report2, html2, config2) = (report.clone(), html.clone(), config.clone());
    let (fix, render) = tokio::task::spawn_blocking(move || {
        let fix = common::ldb()
            .arg("fix")
            .arg(&task)
            .args([
                "--strategy",
                "ldb",
                "--max-iters",
                "3",
                "--no-cache",
                "--base-url",
                &base,
            ])
            .args(["--model", "fake-model", "--config"])
            .arg(&config2)
            .arg("--report")
            .arg(&report2)
            .output()
            .expect("ldb fix");
        let render = common::ldb()
            .arg("report")
            .arg(&report2)
            .arg("--html")
            .arg(&html2)
            .output()
            .expect("ldb report");
        (fix, render)
    })
    .await
    .expect("join");
    // A fix of the LDB loop: plausible, not confirmed (exit 6).
    assert_eq!(
        fix.status.code(),
        Some(6),
        "{}",
        String::from_utf8_lossy(&fix.stderr)
    );
    assert!(
        render.status.success(),
        "{}",
        String::from_utf8_lossy(&render.stderr)
    );
    let page = std::fs::read_to_string(&html).expect("page");
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("<title>ldb fix: example/sum_evens</title>"));
    assert!(
        page.contains("Round 0 (the seed): <span class=\"fail\">2 of 3 visible tests pass"),
        "{page}"
    );
    assert!(
        page.contains("Round 1: <span class=\"pass\">3 of 3 visible tests pass"),
        "{page}"
    );
    assert!(
        page.contains("got 2, expected 4"),
        "the failing test's result: {page}"
    );
    assert!(
        page.contains("<div class=\"block wrong\"><pre>[BLOCK-1] in sum_evens"),
        "{page}"
    );
    assert!(
        page.contains("<b>wrong</b> range(1, len(xs)) skips the first element &lt;xs[0]&gt;"),
        "{page}"
    );
    assert!(
        page.contains("<div class=\"block right\"><pre>[BLOCK-0] in sum_evens"),
        "{page}"
    );
    assert!(
        page.contains("<span class=\"add\">+    for x in xs:</span>"),
        "{page}"
    );
    assert!(
        page.contains("<span class=\"del\">-    for i in range(1, len(xs)):</span>"),
        "{page}"
    );
    assert!(!page.contains("<script"), "self-contained and inert");

    // Not a fix report: the error names the file and the command that writes one.
    let out = common::ldb()
        .arg("report")
        .arg(&config)
        .arg("--html")
        .arg(dir.path().join("x.html"))
        .output()
        .expect("ldb report");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("not an `ldb fix --report` file"),
        "{stderr}"
    );
    assert!(stderr.contains("hint: write one with `ldb fix"), "{stderr}");
}
