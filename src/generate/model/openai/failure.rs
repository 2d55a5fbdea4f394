//! One HTTP attempt and what can go wrong with it: transport failures and error statuses, which
//! of them a retry can help, `Retry-After`, and error messages with secrets redacted.

use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, RETRY_AFTER};
use reqwest::StatusCode;
use serde_json::Value;

use super::OpenAiModel;
use crate::generate::model::ModelError;

/// How much of an error body ends up in an error message.
pub(super) const EXCERPT_CHARS: usize = 400;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TransportKind {
    Timeout,
    Connect,
    Other,
}

/// Why one attempt failed.
#[derive(Debug)]
pub(super) enum Failure {
    Status {
        status: StatusCode,
        retry_after: Option<Duration>,
        /// The server's error message (or a body excerpt), redacted.
        message: String,
        /// The OpenAI error `code`, when given.
        code: Option<String>,
    },
    Transport {
        kind: TransportKind,
        message: String,
    },
    /// The body went past [`MAX_REPLY_BYTES`]; asking again would only repeat it.
    TooLarge,
}

/// Replies are read up to this size: a chat completion is kilobytes, and a runaway server must
/// not take the memory of the whole run.
pub(super) const MAX_REPLY_BYTES: usize = 32 << 20;

impl Failure {
    pub(super) fn retryable(&self) -> bool {
        match self {
            Failure::Status { status, code, .. } => {
                // An exhausted quota is a 429 that no amount of waiting fixes.
                if code.as_deref() == Some("insufficient_quota") {
                    return false;
                }
                matches!(status.as_u16(), 408 | 429 | 500 | 502 | 503 | 504)
            }
            Failure::Transport { .. } => true,
            Failure::TooLarge => false,
        }
    }

    pub(super) fn retry_after(&self) -> Option<Duration> {
        match self {
            Failure::Status { retry_after, .. } => *retry_after,
            Failure::Transport { .. } | Failure::TooLarge => None,
        }
    }

    pub(super) fn describe(&self) -> String {
        match self {
            Failure::Status {
                status, message, ..
            } => format!("HTTP {status}: {message}"),
            Failure::Transport { message, .. } => message.clone(),
            Failure::TooLarge => too_large_message(),
        }
    }
}

impl OpenAiModel {
    /// One HTTP request; the raw body of a 2xx reply.
    pub(super) async fn attempt(
        &self,
        url: &reqwest::Url,
        body: &impl serde::Serialize,
    ) -> Result<Vec<u8>, Failure> {
        let response = self
            .http
            .post(url.clone())
            .timeout(self.config.timeout)
            .json(body)
            .send()
            .await
            .map_err(|e| self.transport_failure(e))?;
        let status = response.status();
        let retry_after = parse_retry_after(response.headers());
        if response
            .content_length()
            .is_some_and(|n| n > MAX_REPLY_BYTES as u64)
        {
            return Err(Failure::TooLarge);
        }
        let mut response = response;
        let mut bytes: Vec<u8> = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.transport_failure(e))?
        {
            if bytes.len() + chunk.len() > MAX_REPLY_BYTES {
                return Err(Failure::TooLarge);
            }
            bytes.extend_from_slice(&chunk);
        }
        if status.is_success() {
            return Ok(bytes);
        }
        // Redact before cutting an excerpt, so that no part of a secret survives the cut.
        let text = self.redact(&String::from_utf8_lossy(&bytes));
        let (message, code) = error_message(&text, status);
        Err(Failure::Status {
            status,
            retry_after,
            message: self.redact(&message),
            code,
        })
    }

    pub(super) fn transport_failure(&self, e: reqwest::Error) -> Failure {
        let kind = if e.is_timeout() {
            TransportKind::Timeout
        } else if e.is_connect() {
            TransportKind::Connect
        } else {
            TransportKind::Other
        };
        let message = match kind {
            TransportKind::Timeout => format!(
                "request timed out after {:.1} s (timeout)",
                self.config.timeout.as_secs_f64()
            ),
            // The URL is left out of reqwest's text: we show our sanitized endpoint instead.
            _ => error_chain(&e.without_url()),
        };
        Failure::Transport {
            kind,
            message: self.redact(&message),
        }
    }

    pub(super) fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), "[redacted]");
            }
        }
        out
    }

    /// The error a non-retryable (or no longer retried) HTTP failure becomes.
    pub(super) fn status_error(
        &self,
        status: StatusCode,
        message: String,
        code: Option<String>,
    ) -> ModelError {
        let code_says_model = code.as_deref() == Some("model_not_found");
        match status.as_u16() {
            401 | 403 => ModelError::Auth {
                status: status.as_u16(),
                message,
            },
            404 if code_says_model || message.to_ascii_lowercase().contains("model") => {
                ModelError::ModelNotFound {
                    model: self.config.model.clone(),
                    endpoint: self.endpoint.clone(),
                    message,
                }
            }
            404 => ModelError::BadRequest {
                status: 404,
                message: format!(
                    "{message} (no such path: POST {}/chat/completions; the base URL usually ends \
                     in /v1)",
                    self.endpoint
                ),
            },
            _ if code_says_model => ModelError::ModelNotFound {
                model: self.config.model.clone(),
                endpoint: self.endpoint.clone(),
                message,
            },
            s => ModelError::BadRequest { status: s, message },
        }
    }
}

