//! `ldb exec`, `ldb fix --make-runnable` and `ldb eval exec` with the real embedded model
//! (Qwen2.5-Coder-0.5B through llama.cpp): the twins of the scripted tests in `exec.rs`.
//! They need the model file, so they are ignored by default; `scripts/test.sh` runs them. They
//! assert what does not depend on the model's skill.

use std::path::{Path, PathBuf};

use ldb::generate::local::catalog;
use ldb::python::{parse_module, SourceFile};

use crate::common::ldb;

const MODEL: &str = "qwen2.5-coder-0.5b";

fn require_model() {
    let spec = catalog::find(MODEL).expect("catalogue entry");
    catalog::verified_path(&spec, &catalog::models_dir())
        .expect("the 0.5B model is installed: run `ldb model pull qwen2.5-coder-0.5b`");
}

const MODEL_ARGS: [&str; 3] = ["--model", MODEL, "--no-cache"];

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/snippet_deltas/deltas.py")
}

#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn exec_searches_prefixes_with_the_embedded_model() {
    require_model();
    // The example plus a branch no stand-in takes (its `len()` is at most 2), so the model is asked.
    let dir = tempfile::tempdir().expect("tempdir");
    let snippet = dir.path().join("deltas.py");
    let mut code = std::fs::read_to_string(example()).expect("example");
    code.push_str("if len(readings) > 3:\n    print('a long series')\n");
    std::fs::write(&snippet, code).expect("write snippet");
    let output = ldb()
        .args(["exec", &snippet.display().to_string()])
        .args([
            "--model",
            MODEL,
            "--no-cache",
            "--n",
            "2",
            "--k",
            "1",
            "--format",
            "json",
        ])
        .output()
        .expect("run ldb exec");
    let stderr = String::from_utf8_lossy(&output.stderr);
    // 0: a prefix ran the snippet to its end; 1: none did (the snippet has a bug).
    assert!(matches!(output.status.code(), Some(0 | 1)), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    assert_eq!(report["statements"], 7);
    assert_eq!(report["line_coverage"].as_array().map(Vec::len), Some(8));
    // The snippet as given stops at its first use of `readings`, line 3.
    assert_eq!(report["tree"][0]["step"], "as_is");
    assert_eq!(report["tree"][0]["ending"]["error"], "NameError");
    assert_eq!(report["tree"][0]["ending"]["line"], 3);
    let calls = report["usage"]["calls"].as_u64().expect("calls");
    assert!(calls >= 2, "step 1 asks for two prefixes");
    assert!(report["usage"]["prompt_tokens"].as_u64() > Some(0));
    let tree = report["tree"].as_array().expect("tree");
    // The stand-in prefixes come before the model's, then every call gave one node (and a
    // prefix of the model's that raised two more, behind stand-ins); every prefix that ran
    // parses as Python.
    for node in &tree[1..=ldb::exec::standins::variants_to_run(false, false).len()] {
        assert_eq!(node["step"], "stand_ins");
    }
    let stand_ins = tree.iter().filter(|n| n["step"] == "stand_ins").count();
    assert_eq!((tree.len() - stand_ins) as u64, calls + 1);
    for node in tree {
        let prefix = node["prefix"].as_str().expect("prefix");
        assert!(parse_module(&SourceFile::new(prefix)).is_ok(), "{prefix}");
        if let Some(parent) = node["parent"].as_u64() {
            assert!(parent < node["id"].as_u64().expect("id"));
        }
    }
    let best = &report["best"]["coverage"];
    let set = &report["set_coverage"];
    assert!(set["covered"].as_u64() >= best["covered"].as_u64());
}

#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn fix_make_runnable_with_the_embedded_model() {
    require_model();
    let dir = tempfile::tempdir().expect("tempdir");
    let report_path = dir.path().join("report.json");
    let output = ldb()
        .args(["fix", &example().display().to_string(), "--make-runnable"])
        .args([
            "--exec-n",
            "1",
            "--exec-k",
            "0",
            "--strategy",
            "ldb",
            "--max-iters",
            "1",
        ])
        .args(["--report", &report_path.display().to_string()])
        .args(MODEL_ARGS)
        .output()
        .expect("run ldb fix");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("make-runnable: prefix #"), "{stderr}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report_path).expect("report"))
            .expect("JSON");
    let task = &report["tasks"][0];
    assert_eq!(task["task_id"], "deltas");
    assert_eq!(
        task["seed"]["program"],
        std::fs::read_to_string(example()).expect("example")
    );
    let status = task["status"].as_str().expect("status");
    assert!(
        matches!(status, "fixed" | "not_fixed" | "already_passing"),
        "{status}: {stderr}"
    );
    let first = &task["iterations"][0];
    if first["passed"] == 0 {
        // The failing run was traced on the snippet's own module-level blocks.
        let trace = first["trace"].as_str().expect("trace");
        assert!(
            trace.contains("[BLOCK-0]") && trace.contains("deltas = []"),
            "{trace}"
        );
    }
}

#[test]
#[ignore = "needs the embedded model and ../shared/datasets; scripts/test.sh runs it"]
fn eval_exec_scores_records_and_resumes() {
    require_model();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets");
    if !data.join("treefix/treefix_sample.jsonl").exists() {
        eprintln!("skipped: no Treefix sample under {}", data.display());
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("results.jsonl");
    let run = || {
        ldb()
            .args(["eval", "exec", "--data-dir", &data.display().to_string()])
            .args(["--ids", "so_snippets/snippet_159,so_snippets/snippet_143"])
            .args(["--n", "1", "--k", "0", "--out", &out.display().to_string()])
            .args(MODEL_ARGS)
            .output()
            .expect("run ldb eval exec")
    };
    let first = run();
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert_eq!(first.status.code(), Some(0), "{stderr}");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&out)
        .expect("results")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(lines.len(), 2);
    let by_id = |id: &str| lines.iter().find(|l| l["id"] == id).expect("record");
    assert_eq!(by_id("so_snippets/snippet_143")["status"], "not_python");
    let scored = by_id("so_snippets/snippet_159");
    assert_eq!(scored["status"], "scored");
    for field in ["as_is", "best", "set"] {
        let v = scored["ldb"][field].as_f64().expect("fraction");
        assert!((0.0..=1.0).contains(&v), "{field} {v}");
    }
    assert_eq!(scored["treefix_gpt4o"]["set"], 1.0);
    let table = String::from_utf8_lossy(&first.stdout);
    assert!(table.contains("Treefix-GPT-4o (stored)"), "{table}");
    // Run again: nothing left to do.
    let second = run();
    assert!(String::from_utf8_lossy(&second.stderr).contains("0 records to run"));
    assert_eq!(
        std::fs::read_to_string(&out)
            .expect("results")
            .lines()
            .count(),
        2
    );
}

#[test]
#[ignore = "needs the embedded model; scripts/test.sh runs it"]
fn check_make_runnable_with_the_embedded_model() {
    require_model();
    let output = ldb()
        .args(["check", &example().display().to_string(), "--make-runnable"])
        .args([
            "--mode", "exec", "--format", "json", "--exec-n", "1", "--exec-k", "0",
        ])
        .args(MODEL_ARGS)
        .output()
        .expect("run ldb check");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(matches!(output.status.code(), Some(0 | 1)), "{stderr}");
    assert!(stderr.contains("make-runnable: prefix #"), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    if report["is_error"] == true {
        // Whatever the prefix, the error is placed on a line of the snippet as given.
        let line = report["line"].as_u64().expect("line");
        assert!((2..=6).contains(&line), "{report}");
    }
}
