//! Hybrid mode: execute what can be executed, predict only what cannot.
//!
//! The program runs first ([`crate::check::exec`]). Its outcome stands unless the run could not show
//! what the program does: it reads input that was not given, it stopped on a name no import
//! resolves (a snippet's missing context), it needs a module the sandbox does not have, or it
//! ran out of time. Then the model continues the real run from the statement where it stopped,
//! with the variables it had there (a timeout is predicted from the start), and the report says
//! which blocks were executed and which predicted.
//!
//! The work is split ([`start`], [`finish`]) so that a caller can load a model only when a
//! prediction is needed.

use super::exec::{self, ExecRun, Prepared, RunEnd};
use super::predict::{self, Continuation};
use super::{CheckError, CheckOptions, CheckReport, Checker, Mode, Program, Source};
use crate::generate::model::ChatModel;
use crate::generate::prompts::Prompts;
use crate::run::Runner;

/// After the run: a final report, or what a prediction has to continue.
#[derive(Debug)]
pub enum Started {
    Done(Box<CheckReport>),
    NeedsPrediction(Box<Pending>),
}

/// A run that has to be continued by a prediction.
#[derive(Debug, Clone)]
pub struct Pending {
    pub prepared: Prepared,
    pub run: ExecRun,
    /// Where to continue; `None`: predict from the start.
    pub continuation: Option<Continuation>,
    /// Why, for the report.
    pub reason: String,
}

impl Pending {
    /// The run's own report, for when no prediction can be made: it says what ran, and that
    /// its outcome does not show what the program does.
    pub fn without_prediction(&self, program: &Program) -> CheckReport {
        let mut report = exec::report_of(program, &self.prepared, &self.run, Mode::Hybrid);
        report.predicted_because = Some(self.reason.clone());
        report.notes.push(format!(
            "the run could not show what the program does ({}), and no model was available to \
             predict the rest: the outcome above is the run's",
            self.reason
        ));
        report
    }
}

/// Run the program and decide whether the run settles it.
pub fn start(
    runner: &Runner,
    program: &Program,
    options: &CheckOptions,
) -> Result<Started, CheckError> {
    let prepared = exec::prepare(program, options.incomplete);
    let run = exec::run(
        runner,
        program,
        &prepared,
        options.stdin.as_deref(),
        options.value_chars,
    )?;
    let Some((reason, stop)) = undecided(&prepared, &run, options) else {
        let report = exec::report_of(program, &prepared, &run, Mode::Hybrid);
        return Ok(Started::Done(Box::new(report)));
    };
    let continuation = stop.and_then(|index| continuation(&run, index, &reason));
    Ok(Started::NeedsPrediction(Box::new(Pending {
        prepared,
        run,
        continuation,
        reason,
    })))
}

/// Predict the rest of a pending run.
pub async fn finish(
    model: &dyn ChatModel,
    prompts: &Prompts,
    program: &Program,
    options: &CheckOptions,
    pending: &Pending,
) -> Result<CheckReport, CheckError> {
    let mut report = predict::check(
        model,
        prompts,
        program,
        &pending.prepared,
        options,
        pending.continuation.as_ref(),
    )
    .await?;
    report.mode = Mode::Hybrid;
    report.predicted_because = Some(pending.reason.clone());
    let run_notes = pending.run.notes.iter().cloned();
    report.notes.splice(0..0, run_notes);
    let executed = report
        .block_trace
        .iter()
        .filter(|s| s.source == Source::Executed)
        .count();
    report.notes.push(format!(
        "{executed} block visits were executed; the rest of the trace and the verdict are \
         predicted"
    ));
    Ok(report)
}

/// Hybrid mode in one go (the model, if any, comes with the checker).
pub async fn check(
    checker: &Checker<'_>,
    program: &Program,
    options: &CheckOptions,
) -> Result<CheckReport, CheckError> {
    match start(checker.runner, program, options)? {
        Started::Done(report) => Ok(*report),
        Started::NeedsPrediction(pending) => match checker.model {
            Some(model) => finish(model, checker.prompts, program, options, &pending).await,
            None => Ok(pending.without_prediction(program)),
        },
    }
}

