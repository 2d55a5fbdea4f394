//! `ldb eval` run control, end to end with the real binary and sandbox: resuming a run without
//! repeating or losing a task, a torn last line, refusing a results file of other settings,
//! `--only-failing` with `--limit`, and `ldb eval report`. LDB's GPT-3.5 seeds with
//! `--strategy none` need no model.

use crate::common::{self, shared};
use crate::ldb_snapshot;

use std::path::Path;
use std::process::Output;

fn eval(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["--strategy", "none"];
    args.extend_from_slice(extra);
    ldb_eval(out, &args)
}

/// `ldb eval` on HumanEval with LDB's GPT-3.5 seeds into `out`, with `args`.
fn ldb_eval(out: &Path, args: &[&str]) -> Output {
    let data = shared();
    let mut all = vec![
        "eval",
        "--dataset",
        "humaneval",
        "--data-dir",
        data.to_str().expect("utf-8"),
        "--seeds",
        "ldb:gpt-3.5-turbo-0613",
        "--out",
        out.to_str().expect("utf-8"),
    ];
    all.extend_from_slice(args);
    common::ldb_in(Path::new("."), &all)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The task records of a results file, in file order; every line must be whole JSON.
fn records(path: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).expect("results file");
    assert!(text.ends_with('\n'), "the file ends with a whole line");
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .collect();
    assert_eq!(lines[0]["kind"], "header");
    lines.into_iter().skip(1).collect()
}

fn ids(records: &[serde_json::Value]) -> Vec<String> {
    records
        .iter()
        .map(|r| r["task_id"].as_str().expect("task_id").to_string())
        .collect()
}

