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
//! - the API key and secret headers never appear in an error message.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::{Duration, Instant, SystemTime};

use async_openai::types::chat::{
    ChatCompletionRequestAssistantMessage, ChatCompletionRequestMessage,
    ChatCompletionRequestSystemMessage, ChatCompletionRequestUserMessage,
    CreateChatCompletionRequest, CreateChatCompletionResponse, ResponseFormat,
    ResponseFormatJsonSchema,
};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION, RETRY_AFTER};
use reqwest::StatusCode;
use serde_json::Value;

use super::cache::CachedModel;
use super::config::{display_url, is_sensitive_header, ModelConfig};
use super::{ChatModel, ChatRequest, ChatResponse, ModelError, Role, Usage};

/// How much of an error body ends up in an error message.
const EXCERPT_CHARS: usize = 400;

// `Compat::json_schema`: 0 = not known yet.
const SCHEMA_YES: u8 = 1;
const SCHEMA_NO: u8 = 2;

/// A chat model behind an OpenAI-compatible `/chat/completions` endpoint.
pub struct OpenAiModel {
    config: ModelConfig,
    http: reqwest::Client,
    url: reqwest::Url,
    /// The base URL as shown to users: no credentials, no query.
    endpoint: String,
    /// `model@host[:port]`.
    label: String,
    /// Strings that must never be shown (API key, secret header values).
    secrets: Vec<String>,
    compat: Compat,
}

/// What this endpoint turned out not to accept; learned from 400 replies, kept per client.
#[derive(Default)]
struct Compat {
    json_schema: AtomicU8,
    max_completion_tokens: AtomicBool,
    no_temperature: AtomicBool,
    no_seed: AtomicBool,
    /// The endpoint ignores or rejects `n` (several samples per request).
    no_n: AtomicBool,
}

/// The request shape of one attempt.
#[derive(Debug, Clone, Copy)]
struct Shape {
    schema: bool,
    max_completion_tokens: bool,
    temperature: bool,
    seed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TransportKind {
    Timeout,
    Connect,
    Other,
}

/// Why one attempt failed.
#[derive(Debug)]
enum Failure {
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
const MAX_REPLY_BYTES: usize = 32 << 20;

impl Failure {
    fn retryable(&self) -> bool {
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

    fn retry_after(&self) -> Option<Duration> {
        match self {
            Failure::Status { retry_after, .. } => *retry_after,
            Failure::Transport { .. } | Failure::TooLarge => None,
        }
    }

    fn describe(&self) -> String {
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
    /// A client for `config`. Fails only on configuration that cannot work (a malformed base
    /// URL, a header that is not valid HTTP).
    pub fn new(config: ModelConfig) -> Result<Self, ModelError> {
        let url = chat_url(&config.base_url)?;
        let endpoint = display_url(&config.base_url);

        let mut secrets = Vec::new();
        let mut headers = HeaderMap::new();
        for (name, value) in &config.headers {
            let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                ModelError::Config(format!(
                    "header name `{name}` is not a valid HTTP header name"
                ))
            })?;
            let mut v = HeaderValue::from_str(value).map_err(|_| {
                ModelError::Config(format!(
                    "the value of header `{name}` contains characters not allowed in HTTP \
                     headers (e.g. a newline)"
                ))
            })?;
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
                let mut v = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                    ModelError::Config(
                        "the API key contains characters not allowed in an HTTP header (e.g. a \
                         trailing newline); check --api-key / api_key / OPENAI_API_KEY"
                            .to_string(),
                    )
                })?;
                v.set_sensitive(true);
                headers.insert(AUTHORIZATION, v);
            }
        }
        secrets.retain(|s| s.len() >= 4);

        // A local server is never behind the user's HTTP proxy.
        let local = is_loopback(&url);
        let connect = config.timeout.min(Duration::from_secs(30));
        let http = crate::http::client("model client", |b| {
            let b = b.default_headers(headers.clone()).connect_timeout(connect);
            if local {
                b.no_proxy()
            } else {
                b
            }
        })
        .map_err(|e| ModelError::Config(format!("cannot build the HTTP client: {e}")))?;

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

