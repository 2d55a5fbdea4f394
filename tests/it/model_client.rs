//! The model layer against a fake OpenAI-compatible server (wiremock records what it received):
//! retries, `Retry-After`, timeouts, error mapping, structured-output fallback, the response
//! cache, configuration precedence, and the scripted model.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ldb::generate::model::cache::CachedModel;
use ldb::generate::model::config::{endpoint_configured, ModelConfig, ModelFlags, RetryPolicy};
use ldb::generate::model::meter::{MeteredModel, UsageMeter};
use ldb::generate::model::openai::OpenAiModel;
use ldb::generate::model::scripted::ScriptedModel;
use ldb::generate::model::{
    ChatModel, ChatRequest, ConfigError, JsonSchema, Message, ModelError, Usage,
};
use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const KEY: &str = "sk-test-SECRET-0123456789abcdef";
const CHAT: &str = "/v1/chat/completions";

fn reply(content: Value) -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "test-model-2024",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop"
        }],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
    })
}

fn ok(content: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(reply(json!(content)))
}

fn fast_retries(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(5),
        max_retry_after: Duration::from_secs(60),
    }
}

fn config(server: &MockServer) -> ModelConfig {
    ModelConfig::new(format!("{}/v1/", server.uri()), "test-model")
        .with_api_key(KEY)
        .with_timeout(Duration::from_secs(10))
        .with_retry(fast_retries(4))
}

fn client(server: &MockServer) -> OpenAiModel {
    OpenAiModel::new(config(server)).unwrap()
}

fn request() -> ChatRequest {
    ChatRequest::new(vec![
        Message::system("You are a debugger."),
        Message::user("Why does f fail?"),
    ])
}

fn schema_request() -> ChatRequest {
    let mut r = request();
    r.json_schema = Some(JsonSchema {
        name: "verdict".to_string(),
        schema: json!({
            "type": "object",
            "properties": {"correct": {"type": "boolean"}},
            "required": ["correct"],
            "additionalProperties": false
        }),
    });
    r
}

async fn received(server: &MockServer) -> Vec<Request> {
    server.received_requests().await.unwrap_or_default()
}

fn body(r: &Request) -> Value {
    r.body_json().unwrap()
}

async fn mount(server: &MockServer, template: ResponseTemplate, times: Option<u64>) {
    let mock = Mock::given(method("POST"))
        .and(path(CHAT))
        .respond_with(template);
    match times {
        Some(n) => mock.up_to_n_times(n).mount(server).await,
        None => mock.mount(server).await,
    }
}

fn assert_no_key(e: &ModelError) {
    let shown = format!("{e} {e:?}");
    // A prefix of KEY: this also catches a key cut in half by an excerpt.
    assert!(!shown.contains("sk-test-"), "key leaked: {shown}");
}

// ---------------------------------------------------------------- fill-in-the-middle

fn fim_request() -> ChatRequest {
    let mut r = ChatRequest::new(vec![Message::user("fill in line 2 of the program")]);
    r.raw_prompt = Some("<|fim_prefix|>def f(x):\n    <|fim_suffix|>\n<|fim_middle|>".into());
    r.temperature = Some(0.8);
    r.seed = Some(42);
    r.max_tokens = Some(96);
    r
}

/// With `fim`, a raw prompt goes to `/completions` as it is (no chat template, no messages),
/// with the sampling fields; the choice's `text` is the reply, the endpoint's usage its cost.
#[tokio::test]
async fn a_fill_in_the_middle_prompt_goes_to_completions_as_it_is() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "cmpl-1", "object": "text_completion", "created": 0, "model": "test-model",
            "choices": [{"index": 0, "text": "return x + 1", "finish_reason": "stop", "logprobs": null}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}
        })))
        .mount(&server)
        .await;
    let model = OpenAiModel::new(config(&server).with_fim(true)).unwrap();
    assert!(model.fills_in_middle());
    let reply = model.chat(&fim_request()).await.unwrap();
    assert_eq!(reply.content, "return x + 1");
    assert_eq!(reply.usage.prompt_tokens, 20);
    assert_eq!(reply.usage.completion_tokens, 5);

    let sent = received(&server).await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].url.path(), "/v1/completions");
    let b = body(&sent[0]);
    assert_eq!(
        b["prompt"],
        "<|fim_prefix|>def f(x):\n    <|fim_suffix|>\n<|fim_middle|>"
    );
    assert_eq!(b["model"], "test-model");
    assert_eq!(b["max_tokens"], 96);
    assert_eq!(b["seed"], 42);
    assert!((b["temperature"].as_f64().unwrap() - 0.8).abs() < 1e-6);
    assert!(b.get("messages").is_none(), "{b}");

    // A chat request to the same client still goes to /chat/completions.
    mount(&server, ok("hi"), None).await;
    model.chat(&request()).await.unwrap();
    let sent = received(&server).await;
    assert_eq!(
        sent.last().map(|r| r.url.path().to_string()).as_deref(),
        Some(CHAT)
    );
}

/// Without `fim`, a raw prompt is refused before anything is sent, with the fix named: sent
/// as a chat, its messages would only describe the request.
#[tokio::test]
async fn a_fill_in_the_middle_prompt_for_an_endpoint_without_fim_is_refused_unsent() {
    let server = MockServer::start().await;
    mount(&server, ok("never"), None).await;
    let model = client(&server);
    assert!(!model.fills_in_middle());
    let e = model.chat(&fim_request()).await.unwrap_err();
    let shown = e.to_string();
    assert!(shown.contains("--fim"), "{shown}");
    assert!(shown.contains("--patch-form chat"), "{shown}");
    assert!(received(&server).await.is_empty());
}

