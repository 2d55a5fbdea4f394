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
use crate::repair::search::select::{agrees, ANY};
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
        self.round_tests_ms += ms(t.elapsed());
        self.progress.event(ProgressEvent::Step {
            task_id: self.task.task_id.clone(),
            message: format!(
                "{} of {} peer programs pass the visible tests; they vote on extra inputs",
                admitted.len(),
                given.len()
            ),
        });
        self.peers = admitted;
        Ok(())
    }
}

/// Candidates' and peers' behaviours side by side, for grouping: indices below `candidates`
/// are passing candidates (in `passing` order), the rest peers, one vote each.
pub(super) struct Voters {
    pub candidates: usize,
    pub behaviours: Vec<Vec<String>>,
    pub weights: Vec<usize>,
}

impl Voters {
    pub fn new(behaviours: Vec<Vec<String>>, weights: Vec<usize>) -> Self {
        Voters {
            candidates: behaviours.len(),
            behaviours,
            weights,
        }
    }

    /// Peers' behaviours join, one vote each.
    pub fn with_peers(mut self, peers: Vec<Vec<String>>) -> Self {
        self.weights.extend(std::iter::repeat_n(1, peers.len()));
        self.behaviours.extend(peers);
        self
    }

    pub fn is_peer(&self, i: usize) -> bool {
        i >= self.candidates
    }

    /// A candidate joins (before the peers, so candidate indices stay `passing` order).
    pub fn add_candidate(&mut self, behaviour: Vec<String>, weight: usize) {
        self.behaviours.insert(self.candidates, behaviour);
        self.weights.insert(self.candidates, weight);
        self.candidates += 1;
    }

    pub fn peers(&self) -> usize {
        self.behaviours.len() - self.candidates
    }
}

/// Per extra input, the behaviour that more than `share` of the votes give there (peers and
/// independent candidates, by weight); [`ANY`] where none does.
///
/// Whole behaviours split a class's programs into many small groups: each program slips on an
/// input or two of its own, so the largest group of programs that agree on every input is
/// small and often wrong. Input by input, most of them agree (on Refactory's question 2 the
/// submissions that pass the visible tests answer 16 of the 17 instructor's calls the right way
/// by plurality), so the consensus is an expected answer where the task gives none.
pub(super) fn consensus(behaviours: &[Vec<String>], weights: &[usize], share: f64) -> Vec<String> {
    let inputs = behaviours.iter().map(Vec::len).max().unwrap_or(0);
    (0..inputs)
        .map(|j| {
            let mut counts: Vec<(&str, usize)> = Vec::new();
            let mut total = 0;
            for (b, &w) in behaviours.iter().zip(weights) {
                let Some(got) = b.get(j) else { continue };
                total += w;
                match counts.iter_mut().find(|(s, _)| *s == got.as_str()) {
                    Some(c) => c.1 += w,
                    None => counts.push((got.as_str(), w)),
                }
            }
            match counts.iter().max_by_key(|c| c.1) {
                Some(&(top, n)) if total > 0 && n as f64 > share * total as f64 => top.to_string(),
                _ => ANY.to_string(),
            }
        })
        .collect()
}

/// Whether `behaviour` agrees with `consensus` on every input it decides.
pub(super) fn follows(consensus: &[String], behaviour: &[String]) -> bool {
    consensus
        .iter()
        .zip(behaviour)
        .all(|(want, got)| agrees(want, got))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn consensus_takes_each_input_s_majority_and_leaves_split_inputs_open() {
        // Three programs, each with a slip of its own: no two agree on every input, but each
        // input has a majority.
        let votes = [
            b(&["= 1", "= 2", "= 3"]),
            b(&["= 0", "= 2", "= 3"]),
            b(&["= 1", "raise IndexError", "= 3"]),
            b(&["= 1", "= 2", "= 4"]),
        ];
        assert_eq!(
            consensus(&votes, &[1, 1, 1, 1], 0.5),
            b(&["= 1", "= 2", "= 3"])
        );
        // Split evenly: open.
        let split = [b(&["= True"]), b(&["= False"])];
        assert_eq!(consensus(&split, &[1, 1], 0.5), b(&[ANY]));
        // Weights count; a weight of 0 (an edit of the given program) does not.
        assert_eq!(consensus(&split, &[2, 1], 0.5), b(&["= True"]));
        assert_eq!(consensus(&split, &[0, 1], 0.5), b(&["= False"]));
        // A higher share leaves more open.
        assert_eq!(consensus(&votes, &[1, 1, 1, 1], 0.75), b(&[ANY, ANY, ANY]));
    }

    #[test]
    fn a_program_follows_the_consensus_where_it_decides() {
        let c = b(&["= 1", ANY, "= 3"]);
        assert!(follows(&c, &b(&["= 1", "= 9", "= 3"])));
        assert!(!follows(&c, &b(&["= 1", "= 2", "= 4"])));
    }
}
