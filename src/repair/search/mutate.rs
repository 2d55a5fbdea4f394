//! The `mutate` proposer: model-free single edits of a parent at the statements fault
//! localisation ranks most suspicious, each run on the visible tests in the warm sandbox. No
//! tokens; milliseconds per edit.
//!
//! The parent is localised on the visible tests, and on the derived tests when independent
//! candidates have agreed on extra inputs (each input with the agreed behaviour is one more
//! passing or failing run). Edits of the most suspicious statements come first. Each edit runs
//! under a short time limit (a loop whose bound an edit broke would otherwise cost the full
//! limit), and its tests stop at the first one that times out.

use std::time::Instant;

use crate::locate::{localise_runs, observe, Observation};
use crate::python::edits::{edits_with, EditKind};
use crate::python::normalize::program_key;
use crate::repair::record::{CandidateRecord, EditRecord};
use crate::repair::search::select::{agrees, behaviour};
use crate::repair::search::{Proposer, Search};
use crate::repair::{ms, AgentError, Tested};
use crate::run::{in_parallel, TestInput, TestOutcome, TestStatus};
use crate::task::ProgramScope;

/// Tests an edit must pass beyond the visible ones: extra inputs with the behaviour the
/// heaviest group of independent candidates showed on them, or the given program's own
/// answers with any answer where it raised (`harden`).
#[derive(Debug, Clone, Default)]
pub(super) struct Derived {
    pub calls: Vec<TestInput>,
    pub expected: Vec<String>,
    /// Leave out `return` statements added at the end: where any answer will do, one made up
    /// at the end says nothing of which answer is right (`harden`'s second look).
    pub no_added_return: bool,
}

/// Regression tests observed for localisation, at most.
const LOCATE_GUARDS: usize = 8;
/// The share of a project's time limit one parent's edits may take.
const MUTATE_SHARE: f64 = 0.5;

/// Edits of a project's function tried between looks at the clock and at what passed.
const PROJECT_GROUP: usize = 96;

/// One tested edit.
struct Tried {
    edit: crate::python::edits::Edit,
    rank: usize,
    outcomes: Vec<TestOutcome>,
    passed: usize,
    /// Derived tests passed (all of them when there are none).
    derived_ok: bool,
    ms: u64,
}

