//! One evaluation on many machines: `ldb eval --shard I/N` runs the I-th of N disjoint slices
//! of the tasks, and [`merge`] joins the shards' run directories into one run.
//!
//! A shard's slice is every N-th task of the run's task list (the dataset after `--tasks`, and
//! `--limit` when debugging every task), starting at I (0-based, so a Kubernetes Indexed Job's
//! `JOB_COMPLETION_INDEX` is I as it is). Round-robin rather than contiguous: benchmarks are
//! ordered roughly by difficulty, so contiguous slices would finish at very different times.
//!
//! Each shard's directory gets a `shard.json` manifest: which shard it is and the whole task
//! list. From the manifests alone the merge can tell overlaps (two directories of the same
//! shard, or records of one task in two directories), and which tasks are missing (a shard not
//! given, or a shard that stopped early) — by name. ldb brings no scheduler: running the shards
//! is the job of whatever runs containers (docs/eval.md).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::results::{read_log, rewrite, Header, Record, SeedRecord, TaskRecord};
use super::EvalError;

/// The manifest's file name in a shard's run directory.
pub const MANIFEST: &str = "shard.json";

/// Shard `index` of `count` (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

/// A `--shard` value that is not `I/N` with 0 <= I < N.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--shard `{text}`: {problem}")]
pub struct ShardParseError {
    pub text: String,
    pub problem: String,
}

impl ShardParseError {
    pub fn hint(&self) -> &'static str {
        "write I/N with 0 <= I < N: --shard 0/4 ... --shard 3/4 (in a Kubernetes Indexed Job: \
         --shard $JOB_COMPLETION_INDEX/N)"
    }
}

impl FromStr for Shard {
    type Err = ShardParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let err = |problem: &str| ShardParseError {
            text: text.to_string(),
            problem: problem.to_string(),
        };
        let (i, n) = text
            .split_once('/')
            .ok_or_else(|| err("expected I/N, e.g. 0/4"))?;
        let index: usize = i
            .trim()
            .parse()
            .map_err(|_| err("I is not a whole number"))?;
        let count: usize = n
            .trim()
            .parse()
            .map_err(|_| err("N is not a whole number"))?;
        if count == 0 {
            return Err(err("N must be at least 1"));
        }
        if index >= count {
            return Err(err("I counts from 0, so it must be below N"));
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// This shard's part of `items`: positions index, index + count, ...
    pub fn slice<T: Clone>(&self, items: &[T]) -> Vec<T> {
        items
            .iter()
            .skip(self.index)
            .step_by(self.count.max(1))
            .cloned()
            .collect()
    }
}

/// What `shard.json` holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub shard: Shard,
    /// The dataset label, as in the results headers.
    pub dataset: String,
    /// The whole run's task list, before slicing, in order.
    pub tasks: Vec<String>,
}

impl Manifest {
    /// The tasks of this manifest's shard.
    pub fn own_tasks(&self) -> Vec<String> {
        self.shard.slice(&self.tasks)
    }
}

fn read_manifest(dir: &Path) -> Result<Option<Manifest>, EvalError> {
    let path = dir.join(MANIFEST);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(EvalError::io(&path, e)),
    };
    serde_json::from_str(&text).map(Some).map_err(|e| {
        EvalError::input(
            format!("{}: unreadable shard manifest: {e}", path.display()),
            "shard.json is written by `ldb eval --shard I/N`; do not edit it",
        )
    })
}

