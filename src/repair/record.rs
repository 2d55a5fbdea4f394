//! The fix report: every iteration's program, test results, sampled trace, verdicts, diff,
//! tokens and timings. Its JSON form is documented by a JSON Schema generated from these types
//! (`docs/report.schema.json`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Strategy;
use crate::generate::reply::verdicts::Verdict;
use crate::run::TestStatus;
use crate::trace::Level;

/// Version of the report format; bump on incompatible changes.
pub const REPORT_VERSION: u32 = 1;

/// A `--report` file: one entry per task.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ReportFile {
    pub version: u32,
    pub tasks: Vec<FixReport>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FixStatus {
    /// The seed already passed every visible test.
    AlreadyPassing,
    /// Debugging made every visible test pass.
    Fixed,
    /// The iteration budget ran out; the best program seen is returned.
    NotFixed,
    /// A backend or sandbox failure stopped the run.
    Error,
}

impl FixStatus {
    pub fn passed(self) -> bool {
        matches!(self, FixStatus::AlreadyPassing | FixStatus::Fixed)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct FixReport {
    pub task_id: String,
    pub status: FixStatus,
    /// How failing programs were improved. Reports written before strategies existed are LDB's.
    #[serde(default)]
    pub strategy: Strategy,
    /// Trace granularity; it only shapes the run when `strategy` is `ldb`.
    pub level: Level,
    pub seed: SeedInfo,
    /// The program ldb returns: the last one if it passes, else the one that passed most tests.
    pub final_program: String,
    pub final_passed: usize,
    pub visible_total: usize,
    pub iterations: Vec<IterationReport>,
    pub usage: UsageTotals,
    pub timings: Timings,
    /// What stopped the run, for status `error`.
    pub error: Option<String>,
    /// Its kind, for status `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<crate::repair::failure::ErrorClass>,
    /// Every candidate of a search (`strategy: search`), the seed first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<CandidateRecord>,
    /// How a search chose among candidates that pass the visible tests, when it had to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<SelectionReport>,
    /// What backs the returned program beyond the visible tests (a search that found a
    /// passing program).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<Confirmation>,
    /// Functions of the returned program that no visible test runs: nothing checked them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unexercised: Vec<crate::locate::Unexercised>,
    /// The project's regression tests among the visible tests (pytest node ids): tests that
    /// passed on the given program and run the function under test, which every fix must keep
    /// passing. Counted in `visible_total`; never shown to a model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub regression_tests: Vec<String>,
    /// Of `final_passed`, the regression tests. They run only once the given tests pass, so
    /// a program that fails a given test passes none of them here without having broken one.
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub regression_passed: usize,
    /// The project's tests (pytest nodes) that passed on the given program and pass on the
    /// returned one, regression tests included: they guard a fix (see [`FixReport::unconfirmed`]).
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub kept_passing: usize,
}

impl FixReport {
    /// A fix that nothing beyond the visible tests backs: no independently written program
    /// agrees with it (or none was asked), and no test of the project that passed before
    /// guarded it (`kept_passing`). Such a fix is
    /// plausible; `ldb fix --write` writes it only with `--unconfirmed`, and its exit status
    /// differs from a confirmed fix's.
    pub fn unconfirmed(&self) -> bool {
        self.status == FixStatus::Fixed
            && self.final_program != self.seed.program
            && self.kept_passing == 0
            && !self
                .confirmation
                .as_ref()
                .is_some_and(Confirmation::backs_the_fix)
    }
}

fn is_zero_usize(n: &usize) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SeedInfo {
    /// `task`, `file:PATH`, `seeds:PATH`, `command`, or `generated`.
    pub origin: String,
    pub program: String,
    /// Model calls made to get the seed (generation and repair).
    pub calls: Vec<CallRecord>,
    pub problem: Option<String>,
}

/// One round: test the program; if a test fails, improve it with the run's strategy (LDB: trace
/// a failing test, get verdicts, regenerate).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct IterationReport {
    /// 0 tests the seed.
    pub index: usize,
    pub program: String,
    pub tests: Vec<TestResult>,
    pub passed: usize,
    /// The failing test that was traced (ldb) or dry-run by the model (selfdebug-trace).
    pub traced_test: Option<String>,
    /// The sampled trace as the debugger saw it (ldb).
    pub trace: Option<String>,
    /// Verdict per traced unit (ldb).
    pub verdicts: Vec<Verdict>,
    /// Why verdicts are missing or incomplete, if they are.
    pub verdict_problem: Option<String>,
    /// The model's own line-by-line explanation (selfdebug-expl) or dry run (selfdebug-trace).
    pub explanation: Option<String>,
    /// Unified diff from this iteration's program to the regenerated one.
    pub diff: Option<String>,
    /// What was wrong with the replies that should hold the next program, if anything.
    pub regeneration_problem: Option<String>,
    pub calls: Vec<CallRecord>,
    pub timings: Timings,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TestResult {
    pub test: String,
    pub status: TestStatus,
    pub summary: String,
}

/// What a model call was for. The names are the report's (`snake_case`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CallPurpose {
    /// The seed program.
    Generate,
    /// The seed again, after a reply that held no program.
    RepairSeed,
    /// Verdicts on a trace.
    Debug,
    /// Verdicts again, after a reply that could not be read.
    RepairVerdicts,
    /// Self-Debugging's explanation of the program.
    Explain,
    /// Self-Debugging's dry run of the failing test.
    DryRun,
    /// A repaired program.
    Regenerate,
    /// A repaired program again, after a reply that held no program.
    RepairProgram,
    /// A fresh program from the task alone.
    Resample,
    /// A fresh program again, after a reply that held no program.
    RepairResample,
    /// The localisation benchmark's verdict.
    Localise,
    /// `ldb exec`: a prefix defining the undefined names.
    ExecUndefined,
    /// `ldb exec`: a prefix that avoids the error of the last run.
    ExecError,
    /// `ldb exec`: a prefix that reaches the lines not yet covered.
    ExecCoverage,
    /// The suspicious lines of a program rewritten (the `patch` proposer).
    Patch,
}

impl CallPurpose {
    pub fn name(self) -> &'static str {
        match self {
            CallPurpose::Generate => "generate",
            CallPurpose::RepairSeed => "repair_seed",
            CallPurpose::Debug => "debug",
            CallPurpose::RepairVerdicts => "repair_verdicts",
            CallPurpose::Explain => "explain",
            CallPurpose::DryRun => "dry_run",
            CallPurpose::Regenerate => "regenerate",
            CallPurpose::RepairProgram => "repair_program",
            CallPurpose::Resample => "resample",
            CallPurpose::RepairResample => "repair_resample",
            CallPurpose::Localise => "localise",
            CallPurpose::ExecUndefined => "exec_undefined",
            CallPurpose::ExecError => "exec_error",
            CallPurpose::ExecCoverage => "exec_coverage",
            CallPurpose::Patch => "patch",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CallRecord {
    pub purpose: CallPurpose,
    pub model: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Prompt tokens the backend served from its cache (a kept KV prefix).
    #[serde(default)]
    pub cached_prompt_tokens: u64,
    pub latency_ms: u64,
    pub cached: bool,
    pub attempts: u32,
}

impl CallRecord {
    /// Tokens the backend processed for this call (see [`crate::generate::model::Usage::cost`]).
    pub fn cost(&self) -> u64 {
        self.prompt_tokens.saturating_sub(self.cached_prompt_tokens) + self.completion_tokens
    }
}

#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
pub struct UsageTotals {
    pub calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Prompt tokens served from the backend's cache; `prompt - cached + completion` is what a
    /// token budget counts.
    #[serde(default)]
    pub cached_prompt_tokens: u64,
    /// Calls answered from the on-disk response cache (a rerun, or another task with the same
    /// text). They count in the totals above and in the budget at what they cost when first
    /// made, so a warm run spends its budget about as a cold one does; the model did not run
    /// them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub replayed_calls: u64,
    /// What those calls cost when first made (`prompt - cached + completion`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub replayed_tokens: u64,
}

/// For `skip_serializing_if`: a counter that stayed at zero is left out of the file.
pub(crate) fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl UsageTotals {
    pub fn cost(&self) -> u64 {
        self.prompt_tokens.saturating_sub(self.cached_prompt_tokens) + self.completion_tokens
    }
}

/// Milliseconds spent, split by where.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema)]
pub struct Timings {
    pub llm_ms: u64,
    pub tests_ms: u64,
    pub trace_ms: u64,
    pub total_ms: u64,
}

impl Timings {
    pub fn add(&mut self, other: &Timings) {
        self.llm_ms += other.llm_ms;
        self.tests_ms += other.tests_ms;
        self.trace_ms += other.trace_ms;
    }
}

/// The JSON Schema of a report file.
pub fn report_schema() -> Result<serde_json::Value, serde_json::Error> {
    serde_json::to_value(schemars::schema_for!(ReportFile))
}

/// Where a candidate comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Proposer {
    /// The program under test (the seed): not proposed, only tested.
    Seed,
    /// Repair from every visible test's result: actual vs expected, exception, message, line.
    Feedback,
    /// LDB's repair: trace the first failing test, one verdict per block (constrained to the
    /// block labels), regenerate from the verdicts.
    Ldb,
    /// A fresh program from the task alone (repeated sampling).
    Fresh,
    /// A model-free edit of a parent at a statement fault localisation ranks suspicious
    /// (`crate::python::edits`): no tokens.
    Mutate,
    /// The model rewrites only the suspicious lines of a parent (fill-in-the-middle on the
    /// embedded model, a chat prompt marking the lines on an endpoint).
    Patch,
    /// The model writes the bodies of the functions a parent leaves unwritten (`pass`,
    /// `return`), in the parent's context (`crate::python::unwritten`).
    Complete,
}

impl Proposer {
    /// Every proposer a portfolio can name (all but the seed), in the order the error for an
    /// unknown name lists them.
    pub const PROPOSABLE: [Proposer; 6] = [
        Proposer::Mutate,
        Proposer::Complete,
        Proposer::Patch,
        Proposer::Fresh,
        Proposer::Feedback,
        Proposer::Ldb,
    ];

