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
            .find(|&i| i == 0 || self.sent.contains(&prompt_hash(&messages[..i])))
            .unwrap_or(0);
        let bytes: usize = messages[known..].iter().map(|m| m.content.len()).sum();
        (bytes as f64 / 3.5).ceil() as u64
    }

    /// Remember every prefix of `messages` as held by the backend.
    pub(super) fn remember(&mut self, messages: &[crate::generate::model::Message]) {
        for i in 1..=messages.len() {
            self.sent.insert(prompt_hash(&messages[..i]));
        }
    }

    /// A program reply's expected length: the mean so far, 300 before the first.
    pub(super) fn reply_estimate(&self) -> u64 {
        match self.reply_tokens {
            (_, 0) => 300,
            (sum, n) => sum / n,
        }
    }

    /// Whether the token budget is spent.
    pub(super) fn spent_budget(&self) -> bool {
        self.fixer
            .options
            .budget_tokens
            .is_some_and(|b| self.spent >= b)
    }

    /// Whether `cost` more tokens stay within the budget.
    pub(super) fn fits(&self, cost: u64) -> bool {
        self.fixer
            .options
            .budget_tokens
            .is_none_or(|b| self.spent + cost <= b)
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