    fn initial_shape(&self, request: &ChatRequest) -> Shape {
        Shape {
            schema: request.json_schema.is_some()
                && self.compat.json_schema.load(Ordering::Relaxed) != SCHEMA_NO,
            max_completion_tokens: self.compat.max_completion_tokens.load(Ordering::Relaxed),
            temperature: !self.compat.no_temperature.load(Ordering::Relaxed),
            seed: !self.compat.no_seed.load(Ordering::Relaxed),
        }
    }

    // `max_tokens` is deprecated by OpenAI, but many servers know only it; see `adapt`.
    #[allow(deprecated)]
    fn wire_request(
        &self,
        request: &ChatRequest,
        shape: Shape,
        n: u8,
    ) -> CreateChatCompletionRequest {
        let messages = request
            .messages
            .iter()
            .map(|m| match m.role {
                Role::System => ChatCompletionRequestSystemMessage::from(m.content.clone()).into(),
                Role::User => ChatCompletionRequestUserMessage::from(m.content.clone()).into(),
                Role::Assistant => {
                    ChatCompletionRequestAssistantMessage::from(m.content.clone()).into()
                }
            })
            .collect::<Vec<ChatCompletionRequestMessage>>();
        let response_format = match (&request.json_schema, shape.schema) {
            (Some(s), true) => Some(ResponseFormat::JsonSchema {
                json_schema: ResponseFormatJsonSchema {
                    description: None,
                    name: s.name.clone(),
                    schema: s.schema.clone(),
                    strict: Some(true),
                },
            }),
            _ => None,
        };
        let (max_tokens, max_completion_tokens) = if shape.max_completion_tokens {
            (None, request.max_tokens)
        } else {
            (request.max_tokens, None)
        };
        CreateChatCompletionRequest {
            messages,
            model: self.config.model.clone(),
            temperature: request.temperature.filter(|_| shape.temperature),
            max_tokens,
            max_completion_tokens,
            response_format,
            seed: request
                .seed
                .filter(|_| shape.seed)
                .map(|s| (s & i64::MAX as u64) as i64),
            n: (n > 1).then_some(n),
            ..Default::default()
        }
    }

    /// If a 400 says the request used something this endpoint lacks, change `shape` so the next
    /// attempt leaves it out, and remember. Returns whether anything changed.
    fn adapt(&self, request: &ChatRequest, shape: &mut Shape, message: &str) -> bool {
        let msg = message.to_ascii_lowercase();
        if shape.schema
            && (msg.contains("response_format")
                || msg.contains("json_schema")
                || msg.contains("response format")
                || msg.contains("structured output"))
        {
            shape.schema = false;
            // An invalid schema is this request's fault, not the endpoint's: don't remember.
            if !msg.contains("invalid schema") {
                self.compat.json_schema.store(SCHEMA_NO, Ordering::Relaxed);
            }
            return true;
        }
        if !shape.max_completion_tokens
            && request.max_tokens.is_some()
            && msg.contains("max_tokens")
            && msg.contains("max_completion_tokens")
        {
            shape.max_completion_tokens = true;
            self.compat
                .max_completion_tokens
                .store(true, Ordering::Relaxed);
            return true;
        }
        if shape.temperature
            && request.temperature.is_some()
            && msg.contains("temperature")
            && (msg.contains("unsupported") || msg.contains("not support"))
        {
            shape.temperature = false;
            self.compat.no_temperature.store(true, Ordering::Relaxed);
            return true;
        }
        if shape.seed && request.seed.is_some() && msg.contains("seed") {
            shape.seed = false;
            self.compat.no_seed.store(true, Ordering::Relaxed);
            return true;
        }
        false
    }

