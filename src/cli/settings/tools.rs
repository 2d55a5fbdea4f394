//! Settings of `ldb exec` and `ldb check`.

use std::path::PathBuf;

use super::models::ModelSettings;
use super::shared::{exec_step, prompts, SandboxSettings};
use crate::check::{CheckOptions, Mode};
use crate::cli::args::values::Format;
use crate::cli::args::{CheckArgs, ExecArgs, ExecSearchArgs};
use crate::cli::output::CliError;
use crate::exec::ExecOptions;
use crate::generate::prompts::Prompts;

/// The prefix search's options (the value parsers checked `--n` and `--temperature`).
pub fn exec_options(args: &ExecSearchArgs) -> ExecOptions {
    ExecOptions {
        n: args.n,
        k: args.k,
        allow_missing: args.allow_missing,
        temperature: args.temperature,
        rng_seed: args.rng_seed,
        budget_tokens: args.budget_tokens,
        standins: !args.no_standins,
        all_variants: args.all_variants,
        explore: args.explore,
        use_model: !args.no_model,
        ..ExecOptions::default()
    }
}

/// `ldb exec`.
#[derive(Debug)]
pub struct ExecSettings {
    /// The snippet's file, or `-` for stdin.
    pub file: PathBuf,
    pub format: Format,
    pub write_prefix: Option<PathBuf>,
    pub quiet: bool,
    pub options: ExecOptions,
    pub sandbox: SandboxSettings,
    pub models: ModelSettings,
    pub prompts: Prompts,
}

impl ExecSettings {
    pub fn resolve(args: &ExecArgs) -> Result<Self, CliError> {
        Ok(ExecSettings {
            file: args.file.clone(),
            format: args.format,
            write_prefix: args.write_prefix.clone(),
            quiet: args.quiet,
            options: exec_options(&args.search),
            sandbox: SandboxSettings::resolve(&args.sandbox)?,
            models: ModelSettings::resolve(&args.model),
            prompts: prompts(args.model.prompts.as_deref())?,
        })
    }
}

/// `ldb check`.
#[derive(Debug)]
pub struct CheckSettings {
    /// The program's file, or `-` for stdin.
    pub file: String,
    /// The program's input file, or `-` for stdin.
    pub stdin: Option<String>,
    /// The check's options; `stdin` is filled in once the input is read.
    pub options: CheckOptions,
    /// `--make-runnable`: the exec step run on the snippet first.
    pub make_runnable: Option<ExecOptions>,
    pub format: Format,
    pub sandbox: SandboxSettings,
    pub models: ModelSettings,
    pub prompts: Prompts,
}

impl CheckSettings {
    pub fn resolve(args: &CheckArgs) -> Result<Self, CliError> {
        if args.file == "-" && args.stdin.as_deref() == Some("-") {
            return Err(CliError::bad_input(
                "the program and its input cannot both come from stdin",
                "save one of them to a file: ldb check prog.py --stdin -",
            ));
        }
        let mode: Mode = args.mode.into();
        let make_runnable = exec_step(&args.snippet);
        if make_runnable.is_some() && mode == Mode::Predict {
            return Err(CliError::bad_input(
                "--make-runnable runs the snippet, and --mode predict runs nothing",
                "use --mode exec or --mode hybrid with --make-runnable",
            ));
        }
        Ok(CheckSettings {
            file: args.file.clone(),
            stdin: args.stdin.clone(),
            options: CheckOptions {
                mode,
                stdin: None,
                input_desc: args.input_desc.clone(),
                incomplete: args.incomplete,
                max_steps: args.max_steps,
                max_tokens: args.max_tokens,
                value_chars: args.value_chars.max(8),
            },
            make_runnable,
            format: args.format,
            sandbox: SandboxSettings::resolve(&args.sandbox)?,
            models: ModelSettings::resolve(&args.model),
            prompts: prompts(args.model.prompts.as_deref())?,
        })
    }
}
