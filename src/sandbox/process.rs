//! Process-level helpers shared by the worker kinds: forking once the interpreter runs,
//! closing inherited descriptors, ending a run's process.

use std::os::fd::RawFd;

use pyo3::prelude::*;

use super::protocol::WORKER_FAILURE;

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
pub(super) fn exit_with(result: Result<(), String>) -> ! {
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
