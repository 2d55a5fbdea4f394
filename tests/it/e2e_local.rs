//! End to end with the real embedded model (Qwen2.5-Coder-0.5B through llama.cpp). These tests
//! need the model file, so they are ignored by default; `scripts/test.sh` pulls the model and
//! runs them. They assert what does not depend on the model's skill.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use ldb::generate::local::catalog;
use ldb::generate::local::llama::{LocalModel, LocalOptions};
use ldb::generate::model::{ChatModel, ChatRequest, Message};

use crate::common::ldb;

const MODEL: &str = "qwen2.5-coder-0.5b";

fn model_path() -> PathBuf {
    let spec = catalog::find(MODEL).expect("catalogue entry");
    catalog::verified_path(&spec, &catalog::models_dir())
        .expect("the 0.5B model is installed: run `ldb model pull qwen2.5-coder-0.5b`")
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
            "--strategy",
            "ldb",
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
        output.status.code(),
        expected_exit(task_report),
        "exit code vs status {status}"
    );
}

#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn fix_by_search_is_the_default_and_records_every_candidate() {
    model_path();
    let dir = tempfile::tempdir().expect("tempdir");
    let report_path = dir.path().join("report.json");
    let task = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sum_evens/task.json");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "").expect("config");
    let output = ldb()
        .args(["fix", &task.display().to_string(), "--model", MODEL])
        .args(["--max-candidates", "4", "--proposers", "feedback:2,fresh:2"])
        .args(["--no-cache", "--config", &config.display().to_string()])
        .args(["--report", &report_path.display().to_string()])
        .output()
        .expect("run ldb fix");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report_path).expect("report written"))
            .expect("report is JSON");
    let t = &report["tasks"][0];
    assert_eq!(t["strategy"], "search", "{stderr}");
    let candidates = t["candidates"].as_array().expect("candidates");
    assert!(
        (2..=5).contains(&candidates.len()),
        "the seed and at most 4 proposals: {t}"
    );
    assert_eq!(candidates[0]["proposer"], "seed");
    let mut seen = std::collections::HashSet::new();
    for c in &candidates[1..] {
        assert!(c["tokens"].as_u64().is_some_and(|n| n > 0), "{c}");
        if let Some(p) = c["program"].as_str() {
            if c["duplicate_of"].is_null() {
                assert!(c["visible_passed"].is_u64(), "a new program is tested: {c}");
                assert!(seen.insert(ldb::python::normalize::program_key(p)), "{c}");
            } else {
                assert!(c["visible_passed"].is_null(), "a duplicate is not run: {c}");
            }
        }
    }
    assert_eq!(output.status.code(), expected_exit(t), "{stderr}");
}

/// The real twin of `model_client.rs`'s cache tests: the embedded model's replies are kept in
/// the response cache, and a rerun (or another task with the same text) replays them: the same
/// program, no model run, the tokens counted as before and said to be replayed.
#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn a_rerun_replays_the_embedded_models_replies_from_the_cache() {
    model_path();
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = dir.path().join("responses");
    let task = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sum_evens/task.json");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "").expect("config");
    let run = |name: &str| {
        let report_path = dir.path().join(name);
        let output = ldb()
            .args(["fix", &task.display().to_string(), "--model", MODEL])
            .args(["--strategy", "resample", "--max-iters", "1"])
            .args(["--cache-dir", &cache.display().to_string()])
            .args(["--config", &config.display().to_string()])
            .args(["--report", &report_path.display().to_string()])
            .output()
            .expect("run ldb fix");
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&report_path).expect("report written"))
                .expect("report is JSON");
        (report["tasks"][0].clone(), stderr)
    };
    let (cold, cold_err) = run("cold.json");
    let calls = cold["usage"]["calls"].as_u64().expect("calls");
    assert!(calls > 0, "{cold_err}");
    assert!(cold["usage"]["replayed_calls"].is_null(), "{cold_err}");
    assert!(!cold_err.contains("replayed"), "{cold_err}");
    let (warm, warm_err) = run("warm.json");
    assert_eq!(warm["final_program"], cold["final_program"], "{warm_err}");
    assert_eq!(
        warm["usage"]["replayed_calls"].as_u64(),
        Some(calls),
        "{warm_err}"
    );
    assert_eq!(
        warm["usage"]["prompt_tokens"],
        cold["usage"]["prompt_tokens"]
    );
    assert!(
        warm_err.contains("replayed from the response cache"),
        "{warm_err}"
    );
}

