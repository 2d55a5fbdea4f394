//! The warm worker (`ldb __worker --zygote`): a worker that pays once for what every run
//! repeats, then forks one child per run.
//!
//! At start it enters its network namespace ([`crate::run::sandbox::isolate::enter_network`]), starts
//! CPython, loads the harness and the standard modules tests use, and tells the parent it is
//! ready. Then, per run, the parent sends the run's five descriptors (stdin, stdout, stderr, the
//! request pipe, the response pipe) over the control socket (fd 3); the worker forks a child
//! that puts them at 0-4 and does what a cold worker does (PID and mount namespaces, the
//! private file system, a per-run uid, rlimits, the harness: [`crate::run::sandbox::worker::run`]), reports
//! the child's pid (its process group, which the parent kills at the wall-clock limit), waits
//! for it and reports how it ended. The worker itself never runs program code: each child is
//! a copy of it taken before the request was read, so nothing one run does reaches the next.
//! When the parent goes away (the control socket closes) the worker kills the run in progress,
//! removes the parent's run dirs (given as its argument: a killed parent cannot) and exits.

use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};

use pyo3::prelude::*;

use super::isolate::Network;
use super::protocol::{CONTROL_FD, WORKER_FAILURE};

/// Descriptors a run hands the child, in the order they land at 0, 1, 2, 3, 4.
pub(crate) const RUN_FDS: usize = 5;

/// Messages from the worker to the parent: a tag and a value, 8 bytes.
pub(crate) const READY: u32 = 1;
pub(crate) const STARTED: u32 = 2;
pub(crate) const EXITED: u32 = 3;
pub(crate) const FORK_FAILED: u32 = 4;

/// Standard modules imported before any run, so a test's `import re` costs nothing. Only
/// modules without per-process state a run could tell apart (no `random`: its seed would be
/// shared by every run; no `tempfile`: it caches the temp dir).
const PRELOAD: &[&str] = &[
    "json",
    "traceback",
    "linecache",
    "ast",
    "re",
    "math",
    "collections",
    "itertools",
    "functools",
    "heapq",
    "bisect",
    "string",
    "typing",
    "operator",
    "copy",
    "fractions",
    "decimal",
    "dataclasses",
];

/// Entry point; never returns.
pub fn main() -> ! {
    // Without root a run shares the worker's uid: no run may trace the worker, which outlives
    // it (a run's own process becomes dumpable again in `child`).
    // SAFETY: prctl on this process only.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    let run_root = std::env::args_os().nth(3).map(std::path::PathBuf::from);
    let parent_gone = || -> ! {
        if let Some(root) = &run_root {
            crate::run::sandbox::rundirs::remove_owned(root);
        }
        // SAFETY: terminating the process.
        unsafe { libc::_exit(0) }
    };
    let network = crate::run::sandbox::isolate::enter_network();
    if let Err(e) = Python::attach(preload) {
        eprintln!("ldb warm worker: cannot start the interpreter: {e}");
        // SAFETY: terminating the process.
        unsafe { libc::_exit(WORKER_FAILURE) }
    }
    if send(READY, 0).is_err() {
        // SAFETY: terminating the process.
        unsafe { libc::_exit(0) }
    }
    loop {
        let fds = match receive_fds() {
            Ok(Some(fds)) => fds,
            // The parent is gone.
            Ok(None) => parent_gone(),
            Err(_) => unsafe { libc::_exit(WORKER_FAILURE) },
        };
        // SAFETY: getpid has no preconditions.
        let worker = unsafe { libc::getpid() };
        let pid = crate::run::sandbox::process::fork_python();
        if pid == 0 {
            child(&fds, &network, worker);
        }
        let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        // Our copies: the child has its own.
        drop(fds);
        if pid < 0 {
            if send(FORK_FAILED, errno).is_err() {
                parent_gone();
            }
            continue;
        }
        // Both sides set the group, so it exists before the parent can signal it.
        // SAFETY: setpgid on our own child.
        unsafe { libc::setpgid(pid, pid) };
        if send(STARTED, pid).is_err() {
            kill_run(pid);
            parent_gone();
        }
        match wait_run(pid) {
            Some(status) => {
                if send(EXITED, status).is_err() {
                    parent_gone();
                }
            }
            None => parent_gone(),
        }
    }
}

/// Start the interpreter's expensive parts once: the tracer's module, the harness, the
/// scoring module and [`PRELOAD`].
fn preload(py: Python<'_>) -> PyResult<()> {
    let modules = py.import("sys")?.getattr("modules")?;
    let harness = crate::run::sandbox::harness::module(py)?;
    modules.set_item("ldb_harness", harness)?;
    let split = crate::run::sandbox::harness::split_module(py)?;
    modules.set_item("ldb_split", split)?;
    for name in PRELOAD {
        py.import(*name)?;
    }
    if std::env::var_os(super::pytest::PRELOAD_PYTEST_VAR).is_some_and(|v| v == "1") {
        // pytest comes from the user's environment; where it has none the module loads all
        // the same, and its runs say so.
        let module = crate::run::sandbox::pytest::module(py)?;
        module.call_method0("warm_up")?;
    }
    Ok(())
}

