//! `ldb serve` validates like the servers users know: a field of the wrong type or out of range
//! is a 400 naming it, a body announced over the limit is a 413 before it is read, and each
//! request logs one line. `n` samples come back as asked; a client slow with its headers is cut
//! off and one slow with its body gets a 408; a client that half-closes still gets its reply. The served model is a fake OpenAI endpoint (the real model behind
//! `ldb serve` is exercised by `e2e_local.rs`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::Duration;

use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common;

struct Served {
    child: Child,
    base: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn fake_endpoint() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "fake-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}
        })))
        .mount(&server)
        .await;
    server
}

fn start(upstream: &MockServer) -> Served {
    start_with(upstream, &[])
}

fn start_with(upstream: &MockServer, extra: &[&str]) -> Served {
    let dir = std::env::temp_dir();
    let config = dir.join(format!("ldb-serve-test-{}.toml", std::process::id()));
    std::fs::write(&config, "").expect("config");
    let mut child = common::ldb()
        .args([
            "serve",
            "--port",
            "0",
            "--no-cache",
            "--model",
            "fake-model",
        ])
        .arg("--base-url")
        .arg(format!("{}/v1", upstream.uri()))
        .arg("--config")
        .arg(&config)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ldb serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("base URL");
    Served {
        child,
        base: line.trim().to_string(),
    }
}

async fn post(base: &str, body: serde_json::Value) -> (u16, serde_json::Value) {
    post_to(base, "chat/completions", body).await
}

async fn post_to(base: &str, path: &str, body: serde_json::Value) -> (u16, serde_json::Value) {
    let reply = reqwest::Client::new()
        .post(format!("{base}/{path}"))
        .json(&body)
        .send()
        .await
        .expect("request");
    let status = reply.status().as_u16();
    (status, reply.json().await.unwrap_or_default())
}

