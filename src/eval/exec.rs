//! `ldb eval exec`: `ldb exec` on Treefix's snippets, scored with Treefix's own metric next to
//! Treefix-GPT-4o's stored per-record results.
//!
//! The records (`treefix_sample.jsonl`, see its README) carry the snippet as given (`code`),
//! the L3-instrumented file Treefix ran, where every `_l_(ID)` call is a probe that fires once
//! its statement has finished, and Treefix's results. The search runs on `code`, as a user's
//! snippet would; every prefix it tried is then scored as the README's harness does: prefix +
//! instrumented file run as a script in the sandbox, the probe import replaced by a probe that
//! reports each id once, from the main process only (threads count, child processes do not).
//! Coverage = probes hit / all probes; of a prefix set, the union. The empty prefix gives the
//! as-is figure, which matches the README's `asis_coverage_py311` (a test checks it).
//!
//! Results go to a JSONL file, one line per record; a rerun skips the records already there.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::exec::coverage::prelude_for;
use crate::exec::report::percent;
use crate::exec::tree::minimal_cover;
use crate::exec::{make_runnable, ExecError, ExecOptions, ExecReport, Snippet};
use crate::generate::model::ChatModel;
use crate::generate::prompts::Prompts;
use crate::run::sandbox::SandboxError;
use crate::run::{in_parallel, Runner, TestInput};

/// The line of an L3 file that imports the probe function.
const PROBE_IMPORT: &str = "from l3.Runtime import _l_";
/// What replaces it, on one line so the file keeps its line numbers: a probe that writes each
/// id once to stderr (below Python's buffers), in the process that started the run only.
const PROBE_STUB: &str = "def _l_(i, _seen=set(), _os=__import__('os'), \
     _pid=__import__('os').getpid()): (i in _seen or _os.getpid() != _pid) or \
     (_seen.add(i), _os.write(2, b'\\nldb-probe %d\\n' % i))";
const PROBE_MARK: &str = "ldb-probe ";

/// One record of `treefix_sample.jsonl` (only the fields used here).
#[derive(Debug, Clone, Deserialize)]
pub struct Record {
    pub id: String,
    pub dataset: String,
    pub code: String,
    #[serde(default)]
    pub l3_instrumented: Option<String>,
    #[serde(default)]
    pub l3_probe_ids: Option<Vec<u64>>,
    #[serde(default)]
    pub l3_total_lines: Option<usize>,
    #[serde(default)]
    pub in_treefix_eval: Option<bool>,
    #[serde(default)]
    pub treefix_gpt4o: Option<TreefixResult>,
    #[serde(default)]
    pub asis_coverage_py311: Option<AsIs>,
}

/// Treefix-GPT-4o's stored result for a record.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TreefixResult {
    pub total_lines: Option<usize>,
    pub coverage_final_prefix_set: Option<f64>,
    pub p_best_coverage: Option<f64>,
    pub minimal_prefix_set_size: Option<usize>,
}

/// The README's as-is figure for a record.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AsIs {
    pub coverage: Option<f64>,
    pub status: Option<String>,
}

impl Record {
    /// Treefix scored it: it has the instrumented file and a stored result.
    pub fn scorable(&self) -> bool {
        self.l3_instrumented.is_some() && self.in_treefix_eval == Some(true)
    }

    /// `so` or `functions`.
    pub fn subset(&self) -> &'static str {
        if self.dataset.starts_with("so") {
            "so"
        } else {
            "functions"
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TreefixDataError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}, line {line}: not a Treefix record: {message}")]
    Record {
        path: String,
        line: usize,
        message: String,
    },
}

/// Read `treefix_sample.jsonl`.
pub fn load_records(path: &Path) -> Result<Vec<Record>, TreefixDataError> {
    let text = std::fs::read_to_string(path).map_err(|source| TreefixDataError::Read {
        path: path.display().to_string(),
        source,
    })?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| TreefixDataError::Record {
                path: path.display().to_string(),
                line: i + 1,
                message: e.to_string(),
            })
        })
        .collect()
}

/// The instrumented file, ready to run, and its probes.
pub struct Probes {
    pub program: String,
    pub ids: BTreeSet<u64>,
    /// The denominator: Treefix's `total_lines`.
    pub total: usize,
}

impl Probes {
    pub fn new(record: &Record) -> Option<Self> {
        let l3 = record.l3_instrumented.as_ref()?;
        if !l3.contains(PROBE_IMPORT) {
            return None;
        }
        let ids: BTreeSet<u64> = record.l3_probe_ids.clone()?.into_iter().collect();
        Some(Probes {
            program: l3.replace(PROBE_IMPORT, PROBE_STUB),
            total: record.l3_total_lines.unwrap_or(ids.len()),
            ids,
        })
    }

