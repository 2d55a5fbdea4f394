//! ORCA's evaluation data (`orca/orca_fixeval_{complete,incomplete}.jsonl`): the programs, the
//! ground truth from running them, and the stored predictions of ORCA, B1 and B2 (GPT-3.5),
//! turned into [`Truth`] and [`Prediction`]s for [`crate::check::metrics`].
//!
//! ORCA's block ids come from python-graphs, not from ldb's CFG; ldb's answers are mapped onto
//! them through the lines each block covers (`cfg_blocks[*].range`). In the incomplete set those
//! ranges often count lines as if `else:` lines, blank lines and comments were not there; for each
//! instance the numbering that reproduces its own ground-truth block trace from its ground-truth
//! line trace is used (the raw ranges when neither does).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::metrics::{Prediction, Truth};
use super::CheckReport;

/// Which of the two sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OrcaSet {
    Complete,
    Incomplete,
}

impl OrcaSet {
    pub fn name(self) -> &'static str {
        match self {
            OrcaSet::Complete => "orca-complete",
            OrcaSet::Incomplete => "orca-incomplete",
        }
    }

    /// The set's file under a data directory (the one holding `orca/`).
    pub fn path(self, data_dir: &Path) -> PathBuf {
        let file = match self {
            OrcaSet::Complete => "orca_fixeval_complete.jsonl",
            OrcaSet::Incomplete => "orca_fixeval_incomplete.jsonl",
        };
        data_dir.join("orca").join(file)
    }
}

/// The stored predictions of the paper's systems.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Baseline {
    /// ORCA with GPT-3.5 (CFG + planning): block trace and error block.
    Orca,
    /// GPT-3.5 without planning: line trace.
    B1,
    /// ORCA's prompt without the CFG: line trace.
    B2,
}

impl Baseline {
    pub const ALL: [Baseline; 3] = [Baseline::Orca, Baseline::B1, Baseline::B2];

