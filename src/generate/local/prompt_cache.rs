//! Snapshots of evaluated prompts for the embedded model.
//!
//! The model's context keeps the KV cache of one token sequence, so consecutive calls that
//! share a prefix evaluate only the new tail. A search alternates between prompts (a fresh
//! program, a repair of one parent, a repair of another), and each switch would evaluate the
//! whole prompt again. After a prompt is evaluated its KV state is copied out (a few MB per
//! hundred tokens); a later call whose prompt shares more with a snapshot than with the live
//! cache restores that snapshot first. Entries are dropped least recently used first, within a
//! count and a byte limit.
//!
//! The cache is generic over the token and state types so its policy is tested without a
//! model; `local::llama` stores llama.cpp tokens and sequence states in it.

/// Snapshots of evaluated prompts, most useful kept.
pub struct PromptCache<T, S> {
    entries: Vec<Entry<T, S>>,
    max_entries: usize,
    max_bytes: usize,
    clock: u64,
}

struct Entry<T, S> {
    tokens: Vec<T>,
    state: S,
    bytes: usize,
    used: u64,
}

/// The snapshot chosen for a prompt: its state, its tokens and how many of them the prompt
/// shares.
pub struct Hit<'a, T, S> {
    pub state: &'a S,
    pub tokens: &'a [T],
    pub shared: usize,
}

/// How many leading prompt tokens to take from the cache when the prompt has `prompt_len`
/// tokens, shares `shared` with the cache, and the cache's first `whole` tokens were evaluated
/// in whole chunks of `chunk` at multiples of `chunk`. The last prompt token is always
/// evaluated (its logits are sampled). With `chunk` > 1 the answer is a multiple of `chunk`
/// within `whole`: every prompt is then evaluated in the same chunks wherever it starts, so its
/// logits do not depend on what the cache held before (llama.cpp's CPU kernels round
/// differently by batch shape, and at a temperature above 0 the last bits can pick another
/// token). `chunk` ≤ 1 reuses any shared prefix.
pub fn reusable(shared: usize, whole: usize, prompt_len: usize, chunk: usize) -> usize {
    let n = shared.min(prompt_len.saturating_sub(1));
    if chunk <= 1 {
        return n;
    }
    n.min(whole) / chunk * chunk
}

/// Leading elements `a` and `b` have in common.
pub fn shared_prefix<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

impl<T: PartialEq + Clone, S> PromptCache<T, S> {
    /// A cache of at most `max_entries` snapshots and `max_bytes` bytes of state (0 entries
    /// turns it off).
    pub fn new(max_entries: usize, max_bytes: usize) -> Self {
        PromptCache {
            entries: Vec::new(),
            max_entries,
            max_bytes,
            clock: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Bytes of state held.
    pub fn bytes(&self) -> usize {
        self.entries.iter().map(|e| e.bytes).sum()
    }

    /// The snapshot sharing the longest prefix with `prompt`, if it shares more than `at_least`
    /// tokens. Marks it used.
    pub fn best(&mut self, prompt: &[T], at_least: usize) -> Option<Hit<'_, T, S>> {
        let (index, shared) = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| (i, shared_prefix(&e.tokens, prompt)))
            .max_by_key(|&(i, shared)| (shared, std::cmp::Reverse(i)))?;
        if shared <= at_least {
            return None;
        }
        self.clock += 1;
        let entry = &mut self.entries[index];
        entry.used = self.clock;
        Some(Hit {
            state: &entry.state,
            tokens: &entry.tokens,
            shared,
        })
    }