    /// One HTTP request; the raw body of a 2xx reply.
    async fn attempt(&self, body: &CreateChatCompletionRequest) -> Result<Vec<u8>, Failure> {
        let response = self
            .http
            .post(self.url.clone())
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

    fn transport_failure(&self, e: reqwest::Error) -> Failure {
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

    fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), "[redacted]");
            }
        }
        out
    }

    /// The error a non-retryable (or no longer retried) HTTP failure becomes.
    fn status_error(
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

    /// The first choice's text (required), the texts of the other choices, usage and model.
    fn parse_reply(
        &self,
        body: &[u8],
    ) -> Result<(String, Vec<String>, Usage, Option<String>), ModelError> {
        let value: Value = serde_json::from_slice(body).map_err(|e| {
            ModelError::InvalidResponse(self.redact(&format!(
                "the body is not JSON ({e}): {}",
                excerpt(&self.redact(&String::from_utf8_lossy(body)))
            )))
        })?;
        let reply = match serde_json::from_value::<CreateChatCompletionResponse>(value.clone()) {
            Ok(typed) => Reply::from_typed(typed),
            // Local servers bend the schema (missing `id`, odd `finish_reason`s): read what we need.
            Err(_) => Reply::from_value(&value).map_err(|why| {
                ModelError::InvalidResponse(self.redact(&format!(
                    "{why}: {}",
                    excerpt(&self.redact(&String::from_utf8_lossy(body)))
                )))
            })?,
        };
        if reply.choices == 0 {
            return Err(ModelError::InvalidResponse(
                "the reply has no choices (empty `choices` array)".to_string(),
            ));
        }
        let finish = reply
            .finish_reason
            .as_deref()
            .map(|f| format!(", finish_reason `{f}`"))
            .unwrap_or_default();
        match reply.content {
            Some(content) => Ok((content, reply.more, reply.usage, reply.model)),
            None => Err(ModelError::InvalidResponse(self.redact(&match (
                reply.refusal,
                reply.tool_calls,
            ) {
                (Some(refusal), _) => format!(
                    "the model refused to answer: {}",
                    excerpt(&self.redact(&refusal))
                ),
                (None, true) => format!("the reply has tool calls but no text content{finish}"),
                (None, false) => format!("the reply's message content is null{finish}"),
            }))),
        }
    }
}

/// What ldb needs from a completion.
struct Reply {
    choices: usize,
    content: Option<String>,
    /// Text of the choices after the first (requests with `n`).
    more: Vec<String>,
    refusal: Option<String>,
    tool_calls: bool,
    finish_reason: Option<String>,
    usage: Usage,
    model: Option<String>,
}

impl Reply {
    fn from_typed(r: CreateChatCompletionResponse) -> Reply {
        let usage = r
            .usage
            .map(|u| Usage {
                prompt_tokens: u64::from(u.prompt_tokens),
                completion_tokens: u64::from(u.completion_tokens),
                cached_prompt_tokens: u
                    .prompt_tokens_details
                    .and_then(|d| d.cached_tokens)
                    .map(u64::from)
                    .unwrap_or(0),
            })
            .unwrap_or_default();
        let choices = r.choices.len();
        let mut all = r.choices.into_iter();
        let first = all.next();
        let more: Vec<String> = all.filter_map(|c| c.message.content).collect();
        let finish_reason = first.as_ref().and_then(|c| {
            c.finish_reason
                .and_then(|f| serde_json::to_value(f).ok())
                .and_then(|v| v.as_str().map(str::to_string))
        });
        let (content, refusal, tool_calls) = match first {
            Some(c) => (
                c.message.content,
                c.message.refusal,
                c.message.tool_calls.is_some_and(|t| !t.is_empty()),
            ),
            None => (None, None, false),
        };
        Reply {
            choices,
            content,
            more,
            refusal,
            tool_calls,
            finish_reason,
            usage,
            model: Some(r.model).filter(|m| !m.is_empty()),
        }
    }

