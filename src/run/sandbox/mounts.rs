//! The worker's private view of the file system, set up in its own mount namespace before the
//! program runs. The program sees a new root, not the host's tree: the system's programs and
//! libraries (`/usr` and the `/bin`, `/lib` links into it; `/usr/local` only for its Python
//! libraries), the interpreter's own directory, a few files of `/etc` (the loader's cache, time
//! zone, Debian's Python settings; `passwd` and `group` naming only root and the run's user),
//! `--python-path` directories, a `/dev` of harmless devices and a `/proc` of the run's own
//! processes. Task files, datasets, home directories and everything else on the host are not
//! there to read.
//!
//! All of it is read-only, nosuid and nodev (the devices of `/dev` excepted from nodev). The
//! work dir, `/tmp`, `/var/tmp` and `/dev/shm` are directories of one fresh tmpfs capped at the
//! run's disk limit, so nothing the program writes reaches the host disk or outlives the run.
//! Nothing propagates back: `/` is made a private mount tree first, and the host's tree is
//! detached from the namespace once the new root is in place.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::protocol::ProjectMount;

/// Scratch places every user may write to; each is covered with the run's own scratch space.
pub(super) const SCRATCH: &[&str] = &["/tmp", "/var/tmp", "/dev/shm"];

/// Host trees shown as they are (read-only). On merged-`/usr` systems all but `/usr` are links.
const HOST_TREES: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];
/// What of `/etc` programs and the tools they start read (besides `passwd` and `group`, which
/// are written for the run). Entries starting with `python3` are shown too (Debian keeps
/// `sitecustomize.py` there).
const HOST_ETC: &[&str] = &[
    "alternatives",
    "host.conf",
    "hosts",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "mime.types",
    "nsswitch.conf",
];
/// Devices a program may use; each is the host's node, bound into a fresh `/dev`.
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom"];

/// What the view is made of.
pub struct View<'a> {
    /// The run's host directory: empty, the new root is mounted on it, and the work dir is at
    /// this same path inside.
    pub workdir: &'a Path,
    /// Size of the scratch tmpfs.
    pub disk_bytes: u64,
    /// The uid the program runs as (named in `/etc/passwd`).
    pub uid: u32,
    /// `--python-path` directories.
    pub python_path: &'a [PathBuf],
    /// A user's site-packages directories (a virtualenv's), shown where they are.
    pub site_dirs: &'a [PathBuf],
    /// A project shown where it is, with the program in place of its module file.
    pub project: Option<(&'a ProjectMount, &'a str)>,
}

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
    source: Option<&Path>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> Result<(), std::io::Error> {
    let source = source.map(cstr).transpose()?;
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

fn tmpfs(target: &Path, flags: libc::c_ulong, options: &str) -> Result<(), std::io::Error> {
    mount(
        Some(Path::new("tmpfs")),
        target,
        Some("tmpfs"),
        flags,
        Some(options),
    )
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
        (libc::ST_RDONLY, libc::MS_RDONLY),
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

/// Bind `source` at `target` with `flags` added (a bind takes its flags from a remount).
fn bind(source: &Path, target: &Path, flags: libc::c_ulong) -> Result<(), std::io::Error> {
    mount(Some(source), target, None, libc::MS_BIND, None)?;
    let flags = libc::MS_REMOUNT | libc::MS_BIND | flags | kept_flags(source);
    mount(None, target, None, flags, None)
}

const LOCKED: libc::c_ulong = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV;

/// `host` inside the new root at `root`.
fn inside(root: &Path, host: &Path) -> PathBuf {
    root.join(host.strip_prefix("/").unwrap_or(host))
}

/// Show the host's `path` at the same place under `root`, read-only: a link as the same link,
/// a directory or file as a bind mount. A missing path is skipped.
fn expose(root: &Path, path: &Path) -> Result<(), std::io::Error> {
    let Ok(meta) = path.symlink_metadata() else {
        return Ok(());
    };
    let target = inside(root, path);
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent)?;
    }
    if meta.file_type().is_symlink() {
        let link = std::fs::read_link(path)?;
        return match std::os::unix::fs::symlink(link, &target) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
            _ => Ok(()),
        };
    }
    if meta.is_dir() {
        std::fs::create_dir_all(&target)?;
    } else {
        std::fs::File::create(&target)?;
    }
    bind(path, &target, LOCKED)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

