//! Source text: the program and a line index (byte offset → 1-based line) that every later
//! stage uses to turn parser ranges into line numbers, and the syntax error located by it.

/// Program text plus the byte offset at which each line starts.
#[derive(Debug, Clone)]
pub struct SourceFile {
    text: String,
    /// Byte offset of the first character of every line; `line_starts[0] == 0`.
    line_starts: Vec<u32>,
}

impl SourceFile {
    /// Index `text`. Line ends are `\n`, `\r\n` and a lone `\r`, as Python counts them.
    pub fn new(text: impl Into<String>) -> Self {
        let text = text.into();
        let bytes = text.as_bytes();
        let mut line_starts = vec![0u32];
        for (i, &b) in bytes.iter().enumerate() {
            // In `\r\n` the line ends at the `\n`.
            let ends_line = b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n'));
            // A line end at the very end of the text does not open another line.
            if ends_line && i + 1 < bytes.len() {
                line_starts.push(to_u32(i + 1));
            }
        }
        Self { text, line_starts }
    }

    /// The whole program text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Number of lines; an empty file has none, a final newline does not add one.
    pub fn line_count(&self) -> u32 {
        if self.text.is_empty() {
            0
        } else {
            to_u32(self.line_starts.len())
        }
    }

    /// Line `n` (1-based) without its line terminator.
    pub fn line(&self, n: u32) -> Option<&str> {
        if n == 0 || n > self.line_count() {
            return None;
        }
        let idx = usize::try_from(n - 1).ok()?;
        let start = usize::try_from(*self.line_starts.get(idx)?).ok()?;
        let end = match self.line_starts.get(idx + 1) {
            Some(&next) => usize::try_from(next).ok()?,
            None => self.text.len(),
        };
        let line = self.text.get(start..end)?;
        Some(line.trim_end_matches(['\n', '\r']))
    }

    /// 1-based line holding byte offset `byte`; offsets past the end map to the last line.
    pub fn line_of_offset(&self, byte: u32) -> u32 {
        // line_starts[0] == 0 <= byte, so the count is at least 1.
        to_u32(self.line_starts.partition_point(|&s| s <= byte)).max(1)
    }

    /// 1-based column (in characters) of byte offset `byte` within its line.
    pub fn column_of_offset(&self, byte: u32) -> u32 {
        let line = self.line_of_offset(byte);
        let start = self
            .line_starts
            .get(usize::try_from(line - 1).unwrap_or(0))
            .copied()
            .unwrap_or(0);
        let mut end = usize::try_from(byte)
            .unwrap_or(usize::MAX)
            .min(self.text.len());
        let start = usize::try_from(start).unwrap_or(0).min(end);
        // Offsets inside a multi-byte character count as that character.
        while end > start && !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let chars = self.text.get(start..end).map_or(0, |s| s.chars().count());
        to_u32(chars).saturating_add(1)
    }
}

/// A program the parser rejects, located at a 1-based line and column (characters).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct SyntaxError {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

impl SyntaxError {
    pub(crate) fn at(src: &SourceFile, offset: u32, message: impl Into<String>) -> Self {
        Self {
            line: src.line_of_offset(offset),
            column: src.column_of_offset(offset),
            message: message.into(),
        }
    }
}

/// Offsets and lengths of Python source fit in u32 (the parser uses u32 offsets too).
pub(crate) fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Remove the leading whitespace every non-blank line shares (code copied out of a function
/// body or a fenced block); lines keep their ends.
pub fn dedent(code: &str) -> String {
    let mut prefix: Option<&str> = None;
    for line in code.lines().filter(|l| !l.trim().is_empty()) {
        let ws = line
            .get(..line.len() - line.trim_start().len())
            .unwrap_or("");
        prefix = Some(match prefix {
            None => ws,
            Some(p) => {
                let common = p
                    .char_indices()
                    .zip(ws.chars())
                    .take_while(|((_, a), b)| a == b)
                    .last()
                    .map_or(0, |((i, a), _)| i + a.len_utf8());
                p.get(..common).unwrap_or("")
            }
        });
    }
    let Some(prefix) = prefix.filter(|p| !p.is_empty()) else {
        return code.to_string();
    };
    let lines: Vec<&str> = code
        .split('\n')
        .map(|l| l.strip_prefix(prefix).unwrap_or(l))
        .collect();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_offsets() {
        let src = SourceFile::new("a = 1\r\nb = 2\rc\n");
        assert_eq!(src.line_count(), 3);
        assert_eq!(src.line(1), Some("a = 1"));
        assert_eq!(src.line(2), Some("b = 2"));
        assert_eq!(src.line(3), Some("c"));
        assert_eq!(src.line(4), None);
        assert_eq!(src.line(0), None);
        assert_eq!(src.line_of_offset(0), 1);
        assert_eq!(src.line_of_offset(7), 2);
        assert_eq!(src.line_of_offset(13), 3);
        assert_eq!(src.line_of_offset(10_000), 3);
        assert_eq!(src.column_of_offset(9), 3);
    }

    #[test]
    fn empty_file() {
        let src = SourceFile::new("");
        assert_eq!(src.line_count(), 0);
        assert_eq!(src.line(1), None);
        assert_eq!(src.line_of_offset(5), 1);
        assert_eq!(src.column_of_offset(5), 1);
    }
}
