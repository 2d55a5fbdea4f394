//! The Python side of a run, as modules of the worker's interpreter: `harness.py` (load the
//! program, run one test, describe what happened) and, for scoring, `split.py`.

use pyo3::prelude::*;
use pyo3::types::PyModule;

use crate::run::tracer::hook;

/// The harness (`harness.py`) as module `ldb_harness`, with the tracer's `_ldb` module it uses.
/// A warm worker loaded it before forking the run; a cold one compiles it here.
pub(crate) fn module(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    if let Some(loaded) = loaded(py, "ldb_harness")? {
        return Ok(loaded);
    }
    hook::register_module(py)?;
    PyModule::from_code(
        py,
        pyo3::ffi::c_str!(include_str!("harness.py")),
        pyo3::ffi::c_str!("ldb_harness.py"),
        pyo3::ffi::c_str!("ldb_harness"),
    )
}

/// `split.py` as module `ldb_split` (it imports `ldb_harness`, so load [`module`] first).
pub(crate) fn split_module(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    if let Some(loaded) = loaded(py, "ldb_split")? {
        return Ok(loaded);
    }
    PyModule::from_code(
        py,
        pyo3::ffi::c_str!(include_str!("strict.py")),
        pyo3::ffi::c_str!("ldb_split.py"),
        pyo3::ffi::c_str!("ldb_split"),
    )
}

/// `name` from `sys.modules`, if a module of that name is there.
fn loaded<'py>(py: Python<'py>, name: &str) -> PyResult<Option<Bound<'py, PyModule>>> {
    let modules = py.import("sys")?.getattr("modules")?;
    match modules.get_item(name) {
        Ok(module) => Ok(module.cast_into::<PyModule>().ok()),
        Err(_) => Ok(None),
    }
}
