//! Localisation benchmark: does the debugger's verdict name the block that holds the bug?
//!
//! Bugs with a known location come from correct solutions (HumanEval's canonical solutions,
//! MBPP's reference code): one single-token mutation (flipped comparison, off-by-one constant,
//! wrong operator, `and`/`or`, negated condition, wrong variable; `ldb::python::mutate`) per task,
//! kept only if it makes a visible test fail. The first failing visible test is traced at block
//! level exactly as `ldb fix` traces it, and the model judges the trace in each configuration:
//! the full form (a verdict per block) or the short form (the first wrong block), with the reply
//! constrained by a grammar or free. A hit is a named block whose lines hold the mutated line.
//! Baselines: a random shown block (its expected accuracy), and the last block shown.
//!
//! cargo bench --bench localise -- [--model qwen2.5-coder-0.5b] [--dataset humaneval]
//!     [--mutants 40] [--seed 1] [--threads N] [--data-dir DIR] [--out FILE.jsonl]
//!
//! Each mutant's results go to `--out` as one JSON line; a rerun with the same file skips the
//! mutants already there, so a long run resumes.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};

use ldb::eval::fix::datasets::load_dataset;
use ldb::generate::local::catalog;
use ldb::generate::local::llama::{LocalModel, LocalOptions};
use ldb::generate::prompts::Prompts;
use ldb::python::mutate::mutants;
use ldb::repair::verdict::{self, VerdictForm};
use ldb::repair::{FixOptions, Fixer, Strategy};
use ldb::run::sandbox::{Limits, Sandbox};
use ldb::run::{visible_tests, Runner, TestStatus};

