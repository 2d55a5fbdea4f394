//! What kind of failure stopped a fix run, kept typed from where it happens (the model client,
//! the sandbox, a prompt template, a seed command) to the report, the evaluation records, exit
//! statuses and `hint:` lines.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::generate::model::ModelError;
use crate::repair::AgentError;

/// Why a task (or the whole run) failed, apart from its program being wrong.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// The endpoint refused the credentials (stops the run).
    BackendAuth,
    /// The endpoint does not serve the model (stops the run).
    BackendModelNotFound,
    /// The endpoint cannot be reached (stops the run).
    BackendConnection,
    /// The model configuration is wrong (stops the run).
    BackendConfig,
    /// Retries on 429/5xx/timeouts ran out.
    BackendRetries,
    /// The endpoint rejected this request (e.g. the context is too long).
    BackendRequest,
    /// The endpoint's reply could not be read.
    BackendResponse,
    /// The embedded model failed.
    BackendLocal,
    /// The sandbox could not run a program (stops the run).
    Sandbox,
    /// A prompt template failed to render for this task (a bug in ldb; recorded).
    Prompt,
    /// The external seed command failed.
    SeedCommand,
    /// The task has no seed because getting it failed.
    SeedUnavailable,
    /// A bug in ldb.
    Internal,
    Other,
}

impl ErrorClass {
    /// Failures that would hit every task alike: the run stops instead of recording them.
    pub fn is_fatal(self) -> bool {
        matches!(
            self,
            ErrorClass::BackendAuth
                | ErrorClass::BackendModelNotFound
                | ErrorClass::BackendConnection
                | ErrorClass::BackendConfig
                | ErrorClass::Sandbox
        )
    }

    /// Backend failures (exit status 3).
    pub fn is_backend(self) -> bool {
        matches!(
            self,
            ErrorClass::BackendAuth
                | ErrorClass::BackendModelNotFound
                | ErrorClass::BackendConnection
                | ErrorClass::BackendConfig
                | ErrorClass::BackendRetries
                | ErrorClass::BackendRequest
                | ErrorClass::BackendResponse
                | ErrorClass::BackendLocal
        )
    }

    pub fn label(self) -> &'static str {
        match self {
            ErrorClass::BackendAuth => "backend_auth",
            ErrorClass::BackendModelNotFound => "backend_model_not_found",
            ErrorClass::BackendConnection => "backend_connection",
            ErrorClass::BackendConfig => "backend_config",
            ErrorClass::BackendRetries => "backend_retries",
            ErrorClass::BackendRequest => "backend_request",
            ErrorClass::BackendResponse => "backend_response",
            ErrorClass::BackendLocal => "backend_local",
            ErrorClass::Sandbox => "sandbox",
            ErrorClass::Prompt => "prompt",
            ErrorClass::SeedCommand => "seed_command",
            ErrorClass::SeedUnavailable => "seed_unavailable",
            ErrorClass::Internal => "internal",
            ErrorClass::Other => "other",
        }
    }

    pub fn hint(self) -> &'static str {
        match self {
            ErrorClass::BackendAuth => "set OPENAI_API_KEY (or --api-key / the config file)",
            ErrorClass::BackendModelNotFound => {
                "check --model against the models the endpoint serves"
            }
            ErrorClass::BackendConnection => {
                "check --base-url / OPENAI_BASE_URL and that the server is running; then run the \
                 same command again to resume"
            }
            ErrorClass::BackendConfig => "check the model flags and the config file",
            ErrorClass::Sandbox => "check the sandbox with `ldb test`; then run again to resume",
            ErrorClass::Prompt => "a prompt template failed on this task; this is a bug in ldb",
            _ => "run the same command again with --retry-errors to redo the failed tasks",
        }
    }
}

impl AgentError {
    /// The kind of this failure.
    pub fn class(&self) -> ErrorClass {
        match self {
            AgentError::Model(e) => match e {
                ModelError::Auth { .. } => ErrorClass::BackendAuth,
                ModelError::ModelNotFound { .. } => ErrorClass::BackendModelNotFound,
                ModelError::Connection { .. } => ErrorClass::BackendConnection,
                ModelError::Config(_) => ErrorClass::BackendConfig,
                ModelError::RetriesExhausted { .. } => ErrorClass::BackendRetries,
                ModelError::BadRequest { .. } | ModelError::PromptTooLarge { .. } => {
                    ErrorClass::BackendRequest
                }
                ModelError::InvalidResponse(_) => ErrorClass::BackendResponse,
                ModelError::Local(_) => ErrorClass::BackendLocal,
            },
            AgentError::Sandbox(_) => ErrorClass::Sandbox,
            AgentError::Prompt(_) => ErrorClass::Prompt,
            AgentError::SeedCommand { .. } => ErrorClass::SeedCommand,
            AgentError::Internal(_) => ErrorClass::Internal,
        }
    }
}
