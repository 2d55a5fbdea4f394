//! String literals rewritten as the failing tests' expected values have them at the same
//! place (a missing part added, a stray quote dropped, a separator replaced), format fields
//! (`{0}`, `%s`) kept and left free when matching; a literal that is a regular expression also
//! gets `regex`'s edits.

use std::collections::BTreeSet;

use rustpython_parser::ast::Expr;

use super::regex::{is_regex, regex_ranges, regex_variants};
use super::{one, short, Hints};
use crate::python::edits::strings::{read_literal, write_literal, Alignment};
use crate::python::edits::{span, text_of, Candidate, Context, EditKind};

/// Edits of one string literal, at most.
const PER_LITERAL: usize = 24;

pub(super) fn literal(
    e: &Expr,
    ctx: &Context<'_>,
    hints: &Hints,
    exprs: &[&Expr],
    (guided, generic): (&mut Vec<Candidate>, &mut Vec<Candidate>),
) {
    let token = text_of(ctx.text, e);
    let Some((value, form)) = read_literal(token) else {
        return;
    };
    let (s, t) = span(e);
    let mut made: BTreeSet<String> = BTreeSet::new();
    made.insert(value.clone());
    let mut push = |new: String, out: &mut Vec<Candidate>, what: &str| {
        if made.len() > PER_LITERAL || !made.insert(new.clone()) {
            return;
        }
        let text = write_literal(&new, &form);
        out.push(one(
            EditKind::Literal,
            s,
            t,
            text.clone(),
            format!("{} → {} ({what})", short(token), short(&text)),
        ));
    };
    for (actual, expected) in &hints.compared {
        for new in transplant(&value, actual, expected) {
            push(new, guided, "as the expected value has it");
        }
    }
    if is_regex(e, &value, &form, exprs) {
        for new in regex_ranges(&value, &hints.ranges) {
            push(
                new,
                guided,
                "a regular expression's class as the expected value needs",
            );
        }
        for new in regex_variants(&value, &hints.chars) {
            push(new, generic, "regular expression");
        }
    }
}

