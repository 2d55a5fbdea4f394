//! Inside the worker, before any untrusted code: namespaces, an unprivileged user, kernel limits.
//!
//! Order matters. New network, PID and mount namespaces are made first (they need privileges;
//! the network namespace once per worker process, the others for every run), then the worker
//! forks so the child is PID 1 of the new namespace (when it exits, the kernel
//! kills every process it left behind), then the child makes its private file system
//! (`mounts`), empties its capability bounding set, drops to a per-run uid, clears every
//! capability set and sets `no_new_privs` (so no setuid binary the program starts runs with
//! more than the program's rights), refuses new namespaces and mounts (`seccomp`), and
//! applies rlimits. What could not be applied is
//! reported, never silently skipped.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::limits::Limits;
use super::protocol::Isolation;

/// Per-run uids start here, far above ordinary accounts; the worker's pid picks one so that
/// concurrent runs never share a process budget.
const UID_BASE: u32 = 1_000_000;

/// The network namespace, entered once per worker: a warm worker (`zygote.rs`) enters it
/// at start and every run it forks shares it (no process outlives its run, so nothing listens
/// there between runs).
#[derive(Debug, Clone, Default)]
pub struct Network {
    pub isolated: bool,
    /// Without root: the user namespace made for it, in which this process holds the
    /// capabilities the per-run namespaces need.
    in_user_namespace: bool,
    pub warnings: Vec<String>,
}

/// Enter a new network namespace (through a user namespace without root).
pub fn enter_network() -> Network {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let entered = if root {
        unshare(libc::CLONE_NEWNET)
    } else {
        user_namespace(libc::CLONE_NEWNET)
    };
    match entered {
        Ok(()) => Network {
            isolated: true,
            in_user_namespace: !root,
            // A test may serve and connect on loopback (a local HTTP server, a socket pair
            // by port): the namespace's own `lo` reaches nothing outside it.
            warnings: loopback_up()
                .err()
                .map(|e| format!("loopback not up in the run's network ({e})"))
                .into_iter()
                .collect(),
        },
        Err(e) => Network {
            isolated: false,
            in_user_namespace: false,
            warnings: vec![format!("network not isolated ({e})")],
        },
    }
}

/// Bring up the loopback interface of this process's (new) network namespace.
fn loopback_up() -> Result<(), std::io::Error> {
    // SAFETY: a datagram socket only to name the interface; closed below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: an ifreq zeroed, named "lo", read then written back with IFF_UP by ioctl.
    let result = unsafe {
        let mut req: libc::ifreq = std::mem::zeroed();
        for (i, b) in b"lo".iter().enumerate() {
            req.ifr_name[i] = *b as libc::c_char;
        }
        if libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req) != 0 {
            Err(errno())
        } else {
            req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            if libc::ioctl(fd, libc::SIOCSIFFLAGS, &req) != 0 {
                Err(errno())
            } else {
                Ok(())
            }
        }
    };
    // SAFETY: closing our own socket.
    unsafe { libc::close(fd) };
    result
}

