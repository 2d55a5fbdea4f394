//! The proposers' prompts: a fresh program from the task, a repair from the failing visible
//! tests, and LDB's repair (trace the first failing test, ask for verdicts, then for a fix).

use std::time::Instant;

use crate::generate::reply::verdicts::Verdict;
use crate::repair::conversation::Conversation;
use crate::repair::progress::Phase;
use crate::repair::search::{Judged, Search};
use crate::repair::strategies::ldb::{traced_failure, unit_name};
use crate::repair::{ms, seed, AgentError};

impl Search<'_> {
    pub(super) fn conversation(&self) -> Result<Conversation, AgentError> {
        let mut conv = Conversation::new(&self.fixer.prompts)?;
        conv.temperature = self.fixer.options.temperature;
        Ok(conv)
    }

    /// Shared context of a repair prompt: the task, the parent program, every visible result
    /// (a failure with actual vs expected, or the exception and the line that raised it).
    pub(super) fn context_vars(&self, parent: usize) -> serde_json::Value {
        let tested = &self.node(parent).tested;
        context_vars(self.task, &tested.program, &tested.outcomes)
    }

    pub(super) fn feedback_conversation(&self, parent: usize) -> Result<Conversation, AgentError> {
        let mut conv = self.conversation()?;
        conv.user(
            self.fixer
                .prompts
                .render("repair_feedback", self.context_vars(parent))?,
        );
        Ok(conv)
    }

    pub(super) fn fresh_conversation(&self) -> Result<Conversation, AgentError> {
        let mut conv = self.conversation()?;
        conv.user(seed::request(self.task, &self.fixer.prompts)?);
        if self.fixer.options.prefill {
            conv.reply_prefix = seed::reply_prefix(self.task);
        }
        Ok(conv)
    }

    /// The LDB exchange for `parent` (trace, verdicts), ending with the request for a fix; made
    /// once per parent. `None` when the parent passes every test.
    pub(super) async fn ldb_conversation(
        &mut self,
        parent: usize,
    ) -> Result<Option<Conversation>, AgentError> {
        if !self.memo.judged.contains_key(&parent) {
            match self.judge(parent).await? {
                Some(judged) => self.memo.judged.insert(parent, judged),
                // The budget cannot pay for the verdicts and a repair.
                None => return Ok(None),
            };
        }
        let Some(judged) = self.memo.judged.get(&parent).cloned() else {
            return Ok(None);
        };
        if self.round.trace.is_none() {
            self.round.trace = Some(judged.clone());
        }
        let wrong: Vec<&Verdict> = judged.verdicts.iter().filter(|v| !v.correct).collect();
        let traced = !judged.calls.is_empty();
        let mut conv = self.conversation()?;
        conv.messages = judged.messages.clone();
        let regen = self.fixer.prompts.render(
            "regenerate",
            serde_json::json!({ "feedback": "verdicts", "wrong_blocks": wrong, "traced": traced }),
        )?;
        if judged.calls.is_empty() {
            // No verdict exchange: one message carries the context and the request.
            if let Some(last) = conv.messages.last_mut() {
                last.content = format!("{}\n{}", last.content.trim_end(), regen);
            }
        } else {
            conv.user(regen);
        }
        Ok(Some(conv))
    }

    /// Trace the parent's first failing test and ask for verdicts (greedy, constrained);
    /// `None` when what is left of the budget cannot pay for the verdicts and one repair.
    pub(super) async fn judge(&mut self, parent: usize) -> Result<Option<Judged>, AgentError> {
        let fixer = self.fixer;
        let (program, failing) = {
            let tested = &self.node(parent).tested;
            let failing = tested
                .outcomes
                .iter()
                .find(|o| !o.passed() && !o.test.is_guard())
                .cloned();
            (tested.program.clone(), failing)
        };
        // Only regression tests fail (or none): nothing a prompt may show to judge by.
        let Some(failing) = failing else {
            return Ok(None);
        };
        self.phase(Phase::Tracing);
        let t = Instant::now();
        let traced = traced_failure(fixer, &program, &failing).await?;
        let trace_ms = ms(t.elapsed());
        let mut vars = self.context_vars(parent);
        vars["failing_test"] = failing.test.prompt_text().into();
        vars["failing_result"] = traced.result.clone().into();
        vars["unit_name"] = unit_name(fixer.options.level).into();
        vars["trace"] = traced.trace.clone().into();
        vars["labels"] = traced.labels.clone().into();
        let mut conv = self.conversation()?;
        conv.temperature = 0.0;
        let form = self.options.verdicts;
        let template = match form {
            crate::generate::reply::VerdictForm::Full => "debug",
            crate::generate::reply::VerdictForm::Short => "debug_short",
        };
        if traced.labels.is_empty() {
            // Only the full form's template says that there is no trace.
            conv.user(fixer.prompts.render("debug", &vars)?);
        } else {
            conv.user(fixer.prompts.render(template, &vars)?);
        }
        let mut judged = Judged {
            messages: Vec::new(),
            traced_test: failing.test.describe(),
            trace: traced.trace.clone(),
            verdicts: Vec::new(),
            problem: None,
            calls: Vec::new(),
            trace_ms,
        };
        if traced.labels.is_empty() {
            judged.problem = Some("no trace, so no verdicts were asked for".into());
        } else {
            let verdict_reply = match form {
                crate::generate::reply::VerdictForm::Full => 45 * traced.labels.len() as u64,
                crate::generate::reply::VerdictForm::Short => 60,
            };
            // The regeneration after the verdicts re-sends all of it: only its request and
            // reply are new.
            let cost = self.estimate(&conv.messages) + verdict_reply + 40 + self.reply_estimate();
            if !self.fits(cost) {
                return Ok(None);
            }
            self.phase(Phase::Debugging);
            let outcome = match form {
                crate::generate::reply::VerdictForm::Full => {
                    conv.ask_verdicts(&*fixer.debugger, &traced.labels, &fixer.prompts)
                        .await
                }
                crate::generate::reply::VerdictForm::Short => {
                    conv.ask_first_wrong(&*fixer.debugger, &traced.labels).await
                }
            };
            judged.calls = std::mem::take(&mut conv.calls);
            // The verdict calls are paid once, when the parent is judged.
            self.charge(&judged.calls.clone());
            let (verdicts, problem) = outcome?;
            judged.verdicts = verdicts;
            judged.problem = problem;
            self.remember(&conv.messages);
        }
        judged.messages = conv.messages;
        Ok(Some(judged))
    }
}

