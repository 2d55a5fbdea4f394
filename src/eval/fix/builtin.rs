//! HumanEval and MBPP, built into the binary so `ldb eval --dataset humaneval|mbpp` works on a
//! fresh install. The files are LDB's packaging of the two benchmarks, byte for byte
//! (`data/README.md` gives source, commit, licences and checksums), so the built-in tasks are
//! the ones `--data-dir` loads from LDB's layout and results of the two compare.
//!
//! Only the benchmarks with permissive licences ship (HumanEval: MIT; MBPP: CC-BY-4.0; LDB's
//! packaging: Apache-2.0). Seeds and the larger sets stay on disk (`datasets::missing_data_hint`
//! says where each file goes).

use std::path::{Path, PathBuf};

use crate::task::embedded::{HUMANEVAL, MBPP};
use crate::task::{load_tasks_from, Task, TaskError};

/// The built-in tasks of the benchmark in LDB's folder `folder` (`humaneval`, `mbpp`), or
/// `None` when it is not built in.
pub fn tasks(folder: &str) -> Option<Result<Vec<Task>, TaskError>> {
    let (name, text) = match folder {
        "humaneval" => ("humaneval.jsonl", HUMANEVAL),
        "mbpp" => ("mbpp.jsonl", MBPP),
        _ => return None,
    };
    Some(load_tasks_from(&source_name(name), text.as_bytes()))
}

/// What errors and `LoadedDataset::files` call a built-in file.
pub fn source_name(file: &str) -> PathBuf {
    Path::new("<built-in>").join(file)
}

/// Where LDB's seed files go, for `--seeds ldb:MODEL` on built-in data.
pub fn seeds_hint(dataset: &str, model: &str) -> String {
    format!(
        "LDB's seeds are not built in: copy input_data/{dataset}/seed/{model}/seed.jsonl from \
         https://github.com/FloridSleeves/LLMDebugger to DIR/ldb/{dataset}/seed/{model}/seed.jsonl \
         (with DIR/ldb/{dataset}/dataset/probs.jsonl and test/tests.jsonl) and pass \
         --data-dir DIR; or pass a seed file's path: --seeds FILE.jsonl"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_benchmarks_load_whole() {
        let humaneval = tasks("humaneval").expect("built in").expect("loads");
        assert_eq!(humaneval.len(), 164);
        assert_eq!(humaneval[0].task_id, "HumanEval/0");
        assert!(humaneval
            .iter()
            .all(|t| !t.visible_tests.is_empty() && t.hidden_tests.is_some()));
        let mbpp = tasks("mbpp").expect("built in").expect("loads");
        assert_eq!(mbpp.len(), 500);
        assert_eq!(mbpp[0].task_id, "MBPP/11");
        assert!(tasks("transcoder").is_none());
    }
}
