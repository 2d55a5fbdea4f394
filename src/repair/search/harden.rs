//! A given program that passes the visible tests can still be wrong where they do not look. Run
//! on the visible tests' calls with one list, tuple or string argument emptied (the input
//! hand-written tests most often leave out), it may raise an error no correct program raises
//! there: an index out of range on an empty list, a name bound only on some paths. Such a raise
//! is a failing test without an expected answer. So is a `None` from falling off the end of a
//! function that answers something else elsewhere and never returns `None` on purpose (a loop an
//! empty argument never enters): there it owes the empty value of its answers' type (`0`, `[]`).
//!
//! The raise is reported. Unless `--no-harden`, `mutate` then edits the program (its single
//! edits, and a guard `if not p: return EMPTY` against an empty argument) until it no longer
//! raises that error on those inputs (an answer or another error will do: the input may be
//! outside the task), or answers what it owes, while it answers every other extra input as
//! before (the given program is evidence: a person's program that passes the visible tests is
//! mostly right), and the given program stops counting as passing or as a vote. An edit is a
//! small change at the statements the raising runs single out; with no such edit the program is
//! kept as it was.

use std::time::Instant;

use crate::python::edits::guard::{answers_none_only_by_falling_off, empty_like, guards};
use crate::repair::progress::ProgressEvent;
use crate::repair::search::mutate::Derived;
use crate::repair::search::select;
use crate::repair::search::{emptied_inputs, extra_inputs, Proposer, Search};
use crate::repair::{ms, AgentError};
use crate::run::{in_parallel, TestInput, TestOutcome, TestStatus};

/// Errors a correct program does not raise on an input of the types its tests use; the others
/// (`ValueError`, `AssertionError`, ...) are often how a program rejects an input on purpose.
const UNEXPECTED: &[&str] = &[
    "AttributeError",
    "IndexError",
    "KeyError",
    "NameError",
    "RecursionError",
    "TypeError",
    "UnboundLocalError",
    "ZeroDivisionError",
];

/// Whether `outcome` is an unexpected raise inside `program` (not one of its own `raise` or
/// `assert` statements).
pub(super) fn raises_unexpectedly(outcome: &TestOutcome, program: &str) -> bool {
    let Some(e) = outcome.exception.as_ref() else {
        return false;
    };
    if outcome.status != TestStatus::Error || !UNEXPECTED.contains(&e.kind.as_str()) {
        return false;
    }
    let Some(line) = e.program_line else {
        return false;
    };
    let text = program
        .lines()
        .nth((line as usize).saturating_sub(1))
        .unwrap_or("");
    !raises_on_purpose(text)
}

/// Whether a source line is a `raise` or `assert` statement (not `raised = ...`).
fn raises_on_purpose(line: &str) -> bool {
    let text = line.trim_start();
    ["raise", "assert"].iter().any(|k| {
        text.strip_prefix(k)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '(', '\t']))
    })
}

