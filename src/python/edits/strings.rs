//! Python string literals as text and value: reading a literal token (its prefix, quotes and
//! escapes) into the string it means, and writing a new value back in the same style; a
//! rendered value (`repr`) read back when it is a string; and where a span of one string lands
//! in another that differs from it a little (an alignment by characters).

use similar::{DiffOp, TextDiff};

/// How a string literal is written: its prefix and its quotes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Form {
    pub prefix: String,
    pub quote: String,
    pub raw: bool,
}

/// The value of one string literal token (`'a\n'`, `r"[^;]"`, `"""doc"""`), and its form.
/// `None` for bytes, f-strings, several tokens implicitly joined, or escapes not read here.
pub(crate) fn read_literal(token: &str) -> Option<(String, Form)> {
    let prefix_len = token.find(['\'', '"']).filter(|&i| i <= 2)?;
    let prefix = &token[..prefix_len];
    let lower = prefix.to_ascii_lowercase();
    if lower.contains('b') || lower.contains('f') {
        return None;
    }
    let raw = lower.contains('r');
    let rest = &token[prefix_len..];
    let quote = if rest.starts_with("'''") || rest.starts_with("\"\"\"") {
        &rest[..3]
    } else {
        &rest[..1]
    };
    if rest.len() < 2 * quote.len() || !rest.ends_with(quote) {
        return None;
    }
    let body = &rest[quote.len()..rest.len() - quote.len()];
    // One token: the body holds no unescaped closing quote.
    let value = if raw {
        if unescaped_quote(body, quote) {
            return None;
        }
        body.to_string()
    } else {
        let v = unescape(body)?;
        if unescaped_quote(body, quote) {
            return None;
        }
        v
    };
    Some((
        value,
        Form {
            prefix: prefix.to_string(),
            quote: quote.to_string(),
            raw,
        },
    ))
}

/// Whether `body` holds `quote` not escaped by a backslash.
fn unescaped_quote(body: &str, quote: &str) -> bool {
    let b = body.as_bytes();
    let q = quote.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            i += 2;
            continue;
        }
        if b[i..].starts_with(q) {
            return true;
        }
        i += 1;
    }
    false
}

/// The value a (non-raw) literal body means.
fn unescape(body: &str) -> Option<String> {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars.next()?;
        match e {
            '\n' => {}
            '\\' => out.push('\\'),
            '\'' => out.push('\''),
            '"' => out.push('"'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            '0'..='7' => {
                let mut n = e.to_digit(8)?;
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            n = n * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(n)?);
            }
            'x' | 'u' | 'U' => {
                let len = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex: String = (0..len).filter_map(|_| chars.next()).collect();
                if hex.len() != len {
                    return None;
                }
                out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
            }
            // `\N{NAME}` needs Unicode's names.
            'N' => return None,
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    Some(out)
}

/// `value` written as a literal of `form` (a raw literal stays raw when it can).
pub(crate) fn write_literal(value: &str, form: &Form) -> String {
    let triple = form.quote.len() == 3;
    if form.raw {
        let fits = !value.contains(form.quote.as_str())
            && !value.ends_with('\\')
            && (triple || !value.contains(['\n', '\r']));
        if fits {
            return format!("{}{}{value}{}", form.prefix, form.quote, form.quote);
        }
    }
    let mut q = form.quote.chars().next().unwrap_or('\'');
    let other = if q == '\'' { '"' } else { '\'' };
    // The other quotes, where they need no escape and the usual ones would.
    if !triple && value.contains(q) && !value.contains(other) {
        q = other;
    }
    let quote = if triple {
        form.quote.clone()
    } else {
        q.to_string()
    };
    let mut body = String::with_capacity(value.len() + 8);
    for c in value.chars() {
        match c {
            '\\' => body.push_str("\\\\"),
            '\n' if !triple => body.push_str("\\n"),
            '\r' => body.push_str("\\r"),
            '\t' => body.push_str("\\t"),
            c if c == q => {
                body.push('\\');
                body.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                body.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => body.push(c),
        }
    }
    let prefix: String = form
        .prefix
        .chars()
        .filter(|c| !matches!(c, 'r' | 'R'))
        .collect();
    format!("{prefix}{quote}{body}{quote}")
}

/// Where position `p` of `old` (between characters, 0 to its length) lands in `new`: the
/// lowest and highest position, apart when text was inserted there.
pub(crate) struct Alignment {
    ops: Vec<DiffOp>,
}

impl Alignment {
    pub(crate) fn new(old: &str, new: &str) -> Alignment {
        let diff = TextDiff::configure()
            .timeout(std::time::Duration::from_millis(200))
            .diff_chars(old, new);
        Alignment {
            ops: diff.ops().to_vec(),
        }
    }

    pub(crate) fn position(&self, p: usize) -> Option<(usize, usize)> {
        let mut lo = usize::MAX;
        let mut hi = 0;
        let mut hit = |a: usize, b: usize| {
            lo = lo.min(a);
            hi = hi.max(b);
        };
        for op in &self.ops {
            match *op {
                DiffOp::Equal {
                    old_index,
                    new_index,
                    len,
                } if old_index <= p && p <= old_index + len => {
                    let at = new_index + (p - old_index);
                    hit(at, at);
                }
                DiffOp::Delete {
                    old_index,
                    old_len,
                    new_index,
                } if old_index <= p && p <= old_index + old_len => hit(new_index, new_index),
                DiffOp::Insert {
                    old_index,
                    new_index,
                    new_len,
                } if old_index == p => hit(new_index, new_index + new_len),
                DiffOp::Replace {
                    old_index,
                    old_len,
                    new_index,
                    new_len,
                } if old_index <= p && p <= old_index + old_len => {
                    if p == old_index {
                        hit(new_index, new_index);
                    } else if p == old_index + old_len {
                        hit(new_index + new_len, new_index + new_len);
                    } else {
                        hit(new_index, new_index + new_len);
                    }
                }
                _ => {}
            }
        }
        (lo <= hi).then_some((lo, hi))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_read_and_write_in_their_own_style() {
        let (v, f) = read_literal(r"r'&([^;]+;)'").expect("raw");
        assert_eq!(v, "&([^;]+;)");
        assert!(f.raw);
        assert_eq!(write_literal("&([^&;]+;)", &f), r"r'&([^&;]+;)'");
        let (v, f) = read_literal(r#"'"{0}={1}"'"#).expect("plain");
        assert_eq!(v, "\"{0}={1}\"");
        assert_eq!(write_literal("{0}={1}", &f), "'{0}={1}'");
        assert_eq!(write_literal("it's\n", &f), r#""it's\n""#);
        assert_eq!(write_literal("'\"", &f), r#"'\'"'"#);
        let (v, _) = read_literal(r"'a\x41\n\\'").expect("escapes");
        assert_eq!(v, "aA\n\\");
        assert!(read_literal("b'x'").is_none());
        assert!(read_literal("f'{x}'").is_none());
        assert!(read_literal("'a' 'b'").is_none());
    }

    #[test]
    fn a_span_of_one_string_lands_where_the_other_has_it() {
        let a = Alignment::new("x \"p=v\" y", "x p=v y");
        // `"p=v"` is characters 2..7.
        assert_eq!(a.position(2), Some((2, 2)));
        assert_eq!(a.position(7), Some((5, 5)));
        let b = Alignment::new("where a = %s", "where a = lower(%s)");
        // Text inserted at the position: its lowest and highest landing.
        assert_eq!(b.position(10), Some((10, 16)));
    }
}
