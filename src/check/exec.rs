//! Exec mode: run the program once in the sandbox under the tracer, at statement granularity,
//! and report what happened: the exception (class, message, line), the CFG blocks in the order
//! they ran and the variables after each.
//!
//! Before the run, [`prepare`] adds what a snippet leaves out: standard-library imports for its
//! free names (with `--incomplete`) and, for a `return` outside every function (a function body
//! pasted as is), a rewrite to an exception the report reads as a normal end. Both keep every
//! line where it is, so lines and blocks refer to the program as given.

use std::collections::HashMap;

use super::{
    block_label, BlockStep, CheckError, CheckOptions, CheckReport, Mode, Program, RuntimeErrorKind,
    Source, VarState,
};
use crate::python::names::free::{self as names, NameFacts};
use crate::python::source::parse_module;
use crate::python::stdlib::{self, AddedImport};
use crate::run::sandbox::ExceptionInfo;
use crate::run::{Runner, TestInput, TestOutcome, TestStatus};
use crate::trace::units::UnitMap;
use crate::trace::{Level, RawTrace, TraceRequest, TracerKind};

/// The exception a module-level `return` is rewritten to raise; never a name of the program's.
pub const RETURN_SIGNAL: &str = "__ldb_return__";

/// Statement instances kept from the start and from the end of a run.
const KEEP_FIRST: usize = 4000;
const KEEP_LAST: usize = 1000;

/// The program as it will run, and what was done to it.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The text that runs: the program, with module-level `return`s rewritten.
    pub program: String,
    /// Run first, in the program's globals: added imports, the return signal.
    pub prelude: Option<String>,
    pub imports: Vec<AddedImport>,
    pub unresolved: Vec<String>,
    pub facts: NameFacts,
    pub notes: Vec<String>,
}

/// Analyse names and rewrite what must be rewritten for `program` to run as given.
pub fn prepare(program: &Program, incomplete: bool) -> Prepared {
    let facts = parse_module(&program.source)
        .map(|suite| names::analyse(&program.source, &suite))
        .unwrap_or_default();
    let mut notes = program.notes.clone();
    let mut prelude = String::new();
    let (imports, unresolved) = if incomplete {
        let r = stdlib::resolve(&facts.free);
        (r.imports, r.unresolved)
    } else {
        (
            Vec::new(),
            facts.free.iter().map(|f| f.name.clone()).collect(),
        )
    };
    prelude.push_str(&stdlib::prelude(&imports));
    // A conventional alias of a third-party module (`np`) is tried too: where the module is
    // importable (`--python-path`) the snippet runs on; elsewhere the guarded import leaves the
    // name unbound and it stays unresolved, as without it.
    let tried: Vec<AddedImport> = unresolved
        .iter()
        .filter(|_| incomplete)
        .filter_map(|name| stdlib::third_party_import(name))
        .collect();
    if !tried.is_empty() {
        prelude.push_str(&stdlib::prelude(&tried));
    }
    let mut text = program.text().to_string();
    if !facts.module_returns.is_empty() {
        // Back to front, so earlier offsets stay valid.
        for r in facts.module_returns.iter().rev() {
            let has_value = text
                .get(r.keyword_end..r.end)
                .is_some_and(|v| !v.trim().is_empty());
            let value = text.get(r.keyword_end..r.end).unwrap_or("").to_string();
            let replacement = if has_value {
                format!("raise {RETURN_SIGNAL}({value})")
            } else {
                format!("raise {RETURN_SIGNAL}()")
            };
            text.replace_range(r.start..r.end, &replacement);
        }
        prelude.push_str(&format!(
            "class {RETURN_SIGNAL}(BaseException):\n    pass\n"
        ));
        let lines: Vec<String> = facts
            .module_returns
            .iter()
            .map(|r| r.line.to_string())
            .collect();
        notes.push(format!(
            "`return` outside a function (line {}): read as a function body, where it ends the \
             run; Python itself refuses such a file with a SyntaxError",
            lines.join(", ")
        ));
    }
    Prepared {
        program: text,
        prelude: (!prelude.is_empty()).then_some(prelude),
        imports,
        unresolved,
        facts,
        notes,
    }
}

/// How a run ended, as far as `ldb check` cares.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEnd {
    /// Ran to the end (or a module-level `return`).
    Finished,
    /// `sys.exit(code)`.
    Exited(i64),
    Raised(ExceptionInfo),
    /// Did not finish within the time limit.
    Timeout,
    /// Stopped by the memory limit.
    Memory,
    /// Killed for another reason (signal, output flood).
    Killed(String),
}

/// One traced run.
#[derive(Debug, Clone)]
pub struct ExecRun {
    pub end: RunEnd,
    pub steps: Vec<BlockStep>,
    pub omitted: u64,
    /// The scope and block the run stopped in (where it raised, or the last one).
    pub last: Option<(usize, usize)>,
    /// Every kept statement instance, in order (for continuing a run from one of them).
    pub statements: Vec<StmtRecord>,
    pub notes: Vec<String>,
}

