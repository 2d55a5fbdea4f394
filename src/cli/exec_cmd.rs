//! `ldb exec FILE|-`: find prefixes that make a snippet run, and print the best prefix, the
//! minimal covering set, per-line coverage, the tree of attempts, tokens and time. Also the
//! glue other commands use to make a snippet runnable first (`--make-runnable`).

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::output::{self, CliError, ExitStatus};
use super::{ModelArgs, SandboxArgs};
use crate::exec::{make_runnable, ExecError, ExecOptions, ExecReport, Snippet, MAX_SNIPPET_BYTES};
use crate::model::SharedModel;
use crate::prompts::Prompts;
use crate::runner::Runner;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Json,
}

/// Settings of the prefix search, shared by `ldb exec` and `ldb eval exec`.
#[derive(Debug, Clone, Args)]
pub struct ExecSearchArgs {
    /// Prefixes asked for per prompt (Treefix: 10).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub n: usize,
    /// Coverage-guidance rounds at most (Treefix: 10).
    #[arg(long, value_name = "K", default_value_t = 3)]
    pub k: usize,
    /// Modules that cannot be imported get stand-in objects instead of failing the run.
    #[arg(long)]
    pub allow_missing: bool,
    /// Stop asking the model once its calls cost this many tokens.
    #[arg(long, value_name = "TOKENS")]
    pub budget_tokens: Option<u64>,
    /// Sampling temperature of every prefix after the first of a prompt (the first is greedy).
    #[arg(long, value_name = "T", default_value_t = 0.8)]
    pub temperature: f32,
    /// Base of the sampling seeds: the same base draws the same samples.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub rng_seed: u64,
}

impl ExecSearchArgs {
    pub fn options(&self) -> Result<ExecOptions, CliError> {
        if self.n == 0 {
            return Err(CliError::bad_input(
                "--n 0 asks for no prefix",
                "e.g. --n 3",
            ));
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            return Err(CliError::bad_input(
                format!("--temperature {} is outside 0..=2", self.temperature),
                "e.g. --temperature 0.8",
            ));
        }
        Ok(ExecOptions {
            n: self.n,
            k: self.k,
            allow_missing: self.allow_missing,
            temperature: self.temperature,
            rng_seed: self.rng_seed,
            budget_tokens: self.budget_tokens,
            ..ExecOptions::default()
        })
    }
}

#[derive(Debug, Args)]
#[command(after_help = "Exit codes: 0 the best prefix runs the snippet to its end, 1 no prefix \
                        did, 2 bad input (not Python, empty, binary, too large), 3 model backend \
                        failure, 4 sandbox failure.")]
pub struct ExecArgs {
    /// The snippet: a Python file, or `-` for stdin.
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
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

impl From<ExecError> for CliError {
    fn from(e: ExecError) -> Self {
        let status = match &e {
            e if e.is_input() => ExitStatus::BadInput,
            ExecError::Prompt(_) => ExitStatus::BadInput,
            _ => ExitStatus::Sandbox,
        };
        match e {
            ExecError::Model(m) => m.into(),
            e => CliError {
                hint: e.hint(),
                message: e.to_string(),
                status,
            },
        }
    }
}

pub fn run(args: &ExecArgs) -> Result<ExitStatus, CliError> {
    let options = args.search.options()?;
    let snippet = read_snippet(&args.file)?;
    let runner = args.sandbox.runner()?;
    let prompts = load_prompts(&args.model)?;
    let (generator, _) = super::models::build(&args.model)?;
    let report = run_search(&snippet, generator, &runner, &prompts, &options, args.quiet)?;
    match args.format {
        Format::Json => output::print_json(&report)?,
        Format::Text => output::print(&report.to_text()),
    }
    Ok(if report.runs() {
        ExitStatus::Success
    } else {
        ExitStatus::TestsFailed
    })
}

/// The search on a fresh runtime, with progress lines on stderr unless `quiet`.
pub fn run_search(
    snippet: &Snippet,
    model: SharedModel,
    runner: &Runner,
    prompts: &Prompts,
    options: &ExecOptions,
    quiet: bool,
) -> Result<ExecReport, CliError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::sandbox(format!("cannot start the async runtime: {e}")))?;
    let progress = move |line: String| {
        if !quiet {
            eprintln!("exec: {line}");
        }
    };
    Ok(runtime.block_on(make_runnable(
        snippet, &*model, runner, prompts, options, &progress,
    ))?)
}

pub fn load_prompts(model: &ModelArgs) -> Result<Prompts, CliError> {
    match &model.prompts {
        Some(dir) => Prompts::from_dir(dir).map_err(|e| {
            CliError::bad_input(
                e.to_string(),
                "--prompts DIR holds NAME.j2 files named like the templates in prompts/",
            )
        }),
        None => Prompts::new().map_err(|e| CliError::sandbox(e.to_string())),
    }
}

/// Read and check a snippet from a file or stdin (`-`).
pub fn read_snippet(path: &Path) -> Result<Snippet, CliError> {
    let (name, bytes) = if path == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .take(MAX_SNIPPET_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| {
                CliError::bad_input(
                    format!("cannot read the snippet from stdin: {e}"),
                    "pipe a Python file in, or pass its path",
                )
            })?;
        ("<stdin>".to_string(), bytes)
    } else {
        let meta = std::fs::metadata(path).map_err(|e| {
            CliError::bad_input(
                format!("cannot read {}: {e}", path.display()),
                "check the path; snippets are plain UTF-8 Python files (or `-` for stdin)",
            )
        })?;
        if meta.is_dir() {
            return Err(CliError::bad_input(
                format!("{} is a directory", path.display()),
                "pass one Python file",
            ));
        }
        if meta.len() > MAX_SNIPPET_BYTES as u64 {
            return Err(ExecError::TooLarge {
                name: path.display().to_string(),
                bytes: usize::try_from(meta.len()).unwrap_or(usize::MAX),
                limit: MAX_SNIPPET_BYTES,
            }
            .into());
        }
        let bytes = std::fs::read(path).map_err(|e| {
            CliError::bad_input(
                format!("cannot read {}: {e}", path.display()),
                "check the path and its permissions",
            )
        })?;
        (path.display().to_string(), bytes)
    };
    Ok(Snippet::from_bytes(name, &bytes)?)
}
