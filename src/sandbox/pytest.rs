//! pytest inside the sandbox: what a session reports, and the Python module that runs it.
//!
//! A run whose test is [`super::TestSpec::Pytest`] starts one pytest session in the request's
//! project (`pytest_run.py`, loaded as module `ldb_pytest`). A plugin of ours reports every
//! node as data: its outcome, its duration, and for a failure the exception, the program line
//! and the test line it came from, and the values a failed comparison compared (pytest's own
//! assertion rewriting hands them to `pytest_assertrepr_compare`). Collection errors, skips
//! and xfails are reported as such. Nothing here reads pytest's text output.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyModule;
use serde::{Deserialize, Serialize};

use super::protocol::ExceptionInfo;
use super::{Sandbox, SHOWN_DIRS_VAR, SITE_DIRS_VAR};

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
            env.push((super::zygote::PRELOAD_PYTEST_VAR.into(), "1".into()));
        }
    }
}

/// What one pytest session reported.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PytestReport {
    /// pytest's version, when it could be imported.
    #[serde(default)]
    pub version: Option<String>,
    /// The directory pytest was imported from.
    #[serde(default)]
    pub location: Option<String>,
    /// Why pytest could not be imported (then nothing ran).
    #[serde(default)]
    pub import_error: Option<String>,
    /// pytest's exit code (0 all passed, 1 some failed, 2 interrupted, 4 usage error, 5 none
    /// collected).
    #[serde(default)]
    pub exit_code: Option<i64>,
    /// pytest's rootdir and ini file, as it chose them.
    #[serde(default)]
    pub rootdir: Option<String>,
    #[serde(default)]
    pub inifile: Option<String>,
    /// A usage error pytest stopped at (e.g. `not found: tests/test_x.py::test_y`).
    #[serde(default)]
    pub usage_error: Option<String>,
    /// Files or directories that could not be collected.
    #[serde(default)]
    pub collect_errors: Vec<CollectError>,
    /// The nodes collected (a collect-only session).
    #[serde(default)]
    pub items: Vec<CollectedItem>,
    /// The nodes run, in the order they ran.
    #[serde(default)]
    pub nodes: Vec<NodeReport>,
    /// Whether collection imported the module file from its path (a collect-only session): if
    /// not, the tests may import an installed copy that candidates never replace.
    #[serde(default)]
    pub module_imported: Option<bool>,
    /// How long `pytest.main` took inside the run, in milliseconds.
    #[serde(default)]
    pub session_ms: Option<f64>,
    /// The CPU time it took (the process's, user and system).
    #[serde(default)]
    pub session_cpu_ms: Option<f64>,
}

/// A collector pytest could not collect: a test file that does not import, a conftest.py that
/// raises.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CollectError {
    pub nodeid: String,
    /// The exception behind it (the original one, not pytest's wrapper), when one was seen.
    #[serde(default)]
    pub exception: Option<ExceptionInfo>,
    /// The module an import could not find (`ModuleNotFoundError.name`).
    #[serde(default)]
    pub missing_module: Option<String>,
}

/// One collected node.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CollectedItem {
    pub nodeid: String,
    /// The test's file and its 1-based line.
    pub path: String,
    pub line: u32,
    /// The test function's name (without parameters).
    pub function: String,
    /// The test function's source (dedented), when it can be read.
    #[serde(default)]
    pub source: Option<String>,
    /// Parametrized arguments with their values, rendered.
    #[serde(default)]
    pub params: Vec<(String, String)>,
    /// Fixtures the test asks for besides its parameters.
    #[serde(default)]
    pub fixtures: Vec<String>,
    /// `skip` or `xfail` when the node carries such a mark.
    #[serde(default)]
    pub mark: Option<String>,
}

/// How a node ended.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NodeOutcome {
    Passed,
    /// An assertion of the test failed.
    Failed,
    /// Another exception, in the test or in a fixture's set-up or teardown.
    Error,
    Skipped,
    /// Marked xfail, and it failed.
    Xfailed,
    /// Marked xfail, and it passed (a non-strict xfail; a strict one is `failed`).
    Xpassed,
    /// Stopped at the per-node time limit.
    Timeout,
    /// The session ended before the node reported (it was killed, or the program exited it).
    NotRun,
}

/// One node's result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NodeReport {
    pub nodeid: String,
    pub outcome: NodeOutcome,
    /// The phase that decided the outcome: `setup`, `call` or `teardown`.
    #[serde(default)]
    pub when: Option<String>,
    pub duration_ms: f64,
    #[serde(default)]
    pub exception: Option<ExceptionInfo>,
    /// A failed comparison's operator and its two sides, rendered.
    #[serde(default)]
    pub op: Option<String>,
    #[serde(default)]
    pub left: Option<String>,
    #[serde(default)]
    pub right: Option<String>,
    /// Why it was skipped or xfailed.
    #[serde(default)]
    pub reason: Option<String>,
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
    super::harness::module(py)?;
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