    pub fn label(self) -> &'static str {
        match self {
            Baseline::Orca => "ORCA (GPT-3.5, stored)",
            Baseline::B1 => "B1: GPT-3.5 w/o planning (stored)",
            Baseline::B2 => "B2: ORCA w/o CFG (stored)",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CheckDataError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: not an ORCA record: {message}")]
    Record {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

#[derive(Debug, Clone, Deserialize)]
struct BlockRange {
    range: [u32; 2],
}

#[derive(Debug, Clone, Deserialize)]
struct GtState {
    state: BTreeMap<String, String>,
}

/// One instance of an ORCA set.
#[derive(Debug, Clone, Deserialize)]
pub struct OrcaInstance {
    pub id: String,
    pub code: String,
    pub is_buggy: bool,
    pub exception_class: Option<String>,
    pub crash_line: Option<u32>,
    pub crash_block: Option<u32>,
    pub gt_line_trace: Vec<u32>,
    pub gt_block_trace: Vec<u32>,
    gt_block_states: Vec<GtState>,
    cfg_blocks: BTreeMap<String, BlockRange>,
    #[serde(default)]
    orca_gpt35_pred: Value,
    #[serde(default)]
    b1_gpt35_pred: Value,
    #[serde(default)]
    b2_gpt35_pred: Value,
}

/// Read a set.
pub fn load(path: &Path) -> Result<Vec<OrcaInstance>, CheckDataError> {
    read_jsonl(path)
}

/// One record per non-blank line of a JSONL file; errors name the file and the line.
pub(crate) fn read_jsonl<T: serde::de::DeserializeOwned>(
    path: &Path,
) -> Result<Vec<T>, CheckDataError> {
    let text = std::fs::read_to_string(path).map_err(|source| CheckDataError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        out.push(
            serde_json::from_str(line).map_err(|e| CheckDataError::Record {
                path: path.to_path_buf(),
                line: i + 1,
                message: e.to_string(),
            })?,
        );
    }
    Ok(out)
}

impl OrcaInstance {
    /// The ground truth.
    pub fn truth(&self) -> Truth {
        Truth {
            is_error: self.is_buggy,
            line: self.crash_line,
            block: self.crash_block,
            line_trace: self.gt_line_trace.clone(),
            block_trace: self.gt_block_trace.clone(),
            states: self
                .gt_block_states
                .iter()
                .map(|s| s.state.clone())
                .collect(),
        }
    }

    /// The block (ORCA's id) a source line of the code belongs to.
    pub fn block_of_line(&self, line: u32) -> Option<u32> {
        self.block_in(&self.numbering(), line)
    }

    /// Blocks of a line trace, consecutive repeats collapsed (as the ground truth is built).
    pub fn blocks_of_lines(&self, lines: &[u32]) -> Vec<u32> {
        let numbering = self.numbering();
        collapse(lines.iter().filter_map(|&l| self.block_in(&numbering, l)))
    }

    /// The smallest block whose range holds `line` under `numbering`.
    fn block_in(&self, numbering: &Numbering, line: u32) -> Option<u32> {
        let at = numbering.index(line)?;
        self.cfg_blocks
            .iter()
            .filter(|(_, b)| b.range[0] <= at && at <= b.range[1])
            .filter_map(|(id, b)| Some((id.parse::<u32>().ok()?, b.range[1] - b.range[0])))
            .min_by_key(|&(id, width)| (width, id))
            .map(|(id, _)| id)
    }

    /// The line numbering of `cfg_blocks` for this instance (see the module comment).
    fn numbering(&self) -> Numbering {
        let candidates = [Numbering::Raw, Numbering::skipping(&self.code)];
        let score = |n: &Numbering| {
            let mapped = collapse(
                self.gt_line_trace
                    .iter()
                    .filter_map(|&l| self.block_in(n, l)),
            );
            if mapped == self.gt_block_trace {
                usize::MAX
            } else {
                crate::check::metrics::common_prefix(&mapped, &self.gt_block_trace)
            }
        };
        let mut best = Numbering::Raw;
        let mut best_score = score(&best);
        for c in candidates.into_iter().skip(1) {
            let s = score(&c);
            if s > best_score {
                best = c;
                best_score = s;
            }
        }
        best
    }

    /// A stored prediction of the paper's systems.
    pub fn stored(&self, system: Baseline) -> Prediction {
        let raw = match system {
            Baseline::Orca => &self.orca_gpt35_pred,
            Baseline::B1 => &self.b1_gpt35_pred,
            Baseline::B2 => &self.b2_gpt35_pred,
        };
        let is_error = raw
            .get("is_error")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        match system {
            Baseline::Orca => Prediction {
                is_error,
                line: None,
                block: raw.get("error_block").and_then(number),
                line_trace: None,
                // A missing trace is an empty one, as the artifact's scripts count it.
                block_trace: Some(numbers(raw.get("block_trace"))),
                states: None,
            },
            Baseline::B1 | Baseline::B2 => {
                let trace = numbers(raw.get("line_trace"));
                Prediction {
                    is_error,
                    // The artifact takes the last line of the predicted trace.
                    line: trace.last().copied(),
                    block: None,
                    line_trace: Some(trace),
                    block_trace: None,
                    states: None,
                }
            }
        }
    }

    /// An `ldb check` report as a prediction in ORCA's terms.
    pub fn ldb_prediction(&self, report: &CheckReport) -> Prediction {
        let numbering = self.numbering();
        let mut block_trace: Vec<u32> = Vec::new();
        let mut states: Vec<BTreeMap<String, String>> = Vec::new();
        let mut line_trace = Vec::new();
        for step in &report.block_trace {
            let state: BTreeMap<String, String> = step
                .state
                .iter()
                .map(|v| (v.name.clone(), v.value.clone()))
                .collect();
            for &line in &step.lines {
                line_trace.push(line);
                let Some(block) = self.block_in(&numbering, line) else {
                    continue;
                };
                if block_trace.last() == Some(&block) {
                    // Same ORCA block: its state is the one after this visit.
                    if let Some(last) = states.last_mut() {
                        *last = state.clone();
                    }
                } else {
                    block_trace.push(block);
                    states.push(state.clone());
                }
            }
        }
        Prediction {
            is_error: report.is_error,
            line: report.line,
            block: report.line.and_then(|l| self.block_in(&numbering, l)),
            line_trace: Some(line_trace),
            block_trace: Some(block_trace),
            states: Some(states),
        }
    }
}

fn collapse(blocks: impl Iterator<Item = u32>) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    for b in blocks {
        if out.last() != Some(&b) {
            out.push(b);
        }
    }
    out
}

/// How `cfg_blocks` ranges count lines.
#[derive(Debug, Clone, PartialEq)]
enum Numbering {
    /// Lines of the code as given.
    Raw,
    /// Lines of the code without `else:` lines, blank lines and comment lines: `kept[i]` is the
    /// real line of counted line `i + 1`.
    Skipping { kept: Vec<u32> },
}

impl Numbering {
    fn skipping(code: &str) -> Numbering {
        let kept = code
            .split('\n')
            .enumerate()
            .filter(|(_, l)| {
                let t = l.trim();
                let is_else = t
                    .strip_prefix("else")
                    .is_some_and(|rest| rest.trim_start().starts_with(':'));
                !(t.is_empty() || t.starts_with('#') || is_else)
            })
            .map(|(i, _)| i as u32 + 1)
            .collect();
        Numbering::Skipping { kept }
    }

    /// The counted number of a real line.
    fn index(&self, line: u32) -> Option<u32> {
        match self {
            Numbering::Raw => Some(line),
            Numbering::Skipping { kept } => {
                kept.iter().position(|&l| l == line).map(|i| i as u32 + 1)
            }
        }
    }
}

fn number(v: &Value) -> Option<u32> {
    match v {
        Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The integers of a trace: a list of numbers (or numeric strings), or a string such as
/// `[1, 2, Ellipsis, 5]` (two of B1's stored traces), read for its numbers.
fn numbers(v: Option<&Value>) -> Vec<u32> {
    match v {
        Some(Value::Array(items)) => items.iter().filter_map(number).collect(),
        Some(Value::String(s)) => s
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|t| t.parse().ok())
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance(
        code: &str,
        ranges: &[(u32, u32, u32)],
        lines: &[u32],
        blocks: &[u32],
    ) -> OrcaInstance {
        let cfg_blocks: BTreeMap<String, Value> = ranges
            .iter()
            .map(|&(id, a, b)| {
                (
                    id.to_string(),
                    serde_json::json!({"range": [a, b], "statements": []}),
                )
            })
            .collect();
        serde_json::from_value(serde_json::json!({
            "id": "p/s", "code": code, "is_buggy": false, "exception_class": null,
            "crash_line": null, "crash_block": null, "gt_line_trace": lines,
            "gt_block_trace": blocks, "gt_block_states": [], "cfg_blocks": cfg_blocks,
            "orca_gpt35_pred": {"is_error": true, "error_block": "2", "block_trace": null},
            "b1_gpt35_pred": {"is_error": false, "line_trace": "[1, 2, Ellipsis, 5]"},
        }))
        .unwrap()
    }

    #[test]
    fn the_numbering_that_explains_the_ground_truth_is_used() {
        // Ranges count lines without the `else:` line (line 4), as in the incomplete set.
        let code = "x = 1\nif x:\n    y = 1\nelse:\n    y = 2\nprint(y)";
        let inst = instance(
            code,
            &[(1, 1, 2), (2, 3, 3), (3, 4, 4), (4, 5, 5)],
            &[1, 2, 5, 6],
            &[1, 3, 4],
        );
        assert_eq!(inst.blocks_of_lines(&[1, 2, 5, 6]), [1, 3, 4]);
        assert_eq!(inst.block_of_line(5), Some(3));
        assert_eq!(inst.block_of_line(4), None);
        // The same ranges taken as real lines would not explain it.
        let raw = instance(
            code,
            &[(1, 1, 2), (2, 3, 3), (3, 5, 5), (4, 6, 6)],
            &[1, 2, 5, 6],
            &[1, 3, 4],
        );
        assert_eq!(raw.block_of_line(5), Some(3));
    }

    #[test]
    fn stored_predictions_are_read_leniently() {
        let inst = instance("x = 1", &[(1, 1, 1)], &[1], &[1]);
        let orca = inst.stored(Baseline::Orca);
        assert!(orca.is_error);
        assert_eq!(orca.block, Some(2));
        assert_eq!(orca.block_trace, Some(vec![]));
        let b1 = inst.stored(Baseline::B1);
        assert_eq!(b1.line_trace, Some(vec![1, 2, 5]));
        assert_eq!(b1.line, Some(5));
        let b2 = inst.stored(Baseline::B2);
        assert!(!b2.is_error && b2.line_trace == Some(vec![]));
    }
}