    /// The proposer a portfolio names by `name` (case-insensitive) or by one of its older
    /// aliases (`tests`, `trace`, `resample`, `edits`, `fim`).
    pub fn from_portfolio_name(name: &str) -> Option<Proposer> {
        let name = name.to_ascii_lowercase();
        let alias = match name.as_str() {
            "tests" => Some(Proposer::Feedback),
            "trace" => Some(Proposer::Ldb),
            "resample" => Some(Proposer::Fresh),
            "edits" => Some(Proposer::Mutate),
            "fim" => Some(Proposer::Patch),
            _ => None,
        };
        alias.or_else(|| Proposer::PROPOSABLE.into_iter().find(|p| p.name() == name))
    }

    /// The names of [`Proposer::PROPOSABLE`] as an error lists them: `a, b or c`.
    pub fn proposable_names() -> String {
        let names = Proposer::PROPOSABLE.map(Proposer::name);
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.join(""),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Proposer::Seed => "seed",
            Proposer::Feedback => "feedback",
            Proposer::Ldb => "ldb",
            Proposer::Fresh => "fresh",
            Proposer::Mutate => "mutate",
            Proposer::Patch => "patch",
            Proposer::Complete => "complete",
        }
    }

    /// A program the model wrote whole (from the task, or from the failing tests or the
    /// trace), so its agreement with another candidate is evidence: these vote in the
    /// selection. Edits that keep the given program (`mutate`, `patch`) resemble it and each
    /// other, and vote nothing.
    pub fn independent(self) -> bool {
        matches!(self, Proposer::Fresh | Proposer::Feedback | Proposer::Ldb)
    }

