//! Command-line definitions. Parsing lives here; each command's work is in its own module, and
//! everything below the CLI is library code that returns errors instead of printing them.

// Doc comments here are `--help` text (clap), written for a terminal, not for rustdoc.
#![allow(
    rustdoc::invalid_html_tags,
    rustdoc::broken_intra_doc_links,
    rustdoc::bare_urls
)]

mod cfg_cmd;
mod check_cmd;
mod check_eval_cmd;
mod eval_cmd;
mod eval_progress;
mod eval_report_cmd;
mod exec_cmd;
mod file_task;
mod fix_cmd;
mod locate_cmd;
mod model_cmd;
mod models;
mod output;
mod progress;
mod pytest_task;
mod report_cmd;
mod serve_cmd;
mod test_cmd;
mod trace_cmd;

/// The process's one async runtime, made on first use: a command that needs several async steps
/// (a snippet made runnable, then fixed) shares it.
pub(crate) fn runtime() -> Result<&'static tokio::runtime::Runtime, output::CliError> {
    static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| output::CliError::sandbox(format!("cannot start the async runtime: {e}")))?;
    Ok(RUNTIME.get_or_init(|| rt))
}

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

pub use output::{CliError, ExitStatus};

use crate::runner::Runner;
use crate::sandbox::{Limits, Sandbox};
use crate::trace::{Level, TracerKind};

#[derive(Debug, Parser)]
#[command(
    name = "ldb",
    version,
    about = "Debug LLM-written Python the way a person does: run a failing test, stop after every \
             basic block, read the variables, find the wrong block, fix it.",
    after_help = "Exit codes: 0 success, 1 tests failed, 2 bad input, 3 model backend failure, \
                  4 sandbox failure."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Debug a task's program until its visible tests pass (the LDB loop).
    Fix(Box<FixArgs>),
    /// Run a task's tests against a program in the sandbox and report each result.
    Test(TestArgs),
    /// Run a program on one test under the tracer and print the sampled block trace.
    Trace(TraceArgs),
    /// Rank a failing program's statements by how likely each is wrong, from what its
    /// passing and failing tests executed.
    Locate(Box<locate_cmd::LocateArgs>),
    /// Print the control-flow graph of a Python file.
    Cfg(CfgArgs),
    /// Print the JSON Schema of the `ldb fix --report` file.
    Schema,
    /// Turn an `ldb fix --report` file into a self-contained HTML page.
    Report(report_cmd::ReportArgs),
    /// Download and list the embedded models.
    #[command(subcommand)]
    Model(ModelCommand),
    /// Serve the model (by default the embedded one) as an OpenAI-compatible API on loopback.
    Serve(Box<ServeArgs>),
    /// Run strategies over a benchmark and score them on hidden tests.
    Eval(Box<eval_cmd::EvalArgs>),
    /// Make an incomplete snippet run: find prefixes (imports, initialisations) that define
    /// what it uses, guided by its undefined names, its errors and its uncovered lines.
    Exec(Box<exec_cmd::ExecArgs>),
    /// Find the runtime error in a program: run it, predict it from its CFG, or both.
    Check(Box<check_cmd::CheckArgs>),
}

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Download an embedded model (resumes an interrupted download; verifies size and sha256).
    Pull(model_cmd::PullArgs),
    /// Show the embedded models and which are installed.
    List(model_cmd::ListArgs),
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (loopback by default).
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port (0 picks a free one; the base URL is printed on stdout).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Model id clients see (default: the model's name).
    #[arg(long, value_name = "ID")]
    pub served_name: Option<String>,
    /// Seconds a client has to send a request's headers (from connecting, or from the end of
    /// the previous reply); the connection is closed after.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub header_timeout: f64,
    /// Seconds a client has to send a request's body; answered with 408 after.
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub body_timeout: f64,
    #[command(flatten)]
    pub model: ModelArgs,
}

