//! Settings of `ldb eval` and its subcommands (`report`, `merge`, `exec`, `check`).

use std::path::{Path, PathBuf};

use super::models::ModelSettings;
use super::shared::{prompts, search_options, SandboxSettings};
use super::tools::exec_options;
use crate::check::{CheckOptions, Mode};
use crate::cli::args::values::{ProgressMode, Subset};
use crate::cli::args::{
    EvalArgs, EvalCheckArgs, EvalExecArgs, EvalReportArgs, MergeArgs, RescoreArgs,
};
use crate::cli::output::CliError;
use crate::eval::check::CheckDataset;
use crate::eval::fix::datasets::SeedSpec;
use crate::eval::fix::shard::Shard;
use crate::eval::fix::{Harness, StrategySpec};
use crate::exec::ExecOptions;
use crate::generate::prompts::Prompts;
use crate::repair::search::SearchOptions;
use crate::trace::Level;

/// `--data-dir`, else `LDB_DATA_DIR`.
pub fn data_dir_or_env(flag: Option<&PathBuf>) -> Option<PathBuf> {
    flag.cloned()
        .or_else(|| std::env::var_os("LDB_DATA_DIR").map(PathBuf::from))
}

/// `ldb eval` (a run).
#[derive(Debug)]
pub struct EvalSettings {
    /// The benchmark's name or path, as given.
    pub dataset: String,
    /// `--data-dir`, else `LDB_DATA_DIR`.
    pub data_dir: Option<PathBuf>,
    pub strict: bool,
    pub seeds: SeedSpec,
    /// The strategies to run, each once, in the order given.
    pub strategies: Vec<StrategySpec>,
    pub task_ids: Vec<String>,
    pub max_iters: usize,
    pub temperature: f32,
    /// Token budget of the trace in each debugging prompt.
    pub trace_budget: usize,
    pub only_failing: bool,
    pub limit: Option<usize>,
    pub concurrency: usize,
    /// `--out DIR` or, under results/, `--run-name NAME` (default: named after the run).
    pub out: Option<PathBuf>,
    pub run_name: Option<String>,
    pub retry_errors: bool,
    /// `None`: the dataset's own default.
    pub harness: Option<Harness>,
    pub json: bool,
    pub quiet: bool,
    pub progress: ProgressMode,
    pub save_reports: bool,
    /// Peers per task (`--peers`).
    pub peers: usize,
    pub shard: Option<Shard>,
    pub budget_tokens: Option<u64>,
    pub rng_seed: u64,
    pub search: SearchOptions,
    pub prefill: bool,
    /// `--prompts DIR`, checked to load; results files record it.
    pub prompts_dir: Option<PathBuf>,
    pub prompts: Prompts,
    pub sandbox: SandboxSettings,
    pub models: ModelSettings,
}

impl EvalSettings {
    pub fn resolve(args: &EvalArgs) -> Result<Self, CliError> {
        let shard = match args.shard.as_deref() {
            Some(text) => Some(
                text.parse::<Shard>()
                    .map_err(|e| CliError::bad_input(e.to_string(), e.hint()))?,
            ),
            None => None,
        };
        let Some(dataset) = args.dataset.clone() else {
            return Err(CliError::bad_input(
                "no dataset: pass --dataset",
                "e.g. --dataset humaneval --data-dir ../shared/datasets, or --dataset \
                 tasks.jsonl; `ldb eval report DIR` summarises finished runs",
            ));
        };
        let level: Level = args.level.into();
        let mut strategies: Vec<StrategySpec> = Vec::new();
        for text in &args.strategies {
            let spec = StrategySpec::parse(text, level).map_err(|e| {
                CliError::bad_input(
                    e.to_string(),
                    "e.g. --strategy ldb --strategy selfdebug-expl --strategy none",
                )
            })?;
            if !strategies.iter().any(|s| s.label() == spec.label()) {
                strategies.push(spec);
            }
        }
        Ok(EvalSettings {
            dataset,
            data_dir: data_dir_or_env(args.data_dir.as_ref()),
            strict: args.strict,
            seeds: SeedSpec::parse(args.seeds.as_deref()),
            strategies,
            task_ids: args.tasks.clone(),
            max_iters: args.max_iters,
            temperature: args.temperature,
            trace_budget: args.budget,
            only_failing: args.only_failing,
            limit: args.limit,
            concurrency: args.concurrency,
            out: args.out.clone(),
            run_name: args.run_name.clone(),
            retry_errors: args.retry_errors,
            harness: args.harness.map(Harness::from),
            json: args.json,
            quiet: args.quiet,
            progress: args.progress,
            save_reports: !args.no_reports,
            peers: args.peers,
            shard,
            budget_tokens: args.search.budget_tokens,
            rng_seed: args.search.rng_seed,
            search: search_options(&args.search),
            prefill: !args.search.no_prefill,
            prompts_dir: args.model.prompts.clone(),
            prompts: prompts(args.model.prompts.as_deref())?,
            sandbox: SandboxSettings::resolve(&args.sandbox)?,
            models: ModelSettings::resolve(&args.model),
        })
    }
}