    /// Keep `state`, the KV state after evaluating `tokens`. An entry with the same tokens is
    /// replaced; the least recently used go when a limit is passed. A state over the byte limit
    /// on its own is not kept.
    pub fn insert(&mut self, tokens: Vec<T>, state: S, bytes: usize) {
        if self.max_entries == 0 || bytes > self.max_bytes {
            return;
        }
        self.entries.retain(|e| e.tokens != tokens);
        self.clock += 1;
        self.entries.push(Entry {
            tokens,
            state,
            bytes,
            used: self.clock,
        });
        while self.entries.len() > self.max_entries || self.bytes() > self.max_bytes {
            let Some(oldest) = self
                .entries
                .iter()
                .enumerate()
                .min_by_key(|(_, e)| e.used)
                .map(|(i, _)| i)
            else {
                break;
            };
            self.entries.remove(oldest);
        }
    }

    /// Drop every snapshot (after a failed call, whose state may be half-written).
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn reuse_stops_at_a_whole_chunk_and_keeps_the_last_prompt_token() {
        // Any prefix without chunks, less the last prompt token.
        assert_eq!(reusable(100, 0, 100, 0), 99);
        assert_eq!(reusable(40, 0, 100, 1), 40);
        // Chunks of 32: the shared 100 tokens give 96, the last whole chunk.
        assert_eq!(reusable(100, 128, 200, 32), 96);
        // Tokens beyond the whole chunks (a reply decoded one by one) are evaluated again.
        assert_eq!(reusable(150, 64, 200, 32), 64);
        // The same prompt again: its last chunk is evaluated again, so its logits come from
        // the same batch as the first time.
        assert_eq!(reusable(64, 64, 64, 32), 32);
        assert_eq!(reusable(70, 64, 70, 32), 64);
        assert_eq!(reusable(10, 64, 70, 32), 0);
    }

    #[test]
    fn the_longest_shared_prefix_wins_and_short_ones_are_ignored() {
        let mut c = PromptCache::new(4, 1000);
        c.insert(toks("sys fresh prompt"), "fresh", 10);
        c.insert(toks("sys repair of A"), "repair-a", 10);
        let hit = c.best(&toks("sys repair of A, again"), 4).expect("hit");
        assert_eq!(*hit.state, "repair-a");
        assert_eq!(hit.shared, toks("sys repair of A").len());
        // Only "sys " is shared: not worth a restore.
        assert!(c.best(&toks("sys other"), 4).is_none());
    }

    #[test]
    fn least_recently_used_goes_first_within_the_count_limit() {
        let mut c = PromptCache::new(2, 1000);
        c.insert(toks("aaaa"), 1, 10);
        c.insert(toks("bbbb"), 2, 10);
        // Using "aaaa" makes "bbbb" the oldest.
        assert!(c.best(&toks("aaaa"), 0).is_some());
        c.insert(toks("cccc"), 3, 10);
        assert_eq!(c.len(), 2);
        assert!(c.best(&toks("bbbb"), 0).is_none());
        assert_eq!(c.best(&toks("aaaa"), 0).map(|h| *h.state), Some(1));
        assert_eq!(c.best(&toks("cccc"), 0).map(|h| *h.state), Some(3));
    }

    #[test]
    fn the_byte_limit_evicts_and_an_oversized_state_is_not_kept() {
        let mut c = PromptCache::new(8, 100);
        c.insert(toks("aaaa"), 1, 60);
        c.insert(toks("bbbb"), 2, 60);
        assert_eq!(c.len(), 1);
        assert_eq!(c.bytes(), 60);
        c.insert(toks("cccc"), 3, 101);
        assert_eq!(c.len(), 1);
        assert!(c.best(&toks("bbbb"), 0).is_some());
    }

    #[test]
    fn the_same_tokens_replace_their_entry_and_zero_entries_disables() {
        let mut c = PromptCache::new(4, 1000);
        c.insert(toks("aaaa"), 1, 10);
        c.insert(toks("aaaa"), 2, 10);
        assert_eq!(c.len(), 1);
        assert_eq!(c.best(&toks("aaaa"), 0).map(|h| *h.state), Some(2));
        let mut off: PromptCache<char, i32> = PromptCache::new(0, 1000);
        off.insert(toks("aaaa"), 1, 10);
        assert!(off.is_empty());
    }
}
