//! Token facts the AST does not keep, gathered in one lexer pass before parsing.
//!
//! The AST has no position for a compound statement's closing `:`, for a decorator's `@` or
//! for a `case` keyword, and parenthesised expressions exclude their brackets. Header line
//! ranges need all three, so we record them here. The same pass enforces CPython's nesting
//! limits (and a bound on expression depth), which keeps absurdly deep input from exhausting
//! the stack in the parser or when its AST is dropped.

use rustpython_parser::lexer::{self, LexResult};
use rustpython_parser::{Mode, Tok};

use super::text::{SourceFile, SyntaxError};

/// CPython's tokenizer limits (`MAXINDENT`, `MAXLEVEL`).
const MAX_INDENT: usize = 100;
const MAX_BRACKETS: usize = 200;
/// CPython 3.11 fails to compile expressions nested ~3000 deep ("maximum recursion depth
/// exceeded during compilation"). The estimate below never undercounts, so nothing deeper
/// reaches the parser; it does overcount flat chains (`a or b or ...`, `a < b < ...`), so
/// thousands of those in one operand are rejected although CPython would accept them.
const MAX_EXPR_DEPTH: u32 = 3000;
/// An `elif` chain nests one `If` node per branch; CPython 3.11 gives up near 3000 as well.
const MAX_ELIF_CHAIN: u32 = 3000;

/// Lex `text` up to and including the first lexical error (the parser reports it).
pub(crate) fn lex_all(text: &str) -> Vec<LexResult> {
    let mut out = Vec::new();
    for tok in lexer::lex(text, Mode::Module) {
        let stop = tok.is_err();
        out.push(tok);
        if stop {
            break;
        }
    }
    out
}

/// Sorted byte offsets of the tokens that delimit statement headers.
#[derive(Debug, Default, Clone)]
pub(crate) struct TokenIndex {
    /// `:` outside any bracket: the end of compound-statement headers (and annotations, lambdas).
    colons: Vec<u32>,
    /// `@` tokens (decorators, also the matmul operator).
    ats: Vec<u32>,
    /// `case` soft keywords.
    cases: Vec<u32>,
}

impl TokenIndex {
    /// Index the tokens; fails when nesting exceeds CPython's limits.
    pub(crate) fn build(src: &SourceFile, lexed: &[LexResult]) -> Result<Self, SyntaxError> {
        let mut index = Self::default();
        let mut depth = DepthEstimate::default();
        let mut elifs = ElifRuns::default();
        let mut indent = 0usize;
        for (tok, range) in lexed.iter().flatten() {
            let start = u32::from(range.start());
            let fail = |message: &str| Err(SyntaxError::at(src, start, message));
            match tok {
                Tok::Indent => indent += 1,
                Tok::Dedent => indent = indent.saturating_sub(1),
                Tok::Colon if depth.brackets() == 0 => index.colons.push(start),
                Tok::At => index.ats.push(start),
                Tok::Case => index.cases.push(start),
                _ => {}
            }
            if indent > MAX_INDENT {
                return fail("too many levels of indentation");
            }
            if elifs.token(tok, indent) > MAX_ELIF_CHAIN {
                return fail("elif chain too long");
            }
            depth.token(tok);
            if depth.brackets() > MAX_BRACKETS {
                return fail("too many nested parentheses");
            }
            if depth.total > MAX_EXPR_DEPTH {
                return fail("expression too deeply nested");
            }
        }
        Ok(index)
    }

    /// First bracket-free `:` at or after `offset`.
    pub(crate) fn colon_from(&self, offset: u32) -> Option<u32> {
        let i = self.colons.partition_point(|&c| c < offset);
        self.colons.get(i).copied()
    }

    /// Last `@` strictly before `offset`.
    pub(crate) fn at_before(&self, offset: u32) -> Option<u32> {
        last_before(&self.ats, offset)
    }

    /// Last `case` keyword strictly before `offset`.
    pub(crate) fn case_before(&self, offset: u32) -> Option<u32> {
        last_before(&self.cases, offset)
    }
}

fn last_before(sorted: &[u32], offset: u32) -> Option<u32> {
    let i = sorted.partition_point(|&c| c < offset);
    i.checked_sub(1).and_then(|j| sorted.get(j)).copied()
}

