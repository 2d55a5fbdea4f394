//! `ldb report RUN.json --html out.html`: a fix report (`ldb fix --report`) as a page to read.

use super::output::{CliError, ExitStatus};
use super::settings::ReportSettings;
use crate::repair::record::ReportFile;

pub fn run(s: &ReportSettings) -> Result<ExitStatus, CliError> {
    let text = crate::cli::output::read_source(&s.report)?;
    let file: ReportFile = serde_json::from_str(&text).map_err(|e| {
        CliError::bad_input(
            format!(
                "{}: not an `ldb fix --report` file: {e}",
                s.report.display()
            ),
            "write one with `ldb fix prog.py --tests test_prog.py --report RUN.json`; \
             `ldb eval` results are summarised by `ldb eval report`",
        )
    })?;
    let page = crate::report::html::fix_page(&file.tasks)
        .map_err(|e| CliError::internal(e.to_string()))?;
    std::fs::write(&s.html, page).map_err(|e| {
        CliError::bad_input(
            format!("cannot write {}: {e}", s.html.display()),
            "check that the directory exists and is writable",
        )
    })?;
    eprintln!("wrote {}", s.html.display());
    Ok(ExitStatus::Success)
}
