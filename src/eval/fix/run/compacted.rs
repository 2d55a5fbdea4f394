//! Resuming a run whose records were compacted (`benchmarks/compact_results.py`).
//!
//! Compaction keeps a seed record's figures but replaces its program with a digest (`sha256:`
//! and the first 16 hex digits of the text's SHA-256). A long run is compacted to be kept while
//! it is still going, so a resume must not debug a digest: the seeds of the tasks still to run
//! are obtained again from the seed source and must hash to the recorded digest, or the run is
//! refused (the seed source changed, or the seeds were generated and cannot be drawn again).

use std::collections::HashMap;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::super::results::{SeedRecord, TaskRecord};
use super::super::EvalError;

const PREFIX: &str = "sha256:";

/// The compact form of a program text, as `compact_results.py` writes it.
pub(super) fn program_digest(text: &str) -> String {
    let hash = Sha256::digest(text.as_bytes());
    let hex: String = hash.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("{PREFIX}{hex}")
}

/// Whether `program` is a digest rather than a program text.
pub(super) fn is_digest(program: &str) -> bool {
    program.starts_with(PREFIX) && !program.contains('\n')
}

/// Takes out of `seeds` the compacted seeds of tasks some strategy has not finished (so they
/// are obtained again), and returns their recorded digests by task id. A generated seed cannot
/// be drawn again, so a compacted one refuses the resume before any model call.
pub(super) fn take_compacted(
    seeds: &mut HashMap<String, SeedRecord>,
    done: &HashMap<String, HashMap<String, TaskRecord>>,
    seeds_file: &Path,
) -> Result<HashMap<String, String>, EvalError> {
    let mut ids: Vec<String> = seeds
        .iter()
        .filter(|(id, s)| {
            is_digest(&s.program) && done.values().any(|records| !records.contains_key(*id))
        })
        .map(|(id, _)| id.clone())
        .collect();
    ids.sort_unstable();
    let generated: Vec<&str> = ids
        .iter()
        .filter(|id| seeds.get(*id).is_some_and(|s| s.origin == "generated"))
        .map(String::as_str)
        .collect();
    if !generated.is_empty() {
        return Err(EvalError::input(
            format!(
                "{} keeps compacted seeds the model generated, and {} still need theirs: {}",
                seeds_file.display(),
                if generated.len() == 1 { "a task" } else { "tasks" },
                generated.join(", ")
            ),
            "compact a run with generated seeds only once it is finished, or run into a fresh --out directory",
        ));
    }
    Ok(ids
        .into_iter()
        .filter_map(|id| seeds.remove(&id).map(|s| (id, s.program)))
        .collect())
}

/// Checks the seeds obtained again against the digests their compacted records hold.
pub(super) fn check_restored(
    seeds: &HashMap<String, SeedRecord>,
    compacted: &HashMap<String, String>,
    seeds_file: &Path,
) -> Result<(), EvalError> {
    let mut differing: Vec<&str> = compacted
        .iter()
        .filter(|(id, recorded)| {
            seeds
                .get(*id)
                .is_some_and(|s| program_digest(&s.program) != **recorded)
        })
        .map(|(id, _)| id.as_str())
        .collect();
    if differing.is_empty() {
        return Ok(());
    }
    differing.sort_unstable();
    Err(EvalError::input(
        format!(
            "{} keeps compacted seeds, and the seed source now gives other programs for {}",
            seeds_file.display(),
            differing.join(", ")
        ),
        "resume with the seeds the run started from (same --seeds and dataset), or run into a fresh --out directory",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed(id: &str, program: &str) -> SeedRecord {
        SeedRecord::for_test(id, "seeds:x", program)
    }

    #[test]
    fn the_digest_is_the_one_compact_results_writes() {
        // python3 -c 'import hashlib; print(hashlib.sha256(b"def f():\n    return 1\n").hexdigest()[:16])'
        assert_eq!(
            program_digest("def f():\n    return 1\n"),
            "sha256:5b76d0962c09ab4e"
        );
        assert!(is_digest("sha256:5b76d0962c09ab4e"));
        assert!(!is_digest("sha256:x\nprint(1)"));
        assert!(!is_digest("def f(): pass"));
    }

    fn finished_record(id: &str) -> TaskRecord {
        serde_json::from_value(serde_json::json!({
            "kind": "task", "task_id": id, "strategy": "search", "status": "fixed",
            "debugged": true, "seed_visible_pass": false, "final_visible_pass": true,
            "visible_passed": 1, "visible_total": 1, "seed_hidden_pass": false,
            "final_hidden_pass": true, "hidden_by_budget": [false, true],
            "hidden_tests": "hidden", "final_hidden_status": null, "final_hidden_summary": "",
            "iterations": 1, "tokens": {"prompt": 0, "completion": 0},
            "seed_tokens": {"prompt": 0, "completion": 0}, "calls": 1,
            "timings": {"llm_ms": 0, "non_llm_ms": 0, "total_ms": 0, "tests_ms": 0,
                        "trace_ms": 0, "hidden_ms": 0},
            "error_class": null, "error": null, "seed_origin": "",
            "final_program": "sha256:2222222222222222",
        }))
        .expect("task record")
    }

    #[test]
    fn only_compacted_seeds_of_unfinished_tasks_are_obtained_again() {
        let mut seeds: HashMap<String, SeedRecord> = [
            ("a", "sha256:0000000000000000"),
            ("b", "sha256:1111111111111111"),
            ("c", "def f(): pass"),
        ]
        .into_iter()
        .map(|(id, p)| (id.to_string(), seed(id, p)))
        .collect();
        let finished = HashMap::from([("a".to_string(), finished_record("a"))]);
        let done = HashMap::from([("search".to_string(), finished)]);
        let taken = take_compacted(&mut seeds, &done, Path::new("seeds.jsonl")).expect("taken");
        assert_eq!(
            taken,
            HashMap::from([("b".to_string(), "sha256:1111111111111111".to_string())])
        );
        assert!(seeds.contains_key("a") && seeds.contains_key("c") && !seeds.contains_key("b"));
    }

    #[test]
    fn a_compacted_generated_seed_refuses_the_resume_before_any_call() {
        let mut generated = seed("b", "sha256:1111111111111111");
        generated.origin = "generated".into();
        let mut seeds = HashMap::from([("b".to_string(), generated)]);
        let done = HashMap::from([("search".to_string(), HashMap::new())]);
        let e = take_compacted(&mut seeds, &done, Path::new("run/seeds.jsonl"))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("generated") && e.contains('b'), "{e}");
        assert!(seeds.contains_key("b"));
    }

    #[test]
    fn a_seed_that_hashes_otherwise_refuses_the_resume() {
        let program = "def f():\n    return 1\n";
        let compacted = HashMap::from([("b".to_string(), program_digest(program))]);
        let same = HashMap::from([("b".to_string(), seed("b", program))]);
        assert!(check_restored(&same, &compacted, Path::new("seeds.jsonl")).is_ok());
        let other = HashMap::from([("b".to_string(), seed("b", "def f():\n    return 2\n"))]);
        let e = check_restored(&other, &compacted, Path::new("run/seeds.jsonl"))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("run/seeds.jsonl") && e.contains('b'), "{e}");
    }
}
