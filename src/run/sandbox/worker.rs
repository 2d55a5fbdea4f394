//! The worker: the `ldb` binary re-executed as `ldb __worker`, one process per run (cold), or a
//! child forked for the run by a warm worker (`zygote.rs`).
//!
//! It reads a [`WorkerRequest`] from fd 3, isolates itself ([`crate::run::sandbox::isolate`]), starts the
//! embedded CPython (a warm worker's child finds it started), runs the harness (load the
//! program, run the test, optionally traced) and writes a [`WorkerResponse`] to fd 4. Untrusted
//! code never runs in the agent process.

use std::fs::File;
use std::io::Write;
use std::os::fd::FromRawFd;
use std::time::Instant;

use pyo3::prelude::*;

use super::protocol::{
    ExceptionInfo, Isolation, WorkerError, WorkerRequest, WorkerResponse, WorkerStatus,
    PROGRAM_FILENAME,
};
use super::pyjson;
use crate::run::tracer::hook;
use pyo3::types::PyModule;

pub use super::protocol::{REQUEST_FD, RESPONSE_FD, WORKER_FAILURE};

/// Entry point of a cold worker, `ldb __worker` (see [`crate::run::sandbox::worker_main`]). Never returns.
pub fn main() -> ! {
    crate::run::sandbox::process::exit_with(run(None, cold_fork))
}

fn cold_fork() -> libc::pid_t {
    // SAFETY: the cold worker is single-threaded and has not started the interpreter yet.
    unsafe { libc::fork() }
}

/// One run: `network` is the warm worker's namespace (`None`: enter one here) and `fork` the
/// fork that suits the interpreter's state.
pub(super) fn run(
    network: Option<&crate::run::sandbox::isolate::Network>,
    fork: fn() -> libc::pid_t,
) -> Result<(), WorkerError> {
    let started = Instant::now();
    // SAFETY: the parent hands us these two descriptors and nothing else owns them.
    let (mut request_pipe, mut response_pipe) = unsafe {
        (
            File::from_raw_fd(REQUEST_FD),
            File::from_raw_fd(RESPONSE_FD),
        )
    };
    let req = crate::run::sandbox::protocol::read_header(&mut request_pipe)?;
    let warm = network.is_some();
    if warm {
        // A cold worker starts there; the private file system moves there again.
        std::env::set_current_dir(&req.workdir)
            .map_err(WorkerError::os("entering the work dir"))?;
    }
    let scoring = req.strict && req.trace.is_none();
    // Everything but a scored run reads its test now; a scored run starts the program's
    // process first, so that the test is never in that process's memory.
    let (test, scoring_pipe) = if scoring {
        (None, Some(request_pipe))
    } else {
        let test = crate::run::sandbox::protocol::read_test(&mut request_pipe)?;
        drop(request_pipe);
        (Some(test), None)
    };

    let program_process = if !scoring {
        None
    } else if warm {
        Some(super::strict::ProgramProcess::Fork)
    } else {
        Some(super::strict::ProgramProcess::Exec(
            crate::run::sandbox::strict::SelfExe::open(),
        ))
    };
    let entered;
    let network = match network {
        Some(n) => n,
        None => {
            entered = crate::run::sandbox::isolate::enter_network();
            &entered
        }
    };
    let project = req.project.as_ref().map(|p| (p, req.program.as_str()));
    let isolation =
        crate::run::sandbox::isolate::enter(network, &req.limits, &req.workdir, project, fork);
    if let (Some(project), false) = (&req.project, isolation.read_only_fs) {
        // Without a view of its own the run would test the user's file, not the program.
        return Err(WorkerError::NoView {
            module: project.module_file.clone(),
            warnings: isolation.warnings.join("; "),
        });
    }
    // SAFETY: getpid has no preconditions.
    let harness_pid = unsafe { libc::getpid() };
    if let Some(trace) = req.trace.clone() {
        // In a project the program is a file of it, imported by its real path.
        let filename = match &req.project {
            Some(p) => p.module_file.to_string_lossy().into_owned(),
            None => PROGRAM_FILENAME.to_string(),
        };
        hook::configure(trace, &filename, started);
    }
    let response = match (program_process, scoring_pipe, test) {
        (Some(process), Some(pipe), _) => {
            if warm {
                Python::attach(|py| set_home(py, &req.workdir))
                    .map_err(WorkerError::python("setting HOME"))?;
            }
            // Scoring: the program runs in a process of its own and only computes.
            crate::run::sandbox::strict::checked_run(&req, pipe, isolation, &process)?
        }
        (_, _, Some(test)) => Python::attach(|py| run_harness(py, &req, &test, warm, isolation))
            .map_err(WorkerError::python("python harness failed"))?,
        _ => return Err(WorkerError::PipeLost),
    };
    // A process the program forked returns here too: only the worker itself may answer, or
    // the copies' answers would garble (or pre-empt) the real one.
    // SAFETY: getpid has no preconditions; _exit ends this copy without running anything else.
    if unsafe { libc::getpid() } != harness_pid {
        unsafe { libc::_exit(0) }
    }
    let mut response = response;
    response.seal = req.seal;
    let bytes = serde_json::to_vec(&response).map_err(|source| WorkerError::Encode {
        what: "response",
        source,
    })?;
    response_pipe
        .write_all(&bytes)
        .map_err(WorkerError::os("writing response"))?;
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
    test: &crate::run::sandbox::protocol::TestSpec,
    warm: bool,
    isolation: Isolation,
) -> PyResult<WorkerResponse> {
    if let crate::run::sandbox::protocol::TestSpec::Pytest { .. } = test {
        return run_pytest(py, req, test, warm, isolation);
    }
    let harness = crate::run::sandbox::harness::module(py)?;
    // The harness needs neither the trace request nor the limits.
    let request = serde_json::json!({
        "program": req.program,
        "test": test,
        "as_main": req.as_main,
        "value_chars": req.value_chars,
        "prelude": req.prelude,
        "module": req.module,
        // A warm worker's child sets HOME and TMPDIR to the work dir first.
        "home": warm.then(|| req.workdir.to_string_lossy()),
    });
    let run = harness.getattr("run")?;
    let untouched = Untouched::take(&harness)?;
    let out = run.call1((pyjson::to_python(py, &request)?,))?;
    let mut response: WorkerResponse =
        serde_json::from_value(pyjson::from_python(&out)).map_err(|e| {
            pyo3::exceptions::PyValueError::new_err(format!("harness result is not valid: {e}"))
        })?;
    if let Some(what) = untouched.changed(&harness)? {
        // Whatever the harness answered, its answer cannot be trusted.
        response.status = WorkerStatus::Error;
        response.phase = Some(crate::run::sandbox::protocol::Phase::Test);
        response.exception = Some(ExceptionInfo {
            kind: "HarnessTampered".into(),
            message: format!(
                "the program replaced {what}, which the test's verdict depends on; the run \
                 counts as failed"
            ),
            program_line: None,
            program_callers: Vec::new(),
            test_line: None,
            traceback: String::new(),
            prelude_line: None,
            test_location: None,
            project_frames: Vec::new(),
        });
    }
    response.trace = hook::take_finished();
    response.isolation = isolation;
    Ok(response)
}

