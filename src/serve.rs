//! `ldb serve`: a chat model (by default the embedded one) as an OpenAI-compatible server on
//! loopback, so other tools — including peers ldb is compared against — can use it.
//!
//! Endpoints: `GET /v1/models`, `POST /v1/chat/completions` (with usage counts; `stream: true`
//! is answered as one content chunk followed by `[DONE]`), `GET /health`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

use crate::model::{ChatRequest, JsonSchema, Message, Role, SharedModel};

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

pub fn router(state: Arc<ServeState>) -> Router {
    Router::new()
        .route("/health", get(|| async { "ok" }))
        .route("/v1/models", get(models))
        .route("/v1/chat/completions", post(chat))
        .with_state(state)
}

/// Serve until the listener fails or the task is dropped.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<ServeState>,
) -> std::io::Result<()> {
    axum::serve(listener, router(state)).await
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
    let body: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                format!("the body is not JSON: {e}"),
            )
        }
    };
    let request = match parse_request(&body) {
        Ok(r) => r,
        Err(message) => return error(StatusCode::BAD_REQUEST, "invalid_request_error", message),
    };
    let stream = body["stream"].as_bool().unwrap_or(false);
    let include_usage = body["stream_options"]["include_usage"]
        .as_bool()
        .unwrap_or(false);
    let response = match state.model.chat(&request).await {
        Ok(r) => r,
        Err(e) => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "server_error",
                e.to_string(),
            )
        }
    };
    let n = state.counter.fetch_add(1, Ordering::Relaxed);
    let id = format!("chatcmpl-ldb-{n}");
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let finish = match request.max_tokens {
        Some(max) if response.usage.completion_tokens >= u64::from(max) => "length",
        _ => "stop",
    };
    let usage = json!({
        "prompt_tokens": response.usage.prompt_tokens,
        "completion_tokens": response.usage.completion_tokens,
        "total_tokens": response.usage.total(),
        "prompt_tokens_details": {"cached_tokens": response.usage.cached_prompt_tokens},
    });
    if !stream {
        return Json(json!({
            "id": id,
            "object": "chat.completion",
            "created": created,
            "model": state.model_id,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": response.content},
                "finish_reason": finish,
            }],
            "usage": usage,
        }))
        .into_response();
    }
    let chunk = |delta: Value, finish: Value, usage: Value| {
        let mut c = json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": state.model_id,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        });
        if !usage.is_null() {
            c["usage"] = usage;
        }
        format!("data: {c}\n\n")
    };
    let mut text = chunk(
        json!({"role": "assistant", "content": response.content}),
        Value::Null,
        Value::Null,
    );
    text.push_str(&chunk(json!({}), json!(finish), Value::Null));
    if include_usage {
        let mut last = json!({
            "id": id, "object": "chat.completion.chunk", "created": created,
            "model": state.model_id, "choices": [], "usage": usage,
        });
        last["usage"] = usage.clone();
        text.push_str(&format!("data: {last}\n\n"));
    }
    text.push_str("data: [DONE]\n\n");
    ([(header::CONTENT_TYPE, "text/event-stream")], text).into_response()
}

/// The OpenAI chat request fields ldb understands; content may be a string or a list of parts.
fn parse_request(body: &Value) -> Result<ChatRequest, String> {
    let messages = body["messages"]
        .as_array()
        .ok_or("`messages` must be a list of {role, content}")?;
    let mut out = Vec::with_capacity(messages.len());
    for (i, m) in messages.iter().enumerate() {
        let role = match m["role"].as_str() {
            Some("system") | Some("developer") => Role::System,
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            other => return Err(format!("messages[{i}].role: unsupported role {other:?}")),
        };
        let content = match &m["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join(""),
            Value::Null => String::new(),
            _ => {
                return Err(format!(
                    "messages[{i}].content must be a string or a list of text parts"
                ))
            }
        };
        out.push(Message { role, content });
    }
    if out.is_empty() {
        return Err("`messages` is empty".into());
    }
    let mut request = ChatRequest::new(out);
    request.temperature = body["temperature"].as_f64().map(|t| t as f32).or(Some(0.0));
    request.max_tokens = body["max_completion_tokens"]
        .as_u64()
        .or_else(|| body["max_tokens"].as_u64())
        .map(|n| n.min(u64::from(u32::MAX)) as u32);
    request.seed = body["seed"]
        .as_u64()
        .or_else(|| body["seed"].as_i64().map(|s| s as u64));
    request.json_schema = match body["response_format"]["type"].as_str() {
        Some("json_schema") => {
            let spec = &body["response_format"]["json_schema"];
            Some(JsonSchema {
                name: spec["name"].as_str().unwrap_or("reply").to_string(),
                schema: spec["schema"].clone(),
            })
        }
        Some("json_object") => Some(JsonSchema {
            name: "json_object".into(),
            schema: json!({"type": "object"}),
        }),
        _ => None,
    };
    Ok(request)
}