// ---------------------------------------------------------------- success and request shape

#[tokio::test]
async fn success_parses_usage_and_sends_the_key() {
    let server = MockServer::start().await;
    mount(&server, ok("def f(): pass"), None).await;
    let model = OpenAiModel::new(config(&server).with_header("X-Title", "ldb")).unwrap();

    let mut req = request();
    req.max_tokens = Some(256);
    let r = model.chat(&req).await.unwrap();
    assert_eq!(r.content, "def f(): pass");
    assert_eq!(
        r.usage,
        Usage {
            prompt_tokens: 12,
            completion_tokens: 3,
            cached_prompt_tokens: 0
        }
    );
    assert_eq!(r.attempts, 1);
    assert_eq!(r.model, "test-model-2024");
    assert!(!r.cached);

    let reqs = received(&server).await;
    assert_eq!(reqs.len(), 1);
    let sent = &reqs[0];
    assert_eq!(sent.url.path(), CHAT);
    assert_eq!(
        sent.headers.get("authorization").unwrap().to_str().unwrap(),
        format!("Bearer {KEY}")
    );
    assert_eq!(sent.headers.get("x-title").unwrap(), "ldb");
    let b = body(sent);
    assert_eq!(b["model"], "test-model");
    assert_eq!(b["messages"][0]["role"], "system");
    assert_eq!(b["messages"][0]["content"], "You are a debugger.");
    assert_eq!(b["messages"][1]["role"], "user");
    assert_eq!(b["temperature"], 0.0);
    assert_eq!(b["max_tokens"], 256);
    assert!(b.get("max_completion_tokens").is_none());
    assert!(b.get("response_format").is_none());
    assert!(b.get("stream").is_none());
    assert_eq!(model.name(), format!("test-model@{}", server.address()));
}

#[tokio::test]
async fn no_key_means_no_authorization_header() {
    let server = MockServer::start().await;
    mount(&server, ok("x"), None).await;
    let mut cfg = config(&server);
    cfg.api_key = None;
    OpenAiModel::new(cfg)
        .unwrap()
        .chat(&request())
        .await
        .unwrap();
    assert!(received(&server).await[0]
        .headers
        .get("authorization")
        .is_none());
}

#[tokio::test]
async fn json_schema_is_sent_as_response_format() {
    let server = MockServer::start().await;
    mount(&server, ok(r#"{"correct": true}"#), None).await;
    let model = client(&server);
    assert_eq!(model.supports_json_schema(), None);
    model.chat(&schema_request()).await.unwrap();

    let b = body(&received(&server).await[0]);
    assert_eq!(
        b["response_format"],
        json!({
            "type": "json_schema",
            "json_schema": {
                "name": "verdict",
                "schema": schema_request().json_schema.unwrap().schema,
                "strict": true
            }
        })
    );
    assert_eq!(model.supports_json_schema(), Some(true));
}

#[tokio::test]
async fn lenient_replies_from_local_servers_are_accepted() {
    // No id/created/usage, a finish_reason outside OpenAI's enum, content as parts.
    let server = MockServer::start().await;
    let body = json!({
        "choices": [{"message": {"role": "assistant",
                                 "content": [{"type": "text", "text": "he"}, {"type": "text", "text": "llo"}]},
                     "finish_reason": "eos"}]
    });
    mount(
        &server,
        ResponseTemplate::new(200).set_body_json(body),
        None,
    )
    .await;
    let r = client(&server).chat(&request()).await.unwrap();
    assert_eq!(r.content, "hello");
    assert_eq!(r.usage, Usage::default());
    assert_eq!(r.model, "test-model");
}

// ---------------------------------------------------------------- retries

#[tokio::test]
async fn server_error_then_success_is_retried() {
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(500).set_body_string("oops"),
        Some(1),
    )
    .await;
    mount(&server, ok("fixed"), None).await;
    let r = client(&server).chat(&request()).await.unwrap();
    assert_eq!(r.content, "fixed");
    assert_eq!(r.attempts, 2);
    assert_eq!(received(&server).await.len(), 2);
}

#[tokio::test]
async fn retry_after_is_honoured() {
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(429)
            .insert_header("Retry-After", "1")
            .set_body_json(
                json!({"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}),
            ),
        Some(1),
    )
    .await;
    mount(&server, ok("after the wait"), None).await;
    let start = Instant::now();
    // Backoff alone would wait a few milliseconds; only the header explains a 1 s wait.
    let r = client(&server).chat(&request()).await.unwrap();
    let elapsed = start.elapsed();
    assert_eq!(r.attempts, 2);
    assert!(
        elapsed >= Duration::from_millis(900),
        "waited only {elapsed:?}"
    );
    assert!(r.latency >= Duration::from_millis(900));
}

#[tokio::test]
async fn retry_after_ms_is_honoured() {
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(503).insert_header("retry-after-ms", "300"),
        Some(1),
    )
    .await;
    mount(&server, ok("ok"), None).await;
    let start = Instant::now();
    let r = client(&server).chat(&request()).await.unwrap();
    assert_eq!(r.attempts, 2);
    assert!(start.elapsed() >= Duration::from_millis(250));
}

#[tokio::test]
async fn persistent_503_exhausts_retries() {
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(503).set_body_string("upstream overloaded"),
        None,
    )
    .await;
    let model = OpenAiModel::new(config(&server).with_retry(fast_retries(2))).unwrap();
    let err = model.chat(&request()).await.unwrap_err();
    match &err {
        ModelError::RetriesExhausted { attempts, last } => {
            assert_eq!(*attempts, 3);
            assert!(last.contains("503"), "{last}");
            assert!(last.contains("upstream overloaded"), "{last}");
        }
        other => panic!("expected RetriesExhausted, got {other:?}"),
    }
    assert!(err.hint().is_some());
    assert_eq!(received(&server).await.len(), 3);
}