/// The task, the program and every visible result, as the repair prompts show them.
pub(crate) fn context_vars(
    task: &crate::task::Task,
    program: &str,
    outcomes: &[crate::run::TestOutcome],
) -> serde_json::Value {
    let summary: Vec<String> = outcomes
        .iter()
        .filter(|o| !o.test.is_guard())
        .map(|o| {
            // Skipped and xfailed pytest nodes say so (nothing to fix there either).
            if o.status == crate::run::TestStatus::Passed {
                format!("PASS `{}`", o.test.describe())
            } else {
                failure_line(o, program)
            }
        })
        .chain(crate::run::guards_line(outcomes))
        .collect();
    serde_json::json!({
        "task_prompt": task.prompt,
        "program": crate::repair::shown_program(task, program).trim_end(),
        "test_summary": summary,
    })
}

/// One failing test for a repair prompt: the result, and for an exception the line it came from.
fn failure_line(outcome: &crate::run::TestOutcome, program: &str) -> String {
    let mut line = format!(
        "{} `{}`: {}",
        outcome.status.label(),
        outcome.test.describe(),
        outcome.summary
    );
    if let Some(n) = outcome.exception.as_ref().and_then(|e| e.program_line) {
        if let Some(code) = program.lines().nth((n as usize).saturating_sub(1)) {
            line.push_str(&format!(" — raised at line {n}: `{}`", code.trim()));
        }
    }
    line
}
