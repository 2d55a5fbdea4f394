//! What the command line says, as clap parses it: every command's flags and nothing else.
//!
//! Parsing is kept apart from what the flags mean. Here each flag is declared with its help
//! text, its default and what clap can check by itself (`conflicts_with`, `requires`, value
//! parsers for ranges and lists); [`crate::cli::settings`] turns the parsed flags into the runner,
//! models, prompts and options a command works with, once, and the commands see only that.
//!
//! `shared` holds the flag groups several commands flatten in (model, sandbox, search, the
//! `--make-runnable` step, a `.py` program's tests); `values` the enums of flags that take a
//! value from a list, each mapped to the library's own type.

// Doc comments here are `--help` text (clap), written for a terminal, not for rustdoc.
#![allow(
    rustdoc::invalid_html_tags,
    rustdoc::broken_intra_doc_links,
    rustdoc::bare_urls
)]

mod commands;
mod eval;
pub mod parse;
mod shared;
mod tools;
pub mod values;

use clap::{Parser, Subcommand};

pub use commands::{
    CfgArgs, FixArgs, ListArgs, LocateArgs, PullArgs, ReportArgs, ServeArgs, TestArgs, TraceArgs,
};
pub use eval::{
    EvalArgs, EvalCheckArgs, EvalCommand, EvalExecArgs, EvalReportArgs, MergeArgs, RescoreArgs,
};
pub use shared::{ExecStepArgs, FileTaskArgs, LocalArgs, ModelArgs, SandboxArgs, SearchArgs};
pub use tools::{CheckArgs, ExecArgs, ExecSearchArgs};

#[derive(Debug, Parser)]
#[command(
    name = "ldb",
    version,
    about = "Debug LLM-written Python the way a person does: run a failing test, stop after every \
             basic block, read the variables, find the wrong block, fix it.",
    after_help = "Exit codes: 0 success, 1 tests failed, 2 bad input, 3 model backend failure, \
                  4 sandbox failure, 5 internal error (a bug in ldb, or the system refusing what \
                  it needs), 6 fix: a plausible fix, not confirmed (written by --write only with \
                  --unconfirmed), 130 interrupted."
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
    Locate(Box<LocateArgs>),
    /// Print the control-flow graph of a Python file.
    Cfg(CfgArgs),
    /// Print the JSON Schema of the `ldb fix --report` file.
    Schema,
    /// Turn an `ldb fix --report` file into a self-contained HTML page.
    Report(ReportArgs),
    /// Download and list the embedded models.
    #[command(subcommand)]
    Model(ModelCommand),
    /// Serve the model (by default the embedded one) as an OpenAI-compatible API on loopback.
    Serve(Box<ServeArgs>),
    /// Run strategies over a benchmark and score them on hidden tests.
    Eval(Box<EvalArgs>),
    /// Make an incomplete snippet run: find prefixes (imports, initialisations) that define
    /// what it uses, guided by its undefined names, its errors and its uncovered lines.
    Exec(Box<ExecArgs>),
    /// Find the runtime error in a program: run it, predict it from its CFG, or both.
    Check(Box<CheckArgs>),
}

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Download an embedded model (resumes an interrupted download; verifies size and sha256).
    Pull(PullArgs),
    /// Show the embedded models and which are installed.
    List(ListArgs),
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;
    use crate::cli::output::ExitStatus;

    /// `ldb --help` names every exit status the process can end with.
    #[test]
    fn the_help_lists_every_exit_status() {
        let help = Cli::command().render_long_help().to_string();
        let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
        for (status, words) in [
            (ExitStatus::Success, "success"),
            (ExitStatus::TestsFailed, "tests failed"),
            (ExitStatus::BadInput, "bad input"),
            (ExitStatus::Backend, "model backend failure"),
            (ExitStatus::Sandbox, "sandbox failure"),
            (ExitStatus::Internal, "internal error"),
            (ExitStatus::Interrupted, "interrupted"),
        ] {
            let entry = format!("{} {words}", status as i32);
            assert!(help.contains(&entry), "`{entry}` missing from: {help}");
        }
    }
}