    fn from_value(v: &Value) -> Result<Reply, String> {
        if let Some(err) = v.get("error").filter(|_| v.get("choices").is_none()) {
            let msg = err
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| err.to_string());
            return Err(format!("the endpoint answered with an error: {msg}"));
        }
        let choices = v
            .get("choices")
            .and_then(Value::as_array)
            .ok_or_else(|| "the reply has no `choices` array".to_string())?;
        let first = choices.first();
        let message = first.and_then(|c| c.get("message"));
        let text_of = |message: Option<&Value>| {
            message
                .and_then(|m| m.get("content"))
                .and_then(|c| match c {
                    Value::String(s) => Some(s.clone()),
                    // Some servers send content parts: [{"type":"text","text":"…"}].
                    Value::Array(parts) => Some(
                        parts
                            .iter()
                            .filter_map(|p| p.get("text").and_then(Value::as_str))
                            .collect::<String>(),
                    ),
                    _ => None,
                })
        };
        let content = text_of(message);
        let more: Vec<String> = choices
            .iter()
            .skip(1)
            .filter_map(|c| text_of(c.get("message")))
            .collect();
        let usage = v.get("usage");
        let count = |key: &str| {
            usage
                .and_then(|u| u.get(key))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        Ok(Reply {
            choices: choices.len(),
            content,
            more,
            refusal: message
                .and_then(|m| m.get("refusal"))
                .and_then(Value::as_str)
                .map(str::to_string),
            tool_calls: message
                .and_then(|m| m.get("tool_calls"))
                .and_then(Value::as_array)
                .is_some_and(|t| !t.is_empty()),
            finish_reason: first
                .and_then(|c| c.get("finish_reason"))
                .and_then(Value::as_str)
                .map(str::to_string),
            usage: Usage {
                prompt_tokens: count("prompt_tokens"),
                completion_tokens: count("completion_tokens"),
                cached_prompt_tokens: usage
                    .and_then(|u| u.get("prompt_tokens_details"))
                    .and_then(|d| d.get("cached_tokens"))
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
            },
            model: v
                .get("model")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty())
                .map(str::to_string),
        })
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
        let start = Instant::now();
        let mut shape = self.initial_shape(request);
        let mut attempts = 0u32;
        let mut retries = 0u32;
        let mut n = n;
        loop {
            let body = self.wire_request(request, shape, n);
            attempts += 1;
            let failure = match self.attempt(&body).await {
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

/// Whether an endpoint's complaint is about the `n` parameter.
fn mentions_n(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("'n'")
        || m.contains("\"n\"")
        || m.contains("`n`")
        || m.contains("n must")
        || m.contains("only supports n=1")
        || m.contains("n > 1")
        || m.contains("n>1")
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
                r.seed = super::nth_seed(request.seed, i);
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
        ModelError::Config(format!(
            "base URL `{}` is not a URL ({e}); fix: e.g. --base-url http://127.0.0.1:8080/v1",
            display_url(base_url)
        ))
    })?;
    match url.scheme() {
        "http" | "https" => Ok(url),
        other => Err(ModelError::Config(format!(
            "base URL scheme `{other}` is not http or https"
        ))),
    }
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

/// An error and its causes, `a: b: c`, without repeats.
fn error_chain(e: &dyn std::error::Error) -> String {
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
fn excerpt(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match collapsed.char_indices().nth(EXCERPT_CHARS) {
        Some((i, _)) => format!("{}…", &collapsed[..i]),
        None => collapsed,
    }
}

/// The human message and OpenAI error code of an error body, in the shapes servers use:
/// `{"error": {"message", "code"}}`, `{"error": "…"}`, `{"message": "…"}`, `{"detail": …}`.
fn error_message(text: &str, status: StatusCode) -> (String, Option<String>) {
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
fn parse_retry_after(headers: &HeaderMap) -> Option<Duration> {
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

fn too_large_message() -> String {
    format!(
        "the endpoint sent a reply of more than {} MiB; a chat completion is far smaller, so the endpoint is misbehaving",
        MAX_REPLY_BYTES >> 20
    )
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
