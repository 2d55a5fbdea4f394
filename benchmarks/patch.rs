//! Patch forms benchmark: given the faulty statement, how often does the embedded model's
//! rewrite of just those lines parse, pass the visible tests, and pass the hidden tests?
//!
//! Bugs with a known location come from `bugs.rs` (mutants of HumanEval/MBPP reference
//! solutions; Refactory programs one edit fixes). The hole is the faulty statement's lines, as
//! if localisation had ranked it first, so the forms are compared on patching alone:
//! - `fim`: fill-in-the-middle, a raw prompt with Qwen2.5-Coder's FIM tokens (the `patch`
//!   proposer's form on the embedded model);
//! - `chat`: a chat prompt with the lines marked `# <-- FIX`, the reply holding only them;
//! - `chat-program`: the same prompt asking for the whole program, of which only the marked
//!   lines are taken (a reply that changes other lines counts as a failed sample).
//!
//! K samples per form at the search's temperature, each with its own seed.
//!
//! cargo bench --bench patch -- [--dataset humaneval|mbpp|refactory] [--limit N] [--k K]
//!     [--model NAME] [--threads N] [--data-dir DIR] [--out FILE.jsonl]
//!
//! One JSON line per bug goes to `--out` (default
//! benchmarks/results/patch-<dataset>-<model>.jsonl); a rerun skips the bugs already there,
//! then prints the table.

use std::collections::HashSet;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};

#[path = "bugs.rs"]
mod bugs;
use bugs::bugs;

use ldb::generate::local::catalog;
use ldb::generate::local::llama::{LocalModel, LocalOptions};
use ldb::generate::model::ChatModel;
use ldb::generate::prompts::Prompts;
use ldb::locate::Observable;
use ldb::python::source::{parse_module, SourceFile};
use ldb::repair::search::{patch_request, sample_patch, PatchForm, PatchSite};
use ldb::run::sandbox::{Limits, Sandbox};
use ldb::run::{visible_tests, Runner, TestInput};