/// Apply every other protection that this machine allows, for one run. Returns in the process
/// that will run the program; when a PID namespace was made, the original process stays behind
/// as a waiter and never returns from here. `fork` is `libc::fork` before the interpreter
/// starts and `process::fork_python` after.
pub fn enter(
    network: &Network,
    limits: &Limits,
    workdir: &Path,
    project: Option<(&crate::run::sandbox::protocol::ProjectMount, &str)>,
    fork: fn() -> libc::pid_t,
) -> Isolation {
    let mut iso = Isolation {
        network: network.isolated,
        warnings: network.warnings.clone(),
        ..Isolation::default()
    };
    // SAFETY: plain libc calls in a single-threaded process.
    let root = unsafe { libc::geteuid() } == 0;
    // Pids stay below 2^22 on Linux, so every live run has a uid of its own.
    let run_uid = UID_BASE.saturating_add(std::process::id());

    // IPC too: System V shared memory, semaphores and message queues would otherwise outlive
    // the run and be open to the next one.
    let per_run = libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::CLONE_NEWIPC;
    let namespaces = if root || network.in_user_namespace {
        unshare(per_run)
    } else {
        user_namespace(per_run)
    };
    match namespaces {
        Ok(()) => iso.pid_namespace = true,
        Err(err) => iso.warnings.push(format!(
            "no PID, mount or IPC namespace ({err}): processes the program leaves behind are only killed through its process group, and it can write wherever its user may"
        )),
    }
    // The status of the program as its namespace's init saw it (`init_and_wait`): an init
    // cannot die of a signal it raises, so the signal travels on this pipe.
    let status_pipe = if iso.pid_namespace {
        status_pipe()
    } else {
        None
    };
    if iso.pid_namespace {
        fork_and_wait(fork, status_pipe.map(|(read, _)| read));
        // The directories programs may import from (`Sandbox::with_python_path`).
        let python_path: Vec<_> = std::env::var_os("PYTHONPATH")
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        // A user's site-packages (`Sandbox::with_site_dirs`), shown like a project.
        let site_dirs: Vec<_> = [
            crate::run::sandbox::SITE_DIRS_VAR,
            crate::run::sandbox::SHOWN_DIRS_VAR,
        ]
        .iter()
        .filter_map(std::env::var_os)
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .collect();
        let view = crate::run::sandbox::mounts::View {
            workdir,
            disk_bytes: limits.disk_bytes,
            // SAFETY: getuid has no preconditions.
            uid: if root {
                run_uid
            } else {
                unsafe { libc::getuid() }
            },
            python_path: &python_path,
            site_dirs: &site_dirs,
            project,
        };
        let mounts = crate::run::sandbox::mounts::private_filesystem(&view);
        iso.read_only_fs = mounts.read_only;
        iso.private_proc = mounts.private_proc;
        iso.warnings.extend(mounts.warnings);
    }
    set_parent_death_signal();
    // While still privileged: no capability can ever come back, not even through a setuid or
    // file-capability binary the program starts (that takes CAP_SETPCAP, gone after setuid).
    let bounding = drop_bounding_set();
    if root {
        match drop_privileges(run_uid, workdir) {
            Ok(()) => {
                iso.unprivileged_user = true;
                // The parent-death signal is cleared by a credential change; set it again.
                set_parent_death_signal();
            }
            Err(e) => iso.warnings.push(format!(
                "still running as root ({e}): the program can write anywhere root can"
            )),
        }
    }
    // Without root, the worker holds every capability in its user namespace; the program gets
    // none (it could otherwise undo the read-only mounts). With root, setuid cleared the
    // effective and permitted sets; the inheritable and ambient ones go here.
    match bounding.and_then(|()| drop_capabilities()) {
        Ok(()) => iso.no_new_privileges = true,
        Err(e) => iso.warnings.push(format!(
            "privileges not locked ({e}): a setuid program it starts may gain privileges"
        )),
    }
    // Last of the locks, after every namespace and mount of our own: none for the program.
    match crate::run::sandbox::seccomp::refuse_namespaces_and_mounts() {
        Ok(()) => iso.no_namespaces = true,
        Err(e) => iso.warnings.push(format!(
            "namespaces and mounts not refused ({e}): the program may make a user namespace \
             and mount past the disk cap"
        )),
    }

    let mut set = |resource, soft: u64, hard: u64, what: &str| {
        if let Err(e) = set_rlimit(resource, soft, hard) {
            iso.warnings.push(format!("{what} limit not applied ({e})"));
        }
    };
    set(libc::RLIMIT_CORE, 0, 0, "core file");
    set(
        libc::RLIMIT_AS,
        limits.memory_bytes,
        limits.memory_bytes,
        "memory",
    );
    set(
        libc::RLIMIT_CPU,
        limits.cpu_secs,
        limits.cpu_secs + 1,
        "CPU time",
    );
    set(
        libc::RLIMIT_FSIZE,
        limits.file_bytes,
        limits.file_bytes,
        "file size",
    );
    set(
        libc::RLIMIT_NOFILE,
        limits.open_files,
        limits.open_files,
        "open files",
    );
    if iso.unprivileged_user {
        // Root ignores RLIMIT_NPROC; a dedicated uid makes it a real per-run process budget.
        match set_rlimit(libc::RLIMIT_NPROC, limits.processes, limits.processes) {
            Ok(()) => iso.process_limit = true,
            Err(e) => iso
                .warnings
                .push(format!("process limit not applied ({e})")),
        }
    } else {
        iso.warnings.push(
            "process limit not applied: it needs a dedicated user (run as root to get one)".into(),
        );
    }
    // Last, with every limit in place for both: this process stays as the namespace's init
    // and the program runs in its child, so the program has a parent as it would under a
    // shell (`os.getppid()`, psutil's `parent()`), and orphans it leaves are reaped.
    if let Some((read, write)) = status_pipe {
        // SAFETY: closing our copy of the read end; the waiter outside holds its own.
        unsafe { libc::close(read) };
        match init_and_wait(fork, write) {
            Ok(()) => iso.init_process = true,
            Err(e) => iso
                .warnings
                .push(format!("the program runs as its namespace's init ({e})")),
        }
    }
    iso
}

