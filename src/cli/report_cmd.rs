//! `ldb report RUN.json --html out.html`: a fix report (`ldb fix --report`) as a page to read.

use std::path::PathBuf;

use clap::Args;

use super::output::{CliError, ExitStatus};
use crate::agent::report::ReportFile;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A report written by `ldb fix --report RUN.json`.
    #[arg(value_name = "RUN.json")]
    pub report: PathBuf,
    /// Write a self-contained HTML page here.
    #[arg(long, value_name = "FILE.html")]
    pub html: PathBuf,
}

pub fn run(args: &ReportArgs) -> Result<ExitStatus, CliError> {
    let text = super::output::read_source(&args.report)?;
    let file: ReportFile = serde_json::from_str(&text).map_err(|e| {
        CliError::bad_input(
            format!(
                "{}: not an `ldb fix --report` file: {e}",
                args.report.display()
            ),
            "write one with `ldb fix prog.py --tests test_prog.py --report RUN.json`; \
             `ldb eval` results are summarised by `ldb eval report`",
        )
    })?;
    let page = crate::agent::html::fix_page(&file.tasks);
    std::fs::write(&args.html, page).map_err(|e| {
        CliError::bad_input(
            format!("cannot write {}: {e}", args.html.display()),
            "check that the directory exists and is writable",
        )
    })?;
    eprintln!("wrote {}", args.html.display());
    Ok(ExitStatus::Success)
}