    /// An edit of a parent that keeps the rest of it as it is.
    pub fn derived(self) -> bool {
        matches!(
            self,
            Proposer::Mutate | Proposer::Patch | Proposer::Complete
        )
    }

    pub(crate) fn code(self) -> u64 {
        match self {
            Proposer::Seed => 0,
            Proposer::Feedback => 1,
            Proposer::Ldb => 2,
            Proposer::Fresh => 3,
            Proposer::Mutate => 4,
            Proposer::Patch => 5,
            Proposer::Complete => 6,
        }
    }
}

/// One candidate of a search, as the report keeps it.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CandidateRecord {
    /// 0 is the seed; proposals count up from 1 in the order they were made.
    pub id: usize,
    /// The round that proposed it (0 for the seed).
    pub round: usize,
    pub proposer: Proposer,
    /// The candidate it repairs (feedback and ldb proposals).
    pub parent: Option<usize>,
    /// The extracted program; absent when the reply held none.
    pub program: Option<String>,
    /// An earlier candidate with the same normalised program: this one was not run.
    pub duplicate_of: Option<usize>,
    /// Visible tests passed (absent when it was not run).
    pub visible_passed: Option<usize>,
    /// Visible tests that ended in an exception, timeout or crash rather than a wrong value.
    pub errors: usize,
    /// Lines changed from the seed.
    pub diff_lines: usize,
    /// Tokens the model processed for it ([`crate::generate::model::Usage::cost`]); a shared verdict
    /// call is charged to the first candidate that used it.
    pub tokens: u64,
    /// Wall time of its model calls and tests.
    pub wall_ms: u64,
    /// Its selection group (index into the selection's `groups`), when it took part.
    pub group: Option<usize>,
    /// What was wrong with the reply, if anything.
    pub problem: Option<String>,
    /// For `mutate` and `patch`: where the parent was edited and how. A mutant that neither
    /// passed more visible tests than its parent nor was kept has no `program`: applying this
    /// edit to the parent gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit: Option<EditRecord>,
}

