//! Prompt-lookup drafting: guesses for the next tokens copied from earlier text.
//!
//! A reply that rewrites a program repeats long runs of the prompt (the program, the test, the
//! docstring). When the last few tokens written also occur earlier in the prompt or the reply,
//! the tokens that followed them there are a good guess for what comes next. The embedded
//! backend decodes such a guess in one batch with the token just sampled and keeps the longest
//! run the model itself would have sampled (`llama::Session::generate`), so a guess changes
//! the cost of a reply, not its tokens (up to the rounding of a batched forward pass, which
//! changed about 1% of the bytes of 96 sampled replies). Off by default: on the default
//! search's calls, fresh programs sampled at 0.8 after a prefilled signature, 14% of drafted
//! tokens were kept and generation ran at half speed (benchmarks/experiments/model-time.md).

/// The tokens that followed the latest earlier occurrence of the longest suffix of `history`
/// (from `longest` tokens down to `shortest`) that occurs before, at most `max` of them; empty
/// when no suffix of that length recurs or `max` is 0.
pub fn lookup<T: PartialEq>(history: &[T], shortest: usize, longest: usize, max: usize) -> &[T] {
    let len = history.len();
    if max == 0 || shortest == 0 {
        return &[];
    }
    for n in (shortest..=longest.min(len.saturating_sub(1))).rev() {
        let key = &history[len - n..];
        // Latest first: the reply's own recent text predicts it better than the prompt.
        let found = (0..len - n)
            .rev()
            .find(|&start| &history[start..start + n] == key);
        if let Some(start) = found {
            let from = start + n;
            let to = (from + max).min(len);
            return &history[from..to];
        }
    }
    &[]
}

#[cfg(test)]
mod tests {
    use super::lookup;

    #[test]
    fn the_tokens_after_the_latest_earlier_occurrence_are_drafted() {
        // "b c" occurs at 1 and at 5; the suffix "b c" at the end matches the later one.
        let h = [0, 1, 2, 3, 9, 1, 2, 7, 8, 1, 2];
        assert_eq!(lookup(&h, 2, 3, 4), &[7, 8, 1, 2]);
    }

    #[test]
    fn a_longer_suffix_wins_over_a_later_shorter_one() {
        // Suffix "5 1 2" occurs at 0; "1 2" alone occurs later at 4, but the longer one is
        // tried first.
        let h = [5, 1, 2, 6, 1, 2, 4, 5, 1, 2];
        assert_eq!(lookup(&h, 2, 3, 2), &[6, 1]);
    }

    #[test]
    fn the_draft_stops_at_max_and_at_the_end_of_the_history() {
        let h = [1, 2, 3, 1, 2];
        assert_eq!(lookup(&h, 2, 2, 1), &[3]);
        assert_eq!(lookup(&h, 2, 2, 10), &[3, 1, 2]);
    }

    #[test]
    fn nothing_is_drafted_without_a_recurring_suffix() {
        assert!(lookup(&[1, 2, 3, 4], 1, 3, 8).is_empty());
        assert!(lookup(&[1, 2, 1, 2], 2, 3, 0).is_empty());
        assert!(lookup::<i32>(&[], 1, 3, 8).is_empty());
        assert!(lookup(&[7], 1, 3, 8).is_empty());
    }
}