/// Makes `dir` the directory of `shard` (or of an unsharded run when `None`): writes the
/// manifest, or checks the one there, so a shard never resumes another shard's directory.
pub fn claim_dir(dir: &Path, manifest: Option<&Manifest>) -> Result<(), EvalError> {
    let existing = read_manifest(dir)?;
    let path = dir.join(MANIFEST);
    match (existing, manifest) {
        (None, None) => Ok(()),
        (Some(old), Some(new)) if old == *new => Ok(()),
        (Some(old), Some(new)) => Err(EvalError::input(
            format!(
                "{} is the directory of shard {} of {} tasks ({}), not of shard {} of {} tasks ({})",
                dir.display(),
                old.shard,
                old.tasks.len(),
                old.dataset,
                new.shard,
                new.tasks.len(),
                new.dataset
            ),
            "give every shard its own --out DIR, and the same --tasks/--limit to all of them",
        )),
        (Some(old), None) => Err(EvalError::input(
            format!(
                "{} holds shard {} of a sharded run; an unsharded run would mix with it",
                dir.display(),
                old.shard
            ),
            "choose another --out DIR, or pass the same --shard to resume the shard",
        )),
        (None, Some(new)) => {
            let has_results = std::fs::read_dir(dir)
                .map(|mut entries| {
                    entries.any(|e| {
                        e.ok()
                            .is_some_and(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
                    })
                })
                .unwrap_or(false);
            if has_results {
                return Err(EvalError::input(
                    format!(
                        "{} holds results of an unsharded run; shard {} would mix with them",
                        dir.display(),
                        new.shard
                    ),
                    "give the shard its own --out DIR",
                ));
            }
            let text = serde_json::to_string_pretty(new)
                .map_err(|e| EvalError::io(&path, std::io::Error::other(e)))?;
            std::fs::write(&path, text + "\n").map_err(|e| EvalError::io(&path, e))
        }
    }
}

/// What a merge wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    /// Results files written (seeds first), with their record counts.
    pub files: Vec<(PathBuf, usize)>,
    /// Tasks without a record, by file name (only with `partial`).
    pub missing: BTreeMap<String, Vec<String>>,
}

/// Joins shard directories into `out`: one `seeds.jsonl` and one `<strategy>.jsonl` per
/// strategy, records in the run's task order. Refuses directories that are not shards of one
/// run, overlapping shards, and (unless `partial`) missing tasks, naming them.
pub fn merge(dirs: &[PathBuf], out: &Path, partial: bool) -> Result<Merged, EvalError> {
    let manifests = read_manifests(dirs)?;
    let Some((first_dir, first)) = manifests.first() else {
        return Err(EvalError::input(
            "no shard directories to merge",
            "ldb eval merge DIR... --out MERGED",
        ));
    };
    let mut by_index: HashMap<usize, &PathBuf> = HashMap::new();
    for (dir, m) in &manifests {
        if m.shard.count != first.shard.count
            || m.tasks != first.tasks
            || m.dataset != first.dataset
        {
            return Err(EvalError::input(
                format!(
                    "{} and {} are shards of different runs ({} shards of {} {} tasks vs {} \
                     shards of {} {} tasks)",
                    first_dir.display(),
                    dir.display(),
                    first.shard.count,
                    first.tasks.len(),
                    first.dataset,
                    m.shard.count,
                    m.tasks.len(),
                    m.dataset
                ),
                "merge the shards of one run: the same dataset, --tasks/--limit and N",
            ));
        }
        if let Some(other) = by_index.insert(m.shard.index, dir) {
            return Err(EvalError::input(
                format!(
                    "overlapping shards: {} and {} are both shard {}",
                    other.display(),
                    dir.display(),
                    m.shard
                ),
                "give each shard once; if one was run twice, keep the directory you want",
            ));
        }
    }
    let files = results_files(&manifests)?;
    if out.exists()
        && std::fs::read_dir(out)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        return Err(EvalError::input(
            format!("{} exists and is not empty", out.display()),
            "merge into a new directory: --out DIR",
        ));
    }
    std::fs::create_dir_all(out).map_err(|e| EvalError::io(out, e))?;
    let mut merged = Merged {
        files: Vec::new(),
        missing: BTreeMap::new(),
    };
    let mut missing_all: Vec<String> = Vec::new();
    for name in &files {
        let (written, missing) = if name == "seeds.jsonl" {
            merge_file::<SeedRecord>(&manifests, name, out)?
        } else {
            merge_file::<TaskRecord>(&manifests, name, out)?
        };
        if !missing.is_empty() {
            for id in &missing {
                if !missing_all.contains(id) {
                    missing_all.push(id.clone());
                }
            }
            merged.missing.insert(name.clone(), missing);
        }
        merged.files.push((out.join(name), written));
    }
    // Each task's report, when the shards kept them (tasks are disjoint, so names are too).
    for (dir, _) in &manifests {
        copy_tree(
            &dir.join(super::fix_reports::DIR),
            &out.join(super::fix_reports::DIR),
        )?;
    }
    if !missing_all.is_empty() && !partial {
        // Nothing half-merged is left behind.
        let _ = std::fs::remove_dir_all(out);
        let absent: Vec<String> = (0..first.shard.count)
            .filter(|i| !by_index.contains_key(i))
            .map(|i| format!("{i}/{}", first.shard.count))
            .collect();
        let shown: Vec<&str> = missing_all.iter().take(20).map(String::as_str).collect();
        return Err(EvalError::input(
            format!(
                "{} tasks have no results: {}{}{}",
                missing_all.len(),
                shown.join(", "),
                if missing_all.len() > shown.len() {
                    ", ..."
                } else {
                    ""
                },
                if absent.is_empty() {
                    " (their shards stopped before finishing them)".to_string()
                } else {
                    format!(" (shards not given: {})", absent.join(", "))
                }
            ),
            "run the missing shards (or rerun a stopped shard with the same command: it \
             resumes) and merge again, or pass --partial to merge what is there",
        ));
    }
    Ok(merged)
}

