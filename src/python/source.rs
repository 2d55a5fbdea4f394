//! Parsing: the first step of the Python pipeline. [`parse_module`] runs rustpython-parser on a
//! [`SourceFile`] (see [`crate::python::text`]) and turns its errors into a [`SyntaxError`] with a line
//! and column.

use rustpython_parser::ast;

pub use super::text::{SourceFile, SyntaxError};
use super::tokens::{self, TokenIndex};

/// Parse `src` as a module.
pub fn parse_module(src: &SourceFile) -> Result<ast::Suite, SyntaxError> {
    parse_with_tokens(src).map(|(suite, _)| suite)
}

/// Parse `src` and also return the token facts the CFG builder needs for header ranges.
pub(crate) fn parse_with_tokens(src: &SourceFile) -> Result<(ast::Suite, TokenIndex), SyntaxError> {
    let text = src.text();
    // Lex once; the same tokens feed the nesting check, the header index and the parser.
    let lexed = tokens::lex_all(text);
    let index = TokenIndex::build(src, &lexed)?;
    // The parser is third-party code: a panic in it must not take the caller down.
    let parsed = std::panic::catch_unwind(move || {
        rustpython_parser::parse_tokens(lexed, rustpython_parser::Mode::Module, "<program>")
    });
    match parsed {
        Ok(Ok(ast::Mod::Module(module))) => Ok((module.body, index)),
        Ok(Ok(_)) => Err(SyntaxError::at(src, 0, "parser returned a non-module")),
        Ok(Err(err)) => Err(SyntaxError::at(
            src,
            u32::from(err.offset),
            err.error.to_string(),
        )),
        Err(_) => Err(SyntaxError::at(src, 0, "internal parser error")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_error_location() {
        let src = SourceFile::new("x = 1\nif x\n    pass\n");
        let err = parse_module(&src).unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.column >= 1);
    }
}