/// The directory the interpreter's library was loaded from (the prefix's `lib`, which holds
/// its standard library too), when it is a `libpython` outside `/usr` proper.
fn interpreter_dir() -> Option<PathBuf> {
    // SAFETY: dladdr fills `info` for an address of this process; the name it points to lives
    // as long as the library stays loaded (for the process's life).
    let path = unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        let address = pyo3::ffi::Py_IsInitialized as *const libc::c_void;
        if libc::dladdr(address, &mut info) == 0 || info.dli_fname.is_null() {
            return None;
        }
        PathBuf::from(std::ffi::OsStr::from_bytes(
            std::ffi::CStr::from_ptr(info.dli_fname).to_bytes(),
        ))
    };
    let named = path
        .file_name()
        .is_some_and(|n| n.as_bytes().starts_with(b"libpython"));
    let dir = std::fs::canonicalize(path.parent()?).ok()?;
    let in_usr = dir.starts_with("/usr") && !dir.starts_with("/usr/local");
    (named && !in_usr).then_some(dir)
}

/// Sets up the private file system; the caller is in a fresh mount namespace (and PID namespace,
/// for the private `/proc`) and still privileged there.
pub fn private_filesystem(view: &View<'_>) -> MountReport {
    let mut report = MountReport::default();
    if let Err(e) = mount(
        None,
        Path::new("/"),
        None,
        libc::MS_REC | libc::MS_PRIVATE,
        None,
    ) {
        report.warnings.push(format!(
            "file system not isolated (cannot make mounts private: {e}): the program sees the host's files and can write wherever its user may"
        ));
        return report;
    }
    match new_root(view) {
        Ok(private_proc) => {
            report.read_only = true;
            report.private_proc = private_proc.is_ok();
            if let Err(e) = private_proc {
                report
                    .warnings
                    .push(format!("no /proc for the run's processes ({e})"));
            }
        }
        Err(e) => report.warnings.push(format!(
            "file system not isolated ({e}): the program may see the host's files"
        )),
    }
    report
}

/// The step of building the new root that failed.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {source}")]
struct StepFailed {
    what: &'static str,
    source: std::io::Error,
}

