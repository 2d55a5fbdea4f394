//! The `error:`s (with their `hint:`s) a pytest run's setup ends in: no pytest in the
//! environment, a collection error (the module raising on import, a missing module), a node
//! that does not exist, arguments pytest refused.

use std::path::Path;

use super::Reason;
use crate::load::LoadError;
use crate::run::sandbox::pytest::{CollectError, PytestReport};
use crate::task::file_input;
use crate::task::file_input::project::{self, EnvSource, PythonEnv};

pub(super) fn file_error(e: file_input::FileInputError) -> LoadError {
    LoadError::bad_input(e.to_string(), e.hint)
}

/// pytest missing, a usage error (a node that does not exist) or a collection error, as an
/// `error:` with a `hint:`.
pub(super) fn check_collection(
    report: &PytestReport,
    tests: &Path,
    program: &Path,
    root: &Path,
    env: &PythonEnv,
    reason: &Reason,
) -> Result<(), LoadError> {
    if let Some(why) = &report.import_error {
        return Err(no_pytest(tests, env, reason, why));
    }
    if let Some(first) = report.collect_errors.first() {
        return Err(collection_error(first, report, program, root, env));
    }
    if let Some(usage) = &report.usage_error {
        let first = usage.lines().next().unwrap_or(usage);
        if first.starts_with("not found: ") {
            return Err(LoadError::bad_input(
                format!("{}: pytest finds no such test", tests.display()),
                format!(
                    "list the tests and their node ids with: ldb test {} --tests {}",
                    program.display(),
                    project::split_node(tests).0.display()
                ),
            ));
        }
        return Err(LoadError::bad_input(
            format!("pytest refused the arguments: {first}"),
            "check --tests and -k EXPR (pytest's own syntax)",
        ));
    }
    Ok(())
}

/// The error for a project whose environment has no pytest.
pub fn no_pytest(tests: &Path, env: &PythonEnv, reason: &Reason, why: &str) -> LoadError {
    let hint = match &env.source {
        EnvSource::Venv { dir, .. } => format!(
            "install it in the virtualenv: {}/bin/pip install pytest",
            dir.display()
        ),
        EnvSource::PythonPath => "install pytest where --python-path points (python3.11 -m pip \
                                  install --target DIR pytest), or pass --venv DIR"
            .to_string(),
        EnvSource::System => "install it for the Python ldb runs (sudo apt-get install \
                              python3-pytest, or python3.11 -m pip install pytest), or activate \
                              the project's virtualenv"
            .to_string(),
    };
    LoadError::bad_input(
        format!(
            "{}: these tests need pytest ({}), and {} has none ({why})",
            tests.display(),
            reason.0,
            env.describe()
        ),
        hint,
    )
}

fn collection_error(
    error: &CollectError,
    report: &PytestReport,
    program: &Path,
    root: &Path,
    env: &PythonEnv,
) -> LoadError {
    let more = match report.collect_errors.len() {
        0 | 1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    let what = if error.nodeid.is_empty() {
        "the tests".to_string()
    } else {
        error.nodeid.clone()
    };
    let exception = error.exception.as_ref();
    let at = exception
        .and_then(|e| e.test_location.clone())
        .map(|l| format!(" ({l})"))
        .unwrap_or_default();
    let text = exception
        .map(|e| {
            format!(
                "{}: {}",
                e.kind,
                e.message.lines().next().unwrap_or_default()
            )
        })
        .unwrap_or_else(|| "an error".into());
    if let Some(line) = exception.and_then(|e| e.program_line) {
        return LoadError::bad_input(
            format!(
                "{what}: pytest could not collect it: {program} raised {text} at line {line} \
                 when imported{more}",
                program = program.display()
            ),
            "the module must import for its tests to be collected: fix that line, then run ldb \
             again",
        );
    }
    if let Some(module) = &error.missing_module {
        let top = module.split('.').next().unwrap_or(module);
        let in_project = [
            root.join(top),
            root.join(format!("{top}.py")),
            root.join("src").join(top),
        ]
        .iter()
        .any(|p| p.exists());
        let hint = if in_project {
            format!(
                "`{top}` is in the project but not on the tests' import path: tell pytest where \
                 it is (`pythonpath = src` in pytest.ini, or [tool.pytest.ini_options] in \
                 pyproject.toml), as plain pytest needs too"
            )
        } else {
            match &env.source {
                EnvSource::Venv { dir, .. } => format!(
                    "install it in the virtualenv ({}/bin/pip install {top}), or fix the import",
                    dir.display()
                ),
                _ => format!(
                    "install it for the Python ldb runs (python3.11 -m pip install {top}), use \
                     --venv DIR for a virtualenv that has it, or fix the import"
                ),
            }
        };
        return LoadError::bad_input(
            format!(
                "{what}: pytest could not collect it: it imports `{module}`, which {} cannot \
                 import{at}{more}",
                env.describe()
            ),
            hint,
        );
    }
    LoadError::bad_input(
        format!("{what}: pytest could not collect it: {text}{at}{more}"),
        "fix the test file or its conftest.py (plain `pytest --collect-only` shows the same \
         error)",
    )
}
