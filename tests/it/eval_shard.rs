//! `ldb eval --shard I/N` and `ldb eval merge`: two shards run in two processes at once and,
//! merged, give the records of the unsharded run; merging refuses overlapping shards and names
//! missing tasks. `--strategy none` on tasks that carry their seeds needs no model; the sandbox
//! is real.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::{assert_success, ldb};

/// Seven small tasks, some seeds right and some wrong.
fn tasks_file(dir: &Path) -> PathBuf {
    let mut lines = Vec::new();
    for n in 0..7 {
        let seed = if n % 3 == 0 {
            format!("def f{n}(x):\n    return x + {}\n", n + 1)
        } else {
            format!("def f{n}(x):\n    return x + {n}\n")
        };
        lines.push(serde_json::json!({
            "task_id": format!("t/{n}"),
            "prompt": format!("def f{n}(x):\n    \"\"\"Return x + {n}.\"\"\"\n"),
            "entry_point": format!("f{n}"),
            "visible_tests": [format!("assert f{n}(1) == {}", 1 + n)],
            "hidden_tests": format!("assert f{n}(2) == {}\nassert f{n}(-1) == {}\n", 2 + n, n as i64 - 1),
            "seed": seed,
        })
        .to_string());
    }
    let path = dir.join("tasks.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").expect("tasks");
    path
}

fn eval(tasks: &Path, out: &Path, shard: Option<&str>) -> Command {
    let mut cmd = ldb();
    cmd.args(["eval", "--dataset"])
        .arg(tasks)
        .args([
            "--strategy",
            "none",
            "--quiet",
            "--concurrency",
            "2",
            "--out",
        ])
        .arg(out);
    if let Some(s) = shard {
        cmd.args(["--shard", s]);
    }
    cmd
}

/// A results file's records, in order, without what differs between two runs of the same work
/// (times, the header's creation time).
fn records(path: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).expect("results file");
    text.lines()
        .skip(1)
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).expect("record");
            if let Some(o) = v.as_object_mut() {
                for key in ["timings", "llm_ms", "total_ms"] {
                    o.remove(key);
                }
            }
            v
        })
        .collect()
}

fn header_config(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("results file");
    let first = text.lines().next().expect("header");
    let v: serde_json::Value = serde_json::from_str(first).expect("header");
    v["config"].clone()
}

fn merge(dirs: &[&Path], out: &Path, extra: &[&str]) -> Output {
    ldb()
        .args(["eval", "merge"])
        .args(dirs)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .expect("run ldb eval merge")
}

#[test]
fn two_shards_merged_equal_the_unsharded_run_and_overlaps_are_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let tasks = tasks_file(tmp.path());
    let whole = tmp.path().join("whole");
    let s0 = tmp.path().join("s0");
    let s1 = tmp.path().join("s1");
    assert_success(&eval(&tasks, &whole, None).output().expect("unsharded run"));

    // The two shards at once, in two processes.
    let a = eval(&tasks, &s0, Some("0/2"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("shard 0");
    let b = eval(&tasks, &s1, Some("1/2"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("shard 1");
    assert_success(&a.wait_with_output().expect("shard 0 output"));
    assert_success(&b.wait_with_output().expect("shard 1 output"));
    // Disjoint slices: round-robin over the task list.
    let ids = |p: &Path| -> Vec<String> {
        records(p)
            .iter()
            .map(|r| r["task_id"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    let mut in_s0 = ids(&s0.join("none.jsonl"));
    in_s0.sort();
    assert_eq!(in_s0, vec!["t/0", "t/2", "t/4", "t/6"]);

    let merged = tmp.path().join("merged");
    let out = merge(&[&s1, &s0], &merged, &[]);
    assert_success(&out);
    assert!(String::from_utf8_lossy(&out.stdout).contains("none"));
    // Merged records are in dataset order; a run appends them as tasks finish.
    assert_eq!(
        ids(&merged.join("none.jsonl")),
        (0..7).map(|n| format!("t/{n}")).collect::<Vec<_>>()
    );
    let by_task = |p: &Path| {
        let mut r = records(p);
        r.sort_by_key(|v| v["task_id"].as_str().unwrap_or_default().to_string());
        r
    };
    for file in ["seeds.jsonl", "none.jsonl"] {
        assert_eq!(
            by_task(&merged.join(file)),
            by_task(&whole.join(file)),
            "{file}"
        );
        assert_eq!(
            header_config(&merged.join(file)),
            header_config(&whole.join(file))
        );
    }
    // The merged run reads like any other.
    let report = ldb()
        .args(["eval", "report", "--json"])
        .arg(&merged)
        .output()
        .expect("report");
    assert_success(&report);
    let whole_report = ldb()
        .args(["eval", "report", "--json"])
        .arg(&whole)
        .output()
        .expect("report");
    let pass = |o: &Output| -> serde_json::Value {
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("report JSON");
        let run = &v["runs"][0];
        serde_json::json!([
            run["tasks"],
            run["seed_passed"],
            run["final_passed"],
            run["curve"]
        ])
    };
    assert_eq!(pass(&report), pass(&whole_report));

    // The same shard twice: refused, naming both directories.
    let out = merge(&[&s0, &s0], &tmp.path().join("m2"), &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("overlapping shards"), "{stderr}");
    assert!(stderr.contains("both shard 0/2"), "{stderr}");
    assert!(stderr.contains("hint: "), "{stderr}");
    assert!(!tmp.path().join("m2").exists());

    // A shard missing: its tasks are named; --partial merges the rest.
    let out = merge(&[&s0], &tmp.path().join("m3"), &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("3 tasks have no results: t/1, t/3, t/5 (shards not given: 1/2)"),
        "{stderr}"
    );
    assert!(!tmp.path().join("m3").exists());
    let out = merge(&[&s0], &tmp.path().join("m4"), &["--partial"]);
    assert_success(&out);
    assert_eq!(records(&tmp.path().join("m4/none.jsonl")).len(), 4);

    // A shard's directory is its own: another shard, or an unsharded run, is refused there.
    let out = eval(&tasks, &s0, Some("1/2")).output().expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not of shard 1/2"), "{stderr}");
    let out = eval(&tasks, &s0, None).output().expect("run");
    assert_eq!(out.status.code(), Some(2));

    // A bad --shard says how to write one.
    let out = eval(&tasks, &tmp.path().join("x"), Some("2/2"))
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("error: --shard `2/2`: I counts from 0"),
        "{stderr}"
    );
    assert!(stderr.contains("hint: write I/N"), "{stderr}");
}
