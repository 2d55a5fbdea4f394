//! Results files: JSONL, one header line with the run's settings, then one record per task,
//! appended the moment the task is done (write, flush, fsync).
//!
//! A killed run leaves at worst a torn last line. [`ResultsLog::open`] drops it (or, when it is a
//! whole record that only lacks its newline, keeps it), refuses a file whose header names other
//! settings, and returns the records already there so the caller skips those tasks. A task id is
//! never written twice: the log remembers what it holds. `--retry-errors` rewrites the file
//! without the records of failed tasks (atomically: temp file, fsync, rename) so they run again.
//!
//! Parts: this module holds the record types; `log` the file on disk.

mod log;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::repair::failure::ErrorClass;
use crate::repair::record::FixStatus;
use crate::run::TestStatus;

pub(crate) use log::rewrite;

pub use log::{read_log, ReadNotes, ResultsLog};

/// Version of the results format; bump on incompatible changes.
pub const RESULTS_VERSION: u32 = 1;

/// The settings that make results comparable; a run resumes a file only with equal settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// `humaneval`, ..., or the task file's name.
    pub dataset: String,
    /// Strategy label (`ldb-block`, ...), or `seeds` for the seeds file.
    pub strategy: String,
    pub max_iters: usize,
    /// `generate`, `ldb:MODEL` or a seed file's path.
    pub seeds: String,
    /// The generator model as `name@host` (`-` when seeds come from a file).
    pub generator: String,
    /// The debugger model as `name@host` (`-` when the strategy calls none).
    pub debugger: String,
    pub temperature: f32,
    /// Token budget of the rendered trace.
    pub trace_budget: usize,
    /// How hidden tests are run (`program` or `prompt-program`; `-` for the seeds file).
    pub harness: String,
    /// Model tokens per task at most (`--budget-tokens`).
    #[serde(default)]
    pub budget_tokens: Option<u64>,
    /// Base of the sampling seeds.
    #[serde(default)]
    pub rng_seed: u64,
    /// Programs from the task alone started with its code prompt (`--prefill`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prefill: bool,
    /// The search's settings (`search` only), e.g. `feedback:2,ldb:1,fresh:2 beam 2 ...`.
    #[serde(default)]
    pub search: Option<String>,
    /// The directory whose templates replaced built-in prompts (`--prompts`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<String>,
}

impl RunConfig {
    /// What differs, in words; empty when `other` may resume this file. Models compare by name
    /// only: the same model behind another host or port is the same model.
    pub fn differences(&self, other: &RunConfig) -> Vec<String> {
        let mut out = Vec::new();
        let mut check = |name: &str, a: String, b: String| {
            if a != b {
                out.push(format!("{name} was `{a}`, now `{b}`"));
            }
        };
        check("dataset", self.dataset.clone(), other.dataset.clone());
        check("strategy", self.strategy.clone(), other.strategy.clone());
        check(
            "max_iters",
            self.max_iters.to_string(),
            other.max_iters.to_string(),
        );
        check("seeds", self.seeds.clone(), other.seeds.clone());
        check(
            "generator",
            model_name(&self.generator).into(),
            model_name(&other.generator).into(),
        );
        check(
            "debugger",
            model_name(&self.debugger).into(),
            model_name(&other.debugger).into(),
        );
        check(
            "temperature",
            self.temperature.to_string(),
            other.temperature.to_string(),
        );
        check(
            "trace_budget",
            self.trace_budget.to_string(),
            other.trace_budget.to_string(),
        );
        check("harness", self.harness.clone(), other.harness.clone());
        check(
            "budget_tokens",
            format!("{:?}", self.budget_tokens),
            format!("{:?}", other.budget_tokens),
        );
        check(
            "rng_seed",
            self.rng_seed.to_string(),
            other.rng_seed.to_string(),
        );
        check(
            "prefill",
            self.prefill.to_string(),
            other.prefill.to_string(),
        );
        check(
            "search",
            self.search.clone().unwrap_or_default(),
            other.search.clone().unwrap_or_default(),
        );
        check(
            "prompts",
            self.prompts.clone().unwrap_or_else(|| "built-in".into()),
            other.prompts.clone().unwrap_or_else(|| "built-in".into()),
        );
        out
    }
}

/// `gpt-4o@api.openai.com` → `gpt-4o`.
pub fn model_name(label: &str) -> &str {
    label.split('@').next().unwrap_or(label)
}

/// The first line of a results file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Always `header`.
    pub kind: String,
    pub version: u32,
    pub ldb_version: String,
    /// When the file was started (seconds since the Unix epoch).
    pub created_unix: u64,
    pub config: RunConfig,
}

impl Header {
    pub fn new(config: RunConfig) -> Self {
        Header {
            kind: "header".into(),
            version: RESULTS_VERSION,
            ldb_version: env!("CARGO_PKG_VERSION").into(),
            created_unix: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            config,
        }
    }
}