/// The real twin of `search.rs`'s `verify_*` tests: a program that already passes its
/// visible tests is checked against fresh programs the embedded model writes.
#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn a_passing_program_is_checked_against_fresh_ones() {
    model_path();
    let dir = tempfile::tempdir().expect("tempdir");
    let report_path = dir.path().join("report.json");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sum_evens/task.json");
    let mut task: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(example).expect("example")).expect("JSON");
    task["seed"] = serde_json::Value::String(
        "def sum_evens(xs: list) -> int:\n    return sum(x for x in xs if x % 2 == 0)\n".into(),
    );
    let task_path = dir.path().join("task.json");
    std::fs::write(&task_path, task.to_string()).expect("task");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "").expect("config");
    let output = ldb()
        .args(["fix", &task_path.display().to_string(), "--model", MODEL])
        .args([
            "--verify",
            "2",
            "--no-cache",
            "--config",
            &config.display().to_string(),
        ])
        .args(["--report", &report_path.display().to_string()])
        .output()
        .expect("run ldb fix");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report_path).expect("report written"))
            .expect("report is JSON");
    let t = &report["tasks"][0];
    let candidates = t["candidates"].as_array().expect("candidates");
    assert_eq!(candidates[0]["proposer"], "seed");
    // A first vote that agrees with the seed settles the vote (2 against the 1 left), and the
    // second is not drawn: the real twin of `search::votes_that_cannot_change_the_choice_*`.
    let settled = stderr.contains("the vote is settled: 2 vote(s)");
    if settled {
        assert_eq!(candidates.len(), 2, "the seed and one fresh program: {t}");
        assert_eq!(t["selection"]["groups"], serde_json::json!([[0, 1]]), "{t}");
    } else {
        assert_eq!(candidates.len(), 3, "the seed and two fresh programs: {t}");
    }
    assert!(
        candidates[1..].iter().all(|c| c["proposer"] == "fresh"),
        "{t}"
    );
    assert!(
        stderr.contains("the program passes the visible tests"),
        "{stderr}"
    );
    // The seed is right; whatever the votes said, the returned program passes.
    assert!(
        matches!(t["status"].as_str(), Some("already_passing" | "fixed")),
        "{t}"
    );
    assert_eq!(output.status.code(), expected_exit(t), "{stderr}");
}

#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn samples_of_one_prompt_differ_by_seed_and_share_the_prompt() {
    let model = LocalModel::load(&model_path(), MODEL, LocalOptions::default()).expect("load");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let mut request = ChatRequest::new(vec![Message::user(
        "Write a short Python function that returns a random-looking name for a cat.",
    )]);
    request.temperature = Some(1.0);
    request.max_tokens = Some(24);
    let mut replies = Vec::new();
    for seed in 0..3u64 {
        request.seed = Some(seed);
        let r = rt.block_on(model.chat(&request)).expect("sample");
        if seed > 0 {
            assert!(
                // Only the last chunk of the prompt is evaluated again.
                r.usage.cached_prompt_tokens + LocalOptions::default().prompt_chunk as u64
                    >= r.usage.prompt_tokens,
                "the prompt is evaluated once: {:?}",
                r.usage
            );
        }
        replies.push(r.content);
    }
    assert!(
        replies[0] != replies[1] || replies[1] != replies[2],
        "three seeds, one sample: {replies:?}"
    );
    // The same seed draws the same sample again.
    request.seed = Some(1);
    let again = rt.block_on(model.chat(&request)).expect("sample");
    assert_eq!(again.content, replies[1]);
}