/// The run's child: descriptors in place, then the cold worker's path. Never returns.
fn child(fds: &[OwnedFd; RUN_FDS], network: &Network, worker: libc::pid_t) -> ! {
    // SAFETY: setpgid, prctl, fcntl, dup2 and close on this process's own descriptors.
    unsafe {
        libc::setpgid(0, 0);
        // The run dies with its worker (and if the worker died before this, at once).
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        );
        if libc::getppid() != worker {
            libc::_exit(WORKER_FAILURE);
        }
        // As a cold worker is (the worker itself is not, see `main`).
        libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0);
        // Above every target first, so no dup2 overwrites a descriptor still to be moved.
        let mut high = [0; RUN_FDS];
        for (slot, fd) in high.iter_mut().zip(fds) {
            *slot = libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 16);
            if *slot < 0 {
                libc::_exit(WORKER_FAILURE);
            }
        }
        for (target, fd) in high.into_iter().enumerate() {
            if libc::dup2(fd, target as RawFd) < 0 {
                libc::_exit(WORKER_FAILURE);
            }
        }
        // The control socket was at 3 and is replaced; everything above 4 goes.
        crate::run::sandbox::process::close_from(RUN_FDS as RawFd);
    }
    crate::run::sandbox::process::exit_with(super::worker::run(
        Some(network),
        crate::run::sandbox::process::fork_python,
    ))
}

/// Wait for the run's child; `None` if the parent went away first (the run is killed then).
/// The child's process group is killed before the child is reaped: until then its zombie
/// keeps the group's id reserved, so the kill cannot reach an unrelated group that reused it.
fn wait_run(pid: libc::pid_t) -> Option<libc::c_int> {
    // SAFETY: pidfd_open on our own child; a negative result means unsupported, and the loop
    // then polls the control socket with a timeout instead.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as RawFd;
    loop {
        let mut fds = [
            libc::pollfd {
                fd: CONTROL_FD,
                events: libc::POLLIN,
                revents: 0,
            },
            // A negative descriptor is ignored by poll.
            libc::pollfd {
                fd: pidfd,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        let timeout = if pidfd >= 0 { -1 } else { 50 };
        // SAFETY: polling descriptors we own.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout) };
        if n < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break;
        }
        if n > 0 && fds[0].revents != 0 {
            // The parent sends nothing during a run: it has gone.
            close_pidfd(pidfd);
            kill_run(pid);
            return None;
        }
        if exited(pid) {
            break;
        }
    }
    close_pidfd(pidfd);
    // SAFETY: signalling the run's own group while its leader is still unreaped.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: waiting for our own child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return Some(status);
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Some(status);
        }
    }
}

/// Whether the child has ended, without reaping it.
fn exited(pid: libc::pid_t) -> bool {
    // SAFETY: waitid fills `info`; WNOWAIT leaves the child waitable.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        ) == 0
            && info.si_pid() != 0
    }
}

fn close_pidfd(pidfd: RawFd) {
    if pidfd >= 0 {
        // SAFETY: closing our own pidfd.
        unsafe { libc::close(pidfd) };
    }
}

fn kill_run(pid: libc::pid_t) {
    // SAFETY: signalling and reaping the run's own process group and child.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
        let mut status = 0;
        libc::waitpid(pid, &mut status, 0);
    }
}

fn send(tag: u32, value: i32) -> std::io::Result<()> {
    let mut msg = [0u8; 8];
    msg[..4].copy_from_slice(&tag.to_le_bytes());
    msg[4..].copy_from_slice(&value.to_le_bytes());
    // SAFETY: sending 8 bytes from a live buffer on our control socket.
    let n = unsafe {
        libc::send(
            CONTROL_FD,
            msg.as_ptr().cast(),
            msg.len(),
            libc::MSG_NOSIGNAL,
        )
    };
    if n == msg.len() as isize {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The next run's descriptors; `None` when the parent closed the socket.
fn receive_fds() -> std::io::Result<Option<[OwnedFd; RUN_FDS]>> {
    // SAFETY: the control socket stays open for the worker's whole life.
    let control = unsafe { BorrowedFd::borrow_raw(CONTROL_FD) };
    loop {
        match crate::run::sandbox::fdpass::receive(control)? {
            None => return Ok(None),
            // A malformed message: its descriptors close as they drop; wait for the next.
            Some(fds) => {
                if let Ok(fds) = <[OwnedFd; RUN_FDS]>::try_from(fds) {
                    return Ok(Some(fds));
                }
            }
        }
    }
}
