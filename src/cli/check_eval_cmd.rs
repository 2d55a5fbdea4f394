//! `ldb eval check`: `ldb check` over ORCA's sets or the runtime-error data, scored with their
//! metrics next to the stored ORCA / B1 / B2 predictions (see `crate::check::eval`).

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;

use super::output::{self, CliError, ExitStatus};
use super::{ModelArgs, SandboxArgs};
use crate::check::eval::{
    self, orca_items, pre_items, read_records, render_orca, render_pre, score_orca, score_pre,
    select_orca, CheckDataset, EvalCheckError, RunConfig,
};
use crate::check::{orca, pre, CheckOptions, Mode};
use crate::model::SharedModel;
use crate::prompts::Prompts;

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    ldb eval check --dataset orca-complete --data-dir ../shared/datasets --mode exec\n  \
    ldb eval check --dataset orca-incomplete --data-dir ../shared/datasets --mode predict \
    --model qwen2.5-coder-1.5b --sample 40\n  \
    ldb eval check --dataset runtime-errors --data-dir ../shared/datasets\n\n\
    Results go to --out (one JSON line per instance); the same command again resumes.")]
pub struct EvalCheckArgs {
    /// orca-complete, orca-incomplete or runtime-errors.
    #[arg(long, value_name = "NAME")]
    pub dataset: String,
    /// Folder holding `orca/` and `runtime-errors/` (default: LDB_DATA_DIR).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Mode::Hybrid)]
    pub mode: Mode,
    /// Check a balanced sample of N instances (half with an error), drawn with --seed.
    #[arg(long, value_name = "N")]
    pub sample: Option<usize>,
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Only these instance ids (comma-separated or repeated).
    #[arg(long, value_name = "ID,...", value_delimiter = ',')]
    pub ids: Vec<String>,
    /// Results file (default: results/check/<dataset>-<mode>-<model>.jsonl).
    #[arg(long, short = 'o', value_name = "FILE.jsonl")]
    pub out: Option<PathBuf>,
    /// Hybrid mode without a model: what execution alone decides, the rest left as the run
    /// ended.
    #[arg(long)]
    pub no_model: bool,
    /// Runtime-error data: a Project CodeNet checkout to take the exact programs and inputs
    /// from (the stored source text is lossy).
    #[arg(long, value_name = "DIR")]
    pub codenet: Option<PathBuf>,
    /// Runtime-error data: score every record instead of the balanced view (all errors and as
    /// many clean records).
    #[arg(long)]
    pub all_records: bool,
    /// Predictions: CFG blocks the model may walk at most.
    #[arg(long, value_name = "N", default_value_t = 40)]
    pub max_steps: usize,
    /// Predictions: reply tokens at most.
    #[arg(long, value_name = "N", default_value_t = 1500)]
    pub max_tokens: u32,
    /// Characters kept per variable value (the data's values are compared whole).
    #[arg(long, value_name = "N", default_value_t = 400)]
    pub value_chars: usize,
    /// Print the scores as JSON instead of markdown.
    #[arg(long)]
    pub json: bool,
    /// Only warnings and errors on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

impl From<EvalCheckError> for CliError {
    fn from(e: EvalCheckError) -> Self {
        match e {
            EvalCheckError::Check { source, .. } => source.into(),
            EvalCheckError::Data(d) => CliError::bad_input(
                d.to_string(),
                "--data-dir must hold orca/ and runtime-errors/ as in ../shared/datasets",
            ),
            other => CliError::bad_input(
                other.to_string(),
                "remove or fix the results file, or pick another with --out",
            ),
        }
    }
}

pub fn run(args: &EvalCheckArgs) -> Result<ExitStatus, CliError> {
    let dataset = CheckDataset::parse(&args.dataset).ok_or_else(|| {
        CliError::bad_input(
            format!("unknown dataset `{}` for ldb eval check", args.dataset),
            "use --dataset orca-complete, orca-incomplete or runtime-errors",
        )
    })?;
    let data_dir = args
        .data_dir
        .clone()
        .or_else(|| std::env::var_os("LDB_DATA_DIR").map(PathBuf::from))
        .ok_or_else(|| {
            CliError::bad_input(
                "no data directory",
                "pass --data-dir ../shared/datasets (or set LDB_DATA_DIR)",
            )
        })?;
    if args.max_steps == 0 || args.max_tokens == 0 {
        return Err(CliError::bad_input(
            "--max-steps and --max-tokens must be at least 1",
            "e.g. --max-steps 40 --max-tokens 1500",
        ));
    }
    let needs_model = args.mode == Mode::Predict || (args.mode == Mode::Hybrid && !args.no_model);
    if args.no_model && args.mode == Mode::Predict {
        return Err(CliError::bad_input(
            "--no-model leaves predict mode nothing to do",
            "use --mode exec or --mode hybrid with --no-model",
        ));
    }

    // What to check.
    let (items, scorer): (Vec<eval::Item>, Scorer) = match dataset {
        CheckDataset::Orca(set) => {
            let all = orca::load(&set.path(&data_dir)).map_err(EvalCheckError::from)?;
            let selected: Vec<String> = select_orca(&all, args.sample, args.seed, &args.ids)
                .iter()
                .map(|i| i.id.clone())
                .collect();
            let chosen: Vec<&orca::OrcaInstance> =
                all.iter().filter(|i| selected.contains(&i.id)).collect();
            let items = orca_items(&chosen, set);
            (items, Scorer::Orca(all, selected))
        }
        CheckDataset::RuntimeErrors => {
            let records = pre::load(&pre::path(&data_dir)).map_err(EvalCheckError::from)?;
            let Some(codenet) = &args.codenet else {
                print_manifest(&records, args.json)?;
                return Ok(ExitStatus::Success);
            };
            let view: Vec<&pre::PreRecord> = if args.all_records {
                records.iter().collect()
            } else {
                pre::balanced(&records, args.seed)
            };
            let view: Vec<&pre::PreRecord> = match args.sample {
                Some(n) => view.into_iter().take(n).collect(),
                None => view,
            };
            let (items, missing) = pre_items(&view, codenet);
            if missing > 0 && !args.quiet {
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

    let model: Option<SharedModel> = if needs_model {
        let (_, debugger) = super::models::build(&args.model)?;
        Some(debugger)
    } else {
        None
    };
    let model_name = model.as_ref().map_or("none".to_string(), |m| m.name());
    let out = args.out.clone().unwrap_or_else(|| {
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
            args.mode.name()
        ))
    });
    let prompts = match &args.model.prompts {
        Some(dir) => Prompts::from_dir(dir),
        None => Prompts::new(),
    }
    .map_err(|e| CliError::bad_input(e.to_string(), "check the template files"))?;
    let runner = args.sandbox.runner()?;
    let config = RunConfig {
        mode: args.mode,
        options: CheckOptions {
            mode: args.mode,
            max_steps: args.max_steps,
            max_tokens: args.max_tokens,
            value_chars: args.value_chars.max(8),
            ..CheckOptions::default()
        },
        out: &out,
        jobs: runner.jobs(),
        model_name: model_name.clone(),
    };
    let quiet = args.quiet;
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
    let runtime = super::runtime()?;
    let stats = runtime.block_on(eval::run(
        &config,
        &runner,
        model.as_deref(),
        &prompts,
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
    let label = match args.mode {
        Mode::Exec => "ldb exec".to_string(),
        Mode::Hybrid if model.is_none() => "ldb hybrid (no model)".to_string(),
        mode => format!("ldb {} ({model_name})", mode.name()),
    };
    match scorer {
        Scorer::Orca(all, selected) => {
            let chosen: Vec<&orca::OrcaInstance> =
                all.iter().filter(|i| selected.contains(&i.id)).collect();
            let table = score_orca(dataset.name(), &label, &chosen, &records);
            if args.json {
                output::print_json(&table)?;
            } else {
                output::print(&render_orca(&table));
            }
        }
        Scorer::Pre(all, ids) => {
            let chosen: Vec<&pre::PreRecord> =
                all.iter().filter(|r| ids.contains(&r.id())).collect();
            let table = score_pre(&label, &chosen, &records);
            if args.json {
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
    Pre(Vec<pre::PreRecord>, Vec<String>),
}

/// Without CodeNet: what the labels say, and why nothing else can be scored.
fn print_manifest(records: &[pre::PreRecord], json: bool) -> Result<(), CliError> {
    let m = pre::manifest(records);
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
