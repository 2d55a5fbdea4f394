//! The files of a pull: its state record, the lock that keeps two pulls apart, hashing and
//! verification, and writes that are atomic and synced.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::error::{io_err, PullError};
use super::{PullProgress, BUFFER, STATE_FILE};
use crate::generate::local::catalog::ModelSpec;

/// Progress of assembly, saved after every appended part.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct State {
    /// The model's sha256: a state left by a different catalogue entry is discarded.
    pub(super) sha256: String,
    pub(super) parts_done: usize,
    /// Length of the assembled file after `parts_done` parts.
    pub(super) length: u64,
}

impl State {
    /// The saved state, with the assembled file cut back to it (an append interrupted after the
    /// last save left extra bytes); anything inconsistent starts from scratch.
    pub(super) fn load(
        work: &Path,
        assembled: &Path,
        spec: &ModelSpec,
    ) -> Result<State, PullError> {
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

    pub(super) fn save(&self, work: &Path) -> Result<(), PullError> {
        let path = work.join(STATE_FILE);
        let text = serde_json::to_vec_pretty(self).map_err(|e| PullError::Io {
            path: path.clone(),
            source: std::io::Error::other(e),
        })?;
        write_atomically(&path, &text)
    }
}

pub(super) async fn verify_file(spec: &ModelSpec, path: &Path) -> Result<(), PullError> {
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
pub(super) fn sha256_file(path: &Path) -> Result<String, PullError> {
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
pub(super) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, PullError> + Send + 'static,
) -> Result<T, PullError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| PullError::Io {
            path: PathBuf::new(),
            source: std::io::Error::other(format!("background task failed: {e}")),
        })?
}

/// Hold an exclusive lock on the model's work dir so two pulls never write the same files;
/// a second pull waits, then finds the model installed.
pub(super) async fn lock(
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
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => {
            progress.message(&format!(
                "waiting for another pull of {} to finish",
                spec.name
            ));
            let owned = path.to_path_buf();
            blocking(move || {
                file.lock().map_err(|source| PullError::Io {
                    path: owned,
                    source,
                })?;
                Ok(file)
            })
            .await
        }
        Err(std::fs::TryLockError::Error(source)) => Err(PullError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

pub(super) fn remove_if_present(path: &Path) -> Result<(), PullError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(PullError::Io {
            path: path.to_path_buf(),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// Write via a temporary file and a rename, so readers see the old or the new content.
pub(super) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), PullError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let mut file = std::fs::File::create(&tmp).map_err(io_err(&tmp))?;
    file.write_all(bytes).map_err(io_err(&tmp))?;
    file.sync_all().map_err(io_err(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io_err(path))
}

/// Make a rename durable; failing to is not worth failing the pull over.
pub(super) fn sync_dir(dir: &Path) {
    if let Ok(handle) = std::fs::File::open(dir) {
        let _ = handle.sync_all();
    }
}
