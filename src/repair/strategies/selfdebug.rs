//! Self-Debugging (Chen et al. 2023), the two "rubber duck" variants LDB is compared with: the
//! model explains the program line by line (+Expl) or dry-runs it by hand on the failing test
//! (+Trace), then fixes it in the same conversation. No real execution trace is shown: that is
//! exactly what LDB adds.

use crate::repair::progress::Phase;
use crate::repair::record::CallPurpose;
use crate::repair::strategies::{result_text, Round};
use crate::repair::AgentError;

/// What the model is asked to produce before the fix.
#[derive(Debug, Clone, Copy)]
pub(super) enum Feedback {
    /// What each line does (+Expl).
    Explanation,
    /// A hand-made trace of the failing test with variable values (+Trace).
    DryRun,
}

impl Feedback {
    fn template(self) -> &'static str {
        match self {
            Feedback::Explanation => "selfdebug_expl",
            Feedback::DryRun => "selfdebug_trace",
        }
    }

    /// The call's purpose in the report, and the `feedback` value of `prompts/regenerate.j2`.
    fn purpose(self) -> CallPurpose {
        match self {
            Feedback::Explanation => CallPurpose::Explain,
            Feedback::DryRun => CallPurpose::DryRun,
        }
    }

    fn phase(self) -> Phase {
        match self {
            Feedback::Explanation => Phase::Explaining,
            Feedback::DryRun => Phase::DryRunning,
        }
    }
}

/// Ask for the explanation (or dry run), then for the fixed program.
pub(super) async fn round(
    r: &mut Round<'_>,
    feedback: Feedback,
) -> Result<Option<String>, AgentError> {
    let Some(failing) = r.first_failure() else {
        return Ok(None);
    };
    if matches!(feedback, Feedback::DryRun) {
        r.iteration.traced_test = Some(failing.test.describe());
    }
    let fixer = r.fixer;
    let vars = r.failure_vars(failing, &result_text(failing));
    let mut conv = r.conversation()?;
    conv.user(fixer.prompts.render(feedback.template(), &vars)?);
    r.phase(feedback.phase());
    let reply = conv.ask(&*fixer.debugger, feedback.purpose(), None).await;
    r.iteration.calls = conv.calls.clone();
    r.iteration.explanation = Some(reply?);
    conv.user(fixer.prompts.render(
        "regenerate",
        serde_json::json!({ "feedback": feedback.purpose().name() }),
    )?);
    r.regenerate(conv).await
}
