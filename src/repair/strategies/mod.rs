//! The ways a failing program is improved in one round, one file per strategy, all called from
//! the common loop in [`crate::repair::Fixer`] with the same runner, models and budget.
//!
//! What they share lives here: the failure context every feedback prompt starts from (task,
//! program, visible test results with actual vs expected), and the regeneration step that turns a
//! conversation into a new program.

pub(super) mod ldb;
mod resample;
mod selfdebug;

use crate::repair::conversation::Conversation;
use crate::repair::progress::{Phase, Progress, ProgressEvent};
use crate::repair::record::CallPurpose;
use crate::repair::record::IterationReport;
use crate::repair::{AgentError, Fixer, Strategy, Tested};
use crate::run::{TestOutcome, TestStatus};
use crate::task::Task;

/// Everything one round may read or record.
pub(super) struct Round<'a> {
    pub fixer: &'a Fixer,
    pub task: &'a Task,
    pub tested: &'a Tested,
    pub iteration: &'a mut IterationReport,
    pub progress: &'a dyn Progress,
}

/// Improve the program of `round` with `strategy`. Returns the next program, if one was produced.
pub(super) async fn improve(
    strategy: Strategy,
    round: &mut Round<'_>,
) -> Result<Option<String>, AgentError> {
    match strategy {
        // The loop gives `None` no rounds; this arm only keeps the match total.
        Strategy::None => Ok(None),
        Strategy::Ldb => ldb::round(round).await,
        Strategy::SelfdebugExpl => selfdebug::round(round, selfdebug::Feedback::Explanation).await,
        Strategy::SelfdebugTrace => selfdebug::round(round, selfdebug::Feedback::DryRun).await,
        Strategy::Resample => resample::round(round).await,
        // The search has a loop of its own (`repair::search`) and never reaches here.
        Strategy::Search => Ok(None),
    }
}

impl<'a> Round<'a> {
    pub fn phase(&self, phase: Phase) {
        self.progress.event(ProgressEvent::Phase {
            task_id: self.task.task_id.clone(),
            iteration: self.iteration.index,
            phase,
        });
    }

    /// The first failing visible test (the one feedback is about).
    pub fn first_failure(&self) -> Option<&'a TestOutcome> {
        self.tested
            .outcomes
            .iter()
            .find(|o| !o.passed() && !o.test.is_guard())
    }

    /// A conversation with the system prompt, at the debugging temperature.
    pub fn conversation(&self) -> Result<Conversation, AgentError> {
        let mut conv = Conversation::new(&self.fixer.prompts)?;
        conv.temperature = self.fixer.options.temperature;
        Ok(conv)
    }

    /// Variables of the shared failure context (`prompts/context.j2`) plus the failing test and
    /// its result. Only visible tests appear here.
    pub fn failure_vars(&self, failing: &TestOutcome, failing_result: &str) -> serde_json::Value {
        serde_json::json!({
            "task_prompt": self.task.prompt,
            "program": crate::repair::shown_program(self.task, &self.tested.program).trim_end(),
            "test_summary": test_summary(&self.tested.outcomes),
            "failing_test": failing.test.prompt_text(),
            "failing_result": failing_result,
        })
    }

    /// Ask the debugger for the fixed program, the request already being the last message of
    /// `conv`; record the calls and any problem with the reply.
    pub async fn regenerate(
        &mut self,
        mut conv: Conversation,
    ) -> Result<Option<String>, AgentError> {
        self.phase(Phase::Regenerating);
        let outcome = conv
            .ask_program(
                &*self.fixer.debugger,
                &self.task.entry_point,
                CallPurpose::Regenerate,
                CallPurpose::RepairProgram,
                &self.fixer.prompts,
            )
            .await;
        self.iteration.calls = conv.calls;
        let (program, problem) = outcome?;
        self.iteration.regeneration_problem = problem;
        Ok(program)
    }
}

/// One line per visible test: PASS, or the status with actual vs expected.
pub(super) fn test_summary(outcomes: &[TestOutcome]) -> Vec<String> {
    outcomes
        .iter()
        .filter(|o| !o.test.is_guard())
        .map(|o| {
            // Skipped and xfailed pytest nodes say so (nothing to fix there either).
            if o.status == crate::run::TestStatus::Passed {
                format!("PASS `{}`", o.test.describe())
            } else {
                format!(
                    "{} `{}`: {}",
                    o.status.label(),
                    o.test.describe(),
                    o.summary
                )
            }
        })
        .chain(crate::run::guards_line(outcomes))
        .collect()
}

/// How a test run ended, for a prompt: "it passed" or "FAIL (got 2, expected 4)".
pub(super) fn result_text(outcome: &TestOutcome) -> String {
    match outcome.status {
        TestStatus::Passed => "it passed".into(),
        _ => format!("{} ({})", outcome.status.label(), outcome.summary),
    }
}
