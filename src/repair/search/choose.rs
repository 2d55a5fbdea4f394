//! The end of a search: which program is returned, and what backs it.
//!
//! A program that passes the visible tests is only plausible: visible tests are few. Every
//! passing candidate runs on extra inputs, and candidates that behave alike on all of them form
//! a group. Only programs the model wrote whole (fresh samples, repairs from the tests or the
//! trace, and the seed itself when it passed) are votes: edits that keep the given program
//! resemble it and each other, so they vote nothing. A program that crashed on an input where a
//! group answers, and behaves like that group everywhere else, votes for it (`select::support`:
//! a crash is no answer). Then:
//! - the heaviest group with votes wins; if it holds an edit of the given program, the edit
//!   with the smallest change is returned (confirmed: independent programs agree with it);
//! - if it holds none, a program set aside before the votes (`harden`: it raised on an emptied
//!   argument) that behaves as the group does everywhere is taken back: the group raises there
//!   too, so the raise was no fault. Else the given program is edited again towards that group
//!   (`mutate` with the group's behaviour on the extra inputs as tests); an edit that now
//!   agrees is returned, else the group's first program (the majority's);
//! - with no votes at all (no independent program passed the visible tests) an edit is
//!   returned unconfirmed: the smallest change, the first found (at the most suspicious
//!   statement) among equals.
//!
//! The task's peers (programs others wrote for it, `peers`) that pass the visible tests vote
//! too, one vote each, but are never returned: where the heaviest group is theirs alone and no
//! edit joins it, the heaviest group with a candidate gives the program, marked `outvoted`.
//!
//! With fresh samples only (no edits) this is the largest-group rule of CodeT and AlphaCode.
//!
//! The decision is made on plain data (`decide`, with a table test for every outcome); the
//! programs are run in `votes`, an edit is brought in in `bring_in`, and here the decision is
//! acted on and reported.

use crate::repair::progress::{Phase, ProgressEvent};
use crate::repair::record::{
    CandidateRecord, Confirmation, ConfirmationStatus, FixReport, FixStatus, SelectionReport,
};
use crate::repair::search::decide::{Ballot, Contender, Decision};
use crate::repair::search::peers::Voters;
use crate::repair::search::select;
use crate::repair::search::Search;
use crate::repair::AgentError;
use crate::run::TestInput;

