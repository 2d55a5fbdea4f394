//! Verdicts in the paper's plain-text format (`[BLOCK-3] ... correct: False ...`), read when a
//! reply holds no usable JSON, and the label spelling both readers share.

use super::{word_truth, Labels, Verdict};

/// Split a label into its upper-cased word and number: `block_3` → ("BLOCK", 3), `3` → ("", 3).
/// Only separators may sit between them, and nothing but a closing mark may follow.
pub(super) fn split_label(s: &str) -> Option<(String, u64)> {
    let s = s.trim();
    let word: String = s.chars().take_while(|c| c.is_alphabetic()).collect();
    let rest = s.get(word.len()..)?;
    let rest = rest.trim_start_matches([' ', '-', '_', '#', '.', ':']);
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    if digits.is_empty() {
        return None;
    }
    let tail = rest.get(digits.len()..)?.trim();
    if tail.chars().any(|c| c.is_alphanumeric()) {
        return None;
    }
    let number = digits.parse().ok()?;
    Some((word.to_uppercase(), number))
}

/// Verdicts written as text: a line starting with a label opens a section that runs to the next
/// such line; the section's first verdict word (or `correct: X`) decides, the rest explains.
pub(super) fn text_verdicts(text: &str, labels: &Labels) -> Vec<Verdict> {
    let words = labels.words();
    let mut sections: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        match leading_label(line, &words) {
            Some((label, rest)) => sections.push((labels.normalize(&label), rest.to_string())),
            None => {
                if let Some((_, body)) = sections.last_mut() {
                    body.push('\n');
                    body.push_str(line);
                }
            }
        }
    }
    sections
        .into_iter()
        .filter_map(|(block, body)| {
            let correct = text_truth(&body)?;
            Some(Verdict {
                block,
                correct,
                explanation: text_explanation(&body),
            })
        })
        .collect()
}

/// A label at the start of a line (after list marks, `#`, `**`, `[`), and the text after it.
fn leading_label<'l>(line: &'l str, words: &[String]) -> Option<(String, &'l str)> {
    let s = line.trim_start_matches(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '-' | '*' | '#' | '>' | '`' | '|' | '[' | '(' | '"' | '\''
            )
    });
    let word: String = s.chars().take_while(|c| c.is_alphabetic()).collect();
    if !words.iter().any(|w| w.eq_ignore_ascii_case(&word)) {
        return None;
    }
    let after_word = s.get(word.len()..)?;
    let rest = after_word.trim_start_matches([' ', '-', '_', '#']);
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    if digits.is_empty() {
        return None;
    }
    let tail = rest.get(digits.len()..)?;
    if tail.chars().next().is_some_and(char::is_alphanumeric) {
        return None;
    }
    let tail = tail.trim_start_matches(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                ']' | ')' | '*' | '`' | ':' | '-' | '—' | '–' | '"' | '\'' | '|' | ','
            )
    });
    Some((format!("{word}-{digits}"), tail))
}

/// The truth value a text section states: an explicit `correct: X` / `verdict: X` first,
/// otherwise the first verdict word.
fn text_truth(body: &str) -> Option<bool> {
    let lower = body.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    for key in ["correct", "verdict", "iscorrect"] {
        for (at, _) in lower.match_indices(key) {
            let before = lower.get(..at).and_then(|s| s.chars().next_back());
            if before.is_some_and(char::is_alphanumeric) {
                continue;
            }
            let after = lower.get(at + key.len()..).unwrap_or("");
            let after = after.trim_start_matches(['"', '\'', '*', ' ']);
            let Some(value) = after.strip_prefix([':', '=']) else {
                continue;
            };
            let value: String = value
                .trim_start_matches(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '*'))
                .chars()
                .take_while(|c| c.is_alphanumeric())
                .collect();
            if let Some(t) = word_truth(&value) {
                return Some(t);
            }
        }
    }
    for (i, w) in words.iter().enumerate() {
        match *w {
            "incorrect" | "wrong" | "buggy" | "false" => return Some(false),
            "correct" | "true" => {
                let negated = i > 0
                    && words
                        .get(i - 1)
                        .is_some_and(|p| matches!(*p, "not" | "t" | "never"));
                return Some(!negated);
            }
            _ => {}
        }
    }
    None
}

/// The explanation in a section: the text after `explanation:` if present, else the section
/// without its leading verdict word.
fn text_explanation(body: &str) -> String {
    let lower = body.to_ascii_lowercase();
    if let Some(at) = lower.find("explanation") {
        let after = body.get(at + "explanation".len()..).unwrap_or("");
        let after = after.trim_start_matches(['"', '\'', '*', ' ']);
        if let Some(rest) = after.strip_prefix([':', '=']) {
            return clean_explanation(rest);
        }
    }
    let t = body.trim_start();
    for word in ["incorrect", "correct", "wrong"] {
        if t.len() >= word.len()
            && t.get(..word.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(word))
            && !t
                .get(word.len()..)
                .and_then(|r| r.chars().next())
                .is_some_and(char::is_alphanumeric)
        {
            return clean_explanation(t.get(word.len()..).unwrap_or(""));
        }
    }
    clean_explanation(t)
}

fn clean_explanation(s: &str) -> String {
    s.trim_start_matches(|c: char| {
        c.is_whitespace() || matches!(c, ':' | '-' | '—' | '–' | '.' | ',' | '"' | '\'' | '*')
    })
    .trim_end()
    .trim_end_matches(['"', '\'', '}', ','])
    .trim()
    .to_string()
}