impl Search<'_> {
    /// The seed passes the visible tests: look for extra inputs it raises on and say so, and
    /// with `edit` edit it there (see the module's overview).
    pub(super) async fn harden(&mut self, edit: bool) -> Result<(), AgentError> {
        // Raises count only on the visible calls with one sequence emptied: elsewhere the
        // changed inputs are often malformed (a record inside a list emptied), and a correct
        // program raises on them too. The selection's extra inputs hold the other answers.
        let mut inputs = emptied_inputs(self.tests, &self.task.entry_point);
        let emptied = inputs.len();
        for call in extra_inputs(
            self.tests,
            &self.task.entry_point,
            self.options.extra_inputs,
            self.fixer.options.rng_seed,
        ) {
            if !inputs.contains(&call) {
                inputs.push(call);
            }
        }
        if inputs.is_empty() {
            return Ok(());
        }
        let calls: Vec<TestInput> = inputs
            .iter()
            .map(|expr| TestInput::Call { expr: expr.clone() })
            .collect();
        let program = self.seed_program.clone();
        let runner = self.fixer.runner.clone();
        // An input the program loops on costs a few seconds at most.
        let quick = runner.with_wall_ms(3000);
        let started = Instant::now();
        let (program_run, calls_run) = (program.clone(), calls.clone());
        let outcomes = tokio::task::spawn_blocking(move || {
            in_parallel(&calls_run, runner.jobs(), |c| {
                quick.run(&program_run, c, None)
            })
        })
        .await
        .map_err(|e| AgentError::Internal(format!("extra-input worker thread: {e}")))?;
        self.round_tests_ms += ms(started.elapsed());
        let mut runs = Vec::with_capacity(outcomes.len());
        for o in outcomes {
            match o {
                Some(Ok(o)) => runs.push(o),
                // Only a check of a program that already passes: a sandbox failure here must
                // not fail the task.
                Some(Err(_)) | None => return Ok(()),
            }
        }
        // `None` on an emptied argument is no answer when the program answers something else
        // elsewhere and can return `None` only by falling off its end. The answer it owes
        // there is the empty value of the type it answers with (the insertion point in an
        // empty sequence is 0, its matches `[]`); for a truth value either may be right.
        let empty = runs
            .iter()
            .filter(|o| o.status == TestStatus::Passed)
            .find_map(|o| o.actual.as_deref().and_then(empty_like));
        let falls_off =
            empty.is_some() && answers_none_only_by_falling_off(&program, &self.task.entry_point);
        let owed = match empty {
            Some(v) if v != "False" => format!("= {v}"),
            _ => select::SOME_ANSWER.to_string(),
        };
        let mut expected = Vec::with_capacity(calls.len());
        // The suspicious inputs, with what the program did there.
        let mut raising: Vec<(String, String)> = Vec::new();
        for (i, (call, o)) in inputs.iter().zip(&runs).enumerate() {
            let raises = raises_unexpectedly(o, &program);
            if i >= emptied && raises {
                // A raise elsewhere is no answer to keep, nor (see above) a bug to fix.
                expected.push(select::ANY.to_string());
            } else if raises {
                let kind = o.exception.as_ref().map_or("?", |e| e.kind.as_str());
                raising.push((call.clone(), format!("raises {kind}")));
                expected.push(select::anything_but(&select::behaviour(o)));
            } else if i < emptied && falls_off && select::behaviour(o) == "= None" {
                raising.push((call.clone(), "falls off its end (None)".to_string()));
                expected.push(owed.clone());
            } else {
                expected.push(select::behaviour(o));
            }
        }
        let Some((call, kind)) = raising.first().cloned() else {
            return Ok(());
        };
        let more = match raising.len() {
            1 => String::new(),
            n => format!(" (and on {} more)", n - 1),
        };
        if !edit {
            let hint = if self.options.harden {
                "(edits that avoid it need `mutate` in the portfolio)"
            } else {
                "(edits that avoid it are tried unless --no-harden)"
            };
            self.progress.event(ProgressEvent::Notice {
                task_id: self.task.task_id.clone(),
                message: format!(
                    "the program passes the visible tests but {kind} on `{call}`{more}, \
                     an input made from them; check that this input is outside the task {hint}"
                ),
            });
            return Ok(());
        }
        // A guard against an empty argument, returning the empty value of the type the
        // program answers with elsewhere: the fix single edits cannot make.
        let guards = empty
            .map(|empty| guards(&program, &self.task.entry_point, empty))
            .unwrap_or_default();
        let derived = Derived { calls, expected };
        let found = self.mutate_with(0, Some(&derived), guards).await?;
        let message = if found.is_empty() {
            format!(
                "the program passes the visible tests but {kind} on `{call}`{more}, an \
                 input made from them; no single edit avoids it and keeps its other answers, so \
                 it is kept"
            )
        } else {
            // It raised where an edit answers: no longer a passing program, nor a vote.
            self.passing.retain(|&id| id != 0);
            if let Some(seed) = self
                .candidates
                .first_mut()
                .filter(|c| c.proposer == Proposer::Seed)
            {
                seed.problem = Some(format!("{kind} on `{call}`{more}"));
            }
            format!(
                "the program passes the visible tests but {kind} on `{call}`{more}, an \
                 input made from them; {} edit(s) avoid it and keep its other answers",
                found.len()
            )
        };
        self.progress.event(ProgressEvent::Notice {
            task_id: self.task.task_id.clone(),
            message,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::raises_on_purpose;

    #[test]
    fn only_raise_and_assert_statements_raise_on_purpose() {
        assert!(raises_on_purpose("    raise IndexError('empty')"));
        assert!(raises_on_purpose("raise"));
        assert!(raises_on_purpose("  assert(xs)"));
        assert!(!raises_on_purpose("    raised = xs[0]"));
        assert!(!raises_on_purpose("assertions[i] += 1"));
    }
}
