//! The `complete` proposer: the model writes the functions a parent leaves unwritten.
//!
//! A program handed over half done (a student who wrote one function of three and left the
//! others as `return`, a generator that stubbed a helper) fails because of what is missing,
//! not because of a wrong line, and writing it again from the task throws away what was
//! written; from a terse task the model cannot even do that. Here each placeholder body
//! (`crate::python::unwritten`) is a hole the model fills in the parent's context, the same
//! request `patch` sends with room for a body: the functions already written show it what
//! the names and the data mean. One sample writes every placeholder in turn, each with the
//! bodies before it already written. A body that reads a name nothing defines (the model's
//! `unique_day(day, ...)` in a function without `day`) is drawn again, up to twice: it would
//! raise where it runs, and often no visible test runs it. Nothing happens, and nothing is
//! spent, on a parent without placeholders.

use std::collections::BTreeSet;
use std::time::Instant;

use crate::python::names::undefined::undefined_names;
use crate::python::source::SourceFile;
use crate::python::unwritten::{unwritten, Unwritten};
use crate::repair::progress::ProgressEvent;
use crate::repair::record::EditRecord;
use crate::repair::search::patch::{patch_form, patch_request, request_bytes, sample_patch};
use crate::repair::search::{sample_seed, PatchSite, Proposer, Search};
use crate::repair::{ms, AgentError};

/// What one body costs at most beyond its prompt, in tokens (the request's cap).
const BODY_REPLY_TOKENS: u32 = 160;

/// Draws of a body after the first when the body reads a name nothing defines.
const REDRAWS: usize = 2;

