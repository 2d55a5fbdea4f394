//! `ldb serve`: a chat model (by default the embedded one) as an OpenAI-compatible server on
//! loopback, so other tools — including peers ldb is compared against — can use it.
//!
//! Endpoints: `GET /v1/models`, `POST /v1/chat/completions` (with usage counts; `stream: true`
//! is answered as one content chunk followed by `[DONE]`), `POST /v1/completions` (a raw prompt,
//! or `prompt` and `suffix` for fill-in-the-middle, where the model takes raw prompts: the
//! embedded one), `GET /health`.
//!
//! Like the servers users know (llama.cpp's, vLLM): a request field of the wrong type or out of
//! range gets a 400 naming the field, a body announced larger than [`MAX_BODY`] gets a 413
//! before it is read, and every request logs one line on stderr (method, path, status, tokens,
//! time). `n` samples are drawn as asked (up to [`MAX_N`]). A client gets [`Timeouts`] to send
//! a request's headers (the connection is closed after) and its body (a 408 after); a client
//! that shuts its side down after sending its request still gets the reply.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::generate::model::{
    ChatRequest, ChatResponse, JsonSchema, Message, ModelError, Role, SharedModel,
};

pub struct ServeState {
    pub model: SharedModel,
    /// The id clients see in `/v1/models` and in replies.
    pub model_id: String,
    counter: AtomicU64,
}

impl ServeState {
    pub fn new(model: SharedModel, model_id: impl Into<String>) -> Arc<Self> {
        Arc::new(ServeState {
            model,
            model_id: model_id.into(),
            counter: AtomicU64::new(0),
        })
    }
}

/// Largest request body accepted (a long conversation is well below it).
pub const MAX_BODY: usize = 16 << 20;
/// Most samples one request may ask for (`n`).
pub const MAX_N: i64 = 16;

/// How long a client may take over a request.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// To send the headers, from connecting or from the end of the previous reply; the
    /// connection is closed when it runs out.
    pub header: Duration,
    /// To send the body, from the end of the headers; answered with a 408.
    pub body: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            header: Duration::from_secs(10),
            body: Duration::from_secs(60),
        }
    }
}

/// Tokens of a completion, left in the response for the request log.
#[derive(Clone, Copy)]
struct Served {
    prompt: u64,
    completion: u64,
}

pub fn router(state: Arc<ServeState>, timeouts: Timeouts) -> Router {
    Router::new()
        .route("/health", get(|| async { "ok" }))
        .route("/v1/models", get(models))
        .route("/v1/chat/completions", post(chat))
        .route("/v1/completions", post(completion))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(middleware::from_fn(move |request, next| {
            limit_body(request, next, timeouts.body)
        }))
        .layer(middleware::from_fn(log_request))
        .with_state(state)
}

/// A body announced larger than [`MAX_BODY`] is refused before any of it is read; a body that
/// does not arrive within `within` gets a 408.
async fn limit_body(request: Request, next: Next, within: Duration) -> Response {
    let announced = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u128>().ok());
    if announced.is_some_and(|n| n > MAX_BODY as u128) {
        return error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_request_error",
            format!("the body is larger than the limit of {MAX_BODY} bytes"),
        );
    }
    let (parts, body) = request.into_parts();
    let bytes = match tokio::time::timeout(within, axum::body::to_bytes(body, MAX_BODY)).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(e)) => {
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "invalid_request_error",
                format!("the body could not be read whole (over {MAX_BODY} bytes?): {e}"),
            )
        }
        Err(_) => {
            let mut reply = error(
                StatusCode::REQUEST_TIMEOUT,
                "invalid_request_error",
                format!("the body did not arrive within {} s", within.as_secs_f64()),
            );
            reply.headers_mut().insert(
                header::CONNECTION,
                header::HeaderValue::from_static("close"),
            );
            return reply;
        }
    };
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await
}

/// One line per request on stderr: method, path, status, tokens, time.
async fn log_request(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let response = next.run(request).await;
    let tokens = response
        .extensions()
        .get::<Served>()
        .map(|t| format!(" {}+{} tokens", t.prompt, t.completion))
        .unwrap_or_default();
    eprintln!(
        "{method} {path} {}{tokens} {} ms",
        response.status().as_u16(),
        started.elapsed().as_millis()
    );
    response
}

