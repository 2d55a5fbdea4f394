//! The image workers run from: the `ldb` binary with the built-in benchmarks blanked out.
//!
//! `ldb` embeds HumanEval and MBPP, hidden tests included (`task::embedded`). A run's process
//! maps the image it was started from, and `/proc/self/exe` opens it: a program run by a worker
//! started from `ldb` itself could read the expected values of its own task there, or in its own
//! memory. So workers start from a copy of the binary in which those bytes are zeros: made once
//! per build of `ldb` (in the user's cache dir, `ldb/workers/`, else in memory), held open for
//! the process's life (a later build removing old copies cannot pull it away) and started
//! through that descriptor.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// Copies of older builds kept besides the newest (other `ldb` processes may still start
/// workers from them by path; running ones hold theirs open).
const KEEP: usize = 2;
const NAME_PREFIX: &str = "ldb-worker-";

/// A blanked copy of an `ldb` binary, open for the process's life.
#[derive(Debug)]
pub(super) struct WorkerImage {
    _file: OwnedFd,
    /// `/proc/self/fd/N`: what a child starts (it resolves the path before `exec` closes it).
    path: PathBuf,
}

impl WorkerImage {
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    fn open(file: OwnedFd) -> Self {
        // Above the descriptors a starting worker puts in place (0 to 4), which would otherwise
        // replace it before `exec` resolves the path.
        // SAFETY: fcntl on a descriptor we own; a non-negative result is a new descriptor.
        let high = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 64) };
        let file = if high >= 0 {
            // SAFETY: `high` was just made and nothing else owns it.
            unsafe { OwnedFd::from_raw_fd(high) }
        } else {
            file
        };
        let path = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
        WorkerImage { _file: file, path }
    }
}

/// Why there is no worker image (kept per binary, so it is cheap to clone).
#[derive(Debug, Clone, thiserror::Error)]
pub(super) enum ImageError {
    #[error("the worker image table is poisoned")]
    Poisoned,
    #[error("{doing}: {source}")]
    Io {
        doing: String,
        source: Arc<std::io::Error>,
    },
}

impl ImageError {
    fn io(doing: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let doing = doing.into();
        move |e| ImageError::Io {
            doing,
            source: Arc::new(e),
        }
    }
}

type Images = Mutex<HashMap<PathBuf, Result<Arc<WorkerImage>, ImageError>>>;

/// The image to start workers of `exe` from; an error says why there is none (workers then
/// start from `exe` itself, with a warning on every run).
pub(super) fn for_exe(exe: &Path) -> Result<Arc<WorkerImage>, ImageError> {
    static IMAGES: OnceLock<Images> = OnceLock::new();
    let images = IMAGES.get_or_init(|| Mutex::new(HashMap::new()));
    let mut images = images.lock().map_err(|_| ImageError::Poisoned)?;
    images
        .entry(exe.to_path_buf())
        .or_insert_with(|| make(exe).map(Arc::new))
        .clone()
}

fn make(exe: &Path) -> Result<WorkerImage, ImageError> {
    let meta =
        std::fs::metadata(exe).map_err(ImageError::io(format!("reading {}", exe.display())))?;
    let key = format!(
        "{NAME_PREFIX}{:x}-{:x}-{:x}-{:x}",
        meta.dev(),
        meta.ino(),
        meta.size(),
        meta.mtime_nsec() as u64 ^ (meta.mtime() as u64).rotate_left(32)
    );
    if let Some(dir) = dirs::cache_dir().map(|d| d.join("ldb").join("workers")) {
        if let Ok(image) = cached(&dir, &key, exe) {
            return Ok(image);
        }
    }
    in_memory(exe)
}

