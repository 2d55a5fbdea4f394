//! pytest inside the sandbox: a user's environment for the runs, and the Python module that
//! runs a session (what it reports is in [`crate::run::sandbox::protocol`], re-exported here).
//!
//! A run whose test is [`crate::run::sandbox::TestSpec::Pytest`] starts one pytest session in the request's
//! project (`pytest_run.py`, loaded as module `ldb_pytest`). A plugin of ours reports every
//! node as data: its outcome, its duration, and for a failure the exception, the program line
//! and the test line it came from, and the values a failed comparison compared (pytest's own
//! assertion rewriting hands them to `pytest_assertrepr_compare`). Collection errors, skips
//! and xfails are reported as such. Nothing here reads pytest's text output.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyModule;

pub use super::protocol::{CollectError, CollectedItem, NodeOutcome, NodeReport, PytestReport};
use super::{Sandbox, SHOWN_DIRS_VAR, SITE_DIRS_VAR};

/// Set (to `1`) in a warm worker's environment when it should import pytest before forking
/// runs ([`Sandbox::with_pytest_preloaded`]).
pub(crate) const PRELOAD_PYTEST_VAR: &str = "LDB_PRELOAD_PYTEST";

/// A user's environment and pytest, for the runs of a sandbox.
impl Sandbox {
    /// Import from a user's environment: `dirs` are site-packages directories (a
    /// virtualenv's), added the way the interpreter adds its own (their `.pth` files
    /// included) and shown to runs where they are, read-only (under `/tmp` too); `shown` are
    /// the directories those `.pth` files add, shown the same way. Without `system_site` the
    /// system's site-packages are left out of the import path, as a virtualenv made without
    /// `--system-site-packages` leaves them out.
    pub fn with_site_dirs(
        mut self,
        dirs: Vec<PathBuf>,
        shown: Vec<PathBuf>,
        system_site: bool,
    ) -> Self {
        self.site_dirs = dirs;
        self.shown_dirs = shown;
        self.system_site = system_site;
        if self.warm.is_some() {
            self.warm = Some(self.new_pool());
        }
        self
    }

    /// Warm workers import pytest and its built-in plugins before forking runs, so a pytest
    /// session in a run does not pay for them.
    pub fn with_pytest_preloaded(mut self) -> Self {
        self.preload_pytest = true;
        if self.warm.is_some() {
            self.warm = Some(self.new_pool());
        }
        self
    }

    /// The environment variables that carry the settings above to a worker.
    pub(super) fn user_environment(&self, env: &mut Vec<(String, std::ffi::OsString)>) {
        if !self.site_dirs.is_empty() {
            if let Ok(joined) = std::env::join_paths(&self.site_dirs) {
                env.push((SITE_DIRS_VAR.into(), joined));
            }
            if !self.system_site {
                env.push(("LDB_NO_SYSTEM_SITE".into(), "1".into()));
            }
        }
        if !self.shown_dirs.is_empty() {
            if let Ok(joined) = std::env::join_paths(&self.shown_dirs) {
                env.push((SHOWN_DIRS_VAR.into(), joined));
            }
        }
        if self.preload_pytest {
            env.push((PRELOAD_PYTEST_VAR.into(), "1".into()));
        }
    }
}

/// `pytest_run.py` as module `ldb_pytest`, if pytest itself can be imported here (a warm
/// worker loaded it before forking the run; a cold one loads it now).
pub(crate) fn module(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    let modules = py.import("sys")?.getattr("modules")?;
    if let Ok(loaded) = modules.get_item("ldb_pytest") {
        if let Ok(m) = loaded.cast_into::<PyModule>() {
            return Ok(m);
        }
    }
    crate::run::sandbox::harness::module(py)?;
    let m = PyModule::from_code(
        py,
        pyo3::ffi::c_str!(include_str!("pytest_run.py")),
        pyo3::ffi::c_str!("ldb_pytest.py"),
        pyo3::ffi::c_str!("ldb_pytest"),
    )?;
    modules.set_item("ldb_pytest", &m)?;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_reads_with_fields_left_out() {
        let r: PytestReport = serde_json::from_str(
            r#"{"version": "8.0", "nodes": [{"nodeid": "t.py::a", "outcome": "xfailed", "duration_ms": 1.5}]}"#,
        )
        .expect("report");
        assert_eq!(r.nodes[0].outcome, NodeOutcome::Xfailed);
        assert!(r.items.is_empty() && r.collect_errors.is_empty());
    }
}