#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn verdicts_constrained_to_the_labels_always_parse() {
    let model = LocalModel::load(&model_path(), MODEL, LocalOptions::default()).expect("load");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let labels: Vec<String> = ["BLOCK-0", "BLOCK-3", "BLOCK-7"].map(String::from).to_vec();
    let mut request = ChatRequest::new(vec![Message::user(
        "Judge each block of a program that should sum a list: BLOCK-0 sets total = 0, \
         BLOCK-3 adds xs[i] for i from 1, BLOCK-7 returns total. Reply in JSON.",
    )]);
    request.max_tokens = Some(300);
    request.json_schema = Some(ldb::generate::model::JsonSchema {
        name: "block_verdicts".into(),
        schema: ldb::generate::reply::verdicts::verdict_schema_for(&labels),
    });
    let reply = rt.block_on(model.chat(&request)).expect("verdicts");
    let parsed = ldb::generate::reply::verdicts::parse_verdicts(&reply.content, &labels)
        .unwrap_or_else(|e| panic!("unparseable under the grammar: {e}: {}", reply.content));
    assert_eq!(parsed.verdicts.len(), 3, "{}", reply.content);
    assert!(
        parsed.verdicts.iter().all(|v| labels.contains(&v.block)),
        "{}",
        reply.content
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
        second.reused_tokens + LocalOptions::default().prompt_chunk >= first_stats.prompt_tokens,
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
    request.json_schema = Some(ldb::generate::model::JsonSchema {
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

/// `ldb serve` with the 0.5B model on a free port, and the base URL it printed.
fn serve(extra: &[&str], stderr: Stdio) -> (std::process::Child, String) {
    let mut server = ldb()
        .args(["serve", "--model", MODEL, "--port", "0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("start ldb serve");
    let mut line = String::new();
    BufReader::new(server.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("base URL line");
    (server, line.trim().to_string())
}

#[test]
#[ignore = "needs the embedded model and the `openai` Python package; scripts/test.sh runs it"]
fn the_official_openai_client_talks_to_ldb_serve() {
    model_path();
    let (mut server, base_url) = serve(&[], Stdio::inherit());
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

/// A prompt met again after another one is restored from its snapshot, not evaluated again, and
/// greedy decoding from the restored state gives the same reply as from a cold start.
#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn a_prompt_met_again_is_restored_from_its_snapshot() {
    let model = LocalModel::load(&model_path(), MODEL, LocalOptions::default()).expect("load");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let ask = |text: String| {
        let mut request =
            ChatRequest::new(vec![Message::system("You are terse."), Message::user(text)]);
        request.max_tokens = Some(12);
        let reply = rt.block_on(model.chat(&request)).expect("call");
        (reply.content, model.last_stats())
    };
    let a = "Name the operation:\n".to_string() + &"x = x * 2\n".repeat(40);
    let b = "Name the operation:\n".to_string() + &"y = y - 3\n".repeat(40);
    let (first, cold) = ask(a.clone());
    assert!(!cold.restored);
    let (_, other) = ask(b);
    assert!(!other.restored);
    assert!(
        other.evaluated_tokens > other.prompt_tokens / 2,
        "{other:?}"
    );
    let (again, warm) = ask(a);
    assert!(warm.restored, "{warm:?}");
    assert!(
        warm.evaluated_tokens <= LocalOptions::default().prompt_chunk,
        "{warm:?}"
    );
    assert_eq!(first, again);
}

/// Regression: a reply stopped at the end of its code block used to leave its last token in
/// the cache's record without a KV entry, so a follow-up that repeats the reply (the request to
/// repair an unusable program) failed with "Decode Error -1".
#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn a_follow_up_to_a_reply_stopped_after_its_code_block_decodes() {
    let model = LocalModel::load(&model_path(), MODEL, LocalOptions::default()).expect("load");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let mut messages = vec![Message::user(
        "Write a Python function `add(a, b)` that returns a + b, in one ```python code block.",
    )];
    let mut request = ChatRequest::new(messages.clone());
    request.stop_after_code = Some("def add(".into());
    request.max_tokens = Some(200);
    let reply = rt.block_on(model.chat(&request)).expect("first call");
    assert!(
        reply.content.trim_end().ends_with("```"),
        "{}",
        reply.content
    );
    messages.push(Message::assistant(reply.content));
    messages.push(Message::user("Now rename it to `plus`."));
    let mut request = ChatRequest::new(messages);
    request.max_tokens = Some(8);
    rt.block_on(model.chat(&request))
        .expect("the follow-up decodes");
}

/// A program request stops where the model starts testing its function: asked outright for
/// asserts after the function, the reply ends with the function and a closed code block, and
/// is shorter than the same request's whole reply.
#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn a_program_reply_stops_where_the_models_own_tests_start() {
    let model = LocalModel::load(&model_path(), MODEL, LocalOptions::default()).expect("load");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let messages = vec![Message::user(
        "Write a Python function `add(a, b)` that returns a + b. After the function, in the same \
         ```python code block, write three `assert` lines that test it.",
    )];
    let mut whole = ChatRequest::new(messages);
    whole.max_tokens = Some(200);
    whole.stop_after_code = Some("def add(".into());
    let mut stopped = whole.clone();
    stopped.stop_at_self_tests = Some("add".into());
    let whole = rt.block_on(model.chat(&whole)).expect("whole reply");
    assert!(whole.content.contains("\nassert "), "{}", whole.content);
    let reply = rt.block_on(model.chat(&stopped)).expect("stopped reply");
    assert!(reply.content.contains("def add("), "{}", reply.content);
    assert!(!reply.content.contains("assert "), "{}", reply.content);
    assert!(
        reply.content.trim_end().ends_with("```"),
        "{}",
        reply.content
    );
    assert!(
        reply.usage.completion_tokens < whole.usage.completion_tokens,
        "{} vs {}",
        reply.usage.completion_tokens,
        whole.usage.completion_tokens
    );
    // What was written before the stop is the whole reply's beginning (greedy).
    let kept = reply.content.trim_end().trim_end_matches("```");
    assert!(
        whole.content.starts_with(kept),
        "{}\n---\n{}",
        kept,
        whole.content
    );
}

/// The real model under the verdict grammar, over label sets drawn at random (fixed seed): every
/// reply parses and names only shown labels, whatever the labels look like.
#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn verdicts_parse_under_the_grammar_for_random_label_sets() {
    let model = LocalModel::load(&model_path(), MODEL, LocalOptions::default()).expect("load");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let mut rng = fastrand::Rng::with_seed(11);
    for round in 0..4 {
        let n = rng.usize(1..=4);
        let labels: Vec<String> = (0..n)
            .map(|i| match rng.u8(0..3) {
                0 => format!("BLOCK-{}", i * 7 + rng.usize(0..7)),
                1 => format!("LINE-{}", i * 5 + 1 + rng.usize(0..5)),
                _ => format!("FUNCTION-f{i}"),
            })
            .collect();
        let mut request = ChatRequest::new(vec![Message::user(format!(
            "A program that should return the largest element of a list returned the smallest. \
             Its steps were {}. Judge every step. Reply in JSON.",
            labels.join(", ")
        ))]);
        request.max_tokens = Some(600);
        request.json_schema = Some(ldb::generate::model::JsonSchema {
            name: "block_verdicts".into(),
            schema: ldb::generate::reply::verdicts::verdict_schema_for(&labels),
        });
        let reply = rt.block_on(model.chat(&request)).expect("verdicts");
        let parsed = ldb::generate::reply::verdicts::parse_verdicts(&reply.content, &labels)
            .unwrap_or_else(|e| panic!("round {round}, {labels:?}: {e}: {}", reply.content));
        assert!(!parsed.verdicts.is_empty(), "{}", reply.content);
        assert!(
            parsed.verdicts.iter().all(|v| labels.contains(&v.block)),
            "{labels:?}: {}",
            reply.content
        );
    }
}

/// A seeded sample is a function of its request alone: the same request after other requests
/// (which leave other prompts, longer ones sharing its start, and replies in the cache) draws
/// the same reply as on a fresh model. Without chunked prompts the cache's history changed the
/// batches a prompt was evaluated in, the logits' last bits, and so at times the sample: an
/// evaluation's strategies then drew different programs from the same seeds.
#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn a_seeded_reply_does_not_depend_on_the_requests_before_it() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let request = |user: &str, seed: u64| {
        let mut r = ChatRequest::new(vec![
            Message::system("You write Python. Reply with one code block."),
            Message::user(user),
        ]);
        r.temperature = Some(1.0);
        r.seed = Some(seed);
        r.max_tokens = Some(64);
        r
    };
    let task = "Write `count_vowels(s)`, the number of vowels in s, upper case included.";
    let longer = format!("{task} Also skip digits, and say why in a comment.");
    let seeds = 0..4u64;
    let fresh = LocalModel::load(&model_path(), MODEL, LocalOptions::default()).expect("load");
    let cold: Vec<String> = seeds
        .clone()
        .map(|seed| {
            // A fresh cache before each: the reply as a first request draws it.
            let model =
                LocalModel::load(&model_path(), MODEL, LocalOptions::default()).expect("load");
            rt.block_on(model.chat(&request(task, seed)))
                .expect("cold")
                .content
        })
        .collect();
    for seed in seeds {
        // Another prompt sharing the start, then the request itself after a reply to it.
        rt.block_on(fresh.chat(&request(&longer, seed + 10)))
            .expect("other");
        let after_other = rt.block_on(fresh.chat(&request(task, seed))).expect("warm");
        let again = rt
            .block_on(fresh.chat(&request(task, seed)))
            .expect("again");
        assert_eq!(after_other.content, cold[seed as usize], "seed {seed}");
        assert_eq!(again.content, cold[seed as usize], "seed {seed}, repeated");
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// The project walkthrough of docs/fix.md with the real model: a module of a package under `src/`,
/// tested by the project's pytest suite (tests/fixtures/pytest_project), fixed in place.
#[test]
#[ignore = "needs the embedded model and pytest; scripts/test.sh runs it"]
fn fix_write_repairs_a_function_of_a_pytest_project_with_the_embedded_model() {
    model_path();
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("ranking");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pytest_project"),
        &root,
    );
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "").expect("config");
    let report_path = dir.path().join("report.json");
    let module = root.join("src/ranking/stats.py");
    let original = std::fs::read_to_string(&module).expect("module");
    let output = ldb()
        .current_dir(&root)
        .args([
            "fix",
            "src/ranking/stats.py::second_largest",
            "--tests",
            "tests/",
            "--write",
            "--model",
            MODEL,
            "--max-iters",
            "3",
        ])
        .args(["--no-cache", "--config", &config.display().to_string()])
        .args(["--report", &report_path.display().to_string()])
        .output()
        .expect("run ldb fix");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("ldb: pytest "), "{stderr}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report_path).expect("report written"))
            .expect("report is JSON");
    let task = &report["tasks"][0];
    assert_eq!(task["visible_total"], 12, "{task}");
    let status = task["status"].as_str().expect("status");
    let written = std::fs::read_to_string(&module).expect("module");
    match status {
        "fixed" => {
            assert_eq!(output.status.code(), expected_exit(task), "{stderr}");
            assert!(root.join("src/ranking/stats.py.ldb-orig").is_file());
            // The rest of the module is kept: mean() is untouched.
            let mean_end = original.find("def second_largest").expect("second_largest");
            assert_eq!(&written[..mean_end], &original[..mean_end]);
            let check = ldb()
                .current_dir(&root)
                .args([
                    "test",
                    "src/ranking/stats.py::second_largest",
                    "--tests",
                    "tests/",
                ])
                .output()
                .expect("run ldb test");
            let stdout = String::from_utf8_lossy(&check.stdout);
            assert_eq!(check.status.code(), Some(0), "{stdout}");
            assert!(
                stdout.contains("10 passed, 1 skipped, 1 xfailed"),
                "{stdout}"
            );
        }
        "not_fixed" => {
            assert_eq!(output.status.code(), Some(1), "{stderr}");
            assert_eq!(written, original, "a failed fix must leave the file alone");
        }
        other => panic!("status {other}: {stderr}"),
    }
}

/// Regression: with llama.cpp's flash attention, whose CPU kernel splits a long KV cache across
/// the generation threads and sums the parts, a seeded sample depended on the thread count, and
/// so on how busy the machine was when the model loaded (HumanEval/163 drew other programs with
/// one thread than with two). The default attention rounds the same at any thread count.
/// `LDB_TEST_FLASH_ATTENTION=1` runs it with flash attention, where it fails.
#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn regression_a_seeded_sample_changed_with_the_thread_count() {
    let flash = std::env::var_os("LDB_TEST_FLASH_ATTENTION").is_some();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    // Long enough that the KV cache spans 512 cells, where the split begins.
    let program = "def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n";
    let text = format!(
        "Here are many small Python functions.\n{}\nWrite three more functions in the same style, \
         each with a docstring, and explain each in a sentence.",
        program.repeat(18)
    );
    let samples = |threads: u32| {
        let options = LocalOptions {
            threads: Some(threads),
            flash_attention: flash,
            ..LocalOptions::default()
        };
        let model = LocalModel::load(&model_path(), MODEL, options).expect("load");
        let mut request = ChatRequest::new(vec![Message::user(text.clone())]);
        request.temperature = Some(1.0);
        request.max_tokens = Some(120);
        (0..3u64)
            .map(|seed| {
                request.seed = Some(seed);
                let reply = rt.block_on(model.chat(&request)).expect("sample");
                assert!(
                    reply.usage.prompt_tokens > 300,
                    "the prompt must fill the cache past 512 cells with its reply: {:?}",
                    reply.usage
                );
                reply.content
            })
            .collect::<Vec<_>>()
    };
    let one = samples(1);
    let two = samples(2);
    assert_eq!(
        one, two,
        "the same seeds drew other samples with two threads"
    );
}

