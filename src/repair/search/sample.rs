//! Candidates come in: samples are drawn from a model (each with its own seed, so reruns draw
//! the same ones), and every program proposed is shaped to the user's module, deduplicated,
//! tested on the visible tests and recorded.

use std::time::Instant;

use crate::python::normalize::program_key;
use crate::repair::conversation::Conversation;
use crate::repair::progress::ProgressEvent;
use crate::repair::record::{CallPurpose, CallRecord, CandidateRecord};
use crate::repair::search::node::{changed_lines, Node};
use crate::repair::search::{Proposer, Search};
use crate::repair::{ms, AgentError};
use crate::run::TestStatus;

impl Search<'_> {
    /// Whether `proposer`'s samples follow resampling's seeds, one at a time. Not on a backend
    /// that draws several samples in one call (OpenAI's `n`): there one call pays the prompt
    /// once, and a server's seeds do not promise the same sample anyway.
    pub(super) fn as_resample(&self, proposer: Proposer) -> bool {
        proposer == Proposer::Fresh
            && self.options.fresh_as_resample
            && !self.model_of(proposer).batches()
    }

    pub(super) fn model_of(
        &self,
        proposer: Proposer,
    ) -> std::sync::Arc<dyn crate::generate::model::ChatModel> {
        match proposer {
            Proposer::Fresh => self.fixer.generator.clone(),
            _ => self.fixer.debugger.clone(),
        }
    }

    /// Draw `n` samples of `conv` (sample indices from `first`) and consider their programs.
    pub(super) async fn sample(
        &mut self,
        conv: &Conversation,
        proposer: Proposer,
        parent: Option<usize>,
        first: usize,
        n: usize,
    ) -> Result<(), AgentError> {
        let started = Instant::now();
        let mut c = conv.clone_for_sample(self.options.temperature);
        c.seed = Some(if self.as_resample(proposer) {
            // Resampling's j-th program (from 0) has seed rng_seed + j; `n` is 1 here.
            self.fixer
                .options
                .rng_seed
                .wrapping_add(self.memo.fresh_drawn)
        } else {
            sample_seed(
                self.fixer.options.rng_seed,
                &[
                    self.round.number as u64,
                    parent.map_or(u64::MAX, |p| p as u64),
                    proposer.code(),
                    first as u64,
                ],
            )
        });
        if proposer == Proposer::Fresh {
            self.memo.fresh_drawn += n as u64;
        }
        let model = self.model_of(proposer);
        let (purpose, repair) = match proposer {
            Proposer::Fresh => (CallPurpose::Resample, CallPurpose::RepairResample),
            _ => (CallPurpose::Regenerate, CallPurpose::RepairProgram),
        };
        let drawn = c
            .ask_programs(
                &*model,
                n,
                &self.task.entry_point,
                purpose,
                repair,
                &self.fixer.prompts,
            )
            .await?;
        self.remember(&conv.messages);
        let llm_ms = ms(started.elapsed()) / drawn.len().max(1) as u64;
        for d in drawn {
            if let Some(first) = d.calls.first() {
                self.memo.reply_tokens.0 += first.completion_tokens;
                self.memo.reply_tokens.1 += 1;
            }
            self.consider(
                self.round.number,
                proposer,
                parent,
                d.program,
                d.problem,
                d.calls,
                llm_ms,
            )
            .await?;
        }
        Ok(())
    }

    pub(super) fn charge(&mut self, calls: &[CallRecord]) {
        self.spent += calls.iter().map(CallRecord::cost).sum::<u64>();
        self.round.calls.extend_from_slice(calls);
    }

    /// Record a candidate; test it unless it is a duplicate or holds no program.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn consider(
        &mut self,
        round: usize,
        proposer: Proposer,
        parent: Option<usize>,
        program: Option<String>,
        problem: Option<String>,
        calls: Vec<CallRecord>,
        wall_ms: u64,
    ) -> Result<(), AgentError> {
        self.charge(&calls);
        // A model writes whole programs; in a user's module only its function goes in.
        let (program, problem) = match program {
            Some(p)
                if matches!(
                    proposer,
                    Proposer::Fresh | Proposer::Feedback | Proposer::Ldb
                ) =>
            {
                match crate::repair::shape(self.task, &self.seed_program, p) {
                    Ok(p) => (Some(p), problem),
                    Err(why) => (None, Some(why.to_string())),
                }
            }
            other => (other, problem),
        };
        let id = self.candidates.len();
        let mut record = CandidateRecord {
            id,
            round,
            proposer,
            parent,
            program: program.clone(),
            duplicate_of: None,
            visible_passed: None,
            errors: 0,
            diff_lines: 0,
            tokens: calls.iter().map(CallRecord::cost).sum(),
            wall_ms,
            group: None,
            problem,
            edit: None,
        };
        let Some(program) = program else {
            self.candidates.push(record);
            return Ok(());
        };
        let key = program_key(&program);
        if let Some(&first) = self.seen.get(&key) {
            record.duplicate_of = Some(first);
            if parent == Some(first) {
                self.memo.stale.insert((proposer, first));
            }
            self.candidates.push(record);
            return Ok(());
        }
        self.seen.insert(key, id);
        let t = Instant::now();
        let mut tested = self.fixer.test(&program, self.tests).await?;
        if let Some(seed) = self.nodes.first() {
            if crate::run::hold_to_given(&mut tested.outcomes, &seed.tested.outcomes) > 0 {
                tested.passed = tested.outcomes.iter().filter(|o| o.passed()).count();
            }
        }
        let test_ms = ms(t.elapsed());
        self.round.tests_ms += test_ms;
        record.wall_ms += test_ms;
        let errors = tested
            .outcomes
            .iter()
            .filter(|o| !matches!(o.status, TestStatus::Passed | TestStatus::Failed))
            .count();
        let diff_lines = changed_lines(&self.seed_program, &program);
        record.visible_passed = Some(tested.passed);
        record.errors = errors;
        record.diff_lines = diff_lines;
        // The regression tests run once the given ones pass: until then the count is of those.
        let given_failing = tested
            .outcomes
            .iter()
            .any(|o| !o.test.is_guard() && !o.passed());
        let (shown_passed, shown_total) = if given_failing {
            let given = tested.outcomes.iter().filter(|o| !o.test.is_guard());
            (given.clone().filter(|o| o.passed()).count(), given.count())
        } else {
            (tested.passed, self.tests.len())
        };
        self.progress.event(ProgressEvent::Tested {
            task_id: self.task.task_id.clone(),
            iteration: round,
            candidate: Some(id),
            passed: shown_passed,
            total: shown_total,
            first_failure: tested
                .outcomes
                .iter()
                .find(|o| !o.passed())
                .map(|o| (o.status, o.summary.clone())),
        });
        if tested.passed == self.tests.len() {
            self.passing.push(id);
        }
        self.nodes.push(Node {
            id,
            tested,
            errors,
            diff_lines,
        });
        self.candidates.push(record);
        Ok(())
    }
}

/// A sampling seed from a base and the sample's coordinates (splitmix64 steps), so every sample
/// of a run has its own seed and a rerun draws the same ones.
pub(super) fn sample_seed(base: u64, parts: &[u64]) -> u64 {
    let mut x = base ^ 0x9E37_79B9_7F4A_7C15;
    for &p in parts {
        x = x.wrapping_add(p).wrapping_add(0x9E37_79B9_7F4A_7C15);
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^= x >> 31;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_seeds_differ_by_every_coordinate() {
        let a = sample_seed(0, &[1, 0, 1, 0]);
        assert_eq!(a, sample_seed(0, &[1, 0, 1, 0]));
        for other in [
            sample_seed(1, &[1, 0, 1, 0]),
            sample_seed(0, &[2, 0, 1, 0]),
            sample_seed(0, &[1, 1, 1, 0]),
            sample_seed(0, &[1, 0, 2, 0]),
            sample_seed(0, &[1, 0, 1, 1]),
        ] {
            assert_ne!(a, other);
        }
    }
}