fn errno() -> std::io::Error {
    std::io::Error::last_os_error()
}

fn unshare(flags: libc::c_int) -> Result<(), std::io::Error> {
    // SAFETY: unshare only changes this process's namespaces.
    if unsafe { libc::unshare(flags) } == 0 {
        Ok(())
    } else {
        Err(errno())
    }
}

/// Unprivileged path: a user namespace owning the others, mapping our own ids to themselves.
fn user_namespace(flags: libc::c_int) -> Result<(), std::io::Error> {
    // SAFETY: reading our own ids.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    unshare(libc::CLONE_NEWUSER | flags)?;
    std::fs::write("/proc/self/setgroups", "deny")?;
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    Ok(())
}

/// A pipe (both ends close-on-exec) for the program's wait status, from the namespace's init
/// to the waiter outside it.
fn status_pipe() -> Option<(libc::c_int, libc::c_int)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 fills two descriptors.
    (unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == 0).then_some((fds[0], fds[1]))
}

/// Fork; the child returns and becomes PID 1 of the new PID namespace. The parent waits and
/// exits the same way the program did, so the sandbox parent sees the program's fate directly:
/// the status the init sends on `status` when there is one (the program ran in the init's
/// child), else the child's own.
fn fork_and_wait(fork: fn() -> libc::pid_t, status: Option<libc::c_int>) {
    // The worker is single-threaded here, so fork is safe.
    let pid = fork();
    if pid == 0 {
        return;
    }
    if pid < 0 {
        // Could not fork: run in this process; the namespace only applies to children.
        return;
    }
    let mut own: libc::c_int = 0;
    wait_for(pid, &mut own);
    let status = status.and_then(read_status).unwrap_or(own);
    exit_like(status);
}

/// Wait for `pid`, retrying on interrupts; `_exit(70)` when waiting fails otherwise.
fn wait_for(pid: libc::pid_t, status: &mut libc::c_int) {
    loop {
        // SAFETY: waiting for our own child.
        let r = unsafe { libc::waitpid(pid, status, 0) };
        if r == pid {
            return;
        }
        if r < 0 && errno().raw_os_error() != Some(libc::EINTR) {
            // SAFETY: exiting without running destructors is intended in the waiter.
            unsafe { libc::_exit(70) };
        }
    }
}

/// A wait status, read whole from `fd` (closed after), or `None` when the writer sent none.
fn read_status(fd: libc::c_int) -> Option<libc::c_int> {
    let mut buf = [0u8; 4];
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: reading into the rest of a local buffer.
        let n = unsafe {
            libc::read(
                fd,
                buf[got..].as_mut_ptr().cast::<libc::c_void>(),
                buf.len() - got,
            )
        };
        if n < 0 && errno().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        if n <= 0 {
            break;
        }
        got += n as usize;
    }
    // SAFETY: closing our own descriptor.
    unsafe { libc::close(fd) };
    (got == buf.len()).then(|| libc::c_int::from_ne_bytes(buf))
}

/// Leave this process the way a process with wait status `status` left: the same exit code,
/// or the same signal.
fn exit_like(status: libc::c_int) -> ! {
    // SAFETY: status decoding and process exit.
    unsafe {
        if libc::WIFEXITED(status) {
            libc::_exit(libc::WEXITSTATUS(status));
        }
        if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            let _ = set_rlimit(libc::RLIMIT_CORE, 0, 0);
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
            libc::_exit(128 + sig);
        }
        libc::_exit(70);
    }
}

