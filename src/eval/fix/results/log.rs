//! The results file on disk: appended a record at a time (flushed and synced), read back with a
//! torn last line dropped, and refused when its header belongs to a run with other settings.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;
use serde_json::Value;

use super::{Header, Record, RunConfig, RESULTS_VERSION};
use crate::eval::fix::EvalError;

/// What reading a results file found besides its records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadNotes {
    /// Byte offset where an unfinished last line starts (a killed run's torn write).
    pub torn_at: Option<u64>,
    /// The last record is whole but lacks its newline.
    pub missing_newline: bool,
    /// Records whose task id came earlier in the file (ignored).
    pub duplicates: usize,
}

/// Reads a results file without changing it: header, records (first of each task id), notes.
pub fn read_log<R: Record>(path: &Path) -> Result<(Header, Vec<R>, ReadNotes), EvalError> {
    let bytes = std::fs::read(path).map_err(|e| EvalError::io(path, e))?;
    let text = String::from_utf8_lossy(&bytes);
    let mut notes = ReadNotes::default();
    let mut header: Option<Header> = None;
    let mut records = Vec::new();
    let mut seen = HashSet::new();
    let mut offset = 0u64;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for (i, raw) in lines.iter().enumerate() {
        let start = offset;
        offset += raw.len() as u64;
        let complete = raw.ends_with('\n');
        let line = raw.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() {
            continue;
        }
        let parsed: Result<Value, _> = serde_json::from_str(line);
        let value =
            match parsed {
                Ok(v) => v,
                Err(_) if !complete && i + 1 == lines.len() => {
                    notes.torn_at = Some(start);
                    break;
                }
                Err(e) => return Err(EvalError::input(
                    format!("{} line {}: not a JSON record: {e}", path.display(), i + 1),
                    "results files are written by `ldb eval`; remove the damaged line or start a \
                     new run",
                )),
            };
        if !complete {
            notes.missing_newline = true;
        }
        let kind = value.get("kind").and_then(Value::as_str).unwrap_or("");
        if header.is_none() {
            if kind != "header" {
                return Err(not_results(path));
            }
            let h: Header = serde_json::from_value(value).map_err(|e| {
                EvalError::input(
                    format!("{}: unreadable header: {e}", path.display()),
                    "the file was written by another version of ldb, or edited",
                )
            })?;
            if h.version != RESULTS_VERSION {
                return Err(EvalError::input(
                    format!(
                        "{} has results format version {}, this ldb reads version {RESULTS_VERSION}",
                        path.display(),
                        h.version
                    ),
                    "start a new run with another --out DIR",
                ));
            }
            header = Some(h);
            continue;
        }
        if kind != R::KIND {
            return Err(EvalError::input(
                format!(
                    "{} line {}: a `{kind}` record where `{}` records belong",
                    path.display(),
                    i + 1,
                    R::KIND
                ),
                "seed files (seeds.jsonl) and strategy results files are not interchangeable",
            ));
        }
        let record: R = serde_json::from_value(value).map_err(|e| {
            EvalError::input(
                format!("{} line {}: unreadable record: {e}", path.display(), i + 1),
                "the file was written by another version of ldb, or edited",
            )
        })?;
        if seen.insert(record.task_id().to_string()) {
            records.push(record);
        } else {
            notes.duplicates += 1;
        }
    }
    let header = header.ok_or_else(|| not_results(path))?;
    Ok((header, records, notes))
}

pub(super) fn not_results(path: &Path) -> EvalError {
    EvalError::input(
        format!(
            "{} is not an `ldb eval` results file (no header line)",
            path.display()
        ),
        "pass files written by `ldb eval`, or choose another --out DIR for a new run",
    )
}

/// An open results file that appends records.
pub struct ResultsLog<R> {
    pub(super) path: PathBuf,
    pub(super) file: Mutex<File>,
    pub(super) written: Mutex<HashSet<String>>,
    pub(super) _record: PhantomData<fn(R)>,
}

