//! Repair by search: each round proposes several candidate programs from a portfolio of
//! proposers, tests every new one on the visible tests, and carries the best few to the next
//! round; among candidates that pass, extra inputs pick the one most others agree with.
//!
//! Why not LDB's chain (one program, one verdict, one regeneration)? With a small model the
//! verdicts are often wrong and regenerations often unchanged, and fresh samples filtered by the
//! tests fix more (Olausson et al., ICLR 2024). Here the trace and the verdicts are one proposer
//! among others, and execution decides:
//! - proposers ([`Proposer`]): test-feedback repair, LDB repair (trace + verdicts constrained to
//!   the block labels), fresh generation; repairs work on the programs of the beam, best first;
//! - every reply is extracted and normalised ([`crate::python::normalize`]); a program already
//!   seen is recorded as a duplicate and never run again;
//! - the beam keeps the best `beam` programs: most visible tests passed, then fewer errors, then
//!   the smaller change from the seed;
//! - samples of one prompt share it (the embedded model keeps its KV prefix, so the prompt is
//!   evaluated once), and each gets its own seed so samples differ and reruns repeat them;
//! - the run stops at the first visible pass, or `select` candidates later, or when the token
//!   budget or `max_candidates` is spent; with more than one passing candidate, `select`
//!   chooses by agreement on extra inputs (`inputs`).
//!
//! Parts: `options` (settings, portfolio syntax), `proposals` (each proposer's prompt), `sample`
//! (samples drawn, every candidate tested and recorded), `mutate` and `patch` (edits of the given
//! program), `complete` (functions it leaves unwritten, written), `harden` (a passing program that
//! raises on extra inputs), `budget` (what a request costs, what the rest of the budget pays for),
//! `choose` (the program returned; `decide`, its decision as plain data; `votes`, the programs run
//! to vote; `bring_in`, an edit brought into a heaviest group that holds none), `select` and
//! `inputs` (grouping by behaviour on extra inputs), `node` (a tested program and its rank in the
//! beam).

mod bring_in;
mod budget;
mod choose;
mod complete;
mod decide;
mod harden;
mod hints;
mod inputs;
mod mutate;
mod node;
mod options;
mod patch;
mod peers;
mod proposals;
mod rank;
mod sample;
mod select;
mod votes;

use std::collections::HashMap;
use std::time::Instant;

pub use crate::repair::record::{CandidateRecord, Proposer, SelectionReport};
pub use inputs::{emptied_inputs, extra_inputs, extra_inputs_with, member_inputs};
pub use options::{PortfolioError, Rule, RuleListError, SearchOptions};
pub use patch::{patch_request, sample_patch, PatchForm, PatchSite, Patched};
pub use select::{behaviour, groups, SelectRule};

use crate::generate::reply::verdicts::Verdict;
use crate::repair::progress::{Phase, Progress, ProgressEvent};
use crate::repair::record::{CallRecord, FixReport, IterationReport, TestResult, Timings};
use crate::repair::{seed, unified_diff, AgentError, Fixer};
use crate::run::TestInput;
use crate::task::Task;
use node::Node;
use sample::sample_seed;

/// The verdict exchange of one parent, kept so a parent that stays in the beam is traced and
/// judged once.
#[derive(Clone)]
struct Judged {
    messages: Vec<crate::generate::model::Message>,
    traced_test: String,
    trace: String,
    verdicts: Vec<Verdict>,
    problem: Option<String>,
    calls: Vec<CallRecord>,
    trace_ms: u64,
}

struct Search<'a> {
    fixer: &'a Fixer,
    task: &'a Task,
    tests: &'a [TestInput],
    options: &'a SearchOptions,
    progress: &'a dyn Progress,
    seed_program: String,
    nodes: Vec<Node>,
    seen: HashMap<String, usize>,
    candidates: Vec<CandidateRecord>,
    /// Ids of candidates that pass every visible test, in order found.
    passing: Vec<usize>,
    spent: u64,
    /// The round in progress.
    round: Round,
    /// What the proposers remember between rounds.
    memo: Memo,
    /// The votes' state beyond the candidates themselves.
    voting: Voting,
    /// When the search began (its time limit counts from here).
    started: Instant,
}

