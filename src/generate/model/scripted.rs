//! A scripted model for tests: replies come from a queue or a closure, every request is kept.
//!
//! Usage is made up but deterministic (about four characters per token), latency is zero, so
//! tests that check token accounting or reports stay stable. Like a backend with a prefix
//! cache, the messages a request shares with the one before count as cached.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use super::{ChatModel, ChatRequest, ChatResponse, ModelError, Usage};

type Responder = Box<dyn Fn(&ChatRequest) -> Result<String, ModelError> + Send + Sync>;

enum Script {
    Queue(VecDeque<Result<String, ModelError>>),
    Func(Responder),
}

/// A [`ChatModel`] that plays back a script.
pub struct ScriptedModel {
    name: String,
    script: Mutex<Script>,
    requests: Mutex<Vec<ChatRequest>>,
    /// Claim to batch samples ([`ChatModel::batches`]), and count the batches asked for.
    batches: bool,
    batch_sizes: Mutex<Vec<usize>>,
    /// Claim to take raw fill-in-the-middle prompts ([`ChatModel::fills_in_middle`]).
    fim: bool,
    /// Claim a reply limit of its own ([`ChatModel::reply_limit`]).
    reply_limit: Option<u32>,
}

impl ScriptedModel {
    /// Reply with `replies` in order; once they run out, calls fail with
    /// `ModelError::InvalidResponse("script exhausted")`.
    pub fn new<I, S>(replies: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::with_results(replies.into_iter().map(|r| Ok(r.into())))
    }

    /// Like [`ScriptedModel::new`], with errors in the script too.
    pub fn with_results(results: impl IntoIterator<Item = Result<String, ModelError>>) -> Self {
        Self::with_script(Script::Queue(results.into_iter().collect()))
    }

    /// Compute each reply from the request.
    pub fn from_fn(
        f: impl Fn(&ChatRequest) -> Result<String, ModelError> + Send + Sync + 'static,
    ) -> Self {
        Self::with_script(Script::Func(Box::new(f)))
    }

    fn with_script(script: Script) -> Self {
        ScriptedModel {
            name: "scripted".to_string(),
            script: Mutex::new(script),
            requests: Mutex::new(Vec::new()),
            batches: false,
            batch_sizes: Mutex::new(Vec::new()),
            fim: false,
            reply_limit: None,
        }
    }

    /// Behave like a backend that samples several continuations in one call.
    pub fn batching(mut self) -> Self {
        self.batches = true;
        self
    }

    /// Claim to take raw fill-in-the-middle prompts, as the embedded model does.
    pub fn filling_in_middle(mut self) -> Self {
        self.fim = true;
        self
    }

    /// Claim that a reply of `tokens` (as this model counts them: a token per four characters)
    /// was cut there, as the embedded model's are at its default limit.
    pub fn with_reply_limit(mut self, tokens: u32) -> Self {
        self.reply_limit = Some(tokens);
        self
    }

    /// The `n` of every [`ChatModel::chat_n`] call, in order.
    pub fn batch_sizes(&self) -> Vec<usize> {
        lock(&self.batch_sizes).clone()
    }

    /// The name reported by [`ChatModel::name`] and in `ChatResponse::model`.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Append a reply (queue scripts only; ignored for closures).
    pub fn push(&self, reply: impl Into<String>) {
        self.push_result(Ok(reply.into()));
    }

    /// Append an error (queue scripts only; ignored for closures).
    pub fn push_error(&self, error: ModelError) {
        self.push_result(Err(error));
    }

    fn push_result(&self, result: Result<String, ModelError>) {
        if let Script::Queue(q) = &mut *lock(&self.script) {
            q.push_back(result);
        }
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<ChatRequest> {
        lock(&self.requests).clone()
    }

    /// How many calls were made.
    pub fn calls(&self) -> usize {
        lock(&self.requests).len()
    }

    /// Queued replies not yet used (`None` for closure scripts).
    pub fn remaining(&self) -> Option<usize> {
        match &*lock(&self.script) {
            Script::Queue(q) => Some(q.len()),
            Script::Func(_) => None,
        }
    }
}

// A test that panicked while holding a lock should not hide the data from the next assertion.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// About four characters per token, rounded up.
fn pseudo_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

#[async_trait::async_trait]
impl ChatModel for ScriptedModel {
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let cached_prompt_tokens = {
            let requests = lock(&self.requests);
            let shared = requests.last().map_or(0, |last| {
                last.messages
                    .iter()
                    .zip(&request.messages)
                    .take_while(|(a, b)| a == b)
                    .count()
            });
            request.messages[..shared]
                .iter()
                .map(|m| pseudo_tokens(&m.content))
                .sum()
        };
        lock(&self.requests).push(request.clone());
        let reply = match &mut *lock(&self.script) {
            Script::Queue(q) => q.pop_front().unwrap_or_else(|| {
                Err(ModelError::InvalidResponse("script exhausted".to_string()))
            }),
            Script::Func(f) => f(request),
        }?;
        let prompt_tokens = request
            .messages
            .iter()
            .map(|m| pseudo_tokens(&m.content))
            .sum();
        Ok(ChatResponse {
            usage: Usage {
                prompt_tokens,
                completion_tokens: pseudo_tokens(&reply),
                cached_prompt_tokens,
            },
            content: reply,
            latency: Duration::ZERO,
            model: self.name.clone(),
            cached: false,
            attempts: 1,
        })
    }

    async fn chat_n(
        &self,
        request: &ChatRequest,
        n: usize,
    ) -> Result<Vec<ChatResponse>, ModelError> {
        lock(&self.batch_sizes).push(n);
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let mut r = request.clone();
            r.seed = crate::generate::model::nth_seed(request.seed, i);
            out.push(self.chat(&r).await?);
        }
        Ok(out)
    }

    fn batches(&self) -> bool {
        self.batches
    }

    fn fills_in_middle(&self) -> bool {
        self.fim
    }

    fn reply_limit(&self) -> Option<u32> {
        self.reply_limit
    }

    fn name(&self) -> String {
        self.name.clone()
    }
}
