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

use std::path::{Path, PathBuf};

use super::score::Harness;
use super::EvalError;
use crate::task::evalplus::{is_evalplus_file, load_evalplus};
use crate::task::{
    called_names, is_builtin_wrapper, load_ldb_layout, load_tasks, read_given_tests, Task,
};

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

/// A task whose entry point was changed by [`fix_helper_entry_points`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryPointFix {
    pub task_id: String,
    pub from: String,
    pub to: String,
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

/// Where the seeds come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeedSpec {
    /// Generated by the generator model.
    Generate,
    /// `ldb:MODEL`: LDB's seed file `<seed_root>/seed/MODEL/seed.jsonl`.
    Ldb(String),
    /// A seed file (`task_id` + `solution`/`program`/`completion`).
    File(PathBuf),
}

impl SeedSpec {
    /// `None` or `generate` → generate; `ldb:MODEL`; anything else is a path.
    pub fn parse(text: Option<&str>) -> SeedSpec {
        match text.map(str::trim) {
            None | Some("") | Some("generate") => SeedSpec::Generate,
            Some(t) => match t.strip_prefix("ldb:") {
                Some(model) => SeedSpec::Ldb(model.trim().to_string()),
                None => SeedSpec::File(PathBuf::from(t)),
            },
        }
    }

    /// The form written to results headers.
    pub fn label(&self) -> String {
        match self {
            SeedSpec::Generate => "generate".into(),
            SeedSpec::Ldb(model) => format!("ldb:{model}"),
            SeedSpec::File(path) => path.display().to_string(),
        }
    }

    /// The seed file to read, if seeds come from a file.
    pub fn resolve(&self, dataset: &LoadedDataset) -> Result<Option<PathBuf>, EvalError> {
        match self {
            SeedSpec::Generate => Ok(None),
            SeedSpec::File(path) => {
                if path.is_file() {
                    Ok(Some(path.clone()))
                } else {
                    Err(EvalError::input(
                        format!("seed file {} does not exist", path.display()),
                        "give a .jsonl of {\"task_id\", \"solution\"|\"program\"|\"completion\"} \
                         records, ldb:MODEL for LDB's seed files, or leave --seeds out to generate",
                    ))
                }
            }
            SeedSpec::Ldb(model) => {
                let Some(root) = &dataset.seed_root else {
                    if let Some(d) = dataset
                        .dataset
                        .filter(|_| dataset.files.iter().any(|f| f.starts_with("<built-in>")))
                    {
                        return Err(EvalError::input(
                            format!(
                                "--seeds ldb:{model}: LDB's seed files are not built into ldb, \
                                 and no --data-dir was given"
                            ),
                            super::builtin::seeds_hint(d.ldb_folder(), model),
                        ));
                    }
                    return Err(EvalError::input(
                        format!(
                            "--seeds ldb:{model} needs LDB's data layout, but dataset `{}` is not in it",
                            dataset.label
                        ),
                        "use --dataset humaneval|mbpp|transcoder with --data-dir, or pass the seed \
                         file's path to --seeds",
                    ));
                };
                let path = root.join("seed").join(model).join("seed.jsonl");
                if path.is_file() {
                    return Ok(Some(path));
                }
                let available = list_dirs(&root.join("seed"));
                Err(EvalError::input(
                    format!(
                        "no LDB seed file for model `{model}`: {} does not exist",
                        path.display()
                    ),
                    if available.is_empty() {
                        format!(
                            "{} has no seed/ folder; pass a seed file's path",
                            root.display()
                        )
                    } else {
                        format!("models with seeds here: {}", available.join(", "))
                    },
                ))
            }
        }
    }
}