impl Search<'_> {
    /// Choose the program to return and fill the report's final fields.
    pub(super) async fn finish(
        &mut self,
        report: &mut FixReport,
        completed: bool,
    ) -> Result<(), AgentError> {
        if self.nodes.is_empty() {
            report.candidates = std::mem::take(&mut self.candidates);
            return Ok(());
        }
        let chosen = match self.passing.as_slice() {
            // Nothing passes: the best candidate, unless the program has regression tests
            // (a project's tests that passed before): a change that breaks some of them is
            // worse than none, so the program stays as it was.
            [] if self.tests.iter().any(TestInput::is_guard) => 0,
            [] => self.beam().first().copied().unwrap_or(0),
            // Peers vote on every passing program, the seed's too.
            _ if completed && !self.voting.peers.is_empty() => self.select(report).await?,
            [0] if self.candidates.iter().any(|c| c.proposer.independent()) => {
                let drawn = self
                    .candidates
                    .iter()
                    .filter(|c| c.proposer.independent())
                    .count();
                self.progress.event(ProgressEvent::Notice {
                    task_id: self.task.task_id.clone(),
                    message: format!(
                        "the program passes the visible tests; none of the {drawn} programs \
                         drawn to check it did, so it is kept"
                    ),
                });
                0
            }
            [only] => {
                if *only != 0 {
                    report.confirmation = Some(Confirmation {
                        agreeing: 0,
                        disagreeing: 0,
                        status: ConfirmationStatus::Unconfirmed,
                    });
                }
                *only
            }
            [first, ..] if !completed || self.votes_wanted() == 0 => *first,
            _ => self.select(report).await?,
        };
        let chosen_tested = &self.node(chosen).tested;
        report.final_program = chosen_tested.program.clone();
        report.final_passed = chosen_tested.passed;
        report.regression_passed = chosen_tested
            .outcomes
            .iter()
            .filter(|o| o.test.is_guard() && o.passed())
            .count();
        let all_pass = chosen_tested.passed == self.tests.len();
        report.status = match (all_pass, chosen) {
            (true, 0) => FixStatus::AlreadyPassing,
            (true, _) => FixStatus::Fixed,
            (false, _) => FixStatus::NotFixed,
        };
        // The last iteration shows the returned program, as in the chain's loop.
        let last_round = report.iterations.last().map_or(0, |i| i.index);
        if chosen != 0 || last_round > 0 {
            let mut last = self.iteration_of(last_round + 1, chosen);
            last.calls = Vec::new();
            report.iterations.push(last);
        }
        report.candidates = std::mem::take(&mut self.candidates);
        if report.status == FixStatus::Fixed {
            self.say_how_the_fix_is_backed(report);
        }
        Ok(())
    }

    /// Tells the user how much beyond the visible tests backs a returned fix: an edit that only
    /// passes a few visible tests can still be wrong, and the user should know which it is.
    fn say_how_the_fix_is_backed(&self, report: &FixReport) {
        let Some(c) = &report.confirmation else {
            return;
        };
        let tests = self.tests.len();
        // One program nothing seconds is a guess the votes could not check.
        let lone_vote = c.status == ConfirmationStatus::Majority && c.agreeing == 0;
        let message = match c.status {
            ConfirmationStatus::Unconfirmed => format!(
                "the fix passes {}, but no independently written program passed {} as well \
                 to compare it with: it is plausible, not confirmed; review the diff, or add \
                 tests",
                the_visible_tests(tests),
                if tests == 1 { "it" } else { "them" }
            ),
            ConfirmationStatus::Outvoted => format!(
                "the fix passes {}, but more of the independently \
                 written programs ({}) behave otherwise on extra inputs than like it ({}) and \
                 no edit of the given program behaves like them: review the diff against the \
                 report's selection",
                the_visible_tests(tests),
                c.disagreeing,
                c.agreeing
            ),
            _ if lone_vote => {
                let others = match c.disagreeing {
                    0 => String::new(),
                    n => format!(" ({n} other(s) behave otherwise, each alone)"),
                };
                let (edits, against) = match self.passing_edits_elsewhere(report) {
                    (0, _) => (String::new(), String::new()),
                    (n, smallest) => (
                        format!(", and {n} passing edit(s) of the given program behave otherwise"),
                        smallest.map_or(String::new(), |s| format!(" against {s}")),
                    ),
                };
                format!(
                    "the fix is an independently written program that passes {}, but no other \
                     program agrees with it on extra inputs{others}{edits}: it is plausible, \
                     not confirmed; review it{against}, or add tests",
                    the_visible_tests(tests)
                )
            }
            ConfirmationStatus::Majority => format!(
                "the fix is the program most independently written candidates agree with ({} \
                 of {}); no edit of the given program behaves like them",
                c.agreeing + 1,
                c.agreeing + 1 + c.disagreeing
            ),
            _ => format!(
                "the fix is confirmed: {} independently written program(s) that pass the visible \
                 tests behave like it on extra inputs{}",
                c.agreeing,
                if c.disagreeing > 0 {
                    format!(" ({} behave otherwise)", c.disagreeing)
                } else {
                    String::new()
                }
            ),
        };
        // Only a fix nothing backs is a warning; the others are the search's normal outcome.
        let event = if !lone_vote
            && !matches!(
                c.status,
                ConfirmationStatus::Unconfirmed | ConfirmationStatus::Outvoted
            ) {
            ProgressEvent::Step {
                task_id: self.task.task_id.clone(),
                message,
            }
        } else {
            ProgressEvent::Notice {
                task_id: self.task.task_id.clone(),
                message,
            }
        };
        self.progress.event(event);
    }

    /// Edits of the given program that pass the visible tests outside the returned program's
    /// group (behaviour a lone independent program's choice overrode): how many, and the
    /// smallest of them (the first found among equals) as "the smallest passing edit
    /// (candidate 7: line 7, `1 → 2`)".
    fn passing_edits_elsewhere(&self, report: &FixReport) -> (usize, Option<String>) {
        let Some(selection) = &report.selection else {
            return (0, None);
        };
        let edits: Vec<&CandidateRecord> = selection
            .groups
            .iter()
            .filter(|g| !g.contains(&selection.chosen))
            .flatten()
            // Candidate ids are their places in `candidates`, as everywhere in the search.
            .filter_map(|&id| report.candidates.get(id))
            .filter(|c| c.proposer.derived())
            .collect();
        let smallest = edits
            .iter()
            .min_by_key(|c| (c.diff_lines, c.id))
            .map(|c| match &c.edit {
                Some(e) => format!(
                    "the smallest passing edit (candidate {}: line {}, `{}`)",
                    c.id, e.line, e.description
                ),
                None => format!("the smallest passing edit (candidate {})", c.id),
            });
        (edits.len(), smallest)
    }

    pub(super) fn derived(&self, id: usize) -> bool {
        self.candidates
            .get(id)
            .is_some_and(|c| c.proposer.derived())
    }

    /// The passing candidates as the decision sees them, in `passing` order.
    fn contenders(&self) -> Vec<Contender> {
        self.passing
            .iter()
            .map(|&id| Contender {
                id,
                derived: self.derived(id),
                diff_lines: self.node(id).diff_lines,
            })
            .collect()
    }

    /// Run every passing candidate on extra inputs and choose (see the module's overview):
    /// `decide` says what the votes give; where the heaviest group holds no edit, one is
    /// brought in first.
    pub(super) async fn select(&mut self, report: &mut FixReport) -> Result<usize, AgentError> {
        self.phase(Phase::Selecting);
        let Some(&first) = self.passing.first() else {
            return Err(AgentError::Internal(
                "a selection without a passing program".into(),
            ));
        };
        let (inputs, calls) = self.selection_inputs();
        // Nothing is run when there is nothing to compare on.
        let (voters, seed_behaviour) = if calls.is_empty() {
            (Voters::default(), Vec::new())
        } else {
            self.selection_voters(&calls).await?
        };
        let ballot = Ballot::new(
            self.contenders(),
            voters,
            inputs.len(),
            self.options.select_by,
        );
        let (choice, joined) = match ballot.decide() {
            Decision::NoInputs { pick } => return Ok(pick),
            Decision::Chosen(choice) => (choice, None),
            Decision::BringIn(heaviest) => {
                let joined = self.bring_in(&ballot, &heaviest, &calls).await?;
                let choice = ballot.after_bringing_in(&heaviest, joined.as_ref().map(|j| j.id));
                (choice, joined)
            }
        };
        let chosen = choice.pick;
        let Ballot {
            contenders,
            mut voters,
            mut grouped,
            ..
        } = ballot;
        let mut passing: Vec<usize> = contenders.iter().map(|c| c.id).collect();
        if let Some(joined) = joined {
            passing.push(joined.id);
            voters.add_candidate(joined.behaviour, joined.crashed, 0);
            grouped = voters.ranked().0;
        }
        let id_groups: Vec<Vec<usize>> = grouped
            .iter()
            .map(|g| {
                g.iter()
                    .filter(|&&i| !voters.is_peer(i))
                    .map(|&i| passing[i])
                    .collect()
            })
            .collect();
        let peer_counts: Vec<usize> = if voters.peers() == 0 {
            Vec::new()
        } else {
            grouped
                .iter()
                .map(|g| g.iter().filter(|&&i| voters.is_peer(i)).count())
                .collect()
        };
        for (g, members) in id_groups.iter().enumerate() {
            for &id in members {
                if let Some(c) = self.candidates.get_mut(id) {
                    c.group = Some(g);
                }
            }
        }
        let signatures = passing
            .iter()
            .zip(&voters.behaviours)
            .map(|(&id, b)| (id, b.iter().map(|x| select::behaviour_hash(x)).collect()))
            .collect();
        if first == 0 {
            // Where the given program crashed and the returned one answers: why it lost.
            let crashed_where_chosen_answers = passing
                .iter()
                .position(|&id| id == chosen)
                .filter(|_| chosen != 0)
                .map_or(0, |c| {
                    (0..inputs.len())
                        .filter(|&i| {
                            voters.crashed[0].get(i) == Some(&true)
                                && voters.behaviours[c]
                                    .get(i)
                                    .is_some_and(|b| select::answers(b))
                        })
                        .count()
                });
            self.say_what_votes_did(
                &id_groups,
                &peer_counts,
                chosen,
                inputs.len(),
                crashed_where_chosen_answers,
            );
        }
        report.confirmation = choice.backing.confirmation();
        report.selection = Some(SelectionReport {
            inputs,
            groups: id_groups,
            chosen,
            first_passing: first,
            first_passing_program: self.node(first).tested.program.clone(),
            signatures,
            seed_signature: seed_behaviour
                .iter()
                .map(|x| select::behaviour_hash(x))
                .collect(),
            peers: peer_counts,
        });
        Ok(chosen)
    }

    /// The seed passed on its own: say what the votes did to it.
    fn say_what_votes_did(
        &self,
        id_groups: &[Vec<usize>],
        peer_counts: &[usize],
        chosen: usize,
        inputs: usize,
        crashed: usize,
    ) {
        let size = |g: usize| {
            id_groups.get(g).map_or(0, Vec::len) + peer_counts.get(g).copied().unwrap_or(0)
        };
        let votes: usize = (0..id_groups.len())
            .map(size)
            .sum::<usize>()
            .saturating_sub(1);
        let message = if chosen == 0 {
            format!(
                "the program passes the visible tests; {} of {votes} other passing programs \
                 agree with it on {inputs} extra inputs, so it is kept",
                id_groups
                    .iter()
                    .position(|g| g.contains(&0))
                    .map_or(0, |g| size(g) - 1),
            )
        } else if crashed > 0 {
            format!(
                "the program passes the visible tests, but crashes on {crashed} of {inputs} extra \
                 inputs where other passing programs answer (and agree with it elsewhere); {} \
                 returned",
                if self.derived(chosen) {
                    "an edit of it that answers there is"
                } else {
                    "one of them is"
                }
            )
        } else if self.derived(chosen) {
            format!(
                "the program passes the visible tests, but {} other passing programs agree \
                 with each other and not with it on {inputs} extra inputs; an edit of it that \
                 agrees with them is returned",
                size(0).saturating_sub(1),
            )
        } else {
            format!(
                "the program passes the visible tests, but {} other passing programs agree \
                 with each other and not with it on {inputs} extra inputs; one of them is \
                 returned (the report's selection lists the inputs)",
                size(0),
            )
        };
        self.progress.event(ProgressEvent::Notice {
            task_id: self.task.task_id.clone(),
            message,
        });
    }
}

/// "the visible test" or "the 3 visible tests".
fn the_visible_tests(n: usize) -> String {
    match n {
        1 => "the visible test".to_string(),
        n => format!("the {n} visible tests"),
    }
}
