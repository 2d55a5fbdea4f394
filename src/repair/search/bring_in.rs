//! Bringing an edit into the heaviest group when it holds none: a program set aside before the
//! votes that behaves as the group does is taken back, else the given program is edited towards
//! the group's behaviour (see `choose`'s overview).

use crate::repair::progress::ProgressEvent;
use crate::repair::search::decide::{Ballot, Heaviest};
use crate::repair::search::mutate::Derived;
use crate::repair::search::select;
use crate::repair::search::{emptied_inputs, member_inputs, Proposer, Search};
use crate::repair::AgentError;
use crate::run::TestInput;

/// A program brought into the heaviest group, with what it did on the extra inputs.
pub(super) struct Joined {
    pub id: usize,
    pub behaviour: Vec<String>,
    pub crashed: Vec<bool>,
}

impl Search<'_> {
    /// The heaviest group holds no edit of the given program: bring one in. An edit (or the
    /// given program) set aside before the votes may behave as the group does: it comes first,
    /// being tested already. Else the given program is edited towards the group's behaviour;
    /// the smallest edit that now behaves so joins. `None` when nothing does.
    pub(super) async fn bring_in(
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
                    self.voting.peers[i - voters.candidates].clone()
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
}
