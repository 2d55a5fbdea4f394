//! The OpenAI-compatible chat client (OpenAI, vLLM, Ollama, llama.cpp server, `ldb serve`, …).
//!
//! The wire format is async-openai's request/response types; the sending is our own reqwest
//! client, so that status codes, `Retry-After` headers and retries are in our hands:
//!
//! - 408/429/500/502/503/504, timeouts and connection failures are retried with capped exponential
//!   backoff and jitter, or after the server's `Retry-After` / `retry-after-ms` when it sends one;
//! - 401/403 become [`ModelError::Auth`], an unknown model [`ModelError::ModelNotFound`], other
//!   4xx [`ModelError::BadRequest`], all without retrying;
//! - a 400 complaining about `response_format` makes the client retry once without it and remember
//!   that the endpoint has no structured output (likewise `max_tokens` → `max_completion_tokens`
//!   and an unsupported `temperature`), so callers never see the difference;
//! - the API key and secret headers never appear in an error message;
//! - with `fim` configured, a raw fill-in-the-middle prompt goes to `/completions` (the legacy
//!   text completion, which llama.cpp's server, vLLM and `ldb serve` take) as it is.
//!
//! Parts: `wire` (the request in the shape the endpoint accepts), `failure` (one attempt and
//! its errors), `reply` (reading the completion).

mod failure;
mod reply;
mod wire;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION};

use super::cache::CachedModel;
use super::config::{display_url, is_sensitive_header, ConfigError, ModelConfig};
use super::{ChatModel, ChatRequest, ChatResponse, ModelError, Usage};

use failure::{too_large_message, Failure, TransportKind};
use wire::{mentions_n, Compat};

// `Compat::json_schema`: 0 = not known yet.
const SCHEMA_YES: u8 = 1;
const SCHEMA_NO: u8 = 2;

/// A chat model behind an OpenAI-compatible `/chat/completions` endpoint.
pub struct OpenAiModel {
    config: ModelConfig,
    http: reqwest::Client,
    url: reqwest::Url,
    /// `/completions` beside it: raw fill-in-the-middle prompts go there.
    completions_url: reqwest::Url,
    /// The base URL as shown to users: no credentials, no query.
    endpoint: String,
    /// `model@host[:port]`.
    label: String,
    /// Strings that must never be shown (API key, secret header values).
    secrets: Vec<String>,
    compat: Compat,
}

impl OpenAiModel {
    /// A client for `config`. Fails only on configuration that cannot work (a malformed base
    /// URL, a header that is not valid HTTP).
    pub fn new(config: ModelConfig) -> Result<Self, ModelError> {
        let url = chat_url(&config.base_url)?;
        let completions_url = completions_url(&url);
        let endpoint = display_url(&config.base_url);

        let mut secrets = Vec::new();
        let mut headers = HeaderMap::new();
        for (name, value) in &config.headers {
            let header = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| ModelError::from(ConfigError::HeaderName { name: name.clone() }))?;
            let mut v = HeaderValue::from_str(value)
                .map_err(|_| ModelError::from(ConfigError::HeaderValue { name: name.clone() }))?;
            if is_sensitive_header(name) {
                v.set_sensitive(true);
                secrets.push(value.clone());
            }
            headers.insert(header, v);
        }
        if let Some(key) = &config.api_key {
            secrets.push(key.clone());
            // An explicit Authorization header (some gateways want another scheme) wins.
            if !headers.contains_key(AUTHORIZATION) {
                let mut v = HeaderValue::from_str(&format!("Bearer {key}"))
                    .map_err(|_| ModelError::from(ConfigError::ApiKey))?;
                v.set_sensitive(true);
                headers.insert(AUTHORIZATION, v);
            }
        }
        secrets.retain(|s| s.len() >= 4);

        // A local server is never behind the user's HTTP proxy.
        let local = is_loopback(&url);
        let connect = config.timeout.min(Duration::from_secs(30));
        let http = crate::generate::http::client("model client", |b| {
            let b = b.default_headers(headers.clone()).connect_timeout(connect);
            if local {
                b.no_proxy()
            } else {
                b
            }
        })
        .map_err(|e| ModelError::from(ConfigError::HttpClient(e.to_string())))?;

