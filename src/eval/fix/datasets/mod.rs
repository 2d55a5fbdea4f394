//! Benchmarks for `ldb eval`: where their files are, how they load, and where their seeds are.
//!
//! Named datasets are read from a data directory (`--data-dir`, `LDB_DATA_DIR`):
//! - `humaneval`, `mbpp`, `transcoder`: LDB's layout, `DIR/ldb/<ds>/dataset/probs.jsonl` with the
//!   visible tests in `DIR/ldb/<ds>/test/tests.jsonl` (`given_tests`). `DIR` may also be the `ldb`
//!   folder, the `<ds>` folder, or a folder holding `probs.jsonl` + `tests.jsonl` directly. The
//!   task loader ([`crate::task::load_ldb_layout`]) already takes visible tests from
//!   `given_tests`, makes `test` runnable as hidden tests, and takes TransCoder's C++ from the
//!   last `[c++]` block.
//! - `humaneval-plus`, `mbpp-plus`: EvalPlus releases (`HumanEvalPlus*.jsonl`, `MbppPlus*.jsonl`,
//!   uncompressed) in `DIR` or `DIR/evalplus`. Hidden tests are the release's `test` (its extended
//!   tests; they `import numpy`, so the sandbox's Python needs numpy); visible tests are LDB's
//!   `given_tests` for HumanEval+ when the data dir has them, else the docstring examples, and the
//!   first base test for MBPP+.
//!
//! Any other `--dataset` value is a path: a task file in any format [`crate::task::load_tasks`]
//! reads, an EvalPlus file, or a folder in LDB's layout.
//!
//! After loading, [`fix_helper_entry_points`] repairs tasks whose entry point is a helper the
//! visible tests never call (19 MBPP tasks), so their visible test keeps testing the function
//! actually under test.
//!
//! Parts: `files` (where the files are), `fixes` (repairs after loading), `seed_spec`
//! (`--seeds`).

mod files;
mod fixes;
mod seed_spec;

use std::path::{Path, PathBuf};

use super::score::Harness;
use super::EvalError;
use crate::task::evalplus::{load_evalplus, load_if_evalplus};
use crate::task::{load_ldb_layout, load_tasks, load_tasks_lenient, read_given_tests, Task};

use files::{find_evalplus_file, find_ldb_files, find_ldb_layout_in, infer_dataset};

pub use files::missing_data_hint;
pub use fixes::{
    attach_setup_code, fix_helper_entry_points, undefined_in_hidden_tests, EntryPointFix,
};
pub use seed_spec::SeedSpec;

/// The benchmarks `--dataset` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dataset {
    HumanEval,
    Mbpp,
    TransCoder,
    HumanEvalPlus,
    MbppPlus,
}

