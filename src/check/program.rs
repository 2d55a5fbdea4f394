//! The program under check: bytes from a file or stdin, accepted only if they are a Python
//! program ldb can analyse. Everything else (empty, binary, enormous, not Python) is an
//! [`InputError`] that names the file and says what to do.

use crate::python::cfg::ProgramCfg;
use crate::python::source::SourceFile;

/// Programs larger than this are refused: `ldb check` is for a program or a snippet, and the
/// CFG prompt of a larger one would not fit a model's context anyway.
pub const MAX_PROGRAM_BYTES: usize = 1 << 20;

/// Why the input is not a program `ldb check` can take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    #[error("{file} is empty")]
    Empty { file: String },
    #[error("{file} is binary, not Python source ({reason})")]
    Binary { file: String, reason: String },
    #[error("{file} is {bytes} bytes; ldb check reads programs up to {limit} bytes")]
    TooLarge {
        file: String,
        bytes: usize,
        limit: usize,
    },
    #[error("{file} does not parse as Python: line {line}, column {column}: {message}")]
    NotPython {
        file: String,
        line: u32,
        column: u32,
        message: String,
    },
}

impl InputError {
    /// What the user can do about it.
    pub fn hint(&self) -> String {
        match self {
            InputError::Empty { .. } => {
                "give a Python program: ldb check FILE.py, or pipe it in with `ldb check -`".into()
            }
            InputError::Binary { .. } => "ldb check reads Python source saved as UTF-8 text".into(),
            InputError::TooLarge { .. } => {
                "check a smaller part of it (one function or a snippet)".into()
            }
            InputError::NotPython { line, .. } => format!(
                "if this is a Python program, it stops with a SyntaxError at line {line} before \
                 anything runs: fix that line and check again (ldb reads Python 3.11 syntax)"
            ),
        }
    }
}

/// A program accepted for checking: its text, its source index and its CFG.
#[derive(Debug, Clone)]
pub struct Program {
    /// How the user named it (a path, or `-` for stdin).
    pub name: String,
    pub source: SourceFile,
    pub cfg: ProgramCfg,
    /// What was done to read it (shown in the report).
    pub notes: Vec<String>,
}

impl Program {
    /// Accept `bytes` as a program named `name`, or say why not.
    pub fn new(name: &str, bytes: &[u8]) -> Result<Program, InputError> {
        let file = name.to_string();
        if bytes.len() > MAX_PROGRAM_BYTES {
            return Err(InputError::TooLarge {
                file,
                bytes: bytes.len(),
                limit: MAX_PROGRAM_BYTES,
            });
        }
        if bytes.contains(&0) {
            return Err(InputError::Binary {
                file,
                reason: "it contains NUL bytes".into(),
            });
        }
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                return Err(InputError::Binary {
                    file,
                    reason: format!("invalid UTF-8 at byte {}", e.valid_up_to()),
                })
            }
        };
        // A byte-order mark is not part of the program.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if text.trim().is_empty() {
            return Err(InputError::Empty { file });
        }
        let source = SourceFile::new(text.to_string());
        let first_try = ProgramCfg::build(&source);
        let (source, cfg, notes) = match first_try {
            Ok(cfg) => (source, cfg, Vec::new()),
            Err(e) => {
                // CPython accepts tabs mixed with spaces when the indentation means the same at
                // a tab size of 8; the parser here does not. Expanded, the lines stay put.
                let expanded = SourceFile::new(expand_indentation_tabs(text));
                match ProgramCfg::build(&expanded) {
                    Ok(cfg) if expanded.text() != text => (
                        expanded,
                        cfg,
                        vec![
                            "tabs in indentation were expanded to 8 columns, as CPython \
                              reads them"
                                .to_string(),
                        ],
                    ),
                    _ => {
                        return Err(InputError::NotPython {
                            file,
                            line: e.line,
                            column: e.column,
                            message: e.message,
                        })
                    }
                }
            }
        };
        Ok(Program {
            name: file,
            source,
            cfg,
            notes,
        })
    }

    pub fn text(&self) -> &str {
        self.source.text()
    }
}

/// Leading tabs expanded to the next multiple of 8 columns, line by line.
fn expand_indentation_tabs(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let indent_len = line.len() - line.trim_start_matches([' ', '\t']).len();
        let (indent, rest) = line.split_at(indent_len);
        let mut col = 0usize;
        for c in indent.chars() {
            if c == '\t' {
                let next = (col / 8 + 1) * 8;
                out.extend(std::iter::repeat_n(' ', next - col));
                col = next;
            } else {
                out.push(c);
                col += 1;
            }
        }
        out.push_str(rest);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_inputs_are_named_errors() {
        assert!(matches!(
            Program::new("a.py", b"  \n\t\n"),
            Err(InputError::Empty { .. })
        ));
        assert!(matches!(
            Program::new("a.py", b"x = 1\0"),
            Err(InputError::Binary { .. })
        ));
        assert!(matches!(
            Program::new("a.py", &[0x78, 0xff, 0xfe]),
            Err(InputError::Binary { .. })
        ));
        let big = vec![b'#'; MAX_PROGRAM_BYTES + 1];
        assert!(matches!(
            Program::new("a.py", &big),
            Err(InputError::TooLarge { .. })
        ));
        let err = Program::new("notes.txt", b"This is a shopping list: eggs, milk.\n").unwrap_err();
        assert!(
            matches!(err, InputError::NotPython { line: 1, .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("notes.txt"));
        assert!(err.hint().contains("line 1"));
    }

    #[test]
    fn tabs_mixed_with_spaces_are_read_as_cpython_reads_them() {
        // From an ORCA program: three spaces, a tab, a space.
        let code = "x = 1\nif x:\n    y = 1\nelse:\n   \t y = 2\n";
        let p = Program::new("t.py", code.as_bytes()).unwrap();
        assert_eq!(p.text(), "x = 1\nif x:\n    y = 1\nelse:\n         y = 2\n");
        assert_eq!(p.notes.len(), 1);
        assert!(Program::new("t.py", b"x = 1\n").unwrap().notes.is_empty());
    }

    #[test]
    fn a_program_with_a_bom_is_accepted() {
        let p = Program::new("a.py", "\u{feff}x = 1\nprint(x)\n".as_bytes()).unwrap();
        assert_eq!(p.text(), "x = 1\nprint(x)\n");
        assert_eq!(p.cfg.scopes.len(), 1);
    }
}
