//! What a run does: the tasks it picks, where it writes, and the settings each results file
//! records in its header.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::eval::fix::datasets::{LoadedDataset, SeedSpec};
use crate::eval::fix::results::RunConfig;
use crate::eval::fix::score::Harness;
use crate::eval::fix::shard::{Manifest, Shard};
use crate::eval::fix::{EvalError, StrategySpec};
use crate::repair::Strategy;
use crate::task::Task;

/// What to run.
#[derive(Debug, Clone)]
pub struct EvalPlan {
    pub dataset: LoadedDataset,
    /// Only these task ids (in dataset order); empty = all.
    pub task_ids: Vec<String>,
    pub seeds: SeedSpec,
    /// Programs of the seed file, when seeds come from one (`task_id` → program).
    pub seed_programs: Option<(PathBuf, HashMap<String, String>)>,
    pub strategies: Vec<StrategySpec>,
    pub max_iters: usize,
    pub temperature: f32,
    /// Token budget of the rendered trace in each debugging prompt.
    pub trace_budget: usize,
    /// Debug only tasks whose seed fails a visible test; the others keep their seed.
    pub only_failing: bool,
    /// Stop selecting after this many tasks (counting only failing seeds with `only_failing`).
    pub limit: Option<usize>,
    pub concurrency: usize,
    pub out_dir: PathBuf,
    /// Redo tasks whose record says they failed on the backend or sandbox.
    pub retry_errors: bool,
    /// How hidden tests run (see [`Harness`]).
    pub harness: Harness,
    /// Model tokens per task at most, for every strategy alike (`--budget-tokens`).
    pub budget_tokens: Option<u64>,
    /// Base of the sampling seeds.
    pub rng_seed: u64,
    /// Settings of the `search` strategy.
    pub search: crate::repair::search::SearchOptions,
    /// Programs from the task alone start with its code prompt (`--prefill`).
    pub prefill: bool,
    /// Templates that replace built-in prompts (`--prompts`).
    pub prompts_dir: Option<PathBuf>,
    /// Run only this slice of the tasks (`--shard I/N`, see [`crate::eval::fix::shard`]).
    pub shard: Option<Shard>,
    /// Keep each debugged task's whole report in `out_dir/reports/` ([`crate::eval::fix::fix_reports`]).
    pub save_reports: bool,
    /// Peers per task: given programs of other tasks with the same text and entry point
    /// (`--peers`).
    pub peers: usize,
}

impl EvalPlan {
    /// The tasks this run (this shard, when sharded) may select from, in dataset order.
    pub fn candidates(&self) -> Result<Vec<Task>, EvalError> {
        let mut all = self.whole_run_candidates()?;
        if self.peers > 0 {
            for task in &mut all {
                task.peers = self.peers_of(task);
            }
        }
        Ok(match self.shard {
            Some(shard) => shard.slice(&all),
            None => all,
        })
    }

    /// The task list every shard slices: the tasks `task_ids` picks and, when sharded, the
    /// first `limit` of them (slicing first would give each shard its own first `limit`).
    fn whole_run_candidates(&self) -> Result<Vec<Task>, EvalError> {
        let mut all = self.picked()?;
        if self.shard.is_some() {
            if self.only_failing && self.limit.is_some() {
                return Err(EvalError::input(
                    "--only-failing --limit N cannot be split into shards: which tasks count \
                     toward N depends on every other shard's seeds",
                    "drop --limit (or --only-failing), or pick the tasks with --tasks",
                ));
            }
            all.truncate(self.limit.unwrap_or(usize::MAX));
        }
        Ok(all)
    }

    /// Up to `peers` given programs of the dataset's other tasks with `task`'s text and entry
    /// point, in an order fixed by the run's seed (so reruns and resumed runs see the same).
    fn peers_of(&self, task: &Task) -> Vec<String> {
        let mut others: Vec<(u64, String)> = self
            .dataset
            .tasks
            .iter()
            .filter(|t| {
                t.task_id != task.task_id
                    && t.prompt == task.prompt
                    && t.entry_point == task.entry_point
            })
            .filter_map(|t| {
                let program = self
                    .seed_programs
                    .as_ref()
                    .and_then(|(_, programs)| programs.get(&t.task_id))
                    .or(t.seed.as_ref())?;
                Some((order_key(self.rng_seed, &t.task_id), program.clone()))
            })
            .collect();
        others.sort_by_key(|o| o.0);
        others
            .into_iter()
            .take(self.peers)
            .map(|(_, p)| p)
            .collect()
    }