/// The copy in `dir`, made if missing.
fn cached(dir: &Path, key: &str, exe: &Path) -> Result<WorkerImage, ImageError> {
    let path = dir.join(key);
    if let Ok(file) = File::open(&path) {
        if trusted(&file) {
            return Ok(WorkerImage::open(OwnedFd::from(file)));
        }
    }
    let writing = || ImageError::io(format!("writing a worker image in {}", dir.display()));
    std::fs::create_dir_all(dir).map_err(writing())?;
    let image = blanked(exe)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".ldb-worker-")
        .tempfile_in(dir)
        .map_err(writing())?;
    tmp.write_all(&image).map_err(writing())?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o755))
        .map_err(writing())?;
    let file = tmp.persist(&path).map_err(|e| writing()(e.error))?;
    // Written through a descriptor still open for writing: the kernel refuses to execute a
    // file open for writing, so the copy is reopened read-only.
    drop(file);
    let file = File::open(&path).map_err(writing())?;
    prune(dir, key);
    Ok(WorkerImage::open(OwnedFd::from(file)))
}

/// Ours and writable by nobody else.
fn trusted(file: &File) -> bool {
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    file.metadata()
        .is_ok_and(|m| m.is_file() && m.uid() == me && m.mode() & 0o022 == 0)
}

/// Remove all but the newest [`KEEP`] copies besides `key`.
fn prune(dir: &Path, key: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut others: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with(NAME_PREFIX) && name != key
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    others.sort_by_key(|entry| std::cmp::Reverse(entry.0));
    for (_, path) in others.into_iter().skip(KEEP) {
        let _ = std::fs::remove_file(path);
    }
}

/// A sealed in-memory copy, where no cache dir can hold one.
fn in_memory(exe: &Path) -> Result<WorkerImage, ImageError> {
    let image = blanked(exe)?;
    // SAFETY: memfd_create with a NUL-terminated name; a negative result is an error.
    let fd = unsafe {
        libc::memfd_create(
            c"ldb-worker".as_ptr(),
            libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
        )
    };
    if fd < 0 {
        return Err(ImageError::io(
            "no cache dir for a worker image, and no memory file",
        )(std::io::Error::last_os_error()));
    }
    // SAFETY: a descriptor just made and owned by nobody else.
    let mut file = unsafe { File::from_raw_fd(fd) };
    file.write_all(&image)
        .map_err(ImageError::io("writing the worker image in memory"))?;
    let seals = libc::F_SEAL_SEAL | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE;
    // SAFETY: fcntl on the descriptor we own.
    if unsafe { libc::fcntl(fd, libc::F_ADD_SEALS, seals) } != 0 {
        return Err(ImageError::io("sealing the worker image")(
            std::io::Error::last_os_error(),
        ));
    }
    // A file open for writing cannot be executed: keep a read-only descriptor only.
    let read_only =
        File::open(format!("/proc/self/fd/{fd}")).map_err(ImageError::io("reopening"))?;
    drop(file);
    Ok(WorkerImage::open(OwnedFd::from(read_only)))
}

/// The bytes of `exe` with every copy of the built-in benchmarks zeroed.
fn blanked(exe: &Path) -> Result<Vec<u8>, ImageError> {
    let mut image =
        std::fs::read(exe).map_err(ImageError::io(format!("reading {}", exe.display())))?;
    blank(&mut image, &crate::task::embedded::files());
    Ok(image)
}

/// Zero every occurrence of each of `secrets` in `image`; returns how many there were.
fn blank(image: &mut [u8], secrets: &[&[u8]]) -> usize {
    let mut found = 0;
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        let finder = memchr::memmem::Finder::new(secret);
        let mut from = 0;
        while let Some(at) = image.get(from..).and_then(|rest| finder.find(rest)) {
            let start = from + at;
            let end = start + secret.len();
            if let Some(range) = image.get_mut(start..end) {
                range.fill(0);
            }
            found += 1;
            from = end;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_copy_of_a_secret_is_zeroed() {
        let mut image = b"..SECRET..SECRET.SECRE".to_vec();
        assert_eq!(blank(&mut image, &[b"SECRET"]), 2);
        assert_eq!(&image, b"..\0\0\0\0\0\0..\0\0\0\0\0\0.SECRE");
    }
}
