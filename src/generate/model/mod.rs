//! Chat models: one async trait, several backends.
//!
//! Everything that talks to an LLM goes through [`ChatModel`]. Backends: an OpenAI-compatible HTTP
//! client ([`openai`]; OpenAI, vLLM, Ollama, llama.cpp server, `ldb serve`), an on-disk response
//! cache that wraps any backend ([`cache`]), and a scripted model for tests ([`scripted`]).
//! Providers that differ only by URL, key or headers are configuration ([`config`]), not types.

pub mod cache;
pub mod config;
pub use config::ConfigError;
pub mod meter;
pub mod openai;
#[doc(hidden)]
pub mod scripted;

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Self {
        Message {
            role: Role::System,
            content: content.into(),
        }
    }
    pub fn user(content: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: content.into(),
        }
    }
    pub fn assistant(content: impl Into<String>) -> Self {
        Message {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// A JSON schema the reply must follow (OpenAI `response_format: json_schema`, or a grammar for
/// local models).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonSchema {
    pub name: String,
    pub schema: serde_json::Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    /// `None` leaves the backend's default; ldb uses 0 (greedy) unless told otherwise.
    pub temperature: Option<f32>,
    pub max_tokens: Option<u32>,
    /// Ask for structured output; backends without support ignore it (callers then parse
    /// leniently and may ask once more).
    pub json_schema: Option<JsonSchema>,
    /// Sampling seed (OpenAI `seed`): requests that differ only here draw different samples,
    /// and the same seed draws the same sample again. `None` leaves it to the backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Stop generating once a fenced code block whose body contains this text is closed: a
    /// program request needs nothing after its code, and every token costs time. Backends that
    /// cannot stop on a condition (HTTP endpoints) ignore it; the reply is read the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_after_code: Option<String>,
    /// The entry point of a program request: stop generating where the model starts testing
    /// it after its code ([`self_test_starts`]), and close the code block there. Those lines
    /// are dropped from the program anyway (`python::self_tests`), so writing them is time
    /// spent for nothing. Backends that cannot stop on a condition ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_at_self_tests: Option<String>,
    /// Text the reply starts with (the opening of a code block and the task's own signature and
    /// docstring): the embedded model continues it, so it writes only what is new, and the
    /// reply it returns includes it. Backends that cannot continue a reply (HTTP endpoints)
    /// ignore it; their models write the whole reply, which is read the same way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_prefix: Option<String>,
    /// A prompt sent as is instead of the messages rendered by the chat template (the
    /// embedded model's fill-in-the-middle). Only for backends whose
    /// [`ChatModel::fills_in_middle`] says so; the messages then only describe the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_prompt: Option<String>,
    /// Stop once the reply has this many line ends (a patch of a few lines needs no more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_lines: Option<u32>,
}

impl ChatRequest {
    pub fn new(messages: Vec<Message>) -> Self {
        ChatRequest {
            messages,
            temperature: Some(0.0),
            max_tokens: None,
            json_schema: None,
            seed: None,
            stop_after_code: None,
            stop_at_self_tests: None,
            reply_prefix: None,
            raw_prompt: None,
            max_lines: None,
        }
    }
}

/// Whether `line`, the line being written after `before` (a reply up to and including its last
/// line end), starts the model's own tests of `entry`: a top-level `assert`, `print(...)`, call
/// of `entry` or `if __name__` guard, written inside a still open code block that defines
/// `entry` and whose code before the line parses (so the line is not inside a string or a
/// bracket). These are the statements `python::self_tests` drops from a program; a program
/// that goes on after them with more definitions is rare, and would lose them.
pub fn self_test_starts(before: &str, line: &str, entry: &str) -> bool {
    if !line_starts_test(line, entry) {
        return false;
    }
    let Some(body) = fenced_bodies(before, |_| false) else {
        return false;
    };
    body.contains(&format!("def {entry}("))
        && crate::python::source::parse_module(&crate::python::source::SourceFile::new(&body))
            .is_ok()
}

/// Whether `line` starts like a test of `entry` at the top level (the cheap half of
/// [`self_test_starts`], checked first at every token).
fn line_starts_test(line: &str, entry: &str) -> bool {
    let calls_entry = line
        .strip_prefix(entry)
        .is_some_and(|rest| rest.starts_with('('));
    ["assert ", "assert(", "print(", "if __name__"]
        .iter()
        .any(|t| line.starts_with(t))
        || (!entry.is_empty() && calls_entry)
}

/// Where a reply being written ends when its last `new` bytes started the model's own tests
/// of `entry` ([`self_test_starts`]) on some line they touch: the length to keep, before that
/// line and the comments right above it ([`self_test_cut`]), never inside the first `keep`
/// bytes (a prefilled reply's prefix is the task's text, not the model's).
pub fn self_test_reply_end(reply: &[u8], new: usize, keep: usize, entry: &str) -> Option<usize> {
    let from = reply.len().saturating_sub(new);
    // The line the new bytes start in, then every line they start.
    let mut start = reply[..from]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    loop {
        let end = reply[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(reply.len(), |i| start + i);
        if start >= keep && start > 0 {
            let line = String::from_utf8_lossy(&reply[start..end]);
            // The whole reply is read only for a line that starts like a test.
            if line_starts_test(&line, entry) {
                let before = String::from_utf8_lossy(&reply[..start]);
                if self_test_starts(&before, &line, entry) {
                    // Offsets of the text are the bytes' only when they are valid UTF-8.
                    return Some(match before {
                        std::borrow::Cow::Borrowed(text) => self_test_cut(text, keep),
                        std::borrow::Cow::Owned(_) => start,
                    });
                }
            }
        }
        if end >= reply.len() {
            return None;
        }
        start = end + 1;
    }
}

/// Where to cut a reply whose model started its own tests right after `before` (which ends
/// with a line end): before the comment lines at the left margin that end it ("# Test cases"),
/// as `python::self_tests` drops them with the tests, but not into the first `keep` bytes.
pub fn self_test_cut(before: &str, keep: usize) -> usize {
    let mut end = before.len();
    while end > keep {
        // Bytes, not text: `before` may not end with a line end, and a cut inside a character
        // would panic.
        let start = before.as_bytes()[..end - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        if start < keep || !before[start..end].starts_with('#') {
            break;
        }
        end = start;
    }
    end
}

/// Walk the fenced code blocks of `text` (```` ``` ```` lines): `closed` sees each closed
/// block's body and ends the walk by returning true; the result is the body of the block
/// `text` ends inside, if it ends inside one (and the walk was not ended).
fn fenced_bodies(text: &str, mut closed: impl FnMut(&str) -> bool) -> Option<String> {
    let mut body: Option<String> = None;
    for line in text.split('\n') {
        let fence = line.trim_start().starts_with("```");
        match &mut body {
            None if fence => body = Some(String::new()),
            None => {}
            Some(b) if fence && line.trim() == "```" => {
                if closed(b) {
                    return None;
                }
                body = None;
            }
            Some(b) => {
                b.push_str(line);
                b.push('\n');
            }
        }
    }
    body
}

/// Whether `text` holds a closed fenced code block (```` ``` ```` lines) whose body contains
/// `needle`.
pub fn has_closed_code_block(text: &str, needle: &str) -> bool {
    let mut found = false;
    fenced_bodies(text, |body| {
        found = body.contains(needle);
        found
    });
    found
}

/// Token counts of one call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Prompt tokens the backend did not have to evaluate: KV cache of a shared prefix (the
    /// embedded model), or `prompt_tokens_details.cached_tokens` of an OpenAI-style reply.
    #[serde(default)]
    pub cached_prompt_tokens: u64,
}

impl Usage {
    pub fn total(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }

    /// Tokens the backend actually processed: prompt tokens not served from a cache, plus the
    /// reply. This is the unit of ldb's token budgets: K samples of one prompt cost the prompt
    /// once when the backend keeps its prefix.
    pub fn cost(&self) -> u64 {
        self.prompt_tokens.saturating_sub(self.cached_prompt_tokens) + self.completion_tokens
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, rhs: Usage) {
        self.prompt_tokens += rhs.prompt_tokens;
        self.completion_tokens += rhs.completion_tokens;
        self.cached_prompt_tokens += rhs.cached_prompt_tokens;
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    pub content: String,
    pub usage: Usage,
    /// Wall time of the call, retries included (zero for a cache hit).
    #[serde(with = "duration_ms")]
    pub latency: Duration,
    /// The model that answered, as the backend names it.
    pub model: String,
    /// Served from the on-disk cache.
    #[serde(default)]
    pub cached: bool,
    /// Attempts made (1 = no retry).
    #[serde(default = "one")]
    pub attempts: u32,
}

fn one() -> u32 {
    1
}

mod duration_ms {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(d.as_millis().min(u64::MAX as u128) as u64)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_millis(u64::deserialize(d)?))
    }
}

/// Why a model call failed. Retryable failures have already been retried when they reach the
/// caller; the variant says which kind gave up.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("the model endpoint rejected the credentials ({status}): {message}")]
    Auth { status: u16, message: String },
    #[error("model `{model}` was not found at {endpoint}: {message}")]
    ModelNotFound {
        model: String,
        endpoint: String,
        message: String,
    },
    #[error("the model endpoint rejected the request ({status}): {message}")]
    BadRequest { status: u16, message: String },
    #[error("gave up after {attempts} attempts: {last}")]
    RetriesExhausted { attempts: u32, last: String },
    #[error("the model endpoint sent a reply ldb cannot read: {0}")]
    InvalidResponse(String),
    #[error("cannot reach the model endpoint {endpoint}: {message}")]
    Connection { endpoint: String, message: String },
    #[error("model configuration: {0}")]
    Config(#[from] ConfigError),
    #[error("local model: {0}")]
    Local(String),
    /// Refused before it was sent: no model could take a prompt this long.
    #[error(
        "the request's messages are {bytes} bytes, more than the {limit} bytes {context} can take; nothing was sent"
    )]
    PromptTooLarge {
        bytes: usize,
        limit: usize,
        /// What the limit comes from, e.g. "a context of 8192 tokens".
        context: String,
    },
}