    /// The manifest of a sharded run's directory.
    pub fn shard_manifest(&self) -> Result<Option<Manifest>, EvalError> {
        let Some(shard) = self.shard else {
            return Ok(None);
        };
        Ok(Some(Manifest {
            shard,
            dataset: self.dataset.label.clone(),
            tasks: self
                .whole_run_candidates()?
                .into_iter()
                .map(|t| t.task_id)
                .collect(),
        }))
    }

    /// The tasks `task_ids` picks, in dataset order; unknown ids are an error.
    fn picked(&self) -> Result<Vec<Task>, EvalError> {
        if self.task_ids.is_empty() {
            return Ok(self.dataset.tasks.clone());
        }
        let known: std::collections::HashSet<&str> = self
            .dataset
            .tasks
            .iter()
            .map(|t| t.task_id.as_str())
            .collect();
        let missing: Vec<&str> = self
            .task_ids
            .iter()
            .map(String::as_str)
            .filter(|id| !known.contains(id))
            .collect();
        if !missing.is_empty() {
            return Err(EvalError::input(
                format!(
                    "dataset `{}` has no task {}",
                    self.dataset.label,
                    missing
                        .iter()
                        .map(|m| format!("`{m}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                "check --tasks against the dataset's task ids, e.g. HumanEval/0 or MBPP/11",
            ));
        }
        Ok(self
            .dataset
            .tasks
            .iter()
            .filter(|t| self.task_ids.contains(&t.task_id))
            .cloned()
            .collect())
    }

    /// Whether the run needs a model: a strategy calls one, or some seed must be generated.
    pub fn needs_models(&self) -> Result<bool, EvalError> {
        if self.strategies.iter().any(StrategySpec::uses_model) {
            return Ok(true);
        }
        let mut candidates = self.candidates()?;
        if !self.only_failing {
            // Only the first `limit` tasks can be selected.
            candidates.truncate(self.limit.unwrap_or(usize::MAX));
        }
        Ok(match &self.seed_programs {
            Some((_, programs)) => candidates
                .iter()
                .any(|t| !programs.contains_key(&t.task_id)),
            None => candidates.iter().any(|t| t.seed.is_none()),
        })
    }

    pub(super) fn generates_seeds(&self) -> bool {
        self.seeds == SeedSpec::Generate
    }

    pub fn seeds_path(&self) -> PathBuf {
        self.out_dir.join("seeds.jsonl")
    }

    pub fn results_path(&self, spec: &StrategySpec) -> PathBuf {
        self.out_dir.join(format!("{}.jsonl", spec.label()))
    }

    pub(super) fn seed_config(&self, generator: &str) -> RunConfig {
        RunConfig {
            dataset: self.dataset.label.clone(),
            strategy: "seeds".into(),
            max_iters: 0,
            seeds: self.seeds.label(),
            generator: if self.generates_seeds() {
                generator.to_string()
            } else {
                "-".into()
            },
            debugger: "-".into(),
            temperature: self.temperature,
            trace_budget: 0,
            harness: "-".into(),
            budget_tokens: None,
            rng_seed: 0,
            prefill: false,
            search: None,
            prompts: self.prompts_dir.as_ref().map(|d| d.display().to_string()),
        }
    }

    /// The header settings of `spec`'s results file.
    pub fn config(&self, spec: &StrategySpec, generator: &str, debugger: &str) -> RunConfig {
        RunConfig {
            strategy: spec.label(),
            max_iters: self.max_iters,
            debugger: if spec.uses_model() {
                debugger.to_string()
            } else {
                "-".into()
            },
            trace_budget: self.trace_budget,
            harness: self.harness.label().into(),
            budget_tokens: self.budget_tokens,
            rng_seed: self.rng_seed,
            prefill: self.prefill && spec.uses_model(),
            search: (spec.strategy == Strategy::Search).then(|| {
                let o = &self.search;
                let mut label = format!(
                    "{} beam {} max {} select {} inputs {} t {}",
                    o.portfolio_label(),
                    o.beam,
                    o.max_candidates,
                    o.select,
                    o.extra_inputs,
                    o.temperature
                );
                // Only when not the full form, so earlier runs' headers still match.
                if o.verdicts != crate::generate::reply::VerdictForm::Full {
                    label.push_str(&format!(" verdicts {}", o.verdicts.name()));
                }
                if o.select_by != crate::repair::search::SelectRule::Groups {
                    label.push_str(&format!(" by {}", o.select_by.name()));
                }
                if o.fresh_as_resample {
                    label.push_str(" fresh-as-resample");
                }
                // Only where it can act, so runs without `mutate` keep their headers.
                if o.harden
                    && o.portfolio
                        .iter()
                        .any(|(p, _)| *p == crate::repair::search::Proposer::Mutate)
                {
                    label.push_str(" harden");
                }
                // The named rules that are off (harden is said above): none off is how runs
                // before the names were made.
                let off: Vec<&str> = crate::repair::search::Rule::ALL
                    .into_iter()
                    .filter(|r| *r != crate::repair::search::Rule::Harden && !o.rule(*r))
                    .map(|r| r.name())
                    .collect();
                if !off.is_empty() {
                    label.push_str(&format!(" off {}", off.join(",")));
                }
                if o.tie_votes > 0 {
                    label.push_str(&format!(" tie-votes {}", o.tie_votes));
                }
                // Fewer votes drawn, the same program chosen: a run of either kind is not
                // resumed as the other.
                if o.settle_votes && (o.select > 0 || o.verify > 0) {
                    label.push_str(" settle-votes");
                }
                if o.stop_at_passing_vote && o.select > 0 {
                    label.push_str(" stop-at-passing-vote");
                }
                if o.batch_votes_only {
                    label.push_str(" batch-votes-only");
                }
                if self.peers > 0 {
                    label.push_str(&format!(" peers {}", self.peers));
                }
                label
            }),
            generator: self.generator_label(spec, generator, debugger),
            ..self.seed_config(generator)
        }
    }

    /// The header's generator: the seeds' writer, or else the model that writes `spec`'s fresh
    /// programs when it is not the debugger (the same model is how earlier runs' headers read,
    /// so they still resume), so a run whose fresh programs came from another model is never
    /// resumed as one whose did not.
    fn generator_label(&self, spec: &StrategySpec, generator: &str, debugger: &str) -> String {
        let draws_fresh = match spec.strategy {
            Strategy::Resample => true,
            Strategy::Search => self
                .search
                .portfolio
                .iter()
                .any(|(p, _)| *p == crate::repair::search::Proposer::Fresh),
            _ => false,
        };
        if self.generates_seeds() || (draws_fresh && generator != debugger) {
            generator.to_string()
        } else {
            "-".into()
        }
    }
}

/// A pseudo-random sort key of `id` under `seed` (FNV-1a: stable across builds and platforms).
fn order_key(seed: u64, id: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in seed.to_le_bytes().iter().chain(id.as_bytes()) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Default run directory name: `<dataset>-<seeds>-<model>`, safe for file names.
pub fn default_run_name(dataset: &str, seeds: &SeedSpec, model: Option<&str>) -> String {
    let seeds = match seeds {
        SeedSpec::Generate => "generated".to_string(),
        SeedSpec::Ldb(m) => format!("ldbseeds-{m}"),
        SeedSpec::File(p) => format!(
            "seeds-{}",
            p.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        ),
    };
    let mut name = format!("{dataset}-{seeds}");
    if let Some(m) = model {
        name.push('-');
        name.push_str(crate::eval::fix::results::model_name(m));
    }
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// `results/<name>` under the current directory.
pub fn default_out_dir(name: &str) -> PathBuf {
    Path::new("results").join(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_names_are_file_safe() {
        assert_eq!(
            default_run_name(
                "humaneval",
                &SeedSpec::Ldb("gpt-3.5-turbo-0613".into()),
                Some("gpt-4o-mini@api.openai.com")
            ),
            "humaneval-ldbseeds-gpt-3.5-turbo-0613-gpt-4o-mini"
        );
        assert_eq!(
            default_run_name("my tasks", &SeedSpec::Generate, Some("a/b:c")),
            "my-tasks-generated-a-b-c"
        );
    }
}