        let host = match (url.host_str(), url.port()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_string(),
            (None, _) => "?".to_string(),
        };
        let label = format!("{}@{host}", config.model);
        Ok(OpenAiModel {
            config,
            http,
            url,
            completions_url,
            endpoint,
            label,
            secrets,
            compat: Compat::default(),
        })
    }

    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// The base URL as safe to show (no credentials or query).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Whether the endpoint accepts `response_format: json_schema`: `None` until a request with a
    /// schema has been answered, then what that answer showed.
    pub fn supports_json_schema(&self) -> Option<bool> {
        match self.compat.json_schema.load(Ordering::Relaxed) {
            SCHEMA_YES => Some(true),
            SCHEMA_NO => Some(false),
            _ => None,
        }
    }
}

impl OpenAiModel {
    /// One request for `n` samples (1: an ordinary request). The responses hold the choices
    /// in order; the request's usage goes with the first, the other choices' completion tokens
    /// are shared out by length (the API reports one total).
    async fn complete(
        &self,
        request: &ChatRequest,
        n: u8,
    ) -> Result<Vec<ChatResponse>, ModelError> {
        // Nothing is sent, let alone retried, that the model cannot take.
        crate::generate::model::check_prompt_size(request, self.context_tokens())?;
        let fim = request.raw_prompt.as_deref();
        if fim.is_some() && !self.config.fim {
            return Err(ConfigError::NoFim {
                endpoint: self.endpoint.clone(),
            }
            .into());
        }
        let start = Instant::now();
        let mut shape = self.initial_shape(request);
        let mut attempts = 0u32;
        let mut retries = 0u32;
        let mut n = n;
        loop {
            attempts += 1;
            let sent = match fim {
                Some(raw) => {
                    let body = self.fim_request(request, raw, shape, n);
                    self.attempt(&self.completions_url, &body).await
                }
                None => {
                    let body = self.wire_request(request, shape, n);
                    self.attempt(&self.url, &body).await
                }
            };
            let failure = match sent {
                Ok(bytes) => {
                    let (content, more, usage, model) = self.parse_reply(&bytes)?;
                    if shape.schema {
                        self.compat.json_schema.store(SCHEMA_YES, Ordering::Relaxed);
                    }
                    if n > 1 && more.is_empty() {
                        // The endpoint ignored `n`: one request per sample from now on.
                        self.compat.no_n.store(true, Ordering::Relaxed);
                    }
                    let model = model.unwrap_or_else(|| self.config.model.clone());
                    let latency = start.elapsed();
                    let texts: Vec<String> = std::iter::once(content).chain(more).collect();
                    let total: usize = texts.iter().map(|t| t.len().max(1)).sum();
                    let mut out = Vec::with_capacity(texts.len());
                    for (i, content) in texts.into_iter().enumerate() {
                        let share = (usage.completion_tokens as f64 * content.len().max(1) as f64
                            / total as f64)
                            .round() as u64;
                        out.push(ChatResponse {
                            usage: if i == 0 {
                                Usage {
                                    completion_tokens: share,
                                    ..usage
                                }
                            } else {
                                Usage {
                                    prompt_tokens: 0,
                                    completion_tokens: share,
                                    cached_prompt_tokens: 0,
                                }
                            },
                            content,
                            latency,
                            model: model.clone(),
                            cached: false,
                            attempts,
                        });
                    }
                    if let (1, Some(first)) = (out.len(), out.first_mut()) {
                        // One choice: no sharing out, the reported total is exact.
                        first.usage = usage;
                    }
                    return Ok(out);
                }
                Err(f) => f,
            };
            if let Failure::Status {
                status, message, ..
            } = &failure
            {
                if n > 1 && matches!(status.as_u16(), 400 | 422) && mentions_n(message) {
                    self.compat.no_n.store(true, Ordering::Relaxed);
                    n = 1;
                    continue;
                }
            }

            if failure.retryable() {
                if retries < self.config.retry.max_retries {
                    let wait = match failure.retry_after() {
                        Some(d) => self.config.retry.retry_after(d),
                        None => self.config.retry.backoff(retries),
                    };
                    retries += 1;
                    tokio::time::sleep(wait).await;
                    continue;
                }
                return Err(match failure {
                    // Nothing answered at all: most likely a wrong URL or a server that is down.
                    Failure::Transport {
                        kind: TransportKind::Connect,
                        message,
                    } => ModelError::Connection {
                        endpoint: self.endpoint.clone(),
                        message: format!("{message} (after {attempts} attempts)"),
                    },
                    other => ModelError::RetriesExhausted {
                        attempts,
                        last: other.describe(),
                    },
                });
            }

            match failure {
                Failure::Status {
                    status,
                    message,
                    code,
                    ..
                } => {
                    if matches!(status.as_u16(), 400 | 422)
                        && self.adapt(request, &mut shape, &message)
                    {
                        continue;
                    }
                    return Err(self.status_error(status, message, code));
                }
                Failure::TooLarge => {
                    return Err(ModelError::InvalidResponse(too_large_message()));
                }
                // Transport failures are all retryable; this arm only satisfies the match.
                Failure::Transport { message, .. } => {
                    return Err(ModelError::Connection {
                        endpoint: self.endpoint.clone(),
                        message,
                    })
                }
            }
        }
    }
}