/// Prompt and completion tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    pub prompt: u64,
    pub completion: u64,
    /// Prompt tokens served from the backend's cache (a kept KV prefix).
    #[serde(default)]
    pub cached_prompt: u64,
    /// Of [`Tokens::cost`], what calls answered from the on-disk response cache cost when first
    /// made (another task with the same text asked them first): the model did not run them.
    #[serde(default, skip_serializing_if = "crate::repair::record::is_zero")]
    pub replayed: u64,
}

impl Tokens {
    pub fn total(&self) -> u64 {
        self.prompt + self.completion
    }

    /// Tokens the backend processed (what `--budget-tokens` counts).
    pub fn cost(&self) -> u64 {
        self.prompt.saturating_sub(self.cached_prompt) + self.completion
    }
}

/// Which tests scored a task at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HiddenSource {
    /// The task's hidden tests.
    Hidden,
    /// The task has none, so its visible tests stand in.
    Visible,
}

/// Milliseconds, split by where they went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordTimings {
    /// Inside model calls.
    pub llm_ms: u64,
    /// The rest of the fix loop: tests, tracing, prompt building.
    pub non_llm_ms: u64,
    /// The whole fix loop.
    pub total_ms: u64,
    pub tests_ms: u64,
    pub trace_ms: u64,
    /// Hidden-test scoring after the loop (not part of the loop's time).
    pub hidden_ms: u64,
}

/// One task's result under one strategy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// Always `task`.
    pub kind: String,
    pub task_id: String,
    pub strategy: String,
    /// The fix loop's verdict; `None` when the loop did not run (no seed).
    pub status: Option<FixStatus>,
    /// At least one debugging round ran (the seed failed a visible test).
    pub debugged: bool,
    pub seed_visible_pass: bool,
    pub final_visible_pass: bool,
    /// Visible tests the final program passes, of `visible_total`.
    pub visible_passed: usize,
    pub visible_total: usize,
    pub seed_hidden_pass: bool,
    pub final_hidden_pass: bool,
    /// Entry k: whether the program the loop returns with a budget of k iterations passes the
    /// hidden tests (k = 0 is the seed ... max_iters).
    pub hidden_by_budget: Vec<bool>,
    pub hidden_tests: HiddenSource,
    /// How the final program fared on the hidden tests.
    pub final_hidden_status: Option<TestStatus>,
    pub final_hidden_summary: String,
    /// Debugging rounds run.
    pub iterations: usize,
    /// Tokens of the strategy's calls (seed generation is in `seed_tokens`).
    pub tokens: Tokens,
    pub seed_tokens: Tokens,
    /// Model calls of the strategy.
    pub calls: u64,
    pub timings: RecordTimings,
    pub error_class: Option<ErrorClass>,
    pub error: Option<String>,
    pub seed_origin: String,
    pub final_program: String,
    /// Candidates a search proposed (0 for the other strategies).
    #[serde(default)]
    pub candidates: usize,
    /// When a search chose among several visible-passing candidates: whether the first of them
    /// (what it returns without selection) passes the hidden tests.
    #[serde(default)]
    pub first_pass_hidden_pass: Option<bool>,
    /// Tokens spent by the end of each iteration (entry k: rounds 1..=k; entry 0 is 0), so
    /// fixes can be plotted against tokens.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cost_by_iteration: Vec<u64>,
    /// Every candidate of a search, in the order proposed (the seed first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidate_log: Vec<CandidateSummary>,
    /// What backed the returned program beyond the visible tests (search).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<crate::repair::record::Confirmation>,
    /// The seed's behaviour on the selection's extra inputs (hashes), when it was run there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seed_signature: Vec<String>,
}

/// One candidate of a search, as an evaluation keeps it: enough to tell which proposer found
/// what, at which cost, and whether the hidden tests agreed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CandidateSummary {
    pub id: usize,
    pub round: usize,
    pub proposer: crate::repair::search::Proposer,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<usize>,
    /// Tokens charged to it, and spent by the search once it was made.
    pub tokens: u64,
    pub spent: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicate_of: Option<usize>,
    /// Visible tests passed (absent when not run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visible_passed: Option<usize>,
    /// Selection group, when it took part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<usize>,
    /// Hidden-test result, for candidates that pass every visible test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden_pass: Option<bool>,
    /// Its behaviour on the selection's extra inputs (a hash per input), when it took part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<Vec<String>>,
    /// Lines changed from the seed.
    #[serde(default)]
    pub diff_lines: usize,
    /// For `mutate` and `patch`: where the parent was edited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit: Option<crate::repair::record::EditRecord>,
}

