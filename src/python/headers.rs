//! Line ranges of statements as they appear in a block.
//!
//! Simple statements keep their whole range (the parser's range already covers continuation
//! lines, brackets and multi-line strings). Compound statements contribute only their header:
//! from the keyword (or first decorator) to the header's closing `:`, which we find with the
//! token index because the AST drops it and parenthesised tests exclude their brackets.

use rustpython_parser::ast::{self, Ranged};

use super::cfg::{StmtKind, StmtLines};
use super::source::SourceFile;
use super::tokens::TokenIndex;

/// Maps parser offsets to lines for one program.
pub(crate) struct LineMap<'a> {
    pub(crate) src: &'a SourceFile,
    pub(crate) tokens: &'a TokenIndex,
}

impl LineMap<'_> {
    fn line(&self, offset: ast::text_size::TextSize) -> u32 {
        self.src.line_of_offset(u32::from(offset))
    }

    /// Lines of `start..end` (end exclusive, as the parser gives it).
    fn span(
        &self,
        start: ast::text_size::TextSize,
        end: ast::text_size::TextSize,
        kind: StmtKind,
    ) -> StmtLines {
        let first = self.line(start);
        let last_byte = u32::from(end).saturating_sub(1).max(u32::from(start));
        StmtLines {
            first,
            last: self.src.line_of_offset(last_byte).max(first),
            kind,
        }
    }

    /// A header from `start` through the first bracket-free `:` at or after `after`.
    fn header(
        &self,
        start: ast::text_size::TextSize,
        after: ast::text_size::TextSize,
        kind: StmtKind,
    ) -> StmtLines {
        let first = self.line(start);
        let last = match self.tokens.colon_from(u32::from(after)) {
            Some(colon) => self.src.line_of_offset(colon),
            // Cannot happen for parsed code; fall back to the last known header part.
            None => self.line(after),
        };
        StmtLines {
            first,
            last: last.max(first),
            kind,
        }
    }

    /// Line range of `stmt` as it sits in its block. For `if` pass `elif` to get `Elif`.
    pub(crate) fn stmt(&self, stmt: &ast::Stmt, elif: bool) -> StmtLines {
        use ast::Stmt as S;
        let start = stmt.start();
        match stmt {
            S::If(s) => {
                let kind = if elif { StmtKind::Elif } else { StmtKind::If };
                self.header(start, s.test.end(), kind)
            }
            S::While(s) => self.header(start, s.test.end(), StmtKind::While),
            S::For(s) => self.header(start, s.iter.end(), StmtKind::For),
            S::AsyncFor(s) => self.header(start, s.iter.end(), StmtKind::For),
            S::With(s) => self.header(start, with_end(&s.items, start), StmtKind::With),
            S::AsyncWith(s) => self.header(start, with_end(&s.items, start), StmtKind::With),
            S::Try(_) | S::TryStar(_) => self.header(start, start, StmtKind::Try),
            S::Match(s) => self.header(start, s.subject.end(), StmtKind::Match),
            S::FunctionDef(s) => {
                let after = s.returns.as_ref().map_or(start, |r| r.end());
                self.header(
                    self.decorated_start(&s.decorator_list, start),
                    after,
                    StmtKind::Def,
                )
            }
            S::AsyncFunctionDef(s) => {
                let after = s.returns.as_ref().map_or(start, |r| r.end());
                self.header(
                    self.decorated_start(&s.decorator_list, start),
                    after,
                    StmtKind::Def,
                )
            }
            S::ClassDef(s) => self.header(
                self.decorated_start(&s.decorator_list, start),
                start,
                StmtKind::Class,
            ),
            S::Return(_) => self.span(start, stmt.end(), StmtKind::Return),
            S::Raise(_) => self.span(start, stmt.end(), StmtKind::Raise),
            S::Break(_) => self.span(start, stmt.end(), StmtKind::Break),
            S::Continue(_) => self.span(start, stmt.end(), StmtKind::Continue),
            _ => self.span(start, stmt.end(), StmtKind::Simple),
        }
    }

    /// `except [type [as name]]:` header.
    pub(crate) fn handler(&self, h: &ast::ExceptHandler) -> StmtLines {
        let ast::ExceptHandler::ExceptHandler(h) = h;
        let after = h.type_.as_ref().map_or(h.range.start(), |t| t.end());
        self.header(h.range.start(), after, StmtKind::Handler)
    }

    /// `case pattern [if guard]:` header; the AST keeps no position for `case` itself.
    pub(crate) fn case(&self, c: &ast::MatchCase) -> StmtLines {
        let pattern_start = c.pattern.start();
        let start = self
            .tokens
            .case_before(u32::from(pattern_start))
            .map_or(pattern_start, ast::text_size::TextSize::from);
        let after = c.guard.as_ref().map_or(c.pattern.end(), |g| g.end());
        self.header(start, after, StmtKind::Case)
    }

    /// Start of a def/class including decorators: the `@` before the first decorator.
    fn decorated_start(
        &self,
        decorators: &[ast::Expr],
        def_start: ast::text_size::TextSize,
    ) -> ast::text_size::TextSize {
        match decorators.first() {
            Some(d) => self
                .tokens
                .at_before(u32::from(d.start()))
                .map_or(d.start(), ast::text_size::TextSize::from),
            None => def_start,
        }
    }
}

/// End of the last `with` item (its `as` target if any).
fn with_end(
    items: &[ast::WithItem],
    fallback: ast::text_size::TextSize,
) -> ast::text_size::TextSize {
    items.last().map_or(fallback, |item| {
        item.optional_vars
            .as_ref()
            .map_or(item.context_expr.end(), |v| v.end())
    })
}