/// One statement instance of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct StmtRecord {
    /// Index of its visit in [`ExecRun::steps`].
    pub step: usize,
    pub line: u32,
    /// Variables just before it ran.
    pub before: Vec<VarState>,
    /// It raised the exception that left its frame.
    pub raised: bool,
}

/// Run `prepared` with `stdin` (none: stdin is closed) under the tracer.
pub fn run(
    runner: &Runner,
    program: &Program,
    prepared: &Prepared,
    stdin: Option<&str>,
    value_chars: usize,
) -> Result<ExecRun, CheckError> {
    let units = UnitMap::build(&program.cfg, Level::Line, true, program.source.line_count());
    let wall_ms = runner.sandbox().limits().wall_ms;
    let request = TraceRequest {
        scopes: units.scopes().to_vec(),
        keep_first: KEEP_FIRST,
        keep_last: KEEP_LAST,
        value_chars,
        tracer: TracerKind::Native,
        // Stop a little before the parent's kill, so the trace survives.
        deadline_ms: wall_ms.saturating_mul(8) / 10,
    };
    let test = TestInput::Io {
        stdin: stdin.unwrap_or("").to_string(),
        stdout: String::new(),
    };
    let prelude = prepared.prelude.as_deref();
    let traced = runner.run_with_prelude(&prepared.program, prelude, &test, Some(request))?;
    let raw = traced.trace.clone().unwrap_or_default();
    let mut notes = Vec::new();
    let outcome = if raw.deadline_hit {
        // Tracing slows a program down; the real outcome comes from a run without it.
        notes.push(format!(
            "the traced run reached the tracer's deadline after {} steps; the outcome below \
             comes from a second run without tracing",
            raw.total_instances
        ));
        runner.run_with_prelude(&prepared.program, prelude, &test, None)?
    } else {
        traced
    };
    let end = run_end(&outcome)?;
    if let RunEnd::Exited(code) = end {
        notes.push(format!("the program called sys.exit({code})"));
    }
    let (steps, statements, last) = steps_of(&raw, &units, program);
    let omitted = raw
        .total_instances
        .saturating_sub(raw.instances.len() as u64);
    Ok(ExecRun {
        end,
        steps,
        omitted,
        last,
        statements,
        notes,
    })
}

fn run_end(outcome: &TestOutcome) -> Result<RunEnd, CheckError> {
    Ok(match outcome.status {
        // pytest outcomes (skipped, xfailed) do not occur here; they ran to an end.
        TestStatus::Passed | TestStatus::Failed | TestStatus::Skipped | TestStatus::XFailed => {
            RunEnd::Finished
        }
        TestStatus::Exited => match outcome.exit_code {
            Some(code) => RunEnd::Exited(code),
            None => RunEnd::Finished,
        },
        TestStatus::Error => match &outcome.exception {
            Some(e) if e.kind == RETURN_SIGNAL => RunEnd::Finished,
            Some(e) => RunEnd::Raised(e.clone()),
            None => RunEnd::Killed(outcome.summary.clone()),
        },
        TestStatus::Timeout => RunEnd::Timeout,
        TestStatus::MemoryLimit => RunEnd::Memory,
        TestStatus::OutputLimit | TestStatus::Crashed => RunEnd::Killed(outcome.summary.clone()),
        TestStatus::SandboxFailure => {
            return Err(CheckError::SandboxFailure(outcome.summary.clone()))
        }
    })
}

/// Group statement instances into block visits: consecutive statements of one block in one
/// frame are one visit (calls in between do not end it; a loop always passes another block).
fn steps_of(
    raw: &RawTrace,
    units: &UnitMap,
    program: &Program,
) -> (Vec<BlockStep>, Vec<StmtRecord>, Option<(usize, usize)>) {
    let mut steps: Vec<BlockStep> = Vec::new();
    let mut statements = Vec::new();
    // Per frame: the open visit (index into `steps`) and its block.
    let mut open: HashMap<u64, (usize, usize, usize)> = HashMap::new();
    let mut expected_seq = 0u64;
    let mut last = None;
    let vars = |v: &[crate::trace::Var]| -> Vec<VarState> {
        v.iter()
            .map(|v| VarState {
                name: v.name.clone(),
                value: v.value.clone(),
            })
            .collect()
    };
    for inst in &raw.instances {
        if inst.seq != expected_seq {
            // The middle of a long run was not kept: visits do not continue across the gap.
            open.clear();
        }
        expected_seq = inst.seq + 1;
        let Some(info) = units.get(inst.unit) else {
            continue;
        };
        let (Some(block), scope) = (info.block, info.scope) else {
            continue;
        };
        let state = vars(inst.after.as_deref().unwrap_or(&inst.before));
        let step = match open.get(&inst.frame) {
            Some(&(idx, s, b)) if s == scope && b == block => {
                if let Some(step) = steps.get_mut(idx) {
                    step.lines.push(inst.line);
                    step.state = state;
                }
                idx
            }
            _ => {
                open.insert(inst.frame, (steps.len(), scope, block));
                steps.push(BlockStep {
                    block: block_label(&program.cfg, scope, block),
                    scope,
                    number: block,
                    lines: vec![inst.line],
                    state,
                    source: Source::Executed,
                });
                steps.len() - 1
            }
        };
        statements.push(StmtRecord {
            step,
            line: inst.line,
            before: vars(&inst.before),
            raised: inst.raised.is_some(),
        });
        last = Some((scope, block));
    }
    (steps, statements, last)
}

