//! `ldb eval report RESULTS...`: summaries of results files (markdown, comparison table, SVG
//! charts, an HTML page, human-eval samples), with LDB's published results re-scored beside them.

use std::path::{Path, PathBuf};

use clap::Args;

use super::output::{self, CliError, ExitStatus};
use super::SandboxArgs;
use crate::eval::published::{self, Published};
use crate::eval::report::{self, load_results, Summary};

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Results files (<strategy>.jsonl) or run directories (every results file in them).
    #[arg(required = true, value_name = "RESULTS")]
    pub results: Vec<PathBuf>,
    /// Write the markdown here instead of stdout.
    #[arg(long, short = 'o', value_name = "FILE.md")]
    pub out: Option<PathBuf>,
    /// Write the chart of pass@1 against iteration budget (SVG) here.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Write the chart of tasks fixed against tokens spent per task (SVG) here.
    #[arg(long, value_name = "FILE.svg")]
    pub plot_tokens: Option<PathBuf>,
    /// Write a self-contained HTML page: the comparison, the chart and a row per task, each
    /// linking to its task's rounds (pages in FILE_fixes/, from the reports the run kept).
    #[arg(long, value_name = "FILE.html")]
    pub html: Option<PathBuf>,
    /// Export human-eval samples.jsonl (completion = final program) of one results file.
    #[arg(long, value_name = "FILE.jsonl")]
    pub samples: Option<PathBuf>,
    /// Print the summaries as JSON instead of markdown.
    #[arg(long)]
    pub json: bool,
    /// Add a sanity line for one of LDB's published results files
    /// (`ldb/results_summary/<dataset>__<model>.jsonl`): LDB's claimed pass@1 next to ours on
    /// its final programs (and seeds), re-scored in the sandbox with LDB's harness. Repeatable.
    #[arg(long, value_name = "FILE.jsonl")]
    pub ldb_published: Vec<PathBuf>,
    /// Folder with the benchmark files, for --ldb-published (default: LDB_DATA_DIR, else the
    /// folder above the file's `ldb/`).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

/// `ldb eval report RESULTS...`
pub fn report(args: &ReportArgs) -> Result<ExitStatus, CliError> {
    let runs = load_results(&args.results)?;
    for run in &runs {
        if run.notes.torn_at.is_some() {
            eprintln!(
                "note: {} ends in an unfinished line (a run was killed); it is ignored",
                run.path.display()
            );
        }
    }
    let summaries: Vec<Summary> = runs.iter().map(Summary::of).collect();
    let published = published_rows(args)?;
    if let Some(path) = &args.samples {
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
    if let Some(path) = &args.plot {
        write_file(path, &report::plot(&summaries))?;
    }
    if let Some(path) = &args.html {
        let links = crate::eval::html::write_fix_pages(&runs, path)?;
        write_file(
            path,
            &crate::eval::html::eval_page(&runs, &summaries, &links),
        )?;
        if !links.is_empty() {
            eprintln!(
                "wrote {} and a page per debugged task ({})",
                path.display(),
                links.len()
            );
        }
    }
    let plot_ref = args
        .plot
        .as_ref()
        .map(|p| relative_to(p, args.out.as_deref()));
    if args.json {
        output::print_json(&serde_json::json!({"runs": summaries, "published": published}))?;
        return Ok(ExitStatus::Success);
    }
    if let Some(path) = &args.plot_tokens {
        write_file(path, &report::plot_tokens(&summaries))?;
    }
    let tokens_ref = args
        .plot_tokens
        .as_ref()
        .map(|p| relative_to(p, args.out.as_deref()));
    let markdown = report::markdown(
        &summaries,
        &published,
        plot_ref.as_deref(),
        tokens_ref.as_deref(),
    );
    match &args.out {
        Some(path) => write_file(path, &markdown)?,
        None => output::print(&markdown),
    }
    Ok(ExitStatus::Success)
}

/// Re-scores each `--ldb-published` file.
fn published_rows(args: &ReportArgs) -> Result<Vec<Published>, CliError> {
    if args.ldb_published.is_empty() {
        return Ok(Vec::new());
    }
    let runner = args.sandbox.runner()?;
    let mut rows = Vec::new();
    for file in &args.ldb_published {
        let data_dir = data_dir_or_env(args.data_dir.as_ref()).or_else(|| default_data_dir(file));
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

/// `--data-dir`, else `LDB_DATA_DIR`.
pub(super) fn data_dir_or_env(flag: Option<&PathBuf>) -> Option<PathBuf> {
    flag.cloned()
        .or_else(|| std::env::var_os("LDB_DATA_DIR").map(PathBuf::from))
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
