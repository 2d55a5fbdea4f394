//! The end of a search: which program is returned. One passing candidate is returned as is;
//! among several, every one runs on extra inputs and the largest group of identical behaviour
//! (or the highest agreement) wins.

use std::time::Instant;

use super::select::{self, groups, SelectRule};
use super::{extra_inputs, Search};
use crate::agent::progress::{Phase, ProgressEvent};
use crate::agent::report::{FixReport, FixStatus, SelectionReport};
use crate::agent::{ms, AgentError};
use crate::runner::{in_parallel, TestInput};

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
            [] => self.beam().first().copied().unwrap_or(0),
            [0] if self.candidates.len() > 1 => {
                self.progress.event(ProgressEvent::Notice {
                    task_id: self.task.task_id.clone(),
                    message: format!(
                        "the program passes the visible tests; none of the {} fresh programs \
                         drawn to check it did, so it is kept",
                        self.candidates.len() - 1
                    ),
                });
                0
            }
            [only] => *only,
            [first, ..] if !completed || self.votes_wanted() == 0 => *first,
            _ => self.select(report).await?,
        };
        let chosen_tested = &self.node(chosen).tested;
        report.final_program = chosen_tested.program.clone();
        report.final_passed = chosen_tested.passed;
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
        Ok(())
    }

    /// Run every passing candidate on extra inputs and take the first of the largest group.
    pub(super) async fn select(&mut self, report: &mut FixReport) -> Result<usize, AgentError> {
        self.phase(Phase::Selecting);
        let first = self.passing[0];
        let inputs = extra_inputs(
            self.tests,
            &self.task.entry_point,
            self.options.extra_inputs,
            self.fixer.options.rng_seed,
        );
        if inputs.is_empty() {
            return Ok(first);
        }
        let programs: Vec<String> = self
            .passing
            .iter()
            .map(|&id| self.node(id).tested.program.clone())
            .collect();
        let calls: Vec<TestInput> = inputs
            .iter()
            .map(|expr| TestInput::Call { expr: expr.clone() })
            .collect();
        let runner = self.fixer.runner.clone();
        let pairs: Vec<(usize, usize)> = (0..programs.len())
            .flat_map(|p| (0..calls.len()).map(move |c| (p, c)))
            .collect();
        let jobs = runner.jobs();
        let t = Instant::now();
        let results = tokio::task::spawn_blocking(move || {
            in_parallel(&pairs, jobs, |&(p, c)| {
                runner
                    .run(&programs[p], &calls[c], None)
                    .map(|o| select::behaviour(&o))
            })
        })
        .await
        .map_err(|e| AgentError::Internal(format!("selection worker thread: {e}")))?;
        self.round_tests_ms += ms(t.elapsed());
        let n_inputs = inputs.len();
        let mut behaviours: Vec<Vec<String>> =
            vec![Vec::with_capacity(n_inputs); self.passing.len()];
        for (i, r) in results.into_iter().enumerate() {
            let b = match r {
                Some(Ok(b)) => b,
                Some(Err(e)) => return Err(e.into()),
                None => "not run".into(),
            };
            behaviours[i / n_inputs].push(b);
        }
        // A duplicate of a passing program is one more sample that wrote it: a vote.
        let weights: Vec<usize> = self
            .passing
            .iter()
            .map(|&id| {
                1 + self
                    .candidates
                    .iter()
                    .filter(|c| c.duplicate_of == Some(id))
                    .count()
            })
            .collect();
        let groups = groups(&behaviours, &weights);
        let id_groups: Vec<Vec<usize>> = groups
            .iter()
            .map(|g| g.iter().map(|&i| self.passing[i]).collect())
            .collect();
        for (g, members) in id_groups.iter().enumerate() {
            for &id in members {
                if let Some(c) = self.candidates.get_mut(id) {
                    c.group = Some(g);
                }
            }
        }
        let chosen = match self.options.select_by {
            SelectRule::Groups => id_groups.first().and_then(|g| g.first()).copied(),
            SelectRule::Agreement => {
                let scores = select::agreement_scores(&behaviours, &weights);
                // The first of the highest score.
                let best = scores.iter().copied().max().unwrap_or(0);
                scores
                    .iter()
                    .position(|&s| s == best)
                    .and_then(|i| self.passing.get(i))
                    .copied()
            }
        }
        .unwrap_or(first);
        let signatures = self
            .passing
            .iter()
            .zip(&behaviours)
            .map(|(&id, b)| (id, b.iter().map(|x| select::behaviour_hash(x)).collect()))
            .collect();
        if first == 0 {
            // The seed passed on its own: say what the votes did to it.
            let votes: usize = id_groups.iter().map(Vec::len).sum::<usize>() - 1;
            let message =
                if chosen == 0 {
                    format!(
                    "the program passes the visible tests; {} of {votes} other passing programs \
                     agree with it on {} extra inputs, so it is kept",
                    id_groups.iter().find(|g| g.contains(&0)).map_or(0, |g| g.len() - 1),
                    inputs.len()
                )
                } else {
                    format!(
                    "the program passes the visible tests, but {} other passing programs agree \
                     with each other and not with it on {} extra inputs; one of them is returned \
                     (the report's selection lists the inputs)",
                    id_groups.first().map_or(0, Vec::len),
                    inputs.len()
                )
                };
            self.progress.event(ProgressEvent::Notice {
                task_id: self.task.task_id.clone(),
                message,
            });
        }
        report.selection = Some(SelectionReport {
            inputs,
            groups: id_groups,
            chosen,
            first_passing: first,
            first_passing_program: self.node(first).tested.program.clone(),
            signatures,
        });
        Ok(chosen)
    }
}