fn message(reply: &serde_json::Value) -> String {
    reply["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn invalid_fields_are_refused_by_name_and_big_bodies_at_once() {
    let upstream = fake_endpoint().await;
    let served = start(&upstream);
    let base = served.base.clone();
    {
        let hi = serde_json::json!([{"role": "user", "content": "hi"}]);
        let (status, reply) =
            post(&base, serde_json::json!({"messages": hi, "max_tokens": 4})).await;
        assert_eq!(status, 200, "{reply}");
        assert_eq!(reply["choices"][0]["message"]["content"], "hello");

        for (body, field) in [
            (
                serde_json::json!({"messages": hi, "max_tokens": -5}),
                "max_tokens",
            ),
            (
                serde_json::json!({"messages": hi, "max_completion_tokens": 0}),
                "max_completion_tokens",
            ),
            (
                serde_json::json!({"messages": hi, "temperature": "hot"}),
                "temperature",
            ),
            (
                serde_json::json!({"messages": hi, "temperature": 3.5}),
                "temperature",
            ),
            (serde_json::json!({"messages": hi, "top_p": 0}), "top_p"),
            (
                serde_json::json!({"messages": hi, "stream": "yes"}),
                "stream",
            ),
            (serde_json::json!({"messages": hi, "seed": 1.5}), "seed"),
            (serde_json::json!({"messages": "hi"}), "messages"),
            (
                serde_json::json!({"messages": [{"role": "robot", "content": "hi"}]}),
                "messages[0].role",
            ),
            (
                serde_json::json!({"messages": hi, "response_format": {"type": "xml"}}),
                "response_format.type",
            ),
        ] {
            let (status, reply) = post(&base, body.clone()).await;
            assert_eq!(status, 400, "{body}: {reply}");
            assert!(
                message(&reply).contains(&format!("`{field}`")),
                "{body}: {reply}"
            );
        }
    }
    // A Content-Length of 10^12 is refused from the header, without waiting for the body.
    let outcome = tokio::task::spawn_blocking(move || {
        let addr = base
            .trim_start_matches("http://")
            .trim_end_matches("/v1")
            .to_string();
        let mut socket = TcpStream::connect(&addr).expect("connect");
        socket
            .set_read_timeout(Some(Duration::from_secs(20)))
            .expect("timeout");
        write!(
            socket,
            "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 1000000000000\r\n\r\n{{"
        )
        .expect("send");
        let mut head = [0u8; 12];
        socket.read_exact(&mut head).expect("an answer before the body");
        assert_eq!(&head, b"HTTP/1.1 413", "{}", String::from_utf8_lossy(&head));
    })
    .await;
    let mut served = served;
    let _ = served.child.kill();
    let mut stderr = String::new();
    served
        .child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr");
    outcome.expect("checks");
    // One line per request: method, path, status, tokens for completions, time.
    assert!(
        stderr.contains("POST /v1/chat/completions 200 7+2 tokens"),
        "{stderr}"
    );
    assert!(stderr.contains("POST /v1/chat/completions 400"), "{stderr}");
    assert!(stderr.contains("POST /v1/chat/completions 413"), "{stderr}");
}

/// `host:port` of a served base URL.
fn address(base: &str) -> String {
    base.trim_start_matches("http://")
        .trim_end_matches("/v1")
        .to_string()
}

/// A chat request as raw HTTP/1.1.
fn raw_chat(addr: &str) -> String {
    let body = r#"{"messages": [{"role": "user", "content": "hi"}]}"#;
    format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Everything the server sends until it closes the connection (or `limit` passes).
fn read_all(socket: &mut TcpStream, limit: Duration) -> (String, Duration) {
    let started = std::time::Instant::now();
    socket.set_read_timeout(Some(limit)).expect("timeout");
    let mut got = Vec::new();
    let _ = socket.read_to_end(&mut got);
    (
        String::from_utf8_lossy(&got).into_owned(),
        started.elapsed(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_half_closed_client_gets_its_reply() {
    let upstream = fake_endpoint().await;
    let served = start(&upstream);
    let addr = address(&served.base);
    let reply = tokio::task::spawn_blocking(move || {
        let mut socket = TcpStream::connect(&addr).expect("connect");
        socket.write_all(raw_chat(&addr).as_bytes()).expect("send");
        // Done sending: the write side closes, the read side stays open for the reply.
        socket
            .shutdown(std::net::Shutdown::Write)
            .expect("half-close");
        read_all(&mut socket, Duration::from_secs(20)).0
    })
    .await
    .expect("client");
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply:?}");
    assert!(reply.contains("hello"), "{reply}");
}

#[tokio::test(flavor = "multi_thread")]
async fn slow_headers_are_cut_off_and_a_slow_body_gets_408() {
    let upstream = fake_endpoint().await;
    let served = start_with(&upstream, &["--header-timeout", "1", "--body-timeout", "1"]);
    let addr = address(&served.base);
    let (headers, body) = tokio::task::spawn_blocking(move || {
        // Half the headers, then nothing.
        let mut socket = TcpStream::connect(&addr).expect("connect");
        write!(socket, "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\n").expect("send");
        let headers = read_all(&mut socket, Duration::from_secs(20));
        // All the headers, a tenth of the body, then nothing.
        let mut socket = TcpStream::connect(&addr).expect("connect");
        write!(
            socket,
            "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"messages\""
        )
        .expect("send");
        let body = read_all(&mut socket, Duration::from_secs(20));
        (headers, body)
    })
    .await
    .expect("clients");
    // The connection was closed well before the client's own 20 s.
    assert!(headers.1 < Duration::from_secs(10), "{headers:?}");
    assert!(!headers.0.contains(" 200 "), "{headers:?}");
    assert!(body.1 < Duration::from_secs(10), "{body:?}");
    assert!(body.0.starts_with("HTTP/1.1 408"), "{body:?}");
    // A prompt client is still served.
    let hi = serde_json::json!([{"role": "user", "content": "hi"}]);
    let (status, _) = post(&served.base, serde_json::json!({"messages": hi})).await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn n_samples_come_back_as_asked_or_are_refused_by_name() {
    let upstream = fake_endpoint().await;
    let served = start(&upstream);
    let hi = serde_json::json!([{"role": "user", "content": "hi"}]);
    let (status, reply) = post(&served.base, serde_json::json!({"messages": hi, "n": 3})).await;
    assert_eq!(status, 200, "{reply}");
    let choices = reply["choices"].as_array().expect("choices");
    assert_eq!(choices.len(), 3, "{reply}");
    for (i, choice) in choices.iter().enumerate() {
        assert_eq!(choice["index"], i, "{reply}");
        assert_eq!(choice["message"]["content"], "hello", "{reply}");
    }
    // Streamed, each sample has its own index.
    let text = reqwest::Client::new()
        .post(format!("{}/chat/completions", served.base))
        .json(&serde_json::json!({"messages": hi, "n": 2, "stream": true}))
        .send()
        .await
        .expect("request")
        .text()
        .await
        .expect("stream");
    assert!(
        text.contains("\"index\":0") && text.contains("\"index\":1"),
        "{text}"
    );
    for n in [0, 17] {
        let (status, reply) = post(&served.base, serde_json::json!({"messages": hi, "n": n})).await;
        assert_eq!(status, 400, "n = {n}: {reply}");
        assert!(message(&reply).contains("`n`"), "{reply}");
    }
}

async fn post_completion(base: &str, body: serde_json::Value) -> (u16, serde_json::Value) {
    post_to(base, "completions", body).await
}

/// `/v1/completions` with `prompt` and `suffix` becomes one fill-in-the-middle prompt, sent on
/// to a `--fim` endpoint's `/completions` as it is; its text comes back as the choice's `text`.
/// A model not said to take raw prompts is refused by name, and nothing goes upstream.
#[tokio::test(flavor = "multi_thread")]
async fn a_completion_with_a_suffix_is_a_fill_in_the_middle_prompt_sent_on_as_it_is() {
    let upstream = fake_endpoint().await;
    Mock::given(method("POST"))
        .and(path("/v1/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "id": "cmpl-test", "object": "text_completion", "created": 0, "model": "fake-model",
            "choices": [{"index": 0, "text": "return a + b", "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 4, "total_tokens": 15}
        })))
        .mount(&upstream)
        .await;

    let chat_only = start(&upstream);
    let (status, reply) = post_completion(
        &chat_only.base,
        serde_json::json!({"model": "fake-model", "prompt": "def add(a, b):\n    "}),
    )
    .await;
    assert_eq!(status, 400, "{reply}");
    assert!(message(&reply).contains("/v1/chat/completions"), "{reply}");
    let sent = upstream.received_requests().await.expect("recorded");
    assert!(sent.is_empty(), "a refused request went upstream");

    let served = start_with(&upstream, &["--fim"]);
    let (status, reply) = post_completion(
        &served.base,
        serde_json::json!({
            "model": "fake-model",
            "prompt": "def add(a, b):\n    ",
            "suffix": "\n\nprint(add(1, 2))\n",
            "max_tokens": 16,
            "seed": 7,
        }),
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["object"], "text_completion");
    assert_eq!(reply["choices"][0]["text"], "return a + b");
    assert_eq!(reply["usage"]["completion_tokens"], 4);

    let sent = upstream.received_requests().await.expect("recorded");
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].url.path(), "/v1/completions");
    let body: serde_json::Value = serde_json::from_slice(&sent[0].body).expect("JSON");
    assert_eq!(
        body["prompt"],
        "<|fim_prefix|>def add(a, b):\n    <|fim_suffix|>\n\nprint(add(1, 2))\n<|fim_middle|>"
    );
    assert_eq!(body["max_tokens"], 16);
    assert_eq!(body["seed"], 7);
    assert!(body.get("messages").is_none(), "{body}");

    for (bad, field) in [
        (serde_json::json!({"model": "m"}), "`prompt`"),
        (serde_json::json!({"model": "m", "prompt": 3}), "`prompt`"),
        (
            serde_json::json!({"model": "m", "prompt": "x", "stream": true}),
            "`stream`",
        ),
        (
            serde_json::json!({"model": "m", "prompt": "x", "max_tokens": 0}),
            "`max_tokens`",
        ),
    ] {
        let (status, reply) = post_completion(&served.base, bad.clone()).await;
        assert_eq!(status, 400, "{bad}: {reply}");
        assert!(message(&reply).contains(field), "{bad}: {reply}");
    }
}
