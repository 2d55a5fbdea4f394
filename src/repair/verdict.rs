//! Localisation: one verdict request on a failing test's trace, and which block it names as
//! wrong. This is the LDB debugger's core judgement taken alone, so it can be scored on bugs
//! whose location is known (`cargo bench --bench localise`) and its forms compared:
//! - [`VerdictForm::Full`]: a verdict for every block (LDB's form); the block named is the first
//!   one judged wrong;
//! - [`VerdictForm::Short`]: only the first wrong block and one sentence, far fewer tokens;
//! - with or without a grammar: the reply constrained to the JSON schema with the block labels
//!   as an enum, or free text read leniently.

use std::time::Instant;

use serde_json::Value;

use super::conversation::Conversation;
use super::record::CallPurpose;
use super::strategies::ldb::{traced_failure, unit_name};
use super::strategies::test_summary;
use super::{ms, AgentError, Fixer};
use crate::generate::model::JsonSchema;
use crate::generate::reply::short_verdict::{first_wrong_schema, parse_first_wrong};
use crate::generate::reply::verdicts::{parse_verdicts, verdict_schema_for};
pub use crate::generate::reply::VerdictForm;
use crate::run::TestOutcome;
use crate::task::Task;

/// A traced failing test, ready to be judged in any form.
#[derive(Debug, Clone)]
pub struct Traced {
    pub labels: Vec<String>,
    /// Source line ranges of each labelled step, in label order.
    pub step_lines: Vec<Vec<(u32, u32)>>,
    vars: Value,
}

/// What one verdict request gave.
#[derive(Debug, Clone, PartialEq)]
pub struct Localised {
    /// The reply was well-formed: valid JSON of the asked form naming shown labels.
    pub parsed: bool,
    /// The block named as (first) wrong, if any.
    pub named: Option<String>,
    /// Tokens the backend processed.
    pub tokens: u64,
    pub ms: u64,
}

/// Trace `failing` on `program`; `None` when there is no trace to judge.
pub async fn trace(
    fixer: &Fixer,
    task: &Task,
    program: &str,
    outcomes: &[TestOutcome],
    failing: &TestOutcome,
) -> Result<Option<Traced>, AgentError> {
    let traced = traced_failure(fixer, program, failing).await?;
    if traced.labels.is_empty() {
        return Ok(None);
    }
    let vars = serde_json::json!({
        "task_prompt": task.prompt,
        "program": crate::repair::shown_program(task, program).trim_end(),
        "test_summary": test_summary(outcomes),
        "failing_test": failing.test.prompt_text(),
        "failing_result": traced.result,
        "unit_name": unit_name(fixer.options.level),
        "trace": traced.trace,
        "labels": traced.labels,
    });
    Ok(Some(Traced {
        labels: traced.labels,
        step_lines: traced.step_lines,
        vars,
    }))
}

/// Ask for a verdict on `traced` in `form`, with or without the grammar.
pub async fn judge(
    fixer: &Fixer,
    traced: &Traced,
    form: VerdictForm,
    grammar: bool,
) -> Result<Localised, AgentError> {
    let started = Instant::now();
    let mut conv = Conversation::new(&fixer.prompts)?;
    conv.temperature = 0.0;
    let (template, schema) = match form {
        VerdictForm::Full => ("debug", verdict_schema_for(&traced.labels)),
        VerdictForm::Short => ("debug_short", first_wrong_schema(&traced.labels)),
    };
    conv.user(fixer.prompts.render(template, &traced.vars)?);
    let schema = grammar.then(|| JsonSchema {
        name: "block_verdict".into(),
        schema,
    });
    let reply = conv
        .ask(&*fixer.debugger, CallPurpose::Localise, schema)
        .await?;
    let tokens = conv.calls.iter().map(|c| c.cost()).sum();
    let (parsed, named) = match form {
        VerdictForm::Full => match parse_verdicts(&reply, &traced.labels) {
            Ok(p) => {
                let well_formed = !p.lenient && p.unknown.is_empty() && !p.verdicts.is_empty();
                // The first block, in trace order, judged wrong.
                let named = traced
                    .labels
                    .iter()
                    .find(|l| p.verdicts.iter().any(|v| &v.block == *l && !v.correct))
                    .cloned();
                (well_formed, named)
            }
            Err(_) => (false, None),
        },
        VerdictForm::Short => match parse_first_wrong(&reply, &traced.labels) {
            Some(found) => (found.well_formed, Some(found.block)),
            None => (false, None),
        },
    };
    Ok(Localised {
        parsed,
        named,
        tokens,
        ms: ms(started.elapsed()),
    })
}