/// Budgets of every strategy, and the settings of `--strategy search`.
#[derive(Debug, Clone, Args)]
pub struct SearchArgs {
    /// Stop a task's debugging once its model calls have cost this many tokens (prompt tokens
    /// the backend evaluated plus reply tokens; a kept prompt prefix is not counted again).
    /// Applies to every strategy, so strategies can be compared at equal cost.
    #[arg(long, value_name = "TOKENS")]
    pub budget_tokens: Option<u64>,
    /// Search: candidates proposed at most per task.
    #[arg(long, value_name = "N", default_value_t = 24)]
    pub max_candidates: usize,
    /// Search: proposers and samples each draws per parent program (fresh: per round), in the
    /// order they run: mutate (model-free edits at the suspicious statements; the count is
    /// ignored), patch (the model rewrites the suspicious lines), feedback (repair from the
    /// failing tests), ldb (repair from the trace and block verdicts), fresh (a new program
    /// from the task).
    #[arg(long, value_name = "LIST", default_value = "mutate,patch:2,fresh:4")]
    pub proposers: String,
    /// Search: programs carried from one round to the next.
    #[arg(long, value_name = "B", default_value_t = 2)]
    pub beam: usize,
    /// Search: after the first candidate that passes the visible tests, propose N more and
    /// return the one most passing candidates agree with on extra inputs (0: the first).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub select: usize,
    /// Search: when the program already passes the visible tests, draw N fresh programs and
    /// keep it unless more of them agree with each other on extra inputs than with it
    /// (0: a passing program is returned unchecked).
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub verify: usize,
    /// Search: extra inputs made for --select (mutations of the visible tests' arguments).
    #[arg(long, value_name = "N", default_value_t = 12)]
    pub extra_inputs: usize,
    /// Search: sampling temperature of the proposals.
    #[arg(long, value_name = "T", default_value_t = 0.8)]
    pub search_temperature: f32,
    /// Search: how the ldb proposer asks for verdicts: only the first wrong block (short, which
    /// localised better with the embedded models), or one per block (full).
    #[arg(long, value_name = "FORM", value_enum, default_value_t = crate::reply::VerdictForm::Short)]
    pub verdicts: crate::reply::VerdictForm,
    /// Search: how --select chooses among passing candidates: the largest group that agrees on
    /// every extra input, or the most agreement input by input.
    #[arg(long, value_name = "RULE", value_enum, default_value_t = crate::agent::search::SelectRule::Groups)]
    pub select_by: crate::agent::search::SelectRule,
    /// Search: draw fresh programs with seeds of their own, several per request, instead of
    /// resampling's seeds in its order (the default, so the search sees every program
    /// `--strategy resample` would at equal temperatures, and adds its checks on top). A
    /// backend that draws several samples in one call (OpenAI's `n`) always gets them together.
    #[arg(long, overrides_with = "fresh_as_resample")]
    pub no_fresh_as_resample: bool,
    /// The default (see --no-fresh-as-resample); accepted so that older command lines still run.
    #[arg(long, hide = true, overrides_with = "no_fresh_as_resample")]
    pub fresh_as_resample: bool,
    /// Let the model write programs from the task alone (resample, the search's fresh
    /// proposer) in full. By default they start with the task's own signature and docstring and
    /// the embedded model writes only the body: on the development sets that cost a third fewer
    /// tokens for the same fixes. HTTP endpoints ignore the prefix.
    #[arg(long, overrides_with = "prefill")]
    pub no_prefill: bool,
    /// The default (see --no-prefill); accepted so that older command lines still run.
    #[arg(long, hide = true, overrides_with = "no_prefill")]
    pub prefill: bool,
    /// Base of the sampling seeds: the same base draws the same samples again.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub rng_seed: u64,
    /// Search, mutate: statements edited per program, most suspicious first.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub locate_top: usize,
    /// Search, mutate: edits tried per program at most.
    #[arg(long, value_name = "N", default_value_t = 400)]
    pub mutate_limit: usize,
    /// Search, mutate: edits in a row (when no single edit passes, the edits that got
    /// furthest are edited again).
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub mutate_depth: usize,
    /// Search, patch: statements the model rewrites per program, most suspicious first.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub patch_top: usize,
    /// Search, patch: fill-in-the-middle (the embedded model), a chat prompt with the lines
    /// marked, or auto (the first where the backend takes raw prompts).
    #[arg(long, value_name = "FORM", value_enum, default_value_t = crate::agent::search::PatchForm::Auto)]
    pub patch_form: crate::agent::search::PatchForm,
    /// Search: stop drawing votes (--select, --verify) when the first N fresh programs drawn for
    /// them all fail the visible tests: the model cannot solve the task from its text, and more
    /// samples would cost tokens for nothing (0: draw them all).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub vote_patience: usize,
}

