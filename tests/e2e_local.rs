//! End to end with the real embedded model (Qwen2.5-Coder-0.5B through llama.cpp). These tests
//! need the model file, so they are ignored by default; `scripts/test.sh` pulls the model and
//! runs them. They assert what does not depend on the model's skill.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use ldb::local::catalog;
use ldb::local::llama::{LocalModel, LocalOptions};
use ldb::model::{ChatModel, ChatRequest, Message};

const MODEL: &str = "qwen2.5-coder-0.5b";

fn model_path() -> PathBuf {
    let spec = catalog::find(MODEL).expect("catalogue entry");
    catalog::verified_path(&spec, &catalog::models_dir())
        .expect("the 0.5B model is installed: run `ldb model pull qwen2.5-coder-0.5b`")
}

fn ldb() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ldb"));
    cmd.env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("LDB_CONFIG");
    cmd
}

#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn fix_runs_the_whole_loop_with_the_embedded_model() {
    model_path();
    let dir = tempfile::tempdir().expect("tempdir");
    let report_path = dir.path().join("report.json");
    let out_path = dir.path().join("final.py");
    let task = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sum_evens/task.json");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "").expect("config");
    let output = ldb()
        .args([
            "fix",
            &task.display().to_string(),
            "--model",
            MODEL,
            "--max-iters",
            "2",
        ])
        .args(["--no-cache", "--config", &config.display().to_string()])
        .args(["--report", &report_path.display().to_string()])
        .args(["--out", &out_path.display().to_string()])
        .output()
        .expect("run ldb fix");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report_path).expect("report written"))
            .expect("report is JSON");
    let task_report = &report["tasks"][0];
    let status = task_report["status"].as_str().expect("status");
    assert!(
        status == "fixed" || status == "not_fixed",
        "status {status}; stderr: {stderr}"
    );
    // The seed fails, so the loop traced it and asked for verdicts that parsed.
    let first = &task_report["iterations"][0];
    assert!(
        first["trace"]
            .as_str()
            .is_some_and(|t| t.contains("[BLOCK-0]")),
        "{first}"
    );
    let verdicts = first["verdicts"].as_array().expect("verdicts");
    assert!(!verdicts.is_empty(), "no verdicts parsed: {first}");
    assert!(first["calls"].as_array().is_some_and(|c| c.len() >= 2));
    // The final program parses, and its reported score is what `ldb test` finds.
    let final_program = std::fs::read_to_string(&out_path).expect("final program");
    assert_eq!(
        final_program,
        task_report["final_program"].as_str().unwrap_or_default()
    );
    let src = ldb::python::source::SourceFile::new(final_program.clone());
    assert!(
        ldb::python::cfg::ProgramCfg::build(&src).is_ok(),
        "{final_program}"
    );
    let test = ldb()
        .args([
            "test",
            &task.display().to_string(),
            "--program",
            &out_path.display().to_string(),
            "--json",
        ])
        .output()
        .expect("ldb test");
    let tested: serde_json::Value = serde_json::from_slice(&test.stdout).expect("json");
    assert_eq!(tested[0]["passed"], task_report["final_passed"]);
    assert_eq!(
        output.status.code() == Some(0),
        status == "fixed",
        "exit code vs status"
    );
}

#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn the_second_call_reuses_the_shared_prefix() {
    let model = LocalModel::load(&model_path(), MODEL, LocalOptions::default()).expect("load");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let long = "Explain what this does:\n".to_string() + &"x = x + 1\n".repeat(60);
    let mut messages = vec![Message::system("You are terse."), Message::user(long)];
    let mut request = ChatRequest::new(messages.clone());
    request.max_tokens = Some(8);
    let first = rt.block_on(model.chat(&request)).expect("first call");
    let first_stats = model.last_stats();
    assert_eq!(first_stats.reused_tokens, 0);
    messages.push(Message::assistant(first.content));
    messages.push(Message::user("Shorter."));
    let mut request = ChatRequest::new(messages);
    request.max_tokens = Some(8);
    rt.block_on(model.chat(&request)).expect("second call");
    let second = model.last_stats();
    assert!(
        second.reused_tokens >= first_stats.prompt_tokens - 1,
        "{first_stats:?} then {second:?}"
    );
    assert!(
        second.evaluated_tokens < second.prompt_tokens / 2,
        "{second:?}"
    );
}

#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn a_json_schema_constrains_the_reply() {
    let model = LocalModel::load(&model_path(), MODEL, LocalOptions::default()).expect("load");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let mut request = ChatRequest::new(vec![Message::user("Is 7 prime? Answer in JSON.")]);
    request.json_schema = Some(ldb::model::JsonSchema {
        name: "answer".into(),
        schema: serde_json::json!({
            "type": "object",
            "properties": {"prime": {"type": "boolean"}},
            "required": ["prime"],
            "additionalProperties": false
        }),
    });
    request.max_tokens = Some(32);
    let reply = rt.block_on(model.chat(&request)).expect("call");
    let value: serde_json::Value = serde_json::from_str(reply.content.trim()).expect("valid JSON");
    assert!(value["prime"].is_boolean(), "{value}");
}

#[test]
#[ignore = "needs the embedded model and the `openai` Python package; scripts/test.sh runs it"]
fn the_official_openai_client_talks_to_ldb_serve() {
    model_path();
    let mut server = ldb()
        .args(["serve", "--model", MODEL, "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start ldb serve");
    let mut line = String::new();
    BufReader::new(server.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("base URL line");
    let base_url = line.trim().to_string();
    let script = format!(
        r#"
import json, openai
client = openai.OpenAI(base_url="{base_url}", api_key="unused")
ids = [m.id for m in client.models.list().data]
reply = client.chat.completions.create(
    model=ids[0],
    messages=[{{"role": "user", "content": "Write a Python function that adds two numbers."}}],
    max_tokens=24,
)
print(json.dumps({{"ids": ids, "content": reply.choices[0].message.content,
                   "completion_tokens": reply.usage.completion_tokens,
                   "prompt_tokens": reply.usage.prompt_tokens}}))
"#
    );
    let out = Command::new("python3")
        .arg("-c")
        .arg(&script)
        .output()
        .expect("python3");
    let _ = server.kill();
    let _ = server.wait();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(result["ids"][0], MODEL);
    assert!(result["content"]
        .as_str()
        .is_some_and(|c| !c.trim().is_empty()));
    assert!(result["completion_tokens"].as_u64().is_some_and(|n| n > 0));
    assert!(result["prompt_tokens"].as_u64().is_some_and(|n| n > 0));
}