/// Upper bound on AST depth from tokens alone: every operator, keyword operator and bracket
/// may nest one level; siblings separated by `,`, `=` or `;` do not nest.
#[derive(Debug)]
struct DepthEstimate {
    /// Operators counted since the last separator, one counter per open bracket (plus base).
    levels: Vec<u32>,
    total: u32,
}

impl Default for DepthEstimate {
    fn default() -> Self {
        Self {
            levels: vec![0],
            total: 0,
        }
    }
}

impl DepthEstimate {
    fn brackets(&self) -> usize {
        self.levels.len().saturating_sub(1)
    }

    fn add(&mut self, n: u32) {
        if let Some(top) = self.levels.last_mut() {
            *top = top.saturating_add(n);
        }
        self.total = self.total.saturating_add(n);
    }

    /// Open a bracket: a call, subscript or display nests in the current operand.
    fn open(&mut self) {
        self.add(1);
        self.levels.push(0);
    }

    fn close(&mut self) {
        if self.levels.len() > 1 {
            let n = self.levels.pop().unwrap_or(0);
            self.total = self.total.saturating_sub(n);
        }
    }

    fn separate(&mut self) {
        if let Some(top) = self.levels.last_mut() {
            self.total = self.total.saturating_sub(*top);
            *top = 0;
        }
    }

    fn token(&mut self, tok: &Tok) {
        use rustpython_parser::StringKind;
        match tok {
            Tok::Newline => *self = Self::default(),
            Tok::Lpar | Tok::Lsqb | Tok::Lbrace => self.open(),
            Tok::Rpar | Tok::Rsqb | Tok::Rbrace => self.close(),
            Tok::Comma | Tok::Semi | Tok::Equal => self.separate(),
            Tok::Plus
            | Tok::Minus
            | Tok::Star
            | Tok::Slash
            | Tok::DoubleSlash
            | Tok::Percent
            | Tok::DoubleStar
            | Tok::At
            | Tok::Vbar
            | Tok::Amper
            | Tok::CircumFlex
            | Tok::Tilde
            | Tok::LeftShift
            | Tok::RightShift
            | Tok::Less
            | Tok::Greater
            | Tok::LessEqual
            | Tok::GreaterEqual
            | Tok::EqEqual
            | Tok::NotEqual
            | Tok::Dot
            | Tok::ColonEqual
            | Tok::Rarrow
            | Tok::And
            | Tok::Or
            | Tok::Not
            | Tok::Is
            | Tok::In
            | Tok::If
            | Tok::Lambda
            | Tok::Await
            | Tok::Yield => self.add(1),
            // f-string replacement fields are parsed later, from the token's text.
            Tok::String {
                value,
                kind: StringKind::FString | StringKind::RawFString,
                ..
            } => {
                let ops = value
                    .chars()
                    .filter(|c| "+-*/%@|&^~<>.([{".contains(*c))
                    .count();
                self.add(u32::try_from(ops).unwrap_or(u32::MAX));
            }
            _ => {}
        }
    }
}

/// Length of the `elif` run at each indentation level (each `elif` nests one more `If`).
#[derive(Debug)]
struct ElifRuns {
    runs: Vec<u32>,
    line_start: bool,
}

impl Default for ElifRuns {
    fn default() -> Self {
        Self {
            runs: vec![0],
            line_start: true,
        }
    }
}

impl ElifRuns {
    /// Feed one token (at indentation `indent`); returns the current run length.
    fn token(&mut self, tok: &Tok, indent: usize) -> u32 {
        let mut run_len = 0;
        if self.line_start && !matches!(tok, Tok::Newline | Tok::Indent | Tok::Dedent) {
            // A logical line at this level ends deeper runs; only `elif`/`else` continue one.
            self.runs.resize(indent + 1, 0);
            if let Some(run) = self.runs.get_mut(indent) {
                match tok {
                    Tok::Elif => *run += 1,
                    Tok::Else => {}
                    _ => *run = 0,
                }
                run_len = *run;
            }
        }
        self.line_start = matches!(tok, Tok::Newline | Tok::Indent | Tok::Dedent);
        run_len
    }
}
