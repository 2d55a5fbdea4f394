//! Localisation benchmark: does fault localisation from execution rank the faulty statement
//! first, and which signals make it so?
//!
//! Bugs with a known location:
//! - `humaneval`, `mbpp`: one single-token mutant of the reference solution per task (the
//!   localisation benchmark's mutants: `ldb::python::mutate`), kept when a visible test fails;
//!   the reference labels the extra inputs.
//! - `refactory`: student programs from the development sample (never the report sample) that
//!   fail a visible test and that one edit of `ldb::python::edits` makes pass every hidden test;
//!   the edited statement is the fault, the edited program labels the extra inputs.
//!
//! Each configuration ranks the statements the failing runs executed; a hit at k is the faulty
//! statement among the first k (its block among the first k blocks, for the block columns).
//! Configurations: Ochiai alone, the raising statement alone, both (ldb's default), the other tie
//! rules, plus extra inputs (a passing or failing run each, judged against the label), plus the
//! LDB verdict (`--model NAME`: the short form, grammar-constrained, names one block; its
//! statements get a bonus). Baselines: a random executed statement (expected), the statement
//! executed last in the first failing test.
//!
//! cargo bench --bench locate -- [--dataset humaneval|mbpp|refactory] [--limit N]
//!     [--model NAME] [--threads N] [--data-dir DIR] [--out FILE.jsonl]
//!
//! One JSON line per bug goes to `--out` (default benchmarks/results/locate-<dataset>.jsonl, or
//! locate-<dataset>-<model>.jsonl); a rerun skips the bugs already there, then prints the table.

use std::collections::HashSet;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};

#[path = "bugs.rs"]
mod bugs;
use bugs::{bugs, Bug};

use ldb::generate::local::catalog;
use ldb::generate::local::llama::{LocalModel, LocalOptions};
use ldb::generate::model::SharedModel;
use ldb::generate::prompts::Prompts;
use ldb::locate::{observe, rank_blocks, rank_with, Observable, Observation, Signals, TieBreak};
use ldb::repair::search::{behaviour, extra_inputs};
use ldb::repair::verdict::{self, VerdictForm};
use ldb::repair::{FixOptions, Fixer, Strategy};
use ldb::run::sandbox::{Limits, Sandbox};
use ldb::run::{visible_tests, Runner, TestInput};
use ldb::trace::{Level, TraceRequest, TracerKind};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// The configurations, in table order: name, signals, extra inputs, verdict.
fn configs() -> Vec<(&'static str, Signals, bool, bool)> {
    let base = Signals::default();
    let with = |spectrum, exception, tie| Signals {
        spectrum,
        exception,
        tie,
        ..Signals::default()
    };
    let callers = Signals {
        callers: 0.5,
        ..base
    };
    vec![
        ("Ochiai", with(true, 0.0, TieBreak::Later), false, false),
        (
            "raising statement",
            with(false, 1.0, TieBreak::Later),
            false,
            false,
        ),
        ("Ochiai + raise (default)", base, false, false),
        (
            "Ochiai + raise + the calls that led to it",
            callers,
            false,
            false,
        ),
        (
            "Ochiai + raise, ties by kind",
            with(true, 1.0, TieBreak::Kind),
            false,
            false,
        ),
        (
            "Ochiai + raise, ties earlier first",
            with(true, 1.0, TieBreak::Earlier),
            false,
            false,
        ),
        ("+ labelled extra inputs", base, true, false),
        ("+ verdict", base, false, true),
        ("+ labelled extra inputs + verdict", base, true, true),
        (
            "verdict alone",
            with(false, 0.0, TieBreak::Later),
            false,
            true,
        ),
    ]
}

