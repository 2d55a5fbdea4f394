//! Writing results and errors: data goes to stdout, diagnostics to stderr, a closed pipe ends the
//! program quietly, and every error carries a `hint:` when there is something to do about it.

use std::io::Write;
use std::path::Path;

/// Process exit statuses, one per kind of outcome; documented in `ldb --help` and the README.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    Success = 0,
    /// The program's tests fail (or `ldb check` found a runtime error).
    TestsFailed = 1,
    /// The user can fix it: a flag, a file, a task, a template given with `--prompts`.
    BadInput = 2,
    /// The model backend (an endpoint, the embedded model, or `--seed-cmd` in its place).
    Backend = 3,
    /// The sandbox could not run a program.
    Sandbox = 4,
    /// A failure on ldb's side: a bug, or the system refusing what ldb needs (an async runtime,
    /// encoding its own output, a built-in template).
    Internal = 5,
    /// `fix`: every visible test passes, but nothing independent confirms the fix (no
    /// independently written program agrees, no regression test guarded it).
    Unconfirmed = 6,
    /// Stopped by Ctrl-C (128 + SIGINT, as shells report it).
    Interrupted = 130,
}

impl ExitStatus {
    /// The status of a run stopped by a failure of this kind.
    pub fn of(class: crate::eval::fix::ErrorClass) -> Self {
        use crate::eval::fix::ErrorClass as C;
        match class {
            c if c.is_backend() => ExitStatus::Backend,
            // The seed command stands in for the generator model.
            C::SeedCommand | C::SeedUnavailable => ExitStatus::Backend,
            C::Sandbox => ExitStatus::Sandbox,
            _ => ExitStatus::Internal,
        }
    }
}

/// An error as the command line reports it: `error:` and `hint:` lines and an exit status.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct CliError {
    pub message: String,
    pub hint: Option<String>,
    pub status: ExitStatus,
}

impl CliError {
    pub fn bad_input(message: impl Into<String>, hint: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            hint: Some(hint.into()),
            status: ExitStatus::BadInput,
        }
    }

    /// The sandbox could not run a program.
    pub fn sandbox(message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            hint: None,
            status: ExitStatus::Sandbox,
        }
    }

    /// A failure on ldb's side (see [`ExitStatus::Internal`]).
    pub fn internal(message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            hint: Some("this is a bug in ldb, or the system is short of what it needs".into()),
            status: ExitStatus::Internal,
        }
    }

    /// Print to stderr as `error: ...` and `hint: ...`.
    pub fn report(&self) {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "error: {}", self.message);
        if let Some(hint) = &self.hint {
            let _ = writeln!(err, "hint: {hint}");
        }
    }
}

impl From<crate::task::TaskError> for CliError {
    fn from(e: crate::task::TaskError) -> Self {
        // TaskError's Display already names file, line and field; keep its hint separate.
        let text = e.to_string();
        let message = text
            .lines()
            .filter(|l| !l.starts_with("hint:"))
            .collect::<Vec<_>>()
            .join("\n");
        CliError {
            message,
            hint: Some(e.hint().to_string()).filter(|h| !h.is_empty()),
            status: ExitStatus::BadInput,
        }
    }
}

impl From<crate::load::LoadError> for CliError {
    fn from(e: crate::load::LoadError) -> Self {
        CliError {
            message: e.message,
            hint: e.hint,
            status: match e.kind {
                crate::load::LoadErrorKind::BadInput => ExitStatus::BadInput,
                crate::load::LoadErrorKind::Sandbox => ExitStatus::Sandbox,
            },
        }
    }
}

impl From<crate::run::sandbox::SandboxError> for CliError {
    fn from(e: crate::run::sandbox::SandboxError) -> Self {
        CliError::sandbox(e.to_string())
    }
}

/// Read a program or test file the user named (regular files only, up to
/// [`crate::files::read::caps::SOURCE`], a byte-order mark dropped), with an error that names it.
pub fn read_source(path: &Path) -> Result<String, CliError> {
    Ok(crate::files::read_text(path, crate::files::read::caps::SOURCE)?.text)
}

impl From<crate::files::ReadError> for CliError {
    fn from(e: crate::files::ReadError) -> Self {
        CliError::bad_input(e.to_string(), e.hint())
    }
}