impl<R: Record> ResultsLog<R> {
    /// Opens (or creates) `path` for a run with `config`, returning the records already there.
    /// With `retry_errors`, records of failed tasks are removed from the file first.
    pub fn open(
        path: &Path,
        config: &RunConfig,
        retry_errors: bool,
    ) -> Result<(Self, Vec<R>), EvalError> {
        let empty = std::fs::metadata(path)
            .map(|m| m.len() == 0)
            .unwrap_or(true);
        if empty {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| EvalError::io(dir, e))?;
            }
            let mut file = File::create(path).map_err(|e| EvalError::io(path, e))?;
            write_line(&mut file, &Header::new(config.clone()), path)?;
            sync_dir(path);
            return Ok((Self::wrap(path, HashSet::new())?, Vec::new()));
        }
        let (header, mut records, notes) = read_log::<R>(path)?;
        let differences = header.config.differences(config);
        if !differences.is_empty() {
            return Err(EvalError::ConfigMismatch {
                path: path.to_path_buf(),
                differences,
            });
        }
        let failed = records.iter().filter(|r| r.is_error()).count();
        if notes.duplicates > 0 || (retry_errors && failed > 0) {
            // Rewrite: one record per task, and none of the failed ones when retrying them.
            if retry_errors {
                records.retain(|r| !r.is_error());
            }
            rewrite(path, &header, &records)?;
        } else if let Some(at) = notes.torn_at {
            let file = OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| EvalError::io(path, e))?;
            file.set_len(at).map_err(|e| EvalError::io(path, e))?;
            file.sync_all().map_err(|e| EvalError::io(path, e))?;
        } else if notes.missing_newline {
            let mut file = OpenOptions::new()
                .append(true)
                .open(path)
                .map_err(|e| EvalError::io(path, e))?;
            file.write_all(b"\n").map_err(|e| EvalError::io(path, e))?;
            file.sync_all().map_err(|e| EvalError::io(path, e))?;
        }
        let ids = records.iter().map(|r| r.task_id().to_string()).collect();
        Ok((Self::wrap(path, ids)?, records))
    }

    pub(super) fn wrap(path: &Path, written: HashSet<String>) -> Result<Self, EvalError> {
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| EvalError::io(path, e))?;
        Ok(ResultsLog {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            written: Mutex::new(written),
            _record: PhantomData,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `record` durably. Returns `false` (and writes nothing) when its task is already
    /// in the file.
    pub fn append(&self, record: &R) -> Result<bool, EvalError> {
        let mut written = self
            .written
            .lock()
            .map_err(|_| EvalError::input("results log lock poisoned", "run again"))?;
        if written.contains(record.task_id()) {
            return Ok(false);
        }
        let mut file = self
            .file
            .lock()
            .map_err(|_| EvalError::input("results log lock poisoned", "run again"))?;
        write_line(&mut file, record, &self.path)?;
        written.insert(record.task_id().to_string());
        Ok(true)
    }
}

/// One JSON line, written whole, flushed and synced to disk.
pub(super) fn write_line(
    file: &mut File,
    value: &impl Serialize,
    path: &Path,
) -> Result<(), EvalError> {
    let mut line =
        serde_json::to_string(value).map_err(|e| EvalError::io(path, std::io::Error::other(e)))?;
    line.push('\n');
    file.write_all(line.as_bytes())
        .and_then(|_| file.flush())
        .and_then(|_| file.sync_data())
        .map_err(|e| EvalError::io(path, e))
}

pub(crate) fn rewrite<R: Record>(
    path: &Path,
    header: &Header,
    records: &[R],
) -> Result<(), EvalError> {
    let tmp = path.with_extension("jsonl.tmp");
    {
        let mut file = File::create(&tmp).map_err(|e| EvalError::io(&tmp, e))?;
        write_line(&mut file, header, &tmp)?;
        for r in records {
            write_line(&mut file, r, &tmp)?;
        }
    }
    std::fs::rename(&tmp, path).map_err(|e| EvalError::io(path, e))?;
    sync_dir(path);
    Ok(())
}

/// Make a file's creation or rename durable; best effort (not every filesystem allows it).
pub(super) fn sync_dir(path: &Path) {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
}