#[tokio::test]
async fn slow_replies_time_out_and_are_retried() {
    let server = MockServer::start().await;
    mount(&server, ok("late").set_delay(Duration::from_secs(3)), None).await;
    let model = OpenAiModel::new(
        config(&server)
            .with_timeout(Duration::from_millis(200))
            .with_retry(fast_retries(1)),
    )
    .unwrap();
    let err = model.chat(&request()).await.unwrap_err();
    match &err {
        ModelError::RetriesExhausted { attempts, last } => {
            assert_eq!(*attempts, 2);
            assert!(last.contains("timed out"), "{last}");
        }
        other => panic!("expected RetriesExhausted, got {other:?}"),
    }
    assert_eq!(received(&server).await.len(), 2);
}

#[tokio::test]
async fn unreachable_endpoint_is_a_connection_error() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let cfg = ModelConfig::new(format!("http://127.0.0.1:{port}/v1"), "m")
        .with_api_key(KEY)
        .with_retry(fast_retries(1));
    let err = OpenAiModel::new(cfg)
        .unwrap()
        .chat(&request())
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::Connection { .. }), "got {err:?}");
    assert!(err.to_string().contains(&format!("127.0.0.1:{port}")));
    assert_no_key(&err);
}

// ---------------------------------------------------------------- errors that are not retried

#[tokio::test]
async fn unauthorized_is_an_auth_error_without_retry() {
    let server = MockServer::start().await;
    // Some servers echo the key back; it must not reach the user.
    let body = json!({"error": {"message": format!("Incorrect API key provided: {KEY}"),
                                "type": "invalid_request_error", "code": "invalid_api_key"}});
    mount(
        &server,
        ResponseTemplate::new(401).set_body_json(body),
        None,
    )
    .await;
    let err = client(&server).chat(&request()).await.unwrap_err();
    assert!(
        matches!(err, ModelError::Auth { status: 401, .. }),
        "got {err:?}"
    );
    assert!(err.to_string().contains("Incorrect API key provided"));
    assert!(err.hint().unwrap().contains("OPENAI_API_KEY"));
    assert_no_key(&err);
    assert_eq!(received(&server).await.len(), 1);
}

#[tokio::test]
async fn unknown_model_is_model_not_found() {
    let server = MockServer::start().await;
    let body = json!({"error": {"message": "The model `test-model` does not exist or you do not have access to it.",
                                "type": "invalid_request_error", "code": "model_not_found"}});
    mount(
        &server,
        ResponseTemplate::new(404).set_body_json(body),
        None,
    )
    .await;
    let err = client(&server).chat(&request()).await.unwrap_err();
    match &err {
        ModelError::ModelNotFound {
            model, endpoint, ..
        } => {
            assert_eq!(model, "test-model");
            assert_eq!(endpoint, &format!("{}/v1", server.uri()));
        }
        other => panic!("expected ModelNotFound, got {other:?}"),
    }
    assert_eq!(received(&server).await.len(), 1);
}

#[tokio::test]
async fn wrong_path_is_a_bad_request_that_mentions_the_base_url() {
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(404).set_body_string("404 page not found"),
        None,
    )
    .await;
    let err = client(&server).chat(&request()).await.unwrap_err();
    assert!(
        matches!(err, ModelError::BadRequest { status: 404, .. }),
        "got {err:?}"
    );
    assert!(err.to_string().contains("base URL"));
}

#[tokio::test]
async fn other_client_errors_are_bad_requests_without_retry() {
    let server = MockServer::start().await;
    let body = json!({"error": {"message": "This model's maximum context length is 8192 tokens",
                                "code": "context_length_exceeded"}});
    mount(
        &server,
        ResponseTemplate::new(400).set_body_json(body),
        None,
    )
    .await;
    let err = client(&server).chat(&request()).await.unwrap_err();
    assert!(
        matches!(err, ModelError::BadRequest { status: 400, .. }),
        "got {err:?}"
    );
    assert!(err.to_string().contains("maximum context length"));
    assert_eq!(received(&server).await.len(), 1);
}

