//! Fault localisation from execution: which statements of a failing program are most likely
//! wrong. The stage between the runner and the repair proposers: `ldb locate` prints it, and the
//! repair search edits the program at the top of its ranking first.
//!
//! Every test runs once under the tracer in coverage mode ([`observe`]); the runs' outcomes and
//! the statements each executed give a spectrum, ranked by Ochiai plus the statement a failing
//! run raised in ([`spectrum`]). More runs than the visible tests can be added by the caller: an
//! extra input judged by what independent candidates agree on is one more passing or failing
//! run. When every run fails, Ochiai cannot tell the executed statements apart, and the raise
//! and the tie rule ([`TieBreak`]) rank them.

pub mod coverage;
pub mod observe;
pub mod project;
pub mod spectrum;

use serde::Serialize;

pub use coverage::{unexercised, Unexercised};
pub use observe::{observe, Observable};
pub use spectrum::{
    ochiai, rank, rank_blocks, rank_with, Observation, Signals, Statement, Suspect, TieBreak,
};

use crate::run::sandbox::SandboxError;
use crate::run::{Runner, TestInput, TestOutcome};

/// Why a program could not be localised.
#[derive(Debug, thiserror::Error)]
pub enum LocateError {
    #[error("the program does not parse (line {line}: {message})")]
    Syntax { line: u32, message: String },
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
}

/// The ranking of one program on one set of runs.
#[derive(Debug, Clone, Serialize)]
pub struct Localisation {
    pub statements: Vec<Statement>,
    /// Most suspicious first; only statements some failing run executed.
    pub suspects: Vec<Suspect>,
    /// `(scope, block)` by their most suspicious statement.
    pub blocks: Vec<(usize, usize)>,
    pub passed_runs: usize,
    pub failed_runs: usize,
    /// What decided the order among statements with the same spectrum.
    pub tie_rule: TieBreak,
}

impl Localisation {
    /// First lines of the ranked statements.
    pub fn lines(&self) -> Vec<u32> {
        self.suspects
            .iter()
            .map(|s| self.statements[s.stmt].first)
            .collect()
    }

    /// Spectra rank nothing: no run passed, so only raises and the tie rule order the
    /// statements.
    pub fn spectrum_blind(&self) -> bool {
        self.passed_runs == 0
    }
}

/// Rank `observations` of `program`.
pub fn localise_runs(
    program: &Observable,
    observations: &[Observation],
    signals: &Signals,
) -> Localisation {
    let suspects = rank(&program.statements, observations, signals);
    let blocks = rank_blocks(&program.statements, &suspects);
    Localisation {
        statements: program.statements.clone(),
        blocks,
        suspects,
        passed_runs: observations.iter().filter(|o| o.passed).count(),
        failed_runs: observations.iter().filter(|o| !o.passed).count(),
        tie_rule: signals.tie,
    }
}

/// Run `tests` on `program` under coverage and rank its statements; the outcomes come back
/// too (they are the tests' results).
pub fn localise(
    runner: &Runner,
    program: &str,
    tests: &[TestInput],
    signals: &Signals,
) -> Result<(Localisation, Vec<TestOutcome>), LocateError> {
    let observable = observable(runner, program, tests)?;
    let outcomes = observe(runner, &observable, tests)?;
    let observations: Vec<Observation> = outcomes
        .iter()
        .map(|o| observable.observation(o, o.passed()))
        .collect();
    Ok((localise_runs(&observable, &observations, signals), outcomes))
}

/// `program` ready to observe under `tests` (a script when the tests feed standard input or the
/// runner runs a prelude).
pub(crate) fn observable(
    runner: &Runner,
    program: &str,
    tests: &[TestInput],
) -> Result<Observable, LocateError> {
    let script =
        tests.iter().any(|t| matches!(t, TestInput::Io { .. })) || runner.prelude().is_some();
    Observable::new(program, script).map_err(|e| LocateError::Syntax {
        line: e.line,
        message: e.message,
    })
}
