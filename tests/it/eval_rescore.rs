//! `ldb eval rescore`: a finished run scored again on corrected hidden tests. The regression it
//! pins: a benchmark whose hidden tests name a global they never define (Refactory's question 2
//! and `tuple_of_possible_birthdays`) fails every program, and a run made on it could only be
//! rerun from scratch. Model-free edits (`--proposers mutate`) debug without a model, so the
//! run keeps a report; the sandbox is real.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{assert_success, ldb};
use crate::ldb_snapshot;

const SEED: &str = "def f(x):\n    return x - 1\n";

/// One task whose seed is wrong (an edit fixes it); `hidden` is its hidden test source.
fn tasks_file(dir: &Path, name: &str, hidden: &str) -> PathBuf {
    let task = serde_json::json!({
        "task_id": "t/0",
        "prompt": "def f(x):\n    \"\"\"Return x + 1.\"\"\"\n",
        "entry_point": "f",
        "visible_tests": ["assert f(1) == 2"],
        "hidden_tests": hidden,
        "seed": SEED,
    });
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).expect("folder");
    // The same file name in both folders: a run resumes only on a dataset of the same name.
    let path = folder.join("tasks.jsonl");
    std::fs::write(&path, format!("{task}\n")).expect("tasks");
    path
}

/// The task with hidden tests that name a global they never define, and the same task
/// corrected (same file name, other folder).
fn broken_and_fixed(dir: &Path) -> (PathBuf, PathBuf) {
    (
        tasks_file(dir, "broken", "assert f(2) == EXPECTED\n"),
        tasks_file(dir, "fixed", "EXPECTED = 3\nassert f(2) == EXPECTED\n"),
    )
}

fn run(tasks: &Path, out: &Path, extra: &[&str]) -> String {
    let output = ldb()
        .args(["eval", "--dataset"])
        .arg(tasks)
        .args(["--strategy", "none,search", "--proposers", "mutate"])
        .args([
            "--max-iters",
            "3",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "none",
        ])
        .args(["--quiet", "--out"])
        .arg(out)
        .args(extra)
        .output()
        .expect("run ldb eval");
    assert_success(&output);
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn rescore(dir: &Path, tasks: &Path) -> Output {
    ldb()
        .args(["eval", "rescore"])
        .arg(dir)
        .arg("--dataset")
        .arg(tasks)
        .output()
        .expect("run ldb eval rescore")
}

fn record(dir: &Path, strategy: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join(format!("{strategy}.jsonl"))).expect("results");
    let line = text.lines().nth(1).expect("a record");
    serde_json::from_str(line).expect("record")
}

#[test]
fn a_run_on_hidden_tests_that_name_an_undefined_global_is_fixed_by_rescoring() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (broken, fixed) = broken_and_fixed(tmp.path());
    let out = tmp.path().join("run");
    // The run says up front that every program will fail these hidden tests.
    let stderr = run(&broken, &out, &[]);
    assert!(
        stderr.contains("warning: the hidden tests of 1 task of tasks use a name")
            && stderr.contains("(`EXPECTED`; first: t/0)"),
        "{stderr}"
    );

    let before = record(&out, "search");
    assert_eq!(before["final_program"], "def f(x):\n    return x + 1\n");
    assert_eq!(before["final_hidden_pass"], false);
    assert!(before["final_hidden_summary"]
        .as_str()
        .is_some_and(|s| s.contains("NameError")));

    let output = rescore(&out, &fixed);
    assert_success(&output);
    let after = record(&out, "search");
    assert_eq!(after["final_hidden_pass"], true);
    assert_eq!(after["seed_hidden_pass"], false);
    assert_eq!(after["final_hidden_summary"], "passed");
    // The budget curve comes from the kept report: the seed (budget 0) still fails.
    let curve: Vec<bool> = after["hidden_by_budget"]
        .as_array()
        .expect("curve")
        .iter()
        .map(|v| v.as_bool().expect("bool"))
        .collect();
    assert_eq!(curve.first(), Some(&false));
    assert_eq!(curve.last(), Some(&true));
    // The candidate that passed the visible tests is judged again too.
    let judged: Vec<&serde_json::Value> = after["candidate_log"]
        .as_array()
        .expect("candidates")
        .iter()
        .filter(|c| !c["hidden_pass"].is_null())
        .collect();
    assert!(!judged.is_empty());
    assert!(
        judged.iter().all(|c| c["hidden_pass"] == true),
        "{judged:?}"
    );
    // Everything the loop did stays as it was.
    for key in [
        "final_program",
        "tokens",
        "iterations",
        "status",
        "cost_by_iteration",
    ] {
        assert_eq!(before[key], after[key], "{key}");
    }
    // The seed kept as final (`none`) is scored again as well: still wrong, now on the
    // assertion instead of the missing name.
    let none = record(&out, "none");
    assert_eq!(none["final_hidden_pass"], false);
    assert!(none["final_hidden_summary"]
        .as_str()
        .is_some_and(|s| !s.contains("NameError")));
    // The summary is rewritten from the new verdicts.
    let summary = std::fs::read_to_string(out.join("summary.md")).expect("summary");
    assert!(
        summary.contains("| search · tasks · none | 1 | 0.0 | 100.0 | +100.0 | 1 |"),
        "{summary}"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("0 -> 1 pass the hidden tests"), "{stderr}");

    // Rescoring again changes nothing but the scoring times.
    let scored = std::fs::read_to_string(out.join("search.jsonl")).expect("results");
    assert_success(&rescore(&out, &fixed));
    let again = std::fs::read_to_string(out.join("search.jsonl")).expect("results");
    assert_eq!(without_times(&scored), without_times(&again));

    // The run resumes on the corrected dataset (same name): nothing is run again, and
    // nothing is missing from its hidden tests.
    let stderr = run(&fixed, &out, &[]);
    assert!(!stderr.contains("warning"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(out.join("search.jsonl")).expect("results"),
        again
    );
}