/// Build the new root on the work dir's path, enter it and drop the host's tree. The inner
/// result is whether a private `/proc` could be mounted.
fn new_root(view: &View<'_>) -> Result<Result<(), std::io::Error>, StepFailed> {
    let root = view.workdir;
    fn step(what: &'static str) -> impl Fn(std::io::Error) -> StepFailed {
        move |source| StepFailed { what, source }
    }
    tmpfs(
        root,
        libc::MS_NOSUID | libc::MS_NODEV,
        "size=1m,nr_inodes=4096,mode=0755",
    )
    .map_err(step("cannot mount the new root"))?;
    for tree in HOST_TREES {
        expose(root, Path::new(tree)).map_err(step("cannot show the system's files"))?;
    }
    let local = Path::new("/usr/local");
    let (in_local, elsewhere): (Vec<&PathBuf>, Vec<&PathBuf>) =
        view.python_path.iter().partition(|d| d.starts_with(local));
    local_python(root, &in_local).map_err(step("cannot show /usr/local's Python libraries"))?;
    etc(root, view).map_err(step("cannot write /etc"))?;
    for dir in elsewhere {
        expose(root, dir).map_err(step("cannot show a --python-path directory"))?;
    }
    devices(root).map_err(step("cannot make /dev"))?;
    let proc_dir = inside(root, Path::new("/proc"));
    std::fs::create_dir(&proc_dir).map_err(step("cannot make /proc"))?;
    // Before the host's tree is gone: a user namespace may mount a /proc only while a full one
    // is visible.
    let private_proc = mount(
        Some(Path::new("proc")),
        &proc_dir,
        Some("proc"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        None,
    );
    scratch(root, view).map_err(step("cannot mount the work dir"))?;
    // After the scratch space: a project or a virtualenv under /tmp is shown over it.
    for dir in view.site_dirs {
        expose(root, dir).map_err(step("cannot show a virtualenv's site-packages"))?;
    }
    if let Some((project, program)) = view.project {
        show_project(root, project, program, view.uid).map_err(step("cannot show the project"))?;
    }
    let dev = inside(root, Path::new("/dev"));
    let read_only = libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID;
    mount(None, &dev, None, read_only | libc::MS_NOEXEC, None)
        .map_err(step("cannot make /dev read-only"))?;
    mount(None, root, None, read_only | libc::MS_NODEV, None)
        .map_err(step("cannot make the new root read-only"))?;
    enter(root).map_err(step("cannot enter the new root"))?;
    std::env::set_current_dir(view.workdir).map_err(step("cannot enter the work dir"))?;
    Ok(private_proc)
}

/// `/usr/local` hidden, but for the Python libraries in it (Debian's Python imports from
/// `/usr/local/lib/python3.X/dist-packages`) and the `--python-path` directories `also` under
/// it; and the interpreter's own directory when it is not under `/usr`.
fn local_python(root: &Path, also: &[&PathBuf]) -> Result<(), std::io::Error> {
    let local = Path::new("/usr/local");
    let mut shown: Vec<PathBuf> = std::fs::read_dir(local.join("lib"))
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().as_bytes().starts_with(b"python3"))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    shown.extend(also.iter().map(|d| d.to_path_buf()));
    let interpreter = interpreter_dir();
    if let Some(dir) = &interpreter {
        if dir.starts_with(local) {
            shown.push(dir.clone());
        } else {
            expose(root, dir)?;
        }
    }
    let covered = inside(root, local);
    if !covered.is_dir() {
        return Ok(());
    }
    tmpfs(
        &covered,
        libc::MS_NOSUID | libc::MS_NODEV,
        "size=64k,nr_inodes=256,mode=0755",
    )?;
    for dir in &shown {
        expose(root, dir)?;
    }
    mount(None, &covered, None, libc::MS_REMOUNT | LOCKED, None)
}

/// `/etc`: the host's files of [`HOST_ETC`] and `python3*`, and a `passwd` and `group` that
/// name root and the run's user (whose home is the work dir).
fn etc(root: &Path, view: &View<'_>) -> Result<(), std::io::Error> {
    let etc = inside(root, Path::new("/etc"));
    std::fs::create_dir(&etc)?;
    for entry in std::fs::read_dir("/etc")?.flatten() {
        let name = entry.file_name();
        let wanted = HOST_ETC.iter().any(|n| name.as_bytes() == n.as_bytes())
            || name.as_bytes().starts_with(b"python3");
        if wanted {
            expose(root, &entry.path())?;
        }
    }
    let uid = view.uid;
    let home = view.workdir.display();
    std::fs::write(
        etc.join("passwd"),
        format!("root:x:0:0:root:/root:/bin/sh\nldb:x:{uid}:{uid}:ldb run:{home}:/bin/sh\n"),
    )?;
    std::fs::write(etc.join("group"), format!("root:x:0:\nldb:x:{uid}:\n"))
}

/// A fresh `/dev`: the host's nodes of [`DEVICES`] (the only mounts without nodev), the usual
/// links into `/proc/self/fd`, and the mount point of `/dev/shm`.
fn devices(root: &Path) -> Result<(), std::io::Error> {
    let dev = inside(root, Path::new("/dev"));
    std::fs::create_dir(&dev)?;
    tmpfs(
        &dev,
        libc::MS_NOSUID | libc::MS_NOEXEC,
        "size=64k,nr_inodes=64,mode=0755",
    )?;
    for name in DEVICES {
        let host = Path::new("/dev").join(name);
        // Only the device itself: a regular file left in its place holds what others wrote.
        let is_device = std::fs::metadata(&host)
            .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_char_device(&m.file_type()));
        if !is_device {
            continue;
        }
        let node = dev.join(name);
        std::fs::File::create(&node)?;
        bind(&host, &node, libc::MS_NOSUID | libc::MS_NOEXEC)?;
    }
    for (name, target) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        std::os::unix::fs::symlink(target, dev.join(name))?;
    }
    std::fs::create_dir(dev.join("shm"))
}