impl SearchArgs {
    pub fn options(&self) -> Result<crate::agent::search::SearchOptions, CliError> {
        let portfolio = crate::agent::search::SearchOptions::parse_portfolio(&self.proposers)
            .map_err(|m| {
                CliError::bad_input(
                    format!("--proposers: {m}"),
                    "e.g. --proposers fresh:4,feedback:1,ldb:1",
                )
            })?;
        if !(0.0..=2.0).contains(&self.search_temperature) {
            return Err(CliError::bad_input(
                format!(
                    "--search-temperature {} is outside 0..=2",
                    self.search_temperature
                ),
                "e.g. --search-temperature 0.8",
            ));
        }
        if self.budget_tokens == Some(0) {
            return Err(CliError::bad_input(
                "--budget-tokens 0 allows no model call",
                "e.g. --budget-tokens 20000, or leave it out for no token limit",
            ));
        }
        Ok(crate::agent::search::SearchOptions {
            portfolio,
            beam: self.beam.max(1),
            max_candidates: self.max_candidates,
            temperature: self.search_temperature,
            select: self.select,
            verify: self.verify,
            extra_inputs: self.extra_inputs,
            verdicts: self.verdicts,
            select_by: self.select_by,
            fresh_as_resample: !self.no_fresh_as_resample,
            locate_top: self.locate_top.max(1),
            mutate_limit: self.mutate_limit,
            mutate_depth: self.mutate_depth.max(1),
            patch_top: self.patch_top.max(1),
            patch_form: self.patch_form,
            vote_patience: self.vote_patience,
        })
    }
}

/// Limits for sandboxed runs.
#[derive(Debug, Clone, Args)]
pub struct SandboxArgs {
    /// Wall-clock limit per test run, in seconds.
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    pub timeout: f64,
    /// Address-space limit per test run, in MiB.
    #[arg(long, default_value_t = 1024, value_name = "MIB")]
    pub memory: u64,
    /// Space a test run may write, in MiB: its work dir, /tmp, /var/tmp and /dev/shm together
    /// (kept in memory and gone with the run).
    #[arg(long, default_value_t = 128, value_name = "MIB")]
    pub disk: u64,
    /// Tests run at once (default: number of CPUs).
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// A directory programs may import from too (e.g. a virtualenv's site-packages, or
    /// `pip install --target DIR numpy`), searched before the interpreter's own; repeatable.
    #[arg(long = "python-path", value_name = "DIR")]
    pub python_path: Vec<PathBuf>,
    /// Start a fresh worker process for every test run instead of forking it from a warm
    /// worker that started Python once (same isolation; about 5x the start-up cost per test).
    #[arg(long)]
    pub fresh_workers: bool,
}