const CONFIGS: [(VerdictForm, bool, &str); 4] = [
    (VerdictForm::Full, true, "full, grammar"),
    (VerdictForm::Full, false, "full, free"),
    (VerdictForm::Short, true, "short, grammar"),
    (VerdictForm::Short, false, "short, free"),
];

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn main() {
    if let Err(e) = run() {
        eprintln!("localise: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let model_name = arg(&args, "--model").unwrap_or_else(|| catalog::FAST_MODEL.into());
    let dataset = arg(&args, "--dataset").unwrap_or_else(|| "humaneval".into());
    let wanted: usize = arg(&args, "--mutants")
        .and_then(|n| n.parse().ok())
        .unwrap_or(40);
    let seed: u64 = arg(&args, "--seed")
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    let threads: Option<u32> = arg(&args, "--threads").and_then(|n| n.parse().ok());
    let data_dir = arg(&args, "--data-dir")
        .or_else(|| std::env::var("LDB_DATA_DIR").ok())
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets"));
    let out = arg(&args, "--out").map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
            "benchmarks/results/localise-{dataset}-{model_name}.jsonl"
        ))
    });

    let loaded = load_dataset(&dataset, Some(&data_dir)).map_err(|e| e.to_string())?;
    let solutions = canonical_solutions(&data_dir, &dataset)?;
    let done = read_done(&out);

    let spec = catalog::find(&model_name).ok_or(format!("unknown model {model_name}"))?;
    let path = catalog::verified_path(&spec, &catalog::models_dir()).ok_or(format!(
        "model not installed: run `ldb model pull {model_name}`"
    ))?;
    let model = Arc::new(
        LocalModel::load(
            &path,
            &model_name,
            LocalOptions {
                threads,
                ..LocalOptions::default()
            },
        )
        .map_err(|e| e.to_string())?,
    );
    let fixer = Fixer {
        seed: Default::default(),
        generator: model.clone(),
        debugger: model.clone(),
        // LDB_BIN: a pinned copy of ldb, so a rebuild during a long run does not swap the
        // sandbox's binary under it.
        runner: Runner::new(Sandbox::new(
            std::env::var("LDB_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_ldb").to_string()),
            Limits::default(),
        )),
        prompts: Prompts::new().map_err(|e| e.to_string())?,
        options: FixOptions {
            strategy: Strategy::Ldb,
            ..FixOptions::default()
        },
    };
    let rt = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;

    // Tasks in a fixed shuffled order, one mutant per task.
    let mut tasks = loaded.tasks.clone();
    let mut rng = fastrand::Rng::with_seed(seed);
    rng.shuffle(&mut tasks);
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&out)
        .map_err(|e| format!("{}: {e}", out.display()))?;
    let mut kept = done.len();
    for task in &tasks {
        if kept >= wanted {
            break;
        }
        let Some(solution) = solutions.get(&task.task_id) else {
            continue;
        };
        let (program, first_line) = if dataset.starts_with("humaneval") {
            let program = format!("{}{}", task.prompt, solution);
            (program, task.prompt.lines().count() as u32 + 1)
        } else {
            (solution.clone(), 2)
        };
        let tests = visible_tests(task);
        if tests.is_empty() {
            continue;
        }
        let runner = fixer.runner.clone();
        let run = |p: &str| {
            runner
                .run_all(p, &tests)
                .into_iter()
                .collect::<Result<Vec<_>, _>>()
        };
        // The reference must pass its visible tests, or no failure can be blamed on a mutant.
        // A sandbox that cannot run it at all stops the run instead of skipping every task.
        let reference = run(&program).map_err(|e| {
            format!(
                "{}: the sandbox cannot run the reference: {e}",
                task.task_id
            )
        })?;
        if !reference.iter().all(|t| t.passed()) {
            continue;
        }
        let mut candidates = mutants(&program, first_line);
        rng.shuffle(&mut candidates);
        let found = candidates.into_iter().take(12).find_map(|m| {
            let outcomes = run(&m.program).ok()?;
            let failing = outcomes
                .iter()
                .position(|o| matches!(o.status, TestStatus::Failed | TestStatus::Error))?;
            Some((m, outcomes, failing))
        });
        let Some((mutant, outcomes, failing)) = found else {
            continue;
        };
        // Skipped only now, after its mutant was drawn: the random draws of the tasks after it
        // are then the same in a resumed run as in one that never stopped, so every model (and
        // every resume) judges the same mutants.
        if done.contains(&task.task_id) {
            continue;
        }
        let traced = rt
            .block_on(verdict::trace(
                &fixer,
                task,
                &mutant.program,
                &outcomes,
                &outcomes[failing],
            ))
            .map_err(|e| e.to_string())?;
        let Some(traced) = traced else { continue };
        let holds = |label: &str| -> bool {
            traced
                .labels
                .iter()
                .position(|l| l == label)
                .and_then(|i| traced.step_lines.get(i))
                .is_some_and(|ranges| {
                    ranges
                        .iter()
                        .any(|&(a, b)| a <= mutant.line && mutant.line <= b)
                })
        };
        let shown = traced.labels.iter().filter(|l| holds(l)).count();
        let mut row = json!({
            "task_id": task.task_id,
            "kind": mutant.kind,
            "line": mutant.line,
            "edit": mutant.edit,
            "steps": traced.labels.len(),
            "steps_with_bug": shown,
            "random": shown as f64 / traced.labels.len().max(1) as f64,
            "last": traced.labels.last().is_some_and(|l| holds(l)),
        });
        for (form, grammar, name) in CONFIGS {
            let r = rt
                .block_on(verdict::judge(&fixer, &traced, form, grammar))
                .map_err(|e| e.to_string())?;
            row[name] = json!({
                "parsed": r.parsed,
                "named": r.named,
                "hit": r.named.as_deref().is_some_and(holds),
                "tokens": r.tokens,
                "ms": r.ms,
            });
        }
        writeln!(file, "{row}").map_err(|e| e.to_string())?;
        file.flush().map_err(|e| e.to_string())?;
        kept += 1;
        eprintln!(
            "[{kept}/{wanted}] {} {} line {}: {}",
            task.task_id,
            mutant.edit,
            mutant.line,
            CONFIGS
                .iter()
                .map(|(_, _, n)| format!("{n} {}", row[*n]["hit"]))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    print_table(&out, &model_name, &dataset);
    Ok(())
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

fn read_done(path: &Path) -> HashSet<String> {
    let Ok(f) = std::fs::File::open(path) else {
        return HashSet::new();
    };
    std::io::BufReader::new(f)
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str::<Value>(&l).ok())
        .filter_map(|v| v["task_id"].as_str().map(str::to_string))
        .collect()
}

fn print_table(path: &Path, model: &str, dataset: &str) {
    let rows: Vec<Value> = std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let n = rows.len().max(1) as f64;
    let pct = |x: f64| format!("{:.1}%", 100.0 * x / n);
    println!(
        "\n{model} on {dataset}: {} mutants ({} with the mutated block among the shown steps)\n",
        rows.len(),
        rows.iter()
            .filter(|r| r["steps_with_bug"].as_u64().unwrap_or(0) > 0)
            .count()
    );
    println!("| verdict | accuracy | parse rate | tokens/verdict |");
    println!("|---|---:|---:|---:|");
    for (_, _, name) in CONFIGS {
        let hits = rows.iter().filter(|r| r[name]["hit"] == true).count() as f64;
        let parsed = rows.iter().filter(|r| r[name]["parsed"] == true).count() as f64;
        let tokens: f64 = rows.iter().filter_map(|r| r[name]["tokens"].as_f64()).sum();
        println!(
            "| {name} | {} | {} | {:.0} |",
            pct(hits),
            pct(parsed),
            tokens / n
        );
    }
    let random: f64 = rows.iter().filter_map(|r| r["random"].as_f64()).sum();
    let last = rows.iter().filter(|r| r["last"] == true).count() as f64;
    println!("| baseline: random shown block | {} | - | 0 |", pct(random));
    println!("| baseline: last shown block | {} | - | 0 |", pct(last));
}
