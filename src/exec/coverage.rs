//! Running a snippet after a prefix in the sandbox, with statement coverage from the tracer.
//!
//! The prefix runs first as the sandbox's prelude, in the snippet's namespace and under its own
//! file name, so every line number the tracer reports is a line of the snippet as given. The
//! statements of the snippet are the line-level units of its CFG (module code, function and
//! class bodies); a statement is *covered* when one of its executions finished without raising
//! (a statement that ends the run through `exit()` counts as finished). Statements CPython
//! compiles to nothing — function docstrings, `global`, `nonlocal` — are left out, since no run
//! can reach them.

use std::collections::{BTreeSet, HashMap};

use rustpython_parser::ast::{self, Stmt};
use serde::Serialize;

use super::Snippet;
use crate::python::cfg::{ProgramCfg, StmtKind};
use crate::python::source::{parse_module, SourceFile, SyntaxError};
use crate::run::sandbox::SandboxError;
use crate::run::{Runner, TestInput, TestOutcome, TestStatus};
use crate::trace::units::UnitMap;
use crate::trace::{Level, RawTrace, TraceRequest, TracerKind};

/// Python that, put before a prefix, gives every module that cannot be imported a stand-in
/// (`--allow-missing`).
const STANDINS: &str = include_str!("standins.py");
/// What the stand-in finder prints on stderr for each module it stands in for.
const STANDIN_MARK: &str = "ldb-exec: stand-in module ";

/// One statement of the snippet: its lines (inclusive) and kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Statement {
    pub first: u32,
    pub last: u32,
    pub kind: StmtKind,
}

/// The statements of a snippet and the trace request that measures their coverage.
#[derive(Debug, Clone)]
pub struct Statements {
    pub list: Vec<Statement>,
    units: UnitMap,
    /// Unit id → index in `list`.
    by_unit: HashMap<u32, usize>,
    line_count: u32,
}

impl Statements {
    pub fn build(src: &SourceFile) -> Result<Self, SyntaxError> {
        let cfg = ProgramCfg::build(src)?;
        let suite = parse_module(src)?;
        let mut silent = BTreeSet::new();
        no_code_lines(&suite, src, false, &mut silent);
        let units = UnitMap::build(&cfg, Level::Line, true, src.line_count());
        let mut list = Vec::new();
        let mut by_unit = HashMap::new();
        for id in 1..=units.len() as u32 {
            let Some(info) = units.get(id) else { continue };
            let Some(&(first, last)) = info.lines.first() else {
                continue;
            };
            // A statement sharing its line with an earlier one (`if x: y()`) never gets a line
            // event of its own: the owner of the line stands for both.
            let owns_line = units
                .scopes()
                .iter()
                .any(|s| s.units.get(first as usize) == Some(&id));
            if silent.contains(&first) || !owns_line {
                continue;
            }
            let kind = info
                .block
                .and_then(|b| {
                    let scope = cfg.scopes.get(info.scope)?;
                    let block = scope.graph.node_weights().find(|blk| blk.number == b)?;
                    block.stmts.get(info.stmt?).map(|s| s.kind)
                })
                .unwrap_or(StmtKind::Simple);
            by_unit.insert(id, list.len());
            list.push(Statement { first, last, kind });
        }
        Ok(Statements {
            list,
            units,
            by_unit,
            line_count: src.line_count(),
        })
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn line_count(&self) -> u32 {
        self.line_count
    }

    /// A request that records coverage only (no instances, no variable reads).
    pub fn trace_request(&self, wall_ms: u64) -> TraceRequest {
        TraceRequest {
            scopes: self.units.scopes().to_vec(),
            keep_first: 0,
            keep_last: 0,
            value_chars: 8,
            tracer: TracerKind::Native,
            // Stop a little before the parent's kill so the coverage survives a hang.
            deadline_ms: wall_ms.saturating_mul(8) / 10,
        }
    }

    /// Statement indices finished / reached in `trace`.
    fn coverage(&self, trace: &RawTrace) -> (BTreeSet<usize>, BTreeSet<usize>) {
        let map = |ids: &[u32]| -> BTreeSet<usize> {
            ids.iter()
                .filter_map(|id| self.by_unit.get(id).copied())
                .collect()
        };
        (map(&trace.finished_units), map(&trace.reached_units))
    }

    /// The statement owning `line`, if any.
    pub fn at_line(&self, line: u32) -> Option<usize> {
        self.list
            .iter()
            .position(|s| s.first <= line && line <= s.last)
    }
}

/// Lines of statements that compile to no bytecode: function docstrings, `global`, `nonlocal`.
fn no_code_lines(body: &[Stmt], src: &SourceFile, function: bool, out: &mut BTreeSet<u32>) {
    let line = |s: &Stmt| src.line_of_offset(u32::from(ast::Ranged::range(s).start()));
    for (i, stmt) in body.iter().enumerate() {
        let docstring = i == 0
            && function
            && matches!(stmt, Stmt::Expr(e) if matches!(&*e.value, ast::Expr::Constant(c) if c.value.is_str()));
        if docstring || matches!(stmt, Stmt::Global(_) | Stmt::Nonlocal(_)) {
            out.insert(line(stmt));
        }
        // A function's body may open with a docstring; no other block's does.
        let function = matches!(stmt, Stmt::FunctionDef(_) | Stmt::AsyncFunctionDef(_));
        for nested in crate::python::walk::child_bodies(stmt) {
            no_code_lines(nested, src, function, out);
        }
    }
}

/// How one run of prefix + snippet ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Ending {
    /// The snippet ran to its end (or ended itself with `exit()`).
    Finished,
    /// The snippet raised; `line` is the snippet line of its innermost frame.
    SnippetError {
        error: String,
        message: String,
        line: Option<u32>,
        /// When the error came out of a function the prefix defined: the prefix line the
        /// snippet called into.
        prefix_line: Option<u32>,
    },
    /// The prefix raised before the snippet started; `line` is a line of the prefix.
    PrefixError {
        error: String,
        message: String,
        line: Option<u32>,
    },
    /// The time limit stopped the run.
    Timeout,
    /// The run died or the sandbox failed (memory, signal, output flood, ...).
    Crashed { summary: String },
}