/// The round in progress: its number and what its iteration report shows.
#[derive(Default)]
struct Round {
    number: usize,
    /// Calls and notes of the round, for its iteration report.
    calls: Vec<CallRecord>,
    /// The round's first verdict exchange, shown in its iteration report.
    trace: Option<Judged>,
    tests_ms: u64,
}

/// What the proposers remember between rounds, so that nothing is asked or done twice.
#[derive(Default)]
struct Memo {
    /// Each parent's verdict exchange: a parent that stays in the beam is traced and judged once.
    judged: HashMap<usize, Judged>,
    /// Prompts already sent (hashes): the backend keeps them, so asking again costs the reply.
    sent: std::collections::HashSet<u64>,
    /// Reply tokens of the program requests so far, for estimating the next one.
    reply_tokens: (u64, u64),
    /// Repairs (proposer, parent) that gave the parent back unchanged: the same prompt would
    /// most likely do it again, so they are not asked again.
    stale: std::collections::HashSet<(Proposer, usize)>,
    /// Fresh samples drawn so far (their order, for `fresh_as_resample`).
    fresh_drawn: u64,
    /// Parents `mutate` has edited.
    mutated: std::collections::HashSet<usize>,
    /// Parents `complete` has written the placeholders of.
    completed: std::collections::HashSet<usize>,
    /// Each parent's suspicious statements (line ranges), most suspicious first.
    localised: HashMap<usize, Vec<(u32, u32)>>,
}

/// The votes' state beyond the candidates that cast them.
#[derive(Default)]
struct Voting {
    /// Votes drawn beyond `select`/`verify` because the heaviest groups tied (`tie_votes`).
    tie_breaks: usize,
    /// The votes left cannot change the choice (`settle_votes`): none more are drawn.
    settled: bool,
    /// The task's peers that pass the visible tests: votes at no token cost (`peers`).
    peers: Vec<String>,
    /// The peers' behaviours on the selection's extra inputs (fixed for the task), once run.
    peer_behaviours: Option<peers::Runs>,
}

/// What the model does for a task no text describes, in place of fresh programs.
const UNTOLD_REPAIRS: &[(Proposer, usize)] = &[(Proposer::Patch, 2)];

/// Why the search stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Solved,
    Budget,
}

/// Run the search for `task`, filling `report`. Errors are backend or sandbox failures; the
/// report then holds what was found so far.
pub(super) async fn run(
    fixer: &Fixer,
    task: &Task,
    tests: &[TestInput],
    options: &SearchOptions,
    report: &mut FixReport,
    progress: &dyn Progress,
) -> Result<(), AgentError> {
    let id = task.task_id.clone();
    progress.event(ProgressEvent::Phase {
        task_id: id.clone(),
        iteration: 0,
        phase: Phase::Seeding,
    });
    report.seed = seed::obtain(task, &fixer.seed, &*fixer.generator, &fixer.prompts).await?;
    fixer.report_tokens(&id, &report.seed.calls, progress);
    let seed_program = report.seed.program.clone();
    report.final_program = seed_program.clone();
    // A function no text describes: its tests are its whole spec, and a program written
    // afresh from them learns the tests, not the function.
    let untold;
    let options = if task.repairs_only() {
        untold = options.for_untold(UNTOLD_REPAIRS);
        &untold
    } else {
        options
    };

    let mut search = Search {
        fixer,
        task,
        tests,
        options,
        progress,
        seed_program: seed_program.clone(),
        nodes: Vec::new(),
        seen: HashMap::new(),
        candidates: Vec::new(),
        passing: Vec::new(),
        spent: 0,
        round: Round::default(),
        memo: Memo::default(),
        voting: Voting::default(),
        started: Instant::now(),
    };
    let outcome = search.explore(report).await;
    search.finish(report, outcome.is_ok()).await?;
    outcome
}

