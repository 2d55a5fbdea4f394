//! Where a benchmark's files are in a data directory (LDB's layout, EvalPlus releases), and what
//! to do when they are missing.

use std::path::{Path, PathBuf};

use super::Dataset;

pub(super) fn list_dirs(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// `humaneval`/`mbpp`/`transcoder` when a path runs through LDB's folder of that name.
pub(super) fn infer_dataset(path: &Path) -> Option<Dataset> {
    let parts: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_ascii_lowercase())
        .collect();
    parts
        .windows(2)
        .find(|w| w[0] == "ldb")
        .and_then(|w| Dataset::from_name(&w[1]))
}

pub(super) struct LdbFiles {
    pub(super) probs: PathBuf,
    pub(super) tests: Option<PathBuf>,
    /// The folder holding `dataset/`, `test/` and `seed/`.
    pub(super) root: PathBuf,
}

impl LdbFiles {
    pub(super) fn list(&self) -> Vec<PathBuf> {
        let mut files = vec![self.probs.clone()];
        files.extend(self.tests.clone());
        files
    }
}

/// LDB's files for `folder` (`humaneval`, ...) under `dir`, which may be the data dir, the `ldb`
/// folder, or the dataset's own folder.
pub(super) fn find_ldb_files(dir: &Path, folder: &str) -> Option<LdbFiles> {
    [
        dir.join("ldb").join(folder),
        dir.join(folder),
        dir.to_path_buf(),
    ]
    .iter()
    .find_map(|root| find_ldb_layout_in(root))
}

/// `root/dataset/probs.jsonl` (+ `root/test/tests.jsonl`), or `root/probs.jsonl` (+ `root/tests.jsonl`).
pub(super) fn find_ldb_layout_in(root: &Path) -> Option<LdbFiles> {
    let nested = root.join("dataset").join("probs.jsonl");
    if nested.is_file() {
        let tests = root.join("test").join("tests.jsonl");
        return Some(LdbFiles {
            probs: nested,
            tests: tests.is_file().then_some(tests),
            root: root.to_path_buf(),
        });
    }
    let flat = root.join("probs.jsonl");
    if flat.is_file() {
        let tests = root.join("tests.jsonl");
        return Some(LdbFiles {
            probs: flat,
            tests: tests.is_file().then_some(tests),
            root: root.to_path_buf(),
        });
    }
    None
}

/// The newest-looking `PREFIX*.jsonl` in `dir` or `dir/evalplus` (names sort by version).
pub(super) fn find_evalplus_file(dir: &Path, prefix: &str) -> Option<PathBuf> {
    [dir.to_path_buf(), dir.join("evalplus")]
        .iter()
        .find_map(|d| {
            let mut found: Vec<PathBuf> = std::fs::read_dir(d)
                .ok()?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .is_some_and(|n| n.starts_with(prefix) && n.ends_with(".jsonl"))
                })
                .collect();
            found.sort();
            found.pop()
        })
}

/// Where the files of a benchmark that is not built in go, for the error that asks for them.
pub fn missing_data_hint(dataset: Dataset) -> String {
    let ldb = "https://github.com/FloridSleeves/LLMDebugger (folder input_data/)";
    match dataset {
        Dataset::HumanEval | Dataset::Mbpp | Dataset::TransCoder => {
            let folder = match dataset {
                Dataset::HumanEval => "humaneval",
                Dataset::Mbpp => "mbpp",
                _ => "transcoder",
            };
            format!(
                "copy LDB's input_data/{folder}/ from {ldb} to DIR/ldb/{folder}/ \
                 (DIR/ldb/{folder}/dataset/probs.jsonl and DIR/ldb/{folder}/test/tests.jsonl) \
                 and pass --data-dir DIR (or set LDB_DATA_DIR=DIR)"
            )
        }
        Dataset::HumanEvalPlus | Dataset::MbppPlus => {
            let (file, release) = if dataset == Dataset::HumanEvalPlus {
                (
                    "HumanEvalPlus-<version>.jsonl",
                    "https://github.com/evalplus/humanevalplus_release/releases",
                )
            } else {
                (
                    "MbppPlus-<version>.jsonl",
                    "https://github.com/evalplus/mbppplus_release/releases",
                )
            };
            format!(
                "download {file}.gz from {release}, gunzip it into DIR (DIR/{file}, or \
                 DIR/evalplus/{file}) and pass --data-dir DIR (or set LDB_DATA_DIR=DIR); \
                 LDB's DIR/ldb/humaneval/test/tests.jsonl next to it adds LDB's visible tests"
            )
        }
    }
}
