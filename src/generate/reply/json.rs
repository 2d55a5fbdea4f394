//! JSON in a model's reply: where it is (the outermost bracketed spans in prose, robust to
//! apostrophes and truncation), and a lenient reader for what small models write (Python
//! literals, single quotes, comments, trailing commas, unquoted keys).

use serde_json::{Map, Number, Value};

// ---------------------------------------------------------------------------------------------
// Finding JSON in prose

/// Byte ranges of the outermost bracketed spans (`{...}` or `[...]`) in `text`, in order.
/// Quotes only open strings inside brackets where a JSON value or key may start, so an
/// apostrophe in prose cannot swallow the rest of the reply. An opener never closed (truncated
/// output) yields a span to the end of the text.
pub(crate) fn json_spans(text: &str) -> Vec<std::ops::Range<usize>> {
    struct Open {
        byte: usize,
        ch: char,
        parent: Option<usize>,
        closed_at: Option<usize>,
    }
    let mut opens: Vec<Open> = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    let mut prev_significant: Option<char> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '{' | '[' => {
                opens.push(Open {
                    byte: i,
                    ch: c,
                    parent: stack.last().copied(),
                    closed_at: None,
                });
                stack.push(opens.len() - 1);
            }
            '}' | ']' => {
                let want = if c == '}' { '{' } else { '[' };
                // A stray closer that does not match is prose; ignore it.
                if let Some(&top) = stack.last() {
                    if opens.get(top).is_some_and(|o| o.ch == want) {
                        if let Some(o) = opens.get_mut(top) {
                            o.closed_at = Some(i + 1);
                        }
                        stack.pop();
                    }
                }
            }
            '"' | '\''
                if !stack.is_empty() && matches!(prev_significant, Some('{' | '[' | ',' | ':')) =>
            {
                // Skip the string, honouring backslash escapes. A single-quoted one also ends at
                // a line end, so a stray apostrophe cannot hide the rest of the reply.
                let mut escaped = false;
                for (_, d) in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if d == '\\' {
                        escaped = true;
                    } else if d == c || (c == '\'' && d == '\n') {
                        break;
                    }
                }
            }
            _ => {}
        }
        if !c.is_whitespace() {
            prev_significant = Some(c);
        }
    }
    // Keep spans with no closed ancestor: those are the outermost JSON texts.
    let mut covered = vec![false; opens.len()];
    let mut spans = Vec::new();
    let mut unclosed_kept = 0;
    for idx in 0..opens.len() {
        let Some(o) = opens.get(idx) else { continue };
        let parent_covers = o.parent.is_some_and(|p| {
            covered.get(p).copied().unwrap_or(false)
                || opens.get(p).is_some_and(|po| po.closed_at.is_some())
        });
        if let Some(slot) = covered.get_mut(idx) {
            *slot = parent_covers;
        }
        if parent_covers {
            continue;
        }
        match o.closed_at {
            Some(end) => spans.push(o.byte..end),
            // Only the first few unclosed openers: each costs a parse to the end of the text.
            None if o.ch == '{' && unclosed_kept < 2 => {
                unclosed_kept += 1;
                spans.push(o.byte..text.len());
            }
            None => {}
        }
    }
    // Every unclosed opener's span contains later closed spans, so order by start.
    spans.sort_by_key(|r| r.start);
    spans
}

// ---------------------------------------------------------------------------------------------
// Lenient JSON

/// Nesting deeper than this is not a verdict list; refusing it keeps recursion bounded.
const MAX_DEPTH: usize = 64;

/// Parse JSON the way models write it: single-quoted strings, `True`/`False`/`None`, trailing
/// or missing commas, `//`, `/* */` and `#` comments, unquoted keys and words, and output cut
/// off mid-way (open containers are closed, a half-written member dropped).
pub(crate) fn lenient_json(text: &str) -> Result<Value, LenientError> {
    let mut p = Lenient {
        chars: text.chars().collect(),
        pos: 0,
    };
    p.value(0)
}

struct Lenient {
    chars: Vec<char>,
    pos: usize,
}

/// Why text does not read as JSON even leniently.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum LenientError {
    /// A value ended by the end of the text (truncation) rather than by a syntax error.
    #[error("unexpected end of text")]
    Eof,
    #[error("nested too deeply")]
    TooDeep,
    #[error("unexpected `{0}`")]
    Unexpected(char),
    #[error("expected a key at character {0}")]
    NoKey(usize),
    #[error("expected `:` after key `{key}`, found `{found}`")]
    NoColon { key: String, found: char },
}