    /// Probe ids hit when `prefix` runs before the instrumented file.
    pub fn hits(
        &self,
        runner: &Runner,
        prefix: &str,
        allow_missing: bool,
    ) -> Result<BTreeSet<u64>, SandboxError> {
        let (prelude, _) = prelude_for(prefix, allow_missing);
        let describe = TestInput::Code {
            source: "# the instrumented snippet runs as a script".into(),
        };
        let outcome = runner.run_script(&self.program, Some(&prelude), None, &describe)?;
        Ok(outcome
            .stderr
            .lines()
            .filter_map(|l| l.trim().strip_prefix(PROBE_MARK)?.parse::<u64>().ok())
            .filter(|id| self.ids.contains(id))
            .collect())
    }

    pub fn fraction(&self, hits: usize) -> f64 {
        if self.total == 0 {
            1.0
        } else {
            hits as f64 / self.total as f64
        }
    }
}

/// How a record ended in the evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordStatus {
    Scored,
    /// The snippet is not Python 3 (prose, shell commands, Python 2): nothing to run.
    NotPython,
    /// The model backend or the sandbox failed; `--retry-errors` runs it again.
    Error,
}

/// Treefix's metrics for one system on one record (fractions of the probes).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct Metrics {
    pub as_is: f64,
    pub best: f64,
    pub set: f64,
    pub set_size: usize,
}

/// One line of the results file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RecordResult {
    pub id: String,
    pub subset: String,
    pub status: RecordStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Probe coverage of ldb's prefixes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ldb: Option<Metrics>,
    /// Treefix-GPT-4o's stored result on the same record (as-is from the README's harness).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub treefix_gpt4o: Option<Metrics>,
    /// ldb's own statement coverage of the snippet (best prefix, minimal set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statement_coverage: Option<(f64, f64)>,
    #[serde(default)]
    pub prefixes_tried: usize,
    #[serde(default)]
    pub model_calls: usize,
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    #[serde(default)]
    pub elapsed_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_prefix: Option<String>,
}

impl RecordResult {
    fn new(record: &Record, status: RecordStatus) -> Self {
        RecordResult {
            id: record.id.clone(),
            subset: record.subset().to_string(),
            status,
            detail: None,
            ldb: None,
            treefix_gpt4o: treefix_metrics(record),
            statement_coverage: None,
            prefixes_tried: 0,
            model_calls: 0,
            prompt_tokens: 0,
            completion_tokens: 0,
            elapsed_ms: 0,
            best_prefix: None,
        }
    }
}

fn treefix_metrics(record: &Record) -> Option<Metrics> {
    let t = record.treefix_gpt4o.as_ref()?;
    Some(Metrics {
        as_is: record.asis_coverage_py311.as_ref()?.coverage?,
        best: t.p_best_coverage?,
        set: t.coverage_final_prefix_set?,
        set_size: t.minimal_prefix_set_size.unwrap_or(0),
    })
}

/// Score the prefixes of `report` (and the empty prefix) on `probes`.
pub fn score(
    runner: &Runner,
    probes: &Probes,
    report: &ExecReport,
    allow_missing: bool,
) -> Result<Metrics, SandboxError> {
    let mut prefixes: Vec<String> = vec![String::new()];
    for node in &report.tree {
        if node.ending.is_some() && node.duplicate_of.is_none() && !prefixes.contains(&node.prefix)
        {
            prefixes.push(node.prefix.clone());
        }
    }
    let hits = in_parallel(&prefixes, runner.jobs(), |p| {
        probes.hits(runner, p, allow_missing)
    });
    let mut sets: Vec<BTreeSet<u64>> = Vec::new();
    for h in hits {
        match h {
            Some(Ok(set)) => sets.push(set),
            Some(Err(e)) => return Err(e),
            None => sets.push(BTreeSet::new()),
        }
    }
    let as_is = sets.first().map_or(0, BTreeSet::len);
    let best = sets.iter().map(BTreeSet::len).max().unwrap_or(0);
    // Sets of probe ids, as statement-like indices for the cover search.
    let ids: Vec<BTreeSet<usize>> = sets
        .iter()
        .map(|s| s.iter().map(|&id| id as usize).collect())
        .collect();
    let refs: Vec<(usize, &BTreeSet<usize>)> = ids.iter().enumerate().collect();
    let chosen = minimal_cover(&refs);
    let union: BTreeSet<usize> = ids.iter().flatten().copied().collect();
    Ok(Metrics {
        as_is: probes.fraction(as_is),
        best: probes.fraction(best),
        set: probes.fraction(union.len()),
        set_size: chosen.len(),
    })
}

