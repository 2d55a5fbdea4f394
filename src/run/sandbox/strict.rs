//! Scoring in two processes, inside one sandboxed worker (`strict` requests).
//!
//! The worker becomes the checker: it starts the program's process before it reads the test
//! (a fork on a warm worker, a re-execution of this binary, `ldb __worker --serve`, on a cold
//! one), so nothing of the test is in that process's memory, hands it only the program, then
//! reads the test and runs it itself with stand-ins that call into that process over a
//! socket (`split.py`). The program's process is already inside the run's namespaces, uid and
//! limits; the checker makes itself non-dumpable first, so the program (same uid, no
//! capabilities) can neither trace it nor read or write its memory through `/proc`. What the
//! program can still do to the checker (kill it, stop it, flood the channel) ends the run
//! without a response or with an error: a failure, never a pass.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use pyo3::prelude::*;
use pyo3::types::PyModule;

use super::protocol::{Isolation, WorkerError, WorkerRequest, WorkerResponse};
use super::protocol::{REQUEST_FD, RESPONSE_FD, SERVE_ARG, WORKER_FAILURE};
use super::pyjson;

/// What the program's process is told: the program, never the test.
#[derive(serde::Serialize, serde::Deserialize)]
struct ServeRequest {
    program: String,
    as_main: bool,
    value_chars: usize,
    prelude: Option<String>,
    module: Option<String>,
}

impl ServeRequest {
    /// The part of `req` the program's process may know.
    fn of(req: &WorkerRequest) -> Self {
        ServeRequest {
            program: req.program.clone(),
            as_main: req.as_main,
            value_chars: req.value_chars,
            prelude: req.prelude.clone(),
            module: req.module.clone(),
        }
    }
}

/// The running `ldb` binary, opened before the private file system covers the scratch places
/// with empty tmpfs mounts: an `ldb` installed under `/tmp` would be gone by the time the
/// program's process is started from it.
pub struct SelfExe(Option<OwnedFd>);

impl SelfExe {
    pub fn open() -> SelfExe {
        let Ok(file) = File::open("/proc/self/exe") else {
            return SelfExe(None);
        };
        // Above the descriptors `place_fds` puts in place (3 and 4), so it cannot replace it.
        // SAFETY: fcntl on a descriptor this process owns; a non-negative result is a new one.
        let fd = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 20) };
        if fd < 0 {
            return SelfExe(None);
        }
        // SAFETY: `fd` was just created and nothing else owns it.
        SelfExe(Some(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// A path that starts the binary: through the open descriptor (the child resolves it before
    /// exec closes it), else where the binary was found at start.
    fn path(&self) -> Result<std::path::PathBuf, WorkerError> {
        match &self.0 {
            Some(fd) => Ok(format!("/proc/self/fd/{}", fd.as_raw_fd()).into()),
            None => std::env::current_exe().map_err(WorkerError::os("locating ldb")),
        }
    }
}

/// How the program's process of a scored run starts.
pub enum ProgramProcess {
    /// A fresh image of this binary (`ldb __worker --serve`), told the program over a pipe: a
    /// cold worker, whose interpreter has not started.
    Exec(SelfExe),
    /// A fork of the checker taken before it reads the test: a warm worker's child, whose
    /// interpreter is already started (the program's process then has nothing of the test in
    /// its memory either, and starts in a fraction of the time).
    Fork,
}

/// The checker's side: start the program's process, read the test (the rest of `request`),
/// run it against the program's process, report.
pub fn checked_run(
    req: &WorkerRequest,
    mut request: File,
    isolation: Isolation,
    process: &ProgramProcess,
) -> Result<WorkerResponse, WorkerError> {
    // SAFETY: prctl on this process only.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) } != 0 {
        return Err(WorkerError::os("cannot make the checker non-dumpable")(
            std::io::Error::last_os_error(),
        ));
    }
    let (ours, pid, writer) = match process {
        ProgramProcess::Exec(self_exe) => {
            let (ours, child, writer) = exec_program(req, self_exe)?;
            (ours, child, Some(writer))
        }
        ProgramProcess::Fork => {
            let (ours, pid) = fork_program(req, &request)?;
            (ours, pid, None)
        }
    };
    let test = crate::run::sandbox::protocol::read_test(&mut request);
    drop(request);
    let outcome = test.and_then(|test| {
        Python::attach(|py| -> PyResult<WorkerResponse> {
            let (_, split) = load_modules(py)?;
            let request = serde_json::json!({
                "test": test,
                "value_chars": req.value_chars,
                "module": req.module,
            });
            let out = split.call_method1(
                "check",
                (pyjson::to_python(py, &request)?, ours.as_raw_fd(), pid),
            )?;
            let mut response: WorkerResponse = serde_json::from_value(pyjson::from_python(&out))
                .map_err(|e| {
                    pyo3::exceptions::PyValueError::new_err(format!("checker result: {e}"))
                })?;
            response.isolation = isolation;
            Ok(response)
        })
        .map_err(WorkerError::python("python checker failed"))
    });
    // SAFETY: killing and reaping our own child.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGKILL);
        let mut status = 0;
        libc::waitpid(pid as libc::pid_t, &mut status, 0);
    }
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    outcome
}