impl Dataset {
    pub const ALL: [Dataset; 5] = [
        Dataset::HumanEval,
        Dataset::Mbpp,
        Dataset::TransCoder,
        Dataset::HumanEvalPlus,
        Dataset::MbppPlus,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Dataset::HumanEval => "humaneval",
            Dataset::Mbpp => "mbpp",
            Dataset::TransCoder => "transcoder",
            Dataset::HumanEvalPlus => "humaneval-plus",
            Dataset::MbppPlus => "mbpp-plus",
        }
    }

    pub fn from_name(name: &str) -> Option<Dataset> {
        let n = name.trim().to_ascii_lowercase().replace(['_', ' '], "-");
        match n.as_str() {
            "humaneval" | "human-eval" => Some(Dataset::HumanEval),
            "mbpp" => Some(Dataset::Mbpp),
            "transcoder" | "trans-coder" => Some(Dataset::TransCoder),
            "humaneval-plus" | "humaneval+" | "humanevalplus" | "human-eval-plus" => {
                Some(Dataset::HumanEvalPlus)
            }
            "mbpp-plus" | "mbpp+" | "mbppplus" => Some(Dataset::MbppPlus),
            _ => None,
        }
    }

    /// The folder of LDB's data (`ldb/<folder>`) this benchmark, or its base, lives in.
    pub(crate) fn ldb_folder(self) -> &'static str {
        match self {
            Dataset::HumanEval | Dataset::HumanEvalPlus => "humaneval",
            Dataset::Mbpp | Dataset::MbppPlus => "mbpp",
            Dataset::TransCoder => "transcoder",
        }
    }

    fn names() -> String {
        Dataset::ALL
            .iter()
            .map(|d| d.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Tasks of one benchmark, ready to evaluate.
#[derive(Debug, Clone)]
pub struct LoadedDataset {
    /// `humaneval`, ..., or the file's stem for a path.
    pub label: String,
    pub dataset: Option<Dataset>,
    pub tasks: Vec<Task>,
    /// The files read.
    pub files: Vec<PathBuf>,
    /// The folder whose `seed/<MODEL>/seed.jsonl` hold LDB's seeds, when known.
    pub seed_root: Option<PathBuf>,
    pub entry_point_fixes: Vec<EntryPointFix>,
    /// Tasks whose visible tests got the set-up code of their hidden test (see
    /// [`attach_setup_code`]).
    pub setup_fixes: Vec<String>,
    /// Visible tests of a published benchmark dropped because they do not parse (see
    /// [`crate::task::LdbLayout::dropped_tests`]).
    pub dropped_tests: Vec<String>,
    /// The bad lines of a `.jsonl` task file, each as its error (`FILE:LINE: ...` and a hint),
    /// set aside so the other tasks run; empty when loaded strictly.
    pub skipped: Vec<String>,
}

impl LoadedDataset {
    /// The hidden-test harness of the benchmark: human-eval's (prompt, then program) for
    /// HumanEval and HumanEval+, whose prompts hold imports and helpers; the program alone for
    /// the rest, as LDB runs them.
    pub fn default_harness(&self) -> Harness {
        let humaneval = match self.dataset {
            Some(d) => matches!(d, Dataset::HumanEval | Dataset::HumanEvalPlus),
            None => {
                !self.tasks.is_empty()
                    && self
                        .tasks
                        .iter()
                        .all(|t| t.task_id.starts_with("HumanEval/"))
            }
        };
        if humaneval {
            Harness::PromptProgram
        } else {
            Harness::Program
        }
    }
}

/// Loads `--dataset NAME|PATH`. Names need `data_dir`. A `.jsonl` task file's bad lines are
/// set aside in [`LoadedDataset::skipped`] and its other tasks loaded.
pub fn load_dataset(spec: &str, data_dir: Option<&Path>) -> Result<LoadedDataset, EvalError> {
    load(spec, data_dir, false)
}

/// [`load_dataset`], failing on the first bad line of a task file (`--strict`).
pub fn load_dataset_strict(
    spec: &str,
    data_dir: Option<&Path>,
) -> Result<LoadedDataset, EvalError> {
    load(spec, data_dir, true)
}

fn load(spec: &str, data_dir: Option<&Path>, strict: bool) -> Result<LoadedDataset, EvalError> {
    let mut loaded = match Dataset::from_name(spec) {
        Some(dataset) => match (
            data_dir,
            match dataset {
                // The plus sets share LDB's folder but are not built in.
                Dataset::HumanEval | Dataset::Mbpp => {
                    crate::eval::fix::builtin::tasks(dataset.ldb_folder())
                }
                _ => None,
            },
        ) {
            (Some(dir), _) => load_named(dataset, dir)?,
            // No data directory: HumanEval and MBPP come from the binary.
            (None, Some(tasks)) => LoadedDataset {
                label: dataset.name().into(),
                dataset: Some(dataset),
                tasks: tasks?,
                files: vec![crate::eval::fix::builtin::source_name(&format!(
                    "{}.jsonl",
                    dataset.ldb_folder()
                ))],
                seed_root: None,
                entry_point_fixes: Vec::new(),
                setup_fixes: Vec::new(),
                dropped_tests: Vec::new(),
                skipped: Vec::new(),
            },
            (None, None) => {
                return Err(EvalError::input(
                    format!(
                        "--dataset {} is not built into ldb (only humaneval and mbpp are); it \
                         needs its files and a data directory",
                        dataset.name()
                    ),
                    missing_data_hint(dataset),
                ));
            }
        },
        None => load_path(Path::new(spec), strict)?,
    };
    loaded.entry_point_fixes = fix_helper_entry_points(&mut loaded.tasks);
    if loaded.dataset == Some(Dataset::Mbpp) {
        loaded.setup_fixes = attach_setup_code(&mut loaded.tasks);
    }
    Ok(loaded)
}

fn load_named(dataset: Dataset, dir: &Path) -> Result<LoadedDataset, EvalError> {
    if !dir.is_dir() {
        return Err(EvalError::input(
            format!("data directory {} does not exist", dir.display()),
            "check --data-dir / LDB_DATA_DIR",
        ));
    }
    match dataset {
        Dataset::HumanEval | Dataset::Mbpp | Dataset::TransCoder => {
            let Some(files) = find_ldb_files(dir, dataset.ldb_folder()) else {
                return Err(EvalError::input(
                    format!(
                        "cannot find {}'s probs.jsonl under {}",
                        dataset.name(),
                        dir.display()
                    ),
                    format!(
                        "expected {0}/ldb/{1}/dataset/probs.jsonl (+ {0}/ldb/{1}/test/tests.jsonl), \
                         {0}/{1}/dataset/probs.jsonl, or {0}/probs.jsonl",
                        dir.display(),
                        dataset.ldb_folder()
                    ),
                ));
            };
            let layout = load_ldb_layout(&files.probs, files.tests.as_deref())?;
            Ok(LoadedDataset {
                label: dataset.name().into(),
                dataset: Some(dataset),
                tasks: layout.tasks,
                files: files.list(),
                seed_root: Some(files.root),
                entry_point_fixes: Vec::new(),
                setup_fixes: Vec::new(),
                dropped_tests: layout.dropped_tests,
                skipped: Vec::new(),
            })
        }
        Dataset::HumanEvalPlus | Dataset::MbppPlus => {
            let prefix = if dataset == Dataset::HumanEvalPlus {
                "HumanEvalPlus"
            } else {
                "MbppPlus"
            };
            let Some(path) = find_evalplus_file(dir, prefix) else {
                return Err(EvalError::input(
                    format!("cannot find {prefix}*.jsonl in {} or {}/evalplus", dir.display(), dir.display()),
                    "download the EvalPlus release file, gunzip it, and put it there (or pass its path as --dataset FILE)",
                ));
            };
            let mut tasks = load_evalplus(&path)?;
            let mut files = vec![path];
            if dataset == Dataset::HumanEvalPlus {
                // LDB's pre-extracted docstring examples are the reference visible tests.
                if let Some(ldb) = find_ldb_files(dir, "humaneval").and_then(|f| f.tests) {
                    let given = read_given_tests(&ldb)?;
                    for task in &mut tasks {
                        if let Some((_, tests)) = given.get(&task.task_id) {
                            task.visible_tests = tests.clone();
                        }
                    }
                    files.push(ldb);
                }
            }
            Ok(LoadedDataset {
                label: dataset.name().into(),
                dataset: Some(dataset),
                tasks,
                files,
                seed_root: find_ldb_files(dir, dataset.ldb_folder()).map(|f| f.root),
                entry_point_fixes: Vec::new(),
                setup_fixes: Vec::new(),
                dropped_tests: Vec::new(),
                skipped: Vec::new(),
            })
        }
    }
}

fn load_path(path: &Path, strict: bool) -> Result<LoadedDataset, EvalError> {
    if !path.exists() {
        return Err(EvalError::input(
            format!(
                "`{}` is neither a dataset name ({}) nor an existing file or folder",
                path.display(),
                Dataset::names()
            ),
            "name a benchmark (with --data-dir) or give the path of a task file",
        ));
    }
    let label = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tasks".into());
    let inferred = infer_dataset(path);
    if path.is_dir() {
        let Some(files) = find_ldb_layout_in(path) else {
            return Err(EvalError::input(
                format!("folder {} holds no probs.jsonl", path.display()),
                "pass a folder in LDB's layout (dataset/probs.jsonl, test/tests.jsonl) or a task file",
            ));
        };
        let layout = load_ldb_layout(&files.probs, files.tests.as_deref())?;
        return Ok(LoadedDataset {
            label: inferred.map(|d| d.name().to_string()).unwrap_or(label),
            dataset: inferred,
            tasks: layout.tasks,
            files: files.list(),
            seed_root: Some(files.root),
            entry_point_fixes: Vec::new(),
            setup_fixes: Vec::new(),
            dropped_tests: layout.dropped_tests,
            skipped: Vec::new(),
        });
    }
    if let Some(tasks) = load_if_evalplus(path)? {
        return Ok(LoadedDataset {
            label,
            dataset: None,
            tasks,
            files: vec![path.to_path_buf()],
            seed_root: None,
            entry_point_fixes: Vec::new(),
            setup_fixes: Vec::new(),
            dropped_tests: Vec::new(),
            skipped: Vec::new(),
        });
    }
    // LDB's probs.jsonl given directly: join its tests.jsonl when it sits where LDB keeps it.
    if path.file_name().is_some_and(|n| n == "probs.jsonl") {
        let dir = path.parent().unwrap_or(Path::new("."));
        let tests = [
            dir.join("tests.jsonl"),
            dir.join("..").join("test").join("tests.jsonl"),
        ]
        .into_iter()
        .find(|p| p.is_file());
        let root = if dir.file_name().is_some_and(|n| n == "dataset") {
            dir.parent().map(Path::to_path_buf)
        } else {
            Some(dir.to_path_buf())
        };
        let layout = load_ldb_layout(path, tests.as_deref())?;
        let mut files = vec![path.to_path_buf()];
        files.extend(tests);
        return Ok(LoadedDataset {
            label: inferred.map(|d| d.name().to_string()).unwrap_or(label),
            dataset: inferred,
            tasks: layout.tasks,
            files,
            seed_root: root,
            entry_point_fixes: Vec::new(),
            setup_fixes: Vec::new(),
            dropped_tests: layout.dropped_tests,
            skipped: Vec::new(),
        });
    }
    let (tasks, skipped) = if strict {
        (load_tasks(path)?, Vec::new())
    } else {
        let loaded = load_tasks_lenient(path)?;
        let skipped: Vec<String> = loaded.skipped.iter().map(ToString::to_string).collect();
        if loaded.tasks.is_empty() {
            return Err(EvalError::input(
                skipped.join("\n"),
                format!(
                    "no line of {} holds a task ldb can run: fix the lines named above",
                    path.display()
                ),
            ));
        }
        (loaded.tasks, skipped)
    };
    Ok(LoadedDataset {
        label,
        dataset: None,
        tasks,
        files: vec![path.to_path_buf()],
        seed_root: None,
        entry_point_fixes: Vec::new(),
        setup_fixes: Vec::new(),
        dropped_tests: Vec::new(),
        skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(entry: &str, visible: &[&str]) -> Task {
        Task {
            task_id: "t".into(),
            prompt: "p".into(),
            entry_point: entry.into(),
            visible_tests: visible.iter().map(|s| s.to_string()).collect(),
            hidden_tests: Some("check(x)".into()),
            seed: None,
            source: None,
            io_tests: Vec::new(),
            scope: Default::default(),
            peers: Vec::new(),
            pytest_nodes: Vec::new(),
            untold: false,
            in_project: false,
        }
    }

    #[test]
    fn helper_entry_points_move_to_the_tested_function() {
        let mut tasks = vec![
            task("merge", &["assert merge_sort([3, 1]) == [1, 3]"]),
            task("f", &["assert f(1) == 2"]),
            task("g", &["assert set(h(1)) == {1}"]),
            task("k", &["assert 1 == 1"]),
        ];
        let fixes = fix_helper_entry_points(&mut tasks);
        assert_eq!(tasks[0].entry_point, "merge_sort");
        assert_eq!(tasks[1].entry_point, "f");
        assert_eq!(tasks[2].entry_point, "h");
        assert_eq!(tasks[3].entry_point, "k");
        assert_eq!(fixes.len(), 2);
        assert_eq!(
            tasks[0].visible_tests,
            ["assert merge_sort([3, 1]) == [1, 3]"]
        );
    }

    #[test]
    fn seed_specs() {
        assert_eq!(SeedSpec::parse(None), SeedSpec::Generate);
        assert_eq!(
            SeedSpec::parse(Some("ldb:gpt-3.5-turbo-0613")),
            SeedSpec::Ldb("gpt-3.5-turbo-0613".into())
        );
        assert_eq!(
            SeedSpec::parse(Some("s.jsonl")),
            SeedSpec::File("s.jsonl".into())
        );
    }

    #[test]
    fn dataset_inferred_from_ldb_paths() {
        assert_eq!(
            infer_dataset(Path::new("/d/ldb/mbpp/dataset/probs.jsonl")),
            Some(Dataset::Mbpp)
        );
        assert_eq!(infer_dataset(Path::new("/d/x/probs.jsonl")), None);
    }
}