const FORMS: [(PatchForm, &str); 3] = [
    (PatchForm::Fim, "fim"),
    (PatchForm::Chat, "chat"),
    (PatchForm::ChatProgram, "chat-program"),
];

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn main() {
    if let Err(e) = run() {
        eprintln!("patch: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let dataset = arg(&args, "--dataset").unwrap_or_else(|| "humaneval".into());
    let limit: usize = arg(&args, "--limit")
        .and_then(|n| n.parse().ok())
        .unwrap_or(40);
    let k: u64 = arg(&args, "--k").and_then(|n| n.parse().ok()).unwrap_or(4);
    let model_name = arg(&args, "--model").unwrap_or_else(|| catalog::DEFAULT_MODEL.into());
    let threads: Option<u32> = arg(&args, "--threads").and_then(|n| n.parse().ok());
    let data_dir = arg(&args, "--data-dir")
        .or_else(|| std::env::var("LDB_DATA_DIR").ok())
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets"));
    let out = arg(&args, "--out").map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
            "benchmarks/results/patch-{dataset}-{model_name}.jsonl"
        ))
    });
    let runner = Runner::new(Sandbox::new(
        std::env::var("LDB_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_ldb").to_string()),
        Limits::default().with_wall(std::time::Duration::from_secs(5)),
    ));
    let spec = catalog::find(&model_name).ok_or(format!("unknown model {model_name}"))?;
    let path = catalog::verified_path(&spec, &catalog::models_dir()).ok_or(format!(
        "model not installed: run `ldb model pull {model_name}`"
    ))?;
    let model: Arc<dyn ChatModel> = Arc::new(
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
    let prompts = Prompts::new().map_err(|e| e.to_string())?;
    let rt = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let done = read_done(&out);
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&out)
        .map_err(|e| format!("{}: {e}", out.display()))?;
    let mut kept = done.len();
    for bug in bugs(&dataset, &data_dir, &runner, limit)? {
        if kept >= limit {
            break;
        }
        if done.contains(&bug.task.task_id) {
            continue;
        }
        let Ok(observable) = Observable::new(&bug.program, false) else {
            continue;
        };
        let Some(stmt) = observable.at_line(bug.line) else {
            continue;
        };
        let (first, last) = (
            observable.statements[stmt].first,
            observable.statements[stmt].last,
        );
        let tests = visible_tests(&bug.task);
        let outcomes: Vec<_> = runner
            .run_all(&bug.program, &tests)
            .into_iter()
            .flatten()
            .collect();
        let hidden = TestInput::Code {
            source: bug.task.hidden_tests.clone().unwrap_or_default(),
        };
        let site = PatchSite {
            task: &bug.task,
            program: &bug.program,
            outcomes: &outcomes,
            first,
            last,
            body_of: None,
        };
        let mut row = json!({
            "task_id": bug.task.task_id,
            "line": bug.line,
            "lines": [first, last],
            "edit": bug.edit,
        });
        for (form, name) in FORMS {
            let Some(request) = patch_request(&prompts, &site, form).map_err(|e| e.to_string())?
            else {
                continue;
            };
            let mut samples = Vec::new();
            for i in 0..k {
                let mut r = request.clone();
                r.temperature = Some(0.8);
                r.seed = Some(i);
                let patched = rt
                    .block_on(sample_patch(&*model, &prompts, &site, form, &r))
                    .map_err(|e| e.to_string())?;
                let tokens: u64 = patched.calls.iter().map(|c| c.cost()).sum();
                let (parsed, visible, hidden_pass) = match &patched.program {
                    Some(p) => {
                        let parsed = parse_module(&SourceFile::new(p.clone())).is_ok();
                        let visible = parsed
                            && runner
                                .run_all(p, &tests)
                                .iter()
                                .all(|o| o.as_ref().is_ok_and(|o| o.passed()));
                        let hidden_pass =
                            visible && runner.run(p, &hidden, None).is_ok_and(|o| o.passed());
                        (parsed, visible, hidden_pass)
                    }
                    None => (false, false, false),
                };
                samples.push(json!({
                    "parsed": parsed,
                    "visible": visible,
                    "hidden": hidden_pass,
                    "tokens": tokens,
                    "problem": patched.problem,
                }));
            }
            row[name] = Value::Array(samples);
        }
        writeln!(file, "{row}").map_err(|e| e.to_string())?;
        file.flush().map_err(|e| e.to_string())?;
        kept += 1;
        let hits = |name: &str| {
            row[name]
                .as_array()
                .map_or(0, |a| a.iter().filter(|s| s["hidden"] == true).count())
        };
        eprintln!(
            "[{kept}/{limit}] {} line {} ({}): hidden passes fim {} chat {} chat-program {}",
            bug.task.task_id,
            bug.line,
            bug.edit,
            hits("fim"),
            hits("chat"),
            hits("chat-program")
        );
    }
    print_table(&out, &dataset, &model_name);
    Ok(())
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

fn print_table(path: &Path, dataset: &str, model: &str) {
    let rows: Vec<Value> = std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    println!(
        "\n{model} on {dataset}: {} bugs, the faulty statement given\n",
        rows.len()
    );
    println!("| form | samples | parses | passes visible | passes hidden | bugs fixed by a sample | tokens/sample |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (_, name) in FORMS {
        let samples: Vec<&Value> = rows
            .iter()
            .filter_map(|r| r[name].as_array())
            .flatten()
            .collect();
        let n = samples.len().max(1) as f64;
        let rate = |field: &str| {
            format!(
                "{:.1}%",
                100.0 * samples.iter().filter(|s| s[field] == true).count() as f64 / n
            )
        };
        let fixed = rows
            .iter()
            .filter(|r| {
                r[name]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|s| s["hidden"] == true))
            })
            .count();
        let tokens: f64 = samples.iter().filter_map(|s| s["tokens"].as_f64()).sum();
        println!(
            "| {name} | {} | {} | {} | {} | {fixed} of {} | {:.0} |",
            samples.len(),
            rate("parsed"),
            rate("visible"),
            rate("hidden"),
            rows.len(),
            tokens / n
        );
    }
}