/// `ldb eval report`.
#[derive(Debug)]
pub struct EvalReportSettings {
    pub results: Vec<PathBuf>,
    pub out: Option<PathBuf>,
    pub plot: Option<PathBuf>,
    pub plot_tokens: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub samples: Option<PathBuf>,
    pub json: bool,
    pub ldb_published: Vec<PathBuf>,
    /// `--data-dir`, else `LDB_DATA_DIR` (else, per published file, the folder above its
    /// `ldb/`).
    pub data_dir: Option<PathBuf>,
    pub sandbox: SandboxSettings,
}

impl EvalReportSettings {
    pub fn resolve(args: &EvalReportArgs) -> Result<Self, CliError> {
        Ok(EvalReportSettings {
            results: args.results.clone(),
            out: args.out.clone(),
            plot: args.plot.clone(),
            plot_tokens: args.plot_tokens.clone(),
            html: args.html.clone(),
            samples: args.samples.clone(),
            json: args.json,
            ldb_published: args.ldb_published.clone(),
            data_dir: data_dir_or_env(args.data_dir.as_ref()),
            sandbox: SandboxSettings::resolve(&args.sandbox)?,
        })
    }
}

/// `ldb eval merge`.
#[derive(Debug)]
pub struct MergeSettings {
    pub dirs: Vec<PathBuf>,
    pub out: PathBuf,
    pub partial: bool,
    pub quiet: bool,
}

impl MergeSettings {
    pub fn resolve(args: &MergeArgs) -> Self {
        MergeSettings {
            dirs: args.dirs.clone(),
            out: args.out.clone(),
            partial: args.partial,
            quiet: args.quiet,
        }
    }
}

/// `ldb eval rescore`.
#[derive(Debug)]
pub struct RescoreSettings {
    pub dir: PathBuf,
    pub dataset: String,
    pub data_dir: Option<PathBuf>,
    pub quiet: bool,
    pub sandbox: SandboxSettings,
}

impl RescoreSettings {
    pub fn resolve(args: &RescoreArgs) -> Result<Self, CliError> {
        Ok(RescoreSettings {
            dir: args.dir.clone(),
            dataset: args.dataset.clone(),
            data_dir: data_dir_or_env(args.data_dir.as_ref()),
            quiet: args.quiet,
            sandbox: SandboxSettings::resolve(&args.sandbox)?,
        })
    }
}

/// `ldb eval exec`.
#[derive(Debug)]
pub struct EvalExecSettings {
    /// The Treefix sample (`None` only with `summary_only`).
    pub data: Option<PathBuf>,
    /// The results file.
    pub out: PathBuf,
    pub subset: Subset,
    pub ids: Vec<String>,
    pub limit: Option<usize>,
    pub retry_errors: bool,
    pub summary_only: bool,
    pub quiet: bool,
    pub options: ExecOptions,
    pub sandbox: SandboxSettings,
    pub models: ModelSettings,
    pub prompts: Prompts,
}

