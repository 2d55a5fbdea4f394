//! What a run reports while it goes and what it returns.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::eval::fix::results::TaskRecord;
use crate::eval::fix::{EvalError, StrategySpec};
use crate::generate::model::SharedModel;
use crate::run::Runner;

/// What runs it: the models and the sandboxed runner.
#[derive(Clone)]
pub struct EvalEnv {
    pub generator: SharedModel,
    pub debugger: SharedModel,
    pub runner: Runner,
    /// The templates of every strategy's prompts (the plan's `prompts_dir`, loaded).
    pub prompts: crate::generate::prompts::Prompts,
}

/// Progress of one strategy over the selected tasks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub strategy: String,
    pub done: usize,
    pub selected: usize,
    /// Finished tasks whose final program passes the hidden tests.
    pub passed: usize,
    pub seed_passed: usize,
    /// Finished tasks whose seed fails the hidden tests and whose final program passes them.
    pub fixed: usize,
    pub errors: usize,
}

/// What a run reports while it goes.
#[derive(Debug, Clone)]
pub enum EvalEvent {
    Notice(String),
    /// Records found in a results file from an earlier run.
    Resumed {
        file: PathBuf,
        records: usize,
    },
    /// The seed phase starts: `total` seeds to get.
    SeedsStarted {
        total: usize,
    },
    SeedDone {
        task_id: String,
        visible_pass: bool,
        error: Option<String>,
    },
    /// The debugging phase starts: `total` (task, strategy) runs to do.
    DebugStarted {
        total: usize,
        tallies: Vec<Tally>,
    },
    /// What a task is doing now.
    Activity {
        task_id: String,
        strategy: String,
        text: String,
    },
    /// Tokens just spent.
    Tokens {
        prompt: u64,
        completion: u64,
    },
    TaskDone {
        record: Box<TaskRecord>,
        tallies: Vec<Tally>,
    },
}

/// Receives [`EvalEvent`]s (the CLI draws a progress bar).
pub trait EvalProgress: Send + Sync {
    fn event(&self, event: EvalEvent);
}

/// Reports nothing.
pub struct QuietEval;

impl EvalProgress for QuietEval {
    fn event(&self, _event: EvalEvent) {}
}

/// What a run did.
#[derive(Debug)]
pub struct EvalOutcome {
    /// Task ids selected, in order.
    pub selected: Vec<String>,
    pub seeds_file: PathBuf,
    /// Each strategy's results file.
    pub files: Vec<(StrategySpec, PathBuf)>,
    /// Records of the selected tasks by strategy label (earlier runs' included).
    pub records: HashMap<String, Vec<TaskRecord>>,
    /// Set when the run stopped early; the results so far are intact.
    pub stopped: Option<EvalError>,
}
