//! `ldb serve` validates like the servers users know: a field of the wrong type or out of range
//! is a 400 naming it, a body announced over the limit is a 413 before it is read, and each
//! request logs one line. The served model is a fake OpenAI endpoint (the real model behind
//! `ldb serve` is exercised by `e2e_local.rs`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

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
    let dir = std::env::temp_dir();
    let config = dir.join(format!("ldb-serve-test-{}.toml", std::process::id()));
    std::fs::write(&config, "").expect("config");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ldb"))
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
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("LDB_CONFIG")
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
    let reply = reqwest::Client::new()
        .post(format!("{base}/chat/completions"))
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
