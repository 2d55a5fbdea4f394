//! Observing runs for localisation: each test runs once in the sandbox under the tracer in
//! coverage mode (statement units, no variables read), which gives its outcome, the statements
//! it executed and the statement its exception came from.

use std::collections::HashMap;

use super::spectrum::{Observation, Statement};
use crate::python::cfg::{BlockKind, ProgramCfg, ScopeKind};
use crate::python::source::{SourceFile, SyntaxError};
use crate::run::sandbox::SandboxError;
use crate::run::{in_parallel, Runner, TestInput, TestOutcome};
use crate::trace::units::UnitMap;
use crate::trace::{Level, TraceRequest, TracerKind};

/// A program ready to be observed: its statements and the tracer's unit table.
#[derive(Debug, Clone)]
pub struct Observable {
    pub text: String,
    pub statements: Vec<Statement>,
    units: UnitMap,
    /// Unit id → statement index.
    by_unit: HashMap<u32, usize>,
    /// Statement index by first line, for exceptions.
    by_line: Vec<Option<usize>>,
}

impl Observable {
    /// The statements of `program`'s functions (and, for a script, its module code).
    pub fn new(program: &str, script: bool) -> Result<Observable, SyntaxError> {
        let src = SourceFile::new(program.to_string());
        let cfg = ProgramCfg::build(&src)?;
        let units = UnitMap::build(&cfg, Level::Line, script, src.line_count());
        let mut statements = Vec::new();
        let mut by_unit = HashMap::new();
        let mut by_line = vec![None; src.line_count() as usize + 2];
        for id in 1..=units.len() as u32 {
            let Some(info) = units.get(id) else { continue };
            let (Some(block), Some(k)) = (info.block, info.stmt) else {
                continue;
            };
            let Some(scope) = cfg.scopes.get(info.scope) else {
                continue;
            };
            let Some(b) = scope.block(block).filter(|b| b.kind == BlockKind::Code) else {
                continue;
            };
            let Some(stmt) = b.stmts.get(k) else { continue };
            let index = statements.len();
            statements.push(Statement {
                first: stmt.first,
                last: stmt.last,
                scope: info.scope,
                block,
                kind: stmt.kind,
                function: if scope.kind == ScopeKind::Module {
                    "<module>".into()
                } else {
                    scope.name.clone()
                },
            });
            by_unit.insert(id, index);
            for line in stmt.first..=stmt.last {
                if let Some(slot @ None) = by_line.get_mut(line as usize) {
                    *slot = Some(index);
                }
            }
        }
        Ok(Observable {
            text: program.to_string(),
            statements,
            units,
            by_unit,
            by_line,
        })
    }

    /// The statement owning `line`.
    pub fn at_line(&self, line: u32) -> Option<usize> {
        self.by_line.get(line as usize).copied().flatten()
    }

    fn request(&self, wall_ms: u64) -> TraceRequest {
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

    /// What `outcome` (a run under [`Self::request`]) executed and where it raised; `passed`
    /// says how the run is judged.
    pub fn observation(&self, outcome: &TestOutcome, passed: bool) -> Observation {
        let mut covered: Vec<usize> = outcome
            .trace
            .as_ref()
            .map(|t| {
                t.reached_units
                    .iter()
                    .filter_map(|id| self.by_unit.get(id).copied())
                    .collect()
            })
            .unwrap_or_default();
        covered.sort_unstable();
        covered.dedup();
        let raised = outcome
            .exception
            .as_ref()
            .and_then(|e| e.program_line)
            .and_then(|l| self.at_line(l));
        let callers = outcome
            .exception
            .as_ref()
            .map(|e| {
                e.program_callers
                    .iter()
                    .filter_map(|&l| self.at_line(l))
                    .collect()
            })
            .unwrap_or_default();
        Observation {
            passed,
            covered,
            raised,
            callers,
        }
    }
}

/// Run every test on the program under the coverage tracer, in parallel; outcomes in test
/// order.
pub fn observe(
    runner: &Runner,
    program: &Observable,
    tests: &[TestInput],
) -> Result<Vec<TestOutcome>, SandboxError> {
    let wall = runner.sandbox().limits().wall_ms;
    let results = in_parallel(tests, runner.jobs(), |t| {
        runner.run(&program.text, t, Some(program.request(wall)))
    });
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(SandboxError::Pipe(std::io::Error::other("not run")))))
        .collect()
}
