//! HumanEval and MBPP are built in: `ldb eval --dataset humaneval` runs with no `--data-dir`, and
//! what is not built in says where its files go.

use std::path::Path;
use std::process::Output;

use crate::common;

fn ldb_at(exe: &Path, args: &[&str], cwd: &Path) -> Output {
    common::ldb_at(exe)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run ldb")
}

/// A right program for HumanEval/0 and a wrong one for HumanEval/1, as a seed file in `dir`.
fn write_seeds(dir: &Path) {
    let seeds = [
        serde_json::json!({"task_id": "HumanEval/0", "solution": "def has_close_elements(numbers, threshold):\n    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n"}),
        serde_json::json!({"task_id": "HumanEval/1", "solution": "def separate_paren_groups(paren_string):\n    return []\n"}),
    ];
    let text: String = seeds.iter().map(|s| format!("{s}\n")).collect();
    std::fs::write(dir.join("seeds.jsonl"), text).expect("seeds");
}

const EVAL_TWO: &[&str] = &[
    "eval",
    "--dataset",
    "humaneval",
    "--strategy",
    "none",
    "--seeds",
    "seeds.jsonl",
    "--tasks",
    "HumanEval/0,HumanEval/1",
    "--out",
    "run",
    "--quiet",
];

/// (task id, passes the hidden tests) of each record of `run/none.jsonl`, by task id.
fn hidden_passes(dir: &Path) -> Vec<(String, bool)> {
    let text = std::fs::read_to_string(dir.join("run/none.jsonl")).expect("results");
    let mut records: Vec<serde_json::Value> = text
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).expect("record"))
        .collect();
    records.sort_by_key(|r| r["task_id"].as_str().unwrap_or_default().to_string());
    records
        .iter()
        .map(|r| {
            (
                r["task_id"].as_str().unwrap_or_default().to_string(),
                r["final_hidden_pass"].as_bool().unwrap_or(false),
            )
        })
        .collect()
}

#[test]
fn humaneval_runs_with_no_data_dir() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_seeds(dir.path());
    let out = common::ldb_in(dir.path(), EVAL_TWO);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let text = std::fs::read_to_string(dir.path().join("run/none.jsonl")).expect("results");
    assert_eq!(
        hidden_passes(dir.path()),
        vec![
            ("HumanEval/0".to_string(), true),
            ("HumanEval/1".to_string(), false)
        ]
    );
    assert!(text
        .lines()
        .next()
        .unwrap_or_default()
        .contains(r#""dataset":"humaneval""#));
    // The run as a page: the comparison, the chart inline, a row per task.
    let out = common::ldb_in(dir.path(), &["eval", "report", "run", "--html", "run.html"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(dir.path().join("run.html")).expect("page");
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("<svg"), "the chart is inline");
    assert!(
        page.contains(
            "<td class=\"num\">2</td><td class=\"num\">50.0%</td><td class=\"num\">50.0%</td>"
        ),
        "{page}"
    );
    assert!(page.contains("<td>HumanEval/0</td><td><span class=\"pass\">pass</span></td><td><span class=\"pass\">pass</span></td>"), "{page}");
    assert!(page.contains("<td>HumanEval/1</td><td><span class=\"fail\">fail</span></td><td><span class=\"fail\">fail</span></td>"), "{page}");
}

#[test]
fn what_is_not_built_in_says_where_its_files_go() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = common::ldb_in(
        dir.path(),
        &[
            "eval",
            "--dataset",
            "humaneval",
            "--strategy",
            "none",
            "--seeds",
            "ldb:gpt-3.5-turbo-0613",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "error: --seeds ldb:gpt-3.5-turbo-0613: LDB's seed files are not built into ldb"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("hint: LDB's seeds are not built in: copy input_data/humaneval/seed/gpt-3.5-turbo-0613/seed.jsonl"), "{stderr}");
    assert!(
        stderr.contains("DIR/ldb/humaneval/seed/gpt-3.5-turbo-0613/seed.jsonl"),
        "{stderr}"
    );

    let out = common::ldb_in(
        dir.path(),
        &["eval", "--dataset", "transcoder", "--strategy", "none"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("error: --dataset transcoder is not built into ldb"),
        "{stderr}"
    );
    assert!(
        stderr.contains("DIR/ldb/transcoder/dataset/probs.jsonl"),
        "{stderr}"
    );
}

/// The sandbox covers /tmp with an empty tmpfs, and scoring starts the program's process from
/// the ldb binary: a binary under /tmp must still be found (it was not, and every program
/// failed its hidden tests without a word).
#[test]
fn scoring_works_when_ldb_lives_under_tmp() {
    let bin_dir = tempfile::Builder::new()
        .prefix("ldb-bin")
        .tempdir_in("/tmp")
        .expect("tempdir");
    let exe = bin_dir.path().join("ldb");
    std::fs::copy(env!("CARGO_BIN_EXE_ldb"), &exe).expect("copy ldb");
    let dir = tempfile::tempdir().expect("tempdir");
    write_seeds(dir.path());
    let out = ldb_at(&exe, EVAL_TWO, dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        hidden_passes(dir.path()),
        vec![
            ("HumanEval/0".to_string(), true),
            ("HumanEval/1".to_string(), false)
        ]
    );
}