/// An error and its causes, `a: b: c`, without repeats.
pub(super) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}

/// The first [`EXCERPT_CHARS`] characters, whitespace-collapsed.
pub(super) fn excerpt(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match collapsed.char_indices().nth(EXCERPT_CHARS) {
        Some((i, _)) => format!("{}…", &collapsed[..i]),
        None => collapsed,
    }
}

/// The human message and OpenAI error code of an error body, in the shapes servers use:
/// `{"error": {"message", "code"}}`, `{"error": "…"}`, `{"message": "…"}`, `{"detail": …}`.
pub(super) fn error_message(text: &str, status: StatusCode) -> (String, Option<String>) {
    let fallback = || {
        let t = excerpt(text);
        if t.is_empty() {
            status.canonical_reason().unwrap_or("no body").to_string()
        } else {
            t
        }
    };
    let Ok(v) = serde_json::from_str::<Value>(text) else {
        return (fallback(), None);
    };
    let as_text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let err = v.get("error");
    let code = err
        .and_then(|e| e.get("code").or_else(|| e.get("type")))
        .and_then(Value::as_str)
        .map(str::to_string);
    let message = match err {
        Some(Value::String(s)) => Some(s.clone()),
        Some(e) => e.get("message").map(as_text),
        None => v.get("message").or_else(|| v.get("detail")).map(as_text),
    };
    let message = match (message, &code) {
        (Some(m), Some(c)) if !m.contains(c.as_str()) => format!("{} (code {c})", excerpt(&m)),
        (Some(m), _) => excerpt(&m),
        (None, _) => fallback(),
    };
    (message, code)
}

/// The wait a reply asks for: `retry-after-ms` (OpenAI), else `Retry-After` in seconds or as an
/// HTTP date.
pub(super) fn parse_retry_after(headers: &HeaderMap) -> Option<Duration> {
    let seconds = |s: &str| {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .map(|v| Duration::from_secs_f64(v.min(1e7)))
    };
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(seconds)
    {
        return Some(ms / 1000);
    }
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?;
    seconds(value).or_else(|| {
        let at = httpdate::parse_http_date(value.trim()).ok()?;
        Some(
            at.duration_since(SystemTime::now())
                .unwrap_or(Duration::ZERO),
        )
    })
}

pub(super) fn too_large_message() -> String {
    format!(
        "the endpoint sent a reply of more than {} MiB; a chat completion is far smaller, so the endpoint is misbehaving",
        MAX_REPLY_BYTES >> 20
    )
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use reqwest::header::{HeaderValue, RETRY_AFTER};

    use super::*;

    #[test]
    fn retry_after_accepts_seconds_and_http_dates() {
        let mut headers = HeaderMap::new();
        headers.insert(RETRY_AFTER, "2".parse().unwrap());
        assert_eq!(parse_retry_after(&headers), Some(Duration::from_secs(2)));
        let later = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(120));
        headers.insert(RETRY_AFTER, later.parse().unwrap());
        let wait = parse_retry_after(&headers).unwrap();
        assert!(
            wait > Duration::from_secs(100) && wait <= Duration::from_secs(120),
            "{wait:?}"
        );
        headers.insert(RETRY_AFTER, "soon".parse().unwrap());
        assert_eq!(parse_retry_after(&headers), None);
    }

    #[test]
    fn retry_after_forms() {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, HeaderValue::from_static("2"));
        assert_eq!(parse_retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(parse_retry_after(&h), Some(Duration::from_millis(250)));
        let mut h = HeaderMap::new();
        h.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"),
        );
        assert_eq!(parse_retry_after(&h), Some(Duration::ZERO));
    }

    #[test]
    fn error_bodies() {
        let s = StatusCode::NOT_FOUND;
        let (m, c) = error_message(
            r#"{"error":{"message":"The model `x` does not exist","code":"model_not_found"}}"#,
            s,
        );
        assert!(m.contains("does not exist") && m.contains("model_not_found"));
        assert_eq!(c.as_deref(), Some("model_not_found"));
        assert_eq!(error_message(r#"{"error":"boom"}"#, s).0, "boom");
        assert_eq!(error_message("", s).0, "Not Found");
        assert_eq!(error_message("<html>x</html>", s).0, "<html>x</html>");
    }
}