impl EvalExecSettings {
    pub fn resolve(args: &EvalExecArgs) -> Result<Self, CliError> {
        let options = exec_options(&args.search);
        let out = args
            .out
            .clone()
            .unwrap_or_else(|| default_exec_out(&options, args.model.model.as_deref()));
        let data = match (&args.data, data_dir_or_env(args.data_dir.as_ref())) {
            (Some(file), _) => Some(file.clone()),
            (None, Some(dir)) => Some(dir.join("treefix/treefix_sample.jsonl")),
            (None, None) => None,
        };
        if data.is_none() && !args.summary_only {
            return Err(CliError::bad_input(
                "no data: pass --data FILE or --data-dir DIR",
                "e.g. --data-dir ../shared/datasets (or set LDB_DATA_DIR)",
            ));
        }
        Ok(EvalExecSettings {
            data,
            out,
            subset: args.subset,
            ids: args.ids.clone(),
            limit: args.limit,
            retry_errors: args.retry_errors,
            summary_only: args.summary_only,
            quiet: args.quiet,
            options,
            sandbox: SandboxSettings::resolve(&args.sandbox)?,
            models: ModelSettings::resolve(&args.model),
            prompts: prompts(args.model.prompts.as_deref())?,
        })
    }
}

/// `results/exec-treefix-<model>-n<N>-k<K>[-allow-missing][-no-standins].jsonl`.
fn default_exec_out(options: &ExecOptions, model: Option<&str>) -> PathBuf {
    let model = (!options.use_model)
        .then(|| "none".to_string())
        .or_else(|| model.map(str::to_string));
    let model = model
        .as_deref()
        .map(|m| {
            Path::new(m)
                .file_stem()
                .map_or(m.to_string(), |s| s.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "default".into());
    let missing = if options.allow_missing {
        "-allow-missing"
    } else {
        ""
    };
    let standins = if options.standins { "" } else { "-no-standins" };
    PathBuf::from(format!(
        "results/exec-treefix-{model}-n{}-k{}{missing}{standins}.jsonl",
        options.n, options.k
    ))
}

/// `ldb eval check`.
#[derive(Debug)]
pub struct EvalCheckSettings {
    pub dataset: CheckDataset,
    pub data_dir: PathBuf,
    pub mode: Mode,
    /// A balanced sample of this many instances, drawn with `seed`.
    pub sample: Option<usize>,
    pub seed: u64,
    pub ids: Vec<String>,
    /// The results file (default: named after the dataset, the mode and the model).
    pub out: Option<PathBuf>,
    /// Whether a model is asked (predict mode, or hybrid without `--no-model`).
    pub needs_model: bool,
    pub codenet: Option<PathBuf>,
    pub all_records: bool,
    pub options: CheckOptions,
    pub json: bool,
    pub quiet: bool,
    pub sandbox: SandboxSettings,
    pub models: ModelSettings,
    pub prompts: Prompts,
}

impl EvalCheckSettings {
    pub fn resolve(args: &EvalCheckArgs) -> Result<Self, CliError> {
        let dataset = CheckDataset::parse(&args.dataset).ok_or_else(|| {
            CliError::bad_input(
                format!("unknown dataset `{}` for ldb eval check", args.dataset),
                "use --dataset orca-complete, orca-incomplete or runtime-errors",
            )
        })?;
        let data_dir = data_dir_or_env(args.data_dir.as_ref()).ok_or_else(|| {
            CliError::bad_input(
                "no data directory",
                "pass --data-dir ../shared/datasets (or set LDB_DATA_DIR)",
            )
        })?;
        let mode: Mode = args.mode.into();
        if args.no_model && mode == Mode::Predict {
            return Err(CliError::bad_input(
                "--no-model leaves predict mode nothing to do",
                "use --mode exec or --mode hybrid with --no-model",
            ));
        }
        Ok(EvalCheckSettings {
            dataset,
            data_dir,
            mode,
            sample: args.sample,
            seed: args.seed,
            ids: args.ids.clone(),
            out: args.out.clone(),
            needs_model: mode == Mode::Predict || (mode == Mode::Hybrid && !args.no_model),
            codenet: args.codenet.clone(),
            all_records: args.all_records,
            options: CheckOptions {
                mode,
                max_steps: args.max_steps,
                max_tokens: args.max_tokens,
                value_chars: args.value_chars.max(8),
                ..CheckOptions::default()
            },
            json: args.json,
            quiet: args.quiet,
            sandbox: SandboxSettings::resolve(&args.sandbox)?,
            models: ModelSettings::resolve(&args.model),
            prompts: prompts(args.model.prompts.as_deref())?,
        })
    }
}