/// The program's process as a fork of this one, before the test is read: descriptors in
/// place (the channel at fd 4, where the checker's response pipe was; the request pipe, which
/// still holds the test, closed), then [`serve`] on the program. Returns the checker's end of
/// the channel and the pid.
fn fork_program(req: &WorkerRequest, request: &File) -> Result<(OwnedFd, u32), WorkerError> {
    let (ours, theirs) = socket_pair()?;
    let pid = crate::run::sandbox::process::fork_python();
    if pid < 0 {
        return Err(WorkerError::os("cannot start the program's process")(
            std::io::Error::last_os_error(),
        ));
    }
    if pid == 0 {
        // SAFETY: dup2 and close on this process's own descriptors, before any program code.
        unsafe {
            if libc::dup2(theirs.as_raw_fd(), RESPONSE_FD) < 0 {
                libc::_exit(WORKER_FAILURE);
            }
            libc::close(request.as_raw_fd());
            crate::run::sandbox::process::close_from(RESPONSE_FD + 1);
        }
        std::mem::forget(ours);
        std::mem::forget(theirs);
        crate::run::sandbox::process::exit_with(serve_program(&ServeRequest::of(req)));
    }
    drop(theirs);
    Ok((ours, pid as u32))
}

/// The program's process as a fresh image of this binary, told the program over a pipe.
fn exec_program(
    req: &WorkerRequest,
    self_exe: &SelfExe,
) -> Result<(OwnedFd, u32, std::thread::JoinHandle<()>), WorkerError> {
    let exe = self_exe.path()?;
    let (ours, theirs) = socket_pair()?;
    let (req_read, req_write) = crate::run::sandbox::os_pipe().map_err(WorkerError::os("pipe"))?;
    let child_fds = [req_read.as_raw_fd(), theirs.as_raw_fd()];
    let mut cmd = Command::new(&exe);
    cmd.arg(super::WORKER_COMMAND)
        .arg(SERVE_ARG)
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit());
    // fd 4 was the checker's response pipe: putting the channel there leaves the program no way
    // to it. SAFETY: place_fds makes only async-signal-safe calls.
    unsafe {
        cmd.pre_exec(move || crate::run::sandbox::place_fds(child_fds));
    }
    let child = cmd
        .spawn()
        .map_err(WorkerError::os("cannot start the program's process"))?;
    drop(req_read);
    drop(theirs);
    let serve = ServeRequest::of(req);
    let bytes = serde_json::to_vec(&serve).map_err(|source| WorkerError::Encode {
        what: "the program's request",
        source,
    })?;
    // The program is small next to a pipe's buffer only sometimes: write from a thread.
    let writer = std::thread::spawn(move || {
        let mut w = File::from(req_write);
        let _ = w.write_all(&bytes);
    });
    let pid = child.id();
    // The child is reaped by pid (the checker kills and waits for it); the handle is not needed.
    std::mem::forget(child);
    Ok((ours, pid, writer))
}

/// The program's side (`ldb __worker --serve`): load the program, answer calls. Never returns.
pub fn serve_main() -> ! {
    let code = match serve() {
        Ok(()) => 0,
        Err(message) => {
            eprintln!("ldb worker: {message}");
            WORKER_FAILURE
        }
    };
    // SAFETY: terminating the process; threads the program started must not keep it alive.
    unsafe { libc::_exit(code) }
}

fn serve() -> Result<(), WorkerError> {
    // SAFETY: the checker hands us these two descriptors and nothing else owns them.
    let mut request_pipe = unsafe { File::from_raw_fd(REQUEST_FD) };
    let mut raw = String::new();
    request_pipe
        .read_to_string(&mut raw)
        .map_err(WorkerError::os("reading the request"))?;
    drop(request_pipe);
    let req: ServeRequest = serde_json::from_str(&raw).map_err(|e| WorkerError::Malformed {
        what: "request",
        detail: e.to_string(),
    })?;
    serve_program(&req)
}

/// Load the program and answer the checker's calls on fd 4.
fn serve_program(req: &ServeRequest) -> Result<(), WorkerError> {
    Python::attach(|py| -> PyResult<()> {
        let (_, split) = load_modules(py)?;
        let request = serde_json::json!({
            "program": req.program,
            "as_main": req.as_main,
            "value_chars": req.value_chars,
            "prelude": req.prelude,
            "module": req.module,
        });
        split.call_method1("serve", (pyjson::to_python(py, &request)?, RESPONSE_FD))?;
        Ok(())
    })
    .map_err(WorkerError::python("python serve failed"))
}

fn load_modules(py: Python<'_>) -> PyResult<(Bound<'_, PyModule>, Bound<'_, PyModule>)> {
    let harness = crate::run::sandbox::harness::module(py)?;
    Ok((harness, crate::run::sandbox::harness::split_module(py)?))
}

fn socket_pair() -> Result<(OwnedFd, OwnedFd), WorkerError> {
    crate::run::sandbox::unix_socket_pair(rustix::net::SocketType::STREAM)
        .map_err(WorkerError::os("socketpair"))
}
