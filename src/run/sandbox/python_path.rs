//! Directories programs may import from (`--python-path`): checked before any run, so a path
//! the sandbox would hide or its unprivileged user could not read is refused with the reason.

use std::path::{Path, PathBuf};

use super::mounts;

/// Why a directory cannot be on the sandboxed programs' import path.
#[derive(Debug, thiserror::Error)]
pub enum PythonPathError {
    #[error("{0} is not a directory")]
    NotADirectory(PathBuf),
    #[error("{0} is under {1}, which the sandbox replaces with empty scratch space")]
    Hidden(PathBuf, &'static str),
    #[error("{0} contains `:`, the separator of PYTHONPATH")]
    Separator(PathBuf),
    /// As root, ldb runs programs as an unprivileged user, who must be able to enter every
    /// directory on the way and read the directory itself.
    #[error(
        "{0} is not readable by the unprivileged user programs run as (ldb runs as root): \
         {1} is closed to other users"
    )]
    Unreadable(PathBuf, PathBuf),
}

impl PythonPathError {
    /// What to do about it, for a `hint:` line.
    pub fn hint(&self) -> String {
        match self {
            PythonPathError::Unreadable(_, closed) => format!(
                "let other users in (chmod o+rx {}) or install the packages elsewhere \
                 (e.g. pip install --target /opt/ldb-site numpy)",
                closed.display()
            ),
            _ => "give an existing directory outside /tmp, /var/tmp and /dev/shm \
                  (e.g. pip install --target ~/.cache/ldb-site numpy)"
                .into(),
        }
    }
}

/// `dir` as the sandbox will see it: absolute, existing, not hidden by a scratch mount.
pub fn check_python_path(dir: &Path) -> Result<PathBuf, PythonPathError> {
    let absolute = std::fs::canonicalize(dir)
        .ok()
        .filter(|p| p.is_dir())
        .ok_or_else(|| PythonPathError::NotADirectory(dir.to_path_buf()))?;
    if let Some(scratch) = mounts::SCRATCH
        .iter()
        .find(|s| absolute.starts_with(Path::new(s)))
    {
        return Err(PythonPathError::Hidden(absolute, scratch));
    }
    if absolute.as_os_str().as_encoded_bytes().contains(&b':') {
        return Err(PythonPathError::Separator(absolute));
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        if let Some(closed) = closed_to_others(&absolute) {
            return Err(PythonPathError::Unreadable(absolute, closed));
        }
    }
    Ok(absolute)
}

/// The first directory on the way to `dir` (or `dir` itself) that a user who is neither its
/// owner nor in its group cannot enter (or, for `dir`, list).
fn closed_to_others(dir: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).map(|m| m.permissions().mode()).ok();
    for ancestor in dir.ancestors().collect::<Vec<_>>().into_iter().rev() {
        let need = if ancestor == dir { 0o005 } else { 0o001 };
        match mode(ancestor) {
            Some(m) if m & need == need => {}
            _ => return Some(ancestor.to_path_buf()),
        }
    }
    None
}