impl Search<'_> {
    /// Edit `parent` at its suspicious statements and test every new edit. Returns the ids of
    /// the edits that pass every visible test (and the derived ones, when given).
    pub(super) async fn mutate(
        &mut self,
        parent: usize,
        derived: Option<&Derived>,
    ) -> Result<Vec<usize>, AgentError> {
        self.mutate_with(parent, derived, Vec::new()).await
    }

    /// [`Self::mutate`], with `extra` edits (made elsewhere) tried after the usual ones (so a
    /// single edit comes first among equally small changes).
    pub(super) async fn mutate_with(
        &mut self,
        parent: usize,
        derived: Option<&Derived>,
        extra: Vec<crate::python::edits::Edit>,
    ) -> Result<Vec<usize>, AgentError> {
        let program = self.node(parent).tested.program.clone();
        let started = Instant::now();
        let runner = self.fixer.runner.clone();
        let visible = self.tests.to_vec();
        let derived_calls: Vec<TestInput> = derived.map(|d| d.calls.clone()).unwrap_or_default();
        let expected: Vec<String> = derived.map(|d| d.expected.clone()).unwrap_or_default();
        let no_added_return = derived.is_some_and(|d| d.no_added_return);
        let top = self.options.locate_top;
        let limit = self.options.mutate_limit;
        // How long a run of the parent took when it finished (a parent that loops tells
        // nothing about how long a good run takes).
        let parent_ms = self
            .node(parent)
            .tested
            .outcomes
            .iter()
            .filter(|o| o.status != TestStatus::Timeout)
            .map(|o| o.elapsed_ms)
            .max()
            .unwrap_or(0);
        let seen: std::collections::HashSet<String> = self.seen.keys().cloned().collect();
        let lines: Vec<u32> = self
            .suspects(parent, derived)
            .await?
            .into_iter()
            .map(|(first, _)| first)
            .take(top)
            .collect();
        let entry = self.task.entry_point.clone();
        // What the failing tests saw guides edits of every statement of the function.
        let mut hints = super::hints::hints(&self.node(parent).tested.outcomes);
        hints.used_none &= self.options.none_checks;
        let value_range = self
            .entry_lines(&program)
            .or_else(|| crate::python::splice::def_lines(&program, &entry))
            .filter(|_| self.options.value_edits);
        let counter_start = self.options.counter_start;
        // A project's edits are many and each costs a test session's share: one parent's
        // edits get at most half the time limit, so the model's patches get their turn.
        let deadline = self.options.time_limit.map(|limit| {
            let end = self.started + limit;
            if self.fixer.runner.project().is_some() {
                end.min(Instant::now() + limit.mul_f64(MUTATE_SHARE))
            } else {
                end
            }
        });
        let work = move || -> Result<(Vec<u32>, Vec<Tried>), crate::run::sandbox::SandboxError> {
            let candidates: Vec<_> = edits_with(&program, &lines, limit, &hints, value_range)
                .into_iter()
                .chain(extra)
                .filter(|e| !(no_added_return && e.kind == EditKind::Return))
                .filter(|e| counter_start || e.kind != EditKind::Start)
                .filter(|e| !seen.contains(&program_key(&e.program)))
                .collect();
            // A quick program takes milliseconds; an edit that loops gets a second at most.
            let quick = runner.with_wall_ms((parent_ms * 10).clamp(1000, 3000));
            // In a project the edits go in groups: each group's edits run with the function
            // swapped into one session per few dozen edits (one that passes there is run the
            // ordinary way too), and after a group that found a fix, or past the time limit,
            // the rest are left.
            let in_project = runner.project().is_some();
            let group = if in_project {
                PROJECT_GROUP
            } else {
                candidates.len().max(1)
            };
            let mut rest = candidates;
            let mut out = Vec::with_capacity(rest.len());
            while !rest.is_empty() {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    break;
                }
                let take = rest.len().min(group);
                let chunk: Vec<crate::python::edits::Edit> = rest.drain(..take).collect();
                let swapped: Vec<Option<Vec<TestOutcome>>> = if in_project {
                    let programs: Vec<String> = chunk.iter().map(|e| e.program.clone()).collect();
                    quick.run_swapped(&program, &entry, &programs, &visible)
                } else {
                    chunk.iter().map(|_| None).collect()
                };
                let indexed: Vec<(usize, &crate::python::edits::Edit)> =
                    chunk.iter().enumerate().collect();
                let tried = in_parallel(&indexed, runner.jobs(), |(i, edit)| {
                    let t = Instant::now();
                    // Stops at the first test that times out (pytest nodes: one session).
                    let outcomes = match swapped.get(*i).cloned().flatten() {
                        Some(outcomes) if outcomes.iter().any(|o| !o.passed()) => outcomes,
                        _ => quick.run_in_order(&edit.program, &visible)?,
                    };
                    let passed = outcomes.iter().filter(|o| o.passed()).count();
                    let mut derived_ok = true;
                    if passed == visible.len() {
                        for (call, want) in derived_calls.iter().zip(&expected) {
                            let o = quick.run(&edit.program, call, None)?;
                            if !agrees(want, &behaviour(&o)) {
                                derived_ok = false;
                                break;
                            }
                        }
                    }
                    Ok::<_, crate::run::sandbox::SandboxError>((
                        outcomes,
                        passed,
                        derived_ok,
                        ms(t.elapsed()),
                    ))
                });
                for (edit, r) in chunk.into_iter().zip(tried) {
                    let Some(r) = r else { continue };
                    let (outcomes, passed, derived_ok, ms) = r?;
                    let rank = lines
                        .iter()
                        .position(|l| *l == edit.line)
                        .unwrap_or(usize::MAX);
                    out.push(Tried {
                        edit,
                        rank,
                        outcomes,
                        passed,
                        derived_ok,
                        ms,
                    });
                }
                if in_project
                    && out
                        .iter()
                        .any(|t| t.passed == visible.len() && t.derived_ok)
                {
                    break;
                }
            }
            Ok((lines, out))
        };
        let (lines, tried) = tokio::task::spawn_blocking(work)
            .await
            .map_err(|e| AgentError::Internal(format!("mutate worker thread: {e}")))??;
        self.round.tests_ms += ms(started.elapsed());
        let parent_passed = self.node(parent).tested.passed;
        let parent_errors = self.node(parent).errors;
        let parent_unbound = unbound_names(&self.node(parent).tested.outcomes);
        let total = self.tests.len();
        let mut passing = Vec::new();
        let tried_count = tried.len();
        for mut t in tried {
            if let Some(seed) = self.nodes.first() {
                if crate::run::hold_to_given(&mut t.outcomes, &seed.tested.outcomes) > 0 {
                    t.passed = t.outcomes.iter().filter(|o| o.passed()).count();
                }
            }
            let key = program_key(&t.edit.program);
            if self.seen.contains_key(&key) {
                continue;
            }
            let id = self.candidates.len();
            self.seen.insert(key, id);
            let errors = t
                .outcomes
                .iter()
                .filter(|o| !matches!(o.status, TestStatus::Passed | TestStatus::Failed))
                .count();
            let plausible = t.passed == total && t.derived_ok;
            // Keep what can lead somewhere: passes, or gets further than its parent. A name the
            // parent's runs could not read, defined (`undefined ele → elem`, `position = 0`), is
            // a slip mended even when a second slip still fails the same tests.
            let mends_a_name = matches!(
                t.edit.kind,
                EditKind::Rename | EditKind::Start | EditKind::Import
            ) && !parent_unbound.is_empty()
                && unbound_names(&t.outcomes).is_disjoint(&parent_unbound);
            let keep = t.passed == total
                || t.passed > parent_passed
                || (t.passed == parent_passed && errors < parent_errors)
                || (mends_a_name && t.passed == parent_passed && errors <= parent_errors);
            let diff_lines =
                crate::repair::search::node::changed_lines(&self.seed_program, &t.edit.program);
            self.candidates.push(CandidateRecord {
                id,
                round: self.round.number,
                proposer: Proposer::Mutate,
                parent: Some(parent),
                program: keep.then(|| t.edit.program.clone()),
                duplicate_of: None,
                visible_passed: Some(t.passed),
                errors,
                diff_lines,
                tokens: 0,
                wall_ms: t.ms,
                group: None,
                problem: (t.passed == total && !t.derived_ok).then(|| {
                    "passes the visible tests, not the behaviour expected on extra inputs".into()
                }),
                edit: Some(EditRecord {
                    line: t.edit.line,
                    rank: t.rank,
                    description: t.edit.description.clone(),
                }),
            });
            if !keep {
                continue;
            }
            if t.passed == total {
                self.progress
                    .event(crate::repair::progress::ProgressEvent::Tested {
                        task_id: self.task.task_id.clone(),
                        iteration: self.round.number,
                        candidate: Some(id),
                        passed: t.passed,
                        total,
                        first_failure: None,
                    });
                if t.derived_ok {
                    self.passing.push(id);
                }
            }
            self.nodes.push(super::node::Node {
                id,
                tested: Tested {
                    program: t.edit.program,
                    outcomes: t.outcomes,
                    passed: t.passed,
                },
                errors,
                diff_lines,
            });
            if plausible {
                passing.push(id);
            }
        }
        let shown: Vec<String> = lines.iter().take(5).map(|l| l.to_string()).collect();
        self.progress
            .event(crate::repair::progress::ProgressEvent::Step {
                task_id: self.task.task_id.clone(),
                message: format!(
                "mutate: {tried_count} edits of candidate {parent} at its most suspicious lines \
                 ({}{}), {} pass{}",
                shown.join(", "),
                if lines.len() > 5 { ", ..." } else { "" },
                passing.len(),
                if derived.is_some() {
                    " and behave as expected on extra inputs"
                } else {
                    " the visible tests"
                }
            ),
            });
        Ok(passing)
    }

    /// The statements of `parent` most likely wrong, as line ranges, most suspicious first:
    /// localised on the visible tests, and on the derived tests when given. Only statements of
    /// the function under test when the task repairs one function of a module. Kept per
    /// parent (without derived tests).
    pub(super) async fn suspects(
        &mut self,
        parent: usize,
        derived: Option<&Derived>,
    ) -> Result<Vec<(u32, u32)>, AgentError> {
        if derived.is_none() {
            if let Some(found) = self.memo.localised.get(&parent) {
                return Ok(found.clone());
            }
        }
        let program = self.node(parent).tested.program.clone();
        let entry_lines = self.entry_lines(&program);
        let runner = self.fixer.runner.clone();
        // Every test the program must fix, and a few of the regression tests: each run here
        // is traced on its own, and a few passing runs tell the spectrum what most would.
        let mut guards = 0;
        let visible: Vec<TestInput> = self
            .tests
            .iter()
            .filter(|t| {
                if !t.is_guard() {
                    return true;
                }
                guards += 1;
                guards <= LOCATE_GUARDS
            })
            .cloned()
            .collect();
        let derived_calls: Vec<TestInput> = derived.map(|d| d.calls.clone()).unwrap_or_default();
        let expected: Vec<String> = derived.map(|d| d.expected.clone()).unwrap_or_default();
        let started = Instant::now();
        let work = move || -> Result<Vec<(u32, u32)>, crate::run::sandbox::SandboxError> {
            let Ok(observable) = crate::locate::observable(&runner, &program, &visible) else {
                return Ok(Vec::new());
            };
            let mut runs: Vec<TestInput> = visible.clone();
            runs.extend(derived_calls.iter().cloned());
            let outcomes = observe(&runner, &observable, &runs)?;
            let observations: Vec<Observation> = outcomes
                .iter()
                .enumerate()
                .map(|(i, o)| {
                    let passed = match i.checked_sub(visible.len()) {
                        None => o.passed(),
                        Some(d) => expected.get(d).is_some_and(|e| agrees(e, &behaviour(o))),
                    };
                    observable.observation(o, passed)
                })
                .collect();
            let loc = localise_runs(
                &observable,
                &observations,
                &crate::locate::Signals::default(),
            );
            Ok(loc
                .suspects
                .iter()
                .map(|s| &loc.statements[s.stmt])
                .filter(|st| entry_lines.is_none_or(|(a, b)| a <= st.first && st.first <= b))
                .map(|st| (st.first, st.last))
                .collect())
        };
        let found = tokio::task::spawn_blocking(work)
            .await
            .map_err(|e| AgentError::Internal(format!("localisation worker thread: {e}")))??;
        self.round.tests_ms += ms(started.elapsed());
        if derived.is_none() {
            self.memo.localised.insert(parent, found.clone());
        }
        Ok(found)
    }

    /// For a function inside the user's module, the lines of that function: edits stay in it.
    fn entry_lines(&self, program: &str) -> Option<(u32, u32)> {
        if self.task.scope != ProgramScope::Function {
            return None;
        }
        crate::python::splice::def_lines(program, &self.task.entry_point)
    }
}

/// The messages of the runs that read a name with no value (`NameError`,
/// `UnboundLocalError`): each says which name.
fn unbound_names(outcomes: &[TestOutcome]) -> std::collections::HashSet<String> {
    outcomes
        .iter()
        .filter_map(|o| o.exception.as_ref())
        .filter(|e| matches!(e.kind.as_str(), "NameError" | "UnboundLocalError"))
        .map(|e| e.message.clone())
        .collect()
}