/// Fork once more: the child returns and runs the program; this process, the PID namespace's
/// init, reaps every process that ends until the program has, sends the program's wait status
/// on `status` and exits (the kernel then kills whatever the program left behind).
fn init_and_wait(fork: fn() -> libc::pid_t, status: libc::c_int) -> Result<(), std::io::Error> {
    let pid = fork();
    if pid < 0 {
        let e = errno();
        // SAFETY: closing our own descriptor; the waiter then uses the init's own status.
        unsafe { libc::close(status) };
        return Err(e);
    }
    if pid == 0 {
        // SAFETY: the program needs no copy of the init's pipe.
        unsafe { libc::close(status) };
        // The death signal is cleared by fork: the program dies with its init.
        set_parent_death_signal();
        return Ok(());
    }
    let mut program_status: libc::c_int = 0;
    loop {
        let mut s: libc::c_int = 0;
        // SAFETY: reaping any child of this init.
        let r = unsafe { libc::waitpid(-1, &mut s, 0) };
        if r == pid {
            program_status = s;
            break;
        }
        if r < 0 && errno().raw_os_error() != Some(libc::EINTR) {
            break;
        }
    }
    let bytes = program_status.to_ne_bytes();
    // SAFETY: writing a local buffer to our own pipe (4 bytes: atomic for a pipe).
    unsafe {
        libc::write(status, bytes.as_ptr().cast::<libc::c_void>(), bytes.len());
        libc::_exit(0);
    }
}

/// Empties the capability bounding set (what any later `execve` may grant) and the ambient
/// set. Needs `CAP_SETPCAP`: called before the credential change.
fn drop_bounding_set() -> Result<(), std::io::Error> {
    // The highest capability this kernel knows; newer ones than the libc crate's are covered.
    let last = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse::<libc::c_ulong>().ok())
        .unwrap_or(63);
    for cap in 0..=last {
        // SAFETY: prctl on this process only.
        if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } != 0 {
            let err = errno();
            // Past the last capability of the kernel: done.
            if err.raw_os_error() == Some(libc::EINVAL) && cap > 0 {
                break;
            }
            return Err(err);
        }
    }
    // SAFETY: prctl on this process only; EINVAL on kernels without ambient capabilities.
    let r = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    if r != 0 && errno().raw_os_error() != Some(libc::EINVAL) {
        return Err(errno());
    }
    Ok(())
}

/// Clears every capability set of this process and forbids gaining privileges through
/// `execve` (setuid and setgid bits and file capabilities are ignored from now on).
fn drop_capabilities() -> Result<(), std::io::Error> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    let mut header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset reads a v3 header and two data structs, as laid out above.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(errno());
        }
        if libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) != 0 {
            return Err(errno());
        }
    }
    Ok(())
}

fn set_parent_death_signal() {
    // SAFETY: prctl on our own process.
    unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        );
    }
}

fn drop_privileges(uid: u32, workdir: &Path) -> Result<(), std::io::Error> {
    let dir = CString::new(workdir.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::other("work dir path contains a NUL byte"))?;
    // SAFETY: plain credential syscalls; checked one by one.
    unsafe {
        if libc::chown(dir.as_ptr(), uid, uid) != 0 {
            return Err(errno());
        }
        if libc::setgroups(0, std::ptr::null()) != 0 {
            return Err(errno());
        }
        if libc::setgid(uid) != 0 {
            return Err(errno());
        }
        if libc::setuid(uid) != 0 {
            return Err(errno());
        }
    }
    Ok(())
}

fn set_rlimit(
    resource: libc::__rlimit_resource_t,
    soft: u64,
    hard: u64,
) -> Result<(), std::io::Error> {
    let lim = libc::rlimit {
        rlim_cur: soft as libc::rlim_t,
        rlim_max: hard as libc::rlim_t,
    };
    // SAFETY: setting a limit on our own process.
    if unsafe { libc::setrlimit(resource, &lim) } == 0 {
        Ok(())
    } else {
        Err(errno())
    }
}
