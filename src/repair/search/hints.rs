//! What a parent's failing tests saw, gathered for value-guided edits
//! ([`crate::python::edits::Hints`]): the values a failed assertion compared (pytest's own
//! comparison, unittest's `A != B`), a mock's expected and actual calls, the characters of the
//! failing tests' strings, the expected values short enough to return, and the exceptions
//! raised inside the program. Only the tests the program must fix count: regression tests are
//! never read here.

use crate::python::edits::strings::read_literal;
use crate::python::edits::Hints;
use crate::run::TestOutcome;

/// A kind of character (`char::is_ascii_digit`).
type CharKind = fn(&char) -> bool;

/// Expected values longer than this are not offered as a guard's return value.
const RETURN_CHARS: usize = 40;
/// Characters offered to a regular expression's class, at most.
const CLASS_CHARS: usize = 12;

/// The name of `NameError`'s message (`name 'x' is not defined`).
fn unbound_name(message: &str) -> Option<String> {
    let rest = message.strip_prefix("name '")?;
    let name = &rest[..rest.find('\'')?];
    crate::task::is_python_identifier(name).then(|| name.to_string())
}

pub(super) fn hints(outcomes: &[TestOutcome]) -> Hints {
    let mut h = Hints::default();
    let mut chars: Vec<char> = Vec::new();
    for o in outcomes
        .iter()
        .filter(|o| !o.passed() && !o.test.is_guard())
    {
        let mut pairs: Vec<(String, String)> = Vec::new();
        if let (Some(a), Some(e)) = (&o.actual, &o.expected) {
            pairs.push((a.clone(), e.clone()));
        }
        if let Some(exc) = &o.exception {
            if exc.kind == "AssertionError" {
                let message = exc.message.as_str();
                let expected = line_after(message, "Expected: ");
                let actual = line_after(message, "Actual: ");
                if let (Some(e), Some(a)) = (expected, actual) {
                    h.calls.push((e.to_string(), a.to_string()));
                }
                if let Some(first) = message.lines().next() {
                    if let Some((a, e)) = split_unequal(first) {
                        pairs.push((a, e));
                    }
                }
            } else if exc.program_line.is_some() {
                if !h.raised.contains(&exc.kind) {
                    h.raised.push(exc.kind.clone());
                }
                // CPython names the type of a `None` misused as a value `NoneType`.
                h.used_none |= matches!(exc.kind.as_str(), "TypeError" | "AttributeError")
                    && exc.message.contains("NoneType");
            }
            if exc.kind == "NameError" {
                if let Some(name) = unbound_name(&exc.message) {
                    if !h.unbound.contains(&name) {
                        h.unbound.push(name);
                    }
                }
            }
        }
        for (a, e) in pairs {
            if e.chars().count() <= RETURN_CHARS && !h.returns.contains(&e) {
                h.returns.push(e.clone());
            }
            let (a, e) = match (read_literal(&a), read_literal(&e)) {
                (Some((a, _)), Some((e, _))) => (a, e),
                _ => (a, e),
            };
            for c in e.chars() {
                if is_class_char(c) && !chars.contains(&c) {
                    chars.push(c);
                }
            }
            // Kinds of characters the expected value has and the actual one lacks.
            let kinds: [(&str, CharKind); 3] = [
                ("0-9", char::is_ascii_digit),
                ("A-Z", char::is_ascii_uppercase),
                ("a-z", char::is_ascii_lowercase),
            ];
            for (range, is) in kinds {
                if e.chars().any(|c| is(&c))
                    && !a.chars().any(|c| is(&c))
                    && !h.ranges.contains(&range)
                {
                    h.ranges.push(range);
                }
            }
            if !h.compared.contains(&(a.clone(), e.clone())) {
                h.compared.push((a, e));
            }
        }
        for s in string_literals(&o.test.prompt_text()) {
            for c in s.chars() {
                if is_class_char(c) && !chars.contains(&c) {
                    chars.push(c);
                }
            }
        }
    }
    chars.truncate(CLASS_CHARS);
    h.chars = chars;
    h
}

fn is_class_char(c: char) -> bool {
    !c.is_alphanumeric() && !c.is_whitespace() && c != '\'' && c != '"'
}

/// The rest of the first line of `text` that starts with `label`.
fn line_after<'t>(text: &'t str, label: &str) -> Option<&'t str> {
    text.lines()
        .find_map(|l| l.trim_start().strip_prefix(label))
        .map(str::trim)
}

/// unittest's `first != second` (its reprs shortened with `[N chars]` are left out).
fn split_unequal(line: &str) -> Option<(String, String)> {
    let (a, e) = split_at_top(line, " != ")?;
    let shortened = |s: &str| s.contains(" chars]");
    (!shortened(&a) && !shortened(&e)).then_some((a, e))
}

/// `text` split at the first `sep` outside quotes and brackets.
fn split_at_top(text: &str, sep: &str) -> Option<(String, String)> {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, ch) in text.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == q {
                quote = None;
            }
            continue;
        }
        match ch {
            '\'' | '"' => quote = Some(ch),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ if depth == 0 && text[i..].starts_with(sep) => {
                return Some((text[..i].to_string(), text[i + sep.len()..].to_string()));
            }
            _ => {}
        }
    }
    None
}

/// The values of the string literals in `source` (a test's code), as far as a scan for quotes
/// can tell.
fn string_literals(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b: Vec<char> = source.chars().collect();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == '#' {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '\'' || c == '"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != c && b[j] != '\n' {
                if b[j] == '\\' {
                    j += 1;
                }
                j += 1;
            }
            if j < b.len() && b[j] == c {
                let token: String = b[i..=j].iter().collect();
                if let Some((v, _)) = read_literal(&token) {
                    out.push(v);
                }
            }
            i = j + 1;
            continue;
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unittest_and_mock_messages_give_their_values() {
        assert_eq!(
            split_unequal("'&a&quot;' != '&a\"'"),
            Some(("'&a&quot;'".to_string(), "'&a\"'".to_string()))
        );
        assert_eq!(
            split_unequal("'a, b' != 'c'").map(|p| p.1),
            Some("'c'".into())
        );
        assert_eq!(split_unequal("'abc [12 chars]' != 'x'"), None);
        let msg = "expected call not found.\nExpected: prompt('x', show_choices=False)\nActual: prompt('x')";
        assert_eq!(
            line_after(msg, "Expected: "),
            Some("prompt('x', show_choices=False)")
        );
        assert_eq!(
            string_literals("assert f('&a&quot;') == '&a\"'  # it's"),
            ["&a&quot;", "&a\""]
        );
    }
}