/// Copies the files under `from` into `to` (folders made as needed); nothing when `from` is
/// absent.
fn copy_tree(from: &Path, to: &Path) -> Result<(), EvalError> {
    let Ok(entries) = std::fs::read_dir(from) else {
        return Ok(());
    };
    std::fs::create_dir_all(to).map_err(|e| EvalError::io(to, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| EvalError::io(from, e))?;
        let source = entry.path();
        let target = to.join(entry.file_name());
        if source.is_dir() {
            copy_tree(&source, &target)?;
        } else {
            std::fs::copy(&source, &target).map_err(|e| EvalError::io(&source, e))?;
        }
    }
    Ok(())
}

fn read_manifests(dirs: &[PathBuf]) -> Result<Vec<(PathBuf, Manifest)>, EvalError> {
    let mut out = Vec::new();
    for dir in dirs {
        match read_manifest(dir)? {
            Some(m) => out.push((dir.clone(), m)),
            None => {
                return Err(EvalError::input(
                    format!(
                        "{} is not a shard's run directory (no {MANIFEST})",
                        dir.display()
                    ),
                    "merge the --out directories of `ldb eval --shard I/N` runs",
                ))
            }
        }
    }
    Ok(out)
}

/// The results files every shard has (seeds.jsonl first); a file some shards lack is refused.
fn results_files(manifests: &[(PathBuf, Manifest)]) -> Result<Vec<String>, EvalError> {
    let mut sets: Vec<(PathBuf, Vec<String>)> = Vec::new();
    for (dir, _) in manifests {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map_err(|e| EvalError::io(dir, e))?
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".jsonl") && !n.ends_with(".samples.jsonl"))
            .collect();
        names.sort_by_key(|n| (n != "seeds.jsonl", n.clone()));
        sets.push((dir.clone(), names));
    }
    let Some((first_dir, first)) = sets.first() else {
        return Ok(Vec::new());
    };
    for (dir, names) in &sets {
        if names != first {
            return Err(EvalError::input(
                format!(
                    "{} holds results files {:?}, {} holds {:?}",
                    first_dir.display(),
                    first,
                    dir.display(),
                    names
                ),
                "run every shard with the same --strategy list",
            ));
        }
    }
    Ok(first.clone())
}

