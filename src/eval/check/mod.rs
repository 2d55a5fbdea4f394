//! `ldb eval check`: run `ldb check` over ORCA's sets (or the runtime-error data joined with
//! CodeNet) and score it with the datasets' own metrics, next to the stored predictions of ORCA,
//! B1 and B2 re-scored on the same instances.
//!
//! Each checked instance is one line of a JSONL results file; running the same command again
//! skips the instances already there, so a long (model) run resumes. Sandbox work runs in
//! parallel; model calls run one at a time (a local model gains nothing from more).
//!
//! Parts: this module selects and runs the items; `tables` scores and renders them.

mod tables;

use std::collections::{BTreeMap, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::check::hybrid::{self, Started};
use crate::check::orca::{CheckDataError, OrcaInstance, OrcaSet};
use crate::check::runtime_errors::PreRecord;
use crate::check::{exec, predict, CheckError, CheckOptions, CheckReport, Mode, Program};
use crate::generate::model::ChatModel;
use crate::generate::prompts::Prompts;
use crate::run::{in_parallel, Runner};

pub use tables::{
    pre_label, render_orca, render_pre, score_orca, score_pre, score_stored, OrcaTable, PreTable,
};

/// The datasets `ldb eval check` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckDataset {
    Orca(OrcaSet),
    RuntimeErrors,
}

