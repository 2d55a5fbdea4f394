//! The one way ldb talks HTTP: a client that trusts the built-in web roots plus the system's
//! roots (behind a TLS-inspecting proxy the proxy's CA is only in the latter), and the one
//! retry policy (exponential backoff with jitter, or the server's `Retry-After`, capped) used
//! by the model client and the model download alike.

use std::time::Duration;

/// A client with ldb's user agent (`purpose` in parentheses), the system's roots added to the
/// built-in ones, and whatever `configure` sets.
///
/// reqwest's `rustls-tls-native-roots` loads the system store (`SSL_CERT_FILE`/`SSL_CERT_DIR`,
/// else the distribution's usual bundle paths); `rustls-tls` adds the built-in web roots.
pub fn client(
    purpose: &str,
    configure: impl Fn(reqwest::ClientBuilder) -> reqwest::ClientBuilder,
) -> reqwest::Result<reqwest::Client> {
    let agent = format!("ldb/{} ({purpose})", env!("CARGO_PKG_VERSION"));
    let builder = || configure(reqwest::Client::builder().user_agent(agent.clone()));
    match builder().build() {
        Ok(client) => Ok(client),
        // A system store whose every entry the TLS library rejects must not stop what the
        // built-in roots allow.
        Err(_) => builder().tls_built_in_native_certs(false).build(),
    }
}

/// How often and how long to retry 429s, 5xx answers, timeouts and dropped connections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (so at most `max_retries + 1` requests).
    pub max_retries: u32,
    /// First backoff delay; doubled on every further retry.
    pub base_delay: Duration,
    /// Upper bound of the exponential backoff.
    pub max_delay: Duration,
    /// Upper bound of a server-requested `Retry-After` wait.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// The wait before retry number `retry` (0-based) when the server gave no `Retry-After`:
    /// exponential, capped, with jitter so that parallel clients do not retry in lockstep.
    pub fn backoff(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry.min(30));
        let full = self.base_delay.saturating_mul(factor).min(self.max_delay);
        // "Equal jitter": keep half, randomise the other half.
        let half = full / 2;
        half + half.mul_f64(fastrand::f64())
    }

    /// A server-requested wait, capped.
    pub fn retry_after(&self, requested: Duration) -> Duration {
        requested.min(self.max_retry_after)
    }
}
