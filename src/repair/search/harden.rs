//! A given program that passes the visible tests can still be wrong where they do not look. Run
//! on the visible tests' calls with one list, tuple or string argument emptied (the input
//! hand-written tests most often leave out), or with a value taken from the first or last
//! element of a sequence beside it (where a search looks one past the end), it may raise an
//! error no correct program raises there: an index out of range on an empty list, a name bound
//! only on some paths. Such a raise is a failing test without an expected answer. So is a `None`
//! from falling off the end of a function that answers something else elsewhere and never
//! returns `None` on purpose (a loop an empty argument never enters), and on an emptied argument
//! an answer of another type than all its answers elsewhere (`()` where it answers numbers):
//! there it owes the empty value of its answers' type (`0`, `[]`). And where the visible
//! tests' answers are a value's rank in a sorted sequence (`rank`: `search(5, (1, 5, 10)) == 1`),
//! another answer where the tests pin it (a value the sequence holds, one beyond its ends) is
//! wrong: it owes that rank.
//!
//! The raise is reported. With `--rules harden` (off by default), `mutate` then edits the program (its single
//! edits, and a guard `if not p: return EMPTY` against an empty argument) until it no longer
//! raises that error on those inputs (an answer or another error will do: the input may be
//! outside the task; not a name read unbound, never meant), or answers what it owes, while it answers every other extra input as
//! before (the given program is evidence: a person's program that passes the visible tests is
//! mostly right), and the given program stops counting as passing or as a vote. An edit is a
//! small change at the statements the raising runs single out; with no such edit the program is
//! kept as it was.
//!
//! Edits that pass the visible tests get the same check: a slip the visible tests show often
//! sits beside one they do not. One that fails it is set aside when another passes it, and
//! when none does the smallest change is edited again the same way.

use std::time::Instant;

use crate::python::edits::guard::{answers_none_only_by_falling_off, empty_like, guards};
use crate::repair::progress::ProgressEvent;
use crate::repair::search::mutate::Derived;
use crate::repair::search::rank::Rank;
use crate::repair::search::select;
use crate::repair::search::{emptied_inputs, extra_inputs_with, member_inputs, Search};
use crate::repair::{ms, AgentError};
use crate::run::{in_parallel, TestInput, TestOutcome, TestStatus};

/// Whether `outcome` is an unexpected raise inside `program`: a crash (see [`crashes`]) of a
/// kind a correct program does not raise on its inputs.
pub(super) fn raises_unexpectedly(outcome: &TestOutcome, program: &str) -> bool {
    crashes(outcome, program)
        && outcome
            .exception
            .as_ref()
            .is_some_and(|e| UNEXPECTED.contains(&e.kind.as_str()))
}

/// Whether `outcome` is a crash: a raise of any kind inside `program` that none of its own
/// `raise` or `assert` statements meant (a `ValueError` from `list.remove` as much as an index
/// out of range). Not a raise from calling the program wrongly (no program line).
pub(super) fn crashes(outcome: &TestOutcome, program: &str) -> bool {
    let Some(line) = outcome.exception.as_ref().and_then(|e| e.program_line) else {
        return false;
    };
    if outcome.status != TestStatus::Error {
        return false;
    }
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

/// What a program that passes the visible tests does wrong on the inputs made from them.
struct Suspicion {
    /// The inputs, and what an edit must do on each (its other answers kept).
    derived: Derived,
    /// The suspicious inputs, with what the program did there.
    raising: Vec<(String, String)>,
    /// The empty value of the type the program answers with.
    empty: Option<&'static str>,
    /// Slips on values taken from a sequence (or on extra inputs where a rank is owed) left for
    /// a second look (see `edit_away`).
    deferred: bool,
}

impl Suspicion {
    /// "raises IndexError on `f([])` (and on 1 more)".
    fn describe(&self) -> String {
        let Some((call, kind)) = self.raising.first() else {
            return String::new();
        };
        let more = match self.raising.len() {
            1 => String::new(),
            n => format!(" (and on {} more)", n - 1),
        };
        format!("{kind} on `{call}`{more}")
    }
}

/// Whether two behaviours are the same answer, a number written either way (`= 2.0`, `= 2`).
fn same_answer(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let number = |s: &str| s.strip_prefix("= ").and_then(|n| n.parse::<f64>().ok());
    matches!((number(a), number(b)), (Some(x), Some(y)) if x == y)
}

/// A behaviour (`select::behaviour`) as a phrase: "answers `3`", "raises IndexError".
fn what_it_does(behaviour: &str) -> String {
    if let Some(answer) = behaviour.strip_prefix("= ") {
        format!("answers `{answer}`")
    } else if let Some(kind) = behaviour.strip_prefix("raise ") {
        format!("raises {kind}")
    } else {
        behaviour.to_string()
    }
}

/// The kind of value an answer is, for comparing answers' types: numbers (and truth values,
/// which compare equal to them) are one kind, so `0` on an empty list of floats is no mismatch.
fn kind_of(answer: &str) -> Option<&'static str> {
    match empty_like(answer)? {
        "0" | "0.0" | "False" => Some("0"),
        other => Some(other),
    }
}