#[test]
fn a_run_resumes_without_repeating_or_losing_tasks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let results = out.join("none.jsonl");

    let first = eval(&out, &["--limit", "2"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let before = std::fs::read_to_string(&results).expect("results");
    let mut done = ids(&records(&results));
    done.sort();
    assert_eq!(done, ["HumanEval/0", "HumanEval/1"]);

    // A larger limit runs only the two new tasks and leaves the old records as they were.
    let second = eval(&out, &["--limit", "4"]);
    let err = stderr(&second);
    assert_eq!(second.status.code(), Some(0), "{err}");
    assert!(err.contains("2 tasks already done"), "{err}");
    assert!(
        err.contains("running 2 task × strategy runs (2 done before)"),
        "{err}"
    );
    let after = std::fs::read_to_string(&results).expect("results");
    assert!(after.starts_with(&before), "old records are untouched");
    let mut all = ids(&records(&results));
    all.sort();
    assert_eq!(
        all,
        ["HumanEval/0", "HumanEval/1", "HumanEval/2", "HumanEval/3"]
    );
    assert_eq!(records(&out.join("seeds.jsonl")).len(), 4);
    // The markdown summary counts each task once.
    let stdout = String::from_utf8_lossy(&second.stdout);
    assert!(
        stdout.contains("| none · humaneval · seeds gpt-3.5-turbo-0613 | 4 |"),
        "{stdout}"
    );

    // A killed writer leaves half a record: it is dropped and its task runs again.
    let mut torn = after.clone();
    torn.push_str("{\"kind\":\"task\",\"task_id\":\"HumanEval/4\",\"strategy\":\"no");
    std::fs::write(&results, torn).expect("write");
    let third = eval(&out, &["--limit", "5"]);
    assert_eq!(third.status.code(), Some(0), "{}", stderr(&third));
    let recs = records(&results);
    let mut all = ids(&recs);
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 5, "{all:?}");
    assert_eq!(recs.len(), 5, "no task twice");
    assert!(std::fs::read_to_string(&results)
        .expect("results")
        .starts_with(&after));

    // Other settings are refused, and nothing is written.
    let len = std::fs::metadata(&results).expect("meta").len();
    let refused = eval(&out, &["--limit", "6", "--max-iters", "3"]);
    let err = stderr(&refused);
    assert_eq!(refused.status.code(), Some(2), "{err}");
    assert!(err.contains("max_iters was `10`, now `3`"), "{err}");
    assert!(err.contains("hint:"), "{err}");
    assert_eq!(std::fs::metadata(&results).expect("meta").len(), len);

    // Samples, chart and markdown from the report command.
    let samples = dir.path().join("samples.jsonl");
    let plot = dir.path().join("plot.svg");
    let md = dir.path().join("report.md");
    let report = common::ldb_in(
        Path::new("."),
        &[
            "eval",
            "report",
            out.to_str().expect("utf-8"),
            "--samples",
            samples.to_str().expect("utf-8"),
            "--plot",
            plot.to_str().expect("utf-8"),
            "--out",
            md.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(report.status.code(), Some(0), "{}", stderr(&report));
    let samples = std::fs::read_to_string(&samples).expect("samples");
    assert_eq!(samples.lines().count(), 5);
    let sample: serde_json::Value =
        serde_json::from_str(samples.lines().next().expect("a line")).expect("json");
    assert!(sample["completion"]
        .as_str()
        .is_some_and(|c| c.contains("def ")));
    assert!(std::fs::read_to_string(&plot)
        .expect("svg")
        .starts_with("<svg"));
    let md = std::fs::read_to_string(&md).expect("markdown");
    assert!(md.contains("pass@1 by iteration budget"), "{md}");
    assert!(md.contains("](plot.svg)"), "{md}");
    // The run directory has its own summary, chart and samples.
    for file in ["summary.md", "pass_at_iteration.svg", "none.samples.jsonl"] {
        assert!(out.join(file).is_file(), "{file}");
    }
}

/// Writes `records` back as `path`'s records, under its header.
fn write_records(path: &Path, records: &[serde_json::Value]) {
    let text = std::fs::read_to_string(path).expect("results file");
    let header = text.lines().next().expect("header");
    let mut out = format!("{header}\n");
    for r in records {
        out.push_str(&r.to_string());
        out.push('\n');
    }
    std::fs::write(path, out).expect("write");
}

#[test]
fn regression_a_run_compacted_while_going_resumed_with_digests_for_seeds() {
    // A long run is compacted to be kept before it ends; its seed records then hold digests
    // where the programs were, and the resume must debug the seed, not the digest.
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let results = out.join("none.jsonl");
    let first = eval(&out, &["--limit", "2"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let whole = records(&results);
    let program_of = |recs: &[serde_json::Value], id: &str| {
        recs.iter()
            .find(|r| r["task_id"] == id)
            .and_then(|r| r["final_program"].as_str())
            .expect("final_program")
            .to_string()
    };
    let seed_program = program_of(&whole, "HumanEval/1");
    assert!(seed_program.contains("def "), "{seed_program}");

    let compact = std::process::Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/compact_results.py"))
        .arg(&out)
        .output()
        .expect("python3");
    assert!(compact.status.success(), "{}", stderr(&compact));
    let seeds = records(&out.join("seeds.jsonl"));
    assert!(seeds.iter().all(|s| s["program"]
        .as_str()
        .is_some_and(|p| p.starts_with("sha256:"))));
    // The run "stopped" before HumanEval/1's record.
    let kept: Vec<_> = records(&results)
        .into_iter()
        .filter(|r| r["task_id"] == "HumanEval/0")
        .collect();
    write_records(&results, &kept);

    let second = eval(&out, &["--limit", "2"]);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let resumed = records(&results);
    assert_eq!(ids(&resumed), ["HumanEval/0", "HumanEval/1"]);
    assert_eq!(program_of(&resumed, "HumanEval/1"), seed_program);
    let visible = |recs: &[serde_json::Value]| {
        recs.iter()
            .find(|r| r["task_id"] == "HumanEval/1")
            .map(|r| r["final_visible_pass"].clone())
    };
    assert_eq!(visible(&resumed), visible(&whole));

    // A seed source that now gives another program refuses the resume, naming the task.
    write_records(&results, &kept);
    let tampered: Vec<_> = records(&out.join("seeds.jsonl"))
        .into_iter()
        .map(|mut s| {
            if s["task_id"] == "HumanEval/1" {
                s["program"] = "sha256:0000000000000000".into();
            }
            s
        })
        .collect();
    write_records(&out.join("seeds.jsonl"), &tampered);
    let refused = eval(&out, &["--limit", "2"]);
    ldb_snapshot!("a_compacted_seed_that_the_source_no_longer_gives", refused);
    assert_eq!(ids(&records(&results)), ["HumanEval/0"], "nothing was run");
}

#[test]
fn only_failing_with_a_limit_counts_failing_seeds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let run = eval(&out, &["--only-failing", "--limit", "2"]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let recs = records(&out.join("none.jsonl"));
    let failing: Vec<&serde_json::Value> = recs
        .iter()
        .filter(|r| r["seed_visible_pass"] == false)
        .collect();
    assert_eq!(failing.len(), 2, "two failing seeds selected");
    // Passing seeds met on the way are kept as they are and scored; none comes after the
    // second failing seed in dataset order.
    let number = |r: &serde_json::Value| -> usize {
        r["task_id"]
            .as_str()
            .and_then(|id| id.strip_prefix("HumanEval/"))
            .and_then(|n| n.parse().ok())
            .expect("a HumanEval id")
    };
    let last_failing = failing.iter().map(|r| number(r)).max().expect("some");
    assert_eq!(
        recs.len(),
        last_failing + 1,
        "every task up to the second failing seed"
    );
    for r in &recs {
        if r["seed_visible_pass"] == true {
            assert_eq!(r["status"], "already_passing");
            assert_eq!(r["debugged"], false);
        }
    }
}

#[test]
fn missing_inputs_are_clear_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    // HumanEval and MBPP are built in; TransCoder needs its files.
    let no_data = common::ldb_in(
        Path::new("."),
        &["eval", "--dataset", "transcoder", "--strategy", "none"],
    );
    let err = stderr(&no_data);
    assert_eq!(no_data.status.code(), Some(2), "{err}");
    assert!(err.contains("--data-dir"), "{err}");

    let no_dataset = common::ldb_in(Path::new("."), &["eval"]);
    assert_eq!(no_dataset.status.code(), Some(2));
    assert!(stderr(&no_dataset).contains("--dataset"));

    let bad_strategy = eval(&dir.path().join("x"), &["--strategy", "magic"]);
    assert_eq!(bad_strategy.status.code(), Some(2));
    assert!(stderr(&bad_strategy).contains("unknown strategy"));

    let unknown_task = eval(&dir.path().join("y"), &["--tasks", "HumanEval/999"]);
    assert_eq!(unknown_task.status.code(), Some(2));
    assert!(stderr(&unknown_task).contains("HumanEval/999"));

    let not_results = dir.path().join("z.jsonl");
    std::fs::write(&not_results, "{\"task_id\": \"a\"}\n").expect("write");
    let report = common::ldb_in(
        Path::new("."),
        &["eval", "report", not_results.to_str().expect("utf-8")],
    );
    assert_eq!(report.status.code(), Some(2));
    assert!(stderr(&report).contains("not an `ldb eval` results file"));
}

/// `ldb eval` with `strategy` on HumanEval/0 (its GPT-3.5 seed passes the visible tests, so
/// with `--only-failing` no model is called) and the model flags `models`.
fn eval_models(out: &Path, strategy: &str, models: &[&str]) -> Output {
    let mut args = vec![
        "--tasks",
        "HumanEval/0",
        "--only-failing",
        "--strategy",
        strategy,
        "--base-url",
        "http://127.0.0.1:9/v1",
    ];
    args.extend_from_slice(models);
    ldb_eval(out, &args)
}

fn header(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("results file");
    serde_json::from_str(text.lines().next().expect("a header")).expect("json")
}

#[test]
fn fresh_programs_of_another_model_are_in_the_header_and_never_resumed_as_the_debuggers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let other = ["--model", "big", "--generator-model", "small"];
    let run = eval_models(&out, "resample,search", &other);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let kept = records(&out.join("search.jsonl"));
    assert_eq!(kept[0]["status"], "already_passing", "no model was called");
    // Both strategies draw fresh programs from the task: from the generator.
    for strategy in ["resample", "search"] {
        let h = header(&out.join(format!("{strategy}.jsonl")));
        let generator = h["config"]["generator"].as_str().expect("generator");
        assert!(generator.contains("small"), "{strategy}: {h}");
    }

    // The same run with one model for both roles is other settings: refused, nothing written.
    let len = std::fs::metadata(out.join("search.jsonl"))
        .expect("meta")
        .len();
    let refused = eval_models(&out, "search", &["--model", "big"]);
    let err = stderr(&refused);
    assert_eq!(refused.status.code(), Some(2), "{err}");
    assert!(err.contains("generator"), "{err}");
    assert_eq!(
        std::fs::metadata(out.join("search.jsonl"))
            .expect("meta")
            .len(),
        len
    );

    // Edits alone draw no fresh program: the generator is not theirs to name, and one model
    // for both roles reads as runs always have.
    let edits = dir.path().join("edits");
    let run = eval_models(
        &edits,
        "search",
        &[
            "--proposers",
            "mutate",
            "--model",
            "big",
            "--generator-model",
            "small",
        ],
    );
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert_eq!(
        header(&edits.join("search.jsonl"))["config"]["generator"],
        "-"
    );
    let same = dir.path().join("same");
    let run = eval_models(&same, "search", &["--model", "big"]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert_eq!(
        header(&same.join("search.jsonl"))["config"]["generator"],
        "-"
    );
}
