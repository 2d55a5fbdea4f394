//! End to end with the real embedded model (Qwen2.5-Coder-0.5B): the repair proposers that
//! keep the program. Ignored by default (they need the model file); `scripts/test.sh` runs them.
//! They assert what does not depend on the model's skill.

use std::path::PathBuf;

use ldb::generate::local::catalog;
use ldb::generate::local::llama::{LocalModel, LocalOptions};
use ldb::generate::model::{ChatModel, ChatRequest, Message};

use crate::common;

const MODEL: &str = "qwen2.5-coder-0.5b";

fn model_path() -> PathBuf {
    let spec = catalog::find(MODEL).expect("catalogue entry");
    catalog::verified_path(&spec, &catalog::models_dir())
        .expect("the 0.5B model is installed: run `ldb model pull qwen2.5-coder-0.5b`")
}

#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn the_embedded_model_fills_in_the_middle_of_a_raw_prompt() {
    let model = LocalModel::load(&model_path(), MODEL, LocalOptions::default()).expect("load");
    assert!(model.fills_in_middle());
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let mut request = ChatRequest::new(vec![Message::user("fill in line 2")]);
    request.raw_prompt = Some(
        "<|fim_prefix|># assert add(1, 2) == 3\ndef add(a, b):\n    <|fim_suffix|>\n\n\nprint(add(1, 2))\n<|fim_middle|>"
            .into(),
    );
    request.max_lines = Some(2);
    request.max_tokens = Some(40);
    let reply = rt.block_on(model.chat(&request)).expect("reply");
    assert!(!reply.content.trim().is_empty(), "{reply:?}");
    // Read as a middle: no chat turn, no special tokens, at most the lines asked for.
    assert!(!reply.content.contains("<|"), "{:?}", reply.content);
    assert!(
        reply.content.matches('\n').count() <= 2,
        "{:?}",
        reply.content
    );
    assert!(reply.usage.completion_tokens <= 40);
    // The raw prompt is a few dozen tokens: no chat template (with its system prompt) around it.
    assert!(reply.usage.prompt_tokens < 60, "{:?}", reply.usage);
}

/// `ldb fix` on `task` with the embedded model, no cache and an empty configuration: the JSON
/// report and stderr.
fn fix(task: &serde_json::Value, args: &[&str]) -> (serde_json::Value, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let task_path = dir.path().join("task.json");
    std::fs::write(&task_path, task.to_string()).expect("task");
    let report_path = dir.path().join("report.json");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "").expect("config");
    let output = common::ldb()
        .args(["fix", &task_path.display().to_string(), "--model", MODEL])
        .args(args)
        .args(["--no-cache", "--config", &config.display().to_string()])
        .args(["--report", &report_path.display().to_string()])
        .output()
        .expect("run ldb fix");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let report =
        serde_json::from_str(&std::fs::read_to_string(&report_path).expect("report written"))
            .expect("report is JSON");
    (report, stderr)
}

#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn the_search_with_patches_edits_then_patches_then_samples() {
    model_path();
    // A seed no single edit fixes: the search edits it (no tokens), patches its suspicious
    // lines with the model, then draws fresh programs.
    let task = serde_json::json!({
        "task_id": "e2e/sum_evens",
        "prompt": "def sum_evens(xs: list) -> int:\n    \"\"\"Return the sum of the even numbers in xs.\"\"\"\n",
        "entry_point": "sum_evens",
        "visible_tests": ["assert sum_evens([1, 2, 3, 4]) == 6", "assert sum_evens([]) == 0"],
        "seed": "def sum_evens(xs: list) -> int:\n    total = 1\n    for x in xs:\n        total *= x\n    return total\n"
    });
    let (report, stderr) = fix(
        &task,
        &["--proposers", "mutate,patch:2,fresh:2", "--max-iters", "1"],
    );
    let candidates = report["tasks"][0]["candidates"]
        .as_array()
        .expect("candidates");
    let of = |p: &str| -> Vec<&serde_json::Value> {
        candidates.iter().filter(|c| c["proposer"] == p).collect()
    };
    assert!(!of("mutate").is_empty(), "{stderr}");
    assert!(of("mutate")
        .iter()
        .all(|c| c["tokens"] == 0 && c["edit"]["line"].is_u64()));
    let patches = of("patch");
    assert!(!patches.is_empty(), "no patch was asked for: {stderr}");
    assert!(patches
        .iter()
        .all(|c| c["tokens"].as_u64().is_some_and(|t| t > 0)));
    assert!(patches.iter().all(|c| c["edit"]["line"].is_u64()));
    // Edits come first, then patches, then fresh programs.
    let order: Vec<&str> = candidates
        .iter()
        .skip(1)
        .filter_map(|c| c["proposer"].as_str())
        .collect();
    let first = |p: &str| order.iter().position(|x| *x == p);
    assert!(first("mutate") < first("patch"), "{order:?}");
    if let Some(fresh) = first("fresh") {
        assert!(first("patch").is_some_and(|p| p < fresh), "{order:?}");
    }
}

#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn the_complete_proposer_has_the_model_write_a_function_left_unwritten() {
    model_path();
    let written = "def unique_day(day, dates):\n    n = 0\n    for d in dates:\n        if d[1] == day:\n            n += 1\n    return n == 1\n";
    let task = serde_json::json!({
        "task_id": "e2e/dates",
        "prompt": "def unique_day(day, dates):\n    \"\"\"Whether exactly one (month, day) pair has this day.\"\"\"\n\n\
                   def unique_month(month, dates):\n    \"\"\"Whether exactly one (month, day) pair has this month.\"\"\"\n",
        "entry_point": "unique_day",
        "visible_tests": [
            "assert unique_day('1', (('Jan', '1'), ('Feb', '1'))) == False",
            "assert unique_month('Jan', (('Jan', '1'), ('Jan', '2'))) == False",
            "assert unique_month('Jan', (('Jan', '1'), ('Feb', '1'))) == True"
        ],
        "seed": format!("{written}\ndef unique_month(month, dates):\n    return\n"),
    });
    // `complete` named (it left the default portfolio: it paid on student programs only), one
    // round.
    let (report, stderr) = fix(
        &task,
        &[
            "--max-iters",
            "1",
            "--proposers",
            "mutate,complete:2,fresh:4",
        ],
    );
    let candidates = report["tasks"][0]["candidates"]
        .as_array()
        .expect("candidates");
    let completions: Vec<&serde_json::Value> = candidates
        .iter()
        .filter(|c| c["proposer"] == "complete")
        .collect();
    assert!(!completions.is_empty(), "nothing was written: {stderr}");
    for c in &completions {
        assert!(c["tokens"].as_u64().is_some_and(|t| t > 0), "{c}");
        assert_eq!(c["edit"]["description"], "wrote unique_month", "{c}");
        // What the seed had written stays byte for byte; only the placeholder changes.
        if let Some(program) = c["program"].as_str() {
            assert!(program.starts_with(written), "{program}");
            assert_ne!(Some(program), task["seed"].as_str());
        }
    }
}