/// The real twin of the fake-endpoint tests of `--fim`: `ldb fix --fim` against `ldb serve`
/// asks the embedded model for its patches on `/v1/completions`, and the server answers them.
#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn fix_with_fim_asks_ldb_serve_for_patches_on_completions() {
    model_path();
    let (mut server, base_url) = serve(&["--no-cache"], Stdio::piped());
    let task = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/sum_evens/task.json");
    let out = ldb()
        .arg("fix")
        .arg(&task)
        .args([
            "--base-url",
            &base_url,
            "--model",
            MODEL,
            "--fim",
            "--no-cache",
        ])
        .args([
            "--proposers",
            "patch:2",
            "--patch-top",
            "1",
            "--select",
            "0",
            "--max-iters",
            "1",
        ])
        .output()
        .expect("ldb fix");
    let _ = server.kill();
    let mut log = String::new();
    let _ = std::io::Read::read_to_string(&mut server.stderr.take().expect("stderr"), &mut log);
    let _ = server.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Exit 0 (fixed), 6 (fixed, unconfirmed) or 1 (not fixed) all show the path; anything else
    // is a failure of it.
    assert!(matches!(out.status.code(), Some(0 | 1 | 6)), "{stderr}");
    assert!(
        log.contains("POST /v1/completions 200"),
        "server log:\n{log}\nfix:\n{stderr}"
    );
    assert!(
        !log.contains("POST /v1/completions 4"),
        "server log:\n{log}"
    );
}

