//! `ldb check FILE|-`: say whether a program raises a runtime error, which, where, and how the
//! run gets there; by executing it, by predicting it, or both (see `crate::check`).

use std::io::Read;
use std::path::Path;

use clap::{Args, ValueEnum};

use super::output::{self, CliError, ExitStatus};
use super::{ModelArgs, SandboxArgs};
use crate::check::hybrid::{self, Started};
use crate::check::program::MAX_PROGRAM_BYTES;
use crate::check::{exec, predict, CheckError, CheckOptions, CheckReport, Mode, Program, Source};
use crate::prompts::Prompts;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Json,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Exit codes: 0 no runtime error, 1 a runtime error was found (or \
    predicted), 2 bad input, 3 model backend failure, 4 sandbox failure.\n\n\
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
    #[arg(long, value_enum, default_value_t = Mode::Hybrid)]
    pub mode: Mode,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Predictions: CFG blocks the model may walk at most.
    #[arg(long, value_name = "N", default_value_t = 40)]
    pub max_steps: usize,
    /// Predictions: reply tokens at most.
    #[arg(long, value_name = "N", default_value_t = 1500)]
    pub max_tokens: u32,
    /// Characters kept per variable value.
    #[arg(long, value_name = "N", default_value_t = 120)]
    pub value_chars: usize,
    #[command(flatten)]
    pub snippet: super::ExecStepArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

impl From<CheckError> for CliError {
    fn from(e: CheckError) -> Self {
        match e {
            CheckError::Input(input) => CliError::bad_input(input.to_string(), input.hint()),
            CheckError::Model(m) => m.into(),
            CheckError::NoModel { .. } => CliError::bad_input(
                e.to_string(),
                "use --mode exec, or name a model (--model, --base-url)",
            ),
            CheckError::Prompt(_) => CliError::bad_input(
                e.to_string(),
                "check the template files given with --prompts",
            ),
            CheckError::Sandbox(_) | CheckError::SandboxFailure(_) => {
                CliError::sandbox(e.to_string())
            }
        }
    }
}

pub fn run(args: &CheckArgs) -> Result<ExitStatus, CliError> {
    if args.file == "-" && args.stdin.as_deref() == Some("-") {
        return Err(CliError::bad_input(
            "the program and its input cannot both come from stdin",
            "save one of them to a file: ldb check prog.py --stdin -",
        ));
    }
    if args.max_steps == 0 || args.max_tokens == 0 {
        return Err(CliError::bad_input(
            "--max-steps and --max-tokens must be at least 1",
            "e.g. --max-steps 40 --max-tokens 1500",
        ));
    }
    let bytes = read_limited(&args.file, MAX_PROGRAM_BYTES + 1)?;
    let program = Program::new(&args.file, &bytes).map_err(CheckError::from)?;
    let stdin = match &args.stdin {
        Some(name) => {
            let bytes = read_limited(name, 64 << 20)?;
            Some(String::from_utf8(bytes).map_err(|_| {
                CliError::bad_input(
                    format!("the input {name} is not UTF-8 text"),
                    "the program's input is passed as text; save it as UTF-8",
                )
            })?)
        }
        None => None,
    };
    let options = CheckOptions {
        mode: args.mode,
        stdin,
        input_desc: args.input_desc.clone(),
        incomplete: args.incomplete,
        max_steps: args.max_steps,
        max_tokens: args.max_tokens,
        value_chars: args.value_chars.max(8),
    };
    let prompts = match &args.model.prompts {
        Some(dir) => Prompts::from_dir(dir),
        None => Prompts::new(),
    }
    .map_err(|e| CliError::bad_input(e.to_string(), "check the template files"))?;
    if args.snippet.make_runnable && args.mode == Mode::Predict {
        return Err(CliError::bad_input(
            "--make-runnable runs the snippet, and --mode predict runs nothing",
            "use --mode exec or --mode hybrid with --make-runnable",
        ));
    }
    let report = match args.mode {
        Mode::Exec => {
            let runner = runner_for(args, &bytes, &prompts)?;
            exec::check(&runner, &program, &options)?
        }
        Mode::Predict => {
            let model = load_model(&args.model)?;
            let prepared = exec::prepare(&program, options.incomplete);
            block_on(predict::check(
                model.as_ref(),
                &prompts,
                &program,
                &prepared,
                &options,
                None,
            ))??
        }
        Mode::Hybrid => {
            let runner = runner_for(args, &bytes, &prompts)?;
            match hybrid::start(&runner, &program, &options)? {
                Started::Done(report) => *report,
                Started::NeedsPrediction(pending) => {
                    eprintln!("ldb: {}; predicting the rest", pending.reason);
                    // The model is loaded only now: most checks never need it.
                    let model = load_model(&args.model)?;
                    block_on(hybrid::finish(
                        model.as_ref(),
                        &prompts,
                        &program,
                        &options,
                        &pending,
                    ))??
                }
            }
        }
    };
    match args.format {
        Format::Json => output::print_json(&report)?,
        Format::Text => output::print(&render_text(&report)),
    }
    Ok(if report.is_error {
        ExitStatus::TestsFailed
    } else {
        ExitStatus::Success
    })
}

