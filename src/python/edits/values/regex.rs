//! Regular expressions: a literal that is one (an argument of `re.match` and its kind, or a raw
//! string with a class or a group) gains a character class's range or character the failing
//! tests need, loses one, or changes a quantifier (`+`/`*`, greedy/lazy).

use rustpython_parser::ast::{Expr, Ranged};

use crate::python::edits::strings::Form;

const REGEX_CALLS: &[&str] = &[
    "match",
    "search",
    "sub",
    "subn",
    "findall",
    "finditer",
    "fullmatch",
    "split",
    "compile",
];

/// Whether the literal is a regular expression: an argument of `re.match(...)` and its
/// kind, or a raw string with a character class or a group.
pub(super) fn is_regex(e: &Expr, value: &str, form: &Form, exprs: &[&Expr]) -> bool {
    let is_arg = exprs.iter().any(|x| match x {
        Expr::Call(c) => {
            let name = match c.func.as_ref() {
                Expr::Attribute(a) => a.attr.as_str(),
                Expr::Name(n) => n.id.as_str(),
                _ => "",
            };
            REGEX_CALLS.contains(&name) && c.args.first().is_some_and(|a| a.range() == e.range())
        }
        _ => false,
    });
    is_arg || (form.raw && (value.contains('[') || value.contains("(?")))
}

/// Where a character class starting at `c[i] == '['` ends: the index of its closing `]` (the
/// first `]` that is not its first character), or `None` when it never closes.
fn class_end(c: &[char], i: usize) -> Option<usize> {
    let mut j = i + 1;
    if c.get(j) == Some(&'^') {
        j += 1;
    }
    if c.get(j) == Some(&']') {
        j += 1;
    }
    while j < c.len() && c[j] != ']' {
        if c[j] == '\\' {
            j += 1;
        }
        j += 1;
    }
    (j < c.len()).then_some(j)
}

/// A regular expression whose (not negated) character class gains a range it lacks: `0-9`
/// where the expected value has digits the actual one lacks.
pub(super) fn regex_ranges(value: &str, ranges: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let c: Vec<char> = value.chars().collect();
    let mut i = 0;
    while i < c.len() {
        if c[i] == '\\' {
            i += 2;
            continue;
        }
        if c[i] != '[' {
            i += 1;
            continue;
        }
        let negated = c.get(i + 1) == Some(&'^');
        let Some(j) = class_end(&c, i) else {
            break;
        };
        let body: String = c[i + 1..j].iter().collect();
        if !negated && !body.contains("\\w") {
            for range in ranges {
                let covered = body.contains(range) || (*range == "0-9" && body.contains("\\d"));
                if covered {
                    continue;
                }
                let mut v: String = c[..j].iter().collect();
                v.push_str(range);
                v.extend(&c[j..]);
                out.push(v);
            }
        }
        i = j + 1;
    }
    out
}

/// Variants of a regular expression: a class with a character added or one taken out, a
/// quantifier changed.
pub(super) fn regex_variants(value: &str, chars: &[char]) -> Vec<String> {
    let c: Vec<char> = value.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if c[i] == '\\' {
            i += 2;
            continue;
        }
        if c[i] == '[' {
            let body_start = i + 1 + usize::from(c.get(i + 1) == Some(&'^'));
            let Some(j) = class_end(&c, i) else {
                break;
            };
            let body: String = c[body_start..j].iter().collect();
            for &ch in chars {
                if body.contains(ch) {
                    continue;
                }
                let add = match ch {
                    '\\' | ']' | '^' | '-' | '[' => format!("\\{ch}"),
                    _ => ch.to_string(),
                };
                let mut v: String = c[..j].iter().collect();
                v.push_str(&add);
                v.extend(&c[j..]);
                out.push(v);
            }
            // One plain character taken out (not a range's end, not an escape's).
            let mut k = body_start;
            while k < j {
                if c[k] == '\\' {
                    k += 2;
                    continue;
                }
                let in_range = c.get(k + 1) == Some(&'-') && k + 2 < j
                    || (k > body_start && c[k - 1] == '-' && k >= body_start + 2);
                if !in_range && c[k] != '-' {
                    let mut v: String = c[..k].iter().collect();
                    v.extend(&c[k + 1..]);
                    out.push(v);
                }
                k += 1;
            }
            i = j + 1;
            continue;
        }
        if matches!(c[i], '+' | '*') && i > 0 {
            let lazy = c.get(i + 1) == Some(&'?');
            let other = if c[i] == '+' { '*' } else { '+' };
            let mut v: String = c[..i].iter().collect();
            v.push(other);
            v.extend(&c[i + 1..]);
            out.push(v);
            let mut v: String = c[..=i].iter().collect();
            if lazy {
                v.extend(&c[i + 2..]);
            } else {
                v.push('?');
                v.extend(&c[i + 1..]);
            }
            out.push(v);
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regex_class_gains_the_range_the_expected_value_needs() {
        assert_eq!(regex_ranges("[a-z]+", &["0-9"]), ["[a-z0-9]+"]);
        assert_eq!(
            regex_ranges("([a-z]+)-[a-z]", &["0-9", "A-Z"]),
            [
                "([a-z0-9]+)-[a-z]",
                "([a-zA-Z]+)-[a-z]",
                "([a-z]+)-[a-z0-9]",
                "([a-z]+)-[a-zA-Z]"
            ]
        );
        // Covered already, or a negated class (adding would exclude more).
        assert!(regex_ranges(r"[\d.]+", &["0-9"]).is_empty());
        assert!(regex_ranges(r"[\w]+", &["0-9"]).is_empty());
        assert!(regex_ranges("[^a-z]+", &["0-9"]).is_empty());
    }

    #[test]
    fn a_regex_class_gains_or_loses_a_character_and_quantifiers_change() {
        let v = regex_variants("&([^;]+;)", &['&', '#']);
        assert!(v.contains(&"&([^;&]+;)".to_string()), "{v:?}");
        assert!(v.contains(&"&([^]+;)".to_string()) || v.iter().all(|x| x != "&([^;]+;)"));
        assert!(v.contains(&"&([^;]*;)".to_string()), "{v:?}");
        assert!(v.contains(&"&([^;]+?;)".to_string()), "{v:?}");
        let v = regex_variants("[^/?#]+", &[]);
        assert!(v.contains(&"[^?#]+".to_string()), "{v:?}");
    }
}