impl ModelError {
    /// A hint for the user, where there is something to do.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            ModelError::Auth { .. } => {
                Some("set OPENAI_API_KEY (or --api-key / api_key in the config file)")
            }
            ModelError::ModelNotFound { .. } => {
                Some("check --model against the models the endpoint serves (GET /v1/models)")
            }
            ModelError::Connection { .. } => {
                Some("check --base-url / OPENAI_BASE_URL and that the server is running")
            }
            ModelError::RetriesExhausted { .. } => {
                Some("the endpoint kept failing; try again later or raise --retries")
            }
            ModelError::PromptTooLarge { .. } => Some(
                "shorten the task's text (prompt, seed, tests), or give the model's real context \
                 with --context-tokens (context_tokens in the config file)",
            ),
            _ => None,
        }
    }
}

/// A chat model. Implementations must be safe to call from many tasks at once.
#[async_trait::async_trait]
pub trait ChatModel: Send + Sync {
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError>;

    /// `n` samples of one request, in order. Sample i uses [`nth_seed`] of the request's seed,
    /// so a rerun draws the same samples. The default sends the requests at once; a backend
    /// that samples several continuations of one prompt in one call (OpenAI's `n`) overrides
    /// it. The prompt's usage is reported once, with the first sample.
    async fn chat_n(
        &self,
        request: &ChatRequest,
        n: usize,
    ) -> Result<Vec<ChatResponse>, ModelError> {
        let requests: Vec<ChatRequest> = (0..n)
            .map(|i| {
                let mut r = request.clone();
                r.seed = nth_seed(request.seed, i);
                r
            })
            .collect();
        futures_util::future::join_all(requests.iter().map(|r| self.chat(r)))
            .await
            .into_iter()
            .collect()
    }