/// Serve until the task is dropped. Each connection is HTTP/1.1 with [`Timeouts`] and
/// half-closed clients answered.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<ServeState>,
    timeouts: Timeouts,
) -> std::io::Result<()> {
    let app = router(state, timeouts);
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of descriptors or a connection reset before it was accepted: the
                // listener itself still works.
                eprintln!("ldb serve: accepting a connection failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(timeouts.header)
                .half_close(true);
            // A client that goes away or times out ends only its own connection.
            let _ = http
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn models(State(state): State<Arc<ServeState>>) -> Json<Value> {
    Json(json!({
        "object": "list",
        "data": [{"id": state.model_id, "object": "model", "created": 0, "owned_by": "ldb"}]
    }))
}

fn error(status: StatusCode, kind: &str, message: impl Into<String>) -> Response {
    let body =
        json!({"error": {"message": message.into(), "type": kind, "param": null, "code": null}});
    (status, Json(body)).into_response()
}

async fn chat(State(state): State<Arc<ServeState>>, body: axum::body::Bytes) -> Response {
    let parsed = json_body(&body)
        .and_then(|body| Ok((parse_request(&body)?, stream_flags(&body)?, samples(&body)?)));
    let (request, (stream, include_usage), n) = match parsed {
        Ok(p) => p,
        Err(e) => return bad(e),
    };
    let responses = match answer(&state, &request, n, "messages").await {
        Ok(r) => r,
        Err(reply) => return reply,
    };
    let id = format!(
        "chatcmpl-ldb-{}",
        state.counter.fetch_add(1, Ordering::Relaxed)
    );
    let created = now();
    let finish = |r: &ChatResponse| finish_reason(&request, r);
    let (served, usage) = usage(&responses);
    if !stream {
        let choices: Vec<Value> = responses
            .iter()
            .enumerate()
            .map(|(i, r)| {
                json!({
                    "index": i,
                    "message": {"role": "assistant", "content": r.content},
                    "finish_reason": finish(r),
                })
            })
            .collect();
        let mut reply = Json(json!({
            "id": id,
            "object": "chat.completion",
            "created": created,
            "model": state.model_id,
            "choices": choices,
            "usage": usage,
        }))
        .into_response();
        reply.extensions_mut().insert(served);
        return reply;
    }
    let chunk = |index: usize, delta: Value, finish: Value| {
        let c = json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": state.model_id,
            "choices": [{"index": index, "delta": delta, "finish_reason": finish}],
        });
        format!("data: {c}\n\n")
    };
    let mut text = String::new();
    for (i, r) in responses.iter().enumerate() {
        text.push_str(&chunk(
            i,
            json!({"role": "assistant", "content": r.content}),
            Value::Null,
        ));
        text.push_str(&chunk(i, json!({}), json!(finish(r))));
    }
    if include_usage {
        let last = json!({
            "id": id, "object": "chat.completion.chunk", "created": created,
            "model": state.model_id, "choices": [], "usage": usage,
        });
        text.push_str(&format!("data: {last}\n\n"));
    }
    text.push_str("data: [DONE]\n\n");
    let mut reply = ([(header::CONTENT_TYPE, "text/event-stream")], text).into_response();
    reply.extensions_mut().insert(served);
    reply
}

/// `n` samples of `request`, or the error reply (`field` names what a too-long prompt came in).
async fn answer(
    state: &ServeState,
    request: &ChatRequest,
    n: usize,
    field: &str,
) -> Result<Vec<ChatResponse>, Response> {
    let answered = if n == 1 {
        state.model.chat(request).await.map(|r| vec![r])
    } else {
        state.model.chat_n(request, n).await
    };
    match answered {
        Ok(r) if !r.is_empty() => Ok(r),
        Ok(_) => Err(error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "the model returned no sample",
        )),
        Err(e @ ModelError::PromptTooLarge { .. }) => Err(error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            format!("`{field}`: {e}"),
        )),
        Err(e) => Err(error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            e.to_string(),
        )),
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn finish_reason(request: &ChatRequest, r: &ChatResponse) -> &'static str {
    match request.max_tokens {
        Some(max) if r.usage.completion_tokens >= u64::from(max) => "length",
        _ => "stop",
    }
}

/// The tokens for the request log and the reply's `usage`: the prompt is counted once (with
/// the first sample), the completions of all.
fn usage(responses: &[ChatResponse]) -> (Served, Value) {
    let served = Served {
        prompt: responses.iter().map(|r| r.usage.prompt_tokens).sum(),
        completion: responses.iter().map(|r| r.usage.completion_tokens).sum(),
    };
    let cached: u64 = responses.iter().map(|r| r.usage.cached_prompt_tokens).sum();
    let usage = json!({
        "prompt_tokens": served.prompt,
        "completion_tokens": served.completion,
        "total_tokens": served.prompt + served.completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    });
    (served, usage)
}

