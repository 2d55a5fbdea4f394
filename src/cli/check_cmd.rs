//! `ldb check FILE|-`: say whether a program raises a runtime error, which, where, and how the
//! run gets there; by executing it, by predicting it, or both (see `crate::check`).

use std::io::Read;
use std::path::Path;

use super::args::values::Format;
use super::output::{self, CliError, ExitStatus};
use super::settings::CheckSettings;
use super::settings::ModelSettings;
use crate::check::hybrid::{self, Started};
use crate::check::program::MAX_PROGRAM_BYTES;
use crate::check::{exec, predict, CheckError, CheckReport, Mode, Program, Source};

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

pub fn run(s: CheckSettings) -> Result<ExitStatus, CliError> {
    let bytes = read_limited(&s.file, MAX_PROGRAM_BYTES + 1)?;
    let program = Program::new(&s.file, &bytes).map_err(CheckError::from)?;
    let mut options = s.options.clone();
    if let Some(name) = &s.stdin {
        let bytes = read_limited(name, 64 << 20)?;
        options.stdin = Some(String::from_utf8(bytes).map_err(|_| {
            CliError::bad_input(
                format!("the input {name} is not UTF-8 text"),
                "the program's input is passed as text; save it as UTF-8",
            )
        })?);
    }
    let prompts = &s.prompts;
    let report = match options.mode {
        Mode::Exec => {
            let runner = runner_for(&s, &bytes)?;
            exec::check(&runner, &program, &options)?
        }
        Mode::Predict => {
            let model = load_model(&s.models)?;
            let prepared = exec::prepare(&program, options.incomplete);
            block_on(predict::check(
                model.as_ref(),
                prompts,
                &program,
                &prepared,
                &options,
                None,
            ))??
        }
        Mode::Hybrid => {
            let runner = runner_for(&s, &bytes)?;
            match hybrid::start(&runner, &program, &options)? {
                Started::Done(report) => *report,
                Started::NeedsPrediction(pending) => {
                    eprintln!("ldb: {}; predicting the rest", pending.reason);
                    // The model is loaded only now: most checks never need it.
                    let model = load_model(&s.models)?;
                    block_on(hybrid::finish(
                        model.as_ref(),
                        prompts,
                        &program,
                        &options,
                        &pending,
                    ))??
                }
            }
        }
    };
    match s.format {
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
fn runner_for(s: &CheckSettings, bytes: &[u8]) -> Result<crate::run::Runner, CliError> {
    let runner = s.sandbox.runner()?;
    let Some(step) = &s.make_runnable else {
        return Ok(runner);
    };
    let snippet = crate::exec::Snippet::from_bytes(s.file.clone(), bytes)?;
    let (generator, _) = crate::cli::models::load(&s.models)?;
    let prefix =
        crate::cli::exec_cmd::find_prefix(&snippet, step, generator, &runner, &s.prompts, false)?;
    Ok(runner.with_prelude(prefix))
}

fn load_model(models: &ModelSettings) -> Result<crate::generate::model::SharedModel, CliError> {
    let (_, debugger) = crate::cli::models::load(models)?;
    Ok(debugger)
}

fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, CliError> {
    let runtime = crate::cli::runtime()?;
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
