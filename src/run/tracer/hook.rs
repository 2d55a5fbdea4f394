//! The trace hooks inside the worker, and the `_ldb` module the harness talks to.
//!
//! The native hook is a C function installed with `PyEval_SetTrace`: it sees every call, line,
//! return and exception event of the thread without building a Python frame for the tracer.
//! The Python-level hook (`sys.settrace` with a Python function) feeds the same recorder and
//! exists so the difference can be measured.

use std::cell::RefCell;
use std::os::raw::c_int;
use std::time::Instant;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyFrame, PyModule, PyTuple};

use super::recorder::{LineVerdict, Recorder};
use super::{RawTrace, TraceRequest, TracerKind};

pyo3::create_exception!(
    _ldb,
    TraceDeadline,
    pyo3::exceptions::PyBaseException,
    "Raised by the tracer when the run exceeds its time budget."
);

thread_local! {
    static RECORDER: RefCell<Option<Recorder>> = const { RefCell::new(None) };
    static FINISHED: RefCell<Option<RawTrace>> = const { RefCell::new(None) };
    static CONFIG: RefCell<Option<(TraceRequest, String, Instant)>> = const { RefCell::new(None) };
}

/// Arm tracing for this thread: the harness switches it on with `_ldb.trace_start()`.
pub fn configure(req: TraceRequest, program_filename: &str, started: Instant) {
    CONFIG.with(|c| *c.borrow_mut() = Some((req, program_filename.to_string(), started)));
}

/// The trace recorded by the last `trace_start`/`trace_stop` pair, if any.
pub fn take_finished() -> Option<RawTrace> {
    FINISHED.with(|f| f.borrow_mut().take())
}

unsafe extern "C" fn native_hook(
    _obj: *mut ffi::PyObject,
    frame: *mut ffi::PyFrameObject,
    what: c_int,
    arg: *mut ffi::PyObject,
) -> c_int {
    // SAFETY: CPython calls the hook with the GIL held.
    let py = unsafe { Python::assume_attached() };
    let verdict = RECORDER.with(|cell| {
        let Ok(mut guard) = cell.try_borrow_mut() else {
            return LineVerdict::Continue;
        };
        let Some(rec) = guard.as_mut() else {
            return LineVerdict::Continue;
        };
        // SAFETY: CPython passes a live frame and event argument.
        unsafe {
            match what {
                ffi::PyTrace_CALL => rec.on_call(py, frame),
                ffi::PyTrace_LINE => return rec.on_line(py, frame),
                ffi::PyTrace_RETURN => rec.on_return(py, frame, arg),
                ffi::PyTrace_EXCEPTION => rec.on_exception(py, frame, arg),
                _ => {}
            }
        }
        LineVerdict::Continue
    });
    match verdict {
        LineVerdict::Continue => 0,
        LineVerdict::Deadline => {
            TraceDeadline::new_err("time limit reached while tracing").restore(py);
            -1
        }
    }
}

fn start(py: Python<'_>) -> PyResult<()> {
    let Some((req, filename, started)) = CONFIG.with(|c| c.borrow_mut().take()) else {
        return Ok(());
    };
    let kind = req.tracer;
    let recorder = Recorder::new(py, &req, &filename, started);
    RECORDER.with(|cell| *cell.borrow_mut() = Some(recorder));
    match kind {
        TracerKind::Native => {
            // SAFETY: installing a C trace function for the current thread with the GIL held.
            unsafe { ffi::PyEval_SetTrace(Some(native_hook), std::ptr::null_mut()) };
        }
        TracerKind::Python => {
            let tracer = PyModule::from_code(
                py,
                pyo3::ffi::c_str!(include_str!("pyhook.py")),
                pyo3::ffi::c_str!("ldb_pyhook.py"),
                pyo3::ffi::c_str!("ldb_pyhook"),
            )?;
            let scopes: Vec<(String, u32, Vec<u32>)> = req
                .scopes
                .iter()
                .map(|s| (s.name.clone(), s.first_line, s.units.clone()))
                .collect();
            tracer.call_method1("install", (scopes, filename))?;
        }
    }
    Ok(())
}