/// `POST /v1/completions`: the legacy text completion, for raw prompts. `prompt` goes to the
/// model as it is; with `suffix` the two become a fill-in-the-middle prompt in Qwen2.5-Coder's
/// tokens. Only a model that takes raw prompts (the embedded one) answers; streaming is not
/// offered here.
async fn completion(State(state): State<Arc<ServeState>>, body: axum::body::Bytes) -> Response {
    if !state.model.fills_in_middle() {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            format!(
                "model `{}` takes chat requests only; use /v1/chat/completions (raw prompts need the embedded model)",
                state.model_id
            ),
        );
    }
    let parsed = json_body(&body).and_then(|body| Ok((parse_completion(&body)?, samples(&body)?)));
    let (request, n) = match parsed {
        Ok(p) => p,
        Err(e) => return bad(e),
    };
    let responses = match answer(&state, &request, n, "prompt").await {
        Ok(r) => r,
        Err(reply) => return reply,
    };
    let (served, usage) = usage(&responses);
    let choices: Vec<Value> = responses
        .iter()
        .enumerate()
        .map(|(i, r)| {
            json!({
                "index": i,
                "text": r.content,
                "logprobs": null,
                "finish_reason": finish_reason(&request, r),
            })
        })
        .collect();
    let mut reply = Json(json!({
        "id": format!("cmpl-ldb-{}", state.counter.fetch_add(1, Ordering::Relaxed)),
        "object": "text_completion",
        "created": now(),
        "model": state.model_id,
        "choices": choices,
        "usage": usage,
    }))
    .into_response();
    reply.extensions_mut().insert(served);
    reply
}

/// A `/v1/completions` body as a request with a raw prompt.
fn parse_completion(body: &Value) -> Result<ChatRequest, BadRequest> {
    if !body.is_object() {
        return Err("the body must be a JSON object".into());
    }
    if field::<bool>(body, "stream")?.unwrap_or(false) {
        return Err("`stream`: ldb serve answers /v1/completions whole; leave `stream` out".into());
    }
    let prompt = match field::<Value>(body, "prompt")? {
        Some(Value::String(p)) => p,
        // A list of one prompt, as some clients send it.
        Some(Value::Array(list)) if list.len() == 1 && list[0].is_string() => {
            list[0].as_str().unwrap_or_default().to_string()
        }
        Some(_) => return Err("`prompt`: must be a string (or a list of one string)".into()),
        None => return Err("`prompt` is required: the text to continue".into()),
    };
    if prompt.is_empty() {
        return Err("`prompt` is empty".into());
    }
    let raw = match field::<String>(body, "suffix")? {
        Some(suffix) => format!("<|fim_prefix|>{prompt}<|fim_suffix|>{suffix}<|fim_middle|>"),
        None => prompt,
    };
    let mut request = ChatRequest::new(vec![Message::user("continue the raw prompt")]);
    request.raw_prompt = Some(raw);
    sampling(body, &mut request)?;
    Ok(request)
}

/// The request body as JSON.
fn json_body(body: &[u8]) -> Result<Value, BadRequest> {
    serde_json::from_slice(body).map_err(|e| BadRequest(format!("the body is not JSON: {e}")))
}

/// The 400 for a refused request.
fn bad(e: BadRequest) -> Response {
    error(StatusCode::BAD_REQUEST, "invalid_request_error", e.0)
}

/// Why a request is refused: answered with 400 and this message, which names the field.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct BadRequest(String);

impl From<String> for BadRequest {
    fn from(message: String) -> Self {
        BadRequest(message)
    }
}

impl From<&str> for BadRequest {
    fn from(message: &str) -> Self {
        BadRequest(message.to_string())
    }
}

/// How many samples the request asks for (`n`, default 1, at most [`MAX_N`]).
fn samples(body: &Value) -> Result<usize, BadRequest> {
    match field::<i64>(body, "n")? {
        None => Ok(1),
        Some(n) if n < 1 => Err(format!("`n`: {n} must be at least 1").into()),
        Some(n) if n > MAX_N => {
            Err(format!("`n`: {n} is more than the {MAX_N} samples one request may ask for").into())
        }
        Some(n) => Ok(n as usize),
    }
}

/// The OpenAI chat request fields ldb understands, typed: a field of the wrong type or out of
/// range is an error naming it; fields ldb does not use are ignored (clients send many).
#[derive(Debug, serde::Deserialize)]
struct MessageBody {
    role: String,
    #[serde(default)]
    content: Option<Content>,
}

/// Message content: a string or a list of parts (only text parts are read).
#[derive(Debug, serde::Deserialize)]
#[serde(untagged)]
enum Content {
    Text(String),
    Parts(Vec<Part>),
}

#[derive(Debug, serde::Deserialize)]
struct Part {
    #[serde(default)]
    text: Option<String>,
}