impl Search<'_> {
    /// Whether passing program `id` leaves functions unwritten that `complete` has yet to
    /// write (`finish_passing` does, then drops it from the passing programs if written).
    pub(super) fn awaits_completion(&self, id: usize) -> bool {
        self.options
            .portfolio
            .iter()
            .any(|(p, _)| *p == Proposer::Complete)
            && !self.memo.completed.contains(&id)
            && !unwritten(&self.node(id).tested.program).is_empty()
    }

    /// A program that passes the visible tests and still leaves functions unwritten is not
    /// finished (the visible tests do not run those functions): write them, and when a
    /// written version passes too, the unfinished one stops counting as passing (or, the given
    /// program, as a vote), so that the choice is among finished programs. Once per program;
    /// called where passing programs appear (the given program, after the edits, after each
    /// round), so that it runs before the votes are drawn.
    pub(super) async fn finish_passing(&mut self) -> Result<(), AgentError> {
        let Some(k) = self
            .options
            .portfolio
            .iter()
            .find(|(p, _)| *p == Proposer::Complete)
            .map(|&(_, k)| k)
        else {
            return Ok(());
        };
        let unfinished: Vec<usize> = self
            .passing
            .iter()
            .copied()
            .filter(|&id| self.awaits_completion(id))
            .collect();
        for id in unfinished {
            self.memo.completed.insert(id);
            let before = self.candidates.len();
            self.write(id, k, false).await?;
            let finished = self.candidates[before..]
                .iter()
                .any(|c| self.passing.contains(&c.id));
            if finished {
                self.passing.retain(|&p| p != id);
            }
        }
        Ok(())
    }

    /// Write `parent`'s unwritten functions, `k` samples; whether any was proposed.
    pub(super) async fn complete(&mut self, parent: usize, k: usize) -> Result<bool, AgentError> {
        self.write(parent, k, true).await
    }

    /// [`Self::complete`]; with `until_pass`, no sample is started once a program passes. Says
    /// what it wrote and how that did.
    async fn write(
        &mut self,
        parent: usize,
        k: usize,
        until_pass: bool,
    ) -> Result<bool, AgentError> {
        let before = self.candidates.len();
        let mut redrawn = 0;
        let proposed = self
            .write_samples(parent, k, until_pass, &mut redrawn)
            .await?;
        let written: Vec<usize> = self.candidates[before..]
            .iter()
            .filter(|c| c.proposer == Proposer::Complete)
            .map(|c| c.id)
            .collect();
        if let Some(what) = written
            .first()
            .and_then(|&id| self.candidates.get(id))
            .and_then(|c| c.edit.as_ref())
            .map(|e| e.description.clone())
        {
            let passing = written
                .iter()
                .filter(|id| self.passing.contains(id))
                .count();
            let redraws = match redrawn {
                0 => String::new(),
                n => format!("; {n} body draw(s) read a name nothing defines and were drawn again"),
            };
            self.progress.event(ProgressEvent::Step {
                task_id: self.task.task_id.clone(),
                message: format!(
                    "complete: {what} in candidate {parent}'s context, {} sample(s), {passing} \
                     pass the visible tests{redraws}",
                    written.len()
                ),
            });
        }
        Ok(proposed)
    }

    async fn write_samples(
        &mut self,
        parent: usize,
        k: usize,
        until_pass: bool,
        redrawn: &mut usize,
    ) -> Result<bool, AgentError> {
        let program = self.node(parent).tested.program.clone();
        let placeholders = unwritten(&program);
        let mut proposed = false;
        if placeholders.is_empty() {
            return Ok(proposed);
        }
        let outcomes = self.node(parent).tested.outcomes.clone();
        let form = patch_form(self.options.patch_form, &*self.fixer.debugger);
        let names: Vec<String> = placeholders.iter().map(|u| u.name.clone()).collect();
        for i in 0..k {
            if self.spent_budget()
                || (until_pass && (self.should_stop().is_some() || self.selecting()))
            {
                return Ok(proposed);
            }
            let mut current = program.clone();
            let mut calls = Vec::new();
            let mut llm_ms = 0;
            let mut problem = None;
            for (j, name) in names.iter().enumerate() {
                // Line numbers move as bodies are written: find the placeholder again.
                let Some(at) = unwritten(&current).into_iter().find(|u| &u.name == name) else {
                    continue;
                };
                // A body that reads a name nothing defines raises NameError where it runs,
                // often where no visible test looks: drawn again, the last draw kept if none
                // is clean.
                let mut kept: Option<String> = None;
                let mut paid = true;
                for attempt in 0..=REDRAWS {
                    let Some(written) = self
                        .write_body(&current, &outcomes, &at, form, [parent, j, i, attempt])
                        .await?
                    else {
                        paid = false;
                        break;
                    };
                    calls.extend(written.calls);
                    llm_ms += written.llm_ms;
                    match written.program {
                        Some(p) => {
                            let clean = !reads_undefined(&current, &p);
                            kept = Some(p);
                            if clean {
                                break;
                            }
                            *redrawn += usize::from(attempt < REDRAWS);
                        }
                        None => problem = written.problem,
                    }
                }
                if let Some(p) = kept {
                    current = p;
                }
                if !paid {
                    break;
                }
            }
            if calls.is_empty() {
                // Not one body fitted in the budget.
                return Ok(proposed);
            }
            proposed = true;
            let changed = current != program;
            let first_line = placeholders.first().map_or(0, |u| u.first);
            self.consider(
                self.round.number,
                Proposer::Complete,
                Some(parent),
                changed.then_some(current),
                if changed { None } else { problem },
                calls,
                llm_ms,
            )
            .await?;
            if let Some(c) = self.candidates.last_mut() {
                c.edit = Some(EditRecord {
                    line: first_line,
                    rank: 0,
                    description: format!("wrote {}", names.join(", ")),
                });
            }
        }
        Ok(proposed)
    }

    /// One draw of the body of placeholder `at` in `program`; `None` when the budget cannot pay
    /// for it. `draw` is (parent, placeholder, sample, attempt).
    async fn write_body(
        &mut self,
        program: &str,
        outcomes: &[crate::run::TestOutcome],
        at: &Unwritten,
        form: crate::repair::search::PatchForm,
        draw: [usize; 4],
    ) -> Result<Option<Written>, AgentError> {
        let site = PatchSite {
            task: self.task,
            program,
            outcomes,
            first: at.first,
            last: at.last,
            body_of: Some(&at.name),
        };
        let Some(mut request) = patch_request(&self.fixer.prompts, &site, form)? else {
            return Ok(None);
        };
        let prompt_cost = if self.sent_raw(&request) {
            0
        } else {
            (request_bytes(&request) as f64 / 3.5).ceil() as u64
        };
        // A whole-program reply (`--patch-form chat-program`) has no cap to lower.
        let reply_cost = match request.max_tokens {
            Some(t) => {
                let capped = t.min(BODY_REPLY_TOKENS);
                request.max_tokens = Some(capped);
                u64::from(capped)
            }
            None => self.reply_estimate(),
        };
        if !self.fits(prompt_cost + reply_cost) {
            return Ok(None);
        }
        request.temperature = Some(self.options.temperature);
        let [parent, j, i, attempt] = draw;
        request.seed = Some(sample_seed(
            self.fixer.options.rng_seed,
            &[
                self.round.number as u64,
                parent as u64,
                Proposer::Complete.code(),
                j as u64,
                i as u64,
                attempt as u64,
            ],
        ));
        let started = Instant::now();
        let model = self.fixer.debugger.clone();
        let written = sample_patch(&*model, &self.fixer.prompts, &site, form, &request).await?;
        self.remember_raw(&request);
        Ok(Some(Written {
            program: written.program,
            problem: written.problem,
            calls: written.calls,
            llm_ms: ms(started.elapsed()),
        }))
    }
}

/// A body drawn: the program with it written, or why there is none.
struct Written {
    program: Option<String>,
    problem: Option<String>,
    calls: Vec<crate::repair::record::CallRecord>,
    llm_ms: u64,
}

/// Whether `after` reads a name that nothing defines where `before` did not.
fn reads_undefined(before: &str, after: &str) -> bool {
    let names = |p: &str| {
        undefined_names(&SourceFile::new(p.to_string()))
            .map(|u| u.name_list().into_iter().collect::<BTreeSet<_>>())
            .unwrap_or_default()
    };
    let known = names(before);
    names(after).iter().any(|n| !known.contains(n))
}