fn stop(py: Python<'_>) {
    // SAFETY: removing the trace function of the current thread with the GIL held.
    unsafe { ffi::PyEval_SetTrace(None, std::ptr::null_mut()) };
    if let Ok(sys) = py.import("sys") {
        let _ = sys.call_method1("settrace", (py.None(),));
    }
    let recorder = RECORDER.with(|cell| cell.borrow_mut().take());
    if let Some(rec) = recorder {
        let trace = rec.finish(py);
        FINISHED.with(|f| *f.borrow_mut() = Some(trace));
    }
}

fn with_recorder(f: impl FnOnce(&mut Recorder)) {
    RECORDER.with(|cell| {
        if let Ok(mut guard) = cell.try_borrow_mut() {
            if let Some(rec) = guard.as_mut() {
                f(rec);
            }
        }
    });
}

#[pyfunction]
fn trace_start(py: Python<'_>) -> PyResult<()> {
    start(py)
}

#[pyfunction]
fn trace_stop(py: Python<'_>) {
    stop(py)
}

/// Render a value the way traces do (used for actual/expected values in test reports).
#[pyfunction]
fn render(value: &Bound<'_, PyAny>, budget: usize) -> String {
    crate::run::tracer::value::render(value, budget)
}

/// The frame pointer of `frame`, if it really is a frame (program code can call these too).
fn frame_ptr(frame: &Bound<'_, PyAny>) -> Option<*mut ffi::PyFrameObject> {
    frame
        .is_instance_of::<PyFrame>()
        .then(|| frame.as_ptr().cast())
}

#[pyfunction]
fn py_call(py: Python<'_>, frame: &Bound<'_, PyAny>) {
    if let Some(f) = frame_ptr(frame) {
        // SAFETY: a live frame object, GIL held.
        with_recorder(|rec| unsafe { rec.on_call(py, f) });
    }
}

#[pyfunction]
fn py_line(py: Python<'_>, frame: &Bound<'_, PyAny>) -> PyResult<()> {
    let mut verdict = LineVerdict::Continue;
    if let Some(f) = frame_ptr(frame) {
        // SAFETY: a live frame object, GIL held.
        with_recorder(|rec| verdict = unsafe { rec.on_line(py, f) });
    }
    match verdict {
        LineVerdict::Continue => Ok(()),
        LineVerdict::Deadline => Err(TraceDeadline::new_err("time limit reached while tracing")),
    }
}

#[pyfunction]
fn py_return(py: Python<'_>, frame: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) {
    if let Some(f) = frame_ptr(frame) {
        // SAFETY: a live frame object and a live value, GIL held.
        with_recorder(|rec| unsafe { rec.on_return(py, f, value.as_ptr()) });
    }
}

#[pyfunction]
fn py_exception(py: Python<'_>, frame: &Bound<'_, PyAny>, info: &Bound<'_, PyAny>) {
    if let (Some(f), true) = (frame_ptr(frame), info.is_instance_of::<PyTuple>()) {
        // SAFETY: a live frame object and a live tuple, GIL held.
        with_recorder(|rec| unsafe { rec.on_exception(py, f, info.as_ptr()) });
    }
}

/// Build the `_ldb` module and register it in `sys.modules`.
pub fn register_module(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    let m = PyModule::new(py, "_ldb")?;
    m.add_function(wrap_pyfunction!(trace_start, &m)?)?;
    m.add_function(wrap_pyfunction!(trace_stop, &m)?)?;
    m.add_function(wrap_pyfunction!(render, &m)?)?;
    m.add_function(wrap_pyfunction!(py_call, &m)?)?;
    m.add_function(wrap_pyfunction!(py_line, &m)?)?;
    m.add_function(wrap_pyfunction!(py_return, &m)?)?;
    m.add_function(wrap_pyfunction!(py_exception, &m)?)?;
    m.add("TraceDeadline", py.get_type::<TraceDeadline>())?;
    py.import("sys")?.getattr("modules")?.set_item("_ldb", &m)?;
    Ok(m)
}
