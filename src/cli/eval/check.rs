//! `ldb eval check`: `ldb check` over ORCA's sets or the runtime-error data, scored with their
//! metrics next to the stored ORCA / B1 / B2 predictions (see `crate::eval::check`).

use std::io::IsTerminal;
use std::path::PathBuf;

use crate::check::{orca, runtime_errors, Mode};
use crate::cli::output::{self, CliError, ExitStatus};
use crate::cli::settings::EvalCheckSettings;
use crate::eval::check::{
    self, orca_items, pre_items, read_records, render_orca, render_pre, score_orca, score_pre,
    select_orca, CheckDataset, EvalCheckError, RunConfig,
};
use crate::generate::model::SharedModel;

impl From<EvalCheckError> for CliError {
    fn from(e: EvalCheckError) -> Self {
        match e {
            EvalCheckError::Check { source, .. } => source.into(),
            EvalCheckError::Data(d) => CliError::bad_input(
                d.to_string(),
                "--data-dir must hold orca/ and runtime-errors/ as in ../shared/datasets",
            ),
            e @ EvalCheckError::Encode { .. } => CliError::internal(e.to_string()),
            other => CliError::bad_input(
                other.to_string(),
                "remove or fix the results file, or pick another with --out",
            ),
        }
    }
}

pub fn run(s: &EvalCheckSettings) -> Result<ExitStatus, CliError> {
    let dataset = s.dataset;
    let data_dir = &s.data_dir;
    let mode = s.options.mode;

    // What to check.
    let (items, scorer): (Vec<check::Item>, Scorer) = match dataset {
        CheckDataset::Orca(set) => {
            let all = orca::load(&set.path(data_dir)).map_err(EvalCheckError::from)?;
            let selected: Vec<String> = select_orca(&all, s.sample, s.seed, &s.ids)
                .iter()
                .map(|i| i.id.clone())
                .collect();
            let chosen: Vec<&orca::OrcaInstance> =
                all.iter().filter(|i| selected.contains(&i.id)).collect();
            let items = orca_items(&chosen, set);
            (items, Scorer::Orca(all, selected))
        }
        CheckDataset::RuntimeErrors => {
            let records = runtime_errors::load(&runtime_errors::path(data_dir))
                .map_err(EvalCheckError::from)?;
            let Some(codenet) = &s.codenet else {
                print_manifest(&records, s.json)?;
                return Ok(ExitStatus::Success);
            };
            let view: Vec<&runtime_errors::PreRecord> = if s.all_records {
                records.iter().collect()
            } else {
                runtime_errors::balanced(&records, s.seed)
            };
            let view: Vec<&runtime_errors::PreRecord> = match s.sample {
                Some(n) => view.into_iter().take(n).collect(),
                None => view,
            };
            let (items, missing) = pre_items(&view, codenet);
            if missing > 0 && !s.quiet {
                eprintln!(
                    "note: {missing} of {} records have no program or input under {}",
                    view.len(),
                    codenet.display()
                );
            }
            let ids: Vec<String> = view.iter().map(|r| r.id()).collect();
            (items, Scorer::Pre(records, ids))
        }
    };

    let model: Option<SharedModel> = if s.needs_model {
        let (_, debugger) = crate::cli::models::load(&s.models)?;
        Some(debugger)
    } else {
        None
    };
    let model_name = model.as_ref().map_or("none".to_string(), |m| m.name());
    let out = s.out.clone().unwrap_or_else(|| {
        let safe: String = model_name
            .chars()
            .map(|c| {
                if c.is_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        PathBuf::from("results").join("check").join(format!(
            "{}-{}-{safe}.jsonl",
            dataset.name(),
            mode.name()
        ))
    });
    let runner = s.sandbox.runner()?;
    let config = RunConfig {
        mode,
        options: s.options.clone(),
        out: &out,
        jobs: runner.jobs(),
        model_name: model_name.clone(),
    };
    let quiet = s.quiet;
    let terminal = std::io::stderr().is_terminal();
    let progress = move |done: usize, total: usize| {
        if quiet {
            return;
        }
        if terminal {
            eprint!("\rchecked {done}/{total}");
            if done == total {
                eprintln!();
            }
        } else if done.is_multiple_of(50) || done == total {
            eprintln!("checked {done}/{total}");
        }
    };
    let runtime = crate::cli::runtime()?;
    let stats = runtime.block_on(check::run(
        &config,
        &runner,
        model.as_deref(),
        &s.prompts,
        &items,
        &progress,
    ))?;
    if !quiet {
        eprintln!(
            "{}: {} checked now, {} already in {}; {} model calls",
            dataset.name(),
            stats.checked,
            stats.skipped,
            out.display(),
            stats.model_calls
        );
    }

    let records = read_records(&out)?;
    let label = match mode {
        Mode::Exec => "ldb exec".to_string(),
        Mode::Hybrid if model.is_none() => "ldb hybrid (no model)".to_string(),
        mode => format!("ldb {} ({model_name})", mode.name()),
    };
    match scorer {
        Scorer::Orca(all, selected) => {
            let chosen: Vec<&orca::OrcaInstance> =
                all.iter().filter(|i| selected.contains(&i.id)).collect();
            let table = score_orca(dataset.name(), &label, &chosen, &records);
            if s.json {
                output::print_json(&table)?;
            } else {
                output::print(&render_orca(&table));
            }
        }
        Scorer::Pre(all, ids) => {
            let chosen: Vec<&runtime_errors::PreRecord> =
                all.iter().filter(|r| ids.contains(&r.id())).collect();
            let table = score_pre(&label, &chosen, &records);
            if s.json {
                output::print_json(&table)?;
            } else {
                output::print(&render_pre(&table));
            }
        }
    }
    Ok(ExitStatus::Success)
}

enum Scorer {
    Orca(Vec<orca::OrcaInstance>, Vec<String>),
    Pre(Vec<runtime_errors::PreRecord>, Vec<String>),
}

/// Without CodeNet: what the labels say, and why nothing else can be scored.
fn print_manifest(records: &[runtime_errors::PreRecord], json: bool) -> Result<(), CliError> {
    let m = runtime_errors::manifest(records);
    if json {
        return output::print_json(&m);
    }
    let splits: Vec<String> = {
        let mut s: Vec<String> = m
            .classes
            .values()
            .flat_map(|by| by.keys().cloned())
            .collect();
        s.sort();
        s.dedup();
        s
    };
    let mut out = format!(
        "runtime-errors: {} records, {} with an error ({} of the paper's tier-1 kinds), {} \
         within the paper's size filter.\n\n| class | {} |\n|---|{}\n",
        m.records,
        m.errors,
        m.tier1_errors,
        m.in_dataset,
        splits.join(" | "),
        "---|".repeat(splits.len())
    );
    for (class, by) in &m.classes {
        let counts: Vec<String> = splits
            .iter()
            .map(|s| by.get(s).copied().unwrap_or(0).to_string())
            .collect();
        out.push_str(&format!("| {class} | {} |\n", counts.join(" | ")));
    }
    out.push_str(&format!(
        "\nNot scored: the stored source text is lossy (no line breaks, no indentation), so \
         it can be neither run nor parsed into a CFG. Pass --codenet DIR (a Project CodeNet \
         checkout) to check the exact programs on their inputs; the balanced view then has {} \
         records.\n",
        2 * m.errors
    ));
    output::print(&out);
    Ok(())
}
