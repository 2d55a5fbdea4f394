//! Progress of a fix run, reported through a small trait the CLI implements (stderr lines or
//! spinners); library code never prints.

use crate::run::TestStatus;

/// What the loop is doing right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Seeding,
    Testing,
    Tracing,
    Debugging,
    /// Self-Debugging +Expl: the model explains the program.
    Explaining,
    /// Self-Debugging +Trace: the model dry-runs the program.
    DryRunning,
    /// Repeated sampling: a fresh program is generated.
    Resampling,
    Regenerating,
    /// Search: candidates are being proposed and tested.
    Proposing,
    /// Search: visible-passing candidates run on extra inputs.
    Selecting,
}

impl Phase {
    pub fn label(self) -> &'static str {
        match self {
            Phase::Seeding => "getting a seed program",
            Phase::Testing => "running visible tests",
            Phase::Tracing => "tracing a failing test",
            Phase::Debugging => "asking for block verdicts",
            Phase::Explaining => "asking for a line-by-line explanation",
            Phase::DryRunning => "asking for a dry run of a failing test",
            Phase::Resampling => "sampling a fresh program",
            Phase::Regenerating => "regenerating the program",
            Phase::Proposing => "proposing and testing candidates",
            Phase::Selecting => "comparing passing candidates on extra inputs",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum ProgressEvent {
    Phase {
        task_id: String,
        iteration: usize,
        phase: Phase,
    },
    Tested {
        task_id: String,
        iteration: usize,
        /// The search's candidate number (several are tested per round); `None` for a chain.
        candidate: Option<usize>,
        passed: usize,
        total: usize,
        first_failure: Option<(TestStatus, String)>,
    },
    Tokens {
        task_id: String,
        prompt: u64,
        completion: u64,
        /// Of these (prompt and completion), those of calls answered from the on-disk response
        /// cache.
        replayed: u64,
    },
    Notice {
        task_id: String,
        message: String,
    },
    /// What a step did, for a person following one run (a benchmark's log leaves it out).
    Step {
        task_id: String,
        message: String,
    },
    Finished {
        task_id: String,
        status: String,
        passed: usize,
        total: usize,
        /// Of `total`, the project's regression tests (tests that passed before).
        regression: usize,
        /// Of `passed`, the regression tests.
        regression_passed: usize,
    },
}

pub trait Progress: Send + Sync {
    fn event(&self, event: ProgressEvent);
}

/// Reports nothing.
pub struct Silent;

impl Progress for Silent {
    fn event(&self, _event: ProgressEvent) {}
}