fn list_dirs(dir: &Path) -> Vec<String> {
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

/// Loads `--dataset NAME|PATH`. Names need `data_dir`.
pub fn load_dataset(spec: &str, data_dir: Option<&Path>) -> Result<LoadedDataset, EvalError> {
    let mut loaded = match Dataset::from_name(spec) {
        Some(dataset) => match (
            data_dir,
            match dataset {
                // The plus sets share LDB's folder but are not built in.
                Dataset::HumanEval | Dataset::Mbpp => super::builtin::tasks(dataset.ldb_folder()),
                _ => None,
            },
        ) {
            (Some(dir), _) => load_named(dataset, dir)?,
            // No data directory: HumanEval and MBPP come from the binary.
            (None, Some(tasks)) => LoadedDataset {
                label: dataset.name().into(),
                dataset: Some(dataset),
                tasks: tasks?,
                files: vec![super::builtin::source_name(&format!(
                    "{}.jsonl",
                    dataset.ldb_folder()
                ))],
                seed_root: None,
                entry_point_fixes: Vec::new(),
                setup_fixes: Vec::new(),
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
        None => load_path(Path::new(spec))?,
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
            let tasks = load_ldb_layout(&files.probs, files.tests.as_deref())?;
            Ok(LoadedDataset {
                label: dataset.name().into(),
                dataset: Some(dataset),
                tasks,
                files: files.list(),
                seed_root: Some(files.root),
                entry_point_fixes: Vec::new(),
                setup_fixes: Vec::new(),
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
            })
        }
    }
}

fn load_path(path: &Path) -> Result<LoadedDataset, EvalError> {
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
        let tasks = load_ldb_layout(&files.probs, files.tests.as_deref())?;
        return Ok(LoadedDataset {
            label: inferred.map(|d| d.name().to_string()).unwrap_or(label),
            dataset: inferred,
            tasks,
            files: files.list(),
            seed_root: Some(files.root),
            entry_point_fixes: Vec::new(),
            setup_fixes: Vec::new(),
        });
    }
    if is_evalplus_file(path)? {
        return Ok(LoadedDataset {
            label,
            dataset: None,
            tasks: load_evalplus(path)?,
            files: vec![path.to_path_buf()],
            seed_root: None,
            entry_point_fixes: Vec::new(),
            setup_fixes: Vec::new(),
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
        let tasks = load_ldb_layout(path, tests.as_deref())?;
        let mut files = vec![path.to_path_buf()];
        files.extend(tests);
        return Ok(LoadedDataset {
            label: inferred.map(|d| d.name().to_string()).unwrap_or(label),
            dataset: inferred,
            tasks,
            files,
            seed_root: root,
            entry_point_fixes: Vec::new(),
            setup_fixes: Vec::new(),
        });
    }
    Ok(LoadedDataset {
        label,
        dataset: None,
        tasks: load_tasks(path)?,
        files: vec![path.to_path_buf()],
        seed_root: None,
        entry_point_fixes: Vec::new(),
        setup_fixes: Vec::new(),
    })
}

/// `humaneval`/`mbpp`/`transcoder` when a path runs through LDB's folder of that name.
fn infer_dataset(path: &Path) -> Option<Dataset> {
    let parts: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_ascii_lowercase())
        .collect();
    parts
        .windows(2)
        .find(|w| w[0] == "ldb")
        .and_then(|w| Dataset::from_name(&w[1]))
}

struct LdbFiles {
    probs: PathBuf,
    tests: Option<PathBuf>,
    /// The folder holding `dataset/`, `test/` and `seed/`.
    root: PathBuf,
}

impl LdbFiles {
    fn list(&self) -> Vec<PathBuf> {
        let mut files = vec![self.probs.clone()];
        files.extend(self.tests.clone());
        files
    }
}

/// LDB's files for `folder` (`humaneval`, ...) under `dir`, which may be the data dir, the `ldb`
/// folder, or the dataset's own folder.
fn find_ldb_files(dir: &Path, folder: &str) -> Option<LdbFiles> {
    [
        dir.join("ldb").join(folder),
        dir.join(folder),
        dir.to_path_buf(),
    ]
    .iter()
    .find_map(|root| find_ldb_layout_in(root))
}

/// `root/dataset/probs.jsonl` (+ `root/test/tests.jsonl`), or `root/probs.jsonl` (+ `root/tests.jsonl`).
fn find_ldb_layout_in(root: &Path) -> Option<LdbFiles> {
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
fn find_evalplus_file(dir: &Path, prefix: &str) -> Option<PathBuf> {
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

/// For tasks whose visible tests never call the entry point (LDB's MBPP names the first
/// function of the reference code, sometimes a helper), make the entry point the function the
/// first visible test calls. Visible and hidden tests stay as they are. Returns what changed.
pub fn fix_helper_entry_points(tasks: &mut [Task]) -> Vec<EntryPointFix> {
    let mut fixes = Vec::new();
    for task in tasks.iter_mut() {
        if task.entry_point.is_empty() || task.visible_tests.is_empty() {
            continue;
        }
        let calls_entry = task
            .visible_tests
            .iter()
            .any(|t| called_names(t).contains(&task.entry_point));
        if calls_entry {
            continue;
        }
        let Some(first) = task.visible_tests.first() else {
            continue;
        };
        let called = called_names(first)
            .into_iter()
            .find(|n| !is_builtin_wrapper(n));
        if let Some(to) = called {
            fixes.push(EntryPointFix {
                task_id: task.task_id.clone(),
                from: task.entry_point.clone(),
                to: to.clone(),
            });
            task.entry_point = to;
        }
    }
    fixes
}

/// LDB's MBPP keeps a task's set-up code (MBPP's `test_setup_code`, e.g. task 367 building the
/// trees its asserts use) only in front of the hidden `check`, so the visible test can only fail
/// with a NameError. Put that set-up code (never an assert) in front of the visible tests too, as
/// MBPP itself does. Returns the task ids changed.
pub fn attach_setup_code(tasks: &mut [Task]) -> Vec<String> {
    let mut changed = Vec::new();
    for task in tasks.iter_mut() {
        let Some(hidden) = task.hidden_tests.as_deref() else {
            continue;
        };
        let hidden = hidden.replace("\r\n", "\n");
        let Some(at) = hidden.find("def check(") else {
            continue;
        };
        let setup = hidden[..at].trim();
        if setup.is_empty() || setup.contains("assert") {
            continue;
        }
        let mut touched = false;
        for test in &mut task.visible_tests {
            if !test.starts_with(setup) {
                *test = format!("{setup}\n{test}");
                touched = true;
            }
        }
        if touched {
            changed.push(task.task_id.clone());
        }
    }
    changed
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