#[tokio::test]
async fn exhausted_quota_is_not_retried() {
    let server = MockServer::start().await;
    let body = json!({"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}});
    mount(
        &server,
        ResponseTemplate::new(429).set_body_json(body),
        None,
    )
    .await;
    let err = client(&server).chat(&request()).await.unwrap_err();
    assert!(
        matches!(err, ModelError::BadRequest { status: 429, .. }),
        "got {err:?}"
    );
    assert_eq!(received(&server).await.len(), 1);
}

// ---------------------------------------------------------------- structured-output fallback

#[tokio::test]
async fn unsupported_response_format_falls_back_and_is_remembered() {
    let server = MockServer::start().await;
    let body =
        json!({"error": {"message": "Unrecognized request argument supplied: response_format"}});
    mount(
        &server,
        ResponseTemplate::new(400).set_body_json(body),
        Some(1),
    )
    .await;
    mount(&server, ok(r#"{"correct": false}"#), None).await;
    let model = client(&server);

    let r = model.chat(&schema_request()).await.unwrap();
    assert_eq!(r.content, r#"{"correct": false}"#);
    assert_eq!(model.supports_json_schema(), Some(false));
    let reqs = received(&server).await;
    assert_eq!(reqs.len(), 2);
    assert!(body_has(&reqs[0], "response_format"));
    assert!(!body_has(&reqs[1], "response_format"));

    // Later calls skip it from the start.
    model.chat(&schema_request()).await.unwrap();
    let reqs = received(&server).await;
    assert_eq!(reqs.len(), 3);
    assert!(!body_has(&reqs[2], "response_format"));
}

fn body_has(r: &Request, key: &str) -> bool {
    body(r).get(key).is_some()
}

#[tokio::test]
async fn max_tokens_switches_to_max_completion_tokens_when_asked() {
    let server = MockServer::start().await;
    let error = json!({"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                                "code": "unsupported_parameter"}});
    mount(
        &server,
        ResponseTemplate::new(400).set_body_json(error),
        Some(1),
    )
    .await;
    mount(&server, ok("fine"), None).await;
    let mut req = request();
    req.max_tokens = Some(100);
    client(&server).chat(&req).await.unwrap();
    let reqs = received(&server).await;
    assert_eq!(reqs.len(), 2);
    assert_eq!(body(&reqs[1])["max_completion_tokens"], 100);
    assert!(!body_has(&reqs[1], "max_tokens"));
}

// ---------------------------------------------------------------- unreadable replies

async fn invalid_reply(template: ResponseTemplate) -> (ModelError, usize) {
    let server = MockServer::start().await;
    mount(&server, template, None).await;
    let err = client(&server).chat(&request()).await.unwrap_err();
    (err, received(&server).await.len())
}

#[tokio::test]
async fn malformed_json_is_an_invalid_response() {
    let (err, n) = invalid_reply(
        ResponseTemplate::new(200)
            .set_body_raw(format!("{{\"choices\": [ {KEY}"), "application/json"),
    )
    .await;
    assert!(
        matches!(err, ModelError::InvalidResponse(ref m) if m.contains("not JSON")),
        "got {err:?}"
    );
    assert_no_key(&err);
    assert_eq!(n, 1);
}

#[tokio::test]
async fn empty_choices_is_an_invalid_response() {
    let mut b = reply(json!("x"));
    b["choices"] = json!([]);
    let (err, _) = invalid_reply(ResponseTemplate::new(200).set_body_json(b)).await;
    assert!(
        matches!(err, ModelError::InvalidResponse(ref m) if m.contains("no choices")),
        "got {err:?}"
    );
}

#[tokio::test]
async fn null_content_is_an_invalid_response() {
    let (err, _) =
        invalid_reply(ResponseTemplate::new(200).set_body_json(reply(Value::Null))).await;
    assert!(
        matches!(err, ModelError::InvalidResponse(ref m) if m.contains("null")),
        "got {err:?}"
    );
}

#[tokio::test]
async fn null_content_with_refusal_says_so() {
    let mut b = reply(Value::Null);
    b["choices"][0]["message"]["refusal"] = json!("I can't help with that.");
    let (err, _) = invalid_reply(ResponseTemplate::new(200).set_body_json(b)).await;
    assert!(
        matches!(err, ModelError::InvalidResponse(ref m) if m.contains("refused") && m.contains("can't help")),
        "got {err:?}"
    );
}

#[tokio::test]
async fn the_key_never_shows_in_errors() {
    let echo = format!("bad key {KEY}");
    // The key straddles the point where error bodies are cut short.
    let padded = format!("{}{KEY}", "x ".repeat(195));
    let mut errors = Vec::new();
    for (status, echo) in [400u16, 401, 403, 404, 422, 503]
        .into_iter()
        .flat_map(|s| [(s, echo.clone()), (s, padded.clone())])
    {
        let server = MockServer::start().await;
        mount(
            &server,
            ResponseTemplate::new(status).set_body_string(echo.clone()),
            None,
        )
        .await;
        let model = OpenAiModel::new(config(&server).with_retry(fast_retries(0))).unwrap();
        errors.push(model.chat(&request()).await.unwrap_err());
    }
    for e in &errors {
        assert_no_key(e);
    }
    let bad = ModelConfig::new("http://127.0.0.1:1/v1", "m")
        .with_api_key(format!("{KEY}\n"))
        .with_retry(fast_retries(0));
    match OpenAiModel::new(bad) {
        Err(e) => assert_no_key(&e),
        Ok(_) => panic!("a key with a newline cannot be a header"),
    }
}

// ---------------------------------------------------------------- response cache

#[tokio::test]
async fn cache_serves_repeats_from_disk() {
    let server = MockServer::start().await;
    mount(&server, ok("cached answer"), None).await;
    let dir = tempfile::tempdir().unwrap();

    let model = CachedModel::new(client(&server), dir.path());
    let first = model.chat(&request()).await.unwrap();
    assert!(!first.cached);
    let second = model.chat(&request()).await.unwrap();
    assert!(second.cached);
    assert_eq!(second.latency, Duration::ZERO);
    assert_eq!(second.content, "cached answer");
    assert_eq!(second.usage, first.usage);
    assert_eq!(received(&server).await.len(), 1);

    // A different request misses.
    let mut other = request();
    other.messages.push(Message::user("and g?"));
    assert!(!model.chat(&other).await.unwrap().cached);
    assert_eq!(received(&server).await.len(), 2);

    // A rerun (new process, same directory) is free.
    let rerun = CachedModel::new(client(&server), dir.path());
    assert!(rerun.chat(&request()).await.unwrap().cached);
    assert_eq!(received(&server).await.len(), 2);
    assert_eq!(model.stats().hits, 1);
    assert_eq!(model.stats().misses, 2);
}

#[tokio::test]
async fn corrupt_cache_entries_are_replaced() {
    let server = MockServer::start().await;
    mount(&server, ok("fresh"), None).await;
    let dir = tempfile::tempdir().unwrap();
    let model = CachedModel::new(client(&server), dir.path());
    let key = ldb::generate::model::cache::cache_key(model.namespace(), &request(), None);
    let entry = model.entry_path(&key);
    std::fs::create_dir_all(entry.parent().unwrap()).unwrap();
    std::fs::write(&entry, "{ not json").unwrap();

    let r = model.chat(&request()).await.unwrap();
    assert_eq!(r.content, "fresh");
    assert!(!r.cached);
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&entry).unwrap()).unwrap();
    assert_eq!(stored["response"]["content"], "fresh");
    assert!(model.chat(&request()).await.unwrap().cached);
    assert_eq!(received(&server).await.len(), 1);
}

#[tokio::test]
async fn sampled_requests_replay_in_order() {
    let server = MockServer::start().await;
    mount(&server, ok("sample one"), Some(1)).await;
    mount(&server, ok("sample two"), Some(1)).await;
    let dir = tempfile::tempdir().unwrap();
    let mut req = request();
    req.temperature = Some(0.8);

    let model = CachedModel::new(client(&server), dir.path());
    let a = model.chat(&req).await.unwrap().content;
    let b = model.chat(&req).await.unwrap().content;
    assert_eq!((a.as_str(), b.as_str()), ("sample one", "sample two"));

    let rerun = CachedModel::new(client(&server), dir.path());
    let a2 = rerun.chat(&req).await.unwrap();
    let b2 = rerun.chat(&req).await.unwrap();
    assert!(a2.cached && b2.cached);
    assert_eq!((a2.content, b2.content), (a, b));
    assert_eq!(received(&server).await.len(), 2);
}

/// A seeded request names its sample: the same request with the same seed is served from the
/// cache wherever it is made again (another task with the same text), another seed is drawn.
#[tokio::test]
async fn seeded_samples_are_keyed_by_their_seed() {
    let server = MockServer::start().await;
    mount(&server, ok("sample seven"), Some(1)).await;
    mount(&server, ok("sample eight"), Some(1)).await;
    let dir = tempfile::tempdir().unwrap();
    let model = CachedModel::new(client(&server), dir.path());
    let first = model.chat(&sampled()).await.unwrap();
    let again = model.chat(&sampled()).await.unwrap();
    assert!(!first.cached && again.cached);
    assert_eq!(again.content, "sample seven");
    let mut eight = sampled();
    eight.seed = Some(8);
    let other = model.chat(&eight).await.unwrap();
    assert!(!other.cached);
    assert_eq!(other.content, "sample eight");
    assert_eq!(received(&server).await.len(), 2);
}

#[tokio::test]
async fn errors_are_not_cached() {
    let dir = tempfile::tempdir().unwrap();
    let scripted = ScriptedModel::with_results([
        Err(ModelError::InvalidResponse("boom".into())),
        Ok("ok".to_string()),
    ]);
    let model = CachedModel::new(scripted, dir.path());
    assert!(model.chat(&request()).await.is_err());
    assert_eq!(model.chat(&request()).await.unwrap().content, "ok");
    assert!(model.chat(&request()).await.unwrap().cached);
}

#[tokio::test]
async fn built_models_cache_when_a_dir_is_set() {
    let server = MockServer::start().await;
    mount(&server, ok("built"), None).await;
    let dir = tempfile::tempdir().unwrap();
    let shared: Arc<dyn ChatModel> = config(&server)
        .with_cache_dir(Some(dir.path().to_path_buf()))
        .build()
        .unwrap();
    assert_eq!(shared.chat(&request()).await.unwrap().content, "built");
    assert!(shared.chat(&request()).await.unwrap().cached);
    assert_eq!(received(&server).await.len(), 1);
}

// ---------------------------------------------------------------- configuration

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name: &str| map.get(name).cloned()
}

fn write_config(dir: &Path, text: &str) -> std::path::PathBuf {
    let p = dir.join("config.toml");
    std::fs::write(&p, text).unwrap();
    p
}

const FILE: &str = r#"
[model]
base_url = "http://file.example/v1"
model = "file-model"
api_key_env = "MY_KEY_VAR"
timeout_secs = 30
max_retries = 2
cache = false
[model.headers]
"X-Title" = "ldb"

[profiles.debugger]
model = "debugger-model"
api_key = "profile-key"
fim = true
[profiles.debugger.headers]
"X-Title" = "ldb-debugger"
"#;

#[test]
fn flags_beat_file_beat_env() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_config(dir.path(), FILE);
    let env = env_of(&[
        ("OPENAI_API_KEY", "env-key"),
        ("OPENAI_BASE_URL", "http://env.example/v1"),
        ("LDB_MODEL", "env-model"),
        ("MY_KEY_VAR", "file-key"),
    ]);

    // Environment only.
    let c = ModelConfig::resolve(&ModelFlags::default(), None, &env).unwrap();
    assert_eq!(c.base_url, "http://env.example/v1");
    assert_eq!(c.model, "env-model");
    assert_eq!(c.api_key.as_deref(), Some("env-key"));
    assert_eq!(c.retry.max_retries, 4);
    assert_eq!(c.timeout, Duration::from_secs(120));

    // The file beats the environment.
    let c = ModelConfig::resolve(&ModelFlags::default(), Some(&file), &env).unwrap();
    assert_eq!(c.base_url, "http://file.example/v1");
    assert_eq!(c.model, "file-model");
    assert_eq!(c.api_key.as_deref(), Some("file-key"));
    assert_eq!(c.timeout, Duration::from_secs(30));
    assert_eq!(c.retry.max_retries, 2);
    assert_eq!(c.headers, vec![("X-Title".to_string(), "ldb".to_string())]);
    assert_eq!(c.cache_dir, None);
    assert!(!c.fim, "`fim` is set only in a profile");

    // A profile beats `[model]`, and flags beat everything.
    let flags = ModelFlags {
        profile: Some("debugger".to_string()),
        ..ModelFlags::default()
    };
    let c = ModelConfig::resolve(&flags, Some(&file), &env).unwrap();
    assert_eq!(c.model, "debugger-model");
    assert!(c.fim);
    assert_eq!(c.base_url, "http://file.example/v1");
    assert_eq!(c.api_key.as_deref(), Some("profile-key"));
    assert_eq!(
        c.headers,
        vec![("X-Title".to_string(), "ldb-debugger".to_string())]
    );

    let flags = ModelFlags {
        profile: Some("debugger".to_string()),
        base_url: Some("http://flag.example/v1".to_string()),
        api_key: Some("flag-key".to_string()),
        model: Some("flag-model".to_string()),
        timeout_secs: Some(5),
        max_retries: Some(0),
        no_cache: false,
        cache_dir: Some(dir.path().join("c")),
        context_tokens: None,
        fim: false,
    };
    let c = ModelConfig::resolve(&flags, Some(&file), &env).unwrap();
    assert_eq!(c.base_url, "http://flag.example/v1");
    assert_eq!(c.model, "flag-model");
    assert_eq!(c.api_key.as_deref(), Some("flag-key"));
    assert_eq!(c.timeout, Duration::from_secs(5));
    assert_eq!(c.retry.max_retries, 0);
    assert_eq!(c.cache_dir, Some(dir.path().join("c")));
}

#[test]
fn defaults_point_at_openai() {
    let c = ModelConfig::resolve(&ModelFlags::default(), None, &env_of(&[])).unwrap();
    assert_eq!(c.base_url, "https://api.openai.com/v1");
    assert_eq!(c.model, "gpt-4o-mini");
    assert_eq!(c.api_key, None);
    let c = ModelConfig::resolve(
        &ModelFlags {
            no_cache: true,
            ..ModelFlags::default()
        },
        None,
        &env_of(&[]),
    )
    .unwrap();
    assert_eq!(c.cache_dir, None);
}

#[test]
fn a_custom_endpoint_needs_a_model() {
    let flags = ModelFlags {
        base_url: Some("http://127.0.0.1:8080/v1".to_string()),
        ..ModelFlags::default()
    };
    let err = ModelConfig::resolve(&flags, None, &env_of(&[])).unwrap_err();
    assert!(
        matches!(err, ModelError::Config(ConfigError::NoModel { .. })),
        "{err}"
    );
    assert!(err.to_string().contains("--model"), "{err}");
}

fn config_error(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = write_config(dir.path(), text);
    match ModelConfig::resolve(&ModelFlags::default(), Some(&file), &env_of(&[])) {
        Err(ModelError::Config(e)) => {
            let m = e.to_string();
            assert!(m.contains(&file.display().to_string()), "no file in: {m}");
            m
        }
        other => panic!("expected a config error, got {other:?}"),
    }
}

#[test]
fn bad_config_files_name_the_file_the_key_and_the_fix() {
    let m = config_error("[model]\ntimeout_secs = \"soon\"\n");
    assert!(
        m.contains("model.timeout_secs") && m.contains("timeout_secs = 120"),
        "{m}"
    );

    let m = config_error("[model]\nbase-url = \"http://x/v1\"\n");
    assert!(
        m.contains("model.base-url") && m.contains("base_url"),
        "{m}"
    );

    let m = config_error("[model]\nbase_url = \"not a url\"\n");
    assert!(m.contains("model.base_url"), "{m}");

    let m = config_error("[model]\napi_key_env = \"UNSET_VAR\"\n");
    assert!(m.contains("api_key_env") && m.contains("UNSET_VAR"), "{m}");

    let m = config_error("[model\n");
    assert!(m.contains("not valid TOML"), "{m}");

    let m = config_error("[profiles.gen]\nmodel = 3\n");
    assert!(m.contains("profiles.gen.model"), "{m}");
}

#[test]
fn unknown_profiles_and_missing_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_config(dir.path(), FILE);
    let flags = ModelFlags {
        profile: Some("nope".to_string()),
        ..ModelFlags::default()
    };
    let env = env_of(&[("MY_KEY_VAR", "k")]);
    let err = ModelConfig::resolve(&flags, Some(&file), &env).unwrap_err();
    let m = err.to_string();
    assert!(m.contains("nope") && m.contains("debugger"), "{m}");

    let missing = dir.path().join("missing.toml");
    let err = ModelConfig::resolve(&ModelFlags::default(), Some(&missing), &env).unwrap_err();
    assert!(err.to_string().contains("missing.toml"));
}

#[test]
fn config_errors_do_not_show_keys() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_config(
        dir.path(),
        &format!("[model]\napi_key = \"{KEY}\"\nmax_retries = -1\n"),
    );
    let err = ModelConfig::resolve(&ModelFlags::default(), Some(&file), &env_of(&[])).unwrap_err();
    assert_no_key(&err);
    let c = ModelConfig::new("http://x/v1", "m").with_api_key(KEY);
    assert!(!format!("{c:?}").contains(KEY));
}

#[test]
fn config_file_location() {
    use ldb::generate::model::config::config_path;
    let explicit = Path::new("/x/ldb.toml");
    let env = env_of(&[("LDB_CONFIG", "/y/ldb.toml")]);
    assert_eq!(config_path(Some(explicit), &env).as_deref(), Some(explicit));
    assert_eq!(
        config_path(None, &env).as_deref(),
        Some(Path::new("/y/ldb.toml"))
    );
}

#[test]
fn endpoint_configured_looks_for_a_url_or_key() {
    let none = env_of(&[]);
    let flags = ModelFlags::default();
    assert!(!endpoint_configured(&flags, None, &none).unwrap());
    // A model name alone may name the embedded model.
    let only_model = ModelFlags {
        model: Some("qwen2.5-coder-0.5b".to_string()),
        ..ModelFlags::default()
    };
    assert!(!endpoint_configured(&only_model, None, &none).unwrap());
    assert!(!endpoint_configured(&flags, None, &env_of(&[("LDB_MODEL", "x")])).unwrap());

    assert!(endpoint_configured(&flags, None, &env_of(&[("OPENAI_API_KEY", "k")])).unwrap());
    assert!(
        endpoint_configured(&flags, None, &env_of(&[("OPENAI_BASE_URL", "http://h/v1")])).unwrap()
    );
    let with_url = ModelFlags {
        base_url: Some("http://h/v1".to_string()),
        ..ModelFlags::default()
    };
    assert!(endpoint_configured(&with_url, None, &none).unwrap());

    let dir = tempfile::tempdir().unwrap();
    let file = write_config(dir.path(), FILE);
    assert!(endpoint_configured(&flags, Some(&file), &none).unwrap());
    let empty = write_config(dir.path(), "[model]\nmodel = \"m\"\n");
    assert!(!endpoint_configured(&flags, Some(&empty), &none).unwrap());
}

// ---------------------------------------------------------------- scripted model and meter

#[tokio::test]
async fn scripted_model_plays_back_and_records() {
    let model = ScriptedModel::new(["first", "second"]);
    let r = model.chat(&request()).await.unwrap();
    assert_eq!(r.content, "first");
    // "You are a debugger." (19 chars → 5) + "Why does f fail?" (16 → 4); "first" → 2.
    assert_eq!(
        r.usage,
        Usage {
            prompt_tokens: 9,
            completion_tokens: 2,
            cached_prompt_tokens: 0
        }
    );
    assert_eq!(
        model.chat(&schema_request()).await.unwrap().content,
        "second"
    );
    let err = model.chat(&request()).await.unwrap_err();
    assert!(matches!(err, ModelError::InvalidResponse(ref m) if m == "script exhausted"));
    let seen = model.requests();
    assert_eq!(seen.len(), 3);
    assert!(seen[1].json_schema.is_some());

    model.push("late");
    assert_eq!(model.chat(&request()).await.unwrap().content, "late");
}

#[tokio::test]
async fn scripted_model_from_a_closure() {
    let model =
        ScriptedModel::from_fn(|req: &ChatRequest| Ok(format!("{} messages", req.messages.len())))
            .with_name("echo");
    let r = model.chat(&request()).await.unwrap();
    assert_eq!(r.content, "2 messages");
    assert_eq!(r.model, "echo");
    assert_eq!(model.calls(), 1);
}

#[tokio::test]
async fn meter_adds_up_calls() {
    let dir = tempfile::tempdir().unwrap();
    let meter = UsageMeter::new();
    let inner = CachedModel::new(ScriptedModel::new(["abcd", "efgh"]), dir.path());
    let model: Arc<dyn ChatModel> = Arc::new(MeteredModel::new(inner, meter.clone()));
    model.chat(&request()).await.unwrap();
    model.chat(&request()).await.unwrap(); // cache hit
    let mut other = request();
    other.messages.truncate(1);
    model.chat(&other).await.unwrap();
    let t = meter.totals();
    assert_eq!(t.calls, 3);
    assert_eq!(t.cache_hits, 1);
    assert_eq!(t.failures, 0);
    assert_eq!(t.usage.completion_tokens, 2);
    assert_eq!(t.cached_usage.completion_tokens, 1);
}

/// A server that accepts connections and drops them at once (a reset before any reply).
fn resetting_server() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = accepted.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { break };
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            // Linger 0: closing sends RST instead of FIN.
            drop(reset_on_close(stream));
        }
    });
    (url, accepted)
}

