//! Each debugged task's whole fix report, kept beside an evaluation's records: a record keeps
//! the outcome of a task, its report keeps the rounds (programs, failing tests, traces,
//! verdicts, candidates). They live in `OUT/reports/<strategy>/<task>.json`, in the format of
//! `ldb fix --report`, so `ldb report FILE --html` reads one and `ldb eval report --html` links
//! every row of the evaluation page to its task's page.
//!
//! A report is written before its record is appended, so a record never points at a missing
//! report; a killed run leaves at most one report without a record, which the rerun replaces.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::EvalError;
use crate::repair::record::{FixReport, ReportFile, REPORT_VERSION};

/// Name of the folder of reports inside an evaluation's output folder.
pub const DIR: &str = "reports";

/// A task id as a file name: characters outside `[A-Za-z0-9._-]` become `_`
/// (`HumanEval/6` → `HumanEval_6.json`).
pub fn file_name(task_id: &str) -> String {
    let stem: String = task_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    // A leading dot would hide the file; an empty id still needs a name.
    let stem = match stem.strip_prefix('.') {
        Some(rest) => format!("_{rest}"),
        None if stem.is_empty() => "_".to_string(),
        None => stem,
    };
    format!("{stem}.json")
}

/// Where the report of `task_id` under `strategy` lives in the output folder `out_dir`.
pub fn path(out_dir: &Path, strategy: &str, task_id: &str) -> PathBuf {
    out_dir.join(DIR).join(strategy).join(file_name(task_id))
}

/// Writes the report of one task (whole or not at all: a temporary file renamed into place).
pub fn save(out_dir: &Path, strategy: &str, report: &FixReport) -> Result<PathBuf, EvalError> {
    let target = path(out_dir, strategy, &report.task_id);
    let dir = target.parent().unwrap_or(out_dir);
    std::fs::create_dir_all(dir).map_err(|e| EvalError::io(dir, e))?;
    let file = ReportFile {
        version: REPORT_VERSION,
        tasks: vec![report.clone()],
    };
    let text = serde_json::to_string(&file).map_err(|e| EvalError::Fatal {
        class: crate::eval::fix::ErrorClass::Internal,
        message: format!("cannot serialise the report of {}: {e}", report.task_id),
    })?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| EvalError::io(dir, e))?;
    tmp.write_all(text.as_bytes())
        .map_err(|e| EvalError::io(tmp.path(), e))?;
    tmp.persist(&target)
        .map_err(|e| EvalError::io(&target, e.error))?;
    Ok(target)
}

/// Reads the report of `task_id` under `strategy`; `None` when the run kept none (a task whose
/// seed was final, a run made with `--no-reports`, or one made before reports were kept).
pub fn load(out_dir: &Path, strategy: &str, task_id: &str) -> Option<FixReport> {
    let text = std::fs::read_to_string(path(out_dir, strategy, task_id)).ok()?;
    let file: ReportFile = serde_json::from_str(&text).ok()?;
    file.tasks.into_iter().find(|r| r.task_id == task_id)
}

/// Like [`load`], but tells a missing report (`Ok(None)`) from one that is there and cannot be
/// read (`Err`, naming the file).
pub fn load_checked(
    out_dir: &Path,
    strategy: &str,
    task_id: &str,
) -> Result<Option<FixReport>, EvalError> {
    let file = path(out_dir, strategy, task_id);
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(EvalError::io(&file, e)),
    };
    let damaged = |why: String| {
        EvalError::input(
            format!(
                "{}: not a report of task `{task_id}`: {why}",
                file.display()
            ),
            "reports are written by `ldb eval`; restore the file or rerun the task",
        )
    };
    let parsed: ReportFile = serde_json::from_str(&text).map_err(|e| damaged(e.to_string()))?;
    parsed
        .tasks
        .into_iter()
        .find(|r| r.task_id == task_id)
        .map(Some)
        .ok_or_else(|| damaged("it holds other tasks".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_become_plain_file_names() {
        assert_eq!(file_name("HumanEval/6"), "HumanEval_6.json");
        assert_eq!(file_name("Mbpp/12"), "Mbpp_12.json");
        assert_eq!(file_name("../etc/passwd"), "_._etc_passwd.json");
        assert_eq!(file_name(""), "_.json");
        assert_eq!(file_name("a b:c"), "a_b_c.json");
    }
}
