//! Usage accounting across calls: wrap a model in [`MeteredModel`] and read the totals.
//!
//! Every [`ChatResponse`] already carries its own usage, latency and attempts; the meter adds them
//! up (keeping cache hits apart, since they cost nothing) for progress lines and reports.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{ChatModel, ChatRequest, ChatResponse, ModelError, Usage};

/// Totals over the calls seen by a meter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UsageTotals {
    /// Calls made, successful or not, cache hits included.
    pub calls: u64,
    pub failures: u64,
    /// Calls answered from the response cache.
    pub cache_hits: u64,
    /// Tokens of calls that reached a backend.
    pub usage: Usage,
    /// Tokens of cached answers (what they cost when first made).
    pub cached_usage: Usage,
    /// Wall time inside model calls, summed (parallel calls overlap).
    pub latency: Duration,
    /// HTTP attempts of successful uncached calls (more than `calls` when retries happened).
    pub attempts: u64,
}

impl UsageTotals {
    pub fn record(&mut self, result: &Result<ChatResponse, ModelError>, latency: Duration) {
        self.calls += 1;
        self.latency += latency;
        match result {
            Ok(r) if r.cached => {
                self.cache_hits += 1;
                self.cached_usage += r.usage;
            }
            Ok(r) => {
                self.usage += r.usage;
                self.attempts += u64::from(r.attempts);
            }
            Err(_) => self.failures += 1,
        }
    }
}

/// A shareable, thread-safe running total.
#[derive(Debug, Clone, Default)]
pub struct UsageMeter {
    totals: Arc<Mutex<UsageTotals>>,
}

impl UsageMeter {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn totals(&self) -> UsageTotals {
        *self.totals.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn record(&self, result: &Result<ChatResponse, ModelError>, latency: Duration) {
        self.totals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .record(result, latency);
    }
}

/// A model whose every call is added to a [`UsageMeter`].
pub struct MeteredModel<M: ChatModel> {
    inner: M,
    meter: UsageMeter,
}

impl<M: ChatModel> MeteredModel<M> {
    /// Meter `inner` into `meter` (clone one meter into several models to get a grand total).
    pub fn new(inner: M, meter: UsageMeter) -> Self {
        MeteredModel { inner, meter }
    }

    pub fn meter(&self) -> &UsageMeter {
        &self.meter
    }

    pub fn inner(&self) -> &M {
        &self.inner
    }
}

#[async_trait::async_trait]
impl<M: ChatModel> ChatModel for MeteredModel<M> {
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let start = std::time::Instant::now();
        let result = self.inner.chat(request).await;
        let latency = match &result {
            Ok(r) => r.latency,
            Err(_) => start.elapsed(),
        };
        self.meter.record(&result, latency);
        result
    }

    async fn chat_n(
        &self,
        request: &ChatRequest,
        n: usize,
    ) -> Result<Vec<ChatResponse>, ModelError> {
        let start = std::time::Instant::now();
        match self.inner.chat_n(request, n).await {
            Ok(responses) => {
                for r in &responses {
                    self.meter.record(&Ok(r.clone()), r.latency);
                }
                Ok(responses)
            }
            Err(e) => {
                let result: Result<ChatResponse, ModelError> = Err(e);
                self.meter.record(&result, start.elapsed());
                result.map(|r| vec![r])
            }
        }
    }

    fn batches(&self) -> bool {
        self.inner.batches()
    }

    fn fills_in_middle(&self) -> bool {
        self.inner.fills_in_middle()
    }
    fn context_tokens(&self) -> Option<usize> {
        self.inner.context_tokens()
    }

    fn reply_limit(&self) -> Option<u32> {
        self.inner.reply_limit()
    }

    fn name(&self) -> String {
        self.inner.name()
    }
}