impl Ending {
    pub fn finished(&self) -> bool {
        matches!(self, Ending::Finished)
    }

    /// The error's class name, if the run raised.
    pub fn error(&self) -> Option<&str> {
        match self {
            Ending::SnippetError { error, .. } | Ending::PrefixError { error, .. } => Some(error),
            _ => None,
        }
    }

    /// The file a `FileNotFoundError` names, if that is how the run ended.
    pub fn missing_file(&self) -> Option<String> {
        let (Ending::SnippetError { error, message, .. }
        | Ending::PrefixError { error, message, .. }) = self
        else {
            return None;
        };
        if error != "FileNotFoundError" {
            return None;
        }
        // "[Errno 2] No such file or directory: 'data.json'"
        let name = message
            .rsplit(": ")
            .next()?
            .trim_matches(|c| c == '\'' || c == '"');
        (!name.is_empty()).then(|| name.to_string())
    }

    /// A module `import` could not find, if that is how the run ended.
    pub fn missing_module(&self) -> Option<String> {
        let (Ending::SnippetError { error, message, .. }
        | Ending::PrefixError { error, message, .. }) = self
        else {
            return None;
        };
        if error != "ModuleNotFoundError" {
            return None;
        }
        let name = message.split('\'').nth(1)?;
        Some(name.to_string())
    }
}

/// What one run of prefix + snippet did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Execution {
    pub ending: Ending,
    /// Statement indices (into [`Statements::list`]) that finished at least once.
    #[serde(skip)]
    pub finished: BTreeSet<usize>,
    /// Statement indices entered at least once.
    #[serde(skip)]
    pub reached: BTreeSet<usize>,
    /// Modules the stand-in finder stood in for (`--allow-missing`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stand_ins: Vec<String>,
    pub elapsed_ms: u64,
}

/// The sandbox prelude for `prefix`: with `allow_missing`, the stand-in finder goes first.
/// Also returns how many lines come before the prefix's own.
pub fn prelude_for(prefix: &str, allow_missing: bool) -> (String, u32) {
    if allow_missing {
        let head = format!("{}\n", STANDINS.trim_end());
        let offset = head.lines().count() as u32;
        (format!("{head}{prefix}"), offset)
    } else {
        (prefix.to_string(), 0)
    }
}

/// Run `prefix` + snippet once in the sandbox. With `allow_missing`, modules that cannot be
/// imported get stand-ins; otherwise importing one is an error like any other.
pub fn execute(
    runner: &Runner,
    snippet: &str,
    statements: &Statements,
    prefix: &str,
    allow_missing: bool,
) -> Result<Execution, SandboxError> {
    let (prelude, offset) = prelude_for(prefix, allow_missing);
    let wall = runner.sandbox().limits().wall_ms;
    let describe = TestInput::Code {
        source: "# the snippet runs as a script".into(),
    };
    let outcome = runner.run_script(
        snippet,
        Some(&prelude),
        Some(statements.trace_request(wall)),
        &describe,
    )?;
    Ok(interpret(outcome, statements, offset))
}

