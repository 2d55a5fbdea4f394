//! Command-line definitions. Parsing lives here; each command's work is in its own module, and
//! everything below the CLI is library code that returns errors instead of printing them.

mod cfg_cmd;
mod output;
mod test_cmd;
mod trace_cmd;

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
    /// Run a task's tests against a program in the sandbox and report each result.
    Test(TestArgs),
    /// Run a program on one test under the tracer and print the sampled block trace.
    Trace(TraceArgs),
    /// Print the control-flow graph of a Python file.
    Cfg(CfgArgs),
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
    /// Tests run at once (default: number of CPUs).
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
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
        let runner = Runner::new(Sandbox::new(exe, limits));
        Ok(match self.jobs {
            Some(j) => runner.with_jobs(j),
            None => runner,
        })
    }
}

#[derive(Debug, Args)]
pub struct TestArgs {
    /// Task file: task.json, a .jsonl of tasks, or HumanEval/MBPP/LDB records.
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
    /// Print results as JSON.
    #[arg(long)]
    pub json: bool,
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

/// Run a parsed command line.
pub fn run(cli: Cli) -> Result<ExitStatus, CliError> {
    match cli.command {
        Command::Test(args) => test_cmd::run(&args),
        Command::Trace(args) => trace_cmd::run(&args),
        Command::Cfg(args) => cfg_cmd::run(&args),
    }
}