/// Sets SO_LINGER to zero so that dropping the stream resets the connection.
fn reset_on_close(stream: std::net::TcpStream) -> std::net::TcpStream {
    use std::os::fd::AsRawFd;
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: setsockopt on a socket we own, with a correctly sized linger struct.
    unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
    stream
}

#[tokio::test]
async fn connection_resets_are_retried_a_bounded_number_of_times() {
    let (url, accepted) = resetting_server();
    let cfg = ModelConfig::new(url, "m")
        .with_timeout(Duration::from_secs(5))
        .with_retry(fast_retries(2));
    let model = OpenAiModel::new(cfg).expect("client");
    let err = model.chat(&request()).await.unwrap_err();
    assert!(
        matches!(
            err,
            ModelError::Connection { .. } | ModelError::RetriesExhausted { .. }
        ),
        "got {err:?}"
    );
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 3);
}

#[tokio::test]
async fn an_enormous_reply_is_refused_without_retrying() {
    let huge = "x".repeat(40 << 20);
    let (err, n) =
        invalid_reply(ResponseTemplate::new(200).set_body_json(reply(json!(huge)))).await;
    assert!(
        matches!(err, ModelError::InvalidResponse(ref m) if m.contains("MiB")),
        "got {err:?}"
    );
    assert_eq!(n, 1);
}

