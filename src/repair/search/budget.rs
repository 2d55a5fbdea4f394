//! The token budget of a search: what a request is expected to cost (a prompt the backend already
//! holds costs only its new messages), and how many samples the rest of the budget pays for.

use crate::repair::conversation::Conversation;
use crate::repair::search::Search;

impl Search<'_> {
    /// Tokens a request with `messages` is expected to cost for its prompt: nothing when the
    /// same prompt was sent before (the backend keeps it), else about one token per 3.5 bytes
    /// (code and English under Qwen's and GPT's tokenizers).
    pub(super) fn estimate(&self, messages: &[crate::generate::model::Message]) -> u64 {
        // The messages after the longest prefix sent (or received) before.
        let known = (0..=messages.len())
            .rev()
            .find(|&i| i == 0 || self.memo.sent.contains(&prompt_hash(&messages[..i])))
            .unwrap_or(0);
        let bytes: usize = messages[known..].iter().map(|m| m.content.len()).sum();
        (bytes as f64 / 3.5).ceil() as u64
    }

    /// Remember every prefix of `messages` as held by the backend.
    pub(super) fn remember(&mut self, messages: &[crate::generate::model::Message]) {
        for i in 1..=messages.len() {
            self.memo.sent.insert(prompt_hash(&messages[..i]));
        }
    }

    /// A program reply's expected length: the mean so far, 300 before the first.
    pub(super) fn reply_estimate(&self) -> u64 {
        match self.memo.reply_tokens {
            (_, 0) => 300,
            (sum, n) => sum / n,
        }
    }

    /// The token budget: the user's, else a function no text describes gets
    /// [`UNTOLD_BUDGET_TOKENS`](super::options::UNTOLD_BUDGET_TOKENS).
    pub(super) fn budget_tokens(&self) -> Option<u64> {
        self.fixer.options.budget_tokens.or(self
            .task
            .repairs_only()
            .then_some(super::options::UNTOLD_BUDGET_TOKENS))
    }

    /// Whether the search ran past its time limit.
    pub(super) fn out_of_time(&self) -> bool {
        self.options
            .time_limit
            .is_some_and(|limit| self.started.elapsed() >= limit)
    }

    /// Whether the token budget or the time is spent.
    pub(super) fn spent_budget(&self) -> bool {
        self.budget_tokens().is_some_and(|b| self.spent >= b) || self.out_of_time()
    }

    /// Whether `cost` more tokens stay within the budget (and there is time left).
    pub(super) fn fits(&self, cost: u64) -> bool {
        self.budget_tokens().is_none_or(|b| self.spent + cost <= b) && !self.out_of_time()
    }
    /// How many of `wanted` samples of `conv` to draw now: what the budget can pay for (the
    /// prompt once, a reply each), the candidates left, and the votes the selection still needs.
    pub(super) fn affordable(&self, conv: &Conversation, wanted: usize) -> usize {
        let mut room = self
            .options
            .max_candidates
            .saturating_sub(self.model_proposals());
        if let Some(&first) = self.passing.first() {
            room = room.min(self.votes_wanted().saturating_sub(self.votes_after(first)));
        }
        let prompt = self.estimate(&conv.messages);
        let reply = self.reply_estimate();
        (0..wanted.min(room))
            .take_while(|&i| self.fits(prompt + reply * (i as u64 + 1)))
            .count()
    }
}

/// A hash of a prompt's messages, to know a prompt sent before.
fn prompt_hash(messages: &[crate::generate::model::Message]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for m in messages {
        (m.role as u8).hash(&mut h);
        m.content.hash(&mut h);
    }
    h.finish()
}
