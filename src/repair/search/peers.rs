//! Programs others wrote for the same task (a class's other submissions) as votes.
//!
//! Visible tests are few, and a small model often cannot write the task from its text, so no
//! fresh program passes them to vote. Where other people solved the same task, their programs
//! are independent evidence at no token cost: those that pass the visible tests are run on the
//! selection's extra inputs beside the candidates and weigh one vote each. Most of them are
//! right on most inputs even where each has a slip of its own, so the behaviour most of them
//! share tells a candidate's second slip apart. A peer is never returned (the fix stays an
//! edit of the user's program) and never reaches a prompt.

use std::time::Instant;

use crate::repair::progress::ProgressEvent;
use crate::repair::search::Search;
use crate::repair::{ms, AgentError};

impl Search<'_> {
    /// Test the task's peers on the visible tests and keep those that pass them all as voters.
    pub(super) async fn admit_peers(&mut self) -> Result<(), AgentError> {
        let given = &self.task.peers;
        if given.is_empty() || self.tests.is_empty() {
            return Ok(());
        }
        let t = Instant::now();
        let mut admitted = Vec::new();
        for program in given {
            // The user's own program among them would vote for itself.
            if program.trim() == self.seed_program.trim() {
                continue;
            }
            let tested = self.fixer.test(program, self.tests).await?;
            if tested.passed == self.tests.len() {
                admitted.push(program.clone());
            }
        }
        self.round.tests_ms += ms(t.elapsed());
        self.progress.event(ProgressEvent::Step {
            task_id: self.task.task_id.clone(),
            message: format!(
                "{} of {} peer programs pass the visible tests; they vote on extra inputs",
                admitted.len(),
                given.len()
            ),
        });
        self.voting.peers = admitted;
        Ok(())
    }
}

/// What programs did on the selection's extra inputs, program by program: each behaviour as
/// compared, and whether it was a crash (`harden::crashes`).
#[derive(Debug, Clone, Default)]
pub(super) struct Runs {
    pub behaviours: Vec<Vec<String>>,
    pub crashed: Vec<Vec<bool>>,
}

/// Candidates' and peers' behaviours side by side, for grouping: indices below `candidates`
/// are passing candidates (in `passing` order), the rest peers, one vote each.
#[derive(Default)]
pub(super) struct Voters {
    pub candidates: usize,
    pub behaviours: Vec<Vec<String>>,
    pub crashed: Vec<Vec<bool>>,
    pub weights: Vec<usize>,
}

impl Voters {
    pub fn new(runs: Runs, weights: Vec<usize>) -> Self {
        Voters {
            candidates: runs.behaviours.len(),
            behaviours: runs.behaviours,
            crashed: runs.crashed,
            weights,
        }
    }

    /// Peers' behaviours join, one vote each.
    pub fn with_peers(mut self, peers: Runs) -> Self {
        self.weights
            .extend(std::iter::repeat_n(1, peers.behaviours.len()));
        self.behaviours.extend(peers.behaviours);
        self.crashed.extend(peers.crashed);
        self
    }

    pub fn is_peer(&self, i: usize) -> bool {
        i >= self.candidates
    }

    /// A candidate joins (before the peers, so candidate indices stay `passing` order).
    pub fn add_candidate(&mut self, behaviour: Vec<String>, crashed: Vec<bool>, weight: usize) {
        self.behaviours.insert(self.candidates, behaviour);
        self.crashed.insert(self.candidates, crashed);
        self.weights.insert(self.candidates, weight);
        self.candidates += 1;
    }

    pub fn peers(&self) -> usize {
        self.behaviours.len() - self.candidates
    }

    /// The groups of agreeing voters, most supported first, with their support
    /// (`select::ranked_groups`).
    pub fn ranked(&self) -> (Vec<Vec<usize>>, Vec<usize>) {
        crate::repair::search::select::ranked_groups(&self.behaviours, &self.crashed, &self.weights)
    }
}