/// The sandbox runner; with `--make-runnable`, one that runs the best prefix `ldb exec` finds
/// before the snippet (line numbers stay the snippet's own).
fn runner_for(
    args: &CheckArgs,
    bytes: &[u8],
    prompts: &Prompts,
) -> Result<crate::runner::Runner, CliError> {
    let runner = args.sandbox.runner()?;
    if !args.snippet.make_runnable {
        return Ok(runner);
    }
    let snippet = crate::exec::Snippet::from_bytes(args.file.clone(), bytes)?;
    let (generator, _) = super::models::build(&args.model)?;
    let prefix =
        super::exec_cmd::find_prefix(&snippet, &args.snippet, generator, &runner, prompts, false)?;
    Ok(runner.with_prelude(prefix))
}

fn load_model(args: &ModelArgs) -> Result<crate::model::SharedModel, CliError> {
    let (_, debugger) = super::models::build(args)?;
    Ok(debugger)
}

fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, CliError> {
    let runtime = super::runtime()?;
    Ok(runtime.block_on(future))
}

/// Read a file (or stdin for `-`), refusing more than `limit` bytes without reading them all.
fn read_limited(name: &str, limit: usize) -> Result<Vec<u8>, CliError> {
    let shown = if name == "-" { "stdin" } else { name };
    let mut bytes = Vec::new();
    let result = if name == "-" {
        std::io::stdin()
            .lock()
            .take(limit as u64 + 1)
            .read_to_end(&mut bytes)
    } else {
        // Regular files only: a FIFO or a device would hang or never end. One over the limit
        // is read up to just past it, so the size check below reports it as it always has.
        match crate::files::read_bytes(Path::new(name), limit as u64) {
            Ok(b) => {
                bytes = b;
                Ok(0)
            }
            Err(crate::files::ReadError::TooLarge { .. }) => {
                bytes = vec![0; limit + 1];
                Ok(0)
            }
            Err(e) => return Err(e.into()),
        }
    };
    result.map_err(|e| {
        CliError::bad_input(
            format!("cannot read {shown}: {e}"),
            "check the path; programs are plain UTF-8 Python files",
        )
    })?;
    Ok(bytes)
}

/// The report for people.
pub fn render_text(r: &CheckReport) -> String {
    let how = match r.source {
        Source::Executed => "executed",
        Source::Predicted => "predicted",
    };
    let mut out = String::new();
    if r.is_error {
        let class = r
            .error_class
            .map_or("an error".to_string(), |c| c.to_string());
        let at = match (r.line, &r.block) {
            (Some(l), Some(b)) => format!(" at line {l} (block {b})"),
            (Some(l), None) => format!(" at line {l}"),
            (None, Some(b)) => format!(" in block {b}"),
            (None, None) => String::new(),
        };
        out.push_str(&format!("{}: {class}{at} [{how}]\n", r.file));
        if let Some(m) = r.message.as_deref().filter(|m| !m.is_empty()) {
            out.push_str(&format!("  {}\n", one_line(m, 200)));
        }
    } else {
        out.push_str(&format!("{}: no runtime error [{how}]\n", r.file));
    }
    if let Some(why) = &r.predicted_because {
        out.push_str(&format!("  predicted because {why}\n"));
    }
    out.push_str(&format!(
        "\nBlocks in the order they ran ({}{}):\n",
        r.block_trace.len(),
        if r.omitted_steps > 0 {
            format!("; {} statements in the middle not kept", r.omitted_steps)
        } else {
            String::new()
        }
    ));
    out.push_str("  (each line shows the variables the visit changed)\n");
    let n = r.block_trace.len();
    let mut previous: Vec<&crate::check::VarState> = Vec::new();
    for (i, step) in r.block_trace.iter().enumerate() {
        let changed: Vec<String> = step
            .state
            .iter()
            .filter(|v| !previous.contains(v))
            .map(|v| format!("{} = {}", v.name, one_line(&v.value, 40)))
            .collect();
        previous = step.state.iter().collect();
        if n > 24 && i == 12 {
            out.push_str(&format!("  … {} more …\n", n - 24));
        }
        if n > 24 && (12..n - 12).contains(&i) {
            continue;
        }
        let src = match step.source {
            Source::Executed => "executed ",
            Source::Predicted => "predicted",
        };
        out.push_str(&format!(
            "  {:<8} {:<12} {src}  {}\n",
            step.block,
            format!("lines {}", line_list(&step.lines)),
            if changed.is_empty() {
                "(no change)".to_string()
            } else {
                one_line(&changed.join(", "), 90)
            }
        ));
    }
    if !r.added_imports.is_empty() {
        out.push_str(&format!(
            "\nAdded imports: {}\n",
            r.added_imports.join("; ")
        ));
    }
    if !r.unresolved_names.is_empty() {
        out.push_str(&format!(
            "Names defined nowhere: {}\n",
            r.unresolved_names.join(", ")
        ));
    }
    if !r.notes.is_empty() {
        out.push_str("\nNotes:\n");
        for n in &r.notes {
            out.push_str(&format!("  - {n}\n"));
        }
    }
    if let Some(u) = &r.usage {
        out.push_str(&format!(
            "\nModel tokens: {} prompt, {} reply\n",
            u.prompt_tokens, u.completion_tokens
        ));
    }
    out
}

fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > max {
        let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    } else {
        flat
    }
}

/// `1-3,5` for [1, 2, 3, 5].
fn line_list(lines: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let start = lines[i];
        let mut j = i;
        while j + 1 < lines.len() && lines[j + 1] == lines[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{start}-{}", lines[j])
        } else {
            start.to_string()
        });
        i = j + 1;
    }
    parts.join(",")
}
