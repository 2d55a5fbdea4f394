//! `ldb fix prog.py --write`: the program file held for the length of the run. Before the model
//! runs, the file is locked (a second run on it waits), checked to be writable and read once;
//! at the end the fix replaces it only if it still holds what was read, after the original is
//! kept as a backup.

use std::path::{Path, PathBuf};

use super::read::{self, ReadError, Text};
use super::write::{self, FileLock};

/// Why the file cannot be held for writing.
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error("{} cannot be written: {source}", path.display())]
    NotWritable {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Why the fix did not replace the file. In every case the file holds what it held before.
#[derive(Debug, thiserror::Error)]
pub enum CommitError {
    /// The file changed while ldb ran; the fix went beside it (`saved`, when that worked).
    #[error("{} changed while ldb was running, so it was left as it is", path.display())]
    Changed {
        path: PathBuf,
        saved: Option<PathBuf>,
    },
    #[error("cannot keep a backup of {}: {source}", path.display())]
    Backup {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The program file, locked, and what it held when read.
#[derive(Debug)]
pub struct WriteGuard {
    path: PathBuf,
    original: Text,
    bytes: Vec<u8>,
    _lock: FileLock,
}

impl WriteGuard {
    /// Lock `path` (calling `on_wait` if another run holds it), check that it and its
    /// directory can be written, and read it.
    pub fn acquire(path: &Path, on_wait: &mut dyn FnMut()) -> Result<WriteGuard, GuardError> {
        // Refuse a FIFO or a device before opening it for the lock.
        read::read_bytes(path, read::caps::SOURCE)?;
        let lock = FileLock::acquire(path, on_wait).map_err(|source| ReadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let real = std::fs::canonicalize(path).map_err(|source| ReadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let dir = real.parent().unwrap_or(Path::new("/"));
        for p in [real.as_path(), dir] {
            writable(p).map_err(|source| GuardError::NotWritable {
                path: p.to_path_buf(),
                source,
            })?;
        }
        // Under the lock no run of ours is writing: what a killed one left can go.
        write::remove_stale_temps(&real);
        let bytes = read::read_bytes(path, read::caps::SOURCE)?;
        let original = read::decode(path, bytes.clone())?;
        Ok(WriteGuard {
            path: path.to_path_buf(),
            original,
            bytes,
            _lock: lock,
        })
    }

    /// What the file held when the run started (without a byte-order mark).
    pub fn original(&self) -> &Text {
        &self.original
    }

    /// Replace the file with `fixed` (encoded as the original was: byte-order mark, line ends),
    /// keeping the original as a backup first. Returns the backup's path.
    pub fn commit(&self, fixed: &str) -> Result<PathBuf, CommitError> {
        let now = read::read_bytes(&self.path, read::caps::SOURCE).ok();
        let encoded = self.original.encode_like(fixed);
        if now.as_deref() != Some(self.bytes.as_slice()) {
            return Err(self.set_aside(&encoded));
        }
        let backup =
            write::backup(&self.path, &self.bytes).map_err(|source| CommitError::Backup {
                path: self.path.clone(),
                source,
            })?;
        // Swapped in only if the file still holds what was read: an edit made up to the swap
        // itself is kept.
        match write::replace_unless_changed(&self.path, &encoded, &self.bytes) {
            Ok(write::Replaced::Done) => Ok(backup),
            Ok(write::Replaced::Changed) => Err(self.set_aside(&encoded)),
            Err(source) => Err(CommitError::Write {
                path: self.path.clone(),
                source,
            }),
        }
    }

    /// The file changed while ldb ran: the fix goes beside it (`<name>.ldb-fix`, created
    /// exclusively and never through a symlink; numbered when taken).
    fn set_aside(&self, encoded: &[u8]) -> CommitError {
        let saved = write::keep_beside(&self.path, ".ldb-fix", encoded).ok();
        CommitError::Changed {
            path: self.path.clone(),
            saved,
        }
    }
}

/// `access(W_OK)`: whether this process may write `path`.
fn writable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::other("path holds a NUL byte"))?;
    // SAFETY: a valid NUL-terminated path.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_edited_during_the_run_is_kept_and_the_fix_goes_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("prog.py");
        std::fs::write(&p, "def f():\n    return 1\n").unwrap();
        let guard = WriteGuard::acquire(&p, &mut || {}).unwrap();
        std::fs::write(&p, "def f():\n    return 2  # edited\n").unwrap();
        let e = guard.commit("def f():\n    return 3\n").unwrap_err();
        let CommitError::Changed { saved, .. } = e else {
            panic!("{e}");
        };
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "def f():\n    return 2  # edited\n"
        );
        assert_eq!(
            std::fs::read_to_string(saved.unwrap()).unwrap(),
            "def f():\n    return 3\n"
        );
    }

    #[test]
    fn commit_keeps_a_backup_and_the_encoding() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("prog.py");
        std::fs::write(&p, b"\xEF\xBB\xBFx = 1\r\n").unwrap();
        let guard = WriteGuard::acquire(&p, &mut || {}).unwrap();
        assert_eq!(guard.original().text, "x = 1\r\n");
        let backup = guard.commit("x = 2\n").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"\xEF\xBB\xBFx = 2\r\n");
        assert_eq!(std::fs::read(backup).unwrap(), b"\xEF\xBB\xBFx = 1\r\n");
    }

    #[test]
    fn a_symlink_at_ldb_fix_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("prog.py");
        let victim = dir.path().join("victim.txt");
        std::fs::write(&p, "x = 1\n").unwrap();
        std::fs::write(&victim, "keep me\n").unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join("prog.py.ldb-fix")).unwrap();
        let guard = WriteGuard::acquire(&p, &mut || {}).unwrap();
        std::fs::write(&p, "x = 1  # edited\n").unwrap();
        let CommitError::Changed { saved, .. } = guard.commit("x = 2\n").unwrap_err() else {
            panic!("not Changed");
        };
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
        let saved = saved.expect("saved beside");
        assert!(saved.ends_with("prog.py.ldb-fix.1"), "{}", saved.display());
        assert_eq!(std::fs::read_to_string(saved).unwrap(), "x = 2\n");
    }
}