/// Run one record: the search on its snippet, then the probe scores.
pub async fn run_record(
    record: &Record,
    model: &dyn ChatModel,
    runner: &Runner,
    prompts: &Prompts,
    options: &ExecOptions,
    progress: crate::exec::prefix_search::Progress<'_>,
) -> RecordResult {
    let snippet = match Snippet::new(record.id.clone(), record.code.clone()) {
        Ok(s) => s,
        Err(e @ ExecError::NotPython { .. }) | Err(e @ ExecError::Empty { .. }) => {
            let mut r = RecordResult::new(record, RecordStatus::NotPython);
            r.detail = Some(e.to_string());
            return r;
        }
        Err(e) => {
            let mut r = RecordResult::new(record, RecordStatus::Error);
            r.detail = Some(e.to_string());
            return r;
        }
    };
    let Some(probes) = Probes::new(record) else {
        let mut r = RecordResult::new(record, RecordStatus::Error);
        r.detail = Some("the record has no instrumented file that parses".into());
        return r;
    };
    let report = match make_runnable(&snippet, model, runner, prompts, options, progress).await {
        Ok(r) => r,
        Err(e) => {
            let mut r = RecordResult::new(record, RecordStatus::Error);
            r.detail = Some(e.to_string());
            return r;
        }
    };
    let runner_owned = runner.clone();
    let allow = options.allow_missing;
    let scored = {
        let report = report.clone();
        tokio::task::spawn_blocking(move || score(&runner_owned, &probes, &report, allow)).await
    };
    let mut result = RecordResult::new(record, RecordStatus::Scored);
    match scored {
        Ok(Ok(m)) => result.ldb = Some(m),
        Ok(Err(e)) => {
            result.status = RecordStatus::Error;
            result.detail = Some(e.to_string());
        }
        Err(e) => {
            result.status = RecordStatus::Error;
            result.detail = Some(format!("scoring thread: {e}"));
        }
    }
    result.statement_coverage = Some((
        report.best.as_ref().map_or(0.0, |b| b.coverage.fraction),
        report.set_coverage.fraction,
    ));
    result.prefixes_tried = report
        .tree
        .iter()
        .filter(|n| n.ending.is_some() && n.parent.is_some())
        .count();
    result.model_calls = report.usage.calls;
    result.prompt_tokens = report.usage.prompt_tokens;
    result.completion_tokens = report.usage.completion_tokens;
    result.elapsed_ms = report.timings.total_ms;
    result.best_prefix = report.best.as_ref().map(|b| b.prefix.clone());
    result
}

/// Results already in `path` (a rerun skips them).
pub fn load_results(path: &Path) -> Result<Vec<RecordResult>, TreefixDataError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(TreefixDataError::Read {
                path: path.display().to_string(),
                source,
            })
        }
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| TreefixDataError::Record {
                path: path.display().to_string(),
                line: i + 1,
                message: e.to_string(),
            })
        })
        .collect()
}

/// Append one result line (and flush, so an interrupted run keeps it).
pub fn append_result(path: &Path, result: &RecordResult) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    let line = serde_json::to_string(result).map_err(std::io::Error::other)?;
    writeln!(file, "{line}")?;
    file.flush()
}

/// The comparison table (markdown): per subset, mean probe coverage of the minimal set, the
/// best prefix and the snippet as-is, for ldb and for Treefix-GPT-4o on the same records.
pub fn summary(results: &[RecordResult]) -> String {
    // The last line of a record wins (a retried error replaces the earlier one).
    let mut latest: BTreeMap<&str, &RecordResult> = BTreeMap::new();
    for r in results {
        latest.insert(r.id.as_str(), r);
    }
    let mut out = String::new();
    out.push_str(
        "| subset | records | system | minimal set P | best prefix | as is | mean set size | \
         model calls / record | tokens / record (prompt + reply) |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for subset in ["so", "functions"] {
        let scored: Vec<&RecordResult> = latest
            .values()
            .filter(|r| r.subset == subset && r.status == RecordStatus::Scored)
            .filter(|r| r.treefix_gpt4o.is_some())
            .copied()
            .collect();
        if scored.is_empty() {
            continue;
        }
        let n = scored.len() as f64;
        let mean = |f: &dyn Fn(&RecordResult) -> f64| scored.iter().map(|r| f(r)).sum::<f64>() / n;
        let ours = |f: fn(&Metrics) -> f64| mean(&|r| r.ldb.as_ref().map_or(0.0, f));
        let theirs = |f: fn(&Metrics) -> f64| mean(&|r| r.treefix_gpt4o.as_ref().map_or(0.0, f));
        let calls = mean(&|r| r.model_calls as f64);
        let tokens = mean(&|r| (r.prompt_tokens + r.completion_tokens) as f64);
        out.push_str(&format!(
            "| {subset} | {} | ldb exec | {} | {} | {} | {:.1} | {:.1} | {:.0} |\n",
            scored.len(),
            percent(ours(|m| m.set)),
            percent(ours(|m| m.best)),
            percent(ours(|m| m.as_is)),
            ours(|m| m.set_size as f64),
            calls,
            tokens,
        ));
        out.push_str(&format!(
            "| {subset} | {} | Treefix-GPT-4o (stored) | {} | {} | {} | {:.1} | | |\n",
            scored.len(),
            percent(theirs(|m| m.set)),
            percent(theirs(|m| m.best)),
            percent(theirs(|m| m.as_is)),
            theirs(|m| m.set_size as f64),
        ));
    }
    let count = |s: RecordStatus| latest.values().filter(|r| r.status == s).count();
    out.push_str(&format!(
        "\nRecords: {} scored, {} not Python 3, {} failed (backend or sandbox; rerun with --retry-errors).\n",
        count(RecordStatus::Scored),
        count(RecordStatus::NotPython),
        count(RecordStatus::Error),
    ));
    out
}