/// The run's scratch tmpfs, mounted aside and bound in parts: the scratch places and the work
/// dir (at its own path, inside the new `/tmp` when it is under `/tmp`).
fn scratch(root: &Path, view: &View<'_>) -> Result<(), std::io::Error> {
    use std::os::unix::fs::PermissionsExt;
    let staging = root.join(".scratch");
    std::fs::create_dir(&staging)?;
    let options = format!("size={},mode=0755", view.disk_bytes);
    tmpfs(&staging, libc::MS_NOSUID | libc::MS_NODEV, &options)?;
    let part = |name: &str, mode: u32| -> Result<PathBuf, std::io::Error> {
        let dir = staging.join(name);
        std::fs::create_dir(&dir)?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode))?;
        Ok(dir)
    };
    let flags = libc::MS_NOSUID | libc::MS_NODEV;
    for (name, place) in [
        ("tmp", "/tmp"),
        ("var-tmp", "/var/tmp"),
        ("shm", "/dev/shm"),
    ] {
        let target = inside(root, Path::new(place));
        std::fs::create_dir_all(&target)?;
        bind(&part(name, 0o1777)?, &target, flags)?;
    }
    let work = part("work", 0o700)?;
    let target = inside(root, view.workdir);
    std::fs::create_dir_all(&target)?;
    bind(&work, &target, flags)?;
    if view.project.is_some() {
        // The project's writable layer lives in the scratch space too: what the tests write
        // into the project counts against the run's disk limit and ends with the run.
        let layer = part("project", 0o700)?;
        std::fs::create_dir(layer.join("upper"))?;
        std::fs::create_dir(layer.join("work"))?;
        let aside = root.join(OVERLAY_ASIDE);
        std::fs::create_dir(&aside)?;
        bind(&layer, &aside, flags)?;
    }
    // The parts stay mounted where they were bound.
    let staging_c = cstr(&staging)?;
    // SAFETY: umount2 on a path string we own.
    if unsafe { libc::umount2(staging_c.as_ptr(), libc::MNT_DETACH) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    std::fs::remove_dir(&staging)
}

/// Where [`scratch`] puts the project's writable layer aside until the project is shown.
const OVERLAY_ASIDE: &str = ".ldb-project-layer";

/// Directories of a project made the run's own in its writable layer, at most.
const OWNED_DIRS: usize = 4000;