/// The exit status `ldb fix` owes a task of its report: 0 passing (and, when fixed, backed by
/// an independent program or a test that passed before), 6 fixed but unconfirmed, 1 not fixed.
fn expected_exit(t: &serde_json::Value) -> Option<i32> {
    match t["status"].as_str()? {
        "already_passing" => Some(0),
        "fixed" => {
            let unconfirmed = t["final_program"] != t["seed"]["program"]
                && t["kept_passing"].as_u64().unwrap_or(0) == 0
                && (t["confirmation"].is_null() || t["confirmation"]["status"] == "unconfirmed");
            Some(if unconfirmed { 6 } else { 0 })
        }
        "not_fixed" => Some(1),
        _ => None,
    }
}

/// Prompt-lookup drafting changes what a reply costs, not what it says: a rewrite of a program
/// in the prompt (where most drafts are kept) comes out token for token as without drafts, both
/// greedy and as a seeded sample.
#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn drafted_and_plain_generation_write_the_same_tokens() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let program = "def running_max(xs):\n    \"\"\"The largest value seen so far, at each position.\"\"\"\n    out = []\n    best = None\n    for x in xs:\n        if best is None or x > best:\n            best = x\n        out.append(x)\n    return out\n";
    let request = |temperature: f32| {
        let mut r = ChatRequest::new(vec![
            Message::system("You fix Python. Reply with one code block."),
            Message::user(format!(
                "```python\n{program}```\nThe test `running_max([1, 3, 2]) == [1, 3, 3]` fails. Write the whole fixed function."
            )),
        ]);
        r.temperature = Some(temperature);
        r.seed = Some(7);
        r.max_tokens = Some(160);
        r
    };
    let plain = LocalModel::load(&model_path(), MODEL, LocalOptions::default()).expect("load");
    let drafted = LocalModel::load(
        &model_path(),
        MODEL,
        LocalOptions {
            draft_max: 8,
            ..LocalOptions::default()
        },
    )
    .expect("load");
    for temperature in [0.0, 0.8] {
        let a = rt
            .block_on(plain.chat(&request(temperature)))
            .expect("plain");
        let b = rt
            .block_on(drafted.chat(&request(temperature)))
            .expect("drafted");
        let stats = drafted.last_stats();
        assert_eq!(a.content, b.content, "temperature {temperature}");
        assert_eq!(a.usage.completion_tokens, b.usage.completion_tokens);
        assert_eq!(plain.last_stats().drafted_tokens, 0);
        assert!(stats.accepted_tokens > 0, "{stats:?}");
        assert!(stats.decodes < stats.generated_tokens, "{stats:?}");
    }
}

