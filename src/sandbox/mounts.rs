//! The worker's private view of the file system, set up in its own mount namespace before the
//! program runs: every mount read-only, nosuid and (outside `/dev`) nodev; the run's work dir
//! and the shared scratch places (`/tmp`, `/var/tmp`, `/dev/shm`) parts of one fresh tmpfs
//! capped at the run's disk limit, so nothing the program writes reaches the host disk or
//! outlives the run; and a `/proc` that shows only the run's own processes.
//!
//! Nothing here propagates back: `/` is made a private mount tree first, so the host's mounts and
//! files are unchanged whatever the program does.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Scratch places every user may write to; each is covered with the run's own scratch space.
pub(super) const SCRATCH: &[&str] = &["/tmp", "/var/tmp", "/dev/shm"];

/// What [`private_filesystem`] managed to do; anything it could not is a warning.
#[derive(Debug, Default)]
pub struct MountReport {
    pub read_only: bool,
    pub private_proc: bool,
    pub warnings: Vec<String>,
}

fn cstr(path: &Path) -> Result<CString, std::io::Error> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::other("path contains a NUL byte"))
}

fn mount(
    source: Option<&str>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> Result<(), std::io::Error> {
    let source = source.map(CString::new).transpose()?;
    let fstype = fstype.map(CString::new).transpose()?;
    let data = data.map(CString::new).transpose()?;
    let target = cstr(target)?;
    let ptr = |c: &Option<CString>| c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
    // SAFETY: every pointer is a valid NUL-terminated string or null, as mount(2) allows.
    let r = unsafe {
        libc::mount(
            ptr(&source),
            target.as_ptr(),
            ptr(&fstype),
            flags,
            ptr(&data).cast(),
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Mount points from `/proc/self/mountinfo` (field 5, octal escapes decoded).
fn mount_points() -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|field| PathBuf::from(unescape(field)))
        .collect()
}

/// `\040` → space, as mountinfo writes spaces, tabs, newlines and backslashes.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let digits = field
            .get(i + 1..i + 4)
            .filter(|d| d.bytes().all(|b| (b'0'..=b'7').contains(&b)));
        if let (b'\\', Some(d)) = (bytes[i], digits) {
            if let Ok(v) = u8::from_str_radix(d, 8) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Flags a bind remount must keep: in a user namespace, dropping any of them is refused.
fn kept_flags(path: &Path) -> libc::c_ulong {
    let Ok(c) = cstr(path) else { return 0 };
    // SAFETY: statvfs fills the struct we pass.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return 0;
    }
    let pairs = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    pairs
        .iter()
        .filter(|(st_flag, _)| st.f_flag & st_flag != 0)
        .fold(0, |acc, (_, ms)| acc | ms)
}

/// Mounts the run's scratch tmpfs on the (empty) host work dir, then binds its parts to the
/// scratch places and the work dir, and enters the work dir. Returns the writable places.
fn scratch(workdir: &Path, disk_bytes: u64) -> Result<Vec<PathBuf>, std::io::Error> {
    use std::os::unix::fs::PermissionsExt;
    let flags = libc::MS_NOSUID | libc::MS_NODEV;
    let options = format!("size={disk_bytes},mode=0755");
    mount(Some("tmpfs"), workdir, Some("tmpfs"), flags, Some(&options))?;
    // Reachable through the descriptor after a scratch place covers the path that leads to it.
    let staging = std::fs::File::open(workdir)?;
    let staging = PathBuf::from(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&staging)
    ));
    let part = |name: &str, mode: u32| -> Result<PathBuf, std::io::Error> {
        let dir = staging.join(name);
        std::fs::create_dir(&dir)?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode))?;
        Ok(dir)
    };
    let bind = |source: &Path, target: &Path| -> Result<(), std::io::Error> {
        mount(
            Some(&source.to_string_lossy()),
            target,
            None,
            libc::MS_BIND,
            None,
        )?;
        mount(
            None,
            target,
            None,
            libc::MS_REMOUNT | libc::MS_BIND | flags,
            None,
        )
    };
    let mut writable = Vec::new();
    for (name, place) in SCRATCH_DIRS {
        let place = Path::new(place);
        if !place.is_dir() {
            continue;
        }
        bind(&part(name, 0o1777)?, place)?;
        writable.push(place.to_path_buf());
    }
    // The work dir at its own path (inside the new /tmp when it was under /tmp).
    let work = part("work", 0o700)?;
    std::fs::create_dir_all(workdir)?;
    bind(&work, workdir)?;
    // The working directory still points into the old mount, which turns read-only below.
    std::env::set_current_dir(workdir)?;
    writable.push(workdir.to_path_buf());
    Ok(writable)
}

/// Where each scratch place comes from in the run's one scratch tmpfs.
const SCRATCH_DIRS: &[(&str, &str)] = &[
    ("tmp", "/tmp"),
    ("var-tmp", "/var/tmp"),
    ("shm", "/dev/shm"),
];

/// Sets up the private file system; the caller is in a fresh mount namespace (and PID namespace,
/// for the private `/proc`) and still privileged there. The work dir, `/tmp`, `/var/tmp` and
/// `/dev/shm` are directories of one tmpfs of `disk_bytes`, so together they hold at most that.
pub fn private_filesystem(workdir: &Path, disk_bytes: u64) -> MountReport {
    let mut report = MountReport::default();
    let root = Path::new("/");
    if let Err(e) = mount(None, root, None, libc::MS_REC | libc::MS_PRIVATE, None) {
        report.warnings.push(format!(
            "file system not isolated (cannot make mounts private: {e}): the program can write wherever its user may"
        ));
        return report;
    }
    let writable = match scratch(workdir, disk_bytes) {
        Ok(places) => places,
        Err(e) => {
            report.warnings.push(format!(
                "file system not isolated (cannot mount the work dir: {e})"
            ));
            return report;
        }
    };

    // Everything else read-only. /proc is replaced below, so it is left alone here.
    let mut failed = Vec::new();
    for point in mount_points() {
        if writable.contains(&point) || point.starts_with("/proc") {
            continue;
        }
        // No setuid binary and no device node works anywhere but in /dev.
        let lock = if point.starts_with("/dev") {
            libc::MS_NOSUID
        } else {
            libc::MS_NOSUID | libc::MS_NODEV
        };
        let flags = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | lock | kept_flags(&point);
        if let Err(e) = mount(None, &point, None, flags, None) {
            // Mounts hidden under another mount cannot be reached by path; they are not visible
            // to the program either.
            if e.raw_os_error() != Some(libc::ENOENT) && e.raw_os_error() != Some(libc::EINVAL) {
                failed.push(format!("{} ({e})", point.display()));
            }
        }
    }
    report.read_only = failed.is_empty();
    if !failed.is_empty() {
        report
            .warnings
            .push(format!("still writable: {}", failed.join(", ")));
    }

    // A /proc of the run's own PID namespace: no host processes, no other command lines.
    let proc_flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    match mount(
        Some("proc"),
        Path::new("/proc"),
        Some("proc"),
        proc_flags,
        None,
    ) {
        Ok(()) => report.private_proc = true,
        Err(e) => report
            .warnings
            .push(format!("/proc shows the host's processes ({e})")),
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes_are_decoded() {
        assert_eq!(unescape("/mnt/a\\040b"), "/mnt/a b");
        assert_eq!(unescape("/plain"), "/plain");
        assert_eq!(unescape("/odd\\"), "/odd\\");
        assert_eq!(unescape("/x\\0"), "/x\\0");
    }
}