    /// Whether [`Self::chat_n`] draws several samples in one call, so that asking for them
    /// together is faster than one by one. Callers that can use a sample's result before
    /// drawing the next (a search that stops at the first pass) ask one at a time otherwise.
    fn batches(&self) -> bool {
        false
    }

    /// Whether the backend takes a [`ChatRequest::raw_prompt`]: a prompt sent as is, without
    /// the chat template (fill-in-the-middle with the model's own tokens).
    fn fills_in_middle(&self) -> bool {
        false
    }

    /// The model's context length in tokens, when known (the embedded model's, or
    /// `--context-tokens` for an endpoint). See [`prompt_limit`].
    fn context_tokens(&self) -> Option<usize> {
        None
    }

    /// The most tokens a reply takes when the request sets no `max_tokens`, when the backend
    /// has such a limit of its own (the embedded model). A reply that long was cut there.
    fn reply_limit(&self) -> Option<u32> {
        None
    }

    /// A short name for reports and progress lines, e.g. `gpt-4o-mini@api.openai.com`.
    fn name(&self) -> String;
}

/// Bytes one token stands for at most, for refusing what cannot fit: code and prose average
/// three to four bytes a token, so a text over eight bytes a token is surely too long.
pub const MAX_BYTES_PER_TOKEN: usize = 8;
/// The prompt limit where a model's context is not known: far beyond any model's context
/// (a million tokens of code is about 4 MiB), so it only stops what no model can read.
pub const DEFAULT_PROMPT_BYTES: usize = 8 << 20;

