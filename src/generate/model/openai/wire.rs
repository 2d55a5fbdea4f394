//! The request body in the shape the endpoint accepts: what it is known to support (structured
//! output, `max_tokens` or `max_completion_tokens`, `temperature`, `n`), and how a 400 that
//! names one of them changes the shape for the retry.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use async_openai::types::chat::{
    ChatCompletionRequestAssistantMessage, ChatCompletionRequestMessage,
    ChatCompletionRequestSystemMessage, ChatCompletionRequestUserMessage,
    CreateChatCompletionRequest, ResponseFormat, ResponseFormatJsonSchema,
};

use super::{OpenAiModel, SCHEMA_NO};
use crate::generate::model::{ChatRequest, Role};

/// What this endpoint turned out not to accept; learned from 400 replies, kept per client.
#[derive(Default)]
pub(super) struct Compat {
    pub(super) json_schema: AtomicU8,
    pub(super) max_completion_tokens: AtomicBool,
    pub(super) no_temperature: AtomicBool,
    pub(super) no_seed: AtomicBool,
    /// The endpoint ignores or rejects `n` (several samples per request).
    pub(super) no_n: AtomicBool,
}

/// The request shape of one attempt.
#[derive(Debug, Clone, Copy)]
pub(super) struct Shape {
    pub(super) schema: bool,
    pub(super) max_completion_tokens: bool,
    pub(super) temperature: bool,
    pub(super) seed: bool,
}

impl OpenAiModel {
    pub(super) fn initial_shape(&self, request: &ChatRequest) -> Shape {
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
    pub(super) fn wire_request(
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

    /// A raw prompt for `/completions` (fill-in-the-middle): the text goes as it is, with the
    /// sampling fields the chat request would carry.
    pub(super) fn fim_request(
        &self,
        request: &ChatRequest,
        prompt: &str,
        shape: Shape,
        n: u8,
    ) -> serde_json::Value {
        let mut body = serde_json::json!({
            "model": self.config.model,
            "prompt": prompt,
        });
        let mut set = |key: &str, value: serde_json::Value| {
            if let Some(map) = body.as_object_mut() {
                map.insert(key.to_string(), value);
            }
        };
        if let Some(max) = request.max_tokens {
            set("max_tokens", max.into());
        }
        if let Some(t) = request.temperature.filter(|_| shape.temperature) {
            set("temperature", f64::from(t).into());
        }
        if let Some(seed) = request.seed.filter(|_| shape.seed) {
            set("seed", ((seed & i64::MAX as u64) as i64).into());
        }
        if n > 1 {
            set("n", n.into());
        }
        body
    }

    /// If a 400 says the request used something this endpoint lacks, change `shape` so the next
    /// attempt leaves it out, and remember. Returns whether anything changed.
    pub(super) fn adapt(&self, request: &ChatRequest, shape: &mut Shape, message: &str) -> bool {
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
}

/// Whether an endpoint's complaint is about the `n` parameter.
pub(super) fn mentions_n(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("'n'")
        || m.contains("\"n\"")
        || m.contains("`n`")
        || m.contains("n must")
        || m.contains("only supports n=1")
        || m.contains("n > 1")
        || m.contains("n>1")
}