/// Why the run does not settle the question, and the statement (index into
/// [`ExecRun::statements`]) a prediction should continue from (`None`: from the start).
fn undecided(
    prepared: &Prepared,
    run: &ExecRun,
    options: &CheckOptions,
) -> Option<(String, Option<usize>)> {
    // Input the run did not have: continue from the first statement that reads it.
    if options.stdin.is_none() && prepared.facts.reads_input() {
        let first_read = run
            .statements
            .iter()
            .position(|s| prepared.facts.input_lines.contains(&s.line));
        if let Some(index) = first_read {
            let line = run.statements.get(index).map_or(0, |s| s.line);
            return Some((
                format!("line {line} reads standard input, and no input was given"),
                Some(index),
            ));
        }
    }
    let last = run.statements.len().checked_sub(1);
    match &run.end {
        RunEnd::Raised(e) if e.kind == "NameError" => {
            let name = quoted(&e.message)?;
            // In a whole program an undefined name is the program's own error.
            if options.incomplete && prepared.unresolved.contains(&name) {
                let what = match crate::python::stdlib::third_party_alias(&name) {
                    Some(module) => format!(
                        "it is most likely the module {module}, which the snippet imports in \
                         code it leaves out and which is not installed here"
                    ),
                    None => "it comes from code the snippet leaves out".to_string(),
                };
                Some((format!("`{name}` is not defined: {what}"), last))
            } else {
                None
            }
        }
        RunEnd::Raised(e) if e.kind == "ModuleNotFoundError" || e.kind == "ImportError" => {
            let module = quoted(&e.message).unwrap_or_else(|| e.message.clone());
            // Only a module missing here: a snippet's own misspelt import is its error.
            let missing_here = e.message.starts_with("No module named");
            missing_here.then(|| {
                (
                    format!(
                        "the module `{module}` is not installed where ldb runs programs; assume \
                         it behaves as the real one"
                    ),
                    last,
                )
            })
        }
        // The limit is the sandbox's, not the program's.
        RunEnd::Memory => Some((
            "the real run reached the sandbox's memory limit".to_string(),
            last,
        )),
        RunEnd::Timeout => Some((
            format!(
                "the real run did not finish within the time limit ({} block visits seen)",
                run.steps.len() as u64 + run.omitted
            ),
            None,
        )),
        _ => None,
    }
}

/// The text between the first pair of single quotes (`name 'np' is not defined` → `np`).
fn quoted(message: &str) -> Option<String> {
    let start = message.find('\'')? + 1;
    let len = message.get(start..)?.find('\'')?;
    message.get(start..start + len).map(str::to_string)
}

/// The executed part up to statement `index` (exclusive), and where to go on.
fn continuation(run: &ExecRun, index: usize, reason: &str) -> Option<Continuation> {
    let stop = run.statements.get(index)?;
    let stop_step = run.steps.get(stop.step)?;
    let mut executed: Vec<_> = run.steps.get(..stop.step)?.to_vec();
    // The stop block's statements before the stop ran for real.
    let before: Vec<u32> = run
        .statements
        .iter()
        .take(index)
        .filter(|s| s.step == stop.step)
        .map(|s| s.line)
        .collect();
    if !before.is_empty() {
        let mut partial = stop_step.clone();
        partial.lines = before;
        partial.state = stop.before.clone();
        executed.push(partial);
    }
    Some(Continuation {
        executed,
        stop_scope: stop_step.scope,
        stop_block: stop_step.number,
        stop_line: stop.line,
        state: stop.before.clone(),
        reason: reason.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_names_are_read_from_messages() {
        assert_eq!(quoted("name 'np' is not defined").as_deref(), Some("np"));
        assert_eq!(quoted("No module named 'numpy'").as_deref(), Some("numpy"));
        assert_eq!(quoted("no quotes"), None);
    }
}
