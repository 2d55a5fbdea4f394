//! Reading a completion: the typed response when it conforms, else the fields ldb needs from
//! what local servers send (missing `id`, content parts, odd `finish_reason`s).

use async_openai::types::chat::CreateChatCompletionResponse;
use serde_json::Value;

use super::failure::excerpt;
use super::OpenAiModel;
use crate::generate::model::{ModelError, Usage};

/// Why a reply that does not fit the typed response cannot be read either.
#[derive(Debug, thiserror::Error)]
pub(super) enum Unreadable {
    #[error("the endpoint answered with an error: {0}")]
    Error(String),
    #[error("the reply has no `choices` array")]
    NoChoices,
}

impl OpenAiModel {
    /// The first choice's text (required), the texts of the other choices, usage and model.
    pub(super) fn parse_reply(
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
pub(super) struct Reply {
    pub(super) choices: usize,
    pub(super) content: Option<String>,
    /// Text of the choices after the first (requests with `n`).
    pub(super) more: Vec<String>,
    pub(super) refusal: Option<String>,
    pub(super) tool_calls: bool,
    pub(super) finish_reason: Option<String>,
    pub(super) usage: Usage,
    pub(super) model: Option<String>,
}

impl Reply {
    pub(super) fn from_typed(r: CreateChatCompletionResponse) -> Reply {
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
        let finish_reason = first
            .as_ref()
            .and_then(|c| c.finish_reason)
            // The name the API sent (`stop`, `length`, ...), else as Rust writes it.
            .map(|f| match serde_json::to_value(f) {
                Ok(Value::String(name)) => name,
                _ => format!("{f:?}"),
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

    pub(super) fn from_value(v: &Value) -> Result<Reply, Unreadable> {
        if let Some(err) = v.get("error").filter(|_| v.get("choices").is_none()) {
            let msg = err
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| err.to_string());
            return Err(Unreadable::Error(msg));
        }
        let choices = v
            .get("choices")
            .and_then(Value::as_array)
            .ok_or(Unreadable::NoChoices)?;
        let first = choices.first();
        let message = first.and_then(|c| c.get("message"));
        // A chat choice's `message.content`, or a text completion's `text` (`/completions`).
        let text_of = |choice: Option<&Value>| {
            let text = choice.and_then(|c| c.get("text")).and_then(Value::as_str);
            choice
                .and_then(|c| c.get("message"))
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
                .or_else(|| text.map(str::to_string))
        };
        let content = text_of(first);
        let more: Vec<String> = choices
            .iter()
            .skip(1)
            .filter_map(|c| text_of(Some(c)))
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