/// A reply with one choice per text, usage over all of them.
fn reply_n(texts: &[&str]) -> ResponseTemplate {
    let choices: Vec<Value> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            json!({"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"})
        })
        .collect();
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-n", "object": "chat.completion", "created": 1_700_000_000,
        "model": "test-model-2024", "choices": choices,
        "usage": {"prompt_tokens": 40, "completion_tokens": 30, "total_tokens": 70}
    }))
}

fn sampled() -> ChatRequest {
    let mut r = request();
    r.temperature = Some(0.8);
    r.seed = Some(7);
    r
}

#[tokio::test]
async fn samples_of_one_prompt_go_in_one_request_with_n() {
    let server = MockServer::start().await;
    mount(&server, reply_n(&["a", "bb", "ccc"]), None).await;
    let model = client(&server);
    assert!(model.batches());
    let out = model.chat_n(&sampled(), 3).await.unwrap();
    let sent = received(&server).await;
    assert_eq!(sent.len(), 1);
    assert_eq!(body(&sent[0])["n"], 3);
    let texts: Vec<&str> = out.iter().map(|r| r.content.as_str()).collect();
    assert_eq!(texts, ["a", "bb", "ccc"]);
    // The prompt is paid once; the reply tokens are shared out and add up.
    assert_eq!(out[0].usage.prompt_tokens, 40);
    assert!(out[1..].iter().all(|r| r.usage.prompt_tokens == 0));
    assert_eq!(
        out.iter().map(|r| r.usage.completion_tokens).sum::<u64>(),
        30
    );
}