/// One task's seed, shared by every strategy of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeedRecord {
    /// Always `seed`.
    pub kind: String,
    pub task_id: String,
    /// `seeds:PATH`, `generated`, ...
    pub origin: String,
    pub program: String,
    pub visible_passed: usize,
    pub visible_total: usize,
    pub visible_pass: bool,
    pub tokens: Tokens,
    pub calls: u64,
    pub llm_ms: u64,
    pub total_ms: u64,
    /// What was wrong with the generator's replies, if anything.
    pub problem: Option<String>,
    pub error_class: Option<ErrorClass>,
    pub error: Option<String>,
}

#[cfg(test)]
impl SeedRecord {
    /// A seed record for tests: `program`, from `origin`, failing its one visible test.
    pub(crate) fn for_test(id: &str, origin: &str, program: &str) -> Self {
        SeedRecord {
            kind: "seed".into(),
            task_id: id.into(),
            origin: origin.into(),
            program: program.into(),
            visible_passed: 0,
            visible_total: 1,
            visible_pass: false,
            tokens: Tokens::default(),
            calls: 0,
            llm_ms: 0,
            total_ms: 0,
            problem: None,
            error_class: None,
            error: None,
        }
    }
}

/// A record kind a results file holds.
pub trait Record: Serialize + DeserializeOwned + Clone {
    const KIND: &'static str;
    fn task_id(&self) -> &str;
    /// The task failed for a reason other than its program (backend, sandbox).
    fn is_error(&self) -> bool;
}

impl Record for TaskRecord {
    const KIND: &'static str = "task";
    fn task_id(&self) -> &str {
        &self.task_id
    }
    fn is_error(&self) -> bool {
        self.error_class.is_some()
    }
}

impl Record for SeedRecord {
    const KIND: &'static str = "seed";
    fn task_id(&self) -> &str {
        &self.task_id
    }
    fn is_error(&self) -> bool {
        self.error_class.is_some()
    }
}

#[cfg(test)]
mod tests {
    use std::fs::OpenOptions;
    use std::io::Write;

    use super::*;
    use crate::eval::fix::EvalError;

    fn config() -> RunConfig {
        RunConfig {
            prompts: None,
            dataset: "d".into(),
            strategy: "seeds".into(),
            max_iters: 10,
            seeds: "generate".into(),
            generator: "m@127.0.0.1:1".into(),
            debugger: "-".into(),
            temperature: 0.0,
            trace_budget: 3000,
            harness: "-".into(),
            budget_tokens: None,
            rng_seed: 0,
            prefill: false,
            search: None,
        }
    }

    fn seed(id: &str) -> SeedRecord {
        SeedRecord::for_test(id, "generated", "def f(): pass\n")
    }

    #[test]
    fn appends_resumes_and_drops_a_torn_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("seeds.jsonl");
        let (log, old) = ResultsLog::<SeedRecord>::open(&path, &config(), false).expect("open");
        assert!(old.is_empty());
        assert!(log.append(&seed("a")).expect("append"));
        assert!(!log.append(&seed("a")).expect("append twice"));
        drop(log);
        // A killed writer leaves half a line.
        let mut f = OpenOptions::new().append(true).open(&path).expect("open");
        f.write_all(b"{\"kind\":\"seed\",\"task_id\":\"b\",\"ori")
            .expect("write");
        drop(f);
        let mut other_host = config();
        other_host.generator = "m@127.0.0.1:2".into();
        let (log, old) = ResultsLog::<SeedRecord>::open(&path, &other_host, false).expect("reopen");
        assert_eq!(old.len(), 1);
        assert!(log.append(&seed("b")).expect("append"));
        let (_, all, notes) = read_log::<SeedRecord>(&path).expect("read");
        assert_eq!(all.len(), 2);
        assert_eq!(notes, ReadNotes::default());
    }

    #[test]
    fn other_settings_are_refused_and_errors_can_be_retried() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("seeds.jsonl");
        let (log, _) = ResultsLog::<SeedRecord>::open(&path, &config(), false).expect("open");
        let mut failed = seed("x");
        failed.error_class = Some(ErrorClass::BackendRetries);
        log.append(&failed).expect("append");
        log.append(&seed("y")).expect("append");
        drop(log);
        let mut changed = config();
        changed.max_iters = 3;
        match ResultsLog::<SeedRecord>::open(&path, &changed, false) {
            Err(EvalError::ConfigMismatch { differences, .. }) => {
                assert!(differences[0].contains("max_iters"), "{differences:?}")
            }
            other => panic!("expected a mismatch, got {:?}", other.map(|(_, r)| r)),
        }
        let (_, kept) = ResultsLog::<SeedRecord>::open(&path, &config(), true).expect("retry");
        assert_eq!(kept.len(), 1);
        let (_, all, _) = read_log::<SeedRecord>(&path).expect("read");
        assert_eq!(all.len(), 1);
    }
}
