//! LDB: run the first failing test under the tracer, show the sampled trace unit by unit
//! (line, block or function call), ask for a verdict per unit, and regenerate from the verdicts.

use std::time::Instant;

use crate::python::cfg::ProgramCfg;
use crate::python::source::SourceFile;
use crate::repair::progress::Phase;
use crate::repair::strategies::{result_text, Round};
use crate::repair::{ms, AgentError, Fixer};
use crate::run::{TestInput, TestOutcome};
use crate::trace::render::{TraceEntry, TraceReport};
use crate::trace::units::UnitMap;
use crate::trace::{Level, TraceRequest, TracerKind};

/// Trace the first failing test, get verdicts, regenerate.
pub(super) async fn round(r: &mut Round<'_>) -> Result<Option<String>, AgentError> {
    let Some(failing) = r.first_failure() else {
        return Ok(None);
    };
    r.phase(Phase::Tracing);
    let t = Instant::now();
    let traced = traced_failure(r.fixer, &r.tested.program, failing).await?;
    r.iteration.timings.trace_ms = ms(t.elapsed());
    r.iteration.traced_test = Some(failing.test.describe());
    let level = r.fixer.options.level;
    let TracedFailure {
        trace: trace_text,
        labels,
        result: failing_result,
        ..
    } = traced;
    r.iteration.trace = Some(trace_text.clone());
    let mut vars = r.failure_vars(failing, &failing_result);
    vars["unit_name"] = unit_name(level).into();
    vars["trace"] = trace_text.into();
    vars["labels"] = labels.clone().into();

    let fixer = r.fixer;
    let prompts = &fixer.prompts;
    let mut conv = r.conversation()?;
    conv.user(prompts.render("debug", &vars)?);
    let traced_ok = !labels.is_empty();
    if traced_ok {
        r.phase(Phase::Debugging);
        let outcome = conv.ask_verdicts(&*fixer.debugger, &labels, prompts).await;
        r.iteration.calls = conv.calls.clone();
        let (verdicts, problem) = outcome?;
        r.iteration.verdicts = verdicts;
        r.iteration.verdict_problem = problem;
    } else {
        r.iteration.verdict_problem = Some("no trace, so no verdicts were asked for".into());
    }
    let wrong: Vec<_> = r
        .iteration
        .verdicts
        .iter()
        .filter(|v| !v.correct)
        .cloned()
        .collect();
    let regen = prompts.render(
        "regenerate",
        serde_json::json!({ "feedback": "verdicts", "wrong_blocks": wrong, "traced": traced_ok }),
    )?;
    if traced_ok {
        conv.user(regen);
    } else if let Some(last) = conv.messages.last_mut() {
        // No verdict exchange: one message carries the context and the request.
        last.content = format!("{}\n{}", last.content.trim_end(), regen);
    }
    r.regenerate(conv).await
}

/// A failing test's trace as the debugger sees it.
pub(in crate::repair) struct TracedFailure {
    /// The sampled trace, or why there is none.
    pub trace: String,
    /// Labels of the traced units (empty when there is no trace).
    pub labels: Vec<String>,
    /// How the traced run ended, for the prompt.
    pub result: String,
    /// Source line ranges of each labelled step, in label order.
    pub step_lines: Vec<Vec<(u32, u32)>>,
}

/// Trace `failing` on `program` and render it at the fixer's level.
pub(in crate::repair) async fn traced_failure(
    fixer: &Fixer,
    program: &str,
    failing: &TestOutcome,
) -> Result<TracedFailure, AgentError> {
    Ok(match trace(fixer, program, &failing.test).await? {
        Traced::Trace(outcome, report) => {
            let outcome = *outcome;
            let steps = report.entries.iter().filter_map(|e| match e {
                TraceEntry::Step(s) => Some(s),
                TraceEntry::Omitted { .. } => None,
            });
            TracedFailure {
                labels: steps.clone().map(|s| s.label.clone()).collect(),
                step_lines: steps.map(|s| s.lines.clone()).collect(),
                trace: report.to_text(),
                result: result_text(&outcome),
            }
        }
        Traced::Untraceable(reason) => TracedFailure {
            trace: reason.to_string(),
            labels: Vec::new(),
            result: result_text(failing),
            step_lines: Vec::new(),
        },
    })
}

pub(in crate::repair) fn unit_name(level: Level) -> &'static str {
    match level {
        Level::Line => "line",
        Level::Block => "block",
        Level::Function => "function call",
    }
}

/// What tracing one test gave: the run and its trace, or why there is no trace (the prompt then
/// says so in the trace's place).
enum Traced {
    Trace(Box<TestOutcome>, TraceReport),
    Untraceable(NoTrace),
}

/// Why a test could not be traced.
#[derive(Debug, thiserror::Error)]
enum NoTrace {
    #[error("the program does not parse (line {line}: {message})")]
    Unparsable { line: u32, message: String },
    #[error("the run ended before the tracer could report ({0})")]
    NoReport(String),
    #[error("no {unit} of the program ran before the test ended ({summary})")]
    NothingRan { unit: &'static str, summary: String },
}

/// Run `test` traced. `Err` only for failures of the backend or the sandbox.
async fn trace(fixer: &Fixer, program: &str, test: &TestInput) -> Result<Traced, AgentError> {
    let options = &fixer.options;
    let src = SourceFile::new(program.to_string());
    let cfg = match ProgramCfg::build(&src) {
        Ok(cfg) => cfg,
        Err(e) => {
            return Ok(Traced::Untraceable(NoTrace::Unparsable {
                line: e.line,
                message: e.message,
            }))
        }
    };
    // A snippet run after a prefix (`--make-runnable`) is a script too: its module-level code
    // is what runs.
    let script = matches!(test, TestInput::Io { .. }) || fixer.runner.prelude().is_some();
    let units = UnitMap::build(&cfg, options.level, script, src.line_count());
    let sample = options.sample;
    let wall = fixer.runner.sandbox().limits().wall_ms;
    let request = TraceRequest {
        scopes: units.scopes().to_vec(),
        keep_first: sample.head,
        keep_last: sample.tail,
        value_chars: options.value_chars,
        tracer: TracerKind::Native,
        deadline_ms: wall.saturating_mul(8) / 10,
    };
    let runner = fixer.runner.clone();
    let program = program.to_string();
    let test = test.clone();
    let outcome = tokio::task::spawn_blocking(move || runner.run(&program, &test, Some(request)))
        .await
        .map_err(|e| AgentError::Internal(format!("trace worker thread: {e}")))??;
    let Some(raw) = outcome.trace.clone() else {
        return Ok(Traced::Untraceable(NoTrace::NoReport(outcome.summary)));
    };
    if raw.instances.is_empty() {
        return Ok(Traced::Untraceable(NoTrace::NothingRan {
            unit: match options.level {
                Level::Line => "line",
                Level::Block => "block",
                Level::Function => "function",
            },
            summary: outcome.summary,
        }));
    }
    let report = TraceReport::build(&raw, &units, &src, &sample);
    Ok(Traced::Trace(Box::new(outcome), report))
}
