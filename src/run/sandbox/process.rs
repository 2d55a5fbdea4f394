//! Process-level helpers shared by the worker kinds: pipes and socket pairs that close on exec,
//! placing a run's descriptors, forking once the interpreter runs, closing inherited
//! descriptors, ending a run's process.

use std::os::fd::{FromRawFd, OwnedFd, RawFd};

use pyo3::prelude::*;

use super::protocol::{self, WorkerError, WORKER_FAILURE};

/// Fork with the interpreter's own before/after hooks (what `os.fork` does), so the child's
/// interpreter is consistent. The caller is single-threaded.
pub(crate) fn fork_python() -> libc::pid_t {
    Python::attach(|_py| {
        // SAFETY: the hooks are called as CPython documents, with the GIL held; the process
        // has no other threads.
        unsafe {
            pyo3::ffi::PyOS_BeforeFork();
            let pid = libc::fork();
            if pid == 0 {
                pyo3::ffi::PyOS_AfterFork_Child();
            } else {
                pyo3::ffi::PyOS_AfterFork_Parent();
            }
            pid
        }
    })
}

/// Close every descriptor from `first` up.
pub(super) unsafe fn close_from(first: RawFd) {
    // SAFETY: close_range only closes descriptors of this process.
    if unsafe { libc::syscall(libc::SYS_close_range, first as u32, u32::MAX, 0) } == 0 {
        return;
    }
    for fd in first..4096 {
        // SAFETY: closing descriptors of this process; EBADF for unused ones is fine.
        unsafe { libc::close(fd) };
    }
}

/// End one run's process (cold worker, or a warm worker's child) with `result`.
pub(super) fn exit_with(result: Result<(), WorkerError>) -> ! {
    let code = match result {
        Ok(()) => 0,
        Err(message) => {
            eprintln!("ldb worker: {message}");
            WORKER_FAILURE
        }
    };
    // Skip interpreter finalization: threads the program started must not keep us alive.
    // SAFETY: terminating the process.
    unsafe { libc::_exit(code) }
}

/// A connected pair of Unix sockets of `kind` whose ends close on exec.
pub(crate) fn unix_socket_pair(
    kind: rustix::net::SocketType,
) -> std::io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::net::socketpair(
        rustix::net::AddressFamily::UNIX,
        kind,
        rustix::net::SocketFlags::CLOEXEC,
        None,
    )?)
}

/// A pipe whose ends close on exec: (read, write).
pub(crate) fn os_pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills both descriptors on success; we take ownership immediately.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: freshly created descriptors owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// In a child between fork and exec: puts `fds` at the request and response descriptors (3 and
/// 4) and asks for SIGKILL when the parent dies. Only async-signal-safe calls.
pub(crate) fn place_fds(fds: [i32; 2]) -> std::io::Result<()> {
    // Move both ends above the target numbers first, so dup2 never sees src == dst.
    // SAFETY: fcntl, dup2, close and prctl on descriptors this process owns.
    unsafe {
        let high = fds.map(|fd| libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10));
        if high.iter().any(|&fd| fd < 0) {
            return Err(std::io::Error::last_os_error());
        }
        for (target, fd) in [protocol::REQUEST_FD, protocol::RESPONSE_FD]
            .into_iter()
            .zip(high)
        {
            if libc::dup2(fd, target) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::close(fd);
        }
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        );
    }
    Ok(())
}