#[async_trait::async_trait]
impl ChatModel for OpenAiModel {
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let mut responses = self.complete(request, 1).await?;
        if responses.is_empty() {
            return Err(ModelError::InvalidResponse(
                "the reply has no choices".into(),
            ));
        }
        Ok(responses.swap_remove(0))
    }

    /// One request with `n` when the endpoint honours it; the samples it did not return are
    /// asked for one by one, at once.
    async fn chat_n(
        &self,
        request: &ChatRequest,
        n: usize,
    ) -> Result<Vec<ChatResponse>, ModelError> {
        let mut out = Vec::with_capacity(n);
        if n > 1 && !self.compat.no_n.load(Ordering::Relaxed) {
            let batch = u8::try_from(n).unwrap_or(u8::MAX);
            out = self.complete(request, batch).await?;
            out.truncate(n);
        }
        let rest: Vec<ChatRequest> = (out.len()..n)
            .map(|i| {
                let mut r = request.clone();
                r.seed = crate::generate::model::nth_seed(request.seed, i);
                r
            })
            .collect();
        let more = futures_util::future::join_all(rest.iter().map(|r| self.chat(r))).await;
        for r in more {
            out.push(r?);
        }
        Ok(out)
    }

    fn batches(&self) -> bool {
        !self.compat.no_n.load(Ordering::Relaxed)
    }

    fn fills_in_middle(&self) -> bool {
        self.config.fim
    }

    fn context_tokens(&self) -> Option<usize> {
        self.config.context_tokens.map(|t| t as usize)
    }

    fn name(&self) -> String {
        self.label.clone()
    }
}

/// `{base}/chat/completions`; a base that already ends in `/chat/completions` is kept.
fn chat_url(base_url: &str) -> Result<reqwest::Url, ModelError> {
    let trimmed = base_url.trim().trim_end_matches('/');
    let full = if trimmed.ends_with("/chat/completions") {
        trimmed.to_string()
    } else {
        format!("{trimmed}/chat/completions")
    };
    let url = reqwest::Url::parse(&full).map_err(|e| {
        ModelError::from(ConfigError::NotAUrl {
            url: display_url(base_url),
            why: e.to_string(),
        })
    })?;
    match url.scheme() {
        "http" | "https" => Ok(url),
        other => Err(ConfigError::Scheme {
            scheme: other.to_string(),
        }
        .into()),
    }
}

/// `…/completions` beside `…/chat/completions`.
fn completions_url(chat: &reqwest::Url) -> reqwest::Url {
    let path = chat.path();
    let base = path.strip_suffix("/chat/completions").unwrap_or(path);
    let mut url = chat.clone();
    url.set_path(&format!("{base}/completions"));
    url
}

fn is_loopback(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host == "localhost" || host.ends_with(".localhost"),
    }
}

impl ModelConfig {
    /// The client for this configuration, behind the response cache when `cache_dir` is set.
    pub fn build(&self) -> Result<std::sync::Arc<dyn ChatModel>, ModelError> {
        let client = OpenAiModel::new(self.clone())?;
        Ok(match &self.cache_dir {
            Some(dir) => {
                let namespace = format!("openai|{}|{}", display_url(&self.base_url), self.model);
                std::sync::Arc::new(CachedModel::new(client, dir.clone()).with_namespace(namespace))
            }
            None => std::sync::Arc::new(client),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(
            chat_url("http://127.0.0.1:8080/v1/").unwrap().as_str(),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
        assert_eq!(
            chat_url("https://h/v1/chat/completions").unwrap().as_str(),
            "https://h/v1/chat/completions"
        );
        assert_eq!(
            display_url("https://u:pw@h.example/v1?key=s"),
            "https://h.example/v1"
        );
        assert!(chat_url("ftp://h/v1").is_err());
        let chat = chat_url("http://127.0.0.1:8080/v1").unwrap();
        assert_eq!(
            completions_url(&chat).as_str(),
            "http://127.0.0.1:8080/v1/completions"
        );
    }
}