impl CheckDataset {
    pub fn parse(name: &str) -> Option<CheckDataset> {
        match name {
            "orca-complete" => Some(CheckDataset::Orca(OrcaSet::Complete)),
            "orca-incomplete" => Some(CheckDataset::Orca(OrcaSet::Incomplete)),
            "runtime-errors" => Some(CheckDataset::RuntimeErrors),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CheckDataset::Orca(set) => set.name(),
            CheckDataset::RuntimeErrors => "runtime-errors",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EvalCheckError {
    #[error(transparent)]
    Data(#[from] CheckDataError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: not a results record: {message}")]
    Record {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("instance {id}: {source}")]
    Check { id: String, source: CheckError },
    /// A record that does not encode as JSON: a bug, not the data's fault.
    #[error("instance {id}: cannot encode its record: {source}")]
    Encode {
        id: String,
        source: serde_json::Error,
    },
}

/// One program to check.
#[derive(Debug, Clone)]
pub struct Item {
    pub id: String,
    pub program: Vec<u8>,
    pub stdin: Option<String>,
    pub input_desc: Option<String>,
    pub incomplete: bool,
}

/// One line of a results file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EvalRecord {
    pub id: String,
    pub mode: Mode,
    /// The model that predicted, or `none`.
    pub model: String,
    pub report: Option<CheckReport>,
    /// Why the instance could not be checked (e.g. it does not parse).
    pub error: Option<String>,
    pub elapsed_ms: u64,
}

/// Instances of an ORCA set: `ids` if given, else a balanced sample of `sample` (half buggy,
/// half clean, drawn with `seed`), else all; in file order.
pub fn select_orca<'a>(
    all: &'a [OrcaInstance],
    sample: Option<usize>,
    seed: u64,
    ids: &[String],
) -> Vec<&'a OrcaInstance> {
    if !ids.is_empty() {
        return all.iter().filter(|i| ids.contains(&i.id)).collect();
    }
    let Some(n) = sample else {
        return all.iter().collect();
    };
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut pick = |buggy: bool, k: usize| -> Vec<usize> {
        let mut idx: Vec<usize> = (0..all.len())
            .filter(|&i| all.get(i).is_some_and(|x| x.is_buggy == buggy))
            .collect();
        rng.shuffle(&mut idx);
        idx.truncate(k);
        idx
    };
    let mut chosen = pick(true, n.div_ceil(2));
    chosen.extend(pick(false, n / 2));
    chosen.sort_unstable();
    chosen.into_iter().filter_map(|i| all.get(i)).collect()
}

/// The ORCA instances as programs to check (snippet mode for the incomplete set).
pub fn orca_items(selected: &[&OrcaInstance], set: OrcaSet) -> Vec<Item> {
    selected
        .iter()
        .map(|i| Item {
            id: i.id.clone(),
            program: i.code.clone().into_bytes(),
            stdin: None,
            input_desc: None,
            incomplete: set == OrcaSet::Incomplete,
        })
        .collect()
}

/// Runtime-error records whose program and input the CodeNet checkout has.
pub fn pre_items(selected: &[&PreRecord], codenet: &Path) -> (Vec<Item>, usize) {
    let mut missing = 0;
    let items = selected
        .iter()
        .filter_map(|r| match r.from_codenet(codenet) {
            Some((program, input)) => Some(Item {
                id: r.id(),
                program,
                stdin: Some(input),
                input_desc: Some(r.resource_description.clone()),
                incomplete: false,
            }),
            None => {
                missing += 1;
                None
            }
        })
        .collect();
    (items, missing)
}

/// Read a results file (absent: none yet).
pub fn read_records(path: &Path) -> Result<BTreeMap<String, EvalRecord>, EvalCheckError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(source) => {
            return Err(EvalCheckError::Io {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record: EvalRecord =
            serde_json::from_str(line).map_err(|e| EvalCheckError::Record {
                path: path.to_path_buf(),
                line: i + 1,
                message: e.to_string(),
            })?;
        out.insert(record.id.clone(), record);
    }
    Ok(out)
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunStats {
    pub skipped: usize,
    pub checked: usize,
    pub model_calls: usize,
}

/// How to run.
pub struct RunConfig<'a> {
    pub mode: Mode,
    pub options: CheckOptions,
    pub out: &'a Path,
    pub jobs: usize,
    /// Name of the model for the records (`none` without one).
    pub model_name: String,
}

/// Check every item not yet in `config.out`, appending a record per item.
/// `progress(done, total)` is called after each one.
pub async fn run(
    config: &RunConfig<'_>,
    runner: &Runner,
    model: Option<&dyn ChatModel>,
    prompts: &Prompts,
    items: &[Item],
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<RunStats, EvalCheckError> {
    let done: HashSet<String> = read_records(config.out)?.into_keys().collect();
    let todo: Vec<&Item> = items.iter().filter(|i| !done.contains(&i.id)).collect();
    let mut stats = RunStats {
        skipped: items.len() - todo.len(),
        ..RunStats::default()
    };
    if let Some(dir) = config.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| EvalCheckError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(config.out)
        .map_err(|source| EvalCheckError::Io {
            path: config.out.to_path_buf(),
            source,
        })?;
    let writer = std::sync::Mutex::new(file);
    let write = |record: &EvalRecord| -> Result<(), EvalCheckError> {
        let mut line = serde_json::to_string(record).map_err(|source| EvalCheckError::Encode {
            id: record.id.clone(),
            source,
        })?;
        line.push('\n');
        let mut f = writer.lock().unwrap_or_else(|p| p.into_inner());
        f.write_all(line.as_bytes())
            .and_then(|_| f.flush())
            .map_err(|source| EvalCheckError::Io {
                path: config.out.to_path_buf(),
                source,
            })
    };
    let total = todo.len();
    let counter = std::sync::atomic::AtomicUsize::new(0);
    let tick = || {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        progress(n, total);
    };
    let options_for = |item: &Item| CheckOptions {
        mode: config.mode,
        stdin: item.stdin.clone(),
        input_desc: item.input_desc.clone(),
        incomplete: item.incomplete,
        ..config.options.clone()
    };
    let record =
        |item: &Item, report: Option<CheckReport>, error: Option<String>, ms: u64| EvalRecord {
            id: item.id.clone(),
            mode: config.mode,
            model: if report.as_ref().is_some_and(|r| r.usage.is_some()) {
                config.model_name.clone()
            } else {
                "none".into()
            },
            report,
            error,
            elapsed_ms: ms,
        };

    // Sandbox work, in parallel: exec mode entirely, hybrid up to the point a model is needed.
    let mut needs_model: Vec<(&Item, Option<hybrid::Pending>, Program, u64)> = Vec::new();
    match config.mode {
        Mode::Predict => {
            for item in &todo {
                match Program::new(&item.id, &item.program) {
                    Ok(p) => needs_model.push((item, None, p, 0)),
                    Err(e) => {
                        write(&record(item, None, Some(e.to_string()), 0))?;
                        stats.checked += 1;
                        tick();
                    }
                }
            }
        }
        Mode::Exec | Mode::Hybrid => {
            let results = in_parallel(&todo, config.jobs, |item| {
                let started = Instant::now();
                let program = match Program::new(&item.id, &item.program) {
                    Ok(p) => p,
                    Err(e) => return Ok((Err(e.to_string()), None, started)),
                };
                let options = options_for(item);
                let outcome = if config.mode == Mode::Exec {
                    exec::check(runner, &program, &options).map(|r| (Some(r), None))
                } else {
                    hybrid::start(runner, &program, &options).map(|s| match s {
                        Started::Done(r) => (Some(*r), None),
                        Started::NeedsPrediction(p) => (None, Some(*p)),
                    })
                };
                let result = match outcome {
                    Ok((Some(report), _)) => {
                        let ms = started.elapsed().as_millis() as u64;
                        write(&record(item, Some(report), None, ms))?;
                        tick();
                        (Ok(None), None, started)
                    }
                    Ok((None, pending)) => (Ok(Some(program)), pending, started),
                    Err(source) => {
                        return Err(EvalCheckError::Check {
                            id: item.id.clone(),
                            source,
                        })
                    }
                };
                Ok(result)
            });
            for (item, result) in todo.iter().zip(results) {
                let Some(result) = result else { continue };
                let (program, pending, started) = result?;
                match program {
                    Err(message) => {
                        write(&record(item, None, Some(message), 0))?;
                        stats.checked += 1;
                        tick();
                    }
                    Ok(None) => stats.checked += 1,
                    Ok(Some(program)) => needs_model.push((
                        item,
                        pending,
                        program,
                        started.elapsed().as_millis() as u64,
                    )),
                }
            }
        }
    }

    // Model work, one at a time.
    for (item, pending, program, sandbox_ms) in needs_model {
        let started = Instant::now();
        let options = options_for(item);
        let report = match (&pending, model) {
            (Some(p), Some(m)) => {
                stats.model_calls += 1;
                hybrid::finish(m, prompts, &program, &options, p).await
            }
            (Some(p), None) => Ok(p.without_prediction(&program)),
            (None, Some(m)) => {
                stats.model_calls += 1;
                let prepared = exec::prepare(&program, options.incomplete);
                predict::check(m, prompts, &program, &prepared, &options, None).await
            }
            (None, None) => Err(CheckError::NoModel { mode: "predict" }),
        }
        .map_err(|source| EvalCheckError::Check {
            id: item.id.clone(),
            source,
        })?;
        let ms = sandbox_ms + started.elapsed().as_millis() as u64;
        write(&record(item, Some(report), None, ms))?;
        stats.checked += 1;
        tick();
    }
    Ok(stats)
}