impl Search<'_> {
    /// Run candidate `id` (which passes the visible tests) on the emptied and the extra
    /// inputs. `None` when it does nothing suspicious there, or the sandbox failed (only a
    /// check of a passing program: that must not fail the task).
    /// With `members_only`, only the values taken from a sequence are probes (a second look
    /// once the emptied arguments are mended: what it does on them now is kept).
    async fn suspicion(
        &mut self,
        id: usize,
        members_only: bool,
    ) -> Result<Option<Suspicion>, AgentError> {
        // Raises count only on the probes, the visible calls with one sequence emptied or with
        // a value taken from the ends of a sequence beside it: elsewhere the changed inputs are
        // often malformed (a record inside a list emptied), and a correct program raises on
        // them too. The selection's extra inputs hold the other answers.
        let mut inputs = emptied_inputs(self.tests, &self.task.entry_point);
        let emptied = inputs.len();
        for call in member_inputs(self.tests, &self.task.entry_point) {
            if !inputs.contains(&call) {
                inputs.push(call);
            }
        }
        let probes = inputs.len();
        if probes == 0 {
            return Ok(None);
        }
        for call in extra_inputs_with(
            self.tests,
            &self.task.entry_point,
            self.options.extra_inputs,
            self.fixer.options.rng_seed,
            self.options.swapped_inputs,
        ) {
            if !inputs.contains(&call) {
                inputs.push(call);
            }
        }
        let calls: Vec<TestInput> = inputs
            .iter()
            .map(|expr| TestInput::Call { expr: expr.clone() })
            .collect();
        let program = self.node(id).tested.program.clone();
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
        self.round.tests_ms += ms(started.elapsed());
        let mut runs = Vec::with_capacity(outcomes.len());
        for o in outcomes {
            match o {
                Some(Ok(o)) => runs.push(o),
                Some(Err(_)) | None => return Ok(None),
            }
        }
        let answers = |range: std::ops::Range<usize>| -> Vec<&str> {
            runs[range]
                .iter()
                .filter(|o| o.status == TestStatus::Passed)
                .filter_map(|o| o.actual.as_deref())
                .filter(|a| empty_like(a).is_some())
                .collect()
        };
        // The type the program answers with, taken away from the probes (where a wrong answer
        // is suspected); one kind of answer there, or none.
        let elsewhere = answers(probes..runs.len());
        let kinds: std::collections::BTreeSet<&str> =
            elsewhere.iter().filter_map(|a| kind_of(a)).collect();
        let one_kind = kinds.len() == 1;
        let empty = match elsewhere.first() {
            Some(a) if one_kind => empty_like(a),
            Some(_) => None,
            None => answers(0..emptied).first().and_then(|a| empty_like(a)),
        };
        // `None` on an emptied argument is no answer when the program answers something else
        // elsewhere and can return `None` only by falling off its end. The answer it owes
        // there is the empty value of the type it answers with (the insertion point in an
        // empty sequence is 0, its matches `[]`); for a truth value either may be right.
        let falls_off =
            empty.is_some() && answers_none_only_by_falling_off(&program, &self.task.entry_point);
        let owed = match empty {
            Some(v) if v != "False" => format!("= {v}"),
            _ => select::SOME_ANSWER.to_string(),
        };
        let probe = |i: usize| i < probes && (i >= emptied || !members_only);
        // Where the visible tests' answers are a value's rank in a sorted sequence, that rank
        // is owed where the tests pin it (`rank`); on an emptied argument looked at already,
        // what the program does there is kept.
        let rank = Rank::from_tests(self.tests, &self.task.entry_point);
        let owed_rank = |i: usize| -> Option<String> {
            if members_only && i < emptied {
                return None;
            }
            rank.as_ref()
                .and_then(|r| r.owed(&inputs[i], &self.task.entry_point))
        };
        let mut expected = Vec::with_capacity(calls.len());
        let mut raising: Vec<(String, String)> = Vec::new();
        for (i, (call, o)) in inputs.iter().zip(&runs).enumerate() {
            let raises = raises_unexpectedly(o, &program);
            // An answer of another type than every answer elsewhere (`()` where the others
            // are numbers): the emptied argument took a path that answers something else.
            let mistyped = i < emptied
                && !members_only
                && one_kind
                && owed != select::SOME_ANSWER
                && o.status == TestStatus::Passed
                && o.actual
                    .as_deref()
                    .and_then(kind_of)
                    .is_some_and(|k| !kinds.contains(k));
            let behaviour = select::behaviour(o);
            if !probe(i) && raises {
                // A raise elsewhere is no answer to keep, nor (see above) a bug to fix; on an
                // emptied argument already looked at it is what the program does there.
                expected.push(if i < probes {
                    behaviour.clone()
                } else {
                    select::ANY.to_string()
                });
            } else if raises {
                let kind = o.exception.as_ref().map_or("?", |e| e.kind.as_str());
                raising.push((call.clone(), format!("raises {kind}")));
                expected.push(select::anything_but(&behaviour));
            } else if probe(i) && falls_off && behaviour == "= None" {
                raising.push((call.clone(), "falls off its end (None)".to_string()));
                // On a value taken from the sequence the answer is not the empty one.
                expected.push(if i < emptied {
                    owed.clone()
                } else {
                    select::SOME_ANSWER.to_string()
                });
            } else if mistyped {
                let answer = o.actual.as_deref().unwrap_or("?");
                raising.push((
                    call.clone(),
                    format!(
                        "answers `{answer}` where it answers like `{}` elsewhere",
                        empty.unwrap_or("?")
                    ),
                ));
                expected.push(owed.clone());
            } else if falls_off && behaviour == "= None" {
                // Falling off the end is no answer to keep either, wherever it happens.
                expected.push(select::ANY.to_string());
            } else {
                expected.push(behaviour.clone());
            }
            // Where a rank is owed it is the answer, in place of a crash's or a `None`'s too:
            // the input is well formed (a sorted sequence of values like the tests'). A raise
            // of the program's own, or no answer in time, is left to the rules above.
            let answered = o.status == TestStatus::Passed || crashes(o, &program);
            if let Some(want) = owed_rank(i).filter(|w| answered && !same_answer(&behaviour, w)) {
                let flagged = raising.last().is_some_and(|(c, _)| c == call);
                if !flagged {
                    raising.push((
                        call.clone(),
                        format!(
                            "{} where the visible tests' answers, the value's rank in the \
                             sorted sequence, give `{}`",
                            what_it_does(&behaviour),
                            want.trim_start_matches("= ")
                        ),
                    ));
                }
                if let Some(last) = expected.last_mut() {
                    *last = want;
                }
            }
        }
        // One thing at a time: single edits (or a guard) mend one slip, so while an emptied
        // argument shows one, a value from the sequence (or an extra input where a rank is
        // owed) may do anything there; `edit_away` looks again once it is mended.
        let mut deferred = false;
        let first_stage = raising
            .iter()
            .filter(|(call, _)| inputs[..emptied].contains(call))
            .count();
        if first_stage > 0 && first_stage < raising.len() {
            for (i, call) in inputs.iter().enumerate().skip(emptied) {
                if let Some(at) = raising.iter().position(|(c, _)| c == call) {
                    raising.remove(at);
                    expected[i] = select::ANY.to_string();
                    deferred = true;
                }
            }
        }
        if raising.is_empty() {
            return Ok(None);
        }
        // On a value from the sequence some answer is owed (the rank's, when one is owed): a
        // `return` added at the end makes one up (the right one comes from the path that
        // missed it).
        let on_members = raising
            .iter()
            .any(|(call, _)| inputs[emptied..probes].contains(call));
        Ok(Some(Suspicion {
            derived: Derived {
                calls,
                expected,
                no_added_return: on_members,
            },
            raising,
            empty,
            deferred,
        }))
    }

    /// Edits of candidate `id` that no longer do what `suspicion` found and keep its other
    /// answers: single edits, and a guard against an empty argument returning the empty value
    /// of the type the program answers with elsewhere (the fix single edits cannot make).
    async fn edit_away(
        &mut self,
        id: usize,
        suspicion: &Suspicion,
    ) -> Result<Vec<usize>, AgentError> {
        let found = self.edit_away_once(id, suspicion).await?;
        if !suspicion.deferred {
            return Ok(found);
        }
        // A second slip shows once the first is mended (an empty sequence guarded, then the
        // last element runs past the end): the smallest mend is checked and edited again.
        let Some(&first) = found.iter().min_by_key(|&&f| self.node(f).diff_lines) else {
            return Ok(found);
        };
        let Some(next) = self.suspicion(first, true).await? else {
            return Ok(found);
        };
        let again = self.edit_away_once(first, &next).await?;
        if again.is_empty() {
            return Ok(found);
        }
        self.set_aside(first, &next);
        // Not checked, while the new ones are known to be better.
        self.passing.retain(|p| !found.contains(p));
        Ok(again)
    }

    /// [`Self::edit_away`], one slip.
    async fn edit_away_once(
        &mut self,
        id: usize,
        suspicion: &Suspicion,
    ) -> Result<Vec<usize>, AgentError> {
        let program = self.node(id).tested.program.clone();
        let guards = suspicion
            .empty
            .map(|empty| guards(&program, &self.task.entry_point, empty))
            .unwrap_or_default();
        self.mutate_with(id, Some(&suspicion.derived), guards).await
    }

    /// Candidate `id` did something suspicious: it stops counting as passing (or as a vote).
    fn set_aside(&mut self, id: usize, suspicion: &Suspicion) {
        self.passing.retain(|&p| p != id);
        if let Some(c) = self.candidates.get_mut(id) {
            c.problem = Some(suspicion.describe());
        }
    }

    /// The seed passes the visible tests: look for extra inputs it raises on and say so, and
    /// with `edit` edit it there (see the module's overview).
    pub(super) async fn harden(&mut self, edit: bool) -> Result<(), AgentError> {
        let Some(suspicion) = self.suspicion(0, false).await? else {
            return Ok(());
        };
        let what = suspicion.describe();
        if !edit {
            let hint = if self.options.harden {
                "(edits that avoid it need `mutate` in the portfolio)"
            } else {
                "(edits that avoid it are tried with --rules harden)"
            };
            self.progress.event(ProgressEvent::Notice {
                task_id: self.task.task_id.clone(),
                message: format!(
                    "the program passes the visible tests but {what}, an input made from them; \
                     check that this input is outside the task {hint}"
                ),
            });
            return Ok(());
        }
        let found = self.edit_away(0, &suspicion).await?;
        let message = if found.is_empty() {
            format!(
                "the program passes the visible tests but {what}, an input made from them; no \
                 single edit avoids it and keeps its other answers, so it is kept"
            )
        } else {
            self.set_aside(0, &suspicion);
            format!(
                "the program passes the visible tests but {what}, an input made from them; {} \
                 edit(s) avoid it and keep its other answers",
                found.len()
            )
        };
        self.progress.event(ProgressEvent::Notice {
            task_id: self.task.task_id.clone(),
            message,
        });
        Ok(())
    }

    /// Edits `found` pass the visible tests: the ones that raise (or fall off their end, or
    /// answer another type) on an emptied argument are set aside when another does not; when
    /// all of them do, the one the search would return (the smallest change) is edited again
    /// like a given program that does. A slip the visible tests show often sits beside one
    /// they do not (an index on an empty list).
    pub(super) async fn harden_edits(&mut self, found: &[usize]) -> Result<(), AgentError> {
        // Each check runs every extra input; edits come most suspicious statement first.
        const CHECKED: usize = 32;
        let (checked, unchecked) = found.split_at(found.len().min(CHECKED));
        let mut suspicious = Vec::new();
        let mut clean = 0;
        for &id in checked {
            match self.suspicion(id, false).await? {
                Some(s) => suspicious.push((id, s)),
                None => clean += 1,
            }
        }
        // The one the search would return: the smallest change, the first found among equals.
        let Some((first, first_suspicion)) = suspicious
            .iter()
            .min_by_key(|(id, _)| self.node(*id).diff_lines)
        else {
            return Ok(());
        };
        let (first, what) = (*first, first_suspicion.describe());
        let fixed = if clean > 0 {
            Vec::new()
        } else {
            self.edit_away(first, first_suspicion).await?
        };
        if clean > 0 || !fixed.is_empty() {
            for (id, s) in &suspicious {
                self.set_aside(*id, s);
            }
            // Not checked, while checked ones are known to be better.
            self.passing.retain(|p| !unchecked.contains(p));
        }
        let others = match suspicious.len() {
            1 => String::new(),
            n => format!(", as do {} other passing edits", n - 1),
        };
        let outcome = if clean > 0 {
            format!("{clean} passing edit(s) do not, so those are kept")
        } else if !fixed.is_empty() {
            format!(
                "{} edit(s) of it avoid that and keep its other answers",
                fixed.len()
            )
        } else {
            "no edit of it avoids that, so they are kept".to_string()
        };
        self.progress.event(ProgressEvent::Step {
            task_id: self.task.task_id.clone(),
            message: format!(
                "harden: candidate {first} passes the visible tests but {what}{others}; {outcome}"
            ),
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
