//! Writes that cannot lose data: a file is replaced by renaming a complete, synced copy over
//! it, so a kill, a full disk or a crash at any moment leaves either the old file or the whole
//! new one. Backups are created exclusively, never through a symlink, and an existing backup is
//! reused only when it holds exactly the original.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// A point where a test may have the process killed (`LDB_FAULT=<point>`), to show that a
/// write interrupted there loses nothing. Unset in normal use.
pub(crate) fn fault(point: &str) {
    if std::env::var_os("LDB_FAULT").is_some_and(|v| v == point) {
        // SAFETY: kill and getpid have no preconditions; SIGKILL ends the process here.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }
}

/// A sibling of `path` named `.<name>.<tag>-<pid>-<n>`: same directory, so a rename is atomic.
fn sibling_temp(path: &Path, tag: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = fastrand::u32(..);
    path.with_file_name(format!(".{name}.{tag}-{}-{n:08x}", std::process::id()))
}

fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Write `bytes` to a new temp file beside `path` (mode and owner like `like`, when given) and
/// sync it. The caller renames or links it into place.
fn write_temp(path: &Path, bytes: &[u8], like: Option<&std::fs::Metadata>) -> io::Result<PathBuf> {
    let tmp = sibling_temp(path, "ldb-tmp");
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o666)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp)?;
    let result = (|| {
        if let Some(meta) = like {
            file.set_permissions(std::fs::Permissions::from_mode(meta.mode() & 0o7777))?;
            // Keeping the owner needs privilege; without it the file is the caller's, as any
            // editor's save would make it.
            let _ = std::os::unix::fs::fchown(&file, Some(meta.uid()), Some(meta.gid()));
        }
        file.write_all(bytes)?;
        file.sync_all()
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(tmp)
}

fn sync_dir(dir: &Path) {
    // Makes the rename durable; a file system that cannot sync a directory still renamed.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Replace `path` with `bytes` atomically: a synced temp file in the same directory renamed
/// over it, then the directory synced. An existing file's mode and (with privilege) owner are
/// kept; a symlink at `path` is written through to its target.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = match std::fs::canonicalize(path) {
        Ok(real) => real,
        Err(e) if e.kind() == io::ErrorKind::NotFound => path.to_path_buf(),
        Err(e) => return Err(e),
    };
    let like = std::fs::metadata(&target).ok();
    let tmp = write_temp(&target, bytes, like.as_ref())?;
    fault("before-rename");
    if let Err(e) = std::fs::rename(&tmp, &target) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    fault("after-rename");
    sync_dir(dir_of(&target));
    Ok(())
}

/// What [`replace_unless_changed`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Replaced {
    /// The file held `expected` and now holds the new bytes.
    Done,
    /// The file held something else (an edit made meanwhile): it is left as it was.
    Changed,
}

/// Replace `path` with `bytes` only if it still holds `expected`, without a window in which an
/// edit made meanwhile is lost: the new file is swapped in atomically (`renameat2` with
/// `RENAME_EXCHANGE`), then the file swapped out is checked, and swapped back if it was
/// edited. Where the file system cannot exchange, the check comes just before a plain rename.
pub fn replace_unless_changed(path: &Path, bytes: &[u8], expected: &[u8]) -> io::Result<Replaced> {
    replace_checked(path, bytes, expected, &mut || {})
}

fn replace_checked(
    path: &Path,
    bytes: &[u8],
    expected: &[u8],
    between: &mut dyn FnMut(),
) -> io::Result<Replaced> {
    let target = std::fs::canonicalize(path)?;
    if !holds(&target, expected)? {
        return Ok(Replaced::Changed);
    }
    let like = std::fs::metadata(&target).ok();
    let tmp = write_temp(&target, bytes, like.as_ref())?;
    // Tests put an edit here, where a check-then-rename would lose it.
    between();
    fault("before-rename");
    match exchange(&tmp, &target) {
        Ok(()) => {
            fault("after-rename");
            // `tmp` now holds what the file held at the swap.
            let kept = holds(&tmp, expected);
            if !matches!(kept, Ok(true)) {
                // Edited meanwhile: the edit goes back in place, the fix is dropped.
                let back = exchange(&tmp, &target);
                let _ = std::fs::remove_file(&tmp);
                back?;
                sync_dir(dir_of(&target));
                return Ok(Replaced::Changed);
            }
            let _ = std::fs::remove_file(&tmp);
            sync_dir(dir_of(&target));
            Ok(Replaced::Done)
        }
        Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOSYS)) => {
            let result = if holds(&target, expected)? {
                std::fs::rename(&tmp, &target).map(|()| Replaced::Done)
            } else {
                Ok(Replaced::Changed)
            };
            if !matches!(result, Ok(Replaced::Done)) {
                let _ = std::fs::remove_file(&tmp);
            }
            sync_dir(dir_of(&target));
            result
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Swap two names of one directory atomically.
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| io::Error::other("path holds a NUL byte"))
    };
    let (ca, cb) = (c(a)?, c(b)?);
    // SAFETY: two valid NUL-terminated paths, relative to the working directory.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            ca.as_ptr(),
            libc::AT_FDCWD,
            cb.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Whether the regular file `path` (not followed if a symlink) holds exactly `bytes`.