/// Where and how a parent was edited.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EditRecord {
    /// First line (in the parent) of the statement edited.
    pub line: u32,
    /// Its rank in the parent's fault localisation (0: the most suspicious statement).
    pub rank: usize,
    /// The edit, e.g. `< → <=`, or `lines 4-5` for a patch.
    pub description: String,
}

/// Whether the program returned is backed by anything beyond the visible tests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Confirmation {
    /// Programs written independently (fresh samples, the task's peers) that pass the visible
    /// tests and behave like the returned program on every extra input, not counting the
    /// program itself.
    pub agreeing: usize,
    /// Independent programs that pass the visible tests but behave otherwise.
    pub disagreeing: usize,
    /// `confirmed` (independent programs agree with it), `unconfirmed` (none passed the
    /// visible tests to compare with: it is only plausible), `majority` (returned because
    /// the heaviest group of independent programs wrote it), or `outvoted` (the heaviest group
    /// holds only peers, which are never returned, and no edit of the given program behaves
    /// like them: the heaviest group with a candidate is returned).
    pub status: ConfirmationStatus,
}

/// How the returned program relates to the independent programs (see [`Confirmation`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConfirmationStatus {
    /// Independent programs behave like it.
    Confirmed,
    /// No independent program passed the visible tests to compare it with.
    Unconfirmed,
    /// Returned because the heaviest group of independent programs wrote it.
    Majority,
    /// The heaviest group holds only peers, which are never returned.
    Outvoted,
}

impl ConfirmationStatus {
    /// The name the report gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            ConfirmationStatus::Confirmed => "confirmed",
            ConfirmationStatus::Unconfirmed => "unconfirmed",
            ConfirmationStatus::Majority => "majority",
            ConfirmationStatus::Outvoted => "outvoted",
        }
    }
}

impl Confirmation {
    /// Whether independent programs back the returned one: some agree with it, and they are
    /// not outnumbered by those that behave otherwise.
    pub fn backs_the_fix(&self) -> bool {
        self.agreeing > 0 && self.status != ConfirmationStatus::Outvoted
    }
}

/// What the report says about a selection.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SelectionReport {
    /// The extra inputs every visible-passing candidate was called on.
    pub inputs: Vec<String>,
    /// Candidate ids (see `candidates` of the report) of each group, largest first.
    pub groups: Vec<Vec<usize>>,
    /// The candidate returned: the first of the largest group.
    pub chosen: usize,
    /// The first candidate that passed the visible tests: what ldb returns without selection.
    pub first_passing: usize,
    /// Its program, so the effect of selection can be scored.
    pub first_passing_program: String,
    /// Each candidate's behaviour on every input, as a short hash per input (candidate id →
    /// hashes in input order), so other ways of choosing can be compared on the same run.
    #[serde(default)]
    pub signatures: std::collections::BTreeMap<usize, Vec<String>>,
    /// The seed's behaviour on the same inputs (even when it fails the visible tests), for the
    /// prior that a repair changes the given program only where needed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seed_signature: Vec<String>,
    /// How many of the task's peers (programs others wrote for it that pass the visible
    /// tests) behave like each group, in `groups` order; empty without peers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub peers: Vec<usize>,
}

#[cfg(test)]
mod confirmation_tests {
    use super::*;

    #[test]
    fn each_status_reads_as_the_report_writes_it() {
        for s in [
            ConfirmationStatus::Confirmed,
            ConfirmationStatus::Unconfirmed,
            ConfirmationStatus::Majority,
            ConfirmationStatus::Outvoted,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
    }

    #[test]
    fn only_agreeing_programs_not_outnumbered_back_a_fix() {
        let c = |agreeing, status| Confirmation {
            agreeing,
            disagreeing: 3,
            status,
        };
        assert!(c(2, ConfirmationStatus::Confirmed).backs_the_fix());
        assert!(c(1, ConfirmationStatus::Majority).backs_the_fix());
        // A lone vote: the returned program is the only one that behaves so.
        assert!(!c(0, ConfirmationStatus::Majority).backs_the_fix());
        assert!(!c(0, ConfirmationStatus::Unconfirmed).backs_the_fix());
        assert!(!c(2, ConfirmationStatus::Outvoted).backs_the_fix());
    }
}
