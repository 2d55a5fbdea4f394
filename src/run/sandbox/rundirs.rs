//! The host directories of runs: where a run's work dir is mounted, and what is left of it when
//! `ldb` is killed.
//!
//! A run writes nothing to the host disk: its work dir, `/tmp`, `/var/tmp` and `/dev/shm` are
//! one size-capped tmpfs of its own mount namespace (`mounts.rs`), which the kernel frees when
//! the run's last process ends, however `ldb` ends. On the host each run has only an empty
//! directory (the mount point, and the work dir itself where no mount namespace can be made),
//! under one directory per sandbox, `TMPDIR/ldb-runs-PID-START-XXXXXX`, named after the owning
//! process and its start time. That directory is removed when the sandbox is dropped; if `ldb`
//! is killed first, its warm workers remove it as they exit (they outlive it by the moment it
//! takes them to see it gone), and whatever still remains (cold runs of a killed `ldb`) is
//! removed by the next `ldb` to start a sandbox in the same temp dir, once the owner is gone.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

/// Prefix of a sandbox's directory of run dirs.
pub(super) const PREFIX: &str = "ldb-runs-";
/// Prefix of the run dirs of `ldb` versions before run dirs had an owner.
const LEGACY_PREFIX: &str = "ldb-run-";
/// A legacy run dir this old belongs to no live run (runs last seconds to minutes).
const LEGACY_AGE: Duration = Duration::from_secs(24 * 3600);

/// One sandbox's run dirs under `temp_root`, made on first use.
#[derive(Debug)]
pub(super) struct RunDirs {
    temp_root: PathBuf,
    root: OnceLock<Result<PathBuf, Arc<std::io::Error>>>,
    next: AtomicU64,
}

impl RunDirs {
    pub(super) fn new(temp_root: PathBuf) -> Self {
        let temp_root = std::path::absolute(&temp_root).unwrap_or(temp_root);
        RunDirs {
            temp_root,
            root: OnceLock::new(),
            next: AtomicU64::new(0),
        }
    }

    pub(super) fn temp_root(&self) -> &Path {
        &self.temp_root
    }

    /// The directory that holds this sandbox's run dirs; the first call removes what killed
    /// `ldb` processes left in the temp dir, then makes it.
    pub(super) fn root(&self) -> Result<&Path, std::io::Error> {
        match self.root.get_or_init(|| {
            sweep(&self.temp_root);
            make_root(&self.temp_root).map_err(Arc::new)
        }) {
            Ok(root) => Ok(root),
            // The first call's error, again for every later one.
            Err(e) => Err(std::io::Error::new(e.kind(), Arc::clone(e))),
        }
    }

    /// A new, empty run dir.
    pub(super) fn create(&self) -> Result<RunDir, std::io::Error> {
        let root = self.root()?;
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let path = root.join(format!("run-{n}"));
        std::fs::create_dir(&path)?;
        Ok(RunDir { path })
    }
}

impl Drop for RunDirs {
    fn drop(&mut self) {
        if let Some(Ok(root)) = self.root.get() {
            remove_tree(root);
        }
    }
}

/// One run's host directory; removed when dropped.
#[derive(Debug)]
pub(super) struct RunDir {
    path: PathBuf,
}

impl RunDir {
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// Remove it now; false if it could not be (it is then kept for inspection).
    pub(super) fn remove(self) -> bool {
        let path = self.path.clone();
        std::mem::forget(self);
        remove_tree(&path)
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        remove_tree(&self.path);
    }
}

fn make_root(temp_root: &Path) -> std::io::Result<PathBuf> {
    let me = owner_tag(std::process::id()).ok_or_else(|| {
        std::io::Error::other("cannot read this process's start time in /proc/self/stat")
    })?;
    let dir = tempfile::Builder::new()
        .prefix(&format!("{PREFIX}{me}-"))
        .tempdir_in(temp_root)?
        .keep();
    // Others may pass through (a per-run user reaches its own work dir where no mount
    // namespace hides the host's), not list it.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o711))?;
    Ok(dir)
}

/// `PID-STARTTIME` of a live process: a pid alone may be reused by the time anyone looks.
fn owner_tag(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Field 22 (start time); fields are counted after the command name, which may hold spaces.
    let after_name = stat.get(stat.rfind(')')? + 1..)?;
    let start = after_name.split_whitespace().nth(19)?;
    Some(format!("{pid}-{start}"))
}

/// Whether the process a directory's name says owns it is gone.
fn owner_gone(name: &str) -> bool {
    let mut parts = name.splitn(3, '-');
    let (Some(pid), Some(start)) = (parts.next(), parts.next()) else {
        return false;
    };
    let Ok(pid) = pid.parse::<u32>() else {
        return false;
    };
    if !Path::new("/proc/self/stat").exists() {
        // No way to tell: keep it.
        return false;
    }
    owner_tag(pid).is_none_or(|tag| tag != format!("{pid}-{start}"))
}

/// Remove the run dirs of `ldb` processes that are gone (only our own user's).
pub(super) fn sweep(temp_root: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(temp_root) else {
        return;
    };
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != me {
            continue;
        }
        let stale = if let Some(owner) = name.strip_prefix(PREFIX) {
            owner_gone(owner)
        } else if name.starts_with(LEGACY_PREFIX) {
            meta.modified()
                .ok()
                .and_then(|m| SystemTime::now().duration_since(m).ok())
                .is_some_and(|age| age > LEGACY_AGE)
        } else {
            false
        };
        if stale {
            remove_tree(&entry.path());
        }
    }
}

/// Remove `root`, a sandbox's directory of run dirs, for its owner that is gone (a warm worker
/// whose parent died). Anything not named like one is left alone.
pub(super) fn remove_owned(root: &Path) {
    let named = root
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(PREFIX));
    if named {
        remove_tree(root);
    }
}

/// Remove `dir` and everything in it, even parts the program made read-only.
pub(super) fn remove_tree(dir: &Path) -> bool {
    if std::fs::remove_dir_all(dir).is_ok() || !dir.exists() {
        return true;
    }
    make_writable(dir);
    std::fs::remove_dir_all(dir).is_ok() || !dir.exists()
}

fn make_writable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700));
    if let Ok(entries) = std::fs::read_dir(path) {
        for entry in entries.flatten() {
            if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                make_writable(&entry.path());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_owns_its_tag_and_a_dead_one_does_not() {
        let tag = owner_tag(std::process::id()).expect("own start time");
        assert!(!owner_gone(&format!("{tag}-abc123")));
        // Same pid, another start time: the pid was reused.
        let pid = std::process::id();
        assert!(owner_gone(&format!("{pid}-1-abc123")));
        assert!(!owner_gone("not-a-pid"));
    }

    #[test]
    fn the_sweep_removes_dead_owners_dirs_only() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dead = tmp
            .path()
            .join(format!("{PREFIX}{}-1-x", std::process::id()));
        std::fs::create_dir_all(dead.join("run-0/sub")).expect("mkdir");
        let dirs = RunDirs::new(tmp.path().to_path_buf());
        let run = dirs.create().expect("run dir");
        let other = tmp.path().join("unrelated");
        std::fs::create_dir(&other).expect("mkdir");
        assert!(!dead.exists(), "a dead owner's run dirs were kept");
        assert!(run.path().is_dir() && other.is_dir());
        let root = dirs.root().expect("root").to_path_buf();
        assert!(run.remove());
        drop(dirs);
        assert!(!root.exists(), "the sandbox's own dir outlived it");
    }
}
