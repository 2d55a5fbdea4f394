//! Block labels: the ones a prompt asked for, and how other spellings of them are brought to
//! that form (`3`, `block 3`, `[BLOCK-3]` → `BLOCK-3`).

use super::text::split_label;

/// The labels asked for, and how to bring other spellings to their form.
pub(super) struct Labels<'a> {
    pub(super) expected: &'a [String],
    /// Text before the number in the first expected label (`BLOCK-`); used for bare numbers.
    default_prefix: String,
}

impl<'a> Labels<'a> {
    pub(super) fn new(expected: &'a [String]) -> Self {
        let default_prefix = expected
            .first()
            .map(|l| l.trim_end_matches(|c: char| c.is_ascii_digit()).to_string())
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| "BLOCK-".to_string());
        Self {
            expected,
            default_prefix,
        }
    }

    /// `3`, `"3"`, `BLOCK 3`, `block-3`, `[BLOCK-3]` → `BLOCK-3` (or the expected spelling).
    pub(super) fn normalize(&self, raw: &str) -> String {
        let trimmed = raw.trim().trim_matches(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    '[' | ']' | '(' | ')' | '`' | '*' | '"' | '\'' | '<' | '>'
                )
        });
        if let Some(exact) = self
            .expected
            .iter()
            .find(|l| l.eq_ignore_ascii_case(trimmed))
        {
            return exact.clone();
        }
        let Some((word, number)) = split_label(trimmed) else {
            return trimmed.to_string();
        };
        let matches: Vec<&String> = self
            .expected
            .iter()
            .filter(|l| {
                split_label(l).is_some_and(|(w, n)| n == number && (word.is_empty() || w == word))
            })
            .collect();
        if let Some(first) = matches.first() {
            return (*first).clone();
        }
        if word.is_empty() {
            format!("{}{number}", self.default_prefix)
        } else {
            format!("{word}-{number}")
        }
    }

    /// A key like `BLOCK-3` (for verdicts keyed by label), but not a bare number.
    pub(super) fn is_label_like(&self, key: &str) -> bool {
        self.expected.iter().any(|l| l == key)
            || split_label(key.trim().trim_matches(['[', ']']))
                .is_some_and(|(w, _)| self.words().contains(&w))
    }

    /// Label words to recognise: those of the expected labels and the usual three.
    pub(super) fn words(&self) -> Vec<String> {
        let mut words: Vec<String> = ["BLOCK", "LINE", "CALL"].map(String::from).to_vec();
        for l in self.expected {
            if let Some((w, _)) = split_label(l) {
                if !w.is_empty() && !words.contains(&w) {
                    words.push(w);
                }
            }
        }
        words
    }
}