/// The most bytes of prompt text `context_tokens` can take, and what the limit comes from.
pub fn prompt_limit(context_tokens: Option<usize>) -> (usize, String) {
    match context_tokens {
        Some(tokens) => (
            tokens.saturating_mul(MAX_BYTES_PER_TOKEN),
            format!("a context of {tokens} tokens"),
        ),
        None => (
            DEFAULT_PROMPT_BYTES,
            "any model (no context length is configured)".to_string(),
        ),
    }
}

/// Refuses `request` when its messages cannot fit a context of `context_tokens`.
pub fn check_prompt_size(
    request: &ChatRequest,
    context_tokens: Option<usize>,
) -> Result<(), ModelError> {
    let bytes: usize = match &request.raw_prompt {
        Some(raw) => raw.len(),
        None => request.messages.iter().map(|m| m.content.len()).sum(),
    };
    let (limit, context) = prompt_limit(context_tokens);
    if bytes > limit {
        return Err(ModelError::PromptTooLarge {
            bytes,
            limit,
            context,
        });
    }
    Ok(())
}

/// The seed of sample `i` of a request seeded with `seed`: the seed itself for the first, a
/// splitmix64 step away for the others (`None` stays `None`: the backend chooses).
/// `n` samples of `request` drawn one call after the other, sample `i` with [`nth_seed`]: what
/// a backend that does not batch falls back to in its own [`ChatModel::chat_n`].
pub async fn samples_one_by_one<M: ChatModel + ?Sized>(
    model: &M,
    request: &ChatRequest,
    n: usize,
) -> Result<Vec<ChatResponse>, ModelError> {
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let mut r = request.clone();
        r.seed = nth_seed(request.seed, i);
        out.push(model.chat(&r).await?);
    }
    Ok(out)
}

