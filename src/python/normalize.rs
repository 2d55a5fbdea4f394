//! A program's identity for deduplication: two candidates that differ only in comments, blank
//! lines, spacing, line breaks inside brackets or docstrings get the same key, so a search never
//! tests the same program twice.
//!
//! The key is the program's token stream with the tokens that carry no meaning dropped
//! (comments, non-logical newlines, bare string statements such as docstrings). Programs that do
//! not lex keep their trimmed text as the key: identical texts still match.

use rustpython_parser::lexer::LexResult;
use rustpython_parser::Tok;

use super::tokens::lex_all;

/// The dedup key of `code`.
pub fn program_key(code: &str) -> String {
    let lexed = lex_all(code);
    if lexed.iter().any(|t| t.is_err()) {
        return format!("raw:{}", code.trim());
    }
    let tokens: Vec<&Tok> = lexed
        .iter()
        // This lexer emits no comment or non-logical newline tokens: only meaning is left.
        .filter_map(|t: &LexResult| t.as_ref().ok().map(|(tok, _)| tok))
        .collect();
    let mut out = String::from("tok:");
    let mut i = 0;
    while i < tokens.len() {
        let tok = tokens[i];
        let starts_line = i == 0
            || matches!(
                tokens[i - 1],
                Tok::Newline | Tok::Indent | Tok::Dedent | Tok::StartModule
            );
        // A statement that is one bare string (docstring): skip it and its newline.
        if starts_line
            && matches!(tok, Tok::String { .. })
            && matches!(tokens.get(i + 1), Some(Tok::Newline) | None)
        {
            i += 2;
            continue;
        }
        out.push_str(&format!("{tok:?}"));
        out.push('\u{1f}');
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting_comments_and_docstrings_do_not_change_the_key() {
        let a = "def f(xs):\n    \"\"\"Sum.\"\"\"\n    return sum(xs)  # total\n";
        let b = "# a comment\n\ndef f( xs ):\n\n    return sum(\n        xs)\n";
        assert_eq!(program_key(a), program_key(b));
    }

    #[test]
    fn a_changed_operator_or_name_changes_the_key() {
        let a = "def f(x):\n    return x + 1\n";
        assert_ne!(program_key(a), program_key("def f(x):\n    return x - 1\n"));
        assert_ne!(program_key(a), program_key("def f(y):\n    return y + 1\n"));
        assert_ne!(
            program_key("def f():\n    return 'a'\n"),
            program_key("def f():\n    return 'b'\n")
        );
    }

    #[test]
    fn a_string_that_is_used_is_not_a_docstring() {
        assert_ne!(
            program_key("x = 'a'\n"),
            program_key("x = 'b'\n"),
            "an assigned string is part of the program"
        );
        assert_ne!(
            program_key("def f():\n    return g('a')\n"),
            program_key("def f():\n    return g('b')\n")
        );
    }

    #[test]
    fn programs_that_do_not_lex_fall_back_to_their_text() {
        let bad = "def f(:\n    return 'unterminated\n";
        assert_eq!(program_key(bad), program_key(&format!("\n{bad}\n")));
        assert_ne!(program_key(bad), program_key("def f(): pass\n"));
    }
}