/// The project at its own path, with `program` in place of its module file (a file of a tmpfs
/// of its own, sized to it, bound over the user's file). The project is an overlay: the user's
/// tree below, read-only, and a layer of the run's scratch space above it, so tests that write
/// into the project (a coverage file, a cache, an output next to a test) work as under plain
/// pytest and nothing reaches the user's files. Its directories are given to the run's user in
/// that layer, so a tree the user keeps private (mode 0700) is readable to the run. Where no
/// overlay can be mounted the project is shown read-only.
fn show_project(
    root: &Path,
    project: &ProjectMount,
    program: &str,
    uid: u32,
) -> Result<(), std::io::Error> {
    if !project.module_file.starts_with(&project.root) {
        return Err(std::io::Error::other(format!(
            "{} is not inside {}",
            project.module_file.display(),
            project.root.display()
        )));
    }
    let aside = root.join(OVERLAY_ASIDE);
    let layered = aside.is_dir() && overlay(root, &project.root, &aside).is_ok();
    if aside.is_dir() {
        let aside_c = cstr(&aside)?;
        // SAFETY: umount2 on a path string we own; the overlay keeps its layer alive.
        if unsafe { libc::umount2(aside_c.as_ptr(), libc::MNT_DETACH) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        std::fs::remove_dir(&aside)?;
    }
    if layered {
        own_directories(&inside(root, &project.root), uid);
    } else {
        expose(root, &project.root)?;
    }
    let holder = root.join(".ldb-program");
    std::fs::create_dir(&holder)?;
    let size = program.len().saturating_add(64 << 10);
    tmpfs(
        &holder,
        libc::MS_NOSUID | libc::MS_NODEV,
        &format!("size={size},nr_inodes=16,mode=0755"),
    )?;
    let file = holder.join("program.py");
    std::fs::write(&file, program)?;
    let target = inside(root, &project.module_file);
    if !target.exists() {
        // Nothing to bind over: the project is read-only, so no file can be made there.
        return Err(std::io::Error::other(format!(
            "{} does not exist",
            project.module_file.display()
        )));
    }
    bind(&file, &target, LOCKED | libc::MS_NOEXEC)?;
    let holder_c = cstr(&holder)?;
    // SAFETY: umount2 on a path string we own; the bind keeps the file's tmpfs alive.
    if unsafe { libc::umount2(holder_c.as_ptr(), libc::MNT_DETACH) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    std::fs::remove_dir(&holder)
}

/// Mount an overlay of `lower` (the host's directory) at its place under `root`, its upper
/// layer and work dir in `layer`.
fn overlay(root: &Path, lower: &Path, layer: &Path) -> Result<(), std::io::Error> {
    let text = |p: &Path| -> Result<String, std::io::Error> {
        let s = p
            .to_str()
            .ok_or_else(|| std::io::Error::other("path is not UTF-8"))?;
        // The option string's own separators cannot be escaped everywhere: such a path is
        // shown read-only instead.
        if s.contains([',', ':', '\\']) {
            return Err(std::io::Error::other(
                "path has a separator of mount options",
            ));
        }
        Ok(s.to_string())
    };
    let target = inside(root, lower);
    std::fs::create_dir_all(&target)?;
    let options = format!(
        "lowerdir={},upperdir={},workdir={}",
        text(lower)?,
        text(&layer.join("upper"))?,
        text(&layer.join("work"))?
    );
    let userxattr = format!("{options},userxattr");
    mount(
        Some(Path::new("overlay")),
        &target,
        Some("overlay"),
        libc::MS_NOSUID | libc::MS_NODEV,
        Some(&options),
    )
    .or_else(|_| {
        // Inside a user namespace the overlay keeps its own attributes as user xattrs.
        mount(
            Some(Path::new("overlay")),
            &target,
            Some("overlay"),
            libc::MS_NOSUID | libc::MS_NODEV,
            Some(&userxattr),
        )
    })
}

/// Give the directories under `dir` (not `.git`'s, at most [`OWNED_DIRS`]) to `uid`, in the
/// overlay's upper layer; best effort.
fn own_directories(dir: &Path, uid: u32) {
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0;
    while let Some(d) = stack.pop() {
        seen += 1;
        if seen > OWNED_DIRS {
            break;
        }
        if let Ok(c) = cstr(&d) {
            // SAFETY: lchown on a path we own the string of; failure leaves the directory as is.
            unsafe { libc::lchown(c.as_ptr(), uid, uid) };
        }
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) && e.file_name().as_bytes() != b".git" {
                stack.push(e.path());
            }
        }
    }
}

/// Make `root` the root of this mount namespace and detach the host's tree from it.
fn enter(root: &Path) -> Result<(), std::io::Error> {
    std::env::set_current_dir(root)?;
    let here = c".";
    // SAFETY: pivot_root and umount2 with NUL-terminated paths; the old root ends up stacked
    // on the new one at ".", and is detached there.
    unsafe {
        if libc::syscall(libc::SYS_pivot_root, here.as_ptr(), here.as_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::umount2(here.as_ptr(), libc::MNT_DETACH) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    std::env::set_current_dir("/")
}