/// Samples decoded together (`parallel_samples`): each has the seed it would have drawn alone
/// (its first token, which only the prompt decides, is the one-by-one sample's), fewer forward
/// passes than tokens are made, and the prompt stays cached for the next call.
#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn samples_decoded_together_keep_their_seeds_and_the_prompt_cache() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let request = |max_tokens: u32| {
        let mut r = ChatRequest::new(vec![
            Message::system("You write Python. Reply with one code block."),
            Message::user(
                "Write `def mean(xs)`, the mean of a list of numbers, 0 for an empty one.",
            ),
        ]);
        r.temperature = Some(1.5);
        r.seed = Some(11);
        r.max_tokens = Some(max_tokens);
        r
    };
    let alone = LocalModel::load(&model_path(), MODEL, LocalOptions::default()).expect("load");
    let together = LocalModel::load(
        &model_path(),
        MODEL,
        LocalOptions {
            parallel_samples: 3,
            ..LocalOptions::default()
        },
    )
    .expect("load");
    assert!(together.batches() && !alone.batches());
    let one_by_one = rt
        .block_on(alone.chat_n(&request(1), 3))
        .expect("one by one");
    let batched = rt
        .block_on(together.chat_n(&request(1), 3))
        .expect("together");
    let firsts = |r: &[ldb::generate::model::ChatResponse]| {
        r.iter().map(|x| x.content.clone()).collect::<Vec<_>>()
    };
    assert_eq!(firsts(&one_by_one), firsts(&batched));

    let replies = rt
        .block_on(together.chat_n(&request(120), 3))
        .expect("together");
    assert_eq!(replies.len(), 3);
    let stats = together.last_stats();
    let generated: u64 = replies.iter().map(|r| r.usage.completion_tokens).sum();
    assert_eq!(stats.generated_tokens as u64, generated);
    assert!(stats.decodes < stats.generated_tokens, "{stats:?}");
    for r in &replies[1..] {
        assert_eq!(r.usage.cached_prompt_tokens, r.usage.prompt_tokens);
    }
    // The prompt is still held: another sample of it evaluates only the last chunk at most.
    let again = rt.block_on(together.chat(&request(8))).expect("again");
    assert!(
        again.usage.prompt_tokens - again.usage.cached_prompt_tokens <= 32,
        "{:?}",
        again.usage
    );
}