#[tokio::test]
async fn an_endpoint_that_ignores_n_gets_one_request_per_sample() {
    let server = MockServer::start().await;
    mount(&server, ok("one"), None).await;
    let model = client(&server);
    let out = model.chat_n(&sampled(), 3).await.unwrap();
    assert_eq!(out.len(), 3);
    let sent = received(&server).await;
    assert_eq!(sent.len(), 3, "one with n, then two single requests");
    assert_eq!(body(&sent[0])["n"], 3);
    let mut seeds: Vec<i64> = sent[1..]
        .iter()
        .map(|r| body(r)["seed"].as_i64().expect("seed"))
        .collect();
    seeds.dedup();
    assert_eq!(seeds.len(), 2, "each sample its own seed: {seeds:?}");
    assert!(sent[1..].iter().all(|r| body(r).get("n").is_none()));
    // Remembered: the next batch is sent one by one from the start.
    assert!(!model.batches());
    model.chat_n(&sampled(), 2).await.unwrap();
    let sent = received(&server).await;
    assert_eq!(sent.len(), 5);
    assert!(sent[3..].iter().all(|r| body(r).get("n").is_none()));
}

#[tokio::test]
async fn an_endpoint_that_rejects_n_is_asked_again_without_it() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(CHAT))
        .and(wiremock::matchers::body_partial_json(json!({"n": 2})))
        .respond_with(ResponseTemplate::new(400).set_body_json(
            json!({"error": {"message": "Only supports n=1 for this model", "type": "invalid_request_error"}}),
        ))
        .mount(&server)
        .await;
    mount(&server, ok("single"), None).await;
    let model = client(&server);
    let out = model.chat_n(&sampled(), 2).await.unwrap();
    assert_eq!(out.len(), 2);
    assert!(out.iter().all(|r| r.content == "single"));
    assert!(!model.batches());
}