/// A format field of a literal: `{...}` or a `%` conversion.
fn fields(value: &str) -> Vec<(usize, usize)> {
    let c: Vec<char> = value.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if c[i] == '{' {
            if c.get(i + 1) == Some(&'{') {
                i += 2;
                continue;
            }
            if let Some(j) = c[i..].iter().position(|&x| x == '}') {
                out.push((i, i + j + 1));
                i += j + 1;
                continue;
            }
        }
        if c[i] == '%' {
            if c.get(i + 1) == Some(&'%') {
                i += 2;
                continue;
            }
            let mut j = i + 1;
            if c.get(j) == Some(&'(') {
                if let Some(k) = c[j..].iter().position(|&x| x == ')') {
                    j += k + 1;
                }
            }
            while j < c.len() && "#0- +.0123456789".contains(c[j]) {
                j += 1;
            }
            if j < c.len() && "sdrifgexXocu".contains(c[j]) {
                out.push((i, j + 1));
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// New values for the literal `value` from one failed comparison: where the literal's text
/// (its format fields matching anything) shows up in `actual`, the text at the same place in
/// `expected`, with the fields put back.
fn transplant(value: &str, actual: &str, expected: &str) -> Vec<String> {
    if value.is_empty() || actual == expected {
        return Vec::new();
    }
    let v: Vec<char> = value.chars().collect();
    let a: Vec<char> = actual.chars().collect();
    let e: Vec<char> = expected.chars().collect();
    if a.len() > 20_000 || e.len() > 20_000 {
        return Vec::new();
    }
    // A literal found as it is (its fields unfilled: a query's `%s` passed on as text) maps
    // whole; otherwise its fields match what filled them.
    let fields = if find(&a, &v, 0).is_some() {
        Vec::new()
    } else {
        fields(value)
    };
    // The literal's text between its fields, as (start, end) in `v`, the empty ones left out.
    let mut pieces: Vec<(usize, usize)> = Vec::new();
    let mut at = 0;
    for &(fs, fe) in &fields {
        if fs > at {
            pieces.push((at, fs));
        }
        at = fe;
    }
    if v.len() > at {
        pieces.push((at, v.len()));
    }
    let (Some(&first), Some(&last)) = (pieces.first(), pieces.last()) else {
        return Vec::new();
    };
    // Fields before the first piece and after the last match nothing certain: they stay.
    let leading: String = v[..first.0].iter().collect();
    let trailing: String = v[last.1..].iter().collect();
    let middle: Vec<(usize, usize)> = fields
        .iter()
        .copied()
        .filter(|&(fs, _)| fs >= first.1 && fs < last.0)
        .collect();
    let align = Alignment::new(actual, expected);
    let mut out = Vec::new();
    let mut start = 0;
    let mut tries = 0;
    while let Some(i) = find(&a, &v[first.0..first.1], start) {
        start = i + 1;
        tries += 1;
        if tries > 4 {
            break;
        }
        // The pieces in order from here, each field taking the least it can.
        let mut spans: Vec<(usize, usize)> = Vec::new();
        let mut pos = i;
        for &(ps, pe) in &pieces {
            let Some(f) = find(&a, &v[ps..pe], pos) else {
                break;
            };
            spans.push((f, f + (pe - ps)));
            pos = f + (pe - ps);
        }
        if spans.len() != pieces.len() {
            continue;
        }
        let values: Vec<String> = spans
            .windows(2)
            .map(|w| a[w[0].1..w[1].0].iter().collect())
            .collect();
        let span_start = spans[0].0;
        let span_end = spans[spans.len() - 1].1;
        let (Some(lo), Some(hi)) = (align.position(span_start), align.position(span_end)) else {
            continue;
        };
        for (from, to) in [(lo.0, hi.1), (lo.1, hi.0), (lo.0, hi.0), (lo.1, hi.1)] {
            if from > to || to > e.len() {
                continue;
            }
            let mapped: String = e[from..to].iter().collect();
            let Some(inner) = refield(&mapped, &values, &v, &middle) else {
                continue;
            };
            let back = format!("{leading}{inner}{trailing}");
            if back != value && !out.contains(&back) {
                out.push(back);
            }
        }
    }
    out
}

/// `mapped` (expected text) with each field's value put back as the field, in order; `None`
/// when a value is not there.
fn refield(
    mapped: &str,
    values: &[String],
    literal: &[char],
    fields: &[(usize, usize)],
) -> Option<String> {
    let mut out = String::new();
    let mut rest = mapped;
    for (k, &(fs, fe)) in fields.iter().enumerate() {
        let field: String = literal[fs..fe].iter().collect();
        let value = values.get(k)?;
        if value.is_empty() {
            return None;
        }
        let at = rest.find(value.as_str())?;
        out.push_str(&rest[..at]);
        out.push_str(&field);
        rest = &rest[at + value.len()..];
    }
    out.push_str(rest);
    Some(out)
}

fn find(hay: &[char], needle: &[char], from: usize) -> Option<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return None;
    }
    (from..=hay.len() - needle.len()).find(|&i| hay[i..i + needle.len()] == *needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_literal_takes_what_the_expected_value_has_at_its_place() {
        // A format string's stray quotes (luigi's `'"{0}={1}"'`).
        let got = transplant("\"{0}={1}\"", "['--conf', '\"a=1\"']", "['--conf', 'a=1']");
        assert!(got.contains(&"{0}={1}".to_string()), "{got:?}");
        // A missing part, with `%s` fields left as they are.
        let got = transplant(
            "where t = %s and n = %s",
            "where t = %s and n = %s",
            "where t = lower(%s) and n = lower(%s)",
        );
        assert!(
            got.contains(&"where t = lower(%s) and n = lower(%s)".to_string()),
            "{got:?}"
        );
        // A plain literal.
        let got = transplant("Fish Shell", "Fish Shell", "Fish Shell 3.5.9");
        assert!(got.contains(&"Fish Shell 3.5.9".to_string()), "{got:?}");
        assert!(transplant("zz", "abc", "abd").is_empty());
        // Fields at the ends stay; the text between them takes the expected value's.
        let got = transplant(
            "{}, version {}",
            "Fish Shell, version 3.5.9",
            "Fish Shell 3.5.9",
        );
        assert!(got.contains(&"{} {}".to_string()), "{got:?}");
        // One character.
        let got = transplant("\"", "'a b\"", "'a b'");
        assert!(got.contains(&"'".to_string()), "{got:?}");
    }
}