fn main() {
    if let Err(e) = run() {
        eprintln!("locate: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let dataset = arg(&args, "--dataset").unwrap_or_else(|| "humaneval".into());
    let limit: usize = arg(&args, "--limit")
        .and_then(|n| n.parse().ok())
        .unwrap_or(200);
    let model_name = arg(&args, "--model");
    let threads: Option<u32> = arg(&args, "--threads").and_then(|n| n.parse().ok());
    let data_dir = arg(&args, "--data-dir")
        .or_else(|| std::env::var("LDB_DATA_DIR").ok())
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets"));
    let out = arg(&args, "--out").map(PathBuf::from).unwrap_or_else(|| {
        let suffix = model_name
            .as_deref()
            .map(|m| format!("-{m}"))
            .unwrap_or_default();
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("benchmarks/results/locate-{dataset}{suffix}.jsonl"))
    });
    let runner = Runner::new(Sandbox::new(
        std::env::var("LDB_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_ldb").to_string()),
        Limits::default().with_wall(std::time::Duration::from_secs(5)),
    ));
    let model: Option<SharedModel> = match &model_name {
        Some(name) => {
            let spec = catalog::find(name).ok_or(format!("unknown model {name}"))?;
            let path = catalog::verified_path(&spec, &catalog::models_dir())
                .ok_or(format!("model not installed: run `ldb model pull {name}`"))?;
            Some(Arc::new(
                LocalModel::load(
                    &path,
                    name,
                    LocalOptions {
                        threads,
                        ..LocalOptions::default()
                    },
                )
                .map_err(|e| e.to_string())?,
            ))
        }
        None => None,
    };
    let fixer = model.clone().map(|m| Fixer {
        seed: Default::default(),
        generator: m.clone(),
        debugger: m,
        runner: runner.clone(),
        prompts: Prompts::new().expect("templates"),
        options: FixOptions {
            strategy: Strategy::Ldb,
            ..FixOptions::default()
        },
    });
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
        let Some(row) = measure(&bug, &runner, fixer.as_ref(), &rt)? else {
            continue;
        };
        writeln!(file, "{row}").map_err(|e| e.to_string())?;
        file.flush().map_err(|e| e.to_string())?;
        kept += 1;
        eprintln!(
            "[{kept}/{limit}] {} line {} ({}): default rank {}",
            bug.task.task_id, bug.line, bug.edit, row["Ochiai + raise (default)"]["line"]
        );
    }
    print_table(&out, &dataset, model_name.as_deref());
    Ok(())
}

/// Rank the bug's program under every configuration.
fn measure(
    bug: &Bug,
    runner: &Runner,
    fixer: Option<&Fixer>,
    rt: &tokio::runtime::Runtime,
) -> Result<Option<Value>, String> {
    let observable = match Observable::new(&bug.program, false) {
        Ok(o) => o,
        Err(_) => return Ok(None),
    };
    let Some(fault) = observable.at_line(bug.line) else {
        return Ok(None);
    };
    let tests = visible_tests(&bug.task);
    let outcomes = observe(runner, &observable, &tests).map_err(|e| e.to_string())?;
    let visible: Vec<Observation> = outcomes
        .iter()
        .map(|o| observable.observation(o, o.passed()))
        .collect();
    let Some(first_failing) = outcomes.iter().position(|o| !o.passed()) else {
        return Ok(None);
    };
    // Extra inputs, each a run judged by the reference's behaviour on it.
    let inputs: Vec<TestInput> = extra_inputs(&tests, &bug.task.entry_point, 12, 0)
        .into_iter()
        .map(|expr| TestInput::Call { expr })
        .collect();
    let extra_outcomes = observe(runner, &observable, &inputs).map_err(|e| e.to_string())?;
    let reference: Vec<String> = inputs
        .iter()
        .map(|t| {
            runner
                .run(&bug.reference, t, None)
                .map(|o| behaviour(&o))
                .unwrap_or_default()
        })
        .collect();
    let extra: Vec<Observation> = extra_outcomes
        .iter()
        .zip(&reference)
        .map(|(o, want)| observable.observation(o, behaviour(o) == *want))
        .collect();
    // The last statement the first failing test executed.
    let last = last_executed(runner, &observable, &bug.program, &tests[first_failing]);
    // The verdict: the block the debugger names, as statement bonuses.
    let mut bonus = vec![0.0; observable.statements.len()];
    let mut verdict = Value::Null;
    if let Some(fixer) = fixer {
        let traced = rt
            .block_on(verdict::trace(
                fixer,
                &bug.task,
                &bug.program,
                &outcomes,
                &outcomes[first_failing],
            ))
            .map_err(|e| e.to_string())?;
        if let Some(traced) = traced {
            let judged = rt
                .block_on(verdict::judge(fixer, &traced, VerdictForm::Short, true))
                .map_err(|e| e.to_string())?;
            if let Some(named) = &judged.named {
                if let Some(ranges) = traced
                    .labels
                    .iter()
                    .position(|l| l == named)
                    .and_then(|i| traced.step_lines.get(i))
                {
                    for (i, s) in observable.statements.iter().enumerate() {
                        if ranges.iter().any(|&(a, b)| a <= s.first && s.first <= b) {
                            bonus[i] = 0.5;
                        }
                    }
                }
            }
            verdict = json!({"named": judged.named, "tokens": judged.tokens, "ms": judged.ms});
        }
    }
    let executed: HashSet<usize> = visible
        .iter()
        .filter(|o| !o.passed)
        .flat_map(|o| o.covered.iter().copied())
        .collect();
    let fault_block = (
        observable.statements[fault].scope,
        observable.statements[fault].block,
    );
    let blocks: HashSet<(usize, usize)> = executed
        .iter()
        .map(|&i| {
            (
                observable.statements[i].scope,
                observable.statements[i].block,
            )
        })
        .collect();
    let mut row = json!({
        "task_id": bug.task.task_id,
        "line": bug.line,
        "edit": bug.edit,
        "executed": executed.len(),
        "executed_blocks": blocks.len(),
        "fault_executed": executed.contains(&fault),
        "blind": visible.iter().all(|o| !o.passed),
        "last_hit": last == Some(fault),
        "last_block_hit": last.is_some_and(|l| {
            (observable.statements[l].scope, observable.statements[l].block) == fault_block
        }),
        "verdict": verdict,
    });
    for (name, signals, with_extra, with_verdict) in configs() {
        if with_verdict && fixer.is_none() {
            continue;
        }
        let mut runs = visible.clone();
        if with_extra {
            runs.extend(extra.iter().cloned());
        }
        let no_bonus = vec![0.0; bonus.len()];
        let b = if with_verdict { &bonus } else { &no_bonus };
        let ranked = rank_with(&observable.statements, &runs, &signals, b);
        let line_rank = ranked.iter().position(|s| s.stmt == fault);
        let block_rank = rank_blocks(&observable.statements, &ranked)
            .iter()
            .position(|b| *b == fault_block);
        row[name] = json!({"line": line_rank, "block": block_rank});
    }
    Ok(Some(row))
}

