//! The sanity line of `ldb eval report --ldb-published`: LDB's shipped HumanEval results
//! (`../shared/datasets/ldb/results_summary`), re-scored in our sandbox with LDB's harness, must
//! give the pass@1 LDB itself recorded; and bad files get errors that name them.

use crate::common::{self, shared};

use ldb::eval::fix::published::rescore;
use ldb::run::sandbox::Limits;
use ldb::run::Runner;

fn runner() -> Runner {
    common::runner(Limits::default().wall())
}

#[test]
fn ldbs_published_humaneval_run_rescores_to_its_own_pass_at_1() {
    let file = shared().join("ldb/results_summary/humaneval__gpt-3.5-turbo-0613.jsonl");
    let p = rescore(&file, &shared(), &runner()).expect("rescore");
    assert_eq!(p.tasks, 164);
    assert_eq!(p.dataset, "humaneval");
    assert_eq!(p.model, "gpt-3.5-turbo-0613");
    // Every one of LDB's verdicts is reproduced on the same programs.
    assert_eq!(p.disagreements, Vec::<String>::new());
    assert_eq!(p.rescored_solved, p.claimed_solved);
    assert!(p.claimed_solved > 100 && p.claimed_solved < 164);
    // The seeds of the same model were found and scored; debugging gained more than it lost.
    let seeds = p
        .seed_solved
        .expect("LDB's gpt-3.5 seed file is in the data dir");
    assert!(seeds < p.rescored_solved);
    assert_eq!(
        p.rescored_solved as isize - seeds as isize,
        p.fixed.len() as isize - p.broken.len() as isize
    );
    assert!(p.debugged > 0 && p.mean_iterations >= 1.0 && p.mean_tokens > 0.0);
}

#[test]
fn a_file_not_named_dataset_model_is_refused_with_a_hint() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("results.jsonl");
    std::fs::write(&file, "{}\n").expect("write");
    let err = rescore(&file, &shared(), &runner()).expect_err("bad name");
    let text = err.to_string();
    assert!(text.contains("results.jsonl"), "{text}");
    assert!(text.contains("<dataset>__<model>.jsonl"), "{text}");
    assert!(err.hint().is_some_and(|h| h.contains("results_summary")));
}

#[test]
fn a_record_that_is_not_ldbs_names_the_file_and_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("humaneval__mine.jsonl");
    std::fs::write(
        &file,
        "{\"task_id\": \"HumanEval/0\", \"is_solved\": true, \"solution\": \"x = 1\"}\n[1, 2]\n",
    )
    .expect("write");
    let text = rescore(&file, &shared(), &runner())
        .expect_err("bad record")
        .to_string();
    assert!(text.contains("humaneval__mine.jsonl line 2"), "{text}");

    std::fs::write(
        &file,
        "{\"task_id\": \"HumanEval/9999\", \"is_solved\": true, \"solution\": \"x = 1\"}\n",
    )
    .expect("write");
    let text = rescore(&file, &shared(), &runner())
        .expect_err("unknown task")
        .to_string();
    assert!(text.contains("HumanEval/9999"), "{text}");
}

#[test]
fn a_claimed_solution_that_fails_here_is_a_disagreement() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("humaneval__mine.jsonl");
    // HumanEval/0's canonical idea, and a program that claims success but returns nothing.
    let good = "def has_close_elements(numbers, threshold):\n    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for j, b in enumerate(numbers) if i != j)\n";
    let bad = "def add(x, y):\n    pass\n";
    let lines = [
        serde_json::json!({"task_id": "HumanEval/0", "is_solved": true, "debug_iter": 0, "solution": good}),
        serde_json::json!({"task_id": "HumanEval/53", "is_solved": true, "debug_iter": 2, "token_nums": 100, "solution": bad}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).expect("write");
    let p = rescore(&file, &shared(), &runner()).expect("rescore");
    assert_eq!(p.claimed_solved, 2);
    assert_eq!(p.rescored_solved, 1);
    assert_eq!(p.disagreements, ["HumanEval/53"]);
    assert_eq!(p.seed_solved, None, "no seed folder for model `mine`");
    assert_eq!(
        (p.debugged, p.mean_iterations, p.mean_tokens),
        (1, 2.0, 100.0)
    );
}