fn holds(path: &Path, bytes: &[u8]) -> io::Result<bool> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() || meta.len() != bytes.len() as u64 {
        return Ok(false);
    }
    let mut content = Vec::with_capacity(bytes.len());
    file.take(bytes.len() as u64 + 1)
        .read_to_end(&mut content)?;
    Ok(content == bytes)
}

/// Keep `original` beside `path` as `<name>.ldb-orig` (then `.ldb-orig.1`, `.2`, ... when that
/// name holds something else). A backup that already holds exactly `original` is reused; any
/// other file, symlink or directory under a backup name is left alone. A new backup is written
/// whole to a temp file, synced, then hard-linked to its name, which fails if the name exists:
/// the backup appears complete or not at all, and never replaces anything.
pub fn backup(path: &Path, original: &[u8]) -> io::Result<PathBuf> {
    keep_beside(path, ".ldb-orig", original)
}

/// Keep `bytes` beside `path` as `<name><suffix>` (then `.1`, `.2`, ...), created exclusively
/// and never through a symlink, as [`backup`] does: a fix that could not replace the file goes
/// to `<name>.ldb-fix` this way.
pub fn keep_beside(path: &Path, suffix: &str, bytes: &[u8]) -> io::Result<PathBuf> {
    let original = bytes;
    let mut base: OsString = path.as_os_str().to_owned();
    base.push(suffix);
    let mut tmp: Option<PathBuf> = None;
    let result = (|| {
        for n in 0..1000u32 {
            let mut name = base.clone();
            if n > 0 {
                name.push(format!(".{n}"));
            }
            let candidate = PathBuf::from(name);
            match holds(&candidate, original) {
                Ok(true) => return Ok(candidate),
                Ok(false) => continue,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                // A symlink (O_NOFOLLOW gives ELOOP) or anything unreadable: not ours.
                Err(_) => continue,
            }
            let t = match &tmp {
                Some(t) => t.clone(),
                None => {
                    let like = std::fs::metadata(path).ok();
                    let t = write_temp(&candidate, original, like.as_ref())?;
                    tmp = Some(t.clone());
                    t
                }
            };
            match std::fs::hard_link(&t, &candidate) {
                Ok(()) => {
                    sync_dir(dir_of(&candidate));
                    return Ok(candidate);
                }
                // Taken meanwhile (another run, a dangling symlink): try the next name.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::other(format!(
            "no free backup name beside {}",
            path.display()
        )))
    })();
    if let Some(t) = tmp {
        let _ = std::fs::remove_file(t);
    }
    result
}

/// An exclusive lock on a file for the length of a run (`flock`), released on drop. Two ldb
/// runs writing the same file take turns.
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

