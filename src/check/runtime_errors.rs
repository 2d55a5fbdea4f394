//! The runtime-error prediction data (Bieber et al.; `runtime-errors/pre_codenet_1pct_test_valid.jsonl`):
//! labels of a 1% sample of CodeNet submissions, each run once on its problem's sample input.
//!
//! The stored source text is lossy (BPE tokens joined by spaces: no line breaks, no
//! indentation), so it can be neither run nor parsed. What can be scored without more data is
//! the label manifest; with a Project CodeNet checkout (`--codenet DIR`) each record's exact
//! program and input are read from it (`codenet_source_path`, `codenet_input_path`) and checked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::orca::CheckDataError;

/// The label of a clean run.
pub const NO_ERROR: &str = "No error";

#[derive(Debug, Clone, Deserialize)]
pub struct PreRecord {
    pub problem_id: String,
    pub submission_id: String,
    pub split: String,
    pub error_class: String,
    pub is_error: bool,
    pub tier1: bool,
    /// Line of the error in the original submission; 0 for no error or a timeout.
    pub target_lineno_raw: u32,
    pub resource_description: String,
    pub source_tokens_text_lossy: String,
    pub in_dataset: u8,
    pub codenet_source_path: String,
    pub codenet_input_path: String,
}

impl PreRecord {
    pub fn id(&self) -> String {
        format!("{}/{}", self.problem_id, self.submission_id)
    }

    /// The exact program and its input from a CodeNet checkout, if both files are there.
    pub fn from_codenet(&self, codenet: &Path) -> Option<(Vec<u8>, String)> {
        let program = std::fs::read(codenet.join(&self.codenet_source_path)).ok()?;
        let input = std::fs::read_to_string(codenet.join(&self.codenet_input_path)).ok()?;
        Some((program, input))
    }
}

pub fn path(data_dir: &Path) -> PathBuf {
    data_dir
        .join("runtime-errors")
        .join("pre_codenet_1pct_test_valid.jsonl")
}

pub fn load(path: &Path) -> Result<Vec<PreRecord>, CheckDataError> {
    crate::check::orca::read_jsonl(path)
}

/// The balanced view the data's README suggests: every error, and as many clean records drawn
/// with a fixed seed; in file order.
pub fn balanced(records: &[PreRecord], seed: u64) -> Vec<&PreRecord> {
    let errors = records.iter().filter(|r| r.is_error).count();
    let mut clean: Vec<usize> = (0..records.len())
        .filter(|&i| records.get(i).is_some_and(|r| !r.is_error))
        .collect();
    fastrand::Rng::with_seed(seed).shuffle(&mut clean);
    clean.truncate(errors);
    clean.sort_unstable();
    records
        .iter()
        .enumerate()
        .filter(|(i, r)| r.is_error || clean.binary_search(i).is_ok())
        .map(|(_, r)| r)
        .collect()
}

/// Counts of the labels, per split.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Manifest {
    pub records: usize,
    pub errors: usize,
    pub tier1_errors: usize,
    /// Records within the paper's size filter (tokens ≤ 512).
    pub in_dataset: usize,
    /// class → split → count.
    pub classes: BTreeMap<String, BTreeMap<String, usize>>,
}

pub fn manifest(records: &[PreRecord]) -> Manifest {
    let mut m = Manifest {
        records: records.len(),
        ..Manifest::default()
    };
    for r in records {
        m.errors += usize::from(r.is_error);
        m.tier1_errors += usize::from(r.is_error && r.tier1);
        m.in_dataset += usize::from(r.in_dataset == 1);
        *m.classes
            .entry(r.error_class.clone())
            .or_default()
            .entry(r.split.clone())
            .or_default() += 1;
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, class: &str) -> PreRecord {
        serde_json::from_value(serde_json::json!({
            "problem_id": "p1", "submission_id": id, "split": "test", "error_class": class,
            "is_error": class != NO_ERROR, "tier1": class == "TypeError",
            "target_lineno_raw": 0, "resource_description": "", "source_tokens_text_lossy": "",
            "in_dataset": 1, "codenet_source_path": "", "codenet_input_path": "",
        }))
        .unwrap()
    }

    #[test]
    fn the_balanced_view_keeps_every_error_and_as_many_clean_records() {
        let mut records: Vec<PreRecord> =
            (0..20).map(|i| record(&i.to_string(), NO_ERROR)).collect();
        records.push(record("e1", "TypeError"));
        records.push(record("e2", "EOFError"));
        let view = balanced(&records, 7);
        assert_eq!(view.len(), 4);
        assert_eq!(view.iter().filter(|r| r.is_error).count(), 2);
        let again: Vec<String> = balanced(&records, 7).iter().map(|r| r.id()).collect();
        assert_eq!(view.iter().map(|r| r.id()).collect::<Vec<_>>(), again);
        let m = manifest(&records);
        assert_eq!((m.records, m.errors, m.tier1_errors), (22, 2, 1));
        assert_eq!(m.classes["No error"]["test"], 20);
    }
}