/// Joins one results file of every shard; returns the records written and the tasks missing.
fn merge_file<R: Record>(
    manifests: &[(PathBuf, Manifest)],
    name: &str,
    out: &Path,
) -> Result<(usize, Vec<String>), EvalError> {
    let mut header: Option<(PathBuf, Header)> = None;
    let mut earliest = u64::MAX;
    let mut records: HashMap<String, (PathBuf, R)> = HashMap::new();
    for (dir, manifest) in manifests {
        let path = dir.join(name);
        let (h, recs, _) = read_log::<R>(&path)?;
        earliest = earliest.min(h.created_unix);
        match &header {
            None => header = Some((path.clone(), h)),
            Some((first_path, first)) => {
                let differences = first.config.differences(&h.config);
                if !differences.is_empty() {
                    return Err(EvalError::ConfigMismatch {
                        path: path.clone(),
                        differences: differences
                            .into_iter()
                            .map(|d| format!("{d} (vs {})", first_path.display()))
                            .collect(),
                    });
                }
            }
        }
        let own: Vec<String> = manifest.own_tasks();
        for r in recs {
            let id = r.task_id().to_string();
            if !own.contains(&id) {
                return Err(EvalError::input(
                    format!(
                        "{} holds `{id}`, which is not a task of shard {}",
                        path.display(),
                        manifest.shard
                    ),
                    "the directory was reused by another run; rerun that shard into a fresh --out DIR",
                ));
            }
            if let Some((other, _)) = records.get(&id) {
                return Err(EvalError::input(
                    format!(
                        "overlapping shards: `{id}` is in {} and {}",
                        other.display(),
                        path.display()
                    ),
                    "give each shard once",
                ));
            }
            records.insert(id, (path.clone(), r));
        }
    }
    let Some((_, mut header)) = header else {
        return Ok((0, Vec::new()));
    };
    // The run started when its first shard did.
    header.created_unix = earliest;
    let order = manifests
        .first()
        .map(|(_, m)| m.tasks.clone())
        .unwrap_or_default();
    let mut ordered = Vec::new();
    let mut missing = Vec::new();
    for id in order {
        match records.remove(&id) {
            Some((_, r)) => ordered.push(r),
            None => missing.push(id),
        }
    }
    rewrite(&out.join(name), &header, &ordered)?;
    Ok((ordered.len(), missing))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_from_zero_and_refuse_what_is_not_i_of_n() {
        assert_eq!("1/4".parse::<Shard>(), Ok(Shard { index: 1, count: 4 }));
        for bad in ["4/4", "1", "a/2", "0/0", "-1/2"] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(
                e.to_string().starts_with(&format!("--shard `{bad}`")),
                "{e}"
            );
        }
    }

    #[test]
    fn slices_are_disjoint_and_cover_every_task() {
        let tasks: Vec<u32> = (0..11).collect();
        let mut seen: Vec<u32> = (0..3)
            .flat_map(|index| Shard { index, count: 3 }.slice(&tasks))
            .collect();
        assert_eq!(
            Shard { index: 1, count: 3 }.slice(&tasks),
            vec![1, 4, 7, 10]
        );
        seen.sort();
        assert_eq!(seen, tasks);
        // More shards than tasks: the extra shards are empty, not an error.
        assert!(Shard { index: 5, count: 6 }.slice(&tasks[..3]).is_empty());
    }

    #[test]
    fn a_directory_belongs_to_one_shard() {
        let dir = tempfile::tempdir().expect("tempdir");
        let m = |index| Manifest {
            shard: Shard { index, count: 2 },
            dataset: "d".into(),
            tasks: vec!["a".into(), "b".into()],
        };
        claim_dir(dir.path(), Some(&m(0))).expect("first claim");
        claim_dir(dir.path(), Some(&m(0))).expect("resume");
        let e = claim_dir(dir.path(), Some(&m(1))).unwrap_err();
        assert!(e.to_string().contains("not of shard 1/2"), "{e}");
        let e = claim_dir(dir.path(), None).unwrap_err();
        assert!(e.to_string().contains("holds shard 0/2"), "{e}");
    }
}
