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
//! The decision is made on plain data (`decide`, with a table test for every outcome); here
//! the programs are run and the steps it asks for (bringing an edit in) are taken.

use std::time::Instant;

use crate::repair::progress::{Phase, ProgressEvent};
use crate::repair::record::{
    CandidateRecord, Confirmation, ConfirmationStatus, FixReport, FixStatus, SelectionReport,
};
use crate::repair::search::decide::{
    settled, tie, Ballot, Contender, Decision, Heaviest, Settled, Tie,
};
use crate::repair::search::harden::crashes;
use crate::repair::search::mutate::Derived;
use crate::repair::search::peers::{Runs, Voters};
use crate::repair::search::select::{self, SelectRule};
use crate::repair::search::{emptied_inputs, extra_inputs, member_inputs, Proposer, Search};
use crate::repair::{ms, AgentError};
use crate::run::{in_parallel, TestInput};

/// A program brought into the heaviest group, with what it did on the extra inputs.
struct Joined {
    id: usize,
    behaviour: Vec<String>,
    crashed: Vec<bool>,
}

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
            _ if completed && !self.peers.is_empty() => self.select(report).await?,
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

    /// Behaviours of `programs` on `calls`, program by program, and which were crashes.
    async fn behaviours(
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
        let results = tokio::task::spawn_blocking(move || {
            in_parallel(&pairs, jobs, |&(p, c)| {
                runner
                    .run(&programs[p], &calls_owned[c], None)
                    .map(|o| (select::behaviour(&o), crashes(&o, &programs[p])))
            })
        })
        .await
        .map_err(|e| AgentError::Internal(format!("selection worker thread: {e}")))?;
        self.round_tests_ms += ms(t.elapsed());
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
        if let Some(kept) = &self.peer_behaviours {
            return Ok(kept.clone());
        }
        let run = self.behaviours(self.peers.clone(), calls).await?;
        self.peer_behaviours = Some(run.clone());
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

    /// The votes are all in, but the two heaviest groups of passing programs weigh the same:
    /// the choice would fall to whichever was found first. If `tie_votes` allows and the budget
    /// pays for it, one more vote is wanted (and said); whether it was.
    pub(super) async fn votes_tied(&mut self) -> Result<bool, AgentError> {
        let Some(&first) = self.passing.first() else {
            return Ok(false);
        };
        let wanted = self.votes_wanted();
        if self.tie_break_votes >= self.options.tie_votes
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
        self.tie_break_votes += 1;
        self.progress.event(ProgressEvent::Step {
            task_id: self.task.task_id.clone(),
            message: format!(
                "the votes tie ({groups} groups of {support} on {} extra inputs): one more vote \
                 ({} of at most {})",
                calls.len(),
                self.tie_break_votes,
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
        if self.votes_settled
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
        let Some((voters, calls)) = self.passing_voters().await? else {
            return Ok(());
        };
        let Some(Settled { lead, others }) = settled(&voters, left) else {
            return Ok(());
        };
        self.votes_settled = true;
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

    /// The extra inputs candidates are compared on, as written and as calls to run.
    fn selection_inputs(&self) -> (Vec<String>, Vec<TestInput>) {
        let inputs = extra_inputs(
            self.tests,
            &self.task.entry_point,
            self.options.extra_inputs,
            self.fixer.options.rng_seed,
        );
        let calls = inputs
            .iter()
            .map(|expr| TestInput::Call { expr: expr.clone() })
            .collect();
        (inputs, calls)
    }

    fn derived(&self, id: usize) -> bool {
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

    /// The passing programs and the peers as voters on `calls`, and the seed's behaviour there
    /// (for the prior on edits; it is a candidate when it passed).
    async fn selection_voters(
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

    /// The heaviest group holds no edit of the given program: bring one in. An edit (or the
    /// given program) set aside before the votes may behave as the group does: it comes first,
    /// being tested already. Else the given program is edited towards the group's behaviour;
    /// the smallest edit that now behaves so joins. `None` when nothing does.
    async fn bring_in(
        &mut self,
        ballot: &Ballot,
        heaviest: &Heaviest,
        calls: &[TestInput],
    ) -> Result<Option<Joined>, AgentError> {
        let voters = &ballot.voters;
        let Some(&head) = heaviest.members.first() else {
            return Ok(None);
        };
        // The seed is the majority's own member when it passed: nothing to repair then.
        if !heaviest.wants_an_edit() {
            return Ok(None);
        }
        let expected = voters.behaviours[head].clone();
        let members: Vec<String> = heaviest
            .members
            .iter()
            .map(|&i| {
                if voters.is_peer(i) {
                    self.peers[i - voters.candidates].clone()
                } else {
                    self.node(ballot.contenders[i].id).tested.program.clone()
                }
            })
            .collect();
        if let Some((id, behaviour, crashed)) = self
            .rejoin(&expected, members, calls, heaviest.support)
            .await?
        {
            // Its own runs: it joins the group only where it crashed beside a raise, and the
            // report shows what it did.
            return Ok(Some(Joined {
                id,
                behaviour,
                crashed,
            }));
        }
        let can_mutate = self
            .options
            .portfolio
            .iter()
            .any(|(p, _)| *p == Proposer::Mutate);
        if !can_mutate {
            return Ok(None);
        }
        let derived = Derived {
            calls: calls.to_vec(),
            expected,
            no_added_return: false,
        };
        let mut found = self.mutate(0, Some(&derived)).await?;
        if let (true, Some(edit)) = (found.is_empty(), heaviest.second_try) {
            found = self.mutate(edit, Some(&derived)).await?;
        }
        // It behaves as the majority on every input: join it.
        Ok(found
            .iter()
            .min_by_key(|&&id| (self.node(id).diff_lines, id))
            .map(|&id| Joined {
                id,
                behaviour: derived.expected.clone(),
                crashed: voters.crashed[head].clone(),
            }))
    }

    /// Passing programs set aside before the votes (`harden`: one raised on an argument
    /// emptied, or an edit did not keep the answers expected then) that behave as the heaviest
    /// group does on every extra input (`expected`) and as each of its `members` does on
    /// harden's probes (the visible calls with an argument emptied or a value taken from a
    /// sequence), or crash where they raise too: the independent programs do the
    /// same, so what set them aside was no fault (a docstring's "non-empty list" and an
    /// `IndexError` on `[]`). The given program first, then the smallest change; `None` when
    /// none does.
    async fn rejoin(
        &mut self,
        expected: &[String],
        members: Vec<String>,
        calls: &[TestInput],
        votes: usize,
    ) -> Result<Option<(usize, Vec<String>, Vec<bool>)>, AgentError> {
        // Each runs every extra input; the smallest changes are the ones worth returning.
        const CHECKED: usize = 32;
        let total = self.tests.len();
        let mut aside: Vec<usize> = self
            .candidates
            .iter()
            .filter(|c| {
                c.problem.is_some()
                    && c.visible_passed == Some(total)
                    && (c.proposer.derived() || c.proposer == Proposer::Seed)
                    && !self.passing.contains(&c.id)
                    && self.nodes.iter().any(|n| n.id == c.id)
            })
            .map(|c| c.id)
            .collect();
        aside.sort_by_key(|&id| (self.node(id).diff_lines, id));
        aside.truncate(CHECKED);
        if aside.is_empty() {
            return Ok(None);
        }
        // The probes that set them aside: the extra inputs may not hold them (`f([])`), and
        // there the group must do the same, or raise where they crash.
        let entry = &self.task.entry_point;
        let mut probes: Vec<TestInput> = Vec::new();
        for expr in emptied_inputs(self.tests, entry)
            .into_iter()
            .chain(member_inputs(self.tests, entry))
        {
            let call = TestInput::Call { expr };
            if !calls.contains(&call) && !probes.contains(&call) {
                probes.push(call);
            }
        }
        let on_probes = self.behaviours(members, &probes).await?;
        let all_calls: Vec<TestInput> = calls.iter().chain(&probes).cloned().collect();
        let programs = aside
            .iter()
            .map(|&id| self.node(id).tested.program.clone())
            .collect();
        let runs = self.behaviours(programs, &all_calls).await?;
        // Where the group raises too (on purpose or not), a crash is as good:
        // `ZeroDivisionError` beside `raise ValueError("empty")` on `mean([])`. Not where it
        // returns `None`: that may be the answer owed (`longest([])`).
        let like = |want: &str, got: &str, crashed: bool| {
            select::agrees(want, got) || (crashed && want.starts_with("raise "))
        };
        let n = calls.len();
        let alike = |b: &[String], crashed: &[bool]| {
            b.len() == all_calls.len()
                && (0..n).all(|i| like(&expected[i], &b[i], crashed[i]))
                && on_probes.behaviours.iter().all(|member| {
                    member.len() == probes.len()
                        && (0..probes.len()).all(|j| like(&member[j], &b[n + j], crashed[n + j]))
                })
        };
        let Some(index) =
            (0..runs.behaviours.len()).find(|&i| alike(&runs.behaviours[i], &runs.crashed[i]))
        else {
            return Ok(None);
        };
        let id = aside[index];
        let own = (
            runs.behaviours[index][..n].to_vec(),
            runs.crashed[index][..n].to_vec(),
        );
        let why = self
            .candidates
            .get_mut(id)
            .and_then(|c| c.problem.take())
            .unwrap_or_default();
        self.progress.event(ProgressEvent::Step {
            task_id: self.task.task_id.clone(),
            message: format!(
                "candidate {id} was set aside ({why}), but the {votes} independent vote(s) of \
                 the heaviest group behave as it does on the {} extra inputs{} (or raise too \
                 where it crashes): it is taken back",
                calls.len(),
                match probes.len() {
                    0 => String::new(),
                    p => format!(" and {p} probe(s)"),
                }
            ),
        });
        Ok(Some((id, own.0, own.1)))
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