/// A results file's records without their timings.
fn without_times(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .skip(1)
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).expect("record");
            if let Some(o) = v.as_object_mut() {
                o.remove("timings");
            }
            v
        })
        .collect()
}

#[test]
fn rescoring_on_a_dataset_without_the_runs_tasks_changes_nothing() {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = tasks_file(tmp.path(), "a", "assert f(2) == 3\n");
    let out = tmp.path().join("run");
    run(&tasks, &out, &[]);
    let results = out.join("search.jsonl");
    let before = std::fs::read_to_string(&results).expect("results");

    // Same file name (so the same benchmark name), other tasks.
    std::fs::create_dir_all(tmp.path().join("b")).expect("folder");
    let other = tmp.path().join("b/tasks.jsonl");
    let task = serde_json::json!({
        "task_id": "u/0", "prompt": "def g():\n    pass\n", "entry_point": "g",
        "visible_tests": ["assert g() is None"], "seed": "def g():\n    pass\n",
    });
    std::fs::write(&other, format!("{task}\n")).expect("other");
    let output = rescore(&out, &other);
    ldb_snapshot!(output);
    assert_eq!(std::fs::read_to_string(&results).expect("results"), before);
}

#[test]
fn a_run_is_not_rescored_on_another_benchmark_with_the_same_ids() {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = tasks_file(tmp.path(), "a", "assert f(2) == 3\n");
    let out = tmp.path().join("run");
    run(&tasks, &out, &[]);
    let before = std::fs::read_to_string(out.join("search.jsonl")).expect("results");
    let other = tmp.path().join("other.jsonl");
    std::fs::copy(&tasks, &other).expect("copy");
    let output = rescore(&out, &other);
    ldb_snapshot!(output);
    assert_eq!(
        std::fs::read_to_string(out.join("search.jsonl")).expect("results"),
        before
    );
}

#[test]
fn a_run_that_kept_no_reports_is_not_rescored_and_no_file_of_it_changes() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (broken, fixed) = broken_and_fixed(tmp.path());
    let out = tmp.path().join("run");
    run(&broken, &out, &["--no-reports"]);
    let files = ["none.jsonl", "search.jsonl", "summary.md"];
    let before: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(out.join(f)).expect("file"))
        .collect();
    let output = rescore(&out, &fixed);
    ldb_snapshot!(output);
    // `none.jsonl` comes first and needs no report: it is not rewritten either.
    for (f, was) in files.iter().zip(&before) {
        assert_eq!(
            &std::fs::read_to_string(out.join(f)).expect("file"),
            was,
            "{f}"
        );
    }
}

#[test]
fn a_folder_that_is_not_a_run_is_named() {
    let tmp = tempfile::tempdir().expect("tmp");
    let tasks = tasks_file(tmp.path(), "a", "assert f(2) == 3\n");
    let output = rescore(&tmp.path().join("nothing"), &tasks);
    ldb_snapshot!(output);
}