/// Exec mode: run and report.
pub fn check(
    runner: &Runner,
    program: &Program,
    options: &CheckOptions,
) -> Result<CheckReport, CheckError> {
    let prepared = prepare(program, options.incomplete);
    let run = run(
        runner,
        program,
        &prepared,
        options.stdin.as_deref(),
        options.value_chars,
    )?;
    let mut report = report_of(program, &prepared, &run, Mode::Exec);
    if options.stdin.is_none() && prepared.facts.reads_input() {
        report.notes.push(
            "the program reads standard input and none was given (--stdin FILE): it ran with \
             an empty input"
                .into(),
        );
    }
    Ok(report)
}

/// The report of a run.
pub fn report_of(program: &Program, prepared: &Prepared, run: &ExecRun, mode: Mode) -> CheckReport {
    let mut report = CheckReport {
        file: program.name.clone(),
        mode,
        is_error: false,
        error_class: None,
        message: None,
        line: None,
        block: None,
        source: Source::Executed,
        block_trace: run.steps.clone(),
        omitted_steps: run.omitted,
        added_imports: prepared
            .imports
            .iter()
            .map(|i| i.statement.clone())
            .collect(),
        unresolved_names: prepared.unresolved.clone(),
        predicted_because: None,
        notes: prepared.notes.clone(),
        usage: None,
        model_reply: None,
    };
    report.notes.extend(run.notes.iter().cloned());
    let last_label = run.last.map(|(s, b)| block_label(&program.cfg, s, b));
    match &run.end {
        RunEnd::Finished | RunEnd::Exited(_) => {}
        RunEnd::Raised(e) => {
            report.is_error = true;
            report.error_class = Some(RuntimeErrorKind::from_exception(&e.kind, &e.message));
            report.message = Some(e.message.clone());
            report.line = e.program_line;
            // The block that owns the line in the frame that raised; a compile error has none.
            report.block = match (e.program_line, run.last) {
                (Some(line), Some((scope, _))) => program
                    .cfg
                    .scope_line_owner(scope, line)
                    .map(|o| block_label(&program.cfg, scope, o.block))
                    .or(last_label),
                _ => None,
            };
        }
        RunEnd::Timeout => {
            report.is_error = true;
            report.error_class = Some(RuntimeErrorKind::Timeout);
            report.message = Some("the run did not finish within the time limit".into());
            report.block = last_label;
            report.line = run.steps.last().and_then(|s| s.lines.last().copied());
        }
        RunEnd::Memory => {
            report.is_error = true;
            report.error_class = Some(RuntimeErrorKind::MemoryError);
            report.message = Some("stopped at the memory limit".into());
            report.block = last_label;
            report.line = run.steps.last().and_then(|s| s.lines.last().copied());
        }
        RunEnd::Killed(why) => {
            report.is_error = true;
            report.error_class = Some(RuntimeErrorKind::Other);
            report.message = Some(why.clone());
            report.block = last_label;
            report.line = run.steps.last().and_then(|s| s.lines.last().copied());
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_returns_are_rewritten_in_place() {
        let p = Program::new("s.py", b"x = 1\nif x:\n    return x + 1  # done\nreturn\n").unwrap();
        let prep = prepare(&p, false);
        assert_eq!(
            prep.program,
            "x = 1\nif x:\n    raise __ldb_return__( x + 1)  # done\nraise __ldb_return__()\n"
        );
        assert_eq!(prep.program.lines().count(), p.text().lines().count());
        assert!(prep
            .prelude
            .unwrap()
            .contains("class __ldb_return__(BaseException)"));
        assert_eq!(prep.notes.len(), 1);
    }

    #[test]
    fn snippets_get_imports_and_programs_do_not() {
        let p = Program::new("s.py", b"print(gcd(4, 6), np.zeros(3))\n").unwrap();
        let snippet = prepare(&p, true);
        assert_eq!(snippet.imports.len(), 1);
        assert_eq!(snippet.unresolved, ["np"]);
        let prelude = snippet.prelude.unwrap();
        assert!(prelude.contains("from math import gcd"));
        assert!(prelude.contains("try:\n    import numpy as np\nexcept ImportError:"));
        let whole = prepare(&p, false);
        assert!(whole.imports.is_empty() && whole.prelude.is_none());
        assert_eq!(whole.unresolved, ["gcd", "np"]);
    }
}