#[tokio::test]
async fn cached_samples_are_replayed_and_the_rest_drawn_in_one_batch() {
    let server = MockServer::start().await;
    mount(&server, reply_n(&["x", "y"]), None).await;
    let dir = tempfile::tempdir().unwrap();
    let model = CachedModel::new(client(&server), dir.path());
    let first = model.chat_n(&sampled(), 2).await.unwrap();
    assert!(first.iter().all(|r| !r.cached));
    assert_eq!(received(&server).await.len(), 1);
    // A rerun from the same directory replays both samples without a request.
    let rerun = CachedModel::new(client(&server), dir.path());
    let again = rerun.chat_n(&sampled(), 2).await.unwrap();
    assert!(again.iter().all(|r| r.cached));
    let texts: Vec<&str> = again.iter().map(|r| r.content.as_str()).collect();
    assert_eq!(texts, ["x", "y"]);
    assert_eq!(received(&server).await.len(), 1);
}

/// Regression: a batch whose first sample was cached drew the rest from that sample's seed as
/// a new batch, so sample 2 was cached with another seed's reply and a warm run got other
/// samples than a cold one. Each missing sample is now drawn with its own seed.
#[tokio::test]
async fn a_partly_cached_batch_draws_the_samples_a_cold_one_would() {
    let echo = || ScriptedModel::from_fn(|req: &ChatRequest| Ok(format!("seed {:?}", req.seed)));
    let cold_dir = tempfile::tempdir().unwrap();
    let cold = CachedModel::new(echo(), cold_dir.path())
        .chat_n(&sampled(), 3)
        .await
        .unwrap();
    let warm_dir = tempfile::tempdir().unwrap();
    let warm = CachedModel::new(echo(), warm_dir.path());
    warm.chat_n(&sampled(), 1).await.unwrap();
    let partly = warm.chat_n(&sampled(), 3).await.unwrap();
    assert!(partly[0].cached && !partly[1].cached && !partly[2].cached);
    let texts = |rs: &[ldb::generate::model::ChatResponse]| {
        rs.iter().map(|r| r.content.clone()).collect::<Vec<_>>()
    };
    assert_eq!(texts(&partly), texts(&cold));
    assert_ne!(partly[1].content, partly[2].content);
}