impl FileLock {
    /// Lock `path`, calling `on_wait` once if another process holds it. When the file was
    /// replaced while waiting (the other run renamed its fix over it), the new file is locked.
    pub fn acquire(path: &Path, on_wait: &mut dyn FnMut()) -> io::Result<FileLock> {
        let mut waited = false;
        loop {
            let file = OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(path)?;
            let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
            // SAFETY: fd is an open descriptor owned by `file`.
            if unsafe { libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) } != 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
                    return Err(e);
                }
                if !waited {
                    on_wait();
                    waited = true;
                }
                // SAFETY: as above; blocks until the other holder lets go.
                if unsafe { libc::flock(fd, libc::LOCK_EX) } != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            let held = file.metadata()?;
            match std::fs::metadata(path) {
                Ok(now) if now.dev() == held.dev() && now.ino() == held.ino() => {
                    return Ok(FileLock { _file: file })
                }
                // Replaced while we waited: lock what the name holds now.
                Ok(_) => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

/// Remove temp files a killed run left beside `path` (`.<name>.ldb-tmp-*`, and those of its
/// backups and set-aside fixes: `.<name>.ldb-orig.ldb-tmp-*`, `.<name>.ldb-fix.ldb-tmp-*`). Called with the
/// file's lock held, so no live run of ours is writing them.
pub fn remove_stale_temps(path: &Path) {
    let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    let prefix = format!(".{name}.");
    let Ok(entries) = std::fs::read_dir(dir_of(path)) else {
        return;
    };
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = file.strip_prefix(&prefix) else {
            continue;
        };
        // The file's own temps, and those of its backups and set-aside fixes.
        let ours = rest.starts_with("ldb-tmp-")
            || ((rest.starts_with("ldb-orig") || rest.starts_with("ldb-fix"))
                && rest.contains(".ldb-tmp-"));
        if ours {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_keeps_the_mode_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("prog.py");
        std::fs::write(&p, "old\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o751)).unwrap();
        atomic_write(&p, b"new\n").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new\n");
        assert_eq!(std::fs::metadata(&p).unwrap().mode() & 0o777, 0o751);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // Through a symlink: the link stays, its target changes.
        let link = dir.path().join("link.py");
        std::os::unix::fs::symlink(&p, &link).unwrap();
        atomic_write(&link, b"newer\n").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(std::fs::read(&p).unwrap(), b"newer\n");
    }

    #[test]
    fn backups_reuse_only_an_exact_copy_and_skip_anything_else() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("prog.py");
        std::fs::write(&p, "original\n").unwrap();
        // An empty backup left by a killed run, and a dangling symlink: neither is trusted.
        std::fs::write(dir.path().join("prog.py.ldb-orig"), "").unwrap();
        std::os::unix::fs::symlink(
            dir.path().join("nowhere"),
            dir.path().join("prog.py.ldb-orig.1"),
        )
        .unwrap();
        let b = backup(&p, b"original\n").unwrap();
        assert_eq!(b, dir.path().join("prog.py.ldb-orig.2"));
        assert_eq!(std::fs::read(&b).unwrap(), b"original\n");
        assert_eq!(
            std::fs::read(dir.path().join("prog.py.ldb-orig")).unwrap(),
            b""
        );
        assert!(!dir.path().join("nowhere").exists());
        // The same original again: the same backup.
        assert_eq!(backup(&p, b"original\n").unwrap(), b);
        // No temp files are left.
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.contains("ldb-tmp")), "{names:?}");
    }

    #[test]
    fn a_second_lock_waits_for_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("prog.py");
        std::fs::write(&p, "x\n").unwrap();
        let first = FileLock::acquire(&p, &mut || panic!("nothing holds it yet")).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let p2 = p.clone();
        let waiter = std::thread::spawn(move || {
            let mut waited = false;
            let lock = FileLock::acquire(&p2, &mut || waited = true).unwrap();
            tx.send(waited).unwrap();
            drop(lock);
        });
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(rx.try_recv().is_err(), "the second lock did not wait");
        // Replace the file while the waiter waits: it must lock the new one.
        atomic_write(&p, b"y\n").unwrap();
        drop(first);
        assert!(rx.recv().unwrap());
        waiter.join().unwrap();
    }

    #[test]
    fn an_edit_in_the_rename_window_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("prog.py");
        std::fs::write(&p, "x = 1\n").unwrap();
        // The edit lands after the check and before the swap.
        let got = replace_checked(&p, b"x = 2\n", b"x = 1\n", &mut || {
            std::fs::write(&p, "x = 1  # edited\n").unwrap();
        })
        .unwrap();
        assert_eq!(got, Replaced::Changed);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "x = 1  # edited\n");
        // Unchanged: replaced; and nothing left beside it.
        let got = replace_unless_changed(&p, b"x = 3\n", b"x = 1  # edited\n").unwrap();
        assert_eq!(got, Replaced::Done);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "x = 3\n");
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["prog.py"]);
    }

    #[test]
    fn stale_temps_of_backups_and_set_aside_fixes_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("prog.py");
        std::fs::write(&p, "x").unwrap();
        for name in [
            ".prog.py.ldb-tmp-1-2",
            ".prog.py.ldb-orig.ldb-tmp-1-2",
            ".prog.py.ldb-orig.1.ldb-tmp-1-2",
            ".prog.py.ldb-fix.ldb-tmp-1-2",
            ".other.py.ldb-tmp-1-2",
            "prog.py.ldb-orig",
        ] {
            std::fs::write(dir.path().join(name), "t").unwrap();
        }
        remove_stale_temps(&p);
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [".other.py.ldb-tmp-1-2", "prog.py", "prog.py.ldb-orig"]
        );
    }
}