/// Write `text` to `path` atomically (a synced temp file renamed over it), so a failed or
/// killed write leaves the old file; `what` names it in the error.
pub fn write_file(path: &Path, text: &str, what: &str) -> Result<(), CliError> {
    crate::files::atomic_write(path, text.as_bytes()).map_err(|e| {
        CliError::bad_input(
            format!("cannot write {what} to {}: {e}", path.display()),
            "check that the directory exists, is writable and has space",
        )
    })
}

/// Write data to stdout; a closed pipe (`ldb ... | head`) exits quietly.
pub fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
    }
}

pub fn print_json(value: &impl serde::Serialize) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| CliError::internal(format!("cannot encode JSON output: {e}")))?;
    print(&text);
    print("\n");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::fix::ErrorClass;
    use crate::generate::model::ModelError;
    use crate::repair::AgentError;
    use crate::run::sandbox::SandboxError;

    /// Every kind of failure, from the typed error where it happens to its exit status and
    /// hint: no message text is parsed on the way.
    #[test]
    fn each_failure_kind_has_its_exit_status_and_hint() {
        let text = || "x".to_string();
        let cases: Vec<(AgentError, ErrorClass, ExitStatus, &str)> = vec![
            (
                ModelError::Auth {
                    status: 401,
                    message: text(),
                }
                .into(),
                ErrorClass::BackendAuth,
                ExitStatus::Backend,
                "OPENAI_API_KEY",
            ),
            (
                ModelError::ModelNotFound {
                    model: text(),
                    endpoint: text(),
                    message: text(),
                }
                .into(),
                ErrorClass::BackendModelNotFound,
                ExitStatus::Backend,
                "--model",
            ),
            (
                ModelError::Connection {
                    endpoint: text(),
                    message: text(),
                }
                .into(),
                ErrorClass::BackendConnection,
                ExitStatus::Backend,
                "--base-url",
            ),
            (
                ModelError::Config(crate::generate::model::ConfigError::Timeout).into(),
                ErrorClass::BackendConfig,
                ExitStatus::Backend,
                "config file",
            ),
            (
                ModelError::RetriesExhausted {
                    attempts: 3,
                    last: text(),
                }
                .into(),
                ErrorClass::BackendRetries,
                ExitStatus::Backend,
                "--retry-errors",
            ),
            (
                ModelError::BadRequest {
                    status: 400,
                    message: text(),
                }
                .into(),
                ErrorClass::BackendRequest,
                ExitStatus::Backend,
                "--retry-errors",
            ),
            (
                ModelError::InvalidResponse(text()).into(),
                ErrorClass::BackendResponse,
                ExitStatus::Backend,
                "--retry-errors",
            ),
            (
                ModelError::Local(text()).into(),
                ErrorClass::BackendLocal,
                ExitStatus::Backend,
                "--retry-errors",
            ),
            (
                SandboxError::Pipe(std::io::Error::other("x")).into(),
                ErrorClass::Sandbox,
                ExitStatus::Sandbox,
                "ldb test",
            ),
            (
                crate::generate::prompts::PromptError {
                    name: text(),
                    detail: text(),
                }
                .into(),
                ErrorClass::Prompt,
                ExitStatus::Internal,
                "bug in ldb",
            ),
            (
                AgentError::SeedCommand {
                    command: text(),
                    detail: text(),
                },
                ErrorClass::SeedCommand,
                ExitStatus::Backend,
                "--retry-errors",
            ),
            (
                AgentError::Internal(text()),
                ErrorClass::Internal,
                ExitStatus::Internal,
                "--retry-errors",
            ),
        ];
        for (error, class, status, hint) in cases {
            assert_eq!(error.class(), class, "{error}");
            assert_eq!(ExitStatus::of(class), status, "{class:?}");
            assert!(class.hint().contains(hint), "{class:?}: {}", class.hint());
        }
        // Kinds that stop a whole evaluation are those that would hit every task alike.
        assert!(ErrorClass::BackendAuth.is_fatal());
        assert!(ErrorClass::Sandbox.is_fatal());
        assert!(!ErrorClass::BackendRetries.is_fatal());
        assert!(
            !ErrorClass::Prompt.is_fatal(),
            "one task's template failure is recorded"
        );
    }
}