#[derive(Debug, serde::Deserialize)]
struct ResponseFormat {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    json_schema: Option<SchemaSpec>,
}

#[derive(Debug, serde::Deserialize)]
struct SchemaSpec {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    schema: Option<Value>,
}

#[derive(Debug, Default, serde::Deserialize)]
struct StreamOptions {
    #[serde(default)]
    include_usage: Option<bool>,
}

/// The typed value of `body[name]`; absent or null is `None`.
fn field<T: DeserializeOwned>(body: &Value, name: &str) -> Result<Option<T>, BadRequest> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v.clone())
            .map(Some)
            .map_err(|e| BadRequest(format!("`{name}`: {e}"))),
    }
}

/// Whether the request asks for streaming, and for usage in the stream.
fn stream_flags(body: &Value) -> Result<(bool, bool), BadRequest> {
    let stream = field::<bool>(body, "stream")?.unwrap_or(false);
    let options = field::<StreamOptions>(body, "stream_options")?.unwrap_or_default();
    Ok((stream, options.include_usage.unwrap_or(false)))
}

fn parse_request(body: &Value) -> Result<ChatRequest, BadRequest> {
    if !body.is_object() {
        return Err("the body must be a JSON object".into());
    }
    let messages: Vec<MessageBody> =
        field(body, "messages")?.ok_or("`messages` is required: a list of {role, content}")?;
    let mut out = Vec::with_capacity(messages.len());
    for (i, m) in messages.into_iter().enumerate() {
        let role = match m.role.as_str() {
            "system" | "developer" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            other => {
                return Err(format!(
                "`messages[{i}].role`: unsupported role {other:?} (use system, user or assistant)"
            )
                .into())
            }
        };
        let content = match m.content {
            Some(Content::Text(s)) => s,
            Some(Content::Parts(parts)) => parts.into_iter().filter_map(|p| p.text).collect(),
            None => String::new(),
        };
        out.push(Message { role, content });
    }
    if out.is_empty() {
        return Err("`messages` is empty".into());
    }
    let mut request = ChatRequest::new(out);
    sampling(body, &mut request)?;
    request.json_schema = response_format(body)?;
    Ok(request)
}

/// The sampling fields both endpoints take: `temperature`, `top_p` (checked, not used),
/// `max_completion_tokens` or `max_tokens`, `seed`.
fn sampling(body: &Value, request: &mut ChatRequest) -> Result<(), BadRequest> {
    let temperature = field::<f64>(body, "temperature")?;
    if let Some(t) = temperature {
        if !(0.0..=2.0).contains(&t) {
            return Err(format!("`temperature`: {t} is outside 0 to 2").into());
        }
    }
    request.temperature = Some(temperature.unwrap_or(0.0) as f32);
    if let Some(p) = field::<f64>(body, "top_p")? {
        if !(p > 0.0 && p <= 1.0) {
            return Err(format!("`top_p`: {p} is outside (0, 1]").into());
        }
    }
    let max_tokens = |name: &str| -> Result<Option<u32>, BadRequest> {
        match field::<i64>(body, name)? {
            Some(n) if n < 1 => Err(format!("`{name}`: {n} must be at least 1").into()),
            Some(n) => Ok(Some(n.min(i64::from(u32::MAX)) as u32)),
            None => Ok(None),
        }
    };
    request.max_tokens = match max_tokens("max_completion_tokens")? {
        Some(n) => Some(n),
        None => max_tokens("max_tokens")?,
    };
    // OpenAI seeds are 64-bit signed; the model takes the bits as they are.
    request.seed = match field::<serde_json::Number>(body, "seed")? {
        None => None,
        Some(n) => Some(
            n.as_u64()
                .or_else(|| n.as_i64().map(|s| s as u64))
                .ok_or("`seed`: must be a whole number")?,
        ),
    };
    Ok(())
}

fn response_format(body: &Value) -> Result<Option<JsonSchema>, BadRequest> {
    Ok(match field::<ResponseFormat>(body, "response_format")? {
        None => None,
        Some(f) => match f.kind.as_str() {
            "json_schema" => {
                let spec = f
                    .json_schema
                    .ok_or("`response_format.json_schema` is required for type json_schema")?;
                Some(JsonSchema {
                    name: spec.name.unwrap_or_else(|| "reply".into()),
                    schema: spec.schema.unwrap_or_else(|| json!({})),
                })
            }
            "json_object" => Some(JsonSchema {
                name: "json_object".into(),
                schema: json!({"type": "object"}),
            }),
            "text" => None,
            other => {
                return Err(format!(
                    "`response_format.type`: unsupported {other:?} (use text, json_object or json_schema)"
                ).into())
            }
        },
    })
}