impl SandboxArgs {
    pub fn runner(&self) -> Result<Runner, CliError> {
        if !(self.timeout.is_finite() && self.timeout > 0.0) {
            return Err(CliError::bad_input(
                format!(
                    "--timeout must be a positive number of seconds, got {}",
                    self.timeout
                ),
                "e.g. --timeout 5",
            ));
        }
        let exe = std::env::current_exe().map_err(|e| {
            CliError::sandbox(format!(
                "cannot find the ldb executable to start workers: {e}"
            ))
        })?;
        let mut limits = Limits::default().with_wall(Duration::from_secs_f64(self.timeout));
        limits.memory_bytes = self.memory.saturating_mul(1 << 20);
        if self.disk == 0 {
            return Err(CliError::bad_input(
                "--disk must be at least 1 MiB",
                "e.g. --disk 128",
            ));
        }
        limits.disk_bytes = self.disk.saturating_mul(1 << 20);
        let python_path = self
            .python_path
            .iter()
            .map(|dir| {
                crate::sandbox::check_python_path(dir).map_err(|e| {
                    CliError::bad_input(format!("--python-path {}: {e}", dir.display()), e.hint())
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut sandbox = Sandbox::new(exe, limits).with_python_path(python_path);
        if self.fresh_workers {
            sandbox = sandbox.cold();
        }
        let runner = Runner::new(sandbox);
        Ok(match self.jobs {
            Some(j) => runner.with_jobs(j),
            None => runner,
        })
    }
}

#[derive(Debug, Args)]
pub struct TestArgs {
    /// Task file (task.json, a .jsonl of tasks, HumanEval/MBPP/LDB records), or a Python
    /// program (prog.py) with --tests, --test or --io-test.
    pub task: PathBuf,
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
    pub file: file_task::FileTaskArgs,
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
    #[arg(long, value_enum, default_value_t = Level::Block)]
    pub level: Level,
    /// Trace hook: the native one, or the Python-level one (slower; for comparison).
    #[arg(long, value_enum, default_value_t = TracerKind::Native)]
    pub tracer: TracerKind,
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

/// Which model to talk to. Precedence: flags, then the config file, then the environment
/// (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `LDB_MODEL`).
#[derive(Debug, Clone, Args)]
pub struct ModelArgs {
    /// Base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:8080/v1.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// API key (prefer OPENAI_API_KEY or the config file: flags show up in process lists).
    #[arg(long, value_name = "KEY")]
    pub api_key: Option<String>,
    /// Model for both generation and debugging: a name the endpoint serves, an embedded model
    /// (qwen2.5-coder-1.5b, qwen2.5-coder-0.5b) or a local PATH.gguf. With no endpoint
    /// configured, the embedded qwen2.5-coder-1.5b is used (downloaded on first use).
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// Model that writes seed programs (default: --model).
    #[arg(long, value_name = "NAME")]
    pub generator_model: Option<String>,
    /// Model that gives verdicts and regenerates (default: --model).
    #[arg(long, value_name = "NAME")]
    pub debugger_model: Option<String>,
    /// Config file (default: ~/.config/ldb/config.toml, or LDB_CONFIG).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Profile of the config file for both roles ([profiles.NAME]).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Profile for the generator role.
    #[arg(long, value_name = "NAME")]
    pub generator_profile: Option<String>,
    /// Profile for the debugger role.
    #[arg(long, value_name = "NAME")]
    pub debugger_profile: Option<String>,
    /// Seconds before a model request times out (it is then retried).
    #[arg(long, value_name = "SECS")]
    pub request_timeout: Option<u64>,
    /// Retries on 429, 5xx and timeouts.
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,
    /// The endpoint model's context length in tokens: a prompt that cannot fit is refused
    /// before it is sent (default: only prompts no model can take, over 8 MiB).
    #[arg(long, value_name = "TOKENS")]
    pub context_tokens: Option<u32>,
    /// Do not read or write the on-disk response cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Directory of prompt templates replacing the built-in ones: NAME.j2 replaces
    /// prompts/NAME.j2 (see `prompts/` in the source for the names and variables).
    #[arg(long, value_name = "DIR")]
    pub prompts: Option<PathBuf>,
    /// Directory of the response cache.
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    #[command(flatten)]
    pub local: LocalArgs,
}

/// Settings of the embedded (llama.cpp) model.
#[derive(Debug, Clone, Args)]
pub struct LocalArgs {
    /// Generation threads of the embedded model (default: the cores idle when it loads).
    #[arg(long, value_name = "N")]
    pub threads: Option<u32>,
    /// Context length of the embedded model, in tokens.
    #[arg(long, value_name = "TOKENS", default_value_t = 8192)]
    pub context: u32,
    /// Read the model into memory instead of mapping it (lower RSS; slower start).
    #[arg(long)]
    pub no_mmap: bool,
    /// Evaluated prompts the embedded model keeps to restore later, so that returning to a
    /// prompt does not evaluate it again (0: only the live cache).
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub prompt_snapshots: usize,
    /// Evaluate prompts in chunks of this many tokens at fixed positions and reuse only whole
    /// chunks, so that a request draws the same reply whatever came before it (0: reuse any
    /// shared prefix; fewer tokens evaluated, but a seed's sample may then depend on the
    /// requests before it).
    #[arg(long, value_name = "TOKENS", default_value_t = 32)]
    pub prompt_chunk: usize,
}

impl LocalArgs {
    pub fn options(&self) -> crate::local::LocalOptions {
        crate::local::LocalOptions {
            threads: self.threads,
            context_len: self.context,
            use_mmap: !self.no_mmap,
            prompt_snapshots: self.prompt_snapshots,
            prompt_chunk: self.prompt_chunk,
            ..Default::default()
        }
    }
}

#[derive(Debug, Args)]
pub struct FixArgs {
    /// Task file (task.json, a .jsonl of tasks, HumanEval/MBPP/LDB records), or a Python
    /// program (prog.py) with --tests, --test or --io-test.
    pub task: PathBuf,
    /// Only the task with this id.
    #[arg(long, value_name = "ID")]
    pub task_id: Option<String>,
    /// Stop at the first bad line of a .jsonl task file (by default each bad line is reported,
    /// the other tasks are fixed, and the exit status is 2).
    #[arg(long)]
    pub strict: bool,
    /// Seed program to debug (single task).
    #[arg(long, value_name = "FILE.py", conflicts_with_all = ["seeds", "seed_cmd", "generate"])]
    pub seed: Option<PathBuf>,
    /// Seed programs by task_id (LDB's and Reflexion's seed.jsonl work as they are).
    #[arg(long, value_name = "FILE.jsonl", conflicts_with_all = ["seed_cmd", "generate"])]
    pub seeds: Option<PathBuf>,
    /// Command that writes a seed: gets the task JSON (no hidden tests) on stdin, prints the program.
    #[arg(long, value_name = "CMD", conflicts_with = "generate")]
    pub seed_cmd: Option<String>,
    /// Generate the seed with the generator model even if the task has one.
    #[arg(long)]
    pub generate: bool,
    /// How failing programs are improved: a search over candidates checked by execution
    /// (default), LDB's chain, no debugging, Self-Debugging with a line-by-line explanation or a
    /// dry run, or repeated sampling.
    #[arg(long, value_enum, default_value_t = crate::agent::Strategy::Search)]
    pub strategy: crate::agent::Strategy,
    /// Debugging granularity (for --strategy ldb).
    #[arg(long, value_enum, default_value_t = Level::Block)]
    pub level: Level,
    /// Debugging rounds at most.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub max_iters: usize,
    /// Sampling temperature of the model calls.
    #[arg(long, value_name = "T", default_value_t = 0.0)]
    pub temperature: f32,
    /// Sampling temperature of the fresh programs of --strategy resample.
    #[arg(long, value_name = "T", default_value_t = 0.8)]
    pub resample_temperature: f32,
    /// Token budget for the trace in each debugging prompt.
    #[arg(long, value_name = "TOKENS", default_value_t = 3000)]
    pub budget: usize,
    /// Write the final program (or, for many tasks, JSONL of results) here instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// For a .py program: write the fix back into the file (only when it passes every test):
    /// only the function under test changes, the original is kept as FILE.py.ldb-orig, and the
    /// file is locked for the run and replaced atomically.
    #[arg(long, conflicts_with = "out")]
    pub write: bool,
    /// Write a JSON report of every iteration (schema: docs/report.schema.json).
    #[arg(long, value_name = "FILE.json")]
    pub report: Option<PathBuf>,
    /// Tasks debugged at once (for a file of many tasks).
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub concurrency: usize,
    /// Do not print the seed → final diff on stderr.
    #[arg(long)]
    pub no_diff: bool,
    /// Only warnings and errors on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    #[command(flatten)]
    pub file: file_task::FileTaskArgs,
    #[command(flatten)]
    pub snippet: MakeRunnableArgs,
    #[command(flatten)]
    pub search: SearchArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

/// Debugging a snippet that does not run on its own (`ldb fix SNIPPET.py --make-runnable`).
#[derive(Debug, Clone, Args)]
pub struct MakeRunnableArgs {
    #[command(flatten)]
    pub step: ExecStepArgs,
}

/// The `ldb exec` step other commands run first on a snippet (`--make-runnable`).
#[derive(Debug, Clone, Args)]
pub struct ExecStepArgs {
    /// The file is a snippet that uses names it never defines: find a prefix that makes it run
    /// first (as `ldb exec` does); the prefix then runs before every run of the snippet.
    #[arg(long)]
    pub make_runnable: bool,
    /// With --make-runnable: prefixes asked for per prompt.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 3,
        requires = "make_runnable"
    )]
    pub exec_n: usize,
    /// With --make-runnable: coverage-guidance rounds at most.
    #[arg(
        long,
        value_name = "K",
        default_value_t = 3,
        requires = "make_runnable"
    )]
    pub exec_k: usize,
    /// With --make-runnable: modules that cannot be imported get stand-ins.
    #[arg(long, requires = "make_runnable")]
    pub allow_missing: bool,
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

/// Run a parsed command line.
pub fn run(cli: Cli) -> Result<ExitStatus, CliError> {
    match cli.command {
        Command::Fix(args) => fix_cmd::run(&args),
        Command::Test(args) => test_cmd::run(&args),
        Command::Trace(args) => trace_cmd::run(&args),
        Command::Locate(args) => locate_cmd::run(&args),
        Command::Cfg(args) => cfg_cmd::run(&args),
        Command::Model(ModelCommand::Pull(args)) => model_cmd::pull(&args),
        Command::Model(ModelCommand::List(args)) => model_cmd::list(&args),
        Command::Serve(args) => serve_cmd::run(&args),
        Command::Eval(args) => eval_cmd::run(&args),
        Command::Exec(args) => exec_cmd::run(&args),
        Command::Check(args) => check_cmd::run(&args),
        Command::Report(args) => report_cmd::run(&args),
        Command::Schema => {
            output::print_json(&crate::agent::report::report_schema())?;
            Ok(ExitStatus::Success)
        }
    }
}
