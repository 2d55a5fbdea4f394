//! The votes: how many are wanted and drawn, the passing programs and the peers run on the
//! selection's extra inputs, what each weighs, and, while votes are drawn, whether the heaviest
//! groups tie (one more is drawn), the votes left can no longer change the choice, or the votes
//! drawn so far all failed (none more are). `decide` judges; this runs the programs.

use std::time::Instant;

use crate::repair::progress::ProgressEvent;
use crate::repair::record::CandidateRecord;
use crate::repair::search::decide::{settled, tie, Settled, Tie};
use crate::repair::search::harden::crashes;
use crate::repair::search::peers::{Runs, Voters};
use crate::repair::search::select::{self, SelectRule};
use crate::repair::search::{extra_inputs_with, Proposer, Search};
use crate::repair::{ms, AgentError};
use crate::run::{in_parallel, TestInput};

impl Search<'_> {
    /// Behaviours of `programs` on `calls`, program by program, and which were crashes.
    pub(super) async fn behaviours(
        &mut self,
        programs: Vec<String>,
        calls: &[TestInput],
    ) -> Result<Runs, AgentError> {
        let runner = self.fixer.runner.clone();
        let calls_owned = calls.to_vec();
        let n_inputs = calls.len();
        let pairs: Vec<(usize, usize)> = (0..programs.len())
            .flat_map(|p| (0..n_inputs).map(move |c| (p, c)))
            .collect();
        let jobs = runner.jobs();
        let n_programs = programs.len();
        let t = Instant::now();
        let abstain = self.options.crash_abstains;
        let results = tokio::task::spawn_blocking(move || {
            in_parallel(&pairs, jobs, |&(p, c)| {
                runner
                    .run(&programs[p], &calls_owned[c], None)
                    .map(|o| (select::behaviour(&o), abstain && crashes(&o, &programs[p])))
            })
        })
        .await
        .map_err(|e| AgentError::Internal(format!("selection worker thread: {e}")))?;
        self.round.tests_ms += ms(t.elapsed());
        let mut runs = Runs {
            behaviours: vec![Vec::with_capacity(n_inputs); n_programs],
            crashed: vec![Vec::with_capacity(n_inputs); n_programs],
        };
        for (i, r) in results.into_iter().enumerate() {
            let (b, crashed) = match r {
                Some(Ok(b)) => b,
                Some(Err(e)) => return Err(e.into()),
                None => ("not run".into(), false),
            };
            runs.behaviours[i / n_inputs.max(1)].push(b);
            runs.crashed[i / n_inputs.max(1)].push(crashed);
        }
        Ok(runs)
    }

    /// The peers' behaviours on `calls` (the selection's extra inputs, the same for the whole
    /// task): run once, then kept, since both a tie check and the selection ask for them.
    async fn peer_behaviours(&mut self, calls: &[TestInput]) -> Result<Runs, AgentError> {
        if let Some(kept) = &self.voting.peer_behaviours {
            return Ok(kept.clone());
        }
        let run = self.behaviours(self.voting.peers.clone(), calls).await?;
        self.voting.peer_behaviours = Some(run.clone());
        Ok(run)
    }

    /// The votes of passing candidate `id`: one if it was written independently (or is the
    /// seed), plus one per independent sample that wrote the same program again.
    fn votes(&self, id: usize) -> usize {
        let own = self.candidates.get(id).is_some_and(|c| {
            c.proposer.independent() || (c.proposer == Proposer::Seed && self.passing.contains(&0))
        });
        usize::from(own)
            + self
                .candidates
                .iter()
                .filter(|c| c.duplicate_of == Some(id) && c.proposer.independent())
                .count()
    }

    /// The votes of every passing candidate, in `passing` order.
    fn vote_weights(&self) -> Vec<usize> {
        if self.passing.iter().any(|&id| self.derived(id)) {
            return self.passing.iter().map(|&id| self.votes(id)).collect();
        }
        // Fresh samples only: every passing program is a vote, as before edits existed.
        self.passing
            .iter()
            .map(|&id| {
                1 + self
                    .candidates
                    .iter()
                    .filter(|c| c.duplicate_of == Some(id))
                    .count()
            })
            .collect()
    }

    /// The passing programs and the peers as voters, run on the selection's extra inputs (and
    /// those inputs as calls); `None` when there are no extra inputs. What a tie and a settled
    /// vote are judged on.
    async fn passing_voters(&mut self) -> Result<Option<(Voters, Vec<TestInput>)>, AgentError> {
        let (_, calls) = self.selection_inputs();
        if calls.is_empty() {
            return Ok(None);
        }
        let programs: Vec<String> = self
            .passing
            .iter()
            .map(|&id| self.node(id).tested.program.clone())
            .collect();
        let behaviours = self.behaviours(programs, &calls).await?;
        let peers = self.peer_behaviours(&calls).await?;
        let voters = Voters::new(behaviours, self.vote_weights()).with_peers(peers);
        Ok(Some((voters, calls)))
    }

    /// The extra inputs candidates are compared on, as written and as calls to run.
    pub(super) fn selection_inputs(&self) -> (Vec<String>, Vec<TestInput>) {
        let inputs = extra_inputs_with(
            self.tests,
            &self.task.entry_point,
            self.options.extra_inputs,
            self.fixer.options.rng_seed,
            self.options.swapped_inputs,
        );
        let calls = inputs
            .iter()
            .map(|expr| TestInput::Call { expr: expr.clone() })
            .collect();
        (inputs, calls)
    }

    /// The passing programs and the peers as voters on `calls`, and the seed's behaviour there
    /// (for the prior on edits; it is a candidate when it passed).
    pub(super) async fn selection_voters(
        &mut self,
        calls: &[TestInput],
    ) -> Result<(Voters, Vec<String>), AgentError> {
        let any_derived = self.passing.iter().any(|&id| self.derived(id));
        let mut programs: Vec<String> = self
            .passing
            .iter()
            .map(|&id| self.node(id).tested.program.clone())
            .collect();
        let seed_listed = self.passing.contains(&0);
        if any_derived && !seed_listed {
            programs.push(self.seed_program.clone());
        }
        let mut behaviours = self.behaviours(programs, calls).await?;
        let seed_behaviour: Vec<String> = if any_derived && !seed_listed {
            behaviours.crashed.pop();
            behaviours.behaviours.pop().unwrap_or_default()
        } else if seed_listed {
            behaviours.behaviours.first().cloned().unwrap_or_default()
        } else {
            Vec::new()
        };
        let peer_behaviours = self.peer_behaviours(calls).await?;
        let voters = Voters::new(behaviours, self.vote_weights()).with_peers(peer_behaviours);
        Ok((voters, seed_behaviour))
    }

    /// The votes are all in, but the two heaviest groups of passing programs weigh the same:
    /// the choice would fall to whichever was found first. If `tie_votes` allows and the budget
    /// pays for it, one more vote is wanted (and said); whether it was.
    pub(super) async fn votes_tied(&mut self) -> Result<bool, AgentError> {
        let Some(&first) = self.passing.first() else {
            return Ok(false);
        };
        let wanted = self.votes_wanted();
        if self.voting.tie_breaks >= self.options.tie_votes
            || self.options.select_by != SelectRule::Groups
            || self.passing.len() < 2
            || wanted == 0
            || self.votes_after(first) < wanted
            || !self
                .options
                .portfolio
                .iter()
                .any(|(p, _)| *p == Proposer::Fresh)
        {
            return Ok(false);
        }
        let conv = self.fresh_conversation()?;
        let cost = self.estimate(&conv.messages) + self.reply_estimate();
        if !self.fits(cost) || self.model_proposals() >= self.options.max_candidates {
            return Ok(false);
        }
        let Some((voters, calls)) = self.passing_voters().await? else {
            return Ok(false);
        };
        let Some(Tie { groups, support }) = tie(&voters) else {
            return Ok(false);
        };
        self.voting.tie_breaks += 1;
        self.progress.event(ProgressEvent::Step {
            task_id: self.task.task_id.clone(),
            message: format!(
                "the votes tie ({groups} groups of {support} on {} extra inputs): one more vote \
                 ({} of at most {})",
                calls.len(),
                self.voting.tie_breaks,
                self.options.tie_votes
            ),
        });
        Ok(true)
    }

    /// After a vote: whether the votes still to come can change the program chosen. They cannot
    /// when the heaviest group of passing programs outweighs every other group together by
    /// more than the votes left, and its programs answer on every extra input (a program that
    /// crashed where a later one answers would lend that one its votes, `select::support`).
    /// The choice then stands as the full vote would make it (the heaviest group's smallest
    /// edit, or its first program), so the rest are not drawn (`settle_votes`).
    pub(super) async fn settle_votes(&mut self) -> Result<(), AgentError> {
        let Some(&first) = self.passing.first() else {
            return Ok(());
        };
        let wanted = self.votes_wanted();
        let drawn = self.votes_after(first);
        if self.voting.settled
            || !self.options.settle_votes
            || self.options.select_by != SelectRule::Groups
            || wanted == 0
            || drawn >= wanted
            // A passing program with functions left unwritten is completed at the round's
            // end and leaves the vote then: its group may lose it.
            || self.passing.iter().any(|&id| self.awaits_completion(id))
        {
            return Ok(());
        }
        let left = wanted - drawn;
        if self.options.stop_at_passing_vote && first != 0 {
            if let Some(vote) = self.first_passing_vote(first) {
                self.voting.settled = true;
                self.progress.event(ProgressEvent::Step {
                    task_id: self.task.task_id.clone(),
                    message: format!(
                        "vote {vote} passes the visible tests after an edit or a fresh program \
                         did: the {left} left are not drawn (--stop-at-passing-vote)"
                    ),
                });
                return Ok(());
            }
        }
        let Some((voters, calls)) = self.passing_voters().await? else {
            return Ok(());
        };
        let Some(Settled { lead, others }) = settled(&voters, left) else {
            return Ok(());
        };
        self.voting.settled = true;
        self.progress.event(ProgressEvent::Step {
            task_id: self.task.task_id.clone(),
            message: format!(
                "the vote is settled: {lead} vote(s) for one behaviour on {} extra inputs \
                 against {others}; the {left} left cannot change the choice, so they are not \
                 drawn",
                calls.len()
            ),
        });
        Ok(())
    }

    /// Fresh samples drawn after the first passing program, as votes: `verify` when the seed
    /// passed, else `select`.
    pub(super) fn votes_wanted(&self) -> usize {
        let wanted = match self.passing.first() {
            Some(0) => self.options.verify,
            _ => self.options.select,
        };
        if wanted == 0 {
            return 0;
        }
        wanted + self.voting.tie_breaks
    }

    /// The first `vote_patience` votes drawn since the first pass all failed the visible tests
    /// (a model that cannot solve the task from its text will not vote; more samples would cost
    /// tokens for nothing).
    pub(super) fn votes_hopeless(&self, first: usize) -> bool {
        let patience = self.options.vote_patience;
        if patience == 0 {
            return false;
        }
        let votes: Vec<&CandidateRecord> = self
            .candidates
            .iter()
            .filter(|c| c.id > first && c.proposer.independent())
            .collect();
        let failed = |c: &CandidateRecord| {
            // A program written again fails as its first writing did.
            let tested = c
                .duplicate_of
                .and_then(|d| self.candidates.get(d))
                .unwrap_or(c);
            tested.visible_passed.is_none_or(|p| p < self.tests.len())
        };
        votes.len() >= patience && votes.into_iter().take(patience).all(failed)
    }

    /// The first vote drawn after candidate `first` that passes the visible tests (itself, or
    /// as the program it writes again): its position among the votes, from 1.
    fn first_passing_vote(&self, first: usize) -> Option<usize> {
        self.candidates
            .iter()
            .filter(|c| c.id > first && c.proposer.independent())
            .position(|c| {
                let tested = c.duplicate_of.unwrap_or(c.id);
                self.passing.contains(&tested)
            })
            .map(|i| i + 1)
    }

    /// Votes since the first pass: the model proposals drawn after candidate `first`, and the
    /// peers that pass the visible tests (they cost nothing, so they are counted first).
    pub(super) fn votes_after(&self, first: usize) -> usize {
        self.voting.peers.len()
            + self
                .candidates
                .iter()
                .filter(|c| {
                    c.id > first && !matches!(c.proposer, Proposer::Seed | Proposer::Mutate)
                })
                .count()
    }
}