pub fn nth_seed(seed: Option<u64>, i: usize) -> Option<u64> {
    let seed = seed?;
    if i == 0 {
        return Some(seed);
    }
    let mut x = seed.wrapping_add((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    Some(x ^ (x >> 31))
}

/// A model shared between tasks (the generator and the debugger may be the same one).
pub type SharedModel = Arc<dyn ChatModel>;

// Wrappers (cache, meter) take any `M: ChatModel`; these let them wrap shared or boxed models.
#[async_trait::async_trait]
impl<T: ChatModel + ?Sized> ChatModel for Arc<T> {
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        (**self).chat(request).await
    }
    async fn chat_n(
        &self,
        request: &ChatRequest,
        n: usize,
    ) -> Result<Vec<ChatResponse>, ModelError> {
        (**self).chat_n(request, n).await
    }
    fn batches(&self) -> bool {
        (**self).batches()
    }
    fn fills_in_middle(&self) -> bool {
        (**self).fills_in_middle()
    }
    fn context_tokens(&self) -> Option<usize> {
        (**self).context_tokens()
    }
    fn reply_limit(&self) -> Option<u32> {
        (**self).reply_limit()
    }
    fn name(&self) -> String {
        (**self).name()
    }
}

#[async_trait::async_trait]
impl<T: ChatModel + ?Sized> ChatModel for Box<T> {
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        (**self).chat(request).await
    }
    async fn chat_n(
        &self,
        request: &ChatRequest,
        n: usize,
    ) -> Result<Vec<ChatResponse>, ModelError> {
        (**self).chat_n(request, n).await
    }
    fn batches(&self) -> bool {
        (**self).batches()
    }
    fn fills_in_middle(&self) -> bool {
        (**self).fills_in_middle()
    }
    fn context_tokens(&self) -> Option<usize> {
        (**self).context_tokens()
    }
    fn reply_limit(&self) -> Option<u32> {
        (**self).reply_limit()
    }
    fn name(&self) -> String {
        (**self).name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_block_with_the_needle_is_found() {
        let open = "Here:\n```python\ndef f(x):\n    return x\n";
        assert!(!has_closed_code_block(open, "def f("));
        assert!(has_closed_code_block(&format!("{open}```"), "def f("));
        assert!(has_closed_code_block(
            &format!("{open}```\nMore text"),
            "def f("
        ));
        assert!(!has_closed_code_block(&format!("{open}```"), "def g("));
        // A first block without the needle does not stop a later one from counting.
        let two = "```\nf(1)\n```\n```python\ndef f(x): pass\n```\n";
        assert!(has_closed_code_block(two, "def f("));
        assert!(!has_closed_code_block("```python\n", ""));
        assert!(has_closed_code_block("```python\n```", ""));
    }

    #[test]
    fn the_models_own_tests_are_seen_where_they_start() {
        let code =
            "Sure.\n```python\nimport math\n\ndef f(x):\n    return math.sqrt(x)\n\n# Test cases\n";
        for line in [
            "assert f(4) == 2",
            "assert(f(4) == 2)",
            "print(f(4))",
            "f(4)",
            "if __name__ == '__main__':",
        ] {
            assert!(self_test_starts(code, line, "f"), "{line}");
        }
        // Code the program may need: helpers, constants, a call of another function.
        for line in [
            "def g(x):",
            "X = f(4)",
            "f_table = {}",
            "fx(1)",
            "assertion = 1",
            "    assert x",
        ] {
            assert!(!self_test_starts(code, line, "f"), "{line}");
        }
    }

    #[test]
    fn no_self_test_outside_a_program_that_defines_the_entry() {
        let line = "assert f(4) == 2";
        // Before the code block, after it was closed, and in a block without the function.
        assert!(!self_test_starts("Let me think.\n", line, "f"));
        assert!(!self_test_starts(
            "```python\ndef f(x):\n    return x\n```\n",
            line,
            "f"
        ));
        assert!(!self_test_starts(
            "```python\ndef g(x):\n    return x\n",
            line,
            "f"
        ));
        // Inside a string or a bracket the code before the line does not parse.
        assert!(!self_test_starts(
            "```python\ndef f(x):\n    return x\nDOC = \"\"\"\n",
            line,
            "f"
        ));
        assert!(!self_test_starts(
            "```python\ndef f(x):\n    return x\nT = [\n",
            line,
            "f"
        ));
        assert!(self_test_starts(
            "```python\ndef f(x):\n    return x\n",
            line,
            "f"
        ));
    }

    #[test]
    fn the_comments_above_the_tests_go_with_them() {
        let before = "```python\ndef f(x):\n    # keep\n    return x\n\n# Test cases\n# more\n";
        let cut = self_test_cut(before, 0);
        assert_eq!(
            &before[..cut],
            "```python\ndef f(x):\n    # keep\n    return x\n\n"
        );
        // Not into the part that must stay (a reply's prefix).
        assert_eq!(self_test_cut(before, before.len() - 3), before.len());
        assert_eq!(self_test_cut("# a\n", 0), 0);
        // Not ending with a line end, and with characters of several bytes: no panic.
        assert_eq!(self_test_cut("# é", 0), 0);
        assert_eq!(self_test_cut("x = 'é'\n# é", 0), "x = 'é'\n".len());
    }

    #[test]
    fn a_reply_ends_before_the_tests_its_last_token_started() {
        let head = "```python\ndef f(x):\n    return x\n\n# Tests\n";
        let ends = |reply: &str, new: usize, keep: usize| {
            self_test_reply_end(reply.as_bytes(), new, keep, "f")
        };
        let cut = Some(head.find("# Tests").unwrap());
        // Token by token: the trigger is complete with its last token.
        assert_eq!(ends(&format!("{head}assert"), 6, 0), None);
        assert_eq!(ends(&format!("{head}assert f"), 2, 0), cut);
        // One token that holds a whole test line and its line end.
        assert_eq!(ends(&format!("{head}print(f(1))\n"), 13, 0), cut);
        // A line that began in the prefix is the task's.
        let reply = format!("{head}assert f");
        assert_eq!(ends(&reply, 2, reply.len() - 1), None);
        // Nothing to cut in a body.
        assert_eq!(ends("```python\ndef f(x):\n    assert x\n", 5, 0), None);
    }
}
