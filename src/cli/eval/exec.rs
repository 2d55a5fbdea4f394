//! `ldb eval exec`: `ldb exec` over the Treefix sample, scored on coverage, resuming from the
//! records already in `--out`.

use crate::cli::args::values::Subset;
use crate::cli::exec_cmd::search_model;
use crate::cli::output::{self, CliError, ExitStatus};
use crate::cli::settings::EvalExecSettings;
use crate::exec::Snippet;

pub fn run(s: &EvalExecSettings) -> Result<ExitStatus, CliError> {
    use crate::eval::exec::RecordStatus;
    use crate::eval::exec::{append_result, load_records, load_results, run_record, summary};

    let options = &s.options;
    let out = &s.out;
    let bad_data = |e: crate::eval::exec::TreefixDataError| {
        CliError::bad_input(
            e.to_string(),
            "pass the Treefix sample with --data FILE, or its folder's parent with --data-dir \
             (e.g. --data-dir ../shared/datasets)",
        )
    };
    let done = load_results(out).map_err(bad_data)?;
    if s.summary_only {
        output::print(&summary(&done));
        return Ok(ExitStatus::Success);
    }
    let Some(data) = &s.data else {
        return Err(CliError::bad_input(
            "no data: pass --data FILE or --data-dir DIR",
            "e.g. --data-dir ../shared/datasets (or set LDB_DATA_DIR)",
        ));
    };
    let records = load_records(data).map_err(bad_data)?;
    let finished: std::collections::HashSet<&str> = done
        .iter()
        .filter(|r| !(s.retry_errors && r.status == RecordStatus::Error))
        .map(|r| r.id.as_str())
        .collect();
    let todo: Vec<&crate::eval::exec::Record> = records
        .iter()
        .filter(|r| match s.subset {
            Subset::All => true,
            Subset::So => r.subset() == "so",
            Subset::Functions => r.subset() == "functions",
        })
        .filter(|r| s.ids.is_empty() || s.ids.contains(&r.id))
        // Treefix scored these; the rest are the README's negative cases (not Python 3) and
        // records without Treefix's instrumented file.
        .filter(|r| r.scorable() || Snippet::new(r.id.clone(), r.code.clone()).is_err())
        .filter(|r| !finished.contains(r.id.as_str()))
        .take(s.limit.unwrap_or(usize::MAX))
        .collect();
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            CliError::bad_input(
                format!("cannot create {}: {e}", dir.display()),
                "pass a writable --out path",
            )
        })?;
    }
    if !s.quiet {
        eprintln!(
            "eval exec: {} records to run, {} already in {}",
            todo.len(),
            done.len(),
            out.display()
        );
    }
    if !todo.is_empty() {
        let runner = s.sandbox.runner()?;
        let prompts = &s.prompts;
        let generator = search_model(&s.models, options)?;
        let runtime = crate::cli::runtime()?;
        let quiet = s.quiet;
        for (i, record) in todo.iter().enumerate() {
            let id = record.id.clone();
            let progress = move |line: String| {
                if !quiet {
                    eprintln!("  {id}: {line}");
                }
            };
            let result = runtime.block_on(run_record(
                record,
                &*generator,
                &runner,
                prompts,
                options,
                &progress,
            ));
            if !s.quiet {
                let figures = result.ldb.as_ref().map_or_else(
                    || result.detail.clone().unwrap_or_default(),
                    |m| {
                        format!(
                            "set {:.1}% best {:.1}% as-is {:.1}% ({} calls, {:.0} s)",
                            m.set * 100.0,
                            m.best * 100.0,
                            m.as_is * 100.0,
                            result.model_calls,
                            result.elapsed_ms as f64 / 1000.0
                        )
                    },
                );
                eprintln!(
                    "[{}/{}] {} {:?}: {figures}",
                    i + 1,
                    todo.len(),
                    record.id,
                    result.status
                );
            }
            append_result(out, &result).map_err(|e| {
                CliError::bad_input(
                    format!("cannot write {}: {e}", out.display()),
                    "pass a writable --out path",
                )
            })?;
        }
    }
    let all = load_results(out).map_err(bad_data)?;
    output::print(&summary(&all));
    Ok(ExitStatus::Success)
}