/// The statement the run of `test` executed last (a line-level trace keeping one step).
fn last_executed(
    runner: &Runner,
    observable: &Observable,
    program: &str,
    test: &TestInput,
) -> Option<usize> {
    let src = ldb::python::SourceFile::new(program.to_string());
    let cfg = ldb::python::ProgramCfg::build(&src).ok()?;
    let units = ldb::trace::units::UnitMap::build(&cfg, Level::Line, false, src.line_count());
    let request = TraceRequest {
        scopes: units.scopes().to_vec(),
        keep_first: 0,
        keep_last: 1,
        value_chars: 8,
        tracer: TracerKind::Native,
        deadline_ms: 4000,
    };
    let outcome = runner.run(program, test, Some(request)).ok()?;
    let trace = outcome.trace?;
    let line = trace.instances.last()?.line;
    observable.at_line(line)
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

fn print_table(path: &Path, dataset: &str, model: Option<&str>) {
    let rows: Vec<Value> = std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let n = rows.len().max(1) as f64;
    let pct = |x: f64| format!("{:.1}%", 100.0 * x / n);
    let blind = rows.iter().filter(|r| r["blind"] == true).count();
    println!(
        "\n{dataset}: {} bugs ({blind} where every visible test fails){}\n",
        rows.len(),
        model
            .map(|m| format!(", verdicts by {m}"))
            .unwrap_or_default()
    );
    println!("| ranking | top-1 line | top-3 line | top-1 block | top-3 block |");
    println!("|---|---:|---:|---:|---:|");
    let expected = |k: f64, field: &str| -> f64 {
        rows.iter()
            .filter(|r| r["fault_executed"] == true)
            .map(|r| {
                let m = r[field].as_f64().unwrap_or(1.0).max(1.0);
                (k / m).min(1.0)
            })
            .sum()
    };
    println!(
        "| random executed statement (expected) | {} | {} | {} | {} |",
        pct(expected(1.0, "executed")),
        pct(expected(3.0, "executed")),
        pct(expected(1.0, "executed_blocks")),
        pct(expected(3.0, "executed_blocks"))
    );
    let count = |f: &dyn Fn(&Value) -> bool| rows.iter().filter(|r| f(r)).count() as f64;
    println!(
        "| last executed statement | {} | - | {} | - |",
        pct(count(&|r| r["last_hit"] == true)),
        pct(count(&|r| r["last_block_hit"] == true))
    );
    for (name, _, _, verdict) in configs() {
        if verdict && model.is_none() {
            continue;
        }
        let within =
            |field: &str, k: u64| count(&|r| r[name][field].as_u64().is_some_and(|x| x < k));
        println!(
            "| {name} | {} | {} | {} | {} |",
            pct(within("line", 1)),
            pct(within("line", 3)),
            pct(within("block", 1)),
            pct(within("block", 3))
        );
    }
}