/// Built-in names whose meaning a test's verdict rests on (`assert`, `==`, the harness's own
/// calls): a program that rebinds one is not judged by its tests.
const WATCHED_BUILTINS: &[&str] = &[
    "bool",
    "isinstance",
    "issubclass",
    "type",
    "eval",
    "exec",
    "compile",
    "len",
    "repr",
    "str",
    "getattr",
    "AssertionError",
    "BaseException",
    "Exception",
    "SystemExit",
];

/// The harness module's names (and each function's code and defaults) and the watched
/// built-ins, as they were before the program ran; compared by identity after it.
struct Untouched<'py> {
    taken: Vec<(String, Bound<'py, PyAny>)>,
}

impl<'py> Untouched<'py> {
    fn entries(harness: &Bound<'py, PyModule>) -> PyResult<Vec<(String, Bound<'py, PyAny>)>> {
        let py = harness.py();
        let mut out = Vec::new();
        for (name, value) in harness.dict().iter() {
            let name = name.extract::<String>().unwrap_or_default();
            if name.starts_with("__") {
                continue;
            }
            // Functions only: a failed attribute lookup costs an exception, on every run.
            if value.cast::<pyo3::types::PyFunction>().is_ok() {
                for part in ["__code__", "__defaults__", "__kwdefaults__"] {
                    if let Ok(inner) = value.getattr(part) {
                        out.push((format!("ldb_harness.{name}.{part}"), inner));
                    }
                }
            }
            out.push((format!("ldb_harness.{name}"), value));
        }
        let builtins = py.import("builtins")?;
        for name in WATCHED_BUILTINS {
            if let Ok(value) = builtins.getattr(*name) {
                out.push((format!("builtins.{name}"), value));
            }
        }
        out.push(("sys.modules['ldb_harness']".into(), {
            let modules = py.import("sys")?.getattr("modules")?;
            modules
                .get_item("ldb_harness")
                .unwrap_or_else(|_| py.None().into_bound(py))
        }));
        Ok(out)
    }

    fn take(harness: &Bound<'py, PyModule>) -> PyResult<Self> {
        Ok(Untouched {
            taken: Self::entries(harness)?,
        })
    }

    /// The first name whose object is not the one taken, if any.
    fn changed(&self, harness: &Bound<'py, PyModule>) -> PyResult<Option<String>> {
        let now: std::collections::HashMap<String, Bound<'py, PyAny>> =
            Self::entries(harness)?.into_iter().collect();
        for (name, before) in &self.taken {
            let same = now.get(name).is_some_and(|after| after.is(before));
            if !same {
                return Ok(Some(format!("`{name}`")));
            }
        }
        Ok(None)
    }
}

/// One pytest session in the request's project (`pytest_run.py`).
fn run_pytest(
    py: Python<'_>,
    req: &WorkerRequest,
    test: &crate::run::sandbox::protocol::TestSpec,
    warm: bool,
    isolation: Isolation,
) -> PyResult<WorkerResponse> {
    if warm {
        set_home(py, &req.workdir)?;
    }
    let module = crate::run::sandbox::pytest::module(py)?;
    let request = serde_json::json!({
        "test": test,
        "value_chars": req.value_chars,
        "project": req.project,
        "traced": req.trace.is_some(),
    });
    let out = module.call_method1("run", (pyjson::to_python(py, &request)?,))?;
    let mut response: WorkerResponse =
        serde_json::from_value(pyjson::from_python(&out)).map_err(|e| {
            pyo3::exceptions::PyValueError::new_err(format!("pytest result is not valid: {e}"))
        })?;
    response.trace = hook::take_finished();
    response.isolation = isolation;
    Ok(response)
}