impl Search<'_> {
    async fn explore(&mut self, report: &mut FixReport) -> Result<(), AgentError> {
        let seed = self.seed_program.clone();
        self.phase(Phase::Testing);
        self.consider(0, Proposer::Seed, None, Some(seed), None, Vec::new(), 0)
            .await?;
        report.iterations.push(self.iteration_of(0, 0));
        self.admit_peers().await?;
        let can_mutate = self
            .options
            .portfolio
            .iter()
            .any(|(p, _)| *p == Proposer::Mutate);
        if self.passing == [0] {
            self.harden(self.options.harden && can_mutate).await?;
        }
        self.finish_passing().await?;
        let can_verify = self.options.verify > 0
            && self
                .options
                .portfolio
                .iter()
                .any(|(p, _)| *p == Proposer::Fresh);
        if !self.passing.is_empty() && !can_verify {
            return Ok(());
        }
        let rounds = self.fixer.options.max_iters;
        for round in 1..=rounds {
            self.round.number = round;
            self.round.calls.clear();
            self.round.trace = None;
            self.round.tests_ms = 0;
            self.phase(Phase::Proposing);
            let parents: Vec<usize> = self.beam();
            let mut stop = self.propose_round(&parents).await;
            if stop.is_ok() {
                if let Err(e) = self.finish_passing().await {
                    stop = Err(e);
                }
            }
            // The round's record: the best parent, what was asked about it, and its calls.
            let head = parents.first().copied().unwrap_or(0);
            let mut it = self.iteration_of(round, head);
            it.calls = std::mem::take(&mut self.round.calls);
            it.timings.tests_ms = self.round.tests_ms;
            if let Some(judged) = self.round.trace.take() {
                it.traced_test = Some(judged.traced_test);
                it.trace = Some(judged.trace);
                it.verdicts = judged.verdicts;
                it.verdict_problem = judged.problem;
                it.timings.trace_ms = judged.trace_ms;
            }
            if let Some(best) = self.beam().first().copied() {
                if best != head {
                    it.diff = Some(unified_diff(
                        &self.node(head).tested.program,
                        &self.node(best).tested.program,
                    ));
                }
            }
            self.fixer
                .report_tokens(&self.task.task_id, &it.calls, self.progress);
            report.iterations.push(it);
            match stop? {
                // The votes are in but two groups weigh the same: one more vote decides.
                Some(Stop::Solved) if self.votes_tied().await? => {}
                Some(Stop::Budget) => {
                    self.say_where_it_stopped();
                    break;
                }
                Some(_) => break,
                None => {}
            }
        }
        Ok(())
    }

    /// A notice of why the search stopped short (time or tokens) and what it tried.
    fn say_where_it_stopped(&self) {
        if !self.passing.is_empty() {
            return;
        }
        let why = if self.out_of_time() {
            format!(
                "its {} s are spent (--time-limit)",
                self.options.time_limit.map_or(0, |t| t.as_secs())
            )
        } else if self.spent_budget() {
            format!(
                "its {} tokens are spent (--budget-tokens)",
                self.budget_tokens().unwrap_or(0)
            )
        } else {
            return;
        };
        let mut tried: Vec<String> = Vec::new();
        for proposer in [
            Proposer::Mutate,
            Proposer::Patch,
            Proposer::Feedback,
            Proposer::Ldb,
            Proposer::Fresh,
            Proposer::Complete,
        ] {
            let n = self
                .candidates
                .iter()
                .filter(|c| c.proposer == proposer)
                .count();
            if n > 0 {
                tried.push(format!("{n} {}", proposer.name()));
            }
        }
        self.progress.event(ProgressEvent::Notice {
            task_id: self.task.task_id.clone(),
            message: format!(
                "stopped: {why}; tried {} candidate(s) ({}), none passes every test; the best \
                 passes {} of {}",
                self.candidates.len().saturating_sub(1),
                tried.join(", "),
                self.beam()
                    .first()
                    .map_or(0, |&b| self.node(b).tested.passed),
                self.tests.len()
            ),
        });
    }

    /// One round: the proposers in portfolio order; a repair proposer works on every parent
    /// that still fails a test (best first), a fresh one once.
    async fn propose_round(&mut self, parents: &[usize]) -> Result<Option<Stop>, AgentError> {
        let failing: Vec<usize> = parents
            .iter()
            .copied()
            .filter(|&p| self.node(p).tested.passed < self.tests.len())
            .collect();
        let mut jobs: Vec<(Proposer, Option<usize>, usize)> = Vec::new();
        for &(proposer, k) in &self.options.portfolio {
            match proposer {
                Proposer::Feedback | Proposer::Ldb | Proposer::Patch => {
                    jobs.extend(failing.iter().map(|&p| (proposer, Some(p), k)))
                }
                // A parent's placeholders are written once: its later rounds would ask again.
                Proposer::Complete => jobs.extend(
                    failing
                        .iter()
                        .filter(|p| !self.memo.completed.contains(p))
                        .map(|&p| (proposer, Some(p), k)),
                ),
                // Each parent is edited once: the same edits would come back.
                Proposer::Mutate => jobs.extend(
                    failing
                        .iter()
                        .filter(|p| !self.memo.mutated.contains(p))
                        .map(|&p| (proposer, Some(p), k)),
                ),
                Proposer::Fresh => jobs.push((proposer, None, k)),
                Proposer::Seed => {}
            }
        }
        let has_fresh = jobs.iter().any(|(p, _, _)| *p == Proposer::Fresh);
        let mut proposed_any = false;
        if self.selecting() && has_fresh {
            // Votes for the selection come from independent samples: fresh programs, which
            // are also the cheapest to draw.
            let wanted = self.votes_wanted();
            jobs.retain(|(p, _, _)| *p == Proposer::Fresh);
            for job in &mut jobs {
                job.2 = wanted;
            }
        }
        for (proposer, parent, k) in jobs {
            if let Some(stop) = self.should_stop() {
                return Ok(Some(stop));
            }
            if self.selecting() && has_fresh && proposer != Proposer::Fresh {
                continue;
            }
            if parent.is_some_and(|p| self.memo.stale.contains(&(proposer, p))) {
                continue;
            }
            if proposer == Proposer::Mutate {
                let p = parent.unwrap_or(0);
                self.memo.mutated.insert(p);
                let found = self.mutate(p, None).await?;
                self.harden_found(&found).await?;
                // Edits of the edits that got furthest: two slips need two edits, and they
                // cost no tokens.
                let mut frontier = if found.is_empty() {
                    vec![p]
                } else {
                    Vec::new()
                };
                for _ in 1..self.options.mutate_depth {
                    let children = self.best_children(&frontier);
                    frontier.clear();
                    for c in children {
                        if !self.memo.mutated.insert(c) {
                            continue;
                        }
                        let found = self.mutate(c, None).await?;
                        self.harden_found(&found).await?;
                        if found.is_empty() {
                            frontier.push(c);
                        }
                        if !self.passing.is_empty() {
                            break;
                        }
                    }
                    if !self.passing.is_empty() {
                        break;
                    }
                }
                self.finish_passing().await?;
                proposed_any = true;
                continue;
            }
            if proposer == Proposer::Patch {
                self.patch(parent.unwrap_or(0), k).await?;
                proposed_any = true;
                continue;
            }
            if proposer == Proposer::Complete {
                let p = parent.unwrap_or(0);
                self.memo.completed.insert(p);
                proposed_any |= self.complete(p, k).await?;
                continue;
            }
            let conv = match proposer {
                Proposer::Mutate | Proposer::Patch | Proposer::Complete => continue,
                Proposer::Feedback => self.feedback_conversation(parent.unwrap_or(0))?,
                Proposer::Ldb => match self.ldb_conversation(parent.unwrap_or(0)).await? {
                    Some(conv) => conv,
                    None => continue,
                },
                Proposer::Fresh => self.fresh_conversation()?,
                Proposer::Seed => continue,
            };
            let model = self.model_of(proposer);
            let mut drawn = 0;
            while drawn < k {
                if let Some(stop) = self.should_stop() {
                    return Ok(Some(stop));
                }
                if self.selecting() && has_fresh && proposer != Proposer::Fresh {
                    break;
                }
                if parent.is_some_and(|p| self.memo.stale.contains(&(proposer, p))) {
                    break;
                }
                // Samples the budget cannot pay for are not started; a cheaper job later in
                // the round (a prompt the backend already holds) may still fit. A backend that
                // batches gets the job's samples in one call; otherwise one at a time, so a
                // pass ends the repairs at once.
                let together = model.batches()
                    && !self.as_resample(proposer)
                    && (self.selecting() || !self.options.batch_votes_only);
                let wanted = if together { k - drawn } else { 1 };
                let n = self.affordable(&conv, wanted);
                if n == 0 {
                    break;
                }
                self.sample(&conv, proposer, parent, drawn, n).await?;
                drawn += n;
                proposed_any = true;
                if self.selecting() {
                    self.settle_votes().await?;
                }
            }
        }
        if !proposed_any && (self.budget_tokens().is_some() || self.out_of_time()) {
            // Nothing fitted in what is left of the budget.
            return Ok(Some(Stop::Budget));
        }
        Ok(self.should_stop())
    }

    /// A candidate passes the visible tests: the search now only gathers votes.
    fn selecting(&self) -> bool {
        !self.passing.is_empty()
    }

    fn should_stop(&self) -> Option<Stop> {
        let proposed = self.model_proposals();
        if let Some(&first) = self.passing.first() {
            let wanted = self.votes_wanted();
            let can_vote = self.options.portfolio.iter().any(|(p, _)| p.independent());
            if wanted == 0 || !can_vote || self.votes_after(first) >= wanted || self.voting.settled
            {
                return Some(Stop::Solved);
            }
            if self.votes_hopeless(first) {
                return Some(Stop::Solved);
            }
        }
        if self.spent_budget() || proposed >= self.options.max_candidates {
            return Some(Stop::Budget);
        }
        None
    }

    /// The kept edits of `parents`, best first, as many as the beam holds.
    fn best_children(&self, parents: &[usize]) -> Vec<usize> {
        let mut kids: Vec<&Node> = self
            .nodes
            .iter()
            .filter(|n| {
                self.candidates.get(n.id).is_some_and(|c| {
                    c.proposer == Proposer::Mutate && c.parent.is_some_and(|p| parents.contains(&p))
                })
            })
            .collect();
        kids.sort_by_key(|n| n.rank());
        kids.into_iter()
            .take(self.options.beam.max(1))
            .map(|n| n.id)
            .collect()
    }

    /// Candidates the model proposed: model-free edits cost no tokens, so the caps on
    /// proposals do not count them.
    fn model_proposals(&self) -> usize {
        self.candidates
            .iter()
            .filter(|c| !matches!(c.proposer, Proposer::Seed | Proposer::Mutate))
            .count()
    }

    /// With `harden`, check the edits `found` that pass the visible tests on inputs made
    /// from them (see `harden`).
    async fn harden_found(&mut self, found: &[usize]) -> Result<(), AgentError> {
        if self.options.harden && !found.is_empty() {
            self.harden_edits(found).await?;
        }
        Ok(())
    }

    /// Ids of the best `beam` programs so far.
    fn beam(&self) -> Vec<usize> {
        let mut order: Vec<&Node> = self.nodes.iter().collect();
        order.sort_by_key(|n| n.rank());
        order
            .into_iter()
            .take(self.options.beam.max(1))
            .map(|n| n.id)
            .collect()
    }

    fn node(&self, id: usize) -> &Node {
        // Every parent id comes from `nodes`; the seed is always node 0.
        self.nodes
            .iter()
            .find(|n| n.id == id)
            .unwrap_or(&self.nodes[0])
    }

    fn phase(&self, phase: Phase) {
        self.progress.event(ProgressEvent::Phase {
            task_id: self.task.task_id.clone(),
            iteration: self.round.number,
            phase,
        });
    }

    /// The iteration record of `round`, showing candidate `id`'s program and results.
    fn iteration_of(&self, round: usize, id: usize) -> IterationReport {
        let tested = &self.node(id).tested;
        IterationReport {
            index: round,
            program: tested.program.clone(),
            tests: tested
                .outcomes
                .iter()
                .map(|o| TestResult {
                    test: o.test.describe(),
                    status: o.status,
                    summary: o.summary.clone(),
                })
                .collect(),
            passed: tested.passed,
            traced_test: None,
            trace: None,
            verdicts: Vec::new(),
            verdict_problem: None,
            explanation: None,
            diff: None,
            regeneration_problem: None,
            calls: Vec::new(),
            timings: Timings::default(),
        }
    }
}
