//! The worker: the `ldb` binary re-executed as `ldb __worker`, one process per run (cold), or a
//! child forked for the run by a warm worker ([`super::zygote`]).
//!
//! It reads a [`WorkerRequest`] from fd 3, isolates itself ([`super::isolate`]), starts the
//! embedded CPython (a warm worker's child finds it started), runs the harness (load the
//! program, run the test, optionally traced) and writes a [`WorkerResponse`] to fd 4. Untrusted
//! code never runs in the agent process.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::FromRawFd;
use std::time::Instant;

use pyo3::prelude::*;

use super::protocol::{Isolation, WorkerRequest, WorkerResponse, PROGRAM_FILENAME};
use super::pyjson;
use crate::trace::hook;

pub use super::protocol::{REQUEST_FD, RESPONSE_FD, WORKER_FAILURE};

/// Entry point of a cold worker, `ldb __worker` (see [`super::worker_main`]). Never returns.
pub fn main() -> ! {
    exit_with(run(None, cold_fork))
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

fn cold_fork() -> libc::pid_t {
    // SAFETY: the cold worker is single-threaded and has not started the interpreter yet.
    unsafe { libc::fork() }
}

/// One run: `network` is the warm worker's namespace (`None`: enter one here) and `fork` the
/// fork that suits the interpreter's state.
pub(super) fn run(
    network: Option<&super::isolate::Network>,
    fork: fn() -> libc::pid_t,
) -> Result<(), String> {
    let started = Instant::now();
    // SAFETY: the parent hands us these two descriptors and nothing else owns them.
    let (mut request_pipe, mut response_pipe) = unsafe {
        (
            File::from_raw_fd(REQUEST_FD),
            File::from_raw_fd(RESPONSE_FD),
        )
    };
    let mut raw = String::new();
    request_pipe
        .read_to_string(&mut raw)
        .map_err(|e| format!("reading the request: {e}"))?;
    drop(request_pipe);
    let req: WorkerRequest =
        serde_json::from_str(&raw).map_err(|e| format!("malformed request: {e}"))?;

    let scoring = req.strict && req.trace.is_none();
    let self_exe = scoring.then(super::split::SelfExe::open);
    let warm = network.is_some();
    let entered;
    let network = match network {
        Some(n) => n,
        None => {
            entered = super::isolate::enter_network();
            &entered
        }
    };
    let isolation = super::isolate::enter(network, &req.limits, &req.workdir, fork);
    // SAFETY: getpid has no preconditions.
    let harness_pid = unsafe { libc::getpid() };
    if let Some(trace) = req.trace.clone() {
        hook::configure(trace, PROGRAM_FILENAME, started);
    }
    let response = if let Some(self_exe) = &self_exe {
        // Scoring: the program runs in a process of its own and only computes.
        super::split::checked_run(&req, isolation, self_exe)?
    } else {
        Python::attach(|py| {
            if warm {
                set_home(py, &req.workdir)?;
            }
            run_harness(py, &req, isolation)
        })
        .map_err(|e| format!("python harness failed: {e}"))?
    };
    // A process the program forked returns here too: only the worker itself may answer, or
    // the copies' answers would garble (or pre-empt) the real one.
    // SAFETY: getpid has no preconditions; _exit ends this copy without running anything else.
    if unsafe { libc::getpid() } != harness_pid {
        unsafe { libc::_exit(0) }
    }
    let bytes = serde_json::to_vec(&response).map_err(|e| format!("encoding response: {e}"))?;
    response_pipe
        .write_all(&bytes)
        .map_err(|e| format!("writing response: {e}"))?;
    Ok(())
}

/// A warm worker's interpreter started before the run had a work dir: point `HOME` and
/// `TMPDIR` at it, as a cold worker's environment does (`os.environ` also sets the C
/// environment that processes the program starts inherit).
fn set_home(py: Python<'_>, workdir: &std::path::Path) -> PyResult<()> {
    let environ = py.import("os")?.getattr("environ")?;
    let dir = workdir.to_string_lossy();
    environ.set_item("HOME", &*dir)?;
    environ.set_item("TMPDIR", &*dir)?;
    Ok(())
}

fn run_harness(
    py: Python<'_>,
    req: &WorkerRequest,
    isolation: Isolation,
) -> PyResult<WorkerResponse> {
    let harness = super::harness::module(py)?;
    // The harness needs neither the trace request nor the limits.
    let request = serde_json::json!({
        "program": req.program,
        "test": req.test,
        "as_main": req.as_main,
        "value_chars": req.value_chars,
        "prelude": req.prelude,
        "module": req.module,
    });
    let out = harness.call_method1("run", (pyjson::to_python(py, &request)?,))?;
    let mut response: WorkerResponse =
        serde_json::from_value(pyjson::from_python(&out)).map_err(|e| {
            pyo3::exceptions::PyValueError::new_err(format!("harness result is not valid: {e}"))
        })?;
    response.trace = hook::take_finished();
    response.isolation = isolation;
    Ok(response)
}
