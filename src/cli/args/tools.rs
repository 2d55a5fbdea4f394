//! The flags of `ldb exec` and `ldb check`.

use std::path::PathBuf;

use clap::Args;

use super::parse;
use super::shared::{ExecStepArgs, ModelArgs, SandboxArgs};
use super::values::{Format, ModeArg};

/// Settings of the prefix search, shared by `ldb exec` and `ldb eval exec`.
#[derive(Debug, Clone, Args)]
pub struct ExecSearchArgs {
    /// Prefixes asked for per prompt (Treefix: 10).
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = parse::at_least_one())]
    pub n: usize,
    /// Coverage-guidance rounds at most (Treefix: 10).
    #[arg(long, value_name = "K", default_value_t = 3)]
    pub k: usize,
    /// Modules the snippet or the prefix imports that are not installed get stand-in objects
    /// instead of failing the run (never a standard-library name).
    #[arg(long)]
    pub allow_missing: bool,
    /// Stop asking the model once its calls cost this many tokens.
    #[arg(long, value_name = "TOKENS")]
    pub budget_tokens: Option<u64>,
    /// Sampling temperature of every prefix after the first of a prompt (the first is greedy).
    #[arg(long, value_name = "T", default_value_t = 0.8, value_parser = parse::temperature)]
    pub temperature: f32,
    /// Base of the sampling seeds: the same base draws the same samples.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub rng_seed: u64,
    /// Do not try the model-free prefixes that bind every undefined name to a permissive
    /// stand-in object before asking the model (Treefix's method alone).
    #[arg(long)]
    pub no_standins: bool,
    /// Run all 96 variants of the stand-in prefixes, not the seven chosen on a held-out set:
    /// more coverage, for about 14 times the stand-in runs (a second or so each).
    #[arg(long, conflicts_with = "no_standins")]
    pub all_variants: bool,
    /// After the stand-in variants, this many runs (fewer once every statement is covered) in
    /// which each place in the code answers its own way first, by a seed; 0 runs none.
    #[arg(long, value_name = "RUNS", default_value_t = crate::exec::EXPLORE, conflicts_with = "no_standins")]
    pub explore: usize,
    /// Run only the snippet as it is and the stand-in prefixes: no model is loaded or asked
    /// (fast and offline; a floor for what the model adds).
    #[arg(long, conflicts_with = "no_standins")]
    pub no_model: bool,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Exit codes: 0 the best prefix runs the snippet to its end, 1 no prefix \
                        did, 2 bad input (not Python, empty, binary, too large), 3 model backend \
                        failure, 4 sandbox failure, 5 internal error."
)]
pub struct ExecArgs {
    /// The snippet: a Python file, or `-` for stdin.
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also write the best prefix to this file (for `ldb trace FILE --prefix PREFIX.py`).
    #[arg(long, value_name = "PREFIX.py")]
    pub write_prefix: Option<PathBuf>,
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
#[command(
    after_help = "Exit codes: 0 no runtime error, 1 a runtime error was found (or \
    predicted), 2 bad input, 3 model backend failure, 4 sandbox failure, 5 internal error.\n\n\
    Examples:\n  ldb check examples/check/crash.py\n  \
    ldb check examples/check/reads_input.py --stdin examples/check/reads_input.txt\n  \
    ldb check examples/check/snippet.py --incomplete --format json\n  \
    cat prog.py | ldb check - --mode predict --model qwen2.5-coder-0.5b"
)]
pub struct CheckArgs {
    /// Python file to check, or `-` to read it from stdin.
    pub file: String,
    /// The program's standard input (for `input()` and `sys.stdin`); `-` reads it from stdin.
    #[arg(long, value_name = "FILE")]
    pub stdin: Option<String>,
    /// A description of the input, for predictions, when the input itself is not at hand.
    #[arg(long, value_name = "TEXT")]
    pub input_desc: Option<String>,
    /// The program is a snippet: names may be undefined. Standard-library imports it leaves out
    /// are added (by name analysis) before it runs; line numbers stay those of the file.
    #[arg(long)]
    pub incomplete: bool,
    /// exec: run it in the sandbox; predict: ask the model to walk its CFG; hybrid: run what
    /// can run and predict only the rest.
    #[arg(long, value_enum, default_value_t = ModeArg::Hybrid)]
    pub mode: ModeArg,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Predictions: CFG blocks the model may walk at most.
    #[arg(long, value_name = "N", default_value_t = 40, value_parser = parse::at_least_one())]
    pub max_steps: usize,
    /// Predictions: reply tokens at most.
    #[arg(long, value_name = "N", default_value_t = 1500, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_tokens: u32,
    /// Characters kept per variable value.
    #[arg(long, value_name = "N", default_value_t = 120)]
    pub value_chars: usize,
    #[command(flatten)]
    pub snippet: ExecStepArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}
