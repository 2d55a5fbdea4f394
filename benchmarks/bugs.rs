//! Bugs with a known location, shared by the localisation and patch benchmarks: one mutant of
//! each HumanEval/MBPP reference solution that fails a visible test, and Refactory student
//! programs (development sample only) that one `ldb::python::edits` edit makes pass every hidden
//! test.

#![allow(dead_code)] // Each benchmark uses part of it.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde_json::Value;

use ldb::eval::fix::datasets::load_dataset;
use ldb::python::edits::edits;
use ldb::python::mutate::mutants;
use ldb::run::{visible_tests, Runner, TestInput, TestOutcome, TestStatus};
use ldb::task::{load_tasks, Task};

/// One bug: the buggy program, where the fault is, and a program that labels extra inputs.
pub struct Bug {
    pub task: Task,
    pub program: String,
    pub line: u32,
    pub edit: String,
    pub reference: String,
}

/// The bugs of `dataset`, in a fixed order.
pub fn bugs(dataset: &str, dir: &Path, runner: &Runner, limit: usize) -> Result<Vec<Bug>, String> {
    let run_all = |p: &str, tests: &[TestInput]| -> Vec<TestOutcome> {
        runner.run_all(p, tests).into_iter().flatten().collect()
    };
    let mut out = Vec::new();
    if dataset == "refactory" {
        let path = dir.join("refactory/tasks.jsonl");
        let dev = dev_ids(&path)?;
        let tasks = load_tasks(&path).map_err(|e| e.to_string())?;
        for task in tasks.into_iter().filter(|t| dev.contains(&t.task_id)) {
            if out.len() >= limit {
                break;
            }
            let Some(seed) = task.seed.clone() else {
                continue;
            };
            let tests = visible_tests(&task);
            let outcomes = run_all(&seed, &tests);
            if outcomes.len() != tests.len() || outcomes.iter().all(|o| o.passed()) {
                continue;
            }
            // The statements the failing tests ran (a fault elsewhere could not show).
            let Ok((loc, _)) = ldb::locate::localise(runner, &seed, &tests, &Default::default())
            else {
                continue;
            };
            let lines = loc.lines();
            let hidden = TestInput::Code {
                source: task.hidden_tests.clone().unwrap_or_default(),
            };
            let fix = edits(&seed, &lines, 400).into_iter().find(|e| {
                run_all(&e.program, &tests).iter().all(|o| o.passed())
                    && run_all(&e.program, std::slice::from_ref(&hidden))
                        .iter()
                        .all(|o| o.passed())
            });
            if let Some(e) = fix {
                out.push(Bug {
                    program: seed,
                    line: e.line,
                    edit: e.description.clone(),
                    reference: e.program,
                    task,
                });
            }
        }
        return Ok(out);
    }
    let loaded = load_dataset(dataset, Some(dir)).map_err(|e| e.to_string())?;
    let solutions = canonical_solutions(dir, dataset)?;
    let mut tasks = loaded.tasks.clone();
    let mut rng = fastrand::Rng::with_seed(1);
    rng.shuffle(&mut tasks);
    for task in tasks {
        if out.len() >= limit * 2 {
            break;
        }
        let Some(solution) = solutions.get(&task.task_id) else {
            continue;
        };
        let (program, first_line) = if dataset.starts_with("humaneval") {
            (
                format!("{}{}", task.prompt, solution),
                task.prompt.lines().count() as u32 + 1,
            )
        } else {
            (solution.clone(), 2)
        };
        let tests = visible_tests(&task);
        if tests.is_empty() || !run_all(&program, &tests).iter().all(|o| o.passed()) {
            continue;
        }
        let mut candidates = mutants(&program, first_line);
        rng.shuffle(&mut candidates);
        let found = candidates.into_iter().take(12).find(|m| {
            run_all(&m.program, &tests)
                .iter()
                .any(|o| matches!(o.status, TestStatus::Failed | TestStatus::Error))
        });
        if let Some(m) = found {
            out.push(Bug {
                task,
                program: m.program,
                line: m.line,
                edit: m.edit,
                reference: program,
            });
        }
    }
    Ok(out)
}

/// The Refactory development sample's ids (benchmarks/refactory_sample.py dev).
fn dev_ids(path: &Path) -> Result<HashSet<String>, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/refactory_sample.py");
    let out = std::process::Command::new("python3")
        .arg(script)
        .arg("dev")
        .arg("--data")
        .arg(path)
        .output()
        .map_err(|e| format!("refactory_sample.py: {e}"))?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .trim()
        .split(',')
        .map(str::to_string)
        .collect())
}

/// task_id → reference solution, from LDB's layout.
fn canonical_solutions(dir: &Path, dataset: &str) -> Result<HashMap<String, String>, String> {
    let path = match dataset {
        "humaneval" => dir.join("ldb/humaneval/test/tests.jsonl"),
        "mbpp" => dir.join("ldb/mbpp/dataset/probs.jsonl"),
        other => return Err(format!("no reference solutions for {other}")),
    };
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| {
            Some((
                v["task_id"].as_str()?.to_string(),
                v["canonical_solution"].as_str()?.to_string(),
            ))
        })
        .collect())
}