fn interpret(outcome: TestOutcome, statements: &Statements, offset: u32) -> Execution {
    let (finished, reached) = outcome
        .trace
        .as_ref()
        .map(|t| statements.coverage(t))
        .unwrap_or_default();
    let stand_ins = outcome
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix(STANDIN_MARK))
        .map(|m| m.trim().to_string())
        .collect();
    let prefix_line =
        |line: Option<u32>| line.and_then(|l| l.checked_sub(offset)).filter(|&l| l > 0);
    let ending = match outcome.status {
        TestStatus::Passed | TestStatus::Exited => Ending::Finished,
        TestStatus::Timeout => Ending::Timeout,
        TestStatus::Error | TestStatus::Failed | TestStatus::MemoryLimit => {
            match &outcome.exception {
                Some(e) if e.program_line.is_none() && e.prelude_line.is_some() => {
                    Ending::PrefixError {
                        error: e.kind.clone(),
                        message: e.message.clone(),
                        line: prefix_line(e.prelude_line),
                    }
                }
                Some(e) => Ending::SnippetError {
                    error: e.kind.clone(),
                    message: e.message.clone(),
                    line: e.program_line,
                    prefix_line: prefix_line(e.prelude_line),
                },
                None => Ending::Crashed {
                    summary: outcome.summary.clone(),
                },
            }
        }
        TestStatus::OutputLimit
        | TestStatus::Crashed
        | TestStatus::SandboxFailure
        // pytest outcomes; a snippet's run has none.
        | TestStatus::Skipped
        | TestStatus::XFailed => {
            Ending::Crashed {
                summary: outcome.summary.clone(),
            }
        }
    };
    // `exit()` in the prefix ends the run before the snippet starts.
    let ending = match ending {
        Ending::Finished if reached.is_empty() && !statements.is_empty() => Ending::PrefixError {
            error: "SystemExit".into(),
            message: "the prefix ended the run before the snippet started".into(),
            line: None,
        },
        other => other,
    };
    // A prefix that never let the snippet start covers nothing, whatever it traced.
    let (finished, reached) = if matches!(ending, Ending::PrefixError { .. }) {
        (BTreeSet::new(), BTreeSet::new())
    } else {
        (finished, reached)
    };
    Execution {
        ending,
        finished,
        reached,
        stand_ins,
        elapsed_ms: outcome.elapsed_ms,
    }
}

/// Coverage of one statement, for the per-line view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LineStatus {
    /// Finished at least once.
    Covered,
    /// Started, but every execution raised.
    Raised,
    /// Never started.
    NotReached,
}

impl LineStatus {
    pub fn mark(self) -> char {
        match self {
            LineStatus::Covered => '+',
            LineStatus::Raised => '!',
            LineStatus::NotReached => '-',
        }
    }
}

/// Status of every statement over a set of executions (a union).
pub fn statement_status<'a>(
    statements: &Statements,
    runs: impl IntoIterator<Item = &'a Execution> + Clone,
) -> Vec<LineStatus> {
    (0..statements.len())
        .map(|i| {
            let mut status = LineStatus::NotReached;
            for run in runs.clone() {
                if run.finished.contains(&i) {
                    return LineStatus::Covered;
                }
                if run.reached.contains(&i) {
                    status = LineStatus::Raised;
                }
            }
            status
        })
        .collect()
}

/// Covered statements over a set of executions, and the fraction of all statements.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CoverageFigure {
    pub covered: usize,
    pub total: usize,
    /// 0..=1; a snippet without statements counts as fully covered.
    pub fraction: f64,
}

impl CoverageFigure {
    pub fn of(covered: usize, total: usize) -> Self {
        CoverageFigure {
            covered,
            total,
            fraction: if total == 0 {
                1.0
            } else {
                covered as f64 / total as f64
            },
        }
    }
}

/// A short description of how a run ended.
pub fn short_ending(ending: &Ending) -> String {
    match ending {
        Ending::Finished => "finished".into(),
        Ending::SnippetError { error, line, .. } => match line {
            Some(l) => format!("{error} at line {l}"),
            None => error.clone(),
        },
        Ending::PrefixError { error, line, .. } => match line {
            Some(l) => format!("{error} in the prefix, line {l}"),
            None => format!("{error} in the prefix"),
        },
        Ending::Timeout => "timeout".into(),
        Ending::Crashed { summary } => format!("crashed ({summary})"),
    }
}

/// The snippet with `# uncovered` after the last line of every statement not in `covered`.
pub fn annotate_uncovered(snippet: &Snippet, covered: &BTreeSet<usize>) -> String {
    let mut marked = BTreeSet::new();
    for (i, s) in snippet.statements.list.iter().enumerate() {
        if !covered.contains(&i) {
            // The last line ends the statement, so a comment there is never inside a string.
            marked.insert(s.last);
        }
    }
    snippet
        .text
        .trim_end()
        .lines()
        .enumerate()
        .map(|(i, line)| {
            if marked.contains(&(i as u32 + 1)) {
                format!("{line} # uncovered")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