impl Lenient {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() {
                self.pos += 1;
            } else if c == '#' || (c == '/' && self.chars.get(self.pos + 1) == Some(&'/')) {
                while self.peek().is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
            } else if c == '/' && self.chars.get(self.pos + 1) == Some(&'*') {
                self.pos += 2;
                while self.peek().is_some()
                    && !(self.peek() == Some('*') && self.chars.get(self.pos + 1) == Some(&'/'))
                {
                    self.pos += 1;
                }
                self.pos = (self.pos + 2).min(self.chars.len());
            } else {
                break;
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, LenientError> {
        if depth > MAX_DEPTH {
            return Err(LenientError::TooDeep);
        }
        self.skip_ws();
        match self.peek() {
            None => Err(LenientError::Eof),
            Some('{') => self.object(depth),
            Some('[') => self.array(depth, ']'),
            Some('(') => self.array(depth, ')'),
            Some(q @ ('"' | '\'')) => Ok(Value::String(self.string(q))),
            Some(c) if c.is_ascii_digit() || matches!(c, '-' | '+' | '.') => Ok(self.number()),
            Some(c) if c.is_alphabetic() || c == '_' => Ok(self.word()),
            Some(c) => Err(LenientError::Unexpected(c)),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, LenientError> {
        self.pos += 1;
        let mut map = Map::new();
        loop {
            self.skip_ws();
            match self.peek() {
                None => return Ok(Value::Object(map)),
                Some('}') => {
                    self.pos += 1;
                    return Ok(Value::Object(map));
                }
                Some(',') => {
                    self.pos += 1;
                    continue;
                }
                _ => {}
            }
            let key = match self.peek() {
                Some(q @ ('"' | '\'')) => self.string(q),
                _ => self.bare_key(),
            };
            if key.is_empty() {
                return Err(LenientError::NoKey(self.pos));
            }
            self.skip_ws();
            match self.peek() {
                Some(':' | '=') => self.pos += 1,
                None => return Ok(Value::Object(map)),
                Some(found) => return Err(LenientError::NoColon { key, found }),
            }
            match self.value(depth + 1) {
                Ok(v) => {
                    map.insert(key, v);
                }
                Err(LenientError::Eof) => return Ok(Value::Object(map)),
                Err(e) => return Err(e),
            }
        }
    }

    fn array(&mut self, depth: usize, close: char) -> Result<Value, LenientError> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            match self.peek() {
                None => return Ok(Value::Array(items)),
                Some(c) if c == close => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                Some(',') => {
                    self.pos += 1;
                    continue;
                }
                _ => {}
            }
            match self.value(depth + 1) {
                Ok(v) => items.push(v),
                Err(LenientError::Eof) => return Ok(Value::Array(items)),
                Err(e) => return Err(e),
            }
        }
    }

    /// A quoted string; an unclosed one runs to the end of the text.
    fn string(&mut self, quote: char) -> String {
        self.pos += 1;
        let mut out = String::new();
        while let Some(c) = self.peek() {
            self.pos += 1;
            if c == quote {
                return out;
            }
            if c != '\\' {
                out.push(c);
                continue;
            }
            let Some(e) = self.peek() else { break };
            self.pos += 1;
            match e {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'u' => {
                    let hex: String = self.chars.iter().skip(self.pos).take(4).collect();
                    match u32::from_str_radix(&hex, 16) {
                        Ok(code) if hex.len() == 4 => {
                            self.pos += 4;
                            out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                        }
                        _ => out.push('u'),
                    }
                }
                other => out.push(other),
            }
        }
        out
    }

    fn number(&mut self) -> Value {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '.'))
        {
            self.pos += 1;
        }
        let text: String = self
            .chars
            .get(start..self.pos)
            .unwrap_or_default()
            .iter()
            .collect();
        if let Ok(i) = text.parse::<i64>() {
            return Value::Number(i.into());
        }
        match text.parse::<f64>().ok().and_then(Number::from_f64) {
            Some(n) => Value::Number(n),
            None => Value::String(text),
        }
    }

    /// `true`/`True`/`null`/`None`…, or an unquoted word (up to a delimiter) taken as a string.
    fn word(&mut self) -> Value {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| !matches!(c, ',' | '}' | ']' | ')' | '\n' | ':'))
        {
            self.pos += 1;
        }
        let text: String = self
            .chars
            .get(start..self.pos)
            .unwrap_or_default()
            .iter()
            .collect();
        let text = text.trim();
        match text {
            "true" | "True" => Value::Bool(true),
            "false" | "False" => Value::Bool(false),
            "null" | "None" => Value::Null,
            other => Value::String(other.to_string()),
        }
    }

    fn bare_key(&mut self) -> String {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '-'))
        {
            self.pos += 1;
        }
        self.chars
            .get(start..self.pos)
            .unwrap_or_default()
            .iter()
            .collect()
    }
}
